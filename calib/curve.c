/* curve.c - how one kind of memory grows with a family's scale: affine, a
 * power law, a quadratic, and a power law with the exponent XLA's buffers
 * show; each fitted by least squares on relative error and judged by
 * predicting every size from the others (leave one out), and the choice
 * between them for one launch, with the band its out-of-sample error
 * gives (see calib.h). */
#include "calib/calib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define P_MIN 0.5
#define P_MAX 3.0
#define P_STEP 0.1
/* shapes within TIE_FACTOR times the best one's error (or TIE_ABS more)
 * cannot be told apart from it */
#define TIE_FACTOR 1.25
#define TIE_ABS 0.01
/* XLA's buffers growing with at least this exponent vouch for a curve */
#define CURVED 1.2
/* how much a figure differs between launches of one size */
#define NOISE 0.01
/* the out-of-sample error assumed when none could be measured */
#define PRIOR 0.05
#define BAND_MIN (8.0 * 1048576)
/* at most this many sizes are left out in turn (spread over the sizes from
 * the least to the largest): the work stays bounded for a family of
 * hundreds of sizes */
#define MAX_FOLDS 16

static const char *const shape_names[CALIB_SHAPE_COUNT] = {
	[CALIB_SHAPE_AFFINE] = "affine",
	[CALIB_SHAPE_POWER] = "power",
	[CALIB_SHAPE_QUADRATIC] = "quadratic",
	[CALIB_SHAPE_XLA_POWER] = "xla-power",
	[CALIB_SHAPE_SQUARE] = "square",
};

const char *calib_shape_name(enum calib_shape s)
{
	return (unsigned)s < CALIB_SHAPE_COUNT ? shape_names[s] : "none";
}

unsigned calib_shape_params(enum calib_shape s)
{
	return s == CALIB_SHAPE_POWER || s == CALIB_SHAPE_QUADRATIC ? 3 : 2;
}

/* ---- one curve --------------------------------------------------------------------- */

/* The curve's formula at (u, v), without the line beyond x_hi. */
static double formula_at(const struct calib_curve *c, double u, double v)
{
	double y, x = u * v;

	switch (c->shape) {
	case CALIB_SHAPE_AFFINE:
		y = c->a + c->b * x;
		break;
	case CALIB_SHAPE_QUADRATIC:
		y = c->a + c->b * x + c->c * x * v;
		break;
	case CALIB_SHAPE_SQUARE:
		y = c->a + c->b * x * v;
		break;
	case CALIB_SHAPE_POWER:
	case CALIB_SHAPE_XLA_POWER:
		y = c->a + c->b * u * pow(v, c->p);
		break;
	default:
		return NAN;
	}
	return y;
}

double calib_curve_at(const struct calib_curve *c, double u, double v)
{
	double y = formula_at(c, u, v), x = u * v;

	if (!isnan(c->rise) && x > c->x_hi)
		y = fmax(y, c->y_hi + c->rise * (x - c->x_hi));
	return y;
}

/* A coefficient in bytes: "21.5 KiB", "262 B", "0.0123 B", "-1.2 MiB". */
static void coef_str(double v, char *buf, size_t n)
{
	double m = fabs(v);
	char b[32];

	if (m >= 1024 && m < 9.2e18) {
		xl_fmt_bytes((uint64_t)llround(m), b, sizeof(b));
		snprintf(buf, n, "%s%s", v < 0 ? "-" : "", b);
	} else {
		snprintf(buf, n, "%.3g B", v);
	}
}

/* " + 21.5 KiB x NAME" (or " - ...") at the end of buf. */
static void add_term(char *buf, size_t n, double coef, const char *name)
{
	size_t l = strlen(buf);
	char c[48];

	coef_str(fabs(coef), c, sizeof(c));
	snprintf(buf + l, n - l, " %s %s x %s", coef < 0 ? "-" : "+", c, name);
}

const char *calib_curve_str(const struct calib_curve *c, const char *scale_name, bool tokens,
			    char *buf, size_t n)
{
	const char *x = tokens ? "micro_batch x seq" : scale_name;
	char a[48], t[128];

	coef_str(c->a, a, sizeof(a));
	snprintf(buf, n, "%s", a);
	switch (c->shape) {
	case CALIB_SHAPE_AFFINE:
		add_term(buf, n, c->b, tokens ? scale_name : x);
		break;
	case CALIB_SHAPE_QUADRATIC:
		add_term(buf, n, c->b, x);
		snprintf(t, sizeof(t), "%s^2", x);
		add_term(buf, n, c->c, t);
		break;
	case CALIB_SHAPE_SQUARE:
		snprintf(t, sizeof(t), "%s^2", tokens ? "micro_batch x seq" : x);
		add_term(buf, n, c->b, t);
		break;
	case CALIB_SHAPE_POWER:
	case CALIB_SHAPE_XLA_POWER:
		if (tokens)
			snprintf(t, sizeof(t), "micro_batch x seq^%.2f", c->p);
		else
			snprintf(t, sizeof(t), "%s^%.2f", x, c->p);
		add_term(buf, n, c->b, t);
		break;
	default:
		snprintf(buf, n, "%s", "");
	}
	return buf;
}

/* ---- least squares ----------------------------------------------------------------------- */

