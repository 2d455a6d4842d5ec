/*
 * pep440.c - PEP 440 versions and version specifiers.
 *
 * Parsing accepts what the specification's permissive form accepts: a
 * leading "v", an epoch, any number of release components, the spellings
 * alpha/a/beta/b/c/rc/pre/preview, post/rev/r and the implicit "-N"
 * post-release, dev releases, separators "._-" between the parts, a local
 * label, and surrounding whitespace, in any letter case.  Numbers are kept
 * as decimal strings without leading zeros, so any length compares right.
 *
 * Specifier semantics follow the specification's rules with pre-releases
 * admitted (as `pip check` does): ">V" excludes V's post-releases and local
 * variants unless V is itself a post- or dev-release, "<V" excludes V's
 * pre-releases unless V is one, "==V" ignores the candidate's local label
 * when V has none, "==V.*" is the half-open range [V.dev0, next prefix.dev0),
 * "~=V" is ">=V, ==prefix.*", and "===" compares strings case-insensitively.
 */
#include "bundle/bundle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Python's str.strip() and the regex \s, restricted to ASCII. */
static bool py_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_sep(int c)
{
	return c == '.' || c == '_' || c == '-';
}

static bool is_alnum_lc(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Compares two digit strings without leading zeros. */
static int numcmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int c;

	if (la != lb)
		return la < lb ? -1 : 1;
	c = strcmp(a, b);
	return c < 0 ? -1 : c > 0;
}

/* Parser state: p is how far the parts read so far go, end where the text
 * ends; the arena receives normalized numbers and local segments. */
struct vparse {
	const char *p, *end;
	char *arena;
	size_t used;
};

/* Copies digits [s, s+n) into the arena without leading zeros. */
static const char *put_num(struct vparse *st, const char *s, size_t n)
{
	char *out = st->arena + st->used;

	while (n > 1 && *s == '0') {
		s++;
		n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	st->used += n + 1;
	return out;
}

static size_t span_digits(const char *p, const char *end)
{
	size_t n = 0;

	while (p + n < end && is_digit((unsigned char)p[n]))
		n++;
	return n;
}

/* Case-insensitive match of word at p; returns its length or 0. */
static size_t match_word(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)p[i]) != word[i])
			return 0;
	return n;
}

void xl_version_release(struct xl_version *v)
{
	if (!v)
		return;
	free(v->arena);
	free(v->release);
	free(v->local);
	free(v->norm);
	memset(v, 0, sizeof(*v));
}

static void build_norm(struct xl_version *v)
{
	static const char *const pre_names[] = { "a", "b", "rc" };
	struct xl_buf b = XL_BUF_INIT;

	if (strcmp(v->epoch, "0") != 0)
		xl_buf_addf(&b, "%s!", v->epoch);
	for (size_t i = 0; i < v->nrelease; i++)
		xl_buf_addf(&b, "%s%s", i ? "." : "", v->release[i]);
	if (v->pre >= 0)
		xl_buf_addf(&b, "%s%s", pre_names[v->pre], v->pre_n);
	if (v->post)
		xl_buf_addf(&b, ".post%s", v->post);
	if (v->dev)
		xl_buf_addf(&b, ".dev%s", v->dev);
	if (v->has_local) {
		xl_buf_addc(&b, '+');
		for (size_t i = 0; i < v->nlocal; i++)
			xl_buf_addf(&b, "%s%s", i ? "." : "", v->local[i].s);
	}
	v->norm = xl_buf_detach(&b);
}

/* The text [s, s+len) stripped of surrounding whitespace as st's input, the
 * arena and the release components made for it (v owns them). */
static void parse_begin(struct vparse *st, const char *s, size_t len, struct xl_version *v)
{
	const char *end = s + len;

	while (s < end && py_space((unsigned char)*s))
		s++;
	while (end > s && py_space((unsigned char)end[-1]))
		end--;
	st->p = s;
	st->end = end;
	st->arena = xl_malloc(2 * (size_t)(end - s) + 8);
	st->used = 0;
	v->arena = st->arena;
	v->release = xl_calloc((size_t)(end - s) / 2 + 2, sizeof(*v->release));
}

