/*
 * bundle.c - the bundle matrix (etc/bundles.yaml), the bundle rules, and the
 * gate and known-bad-flag services the launcher calls.
 *
 * Rules, each reported under its name:
 *   requires-python   a lane package's Requires-Python against the interpreter
 *   requires-dist     the `pip check` rules over the lane packages
 *   extras-pin        extras-gated pins: the extras a requirement names, and
 *                     the extras the lane implies (libtpu -> jax[tpu],
 *                     torch_xla[tpu]; jax-cudaN-plugin -> jax[cudaN])
 *   lockstep-jax      jaxlib within jax's declared range
 *   lockstep-jax-plugin  jax-cuda and jax-rocm plugins and pjrt = jaxlib
 *   lockstep-torch-xla   torch_xla and torch of the same minor version
 *   cuda-driver-floor the CUDA runtime installed against the driver
 *   matrix            the validated, known-issues or broken bundle matched
 *   known-issue       each known issue of the matched bundle
 *   metadata          unreadable metadata (never fatal)
 */
#include "bundle/bundle.h"
#include "probe/probe.h"

#include <ctype.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* ---- the matrix ------------------------------------------------------------ */

struct mctx {
	char *err;
};

static bool merr(struct mctx *m, const struct xl_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool merr(struct mctx *m, const struct xl_ynode *n, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	if (m->err)
		return false;
	xl_buf_addf(&b, "%u:%u: ", n ? n->line : 1, n ? n->col : 1);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	m->err = xl_buf_detach(&b);
	return false;
}

static bool want_kind(struct mctx *m, const struct xl_ynode *n, enum xl_ynode_kind k,
		      const char *what)
{
	static const char *const names[] = { "a scalar", "a list", "a mapping" };

	if (n && n->kind == k && !(k == XL_Y_SCALAR && xl_ynode_is_null(n)))
		return true;
	return merr(m, n, "%s must be %s, not %s", what, names[k],
		    n && xl_ynode_is_null(n) ? "null" : n ? xl_ynode_kind_name(n) : "missing");
}

/* Checks the keys of a mapping against allowed (NULL-terminated). */
static bool check_keys(struct mctx *m, const struct xl_ynode *map, const char *const *allowed,
		       const char *where)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct xl_ynode *k = map->items[i];
		bool ok = false;

		if (k->kind != XL_Y_SCALAR)
			return merr(m, k, "%s: keys must be scalars", where);
		for (size_t j = 0; allowed[j]; j++)
			if (strcmp(k->str, allowed[j]) == 0)
				ok = true;
		if (!ok) {
			const char *best = xl_did_you_mean(k->str, allowed);

			if (best)
				return merr(m, k, "%s: unknown key '%s'; did you mean '%s'?", where,
					    k->str, best);
			return merr(m, k, "%s: unknown key '%s'", where, k->str);
		}
		for (size_t j = 0; j < i; j += 2)
			if (strcmp(map->items[j]->str, k->str) == 0)
				return merr(m, k, "%s: key '%s' given twice", where, k->str);
	}
	return true;
}

static bool req_str(struct mctx *m, const struct xl_ynode *map, const char *key,
		    const char *where, json_t *dst, bool required)
{
	const struct xl_ynode *n = xl_ymap_get(map, key);

	if (!n) {
		if (required)
			return merr(m, map, "%s: '%s' is required", where, key);
		return true;
	}
	if (!want_kind(m, n, XL_Y_SCALAR, key))
		return false;
	json_object_set_new(dst, key, json_string(n->str));
	return true;
}

static bool check_spec(struct mctx *m, const struct xl_ynode *n, const char *what)
{
	struct xl_specset ss;
	char *e = NULL;

	if (!want_kind(m, n, XL_Y_SCALAR, what))
		return false;
	if (xl_specset_parse(n->str, n->len, &ss, &e) < 0) {
		merr(m, n, "%s: %s", what, e);
		free(e);
		return false;
	}
	xl_specset_release(&ss);
	return true;
}

