/* cmd-calib.c - `xlaunch calib`: history, stats, order, predict, record,
 * export, import, forget. */
#include "calib/backend.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static calib_profile_loader profile_loader;

void calib_set_profile_loader(calib_profile_loader fn)
{
	profile_loader = fn;
}

/* ---- shared helpers ---------------------------------------------------------------- */

static int open_store(const struct xl_ctx *ctx, struct calib_store **st)
{
	char *err = NULL;
	int rc = calib_open(ctx->store_path, 0, st, &err);

	if (rc) {
		xl_error("%s", err ? err : "store: cannot open");
		free(err);
	}
	return rc;
}

static int store_error(struct calib_store *st, int rc)
{
	xl_error("%s", calib_errmsg(st));
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

static const char *bytes_cell(sqlite3_stmt *s, int col, char *buf, size_t n)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return "-";
	return xl_fmt_bytes((uint64_t)sqlite3_column_int64(s, col), buf, n);
}

static json_t *col_json_int(sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return json_null();
	return json_integer(sqlite3_column_int64(s, col));
}

static json_t *col_json_real(sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return json_null();
	return json_real(sqlite3_column_double(s, col));
}

static json_t *col_json_str(sqlite3_stmt *s, int col)
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	return v ? json_string(v) : json_null();
}

