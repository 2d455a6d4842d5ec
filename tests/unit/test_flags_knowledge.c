/* test_flags_knowledge.c - the compiled knowledge over runtime releases
 * (launcher/flags/knowledge.h) says what etc/flags/FAMILY.yaml say: every entry's
 * releases, variants, successor and removal, read back from the YAML with
 * the real libyaml parser and compared with the tables gen-catalog wrote;
 * the release list's shape; a few facts checked against upstream by hand. */
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

#include "launcher/flags/flags.h"
#include "launcher/flags/knowledge.h"
#include "launcher/flags/xlareader.h"
#include "bundle/bundle.h"

static int package(const char *name)
{
	for (size_t i = 0; i < xl_nkpackages; i++)
		if (strcmp(xl_kstr(xl_kpackages[i].name), name) == 0)
			return (int)i;
	return -1;
}

/* The bit of release version of package p in family fam's masks, or -1. */
static int bit_of(int fam, int p, const char *version)
{
	const struct xl_kfamily *kf = &xl_kfamilies[fam];
	const struct xl_kpackage *kp = &xl_kpackages[p];

	for (int a = 0; a < 2; a++) {
		if (kf->pkg[a] != p)
			continue;
		for (int i = 0; i < kp->nknown; i++)
			if (strcmp(xl_kstr(xl_kreleases[kp->first + i].version), version) == 0)
				return kf->shift[a] + i;
	}
	return -1;
}

/* The releases of package p in mask, written as the generators write them
 * ("0.4.30-0.6.2 0.7.1"); caller frees. */
static char *ranges(int fam, int p, uint64_t mask)
{
	const struct xl_kpackage *kp = &xl_kpackages[p];
	struct xl_buf b = XL_BUF_INIT;
	int start = -1;

	for (int i = 0; i <= kp->nknown; i++) {
		const char *v = i < kp->nknown ? xl_kstr(xl_kreleases[kp->first + i].version) : NULL;
		bool in = v && (mask >> bit_of(fam, p, v)) & 1;

		if (in && start < 0)
			start = i;
		if (!in && start >= 0) {
			xl_buf_addf(&b, "%s%s", b.len ? " " : "", xl_kstr(xl_kreleases[kp->first + start].version));
			if (i - 1 > start)
				xl_buf_addf(&b, "-%s", xl_kstr(xl_kreleases[kp->first + i - 1].version));
			start = -1;
		}
	}
	return xl_buf_detach(&b);
}

/* The bits of family fam's masks that stand for observed releases (known
 * by their wheels' names, not from the sources the YAML records). */
static uint64_t observed_bits(int fam)
{
	const struct xl_kfamily *kf = &xl_kfamilies[fam];
	uint64_t m = 0;

	for (int a = 0; a < 2; a++) {
		const struct xl_kpackage *kp;

		if (kf->pkg[a] < 0)
			continue;
		kp = &xl_kpackages[kf->pkg[a]];
		for (int i = 0; i < kp->nknown; i++)
			if (xl_kreleases[kp->first + i].observed)
				m |= UINT64_C(1) << (kf->shift[a] + i);
	}
	return m;
}

static const struct xl_kflag *kflag(const char *name, const char *family)
{
	int fam = xl_family_index(family);

	for (size_t i = 0; i < xl_nkflags; i++)
		if (xl_kflags[i].family == fam && strcmp(xl_kstr(xl_kflags[i].name), name) == 0)
			return &xl_kflags[i];
	return NULL;
}

