/* fuzz_override.c - run's and exec's --set VAR=VALUE and --flag
 * VAR:NAME=VALUE, one per line: the arguments accepted always make a
 * layer that loads, whatever bytes their values hold. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_override(data, size);
	return 0;
}