/* "[sep] word [sep] [digits]" at st->p for the first of words[] that
 * matches (case-insensitively): its index, *num its number ("0" when it has
 * none) and st->p past it; -1, st->p unmoved, when no word matches. */
static int parse_tagged(struct vparse *st, const char *const *words, size_t nwords,
			const char **num)
{
	const char *q = st->p, *end = st->end;
	size_t n, w = 0, i;

	if (q < end && is_sep((unsigned char)*q))
		q++;
	for (i = 0; i < nwords; i++) {
		w = match_word(q, end, words[i]);
		if (w)
			break;
	}
	if (!w)
		return -1;
	q += w;
	if (q < end && is_sep((unsigned char)*q))
		q++;
	n = span_digits(q, end);
	*num = put_num(st, n ? q : "0", n ? n : 1);
	st->p = q + n;
	return (int)i;
}

/* epoch: "N!", else 0 */
static void parse_epoch(struct vparse *st, struct xl_version *v)
{
	size_t n = span_digits(st->p, st->end);

	if (n && st->p + n < st->end && st->p[n] == '!') {
		v->epoch = put_num(st, st->p, n);
		st->p += n + 1;
	} else {
		v->epoch = put_num(st, "0", 1);
	}
}

/* release: N(.N)*; -1 when there is no first number */
static int parse_release(struct vparse *st, struct xl_version *v)
{
	const char *p = st->p, *end = st->end;
	size_t n = span_digits(p, end);

	if (!n)
		return -1;
	v->release[v->nrelease++] = put_num(st, p, n);
	p += n;
	while (p + 1 < end && *p == '.' && is_digit((unsigned char)p[1])) {
		n = span_digits(p + 1, end);
		v->release[v->nrelease++] = put_num(st, p + 1, n);
		p += n + 1;
	}
	st->p = p;
	return 0;
}

/* pre-release: [sep] letters [sep] [digits] */
static void parse_pre(struct vparse *st, struct xl_version *v)
{
	static const char *const words[] = {
		"alpha", "a", "beta", "b", "preview", "pre", "c", "rc",
	};
	static const int kinds[] = { 0, 0, 1, 1, 2, 2, 2, 2 };
	int i = parse_tagged(st, words, sizeof(words) / sizeof(words[0]), &v->pre_n);

	if (i >= 0)
		v->pre = kinds[i];
}

/* post-release: -N, or [sep] post|rev|r [sep] [digits] */
static void parse_post(struct vparse *st, struct xl_version *v)
{
	static const char *const words[] = { "post", "rev", "r" };
	const char *p = st->p;

	if (p + 1 < st->end && *p == '-' && is_digit((unsigned char)p[1])) {
		size_t n = span_digits(p + 1, st->end);

		v->post = put_num(st, p + 1, n);
		st->p += n + 1;
		return;
	}
	parse_tagged(st, words, sizeof(words) / sizeof(words[0]), &v->post);
}

/* dev release: [sep] dev [sep] [digits] */
static void parse_dev(struct vparse *st, struct xl_version *v)
{
	static const char *const words[] = { "dev" };

	parse_tagged(st, words, 1, &v->dev);
}

/* Copies [s, s+n) into the arena in lower case. */
static const char *put_lower(struct vparse *st, const char *s, size_t n)
{
	char *out = st->arena + st->used;

	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[n] = '\0';
	st->used += n + 1;
	return out;
}

/* local label: "+" segments of letters and digits, separated by "._-";
 * -1 when a segment is empty */
static int parse_local(struct vparse *st, struct xl_version *v)
{
	const char *p = st->p, *end = st->end;
	size_t nseg = 1;

	if (!(p < end && *p == '+'))
		return 0;
	p++;
	for (const char *q = p; q < end; q++)
		if (is_sep((unsigned char)*q))
			nseg++;
	v->local = xl_calloc(nseg, sizeof(*v->local));
	v->has_local = true;
	for (;;) {
		const char *q = p;
		bool num = true;

		while (q < end && is_alnum_lc((unsigned char)*q)) {
			if (!is_digit((unsigned char)*q))
				num = false;
			q++;
		}
		if (q == p)
			return -1;
		if (num)
			v->local[v->nlocal].s = put_num(st, p, (size_t)(q - p));
		else
			v->local[v->nlocal].s = put_lower(st, p, (size_t)(q - p));
		v->local[v->nlocal++].num = num;
		p = q;
		if (p < end && is_sep((unsigned char)*p) && p + 1 < end &&
		    is_alnum_lc((unsigned char)p[1])) {
			p++;
			continue;
		}
		break;
	}
	st->p = p;
	return 0;
}

