/* report.h - the report room: `calib report`, what the store knows as one
 * self-contained HTML page of SVG charts, or one chart.  Code outside
 * launcher/report/ includes only this header; the charts (svg.c, svg.h)
 * are private.
 *
 * It reads the store only (calib/): the candidates a profile would launch
 * now, drawn on its family's chart, are planned by the caller and handed
 * in (struct xl_report_cand). */
#ifndef XLAUNCH_LAUNCHER_REPORT_H
#define XLAUNCH_LAUNCHER_REPORT_H

#include "calib/calib.h"

/* A candidate of a profile as `run` would plan it now. */
struct xl_report_cand {
	const char *name;               /* NULL: a profile without candidates */
	const json_t *parts;            /* its signature parts */
	const struct calib_rank *rank;  /* place, reason and estimate */
};

/* The candidates of profile: 0 with *out and *n set (owned by the caller,
 * valid until xl_report returns), or non-zero when the profile cannot be
 * planned on this machine (nothing of it is drawn but the store's). */
typedef int xl_report_cands_fn(void *arg, const char *profile,
			       const struct xl_report_cand **out, size_t *n);

struct xl_report_opts {
	const char *profile;       /* only this profile's attempts; NULL: all */
	double since;              /* epoch seconds; NAN: no bound */
	bool svg;                  /* the chart named by chart alone, as an SVG file */
	const char *chart;
	xl_report_cands_fn *cands; /* NULL: no candidates drawn */
	void *cands_arg;
};

/* Writes the report of st into out (appended).  Prints its own errors.
 * Returns 0, 64 (svg without a chart, or no such chart: the message lists
 * the charts there are) or
 * 73 (the store could not be read). */
int xl_report(const struct xl_ctx *ctx, struct calib_store *st, const struct xl_report_opts *o,
	      struct xl_buf *out);

#endif