/* The columns of shape s at (u, v), exponent p, into t; returns how many. */
static size_t columns(enum calib_shape s, double u, double v, double p, double t[3])
{
	t[0] = 1;
	switch (s) {
	case CALIB_SHAPE_QUADRATIC:
		t[1] = u * v;
		t[2] = u * v * v;
		return 3;
	case CALIB_SHAPE_SQUARE:
		t[1] = u * v * v;
		return 2;
	case CALIB_SHAPE_POWER:
	case CALIB_SHAPE_XLA_POWER:
		t[1] = u * pow(v, p);
		return 2;
	default:
		t[1] = u * v;
		return 2;
	}
}

/* Solves the k x k system m beta = r (destroyed) by elimination with
 * partial pivoting.  False when m is singular (relative to its diagonal). */
static bool solve(double m[3][3], double r[3], size_t k, double beta[3])
{
	double dmax = 0;

	for (size_t i = 0; i < k; i++)
		dmax = fmax(dmax, fabs(m[i][i]));
	for (size_t c = 0; c < k; c++) {
		size_t piv = c;

		for (size_t i = c + 1; i < k; i++)
			if (fabs(m[i][c]) > fabs(m[piv][c]))
				piv = i;
		if (!(fabs(m[piv][c]) > 1e-11 * dmax))
			return false;
		for (size_t j = 0; j < k; j++) {
			double tmp = m[c][j];

			m[c][j] = m[piv][j];
			m[piv][j] = tmp;
		}
		{
			double tmp = r[c];

			r[c] = r[piv];
			r[piv] = tmp;
		}
		for (size_t i = c + 1; i < k; i++) {
			double f = m[i][c] / m[c][c];

			for (size_t j = c; j < k; j++)
				m[i][j] -= f * m[c][j];
			r[i] -= f * r[c];
		}
	}
	for (size_t i = k; i-- > 0;) {
		double s = r[i];

		for (size_t j = i + 1; j < k; j++)
			s -= m[i][j] * beta[j];
		beta[i] = s / m[i][i];
	}
	return true;
}

/* Least squares of the figures o[i] (in[i] only) on the columns of shape s
 * with exponent p, each figure weighted by its launches over its square
 * (relative error), in one pass over the points: the normal equations are
 * gathered as they are and scaled by each column's largest value before
 * they are solved.  Fills a, b, c of *cv and the weighted sum of squared
 * relative residuals in *sse.  False when the columns are not independent
 * over these points. */
static bool lsq(const struct calib_obs *o, const bool *in, size_t n, enum calib_shape s, double p,
		struct calib_curve *cv, double *sse)
{
	double scale[3] = { 0, 0, 0 }, m[3][3] = { { 0 } }, r[3] = { 0 }, beta[3] = { 0 }, t[3];
	double yy = 0, fit = 0;
	size_t k = 2;

	for (size_t i = 0; i < n; i++) {
		double w;

		if (!in[i])
			continue;
		w = o[i].count / (o[i].y * o[i].y);
		k = columns(s, o[i].u, o[i].v, p, t);
		yy += w * o[i].y * o[i].y;
		for (size_t j = 0; j < k; j++) {
			scale[j] = fmax(scale[j], fabs(t[j]));
			r[j] += w * t[j] * o[i].y;
			for (size_t l = 0; l < k; l++)
				m[j][l] += w * t[j] * t[l];
		}
	}
	for (size_t j = 0; j < k; j++) {
		if (!(scale[j] > 0) || !isfinite(scale[j]) || !isfinite(r[j]))
			return false;
		r[j] /= scale[j];
		for (size_t l = 0; l < k; l++)
			m[j][l] /= scale[j] * scale[l];
	}
	{
		double mm[3][3], rr[3];

		memcpy(mm, m, sizeof(mm));
		memcpy(rr, r, sizeof(rr));
		if (!solve(mm, rr, k, beta))
			return false;
	}
	/* the residuals from the normal equations: yy - 2 b.r + b.M.b */
	for (size_t j = 0; j < k; j++) {
		fit += 2 * beta[j] * r[j];
		for (size_t l = 0; l < k; l++)
			fit -= beta[j] * beta[l] * m[j][l];
	}
	*sse = fmax(0, yy - fit);
	cv->shape = s;
	cv->p = s == CALIB_SHAPE_POWER || s == CALIB_SHAPE_XLA_POWER ? p : s == CALIB_SHAPE_SQUARE ? 2 : 1;
	cv->a = beta[0] / scale[0];
	cv->b = beta[1] / scale[1];
	cv->c = k > 2 ? beta[2] / scale[2] : 0;
	return true;
}

/* The power law with the exponent that fits best: a grid over [P_MIN,
 * P_MAX], then a golden-section search around the best of it. */
