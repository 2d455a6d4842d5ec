/*
 * bundle.h - the installed software bundle: PEP 440 versions and specifiers,
 * environment markers, package metadata, Python environments (interpreter
 * discovery, site directories, installed distributions), the bundle matrix,
 * the bundle check and the gate a profile's policy.bundle asks for.
 *
 * Reads what is installed without importing anything.  Depends on common
 * only, and on the probe for one thing: the PJRT API version of a plugin and
 * the CUDA driver version (bundle/bundle.c).
 */
#ifndef XLAUNCH_BUNDLE_H
#define XLAUNCH_BUNDLE_H

#include "common/common.h"

#include <jansson.h>

/* ---- PEP 440 versions (bundle/pep440.c) ----------------------------------- */

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

/* ---- environment markers (bundle/marker.c) ---------------------------------- */

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

/* ---- package metadata (bundle/metadata.c) ----------------------------------- */

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

/* ---- Python environments (bundle/pyenv.c) ----------------------------------- */

struct xl_pyenv {
	char *python;               /* the interpreter asked */
	char *source;               /* "--python", "VIRTUAL_ENV" or "PATH" */
	char *version;              /* "3.13.1" */
	char *version_short;        /* "3.13" */
	char *prefix, *base_prefix, *executable;
	char *sys_platform, *platform_system, *platform_machine, *platform_release,
	     *platform_version, *implementation, *implementation_version, *python_impl,
	     *os_name;
	bool venv;                  /* a pyvenv.cfg beside or above the executable */
	bool system_site;           /* pyvenv.cfg include-system-site-packages */
	struct xl_strv sitedirs;    /* the directories of sys.path as the interpreter's
				     * site builds it, in order; the first hit of a
				     * name wins */
	struct xl_strv libdirs;     /* purelib and platlib: where pip installs, and
				     * where PJRT plugins are looked for */
	struct xl_dist *dists;
	size_t ndists;
	struct xl_strv broken;      /* "path: what" for unreadable metadata */
};

/* The interpreter whose bundle is read, the one place it is looked for:
 * python when given (a path, or a name found on PATH), else
 * $VIRTUAL_ENV/bin/python, else python3 on PATH, each as environment envp
 * says (NULL: this process's).  The path is absolute against the working
 * directory (links kept: a venv's bin/python is a link whose place makes it
 * the venv's), and a pyenv shim is followed to the interpreter it will run
 * (xl_pyenv_shim_target).  Returns 0 with *path (caller frees) and *source
 * ("--python", "VIRTUAL_ENV" or "PATH"), or 66 with *why (caller frees).
 * Prints nothing. */
int xl_python_find(const char *python, char *const *envp, char **path, const char **source,
		   char **why);
/* The interpreter the pyenv shim at path (a script in a directory called
 * shims that names pyenv) will run under environment envp (NULL: this
 * process's): ROOT/versions/V/bin/NAME, ROOT the shims directory's parent,
 * for the first V of $PYENV_VERSION (colon-separated), else of the nearest
 * .python-version from the working directory up, else of ROOT/version,
 * that has NAME; "system" is NAME on PATH without the shims directory.
 * NULL when path is no shim or none of them has NAME.  Caller frees. */
char *xl_pyenv_shim_target(const char *path, char *const *envp);
/* Whether path is an ELF file (an interpreter binary, not a script). */
bool xl_is_elf(const char *path);

enum {
	XL_PYENV_QUIET = 1 << 0,    /* print nothing; the return value says it */
	XL_PYENV_PATHS = 1 << 1,    /* paths and platform facts only: read no METADATA */
};
/* Finds the interpreter (xl_python_find), asks it once for its platform
 * facts and its sys.path as its own site module builds it (started with -S,
 * then site's venv, user-site and site-packages steps; stdlib sys, os, io,
 * site, sysconfig and platform only; .pth import lines and sitecustomize
 * not run) and reads every *.dist-info/METADATA and *.egg-info/PKG-INFO on
 * that path without importing anything.  Prints its own errors; returns 0,
 * 66 (no interpreter) or 69 (the interpreter failed).  Release with
 * xl_pyenv_release() either way. */
int xl_pyenv_open(const char *python, unsigned flags, struct xl_pyenv *env);
/* The same with the interpreter found and asked under environment envp
 * (NULL: this process's; the job's PYTHONPATH, PYTHONHOME and user-site
 * variables change what its site finds).  When it fails and why is not
 * NULL, *why (caller frees) says why: "python 'PY': not a Python
 * interpreter (...)" for a program that is none. */
int xl_pyenv_open_env(const char *python, char *const *envp, unsigned flags, struct xl_pyenv *env,
		      char **why);
