/* profile.c - finding, reading and validating profile files.
 *
 * A profile file is checked in full when it is loaded, so every later stage
 * can trust the shapes it reads.  Errors carry file:line:col from libyaml's
 * marks and a "did you mean" for misspelt keys.
 */
#include "launcher/profile/layer.h"

#include <dirent.h>
#include <regex.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const top_keys[] = {
	"description", "extends", "env", "unset", "flags", "policy", "limits",
	"compile", "ranks", "signature", "candidates", NULL,
};
static const char *const ranks_keys[] = { "watch", "grace", "poll", "lease", NULL };
static const char *const compile_keys[] = {
	"step_pattern", "warmup_steps", "max_after_warmup", "max_compile_share", "on_storm",
	"early_oom", NULL,
};

bool xl_on_storm_parse(const char *s, int *out)
{
	if (s && strcmp(s, "warn") == 0)
		*out = XL_ON_STORM_WARN;
	else if (s && strcmp(s, "stop") == 0)
		*out = XL_ON_STORM_STOP;
	else
		return false;
	return true;
}
bool xl_early_oom_parse(const char *s, int *out)
{
	if (s && (strcmp(s, "on") == 0 || strcmp(s, "true") == 0))
		*out = XL_EARLY_OOM_ON;
	else if (s && (strcmp(s, "off") == 0 || strcmp(s, "false") == 0))
		*out = XL_EARLY_OOM_OFF;
	else
		return false;
	return true;
}
static const char *const policy_keys[] = { "timing", "cache", "ambient", "bundle", "strict", NULL };
static const char *const limit_keys[] = {
	"address_space", "open_files", "core", "cpu_time", "memory", NULL,
};
static const char *const cand_keys[] = {
	"name", "description", "env", "unset", "flags", "signature", "limits", "args", NULL,
};
static const char *const sig_keys[] = {
	"model", "train", "parallel", "device", "features", "inert_args", NULL,
};
static const char *const sig_model_keys[] = {
	"params", "layers", "hidden", "heads", "kv_heads", "seq", "vocab", "ffn_hidden", NULL,
};
static const char *const sig_train_keys[] = {
	"micro_batch", "global_batch", "grad_accum", "optimizer", "precision", "remat",
	"flash_attention", NULL,
};
static const char *const sig_parallel_keys[] = { "dp", "fsdp", "tp", "pp", "sp", "ep", NULL };
static const char *const sig_device_keys[] = { "kind", "count", "memory", NULL };

bool xl_valid_profile_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 128 || strstr(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

void perr(const struct layer *l, const struct xl_ynode *n, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	xl_buf_addf(&b, "profile '%s': %s", l->name, l->path);
	if (n)
		xl_buf_addf(&b, ":%u:%u", n->line, n->col);
	xl_buf_adds(&b, ": ");
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	xl_error("%s", xl_buf_str(&b));
	xl_buf_release(&b);
}

static bool check_keys(const struct layer *l, const struct xl_ynode *map, const char *what,
		       const char *const *allowed)
{
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct xl_ynode *k = map->items[i];
		const char *hint;
		bool found = false;

		if (k->kind != XL_Y_SCALAR) {
			perr(l, k, "%s keys must be plain words, not %s", what, xl_ynode_kind_name(k));
			return false;
		}
		for (size_t j = 0; allowed[j]; j++)
			if (strcmp(k->str, allowed[j]) == 0)
				found = true;
		if (!found) {
			hint = xl_did_you_mean(k->str, allowed);
			if (hint)
				perr(l, k, "unknown key '%s' in %s; did you mean '%s'?", k->str, what, hint);
			else
				perr(l, k, "unknown key '%s' in %s", k->str, what);
			return false;
		}
		for (size_t j = 0; j < i; j += 2) {
			if (strcmp(map->items[j]->str, k->str) == 0) {
				perr(l, k, "key '%s' appears twice in %s (first at line %u)", k->str,
				     what, map->items[j]->line);
				return false;
			}
		}
	}
	return true;
}

