/* cmd-flags.c - `xlaunch flags list|explain|lint`: the flag catalogs and
 * the composite-flag linter on the command line. */
#include "launcher/catalog.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const struct xl_cmd xl_cmd_flags;

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

/* Parses the common options and those in extra; returns -1 to go on. */
static int parse(struct xl_ctx *ctx, int argc, char **argv, const struct option *extra,
		 int (*own)(int c, const char *arg, void *st), void *st)
{
	struct option opts[16] = { XL_COMMON_LONGOPTS };
	size_t n = 7;
	int c;

	for (size_t i = 0; extra && extra[i].name && n < 15; i++)
		opts[n++] = extra[i];
	memset(&opts[n], 0, sizeof(opts[n]));
	optind = 0;
	while ((c = getopt_long(argc, argv, "qv", opts, NULL)) != -1) {
		int r = own ? own(c, optarg, st) : -1;

		if (r == -2)
			continue;
		if (r >= 0)
			return r;
		r = xl_common_option(ctx, &xl_cmd_flags, c, optarg);
		if (r >= 0)
			return r;
		if (r == -1)
			return xl_usage_error(&xl_cmd_flags, "unexpected option");
	}
	return -1;
}

/* ---- list ------------------------------------------------------------------------- */

struct list_opts {
	const char *family;
};

static int list_opt(int c, const char *arg, void *st)
{
	if (c != 'f')
		return -1;
	((struct list_opts *)st)->family = arg;
	return -2;
}

static int flags_list(struct xl_ctx *ctx, int argc, char **argv)
{
	static const struct option extra[] = { { "family", 1, NULL, 'f' }, { NULL, 0, NULL, 0 } };
	struct list_opts lo = { NULL };
	int fam = -1, rc = parse(ctx, argc, argv, extra, list_opt, &lo);

	if (rc >= 0)
		return rc;
	if (optind < argc)
		return xl_usage_error(&xl_cmd_flags, "flags list takes no operand ('%s')", argv[optind]);
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

static int flags_explain(struct xl_ctx *ctx, int argc, char **argv)
{
	const struct xl_flagdef *d;
	const char *name;
	size_t n;
	int rc = parse(ctx, argc, argv, NULL, NULL, NULL);

	if (rc >= 0)
		return rc;
	if (optind != argc - 1)
		return xl_usage_error(&xl_cmd_flags, "flags explain takes one NAME");
	name = argv[optind];
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
	unsigned flags;
};

static int lint_opt(int c, const char *arg, void *st)
{
	struct lint_opts *lo = st;

	if (c == 'V') {
		lo->var = arg;
		return -2;
	}
	if (c == 'T') {
		lo->flags |= XL_LINT_TIMING;
		return -2;
	}
	return -1;
}

static const char *const sev_names[] = { "note", "warning", "error" };
/* enum xl_xla_verdict */
static const char *const verdict_names[] = { "accepts", "parse-fails", "unknown-flags", "no-file" };

/* Index of the first word of STRING: the first word that is not one of
 * lint's own or the common options (or the word after "--"). */
static int lint_split(int argc, char **argv)
{
	static const char *const with_arg[] = { "--var", "--store", "--profile-path", NULL };
	static const char *const bare[] = { "--timing", "--json", "--help", "--quiet", "--verbose",
					    "-q", "-v", "--color", NULL };
	int i = 1;

	while (i < argc) {
		const char *a = argv[i];
		size_t len = strcspn(a, "=");
		bool known = false;

		if (strcmp(a, "--") == 0 || a[0] != '-')
			return i;
		for (int k = 0; with_arg[k]; k++)
			if (strlen(with_arg[k]) == len && strncmp(a, with_arg[k], len) == 0) {
				known = true;
				if (!a[len])
					i++;  /* the value is the next word */
			}
		for (int k = 0; bare[k]; k++)
			if (strlen(bare[k]) == len && strncmp(a, bare[k], len) == 0)
				known = true;
		if (!known)
			return i;
		i++;
	}
	return argc < i ? argc : i;
}

static int flags_lint(struct xl_ctx *ctx, int argc, char **argv)
{
	static const struct option extra[] = {
		{ "var", 1, NULL, 'V' }, { "timing", 0, NULL, 'T' }, { NULL, 0, NULL, 0 },
	};
	struct lint_opts lo = { "XLA_FLAGS", 0 };
	struct xl_lint l = { 0 };
	struct xl_buf s = XL_BUF_INIT;
	int split = lint_split(argc, argv), start, rc;

	/* options end where the flag string begins: "--xla_foo=1" is STRING */
	rc = parse(ctx, split, argv, extra, lint_opt, &lo);
	if (rc >= 0)
		return rc;
	start = optind < split ? optind : split;
	if (start < argc && strcmp(argv[start], "--") == 0)
		start++;
	if (start >= argc)
		return xl_usage_error(&xl_cmd_flags, "flags lint needs the STRING to check");
	if (!xl_valid_env_name(lo.var))
		return xl_usage_error(&xl_cmd_flags, "--var '%s' is not a variable name", lo.var);
	/* several operands are one string, as the shell would join them */
	for (int i = start; i < argc; i++)
		xl_buf_addf(&s, "%s%s", i > start ? " " : "", argv[i]);
	xl_lint_string(lo.var, xl_buf_str(&s), lo.flags, &l);
	if (ctx->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < l.n; i++) {
			const struct xl_lint_report *r = &l.v[i];

			json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:o,s:b}",
				"severity", sev_names[r->sev], "code", r->code, "token", r->token,
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
				printf("%s:%u:%u: %s: %s", r->file, r->line, r->col, sev_names[r->sev], msg);
			else
				printf("%s:%zu: %s: %s", lo.var, r->offset + 1, sev_names[r->sev], msg);
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

static int cmd_flags(struct xl_ctx *ctx, int argc, char **argv)
{
	static const struct xl_subcmd subs[] = {
		{ "list", flags_list },
		{ "explain", flags_explain },
		{ "lint", flags_lint },
		{ NULL, NULL },
	};

	return xl_dispatch_sub(ctx, &xl_cmd_flags, subs, argc, argv);
}

const struct xl_cmd xl_cmd_flags = {
	.name = "flags",
	.usage = "list [--family F] [--json]\n"
		 "explain NAME [--json]\n"
		 "lint [--var VAR] [--timing] [--json] STRING",
	.summary = "list, explain and lint runtime flags from the built-in catalogs",
	.help =
		"  list           every cataloged flag and variable: name, family, type, tags\n"
		"    --family F   only family F (xla, libtpu, torch_xla, jax, nccl, runtime)\n"
		"  explain NAME   family, type, values, default, tags, description and source\n"
		"  lint STRING    check a flag string the way its consumer will read it\n"
		"    --var VAR    the variable STRING is meant for (default XLA_FLAGS); a\n"
		"                 variable that is not composite has its value type-checked\n"
		"    --timing     treat debug-tagged flags as errors, as 'policy: timing' does\n"
		"\n"
		"lint exits 0 when it found no error (warnings and notes allowed), 65 when\n"
		"it found at least one error.  explain exits 66 for a name in no catalog.\n",
	.run = cmd_flags,
};
