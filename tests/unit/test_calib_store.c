/* test_calib_store.c - the store on both backends: SQLite (creation,
 * migrations, corrupt files) and PostgreSQL (schema, reaching the server,
 * passwords, lost connections), and on each of them recording, correction,
 * retry order, many writers and killed writers.  The tests named *_pg run
 * against the server in XLAUNCH_TEST_PG (tools/run-tests.sh starts one with
 * tools/pg.sh), each in a schema of its own; without it they are skipped. */
#include "tests/unit/unit.h"

#include "calib/calib.h"
#include "calib/store.h"
#include "tests/fuzz/targets.h"

#include <libpq-fe.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char *path_of(const char *name)
{
	return xl_test_path(name);
}

static struct calib_store *open_ok(const char *path)
{
	struct calib_store *st = NULL;
	char *err = NULL;
	int rc = calib_open(path, 0, &st, &err);

	if (rc)
		fprintf(stderr, "open: %s\n", err);
	assert_int_equal(rc, 0);
	assert_null(err);
	return st;
}

static sqlite3 *raw(const char *path)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 10000);
	return db;
}

static long long scalar(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	long long v = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static void expect_integrity(const char *path)
{
	sqlite3 *db = raw(path);
	sqlite3_stmt *s;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* ---- the two backends ---------------------------------------------------------------------- */

/* What a test needs of a backend besides the store interface: a location
 * for a new store, and SQL on it from outside (a raw connection). */
struct backend {
	const char *name;
	/* a new, empty store called name (caller frees) */
	char *(*location)(const char *name);
	/* the first column of the first row of sql, -1 when no row */
	long long (*count)(const char *loc, const char *sql);
	/* runs sql (statements that must succeed) on a connection of its own */
	void (*exec)(const char *loc, const char *sql);
	/* the store is consistent: every reference points at a row */
	void (*check)(const char *loc);
};

static char *sq_location(const char *name)
{
	char *file = xl_asprintf("%s.db", name), *path = path_of(file);

	free(file);
	return path;
}

static long long sq_count(const char *loc, const char *sql)
{
	sqlite3 *db = raw(loc);
	long long v = scalar(db, sql);

	sqlite3_close(db);
	return v;
}

static void sq_exec(const char *loc, const char *sql)
{
	sqlite3 *db = raw(loc);

	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static const struct backend sqlite_be = {
	"sqlite", sq_location, sq_count, sq_exec, expect_integrity,
};

/* The test server, or NULL. */
static const char *pg_base(void)
{
	const char *u = getenv("XLAUNCH_TEST_PG");

	return u && *u ? u : NULL;
}

static PGconn *pg_raw(const char *loc)
{
	PGconn *c = PQconnectdb(loc);

	if (PQstatus(c) != CONNECTION_OK)
		fprintf(stderr, "connect: %s\n", PQerrorMessage(c));
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	return c;
}

static void pg_exec(const char *loc, const char *sql)
{
	PGconn *c = pg_raw(loc);
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "%s: %s\n", sql, PQresultErrorMessage(r));
	assert_true(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
	PQclear(r);
	PQfinish(c);
}

static long long pg_count(const char *loc, const char *sql)
{
	PGconn *c = pg_raw(loc);
	PGresult *r = PQexec(c, sql);
	long long v = -1;

	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "%s: %s\n", sql, PQresultErrorMessage(r));
	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	if (PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(c);
	return v;
}

/* base (a URL with parameters) with more parameters; caller frees. */
static char *pg_url_with(const char *base, const char *more)
{
	return xl_asprintf("%s%c%s", base, strchr(base, '?') ? '&' : '?', more);
}

/* A schema of its own on the test server, empty: the store's tables go
 * there (search_path), as a site would give each store a schema. */
static char *pg_location(const char *name)
{
	char schema[64], *sql, *opt, *loc;
	size_t k = 0;

	k = (size_t)snprintf(schema, sizeof(schema), "u_");
	for (const char *p = name; *p && k < sizeof(schema) - 1; p++)
		schema[k++] = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_';
	schema[k] = '\0';
	sql = xl_asprintf("DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema, schema);
	pg_exec(pg_base(), sql);
	free(sql);
	opt = xl_asprintf("options=-csearch_path%%3D%s", schema);
	loc = pg_url_with(pg_base(), opt);
	free(opt);
	return loc;
}

static void pg_check(const char *loc)
{
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts a LEFT JOIN signatures s"
				  " ON s.hash = a.signature WHERE s.hash IS NULL"), 0);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM probe_backends b LEFT JOIN probes p"
				  " ON p.id = b.probe WHERE p.id IS NULL"), 0);
}

static const struct backend pg_be = {
	"postgresql", pg_location, pg_count, pg_exec, pg_check,
};

/* The backend a test runs on; a PostgreSQL test without a server is
 * skipped, and says why. */
static const struct backend *backend_of(void **state)
{
	const struct backend *be = *state;

	if (be == &pg_be && !pg_base()) {
		fprintf(stderr, "SKIP: no PostgreSQL test server (XLAUNCH_TEST_PG is not set; "
			"tools/run-tests.sh starts one with tools/pg.sh)\n");
		skip();
	}
	return be;
}

/* Records one attempt of parts (JSON text). */
static int record(struct calib_store *st, const char *id, const char *parts, const char *outcome,
		  long long observed, double t)
{
	json_t *p = json_loads(parts, 0, NULL);
	json_t *a;
	int rc;

	assert_non_null(p);
	a = json_pack("{s:s, s:O, s:s, s:f, s:s}", "id", id, "signature_json", p, "outcome", outcome,
		      "time", t, "host", "h1");
	if (observed > 0)
		json_object_set_new(a, "observed_bytes", json_integer(observed));
	rc = calib_record_attempt_json(st, a);
	json_decref(a);
	json_decref(p);
	return rc;
}

static int count_row(const struct calib_attempt *a, void *arg)
{
	(void)a;
	(*(int *)arg)++;
	return 0;
}

/* ---- open ---------------------------------------------------------------------------------- */

static void test_open_creates_private_store(void **state)
{
	char *dir = path_of("state/xlaunch"), *path = path_of("state/xlaunch/calib.db");
	struct calib_store *st;
	struct stat sb;
	sqlite3 *db;

	(void)state;
	st = open_ok(path);
	assert_string_equal(calib_store_path(st), path);
	calib_close(st);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	db = raw(path);
	assert_int_equal(scalar(db, "PRAGMA user_version"), CALIB_SCHEMA_VERSION);
	sqlite3_close(db);
	/* journal mode is persistent in the file */
	db = raw(path);
	{
		sqlite3_stmt *s;

		sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	free(dir);
	free(path);
}

static void test_open_default_location(void **state)
{
	char *home = path_of("xdg"), *expect = path_of("xdg/xlaunch/calib.db");
	struct calib_store *st;

	(void)state;
	setenv("XDG_STATE_HOME", home, 1);
	st = open_ok(NULL);
	assert_string_equal(calib_store_path(st), expect);
	calib_close(st);
	unsetenv("XDG_STATE_HOME");
	free(home);
	free(expect);
}

static void test_open_failures(void **state)
{
	char *corrupt = path_of("corrupt.db"), *missing = path_of("missing.db");
	char *newer = path_of("newer.db"), *dir = path_of("adir");
	struct calib_store *st = (void *)1;
	char *err = NULL;
	FILE *f;
	sqlite3 *db;

	(void)state;
	f = fopen(corrupt, "w");
	for (int i = 0; i < 300; i++)
		fputs("this is not an SQLite database at all; ", f);
	fclose(f);
	assert_int_equal(calib_open(corrupt, 0, &st, &err), XL_EX_CANTCREAT);
	assert_null(st);
	assert_non_null(err);
	assert_non_null(strstr(err, corrupt));
	assert_non_null(strstr(err, "not a database"));
	free(err);
	/* NOCREATE */
	assert_int_equal(calib_open(missing, CALIB_OPEN_NOCREATE, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, missing));
	free(err);
	assert_int_equal(access(missing, F_OK), -1);
	/* a schema from the future */
	db = raw(newer);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(calib_open(newer, 0, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, "newer"));
	free(err);
	/* a directory */
	mkdir(dir, 0700);
	assert_int_equal(calib_open(dir, 0, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, dir));
	free(err);
	free(corrupt);
	free(missing);
	free(newer);
	free(dir);
}

/* ---- migrations ------------------------------------------------------------------------------ */

/* The schemas as they shipped, version by version (kept here verbatim so
 * that the migrations are tested against what really exists in the field). */
static const char old_v1[] =
	"CREATE TABLE signatures (hash TEXT PRIMARY KEY, shape_hash TEXT, stack_hash TEXT,"
	" hardware_kind TEXT, json TEXT, first_seen REAL NOT NULL);"
	"CREATE TABLE attempts (id TEXT PRIMARY KEY, time REAL NOT NULL, profile TEXT, candidate TEXT,"
	" signature TEXT NOT NULL REFERENCES signatures(hash) ON DELETE CASCADE, host TEXT,"
	" rank INTEGER, outcome TEXT NOT NULL, exit_status INTEGER, predicted_bytes INTEGER,"
	" observed_bytes INTEGER, wall_s REAL, compile_count INTEGER);"
	"CREATE TABLE probes (id INTEGER PRIMARY KEY, host TEXT NOT NULL, time REAL NOT NULL,"
	" doc TEXT NOT NULL);";
static const char old_v2[] =
	"ALTER TABLE attempts ADD COLUMN host_peak_rss_bytes INTEGER;"
	"ALTER TABLE probes ADD COLUMN uid TEXT;"
	"CREATE TABLE probe_backends (probe INTEGER NOT NULL REFERENCES probes(id) ON DELETE CASCADE,"
	" name TEXT NOT NULL, state TEXT, kind TEXT, count INTEGER, memory_bytes INTEGER);";

static const char old_v3[] =
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

static const char sample_rows[] =
	"INSERT INTO signatures VALUES ('%s', 'sh', 'st', 'tpu', '{\"model\":{\"params\":1000}}', 1000);"
	"INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome,"
	" observed_bytes, predicted_bytes) VALUES ('old-1', 1000, 'p', 'c', '%s', 'h1', 0, 'ok', 10, 9);"
	"INSERT INTO probes (id, host, time, doc) VALUES (1, 'h1', 1000, '{\"host\":\"h1\",\"backends\":"
	"[{\"name\":\"pjrt:libtpu.so\",\"state\":\"alive\",\"devices\":[{\"kind\":\"TPU v6e\","
	"\"memory_bytes\":34359738368},{\"kind\":\"TPU v6e\",\"memory_bytes\":34359738368}]},"
	"{\"name\":\"opencl\",\"state\":\"alive\",\"devices\":[{\"kind\":\"pthread-x\",\"type\":\"cpu\","
	"\"memory_bytes\":900},{\"kind\":\"Small GPU\",\"type\":\"gpu\",\"memory_bytes\":8000}]},"
	"{\"name\":\"cpu\",\"state\":\"alive\",\"devices\":[{\"kind\":\"cpu\",\"memory_bytes\":1000}]}]}');";

static int check_old1(const struct calib_attempt *a, void *arg)
{
	struct { int n; bool old1; } *seen = arg;

	seen->n++;
	if (strcmp(a->id, "old-1") == 0) {
		seen->old1 = true;
		assert_int_equal(a->observed_kind, CALIB_KIND_UNCLASSIFIED);
		assert_int_equal(a->predicted_basis, CALIB_BASIS_UNCLASSIFIED);
		assert_non_null(calib_attempt_figure(a, false, CALIB_KIND_UNCLASSIFIED));
		assert_non_null(strstr(calib_attempt_figure(a, false, CALIB_KIND_UNCLASSIFIED)->source,
				       "before kinds"));
		assert_int_equal(a->signature_scheme, CALIB_SIG_SCHEME);   /* not read by history */
		assert_true(isnan(a->first_step_s));
		assert_null(a->job_id);
		assert_int_equal(a->cache_hits, CALIB_UNSET);
	}
	return 0;
}

static void make_old(const char *path, int version)
{
	char hash[65];
	sqlite3 *db = raw(path);
	char *rows, *pragma;

	calib_sha256_hex("x", 1, hash);
	if (version >= 1)
		assert_int_equal(sqlite3_exec(db, old_v1, NULL, NULL, NULL), SQLITE_OK);
	if (version >= 2)
		assert_int_equal(sqlite3_exec(db, old_v2, NULL, NULL, NULL), SQLITE_OK);
	if (version >= 1) {
		rows = xl_asprintf(sample_rows, hash, hash);
		assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
		free(rows);
	}
	/* a v2 store filled these as it recorded the probe: a backend's devices
	 * as one row (opencl's first kind stood for both of its devices) */
	if (version >= 2) {
		char *more = xl_asprintf("UPDATE probes SET uid = 'u1';"
					 "INSERT INTO probe_backends VALUES (1, 'pjrt:libtpu.so', 'alive',"
					 " 'TPU v6e', 2, 34359738368), (1, 'opencl', 'alive', 'pthread-x', 2, 900),"
					 " (1, 'cpu', 'alive', 'cpu', 1, 1000);"
					 "UPDATE attempts SET host_peak_rss_bytes = 7 WHERE id = 'old-1';"
					 "INSERT INTO attempts (id, time, profile, candidate, signature, host, rank,"
					 " outcome, observed_bytes, host_peak_rss_bytes) VALUES ('old-2', 1001, 'p',"
					 " 'c', '%s', 'h1', 0, 'ok', 11, 11);", hash);

		assert_int_equal(sqlite3_exec(db, more, NULL, NULL, NULL), SQLITE_OK);
		free(more);
	}
	if (version >= 3)
		assert_int_equal(sqlite3_exec(db, old_v3, NULL, NULL, NULL), SQLITE_OK);
	pragma = xl_asprintf("PRAGMA user_version = %d", version);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	sqlite3_close(db);
}

/* v4 -> v5: a schema 4 store (a current one less what 5 adds) gets the job
 * choices and keeps its attempts. */
static void test_migration_v5(void **state)
{
	char *path = path_of("v4.db");
	struct calib_store *st;
	char *c = NULL, *sg = NULL;
	sqlite3 *db;

	(void)state;
	st = open_ok(path);
	assert_int_equal(record(st, "v4-1", "{\"model\": {\"params\": 5}}", "ok", 0, 1000), 0);
	calib_close(st);
	db = raw(path);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE job_ranks;"
				      " DROP TABLE job_choices; DROP INDEX attempts_job_signature;"
				      " PRAGMA user_version = 4", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	st = open_ok(path);
	/* the first rank publishes, a later one reads the same */
	assert_int_equal(calib_job_choose(st, "j1", "big", "s1", 0, &c, &sg), 0);
	assert_string_equal(c, "big");
	free(c);
	free(sg);
	assert_int_equal(calib_job_choose(st, "j1", "small", "s2", 1, &c, &sg), 0);
	assert_string_equal(c, "big");
	assert_string_equal(sg, "s1");
	free(c);
	free(sg);
	calib_close(st);
	db = raw(path);
	assert_int_equal(scalar(db, "PRAGMA user_version"), CALIB_SCHEMA_VERSION);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id = 'v4-1'"), 1);
	assert_int_equal(scalar(db, "SELECT count(*) FROM job_choices"), 1);
	sqlite3_close(db);
	free(path);
}

/* v5 -> v6: a schema 5 store (a current one less what 6 adds) gets the
 * ranks' leases and keeps its attempts and job choices. */
static void test_migration_v6(void **state)
{
	char *path = path_of("v5.db");
	struct calib_store *st;
	struct calib_peer_end e;
	char *c = NULL, *sg = NULL;
	sqlite3 *db;

	(void)state;
	st = open_ok(path);
	assert_int_equal(record(st, "v5-1", "{\"model\": {\"params\": 5}}", "oom", 0, 1000), 0);
	assert_int_equal(calib_job_choose(st, "j1", "big", "s1", 0, &c, &sg), 0);
	free(c);
	free(sg);
	calib_close(st);
	db = raw(path);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE job_ranks; PRAGMA user_version = 5", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(db);
	st = open_ok(path);
	assert_int_equal(calib_rank_begin(st, "j1", 0, 2, "r0", 30, NULL), 0);
	assert_int_equal(calib_rank_begin(st, "j1", 1, 2, "r1", 30, NULL), 0);
	assert_int_equal(calib_rank_end(st, "j1", 1, XL_OUT_OOM, 1, -1, XL_OUT_COUNT), 0);
	assert_int_equal(calib_rank_poll(st, "j1", 0, 30, 0, true, &e), 0);
	assert_true(e.found && !e.lapsed && e.rank == 1 && e.outcome == XL_OUT_OOM);
	calib_close(st);
	db = raw(path);
	assert_int_equal(scalar(db, "PRAGMA user_version"), 6);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id = 'v5-1' AND outcome = 'oom'"), 1);
	assert_int_equal(scalar(db, "SELECT count(*) FROM job_choices WHERE candidate = 'big'"), 1);
	sqlite3_close(db);
	free(path);
}

static void test_migrations(void **state)
{
	(void)state;
	/* stores of schema 0 to 3 as they were written; 4 below */
	for (int v = 0; v < CALIB_SCHEMA_VERSION && v <= 3; v++) {
		char *name = xl_asprintf("v%d.db", v), *path = path_of(name);
		struct calib_store *st;
		sqlite3 *db;
		struct calib_hardware hw;
		int hrc;

		make_old(path, v);
		st = open_ok(path);
		/* the migrated store takes new records */
		assert_int_equal(record(st, "new-1", "{\"model\": {\"params\": 5}}", "oom", 0, 2000), 0);
		hrc = calib_latest_hardware(st, "h1", 0, &hw);
		if (v >= 1) {
			/* probe backends were filled again from the stored documents,
			 * one row per kind of device */
			assert_int_equal(hrc, 0);
			assert_string_equal(hw.kind, "TPU v6e");
			assert_int_equal(hw.count, 2);
			assert_int_equal(hw.memory_bytes, 34359738368LL);
			assert_false(hw.host);
			assert_int_equal(calib_latest_hardware(st, "h1", CALIB_HW_HOST, &hw), 0);
			assert_true(hw.host);
		} else {
			assert_int_equal(hrc, XL_EX_NOINPUT);
		}
		calib_close(st);
		db = raw(path);
		assert_int_equal(scalar(db, "PRAGMA user_version"), CALIB_SCHEMA_VERSION);
		assert_int_equal(scalar(db, "SELECT count(*) FROM attempts"), v >= 2 ? 3 : v >= 1 ? 2 : 1);
		assert_int_equal(scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
					" AND name LIKE 'attempts_%'"), 7);
		assert_int_equal(scalar(db, "SELECT count(*) FROM probes WHERE uid IS NULL"), 0);
		if (v >= 1) {
			/* opencl's CPU and GPU are two rows now */
			assert_int_equal(scalar(db, "SELECT count(*) FROM probe_backends WHERE name = 'opencl'"), 2);
			assert_int_equal(scalar(db, "SELECT count(*) FROM probe_backends WHERE kind = 'Small GPU'"
						" AND device_type = 'gpu' AND count = 1 AND memory_bytes = 8000"), 1);
			/* history kept; what cannot be classified says so */
			assert_int_equal(scalar(db, "SELECT count(*) FROM figures WHERE attempt = 'old-1'"
						" AND role = 'observed' AND kind = 'unclassified' AND bytes = 10"), 1);
			assert_int_equal(scalar(db, "SELECT count(*) FROM figures WHERE attempt = 'old-1'"
						" AND role = 'predicted' AND kind = 'unclassified'"
						" AND basis = 'unclassified' AND bytes = 9"), 1);
			assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id = 'old-1'"
						" AND observed_kind = 'unclassified'"
						" AND predicted_kind = 'unclassified'"), 1);
			assert_int_equal(scalar(db, "SELECT count(*) FROM signatures WHERE scheme = 1"
						" AND family_hash IS NULL AND hash = (SELECT signature FROM"
						" attempts WHERE id = 'old-1')"), 1);
		}
		if (v >= 2) {
			/* observed bytes equal to the host's peak RSS are that kind */
			assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id = 'old-2'"
						" AND observed_kind = 'host_peak_rss'"), 1);
			assert_int_equal(scalar(db, "SELECT count(*) FROM figures WHERE attempt = 'old-2'"), 1);
			assert_int_equal(scalar(db, "SELECT count(*) FROM figures WHERE attempt = 'old-1'"
						" AND kind = 'host_peak_rss' AND bytes = 7"), 1);
		}
		sqlite3_close(db);
		expect_integrity(path);
		/* opening again is a no-op, and history reads the kinds back */
		st = open_ok(path);
		if (v >= 1) {
			struct calib_filter f = CALIB_FILTER_INIT;
			struct { int n; bool old1; } seen = { 0, false };

			f.profile = "p";
			assert_int_equal(calib_history(st, &f, check_old1, &seen), 0);
			assert_true(seen.old1);
		}
		calib_close(st);
		free(name);
		free(path);
	}
}

