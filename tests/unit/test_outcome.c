/* test_outcome.c - how a launch ended, from what a real job printed: the
 * captures of a two-process JAX job in tests/data/runtime-output/ (made by
 * tools/runtime-output.sh ranks), each with the exit status the shell saw,
 * streamed through the scanner and classified.  A rank that JAX stopped
 * because another rank left without the orderly shutdown says so; a rank
 * that failed on its own, or a clean job, does not. */
#include "tests/unit/unit.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/run/outcome.h"
#include "launcher/run/supervise.h"

static struct xl_patterns pats;

static int setup(void **state)
{
	xl_verbosity = -1;
	if (xl_patterns_load(NULL, &pats) != 0)
		return -1;
	return xl_test_dir_setup(state);
}

static int teardown(void **state)
{
	xl_patterns_release(&pats);
	return xl_test_dir_teardown(state);
}

/* Streams the capture (less its header line) through a scanner in pieces
 * of 7 bytes, as a pipe would deliver it, and fills *sr from its
 * "(exit status N)" line: N = 128 + a signal is a death by that signal. */
static void replay(const char *name, struct xl_scan *s, struct xl_sup_result *sr)
{
	char *path = xl_asprintf("tests/data/runtime-output/%s", name);
	size_t len;
	char *text = xl_read_file(path, &len, 0);
	const char *body, *st;

	assert_non_null(text);
	body = strchr(text, '\n') + 1;
	xl_scan_init(s, &pats);
	for (const char *p = body; p < text + len; p += 7)
		xl_scan_feed(s, p, (size_t)(text + len - p) < 7 ? (size_t)(text + len - p) : 7);
	xl_scan_finish(s);
	memset(sr, 0, sizeof(*sr));
	st = strstr(body, "(exit status ");
	if (st)
		sr->exit_code = atoi(st + strlen("(exit status "));
	if (sr->exit_code > 128) {
		sr->signaled = true;
		sr->sig = sr->exit_code - 128;
	}
	free(text);
	free(path);
}

static void classify(const char *name, struct xl_classified *cl)
{
	struct xl_scan se;
	struct xl_sup_result sr;

	replay(name, &se, &sr);
	xl_classify(&sr, NULL, &se, NULL, NULL, cl);
	xl_scan_release(&se);
}

/* Rank 0, which hosts the coordination service, left without the barrier:
 * rank 1's JAX aborted ("Socket closed").  A crash, named as a peer's exit. */
