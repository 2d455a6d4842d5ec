/*
 * cmd-bundle.c - `xlaunch bundle show|check|compare|match`.
 */
#include "bundle/bundle.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

extern const struct xl_cmd xl_cmd_bundle;

/* Parses the options every bundle subcommand takes; *python and *matrix
 * receive --python and --matrix when allowed.  Returns -1 to go on, or an
 * exit code. */
static int parse_opts(struct xl_ctx *ctx, int argc, char **argv, const char **python,
		      const char **matrix)
{
	static const struct option opts[] = {
		XL_COMMON_LONGOPTS,
		{ "python", 1, NULL, 'p' },
		{ "matrix", 1, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "qv", opts, NULL)) != -1) {
		int r;

		if (c == 'p' && python) {
			*python = optarg;
			continue;
		}
		if (c == 'm' && matrix) {
			*matrix = optarg;
			continue;
		}
		if (c == 'p' || c == 'm')
			return xl_usage_error(&xl_cmd_bundle, "'%s' does not take --%s", argv[0],
					      c == 'p' ? "python" : "matrix");
		r = xl_common_option(ctx, &xl_cmd_bundle, c, optarg);
		if (r == -2)
			continue;
		if (r >= 0)
			return r;
	}
	return -1;
}

static int sub_compare(struct xl_ctx *ctx, int argc, char **argv)
{
	int r = parse_opts(ctx, argc, argv, NULL, NULL), cmp;

	if (r >= 0)
		return r;
	if (argc - optind != 2)
		return xl_usage_error(&xl_cmd_bundle, "'bundle compare' takes two versions");
	r = xl_version_compare_str(argv[optind], argv[optind + 1], &cmp);
	if (r < 0) {
		xl_error("version '%s': not a valid PEP 440 version", argv[optind + (r == -1 ? 0 : 1)]);
		return XL_EX_DATAERR;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:s,s:s,s:i}", "a", argv[optind], "b", argv[optind + 1],
				      "result", cmp);
		char *txt = json_dumps(o, 0);

		printf("%s\n", txt);
		free(txt);
		json_decref(o);
	} else
		printf("%d\n", cmp);
	return 0;
}

static int sub_match(struct xl_ctx *ctx, int argc, char **argv)
{
	struct xl_specset ss;
	struct xl_version *vs;
	char *err = NULL;
	int r = parse_opts(ctx, argc, argv, NULL, NULL), n;
	bool all = true;

	if (r >= 0)
		return r;
	if (argc - optind < 2)
		return xl_usage_error(&xl_cmd_bundle, "'bundle match' takes a specifier and at least one version");
	if (xl_specset_parse(argv[optind], strlen(argv[optind]), &ss, &err) < 0) {
		xl_error("specifier '%s': %s", argv[optind], err);
		free(err);
		return XL_EX_DATAERR;
	}
	n = argc - optind - 1;
	vs = xl_calloc((size_t)n, sizeof(*vs));
	for (int i = 0; i < n; i++) {
		const char *s = argv[optind + 1 + i];

		if (xl_version_parse(s, strlen(s), &vs[i]) < 0) {
			xl_error("version '%s': not a valid PEP 440 version", s);
			for (int j = 0; j < i; j++)
				xl_version_release(&vs[j]);
			free(vs);
			xl_specset_release(&ss);
			return XL_EX_DATAERR;
		}
	}
	if (ctx->json) {
		json_t *arr = json_array();
		char *txt;

		for (int i = 0; i < n; i++) {
			bool m = xl_specset_contains(&ss, &vs[i], argv[optind + 1 + i]);

			all = all && m;
			json_array_append_new(arr, json_pack("{s:s,s:s,s:b}", "version",
							     argv[optind + 1 + i], "normalized",
							     vs[i].norm, "match", m));
		}
		txt = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", txt);
		free(txt);
		json_decref(arr);
	} else {
		for (int i = 0; i < n; i++) {
			bool m = xl_specset_contains(&ss, &vs[i], argv[optind + 1 + i]);

			all = all && m;
			printf("%s\t%s\n", argv[optind + 1 + i], m ? "yes" : "no");
		}
	}
	for (int i = 0; i < n; i++)
		xl_version_release(&vs[i]);
	free(vs);
	xl_specset_release(&ss);
	return all ? 0 : XL_EX_FAIL;
}

