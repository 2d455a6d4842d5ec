/*
 * unit.h - what every unit test includes: cmocka (after the headers it
 * needs), fixtures, and one main that runs every test of a file or only
 * the ones named:
 *
 *	build/rel/tests/test_calib_store                     all of them
 *	build/rel/tests/test_calib_store test_migrations     one
 *	build/rel/tests/test_calib_store 'test_order_*'      a pattern (fnmatch)
 *	build/rel/tests/test_calib_store --list              their names
 *
 * A name that matches no test is an error (exit 2), so a typo never passes.
 */
#ifndef XLAUNCH_TESTS_UNIT_H
#define XLAUNCH_TESTS_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common/common.h"

/* A private temporary directory for the group: made by xl_test_dir_setup
 * (in $TMPDIR, else /tmp) and removed with everything in it by
 * xl_test_dir_teardown.  Use them as the group's setup and teardown, or
 * call them from the file's own. */
extern char xl_test_dir[256];
int xl_test_dir_setup(void **state);
int xl_test_dir_teardown(void **state);
/* xl_test_dir "/" name; caller frees. */
char *xl_test_path(const char *name);
/* Writes text to xl_test_dir/name (directories made as needed); returns
 * the path (caller frees).  Fails the test when it cannot. */
char *xl_test_write(const char *name, const char *text);

/* Runs tests[0..n) as one group with setup and teardown (either may be
 * NULL), filtered by the names in argv; XLAUNCH_DATADIR is set to "." when
 * unset, since the tests run from the source tree.  Returns main's exit
 * status. */
int xl_test_main(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown);
#define XL_TEST_RUN(tests, setup, teardown) \
	xl_test_main(argc, argv, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#endif
