/* catalog.c - lookups in the compiled flag catalogs, type checks and the
 * boolean rules of each consumer.  The table itself is generated at build
 * time from etc/flags/FAMILY.yaml (tools/gen-catalog.c). */
#include "launcher/flags/flags.h"
#include "launcher/flags/knowledge.h"
#include "launcher/flags/abslreader.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = { "bool", "int", "float", "string", "enum", "list" };

const char *xl_ftype_name(int type)
{
	if (type < 0 || type >= (int)(sizeof(type_names) / sizeof(type_names[0])))
		return "?";
	return type_names[type];
}

const char *xl_ftags_str(unsigned tags, char *buf, size_t n)
{
	static const char *const names[] = { "debug", "cache", "perf-risk", "deprecated", "launcher",
					     "observed" };
	size_t len = 0;

	if (n)
		buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(tags & (1u << i)))
			continue;
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? "," : "", names[i]);
		if (len >= n)
			break;
	}
	return buf;
}

int xl_family_index(const char *name)
{
	for (size_t i = 0; i < xl_nfamilies; i++)
		if (strcmp(xl_families[i].name, name) == 0)
			return (int)i;
	return -1;
}

int xl_flagdef_bool_parser(const struct xl_flagdef *d)
{
	if (d->parser != XL_BP_NONE)
		return d->parser;
	if (xl_families[d->family].bool_parser != XL_BP_NONE)
		return xl_families[d->family].bool_parser;
	return xl_families[d->family].flags ? XL_BP_TSL : XL_BP_ATOI;
}

/* Defined by the generated table, beside xl_kdefs. */
extern struct xl_flagdef xl_flagdef_slots[];

const char *const *xl_klist(uint32_t off)
{
	size_t n = 0;
	const char **v;

	if (!off)
		return NULL;
	for (const char *s = xl_kstr(off); *s; s += strlen(s) + 1)
		n++;
	v = xl_calloc(n + 1, sizeof(*v));
	n = 0;
	for (const char *s = xl_kstr(off); *s; s += strlen(s) + 1)
		v[n++] = s;
	return v;
}

const struct xl_flagdef *xl_flagdef_at(size_t i)
{
	struct xl_flagdef *d = &xl_flagdef_slots[i];
	const struct xl_kdef *k = &xl_kdefs[i];

	if (d->name)
		return d;
	d->family = k->family;
	d->type = k->type;
	d->tags = k->tags;
	d->parser = k->parser;
	d->icase = k->icase;
	d->values = xl_klist(k->values);
	d->def = k->has_def ? xl_kstr(k->def) : NULL;
	d->desc = xl_kstr(k->desc);
	d->reader = k->reader ? xl_kstr(k->reader) : NULL;
	d->order = k->order;
	d->timing_allows = xl_klist(k->timing_allows);
	d->name = xl_kstr(k->name);
	return d;
}