static bool want_kind(const struct layer *l, const struct xl_ynode *n, enum xl_ynode_kind kind,
		      const char *what)
{
	static const char *const names[] = { "a scalar", "a list", "a mapping" };

	if (n->kind != kind || (kind == XL_Y_SCALAR && xl_ynode_is_null(n))) {
		perr(l, n, "%s must be %s, not %s", what, names[kind], xl_ynode_kind_name(n));
		return false;
	}
	return true;
}

static bool check_env(const struct layer *l, const struct xl_ynode *env, const char *what)
{
	struct xl_strmap seen = XL_STRMAP_INIT;

	if (!want_kind(l, env, XL_Y_MAP, what))
		return false;
	for (size_t i = 0; i + 1 < env->n; i += 2) {
		const struct xl_ynode *k = env->items[i], *v = env->items[i + 1];
		size_t first;

		if (k->kind != XL_Y_SCALAR || !xl_valid_env_name(k->str)) {
			perr(l, k, "'%s' is not a valid environment variable name",
			     k->kind == XL_Y_SCALAR ? k->str : "?");
			xl_strmap_release(&seen);
			return false;
		}
		if (xl_strmap_get(&seen, k->str, &first)) {
			perr(l, k, "variable '%s' is set twice in %s (first at line %u)", k->str,
			     what, env->items[first]->line);
			xl_strmap_release(&seen);
			return false;
		}
		xl_strmap_put(&seen, k->str, i);
		if (v->kind != XL_Y_SCALAR) {
			perr(l, v, "value of '%s' must be a scalar, not %s", k->str,
			     xl_ynode_kind_name(v));
			xl_strmap_release(&seen);
			return false;
		}
		if (strlen(v->str) != v->len) {
			perr(l, v, "value of '%s' contains a NUL byte", k->str);
			xl_strmap_release(&seen);
			return false;
		}
	}
	xl_strmap_release(&seen);
	return true;
}

static bool check_unset(const struct layer *l, const struct xl_ynode *u)
{
	if (u->kind == XL_Y_SCALAR && !xl_ynode_is_null(u)) {
		if (!xl_valid_env_name(u->str)) {
			perr(l, u, "'%s' is not a valid environment variable name", u->str);
			return false;
		}
		return true;
	}
	if (!want_kind(l, u, XL_Y_SEQ, "unset"))
		return false;
	for (size_t i = 0; i < u->n; i++) {
		const struct xl_ynode *v = u->items[i];

		if (v->kind != XL_Y_SCALAR || !xl_valid_env_name(v->str)) {
			perr(l, v, "'%s' is not a valid environment variable name",
			     v->kind == XL_Y_SCALAR ? v->str : xl_ynode_kind_name(v));
			return false;
		}
	}
	return true;
}

static bool valid_flag_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

static bool check_flags(const struct layer *l, const struct xl_ynode *f)
{
	static const char *const vars[] = { "XLA_FLAGS", "LIBTPU_INIT_ARGS", "TF_XLA_FLAGS", NULL };

	if (!want_kind(l, f, XL_Y_MAP, "flags"))
		return false;
	for (size_t i = 0; i + 1 < f->n; i += 2) {
		const struct xl_ynode *k = f->items[i], *m = f->items[i + 1];

		if (k->kind != XL_Y_SCALAR || !xl_is_composite_var(k->str)) {
			const char *hint = k->kind == XL_Y_SCALAR ? xl_did_you_mean(k->str, vars) : NULL;

			if (hint)
				perr(l, k, "'%s' is not a composite flag variable; did you mean '%s'?",
				     k->str, hint);
			else
				perr(l, k, "'%s' is not a composite flag variable (XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS)",
				     k->kind == XL_Y_SCALAR ? k->str : "?");
			return false;
		}
		if (!want_kind(l, m, XL_Y_MAP, k->str))
			return false;
		for (size_t j = 0; j + 1 < m->n; j += 2) {
			const struct xl_ynode *fk = m->items[j], *fv = m->items[j + 1];

			if (fk->kind != XL_Y_SCALAR || xl_startswith(fk->str, "-")) {
				perr(l, fk, "flag names are written without dashes ('%s')",
				     fk->kind == XL_Y_SCALAR ? fk->str : "?");
				return false;
			}
			if (!valid_flag_name(fk->str)) {
				perr(l, fk, "'%s' is not a valid flag name", fk->str);
				return false;
			}
			for (size_t q = 0; q < j; q += 2) {
				if (strcmp(m->items[q]->str, fk->str) == 0) {
					perr(l, fk, "flag '%s' is set twice in %s (first at line %u)",
					     fk->str, k->str, m->items[q]->line);
					return false;
				}
			}
			if (fv->kind != XL_Y_SCALAR) {
				perr(l, fv, "value of flag '%s' must be a scalar, not %s", fk->str,
				     xl_ynode_kind_name(fv));
				return false;
			}
			if (strlen(fv->str) != fv->len) {
				perr(l, fv, "value of flag '%s' contains a NUL byte", fk->str);
				return false;
			}
		}
	}
	return true;
}

