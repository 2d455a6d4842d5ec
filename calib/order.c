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

/* What an attempt that ran out of memory failed with: the compiler's need
 * where the oom came at compile time (kept as a prediction of basis
 * compiler), else XLA's buffers as its report gave them, else the
 * allocation the runtime refused (oom_request). */
struct failed_with {
	struct calib_figure need;      /* bytes 0: none */
	bool compiler;                 /* need is the compiler's */
};

static int failure_figure(const struct calib_attempt *a, void *arg)
{
	struct failed_with *fw = arg;
	int best = 0;

	for (size_t i = 0; i < a->nfigures; i++) {
		const struct calib_figure *f = &a->figures[i];
		int rank = f->bytes <= 0 ? 0
			 : f->predicted && f->basis == CALIB_BASIS_COMPILER ? 3
			 : !f->predicted && f->kind == CALIB_KIND_XLA_BUFFERS ? 2
			 : !f->predicted && f->kind == CALIB_KIND_OOM_REQUEST ? 1 : 0;

		if (rank > best) {
			best = rank;
			fw->need.bytes = f->bytes;
			fw->need.kind = f->kind;
			fw->compiler = rank >= 2;
		}
	}
	return 0;
}

/* A known-bad candidate's figure is what it failed with, not a curve's:
 * the estimate says so, with the limit it failed under, and the reason
 * names it. */
static void failed_figure(struct calib_store *st, const char *id, struct calib_rank *r)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	struct failed_with fw = { .need = { .bytes = 0 }, .compiler = false };
	struct calib_estimate *e = &r->est;
	char b[32];

	f.id_prefix = id;
	f.limit = 1;
	if (!id || calib_history(st, &f, failure_figure, &fw) != 0 || fw.need.bytes <= 0)
		return;
	xl_fmt_bytes((uint64_t)fw.need.bytes, b, sizeof(b));
	if (fw.compiler)
		reason_add(r, "the compiler needed %s (%s)", b, calib_kind_name(fw.need.kind));
	else
		reason_add(r, "the runtime asked for %s when it failed (%s)", b,
			   calib_kind_name(fw.need.kind));
	e->known = true;
	e->kind = fw.need.kind;
	e->basis = fw.compiler ? CALIB_BASIS_COMPILER : CALIB_BASIS_NONE;
	e->predicted_bytes = fw.need.bytes;
	e->error_bytes = 0;
	/* no verdict of a prediction: the place (known-bad, last) is the
	 * verdict, and a candidate run alone is still tried, as before */
	e->feasible = -1;
	e->near_limit = false;
	snprintf(e->summary, sizeof(e->summary), "failed with %s of %s (run %s): %s", b,
		 calib_kind_name(fw.need.kind), id,
		 fw.compiler ? "what the compiler said the program needs" :
			       "the allocation the runtime refused");
	snprintf(e->reason, sizeof(e->reason), "known-bad: ran out of memory with this signature; %s",
		 e->summary);
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
		failed_figure(st, last.id, r);
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
