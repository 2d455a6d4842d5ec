/* cmd-calib.c - `xlaunch calib`: history, stats, order, predict, record,
 * export, import, forget.  Everything it reads or writes goes through the
 * typed store interface of calib/calib.h. */
#include "calib/calib.h"
#include "launcher/plan/plan.h"
#include "launcher/report/report.h"
#include "bundle/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- shared helpers ---------------------------------------------------------------- */

/* The store as the calib commands open it, lost attempts swept into it
 * first when it is opened for writing (cmd-calib-store.c). */
int xl_calib_open_store(const struct xl_ctx *ctx, unsigned flags, struct calib_store **st);

/* Prints the store's error and closes it; returns rc. */
static int store_error(struct calib_store *st, int rc)
{
	xl_error("%s", calib_errmsg(st));
	calib_close(st);
	return rc;
}

static void print_json(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));

	if (!s)
		xl_oom();
	puts(s);
	free(s);
}

/* An aligned table: cells row by row; the last column is not padded. */
struct table {
	size_t ncols;
	struct xl_strv cells;
};

static void table_row(struct table *t, ...)
{
	va_list ap;

	va_start(ap, t);
	for (size_t i = 0; i < t->ncols; i++) {
		const char *c = va_arg(ap, const char *);

		xl_strv_push(&t->cells, c ? c : "-");
	}
	va_end(ap);
}

static void table_print(struct table *t)
{
	size_t w[16] = { 0 };
	size_t rows = t->cells.n / t->ncols;

	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t l = strlen(t->cells.v[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	for (size_t r = 0; r < rows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *cell = t->cells.v[r * t->ncols + c];

			if (c + 1 == t->ncols)
				printf("%s\n", cell);
			else
				printf("%-*s  ", (int)w[c], cell);
		}
	}
	xl_strv_release(&t->cells);
}

static const char *bytes_cell(int64_t v, char *buf, size_t n)
{
	if (v == CALIB_UNSET)
		return "-";
	return xl_fmt_bytes((uint64_t)v, buf, n);
}

/* --since: an ISO 8601 time, or a duration ago (30m, 24h, 7d, 2w). */
static bool parse_since(const char *s, double *out)
{
	size_t l = strlen(s);
	double d;

	if (xl_parse_iso_time(s, out))
		return true;
	if (l > 1 && (s[l - 1] == 'd' || s[l - 1] == 'w')) {
		char *end;

		errno = 0;
		d = strtod(s, &end);
		if (end != s + l - 1 || errno || !(d >= 0))
			return false;
		d *= s[l - 1] == 'd' ? 86400.0 : 7 * 86400.0;
	} else if (!xl_parse_duration(s, &d)) {
		return false;
	}
	*out = xl_now() - d;
	return true;
}

/* ---- history ------------------------------------------------------------------------ */

struct history_opts {
	const char *profile, *signature, *host, *job;
	int outcome;             /* enum xl_outcome, -1 any */
	double since;
	long long limit;
};

static bool opt_outcome(const char *value, void *field)
{
	enum xl_outcome o;

	if (!xl_outcome_parse(value, &o))
		return false;
	*(int *)field = (int)o;
	return true;
}

static bool opt_since(const char *value, void *field)
{
	return parse_since(value, field);
}

#define OUTCOMES "ok, oom, compile-storm, crash, error, timeout, interrupted, peer-failed"

static const struct xl_opt history_options[] = {
	XL_OPTION_STRING(0, "profile", "P", struct history_opts, profile,
			 "only attempts of profile P"),
	XL_OPTION_STRING(0, "signature", "PREFIX", struct history_opts, signature,
			 "only attempts whose signature starts with PREFIX (unique)"),
	XL_OPTION_CALLBACK(0, "outcome", "O", struct history_opts, outcome, int, opt_outcome,
			   "an outcome (" OUTCOMES ")", OUTCOMES),
	XL_OPTION_STRING(0, "host", "H", struct history_opts, host, "only attempts on host H"),
	XL_OPTION_STRING(0, "job", "ID", struct history_opts, job,
			 "only the ranks of job ID (and of its restarts, ID#N)"),
	XL_OPTION_CALLBACK(0, "since", "TIME|AGE", struct history_opts, since, double, opt_since,
			   "an ISO 8601 time or an age (30m, 24h, 7d, 2w)",
			   "ISO 8601 time, or an age such as 30m, 24h, 7d, 2w"),
	XL_OPTION_COUNT(0, "limit", "N", struct history_opts, limit, 0, 9.2e18,
			"at most N attempts (default 50; 0: all)"),
	XL_OPTION_END,
};

static const struct history_opts history_defaults = { .outcome = -1, .limit = 50 };

struct history_out {
	json_t *arr;             /* --json */
	struct table tab;
	size_t n;
};

/* The outcome, and for an attempt a later xlaunch recorded, how it ended:
 * "interrupted (supervisor killed)" when the guardian wrote its end,
 * "interrupted (supervisor lost)" when nothing did. */
static const char *outcome_cell(const struct calib_attempt *a, char *buf, size_t n)
{
	json_t *d = a->details ? json_loads(a->details, 0, NULL) : NULL;
	const char *by = json_string_value(json_object_get(json_object_get(d, "lost"), "ended_by"));
	const char *how = !by ? NULL : strcmp(by, "guardian") == 0 ? "supervisor killed"
				  : strcmp(by, "sweep") == 0 ? "supervisor lost" : "recorded later";

	if (how)
		snprintf(buf, n, "%s (%s)", xl_outcome_name(a->outcome), how);
	else if (a->outcome == XL_OUT_PEER_FAILED && json_is_object(json_object_get(d, "peer")))
		snprintf(buf, n, "peer-failed (rank %lld: %s)",
			 (long long)json_integer_value(json_object_get(json_object_get(d, "peer"), "rank")),
			 json_string_value(json_object_get(json_object_get(d, "peer"), "outcome"))
			 ? json_string_value(json_object_get(json_object_get(d, "peer"), "outcome"))
			 : "lease lapsed");
	else
		snprintf(buf, n, "%s", xl_outcome_name(a->outcome));
	json_decref(d);
	return buf;
}

static int history_row(const struct calib_attempt *a, void *arg)
{
	struct history_out *h = arg;
	char tb[40], sig[13], pb[64], ob[32], wall[32], comp[24], hits[24], oc[64], rk[24];

	h->n++;
	if (h->arr) {
		json_array_append_new(h->arr, calib_attempt_to_json(a, CALIB_JSON_HISTORY));
		return 0;
	}
	snprintf(sig, sizeof(sig), "%.12s", a->signature);
	if (isnan(a->wall_s))
		snprintf(wall, sizeof(wall), "-");
	else
		snprintf(wall, sizeof(wall), "%.1fs", a->wall_s);
	snprintf(comp, sizeof(comp), a->compile_count == CALIB_UNSET ? "-" : "%lld",
		 (long long)a->compile_count);
	snprintf(hits, sizeof(hits), a->cache_hits == CALIB_UNSET ? "-" : "%lld",
		 (long long)a->cache_hits);
	if (a->predicted_bytes == CALIB_UNSET)
		snprintf(pb, sizeof(pb), "-");
	else
		xl_fmt_bytes((uint64_t)a->predicted_bytes, pb, sizeof(pb));
	/* a prediction of another kind says so: it is no measure of this one */
	if (a->predicted_bytes != CALIB_UNSET && a->observed_bytes != CALIB_UNSET &&
	    a->predicted_kind != a->observed_kind && a->predicted_kind < CALIB_KIND_COUNT) {
		size_t l = strlen(pb);

		snprintf(pb + l, sizeof(pb) - l, " (%s)", calib_kind_name(a->predicted_kind));
	}
	snprintf(rk, sizeof(rk), "%lld", (long long)a->rank);
	table_row(&h->tab, xl_iso_time_ms(a->time, tb, sizeof(tb)), a->id, a->profile, a->candidate,
		  sig, a->host, a->rank == CALIB_UNSET ? "-" : rk, a->job_id,
		  outcome_cell(a, oc, sizeof(oc)),
		  a->observed_bytes != CALIB_UNSET && a->observed_kind < CALIB_KIND_COUNT
			  ? calib_kind_name(a->observed_kind)
			  : a->predicted_bytes != CALIB_UNSET && a->predicted_kind < CALIB_KIND_COUNT
				    ? calib_kind_name(a->predicted_kind) : "-",
		  pb, bytes_cell(a->observed_bytes, ob, sizeof(ob)), wall, comp, hits);
	return 0;
}

/* ---- a job's story (history --job) ------------------------------------------------------ */

/* One rank's row as kept for the story. */
struct story_rank {
	char *job_id, *host;
	int64_t rank, peer_rank;
	double ended, expires;
	int outcome, peer_outcome;
};

struct story {
	struct story_rank *v;
	size_t n, cap;
};

static int story_row(const struct calib_job_rank *r, void *arg)
{
	struct story *s = arg;
	struct story_rank *x;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xl_realloc(s->v, s->cap * sizeof(*s->v));
	}
	x = &s->v[s->n++];
	x->job_id = xl_strdup(r->job_id);
	x->host = xl_strdup(r->host ? r->host : "?");
	x->rank = r->rank;
	x->peer_rank = r->peer_rank;
	x->ended = r->ended;
	x->expires = r->expires;
	x->outcome = r->outcome;
	x->peer_outcome = r->peer_outcome;
	return 0;
}