static void test_service_closed(void **state)
{
	struct xl_classified cl;
	struct xl_scan se;
	struct xl_sup_result sr;

	(void)state;
	replay("jax-ranks-no-barrier-rank0-leaves-rank1.txt", &se, &sr);
	assert_true(sr.signaled);
	assert_int_equal(sr.sig, SIGABRT);
	assert_non_null(se.peer);
	assert_string_equal(se.peer->id, "jax-service-closed");
	assert_non_null(strstr(se.peer_line, "Terminating process because the JAX distributed service"));
	xl_scan_release(&se);

	classify("jax-ranks-no-barrier-rank0-leaves-rank1.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_CRASH);
	assert_non_null(strstr(cl.reason, "another rank's exit closed the distributed runtime's coordination service"));
	assert_non_null(strstr(cl.reason, "killed by signal 6"));
	assert_non_null(strstr(cl.reason, "jax-service-closed: "));

	/* the rank that left ended 0: nothing to explain */
	classify("jax-ranks-no-barrier-rank0-leaves-rank0.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_OK);
}

/* Rank 1 left; rank 0's final barrier (a Gloo collective) failed, and the
 * job's exception handler exited 1: an error, named as a peer's exit. */
static void test_collective_peer_closed(void **state)
{
	struct xl_classified cl;

	(void)state;
	classify("jax-ranks-no-barrier-rank1-leaves-rank0.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_ERROR);
	assert_non_null(strstr(cl.reason, "a collective failed because another rank's process had exited"));
	assert_non_null(strstr(cl.reason, "exited with status 1; gloo-peer-closed: "));
}

/* Rank 1 left and rank 0 stayed past the heartbeat timeout: the service
 * ended rank 0 (an abort), named as a peer's exit. */
static void test_peer_unhealthy(void **state)
{
	struct xl_classified cl;

	(void)state;
	classify("jax-ranks-no-barrier-rank1-leaves-wait-rank0.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_CRASH);
	assert_non_null(strstr(cl.reason, "another rank left the job without jax.distributed.shutdown() or died"));
	assert_non_null(strstr(cl.reason, "jax-peer-unhealthy: "));
}

/* The job that ends in order: nothing matches, both ranks ok; the same
 * clean output with a failing status is a plain failure, not a peer's. */
static void test_clean_end(void **state)
{
	static const char *const clean[] = {
		"jax-ranks-clean-rank0.txt", "jax-ranks-clean-rank1.txt",
		"jax-ranks-no-barrier-rank1-leaves-rank1.txt",
	};
	struct xl_classified cl;

	(void)state;
	for (size_t i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		struct xl_scan se;
		struct xl_sup_result sr;

		replay(clean[i], &se, &sr);
		assert_null(se.peer);
		assert_int_equal(sr.exit_code, 0);
		xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
		assert_int_equal(cl.outcome, XL_OUT_OK);
		sr.exit_code = 134;
		sr.signaled = true;
		sr.sig = SIGABRT;
		xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
		assert_int_equal(cl.outcome, XL_OUT_CRASH);
		assert_string_equal(cl.reason, "killed by signal 6 (Aborted)");
		xl_scan_release(&se);
	}
}

/* Out of memory first, then stopped by a peer: the rank's own OOM wins,
 * and a timeout, a storm stopped or a forwarded signal is still named as
 * such. */
static void test_order(void **state)
{
	static const char oom[] = "RESOURCE_EXHAUSTED: Out of memory allocating 1073741824 bytes.\n";
	struct xl_classified cl;
	struct xl_scan se;
	struct xl_sup_result sr;

	(void)state;
	replay("jax-ranks-no-barrier-rank0-leaves-rank1.txt", &se, &sr);
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_CRASH);
	sr.timed_out = true;
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_TIMEOUT);
	sr.timed_out = false;
	/* ended by xlaunch for a storm: compile-storm, whatever the signal
	 * did, with the verdict of that moment */
	sr.storm_stopped = true;
	sr.storm_at_s = 4.04;
	snprintf(sr.storm_reason, sizeof(sr.storm_reason), "jit(train_step) recompiled 21 times after warm-up");
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_COMPILE_STORM);
	assert_true(cl.storm);
	assert_string_equal(cl.reason, "stopped after 4.0 s (on_storm: stop): jit(train_step) recompiled 21 times"
			    " after warm-up");
	sr.storm_stopped = false;
	/* ended by xlaunch at a compile over the limit: oom, with the
	 * compiler's figure, whatever the signal did */
	sr.early_oom = true;
	sr.early_oom_at_s = 2.71;
	snprintf(sr.early_oom_reason, sizeof(sr.early_oom_reason),
		 "compiler: jit(train_step) needs 64.0 GiB of 16.0 GiB (limits.address_space)");
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_OOM);
	assert_string_equal(cl.reason, "compiler: jit(train_step) needs 64.0 GiB of 16.0 GiB"
			    " (limits.address_space), stopped after 2.7 s");
	sr.early_oom = false;
	xl_scan_feed(&se, oom, sizeof(oom) - 1);
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_OOM);
	/* the lines on stdout count as well */
	xl_classify(&sr, &se, NULL, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_OOM);
	xl_scan_release(&se);
}

/* The real TPU compiler (libtpu 0.0.42.1, compiling ahead of time for a
 * v5e slice on a host without a TPU) refused a program too large for HBM:
 * oom by the TPU pattern, with what it needs and what the device has. */
