/* diag.c - diagnostics, and xl_asprintf (built on buffers). */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int xl_verbosity;
bool xl_color;

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	struct xl_buf b = XL_BUF_INIT;

	xl_buf_adds(&b, "xlaunch: ");
	if (kind)
		xl_buf_adds(&b, kind);
	xl_buf_vaddf(&b, fmt, ap);
	xl_buf_addc(&b, '\n');
	/* one write, so lines from many ranks do not interleave mid-line */
	fwrite(b.buf, 1, b.len, stderr);
	fflush(stderr);
	xl_buf_release(&b);
}

void xl_error(const char *fmt, ...)
{
	va_list ap;

	/* below -1 is silence: the fuzz harnesses feed millions of bad inputs */
	if (xl_verbosity < -1)
		return;
	va_start(ap, fmt);
	vreport(NULL, fmt, ap);
	va_end(ap);
}

void xl_warn(const char *fmt, ...)
{
	va_list ap;

	if (xl_verbosity < 0)
		return;
	va_start(ap, fmt);
	vreport(xl_color ? "\033[33mwarning:\033[0m " : "warning: ", fmt, ap);
	va_end(ap);
}

void xl_info(const char *fmt, ...)
{
	va_list ap;

	if (xl_verbosity < 0)
		return;
	va_start(ap, fmt);
	vreport(NULL, fmt, ap);
	va_end(ap);
}

void xl_debug(const char *fmt, ...)
{
	va_list ap;

	if (xl_verbosity < 1)
		return;
	va_start(ap, fmt);
	vreport("debug: ", fmt, ap);
	va_end(ap);
}

char *xl_asprintf(const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return xl_buf_detach(&b);
}
