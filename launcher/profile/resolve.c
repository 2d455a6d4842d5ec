/* resolve.c - from a profile name to the environment a child gets.
 *
 * extends is linearized depth-first, left to right, each profile once;
 * layers are applied in that order, the candidate last.  A value's ${VAR}
 * is expanded when its layer is applied, from that layer's own keys, then
 * the layers applied before it, then the launching environment (or, when
 * rendering for another machine, the values given with --set); an error is
 * reported only when the value is the one finally used, at the line that
 * set it.  The ambient policy runs on the final values.
 */
#include "launcher/profile/layer.h"
#include "launcher/profile/profile.h"

#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static const char AMBIENT_FILE[] = "environment";

struct priv {
	struct layer **layers;
	size_t n;
	struct xl_strmap index;   /* variable name -> index in p->vars */
	size_t cap;
	struct xl_strv flagfiles; /* flags files read; tokens' provenance points here */
	bool nofiles;             /* the fuzz entry point: no flags file is read */
	bool target;              /* rendering for another machine: no launching environment */
	char *const *set;         /* NAME=VALUE given for the target, or NULL */
	struct xl_strv keep;      /* strings lookups handed out, freed with the profile */
};

static struct xl_var *get_var(struct xl_profile *p, const char *name, bool create)
{
	struct priv *pv = p->priv;
	size_t i;

	if (xl_strmap_get(&pv->index, name, &i))
		return &p->vars[i];
	if (!create)
		return NULL;
	if (p->nvars == pv->cap) {
		pv->cap = pv->cap ? pv->cap * 2 : 16;
		p->vars = xl_realloc(p->vars, pv->cap * sizeof(*p->vars));
	}
	struct xl_var *v = &p->vars[p->nvars];

	memset(v, 0, sizeof(*v));
	v->name = xl_strdup(name);
	v->composite = xl_is_composite_var(name);
	xl_strmap_put(&pv->index, v->name, p->nvars);
	p->nvars++;
	return v;
}

static void drop_var(struct xl_profile *p, const char *name)
{
	struct priv *pv = p->priv;
	size_t i;

	if (!xl_strmap_get(&pv->index, name, &i))
		return;
	free(p->vars[i].name);
	free(p->vars[i].value);
	free(p->vars[i].experr);
	xl_flagmap_release(&p->vars[i].flags);
	xl_strv_release(&p->vars[i].chosen_by);
	memmove(&p->vars[i], &p->vars[i + 1], (p->nvars - i - 1) * sizeof(*p->vars));
	p->nvars--;
	/* names moved down one place: index them again */
	xl_strmap_release(&pv->index);
	for (size_t k = 0; k < p->nvars; k++)
		xl_strmap_put(&pv->index, p->vars[k].name, k);
}

const struct xl_var *xl_profile_var(const struct xl_profile *p, const char *name)
{
	return get_var((struct xl_profile *)p, name, false);
}

static struct xl_prov prov_of(const struct layer *l, const struct xl_ynode *n)
{
	struct xl_prov s = { l->path, n->line, n->col };

	return s;
}

/* ---- linearization ------------------------------------------------------ */

struct lin {
	const struct xl_ctx *ctx;
	const char *extra_dir;
	struct layer **stack;
	size_t depth;
	struct priv *out;
};

static struct layer *find_loaded(struct lin *z, const char *name)
{
	for (size_t i = 0; i < z->out->n; i++)
		if (strcmp(z->out->layers[i]->name, name) == 0)
			return z->out->layers[i];
	return NULL;
}

static int visit(struct lin *z, struct layer *l)
{
	const struct xl_ynode *e = l->extends;
	const struct xl_ynode *one[1];
	const struct xl_ynode *const *items = NULL;
	size_t n = 0;
	int rc;

	if (z->depth >= 256) {
		perr(l, l->extends, "extends is nested more than 256 levels deep");
		return XL_EX_DATAERR;
	}
	z->stack[z->depth++] = l;
	if (e) {
		if (e->kind == XL_Y_SCALAR) {
			one[0] = e;
			items = one;
			n = 1;
		} else {
			items = (const struct xl_ynode *const *)e->items;
			n = e->n;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = items[i]->str;
		struct layer *base;

		for (size_t k = 0; k < z->depth; k++) {
			if (strcmp(z->stack[k]->name, name) != 0)
				continue;
			struct xl_buf b = XL_BUF_INIT;

			for (size_t j = k; j < z->depth; j++)
				xl_buf_addf(&b, "%s -> ", z->stack[j]->name);
			xl_buf_adds(&b, name);
			perr(l, items[i], "extends cycle: %s", xl_buf_str(&b));
			xl_buf_release(&b);
			return XL_EX_DATAERR;
		}
		if (find_loaded(z, name))
			continue;
		rc = layer_load(z->ctx, name, z->extra_dir, &base);
		if (rc) {
			if (rc == XL_EX_NOINPUT)
				perr(l, items[i], "extends '%s', which cannot be loaded", name);
			return rc == XL_EX_USAGE ? XL_EX_DATAERR : rc;
		}
		rc = visit(z, base);
		if (rc) {
			layer_free(base);
			return rc;
		}
	}
	z->depth--;
	z->out->layers = xl_realloc(z->out->layers, (z->out->n + 1) * sizeof(*z->out->layers));
	z->out->layers[z->out->n++] = l;
	return 0;
}

/* ---- applying layers ------------------------------------------------------ */

static void prov_error(const struct xl_profile *p, struct xl_prov s, const char *what,
		       const char *msg);

/* ---- expansion ------------------------------------------------------------- */

/* Where ${NAME} found its value. */
enum { LK_UNSET = 0, LK_PROFILE, LK_ENV, LK_SET, LK_ERROR = -1 };

/* Looks NAME up; *val lives as long as the expansion (or the profile). */
typedef int (*lookup_fn)(void *ud, const char *name, const char **val, char **err);

/* Expands ${VAR} and ${VAR:-default}; "$$" is a literal "$".  A default
 * may itself hold ${...} (expanded only when used).  not_set, when given,
 * is told of each ${VAR} that had no value (def: whether a default was
 * used) and may set *err to refuse it.  Returns a new string, or NULL with
 * *err set. */
static char *expand_with(const char *s, lookup_fn fn, void *ud,
			 void (*not_set)(void *ud, const char *name, const char *def, char **err),
			 char **err, int depth)
{
	struct xl_buf b = XL_BUF_INIT;

	*err = NULL;
	if (depth > 8) {
		*err = xl_strdup("defaults nested more than 8 deep");
		return NULL;
	}
	for (const char *p = s; *p; p++) {
		const char *close, *def = NULL, *q, *val = NULL;
		char *name;
		int level = 0, got;

		if (*p != '$') {
			xl_buf_addc(&b, *p);
			continue;
		}
		if (p[1] == '$') {
			xl_buf_addc(&b, '$');
			p++;
			continue;
		}
		if (p[1] != '{') {
			xl_buf_addc(&b, '$');
			continue;
		}
		/* find the matching '}' and the first ":-" at this level */
		for (q = p + 2, close = NULL; *q; q++) {
			if (q[0] == '$' && q[1] == '{') {
				level++;
				q++;
			} else if (*q == '}') {
				if (!level) {
					close = q;
					break;
				}
				level--;
			} else if (!level && !def && q[0] == ':' && q[1] == '-') {
				def = q;
			}
		}
		if (!close) {
			*err = xl_asprintf("unterminated '${' in '%s'", s);
			xl_buf_release(&b);
			return NULL;
		}
		name = xl_strndup(p + 2, (size_t)((def ? def : close) - (p + 2)));
		if (!xl_valid_env_name(name)) {
			*err = xl_asprintf("'${%s}' does not name a variable", name);
			free(name);
			xl_buf_release(&b);
			return NULL;
		}
		got = fn(ud, name, &val, err);
		if (got == LK_ERROR) {
			free(name);
			xl_buf_release(&b);
			return NULL;
		}
		if (got != LK_UNSET && (*val || !def)) {
			xl_buf_adds(&b, val);
		} else if (def) {
			char *d = xl_strndup(def + 2, (size_t)(close - def - 2));
			char *x = expand_with(d, fn, ud, not_set, err, depth + 1);

			free(d);
			if (x && not_set && got == LK_UNSET)
				not_set(ud, name, x, err);
			if (!x || *err) {
				free(x);
				free(name);
				xl_buf_release(&b);
				return NULL;
			}
			xl_buf_adds(&b, x);
			free(x);
		} else {
			if (not_set)
				not_set(ud, name, NULL, err);
			if (!*err)
				*err = xl_asprintf("${%s} is not set and has no default (write ${%s:-DEFAULT})",
						   name, name);
			free(name);
			xl_buf_release(&b);
			return NULL;
		}
		free(name);
		p = close;
	}
	return xl_buf_detach(&b);
}

static int env_lookup(void *ud, const char *name, const char **val, char **err)
{
	(void)ud;
	(void)err;
	*val = getenv(name);
	return *val ? LK_ENV : LK_UNSET;
}

char *xl_expand_vars(const char *s, char **err)
{
	return expand_with(s, env_lookup, NULL, NULL, err, 0);
}

static const char *set_get(char *const *set, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; set && set[i]; i++)
		if (strncmp(set[i], name, n) == 0 && set[i][n] == '=')
			return set[i] + n + 1;
	return NULL;
}

