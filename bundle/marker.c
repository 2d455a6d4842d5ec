/*
 * marker.c - PEP 508 environment markers: parsing and evaluation.
 *
 *   marker  = and ("or" and)*
 *   and     = expr ("and" expr)*
 *   expr    = "(" marker ")" | value op value
 *   value   = variable | 'string' | "string"
 *   op      = "<=" | "<" | "!=" | "===" | "==" | ">=" | ">" | "~=" | "in" | "not in"
 *
 * Evaluation follows packaging 26.3 (markers.py _evaluate_markers,
 * _eval_op), which pip uses: the variable of a comparison is its left side
 * when that is a variable, else its right side (a variable on the right of
 * a variable stands for its own name).  For python_version,
 * python_full_version, implementation_version and platform_release, when
 * OP followed by the right side is a valid specifier, the left side must
 * be contained in it (pre-releases admitted; an unparsable left side is
 * false).  Otherwise strings are compared: 'in' and 'not in' as
 * substrings, == and != as equality, <= and >= as equality too, < and >
 * are false, and ~= and === are undefined (an error).  `extra` values are
 * compared as normalized names.
 */
#include "bundle/bundle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

enum mk_kind { MK_OR, MK_AND, MK_CMP };
enum mk_op { MO_LE, MO_LT, MO_NE, MO_ARB, MO_EQ, MO_GE, MO_GT, MO_COMPAT, MO_IN, MO_NOTIN };

struct xl_marker {
	enum mk_kind kind;
	struct xl_marker *a, *b;    /* OR/AND operands */
	enum mk_op op;
	char *lhs, *rhs;            /* CMP: string literal or variable name */
	bool lvar, rvar;
};

static const char *const op_text[] = {
	[MO_LE] = "<=", [MO_LT] = "<", [MO_NE] = "!=", [MO_ARB] = "===", [MO_EQ] = "==",
	[MO_GE] = ">=", [MO_GT] = ">", [MO_COMPAT] = "~=", [MO_IN] = "in", [MO_NOTIN] = "not in",
};

/* Variable names as packaging 26.3 reads them (_tokenizer.py VARIABLE,
 * _parser.py process_env_var): the dotted spellings are the underscored
 * ones, python_implementation is platform_python_implementation. */
static const struct { const char *name, *canon; } vars[] = {
	{ "python_version", "python_version" },
	{ "python_full_version", "python_full_version" },
	{ "os_name", "os_name" }, { "os.name", "os_name" },
	{ "sys_platform", "sys_platform" }, { "sys.platform", "sys_platform" },
	{ "platform_release", "platform_release" },
	{ "platform_system", "platform_system" },
	{ "platform_version", "platform_version" }, { "platform.version", "platform_version" },
	{ "platform_machine", "platform_machine" }, { "platform.machine", "platform_machine" },
	{ "platform_python_implementation", "platform_python_implementation" },
	{ "platform.python_implementation", "platform_python_implementation" },
	{ "python_implementation", "platform_python_implementation" },
	{ "implementation_name", "implementation_name" },
	{ "implementation_version", "implementation_version" },
	{ "extra", "extra" },
};

struct mparse {
	const char *s, *p, *end;
	char *err;
	int depth;
};

static void skip_ws(struct mparse *mp)
{
	while (mp->p < mp->end && (*mp->p == ' ' || *mp->p == '\t' || *mp->p == '\n' ||
				   *mp->p == '\r' || *mp->p == '\f' || *mp->p == '\v'))
		mp->p++;
}

static void set_err(struct mparse *mp, const char *what)
{
	if (!mp->err)
		mp->err = xl_asprintf("col %d: %s", (int)(mp->p - mp->s) + 1, what);
}

/* A word of [A-Za-z0-9_.]; returns its length. */
static size_t word_len(const struct mparse *mp)
{
	size_t n = 0;

	while (mp->p + n < mp->end &&
	       (isalnum((unsigned char)mp->p[n]) || mp->p[n] == '_' || mp->p[n] == '.'))
		n++;
	return n;
}

