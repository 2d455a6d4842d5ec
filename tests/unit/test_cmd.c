/* test_cmd.c - the table-driven option parser, dispatch, and the usage and
 * help made from the tables (common/cmd.c). */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- capturing what a call prints ------------------------------------------------ */

struct capture {
	int fd;          /* 1 or 2 */
	int saved;
	char *path;
};

static void capture_start(struct capture *c, int fd)
{
	static int n;
	char name[32];
	int f;

	snprintf(name, sizeof(name), "capture-%d", n++);
	c->fd = fd;
	c->path = xl_test_path(name);
	fflush(fd == 1 ? stdout : stderr);
	c->saved = dup(fd);
	f = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(f >= 0);
	dup2(f, fd);
	close(f);
}

/* What was printed (caller frees). */
static char *capture_end(struct capture *c)
{
	char *text;

	fflush(c->fd == 1 ? stdout : stderr);
	dup2(c->saved, c->fd);
	close(c->saved);
	text = xl_read_file(c->path, NULL, 0);
	assert_non_null(text);
	free(c->path);
	return text;
}

/* ---- a command to parse for --------------------------------------------------------- */

struct opts {
	bool flag;
	const char *name;
	double secs;
	uint64_t size;
	long long count;
	int mode;       /* callback: 1 fast, 2 slow; 3 when given with no value */
};

static bool parse_mode(const char *value, void *field)
{
	if (!value) {
		*(int *)field = 3;
		return true;
	}
	if (strcmp(value, "fast") == 0 || strcmp(value, "slow") == 0) {
		*(int *)field = value[0] == 'f' ? 1 : 2;
		return true;
	}
	return false;
}

static const struct xl_opt options[] = {
	XL_OPTION_FLAG('f', "flag", struct opts, flag, "a flag"),
	XL_OPTION_STRING('n', "name", "NAME", struct opts, name, "a name"),
	XL_OPTION_DURATION(0, "timeout", "DUR", struct opts, secs, "a duration"),
	XL_OPTION_BYTES(0, "size", "BYTES", struct opts, size, "a size"),
	XL_OPTION_COUNT(0, "count", "N", struct opts, count, 1, 10, "a count"),
	{ .name = "mode", .kind = XL_OPT_CALLBACK, .arg = "MODE",
	  .offset = XL_FIELD(struct opts, mode, int), .flags = XL_OPTF_OPTIONAL,
	  .parse = parse_mode, .what = "fast or slow", .help = "a mode\nover two lines" },
	XL_OPTION_END,
};

static const struct opts defaults = { .count = 5 };

static struct {
	int calls;
	struct opts seen;
	int argc, restc;
	char *argv0, *rest0;
	bool json;
} last;

static enum xl_exit run_leaf(struct xl_ctx *ctx, const struct xl_call *call)
{
	last.calls++;
	last.seen = *(const struct opts *)call->opts;
	last.argc = call->argc;
	last.restc = call->restc;
	free(last.argv0);
	free(last.rest0);
	last.argv0 = call->argc ? xl_strdup(call->argv[0]) : NULL;
	last.rest0 = call->restc ? xl_strdup(call->restv[0]) : NULL;
	last.json = ctx->json;
	return call->argc == 2 ? XL_EX_FAIL : XL_EX_OK;
}

static const struct xl_cmd leaf = {
	.name = "leaf",
	.summary = "a command with every kind of option",
	.operands = "A [B]",
	.json = "what it prints",
	.help = "A description.\n",
	.epilog = "Exit status: 0, or 1 with two operands.\n",
	.options = options,
	XL_CMD_OPTS(struct opts, &defaults),
	.run = run_leaf,
};

static const struct xl_cmd launch = {
	.name = "launch",
	.summary = "operands, then a command",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.options = options,
	XL_CMD_OPTS(struct opts, &defaults),
	.run = run_leaf,
};

static const struct xl_cmd exact = {
	.name = "lint",
	.summary = "options end at the first word that is not one",
	.operands = "STRING...",
	.options = options,
	XL_CMD_OPTS(struct opts, &defaults),
	.run = run_leaf,
	.flags = XL_CMD_OPERANDS_FROM_UNKNOWN,
};

static const struct xl_cmd other = {
	.name = "list",
	.summary = "another subcommand",
	.run = run_leaf,
};

static const struct xl_cmd *const subs[] = { &leaf, &launch, &exact, &other, NULL };

static const struct xl_cmd parent = {
	.name = "top",
	.summary = "a parent",
	.epilog = "The end.\n",
	.subs = subs,
};