/* --since: an ISO 8601 time, or a duration ago (30m, 24h, 7d, 2w). */
static bool parse_since(const char *s, double *out)
{
	size_t l = strlen(s);
	double d;

	if (calib_parse_time(s, out))
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
	const char *profile, *signature, *host;
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

#define OUTCOMES "ok, oom, compile-storm, crash, error, timeout, interrupted"

static const struct xl_opt history_options[] = {
	XL_OPTION_STRING(0, "profile", "P", struct history_opts, profile,
			 "only attempts of profile P"),
	XL_OPTION_STRING(0, "signature", "PREFIX", struct history_opts, signature,
			 "only attempts whose signature starts with PREFIX (unique)"),
	XL_OPTION_CALLBACK(0, "outcome", "O", struct history_opts, outcome, int, opt_outcome,
			   "an outcome (" OUTCOMES ")", OUTCOMES),
	XL_OPTION_STRING(0, "host", "H", struct history_opts, host, "only attempts on host H"),
	XL_OPTION_CALLBACK(0, "since", "TIME|AGE", struct history_opts, since, double, opt_since,
			   "an ISO 8601 time or an age (30m, 24h, 7d, 2w)",
			   "ISO 8601 time, or an age such as 30m, 24h, 7d, 2w"),
	XL_OPTION_COUNT(0, "limit", "N", struct history_opts, limit, 0, 9.2e18,
			"at most N attempts (default 50; 0: all)"),
	XL_OPTION_END,
};

static const struct history_opts history_defaults = { .outcome = -1, .limit = 50 };

static enum xl_exit cmd_history(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct history_opts *o = call->opts;
	const char *profile = o->profile, *sigp = o->signature, *host = o->host;
	const char *outcome = o->outcome >= 0 ? xl_outcome_name(o->outcome) : NULL;
	double since = o->since;
	bool has_since = xl_call_seen(call, "since");
	long long limit = o->limit;
	struct calib_store *st;
	struct xl_buf q = XL_BUF_INIT;
	char hash[65];
	sqlite3_stmt *s;
	json_t *arr = NULL;
	struct table tab = { 10, XL_STRV_INIT };
	int rc, n = 0;

	if ((rc = open_store(ctx, &st)))
		return rc;
	if (sigp && (rc = calib_resolve_prefix(st, sigp, hash))) {
		store_error(st, rc);
		calib_close(st);
		return rc;
	}
	xl_buf_adds(&q, "SELECT id, time, profile, candidate, signature, host, rank, outcome,"
			" exit_status, predicted_bytes, observed_bytes, wall_s, compile_count"
			" FROM attempts WHERE 1");
	if (profile)
		xl_buf_adds(&q, " AND profile = ?1");
	if (sigp)
		xl_buf_adds(&q, " AND signature = ?2");
	if (outcome)
		xl_buf_adds(&q, " AND outcome = ?3");
	if (host)
		xl_buf_adds(&q, " AND host = ?4");
	if (has_since)
		xl_buf_adds(&q, " AND time >= ?5");
	xl_buf_adds(&q, " ORDER BY time DESC, rowid DESC");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	s = calib_prepare(st, xl_buf_str(&q));
	xl_buf_release(&q);
	if (!s) {
		rc = store_error(st, XL_EX_CANTCREAT);
		calib_close(st);
		return rc;
	}
	sqlite3_bind_text(s, 1, profile, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, sigp ? hash : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, outcome, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, host, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 5, since);
	if (ctx->json)
		arr = json_array();
	else
		table_row(&tab, "TIME", "ID", "PROFILE", "CANDIDATE", "SIGNATURE", "HOST", "OUTCOME",
			  "PREDICTED", "OBSERVED", "WALL");
	while ((rc = calib_step(s)) == SQLITE_ROW) {
		char tb[40];

		calib_fmt_time(sqlite3_column_double(s, 1), tb, sizeof(tb));
		n++;
		if (arr) {
			json_array_append_new(arr, json_pack(
				"{s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
				"id", col_json_str(s, 0), "time", tb, "profile", col_json_str(s, 2),
				"candidate", col_json_str(s, 3), "signature", col_json_str(s, 4),
				"host", col_json_str(s, 5), "rank", col_json_int(s, 6),
				"outcome", col_json_str(s, 7), "exit_status", col_json_int(s, 8),
				"predicted_bytes", col_json_int(s, 9), "observed_bytes", col_json_int(s, 10),
				"wall_s", col_json_real(s, 11), "compile_count", col_json_int(s, 12)));
		} else {
			char sig[13], pb[32], ob[32], wall[32];

			snprintf(sig, sizeof(sig), "%s", (const char *)sqlite3_column_text(s, 4));
			if (sqlite3_column_type(s, 11) == SQLITE_NULL)
				snprintf(wall, sizeof(wall), "-");
			else
				snprintf(wall, sizeof(wall), "%.1fs", sqlite3_column_double(s, 11));
			table_row(&tab, tb, (const char *)sqlite3_column_text(s, 0),
				  (const char *)sqlite3_column_text(s, 2),
				  (const char *)sqlite3_column_text(s, 3), sig,
				  (const char *)sqlite3_column_text(s, 5),
				  (const char *)sqlite3_column_text(s, 7),
				  bytes_cell(s, 9, pb, sizeof(pb)), bytes_cell(s, 10, ob, sizeof(ob)), wall);
		}
	}
	if (rc != SQLITE_DONE) {
		calib_sqlfail(st, "cannot read attempts");
		sqlite3_finalize(s);
		json_decref(arr);
		xl_strv_release(&tab.cells);
		rc = store_error(st, XL_EX_CANTCREAT);
		calib_close(st);
		return rc;
	}
	sqlite3_finalize(s);
	if (arr) {
		print_json(arr);
		json_decref(arr);
	} else if (n) {
		table_print(&tab);
	} else {
		xl_strv_release(&tab.cells);
		if (xl_verbosity >= 0)
			fprintf(stderr, "no attempts recorded%s\n",
				profile || sigp || outcome || host || has_since ? " that match" : "");
	}
	calib_close(st);
	return 0;
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

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static enum xl_exit cmd_stats(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct stats_opts *o = call->opts;
	const char *profile = o->profile;
	long long limit = o->limit;
	struct calib_store *st;
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s, *r;
	json_t *arr = NULL;
	struct table tab = { 8, XL_STRV_INIT };
	int rc, n = 0;

	if ((rc = open_store(ctx, &st)))
		return rc;
	xl_buf_adds(&q, "SELECT a.signature, count(*), sum(a.outcome = 'ok'), sum(a.outcome = 'oom'),"
			" max(a.time), (SELECT profile FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY time DESC, rowid DESC LIMIT 1), (SELECT candidate FROM attempts b"
			" WHERE b.signature = a.signature ORDER BY time DESC, rowid DESC LIMIT 1)"
			" FROM attempts a");
	if (profile)
		xl_buf_adds(&q, " WHERE a.signature IN (SELECT signature FROM attempts WHERE profile = ?1)");
	xl_buf_adds(&q, " GROUP BY a.signature ORDER BY max(a.time) DESC");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	s = calib_prepare(st, xl_buf_str(&q));
	xl_buf_release(&q);
	r = calib_prepare(st, "SELECT observed_bytes, predicted_bytes FROM attempts WHERE signature = ?1"
			      " AND outcome = 'ok' AND observed_bytes > 0 AND predicted_bytes > 0");
	if (!s || !r) {
		sqlite3_finalize(s);
		sqlite3_finalize(r);
		rc = store_error(st, XL_EX_CANTCREAT);
		calib_close(st);
		return rc;
	}
	sqlite3_bind_text(s, 1, profile, -1, SQLITE_STATIC);
	if (ctx->json)
		arr = json_array();
	else
		table_row(&tab, "SIGNATURE", "PROFILE", "CANDIDATE", "ATTEMPTS", "OK", "OOM",
			  "OBS/PRED", "LAST SEEN");
	while ((rc = calib_step(s)) == SQLITE_ROW) {
		double *ratios = NULL, med = NAN;
		size_t nr = 0, cap = 0;
		char tb[40];

		sqlite3_bind_text(r, 1, (const char *)sqlite3_column_text(s, 0), -1, SQLITE_TRANSIENT);
		while (calib_step(r) == SQLITE_ROW) {
			if (nr == cap) {
				cap = cap ? cap * 2 : 16;
				ratios = xl_realloc(ratios, cap * sizeof(*ratios));
			}
			ratios[nr++] = (double)sqlite3_column_int64(r, 0) / (double)sqlite3_column_int64(r, 1);
		}
		sqlite3_reset(r);
		if (nr) {
			qsort(ratios, nr, sizeof(*ratios), cmp_dbl);
			med = nr % 2 ? ratios[nr / 2] : (ratios[nr / 2 - 1] + ratios[nr / 2]) / 2;
		}
		free(ratios);
		calib_fmt_time(sqlite3_column_double(s, 4), tb, sizeof(tb));
		n++;
		if (arr) {
			json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:s}",
				"signature", col_json_str(s, 0), "profile", col_json_str(s, 5),
				"candidate", col_json_str(s, 6),
				"attempts", (json_int_t)sqlite3_column_int64(s, 1),
				"ok", (json_int_t)sqlite3_column_int64(s, 2),
				"oom", (json_int_t)sqlite3_column_int64(s, 3),
				"ratio_median", nr ? json_real(med) : json_null(), "last_seen", tb));
		} else {
			char sig[13], a[24], ok[24], oom[24], ratio[24];

			snprintf(sig, sizeof(sig), "%s", (const char *)sqlite3_column_text(s, 0));
			snprintf(a, sizeof(a), "%lld", (long long)sqlite3_column_int64(s, 1));
			snprintf(ok, sizeof(ok), "%lld", (long long)sqlite3_column_int64(s, 2));
			snprintf(oom, sizeof(oom), "%lld", (long long)sqlite3_column_int64(s, 3));
			if (nr)
				snprintf(ratio, sizeof(ratio), "%.3f", med);
			else
				snprintf(ratio, sizeof(ratio), "-");
			table_row(&tab, sig, (const char *)sqlite3_column_text(s, 5),
				  (const char *)sqlite3_column_text(s, 6), a, ok, oom, ratio, tb);
		}
	}
	sqlite3_finalize(s);
	sqlite3_finalize(r);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		xl_strv_release(&tab.cells);
		calib_sqlfail(st, "cannot read attempts");
		rc = store_error(st, XL_EX_CANTCREAT);
		calib_close(st);
		return rc;
	}
	if (arr) {
		print_json(arr);
		json_decref(arr);
	} else if (n) {
		table_print(&tab);
	} else {
		xl_strv_release(&tab.cells);
		if (xl_verbosity >= 0)
			fprintf(stderr, "no attempts recorded\n");
	}
	calib_close(st);
	return 0;
}

