/* test_calib_store.c - the SQLite store: creation, migrations, corrupt
 * files, recording, correction, retry order, concurrency and crashes. */
#include "tests/unit/unit.h"

#include "calib/calib.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const char sample_rows[] =
	"INSERT INTO signatures VALUES ('%s', 'sh', 'st', 'tpu', '{\"model\":{\"params\":1000}}', 1000);"
	"INSERT INTO attempts (id, time, profile, candidate, signature, host, rank, outcome,"
	" observed_bytes, predicted_bytes) VALUES ('old-1', 1000, 'p', 'c', '%s', 'h1', 0, 'ok', 10, 9);"
	"INSERT INTO probes (id, host, time, doc) VALUES (1, 'h1', 1000, '{\"host\":\"h1\",\"backends\":"
	"[{\"name\":\"pjrt:libtpu.so\",\"state\":\"alive\",\"devices\":[{\"kind\":\"TPU v6e\","
	"\"memory_bytes\":34359738368},{\"kind\":\"TPU v6e\",\"memory_bytes\":34359738368}]},"
	"{\"name\":\"cpu\",\"state\":\"alive\",\"devices\":[{\"kind\":\"cpu\",\"memory_bytes\":1000}]}]}');";

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
	/* a v2 store filled these as it recorded the probe */
	if (version >= 2)
		assert_int_equal(sqlite3_exec(db, "UPDATE probes SET uid = 'u1';"
					      "INSERT INTO probe_backends VALUES (1, 'pjrt:libtpu.so', 'alive',"
					      " 'TPU v6e', 2, 34359738368), (1, 'cpu', 'alive', 'cpu', 1, 1000);",
					      NULL, NULL, NULL), SQLITE_OK);
	pragma = xl_asprintf("PRAGMA user_version = %d", version);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	sqlite3_close(db);
}

static void test_migrations(void **state)
{
	(void)state;
	for (int v = 0; v < CALIB_SCHEMA_VERSION; v++) {
		char *name = xl_asprintf("v%d.db", v), *path = path_of(name);
		struct calib_store *st;
		sqlite3 *db;
		struct calib_hardware hw;
		int hrc;

		make_old(path, v);
		st = open_ok(path);
		/* the migrated store takes new records */
		assert_int_equal(record(st, "new-1", "{\"model\": {\"params\": 5}}", "oom", 0, 2000), 0);
		hrc = calib_latest_hardware(st, "h1", &hw);
		if (v >= 1) {
			/* probe backends were filled from the stored documents */
			assert_int_equal(hrc, 0);
			assert_string_equal(hw.kind, "TPU v6e");
			assert_int_equal(hw.count, 2);
			assert_int_equal(hw.memory_bytes, 34359738368LL);
		} else {
			assert_int_equal(hrc, XL_EX_NOINPUT);
		}
		calib_close(st);
		db = raw(path);
		assert_int_equal(scalar(db, "PRAGMA user_version"), CALIB_SCHEMA_VERSION);
		assert_int_equal(scalar(db, "SELECT count(*) FROM attempts"), v >= 1 ? 2 : 1);
		assert_int_equal(scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
					" AND name LIKE 'attempts_%'"), 5);
		assert_int_equal(scalar(db, "SELECT count(*) FROM probes WHERE uid IS NULL"), 0);
		sqlite3_close(db);
		expect_integrity(path);
		/* opening again is a no-op */
		st = open_ok(path);
		calib_close(st);
		free(name);
		free(path);
	}
}

/* ---- recording ---------------------------------------------------------------------------------- */

static void test_record_attempt(void **state)
{
	char *path = path_of("rec.db");
	struct calib_store *st = open_ok(path);
	struct calib_sig sig;
	json_t *parts = json_loads("{\"model\": {\"params\": 100}}", 0, NULL), *a;
	sqlite3 *db;

	(void)state;
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
	db = raw(path);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts"), 1);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE outcome = 'oom' AND"
				" time = 1795341600 AND compile_count = 3 AND rank = 0"), 1);
	sqlite3_close(db);
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
	db = raw(path);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts"), 1);
	sqlite3_close(db);
	json_decref(a);
	json_decref(parts);
	calib_sig_release(&sig);
	calib_close(st);
	free(path);
}

