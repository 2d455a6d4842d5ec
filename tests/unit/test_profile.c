/* test_profile.c - tokenizer, flag maps, expansion, quoting, resolution. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/profile/profile.h"
#include "launcher/profile/layer.h"

static void write_profile(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.yaml", xl_test_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_dir(void **state)
{
	xl_verbosity = -1; /* errors still print; warnings do not */
	return xl_test_dir_setup(state);
}

static struct xl_ctx ctx_for_tmp(void)
{
	struct xl_ctx c;

	memset(&c, 0, sizeof(c));
	c.profile_path = xl_test_dir;
	return c;
}

/* ---- tokenizer ---------------------------------------------------------- */

static void test_tokenize_basic(void **state)
{
	struct xl_tokens t;
	char *err;

	(void)state;
	assert_true(xl_flags_tokenize("  --a=1\t--b   --c=x=y -d=2 ", &t, &err));
	assert_int_equal(t.n, 4);
	assert_string_equal(t.v[0].name, "a");
	assert_string_equal(t.v[0].value, "1");
	assert_string_equal(t.v[1].name, "b");
	assert_null(t.v[1].value);
	assert_string_equal(t.v[2].value, "x=y");
	assert_true(t.v[3].single_dash);
	assert_int_equal(t.v[3].offset, 22);
	xl_tokens_release(&t);
}

static void test_tokenize_quoted(void **state)
{
	struct xl_tokens t;
	char *err;

	(void)state;
	assert_true(xl_flags_tokenize("--xla_dump_hlo_pass_re=\"a b|c\" --n='x y' --e=\"\"", &t, &err));
	assert_int_equal(t.n, 3);
	assert_string_equal(t.v[0].value, "a b|c");
	assert_true(t.v[0].quoted);
	assert_string_equal(t.v[1].value, "x y");
	assert_string_equal(t.v[2].value, "");
	xl_tokens_release(&t);
	/* as XLA reads it: a quote left open runs to the end; a word starts
	 * right after a closing quote; a backslash in double quotes escapes */
	assert_true(xl_flags_tokenize("--a=\"open --b", &t, &err));
	assert_int_equal(t.n, 1);
	assert_string_equal(t.v[0].value, "open --b");
	xl_tokens_release(&t);
	assert_true(xl_flags_tokenize("--a='x'--b=\"q\\\"r\"", &t, &err));
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[0].value, "x");
	assert_string_equal(t.v[1].name, "b");
	assert_string_equal(t.v[1].value, "q\"r");
	assert_int_equal(t.v[1].offset, 7);
	xl_tokens_release(&t);
}

static void test_tokenize_bare(void **state)
{
	struct xl_tokens t;
	char *err;

	(void)state;
	assert_true(xl_flags_tokenize("--a=1 TPU_MEGACORE=MEGACORE_DENSE --b", &t, &err));
	assert_int_equal(t.n, 3);
	assert_int_equal(t.v[1].kind, XL_TOK_BARE);
	assert_string_equal(t.v[1].name, "TPU_MEGACORE");
	assert_string_equal(t.v[1].value, "MEGACORE_DENSE");
	xl_tokens_release(&t);
}

static void test_flagmap_merge_and_format(void **state)
{
	struct xl_flagmap m = { NULL, 0, 0 };
	struct xl_prov a = { "a.yaml", 1, 1 }, b = { "b.yaml", 2, 3 };
	char *err = NULL, *s;

	(void)state;
	assert_true(xl_flagmap_parse(&m, "--x=1 --y --z=\"p q\"", a, &err));
	xl_flagmap_set(&m, "x", "2", b);          /* replaced in place */
	assert_true(xl_flagmap_del(&m, "y"));
	assert_false(xl_flagmap_del(&m, "nope"));
	xl_flagmap_set(&m, "w", NULL, b);         /* bare boolean appended */
	s = xl_flagmap_format(&m);
	assert_string_equal(s, "--x=2 --z=\"p q\" --w");
	assert_string_equal(xl_flagmap_get(&m, "x")->src.file, "b.yaml");
	assert_int_equal(xl_flagmap_get(&m, "z")->src.line, 1);
	/* the formatted string parses back to the same map */
	struct xl_flagmap m2 = { NULL, 0, 0 };
	char *s2;

	assert_true(xl_flagmap_parse(&m2, s, a, &err));
	s2 = xl_flagmap_format(&m2);
	assert_string_equal(s, s2);
	free(s);
	free(s2);
	xl_flagmap_release(&m);
	xl_flagmap_release(&m2);
	assert_false(xl_flagmap_parse(&m, "--a=1 oops --b=2", a, &err));
	assert_non_null(strstr(err, "'oops'"));
	free(err);
	xl_flagmap_release(&m);
}

