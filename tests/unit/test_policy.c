/* test_policy.c - xl_profile_check on real profile files: unknown and
 * mistyped XLA flags (65), cache: local, timing: true and consumer-safe
 * booleans (77), normalization, known-bad flags, runtime defaults. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "launcher/profile/profile.h"

static int setup_dir(void **state)
{
	xl_verbosity = -1;
	return xl_test_dir_setup(state);
}

/* Writes NAME.yaml, resolves it without the launching environment, and
 * runs the check.  *out receives the profile (caller frees). */
static int check_text(const char *name, const char *text, struct xl_profile **out)
{
	char path[512];
	struct xl_ctx ctx;
	struct xl_profile *p = NULL;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.yaml", xl_test_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	memset(&ctx, 0, sizeof(ctx));
	ctx.profile_path = xl_test_dir;
	rc = xl_profile_resolve(&ctx, path, NULL, XL_RESOLVE_FILE | XL_RESOLVE_NO_AMBIENT, &p);
	assert_int_equal(rc, 0);
	rc = xl_profile_check(&ctx, p);
	if (out)
		*out = p;
	else
		xl_profile_free(p);
	return rc;
}

static void test_clean_profile(void **state)
{
	(void)state;
	assert_int_equal(check_text("clean",
		"env:\n  PJRT_DEVICE: TPU\n  XLA_USE_SPMD: 1\n"
		"flags:\n  XLA_FLAGS:\n    xla_gpu_enable_triton_gemm: false\n"
		"  LIBTPU_INIT_ARGS:\n    xla_tpu_enable_async_collective_fusion: true\n", NULL), 0);
}

static void test_unknown_and_type(void **state)
{
	(void)state;
	assert_int_equal(check_text("unknown",
		"flags:\n  XLA_FLAGS:\n    xla_gpu_enable_trition_gemm: false\n", NULL), 65);
	assert_int_equal(check_text("badtype",
		"flags:\n  XLA_FLAGS:\n    xla_gpu_autotune_level: high\n", NULL), 65);
	assert_int_equal(check_text("badenv",
		"env:\n  JAX_ENABLE_X64: maybe\n", NULL), 65);
	/* a name no known libtpu registers: libtpu exits on it at start */
	assert_int_equal(check_text("libtpu",
		"flags:\n  LIBTPU_INIT_ARGS:\n    xla_tpu_private_knob: 3\n", NULL), 65);
	/* an XLA flag in LIBTPU_INIT_ARGS: the same */
	assert_int_equal(check_text("libtpu-xla",
		"flags:\n  LIBTPU_INIT_ARGS:\n    xla_dump_to: /tmp/d\n", NULL), 65);
	/* libtpu's boolean reader takes yes */
	assert_int_equal(check_text("libtpu-yes",
		"flags:\n  LIBTPU_INIT_ARGS:\n    xla_tpu_data_parallel_opt_different_sized_ops: \"yes\"\n", NULL), 0);
}

