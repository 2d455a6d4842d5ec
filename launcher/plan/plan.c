/* plan.c - resolve every candidate of a profile, compute its signature
 * parts and limits and ask the store for the order (see plan.h). */
#include "launcher/plan/plan.h"
#include "launcher/plan/job.h"
#include "launcher/flags/flags.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Settings that cannot change what a job needs, only where it keeps
 * things: cache and dump paths.  A variable tagged cache in the catalogs, or
 * named like one (*_CACHE_DIR, *_CACHE_PATH, *_DUMP_TO, *_DUMP_DIR). */
static bool path_setting_var(const char *name)
{
	const struct xl_flagdef *d = xl_catalog_env(name);

	return (d && (d->tags & XL_FTAG_CACHE)) || xl_endswith(name, "_CACHE_DIR") ||
	       xl_endswith(name, "_CACHE_PATH") || xl_endswith(name, "_DUMP_TO") ||
	       xl_endswith(name, "_DUMP_IR_TO") || xl_endswith(name, "_DUMP_DIR");
}

/* A flag of a composite variable that only says where: xla_dump_* and
 * flags tagged cache. */
static bool path_setting_flag(const char *var, const char *name)
{
	const struct xl_flagdef *d = xl_catalog_flag(var, name);

	return xl_startswith(name, "xla_dump_") || (d && (d->tags & XL_FTAG_CACHE));
}

/* The candidate's args after the command's own in parts.argv (a copy: the
 * job's argv is shared with every candidate's parts), and how many there
 * are in parts.candidate_args, so that the command alone can be taken back
 * from a recorded signature.  Nothing changes without args. */
static void add_candidate_args(const struct xl_profile *p, json_t *parts)
{
	const struct xl_strv *a = xl_profile_args(p);
	json_t *argv;

	if (!a)
		return;
	argv = json_object_get(parts, "argv");
	argv = json_is_array(argv) ? json_deep_copy(argv) : json_array();
	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(argv, json_string(a->v[i]));
	json_object_set_new(parts, "argv", argv);
	json_object_set_new(parts, "candidate_args", json_integer((json_int_t)a->n));
}

/* The signature parts of a resolved profile: model, train, parallel,
 * features, hardware (from signature.device), toggles ({env: the managed
 * variables less cache and dump paths, limits: {address_space}}) and the
 * job's own parts ({argv, code, bundle} of launcher/plan/job.h; NULL: none).
 * New reference. */
static json_t *signature_parts(const struct xl_profile *p, const json_t *job)
{
	json_t *parts = json_object(), *env = json_object(), *toggles, *limits;
	static const char *const secs[] = { "model", "train", "parallel", "features" };
	json_t *dev = json_object_get(p->signature, "device");

	for (size_t i = 0; i < 4; i++) {
		json_t *s = json_object_get(p->signature, secs[i]);

		if (s)
			json_object_set_new(parts, secs[i], json_deep_copy(s));
	}
	if (dev)
		json_object_set_new(parts, "hardware", json_deep_copy(dev));
	for (size_t i = 0; i < p->nvars; i++) {
		const struct xl_var *v = &p->vars[i];

		if (path_setting_var(v->name))
			continue;
		if (v->composite && v->value) {
			struct xl_flagmap kept = { 0 };
			char *s;

			for (size_t k = 0; k < v->flags.n; k++)
				if (!path_setting_flag(v->name, v->flags.v[k].name))
					xl_flagmap_add(&kept, v->flags.v[k].name, v->flags.v[k].value,
						       v->flags.v[k].src);
			s = xl_flagmap_format(&kept);
			json_object_set_new(env, v->name, json_string(s));
			free(s);
			xl_flagmap_release(&kept);
			continue;
		}
		json_object_set_new(env, v->name, v->value ? json_string(v->value) : json_null());
	}
	toggles = json_pack("{s:o}", "env", env);
	/* limits change what fits, not what the job needs: in the signature,
	 * out of the family */
	limits = json_object();
	if (p->limits.address_space >= 0)
		json_object_set_new(limits, "address_space", json_integer(p->limits.address_space));
	if (p->limits.memory >= 0)
		json_object_set_new(limits, "memory", json_integer(p->limits.memory));
	if (json_object_size(limits))
		json_object_set_new(toggles, "limits", limits);
	else
		json_decref(limits);
	json_object_set_new(parts, "toggles", toggles);
	if (job) {
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)job, k, x)
			json_object_set(parts, k, x);
	}
	add_candidate_args(p, parts);
	return parts;
}

