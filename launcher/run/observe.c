/* observe.c - what a launch used, from outside the job (see observe.h). */
#include "launcher/run/observe.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the source of a device peak NVML saw */
static const char NVML_SOURCE[] = "NVML: the group's processes on their busiest device, sampled";

/* ---- NVML, through dlopen ------------------------------------------------------------ */

/* The few NVML entry points used, declared here (NVML's C API: integer
 * status codes, 0 success, 7 NVML_ERROR_INSUFFICIENT_SIZE; an opaque device
 * handle; per-process records of pid and used GPU memory, the _v2/_v3
 * functions with two more 32-bit fields after the memory). */
typedef int nvml_ret;
typedef struct nvml_device *nvml_device;
struct nvml_proc_v2 {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};
struct nvml_proc_v1 {
	unsigned int pid;
	unsigned long long used;
};
#define NVML_OK 0
#define NVML_INSUFFICIENT 7
#define NVML_NOT_AVAILABLE (~0ULL)
#define NVML_MAX_PROCS 1024

struct xl_nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	nvml_ret (*procs_v2)(nvml_device, unsigned int *, struct nvml_proc_v2 *);
	nvml_ret (*procs_v1)(nvml_device, unsigned int *, struct nvml_proc_v1 *);
	const char *(*errstr)(nvml_ret);
	unsigned int ndev;
};

static const char *nvml_err(const struct xl_nvml *n, nvml_ret r, char *buf, size_t size)
{
	const char *s = n->errstr ? n->errstr(r) : NULL;

	snprintf(buf, size, "%s (%d)", s ? s : "error", r);
	return buf;
}

/* Loads libnvidia-ml.so.1 (LD_LIBRARY_PATH applies); NULL with *why. */
static struct xl_nvml *nvml_load(char *why, size_t size)
{
	struct xl_nvml *n = xl_calloc(1, sizeof(*n));
	char eb[120];
	nvml_ret r;

	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, size, "absent: %s", dlerror());
		free(n);
		return NULL;
	}
#define SYM(field, name) (*(void **)&n->field = dlsym(n->lib, name))
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(procs_v2, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->procs_v2)
		SYM(procs_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->procs_v2)
		SYM(procs_v1, "nvmlDeviceGetComputeRunningProcesses");
	SYM(errstr, "nvmlErrorString");
