/* test_pep440.c - PEP 440 parsing, normalization, order and specifiers. */
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

#include "bundle/bundle.h"
#include "tests/fuzz/targets.h"

static void parse_ok(const char *in, const char *norm)
{
	struct xl_version v;

	if (xl_version_parse(in, strlen(in), &v) < 0)
		fail_msg("'%s' should parse", in);
	if (strcmp(v.norm, norm) != 0)
		fail_msg("'%s' normalizes to '%s', expected '%s'", in, v.norm, norm);
	xl_version_release(&v);
}

static void test_normalize(void **state)
{
	(void)state;
	parse_ok("1.0", "1.0");
	parse_ok("v1.0", "1.0");
	parse_ok(" V1.0\n", "1.0");
	parse_ok("1.0-1", "1.0.post1");         /* implicit post-release */
	parse_ok("1.0c1", "1.0rc1");
	parse_ok("1.0pre2", "1.0rc2");
	parse_ok("1.0preview", "1.0rc0");
	parse_ok("1.0.ALPHA.1", "1.0a1");
	parse_ok("1.0-beta_2", "1.0b2");
	parse_ok("1.0rev3", "1.0.post3");
	parse_ok("1.0r", "1.0.post0");
	parse_ok("1.0-post-4", "1.0.post4");
	parse_ok("1.0.dev", "1.0.dev0");
	parse_ok("1.0_DEV-7", "1.0.dev7");
	parse_ok("0!1.0", "1.0");
	parse_ok("01!001.010", "1!1.10");
	parse_ok("2.9.0a0+git21fec65", "2.9.0a0+git21fec65");
	parse_ok("2.9.0+GITc04e61c", "2.9.0+gitc04e61c");
	parse_ok("1.0+ubuntu-1_2.007", "1.0+ubuntu.1.2.7");
	parse_ok("1.0a-", "1.0a0");             /* a trailing separator is allowed */
	parse_ok("1.2.3.4.5.6.7", "1.2.3.4.5.6.7");
	parse_ok("1.0a1.post2.dev3+x", "1.0a1.post2.dev3+x");
	parse_ok("123456789012345678901234567890.1", "123456789012345678901234567890.1");
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"", " ", "v", "a1", "1.", ".1", "1..2", "1.0+", "1.0+a.", "1.0+a..b",
		"1.0 a1", "1.0-", "1!", "!1", "1.0.post.post", "1.0a1a2", "1.0+a+b",
		"1.0dev1a1", "1.0_", "1.0.*", "1,0", "2.9.0-git", "1.0\xc3\xa9",
	};
	struct xl_version v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (xl_version_parse(bad[i], strlen(bad[i]), &v) == 0)
			fail_msg("'%s' should not parse (got '%s')", bad[i], v.norm);
	assert_int_equal(xl_version_parse("1.0\0", 4, &v), -1);
}

