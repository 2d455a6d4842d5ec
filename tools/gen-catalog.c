/*
 * gen-catalog.c - compiles etc/flags/FAMILY.yaml into a C table at build time.
 *
 *   gen-catalog OUT.c [--releases RELEASES.yaml] CATALOG.yaml...
 *
 * The YAML catalogs stay the source; the table is what `xlaunch` searches
 * (sorted by name, then family, for binary search), so no launch pays for
 * parsing YAML.  Every catalog is checked here: unknown keys, bad types,
 * duplicate names within a family, an enum without values, a missing
 * source or description all fail the build with file:line:col.
 *
 * With --releases (etc/flags/releases.yaml), a family that names packages
 * in `releases: [...]` records for every entry the releases that register
 * it; the catalog table then holds the entries of the pinned release of
 * its first package, and the knowledge tables (launcher/flags/
 * knowledge.h) every entry, each with a bit set of its releases, its
 * variants, its successor and the change that removed it.
 */
#include "common/common.h"
#include "tools/gen-c.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	const char *name, *type, *def, *desc, *parser, *reader;
	int order;
	unsigned tags;
	bool icase;
	struct xl_ynode *values, *timing_allows;
	int family;
	/* releases */
	uint64_t rel;
	bool pinned;             /* registered by the family's pinned release (or no axis) */
	struct xl_ynode *variants;
	const char *removed, *replaced_by, *evidence;
	int def_index;           /* its place in xl_flagdefs, or -1 */
};

struct fam {
	const char *file, *name, *kind, *bool_parser;
	struct xl_ynode *variables;
	bool complete;
	const char *repository, *path, *commit, *release, *also;
	int axis[2], naxis;      /* packages of releases.yaml, -1 none */
	int shift[2];
};

static const char *const types[] = { "bool", "int", "float", "string", "enum", "list", NULL };
static const char *const tagnames[] = { "debug", "cache", "perf-risk", "deprecated", "launcher", "observed", NULL };
static const char *const parsers[] = { "none", "tsl", "python", "atoi", "int", "prealloc", "pyint", "one", "nonempty", "onezero", "absl", NULL };
static const char *const famkeys[] = { "family", "kind", "variables", "complete", "bool_parser",
				       "source", "flags", "releases", NULL };
static const char *const srckeys[] = { "repository", "path", "commit", "release", "also", NULL };
static const char *const entkeys[] = { "name", "type", "values", "case", "default", "tags",
				       "description", "parser", "reader", "order", "timing_allows",
				       "releases", "variants", "removed", "replaced_by", "evidence", NULL };
static const char *const varkeys[] = { "releases", "type", "reader", "values", NULL };
static const char *const pkgkeys[] = { "repository", "xla_repository", "pinned", "releases", NULL };
static const char *const relkeys[] = { "version", "date", "tag", "commit", "xla", "libtpu", "known",
				       "observed", NULL };
/* A reader spec: "TYPE [CHECK [ARG]]" (launcher/flags/xlareader.c). */
static const char *const reader_types[] = { "bool", "int16", "int32", "int64", "uint16", "uint32", "uint64",
					    "float", "string", NULL };
static const char *const reader_checks[] = { "enum", "enum-upper", "enum-lower", "enum-prefix",
					     "repeated-enum", "collectives", "duration", "fuel",
					     "int-ranges", "append", "map", "min=1", "needs-nvptx",
					     /* libtpu's value types (launcher/flags/abslreader.h) */
					     "enum-icase", "optional", "auto", "validated", "unlearned", NULL };

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

static void push_ent(const struct ent *en)
{
	if (nents == capents) {
		capents = capents ? 2 * capents : 1024;
		ents = xl_realloc(ents, capents * sizeof(*ents));
	}
	ents[nents++] = *en;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->family - y->family;
}

/* ---- releases (etc/flags/releases.yaml) ------------------------------------ */

#define MAX_PKGS 8
#define MAX_RELS 512

struct rel {
	const char *version, *date, *commit, *xla, *libtpu;
	const char *observed;    /* the file of the names its wheel registers, or NULL */
	bool known;
	int pkg;
};

struct pkg {
	const char *name, *pinned;
	int first, n, nknown, pinned_i;
};

static struct pkg pkgs[MAX_PKGS];
static int npkgs;
static struct rel rels[MAX_RELS];
static int nrels;
static struct xl_ynode *rel_root;

