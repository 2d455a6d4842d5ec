/*
 * gen-catalog.c - compiles etc/flags/FAMILY.yaml into a C table at build time.
 *
 *   gen-catalog OUT.c CATALOG.yaml...
 *
 * The YAML catalogs stay the source; the table is what `xlaunch` searches
 * (sorted by name, then family, for binary search), so no launch pays for
 * parsing YAML.  Every catalog is checked here: unknown keys, bad types,
 * duplicate names within a family, an enum without values, a missing
 * source or description all fail the build with file:line:col.
 */
#include "common/common.h"
#include "tools/gen-c.h"

#include <stdlib.h>
#include <string.h>

struct ent {
	const char *name, *type, *def, *desc, *parser, *reader;
	int order;
	unsigned tags;
	bool icase;
	struct xl_ynode *values, *timing_allows;
	int family;
};

struct fam {
	const char *file, *name, *kind, *bool_parser;
	struct xl_ynode *variables;
	bool complete;
	const char *repository, *path, *commit, *release, *also;
};

static const char *const types[] = { "bool", "int", "float", "string", "enum", "list", NULL };
static const char *const tagnames[] = { "debug", "cache", "perf-risk", "deprecated", "launcher", NULL };
static const char *const parsers[] = { "none", "tsl", "python", "atoi", "int", "prealloc", "pyint", "one", "nonempty", "onezero", NULL };
static const char *const famkeys[] = { "family", "kind", "variables", "complete", "bool_parser",
				       "source", "flags", NULL };
static const char *const srckeys[] = { "repository", "path", "commit", "release", "also", NULL };
static const char *const entkeys[] = { "name", "type", "values", "case", "default", "tags",
				       "description", "parser", "reader", "order", "timing_allows", NULL };
/* A reader spec: "TYPE [CHECK [ARG]]" (launcher/flags/xlareader.c). */
static const char *const reader_types[] = { "bool", "int32", "int64", "float", "string", NULL };
static const char *const reader_checks[] = { "enum", "enum-upper", "enum-lower", "enum-prefix",
					     "repeated-enum", "collectives", "duration", "fuel",
					     "int-ranges", "append", "map", "min=1", "needs-nvptx", NULL };

static int index_of(const char *s, const char *const *list);

static bool valid_reader(const char *spec)
{
	char buf[128], *save = NULL, *t, *c;

	if (strlen(spec) >= sizeof(buf))
		return false;
	strcpy(buf, spec);
	t = strtok_r(buf, " ", &save);
	c = strtok_r(NULL, " ", &save);
	if (!t || index_of(t, reader_types) < 0)
		return false;
	return !c || index_of(c, reader_checks) >= 0;
}

static int failures;

static void bad(const char *file, const struct xl_ynode *n, const char *fmt, const char *arg)
{
	fprintf(stderr, "gen-catalog: %s:%u:%u: ", file, n ? n->line : 0, n ? n->col : 0);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	failures++;
}

static int index_of(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return i;
	return -1;
}

static const char *scalar(const char *file, const struct xl_ynode *n, const char *what)
{
	if (!n)
		return NULL;
	if (n->kind != XL_Y_SCALAR) {
		bad(file, n, "%s must be a scalar", what);
		return NULL;
	}
	return n->str;
}

static void check_keys(const char *file, const struct xl_ynode *map, const char *const *keys)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct xl_ynode *k = map->items[i];

		if (k->kind != XL_Y_SCALAR || index_of(k->str, keys) < 0) {
			const char *dym = k->kind == XL_Y_SCALAR ? xl_did_you_mean(k->str, keys) : NULL;

			bad(file, k, "unknown key '%s'", k->kind == XL_Y_SCALAR ? k->str : "?");
			if (dym)
				fprintf(stderr, "gen-catalog: did you mean '%s'?\n", dym);
		}
	}
}

static struct ent *ents;
static size_t nents, capents;

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->family - y->family;
}

/* file read and parsed: its root, a mapping; NULL once said, with the exit
 * status in *rc (66: unreadable, 65: not a mapping). */
static struct xl_ynode *read_catalog(const char *file, int *rc)
{
	size_t len;
	char *data = xl_read_file(file, &len, 0), *err = NULL;
	struct xl_ynode *root;

