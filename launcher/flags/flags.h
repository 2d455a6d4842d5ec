/*
 * flags.h - the flags room: what xlaunch knows of the runtimes' flags and
 * variables.  Code outside launcher/flags/ includes only this header.
 *
 * It owns:
 *   - composite flag variables (XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS):
 *     tokens as XLA's own parser splits them, and ordered flag maps with
 *     the provenance of every token (flagstr.c);
 *   - the flag catalogs, etc/flags/FAMILY.yaml compiled into a table at
 *     build time (catalog.c), and the checks of one value against its
 *     entry: types, consumer-safe booleans, timing-refused list items;
 *   - the linter of composite values (lint.c) over a model of XLA's own
 *     reader (xlareader.c; its internals are in xlareader.h, private);
 *   - the persistent compile caches' key rules, etc/cachekeys.yaml
 *     compiled into a table (cachekey.c), and the small key file kept in
 *     each cache directory that says before a launch that a cache will be
 *     cold, and why.
 *
 * It knows nothing of profiles: the profile room builds on it.
 *
 * Ownership: the tables are static data.  A flag map owns its strings;
 * provenance file names are borrowed (they point into a profile's storage).
 * A json_t * returned is a new reference; a char * returned is the
 * caller's to free.
 */
#ifndef XLAUNCH_LAUNCHER_FLAGS_H
#define XLAUNCH_LAUNCHER_FLAGS_H

#include "common/common.h"

#include <jansson.h>

/* Where a value came from: a profile file and position, or "environment". */
struct xl_prov {
	const char *file;
	unsigned line, col;
};

/* ---- composite flag variables (XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS) --- */

/* One token as XLA's own parser sees it. */
enum xl_tok_kind {
	XL_TOK_FLAG,     /* --name or --name=value (also -name, which XLA accepts) */
	XL_TOK_BARE,     /* a word without a leading dash: XLA stops parsing here */
};

struct xl_token {
	enum xl_tok_kind kind;
	char *raw;        /* the token as written */
	char *name;       /* FLAG: name without dashes; BARE: the word (or KEY of KEY=VALUE) */
	char *value;      /* FLAG: value after '=' with quotes removed, NULL when bare --name */
	bool quoted;      /* value was quoted */
	bool single_dash; /* written -name */
	size_t offset;    /* byte offset of the token in the string */
};

struct xl_tokens {
	struct xl_token *v;
	size_t n;
};

/* Splits s the way XLA's flag parser does: whitespace separates tokens, a
 * value quoted right after '=' may hold whitespace.  Returns false with *err
 * set (caller frees) on an unterminated quote. */
bool xl_flags_tokenize(const char *s, struct xl_tokens *out, char **err);
void xl_tokens_release(struct xl_tokens *t);

struct xl_flag {
	char *name;       /* without dashes */
	char *value;      /* NULL: bare --name, a true boolean */
	struct xl_prov src;
	struct xl_prov prev; /* a list-valued flag: where the value this one
			      * replaced was set (file NULL: it replaced none) */
};

/* An ordered map of flags; setting an existing name replaces its value in
 * place (its first position is kept).  A list-valued XLA flag repeated
 * within one value keeps every token (XLA builds the list up from them):
 * such a name may appear more than once, and setting or deleting it acts
 * on all its entries. */
struct xl_flagmap {
	struct xl_flag *v;
	size_t n, cap;
};

void xl_flagmap_set(struct xl_flagmap *m, const char *name, const char *value,
		    struct xl_prov src);
/* Appends name even when it is there already (a repeated list-valued flag). */
void xl_flagmap_add(struct xl_flagmap *m, const char *name, const char *value,
		    struct xl_prov src);
bool xl_flagmap_del(struct xl_flagmap *m, const char *name);
const struct xl_flag *xl_flagmap_get(const struct xl_flagmap *m, const char *name);
/* Merges a flag string into m; tokens that are not flags are an error. */
bool xl_flagmap_parse(struct xl_flagmap *m, const char *s, struct xl_prov src, char **err);
/* "--a=1 --b --c=\"x y\""; caller frees. */
char *xl_flagmap_format(const struct xl_flagmap *m);
void xl_flagmap_release(struct xl_flagmap *m);
/* True for XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS. */
bool xl_is_composite_var(const char *name);

