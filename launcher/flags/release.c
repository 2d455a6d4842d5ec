/* release.c - flags judged against the release the job will load.
 *
 * The catalog (catalog.c) describes each family as its pinned release
 * registers it; the knowledge (knowledge.h) says which releases of jaxlib,
 * torch_xla and jax register each flag.  Here an installed runtime
 * (bundle's xl_runtime) is placed among the releases the knowledge lists,
 * and a flag or variable is judged against exactly that release: registered
 * (checked with that release's type), registered by other releases only (an
 * error that names them and the successor upstream names), or, for a
 * release xlaunch does not know (newer, older, between two it knows) or
 * one assumed because none was found, not confirmable: a warning, never a
 * refusal.  Where two releases are judged (jaxlib and torch_xla in one
 * environment), a value must pass the rules of each.
 *
 * Entries for flags the pinned release lacks, or whose type differs in the
 * judged release, are built from the knowledge on first use and kept for
 * the life of the process (bounded by the size of the tables).
 */
#include "launcher/flags/flags.h"
#include "launcher/flags/knowledge.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

/* ---- placing an installed version ------------------------------------------------ */

static int package_index(const char *name)
{
	for (size_t i = 0; i < xl_nkpackages; i++)
		if (strcmp(xl_kstr(xl_kpackages[i].name), name) == 0)
			return (int)i;
	return -1;
}

static const char *rel_version(int pkg, int index)
{
	return xl_kstr(xl_kreleases[xl_kpackages[pkg].first + index].version);
}

/* The installed version of package pkg in rt, or NULL. */
static const char *installed(const struct xl_runtime *rt, int pkg)
{
	const char *name = xl_kstr(xl_kpackages[pkg].name);

	if (!rt)
		return NULL;
	if (strcmp(name, "jaxlib") == 0)
		return rt->jaxlib;
	if (strcmp(name, "jax") == 0)
		return rt->jax;
	if (strcmp(name, "torch_xla") == 0)
		return rt->torch_xla;
	if (strcmp(name, "libtpu") == 0)
		return rt->libtpu;
	return NULL;
}

/* version without its local label ("2.9.0+cu128" -> "2.9.0"): releases on
 * PyPI carry none, local builds of them do. */
static int cmp_public(const char *version, const char *release, int *out)
{
	char *pub = xl_strndup(version, strcspn(version, "+"));
	int rc = xl_version_compare_str(pub, release, out);

	free(pub);
	return rc;
}

static void place(struct xl_rel_pos *p, int pkg, const char *version)
{
	const struct xl_kpackage *kp = &xl_kpackages[pkg];
	size_t publen = strcspn(version, "+");
	int c;

	p->pkg = pkg;
	p->version = version;
	/* the common case first, without parsing: the very string PyPI gives
	 * the release (a launch places three packages) */
	for (int i = 0; i < kp->nknown; i++) {
		const char *r = rel_version(pkg, i);

		if (strlen(r) == publen && strncmp(r, version, publen) == 0) {
			p->index = i;
			p->how = XL_REL_EXACT;
			return;
		}
	}
	p->index = kp->nknown - 1;
	p->how = XL_REL_NEWER;
	if (cmp_public(version, rel_version(pkg, 0), &c) != 0) {
		p->how = XL_REL_UNREADABLE;
		return;
	}
	if (c < 0) {
		p->index = 0;
		p->how = XL_REL_OLDER;
		return;
	}
	for (int i = 0; i < kp->nknown; i++) {
		if (cmp_public(version, rel_version(pkg, i), &c) != 0)
			break;
		if (c == 0) {
			p->index = i;
			p->how = XL_REL_EXACT;
			return;
		}
		if (c < 0) {
			p->index = i - 1;
			p->how = XL_REL_BETWEEN;
			return;
		}
	}
}

