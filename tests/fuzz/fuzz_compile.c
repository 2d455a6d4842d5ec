/* fuzz_compile.c - a child's output through the compile watch: the real
 * patterns of etc/outcomes.yaml, blocks across two streams, steps, the
 * storm rule and the manifest object. */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_compile(data, size);
	return 0;
}
