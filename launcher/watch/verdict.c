/* verdict.c - the storm rule over what the watch collected (watch.h), and
 * what is said of it: the outcome's reason, the manifest's "compile"
 * object, the warnings and the summary.
 *
 * A storm is recompilation that keeps costing after warm-up.  Warm-up ends
 * at step warmup_steps when the run shows steps, else after the first third
 * of the run (from its first compilation).  Two rules, either one a storm:
 *   arrival  more than max_after_warmup recompilations after warm-up, the
 *            last of them past the middle of the run (of its steps after
 *            warm-up, or of its time): they kept arriving;
 *   cost     two or more recompilations after warm-up (by steps; by time,
 *            after the first burst of compilations, which ends at the
 *            latest at one function's (warmup_steps + 1)-th
 *            recompilation) took more than max_compile_share of the wall
 *            time after it.
 * Neither reads the quiet time before the process exits.  By time, a job
 * that recompiled on every step and then sat quiet for longer than that
 * is ok unless the recompiling was costly: a quiet end looks, from
 * outside, like a steady run; steps tell them apart.
 */
#include "launcher/watch/dump.h"
#include "launcher/watch/events.h"
#include "launcher/watch/inductor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *runtime_own(const char *runtime);

static bool is_report_fn(const struct xl_watch *w, int fi)
{
	return fi >= 0 && strcmp(w->fns[fi].runtime, "report") == 0;
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* "float32[8,2]" for "ShapedArray(float32[8,2])": JAX's types, shorter. */
static char *clean_shapes(const char *s)
{
	struct xl_buf b = XL_BUF_INIT;

	while (*s) {
		if (xl_startswith(s, "ShapedArray(")) {
			const char *p = s + 12;
			int depth = 0;

			for (; *p; p++) {
				if (*p == '[')
					depth++;
				else if (*p == ']')
					depth--;
				else if (*p == ')' && !depth)
					break;
				xl_buf_addc(&b, *p);
			}
			s = *p ? p + 1 : p;
			continue;
		}
		xl_buf_addc(&b, *s++);
	}
	return xl_buf_detach(&b);
}

/* Input top (by its index among all) of a program whose inputs kept
 * their number: how it changed, with its types where they were kept. */
static void input_cause(const struct xl_cfn *f, size_t top, struct xl_buf *out)
{
	long recompiles = f->entries - 1;
	const struct xl_hlo_param *last = xl_hlo_entry_param(&f->e_last, top);
	const struct xl_hlo_param *prev = xl_hlo_entry_param(&f->e_prev, top);
	const struct xl_hlo_param *first = xl_hlo_entry_param(&f->e_first, top);
	const struct xl_hlo_param *second = xl_hlo_entry_param(&f->e_second, top);

	if (!last || !prev) {
		/* in the middle of a long list: its hash changed, its type was
		 * not kept */
		xl_buf_addf(out, "input %zu of %zu changed", top, f->e_last.total);
		if (f->pchg[top] == recompiles)
			xl_buf_adds(out, " at every recompilation");
		else
			xl_buf_addf(out, " on %ld of %ld recompilations", f->pchg[top], recompiles);
		xl_buf_addf(out, " (its type is not kept: only the first %d and the last %d inputs' are)",
			    XL_HLO_KEEP_HEAD, XL_HLO_KEEP_TAIL);
	} else if (recompiles == 1) {
		xl_buf_addf(out, "input %zu (%s) changed: %s -> %s", top, last->name, prev->type, last->type);
	} else if (first && second && f->pchg[top] == recompiles) {
		xl_buf_addf(out, "input %zu (%s) changed at every recompilation: %s -> %s", top,
			    last->name, first->type, second->type);
		if (f->entries > 2)
			xl_buf_addf(out, "%s%s", f->entries > 3 ? " -> ... -> " : " -> ", last->type);
	} else {
		xl_buf_addf(out, "input %zu (%s) changed on %ld of %ld recompilations (the last: %s -> %s)",
			    top, last->name, f->pchg[top], recompiles, prev->type, last->type);
	}
}

/* Why the program recompiled, from its modules' entry parameters. */
static void dump_cause(const struct xl_cfn *f, struct xl_buf *out)
{
	long recompiles = f->entries - 1;
	size_t top = 0, others = 0;

	for (size_t i = 1; i < f->npchg; i++)
		if (f->pchg[i] > f->pchg[top])
			top = i;
	if (f->entry_changed > 0 && f->npchg && f->pchg[top] > 0 && f->e_prev.total == f->e_last.total) {
		for (size_t i = 0; i < f->npchg; i++)
			others += i != top && f->pchg[i] > 0;
		input_cause(f, top, out);
		if (others)
			xl_buf_addf(out, "; %zu other input%s changed too", others, others == 1 ? "" : "s");
		if (f->count_changed)
			xl_buf_addf(out, "; its number of inputs changed too (%zu -> %zu)", f->count_from,
				    f->count_to);
		return;
	}
	if (f->count_changed) {
		xl_buf_addf(out, "its number of inputs changed (%zu -> %zu)", f->count_from, f->count_to);
		return;
	}
	if (f->same_program >= recompiles)
		xl_buf_addf(out, "the same program (the same inputs, the same text) compiled %ld more time%s:"
			    " no new shape; its compiled form was not kept (a new jit of it each time?)",
			    recompiles, recompiles == 1 ? "" : "s");
	else
		xl_buf_addf(out, "its inputs kept their shapes; the program itself changed (%zu different texts)",
			    f->nprogs);
}

/* Why fns[fi] compiled again, in the runtime's words where it said, else
 * from its modules in XLA's dump. */
static void cause_text(const struct xl_cfn *f, struct xl_buf *out)
{
	bool dump = f->entries >= 2;

	if (strcmp(f->runtime, "torch.compile") == 0) {
		if (f->cause)
			xl_buf_addf(out, "guard failed: %s", f->cause);
		else
			xl_buf_adds(out, "torch.compile does not say why without TORCH_LOGS=recompiles");
	} else if (strcmp(f->runtime, "jax") == 0 && f->cause) {
		xl_buf_adds(out, f->cause);
	} else if (dump) {
		dump_cause(f, out);
	} else if (strcmp(f->runtime, "torch_xla") == 0) {
		xl_buf_addf(out, "%zu different graph%s (torch_xla does not say what changed; compile cause: %s)",
			    f->graphs.n, f->graphs.n == 1 ? "" : "s", f->cause ? f->cause : "?");
	} else if (strcmp(f->runtime, "jax") == 0) {
		if (f->shapes && f->prev_shapes && strcmp(f->shapes, f->prev_shapes) != 0) {
			char *a = clean_shapes(f->shapes), *p = clean_shapes(f->prev_shapes);

			xl_buf_addf(out, "new input types: now (%s), before (%s)", a, p);
			free(a);
			free(p);
		} else {
			xl_buf_adds(out, "JAX says why with JAX_EXPLAIN_CACHE_MISSES=1");
		}
	} else if (strcmp(f->runtime, "xla") == 0) {
		xl_buf_adds(out, "XLA's dump did not show its inputs");
	} else {
		xl_buf_adds(out, "the runtime's lines do not say which function (reported counts only)");
	}
}

static void fn_label(const struct xl_cfn *f, struct xl_buf *out)
{
	if (f->internal)
		xl_buf_addf(out, "%s ", runtime_own(f->runtime));
	xl_buf_adds(out, f->name);
	if (f->place)
		xl_buf_addf(out, " (%s)", base(f->place));
}

/* The events the verdict reads: the named ones (lines and the dump), or,
 * when nothing named a function, the report's counts. */
static bool use_named(const struct xl_watch *w)
{
	for (size_t i = 0; i < w->nev; i++)
		if (w->ev[i].fn >= 0 && !(w->ev[i].src & XL_SRC_REPORT))
			return true;
	return false;
}

/* After warm-up: per function (per[]), in all, and the last one's step and
 * time. */
/* Whether fns[fi] counts toward the storm rule: a runtime's own programs
 * (jnp.ones for a new shape) recompile beside the user's functions, a
 * symptom of the same drift or a model's start in several shapes; they
 * count only in a job where no function of the user's compiled at all
 * (everything run outside jit).  They are ranked and listed either way. */
static bool user_compiled(const struct xl_watch *w)
{
	for (size_t i = 0; i < w->nfns; i++)
		if (!w->fns[i].internal && w->fns[i].compiles > 0 && strcmp(w->fns[i].runtime, "report") != 0)
			return true;
	return false;
}

static bool rule_counts(const struct xl_watch *w, int fi, bool user)
{
	return !user || !w->fns[fi].internal;
}

static long after_warmup(const struct xl_watch *w, bool named, long *per, long *last_step,
			 double *last_t)
{
	const struct xl_storm_rule *r = &w->cfg.rule;
	bool user = user_compiled(w);
	long n = 0;

	*last_step = -1;
	*last_t = -1;
	for (size_t i = 0; i < w->nev; i++) {
		const struct xl_cev_at *e = &w->ev[i];

		if (e->fn < 0 || !e->recompile || is_report_fn(w, e->fn) == named)
			continue;
		if (w->steps > 0 ? e->step < r->warmup_steps : e->t < w->warmup_s)
			continue;
		per[e->fn]++;
		if (!rule_counts(w, e->fn, user))
			continue;
		n++;
		if (e->step > *last_step)
			*last_step = e->step;
		if (e->t > *last_t)
			*last_t = e->t;
	}
	return n;
}

/* Whether fns[a] goes before fns[b] in the storm's ranking (per: their
 * recompilations after warm-up): the user's own function before the
 * runtime's internal programs (they recompile for the same new shapes,
 * a symptom of the same drift); then the one whose recompilations after
 * warm-up took more time (times within a quarter of each other count as
 * equal: a busy host stretches them); then the one that recompiled more;
 * then by name.  The runtime's own programs among themselves: by their
 * compilations in all, then by name.  Nothing in it depends on when a
 * compilation was seen. */
static bool ranks_before(const struct xl_watch *w, const long *per, int a, int b)
{
	const struct xl_cfn *x = &w->fns[a], *y = &w->fns[b];
	double tx = x->recompile_after_s, ty = y->recompile_after_s;
	double big = tx > ty ? tx : ty;
	int c;

	if (x->internal != y->internal)
		return !x->internal;
	/* the runtime's own, a symptom listed after the cause: by their
	 * compilations in all, then name, which no timing moves */
	if (x->internal && x->compiles != y->compiles)
		return x->compiles > y->compiles;
	if (x->internal)
		return (c = strcmp(x->name, y->name)) != 0 ? c < 0 : a < b;
	if (big > 0 && fabs(tx - ty) > 0.25 * big)
		return tx > ty;
	if (per[a] != per[b])
		return per[a] > per[b];
	if ((c = strcmp(x->name, y->name)) != 0)
		return c < 0;
	return a < b;
}

/* The functions that storm, ranked into s->ranked: every one whose
 * recompilations after warm-up are at least a quarter of the most any
 * function had, or whose time recompiling is at least a quarter of the
 * most; a function that recompiled once beside one that recompiled forty
 * times does not storm with it.  Returns the first, or -1. */
static int rank_storm(const struct xl_watch *w, const long *per, struct xl_storm *s)
{
	long most = 0;
	double most_s = 0;
	int order[XL_STORM_RANKED + 1];
	size_t n = 0;

	for (size_t i = 0; i < w->nfns; i++) {
		if (per[i] > most)
			most = per[i];
		if (w->fns[i].recompile_after_s > most_s)
			most_s = w->fns[i].recompile_after_s;
	}
	for (size_t i = 0; i < w->nfns && most > 0; i++) {
		const struct xl_cfn *f = &w->fns[i];
		size_t at;

		if (!per[i] || (4 * per[i] < most && !(most_s > 0 && 4 * f->recompile_after_s >= most_s)))
			continue;
		/* insertion into the ranking, the last place dropped when full */
		for (at = n; at > 0 && ranks_before(w, per, (int)i, order[at - 1]); at--)
			order[at] = order[at - 1];
		order[at] = (int)i;
		if (n < XL_STORM_RANKED)
			n++;
	}
	s->nranked = n;
	for (size_t k = 0; k < n; k++) {
		s->ranked[k] = order[k];
		s->ranked_after[k] = per[order[k]];
	}
	return n ? order[0] : -1;
}

/* "JAX's own" for a runtime's internal programs. */
static const char *runtime_own(const char *runtime)
{
	return strcmp(runtime, "jax") == 0 ? "JAX's own" : strcmp(runtime, "torch_xla") == 0 ? "torch_xla's own"
	       : "the runtime's own";
}

/* The other storming functions, after the one named: the user's, then
 * the runtime's internal programs, as what they are. */
static void storm_others(const struct xl_watch *w, const struct xl_storm *s, struct xl_buf *why)
{
	const char *sep = "; also recompiling: ";

	for (size_t k = 1; k < s->nranked; k++) {
		const struct xl_cfn *f = &w->fns[s->ranked[k]];

		if (!f->internal) {
			xl_buf_addf(why, "%s%s (%ld)", sep, f->name, s->ranked_after[k]);
			sep = ", ";
		}
	}
	sep = NULL;
	for (size_t k = 1; k < s->nranked; k++) {
		const struct xl_cfn *f = &w->fns[s->ranked[k]];

		if (!f->internal)
			continue;
		if (!sep)
			xl_buf_addf(why, "; %s programs recompiling with it: ", runtime_own(f->runtime));
		xl_buf_addf(why, "%s%s (%ld)", sep ? sep : "", f->name, s->ranked_after[k]);
		sep = ", ";
	}
}

/* "; 58% of the time after warm-up spent compiling" when durations are known. */
static void storm_share(const struct xl_storm *s, struct xl_buf *why)
{
	if (s->share_all >= 0.005)
		xl_buf_addf(why, "; %.0f%% of the time after warm-up spent recompiling", 100 * s->share_all);
}

static void no_names(const struct xl_watch *w, struct xl_buf *why)
{
	if (w->cfg.pats && w->cfg.pats->debug_profile)
		xl_buf_addf(why, "; with compile logging on (profile %s) the function is named",
			    w->cfg.pats->debug_profile);
}

/* The arrival rule; true when it makes a storm (the reason in why).
 * per: each function's recompilations after warm-up (filled here). */
static bool arrival_rule(const struct xl_watch *w, bool named, long *per, struct xl_storm *s,
			 struct xl_buf *why)
{
	const struct xl_storm_rule *r = &w->cfg.rule;
	long last_step;
	double last_t;
	bool arriving;
	const struct xl_cfn *f;

	s->after_warmup = after_warmup(w, named, per, &last_step, &last_t);
	s->top = rank_storm(w, per, s);
	if (w->steps > 0)
		arriving = last_step >= r->warmup_steps + (w->step - r->warmup_steps) / 2;
	else
		arriving = last_t >= w->middle_s;
	if (s->after_warmup <= r->max_after_warmup || !arriving)
		return false;
	s->rule = "arrival";
	f = s->top >= 0 ? &w->fns[s->top] : NULL;
	if (f && !is_report_fn(w, s->top)) {
		/* one count: the named function's recompilations after warm-up */
		fn_label(f, why);
		xl_buf_addf(why, " recompiled %ld time%s after warm-up", per[s->top], per[s->top] == 1 ? "" : "s");
		if (w->steps > 0)
			xl_buf_addf(why, " (step %ld)", r->warmup_steps);
		else
			xl_buf_adds(why, " (the first third of the run)");
		xl_buf_adds(why, ": ");
		cause_text(f, why);
		storm_share(s, why);
		storm_others(w, s, why);
	} else if (w->steps > 0) {
		xl_buf_addf(why, "%ld compilations after step %ld (more than %ld), counted from the job's report",
			    s->after_warmup, r->warmup_steps, r->max_after_warmup);
		no_names(w, why);
	} else {
		xl_buf_addf(why, "%ld recompilations after warm-up, still arriving past the middle of the run"
			    " (more than %ld)", s->after_warmup, r->max_after_warmup);
		no_names(w, why);
	}
	return true;
}

/* The recompilations after the cost rule's warm-up, and their share of
 * the time after it (-1 when no duration is known); returns the function
 * that spent most of it, or -1. */
static int cost_figures(const struct xl_watch *w, struct xl_storm *s)
{
	double span = w->end_s - w->cost_from_s, best = 0, all_s = 0;
	bool user = user_compiled(w);
	int top = -1;

	s->after_cost = 0;
	s->recompile_s = 0;
	s->share = s->share_all = -1;
	for (size_t i = 0; i < w->nfns; i++) {
		all_s += w->fns[i].recompile_after_s;
		if (!rule_counts(w, (int)i, user))
			continue;
		s->after_cost += w->fns[i].after_cost;
		s->recompile_s += w->fns[i].recompile_after_s;
		if (w->fns[i].recompile_after_s > best) {
			best = w->fns[i].recompile_after_s;
			top = (int)i;
		}
	}
	if (w->durations && w->cost_from_s >= 0 && span > 0) {
		s->share = s->recompile_s / span;
		s->share_all = all_s / span;
	}
	return top;
}

/* The cost rule: recompiling took too much of the time after warm-up. */
static bool cost_rule(const struct xl_watch *w, struct xl_storm *s, struct xl_buf *why)
{
	int top = cost_figures(w, s);
	const struct xl_cfn *f;

	if (s->share < 0 || s->after_cost < 2 || s->share <= w->cfg.rule.max_compile_share || top < 0)
		return false;
	s->rule = "cost";
	/* the ranking's first, when it costs something after warm-up */
	if (s->top >= 0 && w->fns[s->top].after_cost > 0)
		top = s->top;
	else
		s->nranked = 0;
	s->top = top;
	f = &w->fns[top];
	fn_label(f, why);
	xl_buf_addf(why, " recompiled %ld time%s after warm-up, taking %.1f s: %.0f%% of the %.1f s after it"
		    " was spent recompiling (more than %.0f%%): ", f->after_cost, f->after_cost == 1 ? "" : "s",
		    f->recompile_after_s, 100 * s->share, w->end_s - w->cost_from_s,
		    100 * w->cfg.rule.max_compile_share);
	cause_text(f, why);
	storm_others(w, s, why);
	return true;
}

static bool limit_rule(const struct xl_watch *w, struct xl_storm *s, struct xl_buf *why)
{
	for (size_t i = 0; i < w->nfns; i++) {
		const struct xl_cfn *f = &w->fns[i];

		if (!f->limit_hit)
			continue;
		s->by = s->rule = "recompile-limit";
		s->top = (int)i;
		xl_buf_addf(why, "torch.compile hit its recompile limit (%ld) for ", f->limit);
		fn_label(f, why);
		xl_buf_adds(why, ": it runs uncompiled (eager) from then on");
		if (f->limit_reason)
			xl_buf_addf(why, "; last reason: %s", f->limit_reason);
		return true;
	}
	return false;
}

void xl_watch_verdict(const struct xl_watch *w, struct xl_storm *s)
{
	struct xl_buf why = XL_BUF_INIT;
	bool named = use_named(w);
	long *per = xl_calloc(w->nfns ? w->nfns : 1, sizeof(*per));

	memset(s, 0, sizeof(*s));
	s->by = "none";
	s->top = -1;
	s->share = -1;
	s->compiles = w->compiles > w->jobreport.compiles ? w->compiles : w->jobreport.compiles;
	/* Inductor's graphs, when nothing else counted more (no function
	 * names: no storm is judged from them) */
	if (w->inductor && w->inductor->graphs > s->compiles)
		s->compiles = w->inductor->graphs;
	s->cache_hits = w->loads > w->jobreport.cache_hits ? w->loads : w->jobreport.cache_hits;
	if (w->dump_loads > s->cache_hits)
		s->cache_hits = w->dump_loads;
	if (s->cache_hits <= 0 && w->jobreport.cache_hits < 0 && !w->loads && !w->dump_loads && !w->cache_misses &&
	    !w->cache_written && !w->cache_unreadable)
		s->cache_hits = -1;
	/* a reported count says how many, not whether a function compiled again */
	for (size_t i = 0; i < w->nfns; i++)
		if (strcmp(w->fns[i].runtime, "report") != 0 && w->fns[i].compiles > 1)
			s->recompiles += w->fns[i].compiles - 1;
	if (limit_rule(w, s, &why)) {
		s->storm = true;
	} else {
		s->by = w->steps > 0 ? "steps" : "time";
		/* the share of time recompiling, for the arrival rule's line too */
		(void)cost_figures(w, s);
		s->storm = arrival_rule(w, named, per, s, &why);
		if (!s->storm) {
			int top = s->top;
			size_t nranked = s->nranked;

			s->storm = cost_rule(w, s, &why);
			if (!s->storm) {
				s->top = top;
				s->nranked = nranked;
			}
		}
	}
	free(per);
	if (why.len >= sizeof(s->reason))
		snprintf(s->reason, sizeof(s->reason), "%.*s...", (int)sizeof(s->reason) - 4, xl_buf_str(&why));
	else
		snprintf(s->reason, sizeof(s->reason), "%s", xl_buf_str(&why));
	xl_buf_release(&why);
}

/* ---- while the run goes on ---------------------------------------------------------------- */

void xl_storm_live_init(struct xl_storm_live *l)
{
	memset(l, 0, sizeof(*l));
	l->held_since = -1;
}

bool xl_watch_storm_now(struct xl_watch *w, struct xl_storm_live *l, double t, struct xl_storm *out)
{
	double now_s, span;
	bool holds;

	if (t < l->next_check)
		return false;
	l->next_check = t + 1.0;
	if (w->nev == l->nev_checked && l->held_since < 0)
		return false;   /* nothing new, and nothing held */
	l->nev_checked = w->nev;
	xl_watch_settle(w, t);
	xl_watch_verdict(w, out);
	holds = out->storm && out->rule &&
		(strcmp(out->rule, "arrival") == 0 || strcmp(out->rule, "recompile-limit") == 0);
	now_s = w->end_s;
	if (!holds) {
		l->held_since = -1;
		return false;
	}
	if (l->held_since < 0)
		l->held_since = now_s;
	/* it holds until the run, from its first compilation, has gone on as
	 * long again as when it first held (2 s at least) */
	span = l->held_since - (w->first_s >= 0 ? w->first_s : 0);
	if (span < 2.0)
		span = 2.0;
	return now_s >= l->held_since + span;
}

/* ---- rendering -------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jsecs(double s)
{
	return s >= 0 ? json_real(round(s * 1000) / 1000) : json_null();
}

/* What the dump said of a function's inputs. */
static json_t *inputs_json(const struct xl_cfn *f)
{
	json_t *a = json_array();

	for (size_t i = 0; i < f->npchg && json_array_size(a) < 8; i++) {
		const struct xl_hlo_param *first = xl_hlo_entry_param(&f->e_first, i);
		const struct xl_hlo_param *last = xl_hlo_entry_param(&f->e_last, i);

		if (!f->pchg[i])
			continue;
		/* an input whose type was not kept: its place and count */
		json_array_append_new(a, json_pack("{s:I,s:o,s:I,s:o,s:o}", "input", (json_int_t)i,
						   "name", jstr(last ? last->name : NULL),
						   "changes", (json_int_t)f->pchg[i],
						   "first", jstr(first ? first->type : NULL),
						   "last", jstr(last ? last->type : NULL)));
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:o}", "read", (json_int_t)f->entries, "changed",
			 (json_int_t)f->entry_changed, "same", (json_int_t)f->entry_same,
			 "same_program", (json_int_t)f->same_program, "changes", a);
}

