/* diag.c - diagnostics and allocation wrappers. */
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

void xl_oom(void)
{
	static const char msg[] = "xlaunch: error: out of memory\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be said */
	}
	_exit(XL_EX_SOFTWARE);
}

void *xl_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		xl_oom();
	return p;
}

void *xl_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		xl_oom();
	return p;
}

void *xl_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		xl_oom();
	return q;
}

char *xl_strdup(const char *s)
{
	return xl_strndup(s, strlen(s));
}

char *xl_strndup(const char *s, size_t n)
{
	char *p = xl_malloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
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
