/* test_bundle.c - markers, METADATA, requirements, the bundle matrix and the
 * bundle rules over synthetic site-packages trees. */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle/bundle.h"
#include "tests/fuzz/targets.h"

static const char *src_path(const char *rel)
{
	static char buf[4096];
	const char *s = getenv("XLAUNCH_SRC");

	snprintf(buf, sizeof(buf), "%s/%s", s && *s ? s : ".", rel);
	return buf;
}

/* ---- markers -------------------------------------------------------------- */

static int ev(const char *marker, const char *extra)
{
	struct xl_marker *m;
	struct xl_marker_env env;
	char *err = NULL;
	int r;

	if (xl_marker_parse(marker, strlen(marker), &m, &err) < 0)
		fail_msg("marker '%s' should parse: %s", marker, err);
	memset(&env, 0, sizeof(env));
	env.python_version = "3.13";
	env.python_full_version = "3.13.1";
	env.sys_platform = "linux";
	env.platform_system = "Linux";
	env.platform_machine = "x86_64";
	env.implementation_name = "cpython";
	env.platform_release = "6.8.0-1015-gcp";
	r = xl_marker_eval(m, &env, extra, &err);
	free(err);
	xl_marker_free(m);
	return r;
}

static void test_markers(void **state)
{
	(void)state;
	assert_int_equal(ev("python_version >= \"3.12\"", NULL), 1);
	assert_int_equal(ev("python_version < '3.10'", NULL), 0);
	assert_int_equal(ev("python_version > '3.9'", NULL), 1);   /* version, not string, order */
	assert_int_equal(ev("python_full_version == '3.13.*'", NULL), 1);
	assert_int_equal(ev("'3.12' <= python_version", NULL), 1);
	assert_int_equal(ev("sys_platform == 'linux' and platform_machine == 'x86_64'", NULL), 1);
	assert_int_equal(ev("platform_system == \"Windows\" or implementation_name == 'cpython'", NULL), 1);
	assert_int_equal(ev("(sys_platform == 'darwin' or sys_platform == 'linux') and extra == 'tpu'", NULL), 0);
	assert_int_equal(ev("(sys_platform == 'darwin' or sys_platform == 'linux') and extra == 'tpu'", "tpu"), 1);
	assert_int_equal(ev("extra == 'With_CUDA'", "with-cuda"), 1);   /* names normalized */
	assert_int_equal(ev("sys_platform == 'linux' and extra == 'with-cuda'", "with.cuda"), 1);
	assert_int_equal(ev("'linux' in sys_platform", NULL), 1);
	assert_int_equal(ev("'win' not in sys_platform", NULL), 1);
	assert_int_equal(ev("platform_release >= '5'", NULL), 0);   /* not a version: false */
	assert_int_equal(ev("platform_machine > 'aarch64'", NULL), 0);   /* packaging: > on strings is false */
	assert_int_equal(ev("os.name == ''", NULL), 1);
	assert_int_equal(ev("platform_machine ~= 'x86'", NULL), -1);   /* undefined comparison */
	{
		static const char *const bad[] = {
			"", "python_version", "python_version >= ", "foo == '1'", "'a' == 'b' and",
			"(python_version > '3'", "python_version >= '3' junk", "'unterminated == 'x'",
			"python_version not '3'",
		};
		struct xl_marker *m;
		char *err;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			err = NULL;
			if (xl_marker_parse(bad[i], strlen(bad[i]), &m, &err) == 0)
				fail_msg("marker '%s' should not parse", bad[i]);
			assert_non_null(err);
			free(err);
		}
	}
}

/* ---- requirements and METADATA ----------------------------------------------- */

static void test_requirements(void **state)
{
	struct xl_req r;
	char *err = NULL, *s;

	(void)state;
	assert_int_equal(xl_req_parse("jax-cuda12-plugin[with-cuda]<=0.10.2,>=0.10.2; extra == \"cuda12\"",
				      64, &r, &err), 0);
	assert_string_equal(r.key, "jax-cuda12-plugin");
	assert_int_equal(r.extras.n, 1);
	assert_string_equal(r.extras.v[0], "with-cuda");
	s = xl_specset_str(&r.spec);
	assert_string_equal(s, "<=0.10.2,>=0.10.2");
	free(s);
	assert_true(xl_marker_uses_extra(r.marker));
	xl_req_release(&r);
	assert_int_equal(xl_req_parse("Torch_XLA (>=2.9, <2.10)", 24, &r, &err), 0);
	assert_string_equal(r.key, "torch-xla");
	assert_int_equal(r.spec.n, 2);
	xl_req_release(&r);
	assert_int_equal(xl_req_parse("pkg @ https://example.invalid/p.whl ; python_version > '3'", 58,
				      &r, &err), 0);
	assert_string_equal(r.url, "https://example.invalid/p.whl");
	assert_non_null(r.marker);
	xl_req_release(&r);
	assert_int_equal(xl_req_parse("opt_einsum", 10, &r, &err), 0);
	assert_int_equal(r.spec.n, 0);
	assert_null(r.marker);
	xl_req_release(&r);
	{
		static const char *const bad[] = {
			"", "-foo", "foo[", "foo >=x", "foo; bad marker", "foo (>=1", "foo @",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			err = NULL;
			if (xl_req_parse(bad[i], strlen(bad[i]), &r, &err) == 0)
				fail_msg("requirement '%s' should not parse", bad[i]);
			free(err);
		}
	}
	s = xl_pkg_key("Torch__XLA.-nightly");
	assert_string_equal(s, "torch-xla-nightly");
	free(s);
}

static void load_meta(const char *file, struct xl_dist *d)
{
	size_t len;
	char *data = xl_read_file(src_path(file), &len, 0);

	if (!data)
		fail_msg("%s: %s", file, strerror(errno));
	if (xl_metadata_parse(data, len, d) < 0)
		fail_msg("%s should parse", file);
	free(data);
}

static const struct xl_req *find_req(const struct xl_dist *d, const char *key, const char *extra)
{
	struct xl_marker_env env;

	xl_marker_env_host(&env, "3.13.1");
	env.sys_platform = "linux";
	env.platform_system = "Linux";
	env.platform_machine = "x86_64";
	for (size_t i = 0; i < d->nreqs; i++) {
		char *err = NULL;
		int m;

		if (strcmp(d->reqs[i].key, key))
			continue;
		m = d->reqs[i].marker ? xl_marker_eval(d->reqs[i].marker, &env, extra, &err) : 1;
		free(err);
		if (m == 1 && (!extra || xl_marker_uses_extra(d->reqs[i].marker)))
			return &d->reqs[i];
	}
	return NULL;
}

