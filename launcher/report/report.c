/* report.c - `calib report`: the store's families, predictions, launches
 * and probes as SVG charts in one HTML page (see report.h).  Everything it
 * draws comes aggregated from the store (calib.h, report queries), so a
 * store of a million attempts draws as fast as the store can group them. */
#include "launcher/report/report.h"
#include "launcher/report/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Families, profiles and signatures per family the page shows at most. */
#define MAX_FAMILIES 8
#define MAX_PROFILES 12
#define MAX_MEMBERS 64
/* Bins of a timeline, and of a factor e in predicted against observed. */
#define TIMELINE_BINS 120
#define PVO_BINS_PER_E 8

enum section { SEC_FAMILIES, SEC_PVO, SEC_TIMELINES, SEC_PROBES, SEC_COUNT };

static const char *const section_titles[SEC_COUNT] = {
	"Memory frontier per job family",
	"Predicted against observed memory",
	"Launches per profile",
	"Latest probe per host",
};
static const char *const section_ids[SEC_COUNT] = {
	"families", "predicted-observed", "launches", "probes",
};

struct chart {
	char *name, *title;
	char *svg;
	char *caption;             /* HTML */
	enum section sec;
};

struct source {
	enum calib_kind kind;
	bool predicted;
	char *source;
	int64_t figures;
};

/* The candidates of one profile as the caller planned them. */
struct cands {
	const struct xl_report_cand *v;
	size_t n;
};

struct report {
	const struct xl_ctx *ctx;
	struct calib_store *st;
	struct calib_report_filter f;
	bool standalone;
	struct chart *charts;
	size_t ncharts;
	struct source *sources;
	size_t nsources;
	const struct xl_report_opts *o;
	int64_t attempts;
	size_t nprofiles;
	char *section_notes[SEC_COUNT];  /* HTML shown when a section has no chart */
	struct xl_buf probe_table;
};

static void add_chart(struct report *r, enum section sec, const char *name, const char *title,
		      char *svg, char *caption)
{
	struct chart *c;

	r->charts = xl_realloc(r->charts, (r->ncharts + 1) * sizeof(*r->charts));
	c = &r->charts[r->ncharts++];
	c->name = xl_strdup(name);
	c->title = xl_strdup(title);
	c->svg = svg;
	c->caption = caption;
	c->sec = sec;
}

/* A chart name from s: letters, digits, '.', '_' and '-'. */
static char *slug(const char *prefix, const char *s)
{
	char *out = xl_asprintf("%s%s", prefix, s && *s ? s : "_unnamed");

	for (char *p = out + strlen(prefix); *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			*p = '_';
	return out;
}

static void html_esc(struct xl_buf *b, const char *s)
{
	xl_xml_esc(b, s);
}

static enum xl_mark outcome_mark(enum xl_outcome o)
{
	switch (o) {
	case XL_OUT_OK: return XL_MARK_OK;
	case XL_OUT_OOM: return XL_MARK_OOM;
	case XL_OUT_COMPILE_STORM: return XL_MARK_STORM;
	default: return XL_MARK_FAIL;
	}
}

/* The legend of the outcome marks, the ones seen[] marks. */
static void outcome_legend(struct xl_chart *c, const bool seen[XL_MARK_COUNT])
{
	static const char *const labels[XL_MARK_COUNT] = {
		"ok", "oom", "predicted infeasible", "compile-storm",
		"error, crash, timeout, interrupted",
	};

	for (int m = 0; m < XL_MARK_COUNT; m++)
		if (seen[m])
			xl_chart_legend(c, (enum xl_mark)m, NULL, false, labels[m]);
}

/* "host_peak_rss from: the process group (2), ..." for the caption. */
static void sources_html(struct report *r, struct xl_buf *b, enum calib_kind k, bool predicted)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nsources; i++) {
		const struct source *s = &r->sources[i];

		if (s->kind != k || s->predicted != predicted)
			continue;
		xl_buf_adds(b, n++ ? "; " : "");
		html_esc(b, s->source ? s->source : "source not recorded");
		xl_buf_addf(b, " (%lld)", (long long)s->figures);
	}
	if (!n)
		xl_buf_adds(b, "none recorded");
}

/* ---- figure sources ------------------------------------------------------------------- */

static int source_fn(const struct calib_report_source *s, void *arg)
{
	struct report *r = arg;

	r->sources = xl_realloc(r->sources, (r->nsources + 1) * sizeof(*r->sources));
	r->sources[r->nsources++] = (struct source){
		s->kind, s->predicted, s->source ? xl_strdup(s->source) : NULL, s->figures,
	};
	return 0;
}

/* ---- what each profile's candidates would do now ------------------------------------------ */

/* The candidates of profile as `run` would plan them now (the caller plans
 * them: this file reads the store only); false when there are none to draw
 * (no planner given, or the profile cannot be planned on this machine). */
static bool cands_of(struct report *r, const char *profile, struct cands *c)
{
	c->v = NULL;
	c->n = 0;
	if (!profile || !r->o->cands)
		return false;
	return r->o->cands(r->o->cands_arg, profile, &c->v, &c->n) == 0;
}

/* ---- the memory frontier of a family ---------------------------------------------------------- */

struct member {
	char *signature;
	json_t *coords, *parts;
	enum xl_outcome outcome;
	enum calib_kind kind;
	int64_t attempts, min, max;
	double mean;
	double x;                  /* on the chart's scale; NAN: not placed */
};

struct members {
	struct member *v;
	size_t n;
};

static int member_fn(const struct calib_report_member *m, void *arg)
{
	struct members *ms = arg;
	struct member *o;

	ms->v = xl_realloc(ms->v, (ms->n + 1) * sizeof(*ms->v));
	o = &ms->v[ms->n++];
	o->signature = xl_strdup(m->signature);
	o->coords = m->coords ? json_loads(m->coords, 0, NULL) : NULL;
	o->parts = m->parts ? json_loads(m->parts, 0, NULL) : NULL;
	o->outcome = m->outcome;
	o->kind = m->kind;
	o->attempts = m->attempts;
	o->min = m->min_bytes;
	o->max = m->max_bytes;
	o->mean = m->mean_bytes;
	o->x = NAN;
	return 0;
}

static void members_release(struct members *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		free(ms->v[i].signature);
		json_decref(ms->v[i].coords);
		json_decref(ms->v[i].parts);
	}
	free(ms->v);
}

/* The value of coordinate name in coords, when it is a number. */
static bool coord_value(const json_t *coords, const char *name, double *x)
{
	const json_t *v = json_object_get(coords, name);

	if (!json_is_number(v))
		return false;
	*x = json_number_value(v);
	return true;
}

/* Places every member on the scale named scale: the scale the store's
 * estimate of that signature gives, else its coordinate of that name. */
