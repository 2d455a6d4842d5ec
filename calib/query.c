/* query.c - the store's operations, written once over a driver
 * (calib/store.h): every read and write of the store in one SQL dialect
 * that SQLite and PostgreSQL both take, with the attempt's columns bound
 * and read as calib_attempt_cols lists them; and beside some of them, the
 * SQL PostgreSQL takes of its own (calib_pg_queries: one round trip,
 * LATERAL, the server's clock), bound and read by the same code. */
#include "calib/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NUM_STR_(x) #x
#define NUM_STR(x) NUM_STR_(x)

/* ---- statements -------------------------------------------------------------- */

char *calib_sql(const struct calib_driver *drv, const char *sql)
{
	static const struct { const char *word; size_t off; } words[] = {
		{ "@seq", offsetof(struct calib_driver, seq) },
		{ "@pos", offsetof(struct calib_driver, pos) },
		{ "@fig", offsetof(struct calib_driver, figures) },
		{ "@bin", offsetof(struct calib_driver, bin) },
	};
	struct xl_buf b = XL_BUF_INIT;

	for (const char *p = sql; *p; p++) {
		size_t i;

		for (i = 0; *p == '@' && i < sizeof(words) / sizeof(words[0]); i++)
			if (strncmp(p, words[i].word, 4) == 0)
				break;
		if (*p == '@' && i < sizeof(words) / sizeof(words[0])) {
			xl_buf_adds(&b, *(const char *const *)((const char *)drv + words[i].off));
			p += 3;
		} else {
			xl_buf_addc(&b, *p);
		}
	}
	return xl_buf_detach(&b);
}

static struct calib_stmt *prepare(struct calib_store *st, const char *sql, const char *what)
{
	char *text = calib_sql(st->drv, sql);
	struct calib_stmt *s = st->drv->prepare(st, text, what);

	free(text);
	return s;
}

/* prepare() of a query built in q, which is released. */
static struct calib_stmt *prepare_buf(struct calib_store *st, struct xl_buf *q, const char *what)
{
	struct calib_stmt *s = prepare(st, xl_buf_str(q), what);

	xl_buf_release(q);
	return s;
}

static void finalize(struct calib_store *st, struct calib_stmt *s)
{
	if (s)
		st->drv->finalize(s);
}

#define TEXT(st, s, i, v) (st)->drv->bind_text((s), (i), (v))
#define INT(st, s, i, v) (st)->drv->bind_int((s), (i), (v))
#define REAL(st, s, i, v) (st)->drv->bind_real((s), (i), (v))
#define STEP(st, s) (st)->drv->step(s)
#define COL_TEXT(st, s, c) (st)->drv->col_text((s), (c))
#define COL_INT(st, s, c) (st)->drv->col_int((s), (c))
#define COL_REAL(st, s, c) (st)->drv->col_real((s), (c))

static char *col_dup(struct calib_store *st, struct calib_stmt *s, int c)
{
	const char *v = COL_TEXT(st, s, c);

	return v ? xl_strdup(v) : NULL;
}

static void col_hash(struct calib_store *st, struct calib_stmt *s, int c, char hash[65])
{
	const char *v = COL_TEXT(st, s, c);

	snprintf(hash, 65, "%s", v ? v : "");
}

/* Runs s, which gives no rows, and finalizes it. */
static int run_done(struct calib_store *st, struct calib_stmt *s)
{
	int rc = STEP(st, s);

	finalize(st, s);
	return rc;
}

/* ---- the attempt's columns ------------------------------------------------------ */

/* The SQL list of the columns of calib_attempt_cols an attempt read selects
 * (those of the signature too when sig; the figures NULL unless figs: a
 * query that sorts before its LIMIT would read them for every row). */
static void attempt_cols(struct xl_buf *q, bool sig, bool figs)
{
	for (const struct calib_column *c = calib_attempt_cols; c->name; c++)
		if (sig || !(c->flags & CALIB_COL_SIG))
			xl_buf_addf(q, "%s%s", c == calib_attempt_cols ? "" : ", ",
				    c->type == CALIB_COL_FIGURES && !figs ? "NULL" : c->sql);
}

/* The figures of an attempt as @fig gives them, into a, in the order of
 * role and kind. */
static void read_figures(const char *text, struct calib_attempt *a)
{
	json_t *all = text ? json_loads(text, 0, NULL) : NULL, *f;
	size_t i;

	json_array_foreach(all, i, f) {
		enum calib_kind k;
		enum calib_basis b = CALIB_BASIS_NONE;
		const json_t *err = json_array_get(f, 4);

		if (!calib_kind_parse(json_string_value(json_array_get(f, 1)), &k))
			continue;   /* a kind a later xlaunch wrote */
		calib_basis_parse(json_string_value(json_array_get(f, 3)), &b);
		calib_attempt_add_figure(a, xl_streq(json_string_value(json_array_get(f, 0)), "predicted"),
					 k, (int64_t)json_integer_value(json_array_get(f, 2)), b,
					 json_is_integer(err) ? (int64_t)json_integer_value(err) : CALIB_UNSET,
					 json_string_value(json_array_get(f, 5)));
	}
	json_decref(all);
}

/* One column of a row into its field of a. */
static void read_col(struct calib_store *st, struct calib_stmt *s, int i,
		     const struct calib_column *c, struct calib_attempt *a)
{
	void *p = (char *)a + c->offset;
	const char *t;

	switch (c->type) {
	case CALIB_COL_TEXT:
	case CALIB_COL_OBJECT:
		*(char **)p = col_dup(st, s, i);
		break;
	case CALIB_COL_HASH:
		col_hash(st, s, i, p);
		break;
	case CALIB_COL_INT:
		*(int64_t *)p = COL_INT(st, s, i);
		break;
	case CALIB_COL_REAL:
	case CALIB_COL_TIME:
		*(double *)p = COL_REAL(st, s, i);
		if (c->type == CALIB_COL_TIME && isnan(*(double *)p))
			*(double *)p = 0;
		break;
	case CALIB_COL_OUTCOME: {
		enum xl_outcome o = XL_OUT_ERROR;

		xl_outcome_parse(COL_TEXT(st, s, i), &o);
		*(enum xl_outcome *)p = o;
		break;
	}
	case CALIB_COL_KIND:
		if (!calib_kind_parse(COL_TEXT(st, s, i), p))
			*(enum calib_kind *)p = CALIB_KIND_COUNT;
		break;
	case CALIB_COL_BASIS:
		if (!calib_basis_parse(COL_TEXT(st, s, i), p))
			*(enum calib_basis *)p = CALIB_BASIS_NONE;
		break;
	case CALIB_COL_SCHEME:
		*(int *)p = (int)COL_INT(st, s, i);
		break;
	case CALIB_COL_FIGURES:
		t = COL_TEXT(st, s, i);
		read_figures(t, a);
		break;
	}
}

/* Reads the columns attempt_cols(sig) selected, from column 0, into a
 * (initialized; released first).  Returns the next column. */
static int read_attempt(struct calib_store *st, struct calib_stmt *s, bool sig,
			struct calib_attempt *a)
{
	int i = 0;

	calib_attempt_release(a);
	calib_attempt_init(a);
	for (const struct calib_column *c = calib_attempt_cols; c->name; c++)
		if (sig || !(c->flags & CALIB_COL_SIG))
			read_col(st, s, i++, c, a);
	return i;
}

/* Binds column c of a as parameter i. */
static void bind_col(struct calib_store *st, struct calib_stmt *s, int i,
		     const struct calib_column *c, const struct calib_attempt *a)
{
	const void *p = (const char *)a + c->offset;

	if (calib_col_is_null(c, a)) {
		if (c->type == CALIB_COL_INT)
			INT(st, s, i, CALIB_UNSET);
		else if (c->type == CALIB_COL_REAL)
			REAL(st, s, i, NAN);
		else
			TEXT(st, s, i, NULL);
		return;
	}
	switch (c->type) {
	case CALIB_COL_TEXT:
	case CALIB_COL_OBJECT:
		TEXT(st, s, i, !*(char *const *)p && (c->flags & CALIB_COL_HOST) ? xl_hostname()
										    : *(char *const *)p);
		break;
	case CALIB_COL_HASH:
		TEXT(st, s, i, p);
		break;
	case CALIB_COL_INT:
		INT(st, s, i, *(const int64_t *)p);
		break;
	case CALIB_COL_REAL:
	case CALIB_COL_TIME:
		REAL(st, s, i, *(const double *)p);
		break;
	case CALIB_COL_OUTCOME:
		TEXT(st, s, i, xl_outcome_name(*(const enum xl_outcome *)p));
		break;
	case CALIB_COL_KIND:
		TEXT(st, s, i, calib_kind_name(*(const enum calib_kind *)p));
		break;
	case CALIB_COL_BASIS:
		TEXT(st, s, i, calib_basis_name(*(const enum calib_basis *)p));
		break;
	case CALIB_COL_SCHEME:
		INT(st, s, i, *(const int *)p);
		break;
	case CALIB_COL_FIGURES:
		break;
	}
}