/* The largest memory-usage report the dump holds of the program a
 * function names (its modules' names, as the runtime says them), -1. */
static int64_t fn_report(const struct xl_watch *w, const struct xl_cfn *f)
{
	const char *k;
	json_t *v;
	int64_t best = -1;

	if (!w->dump)
		return -1;
	json_object_foreach(w->dump->memory_reports, k, v) {
		char *name = xl_dump_function(k);

		if (strcmp(name, f->name) == 0 && json_integer_value(v) > best)
			best = json_integer_value(v);
		free(name);
	}
	return best;
}

static json_t *fn_json(const struct xl_watch *w, const struct xl_cfn *f)
{
	struct xl_buf c = XL_BUF_INIT;
	json_t *fo;
	int64_t rb = fn_report(w, f);

	if (f->compiles > 1 || f->limit_hit)
		cause_text(f, &c);
	fo = json_pack("{s:s,s:s,s:o,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "name", f->name, "runtime", f->runtime,
		       "place", jstr(f->place), "compiles", (json_int_t)f->compiles,
		       "loads", (json_int_t)(f->loads > f->dump_loads ? f->loads : f->dump_loads),
		       "after_warmup", (json_int_t)f->after_warmup,
		       "first_step", f->first_step >= 0 ? json_integer(f->first_step) : json_null(),
		       "last_step", f->last_step >= 0 ? json_integer(f->last_step) : json_null(),
		       "first_s", jsecs(f->first_s), "last_s", jsecs(f->last_s));
	json_object_set_new(fo, "internal", json_boolean(f->internal));
	json_object_set_new(fo, "from_output", json_integer(f->from_log));
	json_object_set_new(fo, "from_dump", json_integer(f->from_dump));
	json_object_set_new(fo, "compile_s", f->compile_s > 0 ? jsecs(f->compile_s) : json_null());
	json_object_set_new(fo, "cause", c.len ? json_string(xl_buf_str(&c)) : json_null());
	/* XLA's memory-usage report of its program (the largest compiled) */
	json_object_set_new(fo, "xla_bytes", rb >= 0 ? json_integer((json_int_t)rb) : json_null());
	if (f->first_reason)
		json_object_set_new(fo, "first_reason", json_string(f->first_reason));
	if (f->shapes)
		json_object_set_new(fo, "input_types", json_string(f->shapes));
	if (f->prev_shapes)
		json_object_set_new(fo, "input_types_before", json_string(f->prev_shapes));
	if (f->entries)
		json_object_set_new(fo, "inputs", inputs_json(f));
	if (f->graphs.n)
		json_object_set_new(fo, "graphs", json_integer((json_int_t)f->graphs.n));
	if (f->limit_hit)
		json_object_set_new(fo, "recompile_limit", json_integer(f->limit));
	xl_buf_release(&c);
	return fo;
}

