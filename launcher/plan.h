/* plan.h - the candidates a launch would try, in order (internal to the
 * launcher): one planner for `run`, `run --dry-run`, and `calib order`,
 * `predict` and `record`, so that they cannot disagree. */
#ifndef XLAUNCH_LAUNCHER_PLAN_H
#define XLAUNCH_LAUNCHER_PLAN_H

#include "launcher/launcher.h"
#include "calib/calib.h"

/* One candidate of a plan. */
struct xl_plan_item {
	struct xl_profile *profile;  /* resolved with the candidate and checked; owned */
	const char *candidate;       /* its name (in profile), or NULL for a
				      * profile without candidates */
	json_t *parts;               /* signature parts, hardware from the latest
				      * probe when the profile names none; owned */
	struct calib_rank rank;      /* place, reason, signature, prediction */
};

struct xl_plan {
	char *profile;               /* the profile's name */
	struct xl_plan_item *items;  /* in the order to try */
	size_t n;
	int store_rc;                /* non-zero: the store could not order them
				      * (calib_errmsg); items are in profile order */
};

enum {
	XL_PLAN_PROFILE_ORDER = 1 << 0,  /* keep profile order; ask the store nothing
					  * about places (predict, record) */
};

/* Plans the launch of profile `name`: every candidate (only `pinned` when it
 * is not NULL; the profile itself when it has none) is resolved and passes
 * xl_profile_check, and the store (st, which may be NULL) orders them.
 *
 * A candidate that does not resolve or fails a check fails the whole plan:
 * its error is printed and its exit status returned (65, 66, 77, 78), and
 * nothing is tried.  A profile is one unit: launching the candidates that
 * happen to work would quietly change the retry frontier its author wrote,
 * and `profile check` refuses such a profile for the same reason.
 *
 * A pinned candidate gets place "pinned", a profile without candidates
 * "only"; neither asks the store for a place.  Returns 0 or an exit status;
 * release the plan with xl_plan_release() either way. */
int xl_plan_make(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		 const char *pinned, unsigned flags, struct xl_plan *out);
void xl_plan_release(struct xl_plan *plan);
/* {name, signature, place, reason, predicted_bytes, device_memory_bytes}.
 * New reference. */
json_t *xl_plan_item_json(const struct xl_plan_item *it);

#endif
