/* test_common.c - the small helpers of common/: strings, buffers, lists,
 * the string index, units, paths and files, times, the YAML tree, JSON
 * strings and the shared vocabulary. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_buf(void **state)
{
	struct xl_buf b = XL_BUF_INIT;
	char *s;

	(void)state;
	assert_string_equal(xl_buf_str(&b), "");
	xl_buf_adds(&b, "ab");
	xl_buf_addc(&b, 'c');
	xl_buf_add(&b, "de\0f", 4);
	xl_buf_addf(&b, "%d-%s", 42, "x");
	assert_int_equal(b.len, 2 + 1 + 4 + 4);
	assert_memory_equal(b.buf, "abcde\0f42-x", 11);
	/* many appends grow it */
	for (int i = 0; i < 1000; i++)
		xl_buf_addc(&b, 'z');
	assert_int_equal(b.len, 1011);
	xl_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(xl_buf_str(&b), "");
	xl_buf_adds(&b, "kept");
	s = xl_buf_detach(&b);
	assert_string_equal(s, "kept");
	assert_null(b.buf);
	free(s);
	s = xl_buf_detach(&b);
	assert_string_equal(s, "");
	free(s);
	xl_buf_release(&b);
}

static void test_strv_and_map(void **state)
{
	struct xl_strv sv = XL_STRV_INIT;
	struct xl_strmap m = XL_STRMAP_INIT;
	char keys[300][16];
	size_t v;

	(void)state;
	xl_strv_split(&sv, "::a:bb::c:", ":");
	assert_int_equal(sv.n, 3);
	assert_string_equal(sv.v[0], "a");
	assert_string_equal(sv.v[2], "c");
	assert_true(xl_strv_contains(&sv, "bb"));
	assert_false(xl_strv_contains(&sv, "b"));
	xl_strv_push_owned(&sv, xl_strdup("d"));
	assert_int_equal(sv.n, 4);
	xl_strv_release(&sv);
	assert_int_equal(sv.n, 0);

	for (int i = 0; i < 300; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		xl_strmap_put(&m, keys[i], (size_t)i);
	}
	xl_strmap_put(&m, keys[7], 700);
	assert_true(xl_strmap_get(&m, "k299", &v));
	assert_int_equal(v, 299);
	assert_true(xl_strmap_get(&m, "k7", &v));
	assert_int_equal(v, 700);
	assert_false(xl_strmap_get(&m, "k300", &v));
	xl_strmap_release(&m);
}

static void test_strings(void **state)
{
	static const char *const names[] = { "history", "stats", "forget", NULL };

	(void)state;
	assert_true(xl_streq(NULL, NULL));
	assert_false(xl_streq("a", NULL));
	assert_true(xl_startswith("xla_flags", "xla_"));
	assert_false(xl_startswith("xl", "xla_"));
	assert_true(xl_endswith("a.yaml", ".yaml"));
	assert_false(xl_endswith("yaml", ".yaml"));
	assert_int_equal(xl_edit_distance("kitten", "sitting", 10), 3);
	assert_int_equal(xl_edit_distance("", "abc", 10), 3);
	/* capped: anything beyond max is max + 1 */
	assert_int_equal(xl_edit_distance("aaaaaaaa", "bbbbbbbb", 2), 3);
	assert_string_equal(xl_did_you_mean("histroy", names), "history");
	assert_null(xl_did_you_mean("zzzzzzzz", names));
	/* an empty list (no profile anywhere on the path) suggests nothing */
	assert_null(xl_did_you_mean("cpu-jax", NULL));
	assert_true(xl_valid_env_name("XLA_FLAGS"));
	assert_true(xl_valid_env_name("_x1"));
	assert_false(xl_valid_env_name("1X"));
	assert_false(xl_valid_env_name("A-B"));
	assert_false(xl_valid_env_name(""));
	{
		char *s = xl_asprintf("%s=%d", "n", 5);

		assert_string_equal(s, "n=5");
		free(s);
		s = xl_strndup("abcdef", 3);
		assert_string_equal(s, "abc");
		free(s);
	}
}

