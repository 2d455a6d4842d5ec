/* record.c - what a launch is (its signature parts) and what became of it
 * (run directories, manifests, records kept until the store has them). */
#include "launcher/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv (no shell) and returns its first line of output, or NULL. */
static char *capture(char *const argv[])
{
	int p[2];
	pid_t pid;
	char buf[256];
	size_t len = 0;
	int status;

	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1) {
			/* drain the rest so the child can finish */
			char junk[4096];

			while (read(p[0], junk, sizeof(junk)) > 0)
				;
			break;
		}
	}
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NULL;
	buf[len] = '\0';
	return xl_strdup(buf);
}

/* True when the current directory is inside a git work tree (a .git entry
 * here or above), so that no git process is started elsewhere. */
static bool in_work_tree(void)
{
	char dir[4096];
	struct stat st;

	if (!getcwd(dir, sizeof(dir) - 8))
		return false;
	for (;;) {
		size_t n = strlen(dir);
		char *slash;

		snprintf(dir + n, sizeof(dir) - n, "%s.git", n > 1 ? "/" : "");
		if (lstat(dir, &st) == 0)
			return true;
		dir[n] = '\0';
		slash = strrchr(dir, '/');
		if (!slash || n <= 1)
			return false;
		*(slash == dir ? slash + 1 : slash) = '\0';
	}
}

json_t *xl_code_state(void)
{
	static json_t *cached;
	char *const rev[] = { "git", "rev-parse", "HEAD", NULL };
	char *const st[] = { "git", "status", "--porcelain", "--untracked-files=no", NULL };
	char *commit, *dirty;

	if (cached)
		return json_incref(cached);
	commit = in_work_tree() ? capture(rev) : NULL;
	if (!commit) {
		cached = json_object();
		return json_incref(cached);
	}
	commit[strcspn(commit, "\n")] = '\0';
	dirty = capture(st);
	cached = json_pack("{s:s,s:b}", "commit", commit, "dirty", dirty && *dirty);
	free(commit);
	free(dirty);
	return json_incref(cached);
}

json_t *xl_signature_parts(const struct xl_profile *p)
{
	json_t *parts = json_object(), *env = json_object();
	static const char *const secs[] = { "model", "train", "parallel", "features" };
	json_t *dev = json_object_get(p->signature, "device");

	for (size_t i = 0; i < 4; i++) {
		json_t *s = json_object_get(p->signature, secs[i]);

		if (s)
			json_object_set_new(parts, secs[i], json_deep_copy(s));
	}
	if (dev)
		json_object_set_new(parts, "hardware", json_deep_copy(dev));
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		json_object_set_new(env, v->name, v->value ? json_string(v->value) : json_null());
	}
	json_object_set_new(parts, "toggles", json_pack("{s:o}", "env", env));
	json_object_set_new(parts, "code", xl_code_state());
	json_object_set_new(parts, "bundle", xl_bundle_summary());
	return parts;
}

/* ---- run directories ---------------------------------------------------------- */

char *xl_runs_dir(void)
{
	char *state = xl_state_dir();
	char *d = xl_asprintf("%s/runs", state);

	free(state);
	return d;
}

char *xl_new_run_id(int rank, int attempt)
{
	char t[32], host[64];
	const char *h = xl_hostname();
	size_t k = 0;
	struct timespec now;
	struct tm tm;

	/* microseconds keep ids of one host in start order when sorted by name */
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y%m%dT%H%M%S", &tm);
	for (size_t i = 0; h[i] && k < sizeof(host) - 1; i++) {
		char c = h[i];

		if (c == '.')
			break;
		host[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-') ? c : '_';
	}
	host[k] = '\0';
	return xl_asprintf("%s.%06ldZ-%s-%d-r%d-a%d", t, (long)(now.tv_nsec / 1000), host,
			   (int)getpid(), rank, attempt);
}

int xl_write_json_atomic(const char *path, const json_t *j, bool durable)
{
	char *tmp = xl_asprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = -1;

	if (fd >= 0) {
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		int w = xl_write_all(fd, s, strlen(s));

		free(s);
		if (w == 0 && xl_write_all(fd, "\n", 1) == 0 && (!durable || fsync(fd) == 0))
			rc = 0;
		if (close(fd) < 0)
			rc = -1;
		if (rc == 0 && rename(tmp, path) < 0)
			rc = -1;
	}
	if (rc < 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
	}
	free(tmp);
	return rc;
}

/* ---- records waiting for the store -------------------------------------------------- */

static char *pending_dir(void)
{
	char *state = xl_state_dir();
	char *d = xl_asprintf("%s/pending", state);

	free(state);
	return d;
}

int xl_record_keep(const json_t *record, char **where)
{
	char *dir = pending_dir();
	const char *id = json_string_value(json_object_get(record, "id"));
	char *path;
	int rc;

	if (xl_mkdirs(dir, 0700) < 0) {
		free(dir);
		return -1;
	}
	path = xl_asprintf("%s/%s.json", dir, id);
	rc = xl_write_json_atomic(path, record, true);
	free(dir);
	if (where)
		*where = path;
	else
		free(path);
	return rc;
}

void xl_record_done(const json_t *record)
{
	char *dir = pending_dir();
	char *path = xl_asprintf("%s/%s.json", dir, json_string_value(json_object_get(record, "id")));

	unlink(path);
	free(path);
	free(dir);
}

int xl_record_replay(struct calib_store *st)
{
	char *dir = pending_dir();
	DIR *d = opendir(dir);
	struct dirent *e;
	int replayed = 0;

	if (!d) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d))) {
		char *path;
		json_t *rec;
		json_error_t jerr;

		if (!xl_endswith(e->d_name, ".json"))
			continue;
		path = xl_asprintf("%s/%s", dir, e->d_name);
		rec = json_load_file(path, 0, &jerr);
		if (!rec) {
			xl_warn("pending record '%s' is unreadable (%s); left in place", path, jerr.text);
		} else {
			int rc = calib_record_attempt_json(st, rec);

			if (rc == 0) {
				unlink(path);
				replayed++;
			} else if (rc == XL_EX_DATAERR) {
				xl_warn("pending record '%s' was refused by the store: %s", path,
					calib_errmsg(st));
			} else {
				json_decref(rec);
				free(path);
				break; /* the store is failing again: try next time */
			}
		}
		json_decref(rec);
		free(path);
	}
	closedir(d);
	free(dir);
	if (replayed)
		xl_info("replayed %d record%s kept while the store was unavailable", replayed,
			replayed == 1 ? "" : "s");
	return replayed;
}
