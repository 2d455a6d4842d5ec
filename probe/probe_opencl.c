/*
 * probe_opencl.c - the OpenCL backend, through the ICD loader
 * (dlopen("libOpenCL.so.1")) with our own declarations of the entry points
 * used: platforms and devices, build kernels/opencl/triad.cl, run the triad
 * and an SGEMM, check both against the host, and measure.
 */
#include "probe/probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
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
	CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F, CL_DEVICE_NAME = 0x102B,
	CL_DEVICE_VERSION = 0x102F, CL_PROGRAM_BUILD_LOG = 0x1183,
};
#define CL_DEVICE_TYPE_GPU 4ull
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFull
#define CL_MEM_READ_WRITE 1ull

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
	cl_int (*EnqueueNDRangeKernel)(cl_handle, cl_handle, cl_uint, const size_t *,
				       const size_t *, const size_t *, cl_uint, const void *,
				       void *);
	cl_int (*Finish)(cl_handle);
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
		{ (void **)&c->EnqueueNDRangeKernel, "clEnqueueNDRangeKernel" },
		{ (void **)&c->Finish, "clFinish" },
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

#define CL_FAIL(what, e)                                                      \
	do {                                                                  \
		xl_probe_error(r, "%s: %s (%d)", what, cl_error_name(e), (int)(e)); \
		goto out;                                                     \
	} while (0)
#define CL_CHECK(call, what)                                                  \
	do {                                                                  \
		cl_int e_ = (call);                                           \
		if (e_ != 0)                                                  \
			CL_FAIL(what, e_);                                    \
	} while (0)

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
	if (t & 2)
		return "cpu";
	if (t & 8)
		return "accelerator";
	return "other";
}

