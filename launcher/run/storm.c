/* storm.c - compilations seen from outside the job (see storm.h).
 *
 * Lines are matched once, as they stream past: a fixed substring first (a
 * cheap test on every line), then the pattern's regex for what the line
 * says.  Runtimes print several lines about one compilation (torch_xla about
 * twenty, torch.compile a block per recompilation): a line that opens a
 * block is committed as one event when the block closes, with what the
 * lines of the block added, so one compilation is counted once.
 */
#include "launcher/run/storm.h"

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
	r->quiet_gaps = 4;
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
		"line", "detail", "frame", "skip_file", "what", NULL,
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
	    (rc = group_of(path, m, "frame", &p->g_frame)))
		return rc;
	{
		int top = p->g_function;

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

int xl_cpats_load(const char *path, const struct xl_ynode *root, struct xl_cpats *out)
{
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
	if (st) {
		static const char *const keys[] = { "warmup_steps", "max_after_warmup", "quiet_gaps", NULL };
		const struct xl_ynode *v;

		if ((rc = check_map_keys(path, st, "compile_storm", keys))) {
			xl_cpats_release(out);
			return rc;
		}
		if ((v = xl_ymap_get(st, "warmup_steps")) &&
		    (!xl_yscalar_double(v, &d) || d < 0 || d != (long)d))
			rc = lerr(path, v, "warmup_steps must be a count");
		else if (v)
			out->rule.warmup_steps = (long)d;
		if (!rc && (v = xl_ymap_get(st, "max_after_warmup")) &&
		    (!xl_yscalar_double(v, &d) || d < 0 || d != (long)d))
			rc = lerr(path, v, "max_after_warmup must be a count");
		else if (!rc && v)
			out->rule.max_after_warmup = (long)d;
		if (!rc && (v = xl_ymap_get(st, "quiet_gaps")) && (!xl_yscalar_double(v, &d) || !(d > 0)))
			rc = lerr(path, v, "quiet_gaps must be a number above 0");
		else if (!rc && v)
			out->rule.quiet_gaps = d;
		if (rc) {
			xl_cpats_release(out);
			return rc;
		}
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
	free(c->debug_profile);
	xl_strv_release(&c->logging_vars);
	memset(c, 0, sizeof(*c));
}

/* ---- the watch ------------------------------------------------------------------ */

void xl_watch_init(struct xl_watch *w, const struct xl_watch_cfg *cfg)
{
	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	w->step = -1;
	w->first_step_s = -1;
	w->rep_fd = -1;
	w->rep_count = w->rep_hits = -1;
	w->rep_first_step_time = -1;
	w->end_s = -1;
	if (cfg->step_pattern && *cfg->step_pattern)
		w->has_step_re = regcomp(&w->step_re, cfg->step_pattern, REG_EXTENDED) == 0;
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
}

void xl_watch_release(struct xl_watch *w)
{
	for (size_t i = 0; i < w->nfns; i++)
		cfn_release(&w->fns[i]);
	free(w->fns);
	free(w->ev);
	free(w->unreadable_reason);
	free(w->unreadable_runtime);
	xl_strv_release(&w->not_written);
	xl_strv_release(&w->pending_hits);
	xl_strv_release(&w->pending_shapes);
	free(w->pending_cause_fn);
	free(w->pending_cause);
	for (size_t i = 0; i < w->ngbs; i++) {
		free(w->gbs[i].place);
		free(w->gbs[i].reason);
		xl_strv_release(&w->gbs[i].frames);
	}
	free(w->gbs);
	if (w->has_step_re)
		regfree(&w->step_re);
	if (w->rep_fd >= 0)
		close(w->rep_fd);
	free(w->rep_buf);
	memset(w, 0, sizeof(*w));
	w->rep_fd = -1;
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
	f->first_step = f->last_step = -1;
	f->first_s = f->last_s = -1;
	if (index)
		*index = (int)w->nfns;
	w->nfns++;
	return f;
}

/* Records one real compilation of fns[fi] at time t (seconds from start). */
static void add_compile(struct xl_watch *w, int fi, double t, long step, bool reported)
{
	struct xl_cfn *f = &w->fns[fi];
	bool again = f->compiles > 0;

	f->compiles++;
	if (f->first_s < 0) {
		f->first_s = t;
		f->first_step = step;
	}
	f->last_s = t;
	f->last_step = step;
	if (!reported)
		w->compiles++;
	/* a long storm keeps its first million compilations in time; the
	 * counts go on */
	if (w->nev >= (1u << 20))
		return;
	if (w->nev == w->capev) {
		w->capev = w->capev ? 2 * w->capev : 64;
		w->ev = xl_realloc(w->ev, w->capev * sizeof(*w->ev));
	}
	w->ev[w->nev++] = (struct xl_cev_at){ t, step, fi, again };
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
		set_str(&w->pending_cause_fn, NULL);
		set_str(&w->pending_cause, NULL);
	}
	if (b->extra && !xl_strv_contains(&f->graphs, b->extra) && f->graphs.n < 1000)
		xl_strv_push(&f->graphs, b->extra);
	if (b->detail)
		set_str(&f->cause, b->detail);
	if (hit) {
		f->loads++;
		free(hit);
	} else {
		add_compile(w, fi, rel(w, b->t), b->step, false);
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
		add_compile(w, fi, rel(w, b->t), b->step, false);
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

/* ---- the report, as it grows ------------------------------------------------------------ */

static void report_value(struct xl_watch *w, const char *line, size_t len, double t)
{
	json_error_t jerr;
	json_t *o, *v;
	const char *kind;

	if (len > (1u << 20))
		return;
	o = json_loadb(line, len, 0, &jerr);
	if (!json_is_object(o) || !json_is_string(json_object_get(o, "kind"))) {
		json_decref(o);
		return;
	}
	kind = json_string_value(json_object_get(o, "kind"));
	if (strcmp(kind, "step") == 0) {
		v = json_object_get(o, "step");
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			long before = w->step;

			/* increments reported before this step happened in the step before it */
			if (w->rep_pending > 0 && w->cfg.pats) {
				int fi;

				find_fn(w, "report", "(reported)", NULL, &fi);
				for (long k = 0; k < w->rep_pending && k < 100000; k++)
					add_compile(w, fi, rel(w, t), before, true);
			}
			w->rep_pending = 0;
			if (w->steps == 0) {
				json_t *st = json_object_get(o, "step_time_s");

				if (json_is_number(st))
					w->rep_first_step_time = json_number_value(st);
			}
			on_step(w, (long)json_integer_value(v), t, true);
		}
	} else if (strcmp(kind, "compile") == 0) {
		v = json_object_get(o, "count");
		if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < (1LL << 40)) {
			long c = (long)json_integer_value(v);

			if (c > w->rep_count)
				w->rep_pending += c - (w->rep_count < 0 ? 0 : w->rep_count);
			w->rep_count = c;
		}
		v = json_object_get(o, "cache_hits");
		if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < (1LL << 40))
			w->rep_hits = (long)json_integer_value(v);
	}
	json_decref(o);
}

