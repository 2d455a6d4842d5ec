/* cachekey.c - the compile caches' key rules at work (see cachekey.h).
 *
 * Each runtime hashes some settings of a launch into the key of every
 * program it writes to its persistent cache: flag tokens as it splits them
 * (less an exclusion list), some variables, sometimes the cache directory's
 * own spelling.  The same settings, computed the same way, are kept in a
 * small file in the cache directory by every `run` and `exec`; the next
 * launch that uses the directory compares, and says before its child starts
 * when the cache will be cold and which setting did it.
 */
#include "launcher/flags/flags.h"
#include "bundle/bundle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define STAMP_MAX (1u << 20)

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* The name of a token: up to its first '='. Caller frees. */
static char *tok_name(const char *tok)
{
	const char *eq = strchr(tok, '=');

	return eq ? xl_strndup(tok, (size_t)(eq - tok)) : xl_strdup(tok);
}

static const struct xl_ck_exception *exception_of(const struct xl_ck_runtime *r, const char *name)
{
	for (size_t i = 0; i < r->nexceptions; i++)
		if (strcmp(r->exceptions[i].flag, name) == 0)
			return &r->exceptions[i];
	return NULL;
}

/* A token's value as XLA reads it ("true" for a bare boolean flag), with
 * booleans in one spelling. */
static const char *value_norm(const char *tok, const char *name_nodash)
{
	const char *eq = tok ? strchr(tok, '=') : NULL;
	const char *v = eq ? eq + 1 : "true";
	const struct xl_flagdef *d = xl_catalog_flag("XLA_FLAGS", name_nodash);
	bool misread;

	if (d && d->type == XL_FT_BOOL) {
		const char *n = xl_bool_normalize(XL_BP_TSL, v, &misread);

		return n ? n : v;
	}
	return v;
}

static const char *default_norm(const char *name_nodash)
{
	const struct xl_flagdef *d = xl_catalog_flag("XLA_FLAGS", name_nodash);
	bool misread;

	if (!d || !d->def)
		return NULL;
	if (d->type == XL_FT_BOOL) {
		const char *n = xl_bool_normalize(XL_BP_TSL, d->def, &misread);

		return n ? n : d->def;
	}
	return d->def;
}

/* Whether a token (of a variable the runtime hashes) enters its key. */
static bool token_counts(const struct xl_ck_runtime *r, const char *tok)
{
	char *name;
	const struct xl_ck_exception *e;
	bool in;

	if (r->token_prefix && !xl_startswith(tok, r->token_prefix))
		return false;
	name = tok_name(tok);
	if (!in_list(r->exclude, name)) {
		free(name);
		return true;
	}
	e = exception_of(r, name);
	in = false;
	if (e && e->when == XL_CK_ALWAYS) {
		in = true;
	} else if (e) {
		const char *nd = name + strspn(name, "-");
		const char *def = default_norm(nd);

		in = !def || strcmp(value_norm(tok, nd), def) != 0;
	}
	free(name);
	return in;
}

static void add_item(json_t *arr, const char *what, const char *name, const char *value)
{
	json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "what", what, "name", name, "value",
					     value ? value : ""));
}

/* Splits value as the runtime does; calls back for every token. */
static void split_tokens(const struct xl_ck_runtime *r, const char *value, struct xl_strv *out)
{
	const char *seps = r->split == XL_CK_SPLIT_SPACE ? " " : " \t\n\r\v\f";
	const char *p = value;

	while (*p) {
		size_t n;

		p += strspn(p, seps);
		n = strcspn(p, seps);
		if (n)
			xl_strv_push_owned(out, xl_strndup(p, n));
		p += n;
	}
}

static int cmp_item(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	static const char *const k[] = { "what", "name", "value" };

	for (int i = 0; i < 3; i++) {
		int c = strcmp(json_string_value(json_object_get(x, k[i])),
			       json_string_value(json_object_get(y, k[i])));

		if (c)
			return c;
	}
	return 0;
}