/* ---- the catalogs ------------------------------------------------------------ */

enum xl_ftype { XL_FT_BOOL, XL_FT_INT, XL_FT_FLOAT, XL_FT_STRING, XL_FT_ENUM, XL_FT_LIST };

enum {
	XL_FTAG_DEBUG = 1 << 0,
	XL_FTAG_CACHE = 1 << 1,
	XL_FTAG_PERF_RISK = 1 << 2,
	XL_FTAG_DEPRECATED = 1 << 3,
	XL_FTAG_LAUNCHER = 1 << 4,   /* set per process by the job launcher (rank, topology) */
	XL_FTAG_OBSERVED = 1 << 5,   /* known only from what release wheels register (releases.yaml
				      * `observed`): no type, any value is taken */
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
	XL_BP_ABSL,      /* libtpu's flag parser (absl): true/false, 1/0, yes/no, t/f, y/n, any case */
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
	/* Set only on entries release.c builds when a job loads two releases
	 * that both register a flag with different types or values: */
	const char *release;              /* the release this entry is of ("torch_xla 2.9.0") */
	const struct xl_flagdef *also;    /* the other release's entry, which a value must
					   * pass too (xl_flag_refusing), or NULL */
};

/* The generated table (build/.../catalog_table.c): sorted by name, then family. */
extern const struct xl_family xl_families[];
extern const size_t xl_nfamilies;
extern const size_t xl_nflagdefs;
/* Entry i of the catalog (i < xl_nflagdefs).  The table is compiled in as
 * offsets into one string pool (no relocations at start, knowledge.h); an
 * entry is made into this form the first time it is asked for, and stays
 * (the pointer is valid for the life of the process).  Not for threads
 * other than the main one. */
const struct xl_flagdef *xl_flagdef_at(size_t i);

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

/* Whether libtpu flag d's value type is one of libtpu's own that xlaunch could not learn
 * (reader "string unlearned"): its values are not checked. */
bool xl_absl_unlearned(const struct xl_flagdef *d);

/* Checks value against d's type.  Returns NULL when fine, else a static
 * description of what is wrong ("not an integer", ...). */
const char *xl_flag_type_error(const struct xl_flagdef *d, const char *value);
/* The entry whose rules refuse value, d first, then the entries chained
 * after it (d->also: another release the job loads), each asked with check
 * (xl_flag_type_error, or XLA's reader model); NULL when every one takes
 * it.  *why: check's reason. */
const struct xl_flagdef *xl_flag_refusing(const struct xl_flagdef *d, const char *value,
					  const char *(*check)(const struct xl_flagdef *, const char *),
					  const char **why);
/* xl_flag_type_error over d and the entries chained after it: a reason a
 * later entry gives names its release ("not one of the allowed values in
 * torch_xla 2.9.0").  Static, or kept for the life of the process. */
const char *xl_flag_value_error(const struct xl_flagdef *d, const char *value);
/* why, with " in RELEASE" when r names one (kept for the life of the process). */
const char *xl_flag_reason_in(const struct xl_flagdef *r, const char *why);

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
	 * xl_xla_verdict, launcher/flags/xlareader.h), and why */
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
struct xl_judge;
/* The same judged against the releases of j (NULL: the pinned release of
 * each family, as xl_lint_string): a flag the judged release does not
 * register but another does is an error naming them ("not-in-release"),
 * one a release xlaunch does not know may register a warning
 * ("unconfirmed"). */
void xl_lint_string_at(const struct xl_judge *j, const char *var, const char *s, unsigned flags,
		       struct xl_lint *out);
void xl_lint_release(struct xl_lint *l);

/* Normalizes a boolean value for its consumer.  Returns a static canonical
 * spelling, or NULL when the consumer would misread or reject the value;
 * *misread is set when the value looks boolean but the consumer reads it
 * otherwise (a policy refusal rather than a type error). */
