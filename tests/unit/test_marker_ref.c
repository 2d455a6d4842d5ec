/* test_marker_ref.c - Requires-Dist markers evaluated as packaging 26.3
 * evaluates them, and '===' as pip check applies it.
 *
 * Run with no arguments: the unit tests.  Run as
 *   test_marker_ref CASES.jsonl
 * it evaluates each line {"marker", "env": {VAR: VALUE}, "extra"} and
 * prints one answer a line: 1, 0, E (undefined) or P (does not parse); the
 * differential test tests/marker_ref.py compares them with packaging's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/bundle.h"

static char answer(const char *marker, const struct xl_marker_env *env, const char *extra)
{
	struct xl_marker *m;
	char *err = NULL;
	int r;

	if (xl_marker_parse(marker, strlen(marker), &m, &err) < 0) {
		free(err);
		return 'P';
	}
	r = xl_marker_eval(m, env, extra, &err);
	free(err);
	xl_marker_free(m);
	return r < 0 ? 'E' : r ? '1' : '0';
}

static void env_311(struct xl_marker_env *env)
{
	memset(env, 0, sizeof(*env));
	env->python_version = "3.11";
	env->python_full_version = "3.11.7";
	env->sys_platform = "linux";
	env->platform_system = "Linux";
	env->platform_machine = "x86_64";
	env->platform_release = "6.8.0-45-generic";
	env->platform_version = "#45-Ubuntu SMP";
	env->platform_python_implementation = "CPython";
	env->implementation_name = "cpython";
	env->implementation_version = "3.11.7";
	env->os_name = "posix";
}

static void test_string_fallback(void **state)
{
	struct xl_marker_env env;

	(void)state;
	env_311(&env);
	/* PEP 440 only for the four version variables */
	assert_int_equal(answer("platform_machine != \"3.11\"", &env, ""), '1');
	assert_int_equal(answer("os_name > \"\"", &env, ""), '0');
	assert_int_equal(answer("os_name >= \"posix\"", &env, ""), '1');
	assert_int_equal(answer("os_name <= \"zzz\"", &env, ""), '0');
	assert_int_equal(answer("python_version < \"3.11.*\"", &env, ""), '0');
	assert_int_equal(answer("python_version >= \"3.9\"", &env, ""), '1');
	assert_int_equal(answer("python_version > \"3.10\"", &env, ""), '1');
	/* the specifier is OP + right side, the left side its candidate */
	assert_int_equal(answer("\"3.8\" < python_version", &env, ""), '1');
	assert_int_equal(answer("platform_release >= \"6\"", &env, ""), '0');
	assert_int_equal(answer("os_name ~= \"posix\"", &env, ""), 'E');
	assert_int_equal(answer("os_name === \"posix\"", &env, ""), 'E');
	assert_int_equal(answer("python_version === \"3.11\"", &env, ""), '1');
	assert_int_equal(answer("\"x86\" in platform_machine", &env, ""), '1');
	/* dotted spellings are the underscored names */
	assert_int_equal(answer("os.name == \"posix\"", &env, ""), '1');
	assert_int_equal(answer("extra == \"T_P-U\"", &env, "t.p_u"), '1');
}

static void test_arbitrary_as_pip_check(void **state)
{
	struct xl_specset ss;
	struct xl_version v;
	char *err = NULL;

	(void)state;
	/* pip check compares str(Version): "01.0" is "1.0" */
	assert_int_equal(xl_version_parse("01.0", 4, &v), 0);
	assert_int_equal(xl_specset_parse("===1.0", 6, &ss, &err), 0);
	assert_true(xl_specset_contains(&ss, &v, NULL));
	assert_false(xl_specset_contains(&ss, &v, "01.0"));
	xl_specset_release(&ss);
	assert_int_equal(xl_specset_parse("===01.0", 7, &ss, &err), 0);
	assert_false(xl_specset_contains(&ss, &v, NULL));
	xl_specset_release(&ss);
	xl_version_release(&v);
}

static const char *field(json_t *env, const char *k)
{
	json_t *v = json_object_get(env, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int tool(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f) {
		perror(path);
		return 66;
	}
	while (getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *c = json_loads(line, 0, &je), *e;
		struct xl_marker_env env;

		if (!c) {
			fprintf(stderr, "%s: %s\n", path, je.text);
			return 65;
		}
		e = json_object_get(c, "env");
		memset(&env, 0, sizeof(env));
		env.python_version = field(e, "python_version");
		env.python_full_version = field(e, "python_full_version");
		env.sys_platform = field(e, "sys_platform");
		env.platform_system = field(e, "platform_system");
		env.platform_machine = field(e, "platform_machine");
		env.platform_release = field(e, "platform_release");
		env.platform_version = field(e, "platform_version");
		env.platform_python_implementation = field(e, "platform_python_implementation");
		env.implementation_name = field(e, "implementation_name");
		env.implementation_version = field(e, "implementation_version");
		env.os_name = field(e, "os_name");
		printf("%c\n", answer(json_string_value(json_object_get(c, "marker")), &env,
				      json_string_value(json_object_get(c, "extra"))));
		json_decref(c);
	}
	free(line);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_string_fallback),
		cmocka_unit_test(test_arbitrary_as_pip_check),
	};

	if (argc > 1)
		return tool(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