static void place_members(struct report *r, struct members *ms, const char *scale)
{
	for (size_t i = 0; i < ms->n; i++) {
		struct member *m = &ms->v[i];
		struct calib_estimate e;
		struct calib_target t = { m->parts, NULL, 0 };

		if (i > 0 && strcmp(m->signature, ms->v[i - 1].signature) == 0) {
			m->x = ms->v[i - 1].x;
			continue;
		}
		if (m->parts && calib_estimate(r->st, &t, &e) == 0 && e.points &&
		    strcmp(e.scale_name, scale) == 0)
			m->x = e.scale;
		else if (!coord_value(m->coords, scale, &m->x))
			m->x = NAN;
	}
}

/* The scale of a family without a fit: the numeric coordinate with the
 * most distinct values among the members (ties: one that names a batch). */
static const char *guess_scale(const struct members *ms)
{
	const char *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < ms->n; i++) {
		const char *k;
		json_t *v;

		json_object_foreach(ms->v[i].coords, k, v) {
			size_t n = 0;

			if (!json_is_number(v) || (best && strcmp(best, k) == 0))
				continue;
			for (size_t j = 0; j < ms->n; j++) {
				const json_t *a = json_object_get(ms->v[j].coords, k);
				bool dup = false;

				if (!json_is_number(a))
					continue;
				for (size_t l = 0; l < j && !dup; l++)
					dup = json_equal(a, json_object_get(ms->v[l].coords, k));
				n += !dup;
			}
			if (!best || n > best_n ||
			    (n == best_n && strcasestr(k, "batch") && !strcasestr(best, "batch"))) {
				best = k;
				best_n = n;
			}
		}
	}
	return best;
}

static int family_fn(const struct calib_report_family *fa, void *arg);

struct family_ctx {
	struct report *r;
	int rc;
};

/* One family's chart as it is drawn. */
struct fam {
	struct report *r;
	const struct calib_report_family *fa;
	struct members ms;
	struct cands cs;
	bool planned;
	struct calib_estimate est;  /* the fit and the limit */
	enum calib_kind kind;       /* of the figures drawn */
	char scale[64];             /* the coordinate across */
	struct xl_chart c;
	bool seen[XL_MARK_COUNT];
	size_t unplaced, drawn, at_limit;
	struct xl_strv infeasible;  /* "candidate: reason" */
};

/* The fit and the limit: a candidate of this family as `run` would
 * estimate it now, else the latest signature without limits. */
static void family_estimate(struct fam *f, const json_t *parts)
{
	const struct xl_report_cand *fit_item = NULL;

	for (size_t i = 0; i < f->cs.n; i++) {
		const struct xl_report_cand *it = &f->cs.v[i];
		char fh[65];
		json_t *co = NULL;
		struct calib_sig sig;

		if (calib_family(it->parts, fh, &co) != 0)
			continue;
		json_decref(co);
		if (strcmp(fh, f->fa->family) != 0 || calib_signature(it->parts, &sig) != 0)
			continue;
		if (strcmp(sig.stack_hash, f->fa->stack ? f->fa->stack : "") == 0 &&
		    (!fit_item || (!fit_item->rank->est.points && it->rank->est.points)))
			fit_item = it;
		calib_sig_release(&sig);
	}
	if (fit_item) {
		f->est = fit_item->rank->est;
	} else if (parts) {
		struct calib_target t = { parts, NULL, 0 };

		calib_estimate(f->r->st, &t, &f->est);
	}
}

/* The kind drawn: the estimate's, else the kind most observed among the
 * successful launches; and the scale across: the fit's, else a guess. */
static void family_kind_scale(struct fam *f)
{
	f->kind = CALIB_KIND_COUNT;
	if (f->est.known || f->est.points)
		f->kind = f->est.kind;
	if (f->kind == CALIB_KIND_COUNT) {
		int64_t count[CALIB_KIND_COUNT] = { 0 };

		for (size_t i = 0; i < f->ms.n; i++)
			if (f->ms.v[i].kind < CALIB_KIND_COUNT && f->ms.v[i].outcome == XL_OUT_OK)
				count[f->ms.v[i].kind] += f->ms.v[i].attempts;
		for (int k = 0; k < CALIB_KIND_COUNT; k++)
			if (count[k] && (f->kind == CALIB_KIND_COUNT || count[k] > count[f->kind]))
				f->kind = (enum calib_kind)k;
	}
	if (f->est.points) {
		snprintf(f->scale, sizeof(f->scale), "%s", f->est.scale_name);
	} else {
		const char *k = guess_scale(&f->ms);

		snprintf(f->scale, sizeof(f->scale), "%s", k ? k : "");
	}
	if (f->scale[0])
		place_members(f->r, &f->ms, f->scale);
}

/* The plot area: what the members, the infeasible candidates, the limit
 * and the fit reach. */
static void family_axes(struct fam *f)
{
	const struct calib_estimate *est = &f->est;
	struct xl_chart *c = &f->c;
	double xmax = 0, ymax = 0;

	for (size_t i = 0; i < f->ms.n; i++) {
		const struct member *m = &f->ms.v[i];

		if (isnan(m->x))
			continue;
		xmax = fmax(xmax, m->x);
		if (m->kind == f->kind && m->max != CALIB_UNSET)
			ymax = fmax(ymax, (double)m->max);
	}
	for (size_t i = 0; i < f->cs.n; i++) {
		const struct calib_estimate *e = &f->cs.v[i].rank->est;

		if (f->cs.v[i].rank->place == CALIB_PLACE_INFEASIBLE && e->points &&
		    strcmp(e->scale_name, f->scale) == 0) {
			xmax = fmax(xmax, e->scale);
			if (e->predicted_bytes != CALIB_UNSET)
				ymax = fmax(ymax, (double)e->predicted_bytes);
		}
	}
	if (est->limit_bytes != CALIB_UNSET && est->kind == f->kind)
		ymax = fmax(ymax, (double)est->limit_bytes);
	if (est->points)
		ymax = fmax(ymax, est->intercept + est->slope * xmax +
					  (est->error_bytes != CALIB_UNSET ? est->error_bytes : 0));
	c->x = (struct xl_axis){ 0, xmax > 0 ? xmax * 1.05 : 1, XL_AXIS_NUMBER, "" };
	snprintf(c->x.title, sizeof(c->x.title), "%s", f->scale[0] ? f->scale : "scale (none known)");
	c->y = (struct xl_axis){ 0, ymax > 0 ? ymax * 1.08 : 1, XL_AXIS_BYTES, "" };
	snprintf(c->y.title, sizeof(c->y.title), "observed %s",
		 f->kind < CALIB_KIND_COUNT ? calib_kind_name(f->kind) : "peak");
	xl_chart_axes(c);
}