void xl_judge_init(struct xl_judge *j, const struct xl_runtime *rt)
{
	memset(j, 0, sizeof(*j));
	j->rt = rt;
	for (size_t i = 0; i < xl_nkpackages && i < XL_JUDGE_MAX_PKGS; i++) {
		const char *v = installed(rt, (int)i);
		struct xl_rel_pos *p = &j->pos[i];

		p->pkg = (int)i;
		if (v) {
			place(p, (int)i, v);
		} else {
			p->index = xl_kpackages[i].nknown - 1;
			p->how = XL_REL_ASSUMED;
		}
	}
	j->npos = xl_nkpackages < XL_JUDGE_MAX_PKGS ? xl_nkpackages : XL_JUDGE_MAX_PKGS;
}

/* The releases family fam's flags are judged against: each installed
 * package of its axis, else the newest release of its first package
 * (assumed).  Returns how many (0: the family records no releases). */
static size_t targets(const struct xl_judge *j, int fam, const struct xl_rel_pos **out)
{
	const struct xl_kfamily *kf = &xl_kfamilies[fam];
	size_t n = 0;

	if (!j || kf->pkg[0] < 0)
		return 0;
	for (int a = 0; a < 2; a++)
		if (kf->pkg[a] >= 0 && (size_t)kf->pkg[a] < j->npos &&
		    j->pos[kf->pkg[a]].how != XL_REL_ASSUMED)
			out[n++] = &j->pos[kf->pkg[a]];
	if (!n && (size_t)kf->pkg[0] < j->npos)
		out[n++] = &j->pos[kf->pkg[0]];
	return n;
}

static int bit_of(int fam, int pkg, int index)
{
	const struct xl_kfamily *kf = &xl_kfamilies[fam];

	if (pkg < 0 || index < 0)
		return -1;
	for (int a = 0; a < 2; a++)
		if (kf->pkg[a] == pkg)
			return kf->shift[a] + index;
	return -1;
}

static bool registers(const struct xl_kflag *k, const struct xl_rel_pos *t)
{
	int b = bit_of(k->family, t->pkg, t->index);

	return b >= 0 && ((k->rel >> b) & 1);
}

/* ---- entries built from the knowledge --------------------------------------------- */

static struct xl_flagdef **built;     /* xl_nkflags + xl_nkvariants slots */

/* The release whose types release index of package pkg has: itself, or for
 * a release known by its wheel's names (observed), the newest release read
 * from sources before it. */
static int types_index(int pkg, int index)
{
	const struct xl_kpackage *kp;

	if (pkg < 0 || index < 0)
		return index;
	kp = &xl_kpackages[pkg];
	while (index > 0 && xl_kreleases[kp->first + index].observed)
		index--;
	return index;
}

/* The entry of k as release t registers it (a variant where one applies). */
static const struct xl_flagdef *entry_at(const struct xl_kflag *k, const struct xl_rel_pos *t)
{
	size_t slot = (size_t)(k - xl_kflags);
	const struct xl_kvariant *kv = NULL;
	struct xl_flagdef *d;
	int b = bit_of(k->family, t->pkg, types_index(t->pkg, t->index));

	for (uint16_t i = 0; i < k->nvar && b >= 0; i++)
		if ((xl_kvariants[k->var + i].rel >> b) & 1) {
			kv = &xl_kvariants[k->var + i];
			slot = xl_nkflags + k->var + i;
		}
	if (!kv && k->def >= 0)
		return xl_flagdef_at((size_t)k->def);
	if (!built)
		built = xl_calloc(xl_nkflags + xl_nkvariants, sizeof(*built));
	if (built[slot])
		return built[slot];
	d = xl_calloc(1, sizeof(*d));
	if (k->def >= 0)
		*d = *xl_flagdef_at((size_t)k->def);
	d->name = xl_kstr(k->name);
	d->family = k->family;
	d->type = kv ? kv->type : k->type;
	d->tags = k->tags;
	d->icase = kv ? kv->icase : k->icase;
	d->values = xl_klist(kv ? kv->values : k->values);
	d->desc = xl_kstr(k->desc);
	d->reader = (kv ? kv->reader : k->reader) ? xl_kstr(kv ? kv->reader : k->reader) : NULL;
	if (k->def < 0) {
		d->order = -1;
		d->def = NULL;
	}
	built[slot] = d;
	return d;
}

