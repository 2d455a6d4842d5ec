/* watch.c - the compile watch: compilations seen from outside the job (see
 * watch.h).
 *
 * Lines are matched once, as they stream past: a fixed substring first (a
 * cheap test on every line), then the pattern's regex for what the line
 * says.  Runtimes print several lines about one compilation (torch_xla about
 * twenty, torch.compile a block per recompilation): a line that opens a
 * block is committed as one event when the block closes, with what the
 * lines of the block added, so one compilation is counted once.
 */
#include "launcher/watch/dump.h"
#include "launcher/watch/events.h"
#include "launcher/watch/inductor.h"
#include "launcher/watch/jobreport.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cev_names[XL_CEV_N + 1] = {
	"compiled", "cache-hit", "cache-miss", "cache-written", "cache-not-written",
	"cache-unreadable", "shapes", "trace-miss", "trace-function", "trace-kind",
	"trace-change", "compile-cause", "graph", "frame", "recompiling", "guard",
	"recompile-limit", "limit-function", "limit-reason", "graph-break",
	"graph-break-place", "graph-break-reason", NULL,
};

const char *xl_cev_name(int ev)
{
	return ev >= 0 && ev < XL_CEV_N ? cev_names[ev] : NULL;
}

bool xl_cev_opens(int ev)
{
	return ev == XL_CEV_COMPILED || ev == XL_CEV_TRACE_MISS || ev == XL_CEV_RECOMPILING ||
	       ev == XL_CEV_LIMIT || ev == XL_CEV_GRAPH_BREAK;
}

void xl_storm_rule_default(struct xl_storm_rule *r)
{
	r->warmup_steps = 5;
	r->max_after_warmup = 8;
	r->max_compile_share = 0.25;
}

/* ---- loading ------------------------------------------------------------------ */

static int lerr(const char *path, const struct xl_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int lerr(const char *path, const struct xl_ynode *n, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	xl_buf_addf(&b, "outcomes '%s':%u:%u: ", path, n ? n->line : 0, n ? n->col : 0);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	xl_error("%s", xl_buf_str(&b));
	xl_buf_release(&b);
	return XL_EX_DATAERR;
}

static int check_map_keys(const char *path, const struct xl_ynode *m, const char *what,
			  const char *const *keys)
{
	if (m->kind != XL_Y_MAP)
		return lerr(path, m, "%s must be a mapping", what);
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct xl_ynode *k = m->items[i];
		size_t j;

		if (k->kind != XL_Y_SCALAR)
			return lerr(path, k, "%s: keys must be words", what);
		for (j = 0; keys[j]; j++)
			if (strcmp(keys[j], k->str) == 0)
				break;
		if (!keys[j]) {
			const char *dym = xl_did_you_mean(k->str, keys);

			return dym ? lerr(path, k, "%s: unknown key '%s'; did you mean '%s'?", what, k->str, dym)
				   : lerr(path, k, "%s: unknown key '%s'", what, k->str);
		}
	}
	return 0;
}

static int event_of(const char *path, const struct xl_ynode *n, int *out)
{
	if (!n || n->kind != XL_Y_SCALAR)
		return lerr(path, n, "a pattern needs an event");
	for (int i = 0; i < XL_CEV_N; i++) {
		if (strcmp(cev_names[i], n->str) == 0) {
			*out = i;
			return 0;
		}
	}
	{
		const char *dym = xl_did_you_mean(n->str, cev_names);

		return dym ? lerr(path, n, "unknown event '%s'; did you mean '%s'?", n->str, dym)
			   : lerr(path, n, "unknown event '%s'", n->str);
	}
}

static int group_of(const char *path, const struct xl_ynode *m, const char *key, int *out)
{
	const struct xl_ynode *n = xl_ymap_get(m, key);
	double d;

	*out = 0;
	if (!n)
		return 0;
	if (!xl_yscalar_double(n, &d) || d < 1 || d > 9 || d != (int)d)
		return lerr(path, n, "%s must be a group number from 1 to 9", key);
	*out = (int)d;
	return 0;
}

static int compile_re(const char *path, const struct xl_ynode *n, regex_t *re)
{
	int e = regcomp(re, n->str, REG_EXTENDED);

	if (e) {
		char msg[200];

		regerror(e, re, msg, sizeof(msg));
		regfree(re);
		return lerr(path, n, "bad regex: %s", msg);
	}
	return 0;
}

static int load_pattern(const char *path, const struct xl_ynode *m, struct xl_cpat *p)
{
	static const char *const keys[] = {
		"id", "runtime", "event", "text", "regex", "in", "first", "function", "file",
		"line", "detail", "frame", "seconds", "skip_file", "what", NULL,
	};
	const struct xl_ynode *id, *rt, *text, *re, *in, *first, *skip;
	int rc;

	p->in = -1;
	if ((rc = check_map_keys(path, m, "a compile event pattern", keys)))
		return rc;
	id = xl_ymap_get(m, "id");
	rt = xl_ymap_get(m, "runtime");
	text = xl_ymap_get(m, "text");
	re = xl_ymap_get(m, "regex");
	in = xl_ymap_get(m, "in");
	first = xl_ymap_get(m, "first");
	skip = xl_ymap_get(m, "skip_file");
	if (!id || id->kind != XL_Y_SCALAR || !rt || rt->kind != XL_Y_SCALAR)
		return lerr(path, m, "a pattern needs an id and a runtime");
	p->id = xl_strdup(id->str);
	p->runtime = xl_strdup(rt->str);
	if ((rc = event_of(path, xl_ymap_get(m, "event"), &p->event)))
		return rc;
	if ((!text && !re) || (text && (text->kind != XL_Y_SCALAR || !*text->str)) ||
	    (re && re->kind != XL_Y_SCALAR))
		return lerr(path, m, "pattern '%s' needs a text, a regex, or both", p->id);
	if (text)
		p->text = xl_strdup(text->str);
	if (re) {
		if ((rc = compile_re(path, re, &p->re)))
			return rc;
		p->has_re = true;
	}
	if (in) {
		if ((rc = event_of(path, in, &p->in)))
			return rc;
		if (!xl_cev_opens(p->in))
			return lerr(path, in, "'%s' does not open a block", in->str);
		if (xl_cev_opens(p->event))
			return lerr(path, m, "pattern '%s': an opening event cannot be in a block", p->id);
	}
	if (first && !xl_yscalar_bool(first, &p->first))
		return lerr(path, first, "first must be true or false");
	if (skip) {
		if (skip->kind != XL_Y_SCALAR)
			return lerr(path, skip, "skip_file must be a regex");
		if ((rc = compile_re(path, skip, &p->skip)))
			return rc;
		p->has_skip = true;
	}
	if ((rc = group_of(path, m, "function", &p->g_function)) ||
	    (rc = group_of(path, m, "file", &p->g_file)) || (rc = group_of(path, m, "line", &p->g_line)) ||
	    (rc = group_of(path, m, "detail", &p->g_detail)) ||
	    (rc = group_of(path, m, "frame", &p->g_frame)) ||
	    (rc = group_of(path, m, "seconds", &p->g_seconds)))
		return rc;
	{
		int top = p->g_function;

		if (p->g_seconds > top)
			top = p->g_seconds;
		if (p->g_file > top)
			top = p->g_file;
		if (p->g_line > top)
			top = p->g_line;
		if (p->g_detail > top)
			top = p->g_detail;
		if (p->g_frame > top)
			top = p->g_frame;
		if (top && (!p->has_re || (size_t)top > p->re.re_nsub))
			return lerr(path, m, "pattern '%s' names group %d, but its regex has %zu", p->id, top,
				    p->has_re ? p->re.re_nsub : (size_t)0);
	}
	return 0;
}

