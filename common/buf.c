/* buf.c - growable byte buffers and string lists. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static void grow(struct xl_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need < b->len)
		xl_oom();
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			xl_oom();
		cap *= 2;
	}
	b->buf = xl_realloc(b->buf, cap);
	b->cap = cap;
}

void xl_buf_add(struct xl_buf *b, const void *p, size_t n)
{
	grow(b, n);
	if (n)
		memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void xl_buf_adds(struct xl_buf *b, const char *s)
{
	xl_buf_add(b, s, strlen(s));
}

void xl_buf_addc(struct xl_buf *b, char c)
{
	xl_buf_add(b, &c, 1);
}

void xl_buf_vaddf(struct xl_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	grow(b, (size_t)n);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void xl_buf_addf(struct xl_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xl_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

char *xl_buf_detach(struct xl_buf *b)
{
	char *s = b->buf ? b->buf : xl_strdup("");

	b->buf = NULL;
	b->len = b->cap = 0;
	return s;
}

const char *xl_buf_str(const struct xl_buf *b)
{
	return b->buf ? b->buf : "";
}

void xl_buf_reset(struct xl_buf *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

void xl_buf_release(struct xl_buf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->cap = 0;
}

void xl_strv_push_owned(struct xl_strv *sv, char *s)
{
	if (sv->n + 1 >= sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 8;
		sv->v = xl_realloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void xl_strv_push(struct xl_strv *sv, const char *s)
{
	xl_strv_push_owned(sv, xl_strdup(s));
}

bool xl_strv_contains(const struct xl_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

void xl_strv_release(struct xl_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void xl_strv_split(struct xl_strv *sv, const char *s, const char *seps)
{
	while (*s) {
		size_t n = strcspn(s, seps);

		if (n)
			xl_strv_push_owned(sv, xl_strndup(s, n));
		s += n;
		if (*s)
			s++;
	}
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static void strmap_grow(struct xl_strmap *m)
{
	struct xl_strmap bigger = XL_STRMAP_INIT;

	bigger.cap = m->cap ? m->cap * 2 : 16;
	bigger.keys = xl_calloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = xl_calloc(bigger.cap, sizeof(*bigger.vals));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			xl_strmap_put(&bigger, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

void xl_strmap_put(struct xl_strmap *m, const char *key, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		strmap_grow(m);
	for (i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (strcmp(m->keys[i], key) == 0) {
			m->vals[i] = val;
			return;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

bool xl_strmap_get(const struct xl_strmap *m, const char *key, size_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (strcmp(m->keys[i], key) == 0) {
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
	return false;
}

void xl_strmap_release(struct xl_strmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->n = m->cap = 0;
}