/* NAME as the layers applied so far left it, then the launching
 * environment (rendering for a target: the --set values only). */
static int prev_lookup(struct xl_profile *p, const char *name, const char **val, char **err)
{
	struct priv *pv = p->priv;
	struct xl_var *v = get_var(p, name, false);

	if (v) {
		if (v->experr) {
			*err = xl_strdup(v->experr);
			return LK_ERROR;
		}
		if (!v->value)
			return LK_UNSET; /* the profile unsets it */
		if (v->composite) {
			char *f = xl_flagmap_format(&v->flags);

			xl_strv_push_owned(&pv->keep, f);
			*val = f;
		} else {
			*val = v->value;
		}
		return LK_PROFILE;
	}
	if ((*val = set_get(pv->set, name))) {
		char *note = xl_asprintf("${%s} from --set: '%s'", name, *val);

		if (!xl_strv_contains(&p->target_notes, note))
			xl_strv_push_owned(&p->target_notes, note);
		else
			free(note);
		return LK_SET;
	}
	if (pv->target)
		return LK_UNSET;
	*val = getenv(name);
	return *val ? LK_ENV : LK_UNSET;
}

/* One layer's env section while its values are expanded: its keys see
 * each other in any order; a key's own name means its earlier value. */
struct lenv {
	struct xl_profile *p;
	const struct xl_ynode *env;
	size_t n;                 /* key/value pairs */
	char **val, **err;
	unsigned char *state;     /* 0 not yet, 1 being expanded, 2 done */
	size_t *stack, depth;
	struct xl_strv *chosen;   /* per key: what its ${VAR}s took (xl_var.chosen_by) */
};

/* Notes what ${name} took for the key being expanded. */
static void note_chosen(struct lenv *le, const char *name, int got, const char *val)
{
	static const char *const whence[] = {
		[LK_UNSET] = "not set", [LK_PROFILE] = "from the profile",
		[LK_ENV] = "from the launching environment", [LK_SET] = "from --set",
	};
	struct xl_strv *c;
	char *note;

	if (!le->chosen || !le->depth || got < 0)
		return;
	c = &le->chosen[le->stack[le->depth - 1]];
	note = got != LK_UNSET && val && !*val ? xl_asprintf("${%s} empty", name)
					       : xl_asprintf("${%s} %s", name, whence[got]);
	if (!xl_strv_contains(c, note))
		xl_strv_push_owned(c, note);
	else
		free(note);
}

static bool layer_key(const struct lenv *le, const char *name, size_t *at)
{
	for (size_t j = 0; j < le->n; j++) {
		const struct xl_ynode *k = le->env->items[2 * j], *v = le->env->items[2 * j + 1];

		if (strcmp(k->str, name) == 0 && !xl_ynode_is_null(v) && !xl_is_composite_var(name)) {
			*at = j;
			return true;
		}
	}
	return false;
}

static void lenv_expand(struct lenv *le, size_t j);

static int lenv_lookup(void *ud, const char *name, const char **val, char **err)
{
	struct lenv *le = ud;
	size_t j;

	int got;

	if ((le->depth && strcmp(le->env->items[2 * le->stack[le->depth - 1]]->str, name) == 0) ||
	    !layer_key(le, name, &j)) {
		got = prev_lookup(le->p, name, val, err);
		note_chosen(le, name, got, *val);
		return got;
	}
	if (le->state[j] == 1) {
		struct xl_buf b = XL_BUF_INIT;
		size_t k = 0;

		while (le->stack[k] != j)
			k++;
		for (; k < le->depth; k++)
			xl_buf_addf(&b, "${%s} -> ", le->env->items[2 * le->stack[k]]->str);
		xl_buf_addf(&b, "${%s}: cycle", name);
		*err = xl_buf_detach(&b);
		return LK_ERROR;
	}
	if (le->state[j] == 0)
		lenv_expand(le, j);
	if (le->err[j]) {
		*err = xl_strdup(le->err[j]);
		return LK_ERROR;
	}
	*val = le->val[j];
	note_chosen(le, name, LK_PROFILE, *val);
	return LK_PROFILE;
}

