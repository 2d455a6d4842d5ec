/*
 * profile.h - the profile room: named profiles, found on the profile path,
 * resolved layer by layer with the provenance of every value, checked, and
 * turned into the environment a launch gets.  Code outside
 * launcher/profile/ includes only this header.
 *
 * It owns:
 *   - loading and validating profile files (profile.c; the layers are
 *     private, layer.h) and resolving them: extends, ${VAR}, candidates,
 *     composite-flag merging with flags files read (resolve.c, flagfile.c);
 *   - the checks every resolved profile passes and the launch policy:
 *     types, unknown flags, timing, cache, ambient, known-bad flags, the
 *     rlimits of the child (policy.c), and the bundle gate (gate.c);
 *   - rendering: sh, json, dotenv, k8s (envfmt.c).
 *
 * It builds on the flags room (flags.h) and on bundle/ (the gate).
 *
 * Ownership: an xl_profile owns everything it points to; free it with
 * xl_profile_free().  Provenance file names point into the profile's own
 * storage and live as long as the profile.
 */
#ifndef XLAUNCH_LAUNCHER_PROFILE_H
#define XLAUNCH_LAUNCHER_PROFILE_H

#include "launcher/flags/flags.h"

/* Expands ${VAR} and ${VAR:-default} from the environment ("$$" is a
 * literal '$'); profiles expand from their own layers first (resolve.c).  Returns a new string, or NULL with *err set (caller frees). */
char *xl_expand_vars(const char *s, char **err);

/* ---- profiles ------------------------------------------------------------------ */

enum xl_ambient { XL_AMB_STRIP, XL_AMB_KEEP, XL_AMB_WARN, XL_AMB_ERROR };
enum xl_cache_policy { XL_CACHE_ANY, XL_CACHE_LOCAL };

struct xl_policy {
	bool timing;
	bool strict;              /* refuse profiles that every user may change */
	enum xl_cache_policy cache;
	enum xl_ambient ambient;
	struct xl_strv bundle;    /* bundle gate: names of validated bundles */
	struct xl_prov timing_src, cache_src, ambient_src, bundle_src, strict_src;
};

/* rlimits for the child; a negative value is "not set".  memory is no
 * rlimit: resident memory, enforced by a cgroup of the launch's own where
 * one can be made (launcher/run/memcg.c). */
struct xl_limits {
	int64_t address_space, open_files, core, cpu_time;
	int64_t memory;
};

/* A managed variable of the resolved profile. */
struct xl_var {
	char *name;
	char *value;             /* NULL: removed from the child's environment */
	struct xl_prov src;      /* the last layer that set or unset it */
	bool composite;
	bool ambient;            /* the value came (partly) from the launching shell */
	struct xl_flagmap flags; /* composite variables: tokens with provenance */
	char *experr;            /* while resolving: why the value could not be expanded
				  * (an error only if no later layer replaces it) */
	struct xl_strv chosen_by; /* what each ${VAR} of the value took, in order:
				  * "${XDG_CACHE_HOME} from the launching environment",
				  * "${XLAUNCH_CACHE_ROOT} not set", ... (--explain) */
};

struct xl_candidate {
	char *name;
	char *description;
	struct xl_prov src;
	struct xl_strv args;     /* appended to the command, as written */
	struct xl_prov args_src; /* where `args` is (file NULL: none) */
};

/* The profile's compile section: how the compilations of its runs are
 * judged (see etc/outcomes.yaml, compile_storm).  A number not set is -1
 * and the file's value applies. */
struct xl_compile_cfg {
	char *step_pattern;      /* a POSIX extended regex for a step line, or NULL */
	long warmup_steps, max_after_warmup;
	double max_compile_share;   /* 0 < share <= 1, or -1 */
	int on_storm;            /* enum xl_on_storm: what a storm does to the run */
	int early_oom;           /* enum xl_early_oom: a program XLA reports over the
				  * launch's limit ends the run at its compile */
	struct xl_prov step_pattern_src, warmup_steps_src, max_after_warmup_src, max_compile_share_src;
	struct xl_prov on_storm_src, early_oom_src;
};

/* compile.on_storm (and run --on-storm): warn (the default: the storm is
 * named when the run ends) or stop (the child is ended as soon as the
 * storm rule is met). */