int xl_version_parse(const char *s, size_t len, struct xl_version *v)
{
	struct vparse st;

	memset(v, 0, sizeof(*v));
	v->pre = -1;
	if (memchr(s, '\0', len))
		return -1;
	parse_begin(&st, s, len, v);
	if (st.p < st.end && (*st.p == 'v' || *st.p == 'V'))
		st.p++;
	parse_epoch(&st, v);
	if (parse_release(&st, v) < 0)
		goto bad;
	parse_pre(&st, v);
	parse_post(&st, v);
	parse_dev(&st, v);
	if (parse_local(&st, v) < 0 || st.p != st.end)
		goto bad;
	build_norm(v);
	return 0;
bad:
	xl_version_release(v);
	v->pre = -1;
	return -1;
}

bool xl_version_is_prerelease(const struct xl_version *v)
{
	return v->pre >= 0 || v->dev != NULL;
}

/* Release components compared with zero padding, so 1.0 == 1.0.0. */
static int release_cmp(const struct xl_version *a, const struct xl_version *b)
{
	size_t n = a->nrelease > b->nrelease ? a->nrelease : b->nrelease;

	for (size_t i = 0; i < n; i++) {
		const char *x = i < a->nrelease ? a->release[i] : "0";
		const char *y = i < b->nrelease ? b->release[i] : "0";
		int c = numcmp(x, y);

		if (c)
			return c;
	}
	return 0;
}

static int pre_rank(const struct xl_version *v)
{
	if (v->pre < 0 && !v->post && v->dev)
		return -1;          /* 1.0.dev0 sorts before 1.0a0 */
	if (v->pre < 0)
		return 3;           /* no pre-release sorts after rc */
	return v->pre;
}

/* Compares everything but the local label. */
static int public_cmp(const struct xl_version *a, const struct xl_version *b)
{
	int c, ra, rb;

	c = numcmp(a->epoch, b->epoch);
	if (c)
		return c;
	c = release_cmp(a, b);
	if (c)
		return c;
	ra = pre_rank(a);
	rb = pre_rank(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->pre >= 0 && (c = numcmp(a->pre_n, b->pre_n)))
		return c;
	if (!a->post != !b->post)
		return a->post ? 1 : -1;
	if (a->post && (c = numcmp(a->post, b->post)))
		return c;
	if (!a->dev != !b->dev)
		return a->dev ? -1 : 1;
	if (a->dev && (c = numcmp(a->dev, b->dev)))
		return c;
	return 0;
}

int xl_version_cmp(const struct xl_version *a, const struct xl_version *b)
{
	int c = public_cmp(a, b);

	if (c)
		return c;
	if (!a->has_local != !b->has_local)
		return a->has_local ? 1 : -1;
	for (size_t i = 0; i < a->nlocal && i < b->nlocal; i++) {
		const struct xl_vseg *x = &a->local[i], *y = &b->local[i];

		if (x->num != y->num)
			return x->num ? 1 : -1;   /* a word sorts before a number */
		c = x->num ? numcmp(x->s, y->s) : strcmp(x->s, y->s);
		if (c)
			return c < 0 ? -1 : 1;
	}
	if (a->nlocal != b->nlocal)
		return a->nlocal < b->nlocal ? -1 : 1;
	return 0;
}

int xl_version_compare_str(const char *a, const char *b, int *out)
{
	struct xl_version va, vb;

	if (xl_version_parse(a, strlen(a), &va) < 0)
		return -1;
	if (xl_version_parse(b, strlen(b), &vb) < 0) {
		xl_version_release(&va);
		return -2;
	}
	*out = xl_version_cmp(&va, &vb);
	xl_version_release(&va);
	xl_version_release(&vb);
	return 0;
}