/* A flags file named by the value of XLA_FLAGS is read in its place, each
 * token placed in the file; list-valued flags build up within one value
 * and are replaced whole by a later layer. */
static void test_flagmap_read_file_and_lists(void **state)
{
	struct xl_flagmap m = { NULL, 0, 0 };
	struct xl_strv paths = XL_STRV_INIT;
	struct xl_prov a = { "a.yaml", 3, 14 }, b = { "b.yaml", 7, 5 }, at;
	char path[512], bad[512], *err = NULL, *s;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/flags.txt", xl_test_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("--xla_gpu_autotune_level=1\n--xla_disable_hlo_passes=a\n"
	      "  --xla_dump_to=\"/tmp/d x\"  --xla_disable_hlo_passes=b\n"
	      "--xla_gpu_autotune_level=2\n", f);
	fclose(f);
	assert_true(xl_flagmap_read(&m, "XLA_FLAGS", path, a, &paths, &at, &err));
	assert_null(err);
	/* the list keeps both tokens; the plain flag set twice keeps the last */
	s = xl_flagmap_format(&m);
	assert_string_equal(s, "--xla_gpu_autotune_level=2 --xla_disable_hlo_passes=a "
			       "--xla_dump_to=\"/tmp/d x\" --xla_disable_hlo_passes=b");
	free(s);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.v[0].src.file, path);
	assert_int_equal(m.v[0].src.line, 4);         /* the last setting */
	assert_int_equal(m.v[2].src.line, 3);
	assert_int_equal(m.v[2].src.col, 3);
	assert_int_equal(m.v[3].src.line, 3);
	assert_int_equal(m.v[3].src.col, 29);
	assert_null(m.v[1].prev.file);
	/* a later layer replaces the whole list and says where it was set */
	assert_true(xl_flagmap_read(&m, "XLA_FLAGS", "--xla_disable_hlo_passes=c --xla_gpu_autotune_level=4",
				    b, &paths, &at, &err));
	s = xl_flagmap_format(&m);
	assert_string_equal(s, "--xla_gpu_autotune_level=4 --xla_disable_hlo_passes=c --xla_dump_to=\"/tmp/d x\"");
	free(s);
	assert_string_equal(xl_flagmap_get(&m, "xla_disable_hlo_passes")->prev.file, path);
	assert_int_equal(xl_flagmap_get(&m, "xla_disable_hlo_passes")->prev.line, 2);
	assert_null(xl_flagmap_get(&m, "xla_gpu_autotune_level")->prev.file);  /* not a list */
	/* repeated inline, then deleted: every entry goes */
	assert_true(xl_flagmap_read(&m, "XLA_FLAGS", "--xla_disable_hlo_passes=d --xla_disable_hlo_passes=e",
				    b, &paths, &at, &err));
	assert_int_equal(m.n, 4);
	assert_true(xl_flagmap_del(&m, "xla_disable_hlo_passes"));
	assert_null(xl_flagmap_get(&m, "xla_disable_hlo_passes"));
	assert_int_equal(m.n, 2);
	xl_flagmap_release(&m);
	/* a word XLA stops at: its place in the file */
	snprintf(bad, sizeof(bad), "%s/bad.txt", xl_test_dir);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("--xla_gpu_autotune_level=1\n\n  oops --xla_dump_to=/x\n", f);
	fclose(f);
	assert_false(xl_flagmap_read(&m, "XLA_FLAGS", bad, a, &paths, &at, &err));
	assert_non_null(strstr(err, "'oops'"));
	assert_string_equal(at.file, bad);
	assert_int_equal(at.line, 3);
	assert_int_equal(at.col, 3);
	free(err);
	xl_flagmap_release(&m);
	/* a file that is not there; no file read where none may be */
	assert_false(xl_flagmap_read(&m, "XLA_FLAGS", "/nonexistent/flags", a, &paths, &at, &err));
	assert_non_null(strstr(err, "cannot be read"));
	assert_ptr_equal(at.file, a.file);
	free(err);
	assert_false(xl_flagmap_read(&m, "XLA_FLAGS", path, a, NULL, &at, &err));
	assert_non_null(strstr(err, "none is read here"));
	free(err);
	xl_flagmap_release(&m);
	xl_strv_release(&paths);
}