/* "torch_xla 2.9.0": the release t is judged as (process lifetime). */
static const char *release_name(const struct xl_rel_pos *t)
{
	return xl_asprintf("%s %s", xl_kstr(xl_kpackages[t->pkg].name), rel_version(t->pkg, t->index));
}

/* The entry of k for the judged releases t[0..n), all of which register
 * it: t[0]'s, and when another's type or values differ (a variant), a copy
 * of each naming its release, chained by also, so that a value is checked
 * against every release the job loads (xl_flag_refusing). */
static const struct xl_flagdef *entry_for(const struct xl_kflag *k, const struct xl_rel_pos *const *t,
					  size_t n)
{
	static struct chained { const struct xl_flagdef *a, *b, *out; } *made;
	static size_t nmade;
	const struct xl_flagdef *a = entry_at(k, t[0]), *b;
	struct xl_flagdef *ca, *cb;

	if (n < 2 || (b = entry_at(k, t[1])) == a)
		return a;
	for (size_t i = 0; i < nmade; i++)
		if (made[i].a == a && made[i].b == b)
			return made[i].out;
	ca = xl_calloc(1, sizeof(*ca));
	cb = xl_calloc(1, sizeof(*cb));
	*ca = *a;
	*cb = *b;
	ca->release = release_name(t[0]);
	cb->release = release_name(t[1]);
	ca->also = cb;
	made = xl_realloc(made, (nmade + 1) * sizeof(*made));
	made[nmade++] = (struct chained){ a, b, ca };
	return ca;
}

const struct xl_kflag *xl_knowledge_find(const char *name, int fam)
{
	size_t lo = 0, hi = xl_nkflags;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(xl_kstr(xl_kflags[mid].name), name);

		if (c < 0 || (c == 0 && xl_kflags[mid].family < fam))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < xl_nkflags && xl_kflags[lo].family == fam && strcmp(xl_kstr(xl_kflags[lo].name), name) == 0)
		return &xl_kflags[lo];
	return NULL;
}

const char *xl_judge_suggest(const struct xl_judge *j, int fam, const char *word)
{
	const struct xl_rel_pos *t[2];
	size_t n = targets(j, fam, t), len = strlen(word);
	size_t max = len <= 3 ? 1 : len <= 8 ? 2 : len / 4 + 1, bestd = max + 1;
	const char *best = NULL;

	for (size_t i = 0; i < xl_nkflags; i++) {
		const struct xl_kflag *k = &xl_kflags[i];
		size_t d;

		if (k->family != fam || (n && !registers(k, t[0])))
			continue;
		d = xl_edit_distance(word, xl_kstr(k->name), max);
		if (d < bestd) {
			bestd = d;
			best = xl_kstr(k->name);
		}
	}
	return best;
}

/* ---- words a user can act on ------------------------------------------------------- */

char *xl_knowledge_mask_ranges(int fam, uint64_t mask)
{
	const struct xl_kfamily *kf = &xl_kfamilies[fam];
	struct xl_buf b = XL_BUF_INIT;

	for (int a = 0; a < 2; a++) {
		const struct xl_kpackage *kp;
		struct xl_buf r = XL_BUF_INIT;
		int start = -1;

		if (kf->pkg[a] < 0)
			continue;
		kp = &xl_kpackages[kf->pkg[a]];
		for (int i = 0; i <= kp->nknown; i++) {
			bool in = i < kp->nknown && ((mask >> (kf->shift[a] + i)) & 1);

			if (in && start < 0)
				start = i;
			if (in || start < 0)
				continue;
			xl_buf_addf(&r, "%s%s", r.len ? ", " : "", rel_version(kf->pkg[a], start));
			if (i - 1 > start)
				xl_buf_addf(&r, " to %s", rel_version(kf->pkg[a], i - 1));
			start = -1;
		}
		if (r.len)
			xl_buf_addf(&b, "%s%s %s", b.len ? " and " : "", xl_kstr(kp->name), r.buf);
		xl_buf_release(&r);
	}
	return xl_buf_detach(&b);
}

