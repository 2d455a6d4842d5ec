/*
 * common.h - small helpers shared by every xlaunch module: diagnostics,
 * growable strings, the YAML tree, JSON output, paths, units and the
 * command-table types.  Nothing here knows about profiles, stores or probes.
 */
#ifndef XLAUNCH_COMMON_H
#define XLAUNCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdbool.h>

#include <jansson.h>

#define XLAUNCH_VERSION "0.1.0"

/* Exit codes (sysexits); every command returns one.  run and exec return
 * their child's own status (0-255, 128+N for signal N) through this type
 * unchanged. */
enum xl_exit {
	XL_EX_OK = 0,
	XL_EX_FAIL = 1,          /* a check ran and said no (bundle match/check) */
	XL_EX_EMPTY = 2,         /* a check found nothing to check (bundle check: empty) */
	XL_EX_USAGE = 64,        /* bad command line */
	XL_EX_DATAERR = 65,      /* bad profile or data */
	XL_EX_NOINPUT = 66,      /* profile or file not found */
	XL_EX_UNAVAILABLE = 69,  /* backend unavailable */
	XL_EX_SOFTWARE = 70,     /* internal error */
	XL_EX_CANTCREAT = 73,    /* store cannot be created or opened */
	XL_EX_NOPERM = 77,       /* refused by policy */
	XL_EX_CONFIG = 78,       /* configuration error */
	XL_EX_FAIL_ON = 79,      /* run --fail-on: the child exited 0, its outcome is listed */
};

/* How a launch ended.  One enum for run, the store and the report, ordered
 * worst first.  A launch fits (known-good) when it ended ok or
 * compile-storm; interrupted is evidence of nothing, and so is peer-failed:
 * a rank its xlaunch ended because another rank of its job launch ended
 * badly first (the job's outcome is that rank's). */
enum xl_outcome {
	XL_OUT_OOM,
	XL_OUT_CRASH,
	XL_OUT_TIMEOUT,
	XL_OUT_ERROR,
	XL_OUT_INTERRUPTED,
	XL_OUT_PEER_FAILED,
	XL_OUT_COMPILE_STORM,
	XL_OUT_OK,
	XL_OUT_COUNT
};
/* "oom", "crash", "timeout", "error", "interrupted", "peer-failed",
 * "compile-storm", "ok";
 * "?" for anything else. */
const char *xl_outcome_name(enum xl_outcome o);
/* False when s names no outcome. */
bool xl_outcome_parse(const char *s, enum xl_outcome *out);
/* "oom,crash" or "none" into a set of 1u << outcome.  False on an unknown
 * name or an empty list. */
bool xl_outcome_set_parse(const char *s, unsigned *set);

/* How much a finding matters: lint reports, bundle-check reasons, policy. */
enum xl_severity {
	XL_SEV_NOTE,
	XL_SEV_WARNING,
	XL_SEV_ERROR,
};
/* "note", "warning", "error". */
const char *xl_severity_name(enum xl_severity s);

/* ---- diagnostics ------------------------------------------------------ */

/* Verbosity: -1 quiet (errors only), 0 normal, 1+ verbose; -2 silences
 * errors too (fuzz harnesses).  Set once by main. */
extern int xl_verbosity;
extern bool xl_color;

/* "xlaunch: MSG" on stderr; no trailing period by convention. */
void xl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xl_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Out of memory is not recoverable in a launcher: report and exit 70. */
void xl_oom(void) __attribute__((noreturn));

void *xl_malloc(size_t n);
void *xl_calloc(size_t n, size_t size);
void *xl_realloc(void *p, size_t n);
char *xl_strdup(const char *s);
char *xl_strndup(const char *s, size_t n);
/* The abbreviation of signal sig without "SIG" ("SEGV"), as glibc 2.32's
 * sigabbrev_np() gives it, for any glibc; NULL for a number without one.
 * Static storage. */
const char *xl_signal_abbrev(int sig);
/* Returns a newly allocated string; caller frees. */
char *xl_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- growable byte buffer ---------------------------------------------- */