/* Parses words (NULL-ended, the command's name first) for cmd. */
static int parse(const struct xl_cmd *cmd, struct xl_ctx *ctx, struct opts *o,
		 struct xl_call *call, const char **words)
{
	char *argv[32];
	int argc = 0;

	while (words[argc]) {
		argv[argc] = (char *)words[argc];
		argc++;
	}
	argv[argc] = NULL;
	*o = defaults;
	memset(ctx, 0, sizeof(*ctx));
	return xl_cmd_parse(cmd, cmd->name, ctx, argc, argv, o, call);
}

#define WORDS(...) ((const char *[]){ __VA_ARGS__, NULL })

/* Parses words and expects a usage error whose message contains needle. */
static void expect_usage(const struct xl_cmd *cmd, const char **words, const char *needle)
{
	struct capture c;
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;
	char *err;

	capture_start(&c, 2);
	assert_int_equal(parse(cmd, &ctx, &o, &call, words), XL_EX_USAGE);
	err = capture_end(&c);
	if (!strstr(err, needle))
		fail_msg("'%s' not in: %s", needle, err);
	/* the usage line follows the message */
	assert_non_null(strstr(err, "\nusage: xlaunch "));
	free(err);
}

/* ---- the tests ---------------------------------------------------------------------- */

static void test_kinds(void **state)
{
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	assert_int_equal(parse(&leaf, &ctx, &o, &call,
			       WORDS("leaf", "--flag", "--name", "x", "--timeout=90s", "--size", "8GiB",
				     "--count", "7", "--mode=slow", "a")), -1);
	assert_true(o.flag);
	assert_string_equal(o.name, "x");
	assert_true(o.secs == 90);
	assert_int_equal(o.size, 8ull << 30);
	assert_int_equal(o.count, 7);
	assert_int_equal(o.mode, 2);
	assert_int_equal(call.argc, 1);
	assert_string_equal(call.argv[0], "a");
	assert_true(xl_call_seen(&call, "timeout"));
	assert_true(xl_call_seen(&call, "mode"));
	assert_false(xl_call_seen(&call, "nonexistent"));
	xl_call_release(&call);

	/* defaults stay; an optional value absent; nothing seen */
	assert_int_equal(parse(&leaf, &ctx, &o, &call, WORDS("leaf", "--mode", "a", "b")), -1);
	assert_int_equal(o.count, 5);
	assert_int_equal(o.mode, 3);
	assert_false(o.flag);
	assert_false(xl_call_seen(&call, "count"));
	assert_int_equal(call.argc, 2);
	xl_call_release(&call);
}

static void test_spellings(void **state)
{
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	/* clusters, -nVALUE, long prefixes, options after operands, "--" */
	assert_int_equal(parse(&leaf, &ctx, &o, &call,
			       WORDS("leaf", "a", "-fqnVAL", "--tim", "1m", "--", "-b")), -1);
	assert_true(o.flag);
	assert_string_equal(o.name, "VAL");
	assert_true(o.secs == 60);
	assert_int_equal(ctx.verbosity, -1);
	assert_int_equal(call.argc, 2);
	assert_string_equal(call.argv[1], "-b");
	xl_call_release(&call);
	xl_verbosity = -1;
	/* a value may start with '-'; "-" alone is an operand */
	assert_int_equal(parse(&leaf, &ctx, &o, &call, WORDS("leaf", "-n", "-x", "-")), -1);
	assert_string_equal(o.name, "-x");
	assert_string_equal(call.argv[0], "-");
	xl_call_release(&call);
}

static void test_common_options(void **state)
{
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	assert_int_equal(parse(&leaf, &ctx, &o, &call,
			       WORDS("leaf", "--json", "--store", "s.db", "--profile-path=p", "-vv",
				     "--color=never", "a")), -1);
	assert_true(ctx.json);
	assert_string_equal(ctx.store_path, "s.db");
	assert_string_equal(ctx.profile_path, "p");
	assert_int_equal(ctx.verbosity, 2);
	assert_false(ctx.color);
	xl_call_release(&call);
	xl_verbosity = -1;
	xl_color = false;
	expect_usage(&leaf, WORDS("leaf", "--color=sometimes", "a"),
		     "xlaunch leaf: option '--color': 'sometimes' is not auto, always or never");
}

