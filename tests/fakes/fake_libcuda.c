/*
 * fake_libcuda.c - a fake libcuda.so.1 for fault injection in the probe's
 * tests; never a stand-in for a GPU.  Built by the tests with one of:
 *   -DFAKE_NODEV   cuInit reports CUDA_ERROR_NO_DEVICE
 *   -DFAKE_HANG    cuInit never returns
 *   -DFAKE_CRASH   cuInit dereferences a null pointer
 *   -DFAKE_WRONG   everything works, but the kernel computes wrong numbers
 * Device memory is host memory; the "kernel" is done on the host.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;

static const char *err_name(CUresult e)
{
	return e == 100 ? "CUDA_ERROR_NO_DEVICE" : e == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN";
}

CUresult cuGetErrorName(CUresult e, const char **s) { *s = err_name(e); return 0; }
CUresult cuGetErrorString(CUresult e, const char **s)
{
	*s = e == 100 ? "no CUDA-capable device is detected" : "unknown error";
	return 0;
}
CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }

CUresult cuInit(unsigned flags)
{
	(void)flags;
#if defined(FAKE_NODEV)
	return 100;
#elif defined(FAKE_HANG)
	for (;;)
		pause();
#elif defined(FAKE_CRASH)
	volatile int *p = NULL;
	return *p;
#else
	return 0;
#endif
}

CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char *s, int len, int d)
{
	(void)d;
	strncpy(s, "fake_libcuda device", (size_t)len);
	return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)d;
	*v = attr == 75 ? 8 : attr == 76 ? 0 : 4;
	return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *m, int d) { (void)d; *m = (size_t)1 << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = (void *)1; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *o, void **v)
{
	(void)n; (void)o; (void)v;
	*m = strstr(img, ".entry triad") ? (void *)2 : NULL;
	return *m ? 0 : 218;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
	(void)m;
	*f = (void *)3;
	return strcmp(name, "triad") == 0 ? 0 : 500;
}
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n)
{
	void *m = malloc(n);

	*p = (unsigned long long)(size_t)m;
	return m ? 0 : 2;
}
CUresult cuMemFree_v2(unsigned long long p) { free((void *)(size_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n)
{
	memcpy((void *)(size_t)d, s, n);
	return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n)
{
	memcpy(d, (void *)(size_t)s, n);
	return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shm, void *st, void **params, void **extra)
{
	float *a = (float *)(size_t)*(unsigned long long *)params[0];
	float *b = (float *)(size_t)*(unsigned long long *)params[1];
	float *c = (float *)(size_t)*(unsigned long long *)params[2];
	float s = *(float *)params[3];
	unsigned n = *(unsigned *)params[4];

	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shm;
	(void)st; (void)extra;
	for (unsigned i = 0; i < n; i++)
#ifdef FAKE_WRONG
		c[i] = a[i] + s * b[i] + (i == 12345 ? 1.0f : 0.0f);
#else
		c[i] = a[i] + s * b[i];
#endif
	return 0;
}
