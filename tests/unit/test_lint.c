/* test_lint.c - the composite-flag linter on real published flag strings
 * and on each failure mode; the fuzz entry point on hostile bytes. */
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

#include "launcher/flags/flags.h"
#include "tests/fuzz/targets.h"

/* The report with code, or NULL. */
static const struct xl_lint_report *find(const struct xl_lint *l, const char *code)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].code, code) == 0)
			return &l->v[i];
	return NULL;
}

/* MaxText's published v5e/v5p LIBTPU_INIT_ARGS set async collective fusion
 * to true and, later in the same string, to false: libtpu takes the last
 * value and starts, so a warning. */
static void test_maxtext_duplicate(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	xl_lint_string("LIBTPU_INIT_ARGS",
		       "--xla_tpu_enable_async_collective_fusion=true "
		       "--xla_tpu_enable_async_collective_fusion_fuse_all_gather=true "
		       "--xla_tpu_enable_async_collective_fusion_multiple_steps=true "
		       "--xla_tpu_overlap_compute_collective_tc=true "
		       "--xla_enable_async_all_gather=true "
		       "--xla_tpu_enable_async_collective_fusion=false", 0, &l);
	r = find(&l, "duplicate");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_WARNING);
	assert_string_equal(r->token, "--xla_tpu_enable_async_collective_fusion=false");
	assert_non_null(strstr(r->message, "column 1"));
	assert_int_equal(l.errors, 0);
	xl_lint_release(&l);
}

/* MaxText's v4 recipe put TPU_MEGACORE=MEGACORE_DENSE inside LIBTPU_INIT_ARGS:
 * libtpu ignores a word that is not a flag and reads the rest. */
static void test_maxtext_megacore(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	xl_lint_string("LIBTPU_INIT_ARGS",
		       "--xla_enable_async_all_gather=true TPU_MEGACORE=MEGACORE_DENSE "
		       "--xla_tpu_enable_async_collective_fusion=true", 0, &l);
	r = find(&l, "bare-word");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_WARNING);
	assert_string_equal(r->token, "TPU_MEGACORE=MEGACORE_DENSE");
	assert_int_equal(r->offset, 35);
	assert_non_null(strstr(r->message, "libtpu ignores it"));
	/* the fix is an env variable */
	assert_non_null(r->suggestion);
	assert_non_null(strstr(r->suggestion, "environment variable"));
	assert_int_equal(l.errors, 0);
	xl_lint_release(&l);
}

static void test_unknown_xla_flag_error(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	xl_lint_string("XLA_FLAGS", "--xla_gpu_enable_trition_gemm=false", 0, &l);
	r = find(&l, "unknown-flag");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_ERROR);
	assert_string_equal(r->suggestion, "did you mean 'xla_gpu_enable_triton_gemm'?");
	xl_lint_release(&l);

	/* a libtpu flag in XLA_FLAGS: error, pointing at LIBTPU_INIT_ARGS */
	xl_lint_string("XLA_FLAGS", "--xla_tpu_enable_flash_attention=false", 0, &l);
	r = find(&l, "unknown-flag");
	assert_non_null(r);
	assert_non_null(strstr(r->suggestion, "LIBTPU_INIT_ARGS"));
	xl_lint_release(&l);

	/* a name no libtpu registers in LIBTPU_INIT_ARGS: libtpu exits on it */
	xl_lint_string("LIBTPU_INIT_ARGS", "--xla_tpu_some_private_knob=3", 0, &l);
	r = find(&l, "unknown-flag");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_ERROR);
	assert_true(r->aborts);
	xl_lint_release(&l);

	/* an XLA flag in LIBTPU_INIT_ARGS: refused, with where it belongs and
	 * libtpu's own name */
	xl_lint_string("LIBTPU_INIT_ARGS", "--xla_dump_to=/tmp/d", 0, &l);
	r = find(&l, "xla-flag");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_ERROR);
	assert_non_null(strstr(r->suggestion, "XLA_FLAGS"));
	assert_non_null(strstr(r->suggestion, "xla_jf_dump_to"));
	xl_lint_release(&l);

	/* libtpu's reader: yes is a boolean, -name and --noname are flags, a
	 * unit is refused, a word after a flag without '=' is its value */
	xl_lint_string("LIBTPU_INIT_ARGS", "--xla_tpu_data_parallel_opt_different_sized_ops=YES "
		       "-xla_tpu_enable_flash_attention=n --noxla_tpu_rwb_fusion --xla_jf_dump_to /tmp/d", 0, &l);
	assert_int_equal(l.errors, 0);
	assert_int_equal(l.warnings, 0);
	xl_lint_release(&l);
	xl_lint_string("LIBTPU_INIT_ARGS", "--xla_tpu_scoped_vmem_limit_kib=16GiB", 0, &l);
	r = find(&l, "type");
	assert_non_null(r);
	assert_true(r->aborts);
	xl_lint_release(&l);
	xl_lint_string("LIBTPU_INIT_ARGS", "--xla_tpu_enable_flash_attention=on --noxla_jf_dump_to", 0, &l);
	assert_int_equal(l.errors, 2);
	xl_lint_release(&l);
}