static json_t *rule_json(const struct xl_watch *w, const struct xl_storm *s)
{
	const struct xl_storm_rule *r = &w->cfg.rule;
	json_t *o = json_pack("{s:I,s:I,s:f,s:s*}", "warmup_steps", (json_int_t)r->warmup_steps,
			      "max_after_warmup", (json_int_t)r->max_after_warmup,
			      "max_compile_share", r->max_compile_share, "step_pattern", w->cfg.step_pattern);

	(void)s;
	return o;
}

static json_t *warmup_json(const struct xl_watch *w, const struct xl_storm *s)
{
	return json_pack("{s:s,s:o,s:o,s:o,s:o,s:I,s:o}", "by", w->steps > 0 ? "steps" : "time",
			 "end_s", jsecs(w->steps > 0 ? -1 : w->warmup_s),
			 "middle_s", jsecs(w->steps > 0 ? -1 : w->middle_s),
			 "cost_from_s", jsecs(w->cost_from_s),
			 "recompile_s_after", s->share >= 0 ? jsecs(s->recompile_s) : json_null(),
			 "recompilations_after", (json_int_t)s->after_cost,
			 "share_after", s->share >= 0 ? json_real(round(s->share * 1000) / 1000) : json_null());
}

/* The storming functions as ranked, the named one first. */
static json_t *storm_functions_json(const struct xl_watch *w, const struct xl_storm *s)
{
	json_t *a = json_array();

	for (size_t k = 0; k < s->nranked; k++) {
		const struct xl_cfn *f = &w->fns[s->ranked[k]];
		struct xl_buf c = XL_BUF_INIT;

		cause_text(f, &c);
		json_array_append_new(a, json_pack("{s:s,s:s,s:b,s:o,s:I,s:I,s:o,s:s}", "name", f->name,
						   "runtime", f->runtime, "internal", f->internal,
						   "place", jstr(f->place), "after_warmup", (json_int_t)s->ranked_after[k],
						   "compiles", (json_int_t)f->compiles,
						   "recompile_s", f->recompile_after_s > 0 ? jsecs(f->recompile_after_s)
						   : json_null(), "cause", xl_buf_str(&c)));
		xl_buf_release(&c);
	}
	return a;
}