static void test_tpu_compile_oom(void **state)
{
	struct xl_classified cl;
	struct xl_scan se;
	struct xl_sup_result sr;
	int64_t need, have;

	(void)state;
	replay("tpu-compile-oom.txt", &se, &sr);
	assert_non_null(se.oom_id);
	assert_string_equal(se.oom_id, "tpu-compile-hbm-total");
	assert_true(xl_tpu_hbm_oom(se.oom_line, &need, &have));
	assert_int_equal(need, 48LL << 30);
	assert_int_equal(have, (int64_t)(15.75 * (1 << 30)));
	xl_scan_release(&se);
	classify("tpu-compile-oom.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_OOM);
	assert_non_null(strstr(cl.reason, "tpu-compile-hbm-total: "));

	/* the issue's own figures; lines without both are no figures */
	assert_true(xl_tpu_hbm_oom("RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for "
				   "HLO temporaries (22.82G) exceeds available HBM (15.75G).", &need, &have));
	assert_int_equal(need, (int64_t)(22.82 * (1 << 30) + 0.5));
	assert_false(xl_tpu_hbm_oom("Ran out of memory on HBM", &need, &have));
	assert_false(xl_tpu_hbm_oom("memory required for x (1.5Q) exceeds available HBM (2G)", &need, &have));
	assert_false(xl_tpu_hbm_oom("exceeds available HBM (2G) memory required for x (1G)", &need, &have));
	assert_true(xl_tpu_hbm_oom("memory required for x (512.00M) exceeds available HBM (100B)", &need, &have));
	assert_int_equal(need, 512LL << 20);
	assert_int_equal(have, 100);
}

/* A second process of the host started libtpu while another held it:
 * JAX raised (exit 1).  An error named as the device held elsewhere, never
 * a crash, even when the runtime aborts. */
static void test_tpu_lockfile(void **state)
{
	struct xl_classified cl;
	struct xl_scan se;
	struct xl_sup_result sr;

	(void)state;
	classify("tpu-lockfile.txt", &cl);
	assert_int_equal(cl.outcome, XL_OUT_ERROR);
	assert_non_null(strstr(cl.reason, "the TPU is held by another process of this host"));
	assert_non_null(strstr(cl.reason, "libtpu-lockfile: "));
	replay("tpu-lockfile.txt", &se, &sr);
	sr.signaled = true;
	sr.sig = SIGABRT;
	sr.exit_code = 128 + SIGABRT;
	xl_classify(&sr, NULL, &se, NULL, NULL, &cl);
	assert_int_equal(cl.outcome, XL_OUT_ERROR);
	xl_scan_release(&se);
}

/* A peer_exit pattern without its reason, or a reason that is not text,
 * is refused with its place. */
static void test_bad_peer_patterns(void **state)
{
	static const char *const bad[] = {
		"peer_exit:\n  - {id: a, text: x}\n",
		"peer_exit:\n  - {id: a, text: x, reason: ''}\n",
		"peer_exit:\n  - {id: a, text: x, reason: [y]}\n",
		"peer_exit:\n  - {id: a, reason: y}\n",
		"peer_exit: {id: a, text: x, reason: y}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xl_patterns p;
		char *path = xl_test_write("outcomes.yaml", bad[i]);

		assert_int_equal(xl_patterns_load(path, &p), 65);
		free(path);
	}
	{
		struct xl_patterns p;
		char *path = xl_test_write("outcomes.yaml", "peer_exit:\n  - {id: a, text: x, reason: y}\n");

		assert_int_equal(xl_patterns_load(path, &p), 0);
		assert_int_equal(p.npeer, 1);
		assert_string_equal(p.peer[0].reason, "y");
		xl_patterns_release(&p);
		free(path);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_service_closed),
		cmocka_unit_test(test_collective_peer_closed),
		cmocka_unit_test(test_peer_unhealthy),
		cmocka_unit_test(test_clean_end),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_bad_peer_patterns),
		cmocka_unit_test(test_tpu_compile_oom),
		cmocka_unit_test(test_tpu_lockfile),
	};

	return XL_TEST_RUN(tests, setup, teardown);
}
