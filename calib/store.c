/* store.c - the SQLite calibration store: open, schema migrations, and the
 * write paths (attempts and probes). */
#include "calib/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 5000
/* How long a write waits for another process's lock before it gives up
 * (the record is then kept by the caller); calib_set_wait() changes it. */
static double retry_limit_s = 30.0;

void calib_set_wait(double seconds)
{
	retry_limit_s = seconds;
}

int calib_fail(struct calib_store *st, int code, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	xl_buf_addf(&b, "store '%s': ", st->path);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(st->err);
	st->err = xl_buf_detach(&b);
	return code;
}

int calib_sqlfail(struct calib_store *st, const char *what)
{
	int code = sqlite3_errcode(st->db) & 0xff;

	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return calib_fail(st, XL_EX_CANTCREAT,
				  "%s: another process has held the store locked for more than %.0f s",
				  what, retry_limit_s);
	return calib_fail(st, XL_EX_CANTCREAT, "%s: %s", what, sqlite3_errmsg(st->db));
}

const char *calib_store_path(const struct calib_store *st)
{
	return st->path;
}

const char *calib_errmsg(const struct calib_store *st)
{
	return st && st->err ? st->err : "";
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
		rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
		if (!busy(rc) || xl_mono() - start > retry_limit_s)
			return rc;
		backoff(tries++);
	}
}

int calib_begin(struct calib_store *st)
{
	int rc;

	if (st->tx_depth++ > 0)
		return SQLITE_OK;
	rc = exec_retry(st, "BEGIN IMMEDIATE");
	if (rc != SQLITE_OK)
		st->tx_depth = 0;
	return rc;
}

int calib_commit(struct calib_store *st)
{
	if (st->tx_depth > 1) {
		st->tx_depth--;
		return SQLITE_OK;
	}
	st->tx_depth = 0;
	return exec_retry(st, "COMMIT");
}

void calib_rollback(struct calib_store *st)
{
	st->tx_depth = 0;
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

const char *calib_fmt_time(double t, char *buf, size_t n)
{
	double whole = floor(t);
	long ms = lround((t - whole) * 1000.0);
	char base[32];

	if (ms >= 1000) {
		whole += 1;
		ms = 0;
	}
	xl_iso_time(whole, base, sizeof(base));
	if (ms == 0) {
		snprintf(buf, n, "%s", base);
	} else {
		base[strlen(base) - 1] = '\0';   /* the Z */
		snprintf(buf, n, "%s.%03ldZ", base, ms);
	}
	return buf;
}

sqlite3_stmt *calib_prepare(struct calib_store *st, const char *sql)
{
	double start = xl_mono();
	unsigned tries = 0;
	sqlite3_stmt *stmt = NULL;
	int rc;

	for (;;) {
		rc = sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL);
		if (rc == SQLITE_OK)
			return stmt;
		if (!busy(rc) || xl_mono() - start > retry_limit_s)
			break;
		backoff(tries++);
	}
	calib_sqlfail(st, "cannot prepare a query");
	return NULL;
}

int calib_step(sqlite3_stmt *stmt)
{
	double start = xl_mono();
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc = sqlite3_step(stmt);
		if (!busy(rc) || xl_mono() - start > retry_limit_s)
			return rc;
		sqlite3_reset(stmt);
		backoff(tries++);
	}
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
 * the stored documents by migrate_v2_backfill); a unique id per probe so
 * that imports are idempotent. */
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

static char *probe_uid(const char *host, double t, const char *doc)
{
	char *s = xl_asprintf("%s\n%.6f\n%s", host, t, doc);
	char hex[65];

	calib_sha256_hex(s, strlen(s), hex);
	free(s);
	return xl_strdup(hex);
}

static int insert_backends(struct calib_store *st, sqlite3_int64 probe, const json_t *doc);

