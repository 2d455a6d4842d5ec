/*
 * probe_cuda.c - the CUDA backend, through the driver API only:
 * dlopen("libcuda.so.1") (so LD_LIBRARY_PATH applies, as it does for the
 * runtimes), our own declarations of the few entry points used, a PTX kernel
 * the driver JIT-compiles, a launch, a check against the host and a
 * bandwidth figure.  Failures carry the driver's own error name and text and,
 * for the ones people meet in the field, what they usually mean.
 */
#include "probe/probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* Our declarations: the handful of driver API types and entry points used. */
typedef int cu_result;
typedef int cu_device;
typedef struct cu_ctx_st *cu_context;
typedef struct cu_mod_st *cu_module;
typedef struct cu_func_st *cu_function;
typedef unsigned long long cu_deviceptr;

enum {
	CU_OK = 0,
	CU_ERR_NOT_INITIALIZED = 3,
	CU_ERR_STUB_LIBRARY = 34,
	CU_ERR_INSUFFICIENT_DRIVER = 35,
	CU_ERR_NO_DEVICE = 100,
	CU_ERR_NO_BINARY_FOR_GPU = 209,
	CU_ERR_INVALID_PTX = 218,
	CU_ERR_JIT_COMPILER_NOT_FOUND = 221,
	CU_ERR_UNSUPPORTED_PTX_VERSION = 222,
	CU_ERR_OPERATING_SYSTEM = 304,
	CU_ERR_SYSTEM_NOT_READY = 802,
	CU_ERR_SYSTEM_DRIVER_MISMATCH = 803,
	CU_ERR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
	CU_ERR_UNKNOWN = 999,
};
enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76, CU_ATTR_SM_COUNT = 16 };
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

/* PTX ISA version of kernels/cuda/triad.ptx and the CUDA release that
 * introduced it, for the explanation of CUDA_ERROR_UNSUPPORTED_PTX_VERSION. */
#define TRIAD_PTX_ISA "6.4"
#define TRIAD_PTX_CUDA "10.1"

struct cu {
	void *h;
	cu_result (*Init)(unsigned);
	cu_result (*DriverGetVersion)(int *);
	cu_result (*DeviceGetCount)(int *);
	cu_result (*DeviceGet)(cu_device *, int);
	cu_result (*DeviceGetName)(char *, int, cu_device);
	cu_result (*DeviceGetAttribute)(int *, int, cu_device);
	cu_result (*DeviceTotalMem)(size_t *, cu_device);
	cu_result (*PrimaryCtxRetain)(cu_context *, cu_device);
	cu_result (*PrimaryCtxRelease)(cu_device);
	cu_result (*CtxSetCurrent)(cu_context);
	cu_result (*CtxSynchronize)(void);
	cu_result (*ModuleLoadDataEx)(cu_module *, const void *, unsigned, int *, void **);
	cu_result (*ModuleGetFunction)(cu_function *, cu_module, const char *);
	cu_result (*ModuleUnload)(cu_module);
	cu_result (*MemAlloc)(cu_deviceptr *, size_t);
	cu_result (*MemFree)(cu_deviceptr);
	cu_result (*MemcpyHtoD)(cu_deviceptr, const void *, size_t);
	cu_result (*MemcpyDtoH)(void *, cu_deviceptr, size_t);
	cu_result (*LaunchKernel)(cu_function, unsigned, unsigned, unsigned, unsigned,
				  unsigned, unsigned, unsigned, void *, void **, void **);
	cu_result (*GetErrorName)(cu_result, const char **);
	cu_result (*GetErrorString)(cu_result, const char **);
};

static void *cu_open(char **err)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h && err) {
		const char *e = dlerror();

		*err = xl_strdup(e ? e : "libcuda.so.1: cannot be loaded");
	}
	return h;
}

int xl_cuda_driver_version(int *version)
{
	cu_result (*get)(int *);
	void *h = cu_open(NULL);
	int rc = -1;

	if (!h)
		return -1;
	*(void **)&get = dlsym(h, "cuDriverGetVersion");
	if (get && get(version) == CU_OK)
		rc = 0;
	dlclose(h);
	return rc;
}