static int pkg_index(const char *name)
{
	for (int i = 0; i < npkgs; i++)
		if (strcmp(pkgs[i].name, name) == 0)
			return i;
	return -1;
}

/* Release version of package p: its index within the package, or -1. */
static int rel_index(int p, const char *version)
{
	for (int i = 0; i < pkgs[p].n; i++)
		if (strcmp(rels[pkgs[p].first + i].version, version) == 0)
			return i;
	return -1;
}

static void load_package(const char *file, struct xl_ynode *name, struct xl_ynode *m)
{
	struct pkg *pk = &pkgs[npkgs];
	struct xl_ynode *list = xl_ymap_get(m, "releases");

	if (name->kind != XL_Y_SCALAR || m->kind != XL_Y_MAP) {
		bad(file, name, "%s", "a package is a name and a mapping");
		return;
	}
	if (npkgs == MAX_PKGS) {
		bad(file, name, "more than %s packages", "8");
		return;
	}
	check_keys(file, m, pkgkeys);
	pk->name = name->str;
	pk->pinned = scalar(file, xl_ymap_get(m, "pinned"), "pinned");
	pk->first = nrels;
	if (!list || list->kind != XL_Y_SEQ || !list->n) {
		bad(file, m, "package '%s': 'releases' must be a non-empty list", pk->name);
		return;
	}
	for (size_t i = 0; i < list->n; i++) {
		struct xl_ynode *r = list->items[i];
		struct rel *rl = &rels[nrels];
		bool known = true;

		if (r->kind != XL_Y_MAP || nrels == MAX_RELS) {
			bad(file, r, "%s", "a release is a mapping (at most 512 in all)");
			continue;
		}
		check_keys(file, r, relkeys);
		memset(rl, 0, sizeof(*rl));
		rl->version = scalar(file, xl_ymap_get(r, "version"), "version");
		rl->date = scalar(file, xl_ymap_get(r, "date"), "date");
		rl->commit = scalar(file, xl_ymap_get(r, "commit"), "commit");
		rl->xla = scalar(file, xl_ymap_get(r, "xla"), "xla");
		rl->libtpu = scalar(file, xl_ymap_get(r, "libtpu"), "libtpu");
		if (xl_ymap_get(r, "known") && !xl_yscalar_bool(xl_ymap_get(r, "known"), &known))
			bad(file, r, "%s", "'known' must be true or false");
		rl->observed = scalar(file, xl_ymap_get(r, "observed"), "observed");
		if (rl->observed && !known)
			bad(file, r, "%s", "an observed release is inside the knowledge: not known: false");
		rl->known = known;
		rl->pkg = npkgs;
		if (!rl->version || !rl->commit) {
			bad(file, r, "%s", "a release needs a version and a commit");
			continue;
		}
		pk->n = nrels - pk->first;   /* the releases read so far */
		if (rel_index(npkgs, rl->version) >= 0)
			bad(file, r, "release '%s' is listed twice", rl->version);
		if (known && pk->nknown != pk->n)
			bad(file, r, "release '%s': releases inside the knowledge come before the others",
			    rl->version);
		if (known)
			pk->nknown++;
		nrels++;
		pk->n = nrels - pk->first;
	}
	pk->pinned_i = pk->pinned ? rel_index(npkgs, pk->pinned) : -1;
	if (pk->pinned_i < 0 || pk->pinned_i >= pk->nknown)
		bad(file, m, "package '%s': 'pinned' must name a release inside the knowledge", pk->name);
	npkgs++;
}

static void load_releases(const char *file)
{
	size_t len;
	char *data = xl_read_file(file, &len, 0), *err = NULL;
	struct xl_ynode *ps;

	if (!data) {
		fprintf(stderr, "gen-catalog: %s: cannot read\n", file);
		exit(66);
	}
	rel_root = xl_yaml_parse(data, len, &err);
	free(data);
	if (!rel_root || rel_root->kind != XL_Y_MAP) {
		fprintf(stderr, "gen-catalog: %s:%s\n", file, err ? err : "1:1: not a mapping");
		free(err);
		xl_ynode_free(rel_root);
		exit(65);
	}
	ps = xl_ymap_get(rel_root, "packages");
	if (!ps || ps->kind != XL_Y_MAP) {
		bad(file, rel_root, "%s", "no 'packages' mapping");
		return;
	}
	for (size_t i = 0; i < ps->n; i += 2)
		load_package(file, ps->items[i], ps->items[i + 1]);
}