/* compile_storm: the thresholds of the storm rule. */
static int load_rule(const char *path, const struct xl_ynode *st, struct xl_storm_rule *r)
{
	static const char *const keys[] = { "warmup_steps", "max_after_warmup", "max_compile_share", NULL };
	const struct xl_ynode *v;
	double d;
	int rc;

	if ((v = xl_ymap_get(st, "quiet_gaps")))
		return lerr(path, v, "compile_storm: quiet_gaps is no longer read (a storm is judged by"
			    " recompilations still arriving past the middle of the run and by their share"
			    " of its time: max_compile_share)");
	if ((rc = check_map_keys(path, st, "compile_storm", keys)))
		return rc;
	if ((v = xl_ymap_get(st, "warmup_steps"))) {
		if (!xl_yscalar_double(v, &d) || d < 0 || d > 1e12 || d != (long)d)
			return lerr(path, v, "warmup_steps must be a count");
		r->warmup_steps = (long)d;
	}
	if ((v = xl_ymap_get(st, "max_after_warmup"))) {
		if (!xl_yscalar_double(v, &d) || d < 0 || d > 1e12 || d != (long)d)
			return lerr(path, v, "max_after_warmup must be a count");
		r->max_after_warmup = (long)d;
	}
	if ((v = xl_ymap_get(st, "max_compile_share"))) {
		if (!xl_yscalar_double(v, &d) || !(d > 0) || d > 1)
			return lerr(path, v, "max_compile_share must be a number above 0, at most 1");
		r->max_compile_share = d;
	}
	return 0;
}

/* compile_internal: {RUNTIME: {prefix: P, names: [NAME, ...]}, ...} */
static int load_internal(const char *path, const struct xl_ynode *m, struct xl_cpats *out)
{
	static const char *const keys[] = { "prefix", "names", NULL };
	int rc;

	if (m->kind != XL_Y_MAP)
		return lerr(path, m, "compile_internal must be a mapping of runtimes");
	out->internal = xl_calloc(m->n / 2 + 1, sizeof(*out->internal));
	for (size_t i = 0; i + 1 < m->n; i += 2) {
		const struct xl_ynode *k = m->items[i], *v = m->items[i + 1], *pre, *names;
		struct xl_internal *in = &out->internal[out->ninternal];

		if (k->kind != XL_Y_SCALAR)
			return lerr(path, k, "compile_internal: keys must be runtimes");
		if ((rc = check_map_keys(path, v, "compile_internal", keys)))
			return rc;
		in->runtime = xl_strdup(k->str);
		out->ninternal++;
		pre = xl_ymap_get(v, "prefix");
		names = xl_ymap_get(v, "names");
		if (pre && (pre->kind != XL_Y_SCALAR || !*pre->str))
			return lerr(path, pre, "compile_internal: prefix must be a word");
		if (pre)
			in->prefix = xl_strdup(pre->str);
		if (names && names->kind != XL_Y_SEQ)
			return lerr(path, names, "compile_internal: names must be a list");
		for (size_t j = 0; names && j < names->n; j++) {
			if (names->items[j]->kind != XL_Y_SCALAR)
				return lerr(path, names->items[j], "compile_internal: a name must be a word");
			xl_strv_push(&in->names, names->items[j]->str);
		}
		for (size_t j = 0; j < in->names.n; j++)
			xl_strmap_put(&in->index, in->names.v[j], j);
	}
	return 0;
}

bool xl_cpats_internal(const struct xl_cpats *c, const char *runtime, const char *name)
{
	const char *open, *close;
	char *prog;
	size_t at;
	bool r = false;

	if (!c || !runtime || !name)
		return false;
	/* JAX names a program jit(NAME), or pjit(NAME) */
	open = strchr(name, '(');
	close = strrchr(name, ')');
	prog = open && close > open ? xl_strndup(open + 1, (size_t)(close - open - 1)) : xl_strdup(name);
	for (size_t i = 0; i < c->ninternal && !r; i++) {
		const struct xl_internal *in = &c->internal[i];

		if (strcmp(in->runtime, runtime) != 0)
			continue;
		r = (in->prefix && xl_startswith(prog, in->prefix)) || xl_strmap_get(&in->index, prog, &at);
	}
	free(prog);
	return r;
}

int xl_cpats_load(const char *path, const struct xl_ynode *root, struct xl_cpats *out)
{
	const struct xl_ynode *internal = xl_ymap_get(root, "compile_internal");
	const struct xl_ynode *ev = xl_ymap_get(root, "compile_events");
	const struct xl_ynode *st = xl_ymap_get(root, "compile_storm");
	const struct xl_ynode *lg = xl_ymap_get(root, "compile_logging");
	const struct xl_ynode *bl = xl_ymap_get(root, "block_lines");
	double d;
	int rc;

	memset(out, 0, sizeof(*out));
	xl_storm_rule_default(&out->rule);
	out->block_lines = 64;
	if (bl) {
		if (!xl_yscalar_double(bl, &d) || d < 1 || d > 100000)
			return lerr(path, bl, "block_lines must be a count from 1 to 100000");
		out->block_lines = (long)d;
	}
	if (ev) {
		if (ev->kind != XL_Y_SEQ)
			return lerr(path, ev, "compile_events must be a list of patterns");
		out->v = xl_calloc(ev->n ? ev->n : 1, sizeof(*out->v));
		for (size_t i = 0; i < ev->n; i++) {
			out->n = i + 1;
			if ((rc = load_pattern(path, ev->items[i], &out->v[i]))) {
				xl_cpats_release(out);
				return rc;
			}
		}
	}
	if (st && (rc = load_rule(path, st, &out->rule))) {
		xl_cpats_release(out);
		return rc;
	}
	if (internal && (rc = load_internal(path, internal, out))) {
		xl_cpats_release(out);
		return rc;
	}
	if (lg) {
		static const char *const keys[] = { "debug_profile", "variables", NULL };
		const struct xl_ynode *dp, *vars;

		if ((rc = check_map_keys(path, lg, "compile_logging", keys))) {
			xl_cpats_release(out);
			return rc;
		}
		dp = xl_ymap_get(lg, "debug_profile");
		vars = xl_ymap_get(lg, "variables");
		if (dp && dp->kind == XL_Y_SCALAR)
			out->debug_profile = xl_strdup(dp->str);
		for (size_t i = 0; vars && vars->kind == XL_Y_SEQ && i < vars->n; i++)
			if (vars->items[i]->kind == XL_Y_SCALAR)
				xl_strv_push(&out->logging_vars, vars->items[i]->str);
	}
	return 0;
}

