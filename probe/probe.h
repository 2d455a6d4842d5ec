/*
 * probe.h - what is installed and whether it is alive: the backend probe
 * (cpu, opencl, cuda, pjrt) and the version-bundle check (PEP 440, package
 * metadata, bundle rules).
 */
#ifndef XLAUNCH_PROBE_H
#define XLAUNCH_PROBE_H

#include "common/common.h"

#include <jansson.h>
#include <sched.h>

/* ======================================================================
 * Backend probe
 * ====================================================================== */

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
	char *python;            /* interpreter whose site-packages hold PJRT
				  * plugins; NULL: $VIRTUAL_ENV, else python3 */
};
#define XL_PROBE_DEFAULT_TIMEOUT 10.0
void xl_probe_opts_init(struct xl_probe_opts *o);
void xl_probe_opts_release(struct xl_probe_opts *o);
/* Checks a --backend LIST (comma-separated) and appends its items to o.
 * Returns false with *err (caller frees) on an unknown name. */
bool xl_probe_parse_backends(struct xl_probe_opts *o, const char *list, char **err);

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
 * /sys/devices/system/cpu, with sysconf's _SC_LEVELn_CACHE_SIZE as the
 * fallback) for the CPUs in only (NULL: every cpuN under root): the highest
 * data or unified level, each instance counted once. */
void xl_host_cache_read(const char *root, const cpu_set_t *only, struct xl_host_cache *c);
/* The working set, in bytes, of a memory bandwidth figure on this host:
 * four times the last-level cache (STREAM's rule), at least 64 MiB, 1 GiB
 * when the cache is unknown, at most a quarter of avail_bytes (0: no cap).
 * *rule (static text) says which of these decided. */
uint64_t xl_host_working_set(const struct xl_host_cache *c, uint64_t avail_bytes,
			     const char **rule);
/* MemAvailable of /proc/meminfo in bytes; 0 when unknown. */
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
/* Appends the paths of the PJRT plugins found: the site-packages (purelib and
 * platlib) of python (NULL: $VIRTUAL_ENV/bin/python, else python3 on PATH),
 * then $PJRT_PLUGIN_LIBRARY_PATH (colon-separated files or directories), then
 * $TPU_LIBRARY_PATH.  Each real file once. */
void xl_pjrt_find_plugins(const char *python, struct xl_strv *paths);

/* The `probe` command. */
extern const struct xl_cmd xl_cmd_probe;

/* Probe history lives in the calibration store, above this module; the
 * launcher registers the function that records a probe document there. */
typedef void (*xl_probe_recorder)(const struct xl_ctx *ctx, const json_t *doc);
void xl_probe_set_recorder(xl_probe_recorder fn);

/* (end of the backend probe section) */













/* ======================================================================
 * Version bundles: PEP 440, package metadata, bundle check
 * ====================================================================== */

/* ---- PEP 440 versions (probe/pep440.c) ----------------------------------- */

/* One local-label segment: lower case; numbers without leading zeros. */
struct xl_vseg {
	const char *s;
	bool num;
};

/* A parsed version.  Numbers are decimal strings without leading zeros (any
 * length compares right); every pointer points into storage the version
 * owns.  Release with xl_version_release(). */
struct xl_version {
	const char *epoch;          /* "0" when absent */
	const char **release;
	size_t nrelease;
	int pre;                    /* -1 none, 0 a, 1 b, 2 rc */
	const char *pre_n;
	const char *post;           /* NULL: no post-release */
	const char *dev;            /* NULL: no dev release */
	struct xl_vseg *local;
	size_t nlocal;
	bool has_local;
	char *norm;                 /* normalized form, "1!2.0rc1.post2.dev3+ab.4" */
	char *arena;
};

/* Parses len bytes (a fuzz entry point: any bytes are accepted).  Returns 0,
 * or -1 when s is not a PEP 440 version (nothing to release then). */
int xl_version_parse(const char *s, size_t len, struct xl_version *v);
void xl_version_release(struct xl_version *v);
/* PEP 440 order, local labels included: -1, 0 or 1. */
int xl_version_cmp(const struct xl_version *a, const struct xl_version *b);
bool xl_version_is_prerelease(const struct xl_version *v);
/* Parses and compares two strings: 0 and *out set, -1 when a is invalid,
 * -2 when b is. */
int xl_version_compare_str(const char *a, const char *b, int *out);

enum xl_spec_op {
	XL_OP_EQ, XL_OP_NE, XL_OP_LT, XL_OP_LE, XL_OP_GT, XL_OP_GE,
	XL_OP_COMPATIBLE, XL_OP_ARBITRARY
};

/* One clause of a specifier set; lo/hi are derived bounds. */
struct xl_spec {
	enum xl_spec_op op;
	bool wildcard;              /* ==V.* or !=V.* */
	char *text;                 /* the clause as written */
	char *vtext;                /* the version part as written */
	struct xl_version v, lo, hi;
};

