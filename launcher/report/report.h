/* report.h - `calib report` (internal to the launcher): what the store
 * knows, as one self-contained HTML page of SVG charts, or one chart. */
#ifndef XLAUNCH_LAUNCHER_REPORT_H
#define XLAUNCH_LAUNCHER_REPORT_H

#include "calib/calib.h"

struct xl_report_opts {
	const char *profile;       /* only this profile's attempts; NULL: all */
	double since;              /* epoch seconds; NAN: no bound */
	bool svg;                  /* the chart named by chart alone, as an SVG file */
	const char *chart;
};

/* Writes the report of st into out (appended).  Prints its own errors.
 * Returns 0, 64 (svg without a chart, or no such chart: the message lists
 * the charts there are) or
 * 73 (the store could not be read). */
int xl_report(const struct xl_ctx *ctx, struct calib_store *st, const struct xl_report_opts *o,
	      struct xl_buf *out);

#endif