/* The values of the options signature.inert_args names ("--steps
 * --log-every", spaces or commas between) left out of parts.argv: "--steps
 * 100" and "--steps=100" are kept as "--steps *" and "--steps=*", so that
 * a change of them keeps the signature and the family's history. */
static void drop_inert_args(const struct xl_profile *p, json_t *parts)
{
	const char *names = json_string_value(json_object_get(p->signature, "inert_args"));
	json_t *argv = json_object_get(parts, "argv");
	struct xl_strv v = XL_STRV_INIT;

	if (!names || !json_is_array(argv))
		return;
	/* the job's argv is shared with every candidate's parts */
	argv = json_deep_copy(argv);
	json_object_set_new(parts, "argv", argv);
	xl_strv_split(&v, names, " ,");
	for (size_t i = 1; i < json_array_size(argv); i++) {
		const char *a = json_string_value(json_array_get(argv, i));

		for (size_t k = 0; a && k < v.n; k++) {
			size_t l = strlen(v.v[k]);

			if (!l)
				continue;
			if (strcmp(a, v.v[k]) == 0 && i + 1 < json_array_size(argv)) {
				json_array_set_new(argv, ++i, json_string("*"));
				break;
			}
			if (strncmp(a, v.v[k], l) == 0 && a[l] == '=') {
				char *s = xl_asprintf("%s=*", v.v[k]);

				json_array_set_new(argv, i, json_string(s));
				free(s);
				break;
			}
		}
	}
	xl_strv_release(&v);
}

/* Signature parts and limits of a resolved item. */
static void item_parts(struct calib_store *st, const json_t *job, struct xl_plan_item *it)
{
	struct calib_hardware hw;
	bool have_hw = false;

	it->parts = signature_parts(it->profile, job);
	drop_inert_args(it->profile, it->parts);
	if (!json_object_get(it->parts, "hardware") && st &&
	    calib_latest_hardware(st, NULL, xl_job_on_host(it->profile) ? CALIB_HW_HOST : 0, &hw) == 0) {
		have_hw = true;
		json_object_set_new(it->parts, "hardware",
				    json_pack("{s:s, s:I, s:I, s:s}", "kind", hw.kind,
					      "count", (json_int_t)hw.count,
					      "memory", (json_int_t)hw.memory_bytes,
					      "type", hw.host ? "host" : "accelerator"));
	}
	it->nlimits = xl_job_limits(it->profile, it->parts, have_hw ? &hw : NULL, it->limits,
				    CALIB_MAX_LIMITS);
}

/* Checks it's profile against the release argv will load in the
 * environment that profile gives it (a candidate may set PATH or
 * VIRTUAL_ENV of its own). */
static int check_item(const struct xl_ctx *ctx, char **argv, int argc, struct xl_plan_item *it)
{
	it->runtime = xl_calloc(1, sizeof(*it->runtime));
	xl_profile_detect_runtime(it->profile, argv, argc, it->runtime);
	it->profile->runtime = it->runtime;
	return xl_profile_check(ctx, it->profile);
}

/* Checks the profile resolved into it, unless the launch's checks already
 * found its runtime (checked: the item takes it), and computes its parts. */
static int finish_item(const struct xl_ctx *ctx, struct calib_store *st, const json_t *job,
		       char **argv, int argc, struct xl_runtime *checked,
		       struct xl_plan_item *it)
{
	int rc = 0;

	if (checked)
		it->runtime = checked;
	else
		rc = check_item(ctx, argv, argc, it);
	if (rc)
		return rc;
	if (it->profile->cand >= 0)
		it->candidate = it->profile->cands[it->profile->cand].name;
	item_parts(st, job, it);
	return 0;
}

/* Resolves and checks one candidate (NULL: the profile alone) into it. */
static int plan_item(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		     const char *cand, const json_t *job, char **argv, int argc,
		     struct xl_plan_item *it)
{
	int rc;

	memset(it, 0, sizeof(*it));
	rc = xl_profile_resolve(ctx, name, cand, 0, &it->profile);
	return rc ? rc : finish_item(ctx, st, job, argv, argc, NULL, it);
}

/* The command of a recorded run without the args its candidate appended
 * (last.candidate_args of them at the end of job.argv). */
static void drop_candidate_args(const json_t *last, json_t *job)
{
	json_int_t n = json_integer_value(json_object_get(last, "candidate_args"));
	json_t *argv = json_object_get(job, "argv");
	size_t len = json_array_size(argv);

	if (n <= 0 || !json_is_array(argv) || (size_t)n > len)
		return;
	argv = json_deep_copy(argv);
	for (json_int_t i = 0; i < n; i++)
		json_array_remove(argv, --len);
	json_object_set_new(job, "argv", argv);
}

