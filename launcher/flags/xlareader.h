/*
 * xlareader.h - a model of the reader XLA applies to XLA_FLAGS (and to the
 * file it names), used by the linter and the profile checks.  Internal to
 * launcher/flags/ (the rest of xlaunch uses flags.h).
 *
 * The model mirrors openxla/xla at 5a9e73cbd92530cac2ac36f4736a774b2412afe2
 * (the XLA commit jaxlib 0.10.2 was built from, jax's
 * third_party/xla/revision.bzl at jax-v0.10.2) and the abseil it builds
 * with (255c84dadd029fd8ad25c5efb5933e47beaa00c7, LTS 20260107.1).  Each
 * rule in xlareader.c names the upstream file it follows.
 *
 * Nothing here keeps state; the caller owns what a function returns.
 */
#ifndef XLAUNCH_LAUNCHER_FLAGS_XLAREADER_H
#define XLAUNCH_LAUNCHER_FLAGS_XLAREADER_H

#include "launcher/flags/flags.h"

/* One argv word the reader builds from the variable's value. */
struct xl_xla_word {
	char *text;          /* "--name=value" as the flag parser sees it: quotes
			      * and backslashes of a quoted value removed */
	size_t start, end;   /* its bytes in the source: [start, end) */
	bool quoted;         /* the value was quoted */
	bool unterminated;   /* the quote ran to the end of the source */
};

struct xl_xla_words {
	struct xl_xla_word *v;
	size_t n;
	size_t stop;         /* where reading stopped: the offset of the first
			      * word that does not start with '-' (ignored from
			      * there on), or the source's length */
};

/* Splits s[0..len) into words the way XLA does (parse_flags_from_env.cc,
 * ParseArgvFromString).  Release with xl_xla_words_release. */
void xl_xla_split(const char *s, size_t len, struct xl_xla_words *out);
void xl_xla_words_release(struct xl_xla_words *w);

/* What the flag parser makes of one word. */
enum xl_xla_match {
	XL_XLA_MATCHED,      /* a registered flag took it and its value */
	XL_XLA_BAD_VALUE,    /* a registered flag took it and refused the value */
	XL_XLA_UNKNOWN,      /* no flag took it: left over for the unknown check */
	XL_XLA_END,          /* the word "--": it and every later word are left over */
	XL_XLA_UNCONFIRMED,  /* judged against a release xlaunch does not know: a name the
			      * release it is judged as lacks (XLA may take it) */
};

/* Matches word against the flags of var's families (XLA_FLAGS: the xla
 * catalog), as tsl::Flags::Parse does.  *d is the flag (or NULL), *why a
 * static reason for XL_XLA_BAD_VALUE. */
enum xl_xla_match xl_xla_match(const char *var, const char *word, const struct xl_flagdef **d,
			       const char **why);
/* The same with the names (and types) of the releases j judges against:
 * a name the judged release does not register is unknown, one of a
 * release xlaunch does not know unconfirmed.  The value rules stay the
 * model's (the pinned XLA's).  j NULL: xl_xla_match. */
enum xl_xla_match xl_xla_match_at(const struct xl_judge *j, const char *var, const char *word,
				  const struct xl_flagdef **d, const char **why);

/* The value check of d's setter (value NULL: the bare --name).  NULL when
 * XLA takes the value, else a static reason. */
const char *xl_xla_value_error(const struct xl_flagdef *d, const char *value);

/* How a later token of the same flag combines with an earlier one. */
enum xl_xla_combine {
	XL_XLA_REPLACE,      /* the last value wins */
	XL_XLA_APPEND,       /* values accumulate (lists) */
	XL_XLA_MERGE,        /* KEY=VALUE maps merge key by key */
	XL_XLA_EDIT,         /* +NAME/-NAME edit the set built so far */
};

enum xl_xla_combine xl_xla_combine(const struct xl_flagdef *d, const char *value);
/* The reader's verdict on a whole value of XLA_FLAGS. */
enum xl_xla_verdict {
	XL_XLA_ACCEPTS,
	XL_XLA_PARSE_FAILS,  /* a value refused (or "--help" left first): "Flag parsing failed" */
	XL_XLA_UNKNOWN_FLAGS,/* words no flag took: "Unknown flag(s) in XLA_FLAGS" */
	XL_XLA_NO_FILE,      /* a flags file that cannot be opened */
};

/* Runs the model over the value of XLA_FLAGS (reading a flags file when
 * the value names one).  *detail (may be NULL) gets a description of the
 * first reason (caller frees). */
enum xl_xla_verdict xl_xla_verdict(const char *value, char **detail);
/* The same judged against j's releases (unconfirmed names count as taken). */
enum xl_xla_verdict xl_xla_verdict_at(const struct xl_judge *j, const char *value, char **detail);

/* Fuzzing entry point: the verdict on arbitrary bytes (no files are read). */
int xl_xla_fuzz(const uint8_t *data, size_t size);

/* absl::SimpleAtoi into a signed integer of the given bits (32 or 64). */
bool xl_absl_atoi(const char *s, size_t len, int bits, long long *out);
/* absl::SimpleAtof (float): whether the whole text is a number. */
bool xl_absl_atof(const char *s, size_t len);
/* absl::ParseDuration: whether s is a duration. */
bool xl_absl_duration(const char *s, size_t len);

#endif
