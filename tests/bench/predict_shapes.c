/* predict_shapes.c - how well the learned curve predicts unseen sizes of
 * families of known shape after three launches, and what a frontier run
 * on them launches.  Built twice by tests/bench/predict_shapes.sh: against
 * the calib/curve.c of a base commit (-DBEFORE, its own calib.h) and
 * against the tree's; both read the same draws (a fixed seed) and print
 * one line per family and figure: "FAMILY METRIC VALUE".
 *
 * Families (GiB; v the coordinate, u = 1):
 *   straight   micro batch 8, 16, 24: 2 + 0.15 b
 *   square     sequence 512, 768, 1024: attention without a fused kernel
 *              (a + b s + c s^2), with XLA's buffers of the same job
 *   square-nc  the same without XLA's figures (a PyTorch job)
 *   alloc      micro batch 8, 16, 24: a line plus the allocator's rounding
 *              of the largest buffers up to 1 GiB (the increments between
 *              the sizes seen grow 13%; beyond them the growth is a line)
 *   bend       micro batch 8, 16, 24: 5 + 0.25 b^1.26 (a bend that goes on:
 *              increments grow 14% between the sizes seen)
 *   noisy      the straight family with 3% launch-to-launch noise
 * Every other family has 0.3% noise.  Per family DRAWS draws; in each, the
 * three launches, then predictions at 1.3x, 2x and 2.7x the largest size
 * seen (the median error over the draws, and the share under the truth:
 * what runs out of memory), and a frontier run: candidates up to 3x the
 * largest seen, a limit between two of them, the start at the largest
 * whose band's top is under the limit (else the largest seen), a launch
 * over the limit counted as an OOM and followed by the next smaller
 * candidate; the feasible candidates above the one that ran are skipped
 * fits.  The band's share holding the truth is printed too. */
#include "calib/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0
#define DRAWS 2000

struct family {
	const char *name;
	double (*f)(double);
	double (*xla)(double);       /* XLA's buffers, NULL: none */
	int seq;                     /* the coordinate is a sequence length */
	double seen[3], noise;
	double step;                 /* the candidates: multiples of step */
};

static double straight(double b)
{
	return (2 + 0.15 * b) * GIB;
}

static double square(double s)
{
	return 640e6 + 48000 * s + 262 * s * s;
}

static double square_buffers(double s)
{
	return 16e6 + 44000 * s + 197 * s * s;
}

static double alloc(double b)
{
	return (4 + 0.71 * b + ceil(0.3 * b)) * GIB;
}

static double bend(double b)
{
	return (5 + 0.25 * pow(b, 1.26)) * GIB;
}

static const struct family fams[] = {
	{ "straight", straight, NULL, 0, { 8, 16, 24 }, 0.003, 8 },
	{ "square", square, square_buffers, 1, { 512, 768, 1024 }, 0.003, 256 },
	{ "square-nc", square, NULL, 1, { 512, 768, 1024 }, 0.003, 256 },
	{ "alloc", alloc, NULL, 0, { 8, 16, 24 }, 0.003, 8 },
	{ "bend", bend, NULL, 0, { 8, 16, 24 }, 0.003, 8 },
	{ "noisy", straight, NULL, 0, { 8, 16, 24 }, 0.03, 8 },
};

static unsigned long long rng = 88172645463325252ULL;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* The prediction and band at v from the three launches. */
static bool predict(const struct family *fm, const struct calib_obs *o, const struct calib_obs *x,
		    double v, double *pred, double *band)
{
	struct calib_choice ch;
	size_t nx = fm->xla ? 3 : 0;

#ifdef BEFORE
	if (!calib_choose_curve(o, 3, 1, v, nx ? x : NULL, nx, 0, &ch))
		return false;
#else
	if (!calib_fit_curves_for(o, 3, nx ? x : NULL, nx, 0, fm->seq ? CALIB_COORD_SEQ : CALIB_COORD_BATCH,
				  &ch) ||
	    !calib_choice_for(&ch, 1, v))
		return false;
#endif
	*pred = ch.predicted;
	*band = ch.band;
	return isfinite(ch.predicted);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A frontier run: candidates step, 2 step, ... up to 3 times the largest
 * seen above it, the limit halfway between the truths of the candidates
 * at 2 and 2 step more than the largest seen.  Adds its OOM launches and
 * skipped fits. */
static void frontier(const struct family *fm, const struct calib_obs *o, const struct calib_obs *x,
		     unsigned *ooms, unsigned *skipped, unsigned *started_right)
{
	double top = fm->seen[2], c[64], limit;
	size_t n = 0, start = SIZE_MAX;

	for (double v = top + fm->step; v <= 3 * top + 1e-9 && n < 64; v += fm->step)
		c[n++] = v;
	limit = fm->f(2 * top + fm->step / 2);
	for (size_t i = n; i-- > 0;) {
		double p, b;

		if (predict(fm, o, x, c[i], &p, &b) && p + b <= limit) {
			start = i;
			break;
		}
	}
	if (start == SIZE_MAX) {
		/* nothing predicted to fit: the largest seen, known good; every
		 * feasible candidate is skipped */
		for (size_t i = 0; i < n; i++)
			*skipped += fm->f(c[i]) <= limit;
		return;
	}
	for (size_t i = start + 1; i-- > 0;) {
		if (fm->f(c[i]) > limit) {
			(*ooms)++;
			continue;
		}
		for (size_t j = i + 1; j < n; j++)
			*skipped += fm->f(c[j]) <= limit;
		*started_right += i == start && (i + 1 == n || fm->f(c[i + 1]) > limit);
		return;
	}
}

int main(void)
{
	static const double at[] = { 1.3, 2.0, 2.7 };

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
		const struct family *fm = &fams[f];
		double err[3][DRAWS];
		unsigned under = 0, inside = 0, all = 0, ooms = 0, skipped = 0, right = 0, failed = 0;

		for (int d = 0; d < DRAWS; d++) {
			struct calib_obs o[3], x[3];

			for (int i = 0; i < 3; i++) {
				double v = fm->seen[i];

				o[i] = (struct calib_obs){ 1, v, fm->f(v) * (1 + fm->noise * normal()), 1 };
				if (fm->xla)
					x[i] = (struct calib_obs){ 1, v, fm->xla(v) * (1 + 0.003 * normal()), 1 };
			}
			for (int k = 0; k < 3; k++) {
				double v = at[k] * fm->seen[2], truth = fm->f(v), p, b;

				if (!predict(fm, o, x, v, &p, &b)) {
					failed++;
					err[k][d] = INFINITY;
					continue;
				}
				err[k][d] = fabs(p - truth) / truth;
				under += p < truth;
				inside += fabs(p - truth) <= b;
				all++;
			}
			frontier(fm, o, x, &ooms, &skipped, &right);
		}
		for (int k = 0; k < 3; k++)
			printf("%s err%.1fx %.4f\n", fm->name, at[k], median(err[k], DRAWS));
		printf("%s under %.4f\n", fm->name, all ? (double)under / all : NAN);
		printf("%s inside %.4f\n", fm->name, all ? (double)inside / all : NAN);
		printf("%s skipped %.4f\n", fm->name, (double)skipped / DRAWS);
		printf("%s started_right %.4f\n", fm->name, (double)right / DRAWS);
		printf("%s oom %u\n", fm->name, ooms);
		printf("%s failed %u\n", fm->name, failed);
	}
	return 0;
}