/* The fit with its error band, and the limit. */
static void draw_fit_limit(struct fam *f)
{
	const struct calib_estimate *est = &f->est;
	struct xl_chart *c = &f->c;

	if (est->points && est->kind == f->kind) {
		double x0 = c->x.lo, x1 = c->x.hi, e = est->error_bytes != CALIB_UNSET ? est->error_bytes : 0;
		double xs[4] = { x0, x1, x1, x0 };
		double ys[4] = { est->intercept + est->slope * x0 + e, est->intercept + est->slope * x1 + e,
				 est->intercept + est->slope * x1 - e, est->intercept + est->slope * x0 - e };

		if (e > 0) {
			xl_chart_poly(c, xs, ys, 4, "band");
			xl_chart_legend(c, XL_MARK_COUNT, "band", false, "error band");
		}
		xl_chart_line(c, x0, est->intercept + est->slope * x0, x1,
			      est->intercept + est->slope * x1, "fit");
		xl_chart_legend(c, XL_MARK_COUNT, "fit", true, "learned fit");
	}
	if (est->limit_bytes != CALIB_UNSET && est->kind == f->kind) {
		xl_chart_line(c, c->x.lo, (double)est->limit_bytes, c->x.hi, (double)est->limit_bytes,
			      "limit");
		xl_chart_text(c, c->x.lo, (double)est->limit_bytes, "limit-label",
			      est->limit_source[0] ? est->limit_source : "limit");
		xl_chart_legend(c, XL_MARK_COUNT, "limit", true, "limit");
	}
}

/* Whether member i is drawn: one with a figure of the kind drawn, or an
 * oom without one (at the limit), once per signature and outcome. */
static bool member_drawn(const struct fam *f, size_t i)
{
	const struct member *m = &f->ms.v[i];

	if (m->kind == f->kind)
		return true;
	if (m->outcome != XL_OUT_OOM)
		return false;
	for (size_t j = 0; j < f->ms.n; j++)
		if (strcmp(f->ms.v[j].signature, m->signature) == 0 &&
		    f->ms.v[j].outcome == m->outcome && f->ms.v[j].kind == f->kind)
			return false;
	for (size_t j = 0; j < i; j++)
		if (strcmp(f->ms.v[j].signature, m->signature) == 0 &&
		    f->ms.v[j].outcome == m->outcome && f->ms.v[j].kind != f->kind)
			return false;
	return true;
}

/* The launches: a mark per signature and outcome, at the mean of its
 * figures, a whisker from the least to the most. */
static void draw_members(struct fam *f)
{
	const struct calib_estimate *est = &f->est;
	struct xl_chart *c = &f->c;
	char b1[32], b2[32], b3[32];

	for (size_t i = 0; i < f->ms.n; i++) {
		const struct member *m = &f->ms.v[i];
		enum xl_mark mk = outcome_mark(m->outcome);
		char tip[400];
		double y;

		if (!member_drawn(f, i))
			continue;
		if (isnan(m->x)) {
			f->unplaced += (size_t)m->attempts;
			continue;
		}
		if (m->kind == f->kind && m->mean == m->mean) {
			y = m->mean;
			if (m->attempts > 1 && m->min != m->max)
				xl_chart_line(c, m->x, (double)m->min, m->x, (double)m->max, "whisker");
			snprintf(tip, sizeof(tip), "%.12s: %s, %lld attempt%s, %s %s (%s to %s)",
				 m->signature, xl_outcome_name(m->outcome), (long long)m->attempts,
				 m->attempts == 1 ? "" : "s", calib_kind_name(f->kind),
				 xl_svg_bytes(m->mean, b1, sizeof(b1)),
				 xl_svg_bytes((double)m->min, b2, sizeof(b2)),
				 xl_svg_bytes((double)m->max, b3, sizeof(b3)));
		} else {
			y = est->limit_bytes != CALIB_UNSET && est->kind == f->kind ? (double)est->limit_bytes
										  : c->y.hi;
			f->at_limit++;
			snprintf(tip, sizeof(tip), "%.12s: oom, %lld attempt%s, no %s figure (drawn at %s)",
				 m->signature, (long long)m->attempts, m->attempts == 1 ? "" : "s",
				 f->kind < CALIB_KIND_COUNT ? calib_kind_name(f->kind) : "memory",
				 est->limit_bytes != CALIB_UNSET ? "the limit" : "the top");
		}
		xl_chart_mark(c, mk, m->x, y, 5, tip);
		f->seen[mk] = true;
		f->drawn++;
	}
}

/* The candidates the plan would skip: predicted infeasible. */
static void draw_infeasible(struct fam *f)
{
	const struct calib_estimate *est = &f->est;
	struct xl_chart *c = &f->c;

	for (size_t i = 0; i < f->cs.n; i++) {
		const struct xl_report_cand *it = &f->cs.v[i];
		const struct calib_estimate *e = &it->rank->est;
		char fh[65], tip[800];
		json_t *co = NULL;
		double x = NAN, y;

		if (it->rank->place != CALIB_PLACE_INFEASIBLE || calib_family(it->parts, fh, &co) ||
		    strcmp(fh, f->fa->family) != 0) {
			json_decref(co);
			continue;
		}
		if (e->points && strcmp(e->scale_name, f->scale) == 0)
			x = e->scale;
		else if (f->scale[0])
			coord_value(co, f->scale, &x);
		json_decref(co);
		xl_strv_push_owned(&f->infeasible, xl_asprintf("%s: %s", it->name ? it->name : "-",
								 it->rank->reason));
		if (isnan(x))
			continue;
		y = e->predicted_bytes != CALIB_UNSET && e->kind == f->kind ? (double)e->predicted_bytes
			: est->limit_bytes != CALIB_UNSET ? (double)est->limit_bytes : c->y.hi;
		snprintf(tip, sizeof(tip), "candidate %s: predicted infeasible: %s",
			 it->name ? it->name : "-", it->rank->reason);
		xl_chart_mark(c, XL_MARK_INFEASIBLE, x, y, 6, tip);
		xl_chart_text(c, x, y, "tick", it->name ? it->name : "");
		f->seen[XL_MARK_INFEASIBLE] = true;
	}
}

/* The chart's caption (HTML): the family, the kind and its sources, the
 * fit, the limit, what could not be drawn. */