json_t *xl_watch_json(const struct xl_watch *w, const struct xl_storm *s)
{
	json_t *o = json_object(), *fns = json_array(), *gbs = json_array(), *lim = json_array();
	json_t *cache = json_object(), *nw = json_array();

	json_object_set_new(o, "count", json_integer(s->compiles));
	json_object_set_new(o, "from_output", json_integer(w->from_log));
	json_object_set_new(o, "from_dump", w->dump ? json_integer(w->from_dump) : json_null());
	json_object_set_new(o, "reported", w->jobreport.compiles >= 0 ? json_integer(w->jobreport.compiles) : json_null());
	json_object_set_new(o, "inductor", w->inductor ? xl_inductor_json(w->inductor) : json_null());
	json_object_set_new(o, "recompilations", json_integer(s->recompiles));
	json_object_set_new(o, "compile_s", w->durations ? jsecs(w->compile_s) : json_null());
	json_object_set_new(o, "storm", json_boolean(s->storm));
	json_object_set_new(o, "storm_by", json_string(s->by));
	json_object_set_new(o, "storm_rule", jstr(s->rule));
	json_object_set_new(o, "after_warmup", json_integer(s->after_warmup));
	json_object_set_new(o, "storm_reason", s->storm ? json_string(s->reason) : json_null());
	json_object_set_new(o, "rule", rule_json(w, s));
	json_object_set_new(o, "warmup", warmup_json(w, s));
	json_object_set_new(o, "steps", json_pack("{s:I,s:I,s:o,s:o,s:o}", "seen", (json_int_t)w->steps,
						   "last", (json_int_t)w->step,
						   "source", w->steps_from_output && w->steps_from_report ? json_string("output+report")
						   : w->steps_from_output ? json_string("output")
						   : w->steps_from_report ? json_string("report") : json_null(),
						   "first_step_s", jsecs(w->first_step_s),
						   "first_step_time_s", jsecs(w->jobreport_first_step_time)));
	for (size_t i = 0; i < w->nfns; i++) {
		const struct xl_cfn *f = &w->fns[i];

		/* the report's counts stand for the functions only when no
		 * runtime line or module named them; a frame whose
		 * compilations all went to the dump's programs is not listed */
		if (strcmp(f->runtime, "report") == 0 && w->compiles > 0)
			continue;
		if (!f->compiles && !f->loads && !f->dump_loads && !f->limit_hit)
			continue;
		if (f->limit_hit)
			json_array_append_new(lim, json_pack("{s:s,s:o,s:I,s:o,s:s}", "function", f->name,
							     "place", jstr(f->place), "limit", (json_int_t)f->limit,
							     "last_reason", jstr(f->limit_reason),
							     "then", "runs uncompiled (eager)"));
		json_array_append_new(fns, fn_json(w, f));
	}
	json_object_set_new(o, "functions", fns);
	json_object_set_new(o, "storm_functions", storm_functions_json(w, s));
	json_object_set_new(o, "recompile_limit", lim);
	for (size_t i = 0; i < w->ngbs; i++)
		json_array_append_new(gbs, json_pack("{s:o,s:o,s:I}", "place", jstr(w->gbs[i].place),
						     "reason", jstr(w->gbs[i].reason),
						     "count", (json_int_t)w->gbs[i].count));
	json_object_set_new(o, "graph_breaks", json_pack("{s:I,s:o}", "count", (json_int_t)w->gb_count,
							 "places", gbs));
	json_object_set_new(cache, "hits", s->cache_hits >= 0 ? json_integer(s->cache_hits) : json_null());
	json_object_set_new(cache, "misses", json_integer(w->cache_misses));
	json_object_set_new(cache, "written", json_integer(w->cache_written));
	json_object_set_new(cache, "failed_loads", json_integer(w->cache_unreadable));
	json_object_set_new(cache, "failed_load_reason", jstr(w->unreadable_reason));
	json_object_set_new(cache, "failed_load_runtime", jstr(w->unreadable_runtime));
	for (size_t i = 0; i < w->not_written.n; i++)
		json_array_append_new(nw, json_string(w->not_written.v[i]));
	json_object_set_new(cache, "not_written", nw);
	json_object_set_new(o, "cache", cache);
	return o;
}