static void test_units(void **state)
{
	uint64_t u;
	double d;
	char buf[32];

	(void)state;
	assert_true(xl_parse_bytes("4096", &u));
	assert_int_equal(u, 4096);
	assert_true(xl_parse_bytes("8GiB", &u));
	assert_int_equal(u, 8ull << 30);
	assert_true(xl_parse_bytes("512M", &u));
	assert_int_equal(u, 512ull << 20);
	assert_true(xl_parse_bytes("1e9", &u));
	assert_int_equal(u, 1000000000ull);
	assert_true(xl_parse_bytes("2 GB", &u));
	assert_int_equal(u, 2000000000ull);
	assert_false(xl_parse_bytes("-1", &u));
	assert_false(xl_parse_bytes("8 parsecs", &u));
	assert_false(xl_parse_bytes("", &u));
	assert_false(xl_parse_bytes("1e30", &u));
	/* to the nearest byte, halves away from zero, over the whole range */
	assert_true(xl_parse_bytes("1.5", &u));
	assert_int_equal(u, 2);
	assert_true(xl_parse_bytes("2.5B", &u));
	assert_int_equal(u, 3);
	assert_true(xl_parse_bytes("0.49999999999999994", &u));
	assert_int_equal(u, 0);
	assert_true(xl_parse_bytes("1.4999", &u));
	assert_int_equal(u, 1);
	assert_true(xl_parse_bytes("1e19", &u));
	assert_true(u == 10000000000000000000ull);
	assert_true(xl_parse_bytes("15EiB", &u) == false);
	assert_true(xl_parse_bytes("8192TiB", &u));
	assert_true(u == 8192ull << 40);

	assert_true(xl_parse_duration("30", &d));
	assert_true(d == 30);
	assert_true(xl_parse_duration("1.5s", &d));
	assert_true(d == 1.5);
	assert_true(xl_parse_duration("250ms", &d));
	assert_true(d == 0.25);
	assert_true(xl_parse_duration("5m", &d));
	assert_true(d == 300);
	assert_true(xl_parse_duration("2h", &d));
	assert_true(d == 7200);
	assert_false(xl_parse_duration("soon", &d));
	assert_false(xl_parse_duration("5d", &d));
	assert_false(xl_parse_duration(" 5", &d));

	assert_string_equal(xl_fmt_bytes(512, buf, sizeof(buf)), "512 B");
	assert_string_equal(xl_fmt_bytes(1536ull << 20, buf, sizeof(buf)), "1.5 GiB");
}

