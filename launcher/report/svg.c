/* svg.c - charts as inline SVG (see svg.h). */
#include "launcher/report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char xl_svg_style[] =
	":root{color-scheme:light dark;--fg:#1b1b1b;--muted:#5a5a5a;--bg:#ffffff;"
	"--panel:#f6f6f4;--grid:#dcdcdc;--ok:#0072b2;--oom:#d55e00;--inf:#8a3f9e;"
	"--storm:#b07800;--fail:#555555;--fit:#00795a;--band:rgba(0,158,115,.16);"
	"--limit:#b00020;--change:#7a7a7a;--bar:#0072b2;--hit:#d55e00}\n"
	"@media (prefers-color-scheme:dark){:root{--fg:#ececec;--muted:#b0b0b0;--bg:#151515;"
	"--panel:#202020;--grid:#3c3c3c;--ok:#56b4e9;--oom:#ff8c42;--inf:#e69ac8;"
	"--storm:#f0c040;--fail:#bdbdbd;--fit:#3cd3a0;--band:rgba(60,211,160,.18);"
	"--limit:#ff6b81;--change:#9a9a9a;--bar:#56b4e9;--hit:#ff8c42}}\n"
	"svg.chart{background:var(--panel);max-width:100%;height:auto}\n"
	"svg.chart text{fill:var(--fg);font:12px system-ui,sans-serif}\n"
	"svg.chart .title{font-size:14px;font-weight:600}\n"
	"svg.chart .tick{fill:var(--muted);font-size:11px}\n"
	"svg.chart .note{fill:var(--muted);font-style:italic}\n"
	"svg.chart .grid{stroke:var(--grid);stroke-width:1}\n"
	"svg.chart .axis{stroke:var(--fg);stroke-width:1}\n"
	"svg.chart .m-ok{fill:var(--ok);stroke:var(--ok)}\n"
	"svg.chart .m-oom{fill:none;stroke:var(--oom);stroke-width:2.4}\n"
	"svg.chart .m-inf{fill:none;stroke:var(--inf);stroke-width:2}\n"
	"svg.chart .m-storm{fill:var(--storm);stroke:var(--storm)}\n"
	"svg.chart .m-fail{fill:none;stroke:var(--fail);stroke-width:1.8}\n"
	"svg.chart .fit{stroke:var(--fit);stroke-width:2;fill:none}\n"
	"svg.chart .band{fill:var(--band);stroke:none}\n"
	"svg.chart .limit{stroke:var(--limit);stroke-width:2;stroke-dasharray:8 4;fill:none}\n"
	"svg.chart .limit-label{fill:var(--limit)}\n"
	"svg.chart .diag{stroke:var(--muted);stroke-width:1.4;stroke-dasharray:5 4;fill:none}\n"
	"svg.chart .whisker{stroke:var(--muted);stroke-width:1;fill:none}\n"
	"svg.chart .change{stroke:var(--change);stroke-width:1.4;stroke-dasharray:2 3;fill:none}\n"
	"svg.chart .change-label{fill:var(--muted);font-size:11px}\n"
	"svg.chart .bar-c{fill:var(--bar);stroke:var(--bar)}\n"
	"svg.chart .bar-h{fill:none;stroke:var(--hit);stroke-width:1.6}\n"
	"svg.chart .bar-h-fill{fill:var(--hit)}\n";

static const char *const mark_classes[XL_MARK_COUNT] = {
	"m-ok", "m-oom", "m-inf", "m-storm", "m-fail",
};

const char *xl_mark_class(enum xl_mark m)
{
	return (unsigned)m < XL_MARK_COUNT ? mark_classes[m] : "m-fail";
}

void xl_xml_esc(struct xl_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': xl_buf_adds(b, "&amp;"); break;
		case '<': xl_buf_adds(b, "&lt;"); break;
		case '>': xl_buf_adds(b, "&gt;"); break;
		case '"': xl_buf_adds(b, "&quot;"); break;
		case '\'': xl_buf_adds(b, "&#39;"); break;
		default:
			/* control characters are not XML */
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				xl_buf_addc(b, '?');
			else
				xl_buf_addc(b, *s);
		}
	}
}

static const char *const byte_units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };

