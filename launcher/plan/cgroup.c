/* cgroup.c - the memory cgroup xlaunch runs in, read: where it is, the
 * limits above it, and whether a launch can have one of its own under it
 * (see plan.h). */
#include "launcher/plan/plan.h"
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define V1_ROOT "/sys/fs/cgroup/memory"
#define V2_ROOT "/sys/fs/cgroup"

char *xl_cgroup_dir(int *version, char *why, size_t n)
{
	char *cg = xl_read_file("/proc/self/cgroup", NULL, 1 << 16), *line, *save = NULL, *dir = NULL;
	char *v2 = NULL;
	struct stat st;

	if (!cg) {
		snprintf(why, n, "/proc/self/cgroup cannot be read");
		return NULL;
	}
	for (line = strtok_r(cg, "\n", &save); line && !dir; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		if (!*ctl) {
			v2 = xl_strdup(path);
			continue;
		}
		/* cgroup v1: a hierarchy whose controllers include memory */
		for (char *c = ctl, *e; c && *c; c = e ? e + 1 : NULL) {
			e = strchr(c, ',');
			if ((e ? (size_t)(e - c) : strlen(c)) == 6 && strncmp(c, "memory", 6) == 0) {
				dir = xl_asprintf("%s%s", V1_ROOT, strcmp(path, "/") == 0 ? "" : path);
				*version = 1;
				break;
			}
		}
	}
	if (!dir && v2) {
		dir = xl_asprintf("%s%s", V2_ROOT, strcmp(v2, "/") == 0 ? "" : v2);
		*version = 2;
	}
	free(v2);
	free(cg);
	if (!dir) {
		snprintf(why, n, "no memory cgroup in /proc/self/cgroup");
		return NULL;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s is not there (another cgroup namespace or mount)", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

bool xl_memcg_possible(char *why, size_t n)
{
	const char *env = getenv("XLAUNCH_MEMCG");
	int version = 0;
	char *dir;
	bool ok;

	if (env && strcmp(env, "0") == 0) {
		snprintf(why, n, "XLAUNCH_MEMCG=0");
		return false;
	}
	if (env && strcmp(env, "own") == 0) {
		snprintf(why, n, "XLAUNCH_MEMCG=own (the cgroup xlaunch runs in is read, never limited)");
		return false;
	}
	dir = xl_cgroup_dir(&version, why, n);
	if (!dir)
		return false;
	ok = access(dir, W_OK) == 0;
	if (ok)
		snprintf(why, n, "a cgroup v%d of the launch's own under %s", version, dir);
	else
		snprintf(why, n, "%s cannot be written (%s)", dir, strerror(errno));
	free(dir);
	return ok;
}

/* The child stays in this cgroup: its limit and its ancestors' bind it. */
int64_t xl_cgroup_memory_max(char **where)
{
	char *cg = xl_read_file("/proc/self/cgroup", NULL, 1 << 16), *line, *path;
	int64_t best = -1;

	*where = NULL;
	if (!cg)
		return -1;
	/* cgroup v2: "0::/path" */
	line = strstr(cg, "0::");
	if (line) {
		line[strcspn(line, "\n")] = '\0';
		path = xl_strdup(line + 3);
		for (;;) {
			char *f = xl_asprintf("/sys/fs/cgroup%s/memory.max",
					      strcmp(path, "/") == 0 ? "" : path);
			char *v = xl_read_file(f, NULL, 256);
			uint64_t b;

			if (v) {
				v[strcspn(v, "\n")] = '\0';
				if (strcmp(v, "max") != 0 && xl_parse_bytes(v, &b) &&
				    (best < 0 || (int64_t)b < best)) {
					best = (int64_t)b;
					free(*where);
					*where = xl_strdup(f);
				}
			}
			free(v);
			free(f);
			if (strcmp(path, "/") == 0 || !*path)
				break;
			{
				char *slash = strrchr(path, '/');

				if (slash == path)
					slash[1] = '\0';
				else if (slash)
					*slash = '\0';
				else
					break;
			}
		}
		free(path);
	}
	free(cg);
	return best;
}
