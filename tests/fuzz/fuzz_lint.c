/* fuzz_lint.c - the flag linter (catalog lookups, types, suggestions). */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_lint(data, size);
	return 0;
}
