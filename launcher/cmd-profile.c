/* cmd-profile.c - `xlaunch profile list | show | diff | check` */
#include "launcher/run/run.h"
#include "bundle/bundle.h"

#include <stdlib.h>
#include <string.h>

struct show_opts {
	const char *cand;
	bool explain;
	struct xl_override_list set, flag;
};

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	puts(s);
	free(s);
}

/* Says on stderr where profiles were looked for, when none was found. */
static void warn_no_profiles(const struct xl_ctx *ctx)
{
	char *path = xl_profile_search_path_str(ctx);

	xl_warn("no profile on the profile path (%s; the data directory %s (%s) has none in "
		"profiles/)", path, xl_data_dir(), xl_data_dir_how());
	free(path);
}

static enum xl_exit profile_list(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct xl_strv names = XL_STRV_INIT, files = XL_STRV_INIT;
	json_t *arr = json_array();

	xl_profile_names(ctx, &names, &files);
	for (size_t i = 0; i < names.n; i++) {
		char *d = NULL;
		int q = xl_verbosity;

		/* a broken file is listed, and `profile check` says why */
		xl_verbosity = -1;
		int lrc = xl_profile_describe(files.v[i], &d);
		xl_verbosity = q;
		const char *desc = lrc ? "(does not load: see 'xlaunch profile check')" : d ? d : "";
		if (ctx->json)
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:b}", "name", names.v[i],
							     "file", files.v[i], "description", desc,
							     "valid", lrc == 0));
		else if (ctx->verbosity > 0)
			printf("%-20s %-50s %s\n", names.v[i], desc, files.v[i]);
		else
			printf("%-20s %s\n", names.v[i], desc);
		free(d);
	}
	if (!names.n)
		warn_no_profiles(ctx);
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

/* The candidate's args, appended to the command; with explain, where
 * they were set. */
static void show_args(const struct xl_profile *p, bool explain)
{
	const struct xl_strv *a = xl_profile_args(p);
	char where[1024];

	if (!a)
		return;
	printf("args:       ");
	for (size_t i = 0; i < a->n; i++) {
		char *q = xl_sh_quote(a->v[i]);

		printf(" %s", q);
		free(q);
	}
	if (explain)
		printf("    # %s; appended to the command after its own arguments",
		       prov_str(p->cands[p->cand].args_src, where, sizeof(where)));
	printf("\n");
}

/* The header: name, file, description, chain, candidates. */
static void show_head(const struct xl_profile *p)
{
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
}

/* A composite variable flag by flag, each with where it was set. */
static void show_flags(const struct xl_var *v)
{
	char where[1024], prev[1024];

	printf("  %s:\n", v->name);
	for (size_t k = 0; k < v->flags.n; k++) {
		const struct xl_flag *f = &v->flags.v[k];
		const struct xl_flag *first = NULL;

		for (size_t j = 0; j < k && !first; j++)
			if (strcmp(v->flags.v[j].name, f->name) == 0)
				first = &v->flags.v[j];
		printf("    --%s%s%s    # %s", f->name, f->value ? "=" : "",
		       f->value ? f->value : "", prov_str(f->src, where, sizeof(where)));
		/* a list-valued flag: repeated in one value it builds up; set
		 * by several layers, the last layer's value is used */
		if (first)
			printf("; XLA adds it to the list of %s",
			       prov_str(first->src, prev, sizeof(prev)));
		else if (f->prev.file)
			printf("; replaces the list set at %s (the last layer's value is used)",
			       prov_str(f->prev, prev, sizeof(prev)));
		printf("\n");
	}
}

/* The environment; with explain, where each value was set. */
static void show_env(const struct xl_profile *p, bool explain)
{
	char where[1024];

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
			for (size_t k = 0; explain && k < v->chosen_by.n; k++)
				printf("%s%s", k ? ", " : "; ", v->chosen_by.v[k]);
			printf("\n");
			continue;
		}
		show_flags(v);
	}
}

/* Policy and limits. */
static void show_policy_limits(const struct xl_profile *p)
{
	char b[32];

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
	if (p->limits.address_space < 0 && p->limits.open_files < 0 && p->limits.core < 0 &&
	    p->limits.cpu_time < 0 && p->limits.memory < 0)
		return;
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
	if (p->limits.memory >= 0)
		printf(" memory=%s", p->limits.memory == INT64_MAX ? "unlimited"
		       : xl_fmt_bytes((uint64_t)p->limits.memory, b, sizeof(b)));
	printf("\n");
}

