/* fuzz_specifier.c - PEP 440 specifier parsing, normalization and ordering. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_specifier(data, size);
	return 0;
}
