/*
 * pyenv.c - find a Python environment and read what is installed in it.
 *
 * The interpreter is asked once for its version, platform facts and the
 * directories it imports from.  It starts with site processing off (-S, so
 * neither a .pth file nor sitecustomize runs), then calls the steps of its
 * own site.main() that build sys.path: the venv found from pyvenv.cfg
 * beside or above the executable, the user site, and the site directories
 * of every prefix, each by that interpreter's own site module.  A venv is
 * therefore seen as the interpreter sees it whatever patches its site and
 * sysconfig carry (Debian's and Ubuntu's dist-packages and posix_local,
 * pyenv, uv, python.org builds alike).  Of each .pth file only the path
 * lines count: the lines that import are not run (site's exec is replaced
 * by one that does nothing), and sitecustomize and usercustomize are never
 * imported.  Everything else is read from the file system: the METADATA /
 * PKG-INFO of every distribution in those directories, in sys.path order,
 * the first of a name winning as it does for importlib.metadata.
 */
#include "bundle/bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#define PY_TIMEOUT_MS 30000

/* Run as `python -S -c`.  The working directory that -c puts first on
 * sys.path is dropped: a job's script puts its own directory there.  What
 * the site steps print (a .pth line that fails) is caught and reported as
 * warning lines; an exception in them is reported as error and the path is
 * read as far as it got. */
static const char py_script[] =
	"import sys,os,site\n"
	"o=[]\n"
	"def a(k,v):o.append(k+'='+str(v))\n"
	"if sys.path and sys.path[0]=='' and not getattr(sys.flags,'safe_path',0):del sys.path[0]\n"
	"e=sys.stderr\n"
	"try:\n"
	" import io;sys.stderr=io.StringIO()\n"
	" site.exec=lambda *x:None\n"
	" k=site.removeduppaths()\n"
	" k=site.venv(k)\n"
	" if site.ENABLE_USER_SITE is None:site.ENABLE_USER_SITE=site.check_enableusersite()\n"
	" k=site.addusersitepackages(k)\n"
	" site.addsitepackages(k)\n"
	"except Exception as x:\n"
	" a('error','%s: %s'%(type(x).__name__,x))\n"
	"finally:\n"
	" w,sys.stderr=sys.stderr,e\n"
	" [a('warning',l) for l in (w.getvalue().splitlines() if hasattr(w,'getvalue') else []) if l.strip()]\n"
	"import sysconfig,platform\n"
	"a('version',platform.python_version())\n"
	"a('implementation',sys.implementation.name)\n"
	"i=sys.implementation.version\n"
	"a('implementation_version','%d.%d.%d'%tuple(i[:3])+('' if i[3]=='final' else "
	"{'alpha':'a','beta':'b','candidate':'rc'}[i[3]]+str(i[4])))\n"
	"a('sys_platform',sys.platform)\n"
	"a('platform_system',platform.system())\n"
	"a('platform_machine',platform.machine())\n"
	"a('platform_release',platform.release())\n"
	"a('platform_version',platform.version())\n"
	"a('python_impl',platform.python_implementation())\n"
	"a('os_name',os.name)\n"
	"a('prefix',sys.prefix)\n"
	"a('base_prefix',sys.base_prefix)\n"
	"a('executable',sys.executable)\n"
	"d=os.path.dirname(os.path.abspath(sys.executable))\n"
	"for c in (d,os.path.dirname(d)):\n"
	" if os.path.isfile(os.path.join(c,'pyvenv.cfg')):\n"
	"  a('venv',os.path.join(c,'pyvenv.cfg'))\n"
	"  a('system_site',int(any(x!=sys.prefix for x in site.PREFIXES)));break\n"
	"p=sysconfig.get_paths(vars={'base':sys.prefix,'platbase':sys.exec_prefix})\n"
	"a('purelib',p['purelib'])\n"
	"a('platlib',p['platlib'])\n"
	"[a('path',x) for x in sys.path]\n"
	"sys.stdout.write('\\0'.join(o))\n";

/* *path as what will run: a pyenv shim followed to its interpreter. */
static void follow_shim(char **path, char *const *envp)
{
	char *target = xl_pyenv_shim_target(*path, envp);

	if (target) {
		free(*path);
		*path = target;
	}
}