char *xl_knowledge_ranges(const struct xl_kflag *k)
{
	return xl_knowledge_mask_ranges(k->family, k->rel);
}

const struct xl_flagdef *xl_knowledge_entry(const struct xl_kflag *k)
{
	struct xl_rel_pos none = { .pkg = -1, .index = -1 };

	return entry_at(k, &none);
}

/* "jaxlib 0.6.2 (installed for PY)" or "jaxlib 0.6.2 (asked with --release)". */
static char *installed_str(const struct xl_judge *j, const struct xl_rel_pos *t)
{
	const char *pkg = xl_kstr(xl_kpackages[t->pkg].name);

	if (j->rt && j->rt->python)
		return xl_asprintf("%s %s (installed for %s)", pkg, t->version, j->rt->python);
	return xl_asprintf("%s %s (asked with --release)", pkg, t->version);
}

/* Why package t was assumed: "PY has no jaxlib", "libtpu 0.0.42 was
 * given with --release, no jaxlib", "no Python was found: why", or the
 * interpreter's own trouble ("python 'PY': not a Python interpreter"). */
static char *why_assumed(const struct xl_judge *j, const struct xl_rel_pos *t)
{
	const char *pkg = xl_kstr(xl_kpackages[t->pkg].name);
	const struct xl_runtime *rt = j->rt;

	if (!rt)
		return xl_strdup("no Python was looked for");
	if (rt->source && strcmp(rt->source, "--release") == 0) {
		struct xl_buf b = XL_BUF_INIT;

		if (rt->jaxlib)
			xl_buf_addf(&b, "jaxlib %s", rt->jaxlib);
		if (rt->torch_xla)
			xl_buf_addf(&b, "%storch_xla %s", b.len ? ", " : "", rt->torch_xla);
		if (rt->torch)
			xl_buf_addf(&b, "%storch %s", b.len ? ", " : "", rt->torch);
		if (rt->libtpu)
			xl_buf_addf(&b, "%slibtpu %s", b.len ? ", " : "", rt->libtpu);
		if (!b.len && rt->jax)
			xl_buf_addf(&b, "jax %s", rt->jax);
		xl_buf_addf(&b, " was given with --release, no %s", pkg);
		return xl_buf_detach(&b);
	}
	if (rt->python && rt->why)
		return xl_strdup(rt->why);
	if (rt->python)
		return xl_asprintf("%s has no %s", rt->python, pkg);
	return xl_asprintf("no Python was found: %s", rt->why ? rt->why : "none was looked for");
}

char *xl_rel_pos_str(const struct xl_judge *j, const struct xl_rel_pos *t)
{
	const char *pkg = xl_kstr(xl_kpackages[t->pkg].name);
	const char *as = rel_version(t->pkg, t->index);
	char *inst, *out;

	if (t->how == XL_REL_ASSUMED) {
		char *why = why_assumed(j, t);

		out = xl_asprintf("%s %s, the newest release xlaunch knows (%s)", pkg, as, why);
		free(why);
		return out;
	}
	inst = installed_str(j, t);
	switch (t->how) {
	case XL_REL_NEWER:
		out = xl_asprintf("%s, newer than every release xlaunch knows: judged as %s %s", inst, pkg, as);
		break;
	case XL_REL_OLDER:
		out = xl_asprintf("%s, older than every release xlaunch knows: judged as %s %s", inst, pkg, as);
		break;
	case XL_REL_BETWEEN:
		out = xl_asprintf("%s, not a release xlaunch knows: judged as %s %s", inst, pkg, as);
		break;
	case XL_REL_UNREADABLE:
		out = xl_asprintf("%s, not a version xlaunch can place: judged as %s %s", inst, pkg, as);
		break;
	default:
		return inst;
	}
	free(inst);
	return out;
}