#undef SYM
	if (!n->init || !n->count || !n->handle || (!n->procs_v2 && !n->procs_v1)) {
		snprintf(why, size, "failed: libnvidia-ml.so.1 lacks the per-process memory functions");
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	if ((r = n->init()) != NVML_OK) {
		snprintf(why, size, "failed: nvmlInit: %s", nvml_err(n, r, eb, sizeof(eb)));
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	if ((r = n->count(&n->ndev)) != NVML_OK) {
		snprintf(why, size, "failed: nvmlDeviceGetCount: %s", nvml_err(n, r, eb, sizeof(eb)));
		if (n->shutdown)
			n->shutdown();
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	snprintf(why, size, "loaded: %u device%s", n->ndev, n->ndev == 1 ? "" : "s");
	return n;
}

static void nvml_unload(struct xl_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

static bool member(const struct xl_observe *o, pid_t pid)
{
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

/* The group's memory on its busiest device: per device, the sum over the
 * group's processes; the largest of those.  -1 when no process of the
 * group is seen (processes of another PID namespace are not matched). */
static int64_t nvml_sample(struct xl_observe *o)
{
	struct xl_nvml *n = o->nvml;
	int64_t best = -1;
	char eb[120];

	for (unsigned d = 0; d < n->ndev; d++) {
		nvml_device dev;
		unsigned int cnt = 64;
		int64_t sum = 0;
		bool seen = false;
		nvml_ret r;

		if (n->handle(d, &dev) != NVML_OK)
			continue;
		for (;;) {
			/* grow the buffer while NVML says it is too small; both
			 * layouts begin with the pid and the memory used */
			size_t esz = n->procs_v2 ? sizeof(struct nvml_proc_v2)
						 : sizeof(struct nvml_proc_v1);
			unsigned char *buf = xl_calloc(cnt, esz);
			unsigned int got = cnt;

			r = n->procs_v2 ? n->procs_v2(dev, &got, (struct nvml_proc_v2 *)(void *)buf)
					: n->procs_v1(dev, &got, (struct nvml_proc_v1 *)(void *)buf);
			if (r == NVML_OK)
				for (unsigned i = 0; i < got && i < cnt; i++) {
					const struct nvml_proc_v1 *e =
						(const struct nvml_proc_v1 *)(void *)(buf + i * esz);

					if (member(o, (pid_t)e->pid) && e->used != NVML_NOT_AVAILABLE) {
						sum += (int64_t)e->used;
						seen = true;
					}
				}
			free(buf);
			if (r == NVML_INSUFFICIENT && got > cnt && got <= NVML_MAX_PROCS) {
				cnt = got;
				continue;
			}
			break;
		}
		if (r != NVML_OK && r != NVML_INSUFFICIENT)
			snprintf(o->nvml_state, sizeof(o->nvml_state), "failed on device %u: %s", d,
				 nvml_err(n, r, eb, sizeof(eb)));
		if (seen && sum > best)
			best = sum;
	}
	return best;
}

/* ---- the process group ---------------------------------------------------------------- */

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
	o->nvml = nvml_load(o->nvml_state, sizeof(o->nvml_state));
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
		int64_t d = nvml_sample(o);

		o->nvml_samples++;
		if (d > o->device_peak)
			o->device_peak = d;
		o->nvml_next_at = now + fmax(o->interval_s * 5, 0.5);
	}
}

void xl_observe_release(struct xl_observe *o)
{
	nvml_unload(o->nvml);
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

/* ---- XLA's memory-usage reports --------------------------------------------------------- */

char *xl_xla_dump_tokens(const char *dir)
{
	/* the report comes with any dump; text is the smallest, without
	 * metadata smaller still.  No --xla_dump_max_hlo_modules: XLA counts
	 * the modules a process dumped, deleted or not, and past its cap
	 * writes an error line per file it skips; the reader keeps the dump
	 * small instead (dump.c) */
	return xl_asprintf("--xla_dump_to=%s --xla_dump_hlo_as_text --xla_dump_disable_metadata", dir);
}

/* Whether every runtime of etc/cachekeys.yaml leaves flag NAME ("--xla_x")
 * out of its persistent-cache key: in each one's exclude list and none of
 * its exceptions.  *why says which does not. */
static bool out_of_every_key(const struct xl_ynode *rules, const char *name, char *why, size_t size)
{
	size_t runtimes = 0;

	for (size_t i = 0; rules && rules->kind == XL_Y_MAP && i + 1 < rules->n; i += 2) {
		const struct xl_ynode *rt = rules->items[i + 1];
		const struct xl_ynode *flags = xl_ymap_get(rt, "flags");
		const struct xl_ynode *ex = xl_ymap_get(flags, "exclude");
		const struct xl_ynode *exc = xl_ymap_get(flags, "exceptions");
		bool excluded = false;

		if (!flags)
			continue;
		runtimes++;
		for (size_t k = 0; ex && ex->kind == XL_Y_SEQ && k < ex->n; k++)
			if (ex->items[k]->kind == XL_Y_SCALAR && strcmp(ex->items[k]->str, name) == 0)
				excluded = true;
		for (size_t k = 0; exc && exc->kind == XL_Y_SEQ && k < exc->n; k++) {
			const struct xl_ynode *f = xl_ymap_get(exc->items[k], "flag");

			if (f && f->kind == XL_Y_SCALAR && strcmp(f->str, name) == 0)
				excluded = false;
		}
		if (!excluded) {
			snprintf(why, size, "not asked: %s would enter %s's persistent-cache key"
				 " (etc/cachekeys.yaml)", name, rules->items[i]->str);
			return false;
		}
	}
	if (!runtimes) {
		snprintf(why, size, "not asked: etc/cachekeys.yaml names no runtime");
		return false;
	}
	return true;
}

static bool xla_job(const struct xl_profile *p, const json_t *parts)
{
	const json_t *pk = json_object_get(json_object_get(parts, "bundle"), "packages");
	static const char *const prefixes[] = { "XLA_", "JAX_", "PJRT_", "TPU_", "LIBTPU_", NULL };

	if (json_object_get(pk, "jax") || json_object_get(pk, "jaxlib") ||
	    json_object_get(pk, "torch-xla"))
		return true;
	for (size_t i = 0; i < p->nvars; i++)
		for (size_t k = 0; prefixes[k]; k++)
			if (xl_startswith(p->vars[i].name, prefixes[k]))
				return true;
	return false;
}

/* The index of NAME=... in envp, or -1. */
static ssize_t env_index(char **envp, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], name, l) == 0 && envp[i][l] == '=')
			return (ssize_t)i;
	return -1;
}