/* Rendering for a target: says what each ${VAR} without a value took. */
static void target_not_set(void *ud, const char *name, const char *def, char **err)
{
	struct lenv *le = ud;
	struct xl_profile *p = le->p;
	struct priv *pv = p->priv;
	char *note;

	if (!pv->target)
		return;
	if (!def) {
		*err = xl_asprintf("${%s} has no value for the target machine (this machine's is not used); give one with --set %s=VALUE or write ${%s:-DEFAULT}",
				   name, name, name);
		return;
	}
	note = xl_asprintf("${%s} not given for the target: its default '%s' used (--set %s=VALUE gives one)",
			   name, def, name);
	if (!xl_strv_contains(&p->target_notes, note))
		xl_strv_push_owned(&p->target_notes, note);
	else
		free(note);
}

static void lenv_expand(struct lenv *le, size_t j)
{
	const char *raw = le->env->items[2 * j + 1]->str;

	le->state[j] = 1;
	le->stack[le->depth++] = j;
	le->val[j] = expand_with(raw, lenv_lookup, le, target_not_set, &le->err[j], 0);
	if (le->val[j] && le->err[j]) {
		free(le->val[j]);
		le->val[j] = NULL;
	}
	le->depth--;
	le->state[j] = 2;
}

/* A value of a flags section: the layers applied so far, then the
 * launching environment. */
static int prof_lookup(void *ud, const char *name, const char **val, char **err)
{
	struct lenv *le = ud;

	return prev_lookup(le->p, name, val, err);
}

static int apply_env(struct xl_profile *p, const struct layer *l, const struct xl_ynode *env)
{
	struct lenv le;
	int rc = 0;

	if (!env)
		return 0;
	memset(&le, 0, sizeof(le));
	le.p = p;
	le.env = env;
	le.n = env->n / 2;
	le.val = xl_calloc(le.n + 1, sizeof(*le.val));
	le.err = xl_calloc(le.n + 1, sizeof(*le.err));
	le.state = xl_calloc(le.n + 1, 1);
	le.stack = xl_calloc(le.n + 1, sizeof(*le.stack));
	le.chosen = xl_calloc(le.n + 1, sizeof(*le.chosen));
	/* every value first, against what the layers before left ... */
	for (size_t j = 0; j < le.n; j++)
		if (!xl_ynode_is_null(env->items[2 * j + 1]) && !le.state[j])
			lenv_expand(&le, j);
	/* ... then the layer is applied */
	for (size_t j = 0; j < le.n && !rc; j++) {
		const struct xl_ynode *k = env->items[2 * j], *v = env->items[2 * j + 1];
		struct xl_var *var;

		if (xl_ynode_is_null(v)) {
			/* forget what a base profile set */
			drop_var(p, k->str);
			continue;
		}
		var = get_var(p, k->str, true);
		var->src = prov_of(l, v);
		free(var->value);
		var->value = NULL;
		free(var->experr);
		var->experr = NULL;
		xl_strv_release(&var->chosen_by);
		var->chosen_by = le.chosen[j];
		memset(&le.chosen[j], 0, sizeof(le.chosen[j]));
		if (var->composite) {
			/* a whole flag string merges token by token; a flags
			 * file is read and its tokens merge the same way */
			struct priv *pv = p->priv;
			struct xl_prov at = var->src;
			char *err = le.err[j] ? xl_strdup(le.err[j]) : NULL;
			const char *x = le.val[j];

			if (x && !xl_flagmap_read(&var->flags, k->str, x, var->src,
						  pv->nofiles ? NULL : &pv->flagfiles, &at, &err) &&
			    at.file != var->src.file) {
				/* the place in the flags file, then where it is named */
				char *m = xl_asprintf("%s; the file is named at %s:%u:%u", err,
						      var->src.file, var->src.line, var->src.col);

				free(err);
				err = m;
			}
			if (err) {
				prov_error(p, at, k->str, err);
				free(err);
				rc = XL_EX_DATAERR;
				break;
			}
			var->value = xl_strdup("");
		} else if (le.err[j]) {
			/* reported if no later layer replaces the value */
			var->experr = le.err[j];
			le.err[j] = NULL;
		} else {
			var->value = le.val[j];
			le.val[j] = NULL;
		}
	}
	for (size_t j = 0; j < le.n; j++) {
		free(le.val[j]);
		free(le.err[j]);
		xl_strv_release(&le.chosen[j]);
	}
	free(le.val);
	free(le.err);
	free(le.state);
	free(le.stack);
	free(le.chosen);
	return rc;
}

static void apply_unset(struct xl_profile *p, const struct layer *l, const struct xl_ynode *u)
{
	const struct xl_ynode *one[1];
	const struct xl_ynode *const *items;
	size_t n;

	if (!u)
		return;
	if (u->kind == XL_Y_SCALAR) {
		one[0] = u;
		items = one;
		n = 1;
	} else {
		items = (const struct xl_ynode *const *)u->items;
		n = u->n;
	}
	for (size_t i = 0; i < n; i++) {
		struct xl_var *var = get_var(p, items[i]->str, true);

		free(var->value);
		var->value = NULL;
		free(var->experr);
		var->experr = NULL;
		xl_flagmap_release(&var->flags);
		xl_strv_release(&var->chosen_by);
		var->src = prov_of(l, items[i]);
	}
}

static int apply_flags(struct xl_profile *p, const struct layer *l, const struct xl_ynode *f)
{
	struct lenv le = { .p = p };

	for (size_t i = 0; f && i + 1 < f->n; i += 2) {
		const struct xl_ynode *m = f->items[i + 1];
		struct xl_var *var = get_var(p, f->items[i]->str, true);

		for (size_t j = 0; j + 1 < m->n; j += 2) {
			const struct xl_ynode *k = m->items[j], *v = m->items[j + 1];
			char *err = NULL, *x;

			if (xl_ynode_is_null(v)) {
				xl_flagmap_del(&var->flags, k->str);
				continue;
			}
			x = expand_with(v->str, prof_lookup, &le, target_not_set, &err, 0);
			if (x && err) {
				free(x);
				x = NULL;
			}
			if (!x) {
				prov_error(p, prov_of(l, v), k->str, err);
				free(err);
				return XL_EX_DATAERR;
			}
			xl_flagmap_set_layer(&var->flags, var->name, k->str, x, prov_of(l, v));
			free(x);
		}
		var->src = prov_of(l, f->items[i]);
		free(var->value);
		var->value = xl_strdup("");
	}
	return 0;
}

