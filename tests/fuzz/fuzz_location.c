/* fuzz_location.c - store locations (paths and URIs) as they are shown:
 * the password of a URI taken out. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_location(data, size);
	return 0;
}