static void test_release_list(void **state)
{
	static const char *const pkgs[] = { "jaxlib", "jax", "torch_xla" };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		int p = package(pkgs[k]);
		const struct xl_kpackage *kp;

		assert_true(p >= 0);
		kp = &xl_kpackages[p];
		assert_true(kp->nknown > 0 && kp->nknown <= kp->n);
		assert_true(kp->pinned < kp->nknown);
		for (int i = 0; i < kp->n; i++) {
			const struct xl_krelease *r = &xl_kreleases[kp->first + i];

			assert_int_equal(r->pkg, p);
			assert_int_equal(r->known, i < kp->nknown);
			assert_true(strlen(xl_kstr(r->commit)) == 40);
		}
	}
	/* every jaxlib minor series from 0.4 to 0.12 is listed and known; the
	 * releases after 0.11.0 by the names their wheels register */
	{
		const struct xl_kpackage *kp = &xl_kpackages[package("jaxlib")];
		static const char *const series[] = { "0.4.", "0.5.", "0.6.", "0.7.", "0.8.", "0.9.",
						      "0.10.", "0.11.", "0.12." };

		for (size_t s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
			bool found = false;

			for (int i = 0; i < kp->nknown; i++)
				found |= strncmp(xl_kstr(xl_kreleases[kp->first + i].version), series[s],
						 strlen(series[s])) == 0;
			assert_true(found);
		}
		for (int i = 0; i < kp->n; i++) {
			const struct xl_krelease *r = &xl_kreleases[kp->first + i];

			/* observed releases come after every release read from sources */
			if (r->observed)
				assert_true(r->known && i > kp->pinned);
			if (i && xl_kreleases[kp->first + i - 1].observed && r->known)
				assert_true(r->observed);
		}
		assert_string_equal(xl_kstr(xl_kreleases[kp->first + kp->pinned].version), "0.10.2");
		assert_string_equal(xl_kstr(xl_kreleases[kp->first + kp->pinned].xla),
				    "5a9e73cbd92530cac2ac36f4736a774b2412afe2");
	}
}

/* One family's YAML against the tables. */
static void check_family(const char *file, const char *family)
{
	char *path = xl_asprintf("%s/etc/flags/%s", getenv("XLAUNCH_SRC") ? getenv("XLAUNCH_SRC") : ".", file);
	size_t len, checked = 0;
	char *data = xl_read_file(path, &len, 0), *err = NULL;
	struct xl_ynode *root, *fl;
	int fam = xl_family_index(family);

	assert_non_null(data);
	root = xl_yaml_parse(data, len, &err);
	assert_non_null(root);
	fl = xl_ymap_get(root, "flags");
	assert_non_null(fl);
	for (size_t i = 0; i < fl->n; i++) {
		struct xl_ynode *e = fl->items[i], *rel = xl_ymap_get(e, "releases"), *var;
		const char *name = xl_ymap_get(e, "name")->str;
		const struct xl_kflag *k = kflag(name, family);
		const struct xl_flagdef *d;
		size_t nd = xl_catalog_find_all(name, &d);
		bool in_table = false;

		assert_non_null(k);
		/* the YAML records the releases read from sources */
		for (size_t r = 0; r < rel->n; r += 2) {
			char *got = ranges(fam, package(rel->items[r]->str), k->rel & ~observed_bits(fam));

			assert_string_equal(got, rel->items[r + 1]->str);
			free(got);
		}
		/* in the catalog exactly when the pinned release registers it */
		for (size_t j = 0; j < nd; j++)
			if (d[j].family == fam) {
				in_table = true;
				assert_ptr_equal(&d[j], xl_flagdef_at((size_t)k->def));
			}
		assert_int_equal(in_table, k->def >= 0);
		{
			const struct xl_kpackage *kp = &xl_kpackages[xl_kfamilies[fam].pkg[0]];
			const char *pin = xl_kstr(xl_kreleases[kp->first + kp->pinned].version);

			assert_int_equal(in_table, (k->rel >> bit_of(fam, xl_kfamilies[fam].pkg[0], pin)) & 1);
		}
		var = xl_ymap_get(e, "variants");
		assert_int_equal(k->nvar, var ? var->n : 0);
		for (size_t v = 0; var && v < var->n; v++) {
			const struct xl_kvariant *kv = &xl_kvariants[k->var + v];
			struct xl_ynode *vr = xl_ymap_get(var->items[v], "releases");

			assert_string_equal(xl_ftype_name(kv->type), xl_ymap_get(var->items[v], "type")->str);
			assert_true((kv->rel & ~k->rel) == 0);
			for (size_t r = 0; r < vr->n; r += 2) {
				char *got = ranges(fam, package(vr->items[r]->str), kv->rel);

				assert_string_equal(got, vr->items[r + 1]->str);
				free(got);
			}
		}
		if (xl_ymap_get(e, "replaced_by"))
			assert_string_equal(xl_kstr(k->replaced_by), xl_ymap_get(e, "replaced_by")->str);
		else
			assert_int_equal(k->replaced_by, 0);
		if (xl_ymap_get(e, "removed"))
			assert_string_equal(xl_kstr(k->removed), xl_ymap_get(e, "removed")->str);
		assert_string_equal(xl_kstr(k->desc), xl_ymap_get(e, "description")->str);
		checked++;
	}
	assert_true(checked > 50);
	xl_ynode_free(root);
	free(data);
	free(path);
}