int xl_python_find(const char *python, char *const *envp, char **path, const char **source,
		   char **why)
{
	const char *venv = xl_env_get(envp, "VIRTUAL_ENV");

	*path = NULL;
	*why = NULL;
	if (python && *python) {
		*source = "--python";
		/* absolute against the working directory, links kept: a venv's
		 * bin/python is a link whose place makes it the venv's */
		if (strchr(python, '/') && xl_is_directory(python)) {
			*why = xl_asprintf("python '%s': not a Python interpreter (a directory)", python);
			return XL_EX_NOINPUT;
		}
		*path = xl_find_program_in(python, envp);
		if (!*path || access(*path, X_OK) != 0) {
			free(*path);
			*path = NULL;
			*why = xl_asprintf("python '%s': not found or not executable", python);
			return XL_EX_NOINPUT;
		}
	} else if (venv && *venv) {
		char *rel = xl_asprintf("%s/bin/python", venv);

		*source = "VIRTUAL_ENV";
		*path = xl_path_absolute(rel);
		free(rel);
		if (access(*path, X_OK) != 0) {
			free(*path);
			*path = NULL;
			*why = xl_asprintf("VIRTUAL_ENV '%s': no bin/python in it", venv);
			return XL_EX_NOINPUT;
		}
	} else {
		*source = "PATH";
		*path = xl_find_program_in("python3", envp);
		if (!*path) {
			*why = xl_strdup("python3: not found on PATH (use --python)");
			return XL_EX_NOINPUT;
		}
	}
	follow_shim(path, envp);
	return 0;
}

