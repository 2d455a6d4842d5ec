/* lint.c - reports on a composite flag string (XLA_FLAGS, LIBTPU_INIT_ARGS,
 * TF_XLA_FLAGS) or a single variable's value, mirroring how the consumer
 * reads it.  Tokens come from xl_flags_tokenize (flagstr.c); names, types
 * and tags from the compiled catalogs. */
#include "launcher/catalog.h"

#include <stdlib.h>
#include <string.h>

static void add(struct xl_lint *l, enum xl_severity sev, const char *code, const char *token, size_t offset,
		char *message, char *suggestion)
{
	struct xl_lint_report *r;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xl_realloc(l->v, l->cap * sizeof(*l->v));
	}
	r = &l->v[l->n++];
	r->sev = sev;
	r->code = code;
	r->token = xl_strdup(token ? token : "");
	r->offset = offset;
	r->message = message;
	r->suggestion = suggestion;
	if (sev == XL_SEV_ERROR)
		l->errors++;
	else if (sev == XL_SEV_WARNING)
		l->warnings++;
}

void xl_lint_release(struct xl_lint *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].token);
		free(l->v[i].message);
		free(l->v[i].suggestion);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Suggestion for an enum value: the closest allowed value, or the list. */
static char *enum_hint(const struct xl_flagdef *d, const char *value)
{
	const char *best = value ? xl_did_you_mean(value, d->values) : NULL;
	struct xl_buf b = XL_BUF_INIT;

	if (best)
		return xl_asprintf("did you mean '%s'?", best);
	xl_buf_adds(&b, "one of: ");
	for (size_t i = 0; d->values[i]; i++)
		xl_buf_addf(&b, "%s%s", i ? ", " : "", d->values[i]);
	return xl_buf_detach(&b);
}

/* The type problem of value for d, as a report, when there is one. */
static void check_value(struct xl_lint *l, const char *var, const struct xl_flagdef *d,
			const char *value, const char *token, size_t off, bool is_flag)
{
	const char *why = xl_flag_type_error(d, value);
	const char *dash = is_flag ? "--" : "";
	bool misread = false;

	if (!value && d->type != XL_FT_BOOL) {
		add(l, XL_SEV_ERROR, "missing-value", token, off,
		    xl_asprintf("%s: %s%s takes a %s value; without '=' XLA does not read the next word as its value",
				var, dash, d->name, xl_ftype_name(d->type)),
		    xl_asprintf("write --%s=VALUE", d->name));
		return;
	}
	if (!why)
		return;
	if (d->type == XL_FT_BOOL) {
		int parser = xl_flagdef_bool_parser(d);
		const char *t = xl_bool_normalize(parser, "1", &misread);
		const char *f = xl_bool_normalize(parser, "0", &misread);

		(void)xl_bool_normalize(parser, value, &misread);
		add(l, XL_SEV_ERROR, misread ? "misread-bool" : "type", token, off,
		    misread ? xl_asprintf("%s: %s%s='%s' looks boolean but %s reads it differently",
					  var, dash, d->name, value, xl_families[d->family].name)
			    : xl_asprintf("%s: %s%s='%s' is not a boolean", var, dash, d->name, value),
		    xl_asprintf("write %s or %s", t, f));
		return;
	}
	if (d->type == XL_FT_ENUM) {
		add(l, XL_SEV_ERROR, "type", token, off,
		    value ? xl_asprintf("%s: %s%s='%s' is not an allowed value", var, dash, d->name, value)
			  : xl_asprintf("%s: %s%s needs a value", var, dash, d->name),
		    enum_hint(d, value));
		return;
	}
	add(l, XL_SEV_ERROR, "type", token, off,
	    xl_asprintf("%s: %s%s='%s' is %s (%s expected)", var, dash, d->name, value, why,
			xl_ftype_name(d->type)),
	    NULL);
}