/* The rank of one job launch (rows [from, to)) that was gone first: the
 * earliest bad end that is not peer-failed, else the rank whose lapsed
 * lease the others were ended for, else the rank with no end whose lease
 * ran out first (every rank killed at once, as `scancel JOB.STEP` does,
 * leaves no end and nobody to be ended for it); NULL when none. */
static const struct story_rank *first_gone(const struct story *s, size_t from, size_t to)
{
	const struct story_rank *lapsed = NULL;
	double now = xl_now();

	for (size_t i = from; i < to; i++)
		if (!isnan(s->v[i].ended) && s->v[i].outcome != XL_OUT_OK &&
		    s->v[i].outcome != XL_OUT_PEER_FAILED)
			return &s->v[i];
	for (size_t i = from; i < to; i++)
		if (s->v[i].outcome == XL_OUT_PEER_FAILED && s->v[i].peer_outcome == XL_OUT_COUNT)
			for (size_t j = from; j < to; j++)
				if (s->v[j].rank == s->v[i].peer_rank)
					return &s->v[j];
	for (size_t i = from; i < to; i++)
		if (isnan(s->v[i].ended) && s->v[i].expires < now &&
		    (!lapsed || s->v[i].expires < lapsed->expires))
			lapsed = &s->v[i];
	return lapsed;
}

/* One job launch: which rank was gone first and when, then when each
 * other rank ended. */
static void story_print(const struct story *s, size_t from, size_t to)
{
	const struct story_rank *g = first_gone(s, from, to);
	double t0 = NAN;
	char tb[40];

	printf("\njob %s: %zu rank%s", s->v[from].job_id, to - from, to - from == 1 ? "" : "s");
	if (g && isnan(g->ended)) {
		t0 = g->expires;
		printf("; rank %lld on %s was gone first: its lease ran out at %s\n",
		       (long long)g->rank, g->host, xl_iso_time_ms(t0, tb, sizeof(tb)));
	} else if (g) {
		t0 = g->ended;
		printf("; rank %lld on %s died first: %s at %s\n", (long long)g->rank, g->host,
		       xl_outcome_name((enum xl_outcome)g->outcome), xl_iso_time_ms(t0, tb, sizeof(tb)));
	} else {
		printf("; no rank ended badly\n");
	}
	for (size_t i = from; i < to; i++) {
		const struct story_rank *r = &s->v[i];

		if (r == g)
			continue;
		printf("  rank %lld on %s: ", (long long)r->rank, r->host);
		if (isnan(r->ended)) {
			printf("no end recorded; its lease %s %s\n",
			       r->expires < xl_now() ? "ran out at" : "runs to",
			       xl_iso_time_ms(r->expires, tb, sizeof(tb)));
			continue;
		}
		printf("%s at %s", r->outcome >= 0 ? xl_outcome_name((enum xl_outcome)r->outcome) : "?",
		       xl_iso_time_ms(r->ended, tb, sizeof(tb)));
		if (!isnan(t0))
			printf(" (%+.1f s)", r->ended - t0);
		if (r->outcome == XL_OUT_PEER_FAILED && r->peer_rank != CALIB_UNSET)
			printf(", ended for rank %lld (%s)", (long long)r->peer_rank,
			       r->peer_outcome == XL_OUT_COUNT ? "its lease lapsed"
			       : r->peer_outcome >= 0 ? xl_outcome_name((enum xl_outcome)r->peer_outcome) : "?");
		printf("\n");
	}
}

/* After `history --job` as a table: the story of each launch of the job,
 * from the ranks' rows.  Returns 0 or the store's error. */
static int job_story(struct calib_store *st, const char *job)
{
	struct story s = { NULL, 0, 0 };
	int rc = calib_job_ranks(st, job, story_row, &s);

	for (size_t from = 0, to; rc == 0 && from < s.n; from = to) {
		for (to = from + 1; to < s.n && strcmp(s.v[to].job_id, s.v[from].job_id) == 0; to++)
			;
		story_print(&s, from, to);
	}
	for (size_t i = 0; i < s.n; i++) {
		free(s.v[i].job_id);
		free(s.v[i].host);
	}
	free(s.v);
	return rc;
}