/* packages/requires: a mapping of project name to specifier. */
static json_t *parse_pkgmap(struct mctx *m, const struct xl_ynode *n, const char *what)
{
	json_t *o = json_object();

	if (!want_kind(m, n, XL_Y_MAP, what))
		goto bad;
	if (n->n == 0) {
		merr(m, n, "%s: needs at least one package", what);
		goto bad;
	}
	for (size_t i = 0; i < n->n; i += 2) {
		const struct xl_ynode *k = n->items[i], *v = n->items[i + 1];
		char *key;

		if (!want_kind(m, k, XL_Y_SCALAR, "a package name"))
			goto bad;
		if (!check_spec(m, v, k->str))
			goto bad;
		key = xl_pkg_key(k->str);
		if (json_object_get(o, key)) {
			merr(m, k, "%s: package '%s' given twice", what, key);
			free(key);
			goto bad;
		}
		json_object_set_new(o, key, json_string(v->str));
		free(key);
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

static json_t *parse_issue(struct mctx *m, const struct xl_ynode *n)
{
	static const char *const keys[] = { "id", "summary", "workaround", "waives", NULL };
	static const char *const wkeys[] = { "policy", "detail", "profile", "flag", NULL };
	static const char *const policies[] = { "profile", "flag", "refuse", "patch", "note", NULL };
	json_t *o = json_object(), *w;
	const struct xl_ynode *wn, *pn, *wv;

	if (!want_kind(m, n, XL_Y_MAP, "a known issue") || !check_keys(m, n, keys, "known issue") ||
	    !req_str(m, n, "id", "known issue", o, true) ||
	    !req_str(m, n, "summary", "known issue", o, true))
		goto bad;
	wn = xl_ymap_get(n, "workaround");
	if (!wn) {
		merr(m, n, "known issue: 'workaround' is required");
		goto bad;
	}
	if (!want_kind(m, wn, XL_Y_MAP, "workaround") || !check_keys(m, wn, wkeys, "workaround"))
		goto bad;
	w = json_object();
	json_object_set_new(o, "workaround", w);
	pn = xl_ymap_get(wn, "policy");
	if (!pn) {
		merr(m, wn, "workaround: 'policy' is required");
		goto bad;
	}
	if (!want_kind(m, pn, XL_Y_SCALAR, "policy"))
		goto bad;
	{
		bool ok = false;

		for (size_t i = 0; policies[i]; i++)
			ok = ok || strcmp(pn->str, policies[i]) == 0;
		if (!ok) {
			merr(m, pn, "policy '%s' is not one of profile, flag, refuse, patch, note", pn->str);
			goto bad;
		}
	}
	json_object_set_new(w, "policy", json_string(pn->str));
	if (!req_str(m, wn, "detail", "workaround", w, true))
		goto bad;
	if (strcmp(pn->str, "profile") == 0 && !req_str(m, wn, "profile", "workaround", w, true))
		goto bad;
	if (strcmp(pn->str, "flag") == 0 && !req_str(m, wn, "flag", "workaround", w, true))
		goto bad;
	wv = xl_ymap_get(n, "waives");
	if (wv) {
		static const char *const vkeys[] = { "rule", "package", NULL };
		json_t *x = json_object();

		json_object_set_new(o, "waives", x);
		if (!want_kind(m, wv, XL_Y_MAP, "waives") || !check_keys(m, wv, vkeys, "waives") ||
		    !req_str(m, wv, "rule", "waives", x, true) ||
		    !req_str(m, wv, "package", "waives", x, true))
			goto bad;
		{
			char *k = xl_pkg_key(json_string_value(json_object_get(x, "package")));

			json_object_set_new(x, "package", json_string(k));
			free(k);
		}
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

static json_t *parse_bad_flag(struct mctx *m, const struct xl_ynode *n)
{
	static const char *const keys[] = { "var", "flag", "value", "reason", NULL };
	json_t *o = json_object();
	const char *var;

	if (!want_kind(m, n, XL_Y_MAP, "a known_bad entry") ||
	    !check_keys(m, n, keys, "known_bad") || !req_str(m, n, "var", "known_bad", o, true) ||
	    !req_str(m, n, "flag", "known_bad", o, true) ||
	    !req_str(m, n, "reason", "known_bad", o, true) ||
	    !req_str(m, n, "value", "known_bad", o, false))
		goto bad;
	var = json_string_value(json_object_get(o, "var"));
	if (strcmp(var, "XLA_FLAGS") && strcmp(var, "LIBTPU_INIT_ARGS") && strcmp(var, "TF_XLA_FLAGS")) {
		merr(m, xl_ymap_get(n, "var"), "known_bad: var must be XLA_FLAGS, LIBTPU_INIT_ARGS or TF_XLA_FLAGS");
		goto bad;
	}
	if (!json_object_get(o, "value"))
		json_object_set_new(o, "value", json_null());
	return o;
bad:
	json_decref(o);
	return NULL;
}

static json_t *parse_list(struct mctx *m, const struct xl_ynode *n, const char *what,
			  json_t *(*one)(struct mctx *, const struct xl_ynode *))
{
	json_t *a = json_array();

	if (!n)
		return a;
	if (!want_kind(m, n, XL_Y_SEQ, what)) {
		json_decref(a);
		return NULL;
	}
	for (size_t i = 0; i < n->n; i++) {
		json_t *x = one(m, n->items[i]);

		if (!x) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, x);
	}
	return a;
}

static json_t *parse_bundle(struct mctx *m, const struct xl_ynode *n)
{
	static const char *const keys[] = {
		"name", "status", "accelerator", "description", "python", "packages",
		"known_issues", "known_bad", NULL,
	};
	json_t *o = json_object(), *x;
	const struct xl_ynode *s;

	if (!want_kind(m, n, XL_Y_MAP, "a bundle") || !check_keys(m, n, keys, "bundle") ||
	    !req_str(m, n, "name", "bundle", o, true) ||
	    !req_str(m, n, "status", "bundle", o, true) ||
	    !req_str(m, n, "accelerator", "bundle", o, false) ||
	    !req_str(m, n, "description", "bundle", o, false))
		goto bad;
	s = xl_ymap_get(n, "status");
	if (strcmp(s->str, "validated") && strcmp(s->str, "known-issues") && strcmp(s->str, "broken")) {
		merr(m, s, "status '%s' is not one of validated, known-issues, broken", s->str);
		goto bad;
	}
	if ((s = xl_ymap_get(n, "python"))) {
		if (!check_spec(m, s, "python"))
			goto bad;
		json_object_set_new(o, "python", json_string(s->str));
	}
	if (!xl_ymap_get(n, "packages")) {
		merr(m, n, "bundle: 'packages' is required");
		goto bad;
	}
	if (!(x = parse_pkgmap(m, xl_ymap_get(n, "packages"), "packages")))
		goto bad;
	json_object_set_new(o, "packages", x);
	if (!(x = parse_list(m, xl_ymap_get(n, "known_issues"), "known_issues", parse_issue)))
		goto bad;
	json_object_set_new(o, "known_issues", x);
	if (!(x = parse_list(m, xl_ymap_get(n, "known_bad"), "known_bad", parse_bad_flag)))
		goto bad;
	json_object_set_new(o, "known_bad", x);
	return o;
bad:
	json_decref(o);
	return NULL;
}

static json_t *parse_feature(struct mctx *m, const struct xl_ynode *n)
{
	static const char *const keys[] = { "name", "description", "requires", "preconditions", NULL };
	json_t *o = json_object(), *x;

	if (!want_kind(m, n, XL_Y_MAP, "a feature") || !check_keys(m, n, keys, "feature") ||
	    !req_str(m, n, "name", "feature", o, true) ||
	    !req_str(m, n, "description", "feature", o, false) ||
	    !req_str(m, n, "preconditions", "feature", o, false))
		goto bad;
	if (!xl_ymap_get(n, "requires")) {
		merr(m, n, "feature: 'requires' is required");
		goto bad;
	}
	if (!(x = parse_pkgmap(m, xl_ymap_get(n, "requires"), "requires")))
		goto bad;
	json_object_set_new(o, "requires", x);
	return o;
bad:
	json_decref(o);
	return NULL;
}

int xl_bundle_matrix_parse(const char *data, size_t len, json_t **out, char **err)
{
	static const char *const keys[] = { "version", "bundles", "features", NULL };
	struct mctx m = { NULL };
	struct xl_ynode *root = xl_yaml_parse(data, len, err);
	json_t *doc = NULL, *x;
	const struct xl_ynode *v;

	*out = NULL;
	if (!root)
		return XL_EX_DATAERR;
	*err = NULL;
	if (!want_kind(&m, root, XL_Y_MAP, "the matrix") || !check_keys(&m, root, keys, "matrix"))
		goto bad;
	v = xl_ymap_get(root, "version");
	if (!v || v->kind != XL_Y_SCALAR || strcmp(v->str, "1") != 0) {
		merr(&m, v ? v : root, "matrix: 'version: 1' is required");
		goto bad;
	}
	doc = json_object();
	json_object_set_new(doc, "version", json_integer(1));
	if (!(x = parse_list(&m, xl_ymap_get(root, "bundles"), "bundles", parse_bundle)))
		goto bad;
	json_object_set_new(doc, "bundles", x);
	{
		const struct xl_ynode *bl = xl_ymap_get(root, "bundles");

		for (size_t i = 0; bl && i < json_array_size(x); i++)
			for (size_t j = 0; j < i; j++)
				if (strcmp(json_string_value(json_object_get(json_array_get(x, i), "name")),
					   json_string_value(json_object_get(json_array_get(x, j), "name"))) == 0) {
					merr(&m, bl->items[i], "bundle '%s' given twice",
					     json_string_value(json_object_get(json_array_get(x, i), "name")));
					goto bad;
				}
	}
	if (!(x = parse_list(&m, xl_ymap_get(root, "features"), "features", parse_feature)))
		goto bad;
	json_object_set_new(doc, "features", x);
	xl_ynode_free(root);
	*out = doc;
	return 0;
bad:
	xl_ynode_free(root);
	json_decref(doc);
	*err = m.err ? m.err : xl_strdup("1:1: invalid matrix");
	return XL_EX_DATAERR;
}

int xl_bundle_matrix_load(const char *path, json_t **out)
{
	char *def = NULL, *data, *err = NULL;
	size_t len;
	int r;

	*out = NULL;
	if (!path)
		path = def = xl_data_path("etc/bundles.yaml");
	data = xl_read_file(path, &len, 0);
	if (!data) {
		xl_error("bundle matrix '%s': %s", path, strerror(errno));
		free(def);
		return errno == ENOENT ? XL_EX_NOINPUT : XL_EX_DATAERR;
	}
	r = xl_bundle_matrix_parse(data, len, out, &err);
	if (r)
		xl_error("bundle matrix '%s': %s:%s", path, path, err);
	free(err);
	free(data);
	free(def);
	return r;
}

/* ---- host facts ---------------------------------------------------------------- */

static char *first_version_after(const char *text, const char *marker)
{
	const char *p = text ? strstr(text, marker) : NULL, *q;

	if (!p)
		return NULL;
	p += strlen(marker);
	while (*p && !isdigit((unsigned char)*p))
		p++;
	q = p;
	while (isdigit((unsigned char)*q) || *q == '.')
		q++;
	return q > p ? xl_strndup(p, (size_t)(q - p)) : NULL;
}

/* One token of a driver version: digits with at least one dot, starting
 * and ending with a digit ("580.159.04"). */
static bool driver_token(const char *p, size_t n)
{
	bool dot = false;

	if (!n || !isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '.')
			dot = true;
		else if (!isdigit((unsigned char)p[i]))
			return false;
	}
	return dot;
}

char *xl_nvidia_driver_parse(const char *text, size_t len)
{
	const char *end = text + len, *p = text, *q, *line = NULL;
	static const char nvrm[] = "NVRM version:";

	/* the NVRM line of /proc/driver/nvidia/version; else the first line
	 * (/sys/module/nvidia/version holds the bare version) */
	for (const char *l = text; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t ll = (size_t)((nl ? nl : end) - l);

		if (ll >= sizeof(nvrm) - 1 && memcmp(l, nvrm, sizeof(nvrm) - 1) == 0) {
			line = l + sizeof(nvrm) - 1;
			end = l + ll;
			break;
		}
		l = nl ? nl + 1 : end;
	}
	if (!line) {
		/* the bare version, alone on the first line */
		q = memchr(text, '\n', len);
		end = q ? q : end;
		while (p < end && isspace((unsigned char)*p))
			p++;
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		return driver_token(p, (size_t)(end - p)) ? xl_strndup(p, (size_t)(end - p)) : NULL;
	}
	/* the first whitespace-separated word that is a version: "x86_64" in
	 * "Open Kernel Module for x86_64  580.159.04" is not one */
	p = line;
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		q = p;
		while (q < end && !isspace((unsigned char)*q))
			q++;
		if (driver_token(p, (size_t)(q - p)))
			return xl_strndup(p, (size_t)(q - p));
		p = q;
	}
	return NULL;
}

void xl_bundle_host_read(struct xl_bundle_host *h)
{
	static const char *const module_files[] = {
		"/sys/module/nvidia/version", "/proc/driver/nvidia/version",
	};
	struct utsname u;
	char *t;
	size_t len;
	int v;

	memset(h, 0, sizeof(*h));
	h->cuda_driver_api = xl_cuda_driver_version(&v) == 0 ? v : -1;
	for (size_t i = 0; i < 2 && !h->nvidia_module; i++) {
		if ((t = xl_read_host_file(module_files[i], &len, 1 << 16))) {
			h->nvidia_module = xl_nvidia_driver_parse(t, len);
			free(t);
		}
	}
	t = xl_read_host_file("/usr/local/cuda/version.json", NULL, 1 << 20);
	if (t) {
		const char *c = strstr(t, "\"cuda\"");

		h->cuda_toolkit = first_version_after(c, "\"version\"");
		free(t);
	} else if ((t = xl_read_host_file("/usr/local/cuda/version.txt", NULL, 1 << 16))) {
		h->cuda_toolkit = first_version_after(t, "CUDA Version");
		free(t);
	}
	h->glibc = xl_strdup(gnu_get_libc_version());
	if (uname(&u) == 0) {
		h->kernel = xl_strdup(u.release);
		h->machine = xl_strdup(u.machine);
	}
}

void xl_bundle_host_release(struct xl_bundle_host *h)
{
	free(h->nvidia_module);
	free(h->cuda_toolkit);
	free(h->glibc);
	free(h->kernel);
	free(h->machine);
	memset(h, 0, sizeof(*h));
}

/* ---- show ---------------------------------------------------------------------- */

bool xl_bundle_is_lane(const char *key)
{
	static const char *const names[] = {
		"torch", "torch-xla", "torchvision", "torchaudio", "jax", "jaxlib", "libtpu",
		"libtpu-nightly", "triton", "pytorch-triton", "numpy", "flax", "optax", "chex",
		"orbax-checkpoint", "ml-dtypes", "opt-einsum", "scipy", "tpu-info", "tensorflow",
		"keras", "transformers", "accelerate", "xprof", "tensorboard-plugin-profile",
		"jax-tpu-embedding", "libtpu-dev", NULL,
	};

	for (size_t i = 0; names[i]; i++)
		if (strcmp(key, names[i]) == 0)
			return true;
	return xl_startswith(key, "nvidia-") || xl_startswith(key, "jax-cuda") ||
	       xl_startswith(key, "jax-rocm") || xl_startswith(key, "libtpu");
}

static json_t *python_json(const struct xl_pyenv *env)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:s,s:s,s:s}",
			      "executable", env->python, "source", env->source,
			      "version", env->version, "prefix", env->prefix,
			      "base_prefix", env->base_prefix ? env->base_prefix : "",
			      "venv", env->venv, "system_site_packages", env->system_site,
			      "implementation", env->implementation ? env->implementation : "",
			      "sys_platform", env->sys_platform ? env->sys_platform : "",
			      "platform_machine", env->platform_machine ? env->platform_machine : "");
	json_t *dirs = json_array();

	for (size_t i = 0; i < env->sitedirs.n; i++)
		json_array_append_new(dirs, json_string(env->sitedirs.v[i]));
	json_object_set_new(o, "site_dirs", dirs);
	return o;
}

