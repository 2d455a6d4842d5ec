/* unit.c - fixtures and the filtering main of the unit tests (unit.h). */
#include "tests/unit/unit.h"

#include <fnmatch.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char xl_test_dir[256];

int xl_test_dir_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(xl_test_dir, sizeof(xl_test_dir), "%s/xlaunch-unit.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(xl_test_dir) ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 ? 0 : -1;
}

int xl_test_dir_teardown(void **state)
{
	(void)state;
	if (!*xl_test_dir)
		return 0;
	/* children first; links are removed, not followed */
	return nftw(xl_test_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

char *xl_test_path(const char *name)
{
	return xl_asprintf("%s/%s", xl_test_dir, name);
}

char *xl_test_write(const char *name, const char *text)
{
	char *path = xl_test_path(name);
	char *slash = strrchr(path, '/');
	FILE *f;

	*slash = '\0';
	assert_int_equal(xl_mkdirs(path, 0700), 0);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

int xl_test_main(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown)
{
	struct CMUnitTest *run = calloc(n ? n : 1, sizeof(*run));
	const char *group = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	size_t nrun = 0;
	int rc;

	if (!run)
		return 2;
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", tests[i].name);
		free(run);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		bool any = false;

		for (size_t i = 0; i < n; i++)
			if (fnmatch(argv[a], tests[i].name, 0) == 0)
				any = true;
		if (!any) {
			fprintf(stderr, "%s: no test called '%s' (--list shows them)\n", group, argv[a]);
			free(run);
			return 2;
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool wanted = argc < 2;

		for (int a = 1; a < argc && !wanted; a++)
			wanted = fnmatch(argv[a], tests[i].name, 0) == 0;
		if (wanted)
			run[nrun++] = tests[i];
	}
	if (!getenv("XLAUNCH_DATADIR"))
		setenv("XLAUNCH_DATADIR", ".", 1);
	rc = _cmocka_run_group_tests(group, run, nrun, setup, teardown);
	free(run);
	return rc;
}