static void apply_policy(struct xl_profile *p, const struct layer *l, const struct xl_ynode *pol)
{
	const struct xl_ynode *v;

	if (!pol)
		return;
	if ((v = xl_ymap_get(pol, "timing"))) {
		xl_yscalar_bool(v, &p->policy.timing);
		p->policy.timing_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(pol, "strict"))) {
		xl_yscalar_bool(v, &p->policy.strict);
		p->policy.strict_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(pol, "cache"))) {
		p->policy.cache = strcmp(v->str, "local") == 0 ? XL_CACHE_LOCAL : XL_CACHE_ANY;
		p->policy.cache_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(pol, "ambient"))) {
		p->policy.ambient = strcmp(v->str, "keep") == 0 ? XL_AMB_KEEP
				    : strcmp(v->str, "warn") == 0 ? XL_AMB_WARN
				    : strcmp(v->str, "error") == 0 ? XL_AMB_ERROR : XL_AMB_STRIP;
		p->policy.ambient_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(pol, "bundle"))) {
		xl_strv_release(&p->policy.bundle);
		if (v->kind == XL_Y_SCALAR) {
			if (!xl_ynode_is_null(v))
				xl_strv_push(&p->policy.bundle, v->str);
		} else {
			for (size_t i = 0; i < v->n; i++)
				xl_strv_push(&p->policy.bundle, v->items[i]->str);
		}
		p->policy.bundle_src = prov_of(l, v);
	}
}

static void apply_limits(struct xl_profile *p, const struct xl_ynode *m)
{
	for (size_t i = 0; m && i + 1 < m->n; i += 2) {
		const char *k = m->items[i]->str;
		const char *s = m->items[i + 1]->str;
		int64_t val = -1;
		uint64_t u;
		double d;

		if (strcmp(s, "unlimited") == 0)
			val = INT64_MAX;
		else if (strcmp(k, "cpu_time") == 0 && xl_parse_duration(s, &d))
			val = (int64_t)d;
		else if (strcmp(k, "cpu_time") != 0 && xl_parse_bytes(s, &u))
			val = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
		if (strcmp(k, "address_space") == 0)
			p->limits.address_space = val;
		else if (strcmp(k, "open_files") == 0)
			p->limits.open_files = val;
		else if (strcmp(k, "core") == 0)
			p->limits.core = val;
		else if (strcmp(k, "cpu_time") == 0)
			p->limits.cpu_time = val;
		else if (strcmp(k, "memory") == 0)
			p->limits.memory = val;
	}
}

static void apply_compile(struct xl_profile *p, const struct layer *l, const struct xl_ynode *m)
{
	struct xl_compile_cfg *c = &p->compile;
	const struct xl_ynode *v;
	double d;
	bool b;

	if (!m)
		return;
	if ((v = xl_ymap_get(m, "step_pattern"))) {
		free(c->step_pattern);
		c->step_pattern = xl_strdup(v->str);
		c->step_pattern_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(m, "warmup_steps")) && xl_yscalar_double(v, &d)) {
		c->warmup_steps = (long)d;
		c->warmup_steps_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(m, "max_after_warmup")) && xl_yscalar_double(v, &d)) {
		c->max_after_warmup = (long)d;
		c->max_after_warmup_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(m, "max_compile_share")) && xl_yscalar_double(v, &d)) {
		c->max_compile_share = d;
		c->max_compile_share_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(m, "on_storm")) && xl_on_storm_parse(v->str, &c->on_storm))
		c->on_storm_src = prov_of(l, v);
	if ((v = xl_ymap_get(m, "early_oom")) && xl_yscalar_bool(v, &b)) {
		c->early_oom = b ? XL_EARLY_OOM_ON : XL_EARLY_OOM_OFF;
		c->early_oom_src = prov_of(l, v);
	}
}

static void apply_ranks(struct xl_profile *p, const struct layer *l, const struct xl_ynode *m)
{
	struct xl_ranks_cfg *c = &p->ranks;
	const struct xl_ynode *v;
	bool b;

	if (!m)
		return;
	if ((v = xl_ymap_get(m, "watch")) && xl_yscalar_bool(v, &b)) {
		c->watch = b;
		c->watch_src = prov_of(l, v);
	}
	if ((v = xl_ymap_get(m, "grace")) && xl_parse_duration(v->str, &c->grace_s))
		c->grace_src = prov_of(l, v);
	if ((v = xl_ymap_get(m, "poll")) && xl_parse_duration(v->str, &c->poll_s))
		c->poll_src = prov_of(l, v);
	if ((v = xl_ymap_get(m, "lease")) && xl_parse_duration(v->str, &c->lease_s))
		c->lease_src = prov_of(l, v);
}

/* YAML scalar to JSON: plain numbers and booleans keep their type. */
static json_t *scalar_json(const struct xl_ynode *n)
{
	bool b;
	char *end;

	if (xl_ynode_is_null(n))
		return json_null();
	if (n->plain && !n->tag) {
		if (xl_yscalar_bool(n, &b))
			return json_boolean(b);
		errno = 0;
		long long ll = strtoll(n->str, &end, 10);

		if (*n->str && !*end && !errno)
			return json_integer(ll);
		double d = strtod(n->str, &end);

		if (*n->str && !*end && !errno)
			return json_real(d);
	}
	return json_string(n->str);
}

static json_t *yaml_json(const struct xl_ynode *n)
{
	json_t *j;

	switch (n->kind) {
	case XL_Y_SCALAR:
		return scalar_json(n);
	case XL_Y_SEQ:
		j = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(j, yaml_json(n->items[i]));
		return j;
	case XL_Y_MAP:
		j = json_object();
		for (size_t i = 0; i + 1 < n->n; i += 2)
			json_object_set_new(j, n->items[i]->str, yaml_json(n->items[i + 1]));
		return j;
	}
	return json_null();
}

static void merge_json(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;

	json_object_foreach(src, k, v) {
		json_t *d = json_object_get(dst, k);

		if (json_is_object(d) && json_is_object(v))
			merge_json(d, v);
		else
			json_object_set(dst, k, v);
	}
}

static void apply_signature(struct xl_profile *p, const struct xl_ynode *s)
{
	json_t *j;

	if (!s)
		return;
	j = yaml_json(s);
	merge_json(p->signature, j);
	json_decref(j);
}

static const struct xl_ynode *section(const struct xl_ynode *root, const char *key)
{
	const struct xl_ynode *n = xl_ymap_get(root, key);

	return xl_ynode_is_null(n) ? NULL : n;
}