static enum xl_exit cmd_history(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct history_opts *o = call->opts;
	struct calib_filter f = CALIB_FILTER_INIT;
	struct history_out h = { NULL, { 15, XL_STRV_INIT }, 0 };
	struct calib_store *st;
	char hash[65];
	int rc;

	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	if (o->signature && (rc = calib_resolve_signature(st, o->signature, hash)))
		return store_error(st, rc);
	f.profile = o->profile;
	f.signature = o->signature ? hash : NULL;
	f.outcome = o->outcome;
	f.host = o->host;
	f.since = xl_call_seen(call, "since") ? o->since : NAN;
	f.limit = o->limit;
	f.job = o->job;
	if (ctx->json)
		h.arr = json_array();
	else
		table_row(&h.tab, "TIME", "ID", "PROFILE", "CANDIDATE", "SIGNATURE", "HOST", "RANK",
			  "JOB", "OUTCOME", "KIND", "PREDICTED", "OBSERVED", "WALL", "COMPILES", "HITS");
	if ((rc = calib_history(st, &f, history_row, &h))) {
		json_decref(h.arr);
		xl_strv_release(&h.tab.cells);
		return store_error(st, rc);
	}
	if (h.arr) {
		print_json(h.arr);
		json_decref(h.arr);
	} else if (h.n) {
		table_print(&h.tab);
		if (o->job && (rc = job_story(st, o->job)))
			return store_error(st, rc);
	} else {
		xl_strv_release(&h.tab.cells);
		if (xl_verbosity >= 0)
			fprintf(stderr, "no attempts recorded%s\n",
				o->profile || o->signature || o->outcome >= 0 || o->host || o->job ||
				xl_call_seen(call, "since") ? " that match" : "");
	}
	calib_close(st);
	return XL_EX_OK;
}

/* ---- stats ------------------------------------------------------------------------------ */

struct stats_opts {
	const char *profile;
	long long limit;
};

static const struct xl_opt stats_options[] = {
	XL_OPTION_STRING(0, "profile", "P", struct stats_opts, profile,
			 "only signatures launched with profile P"),
	XL_OPTION_COUNT(0, "limit", "N", struct stats_opts, limit, 0, 9.2e18,
			"at most N signatures, most recently seen first (default: all)"),
	XL_OPTION_END,
};

static int stats_row(const struct calib_sig_stats *s, void *arg)
{
	struct history_out *h = arg;
	char tb[40];

	xl_iso_time_ms(s->last_seen, tb, sizeof(tb));
	h->n++;
	if (h->arr) {
		json_array_append_new(h->arr, json_pack("{s:s, s:s?, s:s?, s:I, s:I, s:I, s:o, s:o, s:s}",
			"signature", s->signature, "profile", s->profile, "candidate", s->candidate,
			"attempts", (json_int_t)s->attempts, "ok", (json_int_t)s->ok,
			"oom", (json_int_t)s->oom,
			"ratio_median", isnan(s->ratio_median) ? json_null() : json_real(s->ratio_median),
			"kind", s->kind ? json_string(s->kind) : json_null(),
			"last_seen", tb));
	} else {
		char sig[13], a[24], ok[24], oom[24], ratio[24];

		snprintf(sig, sizeof(sig), "%.12s", s->signature);
		snprintf(a, sizeof(a), "%lld", (long long)s->attempts);
		snprintf(ok, sizeof(ok), "%lld", (long long)s->ok);
		snprintf(oom, sizeof(oom), "%lld", (long long)s->oom);
		if (isnan(s->ratio_median))
			snprintf(ratio, sizeof(ratio), "-");
		else
			snprintf(ratio, sizeof(ratio), "%.3f", s->ratio_median);
		table_row(&h->tab, sig, s->profile, s->candidate, a, ok, oom, s->kind, ratio, tb);
	}
	return 0;
}

static enum xl_exit cmd_stats(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct stats_opts *o = call->opts;
	struct history_out h = { NULL, { 9, XL_STRV_INIT }, 0 };
	struct calib_store *st;
	int rc;

	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	if (ctx->json)
		h.arr = json_array();
	else
		table_row(&h.tab, "SIGNATURE", "PROFILE", "CANDIDATE", "ATTEMPTS", "OK", "OOM", "KIND",
			  "OBS/PRED", "LAST SEEN");
	if ((rc = calib_stats(st, o->profile, o->limit, stats_row, &h))) {
		json_decref(h.arr);
		xl_strv_release(&h.tab.cells);
		return store_error(st, rc);
	}
	if (h.arr) {
		print_json(h.arr);
		json_decref(h.arr);
	} else if (h.n) {
		table_print(&h.tab);
	} else {
		xl_strv_release(&h.tab.cells);
		if (xl_verbosity >= 0)
			fprintf(stderr, "no attempts recorded\n");
	}
	calib_close(st);
	return XL_EX_OK;
}

/* ---- order ------------------------------------------------------------------------------ */

/* Says, on stderr, whose command a plan without one took. */
static void job_note(const struct xl_ctx *ctx, const struct xl_call *call, const struct xl_plan *plan)
{
	if (call->restc || xl_verbosity < 0)
		return;
	if (plan->job_from)
		fprintf(stderr, "note: for the command of run %s (give another after '--')\n",
			plan->job_from);
	else if (plan->no_job)
		fprintf(stderr, "note: no command given and none recorded for profile '%s': the job's"
			" argv, code and interpreter are not in these signatures\n", call->argv[0]);
	(void)ctx;
}

/* "1.2 GiB +/- 40.0 MiB" of an estimate, or "-". */
static const char *estimate_cell(const struct calib_estimate *e, char *buf, size_t n)
{
	char a[32], b[32];

	if (!e->known)
		return "-";
	xl_fmt_bytes((uint64_t)e->predicted_bytes, a, sizeof(a));
	if (e->error_bytes != CALIB_UNSET && e->error_bytes > 0)
		snprintf(buf, n, "%s +/- %s", a, xl_fmt_bytes((uint64_t)e->error_bytes, b, sizeof(b)));
	else
		snprintf(buf, n, "%s", a);
	return buf;
}

static json_t *job_json(const struct xl_call *call, const struct xl_plan *plan)
{
	json_t *cmd = json_array();

	for (int i = 0; i < call->restc; i++)
		json_array_append_new(cmd, json_string(call->restv[i]));
	return json_pack("{s:o, s:o}", "command", call->restc ? cmd : (json_decref(cmd), json_null()),
			 "job_from", plan->job_from ? json_string(plan->job_from) : json_null());
}

