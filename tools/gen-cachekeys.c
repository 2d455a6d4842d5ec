/*
 * gen-cachekeys.c - compiles etc/cachekeys.yaml into a C table at build time.
 *
 *   gen-cachekeys OUT.c etc/cachekeys.yaml
 *
 * The YAML stays the source; the table is what `xlaunch run` and `exec`
 * read, so a launch parses no YAML to know whether a cache will be cold.
 * The file is checked here: unknown keys (with a "did you mean"), values of
 * the wrong kind, and rules the model does not implement fail the build
 * with file:line:col.
 */
#include "common/common.h"
#include "tools/gen-c.h"

#include <stdlib.h>
#include <string.h>

static int failures;
static const char *file;

static void bad(const struct xl_ynode *n, const char *fmt, const char *arg)
{
	fprintf(stderr, "gen-cachekeys: %s:%u:%u: ", file, n ? n->line : 0, n ? n->col : 0);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	failures++;
}

static void keys(const struct xl_ynode *m, const char *what, const char *const *allowed)
{
	if (!m || m->kind != XL_Y_MAP) {
		bad(m, "%s must be a mapping", what);
		return;
	}
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct xl_ynode *k = m->items[i];
		size_t j;

		if (k->kind != XL_Y_SCALAR) {
			bad(k, "%s: keys must be words", what);
			continue;
		}
		for (j = 0; allowed[j]; j++)
			if (strcmp(allowed[j], k->str) == 0)
				break;
		if (!allowed[j]) {
			const char *dym = xl_did_you_mean(k->str, allowed);

			bad(k, "unknown key '%s'", k->str);
			if (dym)
				fprintf(stderr, "gen-cachekeys: did you mean '%s'?\n", dym);
		}
	}
}

static const char *str(const struct xl_ynode *m, const char *key, bool need)
{
	const struct xl_ynode *n = xl_ymap_get(m, key);

	if (!n) {
		if (need)
			bad(m, "missing '%s'", key);
		return NULL;
	}
	if (n->kind != XL_Y_SCALAR || xl_ynode_is_null(n)) {
		bad(n, "'%s' must be a scalar", key);
		return NULL;
	}
	return n->str;
}

static bool boolean(const struct xl_ynode *m, const char *key, bool def)
{
	const struct xl_ynode *n = xl_ymap_get(m, key);
	bool b = def;

	if (n && !xl_yscalar_bool(n, &b))
		bad(n, "'%s' must be true or false", key);
	return b;
}

/* A NULL-terminated list of strings named NAME from a YAML list. */
static void strlist(FILE *f, const char *name, const struct xl_ynode *seq, const char *what)
{
	fprintf(f, "static const char *const %s[] = { ", name);
	if (seq && seq->kind != XL_Y_SEQ)
		bad(seq, "%s must be a list", what);
	for (size_t i = 0; seq && seq->kind == XL_Y_SEQ && i < seq->n; i++) {
		if (seq->items[i]->kind != XL_Y_SCALAR) {
			bad(seq->items[i], "%s: an item must be a scalar", what);
			continue;
		}
		gen_cstr(f, seq->items[i]->str);
		fputs(", ", f);
	}
	fputs("NULL };\n", f);
}

static void expect(const struct xl_ynode *m, const char *key, const char *want)
{
	const char *v = str(m, key, false);

	if (v && strcmp(v, want) != 0) {
		char msg[200];

		snprintf(msg, sizeof(msg), "'%s: %%s' is not modelled (only %s)", key, want);
		bad(xl_ymap_get(m, key), msg, v);
	}
}

/* One runtime's rules as the steps read them: its name and mapping, the
 * mappings in it, and what its row in the table takes from the lists. */
struct rtgen {
	FILE *f;                   /* the lists go here, the row to the table */
	const char *name;
	const struct xl_ynode *rt, *up, *cd, *fl, *unless;
	const char *split, *tokens;
	size_t nexc, nadded, nst;  /* exceptions, added tokens, settings */
};

/* The runtime's keys and those of its upstream, cache_dir and flags
 * checked, and the flags' rules the model implements; false when upstream,
 * cache_dir or flags is not a mapping (nothing more to read then). */
