/* xlareader.c - the model of XLA's flag reader (see xlareader.h).
 *
 * Upstream, at the pinned commits named in xlareader.h:
 *   [env]   xla/parse_flags_from_env.cc: SetArgvFromEnv, ParseArgvFromString,
 *           ParseFlagsFromEnvAndDieIfUnknown, DieIfEnvHasUnknownFlagsLeft
 *   [tsl]   xla/tsl/util/command_line_flags.cc: Flags::Parse, ParseBoolFlag,
 *           ParseIntFlag, ParseFloatFlag, ParseStringFlag
 *   [opts]  xla/debug_options_flags.cc: MakeDebugOptionsFlags (the setters),
 *           ParseRepeatedEnumModifiers; xla/debug_options_parsers.{h,cc}:
 *           parse_comma_separated_values, ParseIntRangeInclusive
 *   [atoi]  abseil absl/strings/numbers.cc: SimpleAtoi (safe_strtoi_base)
 *   [atof]  abseil absl/strings/numbers.cc: SimpleAtof; absl/strings/charconv.cc
 *           and internal/charconv_parse.cc: from_chars, ParseFloat
 *   [dur]   abseil absl/time/duration.cc: ParseDuration
 * The code is this project's own; only the rules are taken from there.
 */
#include "launcher/flags/xlareader.h"
#include "bundle/bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [env] kWS: the only bytes that separate words (no \v, no \f). */
static bool ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* [env] a byte that continues a flag's name: ASCII alphanumerics, '-',
 * '_' and, through strchr("-_", c), the NUL byte (only a file can hold one). */
static bool name_byte(char c)
{
	unsigned char u = (unsigned char)c;

	return u == 0 || c == '-' || c == '_' || (u < 128 && ((c >= 'a' && c <= 'z') ||
							      (c >= 'A' && c <= 'Z') ||
							      (c >= '0' && c <= '9')));
}

/* [env] strchr("'\"", c): a quote, or the NUL byte. */
static bool quote_byte(char c)
{
	return c == '\'' || c == '"' || c == '\0';
}

/* absl::ascii_isspace: the C locale's six. */
static bool absl_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void push_word(struct xl_xla_words *w, size_t *cap, struct xl_buf *text, size_t start,
		      size_t end, bool quoted, bool unterminated)
{
	struct xl_xla_word *x;

	if (w->n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		w->v = xl_realloc(w->v, *cap * sizeof(*w->v));
	}
	x = &w->v[w->n++];
	/* [env] AppendToEnvArgv strdup()s the word: it ends at a NUL byte */
	x->text = xl_strdup(xl_buf_str(text));
	x->start = start;
	x->end = end;
	x->quoted = quoted;
	x->unterminated = unterminated;
}

void xl_xla_split(const char *s, size_t len, struct xl_xla_words *out)
{
	size_t cap = 0, b = 0;

	out->v = NULL;
	out->n = 0;
	while (b < len && ws(s[b]))
		b++;
	/* [env] a word starts at a '-'; the first one that does not ends the
	 * reading, silently */
	while (b < len && s[b] == '-') {
		struct xl_buf text = XL_BUF_INIT;
		size_t e = b;

		while (e < len && name_byte(s[e]))
			e++;
		if (e < len && s[e] == '=' && e + 1 < len && quote_byte(s[e + 1])) {
			/* --name="value": quotes removed; in double quotes a
			 * backslash takes the next byte as it is; the word ends
			 * right after the closing quote */
			char q = s[e + 1];
			bool closed;

			xl_buf_add(&text, s + b, e + 1 - b);
			e += 2;
			for (; e < len && s[e] != q; e++) {
				char c = s[e];

				if (q == '"' && c == '\\' && e + 1 < len)
					c = s[++e];
				xl_buf_addc(&text, c);
			}
			closed = e < len;
			if (closed)
				e++;
			push_word(out, &cap, &text, b, e, true, !closed);
		} else {
			while (e < len && !ws(s[e]))
				e++;
			xl_buf_add(&text, s + b, e - b);
			push_word(out, &cap, &text, b, e, false, false);
		}
		xl_buf_release(&text);
		b = e;
		while (b < len && ws(s[b]))
			b++;
	}
	out->stop = b;
}

