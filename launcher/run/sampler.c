/* sampler.c - the memory of a launch's process group, sampled from /proc
 * as the job runs (see sampler.h). */
#include "launcher/run/sampler.h"
#include "launcher/run/nvml.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool member(const struct xl_observe *o, pid_t pid)
{
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

void xl_observe_init(struct xl_observe *o, double interval_s)
{
	const char *ms = getenv("XLAUNCH_SAMPLE_MS");

	memset(o, 0, sizeof(*o));
	o->interval_s = interval_s;
	if (ms && *ms) {
		char *end;
		double v = strtod(ms, &end);

		if (!*end && v >= 0 && v < 3.6e6)
			o->interval_s = v / 1000.0;
	}
	o->rss_sum_peak = o->rss_one_peak = o->vm_peak = o->device_peak = -1;
	snprintf(o->nvml_state, sizeof(o->nvml_state), "not asked (sampling off)");
}

static void add_pid(struct xl_observe *o, pid_t pid)
{
	if (member(o, pid))
		return;
	if (o->npids == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 16;
		o->pids = xl_realloc(o->pids, o->cap * sizeof(*o->pids));
	}
	o->pids[o->npids++] = pid;
}

/* The members: the group, and descendants of the root wherever they went. */
static void scan(struct xl_observe *o)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct { pid_t pid, ppid; } *all = NULL;
	size_t n = 0, cap = 0;
	bool grew = true;

	o->npids = 0;
	add_pid(o, o->root);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[64], buf[512], *rp;
		pid_t pid, ppid, pgrp;
		int fd;
		ssize_t len;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* pid (comm) state ppid pgrp ...: comm may hold anything */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %*c %d %d", &ppid, &pgrp) != 2)
			continue;
		if (pgrp == o->root)
			add_pid(o, pid);
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			all = xl_realloc(all, cap * sizeof(*all));
		}
		all[n].pid = pid;
		all[n].ppid = ppid;
		n++;
	}
	closedir(d);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++)
			if (!member(o, all[i].pid) && member(o, all[i].ppid)) {
				add_pid(o, all[i].pid);
				grew = true;
			}
	}
	free(all);
	o->scans++;
	if (o->npids > o->max_members)
		o->max_members = (unsigned)o->npids;
}

/* VmPeak, VmHWM and VmRSS of pid in bytes; false when it is gone. */
static bool status_of(pid_t pid, int64_t *peak, int64_t *hwm, int64_t *rss)
{
	char path[64], buf[4096];
	int fd;
	ssize_t len;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	*peak = *hwm = *rss = -1;
	if ((p = strstr(buf, "\nVmPeak:")))
		*peak = strtoll(p + 8, NULL, 10) * 1024;
	if ((p = strstr(buf, "\nVmHWM:")))
		*hwm = strtoll(p + 7, NULL, 10) * 1024;
	if ((p = strstr(buf, "\nVmRSS:")))
		*rss = strtoll(p + 7, NULL, 10) * 1024;
	return *rss >= 0;   /* a zombie has no memory lines */
}

void xl_observe_begin(struct xl_observe *o, pid_t child)
{
	o->root = child;
	o->start = xl_mono();
	o->next_at = o->next_scan_at = o->start;
	o->nvml_next_at = o->start + 0.5;
	if (o->interval_s <= 0) {
		snprintf(o->nvml_state, sizeof(o->nvml_state), "not asked (sampling off)");
		return;
	}
	o->nvml = xl_nvml_load(o->nvml_state, sizeof(o->nvml_state));
}

int xl_observe_timeout_ms(const struct xl_observe *o, double now)
{
	double left;

	if (o->interval_s <= 0 || !o->root)
		return -1;
	left = o->next_at - now;
	return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

void xl_observe_tick(struct xl_observe *o, double now)
{
	int64_t sum = 0;

	if (o->interval_s <= 0 || !o->root || now < o->next_at)
		return;
	o->next_at = now + o->interval_s;
	/* members: every sample for the first second, then once a second */
	if (now >= o->next_scan_at) {
		scan(o);
		o->next_scan_at = now - o->start < 1.0 ? now : now + 1.0;
	}
	for (size_t i = 0; i < o->npids; i++) {
		int64_t peak, hwm, rss;

		if (!status_of(o->pids[i], &peak, &hwm, &rss))
			continue;
		sum += rss;
		if (peak > o->vm_peak)
			o->vm_peak = peak;
		if (hwm > o->rss_one_peak)
			o->rss_one_peak = hwm;
	}
	if (sum > o->rss_sum_peak)
		o->rss_sum_peak = sum;
	o->samples++;
	if (o->nvml && now >= o->nvml_next_at) {
		int64_t d = xl_nvml_sample(o->nvml, o->pids, o->npids, o->nvml_state,
					   sizeof(o->nvml_state));

		o->nvml_samples++;
		if (d > o->device_peak)
			o->device_peak = d;
		o->nvml_next_at = now + fmax(o->interval_s * 5, 0.5);
	}
}

void xl_observe_release(struct xl_observe *o)
{
	xl_nvml_unload(o->nvml);
	free(o->pids);
	o->nvml = NULL;
	o->pids = NULL;
}

const char *xl_observe_tpu_state(void)
{
	return "unavailable: libtpu serves its runtime metrics over gRPC, which this build does"
	       " not read";
}

static json_t *bytes_or_null(int64_t v)
{
	return v >= 0 ? json_integer((json_int_t)v) : json_null();
}

json_t *xl_observe_json(const struct xl_observe *o)
{
	return json_pack("{s:f, s:I, s:I, s:o, s:o, s:o, s:{s:s, s:I, s:o}, s:s}",
			 "interval_s", o->interval_s, "samples", (json_int_t)o->samples,
			 "members_max", (json_int_t)o->max_members,
			 "rss_sum_peak_bytes", bytes_or_null(o->rss_sum_peak),
			 "rss_one_peak_bytes", bytes_or_null(o->rss_one_peak),
			 "vm_peak_bytes", bytes_or_null(o->vm_peak),
			 "nvml", "state", o->nvml_state, "samples", (json_int_t)o->nvml_samples,
			 "device_peak_bytes", bytes_or_null(o->device_peak),
			 "tpu", xl_observe_tpu_state());
}
