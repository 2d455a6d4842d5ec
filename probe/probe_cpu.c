/*
 * probe_cpu.c - the cpu backend: what the host has (cores, memory, caches,
 * ISA features) and what it delivers: a multi-threaded STREAM triad over a
 * working set of four times the last-level cache (a memory bandwidth, not a
 * cache bandwidth) and a multi-threaded SGEMM for FLOP/s, both checked
 * against a scalar reference.  The timed passes stop at a time budget, so
 * the probe stays quick whatever the host.
 */
#include "probe/probe.h"
#include "kernels/cpu/cpu_kernels.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#define SGEMM_N 256
#define MAX_THREADS 256
#define MIN_PASSES 3        /* timed triad passes, at least (time allowing)... */
#define MAX_PASSES 20       /* ...and at most */
#define MEASURE_S 0.5       /* seconds the timed passes may take, at most */
#define MIB (1024ull * 1024)

/* ---- the host's caches and memory ---------------------------------------- */

/* "48K", "2048K", "32M", "1G" or a plain number of bytes; 0 when unreadable. */
static uint64_t cache_size(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s)
		return 0;
	v = strtoull(s, &end, 10);
	if (end == s)
		return 0;
	switch (*end) {
	case 'K': case 'k': return v << 10;
	case 'M': case 'm': return v << 20;
	case 'G': case 'g': return v << 30;
	default: return v;
	}
}

/* The first line of dir/name, trimmed; NULL when unreadable.  Caller frees. */
static char *read_line(const char *dir, const char *name)
{
	char *path = xl_asprintf("%s/%s", dir, name);
	char *t = xl_read_file(path, NULL, 4096);

	free(path);
	if (t)
		t[strcspn(t, "\r\n")] = '\0';
	return t;
}

static void cache_from_sysfs(const char *root, const cpu_set_t *only, struct xl_host_cache *c)
{
	struct xl_strv seen = XL_STRV_INIT; /* "shared_cpu_list" of each instance */
	DIR *d = opendir(root);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *cdir;
		int cpu;
		char tail;

		if (sscanf(e->d_name, "cpu%d%c", &cpu, &tail) != 1 || cpu < 0)
			continue;
		if (only && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, only)))
			continue;
		cdir = xl_asprintf("%s/%s/cache", root, e->d_name);
		for (int k = 0; k < 32; k++) {
			char *idx = xl_asprintf("%s/index%d", cdir, k);
			char *level = read_line(idx, "level"), *type = read_line(idx, "type");
			char *size = read_line(idx, "size"), *shared = read_line(idx, "shared_cpu_list");
			int lv = level ? atoi(level) : 0;
			uint64_t bytes = cache_size(size);
			bool known = level || type || size;

			if (lv > 0 && bytes && type && strcmp(type, "Instruction") != 0) {
				/* no shared_cpu_list: unshared as far as we know */
				char *key = xl_strdup(shared && *shared ? shared : e->d_name);

				if (lv > c->level) {
					c->level = lv;
					c->llc_bytes = 0;
					c->instances = 0;
					c->instance_bytes = 0;
					xl_strv_release(&seen);
				}
				if (lv == c->level && !xl_strv_contains(&seen, key)) {
					xl_strv_push(&seen, key);
					c->llc_bytes += bytes;
					c->instances++;
					if (bytes > c->instance_bytes)
						c->instance_bytes = bytes;
				}
				free(key);
			}
			free(level);
			free(type);
			free(size);
			free(shared);
			free(idx);
			if (!known)
				break;
		}
		free(cdir);
	}
	closedir(d);
	xl_strv_release(&seen);
	if (c->llc_bytes)
		c->source = "sysfs";
}

void xl_host_cache_read(const char *root, const cpu_set_t *only, struct xl_host_cache *c)
{
	char *sys = root ? NULL : xl_host_path("/sys/devices/system/cpu");

	memset(c, 0, sizeof(*c));
	c->source = "unknown";
	cache_from_sysfs(root ? root : sys, only, c);
	free(sys);
	/* a host root stands for the whole host: its sysfs is all there is */
	if (c->llc_bytes || root || xl_host_root_set())
		return;
	/* no sysfs cache directory (some VMs and ARM hosts): what the C library
	 * knows, one instance of the highest level */
	{
		static const struct { int name, level; } t[] = {
#ifdef _SC_LEVEL4_CACHE_SIZE
			{ _SC_LEVEL4_CACHE_SIZE, 4 },
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
			{ _SC_LEVEL3_CACHE_SIZE, 3 },
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
			{ _SC_LEVEL2_CACHE_SIZE, 2 },
#endif
			{ -1, 0 },
		};

		for (int i = 0; t[i].name >= 0; i++) {
			long v = sysconf(t[i].name);

			if (v > 0) {
				c->llc_bytes = c->instance_bytes = (uint64_t)v;
				c->level = t[i].level;
				c->instances = 1;
				c->source = "sysconf";
				return;
			}
		}
	}
}