static void test_order(void **state)
{
	/* strictly increasing */
	static const char *const chain[] = {
		"0.dev0", "0", "1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12",
		"1.0b1.dev456", "1.0b2", "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456",
		"1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7", "1.0+5", "1.0+5.a", "1.0.post456.dev34",
		"1.0.post456", "1.0.15", "1.1.dev1", "1.1", "2.9.0a0+git21fec65", "2.9.0",
		"2.9.0+gitc04e61c", "2.10", "1!0.1",
	};
	size_t n = sizeof(chain) / sizeof(chain[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int c = 2, want = i < j ? -1 : i > j;

			assert_int_equal(xl_version_compare_str(chain[i], chain[j], &c), 0);
			if (c != want)
				fail_msg("cmp(%s, %s) = %d, expected %d", chain[i], chain[j], c, want);
		}
	{
		int c;

		assert_int_equal(xl_version_compare_str("1.0", "1.0.0.0", &c), 0);
		assert_int_equal(c, 0);
		assert_int_equal(xl_version_compare_str("1.0+01", "1.0+1", &c), 0);
		assert_int_equal(c, 0);
		assert_int_equal(xl_version_compare_str("x", "1", &c), -1);
		assert_int_equal(xl_version_compare_str("1", "x", &c), -2);
	}
}

static bool match(const char *spec, const char *ver)
{
	struct xl_specset ss;
	struct xl_version v;
	char *err = NULL;
	bool r;

	if (xl_specset_parse(spec, strlen(spec), &ss, &err) < 0)
		fail_msg("specifier '%s' should parse: %s", spec, err);
	if (xl_version_parse(ver, strlen(ver), &v) < 0)
		fail_msg("version '%s' should parse", ver);
	r = xl_specset_contains(&ss, &v, ver);
	xl_version_release(&v);
	xl_specset_release(&ss);
	return r;
}

#define YES(s, v) do { if (!match(s, v)) fail_msg("'%s' should match '%s'", v, s); } while (0)
#define NO(s, v) do { if (match(s, v)) fail_msg("'%s' should not match '%s'", v, s); } while (0)

static void test_operators(void **state)
{
	(void)state;
	/* == and != ignore the candidate's local label unless the spec has one */
	YES("==1.0", "1.0.0"); YES("==1.0", "1.0+local"); NO("==1.0+a", "1.0+b");
	YES("==1.0+a", "1.0+A"); NO("==1.0", "1.0.post1"); NO("==1.0", "1.0a1");
	NO("!=1.0", "1.0+x"); YES("!=1.0+x", "1.0"); YES("!=1.0", "1.0.post1");
	/* prefix matching */
	YES("==2.9.*", "2.9.0a0+git21fec65"); YES("==2.9.*", "2.9.dev0"); NO("==2.9.*", "2.10");
	YES("==2.*", "2.10.1"); NO("==2.*", "3.0.dev0"); NO("==1.0.0.*", "1.0.1");
	YES("==1.0.*", "1.0.post1"); NO("!=2.9.*", "2.9.5"); YES("!=2.9.*", "2.8.99");
	/* ordered comparisons */
	YES(">=2.9", "2.9.0+gitc04e61c"); NO(">=2.9", "2.9.0a0+git21fec65"); YES(">=2.9.0a0", "2.9.0a0");
	YES("<=2.9", "2.9+local"); NO("<=2.9", "2.9.post1");
	/* >V excludes V's post-releases and local variants unless V is a post-release */
	NO(">1.7", "1.7.post2"); NO(">1.7", "1.7+local"); YES(">1.7", "1.7.1"); YES(">1.7", "1.8.dev0");
	YES(">1.7.post2", "1.7.post3"); NO(">1.7.post2", "1.7.post2+x"); NO(">1.7.dev1", "1.7.dev1+x");
	YES(">1.7.dev1", "1.7.dev2"); NO(">1.7a1", "1.7a1.post1"); YES(">1.7a1", "1.7a2");
	/* <V excludes V's pre-releases unless V is one */
	NO("<1.7", "1.7a1"); NO("<1.7", "1.7.dev0"); YES("<1.7", "1.6.99+x"); YES("<1.7rc1", "1.7a1");
	NO("<1.7rc1", "1.7rc1"); NO("<1.7", "1.7.0a0.dev0");
	/* compatible release */
	YES("~=2.2", "2.3"); YES("~=2.2", "2.2.0"); NO("~=2.2", "3.0"); NO("~=2.2", "3.0.dev0");
	YES("~=1.4.5a4", "1.4.5"); NO("~=1.4.5a4", "1.5.0"); YES("~=1.4.5", "1.4.9+x"); NO("~=1.4.5", "1.4.4");
	YES("~=2.2.post3", "2.2.post3"); NO("~=2.2.post3", "2.2");
	/* arbitrary equality compares strings */
	YES("===1.0", "1.0"); NO("===1.0", "1.0.0"); YES("===2.9.0+GITc04e61c", "2.9.0+gitc04e61c");
	/* pre-releases are admitted, as pip check does */
	YES(">=0.4", "0.5rc1"); YES("", "0.0.dev0");
	/* sets */
	YES(">=0.10.1, <=0.10.2", "0.10.2"); NO(">=0.10.1,<=0.10.2", "0.10.3");
	YES(" >=1 ,, <2 ", "1.5");
	/* epochs */
	YES(">=2.0", "1!1.0"); NO("<2.0", "1!1.0");
}

static void test_bad_specs(void **state)
{
	static const char *const bad[] = {
		"1.0", "=1.0", "==", ">=1.0+local", "<1.0.*", "~=1", "~=1.0+x", "==1.0a1.*",
		"==1.*.0", ">=1.0 2.0", "=== 1 2", "==1.0 .*", ">=x", "<>1", "== 1.0;", ">=1.0)",
		"~=1.*",
	};
	struct xl_specset ss;
	char *err = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (xl_specset_parse(bad[i], strlen(bad[i]), &ss, &err) == 0)
			fail_msg("'%s' should not parse", bad[i]);
		assert_non_null(err);
		free(err);
		err = NULL;
	}
	assert_int_equal(xl_specset_parse("== 1.0", 6, &ss, &err), 0);
	{
		char *s = xl_specset_str(&ss);

		assert_string_equal(s, "==1.0");
		free(s);
	}
	xl_specset_release(&ss);
}

static void test_fuzz_entries(void **state)
{
	static const char *const inputs[] = {
		"1.0", "v1!2.3a4.post5.dev6+x.7", "", "\xff\xfe", "==1.*,!=1.5", "1.0+a-b_c",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		assert_int_equal(xl_fuzz_version((const uint8_t *)inputs[i], strlen(inputs[i])), 0);
		assert_int_equal(xl_fuzz_specifier((const uint8_t *)inputs[i], strlen(inputs[i])), 0);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_operators),
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_fuzz_entries),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