static bool take_kw(struct mparse *mp, const char *kw)
{
	size_t n = strlen(kw);

	skip_ws(mp);
	if (word_len(mp) == n && strncmp(mp->p, kw, n) == 0) {
		mp->p += n;
		return true;
	}
	return false;
}

void xl_marker_free(struct xl_marker *m)
{
	if (!m)
		return;
	xl_marker_free(m->a);
	xl_marker_free(m->b);
	free(m->lhs);
	free(m->rhs);
	free(m);
}

static bool parse_value(struct mparse *mp, char **out, bool *isvar)
{
	skip_ws(mp);
	if (mp->p < mp->end && (*mp->p == '\'' || *mp->p == '"')) {
		char q = *mp->p;
		const char *e = memchr(mp->p + 1, q, (size_t)(mp->end - mp->p - 1));

		if (!e) {
			set_err(mp, "unterminated string");
			return false;
		}
		*out = xl_strndup(mp->p + 1, (size_t)(e - mp->p - 1));
		*isvar = false;
		mp->p = e + 1;
		return true;
	}
	{
		size_t n = word_len(mp);

		for (size_t i = 0; n && i < sizeof(vars) / sizeof(vars[0]); i++) {
			if (strlen(vars[i].name) == n && strncmp(vars[i].name, mp->p, n) == 0) {
				*out = xl_strdup(vars[i].canon);
				*isvar = true;
				mp->p += n;
				return true;
			}
		}
		set_err(mp, n ? "unknown marker variable" : "expected a marker variable or a quoted string");
		return false;
	}
}

static bool parse_op(struct mparse *mp, enum mk_op *op)
{
	static const struct { const char *t; enum mk_op op; } ops[] = {
		{ "===", MO_ARB }, { "<=", MO_LE }, { "!=", MO_NE }, { "==", MO_EQ },
		{ ">=", MO_GE }, { "~=", MO_COMPAT }, { "<", MO_LT }, { ">", MO_GT },
	};

	skip_ws(mp);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].t);

		if ((size_t)(mp->end - mp->p) >= n && strncmp(mp->p, ops[i].t, n) == 0) {
			*op = ops[i].op;
			mp->p += n;
			return true;
		}
	}
	if (take_kw(mp, "in")) {
		*op = MO_IN;
		return true;
	}
	if (take_kw(mp, "not")) {
		if (take_kw(mp, "in")) {
			*op = MO_NOTIN;
			return true;
		}
		set_err(mp, "expected 'in' after 'not'");
		return false;
	}
	set_err(mp, "expected a comparison operator");
	return false;
}

static struct xl_marker *parse_or(struct mparse *mp);

static struct xl_marker *parse_expr(struct mparse *mp)
{
	struct xl_marker *m;

	skip_ws(mp);
	if (mp->p < mp->end && *mp->p == '(') {
		if (++mp->depth > 64) {
			set_err(mp, "parentheses nested too deep");
			return NULL;
		}
		mp->p++;
		m = parse_or(mp);
		mp->depth--;
		if (!m)
			return NULL;
		skip_ws(mp);
		if (mp->p >= mp->end || *mp->p != ')') {
			set_err(mp, "expected ')'");
			xl_marker_free(m);
			return NULL;
		}
		mp->p++;
		return m;
	}
	m = xl_calloc(1, sizeof(*m));
	m->kind = MK_CMP;
	if (!parse_value(mp, &m->lhs, &m->lvar) || !parse_op(mp, &m->op) ||
	    !parse_value(mp, &m->rhs, &m->rvar)) {
		xl_marker_free(m);
		return NULL;
	}
	return m;
}

/* sub (KW sub)*, folded to the left into nodes of kind */
static struct xl_marker *parse_chain(struct mparse *mp, const char *kw, enum mk_kind kind,
				     struct xl_marker *(*sub)(struct mparse *))
{
	struct xl_marker *m = sub(mp);