/* Always NUL terminated once anything was added; buf may be NULL when empty. */
struct xl_buf {
	char *buf;
	size_t len, cap;
};
#define XL_BUF_INIT { NULL, 0, 0 }
void xl_buf_add(struct xl_buf *b, const void *p, size_t n);
void xl_buf_adds(struct xl_buf *b, const char *s);
void xl_buf_addc(struct xl_buf *b, char c);
void xl_buf_addf(struct xl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xl_buf_vaddf(struct xl_buf *b, const char *fmt, va_list ap);
/* Returns the string (never NULL; "" when empty) and leaves b empty; caller frees. */
char *xl_buf_detach(struct xl_buf *b);
const char *xl_buf_str(const struct xl_buf *b);
void xl_buf_reset(struct xl_buf *b);
void xl_buf_release(struct xl_buf *b);

/* ---- string lists ------------------------------------------------------- */

/* An owned list of owned strings. */
struct xl_strv {
	char **v;
	size_t n, cap;
};
#define XL_STRV_INIT { NULL, 0, 0 }
void xl_strv_push(struct xl_strv *sv, const char *s);      /* copies s */
void xl_strv_push_owned(struct xl_strv *sv, char *s);     /* takes s */
bool xl_strv_contains(const struct xl_strv *sv, const char *s);
void xl_strv_release(struct xl_strv *sv);
/* Split s on any char in seps, skipping empty fields. */
void xl_strv_split(struct xl_strv *sv, const char *s, const char *seps);

/* ---- string-keyed index -------------------------------------------------- */

/* Open-addressing hash from borrowed strings to indexes; keys must outlive
 * the map. */
struct xl_strmap {
	const char **keys;
	size_t *vals;
	size_t n, cap;
};
#define XL_STRMAP_INIT { NULL, NULL, 0, 0 }
/* Sets key to val (replacing). */
void xl_strmap_put(struct xl_strmap *m, const char *key, size_t val);
/* True with *val set when key is present. */
bool xl_strmap_get(const struct xl_strmap *m, const char *key, size_t *val);
void xl_strmap_release(struct xl_strmap *m);

/* ---- small string helpers ------------------------------------------------ */

bool xl_streq(const char *a, const char *b);     /* NULL-safe */
bool xl_startswith(const char *s, const char *prefix);
bool xl_endswith(const char *s, const char *suffix);
/* Levenshtein distance, capped at max+1 for speed. */
size_t xl_edit_distance(const char *a, const char *b, size_t max);
/* Best "did you mean" from a NULL-terminated list, or NULL when none is
 * close; a NULL list is an empty one. */
const char *xl_did_you_mean(const char *word, const char *const *candidates);
/* Valid environment variable name: [A-Za-z_][A-Za-z0-9_]* */
bool xl_valid_env_name(const char *s);

/* Parse "8GiB", "512M", "1e9", "4096" (bytes).  Returns false on error. */
bool xl_parse_bytes(const char *s, uint64_t *out);
/* Parse "30", "30s", "5m", "1h", "250ms", "1.5s" into seconds. */
bool xl_parse_duration(const char *s, double *out);
/* Human form, "1.5 GiB"; writes into buf of size n. */
const char *xl_fmt_bytes(uint64_t v, char *buf, size_t n);

/* ---- files and paths -------------------------------------------------------- */

/* Read a whole file (up to max bytes; 0 means 64 MiB).  Returns NULL with errno
 * set on failure (EFBIG when too large).  Caller frees. */
char *xl_read_file(const char *path, size_t *len, size_t max);
/* A host file's path under $XLAUNCH_HOST_ROOT (a directory of test fixtures
 * that stands for /: the bundle's driver files, the probe's caches and
 * memory), else path itself.  Caller frees. */
char *xl_host_path(const char *path);
/* Whether $XLAUNCH_HOST_ROOT is set (not empty). */
bool xl_host_root_set(void);
/* xl_read_file of xl_host_path(path). */
char *xl_read_host_file(const char *path, size_t *len, size_t max);
/* Writes all len bytes, retrying short writes and EINTR.  Returns 0, or -1
 * with errno set. */
int xl_write_all(int fd, const void *buf, size_t len);
/* Writes j to path through a temporary file and rename(); durable: fsync
 * before the rename (records), not for what is rewritten anyway (manifests,
 * caches).  0 or -1 (errno). */
int xl_write_json_atomic(const char *path, const json_t *j, bool durable);
/* mkdir -p with the given mode for every created component. */
int xl_mkdirs(const char *path, unsigned mode);
/* Whether path names a regular file (links followed). */
bool xl_is_regular_file(const char *path);
/* Whether path names a directory (links followed); false for "". */
bool xl_is_directory(const char *path);
/* An absolute spelling of path (the current directory before a relative
 * one, "./" dropped; links not resolved: a venv's bin/python is a link whose
 * location is what makes it the venv's).  Caller frees. */
char *xl_path_absolute(const char *path);
/* name as execvp finds it: a path with a '/' when it is a regular file,
 * else the first executable regular file of that name in a directory of
 * PATH (of this process, which a child's exec searches too); absolute, or
 * NULL.  Caller frees. */
char *xl_find_program(const char *name);
/* The same with the PATH of environment envp (NULL: this process's), the
 * one a child started with envp searches. */
char *xl_find_program_in(const char *name, char *const *envp);
/* The value of name in environment envp ("NAME=value" strings, NULL-ended;
 * NULL: this process's, as getenv), or NULL when unset. */
const char *xl_env_get(char *const *envp, const char *name);
/* $XDG_STATE_HOME/xlaunch (default ~/.local/state/xlaunch); caller frees. */
char *xl_state_dir(void);
/* $XDG_CONFIG_HOME/xlaunch (default ~/.config/xlaunch); caller frees. */
char *xl_config_dir(void);
/* Where shipped data lives (etc/, profiles/): $XLAUNCH_DATADIR, else
 * ../share/xlaunch beside the running binary (an installed or moved tree,
 * a venv), else the source tree a build-tree binary sits in (its own
 * directory or up to two above, holding etc/outcomes.yaml), else the
 * compiled-in PREFIX/share/xlaunch.  Static storage. */
const char *xl_data_dir(void);
/* How xl_data_dir() was found, in words.  Static storage. */
const char *xl_data_dir_how(void);
/* xl_data_dir() + "/" + rel; caller frees. */
char *xl_data_path(const char *rel);
/* Hostname, static storage. */
const char *xl_hostname(void);
/* Seconds since the epoch with sub-second precision. */
double xl_now(void);
/* Monotonic seconds. */
double xl_mono(void);
/* ISO 8601 UTC "2026-11-22T10:00:00Z" into buf (>= 32 bytes). */
const char *xl_iso_time(double t, char *buf, size_t n);
/* The same with milliseconds when there are any, "...T10:00:00.250Z"
 * (buf >= 40 bytes). */
const char *xl_iso_time_ms(double t, char *buf, size_t n);
/* Epoch seconds from an ISO 8601 UTC time: "2026-11-22T10:00:00Z", the date
 * alone, a space for the T, fractional seconds.  False when s is not one. */
bool xl_parse_iso_time(const char *s, double *out);

/* ---- YAML tree on libyaml ------------------------------------------------- */

enum xl_ynode_kind { XL_Y_SCALAR, XL_Y_SEQ, XL_Y_MAP };

/* Scalar style matters: a plain "~" or "null" or empty is null, "~" quoted is
 * a string. */
struct xl_ynode {
	enum xl_ynode_kind kind;
	char *tag;               /* explicit tag or NULL */
	char *str;               /* scalar value (NUL terminated; may hold NULs, see len) */
	size_t len;
	bool plain;              /* plain (unquoted) scalar */
	unsigned line, col;      /* 1-based start position */
	struct xl_ynode **items; /* SEQ: n items; MAP: keys at 2i, values at 2i+1 */
	size_t n;
};

/* Limits that keep hostile input cheap. */
#define XL_YAML_MAX_NODES  400000   /* alias expansion included */
#define XL_YAML_MAX_DEPTH  128

/* Parse exactly one YAML document.  Returns the root or NULL; on failure *err
 * is "LINE:COL: message" (caller frees).  An empty stream gives NULL with
 * *err "1:1: file is empty". */
struct xl_ynode *xl_yaml_parse(const char *data, size_t len, char **err);
/* Reads and parses the YAML file path; NULL when it cannot, having said
 * why ("WHAT 'PATH': cannot read: ..." or "WHAT 'PATH':LINE:COL: ...")
 * with *rc XL_EX_NOINPUT or XL_EX_DATAERR. */
struct xl_ynode *xl_yaml_read(const char *what, const char *path, int *rc);
void xl_ynode_free(struct xl_ynode *n);
bool xl_ynode_is_null(const struct xl_ynode *n);
/* MAP lookup by key; NULL when absent. */
struct xl_ynode *xl_ymap_get(const struct xl_ynode *map, const char *key);
/* Scalar helpers: false when not a scalar or not the right shape. */
bool xl_yscalar_bool(const struct xl_ynode *n, bool *out);
bool xl_yscalar_double(const struct xl_ynode *n, double *out);
const char *xl_ynode_kind_name(const struct xl_ynode *n);

/* ---- JSON output ----------------------------------------------------------- */

/* Write s as a JSON string literal (with quotes). */
void xl_json_str(struct xl_buf *b, const char *s);

/* ---- commands and options ------------------------------------------------ */

/*
 * A command is data: its name, synopsis parts, help text and a table of
 * options, plus one function that gets the parsed result.  A parent (calib,
 * profile, ...) has a table of subcommands instead of a function.  The
 * parser, the usage lines, every --help and every usage error are made from
 * these tables here, so they cannot disagree with what is parsed.
 *
 * Parsing follows getopt_long: -q -v clustered, -cVALUE or -c VALUE,
 * --name=VALUE or --name VALUE, long names by any unique prefix, options and
 * operands in any order, "--" ends the options.  A parent's options end at
 * its subcommand's name; a command with a `rest` (run, exec) takes its
 * operands, and the first word after them (or after "--") begins the rest.
 *
 * Usage errors, one wording per kind, each followed by the usage lines, exit
 * status 64 (XL_EX_USAGE):
 *   xlaunch CMD: unknown option '--foo'[; did you mean '--bar'?]
 *   xlaunch CMD: ambiguous option '--c' (could be --candidate, --color)
 *   xlaunch CMD: option '--store' needs a value
 *   xlaunch CMD: option '--json' takes no value
 *   xlaunch CMD: option '--timeout': 'soon' is not a duration (e.g. 90s, 30m, 12h)
 *   xlaunch CMD: missing option '--outcome'
 *   xlaunch CMD: missing PROFILE            (an operand, a subcommand, a command)
 *   xlaunch CMD: unexpected argument 'x'
 *   xlaunch: unknown command 'calib foo'; did you mean 'calib forget'?
 *   xlaunch: ambiguous command 'e' (could be env, exec)
 */

/* The global options, as every command sees them. */
struct xl_ctx {
	const char *store_path;   /* --store, XLAUNCH_STORE; NULL: default */
	const char *profile_path; /* --profile-path, XLAUNCH_PROFILE_PATH */
	bool json;
	int verbosity;
	bool color;
};

/* What an option's value is: how it is checked and the type of its field. */
enum xl_opt_kind {
	XL_OPT_FLAG,      /* no value; bool field set to true */
	XL_OPT_STRING,    /* const char * field, pointing into argv */
	XL_OPT_DURATION,  /* double field, seconds (xl_parse_duration) */
	XL_OPT_BYTES,     /* uint64_t field (xl_parse_bytes) */
	XL_OPT_COUNT,     /* long long field: a whole number, 0 and up unless ranged */
	XL_OPT_CALLBACK,  /* parse(value, field) checks and stores; it must not
			   * allocate (a later usage error frees nothing) */
};

enum {
	XL_OPTF_OPTIONAL = 1 << 0,  /* the value is optional: --name or --name=VALUE
				     * (CALLBACK gets NULL for none) */
	XL_OPTF_RANGE = 1 << 1,     /* DURATION, COUNT: min <= value <= max */
	XL_OPTF_ABOVE_MIN = 1 << 2, /* with RANGE: min < value */
	XL_OPTF_REQUIRED = 1 << 3,  /* the command cannot run without it */
	XL_OPTF_SHORT = 1 << 4,     /* the synopsis shows -c CAND, not --candidate CAND */
};

struct xl_opt {
	const char *name;         /* long name without "--"; NULL ends a table */
	char short_name;          /* 'c', or 0 */
	enum xl_opt_kind kind;
	const char *arg;          /* the value's name in help: "CAND", "DUR" */
	size_t offset;            /* of the field in the command's option struct */
	unsigned flags;           /* XL_OPTF_* */
	double min, max;          /* with XL_OPTF_RANGE */
	bool (*parse)(const char *value, void *field);  /* CALLBACK */
	const char *what;         /* what a good value is, for the error ("a duration
				   * (e.g. 90s)"); NULL: the kind's own words */
	const char *help;         /* one line of help; '\n' continues it */
};

/* The offset of field f (of type `type`) in struct T, checked at compile time. */
#define XL_FIELD(T, f, type) \
	(offsetof(T, f) + 0 * sizeof(char[_Generic(((T *)0)->f, type: 1)]))
#define XL_OPTION_FLAG(s, l, T, f, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_FLAG, \
	  .offset = XL_FIELD(T, f, bool), .help = (h) }