static void test_xla_yaml(void **state)
{
	(void)state;
	check_family("xla.yaml", "xla");
}

static void test_torch_xla_yaml(void **state)
{
	(void)state;
	check_family("torch_xla.yaml", "torch_xla");
}

static void test_jax_yaml(void **state)
{
	(void)state;
	check_family("jax.yaml", "jax");
}

/* Facts read off upstream by hand: openxla/xla's registrations at the XLA
 * commits of jaxlib 0.7.1 and 0.7.2, and PR #30187's message. */
static void test_known_facts(void **state)
{
	const struct xl_kflag *k = kflag("xla_gpu_graph_level", "xla");
	int xla = xl_family_index("xla"), jl = package("jaxlib"), tx = package("torch_xla");
	char *r;

	(void)state;
	assert_non_null(k);
	assert_int_equal(k->def, -1);           /* jaxlib 0.10.2 does not register it */
	assert_true((k->rel >> bit_of(xla, jl, "0.4.30")) & 1);
	assert_true((k->rel >> bit_of(xla, jl, "0.7.1")) & 1);
	assert_false((k->rel >> bit_of(xla, jl, "0.7.2")) & 1);
	assert_true((k->rel >> bit_of(xla, tx, "2.9.0")) & 1);
	assert_string_equal(xl_kstr(k->replaced_by), "xla_gpu_enable_command_buffer");
	r = ranges(xla, jl, k->rel);
	assert_string_equal(r, "0.4.30-0.7.1");
	free(r);
	/* a flag of the pinned release points at its catalog entry */
	k = kflag("xla_gpu_enable_triton_gemm", "xla");
	assert_non_null(k);
	assert_true(k->def >= 0);
	assert_string_equal(xl_flagdef_at((size_t)k->def)->name, "xla_gpu_enable_triton_gemm");
	/* a flag newer than the pinned release */
	k = kflag("xla_gpu_enable_pdl_launch", "xla");
	assert_non_null(k);
	assert_int_equal(k->def, -1);
	assert_true((k->rel >> bit_of(xla, jl, "0.11.0")) & 1);
	assert_false((k->rel >> bit_of(xla, jl, "0.10.2")) & 1);
	/* releases outside the knowledge have no bit; observed ones do */
	assert_int_equal(bit_of(xla, jl, "0.13.0"), -1);
	assert_true(bit_of(xla, jl, "0.12.0.1") >= 0);
	k = kflag("xla_gpu_graph_level", "xla");
	assert_false((k->rel >> bit_of(xla, jl, "0.12.0.1")) & 1);
}

/* What the wheels of the observed releases register (etc/flags/observed/),
 * against the tables: each name's bit is set exactly when its file lists
 * it, and a name no release read from sources has is an entry without a
 * type. */
