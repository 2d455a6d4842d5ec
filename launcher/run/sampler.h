/* sampler.h - sampler.c's functions, private to launcher/run/: what a
 * launch used, measured from outside the job as it runs: the process
 * group's memory, sampled from /proc, and its GPU memory through NVML
 * (nvml.h). */
#ifndef XLAUNCH_LAUNCHER_RUN_SAMPLER_H
#define XLAUNCH_LAUNCHER_RUN_SAMPLER_H

#include "launcher/run/run.h"

#include <sys/types.h>

struct xl_nvml;

/* The sampler.  Members of the group are the child's process group and
 * every descendant of the child (even one that left the group). */
struct xl_observe {
	double interval_s;        /* between samples; 0: no sampling */
	pid_t root;               /* the child; its pid is the group's id */
	double start, next_at, next_scan_at, nvml_next_at;
	pid_t *pids;              /* members found by the last scan */
	size_t npids, cap;
	unsigned samples, scans;
	int64_t rss_sum_peak;     /* the largest sum of resident memory over the group */
	int64_t rss_one_peak;     /* the largest VmHWM of a member */
	int64_t vm_peak;          /* the largest VmPeak of a member */
	unsigned max_members;
	/* NVML */
	struct xl_nvml *nvml;     /* NULL when not loaded */
	char nvml_state[240];     /* "absent: ...", "loaded", "failed: ..." */
	int64_t device_peak;      /* the largest per-device sum over the group; -1 none */
	unsigned nvml_samples;
};

/* Sampling every interval_s seconds (XLAUNCH_SAMPLE_MS overrides; 0 turns
 * sampling off); NVML is loaded when it can be. */
void xl_observe_init(struct xl_observe *o, double interval_s);
void xl_observe_begin(struct xl_observe *o, pid_t child);
/* Milliseconds until the next sample is due (-1: never). */
int xl_observe_timeout_ms(const struct xl_observe *o, double now);
/* Samples when due. */
void xl_observe_tick(struct xl_observe *o, double now);
void xl_observe_release(struct xl_observe *o);
/* {interval_s, samples, members_max, rss_sum_peak_bytes, rss_one_peak_bytes,
 * vm_peak_bytes, nvml: {state, samples, device_peak_bytes}, tpu}.  New
 * reference. */
json_t *xl_observe_json(const struct xl_observe *o);

/* What the libtpu runtime metrics say (they are not read: "unavailable: ..."). */
const char *xl_observe_tpu_state(void);

#endif