/* Same epoch, release (zero padded) and pre-release. */
static bool same_release_pre(const struct xl_version *a, const struct xl_version *b)
{
	if (numcmp(a->epoch, b->epoch) || release_cmp(a, b) || a->pre != b->pre)
		return false;
	return a->pre < 0 || numcmp(a->pre_n, b->pre_n) == 0;
}

/* Decimal string + 1; caller frees. */
static char *num_inc(const char *s)
{
	size_t n = strlen(s);
	char *r = xl_malloc(n + 2);
	int carry = 1;

	r[n + 1] = '\0';
	for (size_t i = n; i-- > 0;) {
		int d = s[i] - '0' + carry;

		carry = d / 10;
		r[i + 1] = (char)('0' + d % 10);
	}
	if (carry) {
		r[0] = '1';
		return r;
	}
	memmove(r, r + 1, n + 1);
	return r;
}

/* Parses a version we built ourselves; it cannot fail. */
static void must_parse(const char *s, struct xl_version *out)
{
	if (xl_version_parse(s, strlen(s), out) < 0) {
		xl_error("internal: built version '%s' does not parse", s);
		abort();
	}
}

/* epoch!release[0..nrel) with the last component replaced by last (when not
 * NULL) followed by tail; caller frees. */
static char *ver_text(const struct xl_version *v, size_t nrel, const char *last, const char *tail)
{
	struct xl_buf b = XL_BUF_INIT;

	xl_buf_addf(&b, "%s!", v->epoch);
	for (size_t i = 0; i < nrel; i++)
		xl_buf_addf(&b, "%s%s", i ? "." : "", (i + 1 == nrel && last) ? last : v->release[i]);
	xl_buf_adds(&b, tail);
	return xl_buf_detach(&b);
}

/* The smallest version of the next prefix: 1.2 -> 1.3.dev0 (nrel = 2). */
static void next_prefix_dev0(const struct xl_version *v, size_t nrel, struct xl_version *out)
{
	char *inc = num_inc(v->release[nrel - 1]);
	char *t = ver_text(v, nrel, inc, ".dev0");

	must_parse(t, out);
	free(inc);
	free(t);
}

static void spec_release(struct xl_spec *sp)
{
	free(sp->text);
	free(sp->vtext);
	xl_version_release(&sp->v);
	xl_version_release(&sp->lo);
	xl_version_release(&sp->hi);
}

void xl_specset_release(struct xl_specset *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->n; i++)
		spec_release(&ss->v[i]);
	free(ss->v);
	ss->v = NULL;
	ss->n = 0;
}

