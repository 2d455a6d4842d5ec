/* order.c - the order in which to try a profile's candidates. */
#include "calib/store.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const place_names[] = {
	[CALIB_PLACE_KNOWN_GOOD] = "known-good",
	[CALIB_PLACE_UNSEEN] = "unseen",
	[CALIB_PLACE_NEAR_LIMIT] = "near-limit",
	[CALIB_PLACE_SUSPECT] = "suspect",
	[CALIB_PLACE_INFEASIBLE] = "predicted-infeasible",
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

	if (a->tier != b->tier)
		return a->tier < b->tier ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Appends "; " and fmt to r->reason. */
static void reason_add(struct calib_rank *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void reason_add(struct calib_rank *r, const char *fmt, ...)
{
	size_t l = strlen(r->reason);
	va_list ap;

	if (l && l + 2 < sizeof(r->reason)) {
		memcpy(r->reason + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(r->reason + l, sizeof(r->reason) - l, fmt, ap);
	va_end(ap);
}

/* The compiler's own figure of an attempt (a compile-time oom keeps what
 * the program needed as a prediction of basis compiler). */
static int compiler_figure(const struct calib_attempt *a, void *arg)
{
	struct calib_figure *need = arg;

	for (size_t i = 0; i < a->nfigures; i++)
		if (a->figures[i].predicted && a->figures[i].basis == CALIB_BASIS_COMPILER &&
		    a->figures[i].bytes > 0) {
			need->bytes = a->figures[i].bytes;
			need->kind = a->figures[i].kind;
		}
	return 0;
}

/* Adds to a known-bad candidate's reason what the compiler said its program
 * needed, where the oom came at compile time with that figure. */
static void compiler_need(struct calib_store *st, const char *id, struct calib_rank *r)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	struct calib_figure need = { .bytes = 0 };
	char b[32];

	f.id_prefix = id;
	f.limit = 1;
	if (!id || calib_history(st, &f, compiler_figure, &need) != 0 || need.bytes <= 0)
		return;
	reason_add(r, "the compiler needed %s (%s)", xl_fmt_bytes((uint64_t)need.bytes, b, sizeof(b)),
		   calib_kind_name(need.kind));
}

/* What the store knows of one candidate: its place, tier and reason. */
static int rank_one(struct calib_store *st, const struct calib_target *t, struct calib_rank *r)
{
	struct calib_sig sig;
	struct calib_attempt last, prev;
	bool found = false;
	char when[32];
	int rc = 0;
	json_t *empty = NULL;
	struct calib_target tt = *t;

	if (!t->parts)
		tt.parts = empty = json_object();   /* nothing known about it */
	calib_signature(tt.parts, &sig);
	snprintf(r->signature, sizeof(r->signature), "%s", sig.hash);
	if (calib_estimate(st, &tt, &r->est) != 0)
		rc = XL_EX_CANTCREAT;
	calib_attempt_init(&last);
	calib_attempt_init(&prev);
	if (st && rc == 0)
		rc = st->ops->latest_attempt(st, sig.hash, &last, &found);
	r->place = CALIB_PLACE_UNSEEN;
	r->reason[0] = '\0';
	if (found && (last.outcome == XL_OUT_OK || last.outcome == XL_OUT_COMPILE_STORM)) {
		r->place = CALIB_PLACE_KNOWN_GOOD;
		r->tier = 0;
		reason_add(r, "%s with this signature (run %s, %s)", xl_outcome_name(last.outcome),
			   last.id, xl_iso_time(last.time, when, sizeof(when)));
	} else if (found && last.outcome == XL_OUT_OOM) {
		r->place = CALIB_PLACE_KNOWN_BAD;
		r->tier = 4;
		reason_add(r, "oom with this signature on this hardware and stack (run %s, %s)",
			   last.id, xl_iso_time(last.time, when, sizeof(when)));
		compiler_need(st, last.id, r);
	} else {
		bool pfound = false, older = false, suspect;

		if (st && rc == 0)
			rc = st->ops->latest_same_shape(st, sig.shape_hash, sig.stack_hash, sig.hash, &prev,
						       &pfound, &older);
		suspect = pfound && prev.outcome == XL_OUT_OOM;
		if (suspect)
			reason_add(r, "oom %s (run %s, %s)",
				   older ? "on an older stack with this shape" :
					   "with this shape and stack under other toggles",
				   prev.id, xl_iso_time(prev.time, when, sizeof(when)));
		if (r->est.feasible == 0) {
			r->place = CALIB_PLACE_INFEASIBLE;
			r->tier = 3;
		} else if (suspect) {
			/* an old oom outweighs a prediction */
			r->place = CALIB_PLACE_SUSPECT;
			r->tier = 2;
		} else if (r->est.feasible == 1) {
			r->tier = 0;
			reason_add(r, "never launched with this signature; predicted to fit");
		} else if (r->est.near_limit) {
			/* a coin the band cannot call: after every candidate predicted
			 * to fit, in the profile's order with the unseen */
			r->place = CALIB_PLACE_NEAR_LIMIT;
			r->tier = 1;
			reason_add(r, "never launched with this signature; near the limit: tried after"
				   " those predicted to fit, in the profile's order");
		} else {
			r->tier = 1;
			reason_add(r, "never launched with this signature");
		}
		if (r->est.differs[0])
			reason_add(r, "%s", r->est.differs);
		reason_add(r, "%s", r->est.reason);
	}
	calib_attempt_release(&last);
	calib_attempt_release(&prev);
	calib_sig_release(&sig);
	json_decref(empty);
	return rc;
}

int calib_order(struct calib_store *st, const struct calib_target *targets, size_t n,
		struct calib_rank *ranks)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		memset(&ranks[i], 0, sizeof(ranks[i]));
		ranks[i].index = i;
		if (targets[i].parts && !json_is_object(targets[i].parts)) {
			rc = XL_EX_DATAERR;
			if (st)
				calib_fail(st, rc, "candidate %zu: the signature parts are not an object",
					   i + 1);
			break;
		}
		if ((rc = rank_one(st, &targets[i], &ranks[i])))
			break;
	}
	if (rc) {
		/* nothing known: the profile's order */
		for (size_t i = 0; i < n; i++) {
			ranks[i].index = i;
			ranks[i].place = CALIB_PLACE_UNSEEN;
			ranks[i].tier = 1;
			snprintf(ranks[i].reason, sizeof(ranks[i].reason), "profile order");
		}
		return rc;
	}
	qsort(ranks, n, sizeof(*ranks), cmp_rank);
	return 0;
}

