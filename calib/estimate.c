/* estimate.c - what a launch will need, from its family's past launches:
 * the scale a family's members differ in, a curve of each memory kind
 * against it (curve.c chooses it), the compiler's own figure and its
 * growth, the analytic model as a prior, and feasibility against the
 * launch's real limits. */
#include "calib/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the family's past launches ------------------------------------------------------ */

/* One attempt of the family, with its observed figures. */
struct fpoint {
	char *attempt, *signature;
	json_t *coords;            /* owned */
	json_t *parts;             /* owned; NULL when unreadable */
	double time;
	enum xl_outcome outcome;
	int64_t fig[CALIB_KIND_COUNT];   /* CALIB_UNSET when not observed */
	double analytic;           /* the analytic model of its parts, 0 unknown */
};

struct family {
	struct fpoint *v;
	size_t n;
};

static int collect(const struct calib_point *p, void *arg)
{
	struct family *f = arg;
	struct fpoint *last = f->n ? &f->v[f->n - 1] : NULL;

	if (!last || strcmp(last->attempt, p->attempt) != 0) {
		/* a signature's launches come together: its JSON is read once */
		bool same = last && strcmp(last->signature, p->signature ? p->signature : "") == 0;

		f->v = xl_realloc(f->v, (f->n + 1) * sizeof(*f->v));
		last = &f->v[f->n++];
		if (same) {
			const struct fpoint *prev = &f->v[f->n - 2];

			memset(last, 0, sizeof(*last));
			last->coords = json_incref(prev->coords);
			last->parts = json_incref(prev->parts);
			last->signature = xl_strdup(prev->signature);
			last->analytic = prev->analytic;
		} else {
			memset(last, 0, sizeof(*last));
			last->signature = xl_strdup(p->signature ? p->signature : "");
			last->coords = p->coords ? json_loads(p->coords, 0, NULL) : NULL;
			if (!json_is_object(last->coords)) {
				json_decref(last->coords);
				last->coords = json_object();
			}
			last->parts = p->parts ? json_loads(p->parts, 0, NULL) : NULL;
			if (last->parts) {
				struct calib_prediction a;

				calib_predict_analytic(last->parts, &a);
				last->analytic = a.known ? (double)a.analytic_bytes : 0;
			}
		}
		last->attempt = xl_strdup(p->attempt);
		last->time = p->time;
		last->outcome = p->outcome;
		for (int k = 0; k < CALIB_KIND_COUNT; k++)
			last->fig[k] = CALIB_UNSET;
	}
	if (p->kind < CALIB_KIND_COUNT)
		last->fig[p->kind] = p->bytes;
	return 0;
}

/* Curves fitted on a family's figures: the fits do not depend on the
 * launch, so the candidates of one family share them.  The key is what
 * they were fitted on. */
struct fit_memo {
	struct calib_obs *obs, *xla;   /* owned copies */
	size_t n, nx;
	unsigned mask;
	enum calib_coord coord;
	struct calib_choice fits;
};
#define MAX_MEMO 8

struct calib_family_cache {
	char family[65], stack[65];
	struct family fam;
	unsigned other_stacks;
	struct fit_memo memo[MAX_MEMO];
	size_t nmemo;
};

static void family_release(struct family *f);

void calib_family_cache_drop(struct calib_store *st)
{
	if (!st || !st->fcache)
		return;
	family_release(&st->fcache->fam);
	for (size_t i = 0; i < st->fcache->nmemo; i++) {
		free(st->fcache->memo[i].obs);
		free(st->fcache->memo[i].xla);
	}
	free(st->fcache);
	st->fcache = NULL;
}

static bool same_obs(const struct calib_obs *a, const struct calib_obs *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].u != b[i].u || a[i].v != b[i].v || a[i].y != b[i].y || a[i].count != b[i].count)
			return false;
	return true;
}

static struct calib_obs *obs_dup(const struct calib_obs *o, size_t n)
{
	struct calib_obs *d = xl_calloc(n + 1, sizeof(*d));

	if (n)
		memcpy(d, o, n * sizeof(*d));
	return d;
}

/* calib_fit_curves, or what it gave for the same figures before (fc may be
 * NULL: no store, nothing kept). */
static unsigned fit_memoized(struct calib_family_cache *fc, const struct calib_obs *obs, size_t n,
			     const struct calib_obs *xla, size_t nx, unsigned mask,
			     enum calib_coord coord, struct calib_choice *out)
{
	unsigned fitted = 0;
	struct fit_memo *m;

	for (size_t i = 0; fc && i < fc->nmemo; i++) {
		m = &fc->memo[i];
		if (m->n == n && m->nx == nx && m->mask == mask && m->coord == coord && same_obs(m->obs, obs, n) &&
		    same_obs(m->xla, xla, nx)) {
			*out = m->fits;
			for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
				fitted += out->trial[s].fitted;
			return fitted;
		}
	}
	fitted = calib_fit_curves_for(obs, n, xla, nx, mask, coord, out);
	if (fc && fc->nmemo < MAX_MEMO) {
		m = &fc->memo[fc->nmemo++];
		m->obs = obs_dup(obs, n);
		m->xla = obs_dup(xla, nx);
		m->n = n;
		m->nx = nx;
		m->mask = mask;
		m->coord = coord;
		m->fits = *out;
	}
	return fitted;
}

static void family_release(struct family *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].attempt);
		free(f->v[i].signature);
		json_decref(f->v[i].coords);
		json_decref(f->v[i].parts);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static bool fits(enum xl_outcome o)
{
	return o == XL_OUT_OK || o == XL_OUT_COMPILE_STORM;
}

/* ---- the scale ------------------------------------------------------------------------ */

/* How a family's members are told apart: the coordinates that make the
 * scale, and the value of the scale at a point. */
struct scale {
	bool tokens;               /* micro_batch x seq */
	char key[64];              /* the one coordinate otherwise ("" none varies) */
	char name[64];
};

