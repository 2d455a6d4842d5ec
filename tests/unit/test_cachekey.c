/* test_cachekey.c - the compiled-in cache-key rules of etc/cachekeys.yaml:
 * the settings each runtime hashes, what a profile difference invalidates,
 * and the stamp kept in a cache directory (a launch under settings seen
 * before is warm, any other cold, with what changed). */
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

#include "launcher/flags/flags.h"
#include "tests/fuzz/targets.h"

static const struct xl_ck_runtime *rt(const char *name)
{
	for (size_t i = 0; i < xl_ck_nruntimes; i++)
		if (strcmp(xl_ck_runtimes[i].name, name) == 0)
			return &xl_ck_runtimes[i];
	fail_msg("no runtime %s", name);
	return NULL;
}

static const char *get(const void *ctx, const char *name)
{
	char *const *env = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static void test_rules_compiled_in(void **state)
{
	const struct xl_ck_runtime *j = rt("jax"), *t = rt("torch_xla");

	(void)state;
	assert_string_equal(j->version, "0.10.2");
	assert_string_equal(t->version, "2.9.0");
	assert_string_equal(j->cache_env, "JAX_COMPILATION_CACHE_DIR");
	assert_string_equal(t->cache_env, "XLA_PERSISTENT_CACHE_PATH");
	assert_true(j->path_in_key);
	assert_false(t->path_in_key);
	assert_int_equal(j->split, XL_CK_SPLIT_WHITESPACE);
	assert_int_equal(t->split, XL_CK_SPLIT_SPACE);
	assert_string_equal(t->token_prefix, "--xla");
	assert_string_equal(t->no_read_back[0], "CPU");
}

static char *settings_text(const struct xl_ck_runtime *r, char **env, char **argv)
{
	json_t *s = xl_ck_settings(r, get, env, argv);
	char *text = json_dumps(s, JSON_COMPACT);

	json_decref(s);
	return text;
}

static void test_settings(void **state)
{
	char *env1[] = {
		"JAX_COMPILATION_CACHE_DIR=/c/jax/", "XLA_PERSISTENT_CACHE_PATH=/c/tx",
		"XLA_FLAGS=--xla_dump_to=/d  --xla_cpu_enable_fast_math=true\t--xla_backend_optimization_level=2",
		"JAX_ENABLE_X64=1", "JAX_LOG_COMPILES=1", "XLA_IR_DEBUG=1", NULL,
	};
	char *env2[] = {
		"JAX_COMPILATION_CACHE_DIR=/c/jax", "XLA_PERSISTENT_CACHE_PATH=/c/tx",
		"XLA_FLAGS=--xla_backend_optimization_level=2 --xla_cpu_enable_fast_math=true",
		"JAX_ENABLE_X64=1", "XLA_IR_DEBUG=1", NULL,
	};
	char *argv[] = { "python", "train.py", "--xla_cpu_use_thunk_runtime=false", "--lr=1", NULL };
	char *a, *b;

	(void)state;
	/* dump flags, logging and a trailing '/' leave JAX's key alone; order too */
	a = settings_text(rt("jax"), env1, NULL);
	b = settings_text(rt("jax"), env2, NULL);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"--xla_cpu_enable_fast_math=true\""));
	assert_null(strstr(a, "xla_dump_to"));
	assert_null(strstr(a, "JAX_LOG_COMPILES"));
	assert_non_null(strstr(a, "\"value\":\"/c/jax\""));
	free(a);
	free(b);
	/* arguments of the process that start with --xla are hashed by JAX */
	a = settings_text(rt("jax"), env1, argv);
	assert_non_null(strstr(a, "\"what\":\"argv\",\"name\":\"--xla_cpu_use_thunk_runtime\""));
	assert_null(strstr(a, "--lr"));
	free(a);
	/* torch_xla: a tab does not split; its own fast-math default; raw variables */
	a = settings_text(rt("torch_xla"), env1, NULL);
	assert_non_null(strstr(a, "\"value\":\"--xla_cpu_enable_fast_math=true\\t--xla_backend_optimization_level=2\""));
	assert_non_null(strstr(a, "\"name\":\"XLA_IR_DEBUG\",\"value\":\"1\""));
	assert_non_null(strstr(a, "\"name\":\"TPU_MEGACORE\",\"value\":\"\""));
	assert_null(strstr(a, "cache_dir"));
	free(a);
	{
		char *env3[] = { "XLA_FLAGS=--xla_cpu_enable_fast_math=false", NULL };
		char *env4[] = { "XLA_FLAGS=", NULL };

		a = settings_text(rt("torch_xla"), env3, NULL);
		b = settings_text(rt("torch_xla"), env4, NULL);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
}

