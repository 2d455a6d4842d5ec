/* test_probe_run.c - the probe's ladder, isolation and cpu backend. */
#include "tests/unit/unit.h"

#include "probe/probe.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the limit of a probe expected to end by itself: a guard against a hang
 * only, however busy the host */
#define HANG_S 300

static const char *sget(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(xl_probe_stage_name(XL_STAGE_VERIFIED), "verified");
	assert_string_equal(xl_probe_state_name(XL_PROBE_HUNG), "hung");
	assert_int_equal(xl_probe_stage_parse("compiled"), XL_STAGE_COMPILED);
	assert_int_equal(xl_probe_stage_parse("nope"), -1);
}

static void test_parse_backends(void **state)
{
	struct xl_probe_opts o;
	char *err = NULL;

	(void)state;
	xl_probe_opts_init(&o);
	assert_true(xl_probe_parse_backends(&o, "cpu,opencl,cpu,pjrt:/x/libtpu.so", &err));
	assert_int_equal(o.backends.n, 3);
	assert_false(xl_probe_parse_backends(&o, "cudaa", &err));
	assert_non_null(strstr(err, "did you mean 'cuda'"));
	free(err);
	assert_false(xl_probe_parse_backends(&o, "pjrt:", &err));
	free(err);
	assert_false(xl_probe_parse_backends(&o, ",", &err));
	free(err);
	xl_probe_opts_release(&o);
}

static void fn_ok(struct xl_probe_rep *r, const char *arg)
{
	(void)arg;
	json_object_set_new(r->doc, "version", json_string("1.0"));
	for (int s = XL_STAGE_INSTALLED; s <= XL_STAGE_VERIFIED; s++)
		xl_probe_reached(r, (enum xl_probe_stage)s);
	json_object_set_new(r->doc, "bandwidth_gbs", json_real(1.5));
}

static void fn_fail(struct xl_probe_rep *r, const char *arg)
{
	(void)arg;
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	xl_probe_error(r, "first reason\n");
	xl_probe_error(r, "second reason");
}

static void fn_hang(struct xl_probe_rep *r, const char *arg)
{
	(void)arg;
	xl_probe_reached(r, XL_STAGE_INITIALIZED);
	for (;;)
		pause();
}

static void fn_crash(struct xl_probe_rep *r, const char *arg)
{
	(void)arg;
	xl_probe_reached(r, XL_STAGE_DEVICES);
	fprintf(stderr, "about to fall over\n");
	raise(SIGSEGV);
}

static void fn_exit(struct xl_probe_rep *r, const char *arg)
{
	(void)arg;
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	_exit(3);
}

/* Leaves a grandchild behind that would sleep forever; writes its pid. */
static void fn_grandchild(struct xl_probe_rep *r, const char *arg)
{
	pid_t g = fork();

	if (g == 0) {
		for (;;)
			pause();
	}
	{
		FILE *f = fopen(arg, "w");

		fprintf(f, "%d\n", (int)g);
		fclose(f);
	}
	xl_probe_reached(r, XL_STAGE_INSTALLED);
	for (;;)
		pause();
}

static void test_isolated_ok(void **state)
{
	json_t *o = xl_probe_isolated("t", fn_ok, NULL, HANG_S, NULL, NULL);

	(void)state;
	assert_string_equal(sget(o, "state"), "alive");
	assert_string_equal(sget(o, "stage"), "verified");
	assert_true(json_is_null(json_object_get(o, "error")));
	assert_string_equal(sget(o, "version"), "1.0");
	assert_true(json_number_value(json_object_get(o, "bandwidth_gbs")) == 1.5);
	json_decref(o);
}

static void test_isolated_fail(void **state)
{
	json_t *o = xl_probe_isolated("t", fn_fail, NULL, HANG_S, NULL, NULL);

	(void)state;
	assert_string_equal(sget(o, "state"), "installed");
	assert_string_equal(sget(o, "stage"), "installed");
	assert_string_equal(sget(o, "error"), "first reason");
	json_decref(o);
}

/* fn_hang never returns, so any end is the limit's doing.  The limit is 2 s,
 * then 8 and 32 where the child had not reached its stage by then (a host
 * so busy it had not run): the case needs the stage reached. */
static void test_isolated_hang(void **state)
{
	double t0 = xl_mono();
	json_t *o = NULL;

	(void)state;
	for (int limit = 2; limit <= 32; limit *= 4) {
		json_decref(o);
		o = xl_probe_isolated("t", fn_hang, NULL, limit, NULL, NULL);
		if (strcmp(sget(o, "stage"), "initialized") == 0)
			break;
		fprintf(stderr, "note: the child had not reached its stage in %d s; again\n", limit);
	}
	assert_true(xl_mono() - t0 < 300.0);
	assert_string_equal(sget(o, "state"), "hung");
	assert_string_equal(sget(o, "stage"), "initialized");
	assert_non_null(strstr(sget(o, "error"), "hung at initialized"));
	json_decref(o);
}

