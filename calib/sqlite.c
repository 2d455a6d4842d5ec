/* sqlite.c - the SQLite store backend: open, schema migrations, and every
 * read and write of the store in SQL (see calib/backend.h). */
#include "calib/backend.h"

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 5000
#define NUM_STR_(x) #x
#define NUM_STR(x) NUM_STR_(x)

struct sq {
	sqlite3 *db;
	int tx_depth;   /* begin nesting: only the outermost one talks to SQLite */
};

static sqlite3 *db_of(struct calib_store *st)
{
	return ((struct sq *)st->impl)->db;
}

/* As calib_fail with the SQLite error message appended after "what: ". */
static int sqlfail(struct calib_store *st, const char *what)
{
	int code = sqlite3_errcode(db_of(st)) & 0xff;

	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return calib_fail(st, XL_EX_CANTCREAT,
				  "%s: another process has held the store locked for more than %.0f s",
				  what, calib_wait_limit());
	return calib_fail(st, XL_EX_CANTCREAT, "%s: %s", what, sqlite3_errmsg(db_of(st)));
}

static bool busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* Sleeps a little, longer on each try, with some jitter so that many
 * waiting writers do not wake together. */
static void backoff(unsigned tries)
{
	unsigned ms = tries < 6 ? 1u << tries : 50;
	struct timespec ts;

	ms += (unsigned)(rand() % 7);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ms * 1000000L;
	nanosleep(&ts, NULL);
}

static int exec_retry(struct calib_store *st, const char *sql)
{
	double start = xl_mono();
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc = sqlite3_exec(db_of(st), sql, NULL, NULL, NULL);
		if (!busy(rc) || xl_mono() - start > calib_wait_limit())
			return rc;
		backoff(tries++);
	}
}

/* Prepares sql, retrying while busy; NULL on failure (st->err set). */
static sqlite3_stmt *prepare(struct calib_store *st, const char *sql)
{
	double start = xl_mono();
	unsigned tries = 0;
	sqlite3_stmt *stmt = NULL;
	int rc;

	for (;;) {
		rc = sqlite3_prepare_v2(db_of(st), sql, -1, &stmt, NULL);
		if (rc == SQLITE_OK)
			return stmt;
		if (!busy(rc) || xl_mono() - start > calib_wait_limit())
			break;
		backoff(tries++);
	}
	sqlfail(st, "cannot prepare a query");
	return NULL;
}

/* sqlite3_step retried while busy. */
static int step(sqlite3_stmt *stmt)
{
	double start = xl_mono();
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc = sqlite3_step(stmt);
		if (!busy(rc) || xl_mono() - start > calib_wait_limit())
			return rc;
		sqlite3_reset(stmt);
		backoff(tries++);
	}
}

/* ---- transactions ---------------------------------------------------------- */

/* BEGIN IMMEDIATE and COMMIT, retried while another connection holds the
 * write lock; nested calls join the outermost transaction. */
static int tx_begin(struct calib_store *st)
{
	struct sq *q = st->impl;

	if (q->tx_depth++ > 0)
		return 0;
	if (exec_retry(st, "BEGIN IMMEDIATE") != SQLITE_OK) {
		q->tx_depth = 0;
		return sqlfail(st, "cannot begin a transaction");
	}
	return 0;
}

static int tx_commit(struct calib_store *st)
{
	struct sq *q = st->impl;

	if (q->tx_depth > 1) {
		q->tx_depth--;
		return 0;
	}
	q->tx_depth = 0;
	if (exec_retry(st, "COMMIT") != SQLITE_OK)
		return sqlfail(st, "cannot commit");
	return 0;
}