/* ---- recording ----------------------------------------------------------------- */

static const char q_insert_signature[] =
	"INSERT INTO signatures (hash, shape_hash, stack_hash, hardware_kind, json, first_seen,"
	" scheme, family_hash, coords) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
	" ON CONFLICT (hash) DO NOTHING";
/* a signature first known by its hash alone learns what it is made of */
static const char q_describe_signature[] =
	"UPDATE signatures SET json = $2, shape_hash = $3, stack_hash = $4, hardware_kind = $5,"
	" scheme = $6, family_hash = $7, coords = $8"
	" WHERE hash = $1 AND json IS NULL AND CAST($2 AS TEXT) IS NOT NULL";
static const char q_insert_figure[] =
	"INSERT INTO figures (attempt, role, kind, bytes, basis, error_bytes, source)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7)";

static const char *or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/* INSERT of the attempt's own columns, an id already there left alone. */
static struct calib_stmt *insert_attempt(struct calib_store *st, const struct calib_attempt *a,
					 const char *what)
{
	struct xl_buf q = XL_BUF_INIT, v = XL_BUF_INIT;
	struct calib_stmt *s;
	int n = 0;

	for (const struct calib_column *c = calib_attempt_cols; c->name; c++) {
		if (c->type == CALIB_COL_FIGURES || (c->flags & CALIB_COL_SIG))
			continue;
		xl_buf_addf(&q, "%s%s", n ? ", " : "INSERT INTO attempts (", c->sql + 2);
		xl_buf_addf(&v, "%s$%d", n ? ", " : "", n + 1);
		n++;
	}
	xl_buf_addf(&q, ") VALUES (%s) ON CONFLICT (id) DO NOTHING", xl_buf_str(&v));
	xl_buf_release(&v);
	if (!(s = prepare_buf(st, &q, what)))
		return NULL;
	n = 0;
	for (const struct calib_column *c = calib_attempt_cols; c->name; c++)
		if (c->type != CALIB_COL_FIGURES && !(c->flags & CALIB_COL_SIG))
			bind_col(st, s, ++n, c, a);
	return s;
}

static int insert_figures(struct calib_store *st, const struct calib_attempt *a)
{
	struct calib_stmt *s;
	int rc = 0;

	if (!a->nfigures)
		return 0;
	if (!(s = prepare(st, q_insert_figure, "cannot record the figures of an attempt")))
		return XL_EX_CANTCREAT;
	for (size_t i = 0; rc == 0 && i < a->nfigures; i++) {
		const struct calib_figure *f = &a->figures[i];

		st->drv->reset(s);
		TEXT(st, s, 1, a->id);
		TEXT(st, s, 2, f->predicted ? "predicted" : "observed");
		TEXT(st, s, 3, calib_kind_name(f->kind));
		INT(st, s, 4, f->bytes);
		TEXT(st, s, 5, f->predicted ? calib_basis_name(f->basis) : NULL);
		INT(st, s, 6, f->error_bytes);
		TEXT(st, s, 7, f->source);
		rc = STEP(st, s);
	}
	finalize(st, s);
	return rc;
}

static int q_record_attempt(struct calib_store *st, const struct calib_attempt *a,
			    const char *family, const char *coords)
{
	const char *what = "cannot record an attempt";
	struct calib_stmt *s1, *s2 = NULL, *s3 = NULL;
	int rc;

	s1 = prepare(st, q_insert_signature, what);
	s2 = s1 ? prepare(st, q_describe_signature, what) : NULL;
	s3 = s2 ? insert_attempt(st, a, what) : NULL;
	if (!s3) {
		finalize(st, s1);
		finalize(st, s2);
		return XL_EX_CANTCREAT;
	}
	TEXT(st, s1, 1, a->signature);
	TEXT(st, s1, 2, or_null(a->shape_hash));
	TEXT(st, s1, 3, or_null(a->stack_hash));
	TEXT(st, s1, 4, a->hardware_kind);
	TEXT(st, s1, 5, a->signature_json);
	REAL(st, s1, 6, a->time);
	INT(st, s1, 7, a->signature_scheme);
	TEXT(st, s1, 8, family);
	TEXT(st, s1, 9, coords);
	TEXT(st, s2, 1, a->signature);
	TEXT(st, s2, 2, a->signature_json);
	TEXT(st, s2, 3, or_null(a->shape_hash));
	TEXT(st, s2, 4, or_null(a->stack_hash));
	TEXT(st, s2, 5, a->hardware_kind);
	INT(st, s2, 6, a->signature_scheme);
	TEXT(st, s2, 7, family);
	TEXT(st, s2, 8, coords);
	if ((rc = st->drv->begin(st, false)))
		goto out;
	if ((rc = STEP(st, s1)) || (rc = STEP(st, s2)) || (rc = STEP(st, s3)))
		goto fail;
	/* figures go with a new attempt only: recording an id again is a no-op */
	if (st->drv->changes(s3) > 0 && (rc = insert_figures(st, a)))
		goto fail;
	if ((rc = st->drv->commit(st)) == 0)
		goto out;
fail:
	st->drv->rollback(st);
out:
	finalize(st, s1);
	finalize(st, s2);
	finalize(st, s3);
	return rc;
}

/* A backend's devices as rows, one per kind of device (and type): count and
 * smallest memory of each.  A backend without devices is one row with no
 * kind. */
int calib_insert_backends(struct calib_store *st, int64_t probe, const json_t *doc)
{
	struct calib_probe_backend *rows;
	size_t n = calib_probe_backends(doc, &rows);
	struct calib_stmt *s;
	int rc = 0;

	s = prepare(st, "INSERT INTO probe_backends (probe, name, state, kind, count, memory_bytes,"
		    " device_type, memory_source) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
		    "cannot record a probe");
	for (size_t i = 0; s && rc == 0 && i < n; i++) {
		st->drv->reset(s);
		INT(st, s, 1, probe);
		TEXT(st, s, 2, rows[i].name);
		TEXT(st, s, 3, rows[i].state);
		TEXT(st, s, 4, rows[i].kind);
		INT(st, s, 5, rows[i].count);
		INT(st, s, 6, rows[i].memory_bytes >= 0 ? rows[i].memory_bytes : CALIB_UNSET);
		TEXT(st, s, 7, rows[i].type);
		TEXT(st, s, 8, rows[i].memory_source);
		rc = STEP(st, s);
	}
	finalize(st, s);
	free(rows);
	return s ? rc : XL_EX_CANTCREAT;
}

/* a uid already present is left alone: no row comes back */
static int q_record_probe(struct calib_store *st, const json_t *doc, const char *host, double t,
			  const char *given_uid)
{
	struct calib_stmt *s;
	int64_t id = CALIB_UNSET;
	char *text, *uid;
	int rc;

	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		xl_oom();
	uid = given_uid ? xl_strdup(given_uid) : calib_probe_uid(host, t, text);
	s = prepare(st, "INSERT INTO probes (uid, host, time, doc) VALUES ($1, $2, $3, $4)"
		    " ON CONFLICT (uid) DO NOTHING RETURNING id", "cannot record a probe");
	if (!s) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	TEXT(st, s, 1, uid);
	TEXT(st, s, 2, host);
	REAL(st, s, 3, t);
	TEXT(st, s, 4, text);
	if ((rc = st->drv->begin(st, false)))
		goto out;
	if ((rc = STEP(st, s)) == CALIB_ROW) {
		id = COL_INT(st, s, 0);
		rc = STEP(st, s);
	}
	if (rc == 0 && id != CALIB_UNSET)
		rc = calib_insert_backends(st, id, doc);
	if (rc == 0)
		rc = st->drv->commit(st);
	if (rc)
		st->drv->rollback(st);
out:
	finalize(st, s);
	free(text);
	free(uid);
	return rc;
}

/* ---- reads ------------------------------------------------------------------------ */

static int q_latest_hardware(struct calib_store *st, const char *host,
			     struct calib_hardware **out, size_t *n)
{
	struct calib_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	s = prepare(st, "SELECT b.kind, b.count, b.memory_bytes, b.name, b.device_type,"
		    " b.memory_source FROM probe_backends b"
		    " WHERE b.probe = (SELECT id FROM probes WHERE host = $1"
		    " ORDER BY time DESC, id DESC LIMIT 1)"
		    " AND b.state = 'alive' AND b.count > 0 AND b.kind IS NOT NULL"
		    " ORDER BY b.@pos", "cannot read probes");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, host ? host : xl_hostname());
	while ((rc = STEP(st, s)) == CALIB_ROW) {
		int64_t mem = COL_INT(st, s, 2);

		calib_hardware_add(out, n, COL_TEXT(st, s, 0), COL_TEXT(st, s, 3), COL_TEXT(st, s, 4),
				   COL_TEXT(st, s, 5), COL_INT(st, s, 1), mem == CALIB_UNSET ? -1 : mem);
	}
	finalize(st, s);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* Each row of s, a read of attempt_cols(sig), to fn; finalizes s. */