/* The job's parts: from argv, read in environment envp, else from the
 * profile's latest run. */
static json_t *job_parts(struct calib_store *st, const char *name, char **argv, int argc,
			 char *const *envp, struct xl_plan *out)
{
	json_t *job = NULL;

	if (argc > 0) {
		struct xl_job j;

		xl_job_from_argv(argv, argc, envp, &j);
		job = json_incref(j.parts);
		xl_job_release(&j);
	} else if (st) {
		json_t *last = NULL;
		char *id = NULL;

		if (calib_last_parts(st, name, &last, &id) == 0 && last) {
			static const char *const keys[] = { "argv", "code", "bundle" };

			job = json_object();
			for (size_t i = 0; i < 3; i++)
				if (json_object_get(last, keys[i]))
					json_object_set(job, keys[i], json_object_get(last, keys[i]));
			drop_candidate_args(last, job);
			out->job_from = id;
			id = NULL;
		}
		json_decref(last);
		free(id);
	}
	out->no_job = !job;
	return job;
}

static int by_profile_index(const void *x, const void *y)
{
	const struct xl_plan_item *a = x, *b = y;

	return a->rank.index < b->rank.index ? -1 : a->rank.index > b->rank.index;
}

/* Estimates and places items[from..n) (ties in profile order), or keeps
 * profile order. */
static int rank_items(struct xl_plan *plan, struct calib_store *st, size_t from, bool reorder)
{
	size_t n = plan->n - from;
	struct calib_target *t = xl_calloc(n + 1, sizeof(*t));
	struct calib_rank *ranks = xl_calloc(n + 1, sizeof(*ranks));
	struct xl_plan_item *sorted;
	int rc;

	qsort(plan->items + from, n, sizeof(*plan->items), by_profile_index);
	for (size_t i = 0; i < n; i++) {
		const struct xl_plan_item *it = &plan->items[from + i];

		t[i] = (struct calib_target){ it->parts, it->limits, it->nlimits };
	}
	rc = calib_order(st, t, n, ranks);
	if (!reorder) {
		/* every rank, in profile order */
		for (size_t i = 0; i < n; i++) {
			size_t pi = plan->items[from + ranks[i].index].rank.index;

			plan->items[from + ranks[i].index].rank = ranks[i];
			plan->items[from + ranks[i].index].rank.index = pi;
		}
	} else {
		sorted = xl_calloc(n + 1, sizeof(*sorted));
		for (size_t i = 0; i < n; i++) {
			sorted[i] = plan->items[from + ranks[i].index];
			sorted[i].rank = ranks[i];
			sorted[i].rank.index = plan->items[from + ranks[i].index].rank.index;
		}
		memcpy(plan->items + from, sorted, n * sizeof(*sorted));
		free(sorted);
	}
	free(t);
	free(ranks);
	return rc;
}

int xl_plan_begin(const struct xl_ctx *ctx, const char *name, const char *pinned,
		  unsigned flags, char **argv, int argc, struct xl_plan *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->profile = xl_strdup(name);
	out->pinned = pinned ? xl_strdup(pinned) : NULL;
	if ((rc = xl_profile_resolve(ctx, name, pinned, 0, &out->base)))
		return rc;
	out->base_owned = true;
	if (!(flags & XL_PLAN_LAUNCH))
		return 0;
	/* judged against the release the command will load under the
	 * environment it will get */
	out->base_item.profile = out->base;
	rc = check_item(ctx, argv, argc, &out->base_item);
	out->base_checked = !rc;
	if (!rc && !(flags & XL_PLAN_ANY_RUNTIME))
		rc = xl_profile_runtime_check(out->base, out->base_item.runtime, "--no-runtime-check");
	if (!rc)
		rc = xl_profile_bundle_gate(ctx, out->base);
	return rc;
}

/* The plan of one item: the base itself (pinned, or a profile without
 * candidates).  The item takes the base, and its runtime when the
 * launch's checks already found it. */
static int plan_base_item(const struct xl_ctx *ctx, struct calib_store *st, const json_t *job,
			  char **argv, int argc, struct xl_plan *out)
{
	struct xl_runtime *checked = NULL;

	out->items = xl_calloc(1, sizeof(*out->items));
	out->n = 1;
	out->items[0].profile = out->base;
	out->base_owned = false;
	if (out->base_checked) {
		checked = out->base_item.runtime;
		out->base_item.runtime = NULL;
	}
	return finish_item(ctx, st, job, argv, argc, checked, &out->items[0]);
}