/* Parses one stripped clause. */
static int spec_parse1(const char *s, size_t len, struct xl_spec *sp, char **err)
{
	static const struct { const char *tok; enum xl_spec_op op; } ops[] = {
		{ "===", XL_OP_ARBITRARY }, { "~=", XL_OP_COMPATIBLE }, { "==", XL_OP_EQ },
		{ "!=", XL_OP_NE }, { "<=", XL_OP_LE }, { ">=", XL_OP_GE },
		{ "<", XL_OP_LT }, { ">", XL_OP_GT },
	};
	const char *p = s, *end = s + len;
	size_t k;

	memset(sp, 0, sizeof(*sp));
	sp->v.pre = sp->lo.pre = sp->hi.pre = -1;
	sp->text = xl_strndup(s, len);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].tok);

		if (len >= n && memcmp(s, ops[k].tok, n) == 0) {
			sp->op = ops[k].op;
			p += n;
			break;
		}
	}
	if (k == sizeof(ops) / sizeof(ops[0])) {
		*err = xl_asprintf("'%s' does not start with an operator (==, !=, <, <=, >, >=, ~=, ===)",
				   sp->text);
		goto bad;
	}
	while (p < end && py_space((unsigned char)*p))
		p++;
	sp->vtext = xl_strndup(p, (size_t)(end - p));
	if (sp->op == XL_OP_ARBITRARY) {
		for (const char *q = p; q < end; q++) {
			if (py_space((unsigned char)*q) || *q == ';' || *q == ')' || *q == '\0') {
				*err = xl_asprintf("'%s': '===' takes one word", sp->text);
				goto bad;
			}
		}
		return 0;
	}
	if ((sp->op == XL_OP_EQ || sp->op == XL_OP_NE) && end - p >= 2 &&
	    end[-2] == '.' && end[-1] == '*') {
		sp->wildcard = true;
		if (xl_version_parse(p, (size_t)(end - p) - 2, &sp->v) < 0 ||
		    sp->v.pre >= 0 || sp->v.post || sp->v.dev || sp->v.has_local ||
		    py_space((unsigned char)end[-3])) {
			*err = xl_asprintf("'%s': a '.*' prefix must be a plain release such as 1.2.*",
					   sp->text);
			goto bad;
		}
		{
			char *t = ver_text(&sp->v, sp->v.nrelease, NULL, ".dev0");

			must_parse(t, &sp->lo);
			free(t);
		}
		next_prefix_dev0(&sp->v, sp->v.nrelease, &sp->hi);
		return 0;
	}
	if (p == end || py_space((unsigned char)*p) ||
	    xl_version_parse(p, (size_t)(end - p), &sp->v) < 0) {
		*err = xl_asprintf("'%s': '%s' is not a valid PEP 440 version", sp->text, sp->vtext);
		goto bad;
	}
	if (sp->v.has_local && sp->op != XL_OP_EQ && sp->op != XL_OP_NE) {
		*err = xl_asprintf("'%s': a local label is only allowed with == and !=", sp->text);
		goto bad;
	}
	switch (sp->op) {
	case XL_OP_COMPATIBLE:
		if (sp->v.nrelease < 2) {
			*err = xl_asprintf("'%s': ~= needs at least two release components", sp->text);
			goto bad;
		}
		next_prefix_dev0(&sp->v, sp->v.nrelease - 1, &sp->hi);
		break;
	case XL_OP_GT:
		if (sp->v.dev) {
			/* >V.devN: the next version up is V.dev(N+1) */
			struct xl_buf b = XL_BUF_INIT;
			char *inc = num_inc(sp->v.dev), *t;

			if (sp->v.pre >= 0)
				xl_buf_addf(&b, "%s%s", (const char *[]){ "a", "b", "rc" }[sp->v.pre],
					    sp->v.pre_n);
			if (sp->v.post)
				xl_buf_addf(&b, ".post%s", sp->v.post);
			xl_buf_addf(&b, ".dev%s", inc);
			t = ver_text(&sp->v, sp->v.nrelease, NULL, xl_buf_str(&b));
			must_parse(t, &sp->lo);
			free(t);
			free(inc);
			xl_buf_release(&b);
		} else if (sp->v.post) {
			/* >V.postN: the next version up is V.post(N+1).dev0 */
			struct xl_buf b = XL_BUF_INIT;
			char *inc = num_inc(sp->v.post), *t;

			if (sp->v.pre >= 0)
				xl_buf_addf(&b, "%s%s", (const char *[]){ "a", "b", "rc" }[sp->v.pre],
					    sp->v.pre_n);
			xl_buf_addf(&b, ".post%s.dev0", inc);
			t = ver_text(&sp->v, sp->v.nrelease, NULL, xl_buf_str(&b));
			must_parse(t, &sp->lo);
			free(t);
			free(inc);
			xl_buf_release(&b);
		}
		break;
	case XL_OP_LT:
		if (!xl_version_is_prerelease(&sp->v)) {
			/* <V stops below V.dev0, V's earliest pre-release */
			struct xl_buf b = XL_BUF_INIT;
			char *t;

			if (sp->v.post)
				xl_buf_addf(&b, ".post%s", sp->v.post);
			xl_buf_adds(&b, ".dev0");
			t = ver_text(&sp->v, sp->v.nrelease, NULL, xl_buf_str(&b));
			must_parse(t, &sp->hi);
			free(t);
			xl_buf_release(&b);
		}
		break;
	default:
		break;
	}
	return 0;
bad:
	spec_release(sp);
	return -1;
}

