/* fuzz_profile.c - the profile loader and resolver on arbitrary bytes; and
 * the bytes as a profile name looked up on an empty profile path with no
 * data directory (a fresh install gone wrong): a message, never a crash.
 * The harness works in an empty directory of its own, so that ./profiles is
 * not there either; tools/fuzz.sh passes absolute paths. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/fuzz/targets.h"

static char empty_dir[] = "/tmp/xlaunch-fuzz-profile.XXXXXX";

static void remove_empty_dir(void)
{
	rmdir(empty_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(empty_dir) || chdir(empty_dir) != 0)
		abort();
	atexit(remove_empty_dir);
	setenv("XLAUNCH_DATADIR", "/nonexistent-xlaunch-data", 1);
	setenv("XDG_CONFIG_HOME", "/nonexistent-xlaunch-config", 1);
	unsetenv("XLAUNCH_PROFILE_PATH");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xl_verbosity = -2;
	xl_fuzz_profile(data, size);
	xl_fuzz_profile_name(data, size);
	return 0;
}