/* ---- recording ---------------------------------------------------------------------------------- */

static void test_record_attempt(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("rec");
	struct calib_store *st = open_ok(path);
	struct calib_sig sig;
	json_t *parts = json_loads("{\"model\": {\"params\": 100}}", 0, NULL), *a;

	calib_signature(parts, &sig);
	a = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:i, s:I, s:I, s:f, s:i, s:s,"
		      " s:s, s:s}",
		      "id", "run-1", "time", "2026-11-22T10:00:00Z", "profile", "p", "candidate", "c",
		      "signature", sig.hash, "host", "h", "rank", 0, "outcome", "oom", "exit_status", 1,
		      "predicted_bytes", (json_int_t)100, "observed_bytes", (json_int_t)200, "wall_s", 1.5,
		      "compile_count", 3, "signature_json", sig.canonical, "shape_hash", sig.shape_hash,
		      "stack_hash", sig.stack_hash);
	assert_int_equal(calib_record_attempt_json(st, a), 0);
	/* the same id again: a no-op */
	json_object_set_new(a, "outcome", json_string("ok"));
	assert_int_equal(calib_record_attempt_json(st, a), 0);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts"), 1);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts WHERE outcome = 'oom' AND"
				   " time = 1795341600 AND compile_count = 3 AND rank = 0"), 1);
	/* bad data: 65, with a message; nothing written */
	json_object_set_new(a, "id", json_string("run-2"));
	json_object_set_new(a, "outcome", json_string("exploded"));
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	assert_non_null(strstr(calib_errmsg(st), "exploded"));
	json_object_set_new(a, "outcome", json_string("ok"));
	json_object_set_new(a, "signature", json_string("0000"));
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	json_object_del(a, "signature_json");
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	json_object_set_new(a, "signature", json_string(sig.hash));
	json_object_set_new(a, "time", json_string("yesterday"));
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	json_object_set_new(a, "time", json_real(1e9));
	json_object_set_new(a, "rank", json_string("zero"));
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	json_object_del(a, "rank");
	json_object_del(a, "id");
	assert_int_equal(calib_record_attempt_json(st, a), XL_EX_DATAERR);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts"), 1);
	json_decref(a);
	json_decref(parts);
	calib_sig_release(&sig);
	calib_close(st);
	free(path);
}

static void test_record_probe(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("probe");
	struct calib_store *st = open_ok(path);
	json_t *doc, *parts;
	struct calib_hardware hw;

	doc = json_loads("{\"host\": \"h9\", \"time\": \"2026-01-01T00:00:00Z\", \"backends\": ["
			 "{\"name\": \"cpu\", \"state\": \"alive\", \"devices\": [{\"kind\": \"cpu\","
			 " \"memory_bytes\": 68719476736}]},"
			 "{\"name\": \"cuda\", \"state\": \"installed\", \"error\": \"no device\","
			 " \"devices\": [{\"kind\": \"H100\", \"memory_bytes\": 85899345920}]}]}", 0, NULL);
	assert_int_equal(calib_record_probe(st, doc), 0);
	assert_int_equal(calib_record_probe(st, doc), 0); /* same document and time: once */
	assert_int_equal(be->count(path, "SELECT count(*) FROM probes"), 1);
	assert_int_equal(be->count(path, "SELECT count(*) FROM probe_backends"), 2);
	assert_int_equal(calib_latest_hardware(st, "h9", 0, &hw), 0);
	/* the cuda backend is not alive: cpu it is */
	assert_string_equal(hw.kind, "cpu");
	json_decref(doc);
	doc = json_loads("{\"host\": \"h9\", \"time\": \"2026-01-02T00:00:00Z\", \"backends\": ["
			 "{\"name\": \"cpu\", \"state\": \"alive\", \"devices\": [{\"kind\": \"cpu\","
			 " \"memory_bytes\": 68719476736}]},"
			 "{\"name\": \"cuda\", \"state\": \"alive\", \"devices\": [{\"kind\": \"H100\","
			 " \"memory_bytes\": 85899345920}, {\"kind\": \"H100\", \"memory_bytes\": 85899345920}]}]}",
			 0, NULL);
	assert_int_equal(calib_record_probe(st, doc), 0);
	assert_int_equal(calib_latest_hardware(st, "h9", 0, &hw), 0);
	assert_string_equal(hw.kind, "H100");
	assert_int_equal(hw.count, 2);
	assert_false(hw.host);
	/* a job that runs on the host is judged by the host */
	assert_int_equal(calib_latest_hardware(st, "h9", CALIB_HW_HOST, &hw), 0);
	assert_string_equal(hw.kind, "cpu");
	assert_true(hw.host);
	assert_int_equal(calib_latest_hardware(st, "elsewhere", 0, &hw), XL_EX_NOINPUT);
	json_decref(doc);
	doc = json_loads("{\"host\": \"h9\"}", 0, NULL);
	assert_int_equal(calib_record_probe(st, doc), XL_EX_DATAERR);
	json_decref(doc);
	/* hardware for parts comes from the latest probe of this host */
	doc = json_pack("{s:s, s:[{s:s, s:s, s:[{s:s, s:I}]}]}", "host", xl_hostname(), "backends",
			"name", "cpu", "state", "alive", "devices", "kind", "cpu", "memory_bytes",
			(json_int_t)1 << 30);
	assert_int_equal(calib_record_probe(st, doc), 0);
	parts = json_object();
	assert_true(calib_parts_fill_hardware(st, parts, 0));
	assert_string_equal(json_string_value(json_object_get(json_object_get(parts, "hardware"), "kind")), "cpu");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(parts, "hardware"), "memory")), 1 << 30);
	assert_string_equal(json_string_value(json_object_get(json_object_get(parts, "hardware"), "type")), "host");
	json_decref(parts);
	json_decref(doc);
	calib_close(st);
	free(path);
}

/* ---- correction ---------------------------------------------------------------------------------- */

/* Records one attempt of parts (JSON text) with one observed figure. */
static int record_fig(struct calib_store *st, const char *id, const char *parts, const char *outcome,
		      enum calib_kind kind, long long bytes, double t)
{
	struct calib_attempt a;
	struct calib_sig sig;
	json_t *p = json_loads(parts, 0, NULL);
	int rc;

	assert_non_null(p);
	assert_int_equal(calib_signature(p, &sig), 0);
	calib_attempt_init(&a);
	a.id = xl_strdup(id);
	a.time = t;
	a.host = xl_strdup("h1");
	assert_true(xl_outcome_parse(outcome, &a.outcome));
	snprintf(a.signature, sizeof(a.signature), "%s", sig.hash);
	a.signature_json = xl_strdup(sig.canonical);
	if (bytes > 0) {
		a.observed_bytes = bytes;
		a.observed_kind = kind;
		calib_attempt_add_figure(&a, false, kind, bytes, CALIB_BASIS_NONE, CALIB_UNSET, "test");
	}
	rc = calib_record_attempt(st, &a);
	calib_attempt_release(&a);
	calib_sig_release(&sig);
	json_decref(p);
	return rc;
}

#define SHAPE "\"model\": {\"params\": 1e9}, \"hardware\": {\"kind\": \"tpu\", \"memory\": \"32GiB\"}"