char *xl_judge_str(const struct xl_judge *j, int fam)
{
	const struct xl_rel_pos *t[2];
	size_t n = targets(j, fam, t);
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		char *s = xl_rel_pos_str(j, t[i]);

		xl_buf_addf(&b, "%s%s", i ? "; " : "", s);
		free(s);
	}
	return n ? xl_buf_detach(&b) : NULL;
}

/* Who lacks the flag, for its message: "PY has jaxlib 0.10.2" or "jaxlib
 * 0.10.2 (asked with --release)" (an assumed release never refuses). */
static char *holder(const struct xl_judge *j, const struct xl_rel_pos *t)
{
	const char *pkg = xl_kstr(xl_kpackages[t->pkg].name);

	if (j->rt && j->rt->python)
		return xl_asprintf("%s has %s %s", j->rt->python, pkg, t->version);
	return xl_asprintf("%s %s (asked with --release)", pkg, t->version);
}

static bool inexact(const struct xl_rel_pos *t)
{
	return t->how != XL_REL_EXACT && t->how != XL_REL_ASSUMED;
}

/* The change that dropped k, as a clause: a commit ("dropped upstream by
 * openxla/xla 996330ab956f (...)") or the knowledge's own words ("it is no
 * longer read from jax 0.6.1 on"). */
static char *removed_str(const struct xl_kflag *k)
{
	const char *r = xl_kstr(k->removed);

	if (xl_startswith(r, "no longer "))
		return xl_asprintf("it is %s", r);
	return xl_asprintf("dropped upstream by %s", r);
}

/* What upstream says became of k, for a verdict's hint (NULL: nothing). */
static char *successor_hint(const struct xl_kflag *k, bool flags)
{
	if (k->replaced_by)
		return xl_asprintf("upstream replaced it with %s%s", flags ? "--" : "", xl_kstr(k->replaced_by));
	return k->removed ? removed_str(k) : NULL;
}

static void elsewhere(const struct xl_judge *j, const struct xl_kflag *k, const struct xl_rel_pos *t,
		      struct xl_rel_verdict *rv)
{
	bool flags = xl_families[k->family].flags;
	char *ranges = xl_knowledge_ranges(k), *who = holder(j, t);

	rv->status = XL_RS_ELSEWHERE;
	rv->why = xl_asprintf("'%s' is %s by %s; %s, %s", xl_kstr(k->name),
			      flags ? "registered" : "read", ranges, who,
			      flags ? "whose XLA aborts on it"
				    : "which does not read it (the setting has no effect)");
	rv->hint = successor_hint(k, flags);
	free(ranges);
	free(who);
}

/* A release that was assumed (none of the family's packages found) lacks
 * k: the job's may well have it, so a warning that says so. */
static void assumed_lacks(const struct xl_judge *j, const struct xl_kflag *k,
			  const struct xl_rel_pos *t, struct xl_rel_verdict *rv)
{
	bool flags = xl_families[k->family].flags;
	char *ranges = xl_knowledge_ranges(k), *why = why_assumed(j, t);

	rv->status = XL_RS_UNCONFIRMED;
	rv->why = xl_asprintf("'%s' is %s by %s, not by %s %s, the newest release xlaunch knows, which was "
			      "assumed (%s); the release the job loads may %s it",
			      xl_kstr(k->name), flags ? "registered" : "read", ranges,
			      xl_kstr(xl_kpackages[t->pkg].name), rel_version(t->pkg, t->index), why,
			      flags ? "register" : "read");
	rv->hint = successor_hint(k, flags);
	free(ranges);
	free(why);
}