/* The family's `releases: [PKG...]`: its axis of at most 64 releases. */
static void family_axis(const char *file, struct fam *fm, const struct xl_ynode *list)
{
	int bits = 0;

	fm->axis[0] = fm->axis[1] = -1;
	if (!list)
		return;
	if (list->kind != XL_Y_SEQ || list->n == 0 || list->n > 2) {
		bad(file, list, "%s", "'releases' is a list of one or two packages");
		return;
	}
	for (size_t k = 0; k < list->n; k++) {
		int p = list->items[k]->kind == XL_Y_SCALAR ? pkg_index(list->items[k]->str) : -1;

		if (p < 0) {
			bad(file, list->items[k], "%s", "not a package of releases.yaml (give --releases)");
			continue;
		}
		fm->axis[fm->naxis] = p;
		fm->shift[fm->naxis++] = bits;
		bits += pkgs[p].nknown;
	}
	if (bits > 64)
		bad(file, list, "%s", "more than 64 releases in the family's packages");
}

/* A mapping PKG: "V V-V ..." into a bit set over fm's axis. */
static uint64_t parse_rel(const char *file, const struct fam *fm, const struct xl_ynode *m,
			  const char *what)
{
	uint64_t mask = 0;

	if (!m || m->kind != XL_Y_MAP) {
		bad(file, m, "'%s': releases is a mapping of packages to release ranges", what);
		return 0;
	}
	for (size_t i = 0; i < m->n; i += 2) {
		const struct xl_ynode *k = m->items[i], *v = m->items[i + 1];
		int ax = -1, p;
		char buf[1024], *save = NULL, *t;

		for (int a = 0; a < fm->naxis; a++)
			if (k->kind == XL_Y_SCALAR && strcmp(pkgs[fm->axis[a]].name, k->str) == 0)
				ax = a;
		if (ax < 0 || v->kind != XL_Y_SCALAR || strlen(v->str) >= sizeof(buf)) {
			bad(file, k, "'%s': not a package of the family's releases, or not a range list", what);
			continue;
		}
		p = fm->axis[ax];
		strcpy(buf, v->str);
		for (t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char *dash = strchr(t, '-');
			int lo, hi;

			if (dash)
				*dash = '\0';
			lo = rel_index(p, t);
			hi = dash ? rel_index(p, dash + 1) : lo;
			if (lo < 0 || hi < 0 || hi < lo || hi >= pkgs[p].nknown) {
				bad(file, v, "'%s': a range that names no known releases in order", what);
				break;
			}
			for (int r = lo; r <= hi; r++)
				mask |= UINT64_C(1) << (fm->shift[ax] + r);
		}
	}
	return mask;
}

/* The releases-related keys of entry e of family fm. */
static void entry_releases(const char *file, const struct fam *fm, struct xl_ynode *e, struct ent *en)
{
	struct xl_ynode *r = xl_ymap_get(e, "releases");
	uint64_t seen = 0;

	en->variants = xl_ymap_get(e, "variants");
	en->removed = scalar(file, xl_ymap_get(e, "removed"), "removed");
	en->replaced_by = scalar(file, xl_ymap_get(e, "replaced_by"), "replaced_by");
	en->evidence = scalar(file, xl_ymap_get(e, "evidence"), "evidence");
	en->pinned = true;
	if (!fm->naxis) {
		if (r || en->variants || en->removed || en->replaced_by)
			bad(file, e, "'%s': release keys in a family without 'releases'", en->name);
		return;
	}
	if (!r) {
		bad(file, e, "'%s': no 'releases'", en->name);
		return;
	}
	en->rel = parse_rel(file, fm, r, en->name);
	if (!en->rel)
		bad(file, e, "'%s': registered by no release", en->name);
	en->pinned = en->rel & (UINT64_C(1) << (fm->shift[0] + pkgs[fm->axis[0]].pinned_i));
	if (!!en->replaced_by != !!en->evidence)
		bad(file, e, "'%s': replaced_by and evidence go together", en->name);
	if (!en->variants)
		return;
	if (en->variants->kind != XL_Y_SEQ) {
		bad(file, en->variants, "'%s': variants is a list", en->name);
		return;
	}
	for (size_t i = 0; i < en->variants->n; i++) {
		struct xl_ynode *v = en->variants->items[i], *vals;
		const char *t, *rd;
		uint64_t m;

		if (v->kind != XL_Y_MAP) {
			bad(file, v, "'%s': a variant is a mapping", en->name);
			continue;
		}
		check_keys(file, v, varkeys);
		m = parse_rel(file, fm, xl_ymap_get(v, "releases"), en->name);
		t = scalar(file, xl_ymap_get(v, "type"), "type");
		rd = scalar(file, xl_ymap_get(v, "reader"), "reader");
		vals = xl_ymap_get(v, "values");
		if (!m || (m & ~en->rel) || (m & seen))
			bad(file, v, "'%s': a variant's releases must register the flag, once", en->name);
		seen |= m;
		if (!t || index_of(t, types) < 0)
			bad(file, v, "'%s': a variant needs a type", en->name);
		if (rd && !valid_reader(rd))
			bad(file, v, "'%s': unknown reader", en->name);
		if (vals && vals->kind != XL_Y_SEQ)
			bad(file, vals, "'%s': values must be a list", en->name);
	}
}