/* "" (anything), ">=2.9", ">=0.10.1,<=0.10.2", "==2.9.*". */
struct xl_specset {
	struct xl_spec *v;
	size_t n;
};

/* Parses a comma-separated specifier set (a fuzz entry point).  Returns 0,
 * or -1 with *err set (caller frees). */
int xl_specset_parse(const char *s, size_t len, struct xl_specset *out, char **err);
void xl_specset_release(struct xl_specset *ss);
/* Whether v satisfies every clause, pre-releases admitted (as `pip check`
 * does).  raw is the version as written, for "===" (NULL: v->norm). */
bool xl_specset_contains(const struct xl_specset *ss, const struct xl_version *v, const char *raw);
bool xl_spec_contains(const struct xl_spec *sp, const struct xl_version *v, const char *raw);
/* Normalized text of the set, ">=1.0,<2"; caller frees. */
char *xl_specset_str(const struct xl_specset *ss);

/* ---- environment markers (probe/marker.c) ---------------------------------- */

/* The facts markers test; NULL fields compare as "". */
struct xl_marker_env {
	const char *python_version;          /* "3.13" */
	const char *python_full_version;     /* "3.13.1" */
	const char *sys_platform;            /* "linux" */
	const char *platform_system;         /* "Linux" */
	const char *platform_machine;        /* "x86_64" */
	const char *platform_release;
	const char *platform_version;
	const char *platform_python_implementation; /* "CPython" */
	const char *implementation_name;     /* "cpython" */
	const char *implementation_version;
	const char *os_name;                 /* "posix" */
};

struct xl_marker;   /* opaque expression tree */

/* Parses a marker expression (a fuzz entry point).  Returns 0, or -1 with
 * *err "col N: what" (caller frees). */
int xl_marker_parse(const char *s, size_t len, struct xl_marker **out, char **err);
void xl_marker_free(struct xl_marker *m);
/* Evaluates with extra (NULL or "" for none).  Returns 1 true, 0 false, -1
 * when a comparison is undefined (*err set, caller frees). */
int xl_marker_eval(const struct xl_marker *m, const struct xl_marker_env *env,
		   const char *extra, char **err);
/* True when the expression tests `extra` anywhere. */
bool xl_marker_uses_extra(const struct xl_marker *m);
/* The host facts of this process's machine with python_version set to py
 * ("3.13.1"); strings live in static storage. */
void xl_marker_env_host(struct xl_marker_env *env, const char *py);

/* ---- package metadata (probe/metadata.c) ----------------------------------- */

/* One Requires-Dist line: name [extras] specifier ; marker. */
struct xl_req {
	char *raw;
	char *name;                 /* as written */
	char *key;                  /* normalized: lower case, runs of -_. as - */
	struct xl_strv extras;      /* normalized */
	struct xl_specset spec;
	char *url;                  /* "name @ url" form, else NULL */
	struct xl_marker *marker;   /* NULL: always */
};

/* Parses a PEP 508 requirement (a fuzz entry point).  Returns 0, or -1 with
 * *err set (caller frees). */
int xl_req_parse(const char *s, size_t len, struct xl_req *out, char **err);
void xl_req_release(struct xl_req *r);

/* An installed distribution read from METADATA or PKG-INFO. */
struct xl_dist {
	char *name, *key;           /* key normalized as in xl_req */
	char *version;              /* as written */
	struct xl_version v;
	bool version_ok;            /* Version parsed as PEP 440 */
	char *requires_python;
	struct xl_req *reqs;
	size_t nreqs;
	struct xl_strv extras;      /* Provides-Extra, normalized */
	char *path;                 /* the metadata file, or NULL */
	struct xl_strv problems;    /* what could not be read, one line each */
};

/* Parses a METADATA/PKG-INFO document (a fuzz entry point).  Never fails on
 * content: unreadable parts go to d->problems.  Returns 0, or -1 when there
 * is no Name or no Version (also noted in problems). */
int xl_metadata_parse(const char *data, size_t len, struct xl_dist *d);
void xl_dist_release(struct xl_dist *d);
/* Normalized project name ("Torch_XLA" -> "torch-xla"); caller frees. */
char *xl_pkg_key(const char *name);

/* ---- Python environments (probe/pyenv.c) ----------------------------------- */

struct xl_pyenv {
	char *python;               /* the interpreter asked */
	char *source;               /* "--python", "VIRTUAL_ENV" or "PATH" */
	char *version;              /* "3.13.1" */
	char *version_short;        /* "3.13" */
	char *prefix, *base_prefix, *executable;
	char *sys_platform, *platform_system, *platform_machine, *platform_release,
	     *platform_version, *implementation, *implementation_version, *python_impl,
	     *os_name;
	bool venv;                  /* prefix has pyvenv.cfg */
	bool system_site;           /* pyvenv.cfg include-system-site-packages */
	struct xl_strv sitedirs;    /* searched in order; the first hit of a name wins */
	struct xl_dist *dists;
	size_t ndists;
	struct xl_strv broken;      /* "path: what" for unreadable metadata */
};

