/* path.c - files, directories, XDG locations, time and host. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The installed data directory, PREFIX/share/xlaunch; "" for a binary with
 * no fixed prefix (the wheel's), which looks only beside itself. */
#ifndef XL_DATADIR
#define XL_DATADIR "/usr/local/share/xlaunch"
#endif

char *xl_read_file(const char *path, size_t *len, size_t max)
{
	struct xl_buf b = XL_BUF_INIT;
	struct stat st;
	char chunk[65536];
	int fd;

	if (!max)
		max = 64u << 20;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return NULL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	/* blocking reads from here on (a FIFO was opened without waiting; on a
	 * regular file O_NONBLOCK changes nothing, and two calls are saved) */
	if (!S_ISREG(st.st_mode))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			xl_buf_release(&b);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > max) {
			close(fd);
			xl_buf_release(&b);
			errno = EFBIG;
			return NULL;
		}
		xl_buf_add(&b, chunk, (size_t)n);
	}
	close(fd);
	if (len)
		*len = b.len;
	return xl_buf_detach(&b);
}

bool xl_host_root_set(void)
{
	const char *root = getenv("XLAUNCH_HOST_ROOT");

	return root && *root;
}

char *xl_host_path(const char *path)
{
	return xl_asprintf("%s%s", xl_host_root_set() ? getenv("XLAUNCH_HOST_ROOT") : "", path);
}

char *xl_read_host_file(const char *path, size_t *len, size_t max)
{
	char *p = xl_host_path(path);
	char *t = xl_read_file(p, len, max);

	free(p);
	return t;
}

int xl_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int xl_mkdirs(const char *path, unsigned mode)
{
	struct stat have;
	char *p;
	int rc = 0;

	/* the common case, on every launch: it is there (one call, not one
	 * mkdir per component) */
	if (stat(path, &have) == 0 && S_ISDIR(have.st_mode))
		return 0;
	p = xl_strdup(path);

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				rc = -1;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (rc == 0) {
		struct stat st;

		if (stat(path, &st) < 0)
			rc = -1;
		else if (!S_ISDIR(st.st_mode)) {
			errno = ENOTDIR;
			rc = -1;
		}
	}
	int e = errno;
	free(p);
	errno = e;
	return rc;
}

