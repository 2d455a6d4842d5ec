/* order.c - the order in which to try a profile's candidates. */
#include "calib/backend.h"

#include <stdlib.h>
#include <string.h>

static const char *const place_names[] = {
	[CALIB_PLACE_KNOWN_GOOD] = "known-good",
	[CALIB_PLACE_UNSEEN] = "unseen",
	[CALIB_PLACE_SUSPECT] = "suspect",
	[CALIB_PLACE_INFEASIBLE] = "infeasible",
	[CALIB_PLACE_KNOWN_BAD] = "known-bad",
	[CALIB_PLACE_PINNED] = "pinned",
	[CALIB_PLACE_ONLY] = "only",
};

const char *calib_place_name(enum calib_place p)
{
	return (unsigned)p <= CALIB_PLACE_ONLY ? place_names[p] : "?";
}

static int cmp_rank(const void *x, const void *y)
{
	const struct calib_rank *a = x, *b = y;

	if (a->place != b->place)
		return a->place < b->place ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* What the store knows of one candidate: its place and the reason. */
static int rank_one(struct calib_store *st, const json_t *parts, struct calib_rank *r)
{
	struct calib_sig sig;
	struct calib_prediction pred;
	struct calib_attempt last, prev;
	bool found = false;
	char mem[32], dev[32], when[32];
	int rc = 0;

	if (parts) {
		calib_signature(parts, &sig);
	} else {
		/* no parts: an empty signature, nothing known about it */
		json_t *empty = json_object();

		calib_signature(empty, &sig);
		json_decref(empty);
	}
	snprintf(r->signature, sizeof(r->signature), "%s", sig.hash);
	if (calib_predict(st, sig.parts, 0, &pred) != 0)
		rc = XL_EX_CANTCREAT;
	r->predicted = pred.known;
	r->predicted_bytes = pred.known ? pred.predicted_bytes : 0;
	r->device_memory_bytes = pred.device_memory_bytes;
	xl_fmt_bytes(pred.predicted_bytes, mem, sizeof(mem));
	xl_fmt_bytes(pred.device_memory_bytes, dev, sizeof(dev));
	calib_attempt_init(&last);
	calib_attempt_init(&prev);
	if (st && rc == 0)
		rc = st->be->latest_attempt(st, sig.hash, &last, &found);
	r->place = CALIB_PLACE_UNSEEN;
	if (found && last.outcome == XL_OUT_OK) {
		r->place = CALIB_PLACE_KNOWN_GOOD;
		snprintf(r->reason, sizeof(r->reason), "ok with this signature (run %s, %s)", last.id,
			 xl_iso_time(last.time, when, sizeof(when)));
	} else if (found && last.outcome == XL_OUT_OOM) {
		r->place = CALIB_PLACE_KNOWN_BAD;
		snprintf(r->reason, sizeof(r->reason), "oom with this signature on this hardware and stack"
			 " (run %s, %s)", last.id, xl_iso_time(last.time, when, sizeof(when)));
	} else {
		bool suspect = false, infeasible, pfound = false, older = false;

		if (st && rc == 0)
			rc = st->be->latest_same_shape(st, sig.shape_hash, sig.stack_hash, sig.hash, &prev,
						       &pfound, &older);
		if (pfound && prev.outcome == XL_OUT_OOM) {
			suspect = true;
			snprintf(r->reason, sizeof(r->reason), "oom %s (run %s, %s)",
				 older ? "on an older stack with this shape" :
					 "with this shape and stack under other toggles",
				 prev.id, xl_iso_time(prev.time, when, sizeof(when)));
		}
		infeasible = pred.known && pred.device_memory_bytes &&
			     pred.predicted_bytes > pred.device_memory_bytes;
		if (infeasible) {
			size_t l = suspect ? strlen(r->reason) : 0;

			snprintf(r->reason + l, sizeof(r->reason) - l,
				 "%spredicted %s above %s of device memory (%s)",
				 suspect ? "; " : "", mem, dev, pred.note);
			r->place = CALIB_PLACE_INFEASIBLE;
		} else if (suspect) {
			r->place = CALIB_PLACE_SUSPECT;
		} else {
			int l;

			if (found)
				l = snprintf(r->reason, sizeof(r->reason), "last tried with outcome %s (run %s)",
					     xl_outcome_name(last.outcome), last.id);
			else
				l = snprintf(r->reason, sizeof(r->reason), "never tried with this signature");
			if (l < 0 || (size_t)l >= sizeof(r->reason))
				l = (int)strlen(r->reason);
			if (pred.known && pred.device_memory_bytes)
				snprintf(r->reason + l, sizeof(r->reason) - (size_t)l,
					 "; predicted %s of %s", mem, dev);
			else if (pred.known)
				snprintf(r->reason + l, sizeof(r->reason) - (size_t)l,
					 "; predicted %s, device memory unknown", mem);
			else
				snprintf(r->reason + l, sizeof(r->reason) - (size_t)l,
					 "; no prediction (%s)", pred.note);
		}
	}
	calib_attempt_release(&last);
	calib_attempt_release(&prev);
	calib_sig_release(&sig);
	return rc;
}

int calib_order(struct calib_store *st, const json_t *const *parts, size_t n,
		struct calib_rank *ranks)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		memset(&ranks[i], 0, sizeof(ranks[i]));
		ranks[i].index = i;
		if (parts[i] && !json_is_object(parts[i])) {
			rc = XL_EX_DATAERR;
			if (st)
				calib_fail(st, rc, "candidate %zu: the signature parts are not an object",
					   i + 1);
			break;
		}
		if ((rc = rank_one(st, parts[i], &ranks[i])))
			break;
	}
	if (rc) {
		/* nothing known: the profile's order */
		for (size_t i = 0; i < n; i++) {
			ranks[i].index = i;
			ranks[i].place = CALIB_PLACE_UNSEEN;
			snprintf(ranks[i].reason, sizeof(ranks[i].reason), "profile order");
		}
		return rc;
	}
	qsort(ranks, n, sizeof(*ranks), cmp_rank);
	return 0;
}

json_t *calib_rank_json(const struct calib_rank *r, const char *name)
{
	return json_pack("{s:o, s:s, s:s, s:s, s:o, s:o}",
			 "name", name ? json_string(name) : json_null(),
			 "signature", r->signature, "place", calib_place_name(r->place),
			 "reason", r->reason,
			 "predicted_bytes", r->predicted ? json_integer((json_int_t)r->predicted_bytes)
							: json_null(),
			 "device_memory_bytes", r->device_memory_bytes
							? json_integer((json_int_t)r->device_memory_bytes)
							: json_null());
}