static enum xl_exit cmd_order(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	struct xl_plan plan;
	int rc;

	xl_bundle_cache_readonly();
	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	rc = xl_plan_make(ctx, st, call->argv[0], NULL, 0, call->restv, call->restc, &plan);
	if (!rc && plan.store_rc) {
		xl_plan_release(&plan);
		return store_error(st, plan.store_rc);
	}
	if (rc) {
		xl_plan_release(&plan);
		calib_close(st);
		return rc;
	}
	if (ctx->json) {
		json_t *order = json_array();

		for (size_t i = 0; i < plan.n; i++)
			json_array_append_new(order, xl_plan_item_json(&plan.items[i]));
		json_t *out = json_pack("{s:s, s:o}", "profile", plan.items[0].profile->name,
					"order", order);

		{
			json_t *j = job_json(call, &plan);

			json_object_update(out, j);
			json_decref(j);
		}
		print_json(out);
		json_decref(out);
	} else {
		struct table tab = { 8, XL_STRV_INIT };

		job_note(ctx, call, &plan);
		table_row(&tab, "#", "CANDIDATE", "PLACE", "KIND", "PREDICTED", "LIMIT", "SIGNATURE",
			  "REASON");
		for (size_t i = 0; i < plan.n; i++) {
			const struct calib_rank *r = &plan.items[i].rank;
			char num[24], pb[80], lb[32], sig[13];

			snprintf(num, sizeof(num), "%zu", i + 1);
			snprintf(sig, sizeof(sig), "%.12s", r->signature);
			table_row(&tab, num, plan.items[i].candidate ? plan.items[i].candidate : "(profile)",
				  calib_place_name(r->place), r->est.known ? calib_kind_name(r->est.kind) : "-",
				  estimate_cell(&r->est, pb, sizeof(pb)),
				  r->est.limit_bytes != CALIB_UNSET
					  ? xl_fmt_bytes((uint64_t)r->est.limit_bytes, lb, sizeof(lb)) : "-",
				  sig, r->reason);
		}
		table_print(&tab);
	}
	xl_plan_release(&plan);
	calib_close(st);
	return XL_EX_OK;
}

/* ---- predict ---------------------------------------------------------------------------- */

/* XLA's buffers predicted for the candidate's program from the family's. */
static void print_compiler(const struct calib_estimate *e)
{
	const struct calib_choice *ch = &e->compiler;
	char b[32], err[32], fit[200];

	if (ch->chosen >= CALIB_SHAPE_COUNT) {
		if (!isnan(e->xla_exponent))
			printf("  %-18s XLA's buffers grow as x^%.2f%s\n", "compiler", e->xla_exponent,
			       e->xla_exponent_lower ? " or faster (two sizes)" : "");
		return;
	}
	xl_fmt_bytes(ch->predicted > 0 && ch->predicted < 9.2e18 ? (uint64_t)ch->predicted : 0, b,
		     sizeof(b));
	xl_fmt_bytes(ch->band > 0 && ch->band < 9.2e18 ? (uint64_t)ch->band : 0, err, sizeof(err));
	calib_curve_str(&ch->trial[ch->chosen].curve, e->scale_name[0] ? e->scale_name : "scale",
			e->tokens, fit, sizeof(fit));
	printf("  %-18s XLA's buffers %s +/- %s before compiling (%s %s, from %u sizes", "compiler",
	       b, err, calib_shape_name(ch->chosen), fit, ch->sizes);
	if (!isnan(e->xla_exponent))
		printf("; growth x^%.2f%s", e->xla_exponent, e->xla_exponent_lower ? " or faster" : "");
	printf(")\n");
}

static void print_prediction(const char *cand, const struct calib_rank *r)
{
	const struct calib_estimate *e = &r->est;
	const struct calib_prediction *p = &e->analytic;
	char b[32], c[80];

	printf("candidate %s (signature %.12s)\n", cand, r->signature);
	/* its place in the order and why: a known-bad or suspect candidate is
	 * last for its history, whatever the prediction says */
	if (r->reason[0])
		printf("  %-18s %s: %s\n", "order", calib_place_name(r->place), r->reason);
	if (e->known) {
		printf("  %-18s %s of %s (%s)\n", "predicted", estimate_cell(e, c, sizeof(c)),
		       calib_kind_name(e->kind), calib_basis_name(e->basis));
	} else {
		printf("  %-18s none of %s\n", "predicted", calib_kind_name(e->kind));
	}
	printf("  %-18s %s\n", "how", e->summary);
	if (e->differs[0])
		printf("  %-18s never launched; %s\n", "signature", e->differs);
	if (e->points && e->fit.chosen < CALIB_SHAPE_COUNT && e->basis == CALIB_BASIS_LEARNED) {
		char band[200];

		printf("  %-18s %s\n", "curve", e->fit.why);
		printf("  %-18s %s\n", "band", calib_band_str(&e->fit, band, sizeof(band)));
	}
	print_compiler(e);
	if (e->limit_bytes != CALIB_UNSET)
		printf("  %-18s %s (%s)\n", "limit", xl_fmt_bytes((uint64_t)e->limit_bytes, b, sizeof(b)),
		       e->limit_source);
	printf("  %-18s %s: %s\n", "fits", e->feasible < 0 ? (e->near_limit ? "near the limit" : "unknown")
							    : e->feasible ? "yes" : "no",
	       e->reason);
	if (!p->known)
		return;
	printf("  analytic model (%s):\n", calib_kind_name(p->kind));
	printf("    %-16s %s\n", "model states", xl_fmt_bytes(p->model_state_bytes, b, sizeof(b)));
	printf("    %-16s %s\n", "activations", xl_fmt_bytes(p->activation_bytes, b, sizeof(b)));
	printf("    %-16s %s\n", "logits", xl_fmt_bytes(p->logits_bytes, b, sizeof(b)));
	printf("    %-16s %s\n", "overhead", xl_fmt_bytes(p->overhead_bytes, b, sizeof(b)));
	printf("    %-16s %s\n", "analytic", xl_fmt_bytes(p->analytic_bytes, b, sizeof(b)));
	printf("    %-16s %.3f%s\n", "correction", p->correction,
	       p->calibrated ? "" : " (uncalibrated)");
	if (p->device_memory_bytes)
		printf("    %-16s %s\n", "device memory", xl_fmt_bytes(p->device_memory_bytes, b, sizeof(b)));
	printf("    %-16s %s\n", "note", p->note);
}

struct predict_opts {
	const char *cand;
};

/* The JSON of one candidate's prediction: the estimate's fields, and the
 * analytic model's parts at the top level as before. */
static json_t *prediction_json(const struct xl_plan_item *it)
{
	const struct calib_estimate *e = &it->rank.est;
	json_t *o = calib_estimate_json(e), *an = json_object_get(o, "analytic");
	const char *k;
	json_t *v;

	json_object_set_new(o, "profile", json_string(it->profile->name));
	json_object_set_new(o, "candidate", it->candidate ? json_string(it->candidate) : json_null());
	json_object_set_new(o, "signature", json_string(it->rank.signature));
	json_object_set_new(o, "place", json_string(calib_place_name(it->rank.place)));
	json_object_set_new(o, "place_reason", json_string(it->rank.reason));
	json_object_foreach(an, k, v)
		if (!json_object_get(o, k) && strcmp(k, "kind") != 0 && strcmp(k, "note") != 0)
			json_object_set(o, k, v);
	json_object_set(o, "note", json_object_get(an, "note"));
	return o;
}