void xl_pyenv_release(struct xl_pyenv *env);
/* Reads the distributions in the given directories only (tests). */
void xl_pyenv_scan_dirs(struct xl_pyenv *env, const struct xl_strv *dirs);
/* The installed distribution by normalized key, or NULL. */
const struct xl_dist *xl_pyenv_find(const struct xl_pyenv *env, const char *key);
/* Marker facts of this environment (pointers into env). */
void xl_pyenv_marker_env(const struct xl_pyenv *env, struct xl_marker_env *out);

/* ---- bundle matrix and checks (bundle/bundle.c) ----------------------------- */

/* Loads and validates a bundle matrix (etc/bundles.yaml when path is NULL).
 * Errors are printed as "file:line:col: what"; returns 0, 65 or 66.
 * The document is returned as JSON (caller decrefs). */
int xl_bundle_matrix_load(const char *path, json_t **out);

/* Validates matrix text; on error returns 65 with *err "LINE:COL: what". */
int xl_bundle_matrix_parse(const char *data, size_t len, json_t **out, char **err);

struct xl_bundle_host;

/* `bundle show` as JSON (new reference): python, packages, host, cuda,
 * pjrt_plugins (plugins are loaded, in a child, only when with_plugins).
 * packages holds the lane packages, or every distribution when all. */
json_t *xl_bundle_show_json(const struct xl_pyenv *env, const struct xl_bundle_host *host,
			    bool with_plugins, bool all);
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
 * with xl_bundle_host_release().  The NVIDIA kernel module version is read
 * from /sys/module/nvidia/version, else /proc/driver/nvidia/version; those
 * and /usr/local/cuda/version.{json,txt} are read under $XLAUNCH_HOST_ROOT
 * when it is set (test fixtures). */
void xl_bundle_host_read(struct xl_bundle_host *h);
void xl_bundle_host_release(struct xl_bundle_host *h);
/* The driver version in the text of /sys/module/nvidia/version (the bare
 * version) or /proc/driver/nvidia/version (its "NVRM version:" line, from
 * the proprietary or the open kernel module), "580.159.04"; NULL when
 * there is none (a fuzz entry point).  Caller frees. */
char *xl_nvidia_driver_parse(const char *text, size_t len);

/* Runs every bundle rule.  Returns the report (new reference):
 * {"verdict", "bundle", "status", "matched": [...], "errors", "warnings",
 *  "reasons": [{"rule","severity","packages","message"}], "features": [...],
 *  "installed_count", "lane_count", "site_dirs": [...]}.  The verdict is
 * "empty" when no package of the ML lane was found (nothing was checked:
 * never a pass), else "incompatible" on any error, else "known-issues",
 * "validated" or "compatible" by the matched bundle's status;
 * *verdict_exit is 2 (XL_EX_EMPTY) for empty, 1 for incompatible, else 0. */
json_t *xl_bundle_check(const struct xl_pyenv *env, json_t *matrix,
			const struct xl_bundle_host *host, int *verdict_exit);

/* The bundle gate of a profile's policy.bundle: the matrix and the
 * installed bundle are read once.  python: the interpreter (NULL: discovery
 * as in `bundle show`), asked under environment envp (the job's; NULL:
 * this process's); names: bundle names from the matrix.  Returns 0 when
 * the installed bundle matches one of the named bundles and none of its
 * packages break a rule, with *known_bad (new reference) the flags the
 * matrix records as bad on the bundles it matches: an array of {"bundle",
 * "var", "flag", "value", "reason"}, var the composite variable
 * (LIBTPU_INIT_ARGS, XLA_FLAGS), value null when any value is bad.  Returns
 * 77 when it does not match (an empty environment, verdict "empty", never
 * matches, and *why says where the interpreter looked), or 65/66/69 when
 * the matrix or the environment cannot be read, with *why (caller frees)
 * and *known_bad NULL. */
int xl_bundle_gate(const char *python, char *const *envp, const struct xl_strv *names,
		   json_t **known_bad, char **why);

/* ---- the release the job will load (runtime.c) ------------------------------- */

/* Whether path names a Python: "python", "python3", "python3.11",
 * "python3.13t", "pypy3". */
bool xl_python_name(const char *path);
/* The interpreter of a script's "#!" line when it is a Python, found the
 * way the kernel and env(1) (with the PATH of envp, NULL: this process's)
 * find it, absolute; NULL otherwise.  Caller frees. */
char *xl_python_shebang(const char *file, char *const *envp);

/* The runtime releases a job will load: the interpreter its command starts
 * and the versions of jaxlib, jax, torch, torch_xla and libtpu installed
 * there, read from package metadata without importing anything.  Flag
 * lint, cache-key rules, bundle gates and `profile show --explain` all use
 * this one answer.  Every string is owned. */