/* The binary unit for values up to v: its power of 1024. */
static int byte_unit(double v)
{
	int u = 0;

	while (u < 5 && fabs(v) >= 1024.0 * pow(1024.0, u))
		u++;
	return u;
}

const char *xl_svg_bytes(double v, char *buf, size_t n)
{
	int u = byte_unit(v);

	snprintf(buf, n, "%.3g %s", v / pow(1024.0, u), byte_units[u]);
	return buf;
}

/* A round step for about want ticks over span. */
static double nice_step(double span, int want)
{
	double raw = span / want, mag, norm;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	norm = raw / mag;
	return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

/* Steps of a time axis, seconds. */
static const double time_steps[] = {
	1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400,
};

static double axis_step(const struct xl_axis *a, double *unit)
{
	double span = a->hi - a->lo;

	*unit = 1;
	if (a->unit == XL_AXIS_BYTES) {
		*unit = pow(1024.0, byte_unit(fmax(fabs(a->hi), fabs(a->lo))));
		return nice_step(span / *unit, 5) * *unit;
	}
	if (a->unit == XL_AXIS_TIME) {
		for (size_t i = 0; i < sizeof(time_steps) / sizeof(time_steps[0]); i++)
			if (time_steps[i] * 6 >= span)
				return time_steps[i];
		return nice_step(span, 6);
	}
	return nice_step(span, 5);
}

static void tick_label(const struct xl_axis *a, double v, double unit, double step, char *buf,
		       size_t n)
{
	if (a->unit == XL_AXIS_TIME) {
		time_t t = (time_t)v;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(buf, n, step >= 86400 ? "%Y-%m-%d" : step >= 60 ? "%m-%d %H:%M" : "%H:%M:%S",
			 &tm);
	} else if (a->unit == XL_AXIS_BYTES) {
		snprintf(buf, n, "%g", round(v / unit * 1000) / 1000);
	} else if (a->unit == XL_AXIS_SECONDS) {
		snprintf(buf, n, "%gs", round(v * 1000) / 1000);
	} else {
		snprintf(buf, n, "%g", round(v * 1000) / 1000);
	}
}

void xl_chart_begin(struct xl_chart *c, struct xl_buf *b, int id, const char *title, double w,
		    double h, bool standalone)
{
	memset(c, 0, sizeof(*c));
	c->b = b;
	c->w = w;
	c->h = h;
	c->id = id;
	c->l = 78;
	c->r = w - 24;
	c->t = 62;
	c->bt = h - 52;
	c->legend_x = c->l;
	xl_buf_addf(b, "<svg class=\"chart\" %sviewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\""
		       " role=\"img\" aria-labelledby=\"svgt%d\">\n",
		    standalone ? "xmlns=\"http://www.w3.org/2000/svg\" " : "", w, h, w, h, id);
	if (standalone) {
		xl_buf_adds(b, "<style>\n");
		xl_buf_adds(b, xl_svg_style);
		xl_buf_adds(b, "</style>\n");
	}
	xl_buf_addf(b, "<title id=\"svgt%d\">", id);
	xl_xml_esc(b, title);
	xl_buf_adds(b, "</title>\n");
	xl_buf_addf(b, "<defs><pattern id=\"hatch%d\" width=\"6\" height=\"6\""
		       " patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		       "<rect width=\"2.5\" height=\"6\" class=\"bar-h-fill\"/></pattern></defs>\n", id);
	/* on a page the figure's heading names it */
	if (standalone) {
		xl_buf_adds(b, "<text class=\"title\" x=\"12\" y=\"22\">");
		xl_xml_esc(b, title);
		xl_buf_adds(b, "</text>\n");
	}
}

double xl_chart_px(const struct xl_chart *c, double x)
{
	double f = c->x.hi > c->x.lo ? (x - c->x.lo) / (c->x.hi - c->x.lo) : 0.5;

	return c->l + fmin(fmax(f, 0), 1) * (c->r - c->l);
}

double xl_chart_py(const struct xl_chart *c, double y)
{
	double f = c->y.hi > c->y.lo ? (y - c->y.lo) / (c->y.hi - c->y.lo) : 0.5;

	return c->bt - fmin(fmax(f, 0), 1) * (c->bt - c->t);
}

static void round_out(struct xl_axis *a)
{
	double unit, step;

	if (!isfinite(a->lo) || !isfinite(a->hi)) {
		a->lo = 0;
		a->hi = 1;
	}
	if (a->hi <= a->lo) {
		double d = a->unit == XL_AXIS_TIME ? 60 : fabs(a->hi) > 0 ? fabs(a->hi) * 0.1 : 1;

		a->lo -= d;
		a->hi += d;
	}
	if (a->unit == XL_AXIS_TIME)
		return;
	step = axis_step(a, &unit);
	a->lo = floor(a->lo / step) * step;
	a->hi = ceil(a->hi / step) * step;
}

static void axis_title(const struct xl_axis *a, char *buf, size_t n)
{
	double unit;

	if (a->unit == XL_AXIS_BYTES) {
		axis_step(a, &unit);
		snprintf(buf, n, "%s (%s)", a->title, byte_units[byte_unit(unit)]);
	} else if (a->unit == XL_AXIS_TIME) {
		snprintf(buf, n, "%s (UTC)", a->title);
	} else {
		snprintf(buf, n, "%s", a->title);
	}
}

void xl_chart_axes(struct xl_chart *c)
{
	struct xl_buf *b = c->b;
	double unit, step, v;
	char lab[64], title[200];
	int n;

	round_out(&c->x);
	round_out(&c->y);
	/* x ticks */
	step = axis_step(&c->x, &unit);
	v = ceil(c->x.lo / step) * step;
	for (n = 0; v <= c->x.hi + step * 1e-9 && n < 40; v += step, n++) {
		double px = xl_chart_px(c, v);

		tick_label(&c->x, v, unit, step, lab, sizeof(lab));
		xl_buf_addf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			    px, c->t, px, c->bt, px, c->bt + 16);
		xl_xml_esc(b, lab);
		xl_buf_adds(b, "</text>\n");
	}
	/* y ticks */
	step = axis_step(&c->y, &unit);
	v = ceil(c->y.lo / step) * step;
	for (n = 0; v <= c->y.hi + step * 1e-9 && n < 40; v += step, n++) {
		double py = xl_chart_py(c, v);

		tick_label(&c->y, v, unit, step, lab, sizeof(lab));
		xl_buf_addf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
			    c->l, py, c->r, py, c->l - 6, py + 4);
		xl_xml_esc(b, lab);
		xl_buf_adds(b, "</text>\n");
	}
	xl_buf_addf(b, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		       "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    c->l, c->bt, c->r, c->bt, c->l, c->t, c->l, c->bt);
	axis_title(&c->x, title, sizeof(title));
	xl_buf_addf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (c->l + c->r) / 2,
		    c->bt + 36);
	xl_xml_esc(b, title);
	xl_buf_adds(b, "</text>\n");
	axis_title(&c->y, title, sizeof(title));
	xl_buf_addf(b, "<text x=\"0\" y=\"0\" text-anchor=\"middle\""
		       " transform=\"translate(16 %.1f) rotate(-90)\">", (c->t + c->bt) / 2);
	xl_xml_esc(b, title);
	xl_buf_adds(b, "</text>\n");
}