static void test_observed(void **state)
{
	int xla = xl_family_index("xla"), jl = package("jaxlib");
	const struct xl_kpackage *kp = &xl_kpackages[jl];
	const struct xl_kflag *k;
	size_t files = 0;

	(void)state;
	for (int i = 0; i < kp->nknown; i++) {
		const struct xl_krelease *r = &xl_kreleases[kp->first + i];
		char *path, *data, *line, *save = NULL;
		size_t len, listed = 0, set = 0;
		uint64_t bit;

		if (!r->observed)
			continue;
		bit = UINT64_C(1) << bit_of(xla, jl, xl_kstr(r->version));
		path = xl_asprintf("%s/etc/flags/observed/jaxlib-%s.txt",
				   getenv("XLAUNCH_SRC") ? getenv("XLAUNCH_SRC") : ".", xl_kstr(r->version));
		data = xl_read_file(path, &len, 0);
		assert_non_null(data);
		for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (*line == '#')
				continue;
			k = kflag(line, "xla");
			assert_non_null(k);
			assert_true(k->rel & bit);
			listed++;
		}
		for (size_t f = 0; f < xl_nkflags; f++)
			set += xl_kflags[f].family == xla && (xl_kflags[f].rel & bit);
		assert_int_equal(set, listed);
		assert_true(listed > 300);
		free(data);
		free(path);
		files++;
	}
	assert_int_equal(files, 4);
	/* dropped after 0.11.0, as jaxlib 0.11.1's XLA shows */
	k = kflag("xla_llvm_force_inline_before_split", "xla");
	assert_true((k->rel >> bit_of(xla, jl, "0.11.0")) & 1);
	assert_false((k->rel >> bit_of(xla, jl, "0.11.1")) & 1);
	/* registered from 0.11.1 on, known from the wheels only */
	k = kflag("xla_gpu_async_copy_min_bytes", "xla");
	assert_non_null(k);
	assert_int_equal(k->def, -1);
	assert_true(k->tags & XL_FTAG_OBSERVED);
	assert_false((k->rel >> bit_of(xla, jl, "0.11.0")) & 1);
	assert_true((k->rel >> bit_of(xla, jl, "0.11.1")) & 1);
	assert_true((k->rel >> bit_of(xla, jl, "0.12.0.1")) & 1);
}

/* Where installed versions are placed among the releases the knowledge
 * lists. */
static void test_judge_positions(void **state)
{
	static const struct { const char *v; enum xl_rel_how how; const char *as; } cases[] = {
		{ "0.6.2", XL_REL_EXACT, "0.6.2" },
		{ "0.9.0.1", XL_REL_EXACT, "0.9.0.1" },
		{ "0.12.0.1", XL_REL_EXACT, "0.12.0.1" },      /* observed */
		{ "0.11.2", XL_REL_EXACT, "0.11.2" },
		{ "0.13.0", XL_REL_NEWER, "0.12.0.1" },
		{ "1.0", XL_REL_NEWER, "0.12.0.1" },
		{ "0.4.20", XL_REL_OLDER, "0.4.30" },
		{ "0.4.32", XL_REL_BETWEEN, "0.4.31" },        /* withdrawn from PyPI */
		{ "0.10.2+cuda12", XL_REL_EXACT, "0.10.2" },   /* a local build of 0.10.2 */
		{ "0.10.3.dev20260701", XL_REL_BETWEEN, "0.10.2" },
		{ "not-a-version", XL_REL_UNREADABLE, "0.12.0.1" },
	};
	int jl = package("jaxlib");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xl_runtime rt = { .source = "--release", .jaxlib = (char *)cases[i].v };
		struct xl_judge j;

		xl_judge_init(&j, &rt);
		assert_int_equal(j.pos[jl].how, cases[i].how);
		assert_string_equal(xl_kstr(xl_kreleases[xl_kpackages[jl].first + j.pos[jl].index].version),
				    cases[i].as);
	}
	{
		struct xl_judge j;

		xl_judge_init(&j, NULL);
		assert_int_equal(j.pos[jl].how, XL_REL_ASSUMED);
		assert_int_equal(j.pos[jl].index, xl_kpackages[jl].nknown - 1);
	}
}

static void judge_flag(const char *jaxlib, const char *name, struct xl_rel_verdict *rv)
{
	struct xl_runtime rt = { .source = "--release", .jaxlib = (char *)jaxlib };
	struct xl_judge j;

	xl_judge_init(&j, &rt);
	(void)xl_catalog_flag_at(&j, "XLA_FLAGS", name, rv);
}