size_t xl_catalog_find_all(const char *name, const struct xl_flagdef **first)
{
	size_t lo = 0, hi = xl_nflagdefs, n = 0;

	/* lower bound of name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(xl_kstr(xl_kdefs[mid].name), name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < xl_nflagdefs && strcmp(xl_kstr(xl_kdefs[lo + n].name), name) == 0)
		xl_flagdef_at(lo + n++);
	*first = n ? &xl_flagdef_slots[lo] : NULL;
	return n;
}

/* Whether family f lists var among its composite variables. */
static bool family_covers(const struct xl_family *f, const char *var)
{
	size_t len = strlen(var);
	const char *p = f->variables;

	if (!f->flags || !var)
		return false;
	while ((p = strstr(p, var)) != NULL) {
		if ((p == f->variables || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

const struct xl_flagdef *xl_catalog_flag(const char *var, const char *name)
{
	const struct xl_flagdef *d;
	size_t n = xl_catalog_find_all(name, &d);

	for (size_t i = 0; i < n; i++)
		if (family_covers(&xl_families[d[i].family], var))
			return &d[i];
	return NULL;
}

const struct xl_flagdef *xl_catalog_env(const char *name)
{
	const struct xl_flagdef *d, *best = NULL;
	size_t n = xl_catalog_find_all(name, &d);

	/* the runtime family speaks for launcher-level variables; otherwise
	 * the first env family in table order */
	for (size_t i = 0; i < n; i++) {
		const struct xl_family *f = &xl_families[d[i].family];

		if (f->flags)
			continue;
		if (strcmp(f->name, "runtime") == 0)
			return &d[i];
		if (!best)
			best = &d[i];
	}
	return best;
}

bool xl_catalog_owned(const char *name)
{
	const struct xl_flagdef *d;
	size_t n;

	if (strncmp(name, "XLAUNCH_", 8) == 0)
		return true;
	n = xl_catalog_find_all(name, &d);
	for (size_t i = 0; i < n; i++)
		if (!xl_families[d[i].family].flags && (d[i].tags & XL_FTAG_LAUNCHER))
			return true;
	return false;
}

int xl_catalog_coverage(const char *var)
{
	int covered = 0;
	bool partial = false;

	for (size_t i = 0; i < xl_nfamilies; i++) {
		if (!family_covers(&xl_families[i], var))
			continue;
		covered++;
		if (!xl_families[i].complete)
			partial = true;
	}
	if (!covered)
		return 2;
	return partial ? 1 : 0;
}

const char *xl_catalog_suggest(const char *var, const char *word)
{
	size_t len = strlen(word);
	size_t max = len <= 3 ? 1 : len <= 8 ? 2 : len / 4 + 1;
	const char *best = NULL;
	size_t bestd = max + 1;

	/* xl_did_you_mean over the applicable names, without building a list */
	for (size_t i = 0; i < xl_nflagdefs; i++) {
		const char *name = xl_kstr(xl_kdefs[i].name);
		const struct xl_family *f = &xl_families[xl_kdefs[i].family];
		size_t dist;

		if (var ? !family_covers(f, var) : f->flags)
			continue;
		if (best && strcmp(best, name) == 0)
			continue;
		dist = xl_edit_distance(word, name, max);
		if (dist < bestd) {
			bestd = dist;
			best = name;
		}
	}
	return best;
}

static bool is_int(const char *s)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	(void)strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool is_float(const char *s)
{
	char *end;
	double v;

	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtod(s, &end);
	return *end == '\0' && errno != ERANGE && !isnan(v);
}

const char *xl_bool_normalize(int parser, const char *v, bool *misread)
{
	static const char *const yes[] = { "y", "yes", "t", "true", "on", "1", NULL };
	static const char *const no[] = { "n", "no", "f", "false", "off", "0", NULL };
	int truth = -1;

	*misread = false;
	for (int i = 0; yes[i]; i++)
		if (strcasecmp(v, yes[i]) == 0)
			truth = 1;
	for (int i = 0; no[i]; i++)
		if (strcasecmp(v, no[i]) == 0)
			truth = 0;

	switch (parser) {
	case XL_BP_TSL:
		if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0)
			return "true";
		if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0)
			return "false";
		return NULL;     /* TSL logs an error and XLA refuses the flag */
	case XL_BP_PYTHON:
		if (truth < 0)
			return NULL; /* bool_env raises ValueError */
		return truth ? "true" : "false";
	case XL_BP_ATOI:
		if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
			return v[0] == 't' ? "true" : "false";
		if (is_int(v))
			return atoll(v) != 0 ? "1" : "0";
		if (truth == 0)
			return "0";       /* "no", "False": atoi() reads 0, as meant */
		if (truth == 1)
			*misread = true;  /* "True", "yes", "on": atoi() reads 0, false */
		return NULL;
	case XL_BP_INT:
		if (is_int(v))
			return atoll(v) != 0 ? "1" : "0";
		if (truth >= 0) {
			*misread = true;  /* strtol: not a number, the consumer keeps its default */
			return NULL;
		}
		return NULL;
	case XL_BP_PREALLOC:
		if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "0") == 0)
			return "false";
		if (truth == 0) {
			*misread = true;  /* "no", "off", "FALSE": jaxlib keeps preallocation on */
			return NULL;
		}
		if (truth == 1)
			return "true";
		*misread = true;          /* any other word reads as true */
		return NULL;
	case XL_BP_PYINT:
		if (is_int(v))
			return atoll(v) != 0 ? "1" : "0";
		return NULL;              /* int() raises */
	case XL_BP_ONE:
		if (strcmp(v, "1") == 0)
			return "1";
		if (truth == 0)
			return "0";       /* "0", "false", "no": false, as meant */
		if (truth == 1)
			*misread = true;  /* "true", "yes", "on": not "1", so false */
		return NULL;
	case XL_BP_ONEZERO:
		if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0)
			return v[0] == '1' ? "1" : "0";
		if (truth == 0)
			*misread = true;  /* "false", "no": kept as a non-empty string, so true */
		if (truth == 1)
			return "1";       /* "true", "yes": a true string; 1 says it plainly */
		return NULL;
	case XL_BP_ABSL:
		if (truth < 0 || strcasecmp(v, "on") == 0 || strcasecmp(v, "off") == 0)
			return NULL; /* libtpu aborts: "Illegal value" */
		return truth ? "true" : "false";
	case XL_BP_NONEMPTY:
		if (!*v || truth == 0) {
			*misread = true;  /* "0", "false": set, so true; "": unset to some readers only */
			return NULL;
		}
		return strcmp(v, "true") == 0 ? "true" : "1";
	default:
		return truth < 0 ? NULL : truth ? "true" : "false";
	}
}

