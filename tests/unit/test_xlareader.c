/* test_xlareader.c - the model of XLA's flag reader: words, numbers as
 * abseil reads them, the setters' own checks, and the verdict on a whole
 * XLA_FLAGS value.  The differential test against a real XLA is
 * tests/integration/xla_reader.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/flags/xlareader.h"
#include "launcher/flags/abslreader.h"

static void split_one(const char *s, struct xl_xla_words *w)
{
	xl_xla_split(s, strlen(s), w);
}

static void test_words(void **state)
{
	struct xl_xla_words w;

	(void)state;
	split_one(" \t--a=1\n--b='x y'--c=\"p\\\"q\\\\\" -d oops --e", &w);
	assert_int_equal(w.n, 4);
	assert_string_equal(w.v[0].text, "--a=1");
	assert_string_equal(w.v[1].text, "--b=x y");
	assert_true(w.v[1].quoted);
	assert_string_equal(w.v[2].text, "--c=p\"q\\");
	assert_int_equal(w.v[2].start, w.v[1].end);   /* right after the quote */
	assert_string_equal(w.v[3].text, "-d");
	assert_int_equal(w.v[3].start + 3, w.stop);   /* "oops" ends the reading */
	xl_xla_words_release(&w);
	/* single quotes keep backslashes; an open quote runs to the end */
	split_one("--a='\\x' --b=\"open --c", &w);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.v[0].text, "--a=\\x");
	assert_string_equal(w.v[1].text, "--b=open --c");
	assert_true(w.v[1].unterminated);
	xl_xla_words_release(&w);
	/* \v and \f are not separators; a name stops at other bytes and the
	 * quote rule then does not apply */
	split_one("--a\v--b --x.y=\"p q\"", &w);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.v[0].text, "--a\v--b");
	assert_string_equal(w.v[1].text, "--x.y=\"p");
	assert_int_equal(w.stop, strlen("--a\v--b --x.y=\"p "));
	xl_xla_words_release(&w);
}

static void test_files(void **state)
{
	(void)state;
	assert_false(xl_xla_is_file(""));
	assert_false(xl_xla_is_file(" \t--a"));
	assert_true(xl_xla_is_file("/tmp/f"));
	assert_true(xl_xla_is_file("   "));      /* all blanks: a file name */
	assert_true(xl_xla_is_file("\v--a"));    /* \v is no blank to XLA */
}

static void test_numbers(void **state)
{
	long long v;

	(void)state;
	assert_true(xl_absl_atoi(" +7\t", 4, 32, &v));
	assert_int_equal(v, 7);
	assert_true(xl_absl_atoi("-2147483648", 11, 32, &v));
	assert_false(xl_absl_atoi("2147483648", 10, 32, &v));
	assert_true(xl_absl_atoi("2147483648", 10, 64, &v));
	assert_false(xl_absl_atoi("0x10", 4, 32, &v));
	assert_false(xl_absl_atoi("1e3", 3, 32, &v));
	assert_false(xl_absl_atoi("+", 1, 32, &v));
	assert_false(xl_absl_atoi("", 0, 32, &v));
	assert_true(xl_absl_atof("1e400", 5));     /* out of range is infinity, accepted */
	assert_true(xl_absl_atof("0x1.8p1", 7));   /* hexadecimal floats */
	assert_true(xl_absl_atof("-0x1", 4));
	assert_false(xl_absl_atof("0x", 2));
	assert_false(xl_absl_atof("0xinf", 5));
	assert_true(xl_absl_atof("Infinity", 8));
	assert_false(xl_absl_atof("infin", 5));
	assert_true(xl_absl_atof("nan(x_1)", 8));
	assert_false(xl_absl_atof("nan(", 4));
	assert_true(xl_absl_atof(" +.5 ", 5));
	assert_false(xl_absl_atof("+-1", 3));
	assert_false(xl_absl_atof(".", 1));
	assert_false(xl_absl_atof("1e", 2));
	assert_false(xl_absl_atof("1.5f", 4));
	assert_true(xl_absl_duration("2h45m", 5));
	assert_true(xl_absl_duration("-inf", 4));
	assert_true(xl_absl_duration(".5s", 3));
	assert_true(xl_absl_duration("1.s", 3));
	assert_false(xl_absl_duration("1", 1));
	assert_false(xl_absl_duration("1d", 2));
	assert_false(xl_absl_duration("00", 2));
	assert_false(xl_absl_duration(" 1s", 3));
}

static enum xl_xla_verdict judge(const char *s)
{
	char *detail = NULL;
	enum xl_xla_verdict v = xl_xla_verdict(s, &detail);

	free(detail);
	return v;
}

