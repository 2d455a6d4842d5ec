/* flagstr.c - composite flag variables as ordered maps.
 *
 * XLA_FLAGS, LIBTPU_INIT_ARGS and TF_XLA_FLAGS hold "--name=value" tokens.
 * The tokenizer follows XLA's own: whitespace separates tokens, a value
 * quoted right after '=' may hold whitespace, a bare "--name" is a true
 * boolean, and a word without a leading dash is where XLA stops reading.
 */
#include "launcher/launcher.h"

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
	size_t cap = 0;
	const char *p = s;

	out->v = NULL;
	out->n = 0;
	*err = NULL;
	for (;;) {
		struct xl_token tok;
		const char *start, *eq;
		struct xl_buf val = XL_BUF_INIT;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		memset(&tok, 0, sizeof(tok));
		start = p;
		tok.offset = (size_t)(p - s);
		if (*p == '-') {
			const char *name;

			tok.kind = XL_TOK_FLAG;
			p++;
			if (*p == '-')
				p++;
			else
				tok.single_dash = true;
			name = p;
			while (*p && !isspace((unsigned char)*p) && *p != '=')
				p++;
			tok.name = xl_strndup(name, (size_t)(p - name));
			if (*p == '=') {
				p++;
				if (*p == '"' || *p == '\'') {
					char q = *p++;
					const char *close = strchr(p, q);

					if (!close) {
						*err = xl_asprintf("unterminated %s quote in '%s' at offset %zu",
								   q == '"' ? "double" : "single",
								   start, tok.offset);
						free(tok.name);
						xl_tokens_release(out);
						return false;
					}
					xl_buf_add(&val, p, (size_t)(close - p));
					tok.quoted = true;
					p = close + 1;
					/* text glued after the closing quote belongs to the value */
					while (*p && !isspace((unsigned char)*p))
						xl_buf_addc(&val, *p++);
				} else {
					while (*p && !isspace((unsigned char)*p))
						xl_buf_addc(&val, *p++);
				}
				tok.value = xl_buf_detach(&val);
			}
		} else {
			tok.kind = XL_TOK_BARE;
			while (*p && !isspace((unsigned char)*p))
				p++;
			eq = memchr(start, '=', (size_t)(p - start));
			tok.name = xl_strndup(start, (size_t)((eq ? eq : p) - start));
			if (eq)
				tok.value = xl_strndup(eq + 1, (size_t)(p - eq - 1));
		}
		tok.raw = xl_strndup(start, (size_t)(p - start));
		push_token(out, &cap, &tok);
	}
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

void xl_flagmap_set(struct xl_flagmap *m, const char *name, const char *value,
		    struct xl_prov src)
{
	struct xl_flag *f = find(m, name);

	if (f) {
		free(f->value);
		f->value = value ? xl_strdup(value) : NULL;
		f->src = src;
		return;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		m->v = xl_realloc(m->v, m->cap * sizeof(*m->v));
	}
	f = &m->v[m->n++];
	f->name = xl_strdup(name);
	f->value = value ? xl_strdup(value) : NULL;
	f->src = src;
}

bool xl_flagmap_del(struct xl_flagmap *m, const char *name)
{
	struct xl_flag *f = find(m, name);

	if (!f)
		return false;
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

static bool needs_quotes(const char *v)
{
	if (!*v)
		return true;
	for (; *v; v++)
		if (isspace((unsigned char)*v))
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
		if (needs_quotes(f->value))
			xl_buf_addf(&b, "=\"%s\"", f->value);
		else
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