/* "NAME: text" in the driver's own words, plus what it usually means. */
static char *cu_explain(const struct cu *c, const char *call, cu_result rc)
{
	const char *name = NULL, *text = NULL, *hint = NULL;

	if (c->GetErrorName)
		c->GetErrorName(rc, &name);
	if (c->GetErrorString)
		c->GetErrorString(rc, &text);
	switch (rc) {
	case CU_ERR_NO_DEVICE:
		hint = "the driver is loaded but sees no NVIDIA GPU (none installed, or hidden "
		       "by CUDA_VISIBLE_DEVICES or the container's device list)";
		break;
	case CU_ERR_STUB_LIBRARY:
		hint = "the libcuda.so.1 found is the CUDA toolkit's link-time stub, not the "
		       "driver's library: fix LD_LIBRARY_PATH or install the NVIDIA driver";
		break;
	case CU_ERR_INSUFFICIENT_DRIVER:
		hint = "the installed driver is older than this CUDA code needs: upgrade the driver";
		break;
	case CU_ERR_SYSTEM_DRIVER_MISMATCH:
		hint = "the user-space driver library and the loaded kernel module are different "
		       "versions (a driver upgrade without a reboot, or a container whose "
		       "libcuda does not match the host's module)";
		break;
	case CU_ERR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		hint = "the forward-compatibility driver package does not support this GPU";
		break;
	case CU_ERR_UNKNOWN:
		hint = "error 999 at initialization usually means the NVIDIA kernel modules "
		       "(nvidia, nvidia_uvm) are not loaded or /dev/nvidia* are missing; check "
		       "dmesg and nvidia-smi";
		break;
	case CU_ERR_OPERATING_SYSTEM:
		hint = "the operating system refused the call (device files, permissions or limits)";
		break;
	case CU_ERR_SYSTEM_NOT_READY:
		hint = "the system is not ready: on NVSwitch machines, the fabric manager is not running";
		break;
	case CU_ERR_UNSUPPORTED_PTX_VERSION:
		hint = "the driver's JIT compiler is older than the PTX it was given (the probe's "
		       "kernel uses PTX ISA " TRIAD_PTX_ISA ", from CUDA " TRIAD_PTX_CUDA "): the "
		       "driver predates that CUDA release; any program built with a newer toolkit "
		       "than the driver supports fails the same way, so upgrade the driver or "
		       "build for an older PTX version";
		break;
	case CU_ERR_INVALID_PTX:
	case CU_ERR_NO_BINARY_FOR_GPU:
		hint = "the driver's JIT could not compile the kernel for this GPU";
		break;
	case CU_ERR_JIT_COMPILER_NOT_FOUND:
		hint = "the driver installation lacks its PTX JIT compiler (libnvidia-ptxjitcompiler)";
		break;
	default:
		break;
	}
	return xl_asprintf("%s: %s (%d): %s%s%s", call, name ? name : "CUDA error", rc,
			   text ? text : "no description", hint ? "; " : "", hint ? hint : "");
}

