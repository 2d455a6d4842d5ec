/* main.c - global options and the command table.
 *
 * A command is one file exporting one `struct xl_cmd` (cmd-NAME.c); it is
 * listed here once.  Lookup takes any unique prefix of a command name;
 * usage, help and usage errors come from the tables (common/cmd.c).
 */
#include "common/common.h"
#include "calib/calib.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const struct xl_cmd xl_cmd_env;
extern const struct xl_cmd xl_cmd_exec;
extern const struct xl_cmd xl_cmd_run;
extern const struct xl_cmd xl_cmd_profile;
extern const struct xl_cmd xl_cmd_flags;
extern const struct xl_cmd xl_cmd_probe;
extern const struct xl_cmd xl_cmd_calib;
extern const struct xl_cmd xl_cmd_bundle;
static const struct xl_cmd help_cmd;
static const struct xl_cmd version_cmd;

static const struct xl_cmd *const commands[] = {
	&xl_cmd_env,
	&xl_cmd_exec,
	&xl_cmd_run,
	&xl_cmd_profile,
	&xl_cmd_flags,
	&xl_cmd_probe,
	&xl_cmd_calib,
	&xl_cmd_bundle,
	&help_cmd,
	&version_cmd,
	NULL,
};

struct root_opts {
	bool version;
};

static const struct xl_opt root_options[] = {
	XL_OPTION_FLAG('V', "version", struct root_opts, version, "print the version"),
	XL_OPTION_END,
};

static const struct xl_cmd root = {
	.name = "xlaunch",
	.summary = "Runtime flag profiles and launch policy for XLA and CUDA training.",
	.synopsis = "[--store PATH] [--profile-path DIRS] [--json] [-q|-v]\n"
		    "[--color=auto|always|never] COMMAND [ARGS...]",
	.epilog = "Commands may be shortened to any unique prefix.\n"
		  "'xlaunch help COMMAND' or 'xlaunch COMMAND --help' for details;\n"
		  "'xlaunch help exit-codes' for exit statuses; 'xlaunch help' ends with the\n"
		  "command that opens the manual page of this binary.\n",
	.options = root_options,
	XL_CMD_OPTS(struct root_opts, NULL),
	.subs = commands,
};

static const struct {
	int code;
	const char *name;
	const char *meaning;
} exit_codes[] = {
	{ 0, "ok", "success; for run and exec, the child exited 0" },
	{ 1, "no", "a check said no (bundle check incompatible, bundle match not all matching, profile diff found differences)" },
	{ 2, "empty", "a check had nothing to check (bundle check: no package of the ML lane was found, verdict empty); never a pass" },
	{ 64, "usage", "bad command line" },
	{ 65, "data", "bad profile or data (syntax, unknown key, type, cycle, unknown XLA flag)" },
	{ 66, "noinput", "profile, candidate (-c) or file not found" },
	{ 69, "unavailable", "backend unavailable (probe: a backend that is installed is not alive; run and exec: the Python the command names lacks the runtime the profile is for)" },
	{ 70, "software", "internal error" },
	{ 73, "cantcreat", "store cannot be created, opened or reached; exec and run: a cache directory cannot be created" },
	{ 77, "noperm", "refused by policy (timing, cache, ambient, bundle gate, known-bad flag; run: every candidate predicted infeasible)" },
	{ 78, "config", "configuration error (environment, search path)" },
	{ 79, "fail-on", "run --fail-on: the child exited 0, but the outcome is one --fail-on lists (compile-storm); or run --on-storm=stop ended a storm" },
	{ -1, "1-255", "run and exec: the child's own exit code" },
	{ -3, "126, 127", "run and exec: COMMAND was found but could not be run (126), or not found (127)" },
	{ -2, "128+N", "run and exec: the child was killed by signal N; run: 143 when a rank ended its child because another rank of its job died (peer-failed) and the child then exited 0" },
};

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

/* The manual page of this binary: beside its data directory as installed
 * (PREFIX/share/man/man1, the wheel's too), or built in its source tree
 * (build/rel, build/san).  Caller frees; NULL when none is there. */
