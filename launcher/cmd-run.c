/* cmd-run.c - `xlaunch run PROFILE [...] -- COMMAND [ARG...]`
 *
 * Resolve, order the candidates by what the store knows, then for each
 * attempt: a run directory and manifest, the supervised child, the outcome,
 * the record (kept in the state directory until the store has it), and a
 * retry with the next candidate when the outcome asks for one.
 */
#include "launcher/cachekey.h"
#include "launcher/plan.h"
#include "launcher/record.h"
#include "launcher/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

struct run_opts {
	const char *cand;
	unsigned retry;
	unsigned fail_on;
	long long max_attempts;
	double timeout_s, grace_s;
	bool no_record, dry_run, all_ranks;
};

static bool parse_retry(const char *value, void *field)
{
	return xl_outcome_set_parse(value ? value : "oom", field);
}

/* --fail-on: outcomes a child that exited 0 can still have; ok is never a failure */
static bool parse_fail_on(const char *value, void *field)
{
	unsigned set;

	if (!xl_outcome_set_parse(value, &set) || (set & (1u << XL_OUT_OK)))
		return false;
	*(unsigned *)field = set;
	return true;
}

static const struct xl_opt run_options[] = {
	{ .name = "candidate", .short_name = 'c', .kind = XL_OPT_STRING, .arg = "CAND",
	  .offset = XL_FIELD(struct run_opts, cand, const char *), .flags = XL_OPTF_SHORT,
	  .help = "only this candidate (no retry)" },
	{ .name = "retry", .kind = XL_OPT_CALLBACK, .arg = "CLASSES",
	  .offset = XL_FIELD(struct run_opts, retry, unsigned), .flags = XL_OPTF_OPTIONAL,
	  .parse = parse_retry,
	  .what = "a list of outcomes (oom, crash, timeout, error, compile-storm) or none",
	  .help = "outcomes that move on to the next candidate\n"
		  "(comma-separated; default oom; none disables)" },
	{ .name = "fail-on", .kind = XL_OPT_CALLBACK, .arg = "CLASSES",
	  .offset = XL_FIELD(struct run_opts, fail_on, unsigned), .parse = parse_fail_on,
	  .what = "a list of outcomes other than ok (compile-storm, ...) or none",
	  .help = "exit 79 when the child exited 0 but the last outcome is\n"
		  "one of these (compile-storm: a storm fails CI)" },
	XL_OPTION_COUNT(0, "max-attempts", "N", struct run_opts, max_attempts, 1, 1000,
			"at most N attempts (default: every candidate)"),
	XL_OPTION_DURATION(0, "timeout", "DUR", struct run_opts, timeout_s,
			   "stop the child after DUR (SIGTERM, then SIGKILL)"),
	XL_OPTION_DURATION(0, "grace", "DUR", struct run_opts, grace_s,
			   "time between SIGTERM and SIGKILL (default 10s)"),
	XL_OPTION_FLAG(0, "no-record", struct run_opts, no_record, "record nothing in the store"),
	XL_OPTION_FLAG(0, "dry-run", struct run_opts, dry_run, "print the attempts in order, run nothing"),
	XL_OPTION_FLAG(0, "record-all-ranks", struct run_opts, all_ranks,
		       "every rank records (default: rank 0 only)"),
	XL_OPTION_END,
};

static const struct run_opts run_defaults = {
	.retry = 1u << XL_OUT_OOM,
	.grace_s = 10.0,
};

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
	const struct run_opts *o;
	struct calib_store *st;
	const struct xl_patterns *pats;
	int rank;
	const char *rank_from;
	bool record;
	char **argv;
	int argc;
};

/* One attempt of a planned candidate.  Returns the child's exit status (or
 * 70, 73, 77...) and sets the outcome. */
static int attempt(struct attempt_ctx *a, const struct xl_plan_item *it, int n, int total,
		   enum xl_outcome *outcome)
{
	const char *cand = it->candidate;
	struct xl_profile *p = it->profile;
	struct calib_sig sig;
	struct calib_prediction pred;
	struct xl_sup_result sr;
	struct xl_scan so, se;
	struct xl_report rep;
	struct xl_classified cl;
	struct xl_sup_opts so_opts;
	struct xl_watch watch;
	struct xl_storm storm;
	const json_t *parts = it->parts;
	json_t *manifest, *record, *argvj;
	char *runs, *id, *dir, *report, *mpath, *kept = NULL;
	char tbuf[40], b1[32], b2[32];
	double t0;
	int rc;

	*outcome = XL_OUT_ERROR;
	/* a candidate may add a flag that is known-bad on the installed bundle */
	if (cand && (rc = xl_profile_bundle_gate(a->ctx, p)))
		return rc;
	/* the cache directories are made here, on the machine that launches */
	if ((rc = xl_profile_make_cache_dirs(p)))
		return rc;
	calib_signature(parts, &sig);
	calib_predict(a->st, parts, 0, &pred);

