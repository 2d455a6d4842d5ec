/* launch.c - a supervised launch of a profile's command (`xlaunch run`).
 *
 * Resolve, order the candidates by what the store knows, then for each
 * attempt: a run directory and manifest, the supervised child, the outcome,
 * the record (kept in the state directory until the store has it), and a
 * retry with the next candidate when the outcome asks for one.
 */
#include "launcher/run/attempt.h"
#include "launcher/run/jobrank.h"
#include "launcher/run/rundir.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

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
static void job_agree(struct xl_launch *a, struct xl_plan *plan, const struct xl_run_opts *o,
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

/* Who this launch is in a job: its rank, the job's size and launch id, and
 * whether it records (in a job of several ranks every rank records its
 * own attempt, merged by job id; without one only rank 0 does). */
static void launch_init(struct xl_launch *l, const struct xl_ctx *ctx, const struct xl_run_opts *o,
			char **argv, int argc)
{
	memset(l, 0, sizeof(*l));
	l->ctx = ctx;
	l->o = o;
	l->rank = xl_rank(&l->rank_from);
	l->world = xl_world_size(NULL);
	l->job_id = xl_job_launch_id(NULL);
	l->record = !o->no_record && !o->dry_run &&
		    (l->rank == 0 || o->all_ranks || (l->world > 1 && l->job_id));
	if (l->world > 1 && !l->job_id && !o->dry_run && l->rank == 0)
		xl_warn("a job of %d ranks without a job id (XLAUNCH_JOB_ID, SLURM_JOB_ID,"
			" TORCHELASTIC_RUN_ID, JOBSET_NAME): its ranks cannot agree on a candidate"
			" through the store and only rank 0 records", l->world);
	l->argv = argc ? argv : NULL;
	l->argc = argc;
}

/* The store, when the launch records or has candidates to order.  One
 * that cannot be opened never stops a launch; a dry run reads one that is
 * there and creates nothing.  Before a real launch, what killed launches
 * left goes in: whole records, then attempts whose supervisor was lost. */
static void open_store(struct xl_launch *l, size_t ncands)
{
	const struct xl_run_opts *o = l->o;
	char *err = NULL;
	bool failed = false;
	int lost;

	if (o->no_record && ncands <= 1)
		return;
	/* a store held by someone else delays the launch's end at most this
	 * long; the record is then kept and replayed later */
	if (!getenv("XLAUNCH_STORE_WAIT"))
		calib_set_wait(10.0);
	if (calib_open(l->ctx->store_path, o->dry_run ? CALIB_OPEN_READONLY : 0, &l->st, &err) != 0) {
		if (o->dry_run) {
			xl_debug("%s; the plan follows the profile's order", err ? err : "store unavailable");
		} else if (l->record) {
			char *keep = xl_keep_dir();

			xl_warn("%s; launching anyway: the record is kept in '%s/pending' until the store works",
				err ? err : "store unavailable", keep ? keep : "?");
			free(keep);
		} else {
			xl_warn("%s; launching anyway, in the profile's order of candidates",
				err ? err : "store unavailable");
		}
		free(err);
		l->st = NULL;
	}
	if (!l->st || o->dry_run)
		return;
	xl_sweep_pending_tmp();
	xl_record_replay(l->st);
	lost = xl_sweep_lost(l->st, &failed);
	if (lost)
		xl_info("recovered %d lost attempt%s whose supervisor died, recorded as interrupted",
			lost, lost == 1 ? "" : "s");
	if (failed)
		xl_warn("%s; lost attempts are recorded by a later xlaunch", calib_errmsg(l->st));
}

/* Where this launch keeps its run directories and record: the state
 * directory, else a private one under $TMPDIR (rundir.c).  When nothing
 * can, only a launch that records nothing goes on, without a run
 * directory.  Returns 0 or 73 after saying why. */
static int choose_keep(const struct xl_launch *l)
{
	char *why = NULL;

	if (xl_keep_choose(&why) != XL_KEEP_NONE)
		return 0;
	if (l->o->no_record) {
		xl_warn("%s: launching without a run directory (--no-record: no logs, manifest or"
			" record)", why);
		free(why);
		return 0;
	}
	xl_error("run: nowhere to keep this launch's run directory and record: %s (--no-record"
		 " launches without them)", why);
	free(why);
	return XL_EX_CANTCREAT;
}

/* `run --dry-run`: the command a candidate with args runs (without a
 * command, its args alone). */
static void print_item_command(const struct xl_launch *l, const struct xl_plan_item *it)
{
	const struct xl_strv *a = xl_profile_args(it->profile);
	char **cmd;
	int n;

	if (!a)
		return;
	cmd = xl_profile_command(it->profile, l->argv, l->argv ? l->argc : 0, &n);
	printf("     %s", l->argv ? "runs:" : "args:");
	for (int k = 0; k < n; k++)
		printf(" %s", cmd[k]);
	printf("   (after the command: the candidate's args)\n");
	free(cmd);
}

/* `run --dry-run`: the order, as text or JSON. */
static void print_plan(const struct xl_launch *l, const struct xl_plan *plan, const char *profile,
		       size_t total)
{
	if (l->ctx->json) {
		json_t *order = json_array(), *doc;
		char *s;

		for (size_t i = 0; i < plan->n; i++)
			json_array_append_new(order, xl_plan_item_json(&plan->items[i]));
		doc = json_pack("{s:s,s:o,s:I}", "profile", profile, "order", order,
				"max_attempts", (json_int_t)total);
		s = json_dumps(doc, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(doc);
		return;
	}
	printf("profile %s: up to %zu attempt%s, in this order:\n", profile, total,
	       total == 1 ? "" : "s");
	for (size_t i = 0; i < plan->n; i++) {
		const struct xl_plan_item *it = &plan->items[i];

		printf("  %zu. %-16s %-20s %s%s\n", i + 1, it->candidate ? it->candidate : "(profile)",
		       calib_place_name(it->rank.place), it->rank.reason,
		       skipped(it, l->o) ? " [skipped: --try-infeasible launches it]" : "");
		print_item_command(l, it);
	}
	if (l->argv) {
		printf("command:");
		for (int k = 0; k < l->argc; k++)
			printf(" %s", l->argv[k]);
		printf("\n");
	}
}

/* How many attempts the plan allows from items[from..n) with launched made
 * already: the launchable ones, at most --max-attempts in all. */
static size_t attempts_allowed(const struct xl_plan *plan, size_t from, size_t launched,
			       const struct xl_run_opts *o)
{
	size_t total = launched + launchable(plan, from, o);

	if (o->max_attempts && (size_t)o->max_attempts < total)
		total = (size_t)o->max_attempts;
	return total;
}

/* After an attempt that ended oc: whether the next candidate is tried.  A
 * rank of a job never retries alone (the engine restarts the whole job,
 * whose next launch takes the next candidate); an interruption or an
 * outcome not in --retry ends the launch. */
static bool retry_after(const struct xl_launch *l, enum xl_outcome oc)
{
	if (l->world > 1) {
		if (oc != XL_OUT_INTERRUPTED && (l->o->retry & (1u << oc)))
			xl_info("outcome '%s' on rank %d of %d: no rank retries alone; when"
				" the engine restarts the job, its next launch takes the next"
				" candidate", xl_outcome_name(oc), l->rank, l->world);
		return false;
	}
	return oc != XL_OUT_INTERRUPTED && (l->o->retry & (1u << oc));
}

/* The attempts, in the plan's order, up to total; what each attempt
 * teaches may move the rest.  Returns the last attempt's status, 79 for
 * --fail-on, or 77 when every candidate was predicted infeasible. */
static int make_attempts(struct xl_launch *l, struct xl_plan *plan, const char *profile,
			 size_t ncands, size_t total)
{
	const struct xl_run_opts *o = l->o;
	size_t launched = 0, nskipped;
	struct xl_strv warned = XL_STRV_INIT;
	int last = 0;

	/* said before anything is launched */
	nskipped = warn_skipped(plan, 0, o, profile, &warned);
	for (size_t i = 0; i < plan->n && launched < total; i++) {
		const struct xl_plan_item *it = &plan->items[i];
		enum xl_outcome oc;

		if (skipped(it, o))
			continue;
		last = xl_attempt(l, it, (int)++launched, (int)total, &oc);
		if (last == 0 && (o->fail_on & (1u << oc))) {
			xl_info("outcome '%s' is in --fail-on: exit %d", xl_outcome_name(oc),
				XL_EX_FAIL_ON);
			last = XL_EX_FAIL_ON;
		}
		if (!retry_after(l, oc))
			break;
		if (l->st && xl_plan_rerank(plan, l->st, i + 1) == 0) {
			nskipped += warn_skipped(plan, i + 1, o, profile, &warned);
			total = attempts_allowed(plan, i + 1, launched, o);
		}
		if (launched < total)
			xl_info("outcome '%s' is in --retry: trying the next candidate", xl_outcome_name(oc));
		else if (total > 1 || ncands > 1)
			xl_info("outcome '%s' is in --retry, but no attempts are left", xl_outcome_name(oc));
	}
	if (!launched && nskipped) {
		xl_error("profile '%s': every candidate is predicted infeasible; --try-infeasible"
			 " launches them anyway", profile);
		last = XL_EX_NOPERM;
	}
	xl_strv_release(&warned);
	return last;
}

int xl_run(const struct xl_ctx *ctx, const char *name, char **argv, int argc,
	   const struct xl_run_opts *o)
{
	struct xl_launch l;
	struct xl_profile *p0;
	struct xl_patterns pats;
	struct xl_plan plan;
	bool have_pats = false;
	int rc;
	size_t total;

	/* a full disk or a file-size limit must fail a write, not kill xlaunch */
	signal(SIGXFSZ, SIG_IGN);
	if (o->dry_run)
		xl_bundle_cache_readonly();
	/* the plan resolves the profile and checks it against the release the
	 * command will load (the candidates later, from the same cache) */
	if ((rc = xl_plan_begin(ctx, name, o->cand,
				XL_PLAN_LAUNCH | (o->no_runtime_check || o->dry_run ? XL_PLAN_ANY_RUNTIME : 0),
				argc ? argv : NULL, argc, &plan))) {
		xl_plan_release(&plan);
		return rc;
	}
	p0 = plan.base;
	launch_init(&l, ctx, o, argv, argc);
	if (!o->dry_run && (rc = choose_keep(&l)))
		goto done;
	open_store(&l, p0->ncands);
	have_pats = xl_patterns_load(NULL, &pats) == 0;
	if (!have_pats)
		xl_warn("outcome patterns unavailable: outcomes are named from exit statuses only");
	l.pats = have_pats ? &pats : NULL;
	if ((rc = xl_plan_finish(ctx, l.st, 0, l.argv, l.argc, &plan)))
		goto done;
	if (plan.store_rc)
		xl_warn("cannot order the candidates from the store; using the profile's order");
	total = attempts_allowed(&plan, 0, 0, o);
	if (o->dry_run) {
		print_plan(&l, &plan, p0->name, total);
		goto done;
	}
	xl_profile_report_ambient(p0);
	/* a rank of a job never starts a new attempt by itself: one attempt,
	 * and every rank of this launch runs the same candidate */
	if (l.world > 1) {
		total = total ? 1 : 0;
		if (total && !o->cand && l.job_id && l.st)
			job_agree(&l, &plan, o, p0->name);
	}
	rc = make_attempts(&l, &plan, p0->name, p0->ncands, total);
done:
	free(l.job_id);
	if (have_pats)
		xl_patterns_release(&pats);
	calib_close(l.st);
	xl_plan_release(&plan);
	return rc;
}
