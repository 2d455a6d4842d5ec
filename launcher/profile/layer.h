/* layer.h - the profile room's back room: one profile file as loaded and
 * validated (a layer), shared by the loader (profile.c), the resolver
 * (resolve.c) and the flags-file reader (flagfile.c).  Code outside
 * launcher/profile/ uses profile.h only. */
#ifndef XLAUNCH_LAUNCHER_PROFILE_LAYER_H
#define XLAUNCH_LAUNCHER_PROFILE_LAYER_H

#include "launcher/profile/profile.h"

#define XL_PROFILE_MAX_BYTES (16 << 20)

/* One profile file, validated.  Section pointers borrow from root. */
struct layer {
	char *name;
	char *path;
	struct xl_ynode *root;
	const char *description;
	struct xl_ynode *extends, *env, *unset, *flags, *policy, *limits, *compile, *ranks, *signature,
		*candidates;
	char *open_to_all;   /* why anyone may change this file, or NULL */
	int refs;            /* layer_free drops one; a layer is read-only once loaded */
};

/* Prints "profile 'NAME': PATH:LINE:COL: MSG". */
void perr(const struct layer *l, const struct xl_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Finds NAME on the path (extra_dir first when given) and validates it.
 * Returns 0 or an exit code after printing the error. */
int layer_load(const struct xl_ctx *ctx, const char *name, const char *extra_dir,
	       struct layer **out);
int layer_load_file(const char *path, struct layer **out);
/* Parses and validates bytes as the profile NAME (path for messages). */
int layer_from_bytes(const char *name, const char *path, const char *data, size_t len,
		     struct layer **out);
void layer_free(struct layer *l);
/* Resolves bytes as the one profile file NAME (path for messages) with
 * candidate cand, without following extends: no file is read (tests and
 * fuzzing).  Returns 0 or an exit code after printing the error. */
int xl_profile_resolve_bytes(const char *name, const char *path, const char *data, size_t len,
			     const char *cand, unsigned flags, struct xl_profile **out);
/* ---- overrides.c ---------------------------------------------------------------- */

/* The layer of run's and exec's --set and --flag (xl_profile_set_overrides),
 * named and placed "the command line"; *out NULL when there are none.
 * Returns 0 or an exit code after printing the error. */
int overrides_layer(struct layer **out);

/* ---- flagfile.c ---------------------------------------------------------------- */

/* Merges one value of composite variable var into m as XLA reads it: a
 * value that does not start with '-' names a flags file, which is read
 * (its path kept in paths, which the tokens' provenance points into; with
 * paths NULL no file is read and such a value is an error) and its tokens
 * get their line and column there; inline tokens get src.  A list-valued
 * flag repeated within the value keeps every token; the value's flags
 * replace what m held for them (see xl_flagmap_set_layer).  Returns false
 * with *err set (caller frees) and *at_err where it failed (src, or the
 * place in the flags file): a file that cannot be read, a word that is not
 * a --flag. */
bool xl_flagmap_read(struct xl_flagmap *m, const char *var, const char *value,
		     struct xl_prov src, struct xl_strv *paths, struct xl_prov *at_err,
		     char **err);
/* Sets name in m, replacing what an earlier layer set; a list-valued flag
 * so replaced remembers where (xl_flag.prev). */
void xl_flagmap_set_layer(struct xl_flagmap *m, const char *var, const char *name,
			  const char *value, struct xl_prov src);

#endif
