/* summary.c - the software bundle part of a launch signature, cheaply.
 *
 * The bundle is the one of the interpreter that runs the job (bundle's
 * xl_runtime_detect finds it from argv).  Reading every package's metadata
 * and asking the interpreter for its paths costs tens of milliseconds; a
 * launch pays that only when that Python environment changed.  The
 * summaries are kept in $XDG_STATE_HOME/xlaunch/bundle-cache, one block per
 * interpreter path and values of the variables that change its site
 * directories (PYTHONPATH, PYTHONHOME, PYTHONNOUSERSITE, PYTHONUSERBASE as
 * the job gets them), together with the interpreter's modification time
 * and those of its site directories (pip touches them on every install and
 * removal), and reused while those are the same.  An interpreter that is
 * not an ELF file (a wrapper script, whose target may depend on anything)
 * is never cached.  The cache names its format: summaries of an older one
 * (keyed by the path alone, or read by an older way of finding the site
 * directories, which missed a venv of Debian's Python) are read again.
 *
 * Every launch reads it (the release the job will load comes from it), so
 * it is lines of tab-separated words, found with one memmem() and read
 * without a JSON parser (jansson spends about 150 instructions a byte):
 *
 *	xlaunch-bundle-cache<TAB>4
 *	python<TAB>PATH<TAB>PYTHONPATH<TAB>PYTHONHOME<TAB>NOUSERSITE<TAB>PYTHONUSERBASE<TAB>MTIME
 *	dir<TAB>PATH<TAB>MTIME         (one per site directory)
 *	version<TAB>3.11.7
 *	package<TAB>NAME<TAB>VERSION   (the lane packages)
 *	end
 *
 * ("" for an unset or empty variable; NOUSERSITE "1" when PYTHONNOUSERSITE
 * is set to anything).  A path or value holding a tab or a newline is not
 * cached (read every time).
 */
#include "bundle/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 4: the site variables in the key; 3: lines instead of JSON; 2: the site
 * directories as the interpreter's own site steps find them */
#define CACHE_HEAD "xlaunch-bundle-cache\t4\n"

/* path's modification time as the cache writes it, into buf; "-" when it
 * cannot be read. */
static const char *mtime_str(const char *path, char *buf, size_t n)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return "-";
	snprintf(buf, n, "%lld.%09ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return buf;
}

/* Whether path's modification time is the one text says (as mtime_str
 * writes it), without formatting it. */
static bool same_mtime(const char *path, const char *text)
{
	struct stat st;
	char *end;
	long long sec;
	long nsec;

	if (stat(path, &st) < 0)
		return strcmp(text, "-") == 0;
	sec = strtoll(text, &end, 10);
	if (*end != '.' || strlen(end + 1) != 9)
		return false;
	nsec = strtol(end + 1, &end, 10);
	return !*end && sec == (long long)st.st_mtim.tv_sec && nsec == st.st_mtim.tv_nsec;
}

static bool cacheable(const char *s)
{
	return !strpbrk(s, "\t\n");
}

/* The next line of [*p, end) without its newline into line (at most n-1
 * bytes; a longer one is cut); false at the end. */
static bool next_line(const char **p, const char *end, char *line, size_t n)
{
	const char *nl;
	size_t len;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	if (len >= n)
		len = n - 1;
	memcpy(line, *p, len);
	line[len] = '\0';
	*p = nl ? nl + 1 : end;
	return true;
}

char *xl_bundle_env_key(char *const *envp)
{
	/* Python ignores an empty value of each; any value of PYTHONNOUSERSITE
	 * turns the user site off */
	const char *pp = xl_env_get(envp, "PYTHONPATH"), *ph = xl_env_get(envp, "PYTHONHOME");
	const char *nus = xl_env_get(envp, "PYTHONNOUSERSITE"), *ub = xl_env_get(envp, "PYTHONUSERBASE");
	char *key = xl_asprintf("%s\t%s\t%s\t%s", pp ? pp : "", ph ? ph : "", nus && *nus ? "1" : "",
				ub ? ub : "");

	if (strchr(key, '\n') || (pp && strchr(pp, '\t')) || (ph && strchr(ph, '\t')) ||
	    (ub && strchr(ub, '\t'))) {
		free(key);
		return NULL;
	}
	return key;
}