enum xl_on_storm { XL_ON_STORM_UNSET, XL_ON_STORM_WARN, XL_ON_STORM_STOP };
/* "warn" or "stop" into *out; false for anything else. */
bool xl_on_storm_parse(const char *s, int *out);

/* compile.early_oom (true or false) and run --early-oom (on or off): when
 * on (the default), a program whose XLA memory-usage report exceeds the
 * limit the launch runs under ends the launch as soon as the report is in
 * the dump (outcome oom, the compiler's figure in the reason). */
enum xl_early_oom { XL_EARLY_OOM_UNSET, XL_EARLY_OOM_OFF, XL_EARLY_OOM_ON };
/* "on"/"true" or "off"/"false" into *out; false for anything else. */
bool xl_early_oom_parse(const char *s, int *out);

/* The profile's ranks section: how the ranks of one job launch watch each
 * other through the store (launcher/run/peers.c).  Unset keys keep the
 * defaults below; a setting's src.file is NULL while it is the default. */
struct xl_ranks_cfg {
	bool watch;              /* end this rank's child when another rank ends badly */
	double grace_s;          /* between SIGTERM and SIGKILL when it does */
	double poll_s;           /* how often the lease is renewed and the job read */
	double lease_s;          /* a rank not renewed for this long counts as dead */
	struct xl_prov watch_src, grace_src, poll_src, lease_src;
};
#define XL_RANKS_GRACE_S 5.0
#define XL_RANKS_POLL_S 2.0
#define XL_RANKS_LEASE_S 30.0

struct xl_profile {
	char *name;
	char *file;              /* the file the name resolved to */
	char *description;
	struct xl_strv chain;    /* linearized: bases first, this profile last */
	struct xl_strv chain_files;
	struct xl_var *vars;     /* in order of first appearance */
	size_t nvars;
	struct xl_policy policy;
	struct xl_limits limits;
	struct xl_compile_cfg compile;
	struct xl_ranks_cfg ranks;
	json_t *signature;       /* merged `signature` mapping, candidate applied */
	struct xl_candidate *cands;
	size_t ncands;
	int cand;                /* selected candidate index, -1 for none */
	struct xl_strv notes;    /* what resolution did on its own (ambient stripped, ...) */
	struct xl_strv stripped; /* variables of the launching environment the ambient
				  * policy keeps from the child */
	struct xl_strv target_notes; /* rendering for another machine: what each
				  * ${VAR} without a profile value took (--set, default) */
	bool for_target;         /* resolved for another machine (XL_RESOLVE_TARGET) */
	const struct xl_runtime *runtime; /* the release the job will load, which the checks
				  * judge flags against (borrowed; NULL: none found, so
				  * each family's newest known release) */
	void *priv;              /* loaded layers */
};

enum {
	XL_RESOLVE_NO_AMBIENT = 1 << 0,  /* ignore the launching environment (profile show/diff) */
	XL_RESOLVE_FILE = 1 << 1,        /* the name is a path to a profile file */
	XL_RESOLVE_TARGET = 1 << 2,      /* for another machine: the launching environment
					  * is not read (no ambient policy; ${VAR} takes a
					  * --set value, else its default) */
};

/* Finds, loads and resolves a profile and (optionally) one candidate.
 * Prints its own errors.  Returns 0 or an exit code (65, 66, 77, 78). */
int xl_profile_resolve(const struct xl_ctx *ctx, const char *name, const char *cand,
		       unsigned flags, struct xl_profile **out);
/* The same with values given for ${VAR} (NAME=VALUE, NULL-terminated, or
 * NULL): they take the place of the launching environment's. */
int xl_profile_resolve_set(const struct xl_ctx *ctx, const char *name, const char *cand,
			   unsigned flags, char *const *set, struct xl_profile **out);
void xl_profile_free(struct xl_profile *p);
/* The selected candidate's args (appended to the command after its own
 * arguments), or NULL when there is no candidate or it has none. */
const struct xl_strv *xl_profile_args(const struct xl_profile *p);
/* argv[0..argc) followed by the selected candidate's args: a new
 * NULL-terminated array of borrowed strings (the caller frees the array
 * only), *outc its length. */
char **xl_profile_command(const struct xl_profile *p, char *const *argv, int argc, int *outc);