static int attempt_rows(struct calib_store *st, struct calib_stmt *s, bool sig,
			calib_attempt_fn *fn, void *arg)
{
	struct calib_attempt a;
	int rc, r = 0;

	calib_attempt_init(&a);
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		read_attempt(st, s, sig, &a);
		r = fn(&a, arg);
	}
	calib_attempt_release(&a);
	finalize(st, s);
	return r ? r : rc;
}

/* history: the filters given, newest first (each filter has its index) */
static int q_history(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		     void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "SELECT ");
	attempt_cols(&q, false, true);
	xl_buf_adds(&q, " FROM attempts a WHERE true");
	if (f->profile)
		xl_buf_adds(&q, " AND a.profile = $1");
	if (f->signature)
		xl_buf_adds(&q, " AND a.signature = $2");
	if (f->outcome >= 0)
		xl_buf_adds(&q, " AND a.outcome = $3");
	if (f->host)
		xl_buf_adds(&q, " AND a.host = $4");
	if (!isnan(f->since))
		xl_buf_adds(&q, " AND a.time >= $5");
	/* a job's launches: ID, and ID#N for its restarts */
	if (f->job)
		xl_buf_adds(&q, " AND (a.job_id = $6 OR substr(a.job_id, 1, length($6) + 1) = $6 || '#')");
	/* a run id's prefix, as a range of the primary key (ids are ASCII) */
	if (f->id_prefix)
		xl_buf_adds(&q, " AND a.id >= $7 AND a.id < $8");
	xl_buf_adds(&q, " ORDER BY a.time DESC, a.@seq DESC");
	if (f->limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", f->limit);
	if (!(s = prepare_buf(st, &q, "cannot read attempts")))
		return XL_EX_CANTCREAT;
	if (f->profile)
		TEXT(st, s, 1, f->profile);
	if (f->signature)
		TEXT(st, s, 2, f->signature);
	if (f->outcome >= 0)
		TEXT(st, s, 3, xl_outcome_name(f->outcome));
	if (f->host)
		TEXT(st, s, 4, f->host);
	if (!isnan(f->since))
		REAL(st, s, 5, f->since);
	if (f->job)
		TEXT(st, s, 6, f->job);
	if (f->id_prefix) {
		char *above = xl_asprintf("%s\x7f", f->id_prefix);

		TEXT(st, s, 7, f->id_prefix);
		TEXT(st, s, 8, above);
		free(above);
	}
	return attempt_rows(st, s, false, fn, arg);
}

/* like for like: the successful attempts whose prediction is of the kind
 * observed (never unclassified) */
#define LIKE_FOR_LIKE \
	" AND b.outcome IN ('ok', 'compile-storm') AND b.observed_bytes > 0" \
	" AND b.predicted_bytes > 0 AND b.observed_kind = b.predicted_kind" \
	" AND b.observed_kind <> 'unclassified'"

/* The median of ratios given as a float8[] in text, "{1.1,1.25}" (NULL:
 * none). */
static double median_of_array(const char *text)
{
	double *v = NULL, med;
	size_t n = 0, cap = 0;
	const char *p = text;

	if (!p || *p++ != '{')
		return NAN;
	while (*p && *p != '}') {
		char *end;
		double d = strtod(p, &end);

		if (end == p)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xl_realloc(v, cap * sizeof(*v));
		}
		v[n++] = d;
		p = *end == ',' ? end + 1 : end;
	}
	med = calib_median(v, n);
	free(v);
	return med;
}

/* The observed/predicted ratios of signature's successful attempts whose
 * prediction is of the kind observed (never unclassified), of the kind of
 * the newest such attempt: their median and that kind (caller frees). */
static double like_for_like(struct calib_store *st, struct calib_stmt *r, const char *signature,
			    char **kind)
{
	double *ratios = NULL, med;
	size_t nr = 0, cap = 0;

	st->drv->reset(r);
	TEXT(st, r, 1, signature);
	*kind = NULL;
	while (STEP(st, r) == CALIB_ROW) {
		const char *k = COL_TEXT(st, r, 2);

		if (!*kind)
			*kind = xl_strdup(k);
		else if (!xl_streq(*kind, k))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			ratios = xl_realloc(ratios, cap * sizeof(*ratios));
		}
		ratios[nr++] = (double)COL_INT(st, r, 0) / (double)COL_INT(st, r, 1);
	}
	med = calib_median(ratios, nr);
	free(ratios);
	return med;
}

/* Each row of s, a stats query, to fn: signature, attempts, ok, oom, last
 * seen, profile, candidate; then the like-for-like kind and ratios, from r
 * (like_for_like) or, without r, from columns 7 and 8 (a float8[] as
 * text).  Finalizes s and r. */
static int stats_rows(struct calib_store *st, struct calib_stmt *s, struct calib_stmt *r,
		      calib_stats_fn *fn, void *arg)
{
	int rc, ret = 0;

	while (ret == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		struct calib_sig_stats ss;
		char *kind;

		memset(&ss, 0, sizeof(ss));
		col_hash(st, s, 0, ss.signature);
		ss.attempts = COL_INT(st, s, 1);
		ss.ok = COL_INT(st, s, 2);
		ss.oom = COL_INT(st, s, 3);
		ss.last_seen = COL_REAL(st, s, 4);
		ss.profile = COL_TEXT(st, s, 5);
		ss.candidate = COL_TEXT(st, s, 6);
		if (r) {
			ss.ratio_median = like_for_like(st, r, ss.signature, &kind);
		} else {
			kind = col_dup(st, s, 7);
			ss.ratio_median = median_of_array(COL_TEXT(st, s, 8));
		}
		ss.kind = kind;
		ret = fn(&ss, arg);
		free(kind);
	}
	finalize(st, s);
	finalize(st, r);
	return ret ? ret : rc;
}

static int q_stats(struct calib_store *st, const char *profile, long long limit,
		   calib_stats_fn *fn, void *arg)
{
	const char *what = "cannot read attempts";
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s, *r;

	/* a job's ranks are one launch: ok when every rank is, oom when any is */
	xl_buf_adds(&q, "WITH j AS (SELECT signature, max(time) AS time,"
			" min(CASE WHEN outcome = 'ok' THEN 1 ELSE 0 END) AS ok,"
			" max(CASE WHEN outcome = 'oom' THEN 1 ELSE 0 END) AS oom FROM attempts"
			" GROUP BY signature, coalesce(job_id, id))"
			" SELECT a.signature, count(*), sum(a.ok), sum(a.oom), max(a.time),"
			" (SELECT profile FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY b.time DESC, b.@seq DESC LIMIT 1), (SELECT candidate FROM attempts b"
			" WHERE b.signature = a.signature ORDER BY b.time DESC, b.@seq DESC LIMIT 1)"
			" FROM j a");
	if (profile)
		xl_buf_adds(&q, " WHERE a.signature IN (SELECT signature FROM attempts WHERE profile = $1)");
	xl_buf_adds(&q, " GROUP BY a.signature ORDER BY max(a.time) DESC, a.signature");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	s = prepare_buf(st, &q, what);
	r = s ? prepare(st, "SELECT b.observed_bytes, b.predicted_bytes, b.observed_kind FROM attempts b"
			" WHERE b.signature = $1" LIKE_FOR_LIKE
			" ORDER BY b.time DESC, b.@seq DESC", what) : NULL;
	if (!r) {
		finalize(st, s);
		return XL_EX_CANTCREAT;
	}
	if (profile)
		TEXT(st, s, 1, profile);
	return stats_rows(st, s, r, fn, arg);
}

/* The same in one statement on PostgreSQL: of each signature, the kind of
 * its newest like-for-like attempt and the ratios of that kind as an
 * array. */
static int pg_stats(struct calib_store *st, const char *profile, long long limit,
		    calib_stats_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "WITH j AS (SELECT signature, max(time) AS time,"
			" bool_and(outcome = 'ok') AS ok, bool_or(outcome = 'oom') AS oom"
			" FROM attempts GROUP BY signature, coalesce(job_id, id))"
			" SELECT a.signature, count(*), count(*) FILTER (WHERE a.ok),"
			" count(*) FILTER (WHERE a.oom), max(a.time),"
			" (SELECT b.profile FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1),"
			" (SELECT b.candidate FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1),"
			" k.kind, (SELECT array_agg(b.observed_bytes::float8 / b.predicted_bytes::float8)"
			" FROM attempts b WHERE b.signature = a.signature" LIKE_FOR_LIKE
			" AND b.observed_kind = k.kind)"
			" FROM j a LEFT JOIN LATERAL (SELECT b.observed_kind AS kind FROM attempts b"
			" WHERE b.signature = a.signature" LIKE_FOR_LIKE
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1) k ON true");
	if (profile)
		xl_buf_adds(&q, " WHERE a.signature IN (SELECT signature FROM attempts WHERE profile = $1)");
	xl_buf_adds(&q, " GROUP BY a.signature, k.kind ORDER BY max(a.time) DESC, a.signature");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	if (!(s = prepare_buf(st, &q, "cannot read attempts")))
		return XL_EX_CANTCREAT;
	if (profile)
		TEXT(st, s, 1, profile);
	return stats_rows(st, s, NULL, fn, arg);
}