static bool num_of(const json_t *coords, const char *key, double *v)
{
	const json_t *x = json_object_get(coords, key);

	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

static bool scale_of(const struct scale *sc, const json_t *coords, double *x)
{
	double mb, seq;

	if (sc->tokens) {
		if (!num_of(coords, "micro_batch", &mb) || !num_of(coords, "seq", &seq))
			return false;
		*x = mb * seq;
		return true;
	}
	if (!sc->key[0]) {
		*x = 0;
		return true;
	}
	return num_of(coords, sc->key, x);
}

/* The point (u, v) of coords on the scale (see calib.h, "curves"): the
 * micro batch and the sequence length for tokens, else 1 and the scale. */
static bool uv_of(const struct scale *sc, const json_t *coords, double *u, double *v)
{
	if (sc->tokens)
		return num_of(coords, "micro_batch", u) && num_of(coords, "seq", v);
	*u = 1;
	return scale_of(sc, coords, v);
}

static bool in_scale(const struct scale *sc, const char *key)
{
	if (sc->tokens)
		return strcmp(key, "micro_batch") == 0 || strcmp(key, "seq") == 0;
	return strcmp(key, sc->key) == 0;
}

/* Whether coordinate key moves with the scale: proportional to it over the
 * target and every candidate point (a MICRO_BATCH variable that follows
 * signature.train.micro_batch, a global batch four times the micro batch). */
/* Whether key is proportional to the value component(c) gives, over the
 * target and every candidate point. */
static bool proportional(const struct scale *sc, int component, const char *key,
			 const json_t *target, const struct fpoint *pts, const bool *cand, size_t n)
{
	double x, v, ratio = NAN;

	for (size_t i = 0; i <= n; i++) {
		const json_t *co = i < n ? pts[i].coords : target;
		bool got;

		if (i < n && !cand[i])
			continue;
		got = component == 0 ? scale_of(sc, co, &x)
		    : num_of(co, component == 1 ? "micro_batch" : "seq", &x);
		if (!got || !num_of(co, key, &v) || x == 0)
			return false;
		if (isnan(ratio))
			ratio = v / x;
		else if (fabs(v / x - ratio) > 1e-9 * fabs(ratio))
			return false;
	}
	return !isnan(ratio);
}

/* Whether coordinate key moves with the scale: proportional to it (or, for
 * tokens, to the micro batch or the sequence length) over the target and
 * every candidate point (a MICRO_BATCH variable that follows
 * signature.train.micro_batch, a global batch four times the micro batch). */
static bool tied(const struct scale *sc, const char *key, const json_t *target,
		 const struct fpoint *pts, const bool *cand, size_t n)
{
	if (!sc->name[0])
		return false;
	if (proportional(sc, 0, key, target, pts, cand, n))
		return true;
	return sc->tokens && (proportional(sc, 1, key, target, pts, cand, n) ||
			      proportional(sc, 2, key, target, pts, cand, n));
}

/* The points a scale can use: every coordinate outside the scale is equal
 * to the target's, or is tied to the scale (see tied()).  use[i] says which;
 * returns how many distinct scale values they have. */
static size_t usable(const struct scale *sc, const json_t *target, const struct fpoint *pts,
		     const bool *cand, size_t n, bool *use)
{
	const char *k;
	json_t *tv;
	double xt, *xs = NULL;
	size_t nx = 0;

	if (!scale_of(sc, target, &xt)) {
		memset(use, 0, n * sizeof(*use));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		double x;

		use[i] = cand[i] && scale_of(sc, pts[i].coords, &x) &&
			 json_object_size(pts[i].coords) == json_object_size(target);
	}
	json_object_foreach((json_t *)target, k, tv) {
		if (in_scale(sc, k) || tied(sc, k, target, pts, cand, n))
			continue;
		for (size_t i = 0; i < n; i++)
			if (use[i] && !json_equal(json_object_get(pts[i].coords, k), tv))
				use[i] = false;
	}
	for (size_t i = 0; i < n; i++) {
		double x;
		size_t j;

		if (!use[i])
			continue;
		scale_of(sc, pts[i].coords, &x);
		for (j = 0; j < nx && xs[j] != x; j++)
			;
		if (j == nx) {
			xs = xl_realloc(xs, (nx + 1) * sizeof(*xs));
			xs[nx++] = x;
		}
	}
	free(xs);
	return nx;
}

/* How much a coordinate's name says "this is the size": batch, then
 * sequence, then anything; variables before arguments. */
static int name_rank(const char *key)
{
	int r = strncmp(key, "env ", 4) == 0 ? 0 : 1;

	if (strcasestr(key, "batch") || strcasestr(key, "micro"))
		return r;
	if (strcasestr(key, "seq") || strcasestr(key, "len") || strcasestr(key, "token"))
		return 2 + r;
	return 4 + r;
}

/* What v of the scale's points is: the sequence length of tokens, else the
 * one coordinate as its name says. */
static enum calib_coord coord_of(const struct scale *sc)
{
	if (sc->tokens)
		return CALIB_COORD_SEQ;
	if (!sc->key[0])
		return CALIB_COORD_OTHER;
	switch (name_rank(sc->key) / 2) {
	case 0:
		return CALIB_COORD_BATCH;
	case 1:
		return CALIB_COORD_SEQ;
	default:
		return CALIB_COORD_OTHER;
	}
}

/* Picks the scale of target among the points cand[] marks: the declared
 * training dimensions when the signature has them, else the one coordinate
 * that varies and leaves the most distinct sizes to learn from. */
static void pick_scale(const json_t *target, const struct fpoint *pts, const bool *cand, size_t n,
		       struct scale *out)
{
	bool *use = xl_calloc(n + 1, sizeof(*use));
	const char *k;
	json_t *tv;
	size_t best_n = 0;
	int best_rank = 99;

	memset(out, 0, sizeof(*out));
	if (json_object_get(target, "micro_batch")) {
		bool seq_varies = false;
		double ts, s;

		if (num_of(target, "seq", &ts))
			for (size_t i = 0; i < n; i++)
				if (cand[i] && num_of(pts[i].coords, "seq", &s) && s != ts)
					seq_varies = true;
		if (seq_varies) {
			out->tokens = true;
			snprintf(out->name, sizeof(out->name), "tokens (micro_batch x seq)");
		} else {
			snprintf(out->key, sizeof(out->key), "micro_batch");
			snprintf(out->name, sizeof(out->name), "micro_batch");
		}
		free(use);
		return;
	}
	json_object_foreach((json_t *)target, k, tv) {
		struct scale sc;
		bool varies = false;
		size_t nd;
		int rank;

		for (size_t i = 0; i < n && !varies; i++)
			if (cand[i] && !json_equal(json_object_get(pts[i].coords, k), tv))
				varies = true;
		if (!varies || !json_is_number(tv) || strlen(k) >= sizeof(sc.key))
			continue;
		memset(&sc, 0, sizeof(sc));
		snprintf(sc.key, sizeof(sc.key), "%s", k);
		snprintf(sc.name, sizeof(sc.name), "%s", k);
		nd = usable(&sc, target, pts, cand, n, use);
		rank = name_rank(k);
		if (nd > best_n || (nd == best_n && nd && rank < best_rank)) {
			best_n = nd;
			best_rank = rank;
			*out = sc;
		}
	}
	free(use);
}

/* ---- numbers ------------------------------------------------------------------------ */

static int64_t to_i64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 9.2e18)
		return INT64_MAX;
	return (int64_t)llround(v);
}