static bool check_enum(const struct layer *l, const struct xl_ynode *v, const char *what,
		       const char *const *allowed)
{
	if (!want_kind(l, v, XL_Y_SCALAR, what))
		return false;
	for (size_t i = 0; allowed[i]; i++)
		if (strcmp(v->str, allowed[i]) == 0)
			return true;
	const char *hint = xl_did_you_mean(v->str, allowed);
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; allowed[i]; i++)
		xl_buf_addf(&b, "%s%s", i ? "|" : "", allowed[i]);
	if (hint)
		perr(l, v, "%s must be %s, not '%s'; did you mean '%s'?", what, xl_buf_str(&b), v->str, hint);
	else
		perr(l, v, "%s must be %s, not '%s'", what, xl_buf_str(&b), v->str);
	xl_buf_release(&b);
	return false;
}

static bool check_policy(const struct layer *l, const struct xl_ynode *p)
{
	static const char *const cache_vals[] = { "local", "any", NULL };
	static const char *const ambient_vals[] = { "strip", "keep", "warn", "error", NULL };
	const struct xl_ynode *v;
	bool b;

	if (!want_kind(l, p, XL_Y_MAP, "policy") || !check_keys(l, p, "policy", policy_keys))
		return false;
	if ((v = xl_ymap_get(p, "timing")) && !xl_yscalar_bool(v, &b)) {
		perr(l, v, "policy.timing must be true or false, not %s",
		     v->kind == XL_Y_SCALAR ? v->str : xl_ynode_kind_name(v));
		return false;
	}
	if ((v = xl_ymap_get(p, "strict")) && !xl_yscalar_bool(v, &b)) {
		perr(l, v, "policy.strict must be true or false, not %s",
		     v->kind == XL_Y_SCALAR ? v->str : xl_ynode_kind_name(v));
		return false;
	}
	if ((v = xl_ymap_get(p, "cache")) && !check_enum(l, v, "policy.cache", cache_vals))
		return false;
	if ((v = xl_ymap_get(p, "ambient")) && !check_enum(l, v, "policy.ambient", ambient_vals))
		return false;
	if ((v = xl_ymap_get(p, "bundle"))) {
		if (v->kind == XL_Y_SCALAR && !xl_ynode_is_null(v))
			return true;
		if (!want_kind(l, v, XL_Y_SEQ, "policy.bundle"))
			return false;
		for (size_t i = 0; i < v->n; i++)
			if (!want_kind(l, v->items[i], XL_Y_SCALAR, "a bundle name"))
				return false;
	}
	return true;
}

static bool check_limits(const struct layer *l, const struct xl_ynode *m)
{
	if (!want_kind(l, m, XL_Y_MAP, "limits") || !check_keys(l, m, "limits", limit_keys))
		return false;
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const char *k = m->items[i]->str;
		const struct xl_ynode *v = m->items[i + 1];
		uint64_t u;
		double d;

		if (!want_kind(l, v, XL_Y_SCALAR, k))
			return false;
		if (strcmp(v->str, "unlimited") == 0)
			continue;
		if (strcmp(k, "cpu_time") == 0 ? !xl_parse_duration(v->str, &d)
					       : !xl_parse_bytes(v->str, &u)) {
			perr(l, v, "limits.%s: '%s' is not a %s (or 'unlimited')", k, v->str,
			     strcmp(k, "cpu_time") == 0 ? "duration such as 3600s or 2h"
			     : strcmp(k, "open_files") == 0 ? "count" : "size such as 8GiB");
			return false;
		}
	}
	return true;
}

