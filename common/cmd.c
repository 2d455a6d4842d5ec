/* cmd.c - the option parser, subcommand dispatch, and usage and help made
 * from the command tables (see common.h, "commands and options"). */
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRAP 79
#define MAX_OPTS 64

/* ---- the options every command takes ------------------------------------ */

enum common_id { C_HELP, C_JSON, C_STORE, C_PROFILE_PATH, C_COLOR, C_QUIET, C_VERBOSE };

static const struct {
	const char *name;
	char short_name;
	bool value;       /* takes a value */
	bool optional;    /* the value is optional */
} common_opts[] = {
	[C_HELP] = { "help", 'h', false, false },
	[C_JSON] = { "json", 0, false, false },
	[C_STORE] = { "store", 0, true, false },
	[C_PROFILE_PATH] = { "profile-path", 0, true, false },
	[C_COLOR] = { "color", 0, true, true },
	[C_QUIET] = { "quiet", 'q', false, false },
	[C_VERBOSE] = { "verbose", 'v', false, false },
};
#define NCOMMON (sizeof(common_opts) / sizeof(common_opts[0]))

static const char common_help[] =
	"Common options: --json, -q/--quiet, -v/--verbose, --store PATH,\n"
	"  --profile-path DIRS, --color[=auto|always|never], -h/--help\n";

static bool color_from(const char *arg, bool *out)
{
	if (!arg || strcmp(arg, "always") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(arg, "never") == 0) {
		*out = false;
		return true;
	}
	if (strcmp(arg, "auto") == 0) {
		const char *nc = getenv("NO_COLOR");

		*out = isatty(2) && !(nc && *nc);
		return true;
	}
	return false;
}

/* ---- operands ------------------------------------------------------------- */

/* The operand counts a spec such as "SPEC VERSION..." or "[FILE]" allows;
 * max is INT_MAX for any number. */
static void operand_counts(const char *spec, int *min, int *max)
{
	int depth = 0;
	bool in_word = false;

	*min = *max = 0;
	for (const char *p = spec ? spec : ""; *p; p++) {
		if (*p == '[') {
			depth++;
			continue;
		}
		if (*p == ']') {
			depth--;
			continue;
		}
		if (*p == ' ') {
			in_word = false;
			continue;
		}
		if (*p == '.' && strncmp(p, "...", 3) == 0) {
			*max = INT_MAX;
			p += 2;
			continue;
		}
		if (!in_word) {
			in_word = true;
			if (*max < INT_MAX)
				(*max)++;
			if (depth == 0)
				(*min)++;
		}
	}
}

/* The name of operand i in spec ("PROFILE"), into buf. */
static const char *operand_name(const char *spec, int i, char *buf, size_t n)
{
	const char *last = NULL;
	size_t lastlen = 0;
	int k = 0;

	for (const char *p = spec ? spec : ""; *p;) {
		size_t len;

		while (*p == ' ' || *p == '[' || *p == ']')
			p++;
		len = strcspn(p, " []");
		if (!len)
			break;
		last = p;
		lastlen = len;
		if (k++ == i)
			break;
		p += len;
	}
	if (!last) {
		snprintf(buf, n, "operand");
		return buf;
	}
	if (lastlen >= 3 && strncmp(last + lastlen - 3, "...", 3) == 0)
		lastlen -= 3;
	snprintf(buf, n, "%.*s", (int)lastlen, last);
	return buf;
}

/* ---- usage and help ------------------------------------------------------- */

static size_t nopts(const struct xl_cmd *cmd)
{
	size_t n = 0;

	while (cmd->options && cmd->options[n].name)
		n++;
	return n;
}

/* "[-c CAND]", "[--retry[=CLASSES]]", "--outcome O". */
static void opt_synopsis(struct xl_buf *b, const struct xl_opt *o)
{
	bool req = o->flags & XL_OPTF_REQUIRED;

	if (!req)
		xl_buf_addc(b, '[');
	if (o->short_name && (o->flags & XL_OPTF_SHORT))
		xl_buf_addf(b, "-%c", o->short_name);
	else
		xl_buf_addf(b, "--%s", o->name);
	if (o->kind != XL_OPT_FLAG) {
		if (o->flags & XL_OPTF_OPTIONAL)
			xl_buf_addf(b, "[=%s]", o->arg ? o->arg : "VALUE");
		else
			xl_buf_addf(b, " %s", o->arg ? o->arg : "VALUE");
	}
	if (!req)
		xl_buf_addc(b, ']');
}