void xl_watch_poll_report(struct xl_watch *w, double t)
{
	char buf[65536];
	ssize_t n;

	if (!w->cfg.report_path)
		return;
	if (w->rep_fd < 0) {
		w->rep_fd = open(w->cfg.report_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (w->rep_fd < 0)
			return;
	}
	while ((n = read(w->rep_fd, buf, sizeof(buf))) > 0) {
		size_t start = 0;

		w->rep_buf = xl_realloc(w->rep_buf, w->rep_len + (size_t)n + 1);
		memcpy(w->rep_buf + w->rep_len, buf, (size_t)n);
		w->rep_len += (size_t)n;
		for (size_t i = 0; i < w->rep_len; i++) {
			if (w->rep_buf[i] != '\n')
				continue;
			if (i > start)
				report_value(w, w->rep_buf + start, i - start, t);
			start = i + 1;
		}
		memmove(w->rep_buf, w->rep_buf + start, w->rep_len - start);
		w->rep_len -= start;
		if (w->rep_len > (2u << 20))
			w->rep_len = 0;   /* not a report line; the end-of-run read warns */
	}
}

void xl_watch_finish(struct xl_watch *w, double t)
{
	xl_watch_poll_report(w, t);
	if (w->rep_len) {
		report_value(w, w->rep_buf, w->rep_len, t);
		w->rep_len = 0;
	}
	w->end_s = rel(w, t);
	/* compilations after warm-up, per function, by steps */
	for (size_t i = 0; i < w->nfns; i++)
		w->fns[i].after_warmup = 0;
	for (size_t i = 0; i < w->nev; i++)
		if (w->ev[i].fn >= 0 && w->ev[i].step >= w->cfg.rule.warmup_steps)
			w->fns[w->ev[i].fn].after_warmup++;
	w->finished = true;
}

/* ---- the verdict -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

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

/* Why fns[fi] compiled again, in the runtime's words where it said. */
static void cause_text(const struct xl_watch *w, const struct xl_cfn *f, struct xl_buf *out)
{
	(void)w;
	if (strcmp(f->runtime, "torch.compile") == 0) {
		if (f->cause)
			xl_buf_addf(out, "guard failed: %s", f->cause);
		else
			xl_buf_adds(out, "torch.compile does not say why without TORCH_LOGS=recompiles");
	} else if (strcmp(f->runtime, "torch_xla") == 0) {
		xl_buf_addf(out, "%zu different graph%s (torch_xla does not say what changed; compile cause: %s)",
			    f->graphs.n, f->graphs.n == 1 ? "" : "s", f->cause ? f->cause : "?");
	} else if (strcmp(f->runtime, "jax") == 0) {
		if (f->cause) {
			xl_buf_adds(out, f->cause);
		} else if (f->shapes && f->prev_shapes && strcmp(f->shapes, f->prev_shapes) != 0) {
			char *a = clean_shapes(f->shapes), *p = clean_shapes(f->prev_shapes);

			xl_buf_addf(out, "new input types: now (%s), before (%s)", a, p);
			free(a);
			free(p);
		} else {
			xl_buf_adds(out, "JAX says why with JAX_EXPLAIN_CACHE_MISSES=1");
		}
	} else {
		xl_buf_adds(out, "the runtime's lines do not say which function (reported counts only)");
	}
}

static void fn_label(const struct xl_cfn *f, struct xl_buf *out)
{
	xl_buf_adds(out, f->name);
	if (f->place)
		xl_buf_addf(out, " (%s)", base(f->place));
}

void xl_watch_verdict(const struct xl_watch *w, struct xl_storm *s)
{
	const struct xl_storm_rule *r = &w->cfg.rule;
	bool use_log = false;
	long *per = NULL;
	struct xl_buf why = XL_BUF_INIT;

	memset(s, 0, sizeof(*s));
	s->by = "none";
	s->top = -1;
	s->compiles = w->compiles > w->rep_count ? w->compiles : w->rep_count;
	s->cache_hits = w->loads > w->rep_hits ? w->loads : w->rep_hits;
	if (s->cache_hits <= 0 && w->rep_hits < 0 && !w->loads && !w->cache_misses &&
	    !w->cache_written && !w->cache_unreadable)
		s->cache_hits = -1;
	for (size_t i = 0; i < w->nev; i++)
		use_log |= !is_report_fn(w, w->ev[i].fn);
	for (size_t i = 0; i < w->nfns; i++)
		if (strcmp(w->fns[i].runtime, "report") != 0 && w->fns[i].compiles > 1)
			s->recompiles += w->fns[i].compiles - 1;
	/* a reported count says how many, not whether a function compiled again */

	/* torch.compile gave up on a function: the worst a storm can do */
	for (size_t i = 0; i < w->nfns; i++) {
		const struct xl_cfn *f = &w->fns[i];

		if (!f->limit_hit)
			continue;
		s->storm = true;
		s->by = "recompile-limit";
		s->top = (int)i;
		xl_buf_addf(&why, "torch.compile hit its recompile limit (%ld) for ", f->limit);
		fn_label(f, &why);
		xl_buf_adds(&why, ": it runs uncompiled (eager) from then on");
		if (f->limit_reason)
			xl_buf_addf(&why, "; last reason: %s", f->limit_reason);
		break;
	}
	per = xl_calloc(w->nfns ? w->nfns : 1, sizeof(*per));
	if (!s->storm && w->steps > 0) {
		/* by steps */
		s->by = "steps";
		for (size_t i = 0; i < w->nev; i++) {
			if (is_report_fn(w, w->ev[i].fn) == use_log || w->ev[i].step < r->warmup_steps)
				continue;
			s->after_warmup++;
			if (w->ev[i].fn >= 0)
				per[w->ev[i].fn]++;
		}
		for (size_t i = 0; i < w->nfns; i++)
			if (per[i] && (s->top < 0 || per[i] > per[s->top]))
				s->top = (int)i;
		if (s->after_warmup > r->max_after_warmup) {
			const struct xl_cfn *f = s->top >= 0 ? &w->fns[s->top] : NULL;

			s->storm = true;
			if (f && !is_report_fn(w, s->top)) {
				fn_label(f, &why);
				xl_buf_addf(&why, " compiled %ld time%s, %ld after step %ld", f->compiles,
					    f->compiles == 1 ? "" : "s", per[s->top], r->warmup_steps);
				if (per[s->top] != s->after_warmup)
					xl_buf_addf(&why, " (%ld compilations in all after it)", s->after_warmup);
				xl_buf_addf(&why, ", more than %ld after warm-up: ", r->max_after_warmup);
				cause_text(w, f, &why);
			} else {
				xl_buf_addf(&why, "%ld compilations after step %ld (more than %ld), counted from the job's report",
					    s->after_warmup, r->warmup_steps, r->max_after_warmup);
				if (w->cfg.pats && w->cfg.pats->debug_profile)
					xl_buf_addf(&why, "; with compile logging on (profile %s) the function is named",
						    w->cfg.pats->debug_profile);
			}
		}
	} else if (!s->storm) {
		/* by time: recompilations still arriving when the run ended */
		double *gaps = NULL, last = -1, prev = -1, quiet, g = 0;
		size_t ng = 0;

		s->by = "time";
		gaps = xl_calloc(w->nev ? w->nev : 1, sizeof(*gaps));
		for (size_t i = 0; i < w->nev; i++) {
			if (is_report_fn(w, w->ev[i].fn) == use_log)
				continue;
			if (prev >= 0)
				gaps[ng++] = w->ev[i].t - prev;
			prev = last = w->ev[i].t;
			if (w->ev[i].recompile || !use_log) {
				s->after_warmup++;
				if (w->ev[i].fn >= 0)
					per[w->ev[i].fn]++;
			}
		}
		if (!use_log && s->after_warmup)
			s->after_warmup--;   /* reported counts: every compilation after the first */
		if (ng) {
			qsort(gaps, ng, sizeof(*gaps), cmp_double);
			g = ng % 2 ? gaps[ng / 2] : (gaps[ng / 2 - 1] + gaps[ng / 2]) / 2;
		}
		free(gaps);
		for (size_t i = 0; i < w->nfns; i++)
			if (per[i] && (s->top < 0 || per[i] > per[s->top]))
				s->top = (int)i;
		quiet = w->end_s >= 0 && last >= 0 ? w->end_s - last : 0;
		if (s->after_warmup > r->max_after_warmup && !(quiet > r->quiet_gaps * g)) {
			const struct xl_cfn *f = s->top >= 0 ? &w->fns[s->top] : NULL;

			s->storm = true;
			if (f && !is_report_fn(w, s->top)) {
				fn_label(f, &why);
				xl_buf_addf(&why, " compiled %ld time%s, and its recompilations kept coming until the end of the run (%ld in all, more than %ld): ",
					    f->compiles, f->compiles == 1 ? "" : "s", s->after_warmup,
					    r->max_after_warmup);
				cause_text(w, f, &why);
			} else {
				xl_buf_addf(&why, "%ld recompilations kept coming until the end of the run (more than %ld)",
					    s->after_warmup, r->max_after_warmup);
				if (w->cfg.pats && w->cfg.pats->debug_profile)
					xl_buf_addf(&why, "; with compile logging on (profile %s) the function is named",
						    w->cfg.pats->debug_profile);
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

/* ---- rendering -------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jsecs(double s)
{
	return s >= 0 ? json_real(round(s * 1000) / 1000) : json_null();
}

json_t *xl_watch_json(const struct xl_watch *w, const struct xl_storm *s)
{
	json_t *o = json_object(), *fns = json_array(), *gbs = json_array(), *lim = json_array();
	json_t *cache = json_object(), *nw = json_array();
	const struct xl_storm_rule *r = &w->cfg.rule;

	json_object_set_new(o, "count", json_integer(s->compiles));
	json_object_set_new(o, "from_output", json_integer(w->compiles));
	json_object_set_new(o, "reported", w->rep_count >= 0 ? json_integer(w->rep_count) : json_null());
	json_object_set_new(o, "recompilations", json_integer(s->recompiles));
	json_object_set_new(o, "storm", json_boolean(s->storm));
	json_object_set_new(o, "storm_by", json_string(s->by));
	json_object_set_new(o, "after_warmup", json_integer(s->after_warmup));
	json_object_set_new(o, "storm_reason", s->storm ? json_string(s->reason) : json_null());
	json_object_set_new(o, "rule", json_pack("{s:I,s:I,s:f,s:s*}", "warmup_steps", (json_int_t)r->warmup_steps,
						  "max_after_warmup", (json_int_t)r->max_after_warmup,
						  "quiet_gaps", r->quiet_gaps, "step_pattern", w->cfg.step_pattern));
	json_object_set_new(o, "steps", json_pack("{s:I,s:I,s:o,s:o,s:o}", "seen", (json_int_t)w->steps,
						   "last", (json_int_t)w->step,
						   "source", w->steps_from_output && w->steps_from_report ? json_string("output+report")
						   : w->steps_from_output ? json_string("output")
						   : w->steps_from_report ? json_string("report") : json_null(),
						   "first_step_s", jsecs(w->first_step_s),
						   "first_step_time_s", jsecs(w->rep_first_step_time)));
	for (size_t i = 0; i < w->nfns; i++) {
		const struct xl_cfn *f = &w->fns[i];
		struct xl_buf c = XL_BUF_INIT;
		json_t *fo;

		/* the report's counts stand for the functions only when no
		 * runtime line named them */
		if (strcmp(f->runtime, "report") == 0 && w->compiles > 0)
			continue;

		if (f->compiles > 1 || f->limit_hit)
			cause_text(w, f, &c);
		fo = json_pack("{s:s,s:s,s:o,s:I,s:I,s:I,s:o,s:o,s:o,s:o}", "name", f->name, "runtime", f->runtime,
			       "place", jstr(f->place), "compiles", (json_int_t)f->compiles,
			       "loads", (json_int_t)f->loads, "after_warmup", (json_int_t)f->after_warmup,
			       "first_step", f->first_step >= 0 ? json_integer(f->first_step) : json_null(),
			       "last_step", f->last_step >= 0 ? json_integer(f->last_step) : json_null(),
			       "first_s", jsecs(f->first_s), "last_s", jsecs(f->last_s));
		json_object_set_new(fo, "cause", c.len ? json_string(xl_buf_str(&c)) : json_null());
		if (f->first_reason)
			json_object_set_new(fo, "first_reason", json_string(f->first_reason));
		if (f->shapes)
			json_object_set_new(fo, "input_types", json_string(f->shapes));
		if (f->prev_shapes)
			json_object_set_new(fo, "input_types_before", json_string(f->prev_shapes));
		if (f->graphs.n)
			json_object_set_new(fo, "graphs", json_integer((json_int_t)f->graphs.n));
		if (f->limit_hit) {
			json_object_set_new(fo, "recompile_limit", json_integer(f->limit));
			json_array_append_new(lim, json_pack("{s:s,s:o,s:I,s:o,s:s}", "function", f->name,
							     "place", jstr(f->place), "limit", (json_int_t)f->limit,
							     "last_reason", jstr(f->limit_reason),
							     "then", "runs uncompiled (eager)"));
		}
		xl_buf_release(&c);
		json_array_append_new(fns, fo);
	}
	json_object_set_new(o, "functions", fns);
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

		for (size_t i = 0; i < w->nfns; i++) {
			const struct xl_cfn *f = &w->fns[i];
			struct xl_buf b = XL_BUF_INIT;

			if (f->limit_hit) {
				xl_warn("torch.compile hit its recompile limit (%ld) for %s: it runs uncompiled from then on",
					f->limit, f->name);
				continue;
			}
			/* a recompilation that is no storm is still named */
			if (f->compiles < 2 || strcmp(f->runtime, "report") == 0 || said++ >= 3)
				continue;
			fn_label(f, &b);
			xl_buf_addf(&b, " compiled %ld times", f->compiles);
			if (f->last_step >= 0)
				xl_buf_addf(&b, ", the last after step %ld", f->last_step);
			xl_buf_adds(&b, ": ");
			cause_text(w, f, &b);
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
	if (s->recompiles > 0 && len < n)
		snprintf(buf + len, n - len, " (%ld recompilation%s)", s->recompiles,
			 s->recompiles == 1 ? "" : "s");
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