static void test_correction(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("corr");
	struct calib_store *st = open_ok(path);
	struct calib_prediction p, q;
	json_t *parts = json_loads("{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\": {\"jax\": \"0.4.30\"}}", 0, NULL);
	json_t *other = json_loads("{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\": {\"jax\": \"0.4.31\"}}", 0, NULL);
	json_t *stranger = json_loads("{\"model\": {\"params\": 3e9}, \"hardware\": {\"kind\": \"tpu\","
				      " \"memory\": \"32GiB\"}, \"bundle\": {\"jax\": \"0.4.30\"}}", 0, NULL);
	uint64_t analytic;

	assert_int_equal(calib_predict(st, parts, &p), 0);
	assert_false(p.calibrated);
	assert_int_equal(p.kind, CALIB_KIND_DEVICE_PEAK);
	assert_non_null(strstr(p.note, "family uncalibrated"));
	analytic = p.analytic_bytes;
	/* ratios 1.1, 1.3, 1.2 on members of the family (micro batch 4, other
	 * toggles, 2: the model has no activations, so one analytic figure);
	 * an oom and a figure of another kind do not count */
	assert_int_equal(record_fig(st, "a1", "{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\":"
				    " {\"jax\": \"0.4.30\"}}", "ok", CALIB_KIND_DEVICE_PEAK,
				    (long long)(analytic * 1.1), 1), 0);
	assert_int_equal(record_fig(st, "a2", "{" SHAPE ", \"train\": {\"micro_batch\": 2}, \"bundle\":"
				    " {\"jax\": \"0.4.30\"}}", "ok", CALIB_KIND_DEVICE_PEAK,
				    (long long)(analytic * 1.3), 2), 0);
	assert_int_equal(record_fig(st, "a3", "{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\":"
				    " {\"jax\": \"0.4.30\"}}", "compile-storm", CALIB_KIND_DEVICE_PEAK,
				    (long long)(analytic * 1.2), 3), 0);
	assert_int_equal(record_fig(st, "a4", "{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\":"
				    " {\"jax\": \"0.4.30\"}}", "oom", CALIB_KIND_DEVICE_PEAK,
				    (long long)(analytic * 9), 4), 0);
	assert_int_equal(record_fig(st, "a5", "{" SHAPE ", \"train\": {\"micro_batch\": 4}, \"bundle\":"
				    " {\"jax\": \"0.4.30\"}}", "ok", CALIB_KIND_HOST_PEAK_RSS,
				    (long long)(analytic * 20), 5), 0);
	assert_int_equal(calib_predict(st, parts, &p), 0);
	assert_true(p.calibrated);
	assert_int_equal(p.samples, 3);
	assert_true(p.correction > 1.199 && p.correction < 1.201);
	assert_true(p.predicted_bytes > analytic * 1.199 && p.predicted_bytes < analytic * 1.201);
	/* another family on the same hardware and stack learns nothing from it */
	assert_int_equal(calib_predict(st, stranger, &q), 0);
	assert_false(q.calibrated);
	assert_true(q.correction == 1.0);
	/* a new stack resets the factor and says so */
	assert_int_equal(calib_predict(st, other, &p), 0);
	assert_false(p.calibrated);
	assert_true(p.correction == 1.0);
	assert_non_null(strstr(p.note, "stack changed"));
	/* NULL store: factor 1 */
	assert_int_equal(calib_predict(NULL, parts, &p), 0);
	assert_true(p.correction == 1.0);
	json_decref(parts);
	json_decref(other);
	json_decref(stranger);
	calib_close(st);
	free(path);
}

/* ---- order --------------------------------------------------------------------------------------- */

enum kind { K_GOOD, K_UNSEEN, K_NOPRED, K_SUSPECT, K_INFEASIBLE, K_BAD, K_COUNT };
static const char *const kind_place[] = {
	"known-good", "unseen", "unseen", "suspect", "predicted-infeasible", "known-bad",
};
/* known-good and predicted to fit first, then unseen without a prediction,
 * suspect, predicted infeasible, known-bad */
static const int kind_tier[] = { 0, 0, 1, 2, 3, 4 };

/* Parts of candidate number i of kind k: distinct families; infeasible ones
 * do not fit in 16 GiB, K_NOPRED has no model to predict from. */
static json_t *cand_parts(int i, enum kind k, const char *jax)
{
	json_t *p = json_pack("{s:{s:f}, s:{s:i}, s:{s:i}, s:{s:s, s:s}, s:{s:s}}",
			      "model", "params", k == K_INFEASIBLE ? 5e9 : 1e8,
			      "train", "micro_batch", i + 1,
			      "features", "variant", (int)k,
			      "hardware", "kind", "cpu", "memory", "16GiB",
			      "bundle", "jax", jax);

	if (k == K_NOPRED)
		json_object_del(p, "model");
	return p;
}

static void seed_kind(struct calib_store *st, int i, enum kind k, double t)
{
	json_t *parts;
	struct calib_sig sig;
	json_t *a;
	char id[64];

	if (k == K_UNSEEN || k == K_INFEASIBLE || k == K_NOPRED)
		return;
	/* suspect: the oom happened with the same shape on an older stack */
	parts = cand_parts(i, k, k == K_SUSPECT ? "0.4.1" : "0.4.30");
	calib_signature(parts, &sig);
	snprintf(id, sizeof(id), "seed-%d-%d-%.0f", i, (int)k, t);
	a = json_pack("{s:s, s:s, s:s, s:f, s:i}", "id", id, "signature_json", sig.canonical,
		      "outcome", k == K_GOOD ? "ok" : "oom", "time", t, "signature_scheme", 2);
	assert_int_equal(calib_record_attempt_json(st, a), 0);
	json_decref(a);
	calib_sig_release(&sig);
	json_decref(parts);
}

/* A host of 16 GiB: the limit every candidate of these tests runs under. */
static const struct calib_limit host16 = { CALIB_KIND_HOST_PEAK_RSS, 16LL << 30, "test host" };

/* calib_order over candidates [{name, parts}], its ranks as JSON [{name,
 * place, ...}] in the order to try. */
static int order_json(struct calib_store *st, const json_t *cands, json_t **order)
{
	size_t n = json_array_size(cands);
	struct calib_target *t = calloc(n + 1, sizeof(*t));
	struct calib_rank *ranks = calloc(n + 1, sizeof(*ranks));
	int rc;

	for (size_t i = 0; i < n; i++) {
		t[i].parts = json_object_get(json_array_get(cands, i), "parts");
		t[i].limits = &host16;
		t[i].nlimits = 1;
	}
	rc = calib_order(st, t, n, ranks);
	*order = NULL;
	if (rc == 0) {
		*order = json_array();
		for (size_t i = 0; i < n; i++) {
			const json_t *c = json_array_get(cands, ranks[i].index);

			json_array_append_new(*order, calib_rank_json(&ranks[i],
				json_string_value(json_object_get(c, "name"))));
		}
	}
	free(t);
	free(ranks);
	return rc;
}

static void check_order(struct calib_store *st, const enum kind *kinds, int n)
{
	json_t *cands = json_array(), *order, *e;
	int expect_pos = 0;

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		json_array_append_new(cands, json_pack("{s:s, s:o}", "name", name, "parts",
						       cand_parts(i, kinds[i], "0.4.30")));
	}
	assert_int_equal(order_json(st, cands, &order), 0);
	assert_int_equal(json_array_size(order), n);
	/* expected: by tier, ties in profile order */
	for (int tier = 0; tier <= 4; tier++)
		for (int i = 0; i < n; i++) {
			char name[16];

			if (kind_tier[kinds[i]] != tier)
				continue;
			snprintf(name, sizeof(name), "c%d", i);
			e = json_array_get(order, expect_pos++);
			assert_string_equal(json_string_value(json_object_get(e, "name")), name);
			assert_string_equal(json_string_value(json_object_get(e, "place")),
					    kind_place[kinds[i]]);
			assert_true(strlen(json_string_value(json_object_get(e, "reason"))) > 10);
			assert_int_equal(strlen(json_string_value(json_object_get(e, "signature"))), 64);
			assert_int_equal(json_is_integer(json_object_get(e, "predicted_bytes")),
					 kinds[i] != K_NOPRED);
			if (kinds[i] == K_UNSEEN)
				assert_true(json_is_true(json_object_get(e, "feasible")));
			if (kinds[i] == K_INFEASIBLE)
				assert_true(json_is_false(json_object_get(e, "feasible")));
			if (kinds[i] == K_NOPRED)
				assert_true(json_is_null(json_object_get(e, "feasible")));
			assert_int_equal(json_integer_value(json_object_get(e, "limit_bytes")), 16LL << 30);
		}
	json_decref(order);
	json_decref(cands);
}

static void test_order_all_permutations(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("order");
	struct calib_store *st = open_ok(path);
	enum kind perm[K_COUNT] = { K_GOOD, K_UNSEEN, K_NOPRED, K_SUSPECT, K_INFEASIBLE, K_BAD };
	int c[K_COUNT] = { 0 }, i = 0, count = 1;

	/* candidate i of kind k has its own signature: seed every (i, k) */
	for (int j = 0; j < K_COUNT + 1; j++)
		for (int k = K_GOOD; k < K_COUNT; k++)
			seed_kind(st, j, k, 100 + j);
	check_order(st, perm, K_COUNT);
	/* Heap's algorithm: every order of the six kinds in the profile */
	while (i < K_COUNT) {
		if (c[i] < i) {
			enum kind tmp;
			int j = i % 2 ? c[i] : 0;

			tmp = perm[j];
			perm[j] = perm[i];
			perm[i] = tmp;
			check_order(st, perm, K_COUNT);
			count++;
			c[i]++;
			i = 0;
		} else {
			c[i] = 0;
			i++;
		}
	}
	assert_int_equal(count, 720);
	/* ties keep profile order; pairs of every kind */
	for (int a = K_GOOD; a < K_COUNT; a++)
		for (int b = K_GOOD; b < K_COUNT; b++) {
			enum kind pair[3] = { (enum kind)a, (enum kind)b, (enum kind)a };

			check_order(st, pair, 3);
		}
	calib_close(st);
	free(path);
}

/* Records an outcome for parts (taking the reference). */
static void seed_parts(struct calib_store *st, json_t *parts, const char *outcome, double t,
		       const char *id)
{
	struct calib_sig sig;
	json_t *a;

	calib_signature(parts, &sig);
	a = json_pack("{s:s, s:s, s:s, s:f}", "id", id, "signature_json", sig.canonical,
		      "outcome", outcome, "time", t);
	assert_int_equal(calib_record_attempt_json(st, a), 0);
	json_decref(a);
	calib_sig_release(&sig);
	json_decref(parts);
}

static void test_order_precedence(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("prec");
	struct calib_store *st = open_ok(path);
	json_t *cands, *order;

	/* latest outcome decides: oom then ok is good; ok then oom is bad */
	seed_parts(st, cand_parts(0, K_GOOD, "0.4.30"), "oom", 10, "a-1");
	seed_parts(st, cand_parts(0, K_GOOD, "0.4.30"), "ok", 20, "a-2");
	seed_parts(st, cand_parts(1, K_GOOD, "0.4.30"), "ok", 10, "b-1");
	seed_parts(st, cand_parts(1, K_GOOD, "0.4.30"), "oom", 20, "b-2");
	/* an error says nothing about memory: still unseen; nor does an
	 * interruption after an ok */
	seed_parts(st, json_pack("{s:{s:f}}", "model", "params", 1e3), "error", 5, "e-1");
	seed_parts(st, cand_parts(0, K_GOOD, "0.4.30"), "interrupted", 30, "a-3");
	/* known-good beats a prediction that does not fit */
	seed_parts(st, cand_parts(3, K_INFEASIBLE, "0.4.30"), "ok", 5, "fits-anyway");
	cands = json_pack("[{s:s, s:o}, {s:s, s:o}, {s:s, s:o}, {s:s, s:o}, {s:s}]",
			  "name", "a", "parts", cand_parts(0, K_GOOD, "0.4.30"),
			  "name", "b", "parts", cand_parts(1, K_GOOD, "0.4.30"),
			  "name", "c", "parts", json_pack("{s:{s:f}, s:{s:i}, s:{s:s, s:s}, s:{s:s}}",
							 "model", "params", 5e9, "train", "micro_batch", 3,
							 "hardware", "kind", "cpu", "memory", "16GiB",
							 "bundle", "jax", "0.4.30"),
			  "name", "d", "parts", cand_parts(3, K_INFEASIBLE, "0.4.30"),
			  "name", "e");
	/* c: an oom with its shape on an older stack, and a prediction that does not fit */
	{
		json_t *p = json_pack("{s:{s:f}, s:{s:i}, s:{s:s, s:s}, s:{s:s}}", "model", "params", 5e9,
				      "train", "micro_batch", 3, "hardware", "kind", "cpu", "memory", "16GiB",
				      "bundle", "jax", "0.3");
		struct calib_sig sig;
		json_t *a;

		calib_signature(p, &sig);
		a = json_pack("{s:s, s:s, s:s}", "id", "old-oom", "signature_json", sig.canonical,
			      "outcome", "oom");
		assert_int_equal(calib_record_attempt_json(st, a), 0);
		json_decref(a);
		calib_sig_release(&sig);
		json_decref(p);
	}
	assert_int_equal(order_json(st, cands, &order), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 0), "name")), "a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 1), "name")), "d");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 1), "place")), "known-good");
	/* e has no parts: nothing known, unseen, no prediction */
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 2), "name")), "e");
	assert_true(json_is_null(json_object_get(json_array_get(order, 2), "predicted_bytes")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 3), "name")), "c");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 3), "place")), "predicted-infeasible");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(order, 3), "reason")), "older stack"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 4), "name")), "b");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 4), "place")), "known-bad");
	json_decref(order);
	/* no store: profile order, predictions only */
	assert_int_equal(order_json(NULL, cands, &order), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 0), "name")), "a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 4), "name")), "d");
	json_decref(order);
	json_decref(cands);
	/* bad input: parts that are not an object */
	cands = json_pack("[{s:s, s:i}]", "name", "x", "parts", 3);
	assert_int_equal(order_json(st, cands, &order), XL_EX_DATAERR);
	assert_null(order);
	json_decref(cands);
	calib_close(st);
	free(path);
}

/* ---- families: learned fits, the compiler's figure, oom evidence ---------------------------------- */

/* A host job whose members differ in MICRO_BATCH (no signature.train): the
 * scale is inferred from the one environment value that varies. */