json_t *xl_bundle_cache_entry(const char *text, size_t len, const char *python, const char *envkey,
			      bool check)
{
	char *key, line[PATH_MAX + 128];
	const char *p, *end = text + len;
	json_t *pkgs, *summary = NULL;
	bool fresh = true, dirs = false;

	if (!cacheable(python) || !envkey || len < strlen(CACHE_HEAD) ||
	    memcmp(text, CACHE_HEAD, strlen(CACHE_HEAD)) != 0)
		return NULL;
	key = xl_asprintf("\npython\t%s\t%s\t", python, envkey);
	p = memmem(text, len, key, strlen(key));
	if (!p) {
		free(key);
		return NULL;
	}
	p += strlen(key);
	free(key);
	/* the python line's mtime, then the block */
	next_line(&p, end, line, sizeof(line));
	if (check && !same_mtime(python, line))
		return NULL;
	pkgs = json_object();
	summary = json_pack("{s:s,s:O}", "python", "", "packages", pkgs);
	while (fresh && next_line(&p, end, line, sizeof(line)) && strcmp(line, "end") != 0) {
		char *f1 = strchr(line, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL;

		if (!f1) {
			fresh = false;
			break;
		}
		*f1++ = '\0';
		if (f2)
			*f2++ = '\0';
		if (strcmp(line, "dir") == 0 && f2) {
			dirs = true;
			fresh = !check || same_mtime(f1, f2);
		} else if (strcmp(line, "version") == 0) {
			json_object_set_new(summary, "python", json_string(f1));
		} else if (strcmp(line, "package") == 0 && f2) {
			json_object_set_new(pkgs, f1, json_string(f2));
		} else {
			fresh = false;
		}
	}
	json_decref(pkgs);
	if (!fresh || !dirs || !json_is_string(json_object_get(summary, "python"))) {
		json_decref(summary);
		return NULL;
	}
	return summary;
}

/* The block of one interpreter, as the cache holds it; caller frees. */
static char *block_of(const char *python, const char *envkey, const struct xl_pyenv *env,
		      json_t *pkgs)
{
	struct xl_buf b = XL_BUF_INIT;
	char now[64];
	const char *k;
	json_t *v;

	xl_buf_addf(&b, "python\t%s\t%s\t%s\n", python, envkey, mtime_str(python, now, sizeof(now)));
	for (size_t i = 0; i < env->sitedirs.n; i++) {
		if (!cacheable(env->sitedirs.v[i])) {
			xl_buf_release(&b);
			return NULL;
		}
		xl_buf_addf(&b, "dir\t%s\t%s\n", env->sitedirs.v[i],
			    mtime_str(env->sitedirs.v[i], now, sizeof(now)));
	}
	xl_buf_addf(&b, "version\t%s\n", env->version ? env->version : "");
	json_object_foreach(pkgs, k, v)
		if (cacheable(k) && cacheable(json_string_value(v)))
			xl_buf_addf(&b, "package\t%s\t%s\n", k, json_string_value(v));
	xl_buf_adds(&b, "end\n");
	return xl_buf_detach(&b);
}

/* The cache file with the block of python under envkey replaced by (or
 * added as) block: the other blocks of a file of this format kept as they
 * are.  Caller frees. */
static char *with_block(const char *text, size_t len, const char *python, const char *envkey,
			const char *block)
{
	struct xl_buf b = XL_BUF_INIT;
	char *key = xl_asprintf("python\t%s\t%s\t", python, envkey);
	const char *p = text, *end = text + len;

	xl_buf_adds(&b, CACHE_HEAD);
	if (text && len >= strlen(CACHE_HEAD) && memcmp(text, CACHE_HEAD, strlen(CACHE_HEAD)) == 0) {
		p += strlen(CACHE_HEAD);
		while (p < end) {
			const char *stop = memmem(p, (size_t)(end - p), "\nend\n", 5);
			const char *next = stop ? stop + 5 : end;

			if (strncmp(p, key, strlen(key)) != 0 && strncmp(p, "python\t", 7) == 0 && stop)
				xl_buf_add(&b, p, (size_t)(next - p));
			p = next;
		}
	}
	xl_buf_adds(&b, block);
	free(key);
	return xl_buf_detach(&b);
}

/* Writes text to path through a temporary file and rename(). */
static void write_atomic(const char *path, const char *text)
{
	char *tmp = xl_asprintf("%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || xl_write_all(fd, text, strlen(text)) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		xl_debug("cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
}

static json_t *bundle_summary(const char *python, const char *envkey, char *const *envp,
			      char **why);

static bool cache_readonly;

void xl_bundle_cache_readonly(void)
{
	cache_readonly = true;
}

json_t *xl_bundle_summary(const char *python)
{
	json_t *sum = xl_bundle_summary_env(python, NULL, NULL);

	return sum ? sum : json_object();
}

json_t *xl_bundle_summary_env(const char *python, char *const *envp, char **why)
{
	/* one launch asks once per interpreter and environment; the answer
	 * does not change: {"summary"} or {"why"} */
	static json_t *once;
	char *envkey, *memo;
	json_t *got;

	if (why)
		*why = NULL;
	if (!python)
		return json_object();
	if (!once)
		once = json_object();
	envkey = xl_bundle_env_key(envp);
	memo = xl_asprintf("%s\n%s", python, envkey ? envkey : "\n");
	if (!(got = json_object_get(once, memo))) {
		char *w = NULL;
		json_t *sum = bundle_summary(python, envkey, envp, &w);

		got = sum ? json_pack("{s:o}", "summary", sum) : json_pack("{s:s}", "why", w ? w : "");
		json_object_set_new(once, memo, got);
		free(w);
	}
	free(memo);
	free(envkey);
	if (json_object_get(got, "summary"))
		return json_incref(json_object_get(got, "summary"));
	if (why)
		*why = xl_strdup(json_string_value(json_object_get(got, "why")));
	return NULL;
}

static json_t *bundle_summary(const char *python, const char *envkey, char *const *envp, char **why)
{
	char *state = xl_state_dir();
	char *cpath = xl_asprintf("%s/bundle-cache", state);
	json_t *summary = NULL;
	struct xl_pyenv env;
	size_t len = 0;
	char *text = xl_read_file(cpath, &len, 0);

	summary = text ? xl_bundle_cache_entry(text, len, python, envkey, true) : NULL;
	if (summary) {
		free(text);
		free(state);
		free(cpath);
		return summary;
	}
	/* the bundle is part of the signature, not a reason to fail a launch */
	if (xl_pyenv_open_env(python, envp, XL_PYENV_QUIET, &env, why) == 0) {
		json_t *pkgs = json_object();
		char *block;

		for (size_t i = 0; i < env.ndists; i++)
			if (xl_bundle_is_lane(env.dists[i].key))
				json_object_set_new(pkgs, env.dists[i].key, json_string(env.dists[i].version));
		summary = json_pack("{s:s,s:o}", "python", env.version ? env.version : "", "packages", pkgs);
		/* a script in front of the interpreter (a wrapper, a shim
		 * xl_python_find could not follow) may run another one next
		 * time: read again every time */
		block = cacheable(python) && envkey && xl_is_elf(python) ?
			block_of(python, envkey, &env, pkgs) : NULL;
		if (block && !cache_readonly && xl_mkdirs(state, 0700) == 0) {
			char *all = with_block(text, len, python, envkey, block);

			write_atomic(cpath, all);
			free(all);
		}
		free(block);
	}
	xl_pyenv_release(&env);
	free(text);
	free(state);
	free(cpath);
	return summary;
}
