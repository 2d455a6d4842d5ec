/* absltypes.c - the value types of libtpu's own that xlaunch learned from
 * each release's parser (the readers of etc/flags/libtpu.yaml, abslreader.h):
 * absl's integers of each width, durations, enums. */
#include "launcher/flags/abslreader.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An integer as absl reads it (decimal, or hexadecimal after 0x, with a
 * sign), within [lo, hi] for a signed type, [0, uhi] for an unsigned one;
 * wide: the range is the flag's (a reader "int32", "uint64", ...). */
bool xl_absl_int_in(const char *v, bool is_signed, int bits)
{
	const char *p = v;
	bool neg = false;
	int base = 10;
	unsigned long long m;
	char *end;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p || !isxdigit((unsigned char)*p))
		return false;
	errno = 0;
	m = strtoull(p, &end, base);
	if (errno != 0 || *end != '\0' || (base == 10 && strspn(p, "0123456789") != strlen(p)))
		return false;
	if (!is_signed)
		return (!neg || m == 0) && (bits == 64 || m <= (bits == 32 ? 0xffffffffULL : 0xffffULL));
	if (bits == 16)
		return neg ? m <= 0x8000ULL : m <= 0x7fffULL;
	if (bits == 32)
		return neg ? m <= 0x80000000ULL : m <= 0x7fffffffULL;
	return neg ? m <= 0x8000000000000000ULL : m <= 0x7fffffffffffffffULL;
}

/* A duration as absl reads it: 0, inf, -inf, or a sign and numbers each
 * with a unit (ns, us, ms, s, m, h): "1s", "1.5h", "1h30m". */
static bool absl_duration(const char *v)
{
	static const char *const units[] = { "ns", "us", "ms", "s", "m", "h" };
	const char *p = v;

	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, "0") == 0 || strcmp(p, "inf") == 0)
		return true;
	if (!*p)
		return false;
	while (*p) {
		size_t ip = strspn(p, "0123456789"), fp = 0, u;

		p += ip;
		if (*p == '.') {
			fp = strspn(p + 1, "0123456789");
			p += 1 + fp;
		}
		if (ip + fp == 0)
			return false;
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			size_t n = strlen(units[u]);

			/* "ms" is tried before "m" */
			if (strncmp(p, units[u], n) == 0)
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]))
			return false;
		p += strlen(units[u]);
	}
	return true;
}

/* Whether the reader spec of d (knowledge: "int32 optional", "string
 * enum-icase", ...) has the word w. */
bool xl_absl_reader_has(const struct xl_flagdef *d, const char *w)
{
	const char *r = d->reader;
	size_t n = strlen(w);

	for (; r && *r; r += strcspn(r, " "), r += strspn(r, " "))
		if (strncmp(r, w, n) == 0 && (r[n] == ' ' || !r[n]))
			return true;
	return false;
}

bool xl_absl_unlearned(const struct xl_flagdef *d)
{
	return xl_absl_reader_has(d, "unlearned");
}

/* The integer reader of d: its width and sign; false when it has none. */
static bool int_reader(const struct xl_flagdef *d, bool *is_signed, int *bits)
{
	static const struct { const char *w; bool s; int b; } r[] = {
		{ "int16", true, 16 }, { "int32", true, 32 }, { "int64", true, 64 },
		{ "uint16", false, 16 }, { "uint32", false, 32 }, { "uint64", false, 64 },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (xl_absl_reader_has(d, r[i].w)) {
			*is_signed = r[i].s;
			*bits = r[i].b;
			return true;
		}
	return false;
}

static bool enum_takes(const struct xl_flagdef *d, const char *value)
{
	for (size_t i = 0; d->values && d->values[i]; i++)
		if (d->icase ? strcasecmp(value, d->values[i]) == 0 : strcmp(value, d->values[i]) == 0)
			return true;
	return false;
}

bool xl_absl_own_type(const struct xl_flagdef *d)
{
	bool is_signed;
	int bits;

	return d->reader && (int_reader(d, &is_signed, &bits) || xl_absl_reader_has(d, "duration") ||
			     xl_absl_reader_has(d, "enum") || xl_absl_reader_has(d, "enum-icase"));
}

const char *xl_absl_own_error(const struct xl_flagdef *d, const char *value)
{
	bool is_signed;
	int bits;

	if (!*value && xl_absl_reader_has(d, "optional"))
		return NULL;
	if (strcmp(value, "auto") == 0 && xl_absl_reader_has(d, "auto"))
		return NULL;
	if (int_reader(d, &is_signed, &bits))
		return xl_absl_int_in(value, is_signed, bits) ? NULL
			: xl_absl_int_in(value, true, 64) || (!is_signed && xl_absl_int_in(value, false, 64))
			? "out of the range of the flag's integer type" : "not an integer (libtpu takes no unit)";
	if (xl_absl_reader_has(d, "duration"))
		return absl_duration(value) ? NULL : "not a duration (a number with a unit: ns, us, ms, s, m, h)";
	return enum_takes(d, value) ? NULL : "not one of the values libtpu takes";
}

char *xl_absl_accepted(const struct xl_flagdef *d)
{
	struct xl_buf b = XL_BUF_INIT;
	bool is_signed;
	int bits;

	if (int_reader(d, &is_signed, &bits))
		xl_buf_addf(&b, "an integer from %s to %s",
			    !is_signed ? "0" : bits == 16 ? "-32768" : bits == 32 ? "-2147483648" : "-9223372036854775808",
			    !is_signed ? (bits == 16 ? "65535" : bits == 32 ? "4294967295" : "18446744073709551615")
				       : bits == 16 ? "32767" : bits == 32 ? "2147483647" : "9223372036854775807");
	else if (xl_absl_reader_has(d, "duration"))
		xl_buf_adds(&b, "a duration with its unit (such as 30s, 100ms, 1.5h; ns, us, ms, s, m, h) or 0");
	else if (d->type == XL_FT_ENUM) {
		size_t n = 0;

		while (d->values && d->values[n])
			n++;
		for (size_t i = 0; i < n; i++)
			xl_buf_addf(&b, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", d->values[i]);
		if (d->icase)
			xl_buf_adds(&b, " (in any case)");
	} else {
		xl_buf_release(&b);
		return NULL;
	}
	if (xl_absl_reader_has(d, "auto"))
		xl_buf_adds(&b, ", or auto");
	if (xl_absl_reader_has(d, "optional"))
		xl_buf_adds(&b, ", or nothing");
	return xl_buf_detach(&b);
}