/* ---- the analytic model and its correction -------------------------------------------- */

static enum calib_kind analytic_kind(const json_t *parts)
{
	return calib_parts_on_host(parts) ? CALIB_KIND_HOST_PEAK_RSS : CALIB_KIND_DEVICE_PEAK;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Median of observed/analytic over the fitting launches pts[use], for kind. */
static void correction(const struct fpoint *pts, const bool *use, size_t n, enum calib_kind kind,
		       struct calib_prediction *p)
{
	double *r = xl_calloc(n + 1, sizeof(*r));
	unsigned k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!use[i] || pts[i].fig[kind] == CALIB_UNSET || !(pts[i].analytic > 0))
			continue;
		r[k++] = (double)pts[i].fig[kind] / pts[i].analytic;
	}
	if (k) {
		qsort(r, k, sizeof(*r), cmp_double);
		p->correction = k % 2 ? r[k / 2] : (r[k / 2 - 1] + r[k / 2]) / 2;
		p->samples = k;
		p->calibrated = true;
		p->predicted_bytes = (uint64_t)to_i64((double)p->analytic_bytes * p->correction);
	}
	free(r);
}

static void note_add(char *note, size_t size, const char *s)
{
	size_t n = strlen(note);

	snprintf(note + n, size - n, "%s%s", n ? "; " : "", s);
}

/* ---- one estimate ------------------------------------------------------------------- */

struct ctx {
	json_t *parts;             /* normalized */
	char signature[65], stack[65], family[65];
	json_t *coords;
	struct family fam;
	unsigned other_stacks;     /* successful launches of the family on other stacks */
	bool have_family;
	struct calib_family_cache *fc;   /* the store's, where the family is kept */
};

static const int64_t *own_figure(const struct ctx *c, enum calib_kind k, const char **attempt)
{
	/* newest first */
	for (size_t i = 0; i < c->fam.n; i++)
		if (strcmp(c->fam.v[i].signature, c->signature) == 0 &&
		    c->fam.v[i].fig[k] != CALIB_UNSET) {
			if (attempt)
				*attempt = c->fam.v[i].attempt;
			return &c->fam.v[i].fig[k];
		}
	return NULL;
}

static const struct calib_limit *limit_of(const struct calib_target *t, enum calib_kind k)
{
	const struct calib_limit *best = NULL;

	for (size_t i = 0; i < t->nlimits; i++)
		if (t->limits[i].kind == k && (!best || t->limits[i].bytes < best->bytes))
			best = &t->limits[i];
	return best;
}

static void fmt_b(double v, char *buf, size_t n)
{
	xl_fmt_bytes((uint64_t)to_i64(fabs(v)), buf, n);
}

const char *calib_fit_str(const struct calib_estimate *e, char *buf, size_t n)
{
	if (!e->points || e->fit.chosen >= CALIB_SHAPE_COUNT) {
		snprintf(buf, n, "%s", "");
		return buf;
	}
	return calib_curve_str(&e->fit.trial[e->fit.chosen].curve, e->scale_name, e->tokens, buf, n);
}

double calib_fit_at(const struct calib_estimate *e, double x, double *band)
{
	double u = e->fit.u, pred = NAN, b;

	if (!e->points || e->fit.chosen >= CALIB_SHAPE_COUNT || !(u > 0)) {
		if (band)
			*band = NAN;
		return NAN;
	}
	b = calib_choice_band_at(&e->fit, u, x / u, &pred);
	if (band)
		*band = b;
	return pred;
}

/* One kind's estimate in the making: the family's launches a curve can
 * use (use[], c->fam.n of them), the m observations they give (obs), the
 * launch to come on the scale (xt, and as a point ut, vt), and the
 * compiler's figures of the family on the same scale (cobs, mc). */
struct kind_est {
	const struct ctx *c;
	enum calib_kind k;
	const struct calib_limit *lim;   /* the tightest limit of kind k, or NULL */
	struct scale sc;
	bool *use;
	struct calib_obs *obs, *cobs;
	size_t m, mc;
	double xt, ut, vt;
	bool at_point;                   /* ut and vt are known */
};

/* e as nothing known yet of kind k, under lim. */
static void estimate_begin(struct calib_estimate *e, enum calib_kind k,
			   const struct calib_limit *lim)
{
	e->kind = k;
	e->basis = CALIB_BASIS_NONE;
	e->predicted_bytes = e->error_bytes = CALIB_UNSET;
	e->limit_bytes = lim ? lim->bytes : CALIB_UNSET;
	snprintf(e->limit_source, sizeof(e->limit_source), "%s", lim ? lim->source : "");
	e->feasible = -1;
	e->fit.chosen = e->compiler.chosen = CALIB_SHAPE_COUNT;
	e->xla_exponent = NAN;
}

/* XLA's buffers of the family's launches on ke's scale: those that fitted
 * and those that ran out of memory after compiling (the compiler's figure
 * does not depend on how the run ended). */
static void gather_compiler(const struct ctx *c, struct kind_est *ke)
{
	size_t n = c->fam.n;
	bool *cand = xl_calloc(n + 1, sizeof(bool)), *use = xl_calloc(n + 1, sizeof(bool));

	ke->cobs = xl_calloc(n + 1, sizeof(*ke->cobs));
	for (size_t i = 0; i < n; i++)
		cand[i] = (fits(c->fam.v[i].outcome) || c->fam.v[i].outcome == XL_OUT_OOM) &&
			  c->fam.v[i].fig[CALIB_KIND_XLA_BUFFERS] != CALIB_UNSET;
	if (ke->sc.name[0])
		usable(&ke->sc, c->coords, c->fam.v, cand, n, use);
	for (size_t i = 0; i < n; i++) {
		struct calib_obs *o = &ke->cobs[ke->mc];

		if (use[i] && uv_of(&ke->sc, c->fam.v[i].coords, &o->u, &o->v)) {
			o->y = (double)c->fam.v[i].fig[CALIB_KIND_XLA_BUFFERS];
			o->count = 1;
			ke->mc++;
		}
	}
	free(cand);
	free(use);
}

/* The scale of c's launch among the family's launches that fitted and have
 * a figure of kind k, and the points a curve of kind k can use (ke's to
 * release with kind_est_release()). */
