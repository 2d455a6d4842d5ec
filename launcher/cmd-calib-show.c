/* cmd-calib-show.c - `xlaunch calib show RUN|last`: one launch attempt in
 * one place.  What the store holds of it (its row, its figures, the compile
 * details) and what its run directory's manifest.json adds (the reason of
 * the outcome, why the candidate was chosen, the limit) become one view,
 * printed as JSON or as text; nothing is written.
 */
#include "calib/calib.h"
#include "launcher/run/run.h"

#include <stdlib.h>
#include <string.h>

/* The run ids a RUN matched: at most two are kept (two means ambiguous). */
struct found {
	json_t *rows[2];
	size_t n;
};

static int found_row(const struct calib_attempt *a, void *arg)
{
	struct found *f = arg;

	if (f->n < 2)
		f->rows[f->n] = calib_attempt_to_json(a, CALIB_JSON_HISTORY);
	f->n++;
	return 0;
}

/* ---- finding the run ------------------------------------------------------------------ */

static void found_release(struct found *f)
{
	for (size_t i = 0; i < f->n && i < 2; i++)
		json_decref(f->rows[i]);
}

/* The store's row of RUN (`last`: the newest attempt) into *row (new
 * reference, NULL when the store has none), and its run directory into
 * *dir (caller frees; NULL when none is kept on this host).  Returns 0, or
 * an exit status with the message printed. */
static int find_run(struct calib_store *st, const char *run, json_t **row, char **dir)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	struct found fd = { { NULL, NULL }, 0 };
	bool last = strcmp(run, "last") == 0;
	char *id = NULL;
	int rc;

	*row = NULL;
	*dir = NULL;
	if (!last && (!*run || strchr(run, '/')))
		return xl_error("run id '%s' is not an id or a prefix of one", run), XL_EX_USAGE;
	f.limit = last ? 1 : 2;
	f.id_prefix = last ? NULL : run;
	rc = calib_history(st, &f, found_row, &fd);
	if (rc) {
		found_release(&fd);
		xl_error("%s", calib_errmsg(st));
		return rc;
	}
	if (fd.n > 1) {
		xl_error("run id prefix '%s' is ambiguous: '%s', '%s' and maybe more start so",
			 run, json_string_value(json_object_get(fd.rows[0], "id")),
			 json_string_value(json_object_get(fd.rows[1], "id")));
		found_release(&fd);
		return XL_EX_USAGE;
	}
	if (fd.n == 1) {
		const char *rid = json_string_value(json_object_get(fd.rows[0], "id"));
		size_t n = last ? 0 : xl_run_dir_find(run, dir, &id);

		/* a run kept only in its run directory shares the prefix */
		if (n > 1 || (n == 1 && strcmp(id, rid) != 0)) {
			xl_error("run id prefix '%s' is ambiguous: '%s' and %s start so", run, rid,
				 n > 1 ? "run directories" : id);
			found_release(&fd);
			free(*dir);
			free(id);
			*dir = NULL;
			return XL_EX_USAGE;
		}
		free(*dir);
		free(id);
		*row = fd.rows[0];
		xl_run_dir_find(rid, dir, &id);
		free(id);
		return 0;
	}
	/* not in the store (--no-record, or not recorded yet): its run directory */
	if (last) {
		xl_error("no run recorded in %s", calib_store_path(st));
		return XL_EX_NOINPUT;
	}
	switch (xl_run_dir_find(run, dir, &id)) {
	case 0:
		xl_error("no run '%s' in %s or in the run directories", run, calib_store_path(st));
		return XL_EX_NOINPUT;
	case 1:
		free(id);
		return 0;
	default:
		xl_error("run id prefix '%s' is ambiguous: more than one run directory starts so", run);
		return XL_EX_USAGE;
	}
}

/* ---- the view ------------------------------------------------------------------------- */

static json_t *get(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v ? v : json_null();
}

/* Copies key from one of the objects, the first that has it non-null. */
static void take(json_t *view, const char *key, const json_t *a, const json_t *b)
{
	json_t *v = json_object_get(a, key);

	if (!v || json_is_null(v))
		v = json_object_get(b, key);
	json_object_set_new(view, key, v ? json_incref(v) : json_null());
}

/* One attempt of the job, as a rank of it. */
static int rank_row(const struct calib_attempt *a, void *arg)
{
	json_t *r = json_object();

	json_object_set_new(r, "rank", a->rank == CALIB_UNSET ? json_null() : json_integer(a->rank));
	json_object_set_new(r, "host", a->host ? json_string(a->host) : json_null());
	json_object_set_new(r, "outcome", json_string(xl_outcome_name(a->outcome)));
	json_object_set_new(r, "exit_status", a->exit_status == CALIB_UNSET
					      ? json_null() : json_integer(a->exit_status));
	json_object_set_new(r, "job_id", a->job_id ? json_string(a->job_id) : json_null());
	json_object_set_new(r, "id", json_string(a->id));
	json_array_append_new(arg, r);
	return 0;
}