/* The compile section; with explain, where each setting was set. */
static void show_compile(const struct xl_profile *p, bool explain)
{
	const struct xl_compile_cfg *c = &p->compile;
	char where[1024];

	if (!c->step_pattern && c->warmup_steps < 0 && c->max_after_warmup < 0 && c->max_compile_share <= 0 &&
	    c->on_storm == XL_ON_STORM_UNSET && c->early_oom == XL_EARLY_OOM_UNSET)
		return;
	printf("compile:    ");
	if (c->step_pattern)
		printf(" step_pattern='%s'", c->step_pattern);
	if (c->warmup_steps >= 0)
		printf(" warmup_steps=%ld", c->warmup_steps);
	if (c->max_after_warmup >= 0)
		printf(" max_after_warmup=%ld", c->max_after_warmup);
	if (c->max_compile_share > 0)
		printf(" max_compile_share=%g", c->max_compile_share);
	if (c->on_storm != XL_ON_STORM_UNSET)
		printf(" on_storm=%s", c->on_storm == XL_ON_STORM_STOP ? "stop" : "warn");
	if (c->early_oom != XL_EARLY_OOM_UNSET)
		printf(" early_oom=%s", c->early_oom == XL_EARLY_OOM_ON ? "true" : "false");
	printf("\n");
	if (!explain)
		return;
	if (c->step_pattern)
		printf("  step_pattern        # %s\n", prov_str(c->step_pattern_src, where, sizeof(where)));
	if (c->warmup_steps >= 0)
		printf("  warmup_steps        # %s\n", prov_str(c->warmup_steps_src, where, sizeof(where)));
	if (c->max_after_warmup >= 0)
		printf("  max_after_warmup    # %s\n", prov_str(c->max_after_warmup_src, where, sizeof(where)));
	if (c->max_compile_share > 0)
		printf("  max_compile_share   # %s\n", prov_str(c->max_compile_share_src, where, sizeof(where)));
	if (c->on_storm != XL_ON_STORM_UNSET)
		printf("  on_storm            # %s\n", prov_str(c->on_storm_src, where, sizeof(where)));
	if (c->early_oom != XL_EARLY_OOM_UNSET)
		printf("  early_oom           # %s\n", prov_str(c->early_oom_src, where, sizeof(where)));
}

/* The ranks section, when the profile sets any of it (else the defaults
 * apply: `xlaunch help run`); with explain, where each setting was set. */
static void show_ranks(const struct xl_profile *p, bool explain)
{
	const struct xl_ranks_cfg *c = &p->ranks;
	char where[1024];

	if (!c->watch_src.file && !c->grace_src.file && !c->poll_src.file && !c->lease_src.file)
		return;
	printf("ranks:       watch=%s grace=%gs poll=%gs lease=%gs\n", c->watch ? "true" : "false",
	       c->grace_s, c->poll_s, c->lease_s);
	if (!explain)
		return;
#define RANKS_SRC(f) \
	printf("  %-18s  # %s\n", #f, c->f##_src.file ? prov_str(c->f##_src, where, sizeof(where)) \
							   : "default")
	RANKS_SRC(watch);
	RANKS_SRC(grace);
	RANKS_SRC(poll);
	RANKS_SRC(lease);
#undef RANKS_SRC
}

/* What each variable and flag is judged against (--explain): the release
 * the job will load, as `exec` and `run` find it without a command
 * ($VIRTUAL_ENV's Python, else python3 on PATH, in the environment the
 * profile gives the job). */
