/*
 * probe_pjrt_find.c - where PJRT plugins are, and which PJRT C API version a
 * plugin speaks (read without creating a client).  Used by the probe and by
 * the bundle report.
 */
#include "probe/probe.h"
#include "probe/pjrt_abi.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Adds path once, by its real path (symlinks and ../ resolved). */
static void add_plugin(struct xl_strv *paths, const char *path)
{
	char real[PATH_MAX];

	if (!xl_is_regular_file(path) || !realpath(path, real))
		return;
	if (!xl_strv_contains(paths, real))
		xl_strv_push(paths, real);
}

/* A shared object whose name says it is a PJRT plugin.  In jax_plugins/ (the
 * namespace JAX loads plugins from) "*_plugin.so" counts too. */
static bool plugin_name(const char *name, bool jax_ns)
{
	if (!xl_endswith(name, ".so"))
		return false;
	if (strcmp(name, "libtpu.so") == 0 || strstr(name, "pjrt"))
		return true;
	return jax_ns && xl_endswith(name, "_plugin.so");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir (no dot files). */
static void list_dir(const char *dir, struct xl_strv *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			xl_strv_push(names, e->d_name);
	closedir(d);
	if (names->n)
		qsort(names->v, names->n, sizeof(char *), cmp_str);
}

static void scan_pkg(struct xl_strv *paths, const char *dir, bool jax_ns)
{
	struct xl_strv names = XL_STRV_INIT;

	list_dir(dir, &names);
	for (size_t i = 0; i < names.n; i++) {
		if (plugin_name(names.v[i], jax_ns)) {
			char *p = xl_asprintf("%s/%s", dir, names.v[i]);

			add_plugin(paths, p);
			free(p);
		}
	}
	xl_strv_release(&names);
}

/* Plugins in one site-packages directory: libtpu/libtpu.so, the .so files of
 * jax_plugins/<name>/, and any "*pjrt*.so" one level down. */
static void scan_site(struct xl_strv *paths, const char *site)
{
	struct xl_strv pkgs = XL_STRV_INIT;
	char *ns = xl_asprintf("%s/jax_plugins", site);

	list_dir(ns, &pkgs);
	for (size_t i = 0; i < pkgs.n; i++) {
		char *d = xl_asprintf("%s/%s", ns, pkgs.v[i]);

		if (xl_is_directory(d))
			scan_pkg(paths, d, true);
		free(d);
	}
	xl_strv_release(&pkgs);
	free(ns);

	list_dir(site, &pkgs);
	for (size_t i = 0; i < pkgs.n; i++) {
		char *d;

		if (xl_endswith(pkgs.v[i], ".dist-info") || strcmp(pkgs.v[i], "jax_plugins") == 0)
			continue;
		d = xl_asprintf("%s/%s", site, pkgs.v[i]);
		if (xl_is_directory(d))
			scan_pkg(paths, d, false);
		free(d);
	}
	xl_strv_release(&pkgs);
}

void xl_pjrt_find_plugins(const struct xl_strv *sitedirs, struct xl_strv *paths)
{
	const char *env;

	for (size_t i = 0; sitedirs && i < sitedirs->n; i++)
		scan_site(paths, sitedirs->v[i]);

	env = getenv("PJRT_PLUGIN_LIBRARY_PATH");
	if (env && *env) {
		struct xl_strv items = XL_STRV_INIT;

		xl_strv_split(&items, env, ":");
		for (size_t i = 0; i < items.n; i++) {
			if (xl_is_directory(items.v[i]))
				scan_pkg(paths, items.v[i], true);
			else
				add_plugin(paths, items.v[i]);
		}
		xl_strv_release(&items);
	}
	env = getenv("TPU_LIBRARY_PATH");
	if (env && *env)
		add_plugin(paths, env);
}

/* ---- the API version of a plugin ------------------------------------ */

int xl_pjrt_load(const char *path, const struct xpj_api **api, void **handle, char **err)
{
	xpj_get_api_fn *get;
	const struct xpj_api *a;
	void *h;

	*api = NULL;
	*handle = NULL;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		*err = xl_strdup(e ? e : "dlopen failed");
		return -1;
	}
	*(void **)&get = dlsym(h, "GetPjrtApi");
	if (!get) {
		*err = xl_asprintf("%s: no GetPjrtApi symbol: not a PJRT plugin", path);
		dlclose(h);
		return -1;
	}
	a = get();
	if (!a) {
		*err = xl_asprintf("%s: GetPjrtApi returned no API table", path);
		dlclose(h);
		return -1;
	}
	if (a->struct_size < offsetof(struct xpj_api, version) + sizeof(a->version)) {
		*err = xl_asprintf("%s: the API table is too small (%zu bytes) to hold a version",
				   path, a->struct_size);
		dlclose(h);
		return -1;
	}
	*api = a;
	*handle = h;
	return 0;
}

int xl_pjrt_plugin_api_version(const char *path, int *major, int *minor, char **err)
{
	int pfd[2], status = 0;
	pid_t pid;
	char buf[512];
	size_t len = 0;
	double deadline;
	bool done = false;

	*err = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		*err = xl_asprintf("cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		*err = xl_asprintf("cannot fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		const struct xpj_api *api;
		void *h;
		char *e = NULL;
		char line[512];
		int devnull = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		if (xl_pjrt_load(path, &api, &h, &e) == 0)
			snprintf(line, sizeof(line), "ok %d %d\n", api->version.major,
				 api->version.minor);
		else
			snprintf(line, sizeof(line), "error %s\n", e);
		if (write(pfd[1], line, strlen(line)) < 0)
			_exit(1);
		_exit(0);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	deadline = xl_mono() + 10.0;
	while (!done && len < sizeof(buf) - 1) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		double left = deadline - xl_mono();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			done = true;
		else
			len += (size_t)n;
	}
	close(pfd[0]);
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (sscanf(buf, "ok %d %d", major, minor) == 2)
		return 0;
	if (xl_startswith(buf, "error "))
		*err = xl_strdup(buf + 6);
	else if (!done)
		*err = xl_asprintf("%s: loading the plugin did not finish within 10s", path);
	else if (WIFSIGNALED(status))
		*err = xl_asprintf("%s: loading the plugin crashed (SIG%s)", path,
				   xl_signal_abbrev(WTERMSIG(status)) ? xl_signal_abbrev(WTERMSIG(status)) : "?");
	else
		*err = xl_asprintf("%s: loading the plugin failed", path);
	return -1;
}