static void tx_rollback(struct calib_store *st)
{
	struct sq *q = st->impl;

	q->tx_depth = 0;
	if (!sqlite3_get_autocommit(q->db))
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- schema ------------------------------------------------------------------ */

static int insert_backends(struct calib_store *st, sqlite3_int64 probe, const json_t *doc);

/* v0 -> v1: signatures, attempts, probe documents. */
static const char schema_v1[] =
	"CREATE TABLE signatures ("
	" hash TEXT PRIMARY KEY,"
	" shape_hash TEXT,"
	" stack_hash TEXT,"
	" hardware_kind TEXT,"
	" json TEXT,"
	" first_seen REAL NOT NULL);"
	"CREATE TABLE attempts ("
	" id TEXT PRIMARY KEY,"
	" time REAL NOT NULL,"
	" profile TEXT,"
	" candidate TEXT,"
	" signature TEXT NOT NULL REFERENCES signatures(hash) ON DELETE CASCADE,"
	" host TEXT,"
	" rank INTEGER,"
	" outcome TEXT NOT NULL,"
	" exit_status INTEGER,"
	" predicted_bytes INTEGER,"
	" observed_bytes INTEGER,"
	" wall_s REAL,"
	" compile_count INTEGER);"
	"CREATE TABLE probes ("
	" id INTEGER PRIMARY KEY,"
	" host TEXT NOT NULL,"
	" time REAL NOT NULL,"
	" doc TEXT NOT NULL);";

/* v1 -> v2: host peak RSS per attempt; probe backends as rows (filled from
 * the stored documents at schema 4); a unique id per probe so that imports
 * are idempotent (migrate_v2_backfill). */
static const char schema_v2[] =
	"ALTER TABLE attempts ADD COLUMN host_peak_rss_bytes INTEGER;"
	"ALTER TABLE probes ADD COLUMN uid TEXT;"
	"CREATE TABLE probe_backends ("
	" probe INTEGER NOT NULL REFERENCES probes(id) ON DELETE CASCADE,"
	" name TEXT NOT NULL,"
	" state TEXT,"
	" kind TEXT,"
	" count INTEGER,"
	" memory_bytes INTEGER);";

/* v2 -> v3: indexes for history, order, correction and probe queries. */
static const char schema_v3[] =
	"CREATE INDEX attempts_time ON attempts(time);"
	"CREATE INDEX attempts_signature_time ON attempts(signature, time);"
	"CREATE INDEX attempts_profile_time ON attempts(profile, time);"
	"CREATE INDEX attempts_host_time ON attempts(host, time);"
	"CREATE INDEX attempts_outcome_time ON attempts(outcome, time);"
	"CREATE INDEX signatures_shape ON signatures(shape_hash);"
	"CREATE INDEX signatures_kind_stack ON signatures(hardware_kind, stack_hash);"
	"CREATE INDEX probes_host_time ON probes(host, time);"
	"CREATE UNIQUE INDEX probes_uid ON probes(uid);"
	"CREATE INDEX probe_backends_probe ON probe_backends(probe);";

/* v3 -> v4: the kind of every figure and a table of figures (several per
 * attempt; what was recorded before is classified where it can be, and
 * marked unclassified where not); what later work fills (job id, cache
 * hits, time to the first step, details); signature schemes (old ones are
 * scheme 1) and families; probe backends grouped by device kind (refilled
 * from the stored documents by migrate_v4_backfill). */
static const char schema_v4[] =
	"ALTER TABLE attempts ADD COLUMN predicted_kind TEXT;"
	"ALTER TABLE attempts ADD COLUMN predicted_basis TEXT;"
	"ALTER TABLE attempts ADD COLUMN observed_kind TEXT;"
	"ALTER TABLE attempts ADD COLUMN job_id TEXT;"
	"ALTER TABLE attempts ADD COLUMN cache_hits INTEGER;"
	"ALTER TABLE attempts ADD COLUMN first_step_s REAL;"
	"ALTER TABLE attempts ADD COLUMN details TEXT;"
	"ALTER TABLE signatures ADD COLUMN scheme INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE signatures ADD COLUMN family_hash TEXT;"
	"ALTER TABLE signatures ADD COLUMN coords TEXT;"
	"ALTER TABLE probe_backends ADD COLUMN device_type TEXT;"
	"ALTER TABLE probe_backends ADD COLUMN memory_source TEXT;"
	"CREATE TABLE figures ("
	" attempt TEXT NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
	" role TEXT NOT NULL,"
	" kind TEXT NOT NULL,"
	" bytes INTEGER NOT NULL,"
	" basis TEXT,"
	" error_bytes INTEGER,"
	" source TEXT,"
	" PRIMARY KEY (attempt, role, kind));"
	"CREATE INDEX signatures_family ON signatures(family_hash, stack_hash);"
	"CREATE INDEX attempts_job ON attempts(job_id);"
	CALIB_V4_CLASSIFY;

/* v4 -> v5: the candidate each job launch runs, chosen once for all its
 * ranks (the first rank to plan publishes it, the others read it); merging
 * a job's ranks by job and signature. */
static const char schema_v5[] =
	"CREATE TABLE job_choices ("
	" job_id TEXT PRIMARY KEY,"
	" candidate TEXT,"
	" signature TEXT,"
	" rank INTEGER,"
	" host TEXT,"
	" time REAL NOT NULL);"
	"CREATE INDEX attempts_job_signature ON attempts(job_id, signature);";

/* v5 -> v6: the ranks of a job launch watching each other: one row per
 * rank, its lease (renewed by its supervisor while it lives) and its end.
 * A poll is two probes of partial indexes: the first bad end of the job,
 * the first lease to run out among the ranks without an end. */
static const char schema_v6[] =
	"CREATE TABLE job_ranks ("
	" job_id TEXT NOT NULL,"
	" rank INTEGER NOT NULL,"
	" world INTEGER,"
	" host TEXT,"
	" pid INTEGER,"
	" run_id TEXT,"
	" started REAL NOT NULL,"
	" renewed REAL NOT NULL,"
	" expires REAL NOT NULL,"
	" ended REAL,"
	" outcome TEXT,"
	" exit_status INTEGER,"
	" peer_rank INTEGER,"
	" peer_outcome TEXT,"
	" PRIMARY KEY (job_id, rank));"
	"CREATE INDEX job_ranks_bad ON job_ranks(job_id, ended) WHERE outcome <> 'ok';"
	"CREATE INDEX job_ranks_live ON job_ranks(job_id, expires) WHERE ended IS NULL;";


static int migrate_v2_backfill(struct calib_store *st)
{
	sqlite3_stmt *sel, *upd;
	int rc = 0;

	sel = prepare(st, "SELECT id, host, time, doc FROM probes");
	upd = prepare(st, "UPDATE probes SET uid = ? WHERE id = ?");
	if (!sel || !upd) {
		sqlite3_finalize(sel);
		sqlite3_finalize(upd);
		return XL_EX_CANTCREAT;
	}
	while (rc == 0 && sqlite3_step(sel) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(sel, 0);
		const char *host = (const char *)sqlite3_column_text(sel, 1);
		double t = sqlite3_column_double(sel, 2);
		const char *text = (const char *)sqlite3_column_text(sel, 3);
		char *uid = calib_probe_uid(host ? host : "", t, text ? text : "");

		sqlite3_bind_text(upd, 1, uid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(upd, 2, id);
		if (sqlite3_step(upd) != SQLITE_DONE)
			rc = sqlfail(st, "migration to schema 2");
		sqlite3_reset(upd);
		free(uid);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

/* The probe backends again from the stored documents, grouped by device
 * kind (schema 4). */
static int migrate_v4_backfill(struct calib_store *st)
{
	sqlite3_stmt *sel = prepare(st, "SELECT id, doc FROM probes");
	int rc = 0;

	if (!sel)
		return XL_EX_CANTCREAT;
	while (rc == 0 && sqlite3_step(sel) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(sel, 1);
		json_t *doc = json_loads(text ? text : "", 0, NULL);

		if (doc)
			rc = insert_backends(st, sqlite3_column_int64(sel, 0), doc);
		json_decref(doc);
	}
	sqlite3_finalize(sel);
	return rc;
}

static int user_version(struct calib_store *st, int *v)
{
	sqlite3_stmt *s = prepare(st, "PRAGMA user_version");
	int rc;

	if (!s)
		return XL_EX_CANTCREAT;
	rc = step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return sqlfail(st, "cannot read the schema version");
	return 0;
}

static int migrate(struct calib_store *st)
{
	int v, rc;

	if ((rc = user_version(st, &v)))
		return rc;
	if (v == CALIB_SCHEMA_VERSION)
		return 0;
	if (v > CALIB_SCHEMA_VERSION)
		return calib_fail(st, XL_EX_CANTCREAT,
				  "schema version %d is newer than this xlaunch knows (%d)",
				  v, CALIB_SCHEMA_VERSION);
	if (tx_begin(st))
		return sqlfail(st, "cannot lock for a schema migration");
	/* another process may have migrated while we waited for the lock */
	if ((rc = user_version(st, &v)))
		goto out;
	while (v < CALIB_SCHEMA_VERSION) {
		static const char *const steps[] = { schema_v1, schema_v2, schema_v3, schema_v4,
						     schema_v5, schema_v6 };
		const char *sql = steps[v];
		char pragma[64];

		if (sqlite3_exec(db_of(st), sql, NULL, NULL, NULL) != SQLITE_OK) {
			char *what = xl_asprintf("migration to schema %d", v + 1);

			rc = sqlfail(st, what);
			free(what);
			goto out;
		}
		if (v == 1 && (rc = migrate_v2_backfill(st)))
			goto out;
		if (v == 3 && (rc = migrate_v4_backfill(st)))
			goto out;
		v++;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v);
		if (sqlite3_exec(db_of(st), pragma, NULL, NULL, NULL) != SQLITE_OK) {
			rc = sqlfail(st, "cannot set the schema version");
			goto out;
		}
	}
	if (tx_commit(st))
		rc = sqlfail(st, "cannot commit a schema migration");
out:
	if (rc)
		tx_rollback(st);
	return rc;
}

static int sq_open(struct calib_store *st, const char *path, unsigned flags)
{
	struct sq *q = xl_calloc(1, sizeof(*q));
	sqlite3_stmt *s;
	char *dir;
	int rc, fd;

	st->impl = q;
	if (!path) {
		/* an empty store of no file (CALIB_OPEN_READONLY, none there) */
		if (sqlite3_open_v2(":memory:", &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK)
			return calib_fail(st, XL_EX_CANTCREAT, "cannot open an empty store");
		if (exec_retry(st, "PRAGMA foreign_keys = ON") != SQLITE_OK)
			return sqlfail(st, "cannot set up the connection");
		return migrate(st);
	}
	dir = xl_strdup(path);
	if (strrchr(dir, '/')) {
		char *slash = strrchr(dir, '/');

		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (!(flags & CALIB_OPEN_NOCREATE) && xl_mkdirs(dir, 0700) < 0) {
			rc = calib_fail(st, XL_EX_CANTCREAT, "cannot create directory '%s': %s",
					dir, strerror(errno));
			free(dir);
			return rc;
		}
	}
	free(dir);
	/* a file that is there is never opened and closed here: closing any
	 * descriptor of a file drops every POSIX lock this process holds on it,
	 * those of another connection to the same store included (SQLite's
	 * "posix advisory locks canceled by a separate close()"); only a file
	 * that is not there yet is created (0600) and closed */
	{
		struct stat sb;

		if (stat(path, &sb) == 0) {
			if (!S_ISREG(sb.st_mode))
				return calib_fail(st, XL_EX_CANTCREAT, "not a regular file");
			if (access(path, R_OK | W_OK) < 0)
				return calib_fail(st, XL_EX_CANTCREAT, "%s", strerror(errno));
		} else if (errno != ENOENT || (flags & CALIB_OPEN_NOCREATE)) {
			st->absent = errno == ENOENT;
			return calib_fail(st, XL_EX_CANTCREAT, "%s", strerror(errno));
		} else {
			fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0600);
			if (fd < 0)
				return calib_fail(st, XL_EX_CANTCREAT, "%s", strerror(errno));
			close(fd);
		}
	}
	if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return q->db ? sqlfail(st, "cannot open") : calib_fail(st, XL_EX_CANTCREAT, "cannot open");
	/* SQLite's own wait never outlasts the wait asked for */
	sqlite3_busy_timeout(q->db, calib_wait_limit() * 1000 < BUSY_TIMEOUT_MS
				    ? (int)(calib_wait_limit() * 1000) : BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(q->db, 1);
	/* journal_mode=WAL is persistent; it reads the header, so a file that
	 * is not a database fails here */
	s = prepare(st, "PRAGMA journal_mode = WAL");
	if (!s)
		return XL_EX_CANTCREAT;
	rc = step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return sqlfail(st, "cannot switch to WAL mode");
	if (exec_retry(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL") != SQLITE_OK)
		return sqlfail(st, "cannot set up the connection");
	return migrate(st);
}

static void sq_close(struct calib_store *st)
{
	struct sq *q = st->impl;

	if (!q)
		return;
	if (q->db)
		sqlite3_close_v2(q->db);
	free(q);
	st->impl = NULL;
}

/* ---- column helpers ---------------------------------------------------------- */

static char *col_dup(sqlite3_stmt *s, int col)
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	return v ? xl_strdup(v) : NULL;
}

static int64_t col_int(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? CALIB_UNSET : sqlite3_column_int64(s, col);
}

static void col_hash(sqlite3_stmt *s, int col, char hash[65])
{
	const char *v = (const char *)sqlite3_column_text(s, col);

	snprintf(hash, 65, "%s", v ? v : "");
}

static void bind_int(sqlite3_stmt *s, int col, int64_t v)
{
	if (v == CALIB_UNSET)
		sqlite3_bind_null(s, col);
	else
		sqlite3_bind_int64(s, col, v);
}

static const char *or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/* The attempt columns every full read selects, in this order. */
#define ATTEMPT_COLS \
	"a.id, a.time, a.profile, a.candidate, a.signature, a.host, a.rank, a.outcome," \
	" a.exit_status, a.predicted_bytes, a.observed_bytes, a.wall_s, a.compile_count," \
	" a.host_peak_rss_bytes, a.predicted_kind, a.predicted_basis, a.observed_kind," \
	" a.job_id, a.cache_hits, a.first_step_s, a.details"
#define NATTEMPT_COLS 21

/* Reads the ATTEMPT_COLS of a row into a (initialized; released first). */
static void read_attempt(sqlite3_stmt *s, struct calib_attempt *a)
{
	enum xl_outcome o = XL_OUT_ERROR;

	calib_attempt_release(a);
	calib_attempt_init(a);
	a->id = col_dup(s, 0);
	a->time = sqlite3_column_double(s, 1);
	a->profile = col_dup(s, 2);
	a->candidate = col_dup(s, 3);
	col_hash(s, 4, a->signature);
	a->host = col_dup(s, 5);
	a->rank = col_int(s, 6);
	xl_outcome_parse((const char *)sqlite3_column_text(s, 7), &o);
	a->outcome = o;
	a->exit_status = col_int(s, 8);
	a->predicted_bytes = col_int(s, 9);
	a->observed_bytes = col_int(s, 10);
	a->wall_s = sqlite3_column_type(s, 11) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 11);
	a->compile_count = col_int(s, 12);
	a->host_peak_rss_bytes = col_int(s, 13);
	if (!calib_kind_parse((const char *)sqlite3_column_text(s, 14), &a->predicted_kind))
		a->predicted_kind = CALIB_KIND_COUNT;
	if (!calib_basis_parse((const char *)sqlite3_column_text(s, 15), &a->predicted_basis))
		a->predicted_basis = CALIB_BASIS_NONE;
	if (!calib_kind_parse((const char *)sqlite3_column_text(s, 16), &a->observed_kind))
		a->observed_kind = CALIB_KIND_COUNT;
	a->job_id = col_dup(s, 17);
	a->cache_hits = col_int(s, 18);
	a->first_step_s = sqlite3_column_type(s, 19) == SQLITE_NULL ? NAN
								     : sqlite3_column_double(s, 19);
	a->details = col_dup(s, 20);
}

/* The figures of attempt a into a, with fig (SELECT role, kind, bytes,
 * basis, error_bytes, source FROM figures WHERE attempt = ?1) reused. */
static int read_figures(struct calib_store *st, sqlite3_stmt *fig, struct calib_attempt *a)
{
	int rc;

	sqlite3_reset(fig);
	sqlite3_bind_text(fig, 1, a->id, -1, SQLITE_TRANSIENT);
	while ((rc = step(fig)) == SQLITE_ROW) {
		enum calib_kind k;
		enum calib_basis b = CALIB_BASIS_NONE;
		const char *role = (const char *)sqlite3_column_text(fig, 0);

		if (!calib_kind_parse((const char *)sqlite3_column_text(fig, 1), &k))
			continue;   /* a kind a later xlaunch wrote */
		calib_basis_parse((const char *)sqlite3_column_text(fig, 3), &b);
		calib_attempt_add_figure(a, xl_streq(role, "predicted"), k, sqlite3_column_int64(fig, 2),
					 b, col_int(fig, 4), (const char *)sqlite3_column_text(fig, 5));
	}
	sqlite3_reset(fig);
	return rc == SQLITE_DONE ? 0 : sqlfail(st, "cannot read figures");
}

#define FIGURE_QUERY \
	"SELECT role, kind, bytes, basis, error_bytes, source FROM figures WHERE attempt = ?1" \
	" ORDER BY role, kind"

/* ---- recording attempts --------------------------------------------------------- */

static void bind_str(sqlite3_stmt *s, int col, const char *v)
{
	sqlite3_bind_text(s, col, v, -1, SQLITE_STATIC);
}

static int sq_record_attempt(struct calib_store *st, const struct calib_attempt *a,
			     const char *family, const char *coords)
{
	sqlite3_stmt *s1, *s2, *s3, *s4 = NULL;
	int rc = 0;

	s1 = prepare(st, "INSERT OR IGNORE INTO signatures (hash, shape_hash, stack_hash,"
			 " hardware_kind, json, first_seen, scheme, family_hash, coords)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	/* a signature first recorded without its parts gets them */
	s2 = prepare(st, "UPDATE signatures SET json = ?2, shape_hash = ?3, stack_hash = ?4,"
			 " hardware_kind = ?5, scheme = ?6, family_hash = ?7, coords = ?8"
			 " WHERE hash = ?1 AND json IS NULL AND ?2 IS NOT NULL");
	s3 = prepare(st, "INSERT OR IGNORE INTO attempts (id, time, profile, candidate,"
			 " signature, host, rank, outcome, exit_status, predicted_bytes,"
			 " observed_bytes, wall_s, compile_count, host_peak_rss_bytes, predicted_kind,"
			 " predicted_basis, observed_kind, job_id, cache_hits, first_step_s, details)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
			 " ?16, ?17, ?18, ?19, ?20, ?21)");
	if (a->nfigures)
		s4 = prepare(st, "INSERT INTO figures (attempt, role, kind, bytes, basis,"
				 " error_bytes, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (!s1 || !s2 || !s3 || (a->nfigures && !s4)) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	bind_str(s1, 1, a->signature);
	bind_str(s1, 2, or_null(a->shape_hash));
	bind_str(s1, 3, or_null(a->stack_hash));
	bind_str(s1, 4, a->hardware_kind);
	bind_str(s1, 5, a->signature_json);
	sqlite3_bind_double(s1, 6, a->time);
	sqlite3_bind_int(s1, 7, a->signature_scheme);
	bind_str(s1, 8, family);
	bind_str(s1, 9, coords);
	bind_str(s2, 1, a->signature);
	bind_str(s2, 2, a->signature_json);
	bind_str(s2, 3, or_null(a->shape_hash));
	bind_str(s2, 4, or_null(a->stack_hash));
	bind_str(s2, 5, a->hardware_kind);
	sqlite3_bind_int(s2, 6, a->signature_scheme);
	bind_str(s2, 7, family);
	bind_str(s2, 8, coords);
	bind_str(s3, 1, a->id);
	sqlite3_bind_double(s3, 2, a->time);
	bind_str(s3, 3, a->profile);
	bind_str(s3, 4, a->candidate);
	bind_str(s3, 5, a->signature);
	bind_str(s3, 6, a->host ? a->host : xl_hostname());
	bind_int(s3, 7, a->rank);
	bind_str(s3, 8, xl_outcome_name(a->outcome));
	bind_int(s3, 9, a->exit_status);
	bind_int(s3, 10, a->predicted_bytes);
	bind_int(s3, 11, a->observed_bytes);
	if (!isnan(a->wall_s))
		sqlite3_bind_double(s3, 12, a->wall_s);
	bind_int(s3, 13, a->compile_count);
	bind_int(s3, 14, a->host_peak_rss_bytes);
	if (a->predicted_bytes != CALIB_UNSET && a->predicted_kind < CALIB_KIND_COUNT) {
		bind_str(s3, 15, calib_kind_name(a->predicted_kind));
		bind_str(s3, 16, calib_basis_name(a->predicted_basis));
	}
	if (a->observed_bytes != CALIB_UNSET && a->observed_kind < CALIB_KIND_COUNT)
		bind_str(s3, 17, calib_kind_name(a->observed_kind));
	bind_str(s3, 18, or_null(a->job_id));
	bind_int(s3, 19, a->cache_hits);
	if (!isnan(a->first_step_s))
		sqlite3_bind_double(s3, 20, a->first_step_s);
	bind_str(s3, 21, or_null(a->details));
	if ((rc = tx_begin(st)))
		goto out;
	if (step(s1) != SQLITE_DONE || step(s2) != SQLITE_DONE || step(s3) != SQLITE_DONE) {
		rc = sqlfail(st, "cannot record an attempt");
		tx_rollback(st);
		goto out;
	}
	/* figures go with a new attempt only: recording an id again is a no-op */
	if (sqlite3_changes(db_of(st)) > 0) {
		for (size_t i = 0; i < a->nfigures; i++) {
			const struct calib_figure *f = &a->figures[i];

			sqlite3_reset(s4);
			sqlite3_clear_bindings(s4);
			bind_str(s4, 1, a->id);
			bind_str(s4, 2, f->predicted ? "predicted" : "observed");
			bind_str(s4, 3, calib_kind_name(f->kind));
			sqlite3_bind_int64(s4, 4, f->bytes);
			if (f->predicted)
				bind_str(s4, 5, calib_basis_name(f->basis));
			bind_int(s4, 6, f->error_bytes);
			bind_str(s4, 7, f->source);
			if (step(s4) != SQLITE_DONE) {
				rc = sqlfail(st, "cannot record the figures of an attempt");
				tx_rollback(st);
				goto out;
			}
		}
	}
	if ((rc = tx_commit(st)))
		tx_rollback(st);
out:
	sqlite3_finalize(s1);
	sqlite3_finalize(s2);
	sqlite3_finalize(s3);
	sqlite3_finalize(s4);
	return rc;
}

/* ---- probes ---------------------------------------------------------------------- */

/* A backend's devices as rows, one per kind of device (and type): count and
 * smallest memory of each.  A backend without devices is one row with no
 * kind. */
static int insert_backends(struct calib_store *st, sqlite3_int64 probe, const json_t *doc)
{
	struct calib_probe_backend *rows;
	size_t n = calib_probe_backends(doc, &rows);
	sqlite3_stmt *s;
	int rc = 0;

	s = prepare(st, "INSERT INTO probe_backends (probe, name, state, kind, count,"
			" memory_bytes, device_type, memory_source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	if (!s) {
		free(rows);
		return XL_EX_CANTCREAT;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(s, 1, probe);
		sqlite3_bind_text(s, 2, rows[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, rows[i].state, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, rows[i].kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, rows[i].count);
		if (rows[i].memory_bytes >= 0)
			sqlite3_bind_int64(s, 6, rows[i].memory_bytes);
		else
			sqlite3_bind_null(s, 6);
		sqlite3_bind_text(s, 7, rows[i].type, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 8, rows[i].memory_source, -1, SQLITE_STATIC);
		if (step(s) != SQLITE_DONE) {
			rc = sqlfail(st, "cannot record a probe");
			break;
		}
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
	}
	sqlite3_finalize(s);
	free(rows);
	return rc;
}

static int sq_record_probe(struct calib_store *st, const json_t *doc, const char *host, double t,
			   const char *given_uid)
{
	sqlite3_stmt *s;
	char *text, *uid;
	int rc = 0;

	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		xl_oom();
	uid = given_uid ? xl_strdup(given_uid) : calib_probe_uid(host, t, text);
	s = prepare(st, "INSERT OR IGNORE INTO probes (uid, host, time, doc) VALUES (?1, ?2, ?3, ?4)");
	if (!s) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 3, t);
	sqlite3_bind_text(s, 4, text, -1, SQLITE_STATIC);
	if ((rc = tx_begin(st)))
		goto out;
	if (step(s) != SQLITE_DONE)
		rc = sqlfail(st, "cannot record a probe");
	else if (sqlite3_changes(db_of(st)) > 0)
		rc = insert_backends(st, sqlite3_last_insert_rowid(db_of(st)), doc);
	if (rc == 0 && (rc = tx_commit(st)) != 0)
		sqlfail(st, "cannot commit a probe");
	if (rc)
		tx_rollback(st);
out:
	sqlite3_finalize(s);
	free(text);
	free(uid);
	return rc;
}

static int sq_latest_hardware(struct calib_store *st, const char *host,
			      struct calib_hardware **out, size_t *n)
{
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	s = prepare(st, "SELECT b.kind, b.count, b.memory_bytes, b.name, b.device_type,"
			" b.memory_source FROM probe_backends b"
			" WHERE b.probe = (SELECT id FROM probes WHERE host = ?1"
			" ORDER BY time DESC, id DESC LIMIT 1)"
			" AND b.state = 'alive' AND b.count > 0 AND b.kind IS NOT NULL"
			" ORDER BY b.rowid");
	if (!s)
		return XL_EX_CANTCREAT;
	sqlite3_bind_text(s, 1, host ? host : xl_hostname(), -1, SQLITE_TRANSIENT);
	while ((rc = step(s)) == SQLITE_ROW) {
		calib_hardware_add(out, n, (const char *)sqlite3_column_text(s, 0),
				   (const char *)sqlite3_column_text(s, 3),
				   (const char *)sqlite3_column_text(s, 4),
				   (const char *)sqlite3_column_text(s, 5), sqlite3_column_int64(s, 1),
				   sqlite3_column_type(s, 2) == SQLITE_NULL ? -1 :
				   sqlite3_column_int64(s, 2));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return sqlfail(st, "cannot read probes");
	}
	return 0;
}

/* ---- queries ---------------------------------------------------------------------- */

static int sq_history(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		      void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct calib_attempt a;
	sqlite3_stmt *s, *fig;
	int rc, r = 0;

	xl_buf_adds(&q, "SELECT " ATTEMPT_COLS " FROM attempts a WHERE 1");
	if (f->profile)
		xl_buf_adds(&q, " AND profile = ?1");
	if (f->signature)
		xl_buf_adds(&q, " AND signature = ?2");
	if (f->outcome >= 0)
		xl_buf_adds(&q, " AND outcome = ?3");
	if (f->host)
		xl_buf_adds(&q, " AND host = ?4");
	if (!isnan(f->since))
		xl_buf_adds(&q, " AND time >= ?5");
	/* a job's launches: ID, and ID#N for its restarts */
	if (f->job)
		xl_buf_adds(&q, " AND (job_id = ?6 OR substr(job_id, 1, length(?6) + 1) = ?6 || '#')");
	xl_buf_adds(&q, " ORDER BY time DESC, rowid DESC");
	if (f->limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", f->limit);
	s = prepare(st, xl_buf_str(&q));
	xl_buf_release(&q);
	fig = s ? prepare(st, FIGURE_QUERY) : NULL;
	if (!s || !fig) {
		sqlite3_finalize(s);
		return XL_EX_CANTCREAT;
	}
	sqlite3_bind_text(s, 1, f->profile, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, f->signature, -1, SQLITE_STATIC);
	if (f->outcome >= 0)
		sqlite3_bind_text(s, 3, xl_outcome_name(f->outcome), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, f->host, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 5, isnan(f->since) ? 0 : f->since);
	sqlite3_bind_text(s, 6, f->job, -1, SQLITE_STATIC);
	calib_attempt_init(&a);
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		read_attempt(s, &a);
		if ((r = read_figures(st, fig, &a)) == 0)
			r = fn(&a, arg);
	}
	calib_attempt_release(&a);
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read attempts");
	sqlite3_finalize(s);
	sqlite3_finalize(fig);
	return r;
}

static int sq_stats(struct calib_store *st, const char *profile, long long limit,
		    calib_stats_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s, *r;
	int rc, ret = 0;

	/* a job's ranks are one launch: ok when every rank is, oom when any is */
	xl_buf_adds(&q, "WITH j AS (SELECT signature, max(time) AS time, min(outcome = 'ok') AS ok,"
			" max(outcome = 'oom') AS oom FROM attempts GROUP BY signature,"
			" coalesce(job_id, id))"
			" SELECT a.signature, count(*), sum(a.ok), sum(a.oom),"
			" max(a.time), (SELECT profile FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY time DESC, rowid DESC LIMIT 1), (SELECT candidate FROM attempts b"
			" WHERE b.signature = a.signature ORDER BY time DESC, rowid DESC LIMIT 1)"
			" FROM j a");
	if (profile)
		xl_buf_adds(&q, " WHERE a.signature IN (SELECT signature FROM attempts WHERE profile = ?1)");
	xl_buf_adds(&q, " GROUP BY a.signature ORDER BY max(a.time) DESC, a.signature");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	s = prepare(st, xl_buf_str(&q));
	xl_buf_release(&q);
	/* like for like: only attempts whose prediction is of the observed kind */
	r = prepare(st, "SELECT observed_bytes, predicted_bytes, observed_kind FROM attempts"
			" WHERE signature = ?1 AND outcome IN ('ok', 'compile-storm')"
			" AND observed_bytes > 0 AND predicted_bytes > 0"
			" AND observed_kind = predicted_kind AND observed_kind <> 'unclassified'"
			" ORDER BY time DESC, rowid DESC");
	if (!s || !r) {
		sqlite3_finalize(s);
		sqlite3_finalize(r);
		return XL_EX_CANTCREAT;
	}
	sqlite3_bind_text(s, 1, profile, -1, SQLITE_STATIC);
	while (ret == 0 && (rc = step(s)) == SQLITE_ROW) {
		struct calib_sig_stats ss;
		double *ratios = NULL;
		size_t nr = 0, cap = 0;
		char *kind = NULL;

		memset(&ss, 0, sizeof(ss));
		col_hash(s, 0, ss.signature);
		ss.attempts = sqlite3_column_int64(s, 1);
		ss.ok = sqlite3_column_int64(s, 2);
		ss.oom = sqlite3_column_int64(s, 3);
		ss.last_seen = sqlite3_column_double(s, 4);
		ss.profile = (const char *)sqlite3_column_text(s, 5);
		ss.candidate = (const char *)sqlite3_column_text(s, 6);
		sqlite3_bind_text(r, 1, ss.signature, -1, SQLITE_TRANSIENT);
		while (step(r) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(r, 2);

			/* the kind of the newest such attempt */
			if (!kind)
				kind = xl_strdup(k);
			else if (!xl_streq(kind, k))
				continue;
			if (nr == cap) {
				cap = cap ? cap * 2 : 16;
				ratios = xl_realloc(ratios, cap * sizeof(*ratios));
			}
			ratios[nr++] = (double)sqlite3_column_int64(r, 0) / (double)sqlite3_column_int64(r, 1);
		}
		sqlite3_reset(r);
		ss.ratio_median = calib_median(ratios, nr);
		free(ratios);
		ss.kind = kind;
		ret = fn(&ss, arg);
		free(kind);
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = sqlfail(st, "cannot read attempts");
	sqlite3_finalize(s);
	sqlite3_finalize(r);
	return ret;
}

static int sq_resolve_signature(struct calib_store *st, const char *prefix, char hash[65])
{
	sqlite3_stmt *s;
	char *hi;
	int n = 0, rc;

	s = prepare(st, "SELECT hash FROM signatures WHERE hash >= ?1 AND hash < ?2 "
			"ORDER BY hash LIMIT 2");
	if (!s)
		return XL_EX_CANTCREAT;
	hi = xl_asprintf("%sg", prefix);
	sqlite3_bind_text(s, 1, prefix, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, hi, -1, SQLITE_TRANSIENT);
	while ((rc = step(s)) == SQLITE_ROW) {
		if (n == 0)
			col_hash(s, 0, hash);
		n++;
	}
	sqlite3_finalize(s);
	free(hi);
	if (rc != SQLITE_DONE)
		return sqlfail(st, "cannot look up a signature");
	if (n == 0)
		return calib_fail(st, XL_EX_NOINPUT, "no signature starts with '%s'", prefix);
	if (n > 1)
		return calib_fail(st, XL_EX_USAGE, "signature prefix '%s' is ambiguous", prefix);
	return 0;
}

static int sq_forget(struct calib_store *st, const char *hash, int64_t *attempts)
{
	sqlite3_stmt *cnt, *del;
	int rc = 0;

	*attempts = 0;
	cnt = prepare(st, "SELECT count(*) FROM attempts WHERE signature = ?1");
	del = prepare(st, "DELETE FROM signatures WHERE hash = ?1");
	if (!cnt || !del) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	if ((rc = tx_begin(st)))
		goto out;
	sqlite3_bind_text(cnt, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(del, 1, hash, -1, SQLITE_STATIC);
	if (step(cnt) != SQLITE_ROW) {
		rc = sqlfail(st, "cannot forget a signature");
		goto fail;
	}
	*attempts = sqlite3_column_int64(cnt, 0);
	if (step(del) != SQLITE_DONE) {
		rc = sqlfail(st, "cannot forget a signature");
		goto fail;
	}
	if (sqlite3_changes(db_of(st)) == 0) {
		rc = calib_fail(st, XL_EX_NOINPUT, "no signature '%s'", hash);
		goto fail;
	}
	if ((rc = tx_commit(st)) == 0)
		goto out;
fail:
	tx_rollback(st);
out:
	sqlite3_finalize(cnt);
	sqlite3_finalize(del);
	return rc;
}

static int sq_export(struct calib_store *st, calib_probe_fn *pfn, calib_attempt_fn *afn, void *arg)
{
	struct calib_attempt a;
	sqlite3_stmt *s, *fig = NULL;
	int rc = SQLITE_DONE, r = 0;

	/* one read transaction, so the export is one consistent snapshot */
	sqlite3_exec(db_of(st), "BEGIN", NULL, NULL, NULL);
	s = prepare(st, "SELECT uid, host, time, doc FROM probes ORDER BY time, uid");
	if (!s) {
		r = XL_EX_CANTCREAT;
		goto out;
	}
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(s, 3);
		json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
		struct calib_probe_row p = {
			(const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
			sqlite3_column_double(s, 2), doc,
		};

		r = pfn(&p, arg);
		json_decref(doc);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read the store");
	sqlite3_finalize(s);
	if (r)
		goto out;
	s = prepare(st, "SELECT " ATTEMPT_COLS ", s.json, s.shape_hash, s.stack_hash, s.hardware_kind,"
			" s.scheme FROM attempts a JOIN signatures s ON s.hash = a.signature"
			" ORDER BY a.time, a.id");
	fig = prepare(st, FIGURE_QUERY);
	if (!s || !fig) {
		sqlite3_finalize(s);
		r = XL_EX_CANTCREAT;
		goto out;
	}
	calib_attempt_init(&a);
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		read_attempt(s, &a);
		a.signature_json = col_dup(s, NATTEMPT_COLS);
		col_hash(s, NATTEMPT_COLS + 1, a.shape_hash);
		col_hash(s, NATTEMPT_COLS + 2, a.stack_hash);
		a.hardware_kind = col_dup(s, NATTEMPT_COLS + 3);
		a.signature_scheme = sqlite3_column_int(s, NATTEMPT_COLS + 4);
		if ((r = read_figures(st, fig, &a)) == 0)
			r = afn(&a, arg);
	}
	calib_attempt_release(&a);
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read the store");
	sqlite3_finalize(s);
out:
	sqlite3_finalize(fig);
	sqlite3_exec(db_of(st), "COMMIT", NULL, NULL, NULL);
	return r;
}

/* ---- what order and prediction read ------------------------------------------------ */

static int sq_latest_attempt(struct calib_store *st, const char *signature,
			     struct calib_attempt *out, bool *found)
{
	sqlite3_stmt *s = prepare(st, "SELECT " ATTEMPT_COLS " FROM attempts a WHERE signature = ?1"
				      " AND outcome IN ('ok', 'compile-storm', 'oom')"
				      " ORDER BY time DESC, rowid DESC LIMIT 1");
	int rc;

	*found = false;
	if (!s)
		return XL_EX_CANTCREAT;
	sqlite3_bind_text(s, 1, signature, -1, SQLITE_STATIC);
	rc = step(s);
	if (rc == SQLITE_ROW) {
		read_attempt(s, out);
		*found = true;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlfail(st, "cannot read past launches");
	/* a job's outcome is its worst rank's: an oom of any rank of that
	 * launch stands for it */
	if (*found && out->job_id && out->outcome != XL_OUT_OOM) {
		s = prepare(st, "SELECT " ATTEMPT_COLS " FROM attempts a WHERE job_id = ?1"
				" AND signature = ?2 AND outcome = 'oom' ORDER BY time DESC, rowid DESC"
				" LIMIT 1");
		if (!s)
			return XL_EX_CANTCREAT;
		sqlite3_bind_text(s, 1, out->job_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 2, signature, -1, SQLITE_STATIC);
		rc = step(s);
		if (rc == SQLITE_ROW) {
			calib_attempt_release(out);
			calib_attempt_init(out);
			read_attempt(s, out);
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return sqlfail(st, "cannot read past launches");
	}
	return 0;
}

static int sq_latest_same_shape(struct calib_store *st, const char *shape, const char *stack,
				const char *not_signature, struct calib_attempt *out, bool *found,
				bool *other_stack)
{
	sqlite3_stmt *s = prepare(st, "SELECT " ATTEMPT_COLS ", s.stack_hash IS NOT ?2"
				      " FROM signatures s JOIN attempts a ON a.signature = s.hash"
				      " WHERE s.shape_hash = ?1 AND s.hash <> ?3"
				      " ORDER BY a.time DESC, a.rowid DESC LIMIT 1");
	int rc;

	*found = *other_stack = false;
	if (!s)
		return XL_EX_CANTCREAT;
	sqlite3_bind_text(s, 1, shape, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, stack, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, not_signature, -1, SQLITE_STATIC);
	rc = step(s);
	if (rc == SQLITE_ROW) {
		read_attempt(s, out);
		*other_stack = sqlite3_column_int(s, NATTEMPT_COLS) != 0;
		*found = true;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sqlfail(st, "cannot read past launches");
	return 0;
}

static int sq_family_points(struct calib_store *st, const char *family, const char *stack,
			    calib_point_fn *fn, void *arg)
{
	sqlite3_stmt *sigs, *s;
	int rc, r = 0;

	/* bounded whatever the store holds: at most CALIB_FAMILY_SIGS signatures
	 * of the family (index on family and stack), and of each the newest
	 * CALIB_FAMILY_PER_SIG attempts that say anything of memory (index on
	 * signature and time), with their observed figures */
	sigs = prepare(st, "SELECT hash, coords, json FROM signatures WHERE family_hash = ?1"
			   " AND stack_hash = ?2 ORDER BY first_seen DESC LIMIT "
			   NUM_STR(CALIB_FAMILY_SIGS));
	s = sigs ? prepare(st, "SELECT recent.id, recent.time, recent.outcome, f.kind, f.bytes FROM (SELECT id, time,"
			       " outcome, rowid AS r FROM attempts WHERE signature = ?1"
			       " AND outcome IN ('ok', 'compile-storm', 'oom')"
			       " ORDER BY time DESC, rowid DESC LIMIT " NUM_STR(CALIB_FAMILY_PER_SIG) ") recent"
			       " LEFT JOIN figures f ON f.attempt = recent.id AND f.role = 'observed'"
			       " ORDER BY recent.time DESC, recent.r DESC") : NULL;
	if (!sigs || !s) {
		sqlite3_finalize(sigs);
		return XL_EX_CANTCREAT;
	}
	bind_str(sigs, 1, family);
	bind_str(sigs, 2, stack);
	while (r == 0 && (rc = step(sigs)) == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(sigs, 0);

		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, hash, -1, SQLITE_TRANSIENT);
		while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
			struct calib_point p;
			enum xl_outcome o = XL_OUT_ERROR;
			const char *kind = (const char *)sqlite3_column_text(s, 3);

			/* an attempt without figures comes once, with no kind */
			if (!kind)
				p.kind = CALIB_KIND_COUNT;
			else if (!calib_kind_parse(kind, &p.kind))
				continue;
			xl_outcome_parse((const char *)sqlite3_column_text(s, 2), &o);
			p.attempt = (const char *)sqlite3_column_text(s, 0);
			p.time = sqlite3_column_double(s, 1);
			p.outcome = o;
			p.signature = hash;
			p.coords = (const char *)sqlite3_column_text(sigs, 1);
			p.parts = (const char *)sqlite3_column_text(sigs, 2);
			p.bytes = sqlite3_column_int64(s, 4);
			r = fn(&p, arg);
		}
		if (r == 0 && rc != SQLITE_DONE)
			r = sqlfail(st, "cannot read past launches");
		rc = SQLITE_ROW;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read past launches");
	sqlite3_finalize(s);
	sqlite3_finalize(sigs);
	return r;
}

static int sq_family_other_stacks(struct calib_store *st, const char *family, const char *stack,
				  unsigned *n)
{
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	s = prepare(st, "SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN attempts a"
			" WHERE s.family_hash = ?1 AND s.stack_hash IS NOT ?2 AND a.signature = s.hash"
			" AND a.outcome IN ('ok', 'compile-storm') AND a.observed_bytes > 0 LIMIT 1000)");
	if (!s)
		return XL_EX_CANTCREAT;
	bind_str(s, 1, family);
	bind_str(s, 2, stack);
	rc = step(s);
	if (rc == SQLITE_ROW)
		*n = (unsigned)sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : sqlfail(st, "cannot read past launches");
}

static int sq_last_parts(struct calib_store *st, const char *profile, char **parts, char **id)
{
	sqlite3_stmt *s;
	int rc;

	*parts = *id = NULL;
	s = prepare(st, "SELECT s.json, a.id FROM attempts a JOIN signatures s ON s.hash = a.signature"
			" WHERE a.profile = ?1 AND s.scheme >= 2 AND s.json IS NOT NULL"
			" ORDER BY a.time DESC, a.rowid DESC LIMIT 1");
	if (!s)
		return XL_EX_CANTCREAT;
	bind_str(s, 1, profile);
	rc = step(s);
	if (rc == SQLITE_ROW) {
		*parts = col_dup(s, 0);
		*id = col_dup(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sqlfail(st, "cannot read past launches");
}

static int sq_job_choose(struct calib_store *st, const char *job_id, const char *candidate,
			 const char *signature, int64_t rank, char **chosen, char **chosen_sig)
{
	sqlite3_stmt *ins, *sel;
	int rc = 0;

	*chosen = *chosen_sig = NULL;
	ins = prepare(st, "INSERT OR IGNORE INTO job_choices (job_id, candidate, signature, rank,"
			  " host, time) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	sel = ins ? prepare(st, "SELECT candidate, signature FROM job_choices WHERE job_id = ?1") : NULL;
	if (!ins || !sel) {
		sqlite3_finalize(ins);
		return XL_EX_CANTCREAT;
	}
	bind_str(ins, 1, job_id);
	bind_str(ins, 2, candidate);
	bind_str(ins, 3, signature);
	sqlite3_bind_int64(ins, 4, rank);
	bind_str(ins, 5, xl_hostname());
	sqlite3_bind_double(ins, 6, xl_now());
	bind_str(sel, 1, job_id);
	if ((rc = tx_begin(st)))
		goto out;
	if (step(ins) != SQLITE_DONE || step(sel) != SQLITE_ROW) {
		rc = sqlfail(st, "cannot publish the job's candidate");
		tx_rollback(st);
		goto out;
	}
	*chosen = col_dup(sel, 0);
	*chosen_sig = col_dup(sel, 1);
	sqlite3_reset(sel);
	rc = tx_commit(st);
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	return rc;
}

/* ---- ranks watching each other ------------------------------------------------------------ */

static int sq_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
			 const char *run_id, double lease_s, double *started)
{
	sqlite3_stmt *s = prepare(st, "INSERT OR REPLACE INTO job_ranks (job_id, rank, world, host,"
				      " pid, run_id, started, renewed, expires)"
				      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?7 + ?8)");
	double now = xl_now();
	int rc;

	if (!s)
		return XL_EX_CANTCREAT;
	bind_str(s, 1, job_id);
	sqlite3_bind_int64(s, 2, rank);
	sqlite3_bind_int64(s, 3, world);
	bind_str(s, 4, xl_hostname());
	sqlite3_bind_int64(s, 5, (sqlite3_int64)getpid());
	bind_str(s, 6, run_id);
	sqlite3_bind_double(s, 7, now);
	sqlite3_bind_double(s, 8, lease_s);
	rc = step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return sqlfail(st, "cannot start the rank's lease");
	*started = now;
	return 0;
}

/* The first bad end of another rank since ?4 (any outcome but ok and
 * compile-storm: a storm's process ended well), then (?5) the first lease of
 * another rank without an end that ran out before ?3 and at or after ?4:
 * a probe of job_ranks_bad and one of job_ranks_live. */
#define PEER_QUERY \
	"SELECT * FROM (SELECT 0, rank, outcome, ended, host FROM job_ranks" \
	" WHERE job_id = ?1 AND outcome <> 'ok' AND outcome <> 'compile-storm'" \
	" AND ended >= ?4 AND rank <> ?2" \
	" ORDER BY ended LIMIT 1)" \
	" UNION ALL SELECT * FROM (SELECT 1, rank, NULL, expires, host FROM job_ranks" \
	" WHERE job_id = ?1 AND ended IS NULL AND expires >= ?4 AND expires < ?3 AND rank <> ?2" \
	" AND ?5 ORDER BY expires LIMIT 1)"

static void read_peer(sqlite3_stmt *s, struct calib_peer_end *out)
{
	const char *host = (const char *)sqlite3_column_text(s, 4);

	out->found = true;
	out->lapsed = sqlite3_column_int(s, 0) != 0;
	out->rank = sqlite3_column_int64(s, 1);
	if (!out->lapsed) {
		int o = calib_peer_outcome_parse((const char *)sqlite3_column_text(s, 2));

		out->outcome = o >= 0 && o < XL_OUT_COUNT ? (enum xl_outcome)o : XL_OUT_ERROR;
	}
	out->when = sqlite3_column_double(s, 3);
	snprintf(out->host, sizeof(out->host), "%s", host ? host : "");
}

static int sq_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
			double since, bool judge_leases, struct calib_peer_end *out)
{
	sqlite3_stmt *upd, *sel;
	double now = xl_now();
	int rc = 0, r;

	upd = prepare(st, "UPDATE job_ranks SET renewed = ?3, expires = ?3 + ?4"
			  " WHERE job_id = ?1 AND rank = ?2 AND ended IS NULL");
	sel = upd ? prepare(st, PEER_QUERY) : NULL;
	if (!upd || !sel) {
		sqlite3_finalize(upd);
		return XL_EX_CANTCREAT;
	}
	bind_str(upd, 1, job_id);
	sqlite3_bind_int64(upd, 2, rank);
	sqlite3_bind_double(upd, 3, now);
	sqlite3_bind_double(upd, 4, lease_s);
	bind_str(sel, 1, job_id);
	sqlite3_bind_int64(sel, 2, rank);
	sqlite3_bind_double(sel, 3, now);
	sqlite3_bind_double(sel, 4, since);
	sqlite3_bind_int(sel, 5, judge_leases);
	out->now = now;
	if (step(upd) != SQLITE_DONE) {
		rc = sqlfail(st, "cannot renew the rank's lease");
		goto out;
	}
	/* the end row comes first: an end wins over a lapse */
	if ((r = step(sel)) == SQLITE_ROW)
		read_peer(sel, out);
	else if (r != SQLITE_DONE)
		rc = sqlfail(st, "cannot read the job's ranks");
out:
	sqlite3_finalize(upd);
	sqlite3_finalize(sel);
	return rc;
}

static int sq_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		       const char *outcome, int64_t exit_status, int64_t peer_rank,
		       const char *peer_outcome)
{
	sqlite3_stmt *s = prepare(st, "UPDATE job_ranks SET ended = ?3, outcome = ?4,"
				      " exit_status = ?5, peer_rank = ?6, peer_outcome = ?7"
				      " WHERE job_id = ?1 AND rank = ?2");
	int rc;

	if (!s)
		return XL_EX_CANTCREAT;
	bind_str(s, 1, job_id);
	sqlite3_bind_int64(s, 2, rank);
	sqlite3_bind_double(s, 3, xl_now());
	bind_str(s, 4, outcome);
	bind_int(s, 5, exit_status);
	bind_int(s, 6, peer_rank);
	bind_str(s, 7, peer_outcome);
	rc = step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sqlfail(st, "cannot write the rank's end");
}

static int sq_job_ranks(struct calib_store *st, const char *job, calib_job_rank_fn *fn, void *arg)
{
	sqlite3_stmt *s = prepare(st, "SELECT job_id, rank, world, host, run_id, started, renewed,"
				      " expires, ended, outcome, exit_status, peer_rank, peer_outcome"
				      " FROM job_ranks WHERE job_id = ?1"
				      " OR substr(job_id, 1, length(?1) + 1) = ?1 || '#'"
				      " ORDER BY job_id, ended IS NULL, ended, rank");
	int rc, r = 0;

	if (!s)
		return XL_EX_CANTCREAT;
	bind_str(s, 1, job);
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		struct calib_job_rank jr;

		jr.job_id = (const char *)sqlite3_column_text(s, 0);
		jr.rank = sqlite3_column_int64(s, 1);
		jr.world = col_int(s, 2);
		jr.host = (const char *)sqlite3_column_text(s, 3);
		jr.run_id = (const char *)sqlite3_column_text(s, 4);
		jr.started = sqlite3_column_double(s, 5);
		jr.renewed = sqlite3_column_double(s, 6);
		jr.expires = sqlite3_column_double(s, 7);
		jr.ended = sqlite3_column_type(s, 8) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 8);
		jr.outcome = calib_peer_outcome_parse((const char *)sqlite3_column_text(s, 9));
		if (jr.outcome == XL_OUT_COUNT)
			jr.outcome = -1;
		jr.exit_status = col_int(s, 10);
		jr.peer_rank = col_int(s, 11);
		jr.peer_outcome = calib_peer_outcome_parse((const char *)sqlite3_column_text(s, 12));
		r = fn(&jr, arg);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read the job's ranks");
	sqlite3_finalize(s);
	return r;
}

/* ---- report queries ---------------------------------------------------------------------- */

/* The attempt filter of the report queries: ?1 the profile (NULL: attempts
 * without one), ?2 the lower bound of time. */
static void report_where(struct xl_buf *q, const struct calib_report_filter *f)
{
	if (f->profile)
		xl_buf_adds(q, " AND a.profile IS ?1");
	if (!isnan(f->since))
		xl_buf_adds(q, " AND a.time >= ?2");
}

static sqlite3_stmt *report_prepare(struct calib_store *st, struct xl_buf *q,
				    const struct calib_report_filter *f)
{
	sqlite3_stmt *s = prepare(st, xl_buf_str(q));

	xl_buf_release(q);
	if (!s)
		return NULL;
	if (f->profile && *f->profile)
		sqlite3_bind_text(s, 1, f->profile, -1, SQLITE_STATIC);
	if (!isnan(f->since))
		sqlite3_bind_double(s, 2, f->since);
	return s;
}

static double col_dbl(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

/* Steps s through fn(s, arg) until done; returns 0, fn's non-zero, or 73. */
static int report_rows(struct calib_store *st, sqlite3_stmt *s,
		       int (*row)(sqlite3_stmt *s, void *fn, void *arg), void *fn, void *arg)
{
	int rc, r = 0;

	while (r == 0 && (rc = step(s)) == SQLITE_ROW)
		r = row(s, fn, arg);
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read the store for the report");
	sqlite3_finalize(s);
	return r;
}

static int profile_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_report_profile p = {
		(const char *)sqlite3_column_text(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_double(s, 2), sqlite3_column_double(s, 3),
	};

	return ((calib_report_profile_fn *)fn)(&p, arg);
}

static int sq_report_profiles(struct calib_store *st, const struct calib_report_filter *f,
			      long long limit, calib_report_profile_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT a.profile, count(*), min(a.time), max(a.time) FROM attempts a WHERE 1");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY a.profile ORDER BY max(a.time) DESC, a.profile");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	return report_rows(st, s, profile_row, (void *)fn, arg);
}

static int timeline_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_timeline_bin b;
	enum xl_outcome o = XL_OUT_ERROR;

	xl_outcome_parse((const char *)sqlite3_column_text(s, 1), &o);
	b.bin = sqlite3_column_int64(s, 0);
	b.outcome = o;
	b.attempts = sqlite3_column_int64(s, 2);
	b.time_min = sqlite3_column_double(s, 3);
	b.time_max = sqlite3_column_double(s, 4);
	b.wall_mean = col_dbl(s, 5);
	b.wall_max = col_dbl(s, 6);
	b.compiles = sqlite3_column_int64(s, 7);
	b.cache_hits = sqlite3_column_int64(s, 8);
	b.compiles_known = sqlite3_column_int64(s, 9);
	b.cache_known = sqlite3_column_int64(s, 10);
	return ((calib_timeline_fn *)fn)(&b, arg);
}

static int sq_report_timeline(struct calib_store *st, const struct calib_report_filter *f,
			      double t0, double width, calib_timeline_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT CAST((a.time - ?3) / ?4 AS INTEGER) AS b, a.outcome, count(*),"
			" min(a.time), max(a.time), avg(a.wall_s), max(a.wall_s),"
			" coalesce(sum(a.compile_count), 0), coalesce(sum(a.cache_hits), 0),"
			" count(a.compile_count), count(a.cache_hits) FROM attempts a WHERE 1");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY b, a.outcome ORDER BY b, a.outcome");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	sqlite3_bind_double(s, 3, t0);
	sqlite3_bind_double(s, 4, width);
	return report_rows(st, s, timeline_row, (void *)fn, arg);
}

static int stack_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_report_stack r = {
		(const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_double(s, 3),
		sqlite3_column_double(s, 4),
	};

	return ((calib_report_stack_fn *)fn)(&r, arg);
}

static int sq_report_stacks(struct calib_store *st, const struct calib_report_filter *f,
			    calib_report_stack_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT s.stack_hash, s.hardware_kind, count(*), min(a.time), max(a.time)"
			" FROM attempts a JOIN signatures s ON s.hash = a.signature WHERE 1");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY s.stack_hash, s.hardware_kind ORDER BY min(a.time)");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	return report_rows(st, s, stack_row, (void *)fn, arg);
}

static int pvo_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_pvo_bin b;
	enum xl_outcome o = XL_OUT_ERROR;

	if (!calib_kind_parse((const char *)sqlite3_column_text(s, 0), &b.kind))
		return 0;
	xl_outcome_parse((const char *)sqlite3_column_text(s, 1), &o);
	b.outcome = o;
	b.attempts = sqlite3_column_int64(s, 4);
	b.predicted = sqlite3_column_double(s, 5);
	b.observed = sqlite3_column_double(s, 6);
	return ((calib_pvo_fn *)fn)(&b, arg);
}

static int sq_report_pvo(struct calib_store *st, const struct calib_report_filter *f,
			 int bins_per_e, calib_pvo_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT o.kind, a.outcome, CAST(ln(p.bytes) * ?3 AS INTEGER) AS bp,"
			" CAST(ln(o.bytes) * ?3 AS INTEGER) AS bo, count(*), avg(p.bytes), avg(o.bytes)"
			" FROM figures p JOIN figures o ON o.attempt = p.attempt AND o.role = 'observed'"
			" AND o.kind = p.kind JOIN attempts a ON a.id = p.attempt"
			" WHERE p.role = 'predicted' AND p.bytes > 0 AND o.bytes > 0");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY o.kind, a.outcome, bp, bo ORDER BY o.kind, a.outcome, bp, bo");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	sqlite3_bind_int(s, 3, bins_per_e);
	return report_rows(st, s, pvo_row, (void *)fn, arg);
}

static int source_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_report_source r;

	if (!calib_kind_parse((const char *)sqlite3_column_text(s, 0), &r.kind))
		return 0;
	r.predicted = xl_streq((const char *)sqlite3_column_text(s, 1), "predicted");
	r.source = (const char *)sqlite3_column_text(s, 2);
	r.figures = sqlite3_column_int64(s, 3);
	return ((calib_report_source_fn *)fn)(&r, arg);
}

static int sq_report_sources(struct calib_store *st, const struct calib_report_filter *f,
			     calib_report_source_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT f.kind, f.role, f.source, count(*) FROM figures f");
	if (f->profile || !isnan(f->since))
		xl_buf_adds(&q, " JOIN attempts a ON a.id = f.attempt");
	xl_buf_adds(&q, " WHERE 1");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY f.kind, f.role, f.source ORDER BY count(*) DESC, f.kind, f.role,"
			" f.source"
			" LIMIT 200");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	return report_rows(st, s, source_row, (void *)fn, arg);
}

static int sq_report_families(struct calib_store *st, const struct calib_report_filter *f,
			      long long limit, calib_report_family_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT, q2 = XL_BUF_INIT;
	sqlite3_stmt *s, *latest;
	int rc, r = 0;

	xl_buf_adds(&q, "SELECT s.family_hash, s.stack_hash, count(*), count(DISTINCT s.hash),"
			" max(a.time) FROM attempts a JOIN signatures s ON s.hash = a.signature"
			" WHERE s.family_hash IS NOT NULL");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY s.family_hash, s.stack_hash ORDER BY max(a.time) DESC,"
			" s.family_hash");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	xl_buf_adds(&q2, "SELECT a.profile, s.json FROM signatures s JOIN attempts a"
			 " ON a.signature = s.hash WHERE s.family_hash = ?3 AND s.stack_hash IS ?4");
	report_where(&q2, f);
	xl_buf_adds(&q2, " ORDER BY a.time DESC, a.rowid DESC LIMIT 1");
	s = report_prepare(st, &q, f);
	latest = s ? report_prepare(st, &q2, f) : (xl_buf_release(&q2), NULL);
	if (!s || !latest) {
		sqlite3_finalize(s);
		return XL_EX_CANTCREAT;
	}
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		struct calib_report_family fa = {
			(const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1),
			sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
			sqlite3_column_double(s, 4), NULL, NULL,
		};

		sqlite3_reset(latest);
		sqlite3_bind_text(latest, 3, fa.family, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(latest, 4, fa.stack, -1, SQLITE_TRANSIENT);
		if ((rc = step(latest)) == SQLITE_ROW) {
			fa.profile = (const char *)sqlite3_column_text(latest, 0);
			fa.parts = (const char *)sqlite3_column_text(latest, 1);
		} else if (rc != SQLITE_DONE) {
			break;
		}
		r = fn(&fa, arg);
		rc = SQLITE_ROW;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read the store for the report");
	sqlite3_finalize(latest);
	sqlite3_finalize(s);
	return r;
}

static int member_row(sqlite3_stmt *s, void *fn, void *arg)
{
	struct calib_report_member m;
	enum xl_outcome o = XL_OUT_ERROR;
	const char *kind = (const char *)sqlite3_column_text(s, 4);

	if (!kind)
		m.kind = CALIB_KIND_COUNT;
	else if (!calib_kind_parse(kind, &m.kind))
		return 0;
	xl_outcome_parse((const char *)sqlite3_column_text(s, 3), &o);
	m.signature = (const char *)sqlite3_column_text(s, 0);
	m.coords = (const char *)sqlite3_column_text(s, 1);
	m.parts = (const char *)sqlite3_column_text(s, 2);
	m.outcome = o;
	m.attempts = sqlite3_column_int64(s, 5);
	m.min_bytes = col_int(s, 6);
	m.max_bytes = col_int(s, 7);
	m.mean_bytes = col_dbl(s, 8);
	return ((calib_report_member_fn *)fn)(&m, arg);
}

static int sq_report_members(struct calib_store *st, const struct calib_report_filter *f,
			     const char *family, const char *stack, long long limit,
			     calib_report_member_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	sqlite3_stmt *s;

	xl_buf_adds(&q, "SELECT s.hash, s.coords, s.json, a.outcome, f.kind, count(*), min(f.bytes),"
			" max(f.bytes), avg(f.bytes) FROM (SELECT hash, coords, json FROM signatures"
			" WHERE family_hash = ?3 AND stack_hash IS ?4 ORDER BY first_seen DESC");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	xl_buf_adds(&q, ") s JOIN attempts a ON a.signature = s.hash LEFT JOIN figures f"
			" ON f.attempt = a.id AND f.role = 'observed' WHERE 1");
	report_where(&q, f);
	xl_buf_adds(&q, " GROUP BY s.hash, a.outcome, f.kind ORDER BY s.hash, a.outcome, f.kind");
	if (!(s = report_prepare(st, &q, f)))
		return XL_EX_CANTCREAT;
	bind_str(s, 3, family);
	bind_str(s, 4, stack);
	return report_rows(st, s, member_row, (void *)fn, arg);
}

static int sq_report_probes(struct calib_store *st, const struct calib_report_filter *f,
			    calib_report_probe_fn *fn, void *arg)
{
	sqlite3_stmt *s;
	int rc, r = 0;

	s = prepare(st, "SELECT p.host, p.time, p.doc FROM probes p WHERE p.id ="
			" (SELECT q.id FROM probes q WHERE q.host = p.host AND q.time >= ?2"
			" ORDER BY q.time DESC, q.id DESC LIMIT 1) ORDER BY p.host");
	if (!s)
		return XL_EX_CANTCREAT;
	sqlite3_bind_double(s, 2, isnan(f->since) ? -INFINITY : f->since);
	while (r == 0 && (rc = step(s)) == SQLITE_ROW) {
		json_error_t jerr;
		json_t *doc = json_loads((const char *)sqlite3_column_text(s, 2), 0, &jerr);
		struct calib_report_probe p = {
			(const char *)sqlite3_column_text(s, 0), sqlite3_column_double(s, 1), doc,
		};

		if (doc)
			r = fn(&p, arg);
		json_decref(doc);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = sqlfail(st, "cannot read probes");
	sqlite3_finalize(s);
	return r;
}

const struct calib_backend calib_sqlite_backend = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.begin = tx_begin,
	.commit = tx_commit,
	.rollback = tx_rollback,
	.record_attempt = sq_record_attempt,
	.record_probe = sq_record_probe,
	.history = sq_history,
	.stats = sq_stats,
	.resolve_signature = sq_resolve_signature,
	.forget = sq_forget,
	.export = sq_export,
	.latest_hardware = sq_latest_hardware,
	.latest_attempt = sq_latest_attempt,
	.latest_same_shape = sq_latest_same_shape,
	.family_points = sq_family_points,
	.family_other_stacks = sq_family_other_stacks,
	.last_parts = sq_last_parts,
	.job_choose = sq_job_choose,
	.rank_begin = sq_rank_begin,
	.rank_poll = sq_rank_poll,
	.rank_end = sq_rank_end,
	.job_ranks = sq_job_ranks,
	.report_profiles = sq_report_profiles,
	.report_timeline = sq_report_timeline,
	.report_stacks = sq_report_stacks,
	.report_pvo = sq_report_pvo,
	.report_sources = sq_report_sources,
	.report_families = sq_report_families,
	.report_members = sq_report_members,
	.report_probes = sq_report_probes,
};
