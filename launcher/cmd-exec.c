/* cmd-exec.c - `xlaunch exec PROFILE [-c CAND] -- CMD [ARG...]`
 *
 * Resolves the profile and replaces this process with CMD: no supervision,
 * no record, nothing on the way that the launch does not need.
 */
#include "launcher/profile/profile.h"
#include "bundle/bundle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

struct exec_opts {
	const char *cand;
	bool any_runtime;
	struct xl_override_list set, flag;
};

static const struct xl_opt exec_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct exec_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "apply this candidate of the profile last" },
	XL_OPTION_FLAG(0, "no-runtime-check", struct exec_opts, any_runtime,
		       "start COMMAND even when its Python lacks the profile's runtime"),
	XL_OPTION_CALLBACK(0, "set", "VAR=VALUE", struct exec_opts, set, struct xl_override_list,
			   xl_opt_override_set, "VAR=VALUE with a valid variable name (at most 64)",
			   "set VAR for this launch, after the profile and its candidate\n"
			   "(repeatable; checked, explained and signed as a profile's)"),
	XL_OPTION_CALLBACK(0, "flag", "VAR:NAME=VALUE", struct exec_opts, flag, struct xl_override_list,
			   xl_opt_override_flag, "VAR:NAME=VALUE, VAR one of XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS (at most 64)",
			   "set flag NAME of VAR (XLA_FLAGS, LIBTPU_INIT_ARGS, ...) for this\n"
			   "launch, as a profile's flags: section would (repeatable)"),
	XL_OPTION_END,
};

static enum xl_exit cmd_exec(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct exec_opts *o = call->opts;
	struct xl_profile *p;
	struct xl_runtime rt;
	char **env, **cmd;
	int rc, cmdc;

	if (!call->restc)
		return xl_usage_error(call, "no command to run (put it after '--')");
	xl_profile_set_overrides(o->set.v, o->set.n, o->flag.v, o->flag.n);
	rc = xl_profile_resolve(ctx, call->argv[0], o->cand, 0, &p);
	if (rc)
		return rc;
	/* the flags are judged against the release COMMAND will load, found
	 * with the environment it will get */
	xl_profile_detect_runtime(p, call->restv, call->restc, &rt);
	p->runtime = &rt;
	rc = xl_profile_check(ctx, p);
	if (!rc && !o->any_runtime)
		rc = xl_profile_runtime_check(p, &rt, "--no-runtime-check");
	if (!rc)
		rc = xl_profile_bundle_gate(ctx, p);
	if (!rc)
		rc = xl_profile_make_cache_dirs(p);
	if (rc) {
		xl_profile_free(p);
		xl_runtime_release(&rt);
		return rc;
	}
	xl_profile_report_ambient(p);
	for (size_t i = 0; i < p->notes.n; i++)
		xl_debug("%s", p->notes.v[i]);
	env = xl_profile_build_env(p, environ);
	/* one small file in each cache directory: a cache this launch will
	 * find cold is said before the command starts */
	xl_ck_before_launch(env, call->restv, p->name, NULL, &rt);
	environ = env;
	xl_apply_limits(&p->limits);
	/* the candidate's args follow the command's own */
	cmd = xl_profile_command(p, call->restv, call->restc, &cmdc);
	execvp(cmd[0], cmd);
	rc = errno;
	free(cmd);
	xl_error("cannot run '%s': %s", call->restv[0], strerror(rc));
	xl_profile_free(p);
	xl_runtime_release(&rt);
	/* the shell's conventions: 127 not found, 126 found but not runnable */
	return rc == ENOENT ? 127 : 126;
}

const struct xl_cmd xl_cmd_exec = {
	.name = "exec",
	.summary = "run a command in place with a profile's environment",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.help =
		"Resolves PROFILE, applies its unset list, ambient policy and limits, sets\n"
		"its variables and replaces xlaunch with COMMAND (no shell, no supervision,\n"
		"no record).  A candidate's args follow COMMAND's own arguments.\n",
	.epilog =
		"The exit status is COMMAND's own; 127 when it cannot be found, 126 when it\n"
		"cannot be run; 69 when the Python COMMAND names (itself or by its #!)\n"
		"lacks the runtime the profile is for (jax for JAX_PLATFORMS, torch_xla\n"
		"for PJRT_DEVICE; without either, any runtime whose variables it sets)\n"
		"and every other runtime the profile sets variables for, unless\n"
		"--no-runtime-check.\n",
	.options = exec_options,
	XL_CMD_OPTS(struct exec_opts, NULL),
	.run = cmd_exec,
};
