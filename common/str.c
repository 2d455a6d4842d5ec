/* str.c - string predicates, edit distance, units and durations. */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

bool xl_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

const char *xl_signal_abbrev(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "HUP", [SIGINT] = "INT", [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
		[SIGTRAP] = "TRAP", [SIGABRT] = "ABRT", [SIGBUS] = "BUS", [SIGFPE] = "FPE",
		[SIGKILL] = "KILL", [SIGUSR1] = "USR1", [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
		[SIGPIPE] = "PIPE", [SIGALRM] = "ALRM", [SIGTERM] = "TERM", [SIGCHLD] = "CHLD",
		[SIGCONT] = "CONT", [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP", [SIGTTIN] = "TTIN",
		[SIGTTOU] = "TTOU", [SIGURG] = "URG", [SIGXCPU] = "XCPU", [SIGXFSZ] = "XFSZ",
		[SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH", [SIGIO] = "POLL",
		[SIGSYS] = "SYS",
#ifdef SIGSTKFLT
		[SIGSTKFLT] = "STKFLT",
#endif
#ifdef SIGPWR
		[SIGPWR] = "PWR",
#endif
	};

	if (sig <= 0 || (size_t)sig >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[sig];
}

bool xl_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool xl_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

size_t xl_edit_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b);

	if ((la > lb ? la - lb : lb - la) > max)
		return max + 1;
	if (la > 256 || lb > 256)
		return max + 1;
	size_t prev[257], cur[257];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t rowmin;

		cur[0] = i;
		rowmin = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) ==
				      tolower((unsigned char)b[j - 1]) ? 0 : 1;
			size_t v = prev[j - 1] + cost;

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			cur[j] = v;
			if (v < rowmin)
				rowmin = v;
		}
		if (rowmin > max)
			return max + 1;
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb] > max ? max + 1 : prev[lb];
}

const char *xl_did_you_mean(const char *word, const char *const *candidates)
{
	size_t len = strlen(word);
	size_t max = len <= 3 ? 1 : len <= 8 ? 2 : len / 4 + 1;
	const char *best = NULL;
	size_t bestd = max + 1;

	for (size_t i = 0; candidates && candidates[i]; i++) {
		size_t d = xl_edit_distance(word, candidates[i], max);

		if (d < bestd) {
			bestd = d;
			best = candidates[i];
		}
	}
	return best;
}

bool xl_valid_env_name(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* A finite, non-negative number at the very start of s (no space, no sign
 * before it) into *v; *end is what follows it. */
static bool leading_number(const char *s, double *v, char **end)
{
	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return false;
	errno = 0;
	*v = strtod(s, end);
	return *end != s && !errno && isfinite(*v) && *v >= 0;
}

/* R (0 <= R < 2^64) to the nearest integer, halves away from zero, without
 * libm (a launch parses byte sizes; see common/libm.c).  Below 2^52 the
 * fraction R - trunc(R) is exact; from there on every double is whole. */
static uint64_t round_u64(double r)
{
	uint64_t w = (uint64_t)r;

	return r - (double)w >= 0.5 ? w + 1 : w;
}

bool xl_parse_bytes(const char *s, uint64_t *out)
{
	static const struct { const char *sfx; double mul; } units[] = {
		{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
		{ "TiB", 1099511627776.0 }, { "KB", 1e3 }, { "MB", 1e6 },
		{ "GB", 1e9 }, { "TB", 1e12 }, { "K", 1024.0 }, { "M", 1048576.0 },
		{ "G", 1073741824.0 }, { "T", 1099511627776.0 }, { "B", 1.0 },
		{ "", 1.0 },
	};
	char *end;
	double v;

	if (!leading_number(s, &v, &end))
		return false;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].sfx) == 0) {
			double r = v * units[i].mul;

			if (r >= 18446744073709551615.0)
				return false;
			*out = round_u64(r);
			return true;
		}
	}
	return false;
}

bool xl_parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	if (!leading_number(s, &v, &end))
		return false;
	if (!*end || strcmp(end, "s") == 0)
		*out = v;
	else if (strcmp(end, "ms") == 0)
		*out = v / 1000.0;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		*out = v * 60.0;
	else if (strcmp(end, "h") == 0)
		*out = v * 3600.0;
	else
		return false;
	return true;
}

const char *xl_fmt_bytes(uint64_t v, char *buf, size_t n)
{
	static const char *const sfx[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	size_t i = 0;

	while (d >= 1024.0 && i + 1 < sizeof(sfx) / sizeof(sfx[0])) {
		d /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, n, "%.1f %s", d, sfx[i]);
	return buf;
}

void xl_json_str(struct xl_buf *b, const char *s)
{
	xl_buf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': xl_buf_adds(b, "\\\""); break;
		case '\\': xl_buf_adds(b, "\\\\"); break;
		case '\n': xl_buf_adds(b, "\\n"); break;
		case '\t': xl_buf_adds(b, "\\t"); break;
		case '\r': xl_buf_adds(b, "\\r"); break;
		default:
			if (*p < 0x20)
				xl_buf_addf(b, "\\u%04x", *p);
			else
				xl_buf_addc(b, (char)*p);
		}
	}
	xl_buf_addc(b, '"');
}