static enum xl_exit cmd_predict(struct xl_ctx *ctx, const struct xl_call *call)
{
	const char *cand = ((const struct predict_opts *)call->opts)->cand;
	struct calib_store *st;
	struct xl_plan plan;
	json_t *arr;
	int rc;

	xl_bundle_cache_readonly();
	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	if ((rc = xl_plan_make(ctx, st, call->argv[0], cand, XL_PLAN_PROFILE_ORDER, call->restv,
			       call->restc, &plan))) {
		xl_plan_release(&plan);
		calib_close(st);
		return rc;
	}
	if (plan.store_rc)
		xl_warn("%s", calib_errmsg(st));
	if (!ctx->json)
		job_note(ctx, call, &plan);
	arr = json_array();
	for (size_t i = 0; i < plan.n; i++) {
		const struct xl_plan_item *it = &plan.items[i];

		json_array_append_new(arr, prediction_json(it));
		if (!ctx->json) {
			if (i)
				putchar('\n');
			print_prediction(it->candidate ? it->candidate : "(profile)", &it->rank);
		}
	}
	if (ctx->json)
		print_json(cand && json_array_size(arr) == 1 ? json_array_get(arr, 0) : arr);
	json_decref(arr);
	xl_plan_release(&plan);
	calib_close(st);
	return XL_EX_OK;
}

/* ---- record ---------------------------------------------------------------------------- */

struct record_opts {
	const char *cand, *signature, *id, *host;
	int outcome, kind;
	long long exit_status, compiles, rank;
	uint64_t predicted, observed;
	double wall_s, time;
};

static bool opt_time(const char *value, void *field)
{
	return xl_parse_iso_time(value, field);
}

static bool opt_kind(const char *value, void *field)
{
	enum calib_kind k;

	if (!calib_kind_parse(value, &k) || k == CALIB_KIND_UNCLASSIFIED)
		return false;
	*(int *)field = (int)k;
	return true;
}

#define KINDS "device_peak, host_peak_rss, host_peak_vm, xla_buffers, oom_request"

static const struct xl_opt record_options[] = {
	XL_OPTION_STRING('c', "candidate", "CAND", struct record_opts, cand,
			 "the candidate (needed when the profile has several)"),
	XL_OPTION_STRING(0, "signature", "PREFIX", struct record_opts, signature,
			 "a recorded signature instead of a profile"),
	{ .name = "outcome", .kind = XL_OPT_CALLBACK, .arg = "O",
	  .offset = XL_FIELD(struct record_opts, outcome, int), .flags = XL_OPTF_REQUIRED,
	  .parse = opt_outcome, .what = "an outcome (" OUTCOMES ")", .help = OUTCOMES },
	XL_OPTION_STRING(0, "id", "ID", struct record_opts, id, "the run id (default: a new one)"),
	XL_OPTION_COUNT(0, "exit-status", "N", struct record_opts, exit_status, 0, 255,
			"the exit status"),
	{ .name = "predicted", .kind = XL_OPT_BYTES, .arg = "BYTES",
	  .offset = XL_FIELD(struct record_opts, predicted, uint64_t), .flags = XL_OPTF_RANGE,
	  .min = 0, .max = 9.2e18, .help = "predicted memory (default: the prediction now)" },
	{ .name = "observed", .kind = XL_OPT_BYTES, .arg = "BYTES",
	  .offset = XL_FIELD(struct record_opts, observed, uint64_t), .flags = XL_OPTF_RANGE,
	  .min = 0, .max = 9.2e18, .help = "the observed peak (units allowed: 14GiB), of --kind" },
	XL_OPTION_CALLBACK(0, "kind", "KIND", struct record_opts, kind, int, opt_kind,
			   "a memory kind (" KINDS ")",
			   "what --observed and --predicted measure (" KINDS "; default:\n"
			   "the kind the candidate is judged in, device_peak with --signature)"),
	XL_OPTION_DURATION(0, "wall", "DUR", struct record_opts, wall_s, "wall time (90, 1.5m, 2h)"),
	XL_OPTION_COUNT(0, "compiles", "N", struct record_opts, compiles, 0, 9.2e18,
			"compile count"),
	XL_OPTION_STRING(0, "host", "H", struct record_opts, host,
			 "where it ran (default: this host)"),
	XL_OPTION_COUNT(0, "rank", "N", struct record_opts, rank, 0, 9.2e18, "the rank"),
	XL_OPTION_CALLBACK(0, "time", "TIME", struct record_opts, time, double, opt_time,
			   "an ISO 8601 time", "when (ISO 8601; default now)"),
	XL_OPTION_END,
};

static const struct record_opts record_defaults = { .outcome = -1, .kind = -1 };

static int64_t seen_int(const struct xl_call *call, const char *name, long long v)
{
	return xl_call_seen(call, name) ? (int64_t)v : CALIB_UNSET;
}