static int q_resolve_signature(struct calib_store *st, const char *prefix, char hash[65])
{
	struct calib_stmt *s;
	char *hi;
	int n = 0, rc;

	s = prepare(st, "SELECT hash FROM signatures WHERE hash >= $1 AND hash < $2"
		    " ORDER BY hash LIMIT 2", "cannot look up a signature");
	if (!s)
		return XL_EX_CANTCREAT;
	hi = xl_asprintf("%sg", prefix);
	TEXT(st, s, 1, prefix);
	TEXT(st, s, 2, hi);
	while ((rc = STEP(st, s)) == CALIB_ROW)
		if (n++ == 0)
			col_hash(st, s, 0, hash);
	finalize(st, s);
	free(hi);
	if (rc)
		return rc;
	if (n == 0)
		return calib_fail(st, XL_EX_NOINPUT, "no signature starts with '%s'", prefix);
	if (n > 1)
		return calib_fail(st, XL_EX_USAGE, "signature prefix '%s' is ambiguous", prefix);
	return 0;
}

/* its attempts go with it (ON DELETE CASCADE) */
static int q_forget(struct calib_store *st, const char *hash, int64_t *attempts)
{
	const char *what = "cannot forget a signature";
	struct calib_stmt *cnt, *del;
	int rc;

	*attempts = 0;
	cnt = prepare(st, "SELECT count(*) FROM attempts WHERE signature = $1", what);
	del = cnt ? prepare(st, "DELETE FROM signatures WHERE hash = $1", what) : NULL;
	if (!del) {
		finalize(st, cnt);
		return XL_EX_CANTCREAT;
	}
	TEXT(st, cnt, 1, hash);
	TEXT(st, del, 1, hash);
	if ((rc = st->drv->begin(st, false)))
		goto out;
	if ((rc = STEP(st, cnt)) != CALIB_ROW)
		goto fail;
	*attempts = COL_INT(st, cnt, 0);
	st->drv->reset(cnt);
	if ((rc = STEP(st, del)))
		goto fail;
	if (st->drv->changes(del) == 0) {
		rc = calib_fail(st, XL_EX_NOINPUT, "no signature '%s'", hash);
		goto fail;
	}
	if ((rc = st->drv->commit(st)) == 0)
		goto out;
fail:
	st->drv->rollback(st);
out:
	finalize(st, cnt);
	finalize(st, del);
	return rc;
}

static int export_probes(struct calib_store *st, calib_probe_fn *pfn, void *arg)
{
	struct calib_stmt *s;
	int rc, r = 0;

	s = prepare(st, "SELECT uid, host, time, doc FROM probes ORDER BY time, uid",
		    "cannot read the store");
	if (!s)
		return XL_EX_CANTCREAT;
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		const char *text = COL_TEXT(st, s, 3);
		json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
		struct calib_probe_row p = {
			COL_TEXT(st, s, 0), COL_TEXT(st, s, 1), COL_REAL(st, s, 2), doc,
		};

		r = pfn(&p, arg);
		json_decref(doc);
	}
	finalize(st, s);
	return r ? r : rc;
}

/* one read-only transaction, so the export is one consistent snapshot */
static int q_export(struct calib_store *st, calib_probe_fn *pfn, calib_attempt_fn *afn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;
	int rc;

	if ((rc = st->drv->begin(st, true)))
		return rc;
	if ((rc = export_probes(st, pfn, arg)))
		goto out;
	xl_buf_adds(&q, "SELECT ");
	attempt_cols(&q, true, true);
	xl_buf_adds(&q, " FROM attempts a JOIN signatures s ON s.hash = a.signature"
			" ORDER BY a.time, a.id");
	if (!(s = prepare_buf(st, &q, "cannot read the store"))) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	if ((rc = attempt_rows(st, s, true, afn, arg)) == 0 && (rc = st->drv->commit(st)) == 0)
		return 0;
out:
	st->drv->rollback(st);
	return rc;
}

/* ---- what order and prediction read ------------------------------------------------ */

/* The first row of s, prepared by prepare_attempt, into out and *found,
 * and the first extra column as a boolean into *extra (may be NULL);
 * finalizes s.  Returns 0 or an exit status. */
static int one_attempt(struct calib_store *st, struct calib_stmt *s, struct calib_attempt *out,
		       bool *found, bool *extra)
{
	int rc = STEP(st, s);

	if (rc == CALIB_ROW) {
		int next = read_attempt(st, s, false, out);

		if (extra)
			*extra = COL_INT(st, s, next) != 0;
		*found = true;
		rc = 0;
	}
	finalize(st, s);
	return rc;
}

/* An attempt read: SELECT, the attempt's columns (no signature's, no
 * figures), extra (more columns, or ""), then rest (FROM ...); prepared, to
 * bind.  NULL with st->err set. */
static struct calib_stmt *prepare_attempt(struct calib_store *st, const char *extra,
					  const char *rest)
{
	struct xl_buf q = XL_BUF_INIT;

	xl_buf_adds(&q, "SELECT ");
	attempt_cols(&q, false, false);
	xl_buf_adds(&q, extra);
	xl_buf_adds(&q, rest);
	return prepare_buf(st, &q, "cannot read past launches");
}

static int q_latest_attempt(struct calib_store *st, const char *signature,
			    struct calib_attempt *out, bool *found)
{
	struct calib_stmt *s;
	bool oom = false;
	int rc;

	*found = false;
	s = prepare_attempt(st, "", " FROM attempts a WHERE a.signature = $1"
			    " AND a.outcome IN ('ok', 'compile-storm', 'oom')"
			    " ORDER BY a.time DESC, a.@seq DESC LIMIT 1");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, signature);
	if ((rc = one_attempt(st, s, out, found, NULL)) || !*found || !out->job_id ||
	    out->outcome == XL_OUT_OOM)
		return rc;
	/* a job's outcome is its worst rank's: an oom of any rank of that
	 * launch stands for it */
	s = prepare_attempt(st, "", " FROM attempts a WHERE a.job_id = $1 AND a.signature = $2"
			    " AND a.outcome = 'oom' ORDER BY a.time DESC, a.@seq DESC LIMIT 1");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, out->job_id);
	TEXT(st, s, 2, signature);
	{
		struct calib_attempt worse;

		calib_attempt_init(&worse);
		rc = one_attempt(st, s, &worse, &oom, NULL);
		if (rc == 0 && oom) {
			calib_attempt_release(out);
			*out = worse;
		} else {
			calib_attempt_release(&worse);
		}
	}
	return rc;
}

/* The latest attempt of another signature of this shape, read from rest
 * ($1 the shape, $2 the stack, $3 the signature left out). */
static int same_shape(struct calib_store *st, const char *rest, const char *shape,
		      const char *stack, const char *not_signature, struct calib_attempt *out,
		      bool *found, bool *other_stack)
{
	struct calib_stmt *s;

	*found = *other_stack = false;
	s = prepare_attempt(st, ", s.stack_hash IS DISTINCT FROM CAST($2 AS TEXT)", rest);
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, shape);
	TEXT(st, s, 2, stack);
	TEXT(st, s, 3, not_signature);
	return one_attempt(st, s, out, found, other_stack);
}

static int q_latest_same_shape(struct calib_store *st, const char *shape, const char *stack,
			       const char *not_signature, struct calib_attempt *out, bool *found,
			       bool *other_stack)
{
	return same_shape(st, " FROM signatures s JOIN attempts a ON a.signature = s.hash"
			  " WHERE s.shape_hash = $1 AND s.hash <> $3"
			  " ORDER BY a.time DESC, a.@seq DESC LIMIT 1",
			  shape, stack, not_signature, out, found, other_stack);
}

/* PostgreSQL goes from the signatures to each one's newest attempts
 * (LATERAL, on attempts(signature, time, seq)), here and in the family
 * reads below: their cost is bounded by the signatures that match, never
 * by all the attempts, which a plan walking attempts newest first until one
 * matches would read through when none does (the planner's guess for
 * LIMIT; SQLite's CROSS JOIN). */
static int pg_latest_same_shape(struct calib_store *st, const char *shape, const char *stack,
				const char *not_signature, struct calib_attempt *out, bool *found,
				bool *other_stack)
{
	return same_shape(st, " FROM signatures s CROSS JOIN LATERAL (SELECT * FROM attempts b"
			  " WHERE b.signature = s.hash ORDER BY b.time DESC, b.seq DESC LIMIT 1) a"
			  " WHERE s.shape_hash = $1 AND s.hash <> $3"
			  " ORDER BY a.time DESC, a.seq DESC LIMIT 1",
			  shape, stack, not_signature, out, found, other_stack);
}