int xl_plan_finish(const struct xl_ctx *ctx, struct calib_store *st, unsigned flags,
		   char **argv, int argc, struct xl_plan *out)
{
	const char *name = out->profile, *pinned = out->pinned;
	struct xl_profile *base = out->base;
	json_t *job = NULL;
	char **env;
	size_t n;
	int rc;

	/* the job (argv, code, bundle) as the environment of the profile, or
	 * of the pinned candidate, finds it */
	env = xl_profile_build_env(base, environ);
	job = job_parts(st, name, argv, argc, env, out);
	xl_env_free(env);
	if (pinned) {
		if ((rc = plan_base_item(ctx, st, job, argv, argc, out)))
			goto done;
		out->store_rc = rank_items(out, st, 0, false);
		out->items[0].rank.place = CALIB_PLACE_PINNED;
		{
			struct calib_rank *r = &out->items[0].rank;
			size_t l;

			snprintf(r->reason, sizeof(r->reason), "pinned with -c; ");
			l = strlen(r->reason);
			snprintf(r->reason + l, sizeof(r->reason) - l, "%.*s",
				 (int)(sizeof(r->reason) - l - 1), r->est.reason);
		}
		rc = 0;
		goto done;
	}
	/* the candidates are the base profile's */
	if (!base->ncands) {
		if ((rc = plan_base_item(ctx, st, job, argv, argc, out)))
			goto done;
		out->store_rc = rank_items(out, st, 0, false);
		out->items[0].rank.place = CALIB_PLACE_ONLY;
		{
			struct calib_rank *r = &out->items[0].rank;
			char why[sizeof(r->reason)];
			size_t l;

			snprintf(why, sizeof(why), "%s", r->reason);
			snprintf(r->reason, sizeof(r->reason), "the profile has no candidates; ");
			l = strlen(r->reason);
			snprintf(r->reason + l, sizeof(r->reason) - l, "%.*s",
				 (int)(sizeof(r->reason) - l - 1), why);
		}
		goto done;
	}
	n = base->ncands;
	out->items = xl_calloc(n, sizeof(*out->items));
	for (size_t i = 0; i < n; i++) {
		rc = plan_item(ctx, st, name, base->cands[i].name, job, argv, argc, &out->items[i]);
		out->items[i].rank.index = i;
		out->n = i + 1;
		if (rc)
			goto done;
	}
	out->store_rc = rank_items(out, st, 0, !(flags & XL_PLAN_PROFILE_ORDER));
	rc = 0;
done:
	json_decref(job);
	return rc;
}

int xl_plan_make(const struct xl_ctx *ctx, struct calib_store *st, const char *name,
		 const char *pinned, unsigned flags, char **argv, int argc, struct xl_plan *out)
{
	int rc = xl_plan_begin(ctx, name, pinned, flags & ~(unsigned)XL_PLAN_LAUNCH, argv, argc, out);

	return rc ? rc : xl_plan_finish(ctx, st, flags, argv, argc, out);
}

int xl_plan_rerank(struct xl_plan *plan, struct calib_store *st, size_t from)
{
	if (from >= plan->n || !st)
		return 0;
	if (plan->items[from].rank.place == CALIB_PLACE_PINNED ||
	    plan->items[from].rank.place == CALIB_PLACE_ONLY)
		return 0;
	return rank_items(plan, st, from, true);
}

void xl_plan_release(struct xl_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		xl_profile_free(plan->items[i].profile);
		json_decref(plan->items[i].parts);
		if (plan->items[i].runtime)
			xl_runtime_release(plan->items[i].runtime);
		free(plan->items[i].runtime);
	}
	free(plan->items);
	if (plan->base_owned)
		xl_profile_free(plan->base);
	if (plan->base_item.runtime)
		xl_runtime_release(plan->base_item.runtime);
	free(plan->base_item.runtime);
	free(plan->profile);
	free(plan->pinned);
	free(plan->job_from);
	memset(plan, 0, sizeof(*plan));
}

json_t *xl_plan_item_json(const struct xl_plan_item *it)
{
	json_t *o = calib_rank_json(&it->rank, it->candidate);

	json_object_set_new(o, "limit_source", it->rank.est.limit_bytes != CALIB_UNSET
							? json_string(it->rank.est.limit_source) : json_null());
	if (xl_profile_args(it->profile)) {
		const struct xl_strv *a = xl_profile_args(it->profile);
		json_t *arr = json_array();

		for (size_t i = 0; i < a->n; i++)
			json_array_append_new(arr, json_string(a->v[i]));
		json_object_set_new(o, "args", arr);
	}
	return o;
}