static bool check_compile(const struct layer *l, const struct xl_ynode *m)
{
	const struct xl_ynode *old;

	if (!want_kind(l, m, XL_Y_MAP, "compile"))
		return false;
	/* the rule it served judged by the quiet time before the exit */
	if ((old = xl_ymap_get(m, "quiet_gaps"))) {
		perr(l, old, "compile.quiet_gaps is no longer read: a storm is judged by recompilations"
		     " still arriving past the middle of the run and by their share of its time"
		     " (compile.max_compile_share)");
		return false;
	}
	if (!check_keys(l, m, "compile", compile_keys))
		return false;
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const char *k = m->items[i]->str;
		const struct xl_ynode *v = m->items[i + 1];
		double d;

		if (!want_kind(l, v, XL_Y_SCALAR, k))
			return false;
		if (strcmp(k, "step_pattern") == 0) {
			regex_t re;
			int e = regcomp(&re, v->str, REG_EXTENDED);

			if (e) {
				char msg[200];

				regerror(e, &re, msg, sizeof(msg));
				perr(l, v, "compile.step_pattern: '%s' is not a POSIX extended regex: %s",
				     v->str, msg);
				return false;
			}
			regfree(&re);
			if (!*v->str) {
				perr(l, v, "compile.step_pattern must not be empty");
				return false;
			}
		} else if (strcmp(k, "on_storm") == 0) {
			int how;

			if (!xl_on_storm_parse(v->str, &how)) {
				perr(l, v, "compile.on_storm: '%s' is not warn or stop", v->str);
				return false;
			}
		} else if (strcmp(k, "early_oom") == 0) {
			bool b;

			if (!xl_yscalar_bool(v, &b)) {
				perr(l, v, "compile.early_oom: '%s' is not true or false",
				     v->str ? v->str : "(not a scalar)");
				return false;
			}
		} else if (strcmp(k, "max_compile_share") == 0) {
			if (!xl_yscalar_double(v, &d) || !(d > 0) || d > 1) {
				perr(l, v, "compile.max_compile_share: '%s' is not a share above 0 and at most 1",
				     v->str);
				return false;
			}
		} else if (!xl_yscalar_double(v, &d) || d < 0 || d > 1e9 || d != (double)(long)d) {
			perr(l, v, "compile.%s: '%s' is not a count (0 or more)", k, v->str);
			return false;
		}
	}
	return true;
}

/* ranks: {watch: bool, grace: DUR, poll: DUR, lease: DUR}; a lease shorter
 * than two polls would lapse between renewals. */
static bool check_ranks(const struct layer *l, const struct xl_ynode *m)
{
	const struct xl_ynode *poll, *lease;
	double p, ls;

	if (!want_kind(l, m, XL_Y_MAP, "ranks") || !check_keys(l, m, "ranks", ranks_keys))
		return false;
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const char *k = m->items[i]->str;
		const struct xl_ynode *v = m->items[i + 1];
		double d;
		bool b;

		if (!want_kind(l, v, XL_Y_SCALAR, k))
			return false;
		if (strcmp(k, "watch") == 0) {
			if (!xl_yscalar_bool(v, &b)) {
				perr(l, v, "ranks.watch: '%s' is not true or false", v->str);
				return false;
			}
		} else if (!xl_parse_duration(v->str, &d) || d > 86400 ||
			   (strcmp(k, "grace") == 0 ? d < 0 : d < 0.1)) {
			perr(l, v, "ranks.%s: '%s' is not a duration such as %s (at most 1d)", k, v->str,
			     strcmp(k, "grace") == 0 ? "5s" : "2s, 0.1s or more");
			return false;
		}
	}
	poll = xl_ymap_get(m, "poll");
	lease = xl_ymap_get(m, "lease");
	if (poll && lease && xl_parse_duration(poll->str, &p) && xl_parse_duration(lease->str, &ls) &&
	    ls < 2 * p) {
		perr(l, lease, "ranks.lease (%s) must be at least twice ranks.poll (%s): a lease"
		     " renewed every poll would lapse between renewals", lease->str, poll->str);
		return false;
	}
	return true;
}

