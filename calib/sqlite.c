/* sqlite.c - the SQLite store driver (calib/driver.h): open,
 * transactions, statements, and the schema's steps, its version (PRAGMA
 * user_version) and the lock a migration holds (BEGIN IMMEDIATE).  It
 * writes no operation of its own. */
#include "calib/driver.h"

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

/* Prepares sql, retrying while busy; NULL on failure (st->err set: "WHAT:
 * why"). */
static sqlite3_stmt *prepare(struct calib_store *st, const char *sql, const char *what)
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
	sqlfail(st, what);
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
 * write lock; nested calls join the outermost transaction.  A snapshot is a
 * deferred BEGIN: a read transaction (its failure is the reads'). */
static int tx_begin(struct calib_store *st, bool snapshot)
{
	struct sq *q = st->impl;

	if (q->tx_depth++ > 0)
		return 0;
	if (snapshot) {
		sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL);
		return 0;
	}
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
 * are idempotent (filled by the store after this DDL, calib/migrate.c). */
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
 * scheme 1) and families; probe backends grouped by device kind (the store
 * classifies and refills after this DDL, calib/migrate.c). */
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
	"CREATE INDEX attempts_job ON attempts(job_id);";

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


static const struct calib_step steps[] = {
	{ 1, schema_v1 }, { 2, schema_v2 }, { 3, schema_v3 }, { 4, schema_v4 }, { 5, schema_v5 },
	{ 6, schema_v6 },
};

static int sq_version(struct calib_store *st, int *v)
{
	sqlite3_stmt *s = prepare(st, "PRAGMA user_version", "cannot read the schema version");
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

static int sq_set_version(struct calib_store *st, int v)
{
	char pragma[64];

	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v);
	if (sqlite3_exec(db_of(st), pragma, NULL, NULL, NULL) != SQLITE_OK)
		return sqlfail(st, "cannot set the schema version");
	return 0;
}

/* the write lock of the file, for the whole migration */
static int sq_lock(struct calib_store *st)
{
	if (tx_begin(st, false))
		return sqlfail(st, "cannot lock for a schema migration");
	return 0;
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
		return 0;
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
	s = prepare(st, "PRAGMA journal_mode = WAL", "cannot switch to WAL mode");
	if (!s)
		return XL_EX_CANTCREAT;
	rc = step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return sqlfail(st, "cannot switch to WAL mode");
	if (exec_retry(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL") != SQLITE_OK)
		return sqlfail(st, "cannot set up the connection");
	return 0;
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

/* ---- statements ------------------------------------------------------------ */

struct calib_stmt {
	struct calib_store *st;
	sqlite3_stmt *s;
	const char *what;
	int64_t changes;
};

static struct calib_stmt *sq_prepare(struct calib_store *st, const char *sql, const char *what)
{
	sqlite3_stmt *s = prepare(st, sql, what);
	struct calib_stmt *cs;

	if (!s)
		return NULL;
	cs = xl_calloc(1, sizeof(*cs));
	cs->st = st;
	cs->s = s;
	cs->what = what;
	return cs;
}

/* The index of parameter $i ("$1" is a name to SQLite); 0 when the
 * statement has none. */
static int param(struct calib_stmt *cs, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "$%d", i);
	return sqlite3_bind_parameter_index(cs->s, name);
}

static void sq_bind_text(struct calib_stmt *cs, int i, const char *v)
{
	sqlite3_bind_text(cs->s, param(cs, i), v, -1, SQLITE_TRANSIENT);
}

static void sq_bind_int(struct calib_stmt *cs, int i, int64_t v)
{
	if (v == CALIB_UNSET)
		sqlite3_bind_null(cs->s, param(cs, i));
	else
		sqlite3_bind_int64(cs->s, param(cs, i), v);
}

static void sq_bind_real(struct calib_stmt *cs, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(cs->s, param(cs, i));
	else
		sqlite3_bind_double(cs->s, param(cs, i), v);
}

static int sq_step(struct calib_stmt *cs)
{
	int rc = step(cs->s);

	if (rc == SQLITE_ROW)
		return CALIB_ROW;
	if (rc == SQLITE_DONE) {
		cs->changes = sqlite3_changes(db_of(cs->st));
		return CALIB_DONE;
	}
	return sqlfail(cs->st, cs->what);
}

static void sq_reset(struct calib_stmt *cs)
{
	sqlite3_reset(cs->s);
}

static int64_t sq_changes(struct calib_stmt *cs)
{
	return cs->changes;
}

static const char *sq_col_text(struct calib_stmt *cs, int c)
{
	return (const char *)sqlite3_column_text(cs->s, c);
}

static int64_t sq_col_int(struct calib_stmt *cs, int c)
{
	return sqlite3_column_type(cs->s, c) == SQLITE_NULL ? CALIB_UNSET
							     : sqlite3_column_int64(cs->s, c);
}

static double sq_col_real(struct calib_stmt *cs, int c)
{
	return sqlite3_column_type(cs->s, c) == SQLITE_NULL ? NAN : sqlite3_column_double(cs->s, c);
}

static void sq_finalize(struct calib_stmt *cs)
{
	sqlite3_finalize(cs->s);
	free(cs);
}

const struct calib_driver calib_sqlite_driver = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.begin = tx_begin,
	.commit = tx_commit,
	.rollback = tx_rollback,
	.prepare = sq_prepare,
	.bind_text = sq_bind_text,
	.bind_int = sq_bind_int,
	.bind_real = sq_bind_real,
	.step = sq_step,
	.reset = sq_reset,
	.changes = sq_changes,
	.col_text = sq_col_text,
	.col_int = sq_col_int,
	.col_real = sq_col_real,
	.finalize = sq_finalize,
	.seq = "rowid",
	.pos = "rowid",
	.figures = "(SELECT json_group_array(json_array(f.role, f.kind, f.bytes, f.basis,"
		   " f.error_bytes, f.source)) FROM (SELECT * FROM figures f WHERE f.attempt = a.id"
		   " ORDER BY f.role, f.kind) f)",
	.bin = "",
	.steps = steps,
	.nsteps = sizeof(steps) / sizeof(steps[0]),
	.version = sq_version,
	.set_version = sq_set_version,
	.lock = sq_lock,
};
