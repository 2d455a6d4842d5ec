/* lint.c - reports on a composite flag string (XLA_FLAGS, LIBTPU_INIT_ARGS,
 * TF_XLA_FLAGS) or a single variable's value, mirroring how the consumer
 * reads it.  Tokens come from xl_flags_tokenize (flagstr.c); names, types
 * and tags from the compiled catalogs. */
#include "launcher/flags/flags.h"
#include "launcher/flags/xlareader.h"
#include "launcher/flags/abslreader.h"

#include <errno.h>
#include <stdio.h>
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
	memset(r, 0, sizeof(*r));
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
		free(l->v[i].file);
	}
	free(l->v);
	free(l->verdict_detail);
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
	const char *why;
	/* with two releases judged, the one whose rules refuse it (named) */
	const struct xl_flagdef *r = xl_flag_refusing(d, value, xl_flag_type_error, &why);
	const char *dash = is_flag ? "--" : "";
	const char *in = r && r->release ? " in " : "", *rel = r && r->release ? r->release : "";
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
	d = r;
	if (d->type == XL_FT_BOOL) {
		int parser = xl_flagdef_bool_parser(d);
		const char *t = xl_bool_normalize(parser, "1", &misread);
		const char *f = xl_bool_normalize(parser, "0", &misread);

		(void)xl_bool_normalize(parser, value, &misread);
		add(l, XL_SEV_ERROR, misread ? "misread-bool" : "type", token, off,
		    misread ? xl_asprintf("%s: %s%s='%s' looks boolean but %s%s%s reads it differently",
					  var, dash, d->name, value, xl_families[d->family].name, in, rel)
			    : xl_asprintf("%s: %s%s='%s' is not a boolean%s%s", var, dash, d->name, value,
					  in, rel),
		    xl_asprintf("write %s or %s", t, f ? f : "leave it unset"));
		return;
	}
	if (d->type == XL_FT_ENUM) {
		add(l, XL_SEV_ERROR, "type", token, off,
		    value ? xl_asprintf("%s: %s%s='%s' is not an allowed value%s%s", var, dash, d->name,
					value, in, rel)
			  : xl_asprintf("%s: %s%s needs a value", var, dash, d->name),
		    enum_hint(d, value));
		return;
	}
	add(l, XL_SEV_ERROR, "type", token, off,
	    xl_asprintf("%s: %s%s='%s' is %s (%s expected%s%s)", var, dash, d->name, value, why,
			xl_ftype_name(d->type), in, rel),
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

/* The plain value of a single variable, judged against j's releases. */
static void lint_env_value(const struct xl_judge *j, const char *var, const char *s, unsigned flags,
			   struct xl_lint *l)
{
	struct xl_rel_verdict rv;
	const struct xl_flagdef *d = xl_catalog_env_at(j, var, &rv);

	if (!d) {
		const char *dym = xl_catalog_suggest(NULL, var);

		if (rv.status == XL_RS_ELSEWHERE)
			add(l, XL_SEV_ERROR, "not-in-release", var, 0, xl_strdup(rv.why),
			    rv.hint ? xl_strdup(rv.hint) : NULL);
		else if (rv.status == XL_RS_UNCONFIRMED)
			add(l, XL_SEV_WARNING, "unconfirmed", var, 0, xl_strdup(rv.why), NULL);
		else
			add(l, XL_SEV_WARNING, "unknown-variable", var, 0,
			    xl_asprintf("%s: not in any catalog", var),
			    dym ? xl_asprintf("did you mean '%s'?", dym) : NULL);
		xl_rel_verdict_release(&rv);
		return;
	}
	xl_rel_verdict_release(&rv);
	check_value(l, var, d, s, s, 0, false);
	check_tags(l, var, d, s, 0, flags);
}

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

/* Where the reports about one source go: the string itself, or a flags
 * file (then every report also gets the file, line and column). */
struct src {
	const char *var;
	const char *text;
	size_t len;
	const char *file;        /* NULL: the variable's value */
	int coverage;
	int verdict;             /* enum xl_xla_verdict, for XLA_FLAGS */
	unsigned flags;
	const struct xl_judge *judge; /* the releases judged against, or NULL (pinned) */
};

static void place(const struct src *sc, struct xl_lint *l, size_t from)
{
	if (!sc->file)
		return;
	for (size_t i = from; i < l->n; i++) {
		struct xl_lint_report *r = &l->v[i];
		unsigned line = 1, col = 1;

		for (size_t k = 0; k < r->offset && k < sc->len; k++) {
			if (sc->text[k] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		r->file = xl_strdup(sc->file);
		r->line = line;
		r->col = col;
	}
}

/* The words XLA never reads: from the first one without a leading '-'. */
static void lint_rest(const struct src *sc, const struct xl_xla_words *w, struct xl_lint *l)
{
	const char *var = sc->var, *p = sc->text + w->stop, *end = sc->text + sc->len;
	size_t wl = strcspn(p, " \t\r\n"), n = 0;
	struct xl_buf ign = XL_BUF_INIT;
	char *word, *eq;
	const struct xl_flagdef *env, *asflag;

	if (w->stop >= sc->len)
		return;
	if ((size_t)(end - p) < wl)
		wl = (size_t)(end - p);
	word = xl_strndup(p, wl);
	for (const char *q = p + wl; q < end && n < 4;) {
		size_t k;

		while (q < end && strchr(" \t\r\n", *q) && *q)
			q++;
		if (q >= end || !*q)
			break;
		k = strcspn(q, " \t\r\n");
		if (n < 3)
			xl_buf_addf(&ign, "%s%.*s", n ? " " : "", (int)k, q);
		else
			xl_buf_adds(&ign, " ...");
		n++;
		q += k;
	}
	eq = strchr(word, '=');
	if (eq)
		*eq = '\0';
	env = xl_catalog_env(word);
	asflag = xl_catalog_flag(var, word);
	if (eq) {
		*eq = '=';
		add(l, XL_SEV_ERROR, "bare-assignment", word, w->stop,
		    xl_asprintf("%s: '%s' is a KEY=VALUE word, not a flag: XLA stops reading here%s%s%s",
				var, word, n ? " and ignores the " : "", n ? xl_buf_str(&ign) : "",
				n ? " after it" : ""),
		    env ? xl_asprintf("%.*s is an environment variable: set it in the profile's env, not in %s",
				      (int)(eq - word), word, var)
			: asflag ? xl_asprintf("did you mean '--%s'?", word) : NULL);
	} else {
		const char *dym = xl_catalog_suggest(var, word);

		add(l, XL_SEV_ERROR, "bare-word", word, w->stop,
		    xl_asprintf("%s: '%s' does not start with '--': XLA stops reading here%s%s%s",
				var, word, n ? " and ignores " : "", n ? xl_buf_str(&ign) : "",
				n ? " after it" : ""),
		    asflag ? xl_asprintf("did you mean '--%s'?", word)
			   : dym ? xl_asprintf("did you mean '--%s'?", dym) : NULL);
	}
	xl_buf_release(&ign);
	free(word);
}

static void lint_unknown(const struct src *sc, const struct xl_xla_word *x, const char *name,
			 struct xl_lint *l)
{
	const char *var = sc->var, *dym = xl_catalog_suggest(var, name);
	const struct xl_flagdef *other;
	char *hint;

	if (sc->coverage == 2) {
		add(l, XL_SEV_NOTE, "uncataloged", x->text, x->start,
		    xl_asprintf("%s: no catalog covers this variable; '%s' is not checked", var, name),
		    NULL);
		return;
	}
	other = strcmp(var, "XLA_FLAGS") == 0 ? xl_catalog_flag("LIBTPU_INIT_ARGS", name) : NULL;
	if (other && other->family != xl_family_index("xla"))
		hint = xl_asprintf("'%s' is a libtpu flag: put it in LIBTPU_INIT_ARGS", name);
	else if (dym)
		hint = xl_asprintf("did you mean '%s'?", dym);
	else
		hint = NULL;
	if (sc->coverage != 0) {
		const char *tpu = sc->judge ? xl_judge_libtpu(sc->judge) : NULL;

		add(l, XL_SEV_WARNING, "unknown-flag", x->text, x->start,
		    tpu ? xl_asprintf("%s: '%s' is not in the (partial) catalog; the job loads libtpu %s, which may register it",
				      var, name, tpu)
			: xl_asprintf("%s: '%s' is not in the (partial) catalog", var, name), hint);
		return;
	}
	/* XLA looks for unknown flags only once every value parsed */
	add(l, XL_SEV_ERROR, "unknown-flag", x->text, x->start,
	    sc->verdict == XL_XLA_PARSE_FAILS
		? xl_asprintf("%s: unknown flag '%s': XLA refuses a value first and would abort on this one once that is fixed",
			      var, name)
		: xl_asprintf("%s: unknown flag '%s': XLA aborts at backend start", var, name),
	    hint);
	l->v[l->n - 1].aborts = true;
}

/* A --name word no flag of the judged release takes: a flag without its
 * value, a flag of other releases, one xlaunch cannot confirm, or unknown. */
static void lint_not_taken(const struct src *sc, const struct xl_xla_word *x, const char *name,
			   const char *value, struct xl_lint *l)
{
	const char *var = sc->var;
	struct xl_rel_verdict rv;
	const struct xl_flagdef *d = xl_catalog_flag_at(sc->judge, var, name, &rv);

	if (d && !value) {
		add(l, XL_SEV_ERROR, "missing-value", x->text, x->start,
		    xl_asprintf("%s: --%s takes a %s value; without '=' no flag takes the word and XLA aborts on it as unknown",
				var, d->name, xl_ftype_name(d->type)),
		    xl_asprintf("write --%s=VALUE", d->name));
		l->v[l->n - 1].aborts = sc->coverage == 0 && sc->verdict != XL_XLA_PARSE_FAILS;
	} else if (rv.status == XL_RS_ELSEWHERE) {
		add(l, XL_SEV_ERROR, "not-in-release", x->text, x->start,
		    xl_asprintf("%s: %s", var, rv.why), rv.hint ? xl_strdup(rv.hint) : NULL);
		l->v[l->n - 1].aborts = sc->verdict != XL_XLA_PARSE_FAILS;
	} else if (rv.status == XL_RS_UNCONFIRMED) {
		const char *dym = xl_catalog_suggest(var, name);

		add(l, XL_SEV_WARNING, "unconfirmed", x->text, x->start,
		    xl_asprintf("%s: %s", var, rv.why),
		    rv.hint ? xl_strdup(rv.hint) : dym ? xl_asprintf("did you mean '%s'?", dym) : NULL);
	} else {
		lint_unknown(sc, x, name, l);
	}
	xl_rel_verdict_release(&rv);
}

struct seen {
	const char *name;
	const struct xl_xla_word *tok;
	const struct xl_flagdef *d;
};

static void lint_words(const struct src *sc, struct xl_lint *l)
{
	const char *var = sc->var;
	struct xl_xla_words w;
	struct seen *seen;
	size_t nseen = 0, first = l->n;
	bool ended = false;

	xl_xla_split(sc->text, sc->len, &w);
	seen = xl_calloc(w.n ? w.n : 1, sizeof(*seen));
	for (size_t i = 0; i < w.n; i++) {
		const struct xl_xla_word *x = &w.v[i];
		const char *t = x->text, *why, *eq;
		const struct xl_flagdef *d;
		enum xl_xla_match m;
		char *name, *value;

		if (x->unterminated)
			add(l, XL_SEV_WARNING, "quote", t, x->start,
			    xl_asprintf("%s: the quote in '%s' is not closed: XLA takes everything to the end as the value",
					var, t), xl_strdup("close the quote"));
		if (x->quoted && i + 1 < w.n && w.v[i + 1].start == x->end)
			add(l, XL_SEV_WARNING, "glued-word", w.v[i + 1].text, w.v[i + 1].start,
			    xl_asprintf("%s: '%s' starts right after a closing quote: XLA reads it as a word of its own",
					var, w.v[i + 1].text),
			    xl_strdup("put a space after the closing quote"));
		if (ended)
			continue;
		m = xl_xla_match_at(sc->judge, var, t, &d, &why);
		if (m == XL_XLA_END) {
			add(l, XL_SEV_ERROR, "end-of-flags", t, x->start,
			    xl_asprintf("%s: '--' ends the flags: XLA leaves it and the %zu word%s after it over and aborts on them as unknown",
					var, w.n - i - 1, w.n - i - 1 == 1 ? "" : "s"), NULL);
			l->v[l->n - 1].aborts = sc->coverage == 0 && sc->verdict != XL_XLA_PARSE_FAILS;
			ended = true;
			continue;
		}
		if (t[1] != '-') {
			/* "-name": no flag consumes a single dash */
			if (!t[1] || t[1] == '=') {
				add(l, XL_SEV_ERROR, "empty-flag", t, x->start,
				    xl_asprintf("%s: '%s' names no flag", var, t), NULL);
				l->v[l->n - 1].aborts = sc->coverage == 0 && sc->verdict != XL_XLA_PARSE_FAILS;
				continue;
			}
			eq = strchr(t + 1, '=');
			name = xl_strndup(t + 1, eq ? (size_t)(eq - t - 1) : strlen(t + 1));
			if (xl_catalog_flag(var, name) && sc->coverage != 2) {
				add(l, sc->coverage == 0 ? XL_SEV_ERROR : XL_SEV_WARNING, "single-dash", t,
				    x->start,
				    xl_asprintf("%s: '%s' is written with one dash: no flag takes it%s", var, t,
						sc->coverage == 0 ? " and XLA aborts on it as unknown" : ""),
				    xl_asprintf("write -%s", t));
				l->v[l->n - 1].aborts = sc->coverage == 0 && sc->verdict != XL_XLA_PARSE_FAILS;
			} else {
				lint_unknown(sc, x, t, l);
			}
			free(name);
			continue;
		}
		eq = strchr(t + 2, '=');
		name = xl_strndup(t + 2, eq ? (size_t)(eq - t - 2) : strlen(t + 2));
		value = eq ? xl_strdup(eq + 1) : NULL;
		if (!*name) {
			add(l, XL_SEV_ERROR, "empty-flag", t, x->start,
			    xl_asprintf("%s: '%s' names no flag", var, t), NULL);
			l->v[l->n - 1].aborts = sc->coverage == 0 && sc->verdict != XL_XLA_PARSE_FAILS;
			goto next;
		}
		if (m == XL_XLA_UNKNOWN || m == XL_XLA_UNCONFIRMED) {
			lint_not_taken(sc, x, name, value, l);
			goto next;
		}
		if (d->reader) {
			if (m == XL_XLA_BAD_VALUE) {
				char *hint = NULL;

				if (d->values && value)
					hint = enum_hint(d, value);
				else if (d->type == XL_FT_BOOL && value)
					hint = xl_strdup("write true or false");
				add(l, XL_SEV_ERROR, "type", t, x->start,
				    value ? xl_asprintf("%s: --%s='%s' is %s: XLA's flag parsing fails", var,
							d->name, value, why)
					  : xl_asprintf("%s: --%s is %s: XLA's flag parsing fails", var,
							d->name, why),
				    hint);
				l->v[l->n - 1].aborts = true;
			}
		} else {
			size_t before = l->n;

			check_value(l, var, d, value, t, x->start, true);
			for (size_t k = before; k < l->n; k++)
				l->v[k].aborts = sc->coverage == 0;
		}
		check_tags(l, var, d, t, x->start, sc->flags);
		/* the same flag twice */
		for (size_t k = 0; k < nseen; k++) {
			enum xl_xla_combine c;

			if (strcmp(seen[k].name, d->name) != 0)
				continue;
			c = xl_xla_combine(d, value);
			if (c == XL_XLA_APPEND || c == XL_XLA_MERGE || c == XL_XLA_EDIT)
				add(l, XL_SEV_NOTE, "accumulates", t, x->start,
				    xl_asprintf("%s: '%s' is set again: %s (first at column %zu)", var, d->name,
						c == XL_XLA_APPEND ? "XLA appends the values to the earlier ones"
						: c == XL_XLA_MERGE ? "XLA merges the KEY=VALUE items into the earlier ones"
								    : "XLA applies the +/- items to the set built so far",
						seen[k].tok->start + 1),
				    NULL);
			else if (same_value(d, strchr(seen[k].tok->text, '=') ? strchr(seen[k].tok->text, '=') + 1 : NULL,
					    value))
				add(l, XL_SEV_WARNING, "duplicate", t, x->start,
				    xl_asprintf("%s: '%s' is set twice to the same value (first at column %zu)",
						var, d->name, seen[k].tok->start + 1),
				    xl_asprintf("remove one of the two"));
			else
				add(l, XL_SEV_ERROR, "conflict", t, x->start,
				    xl_asprintf("%s: '%s' is set twice with different values ('%s' at column %zu, then '%s'); the last one wins",
						var, d->name, seen[k].tok->text, seen[k].tok->start + 1, t),
				    xl_asprintf("keep one of '%s' and '%s'", seen[k].tok->text, t));
			seen[k].tok = x;
			goto next;
		}
		seen[nseen].name = d->name;
		seen[nseen].tok = x;
		seen[nseen].d = d;
		nseen++;
next:
		free(name);
		free(value);
	}
	lint_rest(sc, &w, l);
	place(sc, l, first);
	free(seen);
	xl_xla_words_release(&w);
}

/* LIBTPU_INIT_ARGS, as libtpu's own reader takes it (abslreader.h): an
 * error exactly where that libtpu exits at start, a warning where the
 * release is not one xlaunch knows. */
static void lint_libtpu(const struct xl_judge *j, const char *s, unsigned flags, struct xl_lint *l)
{
	static const char var[] = "LIBTPU_INIT_ARGS";
	const char *lt = xl_judge_libtpu(j);
	char *who = lt ? xl_asprintf("libtpu %s", lt) : xl_strdup("libtpu");
	struct xl_absl_words w;

	xl_absl_read(j, s, &w);
	for (size_t i = 0; i < w.n; i++) {
		struct xl_absl_word *x = &w.v[i];
		size_t before = l->n;

		if (strpbrk(x->text, "\t\n\r"))
			add(l, XL_SEV_WARNING, "blank-in-word", x->text, x->start,
			    xl_asprintf("%s: '%s' holds a tab or a line break: libtpu splits at spaces only, so it is part of the word",
					var, x->text), xl_strdup("separate the flags with spaces"));
		switch (x->kind) {
		case XL_AB_SET:
			check_tags(l, var, x->d, x->text, x->start, flags);
			if (xl_absl_unlearned(x->d))
				add(l, XL_SEV_WARNING, "unlearned-type", x->text, x->start,
				    xl_asprintf("%s: %s takes a value of a type of its own for %s that xlaunch could not learn from its parser: '%s' is not checked",
						var, who, x->name, x->value ? x->value : ""), NULL);
			for (size_t k = 0; k < i; k++)
				if (w.v[k].kind == XL_AB_SET && strcmp(w.v[k].name, x->name) == 0)
					add(l, XL_SEV_WARNING, "duplicate", x->text, x->start,
					    xl_asprintf("%s: '%s' is set again (first at column %zu): libtpu takes the last value",
							var, x->name, w.v[k].start + 1),
					    xl_strdup("remove one of the two"));
			break;
		case XL_AB_IGNORED: {
			size_t eq = strcspn(x->text, "=");
			char *env = xl_strndup(x->text, eq);

			add(l, XL_SEV_WARNING, "bare-word", x->text, x->start,
			    xl_asprintf("%s: '%s' is not a flag: libtpu ignores it", var, x->text),
			    x->text[eq] && xl_catalog_env(env)
				    ? xl_asprintf("%s is an environment variable: set it in the profile's env, not in %s",
						  env, var) : NULL);
			free(env);
			break;
		}
		case XL_AB_END:
			if (i + 1 < w.n)
				add(l, XL_SEV_WARNING, "end-of-flags", x->text, x->start,
				    xl_asprintf("%s: '--' ends the flags: libtpu ignores the %zu word%s after it", var,
						w.n - i - 1, w.n - i - 1 == 1 ? "" : "s"), NULL);
			break;
		case XL_AB_VALUE:
			break;
		case XL_AB_UNKNOWN:
			add(l, XL_SEV_ERROR, "unknown-flag", x->text, x->start,
			    xl_asprintf("%s: unknown flag '%s': %s exits at start (\"Unknown command line flag\")",
					var, x->name, who),
			    x->hint ? xl_strdup(x->hint) : NULL);
			break;
		case XL_AB_XLA:
			add(l, XL_SEV_ERROR, "xla-flag", x->text, x->start,
			    xl_asprintf("%s: '%s' is an XLA flag, which %s does not take: it exits at start "
					"(\"Unknown command line flag\")", var, x->name, who),
			    x->hint ? xl_strdup(x->hint) : NULL);
			break;
		case XL_AB_ELSEWHERE:
			add(l, XL_SEV_ERROR, "not-in-release", x->text, x->start,
			    xl_asprintf("%s: %s", var, x->why ? x->why : x->name), x->hint ? xl_strdup(x->hint) : NULL);
			break;
		case XL_AB_UNCONFIRMED:
			add(l, XL_SEV_WARNING, "unconfirmed", x->text, x->start,
			    xl_asprintf("%s: %s", var, x->why ? x->why : x->name), x->hint ? xl_strdup(x->hint) : NULL);
			break;
		case XL_AB_BAD_VALUE:
		case XL_AB_MISSING:
			add(l, XL_SEV_ERROR, x->kind == XL_AB_MISSING ? "missing-value" : "type", x->text, x->start,
			    xl_asprintf("%s: %s", var, x->why), x->hint ? xl_strdup(x->hint) : NULL);
			break;
		}
		for (size_t k = before; k < l->n; k++)
			l->v[k].aborts = l->v[k].sev == XL_SEV_ERROR && strcmp(l->v[k].code, "debug-in-timing") != 0;
	}
	xl_absl_words_release(&w);
	free(who);
}

void xl_lint_string(const char *var, const char *s, unsigned flags, struct xl_lint *l)
{
	xl_lint_string_at(NULL, var, s, flags, l);
}

void xl_lint_string_at(const struct xl_judge *j, const char *var, const char *s, unsigned flags,
		       struct xl_lint *l)
{
	struct src sc = { var, s, strlen(s), NULL, 0, XL_XLA_ACCEPTS, flags, j };
	struct xl_buf content = XL_BUF_INIT;

	if (!xl_is_composite_var(var)) {
		lint_env_value(j, var, s, flags, l);
		return;
	}
	if (strcmp(var, "LIBTPU_INIT_ARGS") == 0 && xl_catalog_coverage(var) == 0) {
		lint_libtpu(j, s, flags, l);
		return;
	}
	sc.coverage = xl_catalog_coverage(var);
	if (strcmp(var, "XLA_FLAGS") == 0) {
		char *detail = NULL;

		sc.verdict = (int)xl_xla_verdict_at(j, s, &detail);
		l->judged = true;
		l->verdict = sc.verdict;
		free(l->verdict_detail);
		l->verdict_detail = detail;
	}
	if (xl_xla_is_file(s)) {
		/* XLA reads the whole value, blanks included, as a file's path
		 * and the file as a flag string */
		FILE *f = fopen(s, "r");
		char buf[4096];
		size_t n, lead = strspn(s, " \t\r\n");

		if (!f) {
			size_t end = lead + strcspn(s + lead, " \t\n\r\f\v");
			char *word = xl_strndup(s + lead, end - lead);

			add(l, XL_SEV_ERROR, "flags-file", word, lead,
			    xl_asprintf("%s does not start with '-': XLA reads the whole value as the path of a flags file and aborts when it cannot open '%s' (%s)",
					var, s, strerror(errno)),
			    xl_strdup("start the value with --name=value tokens, or name a readable file"));
			l->v[l->n - 1].aborts = true;
			free(word);
			return;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			xl_buf_add(&content, buf, n);
		fclose(f);
		sc.text = content.buf ? content.buf : "";
		sc.len = content.len;
		sc.file = s;
		add(l, XL_SEV_NOTE, "flags-file", s, 0,
		    xl_asprintf("%s names a flags file: XLA reads its flags from '%s'", var, s), NULL);
	}
	lint_words(&sc, l);
	xl_buf_release(&content);
}