bool xl_xla_dump_keyless(const char *file, char *why, size_t size)
{
	static const char *const names[] = {
		"--xla_dump_to", "--xla_dump_hlo_as_text", "--xla_dump_disable_metadata", NULL,
	};
	size_t len;
	char *err = NULL, *data = xl_read_file(file, &len, 1 << 20);
	struct xl_ynode *rules = data ? xl_yaml_parse(data, len, &err) : NULL;
	bool ok = rules != NULL;

	free(data);
	free(err);
	if (!rules)
		snprintf(why, size, "not asked: cannot read '%s'", file);
	for (size_t i = 0; ok && names[i]; i++)
		ok = out_of_every_key(rules, names[i], why, size);
	xl_ynode_free(rules);
	return ok;
}

void xl_xla_dump_setup(const struct xl_profile *p, const json_t *parts, const char *run_dir,
		       bool disabled, char ***envp, struct xl_xla_dump *d)
{
	ssize_t at = env_index(*envp, "XLA_FLAGS");
	const char *cur = at >= 0 ? strchr((*envp)[at], '=') + 1 : "";
	struct xl_tokens toks = { NULL, 0 };
	char *err = NULL;
	bool ok;

	memset(d, 0, sizeof(*d));
	if (disabled) {
		snprintf(d->why, sizeof(d->why), "not asked (--no-xla-dump)");
		return;
	}
	if (p->policy.timing) {
		snprintf(d->why, sizeof(d->why), "not asked: policy 'timing: true'");
		return;
	}
	if (!xla_job(p, parts)) {
		snprintf(d->why, sizeof(d->why), "not asked: not an XLA job");
		return;
	}
	if (*cur && cur[strspn(cur, " \t\n")] != '-' && cur[strspn(cur, " \t\n")]) {
		snprintf(d->why, sizeof(d->why), "not asked: XLA_FLAGS names a flags file");
		return;
	}
	if (xl_flags_tokenize(cur, &toks, &err)) {
		for (size_t i = 0; i < toks.n; i++)
			if (toks.v[i].kind == XL_TOK_FLAG && strcmp(toks.v[i].name, "xla_dump_to") == 0 &&
			    toks.v[i].value && *toks.v[i].value) {
				/* the user's own dump: read, never pruned */
				free(d->dir);
				d->dir = xl_strdup(toks.v[i].value);
				d->user = true;
			}
		xl_tokens_release(&toks);
	}
	free(err);
	if (d->dir && (strcmp(d->dir, "-") == 0 || strcmp(d->dir, "sponge") == 0)) {
		/* XLA writes to its stdout, or to a test runner's directory */
		snprintf(d->why, sizeof(d->why), "not read: --xla_dump_to=%s is not a directory",
			 d->dir);
		free(d->dir);
		d->dir = NULL;
	}
	if (d->dir || d->user)
		return;
	ok = xl_xla_dump_keyless_rules(xl_ck_runtimes, xl_ck_nruntimes, d->why, sizeof(d->why));
	if (!ok)
		return;
	d->dir = xl_asprintf("%s/xla-dump", run_dir);
	d->ours = true;
	d->tokens = xl_xla_dump_tokens(d->dir);
	{
		char *v = *cur ? xl_asprintf("XLA_FLAGS=%s %s", cur, d->tokens)
			       : xl_asprintf("XLA_FLAGS=%s", d->tokens);

		if (at >= 0) {
			free((*envp)[at]);
			(*envp)[at] = v;
		} else {
			size_t n = 0;

			while ((*envp)[n])
				n++;
			*envp = xl_realloc(*envp, (n + 2) * sizeof(char *));
			(*envp)[n] = v;
			(*envp)[n + 1] = NULL;
		}
	}
}

void xl_xla_dump_release(struct xl_xla_dump *d)
{
	free(d->dir);
	free(d->tokens);
	memset(d, 0, sizeof(*d));
}

/* ---- the job's own evidence --------------------------------------------------------------- */

