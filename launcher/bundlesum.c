/* bundlesum.c - the software bundle part of a launch signature, cheaply.
 *
 * Reading every package's metadata and asking the interpreter for its paths
 * costs tens of milliseconds; a launch pays that only when the Python
 * environment changed.  The summary is kept in $XDG_STATE_HOME/xlaunch/
 * bundle-cache.json together with the interpreter's path and the
 * modification times of its site-packages directories (pip touches them on
 * every install and removal), and reused while those are the same.  The
 * cache names its format: a summary read by an older way of finding the
 * site directories (which missed a venv of Debian's Python) is read again.
 */
#include "launcher/record.h"
#include "bundle/bundle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 2: the site directories as the interpreter's own site steps find them */
#define CACHE_FORMAT 2

/* The interpreter bundle discovery uses ($VIRTUAL_ENV/bin/python, else
 * python3 on PATH); caller frees; NULL when there is none. */
static char *find_python(void)
{
	const char *source;
	char *path, *why;

	if (xl_python_find(NULL, &path, &source, &why) != 0) {
		free(why);
		return NULL;
	}
	return path;
}

static json_t *mtime_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return json_null();
	return json_sprintf("%lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static bool cache_fresh(json_t *cache, const char *python)
{
	json_t *dirs = json_object_get(cache, "dirs");
	const char *d;
	json_t *m;

	if (json_integer_value(json_object_get(cache, "format")) != CACHE_FORMAT ||
	    !xl_streq(json_string_value(json_object_get(cache, "python")), python) ||
	    !json_is_object(dirs) || !json_object_size(dirs))
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

static json_t *bundle_summary(void);
static bool readonly;

void xl_bundle_summary_readonly(void)
{
	readonly = true;
}

json_t *xl_bundle_summary(void)
{
	/* one launch asks once per candidate; the answer does not change */
	static json_t *once;

	if (!once)
		once = bundle_summary();
	return json_incref(once);
}

static json_t *bundle_summary(void)
{
	char *python = find_python();
	char *state = xl_state_dir();
	char *cpath = xl_asprintf("%s/bundle-cache.json", state);
	json_t *cache, *summary = NULL;
	struct xl_pyenv env;

	if (!python) {
		free(state);
		free(cpath);
		return json_object();
	}
	cache = json_load_file(cpath, 0, NULL);
	if (cache && cache_fresh(cache, python)) {
		summary = json_incref(json_object_get(cache, "summary"));
		json_decref(cache);
		free(python);
		free(state);
		free(cpath);
		return summary ? summary : json_object();
	}
	json_decref(cache);
	/* the bundle is part of the signature, not a reason to fail a launch */
	if (xl_pyenv_open(python, XL_PYENV_QUIET, &env) == 0) {
		json_t *pkgs = json_object(), *dirs = json_object();

		for (size_t i = 0; i < env.ndists; i++)
			if (xl_bundle_is_lane(env.dists[i].key))
				json_object_set_new(pkgs, env.dists[i].key, json_string(env.dists[i].version));
		summary = json_pack("{s:s,s:o}", "python", env.version ? env.version : "", "packages", pkgs);
		for (size_t i = 0; i < env.sitedirs.n; i++)
			json_object_set_new(dirs, env.sitedirs.v[i], mtime_of(env.sitedirs.v[i]));
		cache = json_pack("{s:i,s:s,s:o,s:o,s:O}", "format", CACHE_FORMAT, "python", python,
				  "python_mtime", mtime_of(python), "dirs", dirs, "summary", summary);
		if (!readonly && xl_mkdirs(state, 0700) == 0)
			xl_write_json_atomic(cpath, cache, false);
		json_decref(cache);
	}
	xl_pyenv_release(&env);
	free(python);
	free(state);
	free(cpath);
	return summary ? summary : json_object();
}