static void test_real_metadata(void **state)
{
	struct xl_dist d;
	const struct xl_req *r;
	char *s;

	(void)state;
	load_meta("tests/data/bundle/jax-0.12.0.METADATA", &d);
	assert_string_equal(d.key, "jax");
	assert_string_equal(d.v.norm, "0.12.0");
	assert_string_equal(d.requires_python, ">=3.12");
	assert_true(xl_strv_contains(&d.extras, "tpu"));
	assert_int_equal(d.problems.n, 0);
	r = find_req(&d, "libtpu", "tpu");
	assert_non_null(r);
	s = xl_specset_str(&r->spec);
	assert_string_equal(s, "==0.0.50.*");
	free(s);
	assert_null(find_req(&d, "libtpu", NULL));    /* only under [tpu] */
	xl_dist_release(&d);

	load_meta("tests/data/bundle/torch_xla-2.9.0.METADATA", &d);
	assert_string_equal(d.key, "torch-xla");
	r = find_req(&d, "libtpu", "tpu");
	assert_non_null(r);
	s = xl_specset_str(&r->spec);
	assert_string_equal(s, "==0.0.21");
	free(s);
	assert_null(find_req(&d, "torch", NULL));     /* torch_xla declares no torch requirement */
	xl_dist_release(&d);

	load_meta("tests/data/bundle/torch-2.9.1.METADATA", &d);
	r = find_req(&d, "nvidia-cuda-runtime-cu12", NULL);
	assert_non_null(r);
	s = xl_specset_str(&r->spec);
	assert_string_equal(s, "==12.8.90");
	free(s);
	xl_dist_release(&d);

	load_meta("tests/data/bundle/jax_cuda13_plugin-0.12.0.METADATA", &d);
	assert_non_null(find_req(&d, "jax-cuda13-pjrt", NULL));
	assert_non_null(find_req(&d, "nvidia-cuda-runtime", "with-cuda"));
	xl_dist_release(&d);
}

static void test_odd_metadata(void **state)
{
	struct xl_dist d;
	static const char folded[] =
		"\xef\xbb\xbfMetadata-Version: 2.1\r\nName: Folded_Pkg\r\nVersion: 1.0\r\n"
		"Requires-Dist: numpy\r\n  >=2.0\r\nSummary: caf\xe9 latin-1 bytes\r\n"
		"this line is not a header\r\nRequires-Dist: ???\r\n\r\nRequires-Dist: ignored-body\r\n";
	/* "Name: u16\nVersion: 2\n" in UTF-16LE with its byte order mark */
	static const char u16[] = "\xff\xfeN\0a\0m\0e\0:\0 \0u\0\x31\0\x36\0\n\0V\0e\0r\0s\0i\0o\0n\0:\0 \0\x32\0\n\0";

	(void)state;
	assert_int_equal(xl_metadata_parse(folded, sizeof(folded) - 1, &d), 0);
	assert_string_equal(d.key, "folded-pkg");
	assert_int_equal(d.nreqs, 1);     /* folded line joined; the body is not read */
	assert_string_equal(d.reqs[0].key, "numpy");
	assert_int_equal(d.reqs[0].spec.n, 1);
	assert_int_equal(d.problems.n, 2);  /* the stray line and the bad Requires-Dist */
	xl_dist_release(&d);
	assert_int_equal(xl_metadata_parse(u16, sizeof(u16) - 1, &d), 0);
	assert_string_equal(d.name, "u16");
	assert_string_equal(d.v.norm, "2");
	xl_dist_release(&d);
	assert_int_equal(xl_metadata_parse("Name: x\n", 8, &d), -1);
	assert_true(d.problems.n >= 1);
	xl_dist_release(&d);
	assert_int_equal(xl_metadata_parse("Name: x\nVersion: not a version\n", 31, &d), 0);
	assert_false(d.version_ok);
	assert_int_equal(d.problems.n, 1);
	xl_dist_release(&d);
	assert_int_equal(xl_fuzz_metadata((const uint8_t *)"\xfe\xff\0N", 4), 0);
	assert_int_equal(xl_fuzz_marker((const uint8_t *)"extra == 'a' or (", 17), 0);
}

/* ---- the matrix -------------------------------------------------------------------- */

static void matrix_err(const char *yaml, const char *want)
{
	json_t *m = NULL;
	char *err = NULL;

	if (xl_bundle_matrix_parse(yaml, strlen(yaml), &m, &err) != XL_EX_DATAERR)
		fail_msg("matrix should be refused: %s", yaml);
	if (!err || !strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err ? err : "(null)", want);
	free(err);
}

static void test_matrix(void **state)
{
	json_t *m = NULL;

	(void)state;
	assert_int_equal(xl_bundle_matrix_load(src_path("etc/bundles.yaml"), &m), 0);
	assert_true(json_array_size(json_object_get(m, "bundles")) >= 8);
	json_decref(m);
	matrix_err("version: 1\nbundles:\n  - name: a\n    stauts: validated\n", "4:5: bundle: unknown key 'stauts'; did you mean 'status'?");
	matrix_err("version: 1\nbundles:\n  - name: a\n    status: fine\n    packages: {jax: '==1'}\n", "4:13: status 'fine'");
	matrix_err("version: 1\nbundles:\n  - name: a\n    status: validated\n    packages: {jax: '>=x'}\n", "5:21: jax:");
	matrix_err("version: 1\nbundles:\n  - name: a\n    status: validated\n", "'packages' is required");
	matrix_err("version: 2\n", "1:10: matrix: 'version: 1'");
	matrix_err("version: 1\nbundles: {}\n", "2:10: bundles must be a list");
	matrix_err("version: 1\nbundles:\n  - {name: a, status: validated, packages: {jax: '==1'}}\n"
		   "  - {name: a, status: broken, packages: {jax: '==2'}}\n", "4:5: bundle 'a' given twice");
	matrix_err("version: 1\nbundles:\n  - name: a\n    status: validated\n    packages: {jax: '==1'}\n"
		   "    known_bad: [{var: PATH, flag: x, reason: y}]\n", "known_bad: var must be");
	matrix_err("version: 1\nbundles:\n  - name: a\n    status: validated\n    packages: {jax: '==1'}\n"
		   "    known_issues: [{id: x, summary: y, workaround: {policy: pray, detail: z}}]\n",
		   "policy 'pray'");
	matrix_err("version: 1\nfeatures:\n  - name: f\n", "'requires' is required");
	matrix_err("version: 1\nbundles: [\n", "");
}