int xl_cpats_read(const char *path, struct xl_cpats *out)
{
	char *def = NULL;
	struct xl_ynode *root;
	int rc;

	memset(out, 0, sizeof(*out));
	xl_storm_rule_default(&out->rule);
	if (!path)
		path = def = xl_data_path("etc/outcomes.yaml");
	root = xl_yaml_read("outcomes", path, &rc);
	if (!root) {
		free(def);
		return rc;
	}
	rc = xl_cpats_load(path, root, out);
	xl_ynode_free(root);
	free(def);
	return rc;
}

void xl_cpats_release(struct xl_cpats *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].id);
		free(c->v[i].runtime);
		free(c->v[i].text);
		if (c->v[i].has_re)
			regfree(&c->v[i].re);
		if (c->v[i].has_skip)
			regfree(&c->v[i].skip);
	}
	free(c->v);
	for (size_t i = 0; i < c->ninternal; i++) {
		free(c->internal[i].runtime);
		free(c->internal[i].prefix);
		xl_strmap_release(&c->internal[i].index);
		xl_strv_release(&c->internal[i].names);
	}
	free(c->internal);
	free(c->debug_profile);
	xl_strv_release(&c->logging_vars);
	memset(c, 0, sizeof(*c));
}

/* ---- the watch ------------------------------------------------------------------ */

void xl_watch_configure(struct xl_watch_cfg *cfg, const struct xl_cpats *pats,
			const struct xl_watch_settings *set)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pats = pats;
	if (pats)
		cfg->rule = pats->rule;
	else
		xl_storm_rule_default(&cfg->rule);
	if (!set)
		return;
	if (set->warmup_steps >= 0)
		cfg->rule.warmup_steps = set->warmup_steps;
	if (set->max_after_warmup >= 0)
		cfg->rule.max_after_warmup = set->max_after_warmup;
	if (set->max_compile_share > 0)
		cfg->rule.max_compile_share = set->max_compile_share;
	cfg->step_pattern = set->step_pattern;
}

void xl_watch_init(struct xl_watch *w, const struct xl_watch_cfg *cfg)
{
	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	w->step = -1;
	w->first_step_s = -1;
	xl_jobreport_init(&w->jobreport);
	w->jobreport_first_step_time = -1;
	w->end_s = -1;
	w->first_s = w->warmup_s = w->middle_s = w->cost_from_s = -1;
	w->xla_mk.cursor = w->xla_mk.tail = -1;
	if (cfg->step_pattern && *cfg->step_pattern)
		w->has_step_re = regcomp(&w->step_re, cfg->step_pattern, REG_EXTENDED) == 0;
	/* the dump's file times and the report's own times are the wall
	 * clock's: their time 0 is the start */
	w->wall_origin = xl_now() - (xl_mono() - cfg->start);
	if (cfg->dump_dir) {
		w->dump = xl_malloc(sizeof(*w->dump));
		xl_dump_init(w->dump, cfg->dump_dir, cfg->dump_ours, w->wall_origin, cfg->dump_since);
	}
	if (cfg->torch_job) {
		w->inductor = xl_malloc(sizeof(*w->inductor));
		xl_inductor_setup(w->inductor, cfg->envp, true, cfg->inductor_since);
		w->inductor->origin = w->wall_origin;
	}
	w->cfg.dump_dir = NULL;
	w->cfg.envp = NULL;
}

static void cfn_release(struct xl_cfn *f)
{
	free(f->name);
	free(f->runtime);
	free(f->place);
	free(f->cause);
	free(f->first_reason);
	free(f->shapes);
	free(f->prev_shapes);
	free(f->limit_reason);
	xl_strv_release(&f->graphs);
	xl_hlo_entry_release(&f->e_first);
	xl_hlo_entry_release(&f->e_second);
	xl_hlo_entry_release(&f->e_prev);
	xl_hlo_entry_release(&f->e_last);
	free(f->pchg);
}

void xl_watch_release(struct xl_watch *w)
{
	for (size_t i = 0; i < w->nfns; i++)
		cfn_release(&w->fns[i]);
	free(w->fns);
	free(w->ev);
	free(w->step_t);
	free(w->step_n);
	free(w->unreadable_reason);
	free(w->unreadable_runtime);
	xl_strv_release(&w->not_written);
	xl_strv_release(&w->pending_hits);
	xl_strv_release(&w->pending_shapes);
	free(w->pending_cause_fn);
	free(w->pending_cause);
	free(w->pending_cause_place);
	for (size_t i = 0; i < w->ngbs; i++) {
		free(w->gbs[i].place);
		free(w->gbs[i].reason);
		xl_strv_release(&w->gbs[i].frames);
	}
	free(w->gbs);
	if (w->has_step_re)
		regfree(&w->step_re);
	xl_jobreport_release(&w->jobreport);
	if (w->dump) {
		xl_dump_release(w->dump);
		free(w->dump);
	}
	if (w->inductor) {
		xl_inductor_release(w->inductor);
		free(w->inductor);
	}
	memset(w, 0, sizeof(*w));
	w->jobreport.fd = -1;
}

static void set_str(char **dst, const char *s)
{
	char *c = s ? xl_strdup(s) : NULL;

	free(*dst);
	*dst = c;
}