/* A flag judged against releases that have it, lack it, or are unknown. */
static void test_judge_flags(void **state)
{
	struct xl_rel_verdict rv;

	(void)state;
	judge_flag("0.6.2", "xla_gpu_graph_level", &rv);
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	assert_non_null(rv.d);
	assert_int_equal(rv.d->type, XL_FT_INT);
	assert_string_equal(rv.d->name, "xla_gpu_graph_level");
	xl_rel_verdict_release(&rv);
	judge_flag("0.10.2", "xla_gpu_graph_level", &rv);
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	assert_null(rv.d);
	assert_non_null(strstr(rv.why, "registered by jaxlib 0.4.30 to 0.7.1 and torch_xla 2.5.0 to 2.9.0"));
	assert_non_null(strstr(rv.why, "whose XLA aborts on it"));
	assert_non_null(strstr(rv.hint, "xla_gpu_enable_command_buffer"));
	xl_rel_verdict_release(&rv);
	judge_flag("0.13.0", "xla_gpu_graph_level", &rv);
	assert_int_equal(rv.status, XL_RS_UNCONFIRMED);
	assert_non_null(strstr(rv.why, "newer than every release xlaunch knows"));
	xl_rel_verdict_release(&rv);
	judge_flag("0.13.0", "xla_not_a_flag_anywhere", &rv);
	assert_int_equal(rv.status, XL_RS_UNCONFIRMED);
	xl_rel_verdict_release(&rv);
	/* an observed release: what its wheel registers, refused otherwise */
	judge_flag("0.12.0.1", "xla_gpu_graph_level", &rv);
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	assert_non_null(strstr(rv.why, "whose XLA aborts on it"));
	xl_rel_verdict_release(&rv);
	judge_flag("0.11.1", "xla_llvm_force_inline_before_split", &rv);
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	assert_non_null(strstr(rv.why, "registered by jaxlib 0.4.30 to 0.11.0"));
	xl_rel_verdict_release(&rv);
	judge_flag("0.12.0.1", "xla_gpu_async_copy_min_bytes", &rv);
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	xl_rel_verdict_release(&rv);
	judge_flag("0.12.0.1", "xla_gpu_enable_pdl_launch", &rv);   /* types from 0.11.0 */
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	assert_int_equal(rv.d->type, XL_FT_BOOL);
	xl_rel_verdict_release(&rv);
	judge_flag("0.12.0.1", "xla_not_a_flag_anywhere", &rv);
	assert_int_equal(rv.status, XL_RS_UNKNOWN);
	xl_rel_verdict_release(&rv);
	judge_flag("0.10.2", "xla_not_a_flag_anywhere", &rv);
	assert_int_equal(rv.status, XL_RS_UNKNOWN);
	xl_rel_verdict_release(&rv);
	/* no judge: the pinned catalog, as before */
	assert_null(xl_catalog_flag_at(NULL, "XLA_FLAGS", "xla_gpu_graph_level", &rv));
	xl_rel_verdict_release(&rv);
	/* a flag newer than the pinned release */
	judge_flag("0.11.0", "xla_gpu_enable_pdl_launch", &rv);
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	assert_int_equal(rv.d->type, XL_FT_BOOL);
	xl_rel_verdict_release(&rv);
}

/* The values of a release whose variant differs from the entry. */
static void test_judge_variant(void **state)
{
	struct xl_rel_verdict rv;

	(void)state;
	judge_flag("0.4.35", "xla_gpu_enable_command_buffer", &rv);
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	assert_true(xl_list_has(rv.d->values, "DYNAMIC_SLICE"));
	assert_false(xl_list_has(rv.d->values, "DYNAMIC_SLICE_FUSION"));
	xl_rel_verdict_release(&rv);
	judge_flag("0.10.2", "xla_gpu_enable_command_buffer", &rv);
	assert_true(xl_list_has(rv.d->values, "DYNAMIC_SLICE_FUSION"));
	assert_ptr_equal(rv.d, xl_catalog_flag("XLA_FLAGS", "xla_gpu_enable_command_buffer"));
	xl_rel_verdict_release(&rv);
}

