/* fuzz_observe.c - what xlaunch reads of a job's own words about memory:
 * an out-of-memory line's failed allocation, XLA's memory-usage report, a
 * report line's figures, and signature parts into a family.  The first byte
 * picks which. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/run/figures.h"
#include "launcher/watch/dump.h"
#include "launcher/watch/jobreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	struct calib_attempt a;
	struct xl_jobreport r;
	struct xl_jobreport_line l;

	xl_verbosity = -2;
	if (!size)
		return 0;
	text = xl_strndup((const char *)data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		if (xl_oom_request_bytes(text) < -1)
			abort();
		break;
	case 1:
		if (xl_dump_memory_report_total(text) < -1)
			abort();
		break;
	case 2:
		calib_attempt_init(&a);
		xl_jobreport_init(&r);
		xl_jobreport_line(&r, (const char *)data + 1, size - 1, &l);
		xl_jobreport_figures(&r, &a);
		xl_jobreport_release(&r);
		for (size_t i = 0; i < a.nfigures; i++)
			if ((unsigned)a.figures[i].kind >= CALIB_KIND_COUNT || a.figures[i].predicted)
				abort();
		calib_attempt_release(&a);
		break;
	default: {
		json_t *p = json_loadb((const char *)data + 1, size - 1, 0, NULL);
		json_t *coords = NULL;
		char hash[65];

		if (p && calib_family(p, hash, &coords) == 0) {
			if (strlen(hash) != 64 || !json_is_object(coords))
				abort();
		}
		json_decref(coords);
		json_decref(p);
	}
	}
	free(text);
	return 0;
}