/* Index of the candidate called name, or -1. */
int xl_profile_find_candidate(const struct xl_profile *p, const char *name);
/* Looks up a managed variable. */
const struct xl_var *xl_profile_var(const struct xl_profile *p, const char *name);

/* Builds the child's environment from environ and the profile: managed
 * variables set or removed, ambient policy applied.  Returns a
 * NULL-terminated array (free with xl_env_free). */
char **xl_profile_build_env(const struct xl_profile *p, char *const *environ_in);
void xl_env_free(char **env);
/* Says on one line (a warning) which variables of the launching
 * environment the ambient policy keeps from the child (strip), or passes
 * to it (warn).  exec and run call it before the child starts. */
void xl_profile_report_ambient(const struct xl_profile *p);

/* The profile search path, in order; caller releases. */
void xl_profile_search_path(const struct xl_ctx *ctx, struct xl_strv *dirs);
/* The same joined with ':', for messages; caller frees. */
char *xl_profile_search_path_str(const struct xl_ctx *ctx);
/* Valid profile name: [A-Za-z0-9][A-Za-z0-9._-]*, no "..". */
bool xl_valid_profile_name(const char *name);

/* The resolved profile as JSON: {"profile","file","chain","env","unset",
 * "sources","flags","policy","limits","compile","ranks","signature",
 * "candidate"}.
 * New reference. */
json_t *xl_profile_to_json(const struct xl_profile *p);

/* The set keys of a compile section: {step_pattern, warmup_steps,
 * max_after_warmup, max_compile_share}.  New reference. */
json_t *xl_compile_cfg_json(const struct xl_compile_cfg *c);

/* The ranks section with every setting, defaults included: {watch,
 * grace_s, poll_s, lease_s}.  New reference. */
json_t *xl_ranks_cfg_json(const struct xl_ranks_cfg *c);

/* Checks done on every resolved profile before it is used (types, unknown
 * XLA flags, policy).  Prints what it refuses; returns 0, 65 or 77. */
int xl_profile_check(const struct xl_ctx *ctx, struct xl_profile *p);

/* Before exec and run, on the machine that launches: under policy
 * cache: local, creates the directories of the profile's cache variables
 * (the checks and every rendering create nothing).  Prints what fails;
 * returns 0 or 73. */
int xl_profile_make_cache_dirs(const struct xl_profile *p);

/* Before exec and run: when the profile names bundles (policy.bundle), the
 * installed bundle must match one and its known-bad flags are refused.
 * Prints what it refuses; returns 0, 65, 66, 69 or 77. */
int xl_profile_bundle_gate(const struct xl_ctx *ctx, const struct xl_profile *p);
/* The release the job of p will load (bundle's xl_runtime_detect of argv;
 * argc 0: without a command) under the environment p gives the child, so
 * a PATH, VIRTUAL_ENV, PYTHONPATH or PYENV_VERSION the profile sets counts.
 * Release rt with xl_runtime_release(). */
void xl_profile_detect_runtime(const struct xl_profile *p, char *const *argv, int argc,
			       struct xl_runtime *rt);

/* ---- run's and exec's --set and --flag (overrides.c) ---------------------------------- */

/* The --set or --flag arguments of one command line (pointing into argv). */
#define XL_OVERRIDES_MAX 64
struct xl_override_list {
	char *v[XL_OVERRIDES_MAX + 1];   /* NULL-terminated */
	size_t n;
};
/* Adds arg when xl_override_valid and fewer than XL_OVERRIDES_MAX are
 * there; false otherwise. */
bool xl_override_list_add(struct xl_override_list *l, const char *arg, bool flag);
/* The option-table callbacks of --set (VAR=VALUE) and --flag
 * (VAR:NAME=VALUE): field is a struct xl_override_list. */
bool xl_opt_override_set(const char *value, void *field);
bool xl_opt_override_flag(const char *value, void *field);

/* Whether arg is VAR=VALUE (flag false) or VAR:NAME=VALUE (flag true; VAR
 * a composite flag variable, NAME of letters, digits, '_', '-' and '.',
 * not starting with '-' or '.' once a leading "--" is taken off) with a valid variable name. */
