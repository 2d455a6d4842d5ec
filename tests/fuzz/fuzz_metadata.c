/* fuzz_metadata.c - PEP 440 metadata parsing, normalization and ordering. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_metadata(data, size);
	return 0;
}