/* ---- releases known by what their wheels register ------------------------- */

/* Files and names read for observed releases, freed at the end. */
static char **obs_mem;
static size_t nobs_mem;

static void obs_keep(char *p)
{
	obs_mem = xl_realloc(obs_mem, (nobs_mem + 1) * sizeof(*obs_mem));
	obs_mem[nobs_mem++] = p;
}

/* The entry of family f named name, or NULL. */
static struct ent *find_ent(int f, const char *name)
{
	for (size_t i = 0; i < nents; i++)
		if (ents[i].family == f && strcmp(ents[i].name, name) == 0)
			return &ents[i];
	return NULL;
}

/* A name its catalog lacks: known by the observed releases only, with no
 * type (a string of any value) and the releases that register it. */
static void add_observed_ent(int f, const char *name, uint64_t bit, const char *pkg)
{
	struct ent en;
	char *desc = xl_asprintf("registered by %s releases whose sources were not read: "
				 "known from what their wheels register, without a type", pkg);

	obs_keep(desc);
	memset(&en, 0, sizeof(en));
	en.name = name;
	en.type = "string";
	en.reader = "string";
	en.desc = desc;
	en.order = -1;
	en.tags = 1u << index_of("observed", tagnames);   /* XL_FTAG_OBSERVED */
	en.family = f;
	en.rel = bit;
	en.def_index = -1;
	push_ent(&en);
}

/* Release i of package p (observed: FILE) registers each name of FILE:
 * its bit is set on those entries of every family whose axis has p. */
static void apply_observed_release(const char *relfile, int p, int i, struct fam *fams, int nf)
{
	const struct rel *r = &rels[pkgs[p].first + i];
	size_t len;
	char *data = xl_read_file(r->observed, &len, 0), *line, *save = NULL;
	int n = 0, lineno = 0;

	if (!data) {
		fprintf(stderr, "gen-catalog: %s: release %s %s: cannot read '%s'\n", relfile,
			pkgs[p].name, r->version, r->observed);
		failures++;
		return;
	}
	obs_keep(data);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (*line == '#' || !*line)
			continue;
		if (!xl_valid_env_name(line) || strncmp(line, "xla_", 4) != 0) {
			fprintf(stderr, "gen-catalog: %s: not an XLA flag name: '%s' (line %d)\n", r->observed,
				line, lineno);
			failures++;
			continue;
		}
		n++;
		for (int f = 0; f < nf; f++)
			for (int a = 0; a < fams[f].naxis; a++) {
				uint64_t bit;
				struct ent *e;

				if (fams[f].axis[a] != p || strcmp(fams[f].name, "xla") != 0)
					continue;
				bit = UINT64_C(1) << (fams[f].shift[a] + i);
				e = find_ent(f, line);
				if (e)
					e->rel |= bit;
				else
					add_observed_ent(f, line, bit, pkgs[p].name);
			}
	}
	if (!n) {
		fprintf(stderr, "gen-catalog: %s: no flag names\n", r->observed);
		failures++;
	}
}