static void family_caption(const struct fam *f, struct xl_buf *cap)
{
	const struct calib_report_family *fa = f->fa;
	const struct calib_estimate *est = &f->est;
	char b1[32], fit[160];

	xl_buf_addf(cap, "Family <code>%.12s</code> on stack <code>%.12s</code>: %lld attempts of "
			 "%lld signatures", fa->family, fa->stack ? fa->stack : "?",
		    (long long)fa->attempts, (long long)fa->signatures);
	if (fa->signatures > MAX_MEMBERS)
		xl_buf_addf(cap, " (the newest %d drawn)", MAX_MEMBERS);
	xl_buf_adds(cap, ". ");
	if (f->kind < CALIB_KIND_COUNT) {
		xl_buf_addf(cap, "Observed <b>%s</b>, from: ", calib_kind_name(f->kind));
		sources_html(f->r, cap, f->kind, false);
		xl_buf_adds(cap, ". ");
	}
	if (est->points) {
		calib_fit_str(est, fit, sizeof(fit));
		xl_buf_adds(cap, "Learned fit: ");
		html_esc(cap, fit);
		xl_buf_addf(cap, " from %u launches", est->points);
		if (est->error_bytes != CALIB_UNSET)
			xl_buf_addf(cap, ", error band &plusmn;%s",
				    xl_svg_bytes((double)est->error_bytes, b1, sizeof(b1)));
		xl_buf_adds(cap, ". ");
	} else {
		xl_buf_adds(cap, "No learned fit yet (it needs two successful launches at different "
				 "scales). ");
	}
	if (est->limit_bytes != CALIB_UNSET) {
		xl_buf_addf(cap, "Limit: %s (", xl_svg_bytes((double)est->limit_bytes, b1, sizeof(b1)));
		html_esc(cap, est->limit_source);
		xl_buf_adds(cap, "). ");
	} else if (!f->planned) {
		xl_buf_adds(cap, "No limit or candidates drawn: the profile cannot be planned on this "
				 "machine. ");
	}
	if (f->at_limit)
		xl_buf_addf(cap, "%zu out-of-memory mark%s without a %s figure drawn at the %s. ",
			    f->at_limit, f->at_limit == 1 ? "" : "s",
			    f->kind < CALIB_KIND_COUNT ? calib_kind_name(f->kind) : "memory",
			    est->limit_bytes != CALIB_UNSET ? "limit" : "top");
	if (f->unplaced)
		xl_buf_addf(cap, "%zu attempts not placed: no value of the scale. ", f->unplaced);
	for (size_t i = 0; i < f->infeasible.n; i++) {
		xl_buf_adds(cap, i ? "; " : "Predicted infeasible: ");
		html_esc(cap, f->infeasible.v[i]);
		xl_buf_adds(cap, i + 1 == f->infeasible.n ? ". " : "");
	}
}

/* A family's frontier: its launches against its scale, with the fit, its
 * error band, the limit and the candidates predicted infeasible. */
static void draw_family(struct report *r, const struct calib_report_family *fa, int *rc)
{
	struct fam f;
	struct xl_buf svg = XL_BUF_INIT, cap = XL_BUF_INIT;
	char title[400], *name;
	json_t *parts = fa->parts ? json_loads(fa->parts, 0, NULL) : NULL;

	memset(&f, 0, sizeof(f));
	f.r = r;
	f.fa = fa;
	f.planned = cands_of(r, fa->profile, &f.cs);
	f.est.limit_bytes = CALIB_UNSET;
	if ((*rc = calib_report_members(r->st, &r->f, fa->family, fa->stack, MAX_MEMBERS, member_fn,
					&f.ms)))
		goto out;
	family_estimate(&f, parts);
	family_kind_scale(&f);
	snprintf(title, sizeof(title), "Family %.12s%s%s: observed %s against %s", fa->family,
		 fa->profile ? " of " : "", fa->profile ? fa->profile : "",
		 f.kind < CALIB_KIND_COUNT ? calib_kind_name(f.kind) : "peak",
		 f.scale[0] ? f.scale : "its scale");
	name = xl_asprintf("family-%.12s-%.8s", fa->family, fa->stack ? fa->stack : "none");
	xl_chart_begin(&f.c, &svg, (int)r->ncharts + 1, title, 760, 400, r->standalone);
	family_axes(&f);
	draw_fit_limit(&f);
	draw_members(&f);
	draw_infeasible(&f);
	outcome_legend(&f.c, f.seen);
	if (!f.drawn && !f.seen[XL_MARK_INFEASIBLE])
		xl_chart_note(&f.c, (f.c.l + f.c.r) / 2, (f.c.t + f.c.bt) / 2,
			      "no launch of this family with a figure of this kind and a scale");
	xl_chart_end(&f.c);
	family_caption(&f, &cap);
	add_chart(r, SEC_FAMILIES, name, title, xl_buf_detach(&svg), xl_buf_detach(&cap));
	free(name);
out:
	xl_strv_release(&f.infeasible);
	json_decref(parts);
	members_release(&f.ms);
}

static int family_fn(const struct calib_report_family *fa, void *arg)
{
	struct family_ctx *fc = arg;
	int rc = 0;

	draw_family(fc->r, fa, &rc);
	return rc;
}

/* ---- predicted against observed ------------------------------------------------------------- */

struct pvo {
	struct calib_pvo_bin *v;
	size_t n;
};

static int pvo_fn(const struct calib_pvo_bin *b, void *arg)
{
	struct pvo *p = arg;

	p->v = xl_realloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = *b;
	return 0;
}