static json_t *cuda_json(const struct xl_pyenv *env, const struct xl_bundle_host *host);

json_t *xl_bundle_show_json(const struct xl_pyenv *env, const struct xl_bundle_host *host,
			    bool with_plugins, bool all)
{
	json_t *doc = json_object(), *pk = json_array(), *br = json_array(), *pl = json_array();

	json_object_set_new(doc, "python", python_json(env));
	for (size_t i = 0; i < env->ndists; i++) {
		const struct xl_dist *d = &env->dists[i];

		bool lane = xl_bundle_is_lane(d->key);

		if (!lane && !all)
			continue;
		json_array_append_new(pk, json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", d->key,
						    "version", d->version, "normalized",
						    d->version_ok ? d->v.norm : d->version,
						    "metadata", d->path ? d->path : "", "lane", lane));
	}
	json_object_set_new(doc, "packages", pk);
	json_object_set_new(doc, "installed_count", json_integer((json_int_t)env->ndists));
	{
		size_t lane = 0;

		for (size_t i = 0; i < env->ndists; i++)
			lane += xl_bundle_is_lane(env->dists[i].key);
		json_object_set_new(doc, "lane_count", json_integer((json_int_t)lane));
	}
	for (size_t i = 0; i < env->broken.n; i++)
		json_array_append_new(br, json_string(env->broken.v[i]));
	json_object_set_new(doc, "broken_metadata", br);
	json_object_set_new(doc, "host", json_pack("{s:s?,s:s?,s:s?}", "glibc", host->glibc,
						   "kernel", host->kernel, "machine", host->machine));
	json_object_set_new(doc, "cuda", cuda_json(env, host));
	if (with_plugins) {
		struct xl_strv paths = XL_STRV_INIT;

		xl_pjrt_find_plugins(&env->libdirs, &paths);
		for (size_t i = 0; i < paths.n; i++) {
			int maj = 0, min = 0;
			char *err = NULL;
			json_t *o = json_pack("{s:s}", "path", paths.v[i]);

			if (xl_pjrt_plugin_api_version(paths.v[i], &maj, &min, &err) == 0) {
				json_object_set_new(o, "api_version", json_sprintf("%d.%d", maj, min));
				json_object_set_new(o, "error", json_null());
			} else {
				json_object_set_new(o, "api_version", json_null());
				json_object_set_new(o, "error", json_string(err ? err : "failed"));
			}
			free(err);
			json_array_append_new(pl, o);
		}
		xl_strv_release(&paths);
	}
	json_object_set_new(doc, "pjrt_plugins", pl);
	return doc;
}