/* ---- rules over synthetic trees ---------------------------------------------------- */

struct tree {
	char dir[256];
	char site[300];
};

static void mkdist(struct tree *t, const char *name, const char *version, const char *extra_headers)
{
	char *d = xl_asprintf("%s/%s-%s.dist-info", t->site, name, version);
	char *f = xl_asprintf("%s/METADATA", d);
	FILE *fp;

	assert_int_equal(xl_mkdirs(d, 0755), 0);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fprintf(fp, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s\nlong description\n", name,
		version, extra_headers ? extra_headers : "");
	fclose(fp);
	free(d);
	free(f);
}

/* Copies a recorded METADATA into the tree under its own name and version. */
static void cpdist(struct tree *t, const char *file, const char *name, const char *version,
		   const char *as_version)
{
	size_t len;
	char *data = xl_read_file(src_path(file), &len, 0), *d, *f, *p;
	FILE *fp;

	assert_non_null(data);
	d = xl_asprintf("%s/%s-%s.dist-info", t->site, name, as_version ? as_version : version);
	f = xl_asprintf("%s/METADATA", d);
	assert_int_equal(xl_mkdirs(d, 0755), 0);
	fp = fopen(f, "w");
	assert_non_null(fp);
	if (as_version && (p = strstr(data, "\nVersion: "))) {
		char *nl = strchr(p + 1, '\n');

		fwrite(data, 1, (size_t)(p - data), fp);
		fprintf(fp, "\nVersion: %s", as_version);
		fputs(nl, fp);
	} else {
		fputs(data, fp);
	}
	fclose(fp);
	free(data);
	free(d);
	free(f);
}