static void test_usage_errors(void **state)
{
	(void)state;
	expect_usage(&leaf, WORDS("leaf", "--nmae", "x", "a"),
		     "xlaunch leaf: unknown option '--nmae'; did you mean '--name'?");
	expect_usage(&leaf, WORDS("leaf", "--zzzzzz", "a"), "xlaunch leaf: unknown option '--zzzzzz'\n");
	expect_usage(&leaf, WORDS("leaf", "-z", "a"), "xlaunch leaf: unknown option '-z'");
	expect_usage(&leaf, WORDS("leaf", "--c", "a"),
		     "xlaunch leaf: ambiguous option '--c' (could be --count, --color)");
	expect_usage(&leaf, WORDS("leaf", "a", "--name"), "xlaunch leaf: option '--name' needs a value");
	expect_usage(&leaf, WORDS("leaf", "a", "-n"), "xlaunch leaf: option '--name' needs a value");
	expect_usage(&leaf, WORDS("leaf", "--flag=yes", "a"),
		     "xlaunch leaf: option '--flag' takes no value");
	expect_usage(&leaf, WORDS("leaf", "--timeout", "soon", "a"),
		     "xlaunch leaf: option '--timeout': 'soon' is not a duration (e.g. 90s, 30m, 12h)");
	expect_usage(&leaf, WORDS("leaf", "--size", "lots", "a"),
		     "option '--size': 'lots' is not a byte size (e.g. 512M, 8GiB)");
	expect_usage(&leaf, WORDS("leaf", "--count", "11", "a"),
		     "option '--count': '11' is not a whole number from 1 to 10");
	expect_usage(&leaf, WORDS("leaf", "--count", "2x", "a"),
		     "option '--count': '2x' is not a whole number from 1 to 10");
	expect_usage(&leaf, WORDS("leaf", "--mode=medium", "a"),
		     "option '--mode': 'medium' is not fast or slow");
	expect_usage(&leaf, WORDS("leaf"), "xlaunch leaf: missing A\n");
	expect_usage(&leaf, WORDS("leaf", "a", "b", "c"), "xlaunch leaf: unexpected argument 'c'");
	expect_usage(&launch, WORDS("launch"), "xlaunch launch: missing PROFILE");
}

static void test_required(void **state)
{
	static const struct xl_opt req[] = {
		{ .name = "outcome", .kind = XL_OPT_STRING, .arg = "O",
		  .offset = XL_FIELD(struct opts, name, const char *), .flags = XL_OPTF_REQUIRED,
		  .help = "needed" },
		XL_OPTION_END,
	};
	static const struct xl_cmd cmd = {
		.name = "rec", .summary = "needs --outcome", .options = req,
		XL_CMD_OPTS(struct opts, NULL), .run = run_leaf,
	};
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	expect_usage(&cmd, WORDS("rec"), "xlaunch rec: missing option '--outcome'");
	assert_int_equal(parse(&cmd, &ctx, &o, &call, WORDS("rec", "--outcome", "ok")), -1);
	xl_call_release(&call);
}

static void test_rest(void **state)
{
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	/* options before and after PROFILE; the first word after it starts the rest */
	assert_int_equal(parse(&launch, &ctx, &o, &call,
			       WORDS("launch", "-f", "prof", "-n", "x", "python", "-c", "print()")), -1);
	assert_true(o.flag);
	assert_string_equal(o.name, "x");
	assert_int_equal(call.argc, 1);
	assert_string_equal(call.argv[0], "prof");
	assert_int_equal(call.restc, 3);
	assert_string_equal(call.restv[0], "python");
	assert_string_equal(call.restv[1], "-c");
	assert_null(call.restv[3]);
	xl_call_release(&call);
	/* "--" starts it too, even before an option-looking word */
	assert_int_equal(parse(&launch, &ctx, &o, &call, WORDS("launch", "prof", "--", "-n")), -1);
	assert_int_equal(call.restc, 1);
	assert_string_equal(call.restv[0], "-n");
	assert_null(o.name);
	xl_call_release(&call);
	/* no rest at all */
	assert_int_equal(parse(&launch, &ctx, &o, &call, WORDS("launch", "prof")), -1);
	assert_int_equal(call.restc, 0);
	xl_call_release(&call);
}

static void test_exact(void **state)
{
	struct xl_ctx ctx;
	struct xl_call call;
	struct opts o;

	(void)state;
	/* known options first; the first unknown word and all after are operands */
	assert_int_equal(parse(&exact, &ctx, &o, &call,
			       WORDS("lint", "--name", "V", "-f", "--xla_foo=1", "--flag", "-q")), -1);
	assert_string_equal(o.name, "V");
	assert_true(o.flag);
	assert_int_equal(ctx.verbosity, 0);
	assert_int_equal(call.argc, 3);
	assert_string_equal(call.argv[0], "--xla_foo=1");
	assert_string_equal(call.argv[2], "-q");
	xl_call_release(&call);
	/* no prefixes in this mode: "--fla" is the string */
	o.flag = false;
	assert_int_equal(parse(&exact, &ctx, &o, &call, WORDS("lint", "--fla")), -1);
	assert_false(o.flag);
	assert_string_equal(call.argv[0], "--fla");
	xl_call_release(&call);
	/* "--" ends the options */
	assert_int_equal(parse(&exact, &ctx, &o, &call, WORDS("lint", "--", "--flag")), -1);
	assert_false(o.flag);
	assert_string_equal(call.argv[0], "--flag");
	xl_call_release(&call);
	expect_usage(&exact, WORDS("lint", "--flag"), "xlaunch lint: missing STRING");
}

