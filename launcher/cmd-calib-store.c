/* cmd-calib-store.c - the store as the calib commands open it: the store's
 * own messages for a missing one, and, before a command writes, the
 * attempts whose supervisor was lost (the run room's sweep).  The other
 * calib commands need only the plan room; this file is their one door to
 * the run room.
 */
#include "calib/calib.h"
#include "launcher/run/run.h"

#include <stdlib.h>

int xl_calib_open_store(const struct xl_ctx *ctx, unsigned flags, struct calib_store **st);

/* Opens the store; flags CALIB_OPEN_READONLY for commands that only read
 * (a missing store is then not created: it reads as empty). */
int xl_calib_open_store(const struct xl_ctx *ctx, unsigned flags, struct calib_store **st)
{
	char *err = NULL;
	int rc = calib_open(ctx->store_path, flags, st, &err);

	if (rc) {
		xl_error("%s", err ? err : "store: cannot open");
		free(err);
		return rc;
	}
	/* a mistyped --store reads as empty too: say that nothing is there */
	if (calib_store_stand_in(*st))
		xl_warn("no store at %s: nothing is recorded there yet", calib_store_path(*st));
	/* attempts whose supervisor was killed go in before anything else is
	 * written; commands that only read sweep nothing */
	if (!(flags & CALIB_OPEN_READONLY)) {
		bool failed = false;
		int lost;

		xl_sweep_pending_tmp();
		lost = xl_sweep_lost(*st, &failed);
		if (lost)
			xl_info("recovered %d lost attempt%s whose supervisor died, recorded as interrupted",
				lost, lost == 1 ? "" : "s");
	}
	return rc;
}