static void draw_pvo(struct report *r, const struct pvo *p)
{
	for (int k = 0; k < CALIB_KIND_COUNT; k++) {
		struct xl_chart c;
		struct xl_buf svg = XL_BUF_INIT, cap = XL_BUF_INIT;
		bool seen[XL_MARK_COUNT] = { false };
		double max = 0;
		int64_t total = 0, bins = 0, over = 0, under = 0;
		char title[200], name[80], b1[32], b2[32], tip[300];

		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].kind == (enum calib_kind)k) {
				max = fmax(max, fmax(p->v[i].predicted, p->v[i].observed));
				total += p->v[i].attempts;
				bins++;
				if (p->v[i].observed > p->v[i].predicted)
					under += p->v[i].attempts;
				else
					over += p->v[i].attempts;
			}
		if (!total)
			continue;
		snprintf(title, sizeof(title), "Predicted against observed %s", calib_kind_name(k));
		snprintf(name, sizeof(name), "predicted-observed-%s", calib_kind_name(k));
		xl_chart_begin(&c, &svg, (int)r->ncharts + 1, title, 560, 500, r->standalone);
		c.x = (struct xl_axis){ 0, max * 1.05, XL_AXIS_BYTES, "" };
		c.y = c.x;
		snprintf(c.x.title, sizeof(c.x.title), "predicted %s", calib_kind_name(k));
		snprintf(c.y.title, sizeof(c.y.title), "observed %s", calib_kind_name(k));
		xl_chart_axes(&c);
		xl_chart_line(&c, 0, 0, c.x.hi, c.x.hi, "diag");
		xl_chart_legend(&c, XL_MARK_COUNT, "diag", true, "observed = predicted");
		for (size_t i = 0; i < p->n; i++) {
			const struct calib_pvo_bin *b = &p->v[i];
			enum xl_mark mk = outcome_mark(b->outcome);

			if (b->kind != (enum calib_kind)k)
				continue;
			snprintf(tip, sizeof(tip), "%s: %lld launch%s, predicted %s, observed %s (means)",
				 xl_outcome_name(b->outcome), (long long)b->attempts,
				 b->attempts == 1 ? "" : "es", xl_svg_bytes(b->predicted, b1, sizeof(b1)),
				 xl_svg_bytes(b->observed, b2, sizeof(b2)));
			xl_chart_mark(&c, mk, b->predicted, b->observed,
				      4 + 1.5 * log10((double)b->attempts), tip);
			seen[mk] = true;
		}
		outcome_legend(&c, seen);
		xl_chart_note(&c, c.l + (c.r - c.l) * 0.25, c.t + 16, "under-predicted");
		xl_chart_note(&c, c.l + (c.r - c.l) * 0.75, c.bt - 8, "over-predicted");
		xl_chart_end(&c);
		xl_buf_addf(&cap, "%lld launches with a predicted and an observed <b>%s</b> figure "
				  "(%lld above the diagonal: observed more than predicted; %lld on or "
				  "below).  Observed from: ",
			    (long long)total, calib_kind_name(k), (long long)under, (long long)over);
		sources_html(r, &cap, (enum calib_kind)k, false);
		xl_buf_adds(&cap, ". Predicted by: ");
		sources_html(r, &cap, (enum calib_kind)k, true);
		xl_buf_addf(&cap, ". Figures of other kinds are never compared with these.  Launches "
				  "within 1/%d of a factor e (about %.0f%%) of each other on both axes "
				  "share a mark (%lld marks); a mark grows with its count.",
			    PVO_BINS_PER_E, (exp(1.0 / PVO_BINS_PER_E) - 1) * 100, (long long)bins);
		add_chart(r, SEC_PVO, name, title, xl_buf_detach(&svg), xl_buf_detach(&cap));
	}
}

/* ---- launches per profile ---------------------------------------------------------------------- */

struct timeline {
	struct calib_timeline_bin *v;
	size_t n;
};

static int timeline_fn(const struct calib_timeline_bin *b, void *arg)
{
	struct timeline *t = arg;

	t->v = xl_realloc(t->v, (t->n + 1) * sizeof(*t->v));
	t->v[t->n++] = *b;
	return 0;
}

struct change {
	double time;
	char label[160];
};

struct changes {
	struct change *v;
	size_t n;
	char stack[65], hw[128];
	bool any;
};

static int stack_fn(const struct calib_report_stack *s, void *arg)
{
	struct changes *ch = arg;
	const char *stack = s->stack_hash ? s->stack_hash : "";
	const char *hw = s->hardware_kind ? s->hardware_kind : "";

	if (ch->any) {
		struct change *c;
		bool st = strcmp(stack, ch->stack) != 0, h = strcmp(hw, ch->hw) != 0;

		if (st || h) {
			ch->v = xl_realloc(ch->v, (ch->n + 1) * sizeof(*ch->v));
			c = &ch->v[ch->n++];
			c->time = s->first;
			snprintf(c->label, sizeof(c->label), "%s%.8s%s%s%.40s", st ? "stack " : "",
				 st ? stack : "", st && h ? ", " : "", h ? "hardware " : "",
				 h ? (*hw ? hw : "unknown") : "");
		}
	}
	ch->any = true;
	snprintf(ch->stack, sizeof(ch->stack), "%s", stack);
	snprintf(ch->hw, sizeof(ch->hw), "%s", hw);
	return 0;
}

static void draw_changes(struct xl_chart *c, const struct changes *ch)
{
	for (size_t i = 0; i < ch->n; i++) {
		double px = xl_chart_px(c, ch->v[i].time);

		xl_chart_line(c, ch->v[i].time, c->y.lo, ch->v[i].time, c->y.hi, "change");
		xl_buf_addf(c->b, "<text class=\"change-label\" x=\"%.1f\" y=\"%.1f\">", px + 3,
			    c->t + 12 + 13.0 * (double)(i % 3));
		xl_xml_esc(c->b, ch->v[i].label);
		xl_buf_adds(c->b, "</text>\n");
	}
	if (ch->n)
		xl_chart_legend(c, XL_MARK_COUNT, "change", true, "stack or hardware change");
}