static bool check_signature(const struct layer *l, const struct xl_ynode *s)
{
	static const struct { const char *name; const char *const *keys; } secs[] = {
		{ "model", sig_model_keys }, { "train", sig_train_keys },
		{ "parallel", sig_parallel_keys }, { "device", sig_device_keys },
		{ "features", NULL },
	};

	if (!want_kind(l, s, XL_Y_MAP, "signature") || !check_keys(l, s, "signature", sig_keys))
		return false;
	for (size_t i = 0; i + 1 < s->n; i += 2) {
		const char *name = s->items[i]->str;
		const struct xl_ynode *v = s->items[i + 1];
		char what[64];

		snprintf(what, sizeof(what), "signature.%s", name);
		/* the options of the command that shape nothing: "--steps --log-every" */
		if (strcmp(name, "inert_args") == 0) {
			if (!want_kind(l, v, XL_Y_SCALAR, what))
				return false;
			continue;
		}
		if (!want_kind(l, v, XL_Y_MAP, what))
			return false;
		for (size_t k = 0; k < sizeof(secs) / sizeof(secs[0]); k++) {
			if (strcmp(secs[k].name, name) != 0)
				continue;
			if (secs[k].keys && !check_keys(l, v, what, secs[k].keys))
				return false;
		}
		for (size_t j = 1; j < v->n; j += 2) {
			if (v->items[j]->kind != XL_Y_SCALAR) {
				perr(l, v->items[j], "%s.%s must be a scalar, not %s", what,
				     v->items[j - 1]->str, xl_ynode_kind_name(v->items[j]));
				return false;
			}
		}
	}
	return true;
}

/* A candidate's args: a list of strings (scalars, taken as written),
 * appended to the command. */
static bool check_args(const struct layer *l, const struct xl_ynode *a)
{
	if (a->kind != XL_Y_SEQ) {
		perr(l, a, "candidate args must be a list of strings (args: [--batch-size, \"8\"]), not %s",
		     xl_ynode_kind_name(a));
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct xl_ynode *x = a->items[i];

		if (x->kind != XL_Y_SCALAR || xl_ynode_is_null(x)) {
			perr(l, x, "candidate args: item %zu must be a string, not %s", i + 1,
			     xl_ynode_kind_name(x));
			return false;
		}
	}
	return true;
}

static bool check_candidates(const struct layer *l, const struct xl_ynode *c)
{
	if (!want_kind(l, c, XL_Y_SEQ, "candidates"))
		return false;
	for (size_t i = 0; i < c->n; i++) {
		const struct xl_ynode *m = c->items[i], *v;

		if (!want_kind(l, m, XL_Y_MAP, "a candidate") ||
		    !check_keys(l, m, "a candidate", cand_keys))
			return false;
		v = xl_ymap_get(m, "name");
		if (!v) {
			perr(l, m, "candidate %zu has no name", i + 1);
			return false;
		}
		if (!want_kind(l, v, XL_Y_SCALAR, "candidate name"))
			return false;
		if (!xl_valid_profile_name(v->str)) {
			perr(l, v, "'%s' is not a valid candidate name ([A-Za-z0-9][A-Za-z0-9._-]*)", v->str);
			return false;
		}
		for (size_t j = 0; j < i; j++) {
			const struct xl_ynode *o = xl_ymap_get(c->items[j], "name");

			if (strcmp(o->str, v->str) == 0) {
				perr(l, v, "candidate '%s' is listed twice (first at line %u)", v->str, o->line);
				return false;
			}
		}
		if ((v = xl_ymap_get(m, "description")) && !want_kind(l, v, XL_Y_SCALAR, "description"))
			return false;
		if ((v = xl_ymap_get(m, "env")) && !check_env(l, v, "candidate env"))
			return false;
		if ((v = xl_ymap_get(m, "unset")) && !check_unset(l, v))
			return false;
		if ((v = xl_ymap_get(m, "flags")) && !check_flags(l, v))
			return false;
		if ((v = xl_ymap_get(m, "signature")) && !check_signature(l, v))
			return false;
		if ((v = xl_ymap_get(m, "limits")) && !check_limits(l, v))
			return false;
		if ((v = xl_ymap_get(m, "args")) && !check_args(l, v))
			return false;
	}
	return true;
}