static json_t *job_parts(long mb, const char *hidden, const char *jax)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", mb);
	return json_pack("{s:[s,s,s], s:{s:s, s:s, s:b}, s:{s:{s:s}}, s:{s:s, s:s, s:s},"
			 " s:{s:{s:s, s:s, s:s}, s:{s:I}}}",
			 "argv", "python", "train.py", "5",
			 "code", "file", "train.py", "commit", "c0ffee", "dirty", 0,
			 "bundle", "packages", "jax", jax,
			 "hardware", "kind", "Xeon", "type", "host", "memory", "24GiB",
			 "toggles", "env", "MICRO_BATCH", v, "HIDDEN", hidden, "JAX_PLATFORMS", "cpu",
			 "limits", "address_space", (json_int_t)8 << 30);
}

/* The job's true needs: 1.5 GB and 25 kB a row of address space, XLA's
 * buffers 20 kB a row. */
static long long vm_of(long mb, const char *hidden)
{
	return 1500000000LL + 25000LL * mb * (strcmp(hidden, "512") == 0 ? 1 : 2);
}

static void record_job(struct calib_store *st, const char *id, long mb, const char *hidden,
		       const char *jax, const char *outcome, double t, bool buffers)
{
	struct calib_attempt a;
	struct calib_sig sig;
	json_t *p = job_parts(mb, hidden, jax);

	calib_signature(p, &sig);
	calib_attempt_init(&a);
	a.id = xl_strdup(id);
	a.time = t;
	assert_true(xl_outcome_parse(outcome, &a.outcome));
	snprintf(a.signature, sizeof(a.signature), "%s", sig.hash);
	a.signature_json = xl_strdup(sig.canonical);
	/* a sampled figure is a little off: +-0.2% */
	a.observed_bytes = vm_of(mb, hidden) + (mb % 3 - 1) * vm_of(mb, hidden) / 500;
	a.observed_kind = CALIB_KIND_HOST_PEAK_VM;
	calib_attempt_add_figure(&a, false, CALIB_KIND_HOST_PEAK_VM, a.observed_bytes,
				 CALIB_BASIS_NONE, CALIB_UNSET, "test");
	if (buffers)
		calib_attempt_add_figure(&a, false, CALIB_KIND_XLA_BUFFERS, 20000LL * mb,
					 CALIB_BASIS_NONE, CALIB_UNSET, "test");
	assert_int_equal(calib_record_attempt(st, &a), 0);
	calib_attempt_release(&a);
	calib_sig_release(&sig);
	json_decref(p);
}

static const struct calib_limit vm8 = { CALIB_KIND_HOST_PEAK_VM, 8LL << 30, "limits.address_space" };

static struct calib_estimate estimate(struct calib_store *st, long mb, const char *hidden, const char *jax)
{
	struct calib_estimate e;
	json_t *p = job_parts(mb, hidden, jax);
	struct calib_target t = { p, &vm8, 1 };

	assert_int_equal(calib_estimate(st, &t, &e), 0);
	json_decref(p);
	return e;
}

static void test_family_fit(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("fit");
	struct calib_store *st = open_ok(path);
	struct calib_estimate e;
	char fit[200];
	json_t *j;

	/* nothing known: no prediction, and no verdict */
	e = estimate(st, 8000, "512", "0.10.2");
	assert_false(e.known);
	assert_int_equal(e.feasible, -1);
	assert_int_equal(e.kind, CALIB_KIND_HOST_PEAK_VM);
	assert_int_equal(e.limit_bytes, 8LL << 30);
	/* one launch: a curve needs two */
	record_job(st, "f1", 1000, "512", "0.10.2", "ok", 10, true);
	e = estimate(st, 8000, "512", "0.10.2");
	assert_false(e.known);
	assert_non_null(strstr(e.summary, "a curve needs two"));
	/* ... but at its own size it is what it used */
	e = estimate(st, 1000, "512", "0.10.2");
	assert_true(e.known);
	assert_int_equal(e.basis, CALIB_BASIS_LEARNED);
	/* two sizes: a curve, with a band of 1% and the prior 5% (widened
	 * beyond the sizes seen): nothing out of sample yet */
	record_job(st, "f2", 2000, "512", "0.10.2", "compile-storm", 20, true);
	e = estimate(st, 8000, "512", "0.10.2");
	assert_true(e.known);
	assert_int_equal(e.basis, CALIB_BASIS_LEARNED);
	assert_int_equal(e.points, 2);
	assert_string_equal(e.scale_name, "env MICRO_BATCH");
	assert_true(fabs((double)e.predicted_bytes - (double)vm_of(8000, "512")) < 0.02 * vm_of(8000, "512"));
	assert_true(e.error_bytes >= 0.06 * e.predicted_bytes - 1);
	assert_true(e.fit.sizes == 2 && isnan(e.fit.loo));
	/* three: within 1%, the band from the out-of-sample error (and 1%) */
	record_job(st, "f3", 4000, "512", "0.10.2", "ok", 30, true);
	/* what must not count: a member of other toggles, another kind, an
	 * interrupted launch */
	record_job(st, "g1", 3000, "1024", "0.10.2", "ok", 31, true);
	record_job(st, "g2", 6000, "1024", "0.10.2", "ok", 32, true);
	{
		json_t *p = job_parts(5000, "512", "0.10.2");
		char *text = json_dumps(p, 0);

		assert_int_equal(record_fig(st, "g3", text, "ok", CALIB_KIND_HOST_PEAK_RSS, 10LL << 30, 33), 0);
		free(text);
		json_decref(p);
	}
	record_job(st, "g4", 7000, "512", "0.10.2", "interrupted", 34, true);
	e = estimate(st, 16000, "512", "0.10.2");
	assert_true(e.known);
	assert_int_equal(e.points, 3);
	assert_true(fabs((double)e.predicted_bytes - (double)vm_of(16000, "512")) < 0.01 * vm_of(16000, "512"));
	assert_true(e.fit.trial[e.fit.chosen].judged);
	assert_true(e.error_bytes >= (0.01 + e.fit.loo) * e.predicted_bytes - 1);
	assert_int_equal(e.feasible, 1);
	/* XLA's buffers grow as a line here: the line, or the power law of
	 * that exponent, which is the same */
	assert_true(fabs(e.xla_exponent - 1) < 0.01);
	assert_true(e.fit.chosen == CALIB_SHAPE_AFFINE || e.fit.chosen == CALIB_SHAPE_XLA_POWER);
	assert_true(fabs(e.fit.trial[e.fit.chosen].curve.b - 25000) < 500);
	assert_true(e.scale == 16000);
	/* and what XLA's buffers will be, before the program is compiled */
	assert_true(fabs(e.compiler.predicted - 20000.0 * 16000) < 0.01 * 20000.0 * 16000);
	calib_fit_str(&e, fit, sizeof(fit));
	assert_non_null(strstr(fit, "x env MICRO_BATCH"));
	assert_non_null(strstr(e.summary, "learned from 3 launches: "));
	assert_non_null(strstr(e.summary, "+/- "));
	assert_non_null(strstr(e.reason, "within limits.address_space"));
	assert_true(fabs(calib_fit_at(&e, 16000, NULL) - (double)e.predicted_bytes) < 1);
	j = calib_estimate_json(&e);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "host_peak_vm");
	assert_non_null(json_object_get(json_object_get(j, "curve"), "why"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "curve"), "sizes")), 3);
	assert_true(json_is_array(json_object_get(json_object_get(j, "curve"), "tried")));
	assert_true(json_is_integer(json_object_get(json_object_get(j, "compiler"), "predicted_bytes")));
	assert_false(json_is_true(json_object_get(j, "near_limit")));
	assert_string_equal(json_string_value(json_object_get(j, "basis")), "learned");
	assert_true(json_is_true(json_object_get(j, "feasible")));
	assert_int_equal(json_integer_value(json_object_get(j, "limit_bytes")), 8LL << 30);
	assert_int_equal(json_integer_value(json_object_get(j, "points")), 3);
	json_decref(j);
	/* the other toggles have their own line */
	e = estimate(st, 12000, "1024", "0.10.2");
	assert_true(e.known);
	assert_int_equal(e.points, 2);
	assert_true(fabs((double)e.predicted_bytes - (double)vm_of(12000, "1024")) < 0.02 * vm_of(12000, "1024"));
	/* far beyond the limit (six times it, 500 times the largest size seen,
	 * where the band has grown with the square of that distance): predicted
	 * infeasible */
	e = estimate(st, 2000000, "512", "0.10.2");
	assert_int_equal(e.feasible, 0);
	assert_non_null(strstr(e.reason, "above limits.address_space"));
	/* a stack change resets learning, and says so */
	e = estimate(st, 8000, "512", "0.10.3");
	assert_false(e.known);
	assert_non_null(strstr(e.summary, "stack changed"));
	/* like for like: with an RSS limit only host_peak_rss figures count */
	{
		json_t *p = job_parts(8000, "512", "0.10.2");
		struct calib_limit rss = { CALIB_KIND_HOST_PEAK_RSS, 20LL << 30, "cgroup memory.max" };
		struct calib_target t = { p, &rss, 1 };

		assert_int_equal(calib_estimate(st, &t, &e), 0);
		assert_int_equal(e.kind, CALIB_KIND_HOST_PEAK_RSS);
		assert_false(e.known || e.points);
		json_decref(p);
	}
	/* an oom at a size at or below: infeasible, whatever the line says */
	record_job(st, "o1", 100000, "512", "0.10.2", "oom", 40, false);
	e = estimate(st, 120000, "512", "0.10.2");
	assert_int_equal(e.feasible, 0);
	assert_non_null(strstr(e.reason, "oom at env MICRO_BATCH = 100000"));
	e = estimate(st, 90000, "512", "0.10.2");
	assert_int_equal(e.feasible, 1);
	/* the compiler's figure for this very program wins: a launch of it
	 * that compiled (here an oom) gave XLA's buffers, and the family
	 * relates them to the kind judged */
	record_job(st, "c1", 50000, "512", "0.10.2", "oom", 50, true);
	e = estimate(st, 50000, "512", "0.10.2");
	assert_int_equal(e.basis, CALIB_BASIS_COMPILER);
	assert_true(fabs((double)e.predicted_bytes - (double)vm_of(50000, "512")) < 0.02 * vm_of(50000, "512"));
	assert_non_null(strstr(e.summary, "compiler: XLA's buffers for this program"));
	calib_close(st);
	free(path);
}

/* A declared micro batch is the scale; a variable that moves with it is
 * tied to it, not a second dimension; the sequence length joins it when
 * it varies. */
static void test_family_scale(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("scale");
	struct calib_store *st = open_ok(path);
	struct calib_estimate e;
	struct calib_target t = { NULL, NULL, 0 };
	static const int mbs[] = { 2, 4, 8 };
	char id[16];

	for (int i = 0; i < 3; i++) {
		char *parts = xl_asprintf("{\"train\": {\"micro_batch\": %d}, \"model\": {\"seq\": 1024},"
					  " \"toggles\": {\"env\": {\"MB\": \"%d\"}}, \"hardware\":"
					  " {\"kind\": \"H100\", \"type\": \"accelerator\"}}", mbs[i], mbs[i]);

		snprintf(id, sizeof(id), "s%d", i);
		/* 3.79 GB + 1.011 GB a row */
		assert_int_equal(record_fig(st, id, parts, "ok", CALIB_KIND_DEVICE_PEAK,
					    3790000000LL + 1011000000LL * mbs[i], i), 0);
		free(parts);
	}
	t.parts = json_loads("{\"train\": {\"micro_batch\": 64}, \"model\": {\"seq\": 1024},"
			     " \"toggles\": {\"env\": {\"MB\": \"64\"}}, \"hardware\":"
			     " {\"kind\": \"H100\", \"type\": \"accelerator\"}}", 0, NULL);
	assert_int_equal(calib_estimate(st, &t, &e), 0);
	assert_int_equal(e.kind, CALIB_KIND_DEVICE_PEAK);
	assert_int_equal(e.points, 3);
	assert_string_equal(e.scale_name, "micro_batch");
	assert_true(fabs((double)e.predicted_bytes - (3.79e9 + 1.011e9 * 64)) < 1e6);
	assert_int_equal(e.feasible, -1);   /* no limit given */
	json_decref((json_t *)t.parts);
	/* another sequence length: tokens */
	assert_int_equal(record_fig(st, "s9", "{\"train\": {\"micro_batch\": 2}, \"model\": {\"seq\": 2048},"
				    " \"toggles\": {\"env\": {\"MB\": \"2\"}}, \"hardware\":"
				    " {\"kind\": \"H100\", \"type\": \"accelerator\"}}", "ok",
				    CALIB_KIND_DEVICE_PEAK, 3790000000LL + 1011000000LL * 4, 9), 0);
	t.parts = json_loads("{\"train\": {\"micro_batch\": 16}, \"model\": {\"seq\": 2048},"
			     " \"toggles\": {\"env\": {\"MB\": \"16\"}}, \"hardware\":"
			     " {\"kind\": \"H100\", \"type\": \"accelerator\"}}", 0, NULL);
	assert_int_equal(calib_estimate(st, &t, &e), 0);
	assert_string_equal(e.scale_name, "tokens (micro_batch x seq)");
	assert_int_equal(e.points, 4);
	assert_true(fabs((double)e.predicted_bytes - (3.79e9 + 1.011e9 * 32)) < 1e7);
	json_decref((json_t *)t.parts);
	calib_close(st);
	free(path);
}

/* The band decides: a candidate whose band holds the limit is near-limit,
 * after those predicted to fit, in the profile's order with the unseen
 * ones; above it, predicted-infeasible. */