bool xl_override_valid(const char *arg, bool flag);
/* For this process: every profile resolved from now on gets one more
 * layer after its own and its candidate's, "the command line", that sets
 * each VAR=VALUE of set and each flag NAME=VALUE of VAR (flag, as
 * VAR:NAME=VALUE), as a profile's env: and flags: sections would.  The
 * strings are copied. */
void xl_profile_set_overrides(char *const *set, size_t nset, char *const *flag, size_t nflag);

/* ---- the runtime a profile is for (needs.c) ---------------------------------------- */

enum {
	XL_NEEDS_JAX = 1 << 0,
	XL_NEEDS_TORCH_XLA = 1 << 1,
	XL_NEEDS_TORCH = 1 << 2,
};
/* The runtimes p is for (XL_NEEDS_*): those its marker variables name
 * (JAX_PLATFORMS: JAX, PJRT_DEVICE: PyTorch/XLA), each needed (*all true);
 * without a marker, those whose catalogs list a variable it sets, any one
 * enough (*all false).  *because (may be NULL) gets the variable that says
 * so (borrowed from p).  0: a profile for no runtime in particular. */
unsigned xl_profile_needs(const struct xl_profile *p, bool *all, const char **because);
/* Before run and exec: when the interpreter the command names itself
 * (rt->source argv[0] or #!) has none of what p is for, says so, names an
 * interpreter near that has it ($VIRTUAL_ENV, ./.venv, python3 on PATH)
 * and the option `anyway` that launches regardless, and returns 69;
 * else 0.  Reads nothing on success. */
int xl_profile_runtime_check(const struct xl_profile *p, const struct xl_runtime *rt,
			     const char *anyway);

/* From xl_profile_check: a warning for a variable in no catalog that is a
 * letter or two from one that is (JAX_ENABLE_X46: did you mean
 * 'JAX_ENABLE_X64'?), as `flags lint` says; variables of the job's own are
 * passed over. */
void xl_profile_warn_unknown_var(const struct xl_profile *p, const struct xl_var *v);
/* From xl_profile_check: a warning for a value of JAX_PLATFORMS (each
 * platform of its list) or PJRT_DEVICE that is none of the names xlaunch
 * knows, with those names and a "did you mean" (an installed plugin may
 * register others: never a refusal). */
void xl_profile_warn_value(const struct xl_profile *p, const struct xl_var *v);

/* What the runtime adds on its own at start (PyTorch/XLA's defaults for
 * XLA_FLAGS and LIBTPU_INIT_ARGS tokens and variables it sets when missing)
 * given the resolved profile: {"variable": [{"name","value","when","why"}]}.
 * New reference; empty object when nothing would be added. */
json_t *xl_runtime_defaults(const struct xl_profile *p);

/* Applies the profile's rlimits to this process (before exec). */
void xl_apply_limits(const struct xl_limits *l);

/* Every profile name on the path (first match wins), sorted; files gets the
 * matching paths when non-NULL. */
void xl_profile_names(const struct xl_ctx *ctx, struct xl_strv *names, struct xl_strv *files);
/* Loads the profile file at path on its own (no extends followed) for its
 * description: 0 with *description set (caller frees; NULL when it has
 * none), or the exit code of what is wrong with the file, after printing
 * it. */
int xl_profile_describe(const char *path, char **description);

/* ---- known-bad flags (policy.c) --------------------------------------------------- */

struct xl_known_bad {
	const char *flag;        /* flag name without dashes, or VAR for an env variable */
	const char *reason;
	const char *value;       /* the bad value; NULL: any value is bad */
};

/* Refuses every flag or variable of p that is listed in bad[0..n) (77),
 * printing the recorded reason.  Returns 0 or 77. */
int xl_policy_check_known_bad(const struct xl_profile *p, const struct xl_known_bad *bad,
			      size_t n, const char *bundle);


/* ---- rendering (envfmt.c) --------------------------------------------------------- */

enum xl_env_format { XL_FMT_SH, XL_FMT_JSON, XL_FMT_DOTENV, XL_FMT_K8S };

/* 'value' quoted for POSIX sh: safe to eval for any byte string; caller frees. */
char *xl_sh_quote(const char *s);
int xl_env_format_parse(const char *s, enum xl_env_format *out);
/* The managed variables of p in the given format; caller frees. */
char *xl_env_render(const struct xl_profile *p, enum xl_env_format fmt);

#endif