#define XL_OPTION_STRING(s, l, a, T, f, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_STRING, .arg = (a), \
	  .offset = XL_FIELD(T, f, const char *), .help = (h) }
#define XL_OPTION_DURATION(s, l, a, T, f, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_DURATION, .arg = (a), \
	  .offset = XL_FIELD(T, f, double), .help = (h) }
#define XL_OPTION_BYTES(s, l, a, T, f, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_BYTES, .arg = (a), \
	  .offset = XL_FIELD(T, f, uint64_t), .help = (h) }
#define XL_OPTION_COUNT(s, l, a, T, f, lo, hi, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_COUNT, .arg = (a), \
	  .offset = XL_FIELD(T, f, long long), .flags = XL_OPTF_RANGE, .min = (lo), \
	  .max = (hi), .help = (h) }
#define XL_OPTION_CALLBACK(s, l, a, T, f, type, fn, w, h) \
	{ .name = (l), .short_name = (s), .kind = XL_OPT_CALLBACK, .arg = (a), \
	  .offset = XL_FIELD(T, f, type), .parse = (fn), .what = (w), .help = (h) }
#define XL_OPTION_END { .name = NULL }

struct xl_cmd;

/* One parsed command line, handed to the command. */
struct xl_call {
	const struct xl_cmd *cmd;
	const char *path;         /* the command in full, "calib history" */
	void *opts;               /* the command's option struct, filled in */
	int argc;                 /* the operands, in order */
	char **argv;
	int restc;                /* a command with `rest`: the words after its
				   * operands (restv[restc] is NULL) */
	char **restv;
	uint64_t seen;            /* bit i: options[i] was given */
};

