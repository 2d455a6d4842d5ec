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

/* Elements per array: a 192th of the device's memory (the three arrays a
 * 64th), at least 32 MiB and at most 256 MiB each.  At 32 MiB the timed
 * launches were too short on an H200 (3.1 TB/s against 4.3 TB/s of a 1 GiB
 * copy); 256 MiB is far beyond any GPU's last-level cache. */
#define TRIAD_MIN_N (8u << 20)
#define TRIAD_MAX_N (64u << 20)
#define TRIAD_S 3.0f         /* the triad's scalar: c = a + s * b */

/* What the probe's stages share: the report, the driver's entry points, and
 * what each stage makes for the next ones (release() frees what is left). */
struct cuda_probe {
	struct xl_probe_rep *r;
	struct cu c;
	int count, major, minor, sms;    /* devices; the first one's figures */
	cu_device dev;                   /* the device measured: the first */
	cu_context ctx;
	bool ctx_held;
	cu_module mod;
	cu_function fn;
	cu_deviceptr da, db, dc;
	float *ha, *hb, *hc;
	unsigned n;                      /* elements per array */
};

/* False when rc is CU_OK; otherwise true, with the probe's error said in the
 * driver's words (cu_explain). */
static bool cu_failed(struct cuda_probe *p, cu_result rc, const char *what)
{
	char *e;

	if (rc == CU_OK)
		return false;
	e = cu_explain(&p->c, what, rc);
	xl_probe_error(p->r, "%s", e);
	free(e);
	return true;
}

/* libcuda.so.1 loaded, its entry points bound and its version read: 0, or
 * -1 with the error said. */
static int open_driver(struct cuda_probe *p)
{
	char *err = NULL;
	int ver = 0;

	p->c.h = cu_open(&err);
	if (!p->c.h) {
		xl_probe_error(p->r, "%s", err);
		free(err);
		return -1;
	}
	if (!cu_bind(&p->c, &err)) {
		xl_probe_error(p->r, "libcuda.so.1 lacks %s: not an NVIDIA driver library, or one "
			       "too old", err);
		free(err);
		return -1;
	}
	if (p->c.DriverGetVersion(&ver) == CU_OK)
		json_object_set_new(p->r->doc, "version",
				    json_sprintf("%d.%d", ver / 1000, ver % 1000 / 10));
	return 0;
}

/* Every device described in the report; the first is the one measured
 * (p->dev, its compute capability and multiprocessors). */
static int list_devices(struct cuda_probe *p)
{
	json_t *devs;

	if (cu_failed(p, p->c.DeviceGetCount(&p->count), "cuDeviceGetCount"))
		return -1;
	if (p->count < 1) {
		xl_probe_error(p->r, "cuDeviceGetCount: no CUDA device");
		return -1;
	}
	devs = json_array();
	json_object_set_new(p->r->doc, "devices", devs);
	for (int i = 0; i < p->count; i++) {
		char name[256] = "";
		size_t mem = 0;
		int ma = 0, mi = 0;
		cu_device d;

		if (cu_failed(p, p->c.DeviceGet(&d, i), "cuDeviceGet"))
			return -1;
		p->c.DeviceGetName(name, sizeof(name) - 1, d);
		p->c.DeviceGetAttribute(&ma, CU_ATTR_CC_MAJOR, d);
		p->c.DeviceGetAttribute(&mi, CU_ATTR_CC_MINOR, d);
		p->c.DeviceTotalMem(&mem, d);
		json_array_append_new(devs, json_pack("{s:s, s:I, s:o}", "kind", name,
						      "memory_bytes", (json_int_t)mem,
						      "compute_capability",
						      json_sprintf("%d.%d", ma, mi)));
		if (i == 0) {
			size_t n = mem / 64 / 3 / sizeof(float);

			p->n = n < TRIAD_MIN_N ? TRIAD_MIN_N : n > TRIAD_MAX_N ? TRIAD_MAX_N : (unsigned)n;
			p->dev = d;
			p->major = ma;
			p->minor = mi;
		}
	}
	p->c.DeviceGetAttribute(&p->sms, CU_ATTR_SM_COUNT, p->dev);
	return 0;
}