static void tree_init(struct tree *t)
{
	snprintf(t->dir, sizeof(t->dir), "%s/xlb.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->site, sizeof(t->site), "%s/site", t->dir);
}

static void tree_free(struct tree *t)
{
	char *cmd = xl_asprintf("rm -rf '%s'", t->dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void jax_deps(struct tree *t)
{
	mkdist(t, "numpy", "2.4.6", NULL);
	mkdist(t, "ml_dtypes", "0.6.0", NULL);
	mkdist(t, "opt_einsum", "3.4.0", NULL);
	mkdist(t, "scipy", "1.17.1", NULL);
	mkdist(t, "requests", "2.34.2", NULL);
}

/* Runs the check over the tree with the given Python version and host. */
static json_t *check_tree(struct tree *t, const char *py, const struct xl_bundle_host *host,
			  int *vexit)
{
	struct xl_pyenv env;
	struct xl_strv dirs = XL_STRV_INIT;
	json_t *m = NULL, *rep;

	memset(&env, 0, sizeof(env));
	env.python = xl_strdup("python-under-test");
	env.version = xl_strdup(py);
	env.version_short = xl_strndup(py, 4);
	env.sys_platform = xl_strdup("linux");
	env.platform_system = xl_strdup("Linux");
	env.platform_machine = xl_strdup("x86_64");
	env.implementation = xl_strdup("cpython");
	xl_strv_push(&dirs, t->site);
	xl_pyenv_scan_dirs(&env, &dirs);
	xl_strv_release(&dirs);
	assert_int_equal(xl_bundle_matrix_load(src_path("etc/bundles.yaml"), &m), 0);
	rep = xl_bundle_check(&env, m, host, vexit);
	json_decref(m);
	xl_pyenv_release(&env);
	return rep;
}

static const struct xl_bundle_host no_host = { -1, NULL, NULL, NULL, NULL, NULL };

static int count_reason(json_t *rep, const char *rule, const char *sev, const char *needle)
{
	json_t *r;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(rep, "reasons"), i, r) {
		if (strcmp(json_string_value(json_object_get(r, "rule")), rule) == 0 &&
		    strcmp(json_string_value(json_object_get(r, "severity")), sev) == 0 &&
		    (!needle || strstr(json_string_value(json_object_get(r, "message")), needle)))
			n++;
	}
	return n;
}

#define EXPECT_REASON(rep, rule, sev, needle) do { \
	if (!count_reason(rep, rule, sev, needle)) { \
		char *dump = json_dumps(rep, JSON_INDENT(1)); \
		fail_msg("no %s %s reason with '%s' in %s", sev, rule, needle ? needle : "", dump); \
	} } while (0)

static const char *verdict(json_t *rep)
{
	return json_string_value(json_object_get(rep, "verdict"));
}

static void test_validated(void **state)
{
	struct tree t;
	json_t *rep;
	int vexit;

	(void)state;
	tree_init(&t);
	cpdist(&t, "tests/data/bundle/jax-0.10.2.METADATA", "jax", "0.10.2", NULL);
	cpdist(&t, "tests/data/bundle/jaxlib-0.10.2.METADATA", "jaxlib", "0.10.2", NULL);
	cpdist(&t, "tests/data/bundle/libtpu-0.0.42.1.METADATA", "libtpu", "0.0.42.1", NULL);
	jax_deps(&t);
	rep = check_tree(&t, "3.11.7", &no_host, &vexit);
	assert_string_equal(verdict(rep), "validated");
	assert_string_equal(json_string_value(json_object_get(rep, "bundle")), "jax010-tpu");
	assert_int_equal(json_integer_value(json_object_get(rep, "errors")), 0);
	assert_int_equal(vexit, 0);
	json_decref(rep);
	/* a missing dependency is a pip-check error */
	{
		char *cmd = xl_asprintf("rm -rf '%s/scipy-1.17.1.dist-info'", t.site);

		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	rep = check_tree(&t, "3.11.7", &no_host, &vexit);
	EXPECT_REASON(rep, "requires-dist", "error", "requires scipy >=1.14, which is not installed");
	assert_string_equal(verdict(rep), "incompatible");
	assert_int_equal(vexit, 1);
	json_decref(rep);
	/* Requires-Python */
	rep = check_tree(&t, "3.10.4", &no_host, &vexit);
	EXPECT_REASON(rep, "requires-python", "error", "jax 0.10.2 requires Python >=3.11");
	json_decref(rep);
	tree_free(&t);
}

static void test_lockstep(void **state)
{
	struct tree t;
	json_t *rep;
	int vexit;

	(void)state;
	/* jax / jaxlib */
	tree_init(&t);
	cpdist(&t, "tests/data/bundle/jax-0.10.2.METADATA", "jax", "0.10.2", NULL);
	cpdist(&t, "tests/data/bundle/jaxlib-0.10.2.METADATA", "jaxlib", "0.10.2", "0.9.0");
	jax_deps(&t);
	rep = check_tree(&t, "3.11.7", &no_host, &vexit);
	EXPECT_REASON(rep, "lockstep-jax", "error", "jaxlib 0.9.0 is outside the range jax 0.10.2 declares");
	assert_string_equal(verdict(rep), "incompatible");
	json_decref(rep);
	tree_free(&t);

	/* plugin / jaxlib */
	tree_init(&t);
	cpdist(&t, "tests/data/bundle/jax-0.12.0.METADATA", "jax", "0.12.0", NULL);
	mkdist(&t, "jaxlib", "0.12.0", NULL);
	cpdist(&t, "tests/data/bundle/jax_cuda13_plugin-0.12.0.METADATA", "jax_cuda13_plugin", "0.12.0", NULL);
	cpdist(&t, "tests/data/bundle/jax_cuda12_pjrt-0.12.0.METADATA", "jax_cuda12_pjrt", "0.12.0", "0.11.2");
	mkdist(&t, "jax_cuda13_pjrt", "0.11.2", NULL);
	jax_deps(&t);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	EXPECT_REASON(rep, "lockstep-jax-plugin", "error", "jax-cuda13-pjrt 0.11.2 must equal jaxlib 0.12.0");
	EXPECT_REASON(rep, "lockstep-jax-plugin", "error", "jax-cuda12-pjrt 0.11.2 must equal jaxlib 0.12.0");
	EXPECT_REASON(rep, "requires-dist", "error", "jax-cuda13-plugin 0.12.0 requires jax-cuda13-pjrt ==0.12.0; installed jax-cuda13-pjrt 0.11.2");
	assert_int_equal(count_reason(rep, "lockstep-jax-plugin", "error", "plugin"), 0);
	json_decref(rep);
	tree_free(&t);

	/* torch_xla / torch minor */
	tree_init(&t);
	mkdist(&t, "torch", "2.8.0", NULL);
	cpdist(&t, "tests/data/bundle/torch_xla-2.9.0.METADATA", "torch_xla", "2.9.0", NULL);
	mkdist(&t, "absl-py", "2.1.0", NULL);
	mkdist(&t, "numpy", "2.4.6", NULL);
	mkdist(&t, "pyyaml", "6.0.2", NULL);
	mkdist(&t, "requests", "2.34.2", NULL);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	EXPECT_REASON(rep, "lockstep-torch-xla", "error", "torch-xla 2.9.0 needs torch 2.9.*; installed torch 2.8.0");
	assert_string_equal(verdict(rep), "incompatible");
	json_decref(rep);
	tree_free(&t);
}

static void test_extras_and_matrix(void **state)
{
	struct tree t;
	json_t *rep;
	int vexit;

	(void)state;
	/* a present libtpu means jax[tpu]'s pin applies, which pip check never evaluates */
	tree_init(&t);
	cpdist(&t, "tests/data/bundle/jax-0.9.0.METADATA", "jax", "0.9.0", NULL);
	mkdist(&t, "jaxlib", "0.9.0", NULL);
	mkdist(&t, "libtpu", "0.0.36", NULL);
	jax_deps(&t);
	rep = check_tree(&t, "3.13.1", &no_host, &vexit);
	EXPECT_REASON(rep, "extras-pin", "error", "jax 0.9.0 [tpu] requires libtpu ==0.0.34.*; installed libtpu 0.0.36");
	assert_string_equal(verdict(rep), "incompatible");
	json_decref(rep);

	/* the custom TPU bundle: a known-issues bundle waives that pin */
	mkdist(&t, "torch", "2.9.0a0+git21fec65", NULL);
	mkdist(&t, "torch_xla", "2.9.0+gitc04e61c", "Requires-Dist: numpy\nRequires-Dist: libtpu==0.0.36; extra == \"tpu\"");
	rep = check_tree(&t, "3.13.1", &no_host, &vexit);
	assert_string_equal(verdict(rep), "known-issues");
	assert_string_equal(json_string_value(json_object_get(rep, "bundle")), "torch29-custom-tpu");
	EXPECT_REASON(rep, "extras-pin", "warning", "known issue libtpu-outside-jax-pin");
	EXPECT_REASON(rep, "known-issue", "warning", "persistent-cache-never-loads");
	EXPECT_REASON(rep, "known-issue", "warning", "capturable=True");
	EXPECT_REASON(rep, "known-issue", "warning", "assign=False");
	EXPECT_REASON(rep, "known-issue", "warning", "torch-compile-oom");
	assert_int_equal(vexit, 0);
	{
		json_t *f, *feats = json_object_get(rep, "features");
		size_t i;
		bool seen = false;

		json_array_foreach(feats, i, f)
			if (strcmp(json_string_value(json_object_get(f, "name")), "scan_layers") == 0) {
				seen = true;
				/* scan_layers ships from torch_xla 2.6.0 on */
				assert_true(json_is_true(json_object_get(f, "available")));
			}
		assert_true(seen);
	}
	json_decref(rep);
	/* the same packages on another Python do not match that bundle */
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	assert_string_equal(verdict(rep), "incompatible");
	json_decref(rep);
	tree_free(&t);

	/* a broken bundle */
	tree_init(&t);
	mkdist(&t, "torch", "2.9.1", NULL);
	mkdist(&t, "torch_xla", "2.8.0", NULL);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	EXPECT_REASON(rep, "matrix", "error", "matches bundle torch29-xla28 (broken)");
	EXPECT_REASON(rep, "known-issue", "error", "undefined-symbol");
	assert_string_equal(verdict(rep), "incompatible");
	assert_int_equal(vexit, 1);
	json_decref(rep);
	tree_free(&t);

	/* a broken metadata file is reported, not fatal */
	tree_init(&t);
	mkdist(&t, "numpy", "2.4.6", NULL);
	{
		char *d = xl_asprintf("%s/bad-1.0.dist-info", t.site), *f = xl_asprintf("%s/METADATA", d);
		FILE *fp;

		assert_int_equal(xl_mkdirs(d, 0755), 0);
		fp = fopen(f, "w");
		fputs("Name: bad\n", fp);
		fclose(fp);
		free(d);
		free(f);
	}
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	EXPECT_REASON(rep, "metadata", "warning", "no Version header");
	assert_string_equal(verdict(rep), "compatible");
	json_decref(rep);
	tree_free(&t);
}

static void test_cuda_floor(void **state)
{
	struct tree t;
	struct xl_bundle_host h = { -1, NULL, NULL, NULL, NULL, NULL };
	json_t *rep;
	int vexit;

	(void)state;
	tree_init(&t);
	mkdist(&t, "nvidia-cuda-runtime-cu12", "12.8.90", NULL);
	h.nvidia_module = "470.82.01";
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	EXPECT_REASON(rep, "cuda-driver-floor", "error", "CUDA runtime 12.8.90 (nvidia-cuda-runtime-cu12) needs NVIDIA driver 525 or newer; the driver is 470.82.01");
	json_decref(rep);
	h.nvidia_module = "535.104.05";
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	assert_int_equal(count_reason(rep, "cuda-driver-floor", "error", NULL), 0);
	json_decref(rep);
	h.nvidia_module = NULL;
	h.cuda_driver_api = 11080;
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	EXPECT_REASON(rep, "cuda-driver-floor", "error", "the driver supports CUDA 11.8");
	json_decref(rep);
	h.cuda_driver_api = -1;
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	EXPECT_REASON(rep, "cuda-driver-floor", "note", "no CUDA driver was found");
	assert_int_equal(vexit, 0);
	json_decref(rep);
	tree_free(&t);
	/* CUDA 13 needs 580 */
	tree_init(&t);
	mkdist(&t, "nvidia-cuda-runtime", "13.0.48", NULL);
	h.nvidia_module = "575.51.03";
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	EXPECT_REASON(rep, "cuda-driver-floor", "error", "needs NVIDIA driver 580 or newer");
	json_decref(rep);
	tree_free(&t);
}

/* The driver version texts of both kernel module flavours, read as files
 * (tests/data/nvidia), then the floor they set for a CUDA 13 runtime. */
static void test_nvidia_driver(void **state)
{
	static const struct { const char *text, *want; } odd[] = {
		{ "", NULL },
		{ "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64\n", NULL },
		{ "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build\n",
		  "580.95.05" },
		{ "GCC version:  gcc version 12.3.0\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed\n",
		  "390.157" },
		{ "garbage 1.2\n", NULL },
		{ "  535.104.05  \n", "535.104.05" },
		{ "580\n", NULL },
		{ "580.159.04", "580.159.04" },
	};
	static const struct { const char *file, *want; } files[] = {
		{ "tests/data/nvidia/proc-version-550-proprietary", "550.54.15" },
		{ "tests/data/nvidia/proc-version-580-open", "580.159.04" },
		{ "tests/data/nvidia/sys-version-580", "580.159.04" },
	};
	struct tree t;
	struct xl_bundle_host h = { -1, NULL, NULL, NULL, NULL, NULL };
	json_t *rep;
	char *v, *root;
	int vexit;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *text = xl_read_file(src_path(files[i].file), &len, 0);

		assert_non_null(text);
		v = xl_nvidia_driver_parse(text, len);
		if (!v || strcmp(v, files[i].want))
			fail_msg("%s: read '%s', expected %s", files[i].file, v ? v : "(none)",
				 files[i].want);
		free(v);
		free(text);
	}
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		v = xl_nvidia_driver_parse(odd[i].text, strlen(odd[i].text));
		if (odd[i].want ? !v || strcmp(v, odd[i].want) : v != NULL)
			fail_msg("'%s': read '%s', expected %s", odd[i].text, v ? v : "(none)",
				 odd[i].want ? odd[i].want : "none");
		free(v);
	}
	/* the fuzz entry point on the seeds' kind of text and on hostile bytes */
	assert_int_equal(xl_fuzz_nvidia((const uint8_t *)"580.159.04\n", 11), 1);
	assert_int_equal(xl_fuzz_nvidia((const uint8_t *)"NVRM version: 5.\0" "1 x", 19), 0);
	assert_int_equal(xl_fuzz_nvidia((const uint8_t *)"NVRM version:", 13), 0);
	assert_int_equal(xl_fuzz_nvidia((const uint8_t *)"\n\n1.2", 5), 0);
	/* the host read: /sys/module first, /proc after, under XLAUNCH_HOST_ROOT */
	tree_init(&t);
	root = xl_asprintf("%s/root", t.dir);
	{
		char *cmd = xl_asprintf("mkdir -p '%s/proc/driver/nvidia' '%s/sys/module/nvidia' && "
					"cp '%s' '%s/proc/driver/nvidia/version'", root, root,
					src_path("tests/data/nvidia/proc-version-580-open"), root);

		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	setenv("XLAUNCH_HOST_ROOT", root, 1);
	xl_bundle_host_read(&h);
	assert_non_null(h.nvidia_module);
	assert_string_equal(h.nvidia_module, "580.159.04");
	xl_bundle_host_release(&h);
	{
		char *f = xl_asprintf("%s/sys/module/nvidia/version", root);
		FILE *fp = fopen(f, "w");

		assert_non_null(fp);
		fputs("575.57.08\n", fp);
		fclose(fp);
		free(f);
	}
	xl_bundle_host_read(&h);
	assert_string_equal(h.nvidia_module, "575.57.08");
	xl_bundle_host_release(&h);
	unsetenv("XLAUNCH_HOST_ROOT");
	free(root);
	/* CUDA 13 needs 580: the open module's 580 passes, 550 does not */
	h.cuda_driver_api = -1;
	mkdist(&t, "nvidia-cuda-runtime", "13.0.96", NULL);
	h.nvidia_module = "580.159.04";
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	assert_int_equal(count_reason(rep, "cuda-driver-floor", "error", NULL), 0);
	assert_string_equal(verdict(rep), "compatible");
	assert_int_equal(vexit, 0);
	json_decref(rep);
	h.nvidia_module = "550.54.15";
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	EXPECT_REASON(rep, "cuda-driver-floor", "error", "CUDA runtime 13.0.96 (nvidia-cuda-runtime) needs NVIDIA driver 580 or newer; the driver is 550.54.15");
	assert_string_equal(verdict(rep), "incompatible");
	assert_int_equal(vexit, 1);
	json_decref(rep);
	/* 12.x needs 525: 550 passes */
	{
		char *cmd = xl_asprintf("rm -rf '%s'/nvidia-cuda-runtime-13.0.96.dist-info", t.site);

		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	mkdist(&t, "nvidia-cuda-runtime-cu12", "12.8.90", NULL);
	rep = check_tree(&t, "3.12.3", &h, &vexit);
	assert_int_equal(count_reason(rep, "cuda-driver-floor", "error", NULL), 0);
	json_decref(rep);
	tree_free(&t);
}

/* Nothing of the ML lane: the verdict is empty, never a pass, and the
 * report says where the interpreter looked. */
static void test_empty(void **state)
{
	struct tree t;
	json_t *rep, *r;
	size_t i;
	int vexit, seen = 0;

	(void)state;
	tree_init(&t);
	assert_int_equal(xl_mkdirs(t.site, 0755), 0);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	assert_string_equal(verdict(rep), "empty");
	assert_int_equal(vexit, XL_EX_EMPTY);
	assert_int_equal(json_integer_value(json_object_get(rep, "installed_count")), 0);
	assert_int_equal(json_integer_value(json_object_get(rep, "lane_count")), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(rep, "site_dirs"), 0)), t.site);
	EXPECT_REASON(rep, "empty", "error", "no installed package was found");
	EXPECT_REASON(rep, "empty", "error", t.site);
	json_decref(rep);
	/* packages, none of the lane */
	mkdist(&t, "six", "1.17.0", NULL);
	mkdist(&t, "requests", "2.34.2", NULL);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	assert_string_equal(verdict(rep), "empty");
	assert_int_equal(vexit, XL_EX_EMPTY);
	EXPECT_REASON(rep, "empty", "error", "none of the 2 installed packages is of the ML lane");
	json_decref(rep);
	/* even an error found elsewhere (the CUDA toolkit against an old
	 * driver) leaves it empty: nothing of the lane was checked */
	{
		struct xl_bundle_host h = { -1, NULL, NULL, NULL, NULL, NULL };

		h.nvidia_module = "470.82.01";
		h.cuda_toolkit = "12.4.1";
		rep = check_tree(&t, "3.12.3", &h, &vexit);
		assert_string_equal(verdict(rep), "empty");
		assert_int_equal(vexit, XL_EX_EMPTY);
		EXPECT_REASON(rep, "cuda-driver-floor", "error", "needs NVIDIA driver 525");
		json_decref(rep);
	}
	/* one lane package makes it a check */
	mkdist(&t, "numpy", "2.4.6", NULL);
	rep = check_tree(&t, "3.12.3", &no_host, &vexit);
	assert_string_equal(verdict(rep), "compatible");
	assert_int_equal(vexit, 0);
	assert_int_equal(json_integer_value(json_object_get(rep, "lane_count")), 1);
	json_array_foreach(json_object_get(rep, "reasons"), i, r)
		seen += strcmp(json_string_value(json_object_get(r, "rule")), "empty") == 0;
	assert_int_equal(seen, 0);
	json_decref(rep);
	tree_free(&t);
}