const char *xl_bool_normalize(int parser, const char *value, bool *misread);

/* Whether XLA reads the value of its variable as the path of a flags file:
 * not empty, and its first byte after " \t\r\n" is not '-'. */
bool xl_xla_is_file(const char *value);
/* Whether d holds a list, map or set that repeated tokens build up (so two
 * settings of it combine instead of the last one winning). */
bool xl_xla_list_valued(const struct xl_flagdef *d);

/* ---- flags judged against the release the job will load (release.c) ------------ */

struct xl_runtime;       /* bundle/bundle.h */
struct xl_kflag;         /* knowledge.h */

/* Where an installed version sits among the releases the knowledge lists. */
enum xl_rel_how {
	XL_REL_EXACT,        /* a release inside the knowledge */
	XL_REL_NEWER,        /* newer than all of them: judged as the newest, never refused */
	XL_REL_OLDER,        /* older than all of them: judged as the oldest, never refused */
	XL_REL_BETWEEN,      /* between two of them (withdrawn, a local build): judged as the
			      * one before, never refused */
	XL_REL_UNREADABLE,   /* not a PEP 440 version: judged as the newest, never refused */
	XL_REL_ASSUMED,      /* not installed: the newest release, said so */
};

struct xl_rel_pos {
	int pkg;             /* the package (knowledge.h's xl_kpackages) */
	int index;           /* the release judged as, within the package */
	enum xl_rel_how how;
	const char *version; /* as installed (borrowed from the runtime), or NULL */
};

#define XL_JUDGE_MAX_PKGS 8

/* The releases a check judges against: the runtime's packages placed among
 * the releases the knowledge lists.  Borrows rt (NULL: nothing detected, so
 * every family is judged against its newest known release). */
struct xl_judge {
	const struct xl_runtime *rt;
	struct xl_rel_pos pos[XL_JUDGE_MAX_PKGS];
	size_t npos;
};
void xl_judge_init(struct xl_judge *j, const struct xl_runtime *rt);

/* What the judged releases make of one name. */
enum xl_rel_status {
	XL_RS_REGISTERED,    /* d is the entry to check the value with */
	XL_RS_ELSEWHERE,     /* other releases register it, the judged one does not: an error */
	XL_RS_UNCONFIRMED,   /* the judged release is not one xlaunch knows and the one it is
			      * judged as lacks it: a warning, never a refusal */
	XL_RS_UNKNOWN,       /* in no release (and no catalog) */
};

struct xl_rel_verdict {
	enum xl_rel_status status;
	const struct xl_flagdef *d;  /* static, or built once from the knowledge */
	const struct xl_kflag *k;    /* its knowledge entry, or NULL */
	int family;                  /* the family judged, or -1 */
	char *why;                   /* ELSEWHERE, UNCONFIRMED: what and why (caller releases) */
	char *hint;                  /* the successor upstream names, or the change that dropped it */
};

/* The entry of flag name of composite var as the judged releases register
 * it (XLA_FLAGS only; other variables and a NULL judge: the catalog's, as
 * xl_catalog_flag).  NULL unless rv->status is XL_RS_REGISTERED.  Release
 * rv with xl_rel_verdict_release. */
const struct xl_flagdef *xl_catalog_flag_at(const struct xl_judge *j, const char *var, const char *name,
					    struct xl_rel_verdict *rv);
/* The same for environment variable name (the jax and torch_xla families
 * record releases; the others are judged by their catalog alone). */
const struct xl_flagdef *xl_catalog_env_at(const struct xl_judge *j, const char *name,
					   struct xl_rel_verdict *rv);
void xl_rel_verdict_release(struct xl_rel_verdict *rv);
/* The knowledge entry of name in family fam, or NULL. */
const struct xl_kflag *xl_knowledge_find(const char *name, int fam);
/* "jaxlib 0.4.30 to 0.7.1 and torch_xla 2.5.0 to 2.9.0": the releases that
 * register k (of mask, a bit set over family fam's releases).  Caller frees. */