static void apply_observed(const char *relfile, struct fam *fams, int nf)
{
	for (int p = 0; p < npkgs; p++)
		for (int i = 0; i < pkgs[p].nknown; i++)
			if (rels[pkgs[p].first + i].observed)
				apply_observed_release(relfile, p, i, fams, nf);
}

/* ---- the string pool of the knowledge tables ------------------------------- */

static struct xl_buf pool = XL_BUF_INIT;

#define POOL_HASH 8192
static uint32_t pool_slots[POOL_HASH];  /* offset + 1 of a string, 0 empty */

/* The offset of s in the pool (added once); 0 for NULL or "". */
static uint32_t pool_add(const char *s)
{
	uint32_t h = 2166136261u, i;

	if (!s || !*s)
		return 0;
	if (!pool.len)
		xl_buf_add(&pool, "", 1);
	for (const char *c = s; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	for (i = h % POOL_HASH; pool_slots[i]; i = (i + 1) % POOL_HASH)
		if (strcmp(pool.buf + pool_slots[i] - 1, s) == 0)
			return pool_slots[i] - 1;
	pool_slots[i] = (uint32_t)pool.len + 1;
	xl_buf_add(&pool, s, strlen(s) + 1);
	return pool_slots[i] - 1;
}

/* A list of values: its items, each ended by NUL, then an empty item. */
static uint32_t pool_list(const struct xl_ynode *vals)
{
	uint32_t off;

	if (!vals || vals->kind != XL_Y_SEQ || !vals->n)
		return 0;
	if (!pool.len)
		xl_buf_add(&pool, "", 1);
	off = (uint32_t)pool.len;
	for (size_t k = 0; k < vals->n; k++)
		if (vals->items[k]->kind == XL_Y_SCALAR)
			xl_buf_add(&pool, vals->items[k]->str, strlen(vals->items[k]->str) + 1);
	xl_buf_add(&pool, "", 1);
	return off;
}

static void write_pool(FILE *out)
{
	fputs("const char xl_kpool[] =\n", out);
	for (size_t i = 0; i < pool.len;) {
		size_t n = strlen(pool.buf + i);
		const char *s = pool.buf + i;

		fputs("\t\"", out);
		for (size_t k = 0; k < n; k++) {
			unsigned char c = (unsigned char)s[k];

			if (c == '"' || c == '\\')
				fprintf(out, "\\%c", c);
			else if (c < 0x20 || c >= 0x7f)
				fprintf(out, "\\%03o", c);
			else
				fputc(c, out);
		}
		fputs("\\0\"\n", out);
		i += n + 1;
	}
	fputs("\t\"\";\n", out);
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
	family_axis(file, fm, xl_ymap_get(root, "releases"));
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
	if (en->timing_allows && (en->timing_allows->kind != XL_Y_SEQ || !en->timing_allows->n ||
				  !en->type || strcmp(en->type, "list") != 0))
		bad(file, e, "'%s': timing_allows is a non-empty list, for a list-typed entry", en->name);
	/* lists are compiled into the string pool, where an empty item ends one */
	if (en->values && en->values->kind == XL_Y_SEQ)
		for (size_t k = 0; k < en->values->n; k++)
			if (en->values->items[k]->kind != XL_Y_SCALAR || !*en->values->items[k]->str)
				bad(file, en->values->items[k], "'%s': a value must be a non-empty scalar",
				    en->name);
	if (en->timing_allows && en->timing_allows->kind == XL_Y_SEQ)
		for (size_t k = 0; k < en->timing_allows->n; k++)
			if (en->timing_allows->items[k]->kind != XL_Y_SCALAR ||
			    !*en->timing_allows->items[k]->str)
				bad(file, en->timing_allows->items[k],
				    "'%s': an item of timing_allows must be a non-empty scalar", en->name);
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
			else if (strcmp(tagnames[t], "observed") == 0)
				bad(file, tags->items[k], "'%s': 'observed' is set by the build (releases.yaml), "
				    "not in a catalog", en->name);
			else
				en->tags |= 1u << t;
		}
	} else if (tags) {
		bad(file, tags, "'%s': tags must be a list", en->name);
	}
}

/* One entry e of family `family` (fm) read and checked; added to ents when
 * it has a name. */
static void read_entry(const char *file, struct xl_ynode *e, int family, const struct fam *fm)
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
	en.def_index = -1;
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
	entry_releases(file, fm, e, &en);
	push_ent(&en);
}