/* ---- profile-taking commands ------------------------------------------------------------ */

/* Resolves a profile through the launcher, fills hardware from the latest
 * probe where the profile gives none.  Returns 0 or an exit code. */
static int load_profile(struct xl_ctx *ctx, struct calib_store *st, const char *profile,
			const char *cand, json_t **doc)
{
	json_t *cands, *c;
	size_t i;
	int rc;

	*doc = NULL;
	if (!profile_loader) {
		xl_error("profile '%s': profile resolution is not available in this build", profile);
		return XL_EX_SOFTWARE;
	}
	if ((rc = profile_loader(ctx, profile, cand, doc)))
		return rc;
	cands = json_object_get(*doc, "candidates");
	if (!json_is_array(cands)) {
		xl_error("profile '%s': resolution gave no candidates", profile);
		json_decref(*doc);
		*doc = NULL;
		return XL_EX_SOFTWARE;
	}
	json_array_foreach(cands, i, c) {
		json_t *parts = json_object_get(c, "parts");

		if (!json_is_object(parts)) {
			parts = json_object();
			json_object_set_new(c, "parts", parts);
		}
		calib_parts_fill_hardware(st, parts);
	}
	return 0;
}

static enum xl_exit cmd_order(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	json_t *doc, *order;
	int rc;

	if ((rc = open_store(ctx, &st)))
		return rc;
	if ((rc = load_profile(ctx, st, call->argv[0], NULL, &doc))) {
		calib_close(st);
		return rc;
	}
	rc = calib_order(st, json_object_get(doc, "candidates"), &order);
	if (rc) {
		store_error(st, rc);
		json_decref(doc);
		calib_close(st);
		return rc;
	}
	if (ctx->json) {
		json_t *out = json_pack("{s:O, s:O}", "profile", json_object_get(doc, "profile"),
					"order", order);

		print_json(out);
		json_decref(out);
	} else {
		struct table tab = { 6, XL_STRV_INIT };
		size_t i;
		json_t *e;

		table_row(&tab, "#", "CANDIDATE", "PLACE", "PREDICTED", "SIGNATURE", "REASON");
		json_array_foreach(order, i, e) {
			char num[24], pb[32], sig[13];
			const json_t *p = json_object_get(e, "predicted_bytes");

			snprintf(num, sizeof(num), "%zu", i + 1);
			snprintf(sig, sizeof(sig), "%s", json_string_value(json_object_get(e, "signature")));
			table_row(&tab, num, json_string_value(json_object_get(e, "name")),
				  json_string_value(json_object_get(e, "place")),
				  json_is_integer(p) ? xl_fmt_bytes((uint64_t)json_integer_value(p), pb, sizeof(pb)) : "-",
				  sig, json_string_value(json_object_get(e, "reason")));
		}
		table_print(&tab);
	}
	json_decref(order);
	json_decref(doc);
	calib_close(st);
	return 0;
}