/* The synopsis after "xlaunch PATH ": operands, options, [--json], rest. */
static char *synopsis(const struct xl_cmd *cmd)
{
	struct xl_buf b = XL_BUF_INIT;

	if (cmd->synopsis)
		return xl_strdup(cmd->synopsis);
	if (cmd->subs) {
		xl_buf_adds(&b, "SUBCOMMAND ...");
		return xl_buf_detach(&b);
	}
	/* operands first, unless options must come before them */
	if (cmd->operands && !(cmd->flags & XL_CMD_OPERANDS_FROM_UNKNOWN))
		xl_buf_adds(&b, cmd->operands);
	for (size_t i = 0; cmd->options && cmd->options[i].name; i++) {
		if (b.len)
			xl_buf_addc(&b, ' ');
		opt_synopsis(&b, &cmd->options[i]);
	}
	if (cmd->json)
		xl_buf_adds(&b, b.len ? " [--json]" : "[--json]");
	if (cmd->operands && (cmd->flags & XL_CMD_OPERANDS_FROM_UNKNOWN))
		xl_buf_addf(&b, "%s%s", b.len ? " " : "", cmd->operands);
	if (cmd->rest)
		xl_buf_addf(&b, "%s-- %s", b.len ? " " : "", cmd->rest);
	return xl_buf_detach(&b);
}

/* Writes "LEAD SYN" wrapped at WRAP columns, between groups (a bracketed
 * group, or an option and the value after it), the continuation lines
 * indented under the first word of SYN. */
static void wrap_line(FILE *f, const char *lead, const char *syn)
{
	size_t indent = strlen(lead) + 1, col;
	const char *p = syn;

	if (indent > 40)
		indent = 8;
	col = (size_t)fprintf(f, "%s", lead);
	while (*p == ' ' || *p == '\n')
		p++;
	while (*p) {
		int depth = 0;
		size_t len = 0;

		for (;;) {
			char c = p[len];

			if (!c || ((c == ' ' || c == '\n') && depth == 0)) {
				/* "--outcome O": an option and its value stay together */
				if (c && p[0] == '-' && p[len + 1] >= 'A' && p[len + 1] <= 'Z' &&
				    !memchr(p, ' ', len)) {
					len++;
					continue;
				}
				break;
			}
			if (c == '[' || c == '(')
				depth++;
			else if ((c == ']' || c == ')') && depth > 0)
				depth--;
			len++;
		}
		if (col + 1 + len > WRAP && col > indent) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else {
			fputc(' ', f);
			col++;
		}
		for (size_t k = 0; k < len; k++)
			fputc(p[k] == '\n' ? ' ' : p[k], f);
		col += len;
		p += len;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	fputc('\n', f);
}

static void usage_of(const struct xl_cmd *cmd, const char *path, const char *word, FILE *f)
{
	char *syn = synopsis(cmd);
	char *lead = xl_asprintf("%s xlaunch%s%s", word, *path ? " " : "", path);

	wrap_line(f, lead, syn);
	free(lead);
	free(syn);
}

void xl_cmd_usage(const struct xl_cmd *cmd, const char *path, FILE *f)
{
	if (!cmd->subs || cmd->synopsis) {
		usage_of(cmd, path, "usage:", f);
		return;
	}
	for (size_t i = 0; cmd->subs[i]; i++) {
		char *sub = xl_asprintf("%s %s", path, cmd->subs[i]->name);

		usage_of(cmd->subs[i], sub, i ? "      " : "usage:", f);
		free(sub);
	}
}

/* Prints text with the cursor at column indent, word-wrapped at WRAP
 * columns (a newline in text is a space: tables may break their strings
 * anywhere), every line after the first indented to indent. */
static void print_indented(FILE *f, const char *text, size_t indent)
{
	size_t col = indent;
	bool first_word = true;

	for (const char *p = text; *p;) {
		size_t len;

		if (*p == ' ' || *p == '\n') {
			p++;
			continue;
		}
		len = strcspn(p, " \n");
		if (!first_word && col + 1 + len > WRAP) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first_word) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)len, p);
		col += len;
		first_word = false;
		p += len;
	}
	fputc('\n', f);
}

