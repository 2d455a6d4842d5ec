/* runtime.c - the release the job will load, found once.
 *
 * The interpreter a command starts (a python argv[0], a script's "#!"),
 * else $VIRTUAL_ENV's, else python3 on PATH, all as the environment the
 * job gets says (a profile may set PATH, VIRTUAL_ENV or PYTHONPATH), a
 * pyenv shim followed to its interpreter; then the versions of the
 * runtimes whose flags xlaunch knows per release, from the bundle summary
 * cache (summary.c): a launch pays a few stat() calls, not a Python start,
 * once that environment has been read.
 */
#include "bundle/bundle.h"

#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool xl_python_name(const char *path)
{
	const char *b = base_name(path);

	if (xl_startswith(b, "pypy"))
		b += 4;
	else if (xl_startswith(b, "python"))
		b += 6;
	else
		return false;
	return strspn(b, "0123456789.t") == strlen(b);
}

char *xl_python_shebang(const char *file, char *const *envp)
{
	char line[512];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *word, *save = NULL, *found = NULL;

	if (fd < 0)
		return NULL;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return NULL;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	word = strtok_r(line + 2, " \t", &save);
	if (word && strcmp(base_name(word), "env") == 0) {
		/* env [-S] [VAR=VALUE...] NAME */
		while ((word = strtok_r(NULL, " \t", &save)) && (word[0] == '-' || strchr(word, '=')))
			;
		if (word && xl_python_name(word))
			found = xl_find_program_in(word, envp);
	} else if (word && xl_python_name(word) && xl_is_regular_file(word)) {
		found = xl_path_absolute(word);
	}
	return found;
}

/* The package keys of the summary (normalized names) behind each field;
 * false, with rt->why, when the interpreter could not be asked. */
static bool read_versions(struct xl_runtime *rt, char *const *envp)
{
	json_t *sum = xl_bundle_summary_env(rt->python, envp, &rt->why);
	json_t *pk = json_object_get(sum, "packages");
	const char *v;

	if (!sum)
		return false;
#define VERSION_OF(field, key) \
	if ((v = json_string_value(json_object_get(pk, key))) != NULL) \
		rt->field = xl_strdup(v)
	VERSION_OF(jaxlib, "jaxlib");
	VERSION_OF(jax, "jax");
	VERSION_OF(torch, "torch");
	VERSION_OF(torch_xla, "torch-xla");
	VERSION_OF(libtpu, "libtpu");
	if (!rt->libtpu)
		VERSION_OF(libtpu, "libtpu-nightly");
#undef VERSION_OF
	json_decref(sum);
	return true;
}

/* TPU_LIBRARY_PATH names the libtpu the job loads, whatever the interpreter
 * has installed: its version is that of the wheel it came from (the
 * dist-info beside its libtpu/ directory), else one xlaunch cannot place
 * (judged with warnings, never refused). */
static void tpu_library_path(struct xl_runtime *rt, char *const *envp)
{
	const char *so = xl_env_get(envp, "TPU_LIBRARY_PATH");
	char *dir, *slash, *pattern;
	glob_t g;

	if (!so || !*so)
		return;
	free(rt->libtpu);
	rt->libtpu = NULL;
	dir = xl_strdup(so);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		slash = strrchr(dir, '/');
	}
	if (slash && strcmp(slash + 1, "libtpu") == 0) {
		*slash = '\0';
		pattern = xl_asprintf("%s/libtpu-*.dist-info", dir);
		if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1) {
			const char *v = strrchr(g.gl_pathv[0], '/') + strlen("/libtpu-");

			rt->libtpu = xl_strndup(v, strlen(v) - strlen(".dist-info"));
		}
		globfree(&g);
		free(pattern);
	}
	if (!rt->libtpu)
		rt->libtpu = xl_asprintf("unknown (TPU_LIBRARY_PATH=%s)", so);
	free(dir);
}

void xl_runtime_detect(char *const *argv, int argc, char *const *envp, struct xl_runtime *rt)
{
	char *prog = argv && argc > 0 ? xl_find_program_in(argv[0], envp) : NULL;

	memset(rt, 0, sizeof(*rt));
	rt->source = "none";
	if (prog && xl_python_name(prog)) {
		rt->python = prog;
		rt->source = "argv[0]";
		prog = NULL;
	} else if (prog && (rt->python = xl_python_shebang(prog, envp)) != NULL) {
		rt->source = "#!";
	} else if (argv && argc > 0 && !prog) {
		/* a command that is not there loads nothing */
		rt->why = xl_asprintf("'%s': not found", argv[0]);
	} else if (xl_python_find(NULL, envp, &rt->python, &rt->source, &rt->why) != 0) {
		rt->source = "none";
	}
	free(prog);
	if (rt->python) {
		/* python3 on PATH may be a pyenv shim (xl_python_find follows
		 * its own; these are argv's and the #! line's) */
		char *target = xl_pyenv_shim_target(rt->python, envp);

		if (target) {
			free(rt->python);
			rt->python = target;
		}
	}
	/* one that cannot be asked (no Python after all) has no release:
	 * judged as when none is found, rt->why saying why */
	if (rt->python)
		read_versions(rt, envp);
	tpu_library_path(rt, envp);
}