/* A point of the current row of s: the attempt's id, time, outcome, and
 * its figure's kind and bytes, from column 0; of the signature given.
 * False for a kind a later xlaunch wrote. */
static bool read_point(struct calib_store *st, struct calib_stmt *s, const char *signature,
		       const char *coords, const char *parts, struct calib_point *p)
{
	enum xl_outcome o = XL_OUT_ERROR;
	const char *kind = COL_TEXT(st, s, 3);

	/* an attempt without figures comes once, with no kind */
	if (!kind)
		p->kind = CALIB_KIND_COUNT;
	else if (!calib_kind_parse(kind, &p->kind))
		return false;
	xl_outcome_parse(COL_TEXT(st, s, 2), &o);
	p->attempt = COL_TEXT(st, s, 0);
	p->time = COL_REAL(st, s, 1);
	p->outcome = o;
	p->signature = signature;
	p->coords = coords;
	p->parts = parts;
	p->bytes = kind ? COL_INT(st, s, 4) : 0;
	return true;
}

/* The points of one signature (the row of sigs) from s. */
static int sig_points(struct calib_store *st, struct calib_stmt *sigs, struct calib_stmt *s,
		      calib_point_fn *fn, void *arg)
{
	const char *hash = COL_TEXT(st, sigs, 0);
	int rc, r = 0;

	st->drv->reset(s);
	TEXT(st, s, 1, hash);
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		struct calib_point p;

		if (read_point(st, s, hash, COL_TEXT(st, sigs, 1), COL_TEXT(st, sigs, 2), &p))
			r = fn(&p, arg);
	}
	return r ? r : rc;
}

/* bounded whatever the store holds: at most CALIB_FAMILY_SIGS signatures of
 * the family (index on family and stack), and of each the newest
 * CALIB_FAMILY_PER_SIG attempts that say anything of memory (index on
 * signature and time), with their observed figures */
static int q_family_points(struct calib_store *st, const char *family, const char *stack,
			   calib_point_fn *fn, void *arg)
{
	const char *what = "cannot read past launches";
	struct calib_stmt *sigs, *s;
	int rc, r = 0;

	sigs = prepare(st, "SELECT hash, coords, json FROM signatures WHERE family_hash = $1"
		       " AND stack_hash = $2 ORDER BY first_seen DESC, hash LIMIT "
		       NUM_STR(CALIB_FAMILY_SIGS), what);
	s = sigs ? prepare(st, "SELECT r.id, r.time, r.outcome, f.kind, f.bytes FROM (SELECT id, time,"
			   " outcome, @seq AS n FROM attempts WHERE signature = $1"
			   " AND outcome IN ('ok', 'compile-storm', 'oom')"
			   " ORDER BY time DESC, @seq DESC LIMIT " NUM_STR(CALIB_FAMILY_PER_SIG) ") r"
			   " LEFT JOIN figures f ON f.attempt = r.id AND f.role = 'observed'"
			   " ORDER BY r.time DESC, r.n DESC, f.kind", what) : NULL;
	if (!s) {
		finalize(st, sigs);
		return XL_EX_CANTCREAT;
	}
	TEXT(st, sigs, 1, family);
	TEXT(st, sigs, 2, stack);
	while (r == 0 && (rc = STEP(st, sigs)) == CALIB_ROW)
		r = sig_points(st, sigs, s, fn, arg);
	finalize(st, s);
	finalize(st, sigs);
	return r ? r : rc;
}

/* How many successful attempts with observed figures the family has on
 * other stacks, by sql ($1 the family, $2 the stack). */
static int other_stacks(struct calib_store *st, const char *sql, const char *family,
			const char *stack, unsigned *n)
{
	struct calib_stmt *s;
	int rc;

	*n = 0;
	if (!(s = prepare(st, sql, "cannot read past launches")))
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, family);
	TEXT(st, s, 2, stack);
	if ((rc = STEP(st, s)) == CALIB_ROW) {
		*n = (unsigned)COL_INT(st, s, 0);
		rc = 0;
	}
	finalize(st, s);
	return rc;
}

static int q_family_other_stacks(struct calib_store *st, const char *family, const char *stack,
				 unsigned *n)
{
	return other_stacks(st, "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN attempts a"
			    " WHERE s.family_hash = $1 AND s.stack_hash IS DISTINCT FROM CAST($2 AS TEXT)"
			    " AND a.signature = s.hash AND a.outcome IN ('ok', 'compile-storm')"
			    " AND a.observed_bytes > 0 LIMIT 1000) x", family, stack, n);
}

static int pg_family_other_stacks(struct calib_store *st, const char *family, const char *stack,
				  unsigned *n)
{
	return other_stacks(st, "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN LATERAL"
			    " (SELECT 1 FROM attempts b WHERE b.signature = s.hash"
			    " AND b.outcome IN ('ok', 'compile-storm') AND b.observed_bytes > 0"
			    " LIMIT 1000) a WHERE s.family_hash = $1"
			    " AND s.stack_hash IS DISTINCT FROM $2::text LIMIT 1000) x", family, stack, n);
}

/* The same points in one statement on PostgreSQL, the signature's columns
 * in each row (5, 6, 7). */
static int pg_family_points(struct calib_store *st, const char *family, const char *stack,
			    calib_point_fn *fn, void *arg)
{
	struct calib_stmt *s;
	int rc, r = 0;

	s = prepare(st, "SELECT r.id, r.time, r.outcome, f.kind, f.bytes, s.hash, s.coords, s.json"
		    " FROM (SELECT hash, coords, json, first_seen FROM signatures"
		    " WHERE family_hash = $1 AND stack_hash = $2 ORDER BY first_seen DESC, hash"
		    " LIMIT " NUM_STR(CALIB_FAMILY_SIGS) ") s"
		    " CROSS JOIN LATERAL (SELECT b.id, b.time, b.outcome, b.seq FROM attempts b"
		    " WHERE b.signature = s.hash AND b.outcome IN ('ok', 'compile-storm', 'oom')"
		    " ORDER BY b.time DESC, b.seq DESC LIMIT " NUM_STR(CALIB_FAMILY_PER_SIG) ") r"
		    " LEFT JOIN figures f ON f.attempt = r.id AND f.role = 'observed'"
		    " ORDER BY s.first_seen DESC, s.hash, r.time DESC, r.seq DESC, f.kind",
		    "cannot read past launches");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, family);
	TEXT(st, s, 2, stack);
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		struct calib_point p;

		if (read_point(st, s, COL_TEXT(st, s, 5), COL_TEXT(st, s, 6), COL_TEXT(st, s, 7), &p))
			r = fn(&p, arg);
	}
	finalize(st, s);
	return r ? r : rc;
}

static int q_last_parts(struct calib_store *st, const char *profile, char **parts, char **id)
{
	struct calib_stmt *s;
	int rc;

	*parts = *id = NULL;
	s = prepare(st, "SELECT s.json, a.id FROM attempts a JOIN signatures s ON s.hash = a.signature"
		    " WHERE a.profile = $1 AND s.scheme >= 2 AND s.json IS NOT NULL"
		    " ORDER BY a.time DESC, a.@seq DESC LIMIT 1", "cannot read past launches");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, profile);
	if ((rc = STEP(st, s)) == CALIB_ROW) {
		*parts = col_dup(st, s, 0);
		*id = col_dup(st, s, 1);
		rc = 0;
	}
	finalize(st, s);
	return rc;
}

/* ---- jobs of several ranks ---------------------------------------------------------- */

static int q_job_choose(struct calib_store *st, const char *job_id, const char *candidate,
			const char *signature, int64_t rank, char **chosen, char **chosen_sig)
{
	const char *what = "cannot publish the job's candidate";
	struct calib_stmt *ins, *sel;
	int rc;

	*chosen = *chosen_sig = NULL;
	ins = prepare(st, "INSERT INTO job_choices (job_id, candidate, signature, rank, host, time)"
		      " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING", what);
	sel = ins ? prepare(st, "SELECT candidate, signature FROM job_choices WHERE job_id = $1",
			    what) : NULL;
	if (!sel) {
		finalize(st, ins);
		return XL_EX_CANTCREAT;
	}
	TEXT(st, ins, 1, job_id);
	TEXT(st, ins, 2, candidate);
	TEXT(st, ins, 3, signature);
	INT(st, ins, 4, rank);
	TEXT(st, ins, 5, xl_hostname());
	REAL(st, ins, 6, xl_now());
	TEXT(st, sel, 1, job_id);
	if ((rc = st->drv->begin(st, false)))
		goto out;
	if ((rc = STEP(st, ins)) || (rc = STEP(st, sel)) > 0)
		goto fail;
	if (rc == CALIB_DONE) {
		rc = calib_fail(st, XL_EX_CANTCREAT, "%s: no choice after publishing one", what);
		goto fail;
	}
	*chosen = col_dup(st, sel, 0);
	*chosen_sig = col_dup(st, sel, 1);
	st->drv->reset(sel);
	if ((rc = st->drv->commit(st)) == 0)
		goto out;
fail:
	st->drv->rollback(st);
	free(*chosen);
	free(*chosen_sig);
	*chosen = *chosen_sig = NULL;
out:
	finalize(st, ins);
	finalize(st, sel);
	return rc;
}