/* A profile's XLA_FLAGS naming a flags file resolves to the file's flags,
 * placed in the file; the candidate's list replaces the file's. */
static void test_resolve_flagfile(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	const struct xl_var *v;
	char text[1024], path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/gpu-flags.txt", xl_test_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("--xla_disable_hlo_passes=a --xla_disable_hlo_passes=b\n--xla_gpu_autotune_level=3\n", f);
	fclose(f);
	snprintf(text, sizeof(text),
		 "env:\n  XLA_FLAGS: %s\ncandidates:\n  - name: c1\n    flags:\n"
		 "      XLA_FLAGS: {xla_disable_hlo_passes: z}\n", path);
	write_profile("ffile", text);
	assert_int_equal(xl_profile_resolve(&c, "ffile", NULL, XL_RESOLVE_NO_AMBIENT, &p), 0);
	v = xl_profile_var(p, "XLA_FLAGS");
	assert_non_null(v);
	assert_string_equal(v->value, "--xla_disable_hlo_passes=a --xla_disable_hlo_passes=b "
				      "--xla_gpu_autotune_level=3");
	assert_string_equal(v->flags.v[2].src.file, path);
	assert_int_equal(v->flags.v[2].src.line, 2);
	xl_profile_free(p);
	assert_int_equal(xl_profile_resolve(&c, "ffile", "c1", XL_RESOLVE_NO_AMBIENT, &p), 0);
	v = xl_profile_var(p, "XLA_FLAGS");
	assert_string_equal(v->value, "--xla_disable_hlo_passes=z --xla_gpu_autotune_level=3");
	assert_int_equal(v->flags.v[0].prev.line, 1);
	assert_string_equal(v->flags.v[0].prev.file, path);
	xl_profile_free(p);
	/* a missing file is a profile error */
	write_profile("fmissing", "env:\n  XLA_FLAGS: /nonexistent/xla-flags.txt\n");
	assert_int_equal(xl_profile_resolve(&c, "fmissing", NULL, XL_RESOLVE_NO_AMBIENT, &p),
			 XL_EX_DATAERR);
}

/* ---- expansion and quoting ------------------------------------------------------ */

static void test_expand(void **state)
{
	char *err, *s;

	(void)state;
	setenv("XLT_A", "alpha", 1);
	setenv("XLT_EMPTY", "", 1);
	unsetenv("XLT_UNSET");
	s = xl_expand_vars("${XLT_A}/x/${XLT_UNSET:-d1}/${XLT_EMPTY:-d2}/$$HOME/$", &err);
	assert_string_equal(s, "alpha/x/d1/d2/$HOME/$");
	free(s);
	s = xl_expand_vars("${XLT_UNSET:-${XLT_A}/c}", &err);
	assert_string_equal(s, "alpha/c");
	free(s);
	assert_null(xl_expand_vars("a${XLT_UNSET}b", &err));
	assert_non_null(strstr(err, "${XLT_UNSET} is not set"));
	free(err);
	assert_null(xl_expand_vars("${XLT_A", &err));
	free(err);
	assert_null(xl_expand_vars("${1X}", &err));
	free(err);
}