static void print_json(json_t *doc)
{
	char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	printf("%s\n", txt);
	free(txt);
}

static int sub_show(struct xl_ctx *ctx, int argc, char **argv)
{
	const char *python = NULL;
	struct xl_pyenv env;
	struct xl_bundle_host host;
	json_t *doc, *x;
	size_t i;
	int r = parse_opts(ctx, argc, argv, &python, NULL);

	if (r >= 0)
		return r;
	if (optind < argc)
		return xl_usage_error(&xl_cmd_bundle, "'bundle show' takes no arguments");
	if ((r = xl_pyenv_open(python, &env)))
		return r;
	xl_bundle_host_read(&host);
	doc = xl_bundle_show_json(&env, &host, true);
	for (i = 0; i < env.broken.n; i++)
		xl_warn("unreadable metadata: %s", env.broken.v[i]);
	if (ctx->json) {
		print_json(doc);
	} else {
		json_t *py = json_object_get(doc, "python"), *cu = json_object_get(doc, "cuda");

		printf("python      %s %s (%s%s, from %s)\n",
		       json_string_value(json_object_get(py, "executable")),
		       json_string_value(json_object_get(py, "version")),
		       env.venv ? "venv " : "", env.prefix, env.source);
		printf("host        glibc %s, kernel %s, %s\n", host.glibc ? host.glibc : "?",
		       host.kernel ? host.kernel : "?", host.machine ? host.machine : "?");
		if (json_is_string(json_object_get(cu, "driver_api")))
			printf("cuda driver CUDA %s%s%s\n", json_string_value(json_object_get(cu, "driver_api")),
			       host.nvidia_module ? ", NVIDIA " : "", host.nvidia_module ? host.nvidia_module : "");
		else
			printf("cuda driver none\n");
		if (json_is_string(json_object_get(cu, "runtime")))
			printf("cuda runtime %s (%s)\n", json_string_value(json_object_get(cu, "runtime")),
			       json_string_value(json_object_get(cu, "runtime_source")));
		printf("packages    %zu installed, lane packages:\n", env.ndists);
		json_array_foreach(json_object_get(doc, "packages"), i, x)
			printf("  %-28s %s\n", json_string_value(json_object_get(x, "name")),
			       json_string_value(json_object_get(x, "version")));
		if (json_array_size(json_object_get(doc, "pjrt_plugins")))
			printf("pjrt plugins:\n");
		json_array_foreach(json_object_get(doc, "pjrt_plugins"), i, x) {
			json_t *v = json_object_get(x, "api_version");

			printf("  %s  %s%s\n", json_string_value(json_object_get(x, "path")),
			       json_is_string(v) ? "PJRT C API " : "error: ",
			       json_is_string(v) ? json_string_value(v) :
			       json_string_value(json_object_get(x, "error")));
		}
	}
	json_decref(doc);
	xl_bundle_host_release(&host);
	xl_pyenv_release(&env);
	return 0;
}