static char *opt_left(const struct xl_opt *o)
{
	struct xl_buf b = XL_BUF_INIT;

	if (o->short_name)
		xl_buf_addf(&b, "-%c, ", o->short_name);
	xl_buf_addf(&b, "--%s", o->name);
	if (o->kind != XL_OPT_FLAG) {
		if (o->flags & XL_OPTF_OPTIONAL)
			xl_buf_addf(&b, "[=%s]", o->arg ? o->arg : "VALUE");
		else
			xl_buf_addf(&b, " %s", o->arg ? o->arg : "VALUE");
	}
	return xl_buf_detach(&b);
}

static void print_options(const struct xl_cmd *cmd, FILE *f)
{
	size_t n = nopts(cmd), width = 0;
	char *left[MAX_OPTS + 1];

	if (!n && !cmd->json)
		return;
	for (size_t i = 0; i < n && i < MAX_OPTS; i++) {
		left[i] = opt_left(&cmd->options[i]);
		if (strlen(left[i]) > width)
			width = strlen(left[i]);
	}
	if (cmd->json && width < 6)
		width = 6;
	if (width > 24)
		width = 24;
	fprintf(f, "\nOptions:\n");
	for (size_t i = 0; i <= n && i <= MAX_OPTS; i++) {
		const char *l = i < n ? left[i] : "--json";
		const char *h = i < n ? cmd->options[i].help : cmd->json;

		if (i == n && !cmd->json)
			break;
		if (strlen(l) > width)
			fprintf(f, "  %s\n%*s", l, (int)width + 4, "");
		else
			fprintf(f, "  %-*s  ", (int)width, l);
		print_indented(f, h ? h : "", width + 4);
		if (i < n)
			free(left[i]);
	}
}

void xl_cmd_help(const struct xl_cmd *cmd, const char *path, FILE *f)
{
	xl_cmd_usage(cmd, path, f);
	fprintf(f, "\n%s\n", cmd->summary);
	if (cmd->help && *cmd->help)
		fprintf(f, "\n%s", cmd->help);
	print_options(cmd, f);
	if (cmd->subs) {
		size_t w = 0;

		for (size_t i = 0; cmd->subs[i]; i++)
			if (strlen(cmd->subs[i]->name) > w)
				w = strlen(cmd->subs[i]->name);
		fprintf(f, "\n%s (any unique prefix; 'xlaunch help %s%sNAME' for details):\n",
			*path ? "Subcommands" : "Commands", path, *path ? " " : "");
		for (size_t i = 0; cmd->subs[i]; i++) {
			fprintf(f, "  %-*s  ", (int)w, cmd->subs[i]->name);
			print_indented(f, cmd->subs[i]->summary, w + 4);
		}
	}
	if (cmd->epilog && *cmd->epilog)
		fprintf(f, "\n%s", cmd->epilog);
	if (*path)
		fprintf(f, "\n%s", common_help);
}

/* "xlaunch PATH: MESSAGE" and the usage lines on stderr. */
static int vusage(const struct xl_cmd *cmd, const char *path, const char *fmt, va_list ap)
{
	struct xl_buf b = XL_BUF_INIT;

	if (xl_verbosity < -1)
		return XL_EX_USAGE;
	xl_buf_addf(&b, "xlaunch%s%s: ", *path ? " " : "", path);
	xl_buf_vaddf(&b, fmt, ap);
	xl_buf_addc(&b, '\n');
	fwrite(b.buf, 1, b.len, stderr);
	xl_buf_release(&b);
	xl_cmd_usage(cmd, path, stderr);
	fflush(stderr);
	return XL_EX_USAGE;
}