static enum xl_exit cmd_record(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct record_opts *o = call->opts;
	struct calib_attempt a;
	struct calib_store *st = NULL;
	struct xl_plan plan = { 0 };
	enum calib_kind kind = o->kind >= 0 ? (enum calib_kind)o->kind : CALIB_KIND_DEVICE_PEAK;
	int rc = 0;

	if ((call->argc == 1) == (o->signature != NULL))
		return xl_usage_error(call, "give either PROFILE or --signature");
	if (o->signature && o->cand)
		return xl_usage_error(call, "-c goes with a PROFILE, not --signature");
	if (o->signature && call->restc)
		return xl_usage_error(call, "a command goes with a PROFILE, not --signature");
	if ((rc = xl_calib_open_store(ctx, 0, &st)))
		return rc;
	calib_attempt_init(&a);
	a.outcome = (enum xl_outcome)o->outcome;
	a.exit_status = seen_int(call, "exit-status", o->exit_status);
	a.compile_count = seen_int(call, "compiles", o->compiles);
	a.rank = seen_int(call, "rank", o->rank);
	if (xl_call_seen(call, "wall"))
		a.wall_s = o->wall_s;
	if (xl_call_seen(call, "time"))
		a.time = o->time;
	a.host = xl_strdup(o->host ? o->host : xl_hostname());
	if (o->signature) {
		if ((rc = calib_resolve_signature(st, o->signature, a.signature))) {
			xl_error("%s", calib_errmsg(st));
			goto out;
		}
		/* the signature row exists: its parts stay as they are */
		a.signature_scheme = CALIB_SIG_SCHEME;
	} else {
		const struct xl_plan_item *it;
		struct calib_sig sig;

		if ((rc = xl_plan_make(ctx, st, call->argv[0], o->cand, XL_PLAN_PROFILE_ORDER,
				       call->restv, call->restc, &plan)))
			goto out;
		if (plan.n != 1) {
			xl_error("profile '%s': has %zu candidates; name one with -c", call->argv[0],
				 plan.n);
			rc = XL_EX_USAGE;
			goto out;
		}
		it = &plan.items[0];
		calib_signature(it->parts, &sig);
		snprintf(a.signature, sizeof(a.signature), "%s", sig.hash);
		snprintf(a.shape_hash, sizeof(a.shape_hash), "%s", sig.shape_hash);
		snprintf(a.stack_hash, sizeof(a.stack_hash), "%s", sig.stack_hash);
		a.signature_json = xl_strdup(sig.canonical);
		a.hardware_kind = sig.hardware_kind ? xl_strdup(sig.hardware_kind) : NULL;
		a.profile = xl_strdup(it->profile->name);
		a.candidate = it->candidate ? xl_strdup(it->candidate) : NULL;
		if (o->kind < 0)
			kind = it->rank.est.kind;
		/* the prediction now, of the kind recorded */
		if (!xl_call_seen(call, "predicted") && it->rank.est.known && it->rank.est.kind == kind) {
			a.predicted_bytes = it->rank.est.predicted_bytes;
			a.predicted_kind = kind;
			a.predicted_basis = it->rank.est.basis;
			calib_attempt_add_figure(&a, true, kind, a.predicted_bytes, a.predicted_basis,
						 it->rank.est.error_bytes, it->rank.est.summary);
		}
		calib_sig_release(&sig);
	}
	if (xl_call_seen(call, "predicted")) {
		a.predicted_bytes = (int64_t)o->predicted;
		a.predicted_kind = kind;
		a.predicted_basis = CALIB_BASIS_REPORTED;
		calib_attempt_add_figure(&a, true, kind, a.predicted_bytes, a.predicted_basis,
					 CALIB_UNSET, "calib record --predicted");
	}
	if (xl_call_seen(call, "observed")) {
		a.observed_bytes = (int64_t)o->observed;
		a.observed_kind = kind;
		calib_attempt_add_figure(&a, false, kind, a.observed_bytes, CALIB_BASIS_NONE, CALIB_UNSET,
					 "calib record --observed");
	}
	if (o->id) {
		a.id = xl_strdup(o->id);
	} else {
		char hex[65];
		char *seed = xl_asprintf("%.9f %d %s %d", xl_now(), (int)getpid(), xl_hostname(), rand());

		calib_sha256_hex(seed, strlen(seed), hex);
		free(seed);
		a.id = xl_asprintf("rec-%.16s", hex);
	}
	if ((rc = calib_record_attempt(st, &a))) {
		xl_error("%s", calib_errmsg(st));
		goto out;
	}
	if (ctx->json) {
		json_t *j = calib_attempt_to_json(&a, CALIB_JSON_HISTORY);

		print_json(j);
		json_decref(j);
	} else if (xl_verbosity >= 0) {
		printf("recorded %s: %s, signature %.12s\n", a.id, xl_outcome_name(a.outcome),
		       a.signature);
	}
out:
	calib_attempt_release(&a);
	xl_plan_release(&plan);
	calib_close(st);
	return rc;
}

/* ---- export / import ---------------------------------------------------------------------- */

static enum xl_exit cmd_export(struct xl_ctx *ctx, const struct xl_call *call)
{
	const char *file = call->argc && strcmp(call->argv[0], "-") != 0 ? call->argv[0] : NULL;
	struct calib_store *st;
	FILE *f = stdout;
	int rc;

	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	if (file && !(f = fopen(file, "w"))) {
		xl_error("'%s': cannot create: %s", file, strerror(errno));
		calib_close(st);
		return XL_EX_CANTCREAT;
	}
	rc = calib_export(st, f);
	if (rc) {
		if (f != stdout)
			fclose(f);
		return store_error(st, rc);
	}
	if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) {
		xl_error("'%s': cannot write: %s", file ? file : "standard output", strerror(errno));
		calib_close(st);
		return XL_EX_CANTCREAT;
	}
	calib_close(st);
	return XL_EX_OK;
}

static enum xl_exit cmd_import(struct xl_ctx *ctx, const struct xl_call *call)
{
	const char *file = call->argv[0];
	struct calib_import_result res;
	struct calib_store *st;
	char *data;
	size_t len;
	int rc;

	data = xl_read_file(strcmp(file, "-") == 0 ? "/dev/stdin" : file, &len, (size_t)1 << 30);
	if (!data) {
		xl_error("'%s': cannot read: %s", file, strerror(errno));
		return errno == ENOENT ? XL_EX_NOINPUT : XL_EX_DATAERR;
	}
	if (strlen(data) != len) {
		xl_error("'%s': holds NUL bytes; not JSON lines", file);
		free(data);
		return XL_EX_DATAERR;
	}
	if ((rc = xl_calib_open_store(ctx, 0, &st))) {
		free(data);
		return rc;
	}
	rc = calib_import(st, data, len, &res);
	free(data);
	if (rc == XL_EX_DATAERR) {
		for (size_t i = 0; i < res.nerrors; i++) {
			const struct calib_line_error *e = &res.errors[i];

			if (e->col)
				xl_error("'%s':%zu:%d: %s", file, e->line, e->col, e->msg);
			else
				xl_error("'%s':%zu: %s", file, e->line, e->msg);
		}
		if (res.bad > res.nerrors)
			xl_error("'%s': %zu bad lines in all", file, res.bad);
		xl_error("'%s': nothing imported", file);
	} else if (rc) {
		xl_error("%s", calib_errmsg(st));
	} else if (ctx->json) {
		printf("{\"attempts\": %zu, \"probes\": %zu}\n", res.attempts, res.probes);
	} else if (xl_verbosity >= 0) {
		printf("read %zu attempts and %zu probes from %s (already present ones left as they were)\n",
		       res.attempts, res.probes, file);
	}
	calib_import_result_release(&res);
	calib_close(st);
	return rc;
}

/* ---- forget ---------------------------------------------------------------------------------- */

static enum xl_exit cmd_forget(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	char hash[65];
	int64_t n = 0;
	int rc;

	if ((rc = xl_calib_open_store(ctx, 0, &st)))
		return rc;
	if ((rc = calib_resolve_signature(st, call->argv[0], hash)) ||
	    (rc = calib_forget(st, hash, &n)))
		return store_error(st, rc);
	if (ctx->json)
		printf("{\"signature\": \"%s\", \"attempts\": %lld}\n", hash, (long long)n);
	else if (xl_verbosity >= 0)
		printf("forgot signature %s and its %lld attempt%s\n", hash, (long long)n,
		       n == 1 ? "" : "s");
	calib_close(st);
	return XL_EX_OK;
}

/* ---- the command ------------------------------------------------------------------------------ */

/* ---- report ------------------------------------------------------------------------------- */

