/* cachekey.h - the persistent compile caches' key rules (etc/cachekeys.yaml,
 * compiled into the binary by tools/gen-cachekeys) and what xlaunch does
 * with them: which settings of a launch go into each runtime's key, whether
 * a profile difference changes it, and the small file kept in each cache
 * directory that lets `run` and `exec` say before the start that a cache
 * will be cold, and why.  Internal to the launcher module.
 *
 * Ownership: the rule table is static data.  A json_t * returned is a new
 * reference; a char * returned is the caller's to free.
 */
#ifndef XLAUNCH_LAUNCHER_CACHEKEY_H
#define XLAUNCH_LAUNCHER_CACHEKEY_H

#include "launcher/launcher.h"

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
 * when the cache stays warm or nothing is known.  run_id is NULL for exec. */
void xl_ck_before_launch(char *const *envp, char *const *argv, const char *profile,
			 const char *run_id);

#endif
