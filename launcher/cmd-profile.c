/* cmd-profile.c - `xlaunch profile list | show | diff | check` */
#include "launcher/profile.h"

#include <stdlib.h>
#include <string.h>

struct show_opts {
	const char *cand;
	bool explain;
};

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	puts(s);
	free(s);
}

static enum xl_exit profile_list(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct xl_strv names = XL_STRV_INIT, files = XL_STRV_INIT;
	json_t *arr = json_array();

	xl_profile_names(ctx, &names, &files);
	for (size_t i = 0; i < names.n; i++) {
		struct layer *l = NULL;
		int q = xl_verbosity;

		/* a broken file is listed, and `profile check` says why */
		xl_verbosity = -1;
		int lrc = layer_load_file(files.v[i], &l);
		xl_verbosity = q;
		const char *desc = lrc ? "(does not load: see 'xlaunch profile check')"
				       : l->description ? l->description : "";
		if (ctx->json)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:b}", "name", names.v[i],
							     "file", files.v[i], "description", desc,
							     "valid", lrc == 0));
		else if (ctx->verbosity > 0)
			printf("%-20s %-50s %s\n", names.v[i], desc, files.v[i]);
		else
			printf("%-20s %s\n", names.v[i], desc);
		layer_free(l);
	}
	if (ctx->json)
		print_json(arr);
	json_decref(arr);
	xl_strv_release(&names);
	xl_strv_release(&files);
	return 0;
}

static const char *prov_str(struct xl_prov s, char *buf, size_t n)
{
	if (!s.line)
		snprintf(buf, n, "%s", s.file ? s.file : "?");
	else
		snprintf(buf, n, "%s:%u", s.file, s.line);
	return buf;
}

static unsigned resolve_flags(const char *arg)
{
	return strchr(arg, '/') || xl_endswith(arg, ".yaml") ? XL_RESOLVE_FILE : 0;
}