	if (!data) {
		fprintf(stderr, "gen-catalog: %s: cannot read\n", file);
		*rc = 66;
		return NULL;
	}
	root = xl_yaml_parse(data, len, &err);
	free(data);
	if (!root || root->kind != XL_Y_MAP) {
		fprintf(stderr, "gen-catalog: %s:%s\n", file, err ? err : "1:1: not a mapping");
		free(err);
		xl_ynode_free(root);
		*rc = 65;
		return NULL;
	}
	return root;
}

/* The family's own keys (family, kind, variables, complete, bool_parser and
 * its source) from root into fm, checked. */
static void read_family(const char *file, const struct xl_ynode *root, struct fam *fm)
{
	struct xl_ynode *src;

	memset(fm, 0, sizeof(*fm));
	fm->file = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	check_keys(file, root, famkeys);
	fm->name = scalar(file, xl_ymap_get(root, "family"), "family");
	fm->kind = scalar(file, xl_ymap_get(root, "kind"), "kind");
	fm->bool_parser = scalar(file, xl_ymap_get(root, "bool_parser"), "bool_parser");
	fm->variables = xl_ymap_get(root, "variables");
	if (!fm->name)
		bad(file, root, "%s", "no 'family'");
	if (!fm->kind || (strcmp(fm->kind, "flags") && strcmp(fm->kind, "env")))
		bad(file, root, "%s", "'kind' must be flags or env");
	if (fm->kind && strcmp(fm->kind, "flags") == 0 &&
	    (!fm->variables || fm->variables->kind != XL_Y_SEQ))
		bad(file, root, "%s", "a flags catalog needs 'variables' (a list)");
	if (fm->bool_parser && index_of(fm->bool_parser, parsers) < 0)
		bad(file, xl_ymap_get(root, "bool_parser"), "unknown bool_parser '%s'", fm->bool_parser);
	if (!xl_yscalar_bool(xl_ymap_get(root, "complete"), &fm->complete))
		bad(file, root, "%s", "'complete' must be true or false");
	src = xl_ymap_get(root, "source");
	if (!src || src->kind != XL_Y_MAP) {
		bad(file, root, "%s", "no 'source' mapping");
		return;
	}
	check_keys(file, src, srckeys);
	fm->repository = scalar(file, xl_ymap_get(src, "repository"), "repository");
	fm->path = scalar(file, xl_ymap_get(src, "path"), "path");
	fm->commit = scalar(file, xl_ymap_get(src, "commit"), "commit");
	fm->release = scalar(file, xl_ymap_get(src, "release"), "release");
	fm->also = scalar(file, xl_ymap_get(src, "also"), "also");
	if (!fm->repository || !fm->path || (!fm->commit && !fm->release))
		bad(file, src, "%s", "source needs repository, path and commit or release");
}

/* The named entry en (of the mapping e) checked: its type, description,
 * reader, parser, values and timing_allows. */
static void check_entry(const char *file, const struct xl_ynode *e, const struct ent *en)
{
	if (!en->type || index_of(en->type, types) < 0)
		bad(file, e, "'%s': type must be bool, int, float, string, enum or list", en->name);
	if (!en->desc || !*en->desc)
		bad(file, e, "'%s': no description", en->name);
	if (en->reader && !valid_reader(en->reader))
		bad(file, e, "'%s': unknown reader", en->name);
	if (en->parser && index_of(en->parser, parsers) < 0)
		bad(file, e, "'%s': unknown parser", en->name);
	if (en->values && (en->values->kind != XL_Y_SEQ ||
			   (en->type && strcmp(en->type, "enum") == 0 && en->values->n == 0)))
		bad(file, e, "'%s': values must be a non-empty list", en->name);
	if (en->type && strcmp(en->type, "enum") == 0 && !en->values)
		bad(file, e, "'%s': an enum needs values", en->name);
	if (en->timing_allows && (en->timing_allows->kind != XL_Y_SEQ || !en->type ||
				  strcmp(en->type, "list") != 0))
		bad(file, e, "'%s': timing_allows is a list, for a list-typed entry", en->name);
	if (en->values && en->values->kind == XL_Y_SEQ)
		for (size_t k = 0; k < en->values->n; k++)
			if (en->values->items[k]->kind != XL_Y_SCALAR)
				bad(file, en->values->items[k], "'%s': a value must be a scalar",
				    en->name);
}

