/*
 * probe.h - whether a backend is alive: the backend probe (cpu, opencl,
 * cuda, pjrt), each backend climbing a ladder of stages in an isolated,
 * time-limited child.
 */
#ifndef XLAUNCH_PROBE_H
#define XLAUNCH_PROBE_H

#include "common/common.h"

#include <jansson.h>
#include <sched.h>

/*
 * Every backend climbs the same ladder; the stage is the last rung reached.
 * The state is what the ladder means: alive (verified), installed (found but
 * not alive), absent, hung (killed at the wall-clock limit), crashed (died of
 * a signal or exited without a report).
 */
enum xl_probe_stage {
	XL_STAGE_ABSENT,
	XL_STAGE_INSTALLED,
	XL_STAGE_INITIALIZED,
	XL_STAGE_DEVICES,
	XL_STAGE_COMPILED,
	XL_STAGE_EXECUTED,
	XL_STAGE_VERIFIED,
};
enum xl_probe_state {
	XL_PROBE_ALIVE,
	XL_PROBE_INSTALLED,
	XL_PROBE_ABSENT,
	XL_PROBE_HUNG,
	XL_PROBE_CRASHED,
};
const char *xl_probe_stage_name(enum xl_probe_stage st);
const char *xl_probe_state_name(enum xl_probe_state st);
/* -1 when s names no stage. */
int xl_probe_stage_parse(const char *s);

/* Options of one probe run.  Owns its strings; release with
 * xl_probe_opts_release(). */
struct xl_probe_opts {
	struct xl_strv backends; /* cpu, opencl, cuda, pjrt, pjrt:PATH; empty: all */
	double timeout_s;        /* wall-clock limit per backend */
	bool record;             /* false after --no-record */
	bool progress;           /* show progress on stderr while backends run */
	struct xl_strv sitedirs; /* site-packages directories (purelib, platlib)
				  * of the Python environment, where PJRT plugins
				  * are looked for; the caller finds them */
};
#define XL_PROBE_DEFAULT_TIMEOUT 10.0
void xl_probe_opts_init(struct xl_probe_opts *o);
void xl_probe_opts_release(struct xl_probe_opts *o);
/* Checks a --backend LIST (comma-separated) and appends its items to o.
 * Returns false with *err (caller frees) on an unknown name. */
bool xl_probe_parse_backends(struct xl_probe_opts *o, const char *list, char **err);
/* Whether the selected backends include every PJRT plugin found ("pjrt",
 * or all backends): only then are o->sitedirs read. */
bool xl_probe_wants_plugin_search(const struct xl_probe_opts *o);

/*
 * Runs every selected backend, each in its own forked child under the
 * wall-clock limit, and returns the whole probe document, exactly what
 * `probe --json` prints: {"host", "time", "backends": [...]}.  *exit_code is
 * 0 when every backend that is at least installed is alive, 69 otherwise.
 * Caller owns the result (json_decref).
 */
json_t *xl_probe_run(const struct xl_ctx *ctx, const struct xl_probe_opts *opts,
		     int *exit_code);

/* ---- running one backend ---------------------------------------------- */

/* What a backend fills in while it climbs.  In a child, every stage reached is
 * also sent to the parent at once, so a hang or crash names its stage. */
struct xl_probe_rep {
	int fd;                    /* pipe to the parent; -1 in process */
	enum xl_probe_stage stage; /* last stage reached */
	json_t *doc;               /* version, devices, bandwidth_gbs, gflops,
				    * error, details; owned */
	double deadline;           /* xl_mono() time of the wall-clock limit;
				    * 0: none (run in process) */
};
typedef void xl_probe_backend_fn(struct xl_probe_rep *r, const char *arg);

void xl_probe_rep_init(struct xl_probe_rep *r, int fd);
void xl_probe_rep_release(struct xl_probe_rep *r);
void xl_probe_reached(struct xl_probe_rep *r, enum xl_probe_stage st);
/* What a backend does to reach stage st: 0 or more when it is reached, less
 * than 0 when a step failed (having said why with xl_probe_error). */
typedef int xl_probe_rung_fn(void *backend, enum xl_probe_stage st);
/* The ladder every backend climbs: from stage `from` up to
 * XL_STAGE_VERIFIED, one stage at a time, rung(backend, stage) and then the
 * stage reached; it stops at the first rung that fails.  0 when verified
 * is reached, else -1. */