static int migrate_v2_backfill(struct calib_store *st)
{
	sqlite3_stmt *sel, *upd;
	int rc = 0;

	sel = calib_prepare(st, "SELECT id, host, time, doc FROM probes");
	upd = calib_prepare(st, "UPDATE probes SET uid = ? WHERE id = ?");
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
		json_t *doc = json_loads(text ? text : "", 0, NULL);
		char *uid = probe_uid(host ? host : "", t, text ? text : "");

		sqlite3_bind_text(upd, 1, uid, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(upd, 2, id);
		if (sqlite3_step(upd) != SQLITE_DONE)
			rc = calib_sqlfail(st, "migration to schema 2");
		sqlite3_reset(upd);
		free(uid);
		if (rc == 0 && doc)
			rc = insert_backends(st, id, doc);
		json_decref(doc);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

static int user_version(struct calib_store *st, int *v)
{
	sqlite3_stmt *s = calib_prepare(st, "PRAGMA user_version");
	int rc;

	if (!s)
		return XL_EX_CANTCREAT;
	rc = calib_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return calib_sqlfail(st, "cannot read the schema version");
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
	if (calib_begin(st) != SQLITE_OK)
		return calib_sqlfail(st, "cannot lock for a schema migration");
	/* another process may have migrated while we waited for the lock */
	if ((rc = user_version(st, &v)))
		goto out;
	while (v < CALIB_SCHEMA_VERSION) {
		const char *sql = v == 0 ? schema_v1 : v == 1 ? schema_v2 : schema_v3;
		char pragma[64];

		if (v > CALIB_SCHEMA_VERSION) {
			rc = calib_fail(st, XL_EX_CANTCREAT, "schema version %d is newer than this xlaunch knows (%d)",
					v, CALIB_SCHEMA_VERSION);
			goto out;
		}
		if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			char *what = xl_asprintf("migration to schema %d", v + 1);

			rc = calib_sqlfail(st, what);
			free(what);
			goto out;
		}
		if (v == 1 && (rc = migrate_v2_backfill(st)))
			goto out;
		v++;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v);
		if (sqlite3_exec(st->db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
			rc = calib_sqlfail(st, "cannot set the schema version");
			goto out;
		}
	}
	if (calib_commit(st) != SQLITE_OK)
		rc = calib_sqlfail(st, "cannot commit a schema migration");
out:
	if (rc)
		calib_rollback(st);
	return rc;
}

int calib_open(const char *path, unsigned flags, struct calib_store **out, char **err)
{
	struct calib_store *st = xl_calloc(1, sizeof(*st));
	sqlite3_stmt *s;
	char *dir;
	int rc = 0, fd;

	*out = NULL;
	if (err)
		*err = NULL;
	if (path) {
		st->path = xl_strdup(path);
	} else {
		char *sd = xl_state_dir();

		st->path = xl_asprintf("%s/calib.db", sd);
		free(sd);
	}
	dir = xl_strdup(st->path);
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
			goto fail;
		}
	}
	free(dir);
	fd = open(st->path, O_RDWR | O_CLOEXEC | ((flags & CALIB_OPEN_NOCREATE) ? 0 : O_CREAT),
		  0600);
	if (fd < 0) {
		rc = calib_fail(st, XL_EX_CANTCREAT, "%s", strerror(errno));
		goto fail;
	}
	{
		struct stat sb;

		if (fstat(fd, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			close(fd);
			rc = calib_fail(st, XL_EX_CANTCREAT, "not a regular file");
			goto fail;
		}
	}
	close(fd);
	if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = st->db ? calib_sqlfail(st, "cannot open")
			    : calib_fail(st, XL_EX_CANTCREAT, "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(st->db, 1);
	/* journal_mode=WAL is persistent; it reads the header, so a file that
	 * is not a database fails here */
	s = calib_prepare(st, "PRAGMA journal_mode = WAL");
	if (!s) {
		rc = XL_EX_CANTCREAT;
		goto fail;
	}
	rc = calib_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		rc = calib_sqlfail(st, "cannot switch to WAL mode");
		goto fail;
	}
	sqlite3_finalize(s);
	rc = 0;
	if (exec_retry(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL") != SQLITE_OK) {
		rc = calib_sqlfail(st, "cannot set up the connection");
		goto fail;
	}
	if ((rc = migrate(st)))
		goto fail;
	*out = st;
	return 0;
fail:
	if (err)
		*err = xl_strdup(st->err ? st->err : "cannot open");
	calib_close(st);
	return rc ? rc : XL_EX_CANTCREAT;
}

void calib_close(struct calib_store *st)
{
	if (!st)
		return;
	if (st->db)
		sqlite3_close_v2(st->db);
	free(st->path);
	free(st->err);
	free(st);
}

/* ---- helpers ------------------------------------------------------------------ */

bool calib_parse_time(const char *s, double *out)
{
	struct tm tm;
	const char *p;
	double frac = 0;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%d", &tm);
	if (!p)
		return false;
	if (*p == 'T' || *p == ' ') {
		p = strptime(p + 1, "%H:%M", &tm);
		if (!p)
			return false;
		if (*p == ':') {
			p = strptime(p + 1, "%S", &tm);
			if (!p)
				return false;
			if (*p == '.') {
				char *end;

				frac = strtod(p, &end);
				p = end;
			}
		}
	}
	if (*p == 'Z')
		p++;
	if (*p)
		return false;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*out = (double)t + frac;
	return true;
}

bool calib_valid_outcome(const char *s)
{
	enum xl_outcome o;

	return xl_outcome_parse(s, &o);
}

static bool is_hash(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

int calib_resolve_prefix(struct calib_store *st, const char *prefix, char hash[65])
{
	sqlite3_stmt *s;
	char *hi;
	int n = 0, rc;

	for (const char *p = prefix; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return calib_fail(st, XL_EX_USAGE, "signature prefix '%s' is not lowercase hex",
					  prefix);
	if (!*prefix)
		return calib_fail(st, XL_EX_USAGE, "empty signature prefix");
	s = calib_prepare(st, "SELECT hash FROM signatures WHERE hash >= ?1 AND hash < ?2 "
			      "ORDER BY hash LIMIT 2");
	if (!s)
		return XL_EX_CANTCREAT;
	hi = xl_asprintf("%sg", prefix);
	sqlite3_bind_text(s, 1, prefix, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, hi, -1, SQLITE_TRANSIENT);
	while ((rc = calib_step(s)) == SQLITE_ROW) {
		if (n == 0)
			snprintf(hash, 65, "%s", (const char *)sqlite3_column_text(s, 0));
		n++;
	}
	sqlite3_finalize(s);
	free(hi);
	if (rc != SQLITE_DONE)
		return calib_sqlfail(st, "cannot look up a signature");
	if (n == 0)
		return calib_fail(st, XL_EX_NOINPUT, "no signature starts with '%s'", prefix);
	if (n > 1)
		return calib_fail(st, XL_EX_USAGE, "signature prefix '%s' is ambiguous", prefix);
	return 0;
}

/* ---- recording attempts --------------------------------------------------------- */

/* An optional integer field: true when absent/null (has = false) or an
 * integral number. */
static bool opt_int(const json_t *o, const char *key, bool *has, sqlite3_int64 *v)
{
	const json_t *x = json_object_get(o, key);

	*has = false;
	if (!x || json_is_null(x))
		return true;
	if (json_is_integer(x)) {
		*v = json_integer_value(x);
	} else if (json_is_real(x) && json_real_value(x) == (double)(sqlite3_int64)json_real_value(x)) {
		*v = (sqlite3_int64)json_real_value(x);
	} else {
		return false;
	}
	*has = true;
	return true;
}

static bool opt_str(const json_t *o, const char *key, const char **v)
{
	const json_t *x = json_object_get(o, key);

	*v = NULL;
	if (!x || json_is_null(x))
		return true;
	if (!json_is_string(x))
		return false;
	*v = json_string_value(x);
	return true;
}

int calib_record_attempt(struct calib_store *st, const json_t *a)
{
	static const char *const ints[] = {
		"rank", "exit_status", "predicted_bytes", "observed_bytes", "compile_count",
		"host_peak_rss_bytes",
	};
	static const int int_col[] = { 7, 9, 10, 11, 13, 14 };
	const char *id, *profile, *cand, *sig, *host, *outcome, *shape, *stack, *kind;
	const json_t *sj, *tj, *wj;
	struct calib_sig computed;
	bool have_computed = false;
	sqlite3_stmt *s1 = NULL, *s2 = NULL, *s3 = NULL;
	double t;
	int rc = 0;

	memset(&computed, 0, sizeof(computed));
	if (!json_is_object(a))
		return calib_fail(st, XL_EX_DATAERR, "an attempt must be a JSON object");
	if (!opt_str(a, "id", &id) || !id || !*id)
		return calib_fail(st, XL_EX_DATAERR, "attempt without a string 'id'");
	if (!opt_str(a, "profile", &profile) || !opt_str(a, "candidate", &cand) ||
	    !opt_str(a, "signature", &sig) || !opt_str(a, "host", &host) ||
	    !opt_str(a, "outcome", &outcome) || !opt_str(a, "shape_hash", &shape) ||
	    !opt_str(a, "stack_hash", &stack) || !opt_str(a, "hardware_kind", &kind))
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': a text field is not a string", id);
	if (!calib_valid_outcome(outcome))
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': unknown outcome '%s'", id,
				  outcome ? outcome : "(none)");
	tj = json_object_get(a, "time");
	if (!tj || json_is_null(tj)) {
		t = xl_now();
	} else if (json_is_number(tj)) {
		t = json_number_value(tj);
	} else if (json_is_string(tj) && calib_parse_time(json_string_value(tj), &t)) {
		;
	} else {
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': 'time' is not an ISO 8601 time", id);
	}
	wj = json_object_get(a, "wall_s");
	if (wj && !json_is_null(wj) && !json_is_number(wj))
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': 'wall_s' is not a number", id);
	sj = json_object_get(a, "signature_json");
	if (sj && !json_is_null(sj)) {
		json_t *parsed = NULL;

		if (json_is_string(sj)) {
			parsed = json_loads(json_string_value(sj), 0, NULL);
			if (!parsed)
				return calib_fail(st, XL_EX_DATAERR,
						  "attempt '%s': 'signature_json' is not JSON", id);
		}
		rc = calib_signature(parsed ? parsed : sj, &computed);
		json_decref(parsed);
		if (rc)
			return calib_fail(st, XL_EX_DATAERR,
					  "attempt '%s': 'signature_json' is not an object", id);
		have_computed = true;
		if (sig && strcmp(sig, computed.hash) != 0) {
			calib_sig_release(&computed);
			return calib_fail(st, XL_EX_DATAERR,
					  "attempt '%s': 'signature' does not match 'signature_json'", id);
		}
		sig = computed.hash;
		shape = computed.shape_hash;
		stack = computed.stack_hash;
		kind = computed.hardware_kind;
	}
	if (!is_hash(sig)) {
		rc = calib_fail(st, XL_EX_DATAERR, "attempt '%s': 'signature' is not a SHA-256 hex digest", id);
		goto out;
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		bool has;
		sqlite3_int64 v;

		if (!opt_int(a, ints[i], &has, &v)) {
			rc = calib_fail(st, XL_EX_DATAERR, "attempt '%s': '%s' is not an integer", id, ints[i]);
			goto out;
		}
	}
	s1 = calib_prepare(st, "INSERT OR IGNORE INTO signatures"
			       " (hash, shape_hash, stack_hash, hardware_kind, json, first_seen)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	s2 = calib_prepare(st, "UPDATE signatures SET json = ?2, shape_hash = ?3, stack_hash = ?4,"
			       " hardware_kind = ?5 WHERE hash = ?1 AND json IS NULL AND ?2 IS NOT NULL");
	s3 = calib_prepare(st, "INSERT OR IGNORE INTO attempts (id, time, profile, candidate,"
			       " signature, host, rank, outcome, exit_status, predicted_bytes,"
			       " observed_bytes, wall_s, compile_count, host_peak_rss_bytes)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
	if (!s1 || !s2 || !s3) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	sqlite3_bind_text(s1, 1, sig, -1, SQLITE_STATIC);
	sqlite3_bind_text(s1, 2, shape, -1, SQLITE_STATIC);
	sqlite3_bind_text(s1, 3, stack, -1, SQLITE_STATIC);
	sqlite3_bind_text(s1, 4, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s1, 5, have_computed ? computed.canonical : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_double(s1, 6, t);
	sqlite3_bind_text(s2, 1, sig, -1, SQLITE_STATIC);
	sqlite3_bind_text(s2, 2, have_computed ? computed.canonical : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_text(s2, 3, shape, -1, SQLITE_STATIC);
	sqlite3_bind_text(s2, 4, stack, -1, SQLITE_STATIC);
	sqlite3_bind_text(s2, 5, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s3, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_double(s3, 2, t);
	sqlite3_bind_text(s3, 3, profile, -1, SQLITE_STATIC);
	sqlite3_bind_text(s3, 4, cand, -1, SQLITE_STATIC);
	sqlite3_bind_text(s3, 5, sig, -1, SQLITE_STATIC);
	sqlite3_bind_text(s3, 6, host ? host : xl_hostname(), -1, SQLITE_STATIC);
	sqlite3_bind_text(s3, 8, outcome, -1, SQLITE_STATIC);
	if (wj && json_is_number(wj))
		sqlite3_bind_double(s3, 12, json_number_value(wj));
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		bool has;
		sqlite3_int64 v = 0;

		opt_int(a, ints[i], &has, &v);
		if (has)
			sqlite3_bind_int64(s3, int_col[i], v);
	}
	if (calib_begin(st) != SQLITE_OK) {
		rc = calib_sqlfail(st, "cannot begin a transaction");
		goto out;
	}
	if (calib_step(s1) != SQLITE_DONE || calib_step(s2) != SQLITE_DONE ||
	    calib_step(s3) != SQLITE_DONE) {
		rc = calib_sqlfail(st, "cannot record an attempt");
		calib_rollback(st);
		goto out;
	}
	if (calib_commit(st) != SQLITE_OK) {
		rc = calib_sqlfail(st, "cannot commit an attempt");
		calib_rollback(st);
	}
out:
	sqlite3_finalize(s1);
	sqlite3_finalize(s2);
	sqlite3_finalize(s3);
	if (have_computed)
		calib_sig_release(&computed);
	return rc;
}

/* ---- probes ---------------------------------------------------------------------- */

static int insert_backends(struct calib_store *st, sqlite3_int64 probe, const json_t *doc)
{
	sqlite3_stmt *s;
	const json_t *b;
	size_t i;
	int rc = 0;

	s = calib_prepare(st, "INSERT INTO probe_backends (probe, name, state, kind, count,"
			      " memory_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (!s)
		return XL_EX_CANTCREAT;
	json_array_foreach(json_object_get(doc, "backends"), i, b) {
		const json_t *devs = json_object_get(b, "devices"), *d;
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *kind = NULL;
		json_int_t mem = -1;
		size_t j, count = 0;

		if (!name)
			continue;
		json_array_foreach(devs, j, d) {
			const json_t *m = json_object_get(d, "memory_bytes");

			if (!kind)
				kind = json_string_value(json_object_get(d, "kind"));
			count++;
			if (json_is_integer(m) && (mem < 0 || json_integer_value(m) < mem))
				mem = json_integer_value(m);
			else if (json_is_real(m) && (mem < 0 || json_real_value(m) < (double)mem))
				mem = (json_int_t)json_real_value(m);
		}
		sqlite3_bind_int64(s, 1, probe);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, json_string_value(json_object_get(b, "state")), -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, (sqlite3_int64)count);
		if (mem >= 0)
			sqlite3_bind_int64(s, 6, mem);
		else
			sqlite3_bind_null(s, 6);
		if (calib_step(s) != SQLITE_DONE) {
			rc = calib_sqlfail(st, "cannot record a probe");
			break;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return rc;
}

int calib_store_probe(struct calib_store *st, const json_t *doc, const char *host, double t,
		      const char *given_uid)
{
	sqlite3_stmt *s;
	char *text, *uid;
	int rc = 0;

	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		xl_oom();
	uid = given_uid ? xl_strdup(given_uid) : probe_uid(host, t, text);
	s = calib_prepare(st, "INSERT OR IGNORE INTO probes (uid, host, time, doc) VALUES (?1, ?2, ?3, ?4)");
	if (!s) {
		rc = XL_EX_CANTCREAT;
		goto out;
	}
	sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 3, t);
	sqlite3_bind_text(s, 4, text, -1, SQLITE_STATIC);
	if (calib_begin(st) != SQLITE_OK) {
		rc = calib_sqlfail(st, "cannot begin a transaction");
		goto out;
	}
	if (calib_step(s) != SQLITE_DONE) {
		rc = calib_sqlfail(st, "cannot record a probe");
	} else if (sqlite3_changes(st->db) > 0) {
		rc = insert_backends(st, sqlite3_last_insert_rowid(st->db), doc);
	}
	if (rc == 0 && calib_commit(st) != SQLITE_OK)
		rc = calib_sqlfail(st, "cannot commit a probe");
	if (rc)
		calib_rollback(st);
out:
	sqlite3_finalize(s);
	free(text);
	free(uid);
	return rc;
}

int calib_record_probe(struct calib_store *st, const json_t *doc)
{
	const json_t *tj = json_object_get(doc, "time");
	const char *host;
	double t;

	if (!json_is_object(doc))
		return calib_fail(st, XL_EX_DATAERR, "a probe document must be a JSON object");
	if (!json_is_array(json_object_get(doc, "backends")))
		return calib_fail(st, XL_EX_DATAERR, "probe document without a 'backends' array");
	host = json_string_value(json_object_get(doc, "host"));
	if (!host)
		host = xl_hostname();
	if (json_is_number(tj)) {
		t = json_number_value(tj);
	} else if (json_is_string(tj)) {
		if (!calib_parse_time(json_string_value(tj), &t))
			return calib_fail(st, XL_EX_DATAERR, "probe document: 'time' is not an ISO 8601 time");
	} else {
		t = xl_now();
	}
	return calib_store_probe(st, doc, host, t, NULL);
}

json_t *calib_latest_hardware(struct calib_store *st, const char *host)
{
	sqlite3_stmt *s;
	json_t *best = NULL;
	int best_rank = -1;
	double best_total = -1;

	if (!st)
		return NULL;
	s = calib_prepare(st, "SELECT b.kind, b.count, b.memory_bytes, b.name FROM probe_backends b"
			      " WHERE b.probe = (SELECT id FROM probes WHERE host = ?1"
			      " ORDER BY time DESC, id DESC LIMIT 1)"
			      " AND b.state = 'alive' AND b.count > 0 AND b.kind IS NOT NULL");
	if (!s)
		return NULL;
	sqlite3_bind_text(s, 1, host ? host : xl_hostname(), -1, SQLITE_TRANSIENT);
	while (calib_step(s) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(s, 0);
		sqlite3_int64 count = sqlite3_column_int64(s, 1);
		sqlite3_int64 mem = sqlite3_column_int64(s, 2);
		int rank = strcasecmp(kind, "cpu") == 0 ? 0 : 1;
		double total = (double)count * (double)mem;

		if (rank > best_rank || (rank == best_rank && total > best_total)) {
			json_decref(best);
			best = json_pack("{s:s, s:I, s:I}", "kind", kind, "count", (json_int_t)count,
					 "memory_bytes", (json_int_t)mem);
			best_rank = rank;
			best_total = total;
		}
	}
	sqlite3_finalize(s);
	return best;
}

bool calib_parts_fill_hardware(struct calib_store *st, json_t *parts)
{
	json_t *hw;

	if (json_object_get(parts, "hardware") || json_object_get(parts, "device"))
		return true;
	hw = calib_latest_hardware(st, NULL);
	if (!hw)
		return false;
	json_object_set_new(parts, "hardware",
			    json_pack("{s:O, s:O, s:O}", "kind", json_object_get(hw, "kind"),
				      "count", json_object_get(hw, "count"),
				      "memory", json_object_get(hw, "memory_bytes")));
	json_decref(hw);
	return true;
}