/* Environment variables of the jax and torch_xla families. */
static void test_judge_env(void **state)
{
	struct xl_runtime rt = { .source = "--release", .jax = (char *)"0.5.0",
				 .torch_xla = (char *)"2.9.0" };
	struct xl_rel_verdict rv;
	struct xl_judge j;

	(void)state;
	xl_judge_init(&j, &rt);
	assert_non_null(xl_catalog_env_at(&j, "JAX_ENABLE_MEMORIES", &rv));
	xl_rel_verdict_release(&rv);
	assert_null(xl_catalog_env_at(&j, "GPU_NUM_DEVICES", &rv));
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	assert_non_null(strstr(rv.why, "read by torch_xla 2.5.0 to 2.8.1"));
	assert_non_null(strstr(rv.why, "the setting has no effect"));
	xl_rel_verdict_release(&rv);
	rt.jax = (char *)"0.10.2";
	xl_judge_init(&j, &rt);
	assert_null(xl_catalog_env_at(&j, "JAX_ENABLE_MEMORIES", &rv));
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	xl_rel_verdict_release(&rv);
	/* a family without releases: the catalog alone */
	assert_non_null(xl_catalog_env_at(&j, "NCCL_DEBUG", &rv));
	assert_int_equal(rv.status, XL_RS_REGISTERED);
	xl_rel_verdict_release(&rv);
}

/* A job that loads jaxlib 0.10.2 and torch_xla 2.9.0: a value is checked
 * against both releases' rules, and the one that refuses it is named. */
static void test_judge_two_releases(void **state)
{
	static const char *const specs[] = { "jaxlib==0.10.2", "torch_xla==2.9.0" };
	const char *mode = "xla_cpu_experimental_xnn_graph_fusion_mode", *why;
	struct xl_runtime rt;
	struct xl_rel_verdict rv;
	struct xl_judge j;
	const struct xl_flagdef *d;

	(void)state;
	assert_int_equal(xl_runtime_of_releases(specs, 2, &rt), 0);
	xl_judge_init(&j, &rt);
	d = xl_catalog_flag_at(&j, "XLA_FLAGS", mode, &rv);
	assert_non_null(d);
	/* jaxlib 0.10.2's XLA takes it, torch_xla 2.9.0's does not */
	why = xl_xla_value_error(d, "XNN_GRAPH_FUSION_MODE_BYPASS_COST_MODEL");
	assert_non_null(why);
	assert_non_null(strstr(why, "in torch_xla 2.9.0"));
	why = xl_flag_value_error(d, "XNN_GRAPH_FUSION_MODE_BYPASS_COST_MODEL");
	assert_non_null(why);
	assert_non_null(strstr(why, "in torch_xla 2.9.0"));
	/* a value both take */
	assert_null(xl_xla_value_error(d, "XNN_GRAPH_FUSION_MODE_GREEDY"));
	assert_null(xl_flag_value_error(d, "XNN_GRAPH_FUSION_MODE_GREEDY"));
	xl_rel_verdict_release(&rv);
	/* the same entry is built once */
	assert_ptr_equal(xl_catalog_flag_at(&j, "XLA_FLAGS", mode, &rv), d);
	xl_rel_verdict_release(&rv);
	xl_runtime_release(&rt);
	/* jaxlib 0.10.2 alone takes it */
	assert_int_equal(xl_runtime_of_release("jaxlib==0.10.2", &rt), 0);
	xl_judge_init(&j, &rt);
	d = xl_catalog_flag_at(&j, "XLA_FLAGS", mode, &rv);
	assert_null(xl_xla_value_error(d, "XNN_GRAPH_FUSION_MODE_BYPASS_COST_MODEL"));
	xl_rel_verdict_release(&rv);
	xl_runtime_release(&rt);
	/* a package given twice is refused; jax and jaxlib both given keep their own */
	{
		static const char *const twice[] = { "jaxlib==0.10.2", "jaxlib==0.6.2" };
		static const char *const both[] = { "jax==0.10.2", "jaxlib==0.10.1" };

		assert_int_equal(xl_runtime_of_releases(twice, 2, &rt), XL_EX_USAGE);
		assert_non_null(strstr(rt.why, "given twice"));
		xl_runtime_release(&rt);
		assert_int_equal(xl_runtime_of_releases(both, 2, &rt), 0);
		assert_string_equal(rt.jax, "0.10.2");
		assert_string_equal(rt.jaxlib, "0.10.1");
		xl_runtime_release(&rt);
	}
}

