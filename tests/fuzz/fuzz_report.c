/* fuzz_report.c - the parser of the job's report file (lines a child
 * appends to XLAUNCH_REPORT), through its reader. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

#include "launcher/watch/jobreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xl_jobreport r;
	struct xl_jobreport_line l;
	int kind;

	xl_verbosity = -2;
	xl_jobreport_init(&r);
	kind = xl_jobreport_line(&r, (const char *)data, size, &l);
	if (r.lines != 1 || (kind == XL_JR_MALFORMED) != (r.malformed == 1) ||
	    (kind == XL_JR_MEMORY && l.peak_bytes >= 0 && r.peak_bytes != l.peak_bytes))
		abort();
	xl_jobreport_release(&r);
	return 0;
}
