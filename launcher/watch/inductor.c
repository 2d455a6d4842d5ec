/* inductor.c - torch.compile's compiled graphs counted from Inductor's cache
 * directory as the job runs (see watch.h).
 *
 * Torch 2.9.0 writes, per compiled graph, aotautograd/KEY/ENTRY (one file)
 * and fxgraph/XX/KEY/ENTRY (one per forward and backward).  A poll lists
 * those two levels and counts the entries whose time is this launch's.
 */
#include "launcher/watch/inductor.h"

#include <dirent.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDUCTOR_INTERVAL_S 1.0
#define INDUCTOR_MAX_SEEN (1u << 20)

static const char *env_of(char *const *envp, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, l) == 0 && envp[i][l] == '=')
			return envp[i] + l + 1;
	return NULL;
}

static bool env_off(char *const *envp, const char *name)
{
	const char *v = env_of(envp, name);

	return v && (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
}

/* Python's tempfile.gettempdir() and getpass.getuser(), as Inductor's
 * default_cache_dir() uses them (characters a path cannot hold made _). */
static char *default_dir(char *const *envp)
{
	static const char *const tmps[] = { "TMPDIR", "TEMP", "TMP", NULL };
	static const char *const users[] = { "LOGNAME", "USER", "LNAME", "USERNAME", NULL };
	const char *tmp = "/tmp", *user = NULL;
	char *name, *dir;

	for (size_t i = 0; tmps[i]; i++) {
		const char *v = env_of(envp, tmps[i]);
		struct stat sb;

		if (v && *v && stat(v, &sb) == 0 && S_ISDIR(sb.st_mode) && access(v, W_OK) == 0) {
			tmp = v;
			break;
		}
	}
	for (size_t i = 0; users[i] && !user; i++) {
		const char *v = env_of(envp, users[i]);

		if (v && *v)
			user = v;
	}
	if (!user) {
		struct passwd *pw = getpwuid(getuid());

		user = pw ? pw->pw_name : "unknown";
	}
	name = xl_strdup(user);
	for (char *p = name; *p; p++)
		if (strchr("\\/:*?\"<>|", *p))
			*p = '_';
	dir = xl_asprintf("%s/torchinductor_%s", tmp, name);
	free(name);
	return dir;
}

void xl_inductor_setup(struct xl_inductor *c, char *const *envp, bool torch_job, double since)
{
	const char *dir = env_of(envp, "TORCHINDUCTOR_CACHE_DIR");

	memset(c, 0, sizeof(*c));
	c->first_s = c->last_s = -1;
	c->since = since;
	c->interval = INDUCTOR_INTERVAL_S;
	if (!torch_job) {
		snprintf(c->why, sizeof(c->why), "not watched: not a torch job");
		return;
	}
	if (env_off(envp, "TORCHINDUCTOR_AUTOGRAD_CACHE") || env_off(envp, "TORCHINDUCTOR_FX_GRAPH_CACHE") ||
	    (env_of(envp, "TORCHINDUCTOR_FORCE_DISABLE_CACHES") &&
	     !env_off(envp, "TORCHINDUCTOR_FORCE_DISABLE_CACHES"))) {
		snprintf(c->why, sizeof(c->why), "not counted: Inductor's caches are turned off, so its"
			 " compiled graphs leave no entry");
		return;
	}
	if (dir && *dir) {
		c->dir = xl_strdup(dir);
		c->from = "TORCHINDUCTOR_CACHE_DIR";
	} else {
		c->dir = default_dir(envp);
		c->from = "the default";
	}
}

static double mtime_of(const struct stat *sb)
{
	return (double)sb->st_mtim.tv_sec + sb->st_mtim.tv_nsec / 1e9;
}

/* Counts the entries of KEY directories under dir (aotautograd: depth 1;
 * fxgraph: depth 2) written during the run. */
static long count_level(struct xl_inductor *c, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *p;
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		p = xl_asprintf("%s/%s", dir, e->d_name);
		if (lstat(p, &sb) == 0) {
			if (depth > 0 && S_ISDIR(sb.st_mode) && mtime_of(&sb) >= c->since) {
				/* a directory an entry was added to has that time */
				n += count_level(c, p, depth - 1);
			} else if (depth == 0 && S_ISREG(sb.st_mode) && mtime_of(&sb) >= c->since &&
				   !xl_strmap_get(&c->seen, p, NULL) && c->names.n < INDUCTOR_MAX_SEEN) {
				double t = mtime_of(&sb) - c->origin;

				xl_strv_push(&c->names, p);
				xl_strmap_put(&c->seen, c->names.v[c->names.n - 1], c->names.n - 1);
				if (c->first_s < 0 || t < c->first_s)
					c->first_s = t;
				if (t > c->last_s)
					c->last_s = t;
				n++;
			}
		}
		free(p);
	}
	closedir(d);
	return n;
}

void xl_inductor_poll(struct xl_inductor *c, double now, bool force)
{
	double t0 = xl_mono(), cost;
	char *p;

	if (!c->dir || (!force && now < c->next_at))
		return;
	p = xl_asprintf("%s/aotautograd", c->dir);
	c->graphs += count_level(c, p, 1);
	free(p);
	p = xl_asprintf("%s/fxgraph", c->dir);
	c->fx_graphs += count_level(c, p, 2);
	free(p);
	c->polls++;
	/* a large warm cache is listed less often: about 1% of the time */
	cost = xl_mono() - t0;
	c->interval = cost * 100 > INDUCTOR_INTERVAL_S ? cost * 100 : INDUCTOR_INTERVAL_S;
	if (c->interval > 60)
		c->interval = 60;
	c->next_at = now + c->interval;
}

static json_t *secs(double s)
{
	return s >= 0 ? json_real((double)(long long)(s * 1000) / 1000) : json_null();
}

json_t *xl_inductor_json(const struct xl_inductor *c)
{
	if (!c->dir)
		return json_pack("{s:s}", "why_not", c->why);
	return json_pack("{s:s,s:s,s:I,s:I,s:o,s:o,s:s}", "dir", c->dir, "from", c->from,
			 "graphs", (json_int_t)c->graphs, "fx_graphs", (json_int_t)c->fx_graphs,
			 "first_s", secs(c->first_s), "last_s", secs(c->last_s), "counts",
			 "graphs compiled by Inductor (its AOTAutograd cache entries written during the run;"
			 " graphs loaded from a warm cache are not seen)");
}

void xl_inductor_release(struct xl_inductor *c)
{
	free(c->dir);
	xl_strmap_release(&c->seen);
	xl_strv_release(&c->names);
	memset(c, 0, sizeof(*c));
}
