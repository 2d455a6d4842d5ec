/* fuzz_nvidia.c - the NVIDIA driver version texts (/proc and /sys). */
#include <stdint.h>
#include <stddef.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_nvidia(data, size);
	return 0;
}