static int draw_profile(struct report *r, const struct calib_report_profile *p)
{
	struct calib_report_filter f = r->f;
	struct timeline t = { NULL, 0 };
	struct changes ch = { 0 };
	struct xl_chart c;
	struct xl_buf svg = XL_BUF_INIT, cap = XL_BUF_INIT;
	bool seen[XL_MARK_COUNT] = { false };
	double width = (p->last - p->first) / TIMELINE_BINS, wmax = 0, cmax = 0;
	const char *pname = p->profile ? p->profile : "(no profile)";
	char title[300], tb[40], tip[400], *name;
	int64_t compiles = 0, hits = 0, ck = 0, hk = 0, nowall = 0;
	int rc;

	if (!(width > 0))
		width = 1;
	f.profile = p->profile ? p->profile : "";
	if ((rc = calib_report_timeline(r->st, &f, p->first, width, timeline_fn, &t)) ||
	    (rc = calib_report_stacks(r->st, &f, stack_fn, &ch))) {
		free(t.v);
		free(ch.v);
		return rc;
	}
	for (size_t i = 0; i < t.n; i++) {
		if (!isnan(t.v[i].wall_max))
			wmax = fmax(wmax, t.v[i].wall_max);
		compiles += t.v[i].compiles;
		hits += t.v[i].cache_hits;
		ck += t.v[i].compiles_known;
		hk += t.v[i].cache_known;
	}

	/* wall time, marked by outcome */
	snprintf(title, sizeof(title), "Launches of %s: wall time by outcome", pname);
	name = slug("timeline-", p->profile);
	xl_chart_begin(&c, &svg, (int)r->ncharts + 1, title, 900, 360, r->standalone);
	c.x = (struct xl_axis){ p->first - width, p->last + width, XL_AXIS_TIME, "launch time" };
	c.y = (struct xl_axis){ 0, wmax > 0 ? wmax * 1.08 : 1, XL_AXIS_SECONDS, "wall time" };
	xl_chart_axes(&c);
	draw_changes(&c, &ch);
	for (size_t i = 0; i < t.n; i++) {
		const struct calib_timeline_bin *b = &t.v[i];
		enum xl_mark mk = outcome_mark(b->outcome);
		double x = (b->time_min + b->time_max) / 2;

		if (isnan(b->wall_mean)) {
			nowall += b->attempts;
			continue;
		}
		if (b->attempts > 1 && b->wall_max > b->wall_mean)
			xl_chart_line(&c, x, b->wall_mean, x, b->wall_max, "whisker");
		snprintf(tip, sizeof(tip), "%s: %s, %lld launch%s, wall %.1fs (max %.1fs)",
			 xl_iso_time(b->time_min, tb, sizeof(tb)), xl_outcome_name(b->outcome),
			 (long long)b->attempts, b->attempts == 1 ? "" : "es", b->wall_mean,
			 b->wall_max);
		xl_chart_mark(&c, mk, x, b->wall_mean, b->attempts > 1 ? 4 + log10((double)b->attempts)
								      : 4.5, tip);
		seen[mk] = true;
	}
	outcome_legend(&c, seen);
	xl_chart_end(&c);
	xl_buf_addf(&cap, "%lld launches of <b>", (long long)p->attempts);
	html_esc(&cap, pname);
	xl_buf_addf(&cap, "</b> from %s", xl_iso_time(p->first, tb, sizeof(tb)));
	xl_buf_addf(&cap, " to %s. ", xl_iso_time(p->last, tb, sizeof(tb)));
	if (p->attempts > (int64_t)t.n)
		xl_buf_addf(&cap, "Launches in one bin of %.3g s with one outcome share a mark at "
				  "their mean wall time (the whisker reaches the longest). ", width);
	if (nowall)
		xl_buf_addf(&cap, "%lld launches without a wall time are not drawn. ",
			    (long long)nowall);
	xl_buf_addf(&cap, "%zu change%s of stack or hardware marked.", ch.n, ch.n == 1 ? "" : "s");
	add_chart(r, SEC_TIMELINES, name, title, xl_buf_detach(&svg), xl_buf_detach(&cap));
	free(name);

	/* compilations and persistent-cache hits, per bin */
	snprintf(title, sizeof(title), "Launches of %s: compilations and persistent-cache hits",
		 pname);
	name = slug("compiles-", p->profile);
	for (size_t i = 0; i < t.n;) {
		size_t j = i;
		int64_t cs = 0, hs = 0;

		for (; j < t.n && t.v[j].bin == t.v[i].bin; j++) {
			cs += t.v[j].compiles;
			hs += t.v[j].cache_hits;
		}
		cmax = fmax(cmax, (double)(cs > hs ? cs : hs));
		i = j;
	}
	xl_chart_begin(&c, &svg, (int)r->ncharts + 1, title, 900, 300, r->standalone);
	c.x = (struct xl_axis){ p->first - width, p->last + width, XL_AXIS_TIME, "launch time" };
	c.y = (struct xl_axis){ 0, cmax > 0 ? cmax * 1.08 : 1, XL_AXIS_NUMBER,
				"per launch (sum per bin)" };
	xl_chart_axes(&c);
	draw_changes(&c, &ch);
	xl_chart_legend(&c, XL_MARK_COUNT, "bar-c", false, "compilations");
	xl_chart_legend(&c, XL_MARK_COUNT, "bar-h", false, "persistent-cache hits (hatched)");
	for (size_t i = 0; i < t.n;) {
		size_t j = i;
		int64_t cs = 0, hs = 0, n = 0;
		double x0 = p->first + (double)t.v[i].bin * width;
		double half = fmax(width * 0.42, (c.x.hi - c.x.lo) / 400);

		for (; j < t.n && t.v[j].bin == t.v[i].bin; j++) {
			cs += t.v[j].compiles;
			hs += t.v[j].cache_hits;
			n += t.v[j].attempts;
		}
		if (width <= 1)
			x0 = (t.v[i].time_min + t.v[j - 1].time_max) / 2 - width / 2;
		snprintf(tip, sizeof(tip), "%s: %lld launch%s, %lld compilations, %lld cache hits",
			 xl_iso_time(t.v[i].time_min, tb, sizeof(tb)), (long long)n,
			 n == 1 ? "" : "es", (long long)cs, (long long)hs);
		if (cs)
			xl_chart_rect(&c, x0 + width / 2 - half, 0, x0 + width / 2, (double)cs, "bar-c",
				      tip);
		if (hs)
			xl_chart_rect(&c, x0 + width / 2, 0, x0 + width / 2 + half, (double)hs, "bar-h",
				      tip);
		i = j;
	}
	if (!ck && !hk)
		xl_chart_note(&c, (c.l + c.r) / 2, (c.t + c.bt) / 2,
			      "no compilation counts or cache hits recorded");
	xl_chart_end(&c);
	xl_buf_release(&cap);
	xl_buf_addf(&cap, "%lld compilations over the %lld launches that counted them; %lld "
			  "persistent-cache hits over the %lld that counted them.",
		    (long long)compiles, (long long)ck, (long long)hits, (long long)hk);
	add_chart(r, SEC_TIMELINES, name, title, xl_buf_detach(&svg), xl_buf_detach(&cap));
	free(name);
	free(t.v);
	free(ch.v);
	return 0;
}

struct profiles {
	struct calib_report_profile *v;
	size_t n;
};

static int profile_fn(const struct calib_report_profile *p, void *arg)
{
	struct profiles *ps = arg;

	ps->v = xl_realloc(ps->v, (ps->n + 1) * sizeof(*ps->v));
	ps->v[ps->n] = *p;
	ps->v[ps->n].profile = p->profile ? xl_strdup(p->profile) : NULL;
	ps->n++;
	return 0;
}

/* ---- probes ---------------------------------------------------------------------------------- */

struct bar {
	char label[200];
	double gbs;                /* NAN: none measured */
	char state[32];
};

