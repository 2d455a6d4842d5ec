/* shim.c - the interpreter behind a pyenv shim.
 *
 * pyenv puts bash scripts called python, python3, ... in $PYENV_ROOT/shims;
 * each runs `pyenv exec NAME`, which picks a version by $PYENV_VERSION, else
 * the nearest .python-version from the working directory up, else
 * $PYENV_ROOT/version, else "system".  Cached by the shim's own path, the
 * bundle of one version would be taken for another's, and the shim itself
 * is no interpreter to stat: so the shim is followed here to the file it
 * will exec, the way pyenv chooses it, without running bash.
 */
#include "bundle/bundle.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool xl_is_elf(const char *path)
{
	unsigned char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf;

	if (fd < 0)
		return false;
	elf = read(fd, head, sizeof(head)) == 4 && memcmp(head, "\177ELF", 4) == 0;
	close(fd);
	return elf;
}

/* Whether path is a script in a directory called shims that names pyenv:
 * a pyenv shim.  Costs nothing for any other path but a string compare. */
static bool is_shim(const char *path, char **shims)
{
	const char *slash = strrchr(path, '/');
	char head[512];
	ssize_t n;
	int fd;

	if (!slash || slash - path < 6 || strncmp(slash - 6, "/shims", 6) != 0)
		return false;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return false;
	head[n] = '\0';
	if (!strstr(head, "pyenv"))
		return false;
	*shims = xl_strndup(path, (size_t)(slash - path));
	return true;
}

/* The versions a version file names, as pyenv reads it: the first word of
 * each line, blank lines and "#" comments skipped, and names holding a '/'
 * or equal to ".." ignored (pyenv refuses them too).  False when the file
 * cannot be read. */
static bool read_version_file(const char *file, struct xl_strv *out)
{
	size_t len;
	char *text = xl_read_file(file, &len, 1u << 16);
	char *save = NULL;

	if (!text)
		return false;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t skip = strspn(line, " \t\r");
		size_t n = strcspn(line + skip, " \t\r");
		char *word = xl_strndup(line + skip, n);

		if (!n || word[0] == '#' || strchr(word, '/') || strcmp(word, "..") == 0)
			free(word);
		else
			xl_strv_push_owned(out, word);
	}
	free(text);
	return true;
}

/* The versions selected: $PYENV_VERSION (colon-separated), else the
 * nearest .python-version from the working directory up, else
 * ROOT/version, else "system". */
static void selected_versions(const char *root, char *const *envp, struct xl_strv *out)
{
	const char *pv = xl_env_get(envp, "PYENV_VERSION");
	char dir[PATH_MAX];
	char *file;

	if (pv && *pv) {
		xl_strv_split(out, pv, ":");
		return;
	}
	/* the first version file found decides, even an empty one ("system") */
	if (getcwd(dir, sizeof(dir))) {
		for (;;) {
			char *slash;
			bool found;

			file = xl_asprintf("%s/.python-version", strcmp(dir, "/") == 0 ? "" : dir);
			found = read_version_file(file, out);
			free(file);
			if (found)
				goto chosen;
			if (strcmp(dir, "/") == 0)
				break;
			slash = strrchr(dir, '/');
			if (slash == dir)
				dir[1] = '\0';
			else if (slash)
				*slash = '\0';
			else
				break;
		}
	}
	file = xl_asprintf("%s/version", root);
	read_version_file(file, out);
	free(file);
chosen:
	if (!out->n)
		xl_strv_push(out, "system");
}

/* NAME in the PATH of envp without the shims directory: pyenv's "system". */
static char *system_program(const char *name, const char *shims, char *const *envp)
{
	const char *path = xl_env_get(envp, "PATH");
	struct xl_buf rest = XL_BUF_INIT;
	struct xl_strv dirs = XL_STRV_INIT;
	char *env[2], *found;

	xl_strv_split(&dirs, path && *path ? path : "/usr/local/bin:/usr/bin:/bin", ":");
	for (size_t i = 0; i < dirs.n; i++)
		if (strcmp(dirs.v[i], shims) != 0)
			xl_buf_addf(&rest, "%s%s", rest.len ? ":" : "", dirs.v[i]);
	xl_strv_release(&dirs);
	/* an empty PATH would mean the default one: a colon-only one finds none */
	env[0] = xl_asprintf("PATH=%s", rest.len ? xl_buf_str(&rest) : ":");
	env[1] = NULL;
	found = xl_find_program_in(name, env);
	free(env[0]);
	xl_buf_release(&rest);
	return found;
}

/* The newest installed version whose name starts with "PREFIX.", as pyenv
 * resolves a prefix such as "3.11" (pyenv latest). */
static char *latest_of(const char *versions, const char *prefix)
{
	DIR *d = opendir(versions);
	struct dirent *de;
	char *best = NULL, *want = xl_asprintf("%s.", prefix);
	int c;

	while (d && (de = readdir(d))) {
		if (!xl_startswith(de->d_name, want) || strspn(de->d_name, "0123456789.") != strlen(de->d_name))
			continue;
		if (!best || (xl_version_compare_str(de->d_name, best, &c) == 0 && c > 0)) {
			free(best);
			best = xl_strdup(de->d_name);
		}
	}
	if (d)
		closedir(d);
	free(want);
	return best;
}

/* ROOT/versions/V/bin/NAME, for V as named, without "python-", or as the
 * newest installed release of the prefix V; NULL when there is none. */
static char *version_program(const char *root, const char *v, const char *name)
{
	char *versions = xl_asprintf("%s/versions", root);
	const char *tries[2] = { v, xl_startswith(v, "python-") ? v + 7 : NULL };
	char *found = NULL;

	for (size_t i = 0; i < 3 && !found; i++) {
		char *dir = i < 2 ? (tries[i] ? xl_strdup(tries[i]) : NULL) : latest_of(versions, v);
		char *cand = dir ? xl_asprintf("%s/%s/bin/%s", versions, dir, name) : NULL;

		if (cand && xl_is_regular_file(cand) && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
		free(dir);
	}
	free(versions);
	return found;
}

char *xl_pyenv_shim_target(const char *path, char *const *envp)
{
	struct xl_strv vers = XL_STRV_INIT;
	const char *name = strrchr(path, '/') + 1;
	char *shims = NULL, *root, *found = NULL;

	if (!is_shim(path, &shims))
		return NULL;
	root = xl_strndup(shims, (size_t)(strrchr(shims, '/') - shims));
	selected_versions(root, envp, &vers);
	/* pyenv which: the first selected version that has the program */
	for (size_t i = 0; i < vers.n && !found; i++)
		found = strcmp(vers.v[i], "system") == 0 ? system_program(name, shims, envp)
							 : version_program(root, vers.v[i], name);
	xl_strv_release(&vers);
	free(root);
	free(shims);
	return found;
}
