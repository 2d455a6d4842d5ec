/* fuzz_hloentry.c - HLO module texts and their ENTRY lines: the entry computation's parameters. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_hloentry(data, size);
	return 0;
}