int64_t xl_oom_request_bytes(const char *line)
{
	static const char *const keys[] = {
		"allocating ", "allocate ", "Attempting to allocate ", "Tried to allocate ", NULL,
	};

	for (size_t k = 0; line && keys[k]; k++) {
		const char *p = line;

		while ((p = strstr(p, keys[k]))) {
			char *end;
			double v;
			uint64_t mult = 1;

			p += strlen(keys[k]);
			v = strtod(p, &end);
			if (end == p || !(v > 0))
				continue;
			while (*end == ' ')
				end++;
			switch (toupper((unsigned char)*end)) {
			case 'K': mult = 1024; break;
			case 'M': mult = 1024 * 1024; break;
			case 'G': mult = 1024ULL * 1024 * 1024; break;
			case 'T': mult = 1024ULL * 1024 * 1024 * 1024; break;
			case 'B': mult = 1; break;
			default:
				/* a bare number is bytes only when the message says so
				 * further on (XLA: "N bytes") or ends there */
				if (*end && !isspace((unsigned char)*end) && *end != '.')
					continue;
			}
			if (v * (double)mult >= 9.2e18)
				continue;
			return (int64_t)(v * (double)mult);
		}
	}
	return -1;
}

static bool kind_of_source(const char *source, enum calib_kind *k)
{
	static const struct { const char *source; enum calib_kind kind; } map[] = {
		{ "device_memory_stats", CALIB_KIND_DEVICE_PEAK },
		{ "torch_xla_memory_info", CALIB_KIND_DEVICE_PEAK },
		{ "torch_cuda_max_allocated", CALIB_KIND_DEVICE_PEAK },
		{ "host_rss", CALIB_KIND_HOST_PEAK_RSS },
	};

	for (size_t i = 0; source && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(source, map[i].source) == 0) {
			*k = map[i].kind;
			return true;
		}
	return false;
}

static void keep_larger(struct calib_attempt *a, enum calib_kind k, int64_t bytes, const char *src)
{
	const struct calib_figure *f = calib_attempt_figure(a, false, k);

	if (bytes < 0 || (f && f->bytes >= bytes))
		return;
	calib_attempt_add_figure(a, false, k, bytes, CALIB_BASIS_NONE, CALIB_UNSET, src);
}

/* The kind a peak of the job's report file is of: memory_kind when it
 * names one, else the helper's source; a kind xlaunch cannot tell is
 * kept, and related to nothing. */
static enum calib_kind peak_kind(const struct xl_jobreport_peak *p)
{
	enum calib_kind k;

	if (p->has_memory_kind ? calib_kind_parse(p->memory_kind, &k)
			       : kind_of_source(p->has_source ? p->source : NULL, &k))
		return k;
	return CALIB_KIND_UNCLASSIFIED;
}

static void jobreport_what(const char *source, bool has, char *what, size_t size)
{
	snprintf(what, size, "the job's report (%.60s)", has ? source : "no source");
}

void xl_jobreport_figures(const struct xl_jobreport *r, struct calib_attempt *a)
{
	const struct xl_jobreport_peak *next;
	bool xla_done = r->xla_per_device_bytes < 0;
	long after = 0;
	char what[96];

	/* in the order of the lines that gave them, each kind keeping the
	 * first line of its largest figure */
	do {
		next = NULL;
		for (size_t i = 0; i < r->npeaks; i++)
			if (r->peaks[i].line > after && (!next || r->peaks[i].line < next->line))
				next = &r->peaks[i];
		if (!xla_done && (!next || r->xla_per_device_line < next->line)) {
			/* XLA's buffers per device, unless a line before it gave
			 * the kind itself */
			bool before = false;

			for (size_t i = 0; i < r->npeaks; i++)
				before |= r->peaks[i].first_line < r->xla_per_device_line &&
					  peak_kind(&r->peaks[i]) == CALIB_KIND_XLA_BUFFERS;
			jobreport_what("xla_memory_analysis", true, what, sizeof(what));
			if (!before)
				keep_larger(a, CALIB_KIND_XLA_BUFFERS, r->xla_per_device_bytes, what);
			xla_done = true;
		}
		if (next) {
			jobreport_what(next->source, next->has_source, what, sizeof(what));
			keep_larger(a, peak_kind(next), next->bytes, what);
			after = next->line;
		}
	} while (next);
}

/* ---- the attempt's figures -------------------------------------------------------------- */

