/* cmd-flags.c - `xlaunch flags list|explain|lint`: the flag catalogs and
 * the composite-flag linter on the command line. */
#include "launcher/flags/flags.h"

#include <stdlib.h>
#include <string.h>

static json_t *source_json(const struct xl_family *f)
{
	json_t *src = json_object();

	json_object_set_new(src, "repository", json_string(f->repository));
	json_object_set_new(src, "path", json_string(f->path));
	if (f->commit)
		json_object_set_new(src, "commit", json_string(f->commit));
	if (f->release)
		json_object_set_new(src, "release", json_string(f->release));
	if (f->also)
		json_object_set_new(src, "also", json_string(f->also));
	return src;
}

static json_t *family_json(const struct xl_family *f)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:b}", "family", f->name, "file", f->file,
			      "kind", f->flags ? "flags" : "env", "complete", f->complete);

	if (f->flags)
		json_object_set_new(o, "variables", json_string(f->variables));
	json_object_set_new(o, "source", source_json(f));
	return o;
}

static json_t *flag_json(const struct xl_flagdef *d)
{
	static const char *const tagnames[] = { "debug", "cache", "perf-risk", "deprecated" };
	json_t *o = json_pack("{s:s,s:s,s:s}", "name", d->name,
			      "family", xl_families[d->family].name, "type", xl_ftype_name(d->type));
	json_t *tags = json_array();

	if (d->values) {
		json_t *v = json_array();

		for (size_t i = 0; d->values[i]; i++)
			json_array_append_new(v, json_string(d->values[i]));
		json_object_set_new(o, "values", v);
	}
	json_object_set_new(o, "default", d->def ? json_string(d->def) : json_null());
	for (unsigned i = 0; i < 4; i++)
		if (d->tags & (1u << i))
			json_array_append_new(tags, json_string(tagnames[i]));
	json_object_set_new(o, "tags", tags);
	if (d->timing_allows) {
		json_t *t = json_array();

		for (size_t i = 0; d->timing_allows[i]; i++)
			json_array_append_new(t, json_string(d->timing_allows[i]));
		json_object_set_new(o, "timing_allows", t);
	}
	json_object_set_new(o, "description", json_string(d->desc));
	return o;
}

static int dump_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(j);
	if (!s)
		return XL_EX_SOFTWARE;
	puts(s);
	free(s);
	return fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
}

/* ---- list ------------------------------------------------------------------------- */

struct list_opts {
	const char *family;
};

static enum xl_exit flags_list(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct list_opts lo = *(const struct list_opts *)call->opts;
	int fam = -1;

	if (lo.family) {
		fam = xl_family_index(lo.family);
		if (fam < 0) {
			const char *names[64];
			size_t k = 0;

			for (; k < xl_nfamilies && k < 63; k++)
				names[k] = xl_families[k].name;
			names[k] = NULL;
			const char *dym = xl_did_you_mean(lo.family, names);

			if (dym)
				xl_error("flag family '%s' is unknown; did you mean '%s'?", lo.family, dym);
			else
				xl_error("flag family '%s' is unknown", lo.family);
			return XL_EX_USAGE;
		}
	}
	if (ctx->json) {
		json_t *root = json_object(), *fams = json_array(), *arr = json_array();

		for (size_t i = 0; i < xl_nfamilies; i++)
			if (fam < 0 || (int)i == fam)
				json_array_append_new(fams, family_json(&xl_families[i]));
		for (size_t i = 0; i < xl_nflagdefs; i++)
			if (fam < 0 || xl_flagdefs[i].family == fam)
				json_array_append_new(arr, flag_json(&xl_flagdefs[i]));
		json_object_set_new(root, "families", fams);
		json_object_set_new(root, "flags", arr);
		return dump_json(root);
	}
	for (size_t i = 0; i < xl_nflagdefs; i++) {
		const struct xl_flagdef *d = &xl_flagdefs[i];
		char tags[64];

		if (fam >= 0 && d->family != fam)
			continue;
		xl_ftags_str(d->tags, tags, sizeof(tags));
		printf("%-56s %-9s %-6s %s\n", d->name, xl_families[d->family].name,
		       xl_ftype_name(d->type), tags);
	}
	return fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
}