void xl_watch_warn(const struct xl_watch *w, const struct xl_storm *s, const char *run_dir)
{
	if (s->storm) {
		xl_warn("compile storm: %s; see %s", s->reason, run_dir);
	} else {
		size_t said = 0;
		bool user = user_compiled(w);

		for (size_t i = 0; i < w->nfns; i++) {
			const struct xl_cfn *f = &w->fns[i];
			struct xl_buf b = XL_BUF_INIT;

			if (f->limit_hit) {
				xl_warn("torch.compile hit its recompile limit (%ld) for %s: it runs uncompiled from then on",
					f->limit, f->name);
				continue;
			}
			/* a recompilation that is no storm is still named; the
			 * runtime's own programs only in a job where no function
			 * of the user's compiled (a model's start in several
			 * shapes is their business; the manifest has them) */
			if (f->compiles < 2 || strcmp(f->runtime, "report") == 0 || (f->internal && user) ||
			    said++ >= 3)
				continue;
			fn_label(f, &b);
			xl_buf_addf(&b, " compiled %ld times", f->compiles);
			if (f->last_step >= 0)
				xl_buf_addf(&b, ", the last after step %ld", f->last_step);
			xl_buf_adds(&b, ": ");
			cause_text(f, &b);
			xl_info("recompiled: %s", xl_buf_str(&b));
			xl_buf_release(&b);
		}
	}
	if (w->cache_unreadable)
		xl_warn("the %s persistent cache was written but cannot be read back here (%ld failed load%s: \"%s\"): every launch compiles again and rewrites it",
			w->unreadable_runtime ? w->unreadable_runtime : "runtime's", w->cache_unreadable,
			w->cache_unreadable == 1 ? "" : "s",
			w->unreadable_reason ? w->unreadable_reason : "the runtime gave no reason");
	if (w->gb_count) {
		struct xl_buf b = XL_BUF_INIT;

		for (size_t i = 0; i < w->ngbs && i < 3; i++)
			xl_buf_addf(&b, "%s%s%s%s%s", i ? "; " : "", w->gbs[i].place ? base(w->gbs[i].place) : "?",
				    w->gbs[i].reason ? " (" : "", w->gbs[i].reason ? w->gbs[i].reason : "",
				    w->gbs[i].reason ? ")" : "");
		if (w->ngbs > 3)
			xl_buf_addf(&b, "; and %zu more places", w->ngbs - 3);
		xl_warn("torch.compile: %ld graph break%s: %s", w->gb_count, w->gb_count == 1 ? "" : "s",
			xl_buf_str(&b));
		xl_buf_release(&b);
	}
}