struct probes {
	struct report *r;
	struct bar *v;
	size_t n;
	size_t hosts;
};

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static int probe_fn(const struct calib_report_probe *p, void *arg)
{
	struct probes *ps = arg;
	struct xl_buf *b = &ps->r->probe_table;
	const json_t *backends = json_object_get(p->doc, "backends"), *be;
	char tb[40], mb[32];
	size_t i;

	ps->hosts++;
	json_array_foreach(backends, i, be) {
		const json_t *devs = json_object_get(be, "devices"), *d;
		const json_t *bw = json_object_get(be, "bandwidth_gbs");
		const json_t *gf = json_object_get(be, "gflops");
		struct bar *bar;
		size_t j;

		xl_buf_adds(b, "<tr><td>");
		html_esc(b, p->host);
		xl_buf_addf(b, "</td><td>%s</td><td>", xl_iso_time(p->time, tb, sizeof(tb)));
		html_esc(b, jstr(be, "name"));
		xl_buf_addf(b, "</td><td class=\"state-%s\">", strcmp(jstr(be, "state"), "alive") == 0
								     ? "alive" : "other");
		html_esc(b, jstr(be, "state"));
		xl_buf_adds(b, "</td><td>");
		json_array_foreach(devs, j, d) {
			const json_t *m = json_object_get(d, "memory_bytes");

			if (j)
				xl_buf_adds(b, "<br>");
			html_esc(b, jstr(d, "kind"));
			if (json_is_integer(m))
				xl_buf_addf(b, " (%s)", xl_svg_bytes((double)json_integer_value(m),
								     mb, sizeof(mb)));
		}
		xl_buf_adds(b, "</td><td>");
		if (json_is_number(bw))
			xl_buf_addf(b, "%.1f GB/s", json_number_value(bw));
		else
			xl_buf_adds(b, "-");
		xl_buf_adds(b, "</td><td>");
		if (json_is_number(gf))
			xl_buf_addf(b, "%.1f", json_number_value(gf));
		else
			xl_buf_adds(b, "-");
		xl_buf_adds(b, "</td><td>");
		html_esc(b, jstr(be, "error"));
		xl_buf_adds(b, "</td></tr>\n");

		ps->v = xl_realloc(ps->v, (ps->n + 1) * sizeof(*ps->v));
		bar = &ps->v[ps->n++];
		snprintf(bar->label, sizeof(bar->label), "%s %s", p->host, jstr(be, "name"));
		snprintf(bar->state, sizeof(bar->state), "%s", jstr(be, "state"));
		bar->gbs = json_is_number(bw) ? json_number_value(bw) : NAN;
	}
	return 0;
}

static void draw_probes(struct report *r, const struct probes *ps)
{
	struct xl_chart c;
	struct xl_buf svg = XL_BUF_INIT, cap = XL_BUF_INIT;
	const char *title = "Latest probe per host: measured memory bandwidth by backend";
	double max = 0, w = fmax(640, 120 + 130.0 * (double)ps->n);

	for (size_t i = 0; i < ps->n; i++)
		if (!isnan(ps->v[i].gbs))
			max = fmax(max, ps->v[i].gbs);
	xl_chart_begin(&c, &svg, (int)r->ncharts + 1, title, fmin(w, 1000), 340, r->standalone);
	c.x = (struct xl_axis){ 0, (double)(ps->n ? ps->n : 1), XL_AXIS_NUMBER, "host and backend" };
	c.y = (struct xl_axis){ 0, max > 0 ? max * 1.1 : 1, XL_AXIS_NUMBER, "bandwidth (GB/s)" };
	/* the x axis names categories: its numeric ticks are not drawn */
	xl_chart_axes(&c);
	xl_buf_addf(&svg, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"40\""
			  " style=\"fill:var(--panel)\"/>\n", c.l - 30, c.bt + 1, c.r - c.l + 60);
	xl_chart_legend(&c, XL_MARK_COUNT, "bar-c", false, "alive: measured bandwidth");
	xl_chart_legend(&c, XL_MARK_FAIL, NULL, false, "not alive (state named)");
	for (size_t i = 0; i < ps->n; i++) {
		const struct bar *b = &ps->v[i];
		double x = (double)i + 0.5;
		char tip[300];

		if (!isnan(b->gbs)) {
			snprintf(tip, sizeof(tip), "%s: %s, %.2f GB/s", b->label, b->state, b->gbs);
			xl_chart_rect(&c, x - 0.3, 0, x + 0.3, b->gbs, "bar-c", tip);
			snprintf(tip, sizeof(tip), "%.1f", b->gbs);
			xl_chart_note(&c, xl_chart_px(&c, x), xl_chart_py(&c, b->gbs) - 4, tip);
		} else {
			snprintf(tip, sizeof(tip), "%s: %s, no bandwidth measured", b->label, b->state);
			xl_chart_mark(&c, XL_MARK_FAIL, x, 0, 5, tip);
			xl_chart_note(&c, xl_chart_px(&c, x), c.bt - 12, b->state);
		}
		xl_chart_note(&c, xl_chart_px(&c, x), c.bt + 16, b->label);
	}
	if (!ps->n)
		xl_chart_note(&c, (c.l + c.r) / 2, (c.t + c.bt) / 2, "no probe recorded");
	xl_chart_end(&c);
	xl_buf_addf(&cap, "The latest probe of each of %zu host%s (xlaunch probe): triad bandwidth "
			  "of each backend that ran its kernels.",
		    ps->hosts, ps->hosts == 1 ? "" : "s");
	add_chart(r, SEC_PROBES, "probes", title, xl_buf_detach(&svg), xl_buf_detach(&cap));
}

/* ---- the page ------------------------------------------------------------------------------- */