static void show_judged(const struct xl_profile *p, const struct xl_judge *j)
{
	bool head = false;

	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];
		struct xl_rel_verdict rv;
		char *against = NULL;

		if (!v->value)
			continue;
		if (strcmp(v->name, "XLA_FLAGS") == 0) {
			against = xl_judge_str(j, xl_family_index("xla"));
		} else if (strcmp(v->name, "LIBTPU_INIT_ARGS") == 0) {
			against = xl_judge_str(j, xl_family_index("libtpu"));
		} else if (!v->composite) {
			(void)xl_catalog_env_at(j, v->name, &rv);
			if (rv.family >= 0)
				against = xl_judge_str(j, rv.family);
			xl_rel_verdict_release(&rv);
		}
		if (!against)
			continue;
		if (!head)
			printf("\njudged against (the release the job will load):\n");
		head = true;
		printf("  %-28s %s\n", v->name, against);
		free(against);
		for (size_t k = 0; v->composite && k < v->flags.n; k++) {
			if (!xl_catalog_flag_at(j, v->name, v->flags.v[k].name, &rv) && rv.why)
				printf("    --%s: %s\n", v->flags.v[k].name, rv.why);
			xl_rel_verdict_release(&rv);
		}
	}
	if (head)
		printf("  (XLA's value rules: the reader model of jaxlib %s's XLA; LIBTPU_INIT_ARGS: libtpu's own reader)\n",
		       xl_knowledge_pinned("jaxlib"));
}

/* Which runtime --explain assumes the job loads, for what that runtime adds
 * at start: the profile says it (xl_runtime_defaults), and the interpreter
 * the launch would start, where one is found, must have it.  Returns false
 * (said) when nothing is to be added. */
static bool runtime_assumed(const struct xl_profile *p, const struct xl_runtime *rt)
{
	bool all;

	if (!(xl_profile_needs(p, &all, NULL) & XL_NEEDS_TORCH_XLA))
		return false;
	if (!rt->python || rt->why) {
		printf("\nruntime assumed: PyTorch/XLA, from the profile (no interpreter to ask: %s)\n",
		       rt->why ? rt->why : "none found");
		return true;
	}
	if (rt->torch_xla) {
		printf("\nruntime assumed: PyTorch/XLA (%s has torch_xla %s)\n", rt->python, rt->torch_xla);
		return true;
	}
	printf("\nruntime assumed: %s (%s, found by %s, has no torch_xla): PyTorch/XLA's start-up "
	       "additions left out\n", rt->jax || rt->jaxlib ? "JAX" : "neither JAX nor PyTorch/XLA",
	       rt->python, rt->source);
	return false;
}

/* What the runtime adds on its own at start (--explain). */
static void show_runtime_defaults(const struct xl_profile *p, const struct xl_runtime *rt)
{
	json_t *def;
	const char *var;
	json_t *list;
	bool any = false;

	if (!runtime_assumed(p, rt))
		return;
	def = xl_runtime_defaults(p);
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
}

static enum xl_exit profile_show(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct show_opts *o = call->opts;
	struct xl_profile *p;
	struct xl_runtime rt;
	struct xl_judge jd;
	int rc;

	xl_profile_set_overrides(o->set.v, o->set.n, o->flag.v, o->flag.n);
	rc = xl_profile_resolve(ctx, call->argv[0], o->cand, resolve_flags(call->argv[0]), &p);
	if (rc)
		return rc;
	xl_bundle_cache_readonly();             /* showing creates nothing */
	xl_profile_detect_runtime(p, NULL, 0, &rt);
	xl_judge_init(&jd, &rt);
	if (ctx->json) {
		json_t *j = xl_profile_to_json(p);

		json_object_set_new(j, "release", xl_judge_json(&jd));
		print_json(j);
		json_decref(j);
		xl_profile_free(p);
		xl_runtime_release(&rt);
		return 0;
	}
	show_head(p);
	show_args(p, o->explain);
	show_env(p, o->explain);
	show_policy_limits(p);
	show_compile(p, o->explain);
	show_ranks(p, o->explain);
	if (json_object_size(p->signature)) {
		char *s = json_dumps(p->signature, JSON_COMPACT | JSON_PRESERVE_ORDER);

		printf("signature:   %s\n", s);
		free(s);
	}
	if (o->explain) {
		show_judged(p, &jd);
		show_runtime_defaults(p, &rt);
		printf("\nfiles, in the order applied:\n");
		for (size_t i = 0; i < p->chain.n; i++)
			printf("  %-20s %s\n", p->chain.v[i], p->chain_files.v[i]);
		xl_run_explain_storms(ctx, p);
	}
	xl_profile_free(p);
	xl_runtime_release(&rt);
	return 0;
}

/* ---- diff ------------------------------------------------------------------- */

/* Every difference is one object: {section, change, [candidate], [variable,
 * flag] or [key], a, b, invalidates: [caches whose key it changes]}. */