void xl_xla_words_release(struct xl_xla_words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].text);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

bool xl_xla_is_file(const char *value)
{
	/* [env] SetArgvFromEnv: unset or "" is nothing; else the first byte
	 * after strspn(kWS) decides (so an all-blank value is a file name) */
	return value && value[0] && value[strspn(value, " \t\r\n")] != '-';
}

/* ---- numbers as abseil reads them ---------------------------------------------- */

static void strip(const char **s, size_t *len)
{
	while (*len && absl_space(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && absl_space((*s)[*len - 1]))
		(*len)--;
}

bool xl_absl_atoi(const char *s, size_t len, int bits, long long *out)
{
	unsigned long long limit, v = 0;
	bool neg;

	/* [atoi] safe_parse_sign_and_base: blanks stripped at both ends, one
	 * sign, then base-10 digits only (no "0x"), the range of the type */
	strip(&s, &len);
	if (!len)
		return false;
	neg = s[0] == '-';
	if (neg || s[0] == '+') {
		s++;
		len--;
		if (!len)
			return false;
	}
	limit = bits == 32 ? (neg ? 2147483648ULL : 2147483647ULL)
			   : (neg ? 9223372036854775808ULL : 9223372036854775807ULL);
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return false;
		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (out)
		*out = neg ? (v == 9223372036854775808ULL ? (long long)(-9223372036854775807LL - 1)
							   : -(long long)v)
			   : (long long)v;
	return true;
}

static bool hexdigit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool digit_of(char c, int base)
{
	return base == 16 ? hexdigit(c) : c >= '0' && c <= '9';
}

static bool lower_eq(const char *s, const char *lit, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lit[i])
			return false;
	}
	return true;
}

/* [atof] ParseFloat<base>: the number of bytes of a number at s, 0 when
 * there is none.  *special is set for inf and nan. */
static size_t parse_float(const char *s, size_t len, int base, bool *special)
{
	const size_t limit = base == 16 ? 12500000 : 50000000; /* kDigitLimit */
	size_t i = 0, pre = 0, mant_start, exp_at;
	bool nonzero = false;

	*special = false;
	if (!len)
		return 0;
	/* ParseInfinityOrNan: "inf", "infinity", "nan", "nan(chars)" */
	if (len >= 3 && (s[0] == 'i' || s[0] == 'I') && lower_eq(s + 1, "nf", 2)) {
		*special = true;
		return len >= 8 && lower_eq(s + 3, "inity", 5) ? 8 : 3;
	}
	if (len >= 3 && (s[0] == 'n' || s[0] == 'N') && lower_eq(s + 1, "an", 2)) {
		size_t k = 4;

		*special = true;
		if (len > 3 && s[3] == '(') {
			while (k < len && (name_byte(s[k]) && s[k] != '-' && s[k] != '\0'))
				k++;
			if (k < len && s[k] == ')')
				return k + 1;
		}
		return 3;
	}
	mant_start = 0;
	while (i < len && s[i] == '0')
		i++;
	while (i < len && digit_of(s[i], base)) {
		i++;
		pre++;
		nonzero = true;
	}
	if (pre >= limit)
		return 0;
	if (i < len && s[i] == '.') {
		size_t zeros = 0, post = 0;

		i++;
		if (!nonzero) {
			while (i < len && s[i] == '0') {
				i++;
				zeros++;
			}
			if (zeros >= limit)
				return 0;
		}
		while (i < len && digit_of(s[i], base)) {
			i++;
			post++;
		}
		if (post >= limit)
			return 0;
	}
	if (i == mant_start)
		return 0;
	if (i == 1 && s[0] == '.')
		return 0;
	exp_at = i;
	if (i < len && (base == 16 ? (s[i] == 'p' || s[i] == 'P') : (s[i] == 'e' || s[i] == 'E'))) {
		size_t d;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		d = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			i = exp_at;  /* no digits: the 'e' is not part of the number */
	}
	return i;
}