/* ---- check ----------------------------------------------------------------------- */

struct checker {
	const struct xl_pyenv *env;
	struct xl_marker_env menv;
	json_t *reasons;
	json_t *waivers;          /* [{rule, package, id}] of the matched bundle */
	int nerr, nwarn;
};

static void reason(struct checker *c, const char *rule, enum xl_severity sev, json_t *pkgs,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void reason(struct checker *c, const char *rule, enum xl_severity sev, json_t *pkgs,
		   const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;
	const char *waived = NULL;
	size_t i;
	json_t *w, *p;

	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (sev == XL_SEV_ERROR && c->waivers) {
		json_array_foreach(c->waivers, i, w) {
			size_t j;

			if (strcmp(json_string_value(json_object_get(w, "rule")), rule))
				continue;
			json_array_foreach(pkgs, j, p) {
				const char *s = json_string_value(p);
				const char *pk = json_string_value(json_object_get(w, "package"));
				size_t n = strlen(pk);

				if (strncmp(s, pk, n) == 0 && (s[n] == ' ' || s[n] == '\0'))
					waived = json_string_value(json_object_get(w, "id"));
			}
		}
	}
	if (waived) {
		sev = XL_SEV_WARNING;
		xl_buf_addf(&b, " (known issue %s of the matched bundle)", waived);
	}
	if (sev == XL_SEV_ERROR)
		c->nerr++;
	else if (sev == XL_SEV_WARNING)
		c->nwarn++;
	json_array_append_new(c->reasons, json_pack("{s:s,s:s,s:o,s:s}", "rule", rule,
						    "severity", xl_severity_name(sev), "packages", pkgs,
						    "message", xl_buf_str(&b)));
	xl_buf_release(&b);
}

static json_t *pk1(const struct xl_dist *d)
{
	return json_sprintf("%s %s", d->key, d->version);
}

static json_t *pkgs2(const struct xl_dist *a, const struct xl_dist *b, const char *bname)
{
	json_t *arr = json_array();

	json_array_append_new(arr, pk1(a));
	json_array_append_new(arr, b ? pk1(b) : json_string(bname));
	return arr;
}

static bool dist_matches(const struct xl_dist *d, const struct xl_specset *ss)
{
	/* pip check holds the parsed version against the specifier: '==='
	 * compares its normalized text (str(Version)), not the raw one */
	return d->version_ok && xl_specset_contains(ss, &d->v, NULL);
}

/* One requirement of d, applicable under extra (NULL none). */
static void check_req(struct checker *c, const struct xl_dist *d, const struct xl_req *r,
		      const char *rule, const char *extra, bool missing_is_error)
{
	const struct xl_dist *dep = xl_pyenv_find(c->env, r->key);
	char *spec = xl_specset_str(&r->spec);
	const char *via = extra ? extra : "";

	if (!dep) {
		reason(c, rule, missing_is_error ? XL_SEV_ERROR : XL_SEV_WARNING, pkgs2(d, NULL, r->key),
		       "%s %s%s%s%s requires %s%s%s, which is not installed", d->key, d->version,
		       *via ? " [" : "", via, *via ? "]" : "", r->key, *spec ? " " : "", spec);
	} else if (r->spec.n && !dist_matches(dep, &r->spec)) {
		reason(c, rule, XL_SEV_ERROR, pkgs2(d, dep, NULL),
		       "%s %s%s%s%s requires %s %s; installed %s %s", d->key, d->version,
		       *via ? " [" : "", via, *via ? "]" : "", r->key, spec, dep->key, dep->version);
	} else {
		/* the extras this requirement names apply to the dependency */
		for (size_t k = 0; k < r->extras.n; k++) {
			for (size_t j = 0; j < dep->nreqs; j++) {
				const struct xl_req *rr = &dep->reqs[j];
				char *e1 = NULL, *e2 = NULL;

				if (!rr->marker || !xl_marker_uses_extra(rr->marker))
					continue;
				if (xl_marker_eval(rr->marker, &c->menv, r->extras.v[k], &e1) == 1 &&
				    xl_marker_eval(rr->marker, &c->menv, "", &e2) == 0)
					check_req(c, dep, rr, "extras-pin", r->extras.v[k], false);
				free(e1);
				free(e2);
			}
		}
	}
	free(spec);
}

static void rule_requires(struct checker *c)
{
	const struct xl_pyenv *env = c->env;
	struct xl_version pyv;

	if (xl_version_parse(env->version, strlen(env->version), &pyv) < 0)
		pyv.norm = NULL;
	for (size_t i = 0; i < env->ndists; i++) {
		const struct xl_dist *d = &env->dists[i];

		if (!xl_bundle_is_lane(d->key))
			continue;
		if (d->requires_python && pyv.norm) {
			struct xl_specset ss;
			char *e = NULL;

			if (xl_specset_parse(d->requires_python, strlen(d->requires_python), &ss, &e) == 0) {
				if (!xl_specset_contains(&ss, &pyv, env->version))
					reason(c, "requires-python", XL_SEV_ERROR, json_pack("[o]", pk1(d)),
					       "%s %s requires Python %s; the interpreter is %s", d->key,
					       d->version, d->requires_python, env->version);
				xl_specset_release(&ss);
			} else {
				reason(c, "metadata", XL_SEV_WARNING, json_pack("[o]", pk1(d)),
				       "%s %s: Requires-Python '%s' does not parse: %s", d->key, d->version,
				       d->requires_python, e);
				free(e);
			}
		}
		for (size_t j = 0; j < d->nreqs; j++) {
			const struct xl_req *r = &d->reqs[j];
			char *err = NULL;
			int m = r->marker ? xl_marker_eval(r->marker, &c->menv, "", &err) : 1;

			if (m < 0) {
				reason(c, "requires-dist", XL_SEV_WARNING, json_pack("[o]", pk1(d)),
				       "%s %s: Requires-Dist '%s': %s", d->key, d->version, r->raw, err);
				free(err);
				continue;
			}
			if (m == 0)
				continue;
			/* jax -> jaxlib is reported by the lock-step rule */
			if (strcmp(d->key, "jax") == 0 && strcmp(r->key, "jaxlib") == 0)
				continue;
			check_req(c, d, r, "requires-dist", NULL, true);
		}
	}
	if (pyv.norm)
		xl_version_release(&pyv);
}

/* The extras a lane implies: a present libtpu means jax[tpu] and
 * torch_xla[tpu]; a CUDA plugin means jax[cudaN]. */
static void rule_implied_extras(struct checker *c)
{
	static const struct { const char *if_key, *pkg, *extra; } imp[] = {
		{ "libtpu", "jax", "tpu" }, { "libtpu", "torch-xla", "tpu" },
		{ "libtpu-nightly", "jax", "tpu" }, { "libtpu-nightly", "torch-xla", "tpu" },
		{ "jax-cuda12-plugin", "jax", "cuda12" }, { "jax-cuda13-plugin", "jax", "cuda13" },
	};

	for (size_t i = 0; i < sizeof(imp) / sizeof(imp[0]); i++) {
		const struct xl_dist *d = xl_pyenv_find(c->env, imp[i].pkg);

		if (!d || !xl_pyenv_find(c->env, imp[i].if_key))
			continue;
		for (size_t j = 0; j < d->nreqs; j++) {
			const struct xl_req *r = &d->reqs[j];
			char *e1 = NULL, *e2 = NULL;

			if (!r->marker || !xl_marker_uses_extra(r->marker))
				continue;
			if (xl_marker_eval(r->marker, &c->menv, imp[i].extra, &e1) == 1 &&
			    xl_marker_eval(r->marker, &c->menv, "", &e2) == 0)
				check_req(c, d, r, "extras-pin", imp[i].extra, false);
			free(e1);
			free(e2);
		}
	}
}

/* major.minor of a release, "2.9"; caller frees. */
static char *minor_of(const struct xl_version *v)
{
	return xl_asprintf("%s!%s.%s", v->epoch, v->release[0], v->nrelease > 1 ? v->release[1] : "0");
}

static int public_release_cmp(const struct xl_dist *a, const struct xl_dist *b)
{
	struct xl_version x, y;
	char *s = xl_asprintf("%s!", a->v.epoch), *t = xl_asprintf("%s!", b->v.epoch);
	int r;

	for (size_t i = 0; i < a->v.nrelease; i++) {
		char *n = xl_asprintf("%s%s%s", s, i ? "." : "", a->v.release[i]);

		free(s);
		s = n;
	}
	for (size_t i = 0; i < b->v.nrelease; i++) {
		char *n = xl_asprintf("%s%s%s", t, i ? "." : "", b->v.release[i]);

		free(t);
		t = n;
	}
	xl_version_parse(s, strlen(s), &x);
	xl_version_parse(t, strlen(t), &y);
	r = xl_version_cmp(&x, &y);
	xl_version_release(&x);
	xl_version_release(&y);
	free(s);
	free(t);
	return r;
}

static void rule_lockstep(struct checker *c)
{
	const struct xl_dist *jax = xl_pyenv_find(c->env, "jax");
	const struct xl_dist *jaxlib = xl_pyenv_find(c->env, "jaxlib");
	const struct xl_dist *torch = xl_pyenv_find(c->env, "torch");
	const struct xl_dist *txla = xl_pyenv_find(c->env, "torch-xla");

	if (jax && jaxlib && jax->version_ok && jaxlib->version_ok) {
		bool declared = false;

		for (size_t j = 0; j < jax->nreqs; j++) {
			const struct xl_req *r = &jax->reqs[j];
			char *spec;

			if (strcmp(r->key, "jaxlib") || r->marker)
				continue;
			declared = true;
			if (r->spec.n && !dist_matches(jaxlib, &r->spec)) {
				spec = xl_specset_str(&r->spec);
				reason(c, "lockstep-jax", XL_SEV_ERROR, pkgs2(jax, jaxlib, NULL),
				       "jaxlib %s is outside the range jax %s declares (jaxlib %s)",
				       jaxlib->version, jax->version, spec);
				free(spec);
			}
		}
		if (!declared && public_release_cmp(jaxlib, jax) > 0)
			reason(c, "lockstep-jax", XL_SEV_ERROR, pkgs2(jax, jaxlib, NULL),
			       "jaxlib %s is newer than jax %s (jax declares no jaxlib range)",
			       jaxlib->version, jax->version);
	} else if (jax && !jaxlib) {
		reason(c, "lockstep-jax", XL_SEV_ERROR, json_pack("[o]", pk1(jax)),
		       "jax %s is installed without jaxlib", jax->version);
	}
	for (size_t i = 0; i < c->env->ndists; i++) {
		const struct xl_dist *p = &c->env->dists[i];

		if (!(xl_startswith(p->key, "jax-cuda") || xl_startswith(p->key, "jax-rocm")) ||
		    !(xl_endswith(p->key, "-plugin") || xl_endswith(p->key, "-pjrt")))
			continue;
		if (!jaxlib) {
			reason(c, "lockstep-jax-plugin", XL_SEV_ERROR, json_pack("[o]", pk1(p)),
			       "%s %s is installed without jaxlib", p->key, p->version);
		} else if (!p->version_ok || !jaxlib->version_ok ||
			   public_release_cmp(p, jaxlib) != 0) {
			reason(c, "lockstep-jax-plugin", XL_SEV_ERROR, pkgs2(p, jaxlib, NULL),
			       "%s %s must equal jaxlib %s", p->key, p->version, jaxlib->version);
		}
	}
	if (txla && !torch) {
		reason(c, "lockstep-torch-xla", XL_SEV_ERROR, json_pack("[o]", pk1(txla)),
		       "torch-xla %s is installed without torch", txla->version);
	} else if (txla && torch && txla->version_ok && torch->version_ok) {
		char *a = minor_of(&txla->v), *b = minor_of(&torch->v);

		if (strcmp(a, b) != 0)
			reason(c, "lockstep-torch-xla", XL_SEV_ERROR, pkgs2(txla, torch, NULL),
			       "torch-xla %s needs torch %s.%s.*; installed torch %s (it would fail at "
			       "import with an undefined symbol)", txla->version, txla->v.release[0],
			       txla->v.nrelease > 1 ? txla->v.release[1] : "0", torch->version);
		free(a);
		free(b);
	}
}

static const struct xl_dist *cuda_runtime(const struct xl_pyenv *env)
{
	static const char *const keys[] = {
		"nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12",
		"nvidia-cuda-runtime-cu11", NULL,
	};

	for (size_t i = 0; keys[i]; i++) {
		const struct xl_dist *d = xl_pyenv_find(env, keys[i]);

		if (d && d->version_ok)
			return d;
	}
	return NULL;
}

static json_t *cuda_json(const struct xl_pyenv *env, const struct xl_bundle_host *host)
{
	const struct xl_dist *rt = cuda_runtime(env);
	json_t *o = json_object();

	if (host->cuda_driver_api >= 0) {
		json_object_set_new(o, "driver_api_version", json_integer(host->cuda_driver_api));
		json_object_set_new(o, "driver_api", json_sprintf("%d.%d", host->cuda_driver_api / 1000,
								  host->cuda_driver_api % 1000 / 10));
	} else {
		json_object_set_new(o, "driver_api_version", json_null());
		json_object_set_new(o, "driver_api", json_null());
	}
	json_object_set_new(o, "kernel_module", host->nvidia_module ?
			    json_string(host->nvidia_module) : json_null());
	json_object_set_new(o, "runtime", rt ? json_string(rt->version) :
			    host->cuda_toolkit ? json_string(host->cuda_toolkit) : json_null());
	json_object_set_new(o, "runtime_source", rt ? json_string(rt->key) :
			    host->cuda_toolkit ? json_string("/usr/local/cuda") : json_null());
	return o;
}

static void rule_cuda_floor(struct checker *c, const struct xl_bundle_host *host)
{
	const struct xl_dist *rt = cuda_runtime(c->env);
	const char *ver = rt ? rt->version : host->cuda_toolkit;
	const char *src = rt ? rt->key : "the CUDA toolkit in /usr/local/cuda";
	long major, floor;

	if (!ver)
		return;
	major = strtol(ver, NULL, 10);
	floor = major >= 13 ? 580 : major == 12 ? 525 : major == 11 ? 450 : 0;
	if (!floor)
		return;
	if (host->nvidia_module) {
		long drv = strtol(host->nvidia_module, NULL, 10);

		if (drv < floor)
			reason(c, "cuda-driver-floor", XL_SEV_ERROR,
			       rt ? json_pack("[o]", pk1(rt)) : json_pack("[s]", "cuda-toolkit"),
			       "CUDA runtime %s (%s) needs NVIDIA driver %ld or newer; the driver is %s",
			       ver, src, floor, host->nvidia_module);
	} else if (host->cuda_driver_api >= 0) {
		if (host->cuda_driver_api < major * 1000)
			reason(c, "cuda-driver-floor", XL_SEV_ERROR,
			       rt ? json_pack("[o]", pk1(rt)) : json_pack("[s]", "cuda-toolkit"),
			       "CUDA runtime %s (%s) needs a driver for CUDA %ld (NVIDIA %ld or newer); "
			       "the driver supports CUDA %d.%d", ver, src, major, floor,
			       host->cuda_driver_api / 1000, host->cuda_driver_api % 1000 / 10);
	} else {
		reason(c, "cuda-driver-floor", XL_SEV_NOTE,
		       rt ? json_pack("[o]", pk1(rt)) : json_pack("[s]", "cuda-toolkit"),
		       "CUDA runtime %s (%s) is installed but no CUDA driver was found (it needs "
		       "NVIDIA %ld or newer to run on a GPU)", ver, src, floor);
	}
}

/* Whether the environment satisfies every package of a map; *why receives
 * the first reason it does not (caller frees). */
static bool env_satisfies(const struct xl_pyenv *env, json_t *pkgs, char **why)
{
	const char *key;
	json_t *v;

	json_object_foreach(pkgs, key, v) {
		const struct xl_dist *d = xl_pyenv_find(env, key);
		struct xl_specset ss;
		char *e = NULL;
		bool ok;

		if (!d) {
			if (why)
				*why = xl_asprintf("%s is not installed", key);
			return false;
		}
		if (xl_specset_parse(json_string_value(v), strlen(json_string_value(v)), &ss, &e) < 0) {
			free(e);
			return false;
		}
		ok = dist_matches(d, &ss);
		xl_specset_release(&ss);
		if (!ok) {
			if (why)
				*why = xl_asprintf("%s %s does not satisfy %s", key, d->version,
						   json_string_value(v));
			return false;
		}
	}
	return true;
}

static bool bundle_matches(const struct xl_pyenv *env, json_t *b)
{
	const char *py = json_string_value(json_object_get(b, "python"));

	if (py) {
		struct xl_specset ss;
		struct xl_version v;
		char *e = NULL;
		bool ok = false;

		if (xl_specset_parse(py, strlen(py), &ss, &e) < 0) {
			free(e);
			return false;
		}
		if (xl_version_parse(env->version, strlen(env->version), &v) == 0) {
			ok = xl_specset_contains(&ss, &v, env->version);
			xl_version_release(&v);
		}
		xl_specset_release(&ss);
		if (!ok)
			return false;
	}
	return env_satisfies(env, json_object_get(b, "packages"), NULL);
}

/* The bundles of the matrix the environment matches, most specific first. */
static json_t *matched_bundles(const struct xl_pyenv *env, json_t *matrix)
{
	json_t *out = json_array(), *b;
	size_t i;

	json_array_foreach(json_object_get(matrix, "bundles"), i, b) {
		size_t n = json_object_size(json_object_get(b, "packages")), k;

		if (!bundle_matches(env, b))
			continue;
		for (k = 0; k < json_array_size(out); k++)
			if (json_object_size(json_object_get(json_array_get(out, k), "packages")) < n)
				break;
		json_array_insert(out, k, b);
	}
	return out;
}

static json_t *strv_json(const struct xl_strv *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

/* "DIR, DIR, ..." of the directories read, "no directory" when none. */
static char *dirs_text(const struct xl_pyenv *env)
{
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; i < env->sitedirs.n; i++)
		xl_buf_addf(&b, "%s%s", i ? ", " : "", env->sitedirs.v[i]);
	if (!env->sitedirs.n)
		xl_buf_adds(&b, "no directory");
	return xl_buf_detach(&b);
}

/* A check that read nothing of the lane passes nothing: the number of
 * lane packages, and when none, the reason that says where it looked. */
static size_t empty_reason(struct checker *c)
{
	const struct xl_pyenv *env = c->env;
	size_t lane = 0;
	char *dirs;

	for (size_t i = 0; i < env->ndists; i++)
		lane += xl_bundle_is_lane(env->dists[i].key);
	if (lane)
		return lane;
	dirs = dirs_text(env);
	if (!env->ndists)
		reason(c, "empty", XL_SEV_ERROR, json_array(),
		       "no installed package was found; python '%s' reads %s", env->python, dirs);
	else
		reason(c, "empty", XL_SEV_ERROR, json_array(),
		       "none of the %zu installed packages is of the ML lane (torch, torch_xla, jax, "
		       "jaxlib, libtpu, nvidia-*, numpy, ...); python '%s' reads %s", env->ndists,
		       env->python, dirs);
	free(dirs);
	return 0;
}

json_t *xl_bundle_check(const struct xl_pyenv *env, json_t *matrix,
			const struct xl_bundle_host *host, int *verdict_exit)
{
	struct checker c;
	json_t *doc = json_object(), *matched, *best, *feats = json_array(), *f, *names;
	const char *status = NULL, *verdict;
	size_t i, lane;

	memset(&c, 0, sizeof(c));
	c.env = env;
	c.reasons = json_array();
	xl_pyenv_marker_env(env, &c.menv);
	matched = matched_bundles(env, matrix);
	best = json_array_get(matched, 0);
	if (best) {
		json_t *ki;

		status = json_string_value(json_object_get(best, "status"));
		c.waivers = json_array();
		json_array_foreach(json_object_get(best, "known_issues"), i, ki) {
			json_t *w = json_object_get(ki, "waives");

			if (w)
				json_array_append_new(c.waivers, json_pack("{s:O,s:O,s:O}", "rule",
									   json_object_get(w, "rule"),
									   "package",
									   json_object_get(w, "package"),
									   "id", json_object_get(ki, "id")));
		}
	}
	for (i = 0; i < env->broken.n; i++)
		reason(&c, "metadata", XL_SEV_WARNING, json_array(), "unreadable metadata: %s",
		       env->broken.v[i]);
	lane = empty_reason(&c);
	rule_requires(&c);
	rule_implied_extras(&c);
	rule_lockstep(&c);
	rule_cuda_floor(&c, host);
	if (best) {
		json_t *ki, *pk = json_array();
		const char *key;
		json_t *v;

		json_object_foreach(json_object_get(best, "packages"), key, v)
			json_array_append_new(pk, pk1(xl_pyenv_find(env, key)));
		reason(&c, "matrix", strcmp(status, "broken") == 0 ? XL_SEV_ERROR : XL_SEV_NOTE, pk,
		       "matches bundle %s (%s)%s%s",
		       json_string_value(json_object_get(best, "name")), status,
		       strcmp(status, "broken") == 0 ? ": " : "",
		       strcmp(status, "broken") == 0 ?
		       json_string_value(json_object_get(best, "description")) : "");
		json_array_foreach(json_object_get(best, "known_issues"), i, ki) {
			json_t *w = json_object_get(ki, "workaround");

			reason(&c, "known-issue", strcmp(status, "broken") == 0 ? XL_SEV_ERROR : XL_SEV_WARNING,
			       json_array(), "%s: %s; workaround (%s): %s",
			       json_string_value(json_object_get(ki, "id")),
			       json_string_value(json_object_get(ki, "summary")),
			       json_string_value(json_object_get(w, "policy")),
			       json_string_value(json_object_get(w, "detail")));
		}
	} else {
		reason(&c, "matrix", XL_SEV_NOTE, json_array(), "no bundle of the matrix matches");
	}
	json_array_foreach(json_object_get(matrix, "features"), i, f) {
		char *why = NULL;
		bool ok = env_satisfies(env, json_object_get(f, "requires"), &why);
		json_t *o = json_pack("{s:O,s:b,s:O}", "name", json_object_get(f, "name"),
				      "available", ok, "requires", json_object_get(f, "requires"));

		json_object_set_new(o, "why", why ? json_string(why) : json_null());
		json_object_set(o, "preconditions", json_object_get(f, "preconditions") ?
				json_object_get(f, "preconditions") : json_null());
		free(why);
		json_array_append_new(feats, o);
	}
	if (!lane)
		verdict = "empty";
	else if (c.nerr)
		verdict = "incompatible";
	else if (status && strcmp(status, "known-issues") == 0)
		verdict = "known-issues";
	else if (status && strcmp(status, "validated") == 0)
		verdict = "validated";
	else
		verdict = "compatible";
	*verdict_exit = !lane ? XL_EX_EMPTY : c.nerr ? XL_EX_FAIL : 0;
	names = json_array();
	json_array_foreach(matched, i, f)
		json_array_append(names, json_object_get(f, "name"));
	json_object_set_new(doc, "verdict", json_string(verdict));
	json_object_set_new(doc, "bundle", best ? json_incref(json_object_get(best, "name")) : json_null());
	json_object_set_new(doc, "status", status ? json_string(status) : json_null());
	json_object_set_new(doc, "matched", names);
	json_object_set_new(doc, "errors", json_integer(c.nerr));
	json_object_set_new(doc, "warnings", json_integer(c.nwarn));
	json_object_set_new(doc, "reasons", c.reasons);
	json_object_set_new(doc, "features", feats);
	json_object_set_new(doc, "installed_count", json_integer((json_int_t)env->ndists));
	json_object_set_new(doc, "lane_count", json_integer((json_int_t)lane));
	json_object_set_new(doc, "site_dirs", strv_json(&env->sitedirs));
	json_decref(c.waivers);
	json_decref(matched);
	return doc;
}

/* ---- services for the launcher ---------------------------------------------------- */

int xl_bundle_gate(const char *python, char *const *envp, const struct xl_strv *names, json_t **known_bad,
		   char **why)
{
	struct xl_pyenv env;
	struct xl_bundle_host host;
	json_t *matrix = NULL, *rep, *b, *matched, *f;
	int r, vexit;
	size_t i, j;

	*why = NULL;
	*known_bad = NULL;
	if ((r = xl_bundle_matrix_load(NULL, &matrix))) {
		*why = xl_strdup("the bundle matrix cannot be read");
		return r;
	}
	for (size_t k = 0; k < names->n; k++) {
		bool known = false;

		json_array_foreach(json_object_get(matrix, "bundles"), i, b)
			known = known || strcmp(json_string_value(json_object_get(b, "name")),
						names->v[k]) == 0;
		if (!known) {
			*why = xl_asprintf("bundle '%s' is not in the bundle matrix", names->v[k]);
			json_decref(matrix);
			return XL_EX_DATAERR;
		}
	}
	if ((r = xl_pyenv_open_env(python, envp, 0, &env, NULL))) {
		*why = xl_strdup("no Python environment to check");
		json_decref(matrix);
		return r;
	}
	memset(&host, 0, sizeof(host));
	host.cuda_driver_api = -1;
	if (xl_pyenv_find(&env, "nvidia-cuda-runtime-cu12") || xl_pyenv_find(&env, "nvidia-cuda-runtime") ||
	    xl_pyenv_find(&env, "nvidia-cuda-runtime-cu13")) {
		xl_bundle_host_release(&host);
		xl_bundle_host_read(&host);
	}
	rep = xl_bundle_check(&env, matrix, &host, &vexit);
	r = XL_EX_NOPERM;
	json_array_foreach(json_object_get(rep, "matched"), i, b) {
		if (xl_strv_contains(names, json_string_value(b)) && vexit == 0) {
			r = 0;
			break;
		}
	}
	if (r && vexit == XL_EX_EMPTY) {
		struct xl_buf m = XL_BUF_INIT;
		json_t *x;

		/* nothing read is nothing matched, said as such */
		xl_buf_adds(&m, "the installed bundle is empty");
		json_array_foreach(json_object_get(rep, "reasons"), i, x)
			if (strcmp(json_string_value(json_object_get(x, "rule")), "empty") == 0)
				xl_buf_addf(&m, ": %s", json_string_value(json_object_get(x, "message")));
		xl_buf_adds(&m, "; it is not one of");
		for (size_t k = 0; k < names->n; k++)
			xl_buf_addf(&m, "%s %s", k ? "," : "", names->v[k]);
		xl_buf_addf(&m, " (is the job's environment active? the interpreter is taken from %s)",
			    strcmp(env.source, "VIRTUAL_ENV") == 0 ? "$VIRTUAL_ENV" :
			    strcmp(env.source, "PATH") == 0 ? "python3 on PATH" : "--python");
		*why = xl_buf_detach(&m);
	} else if (r) {
		struct xl_buf m = XL_BUF_INIT;
		json_t *x;

		xl_buf_addf(&m, "the installed bundle (verdict %s, matching %s) is not one of",
			    json_string_value(json_object_get(rep, "verdict")),
			    json_array_size(json_object_get(rep, "matched")) ?
			    json_string_value(json_object_get(rep, "bundle")) : "no bundle of the matrix");
		for (size_t k = 0; k < names->n; k++)
			xl_buf_addf(&m, "%s %s", k ? "," : "", names->v[k]);
		json_array_foreach(json_object_get(rep, "reasons"), i, x)
			if (strcmp(json_string_value(json_object_get(x, "severity")),
				   xl_severity_name(XL_SEV_ERROR)) == 0)
				xl_buf_addf(&m, "; %s: %s", json_string_value(json_object_get(x, "rule")),
					    json_string_value(json_object_get(x, "message")));
		*why = xl_buf_detach(&m);
	} else {
		/* the flags recorded as bad on the bundles it matches */
		*known_bad = json_array();
		matched = matched_bundles(&env, matrix);
		json_array_foreach(matched, i, b) {
			json_array_foreach(json_object_get(b, "known_bad"), j, f) {
				json_t *o = json_deep_copy(f);

				json_object_set(o, "bundle", json_object_get(b, "name"));
				json_array_append_new(*known_bad, o);
			}
		}
		json_decref(matched);
	}
	json_decref(rep);
	json_decref(matrix);
	xl_bundle_host_release(&host);
	xl_pyenv_release(&env);
	return r;
}