/* The entry's tags (a list of tagnames) into en->tags, checked. */
static void read_tags(const char *file, const struct xl_ynode *e, struct ent *en)
{
	struct xl_ynode *tags = xl_ymap_get(e, "tags");

	if (tags && tags->kind == XL_Y_SEQ) {
		for (size_t k = 0; k < tags->n; k++) {
			int t = tags->items[k]->kind == XL_Y_SCALAR ?
				index_of(tags->items[k]->str, tagnames) : -1;

			if (t < 0)
				bad(file, tags->items[k], "'%s': unknown tag", en->name);
			else
				en->tags |= 1u << t;
		}
	} else if (tags) {
		bad(file, tags, "'%s': tags must be a list", en->name);
	}
}

/* One entry e of family `family` read and checked; added to ents when it
 * has a name. */
static void read_entry(const char *file, struct xl_ynode *e, int family)
{
	struct ent en;
	const char *s;

	if (e->kind != XL_Y_MAP) {
		bad(file, e, "%s", "an entry must be a mapping");
		return;
	}
	check_keys(file, e, entkeys);
	memset(&en, 0, sizeof(en));
	en.family = family;
	en.name = scalar(file, xl_ymap_get(e, "name"), "name");
	en.type = scalar(file, xl_ymap_get(e, "type"), "type");
	en.def = scalar(file, xl_ymap_get(e, "default"), "default");
	en.desc = scalar(file, xl_ymap_get(e, "description"), "description");
	en.parser = scalar(file, xl_ymap_get(e, "parser"), "parser");
	en.reader = scalar(file, xl_ymap_get(e, "reader"), "reader");
	s = scalar(file, xl_ymap_get(e, "order"), "order");
	en.order = s ? atoi(s) : -1;
	en.values = xl_ymap_get(e, "values");
	en.timing_allows = xl_ymap_get(e, "timing_allows");
	s = scalar(file, xl_ymap_get(e, "case"), "case");
	en.icase = s && strcmp(s, "insensitive") == 0;
	if (!en.name || !*en.name) {
		bad(file, e, "%s", "entry without a name");
		return;
	}
	check_entry(file, e, &en);
	read_tags(file, e, &en);
	if (nents == capents) {
		capents = capents ? 2 * capents : 1024;
		ents = xl_realloc(ents, capents * sizeof(*ents));
	}
	ents[nents++] = en;
}

/* Every entry of root's 'flags' list, of family `family`, into ents. */
static void read_flags(const char *file, const struct xl_ynode *root, int family)
{
	struct xl_ynode *fl = xl_ymap_get(root, "flags");

	if (!fl || fl->kind != XL_Y_SEQ || fl->n == 0) {
		bad(file, root, "%s", "'flags' must be a non-empty list");
		return;
	}
	for (size_t i = 0; i < fl->n; i++)
		read_entry(file, fl->items[i], family);
}

/* No name twice in a family (ents sorted), no family twice. */
static void check_twice(const struct fam *fams, int nf)
{
	for (size_t i = 1; i < nents; i++)
		if (strcmp(ents[i].name, ents[i - 1].name) == 0 && ents[i].family == ents[i - 1].family)
			bad(fams[ents[i].family].file, NULL, "'%s' is listed twice", ents[i].name);
	for (int i = 0; i < nf; i++)
		for (int j = 0; j < i; j++)
			if (fams[i].name && fams[j].name && strcmp(fams[i].name, fams[j].name) == 0)
				bad(fams[i].file, NULL, "family '%s' defined twice", fams[i].name);
}

/* The entries' lists of values (v<i>) and of timing_allows (t<i>). */
static void emit_lists(FILE *out)
{
	for (size_t i = 0; i < nents; i++) {
		if (ents[i].values) {
			fprintf(out, "static const char *const v%zu[] = { ", i);
			for (size_t k = 0; k < ents[i].values->n; k++) {
				gen_cstr(out, ents[i].values->items[k]->str);
				fputs(", ", out);
			}
			fputs("NULL };\n", out);
		}
		if (ents[i].timing_allows && ents[i].timing_allows->kind == XL_Y_SEQ) {
			fprintf(out, "static const char *const t%zu[] = { ", i);
			for (size_t k = 0; k < ents[i].timing_allows->n; k++) {
				if (ents[i].timing_allows->items[k]->kind == XL_Y_SCALAR)
					gen_cstr(out, ents[i].timing_allows->items[k]->str);
				else
					gen_cstr(out, "");
				fputs(", ", out);
			}
			fputs("NULL };\n", out);
		}
	}
}