static void gather_points(const struct ctx *c, enum calib_kind k, struct kind_est *ke)
{
	size_t n = c->fam.n;
	bool *cand = xl_calloc(n + 1, sizeof(bool));

	memset(ke, 0, sizeof(*ke));
	ke->c = c;
	ke->k = k;
	ke->use = xl_calloc(n + 1, sizeof(bool));
	ke->obs = xl_calloc(n + 1, sizeof(*ke->obs));
	for (size_t i = 0; i < n; i++)
		cand[i] = fits(c->fam.v[i].outcome) && c->fam.v[i].fig[k] != CALIB_UNSET;
	pick_scale(c->coords, c->fam.v, cand, n, &ke->sc);
	usable(&ke->sc, c->coords, c->fam.v, cand, n, ke->use);
	scale_of(&ke->sc, c->coords, &ke->xt);
	ke->at_point = uv_of(&ke->sc, c->coords, &ke->ut, &ke->vt);
	for (size_t i = 0; i < n; i++) {
		struct calib_obs *o = &ke->obs[ke->m];

		if (!ke->use[i] || !uv_of(&ke->sc, c->fam.v[i].coords, &o->u, &o->v))
			continue;
		o->y = (double)c->fam.v[i].fig[k];
		o->count = 1;
		ke->m++;
	}
	free(cand);
	gather_compiler(c, ke);
}

static void kind_est_release(struct kind_est *ke)
{
	free(ke->use);
	free(ke->obs);
	free(ke->cobs);
}

/* The compiler's figures of the family: the exponent they grow with, and
 * what this launch's program will need, before it is ever compiled. */
static void compiler_growth(const struct kind_est *ke, struct calib_estimate *e)
{
	bool lower;
	double p;

	if (ke->mc < 2 || !ke->at_point)
		return;
	if (calib_growth_exponent(ke->cobs, ke->mc, &p, &lower)) {
		e->xla_exponent = p;
		e->xla_exponent_lower = lower;
	}
	if (fit_memoized(ke->c->fc, ke->cobs, ke->mc, NULL, 0,
			 ~(1u << CALIB_SHAPE_XLA_POWER) & ((1u << CALIB_SHAPE_COUNT) - 1),
			 coord_of(&ke->sc), &e->compiler))
		calib_choice_for(&e->compiler, ke->ut, ke->vt);
}

/* the compiler's figure for this very program, through a line learned
 * between it and kind k on the family */
static void from_compiler(const struct kind_est *ke, struct calib_estimate *e)
{
	const struct ctx *c = ke->c;
	enum calib_kind k = ke->k;
	size_t n = c->fam.n, mb = 0;
	const char *own_at = NULL;
	const int64_t *own_buf = own_figure(c, CALIB_KIND_XLA_BUFFERS, &own_at);
	struct calib_obs *bo;
	struct calib_choice g;
	char b1[32];

	if (!own_buf || k == CALIB_KIND_XLA_BUFFERS)
		return;
	bo = xl_calloc(n + 1, sizeof(*bo));
	for (size_t i = 0; i < n; i++)
		if (ke->use[i] && c->fam.v[i].fig[CALIB_KIND_XLA_BUFFERS] != CALIB_UNSET) {
			bo[mb].u = 1;
			bo[mb].v = (double)c->fam.v[i].fig[CALIB_KIND_XLA_BUFFERS];
			bo[mb].count = 1;
			bo[mb++].y = (double)c->fam.v[i].fig[k];
		}
	if (calib_choose_curve(bo, mb, 1, (double)*own_buf, NULL, 0, 1u << CALIB_SHAPE_AFFINE, &g) &&
	    g.sizes >= 2) {
		e->known = true;
		e->basis = CALIB_BASIS_COMPILER;
		e->predicted_bytes = to_i64(g.predicted);
		e->error_bytes = to_i64(g.band);
		fmt_b((double)*own_buf, b1, sizeof(b1));
		snprintf(e->summary, sizeof(e->summary),
			 "compiler: XLA's buffers for this program %s (run %s), through a line"
			 " learned from %u launches", b1, own_at, g.points);
	} else if (k == CALIB_KIND_DEVICE_PEAK && ke->lim && *own_buf > ke->lim->bytes) {
		/* every buffer lives on the device: a floor, not a prediction */
		e->known = true;
		e->basis = CALIB_BASIS_COMPILER;
		e->predicted_bytes = *own_buf;
		e->error_bytes = 0;
		fmt_b((double)*own_buf, b1, sizeof(b1));
		snprintf(e->summary, sizeof(e->summary),
			 "compiler: XLA's buffers for this program alone are %s (run %s)", b1,
			 own_at);
	}
	free(bo);
}

/* Whether kind k holds XLA's buffers: host memory holds them on the CPU,
 * the device's peak on an accelerator. */
static bool holds_buffers(enum calib_kind k)
{
	return k == CALIB_KIND_HOST_PEAK_RSS || k == CALIB_KIND_HOST_PEAK_VM ||
	       k == CALIB_KIND_DEVICE_PEAK;
}

/* Where XLA's buffers of the family are known at the largest size seen and
 * predicted at this one (e->compiler), their growth is a floor on the
 * growth of a kind that holds them: the figure at the largest size seen
 * plus that growth.  A prediction below it is raised to it, said in how. */
static void xla_floor(const struct kind_est *ke, struct calib_estimate *e, char *how, size_t n)
{
	const struct calib_choice *f = &e->fit;
	double x_hi = f->x_hi, xla_hi = NAN, floor;
	char b1[32], b2[32];

	if (!holds_buffers(ke->k) || e->compiler.chosen >= CALIB_SHAPE_COUNT ||
	    !(ke->xt > x_hi) || !(e->compiler.predicted > 0))
		return;
	for (size_t i = 0; i < ke->mc; i++)
		if (ke->cobs[i].u * ke->cobs[i].v == x_hi)
			xla_hi = ke->cobs[i].y;
	if (!(xla_hi > 0) || !(e->compiler.predicted > xla_hi))
		return;
	floor = f->y_hi + (e->compiler.predicted - xla_hi);
	if (!(floor > (double)e->predicted_bytes))
		return;
	e->predicted_bytes = to_i64(floor);
	fmt_b(f->y_hi, b1, sizeof(b1));
	fmt_b(e->compiler.predicted - xla_hi, b2, sizeof(b2));
	snprintf(how, n, "; raised to %s at the largest size seen + %s, the growth of XLA's"
		 " buffers to here (host memory grows no slower than the buffers it holds)", b1,
		 b2);
}