void xl_observe_figures(struct calib_attempt *a, const struct xl_observe *o,
			long long wait4_rss, const struct xl_jobreport *jobreport,
			const char *oom_line)
{
	char src[160];
	int64_t rss = o->rss_sum_peak;

	if (o->rss_one_peak > rss)
		rss = o->rss_one_peak;
	if (o->samples) {
		snprintf(src, sizeof(src), "process group, sampled every %g ms (%u samples, up to %u"
			 " processes)", o->interval_s * 1000, o->samples, o->max_members);
		if (wait4_rss > rss) {
			rss = wait4_rss;
			snprintf(src, sizeof(src), "the largest process (wait4), above the group's samples");
		}
	} else {
		rss = wait4_rss;
		snprintf(src, sizeof(src), "the largest process (wait4; sampling off)");
	}
	if (rss > 0)
		calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_RSS, rss, CALIB_BASIS_NONE,
					 CALIB_UNSET, src);
	if (o->vm_peak > 0) {
		snprintf(src, sizeof(src), "the largest process's VmPeak, sampled every %g ms",
			 o->interval_s * 1000);
		calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_VM, o->vm_peak,
					 CALIB_BASIS_NONE, CALIB_UNSET, src);
	}
	if (o->device_peak >= 0)
		calib_attempt_add_figure(a, false, CALIB_KIND_DEVICE_PEAK, o->device_peak,
					 CALIB_BASIS_NONE, CALIB_UNSET, NVML_SOURCE);
	if (jobreport)
		xl_jobreport_figures(jobreport, a);
	if (oom_line) {
		int64_t req = xl_oom_request_bytes(oom_line);

		if (req > 0)
			calib_attempt_add_figure(a, false, CALIB_KIND_OOM_REQUEST, req, CALIB_BASIS_NONE,
						 CALIB_UNSET, "the runtime's out-of-memory message");
	}
}

void xl_observe_headline(struct calib_attempt *a, const struct calib_estimate *e)
{
	static const enum calib_kind order[] = {
		CALIB_KIND_DEVICE_PEAK, CALIB_KIND_HOST_PEAK_VM, CALIB_KIND_HOST_PEAK_RSS,
	};
	const struct calib_figure *f = NULL;

	/* a job NVML saw on a device, with nothing predicted for it: its
	 * device peak (a GPU job launched before any probe is judged in the
	 * host's kind, and its host peak tells nothing of its OOM) */
	if (!e || !e->known) {
		f = calib_attempt_figure(a, false, CALIB_KIND_DEVICE_PEAK);
		if (f && (!f->source || strcmp(f->source, NVML_SOURCE) != 0))
			f = NULL;
	}
	if (!f && e)
		f = calib_attempt_figure(a, false, e->kind);
	/* the kind the launch was judged in, else the most telling one seen */
	for (size_t i = 0; !f && i < sizeof(order) / sizeof(order[0]); i++)
		f = calib_attempt_figure(a, false, order[i]);
	if (f) {
		a->observed_bytes = f->bytes;
		a->observed_kind = f->kind;
	}
	if (e && e->known) {
		a->predicted_bytes = e->predicted_bytes;
		a->predicted_kind = e->kind;
		a->predicted_basis = e->basis;
		calib_attempt_add_figure(a, true, e->kind, e->predicted_bytes, e->basis, e->error_bytes,
					 e->summary);
	}
}

int64_t xl_xla_modules_figure(json_t *mods, const json_t *prev, const char *prev_run,
			      char *source, size_t size)
{
	const char *k, *largest = NULL;
	json_t *v;
	int64_t best = -1;
	size_t fresh = json_object_size(mods), reused = 0;

	/* a program loaded from a persistent cache is not compiled, and XLA
	 * writes no report for it: its last figure stands */
	json_object_foreach((json_t *)prev, k, v)
		if (!json_object_get(mods, k) && json_is_integer(v)) {
			json_object_set(mods, k, v);
			reused++;
		}
	json_object_foreach(mods, k, v)
		if (json_integer_value(v) > best) {
			best = json_integer_value(v);
			largest = k;
		}
	if (best < 0)
		return -1;
	if (!reused)
		snprintf(source, size, "XLA memory-usage report of %s (%zu program%s compiled)", largest,
			 fresh, fresh == 1 ? "" : "s");
	else if (!fresh)
		snprintf(source, size, "XLA memory-usage report of %s seen in run %s, reused: nothing"
			 " compiled (persistent-cache hit)", largest, prev_run);
	else
		snprintf(source, size, "XLA memory-usage report of %s (%zu program%s compiled, %zu"
			 " reused from run %s)", largest, fresh, fresh == 1 ? "" : "s", reused, prev_run);
	return best;
}