static json_t *sorted(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = xl_calloc(n ? n : 1, sizeof(*v)), *out = json_array();

	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, n, sizeof(*v), cmp_item);
	for (size_t i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(arr);
	return out;
}

/* Whether the cache directory's spelling is in the key for this launch. */
static bool path_in_key(const struct xl_ck_runtime *r, xl_ck_get_fn *get, const void *ctx)
{
	const char *v;

	if (!r->path_in_key)
		return false;
	if (!r->path_unless_env || !(v = get(ctx, r->path_unless_env)))
		return true;
	for (size_t i = 0; r->path_unless_not_containing && r->path_unless_not_containing[i]; i++)
		if (strstr(v, r->path_unless_not_containing[i]))
			return true;
	return false;
}

json_t *xl_ck_settings(const struct xl_ck_runtime *r, xl_ck_get_fn *get, const void *ctx,
		       char *const *argv)
{
	json_t *items = json_array();
	const char *dir = get(ctx, r->cache_env);

	if (dir && path_in_key(r, get, ctx)) {
		char *d = xl_strdup(dir);
		size_t n = strlen(d);

		while (n > 1 && d[n - 1] == '/')
			d[--n] = '\0';   /* a trailing '/' does not matter */
		add_item(items, "cache_dir", r->cache_env, d);
		free(d);
	}
	for (size_t v = 0; r->flag_vars && r->flag_vars[v]; v++) {
		const char *var = r->flag_vars[v], *value = get(ctx, var);
		struct xl_strv toks = XL_STRV_INIT;

		if (value)
			split_tokens(r, value, &toks);
		for (size_t i = 0; i < toks.n; i++) {
			char *name;

			if (!token_counts(r, toks.v[i]))
				continue;
			name = tok_name(toks.v[i]);
			add_item(items, var, name, toks.v[i]);
			free(name);
		}
		/* what the runtime adds on its own when no token names the flag */
		for (size_t a = 0; a < r->nadded; a++) {
			char *aname = tok_name(r->added[a].token);
			bool named = false;

			if (strcmp(r->added[a].var, var) != 0) {
				free(aname);
				continue;
			}
			for (size_t i = 0; i < toks.n && !named; i++) {
				char *n = tok_name(toks.v[i]);

				named = strcmp(n, aname) == 0;
				free(n);
			}
			if (!named)
				add_item(items, var, aname, r->added[a].token);
			free(aname);
		}
		xl_strv_release(&toks);
	}
	for (size_t i = 0; r->argv_prefix && argv && argv[i]; i++) {
		if (xl_startswith(argv[i], r->argv_prefix) && token_counts(r, argv[i])) {
			char *name = tok_name(argv[i]);

			add_item(items, "argv", name, argv[i]);
			free(name);
		}
	}
	for (size_t i = 0; i < r->nsettings; i++) {
		const char *v = get(ctx, r->settings[i].env);

		/* raw variables are hashed set or not, below */
		if (r->settings[i].in_key != XL_CK_OUT && v && !in_list(r->raw_vars, r->settings[i].env))
			add_item(items, "env", r->settings[i].env, v);
	}
	for (size_t i = 0; r->raw_vars && r->raw_vars[i]; i++)
		add_item(items, "env", r->raw_vars[i], get(ctx, r->raw_vars[i]));
	return sorted(items);
}

/* ---- what a profile difference invalidates ---------------------------------------- */

bool xl_ck_flag_invalidates(const struct xl_ck_runtime *r, const char *var, const char *name,
			    const char *a, const char *b)
{
	char *ta, *tb, *flag;
	bool ca, cb, out;

	if (!in_list(r->flag_vars, var))
		return false;
	flag = xl_asprintf("--%s", name);
	ta = a ? (*a ? xl_asprintf("%s=%s", flag, a) : xl_strdup(flag)) : NULL;
	tb = b ? (*b ? xl_asprintf("%s=%s", flag, b) : xl_strdup(flag)) : NULL;
	/* a flag the runtime adds when missing is as good as absent */
	for (size_t i = 0; i < r->nadded; i++) {
		char *an = tok_name(r->added[i].token);

		if (strcmp(r->added[i].var, var) == 0 && strcmp(an, flag) == 0) {
			if (!ta)
				ta = xl_strdup(r->added[i].token);
			if (!tb)
				tb = xl_strdup(r->added[i].token);
		}
		free(an);
	}
	ca = ta && token_counts(r, ta);
	cb = tb && token_counts(r, tb);
	if (!ca && !cb)
		out = false;
	else if (ca != cb)
		out = true;
	else
		out = strcmp(ta, tb) != 0;
	free(ta);
	free(tb);
	free(flag);
	return out;
}