/* Applies a profile file, or (m non-NULL) one of its candidates. */
static int apply_layer(struct xl_profile *p, const struct layer *l, const struct xl_ynode *m)
{
	const struct xl_ynode *root = m ? m : l->root;
	int rc;

	if ((rc = apply_env(p, l, section(root, "env"))))
		return rc;
	apply_unset(p, l, section(root, "unset"));
	if ((rc = apply_flags(p, l, section(root, "flags"))))
		return rc;
	if (!m) {
		apply_policy(p, l, l->policy);
		apply_compile(p, l, l->compile);
		apply_ranks(p, l, l->ranks);
	}
	apply_limits(p, section(root, "limits"));
	apply_signature(p, section(root, "signature"));
	return 0;
}

/* ---- composite values ---------------------------------------------------- */

static void prov_error(const struct xl_profile *p, struct xl_prov s, const char *what,
		       const char *msg)
{
	xl_error("profile '%s': %s:%u:%u: %s: %s", p->name, s.file, s.line, s.col, what, msg);
}

/* Reports a winning value that could not be expanded; formats composite
 * variables. */
static int finish_values(struct xl_profile *p)
{
	for (size_t i = 0; i < p->nvars; i++) {
		struct xl_var *v = &p->vars[i];

		if (v->experr) {
			prov_error(p, v->src, v->name, v->experr);
			return XL_EX_DATAERR;
		}
		if (!v->value)
			continue;
		if (v->composite) {
			free(v->value);
			v->value = xl_flagmap_format(&v->flags);
		}
	}
	return 0;
}

/* ---- the launching environment ------------------------------------------------ */

static const char *const ambient_names[] = { "strip", "keep", "warn", "error" };

static int ambient_cataloged(struct xl_profile *p);
static const char *ambient_at(const struct xl_profile *p);

static int apply_ambient(struct xl_profile *p)
{
	static const char *const composites[] = { "XLA_FLAGS", "LIBTPU_INIT_ARGS", "TF_XLA_FLAGS" };
	enum xl_ambient mode = p->policy.ambient;

	for (size_t c = 0; c < 3; c++) {
		const char *name = composites[c];
		const char *shell = getenv(name);
		struct xl_var *v = get_var(p, name, false);
		struct xl_flagmap merged = { NULL, 0, 0 };
		struct xl_prov env_src = { AMBIENT_FILE, 0, 0 }, at;
		char *err = NULL;

		if (!shell || !*shell)
			continue;
		if (v && !v->value)
			continue; /* the profile unsets it */
		if (v && strcmp(shell, v->value) == 0)
			continue;
		if (mode == XL_AMB_ERROR) {
			xl_error("profile '%s': policy 'ambient: error' refuses %s from the launching environment ('%s'); unset it or put it in the profile",
				 p->name, name, shell);
			return XL_EX_NOPERM;
		}
		if (mode == XL_AMB_STRIP) {
			xl_strv_push_owned(&p->notes, xl_asprintf("%s from the launching environment was stripped (policy ambient: strip): %s",
								   name, shell));
			xl_strv_push(&p->stripped, name);
			continue;
		}
		if (!xl_flagmap_read(&merged, name, shell, env_src,
				     ((struct priv *)p->priv)->nofiles ? NULL : &((struct priv *)p->priv)->flagfiles,
				     &at, &err)) {
			if (at.file != env_src.file)
				xl_error("profile '%s': %s:%u:%u: %s in the launching environment: %s",
					 p->name, at.file, at.line, at.col, name, err);
			else
				xl_error("profile '%s': %s in the launching environment: %s", p->name, name, err);
			free(err);
			xl_flagmap_release(&merged);
			return XL_EX_DATAERR;
		}
		if (mode == XL_AMB_WARN)
			xl_warn("profile '%s': %s from the launching environment is merged under the profile's flags: %s",
				p->name, name, shell);
		if (v) {
			/* the profile's flags over the shell's, a repeated list
			 * flag kept whole, and where a list was replaced */
			struct xl_strv done = XL_STRV_INIT;

			for (size_t k = 0; k < v->flags.n; k++) {
				const struct xl_flag *f = &v->flags.v[k];

				if (xl_strv_contains(&done, f->name)) {
					xl_flagmap_add(&merged, f->name, f->value, f->src);
					continue;
				}
				xl_flagmap_set_layer(&merged, name, f->name, f->value, f->src);
				xl_strv_push(&done, f->name);
				if (f->prev.file)
					for (size_t j = 0; j < merged.n; j++)
						if (strcmp(merged.v[j].name, f->name) == 0) {
							merged.v[j].prev = f->prev;
							break;
						}
			}
			xl_strv_release(&done);
			xl_flagmap_release(&v->flags);
		} else {
			v = get_var(p, name, true);
			v->src = env_src;
		}
		v->flags = merged;
		v->ambient = true;
		free(v->value);
		v->value = xl_flagmap_format(&v->flags);
		xl_strv_push_owned(&p->notes, xl_asprintf("%s from the launching environment was kept under the profile's flags (policy ambient: %s)",
							   name, ambient_names[mode]));
	}
	for (size_t i = 0; i < p->nvars; i++) {
		struct xl_var *v = &p->vars[i];
		const char *shell = getenv(v->name);

		if (v->composite || !v->value || !shell || strcmp(shell, v->value) == 0)
			continue;
		if (mode == XL_AMB_ERROR) {
			xl_error("profile '%s': policy 'ambient: error' refuses %s=%s from the launching environment (the profile sets '%s')",
				 p->name, v->name, shell, v->value);
			return XL_EX_NOPERM;
		}
		if (mode == XL_AMB_WARN)
			xl_warn("profile '%s': %s=%s in the launching environment is replaced by '%s'",
				p->name, v->name, shell, v->value);
		xl_strv_push_owned(&p->notes, xl_asprintf("%s=%s from the launching environment was replaced by the profile's value",
							   v->name, shell));
	}
	return ambient_cataloged(p);
}

/* Every other variable of the launching environment that a catalog
 * names (and no launcher owns) is the policy's as well: stripped, refused,
 * or kept as a managed variable from "environment", which the checks then
 * see like any other (timing: true refuses a debug variable the shell set). */
