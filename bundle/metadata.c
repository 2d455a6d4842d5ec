/*
 * metadata.c - installed-package metadata: METADATA / PKG-INFO headers and
 * PEP 508 requirements (Requires-Dist).
 *
 * The header block is read the way email parsers read it: "Key: value"
 * lines, continuation lines that start with a blank are folded into the
 * previous header, the block ends at the first empty line.  A UTF-8 byte
 * order mark and CRLF line ends are accepted; a UTF-16 file (with its byte
 * order mark) is transcoded; bytes that are not UTF-8 are kept as they are.
 * What cannot be read is noted in the distribution's problems list.
 */
#include "bundle/bundle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void xl_req_release(struct xl_req *r)
{
	if (!r)
		return;
	free(r->raw);
	free(r->name);
	free(r->key);
	xl_strv_release(&r->extras);
	xl_specset_release(&r->spec);
	free(r->url);
	xl_marker_free(r->marker);
	memset(r, 0, sizeof(*r));
}

static bool name_char(int c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int xl_req_parse(const char *s, size_t len, struct xl_req *r, char **err)
{
	const char *p = s, *end = s + len, *q, *semi;

	memset(r, 0, sizeof(*r));
	*err = NULL;
	if (memchr(s, '\0', len)) {
		*err = xl_strdup("requirement holds a NUL byte");
		return -1;
	}
	r->raw = xl_strndup(s, len);
	p = skip_ws(p, end);
	q = p;
	while (q < end && name_char((unsigned char)*q))
		q++;
	if (q == p || !isalnum((unsigned char)*p) || !isalnum((unsigned char)q[-1])) {
		*err = xl_asprintf("'%s': expected a project name", r->raw);
		goto bad;
	}
	r->name = xl_strndup(p, (size_t)(q - p));
	r->key = xl_pkg_key(r->name);
	p = skip_ws(q, end);
	if (p < end && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));
		struct xl_strv parts = XL_STRV_INIT;
		char *inner;

		if (!close) {
			*err = xl_asprintf("'%s': unterminated extras", r->raw);
			goto bad;
		}
		inner = xl_strndup(p + 1, (size_t)(close - p - 1));
		xl_strv_split(&parts, inner, ", \t");
		for (size_t i = 0; i < parts.n; i++) {
			const char *x = parts.v[i];

			for (const char *c = x; *c; c++)
				if (!name_char((unsigned char)*c)) {
					*err = xl_asprintf("'%s': bad extra name '%s'", r->raw, x);
					free(inner);
					xl_strv_release(&parts);
					goto bad;
				}
			xl_strv_push_owned(&r->extras, xl_pkg_key(x));
		}
		free(inner);
		xl_strv_release(&parts);
		p = skip_ws(close + 1, end);
	}
	if (p < end && *p == '@') {
		p = skip_ws(p + 1, end);
		q = p;
		while (q < end && *q != ' ' && *q != '\t')
			q++;
		if (q == p) {
			*err = xl_asprintf("'%s': '@' without a URL", r->raw);
			goto bad;
		}
		r->url = xl_strndup(p, (size_t)(q - p));
		p = skip_ws(q, end);
		semi = p < end && *p == ';' ? p : NULL;
		if (p < end && !semi) {
			*err = xl_asprintf("'%s': unexpected text after the URL", r->raw);
			goto bad;
		}
	} else {
		const char *a, *b;

		semi = memchr(p, ';', (size_t)(end - p));
		a = p;
		b = semi ? semi : end;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (a < b && *a == '(') {
			if (b[-1] != ')') {
				*err = xl_asprintf("'%s': unbalanced parenthesis", r->raw);
				goto bad;
			}
			a++;
			b--;
		}
		if (xl_specset_parse(a, (size_t)(b - a), &r->spec, err) < 0) {
			char *e = *err;

			*err = xl_asprintf("'%s': %s", r->raw, e);
			free(e);
			goto bad;
		}
	}
	if (semi) {
		char *e = NULL;

		if (xl_marker_parse(semi + 1, (size_t)(end - semi - 1), &r->marker, &e) < 0) {
			*err = xl_asprintf("'%s': marker %s", r->raw, e);
			free(e);
			goto bad;
		}
	}
	return 0;
bad:
	xl_req_release(r);
	return -1;
}

void xl_dist_release(struct xl_dist *d)
{
	if (!d)
		return;
	free(d->name);
	free(d->key);
	free(d->version);
	xl_version_release(&d->v);
	free(d->requires_python);
	for (size_t i = 0; i < d->nreqs; i++)
		xl_req_release(&d->reqs[i]);
	free(d->reqs);
	xl_strv_release(&d->extras);
	free(d->path);
	xl_strv_release(&d->problems);
	memset(d, 0, sizeof(*d));
}