/* ---- ranks watching each other ------------------------------------------------------------ */

/* The clock of these is the client's; on PostgreSQL it is the server's
 * (SERVER_NOW): hosts of one job may disagree on the time. */
#define SERVER_NOW "extract(epoch FROM clock_timestamp())::double precision"

/* A rank's row started, by sql ($7 the client's time, $8 the lease);
 * *started is the time the statement returns, else the client's. */
static int rank_begin(struct calib_store *st, const char *sql, const char *job_id, int64_t rank,
		      int64_t world, const char *run_id, double lease_s, double *started)
{
	struct calib_stmt *s;
	double now = xl_now();
	int rc;

	if (!(s = prepare(st, sql, "cannot start the rank's lease")))
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, job_id);
	INT(st, s, 2, rank);
	INT(st, s, 3, world);
	TEXT(st, s, 4, xl_hostname());
	INT(st, s, 5, (int64_t)getpid());
	TEXT(st, s, 6, run_id);
	REAL(st, s, 7, now);
	REAL(st, s, 8, lease_s);
	*started = now;
	if ((rc = STEP(st, s)) == CALIB_ROW) {
		*started = COL_REAL(st, s, 0);
		rc = STEP(st, s);
	}
	finalize(st, s);
	return rc;
}

#define RANK_RESTART \
	" ON CONFLICT (job_id, rank) DO UPDATE SET world = excluded.world," \
	" host = excluded.host, pid = excluded.pid, run_id = excluded.run_id," \
	" started = excluded.started, renewed = excluded.renewed," \
	" expires = excluded.expires, ended = NULL, outcome = NULL, exit_status = NULL," \
	" peer_rank = NULL, peer_outcome = NULL"

static int q_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
			const char *run_id, double lease_s, double *started)
{
	return rank_begin(st, "INSERT INTO job_ranks (job_id, rank, world, host, pid, run_id, started,"
			  " renewed, expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7 + $8)"
			  RANK_RESTART, job_id, rank, world, run_id, lease_s, started);
}

static int pg_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
			 const char *run_id, double lease_s, double *started)
{
	return rank_begin(st, "INSERT INTO job_ranks (job_id, rank, world, host, pid, run_id, started,"
			  " renewed, expires) SELECT $1, $2, $3, $4, $5, $6, t, t, t + $8"
			  " FROM (SELECT " SERVER_NOW " AS t) n" RANK_RESTART " RETURNING started",
			  job_id, rank, world, run_id, lease_s, started);
}

/* The first bad end of another rank since $4 (any outcome but ok and
 * compile-storm: a storm's process ended well), then ($5) the first lease of
 * another rank without an end that ran out before $3 and at or after $4:
 * a probe of job_ranks_bad and one of job_ranks_live. */
static const char q_peer[] =
	"SELECT * FROM (SELECT 0, rank, outcome, ended, host FROM job_ranks"
	" WHERE job_id = $1 AND outcome <> 'ok' AND outcome <> 'compile-storm'"
	" AND ended >= $4 AND rank <> $2 ORDER BY ended LIMIT 1) e"
	" UNION ALL SELECT * FROM (SELECT 1, rank, NULL, expires, host FROM job_ranks"
	" WHERE job_id = $1 AND ended IS NULL AND expires >= $4 AND expires < $3 AND rank <> $2"
	" AND $5 = 1 ORDER BY expires LIMIT 1) l";

static void read_peer(struct calib_store *st, struct calib_stmt *s, struct calib_peer_end *out)
{
	const char *host = COL_TEXT(st, s, 4);

	out->found = true;
	out->lapsed = COL_INT(st, s, 0) != 0;
	out->rank = COL_INT(st, s, 1);
	if (!out->lapsed) {
		int o = calib_peer_outcome_parse(COL_TEXT(st, s, 2));

		out->outcome = o >= 0 && o < XL_OUT_COUNT ? (enum xl_outcome)o : XL_OUT_ERROR;
	}
	out->when = COL_REAL(st, s, 3);
	snprintf(out->host, sizeof(out->host), "%s", host ? host : "");
}

static int q_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
		       double since, bool judge_leases, struct calib_peer_end *out)
{
	struct calib_stmt *upd, *sel;
	double now = xl_now();
	int rc;

	upd = prepare(st, "UPDATE job_ranks SET renewed = $3, expires = $3 + $4"
		      " WHERE job_id = $1 AND rank = $2 AND ended IS NULL",
		      "cannot renew the rank's lease");
	sel = upd ? prepare(st, q_peer, "cannot read the job's ranks") : NULL;
	if (!sel) {
		finalize(st, upd);
		return XL_EX_CANTCREAT;
	}
	TEXT(st, upd, 1, job_id);
	INT(st, upd, 2, rank);
	REAL(st, upd, 3, now);
	REAL(st, upd, 4, lease_s);
	TEXT(st, sel, 1, job_id);
	INT(st, sel, 2, rank);
	REAL(st, sel, 3, now);
	REAL(st, sel, 4, since);
	INT(st, sel, 5, judge_leases);
	out->now = now;
	/* the end row comes first: an end wins over a lapse */
	if ((rc = run_done(st, upd)) == 0 && (rc = STEP(st, sel)) == CALIB_ROW) {
		read_peer(st, sel, out);
		rc = 0;
	}
	finalize(st, sel);
	return rc;
}

/* One round trip on PostgreSQL, on the server's clock: the renewal, then
 * the probes of q_peer as rows of kind 0 (an end) and 1 (a lapse), and a
 * row of kind 2; each row's sixth column is the server's time. */
static const char q_pg_rank_poll[] =
	"WITH n AS (SELECT " SERVER_NOW " AS t),"
	" renew AS (UPDATE job_ranks SET renewed = n.t, expires = n.t + $3 FROM n"
	" WHERE job_id = $1 AND rank = $2 AND ended IS NULL)"
	" (SELECT 0, rank, outcome, ended, host, (SELECT t FROM n) FROM job_ranks"
	" WHERE job_id = $1 AND outcome <> 'ok' AND outcome <> 'compile-storm'"
	" AND ended >= $4 AND rank <> $2"
	" ORDER BY ended LIMIT 1)"
	" UNION ALL (SELECT 1, rank, NULL, expires, host, (SELECT t FROM n) FROM job_ranks"
	" WHERE job_id = $1 AND ended IS NULL AND expires >= $4 AND expires < (SELECT t FROM n)"
	" AND rank <> $2"
	" AND $5 = 1 ORDER BY expires LIMIT 1)"
	" UNION ALL (SELECT 2, NULL, NULL, NULL, NULL, t FROM n)";

static int pg_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
			double since, bool judge_leases, struct calib_peer_end *out)
{
	struct calib_stmt *s = prepare(st, q_pg_rank_poll, "cannot read the job's ranks");
	int rc;

	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, job_id);
	INT(st, s, 2, rank);
	REAL(st, s, 3, lease_s);
	REAL(st, s, 4, since);
	INT(st, s, 5, judge_leases);
	while ((rc = STEP(st, s)) == CALIB_ROW) {
		int64_t kind = COL_INT(st, s, 0);

		out->now = COL_REAL(st, s, 5);
		/* an end wins over a lapse */
		if (kind != 2 && (!out->found || (out->lapsed && kind == 0)))
			read_peer(st, s, out);
	}
	finalize(st, s);
	return rc;
}

/* A rank's end, by sql ($3 the client's time). */
static int rank_end(struct calib_store *st, const char *sql, const char *job_id, int64_t rank,
		    const char *outcome, int64_t exit_status, int64_t peer_rank,
		    const char *peer_outcome)
{
	struct calib_stmt *s;

	if (!(s = prepare(st, sql, "cannot write the rank's end")))
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, job_id);
	INT(st, s, 2, rank);
	REAL(st, s, 3, xl_now());
	TEXT(st, s, 4, outcome);
	INT(st, s, 5, exit_status);
	INT(st, s, 6, peer_rank);
	TEXT(st, s, 7, peer_outcome);
	return run_done(st, s);
}

static int q_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		      const char *outcome, int64_t exit_status, int64_t peer_rank,
		      const char *peer_outcome)
{
	return rank_end(st, "UPDATE job_ranks SET ended = $3, outcome = $4, exit_status = $5,"
			" peer_rank = $6, peer_outcome = $7 WHERE job_id = $1 AND rank = $2",
			job_id, rank, outcome, exit_status, peer_rank, peer_outcome);
}

