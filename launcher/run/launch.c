/* launch.c - a supervised launch of a profile's command (`xlaunch run`).
 *
 * Resolve, order the candidates by what the store knows, then for each
 * attempt: a run directory and manifest, the supervised child, the outcome,
 * the record (kept in the state directory until the store has it), and a
 * retry with the next candidate when the outcome asks for one.
 */
#include "launcher/run/run.h"
#include "launcher/run/observe.h"
#include "launcher/run/record.h"
#include "launcher/run/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static int open_log(const char *dir, const char *name)
{
	char *path = xl_asprintf("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_APPEND, 0600);

	if (fd < 0)
		xl_warn("cannot create '%s': %s; output is not logged", path, strerror(errno));
	free(path);
	return fd;
}

static void add_env(char ***envp, const char *name, const char *value)
{
	size_t n = 0;

	while ((*envp)[n])
		n++;
	*envp = xl_realloc(*envp, (n + 2) * sizeof(char *));
	(*envp)[n] = xl_asprintf("%s=%s", name, value);
	(*envp)[n + 1] = NULL;
}

struct attempt_ctx {
	const struct xl_ctx *ctx;
	const struct xl_run_opts *o;
	struct calib_store *st;
	const struct xl_patterns *pats;
	int rank;
	const char *rank_from;
	int world;            /* ranks in the job (1: not a job of several) */
	char *job_id;         /* the job launch (launcher/run.h), or NULL */
	bool record;
	char **argv;
	int argc;
};

struct last_mods {
	json_t *mods;
	char *run;
};

static int take_mods(const struct calib_attempt *a, void *arg)
{
	struct last_mods *l = arg;
	json_t *d = a->details ? json_loads(a->details, 0, NULL) : NULL;
	json_t *m = json_object_get(d, "xla_modules");

	if (json_is_object(m) && json_object_size(m)) {
		l->mods = json_incref(m);
		l->run = xl_strdup(a->id);
	}
	json_decref(d);
	return l->mods ? 1 : 0;
}

/* The compiler's per-program figures of the latest attempt of signature
 * that has them ({name: bytes}), and that run's id; NULL when none. */
static json_t *last_xla_modules(struct calib_store *st, const char *signature, char **run)
{
	struct calib_filter f = CALIB_FILTER_INIT;
	struct last_mods l = { NULL, NULL };

	f.signature = signature;
	f.limit = 20;
	calib_history(st, &f, take_mods, &l);
	*run = l.run;
	return l.mods;
}

/* One attempt of a planned candidate.  Returns the child's exit status (or
 * 70, 73, 77...) and sets the outcome. */
static int attempt(struct attempt_ctx *a, const struct xl_plan_item *it, int n, int total,
		   enum xl_outcome *outcome)
{
	const char *cand = it->candidate;
	struct xl_profile *p = it->profile;
	const struct calib_estimate *est = &it->rank.est;
	struct calib_sig sig;
	struct xl_observe obs;
	struct xl_xla_dump dump;
	json_t *xla_mods = NULL, *prev_mods = NULL;
	char *prev_run = NULL;
	struct xl_sup_result sr;
	struct xl_scan so, se;
	struct xl_report rep;
	struct xl_classified cl;
	struct xl_sup_opts so_opts;
	struct xl_watch watch;
	struct xl_storm storm;
	const json_t *parts = it->parts;
	json_t *manifest, *record, *argvj;
	char *runs, *id, *dir, *part, *report, *mpath, *end_path, *guard_path = NULL, *kept = NULL;
	char tbuf[40], b1[32], b2[32];
	struct calib_attempt figs;
	double t0;
	int rc;

	*outcome = XL_OUT_ERROR;
	calib_attempt_init(&figs);
	/* a candidate may add a flag that is known-bad on the installed bundle */
	if (cand && (rc = xl_profile_bundle_gate(a->ctx, p)))
		return rc;
	/* the cache directories are made here, on the machine that launches */
	if ((rc = xl_profile_make_cache_dirs(p)))
		return rc;
	calib_signature(parts, &sig);
	xl_observe_init(&obs, 0.1);
	memset(&dump, 0, sizeof(dump));

	runs = xl_runs_dir();
	id = xl_new_run_id(a->rank, n);
	dir = xl_asprintf("%s/%s", runs, id);
	part = xl_asprintf("%s/.%s.part", runs, id);
	/* the directory appears whole, with its start manifest: made as
	 * ".ID.part" and renamed (a sweep removes one its owner left) */
	if (xl_mkdirs(runs, 0700) < 0 || mkdir(part, 0700) < 0) {
		xl_error("run directory '%s': %s", dir, strerror(errno));
		free(runs);
		free(id);
		free(dir);
		free(part);
		calib_sig_release(&sig);
		return XL_EX_CANTCREAT;
	}
	report = xl_asprintf("%s/report.jsonl", dir);
	mpath = xl_asprintf("%s/manifest.json", dir);
	end_path = xl_asprintf("%s/end.json", dir);

	argvj = json_array();
	for (int i = 0; i < a->argc; i++)
		json_array_append_new(argvj, json_string(a->argv[i]));
	{
		json_t *pj = xl_profile_to_json(p);

		manifest = json_pack("{s:s,s:s,s:o,s:s,s:O,s:O,s:i,s:i,s:O,s:O,s:O,s:O,s:O}",
				     "xlaunch", XLAUNCH_VERSION, "id", id, "argv", argvj,
				     "profile", p->name, "profile_chain", json_object_get(pj, "chain"),
				     "candidate", json_object_get(pj, "candidate"),
				     "attempt", n, "attempts_planned", total,
				     "env", json_object_get(pj, "env"), "unset", json_object_get(pj, "unset"),
				     "flags", json_object_get(pj, "flags"), "policy", json_object_get(pj, "policy"),
				     "limits", json_object_get(pj, "limits"));
		json_decref(pj);
	}
	json_object_set_new(manifest, "signature", json_pack("{s:s,s:s,s:s,s:O}", "hash", sig.hash,
							     "shape_hash", sig.shape_hash, "stack_hash",
							     sig.stack_hash, "parts", sig.parts));
	json_object_set_new(manifest, "order", xl_plan_item_json(it));
	json_object_set_new(manifest, "host", json_string(xl_hostname()));
	json_object_set_new(manifest, "rank", json_integer(a->rank));
	json_object_set_new(manifest, "rank_from", a->rank_from ? json_string(a->rank_from) : json_null());
	json_object_set_new(manifest, "world_size", json_integer(a->world));
	json_object_set_new(manifest, "job_id", a->job_id ? json_string(a->job_id) : json_null());
	json_object_set_new(manifest, "prediction", calib_estimate_json(est));
	json_object_set_new(manifest, "run_dir", json_string(dir));
	json_object_set_new(manifest, "report", json_string(report));
	t0 = xl_now();
	json_object_set_new(manifest, "start", json_string(xl_iso_time(t0, tbuf, sizeof(tbuf))));
	json_object_set_new(manifest, "end", json_null());
	json_object_set_new(manifest, "outcome", json_null());
	/* who runs it, so that a later xlaunch can tell when nobody does */
	json_object_set_new(manifest, "owner", xl_run_owner());
	json_object_set_new(manifest, "end_record_expected", json_boolean(a->record));
	json_object_set_new(manifest, "store", a->st ? json_string(calib_store_path(a->st))
						      : json_null());
	{
		char *ppath = xl_asprintf("%s/manifest.json", part);

		if (xl_write_json_atomic(ppath, manifest, true) < 0 || rename(part, dir) < 0) {
			xl_error("run directory '%s': %s", dir, strerror(errno));
			free(ppath);
			rc = XL_EX_CANTCREAT;
			goto out;
		}
		free(ppath);
	}
	close(open(report, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));

	{
		/* the place in the order says why this candidate runs now */
		const char *pl = calib_place_name(it->rank.place);
		struct xl_buf why = XL_BUF_INIT;

		if (pl && strcmp(pl, "only") != 0)
			xl_buf_adds(&why, pl);
		if (est->known)
			xl_buf_addf(&why, "%spredicted %s of %s", why.len ? ", " : "",
				    xl_fmt_bytes((uint64_t)est->predicted_bytes, b1, sizeof(b1)),
				    calib_kind_name(est->kind));
		xl_info("attempt %d/%d: profile '%s'%s%s%s%s%s%s run %s", n, total, p->name,
			cand ? " candidate '" : "", cand ? cand : "", cand ? "'" : "",
			why.len ? " (" : "", xl_buf_str(&why), why.len ? ")" : "", id);
		xl_buf_release(&why);
	}

	/* the child's environment */
	char **envp = xl_profile_build_env(p, environ);

	add_env(&envp, "XLAUNCH_RUN_ID", id);
	add_env(&envp, "XLAUNCH_REPORT", report);
	add_env(&envp, "XLAUNCH_RUN_DIR", dir);
	{
		char *helper = xl_data_path("etc/report/xlaunch_report.py");

		add_env(&envp, "XLAUNCH_REPORT_HELPER", helper);
		free(helper);
	}
	/* a compile cache this launch will find cold is said before it starts */
	xl_ck_before_launch(envp, a->argv, p->name, id);
	/* the compiler's figure, asked for through XLA's dump (no cache key sees it) */
	xl_xla_dump_setup(p, parts, dir, a->o->no_xla_dump, &envp, &dump);
	if (dump.ours)
		obs.prune_dir = xl_strdup(dump.dir);
	xl_scan_init(&so, a->pats);
	xl_scan_init(&se, a->pats);
	xl_run_watch_init(&watch, a->pats, p, report, xl_mono());
	xl_scan_watch(&so, &watch);
	xl_scan_watch(&se, &watch);
	memset(&so_opts, 0, sizeof(so_opts));
	so_opts.argv = a->argv;
	so_opts.envp = envp;
	so_opts.limits = &p->limits;
	so_opts.timeout_s = a->o->timeout_s;
	so_opts.grace_s = a->o->grace_s;
	so_opts.out_log = open_log(dir, "stdout.log");
	so_opts.err_log = open_log(dir, "stderr.log");
	so_opts.scan_out = &so;
	so_opts.scan_err = &se;
	so_opts.watch = &watch;
	so_opts.observe = &obs;
	so_opts.end_path = end_path;
	guard_path = xl_asprintf("%s/guardian", dir);
	so_opts.guardian_path = guard_path;
	rc = xl_supervise(&so_opts, &sr);
	if (so_opts.out_log >= 0)
		close(so_opts.out_log);
	if (so_opts.err_log >= 0)
		close(so_opts.err_log);
	xl_env_free(envp);
	if (rc) {
		xl_scan_release(&so);
		xl_scan_release(&se);
		xl_watch_release(&watch);
		goto out;
	}
	xl_report_init(&rep);
	xl_report_read(report, &rep);
	xl_watch_verdict(&watch, &storm);
	xl_classify(&sr, &so, &se, &rep, &storm, &cl);
	*outcome = cl.outcome;

	/* what was used, each figure of its kind */
	{
		struct calib_attempt *f = &figs;
		const struct xl_scan *oom = se.oom_line ? &se : so.oom_line ? &so : NULL;
		char src[400];
		int64_t xb;

		calib_attempt_init(f);
		xl_observe_figures(f, &obs, sr.peak_rss_bytes, report,
				   cl.outcome == XL_OUT_OOM && oom ? oom->oom_line : NULL);
		xla_mods = xl_xla_dump_collect(&dump, (double)(time_t)t0);
		if (a->st)
			prev_mods = last_xla_modules(a->st, sig.hash, &prev_run);
		xb = xl_xla_modules_figure(xla_mods, prev_mods, prev_run, src, sizeof(src));
		if (xb >= 0)
			calib_attempt_add_figure(f, false, CALIB_KIND_XLA_BUFFERS, xb, CALIB_BASIS_NONE,
						 CALIB_UNSET, src);
		xl_observe_headline(f, est);
	}
	long long observed = figs.observed_bytes != CALIB_UNSET ? figs.observed_bytes : -1;
	const char *obs_src = figs.observed_bytes != CALIB_UNSET ? calib_kind_name(figs.observed_kind)
								 : "none";

	json_object_set_new(manifest, "end", json_string(xl_iso_time(xl_now(), tbuf, sizeof(tbuf))));
	json_object_set_new(manifest, "wall_s", json_real(sr.wall_s));
	json_object_set_new(manifest, "outcome", json_string(xl_outcome_name(cl.outcome)));
	json_object_set_new(manifest, "reason", json_string(cl.reason));
	json_object_set_new(manifest, "exit_status", json_integer(sr.exit_code));
	json_object_set_new(manifest, "compile_count", json_integer(cl.compile_count));
	json_object_set_new(manifest, "compile_storm", json_boolean(cl.storm));
	json_object_set_new(manifest, "cache_hits", storm.cache_hits >= 0 ? json_integer(storm.cache_hits) : json_null());
	json_object_set_new(manifest, "first_step_s", watch.first_step_s >= 0 ? json_real(watch.first_step_s) : json_null());
	json_object_set_new(manifest, "compile", xl_watch_json(&watch, &storm));
	json_object_set_new(manifest, "predicted_bytes", est->known ? json_integer((json_int_t)est->predicted_bytes) : json_null());
	json_object_set_new(manifest, "reported_predicted_bytes", rep.predicted_bytes >= 0 ? json_integer(rep.predicted_bytes) : json_null());
	json_object_set_new(manifest, "observed_bytes", observed >= 0 ? json_integer(observed) : json_null());
	json_object_set_new(manifest, "observed_kind", json_string(obs_src));
	{
		const struct calib_figure *hf = figs.observed_bytes != CALIB_UNSET
			? calib_attempt_figure(&figs, false, figs.observed_kind) : NULL;

		json_object_set_new(manifest, "observed_source", hf && hf->source ? json_string(hf->source)
										  : json_null());
	}
	json_object_set_new(manifest, "host_peak_rss_bytes", json_integer(sr.peak_rss_bytes));
	{
		json_t *fj = calib_attempt_to_json(&figs, CALIB_JSON_HISTORY);

		json_object_set(manifest, "figures", json_object_get(fj, "figures"));
		json_decref(fj);
	}
	json_object_set_new(manifest, "observation", xl_observe_json(&obs));
	json_object_set_new(manifest, "xla_dump", json_pack("{s:o, s:b, s:o, s:o, s:O}",
		"dir", dump.dir ? json_string(dump.dir) : json_null(), "added_by_xlaunch", dump.ours,
		"tokens", dump.tokens ? json_string(dump.tokens) : json_null(),
		"why_not", dump.dir ? json_null() : json_string(dump.why), "modules", xla_mods));
	json_object_set_new(manifest, "report_lines", json_pack("{s:I,s:I,s:I}", "total", (json_int_t)rep.lines,
								"malformed", (json_int_t)rep.malformed,
								"unknown", (json_int_t)rep.unknown));
	if (sr.term_dropped)
		json_object_set_new(manifest, "terminal_dropped_bytes", json_integer((json_int_t)sr.term_dropped));
	if (xl_write_json_atomic(mpath, manifest, false) < 0)
		xl_warn("cannot write '%s': %s", mpath, strerror(errno));

	xl_watch_warn(&watch, &storm, dir);
	if (sr.term_dropped)
		xl_warn("the terminal could not keep up: %zu bytes were not shown; %s/stdout.log and stderr.log have everything",
			sr.term_dropped, dir);
	{
		char comp[256];

		xl_watch_summary(&watch, &storm, comp, sizeof(comp));
		xl_info("attempt %d/%d: %s (%s) after %.1f s, observed %s (%s)%s%s%s", n, total,
			xl_outcome_name(cl.outcome), cl.reason, sr.wall_s,
			xl_fmt_bytes((uint64_t)(observed < 0 ? 0 : observed), b2, sizeof(b2)), obs_src,
			est->known ? ", predicted " : "",
			est->known ? xl_fmt_bytes((uint64_t)est->predicted_bytes, b1, sizeof(b1)) : "",
			comp);
	}

	if (a->record) {
		struct calib_attempt rec;

		calib_attempt_init(&rec);
		rec.id = xl_strdup(id);
		rec.time = (double)(time_t)t0;   /* whole seconds, as the manifest's start */
		rec.profile = xl_strdup(p->name);
		rec.candidate = cand ? xl_strdup(cand) : NULL;
		snprintf(rec.signature, sizeof(rec.signature), "%s", sig.hash);
		rec.host = xl_strdup(xl_hostname());
		rec.rank = a->rank;
		rec.job_id = a->job_id ? xl_strdup(a->job_id) : NULL;
		rec.outcome = cl.outcome;
		rec.exit_status = sr.exit_code;
		rec.figures = figs.figures;
		rec.nfigures = figs.nfigures;
		figs.figures = NULL;
		figs.nfigures = 0;
		rec.predicted_bytes = figs.predicted_bytes;
		rec.predicted_kind = figs.predicted_kind;
		rec.predicted_basis = figs.predicted_basis;
		rec.observed_bytes = figs.observed_bytes;
		rec.observed_kind = figs.observed_kind;
		rec.cache_hits = storm.cache_hits >= 0 ? storm.cache_hits : CALIB_UNSET;
		rec.first_step_s = watch.first_step_s >= 0 ? watch.first_step_s : NAN;
		{
			/* what the store keeps of the compilations and of XLA's
			 * figures: the manifest's objects */
			json_t *d = json_object(), *c = json_object_get(manifest, "compile");

			if (json_is_object(c))
				json_object_set(d, "compile", c);
			if (json_object_size(xla_mods))
				json_object_set(d, "xla_modules", xla_mods);
			if (json_object_size(d))
				rec.details = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(d);
		}
		rec.wall_s = sr.wall_s;
		rec.compile_count = cl.compile_count;
		rec.host_peak_rss_bytes = sr.peak_rss_bytes;
		rec.signature_json = xl_strdup(sig.canonical);
		snprintf(rec.shape_hash, sizeof(rec.shape_hash), "%s", sig.shape_hash);
		snprintf(rec.stack_hash, sizeof(rec.stack_hash), "%s", sig.stack_hash);
		rec.hardware_kind = sig.hardware_kind ? xl_strdup(sig.hardware_kind) : NULL;
		rec.signature_scheme = CALIB_SIG_SCHEME;
		/* the kept copy first: it outlives a store that fails */
		record = calib_attempt_to_json(&rec, CALIB_JSON_FULL);
		if (xl_record_keep(record, &kept) < 0)
			xl_warn("cannot keep the record in '%s': %s", kept ? kept : "?", strerror(errno));
		if (a->st && calib_record_attempt(a->st, &rec) == 0) {
			xl_record_done(record);
			xl_run_settled(id, "recorded");
		} else {
			xl_warn("the store did not take the record (%s); it is kept in '%s' and goes in at the next run",
				a->st ? calib_errmsg(a->st) : "store unavailable", kept ? kept : dir);
		}
		free(kept);
		json_decref(record);
		calib_attempt_release(&rec);
	}
	if (!a->record)
		xl_run_settled(id, "not recorded: this launch records nothing in the store");
	xl_scan_release(&so);
	xl_scan_release(&se);
	xl_watch_release(&watch);
	rc = sr.exit_code;
out:
	calib_attempt_release(&figs);
	xl_observe_release(&obs);
	xl_xla_dump_release(&dump);
	json_decref(xla_mods);
	json_decref(prev_mods);
	free(prev_run);
	json_decref(manifest);
	calib_sig_release(&sig);
	free(runs);
	free(id);
	free(dir);
	free(part);
	free(report);
	free(mpath);
	free(end_path);
	free(guard_path);
	return rc;
}

/* Whether run passes over it: predicted not to fit (a pinned candidate and
 * a profile without candidates too), unless --try-infeasible. */
static bool skipped(const struct xl_plan_item *it, const struct xl_run_opts *o)
{
	enum calib_place pl = it->rank.place;

	if (o->try_infeasible)
		return false;
	return pl == CALIB_PLACE_INFEASIBLE ||
	       ((pl == CALIB_PLACE_PINNED || pl == CALIB_PLACE_ONLY) && it->rank.est.feasible == 0);
}

/* Says which of items[from..n) run passes over, once each (warned holds
 * the names said); returns how many it said now. */
static size_t warn_skipped(const struct xl_plan *plan, size_t from, const struct xl_run_opts *o,
			   const char *profile, struct xl_strv *warned)
{
	size_t k = 0;

	for (size_t i = from; i < plan->n; i++) {
		const struct xl_plan_item *it = &plan->items[i];
		const char *name = it->candidate ? it->candidate : profile;
		bool said = false;

		if (!skipped(it, o))
			continue;
		for (size_t j = 0; j < warned->n; j++)
			if (strcmp(warned->v[j], name) == 0)
				said = true;
		if (said)
			continue;
		xl_warn("candidate '%s' is predicted infeasible: %s; skipped (--try-infeasible launches"
			" it)", name, it->rank.est.reason);
		xl_strv_push(warned, name);
		k++;
	}
	return k;
}

/* How many of items[from..n) would be launched. */
static size_t launchable(const struct xl_plan *plan, size_t from, const struct xl_run_opts *o)
{
	size_t k = 0;

	for (size_t i = from; i < plan->n; i++)
		k += !skipped(&plan->items[i], o);
	return k;
}

/* Every rank of one job launch runs one candidate: the first rank to plan
 * publishes its first launchable one in the store, the others take that
 * one.  Moves it to the front of the launchable items of plan. */
static void job_agree(struct attempt_ctx *a, struct xl_plan *plan, const struct xl_run_opts *o,
		      const char *profile)
{
	size_t first = plan->n, pick = plan->n;
	char *chosen = NULL, *chosen_sig = NULL;

	for (size_t i = 0; i < plan->n && first == plan->n; i++)
		if (!skipped(&plan->items[i], o))
			first = i;
	if (first == plan->n)
		return;
	if (calib_job_choose(a->st, a->job_id, plan->items[first].candidate,
			     plan->items[first].rank.signature, a->rank, &chosen, &chosen_sig)) {
		xl_warn("%s; rank %d runs its own first candidate", calib_errmsg(a->st), a->rank);
		return;
	}
	for (size_t i = 0; i < plan->n && pick == plan->n; i++)
		if (xl_streq(plan->items[i].candidate, chosen))
			pick = i;
	if (pick == plan->n) {
		xl_warn("job '%s' runs candidate '%s', which profile '%s' does not have here;"
			" rank %d runs its own first candidate", a->job_id, chosen ? chosen : "(none)",
			profile, a->rank);
	} else if (pick != first) {
		struct xl_plan_item t = plan->items[pick];

		xl_info("job '%s': candidate '%s', as published by the first rank to plan",
			a->job_id, chosen ? chosen : profile);
		memmove(&plan->items[first + 1], &plan->items[first],
			(pick - first) * sizeof(plan->items[0]));
		plan->items[first] = t;
	}
	free(chosen);
	free(chosen_sig);
}

int xl_run(const struct xl_ctx *ctx, const char *name, char **argv, int argc,
	   const struct xl_run_opts *opts)
{
	const struct xl_run_opts o = *opts;
	struct attempt_ctx a;
	struct xl_profile *p0;
	struct xl_patterns pats;
	struct xl_plan plan = { 0 };
	bool have_pats;
	int rc, last = 0;
	size_t i, total;

	/* a full disk or a file-size limit must fail a write, not kill xlaunch */
	signal(SIGXFSZ, SIG_IGN);
	rc = xl_profile_resolve(ctx, name, o.cand, 0, &p0);
	if (rc)
		return rc;
	rc = xl_profile_check(ctx, p0);
	if (!rc)
		rc = xl_profile_bundle_gate(ctx, p0);
	if (rc) {
		xl_profile_free(p0);
		return rc;
	}
	memset(&a, 0, sizeof(a));
	a.ctx = ctx;
	a.o = &o;
	a.rank = xl_rank(&a.rank_from);
	a.world = xl_world_size(NULL);
	a.job_id = xl_job_launch_id(NULL);
	/* in a job of several ranks every rank records its own attempt, merged
	 * by job id; without one only rank 0 does */
	a.record = !o.no_record && !o.dry_run &&
		   (a.rank == 0 || o.all_ranks || (a.world > 1 && a.job_id));
	if (a.world > 1 && !a.job_id && !o.dry_run && a.rank == 0)
		xl_warn("a job of %d ranks without a job id (XLAUNCH_JOB_ID, SLURM_JOB_ID,"
			" TORCHELASTIC_RUN_ID, JOBSET_NAME): its ranks cannot agree on a candidate"
			" through the store and only rank 0 records", a.world);
	a.argv = argc ? argv : NULL;
	a.argc = argc;
	if (!o.no_record || p0->ncands > 1) {
		char *err = NULL;

		/* a store held by someone else delays the launch's end at most
		 * this long; the record is then kept and replayed later */
		if (!getenv("XLAUNCH_STORE_WAIT"))
			calib_set_wait(10.0);
		/* a store that cannot be opened never stops a launch; a dry
		 * run reads one that is there and creates nothing */
		if (calib_open(ctx->store_path, o.dry_run ? CALIB_OPEN_READONLY : 0, &a.st, &err) != 0) {
			if (o.dry_run)
				xl_debug("%s; the plan follows the profile's order", err ? err : "store unavailable");
			else
				xl_warn("%s; launching anyway, records are kept until the store works", err ? err : "store unavailable");
			free(err);
			a.st = NULL;
		}
	}
	if (a.st && !o.dry_run) {
		bool failed = false;
		int lost;

		/* what killed launches left: whole records go in, halves go */
		xl_sweep_pending_tmp();
		xl_record_replay(a.st);
		lost = xl_sweep_lost(a.st, &failed);
		if (lost)
			xl_info("recovered %d lost attempt%s whose supervisor died, recorded as interrupted",
				lost, lost == 1 ? "" : "s");
		if (failed)
			xl_warn("%s; lost attempts are recorded by a later xlaunch", calib_errmsg(a.st));
	}
	have_pats = xl_patterns_load(NULL, &pats) == 0;
	if (!have_pats)
		xl_warn("outcome patterns unavailable: outcomes are named from exit statuses only");
	a.pats = have_pats ? &pats : NULL;

	if (o.dry_run)
		xl_bundle_cache_readonly();
	rc = xl_plan_make(ctx, a.st, name, o.cand, 0, a.argv, a.argc, &plan);
	if (rc) {
		last = rc;
		goto done;
	}
	if (plan.store_rc)
		xl_warn("cannot order the candidates from the store; using the profile's order");
	total = launchable(&plan, 0, &o);
	if (o.max_attempts && (size_t)o.max_attempts < total)
		total = (size_t)o.max_attempts;
	if (o.dry_run) {
		if (ctx->json) {
			json_t *order = json_array(), *doc;
			char *s;

			for (i = 0; i < plan.n; i++)
				json_array_append_new(order, xl_plan_item_json(&plan.items[i]));
			doc = json_pack("{s:s,s:o,s:I}", "profile", p0->name, "order", order,
					"max_attempts", (json_int_t)total);
			s = json_dumps(doc, JSON_INDENT(2));
			puts(s);
			free(s);
			json_decref(doc);
		} else {
			printf("profile %s: up to %zu attempt%s, in this order:\n", p0->name, total,
			       total == 1 ? "" : "s");
			for (i = 0; i < plan.n; i++) {
				const struct xl_plan_item *it = &plan.items[i];
				char b[32];

				(void)b;
				printf("  %zu. %-16s %-20s %s%s\n", i + 1,
				       it->candidate ? it->candidate : "(profile)",
				       calib_place_name(it->rank.place), it->rank.reason,
				       skipped(it, &o) ? " [skipped: --try-infeasible launches it]" : "");
			}
			if (a.argv) {
				printf("command:");
				for (int k = 0; k < a.argc; k++)
					printf(" %s", a.argv[k]);
				printf("\n");
			}
		}
		goto done;
	}
	xl_profile_report_ambient(p0);
	/* a rank of a job never starts a new attempt by itself: one attempt,
	 * and every rank of this launch runs the same candidate */
	if (a.world > 1) {
		total = total ? 1 : 0;
		if (total && !o.cand && a.job_id && a.st)
			job_agree(&a, &plan, &o, p0->name);
	}
	{
		size_t launched = 0, nskipped = 0;
		struct xl_strv warned = XL_STRV_INIT;

		/* said before anything is launched */
		nskipped = warn_skipped(&plan, 0, &o, p0->name, &warned);
		for (i = 0; i < plan.n && launched < total; i++) {
			const struct xl_plan_item *it = &plan.items[i];
			enum xl_outcome oc;

			if (skipped(it, &o))
				continue;
			last = attempt(&a, it, (int)++launched, (int)total, &oc);
			if (last == 0 && (o.fail_on & (1u << oc))) {
				xl_info("outcome '%s' is in --fail-on: exit %d", xl_outcome_name(oc),
					XL_EX_FAIL_ON);
				last = XL_EX_FAIL_ON;
			}
			if (a.world > 1) {
				if (oc != XL_OUT_INTERRUPTED && (o.retry & (1u << oc)))
					xl_info("outcome '%s' on rank %d of %d: no rank retries alone; when"
						" the engine restarts the job, its next launch takes the next"
						" candidate", xl_outcome_name(oc), a.rank, a.world);
				break;
			}
			if (oc == XL_OUT_INTERRUPTED || !(o.retry & (1u << oc)))
				break;
			/* what this attempt taught may move the rest */
			if (a.st && xl_plan_rerank(&plan, a.st, i + 1) == 0) {
				nskipped += warn_skipped(&plan, i + 1, &o, p0->name, &warned);
				size_t left = launchable(&plan, i + 1, &o);

				total = launched + left;
				if (o.max_attempts && (size_t)o.max_attempts < total)
					total = (size_t)o.max_attempts;
			}
			if (launched < total)
				xl_info("outcome '%s' is in --retry: trying the next candidate", xl_outcome_name(oc));
			else if (total > 1 || p0->ncands > 1)
				xl_info("outcome '%s' is in --retry, but no attempts are left", xl_outcome_name(oc));
		}
		if (!launched && nskipped) {
			xl_error("profile '%s': every candidate is predicted infeasible; --try-infeasible"
				 " launches them anyway", p0->name);
			last = XL_EX_NOPERM;
		}
		xl_strv_release(&warned);
	}
done:
	free(a.job_id);
	xl_plan_release(&plan);
	if (have_pats)
		xl_patterns_release(&pats);
	calib_close(a.st);
	xl_profile_free(p0);
	return last;
}