static void check_tags(struct xl_lint *l, const char *var, const struct xl_flagdef *d,
		       const char *token, size_t off, unsigned flags)
{
	if ((d->tags & XL_FTAG_DEBUG) && (flags & XL_LINT_TIMING))
		add(l, XL_SEV_ERROR, "debug-in-timing", token, off,
		    xl_asprintf("%s: '%s' is a debug setting; a timing run must not carry it", var, d->name),
		    xl_asprintf("remove %s from timing profiles", d->name));
	if (d->tags & XL_FTAG_DEPRECATED)
		add(l, XL_SEV_WARNING, "deprecated", token, off,
		    xl_asprintf("%s: '%s' is deprecated upstream", var, d->name), NULL);
}

/* The plain value of a single variable. */
static void lint_env_value(const char *var, const char *s, unsigned flags, struct xl_lint *l)
{
	const struct xl_flagdef *d = xl_catalog_env(var);

	if (!d) {
		const char *dym = xl_catalog_suggest(NULL, var);

		add(l, XL_SEV_WARNING, "unknown-variable", var, 0,
		    xl_asprintf("%s: not in any catalog", var),
		    dym ? xl_asprintf("did you mean '%s'?", dym) : NULL);
		return;
	}
	check_value(l, var, d, s, s, 0, false);
	check_tags(l, var, d, s, 0, flags);
}

struct seen {
	const char *name;
	const struct xl_token *tok;
	const struct xl_flagdef *d;
};