static bool fit_power(const struct calib_obs *o, const bool *in, size_t n, struct calib_curve *cv)
{
	double best = INFINITY, bp = NAN, sse, lo, hi, v[3];
	struct calib_curve t;
	const double g = (sqrt(5.0) - 1) / 2;
	size_t nv = 0;

	/* an exponent needs three values of v to be seen */
	for (size_t i = 0; i < n && nv < 3; i++) {
		size_t j;

		if (!in[i])
			continue;
		for (j = 0; j < nv && v[j] != o[i].v; j++)
			;
		if (j == nv)
			v[nv++] = o[i].v;
	}
	if (nv < 3)
		return false;
	for (double p = P_MIN; p <= P_MAX + 1e-9; p += P_STEP)
		if (lsq(o, in, n, CALIB_SHAPE_POWER, p, &t, &sse) && sse < best) {
			best = sse;
			bp = p;
		}
	if (isnan(bp))
		return false;
	lo = fmax(P_MIN, bp - P_STEP);
	hi = fmin(P_MAX, bp + P_STEP);
	for (int it = 0; it < 16; it++) {
		double p1 = hi - g * (hi - lo), p2 = lo + g * (hi - lo), s1 = INFINITY, s2 = INFINITY;

		if (!lsq(o, in, n, CALIB_SHAPE_POWER, p1, &t, &s1))
			s1 = INFINITY;
		if (!lsq(o, in, n, CALIB_SHAPE_POWER, p2, &t, &s2))
			s2 = INFINITY;
		if (s1 < s2)
			hi = p2;
		else
			lo = p1;
	}
	if (lsq(o, in, n, CALIB_SHAPE_POWER, (lo + hi) / 2, &t, &sse) && sse <= best) {
		*cv = t;
		return true;
	}
	return lsq(o, in, n, CALIB_SHAPE_POWER, bp, cv, &sse);
}

/* The line beyond the largest size of the points in[]: through the mean
 * figures of the two largest values of x = u v. */
static void secant(const struct calib_obs *o, const bool *in, size_t n, struct calib_curve *cv)
{
	double x1 = -INFINITY, x2 = -INFINITY, s1 = 0, s2 = 0, c1 = 0, c2 = 0;

	for (size_t i = 0; i < n; i++)
		if (in[i] && o[i].u * o[i].v > x1)
			x1 = o[i].u * o[i].v;
	for (size_t i = 0; i < n; i++)
		if (in[i] && o[i].u * o[i].v < x1 && o[i].u * o[i].v > x2)
			x2 = o[i].u * o[i].v;
	for (size_t i = 0; i < n; i++) {
		double x = o[i].u * o[i].v;

		if (!in[i])
			continue;
		if (x == x1) {
			s1 += o[i].y * o[i].count;
			c1 += o[i].count;
		} else if (x == x2) {
			s2 += o[i].y * o[i].count;
			c2 += o[i].count;
		}
	}
	cv->x_hi = x1;
	cv->y_hi = c1 ? s1 / c1 : NAN;
	cv->rise = c1 && c2 ? fmax(0, (s1 / c1 - s2 / c2) / (x1 - x2)) : NAN;
}

/* Fits shape s to the points in[] (p: xla-power's exponent). */
static bool fit_shape(const struct calib_obs *o, const bool *in, size_t n, enum calib_shape s,
		      double p, struct calib_curve *cv)
{
	double sse;
	bool ok;

	memset(cv, 0, sizeof(*cv));
	if (s == CALIB_SHAPE_POWER)
		ok = fit_power(o, in, n, cv);
	else if (s == CALIB_SHAPE_XLA_POWER)
		ok = !isnan(p) && lsq(o, in, n, s, p, cv, &sse);
	else
		ok = lsq(o, in, n, s, 1, cv, &sse);
	if (ok)
		secant(o, in, n, cv);
	return ok && isfinite(cv->a) && isfinite(cv->b) && isfinite(cv->c);
}

/* ---- sizes --------------------------------------------------------------------------- */

static bool same_size(const struct calib_obs *a, const struct calib_obs *b)
{
	return a->u == b->u && a->v == b->v;
}

static int by_x(const void *pa, const void *pb)
{
	const struct calib_obs *a = pa, *b = pb;
	double xa = a->u * a->v, xb = b->u * b->v;

	if (xa != xb)
		return xa < xb ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* The observations merged by size (mean figure, launches counted), the
 * least x = u v first; the caller frees.  Figures that are not positive are
 * left out. */
static struct calib_obs *by_size(const struct calib_obs *obs, size_t n, size_t *m, unsigned *points)
{
	struct calib_obs *s = xl_calloc(n + 1, sizeof(*s));

	*m = 0;
	*points = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = obs[i].count ? obs[i].count : 1;
		size_t j;

		if (!(obs[i].y > 0) || !isfinite(obs[i].u) || !isfinite(obs[i].v))
			continue;
		*points += c;
		for (j = 0; j < *m && !same_size(&s[j], &obs[i]); j++)
			;
		if (j == *m) {
			s[j] = obs[i];
			s[j].y = 0;
			s[j].count = 0;
			(*m)++;
		}
		s[j].y += obs[i].y * c;
		s[j].count += c;
	}
	for (size_t j = 0; j < *m; j++)
		s[j].y /= s[j].count;
	qsort(s, *m, sizeof(*s), by_x);
	return s;
}

/* The pooled standard deviation of the launches about their size's mean
 * (ch->sd, ch->df), and the mean and the sum of squares of x over the
 * launches (ch->xbar, ch->sxx): a line's prediction interval (launches
 * merged by count are left out). */