/* The gate and the known-bad flags, through a real interpreter in a
 * synthetic venv and a matrix in a data directory of our own. */
static void test_gate(void **state)
{
	struct tree t;
	struct xl_pyenv host_py;
	struct xl_strv names = XL_STRV_INIT;
	json_t *bad = NULL;
	char *venv, *bin, *py, *cfg, *etc, *mx, *why = NULL;
	FILE *fp;
	int r;

	(void)state;
	if (xl_pyenv_open(NULL, 0, &host_py) != 0) {
		fprintf(stderr, "SKIP: no python3 on PATH to stand in a synthetic venv\n");
		skip();
		return;
	}
	tree_init(&t);
	venv = xl_asprintf("%s/venv", t.dir);
	bin = xl_asprintf("%s/bin", venv);
	py = xl_asprintf("%s/python", bin);
	cfg = xl_asprintf("%s/pyvenv.cfg", venv);
	assert_int_equal(xl_mkdirs(bin, 0755), 0);
	assert_int_equal(symlink(host_py.executable, py), 0);
	fp = fopen(cfg, "w");
	fputs("include-system-site-packages = false\n", fp);
	fclose(fp);
	snprintf(t.site, sizeof(t.site), "%s/lib/python%s/site-packages", venv, host_py.version_short);
	cpdist(&t, "tests/data/bundle/jax-0.10.2.METADATA", "jax", "0.10.2", NULL);
	cpdist(&t, "tests/data/bundle/jaxlib-0.10.2.METADATA", "jaxlib", "0.10.2", NULL);
	mkdist(&t, "libtpu", "0.0.42.1", NULL);
	jax_deps(&t);
	etc = xl_asprintf("%s/data/etc", t.dir);
	mx = xl_asprintf("%s/bundles.yaml", etc);
	assert_int_equal(xl_mkdirs(etc, 0755), 0);
	fp = fopen(mx, "w");
	fputs("version: 1\nbundles:\n"
	      "  - name: t-jax\n    status: validated\n    packages: {jax: '==0.10.*', libtpu: '==0.0.42.*'}\n"
	      "    known_bad:\n      - {var: LIBTPU_INIT_ARGS, flag: xla_tpu_enable_async_collective_fusion, value: 'true', reason: NaN}\n"
	      "      - {var: XLA_FLAGS, flag: xla_gpu_enable_x, reason: any value is bad}\n"
	      "  - name: t-torch\n    status: validated\n    packages: {torch: '==2.9.*'}\n", fp);
	fclose(fp);
	{
		char *dd = xl_asprintf("%s/data", t.dir);

		setenv("XLAUNCH_DATADIR", dd, 1);
		free(dd);
	}
	xl_strv_push(&names, "t-jax");
	r = xl_bundle_gate(py, NULL, &names, &bad, &why);
	if (r != 0)
		fail_msg("gate t-jax: %d %s", r, why ? why : "");
	assert_null(why);
	/* the flags the matrix records as bad on the matched bundle */
	assert_int_equal(json_array_size(bad), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(bad, 0), "flag")),
			    "xla_tpu_enable_async_collective_fusion");
	assert_string_equal(json_string_value(json_object_get(json_array_get(bad, 0), "bundle")), "t-jax");
	assert_true(json_is_null(json_object_get(json_array_get(bad, 1), "value")));
	json_decref(bad);
	xl_strv_release(&names);
	xl_strv_push(&names, "t-torch");
	assert_int_equal(xl_bundle_gate(py, NULL, &names, &bad, &why), XL_EX_NOPERM);
	assert_null(bad);
	assert_non_null(why);
	assert_non_null(strstr(why, "is not one of t-torch"));
	free(why);
	xl_strv_push(&names, "t-nope");
	assert_int_equal(xl_bundle_gate(py, NULL, &names, &bad, &why), XL_EX_DATAERR);
	assert_null(bad);
	assert_non_null(strstr(why, "'t-nope' is not in the bundle matrix"));
	free(why);
	xl_strv_release(&names);
	/* an empty environment is refused as such, naming where it looked */
	{
		char *cmd = xl_asprintf("rm -rf '%s'/*", t.site);

		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	xl_strv_push(&names, "t-jax");
	assert_int_equal(xl_bundle_gate(py, NULL, &names, &bad, &why), XL_EX_NOPERM);
	assert_null(bad);
	assert_non_null(why);
	if (!strstr(why, "the installed bundle is empty: no installed package was found") ||
	    !strstr(why, t.site) || !strstr(why, "it is not one of t-jax"))
		fail_msg("empty gate: %s", why);
	free(why);
	xl_strv_release(&names);
	unsetenv("XLAUNCH_DATADIR");
	xl_pyenv_release(&host_py);
	free(venv);
	free(bin);
	free(py);
	free(cfg);
	free(etc);
	free(mx);
	tree_free(&t);
}

