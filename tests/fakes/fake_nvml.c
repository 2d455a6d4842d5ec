/*
 * fake_nvml.c - a fake libnvidia-ml.so.1 for testing how xlaunch reads and
 * sums per-process GPU memory; never a stand-in for a GPU.  It has no
 * devices of its own: it reports, for two devices, the processes listed in
 * the file named by FAKE_NVML_PROCS, one "DEVICE PID BYTES" per line
 * (BYTES "na" for NVML's "not available"), and answers the first query of
 * each device with NVML_ERROR_INSUFFICIENT_SIZE, as NVML does when the
 * caller's buffer is too small.  Built by the tests, optionally with
 *   -DFAKE_INIT_FAIL   nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
 *   -DFAKE_V1          an older driver: only nvmlDeviceGetComputeRunningProcesses,
 *                      whose records hold the pid and the memory used alone
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
#ifndef FAKE_V1
	unsigned int gpuInstanceId, computeInstanceId;
#endif
} nvmlProcessInfo_t;

#define OK 0
#define INSUFFICIENT 7
#define DRIVER_NOT_LOADED 9
#define NDEV 2

static int asked[NDEV];

const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == DRIVER_NOT_LOADED ? "Driver Not Loaded" : r == INSUFFICIENT ? "Insufficient Size"
									  : "Unknown Error";
}

nvmlReturn_t nvmlInit_v2(void)
{
#ifdef FAKE_INIT_FAIL
	return DRIVER_NOT_LOADED;
#else
	return OK;
#endif
}

nvmlReturn_t nvmlShutdown(void)
{
	return OK;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = NDEV;
	return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i >= NDEV)
		return 2;
	*d = (nvmlDevice_t)(size_t)(i + 1);
	return OK;
}

#ifdef FAKE_V1
#define PROCS nvmlDeviceGetComputeRunningProcesses
#else
#define PROCS nvmlDeviceGetComputeRunningProcesses_v3
#endif
nvmlReturn_t PROCS(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos)
{
	unsigned dev = (unsigned)(size_t)d - 1, n = 0;
	const char *file = getenv("FAKE_NVML_PROCS");
	FILE *f = file ? fopen(file, "r") : NULL;
	char line[256];

	if (dev >= NDEV)
		return 2;
	if (!asked[dev]++) {
		/* the caller's first buffer is "too small" */
		*count = 100;
		if (f)
			fclose(f);
		return INSUFFICIENT;
	}
	while (f && fgets(line, sizeof(line), f)) {
		unsigned ld, pid;
		char bytes[64];

		if (sscanf(line, "%u %u %63s", &ld, &pid, bytes) != 3 || ld != dev || n >= *count)
			continue;
		infos[n].pid = pid;
		infos[n].usedGpuMemory = strcmp(bytes, "na") == 0 ? ~0ULL : strtoull(bytes, NULL, 10);
#ifndef FAKE_V1
		infos[n].gpuInstanceId = infos[n].computeInstanceId = ~0u;
#endif
		n++;
	}
	if (f)
		fclose(f);
	*count = n;
	return OK;
}
