/* fuzz_profile.c - the profile loader and resolver on arbitrary bytes. */
#include <stdint.h>
#include <stddef.h>

#include "launcher/launcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_profile_fuzz(data, size);
	return 0;
}
