/* fuzz_lint.c - the flag linter (catalog lookups, types, suggestions). */
#include <stdint.h>
#include <stddef.h>

#include "launcher/launcher.h"
#include "launcher/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_lint_bytes(data, size);
	return 0;
}