static void test_dispatch(void **state)
{
	struct xl_ctx ctx;
	struct capture c;
	char *argv[8], *err;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	last.calls = 0;
	/* a unique prefix finds the subcommand; its exit status comes back */
	argv[0] = "top", argv[1] = "le", argv[2] = "x", argv[3] = "y", argv[4] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 4, argv), XL_EX_FAIL);
	assert_int_equal(last.calls, 1);
	assert_int_equal(last.argc, 2);
	assert_string_equal(last.argv0, "x");
	/* common options before the subcommand */
	argv[1] = "--json", argv[2] = "leaf", argv[3] = "x", argv[4] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 4, argv), XL_EX_OK);
	assert_true(last.json);
	/* the rest of a subcommand keeps its words */
	argv[1] = "launch", argv[2] = "p", argv[3] = "--", argv[4] = "cmd", argv[5] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 5, argv), XL_EX_OK);
	assert_string_equal(last.rest0, "cmd");
	assert_int_equal(last.restc, 1);

	capture_start(&c, 2);
	argv[1] = "l", argv[2] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 2, argv), XL_EX_USAGE);
	argv[1] = "leef", argv[2] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 2, argv), XL_EX_USAGE);
	argv[1] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 1, argv), XL_EX_USAGE);
	err = capture_end(&c);
	assert_non_null(strstr(err, "xlaunch: ambiguous command 'top l' (could be leaf, launch, lint, list)"));
	assert_non_null(strstr(err, "xlaunch: unknown command 'top leef'; did you mean 'top leaf'?"));
	assert_non_null(strstr(err, "xlaunch top: missing subcommand"));
	free(err);
	assert_int_equal(last.calls, 3);
}

static void test_help(void **state)
{
	struct capture c;
	struct xl_ctx ctx;
	char *argv[4], *out, *line;

	(void)state;
	/* --help prints the help, runs nothing, exits 0 */
	memset(&ctx, 0, sizeof(ctx));
	last.calls = 0;
	capture_start(&c, 1);
	argv[0] = "top", argv[1] = "leaf", argv[2] = "--help", argv[3] = NULL;
	assert_int_equal(xl_cmd_invoke(&parent, "top", &ctx, 3, argv), XL_EX_OK);
	out = capture_end(&c);
	assert_int_equal(last.calls, 0);
	assert_true(xl_startswith(out, "usage: xlaunch top leaf A [B] [--flag] [--name NAME]"));
	assert_non_null(strstr(out, "\na command with every kind of option\n"));
	assert_non_null(strstr(out, "\nA description.\n"));
	assert_non_null(strstr(out, "\n  -f, --flag "));
	assert_non_null(strstr(out, "\n  --mode[=MODE] "));
	/* a table's line breaks are spaces: the help is wrapped to fit */
	assert_non_null(strstr(out, "a mode over two lines\n"));
	assert_non_null(strstr(out, "\n  --json "));
	assert_non_null(strstr(out, "Exit status: 0, or 1 with two operands."));
	assert_non_null(strstr(out, "Common options:"));
	/* no line is wider than 79 columns */
	for (line = out; *line;) {
		size_t len = strcspn(line, "\n");

		if (len > 79)
			fail_msg("a line of %zu columns: %.*s", len, (int)len, line);
		line += len + (line[len] == '\n');
	}
	free(out);

	/* a parent's help: every subcommand's usage and summary */
	capture_start(&c, 1);
	xl_cmd_help(&parent, "top", stdout);
	out = capture_end(&c);
	assert_true(xl_startswith(out, "usage: xlaunch top leaf A [B]"));
	assert_non_null(strstr(out, "\n       xlaunch top launch PROFILE "));
	assert_non_null(strstr(out, " -- COMMAND"));
	assert_non_null(strstr(out, "\n       xlaunch top list\n"));
	assert_non_null(strstr(out, "\n  list    another subcommand\n"));
	assert_non_null(strstr(out, "The end."));
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_common_options),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_rest),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_help),
	};
	int rc;

	rc = XL_TEST_RUN(tests, xl_test_dir_setup, xl_test_dir_teardown);
	free(last.argv0);
	free(last.rest0);
	return rc;
}
