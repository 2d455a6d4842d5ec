/* fuzz_curve.c - the curves of a family's figures (calib.h, "curves"): the
 * first bytes are the launch to come and a mask of shapes, the rest
 * observations of 13 bytes (u, v, y as numbers of any size and sign, and a
 * count), the first few of them also standing for XLA's figures; every
 * shape is fitted and judged, one is chosen with its band, and the growth
 * exponent is read.  Whatever the figures,
 * nothing overflows a conversion, a chosen shape is one that was fitted and
 * a contender, its prediction is the largest of the contenders' at the
 * launch, and a finite band is never below 8 MiB. */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

#define REC 13
#define MAX_OBS 64

/* A number from 4 bytes: a 24-bit magnitude times a power of two the
 * fourth byte picks (small, large, negative, zero). */
static double num(const uint8_t *p)
{
	uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	int e = (int)(p[3] % 64) - 20;

	return (p[3] & 0x80 ? -1.0 : 1.0) * ldexp((double)m, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct calib_obs o[MAX_OBS];
	struct calib_choice ch;
	size_t n = 0;
	double u, v, p;
	size_t nxla;
	unsigned mask;
	enum calib_coord coord;
	bool lower;
	char buf[200];

	xl_verbosity = -2;
	if (size < 10)
		return 0;
	u = num(data);
	v = num(data + 4);
	nxla = data[8] % 8;
	mask = data[9] & 0x0f;
	for (size_t at = 10; at + REC <= size && n < MAX_OBS; at += REC, n++)
		o[n] = (struct calib_obs){ num(data + at), num(data + at + 4), num(data + at + 8),
					   data[at + 12] % 4 };
	if (nxla > n)
		nxla = n;
	coord = (enum calib_coord)((data[8] >> 3) % 3);
	if (mask && (data[8] & 0x80))
		mask |= 1u << CALIB_SHAPE_SQUARE;
	if (calib_fit_curves_for(o, n, o, nxla, mask, coord, &ch) && calib_choice_for(&ch, u, v)) {
		double lo = INFINITY, hi = -INFINITY;
		bool judged = false;

		if (ch.chosen >= CALIB_SHAPE_COUNT || !ch.trial[ch.chosen].fitted ||
		    !(ch.contenders & (1u << ch.chosen)) || ch.sizes > n)
			abort();
		for (int s = 0; s < CALIB_SHAPE_COUNT; s++)
			judged |= ch.trial[s].judged;
		/* the prediction is a mean of the contenders, never an exact fit
		 * where a judged shape exists, and the band holds them all */
		for (int s = 0; s < CALIB_SHAPE_COUNT; s++) {
			if (!(ch.contenders & (1u << s)))
				continue;
			if (judged && !ch.trial[s].judged)
				abort();
			lo = fmin(lo, ch.trial[s].predicted);
			hi = fmax(hi, ch.trial[s].predicted);
		}
		if (isfinite(ch.predicted) && isfinite(lo) && isfinite(hi) &&
		    (ch.predicted < lo - 1e-6 * fabs(lo) - 1 || ch.predicted > hi + 1e-6 * fabs(hi) + 1 ||
		     (isfinite(ch.band) && ch.band < (hi - lo) / 2 * (1 - 1e-9))))
			abort();
		if (isfinite(ch.band) && ch.band < 8.0 * 1048576)
			abort();
		calib_curve_str(&ch.trial[ch.chosen].curve, "x", data[9] & 0x10, buf, sizeof(buf));
		calib_choice_band_at(&ch, v, u, NULL);
	} else if (ch.chosen != CALIB_SHAPE_COUNT) {
		abort();
	}
	if (calib_growth_exponent(o, n, &p, &lower) && !isfinite(p))
		abort();
	return 0;
}