static bool check_runtime(struct rtgen *r)
{
	static const char *const rt_keys[] = { "version", "upstream", "cache_dir", "flags", "settings",
					       "raw_vars", "reads_back", NULL };
	static const char *const up_keys[] = { "repo", "tag", "commit", "files", NULL };
	static const char *const cd_keys[] = { "env", "read_only_env", "path_in_key", "path_in_key_unless",
					       "verified", NULL };
	static const char *const unless_keys[] = { "env", "not_containing", NULL };
	static const char *const fl_keys[] = { "vars", "argv_prefix", "split", "tokens", "prefix", "order",
					       "duplicates", "explicit_default", "exclude", "exceptions",
					       "added_on_import", NULL };
	const struct xl_ynode *fl;

	keys(r->rt, r->name, rt_keys);
	r->up = xl_ymap_get(r->rt, "upstream");
	keys(r->up, "upstream", up_keys);
	r->cd = xl_ymap_get(r->rt, "cache_dir");
	keys(r->cd, "cache_dir", cd_keys);
	fl = r->fl = xl_ymap_get(r->rt, "flags");
	keys(fl, "flags", fl_keys);
	if (!r->up || !r->cd || !fl || r->up->kind != XL_Y_MAP || r->cd->kind != XL_Y_MAP ||
	    fl->kind != XL_Y_MAP)
		return false;
	r->unless = xl_ymap_get(r->cd, "path_in_key_unless");
	if (r->unless)
		keys(r->unless, "path_in_key_unless", unless_keys);
	expect(fl, "order", "sorted");
	expect(fl, "duplicates", "hashed");
	expect(fl, "explicit_default", "hashed");
	r->split = str(fl, "split", true);
	if (r->split && strcmp(r->split, "whitespace") != 0 && strcmp(r->split, "space") != 0)
		bad(xl_ymap_get(fl, "split"), "split must be whitespace or space, not '%s'", r->split);
	r->tokens = str(fl, "tokens", true);
	if (r->tokens && strcmp(r->tokens, "all") != 0 && strcmp(r->tokens, "prefix") != 0)
		bad(xl_ymap_get(fl, "tokens"), "tokens must be all or prefix, not '%s'", r->tokens);
	if (r->tokens && strcmp(r->tokens, "prefix") == 0)
		str(fl, "prefix", true);
	return true;
}

/* NAME_vars, NAME_exclude, NAME_raw and NAME_unless. */
static void emit_strlists(const struct rtgen *r)
{
	char nm[96];

	snprintf(nm, sizeof(nm), "%s_vars", r->name);
	strlist(r->f, nm, xl_ymap_get(r->fl, "vars"), "vars");
	snprintf(nm, sizeof(nm), "%s_exclude", r->name);
	strlist(r->f, nm, xl_ymap_get(r->fl, "exclude"), "exclude");
	snprintf(nm, sizeof(nm), "%s_raw", r->name);
	strlist(r->f, nm, xl_ymap_get(r->rt, "raw_vars"), "raw_vars");
	snprintf(nm, sizeof(nm), "%s_unless", r->name);
	strlist(r->f, nm, r->unless ? xl_ymap_get(r->unless, "not_containing") : NULL,
		"not_containing");
}

/* NAME_exc, the flags' exceptions; r->nexc how many the list has. */
static void emit_exceptions(struct rtgen *r)
{
	static const char *const ex_keys[] = { "flag", "invalidates", "verified", NULL };
	const struct xl_ynode *ex = xl_ymap_get(r->fl, "exceptions");
	FILE *f = r->f;

	fprintf(f, "static const struct xl_ck_exception %s_exc[] = {\n", r->name);
	if (ex && ex->kind != XL_Y_SEQ)
		bad(ex, "%s must be a list", "exceptions");
	for (size_t i = 0; ex && ex->kind == XL_Y_SEQ && i < ex->n; i++) {
		const struct xl_ynode *e = ex->items[i];
		const char *flag, *inv;

		keys(e, "an exception", ex_keys);
		if (e->kind != XL_Y_MAP)
			continue;
		flag = str(e, "flag", true);
		inv = str(e, "invalidates", true);
		if (inv && strcmp(inv, "always") != 0 && strcmp(inv, "when-not-default") != 0)
			bad(xl_ymap_get(e, "invalidates"), "invalidates must be always or when-not-default, not '%s'", inv);
		fputs("\t{ ", f);
		gen_cstr(f, flag);
		fprintf(f, ", %d },\n", inv && strcmp(inv, "always") == 0 ? 0 : 1);
	}
	fputs("\t{ NULL, 0 }\n};\n", f);
	r->nexc = ex && ex->kind == XL_Y_SEQ ? ex->n : (size_t)0;
}