static void test_order_near_limit(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("near");
	struct calib_store *st = open_ok(path);
	static const long mbs[] = { 140000, 0, 8000, 400000 };
	static const char *const expect[] = { "fit", "near-limit", "unseen", "predicted-infeasible" };
	static const char *const names[] = { "near", "unseen", "fit", "big" };
	const struct calib_limit lim = { CALIB_KIND_HOST_PEAK_VM, 5000000000LL, "limits.address_space" };
	struct calib_target t[4];
	struct calib_rank r[4];
	json_t *parts[4];

	record_job(st, "n1", 1000, "512", "0.10.2", "ok", 10, true);
	record_job(st, "n2", 2000, "512", "0.10.2", "ok", 20, true);
	record_job(st, "n3", 4000, "512", "0.10.2", "ok", 30, true);
	for (int i = 0; i < 4; i++) {
		/* "unseen": another family, of which nothing is known */
		parts[i] = mbs[i] ? job_parts(mbs[i], "512", "0.10.2") : job_parts(5000, "4096", "0.10.2");
		t[i] = (struct calib_target){ parts[i], &lim, 1 };
	}
	assert_int_equal(calib_order(st, t, 4, r), 0);
	for (int i = 0; i < 4; i++) {
		const char *name = names[r[i].index];

		assert_string_equal(strcmp(name, "fit") == 0 ? "fit" : calib_place_name(r[i].place),
				    expect[i]);
		if (strcmp(name, "fit") == 0) {
			assert_int_equal(r[i].place, CALIB_PLACE_UNSEEN);
			assert_int_equal(r[i].tier, 0);
			assert_int_equal(r[i].est.feasible, 1);
		}
	}
	assert_string_equal(names[r[1].index], "near");
	assert_int_equal(r[1].tier, 1);
	assert_true(r[1].est.near_limit && r[1].est.feasible == -1);
	assert_true(r[1].est.predicted_bytes - r[1].est.error_bytes <= lim.bytes &&
		    r[1].est.predicted_bytes + r[1].est.error_bytes > lim.bytes);
	assert_non_null(strstr(r[1].reason, "near the limit"));
	assert_non_null(strstr(r[1].reason, "the band holds limits.address_space"));
	assert_string_equal(names[r[2].index], "unseen");
	assert_int_equal(r[2].tier, 1);
	assert_false(r[2].est.near_limit);
	assert_int_equal(r[3].est.feasible, 0);
	{
		json_t *j = calib_rank_json(&r[1], "near");

		assert_string_equal(json_string_value(json_object_get(j, "place")), "near-limit");
		assert_true(json_is_true(json_object_get(j, "near_limit")));
		assert_true(json_is_string(json_object_get(j, "curve")));
		assert_true(json_is_string(json_object_get(j, "curve_why")));
		json_decref(j);
	}
	for (int i = 0; i < 4; i++)
		json_decref(parts[i]);
	calib_close(st);
	free(path);
}

/* ---- concurrency and crashes ---------------------------------------------------------------------- */

#define WRITERS 64
#define PER_WRITER 5

/* A writer process: opens (and may create and migrate) the store and
 * records PER_WRITER attempts.  Returns its exit status. */
static int many_writer(const char *path, int w)
{
	struct calib_store *st = NULL;
	char *err = NULL;

	if (calib_open(path, 0, &st, &err)) {
		fprintf(stderr, "writer %d: %s\n", w, err);
		return 1;
	}
	for (int k = 0; k < PER_WRITER; k++) {
		char id[32], parts[96];

		snprintf(id, sizeof(id), "w%d-%d", w, k);
		snprintf(parts, sizeof(parts), "{\"model\": {\"params\": %d}}", w % 7);
		json_t *p = json_loads(parts, 0, NULL);
		json_t *a = json_pack("{s:s, s:O, s:s, s:i}", "id", id, "signature_json", p,
				      "outcome", "ok", "rank", w);

		if (calib_record_attempt_json(st, a)) {
			fprintf(stderr, "writer %d: %s\n", w, calib_errmsg(st));
			return 1;
		}
		json_decref(a);
		json_decref(p);
	}
	calib_close(st);
	return 0;
}

static void test_many_writers(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("many/calib");
	pid_t pids[WRITERS];

	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0)
			_exit(many_writer(path, w));
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	be->check(path);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts"), WRITERS * PER_WRITER);
	assert_int_equal(be->count(path, "SELECT count(DISTINCT rank) FROM attempts"), WRITERS);
	assert_int_equal(be->count(path, "SELECT count(*) FROM signatures"), 7);
	free(path);
}

static void test_killed_writer(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("kill");
	struct calib_store *st = open_ok(path);
	long long before, after;
	pid_t pid;
	int status;

	assert_int_equal(record(st, "kept", "{\"model\": {\"params\": 1}}", "ok", 5, 1), 0);
	calib_close(st);
	/* 1: killed inside an open write transaction */
	pid = fork();
	if (pid == 0) {
		/* the connection stays open, its transaction too, until the kill */
		const char *sql = "BEGIN; INSERT INTO signatures (hash, first_seen) VALUES ('half', 0);"
				  " INSERT INTO attempts (id, time, signature, outcome)"
				  " VALUES ('lost', 0, 'half', 'ok');";

		if (be == &sqlite_be)
			sqlite3_exec(raw(path), sql, NULL, NULL, NULL);
		else
			PQexec(pg_raw(path), sql);
		raise(SIGKILL);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* 2: killed at a random moment while recording in a loop */
	for (int round = 0; round < 3; round++) {
		pid = fork();
		if (pid == 0) {
			struct calib_store *s2 = open_ok(path);

			for (int k = 0;; k++) {
				char id[48];

				snprintf(id, sizeof(id), "loop-%d-%d", round, k);
				record(s2, id, "{\"model\": {\"params\": 2}}", "ok", 5, k);
			}
		}
		usleep(20000 + 15000 * round);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	be->check(path);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts WHERE id IN ('kept')"), 1);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts WHERE id = 'lost'"), 0);
	assert_int_equal(be->count(path, "SELECT count(*) FROM signatures WHERE hash = 'half'"), 0);
	before = be->count(path, "SELECT count(*) FROM attempts");
	/* the store goes on working */
	st = open_ok(path);
	assert_int_equal(record(st, "after", "{\"model\": {\"params\": 1}}", "ok", 5, 1), 0);
	calib_close(st);
	after = be->count(path, "SELECT count(*) FROM attempts");
	assert_int_equal(after, before + 1);
	free(path);
}

/* ---- PostgreSQL only ------------------------------------------------------------------------------- */

static void test_pg_schema(void **state)
{
	char *loc, *none, *alias;
	struct calib_store *st = NULL;
	char *err = NULL;

	backend_of(state);
	loc = pg_location("schema");
	st = open_ok(loc);
	assert_int_equal(record(st, "s-1", "{\"model\": {\"params\": 5}}", "ok", 10, 100), 0);
	calib_close(st);
	assert_int_equal(pg_count(loc, "SELECT max(version) FROM calib_schema"), CALIB_SCHEMA_VERSION);
	/* a new store is made by the steps an old one takes: 3, 4, 5, 6 */
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM calib_schema"), 4);
	/* the indexes of SQLite's schema, here too */
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM pg_indexes WHERE schemaname ="
				  " current_schema() AND indexname LIKE 'attempts\\_%'"
				  " AND indexname <> 'attempts_pkey'"), 7);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM pg_indexes WHERE schemaname ="
				  " current_schema() AND indexname IN ('signatures_shape',"
				  " 'signatures_kind_stack', 'signatures_family', 'probes_host_time',"
				  " 'probes_uid', 'probe_backends_probe', 'job_ranks_bad',"
				  " 'job_ranks_live')"), 8);
	/* opening again is a no-op; postgres:// is the same store */
	alias = xl_asprintf("postgres://%s", loc + strlen("postgresql://"));
	st = open_ok(alias);
	calib_close(st);
	free(alias);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM calib_schema"), 4);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts"), 1);
	/* NOCREATE: a database (schema) without a store is not given one */
	none = pg_location("schema_none");
	assert_int_equal(calib_open(none, CALIB_OPEN_NOCREATE, &st, &err), XL_EX_CANTCREAT);
	assert_null(st);
	assert_non_null(strstr(err, "no store in this database"));
	free(err);
	assert_int_equal(pg_count(none, "SELECT count(*) FROM pg_tables WHERE schemaname ="
				  " current_schema()"), 0);
	/* a schema from the future */
	pg_exec(loc, "INSERT INTO calib_schema VALUES (99, 0)");
	assert_int_equal(calib_open(loc, 0, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, "newer"));
	assert_non_null(strstr(err, "store 'postgresql://xlaunch@"));
	free(err);
	free(none);
	free(loc);
}

/* The PostgreSQL schemas as they shipped, version by version (verbatim, as
 * old_v1 and old_v2 are for SQLite): a store made by an older xlaunch must
 * open, migrated, with what it held. */
static const char pg_old_v3[] =
	"CREATE TABLE calib_schema (version integer PRIMARY KEY, applied double precision NOT NULL);"
	"INSERT INTO calib_schema VALUES (3, 0);"
	"CREATE TABLE signatures (hash text COLLATE \"C\" PRIMARY KEY, shape_hash text COLLATE \"C\","
	" stack_hash text COLLATE \"C\", hardware_kind text, json text,"
	" first_seen double precision NOT NULL);"
	"CREATE TABLE attempts (seq bigint GENERATED ALWAYS AS IDENTITY, id text COLLATE \"C\" PRIMARY KEY,"
	" time double precision NOT NULL, profile text, candidate text,"
	" signature text COLLATE \"C\" NOT NULL REFERENCES signatures(hash) ON DELETE CASCADE,"
	" host text, rank bigint, outcome text NOT NULL, exit_status bigint, predicted_bytes bigint,"
	" observed_bytes bigint, wall_s double precision, compile_count bigint,"
	" host_peak_rss_bytes bigint);"
	"CREATE TABLE probes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, uid text COLLATE \"C\","
	" host text NOT NULL, time double precision NOT NULL, doc text NOT NULL);"
	"CREATE TABLE probe_backends (probe bigint NOT NULL REFERENCES probes(id) ON DELETE CASCADE,"
	" name text NOT NULL, state text, kind text, count bigint, memory_bytes bigint);"
	"CREATE INDEX attempts_time ON attempts(time, seq);"
	"CREATE INDEX attempts_signature_time ON attempts(signature, time, seq);"
	"CREATE INDEX attempts_profile_time ON attempts(profile, time, seq);"
	"CREATE INDEX attempts_host_time ON attempts(host, time, seq);"
	"CREATE INDEX attempts_outcome_time ON attempts(outcome, time, seq);"
	"CREATE INDEX signatures_shape ON signatures(shape_hash);"
	"CREATE INDEX signatures_kind_stack ON signatures(hardware_kind, stack_hash);"
	"CREATE INDEX probes_host_time ON probes(host, time, id);"
	"CREATE UNIQUE INDEX probes_uid ON probes(uid);"
	"CREATE INDEX probe_backends_probe ON probe_backends(probe);";
static const char pg_sample_v3[] =
	"INSERT INTO signatures VALUES ('%s', 'sh', 'st', 'tpu', '{\"model\":{\"params\":1000}}', 1000);"
	"INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome,"
	" observed_bytes, predicted_bytes) VALUES ('old-1', 1000, 'p', 'c', '%s', 'h1', 0, 'ok', 10, 9);"
	"INSERT INTO probes (uid, host, time, doc) VALUES ('u1', 'h1', 1000, '{\"backends\":"
	" [{\"name\": \"pjrt:libtpu.so\", \"state\": \"alive\", \"devices\":"
	" [{\"kind\": \"TPU v6e\", \"memory_bytes\": 34359738368},"
	" {\"kind\": \"TPU v6e\", \"memory_bytes\": 34359738368}]}]}');"
	"INSERT INTO probe_backends SELECT id, 'pjrt:libtpu.so', 'alive', 'TPU v6e', 2, 34359738368"
	" FROM probes;";

static void test_pg_migrations(void **state)
{
	static const char *const olds[] = { pg_old_v3 };

	backend_of(state);
	for (size_t i = 0; i < sizeof(olds) / sizeof(olds[0]); i++) {
		char name[32], hash[65], *loc, *rows;
		struct calib_store *st;
		struct calib_hardware hw;
		struct calib_filter f = CALIB_FILTER_INIT;
		int n = 0;

		snprintf(name, sizeof(name), "old%zu", i);
		loc = pg_location(name);
		calib_sha256_hex("x", 1, hash);
		pg_exec(loc, olds[i]);
		rows = xl_asprintf(pg_sample_v3, hash, hash);
		pg_exec(loc, rows);
		free(rows);
		st = open_ok(loc);
		assert_int_equal(calib_history(st, &f, count_row, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(calib_latest_hardware(st, "h1", 0, &hw), 0);
		assert_string_equal(hw.kind, "TPU v6e");
		assert_int_equal(record(st, "new-1", "{\"model\": {\"params\": 5}}", "oom", 0, 2000), 0);
		calib_close(st);
		assert_int_equal(pg_count(loc, "SELECT max(version) FROM calib_schema"), CALIB_SCHEMA_VERSION);
		assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts"), 2);
		/* schema 4: the old figures kept, of no kind they can be said to be */
		assert_int_equal(pg_count(loc, "SELECT count(*) FROM figures WHERE attempt = 'old-1'"
					  " AND kind = 'unclassified'"), 2);
		assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts WHERE id = 'old-1'"
					  " AND observed_kind = 'unclassified'"
					  " AND predicted_kind = 'unclassified'"), 1);
		/* the probe's devices, grouped by kind from its document */
		assert_int_equal(pg_count(loc, "SELECT count FROM probe_backends"), 2);
		pg_check(loc);
		free(loc);
	}
}

/* v5 -> v6 on the server: a schema 5 store (a current one less what 6
 * adds) gets the ranks' leases and keeps its attempts and job choices. */
static void test_pg_migration_v6(void **state)
{
	char *loc, *c = NULL, *sg = NULL;
	struct calib_store *st;
	struct calib_peer_end e;

	backend_of(state);
	loc = pg_location("v5");
	st = open_ok(loc);
	assert_int_equal(record(st, "v5-1", "{\"model\": {\"params\": 5}}", "oom", 0, 1000), 0);
	assert_int_equal(calib_job_choose(st, "j1", "big", "s1", 0, &c, &sg), 0);
	free(c);
	free(sg);
	calib_close(st);
	pg_exec(loc, "DROP TABLE job_ranks; DELETE FROM calib_schema WHERE version = 6");
	assert_int_equal(pg_count(loc, "SELECT max(version) FROM calib_schema"), 5);
	st = open_ok(loc);
	assert_int_equal(calib_rank_begin(st, "j1", 0, 2, "r0", 30, NULL), 0);
	assert_int_equal(calib_rank_begin(st, "j1", 1, 2, "r1", 30, NULL), 0);
	assert_int_equal(calib_rank_end(st, "j1", 1, XL_OUT_CRASH, 137, -1, XL_OUT_COUNT), 0);
	assert_int_equal(calib_rank_poll(st, "j1", 0, 30, 0, true, &e), 0);
	assert_true(e.found && !e.lapsed && e.rank == 1 && e.outcome == XL_OUT_CRASH);
	calib_close(st);
	assert_int_equal(pg_count(loc, "SELECT max(version) FROM calib_schema"), 6);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts WHERE id = 'v5-1' AND outcome = 'oom'"), 1);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM job_choices WHERE candidate = 'big'"), 1);
	pg_check(loc);
	free(loc);
}