bool xl_is_regular_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool xl_is_directory(const char *path)
{
	struct stat sb;

	return *path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

char *xl_path_absolute(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xl_strdup(path);
	if (path[0] == '.' && path[1] == '/')
		path += 2;
	return xl_asprintf("%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
}

const char *xl_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	if (!envp)
		return getenv(name);
	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

char *xl_find_program_in(const char *name, char *const *envp)
{
	const char *path = xl_env_get(envp, "PATH");
	struct xl_strv dirs = XL_STRV_INIT;
	char *found = NULL;

	if (strchr(name, '/'))
		return xl_is_regular_file(name) ? xl_path_absolute(name) : NULL;
	xl_strv_split(&dirs, path && *path ? path : "/usr/local/bin:/usr/bin:/bin", ":");
	for (size_t i = 0; i < dirs.n && !found; i++) {
		char *cand = xl_asprintf("%s/%s", *dirs.v[i] ? dirs.v[i] : ".", name);

		if (xl_is_regular_file(cand) && access(cand, X_OK) == 0)
			found = xl_path_absolute(cand);
		free(cand);
	}
	xl_strv_release(&dirs);
	return found;
}

char *xl_find_program(const char *name)
{
	return xl_find_program_in(name, NULL);
}

static char *xdg_dir(const char *var, const char *fallback)
{
	const char *v = getenv(var);
	const char *home;

	if (v && v[0] == '/')
		return xl_asprintf("%s/xlaunch", v);
	home = getenv("HOME");
	if (!home || !*home)
		home = "/tmp";
	return xl_asprintf("%s/%s/xlaunch", home, fallback);
}

char *xl_state_dir(void)
{
	return xdg_dir("XDG_STATE_HOME", ".local/state");
}

char *xl_config_dir(void)
{
	return xdg_dir("XDG_CONFIG_HOME", ".config");
}

/* A directory that holds xlaunch's shipped data: etc/outcomes.yaml is the
 * one file every command may read. */
static bool holds_data(const char *dir)
{
	char *probe = xl_asprintf("%s/etc/outcomes.yaml", dir);
	struct stat st;
	bool yes = stat(probe, &st) == 0 && S_ISREG(st.st_mode);

	free(probe);
	return yes;
}

static char data_dir[PATH_MAX];
static const char *data_dir_how;

/* The directory of the running binary, links resolved; false when
 * /proc/self/exe cannot be read. */
static bool exe_dir(char *out, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", out, size - 1);
	char *slash;

	if (n <= 0)
		return false;
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

const char *xl_data_dir(void)
{
	const char *env;
	char exe[PATH_MAX];

	if (data_dir[0])
		return data_dir;
	env = getenv("XLAUNCH_DATADIR");
	if (env && *env) {
		snprintf(data_dir, sizeof(data_dir), "%s", env);
		data_dir_how = "from XLAUNCH_DATADIR";
		return data_dir;
	}
	if (exe_dir(exe, sizeof(exe))) {
		/* an installed tree, wherever it was installed or moved to:
		 * PREFIX/bin/xlaunch and PREFIX/share/xlaunch (a venv's
		 * bin/ and share/ for the wheel) */
		char *share = xl_asprintf("%s/../share/xlaunch", exe);
		bool found = holds_data(share) && realpath(share, data_dir);

		free(share);
		if (found) {
			data_dir_how = "beside the binary: ../share/xlaunch";
			return data_dir;
		}
		/* a build-tree binary: ./xlaunch, or build/san/xlaunch */
		for (int up = 0; up < 3; up++) {
			size_t n = strlen(exe);

			if (holds_data(exe) && n < sizeof(data_dir)) {
				memcpy(data_dir, exe, n + 1);
				data_dir_how = "the source tree of the binary";
				return data_dir;
			}
			char *slash = strrchr(exe, '/');

			if (!slash || slash == exe)
				break;
			*slash = '\0';
		}
	}
	if (XL_DATADIR[0]) {
		snprintf(data_dir, sizeof(data_dir), "%s", XL_DATADIR);
		data_dir_how = "compiled in";
	} else {
		/* nothing compiled in: name the place the data should be, so
		 * every missing file is reported where it was looked for */
		if (!exe_dir(exe, sizeof(exe)))
			snprintf(exe, sizeof(exe), "/proc/self/exe: unreadable");
		snprintf(data_dir, sizeof(data_dir), "%.*s/../share/xlaunch",
			 (int)(sizeof(data_dir) - 20), exe);
		data_dir_how = "not found: ../share/xlaunch beside the binary holds no "
			       "etc/outcomes.yaml, and no data directory is compiled in";
	}
	return data_dir;
}

const char *xl_data_dir_how(void)
{
	xl_data_dir();
	return data_dir_how;
}

char *xl_data_path(const char *rel)
{
	return xl_asprintf("%s/%s", xl_data_dir(), rel);
}

const char *xl_hostname(void)
{
	static char host[256];

	if (!host[0]) {
		if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
			snprintf(host, sizeof(host), "localhost");
	}
	return host;
}

double xl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double xl_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *xl_iso_time(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

const char *xl_iso_time_ms(double t, char *buf, size_t n)
{
	/* whole seconds and milliseconds without libm (see common/libm.c):
	 * times here are seconds since 1970, far inside long long's range */
	double whole = (double)(long long)t;
	long ms;

	if (whole > t)
		whole -= 1;
	ms = (long)((t - whole) * 1000.0 + 0.5);
	char base[32];

	if (ms >= 1000) {
		whole += 1;
		ms = 0;
	}
	xl_iso_time(whole, base, sizeof(base));
	if (ms == 0) {
		snprintf(buf, n, "%s", base);
	} else {
		base[strlen(base) - 1] = '\0';   /* the Z */
		snprintf(buf, n, "%s.%03ldZ", base, ms);
	}
	return buf;
}

bool xl_parse_iso_time(const char *s, double *out)
{
	struct tm tm;
	const char *p;
	double frac = 0;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%d", &tm);
	if (!p)
		return false;
	if (*p == 'T' || *p == ' ') {
		p = strptime(p + 1, "%H:%M", &tm);
		if (!p)
			return false;
		if (*p == ':') {
			p = strptime(p + 1, "%S", &tm);
			if (!p)
				return false;
			if (*p == '.') {
				char *end;

				frac = strtod(p, &end);
				p = end;
			}
		}
	}
	if (*p == 'Z')
		p++;
	if (*p)
		return false;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return false;
	*out = (double)t + frac;
	return true;
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
