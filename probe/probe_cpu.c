/*
 * probe_cpu.c - the cpu backend: what the host has (cores, memory, ISA
 * features) and what it delivers: a multi-threaded triad for bandwidth and a
 * multi-threaded SGEMM for FLOP/s, both checked against a scalar reference.
 * Buffers stay small (tens of MB) so the probe is quick and harmless.
 */
#include "probe/probe.h"
#include "kernels/cpu/cpu_kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#define TRIAD_N   (2u << 20)   /* 2 Mi doubles: 3 arrays of 16 MiB */
#define SGEMM_N   256
#define MAX_THREADS 256

struct job {
	int kind; /* 0 triad, 1 sgemm */
	size_t lo, hi;
	double *a;
	const double *b, *c;
	double s;
	float *C;
	const float *A, *B;
	size_t n;
	int reps;
};

static void *worker(void *p)
{
	struct job *j = p;

	for (int r = 0; r < j->reps; r++) {
		if (j->kind == 0)
			kern_triad(j->a, j->b, j->c, j->s, j->lo, j->hi);
		else
			kern_sgemm(j->C, j->A, j->B, j->n, j->lo, j->hi);
	}
	return NULL;
}

/* Splits [0, total) over nt threads and runs them; returns the wall time, or
 * a negative value when a thread could not be started. */
static double run_split(struct job tmpl, size_t total, int nt)
{
	pthread_t th[MAX_THREADS];
	struct job jobs[MAX_THREADS];
	int started = 0;
	double t0 = xl_mono();

	for (int t = 0; t < nt; t++) {
		jobs[t] = tmpl;
		jobs[t].lo = total * (size_t)t / (size_t)nt;
		jobs[t].hi = total * (size_t)(t + 1) / (size_t)nt;
		if (t == nt - 1)
			break;
		if (pthread_create(&th[t], NULL, worker, &jobs[t]) != 0)
			break;
		started++;
	}
	if (started == nt - 1)
		worker(&jobs[nt - 1]);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (started != nt - 1)
		return -1;
	return xl_mono() - t0;
}

/* The shortest of three timed run_split()s, or 0 when none ran. */
static double best_split(struct job tmpl, size_t total, int nt)
{
	double best = 0;

	for (int k = 0; k < 3; k++) {
		double t = run_split(tmpl, total, nt);

		if (t > 0 && (best == 0 || t < best))
			best = t;
	}
	return best;
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

static int n_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	return (int)n;
}

void xl_probe_cpu(struct xl_probe_rep *r, const char *arg)
{
	int nt = n_threads();
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	json_int_t mem = pages > 0 && psize > 0 ? (json_int_t)pages * psize : 0;
	json_t *isa = json_array();
	char *model = NULL;
	double *a = NULL, *b = NULL, *c = NULL;
	float *A = NULL, *B = NULL, *C = NULL;
	const size_t n = TRIAD_N, m = SGEMM_N;
	const double s = 3.0;
	double best, gbs = 0, gflops = 0;
	struct job tj, sj;

	(void)arg;
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	cpu_info(&model, isa);
	{
		struct utsname u;

		if (uname(&u) == 0)
			json_object_set_new(r->doc, "version", json_sprintf("%s %s %s", u.sysname,
									    u.release, u.machine));
	}
	xl_probe_reached(r, XL_STAGE_INITIALIZED);
	json_object_set_new(r->doc, "devices",
			    json_pack("[{s:s, s:I, s:i}]", "kind", model ? model : "cpu",
				      "memory_bytes", mem, "cores", nt));
	json_object_set_new(r->doc, "details",
			    json_pack("{s:i, s:I, s:o, s:I, s:i}", "cores", nt, "memory_bytes", mem,
				      "isa", isa, "triad_bytes", (json_int_t)(3 * n * sizeof(double)),
				      "sgemm_n", (int)m));
	free(model);
	xl_probe_reached(r, XL_STAGE_DEVICES);

	a = malloc(n * sizeof(double));
	b = malloc(n * sizeof(double));
	c = malloc(n * sizeof(double));
	A = malloc(m * m * sizeof(float));
	B = malloc(m * m * sizeof(float));
	C = malloc(m * m * sizeof(float));
	if (!a || !b || !c || !A || !B || !C) {
		xl_probe_error(r, "cannot allocate the probe's buffers");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = 0.0;
		b[i] = (double)(i % 1000) * 0.25;
		c[i] = (double)(i % 37) - 18.0;
	}
	for (size_t i = 0; i < m * m; i++) {
		A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
	}
	/* the kernels are plain C, compiled in: nothing to build at run time */
	xl_probe_reached(r, XL_STAGE_COMPILED);

	memset(&tj, 0, sizeof(tj));
	tj.kind = 0;
	tj.a = a;
	tj.b = b;
	tj.c = c;
	tj.s = s;
	tj.reps = 1;
	memset(&sj, 0, sizeof(sj));
	sj.kind = 1;
	sj.A = A;
	sj.B = B;
	sj.C = C;
	sj.n = m;
	sj.reps = 1;
	if (run_split(tj, n, nt) < 0 || run_split(sj, m, nt) < 0) {
		xl_probe_error(r, "cannot start %d threads", nt);
		goto out;
	}
	xl_probe_reached(r, XL_STAGE_EXECUTED);

	for (size_t i = 0; i < n; i++) {
		double want = b[i] + s * c[i];

		if (!(fabs(a[i] - want) <= 1e-12 * fabs(want))) {
			xl_probe_error(r, "verification failed: triad element %zu is %g, expected %g",
				       i, a[i], want);
			goto out;
		}
	}
	for (size_t i = 0; i < m; i += 17) {
		for (size_t j = 0; j < m; j += 13) {
			double want = ref_sgemm_elem(A, B, m, i, j);

			if (!(fabs(C[i * m + j] - want) <= 1e-4 * (1.0 + fabs(want)))) {
				xl_probe_error(r, "verification failed: sgemm C[%zu][%zu] is %g, "
					       "expected %g", i, j, (double)C[i * m + j], want);
				goto out;
			}
		}
	}

	/* figures: best of a few timed runs */
	tj.reps = 4;
	if ((best = best_split(tj, n, nt)) > 0)
		gbs = 3.0 * n * sizeof(double) * tj.reps / best / 1e9;
	sj.reps = 4;
	if ((best = best_split(sj, m, nt)) > 0)
		gflops = 2.0 * m * m * m * sj.reps / best / 1e9;
	json_object_set_new(r->doc, "bandwidth_gbs", json_real(round(gbs * 100) / 100));
	json_object_set_new(r->doc, "gflops", json_real(round(gflops * 100) / 100));
	xl_probe_reached(r, XL_STAGE_VERIFIED);
out:
	free(a);
	free(b);
	free(c);
	free(A);
	free(B);
	free(C);
}
