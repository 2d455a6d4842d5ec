/* test_flags_catalog.c - sanity of the compiled flag catalogs: sorted, no
 * duplicates within a family, valid types and tags, enums with values,
 * every family with a source; lookups and type checks. */
#include "tests/unit/unit.h"

#include <string.h>

#include "launcher/flags/flags.h"

static void test_sorted_unique(void **state)
{
	(void)state;
	assert_true(xl_nflagdefs > 500);
	for (size_t i = 1; i < xl_nflagdefs; i++) {
		int c = strcmp(xl_flagdef_at(i - 1)->name, xl_flagdef_at(i)->name);

		assert_true(c <= 0);
		if (c == 0) {
			/* the same name in two families must agree on the type */
			assert_int_not_equal(xl_flagdef_at(i - 1)->family, xl_flagdef_at(i)->family);
			assert_int_equal(xl_flagdef_at(i - 1)->type, xl_flagdef_at(i)->type);
		}
	}
}

static void test_entries_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < xl_nflagdefs; i++) {
		const struct xl_flagdef *d = xl_flagdef_at(i);

		assert_true(d->family >= 0 && (size_t)d->family < xl_nfamilies);
		assert_true(d->type >= XL_FT_BOOL && d->type <= XL_FT_LIST);
		assert_true((d->tags & ~0x1fu) == 0);
		assert_non_null(d->desc);
		assert_true(strlen(d->desc) > 3);
		assert_null(strchr(d->desc, '\n'));
		if (d->type == XL_FT_ENUM) {
			assert_non_null(d->values);
			assert_non_null(d->values[0]);
		}
		/* a default of an enum is one of its values */
		if (d->type == XL_FT_ENUM && d->def && *d->def)
			assert_null(xl_flag_type_error(d, d->def));
		if (d->type == XL_FT_INT && d->def && *d->def)
			assert_null(xl_flag_type_error(d, d->def));
		if (d->family == xl_family_index("xla"))
			assert_true(strncmp(d->name, "xla_", 4) == 0);
		else if (xl_families[d->family].flags)
			assert_true(strspn(d->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(d->name));
		else
			assert_true(xl_valid_env_name(d->name));
	}
}

static void test_families_have_sources(void **state)
{
	static const char *const expected[] = { "xla", "libtpu", "torch_xla", "jax", "nccl", "runtime" };

	(void)state;
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		assert_true(xl_family_index(expected[i]) >= 0);
	for (size_t i = 0; i < xl_nfamilies; i++) {
		const struct xl_family *f = &xl_families[i];

		assert_non_null(f->repository);
		assert_non_null(f->path);
		assert_true(f->commit != NULL || f->release != NULL);
	}
	/* xla is complete and generated from the upstream registrations,
	 * libtpu from its wheels and its own parser */
	assert_true(xl_families[xl_family_index("xla")].complete);
	assert_true(xl_families[xl_family_index("libtpu")].complete);
}

static void test_xla_family_complete(void **state)
{
	size_t n = 0;
	int xla = xl_family_index("xla");

	(void)state;
	for (size_t i = 0; i < xl_nflagdefs; i++)
		n += xl_flagdef_at(i)->family == xla;
	/* debug_options_flags.cc registers a few hundred flags */
	assert_true(n >= 200);
}

static void test_lookups_and_tags(void **state)
{
	const struct xl_flagdef *d;

	(void)state;
	d = xl_catalog_flag("XLA_FLAGS", "xla_dump_to");
	assert_non_null(d);
	assert_true(d->tags & XL_FTAG_DEBUG);
	d = xl_catalog_flag("XLA_FLAGS", "xla_gpu_per_fusion_autotune_cache_dir");
	assert_non_null(d);
	assert_true(d->tags & XL_FTAG_CACHE);
	assert_null(xl_catalog_flag("XLA_FLAGS", "xla_tpu_enable_flash_attention"));
	assert_non_null(xl_catalog_flag("LIBTPU_INIT_ARGS", "xla_tpu_enable_flash_attention"));
	/* libtpu takes none of XLA's general options; its dump flag is its own */
	assert_null(xl_catalog_flag("LIBTPU_INIT_ARGS", "xla_dump_to"));
	assert_non_null(xl_catalog_flag("LIBTPU_INIT_ARGS", "xla_jf_dump_to"));
	assert_int_equal(xl_catalog_coverage("XLA_FLAGS"), 0);
	assert_int_equal(xl_catalog_coverage("LIBTPU_INIT_ARGS"), 0);
	assert_int_equal(xl_catalog_coverage("TF_XLA_FLAGS"), 2);

	static const char *const debug_vars[] = { "PT_XLA_DEBUG_LEVEL", "XLA_IR_DEBUG", "XLA_HLO_DEBUG",
						  "JAX_LOG_COMPILES", "JAX_EXPLAIN_CACHE_MISSES" };
	for (size_t i = 0; i < sizeof(debug_vars) / sizeof(debug_vars[0]); i++) {
		d = xl_catalog_env(debug_vars[i]);
		assert_non_null(d);
		assert_true(d->tags & XL_FTAG_DEBUG);
	}
	static const char *const cache_vars[] = { "XLA_PERSISTENT_CACHE_PATH", "JAX_COMPILATION_CACHE_DIR" };
	for (size_t i = 0; i < 2; i++) {
		d = xl_catalog_env(cache_vars[i]);
		assert_non_null(d);
		assert_true(d->tags & XL_FTAG_CACHE);
	}
	d = xl_catalog_env("PJRT_DEVICE");
	assert_non_null(d);
	assert_string_equal(xl_families[d->family].name, "runtime");
	assert_string_equal(xl_catalog_suggest("XLA_FLAGS", "xla_gpu_enable_trition_gemm"),
			    "xla_gpu_enable_triton_gemm");
	assert_string_equal(xl_catalog_suggest(NULL, "JAX_LOG_COMPILE"), "JAX_LOG_COMPILES");
}