/* xl_families[] and xl_nfamilies. */
static void emit_families(FILE *out, const struct fam *fams, int nf)
{
	fprintf(out, "\nconst struct xl_family xl_families[] = {\n");
	for (int i = 0; i < nf; i++) {
		const struct fam *fm = &fams[i];
		struct xl_buf vars = XL_BUF_INIT;

		if (fm->variables && fm->variables->kind == XL_Y_SEQ)
			for (size_t k = 0; k < fm->variables->n; k++)
				xl_buf_addf(&vars, "%s%s", k ? " " : "", fm->variables->items[k]->str);
		fputs("\t{ ", out);
		gen_cstr(out, fm->name); fputs(", ", out);
		gen_cstr(out, fm->file); fputs(", ", out);
		fprintf(out, "%s, ", strcmp(fm->kind, "flags") == 0 ? "true" : "false");
		gen_cstr(out, vars.len ? vars.buf : ""); fputs(", ", out);
		fprintf(out, "%s, %d,\n\t  ", fm->complete ? "true" : "false",
			fm->bool_parser ? index_of(fm->bool_parser, parsers) : 0);
		gen_cstr(out, fm->repository); fputs(", ", out);
		gen_cstr(out, fm->path); fputs(", ", out);
		gen_cstr(out, fm->commit); fputs(", ", out);
		gen_cstr(out, fm->release); fputs(", ", out);
		gen_cstr(out, fm->also); fputs(" },\n", out);
		xl_buf_release(&vars);
	}
	fprintf(out, "};\nconst size_t xl_nfamilies = %d;\n\n", nf);
}

/* xl_flagdefs[] and xl_nflagdefs, in ents' order. */
static void emit_flagdefs(FILE *out)
{
	fprintf(out, "const struct xl_flagdef xl_flagdefs[] = {\n");
	for (size_t i = 0; i < nents; i++) {
		struct ent *e = &ents[i];

		fputs("\t{ ", out);
		gen_cstr(out, e->name);
		fprintf(out, ", %d, %d, %u, %d, %s, ", e->family, index_of(e->type, types), e->tags,
			e->parser ? index_of(e->parser, parsers) : 0, e->icase ? "true" : "false");
		if (e->values)
			fprintf(out, "v%zu, ", i);
		else
			fputs("NULL, ", out);
		gen_cstr(out, e->def); fputs(", ", out);
		gen_cstr(out, e->desc); fputs(", ", out);
		gen_cstr(out, e->reader);
		fprintf(out, ", %d, ", e->order);
		if (e->timing_allows && e->timing_allows->kind == XL_Y_SEQ)
			fprintf(out, "t%zu },\n", i);
		else
			fputs("NULL },\n", out);
	}
	fprintf(out, "};\nconst size_t xl_nflagdefs = %zu;\n", nents);
}

/* The table into path: 0, or 73 once said. */
static int emit_table(const char *path, const struct fam *fams, int nf)
{
	FILE *out = fopen(path, "w");

	if (!out) {
		perror(path);
		return 73;
	}
	fprintf(out, "/* Generated by tools/gen-catalog from etc/flags/FAMILY.yaml; do not edit. */\n"
		     "#include \"launcher/flags/flags.h\"\n\n");
	emit_lists(out);
	emit_families(out, fams, nf);
	emit_flagdefs(out);
	if (fclose(out) != 0) {
		perror(path);
		return 73;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fam fams[32];
	struct xl_ynode *roots[32];
	int nf = 0, rc;

	if (argc < 3 || argc - 2 > 32) {
		fprintf(stderr, "usage: gen-catalog OUT.c CATALOG.yaml...\n");
		return 64;
	}
	for (int a = 2; a < argc; a++) {
		roots[nf] = read_catalog(argv[a], &rc);
		if (!roots[nf])
			return rc;
		read_family(argv[a], roots[nf], &fams[nf]);
		read_flags(argv[a], roots[nf], nf);
		nf++;
	}
	qsort(ents, nents, sizeof(*ents), cmp_ent);
	check_twice(fams, nf);
	if (failures) {
		fprintf(stderr, "gen-catalog: %d error(s)\n", failures);
		return 65;
	}
	rc = emit_table(argv[1], fams, nf);
	if (rc)
		return rc;
	for (int i = 0; i < nf; i++)
		xl_ynode_free(roots[i]);
	free(ents);
	return 0;
}