static void print_prediction(const char *cand, const char *sig, const struct calib_prediction *p)
{
	char b[32];

	printf("candidate %s (signature %.12s)\n", cand, sig);
	if (!p->known) {
		printf("  no prediction: %s\n", p->note);
		return;
	}
	printf("  %-18s %s\n", "model states", xl_fmt_bytes(p->model_state_bytes, b, sizeof(b)));
	printf("  %-18s %s\n", "activations", xl_fmt_bytes(p->activation_bytes, b, sizeof(b)));
	printf("  %-18s %s\n", "logits", xl_fmt_bytes(p->logits_bytes, b, sizeof(b)));
	printf("  %-18s %s\n", "overhead", xl_fmt_bytes(p->overhead_bytes, b, sizeof(b)));
	printf("  %-18s %s\n", "analytic", xl_fmt_bytes(p->analytic_bytes, b, sizeof(b)));
	printf("  %-18s %.3f%s\n", "correction", p->correction,
	       p->calibrated ? "" : " (uncalibrated)");
	printf("  %-18s %s\n", "predicted", xl_fmt_bytes(p->predicted_bytes, b, sizeof(b)));
	if (p->device_memory_bytes)
		printf("  %-18s %s\n", "device memory", xl_fmt_bytes(p->device_memory_bytes, b, sizeof(b)));
	printf("  %-18s %s\n", "note", p->note);
}

struct predict_opts {
	const char *cand;
};

static enum xl_exit cmd_predict(struct xl_ctx *ctx, const struct xl_call *call)
{
	const char *cand = ((const struct predict_opts *)call->opts)->cand;
	struct calib_store *st;
	json_t *doc, *arr, *e;
	size_t i;
	int rc = 0;