static struct xl_cfn *find_fn(struct xl_watch *w, const char *runtime, const char *name,
			      const char *place, int *index)
{
	for (size_t i = 0; i < w->nfns; i++) {
		struct xl_cfn *f = &w->fns[i];

		if (strcmp(f->runtime, runtime) != 0 || strcmp(f->name, name) != 0)
			continue;
		if (place && f->place && strcmp(place, f->place) != 0)
			continue;
		if (place && !f->place)
			f->place = xl_strdup(place);
		if (index)
			*index = (int)i;
		return f;
	}
	w->fns = xl_realloc(w->fns, (w->nfns + 1) * sizeof(*w->fns));
	struct xl_cfn *f = &w->fns[w->nfns];

	memset(f, 0, sizeof(*f));
	f->name = xl_strdup(name);
	f->runtime = xl_strdup(runtime);
	f->place = place ? xl_strdup(place) : NULL;
	f->internal = xl_cpats_internal(w->cfg.pats, runtime, name);
	f->first_step = f->last_step = -1;
	f->first_s = f->last_s = -1;
	f->mk.cursor = f->mk.tail = -1;
	if (index)
		*index = (int)w->nfns;
	w->nfns++;
	return f;
}

/* The pairing key of fns[fi]: JAX names a program alike in its lines and
 * in the dump, so each program pairs on its own; torch_xla's lines name a
 * Python frame and its modules a graph, so its compilations pair in the
 * order they came. */
static struct xl_mkey *mkey(struct xl_watch *w, int fi)
{
	return strcmp(w->fns[fi].runtime, "torch_xla") == 0 ? &w->xla_mk : &w->fns[fi].mk;
}

/* What the function a line named knows (torch_xla: the frame that built
 * the graph, the compile cause) goes to the program the dump named. */
static void carry_over(struct xl_cfn *to, const struct xl_cfn *from)
{
	if (to == from)
		return;
	if (!to->place && from->place)
		to->place = xl_strdup(from->place);
	if (!to->cause && from->cause)
		to->cause = xl_strdup(from->cause);
	for (size_t i = 0; i < from->graphs.n && to->graphs.n < 1000; i++)
		if (!xl_strv_contains(&to->graphs, from->graphs.v[i]))
			xl_strv_push(&to->graphs, from->graphs.v[i]);
}

#define EVENTS_MAX (1u << 20)

static int push_event(struct xl_watch *w, const struct xl_cev_at *e)
{
	if (w->nev >= EVENTS_MAX)
		return -1;
	if (w->nev == w->capev) {
		w->capev = w->capev ? 2 * w->capev : 64;
		w->ev = xl_realloc(w->ev, w->capev * sizeof(*w->ev));
	}
	w->ev[w->nev] = *e;
	return (int)w->nev++;
}

/* Records one compilation of fns[fi] that source src saw, starting at t
 * (seconds from the start), taking dur seconds (-1 unknown).  A line and a
 * module of the same compilation are one event: the k-th of one source
 * pairs with the k-th of the other.  Returns the event's index, or -1 past
 * the events kept (the counts go on). */
static int add_compile(struct xl_watch *w, int fi, double t, double dur, long step, int src)
{
	struct xl_cfn *f = &w->fns[fi];
	struct xl_mkey *k;
	struct xl_cev_at e = { t, dur, step, fi, -1, (unsigned char)src, false };
	int at;

	if (src == XL_SRC_LOG) {
		f->from_log++;
		w->from_log++;
	} else if (src == XL_SRC_DUMP) {
		f->from_dump++;
		w->from_dump++;
	}
	if (src == XL_SRC_REPORT) {
		f->compiles++;
		return push_event(w, &e);
	}
	k = mkey(w, fi);
	if (k->cursor >= 0 && !(w->ev[k->cursor].src & src)) {
		struct xl_cev_at *m = &w->ev[k->cursor];

		at = k->cursor;
		k->cursor = m->knext;
		m->src |= (unsigned char)src;
		/* whichever came first, the compilation is the dump's
		 * program's (torch_xla: its graph, with the frame that built
		 * it as its place), so that its inputs are compared in one
		 * place; the files' times bracket it: they win */
		if (src == XL_SRC_DUMP) {
			m->t = t;
			m->dur = dur;
			m->step = step;
			if (m->fn != fi) {
				carry_over(f, &w->fns[m->fn]);
				w->fns[m->fn].compiles--;
				w->fns[m->fn].from_log--;
				f->compiles++;
				f->from_log++;
				m->fn = fi;
			}
		} else {
			if (m->dur < 0)
				m->dur = dur;
			if (m->fn != fi) {
				carry_over(&w->fns[m->fn], f);
				f->from_log--;
				w->fns[m->fn].from_log++;
			}
		}
		return at;
	}
	/* past the events kept, the dump counts when there is one */
	if (w->nev >= EVENTS_MAX && src == XL_SRC_LOG && w->dump)
		return -1;
	f->compiles++;
	w->compiles++;
	at = push_event(w, &e);
	if (at < 0)
		return -1;
	if (k->tail >= 0)
		w->ev[k->tail].knext = at;
	k->tail = at;
	if (k->cursor < 0)
		k->cursor = at;
	return at;
}

/* "jit(step)" and "jit_step" compare equal: JAX names a program jit(NAME) in
 * its compile lines and jit_NAME in its cache lines.  Caller frees. */
static char *prog_norm(const char *s)
{
	char *o = xl_malloc(strlen(s) + 1), *q = o;

	for (; *s; s++) {
		if (*s == ')')
			continue;
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    *s == '.')
			*q++ = *s;
		else
			*q++ = '_';
	}
	*q = '\0';
	return o;
}

/* Removes the entry of sv equal to s (or, with prefix, starting with it);
 * returns the removed string (caller frees) or NULL. */
static char *strv_take(struct xl_strv *sv, const char *s, bool prefix)
{
	for (size_t i = 0; i < sv->n; i++) {
		bool hit = prefix ? xl_startswith(sv->v[i], s) : strcmp(sv->v[i], s) == 0;

		if (hit) {
			char *r = sv->v[i];

			memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i - 1) * sizeof(char *));
			sv->n--;
			sv->v[sv->n] = NULL;
			return r;
		}
	}
	return NULL;
}

static void strv_push_capped(struct xl_strv *sv, const char *s, size_t cap)
{
	if (sv->n >= cap) {
		char *old = strv_take(sv, sv->v[0], false);

		free(old);
	}
	xl_strv_push(sv, s);
}

static double rel(const struct xl_watch *w, double t)
{
	double r = t - w->cfg.start;

	return r < 0 ? 0 : r;
}

/* ---- committing blocks ------------------------------------------------------------ */

/* A compiled line: a real compilation, or the load of a program a cache-hit
 * line announced (JAX prints both for a load). */