static char *man_page(void)
{
	static const char *const rel[] = { "../man/man1/xlaunch.1", "build/rel/xlaunch.1",
					   "build/san/xlaunch.1" };
	char buf[PATH_MAX];

	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *p = xl_asprintf("%s/%s", xl_data_dir(), rel[i]);
		bool found = access(p, R_OK) == 0 && realpath(p, buf);

		free(p);
		if (found)
			return xl_strdup(buf);
	}
	return NULL;
}

static void print_man_hint(FILE *f)
{
	char *page = man_page();

	if (page)
		fprintf(f, "\nThe manual page: man -l %s\n", page);
	else
		fprintf(f, "\nThe manual page: man xlaunch (none beside this binary's data in %s; "
			"'make man' builds it in a source tree)\n", xl_data_dir());
	free(page);
}

/* `xlaunch help [COMMAND [SUBCOMMAND]]` prints what `xlaunch COMMAND
 * [SUBCOMMAND] --help` prints. */
static enum xl_exit cmd_help(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct xl_cmd *cmd = &root;
	char path[128] = "";

	(void)ctx;
	if (call->argc == 1 && strcmp(call->argv[0], "exit-codes") == 0) {
		print_exit_codes(stdout);
		return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
	}
	for (int i = 0; i < call->argc; i++) {
		const struct xl_cmd *sub;

		if (!cmd->subs)
			return xl_usage_error(call, "'%s' has no subcommands", path);
		sub = xl_cmd_find(cmd, path, call->argv[i]);
		if (!sub)
			return XL_EX_USAGE;
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s", *path ? " " : "",
			 sub->name);
		cmd = sub;
	}
	xl_cmd_help(cmd, path, stdout);
	if (cmd == &root)
		print_man_hint(stdout);
	return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
}

static const struct xl_cmd help_cmd = {
	.name = "help",
	.summary = "show help for xlaunch, a command, or the exit statuses",
	.operands = "[COMMAND] [SUBCOMMAND]",
	.synopsis = "[COMMAND [SUBCOMMAND] | exit-codes]",
	.run = cmd_help,
};

static enum xl_exit cmd_version(struct xl_ctx *ctx, const struct xl_call *call)
{
	(void)call;
	if (ctx->json) {
		json_t *j = json_pack("{s:s,s:s,s:s}", "version", XLAUNCH_VERSION, "data_dir",
				      xl_data_dir(), "data_dir_from", xl_data_dir_how());
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		puts(s);
		free(s);
		json_decref(j);
	} else {
		printf("xlaunch %s\n", XLAUNCH_VERSION);
		if (ctx->verbosity > 0)
			printf("data directory: %s (%s)\n", xl_data_dir(), xl_data_dir_how());
	}
	return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
}

static const struct xl_cmd version_cmd = {
	.name = "version",
	.summary = "print the version",
	.json = "{version, data_dir, data_dir_from}",
	.run = cmd_version,
};

int main(int argc, char **argv)
{
	struct root_opts o = { false };
	struct xl_ctx ctx;
	struct xl_call call;
	const struct xl_cmd *cmd;
	const char *nc = getenv("NO_COLOR");
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	/* jansson would read /dev/urandom for its hash seed; a launch needs no
	 * protection from hash flooding, and one read less */
	json_object_seed((size_t)getpid() * 2654435761u ^ (size_t)time(NULL));
	ctx.color = isatty(2) && !(nc && *nc);
	xl_color = ctx.color;
	ctx.store_path = getenv("XLAUNCH_STORE");
	if (ctx.store_path && !*ctx.store_path)
		ctx.store_path = NULL;
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
	rc = xl_cmd_parse(&root, "", &ctx, argc, argv, &o, &call);
	if (rc >= 0)
		return rc;
	if (o.version) {
		xl_call_release(&call);
		printf("xlaunch %s\n", XLAUNCH_VERSION);
		return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
	}
	if (!call.argc) {
		rc = xl_usage_error(&call, "missing command");
	} else if (!(cmd = xl_cmd_find(&root, "", call.argv[0]))) {
		rc = XL_EX_USAGE;
	} else {
		rc = xl_cmd_invoke(cmd, cmd->name, &ctx, call.argc, call.argv);
	}
	xl_call_release(&call);
	return rc;
}
