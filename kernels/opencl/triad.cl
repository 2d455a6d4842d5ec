/* triad.cl - the OpenCL kernels of the probe.
 * fill: the triad's inputs, computed from the index (so no host array of the
 * working set's size is needed; the host checks against the same formula);
 * triad: c[i] = a[i] + s * b[i] (bandwidth); sgemm: C = A * B, n x n, one
 * work-item per element of C (a plain kernel: the figure says what a naive
 * kernel gets, the check says the device computes right). */
__kernel void fill(__global float *a, __global float *b, const uint n)
{
	uint i = get_global_id(0);

	if (i < n) {
		a[i] = (float)(i & 1023u) * 0.5f;
		b[i] = (float)(i & 127u) - 60.0f;
	}
}

__kernel void triad(__global const float *a, __global const float *b,
		    __global float *c, const float s, const uint n)
{
	uint i = get_global_id(0);

	if (i < n)
		c[i] = a[i] + s * b[i];
}

__kernel void sgemm(__global const float *A, __global const float *B,
		    __global float *C, const uint n)
{
	uint i = get_global_id(1), j = get_global_id(0);
	float acc = 0.0f;

	if (i >= n || j >= n)
		return;
	for (uint k = 0; k < n; k++)
		acc += A[i * n + k] * B[k * n + j];
	C[i * n + j] = acc;
}