static void test_types(void **state)
{
	const struct xl_flagdef *d;

	(void)state;
	d = xl_catalog_flag("XLA_FLAGS", "xla_gpu_autotune_level");
	assert_int_equal(d->type, XL_FT_INT);
	assert_null(xl_flag_type_error(d, "4"));
	assert_non_null(xl_flag_type_error(d, "high"));
	assert_non_null(xl_flag_type_error(d, ""));
	d = xl_catalog_flag("XLA_FLAGS", "xla_gpu_enable_triton_gemm");
	assert_int_equal(d->type, XL_FT_BOOL);
	assert_null(xl_flag_type_error(d, "TRUE"));
	assert_null(xl_flag_type_error(d, "0"));
	assert_null(xl_flag_type_error(d, NULL));
	assert_non_null(xl_flag_type_error(d, "yes"));
	d = xl_catalog_flag("XLA_FLAGS", "xla_gpu_shape_checks");
	assert_int_equal(d->type, XL_FT_ENUM);
	assert_null(xl_flag_type_error(d, "RUNTIME"));
	assert_non_null(xl_flag_type_error(d, "runtime"));
	d = xl_catalog_flag("XLA_FLAGS", "xla_gpu_auto_spmd_partitioning_memory_budget_ratio");
	assert_int_equal(d->type, XL_FT_FLOAT);
	assert_null(xl_flag_type_error(d, "1.5"));
	assert_non_null(xl_flag_type_error(d, "nan"));
}

static void test_bool_parsers(void **state)
{
	bool m;

	(void)state;
	/* jaxlib: only false, False and 0 turn preallocation off */
	assert_null(xl_bool_normalize(XL_BP_PREALLOC, "no", &m));
	assert_true(m);
	assert_string_equal(xl_bool_normalize(XL_BP_PREALLOC, "False", &m), "false");
	/* JAX bool_env: yes/no accepted, anything else raises */
	assert_string_equal(xl_bool_normalize(XL_BP_PYTHON, "YES", &m), "true");
	assert_null(xl_bool_normalize(XL_BP_PYTHON, "maybe", &m));
	assert_false(m);
	/* torch_xla GetEnvBool: "True" is atoi("True") == 0 */
	assert_null(xl_bool_normalize(XL_BP_ATOI, "True", &m));
	assert_true(m);
	assert_string_equal(xl_bool_normalize(XL_BP_ATOI, "1", &m), "1");
	assert_string_equal(xl_bool_normalize(XL_BP_ATOI, "true", &m), "true");
	/* torch_xla's os.getenv(...) == '1': only 1 is true */
	assert_string_equal(xl_bool_normalize(XL_BP_ONE, "1", &m), "1");
	assert_string_equal(xl_bool_normalize(XL_BP_ONE, "false", &m), "0");
	assert_false(m);
	assert_null(xl_bool_normalize(XL_BP_ONE, "true", &m));
	assert_true(m);
	/* set or not: "0" is set, so true */
	assert_string_equal(xl_bool_normalize(XL_BP_NONEMPTY, "1", &m), "1");
	assert_null(xl_bool_normalize(XL_BP_NONEMPTY, "0", &m));
	assert_true(m);
	assert_null(xl_bool_normalize(XL_BP_NONEMPTY, "false", &m));
	assert_true(m);
	/* the catalog says which reader applies */
	assert_int_equal(xl_flagdef_bool_parser(xl_catalog_env("XLA_USE_EAGER_DEBUG_MODE")), XL_BP_ONE);
	assert_int_equal(xl_flagdef_bool_parser(xl_catalog_env("PT_XLA_DEBUG")), XL_BP_PYINT);
	assert_int_equal(xl_flagdef_bool_parser(xl_catalog_env("XLA_USE_SPMD")), XL_BP_ATOI);
	assert_int_equal(xl_flagdef_bool_parser(xl_catalog_env("TPU_SKIP_MDS_QUERY")), XL_BP_NONEMPTY);
	/* NCCL: integers only */
	assert_string_equal(xl_bool_normalize(XL_BP_INT, "1", &m), "1");
	assert_null(xl_bool_normalize(XL_BP_INT, "true", &m));
	assert_true(m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_unique),
		cmocka_unit_test(test_entries_valid),
		cmocka_unit_test(test_families_have_sources),
		cmocka_unit_test(test_xla_family_complete),
		cmocka_unit_test(test_lookups_and_tags),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_bool_parsers),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
