/* abslreader.c - LIBTPU_INIT_ARGS as libtpu's absl flag parser reads it
 * (the rules: abslreader.h). */
#include "launcher/flags/abslreader.h"
#include "launcher/flags/knowledge.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool absl_float(const char *v)
{
	char *end;

	if (!*v || isspace((unsigned char)*v))
		return false;
	errno = 0;
	(void)strtod(v, &end);
	return *end == '\0' && errno != ERANGE;
}

const char *xl_absl_value_error(const struct xl_flagdef *d, const char *value)
{
	bool misread;

	if (xl_absl_own_type(d))
		return xl_absl_own_error(d, value);
	switch (d->type) {
	case XL_FT_BOOL:
		return xl_bool_normalize(XL_BP_ABSL, value, &misread) ? NULL
			: "not a boolean libtpu reads (true/false, 1/0, yes/no, t/f, y/n)";
	case XL_FT_INT:
		return xl_absl_int_in(value, true, 64) ? NULL : "not an integer (libtpu takes no unit)";
	case XL_FT_FLOAT:
		return absl_float(value) ? NULL : "not a number (libtpu takes no unit)";
	default:
		return NULL;    /* a string, or a type of libtpu's own xlaunch could not learn */
	}
}

/* The catalog's entry for name with no release judged (j NULL). */
static const struct xl_flagdef *pinned_entry(const char *name)
{
	return xl_catalog_flag("LIBTPU_INIT_ARGS", name);
}

/* What the judged release makes of name: its entry, or the word's kind,
 * why and hint filled. */
static const struct xl_flagdef *lookup(const struct xl_judge *j, const char *name, struct xl_absl_word *w)
{
	struct xl_rel_verdict rv;
	const struct xl_flagdef *d;

	if (!j) {
		d = pinned_entry(name);
		w->kind = d ? XL_AB_SET : XL_AB_UNKNOWN;
		return d;
	}
	d = xl_catalog_flag_at(j, "LIBTPU_INIT_ARGS", name, &rv);
	w->kind = XL_AB_SET;
	if (!d) {
		w->kind = rv.status == XL_RS_ELSEWHERE ? XL_AB_ELSEWHERE
			: rv.status == XL_RS_UNCONFIRMED ? XL_AB_UNCONFIRMED : XL_AB_UNKNOWN;
		if (rv.why)
			w->why = xl_strdup(rv.why);
		if (rv.hint)
			w->hint = xl_strdup(rv.hint);
	}
	xl_rel_verdict_release(&rv);
	return d;
}

/* An unknown name: an XLA flag (where it belongs), or a typo (the judged
 * release's nearest name). */
static void unknown(const struct xl_judge *j, struct xl_absl_word *w)
{
	int tpu = xl_family_index("libtpu"), xla = xl_family_index("xla");
	const char *dym = j && tpu >= 0 ? xl_judge_suggest(j, tpu, w->name)
				       : xl_catalog_suggest("LIBTPU_INIT_ARGS", w->name);
	bool is_xla = xl_catalog_flag("XLA_FLAGS", w->name) ||
		      (xla >= 0 && xl_knowledge_find(w->name, xla));

	if (is_xla && w->kind == XL_AB_UNCONFIRMED && !w->hint) {
		w->hint = xl_strdup("it is an XLA flag: put it in XLA_FLAGS");
		return;
	}
	if (is_xla && w->kind == XL_AB_UNKNOWN) {
		w->kind = XL_AB_XLA;
		free(w->hint);
		w->hint = dym ? xl_asprintf("put it in XLA_FLAGS; libtpu's own flag of that kind is --%s", dym)
			      : xl_strdup("put it in XLA_FLAGS");
		return;
	}
	if (!w->hint && dym)
		w->hint = xl_asprintf("did you mean '--%s'?", dym);
}

static void add_word(struct xl_absl_words *out, const char *s, size_t start, size_t len)
{
	struct xl_absl_word *w;

	out->v = xl_realloc(out->v, (out->n + 1) * sizeof(*out->v));
	w = &out->v[out->n++];
	memset(w, 0, sizeof(*w));
	w->text = xl_strndup(s + start, len);
	w->start = start;
}

/* libtpu splits at spaces only: a tab or a newline is part of a word. */
static void split(const char *s, struct xl_absl_words *out)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		size_t k;

		while (i < n && s[i] == ' ')
			i++;
		if (i >= n)
			break;
		k = i + strcspn(s + i, " ");
		add_word(out, s, i, k - i);
		i = k;
	}
}

/* w sets d to a value libtpu refuses: why, naming the release judged and
 * the form it takes where xlaunch learned it. */