static void unconfirmed(const struct xl_judge *j, const char *name, const struct xl_kflag *k,
			const struct xl_rel_pos *t, struct xl_rel_verdict *rv)
{
	char *where = xl_rel_pos_str(j, t);

	rv->status = XL_RS_UNCONFIRMED;
	if (k) {
		char *ranges = xl_knowledge_ranges(k);

		rv->why = xl_asprintf("'%s' is %s by %s, not by %s %s; the job loads %s, so xlaunch cannot confirm it",
				      name, xl_families[k->family].flags ? "registered" : "read",
				      ranges, xl_kstr(xl_kpackages[t->pkg].name),
				      rel_version(t->pkg, t->index), where);
		free(ranges);
		if (k->replaced_by)
			rv->hint = xl_asprintf("upstream replaced it with %s%s",
					       xl_families[k->family].flags ? "--" : "",
					       xl_kstr(k->replaced_by));
	} else {
		rv->why = xl_asprintf("'%s' is in no release xlaunch knows; the job loads %s, which may %s it",
				      name, where, xl_families[rv->family].flags ? "register" : "read");
	}
	free(where);
}

/* ---- judging a name ---------------------------------------------------------------- */

/* name of family fam against the judged releases. */
static void judge_in_family(const struct xl_judge *j, int fam, const char *name, struct xl_rel_verdict *rv)
{
	const struct xl_rel_pos *t[2];
	size_t n = targets(j, fam, t);
	const struct xl_kflag *k = xl_knowledge_find(name, fam);

	rv->family = fam;
	rv->k = k;
	for (size_t i = 0; i < n; i++) {
		if (k && registers(k, t[i]))
			continue;
		if (inexact(t[i]))
			unconfirmed(j, name, k, t[i], rv);
		else if (k && t[i]->how == XL_REL_ASSUMED)
			assumed_lacks(j, k, t[i], rv);
		else if (k)
			elsewhere(j, k, t[i], rv);
		else
			rv->status = XL_RS_UNKNOWN;
		return;
	}
	rv->status = XL_RS_REGISTERED;
	rv->d = entry_for(k, t, n);
}

void xl_judge_name(const struct xl_judge *j, int fam, const char *name, struct xl_rel_verdict *rv)
{
	memset(rv, 0, sizeof(*rv));
	rv->family = fam;
	if (j && xl_kfamilies[fam].pkg[0] >= 0) {
		judge_in_family(j, fam, name, rv);
		return;
	}
	rv->status = XL_RS_REGISTERED;
}

const struct xl_flagdef *xl_catalog_flag_at(const struct xl_judge *j, const char *var, const char *name,
					    struct xl_rel_verdict *rv)
{
	int xla = xl_family_index("xla");
	const struct xl_flagdef *d = xl_catalog_flag(var, name);

	memset(rv, 0, sizeof(*rv));
	rv->family = -1;
	/* LIBTPU_INIT_ARGS: libtpu's own flags, as the release the job loads
	 * registers them (its XLA takes none of XLA_FLAGS's) */
	if (j && strcmp(var, "LIBTPU_INIT_ARGS") == 0) {
		int tpu = xl_family_index("libtpu");

		if (tpu >= 0 && xl_kfamilies[tpu].pkg[0] >= 0) {
			judge_in_family(j, tpu, name, rv);
			return rv->d;
		}
	}
	/* XLA_FLAGS: the XLA of the jaxlib and torch_xla releases listed */
	if (!j || strcmp(var, "XLA_FLAGS") != 0 || xla < 0 || xl_kfamilies[xla].pkg[0] < 0) {
		rv->status = d ? XL_RS_REGISTERED : XL_RS_UNKNOWN;
		rv->d = d;
		return d;
	}
	judge_in_family(j, xla, name, rv);
	return rv->d;
}

const struct xl_flagdef *xl_catalog_env_at(const struct xl_judge *j, const char *name,
					   struct xl_rel_verdict *rv)
{
	const struct xl_flagdef *d = xl_catalog_env(name);