static int rank_rows(const struct calib_job_rank *r, void *arg)
{
	struct xl_buf *b = arg;

	xl_buf_addf(b, "%s:%lld:%s:%lld;", r->job_id, (long long)r->rank,
		    r->outcome < 0 ? "-" : xl_outcome_name((enum xl_outcome)r->outcome),
		    r->peer_rank == CALIB_UNSET ? -1LL : (long long)r->peer_rank);
	return 0;
}

/* The ranks of a job launch watching each other: a bad end is seen by the
 * others, an ok end is not, a lapsed lease is seen only when asked to judge
 * leases, an end wins over a lapse, and what an earlier launch with the
 * same id left (before since) is passed over. */
static void test_rank_watch(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("ranks");
	struct calib_store *st = open_ok(path);
	struct calib_peer_end e;
	struct xl_buf b = XL_BUF_INIT;
	double t0;

	assert_int_equal(calib_rank_begin(st, "j", 0, 3, "r0", 30, &t0), 0);
	assert_true(fabs(t0 - xl_now()) < 60);
	assert_int_equal(calib_rank_begin(st, "j", 1, 3, "r1", 30, NULL), 0);
	assert_int_equal(calib_rank_begin(st, "j", 2, 3, "r2", 30, NULL), 0);
	/* nothing is gone (each lease 30 s: however slow the host) */
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, t0 - 30, true, &e), 0);
	assert_false(e.found);
	assert_true(fabs(e.now - xl_now()) < 60);
	/* rank 1 ends well: nothing is gone */
	assert_int_equal(calib_rank_end(st, "j", 1, XL_OUT_OK, 0, -1, XL_OUT_COUNT), 0);
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, t0 - 30, false, &e), 0);
	assert_false(e.found);
	/* rank 2 renews its lease for 0.2 s, which runs out: seen only when
	 * judging leases */
	assert_int_equal(calib_rank_poll(st, "j", 2, 0.2, t0 - 30, false, &e), 0);
	usleep(400000);
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, t0 - 30, false, &e), 0);
	assert_false(e.found);
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, t0 - 30, true, &e), 0);
	assert_true(e.found && e.lapsed && e.rank == 2 && e.when < e.now);
	/* a rank does not see its own row */
	assert_int_equal(calib_rank_poll(st, "j", 2, 30, t0 - 30, true, &e), 0);
	assert_false(e.found);
	/* rank 2 renewed its lease by that poll; now it ends badly: an end */
	assert_int_equal(calib_rank_end(st, "j", 2, XL_OUT_OOM, 1, -1, XL_OUT_COUNT), 0);
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, t0 - 30, true, &e), 0);
	assert_true(e.found && !e.lapsed && e.rank == 2 && e.outcome == XL_OUT_OOM);
	assert_string_equal(e.host, xl_hostname());
	/* ends from before since belong to an earlier launch */
	assert_int_equal(calib_rank_poll(st, "j", 0, 30, xl_now() + 100, true, &e), 0);
	assert_false(e.found);
	/* rank 0 is ended for rank 2; a restart of the job is a launch of its own */
	assert_int_equal(calib_rank_end(st, "j", 0, XL_OUT_PEER_FAILED, 143, 2, XL_OUT_OOM), 0);
	assert_int_equal(calib_rank_begin(st, "j#1", 0, 3, "r0b", 30, NULL), 0);
	assert_int_equal(calib_rank_poll(st, "j#1", 0, 30, 0, true, &e), 0);
	assert_false(e.found);
	/* the story: by launch, ended ranks first, earliest first */
	assert_int_equal(calib_job_ranks(st, "j", rank_rows, &b), 0);
	assert_string_equal(xl_buf_str(&b), "j:1:ok:-1;j:2:oom:-1;j:0:peer-failed:2;j#1:0:-:-1;");
	assert_int_equal(be->count(path, "SELECT count(*) FROM job_ranks WHERE job_id = 'j' AND"
				   " peer_outcome = 'oom' AND exit_status = 143"), 1);
	/* bad calls */
	assert_int_equal(calib_rank_begin(st, "", 0, 2, "r", 30, NULL), XL_EX_DATAERR);
	assert_int_equal(calib_rank_begin(st, "j", -1, 2, "r", 30, NULL), XL_EX_DATAERR);
	assert_int_equal(calib_rank_begin(st, "j", 0, 2, "r", 0, NULL), XL_EX_DATAERR);
	assert_non_null(strstr(calib_errmsg(st), "a lease of 0 s"));
	/* a lapsed lease as the peer's outcome */
	assert_int_equal(calib_rank_end(st, "j#1", 0, XL_OUT_PEER_FAILED, 143, 5, XL_OUT_COUNT), 0);
	assert_int_equal(be->count(path, "SELECT count(*) FROM job_ranks WHERE job_id = 'j#1' AND"
				   " peer_outcome = 'lease-lapsed'"), 1);
	xl_buf_release(&b);
	calib_close(st);
	free(path);
}

/* ---- every operation, the same answers on both stores ---------------------------------------- */

/* An attempt of job_parts(mb, "512", jax) with every column given; caller
 * releases. */
static void every_attempt(struct calib_attempt *a, const char *id, long mb, const char *jax,
			  const char *outcome, double t)
{
	struct calib_sig sig;
	json_t *p = job_parts(mb, "512", jax);

	assert_int_equal(calib_signature(p, &sig), 0);
	calib_attempt_init(a);
	a->id = xl_strdup(id);
	a->time = t;
	a->profile = xl_strdup("prof");
	a->candidate = xl_strdup(mb > 1500 ? "big" : "small");
	a->host = xl_strdup("h1");
	assert_true(xl_outcome_parse(outcome, &a->outcome));
	snprintf(a->signature, sizeof(a->signature), "%s", sig.hash);
	snprintf(a->shape_hash, sizeof(a->shape_hash), "%s", sig.shape_hash);
	snprintf(a->stack_hash, sizeof(a->stack_hash), "%s", sig.stack_hash);
	a->signature_json = xl_strdup(sig.canonical);
	a->hardware_kind = xl_strdup("Xeon");
	a->signature_scheme = CALIB_SIG_SCHEME;
	a->exit_status = strcmp(outcome, "ok") == 0 ? 0 : 137;
	a->wall_s = 1.25 * (double)mb / 1000;
	a->compile_count = 3;
	a->cache_hits = 2;
	a->first_step_s = 0.5;
	a->host_peak_rss_bytes = 1000LL * mb;
	a->predicted_bytes = 2000LL * mb;
	a->predicted_kind = CALIB_KIND_HOST_PEAK_VM;
	a->predicted_basis = CALIB_BASIS_LEARNED;
	a->observed_bytes = 2100LL * mb;
	a->observed_kind = CALIB_KIND_HOST_PEAK_VM;
	a->details = xl_strdup("{\"note\":\"x\"}");
	/* in the order the store gives them back: role, then kind */
	calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_RSS, a->host_peak_rss_bytes,
				 CALIB_BASIS_NONE, CALIB_UNSET, NULL);
	calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_VM, a->observed_bytes,
				 CALIB_BASIS_NONE, CALIB_UNSET, "wait4");
	calib_attempt_add_figure(a, false, CALIB_KIND_XLA_BUFFERS, 700LL * mb, CALIB_BASIS_NONE,
				 CALIB_UNSET, NULL);
	calib_attempt_add_figure(a, true, CALIB_KIND_HOST_PEAK_VM, a->predicted_bytes,
				 CALIB_BASIS_LEARNED, 100LL * mb, "fit");
	calib_sig_release(&sig);
	json_decref(p);
}

struct every {
	struct xl_buf b;
	json_t *recorded;          /* id -> the attempt as recorded (CALIB_JSON_FULL) */
	size_t exported;
};

static int every_history(const struct calib_attempt *a, void *arg)
{
	struct every *ev = arg;
	json_t *got = calib_attempt_to_json(a, CALIB_JSON_FULL), *want;

	xl_buf_addf(&ev->b, "%s:%s:%zu ", a->id, xl_outcome_name(a->outcome), a->nfigures);
	/* history reads every attempt column and the figures (not the
	 * signature's own columns) */
	want = json_deep_copy(json_object_get(ev->recorded, a->id));
	assert_non_null(want);
	for (const char *const *k = (const char *const[]){ "signature_json", "shape_hash",
		     "stack_hash", "hardware_kind", "signature_scheme", NULL }; *k; k++) {
		json_object_del(want, *k);
		json_object_del(got, *k);
	}
	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_SORT_KEYS), *w = json_dumps(want, JSON_SORT_KEYS);

		fprintf(stderr, "history of %s:\n got  %s\n want %s\n", a->id, g, w);
		free(g);
		free(w);
	}
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);
	return 0;
}

static int every_stats(const struct calib_sig_stats *s, void *arg)
{
	struct xl_buf *b = arg;

	xl_buf_addf(b, "%.6s:%lld/%lld/%lld:%.3f:%s:%s:%s:%.0f ", s->signature, (long long)s->attempts,
		    (long long)s->ok, (long long)s->oom, s->ratio_median, s->kind ? s->kind : "-",
		    s->profile, s->candidate, s->last_seen);
	return 0;
}

static int every_profile(const struct calib_report_profile *p, void *arg)
{
	xl_buf_addf(arg, "%s:%lld:%.0f-%.0f ", p->profile ? p->profile : "-", (long long)p->attempts,
		    p->first, p->last);
	return 0;
}

static int every_timeline(const struct calib_timeline_bin *t, void *arg)
{
	xl_buf_addf(arg, "%lld:%s:%lld:%.0f-%.0f:%.3f/%.3f:%lld/%lld:%lld/%lld ", (long long)t->bin,
		    xl_outcome_name(t->outcome), (long long)t->attempts, t->time_min, t->time_max,
		    t->wall_mean, t->wall_max, (long long)t->compiles, (long long)t->compiles_known,
		    (long long)t->cache_hits, (long long)t->cache_known);
	return 0;
}

static int every_stack(const struct calib_report_stack *s, void *arg)
{
	xl_buf_addf(arg, "%.6s:%s:%lld:%.0f-%.0f ", s->stack_hash ? s->stack_hash : "-",
		    s->hardware_kind ? s->hardware_kind : "-", (long long)s->attempts, s->first, s->last);
	return 0;
}

static int every_pvo(const struct calib_pvo_bin *p, void *arg)
{
	xl_buf_addf(arg, "%s:%s:%lld:%.0f/%.0f ", calib_kind_name(p->kind),
		    xl_outcome_name(p->outcome), (long long)p->attempts, p->predicted, p->observed);
	return 0;
}

static int every_source(const struct calib_report_source *s, void *arg)
{
	xl_buf_addf(arg, "%s:%s:%s:%lld ", calib_kind_name(s->kind), s->predicted ? "p" : "o",
		    s->source ? s->source : "-", (long long)s->figures);
	return 0;
}

struct every_fam {
	struct xl_buf *b;
	char family[65], stack[65];
};

static int every_family(const struct calib_report_family *f, void *arg)
{
	struct every_fam *ef = arg;

	xl_buf_addf(ef->b, "%.6s:%.6s:%lld/%lld:%.0f:%s:%d ", f->family, f->stack,
		    (long long)f->attempts, (long long)f->signatures, f->last, f->profile,
		    f->parts && strstr(f->parts, "MICRO_BATCH") != NULL);
	snprintf(ef->family, sizeof(ef->family), "%s", f->family);
	snprintf(ef->stack, sizeof(ef->stack), "%s", f->stack);
	return 0;
}

static int every_member(const struct calib_report_member *m, void *arg)
{
	xl_buf_addf(arg, "%.6s:%s:%s:%lld:%lld-%lld:%.0f:%d ", m->signature,
		    xl_outcome_name(m->outcome),
		    m->kind < CALIB_KIND_COUNT ? calib_kind_name(m->kind) : "-", (long long)m->attempts,
		    (long long)m->min_bytes, (long long)m->max_bytes, m->mean_bytes,
		    m->coords != NULL && m->parts != NULL);
	return 0;
}

static int every_probe(const struct calib_report_probe *p, void *arg)
{
	xl_buf_addf(arg, "%s:%.0f:%zu ", p->host, p->time,
		    json_array_size(json_object_get(p->doc, "backends")));
	return 0;
}

/* What `calib export` wrote, line by line: each attempt as recorded. */
static void every_export_check(struct every *ev, const char *text)
{
	const char *line = text;
	size_t probes = 0;

	ev->exported = 0;
	while (*line) {
		const char *nl = strchr(line, '\n');
		json_t *o = json_loadb(line, (size_t)(nl - line), 0, NULL);
		const char *type = json_string_value(json_object_get(o, "type"));

		assert_non_null(nl);
		assert_non_null(type);
		if (strcmp(type, "probe") == 0) {
			probes++;
			assert_non_null(json_object_get(o, "doc"));
		} else {
			const char *id = json_string_value(json_object_get(o, "id"));
			json_t *want = json_object_get(ev->recorded, id);

			assert_non_null(want);
			json_object_del(o, "type");
			assert_true(json_equal(o, want));
			ev->exported++;
		}
		json_decref(o);
		line = nl + 1;
	}
	assert_int_equal(probes, 3);
}

static char *every_export(struct calib_store *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(calib_export(st, f), 0);
	fclose(f);
	return text;
}