	runs = xl_runs_dir();
	id = xl_new_run_id(a->rank, n);
	dir = xl_asprintf("%s/%s", runs, id);
	if (xl_mkdirs(runs, 0700) < 0 || mkdir(dir, 0700) < 0) {
		xl_error("run directory '%s': %s", dir, strerror(errno));
		free(runs);
		free(id);
		free(dir);
		calib_sig_release(&sig);
		return XL_EX_CANTCREAT;
	}
	report = xl_asprintf("%s/report.jsonl", dir);
	close(open(report, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	mpath = xl_asprintf("%s/manifest.json", dir);

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
	json_object_set_new(manifest, "prediction", calib_prediction_json(&pred));
	json_object_set_new(manifest, "run_dir", json_string(dir));
	json_object_set_new(manifest, "report", json_string(report));
	t0 = xl_now();
	json_object_set_new(manifest, "start", json_string(xl_iso_time(t0, tbuf, sizeof(tbuf))));
	json_object_set_new(manifest, "end", json_null());
	json_object_set_new(manifest, "outcome", json_null());
	if (xl_write_json_atomic(mpath, manifest, false) < 0)
		xl_warn("cannot write '%s': %s", mpath, strerror(errno));

	{
		/* the place in the order says why this candidate runs now */
		const char *pl = calib_place_name(it->rank.place);
		struct xl_buf why = XL_BUF_INIT;

		if (pl && strcmp(pl, "only") != 0)
			xl_buf_adds(&why, pl);
		if (pred.known)
			xl_buf_addf(&why, "%spredicted %s", why.len ? ", " : "",
				    xl_fmt_bytes(pred.predicted_bytes, b1, sizeof(b1)));
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

	long long observed = rep.peak_bytes >= 0 ? rep.peak_bytes : sr.peak_rss_bytes;
	const char *obs_src = rep.peak_bytes >= 0 ? (rep.source[0] ? rep.source : "report") : "host_rss";

	if (rep.predicted_bytes >= 0)
		calib_predict(a->st, parts, rep.predicted_bytes, &pred);
	json_object_set_new(manifest, "prediction", calib_prediction_json(&pred));
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
	json_object_set_new(manifest, "predicted_bytes", pred.known || pred.reported ? json_integer((json_int_t)pred.predicted_bytes) : json_null());
	json_object_set_new(manifest, "observed_bytes", json_integer(observed));
	json_object_set_new(manifest, "observed_source", json_string(obs_src));
	json_object_set_new(manifest, "host_peak_rss_bytes", json_integer(sr.peak_rss_bytes));
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
			pred.known || pred.reported ? ", predicted " : "",
			pred.known || pred.reported ? xl_fmt_bytes(pred.predicted_bytes, b1, sizeof(b1)) : "",
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
		rec.outcome = cl.outcome;
		rec.exit_status = sr.exit_code;
		rec.predicted_bytes = pred.known || pred.reported ? (int64_t)pred.predicted_bytes
								 : CALIB_UNSET;
		rec.observed_bytes = observed;
		rec.wall_s = sr.wall_s;
		rec.compile_count = cl.compile_count;
		rec.host_peak_rss_bytes = sr.peak_rss_bytes;
		rec.signature_json = xl_strdup(sig.canonical);
		snprintf(rec.shape_hash, sizeof(rec.shape_hash), "%s", sig.shape_hash);
		snprintf(rec.stack_hash, sizeof(rec.stack_hash), "%s", sig.stack_hash);
		rec.hardware_kind = sig.hardware_kind ? xl_strdup(sig.hardware_kind) : NULL;
		/* the kept copy first: it outlives a store that fails */
		record = calib_attempt_to_json(&rec, CALIB_JSON_FULL);
		if (xl_record_keep(record, &kept) < 0)
			xl_warn("cannot keep the record in '%s': %s", kept ? kept : "?", strerror(errno));
		if (a->st && calib_record_attempt(a->st, &rec) == 0) {
			xl_record_done(record);
		} else {
			xl_warn("the store did not take the record (%s); it is kept in '%s' and goes in at the next run",
				a->st ? calib_errmsg(a->st) : "store unavailable", kept ? kept : dir);
		}
		free(kept);
		json_decref(record);
		calib_attempt_release(&rec);
	}
	xl_scan_release(&so);
	xl_scan_release(&se);
	xl_watch_release(&watch);
	rc = sr.exit_code;
out:
	json_decref(manifest);
	calib_sig_release(&sig);
	free(runs);
	free(id);
	free(dir);
	free(report);
	free(mpath);
	return rc;
}

static enum xl_exit cmd_run(struct xl_ctx *ctx, const struct xl_call *call)
{
	const struct run_opts o = *(const struct run_opts *)call->opts;
	const char *name = call->argv[0];
	struct attempt_ctx a;
	struct xl_profile *p0;
	struct xl_patterns pats;
	struct xl_plan plan = { 0 };
	bool have_pats;
	int rc, last = 0;
	size_t i, total;

	/* a full disk or a file-size limit must fail a write, not kill xlaunch */
	signal(SIGXFSZ, SIG_IGN);
	if (!call->restc && !o.dry_run)
		return xl_usage_error(call, "no command to run (put it after '--')");
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
	a.record = !o.no_record && !o.dry_run && (a.rank == 0 || o.all_ranks);
	a.argv = call->restc ? call->restv : NULL;
	a.argc = call->restc;
	if (!o.no_record || p0->ncands > 1) {
		char *err = NULL;

		/* a store held by someone else delays the launch's end at most
		 * this long; the record is then kept and replayed later */
		if (!getenv("XLAUNCH_STORE_WAIT"))
			calib_set_wait(10.0);
		/* a store that cannot be opened never stops a launch; a dry
		 * run reads one that is there and creates nothing */
		if (calib_open(ctx->store_path, o.dry_run ? CALIB_OPEN_NOCREATE : 0, &a.st, &err) != 0) {
			if (o.dry_run)
				xl_debug("%s; the plan follows the profile's order", err ? err : "store unavailable");
			else
				xl_warn("%s; launching anyway, records are kept until the store works", err ? err : "store unavailable");
			free(err);
			a.st = NULL;
		}
	}
	if (a.st && a.record)
		xl_record_replay(a.st);
	have_pats = xl_patterns_load(NULL, &pats) == 0;
	if (!have_pats)
		xl_warn("outcome patterns unavailable: outcomes are named from exit statuses only");
	a.pats = have_pats ? &pats : NULL;

	if (o.dry_run)
		xl_bundle_summary_readonly();
	rc = xl_plan_make(ctx, a.st, name, o.cand, 0, &plan);
	if (rc) {
		last = rc;
		goto done;
	}
	if (plan.store_rc)
		xl_warn("cannot order the candidates from the store; using the profile's order");
	total = plan.n;
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

				printf("  %zu. %-16s %-11s %s%s%s\n", i + 1,
				       it->candidate ? it->candidate : "(profile)",
				       calib_place_name(it->rank.place), it->rank.reason,
				       it->rank.predicted ? "; predicted " : "",
				       it->rank.predicted ? xl_fmt_bytes(it->rank.predicted_bytes, b, sizeof(b)) : "");
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
	for (i = 0; i < plan.n && i < total; i++) {
		enum xl_outcome oc;

		last = attempt(&a, &plan.items[i], (int)i + 1, (int)total, &oc);
		if (last == 0 && (o.fail_on & (1u << oc))) {
			xl_info("outcome '%s' is in --fail-on: exit %d", xl_outcome_name(oc), XL_EX_FAIL_ON);
			last = XL_EX_FAIL_ON;
		}
		if (oc == XL_OUT_INTERRUPTED || !(o.retry & (1u << oc)))
			break;
		if (i + 1 < total)
			xl_info("outcome '%s' is in --retry: trying the next candidate", xl_outcome_name(oc));
		else if (total > 1 || p0->ncands > 1)
			xl_info("outcome '%s' is in --retry, but no attempts are left", xl_outcome_name(oc));
	}
done:
	xl_plan_release(&plan);
	if (have_pats)
		xl_patterns_release(&pats);
	calib_close(a.st);
	xl_profile_free(p0);
	return last;
}

const struct xl_cmd xl_cmd_run = {
	.name = "run",
	.summary = "launch and supervise a command, record the outcome, retry",
	.operands = "PROFILE",
	.rest = "COMMAND [ARG...]",
	.json = "with --dry-run, the plan: {profile, order, max_attempts}",
	.help =
		"Supervises COMMAND under PROFILE: its own process group, signals forwarded,\n"
		"output to the terminal and to $XDG_STATE_HOME/xlaunch/runs/ID/, the outcome\n"
		"named (ok, oom, compile-storm, crash, error, timeout, interrupted) and\n"
		"recorded, and the next candidate tried when the outcome is in --retry.\n",
	.epilog =
		"The exit status is the last attempt's child's: its code, or 128+N for\n"
		"signal N; 79 when it exited 0 with an outcome listed in --fail-on.  The\n"
		"child gets XLAUNCH_RUN_ID, XLAUNCH_RUN_DIR and XLAUNCH_REPORT (a file to\n"
		"append JSON report lines to).\n",
	.options = run_options,
	XL_CMD_OPTS(struct run_opts, &run_defaults),
	.run = cmd_run,
};