bool xl_absl_atof(const char *s, size_t len)
{
	bool special;
	size_t n;

	/* [atof] SimpleAtof: blanks stripped; one '+' allowed unless '-'
	 * follows; then from_chars must take every byte */
	strip(&s, &len);
	if (!len)
		return false;
	if (s[0] == '+') {
		s++;
		len--;
		if (!len || s[0] == '-')
			return false;
	}
	/* from_chars: one '-', then "0x" starts a hexadecimal float (not
	 * inf/nan); when that fails only the "0" is a number */
	if (s[0] == '-') {
		s++;
		len--;
	}
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		n = parse_float(s + 2, len - 2, 16, &special);
		return n && !special && n == len - 2;
	}
	n = parse_float(s, len, 10, &special);
	return n && n == len;
}

bool xl_absl_duration(const char *s, size_t len)
{
	/* [dur] ParseDuration: a sign, then "0", "inf", or one or more
	 * NUMBER[.FRACTION]UNIT with UNIT ns, us, ms, s, m or h */
	if (len && (s[0] == '-' || s[0] == '+')) {
		s++;
		len--;
	}
	if (!len)
		return false;
	if ((len == 1 && s[0] == '0') || (len == 3 && memcmp(s, "inf", 3) == 0))
		return true;
	while (len) {
		size_t i = 0, ip = 0, fp = 0;
		unsigned long long v = 0;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			unsigned d = (unsigned)(s[i] - '0');

			if (v > (9223372036854775807ULL - d) / 10)
				return false;  /* the integer part overflows int64 */
			v = v * 10 + d;
			i++;
			ip++;
		}
		if (i < len && s[i] == '.') {
			i++;
			while (i < len && s[i] >= '0' && s[i] <= '9') {
				i++;
				fp++;
			}
		}
		if (!ip && !fp)
			return false;
		s += i;
		len -= i;
		if (!len)
			return false;
		if (len >= 2 && (s[0] == 'n' || s[0] == 'u' || s[0] == 'm') && s[1] == 's') {
			s += 2;
			len -= 2;
		} else if (s[0] == 's' || s[0] == 'm' || s[0] == 'h') {
			s++;
			len--;
		} else {
			return false;
		}
	}
	return true;
}

/* ---- the setters ------------------------------------------------------------------ */

/* The parts of a reader spec "TYPE [CHECK [ARG]]". */
struct spec {
	char type[8], check[16], arg[48];
};

static void read_spec(const char *reader, struct spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	if (reader)
		(void)sscanf(reader, "%7s %15s %47s", sp->type, sp->check, sp->arg);
}