static void bad_value(const struct xl_judge *j, const struct xl_flagdef *d, struct xl_absl_word *w)
{
	const char *lt = j ? xl_judge_libtpu(j) : NULL;
	char *form = xl_absl_accepted(d);

	w->kind = XL_AB_BAD_VALUE;
	if (form) {
		w->why = xl_asprintf("libtpu%s%s takes %s for %s; '%s' aborts at start (\"Illegal value\")",
				     lt ? " " : "", lt ? lt : "", form, d->name, w->value);
		w->hint = d->type == XL_FT_ENUM && d->values
			? xl_asprintf("write --%s=%s", d->name,
				      xl_list_has(d->values, "true") ? "true" : d->values[0])
			: xl_absl_reader_has(d, "duration") && *w->value && strspn(w->value, "0123456789.") == strlen(w->value)
			? xl_asprintf("write the unit: --%s=%ss", d->name, w->value)
			: xl_absl_reader_has(d, "duration") ? xl_asprintf("write a duration: --%s=30s", d->name)
						    : xl_strdup("write a whole number within the flag's range, without a unit");
		free(form);
		return;
	}
	w->why = xl_asprintf("--%s='%s' is %s: libtpu exits (\"Illegal value\")", d->name, w->value,
			     xl_absl_value_error(d, w->value));
	if (d->type == XL_FT_BOOL)
		w->hint = xl_strdup("write true or false");
	else if (d->type == XL_FT_INT || d->type == XL_FT_FLOAT)
		w->hint = xl_strdup("write the number alone, in the unit the flag's name says");
}

/* Word i, a flag word: its name, value and kind; returns how many words it
 * took (2 when the next one is its value). */
static size_t read_flag(const struct xl_judge *j, struct xl_absl_words *out, size_t i)
{
	struct xl_absl_word *w = &out->v[i];
	const char *t = w->text + (w->text[1] == '-' ? 2 : 1), *eq = strchr(t, '=');
	const struct xl_flagdef *d;

	w->name = xl_strndup(t, eq ? (size_t)(eq - t) : strlen(t));
	if (eq)
		w->value = xl_strdup(eq + 1);
	d = lookup(j, w->name, w);
	if (!d && w->kind == XL_AB_UNKNOWN && strncmp(w->name, "no", 2) == 0 && w->name[2]) {
		struct xl_absl_word neg = { 0 };
		const struct xl_flagdef *nd = lookup(j, w->name + 2, &neg);

		free(neg.why);
		free(neg.hint);
		if (nd) {
			free(w->name);
			w->name = xl_strdup(nd->name);
			w->d = nd;
			w->kind = XL_AB_BAD_VALUE;
			if (nd->type != XL_FT_BOOL)
				w->why = xl_asprintf("'--no%s' is the negative form, which only a boolean has: "
						     "libtpu exits (\"Negative form is not valid for the flag\")",
						     nd->name);
			else if (eq)
				w->why = xl_asprintf("'--no%s' takes no value: libtpu exits", nd->name);
			else {
				w->kind = XL_AB_SET;
				free(w->value);
				w->value = xl_strdup("false");
			}
			return 1;
		}
	}
	if (!d) {
		if (w->kind != XL_AB_SET)
			unknown(j, w);
		return 1;
	}
	w->d = d;
	if (!eq && d->type == XL_FT_BOOL) {
		w->value = xl_strdup("true");
		return 1;
	}
	if (!eq) {
		if (i + 1 >= out->n) {
			w->kind = XL_AB_MISSING;
			w->why = xl_asprintf("--%s takes a value (%s) and no word is left for it: libtpu exits "
					     "(\"Missing the value\")", d->name, xl_ftype_name(d->type));
			w->hint = xl_asprintf("write --%s=VALUE", d->name);
			return 1;
		}
		w->value = xl_strdup(out->v[i + 1].text);
		out->v[i + 1].kind = XL_AB_VALUE;
	}
	if (xl_absl_value_error(d, w->value))
		bad_value(j, d, w);
	return eq ? 1 : 2;
}

void xl_absl_read(const struct xl_judge *j, const char *s, struct xl_absl_words *out)
{
	memset(out, 0, sizeof(*out));
	split(s, out);
	for (size_t i = 0; i < out->n;) {
		struct xl_absl_word *w = &out->v[i];

		if (strcmp(w->text, "--") == 0) {
			for (size_t k = i; k < out->n; k++)
				out->v[k].kind = k == i ? XL_AB_END : XL_AB_IGNORED;
			break;
		}
		if (w->text[0] != '-' || !w->text[1]) {
			w->kind = XL_AB_IGNORED;
			i++;
			continue;
		}
		i += read_flag(j, out, i);
	}
}

void xl_absl_words_release(struct xl_absl_words *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].text);
		free(w->v[i].name);
		free(w->v[i].value);
		free(w->v[i].why);
		free(w->v[i].hint);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
}
