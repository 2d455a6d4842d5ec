/* main.c - global options and the command table.
 *
 * A command is one file exporting one `struct xl_cmd`; it is listed here
 * once.  Lookup takes any unique prefix of a command name.
 */
#include "common/common.h"
#include "launcher/launcher.h"
#include "calib/calib.h"
#include "bundle/bundle.h"
#include "probe/probe.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const struct xl_cmd xl_cmd_help;
extern const struct xl_cmd xl_cmd_version;

static const struct xl_cmd *const cmd_table[] = {
	&xl_cmd_env,
	&xl_cmd_exec,
	&xl_cmd_run,
	&xl_cmd_profile,
	&xl_cmd_flags,
	&xl_cmd_probe,
	&xl_cmd_calib,
	&xl_cmd_bundle,
	&xl_cmd_help,
	&xl_cmd_version,
};
#define NCMDS (sizeof(cmd_table) / sizeof(cmd_table[0]))

static const struct {
	int code;
	const char *name;
	const char *meaning;
} exit_codes[] = {
	{ 0, "ok", "success; for run and exec, the child exited 0" },
	{ 1, "no", "a check said no (bundle check incompatible, bundle match not all matching, profile diff found differences)" },
	{ 64, "usage", "bad command line" },
	{ 65, "data", "bad profile or data (syntax, unknown key, type, cycle, unknown XLA flag)" },
	{ 66, "noinput", "profile or file not found" },
	{ 69, "unavailable", "backend unavailable (probe: a backend that is installed is not alive)" },
	{ 70, "software", "internal error" },
	{ 73, "cantcreat", "store cannot be created or opened" },
	{ 77, "noperm", "refused by policy (timing, cache, ambient, bundle gate, known-bad flag)" },
	{ 78, "config", "configuration error (environment, search path)" },
	{ -1, "1-255", "run and exec: the child's own exit code" },
	{ -3, "126, 127", "run and exec: COMMAND was found but could not be run (126), or not found (127)" },
	{ -2, "128+N", "run and exec: the child was killed by signal N" },
};

static const struct xl_cmd *find_cmd(const char *name, bool report)
{
	const char *names[NCMDS];
	int i;

	for (size_t k = 0; k < NCMDS; k++)
		names[k] = cmd_table[k]->name;
	i = xl_lookup_prefix(name, names, NCMDS);
	if (i >= 0)
		return cmd_table[i];
	if (!report)
		return NULL;
	if (i == -2) {
		struct xl_buf b = XL_BUF_INIT;

		for (size_t k = 0; k < NCMDS; k++)
			if (xl_startswith(names[k], name))
				xl_buf_addf(&b, "%s%s", b.len ? ", " : "", names[k]);
		xl_error("ambiguous command '%s' (could be %s)", name, xl_buf_str(&b));
		xl_buf_release(&b);
	} else {
		const char *cands[NCMDS + 1];
		const char *best;

		memcpy(cands, names, sizeof(names));
		cands[NCMDS] = NULL;
		best = xl_did_you_mean(name, cands);
		if (best)
			xl_error("unknown command '%s'; did you mean '%s'?", name, best);
		else
			xl_error("unknown command '%s'; see 'xlaunch help'", name);
	}
	return NULL;
}

static void print_overview(FILE *f)
{
	fprintf(f, "usage: xlaunch [--store PATH] [--profile-path DIRS] [--json] [-q|-v]\n"
		   "               [--color=auto|always|never] COMMAND [ARGS...]\n\n"
		   "Runtime flag profiles and launch policy for XLA and CUDA training.\n\n"
		   "Commands:\n");
	for (size_t k = 0; k < NCMDS; k++)
		fprintf(f, "  %-9s %s\n", cmd_table[k]->name, cmd_table[k]->summary);
	fprintf(f, "\nCommands may be shortened to any unique prefix.\n"
		   "'xlaunch help COMMAND' or 'xlaunch COMMAND --help' for details;\n"
		   "'xlaunch help exit-codes' for exit statuses; 'man xlaunch' for everything.\n");
}

static void print_exit_codes(FILE *f)
{
	fprintf(f, "Exit statuses of xlaunch:\n\n");
	for (size_t k = 0; k < sizeof(exit_codes) / sizeof(exit_codes[0]); k++) {
		if (exit_codes[k].code >= 0)
			fprintf(f, "  %-6d %-12s %s\n", exit_codes[k].code, exit_codes[k].name,
				exit_codes[k].meaning);
		else
			fprintf(f, "  %-19s %s\n", exit_codes[k].name, exit_codes[k].meaning);
	}
}

