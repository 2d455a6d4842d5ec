/*
 * cmd-bundle.c - `xlaunch bundle show|check|compare|match`.
 */
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

struct bundle_opts {
	const char *python;
	const char *matrix;
	bool all;
};

static enum xl_exit sub_compare(struct xl_ctx *ctx, const struct xl_call *call)
{
	char **argv = call->argv;
	int r, cmp;

	r = xl_version_compare_str(argv[0], argv[1], &cmp);
	if (r < 0) {
		xl_error("version '%s': not a valid PEP 440 version", argv[r == -1 ? 0 : 1]);
		return XL_EX_DATAERR;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:s,s:s,s:i}", "a", argv[0], "b", argv[1],
				      "result", cmp);
		char *txt = json_dumps(o, 0);

		printf("%s\n", txt);
		free(txt);
		json_decref(o);
	} else
		printf("%d\n", cmp);
	return 0;
}

static enum xl_exit sub_match(struct xl_ctx *ctx, const struct xl_call *call)
{
	char **argv = call->argv;
	struct xl_specset ss;
	struct xl_version *vs;
	char *err = NULL;
	int n;
	bool all = true;

	if (xl_specset_parse(argv[0], strlen(argv[0]), &ss, &err) < 0) {
		xl_error("specifier '%s': %s", argv[0], err);
		free(err);
		return XL_EX_DATAERR;
	}
	n = call->argc - 1;
	vs = xl_calloc((size_t)n, sizeof(*vs));
	for (int i = 0; i < n; i++) {
		const char *s = argv[1 + i];

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
			bool m = xl_specset_contains(&ss, &vs[i], argv[1 + i]);

			all = all && m;
			json_array_append_new(arr, json_pack("{s:s,s:s,s:b}", "version",
							     argv[1 + i], "normalized",
							     vs[i].norm, "match", m));
		}
		txt = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", txt);
		free(txt);
		json_decref(arr);
	} else {
		for (int i = 0; i < n; i++) {
			bool m = xl_specset_contains(&ss, &vs[i], argv[1 + i]);

			all = all && m;
			printf("%s\t%s\n", argv[1 + i], m ? "yes" : "no");
		}
	}
	for (int i = 0; i < n; i++)
		xl_version_release(&vs[i]);
	free(vs);
	xl_specset_release(&ss);
	return all ? 0 : XL_EX_FAIL;
}

/* The directories the interpreter's packages were read from, in order. */
static void print_dirs(const char *label, const struct xl_pyenv *env)
{
	for (size_t i = 0; i < env->sitedirs.n; i++)
		printf("%-11s %s\n", i ? "" : label, env->sitedirs.v[i]);
	if (!env->sitedirs.n)
		printf("%-11s none\n", label);
}

static void print_json(json_t *doc)
{
	char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	printf("%s\n", txt);
	free(txt);
}