static char *upper(const char *s, size_t len)
{
	char *u = xl_strndup(s, len);

	for (char *p = u; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	return u;
}

static bool in_values(const struct xl_flagdef *d, const char *v)
{
	for (size_t i = 0; d->values && d->values[i]; i++)
		if (strcmp(d->values[i], v) == 0)
			return true;
	return false;
}

/* [opts] ParseRepeatedEnumModifiers and SetterForRepeatedEnum. */
static const char *repeated_enum(const struct xl_flagdef *d, const char *value, const char *prefix)
{
	size_t parts = 0, incremental = 0;
	const char *p = value;
	bool bad_name = false;

	if (!*value)
		return NULL;          /* empty: the set is cleared */
	for (;;) {
		size_t n = strcspn(p, ","), len = n;
		const char *item = p;

		parts++;
		strip(&item, &len);
		if (len) {
			char *u;

			if (item[0] == '+' || item[0] == '-') {
				incremental++;
				item++;
				len--;
			}
			u = upper(item, len);
			if (*prefix && strncmp(u, prefix, strlen(prefix)) != 0) {
				char *full = xl_asprintf("%s%s", prefix, u);

				free(u);
				u = full;
			}
			if (!in_values(d, u))
				bad_name = true;
			free(u);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	/* counted over every comma-separated part, empty ones included */
	if (incremental && incremental != parts)
		return "mixes +/- items with plain ones (all or none must be incremental)";
	if (bad_name)
		return "names a value that is not one of the allowed ones";
	return NULL;
}

/* [opts] setter_for_xla_gpu_disable_async_collectives. */
static const char *collectives(const struct xl_flagdef *d, const char *value)
{
	const char *p = value;

	for (;;) {
		size_t n = strcspn(p, ",");
		char *u = upper(p, n);
		bool ok = in_values(d, u);

		free(u);
		if (!ok)
			return "is not a comma-separated list of collective kinds";
		if (!p[n])
			return NULL;
		p += n + 1;
	}
}

/* [opts] setter_for_xla_fuel: PASS=INTEGER,... */
static const char *fuel(const char *value)
{
	const char *p = value;

	for (;;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);

		if (!eq || memchr(eq + 1, '=', (size_t)(p + n - eq - 1)))
			return "is not a list of PASS=INTEGER";
		if (!xl_absl_atoi(eq + 1, (size_t)(p + n - eq - 1), 64, NULL))
			return "has a fuel that is not an integer";
		if (!p[n])
			return NULL;
		p += n + 1;
	}
}

/* [opts] ParseIntRangeInclusive over a comma list. */
static const char *int_ranges(const char *value)
{
	const char *p = value;

	for (;;) {
		size_t n = strcspn(p, ",");
		const char *colon = memchr(p, ':', n);
		long long a = -9223372036854775807LL - 1, b = 9223372036854775807LL;

		if (!colon) {
			if (!xl_absl_atoi(p, n, 64, NULL))
				return "is not a list of integer ranges (N, N:M, N:, :M)";
		} else {
			size_t la = (size_t)(colon - p), lb = n - la - 1;

			if (memchr(colon + 1, ':', lb) || (!la && !lb) ||
			    (la && !xl_absl_atoi(p, la, 64, &a)) ||
			    (lb && !xl_absl_atoi(colon + 1, lb, 64, &b)) || a > b)
				return "is not a list of integer ranges (N, N:M, N:, :M)";
		}
		if (!p[n])
			return NULL;
		p += n + 1;
	}
}

static bool bool_text(const char *v)
{
	/* [tsl] ParseBoolFlag: true/false in any case, 1 or 0 */
	return strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0 || strcmp(v, "1") == 0 ||
	       strcmp(v, "0") == 0;
}

static const char *value_error_one(const struct xl_flagdef *d, const char *value);

const char *xl_xla_value_error(const struct xl_flagdef *d, const char *value)
{
	const char *why;
	const struct xl_flagdef *r = xl_flag_refusing(d, value, value_error_one, &why);

	/* two releases judged: the reason names the one that refuses it */
	return xl_flag_reason_in(r, why);
}

static const char *value_error_one(const struct xl_flagdef *d, const char *value)
{
	struct spec sp;
	long long n;

	if (!d->reader)
		return xl_flag_type_error(d, value);
	read_spec(d->reader, &sp);
	if (strcmp(sp.type, "bool") == 0) {
		bool truth = !value || strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0;

		if (value && !bool_text(value))
			return "not a boolean XLA reads (true, false, 1 or 0, any case)";
		if (strcmp(sp.check, "needs-nvptx") == 0 && truth)
			return "refused by XLA builds without libnvptxcompiler (jaxlib's own XLA among them)";
		return NULL;
	}
	if (!value)
		return "needs '=VALUE' (a bare name is left over as an unknown flag)";
	if (strcmp(sp.type, "int32") == 0 || strcmp(sp.type, "int64") == 0) {
		if (!xl_absl_atoi(value, strlen(value), sp.type[3] == '3' ? 32 : 64, &n))
			return sp.type[3] == '3' ? "not a 32-bit integer" : "not a 64-bit integer";
		if (strcmp(sp.check, "min=1") == 0 && n < 1)
			return "below 1";
		return NULL;
	}
	if (strcmp(sp.type, "float") == 0)
		return xl_absl_atof(value, strlen(value)) ? NULL : "not a number";
	/* string setters */
	if (strcmp(sp.check, "enum") == 0)
		return in_values(d, value) ? NULL : "not one of the allowed values (exact spelling)";
	if (strcmp(sp.check, "enum-upper") == 0 || strcmp(sp.check, "enum-prefix") == 0) {
		char *u = upper(value, strlen(value)), *full = NULL;
		bool ok;

		if (sp.check[5] == 'p' && strncmp(u, sp.arg, strlen(sp.arg)) != 0)
			full = xl_asprintf("%s%s", sp.arg, u);
		ok = in_values(d, full ? full : u);
		free(full);
		free(u);
		return ok ? NULL : "not one of the allowed values";
	}
	if (strcmp(sp.check, "enum-lower") == 0) {
		for (size_t i = 0; d->values && d->values[i]; i++)
			if (strcasecmp(d->values[i], value) == 0)
				return NULL;
		return "not one of the allowed values";
	}
	if (strcmp(sp.check, "repeated-enum") == 0)
		return repeated_enum(d, value, sp.arg);
	if (strcmp(sp.check, "collectives") == 0)
		return collectives(d, value);
	if (strcmp(sp.check, "duration") == 0)
		return xl_absl_duration(value, strlen(value)) ? NULL
			: "not a duration (such as 30s, 1.5h, 2h45m, 0 or inf)";
	if (strcmp(sp.check, "fuel") == 0)
		return fuel(value);
	if (strcmp(sp.check, "int-ranges") == 0)
		return int_ranges(value);
	return NULL;
}

enum xl_xla_combine xl_xla_combine(const struct xl_flagdef *d, const char *value)
{
	struct spec sp;

	if (!d || !d->reader)
		return XL_XLA_REPLACE;
	read_spec(d->reader, &sp);
	if (strcmp(sp.check, "append") == 0 || strcmp(sp.check, "int-ranges") == 0)
		return XL_XLA_APPEND;
	if (strcmp(sp.check, "map") == 0)
		return XL_XLA_MERGE;
	if (strcmp(sp.check, "repeated-enum") == 0 && value) {
		const char *v = value + strspn(value, " \t\n\v\f\r");

		if (*v == '+' || *v == '-')
			return XL_XLA_EDIT;
	}
	return XL_XLA_REPLACE;
}

bool xl_xla_list_valued(const struct xl_flagdef *d)
{
	struct spec sp;

	if (!d || !d->reader)
		return false;
	read_spec(d->reader, &sp);
	return strcmp(sp.check, "append") == 0 || strcmp(sp.check, "int-ranges") == 0 ||
	       strcmp(sp.check, "map") == 0 || strcmp(sp.check, "repeated-enum") == 0;
}

enum xl_xla_match xl_xla_match(const char *var, const char *word, const struct xl_flagdef **dp,
			       const char **why)
{
	return xl_xla_match_at(NULL, var, word, dp, why);
}

enum xl_xla_match xl_xla_match_at(const struct xl_judge *j, const char *var, const char *word,
				  const struct xl_flagdef **dp, const char **why)
{
	struct xl_rel_verdict rv;
	const struct xl_flagdef *d;
	const char *eq;
	char *name;

	*dp = NULL;
	*why = NULL;
	/* [tsl] Flags::Parse: "--" passes itself and the rest through */
	if (strcmp(word, "--") == 0)
		return XL_XLA_END;
	/* [tsl] every Parse*Flag consumes "--", then the flag's name, then
	 * '=' (a boolean also matches the name alone; a longer name is not
	 * its: "It's probably another argument name").  Names are
	 * [a-z0-9_]+ and registered once, so the registration order
	 * [opts] walks cannot change which flag takes a word: the one whose
	 * name is exactly the text between "--" and the first '='. */
	if (strncmp(word, "--", 2) != 0)
		return XL_XLA_UNKNOWN;
	eq = strchr(word + 2, '=');
	name = xl_strndup(word + 2, eq ? (size_t)(eq - word - 2) : strlen(word + 2));
	/* the names: those the judged release registers (j NULL: the
	 * catalog's, the pinned release's); no flag is called help */
	if (strcmp(name, "help") == 0) {
		free(name);
		return XL_XLA_UNKNOWN;
	}
	d = xl_catalog_flag_at(j, var, name, &rv);
	free(name);
	if (!d) {
		bool maybe = rv.status == XL_RS_UNCONFIRMED;

		xl_rel_verdict_release(&rv);
		return maybe ? XL_XLA_UNCONFIRMED : XL_XLA_UNKNOWN;
	}
	xl_rel_verdict_release(&rv);
	if (!eq) {
		struct spec sp;

		read_spec(d->reader, &sp);
		if (d->reader ? strcmp(sp.type, "bool") != 0 : d->type != XL_FT_BOOL)
			return XL_XLA_UNKNOWN;
	}
	*dp = d;
	*why = xl_xla_value_error(d, eq ? eq + 1 : NULL);
	if (*why) {
		const char *one;
		const struct xl_flagdef *r = xl_flag_refusing(d, eq ? eq + 1 : NULL, value_error_one, &one);

		/* the entry that refuses it, for the values a hint offers */
		if (r)
			*dp = r;
	}
	return *why ? XL_XLA_BAD_VALUE : XL_XLA_MATCHED;
}

/* The verdict on words already split. */
static enum xl_xla_verdict judge(const struct xl_judge *j, const struct xl_xla_words *w,
				 char **detail)
{
	const char *first_unknown = NULL;
	char *bad = NULL;
	size_t nunknown = 0;

	for (size_t i = 0; i < w->n; i++) {
		const struct xl_flagdef *d;
		const char *why;
		enum xl_xla_match m = xl_xla_match_at(j, "XLA_FLAGS", w->v[i].text, &d, &why);

		if (m == XL_XLA_END) {
			if (!first_unknown)
				first_unknown = w->v[i].text;
			nunknown += w->n - i;
			break;
		}
		if (m == XL_XLA_UNKNOWN) {
			if (!first_unknown)
				first_unknown = w->v[i].text;
			nunknown++;
		}
		if (m == XL_XLA_BAD_VALUE && !bad)
			bad = xl_asprintf("'%s': %s", w->v[i].text, why);
	}
	/* [env] ParseFlagsFromEnvAndIgnoreUnknown QCHECKs Flags::Parse first:
	 * a refused value (or "--help" left first) dies there, before
	 * DieIfEnvHasUnknownFlagsLeft looks at what is left */
	if (bad || (first_unknown && strcmp(first_unknown, "--help") == 0)) {
		if (detail)
			*detail = bad ? bad : xl_strdup("'--help' is the first word left over");
		else
			free(bad);
		return XL_XLA_PARSE_FAILS;
	}
	if (nunknown) {
		if (detail)
			*detail = xl_asprintf("'%s'%s", first_unknown,
					      nunknown > 1 ? " and more are unknown" : " is unknown");
		return XL_XLA_UNKNOWN_FLAGS;
	}
	return XL_XLA_ACCEPTS;
}

enum xl_xla_verdict xl_xla_verdict(const char *value, char **detail)
{
	return xl_xla_verdict_at(NULL, value, detail);
}

enum xl_xla_verdict xl_xla_verdict_at(const struct xl_judge *j, const char *value, char **detail)
{
	struct xl_xla_words w;
	enum xl_xla_verdict v;

	if (detail)
		*detail = NULL;
	if (!value || !*value)
		return XL_XLA_ACCEPTS;
	if (xl_xla_is_file(value)) {
		/* [env] the whole value, blanks included, is the path */
		struct xl_buf b = XL_BUF_INIT;
		FILE *f = fopen(value, "r");
		char buf[4096];
		size_t n;

		if (!f) {
			if (detail)
				*detail = xl_asprintf("cannot open flags file '%s': %s", value,
						      strerror(errno));
			return XL_XLA_NO_FILE;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			xl_buf_add(&b, buf, n);
		fclose(f);
		xl_xla_split(b.buf ? b.buf : "", b.len, &w);
		xl_buf_release(&b);
	} else {
		xl_xla_split(value, strlen(value), &w);
	}
	v = judge(j, &w, detail);
	xl_xla_words_release(&w);
	return v;
}

int xl_xla_fuzz(const uint8_t *data, size_t size)
{
	struct xl_xla_words w;
	enum xl_xla_verdict v;
	char *detail = NULL;

	xl_xla_split((const char *)data, size, &w);
	for (size_t i = 0; i < w.n; i++) {
		if (w.v[i].start >= w.v[i].end || w.v[i].end > size)
			abort();
		(void)xl_absl_atof(w.v[i].text, strlen(w.v[i].text));
		(void)xl_absl_duration(w.v[i].text, strlen(w.v[i].text));
	}
	/* the names of the pinned release, and of an older one (jaxlib 0.6.2,
	 * whose flags the pinned release partly lacks) when the first byte is
	 * odd */
	if (size && (data[0] & 1)) {
		struct xl_runtime rt = { .source = "--release", .jaxlib = (char *)"0.6.2" };
		struct xl_judge j;

		xl_judge_init(&j, &rt);
		v = judge(&j, &w, &detail);
	} else {
		v = judge(NULL, &w, &detail);
	}
	free(detail);
	xl_xla_words_release(&w);
	return (int)v;
}