static void commit_compiled(struct xl_watch *w, struct xl_cblock *b)
{
	const char *name = b->function ? b->function : "(unknown frame)";
	char *norm = prog_norm(name), *hit = NULL, *shapes, *key;
	struct xl_cfn *f;
	int fi;

	if (b->function && w->pending_hits.n) {
		hit = strv_take(&w->pending_hits, norm, false);
		/* a name spelt otherwise in the two lines: they come in order */
		if (!hit)
			hit = strv_take(&w->pending_hits, w->pending_hits.v[0], false);
	}
	key = xl_asprintf("%s\t", name);
	shapes = strv_take(&w->pending_shapes, key, true);
	free(key);
	f = find_fn(w, b->runtime, name, b->place, &fi);
	if (shapes) {
		set_str(&f->prev_shapes, f->shapes);
		set_str(&f->shapes, strchr(shapes, '\t') + 1);
		free(shapes);
	}
	if (w->pending_cause_fn && b->function && strstr(b->function, w->pending_cause_fn)) {
		if (w->pending_cause)
			set_str(&f->cause, w->pending_cause);
		/* where JAX says the function was called: its place, when no
		 * line named one */
		if (w->pending_cause_place && !f->place)
			f->place = xl_strdup(w->pending_cause_place);
		set_str(&w->pending_cause_fn, NULL);
		set_str(&w->pending_cause, NULL);
		set_str(&w->pending_cause_place, NULL);
	}
	if (b->extra && !xl_strv_contains(&f->graphs, b->extra) && f->graphs.n < 1000)
		xl_strv_push(&f->graphs, b->extra);
	if (b->detail)
		set_str(&f->cause, b->detail);
	if (hit) {
		f->loads++;
		free(hit);
	} else {
		double t = rel(w, b->t), dur = b->secs;

		/* "Finished ... in X sec" comes at the end of it */
		if (dur >= 0 && dur < 1e7)
			t = t - dur < 0 ? 0 : t - dur;
		else
			dur = -1;
		add_compile(w, fi, t, dur, b->step, XL_SRC_LOG);
	}
	free(norm);
}

static void commit_recompiling(struct xl_watch *w, struct xl_cblock *b, bool compiled)
{
	struct xl_cfn *f;
	int fi;

	if (!b->function)
		return;
	f = find_fn(w, b->runtime, b->function, b->place, &fi);
	if (f->compiles == 0) {
		/* the first compilation is never logged: it happened before */
		f->compiles = 1;
		f->first_step = -1;
		w->compiles++;
	}
	if (b->detail) {
		set_str(&f->cause, b->detail);
		if (!f->first_reason)
			f->first_reason = xl_strdup(b->detail);
	}
	if (compiled)
		add_compile(w, fi, rel(w, b->t), -1, b->step, XL_SRC_LOG);
}

static void commit_limit(struct xl_watch *w, struct xl_cblock *b)
{
	struct xl_cfn *f;
	long limit = b->detail ? strtol(b->detail, NULL, 10) : 0;
	int fi;

	if (limit < 0 || limit > 1000000)
		limit = 0;   /* not a number Dynamo would print */

	f = find_fn(w, b->runtime, b->function ? b->function : "(unknown function)", b->place, &fi);
	f->limit_hit = true;
	f->limit = limit;
	if (b->extra)
		set_str(&f->limit_reason, b->extra);
	if (f->compiles < limit) {
		/* without TORCH_LOGS=recompiles: it compiled `limit` times */
		w->compiles += limit - f->compiles;
		f->compiles = limit;
	}
	w->limits_hit++;
}

static void commit_graph_break(struct xl_watch *w, struct xl_cblock *b)
{
	struct xl_gbreak *g = NULL;

	for (size_t i = 0; i < w->ngbs; i++)
		if (xl_streq(w->gbs[i].place, b->place))
			g = &w->gbs[i];
	if (!g) {
		if (w->ngbs >= 256)
			return;
		w->gbs = xl_realloc(w->gbs, (w->ngbs + 1) * sizeof(*w->gbs));
		g = &w->gbs[w->ngbs++];
		memset(g, 0, sizeof(*g));
		g->place = b->place ? xl_strdup(b->place) : NULL;
	}
	/* the warning and the log line of one break come from one frame */
	if (!b->frame || !xl_strv_contains(&g->frames, b->frame)) {
		g->count++;
		w->gb_count++;
		if (b->frame && g->frames.n < 64)
			xl_strv_push(&g->frames, b->frame);
	}
	if (b->extra && !g->reason_strong) {
		set_str(&g->reason, b->extra);
		g->reason_strong = true;
	} else if (b->detail && !g->reason) {
		g->reason = xl_strdup(b->detail);
	}
}

static void commit_trace_miss(struct xl_watch *w, struct xl_cblock *b)
{
	if (!b->function)
		return;
	set_str(&w->pending_cause_fn, b->function);
	set_str(&w->pending_cause_place, b->place);
	if (b->extra && strcmp(b->extra, "never seen function") != 0) {
		char *c = b->changes.len ? xl_asprintf("%s: %s", b->extra, xl_buf_str(&b->changes))
					 : xl_strdup(b->extra);

		set_str(&w->pending_cause, NULL);
		w->pending_cause = c;
	} else {
		set_str(&w->pending_cause, NULL);
	}
}

void xl_cblock_init(struct xl_cblock *b)
{
	memset(b, 0, sizeof(*b));
	b->event = -1;
	b->secs = -1;
}

static void block_clear(struct xl_cblock *b)
{
	free(b->runtime);
	free(b->function);
	free(b->place);
	free(b->detail);
	free(b->frame);
	free(b->extra);
	xl_buf_release(&b->changes);
	xl_cblock_init(b);
}

/* Commits the open block, if any.  next_limit_frame: the frame of a
 * recompile-limit line that closes it (that attempt compiled nothing). */
static void block_commit(struct xl_watch *w, struct xl_cblock *b, const char *next_limit_frame)
{
	switch (b->event) {
	case XL_CEV_COMPILED:
		commit_compiled(w, b);
		break;
	case XL_CEV_TRACE_MISS:
		commit_trace_miss(w, b);
		break;
	case XL_CEV_RECOMPILING:
		commit_recompiling(w, b, !(next_limit_frame && xl_streq(next_limit_frame, b->frame)));
		break;
	case XL_CEV_LIMIT:
		commit_limit(w, b);
		break;
	case XL_CEV_GRAPH_BREAK:
		commit_graph_break(w, b);
		break;
	default:
		break;
	}
	block_clear(b);
}

void xl_cblock_close(struct xl_watch *w, struct xl_cblock *b)
{
	block_commit(w, b, NULL);
}

/* ---- one line ---------------------------------------------------------------------- */

#define NGROUPS 10