	while (m && take_kw(mp, kw)) {
		struct xl_marker *n = xl_calloc(1, sizeof(*n)), *r = sub(mp);

		n->kind = kind;
		n->a = m;
		n->b = r;
		m = n;
		if (!r) {
			xl_marker_free(m);
			return NULL;
		}
	}
	return m;
}

static struct xl_marker *parse_and(struct mparse *mp)
{
	return parse_chain(mp, "and", MK_AND, parse_expr);
}

static struct xl_marker *parse_or(struct mparse *mp)
{
	return parse_chain(mp, "or", MK_OR, parse_and);
}

int xl_marker_parse(const char *s, size_t len, struct xl_marker **out, char **err)
{
	struct mparse mp = { s, s, s + len, NULL, 0 };
	struct xl_marker *m;

	*out = NULL;
	*err = NULL;
	if (memchr(s, '\0', len)) {
		*err = xl_strdup("marker holds a NUL byte");
		return -1;
	}
	m = parse_or(&mp);
	if (m) {
		skip_ws(&mp);
		if (mp.p != mp.end) {
			set_err(&mp, "unexpected text after the marker");
			xl_marker_free(m);
			m = NULL;
		}
	}
	if (!m) {
		*err = mp.err ? mp.err : xl_strdup("invalid marker");
		return -1;
	}
	*out = m;
	return 0;
}

/* The environment's value of var, or NULL when the environment has none
 * (the dotted spellings). */
static const char *env_value(const struct xl_marker_env *env, const char *var, const char *extra)
{
	const char *v = NULL;

	if (strchr(var, '.'))
		return NULL;
	if (strcmp(var, "extra") == 0)
		v = extra;
	else if (strcmp(var, "python_version") == 0)
		v = env->python_version;
	else if (strcmp(var, "python_full_version") == 0)
		v = env->python_full_version;
	else if (strcmp(var, "sys_platform") == 0)
		v = env->sys_platform;
	else if (strcmp(var, "platform_system") == 0)
		v = env->platform_system;
	else if (strcmp(var, "platform_machine") == 0)
		v = env->platform_machine;
	else if (strcmp(var, "platform_release") == 0)
		v = env->platform_release;
	else if (strcmp(var, "platform_version") == 0)
		v = env->platform_version;
	else if (strcmp(var, "platform_python_implementation") == 0)
		v = env->platform_python_implementation;
	else if (strcmp(var, "implementation_name") == 0)
		v = env->implementation_name;
	else if (strcmp(var, "implementation_version") == 0)
		v = env->implementation_version;
	else if (strcmp(var, "os_name") == 0)
		v = env->os_name;
	return v ? v : "";
}

static bool version_key(const char *key)
{
	return strcmp(key, "python_version") == 0 || strcmp(key, "python_full_version") == 0 ||
	       strcmp(key, "implementation_version") == 0 || strcmp(key, "platform_release") == 0;
}

