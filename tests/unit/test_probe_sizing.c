/* test_probe_sizing.c - how a bandwidth figure sizes its working set: the
 * cache hierarchy read from a sysfs-like tree (written here for each host
 * shape), the working-set rule and its caps, and the time budget a backend
 * has left. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "probe/probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024ull * 1024)

static char root[256];

/* root/cpuCPU/cache/indexIDX/ with its level, type, size and shared list. */
static void put_cache(int cpu, int idx, const char *level, const char *type, const char *size,
		      const char *shared)
{
	const char *names[] = { "level", "type", "size", "shared_cpu_list" };
	const char *vals[] = { level, type, size, shared };
	char *dir = xl_asprintf("%s/cpu%d/cache/index%d", root, cpu, idx);

	assert_int_equal(xl_mkdirs(dir, 0755), 0);
	for (int i = 0; i < 4; i++) {
		char *p;
		FILE *f;

		if (!vals[i])
			continue;
		p = xl_asprintf("%s/%s", dir, names[i]);
		f = fopen(p, "w");
		assert_non_null(f);
		fprintf(f, "%s\n", vals[i]);
		fclose(f);
		free(p);
	}
	free(dir);
}

/* root/rel as an empty directory. */
static void put_dir(const char *rel)
{
	char *dir = xl_asprintf("%s/%s", root, rel);

	assert_int_equal(xl_mkdirs(dir, 0755), 0);
	free(dir);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s/xlt-sysfs.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xl_asprintf("rm -rf '%s'", root);

	(void)state;
	unsetenv("XLAUNCH_HOST_ROOT");
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

/* Two sockets of two CPUs: an L3 of 32 MiB per socket, 1 MiB L2 per CPU. */
static void two_sockets(void)
{
	for (int cpu = 0; cpu < 4; cpu++) {
		char own[16];

		snprintf(own, sizeof(own), "%d", cpu);
		put_cache(cpu, 0, "1", "Data", "48K", own);
		put_cache(cpu, 1, "1", "Instruction", "32K", own);
		put_cache(cpu, 2, "2", "Unified", "1024K", own);
		put_cache(cpu, 3, "3", "Unified", "32768K", cpu < 2 ? "0-1" : "2-3");
	}
	/* not CPUs: ignored */
	put_dir("cpufreq");
	put_dir("cpuidle");
}

static void test_two_sockets(void **state)
{
	struct xl_host_cache c;
	cpu_set_t one_socket;

	(void)state;
	two_sockets();
	xl_host_cache_read(root, NULL, &c);
	assert_string_equal(c.source, "sysfs");
	assert_int_equal(c.level, 3);
	assert_int_equal(c.instances, 2);
	assert_true(c.instance_bytes == 32 * MIB);
	assert_true(c.llc_bytes == 64 * MIB);

	/* a process allowed on the first socket only steps over its L3 only */
	CPU_ZERO(&one_socket);
	CPU_SET(0, &one_socket);
	CPU_SET(1, &one_socket);
	xl_host_cache_read(root, &one_socket, &c);
	assert_int_equal(c.instances, 1);
	assert_true(c.llc_bytes == 32 * MIB);
}

/* No L3; the largest cache by size is an instruction cache, which does not
 * count; sizes in M and plain bytes. */
static void test_l2_last(void **state)
{
	struct xl_host_cache c;

	(void)state;
	put_cache(0, 0, "1", "Data", "64K", "0");
	put_cache(0, 1, "2", "Unified", "2M", "0");
	put_cache(0, 2, "3", "Instruction", "64M", "0-1");
	put_cache(1, 0, "1", "Data", "65536", "1");
	put_cache(1, 1, "2", "Unified", "2M", "1");
	put_cache(1, 2, "3", "Instruction", "64M", "0-1");
	xl_host_cache_read(root, NULL, &c);
	assert_int_equal(c.level, 2);
	assert_int_equal(c.instances, 2);
	assert_true(c.llc_bytes == 4 * MIB);
}

/* A shared cache without shared_cpu_list is counted once per CPU. */
static void test_no_shared_list(void **state)
{
	struct xl_host_cache c;

	(void)state;
	put_cache(0, 0, "3", "Unified", "8192K", NULL);
	put_cache(1, 0, "3", "Unified", "8192K", NULL);
	xl_host_cache_read(root, NULL, &c);
	assert_int_equal(c.instances, 2);
	assert_true(c.llc_bytes == 16 * MIB);
}

static void test_nothing_known(void **state)
{
	struct xl_host_cache c;
	char *missing = xl_asprintf("%s/none", root);

	(void)state;
	put_dir("cpu0/cache");
	xl_host_cache_read(root, NULL, &c);
	assert_true(c.llc_bytes == 0);
	assert_string_equal(c.source, "unknown");
	xl_host_cache_read(missing, NULL, &c);
	assert_true(c.llc_bytes == 0);
	free(missing);
}

static void test_working_set(void **state)
{
	struct xl_host_cache c;
	const char *rule = NULL;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.llc_bytes = 260 * MIB;
	assert_true(xl_host_working_set(&c, 0, &rule) == 1040 * MIB);
	assert_string_equal(rule, "4 x the last-level cache");
	assert_true(xl_host_working_set(&c, 24576 * MIB, &rule) == 1040 * MIB);
	/* never more than a quarter of what is available */
	assert_true(xl_host_working_set(&c, 2048 * MIB, &rule) == 512 * MIB);
	assert_non_null(strstr(rule, "quarter of the available memory"));
	c.llc_bytes = 4 * MIB;
	assert_true(xl_host_working_set(&c, 0, &rule) == 64 * MIB);
	assert_non_null(strstr(rule, "floor"));
	/* 16 MiB: four times it is the floor itself, and the rule says four times */
	c.llc_bytes = 16 * MIB;
	assert_true(xl_host_working_set(&c, 0, &rule) == 64 * MIB);
	assert_string_equal(rule, "4 x the last-level cache");
	/* the floor and the unknown cache are capped by what is available too */
	c.llc_bytes = 4 * MIB;
	assert_true(xl_host_working_set(&c, 128 * MIB, &rule) == 32 * MIB);
	assert_non_null(strstr(rule, "quarter of the available memory"));
	c.llc_bytes = 0;
	assert_true(xl_host_working_set(&c, 0, &rule) == 1024 * MIB);
	assert_non_null(strstr(rule, "unknown"));
	assert_true(xl_host_working_set(&c, 2048 * MIB, &rule) == 512 * MIB);
	assert_non_null(strstr(rule, "quarter of the available memory"));
}

/* root/rel holding text. */
static void put_file(const char *rel, const char *text)
{
	char *p = xl_asprintf("%s/%s", root, rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* $XLAUNCH_HOST_ROOT stands for the whole host: the caches and the memory
 * the probe sizes its working set by are read under it, a cache it does not
 * describe is unknown (no fallback to this host's sysconf), and without a
 * meminfo nothing caps the working set. */
static void test_host_root(void **state)
{
	char *sys = xl_asprintf("%s/sys/devices/system/cpu", root);
	struct xl_host_cache c;
	const char *rule;

	(void)state;
	setenv("XLAUNCH_HOST_ROOT", root, 1);
	put_dir("sys/devices/system/cpu");
	xl_host_cache_read(NULL, NULL, &c);
	assert_true(c.llc_bytes == 0);
	assert_string_equal(c.source, "unknown");
	assert_true(xl_host_mem_available() == 0);
	assert_true(xl_host_working_set(&c, xl_host_mem_available(), &rule) == 1024 * MIB);
	assert_non_null(strstr(rule, "unknown"));

	/* an 8 MiB L3 shared by two CPUs, as on a small 2-core VM */
	{
		char saved[256];

		snprintf(saved, sizeof(saved), "%s", root);
		snprintf(root, sizeof(root), "%s", sys);
		put_cache(0, 0, "3", "Unified", "8192K", "0-1");
		put_cache(1, 0, "3", "Unified", "8192K", "0-1");
		snprintf(root, sizeof(root), "%s", saved);
	}
	xl_host_cache_read(NULL, NULL, &c);
	assert_true(c.llc_bytes == 8 * MIB);
	assert_string_equal(c.source, "sysfs");
	assert_true(xl_host_working_set(&c, xl_host_mem_available(), &rule) == 64 * MIB);
	assert_non_null(strstr(rule, "floor"));

	put_dir("proc");
	put_file("proc/meminfo", "MemTotal:         262144 kB\nMemAvailable:     131072 kB\n");
	assert_true(xl_host_mem_available() == 128 * MIB);
	assert_true(xl_host_working_set(&c, xl_host_mem_available(), &rule) == 32 * MIB);
	assert_non_null(strstr(rule, "quarter of the available memory"));
	unsetenv("XLAUNCH_HOST_ROOT");
	free(sys);
}

/* This host, as the cpu probe reads it: an LLC is known on the machines the
 * tests run on (sysfs, else sysconf), and the CPUs are counted. */
static void test_this_host(void **state)
{
	struct xl_host_cache c;
	cpu_set_t set;
	int n = xl_host_cpus(&set);

	(void)state;
	assert_true(n >= 1);
	assert_int_equal(CPU_COUNT(&set), n);
	assert_true(xl_host_mem_available() > 0);
	xl_host_cache_read(NULL, &set, &c);
	if (c.llc_bytes == 0) {
		/* some VMs describe no cache in sysfs and sysconf both:
		 * test_host_root and test_nothing_known cover that shape */
		print_message("SKIP: this host describes no cache (sysfs and sysconf)\n");
		skip();
	}
	assert_true(c.level >= 2);
	assert_true(strcmp(c.source, "sysfs") == 0 || strcmp(c.source, "sysconf") == 0);
}

static void test_time_left(void **state)
{
	struct xl_probe_rep r;
	double before, left, after;

	(void)state;
	xl_probe_rep_init(&r, -1);
	assert_true(xl_probe_time_left(&r) == XL_PROBE_DEFAULT_TIMEOUT);
	/* 5 s less what passed around the call, however long a busy host took */
	before = xl_mono();
	r.deadline = before + 5;
	left = xl_probe_time_left(&r);
	after = xl_mono();
	assert_true(left <= 5 && left >= 5 - (after - before));
	r.deadline = xl_mono() - 1;
	assert_true(xl_probe_time_left(&r) == 0);
	xl_probe_rep_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_sockets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_l2_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_shared_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_known, setup, teardown),
		cmocka_unit_test(test_working_set),
		cmocka_unit_test_setup_teardown(test_host_root, setup, teardown),
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_time_left),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
