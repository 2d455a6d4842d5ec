/* memcg.c - a memory cgroup of the launch's own (see memcg.h). */
#include "launcher/run/memcg.h"
#include "launcher/run/run.h"
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool write_str(const char *dir, const char *file, const char *v)
{
	char *p = xl_asprintf("%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, v, strlen(v)) == (ssize_t)strlen(v);

	if (fd >= 0)
		close(fd);
	free(p);
	return ok;
}

static bool file_exists(const char *dir, const char *file)
{
	char *p = xl_asprintf("%s/%s", dir, file);
	bool ok = access(p, F_OK) == 0;

	free(p);
	return ok;
}

/* Removes the empty cgroups of launches whose xlaunch is gone (killed
 * before it could remove its own): "xlaunch-PID-N" under parent with no
 * process PID.  One whose job still runs is not empty and stays. */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "xlaunch-", 8) != 0)
			continue;
		pid = strtol(e->d_name + 8, &end, 10);
		if (end == e->d_name + 8 || *end != '-' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		{
			char *p = xl_asprintf("%s/%s", parent, e->d_name);

			rmdir(p);
			free(p);
		}
	}
	closedir(d);
}

static int64_t read_num(const char *dir, const char *file);
static long read_oom_kills(const char *dir, int version);

static const char *peak_file(int version)
{
	return version == 1 ? "memory.max_usage_in_bytes" : "memory.peak";
}

/* The cgroup xlaunch runs in, taken as the launch's when xlaunch is the
 * only process in it (the child will be the only other): its peak and OOM
 * kills as they are now, to tell the launch's from what came before.
 * why_not says why no cgroup of the launch's own was made; false (m->why
 * says why) when this one cannot be read or holds other processes. */
static bool open_own(struct xl_memcg *m, const char *why_not)
{
	int version = 0;
	char why[300], *dir = xl_cgroup_dir(&version, why, sizeof(why)), *procs, *list, *end;
	long pid;
	size_t others = 0;

	if (!dir) {
		snprintf(m->why, sizeof(m->why), "%.140s; %.140s", why_not, why);
		return false;
	}
	procs = xl_asprintf("%s/cgroup.procs", dir);
	list = xl_read_file(procs, NULL, 1 << 20);
	free(procs);
	for (char *q = list; q && *q; q = end) {
		pid = strtol(q, &end, 10);
		if (end == q)
			break;
		if (pid != (long)getpid())
			others++;
	}
	m->base_peak = read_num(dir, peak_file(version));
	if (!list || others || m->base_peak < 0) {
		snprintf(m->why, sizeof(m->why), "%.150s; the cgroup it runs in, %.80s, %s", why_not, dir,
			 !list ? "cannot be read"
			 : others ? "holds other processes too"
				  : "has no peak to read");
		free(list);
		free(dir);
		return false;
	}
	free(list);
	m->dir = dir;
	m->version = version;
	m->own = true;
	m->joined = true;
	m->base_ooms = read_oom_kills(dir, version);
	snprintf(m->why, sizeof(m->why), "cgroup v%d %.100s, which xlaunch runs in alone, is read, "
		 "not limited (%.120s)", version, dir, why_not);
	return true;
}

/* The launch's own cgroup made; false (m->why says why) when it cannot be */
static bool open_made(struct xl_memcg *m, int64_t limit);

bool xl_memcg_open(struct xl_memcg *m, int64_t limit)
{
	const char *env = getenv("XLAUNCH_MEMCG");
	char why[300];

	memset(m, 0, sizeof(*m));
	m->limit = -1;
	if (env && strcmp(env, "0") == 0) {
		snprintf(m->why, sizeof(m->why), "XLAUNCH_MEMCG=0");
		return false;
	}
	if (open_made(m, limit))
		return true;
	snprintf(why, sizeof(why), "%s", m->why);
	return open_own(m, why);
}