static void add_change(json_t *arr, const char *section, char sign, const char *cand,
		       const char *var, const char *flag, const char *key, json_t *a, json_t *b)
{
	json_t *o = json_pack("{s:s,s:s}", "section", section, "change",
			      sign == '+' ? "added" : sign == '-' ? "removed" : sign == '^' ? "reordered" : "changed");

	if (cand)
		json_object_set_new(o, "candidate", json_string(cand));
	if (var)
		json_object_set_new(o, "variable", json_string(var));
	if (flag)
		json_object_set_new(o, "flag", json_string(flag));
	if (key)
		json_object_set_new(o, "key", json_string(key));
	json_object_set_new(o, "a", a ? a : json_null());
	json_object_set_new(o, "b", b ? b : json_null());
	json_object_set_new(o, "invalidates", json_array());
	json_array_append_new(arr, o);
}

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The caches whose key a change of a plain variable, or of one flag token
 * (a and b: the values, NULL when absent, "" for a bare flag), changes. */
static void mark_invalidates(json_t *change, const char *var, const char *flag, const char *a,
			     const char *b)
{
	json_t *inv = json_object_get(change, "invalidates");

	for (size_t k = 0; k < xl_ck_nruntimes; k++) {
		const struct xl_ck_runtime *r = &xl_ck_runtimes[k];
		bool hit = flag ? xl_ck_flag_invalidates(r, var, flag, a, b) : xl_ck_var_invalidates(r, var);

		if (hit)
			json_array_append_new(inv, json_string(r->name));
	}
}

/* Marks change with every cache that one of the tokens of composite var v
 * (present on one side only) enters. */
static void mark_composite(json_t *change, const struct xl_var *v, bool in_a)
{
	json_t *inv = json_object_get(change, "invalidates");

	for (size_t k = 0; k < xl_ck_nruntimes; k++) {
		const struct xl_ck_runtime *r = &xl_ck_runtimes[k];
		bool hit = false;

		for (size_t i = 0; v && i < v->flags.n && !hit; i++) {
			const char *val = v->flags.v[i].value ? v->flags.v[i].value : "";

			hit = in_a ? xl_ck_flag_invalidates(r, v->name, v->flags.v[i].name, val, NULL)
				   : xl_ck_flag_invalidates(r, v->name, v->flags.v[i].name, NULL, val);
		}
		if (hit)
			json_array_append_new(inv, json_string(r->name));
	}
}

static const char *var_text(const struct xl_var *v)
{
	return !v ? NULL : v->value ? v->value : "(unset)";
}

static json_t *last(json_t *arr)
{
	return json_array_get(arr, json_array_size(arr) - 1);
}

/* Variables and flag tokens: A's in A's order, then those only in B. */
static void diff_env(json_t *changes, const char *cand, const struct xl_profile *pa,
		     const struct xl_profile *pb)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct xl_profile *x = pass ? pb : pa;

		for (size_t i = 0; i < x->nvars; i++) {
			const char *name = x->vars[i].name;
			const struct xl_var *va = xl_profile_var(pa, name);
			const struct xl_var *vb = xl_profile_var(pb, name);

			if (pass && va)
				continue;
			if (!va || !vb) {
				add_change(changes, "env", va ? '-' : '+', cand, name, NULL, NULL,
					   jstr_or_null(var_text(va)), jstr_or_null(var_text(vb)));
				if ((va ? va : vb)->composite)
					mark_composite(last(changes), va ? va : vb, va != NULL);
				else
					mark_invalidates(last(changes), name, NULL, NULL, NULL);
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

					if (!fb) {
						add_change(changes, "env", '-', cand, name, fa->name, NULL,
							   json_string(fa->value ? fa->value : "true"), NULL);
						mark_invalidates(last(changes), name, fa->name,
								 fa->value ? fa->value : "", NULL);
					} else if (!xl_streq(fa->value, fb->value)) {
						add_change(changes, "env", '~', cand, name, fa->name, NULL,
							   json_string(fa->value ? fa->value : "true"),
							   json_string(fb->value ? fb->value : "true"));
						mark_invalidates(last(changes), name, fa->name,
								 fa->value ? fa->value : "", fb->value ? fb->value : "");
					}
				}
				for (size_t k = 0; k < vb->flags.n; k++) {
					const struct xl_flag *fb = &vb->flags.v[k];
					size_t nth = 0, seen = 0;

					for (size_t j = 0; j < k; j++)
						nth += strcmp(vb->flags.v[j].name, fb->name) == 0;
					for (size_t j = 0; j < va->flags.n; j++)
						seen += strcmp(va->flags.v[j].name, fb->name) == 0;
					if (seen <= nth) {
						add_change(changes, "env", '+', cand, name, fb->name, NULL, NULL,
							   json_string(fb->value ? fb->value : "true"));
						mark_invalidates(last(changes), name, fb->name, NULL,
								 fb->value ? fb->value : "");
					}
				}
				continue;
			}
			if (!xl_streq(va->value, vb->value)) {
				add_change(changes, "env", '~', cand, name, NULL, NULL,
					   jstr_or_null(var_text(va)), jstr_or_null(var_text(vb)));
				if (va->composite || vb->composite) {
					mark_composite(last(changes), va, true);
					mark_composite(last(changes), vb, false);
				} else {
					mark_invalidates(last(changes), name, NULL, NULL, NULL);
				}
			}
		}
	}
}