/* Every entry of root's 'flags' list, of family `family` (fm), into ents. */
static void read_flags(const char *file, const struct xl_ynode *root, int family,
		       const struct fam *fm)
{
	struct xl_ynode *fl = xl_ymap_get(root, "flags");

	if (!fl || fl->kind != XL_Y_SEQ || fl->n == 0) {
		bad(file, root, "%s", "'flags' must be a non-empty list");
		return;
	}
	for (size_t i = 0; i < fl->n; i++)
		read_entry(file, fl->items[i], family, fm);
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

/* xl_kdefs[] and xl_nflagdefs, in ents' order: the entries the pinned
 * release of their family registers (each one's place in def_index), as
 * offsets into the pool; and xl_flagdef_slots[], where launcher/flags/
 * catalog.c makes an entry into a struct xl_flagdef when it is first asked
 * for. */
static void emit_flagdefs(FILE *out)
{
	size_t ndefs = 0;

	fprintf(out, "const struct xl_kdef xl_kdefs[] = {\n");
	for (size_t i = 0; i < nents; i++) {
		struct ent *e = &ents[i];
		const struct xl_ynode *ta = e->timing_allows && e->timing_allows->kind == XL_Y_SEQ
					    ? e->timing_allows : NULL;

		if (!e->pinned)
			continue;
		e->def_index = (int)ndefs++;
		fprintf(out, "\t{ %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32
			", %d, %d, %d, %u, %d, %s, %s },\n",
			pool_add(e->name), pool_add(e->def), pool_add(e->desc), pool_add(e->reader),
			pool_list(e->values), pool_list(ta), e->order, e->family, index_of(e->type, types),
			e->tags, e->parser ? index_of(e->parser, parsers) : 0, e->icase ? "true" : "false",
			e->def ? "true" : "false");
	}
	if (!ndefs)
		fputs("\t{ 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, false, false },\n", out);
	fprintf(out, "};\nconst size_t xl_nflagdefs = %zu;\n", ndefs);
	fprintf(out, "struct xl_flagdef xl_flagdef_slots[%zu];\n\n", ndefs ? ndefs : 1);
}

/* The variants of every entry, in entry order; returns how many. */
static size_t emit_variants(FILE *out, const struct fam *fams)
{
	size_t n = 0;

	fputs("\nconst struct xl_kvariant xl_kvariants[] = {\n", out);
	for (size_t i = 0; i < nents; i++) {
		const struct ent *e = &ents[i];

		for (size_t k = 0; e->variants && e->variants->kind == XL_Y_SEQ && k < e->variants->n; k++) {
			struct xl_ynode *v = e->variants->items[k];
			const char *rd = xl_ymap_get(v, "reader") ? xl_ymap_get(v, "reader")->str : NULL;
			const char *t = xl_ymap_get(v, "type")->str;
			bool icase = rd && (strstr(rd, "enum-") || strstr(rd, "repeated-enum") ||
					    strstr(rd, "collectives"));

			fprintf(out, "\t{ UINT64_C(0x%" PRIx64 "), %d, %d, %" PRIu32 ", %" PRIu32 " },\n",
				parse_rel(fams[e->family].file, &fams[e->family], xl_ymap_get(v, "releases"), e->name),
				index_of(t, types), icase, pool_add(rd), pool_list(xl_ymap_get(v, "values")));
			n++;
		}
	}
	if (!n)
		fputs("\t{ 0, 0, 0, 0, 0 },\n", out);
	fprintf(out, "};\nconst size_t xl_nkvariants = %zu;\n", n);
	return n;
}

/* The knowledge tables (launcher/flags/knowledge.h) and their string pool. */
static void emit_knowledge(FILE *out, const struct fam *fams, int nf)
{
	size_t nk = 0, var = 0;

	emit_variants(out, fams);
	fputs("\nconst struct xl_kpackage xl_kpackages[] = {\n", out);
	for (int i = 0; i < npkgs; i++)
		fprintf(out, "\t{ %" PRIu32 ", %d, %d, %d, %d },\n", pool_add(pkgs[i].name), pkgs[i].first,
			pkgs[i].n, pkgs[i].nknown, pkgs[i].pinned_i);
	if (!npkgs)
		fputs("\t{ 0, 0, 0, 0, 0 },\n", out);
	fprintf(out, "};\nconst size_t xl_nkpackages = %d;\n", npkgs);
	fputs("\nconst struct xl_krelease xl_kreleases[] = {\n", out);
	for (int i = 0; i < nrels; i++) {
		const struct rel *r = &rels[i];

		fprintf(out, "\t{ %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %d, %s, %s },\n",
			pool_add(r->version), pool_add(r->date), pool_add(r->commit), pool_add(r->xla),
			pool_add(r->libtpu), r->pkg, r->known ? "true" : "false",
			r->observed ? "true" : "false");
	}
	if (!nrels)
		fputs("\t{ 0, 0, 0, 0, 0, 0, false, false },\n", out);
	fprintf(out, "};\nconst size_t xl_nkreleases = %d;\n", nrels);
	fputs("\nconst struct xl_kfamily xl_kfamilies[] = {\n", out);
	for (int i = 0; i < nf; i++)
		fprintf(out, "\t{ { %d, %d }, { %d, %d } },\n", fams[i].axis[0], fams[i].axis[1],
			fams[i].shift[0], fams[i].shift[1]);
	fputs("};\n\nconst struct xl_kflag xl_kflags[] = {\n", out);
	for (size_t i = 0; i < nents; i++) {
		const struct ent *e = &ents[i];
		size_t nv = e->variants && e->variants->kind == XL_Y_SEQ ? e->variants->n : 0;

		if (!fams[e->family].naxis)
			continue;
		fprintf(out, "\t{ %" PRIu32 ", %d, UINT64_C(0x%" PRIx64 "), %d, %zu, %zu, %d, %d, %u, "
			"%" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32 " },\n",
			pool_add(e->name), e->def_index, e->rel, e->family, var, nv,
			index_of(e->type, types), e->icase, e->tags, pool_add(e->reader),
			pool_list(e->values), pool_add(e->desc), pool_add(e->replaced_by),
			pool_add(e->evidence), pool_add(e->removed));
		var += nv;
		nk++;
	}
	if (!nk)
		fputs("\t{ 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },\n", out);
	fprintf(out, "};\nconst size_t xl_nkflags = %zu;\n\n", nk);
	write_pool(out);
}

/* The table into path: 0, or 73 once said. */
static int emit_table(const char *path, const struct fam *fams, int nf)
{
	FILE *out = fopen(path, "w");

	if (!out) {
		perror(path);
		return 73;
	}
	fprintf(out, "/* Generated by tools/gen-catalog from etc/flags/FAMILY.yaml and releases.yaml; do not edit. */\n"
		     "#include \"launcher/flags/flags.h\"\n#include \"launcher/flags/knowledge.h\"\n\n");
	emit_families(out, fams, nf);
	emit_flagdefs(out);
	emit_knowledge(out, fams, nf);
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
	int nf = 0, rc, first = 2;

	if (argc >= 4 && strcmp(argv[2], "--releases") == 0) {
		load_releases(argv[3]);
		first = 4;
	}
	if (argc - first < 1 || argc - first > 32) {
		fprintf(stderr, "usage: gen-catalog OUT.c [--releases RELEASES.yaml] CATALOG.yaml...\n");
		return 64;
	}
	rc = 0;
	for (int a = first; a < argc && !rc; a++) {
		roots[nf] = read_catalog(argv[a], &rc);
		if (!roots[nf])
			break;
		read_family(argv[a], roots[nf], &fams[nf]);
		read_flags(argv[a], roots[nf], nf, &fams[nf]);
		nf++;
	}
	if (!rc) {
		if (first == 4)
			apply_observed(argv[3], fams, nf);
		qsort(ents, nents, sizeof(*ents), cmp_ent);
		check_twice(fams, nf);
		if (failures) {
			fprintf(stderr, "gen-catalog: %d error(s)\n", failures);
			rc = 65;
		} else {
			rc = emit_table(argv[1], fams, nf);
		}
	}
	/* freed on every way out: the sanitizer build runs this too */
	for (int i = 0; i < nf; i++)
		xl_ynode_free(roots[i]);
	xl_ynode_free(rel_root);
	xl_buf_release(&pool);
	free(ents);
	for (size_t i = 0; i < nobs_mem; i++)
		free(obs_mem[i]);
	free(obs_mem);
	return rc;
}
