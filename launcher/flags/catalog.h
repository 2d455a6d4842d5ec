/*
 * catalog.h - the flag catalogs (etc/flags/FAMILY.yaml compiled into a table at
 * build time), the composite-flag linter and the policy checks built on
 * them.  Internal to the launcher module: launcher.h is the module's public
 * header; this one is shared by launcher/catalog.c, lint.c, policy.c,
 * cmd-flags.c and their tests.
 *
 * The table is static data: nothing here allocates except where a function
 * says the caller frees.
 */
#ifndef XLAUNCH_LAUNCHER_CATALOG_H
#define XLAUNCH_LAUNCHER_CATALOG_H

#include "launcher/launcher.h"

enum xl_ftype { XL_FT_BOOL, XL_FT_INT, XL_FT_FLOAT, XL_FT_STRING, XL_FT_ENUM, XL_FT_LIST };

enum {
	XL_FTAG_DEBUG = 1 << 0,
	XL_FTAG_CACHE = 1 << 1,
	XL_FTAG_PERF_RISK = 1 << 2,
	XL_FTAG_DEPRECATED = 1 << 3,
	XL_FTAG_LAUNCHER = 1 << 4,   /* set per process by the job launcher (rank, topology) */
};

/* How the consumer of a boolean reads it. */
enum xl_bool_parser {
	XL_BP_NONE,      /* inherit from the family */
	XL_BP_TSL,       /* XLA/TSL flags: true/false (any case), 1, 0 */
	XL_BP_PYTHON,    /* JAX bool_env: y/yes/t/true/on/1, n/no/f/false/off/0 (any case), else raises */
	XL_BP_ATOI,      /* torch_xla GetEnvBool: exactly "true"/"false", else atoi() != 0 */
	XL_BP_INT,       /* integer switch (NCCL, CUDA): strtol, 0 or 1 */
	XL_BP_PREALLOC,  /* jaxlib XLA_PYTHON_CLIENT_PREALLOCATE: false, False, 0 are false, all else true */
	XL_BP_PYINT,     /* Python bool(int(v)): an integer, else raises */
	XL_BP_ONE,       /* Python v == '1': exactly "1" is true, any other value false */
	XL_BP_NONEMPTY,  /* set or not: any non-empty value is true, "0" and "false" included */
	XL_BP_ONEZERO,   /* torch config: exactly "1" true, "0" false; any other word is kept as a
			  * string, so "false" reads as true */
};

struct xl_family {
	const char *name;        /* "xla", "jax", ... */
	const char *file;        /* the catalog's file name under etc/flags */
	bool flags;              /* true: tokens of composite variables; false: env vars */
	const char *variables;   /* flags families: space-separated composite variables */
	bool complete;           /* false: an unknown name is only a warning */
	int bool_parser;         /* enum xl_bool_parser */
	const char *repository, *path, *commit, *release, *also;
};

struct xl_flagdef {
	const char *name;
	int family;              /* index into xl_families */
	int type;                /* enum xl_ftype */
	unsigned tags;           /* XL_FTAG_* */
	int parser;              /* enum xl_bool_parser, XL_BP_NONE: the family's */
	bool icase;              /* enum values match ignoring case */
	const char *const *values; /* NULL-terminated, or NULL */
	const char *def;         /* default or NULL */
	const char *desc;
	const char *reader;      /* xla family: how XLA's reader takes the value
				  * ("int32", "string enum-upper", ...; see
				  * xlareader.h), NULL elsewhere */
	int order;               /* registration order upstream, -1 unknown */
	const char *const *timing_allows; /* a debug-tagged list: items a timing run may
					   * still set (NULL-terminated), or NULL */
};

/* The generated table (build/.../catalog_table.c): sorted by name, then family. */
extern const struct xl_family xl_families[];
extern const size_t xl_nfamilies;
extern const struct xl_flagdef xl_flagdefs[];
extern const size_t xl_nflagdefs;

