/* fuzz_report.c - the report-line parser (lines a child appends to
 * XLAUNCH_REPORT). */
#include <stdint.h>
#include <stddef.h>

#include "launcher/run/outcome.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xl_report r;

	xl_verbosity = -2;
	xl_report_init(&r);
	xl_report_line((const char *)data, size, &r);
	return 0;
}