static void test_record_probe(void **state)
{
	char *path = path_of("probe.db");
	struct calib_store *st = open_ok(path);
	json_t *doc, *parts;
	struct calib_hardware hw;

	(void)state;
	doc = json_loads("{\"host\": \"h9\", \"time\": \"2026-01-01T00:00:00Z\", \"backends\": ["
			 "{\"name\": \"cpu\", \"state\": \"alive\", \"devices\": [{\"kind\": \"cpu\","
			 " \"memory_bytes\": 68719476736}]},"
			 "{\"name\": \"cuda\", \"state\": \"installed\", \"error\": \"no device\","
			 " \"devices\": [{\"kind\": \"H100\", \"memory_bytes\": 85899345920}]}]}", 0, NULL);
	assert_int_equal(calib_record_probe(st, doc), 0);
	assert_int_equal(calib_record_probe(st, doc), 0); /* same document and time: once */
	assert_int_equal(calib_latest_hardware(st, "h9", &hw), 0);
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
	assert_int_equal(calib_latest_hardware(st, "h9", &hw), 0);
	assert_string_equal(hw.kind, "H100");
	assert_int_equal(hw.count, 2);
	assert_int_equal(calib_latest_hardware(st, "elsewhere", &hw), XL_EX_NOINPUT);
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
	assert_true(calib_parts_fill_hardware(st, parts));
	assert_string_equal(json_string_value(json_object_get(json_object_get(parts, "hardware"), "kind")), "cpu");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(parts, "hardware"), "memory")), 1 << 30);
	json_decref(parts);
	json_decref(doc);
	calib_close(st);
	free(path);
}

/* ---- correction ---------------------------------------------------------------------------------- */

#define SHAPE "\"model\": {\"params\": 1e9}, \"hardware\": {\"kind\": \"tpu\", \"memory\": \"32GiB\"}"

static void test_correction(void **state)
{
	char *path = path_of("corr.db");
	struct calib_store *st = open_ok(path);
	struct calib_prediction p;
	json_t *parts = json_loads("{" SHAPE ", \"bundle\": {\"jax\": \"0.4.30\"}}", 0, NULL);
	json_t *other = json_loads("{" SHAPE ", \"bundle\": {\"jax\": \"0.4.31\"}}", 0, NULL);
	uint64_t analytic;

	(void)state;
	assert_int_equal(calib_predict(st, parts, 0, &p), 0);
	assert_false(p.calibrated);
	assert_non_null(strstr(p.note, "stack uncalibrated"));
	analytic = p.analytic_bytes;
	/* ratios 1.1, 1.3, 1.2 (and an oom, which does not count) */
	assert_int_equal(record(st, "a1", "{" SHAPE ", \"bundle\": {\"jax\": \"0.4.30\"}}", "ok",
				(long long)(analytic * 1.1), 1), 0);
	assert_int_equal(record(st, "a2", "{" SHAPE ", \"bundle\": {\"jax\": \"0.4.30\"}, \"toggles\":"
				" {\"X\": \"1\"}}", "ok", (long long)(analytic * 1.3), 2), 0);
	assert_int_equal(record(st, "a3", "{" SHAPE ", \"bundle\": {\"jax\": \"0.4.30\"}}", "ok",
				(long long)(analytic * 1.2), 3), 0);
	assert_int_equal(record(st, "a4", "{" SHAPE ", \"bundle\": {\"jax\": \"0.4.30\"}}", "oom",
				(long long)(analytic * 9), 4), 0);
	assert_int_equal(calib_predict(st, parts, 0, &p), 0);
	assert_true(p.calibrated);
	assert_int_equal(p.samples, 3);
	assert_true(p.correction > 1.199 && p.correction < 1.201);
	assert_true(p.predicted_bytes > analytic * 1.199 && p.predicted_bytes < analytic * 1.201);
	/* a new stack resets the factor and says so */
	assert_int_equal(calib_predict(st, other, 0, &p), 0);
	assert_false(p.calibrated);
	assert_true(p.correction == 1.0);
	assert_non_null(strstr(p.note, "stack changed"));
	/* NULL store: factor 1 */
	assert_int_equal(calib_predict(NULL, parts, 0, &p), 0);
	assert_true(p.correction == 1.0);
	json_decref(parts);
	json_decref(other);
	calib_close(st);
	free(path);
}

/* ---- order --------------------------------------------------------------------------------------- */