static enum xl_exit profile_show(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct show_opts *o = call->opts;
	bool explain = o->explain;
	struct xl_profile *p;
	char where[1024];
	int rc;

	rc = xl_profile_resolve(ctx, call->argv[0], o->cand, resolve_flags(call->argv[0]), &p);
	if (rc)
		return rc;
	if (ctx->json) {
		json_t *j = xl_profile_to_json(p);

		print_json(j);
		json_decref(j);
		xl_profile_free(p);
		return 0;
	}
	printf("profile:     %s\n", p->name);
	printf("file:        %s\n", p->file);
	if (p->description)
		printf("description: %s\n", p->description);
	printf("chain:      ");
	for (size_t i = 0; i < p->chain.n; i++)
		printf(" %s%s", p->chain.v[i], i + 1 < p->chain.n ? " ->" : "\n");
	if (p->cand >= 0)
		printf("candidate:   %s\n", p->cands[p->cand].name);
	else if (p->ncands) {
		printf("candidates: ");
		for (size_t i = 0; i < p->ncands; i++)
			printf(" %s", p->cands[i].name);
		printf("\n");
	}
	printf("\nenvironment:\n");
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		if (!v->value) {
			printf("  unset %s", v->name);
			if (explain)
				printf("    # %s", prov_str(v->src, where, sizeof(where)));
			printf("\n");
			continue;
		}
		if (v->composite && !v->flags.n)
			continue;
		if (!explain || !v->composite) {
			printf("  %s=%s", v->name, v->value);
			if (explain)
				printf("    # %s", prov_str(v->src, where, sizeof(where)));
			printf("\n");
			continue;
		}
		printf("  %s:\n", v->name);
		for (size_t k = 0; k < v->flags.n; k++) {
			const struct xl_flag *f = &v->flags.v[k];
			char prev[1024];
			const struct xl_flag *first = NULL;

			for (size_t j = 0; j < k && !first; j++)
				if (strcmp(v->flags.v[j].name, f->name) == 0)
					first = &v->flags.v[j];
			printf("    --%s%s%s    # %s", f->name, f->value ? "=" : "",
			       f->value ? f->value : "", prov_str(f->src, where, sizeof(where)));
			/* a list-valued flag: repeated in one value it builds up;
			 * set by several layers, the last layer's value is used */
			if (first)
				printf("; XLA adds it to the list of %s",
				       prov_str(first->src, prev, sizeof(prev)));
			else if (f->prev.file)
				printf("; replaces the list set at %s (the last layer's value is used)",
				       prov_str(f->prev, prev, sizeof(prev)));
			printf("\n");
		}
	}
	printf("\npolicy:      timing=%s cache=%s ambient=%s",
	       p->policy.timing ? "true" : "false",
	       p->policy.cache == XL_CACHE_LOCAL ? "local" : "any",
	       (const char *[]){ "strip", "keep", "warn", "error" }[p->policy.ambient]);
	if (p->policy.bundle.n) {
		printf(" bundle=");
		for (size_t i = 0; i < p->policy.bundle.n; i++)
			printf("%s%s", i ? "," : "", p->policy.bundle.v[i]);
	}
	printf("\n");
	if (p->limits.address_space >= 0 || p->limits.open_files >= 0 || p->limits.core >= 0 ||
	    p->limits.cpu_time >= 0) {
		char b[32];

		printf("limits:     ");
		if (p->limits.address_space >= 0)
			printf(" address_space=%s", p->limits.address_space == INT64_MAX ? "unlimited"
			       : xl_fmt_bytes((uint64_t)p->limits.address_space, b, sizeof(b)));
		if (p->limits.open_files >= 0)
			printf(" open_files=%lld", (long long)p->limits.open_files);
		if (p->limits.core >= 0)
			printf(" core=%s", p->limits.core == INT64_MAX ? "unlimited"
			       : xl_fmt_bytes((uint64_t)p->limits.core, b, sizeof(b)));
		if (p->limits.cpu_time >= 0)
			printf(" cpu_time=%llds", (long long)p->limits.cpu_time);
		printf("\n");
	}
	if (json_object_size(p->signature)) {
		char *s = json_dumps(p->signature, JSON_COMPACT | JSON_PRESERVE_ORDER);

		printf("signature:   %s\n", s);
		free(s);
	}
	if (explain) {
		json_t *def = xl_runtime_defaults(p);
		const char *var;
		json_t *list;
		bool any = false;

		json_object_foreach(def, var, list) {
			size_t i;
			json_t *d;

			if (!json_array_size(list))
				continue;
			if (!any)
				printf("\nadded by the runtime at start when missing (not set by the profile):\n");
			any = true;
			printf("  %s:\n", strcmp(var, "env") == 0 ? "environment" : var);
			json_array_foreach(list, i, d) {
				const char *tok = json_string_value(json_object_get(d, "token"));
				const char *why = json_string_value(json_object_get(d, "why"));
				const char *when = json_string_value(json_object_get(d, "when"));

				const char *val = json_string_value(json_object_get(d, "value"));

				if (tok)
					printf("    %s", tok);
				else
					printf("    %s%s%s", json_string_value(json_object_get(d, "name")),
					       val ? "=" : "", val ? val : "");
				if (when || why)
					printf("    # %s%s%s", when ? when : "", when && why ? "; " : "", why ? why : "");
				printf("\n");
			}
		}
		json_decref(def);
		printf("\nfiles, in the order applied:\n");
		for (size_t i = 0; i < p->chain.n; i++)
			printf("  %-20s %s\n", p->chain.v[i], p->chain_files.v[i]);
	}
	xl_profile_free(p);
	return 0;
}

/* ---- diff ------------------------------------------------------------------- */

static void diff_line(json_t *arr, char sign, const char *var, const char *flag,
		      const char *a, const char *b)
{
	json_t *o = json_pack("{s:s,s:s}", "change", sign == '+' ? "added" : sign == '-' ? "removed" : "changed",
			      "variable", var);

	if (flag)
		json_object_set_new(o, "flag", json_string(flag));
	json_object_set_new(o, "a", a ? json_string(a) : json_null());
	json_object_set_new(o, "b", b ? json_string(b) : json_null());
	json_array_append_new(arr, o);
}

static const char *var_text(const struct xl_var *v)
{
	return !v ? NULL : v->value ? v->value : "(unset)";
}