struct report_opts {
	const char *profile, *output, *chart;
	double since;
	int format;              /* 0 html, 1 svg */
};

static bool opt_format(const char *value, void *field)
{
	if (strcmp(value, "html") == 0)
		*(int *)field = 0;
	else if (strcmp(value, "svg") == 0)
		*(int *)field = 1;
	else
		return false;
	return true;
}

static const struct xl_opt report_options[] = {
	XL_OPTION_STRING(0, "profile", "P", struct report_opts, profile,
			 "only the launches of profile P"),
	XL_OPTION_CALLBACK(0, "since", "TIME|AGE", struct report_opts, since, double, opt_since,
			   "an ISO 8601 time or an age (30m, 24h, 7d, 2w)",
			   "only launches and probes since TIME (ISO 8601) or AGE ago (30m, 24h, 7d, 2w)"),
	XL_OPTION_STRING('o', "output", "FILE", struct report_opts, output,
			 "write to FILE (atomically: all of it or nothing); default standard output"),
	XL_OPTION_CALLBACK(0, "format", "FMT", struct report_opts, format, int, opt_format,
			   "html, svg", "html (the page, default) or svg (one chart, --chart)"),
	XL_OPTION_STRING(0, "chart", "NAME", struct report_opts, chart,
			 "with --format svg: the chart NAME (an unknown name lists them)"),
	XL_OPTION_END,
};

/* Writes len bytes to path through a temporary file in its directory and
 * rename(): the file is all of it or what it was.  Returns 0, or -1 with
 * errno set (nothing left behind). */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char *tmp = xl_asprintf("%s.XXXXXX", path);
	mode_t um = umask(0);
	int fd, e;

	umask(um);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		free(tmp);
		errno = e;
		return -1;
	}
	if (fchmod(fd, 0666 & ~um) < 0 || xl_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}

/* The report's candidates: each profile planned once, as `run` would plan
 * it now, without its messages (a profile recorded on another machine is
 * no error of the report). */
struct report_plans {
	const struct xl_ctx *ctx;
	struct calib_store *st;
	struct report_plan {
		char *profile;
		struct xl_plan plan;
		struct xl_report_cand *cands;
		int rc;
	} *v;
	size_t n;
};

static int report_cands(void *arg, const char *profile, const struct xl_report_cand **out,
			size_t *n)
{
	struct report_plans *rp = arg;
	struct report_plan *e = NULL;
	int saved = xl_verbosity;

	for (size_t i = 0; i < rp->n && !e; i++)
		if (strcmp(rp->v[i].profile, profile) == 0)
			e = &rp->v[i];
	if (!e) {
		rp->v = xl_realloc(rp->v, (rp->n + 1) * sizeof(*rp->v));
		e = &rp->v[rp->n++];
		memset(e, 0, sizeof(*e));
		e->profile = xl_strdup(profile);
		xl_verbosity = -2;
		e->rc = xl_plan_make(rp->ctx, rp->st, profile, NULL, 0, NULL, 0, &e->plan);
		xl_verbosity = saved;
		if (e->rc == 0 && e->plan.no_job)
			e->rc = XL_EX_NOINPUT;
		if (e->rc == 0) {
			e->cands = xl_calloc(e->plan.n, sizeof(*e->cands));
			for (size_t i = 0; i < e->plan.n; i++) {
				e->cands[i].name = e->plan.items[i].candidate;
				e->cands[i].parts = e->plan.items[i].parts;
				e->cands[i].rank = &e->plan.items[i].rank;
			}
		}
	}
	*out = e->cands;
	*n = e->rc ? 0 : e->plan.n;
	return e->rc;
}

static void report_plans_release(struct report_plans *rp)
{
	for (size_t i = 0; i < rp->n; i++) {
		xl_plan_release(&rp->v[i].plan);
		free(rp->v[i].cands);
		free(rp->v[i].profile);
	}
	free(rp->v);
}

static enum xl_exit cmd_report(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct report_opts *o = call->opts;
	struct xl_report_opts ro = { .profile = o->profile, .since = NAN, .svg = o->format == 1,
				     .chart = o->chart };
	struct xl_buf out = XL_BUF_INIT;
	struct report_plans rp = { 0 };
	struct calib_store *st;
	int rc;

	if (o->chart && o->format != 1)
		return xl_usage_error(call, "--chart needs --format svg");
	if (xl_call_seen(call, "since"))
		ro.since = o->since;
	if ((rc = xl_calib_open_store(ctx, CALIB_OPEN_READONLY, &st)))
		return rc;
	rp.ctx = ctx;
	rp.st = st;
	ro.cands = report_cands;
	ro.cands_arg = &rp;
	rc = xl_report(ctx, st, &ro, &out);
	report_plans_release(&rp);
	calib_close(st);
	if (rc) {
		xl_buf_release(&out);
		return rc;
	}
	if (o->output && strcmp(o->output, "-") != 0) {
		if (write_atomic(o->output, out.buf, out.len) < 0) {
			xl_error("'%s': cannot write: %s", o->output, strerror(errno));
			xl_buf_release(&out);
			return XL_EX_CANTCREAT;
		}
	} else if (xl_write_all(STDOUT_FILENO, out.buf, out.len) < 0) {
		xl_error("standard output: cannot write: %s", strerror(errno));
		xl_buf_release(&out);
		return XL_EX_CANTCREAT;
	}
	xl_buf_release(&out);
	return XL_EX_OK;
}

static const struct xl_cmd calib_history_cmd = {
	.name = "history",
	.summary = "recorded launch attempts, newest first",
	.json = "an array of {id, time, profile, candidate, signature, host, rank,\n"
		"outcome, exit_status, predicted_bytes, observed_bytes, wall_s,\n"
		"compile_count}",
	.options = history_options,
	XL_CMD_OPTS(struct history_opts, &history_defaults),
	.run = cmd_history,
};

static const struct xl_cmd calib_stats_cmd = {
	.name = "stats",
	.summary = "per signature: attempts, ok, oom, median observed/predicted, last seen",
	.json = "an array of {signature, profile, candidate, attempts, ok, oom,\n"
		"ratio_median, kind, last_seen}",
	.options = stats_options,
	XL_CMD_OPTS(struct stats_opts, NULL),
	.run = cmd_stats,
};

static const struct xl_cmd calib_order_cmd = {
	.name = "order",
	.summary = "the order in which a profile's candidates are tried, with reasons",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.json = "{profile, command, job_from, order: [{name, signature, place, reason,\n"
		"predicted_bytes, kind, basis, error_bytes, limit_bytes, limit_source,\n"
		"feasible, near_limit, fit, curve, curve_why, summary,\n"
		"device_memory_bytes}]}",
	.help = "In the profile's order, first every candidate that is known-good (its latest\n"
		"attempt that says anything of memory was ok or compile-storm) or predicted\n"
		"to fit (the top of its band within the limit); then, still in the profile's\n"
		"order, unseen ones without a verdict and near-limit ones (the band holds the\n"
		"limit); suspect (an oom with this shape on an older stack);\n"
		"predicted-infeasible (the bottom of the band above the limit); known-bad\n"
		"(that latest attempt was an oom).  The job is COMMAND, or without one the\n"
		"command of the profile's latest recorded run.\n",
	.run = cmd_order,
};