static void mark_path(struct xl_buf *b, enum xl_mark m, double x, double y, double r)
{
	switch (m) {
	case XL_MARK_OK:
		xl_buf_addf(b, "<circle class=\"m-ok\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y, r);
		break;
	case XL_MARK_OOM:
		xl_buf_addf(b, "<path class=\"m-oom\" d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\"",
			    x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r);
		break;
	case XL_MARK_INFEASIBLE:
		xl_buf_addf(b, "<path class=\"m-inf\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"",
			    x, y - r * 1.2, x + r * 1.1, y + r * 0.8, x - r * 1.1, y + r * 0.8);
		break;
	case XL_MARK_STORM:
		xl_buf_addf(b, "<rect class=\"m-storm\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\""
			       " height=\"%.1f\"", x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
		break;
	default:
		xl_buf_addf(b, "<path class=\"m-fail\" d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"",
			    x, y - r * 1.2, x + r * 1.2, y, x, y + r * 1.2, x - r * 1.2, y);
		break;
	}
}

void xl_chart_mark(struct xl_chart *c, enum xl_mark m, double x, double y, double r,
		   const char *tip)
{
	mark_path(c->b, m, xl_chart_px(c, x), xl_chart_py(c, y), r);
	if (tip) {
		xl_buf_adds(c->b, "><title>");
		xl_xml_esc(c->b, tip);
		xl_buf_adds(c->b, "</title></");
		xl_buf_adds(c->b, m == XL_MARK_OK ? "circle" : m == XL_MARK_STORM ? "rect" : "path");
		xl_buf_adds(c->b, ">\n");
	} else {
		xl_buf_adds(c->b, "/>\n");
	}
}

void xl_chart_line(struct xl_chart *c, double x0, double y0, double x1, double y1, const char *cls)
{
	xl_buf_addf(c->b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    cls, xl_chart_px(c, x0), xl_chart_py(c, y0), xl_chart_px(c, x1),
		    xl_chart_py(c, y1));
}

void xl_chart_poly(struct xl_chart *c, const double *xs, const double *ys, size_t n,
		   const char *cls)
{
	xl_buf_addf(c->b, "<polygon class=\"%s\" points=\"", cls);
	for (size_t i = 0; i < n; i++)
		xl_buf_addf(c->b, "%s%.1f,%.1f", i ? " " : "", xl_chart_px(c, xs[i]),
			    xl_chart_py(c, ys[i]));
	xl_buf_adds(c->b, "\"/>\n");
}

void xl_chart_rect(struct xl_chart *c, double x0, double y0, double x1, double y1,
		   const char *cls, const char *tip)
{
	double px0 = xl_chart_px(c, x0), px1 = xl_chart_px(c, x1);
	double py0 = xl_chart_py(c, y0), py1 = xl_chart_py(c, y1);

	xl_buf_addf(c->b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
		    cls, fmin(px0, px1), fmin(py0, py1), fmax(fabs(px1 - px0), 1),
		    fabs(py1 - py0));
	if (strcmp(cls, "bar-h") == 0)
		xl_buf_addf(c->b, " fill=\"url(#hatch%d)\"", c->id);
	if (tip) {
		xl_buf_adds(c->b, "><title>");
		xl_xml_esc(c->b, tip);
		xl_buf_adds(c->b, "</title></rect>\n");
	} else {
		xl_buf_adds(c->b, "/>\n");
	}
}

void xl_chart_text(struct xl_chart *c, double x, double y, const char *cls, const char *text)
{
	xl_buf_addf(c->b, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, xl_chart_px(c, x) + 4,
		    xl_chart_py(c, y) - 4);
	xl_xml_esc(c->b, text);
	xl_buf_adds(c->b, "</text>\n");
}

void xl_chart_note(struct xl_chart *c, double px, double py, const char *text)
{
	xl_buf_addf(c->b, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", px,
		    py);
	xl_xml_esc(c->b, text);
	xl_buf_adds(c->b, "</text>\n");
}

void xl_chart_legend(struct xl_chart *c, enum xl_mark m, const char *swatch, bool line,
		     const char *label)
{
	double x = c->legend_x, y = 44;

	if (m < XL_MARK_COUNT) {
		mark_path(c->b, m, x + 6, y - 4, 4.5);
		xl_buf_adds(c->b, "/>\n");
	} else if (line) {
		xl_buf_addf(c->b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    swatch, x - 4, y - 4, x + 16, y - 4);
	} else {
		xl_buf_addf(c->b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"14\""
				  " height=\"10\"/>\n", swatch, x - 1, y - 9);
		if (strcmp(swatch, "bar-h") == 0)
			xl_buf_addf(c->b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\""
					  " fill=\"url(#hatch%d)\"/>\n", x - 1, y - 9, c->id);
	}
	xl_buf_addf(c->b, "<text x=\"%.1f\" y=\"%.1f\">", x + 20, y);
	xl_xml_esc(c->b, label);
	xl_buf_adds(c->b, "</text>\n");
	c->legend_x += 32 + 6.6 * (double)strlen(label);
}

void xl_chart_end(struct xl_chart *c)
{
	xl_buf_adds(c->b, "</svg>\n");
}