const char *xl_ftype_name(int type);
/* "debug,cache" style list of tag names into buf. */
const char *xl_ftags_str(unsigned tags, char *buf, size_t n);
int xl_family_index(const char *name);
/* The boolean parser that applies to d. */
int xl_flagdef_bool_parser(const struct xl_flagdef *d);

/* All entries called name: *first and the count (0 when none).  Binary search. */
size_t xl_catalog_find_all(const char *name, const struct xl_flagdef **first);
/* The entry called name in a family that applies to composite variable var
 * (e.g. XLA_FLAGS -> xla; LIBTPU_INIT_ARGS -> libtpu, xla), or NULL. */
const struct xl_flagdef *xl_catalog_flag(const char *var, const char *name);
/* The entry for environment variable name (env families, runtime first), or NULL. */
const struct xl_flagdef *xl_catalog_env(const char *name);
/* Whether variable name belongs to the launchers rather than to a profile:
 * XLAUNCH_* (set by xlaunch for its child) and the catalog entries tagged
 * launcher (rank and topology, set per process by the job launcher).  The
 * ambient policy never strips them. */
bool xl_catalog_owned(const char *name);
/* Whether every family that covers composite var is complete (0), some is
 * partial (1), or none covers it (2). */
int xl_catalog_coverage(const char *var);
/* A "did you mean" among the names that apply to var (NULL var: env vars). */
const char *xl_catalog_suggest(const char *var, const char *word);

/* Whether a NULL-terminated list holds s. */
bool xl_list_has(const char *const *list, const char *s);

/* The items of a list value that a timing run may not set: every one
 * unless d->timing_allows names it (an item starting with '-', less
 * logging, is always allowed).  NULL when none; caller frees. */
char *xl_timing_refused(const struct xl_flagdef *d, const char *value);

/* Checks value against d's type.  Returns NULL when fine, else a static
 * description of what is wrong ("not an integer", ...). */
const char *xl_flag_type_error(const struct xl_flagdef *d, const char *value);

/* ---- lint ------------------------------------------------------------------- */

struct xl_lint_report {
	enum xl_severity sev;
	const char *code;        /* static: "unknown-flag", "duplicate", ... */
	char *token;             /* the offending token as written */
	size_t offset;           /* byte offset of the token */
	char *message;
	char *suggestion;        /* "did you mean" or a fix, or NULL */
	bool aborts;             /* the consumer refuses the whole value for this */
	char *file;              /* the flags file the token is in, or NULL */
	unsigned line, col;      /* its position there (1-based) */
};

struct xl_lint {
	struct xl_lint_report *v;
	size_t n, cap;
	size_t errors, warnings;
	/* XLA_FLAGS: what XLA's reader does with the whole value (enum
	 * xl_xla_verdict, launcher/xlareader.h), and why */
	bool judged;
	int verdict;
	char *verdict_detail;
};

enum {
	XL_LINT_TIMING = 1 << 0,  /* debug-tagged flags are errors */
};

/* Lints the value of composite variable var (XLA_FLAGS, LIBTPU_INIT_ARGS,
 * TF_XLA_FLAGS) or, for another variable, checks the value against its
 * catalog entry.  Appends to out; release with xl_lint_release. */
void xl_lint_string(const char *var, const char *s, unsigned flags, struct xl_lint *out);
void xl_lint_release(struct xl_lint *l);

/* ---- policy ------------------------------------------------------------------ */

struct xl_known_bad {
	const char *flag;        /* flag name without dashes, or VAR for an env variable */
	const char *reason;
	const char *value;       /* the bad value; NULL: any value is bad */
};

/* Refuses every flag or variable of p that is listed in bad[0..n) (77),
 * printing the recorded reason.  Returns 0 or 77. */
int xl_policy_check_known_bad(const struct xl_profile *p, const struct xl_known_bad *bad,
			      size_t n, const char *bundle);

/* Normalizes a boolean value for its consumer.  Returns a static canonical
 * spelling, or NULL when the consumer would misread or reject the value;
 * *misread is set when the value looks boolean but the consumer reads it
 * otherwise (a policy refusal rather than a type error). */
const char *xl_bool_normalize(int parser, const char *value, bool *misread);

#endif