/* Parses only the common options (for help and version). */
static int common_only(struct xl_ctx *ctx, const struct xl_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = { XL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int c, rc;

	while ((c = getopt_long(argc, argv, "qv", opts, NULL)) != -1) {
		rc = xl_common_option(ctx, cmd, c, optarg);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

static int cmd_help(struct xl_ctx *ctx, int argc, char **argv)
{
	const struct xl_cmd *c;
	int rc = common_only(ctx, &xl_cmd_help, argc, argv);

	if (rc >= 0)
		return rc;
	argv += optind - 1;
	argc -= optind - 1;
	if (argc < 2) {
		print_overview(stdout);
		return 0;
	}
	if (strcmp(argv[1], "exit-codes") == 0) {
		print_exit_codes(stdout);
		return 0;
	}
	c = find_cmd(argv[1], true);
	if (!c)
		return XL_EX_USAGE;
	xl_cmd_usage(c, stdout);
	return 0;
}

const struct xl_cmd xl_cmd_help = {
	.name = "help",
	.usage = "[COMMAND | exit-codes]",
	.summary = "show help for xlaunch, a command, or the exit statuses",
	.help = "",
	.run = cmd_help,
};

static int cmd_version(struct xl_ctx *ctx, int argc, char **argv)
{
	int rc = common_only(ctx, &xl_cmd_version, argc, argv);

	if (rc >= 0)
		return rc;
	if (optind < argc)
		return xl_usage_error(&xl_cmd_version, "'version' takes no arguments");
	if (ctx->json)
		printf("{\"version\": \"%s\"}\n", XLAUNCH_VERSION);
	else
		printf("xlaunch %s\n", XLAUNCH_VERSION);
	return 0;
}

const struct xl_cmd xl_cmd_version = {
	.name = "version",
	.usage = "[--json]",
	.summary = "print the version",
	.help = "",
	.run = cmd_version,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		XL_COMMON_LONGOPTS,
		{ "version", 0, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct xl_cmd top = {
		.name = "", .usage = "COMMAND [ARGS...]",
		.summary = "runtime flag profiles and launch policy", .help = "", .run = NULL,
	};
	struct xl_ctx ctx;
	const struct xl_cmd *cmd;
	const char *nc = getenv("NO_COLOR");
	int c;

	memset(&ctx, 0, sizeof(ctx));
	/* jansson would read /dev/urandom for its hash seed; a launch needs no
	 * protection from hash flooding, and one read less */
	json_object_seed((size_t)getpid() * 2654435761u ^ (size_t)time(NULL));
	ctx.color = isatty(2) && !(nc && *nc);
	xl_color = ctx.color;
	ctx.store_path = getenv("XLAUNCH_STORE");
	if (ctx.store_path && !*ctx.store_path)
		ctx.store_path = NULL;
	launcher_init_hooks();
	{
		const char *w = getenv("XLAUNCH_STORE_WAIT");
		double secs;

		if (w && *w) {
			if (!xl_parse_duration(w, &secs)) {
				xl_error("XLAUNCH_STORE_WAIT: '%s' is not a duration (e.g. 30s, 2m)", w);
				return XL_EX_CONFIG;
			}
			calib_set_wait(secs);
		}
	}

	/* global options stop at the command name */
	opterr = 1;
	while ((c = getopt_long(argc, argv, "+qvhV", opts, NULL)) != -1) {
		int r;

		if (c == 'h' || c == XL_OPT_HELP) {
			print_overview(stdout);
			return 0;
		}
		if (c == 'V') {
			printf("xlaunch %s\n", XLAUNCH_VERSION);
			return 0;
		}
		r = xl_common_option(&ctx, &top, c, optarg);
		if (r >= 0) {
			if (r == XL_EX_USAGE)
				return r;
			return r;
		}
	}
	if (optind >= argc) {
		print_overview(stderr);
		return XL_EX_USAGE;
	}
	cmd = find_cmd(argv[optind], true);
	if (!cmd)
		return XL_EX_USAGE;
	argv += optind;
	argc -= optind;
	optind = 0; /* full reset of getopt for the command's own parse */
	{
		/* getopt names the command in its messages */
		char *name = xl_asprintf("xlaunch %s", cmd->name);
		int rc;

		argv[0] = name;
		rc = cmd->run(&ctx, argc, argv);
		free(name);
		return rc;
	}
}