static int eval_cmp(const struct xl_marker *m, const struct xl_marker_env *env, const char *extra,
		    char **err)
{
	const char *key, *l, *r;
	char *ln = NULL, *rn = NULL;
	int res = -1;

	if (m->lvar) {
		key = m->lhs;
		l = env_value(env, m->lhs, extra);
		r = m->rhs;                 /* a variable here stands for its name */
		if (!l) {
			*err = xl_asprintf("undefined marker variable '%s'", m->lhs);
			return -1;
		}
	} else if (m->rvar) {
		key = m->rhs;
		l = m->lhs;
		r = env_value(env, m->rhs, extra);
		if (!r) {
			*err = xl_asprintf("undefined marker variable '%s'", m->rhs);
			return -1;
		}
	} else {
		*err = xl_asprintf("'%s' %s '%s' compares no variable", m->lhs, op_text[m->op], m->rhs);
		return -1;
	}
	if (strcmp(key, "extra") == 0) {
		l = ln = xl_pkg_key(l);
		r = rn = xl_pkg_key(r);
	} else if (strcmp(key, "python_full_version") == 0) {
		/* _repair_python_full_version: an untagged build's "3.11.7+"
		 * is read as "3.11.7+local" */
		const char **side = m->lvar ? &l : &r;
		size_t n = strlen(*side);

		if (n && (*side)[n - 1] == '+')
			*side = (m->lvar ? (ln = xl_asprintf("%slocal", *side)) : (rn = xl_asprintf("%slocal", *side)));
	}
	if (version_key(key) && m->op != MO_IN && m->op != MO_NOTIN) {
		char *spec = xl_asprintf("%s%s", op_text[m->op], r), *e = NULL;
		struct xl_specset ss;

		if (xl_specset_parse(spec, strlen(spec), &ss, &e) == 0 && ss.n == 1) {
			struct xl_version v;

			if (m->op == MO_ARB)
				res = xl_spec_contains(&ss.v[0], NULL, l) ? 1 : 0;
			else if (xl_version_parse(l, strlen(l), &v) == 0) {
				res = xl_spec_contains(&ss.v[0], &v, l) ? 1 : 0;
				xl_version_release(&v);
			} else {
				res = 0;
			}
			xl_specset_release(&ss);
			free(spec);
			goto out;
		}
		if (e)
			free(e);
		else
			xl_specset_release(&ss);
		free(spec);
	}
	switch (m->op) {
	case MO_IN: res = strstr(r, l) != NULL; break;
	case MO_NOTIN: res = strstr(r, l) == NULL; break;
	case MO_EQ: case MO_LE: case MO_GE: res = strcmp(l, r) == 0; break;
	case MO_NE: res = strcmp(l, r) != 0; break;
	case MO_LT: case MO_GT: res = 0; break;
	default:
		*err = xl_asprintf("'%s' %s '%s' is undefined: not a version comparison", l,
				   op_text[m->op], r);
		res = -1;
	}
out:
	free(ln);
	free(rn);
	return res;
}

int xl_marker_eval(const struct xl_marker *m, const struct xl_marker_env *env,
		   const char *extra, char **err)
{
	int a;

	*err = NULL;
	switch (m->kind) {
	case MK_OR:
	case MK_AND: {
		/* packaging evaluates every comparison, then combines: an
		 * undefined one anywhere is an error, whatever the others say */
		char *e2 = NULL;
		int b;

		a = xl_marker_eval(m->a, env, extra, err);
		b = xl_marker_eval(m->b, env, extra, &e2);
		if (a < 0 || b < 0) {
			if (!*err) {
				*err = e2;
				e2 = NULL;
			}
			free(e2);
			return -1;
		}
		free(e2);
		return m->kind == MK_OR ? (a || b) : (a && b);
	}
	case MK_CMP:
		return eval_cmp(m, env, extra ? extra : "", err);
	}
	return -1;
}

bool xl_marker_uses_extra(const struct xl_marker *m)
{
	if (!m)
		return false;
	if (m->kind != MK_CMP)
		return xl_marker_uses_extra(m->a) || xl_marker_uses_extra(m->b);
	return (m->lvar && strcmp(m->lhs, "extra") == 0) || (m->rvar && strcmp(m->rhs, "extra") == 0);
}

void xl_marker_env_host(struct xl_marker_env *env, const char *py)
{
	static struct utsname u;
	static char shortv[32];
	static bool done;

	if (!done) {
		if (uname(&u) < 0)
			memset(&u, 0, sizeof(u));
		done = true;
	}
	memset(env, 0, sizeof(*env));
	if (py) {
		const char *d1 = strchr(py, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
		size_t n = d2 ? (size_t)(d2 - py) : strlen(py);

		if (n >= sizeof(shortv))
			n = sizeof(shortv) - 1;
		memcpy(shortv, py, n);
		shortv[n] = '\0';
		env->python_version = shortv;
		env->python_full_version = py;
	}
	env->sys_platform = "linux";
	env->platform_system = u.sysname;
	env->platform_machine = u.machine;
	env->platform_release = u.release;
	env->platform_version = u.version;
	env->platform_python_implementation = "CPython";
	env->implementation_name = "cpython";
	env->implementation_version = py;
	env->os_name = "posix";
}