static void test_verdicts(void **state)
{
	char path[256];
	int fd;

	(void)state;
	assert_int_equal(judge(""), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_hlo_profile=TRUE --xla_gpu_autotune_level=' 3'"), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_hlo_profile=on"), XL_XLA_PARSE_FAILS);
	/* a boolean's name does not catch a longer one */
	assert_int_equal(judge("--xla_hlo_profile_x"), XL_XLA_UNKNOWN_FLAGS);
	assert_int_equal(judge("--xla_dump_to"), XL_XLA_UNKNOWN_FLAGS);
	assert_int_equal(judge("--xla_bogus --xla_hlo_profile=2"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_hlo_profile --help"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_hlo_profile --help --x"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_bogus --help"), XL_XLA_UNKNOWN_FLAGS);
	assert_int_equal(judge("--xla_hlo_profile oops --xla_bogus"), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_gpu_enable_libnvptxcompiler"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_cpu_opt_preset=fast_compile"), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_gpu_shape_checks=runtime"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_gpu_enable_command_buffer=+fusion,-cublas"), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_gpu_enable_command_buffer=+fusion,"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_gpu_enable_command_buffer=+fusion,cublas"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_gpu_experimental_max_unroll_factor=0"), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("--xla_fuel=a=1,b=2"), XL_XLA_ACCEPTS);
	assert_int_equal(judge("--xla_fuel="), XL_XLA_PARSE_FAILS);
	assert_int_equal(judge("/nonexistent/xlaunch-flags"), XL_XLA_NO_FILE);
	snprintf(path, sizeof(path), "%s/xlareader-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "--xla_hlo_profile\n--xla_bogus\n", 30), 30);
	close(fd);
	assert_int_equal(judge(path), XL_XLA_UNKNOWN_FLAGS);
	unlink(path);
}

static void test_combine(void **state)
{
	const struct xl_flagdef *d;

	(void)state;
	assert_int_equal(xl_catalog_find_all("xla_disable_hlo_passes", &d), 1);
	assert_int_equal(xl_xla_combine(d, "a"), XL_XLA_APPEND);
	assert_int_equal(xl_catalog_find_all("xla_backend_extra_options", &d), 1);
	assert_int_equal(xl_xla_combine(d, "a=1"), XL_XLA_MERGE);
	assert_int_equal(xl_catalog_find_all("xla_gpu_enable_command_buffer", &d), 1);
	assert_int_equal(xl_xla_combine(d, "+FUSION"), XL_XLA_EDIT);
	assert_int_equal(xl_xla_combine(d, "FUSION"), XL_XLA_REPLACE);
	assert_int_equal(xl_catalog_find_all("xla_dump_to", &d), 1);
	assert_int_equal(xl_xla_combine(d, "x"), XL_XLA_REPLACE);
}

/* libtpu's own value types, as etc/flags/libtpu.yaml records them (a
 * reader and, for an enum, its values): what libtpu's parser takes. */
static void test_libtpu_types(void **state)
{
	static const char *const tri[] = { "auto", "false", "disabled", "true", "enabled", NULL };
	struct xl_flagdef d = { .name = "x", .type = XL_FT_INT, .reader = "int32" };
	char *form;

	(void)state;
	assert_null(xl_absl_value_error(&d, "2147483647"));
	assert_null(xl_absl_value_error(&d, "-2147483648"));
	assert_non_null(xl_absl_value_error(&d, "2147483648"));
	assert_non_null(xl_absl_value_error(&d, "-2147483649"));
	assert_non_null(xl_absl_value_error(&d, ""));
	assert_non_null(xl_absl_value_error(&d, "auto"));
	d.reader = "int64";
	assert_null(xl_absl_value_error(&d, "9223372036854775807"));
	assert_non_null(xl_absl_value_error(&d, "9223372036854775808"));
	d.reader = "uint32 optional auto";
	assert_null(xl_absl_value_error(&d, "4294967295"));
	assert_null(xl_absl_value_error(&d, ""));
	assert_null(xl_absl_value_error(&d, "auto"));
	assert_non_null(xl_absl_value_error(&d, "4294967296"));
	assert_non_null(xl_absl_value_error(&d, "-1"));
	assert_non_null(xl_absl_value_error(&d, "1.5"));
	form = xl_absl_accepted(&d);
	assert_string_equal(form, "an integer from 0 to 4294967295, or auto, or nothing");
	free(form);
	d.reader = "uint16";
	assert_null(xl_absl_value_error(&d, "65535"));
	assert_non_null(xl_absl_value_error(&d, "65536"));
	d.reader = "int16";
	assert_null(xl_absl_value_error(&d, "-32768"));
	assert_non_null(xl_absl_value_error(&d, "32768"));
	d.reader = "uint64";
	assert_null(xl_absl_value_error(&d, "18446744073709551615"));
	assert_non_null(xl_absl_value_error(&d, "18446744073709551616"));
	d = (struct xl_flagdef){ .name = "x", .type = XL_FT_STRING, .reader = "string duration" };
	assert_null(xl_absl_value_error(&d, "0"));
	assert_null(xl_absl_value_error(&d, "1s"));
	assert_null(xl_absl_value_error(&d, "100ms"));
	assert_null(xl_absl_value_error(&d, "-1.5h30m"));
	assert_null(xl_absl_value_error(&d, "inf"));
	assert_null(xl_absl_value_error(&d, "2us"));
	assert_non_null(xl_absl_value_error(&d, "1"));
	assert_non_null(xl_absl_value_error(&d, "1.5"));
	assert_non_null(xl_absl_value_error(&d, "s"));
	assert_non_null(xl_absl_value_error(&d, "1d"));
	assert_non_null(xl_absl_value_error(&d, ""));
	d = (struct xl_flagdef){ .name = "x", .type = XL_FT_ENUM, .reader = "string enum-icase",
				 .values = tri, .icase = true };
	assert_null(xl_absl_value_error(&d, "TRUE"));
	assert_null(xl_absl_value_error(&d, "auto"));
	assert_non_null(xl_absl_value_error(&d, "1"));
	assert_non_null(xl_absl_value_error(&d, "yes"));
	form = xl_absl_accepted(&d);
	assert_string_equal(form, "auto, false, disabled, true or enabled (in any case)");
	free(form);
	d.icase = false;
	assert_non_null(xl_absl_value_error(&d, "TRUE"));
	d = (struct xl_flagdef){ .name = "x", .type = XL_FT_STRING, .reader = "string unlearned" };
	assert_true(xl_absl_unlearned(&d));
	assert_null(xl_absl_value_error(&d, "anything"));
	assert_null(xl_absl_accepted(&d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_combine),
		cmocka_unit_test(test_libtpu_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
