/*
 * probe_opencl.c - the OpenCL backend, through the ICD loader
 * (dlopen("libOpenCL.so.1")) with our own declarations of the entry points
 * used.  Every device of every platform is probed on its own: its own
 * context, build of kernels/opencl/triad.cl, triad and SGEMM checked against
 * the host, and its own figures, timed by the device's profiling events
 * around the kernels only, over a working set sized for a memory bandwidth
 * (the host's cache hierarchy for CPU devices, hundreds of MiB for GPUs).
 */
#include "probe/probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct cl_opaque *cl_handle; /* platform, device, context, ... */

enum {
	CL_PLATFORM_VERSION = 0x0901, CL_PLATFORM_NAME = 0x0902,
	CL_DEVICE_TYPE = 0x1000, CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002,
	CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE = 0x101E,
	CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F, CL_DEVICE_NAME = 0x102B,
	CL_DEVICE_VERSION = 0x102F, CL_PROGRAM_BUILD_LOG = 0x1183,
	CL_PROFILING_COMMAND_START = 0x1282, CL_PROFILING_COMMAND_END = 0x1283,
};
#define CL_DEVICE_TYPE_CPU 2ull
#define CL_DEVICE_TYPE_GPU 4ull
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFull
#define CL_MEM_READ_WRITE 1ull
#define CL_QUEUE_PROFILING_ENABLE 2ull
#define CL_MAP_READ 1ull