/* a curve of kind k against the scale, learned from the family's sizes and
 * chosen by its out-of-sample error */
static void from_curve(const struct kind_est *ke, struct calib_estimate *e)
{
	char b3[32], line[200], floor_how[256] = "";

	if (!ke->at_point || ke->m < 2)
		return;
	if (!fit_memoized(ke->c->fc, ke->obs, ke->m, ke->cobs, ke->mc, 0, coord_of(&ke->sc), &e->fit) ||
	    e->fit.sizes < 2 || !calib_choice_for(&e->fit, ke->ut, ke->vt))
		return;
	e->known = true;
	e->basis = CALIB_BASIS_LEARNED;
	e->predicted_bytes = to_i64(e->fit.predicted);
	e->error_bytes = to_i64(e->fit.band);
	e->points = e->fit.points;
	e->scale = ke->xt;
	e->tokens = ke->sc.tokens;
	snprintf(e->scale_name, sizeof(e->scale_name), "%s", ke->sc.name);
	xla_floor(ke, e, floor_how, sizeof(floor_how));
	fmt_b((double)e->error_bytes, b3, sizeof(b3));
	snprintf(e->summary, sizeof(e->summary), "learned from %u launch%s: %s %s; here %s%s, +/- %s (%s)",
		 e->points, e->points == 1 ? "" : "es", calib_shape_name(e->fit.chosen),
		 calib_fit_str(e, line, sizeof(line)), e->fit.how, floor_how, b3,
		 calib_kind_name(ke->k));
}

/* the analytic model, corrected by what the family used where it can be,
 * when it models kind k */
static void from_analytic(const struct kind_est *ke, struct calib_estimate *e)
{
	struct calib_prediction *p = &e->analytic;

	if (ke->k != e->analytic.kind || !e->analytic.known)
		return;
	correction(ke->c->fam.v, ke->use, ke->c->fam.n, ke->k, p);
	e->known = true;
	e->basis = CALIB_BASIS_ANALYTIC;
	e->predicted_bytes = (int64_t)p->predicted_bytes;
	if (p->calibrated)
		note_add(p->note, sizeof(p->note), "calibrated on this family and stack");
	else if (ke->c->other_stacks)
		note_add(p->note, sizeof(p->note),
			 "stack changed: uncalibrated (launches on other stacks not used)");
	else
		note_add(p->note, sizeof(p->note), "family uncalibrated");
	/* the model is a prior: a quarter either way until it is learned */
	e->error_bytes = to_i64(0.25 * (double)e->predicted_bytes);
	snprintf(e->summary, sizeof(e->summary), "analytic model x %.3f (%s)", p->correction,
		 p->note);
}

/* launched at this one size only: what it used there */
static void from_this_size(const struct kind_est *ke, struct calib_estimate *e)
{
	size_t m = ke->m;

	if (m < 1)
		return;
	for (size_t i = 0; i < m; i++)
		if (ke->obs[i].u * ke->obs[i].v != ke->xt)
			return;
	e->known = true;
	e->basis = CALIB_BASIS_LEARNED;
	e->predicted_bytes = (int64_t)ke->obs[0].y;
	e->error_bytes = to_i64(fmax(0.05 * ke->obs[0].y, 16.0 * 1048576));
	snprintf(e->summary, sizeof(e->summary),
		 "learned from %zu launch%s at this size (%s)", m, m == 1 ? "" : "es",
		 calib_kind_name(ke->k));
}

/* The summary of an estimate that could not be made: why not. */
static void say_unknown(const struct kind_est *ke, struct calib_estimate *e)
{
	unsigned other = ke->c->other_stacks;

	if (ke->m == 1)
		snprintf(e->summary, sizeof(e->summary),
			 "one launch of the family at another size: a curve needs two");
	else if (other)
		snprintf(e->summary, sizeof(e->summary),
			 "stack changed: nothing learned on this stack yet (%u launch%s on"
			 " other stacks not used)", other, other == 1 ? "" : "es");
	else
		snprintf(e->summary, sizeof(e->summary), "nothing learned for this family yet%s%s",
			 e->analytic.note[0] ? "; " : "", e->analytic.note);
}

/* " (quadratic curve)" of a learned estimate, else "". */
static const char *curve_tag(const struct calib_estimate *e, char *buf, size_t n)
{
	if (e->basis == CALIB_BASIS_LEARNED && e->points && e->fit.chosen < CALIB_SHAPE_COUNT)
		snprintf(buf, n, " (%s curve)", calib_shape_name(e->fit.chosen));
	else
		snprintf(buf, n, "%s", "");
	return buf;
}

/* Whether the estimate e of kind k fits under lim (e->feasible), and why:
 * fits when the top of its band is within the limit, does not when the
 * bottom is above it, and is near the limit in between. */
static void judge_feasible(struct calib_estimate *e, enum calib_kind k,
			   const struct calib_limit *lim)
{
	char b1[32], b2[32], b3[32], tag[48];

	if (e->known) {
		fmt_b((double)e->predicted_bytes, b1, sizeof(b1));
		fmt_b((double)e->error_bytes, b2, sizeof(b2));
		curve_tag(e, tag, sizeof(tag));
	}
	if (e->known && lim) {
		fmt_b((double)lim->bytes, b3, sizeof(b3));
		if (e->predicted_bytes + e->error_bytes <= lim->bytes) {
			e->feasible = 1;
			snprintf(e->reason, sizeof(e->reason), "predicted %s +/- %s of %s%s within %s %s",
				 b1, b2, calib_kind_name(k), tag, lim->source, b3);
		} else if (e->predicted_bytes - e->error_bytes > lim->bytes) {
			e->feasible = 0;
			snprintf(e->reason, sizeof(e->reason), "predicted %s +/- %s of %s%s above %s %s",
				 b1, b2, calib_kind_name(k), tag, lim->source, b3);
		} else {
			e->near_limit = true;
			snprintf(e->reason, sizeof(e->reason),
				 "predicted %s +/- %s of %s%s: the band holds %s %s, too close to say",
				 b1, b2, calib_kind_name(k), tag, lim->source, b3);
		}
	} else if (e->known) {
		snprintf(e->reason, sizeof(e->reason), "predicted %s +/- %s of %s%s; no limit of that"
			 " kind known", b1, b2, calib_kind_name(k), tag);
	} else {
		snprintf(e->reason, sizeof(e->reason), "no prediction (%s)", e->summary);
	}
}

/* Estimates kind k of c's launch into e: from the compiler's figure, else a
 * curve learned on the family, else the analytic model, else what the one
 * size launched used; then whether it fits under the limit. */