static void test_sh_quote(void **state)
{
	char *q;

	(void)state;
	q = xl_sh_quote("it's $(rm -rf /) `x`\n\"");
	assert_string_equal(q, "'it'\\''s $(rm -rf /) `x`\n\"'");
	free(q);
	q = xl_sh_quote("");
	assert_string_equal(q, "''");
	free(q);
}

/* ---- resolution ---------------------------------------------------------------- */

static void test_linearize_diamond(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;

	(void)state;
	write_profile("d-root", "env: {A: root, B: root}\n");
	write_profile("d-left", "extends: d-root\nenv: {A: left}\n");
	write_profile("d-right", "extends: d-root\nenv: {A: right, C: right}\n");
	write_profile("d-top", "extends: [d-left, d-right]\nenv:\n  D: top\n");
	assert_int_equal(xl_profile_resolve(&c, "d-top", NULL, XL_RESOLVE_NO_AMBIENT, &p), 0);
	assert_int_equal(p->chain.n, 4);
	assert_string_equal(p->chain.v[0], "d-root");
	assert_string_equal(p->chain.v[1], "d-left");
	assert_string_equal(p->chain.v[2], "d-right");
	assert_string_equal(p->chain.v[3], "d-top");
	assert_string_equal(xl_profile_var(p, "A")->value, "right");
	assert_string_equal(xl_profile_var(p, "B")->value, "root");
	/* provenance: A was set on line 2 of d-right */
	assert_non_null(strstr(xl_profile_var(p, "A")->src.file, "d-right.yaml"));
	assert_int_equal(xl_profile_var(p, "A")->src.line, 2);
	assert_int_equal(xl_profile_var(p, "D")->src.line, 3);
	xl_profile_free(p);
}

static void test_cycle(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;

	(void)state;
	write_profile("cy-a", "extends: cy-b\n");
	write_profile("cy-b", "extends: [cy-c]\n");
	write_profile("cy-c", "extends: cy-a\n");
	assert_int_equal(xl_profile_resolve(&c, "cy-a", NULL, 0, &p), XL_EX_DATAERR);
	assert_null(p);
}

static void test_flags_merge_delete_candidate(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	const struct xl_var *v;

	(void)state;
	write_profile("f-base",
		      "env:\n  XLA_FLAGS: --xla_a=1 --xla_dump_to=/tmp/d\n"
		      "flags:\n  XLA_FLAGS: {xla_b: true}\n");
	write_profile("f-top",
		      "extends: f-base\n"
		      "flags:\n  XLA_FLAGS:\n    xla_a: 2\n    xla_dump_to: ~\n"
		      "candidates:\n  - name: one\n  - name: two\n    flags: {XLA_FLAGS: {xla_c: 3}}\n"
		      "    env: {MB: 4}\n    signature: {train: {micro_batch: 4}}\n"
		      "signature: {train: {micro_batch: 8, optimizer: adamw}}\n");
	assert_int_equal(xl_profile_resolve(&c, "f-top", NULL, XL_RESOLVE_NO_AMBIENT, &p), 0);
	v = xl_profile_var(p, "XLA_FLAGS");
	assert_non_null(v);
	assert_string_equal(v->value, "--xla_a=2 --xla_b=true");
	assert_int_equal(p->ncands, 2);
	assert_int_equal(p->cand, -1);
	xl_profile_free(p);
	assert_int_equal(xl_profile_resolve(&c, "f-top", "two", XL_RESOLVE_NO_AMBIENT, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLA_FLAGS")->value, "--xla_a=2 --xla_b=true --xla_c=3");
	assert_string_equal(xl_profile_var(p, "MB")->value, "4");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p->signature, "train"),
							     "micro_batch")), 4);
	assert_string_equal(json_string_value(json_object_get(json_object_get(p->signature, "train"),
							      "optimizer")), "adamw");
	xl_profile_free(p);
	/* a candidate that is not there is not found, as a profile would be */
	assert_int_equal(xl_profile_resolve(&c, "f-top", "three", XL_RESOLVE_NO_AMBIENT, &p),
			 XL_EX_NOINPUT);
}

/* A candidate's args: kept as written, appended after the command's own,
 * only the selected candidate's, and shown by the renderings. */