static int usage(const struct xl_cmd *cmd, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int usage(const struct xl_cmd *cmd, const char *path, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vusage(cmd, path, fmt, ap);
	va_end(ap);
	return rc;
}

enum xl_exit xl_usage_error(const struct xl_call *call, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vusage(call->cmd, call->path, fmt, ap);
	va_end(ap);
	return XL_EX_USAGE;
}

/* ---- the parser ------------------------------------------------------------- */

struct parser {
	const struct xl_cmd *cmd;
	const char *path;
	struct xl_ctx *ctx;
	void *opts;
	struct xl_call *call;
	size_t n;                 /* options of the command */
	bool exact;               /* XL_CMD_OPERANDS_FROM_UNKNOWN */
};

/* An option found: the command's own (index >= 0) or a common one. */
struct found {
	int own;                  /* index into cmd->options, or -1 */
	int common;               /* index into common_opts, or -1 */
};

static bool takes_value(const struct parser *ps, struct found f)
{
	if (f.own >= 0)
		return ps->cmd->options[f.own].kind != XL_OPT_FLAG;
	return common_opts[f.common].value;
}

static bool value_optional(const struct parser *ps, struct found f)
{
	if (f.own >= 0)
		return ps->cmd->options[f.own].flags & XL_OPTF_OPTIONAL;
	return common_opts[f.common].optional;
}

static const char *long_name(const struct parser *ps, struct found f)
{
	return f.own >= 0 ? ps->cmd->options[f.own].name : common_opts[f.common].name;
}

/* Looks up a long name (len bytes of s): 0 found, -1 unknown, -2 ambiguous
 * (an exact match wins; prefixes only when allowed). */
static int find_long(const struct parser *ps, const char *s, size_t len, struct found *out)
{
	int hits = 0;

	out->own = out->common = -1;
	for (size_t i = 0; i < ps->n; i++)
		if (strlen(ps->cmd->options[i].name) == len &&
		    strncmp(ps->cmd->options[i].name, s, len) == 0) {
			out->own = (int)i;
			return 0;
		}
	for (size_t i = 0; i < NCOMMON; i++)
		if (strlen(common_opts[i].name) == len && strncmp(common_opts[i].name, s, len) == 0) {
			out->common = (int)i;
			return 0;
		}
	if (ps->exact || !len)
		return -1;
	for (size_t i = 0; i < ps->n; i++)
		if (strncmp(ps->cmd->options[i].name, s, len) == 0) {
			out->own = (int)i;
			hits++;
		}
	for (size_t i = 0; i < NCOMMON; i++)
		if (strncmp(common_opts[i].name, s, len) == 0) {
			out->common = (int)i;
			hits++;
		}
	if (hits > 1)
		return -2;
	if (hits == 1 && out->own >= 0)
		out->common = -1;
	return hits ? 0 : -1;
}

static bool find_short(const struct parser *ps, char c, struct found *out)
{
	out->own = out->common = -1;
	for (size_t i = 0; i < ps->n; i++)
		if (ps->cmd->options[i].short_name == c) {
			out->own = (int)i;
			return true;
		}
	for (size_t i = 0; i < NCOMMON; i++)
		if (common_opts[i].short_name == c) {
			out->common = (int)i;
			return true;
		}
	return false;
}

static int unknown_long(const struct parser *ps, const char *s, size_t len)
{
	const char *names[MAX_OPTS + NCOMMON + 1];
	char *word = xl_strndup(s, len);
	const char *best;
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < ps->n && k < MAX_OPTS; i++)
		names[k++] = ps->cmd->options[i].name;
	for (size_t i = 0; i < NCOMMON; i++)
		names[k++] = common_opts[i].name;
	names[k] = NULL;
	best = xl_did_you_mean(word, names);
	if (best)
		rc = usage(ps->cmd, ps->path, "unknown option '--%s'; did you mean '--%s'?", word, best);
	else
		rc = usage(ps->cmd, ps->path, "unknown option '--%s'", word);
	free(word);
	return rc;
}

static int ambiguous_long(const struct parser *ps, const char *s, size_t len)
{
	struct xl_buf b = XL_BUF_INIT;
	int rc;

	for (size_t i = 0; i < ps->n; i++)
		if (strncmp(ps->cmd->options[i].name, s, len) == 0)
			xl_buf_addf(&b, "%s--%s", b.len ? ", " : "", ps->cmd->options[i].name);
	for (size_t i = 0; i < NCOMMON; i++)
		if (strncmp(common_opts[i].name, s, len) == 0)
			xl_buf_addf(&b, "%s--%s", b.len ? ", " : "", common_opts[i].name);
	rc = usage(ps->cmd, ps->path, "ambiguous option '--%.*s' (could be %s)", (int)len, s,
		   xl_buf_str(&b));
	xl_buf_release(&b);
	return rc;
}