static void pooled(const struct calib_obs *obs, size_t n, struct calib_choice *ch)
{
	double ss = 0, sx = 0;
	unsigned sizes = 0;

	ch->nlaunch = 0;
	ch->sxx = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		unsigned c = 0;
		bool first = true;

		if (!(obs[i].y > 0) || obs[i].count > 1)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = !(obs[j].y > 0 && obs[j].count <= 1 && same_size(&obs[i], &obs[j]));
		if (!first)
			continue;
		for (size_t j = i; j < n; j++)
			if (obs[j].y > 0 && obs[j].count <= 1 && same_size(&obs[i], &obs[j])) {
				sum += obs[j].y;
				c++;
			}
		for (size_t j = i; j < n; j++)
			if (obs[j].y > 0 && obs[j].count <= 1 && same_size(&obs[i], &obs[j]))
				ss += (obs[j].y - sum / c) * (obs[j].y - sum / c);
		sizes++;
		ch->nlaunch += c;
		sx += obs[i].u * obs[i].v * c;
	}
	ch->df = ch->nlaunch - sizes;
	ch->sd = ch->df ? sqrt(ss / ch->df) : NAN;
	ch->xbar = ch->nlaunch ? sx / ch->nlaunch : NAN;
	for (size_t i = 0; i < n; i++)
		if (obs[i].y > 0 && obs[i].count <= 1)
			ch->sxx += (obs[i].u * obs[i].v - ch->xbar) * (obs[i].u * obs[i].v - ch->xbar);
}

/* Student's t, two-sided 95%, at df degrees of freedom. */
static double t95(unsigned df)
{
	static const double t[] = { NAN, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23 };

	if (df <= 10)
		return t[df];
	return df <= 20 ? 2.09 : df <= 30 ? 2.04 : 1.96;
}

/* The largest difference between launches at one size (0: no size was
 * launched twice), into ch->noise and ch->repeats. */
static void noise_of(const struct calib_obs *obs, size_t n, struct calib_choice *ch)
{
	ch->noise = 0;
	ch->repeats = false;
	for (size_t i = 0; i < n; i++) {
		double lo = obs[i].y, hi = obs[i].y;
		unsigned c = 0;

		if (!(obs[i].y > 0))
			continue;
		for (size_t j = 0; j < n; j++)
			if (obs[j].y > 0 && same_size(&obs[i], &obs[j])) {
				lo = fmin(lo, obs[j].y);
				hi = fmax(hi, obs[j].y);
				c += obs[j].count ? obs[j].count : 1;
			}
		if (c > 1 && hi > lo)
			ch->noise = fmax(ch->noise, hi - lo);
		ch->repeats |= c > 1;
	}
	pooled(obs, n, ch);
}

/* The k-th size left out of m (sorted): every one up to MAX_FOLDS, else
 * MAX_FOLDS of them spread from the least to the largest. */
static size_t fold(size_t k, size_t m)
{
	if (m <= MAX_FOLDS)
		return k;
	return (size_t)llround((double)k * (double)(m - 1) / (MAX_FOLDS - 1));
}

/* ---- judging and choosing --------------------------------------------------------------- */

/* XLA's figures of the family, from which xla-power takes its exponent. */
struct xla_figs {
	const struct calib_obs *o;
	size_t n;
};

/* The exponent xla-power takes from XLA's figures, those at the size of
 * skip left out (NULL: none): the one they grow with from three sizes on;
 * from two only a lower bound, so from CURVED up the square (memory that
 * grows faster than a line is, in these jobs, at most quadratic in a size)
 * or the bound when it is higher, below CURVED the bound but at least 1 (a
 * line).  NAN: none.  *lower: from two sizes. */
static double xla_exponent(const struct xla_figs *x, const struct calib_obs *skip, bool *lower,
			   double *shown)
{
	struct calib_obs *o;
	size_t m = 0;
	double p;
	bool lb = false;

	if (lower)
		*lower = false;
	if (shown)
		*shown = NAN;
	if (!x || !x->n)
		return NAN;
	o = xl_calloc(x->n, sizeof(*o));
	for (size_t i = 0; i < x->n; i++)
		if (!skip || x->o[i].u != skip->u || x->o[i].v != skip->v)
			o[m++] = x->o[i];
	if (!calib_growth_exponent(o, m, &p, &lb))
		p = NAN;
	if (shown)
		*shown = p;
	if (!isnan(p) && lb)
		p = p >= CURVED ? fmax(p, 2) : fmax(p, 1);
	free(o);
	if (lower)
		*lower = lb;
	return p;
}

/* Fits shape s to every size and judges it by leaving each out (for
 * xla-power, its exponent taken each time from XLA's figures without that
 * size: out of sample too). */
static void try_shape(const struct calib_obs *o, size_t m, enum calib_shape s,
		      const struct xla_figs *xla, struct calib_trial *tr)
{
	bool *in = xl_calloc(m + 1, sizeof(bool));
	double p = s == CALIB_SHAPE_XLA_POWER ? xla_exponent(xla, NULL, NULL, NULL) : NAN;

	memset(tr, 0, sizeof(*tr));
	tr->loo = NAN;
	tr->predicted = NAN;
	for (size_t i = 0; i < m; i++)
		in[i] = true;
	tr->fitted = m >= calib_shape_params(s) && fit_shape(o, in, m, s, p, &tr->curve);
	if (tr->fitted && m > calib_shape_params(s)) {
		double worst = 0;
		bool all = true;

		for (size_t k = 0; k < m && k < MAX_FOLDS && all; k++) {
			size_t j = fold(k, m);
			struct calib_curve c;
			double pj = s == CALIB_SHAPE_XLA_POWER ? xla_exponent(xla, &o[j], NULL, NULL) : NAN;

			in[j] = false;
			if (fit_shape(o, in, m, s, pj, &c))
				worst = fmax(worst, fabs(calib_curve_at(&c, o[j].u, o[j].v) - o[j].y) / o[j].y);
			else
				all = false;
			in[j] = true;
		}
		tr->judged = all;
		tr->loo = all ? worst : NAN;
	}
	free(in);
}