	if ((rc = open_store(ctx, &st)))
		return rc;
	if ((rc = load_profile(ctx, st, call->argv[0], cand, &doc))) {
		calib_close(st);
		return rc;
	}
	arr = json_array();
	json_array_foreach(json_object_get(doc, "candidates"), i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		struct calib_prediction p;
		struct calib_sig sig;
		json_t *pj;

		calib_signature(json_object_get(e, "parts"), &sig);
		if (calib_predict(st, sig.parts, NULL, &p))
			xl_warn("%s", calib_errmsg(st));
		pj = calib_prediction_json(&p);
		json_object_set_new(pj, "profile", json_copy(json_object_get(doc, "profile")));
		json_object_set_new(pj, "candidate", json_string(name ? name : ""));
		json_object_set_new(pj, "signature", json_string(sig.hash));
		json_array_append_new(arr, pj);
		if (!ctx->json) {
			if (i)
				putchar('\n');
			print_prediction(name ? name : "", sig.hash, &p);
		}
		calib_sig_release(&sig);
	}
	if (ctx->json)
		print_json(cand && json_array_size(arr) == 1 ? json_array_get(arr, 0) : arr);
	json_decref(arr);
	json_decref(doc);
	calib_close(st);
	return 0;
}

/* ---- record ---------------------------------------------------------------------------- */

struct record_opts {
	const char *cand, *signature, *id, *host;
	int outcome;
	long long exit_status, compiles, rank;
	uint64_t predicted, observed;
	double wall_s, time;
};

static bool opt_time(const char *value, void *field)
{
	return calib_parse_time(value, field);
}

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
	  .min = 0, .max = 9.2e18, .help = "observed peak device memory (units allowed: 14GiB)" },
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

static const struct record_opts record_defaults = { .outcome = -1 };

static enum xl_exit cmd_record(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct record_opts *o = call->opts;
	const char *cand = o->cand, *sigp = o->signature, *id = o->id, *host = o->host;
	const char *outcome = xl_outcome_name(o->outcome);
	json_t *a = json_object(), *doc = NULL;
	struct calib_store *st = NULL;
	char *genid = NULL;
	int rc = 0;

	if (xl_call_seen(call, "exit-status"))
		json_object_set_new(a, "exit_status", json_integer(o->exit_status));
	if (xl_call_seen(call, "compiles"))
		json_object_set_new(a, "compile_count", json_integer(o->compiles));
	if (xl_call_seen(call, "rank"))
		json_object_set_new(a, "rank", json_integer(o->rank));
	if (xl_call_seen(call, "predicted"))
		json_object_set_new(a, "predicted_bytes", json_integer((json_int_t)o->predicted));
	if (xl_call_seen(call, "observed"))
		json_object_set_new(a, "observed_bytes", json_integer((json_int_t)o->observed));
	if (xl_call_seen(call, "wall"))
		json_object_set_new(a, "wall_s", json_real(o->wall_s));
	if (xl_call_seen(call, "time"))
		json_object_set_new(a, "time", json_real(o->time));
	if ((call->argc == 1) == (sigp != NULL)) {
		json_decref(a);
		return xl_usage_error(call, "give either PROFILE or --signature");
	}
	if ((rc = open_store(ctx, &st))) {
		json_decref(a);
		return rc;
	}
	if (sigp) {
		char hash[65];

		if (cand) {
			rc = xl_usage_error(call, "-c goes with a PROFILE, not --signature");
			goto out;
		}
		if ((rc = calib_resolve_prefix(st, sigp, hash))) {
			store_error(st, rc);
			goto out;
		}
		json_object_set_new(a, "signature", json_string(hash));
	} else {
		json_t *cands, *one;
		struct calib_sig sig;

		if ((rc = load_profile(ctx, st, call->argv[0], cand, &doc)))
			goto out;
		cands = json_object_get(doc, "candidates");
		if (json_array_size(cands) != 1) {
			xl_error("profile '%s': has %zu candidates; name one with -c", call->argv[0],
				 json_array_size(cands));
			rc = XL_EX_USAGE;
			goto out;
		}
		one = json_array_get(cands, 0);
		calib_signature(json_object_get(one, "parts"), &sig);
		json_object_set_new(a, "signature", json_string(sig.hash));
		json_object_set(a, "signature_json", sig.parts);
		json_object_set(a, "profile", json_object_get(doc, "profile"));
		json_object_set(a, "candidate", json_object_get(one, "name"));
		if (!json_object_get(a, "predicted_bytes")) {
			struct calib_prediction p;

			if (calib_predict(st, sig.parts, NULL, &p) == 0 && p.known)
				json_object_set_new(a, "predicted_bytes", json_integer((json_int_t)p.predicted_bytes));
		}
		calib_sig_release(&sig);
	}
	if (!id) {
		char hex[65];
		char *seed = xl_asprintf("%.9f %d %s %d", xl_now(), (int)getpid(), xl_hostname(), rand());

		calib_sha256_hex(seed, strlen(seed), hex);
		free(seed);
		genid = xl_asprintf("rec-%.16s", hex);
		id = genid;
	}
	json_object_set_new(a, "id", json_string(id));
	json_object_set_new(a, "outcome", json_string(outcome));
	json_object_set_new(a, "host", json_string(host ? host : xl_hostname()));
	if ((rc = calib_record_attempt(st, a))) {
		store_error(st, rc);
		goto out;
	}
	if (ctx->json) {
		json_object_del(a, "signature_json");
		print_json(a);
	} else if (xl_verbosity >= 0) {
		printf("recorded %s: %s, signature %.12s\n", id, outcome,
		       json_string_value(json_object_get(a, "signature")));
	}
out:
	free(genid);
	json_decref(a);
	json_decref(doc);
	calib_close(st);
	return rc;
}