static void every_record(struct calib_store *st, struct every *ev)
{
	static const struct { const char *id, *jax, *outcome, *job; long mb; int rank; double t; } rows[] = {
		{ "e1", "0.10.2", "ok", NULL, 1000, -1, 100 },
		{ "e2", "0.10.2", "oom", NULL, 2000, -1, 200 },
		{ "e3", "0.10.2", "ok", "job", 1000, 0, 300 },
		{ "e4", "0.10.2", "oom", "job", 1000, 1, 301 },
		{ "e5", "0.9.0", "compile-storm", NULL, 3000, -1, 400 },
		{ "e6", "0.10.2", "ok", "job#1", 2000, 0, 500 },
	};
	const char *probes[] = {
		"{\"host\": \"h1\", \"time\": \"1970-01-01T00:01:40Z\", \"backends\": [{\"name\": \"cpu\","
		" \"state\": \"alive\", \"devices\": [{\"kind\": \"Xeon\", \"memory_bytes\": 1000}]}]}",
		"{\"host\": \"h1\", \"time\": \"1970-01-01T00:05:00Z\", \"backends\": [{\"name\": \"cpu\","
		" \"state\": \"alive\", \"devices\": [{\"kind\": \"Xeon\", \"memory_bytes\": 2000}]},"
		" {\"name\": \"cuda\", \"state\": \"installed\"}]}",
		"{\"host\": \"h2\", \"time\": \"1970-01-01T00:03:20Z\", \"backends\": [{\"name\": \"cpu\","
		" \"state\": \"alive\", \"devices\": [{\"kind\": \"Xeon\", \"memory_bytes\": 3000}]}]}",
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct calib_attempt a;

		every_attempt(&a, rows[i].id, rows[i].mb, rows[i].jax, rows[i].outcome, rows[i].t);
		if (rows[i].job)
			a.job_id = xl_strdup(rows[i].job);
		a.rank = rows[i].rank < 0 ? CALIB_UNSET : rows[i].rank;
		assert_int_equal(calib_record_attempt(st, &a), 0);
		json_object_set_new(ev->recorded, a.id, calib_attempt_to_json(&a, CALIB_JSON_FULL));
		calib_attempt_release(&a);
	}
	for (size_t i = 0; i < 3; i++) {
		json_t *doc = json_loads(probes[i], 0, NULL);

		assert_int_equal(calib_record_probe(st, doc), 0);
		json_decref(doc);
	}
}

/* The reads of `calib history`, `stats`, `report` and the ranks' choice on
 * one set of records, as one line of text. */
static void every_read(struct calib_store *st, struct every *ev)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	struct calib_report_filter rf = { NULL, NAN };
	struct every_fam ef = { &ev->b, "", "" };
	struct calib_hardware hw;
	char hash[65], *c = NULL, *sg = NULL, *id = NULL;
	json_t *parts = NULL;

	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	xl_buf_adds(&ev->b, "| ");
	f.limit = 2;
	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	f.limit = 0;
	f.outcome = XL_OUT_OOM;
	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	f.outcome = -1;
	f.job = "job";
	f.since = 301;
	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	f.job = NULL;
	f.since = NAN;
	f.host = "h2";
	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	f.host = NULL;
	f.profile = "prof";
	f.signature = json_string_value(json_object_get(json_object_get(ev->recorded, "e5"), "signature"));
	assert_int_equal(calib_history(st, &f, every_history, ev), 0);
	xl_buf_adds(&ev->b, "| ");
	assert_int_equal(calib_stats(st, NULL, 0, every_stats, &ev->b), 0);
	assert_int_equal(calib_stats(st, "prof", 1, every_stats, &ev->b), 0);
	assert_int_equal(calib_stats(st, "other", 0, every_stats, &ev->b), 0);
	xl_buf_adds(&ev->b, "| ");
	assert_int_equal(calib_resolve_signature(st, f.signature, hash), 0);
	assert_string_equal(hash, f.signature);
	assert_int_equal(calib_resolve_signature(st, "", hash), XL_EX_USAGE);
	assert_int_equal(calib_latest_hardware(st, "h1", 0, &hw), 0);
	xl_buf_addf(&ev->b, "%s:%lld:%lld ", hw.kind, (long long)hw.count, (long long)hw.memory_bytes);
	assert_int_equal(calib_last_parts(st, "prof", &parts, &id), 0);
	xl_buf_addf(&ev->b, "%s:%d ", id, json_is_object(parts));
	json_decref(parts);
	free(id);
	assert_int_equal(calib_last_parts(st, "nobody", &parts, &id), 0);
	assert_null(parts);
	assert_null(id);
	assert_int_equal(calib_job_choose(st, "job", "big", NULL, 1, &c, &sg), 0);
	xl_buf_addf(&ev->b, "%s:%s ", c, sg ? sg : "-");
	free(c);
	free(sg);
	assert_int_equal(calib_job_choose(st, "job", "small", "s", 0, &c, &sg), 0);
	xl_buf_addf(&ev->b, "%s:%s | ", c, sg ? sg : "-");
	free(c);
	free(sg);
	assert_int_equal(calib_report_profiles(st, &rf, 0, every_profile, &ev->b), 0);
	rf.profile = "prof";
	assert_int_equal(calib_report_timeline(st, &rf, 50, 100, every_timeline, &ev->b), 0);
	assert_int_equal(calib_report_stacks(st, &rf, every_stack, &ev->b), 0);
	assert_int_equal(calib_report_pvo(st, &rf, 4, every_pvo, &ev->b), 0);
	rf.since = 250;
	assert_int_equal(calib_report_sources(st, &rf, every_source, &ev->b), 0);
	assert_int_equal(calib_report_families(st, &rf, 0, every_family, &ef), 0);
	assert_int_equal(calib_report_members(st, &rf, ef.family, ef.stack, 10, every_member,
					      &ev->b), 0);
	assert_int_equal(calib_report_probes(st, &rf, every_probe, &ev->b), 0);
	rf.profile = "";
	assert_int_equal(calib_report_profiles(st, &rf, 0, every_profile, &ev->b), 0);
}

/* what every_read reads of every_record's records */
#define EVERY_READ \
	"e6:ok:4 e5:compile-storm:4 e4:oom:4 e3:ok:4 e2:oom:4 e1:ok:4 | e6:ok:4 " \
	"e5:compile-storm:4 e4:oom:4 e2:oom:4 e6:ok:4 e4:oom:4 e5:compile-storm:4 | " \
	"b376d2:2/1/1:1.050:host_peak_vm:prof:big:500 " \
	"7df1b0:1/0/0:1.050:host_peak_vm:prof:big:400 " \
	"42f319:2/1/1:1.050:host_peak_vm:prof:small:301 " \
	"b376d2:2/1/1:1.050:host_peak_vm:prof:big:500 | Xeon:1:2000 e6:1 big:- big:- | " \
	"prof:6:100-500 0:ok:1:100-100:1.250/1.250:3/1:2/1 " \
	"1:oom:1:200-200:2.500/2.500:3/1:2/1 2:ok:1:300-300:1.250/1.250:3/1:2/1 " \
	"2:oom:1:301-301:1.250/1.250:3/1:2/1 3:compile-storm:1:400-400:3.750/3.750:3/1:2/1 " \
	"4:ok:1:500-500:2.500/2.500:3/1:2/1 416016:Xeon:5:100-500 3dc333:Xeon:1:400-400 " \
	"host_peak_vm:compile-storm:1:6000000/6300000 host_peak_vm:ok:2:2000000/2100000 " \
	"host_peak_vm:ok:1:4000000/4200000 host_peak_vm:oom:1:2000000/2100000 " \
	"host_peak_vm:oom:1:4000000/4200000 host_peak_rss:o:-:4 host_peak_vm:o:wait4:4 " \
	"host_peak_vm:p:fit:4 xla_buffers:o:-:4 5a95c7:416016:3/2:500:prof:1 " \
	"5a95c7:3dc333:1/1:400:prof:1 " \
	"7df1b0:compile-storm:host_peak_rss:1:3000000-3000000:3000000:1 " \
	"7df1b0:compile-storm:host_peak_vm:1:6300000-6300000:6300000:1 " \
	"7df1b0:compile-storm:xla_buffers:1:2100000-2100000:2100000:1 h1:300:2 "

/* Every operation of the store, on both: records, then every read, the
 * export and an import of it into a new store, whose reads are the same;
 * a choice, and a forgotten signature. */