/* How a family's other evidence ranks shape s, the least first: the
 * growth XLA's buffers show (below CURVED a line, from it a curve), else
 * the coordinate (a sequence length: the square), else the fewer numbers. */
static int expected_rank(const struct calib_choice *ch, int s)
{
	static const int line[CALIB_SHAPE_COUNT] = {
		[CALIB_SHAPE_AFFINE] = 0, [CALIB_SHAPE_XLA_POWER] = 0, [CALIB_SHAPE_POWER] = 1,
		[CALIB_SHAPE_QUADRATIC] = 1, [CALIB_SHAPE_SQUARE] = 3,
	};
	static const int curved[CALIB_SHAPE_COUNT] = {
		[CALIB_SHAPE_XLA_POWER] = 0, [CALIB_SHAPE_SQUARE] = 1, [CALIB_SHAPE_QUADRATIC] = 2,
		[CALIB_SHAPE_POWER] = 2, [CALIB_SHAPE_AFFINE] = 4,
	};
	static const int seq[CALIB_SHAPE_COUNT] = {
		[CALIB_SHAPE_SQUARE] = 0, [CALIB_SHAPE_AFFINE] = 1, [CALIB_SHAPE_QUADRATIC] = 2,
		[CALIB_SHAPE_POWER] = 2, [CALIB_SHAPE_XLA_POWER] = 3,
	};

	if (!isnan(ch->xla_exponent))
		return ch->xla_exponent >= CURVED ? curved[s] : line[s];
	if (ch->coord == CALIB_COORD_SEQ)
		return seq[s];
	return line[s];
}

/* What the expectation of expected_rank rests on, for the why. */
static void expectation_str(const struct calib_choice *ch, char *buf, size_t n)
{
	if (!isnan(ch->xla_exponent))
		snprintf(buf, n, "XLA's buffers grow as x^%.2f, %s", ch->xla_exponent,
			 ch->xla_exponent >= CURVED ? "a curve" : "a line");
	else if (ch->coord == CALIB_COORD_SEQ)
		snprintf(buf, n, "the coordinate is a sequence length, the square");
	else
		snprintf(buf, n, "nothing else is known of the family, the fewest numbers");
}

static unsigned n_shapes(unsigned mask)
{
	unsigned k = 0;

	for (; mask; mask &= mask - 1)
		k++;
	return k;
}

/* The shapes the choice is between (a mask): the judged ones within a tie
 * of the best; where none is judged, every fitted one.  *best_loo: the best
 * one's error (NAN: none judged). */
static unsigned contenders(const struct calib_choice *ch, double *best_loo)
{
	unsigned judged = 0, fitted = 0;
	double best = INFINITY;

	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		if (ch->trial[s].judged && ch->trial[s].loo < best)
			best = ch->trial[s].loo;
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		const struct calib_trial *t = &ch->trial[s];

		if (t->judged && t->loo <= fmax(TIE_FACTOR * best, best + TIE_ABS))
			judged |= 1u << s;
		if (t->fitted)
			fitted |= 1u << s;
	}
	*best_loo = judged ? best : NAN;
	return judged ? judged : fitted;
}

/* Of the shapes in mask, the one the evidence expects (see expected_rank),
 * the least out-of-sample error between equals. */
static int pick(const struct calib_choice *ch, unsigned mask)
{
	int bs = -1, br = 99;

	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		int r = expected_rank(ch, s);

		if (!(mask & (1u << s)))
			continue;
		if (bs < 0 || r < br || (r == br && ch->trial[s].judged && ch->trial[bs].judged &&
					 ch->trial[s].loo < ch->trial[bs].loo)) {
			bs = s;
			br = r;
		}
	}
	return bs;
}

/* "affine" or "power and quadratic" or "affine, power and quadratic": the
 * shapes of mask, appended to buf. */
static void shapes_str(unsigned mask, char *buf, size_t n)
{
	unsigned left = mask;

	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		size_t l = strlen(buf);

		if (!(mask & (1u << s)))
			continue;
		left &= ~(1u << s);
		snprintf(buf + l, n - l, "%s%s", shape_names[s],
			 !left ? "" : (left & (left - 1)) ? ", " : " and ");
	}
}

/* "affine 19.8%, power: 3 sizes fit it exactly": every shape tried other
 * than the chosen one, appended to buf. */
static void others_str(const struct calib_choice *ch, char *buf, size_t n)
{
	bool first = true;

	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		const struct calib_trial *t = &ch->trial[s];
		size_t l = strlen(buf);

		if ((ch->contenders & (1u << s)) || (!t->fitted && s == CALIB_SHAPE_XLA_POWER) ||
		    (!t->fitted && s == CALIB_SHAPE_SQUARE))
			continue;
		if (t->judged)
			snprintf(buf + l, n - l, "%s%s %.1f%%", first ? "" : ", ", shape_names[s],
				 100 * t->loo);
		else if (t->fitted)
			snprintf(buf + l, n - l, "%s%s: %u sizes fit it exactly", first ? "" : ", ",
				 shape_names[s], ch->sizes);
		else
			snprintf(buf + l, n - l, "%s%s needs %u sizes", first ? "" : ", ", shape_names[s],
				 calib_shape_params(s) + 1);
		first = false;
	}
}

