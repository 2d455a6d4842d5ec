/* attempt.h - one attempt of a launch (attempt.c), for the launch that
 * makes them (launch.c).  Private to launcher/run/. */
#ifndef XLAUNCH_LAUNCHER_RUN_ATTEMPT_H
#define XLAUNCH_LAUNCHER_RUN_ATTEMPT_H

#include "launcher/run/run.h"
#include "launcher/run/outcome.h"
#include "launcher/run/supervise.h"

/* What every attempt of one launch shares.  Borrowed: the launch owns it. */
struct xl_launch {
	const struct xl_ctx *ctx;
	const struct xl_run_opts *o;
	struct calib_store *st;       /* NULL: no store (records are kept) */
	const struct xl_patterns *pats;
	int rank;
	const char *rank_from;
	int world;            /* ranks in the job (1: not a job of several) */
	char *job_id;         /* the job launch (xl_job_launch_id), or NULL */
	bool record;
	char **argv;
	int argc;
};

/* One attempt of a planned candidate: the run directory and its start
 * manifest, the child's environment, the supervised child, what it used,
 * its outcome, the manifest's end and the record.  Returns the child's exit
 * status (or xlaunch's own: 70, 73, 77 ...) and sets *outcome. */
int xl_attempt(const struct xl_launch *l, const struct xl_plan_item *it, int n, int total,
	       enum xl_outcome *outcome);

#endif