static const char page_style[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1120px;"
	"padding:0 16px;background:var(--bg);color:var(--fg)}\n"
	"h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid var(--grid);"
	"padding-bottom:4px;margin-top:36px}h3{font-size:15px;margin:18px 0 6px}\n"
	"figure{margin:8px 0 22px}figcaption{color:var(--muted);font-size:13px;max-width:900px}\n"
	"table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid var(--grid);"
	"padding:3px 8px;text-align:left;vertical-align:top}\n"
	".meta{color:var(--muted)}.empty{padding:20px;background:var(--panel);border-radius:6px}\n"
	"nav a{margin-right:14px;color:var(--ok)}code{font-size:12px}\n"
	"td.state-alive{color:var(--fit)}td.state-other{color:var(--oom)}\n";

static void write_page(struct report *r, const struct xl_report_opts *o, struct xl_buf *out)
{
	char tb[40];

	xl_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			 "<meta name=\"color-scheme\" content=\"light dark\">\n"
			 "<title>xlaunch calibration report</title>\n<style>\n");
	xl_buf_adds(out, xl_svg_style);
	xl_buf_adds(out, page_style);
	xl_buf_adds(out, "</style>\n</head>\n<body>\n<header>\n<h1>xlaunch calibration report</h1>\n"
			 "<p class=\"meta\">Store <code>");
	html_esc(out, calib_store_path(r->st));
	xl_buf_addf(out, "</code>, written %s. ", xl_iso_time(xl_now(), tb, sizeof(tb)));
	if (o->profile) {
		xl_buf_adds(out, "Profile <b>");
		html_esc(out, o->profile);
		xl_buf_adds(out, "</b>. ");
	}
	if (!isnan(o->since))
		xl_buf_addf(out, "Since %s. ", xl_iso_time(o->since, tb, sizeof(tb)));
	xl_buf_addf(out, "%lld attempt%s of %zu profile%s.</p>\n", (long long)r->attempts,
		    r->attempts == 1 ? "" : "s", r->nprofiles, r->nprofiles == 1 ? "" : "s");
	if (r->attempts == 0 && r->probe_table.len == 0) {
		xl_buf_adds(out, "</header>\n<main>\n<p class=\"empty\" id=\"empty\"><b>Nothing recorded "
				 "yet</b>: the store holds no launch and no probe");
		if (o->profile || !isnan(o->since))
			xl_buf_adds(out, " that match");
		xl_buf_adds(out, ".  <code>xlaunch probe</code> records this host's backends; "
				 "<code>xlaunch run PROFILE -- COMMAND</code> records launches.</p>\n"
				 "</main>\n</body>\n</html>\n");
		return;
	}
	xl_buf_adds(out, "<nav>");
	for (int s = 0; s < SEC_COUNT; s++)
		xl_buf_addf(out, "<a href=\"#%s\">%s</a>", section_ids[s], section_titles[s]);
	xl_buf_adds(out, "</nav>\n</header>\n<main>\n");
	for (int s = 0; s < SEC_COUNT; s++) {
		size_t n = 0;

		xl_buf_addf(out, "<section id=\"%s\">\n<h2>%s</h2>\n", section_ids[s], section_titles[s]);
		for (size_t i = 0; i < r->ncharts; i++) {
			const struct chart *c = &r->charts[i];

			if (c->sec != (enum section)s)
				continue;
			n++;
			xl_buf_addf(out, "<figure id=\"chart-%s\">\n<h3>", c->name);
			html_esc(out, c->title);
			xl_buf_adds(out, "</h3>\n");
			xl_buf_adds(out, c->svg);
			xl_buf_addf(out, "<figcaption>%s <span class=\"meta\">(chart <code>%s</code>)"
					 "</span></figcaption>\n</figure>\n", c->caption, c->name);
		}
		if (s == SEC_PROBES && r->probe_table.len) {
			xl_buf_adds(out, "<table>\n<tr><th>host</th><th>probed</th><th>backend</th>"
					 "<th>state</th><th>devices</th><th>bandwidth</th>"
					 "<th>GFLOP/s</th><th>error</th></tr>\n");
			xl_buf_adds(out, xl_buf_str(&r->probe_table));
			xl_buf_adds(out, "</table>\n");
		}
		if (!n && r->section_notes[s])
			xl_buf_addf(out, "<p class=\"empty\">%s</p>\n", r->section_notes[s]);
		xl_buf_adds(out, "</section>\n");
	}
	xl_buf_adds(out, "</main>\n<footer class=\"meta\"><p>Marks differ in shape as well as "
			 "colour: circle ok, cross oom, square compile-storm, diamond other failures, "
			 "triangle predicted infeasible.  Hover a mark for its figures.</p></footer>\n"
			 "</body>\n</html>\n");
}

static void report_release(struct report *r)
{
	for (size_t i = 0; i < r->ncharts; i++) {
		free(r->charts[i].name);
		free(r->charts[i].title);
		free(r->charts[i].svg);
		free(r->charts[i].caption);
	}
	free(r->charts);
	for (size_t i = 0; i < r->nsources; i++)
		free(r->sources[i].source);
	free(r->sources);
	for (int s = 0; s < SEC_COUNT; s++)
		free(r->section_notes[s]);
	xl_buf_release(&r->probe_table);
}

static int gather(struct report *r)
{
	struct profiles ps = { NULL, 0 };
	struct pvo pvo = { NULL, 0 };
	struct probes pr = { r, NULL, 0, 0 };
	struct family_ctx fc = { r, 0 };
	int rc;

	if ((rc = calib_report_sources(r->st, &r->f, source_fn, r)) ||
	    (rc = calib_report_profiles(r->st, &r->f, 0, profile_fn, &ps)))
		goto out;
	r->nprofiles = ps.n;
	for (size_t i = 0; i < ps.n; i++)
		r->attempts += ps.v[i].attempts;
	if ((rc = calib_report_families(r->st, &r->f, MAX_FAMILIES, family_fn, &fc)))
		goto out;
	if ((rc = calib_report_pvo(r->st, &r->f, PVO_BINS_PER_E, pvo_fn, &pvo)))
		goto out;
	draw_pvo(r, &pvo);
	for (size_t i = 0; i < ps.n && i < MAX_PROFILES; i++)
		if ((rc = draw_profile(r, &ps.v[i])))
			goto out;
	if ((rc = calib_report_probes(r->st, &r->f, probe_fn, &pr)))
		goto out;
	draw_probes(r, &pr);
	r->section_notes[SEC_FAMILIES] = xl_strdup(
		"No job family yet: a family needs launches recorded with the job's own signature "
		"(<code>xlaunch run</code>).");
	r->section_notes[SEC_PVO] = xl_strdup(
		"No launch has a predicted and an observed figure of the same kind yet.");
	r->section_notes[SEC_TIMELINES] = xl_strdup("No launch recorded.");
	if (ps.n > MAX_PROFILES)
		xl_warn("calib report: the %d most recently launched of %zu profiles are drawn; "
			"--profile draws another", MAX_PROFILES, ps.n);
out:
	for (size_t i = 0; i < ps.n; i++)
		free((char *)ps.v[i].profile);
	free(ps.v);
	free(pvo.v);
	free(pr.v);
	return rc;
}

int xl_report(const struct xl_ctx *ctx, struct calib_store *st, const struct xl_report_opts *o,
	      struct xl_buf *out)
{
	struct report r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	r.o = o;
	r.st = st;
	r.f.profile = o->profile;
	r.f.since = o->since;
	r.standalone = o->svg;
	if ((rc = gather(&r))) {
		xl_error("%s", calib_errmsg(st));
		report_release(&r);
		return rc;
	}
	if (o->svg) {
		size_t i;

		for (i = 0; o->chart && i < r.ncharts && strcmp(r.charts[i].name, o->chart) != 0; i++)
			;
		if (!o->chart)
			i = r.ncharts;
		if (i == r.ncharts) {
			struct xl_buf names = XL_BUF_INIT;

			for (size_t j = 0; j < r.ncharts; j++)
				xl_buf_addf(&names, "%s%s", j ? ", " : "", r.charts[j].name);
			if (o->chart)
				xl_error("calib report: no chart '%s'; the charts of this store are: %s",
					 o->chart, xl_buf_str(&names));
			else
				xl_error("calib report: --format svg needs --chart NAME; the charts of "
					 "this store are: %s", xl_buf_str(&names));
			xl_buf_release(&names);
			report_release(&r);
			return XL_EX_USAGE;
		}
		xl_buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
		xl_buf_adds(out, r.charts[i].svg);
	} else {
		write_page(&r, o, out);
	}
	report_release(&r);
	return 0;
}