json_t *calib_rank_json(const struct calib_rank *r, const char *name)
{
	const struct calib_estimate *e = &r->est;
	char fit[200];
	json_t *o = json_pack("{s:o, s:s, s:s, s:s}",
			      "name", name ? json_string(name) : json_null(),
			      "signature", r->signature, "place", calib_place_name(r->place),
			      "reason", r->reason);

	json_object_set_new(o, "predicted_bytes", e->known ? json_integer((json_int_t)e->predicted_bytes)
							   : json_null());
	json_object_set_new(o, "kind", json_string(calib_kind_name(e->kind)));
	json_object_set_new(o, "basis", json_string(calib_basis_name(e->known ? e->basis
									      : CALIB_BASIS_NONE)));
	json_object_set_new(o, "error_bytes", e->known && e->error_bytes != CALIB_UNSET
						      ? json_integer((json_int_t)e->error_bytes) : json_null());
	json_object_set_new(o, "limit_bytes", e->limit_bytes != CALIB_UNSET
						      ? json_integer((json_int_t)e->limit_bytes) : json_null());
	json_object_set_new(o, "feasible", e->feasible < 0 ? json_null() : json_boolean(e->feasible));
	json_object_set_new(o, "fit", e->points ? json_string(calib_fit_str(e, fit, sizeof(fit)))
						: json_null());
	json_object_set_new(o, "near_limit", json_boolean(e->near_limit));
	json_object_set_new(o, "curve", e->points && e->fit.chosen < CALIB_SHAPE_COUNT
						? json_string(calib_shape_name(e->fit.chosen)) : json_null());
	json_object_set_new(o, "curve_why", e->points && e->fit.chosen < CALIB_SHAPE_COUNT
						    ? json_string(e->fit.why) : json_null());
	json_object_set_new(o, "summary", json_string(e->summary));
	json_object_set_new(o, "device_memory_bytes", e->analytic.device_memory_bytes
			    ? json_integer((json_int_t)e->analytic.device_memory_bytes) : json_null());
	return o;
}