static bool parse_count(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return *s && !*end && !errno;
}

/* What a good value of o is, for the error message. */
static void what_of(const struct xl_opt *o, char *buf, size_t n)
{
	if (o->what) {
		snprintf(buf, n, "%s", o->what);
		return;
	}
	switch (o->kind) {
	case XL_OPT_DURATION:
		snprintf(buf, n, "a duration (e.g. 90s, 30m, 12h)");
		break;
	case XL_OPT_BYTES:
		snprintf(buf, n, "a byte size (e.g. 512M, 8GiB)");
		break;
	case XL_OPT_COUNT:
		if ((o->flags & XL_OPTF_RANGE) && o->max < 9.2e18)
			snprintf(buf, n, "a whole number from %.0f to %.0f", o->min, o->max);
		else if ((o->flags & XL_OPTF_RANGE) && o->min != 0)
			snprintf(buf, n, "a whole number from %.0f", o->min);
		else
			snprintf(buf, n, "a whole number");
		break;
	default:
		snprintf(buf, n, "a valid value");
		break;
	}
}

static bool in_range(const struct xl_opt *o, double v)
{
	if (!(o->flags & XL_OPTF_RANGE))
		return true;
	if (o->flags & XL_OPTF_ABOVE_MIN ? !(v > o->min) : !(v >= o->min))
		return false;
	return v <= o->max;
}

/* Stores the value of the command's option i. */
static int store(struct parser *ps, size_t i, const char *value)
{
	const struct xl_opt *o = &ps->cmd->options[i];
	char *field = (char *)ps->opts + o->offset;
	bool ok = true;

	switch (o->kind) {
	case XL_OPT_FLAG:
		*(bool *)field = true;
		break;
	case XL_OPT_STRING:
		*(const char **)field = value;
		break;
	case XL_OPT_DURATION: {
		double d;

		ok = xl_parse_duration(value, &d) && in_range(o, d);
		if (ok)
			*(double *)field = d;
		break;
	}
	case XL_OPT_BYTES: {
		uint64_t u;

		ok = xl_parse_bytes(value, &u) && in_range(o, (double)u);
		if (ok)
			*(uint64_t *)field = u;
		break;
	}
	case XL_OPT_COUNT: {
		long long v;

		ok = parse_count(value, &v) &&
		     (o->flags & XL_OPTF_RANGE ? in_range(o, (double)v) : v >= 0);
		if (ok)
			*(long long *)field = v;
		break;
	}
	case XL_OPT_CALLBACK:
		ok = o->parse(value, field);
		break;
	}
	if (!ok) {
		char what[200];

		what_of(o, what, sizeof(what));
		return usage(ps->cmd, ps->path, "option '--%s': '%s' is not %s", o->name,
			     value ? value : "", what);
	}
	if (i < 64)
		ps->call->seen |= 1ull << i;
	return -1;
}

static int apply_common(struct parser *ps, size_t i, const char *value)
{
	struct xl_ctx *ctx = ps->ctx;

	switch ((enum common_id)i) {
	case C_HELP:
		xl_cmd_help(ps->cmd, ps->path, stdout);
		return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
	case C_JSON:
		ctx->json = true;
		break;
	case C_STORE:
		ctx->store_path = value;
		break;
	case C_PROFILE_PATH:
		ctx->profile_path = value;
		break;
	case C_COLOR:
		if (!color_from(value, &ctx->color))
			return usage(ps->cmd, ps->path,
				     "option '--color': '%s' is not auto, always or never", value);
		xl_color = ctx->color;
		break;
	case C_QUIET:
		ctx->verbosity = -1;
		xl_verbosity = -1;
		break;
	case C_VERBOSE:
		if (ctx->verbosity < 0)
			ctx->verbosity = 0;
		ctx->verbosity++;
		xl_verbosity = ctx->verbosity;
		break;
	}
	return -1;
}

static int apply(struct parser *ps, struct found f, const char *value)
{
	if (f.own >= 0)
		return store(ps, (size_t)f.own, value);
	return apply_common(ps, (size_t)f.common, value);
}