/* Finds the interpreter (python, else $VIRTUAL_ENV/bin/python, else python3
 * on PATH), asks it once for its paths and platform facts (stdlib sys,
 * sysconfig, site and platform only, site processing off) and reads every
 * *.dist-info/METADATA and *.egg-info/PKG-INFO on its path without importing
 * anything.  Prints its own errors; returns 0, 66 (no interpreter) or 69
 * (the interpreter failed).  Release with xl_pyenv_release(). */
int xl_pyenv_open(const char *python, struct xl_pyenv *env);
void xl_pyenv_release(struct xl_pyenv *env);
/* Reads the distributions in the given directories only (tests). */
void xl_pyenv_scan_dirs(struct xl_pyenv *env, const struct xl_strv *dirs);
/* The installed distribution by normalized key, or NULL. */
const struct xl_dist *xl_pyenv_find(const struct xl_pyenv *env, const char *key);
/* Marker facts of this environment (pointers into env). */
void xl_pyenv_marker_env(const struct xl_pyenv *env, struct xl_marker_env *out);

/* ---- bundle matrix and checks (probe/bundle.c) ----------------------------- */

/* Loads and validates a bundle matrix (etc/bundles.yaml when path is NULL).
 * Errors are printed as "file:line:col: what"; returns 0, 65 or 66.
 * The document is returned as JSON (caller decrefs). */
int xl_bundle_matrix_load(const char *path, json_t **out);

/* Validates matrix text; on error returns 65 with *err "LINE:COL: what". */
int xl_bundle_matrix_parse(const char *data, size_t len, json_t **out, char **err);

struct xl_bundle_host;

/* `bundle show` as JSON (new reference): python, packages, host, cuda,
 * pjrt_plugins (plugins are loaded, in a child, only when with_plugins). */
json_t *xl_bundle_show_json(const struct xl_pyenv *env, const struct xl_bundle_host *host,
			    bool with_plugins);
/* True for the packages that define an ML lane (torch, jax, libtpu, nvidia-*, ...). */
bool xl_bundle_is_lane(const char *key);

/* Facts about the host that the bundle rules use.  Negative or NULL: unknown. */
struct xl_bundle_host {
	int cuda_driver_api;        /* cuDriverGetVersion, e.g. 12040; -1 none */
	char *nvidia_module;        /* kernel module version "535.104.05" or NULL */
	char *cuda_toolkit;         /* /usr/local/cuda version "12.4.1" or NULL */
	char *glibc, *kernel, *machine;
};
/* Reads the host facts (CUDA driver through the probe's loader); release
 * with xl_bundle_host_release(). */
void xl_bundle_host_read(struct xl_bundle_host *h);
void xl_bundle_host_release(struct xl_bundle_host *h);

/* Runs every bundle rule.  Returns the report (new reference):
 * {"verdict", "bundle", "status", "matched": [...], "reasons":
 *  [{"rule","severity","packages","message"}], "features": [...]};
 * *verdict_exit is 0, or 1 for "incompatible". */
json_t *xl_bundle_check(const struct xl_pyenv *env, json_t *matrix,
			const struct xl_bundle_host *host, int *verdict_exit);

/* The bundle gate of a profile's policy.bundle.  python: the interpreter
 * (NULL: discovery as in `bundle show`); names: bundle names from the
 * matrix.  Returns 0 when the installed bundle matches one of the named
 * bundles and none of its packages break a rule, 77 with *why (caller
 * frees) when it does not, or 65/66/69 when the matrix or the environment
 * cannot be read (*why set too). */
int xl_bundle_gate(const char *python, const struct xl_strv *names, char **why);

/* The known-bad flags of the bundle installed for python (NULL: discovery):
 * *out is a JSON array (new reference) of {"bundle","var","flag","value",
 * "reason"} where var is the composite variable (LIBTPU_INIT_ARGS,
 * XLA_FLAGS) and value is null when any value is bad.  Returns 0 (an empty
 * array when no bundle of the matrix matches), or 65/66/69 with a message
 * printed. */
int xl_bundle_known_bad_flags(const char *python, json_t **out);

/* Fuzz entry points: parse len arbitrary bytes, return 0 (abort on an
 * internal inconsistency). */
int xl_fuzz_version(const uint8_t *data, size_t len);
int xl_fuzz_specifier(const uint8_t *data, size_t len);
int xl_fuzz_marker(const uint8_t *data, size_t len);
int xl_fuzz_metadata(const uint8_t *data, size_t len);

extern const struct xl_cmd xl_cmd_bundle;

/* (end of the bundle section) */

#endif