static const struct xl_opt predict_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct predict_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "only this candidate" },
	XL_OPTION_END,
};

static const struct xl_cmd calib_predict_cmd = {
	.name = "predict",
	.summary = "predicted memory of a profile's candidates, how, and whether it fits",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.json = "with -c one object, otherwise an array of objects:\n"
		"{profile, candidate, signature, predicted_bytes, kind, basis,\n"
		"error_bytes, limit_bytes, limit_source, feasible, near_limit, summary,\n"
		"reason, points, scale_name, scale, intercept_bytes, slope_bytes, fit,\n"
		"curve: {shape, fit, why, band, a, b, c, exponent, loo_error, reach,\n"
		"safe_side, sizes, points, tried: [{shape, fit, judged, loo_error,\n"
		"predicted_bytes, contender}]}, compiler: {predicted_bytes, error_bytes,\n"
		"exponent, "
		"exponent_lower_bound, sizes, shape, fit}, analytic, model_state_bytes,\n"
		"activation_bytes, logits_bytes, overhead_bytes, analytic_bytes,\n"
		"correction, samples, device_memory_bytes, calibrated, note, differs}",
	.help = "Per candidate: the kind that decides whether it fits (the kind of its\n"
		"limit), the prediction and its basis (compiler, learned, analytic, none),\n"
		"its band, the limit and the verdict: fits when the top of the band is\n"
		"within the limit, not when its bottom is above it, near the limit in\n"
		"between.  A learned prediction says which curve (affine, power, quadratic,\n"
		"square, xla-power) and why: of the shapes judged by leaving a size out, the\n"
		"one that predicted best, or the mean of those the launches cannot tell apart\n"
		"ranked by XLA's growth and the coordinate; a shape that fits the sizes\n"
		"exactly is never chosen over a judged one.  Its band is (1% + that\n"
		"out-of-sample error) x (1 + the reach beyond the sizes seen).  A candidate\n"
		"never launched says how it differs from the family's latest launch.  On\n"
		"XLA jobs it also says what XLA's buffers will be and how they grow.  The job is\n"
		"COMMAND, or without one the command of the profile's latest recorded run.\n",
	.options = predict_options,
	XL_CMD_OPTS(struct predict_opts, NULL),
	.run = cmd_predict,
};

static const struct xl_cmd calib_record_cmd = {
	.name = "record",
	.summary = "record an outcome observed elsewhere (e.g. by a cluster scheduler)",
	.operands = "[PROFILE]",
	.rest = "COMMAND [ARG...]",
	.synopsis = "(PROFILE [-c CAND] | --signature PREFIX) --outcome O [--id ID]\n"
		    "[--exit-status N] [--predicted BYTES] [--observed BYTES] [--kind KIND]\n"
		    "[--wall DUR] [--compiles N] [--host H] [--rank N] [--time TIME] [--json]\n"
		    "[-- COMMAND [ARG...]]",
	.json = "the recorded attempt",
	.help = "The signature comes from the profile's candidate running COMMAND (without\n"
		"one, the command of the profile's latest recorded run; hardware from the\n"
		"latest probe when the profile gives none) or from a recorded signature.\n"
		"A figure measured elsewhere joins the same model when its --kind is\n"
		"right.  Recording an id twice is a no-op.\n",
	.options = record_options,
	XL_CMD_OPTS(struct record_opts, &record_defaults),
	.run = cmd_record,
};

static const struct xl_cmd calib_export_cmd = {
	.name = "export",
	.summary = "write the store as JSON lines (to FILE or standard output)",
	.operands = "[FILE]",
	.help = "One line per probe ({\"type\": \"probe\", uid, host, time, doc}), then one per\n"
		"attempt ({\"type\": \"attempt\", the history fields, host_peak_rss_bytes,\n"
		"signature_json, shape_hash, stack_hash, hardware_kind}), oldest first.\n",
	.run = cmd_export,
};

static const struct xl_cmd calib_import_cmd = {
	.name = "import",
	.summary = "merge JSON lines written by 'calib export' (FILE or - for standard input)",
	.operands = "FILE",
	.json = "{attempts, probes}",
	.help = "All lines are imported in one transaction, or none when a line is bad\n"
		"(exit 65, each bad line named as FILE:LINE).  Records already present (by\n"
		"attempt id or probe uid) are left as they are, so importing twice, or\n"
		"merging stores from many hosts, is idempotent.\n",
	.run = cmd_import,
};

static const struct xl_cmd calib_forget_cmd = {
	.name = "forget",
	.summary = "delete a signature and all its attempts (any unique prefix)",
	.operands = "SIGNATURE",
	.json = "{signature, attempts}",
	.run = cmd_forget,
};

static const struct xl_cmd calib_report_cmd = {
	.name = "report",
	.summary = "draw what the store knows: one self-contained HTML page of charts",
	.synopsis = "[--profile P] [--since TIME|AGE] [-o FILE] [--format html|svg --chart NAME]",
	.help = "The page (inline SVG, no script, nothing fetched; light and dark colours)\n"
		"shows, per job family, the observed peak against the scale with the\n"
		"learned curve and its band, the limit and every candidate by outcome (ok,\n"
		"oom, predicted infeasible); predicted against observed memory per kind with\n"
		"the diagonal; per profile the launches over time (outcome, wall time,\n"
		"compilations, persistent-cache hits) with changes of stack or hardware; and\n"
		"the latest probe of each host.  The store groups and bins what it holds, so\n"
		"a store of millions of attempts draws in seconds.  --format svg --chart NAME\n"
		"writes one chart; an unknown NAME lists the charts of this store.\n",
	.options = report_options,
	XL_CMD_OPTS(struct report_opts, NULL),
	.run = cmd_report,
};

extern const struct xl_cmd xl_calib_show_cmd;    /* cmd-calib-show.c */

static const struct xl_cmd *const calib_subs[] = {
	&calib_history_cmd, &xl_calib_show_cmd, &calib_stats_cmd, &calib_order_cmd, &calib_predict_cmd,
	&calib_record_cmd, &calib_export_cmd, &calib_import_cmd, &calib_forget_cmd,
	&calib_report_cmd, NULL,
};

const struct xl_cmd xl_cmd_calib = {
	.name = "calib",
	.summary = "calibration store: launch history, memory predictions, retry order",
	.epilog = "Exit status: 0 ok, 64 usage (also an ambiguous signature or run id prefix), 65 bad\n"
		  "import data, 66 no such signature or file, 73 store unusable.\n",
	.subs = calib_subs,
};