static void test_files(void **state)
{
	char *p, *data, *nested;
	size_t len;
	int fd;
	struct stat st;

	(void)state;
	p = xl_test_write("f.txt", "hello\n");
	data = xl_read_file(p, &len, 0);
	assert_string_equal(data, "hello\n");
	assert_int_equal(len, 6);
	free(data);
	/* too large for the limit */
	errno = 0;
	assert_null(xl_read_file(p, &len, 3));
	assert_int_equal(errno, EFBIG);
	free(p);
	p = xl_test_path("missing");
	assert_null(xl_read_file(p, &len, 0));
	assert_int_equal(errno, ENOENT);
	free(p);

	p = xl_test_path("w.bin");
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(xl_write_all(fd, "abc\0def", 7), 0);
	close(fd);
	data = xl_read_file(p, &len, 0);
	assert_int_equal(len, 7);
	assert_memory_equal(data, "abc\0def", 7);
	free(data);
	free(p);

	nested = xl_test_path("a/b/c");
	assert_int_equal(xl_mkdirs(nested, 0700), 0);
	assert_int_equal(stat(nested, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	/* again is fine; a file in the way is not */
	assert_int_equal(xl_mkdirs(nested, 0700), 0);
	free(nested);
	p = xl_test_write("file", "x");
	nested = xl_asprintf("%s/sub", p);
	assert_int_equal(xl_mkdirs(nested, 0700), -1);
	free(nested);
	free(p);
}

static void test_dirs(void **state)
{
	char *s;

	(void)state;
	setenv("XDG_STATE_HOME", "/srv/state", 1);
	setenv("XDG_CONFIG_HOME", "/srv/config", 1);
	s = xl_state_dir();
	assert_string_equal(s, "/srv/state/xlaunch");
	free(s);
	s = xl_config_dir();
	assert_string_equal(s, "/srv/config/xlaunch");
	free(s);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/home/u", 1);
	s = xl_state_dir();
	assert_string_equal(s, "/home/u/.local/state/xlaunch");
	free(s);
	unsetenv("XDG_CONFIG_HOME");
	/* XLAUNCH_DATADIR wins (set by the test runner or the test main) */
	{
		char *want = xl_asprintf("%s/etc/outcomes.yaml", getenv("XLAUNCH_DATADIR"));

		s = xl_data_path("etc/outcomes.yaml");
		assert_string_equal(s, want);
		free(s);
		free(want);
	}
	assert_true(strlen(xl_hostname()) > 0);
	assert_true(xl_now() > 1.7e9);
	assert_true(xl_mono() > 0);
}

static void test_times(void **state)
{
	char buf[40];
	double t;

	(void)state;
	assert_string_equal(xl_iso_time(0, buf, sizeof(buf)), "1970-01-01T00:00:00Z");
	assert_string_equal(xl_iso_time_ms(1800000000.25, buf, sizeof(buf)), "2027-01-15T08:00:00.250Z");
	assert_string_equal(xl_iso_time_ms(1800000000.0, buf, sizeof(buf)), "2027-01-15T08:00:00Z");
	/* rounding up to the next second */
	assert_string_equal(xl_iso_time_ms(1800000000.9996, buf, sizeof(buf)), "2027-01-15T08:00:01Z");
	assert_string_equal(xl_iso_time_ms(1800000000.0004, buf, sizeof(buf)), "2027-01-15T08:00:00Z");
	assert_string_equal(xl_iso_time_ms(1800000000.9994, buf, sizeof(buf)), "2027-01-15T08:00:00.999Z");
	assert_string_equal(xl_iso_time_ms(0.5, buf, sizeof(buf)), "1970-01-01T00:00:00.500Z");
	assert_true(xl_parse_iso_time("2027-01-15T08:00:00Z", &t));
	assert_true(t == 1800000000.0);
	assert_true(xl_parse_iso_time("2027-01-15T08:00:00.250Z", &t));
	assert_true(fabs(t - 1800000000.25) < 1e-6);
	assert_true(xl_parse_iso_time("2027-01-15 08:00", &t));
	assert_true(t == 1800000000.0);
	assert_true(xl_parse_iso_time("2027-01-15", &t));
	assert_true(t == 1800000000.0 - 8 * 3600);
	assert_false(xl_parse_iso_time("yesterday", &t));
	assert_false(xl_parse_iso_time("2027-01-15T08:00:00Zjunk", &t));
}

static void test_yaml(void **state)
{
	static const char doc[] =
		"a: 1\n"
		"b: [x, 'y']\n"
		"c: ~\n"
		"d: '~'\n"
		"e: yes\n"
		"f: 2.5\n"
		"g: {h: null}\n";
	struct xl_ynode *root, *n;
	char *err = NULL;
	bool b;
	double d;

	(void)state;
	root = xl_yaml_parse(doc, strlen(doc), &err);
	assert_non_null(root);
	assert_null(err);
	assert_int_equal(root->kind, XL_Y_MAP);
	n = xl_ymap_get(root, "b");
	assert_int_equal(n->kind, XL_Y_SEQ);
	assert_int_equal(n->n, 2);
	assert_true(n->items[0]->plain);
	assert_false(n->items[1]->plain);
	assert_int_equal(n->line, 2);
	assert_int_equal(n->col, 4);
	assert_string_equal(xl_ynode_kind_name(n), "a list");
	assert_true(xl_ynode_is_null(xl_ymap_get(root, "c")));
	assert_false(xl_ynode_is_null(xl_ymap_get(root, "d")));   /* quoted: a string */
	assert_true(xl_ynode_is_null(xl_ymap_get(xl_ymap_get(root, "g"), "h")));
	assert_true(xl_ynode_is_null(xl_ymap_get(root, "absent")));
	assert_true(xl_yscalar_bool(xl_ymap_get(root, "e"), &b));
	assert_true(b);
	assert_false(xl_yscalar_bool(xl_ymap_get(root, "a"), &b));
	assert_true(xl_yscalar_double(xl_ymap_get(root, "f"), &d));
	assert_true(d == 2.5);
	assert_false(xl_yscalar_double(xl_ymap_get(root, "b"), &d));
	xl_ynode_free(root);

	/* errors carry a position */
	assert_null(xl_yaml_parse("a: [1, 2\n", 9, &err));
	assert_non_null(err);
	assert_true(err[0] >= '1' && err[0] <= '9' && strchr(err, ':'));
	free(err);
	assert_null(xl_yaml_parse("", 0, &err));
	assert_string_equal(err, "1:1: file is empty");
	free(err);
	/* hostile nesting is refused, not recursed into */
	{
		struct xl_buf b2 = XL_BUF_INIT;

		for (int i = 0; i < XL_YAML_MAX_DEPTH + 10; i++)
			xl_buf_addc(&b2, '[');
		assert_null(xl_yaml_parse(b2.buf, b2.len, &err));
		assert_non_null(err);
		free(err);
		xl_buf_release(&b2);
	}
}

static void test_json_str(void **state)
{
	struct xl_buf b = XL_BUF_INIT;

	(void)state;
	xl_json_str(&b, "a\"b\\c\n\t\x01");
	assert_string_equal(xl_buf_str(&b), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
	xl_buf_release(&b);
}

static void test_vocabulary(void **state)
{
	enum xl_outcome o;
	unsigned set;

	(void)state;
	/* worst first */
	assert_string_equal(xl_outcome_name(XL_OUT_OOM), "oom");
	assert_true(XL_OUT_OOM < XL_OUT_CRASH && XL_OUT_CRASH < XL_OUT_TIMEOUT &&
		    XL_OUT_TIMEOUT < XL_OUT_ERROR && XL_OUT_ERROR < XL_OUT_INTERRUPTED &&
		    XL_OUT_INTERRUPTED < XL_OUT_PEER_FAILED &&
		    XL_OUT_PEER_FAILED < XL_OUT_COMPILE_STORM && XL_OUT_COMPILE_STORM < XL_OUT_OK);
	assert_string_equal(xl_outcome_name(XL_OUT_PEER_FAILED), "peer-failed");
	for (int k = 0; k < XL_OUT_COUNT; k++) {
		assert_true(xl_outcome_parse(xl_outcome_name((enum xl_outcome)k), &o));
		assert_int_equal(o, k);
	}
	assert_string_equal(xl_outcome_name(XL_OUT_COUNT), "?");
	assert_false(xl_outcome_parse("meh", &o));
	assert_false(xl_outcome_parse(NULL, &o));
	assert_true(xl_outcome_set_parse("oom,crash", &set));
	assert_int_equal(set, (1u << XL_OUT_OOM) | (1u << XL_OUT_CRASH));
	assert_true(xl_outcome_set_parse("none", &set));
	assert_int_equal(set, 0);
	assert_false(xl_outcome_set_parse("oom,meh", &set));
	assert_false(xl_outcome_set_parse("", &set));
	assert_string_equal(xl_severity_name(XL_SEV_NOTE), "note");
	assert_string_equal(xl_severity_name(XL_SEV_WARNING), "warning");
	assert_string_equal(xl_severity_name(XL_SEV_ERROR), "error");
}

/* The table the wheel's binary uses (built for a glibc older than
 * sigabbrev_np) says what this glibc's sigabbrev_np says, number by number. */
static void test_signal_abbrev(void **state)
{
	(void)state;
	assert_string_equal(xl_signal_abbrev(SIGSEGV), "SEGV");
	assert_string_equal(xl_signal_abbrev(SIGKILL), "KILL");
	assert_null(xl_signal_abbrev(0));
	assert_null(xl_signal_abbrev(-1));
	assert_null(xl_signal_abbrev(SIGRTMIN));
	for (int sig = 1; sig < SIGRTMIN; sig++) {
		const char *glibc = sigabbrev_np(sig);

		if (!glibc) {
			assert_null(xl_signal_abbrev(sig));
			continue;
		}
		assert_non_null(xl_signal_abbrev(sig));
		assert_string_equal(xl_signal_abbrev(sig), glibc);
	}
}

/* common/libm.c: each math function reaches libm.so.6 and answers what
 * libm answers (inputs through volatile, so the compiler folds nothing),
 * and SQLite's SQL math functions, linked statically, do too. */
static void test_libm(void **state)
{
	volatile double zero = 0, one = 1, two = 2, half = 0.5, x = 2.5, y = -2.5;
	volatile float f2 = 2, f3 = 3, f4 = 4;
	sqlite3 *db;
	sqlite3_stmt *st;

	(void)state;
	assert_true(pow(two, 10) == 1024);
	assert_true(sqrt(two * 8) == 4);
	assert_true(log(one) == 0 && exp(zero) == 1);
	assert_true(log10(1000 * one) == 3 && log2(8 * one) == 3 && exp2(3 * one) == 8);
	assert_true(floor(y) == -3 && ceil(y) == -2 && trunc(y) == -2);
	assert_true(round(x) == 3 && round(y) == -3);
	assert_true(lround(x) == 3 && llround(y) == -3);
	assert_true(fmax(one, two) == 2 && fmin(one, two) == 1);
	assert_true(fmaf(f2, f3, f4) == 10.0f);
	assert_true(fmod(7 * one, 3 * one) == 1);
	assert_true(sin(zero) == 0 && cos(zero) == 1 && tan(zero) == 0);
	assert_true(asin(zero) == 0 && acos(one) == 0 && atan(zero) == 0 && atan2(zero, one) == 0);
	assert_true(sinh(zero) == 0 && cosh(zero) == 1 && tanh(zero) == 0);
	assert_true(asinh(zero) == 0 && acosh(one) == 0 && atanh(zero) == 0);
	assert_true(fabs(sin(half) - 0.479425538604203) < 1e-15);
	assert_true(fabs(atan2(one, one) * 4 - 3.141592653589793) < 1e-15);

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT pow(2, 10) + sqrt(16) + acos(1) + sin(0) + ln(1) + mod(7, 3)",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_true(sqlite3_column_double(st, 0) == 1029);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_strv_and_map),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_vocabulary),
		cmocka_unit_test(test_signal_abbrev),
		cmocka_unit_test(test_libm),
	};

	return XL_TEST_RUN(tests, xl_test_dir_setup, xl_test_dir_teardown);
}