enum {
	/* Options end at the first word that is not exactly one of them; that
	 * word and all after it are operands (flags lint: STRING may begin
	 * with "--"). */
	XL_CMD_OPERANDS_FROM_UNKNOWN = 1 << 0,
};

struct xl_cmd {
	const char *name;
	const char *summary;      /* one line, for the parent's list */
	const char *operands;     /* "PROFILE", "A B", "[FILE]", "SPEC VERSION...";
				   * [optional], WORD... any number; NULL: none */
	const char *rest;         /* what follows the operands: "COMMAND [ARG...]" */
	const char *synopsis;     /* written out where the generated one would not
				   * say it (after "xlaunch PATH "); NULL: generated */
	const char *json;         /* what --json prints; NULL: the output is not data */
	const char *help;         /* description, before the option list */
	const char *epilog;       /* after the option list: exit statuses, notes */
	const struct xl_opt *options;   /* NULL or ended by XL_OPTION_END (at most 64) */
	size_t opts_size;         /* the option struct: its size and initial value */
	const void *opts_init;
	const struct xl_cmd *const *subs;  /* a parent: its subcommands, NULL-ended */
	enum xl_exit (*run)(struct xl_ctx *ctx, const struct xl_call *call);
	unsigned flags;           /* XL_CMD_* */
};
/* The option struct type T of a command, and its initial value (an object of
 * type const T, or NULL for all zero). */
