/* nvml.c - per-process GPU memory through NVML, loaded with dlopen (see
 * nvml.h). */
#include "launcher/run/nvml.h"

#include <dlfcn.h>
#include <stdlib.h>

const char XL_NVML_SOURCE[] = "NVML: the group's processes on their busiest device, sampled";

/* The few NVML entry points used, declared here (NVML's C API: integer
 * status codes, 0 success, 7 NVML_ERROR_INSUFFICIENT_SIZE; an opaque device
 * handle; per-process records of pid and used GPU memory, the _v2/_v3
 * functions with two more 32-bit fields after the memory). */
typedef int nvml_ret;
typedef struct nvml_device *nvml_device;
struct nvml_proc_v2 {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};
struct nvml_proc_v1 {
	unsigned int pid;
	unsigned long long used;
};
#define NVML_OK 0
#define NVML_INSUFFICIENT 7
#define NVML_NOT_AVAILABLE (~0ULL)
#define NVML_MAX_PROCS 1024

struct xl_nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	nvml_ret (*procs_v2)(nvml_device, unsigned int *, struct nvml_proc_v2 *);
	nvml_ret (*procs_v1)(nvml_device, unsigned int *, struct nvml_proc_v1 *);
	const char *(*errstr)(nvml_ret);
	unsigned int ndev;
};

static const char *nvml_err(const struct xl_nvml *n, nvml_ret r, char *buf, size_t size)
{
	const char *s = n->errstr ? n->errstr(r) : NULL;

	snprintf(buf, size, "%s (%d)", s ? s : "error", r);
	return buf;
}

struct xl_nvml *xl_nvml_load(char *why, size_t size)
{
	struct xl_nvml *n = xl_calloc(1, sizeof(*n));
	char eb[120];
	nvml_ret r;

	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, size, "absent: %s", dlerror());
		free(n);
		return NULL;
	}
#define SYM(field, name) (*(void **)&n->field = dlsym(n->lib, name))
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(procs_v2, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->procs_v2)
		SYM(procs_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!n->procs_v2)
		SYM(procs_v1, "nvmlDeviceGetComputeRunningProcesses");
	SYM(errstr, "nvmlErrorString");
#undef SYM
	if (!n->init || !n->count || !n->handle || (!n->procs_v2 && !n->procs_v1)) {
		snprintf(why, size, "failed: libnvidia-ml.so.1 lacks the per-process memory functions");
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	if ((r = n->init()) != NVML_OK) {
		snprintf(why, size, "failed: nvmlInit: %s", nvml_err(n, r, eb, sizeof(eb)));
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	if ((r = n->count(&n->ndev)) != NVML_OK) {
		snprintf(why, size, "failed: nvmlDeviceGetCount: %s", nvml_err(n, r, eb, sizeof(eb)));
		if (n->shutdown)
			n->shutdown();
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	snprintf(why, size, "loaded: %u device%s", n->ndev, n->ndev == 1 ? "" : "s");
	return n;
}

void xl_nvml_unload(struct xl_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

int64_t xl_nvml_sample(struct xl_nvml *n, const pid_t *pids, size_t npids, char *state,
		       size_t size)
{
	int64_t best = -1;
	char eb[120];

	for (unsigned d = 0; d < n->ndev; d++) {
		nvml_device dev;
		unsigned int cnt = 64;
		int64_t sum = 0;
		bool seen = false;
		nvml_ret r;

		if (n->handle(d, &dev) != NVML_OK)
			continue;
		for (;;) {
			/* grow the buffer while NVML says it is too small; both
			 * layouts begin with the pid and the memory used */
			size_t esz = n->procs_v2 ? sizeof(struct nvml_proc_v2)
						 : sizeof(struct nvml_proc_v1);
			unsigned char *buf = xl_calloc(cnt, esz);
			unsigned int got = cnt;

			r = n->procs_v2 ? n->procs_v2(dev, &got, (struct nvml_proc_v2 *)(void *)buf)
					: n->procs_v1(dev, &got, (struct nvml_proc_v1 *)(void *)buf);
			if (r == NVML_OK)
				for (unsigned i = 0; i < got && i < cnt; i++) {
					const struct nvml_proc_v1 *e =
						(const struct nvml_proc_v1 *)(void *)(buf + i * esz);

					bool in = false;

					for (size_t k = 0; k < npids && !in; k++)
						in = pids[k] == (pid_t)e->pid;
					if (in && e->used != NVML_NOT_AVAILABLE) {
						sum += (int64_t)e->used;
						seen = true;
					}
				}
			free(buf);
			if (r == NVML_INSUFFICIENT && got > cnt && got <= NVML_MAX_PROCS) {
				cnt = got;
				continue;
			}
			break;
		}
		if (r != NVML_OK && r != NVML_INSUFFICIENT)
			snprintf(state, size, "failed on device %u: %s", d,
				 nvml_err(n, r, eb, sizeof(eb)));
		if (seen && sum > best)
			best = sum;
	}
	return best;
}
