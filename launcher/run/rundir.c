/* rundir.c - where a launch keeps its files: the state directory, or a
 * private directory under $TMPDIR when the state directory cannot keep them
 * (missing and not creatable, read-only, full); the run directories there,
 * their ids, and the mark that says a run directory's record is settled.
 * Below both the records (record.c) and the sweep of lost attempts
 * (sweep.c), which use it. */
#include "launcher/run/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- where a launch keeps its files ------------------------------------------------ */

static enum xl_keep keep = XL_KEEP_STATE;
static bool keep_chosen;

char *xl_keep_fallback_dir(void)
{
	/* the user's name, looked up once (a launch asks several times) */
	static char user[64];
	static uid_t user_of = (uid_t)-1;
	const char *tmp = getenv("TMPDIR");

	if (user_of != geteuid() || !user[0]) {
		struct passwd *pw = getpwuid(geteuid());

		user_of = geteuid();
		if (pw && pw->pw_name && xl_valid_env_name(pw->pw_name) &&
		    strlen(pw->pw_name) < sizeof(user))
			snprintf(user, sizeof(user), "%s", pw->pw_name);
		else
			snprintf(user, sizeof(user), "%u", (unsigned)user_of);
	}
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	return xl_asprintf("%s/xlaunch-%s", tmp, user);
}

/* Whether dir is this user's own, private directory (the fallback lives in
 * a directory every user may write to). */