static enum xl_exit profile_diff(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct xl_profile *pa, *pb;
	json_t *changes = json_array();
	int rc;

	rc = xl_profile_resolve(ctx, call->argv[0], NULL,
				XL_RESOLVE_NO_AMBIENT | resolve_flags(call->argv[0]), &pa);
	if (rc) {
		json_decref(changes);
		return rc;
	}
	rc = xl_profile_resolve(ctx, call->argv[1], NULL,
				XL_RESOLVE_NO_AMBIENT | resolve_flags(call->argv[1]), &pb);
	if (rc) {
		xl_profile_free(pa);
		json_decref(changes);
		return rc;
	}
	/* variables of A in A's order, then those only in B */
	for (int pass = 0; pass < 2; pass++) {
		const struct xl_profile *x = pass ? pb : pa;

		for (size_t i = 0; i < x->nvars; i++) {
			const char *name = x->vars[i].name;
			const struct xl_var *va = xl_profile_var(pa, name);
			const struct xl_var *vb = xl_profile_var(pb, name);

			if (pass && va)
				continue;
			if (!va || !vb) {
				diff_line(changes, va ? '-' : '+', name, NULL, var_text(va), var_text(vb));
				continue;
			}
			if (va->composite && va->value && vb->value) {
				for (size_t k = 0; k < va->flags.n; k++) {
					const struct xl_flag *fa = &va->flags.v[k];
					const struct xl_flag *fb = NULL;
					size_t nth = 0, seen = 0;

					/* a repeated list flag: its n-th token against B's n-th */
					for (size_t j = 0; j < k; j++)
						nth += strcmp(va->flags.v[j].name, fa->name) == 0;
					for (size_t j = 0; j < vb->flags.n && !fb; j++)
						if (strcmp(vb->flags.v[j].name, fa->name) == 0 && seen++ == nth)
							fb = &vb->flags.v[j];

					if (!fb)
						diff_line(changes, '-', name, fa->name, fa->value ? fa->value : "true", NULL);
					else if (!xl_streq(fa->value, fb->value))
						diff_line(changes, '~', name, fa->name, fa->value ? fa->value : "true",
							  fb->value ? fb->value : "true");
				}
				for (size_t k = 0; k < vb->flags.n; k++) {
					size_t nth = 0, seen = 0;

					for (size_t j = 0; j < k; j++)
						nth += strcmp(vb->flags.v[j].name, vb->flags.v[k].name) == 0;
					for (size_t j = 0; j < va->flags.n; j++)
						seen += strcmp(va->flags.v[j].name, vb->flags.v[k].name) == 0;
					if (seen <= nth)
						diff_line(changes, '+', name, vb->flags.v[k].name, NULL,
							  vb->flags.v[k].value ? vb->flags.v[k].value : "true");
				}
				continue;
			}
			if (!xl_streq(va->value, vb->value))
				diff_line(changes, '~', name, NULL, var_text(va), var_text(vb));
		}
	}
	if (ctx->json) {
		json_t *j = json_pack("{s:s,s:s,s:O}", "a", pa->name, "b", pb->name, "changes", changes);

		print_json(j);
		json_decref(j);
	} else {
		size_t i;
		json_t *o;

		printf("--- %s (%s)\n+++ %s (%s)\n", pa->name, pa->file, pb->name, pb->file);
		json_array_foreach(changes, i, o) {
			const char *ch = json_string_value(json_object_get(o, "change"));
			const char *var = json_string_value(json_object_get(o, "variable"));
			const char *flag = json_string_value(json_object_get(o, "flag"));
			const char *a = json_string_value(json_object_get(o, "a"));
			const char *b = json_string_value(json_object_get(o, "b"));
			char sign = ch[0] == 'a' ? '+' : ch[0] == 'r' ? '-' : '~';

			if (flag)
				printf("%c %s --%s: %s -> %s\n", sign, var, flag, a ? a : "(none)", b ? b : "(none)");
			else
				printf("%c %s: %s -> %s\n", sign, var, a ? a : "(none)", b ? b : "(none)");
		}
		if (!json_array_size(changes))
			printf("(no differences)\n");
	}
	rc = json_array_size(changes) ? 1 : 0;
	json_decref(changes);
	xl_profile_free(pa);
	xl_profile_free(pb);
	return rc;
}

/* ---- check -------------------------------------------------------------------- */