static bool cu_bind(struct cu *c, char **missing)
{
	struct { void **slot; const char *name; } t[] = {
		{ (void **)&c->Init, "cuInit" },
		{ (void **)&c->DriverGetVersion, "cuDriverGetVersion" },
		{ (void **)&c->DeviceGetCount, "cuDeviceGetCount" },
		{ (void **)&c->DeviceGet, "cuDeviceGet" },
		{ (void **)&c->DeviceGetName, "cuDeviceGetName" },
		{ (void **)&c->DeviceGetAttribute, "cuDeviceGetAttribute" },
		{ (void **)&c->DeviceTotalMem, "cuDeviceTotalMem_v2" },
		{ (void **)&c->PrimaryCtxRetain, "cuDevicePrimaryCtxRetain" },
		{ (void **)&c->PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2" },
		{ (void **)&c->CtxSetCurrent, "cuCtxSetCurrent" },
		{ (void **)&c->CtxSynchronize, "cuCtxSynchronize" },
		{ (void **)&c->ModuleLoadDataEx, "cuModuleLoadDataEx" },
		{ (void **)&c->ModuleGetFunction, "cuModuleGetFunction" },
		{ (void **)&c->ModuleUnload, "cuModuleUnload" },
		{ (void **)&c->MemAlloc, "cuMemAlloc_v2" },
		{ (void **)&c->MemFree, "cuMemFree_v2" },
		{ (void **)&c->MemcpyHtoD, "cuMemcpyHtoD_v2" },
		{ (void **)&c->MemcpyDtoH, "cuMemcpyDtoH_v2" },
		{ (void **)&c->LaunchKernel, "cuLaunchKernel" },
		{ (void **)&c->GetErrorName, "cuGetErrorName" },
		{ (void **)&c->GetErrorString, "cuGetErrorString" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		*t[i].slot = dlsym(c->h, t[i].name);
		if (!*t[i].slot) {
			*missing = xl_strdup(t[i].name);
			return false;
		}
	}
	return true;
}

/* The PTX text with its target set for compute capability major.minor. */
static char *load_ptx(int major, int minor, char **err)
{
	char *path = xl_data_path("kernels/cuda/triad.ptx");
	char *text = xl_read_file(path, NULL, 1 << 20);
	const char *target = major * 10 + minor >= 75 ? "sm_75" : "sm_50";
	char *at, *out;

	if (!text) {
		*err = xl_asprintf("%s: cannot read the kernel: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	free(path);
	at = strstr(text, ".target TARGET");
	if (!at) {
		*err = xl_strdup("kernels/cuda/triad.ptx: no '.target TARGET' line");
		free(text);
		return NULL;
	}
	*at = '\0';
	out = xl_asprintf("%s.target %s%s", text, target, at + strlen(".target TARGET"));
	free(text);
	return out;
}

#define CU_CHECK(call, what)                                                 \
	do {                                                                 \
		cu_result rc_ = (call);                                      \
		if (rc_ != CU_OK) {                                          \
			char *e_ = cu_explain(&c, what, rc_);                \
			xl_probe_error(r, "%s", e_);                         \
			free(e_);                                            \
			goto out;                                            \
		}                                                            \
	} while (0)

void xl_probe_cuda(struct xl_probe_rep *r, const char *arg)
{
	struct cu c;
	char *err = NULL, *ptx = NULL;
	int ver = 0, count = 0, major = 0, minor = 0, sms = 0;
	cu_device dev = 0;
	cu_context ctx = NULL;
	cu_module mod = NULL;
	cu_function fn = NULL;
	cu_deviceptr da = 0, db = 0, dc = 0;
	float *ha = NULL, *hb = NULL, *hc = NULL;
	const unsigned n = 8u << 20; /* 32 MiB per array */
	const float s = 3.0f;
	json_t *devs;
	bool ctx_held = false;

	(void)arg;
	memset(&c, 0, sizeof(c));
	c.h = cu_open(&err);
	if (!c.h) {
		xl_probe_error(r, "%s", err);
		free(err);
		return;
	}
	if (!cu_bind(&c, &err)) {
		xl_probe_error(r, "libcuda.so.1 lacks %s: not an NVIDIA driver library, or one "
			       "too old", err);
		free(err);
		return;
	}
	if (c.DriverGetVersion(&ver) == CU_OK)
		json_object_set_new(r->doc, "version", json_sprintf("%d.%d", ver / 1000, ver % 1000 / 10));
	xl_probe_reached(r, XL_STAGE_INSTALLED);

	CU_CHECK(c.Init(0), "cuInit");
	xl_probe_reached(r, XL_STAGE_INITIALIZED);

	CU_CHECK(c.DeviceGetCount(&count), "cuDeviceGetCount");
	if (count < 1) {
		xl_probe_error(r, "cuDeviceGetCount: no CUDA device");
		goto out;
	}
	devs = json_array();
	json_object_set_new(r->doc, "devices", devs);
	for (int i = 0; i < count; i++) {
		char name[256] = "";
		size_t mem = 0;
		int ma = 0, mi = 0;
		cu_device d;

		CU_CHECK(c.DeviceGet(&d, i), "cuDeviceGet");
		c.DeviceGetName(name, sizeof(name) - 1, d);
		c.DeviceGetAttribute(&ma, CU_ATTR_CC_MAJOR, d);
		c.DeviceGetAttribute(&mi, CU_ATTR_CC_MINOR, d);
		c.DeviceTotalMem(&mem, d);
		json_array_append_new(devs, json_pack("{s:s, s:I, s:o}", "kind", name,
						      "memory_bytes", (json_int_t)mem,
						      "compute_capability",
						      json_sprintf("%d.%d", ma, mi)));
		if (i == 0) {
			dev = d;
			major = ma;
			minor = mi;
		}
	}
	c.DeviceGetAttribute(&sms, CU_ATTR_SM_COUNT, dev);
	xl_probe_reached(r, XL_STAGE_DEVICES);

	CU_CHECK(c.PrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	ctx_held = true;
	CU_CHECK(c.CtxSetCurrent(ctx), "cuCtxSetCurrent");
	ptx = load_ptx(major, minor, &err);
	if (!ptx) {
		xl_probe_error(r, "%s", err);
		free(err);
		goto out;
	}
	{
		char log[2048] = "";
		int opts[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
		void *vals[2] = { log, (void *)(size_t)sizeof(log) };
		cu_result rc = c.ModuleLoadDataEx(&mod, ptx, 2, opts, vals);

		if (rc != CU_OK) {
			char *e = cu_explain(&c, "cuModuleLoadDataEx", rc);

			log[sizeof(log) - 1] = '\0';
			xl_probe_error(r, "%s%s%s", e, log[0] ? "; JIT log: " : "", log);
			free(e);
			goto out;
		}
	}
	CU_CHECK(c.ModuleGetFunction(&fn, mod, "triad"), "cuModuleGetFunction");
	xl_probe_reached(r, XL_STAGE_COMPILED);

	ha = xl_malloc(n * sizeof(float));
	hb = xl_malloc(n * sizeof(float));
	hc = xl_malloc(n * sizeof(float));
	for (unsigned i = 0; i < n; i++) {
		ha[i] = (float)(i % 1024) * 0.5f;
		hb[i] = (float)(i % 77) - 30.0f;
		hc[i] = -1.0f;
	}
	CU_CHECK(c.MemAlloc(&da, n * sizeof(float)), "cuMemAlloc");
	CU_CHECK(c.MemAlloc(&db, n * sizeof(float)), "cuMemAlloc");
	CU_CHECK(c.MemAlloc(&dc, n * sizeof(float)), "cuMemAlloc");
	CU_CHECK(c.MemcpyHtoD(da, ha, n * sizeof(float)), "cuMemcpyHtoD");
	CU_CHECK(c.MemcpyHtoD(db, hb, n * sizeof(float)), "cuMemcpyHtoD");
	CU_CHECK(c.MemcpyHtoD(dc, hc, n * sizeof(float)), "cuMemcpyHtoD");
	{
		float sv = s;
		unsigned nv = n, block = 256, grid = (n + block - 1) / block;
		void *params[] = { &da, &db, &dc, &sv, &nv };
		const int reps = 20;
		double t0, best = 1e30;

		CU_CHECK(c.LaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL),
			 "cuLaunchKernel");
		CU_CHECK(c.CtxSynchronize(), "cuCtxSynchronize");
		xl_probe_reached(r, XL_STAGE_EXECUTED);
		CU_CHECK(c.MemcpyDtoH(hc, dc, n * sizeof(float)), "cuMemcpyDtoH");
		for (unsigned i = 0; i < n; i++) {
			float want = fmaf(s, hb[i], ha[i]);

			if (hc[i] != want && fabsf(hc[i] - want) > 1e-5f * fabsf(want)) {
				xl_probe_error(r, "verification failed: element %u is %g, expected %g",
					       i, (double)hc[i], (double)want);
				goto out;
			}
		}
		/* bandwidth: best of a few timed batches, 3 arrays moved per launch */
		for (int k = 0; k < 3; k++) {
			t0 = xl_mono();
			for (int j = 0; j < reps; j++)
				CU_CHECK(c.LaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params,
							NULL), "cuLaunchKernel");
			CU_CHECK(c.CtxSynchronize(), "cuCtxSynchronize");
			if (xl_mono() - t0 < best)
				best = xl_mono() - t0;
		}
		if (best > 0)
			json_object_set_new(r->doc, "bandwidth_gbs",
					    json_real(3.0 * n * sizeof(float) * reps / best / 1e9));
		xl_probe_reached(r, XL_STAGE_VERIFIED);
	}
	json_object_set_new(r->doc, "details",
			    json_pack("{s:i, s:i, s:s, s:I}", "device_count", count,
				      "multiprocessors", sms, "ptx_isa", TRIAD_PTX_ISA,
				      "buffer_bytes", (json_int_t)n * (json_int_t)sizeof(float)));
out:
	if (da)
		c.MemFree(da);
	if (db)
		c.MemFree(db);
	if (dc)
		c.MemFree(dc);
	if (mod)
		c.ModuleUnload(mod);
	if (ctx_held)
		c.PrimaryCtxRelease(dev);
	free(ha);
	free(hb);
	free(hc);
	free(ptx);
	/* the library stays loaded: the child exits right after */
}