/* ch->why: which shape, and why it. */
static void say_why(struct calib_choice *ch, unsigned tied, double best_loo)
{
	const struct calib_trial *t = &ch->trial[ch->chosen];
	char among[96] = "", others[200] = "", expect[96];
	size_t l;

	shapes_str(ch->contenders, among, sizeof(among));
	others_str(ch, others, sizeof(others));
	expectation_str(ch, expect, sizeof(expect));
	l = (size_t)snprintf(ch->why, sizeof(ch->why), "%s", shape_names[ch->chosen]);
	if (ch->by_prior && n_shapes(ch->contenders) > 1)
		snprintf(ch->why + l, sizeof(ch->why) - l, ": %u sizes judge no shape; the mean of %s,"
			 " which they fit exactly (%s)", ch->sizes, among, expect);
	else if (ch->by_prior)
		snprintf(ch->why + l, sizeof(ch->why) - l, ": %u sizes judge no shape; the one"
			 " expected (%s)", ch->sizes, expect);
	else if (n_shapes(ch->contenders) == 1)
		snprintf(ch->why + l, sizeof(ch->why) - l, ": out-of-sample error %.1f%%%s%s%s",
			 100 * t->loo, n_shapes(tied) > 1 ? ", alike for others expected less (" : "",
			 n_shapes(tied) > 1 ? expect : "", n_shapes(tied) > 1 ? ")" : "");
	else
		snprintf(ch->why + l, sizeof(ch->why) - l, ": the mean of %s, whose out-of-sample errors"
			 " are alike (best %.1f%%; %s)", among, 100 * best_loo, expect);
	l = strlen(ch->why);
	if (others[0])
		snprintf(ch->why + l, sizeof(ch->why) - l, "; %s", others);
	l = strlen(ch->why);
	if (!isnan(ch->xla_exponent) && ch->xla_lower)
		snprintf(ch->why + l, sizeof(ch->why) - l, "; XLA's buffers grow as x^%.2f or faster"
			 " (two sizes), so xla-power takes x^%.2f", ch->xla_shown, ch->xla_exponent);
	else if (!isnan(ch->xla_exponent) && !strstr(ch->why, "XLA's buffers grow"))
		snprintf(ch->why + l, sizeof(ch->why) - l, "; XLA's buffers grow as x^%.2f",
			 ch->xla_exponent);
}

/* How much an error measured among the sizes seen grows at reach d (in
 * mean steps beyond them): in proportion to 1 + d, the spread of the
 * figures as much as the curve's own error (the slope a line takes from
 * noisy figures errs more the further out it is read).  A multiplier that
 * grew faster (the square of 1 + d, as before) skipped feasible sizes in
 * frontier runs without saving an OOM launch on the families of
 * tests/bench/predict_shapes.c. */
static double widening(double d)
{
	return 1 + d;
}

double calib_choice_reach(const struct calib_choice *ch, double u, double v)
{
	double x = u * v;

	if (ch->step > 0 && x > ch->x_hi)
		return log(x / ch->x_hi) / ch->step;
	if (ch->step > 0 && x > 0 && x < ch->x_lo)
		return log(ch->x_lo / x) / ch->step;
	return 0;
}

const char *calib_band_str(const struct calib_choice *ch, char *buf, size_t n)
{
	double d = calib_choice_reach(ch, ch->u, ch->v), e = isnan(ch->loo) ? PRIOR : ch->loo, base;
	char b[32], times[32] = "", where[64];
	size_t l;

	if (ch->chosen >= CALIB_SHAPE_COUNT) {
		snprintf(buf, n, "%s", "");
		return buf;
	}
	if (d > 0) {
		snprintf(times, sizeof(times), "%.2f x ", widening(d));
		snprintf(where, sizeof(where), "%.1f mean steps beyond the sizes seen", d);
	} else {
		snprintf(where, sizeof(where), "within the sizes seen");
	}
	base = fabs(ch->predicted) * (NOISE + e) * widening(d);
	xl_fmt_bytes(ch->band > 0 && ch->band < 9.2e18 ? (uint64_t)ch->band : 0, b, sizeof(b));
	l = (size_t)snprintf(buf, n, "+/- %s = %s(%.0f%% + %.1f%%) (%s; %s)", b, times,
			     100 * NOISE, 100 * e, isnan(ch->loo) ? "a prior: no out-of-sample error"
						     : "the out-of-sample error", where);
	if (l < n && ch->band > base * 1.0001 && ch->band > BAND_MIN)
		snprintf(buf + l, n - l, ", widened to the spread of the shapes it is the mean of");
	return buf;
}

/* The growth the noise can hide, carried to x beyond the sizes seen: a
 * slope of the noise over the span seen (and, where the sizes seen grew
 * less than their noise, of that growth too: no slope was shown), on top
 * of the noise itself.  Only where the noise was measured between launches
 * of one size, or no slope was shown; 0 within the sizes seen. */
static double hidden_growth(const struct calib_choice *ch, double x)
{
	double h, pi = 0;

	if (!(ch->flat || ch->repeats) || !(x > ch->x_hi) || !(ch->x_hi > ch->x_lo))
		return 0;
	h = ch->noise + ((ch->flat ? fabs(ch->y_hi - ch->y_lo) : 0) + ch->noise) /
				(ch->x_hi - ch->x_lo) * (x - ch->x_hi);
	/* a line's 95% prediction interval from the spread between launches
	 * of one size: few repeats know that spread badly (Student's t) */
	if (ch->df && ch->sd > 0 && ch->sxx > 0)
		pi = t95(ch->df) * ch->sd *
		     sqrt(1 + 1.0 / ch->nlaunch + (x - ch->xbar) * (x - ch->xbar) / ch->sxx);
	return fmax(h, pi);
}

