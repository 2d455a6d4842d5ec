/*
 * abslreader.h - LIBTPU_INIT_ARGS as libtpu reads it.
 *
 * libtpu reads LIBTPU_INIT_ARGS with absl's command-line parser when it
 * starts, before it looks for a TPU, and exits when the parser reports an
 * error.  Its reader is not XLA's (xlareader.h), as the libtpu releases of
 * etc/flags/releases.yaml answer on a host without a TPU:
 *
 *   - words are split at spaces, and only there: a tab or a newline is part
 *     of a word ("--a=1\n--b=2" sets a to "1\n--b=2"); quotes are not special;
 *   - "--" ends the flags: it and every word after it are ignored;
 *   - a word that does not start with '-' (or is "-") is ignored;
 *   - "-name" is "--name"; the name is the text up to the first '=';
 *   - a name no flag has: "Unknown command line flag" (an error); XLA's
 *     general flags (xla_dump_to, xla_gpu_*, ...) are unknown to libtpu;
 *   - a boolean: "--name" is true, "--noname" false, "--noname=V" an error
 *     ("Negative form with assignment"); its values are true/false, 1/0,
 *     yes/no, t/f, y/n in any case;
 *   - "--noname" of a flag that is not boolean: an error;
 *   - any other flag without '=' takes the next word as its value (whatever
 *     it is); with none left, an error;
 *   - an integer: decimal, or hexadecimal after 0x, with a sign; no unit;
 *     a float: a number as strtod reads it, whole;
 *   - a flag set twice: the last value wins.
 *
 * Each word is judged against the libtpu release the job loads (release.c,
 * the judge): a name only other releases register is an error naming them; a
 * name of a release xlaunch does not know is a warning.
 */
#ifndef XLAUNCH_LAUNCHER_FLAGS_ABSLREADER_H
#define XLAUNCH_LAUNCHER_FLAGS_ABSLREADER_H

#include "launcher/flags/flags.h"

#include <stdbool.h>
#include <stddef.h>

enum xl_absl_kind {
	XL_AB_SET,           /* a flag takes it: d, value */
	XL_AB_IGNORED,       /* not a flag: libtpu ignores the word */
	XL_AB_END,           /* "--": it and the rest are ignored */
	XL_AB_VALUE,         /* the value of the flag of the word before */
	XL_AB_UNKNOWN,       /* no flag of the judged release has the name: libtpu exits */
	XL_AB_XLA,           /* an XLA flag libtpu does not take: libtpu exits */
	XL_AB_ELSEWHERE,     /* other libtpu releases register it: libtpu exits */
	XL_AB_UNCONFIRMED,   /* the judged release is not one xlaunch knows: a warning */
	XL_AB_BAD_VALUE,     /* the flag refuses the value: libtpu exits */
	XL_AB_MISSING,       /* no value left for it: libtpu exits */
};

struct xl_absl_word {
	enum xl_absl_kind kind;
	char *text;                  /* as written */
	size_t start;                /* byte offset in the value */
	char *name;                  /* the flag's name (without "no" for a negated boolean), or NULL */
	char *value;                 /* the value it sets (a negated boolean: "false"), or NULL */
	const struct xl_flagdef *d;  /* XL_AB_SET, XL_AB_BAD_VALUE, XL_AB_MISSING */
	char *why;                   /* what libtpu says or xlaunch knows, or NULL */
	char *hint;                  /* a fix or a "did you mean", or NULL */
};

struct xl_absl_words {
	struct xl_absl_word *v;
	size_t n;
};

/* The words of s as libtpu's reader takes them, judged against j (NULL:
 * the catalog, the pinned release).  Release with xl_absl_words_release. */
void xl_absl_read(const struct xl_judge *j, const char *s, struct xl_absl_words *out);
void xl_absl_words_release(struct xl_absl_words *w);

/* Why libtpu refuses value for flag d (NULL: it takes it), by d's type and,
 * for the value types of libtpu's own, its reader (etc/flags/libtpu.yaml):
 * "int32", "int64", "uint32", "uint64" (absl's integers of that width),
 * "string duration" (absl's durations), an enum's values (in any case with
 * "enum-icase"); "optional" takes the empty value too, "auto" the word
 * auto. */
const char *xl_absl_value_error(const struct xl_flagdef *d, const char *value);
/* The values d takes, in words ("true, false or auto (in any case)"), for a
 * value type xlaunch learned from libtpu; NULL for the others.  Caller frees. */
char *xl_absl_accepted(const struct xl_flagdef *d);
/* xl_absl_unlearned: flags.h.  The value types of libtpu's own
 * (absltypes.c): whether d has one xlaunch learned, and why libtpu refuses
 * value for it (NULL: it takes it); whether d's reader has the word w; an
 * absl integer of that sign and width (32, 64). */
bool xl_absl_own_type(const struct xl_flagdef *d);
const char *xl_absl_own_error(const struct xl_flagdef *d, const char *value);
bool xl_absl_reader_has(const struct xl_flagdef *d, const char *w);
bool xl_absl_int_in(const char *v, bool is_signed, int bits);

#endif
