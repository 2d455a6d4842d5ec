/* cmd-flags.c - `xlaunch flags list|explain|lint`: the flag catalogs and
 * the composite-flag linter on the command line. */
#include "launcher/flags/flags.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RELEASES 5

/* --release PKG==VERSION, repeatable: one per package. */
struct release_list {
	const char *v[MAX_RELEASES + 1];   /* pointing into argv */
	size_t n;
};

static bool parse_release(const char *value, void *field)
{
	struct release_list *r = field;

	if (r->n >= MAX_RELEASES)
		return false;
	r->v[r->n++] = value;
	return true;
}

/* The runtime a lint or explain judges against: --python PY, --release
 * PKG==VERSION (one for each package the job loads), else the Python
 * `bundle show` finds ($VIRTUAL_ENV, python3 on PATH).  Returns 0, or an
 * exit status once said. */
static int runtime_for(const struct xl_call *call, const char *python,
		       const struct release_list *release, struct xl_runtime *rt)
{
	int rc = 0;

	if (python && release->n) {
		memset(rt, 0, sizeof(*rt));
		return xl_usage_error(call, "give --python or --release, not both");
	}
	if (python)
		rc = xl_runtime_of_python(python, rt);
	else if (release->n)
		rc = xl_runtime_of_releases(release->v, release->n, rt);
	else
		xl_runtime_detect(NULL, 0, NULL, rt);
	if (rc == XL_EX_USAGE) {
		rc = xl_usage_error(call, "option '--release': %s", rt->why);
		xl_runtime_release(rt);
	} else if (rc) {
		xl_error("%s", rt->why);
		xl_runtime_release(rt);
	}
	return rc;
}

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
	if (d->tags & XL_FTAG_OBSERVED) {
		/* known from release wheels only: no type */
		json_array_append_new(tags, json_string("observed"));
		json_object_set_new(o, "type", json_null());
	}
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
			if (fam < 0 || xl_flagdef_at(i)->family == fam)
				json_array_append_new(arr, flag_json(xl_flagdef_at(i)));
		json_object_set_new(root, "families", fams);
		json_object_set_new(root, "flags", arr);
		return dump_json(root);
	}
	for (size_t i = 0; i < xl_nflagdefs; i++) {
		const struct xl_flagdef *d = xl_flagdef_at(i);
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

struct explain_opts {
	const char *python;
	struct release_list release;
};

/* Every entry called name: the catalog's, then those only other releases
 * register.  Returns how many (at most max). */
static size_t find_entries(const char *name, const struct xl_flagdef **out, size_t max)
{
	const struct xl_flagdef *d;
	size_t n = xl_catalog_find_all(name, &d), m = 0;

	for (size_t i = 0; i < n && m < max; i++)
		out[m++] = &d[i];
	return m + xl_knowledge_only(name, out + m, max - m);
}

static json_t *values_json(const char *values)
{
	json_t *a = json_array();

	for (const char *s = values ? values : ""; *s; s += strlen(s) + 1)
		json_array_append_new(a, json_string(s));
	return a;
}

static const char *status_name(enum xl_rel_status st)
{
	return st == XL_RS_REGISTERED ? "registered" : st == XL_RS_ELSEWHERE ? "other-releases"
	       : st == XL_RS_UNCONFIRMED ? "unconfirmed" : "unknown";
}

static json_t *releases_json(const struct xl_flag_releases *fr, const struct xl_rel_verdict *rv)
{
	json_t *o = json_object(), *vars = json_array();

	json_object_set_new(o, "releases", json_string(fr->releases));
	for (size_t i = 0; i < fr->nvariants; i++)
		json_array_append_new(vars, json_pack("{s:s,s:s,s:o}", "releases", fr->variants[i].releases,
						      "type", xl_ftype_name(fr->variants[i].type),
						      "values", values_json(fr->variants[i].values)));
	json_object_set_new(o, "variants", vars);
	json_object_set_new(o, "removed", fr->removed ? json_string(fr->removed) : json_null());
	json_object_set_new(o, "replaced_by", fr->replaced_by ? json_string(fr->replaced_by) : json_null());
	json_object_set_new(o, "evidence", fr->evidence ? json_string(fr->evidence) : json_null());
	json_object_set_new(o, "judged", json_pack("{s:s,s:o,s:o}", "status", status_name(rv->status),
		"message", rv->why ? json_string(rv->why) : json_null(),
		"hint", rv->hint ? json_string(rv->hint) : json_null()));
	return o;
}

static void print_releases(const struct xl_flagdef *d, const struct xl_flag_releases *fr,
			   const struct xl_rel_verdict *rv, const struct xl_judge *j)
{
	char *against = xl_judge_str(j, d->family);

	printf("  releases:    %s\n", fr->releases);
	for (size_t i = 0; i < fr->nvariants; i++) {
		printf("  in %s: %s", fr->variants[i].releases, xl_ftype_name(fr->variants[i].type));
		for (const char *s = fr->variants[i].values ? fr->variants[i].values : ""; *s;
		     s += strlen(s) + 1)
			printf(" %s", s);
		printf("\n");
	}
	if (fr->removed)
		printf("  removed:     %s\n", fr->removed);
	if (fr->replaced_by)
		printf("  replaced by: %s (%s)\n", fr->replaced_by, fr->evidence);
	if (rv->status == XL_RS_REGISTERED && (d->tags & XL_FTAG_OBSERVED))
		printf("  judged:      %s: registered (its wheel says so; any value is taken)\n",
		       against ? against : "-");
	else if (rv->status == XL_RS_REGISTERED)
		printf("  judged:      %s: registered, %s\n", against ? against : "-",
		       xl_ftype_name(rv->d ? rv->d->type : d->type));
	else
		printf("  judged:      %s: %s\n", against ? against : "-", rv->why);
	free(against);
}

static void print_entry(const struct xl_flagdef *d, const struct xl_flag_releases *fr, bool known,
			const struct xl_rel_verdict *rv, const struct xl_judge *j)
{
	const struct xl_family *f = &xl_families[d->family];
	char tags[64];

	printf("%s\n", d->name);
	printf("  family:      %s%s\n", f->name, f->complete ? "" : " (partial catalog)");
	if (f->flags)
		printf("  set in:      %s\n", f->variables);
	if (d->tags & XL_FTAG_OBSERVED)
		printf("  type:        not known (any value is taken)\n");
	else
		printf("  type:        %s\n", xl_ftype_name(d->type));
	if (d->values) {
		printf("  values:     ");
		for (size_t k = 0; d->values[k]; k++)
			printf(" %s", d->values[k]);
		printf("%s\n", d->icase ? " (any case)" : "");
	}
	printf("  default:     %s\n", d->def ? (*d->def ? d->def : "(empty)") : "(unknown)");
	printf("  tags:        %s\n", d->tags ? xl_ftags_str(d->tags, tags, sizeof(tags)) : "-");
	if (d->timing_allows) {
		printf("  timing run:  only");
		for (size_t k = 0; d->timing_allows[k]; k++)
			printf(" %s", d->timing_allows[k]);
		printf(" (and items starting with -)\n");
	}
	printf("  description: %s\n", d->desc);
	if (d->tags & XL_FTAG_OBSERVED) {
		printf("  source:      what the wheels of the releases below register (etc/flags/observed/)\n");
	} else {
		printf("  source:      %s %s", f->repository, f->path);
		if (f->commit)
			printf(" @ %s", f->commit);
		if (f->release)
			printf(" (%s)", f->release);
		printf("\n");
	}
	if (known)
		print_releases(d, fr, rv, j);
}

static enum xl_exit flags_explain(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct explain_opts *o = call->opts;
	const struct xl_flagdef *ents[8];
	struct xl_runtime rt;
	struct xl_judge j;
	const char *name = call->argv[0];
	json_t *arr = json_array();
	size_t n;
	int rc;

	while (*name == '-')
		name++;
	n = find_entries(name, ents, 8);
	if (!n) {
		const char *dym = xl_catalog_suggest("XLA_FLAGS", name);

		json_decref(arr);
		if (!dym)
			dym = xl_catalog_suggest("LIBTPU_INIT_ARGS", name);
		if (!dym)
			dym = xl_catalog_suggest(NULL, name);
		if (dym)
			xl_error("flag '%s' is in no catalog; did you mean '%s'?", name, dym);
		else
			xl_error("flag '%s' is in no catalog", name);
		return XL_EX_NOINPUT;
	}
	if ((rc = runtime_for(call, o->python, &o->release, &rt)) != 0) {
		json_decref(arr);
		return rc;
	}
	xl_judge_init(&j, &rt);
	for (size_t i = 0; i < n; i++) {
		struct xl_rel_verdict rv;

		struct xl_flag_releases fr;
		bool known = xl_flag_releases_get(name, ents[i]->family, &fr);

		xl_judge_name(&j, ents[i]->family, name, &rv);
		if (ctx->json) {
			json_t *e = flag_json(ents[i]);

			json_object_set_new(e, "source", ents[i]->tags & XL_FTAG_OBSERVED
					    ? json_pack("{s:s}", "observed", "etc/flags/observed/")
					    : source_json(&xl_families[ents[i]->family]));
			if (known)
				json_object_update_new(e, releases_json(&fr, &rv));
			json_array_append_new(arr, e);
		} else {
			if (i)
				printf("\n");
			print_entry(ents[i], &fr, known, &rv, &j);
		}
		xl_flag_releases_release(&fr);
		xl_rel_verdict_release(&rv);
	}
	if (ctx->json)
		rc = dump_json(json_pack("{s:s,s:o,s:o}", "name", name, "entries", arr,
					 "release", xl_judge_json(&j)));
	else
		rc = fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
	if (!ctx->json)
		json_decref(arr);
	xl_runtime_release(&rt);
	return rc;
}

/* ---- lint ------------------------------------------------------------------------ */

struct lint_opts {
	const char *var;
	bool timing;
	const char *python;
	struct release_list release;
};

/* What the values of var are judged against, in words (NULL: a family
 * that records no releases).  Caller frees. */
static char *judged_against(const struct xl_judge *j, const char *var)
{
	int fam = -1;

	if (strcmp(var, "XLA_FLAGS") == 0) {
		fam = xl_family_index("xla");
	} else if (!xl_is_composite_var(var)) {
		struct xl_rel_verdict rv;

		(void)xl_catalog_env_at(j, var, &rv);
		fam = rv.family;
		xl_rel_verdict_release(&rv);
	}
	return fam >= 0 ? xl_judge_str(j, fam) : NULL;
}

/* enum xl_xla_verdict */
static const char *const verdict_names[] = { "accepts", "parse-fails", "unknown-flags", "no-file" };

static enum xl_exit flags_lint(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct lint_opts lo = *(const struct lint_opts *)call->opts;
	struct xl_lint l = { 0 };
	struct xl_buf s = XL_BUF_INIT;
	int rc;

	struct xl_runtime rt;
	struct xl_judge j;
	char *against;

	if (!xl_valid_env_name(lo.var))
		return xl_usage_error(call, "option '--var': '%s' is not a variable name", lo.var);
	if ((rc = runtime_for(call, lo.python, &lo.release, &rt)) != 0)
		return rc;
	xl_judge_init(&j, &rt);
	against = judged_against(&j, lo.var);
	/* several operands are one string, as the shell would join them */
	for (int i = 0; i < call->argc; i++)
		xl_buf_addf(&s, "%s%s", i ? " " : "", call->argv[i]);
	xl_lint_string_at(&j, lo.var, xl_buf_str(&s), lo.timing ? XL_LINT_TIMING : 0, &l);
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
		json_object_set_new(doc, "release", xl_judge_json(&j));
		json_object_set_new(doc, "judged_against", against ? json_string(against) : json_null());
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
			printf("%s: %zu error%s, %zu warning%s%s%s%s\n", lo.var, l.errors,
			       l.errors == 1 ? "" : "s", l.warnings, l.warnings == 1 ? "" : "s",
			       against ? " (judged against " : "", against ? against : "",
			       against ? ")" : "");
		rc = fflush(stdout) == 0 ? 0 : XL_EX_SOFTWARE;
	}
	if (rc == 0 && l.errors)
		rc = XL_EX_DATAERR;
	xl_lint_release(&l);
	xl_buf_release(&s);
	xl_runtime_release(&rt);
	free(against);
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

static const struct xl_opt explain_options[] = {
	XL_OPTION_STRING(0, "python", "PY", struct explain_opts, python,
			 "say what the releases installed for interpreter PY make of it\n"
			 "(default: $VIRTUAL_ENV's, else python3 on PATH)"),
	XL_OPTION_CALLBACK(0, "release", "PKG==VERSION", struct explain_opts, release,
			   struct release_list, parse_release, "PKG==VERSION (at most 5)",
			   "say what one release makes of it, without an interpreter\n"
			   "(repeatable, one for each package the job loads)"),
	XL_OPTION_END,
};

static const struct xl_cmd flags_explain_cmd = {
	.name = "explain",
	.summary = "family, type, values, default, tags, description, source and releases of a flag",
	.operands = "NAME",
	.json = "{name, entries: [{..., releases, variants, removed, replaced_by, evidence,\n"
		"judged: {status, message, hint}}], release}",
	.help = "A flag other releases register is explained too: the releases that have\n"
		"it, the change that removed it and the successor upstream names.\n",
	.epilog = "Exit status: 0, or 66 for a name in no catalog and no release.\n",
	.options = explain_options,
	XL_CMD_OPTS(struct explain_opts, NULL),
	.run = flags_explain,
};

static const struct xl_opt lint_options[] = {
	XL_OPTION_STRING(0, "var", "VAR", struct lint_opts, var,
			 "the variable STRING is meant for (default XLA_FLAGS); a\n"
			 "variable that is not composite has its value type-checked"),
	XL_OPTION_FLAG(0, "timing", struct lint_opts, timing,
		       "treat debug-tagged flags as errors, as 'policy: timing' does"),
	XL_OPTION_STRING(0, "python", "PY", struct lint_opts, python,
			 "judge against the releases installed for interpreter PY\n"
			 "(default: $VIRTUAL_ENV's, else python3 on PATH)"),
	XL_OPTION_CALLBACK(0, "release", "PKG==VERSION", struct lint_opts, release,
			   struct release_list, parse_release, "PKG==VERSION (at most 5)",
			   "judge against one release without an interpreter\n"
			   "(jaxlib, jax, torch_xla, libtpu; repeatable, one for each package\n"
			   "the job loads)"),
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
