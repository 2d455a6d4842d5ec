/* fuzz_dumpname.c - names of XLA's dump directory: module ids, program names, file kinds. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_dumpname(data, size);
	return 0;
}
