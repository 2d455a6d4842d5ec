/* fuzz_import.c - `calib import` lines (JSON lines of attempts and probes)
 * into a real store in a temporary directory. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"

static struct calib_store *st;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	if (!st) {
		char dir[] = "/tmp/xlaunch-fuzz-import.XXXXXX";
		char *path;

		if (!mkdtemp(dir))
			abort();
		path = xl_asprintf("%s/calib.db", dir);
		if (calib_open(path, 0, &st, NULL) != 0)
			abort();
		free(path);
	}
	/* one input is a JSON-lines file */
	{
		struct calib_import_result res;

		calib_import(st, (const char *)data, size, &res);
		calib_import_result_release(&res);
	}
	return 0;
}
