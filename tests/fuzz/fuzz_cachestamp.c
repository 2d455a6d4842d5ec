/* fuzz_cachestamp.c - the key file kept in a compile cache directory (it is
 * in a directory others may write to) against a launch's settings. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_cachestamp(data, size);
	return 0;
}