static void test_candidate_args(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	const struct xl_strv *a;
	char *cmdv[] = { "python3", "train.py", "--steps", "10", NULL };
	char **full, *out;
	int n;

	(void)state;
	write_profile("args-base", "candidates:\n  - name: old\n    args: [--old, '1']\n");
	write_profile("args-top",
		      "extends: args-base\n"
		      "candidates:\n"
		      "  - name: kv\n    args: [per_device_batch_size=8]\n"
		      "  - name: ap\n    args: [--batch-size, 4, \"it's\"]\n    env: {MB: 4}\n"
		      "  - name: plain\n");
	assert_int_equal(xl_profile_resolve(&c, "args-top", NULL, XL_RESOLVE_NO_AMBIENT, &p), 0);
	/* the later layer's list replaces the base's; nothing is selected */
	assert_int_equal(p->ncands, 3);
	assert_null(xl_profile_args(p));
	full = xl_profile_command(p, cmdv, 4, &n);
	assert_int_equal(n, 4);
	assert_null(full[4]);
	free(full);
	xl_profile_free(p);

	assert_int_equal(xl_profile_resolve(&c, "args-top", "ap", XL_RESOLVE_NO_AMBIENT, &p), 0);
	a = xl_profile_args(p);
	assert_non_null(a);
	assert_int_equal(a->n, 3);
	assert_string_equal(a->v[1], "4");          /* a number as written */
	assert_int_equal(p->cands[p->cand].args_src.line, 6);
	full = xl_profile_command(p, cmdv, 4, &n);
	assert_int_equal(n, 7);
	assert_string_equal(full[3], "10");
	assert_string_equal(full[4], "--batch-size");
	assert_string_equal(full[6], "it's");
	assert_null(full[7]);
	free(full);
	out = xl_env_render(p, XL_FMT_SH);
	assert_non_null(strstr(out, "# candidate ap appends to the command: '--batch-size' '4' 'it'\\''s'\n"));
	assert_non_null(strstr(out, "export MB='4'\n"));
	free(out);
	out = xl_env_render(p, XL_FMT_JSON);
	assert_non_null(strstr(out, "\"args\": [\n    \"--batch-size\",\n    \"4\""));
	free(out);
	xl_profile_free(p);

	assert_int_equal(xl_profile_resolve(&c, "args-top", "kv", XL_RESOLVE_NO_AMBIENT, &p), 0);
	assert_string_equal(xl_profile_args(p)->v[0], "per_device_batch_size=8");
	xl_profile_free(p);
	/* a candidate without args adds nothing, and says nothing */
	assert_int_equal(xl_profile_resolve(&c, "args-top", "plain", XL_RESOLVE_NO_AMBIENT, &p), 0);
	assert_null(xl_profile_args(p));
	out = xl_env_render(p, XL_FMT_SH);
	assert_null(strstr(out, "appends to the command"));
	free(out);
	xl_profile_free(p);
}

/* args is a list of strings: a scalar, a mapping, a nested list or a null
 * item is a profile error. */
static void test_candidate_args_bad(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p = NULL;
	static const char *const bad[] = {
		"candidates:\n  - name: a\n    args: --batch-size 8\n",
		"candidates:\n  - name: a\n    args: {batch_size: 8}\n",
		"candidates:\n  - name: a\n    args: [--batch-size, [8]]\n",
		"candidates:\n  - name: a\n    args: [--batch-size, ~]\n",
		"candidates:\n  - name: a\n    args: ~\n",
		"candidates:\n  - name: a\n    argz: [x]\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_profile("args-bad", bad[i]);
		assert_int_equal(xl_profile_resolve(&c, "args-bad", NULL, 0, &p), XL_EX_DATAERR);
		assert_null(p);
	}
	write_profile("args-empty", "candidates:\n  - name: a\n    args: []\n");
	assert_int_equal(xl_profile_resolve(&c, "args-empty", "a", XL_RESOLVE_NO_AMBIENT, &p), 0);
	assert_null(xl_profile_args(p));
	xl_profile_free(p);
}

