/* test_store_crash.c - a store writer killed with SIGKILL at random points,
 * 100 times: the store stays consistent and every record whose write was
 * acknowledged is there. */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calib/calib.h"

#define ROUNDS 100

static char dir[256];

/* Child: records attempts forever; after each one the store acknowledged,
 * writes its id to the ack pipe. */
static void writer(const char *path, int round, int ackfd)
{
	struct calib_store *st;
	json_t *parts = json_pack("{s:{s:i}}", "model", "params", round);

	if (calib_open(path, 0, &st, NULL) != 0)
		_exit(2);
	for (int k = 0;; k++) {
		char id[64], line[80];
		json_t *a;

		snprintf(id, sizeof(id), "round%03d-%06d", round, k);
		a = json_pack("{s:s,s:O,s:s,s:s,s:i,s:I}", "id", id, "signature_json", parts, "outcome",
			      k % 3 ? "ok" : "oom", "host", "crash-host", "rank", round,
			      "observed_bytes", (json_int_t)(1000 + k));
		if (calib_record_attempt_json(st, a) == 0) {
			int n = snprintf(line, sizeof(line), "%s\n", id);

			if (write(ackfd, line, (size_t)n) != n)
				_exit(3);
		}
		json_decref(a);
	}
}

static void test_killed_100_times(void **state)
{
	char *path, buf[1 << 16];
	struct xl_buf acked = XL_BUF_INIT;
	struct xl_strv ids = XL_STRV_INIT;
	sqlite3 *db;
	sqlite3_stmt *s;
	unsigned seed = (unsigned)time(NULL);

	(void)state;
	snprintf(dir, sizeof(dir), "%s/xlaunch-crash.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	path = xl_asprintf("%s/calib.db", dir);
	srand(seed);
	for (int round = 0; round < ROUNDS; round++) {
		int p[2], status;
		pid_t pid;
		ssize_t n;

		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			writer(path, round, p[1]);
		}
		close(p[1]);
		if (round == 0) {
			/* surely after a commit: one acknowledged record, however
			 * slowly a busy host lets the writer start */
			char c;

			while (read(p[0], &c, 1) == 1) {
				xl_buf_add(&acked, &c, 1);
				if (c == '\n')
					break;
			}
		} else {
			/* anywhere from before the store is open to dozens of
			 * commits in */
			usleep((useconds_t)(rand() % 40000));
		}
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		while ((n = read(p[0], buf, sizeof(buf))) > 0)
			xl_buf_add(&acked, buf, (size_t)n);
		close(p[0]);
	}
	xl_strv_split(&ids, xl_buf_str(&acked), "\n");
	print_message("seed %u: %zu acknowledged records over %d kills\n", seed, ids.n, ROUNDS);
	assert_true(ids.n > 0);

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM attempts WHERE id = ?", -1, &s, NULL),
			 SQLITE_OK);
	for (size_t i = 0; i < ids.n; i++) {
		sqlite3_bind_text(s, 1, ids.v[i], -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		if (sqlite3_column_int(s, 0) != 1)
			fail_msg("acknowledged record %s is missing", ids.v[i]);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	sqlite3_close(db);

	/* and the store still takes records through the public API */
	{
		struct calib_store *st;
		json_t *a = json_pack("{s:s,s:s,s:{s:{s:i}}}", "id", "after", "outcome", "ok",
				      "signature_json", "model", "params", 1);

		assert_int_equal(calib_open(path, 0, &st, NULL), 0);
		assert_int_equal(calib_record_attempt_json(st, a), 0);
		calib_close(st);
		json_decref(a);
	}
	xl_strv_release(&ids);
	xl_buf_release(&acked);
	free(path);
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_killed_100_times),
	};

	return XL_TEST_RUN(tests, NULL, teardown);
}