/* ---- export / import ---------------------------------------------------------------------- */

static enum xl_exit cmd_export(struct xl_ctx *ctx, const struct xl_call *call)
{
	const char *file = call->argc ? call->argv[0] : NULL;
	struct calib_store *st;
	sqlite3_stmt *s = NULL;
	FILE *f = stdout;
	int rc;

	if ((rc = open_store(ctx, &st)))
		return rc;
	if (file && strcmp(file, "-") != 0) {
		f = fopen(file, "w");
		if (!f) {
			xl_error("'%s': cannot create: %s", file, strerror(errno));
			calib_close(st);
			return XL_EX_CANTCREAT;
		}
	}
	/* one read transaction, so the export is one consistent snapshot */
	sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
	s = calib_prepare(st, "SELECT uid, host, time, doc FROM probes ORDER BY time, uid");
	while (s && (rc = calib_step(s)) == SQLITE_ROW) {
		char tb[40];
		json_t *doc = json_loads((const char *)sqlite3_column_text(s, 3), 0, NULL);
		json_t *line = json_pack("{s:s, s:o, s:o, s:s, s:o}", "type", "probe",
					 "uid", col_json_str(s, 0), "host", col_json_str(s, 1),
					 "time", calib_fmt_time(sqlite3_column_double(s, 2), tb, sizeof(tb)),
					 "doc", doc ? doc : json_null());
		char *text = json_dumps(line, JSON_COMPACT);

		fprintf(f, "%s\n", text);
		free(text);
		json_decref(line);
	}
	if (!s || rc != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	s = calib_prepare(st, "SELECT a.id, a.time, a.profile, a.candidate, a.signature, a.host,"
			      " a.rank, a.outcome, a.exit_status, a.predicted_bytes, a.observed_bytes,"
			      " a.wall_s, a.compile_count, a.host_peak_rss_bytes, s.json, s.shape_hash,"
			      " s.stack_hash, s.hardware_kind"
			      " FROM attempts a JOIN signatures s ON s.hash = a.signature"
			      " ORDER BY a.time, a.id");
	while (s && (rc = calib_step(s)) == SQLITE_ROW) {
		char tb[40];
		const char *sj = (const char *)sqlite3_column_text(s, 14);
		json_t *sjo = sj ? json_loads(sj, 0, NULL) : NULL;
		json_t *line = json_pack(
			"{s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
			" s:o, s:o, s:o, s:o}",
			"type", "attempt", "id", col_json_str(s, 0),
			"time", calib_fmt_time(sqlite3_column_double(s, 1), tb, sizeof(tb)),
			"profile", col_json_str(s, 2), "candidate", col_json_str(s, 3),
			"signature", col_json_str(s, 4), "host", col_json_str(s, 5),
			"rank", col_json_int(s, 6), "outcome", col_json_str(s, 7),
			"exit_status", col_json_int(s, 8), "predicted_bytes", col_json_int(s, 9),
			"observed_bytes", col_json_int(s, 10), "wall_s", col_json_real(s, 11),
			"compile_count", col_json_int(s, 12), "host_peak_rss_bytes", col_json_int(s, 13),
			"signature_json", sjo ? sjo : json_null(), "shape_hash", col_json_str(s, 15),
			"stack_hash", col_json_str(s, 16), "hardware_kind", col_json_str(s, 17));
		char *text = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(17));

		fprintf(f, "%s\n", text);
		free(text);
		json_decref(line);
	}
	if (!s || rc != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(s);
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) {
		xl_error("'%s': cannot write: %s", f != stdout ? file : "standard output",
			 strerror(errno));
		calib_close(st);
		return XL_EX_CANTCREAT;
	}
	calib_close(st);
	return 0;
fail:
	if (s)
		calib_sqlfail(st, "cannot read the store");
	sqlite3_finalize(s);
	if (f != stdout)
		fclose(f);
	rc = store_error(st, XL_EX_CANTCREAT);
	calib_close(st);
	return rc;
}