static bool private_dir(const char *dir, char **why)
{
	struct stat sb;

	if (lstat(dir, &sb) < 0) {
		*why = xl_asprintf("'%s': %s", dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*why = xl_asprintf("'%s' is not a directory", dir);
		return false;
	}
	if (sb.st_uid != geteuid()) {
		*why = xl_asprintf("'%s' belongs to another user", dir);
		return false;
	}
	if ((sb.st_mode & 077) && chmod(dir, 0700) < 0) {
		*why = xl_asprintf("'%s' is open to other users and cannot be closed: %s", dir,
				   strerror(errno));
		return false;
	}
	return true;
}

/* Whether dir can keep run directories and records: its runs/ and
 * pending/ exist or are made, and a file of a manifest's size can be
 * written there (a full disk says so now, not halfway through).  The
 * file is not synced: a file system that reports a full disk only when
 * the data goes out fails the start manifest's sync instead, and the
 * launch falls back then (attempt.c). */
static bool can_keep(const char *dir, char **why)
{
	char *runs = xl_asprintf("%s/runs", dir), *pend = xl_asprintf("%s/pending", dir);
	char *index = xl_unsettled_path(runs, NULL);
	char *probe = xl_asprintf("%s/.probe.%d", index, (int)getpid());
	char block[4096];
	bool ok = false;
	int fd = -1;

	memset(block, '\n', sizeof(block));
	if (xl_mkdirs(index, 0700) < 0 || xl_mkdirs(pend, 0700) < 0) {
		*why = xl_asprintf("'%s' cannot keep run directories: %s", dir, strerror(errno));
		goto out;
	}
	/* a file without a name, gone with its descriptor even when xlaunch
	 * is killed; a named one where the file system has none (a sweep
	 * removes one its writer left) */
	fd = open(runs, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || xl_write_all(fd, block, sizeof(block)) < 0)
		*why = xl_asprintf("'%s' cannot keep run directories: cannot write in it: %s", dir,
				   strerror(errno));
	else
		ok = true;
out:
	if (fd >= 0)
		close(fd);
	unlink(probe);
	free(probe);
	free(index);
	free(pend);
	free(runs);
	return ok;
}

/* The fallback, made and checked; false with *why when it cannot keep. */
static bool fallback_ok(char **why)
{
	char *dir = xl_keep_fallback_dir();
	bool ok = (mkdir(dir, 0700) == 0 || errno == EEXIST) && private_dir(dir, why) &&
		  can_keep(dir, why);

	if (!ok && !*why)
		*why = xl_asprintf("'%s' cannot keep run directories: %s", dir, strerror(errno));
	free(dir);
	return ok;
}

enum xl_keep xl_keep_choose(char **why)
{
	char *state = xl_state_dir(), *swhy = NULL, *twhy = NULL;

	*why = NULL;
	keep_chosen = true;
	if (can_keep(state, &swhy)) {
		keep = XL_KEEP_STATE;
	} else if (fallback_ok(&twhy)) {
		char *dir = xl_keep_fallback_dir();

		keep = XL_KEEP_TMP;
		xl_warn("state directory %s; this launch's run directory and record are kept in '%s'"
			" instead, and the next run whose state directory works records them", swhy, dir);
		free(dir);
	} else {
		keep = XL_KEEP_NONE;
		*why = xl_asprintf("state directory %s, and %s", swhy, twhy);
	}
	free(swhy);
	free(twhy);
	free(state);
	return keep;
}

bool xl_keep_fall_back(const char *failed)
{
	char *why = NULL, *dir;

	if (keep != XL_KEEP_STATE || !fallback_ok(&why)) {
		free(why);
		return false;
	}
	keep = XL_KEEP_TMP;
	keep_chosen = true;
	dir = xl_keep_fallback_dir();
	xl_warn("%s; keeping this launch's files in '%s' from now on (the next run whose state"
		" directory works records them)", failed, dir);
	free(dir);
	return true;
}

enum xl_keep xl_keep_where(void)
{
	return keep;
}

char *xl_keep_dir(void)
{
	if (keep == XL_KEEP_NONE)
		return NULL;
	return keep == XL_KEEP_TMP ? xl_keep_fallback_dir() : xl_state_dir();
}

size_t xl_keep_dirs(char *out[2])
{
	char *fb = xl_keep_fallback_dir(), *why = NULL;
	struct stat sb;
	size_t n = 0;

	out[n++] = xl_state_dir();
	/* the fallback is read only when it is this user's own */
	if (stat(fb, &sb) == 0 && private_dir(fb, &why))
		out[n++] = fb;
	else
		free(fb);
	free(why);
	return n;
}

/* ---- run directories ---------------------------------------------------------- */

char *xl_runs_dir(void)
{
	char *root = xl_keep_dir();
	char *d;

	if (!root)
		return NULL;
	d = xl_asprintf("%s/runs", root);
	free(root);
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

/* ---- the index of unsettled run directories ------------------------------------------ */

char *xl_unsettled_path(const char *runs, const char *id)
{
	return id ? xl_asprintf("%s/" XL_UNSETTLED_DIR "/%s", runs, id)
		  : xl_asprintf("%s/" XL_UNSETTLED_DIR, runs);
}

int xl_unsettled_add(const char *runs, const char *id)
{
	char *p = xl_unsettled_path(runs, id);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 && errno == ENOENT) {
		/* runs/ made by hand, or by an xlaunch older than the index */
		char *dir = xl_unsettled_path(runs, NULL);

		if (xl_mkdirs(dir, 0700) == 0)
			fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		free(dir);
	}
	free(p);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

void xl_unsettled_remove(const char *runs, const char *id)
{
	char *p = xl_unsettled_path(runs, id);

	unlink(p);
	free(p);
}

/* ---- settled run directories --------------------------------------------------- */

void xl_run_settled_dir(const char *dir, const char *why)
{
	char *p = xl_asprintf("%s/settled", dir);
	const char *slash = strrchr(dir, '/');
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (xl_write_all(fd, why, strlen(why)) < 0 || xl_write_all(fd, "\n", 1) < 0) {
			/* the file's presence is what counts */
		}
		close(fd);
	}
	free(p);
	/* settled first, then out of the index: a sweep between the two
	 * finds it settled and takes it out itself */
	if (fd >= 0 && slash) {
		char *runs = xl_strndup(dir, (size_t)(slash - dir));

		xl_unsettled_remove(runs, slash + 1);
		free(runs);
	}
}

void xl_run_settled(const char *id, const char *why)
{
	char *roots[2];
	size_t n = xl_keep_dirs(roots);
	bool done = false;

	/* in whichever directory keeps it: the state directory or the fallback */
	for (size_t i = 0; i < n; i++) {
		char *dir = xl_asprintf("%s/runs/%s", roots[i], id);
		struct stat sb;

		if (!done && stat(dir, &sb) == 0) {
			xl_run_settled_dir(dir, why);
			done = true;
		}
		free(dir);
		free(roots[i]);
	}
}

/* ---- finding a run directory ---------------------------------------------------------- */

/* One root's runs/: entries that start with prefix, counted into *n (up to
 * two); the first one's directory in *dir and its id in *id. */
static void match_in(const char *root, const char *prefix, size_t *n, char **dir, char **id)
{
	char *runs = xl_asprintf("%s/runs", root);
	DIR *d = opendir(runs);
	struct dirent *e;
	size_t len = strlen(prefix);

	while (d && *n < 2 && (e = readdir(d))) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, len) != 0)
			continue;
		if (*id && strcmp(*id, e->d_name) == 0)
			continue;      /* the same run, kept in both roots */
		if ((*n)++ == 0) {
			*dir = xl_asprintf("%s/%s", runs, e->d_name);
			*id = xl_strdup(e->d_name);
		}
	}
	if (d)
		closedir(d);
	free(runs);
}

size_t xl_run_dir_find(const char *prefix, char **dir, char **id)
{
	char *roots[2];
	size_t nroots = xl_keep_dirs(roots), n = 0;

	*dir = *id = NULL;
	for (size_t i = 0; i < nroots; i++) {
		if (*prefix && !strchr(prefix, '/'))
			match_in(roots[i], prefix, &n, dir, id);
		free(roots[i]);
	}
	if (n != 1) {
		free(*dir);
		free(*id);
		*dir = *id = NULL;
	}
	return n;
}