bool xl_ck_var_invalidates(const struct xl_ck_runtime *r, const char *var)
{
	if (strcmp(var, r->cache_env) == 0 || xl_streq(var, r->path_unless_env))
		return true;
	for (size_t i = 0; i < r->nsettings; i++)
		if (strcmp(r->settings[i].env, var) == 0)
			return r->settings[i].in_key != XL_CK_OUT;
	return in_list(r->raw_vars, var);
}

/* ---- the stamp in the cache directory ------------------------------------------------ */

static bool item_ok(const json_t *it)
{
	return json_is_object(it) && json_is_string(json_object_get(it, "what")) &&
	       json_is_string(json_object_get(it, "name")) && json_is_string(json_object_get(it, "value"));
}

static char *item_group(const json_t *it)
{
	return xl_asprintf("%s\t%s", json_string_value(json_object_get(it, "what")),
			   json_string_value(json_object_get(it, "name")));
}

/* The values of group g in arr, in order, joined by '\n'.  Caller frees. */
static char *group_values(const json_t *arr, const char *g)
{
	struct xl_buf b = XL_BUF_INIT;
	size_t i;
	json_t *it;

	json_array_foreach(arr, i, it) {
		char *k = item_group(it);

		if (strcmp(k, g) == 0)
			xl_buf_addf(&b, "%s\n", json_string_value(json_object_get(it, "value")));
		free(k);
	}
	return xl_buf_detach(&b);
}

static void describe(struct xl_buf *b, size_t *shown, size_t *more, const char *g, const char *before,
		     const char *now)
{
	const char *tab = strchr(g, '\t');
	const char *what = g, *name = tab + 1;
	bool env = xl_startswith(what, "env\t");
	const char *verb = !*before ? (env ? "set" : "added") : !*now ? (env ? "unset" : "removed") : "changed";

	if (*shown >= 3) {
		(*more)++;
		return;
	}
	if (xl_startswith(what, "cache_dir\t"))
		xl_buf_addf(b, "%s%s spelt differently", b->len ? ", " : "", name);
	else
		xl_buf_addf(b, "%s%s %s", b->len ? ", " : "", name, verb);
	(*shown)++;
}

/* The settings of a stamp entry, when well formed. */
static const json_t *entry_settings(const json_t *e)
{
	const json_t *set = json_object_get(e, "settings"), *it;
	size_t i;

	if (!json_is_object(e) || !json_is_array(set))
		return NULL;
	json_array_foreach(set, i, it)
		if (!item_ok(it))
			return NULL;
	return set;
}

static char *diff_text(const json_t *old, const json_t *settings)
{
	struct xl_strv groups = XL_STRV_INIT;
	struct xl_buf b = XL_BUF_INIT;
	size_t i, shown = 0, more = 0;
	json_t *it;

	for (int pass = 0; pass < 2; pass++) {
		const json_t *arr = pass ? old : settings;

		json_array_foreach(arr, i, it) {
			char *g = item_group(it);

			if (!xl_strv_contains(&groups, g))
				xl_strv_push(&groups, g);
			free(g);
		}
	}
	for (i = 0; i < groups.n; i++) {
		char *was = group_values(old, groups.v[i]), *now = group_values(settings, groups.v[i]);

		if (strcmp(was, now) != 0)
			describe(&b, &shown, &more, groups.v[i], was, now);
		free(was);
		free(now);
	}
	xl_strv_release(&groups);
	if (more)
		xl_buf_addf(&b, " and %zu more", more);
	return xl_buf_detach(&b);
}

