/* attempt.c - one attempt of a launch, in the order a reader follows it:
 * the run directory with its start manifest, the child's environment (and
 * XLA's dump), the supervised child, its outcome, what it used, the
 * manifest's end, and the record kept until the store has it. */
#include "launcher/run/attempt.h"
#include "launcher/run/memcg.h"
#include "launcher/run/dumpsetup.h"
#include "launcher/run/figures.h"
#include "launcher/run/peers.h"
#include "launcher/run/record.h"
#include "launcher/run/rundir.h"
#include "launcher/run/sampler.h"
#include "launcher/run/sweep.h"
#include "launcher/run/xlafigure.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* One attempt's state, from its run directory to its record; released by
 * attempt_release() whatever step it stopped at. */
struct attempt {
	const struct xl_launch *l;
	const struct xl_plan_item *it;
	int n, total;
	struct calib_sig sig;
	bool have_sig;
	char *runs, *id, *dir, *part, *jobreport, *mpath, *end_path, *guard_path;
	json_t *manifest;
	double t0;
	struct xl_observe obs;
	struct xl_xla_dump dump;
	bool torch;                  /* the job may run torch.compile */
	struct xl_scan so, se;
	struct xl_watch watch;
	bool watching;
	struct xl_sup_result sr;
	struct xl_storm storm;
	struct xl_classified cl;
	struct calib_attempt figs;
	json_t *xla_mods, *prev_mods;
	char *prev_run;
	struct xl_peers *peers;       /* the other ranks of the job, or NULL */
	json_t *peer;                 /* the rank this one was ended for, or NULL */
	struct xl_memcg memcg;        /* the launch's own memory cgroup (dir NULL: none) */
	char **argv;                  /* the command and the candidate's args (strings borrowed) */
	int argc;
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

struct last_mods {
	json_t *mods;
	char *run;
};

static int take_mods(const struct calib_attempt *a, void *arg)
{
	struct last_mods *l = arg;
	/* details without the key's text have no such key: not parsed */
	json_t *d = a->details && strstr(a->details, "\"xla_modules\"") ?
		    json_loads(a->details, 0, NULL) : NULL;
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

/* The manifest as the attempt starts: what runs, under what, where. */
static json_t *start_manifest(struct attempt *at)
{
	const struct xl_launch *l = at->l;
	const struct xl_profile *p = at->it->profile;
	json_t *argvj = json_array(), *pj = xl_profile_to_json(p), *m;
	char tbuf[40];

	for (int i = 0; i < at->argc; i++)
		json_array_append_new(argvj, json_string(at->argv[i]));
	m = json_pack("{s:s,s:s,s:o,s:s,s:O,s:O,s:i,s:i,s:O,s:O,s:O,s:O,s:O}",
		      "xlaunch", XLAUNCH_VERSION, "id", at->id, "argv", argvj,
		      "profile", p->name, "profile_chain", json_object_get(pj, "chain"),
		      "candidate", json_object_get(pj, "candidate"),
		      "attempt", at->n, "attempts_planned", at->total,
		      "env", json_object_get(pj, "env"), "unset", json_object_get(pj, "unset"),
		      "flags", json_object_get(pj, "flags"), "policy", json_object_get(pj, "policy"),
		      "limits", json_object_get(pj, "limits"));
	if (json_object_get(pj, "args"))
		json_object_set(m, "candidate_args", json_object_get(pj, "args"));
	json_decref(pj);
	json_object_set_new(m, "signature", json_pack("{s:s,s:s,s:s,s:O}", "hash", at->sig.hash,
						      "shape_hash", at->sig.shape_hash, "stack_hash",
						      at->sig.stack_hash, "parts", at->sig.parts));
	json_object_set_new(m, "order", xl_plan_item_json(at->it));
	json_object_set_new(m, "host", json_string(xl_hostname()));
	json_object_set_new(m, "rank", json_integer(l->rank));
	json_object_set_new(m, "rank_from", l->rank_from ? json_string(l->rank_from) : json_null());
	json_object_set_new(m, "world_size", json_integer(l->world));
	json_object_set_new(m, "job_id", l->job_id ? json_string(l->job_id) : json_null());
	json_object_set_new(m, "prediction", calib_estimate_json(&at->it->rank.est));
	json_object_set_new(m, "run_dir", at->dir ? json_string(at->dir) : json_null());
	json_object_set_new(m, "report", at->jobreport ? json_string(at->jobreport) : json_null());
	at->t0 = xl_now();
	json_object_set_new(m, "start", json_string(xl_iso_time(at->t0, tbuf, sizeof(tbuf))));
	json_object_set_new(m, "end", json_null());
	json_object_set_new(m, "outcome", json_null());
	/* who runs it, so that a later xlaunch can tell when nobody does */
	json_object_set_new(m, "owner", xl_run_owner());
	json_object_set_new(m, "end_record_expected", json_boolean(l->record));
	json_object_set_new(m, "store", l->st ? json_string(calib_store_path(l->st)) : json_null());
	return m;
}

/* Makes the run directory under runs, which appears whole with its start
 * manifest: made as ".ID.part" and renamed (a sweep removes one its owner
 * left).  0, or -1 with *why (caller frees) and errno. */
static int create_run_dir(struct attempt *at, char **why)
{
	char *ppath;
	int rc = 0;

	at->dir = xl_asprintf("%s/%s", at->runs, at->id);
	at->part = xl_asprintf("%s/.%s.part", at->runs, at->id);
	/* in the index of unsettled ones before it exists, so that a sweep
	 * finds it whenever its owner dies */
	if (xl_mkdirs(at->runs, 0700) < 0 || xl_unsettled_add(at->runs, at->id) < 0 ||
	    mkdir(at->part, 0700) < 0) {
		int e = errno;

		*why = xl_asprintf("run directory '%s': %s", at->dir, strerror(e));
		xl_unsettled_remove(at->runs, at->id);
		errno = e;
		return -1;
	}
	at->jobreport = xl_asprintf("%s/report.jsonl", at->dir);
	at->mpath = xl_asprintf("%s/manifest.json", at->dir);
	at->end_path = xl_asprintf("%s/end.json", at->dir);
	at->manifest = start_manifest(at);
	ppath = xl_asprintf("%s/manifest.json", at->part);
	if (xl_write_json_atomic(ppath, at->manifest, true) < 0 || rename(at->part, at->dir) < 0) {
		int e = errno;

		*why = xl_asprintf("run directory '%s': %s", at->dir, strerror(e));
		unlink(ppath);
		rmdir(at->part);
		xl_unsettled_remove(at->runs, at->id);
		errno = e;
		rc = -1;
	}
	free(ppath);
	if (rc == 0)
		close(open(at->jobreport, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	return rc;
}

/* Frees what a failed create_run_dir() made, for another try. */
static void forget_run_dir(struct attempt *at)
{
	free(at->runs);
	free(at->dir);
	free(at->part);
	free(at->jobreport);
	free(at->mpath);
	free(at->end_path);
	json_decref(at->manifest);
	at->runs = at->dir = at->part = at->jobreport = at->mpath = at->end_path = NULL;
	at->manifest = NULL;
}

/* The run directory, in the state directory or, when that cannot hold it,
 * in the fallback under $TMPDIR (rundir.c); none at all when nothing can
 * keep it and the launch records nothing (--no-record).  Returns 0, or 73
 * after saying why. */
static int make_run_dir(struct attempt *at)
{
	char *why = NULL;

	at->id = xl_new_run_id(at->l->rank, at->n);
	at->runs = xl_runs_dir();
	if (!at->runs) {
		/* no directory can keep it: only with --no-record (launch.c) */
		at->manifest = start_manifest(at);
		return 0;
	}
	if (create_run_dir(at, &why) == 0)
		return 0;
	if (xl_keep_fall_back(why)) {
		free(why);
		why = NULL;
		forget_run_dir(at);
		at->runs = xl_runs_dir();
		if (create_run_dir(at, &why) == 0)
			return 0;
	}
	xl_error("%s", why);
	free(why);
	return XL_EX_CANTCREAT;
}

/* "attempt 2/3: profile 'p' candidate 'c' (unseen, predicted ...) run ID":
 * the place in the order says why this candidate runs now. */
static void announce(const struct attempt *at)
{
	const char *cand = at->it->candidate;
	const struct calib_estimate *est = &at->it->rank.est;
	const char *pl = calib_place_name(at->it->rank.place);
	struct xl_buf why = XL_BUF_INIT;
	char b1[32];

	if (pl && strcmp(pl, "only") != 0)
		xl_buf_adds(&why, pl);
	if (est->known)
		xl_buf_addf(&why, "%spredicted %s of %s", why.len ? ", " : "",
			    xl_fmt_bytes((uint64_t)est->predicted_bytes, b1, sizeof(b1)),
			    calib_kind_name(est->kind));
	xl_info("attempt %d/%d: profile '%s'%s%s%s%s%s%s run %s", at->n, at->total,
		at->it->profile->name, cand ? " candidate '" : "", cand ? cand : "", cand ? "'" : "",
		why.len ? " (" : "", xl_buf_str(&why), why.len ? ")" : "", at->id);
	xl_buf_release(&why);
}

/* Whether the job may run torch.compile: its bundle has torch, or the
 * profile sets torch.compile's variables. */
static bool torch_job(const struct xl_profile *p, const json_t *parts)
{
	if (json_object_get(json_object_get(json_object_get(parts, "bundle"), "packages"), "torch"))
		return true;
	for (size_t i = 0; i < p->nvars; i++)
		if (xl_startswith(p->vars[i].name, "TORCHINDUCTOR_") ||
		    xl_startswith(p->vars[i].name, "TORCH_COMPILE") ||
		    xl_startswith(p->vars[i].name, "TORCHDYNAMO_"))
			return true;
	return false;
}

/* The child's environment: the profile's, xlaunch's own variables, and
 * the dump flags that have XLA write each compiled module (no cache key
 * sees them; the reader turns them into compilations and memory reports).  Says before the start when a compile cache will be cold.
 * Caller frees with xl_env_free. */
static char **child_env(struct attempt *at)
{
	const struct xl_profile *p = at->it->profile;
	char **envp = xl_profile_build_env(p, environ);
	char *helper = xl_data_path("etc/report/xlaunch_report.py");

	add_env(&envp, "XLAUNCH_RUN_ID", at->id);
	if (at->dir) {
		add_env(&envp, "XLAUNCH_REPORT", at->jobreport);
		add_env(&envp, "XLAUNCH_RUN_DIR", at->dir);
	}
	add_env(&envp, "XLAUNCH_REPORT_HELPER", helper);
	free(helper);
	xl_ck_before_launch(envp, at->argv, p->name, at->id, p->runtime);
	if (at->dir)
		xl_xla_dump_setup(p, at->it->parts, at->dir, at->l->o->no_xla_dump, &envp, &at->dump);
	else
		snprintf(at->dump.why, sizeof(at->dump.why), "not asked: no run directory");
	at->torch = torch_job(p, at->it->parts);
	return envp;
}

/* The limit a program's XLA memory report is held against while the child
 * runs (compile.early_oom, run --early-oom; on unless turned off), into
 * so: the smallest limit of a kind that holds XLA's buffers.  A job on
 * the host holds them in its own memory: limits.memory, limits.address_space
 * and the cgroup's memory.max (not the machine's memory: a program compiled
 * here for another device, a TPU topology, runs elsewhere); a job on a
 * device holds them in the device's memory, or its allocator's share of
 * it.  None of these known, nothing is held against. */
static void early_oom_limit(const struct attempt *at, struct xl_sup_opts *so)
{
	const struct xl_plan_item *it = at->it;
	int mode = at->l->o->early_oom != XL_EARLY_OOM_UNSET ? at->l->o->early_oom
							      : it->profile->compile.early_oom;
	/* as xl_job_limits judges it: no hardware known is the host */
	bool host = calib_parts_on_host(it->parts) || (!json_object_get(it->parts, "hardware") &&
						      !json_object_get(it->parts, "device"));

	if (mode == XL_EARLY_OOM_OFF || !at->dump.dir)
		return;
	for (size_t i = 0; i < it->nlimits; i++) {
		const struct calib_limit *c = &it->limits[i];
		bool holds = host ? (c->kind == CALIB_KIND_HOST_PEAK_RSS || c->kind == CALIB_KIND_HOST_PEAK_VM) &&
					    !xl_startswith(c->source, "host memory")
				  : c->kind == CALIB_KIND_DEVICE_PEAK;

		if (holds && c->bytes > 0 && (!so->early_oom_bytes || c->bytes < so->early_oom_bytes)) {
			so->early_oom_bytes = c->bytes;
			so->early_oom_limit = c->source;
		}
	}
}

/* Runs the child to its end, its output scanned and its compilations
 * watched as they come.  Returns 0, or 70 when it could not start. */
static int supervise(struct attempt *at, char **envp)
{
	const struct xl_launch *l = at->l;
	const struct xl_compile_cfg *pc = &at->it->profile->compile;
	const struct xl_watch_settings set = {
		pc->step_pattern, pc->warmup_steps, pc->max_after_warmup, pc->max_compile_share,
	};
	struct xl_watch_cfg cfg;
	struct xl_sup_opts so;
	int rc;

	xl_watch_configure(&cfg, l->pats ? &l->pats->compile : NULL, &set);
	cfg.jobreport_path = at->jobreport;
	cfg.dump_dir = at->dump.dir;
	cfg.dump_ours = at->dump.ours;
	cfg.dump_since = (double)(time_t)at->t0;
	cfg.torch_job = at->torch;
	cfg.envp = envp;
	cfg.inductor_since = at->t0;
	xl_scan_init(&at->so, l->pats);
	xl_scan_init(&at->se, l->pats);
	cfg.start = xl_mono();
	xl_watch_init(&at->watch, &cfg);
	at->watching = true;
	xl_scan_watch(&at->so, &at->watch);
	xl_scan_watch(&at->se, &at->watch);
	memset(&so, 0, sizeof(so));
	so.argv = at->argv;
	so.envp = envp;
	so.limits = &at->it->profile->limits;
	so.timeout_s = l->o->timeout_s;
	so.grace_s = l->o->grace_s;
	so.out_log = at->dir ? open_log(at->dir, "stdout.log") : -1;
	so.err_log = at->dir ? open_log(at->dir, "stderr.log") : -1;
	so.scan_out = &at->so;
	so.scan_err = &at->se;
	so.watch = &at->watch;
	so.observe = &at->obs;
	so.end_path = at->end_path;
	at->guard_path = at->dir ? xl_asprintf("%s/guardian", at->dir) : NULL;
	so.guardian_path = at->guard_path;
	if (l->st && !l->o->no_record)
		at->peers = xl_peers_begin(l->st, l->job_id, l->rank, l->world, at->id,
					   &at->it->profile->ranks);
	so.peers = at->peers;
	/* the kernel's peak and limits.memory, where a cgroup can be had */
	xl_memcg_open(&at->memcg, at->it->profile->limits.memory);
	if (at->memcg.limit < 0 && at->it->profile->limits.memory >= 0 &&
	    at->it->profile->limits.memory != INT64_MAX)
		xl_warn("limits.memory is not enforced: %s", at->memcg.why);
	so.memcg = at->memcg.dir ? &at->memcg : NULL;
	so.stop_on_storm = (l->o->on_storm != XL_ON_STORM_UNSET ? l->o->on_storm : pc->on_storm) ==
			   XL_ON_STORM_STOP;
	early_oom_limit(at, &so);
	/* a server store's connection is not held while the child runs */
	calib_idle(l->st);
	rc = xl_supervise(&so, &at->sr);
	if (so.out_log >= 0)
		close(so.out_log);
	if (so.err_log >= 0)
		close(so.err_log);
	return rc;
}

/* The outcome: exit status, out-of-memory lines, the job's report file (its
 * reader is the watch's), storm verdict. */
static void classify(struct attempt *at)
{
	xl_watch_jobreport_warn(&at->watch);
	xl_watch_verdict(&at->watch, &at->storm);
	xl_classify(&at->sr, &at->so, &at->se, &at->watch.jobreport, &at->storm, &at->cl);
	/* the other ranks learn this one's end first of all */
	xl_peers_classify(at->peers, &at->cl);
	at->peer = xl_peers_json(at->peers);
	xl_peers_end(at->peers, at->cl.outcome, at->sr.exit_code);
	at->peers = NULL;
}

/* The TPU compiler refused the program: what it needs is the compiler's
 * figure of XLA's buffers for this candidate (a prediction of basis
 * compiler, unless one was made before the launch), the HBM it had the
 * limit it was judged against (said in the figure's source). */
static void tpu_compile_oom(struct attempt *at, const struct xl_scan *oom)
{
	int64_t need, have;
	char src[200];

	if (at->cl.outcome != XL_OUT_OOM || !oom || !xl_tpu_hbm_oom(oom->oom_line, &need, &have) ||
	    calib_attempt_figure(&at->figs, true, CALIB_KIND_XLA_BUFFERS))
		return;
	snprintf(src, sizeof(src), "the TPU compiler's out-of-memory message: needs %lld bytes, more than the "
		 "available HBM, %lld bytes (the limit)", (long long)need, (long long)have);
	calib_attempt_add_figure(&at->figs, true, CALIB_KIND_XLA_BUFFERS, need, CALIB_BASIS_COMPILER,
				 CALIB_UNSET, src);
}

/* What was used, each figure of its kind: the process group, NVML, the
 * job's report file, the failed allocation, XLA's own figure (reused from the last
 * launch of this signature for programs loaded from the cache). */
static void observe_figures(struct attempt *at)
{
	struct calib_attempt *f = &at->figs;
	const struct xl_scan *oom = at->se.oom_line ? &at->se : at->so.oom_line ? &at->so : NULL;
	char src[400];
	int64_t xb;

	xl_observe_figures(f, &at->obs, at->sr.peak_rss_bytes, &at->watch.jobreport,
			   at->cl.outcome == XL_OUT_OOM && oom ? oom->oom_line : NULL);
	/* the kernel's own peak, where the launch had a cgroup: in place of
	 * the sampled one */
	xb = xl_memcg_peak(&at->memcg, src, sizeof(src));
	if (xb > 0)
		calib_attempt_add_figure(f, false, CALIB_KIND_HOST_PEAK_RSS, xb, CALIB_BASIS_NONE,
					 CALIB_UNSET, src);
	at->xla_mods = xl_watch_dump_reports(&at->watch);
	if (at->l->st)
		at->prev_mods = last_xla_modules(at->l->st, at->sig.hash, &at->prev_run);
	xb = xl_xla_modules_figure(at->xla_mods, at->prev_mods, at->prev_run, src, sizeof(src));
	if (xb >= 0)
		calib_attempt_add_figure(f, false, CALIB_KIND_XLA_BUFFERS, xb, CALIB_BASIS_NONE,
					 CALIB_UNSET, src);
	tpu_compile_oom(at, oom);
	xl_observe_headline(f, &at->it->rank.est);
}

/* The headline observed figure, -1 when none. */
static long long observed_bytes(const struct attempt *at)
{
	return at->figs.observed_bytes != CALIB_UNSET ? at->figs.observed_bytes : -1;
}

static const char *observed_kind(const struct attempt *at)
{
	return at->figs.observed_bytes != CALIB_UNSET ? calib_kind_name(at->figs.observed_kind)
						      : "none";
}

/* The manifest's end: outcome, figures, compilations, the dump; written. */
static void end_manifest(struct attempt *at)
{
	json_t *m = at->manifest;
	const struct calib_estimate *est = &at->it->rank.est;
	const struct xl_jobreport *rep = &at->watch.jobreport;
	const struct calib_figure *hf = at->figs.observed_bytes != CALIB_UNSET
		? calib_attempt_figure(&at->figs, false, at->figs.observed_kind) : NULL;
	long long observed = observed_bytes(at);
	json_t *fj = calib_attempt_to_json(&at->figs, CALIB_JSON_HISTORY);
	char tbuf[40];

	json_object_set_new(m, "end", json_string(xl_iso_time(xl_now(), tbuf, sizeof(tbuf))));
	json_object_set_new(m, "wall_s", json_real(at->sr.wall_s));
	json_object_set_new(m, "outcome", json_string(xl_outcome_name(at->cl.outcome)));
	json_object_set_new(m, "reason", json_string(at->cl.reason));
	json_object_set_new(m, "exit_status", json_integer(at->sr.exit_code));
	json_object_set_new(m, "compile_count", json_integer(at->cl.compile_count));
	json_object_set_new(m, "compile_storm", json_boolean(at->cl.storm));
	json_object_set_new(m, "cache_hits", at->storm.cache_hits >= 0 ? json_integer(at->storm.cache_hits) : json_null());
	json_object_set_new(m, "first_step_s", at->watch.first_step_s >= 0 ? json_real(at->watch.first_step_s) : json_null());
	json_object_set_new(m, "compile", xl_watch_json(&at->watch, &at->storm));
	json_object_set_new(m, "predicted_bytes", est->known ? json_integer((json_int_t)est->predicted_bytes) : json_null());
	json_object_set_new(m, "reported_predicted_bytes", rep->predicted_bytes >= 0 ? json_integer(rep->predicted_bytes) : json_null());
	json_object_set_new(m, "observed_bytes", observed >= 0 ? json_integer(observed) : json_null());
	json_object_set_new(m, "observed_kind", json_string(observed_kind(at)));
	json_object_set_new(m, "observed_source", hf && hf->source ? json_string(hf->source) : json_null());
	json_object_set_new(m, "host_peak_rss_bytes", json_integer(at->sr.peak_rss_bytes));
	json_object_set(m, "figures", json_object_get(fj, "figures"));
	json_decref(fj);
	json_object_set_new(m, "observation", xl_observe_json(&at->obs));
	json_object_set_new(m, "xla_dump", json_pack("{s:o, s:b, s:o, s:o, s:O, s:o}",
		"dir", at->dump.dir ? json_string(at->dump.dir) : json_null(), "added_by_xlaunch",
		at->dump.ours, "tokens", at->dump.tokens ? json_string(at->dump.tokens) : json_null(),
		"why_not", at->dump.dir ? json_null() : json_string(at->dump.why), "modules",
		at->xla_mods, "read", xl_watch_dump_json(&at->watch)));
	json_object_set_new(m, "report_lines", json_pack("{s:I,s:I,s:I}", "total", (json_int_t)rep->lines,
							 "malformed", (json_int_t)rep->malformed,
							 "unknown", (json_int_t)rep->unknown));
	if (at->sr.term_dropped)
		json_object_set_new(m, "terminal_dropped_bytes", json_integer((json_int_t)at->sr.term_dropped));
	if (at->peer)
		json_object_set(m, "peer", at->peer);
	if (at->mpath && xl_write_json_atomic(at->mpath, m, false) < 0)
		xl_warn("cannot write '%s': %s", at->mpath, strerror(errno));
}

/* The outcome line, with what the watch has to say first. */
static void say_outcome(struct attempt *at)
{
	const struct calib_estimate *est = &at->it->rank.est;
	long long observed = observed_bytes(at);
	char comp[256], b1[32], b2[32], pkind[48];

	xl_watch_warn(&at->watch, &at->storm, at->dir ? at->dir : "the output above");
	if (at->sr.term_dropped && at->dir)
		xl_warn("the terminal could not keep up: %zu bytes were not shown; %s/stdout.log and stderr.log have everything",
			at->sr.term_dropped, at->dir);
	else if (at->sr.term_dropped)
		xl_warn("the terminal could not keep up: %zu bytes were not shown (no run directory logged them)",
			at->sr.term_dropped);
	xl_watch_summary(&at->watch, &at->storm, comp, sizeof(comp));
	/* a prediction of another kind says its own: observed and predicted are
	 * compared only within one kind */
	pkind[0] = '\0';
	if (est->known && strcmp(calib_kind_name(est->kind), observed_kind(at)) != 0)
		snprintf(pkind, sizeof(pkind), " (%s)", calib_kind_name(est->kind));
	xl_info("attempt %d/%d: %s (%s) after %.1f s, observed %s (%s)%s%s%s%s", at->n, at->total,
		xl_outcome_name(at->cl.outcome), at->cl.reason, at->sr.wall_s,
		xl_fmt_bytes((uint64_t)(observed < 0 ? 0 : observed), b2, sizeof(b2)),
		observed_kind(at), est->known ? ", predicted " : "",
		est->known ? xl_fmt_bytes((uint64_t)est->predicted_bytes, b1, sizeof(b1)) : "",
		pkind, comp);
}

/* The store's record of the attempt; takes the attempt's figures. */
static void fill_record(struct attempt *at, struct calib_attempt *rec)
{
	const struct xl_launch *l = at->l;
	json_t *d = json_object(), *c = json_object_get(at->manifest, "compile");

	rec->id = xl_strdup(at->id);
	rec->time = (double)(time_t)at->t0;   /* whole seconds, as the manifest's start */
	rec->profile = xl_strdup(at->it->profile->name);
	rec->candidate = at->it->candidate ? xl_strdup(at->it->candidate) : NULL;
	snprintf(rec->signature, sizeof(rec->signature), "%s", at->sig.hash);
	rec->host = xl_strdup(xl_hostname());
	rec->rank = l->rank;
	rec->job_id = l->job_id ? xl_strdup(l->job_id) : NULL;
	rec->outcome = at->cl.outcome;
	rec->exit_status = at->sr.exit_code;
	rec->figures = at->figs.figures;
	rec->nfigures = at->figs.nfigures;
	at->figs.figures = NULL;
	at->figs.nfigures = 0;
	rec->predicted_bytes = at->figs.predicted_bytes;
	rec->predicted_kind = at->figs.predicted_kind;
	rec->predicted_basis = at->figs.predicted_basis;
	rec->observed_bytes = at->figs.observed_bytes;
	rec->observed_kind = at->figs.observed_kind;
	rec->cache_hits = at->storm.cache_hits >= 0 ? at->storm.cache_hits : CALIB_UNSET;
	rec->first_step_s = at->watch.first_step_s >= 0 ? at->watch.first_step_s : NAN;
	/* what the store keeps of the compilations and of XLA's figures: the
	 * manifest's objects */
	if (json_is_object(c))
		json_object_set(d, "compile", c);
	if (json_object_size(at->xla_mods))
		json_object_set(d, "xla_modules", at->xla_mods);
	if (at->peer)
		json_object_set(d, "peer", at->peer);
	if (json_object_size(d))
		rec->details = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(d);
	rec->wall_s = at->sr.wall_s;
	rec->compile_count = at->cl.compile_count;
	rec->host_peak_rss_bytes = at->sr.peak_rss_bytes;
	rec->signature_json = xl_strdup(at->sig.canonical);
	snprintf(rec->shape_hash, sizeof(rec->shape_hash), "%s", at->sig.shape_hash);
	snprintf(rec->stack_hash, sizeof(rec->stack_hash), "%s", at->sig.stack_hash);
	rec->hardware_kind = at->sig.hardware_kind ? xl_strdup(at->sig.hardware_kind) : NULL;
	rec->signature_scheme = CALIB_SIG_SCHEME;
}

/* The record, into the store; kept in the state directory when the store
 * does not take it (replayed by a later run).  Until the store has it,
 * the manifest of the attempt's end holds everything the record does: a
 * supervisor that dies in between leaves it to the sweep (sweep.c).  The
 * run directory is settled either way. */
static void record(struct attempt *at)
{
	struct calib_store *st = at->l->st;
	struct calib_attempt rec;
	json_t *record;
	char *kept = NULL;

	if (!at->l->record) {
		xl_run_settled(at->id, "not recorded: this launch records nothing in the store");
		return;
	}
	calib_attempt_init(&rec);
	fill_record(at, &rec);
	if (st && calib_record_attempt(st, &rec) == 0) {
		xl_run_settled(at->id, "recorded");
		calib_attempt_release(&rec);
		return;
	}
	record = calib_attempt_to_json(&rec, CALIB_JSON_FULL);
	if (xl_record_keep(record, &kept) < 0)
		xl_warn("cannot keep the record in '%s': %s", kept ? kept : "?", strerror(errno));
	xl_warn("the store did not take the record (%s); it is kept in '%s' and goes in at the next run",
		st ? calib_errmsg(st) : "store unavailable", kept ? kept : at->dir);
	free(kept);
	json_decref(record);
	calib_attempt_release(&rec);
}

static void attempt_release(struct attempt *at)
{
	/* a child that could not be started ends the rank badly */
	xl_peers_end(at->peers, XL_OUT_ERROR, XL_EX_SOFTWARE);
	json_decref(at->peer);
	if (at->watching) {
		xl_scan_release(&at->so);
		xl_scan_release(&at->se);
		xl_watch_release(&at->watch);
	}
	calib_attempt_release(&at->figs);
	xl_observe_release(&at->obs);
	xl_memcg_close(&at->memcg);
	xl_xla_dump_release(&at->dump);
	json_decref(at->xla_mods);
	json_decref(at->prev_mods);
	free(at->prev_run);
	json_decref(at->manifest);
	if (at->have_sig)
		calib_sig_release(&at->sig);
	free(at->runs);
	free(at->id);
	free(at->dir);
	free(at->part);
	free(at->jobreport);
	free(at->mpath);
	free(at->end_path);
	free(at->guard_path);
	free(at->argv);
}

int xl_attempt(const struct xl_launch *l, const struct xl_plan_item *it, int n, int total,
	       enum xl_outcome *outcome)
{
	struct attempt at;
	char **envp;
	int rc;

	*outcome = XL_OUT_ERROR;
	memset(&at, 0, sizeof(at));
	at.l = l;
	at.it = it;
	at.n = n;
	at.total = total;
	calib_attempt_init(&at.figs);
	/* a candidate may add a flag that is known-bad on the installed bundle */
	if (it->candidate && (rc = xl_profile_bundle_gate(l->ctx, it->profile)))
		return rc;
	/* the cache directories are made here, on the machine that launches */
	if ((rc = xl_profile_make_cache_dirs(it->profile)))
		return rc;
	calib_signature(it->parts, &at.sig);
	at.have_sig = true;
	/* this candidate's args, not an earlier attempt's */
	at.argv = xl_profile_command(it->profile, l->argv, l->argc, &at.argc);
	xl_observe_init(&at.obs, 0.1);
	if ((rc = make_run_dir(&at)))
		goto out;
	announce(&at);
	envp = child_env(&at);
	rc = supervise(&at, envp);
	xl_env_free(envp);
	if (rc)
		goto out;
	classify(&at);
	*outcome = at.cl.outcome;
	observe_figures(&at);
	end_manifest(&at);
	say_outcome(&at);
	record(&at);
	rc = at.sr.exit_code;
	/* ended for another rank: never a success, whatever the child said */
	if (at.sr.peer_ended && rc == 0)
		rc = 128 + SIGTERM;
	/* ended for a storm: the status --fail-on gives one, whatever the
	 * child made of its SIGTERM */
	if (at.sr.storm_stopped)
		rc = XL_EX_FAIL_ON;
out:
	attempt_release(&at);
	return rc;
}
