/* plan.c - resolve every candidate of a profile, compute its signature
 * parts and ask the store for the order (see plan.h). */
#include "launcher/plan.h"
#include "launcher/record.h"

#include <stdlib.h>
#include <string.h>

/* Resolves and checks one candidate (NULL: the profile alone) into it. */
static int plan_item(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		     const char *cand, struct xl_plan_item *it)
{
	int rc;

	memset(it, 0, sizeof(*it));
	rc = xl_profile_resolve(ctx, name, cand, 0, &it->profile);
	if (!rc)
		rc = xl_profile_check(ctx, it->profile);
	if (rc)
		return rc;
	if (it->profile->cand >= 0)
		it->candidate = it->profile->cands[it->profile->cand].name;
	it->parts = xl_signature_parts(it->profile);
	if (st)
		calib_parts_fill_hardware(st, it->parts);
	return 0;
}

/* Signature and prediction for an item the store does not place. */
static void rank_alone(struct calib_store *st, struct xl_plan_item *it, enum calib_place place,
		       const char *reason)
{
	struct calib_sig sig;
	struct calib_prediction pred;

	calib_signature(it->parts, &sig);
	calib_predict(st, sig.parts, 0, &pred);
	snprintf(it->rank.signature, sizeof(it->rank.signature), "%s", sig.hash);
	it->rank.place = place;
	snprintf(it->rank.reason, sizeof(it->rank.reason), "%s", reason);
	it->rank.predicted = pred.known;
	it->rank.predicted_bytes = pred.known ? pred.predicted_bytes : 0;
	it->rank.device_memory_bytes = pred.device_memory_bytes;
	calib_sig_release(&sig);
}

int xl_plan_make(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		 const char *pinned, unsigned flags, struct xl_plan *out)
{
	struct xl_profile *base = NULL;
	const json_t **parts;
	struct calib_rank *ranks;
	struct xl_plan_item *sorted;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	out->profile = xl_strdup(name);
	if (pinned) {
		out->items = xl_calloc(1, sizeof(*out->items));
		out->n = 1;
		if ((rc = plan_item(ctx, st, name, pinned, &out->items[0])))
			return rc;
		rank_alone(st, &out->items[0], CALIB_PLACE_PINNED, "pinned with -c");
		return 0;
	}
	/* the candidates are the base profile's */
	if ((rc = xl_profile_resolve(ctx, name, NULL, 0, &base)))
		return rc;
	if (!base->ncands) {
		out->items = xl_calloc(1, sizeof(*out->items));
		out->items[0].profile = base;
		out->n = 1;
		if ((rc = xl_profile_check(ctx, base)))
			return rc;
		out->items[0].parts = xl_signature_parts(base);
		if (st)
			calib_parts_fill_hardware(st, out->items[0].parts);
		rank_alone(st, &out->items[0], CALIB_PLACE_ONLY, "the profile has no candidates");
		return 0;
	}
	n = base->ncands;
	out->items = xl_calloc(n, sizeof(*out->items));
	for (size_t i = 0; i < n; i++) {
		rc = plan_item(ctx, st, name, base->cands[i].name, &out->items[i]);
		if (rc) {
			out->n = i + 1;
			xl_profile_free(base);
			return rc;
		}
		out->n = i + 1;
	}
	xl_profile_free(base);
	if (flags & XL_PLAN_PROFILE_ORDER) {
		for (size_t i = 0; i < n; i++) {
			rank_alone(st, &out->items[i], CALIB_PLACE_UNSEEN, "profile order");
			out->items[i].rank.index = i;
		}
		return 0;
	}
	parts = xl_calloc(n, sizeof(*parts));
	ranks = xl_calloc(n, sizeof(*ranks));
	for (size_t i = 0; i < n; i++)
		parts[i] = out->items[i].parts;
	out->store_rc = calib_order(st, parts, n, ranks);
	/* the items in the order to try */
	sorted = xl_calloc(n, sizeof(*sorted));
	for (size_t i = 0; i < n; i++) {
		sorted[i] = out->items[ranks[i].index];
		sorted[i].rank = ranks[i];
	}
	free(out->items);
	out->items = sorted;
	free(parts);
	free(ranks);
	return 0;
}

void xl_plan_release(struct xl_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		xl_profile_free(plan->items[i].profile);
		json_decref(plan->items[i].parts);
	}
	free(plan->items);
	free(plan->profile);
	memset(plan, 0, sizeof(*plan));
}

json_t *xl_plan_item_json(const struct xl_plan_item *it)
{
	return calib_rank_json(&it->rank, it->candidate);
}