uint64_t xl_host_working_set(const struct xl_host_cache *c, uint64_t avail_bytes,
			     const char **rule)
{
	uint64_t ws;

	if (!c->llc_bytes) {
		ws = 1024 * MIB;
		*rule = "1 GiB (the last-level cache is unknown)";
	} else if (c->llc_bytes * 4 < 64 * MIB) {
		ws = 64 * MIB;
		*rule = "64 MiB (the floor; more than 4 x the last-level cache)";
	} else {
		ws = c->llc_bytes * 4;
		*rule = "4 x the last-level cache";
	}
	if (avail_bytes && ws > avail_bytes / 4) {
		ws = avail_bytes / 4;
		*rule = "a quarter of the available memory (less than 4 x the last-level cache)";
	}
	return ws;
}

uint64_t xl_host_mem_available(void)
{
	char *t = xl_read_host_file("/proc/meminfo", NULL, 1 << 16), *p;
	uint64_t v = 0;

	if (t && (p = strstr(t, "MemAvailable:")))
		v = strtoull(p + strlen("MemAvailable:"), NULL, 10) * 1024;
	free(t);
	return v;
}

int xl_host_cpus(cpu_set_t *set)
{
	long n;

	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(*set), set) == 0 && CPU_COUNT(set) > 0)
		return CPU_COUNT(set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, set);
	return (int)n;
}

/* ---- running the kernels on every thread ---------------------------------- */

enum { JOB_INIT, JOB_TRIAD, JOB_CHECK, JOB_SGEMM };

struct job {
	int kind;
	size_t lo, hi;
	double *a, *b, *c;
	double s;
	float *C;
	const float *A, *B;
	size_t n;
	int cpu;       /* pinned to this CPU; -1: not pinned */
	size_t bad;    /* JOB_CHECK: the first wrong element, or SIZE_MAX */
	double t0, t1; /* when its part began and ended (xl_mono) */
};

/* One thread's part of a job, timed. */
static void run_part(struct job *j)
{
	j->t0 = xl_mono();
	switch (j->kind) {
	case JOB_INIT:
		/* first touch by the thread that streams these pages later, so
		 * they sit on its memory node */
		for (size_t i = j->lo; i < j->hi; i++) {
			j->a[i] = NAN;
			j->b[i] = (double)(i & 1023) * 0.25;
			j->c[i] = (double)(i & 63) - 31.0;
		}
		break;
	case JOB_TRIAD:
		kern_triad(j->a, j->b, j->c, j->s, j->lo, j->hi);
		break;
	case JOB_CHECK:
		j->bad = SIZE_MAX;
		for (size_t i = j->lo; i < j->hi; i++) {
			double want = (double)(i & 1023) * 0.25 + j->s * ((double)(i & 63) - 31.0);

			if (!(fabs(j->a[i] - want) <= 1e-12 * fabs(want))) {
				j->bad = i;
				break;
			}
		}
		break;
	case JOB_SGEMM:
		kern_sgemm(j->C, j->A, j->B, j->n, j->lo, j->hi);
		break;
	}
	j->t1 = xl_mono();
}

/* The probe's threads: started once, one per CPU and pinned to it, each
 * sleeping until the next job is handed out, as a plain multi-threaded
 * triad runs.  Threads started afresh for every pass had to wait for the
 * scheduler beside a busy host's other work and ran their pass at about
 * half the speed a woken thread gets (probe_cpu_bandwidth under make
 * test-load).  One probe runs per process, so the pool is the file's. */
static struct {
	pthread_t th[MAX_THREADS];
	pthread_mutex_t m;
	pthread_cond_t go, done;
	struct job *jobs;
	int started;
	unsigned gen;            /* the job handed out last */
	int remaining;           /* threads still at it */
	bool quit;
} pool = { .m = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER,
	   .done = PTHREAD_COND_INITIALIZER };