static void test_invalidates(void **state)
{
	const struct xl_ck_runtime *j = rt("jax"), *t = rt("torch_xla");

	(void)state;
	/* a dump path invalidates nothing */
	assert_false(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_dump_to", "/a", "/b"));
	assert_false(xl_ck_flag_invalidates(t, "XLA_FLAGS", "xla_dump_to", NULL, "/b"));
	/* a compile-affecting flag invalidates both */
	assert_true(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_cpu_enable_fast_math", "false", "true"));
	assert_true(xl_ck_flag_invalidates(t, "XLA_FLAGS", "xla_cpu_enable_fast_math", "false", "true"));
	/* the default named explicitly: JAX hashes it, torch_xla adds it anyway */
	assert_true(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_cpu_enable_fast_math", NULL, "false"));
	assert_false(xl_ck_flag_invalidates(t, "XLA_FLAGS", "xla_cpu_enable_fast_math", NULL, "false"));
	/* excluded tokens whose effect still reaches JAX's key */
	assert_false(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_dump_include_timestamp", NULL, "false"));
	assert_true(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_dump_include_timestamp", NULL, "true"));
	assert_true(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_force_host_platform_device_count", "1", "4"));
	assert_false(xl_ck_flag_invalidates(t, "XLA_FLAGS", "xla_force_host_platform_device_count", "1", "4"));
	/* the last four of JAX's list are hashed by torch_xla */
	assert_false(xl_ck_flag_invalidates(j, "XLA_FLAGS", "xla_gpu_cuda_data_dir", "/a", "/b"));
	assert_true(xl_ck_flag_invalidates(t, "XLA_FLAGS", "xla_gpu_cuda_data_dir", "/a", "/b"));
	/* TF_XLA_FLAGS is nobody's key */
	assert_false(xl_ck_flag_invalidates(j, "TF_XLA_FLAGS", "tf_xla_auto_jit", "1", "2"));
	/* variables */
	assert_true(xl_ck_var_invalidates(j, "JAX_ENABLE_X64"));
	assert_true(xl_ck_var_invalidates(j, "JAX_COMPILATION_CACHE_DIR"));
	assert_false(xl_ck_var_invalidates(j, "JAX_LOG_COMPILES"));
	assert_false(xl_ck_var_invalidates(j, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"));
	assert_true(xl_ck_var_invalidates(t, "XLA_HLO_DEBUG"));
	assert_false(xl_ck_var_invalidates(t, "PT_XLA_DEBUG_LEVEL"));
	assert_false(xl_ck_var_invalidates(t, "JAX_ENABLE_X64"));
}

static json_t *items(const char *json)
{
	json_t *j = json_loads(json, 0, NULL);

	assert_non_null(j);
	return j;
}

static void test_stamp(void **state)
{
	const char *stamp =
		"{\"seen\": ["
		"{\"run_id\": \"R2\", \"time\": \"2026-01-02T00:00:00Z\", \"settings\": ["
		"{\"what\": \"XLA_FLAGS\", \"name\": \"--xla_cpu_enable_fast_math\", \"value\": \"--xla_cpu_enable_fast_math=true\"}]},"
		"{\"run_id\": null, \"time\": \"2026-01-01T00:00:00Z\", \"profile\": \"p\", \"settings\": []}]}";
	json_t *now;
	char *diff, *since;
	size_t index;

	(void)state;
	/* the settings of the newest launch: warm */
	now = items("[{\"what\": \"XLA_FLAGS\", \"name\": \"--xla_cpu_enable_fast_math\", \"value\": \"--xla_cpu_enable_fast_math=true\"}]");
	assert_int_equal(xl_ck_stamp_compare(stamp, strlen(stamp), now, &index, &diff, &since), 0);
	assert_int_equal(index, 0);
	json_decref(now);
	/* those of an older one: its entries are there too */
	now = items("[]");
	assert_int_equal(xl_ck_stamp_compare(stamp, strlen(stamp), now, &index, &diff, &since), 0);
	assert_int_equal(index, 1);
	json_decref(now);
	/* new settings: cold, what changed against the newest, since when */
	now = items("[{\"what\": \"XLA_FLAGS\", \"name\": \"--xla_cpu_enable_fast_math\", \"value\": \"--xla_cpu_enable_fast_math=false\"},"
		    "{\"what\": \"env\", \"name\": \"JAX_ENABLE_X64\", \"value\": \"1\"}]");
	assert_int_equal(xl_ck_stamp_compare(stamp, strlen(stamp), now, &index, &diff, &since), 1);
	assert_string_equal(diff, "--xla_cpu_enable_fast_math changed, JAX_ENABLE_X64 set");
	assert_string_equal(since, "run R2");
	free(diff);
	free(since);
	json_decref(now);
	/* what does not parse is as good as absent */
	now = items("[]");
	assert_int_equal(xl_ck_stamp_compare("{", 1, now, &index, &diff, &since), -1);
	assert_int_equal(xl_ck_stamp_compare("{\"seen\": [{\"settings\": [1]}]}", 30, now, &index, &diff, &since), -1);
	assert_int_equal(xl_ck_stamp_compare("{\"seen\": []}", 12, now, &index, &diff, &since), -1);
	json_decref(now);
}

static void test_fuzz_entry(void **state)
{
	size_t len;
	char *data;

	(void)state;
	data = xl_read_file("tests/fuzz/corpus/cachestamp/changed", &len, 0);
	assert_non_null(data);
	/* the last runtime's answer (torch_xla): these settings were not seen */
	assert_int_equal(xl_fuzz_cachestamp((const uint8_t *)data, len), 1);
	free(data);
	data = xl_read_file("tests/fuzz/corpus/cachestamp/older", &len, 0);
	assert_non_null(data);
	assert_int_equal(xl_fuzz_cachestamp((const uint8_t *)data, len), 1);
	free(data);
	assert_int_equal(xl_fuzz_cachestamp((const uint8_t *)"", 0), -1);
	{
		static const char odd[] = "A=\n=\n\0{\"seen\":[{\"settings\":[]}]}";

		assert_int_equal(xl_fuzz_cachestamp((const uint8_t *)odd, sizeof(odd) - 1), 1);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_compiled_in),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_invalidates),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_fuzz_entry),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