static void estimate_kind(const struct ctx *c, const struct calib_target *t, enum calib_kind k,
			  struct calib_estimate *e)
{
	const struct calib_limit *lim = limit_of(t, k);
	struct kind_est ke;

	estimate_begin(e, k, lim);
	gather_points(c, k, &ke);
	ke.lim = lim;
	compiler_growth(&ke, e);
	from_compiler(&ke, e);
	if (!e->known)
		from_curve(&ke, e);
	if (!e->known)
		from_analytic(&ke, e);
	if (!e->known)
		from_this_size(&ke, e);
	if (!e->known)
		say_unknown(&ke, e);
	judge_feasible(e, k, lim);
	kind_est_release(&ke);
}

/* An out-of-memory attempt of the family at a scale at or below this one,
 * under the same limits, the other coordinates alike: more cannot fit
 * (memory does not shrink as a job grows).  Returns the attempt or NULL. */
static const struct fpoint *oom_below(const struct ctx *c, double *x_oom, char *scale_name,
				      size_t name_size)
{
	size_t n = c->fam.n;
	bool *cand = xl_calloc(n + 1, sizeof(bool)), *use = xl_calloc(n + 1, sizeof(bool));
	const json_t *tl = json_object_get(json_object_get(c->parts, "toggles"), "limits");
	const struct fpoint *best = NULL;
	struct scale sc;
	double xt;

	/* the scale as the family's launches of any outcome show it */
	for (size_t i = 0; i < n; i++) {
		const struct fpoint *p = &c->fam.v[i];
		const json_t *pl = p->parts ? json_object_get(json_object_get(p->parts, "toggles"), "limits")
					    : NULL;

		cand[i] = p->parts && (tl ? json_equal(tl, pl) : !pl) &&
			  strcmp(p->signature, c->signature) != 0;
	}
	pick_scale(c->coords, c->fam.v, cand, n, &sc);
	if (sc.name[0] && scale_of(&sc, c->coords, &xt)) {
		usable(&sc, c->coords, c->fam.v, cand, n, use);
		for (size_t i = 0; i < n; i++) {
			double x;

			if (!use[i] || c->fam.v[i].outcome != XL_OUT_OOM ||
			    !scale_of(&sc, c->fam.v[i].coords, &x) || x > xt)
				continue;
			if (!best || x < *x_oom) {
				best = &c->fam.v[i];
				*x_oom = x;
			}
		}
		snprintf(scale_name, name_size, "%s", sc.name);
	}
	free(cand);
	free(use);
	return best;
}

static bool ctx_init(struct calib_store *st, const json_t *parts, struct ctx *c, int *rc)
{
	struct calib_sig sig;

	memset(c, 0, sizeof(*c));
	*rc = 0;
	if (calib_signature(parts, &sig) != 0)
		return false;
	c->parts = json_incref(sig.parts);
	snprintf(c->signature, sizeof(c->signature), "%s", sig.hash);
	snprintf(c->stack, sizeof(c->stack), "%s", sig.stack_hash);
	calib_sig_release(&sig);
	if (calib_family(c->parts, c->family, &c->coords) != 0)
		return false;
	if (st && st->fcache && strcmp(st->fcache->family, c->family) == 0 &&
	    strcmp(st->fcache->stack, c->stack) == 0) {
		c->fam = st->fcache->fam;
		c->other_stacks = st->fcache->other_stacks;
		c->have_family = true;
		c->fc = st->fcache;
	} else if (st) {
		*rc = st->ops->family_points(st, c->family, c->stack, collect, &c->fam);
		if (*rc == 0)
			*rc = st->ops->family_other_stacks(st, c->family, c->stack, &c->other_stacks);
		c->have_family = *rc == 0;
		if (c->have_family) {
			/* kept for the next candidate: the store's, released there */
			calib_family_cache_drop(st);
			st->fcache = xl_calloc(1, sizeof(*st->fcache));
			memcpy(st->fcache->family, c->family, sizeof(c->family));
			memcpy(st->fcache->stack, c->stack, sizeof(c->stack));
			st->fcache->fam = c->fam;
			st->fcache->other_stacks = c->other_stacks;
			c->fc = st->fcache;
		} else {
			family_release(&c->fam);
		}
	}
	return true;
}

static void ctx_release(struct ctx *c)
{
	/* the family's points belong to the store's cache */
	json_decref(c->parts);
	json_decref(c->coords);
	memset(&c->fam, 0, sizeof(c->fam));
}

int calib_predict(struct calib_store *st, const json_t *parts, struct calib_prediction *out)
{
	struct ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	out->correction = 1;
	if (!ctx_init(st, parts, &c, &rc)) {
		note_add(out->note, sizeof(out->note), "no signature parts");
		ctx_release(&c);
		return 0;
	}
	calib_predict_analytic(c.parts, out);
	out->kind = analytic_kind(c.parts);
	if (out->known) {
		size_t n = c.fam.n;
		bool *use = xl_calloc(n + 1, sizeof(bool)), *cand = xl_calloc(n + 1, sizeof(bool));
		struct scale sc;

		for (size_t i = 0; i < n; i++)
			cand[i] = fits(c.fam.v[i].outcome) && c.fam.v[i].fig[out->kind] != CALIB_UNSET;
		pick_scale(c.coords, c.fam.v, cand, n, &sc);
		usable(&sc, c.coords, c.fam.v, cand, n, use);
		correction(c.fam.v, use, n, out->kind, out);
		if (rc)
			note_add(out->note, sizeof(out->note), "store unreadable: uncalibrated");
		else if (out->calibrated)
			note_add(out->note, sizeof(out->note), "calibrated on this family and stack");
		else if (c.other_stacks)
			note_add(out->note, sizeof(out->note),
				 "stack changed: uncalibrated (launches on other stacks not used)");
		else if (st)
			note_add(out->note, sizeof(out->note), "family uncalibrated");
		else
			note_add(out->note, sizeof(out->note), "no store: uncalibrated");
		free(use);
		free(cand);
	}
	ctx_release(&c);
	return rc ? XL_EX_CANTCREAT : 0;
}

/* Where the family has no figures of any of the nk kinds the limits (or
 * the hardware) name, the peak kind it has the most successful launches
 * with (XLA's buffers and a failed request are not peaks): true, in *k. */
static bool kind_of_data(const struct ctx *c, const enum calib_kind *kinds, size_t nk,
			 enum calib_kind *kind)
{
	unsigned count[CALIB_KIND_COUNT] = { 0 };
	int best = -1;