static char *group(const char *line, const regmatch_t *m, int g)
{
	if (g <= 0 || m[g].rm_so < 0)
		return NULL;
	return xl_strndup(line + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
}

static char *place_of(const char *line, const regmatch_t *m, const struct xl_cpat *p)
{
	char *file = group(line, m, p->g_file), *ln = group(line, m, p->g_line), *r = NULL;

	if (file && ln)
		r = xl_asprintf("%s:%s", file, ln);
	else if (file)
		r = xl_strdup(file);
	free(file);
	free(ln);
	return r;
}

static void on_step(struct xl_watch *w, long n, double t, bool report)
{
	if (w->first_step_s < 0)
		w->first_step_s = rel(w, t);
	w->steps++;
	w->step = n >= 0 ? n : w->steps - 1;
	/* when each step came: a module read later is placed by its time */
	if (w->nstep_t < EVENTS_MAX) {
		if (w->nstep_t == w->capstep_t) {
			w->capstep_t = w->capstep_t ? 2 * w->capstep_t : 64;
			w->step_t = xl_realloc(w->step_t, w->capstep_t * sizeof(*w->step_t));
			w->step_n = xl_realloc(w->step_n, w->capstep_t * sizeof(*w->step_n));
		}
		w->step_t[w->nstep_t] = rel(w, t);
		w->step_n[w->nstep_t] = w->step;
		w->nstep_t++;
	}
	if (report)
		w->steps_from_report = true;
	else
		w->steps_from_output = true;
}

static void handle(struct xl_watch *w, struct xl_cblock *b, const struct xl_cpat *p,
		   const char *line, const regmatch_t *m, double t)
{
	char *fn = group(line, m, p->g_function), *detail = group(line, m, p->g_detail);
	char *frame = group(line, m, p->g_frame), *place = place_of(line, m, p);

	if (xl_cev_opens(p->event)) {
		block_commit(w, b, p->event == XL_CEV_LIMIT ? frame : NULL);
		b->event = p->event;
		b->t = t;
		b->step = w->step;
		b->runtime = xl_strdup(p->runtime);
		b->function = fn;
		b->place = place;
		b->detail = detail;
		b->frame = frame;
		if (p->g_seconds) {
			char *sec = group(line, m, p->g_seconds), *end = NULL;
			double v = sec ? strtod(sec, &end) : -1;

			b->secs = sec && end != sec && v >= 0 ? v : -1;
			free(sec);
		}
		return;
	}
	switch (p->event) {
	case XL_CEV_CACHE_HIT:
		if (fn) {
			char *n = prog_norm(fn);

			if (w->pending_hits.n < 1024)
				xl_strv_push(&w->pending_hits, n);
			free(n);
		}
		w->loads++;
		break;
	case XL_CEV_CACHE_MISS:
		w->cache_misses++;
		break;
	case XL_CEV_CACHE_WRITTEN:
		w->cache_written++;
		break;
	case XL_CEV_CACHE_NOT_WRITTEN: {
		char *s = xl_asprintf("%s: %s", fn ? fn : "?", detail ? detail : "?");

		strv_push_capped(&w->not_written, s, 8);
		free(s);
		break;
	}
	case XL_CEV_CACHE_UNREADABLE:
		w->cache_unreadable++;
		if (!w->unreadable_reason && detail)
			w->unreadable_reason = xl_strdup(detail);
		if (!w->unreadable_runtime)
			w->unreadable_runtime = xl_strdup(p->runtime);
		break;
	case XL_CEV_SHAPES:
		if (fn && detail) {
			char *s = xl_asprintf("%s\t%s", fn, detail), *k = xl_asprintf("%s\t", fn);

			free(strv_take(&w->pending_shapes, k, true));
			strv_push_capped(&w->pending_shapes, s, 64);
			free(s);
			free(k);
		}
		break;
	case XL_CEV_TRACE_FUNCTION:
		if (fn && !b->function) {
			b->function = fn;
			fn = NULL;
		}
		break;
	case XL_CEV_TRACE_KIND:
		if (detail && !b->extra) {
			b->extra = detail;
			detail = NULL;
		}
		break;
	case XL_CEV_TRACE_CHANGE:
		if (detail && b->changes.len < 600)
			xl_buf_addf(&b->changes, "%s%s", b->changes.len ? "; " : "", detail);
		break;
	case XL_CEV_COMPILE_CAUSE:
		if (detail && !b->detail) {
			b->detail = detail;
			detail = NULL;
		}
		break;
	case XL_CEV_GRAPH:
		if (detail && !b->extra) {
			b->extra = detail;
			detail = NULL;
		}
		break;
	case XL_CEV_FRAME:
		if (!b->frame_done && fn) {
			char *file = group(line, m, p->g_file);
			bool runtime_own = p->has_skip && file && regexec(&p->skip, file, 0, NULL, 0) == 0;

			free(file);
			if (!runtime_own) {
				set_str(&b->function, fn);
				set_str(&b->place, place);
				b->frame_done = true;
			}
		}
		break;
	case XL_CEV_GUARD:
		if (detail && !b->detail) {
			b->detail = detail;
			detail = NULL;
		}
		break;
	case XL_CEV_LIMIT_FUNCTION:
		if (fn && !b->function) {
			b->function = fn;
			fn = NULL;
			set_str(&b->place, place);
		}
		break;
	case XL_CEV_LIMIT_REASON:
	case XL_CEV_GRAPH_BREAK_REASON:
		if (detail && !b->extra) {
			b->extra = detail;
			detail = NULL;
		}
		break;
	case XL_CEV_GRAPH_BREAK_PLACE:
		if (place && !b->place) {
			b->place = place;
			place = NULL;
		}
		break;
	default:
		break;
	}
	free(fn);
	free(detail);
	free(frame);
	free(place);
}

void xl_watch_line(struct xl_watch *w, struct xl_cblock *b, const char *line, size_t len,
		   double t)
{
	const struct xl_cpats *pats = w->cfg.pats;
	regmatch_t m[NGROUPS];
	bool matched = false;

	(void)len;
	if (b->event >= 0)
		b->lines++;
	if (w->has_step_re && regexec(&w->step_re, line, NGROUPS, m, 0) == 0) {
		long n = -1;

		if (w->step_re.re_nsub >= 1 && m[1].rm_so >= 0)
			n = strtol(line + m[1].rm_so, NULL, 10);
		on_step(w, n, t, false);
	}
	for (size_t i = 0; pats && i < pats->n; i++) {
		const struct xl_cpat *p = &pats->v[i];

		if (p->in >= 0 && (b->event != p->in || (p->first && b->lines != 1)))
			continue;
		if (p->text && !strstr(line, p->text))
			continue;
		if (p->has_re && regexec(&p->re, line, NGROUPS, m, 0) != 0)
			continue;
		if (!p->has_re)
			for (int g = 0; g < NGROUPS; g++)
				m[g].rm_so = m[g].rm_eo = -1;
		handle(w, b, p, line, m, t);
		matched = true;
		break;
	}
	if (!matched && b->event >= 0 && pats && b->lines > pats->block_lines)
		block_commit(w, b, NULL);
}

/* ---- the job's report file, as it grows -------------------------------------------------- */

/* A line of the job's report file (jobreport.c reads it); before: the
 * reader before this line (its last compile count). */
static void jobreport_value(void *arg, const struct xl_jobreport_line *l,
			    const struct xl_jobreport *before)
{
	struct xl_watch *w = arg;
	double t = w->jobreport_t;

	/* when the job wrote it, if it says (the helper does): the report is
	 * read every 100 ms, later on a busy host, and a step placed at the
	 * time it was read would come after compilations that followed it */
	if (!isnan(l->t)) {
		double at = l->t - w->wall_origin + w->cfg.start;

		if (at < t && at > w->cfg.start)
			t = at;
	}
	if (l->kind == XL_JR_STEP && l->step >= 0) {
		long prev = w->step;

		/* increments reported before this step happened in the step before it */
		if (w->jobreport_pending > 0 && w->cfg.pats) {
			int fi;

			find_fn(w, "report", "(reported)", NULL, &fi);
			for (long k = 0; k < w->jobreport_pending && k < 100000; k++)
				add_compile(w, fi, rel(w, t), -1, prev, XL_SRC_REPORT);
		}
		w->jobreport_pending = 0;
		if (w->steps == 0 && !isnan(l->step_time_s))
			w->jobreport_first_step_time = l->step_time_s;
		on_step(w, (long)l->step, t, true);
	} else if (l->kind == XL_JR_COMPILE && l->count >= 0) {
		long c = (long)l->count;

		if (c > before->compiles)
			w->jobreport_pending += c - (before->compiles < 0 ? 0 : before->compiles);
	}
}

static void poll_jobreport(struct xl_watch *w, double t, bool final)
{
	w->jobreport_t = t;
	xl_jobreport_poll(&w->jobreport, w->cfg.jobreport_path, final, jobreport_value, w);
}

void xl_watch_poll_jobreport(struct xl_watch *w, double t)
{
	poll_jobreport(w, t, false);
}

/* ---- XLA's dump -------------------------------------------------------------------- */

/* The step seen before time t (seconds from the start), -1 none. */
static long step_at(const struct xl_watch *w, double t)
{
	size_t lo = 0, hi = w->nstep_t;

	if (!w->nstep_t)
		return w->step;   /* a step seen past the first million: the last */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->step_t[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? w->step_n[lo - 1] : -1;
}

/* A module's entry parameters against the ones before: which inputs
 * changed from one compilation of the program to the next. */
static void note_entry(struct xl_cfn *f, const struct xl_dump_mod *m)
{
	bool seen = false;

	if (m->program) {
		for (size_t i = 0; i < f->nprogs; i++)
			seen |= f->progs[i] == m->program;
		if (seen)
			f->same_program++;
		else if (f->nprogs < sizeof(f->progs) / sizeof(f->progs[0]))
			f->progs[f->nprogs++] = m->program;
	}
	if (!m->program)
		return;   /* the text did not parse */
	if (!f->entries++) {
		xl_hlo_entry_copy(&f->e_first, &m->entry);
		xl_hlo_entry_copy(&f->e_last, &m->entry);
		return;
	}
	if (f->entries == 2)
		xl_hlo_entry_copy(&f->e_second, &m->entry);
	xl_hlo_entry_copy(&f->e_prev, &f->e_last);
	xl_hlo_entry_copy(&f->e_last, &m->entry);
	if (xl_hlo_entry_same(&f->e_prev, &f->e_last)) {
		f->entry_same++;
		return;
	}
	f->entry_changed++;
	if (f->e_prev.total != f->e_last.total) {
		f->count_changed++;
		f->count_from = f->e_prev.total;
		f->count_to = f->e_last.total;
		return;
	}
	if (f->npchg < f->e_last.total) {
		f->pchg = xl_realloc(f->pchg, f->e_last.total * sizeof(*f->pchg));
		memset(f->pchg + f->npchg, 0, (f->e_last.total - f->npchg) * sizeof(*f->pchg));
		f->npchg = f->e_last.total;
	}
	/* every input by its hash: the ones whose types are not kept too */
	for (size_t i = 0; i < f->e_last.total; i++)
		if (f->e_prev.hash[i] != f->e_last.hash[i])
			f->pchg[i]++;
}

/* One module the reader handed out: a compilation (the first time), its
 * end moved, its entry read. */
static void take_module(struct xl_watch *w, struct xl_dump_mod *m)
{
	int fi = -1;

	if (m->load || m->handle == -3) {
		char *name = xl_dump_function(m->module);
		struct xl_cfn *f = find_fn(w, xl_dump_runtime(m->module), name, NULL, &fi);

		free(name);
		if (m->load && m->handle == -1) {
			f->dump_loads++;
			w->dump_loads++;
			m->handle = -3;
			return;
		}
		if (m->load)
			return;
		/* what looked like a load was a compilation */
		f->dump_loads--;
		w->dump_loads--;
		m->handle = -1;
	}
	if (m->handle == -1) {
		char *name = xl_dump_function(m->module);
		double dur = m->end - m->start;

		find_fn(w, xl_dump_runtime(m->module), name, NULL, &fi);
		free(name);
		m->handle = add_compile(w, fi, m->start, dur, step_at(w, m->start), XL_SRC_DUMP);
		if (m->handle < 0)
			m->handle = -2;
	} else if (m->handle >= 0) {
		struct xl_cev_at *e = &w->ev[m->handle];

		e->t = m->start;
		e->dur = m->end - m->start;
	}
	if (m->handle >= 0)
		fi = w->ev[m->handle].fn;
	if (fi >= 0 && m->entry_read && !m->taken) {
		m->taken = true;
		note_entry(&w->fns[fi], m);
	}
}

void xl_watch_take_dump(struct xl_watch *w)
{
	struct xl_dump_mod *m;

	if (!w->dump)
		return;
	while ((m = xl_dump_next_changed(w->dump)))
		take_module(w, m);
}

void xl_watch_poll(struct xl_watch *w, double t)
{
	xl_watch_poll_jobreport(w, t);
	if (w->dump && xl_dump_poll(w->dump, t, false))
		xl_watch_take_dump(w);
	if (w->inductor)
		xl_inductor_poll(w->inductor, t, false);
}

/* ---- the end: what the verdict reads -------------------------------------------------- */

static bool counted(const struct xl_watch *w, const struct xl_cev_at *e, bool named)
{
	return e->fn >= 0 && (named ? !(e->src & XL_SRC_REPORT) : (e->src & XL_SRC_REPORT));
}

static int cmp_t(const void *a, const void *b)
{
	const struct xl_cev_at *x = *(const struct xl_cev_at *const *)a;
	const struct xl_cev_at *y = *(const struct xl_cev_at *const *)b;

	/* ties keep the order they came in */
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Per function: the first and last compilation, the known compile time,
 * which compilations are recompilations (every one after the function's
 * first; the report's counts name no function: every one after the run's
 * first). */
static void settle_functions(struct xl_watch *w, bool named, struct xl_cev_at **by_t, size_t n)
{
	bool *seen = xl_calloc(w->nfns ? w->nfns : 1, sizeof(*seen));
	bool any = false;

	for (size_t i = 0; i < w->nfns; i++) {
		struct xl_cfn *f = &w->fns[i];

		f->first_s = f->last_s = -1;
		f->first_step = f->last_step = -1;
		f->compile_s = 0;
	}
	w->compile_s = 0;
	/* in the order they came: a line's time is when it was read */
	for (size_t i = 0; i < w->nev; i++) {
		struct xl_cev_at *e = &w->ev[i];

		if (!counted(w, e, named))
			continue;
		e->recompile = named ? seen[e->fn] : any;
		seen[e->fn] = any = true;
	}
	for (size_t i = 0; i < n; i++) {
		struct xl_cev_at *e = by_t[i];
		struct xl_cfn *f = &w->fns[e->fn];

		if (f->first_s < 0) {
			f->first_s = e->t;
			f->first_step = e->step;
		}
		f->last_s = e->t;
		f->last_step = e->step;
		if (e->dur >= 0) {
			f->compile_s += e->dur;
			w->compile_s += e->dur;
			w->durations = true;
		}
	}
	free(seen);
}

/* The end of the first burst of compilations: each next one starting
 * within a second of the end of the ones before, and at the latest where
 * one function recompiles for the (warmup_steps + 1)-th time.  A warm-up
 * compiles programs, and a few shapes of one; a function compiled again
 * and again back to back is a storm with no pause in it, not a warm-up
 * (named: the events name their functions). */
static double burst_end(const struct xl_watch *w, bool named, struct xl_cev_at **by_t, size_t n)
{
	long *again;
	double end;

	if (!n)
		return -1;
	again = xl_calloc(w->nfns ? w->nfns : 1, sizeof(*again));
	end = by_t[0]->t + (by_t[0]->dur > 0 ? by_t[0]->dur : 0);
	for (size_t i = 1; i < n; i++) {
		const struct xl_cev_at *e = by_t[i];
		double d = e->dur > 0 ? e->dur : 0;

		if (e->t > end + 1.0)
			break;
		if (named && e->recompile && e->fn >= 0 && (size_t)e->fn < w->nfns &&
		    ++again[e->fn] > w->cfg.rule.warmup_steps) {
			end = e->t;
			break;
		}
		if (e->t + d > end)
			end = e->t + d;
	}
	free(again);
	return end;
}

/* Where warm-up ends for each rule, and per function what came after. */
static void settle(struct xl_watch *w)
{
	const struct xl_storm_rule *r = &w->cfg.rule;
	bool named = false;
	struct xl_cev_at **by_t;
	size_t n = 0;

	for (size_t i = 0; i < w->nev; i++)
		named |= w->ev[i].fn >= 0 && !(w->ev[i].src & XL_SRC_REPORT);
	by_t = xl_calloc(w->nev ? w->nev : 1, sizeof(*by_t));
	for (size_t i = 0; i < w->nev; i++)
		if (counted(w, &w->ev[i], named))
			by_t[n++] = &w->ev[i];
	qsort(by_t, n, sizeof(*by_t), cmp_t);
	settle_functions(w, named, by_t, n);
	w->first_s = n ? by_t[0]->t : -1;
	if (w->steps > 0) {
		/* by steps: warm-up ends at step warmup_steps */
		w->cost_from_s = w->end_s;
		for (size_t i = 0; i < w->nstep_t; i++)
			if (w->step_n[i] >= r->warmup_steps) {
				w->cost_from_s = w->step_t[i];
				break;
			}
	} else if (n) {
		/* by time: the first third after the first compilation; the
		 * cost is counted from the end of the first burst */
		double span = w->end_s > w->first_s ? w->end_s - w->first_s : 0;

		w->warmup_s = w->first_s + span / 3;
		w->middle_s = w->first_s + span / 2;
		w->cost_from_s = burst_end(w, named, by_t, n);
	}
	for (size_t i = 0; i < w->nfns; i++) {
		w->fns[i].after_warmup = w->fns[i].after_cost = 0;
		w->fns[i].recompile_after_s = 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct xl_cev_at *e = by_t[i];
		struct xl_cfn *f = &w->fns[e->fn];

		if (!e->recompile)
			continue;
		if (w->steps > 0 ? e->step >= r->warmup_steps : e->t >= w->warmup_s)
			f->after_warmup++;
		if (w->cost_from_s >= 0 && e->t >= w->cost_from_s) {
			f->after_cost++;
			if (e->dur > 0)
				f->recompile_after_s += e->dur;
		}
	}
	free(by_t);
}

void xl_watch_settle(struct xl_watch *w, double t)
{
	w->end_s = rel(w, t);
	settle(w);
}

void xl_watch_finish(struct xl_watch *w, double t)
{
	poll_jobreport(w, t, true);
	w->end_s = rel(w, t);
	if (w->dump) {
		xl_dump_finish(w->dump);
		xl_watch_take_dump(w);
		xl_dump_close_all(w->dump);
	}
	if (w->inductor)
		xl_inductor_poll(w->inductor, t, true);
	settle(w);
	w->finished = true;
}

int64_t xl_watch_largest_report(const struct xl_watch *w, char *name, size_t n)
{
	char *fn;

	if (n)
		*name = '\0';
	if (!w->dump || w->dump->largest_report < 0)
		return -1;
	if (!n)
		return w->dump->largest_report;
	fn = xl_dump_function(w->dump->largest_module);
	snprintf(name, n, "%s", fn);
	free(fn);
	return w->dump->largest_report;
}

json_t *xl_watch_dump_reports(const struct xl_watch *w)
{
	return w->dump ? xl_dump_memory_reports(w->dump) : json_object();
}

json_t *xl_watch_dump_json(const struct xl_watch *w)
{
	return w->dump ? xl_dump_json(w->dump) : json_null();
}

void xl_watch_jobreport_warn(const struct xl_watch *w)
{
	if (w->cfg.jobreport_path)
		xl_jobreport_warn(&w->jobreport, w->cfg.jobreport_path);
}