/* The recorded ranks of job (every attempt of its launches), newest first;
 * null when the attempt belongs to no job. */
static json_t *job_ranks(struct calib_store *st, const char *job)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	json_t *ranks;

	if (!job)
		return json_null();
	ranks = json_array();
	f.job = job;
	f.limit = 1000;
	if (calib_history(st, &f, rank_row, ranks) != 0)
		xl_warn("%s", calib_errmsg(st));
	return ranks;
}

/* The storm verdict of a compile object. */
static json_t *storm_json(const json_t *compile)
{
	if (!json_is_object(compile))
		return json_null();
	return json_pack("{s:O, s:O, s:O, s:O, s:O}", "storm", get(compile, "storm"),
			 "by", get(compile, "storm_by"), "rule", get(compile, "storm_rule"),
			 "reason", get(compile, "storm_reason"), "limits", get(compile, "rule"));
}

/* The view of the run: the row (may be NULL) and the manifest (may be NULL). */
static json_t *make_view(const json_t *row, const json_t *man, const char *dir)
{
	json_t *v = json_object(), *details = json_object_get(row, "details");
	json_t *compile = json_object_get(details, "compile");
	const json_t *order = json_object_get(man, "order");

	if (!compile || json_is_null(compile))
		compile = json_object_get(man, "compile");
	take(v, "id", row, man);
	json_object_set_new(v, "recorded", json_boolean(row != NULL));
	json_object_set_new(v, "run_dir", dir ? json_string(dir) : json_null());
	json_object_set_new(v, "manifest", json_boolean(man != NULL));
	take(v, "profile", row, man);
	take(v, "candidate", row, man);
	take(v, "host", row, man);
	take(v, "rank", row, man);
	take(v, "job_id", row, man);
	json_object_set_new(v, "attempt", json_incref(get(man, "attempt")));
	json_object_set_new(v, "attempts_planned", json_incref(get(man, "attempts_planned")));
	take(v, "time", row, man);
	if (json_is_null(json_object_get(v, "time")))
		json_object_set(v, "time", get(man, "start"));
	take(v, "wall_s", row, man);
	take(v, "outcome", row, man);
	take(v, "exit_status", row, man);
	json_object_set_new(v, "reason", json_incref(get(man, "reason")));
	json_object_set_new(v, "choice",
			    order ? json_pack("{s:O, s:O, s:O}", "place", get(order, "place"),
					      "reason", get(order, "reason"), "summary",
					      get(order, "summary"))
				  : json_null());
	json_object_set_new(v, "limit",
			    order ? json_pack("{s:O, s:O}", "bytes", get(order, "limit_bytes"),
					      "source", get(order, "limit_source"))
				  : json_null());
	take(v, "figures", row, man);
	take(v, "signature", row, NULL);
	if (json_is_null(json_object_get(v, "signature")))
		json_object_set(v, "signature", get(json_object_get(man, "signature"), "hash"));
	take(v, "argv", man, NULL);
	json_object_set_new(v, "compile", compile ? json_incref(compile) : json_null());
	json_object_set_new(v, "storm", storm_json(compile));
	return v;
}

/* ---- the text ------------------------------------------------------------------------- */

/* An aligned table, indented two spaces; the last column is not padded. */
struct table {
	size_t ncols;
	struct xl_strv cells;
};

static void table_print(struct table *t)
{
	size_t w[8] = { 0 };
	size_t rows = t->cells.n / t->ncols;

	for (size_t i = 0; i < t->cells.n; i++)
		if (strlen(t->cells.v[i]) > w[i % t->ncols])
			w[i % t->ncols] = strlen(t->cells.v[i]);
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			const char *cell = t->cells.v[r * t->ncols + c];

			if (c + 1 == t->ncols)
				printf("%s\n", cell);
			else
				printf("%s%-*s  ", c ? "" : "  ", (int)w[c], cell);
		}
	xl_strv_release(&t->cells);
}

/* A JSON scalar as a cell: "-" for null or missing. */
static const char *cell(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, n, "%.1f", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, n, "%s", json_is_true(v) ? "yes" : "no");
	else
		snprintf(buf, n, "-");
	return buf;
}

static void push(struct table *t, const json_t *v)
{
	char buf[64];

	xl_strv_push(&t->cells, cell(v, buf, sizeof(buf)));
}

