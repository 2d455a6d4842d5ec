/* gen-c.h - what the build-time generators (gen-catalog.c, gen-cachekeys.c)
 * share: writing C source. */
#ifndef XL_TOOLS_GEN_C_H
#define XL_TOOLS_GEN_C_H

#include <stdio.h>

/* Writes s as a C string literal (NULL as NULL): quotes and backslashes
 * escaped, bytes outside printable ASCII as octal escapes. */
static inline void gen_cstr(FILE *f, const char *s)
{
	if (!s) {
		fputs("NULL", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

#endif
