/* cmd-env.c - `xlaunch env PROFILE [-c CAND] [--format sh|json|dotenv|k8s]` */
#include "launcher/launcher.h"
#include "launcher/envfmt.h"

#include <getopt.h>
#include <stdlib.h>

static int cmd_env(struct xl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		XL_COMMON_LONGOPTS,
		{ "candidate", 1, NULL, 'c' },
		{ "format", 1, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	enum xl_env_format fmt = XL_FMT_SH;
	const char *cand = NULL;
	struct xl_profile *p;
	char *out;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:f:qv", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cand = optarg;
			break;
		case 'f':
			if (xl_env_format_parse(optarg, &fmt) < 0)
				return xl_usage_error(&xl_cmd_env, "--format takes sh, json, dotenv or k8s, not '%s'",
						      optarg);
			break;
		default:
			rc = xl_common_option(ctx, &xl_cmd_env, c, optarg);
			if (rc >= 0)
				return rc;
		}
	}
	if (ctx->json)
		fmt = XL_FMT_JSON;
	if (optind != argc - 1)
		return xl_usage_error(&xl_cmd_env, optind >= argc ? "a profile name is needed"
							       : "one profile at a time");
	rc = xl_profile_resolve(ctx, argv[optind], cand, 0, &p);
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
	return fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
}

const struct xl_cmd xl_cmd_env = {
	.name = "env",
	.usage = "PROFILE [-c CAND] [--format sh|json|dotenv|k8s]",
	.summary = "print the environment a profile gives a launch",
	.help =
		"Resolves PROFILE (and candidate CAND) and prints its managed variables.\n"
		"\n"
		"  -c, --candidate CAND  apply this candidate of the profile last\n"
		"  -f, --format FMT      sh (default; export/unset lines, safe to eval),\n"
		"                        json ({profile, candidate, env, unset, sources}),\n"
		"                        dotenv (NAME=\"value\"), k8s (a container env: list)\n"
		"  --json                the same as --format json\n",
	.run = cmd_env,
};