char *xl_knowledge_ranges(const struct xl_kflag *k);
char *xl_knowledge_mask_ranges(int fam, uint64_t mask);
/* The catalog entry of k as its entry describes it (the pinned release's,
 * else built from the knowledge).  Static. */
const struct xl_flagdef *xl_knowledge_entry(const struct xl_kflag *k);
/* What the judged releases make of name of family fam (a family that
 * records no releases: registered).  Release rv. */
void xl_judge_name(const struct xl_judge *j, int fam, const char *name, struct xl_rel_verdict *rv);
/* What family fam is judged against, in words ("jaxlib 0.6.2 (the job's
 * Python has it)"), or NULL for a family that records no releases.
 * Caller frees. */
char *xl_judge_str(const struct xl_judge *j, int fam);
char *xl_rel_pos_str(const struct xl_judge *j, const struct xl_rel_pos *t);
/* Entries of name that only releases other than the pinned one register
 * (built from the knowledge, static).  Returns how many (at most max). */
size_t xl_knowledge_only(const char *name, const struct xl_flagdef **out, size_t max);

#define XL_MAX_VARIANTS 16

/* What the knowledge says of a flag over releases. */
struct xl_flag_releases {
	char *releases;              /* "jaxlib 0.4.30 to 0.7.1 and torch_xla 2.5.0 to 2.9.0" */
	struct xl_flag_variant {
		char *releases;      /* where the type or values differ from the entry's */
		int type;            /* enum xl_ftype */
		const char *values;  /* NUL-separated, ended by an empty item; or NULL */
	} variants[XL_MAX_VARIANTS];
	size_t nvariants;
	const char *removed;         /* the upstream change that dropped it, or NULL */
	const char *replaced_by, *evidence; /* the successor upstream names, and where */
};
/* Fills r for name of family fam: false when the family records no
 * releases or the knowledge lacks the name.  Release with
 * xl_flag_releases_release either way. */
bool xl_flag_releases_get(const char *name, int fam, struct xl_flag_releases *r);
void xl_flag_releases_release(struct xl_flag_releases *r);

/* The name of family fam nearest to word (a typo's "did you mean") among
 * those the judged release of the family registers, or NULL. */
const char *xl_judge_suggest(const struct xl_judge *j, int fam, const char *word);

/* The libtpu version the judged runtime has installed, or NULL (its flags
 * are judged as the libtpu family's releases register them; messages name
 * this version). */
const char *xl_judge_libtpu(const struct xl_judge *j);

/* The release of pkg the catalog describes (jaxlib: the one XLA's reader
 * model follows), or NULL.  Static. */
const char *xl_knowledge_pinned(const char *pkg);
/* {runtime, packages: [{package, installed, judged_as, how}], reader_model}.
 * New reference. */
json_t *xl_judge_json(const struct xl_judge *j);

/* ---- compile-cache keys (cachekey.c) -------------------------------------------------- */

enum xl_ck_split {
	XL_CK_SPLIT_WHITESPACE,  /* any run of spaces, tabs and newlines (Python str.split()) */
	XL_CK_SPLIT_SPACE,       /* single ' ' characters; empty tokens skipped */
};

enum xl_ck_when {
	XL_CK_ALWAYS,            /* an excluded flag whose any change still changes the key */
	XL_CK_NOT_DEFAULT,       /* ... whose value other than XLA's default changes it */
};

enum xl_ck_in_key {
	XL_CK_OUT,               /* in_key: false */
	XL_CK_IN,                /* in_key: true */
	XL_CK_PROGRAM,           /* in_key: program (the programs it changes) */
};

struct xl_ck_exception {
	const char *flag;        /* "--xla_..." */
	int when;                /* enum xl_ck_when */
};

struct xl_ck_setting {
	const char *env;
	int in_key;              /* enum xl_ck_in_key */
	const char *why;         /* or NULL */
};

struct xl_ck_added {
	const char *var;         /* XLA_FLAGS */
	const char *token;       /* "--xla_cpu_enable_fast_math=false" */
};

