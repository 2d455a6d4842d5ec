/* summary.c - the software bundle part of a launch signature, cheaply.
 *
 * The bundle is the one of the interpreter that runs the job (launcher/
 * run/job.c finds it from argv).  Reading every package's metadata and asking
 * the interpreter for its paths costs tens of milliseconds; a launch pays
 * that only when that Python environment changed.  The summaries are kept
 * in $XDG_STATE_HOME/xlaunch/bundle-cache.json, one per interpreter path,
 * together with the interpreter's modification time and those of its
 * site-packages directories (pip touches them on every install and
 * removal), and reused while those are the same.  The cache names its
 * format: summaries read by an older way of finding the site directories
 * (which missed a venv of Debian's Python) are read again.
 */
#include "bundle/bundle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 2: the site directories as the interpreter's own site steps find them */
#define CACHE_FORMAT 2

static json_t *mtime_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return json_null();
	return json_sprintf("%lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* Whether the cache entry of python still describes it. */
static bool cache_fresh(json_t *cache, const char *python)
{
	json_t *dirs = json_object_get(cache, "dirs");
	const char *d;
	json_t *m;

	if (!json_is_object(dirs) || !json_object_size(dirs))
		return false;
	{
		json_t *pm = mtime_of(python);
		bool same = json_equal(pm, json_object_get(cache, "python_mtime"));

		json_decref(pm);
		if (!same)
			return false;
	}
	json_object_foreach(dirs, d, m) {
		json_t *now = mtime_of(d);
		bool same = json_equal(now, m);

		json_decref(now);
		if (!same)
			return false;
	}
	return true;
}

static json_t *bundle_summary(const char *python);

static bool cache_readonly;

void xl_bundle_cache_readonly(void)
{
	cache_readonly = true;
}

json_t *xl_bundle_summary(const char *python)
{
	/* one launch asks once per candidate; the answer does not change */
	static json_t *once;

	if (!python)
		return json_object();
	if (!once)
		once = json_object();
	if (!json_object_get(once, python))
		json_object_set_new(once, python, bundle_summary(python));
	return json_incref(json_object_get(once, python));
}

static json_t *bundle_summary(const char *python)
{
	char *state = xl_state_dir();
	char *cpath = xl_asprintf("%s/bundle-cache.json", state);
	json_t *cache, *entries, *entry, *summary = NULL;
	struct xl_pyenv env;

	cache = json_load_file(cpath, 0, NULL);
	if (json_integer_value(json_object_get(cache, "format")) != CACHE_FORMAT) {
		json_decref(cache);
		cache = NULL;
	}
	entries = json_object_get(cache, "interpreters");
	entry = json_object_get(entries, python);
	if (entry && cache_fresh(entry, python)) {
		summary = json_incref(json_object_get(entry, "summary"));
		json_decref(cache);
		free(state);
		free(cpath);
		return summary ? summary : json_object();
	}
	if (!json_is_object(entries)) {
		json_decref(cache);
		cache = json_pack("{s:i}", "format", CACHE_FORMAT);
		entries = json_object();
		json_object_set_new(cache, "interpreters", entries);
	}
	/* the bundle is part of the signature, not a reason to fail a launch */
	if (xl_pyenv_open(python, XL_PYENV_QUIET, &env) == 0) {
		json_t *pkgs = json_object(), *dirs = json_object();

		for (size_t i = 0; i < env.ndists; i++)
			if (xl_bundle_is_lane(env.dists[i].key))
				json_object_set_new(pkgs, env.dists[i].key, json_string(env.dists[i].version));
		summary = json_pack("{s:s,s:o}", "python", env.version ? env.version : "", "packages", pkgs);
		for (size_t i = 0; i < env.sitedirs.n; i++)
			json_object_set_new(dirs, env.sitedirs.v[i], mtime_of(env.sitedirs.v[i]));
		json_object_set_new(entries, python, json_pack("{s:o,s:o,s:O}", "python_mtime",
							       mtime_of(python), "dirs", dirs,
							       "summary", summary));
		if (!cache_readonly && xl_mkdirs(state, 0700) == 0)
			xl_write_json_atomic(cpath, cache, false);
	}
	json_decref(cache);
	xl_pyenv_release(&env);
	free(state);
	free(cpath);
	return summary ? summary : json_object();
}
