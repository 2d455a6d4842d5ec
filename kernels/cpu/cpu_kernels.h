/*
 * cpu_kernels.h - the kernels the cpu backend of the probe runs, in C: a
 * STREAM-style triad (a = b + s * c) and a blocked SGEMM (C = A * B), each on
 * a slice of the rows given by [lo, hi), so that threads can share the work.
 * Included by probe/probe_cpu.c; static functions only.
 */
#ifndef XLAUNCH_KERNELS_CPU_H
#define XLAUNCH_KERNELS_CPU_H

#include <stddef.h>

static void kern_triad(double *restrict a, const double *restrict b,
		       const double *restrict c, double s, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		a[i] = b[i] + s * c[i];
}

/* Rows [lo, hi) of C = A * B, all n x n, row-major.  The k loop sits outside
 * the j loop so the inner loop streams a row of B and a row of C, and blocks
 * of K keep that row of B in cache. */
static void kern_sgemm(float *restrict C, const float *restrict A,
		       const float *restrict B, size_t n, size_t lo, size_t hi)
{
	const size_t kb = 64;

	for (size_t i = lo; i < hi; i++)
		for (size_t j = 0; j < n; j++)
			C[i * n + j] = 0.0f;
	for (size_t k0 = 0; k0 < n; k0 += kb) {
		size_t k1 = k0 + kb < n ? k0 + kb : n;

		for (size_t i = lo; i < hi; i++) {
			float *restrict crow = C + i * n;

			for (size_t k = k0; k < k1; k++) {
				float aik = A[i * n + k];
				const float *restrict brow = B + k * n;

				for (size_t j = 0; j < n; j++)
					crow[j] += aik * brow[j];
			}
		}
	}
}

/* The scalar reference both are checked against: plain loops, in double. */
static double ref_sgemm_elem(const float *A, const float *B, size_t n, size_t i, size_t j)
{
	double acc = 0.0;

	for (size_t k = 0; k < n; k++)
		acc += (double)A[i * n + k] * (double)B[k * n + j];
	return acc;
}

#endif