/* One "--name[=value]" word at argv[*i]; may take argv[*i + 1].  Returns -1
 * to go on, -3 when the word is not an option (exact mode), or an exit code. */
static int long_option(struct parser *ps, int argc, char **argv, int *i)
{
	const char *s = argv[*i] + 2;
	const char *eq = strchr(s, '=');
	size_t len = eq ? (size_t)(eq - s) : strlen(s);
	struct found f;
	int r = find_long(ps, s, len, &f);

	if (r == -1 && ps->exact)
		return -3;
	if (r == -1)
		return unknown_long(ps, s, len);
	if (r == -2)
		return ambiguous_long(ps, s, len);
	if (!takes_value(ps, f)) {
		if (eq)
			return usage(ps->cmd, ps->path, "option '--%s' takes no value", long_name(ps, f));
		return apply(ps, f, NULL);
	}
	if (eq)
		return apply(ps, f, eq + 1);
	if (value_optional(ps, f))
		return apply(ps, f, NULL);
	if (*i + 1 >= argc)
		return usage(ps->cmd, ps->path, "option '--%s' needs a value", long_name(ps, f));
	(*i)++;
	return apply(ps, f, argv[*i]);
}

/* One "-abc" word (a cluster; the first option with a value takes the rest
 * of the word or the next one). */
static int short_options(struct parser *ps, int argc, char **argv, int *i)
{
	const char *w = argv[*i];

	if (ps->exact) {
		struct found f;

		if (strlen(w) != 2 || !find_short(ps, w[1], &f))
			return -3;
	}
	for (size_t k = 1; w[k]; k++) {
		struct found f;
		int r;

		if (!find_short(ps, w[k], &f))
			return usage(ps->cmd, ps->path, "unknown option '-%c'", w[k]);
		if (!takes_value(ps, f) || value_optional(ps, f)) {
			r = apply(ps, f, NULL);
			if (r >= 0)
				return r;
			continue;
		}
		if (w[k + 1])
			return apply(ps, f, w + k + 1);
		if (*i + 1 >= argc)
			return usage(ps->cmd, ps->path, "option '--%s' needs a value", long_name(ps, f));
		(*i)++;
		return apply(ps, f, argv[*i]);
	}
	return -1;
}

int xl_cmd_parse(const struct xl_cmd *cmd, const char *path, struct xl_ctx *ctx, int argc,
		 char **argv, void *opts, struct xl_call *call)
{
	struct parser ps = { cmd, path, ctx, opts, call, nopts(cmd), false };
	int min, max, i, rc = -1;
	bool stop_at_operand = cmd->subs != NULL;
	bool only_operands = false;

	ps.exact = cmd->flags & XL_CMD_OPERANDS_FROM_UNKNOWN;
	memset(call, 0, sizeof(*call));
	call->cmd = cmd;
	call->path = path;
	call->opts = opts;
	/* NULL-ended, as argv is: a rest taken from it goes to execvp */
	call->argv = xl_calloc((size_t)(argc > 0 ? argc : 0) + 1, sizeof(char *));
	operand_counts(cmd->operands, &min, &max);
	if (stop_at_operand)
		max = INT_MAX;
	for (i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (!only_operands && strcmp(w, "--") == 0) {
			if (cmd->rest && call->argc >= min) {
				i++;
				break;
			}
			only_operands = true;
			continue;
		}
		if (!only_operands && w[0] == '-' && w[1]) {
			rc = w[1] == '-' ? long_option(&ps, argc, argv, &i)
					 : short_options(&ps, argc, argv, &i);
			if (rc == -3) {
				/* the first word that is not an option: operands from here */
				only_operands = true;
				rc = -1;
			} else {
				if (rc >= 0)
					goto out;
				continue;
			}
		}
		/* an operand */
		if (stop_at_operand) {
			call->argv[call->argc++] = argv[i];
			i++;
			/* a parent hands the rest to its subcommand as it is */
			while (i < argc)
				call->argv[call->argc++] = argv[i++];
			break;
		}
		if (cmd->rest && call->argc >= max)
			break;
		if (ps.exact)
			only_operands = true;
		call->argv[call->argc++] = argv[i];
	}
	if (cmd->rest && i < argc) {
		call->restc = argc - i;
		call->restv = argv + i;
	}
	for (size_t k = 0; k < ps.n; k++) {
		if ((cmd->options[k].flags & XL_OPTF_REQUIRED) && !(call->seen & (1ull << k))) {
			rc = usage(cmd, path, "missing option '--%s'", cmd->options[k].name);
			goto out;
		}
	}
	if (stop_at_operand)
		return -1;
	if (call->argc < min) {
		char name[64];

		rc = usage(cmd, path, "missing %s",
			   operand_name(cmd->operands, call->argc, name, sizeof(name)));
		goto out;
	}
	if (call->argc > max) {
		rc = usage(cmd, path, "unexpected argument '%s'", call->argv[max]);
		goto out;
	}
	return -1;
out:
	xl_call_release(call);
	return rc;
}