enum kind { K_GOOD, K_UNSEEN, K_SUSPECT, K_INFEASIBLE, K_BAD };
static const char *const kind_place[] = { "known-good", "unseen", "suspect", "infeasible", "known-bad" };

/* Parts of candidate number i of kind k: distinct shapes; infeasible ones
 * do not fit in 16 GiB. */
static json_t *cand_parts(int i, enum kind k, const char *jax)
{
	return json_pack("{s:{s:f}, s:{s:i}, s:{s:i}, s:{s:s, s:s}, s:{s:s}}",
			 "model", "params", k == K_INFEASIBLE ? 5e9 : 1e8,
			 "train", "micro_batch", i + 1,
			 "features", "variant", (int)k,
			 "hardware", "kind", "cpu", "memory", "16GiB",
			 "bundle", "jax", jax);
}

static void seed_kind(struct calib_store *st, int i, enum kind k, double t)
{
	json_t *parts;
	struct calib_sig sig;
	json_t *a;
	char id[64];

	if (k == K_UNSEEN || k == K_INFEASIBLE)
		return;
	/* suspect: the oom happened with the same shape on an older stack */
	parts = cand_parts(i, k, k == K_SUSPECT ? "0.4.1" : "0.4.30");
	calib_signature(parts, &sig);
	snprintf(id, sizeof(id), "seed-%d-%d-%.0f", i, (int)k, t);
	a = json_pack("{s:s, s:s, s:s, s:f}", "id", id, "signature_json", sig.canonical,
		      "outcome", k == K_GOOD ? "ok" : "oom", "time", t);
	assert_int_equal(calib_record_attempt_json(st, a), 0);
	json_decref(a);
	calib_sig_release(&sig);
	json_decref(parts);
}

/* calib_order over candidates [{name, parts}], its ranks as JSON [{name,
 * place, ...}] in the order to try. */
static int order_json(struct calib_store *st, const json_t *cands, json_t **order)
{
	size_t n = json_array_size(cands);
	const json_t **parts = calloc(n + 1, sizeof(*parts));
	struct calib_rank *ranks = calloc(n + 1, sizeof(*ranks));
	int rc;

	for (size_t i = 0; i < n; i++)
		parts[i] = json_object_get(json_array_get(cands, i), "parts");
	rc = calib_order(st, parts, n, ranks);
	*order = NULL;
	if (rc == 0) {
		*order = json_array();
		for (size_t i = 0; i < n; i++) {
			const json_t *c = json_array_get(cands, ranks[i].index);

			json_array_append_new(*order, calib_rank_json(&ranks[i],
				json_string_value(json_object_get(c, "name"))));
		}
	}
	free(parts);
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
	/* expected: by place, ties in profile order */
	for (int k = K_GOOD; k <= K_BAD; k++)
		for (int i = 0; i < n; i++) {
			char name[16];

			if ((int)kinds[i] != k)
				continue;
			snprintf(name, sizeof(name), "c%d", i);
			e = json_array_get(order, expect_pos++);
			assert_string_equal(json_string_value(json_object_get(e, "name")), name);
			assert_string_equal(json_string_value(json_object_get(e, "place")), kind_place[k]);
			assert_true(strlen(json_string_value(json_object_get(e, "reason"))) > 10);
			assert_int_equal(strlen(json_string_value(json_object_get(e, "signature"))), 64);
			assert_true(json_is_integer(json_object_get(e, "predicted_bytes")));
		}
	json_decref(order);
	json_decref(cands);
}

