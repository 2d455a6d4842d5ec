/*
 * run.h - the run room: a supervised launch of a profile's command, from
 * the plan of its candidates to the record of each attempt.  Code outside
 * launcher/run/ includes only this header.
 *
 * It owns:
 *   - the plan: the candidates a launch tries, in the order the store
 *     gives (plan.c); `run`, `run --dry-run` and `calib order/predict/
 *     record` plan with it, so they cannot disagree;
 *   - the launch and its attempts (launch.c, attempt.c): the run directory
 *     and its manifest (rundir.c), the child's environment, supervision
 *     (supervise.c: process group, signals, output, limits, a guardian),
 *     what the job used seen from outside (observe.c: the process group,
 *     NVML, the figures), the compile watch fed as the job runs (its own
 *     room, launcher/watch/), the outcome (outcome.c), the record kept
 *     until the store has it (record.c), the other ranks of a job
 *     (peers.c) and which rank this is (jobrank.c), and attempts whose
 *     supervisor was lost (sweep.c);
 *   - what the job is: its interpreter, files and limits (job.c).
 * The back rooms' headers (attempt.h, job.h, jobrank.h, observe.h,
 * outcome.h, peers.h, record.h, rundir.h, supervise.h, sweep.h) each
 * declare their own file's functions and are private to launcher/run/.
 *
 * It builds on the watch, profile and flags rooms, calib/ and bundle/.
 */
#ifndef XLAUNCH_LAUNCHER_RUN_H
#define XLAUNCH_LAUNCHER_RUN_H

#include "launcher/profile/profile.h"
#include "calib/calib.h"
#include "bundle/bundle.h"

/* ---- the plan (plan.c) ------------------------------------------------------------ */

/* One candidate of a plan. */
struct xl_plan_item {
	struct xl_profile *profile;  /* resolved with the candidate and checked; owned */
	const char *candidate;       /* its name (in profile), or NULL for a
				      * profile without candidates */
	json_t *parts;               /* signature parts, hardware from the latest
				      * probe when the profile names none; owned */
	struct calib_limit limits[CALIB_MAX_LIMITS];   /* what it runs under */
	size_t nlimits;
	struct calib_rank rank;      /* place, reason, signature, estimate */
	struct xl_runtime *runtime;  /* the release the job will load (bundle's
				      * xl_runtime_detect of argv in the
				      * environment this item's profile gives
				      * it): the profile is checked against it
				      * (owned; on the heap, so a plan may move) */
};

struct xl_plan {
	char *profile;               /* the profile's name */
	char *pinned;                /* the candidate pinned with -c, or NULL */
	struct xl_profile *base;     /* the profile as launched (with the pinned
				      * candidate), resolved once: the items are
				      * its candidates, or itself (then it is
				      * items[0].profile) */
	bool base_owned;             /* base is not an item's */
	bool base_checked;           /* checked and gated for a launch
				      * (XL_PLAN_LAUNCH); base_item.runtime is
				      * the release it was checked against */
	struct xl_plan_item base_item;   /* its runtime only */
	struct xl_plan_item *items;  /* in the order to try */
	size_t n;
	int store_rc;                /* non-zero: the store could not order them
				      * (calib_errmsg); items are in profile order */
	char *job_from;              /* without a command: the run whose job
				      * (argv, code, bundle) the plan took, or NULL */
	bool no_job;                 /* without a command and without such a run */
};

enum {
	XL_PLAN_PROFILE_ORDER = 1 << 0,  /* keep profile order (predict, record) */
	XL_PLAN_LAUNCH = 1 << 1,         /* xl_plan_begin: the profile as launched is
					  * checked against the release argv will
					  * load and passes the bundle gate */
	XL_PLAN_ANY_RUNTIME = 1 << 2,    /* with XL_PLAN_LAUNCH: no xl_profile_runtime_check */
};

/* Plans the launch of profile `name` running argv[0..argc) (argc 0: the
 * command of the profile's latest recorded run, when there is one): every
 * candidate (only `pinned` when it is not NULL; the profile itself when it
 * has none) is resolved and passes xl_profile_check, gets its signature
 * parts (hardware from the latest probe: the host's processor when the job
 * runs there, see xl_job_on_host, else the best accelerator), its limits
 * (xl_job_limits) and an estimate, and the store (st, which may be NULL)
 * orders them.
 *
 * A candidate that does not resolve or fails a check fails the whole plan:
 * its error is printed and its exit status returned (65, 66, 77, 78), and
 * nothing is tried.  A profile is one unit: launching the candidates that
 * happen to work would quietly change the retry frontier its author wrote,
 * and `profile check` refuses such a profile for the same reason.
 *
 * A pinned candidate gets place "pinned", a profile without candidates
 * "only" (one implicit candidate: estimated like any other); neither is
 * placed by the store.  Returns 0 or an exit status; release the plan with
 * xl_plan_release() either way. */
int xl_plan_make(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		 const char *pinned, unsigned flags, char **argv, int argc, struct xl_plan *out);
/* xl_plan_make in two steps, for a launch that checks its profile before
 * it opens the store: xl_plan_begin resolves the profile (with `pinned`)
 * once, and with XL_PLAN_LAUNCH checks it (xl_profile_check against the
 * release argv will load, xl_profile_bundle_gate), printing what fails;
 * xl_plan_finish makes the rest of the plan from it (flags as for
 * xl_plan_make).  Each returns 0 or an exit status; release the plan
 * either way.  The profile itself is never resolved again: a plan resolves
 * it once and each candidate once. */
int xl_plan_begin(const struct xl_ctx *ctx, const char *name, const char *pinned,
		  unsigned flags, char **argv, int argc, struct xl_plan *out);
int xl_plan_finish(const struct xl_ctx *ctx, struct calib_store *st, unsigned flags,
		   char **argv, int argc, struct xl_plan *out);
/* Orders items[from..n) again with what the store knows now (after an
 * attempt).  Returns 0 or the store's error (the order is then kept). */
int xl_plan_rerank(struct xl_plan *plan, struct calib_store *st, size_t from);
void xl_plan_release(struct xl_plan *plan);
/* calib_rank_json of the item, with its limit's source.  New reference. */
json_t *xl_plan_item_json(const struct xl_plan_item *it);

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