void xl_watch_summary(const struct xl_watch *w, const struct xl_storm *s, char *buf, size_t n)
{
	size_t len;

	buf[0] = '\0';
	if (s->compiles || s->cache_hits > 0)
		snprintf(buf, n, ", %ld compile%s", s->compiles, s->compiles == 1 ? "" : "s");
	len = strlen(buf);
	/* a storm's line has its one count of recompilations already */
	if (s->recompiles > 0 && !s->storm && len < n)
		snprintf(buf + len, n - len, " (%ld recompilation%s)", s->recompiles,
			 s->recompiles == 1 ? "" : "s");
	len = strlen(buf);
	if (w->durations && w->compile_s > 0 && len < n)
		snprintf(buf + len, n - len, ", %.1f s compiling", w->compile_s);
	len = strlen(buf);
	if (s->cache_hits >= 0 && len < n)
		snprintf(buf + len, n - len, ", %ld persistent-cache hit%s", s->cache_hits,
			 s->cache_hits == 1 ? "" : "s");
	len = strlen(buf);
	if (w->cache_unreadable && len < n)
		snprintf(buf + len, n - len, ", %ld failed cache load%s", w->cache_unreadable,
			 w->cache_unreadable == 1 ? "" : "s");
	len = strlen(buf);
	if (w->gb_count && len < n)
		snprintf(buf + len, n - len, ", %ld graph break%s", w->gb_count, w->gb_count == 1 ? "" : "s");
	len = strlen(buf);
	if (w->first_step_s >= 0 && len < n)
		snprintf(buf + len, n - len, ", first step at %.1f s", w->first_step_s);
}