static bool check_extends(const struct layer *l, const struct xl_ynode *e)
{
	const struct xl_ynode *one[1];
	const struct xl_ynode *const *items = (const struct xl_ynode *const *)e->items;
	size_t n = e->n;

	if (e->kind == XL_Y_SCALAR && !xl_ynode_is_null(e)) {
		one[0] = e;
		items = one;
		n = 1;
	} else if (!want_kind(l, e, XL_Y_SEQ, "extends")) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!want_kind(l, items[i], XL_Y_SCALAR, "a profile name"))
			return false;
		if (!xl_valid_profile_name(items[i]->str)) {
			perr(l, items[i], "'%s' is not a valid profile name", items[i]->str);
			return false;
		}
	}
	return true;
}

/* Validates a parsed file and fills the layer's section pointers. */
static bool validate(struct layer *l)
{
	struct xl_ynode *r = l->root, *v;

	if (r->kind != XL_Y_MAP) {
		perr(l, r, "a profile must be a mapping of keys (description, env, flags, ...), not %s",
		     xl_ynode_kind_name(r));
		return false;
	}
	if (!check_keys(l, r, "the profile", top_keys))
		return false;
	if ((v = xl_ymap_get(r, "description"))) {
		if (!xl_ynode_is_null(v) && !want_kind(l, v, XL_Y_SCALAR, "description"))
			return false;
		l->description = xl_ynode_is_null(v) ? NULL : v->str;
	}
	if ((v = xl_ymap_get(r, "extends")) && !xl_ynode_is_null(v)) {
		if (!check_extends(l, v))
			return false;
		l->extends = v;
	}
#define SECTION(key, field, check)                                \
	if ((v = xl_ymap_get(r, key)) && !xl_ynode_is_null(v)) { \
		if (!(check))                                     \
			return false;                             \
		l->field = v;                                     \
	}
	SECTION("env", env, check_env(l, v, "env"));
	SECTION("unset", unset, check_unset(l, v));
	SECTION("flags", flags, check_flags(l, v));
	SECTION("policy", policy, check_policy(l, v));
	SECTION("limits", limits, check_limits(l, v));
	SECTION("compile", compile, check_compile(l, v));
	SECTION("ranks", ranks, check_ranks(l, v));
	SECTION("signature", signature, check_signature(l, v));
	SECTION("candidates", candidates, check_candidates(l, v));
#undef SECTION
	return true;
}

void layer_free(struct layer *l)
{
	if (!l || --l->refs > 0)
		return;
	free(l->open_to_all);
	xl_ynode_free(l->root);
	free(l->name);
	free(l->path);
	free(l);
}

/* The path is computed once per process and configuration: a launch reads
 * a profile and its bases from the same directories. */
static struct {
	char *key;
	struct xl_strv dirs;
} path_cache;

void xl_profile_search_path(const struct xl_ctx *ctx, struct xl_strv *dirs)
{
	struct xl_strv raw = XL_STRV_INIT;
	const char *env = getenv("XLAUNCH_PROFILE_PATH");
	const char *cli = ctx && ctx->profile_path ? ctx->profile_path : "";
	char *key = xl_asprintf("%s\n%s\n%s", cli, env ? env : "", xl_data_dir());
	char *cfg;

	if (!path_cache.key || strcmp(path_cache.key, key) != 0) {
		struct xl_strv seen = XL_STRV_INIT;

		free(path_cache.key);
		xl_strv_release(&path_cache.dirs);
		if (*cli)
			xl_strv_split(&raw, cli, ":");
		if (env)
			xl_strv_split(&raw, env, ":");
		xl_strv_push(&raw, "./profiles");
		cfg = xl_config_dir();
		xl_strv_push_owned(&raw, xl_asprintf("%s/profiles", cfg));
		free(cfg);
		xl_strv_push_owned(&raw, xl_data_path("profiles"));
		/* the same directory reached twice is searched once */
		for (size_t i = 0; i < raw.n; i++) {
			struct stat st;
			char *id = stat(raw.v[i], &st) == 0
				   ? xl_asprintf("%llu:%llu", (unsigned long long)st.st_dev,
						 (unsigned long long)st.st_ino)
				   : xl_strdup(raw.v[i]);

			if (!xl_strv_contains(&seen, id))
				xl_strv_push(&path_cache.dirs, raw.v[i]);
			xl_strv_push_owned(&seen, id);
		}
		xl_strv_release(&seen);
		xl_strv_release(&raw);
		path_cache.key = key;
	} else {
		free(key);
	}
	for (size_t i = 0; i < path_cache.dirs.n; i++)
		xl_strv_push(dirs, path_cache.dirs.v[i]);
}