/* NAME_added, the tokens importing the runtime adds; r->nadded of them. */
static void emit_added(struct rtgen *r)
{
	const struct xl_ynode *added = xl_ymap_get(r->fl, "added_on_import");
	FILE *f = r->f;

	fprintf(f, "static const struct xl_ck_added %s_added[] = {\n", r->name);
	if (added && added->kind != XL_Y_MAP)
		bad(added, "%s must be a mapping", "added_on_import");
	for (size_t i = 0; added && added->kind == XL_Y_MAP && i + 1 < added->n; i += 2) {
		const struct xl_ynode *var = added->items[i], *toks = added->items[i + 1];

		if (toks->kind != XL_Y_SEQ) {
			bad(toks, "added_on_import.%s must be a list", var->str);
			continue;
		}
		for (size_t k = 0; k < toks->n; k++) {
			fputs("\t{ ", f);
			gen_cstr(f, var->str);
			fputs(", ", f);
			gen_cstr(f, toks->items[k]->kind == XL_Y_SCALAR ? toks->items[k]->str : "");
			fputs(" },\n", f);
			r->nadded++;
		}
	}
	fputs("\t{ NULL, NULL }\n};\n", f);
}

/* NAME_settings, the variables the key may hold; r->nst of them. */
static void emit_settings(struct rtgen *r)
{
	static const char *const st_keys[] = { "env", "in_key", "verified", "why", NULL };
	const struct xl_ynode *st = xl_ymap_get(r->rt, "settings");
	FILE *f = r->f;

	fprintf(f, "static const struct xl_ck_setting %s_settings[] = {\n", r->name);
	if (st && st->kind != XL_Y_SEQ)
		bad(st, "%s must be a list", "settings");
	for (size_t i = 0; st && st->kind == XL_Y_SEQ && i < st->n; i++) {
		const struct xl_ynode *e = st->items[i];
		const struct xl_ynode *ik;
		const char *env;
		int in = 0;
		bool b;

		keys(e, "a setting", st_keys);
		if (e->kind != XL_Y_MAP)
			continue;
		env = str(e, "env", true);
		ik = xl_ymap_get(e, "in_key");
		if (ik && ik->kind == XL_Y_SCALAR && strcmp(ik->str, "program") == 0)
			in = 2;
		else if (ik && xl_yscalar_bool(ik, &b))
			in = b ? 1 : 0;
		else
			bad(ik ? ik : e, "in_key must be true, false or program%s", "");
		fputs("\t{ ", f);
		gen_cstr(f, env);
		fprintf(f, ", %d, ", in);
		gen_cstr(f, str(e, "why", false));
		fputs(" },\n", f);
		r->nst++;
	}
	fputs("\t{ NULL, 0, NULL }\n};\n", f);
}

/* NAME_noread, the PJRT_DEVICE values whose runs do not read the cache back. */
static void emit_noread(const struct rtgen *r)
{
	const struct xl_ynode *rb = xl_ymap_get(r->rt, "reads_back");
	FILE *f = r->f;

	fprintf(f, "static const char *const %s_noread[] = { ", r->name);
	if (rb && rb->kind != XL_Y_MAP)
		bad(rb, "%s must be a mapping of PJRT_DEVICE values to true or false", "reads_back");
	for (size_t i = 0; rb && rb->kind == XL_Y_MAP && i + 1 < rb->n; i += 2) {
		bool b;

		if (!xl_yscalar_bool(rb->items[i + 1], &b)) {
			bad(rb->items[i + 1], "reads_back.%s must be true or false", rb->items[i]->str);
			continue;
		}
		if (!b) {
			gen_cstr(f, rb->items[i]->str);
			fputs(", ", f);
		}
	}
	fputs("NULL };\n\n", f);
}