static void test_unknown_key_and_types(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;

	(void)state;
	write_profile("bad-key", "description: x\nenvv: {A: 1}\n");
	assert_int_equal(xl_profile_resolve(&c, "bad-key", NULL, 0, &p), XL_EX_DATAERR);
	write_profile("bad-type", "env: [A, B]\n");
	assert_int_equal(xl_profile_resolve(&c, "bad-type", NULL, 0, &p), XL_EX_DATAERR);
	write_profile("bad-name", "env: {1X: a}\n");
	assert_int_equal(xl_profile_resolve(&c, "bad-name", NULL, 0, &p), XL_EX_DATAERR);
	write_profile("bad-exp", "env: {A: '${XLT_SURELY_UNSET_VAR}'}\n");
	assert_int_equal(xl_profile_resolve(&c, "bad-exp", NULL, 0, &p), XL_EX_DATAERR);
	assert_int_equal(xl_profile_resolve(&c, "no-such-profile", NULL, 0, &p), XL_EX_NOINPUT);
	assert_int_equal(xl_profile_resolve(&c, "../etc/passwd", NULL, 0, &p), XL_EX_USAGE);
	assert_false(xl_valid_profile_name("a/b"));
	assert_false(xl_valid_profile_name(".hidden"));
	assert_true(xl_valid_profile_name("tpu-v6e_spmd.2"));
}