/* Two JSON objects key by key, nested objects as dotted keys. */
static void diff_object(json_t *changes, const char *section, const char *cand, const char *prefix,
			json_t *a, json_t *b)
{
	const char *k;
	json_t *va, *vb;

	for (int pass = 0; pass < 2; pass++) {
		json_t *x = pass ? b : a;

		json_object_foreach(x, k, va) {
			char *key = prefix ? xl_asprintf("%s.%s", prefix, k) : xl_strdup(k);

			(void)va;
			va = json_object_get(a, k);
			vb = json_object_get(b, k);
			if (pass && va) {
				free(key);
				continue;
			}
			if (json_is_object(va) && json_is_object(vb))
				diff_object(changes, section, cand, key, va, vb);
			else if (!va || !vb)
				add_change(changes, section, va ? '-' : '+', cand, NULL, NULL, key,
					   va ? json_incref(va) : NULL, vb ? json_incref(vb) : NULL);
			else if (!json_equal(va, vb))
				add_change(changes, section, '~', cand, NULL, NULL, key, json_incref(va),
					   json_incref(vb));
			free(key);
		}
	}
}

/* What a candidate launches, less what already differs between the profiles. */
static int diff_candidates(struct xl_ctx *ctx, const struct xl_call *call, json_t *changes,
			   const struct xl_profile *pa, const struct xl_profile *pb)
{
	json_t *na = json_array(), *nb = json_array();
	size_t nbase = json_array_size(changes);
	int rc = 0;

	for (size_t i = 0; i < pa->ncands; i++)
		json_array_append_new(na, json_string(pa->cands[i].name));
	for (size_t i = 0; i < pb->ncands; i++)
		json_array_append_new(nb, json_string(pb->cands[i].name));
	for (size_t i = 0; i < pa->ncands; i++)
		if (xl_profile_find_candidate(pb, pa->cands[i].name) < 0)
			add_change(changes, "candidates", '-', pa->cands[i].name, NULL, NULL, NULL,
				   json_string(pa->cands[i].name), NULL);
	for (size_t i = 0; i < pb->ncands; i++)
		if (xl_profile_find_candidate(pa, pb->cands[i].name) < 0)
			add_change(changes, "candidates", '+', pb->cands[i].name, NULL, NULL, NULL, NULL,
				   json_string(pb->cands[i].name));
	if (json_array_size(changes) == nbase && !json_equal(na, nb))
		add_change(changes, "candidates", '^', NULL, NULL, NULL, "order", json_incref(na),
			   json_incref(nb));
	for (size_t i = 0; i < pa->ncands && !rc; i++) {
		const char *c = pa->cands[i].name;
		struct xl_profile *ca = NULL, *cb = NULL;
		json_t *sub, *la, *lb, *ja, *jb, *o;
		size_t k;

		if (xl_profile_find_candidate(pb, c) < 0)
			continue;
		rc = xl_profile_resolve(ctx, call->argv[0], c, XL_RESOLVE_NO_AMBIENT | resolve_flags(call->argv[0]), &ca);
		if (!rc)
			rc = xl_profile_resolve(ctx, call->argv[1], c, XL_RESOLVE_NO_AMBIENT | resolve_flags(call->argv[1]), &cb);
		if (rc) {
			xl_profile_free(ca);
			break;
		}
		sub = json_array();
		diff_env(sub, c, ca, cb);
		ja = xl_profile_to_json(ca);
		jb = xl_profile_to_json(cb);
		la = json_object_get(ja, "limits");
		lb = json_object_get(jb, "limits");
		diff_object(sub, "limits", c, NULL, la, lb);
		diff_object(sub, "signature", c, NULL, ca->signature, cb->signature);
		json_decref(ja);
		json_decref(jb);
		/* a difference the profiles already show is not repeated per candidate */
		json_array_foreach(sub, k, o) {
			bool dup = false;

			for (size_t j = 0; j < nbase && !dup; j++) {
				json_t *base = json_deep_copy(json_array_get(changes, j));

				json_object_set_new(base, "candidate", json_string(c));
				dup = json_equal(base, o);
				json_decref(base);
			}
			if (!dup)
				json_array_append(changes, o);
		}
		json_decref(sub);
		xl_profile_free(ca);
		xl_profile_free(cb);
	}
	json_decref(na);
	json_decref(nb);
	return rc;
}