static void test_cache_local(void **state)
{
	char text[1024];
	char dir[512];
	struct stat st;

	(void)state;
	assert_int_equal(check_text("gcs",
		"policy: {cache: local}\nenv:\n  XLA_PERSISTENT_CACHE_PATH: gs://bucket/cache\n", NULL), 77);
	assert_int_equal(check_text("rel",
		"policy: {cache: local}\nenv:\n  JAX_COMPILATION_CACHE_DIR: cache/jax\n", NULL), 77);
	assert_int_equal(check_text("http",
		"policy: {cache: local}\nflags:\n  XLA_FLAGS:\n"
		"    xla_gpu_per_fusion_autotune_cache_dir: https://example.com/c\n", NULL), 77);
	/* without the policy, a remote cache is allowed */
	assert_int_equal(check_text("gcs-any",
		"env:\n  XLA_PERSISTENT_CACHE_PATH: gs://bucket/cache\n", NULL), 0);
	/* a local absolute directory that is missing passes the check, which
	 * creates nothing; exec and run create it */
	{
		struct xl_profile *p;

		snprintf(dir, sizeof(dir), "%s/cache/torch_xla", xl_test_dir);
		snprintf(text, sizeof(text), "policy: {cache: local}\nenv:\n  XLA_PERSISTENT_CACHE_PATH: %s\n", dir);
		assert_int_equal(check_text("local", text, &p), 0);
		assert_int_not_equal(stat(dir, &st), 0);
		snprintf(dir, sizeof(dir), "%s/cache", xl_test_dir);
		assert_int_not_equal(stat(dir, &st), 0);
		assert_int_equal(xl_profile_make_cache_dirs(p), 0);
		snprintf(dir, sizeof(dir), "%s/cache/torch_xla", xl_test_dir);
		assert_int_equal(stat(dir, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		xl_profile_free(p);
	}
	/* a file in the way is refused */
	snprintf(dir, sizeof(dir), "%s/afile", xl_test_dir);
	fclose(fopen(dir, "w"));
	snprintf(text, sizeof(text), "policy: {cache: local}\nenv:\n  JAX_COMPILATION_CACHE_DIR: %s\n", dir);
	assert_int_equal(check_text("notdir", text, NULL), 77);
	/* a missing directory under a file cannot be created: refused */
	snprintf(text, sizeof(text), "policy: {cache: local}\nenv:\n  JAX_COMPILATION_CACHE_DIR: %s/sub/jax\n", dir);
	assert_int_equal(check_text("underfile", text, NULL), 77);
}

static void test_timing(void **state)
{
	(void)state;
	assert_int_equal(check_text("t1", "policy: {timing: true}\nenv:\n  PT_XLA_DEBUG_LEVEL: 2\n", NULL), 77);
	assert_int_equal(check_text("t2", "policy: {timing: true}\nenv:\n  JAX_LOG_COMPILES: 1\n", NULL), 77);
	assert_int_equal(check_text("t3",
		"policy: {timing: true}\nflags:\n  XLA_FLAGS:\n    xla_dump_to: /tmp/d\n", NULL), 77);
	assert_int_equal(check_text("t4", "env:\n  XLA_IR_DEBUG: 1\n", NULL), 0);
}

static void test_booleans(void **state)
{
	struct xl_profile *p;
	const struct xl_var *v;

	(void)state;
	assert_int_equal(check_text("b1", "env:\n  XLA_PYTHON_CLIENT_PREALLOCATE: \"no\"\n", NULL), 77);
	assert_int_equal(check_text("b2", "env:\n  XLA_USE_SPMD: \"yes\"\n", NULL), 77);
	/* JAX accepts "yes"; it is normalized to the canonical spelling */
	assert_int_equal(check_text("b3", "env:\n  JAX_ENABLE_X64: \"YES\"\n", &p), 0);
	v = xl_profile_var(p, "JAX_ENABLE_X64");
	assert_non_null(v);
	assert_string_equal(v->value, "true");
	assert_true(p->notes.n >= 1);
	xl_profile_free(p);
	/* XLA's own booleans: TRUE reads as true, normalized in the string */
	assert_int_equal(check_text("b4", "flags:\n  XLA_FLAGS:\n    xla_hlo_profile: \"TRUE\"\n", &p), 0);
	v = xl_profile_var(p, "XLA_FLAGS");
	assert_non_null(strstr(v->value, "--xla_hlo_profile=true"));
	xl_profile_free(p);
	/* NCCL reads integers: true becomes nothing it understands */
	assert_int_equal(check_text("b5", "env:\n  NCCL_IB_DISABLE: \"true\"\n", NULL), 77);
	/* torch_xla reads PT_XLA_DEBUG with int() at import: true raises there */
	assert_int_equal(check_text("b6", "env:\n  PT_XLA_DEBUG: \"true\"\n", NULL), 65);
	assert_int_equal(check_text("b7", "env:\n  PT_XLA_DEBUG: 1\n", NULL), 0);
	/* only exactly 1 turns eager debug mode on */
	assert_int_equal(check_text("b8", "env:\n  XLA_USE_EAGER_DEBUG_MODE: \"true\"\n", NULL), 77);
	/* set or not: 0 skips the metadata query all the same */
	assert_int_equal(check_text("b9", "env:\n  TPU_SKIP_MDS_QUERY: \"0\"\n", NULL), 77);
	assert_int_equal(check_text("b10", "env:\n  TPU_SKIP_MDS_QUERY: \"1\"\n", NULL), 0);
}

static void test_known_bad(void **state)
{
	static const struct xl_known_bad bad[] = {
		{ "xla_tpu_enable_async_collective_fusion_fuse_all_gather", "NaN loss on v6e", NULL },
		{ "XLA_USE_BF16", "deprecated and wrong with AMP", NULL },
	};
	/* only the value recorded as bad is refused; a bare flag is true */
	static const struct xl_known_bad bad_true[] = {
		{ "xla_tpu_enable_async_collective_fusion_fuse_all_gather", "NaN when on", "true" },
	};
	struct xl_profile *p;

	(void)state;
	assert_int_equal(check_text("kb",
		"env:\n  PJRT_DEVICE: TPU\nflags:\n  LIBTPU_INIT_ARGS:\n"
		"    xla_tpu_enable_async_collective_fusion_fuse_all_gather: true\n", &p), 0);
	assert_int_equal(xl_policy_check_known_bad(p, bad, 2, "torch29-v6e"), 77);
	assert_int_equal(xl_policy_check_known_bad(p, bad + 1, 1, "torch29-v6e"), 0);
	assert_int_equal(xl_policy_check_known_bad(p, bad_true, 1, "torch29-v6e"), 77);
	xl_profile_free(p);
	assert_int_equal(check_text("kb-off",
		"env:\n  PJRT_DEVICE: TPU\nflags:\n  LIBTPU_INIT_ARGS:\n"
		"    xla_tpu_enable_async_collective_fusion_fuse_all_gather: false\n", &p), 0);
	assert_int_equal(xl_policy_check_known_bad(p, bad_true, 1, "torch29-v6e"), 0);
	assert_int_equal(xl_policy_check_known_bad(p, bad, 1, "torch29-v6e"), 77);
	xl_profile_free(p);
	/* this name is a tri-state in libtpu (auto, true/enabled, false/disabled):
	 * its boolean word Y aborts libtpu at start, so the profile is refused
	 * before any bundle is asked */
	assert_int_equal(check_text("kb-yes",
		"env:\n  PJRT_DEVICE: TPU\nflags:\n  LIBTPU_INIT_ARGS:\n"
		"    xla_tpu_enable_async_collective_fusion_fuse_all_gather: \"Y\"\n", NULL), 65);
	assert_int_equal(check_text("kb2", "env:\n  XLA_USE_BF16: 1\n", &p), 0);
	assert_int_equal(xl_policy_check_known_bad(p, bad, 2, "b"), 77);
	xl_profile_free(p);
}

/* torch.compile: TORCH_LOGS items, the cheap ones a timing run keeps, the
 * local-cache rule on Inductor's and Triton's directories, Config booleans */
static void test_torch_compile(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(check_text("tl1", "env:\n  TORCH_LOGS: recompiles,graph_breaks\n"
				    "policy: {timing: true}\n", NULL), 0);
	assert_int_equal(check_text("tl2", "env:\n  TORCH_LOGS: \"-dynamo, recompiles\"\n"
				    "policy: {timing: true}\n", NULL), 0);
	assert_int_equal(check_text("tl3", "env:\n  TORCH_LOGS: +dynamo,recompiles\n"
				    "policy: {timing: true}\n", NULL), 77);
	assert_int_equal(check_text("tl4", "env:\n  TORCH_LOGS: output_code\n"
				    "policy: {timing: true}\n", NULL), 77);
	assert_int_equal(check_text("tl5", "env:\n  TORCH_LOGS: output_code,torch._dynamo.guards\n", NULL), 0);
	/* a name torch does not know makes it raise at import */
	assert_int_equal(check_text("tl6", "env:\n  TORCH_LOGS: recompile\n", NULL), 65);
	assert_int_equal(check_text("tl7", "env:\n  TORCH_COMPILE_DEBUG: 1\n"
				    "policy: {timing: true}\n", NULL), 77);
	assert_int_equal(check_text("tl8", "env:\n  TORCH_COMPILE_DEBUG: 1\n", NULL), 0);
	/* cache: local covers TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR */
	assert_int_equal(check_text("ic1", "env:\n  TORCHINDUCTOR_CACHE_DIR: inductor\n"
				    "policy: {cache: local}\n", NULL), 77);
	assert_int_equal(check_text("ic2", "env:\n  TRITON_CACHE_DIR: gs://bucket/triton\n"
				    "policy: {cache: local}\n", NULL), 77);
	text = xl_asprintf("env:\n  TORCHINDUCTOR_CACHE_DIR: %s/ind\n  TRITON_CACHE_DIR: %s/tri\n"
			   "policy: {cache: local}\n", xl_test_dir, xl_test_dir);
	assert_int_equal(check_text("ic3", text, NULL), 0);
	free(text);
	/* a Config boolean reads "false" as a true string */
	assert_int_equal(check_text("cb1", "env:\n  TORCHINDUCTOR_FX_GRAPH_CACHE: \"false\"\n", NULL), 77);
	assert_int_equal(check_text("cb2", "env:\n  TORCHINDUCTOR_FX_GRAPH_CACHE: 0\n", NULL), 0);
}

static void test_runtime_defaults(void **state)
{
	struct xl_profile *p;
	json_t *j, *arr;
	char *s;

	(void)state;
	assert_int_equal(check_text("rd",
		"env:\n  PJRT_DEVICE: TPU\nflags:\n  LIBTPU_INIT_ARGS:\n"
		"    xla_tpu_enable_flash_attention: true\n", &p), 0);
	j = xl_runtime_defaults(p);
	arr = json_object_get(j, "LIBTPU_INIT_ARGS");
	assert_non_null(arr);
	s = json_dumps(j, JSON_COMPACT);
	/* what the profile sets is not added; what it leaves out is */
	assert_null(strstr(s, "xla_tpu_enable_flash_attention"));
	assert_non_null(strstr(s, "--xla_tpu_prefer_async_allgather_to_allreduce=true"));
	assert_non_null(strstr(s, "--xla_cpu_enable_fast_math=false"));
	free(s);
	json_decref(j);
	xl_profile_free(p);
	/* a JAX-only profile gets nothing from torch_xla */
	assert_int_equal(check_text("rd2", "env:\n  JAX_PLATFORMS: cpu\n", &p), 0);
	j = xl_runtime_defaults(p);
	assert_int_equal(json_object_size(j), 0);
	json_decref(j);
	xl_profile_free(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_profile),
		cmocka_unit_test(test_unknown_and_type),
		cmocka_unit_test(test_cache_local),
		cmocka_unit_test(test_timing),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_known_bad),
		cmocka_unit_test(test_runtime_defaults),
		cmocka_unit_test(test_torch_compile),
	};

	return XL_TEST_RUN(tests, setup_dir, xl_test_dir_teardown);
}
