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

#define XLAUNCH_VERSION "0.1.0"

/* Exit codes (sysexits).  A child's own status passes through unchanged. */
enum xl_exit {
	XL_EX_OK = 0,
	XL_EX_FAIL = 1,          /* a check ran and said no (bundle match/check) */
	XL_EX_USAGE = 64,        /* bad command line */
	XL_EX_DATAERR = 65,      /* bad profile or data */
	XL_EX_NOINPUT = 66,      /* profile or file not found */
	XL_EX_UNAVAILABLE = 69,  /* backend unavailable */
	XL_EX_SOFTWARE = 70,     /* internal error */
	XL_EX_CANTCREAT = 73,    /* store cannot be created or opened */
	XL_EX_NOPERM = 77,       /* refused by policy */
	XL_EX_CONFIG = 78,       /* configuration error */
};

/* How a launch ended.  One enum for run, the store and the report, ordered
 * worst first: the outcome of a job is the worst of its ranks'.  A launch
 * fits (known-good) when it ended ok or compile-storm; interrupted is
 * evidence of nothing. */
enum xl_outcome {
	XL_OUT_OOM,
	XL_OUT_CRASH,
	XL_OUT_TIMEOUT,
	XL_OUT_ERROR,
	XL_OUT_INTERRUPTED,
	XL_OUT_COMPILE_STORM,
	XL_OUT_OK,
	XL_OUT_COUNT
};
/* "oom", "crash", "timeout", "error", "interrupted", "compile-storm", "ok";
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
/* Best "did you mean" from a NULL-terminated list, or NULL when none is close. */
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
/* Writes all len bytes, retrying short writes and EINTR.  Returns 0, or -1
 * with errno set. */
int xl_write_all(int fd, const void *buf, size_t len);
/* mkdir -p with the given mode for every created component. */
int xl_mkdirs(const char *path, unsigned mode);
/* $XDG_STATE_HOME/xlaunch (default ~/.local/state/xlaunch); caller frees. */
char *xl_state_dir(void);
/* $XDG_CONFIG_HOME/xlaunch (default ~/.config/xlaunch); caller frees. */
char *xl_config_dir(void);
/* Where shipped data lives (etc/, profiles/): $XLAUNCH_DATADIR, else the
 * directory of the running binary when it holds etc/, else the install
 * DATADIR.  Static storage. */
const char *xl_data_dir(void);
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

/* ---- command table ------------------------------------------------------------ */

struct xl_ctx {
	const char *store_path;   /* --store, XLAUNCH_STORE; NULL: default */
	const char *profile_path; /* --profile-path, XLAUNCH_PROFILE_PATH */
	bool json;
	int verbosity;
	bool color;
};

struct xl_cmd {
	const char *name;
	const char *usage;    /* synopsis after "xlaunch NAME", may hold newlines */
	const char *summary;  /* one line */
	const char *help;     /* the rest of --help */
	int (*run)(struct xl_ctx *ctx, int argc, char **argv);
};

/* Options every command accepts; use in getopt_long tables and hand the
 * returned codes to xl_common_option(). */
enum {
	XL_OPT_HELP = 0x1000, XL_OPT_JSON, XL_OPT_STORE, XL_OPT_PROFILE_PATH,
	XL_OPT_COLOR, XL_OPT_QUIET, XL_OPT_VERBOSE, XL_OPT_FIRST_CMD = 0x1100
};
#define XL_COMMON_LONGOPTS \
	{ "help", 0, NULL, XL_OPT_HELP }, \
	{ "json", 0, NULL, XL_OPT_JSON }, \
	{ "store", 1, NULL, XL_OPT_STORE }, \
	{ "profile-path", 1, NULL, XL_OPT_PROFILE_PATH }, \
	{ "color", 2, NULL, XL_OPT_COLOR }, \
	{ "quiet", 0, NULL, 'q' }, \
	{ "verbose", 0, NULL, 'v' }

/* Handles a common option code (including 'q', 'v', '?', ':').  Returns -1
 * when c is not a common option, -2 when handled (go on parsing), or an exit
 * code to return now (0 after --help, 64 after a bad option). */
int xl_common_option(struct xl_ctx *ctx, const struct xl_cmd *cmd, int c, const char *arg);
/* Prints "usage: xlaunch NAME USAGE" and the help text to f. */
void xl_cmd_usage(const struct xl_cmd *cmd, FILE *f);
/* Usage error: prints message and usage line to stderr; returns 64. */
int xl_usage_error(const struct xl_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A second-level command table (profile list|show|...). */
struct xl_subcmd {
	const char *name;
	int (*run)(struct xl_ctx *ctx, int argc, char **argv);
};
/* Finds argv[1] in subs by unique prefix and runs it with argv shifted by one.
 * Reports an unknown or ambiguous subcommand (exit 64). */
int xl_dispatch_sub(struct xl_ctx *ctx, const struct xl_cmd *cmd,
		    const struct xl_subcmd *subs, int argc, char **argv);
/* Unique-prefix lookup over names[0..n): index, -1 none, -2 ambiguous. */
int xl_lookup_prefix(const char *word, const char *const *names, size_t n);

#endif
