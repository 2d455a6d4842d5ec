/* alloc.c - allocation wrappers: the lowest level of common/.  Nothing here
 * uses another file of the module; buffers (buf.c) and diagnostics (diag.c)
 * are built on it.  Allocation failure ends the process (70). */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