static void *worker(void *arg)
{
	struct job *j = arg;
	unsigned seen = 0;

	/* j is rewritten under the lock for each job, so it is read under it */
	pthread_mutex_lock(&pool.m);
	if (j->cpu >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(j->cpu, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	for (;;) {
		while (pool.gen == seen && !pool.quit)
			pthread_cond_wait(&pool.go, &pool.m);
		if (pool.quit)
			break;
		seen = pool.gen;
		pthread_mutex_unlock(&pool.m);
		run_part(j);
		pthread_mutex_lock(&pool.m);
		if (--pool.remaining == 0)
			pthread_cond_signal(&pool.done);
	}
	pthread_mutex_unlock(&pool.m);
	return NULL;
}

static void pool_stop(void)
{
	pthread_mutex_lock(&pool.m);
	pool.quit = true;
	pthread_cond_broadcast(&pool.go);
	pthread_mutex_unlock(&pool.m);
	for (int t = 0; t < pool.started; t++)
		pthread_join(pool.th[t], NULL);
	pool.started = 0;
}

/* nt threads over jobs[] (thread t on cpus[t] when cpus is set): 0, or -1
 * when one could not be started (none is left running then). */
static int pool_start(int nt, const int *cpus, struct job *jobs)
{
	/* a probe before this one in the process joined its threads */
	pool.jobs = jobs;
	pool.quit = false;
	pool.gen = 0;
	for (int t = 0; t < nt; t++) {
		jobs[t].cpu = cpus ? cpus[t] : -1;
		if (pthread_create(&pool.th[t], NULL, worker, &jobs[t]) != 0) {
			pool_stop();
			return -1;
		}
		pool.started++;
	}
	return 0;
}

/* Splits [0, total) of tmpl over the pool's nt threads, runs them and
 * returns the time from the first part's start to the last one's end.
 * jobs[] holds each thread's job afterwards.  The calling thread only
 * waits, so its own CPU affinity is left alone. */
static double run_split(struct job tmpl, size_t total, int nt)
{
	double first = 0, last = 0;

	pthread_mutex_lock(&pool.m);
	for (int t = 0; t < nt; t++) {
		int cpu = pool.jobs[t].cpu;

		pool.jobs[t] = tmpl;
		pool.jobs[t].cpu = cpu;
		pool.jobs[t].lo = total * (size_t)t / (size_t)nt;
		pool.jobs[t].hi = total * (size_t)(t + 1) / (size_t)nt;
	}
	pool.remaining = nt;
	pool.gen++;
	pthread_cond_broadcast(&pool.go);
	while (pool.remaining)
		pthread_cond_wait(&pool.done, &pool.m);
	pthread_mutex_unlock(&pool.m);
	for (int t = 0; t < nt; t++) {
		if (t == 0 || pool.jobs[t].t0 < first)
			first = pool.jobs[t].t0;
		if (t == 0 || pool.jobs[t].t1 > last)
			last = pool.jobs[t].t1;
	}
	return last - first;
}

/* "model name" (x86) or "CPU part"/"Hardware" and the interesting ISA flags,
 * from /proc/cpuinfo. */
static void cpu_info(char **model, json_t *isa)
{
	static const char *const wanted[] = {
		"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
		"avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",
		"asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm", "sme", NULL,
	};
	char *text = xl_read_file("/proc/cpuinfo", NULL, 4 << 20);
	struct xl_strv lines = XL_STRV_INIT;
	bool flags_done = false;

	*model = NULL;
	if (!text)
		return;
	xl_strv_split(&lines, text, "\n");
	for (size_t i = 0; i < lines.n; i++) {
		char *l = lines.v[i], *colon = strchr(l, ':');
		size_t kl;

		if (!colon)
			continue;
		kl = (size_t)(colon - l);
		while (kl && (l[kl - 1] == ' ' || l[kl - 1] == '\t'))
			kl--;
		colon++;
		while (*colon == ' ')
			colon++;
		if (!*model && kl == 10 && strncmp(l, "model name", 10) == 0)
			*model = xl_strdup(colon);
		if (!flags_done && ((kl == 5 && strncmp(l, "flags", 5) == 0) ||
				    (kl == 8 && strncmp(l, "Features", 8) == 0))) {
			struct xl_strv fl = XL_STRV_INIT;

			xl_strv_split(&fl, colon, " \t");
			for (size_t k = 0; wanted[k]; k++)
				if (xl_strv_contains(&fl, wanted[k]))
					json_array_append_new(isa, json_string(wanted[k]));
			xl_strv_release(&fl);
			flags_done = true;
		}
	}
	xl_strv_release(&lines);
	free(text);
}

#define TRIAD_S 3.0      /* the triad's scalar: a = b + s * c */

/* What the probe's stages share: the report, the threads and their CPUs,
 * the host's figures, and the arrays the kernels work on (release() frees
 * them). */
struct cpu_probe {
	struct xl_probe_rep *r;
	int nt, cpus[MAX_THREADS];     /* threads, and the CPU of each */
	char *model;                   /* from /proc/cpuinfo, or NULL */
	json_t *isa, *details;
	struct xl_host_cache hc;
	const char *rule;              /* how the working set was sized */
	size_t n;                      /* the triad's elements per array */
	double *a, *b, *c;             /* the triad's arrays */
	float *A, *B, *C;              /* the SGEMM's matrices */
	struct job tmpl, *jobs;        /* every thread's job; theirs after a run */
};

/* The host's model, ISA features, kernel version, CPUs (the threads, one
 * each) and caches; p->n sized from the last-level cache. */
static void read_host(struct cpu_probe *p)
{
	struct utsname u;
	cpu_set_t set;
	uint64_t ws;

	p->nt = xl_host_cpus(&set);
	cpu_info(&p->model, p->isa);
	if (uname(&u) == 0)
		json_object_set_new(p->r->doc, "version", json_sprintf("%s %s %s", u.sysname,
									u.release, u.machine));
	if (p->nt > MAX_THREADS)
		p->nt = MAX_THREADS;
	for (int i = 0, k = 0; i < CPU_SETSIZE && k < p->nt; i++)
		if (CPU_ISSET(i, &set))
			p->cpus[k++] = i;
	xl_host_cache_read(NULL, &set, &p->hc);
	ws = xl_host_working_set(&p->hc, xl_host_mem_available(), &p->rule);
	p->n = (size_t)((ws + 3 * sizeof(double) - 1) / (3 * sizeof(double)));
}

/* The host as the report's one device, and the details of what it has. */
static void describe_host(struct cpu_probe *p)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	json_int_t mem = pages > 0 && psize > 0 ? (json_int_t)pages * psize : 0;
	struct xl_host_cache *hc = &p->hc;

	json_object_set_new(p->r->doc, "devices",
			    json_pack("[{s:s, s:I, s:i}]", "kind", p->model ? p->model : "cpu",
				      "memory_bytes", mem, "cores", p->nt));
	p->details = json_pack("{s:i, s:I, s:o, s:i, s:I, s:I, s:i, s:i, s:s, s:s, s:i}",
			       "cores", p->nt, "memory_bytes", mem, "isa", p->isa,
			       "threads", p->nt,
			       "working_set_bytes", (json_int_t)(3 * p->n * sizeof(double)),
			       "llc_bytes", (json_int_t)hc->llc_bytes, "llc_level", hc->level,
			       "llc_instances", hc->instances, "llc_source", hc->source,
			       "working_set_rule", p->rule, "sgemm_n", (int)SGEMM_N);
	json_object_set_new(p->r->doc, "details", p->details);
	free(p->model);
	p->model = NULL;
}

/* kind run over [0, total) by every thread of the pool (pool_start first):
 * its time. */
static double run_job(struct cpu_probe *p, int kind, size_t total)
{
	p->tmpl.kind = kind;
	return run_split(p->tmpl, total, p->nt);
}

/* The arrays allocated and filled (the triad's by the threads that will
 * work on them, so that their pages are near them). */
static int prepare_arrays(struct cpu_probe *p)
{
	const size_t m = SGEMM_N;

	p->jobs = calloc((size_t)p->nt, sizeof(*p->jobs));
	p->a = malloc(p->n * sizeof(double));
	p->b = malloc(p->n * sizeof(double));
	p->c = malloc(p->n * sizeof(double));
	p->A = malloc(m * m * sizeof(float));
	p->B = malloc(m * m * sizeof(float));
	p->C = malloc(m * m * sizeof(float));
	if (!p->jobs || !p->a || !p->b || !p->c || !p->A || !p->B || !p->C) {
		xl_probe_error(p->r, "cannot allocate the probe's buffers (%zu MiB)",
			       (size_t)(3 * p->n * sizeof(double) / MIB));
		return -1;
	}
	for (size_t i = 0; i < m * m; i++) {
		p->A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		p->B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
	}
	memset(&p->tmpl, 0, sizeof(p->tmpl));
	p->tmpl.a = p->a;
	p->tmpl.b = p->b;
	p->tmpl.c = p->c;
	p->tmpl.s = TRIAD_S;
	p->tmpl.A = p->A;
	p->tmpl.B = p->B;
	p->tmpl.C = p->C;
	p->tmpl.n = m;
	if (pool_start(p->nt, p->cpus, p->jobs) != 0) {
		xl_probe_error(p->r, "cannot start %d threads", p->nt);
		return -1;
	}
	run_job(p, JOB_INIT, p->n);
	return 0;
}

/* The triad and the SGEMM, once each. */
static int execute_kernels(struct cpu_probe *p)
{
	run_job(p, JOB_TRIAD, p->n);
	run_job(p, JOB_SGEMM, SGEMM_N);
	return 0;
}

/* The triad checked element by element (by the threads), the SGEMM on a
 * grid of elements against a scalar reference. */
static int verify_results(struct cpu_probe *p)
{
	const size_t m = SGEMM_N;

	run_job(p, JOB_CHECK, p->n);
	for (int k = 0; k < p->nt; k++) {
		size_t i = p->jobs[k].bad;

		if (i != SIZE_MAX) {
			xl_probe_error(p->r, "verification failed: triad element %zu is %g, "
				       "expected %g", i, p->a[i], p->b[i] + TRIAD_S * p->c[i]);
			return -1;
		}
	}
	for (size_t i = 0; i < m; i += 17) {
		for (size_t j = 0; j < m; j += 13) {
			double want = ref_sgemm_elem(p->A, p->B, m, i, j);

			if (!(fabs(p->C[i * m + j] - want) <= 1e-4 * (1.0 + fabs(want)))) {
				xl_probe_error(p->r, "verification failed: sgemm C[%zu][%zu] is "
					       "%g, expected %g", i, j, (double)p->C[i * m + j],
					       want);
				return -1;
			}
		}
	}
	return 0;
}

/* The triad's bandwidth in GB/s from the fastest of its timed passes, as
 * many as fit in the budget (*passes); 0 when none could be timed. */
static double triad_bandwidth(struct cpu_probe *p, int *passes)
{
	double t, best = 0, budget = xl_probe_time_left(p->r) / 4;

	if (budget > MEASURE_S)
		budget = MEASURE_S;
	for (double t0 = xl_mono(); *passes < MAX_PASSES; ) {
		t = run_job(p, JOB_TRIAD, p->n);
		if (t > 0 && (best == 0 || t < best))
			best = t;
		(*passes)++;
		if (*passes >= MIN_PASSES && xl_mono() - t0 > budget)
			break;
		/* a slow host (or one under a memory checker): no pass that
		 * would take more than half of the time left */
		if (t > 0 && 2 * t > xl_probe_time_left(p->r))
			break;
	}
	return best > 0 ? 3.0 * p->n * sizeof(double) / best / 1e9 : 0;
}

/* The SGEMM's GFLOP/s from the fastest of three runs; 0 when none could be
 * timed. */
static double sgemm_rate(struct cpu_probe *p)
{
	const size_t m = SGEMM_N;
	double t, best = 0;

	for (int k = 0; k < 3; k++)
		if ((t = run_job(p, JOB_SGEMM, m)) > 0 && (best == 0 || t < best))
			best = t;
	return best > 0 ? 2.0 * m * m * m / best / 1e9 : 0;
}

/* figures: the fastest of the timed passes (STREAM's rule), as many as fit
 * in the budget; the SGEMM is cache-resident by design */
static void measure(struct cpu_probe *p)
{
	int passes = 0;
	double gbs, gflops;

	gbs = triad_bandwidth(p, &passes);
	gflops = sgemm_rate(p);
	json_object_set_new(p->details, "triad_passes", json_integer(passes));
	json_object_set_new(p->r->doc, "bandwidth_gbs", json_real(round(gbs * 100) / 100));
	json_object_set_new(p->r->doc, "gflops", json_real(round(gflops * 100) / 100));
}

static void release(struct cpu_probe *p)
{
	if (pool.started)
		pool_stop();
	free(p->jobs);
	free(p->a);
	free(p->b);
	free(p->c);
	free(p->A);
	free(p->B);
	free(p->C);
}

/* What each stage of the ladder takes (xl_probe_climb). */
static int cpu_rung(void *backend, enum xl_probe_stage st)
{
	struct cpu_probe *p = backend;

	switch (st) {
	case XL_STAGE_INITIALIZED:
		read_host(p);
		return 0;
	case XL_STAGE_DEVICES:
		describe_host(p);
		return 0;
	case XL_STAGE_COMPILED:
		/* the kernels are plain C, compiled in: nothing to build at
		 * run time */
		return prepare_arrays(p);
	case XL_STAGE_EXECUTED:
		return execute_kernels(p);
	case XL_STAGE_VERIFIED:
		if (verify_results(p) < 0)
			return -1;
		measure(p);
		return 0;
	default:
		return 0;
	}
}

void xl_probe_cpu(struct xl_probe_rep *r, const char *arg)
{
	struct cpu_probe p;

	(void)arg;
	memset(&p, 0, sizeof(p));
	p.r = r;
	p.isa = json_array();
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	xl_probe_climb(r, XL_STAGE_INITIALIZED, cpu_rung, &p);
	release(&p);
}