static void test_ambient(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	char *envin[] = { "PATH=/bin", "XLA_FLAGS=--xla_shell=1", "KEEP=me", NULL };
	char **env;

	(void)state;
	write_profile("amb-strip", "flags: {XLA_FLAGS: {xla_p: 1}}\n");
	write_profile("amb-keep", "flags: {XLA_FLAGS: {xla_p: 1}}\npolicy: {ambient: keep}\n");
	write_profile("amb-error", "policy: {ambient: error}\n");
	setenv("XLA_FLAGS", "--xla_shell=1 --xla_p=0", 1);
	assert_int_equal(xl_profile_resolve(&c, "amb-strip", NULL, 0, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLA_FLAGS")->value, "--xla_p=1");
	env = xl_profile_build_env(p, envin);
	assert_string_equal(env[0], "PATH=/bin");
	assert_string_equal(env[1], "KEEP=me");
	assert_string_equal(env[2], "XLA_FLAGS=--xla_p=1");
	assert_null(env[3]);
	xl_env_free(env);
	xl_profile_free(p);
	assert_int_equal(xl_profile_resolve(&c, "amb-keep", NULL, 0, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLA_FLAGS")->value, "--xla_shell=1 --xla_p=1");
	assert_string_equal(xl_profile_var(p, "XLA_FLAGS")->flags.v[0].src.file, "environment");
	xl_profile_free(p);
	assert_int_equal(xl_profile_resolve(&c, "amb-error", NULL, 0, &p), XL_EX_NOPERM);
	unsetenv("XLA_FLAGS");
}

static void test_ambient_cataloged(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	char *envin[] = { "PATH=/bin", "PT_XLA_DEBUG_LEVEL=2", "RANK=1", "XLAUNCH_X=1", "MINE=1", NULL };
	char **env;

	(void)state;
	write_profile("cat-strip", "env: {JAX_PLATFORMS: cpu}\npolicy: {timing: true}\n");
	write_profile("cat-keep", "env: {JAX_PLATFORMS: cpu}\npolicy: {timing: true, ambient: keep}\n");
	setenv("PT_XLA_DEBUG_LEVEL", "2", 1);
	setenv("RANK", "1", 1);
	assert_int_equal(xl_profile_resolve(&c, "cat-strip", NULL, 0, &p), 0);
	assert_true(xl_strv_contains(&p->stripped, "PT_XLA_DEBUG_LEVEL"));
	assert_false(xl_strv_contains(&p->stripped, "RANK"));
	assert_null(xl_profile_var(p, "RANK"));
	assert_int_equal(xl_profile_check(&c, p), 0);
	env = xl_profile_build_env(p, envin);
	assert_string_equal(env[0], "PATH=/bin");
	assert_string_equal(env[1], "RANK=1");
	assert_string_equal(env[2], "XLAUNCH_X=1");
	assert_string_equal(env[3], "MINE=1");
	assert_string_equal(env[4], "JAX_PLATFORMS=cpu");
	assert_null(env[5]);
	xl_env_free(env);
	xl_profile_free(p);
	/* kept, it is a managed variable from the environment: timing refuses it */
	assert_int_equal(xl_profile_resolve(&c, "cat-keep", NULL, 0, &p), 0);
	assert_non_null(xl_profile_var(p, "PT_XLA_DEBUG_LEVEL"));
	assert_true(xl_profile_var(p, "PT_XLA_DEBUG_LEVEL")->ambient);
	assert_int_equal(xl_profile_check(&c, p), XL_EX_NOPERM);
	xl_profile_free(p);
	unsetenv("PT_XLA_DEBUG_LEVEL");
	unsetenv("RANK");
}

static void test_expand_layers(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;
	char *set[] = { "XLT_TGT=/t", NULL };

	(void)state;
	write_profile("xl-base", "env: {XLT_R: /r, XLT_P: a}\n");
	write_profile("xl-child", "extends: xl-base\nenv: {XLT_C: '${XLT_D}/c', XLT_D: '${XLT_R}/d', XLT_P: 'b:${XLT_P}'}\n");
	write_profile("xl-cyc", "env: {XLT_A: '${XLT_B}', XLT_B: '${XLT_A}'}\n");
	write_profile("xl-tgt", "env: {XLT_V: '${XLT_TGT:-/dflt}/v', XLT_W: '${HOME:-/h}'}\n");
	setenv("XLT_R", "/shell", 1);
	assert_int_equal(xl_profile_resolve(&c, "xl-child", NULL, 0, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLT_C")->value, "/r/d/c");
	assert_string_equal(xl_profile_var(p, "XLT_P")->value, "b:a");
	xl_profile_free(p);
	unsetenv("XLT_R");
	assert_int_equal(xl_profile_resolve(&c, "xl-cyc", NULL, 0, &p), XL_EX_DATAERR);
	/* for another machine: --set, else the default; never this shell */
	setenv("XLT_TGT", "/local", 1);
	assert_int_equal(xl_profile_resolve_set(&c, "xl-tgt", NULL, XL_RESOLVE_TARGET, NULL, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLT_V")->value, "/dflt/v");
	assert_string_equal(xl_profile_var(p, "XLT_W")->value, "/h");
	assert_int_equal(p->target_notes.n, 2);
	xl_profile_free(p);
	assert_int_equal(xl_profile_resolve_set(&c, "xl-tgt", NULL, XL_RESOLVE_TARGET, set, &p), 0);
	assert_string_equal(xl_profile_var(p, "XLT_V")->value, "/t/v");
	xl_profile_free(p);
	unsetenv("XLT_TGT");
}

static void test_alias_bomb(void **state)
{
	struct xl_ctx c = ctx_for_tmp();
	struct xl_profile *p;

	(void)state;
	write_profile("bomb",
		      "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		      "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		      "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		      "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n");
	assert_int_equal(xl_profile_resolve(&c, "bomb", NULL, 0, &p), XL_EX_DATAERR);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokenize_basic),
		cmocka_unit_test(test_tokenize_quoted),
		cmocka_unit_test(test_tokenize_bare),
		cmocka_unit_test(test_flagmap_merge_and_format),
		cmocka_unit_test(test_flagmap_read_file_and_lists),
		cmocka_unit_test(test_resolve_flagfile),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_sh_quote),
		cmocka_unit_test(test_linearize_diamond),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_flags_merge_delete_candidate),
		cmocka_unit_test(test_candidate_args),
		cmocka_unit_test(test_candidate_args_bad),
		cmocka_unit_test(test_unknown_key_and_types),
		cmocka_unit_test(test_ambient),
		cmocka_unit_test(test_ambient_cataloged),
		cmocka_unit_test(test_expand_layers),
		cmocka_unit_test(test_alias_bomb),
	};

	return XL_TEST_RUN(tests, setup_dir, xl_test_dir_teardown);
}