/* Parses and validates one profile's bytes; path is for messages. */
int layer_from_bytes(const char *name, const char *path, const char *data, size_t len,
		     struct layer **out)
{
	struct layer *l = xl_calloc(1, sizeof(*l));
	char *err = NULL;

	l->refs = 1;
	l->name = xl_strdup(name);
	l->path = xl_strdup(path);
	l->root = xl_yaml_parse(data, len, &err);
	if (!l->root) {
		xl_error("profile '%s': %s:%s", name, path, err);
		free(err);
		layer_free(l);
		return XL_EX_DATAERR;
	}
	if (!validate(l)) {
		layer_free(l);
		return XL_EX_DATAERR;
	}
	*out = l;
	return 0;
}

/* The layers a process has read, by path and the file's identity: a
 * launch resolves its profile and each candidate, each extending the same
 * bases, and a file is read and parsed once unless it changed. */
#define LAYER_CACHE 16
static struct {
	struct layer *l;
	struct stat st;
} layer_cache[LAYER_CACHE];

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static struct layer *cached_layer(const char *name, const char *path, const struct stat *st)
{
	for (size_t i = 0; i < LAYER_CACHE && layer_cache[i].l; i++) {
		struct layer *l = layer_cache[i].l;

		if (strcmp(l->path, path) == 0 && strcmp(l->name, name) == 0 &&
		    same_file(&layer_cache[i].st, st)) {
			l->refs++;
			return l;
		}
	}
	return NULL;
}

static void cache_layer(struct layer *l, const struct stat *st)
{
	size_t i = 0;

	while (i < LAYER_CACHE - 1 && layer_cache[i].l && strcmp(layer_cache[i].l->path, l->path))
		i++;
	layer_free(layer_cache[i].l);
	layer_cache[i].l = l;
	layer_cache[i].st = *st;
	l->refs++;
}

static int read_layer(const char *name, const char *path, struct layer **out)
{
	struct stat st;
	bool known = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	size_t len;
	char *data;
	int rc;

	if (known && (*out = cached_layer(name, path, &st)))
		return 0;
	data = xl_read_file(path, &len, XL_PROFILE_MAX_BYTES);
	if (!data) {
		int e = errno;

		if (e == EFBIG)
			xl_error("profile '%s': %s: file is larger than %d MiB", name, path,
				 XL_PROFILE_MAX_BYTES >> 20);
		else
			xl_error("profile '%s': %s: cannot read: %s", name, path, strerror(e));
		return e == EFBIG ? XL_EX_DATAERR : XL_EX_NOINPUT;
	}
	rc = layer_from_bytes(name, path, data, len, out);
	free(data);
	if (rc == 0 && known)
		cache_layer(*out, &st);
	return rc;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 || errno == ELOOP;
}

/* A profile anyone can change is a launch anyone can change: a directory
 * writable by every user (without the sticky bit), or such a file.  A
 * launch reads a profile and its bases from one directory, which is looked
 * at once. */
static char *writable_by_all(const char *dir, const char *path)
{
	static char *seen_dir;
	static bool seen_open;
	struct stat st;

	if (!seen_dir || strcmp(seen_dir, dir) != 0) {
		free(seen_dir);
		seen_dir = xl_strdup(dir);
		seen_open = stat(dir, &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX);
	}
	if (seen_open)
		return xl_asprintf("directory '%s' is writable by every user", dir);
	if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH))
		return xl_asprintf("file '%s' is writable by every user", path);
	return NULL;
}

char *xl_profile_search_path_str(const struct xl_ctx *ctx)
{
	struct xl_strv dirs = XL_STRV_INIT;
	struct xl_buf b = XL_BUF_INIT;

	xl_profile_search_path(ctx, &dirs);
	for (size_t i = 0; i < dirs.n; i++)
		xl_buf_addf(&b, "%s%s", i ? ":" : "", dirs.v[i]);
	xl_strv_release(&dirs);
	return xl_buf_detach(&b);
}