static void push_bytes(struct table *t, const json_t *v)
{
	char buf[64];

	xl_strv_push(&t->cells, json_is_integer(v) ? xl_fmt_bytes((uint64_t)json_integer_value(v),
								   buf, sizeof(buf)) : "-");
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

static void print_head(const json_t *v)
{
	char a[64], b[64], c[64];
	const json_t *wall = json_object_get(v, "wall_s");

	printf("run %s\n", str(v, "id"));
	printf("  profile %s, candidate %s", str(v, "profile"), str(v, "candidate"));
	if (json_is_integer(json_object_get(v, "attempt")))
		printf(" (attempt %s of %s)", cell(json_object_get(v, "attempt"), a, sizeof(a)),
		       cell(json_object_get(v, "attempts_planned"), b, sizeof(b)));
	printf(", host %s, rank %s\n", str(v, "host"), cell(json_object_get(v, "rank"), c, sizeof(c)));
	printf("  started %s", str(v, "time"));
	if (json_is_number(wall))
		printf(", %.1f s", json_number_value(wall));
	printf("%s\n", json_is_true(json_object_get(v, "recorded")) ? "" : " (not in the store)");
	printf("outcome: %s, exit status %s\n", str(v, "outcome"),
	       cell(json_object_get(v, "exit_status"), a, sizeof(a)));
	if (json_is_string(json_object_get(v, "reason")))
		printf("  reason: %s\n", str(v, "reason"));
	if (json_is_object(json_object_get(v, "choice")))
		printf("candidate: %s, %s: %s\n", str(v, "candidate"),
		       str(json_object_get(v, "choice"), "place"),
		       str(json_object_get(v, "choice"), "reason"));
}

static void print_memory(const json_t *v)
{
	const json_t *figs = json_object_get(v, "figures"), *lim = json_object_get(v, "limit");
	struct table t = { 5, XL_STRV_INIT };
	size_t i;
	json_t *f;
	char buf[64];

	printf("memory:\n");
	if (!json_array_size(figs))
		printf("  no figures\n");
	else {
		xl_strv_push(&t.cells, "ROLE");
		xl_strv_push(&t.cells, "KIND");
		xl_strv_push(&t.cells, "BYTES");
		xl_strv_push(&t.cells, "BASIS");
		xl_strv_push(&t.cells, "SOURCE");
		json_array_foreach(figs, i, f) {
			push(&t, json_object_get(f, "role"));
			push(&t, json_object_get(f, "kind"));
			push_bytes(&t, json_object_get(f, "bytes"));
			push(&t, json_object_get(f, "basis"));
			push(&t, json_object_get(f, "source"));
		}
		table_print(&t);
	}
	if (json_is_integer(json_object_get(lim, "bytes")))
		printf("  limit %s (%s)\n",
		       xl_fmt_bytes((uint64_t)json_integer_value(json_object_get(lim, "bytes")), buf,
				    sizeof(buf)), str(lim, "source"));
}

static void print_functions(const json_t *fns)
{
	static const char *const head[] = { "FUNCTION", "RUNTIME", "COMPILES", "LOADS",
					    "AFTER WARM-UP", "SECONDS", "XLA BYTES", "CAUSE" };
	struct table t = { 8, XL_STRV_INIT };
	size_t i, shown = 0;
	json_t *f;

	for (i = 0; i < 8; i++)
		xl_strv_push(&t.cells, head[i]);
	json_array_foreach(fns, i, f) {
		if (shown++ == 20)
			break;
		push(&t, json_object_get(f, "name"));
		push(&t, json_object_get(f, "runtime"));
		push(&t, json_object_get(f, "compiles"));
		push(&t, json_object_get(f, "loads"));
		push(&t, json_object_get(f, "after_warmup"));
		push(&t, json_object_get(f, "compile_s"));
		push_bytes(&t, json_object_get(f, "xla_bytes"));
		push(&t, json_object_get(f, "cause"));
	}
	table_print(&t);
	if (json_array_size(fns) > 20)
		printf("  ... %zu functions more (--json lists them)\n", json_array_size(fns) - 20);
}

static void print_compile(const json_t *v)
{
	const json_t *c = json_object_get(v, "compile"), *s = json_object_get(v, "storm");
	const json_t *cache = json_object_get(c, "cache"), *rule = json_object_get(s, "limits");
	char a[64], b[64], d[64];

	if (!json_is_object(c)) {
		printf("compiles: not known\n");
		return;
	}
	printf("compiles: %s (%s recompilations", cell(json_object_get(c, "count"), a, sizeof(a)),
	       cell(json_object_get(c, "recompilations"), b, sizeof(b)));
	if (json_is_number(json_object_get(c, "compile_s")))
		printf(", %.1f s compiling", json_number_value(json_object_get(c, "compile_s")));
	printf("), persistent-cache hits %s\n", cell(json_object_get(cache, "hits"), d, sizeof(d)));
	if (json_array_size(json_object_get(c, "functions")))
		print_functions(json_object_get(c, "functions"));
	if (json_is_true(json_object_get(s, "storm")))
		printf("storm: yes, judged by %s (%s): %s\n", str(s, "by"), str(s, "rule"),
		       str(s, "reason"));
	else
		printf("storm: no (at most %s compiles after %s warm-up steps)\n",
		       cell(json_object_get(rule, "max_after_warmup"), a, sizeof(a)),
		       cell(json_object_get(rule, "warmup_steps"), b, sizeof(b)));
}

static void print_job(const json_t *v)
{
	const json_t *ranks = json_object_get(v, "ranks");
	struct table t = { 5, XL_STRV_INIT };
	size_t i;
	json_t *r;

	if (!json_is_array(ranks)) {
		printf("job: none (a launch of one process)\n");
		return;
	}
	printf("job %s: %zu rank attempt%s recorded\n", str(v, "job_id"), json_array_size(ranks),
	       json_array_size(ranks) == 1 ? "" : "s");
	xl_strv_push(&t.cells, "RANK");
	xl_strv_push(&t.cells, "HOST");
	xl_strv_push(&t.cells, "OUTCOME");
	xl_strv_push(&t.cells, "EXIT");
	xl_strv_push(&t.cells, "ID");
	json_array_foreach(ranks, i, r) {
		push(&t, json_object_get(r, "rank"));
		push(&t, json_object_get(r, "host"));
		push(&t, json_object_get(r, "outcome"));
		push(&t, json_object_get(r, "exit_status"));
		push(&t, json_object_get(r, "id"));
	}
	table_print(&t);
}

static void print_view(const json_t *v)
{
	print_head(v);
	print_memory(v);
	print_compile(v);
	print_job(v);
	if (json_is_string(json_object_get(v, "run_dir")))
		printf("run directory: %s\n", str(v, "run_dir"));
	else
		printf("run directory: none on this host\n");
}

/* ---- the command ---------------------------------------------------------------------- */

static json_t *read_manifest(const char *dir)
{
	char *path;
	json_t *m;
	json_error_t e;

	if (!dir)
		return NULL;
	path = xl_asprintf("%s/manifest.json", dir);
	m = json_load_file(path, 0, &e);
	if (!m)
		xl_warn("cannot read %s: %s", path, e.text);
	else if (!json_is_object(m)) {
		json_decref(m);
		m = NULL;
	}
	free(path);
	return m;
}

static enum xl_exit cmd_show(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct calib_store *st;
	json_t *row, *man, *view;
	char *err = NULL, *dir;
	int rc = calib_open(ctx->store_path, CALIB_OPEN_READONLY, &st, &err);

	if (rc) {
		xl_error("%s", err ? err : "store: cannot open");
		free(err);
		return rc;
	}
	rc = find_run(st, call->argv[0], &row, &dir);
	if (rc) {
		calib_close(st);
		return rc;
	}
	man = read_manifest(dir);
	view = make_view(row, man, dir);
	json_object_set_new(view, "ranks",
			    job_ranks(st, json_string_value(json_object_get(view, "job_id"))));
	if (ctx->json) {
		char *s = json_dumps(view, JSON_INDENT(2) | JSON_REAL_PRECISION(10));

		puts(s);
		free(s);
	} else
		print_view(view);
	json_decref(view);
	json_decref(man);
	json_decref(row);
	free(dir);
	calib_close(st);
	return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
}

const struct xl_cmd xl_calib_show_cmd = {
	.name = "show",
	.summary = "one launch attempt: outcome, choice, memory, compiles, storm, job",
	.operands = "RUN|last",
	.json = "{id, recorded, run_dir, manifest, profile, candidate, host, rank, job_id,\n"
		"attempt, attempts_planned, time, wall_s, outcome, exit_status, reason,\n"
		"choice {place, reason, summary}, limit {bytes, source}, figures,\n"
		"signature, argv, compile (the manifest's compile object), storm {storm,\n"
		"by, rule, reason, limits}, ranks ([{rank, host, outcome, exit_status,\n"
		"job_id, id}] or null)}",
	.help =
		"Shows the attempt RUN (its run id, or a unique prefix of it; `last`: the\n"
		"newest in the store): the outcome and its reason, the candidate and why\n"
		"it was chosen, every memory figure with its kind and source, the compile\n"
		"table (each function, how often it compiled, after warm-up, its cause),\n"
		"the storm verdict, the ranks of its job and its run directory.  The\n"
		"store's row and the run directory's manifest.json are read (either\n"
		"alone when the other is missing); nothing is written.\n",
	.epilog = "Exit status: 0, 64 a prefix that matches more than one run, 66 no such\n"
		  "run, 73 store unusable.\n",
	.run = cmd_show,
};