static enum xl_exit sub_show(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct bundle_opts *o = call->opts;
	struct xl_pyenv env;
	struct xl_bundle_host host;
	json_t *doc, *x;
	size_t i;
	int r;

	if ((r = xl_pyenv_open(o->python, 0, &env)))
		return r;
	xl_bundle_host_read(&host);
	doc = xl_bundle_show_json(&env, &host, true, o->all);
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
		else if (host.nvidia_module)
			printf("cuda driver NVIDIA %s (kernel module; libcuda.so.1 did not answer)\n",
			       host.nvidia_module);
		else
			printf("cuda driver none\n");
		if (json_is_string(json_object_get(cu, "runtime")))
			printf("cuda runtime %s (%s)\n", json_string_value(json_object_get(cu, "runtime")),
			       json_string_value(json_object_get(cu, "runtime_source")));
		print_dirs("site dirs", &env);
		printf("packages    %zu installed, %s:\n", env.ndists,
		       o->all ? "all of them (* of the ML lane)" : "lane packages");
		json_array_foreach(json_object_get(doc, "packages"), i, x)
			printf("  %-28s %s%s\n", json_string_value(json_object_get(x, "name")),
			       json_string_value(json_object_get(x, "version")),
			       o->all && json_is_true(json_object_get(x, "lane")) ? " *" : "");
		if (!json_integer_value(json_object_get(doc, "lane_count")))
			printf("  (none of the ML lane: nothing for 'bundle check' to check)\n");
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

static enum xl_exit sub_check(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct bundle_opts *o = call->opts;
	struct xl_pyenv env;
	struct xl_bundle_host host;
	json_t *matrix, *rep, *x;
	size_t i;
	int vexit, r;

	if ((r = xl_bundle_matrix_load(o->matrix, &matrix)))
		return r;
	if ((r = xl_pyenv_open(o->python, 0, &env))) {
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
		printf("  read    %zu installed packages, %lld of the ML lane, from %zu "
		       "directories\n", env.ndists,
		       (long long)json_integer_value(json_object_get(rep, "lane_count")),
		       env.sitedirs.n);
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

#define PYTHON_OPTION \
	XL_OPTION_STRING(0, "python", "PY", struct bundle_opts, python, \
			 "the interpreter to inspect (default: $VIRTUAL_ENV, then python3)")

static const struct xl_opt show_options[] = {
	PYTHON_OPTION,
	XL_OPTION_FLAG(0, "all", struct bundle_opts, all,
		       "list every installed distribution, not only the ML lane's"),
	XL_OPTION_END,
};

static const struct xl_opt check_options[] = {
	PYTHON_OPTION,
	XL_OPTION_STRING(0, "matrix", "FILE", struct bundle_opts, matrix,
			 "the bundle matrix (default: etc/bundles.yaml)"),
	XL_OPTION_END,
};

static const struct xl_cmd bundle_show_cmd = {
	.name = "show",
	.summary = "the interpreter, the ML lane packages and the host facts",
	.json = "{python, packages, installed_count, lane_count, broken_metadata, host, cuda,\n"
		"pjrt_plugins}",
	.help = "Read from package metadata without importing anything, in the directories\n"
		"the interpreter imports from (its sys.path as its own site module builds\n"
		"it: venv, user site, site directories; .pth files add their path lines,\n"
		"their import lines are not run).\n",
	.epilog = "Exit status: 0; 66 no interpreter; 69 the interpreter failed.\n",
	.options = show_options,
	XL_CMD_OPTS(struct bundle_opts, NULL),
	.run = sub_show,
};

static const struct xl_cmd bundle_check_cmd = {
	.name = "check",
	.summary = "check that the installed bundle holds together",
	.json = "{verdict, bundle, status, matched, errors, warnings, reasons: [{rule,\n"
		"severity, packages, message}], features, installed_count, lane_count,\n"
		"site_dirs, python, python_version}",
	.help = "Requires-Dist (pip check rules plus implied extras), lock-step families,\n"
		"the CUDA driver floor and the bundle matrix; prints the verdict\n"
		"validated|compatible|known-issues|incompatible|empty.  empty: no package\n"
		"of the ML lane was found, so nothing was checked; the directories read\n"
		"are printed (is it the job's interpreter?).\n",
	.epilog = "Exit status: 0 validated, compatible or known-issues; 1 incompatible;\n"
		  "2 empty; 65 invalid matrix; 66 no interpreter or matrix; 69 the\n"
		  "interpreter failed.\n",
	.options = check_options,
	XL_CMD_OPTS(struct bundle_opts, NULL),
	.run = sub_check,
};

static const struct xl_cmd bundle_compare_cmd = {
	.name = "compare",
	.summary = "print -1, 0 or 1: the PEP 440 order of A and B",
	.operands = "A B",
	.json = "{a, b, result}",
	.epilog = "Exit status: 0; 65 an invalid version.\n",
	.run = sub_compare,
};

static const struct xl_cmd bundle_match_cmd = {
	.name = "match",
	.summary = "print VERSION<TAB>yes|no per version (pre-releases admitted)",
	.operands = "SPEC VERSION...",
	.json = "an array of {version, normalized, match}",
	.epilog = "Exit status: 0 all match; 1 not all match; 65 an invalid specifier or\n"
		  "version.\n",
	.run = sub_match,
};

static const struct xl_cmd *const bundle_subs[] = {
	&bundle_show_cmd, &bundle_check_cmd, &bundle_compare_cmd, &bundle_match_cmd, NULL,
};

const struct xl_cmd xl_cmd_bundle = {
	.name = "bundle",
	.summary = "read the installed software bundle and check that it holds together",
	.subs = bundle_subs,
};