int xl_specset_parse(const char *s, size_t len, struct xl_specset *out, char **err)
{
	const char *p = s, *end = s + len;

	out->v = NULL;
	out->n = 0;
	*err = NULL;
	if (memchr(s, '\0', len)) {
		*err = xl_strdup("specifier holds a NUL byte");
		return -1;
	}
	while (p <= end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *a = p, *b = c ? c : end;

		while (a < b && py_space((unsigned char)*a))
			a++;
		while (b > a && py_space((unsigned char)b[-1]))
			b--;
		if (b > a) {
			out->v = xl_realloc(out->v, (out->n + 1) * sizeof(*out->v));
			if (spec_parse1(a, (size_t)(b - a), &out->v[out->n], err) < 0) {
				xl_specset_release(out);
				return -1;
			}
			out->n++;
		}
		if (!c)
			break;
		p = c + 1;
	}
	return 0;
}

static bool ascii_caseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return *a == *b;
}

bool xl_spec_contains(const struct xl_spec *sp, const struct xl_version *v, const char *raw)
{
	const struct xl_version *s = &sp->v;

	switch (sp->op) {
	case XL_OP_ARBITRARY:
		return raw ? ascii_caseeq(raw, sp->vtext) : ascii_caseeq(v->norm, sp->vtext);
	case XL_OP_GE:
		return xl_version_cmp(v, s) >= 0;
	case XL_OP_LE:
		return public_cmp(v, s) <= 0;
	case XL_OP_GT:
		if (s->dev || s->post)
			return xl_version_cmp(v, &sp->lo) >= 0;
		return xl_version_cmp(v, s) > 0 && !same_release_pre(v, s);
	case XL_OP_LT:
		return xl_version_cmp(v, xl_version_is_prerelease(s) ? s : &sp->hi) < 0;
	case XL_OP_EQ:
	case XL_OP_NE: {
		bool eq;

		if (sp->wildcard)
			eq = xl_version_cmp(v, &sp->lo) >= 0 && xl_version_cmp(v, &sp->hi) < 0;
		else if (s->has_local)
			eq = xl_version_cmp(v, s) == 0;
		else
			eq = public_cmp(v, s) == 0;
		return sp->op == XL_OP_EQ ? eq : !eq;
	}
	case XL_OP_COMPATIBLE:
		return xl_version_cmp(v, s) >= 0 && xl_version_cmp(v, &sp->hi) < 0;
	}
	return false;
}

bool xl_specset_contains(const struct xl_specset *ss, const struct xl_version *v, const char *raw)
{
	for (size_t i = 0; i < ss->n; i++)
		if (!xl_spec_contains(&ss->v[i], v, raw))
			return false;
	return true;
}

char *xl_specset_str(const struct xl_specset *ss)
{
	static const char *const names[] = {
		[XL_OP_EQ] = "==", [XL_OP_NE] = "!=", [XL_OP_LT] = "<", [XL_OP_LE] = "<=",
		[XL_OP_GT] = ">", [XL_OP_GE] = ">=", [XL_OP_COMPATIBLE] = "~=",
		[XL_OP_ARBITRARY] = "===",
	};
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; i < ss->n; i++) {
		const struct xl_spec *sp = &ss->v[i];

		xl_buf_addf(&b, "%s%s", i ? "," : "", names[sp->op]);
		if (sp->op == XL_OP_ARBITRARY)
			xl_buf_adds(&b, sp->vtext);
		else
			xl_buf_addf(&b, "%s%s", sp->v.norm, sp->wildcard ? ".*" : "");
	}
	return xl_buf_detach(&b);
}

/* ---- package names (PEP 503) ---------------------------------------------------
 * Here, below the metadata and marker readers that both compare names. */

char *xl_pkg_key(const char *name)
{
	struct xl_buf b = XL_BUF_INIT;
	bool sep = false;

	for (const char *p = name; *p; p++) {
		if (*p == '-' || *p == '_' || *p == '.') {
			sep = true;
			continue;
		}
		if (sep && b.len)
			xl_buf_addc(&b, '-');
		sep = false;
		xl_buf_addc(&b, (char)tolower((unsigned char)*p));
	}
	if (sep && !b.len)
		xl_buf_addc(&b, '-');
	return xl_buf_detach(&b);
}