static int import_line(struct calib_store *st, json_t *o, bool *probe)
{
	const char *type = json_string_value(json_object_get(o, "type"));

	*probe = false;
	if (!type || strcmp(type, "attempt") == 0)
		return calib_record_attempt(st, o);
	if (strcmp(type, "probe") == 0) {
		const json_t *doc = json_object_get(o, "doc");
		const char *host = json_string_value(json_object_get(o, "host"));
		const char *uid = json_string_value(json_object_get(o, "uid"));
		const char *ts = json_string_value(json_object_get(o, "time"));
		double t;

		*probe = true;
		if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "backends")))
			return calib_fail(st, XL_EX_DATAERR, "probe without a 'doc' with 'backends'");
		if (!host || !ts || !calib_parse_time(ts, &t))
			return calib_fail(st, XL_EX_DATAERR, "probe without 'host' and an ISO 8601 'time'");
		return calib_store_probe(st, doc, host, t, uid);
	}
	return calib_fail(st, XL_EX_DATAERR, "unknown line type '%s'", type);
}

int calib_import_line(struct calib_store *st, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	bool probe;
	int rc;

	if (!json_is_object(o)) {
		json_decref(o);
		return calib_fail(st, XL_EX_DATAERR, "not a JSON object (%s)", jerr.text);
	}
	rc = import_line(st, o, &probe);
	json_decref(o);
	return rc;
}

static enum xl_exit cmd_import(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	const char *file = call->argv[0];
	char *data, *line, *next;
	size_t len, lineno = 0, nattempt = 0, nprobe = 0, bad = 0;
	int rc = 0;

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
	if ((rc = open_store(ctx, &st))) {
		free(data);
		return rc;
	}
	if (calib_begin(st) != SQLITE_OK) {
		calib_sqlfail(st, "cannot begin a transaction");
		rc = store_error(st, XL_EX_CANTCREAT);
		goto out;
	}
	for (line = data; line && *line; line = next) {
		json_error_t je;
		json_t *o;
		bool probe;
		int r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		if (!o || !json_is_object(o)) {
			if (bad++ < 20)
				xl_error("'%s':%zu:%d: %s", file, lineno, o ? 1 : je.column,
					 o ? "not a JSON object" : je.text);
			json_decref(o);
			continue;
		}
		r = import_line(st, o, &probe);
		json_decref(o);
		if (r == XL_EX_DATAERR) {
			const char *msg = calib_errmsg(st);
			const char *colon = strstr(msg, "': ");

			if (bad++ < 20)
				xl_error("'%s':%zu: %s", file, lineno, colon ? colon + 3 : msg);
		} else if (r) {
			rc = store_error(st, r);
			calib_rollback(st);
			goto out;
		} else if (probe) {
			nprobe++;
		} else {
			nattempt++;
		}
	}
	if (bad) {
		calib_rollback(st);
		if (bad > 20)
			xl_error("'%s': %zu bad lines in all", file, bad);
		xl_error("'%s': nothing imported", file);
		rc = XL_EX_DATAERR;
		goto out;
	}
	if (calib_commit(st) != SQLITE_OK) {
		calib_sqlfail(st, "cannot commit the import");
		calib_rollback(st);
		rc = store_error(st, XL_EX_CANTCREAT);
		goto out;
	}
	if (ctx->json)
		printf("{\"attempts\": %zu, \"probes\": %zu}\n", nattempt, nprobe);
	else if (xl_verbosity >= 0)
		printf("read %zu attempts and %zu probes from %s (already present ones left as they were)\n",
		       nattempt, nprobe, file);
out:
	free(data);
	calib_close(st);
	return rc;
}

/* ---- forget ---------------------------------------------------------------------------------- */