/* The device's primary context, held (p->ctx_held) and made current. */
static int enter_context(struct cuda_probe *p)
{
	if (cu_failed(p, p->c.PrimaryCtxRetain(&p->ctx, p->dev), "cuDevicePrimaryCtxRetain"))
		return -1;
	p->ctx_held = true;
	if (cu_failed(p, p->c.CtxSetCurrent(p->ctx), "cuCtxSetCurrent"))
		return -1;
	return 0;
}

/* kernels/cuda/triad.ptx JIT-compiled for the device (p->mod) and its
 * kernel found (p->fn); a JIT failure says the JIT's log. */
static int compile_triad(struct cuda_probe *p)
{
	char log[2048] = "", *err = NULL, *ptx;
	int opts[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[2] = { log, (void *)(size_t)sizeof(log) };
	cu_result rc;

	ptx = load_ptx(p->major, p->minor, &err);
	if (!ptx) {
		xl_probe_error(p->r, "%s", err);
		free(err);
		return -1;
	}
	rc = p->c.ModuleLoadDataEx(&p->mod, ptx, 2, opts, vals);
	free(ptx);
	if (rc != CU_OK) {
		char *e = cu_explain(&p->c, "cuModuleLoadDataEx", rc);

		log[sizeof(log) - 1] = '\0';
		xl_probe_error(p->r, "%s%s%s", e, log[0] ? "; JIT log: " : "", log);
		free(e);
		return -1;
	}
	if (cu_failed(p, p->c.ModuleGetFunction(&p->fn, p->mod, "triad"), "cuModuleGetFunction"))
		return -1;
	return 0;
}

/* The arrays made on the host and copied to the device (p->da, p->db; p->dc
 * filled with -1 so that a kernel that writes nothing is seen). */
static int transfer_inputs(struct cuda_probe *p)
{
	const size_t bytes = (size_t)p->n * sizeof(float);

	p->ha = xl_malloc(bytes);
	p->hb = xl_malloc(bytes);
	p->hc = xl_malloc(bytes);
	for (unsigned i = 0; i < p->n; i++) {
		p->ha[i] = (float)(i % 1024) * 0.5f;
		p->hb[i] = (float)(i % 77) - 30.0f;
		p->hc[i] = -1.0f;
	}
	if (cu_failed(p, p->c.MemAlloc(&p->da, bytes), "cuMemAlloc") ||
	    cu_failed(p, p->c.MemAlloc(&p->db, bytes), "cuMemAlloc") ||
	    cu_failed(p, p->c.MemAlloc(&p->dc, bytes), "cuMemAlloc") ||
	    cu_failed(p, p->c.MemcpyHtoD(p->da, p->ha, bytes), "cuMemcpyHtoD") ||
	    cu_failed(p, p->c.MemcpyHtoD(p->db, p->hb, bytes), "cuMemcpyHtoD") ||
	    cu_failed(p, p->c.MemcpyHtoD(p->dc, p->hc, bytes), "cuMemcpyHtoD"))
		return -1;
	return 0;
}

/* One launch of the triad over the device's arrays, not waited for. */
static cu_result launch_triad(struct cuda_probe *p)
{
	float sv = TRIAD_S;
	unsigned nv = p->n, block = 256, grid = (p->n + block - 1) / block;
	void *params[] = { &p->da, &p->db, &p->dc, &sv, &nv };

	return p->c.LaunchKernel(p->fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}

/* One launch, waited for. */
static int execute_once(struct cuda_probe *p)
{
	if (cu_failed(p, launch_triad(p), "cuLaunchKernel") ||
	    cu_failed(p, p->c.CtxSynchronize(), "cuCtxSynchronize"))
		return -1;
	return 0;
}

/* The result read back and checked against the host's arithmetic. */
static int verify_output(struct cuda_probe *p)
{
	const float s = TRIAD_S;

	if (cu_failed(p, p->c.MemcpyDtoH(p->hc, p->dc, (size_t)p->n * sizeof(float)),
		      "cuMemcpyDtoH"))
		return -1;
	for (unsigned i = 0; i < p->n; i++) {
		float want = fmaf(s, p->hb[i], p->ha[i]);

		if (p->hc[i] != want && fabsf(p->hc[i] - want) > 1e-5f * fabsf(want)) {
			xl_probe_error(p->r, "verification failed: element %u is %g, expected %g",
				       i, (double)p->hc[i], (double)want);
			return -1;
		}
	}
	return 0;
}

/* bandwidth: best of a few timed batches, 3 arrays moved per launch */
static int measure_bandwidth(struct cuda_probe *p)
{
	const int reps = 20;
	double t0, best = 1e30;

	for (int k = 0; k < 3; k++) {
		t0 = xl_mono();
		for (int j = 0; j < reps; j++)
			if (cu_failed(p, launch_triad(p), "cuLaunchKernel"))
				return -1;
		if (cu_failed(p, p->c.CtxSynchronize(), "cuCtxSynchronize"))
			return -1;
		if (xl_mono() - t0 < best)
			best = xl_mono() - t0;
	}
	if (best > 0)
		json_object_set_new(p->r->doc, "bandwidth_gbs",
				    json_real(3.0 * p->n * sizeof(float) * reps / best / 1e9));
	return 0;
}

/* The device's memory, the module and the context given back, the host's
 * arrays freed.  The library stays loaded: the child exits right after. */
static void release(struct cuda_probe *p)
{
	if (p->da)
		p->c.MemFree(p->da);
	if (p->db)
		p->c.MemFree(p->db);
	if (p->dc)
		p->c.MemFree(p->dc);
	if (p->mod)
		p->c.ModuleUnload(p->mod);
	if (p->ctx_held)
		p->c.PrimaryCtxRelease(p->dev);
	free(p->ha);
	free(p->hb);
	free(p->hc);
}

/* What each stage of the ladder takes (xl_probe_climb). */
static int cuda_rung(void *backend, enum xl_probe_stage st)
{
	struct cuda_probe *p = backend;

	switch (st) {
	case XL_STAGE_INITIALIZED:
		return cu_failed(p, p->c.Init(0), "cuInit") ? -1 : 0;
	case XL_STAGE_DEVICES:
		return list_devices(p);
	case XL_STAGE_COMPILED:
		return enter_context(p) < 0 ? -1 : compile_triad(p);
	case XL_STAGE_EXECUTED:
		return transfer_inputs(p) < 0 ? -1 : execute_once(p);
	case XL_STAGE_VERIFIED:
		return verify_output(p) < 0 ? -1 : measure_bandwidth(p);
	default:
		return 0;
	}
}

void xl_probe_cuda(struct xl_probe_rep *r, const char *arg)
{
	struct cuda_probe p;

	(void)arg;
	memset(&p, 0, sizeof(p));
	p.r = r;
	if (open_driver(&p) < 0)
		return;
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	if (xl_probe_climb(r, XL_STAGE_INITIALIZED, cuda_rung, &p) == 0)
		json_object_set_new(r->doc, "details",
				    json_pack("{s:i, s:i, s:s, s:I, s:I, s:s}", "device_count",
					      p.count, "multiprocessors", p.sms, "ptx_isa",
					      TRIAD_PTX_ISA, "buffer_bytes",
					      (json_int_t)p.n * (json_int_t)sizeof(float),
					      "working_set_bytes",
					      (json_int_t)p.n * 3 * (json_int_t)sizeof(float),
					      "working_set_rule",
					      "a 64th of the device's memory, 96 MiB to 768 MiB"));
	release(&p);
}
