/* cmd-env.c - `xlaunch env PROFILE [-c CAND] [--format sh|json|dotenv|k8s]` */
#include "launcher/launcher.h"
#include "launcher/envfmt.h"

#include <stdlib.h>

struct env_opts {
	const char *cand;
	enum xl_env_format format;
};

static bool parse_format(const char *value, void *field)
{
	return xl_env_format_parse(value, field) == 0;
}

static const struct xl_opt env_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct env_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "apply this candidate of the profile last" },
	XL_OPTION_CALLBACK('f', "format", "sh|json|dotenv|k8s", struct env_opts, format,
			   enum xl_env_format, parse_format, "sh, json, dotenv or k8s",
			   "sh (default; export/unset lines, safe to eval),\n"
			   "json ({profile, candidate, env, unset, sources}),\n"
			   "dotenv (NAME=\"value\"), k8s (a container env: list)"),
	XL_OPTION_END,
};

static enum xl_exit cmd_env(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct env_opts *o = call->opts;
	enum xl_env_format fmt = ctx->json ? XL_FMT_JSON : o->format;
	struct xl_profile *p;
	char *out;
	int rc;

	rc = xl_profile_resolve(ctx, call->argv[0], o->cand, 0, &p);
	if (rc)
		return rc;
	rc = xl_profile_check(ctx, p);
	if (rc) {
		xl_profile_free(p);
		return rc;
	}
	for (size_t i = 0; i < p->notes.n; i++)
		xl_debug("%s", p->notes.v[i]);
	out = xl_env_render(p, fmt);
	fputs(out, stdout);
	free(out);
	xl_profile_free(p);
	return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
}

const struct xl_cmd xl_cmd_env = {
	.name = "env",
	.summary = "print the environment a profile gives a launch",
	.operands = "PROFILE",
	.json = "the same as --format json",
	.help = "Resolves PROFILE (and candidate CAND) and prints its managed variables.\n",
	.options = env_options,
	XL_CMD_OPTS(struct env_opts, NULL),
	.run = cmd_env,
};