static void test_order_all_permutations(void **state)
{
	char *path = path_of("order.db");
	struct calib_store *st = open_ok(path);
	enum kind perm[5] = { K_GOOD, K_UNSEEN, K_SUSPECT, K_INFEASIBLE, K_BAD };
	int c[5] = { 0 }, i = 0, count = 1;

	(void)state;
	/* candidate i of kind k has its own signature: seed every (i, k) */
	for (int j = 0; j < 6; j++)
		for (int k = K_GOOD; k <= K_BAD; k++)
			seed_kind(st, j, k, 100 + j);
	check_order(st, perm, 5);
	/* Heap's algorithm: every order of the five kinds in the profile */
	while (i < 5) {
		if (c[i] < i) {
			enum kind tmp;
			int j = i % 2 ? c[i] : 0;

			tmp = perm[j];
			perm[j] = perm[i];
			perm[i] = tmp;
			check_order(st, perm, 5);
			count++;
			c[i]++;
			i = 0;
		} else {
			c[i] = 0;
			i++;
		}
	}
	assert_int_equal(count, 120);
	/* ties keep profile order; pairs of every kind */
	for (int a = K_GOOD; a <= K_BAD; a++)
		for (int b = K_GOOD; b <= K_BAD; b++) {
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
	char *path = path_of("prec.db");
	struct calib_store *st = open_ok(path);
	json_t *cands, *order;

	(void)state;
	/* latest outcome decides: oom then ok is good; ok then oom is bad */
	seed_parts(st, cand_parts(0, K_GOOD, "0.4.30"), "oom", 10, "a-1");
	seed_parts(st, cand_parts(0, K_GOOD, "0.4.30"), "ok", 20, "a-2");
	seed_parts(st, cand_parts(1, K_GOOD, "0.4.30"), "ok", 10, "b-1");
	seed_parts(st, cand_parts(1, K_GOOD, "0.4.30"), "oom", 20, "b-2");
	/* an error says nothing about memory: still unseen */
	seed_parts(st, json_pack("{s:{s:f}}", "model", "params", 1e3), "error", 5, "e-1");
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
	assert_string_equal(json_string_value(json_object_get(json_array_get(order, 3), "place")), "infeasible");
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

/* ---- concurrency and crashes ---------------------------------------------------------------------- */

#define WRITERS 64
#define PER_WRITER 5

static void test_many_writers(void **state)
{
	char *path = path_of("many/calib.db");
	pid_t pids[WRITERS];
	sqlite3 *db;

	(void)state;
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct calib_store *st = NULL;
			char *err = NULL;

			/* every writer opens (and may create and migrate) the store */
			if (calib_open(path, 0, &st, &err)) {
				fprintf(stderr, "writer %d: %s\n", w, err);
				_exit(1);
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
					_exit(1);
				}
				json_decref(a);
				json_decref(p);
			}
			calib_close(st);
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	expect_integrity(path);
	db = raw(path);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts"), WRITERS * PER_WRITER);
	assert_int_equal(scalar(db, "SELECT count(DISTINCT rank) FROM attempts"), WRITERS);
	assert_int_equal(scalar(db, "SELECT count(*) FROM signatures"), 7);
	sqlite3_close(db);
	free(path);
}

static void test_killed_writer(void **state)
{
	char *path = path_of("kill.db");
	struct calib_store *st = open_ok(path);
	long long before, after;
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(record(st, "kept", "{\"model\": {\"params\": 1}}", "ok", 5, 1), 0);
	calib_close(st);
	/* 1: killed inside an open write transaction */
	pid = fork();
	if (pid == 0) {
		sqlite3 *d = raw(path);

		sqlite3_exec(d, "BEGIN IMMEDIATE; INSERT INTO signatures (hash, first_seen) VALUES ('half', 0);"
			     " INSERT INTO attempts (id, time, signature, outcome) VALUES ('lost', 0, 'half', 'ok');",
			     NULL, NULL, NULL);
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
	expect_integrity(path);
	db = raw(path);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id IN ('kept')"), 1);
	assert_int_equal(scalar(db, "SELECT count(*) FROM attempts WHERE id = 'lost'"), 0);
	assert_int_equal(scalar(db, "SELECT count(*) FROM signatures WHERE hash = 'half'"), 0);
	before = scalar(db, "SELECT count(*) FROM attempts");
	sqlite3_close(db);
	/* the store goes on working */
	st = open_ok(path);
	assert_int_equal(record(st, "after", "{\"model\": {\"params\": 1}}", "ok", 5, 1), 0);
	calib_close(st);
	db = raw(path);
	after = scalar(db, "SELECT count(*) FROM attempts");
	sqlite3_close(db);
	assert_int_equal(after, before + 1);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_creates_private_store),
		cmocka_unit_test(test_open_default_location),
		cmocka_unit_test(test_open_failures),
		cmocka_unit_test(test_migrations),
		cmocka_unit_test(test_record_attempt),
		cmocka_unit_test(test_record_probe),
		cmocka_unit_test(test_correction),
		cmocka_unit_test(test_order_all_permutations),
		cmocka_unit_test(test_order_precedence),
		cmocka_unit_test(test_many_writers),
		cmocka_unit_test(test_killed_writer),
	};

	return XL_TEST_RUN(tests, xl_test_dir_setup, xl_test_dir_teardown);
}