/* ---- explain --------------------------------------------------------------------- */

static enum xl_exit flags_explain(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct xl_flagdef *d;
	const char *name;
	size_t n;

	name = call->argv[0];
	while (*name == '-')
		name++;
	n = xl_catalog_find_all(name, &d);
	if (!n) {
		const char *dym = xl_catalog_suggest("LIBTPU_INIT_ARGS", name);
		const char *dym2 = xl_catalog_suggest(NULL, name);

		if (!dym)
			dym = dym2;
		if (dym)
			xl_error("flag '%s' is in no catalog; did you mean '%s'?", name, dym);
		else
			xl_error("flag '%s' is in no catalog", name);
		return XL_EX_NOINPUT;
	}
	if (ctx->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < n; i++) {
			json_t *o = flag_json(&d[i]);

			json_object_set_new(o, "source", source_json(&xl_families[d[i].family]));
			json_array_append_new(arr, o);
		}
		return dump_json(json_pack("{s:s,s:o}", "name", name, "entries", arr));
	}
	for (size_t i = 0; i < n; i++) {
		const struct xl_family *f = &xl_families[d[i].family];
		char tags[64];

		if (i)
			printf("\n");
		printf("%s\n", d[i].name);
		printf("  family:      %s%s\n", f->name, f->complete ? "" : " (partial catalog)");
		if (f->flags)
			printf("  set in:      %s\n", f->variables);
		printf("  type:        %s\n", xl_ftype_name(d[i].type));
		if (d[i].values) {
			printf("  values:     ");
			for (size_t k = 0; d[i].values[k]; k++)
				printf(" %s", d[i].values[k]);
			printf("%s\n", d[i].icase ? " (any case)" : "");
		}
		printf("  default:     %s\n", d[i].def ? (*d[i].def ? d[i].def : "(empty)") : "(unknown)");
		printf("  tags:        %s\n", d[i].tags ? xl_ftags_str(d[i].tags, tags, sizeof(tags)) : "-");
		if (d[i].timing_allows) {
			printf("  timing run:  only");
			for (size_t k = 0; d[i].timing_allows[k]; k++)
				printf(" %s", d[i].timing_allows[k]);
			printf(" (and items starting with -)\n");
		}
		printf("  description: %s\n", d[i].desc);
		printf("  source:      %s %s", f->repository, f->path);
		if (f->commit)
			printf(" @ %s", f->commit);
		if (f->release)
			printf(" (%s)", f->release);
		printf("\n");
	}
	return fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
}

/* ---- lint ------------------------------------------------------------------------ */

struct lint_opts {
	const char *var;
	bool timing;
};

/* enum xl_xla_verdict */
static const char *const verdict_names[] = { "accepts", "parse-fails", "unknown-flags", "no-file" };