struct cl {
	void *h;
	cl_int (*GetPlatformIDs)(cl_uint, cl_handle *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_handle, cl_ulong, cl_uint, cl_handle *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
	cl_handle (*CreateContext)(const intptr_t *, cl_uint, const cl_handle *, void *, void *,
				   cl_int *);
	cl_handle (*CreateCommandQueue)(cl_handle, cl_handle, cl_ulong, cl_int *);
	cl_handle (*CreateProgramWithSource)(cl_handle, cl_uint, const char **, const size_t *,
					     cl_int *);
	cl_int (*BuildProgram)(cl_handle, cl_uint, const cl_handle *, const char *, void *, void *);
	cl_int (*GetProgramBuildInfo)(cl_handle, cl_handle, cl_uint, size_t, void *, size_t *);
	cl_handle (*CreateKernel)(cl_handle, const char *, cl_int *);
	cl_int (*SetKernelArg)(cl_handle, cl_uint, size_t, const void *);
	cl_handle (*CreateBuffer)(cl_handle, cl_ulong, size_t, void *, cl_int *);
	cl_int (*EnqueueWriteBuffer)(cl_handle, cl_handle, cl_uint, size_t, size_t, const void *,
				     cl_uint, const void *, void *);
	cl_int (*EnqueueReadBuffer)(cl_handle, cl_handle, cl_uint, size_t, size_t, void *,
				    cl_uint, const void *, void *);
	void *(*EnqueueMapBuffer)(cl_handle, cl_handle, cl_uint, cl_ulong, size_t, size_t,
				  cl_uint, const void *, void *, cl_int *);
	cl_int (*EnqueueUnmapMemObject)(cl_handle, cl_handle, void *, cl_uint, const void *,
					void *);
	cl_int (*EnqueueNDRangeKernel)(cl_handle, cl_handle, cl_uint, const size_t *,
				       const size_t *, const size_t *, cl_uint, const void *,
				       cl_handle *);
	cl_int (*Finish)(cl_handle);
	cl_int (*GetEventProfilingInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
	cl_int (*ReleaseEvent)(cl_handle);
	cl_int (*ReleaseMemObject)(cl_handle);
	cl_int (*ReleaseKernel)(cl_handle);
	cl_int (*ReleaseProgram)(cl_handle);
	cl_int (*ReleaseCommandQueue)(cl_handle);
	cl_int (*ReleaseContext)(cl_handle);
};

/* The OpenCL error names, by code. */
static const char *cl_error_name(cl_int e)
{
	static const struct { cl_int code; const char *name; } t[] = {
		{ 0, "CL_SUCCESS" }, { -1, "CL_DEVICE_NOT_FOUND" },
		{ -2, "CL_DEVICE_NOT_AVAILABLE" }, { -3, "CL_COMPILER_NOT_AVAILABLE" },
		{ -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" }, { -5, "CL_OUT_OF_RESOURCES" },
		{ -6, "CL_OUT_OF_HOST_MEMORY" }, { -7, "CL_PROFILING_INFO_NOT_AVAILABLE" },
		{ -8, "CL_MEM_COPY_OVERLAP" }, { -9, "CL_IMAGE_FORMAT_MISMATCH" },
		{ -10, "CL_IMAGE_FORMAT_NOT_SUPPORTED" }, { -11, "CL_BUILD_PROGRAM_FAILURE" },
		{ -12, "CL_MAP_FAILURE" }, { -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
		{ -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" },
		{ -15, "CL_COMPILE_PROGRAM_FAILURE" }, { -16, "CL_LINKER_NOT_AVAILABLE" },
		{ -17, "CL_LINK_PROGRAM_FAILURE" }, { -18, "CL_DEVICE_PARTITION_FAILED" },
		{ -19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE" },
		{ -30, "CL_INVALID_VALUE" }, { -31, "CL_INVALID_DEVICE_TYPE" },
		{ -32, "CL_INVALID_PLATFORM" }, { -33, "CL_INVALID_DEVICE" },
		{ -34, "CL_INVALID_CONTEXT" }, { -35, "CL_INVALID_QUEUE_PROPERTIES" },
		{ -36, "CL_INVALID_COMMAND_QUEUE" }, { -37, "CL_INVALID_HOST_PTR" },
		{ -38, "CL_INVALID_MEM_OBJECT" }, { -39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR" },
		{ -40, "CL_INVALID_IMAGE_SIZE" }, { -41, "CL_INVALID_SAMPLER" },
		{ -42, "CL_INVALID_BINARY" }, { -43, "CL_INVALID_BUILD_OPTIONS" },
		{ -44, "CL_INVALID_PROGRAM" }, { -45, "CL_INVALID_PROGRAM_EXECUTABLE" },
		{ -46, "CL_INVALID_KERNEL_NAME" }, { -47, "CL_INVALID_KERNEL_DEFINITION" },
		{ -48, "CL_INVALID_KERNEL" }, { -49, "CL_INVALID_ARG_INDEX" },
		{ -50, "CL_INVALID_ARG_VALUE" }, { -51, "CL_INVALID_ARG_SIZE" },
		{ -52, "CL_INVALID_KERNEL_ARGS" }, { -53, "CL_INVALID_WORK_DIMENSION" },
		{ -54, "CL_INVALID_WORK_GROUP_SIZE" }, { -55, "CL_INVALID_WORK_ITEM_SIZE" },
		{ -56, "CL_INVALID_GLOBAL_OFFSET" }, { -57, "CL_INVALID_EVENT_WAIT_LIST" },
		{ -58, "CL_INVALID_EVENT" }, { -59, "CL_INVALID_OPERATION" },
		{ -61, "CL_INVALID_BUFFER_SIZE" }, { -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
		{ -64, "CL_INVALID_PROPERTY" }, { -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].code == e)
			return t[i].name;
	return "unknown OpenCL error";
}

static bool cl_bind(struct cl *c, const char **missing)
{
	struct { void **slot; const char *name; } t[] = {
		{ (void **)&c->GetPlatformIDs, "clGetPlatformIDs" },
		{ (void **)&c->GetPlatformInfo, "clGetPlatformInfo" },
		{ (void **)&c->GetDeviceIDs, "clGetDeviceIDs" },
		{ (void **)&c->GetDeviceInfo, "clGetDeviceInfo" },
		{ (void **)&c->CreateContext, "clCreateContext" },
		{ (void **)&c->CreateCommandQueue, "clCreateCommandQueue" },
		{ (void **)&c->CreateProgramWithSource, "clCreateProgramWithSource" },
		{ (void **)&c->BuildProgram, "clBuildProgram" },
		{ (void **)&c->GetProgramBuildInfo, "clGetProgramBuildInfo" },
		{ (void **)&c->CreateKernel, "clCreateKernel" },
		{ (void **)&c->SetKernelArg, "clSetKernelArg" },
		{ (void **)&c->CreateBuffer, "clCreateBuffer" },
		{ (void **)&c->EnqueueWriteBuffer, "clEnqueueWriteBuffer" },
		{ (void **)&c->EnqueueReadBuffer, "clEnqueueReadBuffer" },
		{ (void **)&c->EnqueueMapBuffer, "clEnqueueMapBuffer" },
		{ (void **)&c->EnqueueUnmapMemObject, "clEnqueueUnmapMemObject" },
		{ (void **)&c->EnqueueNDRangeKernel, "clEnqueueNDRangeKernel" },
		{ (void **)&c->Finish, "clFinish" },
		{ (void **)&c->GetEventProfilingInfo, "clGetEventProfilingInfo" },
		{ (void **)&c->ReleaseEvent, "clReleaseEvent" },
		{ (void **)&c->ReleaseMemObject, "clReleaseMemObject" },
		{ (void **)&c->ReleaseKernel, "clReleaseKernel" },
		{ (void **)&c->ReleaseProgram, "clReleaseProgram" },
		{ (void **)&c->ReleaseCommandQueue, "clReleaseCommandQueue" },
		{ (void **)&c->ReleaseContext, "clReleaseContext" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		*t[i].slot = dlsym(c->h, t[i].name);
		if (!*t[i].slot) {
			*missing = t[i].name;
			return false;
		}
	}
	return true;
}

/* One device and everything the probe made on it. */
struct cldev {
	cl_handle plat, id, ctx, q, prog, kfill, ktriad, ksgemm;
	cl_handle ma, mb, mc, mA, mB, mC;
	cl_ulong type, mem, max_alloc, cache;
	char *name;
	json_t *j;                  /* its entry in "devices" (borrowed) */
	enum xl_probe_stage stage;  /* the last stage this device reached */
	bool failed;
	double gbs, gflops;
};

#define SGEMM_N 256
#define MIN_RUNS 3              /* timed triad runs, at least... */
#define MAX_RUNS 20             /* ...and at most */
#define MEASURE_S 0.5           /* seconds one device's timed runs may take */
#define MIB (1024ull * 1024)

/* Marks d failed with its own error, and makes it the backend's error when
 * it is the first. */
static void dev_fail(struct xl_probe_rep *r, struct cldev *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void dev_fail(struct xl_probe_rep *r, struct cldev *d, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	json_object_set_new(d->j, "error", json_string(xl_buf_str(&b)));
	xl_probe_error(r, "%s: %s", d->name, xl_buf_str(&b));
	d->failed = true;
	xl_buf_release(&b);
}

#define DEV_CHECK(call, what)                                                 \
	do {                                                                  \
		cl_int e_ = (call);                                           \
		if (e_ != 0) {                                                \
			dev_fail(r, d, "%s: %s (%d)", what, cl_error_name(e_), (int)e_); \
			return false;                                         \
		}                                                             \
	} while (0)
#define DEV_MADE(h, e, what)                                                  \
	do {                                                                  \
		if (!(h)) {                                                   \
			dev_fail(r, d, "%s: %s (%d)", what, cl_error_name(e), (int)(e)); \
			return false;                                         \
		}                                                             \
	} while (0)

/* Every device's stage into its entry; the backend has reached what every
 * device has (sent to the parent with the devices, so a hang shows which
 * device got how far). */
static void report(struct xl_probe_rep *r, struct cldev *ds, size_t nd)
{
	enum xl_probe_stage low = XL_STAGE_VERIFIED;

	for (size_t i = 0; i < nd; i++) {
		json_object_set_new(ds[i].j, "stage", json_string(xl_probe_stage_name(ds[i].stage)));
		if (ds[i].stage < low)
			low = ds[i].stage;
	}
	xl_probe_reached(r, low);
}

static char *dev_str(struct cl *c, cl_handle d, cl_uint what)
{
	char buf[512] = "";

	c->GetDeviceInfo(d, what, sizeof(buf) - 1, buf, NULL);
	return xl_strdup(buf);
}

static const char *dev_type(cl_ulong t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "gpu";
	if (t & CL_DEVICE_TYPE_CPU)
		return "cpu";
	if (t & 8)
		return "accelerator";
	return "other";
}

/* The triad's working set on d, in bytes: on a CPU device what the cpu
 * backend uses (four times the host's last-level cache), elsewhere 768 MiB
 * (three arrays of 256 MiB) or four times the device's global memory cache
 * when that is more; never more than a quarter of a CPU device's memory, an
 * eighth of any other's, or three of its largest allocations. */
static uint64_t dev_working_set(const struct cldev *d, const char **rule)
{
	uint64_t ws, cap;

	if (d->type & CL_DEVICE_TYPE_CPU) {
		struct xl_host_cache hc;
		cpu_set_t set;

		xl_host_cpus(&set);
		xl_host_cache_read(NULL, &set, &hc);
		ws = xl_host_working_set(&hc, xl_host_mem_available(), rule);
		cap = d->mem / 4;
	} else {
		ws = 768 * MIB;
		*rule = "3 x 256 MiB";
		if (d->cache * 4 > ws) {
			ws = d->cache * 4;
			*rule = "4 x the device's global memory cache";
		}
		cap = d->mem / 8;
	}
	if (cap && ws > cap) {
		ws = cap;
		*rule = d->type & CL_DEVICE_TYPE_CPU ? "a quarter of the device's memory"
						      : "an eighth of the device's memory";
	}
	if (d->max_alloc && ws > 3 * d->max_alloc) {
		ws = 3 * d->max_alloc;
		*rule = "three of the device's largest allocations";
	}
	if (ws < 3 * MIB)
		ws = 3 * MIB;
	return ws;
}

/* Context, profiling queue, program and kernels on d. */
static bool dev_compile(struct cl *c, struct xl_probe_rep *r, struct cldev *d, const char *src)
{
	cl_int e = 0;

	d->ctx = c->CreateContext(NULL, 1, &d->id, NULL, NULL, &e);
	DEV_MADE(d->ctx, e, "clCreateContext");
	d->q = c->CreateCommandQueue(d->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &e);
	DEV_MADE(d->q, e, "clCreateCommandQueue");
	d->prog = c->CreateProgramWithSource(d->ctx, 1, &src, NULL, &e);
	DEV_MADE(d->prog, e, "clCreateProgramWithSource");
	e = c->BuildProgram(d->prog, 1, &d->id, "", NULL, NULL);
	if (e != 0) {
		char log[2048] = "";

		c->GetProgramBuildInfo(d->prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log,
				       NULL);
		dev_fail(r, d, "clBuildProgram: %s (%d)%s%s", cl_error_name(e), (int)e,
			 log[0] ? "; build log: " : "", log);
		return false;
	}
	d->kfill = c->CreateKernel(d->prog, "fill", &e);
	DEV_MADE(d->kfill, e, "clCreateKernel fill");
	d->ktriad = c->CreateKernel(d->prog, "triad", &e);
	DEV_MADE(d->ktriad, e, "clCreateKernel triad");
	d->ksgemm = c->CreateKernel(d->prog, "sgemm", &e);
	DEV_MADE(d->ksgemm, e, "clCreateKernel sgemm");
	d->stage = XL_STAGE_COMPILED;
	return true;
}

/* Seconds between the start and the end of the command of ev on the device;
 * negative when the device keeps no profile. */
static double event_secs(struct cl *c, cl_handle ev)
{
	cl_ulong t0 = 0, t1 = 0;

	if (!ev || c->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL) ||
	    c->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) ||
	    t1 <= t0)
		return -1;
	return (double)(t1 - t0) * 1e-9;
}

/* Runs the kernel `times` times back to back, each with its own event, and
 * returns the shortest run on the device (the device's profile; the wall
 * time of the whole batch over `times` when it keeps none). */
static bool timed_runs(struct cl *c, struct xl_probe_rep *r, struct cldev *d, cl_handle k,
		       cl_uint dims, const size_t *global, int times, double *best, bool *wall)
{
	cl_handle ev[MAX_RUNS] = { NULL };
	double t0 = xl_mono(), t;
	cl_int e = 0;
	int queued = 0;

	*best = 0;
	for (; queued < times && queued < MAX_RUNS; queued++)
		if ((e = c->EnqueueNDRangeKernel(d->q, k, dims, NULL, global, NULL, 0, NULL,
						 &ev[queued])) != 0)
			break;
	if (e == 0)
		e = c->Finish(d->q);
	t = (xl_mono() - t0) / (queued ? queued : 1);
	*wall = false;
	for (int i = 0; i < queued; i++) {
		double s = e == 0 ? event_secs(c, ev[i]) : 0;

		if (s < 0)
			*wall = true;
		else if (s > 0 && (*best == 0 || s < *best))
			*best = s;
		if (ev[i])
			c->ReleaseEvent(ev[i]);
	}
	if (e != 0) {
		dev_fail(r, d, "timed runs: %s (%d)", cl_error_name(e), (int)e);
		return false;
	}
	if (*wall)
		*best = t;
	return *best > 0;
}

static void dev_release_buffers(struct cl *c, struct cldev *d)
{
	cl_handle *m[] = { &d->ma, &d->mb, &d->mc, &d->mA, &d->mB, &d->mC };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (*m[i]) {
			c->ReleaseMemObject(*m[i]);
			*m[i] = NULL;
		}
}

/* Buffers, one run of each kernel, the check against the host, then the
 * figures within budget seconds. */
static bool dev_run(struct cl *c, struct xl_probe_rep *r, struct cldev *d, double budget)
{
	const cl_uint m = SGEMM_N;
	const float s = 3.0f;
	const char *rule = NULL;
	uint64_t ws = dev_working_set(d, &rule);
	uint64_t want_n = (ws + 3 * sizeof(float) - 1) / (3 * sizeof(float));
	cl_uint n = (cl_uint)(want_n < 0xFFFFF000u ? want_n : 0xFFFFF000u);
	size_t gt = ((size_t)n + 255) / 256 * 256, gs[2] = { m, m };
	float *hc = NULL, *A = NULL, *B = NULL, *C = NULL;
	cl_handle ev = NULL;
	double first, best;
	bool wall = false, ok = false;
	int runs;
	cl_int e = 0;

	json_object_set_new(d->j, "working_set_bytes", json_integer((json_int_t)3 * n * sizeof(float)));
	json_object_set_new(d->j, "working_set_rule", json_string(rule));
	A = xl_malloc(m * m * sizeof(float));
	B = xl_malloc(m * m * sizeof(float));
	C = xl_malloc(m * m * sizeof(float));
	for (cl_uint i = 0; i < m * m; i++) {
		A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
	}
#define RUN_CHECK(call, what)                                                 \
	do {                                                                  \
		cl_int e_ = (call);                                           \
		if (e_ != 0) {                                                \
			dev_fail(r, d, "%s: %s (%d)", what, cl_error_name(e_), (int)e_); \
			goto out;                                             \
		}                                                             \
	} while (0)
#define RUN_MADE(h, size)                                                     \
	do {                                                                  \
		(h) = c->CreateBuffer(d->ctx, CL_MEM_READ_WRITE, (size), NULL, &e); \
		if (!(h)) {                                                   \
			dev_fail(r, d, "clCreateBuffer (%zu bytes): %s (%d)", (size_t)(size), \
				 cl_error_name(e), (int)e);                   \
			goto out;                                             \
		}                                                             \
	} while (0)
	RUN_MADE(d->ma, (size_t)n * sizeof(float));
	RUN_MADE(d->mb, (size_t)n * sizeof(float));
	RUN_MADE(d->mc, (size_t)n * sizeof(float));
	RUN_MADE(d->mA, (size_t)m * m * sizeof(float));
	RUN_MADE(d->mB, (size_t)m * m * sizeof(float));
	RUN_MADE(d->mC, (size_t)m * m * sizeof(float));
	RUN_CHECK(c->EnqueueWriteBuffer(d->q, d->mA, 1, 0, m * m * sizeof(float), A, 0, NULL, NULL),
		  "clEnqueueWriteBuffer");
	RUN_CHECK(c->EnqueueWriteBuffer(d->q, d->mB, 1, 0, m * m * sizeof(float), B, 0, NULL, NULL),
		  "clEnqueueWriteBuffer");
	RUN_CHECK(c->SetKernelArg(d->kfill, 0, sizeof(d->ma), &d->ma), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->kfill, 1, sizeof(d->mb), &d->mb), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->kfill, 2, sizeof(n), &n), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ktriad, 0, sizeof(d->ma), &d->ma), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ktriad, 1, sizeof(d->mb), &d->mb), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ktriad, 2, sizeof(d->mc), &d->mc), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ktriad, 3, sizeof(s), &s), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ktriad, 4, sizeof(n), &n), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ksgemm, 0, sizeof(d->mA), &d->mA), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ksgemm, 1, sizeof(d->mB), &d->mB), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ksgemm, 2, sizeof(d->mC), &d->mC), "clSetKernelArg");
	RUN_CHECK(c->SetKernelArg(d->ksgemm, 3, sizeof(m), &m), "clSetKernelArg");
	RUN_CHECK(c->EnqueueNDRangeKernel(d->q, d->kfill, 1, NULL, &gt, NULL, 0, NULL, NULL),
		  "clEnqueueNDRangeKernel fill");
	RUN_CHECK(c->EnqueueNDRangeKernel(d->q, d->ktriad, 1, NULL, &gt, NULL, 0, NULL, &ev),
		  "clEnqueueNDRangeKernel triad");
	RUN_CHECK(c->EnqueueNDRangeKernel(d->q, d->ksgemm, 2, NULL, gs, NULL, 0, NULL, NULL),
		  "clEnqueueNDRangeKernel sgemm");
	RUN_CHECK(c->Finish(d->q), "clFinish");
	first = event_secs(c, ev);
	d->stage = XL_STAGE_EXECUTED;

	/* mapped, not copied: on a CPU device that is the buffer itself */
	hc = c->EnqueueMapBuffer(d->q, d->mc, 1, CL_MAP_READ, 0, (size_t)n * sizeof(float), 0,
				 NULL, NULL, &e);
	if (!hc) {
		dev_fail(r, d, "clEnqueueMapBuffer: %s (%d)", cl_error_name(e), (int)e);
		goto out;
	}
	RUN_CHECK(c->EnqueueReadBuffer(d->q, d->mC, 1, 0, m * m * sizeof(float), C, 0, NULL, NULL),
		  "clEnqueueReadBuffer");
	for (cl_uint i = 0; i < n; i++) {
		float want = (float)(i & 1023u) * 0.5f + s * ((float)(i & 127u) - 60.0f);

		if (!(fabsf(hc[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
			dev_fail(r, d, "verification failed: triad element %u is %g, expected %g",
				 i, (double)hc[i], (double)want);
			goto out;
		}
	}
	e = c->EnqueueUnmapMemObject(d->q, d->mc, hc, 0, NULL, NULL);
	hc = NULL;
	RUN_CHECK(e, "clEnqueueUnmapMemObject");
	RUN_CHECK(c->Finish(d->q), "clFinish");
	for (cl_uint i = 0; i < m; i += 17)
		for (cl_uint j = 0; j < m; j += 13) {
			double want = 0;

			for (cl_uint k = 0; k < m; k++)
				want += (double)A[i * m + k] * B[k * m + j];
			if (!(fabs(C[i * m + j] - want) <= 1e-4 * (1.0 + fabs(want)))) {
				dev_fail(r, d, "verification failed: sgemm C[%u][%u] is %g, "
					 "expected %g", i, j, (double)C[i * m + j], want);
				goto out;
			}
		}

	/* as many triad runs as the budget holds, by the first run's time */
	runs = first > 0 ? (int)(budget / first) : MIN_RUNS;
	if (runs < MIN_RUNS)
		runs = MIN_RUNS;
	if (runs > MAX_RUNS)
		runs = MAX_RUNS;
	/* a slow device: no more runs than half of the time left holds */
	if (first > 0 && runs * first > xl_probe_time_left(r) / 2)
		runs = (int)(xl_probe_time_left(r) / 2 / first);
	if (runs < 1)
		runs = 1;
	if (!timed_runs(c, r, d, d->ktriad, 1, &gt, runs, &best, &wall))
		goto out;
	d->gbs = round(3.0 * n * sizeof(float) / best / 1e7) / 100;
	json_object_set_new(d->j, "triad_runs", json_integer(runs));
	if (!timed_runs(c, r, d, d->ksgemm, 2, gs, 3, &best, &wall))
		goto out;
	d->gflops = round(2.0 * m * m * m / best / 1e7) / 100;
	json_object_set_new(d->j, "timing", json_string(wall ? "wall clock (the device keeps "
							"no profile)" : "device events"));
	json_object_set_new(d->j, "bandwidth_gbs", json_real(d->gbs));
	json_object_set_new(d->j, "gflops", json_real(d->gflops));
	d->stage = XL_STAGE_VERIFIED;
	ok = true;
out:
#undef RUN_CHECK
#undef RUN_MADE
	if (ev)
		c->ReleaseEvent(ev);
	if (hc) {
		c->EnqueueUnmapMemObject(d->q, d->mc, hc, 0, NULL, NULL);
		c->Finish(d->q);
	}
	dev_release_buffers(c, d);
	free(A);
	free(B);
	free(C);
	return ok;
}

static void dev_release(struct cl *c, struct cldev *d)
{
	dev_release_buffers(c, d);
	if (d->kfill) c->ReleaseKernel(d->kfill);
	if (d->ktriad) c->ReleaseKernel(d->ktriad);
	if (d->ksgemm) c->ReleaseKernel(d->ksgemm);
	if (d->prog) c->ReleaseProgram(d->prog);
	if (d->q) c->ReleaseCommandQueue(d->q);
	if (d->ctx) c->ReleaseContext(d->ctx);
	free(d->name);
}

#define MAX_DEVICES 64

void xl_probe_opencl(struct xl_probe_rep *r, const char *arg)
{
	struct cl c;
	cl_handle plats[16], ids[MAX_DEVICES];
	struct cldev *ds = NULL;
	size_t nd = 0, pick = 0;
	cl_uint np = 0;
	cl_int e = 0;
	const char *missing = NULL;
	char *src = NULL, *path = NULL, plat_version[256] = "";
	json_t *jdevs;

	(void)arg;
	memset(&c, 0, sizeof(c));
	c.h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!c.h) {
		const char *de = dlerror();

		xl_probe_error(r, "%s", de ? de : "libOpenCL.so.1: cannot be loaded");
		return;
	}
	if (!cl_bind(&c, &missing)) {
		xl_probe_error(r, "libOpenCL.so.1 lacks %s", missing);
		return;
	}
	xl_probe_reached(r, XL_STAGE_INSTALLED);

	e = c.GetPlatformIDs(16, plats, &np);
	if (e == -1001 || (e == 0 && np == 0)) {
		xl_probe_error(r, "clGetPlatformIDs: %s (%d): the ICD loader found no OpenCL "
			       "driver (no *.icd file in /etc/OpenCL/vendors, or OCL_ICD_VENDORS "
			       "points elsewhere)", cl_error_name(e ? e : -1001), e ? e : -1001);
		return;
	}
	if (e != 0) {
		xl_probe_error(r, "clGetPlatformIDs: %s (%d)", cl_error_name(e), (int)e);
		return;
	}
	if (np > 16)
		np = 16;
	c.GetPlatformInfo(plats[0], CL_PLATFORM_VERSION, sizeof(plat_version) - 1,
			  plat_version, NULL);
	json_object_set_new(r->doc, "version", json_string(plat_version));
	xl_probe_reached(r, XL_STAGE_INITIALIZED);

	jdevs = json_array();
	json_object_set_new(r->doc, "devices", jdevs);
	ds = xl_calloc(MAX_DEVICES, sizeof(*ds));
	for (cl_uint p = 0; p < np && nd < MAX_DEVICES; p++) {
		cl_uint got = 0;
		char pname[256] = "";

		if (c.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, (cl_uint)(MAX_DEVICES - nd), ids,
				   &got) != 0)
			continue;
		if (got > MAX_DEVICES - nd)
			got = (cl_uint)(MAX_DEVICES - nd);
		c.GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
		for (cl_uint k = 0; k < got; k++) {
			struct cldev *d = &ds[nd++];
			cl_uint cu = 0;
			char *ver = dev_str(&c, ids[k], CL_DEVICE_VERSION);

			d->plat = plats[p];
			d->id = ids[k];
			d->name = dev_str(&c, ids[k], CL_DEVICE_NAME);
			c.GetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(d->mem), &d->mem, NULL);
			c.GetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof(d->type), &d->type, NULL);
			c.GetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL);
			c.GetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(d->max_alloc),
					&d->max_alloc, NULL);
			c.GetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(d->cache),
					&d->cache, NULL);
			d->j = json_pack("{s:s, s:I, s:s, s:i, s:s, s:s, s:I}",
				"kind", d->name, "memory_bytes", (json_int_t)d->mem,
				"type", dev_type(d->type), "compute_units", (int)cu,
				"platform", pname, "version", ver,
				"cache_bytes", (json_int_t)d->cache);
			json_array_append_new(jdevs, d->j);
			d->stage = XL_STAGE_DEVICES;
			free(ver);
		}
	}
	if (!nd) {
		xl_probe_error(r, "clGetDeviceIDs: %s (-1): the OpenCL platforms have no device",
			       cl_error_name(-1));
		goto out;
	}
	report(r, ds, nd);

	path = xl_data_path("kernels/opencl/triad.cl");
	src = xl_read_file(path, NULL, 1 << 20);
	if (!src) {
		xl_probe_error(r, "%s: cannot read the kernel: %s", path, strerror(errno));
		goto out;
	}
	/* every device builds first, then each runs alone, so that no figure
	 * shares the host with another device's work */
	for (size_t i = 0; i < nd; i++) {
		dev_compile(&c, r, &ds[i], src);
		report(r, ds, nd);
	}
	for (size_t i = 0; i < nd; i++) {
		double budget = xl_probe_time_left(r) / (4.0 * (double)(nd - i));

		if (ds[i].failed)
			continue;
		dev_run(&c, r, &ds[i], budget < MEASURE_S ? budget : MEASURE_S);
		report(r, ds, nd);
	}

	/* the backend's own figures are those of one device, named in
	 * details.measured_device: the first GPU that passed, else the first
	 * device that did */
	pick = nd;
	for (size_t i = 0; i < nd; i++)
		if (ds[i].stage == XL_STAGE_VERIFIED &&
		    (pick == nd || (!(ds[pick].type & CL_DEVICE_TYPE_GPU) &&
				    (ds[i].type & CL_DEVICE_TYPE_GPU))))
			pick = i;
	json_object_set_new(r->doc, "details",
			    json_pack("{s:i, s:i, s:i}", "platforms", (int)np, "device_count",
				      (int)nd, "sgemm_n", SGEMM_N));
	if (pick < nd) {
		json_object_set_new(r->doc, "bandwidth_gbs", json_real(ds[pick].gbs));
		json_object_set_new(r->doc, "gflops", json_real(ds[pick].gflops));
		json_object_set_new(json_object_get(r->doc, "details"), "measured_device",
				    json_integer((json_int_t)pick));
	}
	report(r, ds, nd);
out:
	for (size_t i = 0; i < nd; i++)
		dev_release(&c, &ds[i]);
	free(ds);
	free(src);
	free(path);
}