static int ambient_cataloged(struct xl_profile *p)
{
	enum xl_ambient mode = p->policy.ambient;
	struct xl_buf refused = XL_BUF_INIT;
	struct xl_prov env_src = { AMBIENT_FILE, 0, 0 };

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char *name;
		struct xl_var *v;

		if (!eq || eq == *e)
			continue;
		name = xl_strndup(*e, (size_t)(eq - *e));
		if (xl_is_composite_var(name) || get_var(p, name, false) || !xl_catalog_env(name) ||
		    xl_catalog_owned(name) || xl_strv_contains(&p->stripped, name)) {
			free(name);
			continue;
		}
		switch (mode) {
		case XL_AMB_STRIP:
			xl_strv_push(&p->stripped, name);
			break;
		case XL_AMB_ERROR:
			xl_buf_addf(&refused, "%s%s", refused.len ? ", " : "", *e);
			break;
		case XL_AMB_KEEP:
		case XL_AMB_WARN:
			v = get_var(p, name, true);
			v->value = xl_strdup(eq + 1);
			v->src = env_src;
			v->ambient = true;
			xl_strv_push_owned(&p->notes, xl_asprintf("%s=%s from the launching environment was kept (policy ambient: %s)",
								   name, eq + 1, ambient_names[mode]));
			break;
		}
		free(name);
	}
	if (refused.len) {
		xl_error("profile '%s': policy 'ambient: error'%s refuses from the launching environment: %s; unset them or set them in the profile",
			 p->name, ambient_at(p), xl_buf_str(&refused));
		xl_buf_release(&refused);
		return XL_EX_NOPERM;
	}
	return 0;
}

/* " (file:line)" where the ambient policy was set, or "" for the default. */
static const char *ambient_at(const struct xl_profile *p)
{
	static char buf[1100];

	if (!p->policy.ambient_src.file)
		return "";
	snprintf(buf, sizeof(buf), " (%s:%u)", p->policy.ambient_src.file, p->policy.ambient_src.line);
	return buf;
}

void xl_profile_report_ambient(const struct xl_profile *p)
{
	struct xl_buf b = XL_BUF_INIT;
	bool any = false;

	if (p->stripped.n) {
		for (size_t i = 0; i < p->stripped.n; i++)
			xl_buf_addf(&b, "%s%s", i ? ", " : "", p->stripped.v[i]);
		xl_warn("profile '%s': policy 'ambient: strip'%s keeps from the child what the launching environment sets for %s (set them in the profile, or policy ambient: keep)",
			p->name, ambient_at(p), xl_buf_str(&b));
		xl_buf_release(&b);
	}
	if (p->policy.ambient != XL_AMB_WARN)
		return;
	for (size_t i = 0; i < p->nvars; i++) {
		if (!p->vars[i].ambient || p->vars[i].composite)
			continue;
		xl_buf_addf(&b, "%s%s=%s", any ? ", " : "", p->vars[i].name, p->vars[i].value ? p->vars[i].value : "");
		any = true;
	}
	if (any)
		xl_warn("profile '%s': policy 'ambient: warn'%s passes from the launching environment: %s",
			p->name, ambient_at(p), xl_buf_str(&b));
	xl_buf_release(&b);
}

char **xl_profile_build_env(const struct xl_profile *p, char *const *environ_in)
{
	struct xl_strv out = XL_STRV_INIT;

	for (size_t i = 0; environ_in && environ_in[i]; i++) {
		const char *e = environ_in[i];
		const char *eq = strchr(e, '=');
		char *name;
		bool drop;

		if (!eq)
			continue;
		name = xl_strndup(e, (size_t)(eq - e));
		/* managed variables come from the profile; composite variables
		 * from the shell reach the child only through the ambient policy */
		drop = get_var((struct xl_profile *)p, name, false) || xl_is_composite_var(name) ||
		       xl_strv_contains(&p->stripped, name);
		free(name);
		if (!drop)
			xl_strv_push(&out, e);
	}
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		if (!v->value || (v->composite && !v->flags.n))
			continue;
		xl_strv_push_owned(&out, xl_asprintf("%s=%s", v->name, v->value));
	}
	if (!out.v)
		return xl_calloc(1, sizeof(char *));
	return out.v;
}

void xl_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* ---- the whole resolution -------------------------------------------------------- */

static void free_cands(struct xl_profile *p)
{
	for (size_t c = 0; c < p->ncands; c++) {
		free(p->cands[c].name);
		free(p->cands[c].description);
		xl_strv_release(&p->cands[c].args);
	}
	free(p->cands);
	p->cands = NULL;
	p->ncands = 0;
}

/* A candidate's args as written (validated: a list of scalars). */
static void take_args(struct xl_candidate *c, const struct layer *l, const struct xl_ynode *a)
{
	if (!a)
		return;
	c->args_src = prov_of(l, a);
	for (size_t i = 0; i < a->n; i++)
		xl_strv_push(&c->args, a->items[i]->str);
}

const struct xl_strv *xl_profile_args(const struct xl_profile *p)
{
	if (p->cand < 0 || !p->cands[p->cand].args.n)
		return NULL;
	return &p->cands[p->cand].args;
}

char **xl_profile_command(const struct xl_profile *p, char *const *argv, int argc, int *outc)
{
	const struct xl_strv *a = xl_profile_args(p);
	size_t na = a ? a->n : 0;
	char **v = xl_calloc((size_t)argc + na + 1, sizeof(*v));

	for (int i = 0; i < argc; i++)
		v[i] = argv[i];
	for (size_t i = 0; i < na; i++)
		v[(size_t)argc + i] = a->v[i];
	*outc = argc + (int)na;
	return v;
}