static int check_one(struct xl_ctx *ctx, const char *arg, json_t *results)
{
	struct xl_profile *p;
	unsigned fl = XL_RESOLVE_NO_AMBIENT | resolve_flags(arg);
	int rc = xl_profile_resolve(ctx, arg, NULL, fl, &p);
	size_t ncands = 0;

	if (!rc)
		rc = xl_profile_check(ctx, p);
	/* every candidate must resolve and pass too */
	for (size_t i = 0; !rc && i < p->ncands; i++) {
		struct xl_profile *pc;

		rc = xl_profile_resolve(ctx, arg, p->cands[i].name, fl, &pc);
		if (!rc)
			rc = xl_profile_check(ctx, pc);
		xl_profile_free(pc);
		ncands++;
	}
	if (ctx->json)
		json_array_append_new(results, json_pack("{s:s,s:b,s:i,s:i}", "profile", arg, "ok", rc == 0,
							 "exit", rc, "candidates", (int)ncands));
	else if (!rc && xl_verbosity >= 0)
		printf("ok    %s (%s%s%zu candidate%s)\n", p->name, p->file, ", ", ncands,
		       ncands == 1 ? "" : "s");
	else if (rc && xl_verbosity >= 0)
		printf("FAIL  %s\n", arg);
	xl_profile_free(p);
	return rc;
}

static enum xl_exit profile_check(struct xl_ctx *ctx, const struct xl_call *call)
{
	json_t *results = json_array();
	int worst = 0, rc;

	if (!call->argc) {
		struct xl_strv names = XL_STRV_INIT;

		xl_profile_names(ctx, &names, NULL);
		for (size_t i = 0; i < names.n; i++) {
			rc = check_one(ctx, names.v[i], results);
			if (rc && !worst)
				worst = rc;
		}
		xl_strv_release(&names);
	}
	for (int i = 0; i < call->argc; i++) {
		rc = check_one(ctx, call->argv[i], results);
		if (rc && !worst)
			worst = rc;
	}
	if (ctx->json)
		print_json(results);
	json_decref(results);
	return worst;
}

static const struct xl_cmd profile_list_cmd = {
	.name = "list",
	.summary = "every profile on the search path (first match wins)",
	.json = "an array of {name, file, description, valid}",
	.help = "With -v, the file each name resolves to.\n",
	.run = profile_list,
};

static const struct xl_opt show_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct show_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "apply this candidate of the profile last" },
	XL_OPTION_FLAG('e', "explain", struct show_opts, explain,
		       "the file and line that set every variable and flag token,\n"
		       "what the runtime adds on its own at start, and the files applied"),
	XL_OPTION_END,
};

static const struct xl_cmd profile_show_cmd = {
	.name = "show",
	.summary = "the resolved profile",
	.operands = "PROFILE",
	.json = "the resolved profile: {profile, file, chain, env, unset, sources, flags,\n"
		"policy, limits, signature, candidate, candidates, notes}",
	.help = "A PROFILE with a '/' or ending in .yaml is read as a file.\n",
	.options = show_options,
	XL_CMD_OPTS(struct show_opts, NULL),
	.run = profile_show,
};

static const struct xl_cmd profile_diff_cmd = {
	.name = "diff",
	.summary = "compare two resolved profiles variable by variable and flag by flag",
	.operands = "A B",
	.json = "{a, b, changes: [{change, variable, flag, a, b}]}",
	.epilog = "Exit status: 0 when they are the same, 1 when they differ.\n",
	.run = profile_diff,
};

static const struct xl_cmd profile_check_cmd = {
	.name = "check",
	.summary = "resolve and check profiles and each of their candidates",
	.operands = "[PROFILE|FILE...]",
	.json = "an array of {profile, ok, exit, candidates}",
	.help = "Checks every profile on the path when none is named.  A name with a '/'\n"
		"or ending in .yaml is read as a file.\n",
	.epilog = "Exit status: 0 when all pass, else the first failure's (65, 66, 77, 78).\n",
	.run = profile_check,
};

static const struct xl_cmd *const profile_subs[] = {
	&profile_list_cmd, &profile_show_cmd, &profile_diff_cmd, &profile_check_cmd, NULL,
};

const struct xl_cmd xl_cmd_profile = {
	.name = "profile",
	.summary = "list, show, compare and check named profiles",
	.epilog =
		"The search path: --profile-path, XLAUNCH_PROFILE_PATH, ./profiles,\n"
		"$XDG_CONFIG_HOME/xlaunch/profiles, then the installed profiles.\n",
	.subs = profile_subs,
};
