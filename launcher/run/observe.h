/* observe.h - observe.c's functions, private to launcher/run/: what a
 * launch used, measured from outside the job: the process group's memory,
 * sampled; per-process GPU memory through NVML; the compiler's own figure
 * through XLA's dump; the job's report lines and its out-of-memory message
 * as evidence. */
#ifndef XLAUNCH_LAUNCHER_RUN_OBSERVE_H
#define XLAUNCH_LAUNCHER_RUN_OBSERVE_H

#include "launcher/run/run.h"
#include "calib/calib.h"
#include "launcher/watch/watch.h"

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

/* ---- the compiler's figure: XLA's memory-usage reports ------------------------- */

struct xl_xla_dump {
	char *dir;                /* where XLA writes (ours or the user's), or NULL */
	bool ours;                /* xlaunch added the flags (and prunes the dump) */
	bool user;                /* XLA_FLAGS has the user's own --xla_dump_to */
	char *tokens;             /* what xlaunch added to XLA_FLAGS, or NULL */
	char why[240];            /* why nothing is asked for, when dir is NULL */
};

/* Asks XLA to dump each compiled module (its files are read as the job
 * runs: launcher/watch/) by adding dump flags to XLA_FLAGS in *envp, into
 * RUN_DIR/xla-dump: only for an XLA
 * job (its bundle has jax, jaxlib or torch-xla, or the profile sets XLA,
 * JAX, PJRT or TPU variables), never under policy.timing, never when a
 * token would enter a persistent-cache key by etc/cachekeys.yaml (every
 * token must be excluded by every runtime there), never when XLA_FLAGS
 * names a flags file.  A user's own --xla_dump_to is read instead (never
 * changed; not when it is "-" or "sponge").  disabled: --no-xla-dump. */
void xl_xla_dump_setup(const struct xl_profile *p, const json_t *parts, const char *run_dir,
		       bool disabled, char ***envp, struct xl_xla_dump *d);
/* Whether every token xlaunch adds stays out of every runtime's
 * persistent-cache key by the rules in file (the layout of
 * etc/cachekeys.yaml: per runtime, flags.exclude and flags.exceptions);
 * *why says which would not. */
bool xl_xla_dump_keyless(const char *file, char *why, size_t size);
/* The same by n runtimes' compiled rules (xl_ck_runtimes: what a launch
 * asks, without parsing the file; dumpkeys.c). */
struct xl_ck_runtime;
bool xl_xla_dump_keyless_rules(const struct xl_ck_runtime *rts, size_t n, char *why, size_t size);
/* The tokens xlaunch adds for dir (caller frees). */
char *xl_xla_dump_tokens(const char *dir);
void xl_xla_dump_release(struct xl_xla_dump *d);

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
/* The largest program's figure of mods ({name: bytes}, this run's reports),
 * after adding the programs of prev (the same signature's last figures,
 * from run prev_run) that this run did not compile; -1 when none.  source
 * says where it came from (reused and marked so on a cache hit). */
int64_t xl_xla_modules_figure(json_t *mods, const json_t *prev, const char *prev_run,
			      char *source, size_t size);

#endif