int xl_ck_stamp_compare(const char *text, size_t len, const json_t *settings, size_t *index,
			char **diff, char **since)
{
	json_error_t jerr;
	json_t *st = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), *seen, *e;
	size_t i;

	*diff = *since = NULL;
	*index = 0;
	seen = json_object_get(st, "seen");
	if (!json_is_object(st) || !json_is_array(seen) || !json_array_size(seen)) {
		json_decref(st);
		return -1;
	}
	json_array_foreach(seen, i, e) {
		if (!entry_settings(e)) {
			json_decref(st);
			return -1;
		}
	}
	/* entries written under any settings seen before are still there */
	json_array_foreach(seen, i, e) {
		if (json_equal(entry_settings(e), settings)) {
			*index = i;
			json_decref(st);
			return 0;
		}
	}
	e = json_array_get(seen, 0);
	*diff = diff_text(entry_settings(e), settings);
	{
		const char *id = json_string_value(json_object_get(e, "run_id"));
		const char *t = json_string_value(json_object_get(e, "time"));
		const char *prof = json_string_value(json_object_get(e, "profile"));

		if (id)
			*since = xl_asprintf("run %s", id);
		else
			*since = xl_asprintf("the launch of %s%s%s", t ? t : "an earlier time",
					     prof ? " with profile " : "", prof ? prof : "");
	}
	json_decref(st);
	return 1;
}

/* ---- before a launch ----------------------------------------------------------------------- */