/* The bundle cache read back: a block of fresh times gives its summary, a
 * site directory touched since (pip), another format or another value of
 * a site variable (PYTHONPATH) gives none. */
static void test_cache_entry(void **state)
{
	char *py, *site, *text, mt[2][64];
	struct stat st;
	json_t *s;

	(void)state;
	assert_int_equal(xl_test_dir_setup(NULL), 0);
	py = xl_test_write("v/bin/python", "#!/bin/sh\n");
	site = xl_test_path("v/lib/site-packages");
	assert_int_equal(xl_mkdirs(site, 0755), 0);
	assert_int_equal(stat(py, &st), 0);
	snprintf(mt[0], sizeof(mt[0]), "%lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	assert_int_equal(stat(site, &st), 0);
	snprintf(mt[1], sizeof(mt[1]), "%lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	text = xl_asprintf("xlaunch-bundle-cache\t4\npython\t/other\t\t\t\t\t1.0\ndir\t/x\t1.0\nversion\t3.12\nend\n"
			   "python\t%s\t/pp\t\t1\t\t%s\ndir\t%s\t%s\nversion\t3.11.7\npackage\tjaxlib\t0.6.2\nend\n",
			   py, mt[0], site, mt[1]);
	s = xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t1\t", true);
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(s, "python")), "3.11.7");
	assert_string_equal(json_string_value(json_object_get(json_object_get(s, "packages"), "jaxlib")), "0.6.2");
	json_decref(s);
	/* another interpreter's block is not this one's */
	assert_null(xl_bundle_cache_entry(text, strlen(text), "/nowhere/python", "/pp\t\t1\t", true));
	/* nor is the same interpreter's under other site variables */
	assert_null(xl_bundle_cache_entry(text, strlen(text), py, "\t\t\t", true));
	assert_null(xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t\t", true));
	assert_null(xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t1\t/ub", true));
	assert_null(xl_bundle_cache_entry(text, strlen(text), py, NULL, true));
	/* another format (3 keyed by the path alone): read again */
	text[strlen("xlaunch-bundle-cache\t")] = '3';
	assert_null(xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t1\t", true));
	text[strlen("xlaunch-bundle-cache\t")] = '4';
	/* pip touched the site directory since */
	{
		struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

		assert_int_equal(utimensat(AT_FDCWD, site, ts, 0), 0);
		assert_null(xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t1\t", true));
	}
	/* unchecked (the fuzz entry): the summary as written */
	s = xl_bundle_cache_entry(text, strlen(text), py, "/pp\t\t1\t", false);
	assert_non_null(s);
	json_decref(s);
	free(text);
	free(py);
	free(site);
	xl_test_dir_teardown(NULL);
}

/* An executable file at xl_test_dir/name; caller frees. */
static char *exe(const char *name, const char *text)
{
	char *p = xl_test_write(name, text);

	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

/* A pyenv shim is followed to the interpreter it will run: PYENV_VERSION,
 * else the nearest .python-version from the working directory up (a
 * prefix taking the newest installed release), else ROOT/version; "system"
 * is the name on PATH without the shims.  A relative interpreter is made
 * absolute against the working directory, its links kept. */
static void test_pyenv_shim(void **state)
{
	char cwd[4096], *shim, *v1, *v2, *sys, *root, *shims, *sysdir, *path_env, *got, *why;
	char *proj, *link;
	const char *source;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(xl_test_dir_setup(NULL), 0);
	shim = exe("pyenv/shims/python3", "#!/usr/bin/env bash\nexec \"/x/libexec/pyenv\" exec \"$program\" \"$@\"\n");
	v1 = exe("pyenv/versions/3.99.1/bin/python3", "#!/bin/sh\n");
	v2 = exe("pyenv/versions/3.98.0/bin/python3", "#!/bin/sh\n");
	sys = exe("sys/python3", "#!/bin/sh\n");
	free(xl_test_write("pyenv/version", "3.98.0\n"));
	root = xl_test_path("pyenv");
	shims = xl_test_path("pyenv/shims");
	sysdir = xl_test_path("sys");
	path_env = xl_asprintf("PATH=%s:%s", shims, sysdir);
	{
		char *with_version[] = { path_env, (char *)"PYENV_VERSION=3.99.1", NULL };
		char *system[] = { path_env, (char *)"PYENV_VERSION=system", NULL };
		char *missing[] = { path_env, (char *)"PYENV_VERSION=3.97.0:3.98.0", NULL };
		char *plain[] = { path_env, NULL };

		got = xl_pyenv_shim_target(shim, with_version);
		assert_non_null(got);
		assert_string_equal(got, v1);
		free(got);
		got = xl_pyenv_shim_target(shim, system);
		assert_string_equal(got, sys);
		free(got);
		/* the first selected version that has the program */
		got = xl_pyenv_shim_target(shim, missing);
		assert_string_equal(got, v2);
		free(got);
		/* python3 on that PATH is the shim: followed */
		assert_int_equal(xl_python_find(NULL, with_version, &got, &source, &why), 0);
		assert_string_equal(source, "PATH");
		assert_string_equal(got, v1);
		free(got);
		/* the nearest .python-version, a prefix and a comment in it */
		free(xl_test_write("proj/.python-version", "# pinned\n3.99\n"));
		proj = xl_test_path("proj/sub");
		assert_int_equal(xl_mkdirs(proj, 0755), 0);
		assert_int_equal(chdir(proj), 0);
		got = xl_pyenv_shim_target(shim, plain);
		assert_string_equal(got, v1);
		free(got);
		/* else ROOT/version */
		assert_int_equal(chdir(root), 0);
		got = xl_pyenv_shim_target(shim, plain);
		assert_string_equal(got, v2);
		free(got);
		/* no shim: another directory, or not pyenv's script */
		assert_null(xl_pyenv_shim_target(v1, plain));
		assert_null(xl_pyenv_shim_target(sys, plain));
		/* a relative --python: absolute against the working directory,
		 * the path kept as written (no link resolved) */
		assert_int_equal(chdir(xl_test_dir), 0);
		link = xl_test_path("sys/python");
		assert_int_equal(symlink(sys, link), 0);
		free(link);
		assert_int_equal(xl_python_find("sys/python", plain, &got, &source, &why), 0);
		free(why);
		why = xl_asprintf("%s/sys/python", xl_test_dir);
		assert_string_equal(got, why);
		free(got);
		free(why);
		/* a directory is no interpreter */
		assert_int_equal(xl_python_find(sysdir, plain, &got, &source, &why), XL_EX_NOINPUT);
		assert_non_null(strstr(why, "not a Python interpreter (a directory)"));
		free(why);
		free(proj);
	}
	assert_int_equal(chdir(cwd), 0);
	free(shim);
	free(v1);
	free(v2);
	free(sys);
	free(root);
	free(shims);
	free(sysdir);
	free(path_env);
	xl_test_dir_teardown(NULL);
}

/* The summary under the job's environment: PYTHONPATH changes what the
 * interpreter's site finds and is part of the cache's key; an interpreter
 * behind a script is read but never cached; a program that is no Python
 * says so. */
static void test_summary_env(void **state)
{
	struct xl_pyenv host_py;
	char *pp, *meta, *pp_env, *state_env, *wrapper, *text, *why = NULL;
	size_t len;
	json_t *s;

	(void)state;
	if (xl_pyenv_open(NULL, XL_PYENV_QUIET | XL_PYENV_PATHS, &host_py) != 0 ||
	    !xl_is_elf(host_py.executable)) {
		fprintf(stderr, "SKIP: no python3 on PATH, or it is a script (a shim), not the interpreter\n");
		xl_pyenv_release(&host_py);
		skip();
		return;
	}
	assert_int_equal(xl_test_dir_setup(NULL), 0);
	meta = xl_test_write("pp/jaxlib-0.6.2.dist-info/METADATA",
			     "Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.6.2\n");
	pp = xl_test_path("pp");
	pp_env = xl_asprintf("PYTHONPATH=%s", pp);
	state_env = xl_test_path("state");
	setenv("XDG_STATE_HOME", state_env, 1);
	{
		char *with[] = { pp_env, (char *)"PYTHONNOUSERSITE=1", NULL };
		char *without[] = { (char *)"PYTHONNOUSERSITE=1", NULL };

		s = xl_bundle_summary_env(host_py.executable, with, NULL);
		assert_non_null(s);
		assert_string_equal(json_string_value(json_object_get(json_object_get(s, "packages"), "jaxlib")),
				    "0.6.2");
		json_decref(s);
		s = xl_bundle_summary_env(host_py.executable, without, NULL);
		assert_non_null(s);
		assert_null(json_object_get(json_object_get(s, "packages"), "jaxlib"));
		json_decref(s);
		/* two blocks, each found by its own key */
		free(state_env);
		state_env = xl_test_path("state/xlaunch/bundle-cache");
		text = xl_read_file(state_env, &len, 0);
		assert_non_null(text);
		why = xl_bundle_env_key(with);
		s = xl_bundle_cache_entry(text, len, host_py.executable, why, true);
		assert_non_null(json_object_get(json_object_get(s, "packages"), "jaxlib"));
		json_decref(s);
		free(why);
		why = xl_bundle_env_key(without);
		s = xl_bundle_cache_entry(text, len, host_py.executable, why, true);
		assert_non_null(s);
		assert_null(json_object_get(json_object_get(s, "packages"), "jaxlib"));
		json_decref(s);
		free(why);
		free(text);
		/* a wrapper script: read, not cached */
		text = xl_asprintf("#!/bin/sh\nexec '%s' \"$@\"\n", host_py.executable);
		wrapper = exe("wrap/python3", text);
		free(text);
		s = xl_bundle_summary_env(wrapper, with, NULL);
		assert_non_null(json_object_get(json_object_get(s, "packages"), "jaxlib"));
		json_decref(s);
		text = xl_read_file(state_env, &len, 0);
		assert_null(strstr(text, wrapper));
		free(text);
		free(wrapper);
		/* no Python: no summary, and why */
		wrapper = exe("wrap/true", "#!/bin/sh\nexit 0\n");
		assert_null(xl_bundle_summary_env(wrapper, without, &why));
		assert_non_null(strstr(why, "not a Python interpreter"));
		free(why);
		free(wrapper);
	}
	unsetenv("XDG_STATE_HOME");
	free(state_env);
	free(pp_env);
	free(pp);
	free(meta);
	xl_pyenv_release(&host_py);
	xl_test_dir_teardown(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_requirements),
		cmocka_unit_test(test_real_metadata),
		cmocka_unit_test(test_odd_metadata),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_validated),
		cmocka_unit_test(test_lockstep),
		cmocka_unit_test(test_extras_and_matrix),
		cmocka_unit_test(test_cuda_floor),
		cmocka_unit_test(test_nvidia_driver),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_cache_entry),
		cmocka_unit_test(test_pyenv_shim),
		cmocka_unit_test(test_summary_env),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