int layer_load(const struct xl_ctx *ctx, const char *name, const char *extra_dir,
	       struct layer **out)
{
	struct xl_strv dirs = XL_STRV_INIT;
	int rc = XL_EX_NOINPUT;

	if (!xl_valid_profile_name(name)) {
		xl_error("profile '%s': invalid name (use [A-Za-z0-9][A-Za-z0-9._-]*, no '/' or '..')",
			 name);
		return XL_EX_USAGE;
	}
	if (extra_dir)
		xl_strv_push(&dirs, extra_dir);
	xl_profile_search_path(ctx, &dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		char *path = xl_asprintf("%s/%s.yaml", dirs.v[i], name);

		if (file_exists(path)) {
			char *open_to_all = writable_by_all(dirs.v[i], path);

			rc = read_layer(name, path, out);
			if (open_to_all) {
				xl_warn("profile '%s': %s; anyone can change what it launches", name,
					open_to_all);
				if (rc == 0 && !(*out)->open_to_all)
					(*out)->open_to_all = open_to_all;
				else
					free(open_to_all);
			}
			free(path);
			xl_strv_release(&dirs);
			return rc;
		}
		free(path);
	}
	{
		char *path = xl_profile_search_path_str(ctx);
		struct xl_strv names = XL_STRV_INIT;
		const char *hint;

		if (extra_dir) {
			char *both = xl_asprintf("%s:%s", extra_dir, path);

			free(path);
			path = both;
		}

		xl_profile_names(ctx, &names, NULL);
		hint = xl_did_you_mean(name, (const char *const *)names.v);
		if (!names.n)
			xl_error("profile '%s': not found: the profile path holds no profile at all (%s; "
				 "the data directory %s (%s) has none in profiles/)",
				 name, path, xl_data_dir(), xl_data_dir_how());
		else if (hint)
			xl_error("profile '%s': not found on the profile path (%s); did you mean '%s'?",
				 name, path, hint);
		else
			xl_error("profile '%s': not found on the profile path (%s)", name, path);
		xl_strv_release(&names);
		free(path);
	}
	xl_strv_release(&dirs);
	return rc;
}

int layer_load_file(const char *path, struct layer **out)
{
	const char *base = strrchr(path, '/');
	char *name;
	int rc;

	base = base ? base + 1 : path;
	name = xl_strdup(base);
	if (xl_endswith(name, ".yaml"))
		name[strlen(name) - 5] = '\0';
	else if (xl_endswith(name, ".yml"))
		name[strlen(name) - 4] = '\0';
	if (!file_exists(path)) {
		xl_error("profile '%s': %s: no such file", name, path);
		free(name);
		return XL_EX_NOINPUT;
	}
	rc = read_layer(name, path, out);
	free(name);
	return rc;
}

int xl_profile_describe(const char *path, char **description)
{
	struct layer *l = NULL;
	int rc = layer_load_file(path, &l);

	*description = rc == 0 && l->description ? xl_strdup(l->description) : NULL;
	layer_free(l);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void xl_profile_names(const struct xl_ctx *ctx, struct xl_strv *names, struct xl_strv *files)
{
	struct xl_strv dirs = XL_STRV_INIT;
	struct xl_strv found = XL_STRV_INIT;

	xl_profile_search_path(ctx, &dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		DIR *d = opendir(dirs.v[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			char *nm;

			if (n <= 5 || !xl_endswith(e->d_name, ".yaml"))
				continue;
			nm = xl_strndup(e->d_name, n - 5);
			if (!xl_valid_profile_name(nm) || xl_strv_contains(&found, nm)) {
				free(nm);
				continue;
			}
			xl_strv_push(&found, nm);
			/* "name\tpath", sorted below by name */
			xl_strv_push_owned(names, xl_asprintf("%s\t%s/%s", nm, dirs.v[i], e->d_name));
			free(nm);
		}
		closedir(d);
	}
	if (names->n)
		qsort(names->v, names->n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < names->n; i++) {
		char *tab = strchr(names->v[i], '\t');

		if (files)
			xl_strv_push(files, tab + 1);
		*tab = '\0';
	}
	xl_strv_release(&found);
	xl_strv_release(&dirs);
}