static const char *env_get(const void *ctx, const char *name)
{
	char *const *envp = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* The stamp to write: this launch first, then the launches kept before
 * (less the one with the same settings), at most STAMP_KEEP.  New reference. */
#define STAMP_KEEP 16
static json_t *new_stamp(const struct xl_ck_runtime *r, const char *dir, const char *text, size_t len,
			 const json_t *settings, const char *profile, const char *run_id)
{
	char tbuf[40];
	json_t *old = text ? json_loadb(text, len, 0, NULL) : NULL, *seen = json_array(), *e;
	size_t i;

	json_array_append_new(seen, json_pack("{s:s,s:s?,s:s?,s:O}", "time",
					      xl_iso_time(xl_now(), tbuf, sizeof(tbuf)), "run_id", run_id,
					      "profile", profile, "settings", settings));
	json_array_foreach(json_object_get(old, "seen"), i, e) {
		if (json_array_size(seen) >= STAMP_KEEP)
			break;
		if (entry_settings(e) && !json_equal(entry_settings(e), settings))
			json_array_append(seen, e);
	}
	json_decref(old);
	return json_pack("{s:s,s:s,s:s,s:s,s:o}", "xlaunch", XLAUNCH_VERSION, "runtime", r->name,
			 "rules", r->version, "dir", dir, "seen", seen);
}

/* The installed releases runtime r hashes into its key (etc/cachekeys.yaml:
 * JAX the jaxlib version, torch_xla the torch and torch_xla revisions), as
 * settings items: a new release since the last launch makes the cache
 * cold, as it does the runtime's. */
static json_t *with_versions(const struct xl_ck_runtime *r, const struct xl_runtime *rt, json_t *settings)
{
	const char *names[2] = { NULL, NULL }, *vals[2] = { NULL, NULL };

	if (!rt)
		return settings;
	if (strcmp(r->name, "jax") == 0) {
		names[0] = "jaxlib";
		vals[0] = rt->jaxlib;
	} else if (strcmp(r->name, "torch_xla") == 0) {
		names[0] = "torch";
		vals[0] = rt->torch;
		names[1] = "torch_xla";
		vals[1] = rt->torch_xla;
	}
	for (int i = 0; i < 2; i++)
		if (vals[i])
			add_item(settings, "release", names[i], vals[i]);
	return sorted(settings);
}

/* "the JAX key rules xlaunch applies are those of jax 0.10.2; this job
 * loads jax 0.6.2" when the installed release is not the one the rules
 * were read from; NULL when it is, or nothing is installed.  Caller frees. */
char *xl_ck_rules_for(const struct xl_ck_runtime *r, const struct xl_runtime *rt)
{
	const char *have = !rt ? NULL : strcmp(r->name, "jax") == 0 ? rt->jax
			   : strcmp(r->name, "torch_xla") == 0 ? rt->torch_xla : NULL;
	int c;

	if (!have || (xl_version_compare_str(have, r->version, &c) == 0 && c == 0))
		return NULL;
	return xl_asprintf("the %s cache-key rules xlaunch applies are those of %s %s; this job loads %s %s, whose rules may differ",
			   r->label, r->name, r->version, r->name, have);
}

void xl_ck_before_launch(char *const *envp, char *const *argv, const char *profile,
			 const char *run_id, const struct xl_runtime *rt)
{
	for (size_t k = 0; k < xl_ck_nruntimes; k++) {
		const struct xl_ck_runtime *r = &xl_ck_runtimes[k];
		const char *dir = env_get(envp, r->cache_env), *dev;
		char *path, *text, *diff = NULL, *since = NULL;
		struct xl_buf why = XL_BUF_INIT;
		json_t *settings;
		size_t len = 0, index = 0;
		int cmp = -1;
		struct stat stt;

		char *rules;

		if (!dir || dir[0] != '/' || strstr(dir, "://"))
			continue;
		settings = with_versions(r, rt, xl_ck_settings(r, env_get, envp, argv));
		if ((rules = xl_ck_rules_for(r, rt)) != NULL) {
			xl_info("%s", rules);
			free(rules);
		}
		path = xl_asprintf("%s/.xlaunch-cachekey-%s.json", dir, r->name);
		text = xl_read_file(path, &len, STAMP_MAX);
		if (text)
			cmp = xl_ck_stamp_compare(text, len, settings, &index, &diff, &since);
		if (cmp == 1)
			xl_buf_addf(&why, "%s since %s", diff, since);
		dev = env_get(envp, "PJRT_DEVICE");
		if (cmp >= 0 && dev && in_list(r->no_read_back, dev))
			xl_buf_addf(&why, "%s%s %s cannot read back what it writes with PJRT_DEVICE=%s (it compiles and writes every entry again)",
				    why.len ? "; " : "", r->label, r->version, dev);
		if (why.len)
			xl_info("the %s compile cache in %s will be cold: %s", r->label, dir, xl_buf_str(&why));
		/* written only when something changed: a warm launch writes nothing */
		if (cmp != 0 || index != 0) {
			json_t *st = new_stamp(r, dir, cmp >= 0 ? text : NULL, len, settings, profile, run_id);

			/* the runtime would create the directory; create it now to keep the stamp */
			if (stat(dir, &stt) != 0 && xl_mkdirs(dir, 0755) != 0)
				xl_debug("cannot create '%s': %s", dir, strerror(errno));
			else if (xl_write_json_atomic(path, st, false) < 0)
				xl_debug("cannot write '%s': %s", path, strerror(errno));
			json_decref(st);
		}
		xl_buf_release(&why);
		free(diff);
		free(since);
		free(text);
		free(path);
		json_decref(settings);
	}
}

json_t *xl_ck_rules_json(const struct xl_runtime *rt)
{
	json_t *arr = json_array();

	for (size_t k = 0; k < xl_ck_nruntimes; k++) {
		const struct xl_ck_runtime *r = &xl_ck_runtimes[k];
		const char *have = !rt ? NULL : strcmp(r->name, "jax") == 0 ? rt->jax
				   : strcmp(r->name, "torch_xla") == 0 ? rt->torch_xla : NULL;
		char *note = xl_ck_rules_for(r, rt);

		json_array_append_new(arr, json_pack("{s:s,s:s,s:o,s:b}", "runtime", r->name,
						     "rules_of", r->version,
						     "installed", have ? json_string(have) : json_null(),
						     "hold", !note));
		free(note);
	}
	return arr;
}