int xl_runtime_of_python(const char *python, struct xl_runtime *rt)
{
	int rc;

	memset(rt, 0, sizeof(*rt));
	rc = xl_python_find(python, NULL, &rt->python, &rt->source, &rt->why);
	if (rc) {
		rt->source = "none";
		return rc;
	}
	/* named by the user: a program that is no Python is an error, not an
	 * interpreter without jaxlib */
	if (!read_versions(rt, NULL))
		return XL_EX_NOINPUT;
	tpu_library_path(rt, NULL);
	return 0;
}

/* The packages --release takes, in the order of their fields. */
static const char *const release_keys[] = { "jaxlib", "jax", "torch-xla", "torch", "libtpu" };

static char **release_field(struct xl_runtime *rt, int i)
{
	char **fields[] = { &rt->jaxlib, &rt->jax, &rt->torch_xla, &rt->torch, &rt->libtpu };

	return fields[i];
}

/* One PKG==VERSION into rt; *given: a bit for each package given so far
 * (one named twice is an error; jax and jaxlib, indexes 0 and 1, follow
 * each other unless both are given). */
static int add_release(const char *spec, struct xl_runtime *rt, unsigned *given)
{
	const char *eq = strstr(spec, "==");
	struct xl_version v;
	char *pkg, *key;
	int f = -1;

	if (!eq || eq == spec || !eq[2]) {
		rt->why = xl_asprintf("'%s' is not PKG==VERSION", spec);
		return XL_EX_USAGE;
	}
	pkg = xl_strndup(spec, (size_t)(eq - spec));
	key = xl_pkg_key(pkg);
	for (int i = 0; i < 5; i++)
		if (strcmp(key, release_keys[i]) == 0)
			f = i;
	if (f < 0)
		rt->why = xl_asprintf("'%s' is not a package whose flags xlaunch knows per release "
				      "(jaxlib, jax, torch_xla, torch, libtpu)", pkg);
	else if (*given & (1u << f))
		rt->why = xl_asprintf("%s is given twice (give each package once)", pkg);
	else if (xl_version_parse(eq + 2, strlen(eq + 2), &v) != 0)
		rt->why = xl_asprintf("'%s' is not a version (PEP 440)", eq + 2);
	else {
		xl_version_release(&v);
		*given |= 1u << f;
		free(*release_field(rt, f));
		*release_field(rt, f) = xl_strdup(eq + 2);
		/* jax and jaxlib go in lock step, unless both are given */
		if (f < 2 && !(*given & (1u << (1 - f)))) {
			free(*release_field(rt, 1 - f));
			*release_field(rt, 1 - f) = xl_strdup(eq + 2);
		}
	}
	free(pkg);
	free(key);
	return rt->why ? XL_EX_USAGE : 0;
}

int xl_runtime_of_releases(const char *const *specs, size_t n, struct xl_runtime *rt)
{
	unsigned given = 0;
	int rc = 0;

	memset(rt, 0, sizeof(*rt));
	rt->source = "--release";
	for (size_t i = 0; i < n && !rc; i++)
		rc = add_release(specs[i], rt, &given);
	return rc;
}

int xl_runtime_of_release(const char *spec, struct xl_runtime *rt)
{
	return xl_runtime_of_releases(&spec, 1, rt);
}

void xl_runtime_release(struct xl_runtime *rt)
{
	free(rt->python);
	free(rt->why);
	free(rt->jaxlib);
	free(rt->jax);
	free(rt->torch);
	free(rt->torch_xla);
	free(rt->libtpu);
	memset(rt, 0, sizeof(*rt));
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *xl_runtime_json(const struct xl_runtime *rt)
{
	return json_pack("{s:o,s:s,s:o,s:o,s:o,s:o,s:o}", "python", str_or_null(rt->python),
			 "source", rt->source ? rt->source : "none", "jaxlib", str_or_null(rt->jaxlib),
			 "jax", str_or_null(rt->jax), "torch", str_or_null(rt->torch),
			 "torch_xla", str_or_null(rt->torch_xla), "libtpu", str_or_null(rt->libtpu));
}

char *xl_runtime_str(const struct xl_runtime *rt)
{
	static const char *const names[] = { "jaxlib", "jax", "torch", "torch_xla", "libtpu" };
	const char *vals[] = { rt->jaxlib, rt->jax, rt->torch, rt->torch_xla, rt->libtpu };
	struct xl_buf b = XL_BUF_INIT;

	for (size_t i = 0; i < 5; i++)
		if (vals[i])
			xl_buf_addf(&b, "%s%s %s", b.len ? ", " : "", names[i], vals[i]);
	if (rt->python && rt->why)
		xl_buf_addf(&b, "no runtime (%s, from %s)", rt->why, rt->source);
	else if (rt->python)
		xl_buf_addf(&b, "%s(python %s, from %s)", b.len ? " " : "no jaxlib, jax, torch_xla or libtpu ",
			    rt->python, rt->source);
	else if (!b.len)
		xl_buf_addf(&b, "no runtime (%s)", rt->why ? rt->why : "no interpreter");
	return xl_buf_detach(&b);
}
