/* hooks.c - hands the launcher's services to the modules below it: the
 * calib commands resolve profiles through it, and the probe records its
 * results in the calibration store through it. */
#include "launcher/record.h"
#include "probe/probe.h"

#include <stdlib.h>

/* calib_profile_loader: {"profile", "candidates": [{name, parts}]} */
static int profile_view(const struct xl_ctx *ctx, const char *name, const char *cand, json_t **out)
{
	struct xl_profile *p;
	json_t *cands = json_array();
	int rc;

	*out = NULL;
	rc = xl_profile_resolve(ctx, name, cand, 0, &p);
	if (rc) {
		json_decref(cands);
		return rc;
	}
	rc = xl_profile_check(ctx, p);
	if (rc) {
		xl_profile_free(p);
		json_decref(cands);
		return rc;
	}
	if (cand || !p->ncands) {
		json_array_append_new(cands, json_pack("{s:o,s:o}", "name", cand ? json_string(cand) : json_null(),
						       "parts", xl_signature_parts(p)));
	} else {
		for (size_t i = 0; i < p->ncands; i++) {
			struct xl_profile *pc;

			rc = xl_profile_resolve(ctx, name, p->cands[i].name, 0, &pc);
			if (rc) {
				xl_profile_free(p);
				json_decref(cands);
				return rc;
			}
			json_array_append_new(cands, json_pack("{s:s,s:o}", "name", p->cands[i].name,
							       "parts", xl_signature_parts(pc)));
			xl_profile_free(pc);
		}
	}
	*out = json_pack("{s:s,s:o}", "profile", p->name, "candidates", cands);
	xl_profile_free(p);
	return 0;
}

void launcher_init_hooks(void)
{
	calib_set_profile_loader(profile_view);
}
