/* fuzz_args.c - the table-driven option parser on the real command tables:
 * options of every kind, operands, subcommands by prefix, "--". */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;

	if (!quiet) {
		/* --help prints the help; nobody reads it here */
		quiet = freopen("/dev/null", "w", stdout) != NULL;
	}
	xl_verbosity = -2;
	xl_fuzz_args(data, size);
	return 0;
}