	for (size_t i = 0; i < c->fam.n; i++)
		for (int k = 0; k < CALIB_KIND_COUNT; k++)
			if (fits(c->fam.v[i].outcome) && c->fam.v[i].fig[k] != CALIB_UNSET)
				count[k]++;
	for (size_t i = 0; i < nk; i++)
		if (count[kinds[i]])
			return false;
	for (int k = 0; k < CALIB_KIND_COUNT; k++)
		if ((k == CALIB_KIND_DEVICE_PEAK || k == CALIB_KIND_HOST_PEAK_RSS ||
		     k == CALIB_KIND_HOST_PEAK_VM) &&
		    count[k] && (best < 0 || count[k] > count[best]))
			best = k;
	if (best < 0)
		return false;
	*kind = (enum calib_kind)best;
	return true;
}

/* out->differs: where the target's signature differs from the family's
 * latest launch on this stack (its coordinates; the limits), when it has
 * none of its own: "differs from the family's latest launch (run ID) in
 * --steps 20 (was 10), limits". */
static void say_differs(const struct ctx *c, char *out, size_t n)
{
	const struct fpoint *p;
	const json_t *tl, *pl;
	const char *k;
	json_t *v;
	size_t l = 0;
	bool first = true;

	out[0] = '\0';
	for (size_t i = 0; i < c->fam.n; i++)
		if (strcmp(c->fam.v[i].signature, c->signature) == 0)
			return;
	if (!c->fam.n) {
		snprintf(out, n, "%s", c->other_stacks ? "its family has launches on other stacks"
							  " (code or bundle) only"
						       : "no launch of its family (the job at other sizes)");
		return;
	}
	/* the newest attempt; of one second (times are whole seconds), the
	 * greater id: a run id begins with its start in microseconds */
	p = &c->fam.v[0];
	for (size_t i = 1; i < c->fam.n; i++) {
		const struct fpoint *q = &c->fam.v[i];

		if (q->time > p->time || (q->time == p->time && strcmp(q->attempt, p->attempt) > 0))
			p = q;
	}
	l = (size_t)snprintf(out, n, "differs from the family's latest launch (run %s) in ", p->attempt);
	json_object_foreach(c->coords, k, v) {
		const json_t *pv = json_object_get(p->coords, k);
		char *a, *b;

		if (pv && json_equal(v, pv))
			continue;
		a = json_dumps(v, JSON_ENCODE_ANY);
		b = pv ? json_dumps(pv, JSON_ENCODE_ANY) : NULL;
		l += (size_t)snprintf(out + l, l < n ? n - l : 0, "%s%s %s (was %s)",
				      first ? "" : ", ", k, a ? a : "?", b ? b : "none");
		first = false;
		free(a);
		free(b);
		if (l >= n)
			break;
	}
	tl = json_object_get(json_object_get(c->parts, "toggles"), "limits");
	pl = p->parts ? json_object_get(json_object_get(p->parts, "toggles"), "limits") : NULL;
	if (l < n && p->parts && !(tl == pl || (tl && pl && json_equal(tl, pl)))) {
		l += (size_t)snprintf(out + l, n - l, "%slimits", first ? "" : ", ");
		first = false;
	}
	if (l < n && first)
		snprintf(out + l, n - l, "neither its coordinates nor its limits");
}

int calib_estimate(struct calib_store *st, const struct calib_target *t, struct calib_estimate *out)
{
	bool kind_from_data = false;
	enum calib_kind named;
	enum calib_kind kinds[CALIB_MAX_LIMITS + 2];
	struct calib_estimate best;
	size_t nk = 0;
	struct ctx c;
	int rc;

	memset(out, 0, sizeof(*out));
	out->predicted_bytes = out->error_bytes = out->limit_bytes = CALIB_UNSET;
	out->feasible = -1;
	out->analytic.correction = 1;
	if (!t->parts || !ctx_init(st, t->parts, &c, &rc)) {
		snprintf(out->summary, sizeof(out->summary), "no signature parts");
		snprintf(out->reason, sizeof(out->reason), "no prediction (no signature parts)");
		if (t->parts)
			ctx_release(&c);
		return 0;
	}
	/* the kinds the limits bound, else the kind the hardware is judged in */
	for (size_t i = 0; i < t->nlimits && nk < CALIB_MAX_LIMITS; i++) {
		size_t j;

		for (j = 0; j < nk && kinds[j] != t->limits[i].kind; j++)
			;
		if (j == nk)
			kinds[nk++] = t->limits[i].kind;
	}
	if (!nk)
		kinds[nk++] = analytic_kind(c.parts);
	named = kinds[0];
	kind_from_data = kind_of_data(&c, kinds, nk, &kinds[nk]);
	if (kind_from_data)
		nk++;
	{
		struct calib_estimate *es = xl_calloc(nk, sizeof(*es));
		ssize_t pick = -1;
		bool any_bad = false, all_ok = true, any_limit = false;

		for (size_t i = 0; i < nk; i++) {
			calib_predict_analytic(c.parts, &es[i].analytic);
			es[i].analytic.kind = analytic_kind(c.parts);
			estimate_kind(&c, t, kinds[i], &es[i]);
			any_bad |= es[i].feasible == 0;
			if (es[i].limit_bytes != CALIB_UNSET) {
				any_limit = true;
				all_ok &= es[i].feasible == 1;
			}
		}
		/* the binding kind: the first that does not fit, else the one with
		 * the least room, else the first known */
		for (size_t i = 0; i < nk; i++) {
			if (any_bad) {
				if (es[i].feasible == 0) {
					pick = (ssize_t)i;
					break;
				}
				continue;
			}
			if (!es[i].known)
				continue;
			if (pick < 0) {
				pick = (ssize_t)i;
				continue;
			}
			if (es[i].limit_bytes != CALIB_UNSET && es[i].limit_bytes > 0 &&
			    (es[pick].limit_bytes == CALIB_UNSET ||
			     (double)(es[i].predicted_bytes + es[i].error_bytes) / (double)es[i].limit_bytes >
			     (double)(es[pick].predicted_bytes + es[pick].error_bytes) /
			     (double)es[pick].limit_bytes))
				pick = (ssize_t)i;
		}
		best = es[pick < 0 ? 0 : pick];
		best.feasible = any_bad ? 0 : any_limit && all_ok ? 1 : -1;
		best.near_limit = false;
		for (size_t i = 0; i < nk && best.feasible < 0; i++)
			best.near_limit |= es[i].near_limit;
		free(es);
	}
	*out = best;
	if (c.have_family)
		say_differs(&c, out->differs, sizeof(out->differs));
	if (kind_from_data && out->kind == kinds[nk - 1]) {
		char why[200];

		snprintf(why, sizeof(why), "%s, the kind the family has figures of (none of %s, the"
			 " kind %s names)", calib_kind_name(out->kind), calib_kind_name(named),
			 t->nlimits ? "the limit" : "the hardware");
		note_add(out->summary, sizeof(out->summary), why);
	}
	if (c.have_family) {
		double x_oom = 0;
		char name[64] = "";
		const struct fpoint *o = oom_below(&c, &x_oom, name, sizeof(name));

		if (o) {
			char when[32];

			out->feasible = 0;
			out->near_limit = false;
			snprintf(out->reason, sizeof(out->reason),
				 "oom at %s = %g under the same limits (run %s, %s): a larger size needs"
				 " more", name, x_oom, o->attempt, xl_iso_time(o->time, when, sizeof(when)));
		}
	}
	if (rc)
		note_add(out->reason, sizeof(out->reason), "store unreadable: nothing learned");
	ctx_release(&c);
	return rc ? XL_EX_CANTCREAT : 0;
}

