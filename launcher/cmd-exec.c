/* cmd-exec.c - `xlaunch exec PROFILE [-c CAND] -- CMD [ARG...]`
 *
 * Resolves the profile and replaces this process with CMD: no supervision,
 * no record, nothing on the way that the launch does not need.
 */
#include "launcher/launcher.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int xl_parse_launch_args(const struct xl_cmd *cmd, struct xl_ctx *ctx, int argc, char **argv,
			 const char *shortopts, const struct option *opts,
			 int (*handle)(void *, int, const char *), void *arg,
			 const char **profile, int *cmd_index)
{
	int c, rc;

	*profile = NULL;
	*cmd_index = -1;
	/* options may come before and after PROFILE; "--" or the first word
	 * after PROFILE starts the command */
	while (optind < argc) {
		c = getopt_long(argc, argv, shortopts, opts, NULL);
		if (c == -1) {
			bool dashdash = optind > 0 && strcmp(argv[optind - 1], "--") == 0;

			if (!*profile && !dashdash && optind < argc) {
				*profile = argv[optind++];
				continue;
			}
			break;
		}
		if (handle && (rc = handle(arg, c, optarg)) != -1) {
			if (rc >= 0)
				return rc;
			continue;
		}
		rc = xl_common_option(ctx, cmd, c, optarg);
		if (rc >= 0)
			return rc;
		if (rc == -1)
			return xl_usage_error(cmd, "unexpected option");
	}
	if (!*profile)
		return xl_usage_error(cmd, "a profile name is needed");
	if (optind < argc)
		*cmd_index = optind;
	return -1;
}

static int exec_opt(void *arg, int c, const char *optarg)
{
	if (c != 'c')
		return -1;
	*(const char **)arg = optarg;
	return -2;
}

static int cmd_exec(struct xl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		XL_COMMON_LONGOPTS,
		{ "candidate", 1, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cand = NULL, *name;
	struct xl_profile *p;
	char **env;
	int rc, ci;

	rc = xl_parse_launch_args(&xl_cmd_exec, ctx, argc, argv, "+c:qv", opts, exec_opt, &cand,
				  &name, &ci);
	if (rc >= 0)
		return rc;
	if (ci < 0)
		return xl_usage_error(&xl_cmd_exec, "no command to run (put it after '--')");
	rc = xl_profile_resolve(ctx, name, cand, 0, &p);
	if (rc)
		return rc;
	rc = xl_profile_check(ctx, p);
	if (!rc)
		rc = xl_profile_bundle_gate(ctx, p);
	if (rc) {
		xl_profile_free(p);
		return rc;
	}
	for (size_t i = 0; i < p->notes.n; i++)
		xl_debug("%s", p->notes.v[i]);
	env = xl_profile_build_env(p, environ);
	environ = env;
	xl_apply_limits(&p->limits);
	execvp(argv[ci], argv + ci);
	rc = errno;
	xl_error("cannot run '%s': %s", argv[ci], strerror(rc));
	xl_profile_free(p);
	/* the shell's conventions: 127 not found, 126 found but not runnable */
	return rc == ENOENT ? 127 : 126;
}

const struct xl_cmd xl_cmd_exec = {
	.name = "exec",
	.usage = "PROFILE [-c CAND] -- COMMAND [ARG...]",
	.summary = "run a command in place with a profile's environment",
	.help =
		"Resolves PROFILE, applies its unset list, ambient policy and limits, sets\n"
		"its variables and replaces xlaunch with COMMAND (no shell, no supervision,\n"
		"no record).  The exit status is COMMAND's own; 127 when it cannot be\n"
		"found, 126 when it cannot be run.\n"
		"\n"
		"  -c, --candidate CAND  apply this candidate of the profile last\n",
	.run = cmd_exec,
};
