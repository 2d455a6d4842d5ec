/* triad_ref.c - a plain multi-threaded STREAM triad, the reference the cpu
 * probe's bandwidth is compared with.  It shares no code with the probe: its
 * own arrays, its own threads (started once, kept in step by a barrier), its
 * own timing.
 *   triad_ref BYTES THREADS [PASSES]
 * BYTES is the whole working set (three arrays of doubles); each pass is
 * a[i] = b[i] + 3 * c[i] over all of it, the threads splitting the range.
 * Prints "GB/s N" (3 * n * 8 bytes over the fastest pass after the first)
 * and "bytes N" (the working set used). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double *a, *b, *c;
static size_t n;
static int nthreads, passes;
static pthread_barrier_t bar;
static double *times;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *thread(void *p)
{
	int id = (int)(long)p;
	size_t lo = n * (size_t)id / (size_t)nthreads, hi = n * (size_t)(id + 1) / (size_t)nthreads;
	double *restrict x = a;
	const double *restrict y = b, *restrict z = c;

	/* first touch by the thread that will use the pages */
	for (size_t i = lo; i < hi; i++) {
		x[i] = 0.0;
		b[i] = 1.0 + (double)(i & 1023);
		c[i] = 2.0 - (double)(i & 511);
	}
	for (int k = 0; k < passes; k++) {
		double t0 = 0;

		pthread_barrier_wait(&bar);
		if (id == 0)
			t0 = now();
		for (size_t i = lo; i < hi; i++)
			x[i] = y[i] + 3.0 * z[i];
		pthread_barrier_wait(&bar);
		if (id == 0)
			times[k] = now() - t0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[1024];
	double best = 0, check = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: triad_ref BYTES THREADS [PASSES]\n");
		return 64;
	}
	n = strtoull(argv[1], NULL, 10) / (3 * sizeof(double));
	nthreads = atoi(argv[2]);
	passes = argc > 3 ? atoi(argv[3]) : 10;
	if (n < 1024 || nthreads < 1 || nthreads > 1024 || passes < 2) {
		fprintf(stderr, "triad_ref: bad arguments\n");
		return 64;
	}
	a = malloc(n * sizeof(double));
	b = malloc(n * sizeof(double));
	c = malloc(n * sizeof(double));
	times = calloc((size_t)passes, sizeof(double));
	if (!a || !b || !c || !times) {
		fprintf(stderr, "triad_ref: out of memory\n");
		return 71;
	}
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int t = 1; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, thread, (void *)(long)t) != 0) {
			fprintf(stderr, "triad_ref: cannot start thread %d\n", t);
			return 71;
		}
	thread((void *)0L);
	for (int t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (int k = 1; k < passes; k++)
		if (best == 0 || times[k] < best)
			best = times[k];
	/* the result is used, so no pass can be left out */
	for (size_t i = 0; i < n; i += 4099)
		check += a[i] - (b[i] + 3.0 * c[i]);
	if (check != 0) {
		fprintf(stderr, "triad_ref: wrong result\n");
		return 70;
	}
	printf("GB/s %.3f\nbytes %zu\n", 3.0 * (double)n * sizeof(double) / best / 1e9,
	       3 * n * sizeof(double));
	return 0;
}
