/* cmd.c - option handling shared by every command, and subcommand dispatch. */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void xl_cmd_usage(const struct xl_cmd *cmd, FILE *f)
{
	const char *u = cmd->usage;

	fprintf(f, "usage: xlaunch %s ", cmd->name);
	/* continuation lines of a multi-line synopsis are indented */
	for (; *u; u++) {
		fputc(*u, f);
		/* a line starting with a space continues the one before; any
		 * other line is another form of the command */
		if (*u == '\n' && u[1] && u[1] != ' ')
			fprintf(f, "       xlaunch %s ", cmd->name);
		else if (*u == '\n' && u[1])
			fprintf(f, "       ");
	}
	fputc('\n', f);
	if (f == stdout) {
		fprintf(f, "\n%s\n", cmd->summary);
		if (cmd->help && *cmd->help)
			fprintf(f, "\n%s", cmd->help);
		fprintf(f, "\nCommon options: --json, -q/--quiet, -v/--verbose, --store PATH,\n"
			   "  --profile-path DIRS, --color[=auto|always|never], --help\n");
	}
}

int xl_usage_error(const struct xl_cmd *cmd, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	xl_error("%s", xl_buf_str(&b));
	xl_buf_release(&b);
	xl_cmd_usage(cmd, stderr);
	return XL_EX_USAGE;
}

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

int xl_common_option(struct xl_ctx *ctx, const struct xl_cmd *cmd, int c, const char *arg)
{
	switch (c) {
	case XL_OPT_HELP:
		xl_cmd_usage(cmd, stdout);
		return 0;
	case XL_OPT_JSON:
		ctx->json = true;
		return -2;
	case XL_OPT_STORE:
		ctx->store_path = arg;
		return -2;
	case XL_OPT_PROFILE_PATH:
		ctx->profile_path = arg;
		return -2;
	case XL_OPT_COLOR:
		if (!color_from(arg, &ctx->color))
			return xl_usage_error(cmd, "--color takes auto, always or never, not '%s'", arg);
		xl_color = ctx->color;
		return -2;
	case 'q':
		ctx->verbosity = -1;
		xl_verbosity = -1;
		return -2;
	case 'v':
		if (ctx->verbosity < 0)
			ctx->verbosity = 0;
		ctx->verbosity++;
		xl_verbosity = ctx->verbosity;
		return -2;
	case '?':
	case ':':
		/* getopt already said what was wrong */
		xl_cmd_usage(cmd, stderr);
		return XL_EX_USAGE;
	default:
		return -1;
	}
}

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

int xl_dispatch_sub(struct xl_ctx *ctx, const struct xl_cmd *cmd,
		    const struct xl_subcmd *subs, int argc, char **argv)
{
	const char *names[64] = { NULL };
	size_t n = 0;
	int i;

	if (argc < 2)
		return xl_usage_error(cmd, "'%s' needs a subcommand", cmd->name);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		xl_cmd_usage(cmd, stdout);
		return 0;
	}
	for (; subs[n].name && n < 64; n++)
		names[n] = subs[n].name;
	i = xl_lookup_prefix(argv[1], names, n);
	if (i == -2) {
		struct xl_buf b = XL_BUF_INIT;

		for (size_t j = 0; j < n; j++)
			if (xl_startswith(names[j], argv[1]))
				xl_buf_addf(&b, "%s%s", b.len ? ", " : "", names[j]);
		xl_error("ambiguous subcommand '%s %s' (could be %s)", cmd->name, argv[1],
			 xl_buf_str(&b));
		xl_buf_release(&b);
		return XL_EX_USAGE;
	}
	if (i < 0)
		return xl_usage_error(cmd, "unknown subcommand '%s %s'", cmd->name, argv[1]);
	{
		/* getopt names the command in its messages */
		char *name = xl_asprintf("xlaunch %s %s", cmd->name, subs[i].name);
		char *saved = argv[1];
		int rc;

		argv[1] = name;
		rc = subs[i].run(ctx, argc - 1, argv + 1);
		argv[1] = saved;
		free(name);
		return rc;
	}
}