static char *value_text(json_t *v)
{
	if (!v || json_is_null(v))
		return xl_strdup("(none)");
	if (json_is_string(v))
		return xl_strdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static enum xl_exit profile_diff(struct xl_ctx *ctx, const struct xl_call *call)
{
	struct xl_profile *pa, *pb;
	json_t *changes = json_array(), *ja, *jb;
	struct xl_runtime rt;
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
	diff_env(changes, NULL, pa, pb);
	ja = xl_profile_to_json(pa);
	jb = xl_profile_to_json(pb);
	diff_object(changes, "policy", NULL, NULL, json_object_get(ja, "policy"), json_object_get(jb, "policy"));
	diff_object(changes, "limits", NULL, NULL, json_object_get(ja, "limits"), json_object_get(jb, "limits"));
	diff_object(changes, "compile", NULL, NULL, json_object_get(ja, "compile"), json_object_get(jb, "compile"));
	diff_object(changes, "ranks", NULL, NULL, json_object_get(ja, "ranks"), json_object_get(jb, "ranks"));
	diff_object(changes, "signature", NULL, NULL, pa->signature, pb->signature);
	json_decref(ja);
	json_decref(jb);
	rc = diff_candidates(ctx, call, changes, pa, pb);
	if (rc) {
		json_decref(changes);
		xl_profile_free(pa);
		xl_profile_free(pb);
		return rc;
	}
	/* the cold-cache marks follow rules read from one release of each
	 * runtime: say so when this machine's Python has another (the one b's
	 * environment finds: the job the diff leads to) */
	xl_bundle_cache_readonly();
	xl_profile_detect_runtime(pb, NULL, 0, &rt);
	if (ctx->json) {
		json_t *j = json_pack("{s:s,s:s,s:O,s:o}", "a", pa->name, "b", pb->name, "changes",
				      changes, "cache_rules", xl_ck_rules_json(&rt));

		print_json(j);
		json_decref(j);
	} else {
		for (size_t k = 0; k < xl_ck_nruntimes; k++) {
			char *note = xl_ck_rules_for(&xl_ck_runtimes[k], &rt);

			if (note)
				xl_info("%s", note);
			free(note);
		}
		size_t i;
		json_t *o;

		printf("--- %s (%s)\n+++ %s (%s)\n", pa->name, pa->file, pb->name, pb->file);
		json_array_foreach(changes, i, o) {
			const char *sec = json_string_value(json_object_get(o, "section"));
			const char *ch = json_string_value(json_object_get(o, "change"));
			const char *cand = json_string_value(json_object_get(o, "candidate"));
			const char *var = json_string_value(json_object_get(o, "variable"));
			const char *flag = json_string_value(json_object_get(o, "flag"));
			const char *key = json_string_value(json_object_get(o, "key"));
			char *a = value_text(json_object_get(o, "a")), *b = value_text(json_object_get(o, "b"));
			json_t *inv = json_object_get(o, "invalidates");
			char sign = ch[0] == 'a' ? '+' : ch[0] == 'r' && ch[2] == 'm' ? '-' : '~';

			printf("%c ", sign);
			if (strcmp(sec, "candidates") == 0 && !key)
				printf("candidate %s\n", sign == '+' ? b : a);
			else {
				if (cand)
					printf("candidate %s: ", cand);
				if (flag)
					printf("%s --%s: %s -> %s", var, flag, a, b);
				else if (var)
					printf("%s: %s -> %s", var, a, b);
				else
					printf("%s.%s: %s -> %s", sec, key, a, b);
				if (json_array_size(inv)) {
					size_t k;
					json_t *n;

					printf("    (cold cache: ");
					json_array_foreach(inv, k, n)
						printf("%s%s", k ? ", " : "", json_string_value(n));
					printf(")");
				}
				printf("\n");
			}
			free(a);
			free(b);
		}
		if (!json_array_size(changes))
			printf("(no differences)\n");
	}
	rc = json_array_size(changes) ? 1 : 0;
	json_decref(changes);
	xl_profile_free(pa);
	xl_profile_free(pb);
	xl_runtime_release(&rt);
	return rc;
}

/* ---- check -------------------------------------------------------------------- */

/* Checks p against the release its job would load without a command,
 * found in the environment p gives it. */
static int check_against_own(struct xl_ctx *ctx, struct xl_profile *p)
{
	struct xl_runtime rt;
	int rc;

	xl_profile_detect_runtime(p, NULL, 0, &rt);
	p->runtime = &rt;
	rc = xl_profile_check(ctx, p);
	p->runtime = NULL;
	xl_runtime_release(&rt);
	return rc;
}

static int check_one(struct xl_ctx *ctx, const char *arg, json_t *results)
{
	struct xl_profile *p;
	unsigned fl = XL_RESOLVE_NO_AMBIENT | resolve_flags(arg);
	int rc = xl_profile_resolve(ctx, arg, NULL, fl, &p);
	size_t ncands = 0;

	if (!rc)
		rc = check_against_own(ctx, p);
	/* every candidate must resolve and pass too */
	for (size_t i = 0; !rc && i < p->ncands; i++) {
		struct xl_profile *pc;

		rc = xl_profile_resolve(ctx, arg, p->cands[i].name, fl, &pc);
		if (!rc)
			rc = check_against_own(ctx, pc);
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

	xl_bundle_cache_readonly();             /* checking creates nothing */
	if (!call->argc) {
		struct xl_strv names = XL_STRV_INIT;

		xl_profile_names(ctx, &names, NULL);
		if (!names.n)
			warn_no_profiles(ctx);
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
		       "what the runtime adds on its own at start, the files applied,\n"
		       "and the debug profile to add when the store has a compile\n"
		       "storm of this profile seen without compile logging"),
	XL_OPTION_CALLBACK(0, "set", "VAR=VALUE", struct show_opts, set, struct xl_override_list,
			   xl_opt_override_set, "VAR=VALUE with a valid variable name (at most 64)",
			   "set VAR as run and exec --set would, after the profile and its candidate\n"
			   "(repeatable; checked, explained and signed as a profile's)"),
	XL_OPTION_CALLBACK(0, "flag", "VAR:NAME=VALUE", struct show_opts, flag, struct xl_override_list,
			   xl_opt_override_flag, "VAR:NAME=VALUE, VAR one of XLA_FLAGS, LIBTPU_INIT_ARGS, TF_XLA_FLAGS (at most 64)",
			   "set flag NAME of VAR as run and exec --flag would,\n"
			   "as a profile's flags: section would (repeatable)"),
	XL_OPTION_END,
};

static const struct xl_cmd profile_show_cmd = {
	.name = "show",
	.summary = "the resolved profile",
	.operands = "PROFILE",
	.json = "the resolved profile: {profile, file, chain, env, unset, sources, flags,\n"
		"policy, limits, compile, ranks, signature, candidate, candidates, notes}",
	.help = "A PROFILE with a '/' or ending in .yaml is read as a file.\n",
	.options = show_options,
	XL_CMD_OPTS(struct show_opts, NULL),
	.run = profile_show,
};

static const struct xl_cmd profile_diff_cmd = {
	.name = "diff",
	.summary = "compare two resolved profiles, every section",
	.operands = "A B",
	.json = "{a, b, changes: [{section, change, candidate, variable, flag, key, a, b,\n"
		"invalidates}]}",
	.help = "Variable by variable and flag by flag, then policy, limits, compile, ranks,\n"
		"signature and candidates (each candidate as it launches).  A difference\n"
		"that changes the key of a persistent compile cache (etc/cachekeys.yaml)\n"
		"says which: that cache is cold for the other profile.\n",
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
