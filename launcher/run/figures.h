/* figures.h - figures.c's functions, private to launcher/run/: an
 * attempt's figures, from what the sampler saw (sampler.h), the job's own
 * evidence (its report file and its out-of-memory message) and the
 * estimate it was launched under. */
#ifndef XLAUNCH_LAUNCHER_RUN_FIGURES_H
#define XLAUNCH_LAUNCHER_RUN_FIGURES_H

#include "launcher/run/run.h"
#include "calib/calib.h"
#include "launcher/watch/watch.h"

struct xl_observe;

/* ---- the job's own evidence ------------------------------------------------------- */

/* The size of the allocation that failed, from a runtime's out-of-memory
 * line ("Out of memory allocating N bytes", "Tried to allocate 2.00 GiB",
 * "Attempting to allocate 1.20G"); -1 when it says none. */
int64_t xl_oom_request_bytes(const char *line);

/* Adds to a the figures the job's report file gave (r: its reader,
 * launcher/watch/watch.h): peaks of the kind they say (memory_kind, else
 * the helper's source: device_memory_stats, torch_xla_memory_info,
 * torch_cuda_max_allocated: device_peak; host_rss: host_peak_rss; any
 * other: unclassified) and XLA's buffers per device (per_device_bytes of an
 * xla_memory_analysis prediction: xla_buffers), in the order of the lines
 * that gave them.  A figure already in a is kept when larger or equal. */
void xl_jobreport_figures(const struct xl_jobreport *r, struct calib_attempt *a);

/* ---- an attempt's figures ------------------------------------------------------------ */

/* Adds the observed figures: host_peak_rss (the group's sampled peak, never
 * less than wait4's largest process), host_peak_vm (the largest process's
 * VmPeak), device_peak (NVML), the job's report file's (jobreport: what
 * its reader kept, or NULL), and oom_request from the out-of-memory line
 * (NULL: none). */
void xl_observe_figures(struct calib_attempt *a, const struct xl_observe *o,
			long long wait4_rss, const struct xl_jobreport *jobreport,
			const char *oom_line);
/* Sets the headline figures: observed of the kind the launch was judged in
 * (e's), else device_peak, host_peak_vm, host_peak_rss, the first seen;
 * predicted from e (also added as a predicted figure).  e may be NULL. */
void xl_observe_headline(struct calib_attempt *a, const struct calib_estimate *e);

#endif