/* The runtime's row of xl_ck_runtimes[] into tab. */
static void emit_row(const struct rtgen *r, FILE *tab)
{
	const char *rname = r->name, *label = strcmp(rname, "jax") == 0 ? "JAX" : rname;

	fputs("\t{ ", tab);
	gen_cstr(tab, rname);
	fputs(", ", tab);
	gen_cstr(tab, label);
	fputs(", ", tab);
	gen_cstr(tab, str(r->rt, "version", true));
	fputs(", ", tab);
	gen_cstr(tab, str(r->up, "repo", true));
	fputs(", ", tab);
	gen_cstr(tab, str(r->up, "tag", true));
	fputs(",\n\t  ", tab);
	gen_cstr(tab, str(r->cd, "env", true));
	fputs(", ", tab);
	gen_cstr(tab, str(r->cd, "read_only_env", false));
	fprintf(tab, ", %s, ", boolean(r->cd, "path_in_key", false) ? "true" : "false");
	gen_cstr(tab, r->unless ? str(r->unless, "env", true) : NULL);
	fprintf(tab, ", %s_unless,\n\t  %s_vars, %d, ", rname, rname,
		r->split && strcmp(r->split, "space") == 0 ? 1 : 0);
	gen_cstr(tab, r->tokens && strcmp(r->tokens, "prefix") == 0 ? str(r->fl, "prefix", true)
								    : NULL);
	fputs(", ", tab);
	gen_cstr(tab, str(r->fl, "argv_prefix", false));
	fprintf(tab, ", %s_exclude,\n\t  %s_exc, %zu, %s_added, %zu, %s_settings, %zu, %s_raw, %s_noread },\n",
		rname, rname, r->nexc, rname, r->nadded, rname, r->nst, rname, rname);
}

/* One runtime rt, named rname: checked, its lists into f and its row into
 * tab. */
static void runtime(FILE *f, FILE *tab, const char *rname, const struct xl_ynode *rt)
{
	struct rtgen r = { .f = f, .name = rname, .rt = rt };

	if (!check_runtime(&r))
		return;
	emit_strlists(&r);
	emit_exceptions(&r);
	emit_added(&r);
	emit_settings(&r);
	emit_noread(&r);
	emit_row(&r, tab);
}

int main(int argc, char **argv)
{
	char *data, *err = NULL, *tabtext = NULL;
	size_t len, tablen = 0;
	struct xl_ynode *root;
	FILE *out, *tab;
	int nrt = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: gen-cachekeys OUT.c etc/cachekeys.yaml\n");
		return 64;
	}
	file = argv[2];
	data = xl_read_file(file, &len, 0);
	if (!data) {
		fprintf(stderr, "gen-cachekeys: %s: cannot read\n", file);
		return 66;
	}
	root = xl_yaml_parse(data, len, &err);
	free(data);
	if (!root || root->kind != XL_Y_MAP) {
		fprintf(stderr, "gen-cachekeys: %s:%s\n", file, err ? err : "1:1: not a mapping");
		free(err);
		xl_ynode_free(root);
		return 65;
	}
	out = fopen(argv[1], "w");
	tab = open_memstream(&tabtext, &tablen);
	if (!out || !tab) {
		perror(argv[1]);
		return 73;
	}
	fprintf(out, "/* Generated by tools/gen-cachekeys from etc/cachekeys.yaml; do not edit. */\n"
		     "#include \"launcher/flags/flags.h\"\n\n");
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct xl_ynode *k = root->items[i];

		if (k->kind != XL_Y_SCALAR || (strcmp(k->str, "jax") != 0 && strcmp(k->str, "torch_xla") != 0)) {
			bad(k, "unknown runtime '%s' (jax, torch_xla)", k->kind == XL_Y_SCALAR ? k->str : "?");
			continue;
		}
		runtime(out, tab, k->str, root->items[i + 1]);
		nrt++;
	}
	fclose(tab);
	fprintf(out, "const struct xl_ck_runtime xl_ck_runtimes[] = {\n%s};\nconst size_t xl_ck_nruntimes = %d;\n",
		tabtext ? tabtext : "", nrt);
	free(tabtext);
	xl_ynode_free(root);
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 73;
	}
	if (failures) {
		fprintf(stderr, "gen-cachekeys: %d error(s)\n", failures);
		remove(argv[1]);
		return 65;
	}
	return 0;
}
