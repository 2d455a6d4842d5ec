/*
 * run.h - the run room: a supervised launch of a profile's command, from
 * the plan of its candidates to the record of each attempt.  Code outside
 * launcher/run/ includes only this header.
 *
 * It owns:
 *   - the launch and its attempts (launch.c, attempt.c), made in the
 *     order of the plan room's plan (launcher/plan/): the run directory
 *     and its manifest (rundir.c), the child's environment, supervision
 *     (supervise.c: process group, signals, output, limits, a guardian),
 *     a memory cgroup of the launch's own (memcg.c), what the job used
 *     seen from outside (sampler.c: the process group, sampled; nvml.c:
 *     GPU memory through NVML; dumpsetup.c: XLA's dump asked for;
 *     xlafigure.c: the compiler's figure; figures.c: the attempt's figures),
 *     the compile watch fed as the job runs (its own room,
 *     launcher/watch/), the outcome (outcome.c), the record kept until the
 *     store has it (record.c), the other ranks of a job (peers.c) and
 *     which rank this is (jobrank.c), and attempts whose supervisor was
 *     lost (sweep.c).
 * The back rooms' headers (attempt.h, dumpsetup.h, figures.h, jobrank.h,
 * memcg.h, nvml.h, outcome.h, peers.h, record.h, rundir.h, sampler.h,
 * supervise.h, sweep.h, xlafigure.h) each declare their own file's
 * functions and are private to launcher/run/.
 *
 * It builds on the plan, watch, profile and flags rooms, calib/ and bundle/.
 */
#ifndef XLAUNCH_LAUNCHER_RUN_H
#define XLAUNCH_LAUNCHER_RUN_H

#include "launcher/plan/plan.h"
#include "launcher/profile/profile.h"
#include "calib/calib.h"
#include "bundle/bundle.h"

/* ---- a launch (launch.c) --------------------------------------------------------- */

/* What `xlaunch run` was asked for. */
struct xl_run_opts {
	const char *cand;
	unsigned retry;
	unsigned fail_on;
	long long max_attempts;
	double timeout_s, grace_s;
	bool no_record, dry_run, all_ranks;
	bool try_infeasible, no_xla_dump;
	bool no_runtime_check;    /* launch even when the command's Python lacks the runtime */
	struct xl_override_list set, flag;   /* --set, --flag: the command line's layer */
	int on_storm;          /* enum xl_on_storm: --on-storm over the profile's */
	int early_oom;         /* enum xl_early_oom: --early-oom over the profile's */
};

/* Launches argv[0..argc) under profile `name` (argc 0 only with dry_run):
 * plans the candidates, then makes attempts as the options say.  Prints
 * its own messages.  Returns the last attempt's child's status (its code,
 * 128+N for signal N), 79 for --fail-on, or xlaunch's own exit code. */
int xl_run(const struct xl_ctx *ctx, const char *name, char **argv, int argc,
	   const struct xl_run_opts *o);

/* ---- records and lost attempts (record.c, sweep.c) ----------------------------------- */

/* Puts kept records into the store; returns how many went in. */
int xl_record_replay(struct calib_store *st);

/* Makes the state directory whole again: completes or removes temporary
 * files of pending records left by a killed writer, removes run
 * directories that were never finished being created, then records every
 * run directory with a start manifest and no record whose owner is
 * provably dead (same host and boot and its pid gone, or the same host
 * booted since) into st: interrupted, with the guardian's end record where
 * there is one, else "supervisor lost".  Each directory is claimed with a
 * lock before it is read, and the store takes a run id once, so sweepers at
 * once record each attempt once.  Stops at the first store failure (the
 * rest wait for the next sweep).  Returns how many attempts it recorded;
 * *store_failed set when it stopped for the store (may be NULL). */
int xl_sweep_lost(struct calib_store *st, bool *store_failed);
/* Only the temporary files of pending records (before a replay). */
int xl_sweep_pending_tmp(void);

/* ---- run directories (rundir.c) ------------------------------------------------------- */

/* The run directories whose id starts with prefix, in the state directory
 * and its fallback: how many (0, 1, or 2 for two or more); when exactly
 * one, *dir (its path) and *id (its full id) are set (caller frees both),
 * else both are NULL.  Reads only. */
size_t xl_run_dir_find(const char *prefix, char **dir, char **id);

/* ---- for `profile show --explain` (explain.c) ------------------------------------------ */

/* When the store has a compile storm of this profile seen without compile
 * logging, says which profile to add to see what recompiles.  Opens the
 * store without creating it; writes nothing. */
void xl_run_explain_storms(const struct xl_ctx *ctx, const struct xl_profile *p);

#endif
