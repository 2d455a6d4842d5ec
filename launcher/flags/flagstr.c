/* flagstr.c - composite flag variables as ordered maps.
 *
 * XLA_FLAGS, LIBTPU_INIT_ARGS and TF_XLA_FLAGS hold "--name=value" tokens.
 * The tokenizer is XLA's own (xlareader.c): blanks separate tokens, a value
 * quoted right after '=' may hold blanks and ends at its closing quote, a
 * bare "--name" is a true boolean, and a word without a leading dash is
 * where XLA stops reading.
 */
#include "launcher/flags/flags.h"
#include "launcher/flags/xlareader.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

bool xl_is_composite_var(const char *name)
{
	return strcmp(name, "XLA_FLAGS") == 0 || strcmp(name, "LIBTPU_INIT_ARGS") == 0 ||
	       strcmp(name, "TF_XLA_FLAGS") == 0;
}

static void push_token(struct xl_tokens *t, size_t *cap, struct xl_token *tok)
{
	if (t->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		t->v = xl_realloc(t->v, *cap * sizeof(*t->v));
	}
	t->v[t->n++] = *tok;
}

bool xl_flags_tokenize(const char *s, struct xl_tokens *out, char **err)
{
	struct xl_xla_words w;
	size_t cap = 0, len = strlen(s);
	const char *p;

	out->v = NULL;
	out->n = 0;
	*err = NULL;
	/* the words XLA reads (xlareader.c): quotes, backslashes, the word
	 * boundary right after a closing quote, a quote left open running to
	 * the end */
	xl_xla_split(s, len, &w);
	for (size_t i = 0; i < w.n; i++) {
		const char *t = w.v[i].text, *name, *eq;
		struct xl_token tok;

		memset(&tok, 0, sizeof(tok));
		tok.kind = XL_TOK_FLAG;
		tok.offset = w.v[i].start;
		tok.quoted = w.v[i].quoted;
		tok.single_dash = t[1] != '-';
		name = t + (tok.single_dash ? 1 : 2);
		eq = strchr(name, '=');
		tok.name = xl_strndup(name, eq ? (size_t)(eq - name) : strlen(name));
		tok.value = eq ? xl_strdup(eq + 1) : NULL;
		tok.raw = xl_strndup(s + w.v[i].start, w.v[i].end - w.v[i].start);
		push_token(out, &cap, &tok);
	}
	/* what XLA never reads: words split on blanks */
	for (p = s + w.stop; *p;) {
		struct xl_token tok;
		const char *start, *eq;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		memset(&tok, 0, sizeof(tok));
		start = p;
		tok.kind = XL_TOK_BARE;
		tok.offset = (size_t)(p - s);
		while (*p && !isspace((unsigned char)*p))
			p++;
		eq = memchr(start, '=', (size_t)(p - start));
		tok.name = xl_strndup(start, (size_t)((eq ? eq : p) - start));
		if (eq)
			tok.value = xl_strndup(eq + 1, (size_t)(p - eq - 1));
		tok.raw = xl_strndup(start, (size_t)(p - start));
		push_token(out, &cap, &tok);
	}
	xl_xla_words_release(&w);
	return true;
}

void xl_tokens_release(struct xl_tokens *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].raw);
		free(t->v[i].name);
		free(t->v[i].value);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static struct xl_flag *find(const struct xl_flagmap *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

/* Removes the entries called name after f. */
static void drop_after(struct xl_flagmap *m, struct xl_flag *f, const char *name)
{
	for (size_t i = (size_t)(f - m->v) + 1; i < m->n;) {
		if (strcmp(m->v[i].name, name) != 0) {
			i++;
			continue;
		}
		free(m->v[i].name);
		free(m->v[i].value);
		memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
		m->n--;
	}
}

void xl_flagmap_set(struct xl_flagmap *m, const char *name, const char *value,
		    struct xl_prov src)
{
	struct xl_flag *f = find(m, name);

	if (f) {
		/* a list built up from repeated tokens is replaced whole */
		drop_after(m, f, f->name);
		free(f->value);
		f->value = value ? xl_strdup(value) : NULL;
		f->src = src;
		memset(&f->prev, 0, sizeof(f->prev));
		return;
	}
	xl_flagmap_add(m, name, value, src);
}

void xl_flagmap_add(struct xl_flagmap *m, const char *name, const char *value,
		    struct xl_prov src)
{
	struct xl_flag *f;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		m->v = xl_realloc(m->v, m->cap * sizeof(*m->v));
	}
	f = &m->v[m->n++];
	f->name = xl_strdup(name);
	f->value = value ? xl_strdup(value) : NULL;
	f->src = src;
	memset(&f->prev, 0, sizeof(f->prev));
}

bool xl_flagmap_del(struct xl_flagmap *m, const char *name)
{
	struct xl_flag *f = find(m, name);

	if (!f)
		return false;
	drop_after(m, f, f->name);
	free(f->name);
	free(f->value);
	memmove(f, f + 1, (size_t)(&m->v[m->n] - (f + 1)) * sizeof(*f));
	m->n--;
	return true;
}

const struct xl_flag *xl_flagmap_get(const struct xl_flagmap *m, const char *name)
{
	return find(m, name);
}

bool xl_flagmap_parse(struct xl_flagmap *m, const char *s, struct xl_prov src, char **err)
{
	struct xl_tokens t;

	if (!xl_flags_tokenize(s, &t, err))
		return false;
	for (size_t i = 0; i < t.n; i++) {
		if (t.v[i].kind != XL_TOK_FLAG || !t.v[i].name[0]) {
			*err = xl_asprintf("'%s' is not a --flag (XLA stops reading flags here)",
					   t.v[i].raw);
			xl_tokens_release(&t);
			return false;
		}
	}
	for (size_t i = 0; i < t.n; i++)
		xl_flagmap_set(m, t.v[i].name, t.v[i].value, src);
	xl_tokens_release(&t);
	return true;
}

/* A value XLA would not read back as written: empty, blank inside,
 * starting with a quote, or holding a quote or backslash. */
static bool needs_quotes(const char *v)
{
	if (!*v || *v == '\'' || *v == '"')
		return true;
	for (; *v; v++)
		if (isspace((unsigned char)*v) || *v == '"' || *v == '\\')
			return true;
	return false;
}

char *xl_flagmap_format(const struct xl_flagmap *m)
{
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; i < m->n; i++) {
		const struct xl_flag *f = &m->v[i];

		if (i)
			xl_buf_addc(&b, ' ');
		xl_buf_addf(&b, "--%s", f->name);
		if (!f->value)
			continue;
		/* XLA reads a quoted value only after a name of [-_A-Za-z0-9] */
		if (needs_quotes(f->value) && !f->name[strspn(f->name,
				"-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")]) {
			/* in double quotes XLA takes the byte after a backslash as is */
			xl_buf_adds(&b, "=\"");
			for (const char *v = f->value; *v; v++) {
				if (*v == '"' || *v == '\\')
					xl_buf_addc(&b, '\\');
				xl_buf_addc(&b, *v);
			}
			xl_buf_addc(&b, '"');
		} else
			xl_buf_addf(&b, "=%s", f->value);
	}
	return xl_buf_detach(&b);
}

void xl_flagmap_release(struct xl_flagmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].name);
		free(m->v[i].value);
	}
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}