struct xl_ck_runtime {
	const char *name;        /* "jax", "torch_xla" */
	const char *label;       /* "JAX", "torch_xla" */
	const char *version;
	const char *repo, *tag;
	const char *cache_env;   /* the variable naming the cache directory */
	const char *read_only_env;   /* or NULL */
	bool path_in_key;        /* the directory's spelling is hashed */
	const char *path_unless_env; /* ... unless this variable is set ... */
	const char *const *path_unless_not_containing; /* ... to a value containing none of these */
	const char *const *flag_vars;  /* NULL-terminated */
	int split;               /* enum xl_ck_split */
	const char *token_prefix;    /* only tokens starting so are hashed; NULL: all */
	const char *argv_prefix;     /* arguments of the process starting so are hashed; NULL: none */
	const char *const *exclude;  /* flag names ("--xla_dump_to") left out */
	const struct xl_ck_exception *exceptions;
	size_t nexceptions;
	const struct xl_ck_added *added;  /* tokens the runtime adds when no token names the flag */
	size_t nadded;
	const struct xl_ck_setting *settings;
	size_t nsettings;
	const char *const *raw_vars;      /* hashed as they are (unset reads as empty) */
	const char *const *no_read_back;  /* PJRT_DEVICE values where entries are written, never read */
};

extern const struct xl_ck_runtime xl_ck_runtimes[];
extern const size_t xl_ck_nruntimes;

/* A value lookup: the launch's environment or a resolved profile. */
typedef const char *xl_ck_get_fn(const void *ctx, const char *name);

/* The key-relevant settings of runtime r for one launch: an array of
 * {"what", "name", "value"} objects, sorted; argv may be NULL.  New
 * reference. */
json_t *xl_ck_settings(const struct xl_ck_runtime *r, xl_ck_get_fn *get, const void *ctx,
		       char *const *argv);

/* Whether changing flag name (without dashes) of composite variable var
 * from a to b (NULL: absent; "" is a bare flag) changes runtime r's key. */
bool xl_ck_flag_invalidates(const struct xl_ck_runtime *r, const char *var, const char *name,
			    const char *a, const char *b);
/* Whether changing plain variable var changes runtime r's key (a different
 * cache directory counts: it is another cache). */
bool xl_ck_var_invalidates(const struct xl_ck_runtime *r, const char *var);

/* Compares a stamp (the JSON text of the file kept in a cache directory:
 * the settings of the last launches that used it, newest first) with the
 * settings of this launch.  Returns 0 when one of them had the same
 * settings (*index: which, 0 the newest): the entries it wrote are there;
 * 1 when none had, with *diff ("--xla_cpu_enable_fast_math changed,
 * JAX_ENABLE_X64 set") against the newest and *since ("run ID", or "the
 * launch of TIME with profile P"), both the caller's to free; -1 when the
 * stamp does not parse (it is then as good as absent). */
int xl_ck_stamp_compare(const char *text, size_t len, const json_t *settings, size_t *index,
			char **diff, char **since);

/* Before a launch: for each runtime whose cache directory the environment
 * names (a local absolute path), says on one line when the cache will be
 * cold and why, then keeps this launch's settings in the directory.  Silent
 * when the cache stays warm or nothing is known.  run_id is NULL for exec.
 * rt is the release the job will load (NULL: unknown): the versions the
 * runtime hashes into its key (jaxlib; torch and torch_xla) are settings
 * too, and when rt's release is not the one the rules were read from, a
 * line says so. */
void xl_ck_before_launch(char *const *envp, char *const *argv, const char *profile,
			 const char *run_id, const struct xl_runtime *rt);
/* A line saying that r's rules were read from another release than rt's
 * (NULL when they are rt's, or rt has none of r's packages).  Caller frees. */
char *xl_ck_rules_for(const struct xl_ck_runtime *r, const struct xl_runtime *rt);
/* [{runtime, rules_of, installed, hold}] for each runtime's rules.  New
 * reference. */
json_t *xl_ck_rules_json(const struct xl_runtime *rt);

#endif