static enum xl_exit flags_lint(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct lint_opts lo = *(const struct lint_opts *)call->opts;
	struct xl_lint l = { 0 };
	struct xl_buf s = XL_BUF_INIT;
	int rc;

	if (!xl_valid_env_name(lo.var))
		return xl_usage_error(call, "option '--var': '%s' is not a variable name", lo.var);
	/* several operands are one string, as the shell would join them */
	for (int i = 0; i < call->argc; i++)
		xl_buf_addf(&s, "%s%s", i ? " " : "", call->argv[i]);
	xl_lint_string(lo.var, xl_buf_str(&s), lo.timing ? XL_LINT_TIMING : 0, &l);
	if (ctx->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < l.n; i++) {
			const struct xl_lint_report *r = &l.v[i];

			json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:o,s:b}",
				"severity", xl_severity_name(r->sev), "code", r->code, "token", r->token,
				"offset", (json_int_t)r->offset, "column", (json_int_t)r->offset + 1,
				"message", r->message,
				"suggestion", r->suggestion ? json_string(r->suggestion) : json_null(),
				"aborts", r->aborts);

			if (r->file) {
				json_object_set_new(o, "file", json_string(r->file));
				json_object_set_new(o, "line", json_integer(r->line));
				json_object_set_new(o, "column", json_integer(r->col));
			}
			json_array_append_new(arr, o);
		}
		json_t *doc = json_pack("{s:s,s:s,s:I,s:I,s:o}", "variable", lo.var,
					"value", xl_buf_str(&s), "errors", (json_int_t)l.errors,
					"warnings", (json_int_t)l.warnings, "reports", arr);

		if (l.judged)
			json_object_set_new(doc, "xla", json_pack("{s:s,s:o}",
				"verdict", verdict_names[l.verdict],
				"detail", l.verdict_detail ? json_string(l.verdict_detail) : json_null()));
		rc = dump_json(doc);
	} else {
		for (size_t i = 0; i < l.n; i++) {
			const struct xl_lint_report *r = &l.v[i];

			const char *msg = r->message;

			if (xl_startswith(msg, lo.var) && msg[strlen(lo.var)] == ':')
				msg += strlen(lo.var) + 2;
			if (r->file)
				printf("%s:%u:%u: %s: %s", r->file, r->line, r->col, xl_severity_name(r->sev), msg);
			else
				printf("%s:%zu: %s: %s", lo.var, r->offset + 1, xl_severity_name(r->sev), msg);
			if (r->suggestion)
				printf("; %s", r->suggestion);
			printf(" [%s]\n", r->code);
		}
		if (xl_verbosity >= 0)
			printf("%s: %zu error%s, %zu warning%s\n", lo.var, l.errors, l.errors == 1 ? "" : "s",
			       l.warnings, l.warnings == 1 ? "" : "s");
		rc = fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
	}
	if (rc == 0 && l.errors)
		rc = XL_EX_DATAERR;
	xl_lint_release(&l);
	xl_buf_release(&s);
	return rc;
}

static const struct xl_opt list_options[] = {
	XL_OPTION_STRING(0, "family", "F", struct list_opts, family,
			 "only family F (xla, libtpu, torch_xla, jax, nccl, runtime)"),
	XL_OPTION_END,
};

static const struct xl_cmd flags_list_cmd = {
	.name = "list",
	.summary = "every cataloged flag and variable: name, family, type, tags",
	.json = "{families: [...], flags: [{name, family, type, values, default, tags,\n"
		"description}]}",
	.options = list_options,
	XL_CMD_OPTS(struct list_opts, NULL),
	.run = flags_list,
};

static const struct xl_cmd flags_explain_cmd = {
	.name = "explain",
	.summary = "family, type, values, default, tags, description and source of a flag",
	.operands = "NAME",
	.json = "{name, entries: [...]}",
	.epilog = "Exit status: 0, or 66 for a name in no catalog.\n",
	.run = flags_explain,
};

static const struct xl_opt lint_options[] = {
	XL_OPTION_STRING(0, "var", "VAR", struct lint_opts, var,
			 "the variable STRING is meant for (default XLA_FLAGS); a\n"
			 "variable that is not composite has its value type-checked"),
	XL_OPTION_FLAG(0, "timing", struct lint_opts, timing,
		       "treat debug-tagged flags as errors, as 'policy: timing' does"),
	XL_OPTION_END,
};

static const struct lint_opts lint_defaults = { .var = "XLA_FLAGS" };

static const struct xl_cmd flags_lint_cmd = {
	.name = "lint",
	.summary = "check a flag string the way its consumer will read it",
	.operands = "STRING...",
	.json = "{variable, value, errors, warnings, reports: [{severity, code, token,\n"
		"offset, column, message, suggestion}]}",
	.help = "Options end at the first word that is not one of lint's own, so STRING\n"
		"may begin with '--'; several words are joined with spaces.\n",
	.epilog = "Exit status: 0 when no error was found (warnings and notes allowed), 65\n"
		  "when at least one was.\n",
	.options = lint_options,
	XL_CMD_OPTS(struct lint_opts, &lint_defaults),
	.run = flags_lint,
	.flags = XL_CMD_OPERANDS_FROM_UNKNOWN,
};

static const struct xl_cmd *const flags_subs[] = {
	&flags_list_cmd, &flags_explain_cmd, &flags_lint_cmd, NULL,
};

const struct xl_cmd xl_cmd_flags = {
	.name = "flags",
	.summary = "list, explain and lint runtime flags from the built-in catalogs",
	.subs = flags_subs,
};