static json_t *i64_or_null(int64_t v)
{
	return v == CALIB_UNSET ? json_null() : json_integer((json_int_t)v);
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* {shape, fit, judged, loo_error, predicted_bytes} of every shape fitted. */
static json_t *trials_json(const struct calib_choice *ch, const char *scale_name, bool tokens)
{
	json_t *arr = json_array();
	char fit[200];

	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		const struct calib_trial *t = &ch->trial[s];

		if (!t->fitted)
			continue;
		json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:o, s:o, s:b}",
			"shape", calib_shape_name((enum calib_shape)s),
			"fit", calib_curve_str(&t->curve, scale_name, tokens, fit, sizeof(fit)),
			"judged", t->judged, "loo_error", real_or_null(t->loo),
			"predicted_bytes", isfinite(t->predicted) ? json_integer(to_i64(t->predicted))
								  : json_null(),
			"contender", (ch->contenders >> s) & 1));
	}
	return arr;
}

/* The chosen curve: {shape, fit, why, exponent, a, b, c, loo_error, reach,
 * safe_side, sizes, tried: [...]}, or null. */
static json_t *choice_json(const struct calib_choice *ch, const char *scale_name, bool tokens)
{
	const struct calib_curve *c;
	char fit[200], band[200];

	if (ch->chosen >= CALIB_SHAPE_COUNT)
		return json_null();
	c = &ch->trial[ch->chosen].curve;
	return json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:o, s:f, s:b, s:I, s:I, s:o}",
			 "shape", calib_shape_name(ch->chosen),
			 "fit", calib_curve_str(c, scale_name, tokens, fit, sizeof(fit)),
			 "why", ch->why, "band", calib_band_str(ch, band, sizeof(band)),
			 "a", c->a, "b", c->b, "c", c->c, "exponent", c->p,
			 "loo_error", real_or_null(ch->loo), "reach", calib_choice_reach(ch, ch->u, ch->v),
			 "safe_side", ch->safe_side, "sizes", (json_int_t)ch->sizes,
			 "points", (json_int_t)ch->points,
			 "tried", trials_json(ch, scale_name, tokens));
}

/* XLA's buffers predicted for this launch: {predicted_bytes, error_bytes,
 * exponent, exponent_lower_bound, sizes, shape, fit}, or null. */
static json_t *compiler_json(const struct calib_estimate *e)
{
	const struct calib_choice *ch = &e->compiler;
	char fit[200];

	if (ch->chosen >= CALIB_SHAPE_COUNT && isnan(e->xla_exponent))
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:b, s:I, s:s?, s:s?}",
		"predicted_bytes", ch->chosen < CALIB_SHAPE_COUNT ? json_integer(to_i64(ch->predicted))
								  : json_null(),
		"error_bytes", ch->chosen < CALIB_SHAPE_COUNT ? json_integer(to_i64(ch->band)) : json_null(),
		"exponent", real_or_null(e->xla_exponent),
		"exponent_lower_bound", e->xla_exponent_lower, "sizes", (json_int_t)ch->sizes,
		"shape", ch->chosen < CALIB_SHAPE_COUNT ? calib_shape_name(ch->chosen) : NULL,
		"fit", ch->chosen < CALIB_SHAPE_COUNT
			? calib_curve_str(&ch->trial[ch->chosen].curve, e->scale_name[0] ? e->scale_name
							  : "scale", e->tokens, fit, sizeof(fit))
			: NULL);
}

json_t *calib_estimate_json(const struct calib_estimate *e)
{
	const struct calib_curve *c = e->points && e->fit.chosen < CALIB_SHAPE_COUNT
					      ? &e->fit.trial[e->fit.chosen].curve : NULL;
	char fit[200];
	json_t *o;

	o = json_pack("{s:o, s:s, s:s, s:o, s:o, s:s?, s:o, s:b, s:s, s:s, s:I, s:s?, s:o, s:o, s:o,"
		      " s:s?, s:o}",
		      "predicted_bytes", e->known ? i64_or_null(e->predicted_bytes) : json_null(),
		      "kind", calib_kind_name(e->kind),
		      "basis", calib_basis_name(e->known ? e->basis : CALIB_BASIS_NONE),
		      "error_bytes", e->known ? i64_or_null(e->error_bytes) : json_null(),
		      "limit_bytes", i64_or_null(e->limit_bytes),
		      "limit_source", e->limit_bytes != CALIB_UNSET ? e->limit_source : NULL,
		      "feasible", e->feasible < 0 ? json_null() : json_boolean(e->feasible),
		      "near_limit", e->near_limit,
		      "summary", e->summary,
		      "reason", e->reason,
		      "points", (json_int_t)e->points,
		      "scale_name", e->points ? e->scale_name : NULL,
		      "scale", e->points ? json_real(e->scale) : json_null(),
		      "intercept_bytes", c ? json_real(c->a) : json_null(),
		      "slope_bytes", c ? json_real(c->b) : json_null(),
		      "fit", c ? calib_fit_str(e, fit, sizeof(fit)) : NULL,
		      "analytic", calib_prediction_json(&e->analytic));
	json_object_set_new(o, "curve", c ? choice_json(&e->fit, e->scale_name, e->tokens) : json_null());
	json_object_set_new(o, "compiler", compiler_json(e));
	json_object_set_new(o, "differs", e->differs[0] ? json_string(e->differs) : json_null());
	return o;
}