/* UTF-16 with a byte order mark to UTF-8; caller frees. */
static char *from_utf16(const unsigned char *s, size_t len, bool le)
{
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 2; i + 1 < len; i += 2) {
		unsigned c = le ? (unsigned)(s[i] | s[i + 1] << 8) : (unsigned)(s[i] << 8 | s[i + 1]);

		if (c >= 0xd800 && c < 0xdc00 && i + 3 < len) {
			unsigned lo = le ? (unsigned)(s[i + 2] | s[i + 3] << 8) :
					   (unsigned)(s[i + 2] << 8 | s[i + 3]);

			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i += 2;
			}
		}
		if (c == 0)
			c = 0xfffd;
		if (c < 0x80) {
			xl_buf_addc(&b, (char)c);
		} else if (c < 0x800) {
			xl_buf_addc(&b, (char)(0xc0 | c >> 6));
			xl_buf_addc(&b, (char)(0x80 | (c & 0x3f)));
		} else if (c < 0x10000) {
			xl_buf_addc(&b, (char)(0xe0 | c >> 12));
			xl_buf_addc(&b, (char)(0x80 | ((c >> 6) & 0x3f)));
			xl_buf_addc(&b, (char)(0x80 | (c & 0x3f)));
		} else {
			xl_buf_addc(&b, (char)(0xf0 | c >> 18));
			xl_buf_addc(&b, (char)(0x80 | ((c >> 12) & 0x3f)));
			xl_buf_addc(&b, (char)(0x80 | ((c >> 6) & 0x3f)));
			xl_buf_addc(&b, (char)(0x80 | (c & 0x3f)));
		}
	}
	return xl_buf_detach(&b);
}

static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

static void add_header(struct xl_dist *d, const char *key, char *val, unsigned line)
{
	trim(val);
	if (strcasecmp(key, "Name") == 0) {
		if (!d->name) {
			d->name = xl_strdup(val);
			d->key = xl_pkg_key(val);
		}
	} else if (strcasecmp(key, "Version") == 0) {
		if (!d->version) {
			d->version = xl_strdup(val);
			d->version_ok = xl_version_parse(val, strlen(val), &d->v) == 0;
			if (!d->version_ok)
				xl_strv_push_owned(&d->problems,
						   xl_asprintf("line %u: Version '%s' is not PEP 440", line, val));
		}
	} else if (strcasecmp(key, "Requires-Python") == 0) {
		free(d->requires_python);
		d->requires_python = xl_strdup(val);
	} else if (strcasecmp(key, "Provides-Extra") == 0) {
		xl_strv_push_owned(&d->extras, xl_pkg_key(val));
	} else if (strcasecmp(key, "Requires-Dist") == 0) {
		struct xl_req r;
		char *err = NULL;

		if (xl_req_parse(val, strlen(val), &r, &err) < 0) {
			xl_strv_push_owned(&d->problems, xl_asprintf("line %u: Requires-Dist %s", line, err));
			free(err);
			return;
		}
		d->reqs = xl_realloc(d->reqs, (d->nreqs + 1) * sizeof(*d->reqs));
		d->reqs[d->nreqs++] = r;
	}
}

int xl_metadata_parse(const char *data, size_t len, struct xl_dist *d)
{
	const unsigned char *u = (const unsigned char *)data;
	char *text = NULL, *key = NULL;
	struct xl_buf val = XL_BUF_INIT;
	const char *p, *end;
	unsigned line = 0, keyline = 0;

	memset(d, 0, sizeof(*d));
	d->v.pre = -1;
	if (len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff))) {
		text = from_utf16(u, len, u[0] == 0xff);
		p = text;
		end = text + strlen(text);
	} else {
		p = data;
		end = data + len;
		if (len >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
			p += 3;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t n;

		line++;
		n = (size_t)(le - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (memchr(p, '\0', n)) {
			xl_strv_push_owned(&d->problems, xl_asprintf("line %u: NUL byte", line));
		} else if (n == 0) {
			break;      /* end of the header block */
		} else if (*p == ' ' || *p == '\t') {
			if (key) {
				xl_buf_addc(&val, ' ');
				xl_buf_add(&val, p, n);
			}
		} else {
			const char *colon = memchr(p, ':', n);

			if (key) {
				add_header(d, key, val.buf ? val.buf : (char[]){ "" }, keyline);
				free(key);
				key = NULL;
				xl_buf_reset(&val);
			}
			if (!colon) {
				xl_strv_push_owned(&d->problems,
						   xl_asprintf("line %u: not a 'Key: value' header", line));
			} else {
				key = xl_strndup(p, (size_t)(colon - p));
				keyline = line;
				xl_buf_add(&val, colon + 1, n - (size_t)(colon - p) - 1);
				if (!val.buf)
					xl_buf_adds(&val, "");
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (key)
		add_header(d, key, val.buf ? val.buf : (char[]){ "" }, keyline);
	free(key);
	xl_buf_release(&val);
	free(text);
	if (!d->name || !*d->name || !d->version) {
		xl_strv_push(&d->problems, !d->name || !*d->name ? "no Name header" : "no Version header");
		return -1;
	}
	return 0;
}
