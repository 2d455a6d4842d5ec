/* fuzz_xlareader.c - the model of XLA's flag reader: words, numbers and
 * the verdict on arbitrary bytes (NUL bytes included, as a flags file may
 * hold them). */
#include <stdint.h>
#include <stddef.h>

#include "launcher/flags/xlareader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_xla_fuzz(data, size);
	return 0;
}