static void test_every_operation(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("every"), *path2 = be->location("every2"), *text, *text2;
	struct calib_store *st = open_ok(path), *st2;
	struct every ev = { XL_BUF_INIT, json_object(), 0 }, ev2 = { XL_BUF_INIT, NULL, 0 };
	struct calib_import_result res;
	int64_t n = -1;

	every_record(st, &ev);
	every_read(st, &ev);
	assert_string_equal(xl_buf_str(&ev.b), EVERY_READ);
	text = every_export(st);
	every_export_check(&ev, text);
	assert_int_equal(ev.exported, 6);
	/* the export into a new store: the same store */
	st2 = open_ok(path2);
	memset(&res, 0, sizeof(res));
	assert_int_equal(calib_import(st2, text, strlen(text), &res), 0);
	assert_int_equal(res.attempts, 6);
	assert_int_equal(res.probes, 3);
	calib_import_result_release(&res);
	text2 = every_export(st2);
	assert_string_equal(text2, text);
	ev2.recorded = json_incref(ev.recorded);
	be->exec(path2, "DELETE FROM job_choices");
	every_read(st2, &ev2);
	assert_string_equal(xl_buf_str(&ev2.b), xl_buf_str(&ev.b));
	/* forget: the signature and its attempts, once */
	assert_int_equal(calib_forget(st, json_string_value(json_object_get(
				      json_object_get(ev.recorded, "e1"), "signature")), &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(be->count(path, "SELECT count(*) FROM attempts"), 3);
	assert_int_equal(be->count(path, "SELECT count(*) FROM figures"), 12);
	assert_int_equal(calib_forget(st, json_string_value(json_object_get(
				      json_object_get(ev.recorded, "e1"), "signature")), &n),
			 XL_EX_NOINPUT);
	assert_non_null(strstr(calib_errmsg(st), "no signature"));
	be->check(path);
	be->check(path2);
	free(text);
	free(text2);
	xl_buf_release(&ev.b);
	xl_buf_release(&ev2.b);
	json_decref(ev.recorded);
	json_decref(ev2.recorded);
	calib_close(st);
	calib_close(st2);
	free(path);
	free(path2);
}

/* The one migration loop on each store: a build whose steps skip a version
 * (a fault injected: the driver's steps less the one to schema 5) refuses
 * to migrate a store of schema 4, says which step is missing, and leaves
 * the store as it was; the driver's own steps then migrate it. */
static void test_migration_missing_step(void **state)
{
	const struct backend *be = backend_of(state);
	bool sq = be == &sqlite_be;
	char *loc = be->location("gap");
	const char *version = sq ? "PRAGMA user_version" : "SELECT max(version) FROM calib_schema";
	const char *choices = sq ? "SELECT count(*) FROM sqlite_master WHERE name = 'job_choices'"
				 : "SELECT count(to_regclass('job_choices'))";
	struct calib_step fewer[16];
	struct calib_store *st = open_ok(loc);
	size_t n = 0;

	assert_int_equal(record(st, "gap-1", "{\"model\": {\"params\": 5}}", "ok", 0, 1000), 0);
	be->exec(loc, sq ? "DROP TABLE job_ranks; DROP TABLE job_choices;"
		      " DROP INDEX attempts_job_signature; PRAGMA user_version = 4"
		      : "DROP TABLE job_ranks; DROP TABLE job_choices;"
		      " DROP INDEX attempts_job_signature; DELETE FROM calib_schema WHERE version > 4");
	assert_int_equal(be->count(loc, version), 4);
	for (size_t i = 0; i < st->drv->nsteps; i++)
		if (st->drv->steps[i].version != 5)
			fewer[n++] = st->drv->steps[i];
	assert_int_equal(n, st->drv->nsteps - 1);
	assert_int_equal(calib_migrate(st, fewer, n, 0), XL_EX_SOFTWARE);
	assert_non_null(strstr(calib_errmsg(st), "no migration to schema 5 in this build"));
	/* nothing of the steps after the gap was kept */
	assert_int_equal(be->count(loc, version), 4);
	assert_int_equal(be->count(loc, choices), 0);
	assert_int_equal(be->count(loc, "SELECT count(*) FROM attempts WHERE id = 'gap-1'"), 1);
	/* the driver's own steps have it */
	assert_int_equal(calib_migrate(st, st->drv->steps, st->drv->nsteps, 0), 0);
	assert_int_equal(be->count(loc, version), CALIB_SCHEMA_VERSION);
	assert_int_equal(be->count(loc, choices), 1);
	assert_int_equal(be->count(loc, "SELECT count(*) FROM attempts WHERE id = 'gap-1'"), 1);
	calib_close(st);
	be->check(loc);
	free(loc);
}

/* A choice that is not there once published (a trigger takes it away) is
 * said to be so, in the same words on both stores, and nothing is chosen. */
static void test_choice_vanished(void **state)
{
	const struct backend *be = backend_of(state);
	char *path = be->location("vanish"), *c = NULL, *sg = NULL;
	struct calib_store *st = open_ok(path);

	if (be == &sqlite_be)
		be->exec(path, "CREATE TRIGGER gone AFTER INSERT ON job_choices BEGIN"
			 " DELETE FROM job_choices WHERE job_id = NEW.job_id; END");
	else
		be->exec(path, "CREATE FUNCTION gone() RETURNS trigger LANGUAGE plpgsql AS"
			 " $$ BEGIN DELETE FROM job_choices WHERE job_id = NEW.job_id; RETURN NULL;"
			 " END $$; CREATE TRIGGER gone AFTER INSERT ON job_choices FOR EACH ROW"
			 " EXECUTE FUNCTION gone()");
	assert_int_equal(calib_job_choose(st, "j", "big", "s1", 0, &c, &sg), XL_EX_CANTCREAT);
	assert_null(c);
	assert_null(sg);
	assert_non_null(strstr(calib_errmsg(st),
			       "cannot publish the job's candidate: no choice after publishing one"));
	calib_close(st);
	free(path);
}

/* A listening socket that never answers: a server that hangs. */
static int silent_server(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.5432", dir);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

static void test_pg_unreachable(void **state)
{
	char *nodir = path_of("nosock"), *hang = path_of("hang");
	char *loc, *err = NULL;
	struct calib_store *st = NULL;
	double t0;
	int fd;

	(void)state;
	/* no server: at once, saying so, naming the store without the password
	 * (a wait of 600 s: one that waited would fail the bound by far; the
	 * bounds here leave room for a busy host and stay under the waits a
	 * wrong choice would give) */
	mkdir(nodir, 0700);
	loc = xl_asprintf("postgresql://alice:Pa55-word@/calib?host=%s", nodir);
	calib_set_wait(600.0);
	t0 = xl_mono();
	assert_int_equal(calib_open(loc, 0, &st, &err), XL_EX_CANTCREAT);
	assert_true(xl_mono() - t0 < 300);
	assert_null(st);
	assert_non_null(strstr(err, "store 'postgresql://alice@/calib?host="));
	assert_non_null(strstr(err, "unreachable"));
	assert_null(strstr(err, "Pa55-word"));
	free(err);
	free(loc);
	/* a server that never answers: given up after the wait */
	mkdir(hang, 0700);
	fd = silent_server(hang);
	loc = xl_asprintf("postgresql://alice@/calib?host=%s", hang);
	calib_set_wait(1.0);
	t0 = xl_mono();
	assert_int_equal(calib_open(loc, 0, &st, &err), XL_EX_CANTCREAT);
	assert_true(xl_mono() - t0 >= 0.9);
	assert_true(xl_mono() - t0 < 300);
	assert_non_null(strstr(err, "unreachable: no answer from the server within 1 s"));
	free(err);
	/* connect_timeout, when shorter, is the connection's own */
	calib_set_wait(30.0);
	free(loc);
	loc = xl_asprintf("postgresql://alice@/calib?host=%s&connect_timeout=2", hang);
	t0 = xl_mono();
	assert_int_equal(calib_open(loc, 0, &st, &err), XL_EX_CANTCREAT);
	assert_true(xl_mono() - t0 < 25);
	assert_non_null(strstr(err, "within 2 s"));
	free(err);
	close(fd);
	free(loc);
	free(nodir);
	free(hang);
}

static void test_pg_password_never_shown(void **state)
{
	/* as libpq reads them: the first two are the same password, encoded
	 * and not; the last is not a valid escape at all */
	static const char *const uris[] = {
		"postgresql://bob:S3cret%40Pass@/db?host=/nonexistent-xl",
		"postgresql://bob@/db?host=/nonexistent-xl&password=S3cret%40Pass",
		"postgres://bob:S3cretPass@/db?password=Other-S3cret&host=/nonexistent-xl",
		"postgresql://bob:S3cret%zzPass@/db?host=/nonexistent-xl",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		struct calib_store *st = NULL;
		char *err = NULL;

		assert_int_equal(calib_open(uris[i], 0, &st, &err), XL_EX_CANTCREAT);
		assert_non_null(err);
		if (strstr(err, "S3cret") || strstr(err, "Pass"))
			fprintf(stderr, "shown: %s\n", err);
		assert_null(strstr(err, "S3cret"));
		assert_null(strstr(err, "Pass"));
		assert_non_null(strstr(err, "bob"));
		free(err);
	}
	/* a short password is hidden where it stands alone, not inside words */
	{
		struct calib_store *st = NULL;
		char *err = NULL;

		assert_int_equal(calib_open("postgresql://bob:b%zz@/db?host=/nonexistent-xl", 0, &st, &err),
				 XL_EX_CANTCREAT);
		assert_non_null(strstr(err, "invalid location: invalid percent-encoded token: \"***\""));
		free(err);
		assert_int_equal(calib_open("postgresql://bob:b@/db?host=/nonexistent-xl", 0, &st, &err),
				 XL_EX_CANTCREAT);
		assert_non_null(strstr(err, "'postgresql://bob@/db?host=/nonexistent-xl': unreachable: "));
		free(err);
	}
}

static void test_location_display(void **state)
{
	static const char *const cases[][2] = {
		{ "/x/calib.db", "/x/calib.db" },
		{ "postgresql://u:pw@h/db", "postgresql://u@h/db" },
		{ "postgres://u@h/db?password=pw&sslmode=require", "postgres://u@h/db?sslmode=require" },
		{ "postgresql://h/db?sslmode=require&pass%77ord=pw", "postgresql://h/db?sslmode=require" },
		/* the user part ends at the first '@' before any '/', '?' or not */
		{ "postgresql://u?:pw@h/db", "postgresql://u?@h/db" },
		{ "postgresql://u:p@w@h/db", "postgresql://u@w@h/db" },
		{ "postgresql://h/a:b@c", "postgresql://h/a:b@c" },
		{ "postgresql://u:pw@", "postgresql://u@" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *shown = calib_location_display(cases[i][0]);

		assert_string_equal(shown, cases[i][1]);
		assert_int_equal(xl_fuzz_location((const uint8_t *)cases[i][0], strlen(cases[i][0])), 0);
		free(shown);
	}
}

/* Makes role NAME (password PASS, one who must give it) with a schema of
 * its own in the test server's database; returns
 * "postgresql://NAME:PASS@/DB?host=..." (PASS percent-encoded as given,
 * NULL: no password in the URL; caller frees). */
static char *pg_role(const char *name, const char *pass, const char *url_pass)
{
	const char *base = pg_base(), *host = strstr(base, "host="), *db = strstr(base, "@/");
	char *sql, *url;

	assert_non_null(host);
	assert_non_null(db);
	db += 2;
	sql = xl_asprintf("DROP SCHEMA IF EXISTS %s CASCADE; DROP ROLE IF EXISTS %s;"
			  " CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE xlaunch_password;"
			  " CREATE SCHEMA %s AUTHORIZATION %s", name, name, name, pass, name, name);
	pg_exec(base, sql);
	free(sql);
	url = xl_asprintf("postgresql://%s%s%s@/%.*s?%.*s&options=-csearch_path%%3D%s", name,
			  url_pass ? ":" : "", url_pass ? url_pass : "", (int)strcspn(db, "?"), db,
			  (int)strcspn(host, "&"), host, name);
	return url;
}

static void test_pg_passwords(void **state)
{
	char *good, *bad, *bare, *passfile, *svcfile, *text, *err = NULL;
	struct calib_store *st = NULL;

	backend_of(state);
	/* the password has characters a URI must encode */
	good = pg_role("u_pw", "Right@Pass/1", "Right%40Pass%2F1");
	bad = pg_role("u_pw", "Right@Pass/1", "Wrong%40Pass%2F2");
	bare = pg_role("u_pw", "Right@Pass/1", NULL);
	/* a wrong password: refused, and never shown */
	assert_int_equal(calib_open(bad, 0, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, "unreachable"));
	assert_non_null(strstr(err, "password authentication failed"));
	assert_null(strstr(err, "Wrong"));
	free(err);
	/* the right one: the store shows itself without it */
	st = open_ok(good);
	assert_null(strstr(calib_store_path(st), "Right"));
	assert_int_equal(strncmp(calib_store_path(st), "postgresql://u_pw@/", 19), 0);
	assert_non_null(strstr(calib_store_path(st), "?host="));
	assert_int_equal(record(st, "pw-1", "{\"model\": {\"params\": 5}}", "ok", 10, 100), 0);
	calib_close(st);
	/* none given: libpq's password file (PGPASSFILE, 0600) */
	assert_int_equal(calib_open(bare, 0, &st, &err), XL_EX_CANTCREAT);
	assert_non_null(strstr(err, "password"));
	free(err);
	passfile = xl_test_write("pgpass", "*:*:*:u_pw:Right@Pass/1\n");
	chmod(passfile, 0600);
	setenv("PGPASSFILE", passfile, 1);
	st = open_ok(bare);
	assert_int_equal(record(st, "pw-2", "{\"model\": {\"params\": 5}}", "ok", 10, 101), 0);
	calib_close(st);
	/* a service file names the server, database, user and schema */
	{
		const char *host = strstr(pg_base(), "host=") + 5, *db = strstr(pg_base(), "@/") + 2;

		text = xl_asprintf("[xltest]\nhost=%.*s\nport=5432\ndbname=%.*s\nuser=u_pw\n"
				   "options=-csearch_path=u_pw\n", (int)strcspn(host, "&"), host,
				   (int)strcspn(db, "?"), db);
		svcfile = xl_test_write("pg_service.conf", text);
		free(text);
	}
	setenv("PGSERVICEFILE", svcfile, 1);
	st = open_ok("postgresql://?service=xltest");
	assert_int_equal(record(st, "pw-3", "{\"model\": {\"params\": 5}}", "ok", 10, 102), 0);
	calib_close(st);
	unsetenv("PGSERVICEFILE");
	unsetenv("PGPASSFILE");
	assert_int_equal(pg_count(good, "SELECT count(*) FROM attempts"), 3);
	free(good);
	free(bad);
	free(bare);
	free(passfile);
	free(svcfile);
}

static void test_pg_lost_connection(void **state)
{
	char *loc, *named;
	struct calib_store *st;
	const char *kill_it = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
			      " WHERE application_name = 'xl_lost'";
	struct calib_filter f = CALIB_FILTER_INIT;
	int n = 0;

	backend_of(state);
	loc = pg_location("lost");
	named = pg_url_with(loc, "application_name=xl_lost");
	st = open_ok(named);
	assert_int_equal(record(st, "l-1", "{\"model\": {\"params\": 5}}", "ok", 10, 100), 0);
	/* the server ends the connection (a restart, an administrator): the
	 * next write and the next read each go through on a new one */
	assert_int_equal(pg_count(loc, kill_it), 1);
	if (record(st, "l-2", "{\"model\": {\"params\": 5}}", "ok", 10, 101))
		fail_msg("after the connection was ended: %s", calib_errmsg(st));
	assert_int_equal(pg_count(loc, kill_it), 1);
	assert_int_equal(calib_history(st, &f, count_row, &n), 0);
	assert_int_equal(n, 2);
	calib_close(st);
	free(named);
	free(loc);
}

/* Holds signature hash in an uncommitted transaction of its own for a
 * moment, then commits: a concurrent SERIALIZABLE writer of the same hash
 * gets a serialization failure. */
static pid_t hold_signature(const char *loc, const char *hash)
{
	int p[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		PGconn *conn = PQconnectdb(loc);
		char *sql = xl_asprintf("BEGIN; INSERT INTO signatures (hash, first_seen)"
					" VALUES ('%s', 0)", hash);
		PGresult *r = PQexec(conn, sql);

		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		usleep(300000);
		r = PQexec(conn, "COMMIT");
		_exit(PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void wait_ok(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_pg_serialization_retried(void **state)
{
	char *loc, *ser, *sql;
	struct calib_store *st;
	struct calib_sig sig1, sig2;
	json_t *p1, *p2, *a;
	PGconn *conn;
	PGresult *r;
	pid_t pid;

	/* skips without a server: nothing allocated before */
	backend_of(state);
	p1 = json_loads("{\"model\": {\"params\": 1}}", 0, NULL);
	p2 = json_loads("{\"model\": {\"params\": 2}}", 0, NULL);
	loc = pg_location("ser");
	/* a server whose transactions are all SERIALIZABLE (loc ends in its
	 * options) */
	ser = xl_asprintf("%s%%20-cdefault_transaction_isolation%%3Dserializable", loc);
	st = open_ok(ser);
	calib_signature(p1, &sig1);
	calib_signature(p2, &sig2);
	/* the conflict, as the store's own insert meets it: the server's
	 * serialization failure */
	conn = pg_raw(ser);
	PQclear(PQexec(conn, "BEGIN"));
	/* the snapshot is taken now, before the other transaction inserts: the
	 * conflict is certain however late the insert below comes (it may come
	 * after the other's commit on a busy host) */
	PQclear(PQexec(conn, "SELECT 1"));
	pid = hold_signature(loc, sig1.hash);
	sql = xl_asprintf("INSERT INTO signatures (hash, first_seen) VALUES ('%s', 1)"
			  " ON CONFLICT (hash) DO NOTHING", sig1.hash);
	r = PQexec(conn, sql);
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "40001");
	PQclear(r);
	PQfinish(conn);
	free(sql);
	wait_ok(pid);
	/* the store's write meets it too, and goes through on its second try */
	pid = hold_signature(loc, sig2.hash);
	a = json_pack("{s:s, s:s, s:s}", "id", "ser-2", "signature_json", sig2.canonical, "outcome", "ok");
	if (calib_record_attempt_json(st, a))
		fail_msg("not retried: %s", calib_errmsg(st));
	json_decref(a);
	wait_ok(pid);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts WHERE id = 'ser-2'"), 1);
	/* the signature first known by its hash alone learnt its parts */
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM signatures WHERE json IS NOT NULL"), 1);
	calib_close(st);
	calib_sig_release(&sig1);
	calib_sig_release(&sig2);
	json_decref(p1);
	json_decref(p2);
	free(ser);
	free(loc);
}

/* Many writers on a server whose transactions are all SERIALIZABLE:
 * conflicts are real, retried, and every record lands. */
static void test_pg_many_writers_serializable(void **state)
{
	char *loc, *ser;
	pid_t pids[WRITERS];

	backend_of(state);
	loc = pg_location("many_ser");
	ser = xl_asprintf("%s%%20-cdefault_transaction_isolation%%3Dserializable", loc);
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0)
			_exit(many_writer(ser, w));
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	pg_check(loc);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM attempts"), WRITERS * PER_WRITER);
	assert_int_equal(pg_count(loc, "SELECT count(*) FROM signatures"), 7);
	free(ser);
	free(loc);
}

/* A test on SQLite (its own name) and on PostgreSQL (name_pg). */
#define BOTH(f) \
	{ #f, f, NULL, NULL, (void *)&sqlite_be }, { #f "_pg", f, NULL, NULL, (void *)&pg_be }
#define PG(f) { #f, f, NULL, NULL, (void *)&pg_be }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_creates_private_store),
		cmocka_unit_test(test_open_default_location),
		cmocka_unit_test(test_open_failures),
		cmocka_unit_test(test_migrations),
		cmocka_unit_test(test_migration_v5),
		cmocka_unit_test(test_migration_v6),
		BOTH(test_record_attempt),
		BOTH(test_record_probe),
		BOTH(test_correction),
		BOTH(test_order_all_permutations),
		BOTH(test_order_precedence),
		BOTH(test_family_fit),
		BOTH(test_family_scale),
		BOTH(test_order_near_limit),
		BOTH(test_many_writers),
		BOTH(test_killed_writer),
		BOTH(test_rank_watch),
		BOTH(test_every_operation),
		BOTH(test_choice_vanished),
		BOTH(test_migration_missing_step),
		PG(test_pg_schema),
		PG(test_pg_migrations),
		PG(test_pg_migration_v6),
		cmocka_unit_test(test_pg_unreachable),
		cmocka_unit_test(test_pg_password_never_shown),
		cmocka_unit_test(test_location_display),
		PG(test_pg_passwords),
		PG(test_pg_lost_connection),
		PG(test_pg_serialization_retried),
		PG(test_pg_many_writers_serializable),
	};

	return XL_TEST_RUN(tests, xl_test_dir_setup, xl_test_dir_teardown);
}