/* The mean of the shapes the prediction is made of (the chosen one alone,
 * or those the launches cannot tell apart from it), each weighted by the
 * inverse square of the error it is expected to make (the spread of a
 * figure and its out-of-sample error); their least and largest in *lo, *hi. */
static double mean_at(const struct calib_choice *ch, double u, double v, double *lo, double *hi)
{
	double y = 0, w = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		if (ch->contenders & (1u << s)) {
			double ys = calib_curve_at(&ch->trial[s].curve, u, v);
			double e = NOISE + (ch->trial[s].judged ? ch->trial[s].loo : PRIOR);

			y += ys / (e * e);
			w += 1 / (e * e);
			*lo = fmin(*lo, ys);
			*hi = fmax(*hi, ys);
		}
	return y / w;
}

double calib_choice_band_at(const struct calib_choice *ch, double u, double v, double *pred)
{
	double d = calib_choice_reach(ch, u, v), y, lo, hi, band;

	if (ch->chosen >= CALIB_SHAPE_COUNT) {
		if (pred)
			*pred = NAN;
		return NAN;
	}
	y = mean_at(ch, u, v, &lo, &hi);
	band = fabs(y) * (NOISE + (isnan(ch->loo) ? PRIOR : ch->loo)) * widening(d);
	band = fmax(fmax(band, fmax(hi - y, y - lo)), hidden_growth(ch, u * v));
	if (pred)
		*pred = y;
	return fmax(band, BAND_MIN);
}

/* The sizes seen, on the scale x = u v: least, largest, mean log step. */
static void sizes_seen(const struct calib_obs *o, size_t m, struct calib_choice *ch)
{
	ch->x_lo = INFINITY;
	ch->x_hi = -INFINITY;
	for (size_t i = 0; i < m; i++) {
		ch->x_lo = fmin(ch->x_lo, o[i].u * o[i].v);
		ch->x_hi = fmax(ch->x_hi, o[i].u * o[i].v);
	}
	ch->step = m > 1 && ch->x_lo > 0 && ch->x_hi > ch->x_lo ? log(ch->x_hi / ch->x_lo) / (double)(m - 1)
							       : 0;
}

unsigned calib_fit_curves(const struct calib_obs *obs, size_t n, const struct calib_obs *xla,
			  size_t nxla, unsigned mask, struct calib_choice *out)
{
	return calib_fit_curves_for(obs, n, xla, nxla, mask, CALIB_COORD_OTHER, out);
}

unsigned calib_fit_curves_for(const struct calib_obs *obs, size_t n, const struct calib_obs *xla,
			      size_t nxla, unsigned mask, enum calib_coord coord,
			      struct calib_choice *out)
{
	struct xla_figs xf = { NULL, 0 };
	struct calib_obs *o, *xo = NULL;
	unsigned xpoints, fitted = 0;
	size_t m;

	memset(out, 0, sizeof(*out));
	out->chosen = CALIB_SHAPE_COUNT;
	out->u = out->v = NAN;
	out->loo = out->predicted = out->band = NAN;
	if (xla && nxla) {
		xo = by_size(xla, nxla, &xf.n, &xpoints);
		xf.o = xo;
	}
	out->xla_exponent = xla_exponent(&xf, NULL, &out->xla_lower, &out->xla_shown);
	o = by_size(obs, n, &m, &out->points);
	out->sizes = (unsigned)m;
	sizes_seen(o, m, out);
	noise_of(obs, n, out);
	out->y_lo = m ? o[0].y : NAN;
	out->y_hi = m ? o[m - 1].y : NAN;
	if (m) {
		out->noise = fmax(out->noise, NOISE * out->y_hi);
		out->flat = m >= 2 && fabs(out->y_hi - out->y_lo) <= out->noise;
	}
	if (!mask)
		mask = (1u << CALIB_SHAPE_COUNT) - 1;
	out->coord = coord;
	if (isnan(out->xla_exponent))
		mask &= ~(1u << CALIB_SHAPE_XLA_POWER);
	if (coord != CALIB_COORD_SEQ)
		mask &= ~(1u << CALIB_SHAPE_SQUARE);
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
		out->trial[s].loo = out->trial[s].predicted = NAN;
		if (mask & (1u << s))
			try_shape(o, m, (enum calib_shape)s, &xf, &out->trial[s]);
		fitted += out->trial[s].fitted;
	}
	free(o);
	free(xo);
	return fitted;
}

static void fmt_abs(double v, char *buf, size_t n)
{
	xl_fmt_bytes(v > 0 && v < 9.2e18 ? (uint64_t)v : 0, buf, n);
}

/* ch->how: what the prediction at (ch->u, ch->v) is, as computed: each
 * shape's value there, their weighted mean where there are several, a
 * hold at the largest size's figure, and the growth the noise can hide. */