/* Nothing of a family found: the newest release is assumed, and a flag only
 * older releases register is a warning that says so, never a refusal; a
 * name no release registers stays an error. */
static void test_judge_assumed(void **state)
{
	struct xl_runtime rt = { .python = (char *)"/v/bin/python", .source = "argv[0]" };
	struct xl_rel_verdict rv;
	struct xl_judge j;

	(void)state;
	xl_judge_init(&j, &rt);
	assert_null(xl_catalog_flag_at(&j, "XLA_FLAGS", "xla_gpu_graph_level", &rv));
	assert_int_equal(rv.status, XL_RS_UNCONFIRMED);
	assert_non_null(strstr(rv.why, "registered by jaxlib 0.4.30 to 0.7.1"));
	assert_non_null(strstr(rv.why, "which was assumed (/v/bin/python has no jaxlib)"));
	xl_rel_verdict_release(&rv);
	assert_null(xl_catalog_flag_at(&j, "XLA_FLAGS", "xla_not_a_flag_anywhere", &rv));
	assert_int_equal(rv.status, XL_RS_UNKNOWN);
	xl_rel_verdict_release(&rv);
	/* no Python at all */
	xl_judge_init(&j, NULL);
	assert_null(xl_catalog_flag_at(&j, "XLA_FLAGS", "xla_gpu_graph_level", &rv));
	assert_int_equal(rv.status, XL_RS_UNCONFIRMED);
	xl_rel_verdict_release(&rv);
	/* --release of another package says the release was given */
	assert_int_equal(xl_runtime_of_release("libtpu==0.0.42", &rt), 0);
	xl_judge_init(&j, &rt);
	assert_null(xl_catalog_flag_at(&j, "XLA_FLAGS", "xla_gpu_graph_level", &rv));
	assert_int_equal(rv.status, XL_RS_UNCONFIRMED);
	assert_non_null(strstr(rv.why, "libtpu 0.0.42 was given with --release, no jaxlib"));
	assert_null(strstr(rv.why, "no Python"));
	xl_rel_verdict_release(&rv);
	{
		char *s = xl_judge_str(&j, xl_family_index("xla"));

		assert_null(strstr(s, "no Python"));
		free(s);
	}
	xl_runtime_release(&rt);
	/* a removal in the knowledge's own words reads as a sentence */
	assert_int_equal(xl_runtime_of_release("jax==0.10.2", &rt), 0);
	xl_judge_init(&j, &rt);
	assert_null(xl_catalog_env_at(&j, "CHECK_REP", &rv));
	assert_int_equal(rv.status, XL_RS_ELSEWHERE);
	assert_string_equal(rv.hint, "it is no longer read from jax 0.6.1 on");
	xl_rel_verdict_release(&rv);
	xl_runtime_release(&rt);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_list),
		cmocka_unit_test(test_xla_yaml),
		cmocka_unit_test(test_torch_xla_yaml),
		cmocka_unit_test(test_jax_yaml),
		cmocka_unit_test(test_known_facts),
		cmocka_unit_test(test_observed),
		cmocka_unit_test(test_judge_positions),
		cmocka_unit_test(test_judge_flags),
		cmocka_unit_test(test_judge_variant),
		cmocka_unit_test(test_judge_env),
		cmocka_unit_test(test_judge_two_releases),
		cmocka_unit_test(test_judge_assumed),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