int xl_profile_find_candidate(const struct xl_profile *p, const char *name)
{
	for (size_t i = 0; i < p->ncands; i++)
		if (strcmp(p->cands[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Resolves from a loaded top layer (taken over).  nofollow: bases are not
 * loaded (the fuzz entry point reads no files). */
/* run's and exec's --set and --flag: the last layer, kept with the others
 * (the provenance of what it sets points into it) */
static int apply_overrides(struct xl_profile *p)
{
	struct priv *pv = p->priv;
	struct layer *l;
	int rc = pv->nofiles ? 0 : overrides_layer(&l);

	if (rc || pv->nofiles || !l)
		return rc;
	pv->layers = xl_realloc(pv->layers, (pv->n + 1) * sizeof(*pv->layers));
	pv->layers[pv->n++] = l;
	if ((rc = apply_layer(p, l, NULL)))
		return rc;
	/* its lines are those of the text it stands for: the place is the
	 * command line alone */
	for (size_t i = 0; i < p->nvars; i++) {
		struct xl_var *v = &p->vars[i];

		if (v->src.file == l->path)
			v->src.line = v->src.col = 0;
		for (size_t k = 0; k < v->flags.n; k++)
			if (v->flags.v[k].src.file == l->path)
				v->flags.v[k].src.line = v->flags.v[k].src.col = 0;
	}
	return 0;
}

static int resolve_top(const struct xl_ctx *ctx, struct layer *top, char *dir, const char *cand,
		       unsigned flags, char *const *set, bool nofollow, struct xl_profile **out)
{
	struct xl_profile *p = xl_calloc(1, sizeof(*p));
	struct priv *pv = xl_calloc(1, sizeof(*pv));
	struct layer *cand_layer = NULL;
	const struct xl_ynode *cand_node = NULL;
	struct lin z;
	int rc = 0;

	p->priv = pv;
	pv->nofiles = nofollow;
	pv->set = set;
	pv->target = flags & XL_RESOLVE_TARGET;
	p->for_target = pv->target;
	p->cand = -1;
	p->limits.address_space = p->limits.open_files = p->limits.core = p->limits.cpu_time = -1;
	p->limits.memory = -1;
	p->compile.warmup_steps = p->compile.max_after_warmup = -1;
	p->compile.max_compile_share = -1;
	p->ranks.watch = true;
	p->ranks.grace_s = XL_RANKS_GRACE_S;
	p->ranks.poll_s = XL_RANKS_POLL_S;
	p->ranks.lease_s = XL_RANKS_LEASE_S;
	p->signature = json_object();
	*out = NULL;
	memset(&z, 0, sizeof(z));
	z.ctx = ctx;
	z.extra_dir = dir;
	z.stack = xl_calloc(257, sizeof(*z.stack));
	z.out = pv;
	if (nofollow) {
		pv->layers = xl_calloc(1, sizeof(*pv->layers));
		pv->layers[pv->n++] = top;
	} else {
		rc = visit(&z, top);
	}
	free(z.stack);
	if (rc) {
		/* layers already linearized are owned by pv; top may not be */
		bool owned = false;

		for (size_t i = 0; i < pv->n; i++)
			owned |= pv->layers[i] == top;
		if (!owned)
			layer_free(top);
		goto fail;
	}
	p->name = xl_strdup(top->name);
	p->file = xl_strdup(top->path);
	if (top->description)
		p->description = xl_strdup(top->description);
	for (size_t i = 0; i < pv->n; i++) {
		struct layer *l = pv->layers[i];

		xl_strv_push(&p->chain, l->name);
		xl_strv_push(&p->chain_files, l->path);
		rc = apply_layer(p, l, NULL);
		if (rc)
			goto fail;
		if (l->candidates) {
			cand_layer = l;
			free_cands(p);
			p->ncands = l->candidates->n;
			p->cands = xl_calloc(p->ncands, sizeof(*p->cands));
			for (size_t c = 0; c < p->ncands; c++) {
				const struct xl_ynode *m = l->candidates->items[c];
				const struct xl_ynode *d = xl_ymap_get(m, "description");

				p->cands[c].name = xl_strdup(xl_ymap_get(m, "name")->str);
				p->cands[c].description = d && !xl_ynode_is_null(d) ? xl_strdup(d->str) : NULL;
				p->cands[c].src = prov_of(l, m);
				take_args(&p->cands[c], l, xl_ymap_get(m, "args"));
			}
		}
	}
	if (cand) {
		int idx = xl_profile_find_candidate(p, cand);

		if (idx < 0) {
			struct xl_buf b = XL_BUF_INIT;

			for (size_t c = 0; c < p->ncands; c++)
				xl_buf_addf(&b, "%s%s", c ? ", " : "", p->cands[c].name);
			if (p->ncands)
				xl_error("profile '%s': no candidate '%s' (candidates: %s)", p->name, cand,
					 xl_buf_str(&b));
			else
				xl_error("profile '%s': no candidate '%s' (the profile has no candidates)",
					 p->name, cand);
			xl_buf_release(&b);
			rc = XL_EX_NOINPUT;     /* a name that is not there, as a profile's */
			goto fail;
		}
		p->cand = idx;
		cand_node = cand_layer->candidates->items[idx];
		rc = apply_layer(p, cand_layer, cand_node);
		if (rc)
			goto fail;
	}
	if ((rc = apply_overrides(p)))
		goto fail;
	if (p->policy.strict) {
		for (size_t i = 0; i < pv->n; i++) {
			if (!pv->layers[i]->open_to_all)
				continue;
			xl_error("profile '%s': %s:%u:%u: policy 'strict' refuses profile '%s': %s",
				 p->name, p->policy.strict_src.file, p->policy.strict_src.line,
				 p->policy.strict_src.col, pv->layers[i]->name, pv->layers[i]->open_to_all);
			rc = XL_EX_NOPERM;
		}
		if (rc)
			goto fail;
	}
	rc = finish_values(p);
	if (rc)
		goto fail;
	if (!(flags & (XL_RESOLVE_NO_AMBIENT | XL_RESOLVE_TARGET))) {
		rc = apply_ambient(p);
		if (rc)
			goto fail;
	}
	free(dir);
	*out = p;
	return 0;
fail:
	free(dir);
	xl_profile_free(p);
	return rc;
}

int xl_profile_resolve(const struct xl_ctx *ctx, const char *name, const char *cand,
		       unsigned flags, struct xl_profile **out)
{
	return xl_profile_resolve_set(ctx, name, cand, flags, NULL, out);
}

int xl_profile_resolve_set(const struct xl_ctx *ctx, const char *name, const char *cand,
			   unsigned flags, char *const *set, struct xl_profile **out)
{
	struct layer *top = NULL;
	char *dir = NULL;
	int rc;

	*out = NULL;
	if (flags & XL_RESOLVE_FILE) {
		const char *slash = strrchr(name, '/');

		rc = layer_load_file(name, &top);
		if (!rc && slash)
			dir = xl_strndup(name, (size_t)(slash - name));
	} else {
		rc = layer_load(ctx, name, NULL, &top);
	}
	if (rc)
		return rc;
	return resolve_top(ctx, top, dir, cand, flags, set, false, out);
}

int xl_profile_resolve_bytes(const char *name, const char *path, const char *data, size_t len,
			     const char *cand, unsigned flags, struct xl_profile **out)
{
	struct layer *top;
	int rc;

	*out = NULL;
	if ((rc = layer_from_bytes(name, path, data, len, &top)))
		return rc;
	return resolve_top(NULL, top, NULL, cand, flags, NULL, true, out);
}

void xl_profile_free(struct xl_profile *p)
{
	struct priv *pv;

	if (!p)
		return;
	pv = p->priv;
	for (size_t i = 0; pv && i < pv->n; i++)
		layer_free(pv->layers[i]);
	if (pv) {
		free(pv->layers);
		xl_strmap_release(&pv->index);
	}
	/* flags' provenance points into flagfiles: free it with the profile */
	if (pv) {
		xl_strv_release(&pv->flagfiles);
		xl_strv_release(&pv->keep);
	}
	free(pv);
	for (size_t i = 0; i < p->nvars; i++) {
		free(p->vars[i].name);
		free(p->vars[i].value);
		free(p->vars[i].experr);
		xl_flagmap_release(&p->vars[i].flags);
		xl_strv_release(&p->vars[i].chosen_by);
	}
	free(p->vars);
	xl_strv_release(&p->target_notes);
	xl_strv_release(&p->stripped);
	free_cands(p);
	xl_strv_release(&p->policy.bundle);
	free(p->compile.step_pattern);
	xl_strv_release(&p->chain);
	xl_strv_release(&p->chain_files);
	xl_strv_release(&p->notes);
	json_decref(p->signature);
	free(p->name);
	free(p->file);
	free(p->description);
	free(p);
}

/* ---- JSON view -------------------------------------------------------------------- */

json_t *xl_compile_cfg_json(const struct xl_compile_cfg *c)
{
	json_t *o = json_object();

	if (c->step_pattern)
		json_object_set_new(o, "step_pattern", json_string(c->step_pattern));
	if (c->warmup_steps >= 0)
		json_object_set_new(o, "warmup_steps", json_integer(c->warmup_steps));
	if (c->max_after_warmup >= 0)
		json_object_set_new(o, "max_after_warmup", json_integer(c->max_after_warmup));
	if (c->max_compile_share > 0)
		json_object_set_new(o, "max_compile_share", json_real(c->max_compile_share));
	if (c->on_storm != XL_ON_STORM_UNSET)
		json_object_set_new(o, "on_storm", json_string(c->on_storm == XL_ON_STORM_STOP ? "stop" : "warn"));
	if (c->early_oom != XL_EARLY_OOM_UNSET)
		json_object_set_new(o, "early_oom", json_boolean(c->early_oom == XL_EARLY_OOM_ON));
	return o;
}

json_t *xl_ranks_cfg_json(const struct xl_ranks_cfg *c)
{
	return json_pack("{s:b, s:f, s:f, s:f}", "watch", c->watch, "grace_s", c->grace_s,
			 "poll_s", c->poll_s, "lease_s", c->lease_s);
}

static json_t *prov_json(struct xl_prov s)
{
	if (s.file == AMBIENT_FILE)
		return json_string(AMBIENT_FILE);
	if (s.file && !s.line)          /* the command line (--set, --flag) */
		return json_string(s.file);
	return json_sprintf("%s:%u:%u", s.file, s.line, s.col);
}

json_t *xl_profile_to_json(const struct xl_profile *p)
{
	json_t *j = json_object(), *env = json_object(), *unset = json_array();
	json_t *src = json_object(), *flags = json_object(), *chain = json_array();
	json_t *pol = json_object(), *lim = json_object(), *cands = json_array();
	json_t *bundle = json_array(), *notes = json_array(), *chosen = json_object();

	json_object_set_new(j, "profile", json_string(p->name));
	json_object_set_new(j, "file", json_string(p->file));
	json_object_set_new(j, "description", p->description ? json_string(p->description) : json_null());
	for (size_t i = 0; i < p->chain.n; i++)
		json_array_append_new(chain, json_pack("{s:s,s:s}", "name", p->chain.v[i], "file",
						       p->chain_files.v[i]));
	json_object_set_new(j, "chain", chain);
	json_object_set_new(j, "candidate", p->cand >= 0 ? json_string(p->cands[p->cand].name) : json_null());
	if (xl_profile_args(p)) {
		const struct xl_strv *a = xl_profile_args(p);
		json_t *arr = json_array();

		for (size_t i = 0; i < a->n; i++)
			json_array_append_new(arr, json_string(a->v[i]));
		json_object_set_new(j, "args", arr);
		json_object_set_new(j, "args_source", prov_json(p->cands[p->cand].args_src));
	}
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		if (!v->value) {
			json_array_append_new(unset, json_string(v->name));
		} else if (!v->composite || v->flags.n) {
			json_object_set_new(env, v->name, json_string(v->value));
		}
		json_object_set_new(src, v->name, prov_json(v->src));
		if (v->chosen_by.n) {
			json_t *cb = json_array();

			for (size_t k = 0; k < v->chosen_by.n; k++)
				json_array_append_new(cb, json_string(v->chosen_by.v[k]));
			json_object_set_new(chosen, v->name, cb);
		}
		if (v->composite && v->value) {
			json_t *arr = json_array();

			for (size_t k = 0; k < v->flags.n; k++) {
				json_t *o = json_pack("{s:s,s:o,s:o}", "name", v->flags.v[k].name,
						      "value", v->flags.v[k].value ? json_string(v->flags.v[k].value) : json_true(),
						      "source", prov_json(v->flags.v[k].src));

				/* a list-valued flag that replaced an earlier layer's list */
				if (v->flags.v[k].prev.file)
					json_object_set_new(o, "replaces", prov_json(v->flags.v[k].prev));
				json_array_append_new(arr, o);
			}
			json_object_set_new(flags, v->name, arr);
		}
	}
	json_object_set_new(j, "env", env);
	json_object_set_new(j, "unset", unset);
	json_object_set_new(j, "sources", src);
	json_object_set_new(j, "chosen_by", chosen);
	json_object_set_new(j, "flags", flags);
	json_object_set_new(pol, "timing", json_boolean(p->policy.timing));
	json_object_set_new(pol, "strict", json_boolean(p->policy.strict));
	json_object_set_new(pol, "cache", json_string(p->policy.cache == XL_CACHE_LOCAL ? "local" : "any"));
	json_object_set_new(pol, "ambient", json_string(ambient_names[p->policy.ambient]));
	for (size_t i = 0; i < p->policy.bundle.n; i++)
		json_array_append_new(bundle, json_string(p->policy.bundle.v[i]));
	json_object_set_new(pol, "bundle", bundle);
	json_object_set_new(j, "policy", pol);
#define LIM(f) if (p->limits.f >= 0) json_object_set_new(lim, #f, p->limits.f == INT64_MAX ? json_string("unlimited") : json_integer(p->limits.f))
	LIM(address_space);
	LIM(open_files);
	LIM(core);
	LIM(cpu_time);
	LIM(memory);
#undef LIM
	json_object_set_new(j, "limits", lim);
	json_object_set_new(j, "compile", xl_compile_cfg_json(&p->compile));
	json_object_set_new(j, "ranks", xl_ranks_cfg_json(&p->ranks));
	json_object_set(j, "signature", p->signature);
	for (size_t i = 0; i < p->ncands; i++)
		json_array_append_new(cands, json_string(p->cands[i].name));
	json_object_set_new(j, "candidates", cands);
	for (size_t i = 0; i < p->notes.n; i++)
		json_array_append_new(notes, json_string(p->notes.v[i]));
	json_object_set_new(j, "notes", notes);
	return j;
}