int xl_probe_climb(struct xl_probe_rep *r, enum xl_probe_stage from, xl_probe_rung_fn *rung,
		   void *backend);
/* Sets the error text (the runtime's own words) once; later calls add
 * nothing, so the first failure is the one reported. */
void xl_probe_error(struct xl_probe_rep *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Writes s and a newline to the report pipe fd, whole (retries on EINTR). */
void xl_probe_send_line(int fd, const char *s);
/* Seconds left before r->deadline (XL_PROBE_DEFAULT_TIMEOUT when there is
 * none): what a backend may spend on its figures. */
double xl_probe_time_left(const struct xl_probe_rep *r);

/* The backends.  arg is the plugin path for pjrt, else NULL. */
void xl_probe_cpu(struct xl_probe_rep *r, const char *arg);
void xl_probe_opencl(struct xl_probe_rep *r, const char *arg);
void xl_probe_cuda(struct xl_probe_rep *r, const char *arg);
void xl_probe_pjrt(struct xl_probe_rep *r, const char *arg);

/*
 * Runs fn(arg) in a forked child in its own process group, under timeout_s of
 * wall clock, and returns the backend's JSON object: name, state, stage,
 * error, version, devices, bandwidth_gbs, gflops, elapsed_s (plus details).
 * A hang becomes state "hung" (the group is killed), a signal "crashed"; no
 * process of the group outlives the call.  on_stage, when set, is told of each
 * stage as the child reports it.  Caller owns the result.
 */
json_t *xl_probe_isolated(const char *name, xl_probe_backend_fn *fn, const char *arg,
			  double timeout_s,
			  void (*on_stage)(const char *name, enum xl_probe_stage st, void *u),
			  void *u);

/* ---- sizing a bandwidth figure (probe/probe_cpu.c) ------------------------ */

/* The host's last-level cache, as a memory bandwidth must step over it. */
struct xl_host_cache {
	uint64_t llc_bytes;        /* every instance the CPUs asked about reach;
				    * 0: unknown */
	uint64_t instance_bytes;   /* one instance */
	int level;                 /* 3 for an L3; 0: unknown */
	int instances;
	const char *source;        /* "sysfs", "sysconf" or "unknown" (static) */
};
/* Reads root/cpuN/cache/indexM/{level,type,size,shared_cpu_list} (root NULL:
 * /sys/devices/system/cpu under $XLAUNCH_HOST_ROOT, with sysconf's
 * _SC_LEVELn_CACHE_SIZE as the fallback where that is unset) for the CPUs in
 * only (NULL: every cpuN under root): the highest data or unified level,
 * each instance counted once. */
void xl_host_cache_read(const char *root, const cpu_set_t *only, struct xl_host_cache *c);
/* The working set, in bytes, of a memory bandwidth figure on this host:
 * four times the last-level cache (STREAM's rule), at least 64 MiB, 1 GiB
 * when the cache is unknown, at most a quarter of avail_bytes (0: no cap).
 * *rule (static text) says which of these decided. */
uint64_t xl_host_working_set(const struct xl_host_cache *c, uint64_t avail_bytes,
			     const char **rule);
/* MemAvailable of /proc/meminfo (under $XLAUNCH_HOST_ROOT) in bytes; 0 when
 * unknown. */
uint64_t xl_host_mem_available(void);
/* The CPUs this process may run on, and their number (at least 1). */
int xl_host_cpus(cpu_set_t *set);

/* ---- small pieces the bundle check uses -------------------------------- */

/* Loads a PJRT plugin (in a forked child, with a 10 s limit), calls
 * GetPjrtApi and reads the PJRT C API version; creates no client.
 * Returns 0, or -1 with *err set (caller frees). */
int xl_pjrt_plugin_api_version(const char *path, int *major, int *minor, char **err);
/* cuDriverGetVersion through dlopen("libcuda.so.1"): 0 and *version (e.g.
 * 12040), or -1 when no driver library can be loaded or it fails. */
int xl_cuda_driver_version(int *version);
/* Appends the paths of the PJRT plugins found: in the site-packages
 * directories sitedirs (jax_plugins/, libtpu/, ...), then
 * $PJRT_PLUGIN_LIBRARY_PATH (colon-separated files or directories), then
 * $TPU_LIBRARY_PATH.  Each real file once. */
void xl_pjrt_find_plugins(const struct xl_strv *sitedirs, struct xl_strv *paths);

#endif