static void test_stops_and_files(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	/* a space instead of '=': the value becomes a bare word, parsing stops */
	xl_lint_string("XLA_FLAGS", "--xla_dump_to /tmp/dump --xla_dump_hlo_as_text", 0, &l);
	assert_non_null(find(&l, "missing-value"));
	r = find(&l, "bare-word");
	assert_non_null(r);
	assert_string_equal(r->token, "/tmp/dump");
	assert_non_null(strstr(r->message, "--xla_dump_hlo_as_text"));
	xl_lint_release(&l);

	/* no leading dash at all: XLA reads the value as a flags file */
	xl_lint_string("XLA_FLAGS", "  xla_dump_to=/tmp/dump", 0, &l);
	r = find(&l, "flags-file");
	assert_non_null(r);
	assert_int_equal(r->offset, 2);
	assert_null(find(&l, "bare-assignment"));
	xl_lint_release(&l);

	/* a bare word that is a flag name gets the dashes suggested */
	xl_lint_string("XLA_FLAGS", "--xla_hlo_profile xla_dump_hlo_as_text", 0, &l);
	r = find(&l, "bare-word");
	assert_non_null(r);
	assert_string_equal(r->suggestion, "did you mean '--xla_dump_hlo_as_text'?");
	xl_lint_release(&l);

	xl_lint_string("XLA_FLAGS", "--xla_dump_to=\"/tmp/a b", 0, &l);
	assert_non_null(find(&l, "quote"));
	xl_lint_release(&l);
}

static void test_types_and_timing(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	xl_lint_string("XLA_FLAGS",
		       "--xla_gpu_autotune_level=high --xla_gpu_enable_triton_gemm=yes "
		       "--xla_gpu_shape_checks=RUNTIMEE --xla_dump_to=/tmp/d", 0, &l);
	assert_int_equal(l.errors, 3);
	r = find(&l, "type");
	assert_non_null(r);
	assert_string_equal(r->token, "--xla_gpu_autotune_level=high");
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.v[i].token, "--xla_gpu_shape_checks=RUNTIMEE") == 0)
			assert_string_equal(l.v[i].suggestion, "did you mean 'RUNTIME'?");
	assert_null(find(&l, "debug-in-timing"));
	xl_lint_release(&l);

	xl_lint_string("XLA_FLAGS", "--xla_dump_to=/tmp/d --xla_gpu_enable_triton_gemm=false",
		       XL_LINT_TIMING, &l);
	r = find(&l, "debug-in-timing");
	assert_non_null(r);
	assert_string_equal(r->token, "--xla_dump_to=/tmp/d");
	assert_int_equal(l.errors, 1);
	xl_lint_release(&l);

	/* same value twice (true and 1 mean the same to XLA): a warning */
	xl_lint_string("XLA_FLAGS", "--xla_hlo_profile=true --xla_hlo_profile=1", 0, &l);
	r = find(&l, "duplicate");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_WARNING);
	assert_int_equal(l.errors, 0);
	xl_lint_release(&l);
}

static void test_clean_string(void **state)
{
	struct xl_lint l = { 0 };

	(void)state;
	/* a JAX GPU recipe: every flag known and well typed */
	xl_lint_string("XLA_FLAGS",
		       "--xla_gpu_enable_latency_hiding_scheduler=true "
		       "--xla_gpu_enable_triton_gemm=false "
		       "--xla_gpu_all_reduce_combine_threshold_bytes=134217728 "
		       "--xla_gpu_enable_pipelined_all_gather=true", 0, &l);
	assert_int_equal(l.n, 0);
	xl_lint_release(&l);
}

static void test_env_values(void **state)
{
	struct xl_lint l = { 0 };
	const struct xl_lint_report *r;

	(void)state;
	xl_lint_string("XLA_PYTHON_CLIENT_PREALLOCATE", "no", 0, &l);
	r = find(&l, "misread-bool");
	assert_non_null(r);
	assert_int_equal(r->sev, XL_SEV_ERROR);
	xl_lint_release(&l);
	xl_lint_string("JAX_ENABLE_X64", "maybe", 0, &l);
	assert_non_null(find(&l, "type"));
	xl_lint_release(&l);
	xl_lint_string("JAX_ENABLE_X64", "True", 0, &l);
	assert_int_equal(l.n, 0);
	xl_lint_release(&l);
	xl_lint_string("JAX_LOG_COMPILE", "1", 0, &l);
	r = find(&l, "unknown-variable");
	assert_non_null(r);
	assert_string_equal(r->suggestion, "did you mean 'JAX_LOG_COMPILES'?");
	xl_lint_release(&l);
}

/* Deterministic hostile inputs through the fuzz entry point: no crash, no
 * leak (the sanitizer build runs this too). */
static void test_fuzz_entry(void **state)
{
	static const char *const seeds[] = {
		"\x00--xla_dump_to=\"", "\x01--=", "\x02- -- --- ----", "\x81--xla_dump_to=/x --xla_dump_to=/y",
		"\x03no", "\x04\xff\xfe", "\x05tpu", "\x00\"\"\"'''", "\x00--a='b' c=d e",
	};
	uint8_t buf[256];
	uint32_t x = 12345;
	int total = 0;

	(void)state;
	assert_int_equal(xl_fuzz_lint(NULL, 0), 0);
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		total += xl_fuzz_lint((const uint8_t *)seeds[i], strlen(seeds[i] + 1) + 1);
	for (int round = 0; round < 2000; round++) {
		size_t len = 1 + (x % (sizeof(buf) - 1));

		for (size_t k = 0; k < len; k++) {
			static const char alphabet[] = "--=\"' \tx_aTPU1";

			x = x * 1103515245u + 12345u;
			buf[k] = (x >> 16) & 1 ? (uint8_t)alphabet[(x >> 8) % (sizeof(alphabet) - 1)]
					       : (uint8_t)(x >> 8);
		}
		total += xl_fuzz_lint(buf, len);
	}
	assert_true(total > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maxtext_duplicate),
		cmocka_unit_test(test_maxtext_megacore),
		cmocka_unit_test(test_unknown_xla_flag_error),
		cmocka_unit_test(test_stops_and_files),
		cmocka_unit_test(test_types_and_timing),
		cmocka_unit_test(test_clean_string),
		cmocka_unit_test(test_env_values),
		cmocka_unit_test(test_fuzz_entry),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
