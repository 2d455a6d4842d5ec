/*
 * plan.h - the plan room: the candidates a launch of a profile tries, in
 * the order the store gives, with what each runs under.  Code outside
 * launcher/plan/ includes only this header.
 *
 * It owns:
 *   - the plan (plan.c): every candidate resolved and checked, its
 *     signature parts, limits and estimate, and the store's order; `run`,
 *     `run --dry-run` and `calib order/predict/record` plan with it, so
 *     they cannot disagree;
 *   - what the job is (job.c): its interpreter, files and signature parts
 *     (job.h, private to launcher/plan/), and the limits it runs under;
 *   - the memory cgroup xlaunch runs in, read (cgroup.c): its directory,
 *     the smallest memory.max above it, whether a cgroup of a launch's own
 *     can be made there.
 *
 * It builds on the profile and flags rooms, calib/ and bundle/.
 */
#ifndef XLAUNCH_LAUNCHER_PLAN_H
#define XLAUNCH_LAUNCHER_PLAN_H

#include "launcher/profile/profile.h"
#include "calib/calib.h"
#include "bundle/bundle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- the cgroup xlaunch runs in (cgroup.c) ------------------------------------------ */

/* This process's memory cgroup: its directory (caller frees) and version
 * (1 or 2); NULL (why, of size n, says why) when it has none that can be
 * found. */
char *xl_cgroup_dir(int *version, char *why, size_t n);
/* The smallest memory.max of this process's cgroup (v2) and its ancestors,
 * -1 when none is set; *where the file (caller frees). */
int64_t xl_cgroup_memory_max(char **where);
/* Whether a cgroup of a launch's own can be made here; *why (size n) says
 * where or why not.  XLAUNCH_MEMCG=0 turns it off; XLAUNCH_MEMCG=own makes
 * none and reads the one xlaunch is alone in. */
bool xl_memcg_possible(char *why, size_t n);

#endif