static bool open_made(struct xl_memcg *m, int64_t limit)
{
	static unsigned seq;
	char *parent;
	int version = 0;

	if (!xl_memcg_possible(m->why, sizeof(m->why)))
		return false;
	parent = xl_cgroup_dir(&version, m->why, sizeof(m->why));
	if (!parent)
		return false;
	sweep_stale(parent);
	m->dir = xl_asprintf("%s/xlaunch-%ld-%u", parent, (long)getpid(), seq++);
	free(parent);
	if (mkdir(m->dir, 0755) < 0) {
		snprintf(m->why, sizeof(m->why), "cannot make %s: %s", m->dir, strerror(errno));
		free(m->dir);
		m->dir = NULL;
		return false;
	}
	m->version = version;
	/* cgroup v2 has the memory files only where the parent delegates the
	 * controller */
	if (!file_exists(m->dir, version == 1 ? "memory.max_usage_in_bytes" : "memory.max")) {
		snprintf(m->why, sizeof(m->why), "the memory controller is not enabled for %s", m->dir);
		rmdir(m->dir);
		free(m->dir);
		m->dir = NULL;
		return false;
	}
	if (limit >= 0 && limit != INT64_MAX) {
		char v[32];

		snprintf(v, sizeof(v), "%" PRId64, limit);
		if (!write_str(m->dir, version == 1 ? "memory.limit_in_bytes" : "memory.max", v)) {
			snprintf(m->why, sizeof(m->why), "cannot set the limit of %s: %s", m->dir,
				 strerror(errno));
			rmdir(m->dir);
			free(m->dir);
			m->dir = NULL;
			return false;
		}
		m->limit = limit;
		/* v2: no swapping out of the limit */
		if (version == 2)
			write_str(m->dir, "memory.swap.max", "0");
	}
	m->procs = xl_asprintf("%s/cgroup.procs", m->dir);
	snprintf(m->why, sizeof(m->why), "cgroup v%d %s", version, m->dir);
	return true;
}

/* pid in decimal into buf (at least 24 bytes), without stdio. */
static size_t pid_str(pid_t pid, char *buf)
{
	char t[24];
	size_t n = 0, l = 0;
	unsigned long v = (unsigned long)pid;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof(t));
	while (n)
		buf[l++] = t[--n];
	buf[l++] = '\n';
	return l;
}

static bool move(const char *procs, pid_t pid)
{
	char b[24];
	size_t l = pid_str(pid, b);
	int fd = open(procs, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, b, l) == (ssize_t)l;

	if (fd >= 0)
		close(fd);
	return ok;
}

void xl_memcg_enter(const struct xl_memcg *m)
{
	if (m && m->procs)
		move(m->procs, getpid());
}

void xl_memcg_adopt(struct xl_memcg *m, pid_t pid)
{
	if (m && m->procs)
		m->joined = move(m->procs, pid);
}

static int64_t read_num(const char *dir, const char *file)
{
	char *p = xl_asprintf("%s/%s", dir, file), *v = xl_read_file(p, NULL, 64), *end;
	long long n = -1;

	if (v) {
		n = strtoll(v, &end, 10);
		if (end == v || n < 0)
			n = -1;
	}
	free(v);
	free(p);
	return n;
}

int64_t xl_memcg_peak(const struct xl_memcg *m, char *source, size_t n)
{
	const char *file;
	int64_t v;

	if (!m || !m->dir || !m->joined)
		return -1;
	file = peak_file(m->version);
	v = read_num(m->dir, file);
	/* the cgroup xlaunch was alone in: its peak is the launch's only
	 * where it rose during the launch (the kernel keeps one peak for the
	 * cgroup's whole life); otherwise the sampled figure stands */
	if (m->own && v <= m->base_peak)
		return -1;
	if (v > 0 && m->own)
		snprintf(source, n, "the kernel: cgroup v%d %s of the cgroup xlaunch and the job were "
			 "alone in (%.80s; xlaunch's own memory included)", m->version, file, m->dir);
	else if (v > 0)
		snprintf(source, n, "the kernel: cgroup v%d %s of the launch's own cgroup", m->version,
			 file);
	return v > 0 ? v : -1;
}

static long read_oom_kills(const char *dir, int version)
{
	char *p, *ev, *k;
	long count = -1;

	p = xl_asprintf("%s/%s", dir, version == 1 ? "memory.oom_control" : "memory.events");
	ev = xl_read_file(p, NULL, 1 << 14);
	/* "oom_kill N" in both (v1 since Linux 4.13) */
	if (ev && (k = strstr(ev, "oom_kill ")))
		count = strtol(k + 9, NULL, 10);
	free(ev);
	free(p);
	return count;
}

long xl_memcg_oom_kills(const struct xl_memcg *m)
{
	long count;

	if (!m || !m->dir)
		return -1;
	count = read_oom_kills(m->dir, m->version);
	/* in the cgroup xlaunch was alone in, those of this launch only */
	if (m->own && count >= 0)
		return m->base_ooms >= 0 && count >= m->base_ooms ? count - m->base_ooms : -1;
	return count;
}

void xl_memcg_close(struct xl_memcg *m)
{
	if (m->own) {
		/* not ours to remove */
	} else if (m->dir) {
		/* its last processes may still be leaving */
		for (int i = 0; i < 50 && rmdir(m->dir) < 0 && errno == EBUSY; i++) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (access(m->dir, F_OK) == 0)
			xl_warn("cannot remove %s: processes of the job are still in it", m->dir);
	}
	free(m->dir);
	free(m->procs);
	memset(m, 0, sizeof(*m));
}
