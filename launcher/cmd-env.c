/* cmd-env.c - `xlaunch env PROFILE [-c CAND] [--format sh|json|dotenv|k8s]
 * [--set VAR=VALUE]...`
 *
 * Renders and creates nothing.  sh and json are this machine's launch: the
 * launching environment fills ${VAR} and the ambient policy applies.
 * dotenv and k8s are for another machine: this machine's environment is
 * never read, ${VAR} takes a --set value or its default, and the output
 * says which.
 */
#include "launcher/profile/profile.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SET 64

struct set_list {
	const char *v[MAX_SET + 1];   /* NAME=VALUE, pointing into argv; NULL-terminated */
	size_t n;
};

struct env_opts {
	const char *cand;
	enum xl_env_format format;
	struct set_list set;
};

static bool parse_format(const char *value, void *field)
{
	return xl_env_format_parse(value, field) == 0;
}

static bool parse_set(const char *value, void *field)
{
	struct set_list *s = field;
	const char *eq = strchr(value, '=');
	char name[256];

	if (!eq || eq == value || (size_t)(eq - value) >= sizeof(name) || s->n >= MAX_SET)
		return false;
	memcpy(name, value, (size_t)(eq - value));
	name[eq - value] = '\0';
	if (!xl_valid_env_name(name))
		return false;
	s->v[s->n++] = value;
	s->v[s->n] = NULL;
	return true;
}

static const struct xl_opt env_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct env_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "apply this candidate of the profile last" },
	XL_OPTION_CALLBACK('f', "format", "sh|json|dotenv|k8s", struct env_opts, format,
			   enum xl_env_format, parse_format, "sh, json, dotenv or k8s",
			   "sh (default; export/unset lines, safe to eval),\n"
			   "json ({profile, candidate, env, unset, sources, stripped}),\n"
			   "dotenv (NAME=\"value\"), k8s (a container env: list);\n"
			   "dotenv and k8s are rendered for another machine"),
	XL_OPTION_CALLBACK(0, "set", "VAR=VALUE", struct env_opts, set, struct set_list,
			   parse_set, "VAR=VALUE with a valid variable name (at most 64)",
			   "the value of ${VAR} in the profile (repeatable): for dotenv\n"
			   "and k8s the target machine's, else in place of this shell's"),
	XL_OPTION_END,
};

static enum xl_exit cmd_env(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct env_opts *o = call->opts;
	enum xl_env_format fmt = ctx->json ? XL_FMT_JSON : o->format;
	unsigned flags = fmt == XL_FMT_DOTENV || fmt == XL_FMT_K8S ? XL_RESOLVE_TARGET : 0;
	struct xl_profile *p;
	struct xl_runtime rt = { 0 };
	char *out;
	int rc;

	rc = xl_profile_resolve_set(ctx, call->argv[0], o->cand, flags,
				    o->set.n ? (char *const *)o->set.v : NULL, &p);
	if (rc)
		return rc;
	/* this machine's Python, as the profile's environment finds it;
	 * rendered for another machine, none (each family's newest known
	 * release) */
	if (!(flags & XL_RESOLVE_TARGET)) {
		xl_bundle_cache_readonly();     /* rendering creates nothing */
		xl_profile_detect_runtime(p, NULL, 0, &rt);
		p->runtime = &rt;
	}
	rc = xl_profile_check(ctx, p);
	if (rc) {
		xl_profile_free(p);
		xl_runtime_release(&rt);
		return rc;
	}
	for (size_t i = 0; i < p->notes.n; i++)
		xl_debug("%s", p->notes.v[i]);
	out = xl_env_render(p, fmt);
	fputs(out, stdout);
	free(out);
	xl_profile_free(p);
	xl_runtime_release(&rt);
	return fflush(stdout) == 0 ? XL_EX_OK : XL_EX_SOFTWARE;
}

const struct xl_cmd xl_cmd_env = {
	.name = "env",
	.summary = "print the environment a profile gives a launch",
	.operands = "PROFILE",
	.json = "the same as --format json",
	.help =
		"Resolves PROFILE (and candidate CAND) and prints its managed variables.\n"
		"Creates nothing: cache directories are made by exec and run.  sh and json\n"
		"show this machine's launch (${VAR} from this shell, ambient policy\n"
		"applied).  dotenv and k8s are for another machine: this shell is not\n"
		"read, ${VAR} takes a --set value or its default (an error without one),\n"
		"and comment lines say which.\n",
	.options = env_options,
	XL_CMD_OPTS(struct env_opts, NULL),
	.run = cmd_env,
};