static bool same_value(const struct xl_flagdef *d, const char *a, const char *b)
{
	bool m;

	if (d && d->type == XL_FT_BOOL) {
		int parser = xl_flagdef_bool_parser(d);
		const char *x = a ? xl_bool_normalize(parser, a, &m) : "true";
		const char *y = b ? xl_bool_normalize(parser, b, &m) : "true";

		if (x && y)
			return strcmp(x, y) == 0;
	}
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

void xl_lint_string(const char *var, const char *s, unsigned flags, struct xl_lint *l)
{
	struct xl_tokens toks;
	struct seen *seen;
	char *err = NULL;
	size_t nseen = 0, lead;
	int coverage;
	bool stopped = false;

	if (!xl_is_composite_var(var)) {
		lint_env_value(var, s, flags, l);
		return;
	}
	coverage = xl_catalog_coverage(var);
	lead = strspn(s, " \t\n\r\f\v");
	if (s[lead] && s[lead] != '-') {
		size_t end = lead + strcspn(s + lead, " \t\n\r\f\v");
		char *word = xl_strndup(s + lead, end - lead);

		add(l, XL_SEV_ERROR, "flags-file", word, lead,
		    xl_asprintf("%s does not start with '-': XLA reads the whole value as the path of a flags file ('%s')",
				var, word),
		    xl_strdup("start the value with --name=value tokens"));
		free(word);
		stopped = true;
	}
	if (!xl_flags_tokenize(s, &toks, &err)) {
		add(l, XL_SEV_ERROR, "quote", s, 0, xl_asprintf("%s: %s", var, err), NULL);
		free(err);
		return;
	}
	seen = xl_calloc(toks.n ? toks.n : 1, sizeof(*seen));
	for (size_t i = 0; i < toks.n; i++) {
		const struct xl_token *t = &toks.v[i];
		const struct xl_flagdef *d;

		if (t->kind == XL_TOK_BARE) {
			struct xl_buf ign = XL_BUF_INIT;
			size_t nign = toks.n - i - 1;
			const struct xl_flagdef *env = xl_catalog_env(t->name);
			const struct xl_flagdef *asflag = xl_catalog_flag(var, t->name);

			for (size_t k = i + 1; k < toks.n && k < i + 4; k++)
				xl_buf_addf(&ign, "%s%s", k > i + 1 ? " " : "", toks.v[k].raw);
			if (nign > 3)
				xl_buf_adds(&ign, " ...");
			if (stopped && i == 0) {
				xl_buf_release(&ign);
				continue;   /* already reported as a flags-file path */
			}
			if (t->value) {
				add(l, XL_SEV_ERROR, "bare-assignment", t->raw, t->offset,
				    xl_asprintf("%s: '%s' is a KEY=VALUE word, not a flag: XLA stops reading here%s%s%s",
						var, t->raw, nign ? " and ignores the " : "",
						nign ? xl_buf_str(&ign) : "", nign ? " after it" : ""),
				    env ? xl_asprintf("%s is an environment variable: set it in the profile's env, not in %s",
						      t->name, var)
					: asflag ? xl_asprintf("did you mean '--%s'?", t->raw)
						 : NULL);
			} else {
				const char *dym = xl_catalog_suggest(var, t->name);

				add(l, XL_SEV_ERROR, "bare-word", t->raw, t->offset,
				    xl_asprintf("%s: '%s' does not start with '--': XLA stops reading here%s%s%s",
						var, t->raw, nign ? " and ignores " : "",
						nign ? xl_buf_str(&ign) : "", nign ? " after it" : ""),
				    asflag ? xl_asprintf("did you mean '--%s'?", t->raw)
					   : dym ? xl_asprintf("did you mean '--%s'?", dym) : NULL);
			}
			xl_buf_release(&ign);
			stopped = true;
			continue;
		}
		if (!t->name || !*t->name) {
			add(l, XL_SEV_ERROR, "empty-flag", t->raw, t->offset,
			    xl_asprintf("%s: '%s' names no flag", var, t->raw), NULL);
			continue;
		}
		if (t->single_dash)
			add(l, XL_SEV_NOTE, "single-dash", t->raw, t->offset,
			    xl_asprintf("%s: '%s' is written with one dash", var, t->raw),
			    xl_asprintf("write --%s", t->raw + 1));
		d = xl_catalog_flag(var, t->name);
		if (!d) {
			const char *dym = xl_catalog_suggest(var, t->name);
			const struct xl_flagdef *other;
			char *hint;

			if (coverage == 2) {
				add(l, XL_SEV_NOTE, "uncataloged", t->raw, t->offset,
				    xl_asprintf("%s: no catalog covers this variable; '%s' is not checked",
						var, t->name), NULL);
			} else {
				other = strcmp(var, "XLA_FLAGS") == 0
					? xl_catalog_flag("LIBTPU_INIT_ARGS", t->name) : NULL;
				if (other)
					hint = xl_asprintf("'%s' is a libtpu flag: put it in LIBTPU_INIT_ARGS", t->name);
				else if (dym)
					hint = xl_asprintf("did you mean '%s'?", dym);
				else
					hint = NULL;
				add(l, coverage == 0 ? XL_SEV_ERROR : XL_SEV_WARNING, "unknown-flag",
				    t->raw, t->offset,
				    coverage == 0
					? xl_asprintf("%s: unknown flag '%s': XLA aborts at backend start", var, t->name)
					: xl_asprintf("%s: '%s' is not in the (partial) catalog", var, t->name),
				    hint);
			}
		} else {
			check_value(l, var, d, t->value, t->raw, t->offset, true);
			check_tags(l, var, d, t->raw, t->offset, flags);
		}
		/* the same flag twice */
		for (size_t k = 0; k < nseen; k++) {
			if (strcmp(seen[k].name, t->name) != 0)
				continue;
			if (same_value(d, seen[k].tok->value, t->value))
				add(l, XL_SEV_WARNING, "duplicate", t->raw, t->offset,
				    xl_asprintf("%s: '%s' is set twice to the same value (first at column %zu)",
						var, t->name, seen[k].tok->offset + 1),
				    xl_asprintf("remove one of the two"));
			else
				add(l, XL_SEV_ERROR, "conflict", t->raw, t->offset,
				    xl_asprintf("%s: '%s' is set twice with different values ('%s' at column %zu, then '%s'); the last one wins",
						var, t->name, seen[k].tok->raw, seen[k].tok->offset + 1, t->raw),
				    xl_asprintf("keep one of '%s' and '%s'", seen[k].tok->raw, t->raw));
			seen[k].tok = t;
			goto next;
		}
		seen[nseen].name = t->name;
		seen[nseen].tok = t;
		seen[nseen].d = d;
		nseen++;
next:;
	}
	free(seen);
	xl_tokens_release(&toks);
}