/* Runs python -S -c script; returns its stdout (caller frees) or NULL. */
static char *ask_python(const char *python, char *const *envp, size_t *len, char **why)
{
	char *const args[] = { (char *)python, "-S", "-c", (char *)py_script, NULL };
	int out[2];
	pid_t pid;
	struct xl_buf b = XL_BUF_INIT;
	int status;
	double t0 = xl_mono();

	if (pipe(out) < 0) {
		*why = xl_asprintf("pipe: %s", strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		*why = xl_asprintf("fork: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		return NULL;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(out[1], 1);
		if (devnull >= 0)
			dup2(devnull, 0);
		close(out[0]);
		close(out[1]);
		/* the environment the job gets: PYTHONPATH, PYTHONHOME and the
		 * user site's variables change what its site finds */
		execve(python, args, envp ? envp : environ);
		_exit(127);
	}
	close(out[1]);
	for (;;) {
		struct pollfd pf = { out[0], POLLIN, 0 };
		int left = PY_TIMEOUT_MS - (int)((xl_mono() - t0) * 1000);
		char chunk[4096];
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, left) == 0) {
			kill(pid, SIGKILL);
			*why = xl_strdup("did not answer within 30 s");
			break;
		}
		n = read(out[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		xl_buf_add(&b, chunk, (size_t)n);
	}
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (*why) {
		xl_buf_release(&b);
		return NULL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*why = WIFEXITED(status) ? WEXITSTATUS(status) == 127 ?
			xl_strdup("cannot be executed") :
			xl_asprintf("exited with status %d", WEXITSTATUS(status)) :
			xl_asprintf("killed by signal %d", WTERMSIG(status));
		xl_buf_release(&b);
		return NULL;
	}
	*len = b.len;
	if (!b.buf)
		xl_buf_adds(&b, "");
	return xl_buf_detach(&b);
}

void xl_pyenv_release(struct xl_pyenv *env)
{
	char **fields[] = {
		&env->python, &env->source, &env->version, &env->version_short, &env->prefix,
		&env->base_prefix, &env->executable, &env->sys_platform, &env->platform_system,
		&env->platform_machine, &env->platform_release, &env->platform_version,
		&env->implementation, &env->implementation_version, &env->python_impl, &env->os_name,
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		free(*fields[i]);
	xl_strv_release(&env->sitedirs);
	xl_strv_release(&env->libdirs);
	for (size_t i = 0; i < env->ndists; i++)
		xl_dist_release(&env->dists[i]);
	free(env->dists);
	xl_strv_release(&env->broken);
	memset(env, 0, sizeof(*env));
}

const struct xl_dist *xl_pyenv_find(const struct xl_pyenv *env, const char *key)
{
	for (size_t i = 0; i < env->ndists; i++)
		if (strcmp(env->dists[i].key, key) == 0)
			return &env->dists[i];
	return NULL;
}

static void read_dist(struct xl_pyenv *env, const char *file)
{
	struct xl_dist d;
	size_t len;
	char *data = xl_read_file(file, &len, 16u << 20);

	if (!data) {
		xl_strv_push_owned(&env->broken, xl_asprintf("%s: %s", file, strerror(errno)));
		return;
	}
	if (xl_metadata_parse(data, len, &d) < 0) {
		xl_strv_push_owned(&env->broken, xl_asprintf("%s: %s", file,
							     d.problems.v[d.problems.n - 1]));
		xl_dist_release(&d);
		free(data);
		return;
	}
	free(data);
	d.path = xl_strdup(file);
	for (size_t i = 0; i < d.problems.n; i++)
		xl_strv_push_owned(&env->broken, xl_asprintf("%s: %s", file, d.problems.v[i]));
	if (xl_pyenv_find(env, d.key)) {
		/* shadowed by an earlier directory, as the import system sees it */
		xl_dist_release(&d);
		return;
	}
	env->dists = xl_realloc(env->dists, (env->ndists + 1) * sizeof(*env->dists));
	env->dists[env->ndists++] = d;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* One *.dist-info or *.egg-info entry (a directory, or an egg-info file). */
static void read_info(struct xl_pyenv *env, const char *p)
{
	char *m;

	if (!xl_is_directory(p)) {
		read_dist(env, p);
		return;
	}
	m = xl_asprintf("%s/%s", p, ends_with_nocase(p, ".dist-info") ? "METADATA" : "PKG-INFO");
	read_dist(env, m);
	free(m);
}

/* The distributions one directory of the path holds, as importlib.metadata
 * finds them: every child named *.dist-info or *.egg-info (any case), and
 * for a directory named *.egg its own EGG-INFO. */
static void scan_dir(struct xl_pyenv *env, const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct xl_strv names = XL_STRV_INIT, eggs = XL_STRV_INIT;
	bool egg_dir = ends_with_nocase(dir, ".egg");

	if (!dp)
		return;
	while ((de = readdir(dp))) {
		if (ends_with_nocase(de->d_name, ".dist-info") ||
		    ends_with_nocase(de->d_name, ".egg-info"))
			xl_strv_push(&names, de->d_name);
		else if (egg_dir && strcasecmp(de->d_name, "EGG-INFO") == 0)
			xl_strv_push(&eggs, de->d_name);
	}
	closedir(dp);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < eggs.n; i++)
		xl_strv_push(&names, eggs.v[i]);
	for (size_t i = 0; i < names.n; i++) {
		char *p = xl_asprintf("%s/%s", dir, names.v[i]);

		read_info(env, p);
		free(p);
	}
	xl_strv_release(&names);
	xl_strv_release(&eggs);
}

void xl_pyenv_scan_dirs(struct xl_pyenv *env, const struct xl_strv *dirs)
{
	for (size_t i = 0; i < dirs->n; i++) {
		if (!xl_strv_contains(&env->sitedirs, dirs->v[i]))
			xl_strv_push(&env->sitedirs, dirs->v[i]);
	}
	for (size_t i = 0; i < env->sitedirs.n; i++)
		scan_dir(env, env->sitedirs.v[i]);
}

/* Says why the environment could not be read: printed unless quiet, and
 * handed to the caller through whyp when it asks. */
static void failed(unsigned flags, char **whyp, char *why)
{
	if (!(flags & XL_PYENV_QUIET))
		xl_error("%s", why);
	if (whyp)
		*whyp = why;
	else
		free(why);
}

int xl_pyenv_open(const char *python, unsigned flags, struct xl_pyenv *env)
{
	return xl_pyenv_open_env(python, NULL, flags, env, NULL);
}

int xl_pyenv_open_env(const char *python, char *const *envp, unsigned flags, struct xl_pyenv *env,
		      char **whyp)
{
	struct xl_strv dirs = XL_STRV_INIT;
	const char *source;
	char *why = NULL, *out;
	size_t len = 0;
	int rc;

	memset(env, 0, sizeof(*env));
	if (whyp)
		*whyp = NULL;
	if ((rc = xl_python_find(python, envp, &env->python, &source, &why))) {
		failed(flags, whyp, why);
		return rc;
	}
	env->source = xl_strdup(source);
	out = ask_python(env->python, envp, &len, &why);
	if (!out) {
		/* exit 127 from the child: exec failed, so it is no program at all */
		failed(flags, whyp, xl_asprintf(strcmp(why, "cannot be executed") == 0 ?
						"python '%s': not a Python interpreter (%s)" :
						"python '%s': could not be asked for its paths (%s)",
						env->python, why));
		free(why);
		xl_pyenv_release(env);
		return XL_EX_UNAVAILABLE;
	}
	for (const char *p = out; p < out + len;) {
		size_t n = strlen(p);
		const char *eq = strchr(p, '=');

		if (eq) {
			size_t kl = (size_t)(eq - p);
			const char *v = eq + 1;
			struct { const char *k; char **dst; } one[] = {
				{ "version", &env->version }, { "implementation", &env->implementation },
				{ "implementation_version", &env->implementation_version },
				{ "sys_platform", &env->sys_platform },
				{ "platform_system", &env->platform_system },
				{ "platform_machine", &env->platform_machine },
				{ "platform_release", &env->platform_release },
				{ "platform_version", &env->platform_version },
				{ "python_impl", &env->python_impl }, { "os_name", &env->os_name },
				{ "prefix", &env->prefix }, { "base_prefix", &env->base_prefix },
				{ "executable", &env->executable },
			};
			bool done = false;

			for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
				if (strlen(one[i].k) == kl && strncmp(p, one[i].k, kl) == 0) {
					free(*one[i].dst);
					*one[i].dst = xl_strdup(v);
					done = true;
				}
			}
			if (done) {
				/* one of the facts */
			} else if (strncmp(p, "path=", 5) == 0) {
				/* sys.path as site would leave it, in order; zip
				 * files and missing entries hold nothing to read */
				if (xl_is_directory(v) && !xl_strv_contains(&dirs, v))
					xl_strv_push(&dirs, v);
			} else if (strncmp(p, "purelib=", 8) == 0 || strncmp(p, "platlib=", 8) == 0) {
				if (!xl_strv_contains(&env->libdirs, v))
					xl_strv_push(&env->libdirs, v);
			} else if (strncmp(p, "venv=", 5) == 0) {
				env->venv = true;
			} else if (strncmp(p, "system_site=", 12) == 0) {
				env->system_site = strcmp(v, "1") == 0;
			} else if (strncmp(p, "error=", 6) == 0) {
				if (!(flags & XL_PYENV_QUIET))
					xl_warn("python '%s': its site directories could not all be "
						"found: %s", env->python, v);
			} else if (strncmp(p, "warning=", 8) == 0) {
				if (!(flags & XL_PYENV_QUIET))
					xl_warn("python '%s': site: %s", env->python, v);
			}
		}
		p += n + 1;
	}
	free(out);
	if (!env->version || !env->prefix) {
		failed(flags, whyp, xl_asprintf("python '%s': not a Python interpreter (it did not report "
						"its version and prefix)", env->python));
		xl_strv_release(&dirs);
		xl_pyenv_release(env);
		return XL_EX_UNAVAILABLE;
	}
	{
		const char *d1 = strchr(env->version, '.');
		const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;

		env->version_short = d2 ? xl_strndup(env->version, (size_t)(d2 - env->version)) :
					  xl_strdup(env->version);
	}
	if (flags & XL_PYENV_PATHS) {
		for (size_t i = 0; i < dirs.n; i++)
			xl_strv_push(&env->sitedirs, dirs.v[i]);
	} else {
		xl_pyenv_scan_dirs(env, &dirs);
	}
	xl_strv_release(&dirs);
	return 0;
}

void xl_pyenv_marker_env(const struct xl_pyenv *env, struct xl_marker_env *m)
{
	memset(m, 0, sizeof(*m));
	m->python_version = env->version_short;
	m->python_full_version = env->version;
	m->sys_platform = env->sys_platform;
	m->platform_system = env->platform_system;
	m->platform_machine = env->platform_machine;
	m->platform_release = env->platform_release;
	m->platform_version = env->platform_version;
	m->platform_python_implementation = env->python_impl;
	m->implementation_name = env->implementation;
	m->implementation_version = env->implementation_version;
	m->os_name = env->os_name;
}