void xl_call_release(struct xl_call *call)
{
	free(call->argv);
	call->argv = NULL;
	call->argc = 0;
}

bool xl_call_seen(const struct xl_call *call, const char *name)
{
	for (size_t i = 0; call->cmd->options && call->cmd->options[i].name && i < 64; i++)
		if (strcmp(call->cmd->options[i].name, name) == 0)
			return call->seen & (1ull << i);
	return false;
}

/* ---- dispatch ------------------------------------------------------------------ */

int xl_lookup_prefix(const char *word, const char *const *names, size_t n)
{
	size_t wl = strlen(word);
	int found = -1;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], word) == 0)
			return (int)i;
	}
	if (!wl)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(names[i], word, wl) == 0) {
			if (found >= 0)
				return -2;
			found = (int)i;
		}
	}
	return found;
}

const struct xl_cmd *xl_cmd_find(const struct xl_cmd *parent, const char *path,
				 const char *word)
{
	const char *names[MAX_OPTS + 1];
	size_t n = 0;
	int i;

	for (; parent->subs && parent->subs[n] && n < MAX_OPTS; n++)
		names[n] = parent->subs[n]->name;
	names[n] = NULL;
	i = xl_lookup_prefix(word, names, n);
	if (i >= 0)
		return parent->subs[i];
	if (xl_verbosity < -1)
		return NULL;
	if (i == -2) {
		struct xl_buf b = XL_BUF_INIT;

		for (size_t k = 0; k < n; k++)
			if (xl_startswith(names[k], word))
				xl_buf_addf(&b, "%s%s", b.len ? ", " : "", names[k]);
		xl_error("ambiguous command '%s%s%s' (could be %s)", path, *path ? " " : "", word,
			 xl_buf_str(&b));
		xl_buf_release(&b);
	} else {
		const char *best = xl_did_you_mean(word, names);

		if (best)
			xl_error("unknown command '%s%s%s'; did you mean '%s%s%s'?", path,
				 *path ? " " : "", word, path, *path ? " " : "", best);
		else
			xl_error("unknown command '%s%s%s'; see 'xlaunch help%s%s'", path,
				 *path ? " " : "", word, *path ? " " : "", path);
	}
	return NULL;
}

enum xl_exit xl_cmd_invoke(const struct xl_cmd *cmd, const char *path, struct xl_ctx *ctx,
			int argc, char **argv)
{
	struct xl_call call;
	void *opts = NULL;
	int rc;

	if (cmd->opts_size) {
		opts = xl_calloc(1, cmd->opts_size);
		if (cmd->opts_init)
			memcpy(opts, cmd->opts_init, cmd->opts_size);
	}
	rc = xl_cmd_parse(cmd, path, ctx, argc, argv, opts, &call);
	if (rc >= 0) {
		free(opts);
		return (enum xl_exit)rc;
	}
	if (cmd->subs) {
		const struct xl_cmd *sub;

		if (!call.argc) {
			rc = usage(cmd, path, "missing subcommand");
		} else if (!(sub = xl_cmd_find(cmd, path, call.argv[0]))) {
			xl_cmd_usage(cmd, path, stderr);
			rc = XL_EX_USAGE;
		} else {
			char *subpath = xl_asprintf("%s%s%s", path, *path ? " " : "", sub->name);

			rc = xl_cmd_invoke(sub, subpath, ctx, call.argc, call.argv);
			free(subpath);
		}
	} else {
		rc = cmd->run(ctx, &call);
	}
	xl_call_release(&call);
	free(opts);
	return (enum xl_exit)rc;
}
