/* fuzz_bundlecache.c - the bundle cache's lines, one interpreter's block
 * read back (every launch reads the file). */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_bundle_cache(data, size);
	return 0;
}
