/* fuzz_profile.c - the profile loader and resolver on arbitrary bytes. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_profile(data, size);
	return 0;
}