#define XL_CMD_OPTS(T, init) .opts_size = sizeof(T), .opts_init = (init)

/* Parses argv (argv[0] is cmd's own name) for cmd into call, with opts (of
 * cmd->opts_size bytes, already initialized) receiving the values.  For a
 * parent, parsing stops at the first operand (the subcommand).  Prints what
 * is wrong.  Returns -1 to go on, or an exit status: 0 after --help, 64 after
 * a usage error.  call->argv is allocated: release with xl_call_release(). */
int xl_cmd_parse(const struct xl_cmd *cmd, const char *path, struct xl_ctx *ctx, int argc,
		 char **argv, void *opts, struct xl_call *call);
void xl_call_release(struct xl_call *call);
/* Runs cmd: parses its options, then calls it, or for a parent finds the
 * subcommand named by the first operand and runs that. */
enum xl_exit xl_cmd_invoke(const struct xl_cmd *cmd, const char *path, struct xl_ctx *ctx,
			int argc, char **argv);
/* The subcommand of parent named by word or a unique prefix of it; NULL after
 * printing an unknown or ambiguous command (path: the parent's, "" at the top). */
const struct xl_cmd *xl_cmd_find(const struct xl_cmd *parent, const char *path,
				 const char *word);
/* Whether option name (its long name) was given. */
bool xl_call_seen(const struct xl_call *call, const char *name);

/* The usage lines ("usage: xlaunch PATH SYNOPSIS", wrapped; one per
 * subcommand for a parent). */
void xl_cmd_usage(const struct xl_cmd *cmd, const char *path, FILE *f);
/* The whole help of a command: usage, summary, description, options,
 * subcommands, epilog and the common options.  `xlaunch help X` and
 * `xlaunch X --help` both print this. */
void xl_cmd_help(const struct xl_cmd *cmd, const char *path, FILE *f);
/* A usage error found by the command itself: "xlaunch PATH: MESSAGE" and
 * the usage lines on stderr.  Returns XL_EX_USAGE. */
enum xl_exit xl_usage_error(const struct xl_call *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Unique-prefix lookup over names[0..n): index, -1 none, -2 ambiguous. */
int xl_lookup_prefix(const char *word, const char *const *names, size_t n);

#endif