static int pg_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		       const char *outcome, int64_t exit_status, int64_t peer_rank,
		       const char *peer_outcome)
{
	return rank_end(st, "UPDATE job_ranks SET ended = " SERVER_NOW ", outcome = $4,"
			" exit_status = $5, peer_rank = $6, peer_outcome = $7"
			" WHERE job_id = $1 AND rank = $2",
			job_id, rank, outcome, exit_status, peer_rank, peer_outcome);
}

static int q_job_ranks(struct calib_store *st, const char *job, calib_job_rank_fn *fn, void *arg)
{
	struct calib_stmt *s;
	int rc, r = 0;

	s = prepare(st, "SELECT job_id, rank, world, host, run_id, started, renewed, expires, ended,"
		    " outcome, exit_status, peer_rank, peer_outcome FROM job_ranks"
		    " WHERE job_id = $1 OR (job_id >= $1 || '#' AND job_id < $1 || '$')"
		    " ORDER BY job_id, ended IS NULL, ended, rank", "cannot read the job's ranks");
	if (!s)
		return XL_EX_CANTCREAT;
	TEXT(st, s, 1, job);
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW) {
		struct calib_job_rank jr;

		jr.job_id = COL_TEXT(st, s, 0);
		jr.rank = COL_INT(st, s, 1);
		jr.world = COL_INT(st, s, 2);
		jr.host = COL_TEXT(st, s, 3);
		jr.run_id = COL_TEXT(st, s, 4);
		jr.started = COL_REAL(st, s, 5);
		jr.renewed = COL_REAL(st, s, 6);
		jr.expires = COL_REAL(st, s, 7);
		jr.ended = COL_REAL(st, s, 8);
		jr.outcome = calib_peer_outcome_parse(COL_TEXT(st, s, 9));
		if (jr.outcome == XL_OUT_COUNT)
			jr.outcome = -1;
		jr.exit_status = COL_INT(st, s, 10);
		jr.peer_rank = COL_INT(st, s, 11);
		jr.peer_outcome = calib_peer_outcome_parse(COL_TEXT(st, s, 12));
		r = fn(&jr, arg);
	}
	finalize(st, s);
	return r ? r : rc;
}

/* ---- report queries ---------------------------------------------------------------------- */

/* The attempt filter of the report queries: $1 the profile ("" is attempts
 * without one), $2 the lower bound of time. */
static void report_where(struct xl_buf *q, const struct calib_report_filter *f)
{
	if (f->profile && *f->profile)
		xl_buf_adds(q, " AND a.profile = $1");
	else if (f->profile)
		xl_buf_adds(q, " AND a.profile IS NULL");
	if (!isnan(f->since))
		xl_buf_adds(q, " AND a.time >= $2");
}

static struct calib_stmt *report_prepare(struct calib_store *st, struct xl_buf *q,
					 const struct calib_report_filter *f)
{
	struct calib_stmt *s = prepare_buf(st, q, "cannot read the store for the report");

	if (s && f->profile && *f->profile)
		TEXT(st, s, 1, f->profile);
	if (s && !isnan(f->since))
		REAL(st, s, 2, f->since);
	return s;
}

typedef int report_row_fn(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg);

/* Steps s through row(s, fn, arg) until done, and finalizes it. */
static int report_rows(struct calib_store *st, struct calib_stmt *s, report_row_fn *row,
		       void *fn, void *arg)
{
	int rc, r = 0;

	if (!s)
		return XL_EX_CANTCREAT;
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW)
		r = row(st, s, fn, arg);
	finalize(st, s);
	return r ? r : rc;
}

static int profile_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_report_profile p = {
		COL_TEXT(st, s, 0), COL_INT(st, s, 1), COL_REAL(st, s, 2), COL_REAL(st, s, 3),
	};

	return ((calib_report_profile_fn *)fn)(&p, arg);
}

static int q_report_profiles(struct calib_store *st, const struct calib_report_filter *f,
			     long long limit, calib_report_profile_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;

	xl_buf_adds(&q, "SELECT a.profile, count(*), min(a.time), max(a.time) FROM attempts a"
			" WHERE true");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY a.profile ORDER BY max(a.time) DESC, a.profile");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	return report_rows(st, report_prepare(st, &q, f), profile_row, (void *)fn, arg);
}

static int timeline_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_timeline_bin b;
	enum xl_outcome o = XL_OUT_ERROR;

	xl_outcome_parse(COL_TEXT(st, s, 1), &o);
	b.bin = COL_INT(st, s, 0);
	b.outcome = o;
	b.attempts = COL_INT(st, s, 2);
	b.time_min = COL_REAL(st, s, 3);
	b.time_max = COL_REAL(st, s, 4);
	b.wall_mean = COL_REAL(st, s, 5);
	b.wall_max = COL_REAL(st, s, 6);
	b.compiles = COL_INT(st, s, 7);
	b.cache_hits = COL_INT(st, s, 8);
	b.compiles_known = COL_INT(st, s, 9);
	b.cache_known = COL_INT(st, s, 10);
	return ((calib_timeline_fn *)fn)(&b, arg);
}

/* bins toward zero */
static int q_report_timeline(struct calib_store *st, const struct calib_report_filter *f,
			     double t0, double width, calib_timeline_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "SELECT CAST(trunc((a.time - $3) / $4) AS BIGINT) AS b, a.outcome, count(*),"
			" min(a.time), max(a.time), avg(a.wall_s), max(a.wall_s),"
			" coalesce(sum(a.compile_count), 0), coalesce(sum(a.cache_hits), 0),"
			" count(a.compile_count), count(a.cache_hits) FROM attempts a WHERE true");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY b, a.outcome ORDER BY b, a.outcome");
	if ((s = report_prepare(st, &q, f))) {
		REAL(st, s, 3, t0);
		REAL(st, s, 4, width);
	}
	return report_rows(st, s, timeline_row, (void *)fn, arg);
}

static int stack_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_report_stack r = {
		COL_TEXT(st, s, 0), COL_TEXT(st, s, 1), COL_INT(st, s, 2), COL_REAL(st, s, 3),
		COL_REAL(st, s, 4),
	};

	return ((calib_report_stack_fn *)fn)(&r, arg);
}

static int q_report_stacks(struct calib_store *st, const struct calib_report_filter *f,
			   calib_report_stack_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;

	xl_buf_adds(&q, "SELECT s.stack_hash, s.hardware_kind, count(*), min(a.time), max(a.time)"
			" FROM attempts a JOIN signatures s ON s.hash = a.signature WHERE true");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY s.stack_hash, s.hardware_kind ORDER BY min(a.time)");
	return report_rows(st, report_prepare(st, &q, f), stack_row, (void *)fn, arg);
}

static int pvo_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_pvo_bin b;
	enum xl_outcome o = XL_OUT_ERROR;

	if (!calib_kind_parse(COL_TEXT(st, s, 0), &b.kind))
		return 0;
	xl_outcome_parse(COL_TEXT(st, s, 1), &o);
	b.outcome = o;
	b.attempts = COL_INT(st, s, 4);
	b.predicted = COL_REAL(st, s, 5);
	b.observed = COL_REAL(st, s, 6);
	return ((calib_pvo_fn *)fn)(&b, arg);
}

static int q_report_pvo(struct calib_store *st, const struct calib_report_filter *f,
			int bins_per_e, calib_pvo_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "SELECT o.kind, a.outcome,"
			" CAST(trunc(ln(CAST(p.bytes AS DOUBLE PRECISION)) * $3) AS BIGINT) AS bp,"
			" CAST(trunc(ln(CAST(o.bytes AS DOUBLE PRECISION)) * $3) AS BIGINT) AS bo,"
			" count(*), avg(p.bytes), avg(o.bytes)"
			" FROM figures p JOIN figures o ON o.attempt = p.attempt AND o.role = 'observed'"
			" AND o.kind = p.kind JOIN attempts a ON a.id = p.attempt"
			" WHERE p.role = 'predicted' AND p.bytes > 0 AND o.bytes > 0");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY o.kind, a.outcome, bp, bo ORDER BY o.kind, a.outcome, bp, bo");
	if ((s = report_prepare(st, &q, f)))
		REAL(st, s, 3, bins_per_e);
	return report_rows(st, s, pvo_row, (void *)fn, arg);
}

static int source_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_report_source r;

	if (!calib_kind_parse(COL_TEXT(st, s, 0), &r.kind))
		return 0;
	r.predicted = xl_streq(COL_TEXT(st, s, 1), "predicted");
	r.source = COL_TEXT(st, s, 2);
	r.figures = COL_INT(st, s, 3);
	return ((calib_report_source_fn *)fn)(&r, arg);
}

static int q_report_sources(struct calib_store *st, const struct calib_report_filter *f,
			    calib_report_source_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;

	xl_buf_adds(&q, "SELECT f.kind, f.role, f.source, count(*) FROM figures f");
	if (f->profile || !isnan(f->since))
		xl_buf_adds(&q, " JOIN attempts a ON a.id = f.attempt");
	xl_buf_adds(&q, " WHERE true");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY f.kind, f.role, f.source ORDER BY count(*) DESC, f.kind, f.role,"
			" f.source@bin LIMIT 200");
	return report_rows(st, report_prepare(st, &q, f), source_row, (void *)fn, arg);
}