	memset(rv, 0, sizeof(*rv));
	rv->family = d ? d->family : -1;
	if (j && (!d || xl_kfamilies[d->family].pkg[0] >= 0)) {
		/* the families that record releases, in table order */
		for (size_t f = 0; f < xl_nfamilies; f++) {
			if (xl_families[f].flags || xl_kfamilies[f].pkg[0] < 0)
				continue;
			if (d && (int)f != d->family)
				continue;
			if (!d && !xl_knowledge_find(name, (int)f))
				continue;
			judge_in_family(j, (int)f, name, rv);
			return rv->d;
		}
	}
	rv->status = d ? XL_RS_REGISTERED : XL_RS_UNKNOWN;
	rv->d = d;
	return d;
}

void xl_rel_verdict_release(struct xl_rel_verdict *rv)
{
	free(rv->why);
	free(rv->hint);
	memset(rv, 0, sizeof(*rv));
}

const char *xl_judge_libtpu(const struct xl_judge *j)
{
	return j && j->rt ? j->rt->libtpu : NULL;
}

const char *xl_knowledge_pinned(const char *pkg)
{
	int p = package_index(pkg);

	return p < 0 ? NULL : rel_version(p, xl_kpackages[p].pinned);
}

json_t *xl_judge_json(const struct xl_judge *j)
{
	json_t *o = json_object(), *pk = json_array();

	json_object_set_new(o, "runtime", j->rt ? xl_runtime_json(j->rt) : json_null());
	for (size_t i = 0; i < j->npos; i++) {
		static const char *const hows[] = { "exact", "newer", "older", "between", "unreadable",
						    "assumed" };
		const struct xl_rel_pos *p = &j->pos[i];

		json_array_append_new(pk, json_pack("{s:s,s:o,s:s,s:s}",
			"package", xl_kstr(xl_kpackages[p->pkg].name),
			"installed", p->version ? json_string(p->version) : json_null(),
			"judged_as", rel_version(p->pkg, p->index), "how", hows[p->how]));
	}
	json_object_set_new(o, "packages", pk);
	{
		int jl = package_index("jaxlib");
		const struct xl_krelease *r = jl >= 0 ?
			&xl_kreleases[xl_kpackages[jl].first + xl_kpackages[jl].pinned] : NULL;

		if (r)
			json_object_set_new(o, "reader_model", json_pack("{s:s,s:s}", "jaxlib",
						xl_kstr(r->version), "xla_commit", xl_kstr(r->xla)));
	}
	return o;
}

size_t xl_knowledge_only(const char *name, const struct xl_flagdef **out, size_t max)
{
	size_t m = 0;

	for (size_t f = 0; f < xl_nfamilies && m < max; f++) {
		const struct xl_kflag *k = xl_knowledge_find(name, (int)f);

		if (k && k->def < 0)
			out[m++] = xl_knowledge_entry(k);
	}
	return m;
}

bool xl_flag_releases_get(const char *name, int fam, struct xl_flag_releases *r)
{
	const struct xl_kflag *k = fam >= 0 ? xl_knowledge_find(name, fam) : NULL;

	memset(r, 0, sizeof(*r));
	if (!k)
		return false;
	r->releases = xl_knowledge_ranges(k);
	for (uint16_t i = 0; i < k->nvar && r->nvariants < XL_MAX_VARIANTS; i++) {
		const struct xl_kvariant *v = &xl_kvariants[k->var + i];
		struct xl_flag_variant *fv = &r->variants[r->nvariants++];

		fv->releases = xl_knowledge_mask_ranges(k->family, v->rel);
		fv->type = v->type;
		fv->values = v->values ? xl_kstr(v->values) : NULL;
	}
	r->removed = k->removed ? xl_kstr(k->removed) : NULL;
	r->replaced_by = k->replaced_by ? xl_kstr(k->replaced_by) : NULL;
	r->evidence = k->evidence ? xl_kstr(k->evidence) : NULL;
	return true;
}

void xl_flag_releases_release(struct xl_flag_releases *r)
{
	free(r->releases);
	for (size_t i = 0; i < r->nvariants; i++)
		free(r->variants[i].releases);
	memset(r, 0, sizeof(*r));
}
