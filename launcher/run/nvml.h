/* nvml.h - nvml.c's functions, private to launcher/run/: the GPU memory of
 * a set of processes through NVML, loaded with dlopen when the host has it
 * (libnvidia-ml.so.1). */
#ifndef XLAUNCH_LAUNCHER_RUN_NVML_H
#define XLAUNCH_LAUNCHER_RUN_NVML_H

#include "launcher/run/run.h"

#include <sys/types.h>

struct xl_nvml;

/* The source a device peak NVML saw is recorded with. */
extern const char XL_NVML_SOURCE[];

/* Loads libnvidia-ml.so.1 (LD_LIBRARY_PATH applies) and counts its devices;
 * *why says "loaded: N devices", or "absent: ..." or "failed: ..." with NULL. */
struct xl_nvml *xl_nvml_load(char *why, size_t size);
/* Shuts NVML down and unloads it (n may be NULL). */
void xl_nvml_unload(struct xl_nvml *n);
/* The memory of pids on their busiest device: per device, the sum over
 * those processes; the largest of those.  -1 when none of them is seen
 * (processes of another PID namespace are not matched).  A device that
 * fails says so in state. */
int64_t xl_nvml_sample(struct xl_nvml *n, const pid_t *pids, size_t npids, char *state,
		       size_t size);

#endif
