/* svg.h - svg.c's functions, private to launcher/report/: charts drawn as
 * inline SVG, one plot area with axes, ticks, a legend, and markers whose
 * shape as well as colour says what they are.  Colours are CSS classes
 * (xl_svg_style), so that one page follows prefers-color-scheme.  Used by
 * `calib report` (report.c). */
#ifndef XLAUNCH_LAUNCHER_REPORT_SVG_H
#define XLAUNCH_LAUNCHER_REPORT_SVG_H

#include "common/common.h"

/* What an axis measures, for its ticks and labels. */
enum xl_axis_unit {
	XL_AXIS_NUMBER,
	XL_AXIS_BYTES,     /* binary units, the unit in the title */
	XL_AXIS_SECONDS,   /* a duration */
	XL_AXIS_TIME,      /* epoch seconds, labelled in UTC */
};

struct xl_axis {
	double lo, hi;
	enum xl_axis_unit unit;
	char title[160];
};

/* The marks, each with its own shape. */
enum xl_mark {
	XL_MARK_OK,          /* filled circle */
	XL_MARK_OOM,         /* cross */
	XL_MARK_INFEASIBLE,  /* hollow triangle */
	XL_MARK_STORM,       /* filled square */
	XL_MARK_FAIL,        /* hollow diamond: error, crash, timeout, interrupted, peer-failed */
	XL_MARK_COUNT
};
/* The CSS class of a mark ("m-ok", ...). */
const char *xl_mark_class(enum xl_mark m);

struct xl_chart {
	struct xl_buf *b;          /* borrowed: where the SVG goes */
	double w, h;               /* the whole picture, px */
	double l, r, t, bt;        /* the plot area: left, right, top, bottom */
	struct xl_axis x, y;
	int id;                    /* unique on the page (pattern ids) */
	double legend_x;           /* where the next legend entry goes */
};

/* Starts an SVG of w x h px titled title (escaped here); standalone: with
 * the XML namespace and the style sheet, for a file of its own. */
void xl_chart_begin(struct xl_chart *c, struct xl_buf *b, int id, const char *title, double w,
		    double h, bool standalone);
/* Rounds the axes' ranges out to their ticks; draws grid, ticks, labels and
 * axis titles.  Call once, after x and y are set. */
void xl_chart_axes(struct xl_chart *c);
double xl_chart_px(const struct xl_chart *c, double x);
double xl_chart_py(const struct xl_chart *c, double y);
/* A mark at data point (x, y), size r px, with a tooltip (escaped here; may
 * be NULL).  Points outside the plot area are clamped to its edge. */
void xl_chart_mark(struct xl_chart *c, enum xl_mark m, double x, double y, double r,
		   const char *tip);
/* A line between data points, of CSS class cls ("fit", "limit", "diag",
 * "whisker", "change"). */
void xl_chart_line(struct xl_chart *c, double x0, double y0, double x1, double y1, const char *cls);
/* An open line through n data points, of class cls (a curve). */
void xl_chart_polyline(struct xl_chart *c, const double *xs, const double *ys, size_t n,
		       const char *cls);
/* A closed polygon through n data points, of class cls. */
void xl_chart_poly(struct xl_chart *c, const double *xs, const double *ys, size_t n,
		   const char *cls);
/* A rectangle between data points, class cls, tooltip tip (may be NULL). */
void xl_chart_rect(struct xl_chart *c, double x0, double y0, double x1, double y1,
		   const char *cls, const char *tip);
/* Text at data point (x, y), anchored start, of class cls. */
void xl_chart_text(struct xl_chart *c, double x, double y, const char *cls, const char *text);
/* Text in pixel coordinates, anchored middle. */
void xl_chart_note(struct xl_chart *c, double px, double py, const char *text);
/* A legend entry above the plot area: a mark (XL_MARK_COUNT: none), or a
 * swatch of CSS class swatch (a line when line). */
void xl_chart_legend(struct xl_chart *c, enum xl_mark m, const char *swatch, bool line,
		     const char *label);
void xl_chart_end(struct xl_chart *c);

/* The style sheet of the page and of a standalone SVG (light and dark). */
extern const char xl_svg_style[];

/* s escaped for XML text and attributes. */
void xl_xml_esc(struct xl_buf *b, const char *s);

/* A byte count for a label: "1.5 GiB". */
const char *xl_svg_bytes(double v, char *buf, size_t n);

#endif