static int sub_check(struct xl_ctx *ctx, int argc, char **argv)
{
	const char *python = NULL, *mpath = NULL;
	struct xl_pyenv env;
	struct xl_bundle_host host;
	json_t *matrix, *rep, *x;
	size_t i;
	int vexit, r = parse_opts(ctx, argc, argv, &python, &mpath);

	if (r >= 0)
		return r;
	if (optind < argc)
		return xl_usage_error(&xl_cmd_bundle, "'bundle check' takes no arguments");
	if ((r = xl_bundle_matrix_load(mpath, &matrix)))
		return r;
	if ((r = xl_pyenv_open(python, &env))) {
		json_decref(matrix);
		return r;
	}
	xl_bundle_host_read(&host);
	rep = xl_bundle_check(&env, matrix, &host, &vexit);
	if (ctx->json) {
		json_object_set_new(rep, "python", json_string(env.python));
		json_object_set_new(rep, "python_version", json_string(env.version));
		print_json(rep);
	} else {
		json_t *b = json_object_get(rep, "bundle");

		printf("verdict: %s", json_string_value(json_object_get(rep, "verdict")));
		if (json_is_string(b))
			printf(" (bundle %s, %s)", json_string_value(b),
			       json_string_value(json_object_get(rep, "status")));
		printf("\n");
		json_array_foreach(json_object_get(rep, "reasons"), i, x) {
			const char *sev = json_string_value(json_object_get(x, "severity"));

			if (strcmp(sev, "note") == 0 && ctx->verbosity < 0)
				continue;
			printf("  %-7s %-19s %s\n", sev, json_string_value(json_object_get(x, "rule")),
			       json_string_value(json_object_get(x, "message")));
		}
		if (json_array_size(json_object_get(rep, "features")))
			printf("features:\n");
		json_array_foreach(json_object_get(rep, "features"), i, x) {
			json_t *why = json_object_get(x, "why"), *pre = json_object_get(x, "preconditions");

			printf("  %-19s %s%s%s\n", json_string_value(json_object_get(x, "name")),
			       json_is_true(json_object_get(x, "available")) ? "available" : "unavailable: ",
			       json_is_string(why) ? json_string_value(why) : "",
			       json_is_true(json_object_get(x, "available")) && json_is_string(pre) ?
			       "" : "");
			if (json_is_true(json_object_get(x, "available")) && json_is_string(pre))
				printf("  %-19s   if %s\n", "", json_string_value(pre));
		}
	}
	json_decref(rep);
	json_decref(matrix);
	xl_bundle_host_release(&host);
	xl_pyenv_release(&env);
	return vexit;
}

static const struct xl_subcmd subs[] = {
	{ "show", sub_show },
	{ "check", sub_check },
	{ "compare", sub_compare },
	{ "match", sub_match },
	{ NULL, NULL },
};

static int cmd_bundle(struct xl_ctx *ctx, int argc, char **argv)
{
	return xl_dispatch_sub(ctx, &xl_cmd_bundle, subs, argc, argv);
}

const struct xl_cmd xl_cmd_bundle = {
	.name = "bundle",
	.usage = "show [--python PY] [--json]\n"
		 "check [--python PY] [--matrix FILE] [--json]\n"
		 "compare A B\n"
		 "match SPEC VERSION...",
	.summary = "read the installed software bundle and check that it holds together",
	.help =
	"Subcommands:\n"
	"  show     the interpreter, the ML lane packages and the host facts, read\n"
	"           from package metadata without importing anything\n"
	"  check    Requires-Dist (pip check rules plus implied extras), lock-step\n"
	"           families, the CUDA driver floor and the bundle matrix; prints the\n"
	"           verdict validated|compatible|known-issues|incompatible\n"
	"  compare  prints -1, 0 or 1: the PEP 440 order of A and B\n"
	"  match    prints VERSION<TAB>yes|no per version (pre-releases admitted)\n\n"
	"Options:\n"
	"  --python PY    the interpreter to inspect (default: $VIRTUAL_ENV, then python3)\n"
	"  --matrix FILE  the bundle matrix (default: etc/bundles.yaml)\n\n"
	"Exit: 0 ok (check: validated, compatible or known-issues); 1 check\n"
	"incompatible or match not all matching; 65 invalid version, specifier or\n"
	"matrix; 66 no interpreter or matrix; 69 the interpreter failed.\n",
	.run = cmd_bundle,
};