static void say_how(struct calib_choice *ch)
{
	char b1[32], b2[32], b3[32];
	size_t l = 0, n = sizeof(ch->how);
	double x = ch->u * ch->v;
	bool many = n_shapes(ch->contenders) > 1, first = true;

	ch->how[0] = '\0';
	if (many)
		l += (size_t)snprintf(ch->how + l, n - l, "the mean of ");
	for (int s = 0; s < CALIB_SHAPE_COUNT && l < n; s++)
		if (ch->contenders & (1u << s)) {
			const struct calib_trial *t = &ch->trial[s];
			double f = formula_at(&t->curve, ch->u, ch->v);

			fmt_abs(t->predicted, b1, sizeof(b1));
			l += (size_t)snprintf(ch->how + l, n - l, "%s%s %s%s", first ? "" : ", ",
					      shape_names[s], t->predicted < 0 ? "-" : "", b1);
			if (f < t->predicted && l < n) {
				fmt_abs(fabs(f), b2, sizeof(b2));
				fmt_abs(t->curve.rise, b3, sizeof(b3));
				l += (size_t)snprintf(ch->how + l, n - l, " (its formula gives %s%s; held on"
						      " the line through the two largest sizes seen,"
						      " rising %s a unit%s)", f < 0 ? "-" : "", b2, b3,
						      t->curve.rise > 0 ? "" : ": memory does not fall"
						      " as the size grows");
			}
			first = false;
		}
	if (many && l < n)
		l += (size_t)snprintf(ch->how + l, n - l, " weighted by their errors");
	if (ch->flat && x > ch->x_hi && l < n) {
		fmt_abs(fabs(ch->y_hi - ch->y_lo), b1, sizeof(b1));
		fmt_abs(ch->noise, b2, sizeof(b2));
		fmt_abs(hidden_growth(ch, x), b3, sizeof(b3));
		snprintf(ch->how + l, n - l, "; the sizes seen grew %s, within the %s %s: no slope"
			 " shown, the band holds the growth that hides, %s here", b1, b2,
			 ch->repeats ? "between launches of one size" : "a figure varies (1%, assumed)",
			 b3);
	}
}

bool calib_choice_for(struct calib_choice *ch, double u, double v)
{
	double best_loo;
	unsigned tied;
	int chosen;

	ch->u = u;
	ch->v = v;
	ch->chosen = CALIB_SHAPE_COUNT;
	ch->contenders = 0;
	ch->safe_side = false;
	ch->by_prior = false;
	ch->loo = ch->predicted = ch->band = NAN;
	ch->why[0] = '\0';
	ch->how[0] = '\0';
	ch->held = false;
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		ch->trial[s].predicted = ch->trial[s].fitted ? calib_curve_at(&ch->trial[s].curve, u, v)
							     : NAN;
	tied = contenders(ch, &best_loo);
	chosen = pick(ch, tied);
	if (chosen < 0)
		return false;
	ch->chosen = (enum calib_shape)chosen;
	ch->by_prior = !ch->trial[chosen].judged;
	/* the prediction: the mean of the chosen shape and those the launches
	 * cannot tell apart from it that the evidence does not rank below it
	 * by more than one place (a line and the square of a sequence length;
	 * not a line and the square of a batch) */
	ch->contenders = 0;
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		if ((tied & (1u << s)) && expected_rank(ch, s) <= expected_rank(ch, chosen) + 1)
			ch->contenders |= 1u << s;
	/* the band rests on their largest out-of-sample error, or on the prior */
	ch->loo = NAN;
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		if ((ch->contenders & (1u << s)) && ch->trial[s].judged)
			ch->loo = isnan(ch->loo) ? ch->trial[s].loo : fmax(ch->loo, ch->trial[s].loo);
	ch->band = calib_choice_band_at(ch, u, v, &ch->predicted);
	for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
		if ((ch->contenders & (1u << s)) &&
		    formula_at(&ch->trial[s].curve, u, v) < ch->trial[s].predicted)
			ch->held = true;
	say_why(ch, tied, best_loo);
	say_how(ch);
	return true;
}

unsigned calib_choose_curve(const struct calib_obs *obs, size_t n, double u, double v,
			    const struct calib_obs *xla, size_t nxla, unsigned mask,
			    struct calib_choice *out)
{
	unsigned fitted = calib_fit_curves(obs, n, xla, nxla, mask, out);

	out->u = u;
	out->v = v;
	if (fitted && !calib_choice_for(out, u, v))
		return 0;
	return fitted;
}

bool calib_growth_exponent(const struct calib_obs *obs, size_t n, double *p, bool *lower_bound)
{
	unsigned points;
	size_t m;
	struct calib_obs *o = by_size(obs, n, &m, &points);
	bool ok = false;

	*lower_bound = false;
	if (m >= 3) {
		bool *in = xl_calloc(m, sizeof(bool));
		struct calib_curve c;

		for (size_t i = 0; i < m; i++)
			in[i] = true;
		ok = fit_power(o, in, m, &c) && c.b > 0;
		if (ok)
			*p = c.p;
		free(in);
	}
	if (!ok && m >= 2) {
		/* the two sizes furthest apart in v */
		size_t lo = 0, hi = 0;

		for (size_t i = 1; i < m; i++) {
			if (o[i].v < o[lo].v)
				lo = i;
			if (o[i].v > o[hi].v)
				hi = i;
		}
		if (o[hi].v > o[lo].v && o[lo].v > 0 && o[lo].u > 0 && o[hi].u > 0) {
			*p = log((o[hi].y / o[hi].u) / (o[lo].y / o[lo].u)) / log(o[hi].v / o[lo].v);
			*lower_bound = ok = isfinite(*p);
		}
	}
	free(o);
	return ok;
}