void xl_probe_opencl(struct xl_probe_rep *r, const char *arg)
{
	struct cl c;
	cl_handle plats[16], devs[64], dev = NULL, ctx = NULL, q = NULL, prog = NULL;
	cl_handle kt = NULL, ks = NULL, ma = NULL, mb = NULL, mc = NULL;
	cl_handle mA = NULL, mB = NULL, mC = NULL;
	cl_uint np = 0, total = 0;
	cl_int e = 0;
	const char *missing = NULL;
	char *src = NULL, *path = NULL, plat_version[256] = "";
	float *ha = NULL, *hb = NULL, *hc = NULL, *A = NULL, *B = NULL, *C = NULL;
	const cl_uint n = 4u << 20, m = 256;
	const float s = 3.0f;
	json_t *jdevs;
	bool dev_gpu = false;

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
		goto out;
	}
	if (e != 0)
		CL_FAIL("clGetPlatformIDs", e);
	if (np > 16)
		np = 16;
	c.GetPlatformInfo(plats[0], CL_PLATFORM_VERSION, sizeof(plat_version) - 1,
			  plat_version, NULL);
	json_object_set_new(r->doc, "version", json_string(plat_version));
	xl_probe_reached(r, XL_STAGE_INITIALIZED);

	jdevs = json_array();
	json_object_set_new(r->doc, "devices", jdevs);
	for (cl_uint p = 0; p < np && total < 64; p++) {
		cl_uint nd = 0;

		if (c.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64 - total, devs + total, &nd) != 0)
			continue;
		if (nd > 64 - total)
			nd = 64 - total;
		for (cl_uint k = total; k < total + nd; k++) {
			cl_ulong mem = 0, type = 0;
			cl_uint cu = 0;
			char *name = dev_str(&c, devs[k], CL_DEVICE_NAME);
			char *ver = dev_str(&c, devs[k], CL_DEVICE_VERSION);
			char pname[256] = "";

			c.GetDeviceInfo(devs[k], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
			c.GetDeviceInfo(devs[k], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
			c.GetDeviceInfo(devs[k], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL);
			c.GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
			json_array_append_new(jdevs, json_pack("{s:s, s:I, s:s, s:i, s:s, s:s}",
				"kind", name, "memory_bytes", (json_int_t)mem, "type", dev_type(type),
				"compute_units", (int)cu, "platform", pname, "version", ver));
			if (!dev || (!dev_gpu && (type & CL_DEVICE_TYPE_GPU))) {
				dev = devs[k];
				dev_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
			}
			free(name);
			free(ver);
		}
		total += nd;
	}
	if (!dev) {
		xl_probe_error(r, "clGetDeviceIDs: %s (-1): the OpenCL platforms have no device",
			       cl_error_name(-1));
		goto out;
	}
	xl_probe_reached(r, XL_STAGE_DEVICES);

	ctx = c.CreateContext(NULL, 1, &dev, NULL, NULL, &e);
	if (!ctx)
		CL_FAIL("clCreateContext", e);
	q = c.CreateCommandQueue(ctx, dev, 0, &e);
	if (!q)
		CL_FAIL("clCreateCommandQueue", e);
	path = xl_data_path("kernels/opencl/triad.cl");
	src = xl_read_file(path, NULL, 1 << 20);
	if (!src) {
		xl_probe_error(r, "%s: cannot read the kernel: %s", path, strerror(errno));
		goto out;
	}
	prog = c.CreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &e);
	if (!prog)
		CL_FAIL("clCreateProgramWithSource", e);
	e = c.BuildProgram(prog, 1, &dev, "", NULL, NULL);
	if (e != 0) {
		char log[2048] = "";

		c.GetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
		xl_probe_error(r, "clBuildProgram: %s (%d)%s%s", cl_error_name(e), (int)e,
			       log[0] ? "; build log: " : "", log);
		goto out;
	}
	kt = c.CreateKernel(prog, "triad", &e);
	if (!kt)
		CL_FAIL("clCreateKernel triad", e);
	ks = c.CreateKernel(prog, "sgemm", &e);
	if (!ks)
		CL_FAIL("clCreateKernel sgemm", e);
	xl_probe_reached(r, XL_STAGE_COMPILED);

	ha = xl_malloc(n * sizeof(float));
	hb = xl_malloc(n * sizeof(float));
	hc = xl_malloc(n * sizeof(float));
	A = xl_malloc(m * m * sizeof(float));
	B = xl_malloc(m * m * sizeof(float));
	C = xl_malloc(m * m * sizeof(float));
	for (cl_uint i = 0; i < n; i++) {
		ha[i] = (float)(i % 1024) * 0.5f;
		hb[i] = (float)(i % 77) - 30.0f;
		hc[i] = -1.0f;
	}
	for (cl_uint i = 0; i < m * m; i++) {
		A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		B[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
	}
	ma = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &e);
	if (!ma)
		CL_FAIL("clCreateBuffer", e);
	mb = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &e);
	if (!mb)
		CL_FAIL("clCreateBuffer", e);
	mc = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &e);
	if (!mc)
		CL_FAIL("clCreateBuffer", e);
	mA = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, m * m * sizeof(float), NULL, &e);
	if (!mA)
		CL_FAIL("clCreateBuffer", e);
	mB = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, m * m * sizeof(float), NULL, &e);
	if (!mB)
		CL_FAIL("clCreateBuffer", e);
	mC = c.CreateBuffer(ctx, CL_MEM_READ_WRITE, m * m * sizeof(float), NULL, &e);
	if (!mC)
		CL_FAIL("clCreateBuffer", e);
	CL_CHECK(c.EnqueueWriteBuffer(q, ma, 1, 0, n * sizeof(float), ha, 0, NULL, NULL),
		 "clEnqueueWriteBuffer");
	CL_CHECK(c.EnqueueWriteBuffer(q, mb, 1, 0, n * sizeof(float), hb, 0, NULL, NULL),
		 "clEnqueueWriteBuffer");
	CL_CHECK(c.EnqueueWriteBuffer(q, mA, 1, 0, m * m * sizeof(float), A, 0, NULL, NULL),
		 "clEnqueueWriteBuffer");
	CL_CHECK(c.EnqueueWriteBuffer(q, mB, 1, 0, m * m * sizeof(float), B, 0, NULL, NULL),
		 "clEnqueueWriteBuffer");
	CL_CHECK(c.SetKernelArg(kt, 0, sizeof(ma), &ma), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(kt, 1, sizeof(mb), &mb), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(kt, 2, sizeof(mc), &mc), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(kt, 3, sizeof(s), &s), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(kt, 4, sizeof(n), &n), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(ks, 0, sizeof(mA), &mA), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(ks, 1, sizeof(mB), &mB), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(ks, 2, sizeof(mC), &mC), "clSetKernelArg");
	CL_CHECK(c.SetKernelArg(ks, 3, sizeof(m), &m), "clSetKernelArg");
	{
		size_t gt = n, gs[2] = { m, m };
		double t0, best;

		CL_CHECK(c.EnqueueNDRangeKernel(q, kt, 1, NULL, &gt, NULL, 0, NULL, NULL),
			 "clEnqueueNDRangeKernel triad");
		CL_CHECK(c.EnqueueNDRangeKernel(q, ks, 2, NULL, gs, NULL, 0, NULL, NULL),
			 "clEnqueueNDRangeKernel sgemm");
		CL_CHECK(c.Finish(q), "clFinish");
		xl_probe_reached(r, XL_STAGE_EXECUTED);
		CL_CHECK(c.EnqueueReadBuffer(q, mc, 1, 0, n * sizeof(float), hc, 0, NULL, NULL),
			 "clEnqueueReadBuffer");
		CL_CHECK(c.EnqueueReadBuffer(q, mC, 1, 0, m * m * sizeof(float), C, 0, NULL, NULL),
			 "clEnqueueReadBuffer");
		for (cl_uint i = 0; i < n; i++) {
			float want = ha[i] + s * hb[i];

			if (!(fabsf(hc[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
				xl_probe_error(r, "verification failed: triad element %u is %g, "
					       "expected %g", i, (double)hc[i], (double)want);
				goto out;
			}
		}
		for (cl_uint i = 0; i < m; i += 17)
			for (cl_uint j = 0; j < m; j += 13) {
				double want = 0;

				for (cl_uint k = 0; k < m; k++)
					want += (double)A[i * m + k] * B[k * m + j];
				if (!(fabs(C[i * m + j] - want) <= 1e-4 * (1.0 + fabs(want)))) {
					xl_probe_error(r, "verification failed: sgemm C[%u][%u] is "
						       "%g, expected %g", i, j, (double)C[i * m + j],
						       want);
					goto out;
				}
			}
		best = 1e30;
		for (int k = 0; k < 3; k++) {
			t0 = xl_mono();
			for (int j = 0; j < 4; j++)
				CL_CHECK(c.EnqueueNDRangeKernel(q, kt, 1, NULL, &gt, NULL, 0, NULL,
								NULL), "clEnqueueNDRangeKernel");
			CL_CHECK(c.Finish(q), "clFinish");
			if (xl_mono() - t0 < best)
				best = xl_mono() - t0;
		}
		json_object_set_new(r->doc, "bandwidth_gbs",
				    json_real(round(3.0 * n * sizeof(float) * 4 / best / 1e7) / 100));
		t0 = xl_mono();
		CL_CHECK(c.EnqueueNDRangeKernel(q, ks, 2, NULL, gs, NULL, 0, NULL, NULL),
			 "clEnqueueNDRangeKernel");
		CL_CHECK(c.Finish(q), "clFinish");
		best = xl_mono() - t0;
		json_object_set_new(r->doc, "gflops",
				    json_real(round(2.0 * m * m * m / best / 1e7) / 100));
		xl_probe_reached(r, XL_STAGE_VERIFIED);
	}
	json_object_set_new(r->doc, "details",
			    json_pack("{s:i, s:I, s:i}", "platforms", (int)np, "triad_bytes",
				      (json_int_t)3 * n * sizeof(float), "sgemm_n", (int)m));
out:
	if (ma) c.ReleaseMemObject(ma);
	if (mb) c.ReleaseMemObject(mb);
	if (mc) c.ReleaseMemObject(mc);
	if (mA) c.ReleaseMemObject(mA);
	if (mB) c.ReleaseMemObject(mB);
	if (mC) c.ReleaseMemObject(mC);
	if (kt) c.ReleaseKernel(kt);
	if (ks) c.ReleaseKernel(ks);
	if (prog) c.ReleaseProgram(prog);
	if (q) c.ReleaseCommandQueue(q);
	if (ctx) c.ReleaseContext(ctx);
	free(ha);
	free(hb);
	free(hc);
	free(A);
	free(B);
	free(C);
	free(src);
	free(path);
}