static void test_isolated_crash(void **state)
{
	json_t *o = xl_probe_isolated("t", fn_crash, NULL, HANG_S, NULL, NULL);

	(void)state;
	assert_string_equal(sget(o, "state"), "crashed");
	assert_string_equal(sget(o, "stage"), "devices");
	assert_non_null(strstr(sget(o, "error"), "crashed at devices (SIGSEGV)"));
	assert_non_null(strstr(sget(o, "error"), "about to fall over"));
	json_decref(o);
}

static void test_isolated_exit(void **state)
{
	json_t *o = xl_probe_isolated("t", fn_exit, NULL, HANG_S, NULL, NULL);

	(void)state;
	assert_string_equal(sget(o, "state"), "crashed");
	assert_non_null(strstr(sget(o, "error"), "exited with status 3"));
	json_decref(o);
}

static void test_no_child_left(void **state)
{
	char path[256];
	int fd, gpid = 0;
	json_t *o;
	FILE *f;
	bool gone = false;

	(void)state;
	snprintf(path, sizeof(path), "%s/xl-probe-gc-XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	/* 2 s for the child to start the grandchild and write its pid; 8 and
	 * 32 where it had not by then (a host so busy it had not run) */
	for (int limit = 2; limit <= 32 && gpid <= 0; limit *= 4) {
		o = xl_probe_isolated("t", fn_grandchild, path, limit, NULL, NULL);
		assert_string_equal(sget(o, "state"), "hung");
		json_decref(o);
		f = fopen(path, "r");
		assert_non_null(f);
		if (fscanf(f, "%d", &gpid) != 1)
			fprintf(stderr, "note: the child had not written its grandchild's pid in %d s; again\n",
				limit);
		fclose(f);
	}
	unlink(path);
	assert_true(gpid > 0);
	/* killed, then gone: 300 s at most, a guard against a hang */
	for (double end = xl_mono() + 300; !gone && xl_mono() < end;) {
		char stat[64], *text;

		snprintf(stat, sizeof(stat), "/proc/%d/stat", gpid);
		text = xl_read_file(stat, NULL, 0);
		/* gone, or a zombie waiting for init to reap it */
		gone = !text || strstr(text, ") Z ") != NULL;
		free(text);
		if (!gone)
			usleep(10000);
	}
	assert_true(gone);
}

static void test_cpu_in_process(void **state)
{
	struct xl_probe_rep r;
	json_t *v;

	(void)state;
	xl_probe_rep_init(&r, -1);
	xl_probe_cpu(&r, NULL);
	assert_int_equal(r.stage, XL_STAGE_VERIFIED);
	assert_null(json_object_get(r.doc, "error"));
	assert_true(json_number_value(json_object_get(r.doc, "bandwidth_gbs")) > 0);
	assert_true(json_number_value(json_object_get(r.doc, "gflops")) > 0);
	v = json_object_get(json_object_get(r.doc, "details"), "cores");
	assert_true(json_integer_value(v) >= 1);
	assert_int_equal(json_array_size(json_object_get(r.doc, "devices")), 1);
	/* a memory bandwidth: four times the last-level cache, or a quarter
	 * of the available memory when that is less */
	{
		json_t *d = json_object_get(r.doc, "details");
		json_int_t ws = json_integer_value(json_object_get(d, "working_set_bytes"));
		json_int_t llc = json_integer_value(json_object_get(d, "llc_bytes"));

		assert_true(llc > 0);
		assert_true(ws >= 4 * llc ||
			    strstr(sget(d, "working_set_rule"), "available memory") != NULL);
		assert_true(json_integer_value(json_object_get(d, "threads")) >= 1);
		assert_true(json_integer_value(json_object_get(d, "triad_passes")) >= 3);
	}
	xl_probe_rep_release(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_parse_backends),
		cmocka_unit_test(test_isolated_ok),
		cmocka_unit_test(test_isolated_fail),
		cmocka_unit_test(test_isolated_hang),
		cmocka_unit_test(test_isolated_crash),
		cmocka_unit_test(test_isolated_exit),
		cmocka_unit_test(test_no_child_left),
		cmocka_unit_test(test_cpu_in_process),
	};

	return XL_TEST_RUN(tests, NULL, NULL);
}