bool xl_list_has(const char *const *list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

char *xl_timing_refused(const struct xl_flagdef *d, const char *value)
{
	struct xl_strv items = XL_STRV_INIT;
	struct xl_buf b = XL_BUF_INIT;

	if (!d->timing_allows)
		return xl_strdup(value ? value : "");
	xl_strv_split(&items, value ? value : "", ",");
	for (size_t i = 0; i < items.n; i++) {
		const char *it = items.v[i] + strspn(items.v[i], " \t");

		if (*it == '-' || xl_list_has(d->timing_allows, it))
			continue;
		xl_buf_addf(&b, "%s%s", b.len ? "," : "", it);
	}
	xl_strv_release(&items);
	if (!b.len) {
		xl_buf_release(&b);
		return NULL;
	}
	return xl_buf_detach(&b);
}

/* s (owned), kept for the process once: a reason made again is the one
 * made first (few reasons exist, and callers keep them as static text). */
static const char *kept(char *s)
{
	static struct xl_strv made = XL_STRV_INIT;

	for (size_t i = 0; i < made.n; i++)
		if (strcmp(made.v[i], s) == 0) {
			free(s);
			return made.v[i];
		}
	xl_strv_push_owned(&made, s);
	return made.v[made.n - 1];
}

/* Why libtpu refuses value for d, with the form it takes where xlaunch
 * learned it; each reason is made once and kept. */
static const char *libtpu_reason(const struct xl_flagdef *d, const char *value)
{
	const char *why = xl_absl_own_error(d, value);
	char *form, *s;

	if (!why || !(form = xl_absl_accepted(d)))
		return why;
	s = xl_asprintf("%s: libtpu takes %s, and aborts at start on anything else", why, form);
	free(form);
	return kept(s);
}

const char *xl_flag_type_error(const struct xl_flagdef *d, const char *value)
{
	bool misread;

	/* libtpu's own reader, with its value types (abslreader.h) */
	if (value && xl_absl_own_type(d) && d->family == xl_family_index("libtpu"))
		return libtpu_reason(d, value);

	switch (d->type) {
	case XL_FT_BOOL:
		if (!value)
			return NULL;      /* bare --name */
		if (!xl_bool_normalize(xl_flagdef_bool_parser(d), value, &misread))
			return misread ? "a boolean this consumer misreads" : "not a boolean";
		return NULL;
	case XL_FT_INT:
		if (!value || !is_int(value))
			return "not an integer";
		return NULL;
	case XL_FT_FLOAT:
		if (!value || !is_float(value))
			return "not a number";
		return NULL;
	case XL_FT_ENUM:
		if (!value)
			return "needs a value";
		for (size_t i = 0; d->values && d->values[i]; i++)
			if (d->icase ? strcasecmp(value, d->values[i]) == 0 : strcmp(value, d->values[i]) == 0)
				return NULL;
		return "not one of the allowed values";
	case XL_FT_LIST:
		/* a list with values: comma-separated items, each one of them
		 * (after a leading + or -, which only change verbosity) or, where
		 * the consumer also takes module names (TORCH_LOGS), a dotted name */
		if (d->values && value) {
			struct xl_strv items = XL_STRV_INIT;
			const char *bad = NULL;

			xl_strv_split(&items, value, ",");
			for (size_t i = 0; i < items.n && !bad; i++) {
				char *it = items.v[i], *q = it;

				/* whitespace is dropped, as TORCH_LOGS's reader does */
				for (char *c = it; *c; c++)
					if (*c != ' ' && *c != '\t' && *c != '\n')
						*q++ = *c;
				*q = '\0';
				if (*it == '+' || *it == '-')
					it++;
				if (*it && !strchr(it, '.') && !xl_list_has(d->values, it))
					bad = "not a list of names torch knows (it raises at import)";
			}
			xl_strv_release(&items);
			return bad;
		}
		return NULL;
	case XL_FT_STRING:
	default:
		return NULL;
	}
}

const struct xl_flagdef *xl_flag_refusing(const struct xl_flagdef *d, const char *value,
					  const char *(*check)(const struct xl_flagdef *, const char *),
					  const char **why)
{
	for (; d; d = d->also)
		if ((*why = check(d, value)) != NULL)
			return d;
	*why = NULL;
	return NULL;
}

const char *xl_flag_reason_in(const struct xl_flagdef *r, const char *why)
{
	/* few (reason, release) pairs exist: each is made once */
	char *s;

	if (!r || !r->release || !why)
		return why;
	s = xl_asprintf("%s in %s", why, r->release);
	return kept(s);
}

const char *xl_flag_value_error(const struct xl_flagdef *d, const char *value)
{
	const char *why;
	const struct xl_flagdef *r = xl_flag_refusing(d, value, xl_flag_type_error, &why);

	return xl_flag_reason_in(r, why);
}