struct xl_runtime {
	char *python;            /* the interpreter; NULL when none was found or given */
	const char *source;      /* how it was found: "argv[0]", "#!", "VIRTUAL_ENV", "PATH",
				  * "--python", "--release", or "none" (static) */
	char *why;               /* why there is no interpreter, or why the one found
				  * could not be read (python set), or NULL */
	char *jaxlib, *jax, *torch, *torch_xla, *libtpu; /* versions as installed; NULL: not installed
							  * (libtpu: the one TPU_LIBRARY_PATH names, when
							  * set: its wheel's version, else "unknown (...)") */
};

/* The runtime of a command line started with environment envp (the
 * child's, NULL: this process's): argv[0] when it names a Python, else the
 * Python of its "#!" line, else $VIRTUAL_ENV/bin/python, else python3 on
 * PATH (argv NULL or argc 0: the last two only; a command that is not
 * found: none), each looked up in envp, a pyenv shim followed to its
 * interpreter.  The versions come from xl_bundle_summary_env() with envp,
 * so a launch pays a few stat() calls once the interpreter's environment
 * is cached.  Never fails: without an interpreter rt->python is NULL and
 * rt->why says why; an interpreter that cannot be asked keeps rt->python,
 * with no versions and rt->why.  Release with xl_runtime_release(). */
void xl_runtime_detect(char *const *argv, int argc, char *const *envp, struct xl_runtime *rt);
/* The runtime of an interpreter named by the user (`--python PY`, a path,
 * absolute against the working directory, or a name on PATH).  Returns 0,
 * or 66 with rt->why when it is not there or is no Python that can be
 * asked for its paths. */
int xl_runtime_of_python(const char *python, struct xl_runtime *rt);
/* A runtime of one release given as PKG==VERSION (`--release`; PKG one of
 * jaxlib, jax, torch_xla, torch, libtpu, '-' and '_' alike; jax and
 * jaxlib go in lock step, so either sets both), without an interpreter.
 * Returns 0, or 64 with rt->why. */
int xl_runtime_of_release(const char *spec, struct xl_runtime *rt);
/* The same for several, each naming another package ("jaxlib==0.10.2",
 * "torch_xla==2.9.0": a job that loads both); giving jax and jaxlib both
 * sets each to its own.  A package named twice: 64 with rt->why. */
int xl_runtime_of_releases(const char *const *specs, size_t n, struct xl_runtime *rt);
void xl_runtime_release(struct xl_runtime *rt);
/* {python, source, jaxlib, jax, torch, torch_xla, libtpu}, null where none.
 * New reference. */
json_t *xl_runtime_json(const struct xl_runtime *rt);
/* "jaxlib 0.10.2, jax 0.10.2 (python /v/bin/python, from VIRTUAL_ENV)", or
 * "no runtime (python3: not found on PATH)".  Caller frees. */
char *xl_runtime_str(const struct xl_runtime *rt);

/* ---- the bundle part of a launch signature (summary.c) ----------------------- */

/* {python, packages: {name: version}} of the lane packages of the Python
 * environment of interpreter python (NULL or not found: {}).  Cached in the
 * state directory per interpreter until its environment changes.  New
 * reference. */
json_t *xl_bundle_summary(const char *python);
/* The same for the interpreter started with environment envp (NULL: this
 * process's), whose PYTHONPATH, PYTHONHOME, PYTHONNOUSERSITE and
 * PYTHONUSERBASE are part of the cache's key.  The summary of an
 * interpreter that is not an ELF file (a wrapper script) is never cached.
 * NULL when the interpreter could not be asked, with *why (caller frees)
 * when why is not NULL. */
json_t *xl_bundle_summary_env(const char *python, char *const *envp, char **why);
/* The values of envp's variables that change an interpreter's site
 * directories, as the cache's key holds them (tab-separated, "" for unset);
 * NULL when one holds a tab or a newline (not cached).  Caller frees. */
char *xl_bundle_env_key(char *const *envp);
/* From now on xl_bundle_summary reads its cache but never writes it (for
 * commands that only read). */
void xl_bundle_cache_readonly(void);
/* The summary of interpreter python under the environment whose key is
 * envkey (xl_bundle_env_key) in the text of the cache file (summary.c says
 * its format), or NULL when it has none, when the text is of another
 * format or malformed, or (check) when the interpreter or one of its site
 * directories changed since.  A fuzz entry point with check false.  New
 * reference. */
json_t *xl_bundle_cache_entry(const char *text, size_t len, const char *python, const char *envkey,
			      bool check);

#endif