/* The families' query (SELECT family, stack, attempts, signatures, last,
 * then more): its FROM, filter, order and limit. */
static void families_from(struct xl_buf *q, const struct calib_report_filter *f, long long limit)
{
	xl_buf_adds(q, " FROM attempts a JOIN signatures s ON s.hash = a.signature"
		       " WHERE s.family_hash IS NOT NULL");
	report_where(q, f);
	xl_buf_adds(q, " GROUP BY s.family_hash, s.stack_hash ORDER BY max(a.time) DESC,"
		       " s.family_hash");
	if (limit > 0)
		xl_buf_addf(q, " LIMIT %lld", limit);
}

/* A family of the current row of s (columns 0 to 4), its profile and parts
 * from columns 5 and 6 of latest, or of s when latest is NULL. */
static int family_row(struct calib_store *st, struct calib_stmt *s, struct calib_stmt *latest,
		      calib_report_family_fn *fn, void *arg)
{
	struct calib_report_family fa = {
		COL_TEXT(st, s, 0), COL_TEXT(st, s, 1), COL_INT(st, s, 2), COL_INT(st, s, 3),
		COL_REAL(st, s, 4), NULL, NULL,
	};
	int rc = CALIB_ROW;

	if (latest) {
		st->drv->reset(latest);
		TEXT(st, latest, 3, fa.family);
		TEXT(st, latest, 4, fa.stack);
		rc = STEP(st, latest);
	}
	if (rc == CALIB_ROW) {
		fa.profile = COL_TEXT(st, latest ? latest : s, latest ? 0 : 5);
		fa.parts = COL_TEXT(st, latest ? latest : s, latest ? 1 : 6);
	} else if (rc) {
		return rc;
	}
	return fn(&fa, arg);
}

/* The families, then of each the profile and parts of its latest attempt
 * ($3, $4), a statement for each. */
static int q_report_families(struct calib_store *st, const struct calib_report_filter *f,
			     long long limit, calib_report_family_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT, q2 = XL_BUF_INIT;
	struct calib_stmt *s, *latest;
	int rc, r = 0;

	xl_buf_adds(&q, "SELECT s.family_hash, s.stack_hash, count(*), count(DISTINCT s.hash),"
			" max(a.time)");
	families_from(&q, f, limit);
	xl_buf_adds(&q2, "SELECT a.profile, s.json FROM signatures s JOIN attempts a"
			 " ON a.signature = s.hash WHERE s.family_hash = $3"
			 " AND s.stack_hash IS NOT DISTINCT FROM CAST($4 AS TEXT)");
	report_where(&q2, f);
	xl_buf_adds(&q2, " ORDER BY a.time DESC, a.@seq DESC LIMIT 1");
	s = report_prepare(st, &q, f);
	latest = s ? report_prepare(st, &q2, f) : (xl_buf_release(&q2), NULL);
	if (!latest) {
		finalize(st, s);
		return XL_EX_CANTCREAT;
	}
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW)
		r = family_row(st, s, latest, fn, arg);
	finalize(st, latest);
	finalize(st, s);
	return r ? r : rc;
}

/* The same in one statement on PostgreSQL (LATERAL). */
static int pg_report_families(struct calib_store *st, const struct calib_report_filter *f,
			      long long limit, calib_report_family_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;
	int rc, r = 0;

	xl_buf_adds(&q, "SELECT g.family_hash, g.stack_hash, g.n, g.nsig, g.last, l.profile, l.json"
			" FROM (SELECT s.family_hash, s.stack_hash, count(*) AS n,"
			" count(DISTINCT s.hash) AS nsig, max(a.time) AS last");
	families_from(&q, f, limit);
	xl_buf_adds(&q, ") g LEFT JOIN LATERAL (SELECT a.profile, s.json FROM signatures s"
			" JOIN attempts a ON a.signature = s.hash WHERE s.family_hash = g.family_hash"
			" AND s.stack_hash IS NOT DISTINCT FROM g.stack_hash");
	report_where(&q, f);
	xl_buf_adds(&q, " ORDER BY a.time DESC, a.seq DESC LIMIT 1) l ON true"
			" ORDER BY g.last DESC, g.family_hash");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	while (r == 0 && (rc = STEP(st, s)) == CALIB_ROW)
		r = family_row(st, s, NULL, fn, arg);
	finalize(st, s);
	return r ? r : rc;
}

static int member_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	struct calib_report_member m;
	enum xl_outcome o = XL_OUT_ERROR;
	const char *kind = COL_TEXT(st, s, 4);

	if (!kind)
		m.kind = CALIB_KIND_COUNT;
	else if (!calib_kind_parse(kind, &m.kind))
		return 0;
	xl_outcome_parse(COL_TEXT(st, s, 3), &o);
	m.signature = COL_TEXT(st, s, 0);
	m.coords = COL_TEXT(st, s, 1);
	m.parts = COL_TEXT(st, s, 2);
	m.outcome = o;
	m.attempts = COL_INT(st, s, 5);
	m.min_bytes = COL_INT(st, s, 6);
	m.max_bytes = COL_INT(st, s, 7);
	m.mean_bytes = COL_REAL(st, s, 8);
	return ((calib_report_member_fn *)fn)(&m, arg);
}

static int q_report_members(struct calib_store *st, const struct calib_report_filter *f,
			    const char *family, const char *stack, long long limit,
			    calib_report_member_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "SELECT s.hash, s.coords, s.json, a.outcome, f.kind, count(*), min(f.bytes),"
			" max(f.bytes), avg(f.bytes) FROM (SELECT hash, coords, json FROM signatures"
			" WHERE family_hash = $3 AND stack_hash IS NOT DISTINCT FROM CAST($4 AS TEXT)"
			" ORDER BY first_seen DESC, hash");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	xl_buf_adds(&q, ") s JOIN attempts a ON a.signature = s.hash LEFT JOIN figures f"
			" ON f.attempt = a.id AND f.role = 'observed' WHERE true");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY s.hash, s.coords, s.json, a.outcome, f.kind"
			" ORDER BY s.hash, a.outcome, f.kind");
	if ((s = report_prepare(st, &q, f))) {
		TEXT(st, s, 3, family);
		TEXT(st, s, 4, stack);
	}
	return report_rows(st, s, member_row, (void *)fn, arg);
}

static int probe_row(struct calib_store *st, struct calib_stmt *s, void *fn, void *arg)
{
	const char *text = COL_TEXT(st, s, 2);
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	struct calib_report_probe p = { COL_TEXT(st, s, 0), COL_REAL(st, s, 1), doc };
	int rc = doc ? ((calib_report_probe_fn *)fn)(&p, arg) : 0;

	json_decref(doc);
	return rc;
}

static int q_report_probes(struct calib_store *st, const struct calib_report_filter *f,
			   calib_report_probe_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_stmt *s;

	xl_buf_adds(&q, "SELECT p.host, p.time, p.doc FROM probes p WHERE p.id ="
			" (SELECT q.id FROM probes q WHERE q.host = p.host");
	if (!isnan(f->since))
		xl_buf_adds(&q, " AND q.time >= $1");
	xl_buf_adds(&q, " ORDER BY q.time DESC, q.id DESC LIMIT 1) ORDER BY p.host");
	s = prepare_buf(st, &q, "cannot read probes");
	if (s && !isnan(f->since))
		REAL(st, s, 1, f->since);
	return report_rows(st, s, probe_row, (void *)fn, arg);
}

const struct calib_ops calib_queries = {
	.record_attempt = q_record_attempt,
	.record_probe = q_record_probe,
	.history = q_history,
	.stats = q_stats,
	.resolve_signature = q_resolve_signature,
	.forget = q_forget,
	.export = q_export,
	.latest_hardware = q_latest_hardware,
	.latest_attempt = q_latest_attempt,
	.latest_same_shape = q_latest_same_shape,
	.family_points = q_family_points,
	.family_other_stacks = q_family_other_stacks,
	.last_parts = q_last_parts,
	.job_choose = q_job_choose,
	.rank_begin = q_rank_begin,
	.rank_poll = q_rank_poll,
	.rank_end = q_rank_end,
	.job_ranks = q_job_ranks,
	.report_profiles = q_report_profiles,
	.report_timeline = q_report_timeline,
	.report_stacks = q_report_stacks,
	.report_pvo = q_report_pvo,
	.report_sources = q_report_sources,
	.report_families = q_report_families,
	.report_members = q_report_members,
	.report_probes = q_report_probes,
};

const struct calib_ops calib_pg_queries = {
	.stats = pg_stats,
	.latest_same_shape = pg_latest_same_shape,
	.family_points = pg_family_points,
	.family_other_stacks = pg_family_other_stacks,
	.rank_begin = pg_rank_begin,
	.rank_poll = pg_rank_poll,
	.rank_end = pg_rank_end,
	.report_families = pg_report_families,
};