static enum xl_exit cmd_forget(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	sqlite3_stmt *cnt = NULL, *del = NULL;
	char hash[65];
	long long n = 0;
	int rc;

	if ((rc = open_store(ctx, &st)))
		return rc;
	if ((rc = calib_resolve_prefix(st, call->argv[0], hash))) {
		store_error(st, rc);
		calib_close(st);
		return rc;
	}
	cnt = calib_prepare(st, "SELECT count(*) FROM attempts WHERE signature = ?1");
	del = calib_prepare(st, "DELETE FROM signatures WHERE hash = ?1");
	if (!cnt || !del || calib_begin(st) != SQLITE_OK) {
		rc = XL_EX_CANTCREAT;
		goto fail;
	}
	sqlite3_bind_text(cnt, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(del, 1, hash, -1, SQLITE_STATIC);
	if (calib_step(cnt) != SQLITE_ROW) {
		rc = XL_EX_CANTCREAT;
		goto fail;
	}
	n = sqlite3_column_int64(cnt, 0);
	if (calib_step(del) != SQLITE_DONE || calib_commit(st) != SQLITE_OK) {
		rc = XL_EX_CANTCREAT;
		goto fail;
	}
	if (ctx->json)
		printf("{\"signature\": \"%s\", \"attempts\": %lld}\n", hash, n);
	else if (xl_verbosity >= 0)
		printf("forgot signature %s and its %lld attempt%s\n", hash, n, n == 1 ? "" : "s");
	sqlite3_finalize(cnt);
	sqlite3_finalize(del);
	calib_close(st);
	return 0;
fail:
	calib_sqlfail(st, "cannot forget a signature");
	calib_rollback(st);
	sqlite3_finalize(cnt);
	sqlite3_finalize(del);
	store_error(st, rc);
	calib_close(st);
	return rc;
}

/* ---- the command ------------------------------------------------------------------------------ */

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
		"ratio_median, last_seen}",
	.options = stats_options,
	XL_CMD_OPTS(struct stats_opts, NULL),
	.run = cmd_stats,
};

static const struct xl_cmd calib_order_cmd = {
	.name = "order",
	.summary = "the order in which a profile's candidates are tried, with reasons",
	.operands = "PROFILE",
	.json = "{profile, order: [{name, signature, place, reason, predicted_bytes,\n"
		"device_memory_bytes}]}",
	.help = "Places, in order: known-good (latest attempt with this signature was ok),\n"
		"unseen (predicted to fit), suspect (oom with this shape on an older stack),\n"
		"infeasible (predicted above the device memory), known-bad (latest attempt\n"
		"with this signature was an oom).  Ties keep the profile's order.\n",
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
	.summary = "predicted memory per device of a profile's candidates, part by part",
	.operands = "PROFILE",
	.json = "with -c one object, otherwise an array of objects:\n"
		"{profile, candidate, signature, model_state_bytes,\n"
		"activation_bytes, logits_bytes, overhead_bytes,\n"
		"analytic_bytes, correction, samples, predicted_bytes,\n"
		"device_memory_bytes, calibrated, reported, note}",
	.options = predict_options,
	XL_CMD_OPTS(struct predict_opts, NULL),
	.run = cmd_predict,
};

static const struct xl_cmd calib_record_cmd = {
	.name = "record",
	.summary = "record an outcome observed elsewhere (e.g. by a cluster scheduler)",
	.operands = "[PROFILE]",
	.synopsis = "(PROFILE [-c CAND] | --signature PREFIX) --outcome O [--id ID]\n"
		    "[--exit-status N] [--predicted BYTES] [--observed BYTES] [--wall DUR]\n"
		    "[--compiles N] [--host H] [--rank N] [--time TIME] [--json]",
	.json = "the recorded attempt",
	.help = "The signature comes from the profile's candidate (with hardware from the\n"
		"latest probe when the profile gives none) or from a recorded signature.\n"
		"Recording an id twice is a no-op.\n",
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

static const struct xl_cmd *const calib_subs[] = {
	&calib_history_cmd, &calib_stats_cmd, &calib_order_cmd, &calib_predict_cmd,
	&calib_record_cmd, &calib_export_cmd, &calib_import_cmd, &calib_forget_cmd, NULL,
};

const struct xl_cmd xl_cmd_calib = {
	.name = "calib",
	.summary = "calibration store: launch history, memory predictions, retry order",
	.epilog = "Exit status: 0 ok, 64 usage (also an ambiguous signature prefix), 65 bad\n"
		  "import data, 66 no such signature or file, 73 store unusable.\n",
	.subs = calib_subs,
};
