/* test_observe.c - what a launch is and what it used, from outside the job:
 * the job's identity from argv (its own file, its interpreter), the limits
 * it runs under and their kinds, XLA's dump flags and when they are not
 * added, the memory-usage reports and their reuse on a cache hit, the
 * failed allocation of an out-of-memory line, the report file's figures. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/plan/job.h"
#include "launcher/run/dumpsetup.h"
#include "launcher/run/figures.h"
#include "launcher/run/outcome.h"
#include "launcher/watch/jobreport.h"
#include "launcher/run/supervise.h"
#include "launcher/run/xlafigure.h"

static int setup_dir(void **state)
{
	xl_verbosity = -1;
	return xl_test_dir_setup(state);
}

/* Resolves profile text (no launching environment). */
static struct xl_profile *profile_of(const char *name, const char *text)
{
	char *file = xl_asprintf("%s.yaml", name), *path = xl_test_write(file, text);
	struct xl_ctx ctx;
	struct xl_profile *p = NULL;

	memset(&ctx, 0, sizeof(ctx));
	ctx.profile_path = xl_test_dir;
	assert_int_equal(xl_profile_resolve(&ctx, path, NULL, XL_RESOLVE_FILE | XL_RESOLVE_NO_AMBIENT, &p), 0);
	free(file);
	free(path);
	return p;
}

/* ---- the failed allocation ----------------------------------------------------------------- */

static void test_oom_request(void **state)
{
	(void)state;
	assert_int_equal(xl_oom_request_bytes("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of"
					      " memory allocating 12918464632 bytes."), 12918464632LL);
	assert_int_equal(xl_oom_request_bytes("RESOURCE_EXHAUSTED: Out of memory while trying to"
					      " allocate 406913040 bytes."), 406913040LL);
	assert_int_equal(xl_oom_request_bytes("torch.OutOfMemoryError: CUDA out of memory. Tried to"
					      " allocate 2.00 GiB (GPU 0; 79.10 GiB total capacity)"),
			 2LL << 30);
	assert_int_equal(xl_oom_request_bytes("Tried to allocate 20.00 MiB"), 20LL << 20);
	assert_int_equal(xl_oom_request_bytes("RESOURCE_EXHAUSTED: Attempting to allocate 1.50G. That"
					      " was not possible."), (int64_t)(1.5 * (1LL << 30)));
	/* no size said */
	assert_int_equal(xl_oom_request_bytes("OSError: [Errno 12] Cannot allocate memory"), -1);
	assert_int_equal(xl_oom_request_bytes("MemoryError"), -1);
	assert_int_equal(xl_oom_request_bytes("cannot allocate -5 bytes"), -1);
	assert_int_equal(xl_oom_request_bytes(NULL), -1);
	assert_int_equal(xl_oom_request_bytes("allocate 99999999999999999999999 bytes"), -1);
}

/* The compiler's figure of a run from its programs' memory reports (read
 * from the dump by test_dump's reader), reused on a persistent-cache hit. */
static void test_modules_figure(void **state)
{
	json_t *mods, *prev;
	char src[400];

	(void)state;
	mods = json_pack("{s:i, s:i}", "jit_train_step", 3000, "jit__threefry_seed", 10);
	/* this run compiled both: its own figure */
	assert_int_equal(xl_xla_modules_figure(mods, NULL, NULL, src, sizeof(src)), 3000);
	assert_non_null(strstr(src, "jit_train_step (2 programs compiled)"));
	json_decref(mods);
	/* a persistent-cache hit compiles nothing: the last figure, marked so */
	mods = json_object();
	prev = json_pack("{s:i, s:i}", "jit_train_step", 3000, "jit_setup", 5);
	assert_int_equal(xl_xla_modules_figure(mods, prev, "run-7", src, sizeof(src)), 3000);
	assert_non_null(strstr(src, "seen in run run-7, reused: nothing compiled (persistent-cache hit)"));
	json_decref(mods);
	/* part of it compiled: those figures are this run's, the rest reused */
	mods = json_pack("{s:i}", "jit_setup", 9);
	assert_int_equal(xl_xla_modules_figure(mods, prev, "run-7", src, sizeof(src)), 3000);
	assert_int_equal(json_integer_value(json_object_get(mods, "jit_setup")), 9);
	assert_non_null(strstr(src, "1 reused from run run-7"));
	json_decref(mods);
	json_decref(prev);
	/* nothing at all */
	mods = json_object();
	assert_int_equal(xl_xla_modules_figure(mods, NULL, NULL, src, sizeof(src)), -1);
	json_decref(mods);
}

static char **env_of(const char *first, ...)
{
	char **e = xl_calloc(8, sizeof(char *));
	size_t n = 0;
	va_list ap;
	const char *s = first;

	va_start(ap, first);
	while (s && n < 7) {
		e[n++] = xl_strdup(s);
		s = va_arg(ap, const char *);
	}
	va_end(ap);
	return e;
}

static const char *env_get(char **e, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; e[i]; i++)
		if (strncmp(e[i], name, l) == 0 && e[i][l] == '=')
			return e[i] + l + 1;
	return NULL;
}

static void test_dump_setup(void **state)
{
	struct xl_profile *jaxp = profile_of("jaxjob", "description: x\nenv: {JAX_PLATFORMS: cpu}\n");
	struct xl_profile *timing = profile_of("timed", "description: x\nenv: {JAX_PLATFORMS: cpu}\n"
					       "policy: {timing: true}\n");
	struct xl_profile *plain = profile_of("plainjob", "description: x\nenv: {A: b}\n");
	json_t *parts = json_object();
	struct xl_xla_dump d;
	char **e;

	(void)state;
	/* a JAX job: the flags go to the end of XLA_FLAGS, into the run's directory */
	e = env_of("XLA_FLAGS=--xla_force_host_platform_device_count=4", "HOME=/h", NULL);
	xl_xla_dump_setup(jaxp, parts, "/runs/r1", false, &e, &d);
	assert_true(d.ours);
	assert_string_equal(d.dir, "/runs/r1/xla-dump");
	assert_string_equal(env_get(e, "XLA_FLAGS"), "--xla_force_host_platform_device_count=4 "
			    "--xla_dump_to=/runs/r1/xla-dump --xla_dump_hlo_as_text"
			    " --xla_dump_disable_metadata");
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* without XLA_FLAGS: set */
	e = env_of("HOME=/h", NULL);
	xl_xla_dump_setup(jaxp, parts, "/runs/r2", false, &e, &d);
	assert_true(xl_startswith(env_get(e, "XLA_FLAGS"), "--xla_dump_to=/runs/r2/xla-dump "));
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* the user's own dump is read, not replaced */
	e = env_of("XLA_FLAGS=--xla_dump_to=/mine --xla_dump_hlo_as_proto", NULL);
	xl_xla_dump_setup(jaxp, parts, "/runs/r3", false, &e, &d);
	assert_false(d.ours);
	assert_string_equal(d.dir, "/mine");
	assert_string_equal(env_get(e, "XLA_FLAGS"), "--xla_dump_to=/mine --xla_dump_hlo_as_proto");
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* ... unless it goes to XLA's stdout: then there is nothing to read,
	 * and no second dump is added (one --xla_dump_to would win) */
	e = env_of("XLA_FLAGS=--xla_dump_to=-", NULL);
	xl_xla_dump_setup(jaxp, parts, "/runs/r3b", false, &e, &d);
	assert_null(d.dir);
	assert_non_null(strstr(d.why, "not read: --xla_dump_to=- is not a directory"));
	assert_string_equal(env_get(e, "XLA_FLAGS"), "--xla_dump_to=-");
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* not added: timing runs, jobs without XLA, flags files, --no-xla-dump */
	e = env_of("HOME=/h", NULL);
	xl_xla_dump_setup(timing, parts, "/runs/r4", false, &e, &d);
	assert_null(d.dir);
	assert_non_null(strstr(d.why, "timing: true"));
	assert_null(env_get(e, "XLA_FLAGS"));
	xl_xla_dump_release(&d);
	xl_xla_dump_setup(plain, parts, "/runs/r5", false, &e, &d);
	assert_null(d.dir);
	assert_non_null(strstr(d.why, "not an XLA job"));
	xl_xla_dump_release(&d);
	xl_xla_dump_setup(jaxp, parts, "/runs/r6", true, &e, &d);
	assert_null(d.dir);
	assert_non_null(strstr(d.why, "--no-xla-dump"));
	xl_xla_dump_release(&d);
	xl_env_free(e);
	e = env_of("XLA_FLAGS=/etc/xla-flags.txt", NULL);
	xl_xla_dump_setup(jaxp, parts, "/runs/r7", false, &e, &d);
	assert_null(d.dir);
	assert_non_null(strstr(d.why, "flags file"));
	assert_string_equal(env_get(e, "XLA_FLAGS"), "/etc/xla-flags.txt");
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* a job is an XLA job by its bundle too */
	json_object_set_new(parts, "bundle", json_pack("{s:{s:s}}", "packages", "torch-xla", "2.9.0"));
	e = env_of("HOME=/h", NULL);
	xl_xla_dump_setup(plain, parts, "/runs/r8", false, &e, &d);
	assert_true(d.ours);
	xl_xla_dump_release(&d);
	xl_env_free(e);
	/* the shipped rules leave every token out of every key (JAX's and
	 * torch_xla's); rules that would see one: nothing is added, and why */
	{
		char why[240] = "";
		char *rules = xl_test_write("rules.yaml",
					    "jax:\n  flags:\n    exclude: [--xla_dump_to, --xla_dump_hlo_as_text,"
					    " --xla_dump_disable_metadata, --xla_dump_max_hlo_modules]\n"
					    "other:\n  flags:\n    exclude: [--xla_dump_to]\n");
		char *exc = xl_test_write("rules2.yaml",
					  "jax:\n  flags:\n    exclude: [--xla_dump_to, --xla_dump_hlo_as_text,"
					  " --xla_dump_disable_metadata, --xla_dump_max_hlo_modules]\n"
					  "    exceptions:\n      - {flag: --xla_dump_to, invalidates: always}\n");
		char *shipped = xl_data_path("etc/cachekeys.yaml");

		assert_true(xl_xla_dump_keyless(shipped, why, sizeof(why)));
		assert_false(xl_xla_dump_keyless(rules, why, sizeof(why)));
		assert_non_null(strstr(why, "--xla_dump_hlo_as_text would enter other's persistent-cache key"));
		assert_false(xl_xla_dump_keyless(exc, why, sizeof(why)));
		assert_non_null(strstr(why, "--xla_dump_to would enter jax's"));
		assert_false(xl_xla_dump_keyless("/nonexistent/cachekeys.yaml", why, sizeof(why)));
		assert_non_null(strstr(why, "cannot read"));
		/* the rules compiled into the binary, which a launch asks, say
		 * what the shipped file says; the same two refusals by tables */
		assert_true(xl_xla_dump_keyless_rules(xl_ck_runtimes, xl_ck_nruntimes, why, sizeof(why)));
		{
			static const char *const all[] = { "--xla_dump_to", "--xla_dump_hlo_as_text",
							   "--xla_dump_disable_metadata", NULL };
			static const char *const to_only[] = { "--xla_dump_to", NULL };
			static const struct xl_ck_exception to_exc[] = { { "--xla_dump_to", XL_CK_ALWAYS } };
			struct xl_ck_runtime rts[2];

			memset(rts, 0, sizeof(rts));
			rts[0].name = "jax";
			rts[0].exclude = all;
			rts[1].name = "other";
			rts[1].exclude = to_only;
			assert_true(xl_xla_dump_keyless_rules(rts, 1, why, sizeof(why)));
			assert_false(xl_xla_dump_keyless_rules(rts, 2, why, sizeof(why)));
			assert_non_null(strstr(why, "--xla_dump_hlo_as_text would enter other's persistent-cache key"));
			rts[0].exceptions = to_exc;
			rts[0].nexceptions = 1;
			assert_false(xl_xla_dump_keyless_rules(rts, 1, why, sizeof(why)));
			assert_non_null(strstr(why, "--xla_dump_to would enter jax's"));
			assert_false(xl_xla_dump_keyless_rules(rts, 0, why, sizeof(why)));
			assert_non_null(strstr(why, "names no runtime"));
		}
		free(rules);
		free(exc);
		free(shipped);
	}
	json_decref(parts);
	xl_profile_free(jaxp);
	xl_profile_free(timing);
	xl_profile_free(plain);
}

/* ---- the job's report file's figures ----------------------------------------------------------- */

static void test_report_figures(void **state)
{
	struct calib_attempt a;
	struct xl_jobreport r;
	char *path = xl_test_write("report.jsonl",
		"{\"kind\":\"memory\",\"predicted_bytes\":400,\"per_device_bytes\":100,\"source\":\"xla_memory_analysis\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":5000,\"source\":\"device_memory_stats\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":4000,\"source\":\"device_memory_stats\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":300,\"source\":\"host_rss\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":9,\"source\":\"user\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":70,\"memory_kind\":\"host_peak_vm\",\"source\":\"mine\"}\n"
		"not json\n{\"kind\":\"step\",\"step\":1}\n");

	(void)state;
	calib_attempt_init(&a);
	xl_jobreport_init(&r);
	xl_jobreport_read(&r, path);
	assert_int_equal(r.lines, 8);
	assert_int_equal(r.malformed, 1);
	xl_jobreport_figures(&r, &a);
	assert_int_equal(a.nfigures, 5);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_XLA_BUFFERS)->bytes, 100);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_DEVICE_PEAK)->bytes, 5000);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_HOST_PEAK_RSS)->bytes, 300);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_UNCLASSIFIED)->bytes, 9);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_HOST_PEAK_VM)->bytes, 70);
	assert_non_null(strstr(calib_attempt_figure(&a, false, CALIB_KIND_DEVICE_PEAK)->source,
			       "device_memory_stats"));
	/* the headline: the kind judged, else the most telling one seen */
	xl_observe_headline(&a, NULL);
	assert_int_equal(a.observed_kind, CALIB_KIND_DEVICE_PEAK);
	assert_int_equal(a.observed_bytes, 5000);
	calib_attempt_release(&a);
	xl_jobreport_release(&r);
	free(path);
}

/* The headline of a GPU job with nothing predicted: the device peak NVML
 * saw, though the launch was judged in the host's kind (no probe: the
 * cgroup's limit); with a prediction, the kind it was made in; a device
 * figure of the job's own report does not outrank the kind judged. */
static void test_headline_device(void **state)
{
	struct calib_attempt a;
	struct calib_estimate e;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.kind = CALIB_KIND_HOST_PEAK_RSS;
	e.predicted_bytes = CALIB_UNSET;
	calib_attempt_init(&a);
	calib_attempt_add_figure(&a, false, CALIB_KIND_HOST_PEAK_RSS, 5522309120LL, CALIB_BASIS_NONE,
				 CALIB_UNSET, "sampled");
	calib_attempt_add_figure(&a, false, CALIB_KIND_DEVICE_PEAK, 113233625088LL, CALIB_BASIS_NONE,
				 CALIB_UNSET, "NVML: the group's processes on their busiest device, sampled");
	xl_observe_headline(&a, &e);
	assert_int_equal(a.observed_kind, CALIB_KIND_DEVICE_PEAK);
	assert_int_equal(a.observed_bytes, 113233625088LL);
	/* predicted in the host's kind: that kind */
	e.known = true;
	e.predicted_bytes = 4LL << 30;
	e.error_bytes = 1LL << 30;
	xl_observe_headline(&a, &e);
	assert_int_equal(a.observed_kind, CALIB_KIND_HOST_PEAK_RSS);
	assert_int_equal(a.observed_bytes, 5522309120LL);
	calib_attempt_release(&a);
	/* a device figure from the job's report, nothing predicted: the kind judged */
	e.known = false;
	e.predicted_bytes = CALIB_UNSET;
	calib_attempt_init(&a);
	calib_attempt_add_figure(&a, false, CALIB_KIND_HOST_PEAK_RSS, 300, CALIB_BASIS_NONE,
				 CALIB_UNSET, "sampled");
	calib_attempt_add_figure(&a, false, CALIB_KIND_DEVICE_PEAK, 5000, CALIB_BASIS_NONE,
				 CALIB_UNSET, "device_memory_stats");
	xl_observe_headline(&a, &e);
	assert_int_equal(a.observed_kind, CALIB_KIND_HOST_PEAK_RSS);
	calib_attempt_release(&a);
}

/* Of two sources of one kind, the larger peak; on a tie, the line that
 * reached it first; a figure already there stays when it is as large. */
static void test_report_figures_order(void **state)
{
	struct calib_attempt a;
	struct xl_jobreport r;
	char *path = xl_test_write("order.jsonl",
		"{\"kind\":\"memory\",\"peak_bytes\":5,\"source\":\"device_memory_stats\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":10,\"source\":\"torch_xla_memory_info\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":10,\"source\":\"device_memory_stats\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":64,\"source\":\"host_rss\"}\n"
		"{\"kind\":\"memory\",\"peak_bytes\":7,\"memory_kind\":\"xla_buffers\"}\n"
		"{\"kind\":\"memory\",\"per_device_bytes\":100,\"source\":\"xla_memory_analysis\"}\n");

	(void)state;
	calib_attempt_init(&a);
	calib_attempt_add_figure(&a, false, CALIB_KIND_HOST_PEAK_RSS, 64, CALIB_BASIS_NONE,
				 CALIB_UNSET, "sampled");
	xl_jobreport_init(&r);
	xl_jobreport_read(&r, path);
	xl_jobreport_figures(&r, &a);
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_DEVICE_PEAK)->bytes, 10);
	assert_non_null(strstr(calib_attempt_figure(&a, false, CALIB_KIND_DEVICE_PEAK)->source,
			       "torch_xla_memory_info"));
	assert_string_equal(calib_attempt_figure(&a, false, CALIB_KIND_HOST_PEAK_RSS)->source,
			    "sampled");
	/* a line of the kind itself came first: the per-device prediction is not taken */
	assert_int_equal(calib_attempt_figure(&a, false, CALIB_KIND_XLA_BUFFERS)->bytes, 7);
	calib_attempt_release(&a);
	xl_jobreport_release(&r);
	free(path);
}

/* One rule for the report's counts: a peak written as a real is a figure
 * and reaches the limit, both or neither; a peak that is not a count is
 * neither. */
static void test_report_one_rule(void **state)
{
	static const struct {
		const char *text;
		bool counts;
	} cases[] = {
		{ "{\"kind\":\"memory\",\"peak_bytes\":2000000000.0,\"limit_bytes\":1000000000,"
		  "\"source\":\"device_memory_stats\"}\n", true },
		{ "{\"kind\":\"memory\",\"peak_bytes\":2000000000,\"limit_bytes\":1e9,"
		  "\"source\":\"device_memory_stats\"}\n", true },
		{ "{\"kind\":\"memory\",\"peak_bytes\":\"2000000000\",\"limit_bytes\":1000000000,"
		  "\"source\":\"device_memory_stats\"}\n", false },
		{ "{\"kind\":\"memory\",\"peak_bytes\":-2e9,\"limit_bytes\":1000000000,"
		  "\"source\":\"device_memory_stats\"}\n", false },
		/* a duplicated key is malformed for every reader */
		{ "{\"kind\":\"memory\",\"peak_bytes\":2000000000,\"peak_bytes\":1,"
		  "\"limit_bytes\":1000000000,\"source\":\"device_memory_stats\"}\n", false },
	};
	struct xl_sup_result sr = { .exit_code = 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = xl_test_write("rule.jsonl", cases[i].text);
		struct calib_attempt a;
		struct xl_jobreport r;
		struct xl_classified cl;
		const struct calib_figure *f;

		calib_attempt_init(&a);
		xl_jobreport_init(&r);
		xl_jobreport_read(&r, path);
		xl_jobreport_figures(&r, &a);
		xl_classify(&sr, NULL, NULL, &r, NULL, &cl);
		f = calib_attempt_figure(&a, false, CALIB_KIND_DEVICE_PEAK);
		if (cases[i].counts) {
			assert_int_equal(cl.outcome, XL_OUT_OOM);
			assert_non_null(f);
			assert_int_equal(f->bytes, 2000000000LL);
		} else {
			assert_int_equal(cl.outcome, XL_OUT_ERROR);
			assert_null(f);
		}
		calib_attempt_release(&a);
		xl_jobreport_release(&r);
		free(path);
	}
}

/* ---- the job and its limits -------------------------------------------------------------------- */

static void test_job_identity(void **state)
{
	char *script = xl_test_write("jobs/train.py", "print('hi')\n");
	char *other = xl_test_write("elsewhere/train.py", "print('hi')\n");
	char *tool = xl_test_write("bin/launcher", "#!/usr/bin/env python3\nprint(1)\n");
	char *mod = xl_test_write("pkg/trainer.py", "print(2)\n");
	char cwd[4096];
	struct xl_job a, b, c;
	char *argv_a[] = { "python3", script, "--batch", "64", NULL };
	char *argv_b[] = { "python3", "-u", other, "--batch", "64", NULL };
	char *argv_c[] = { "python3", "-X", "dev", "-m", "pkg.trainer", "3", NULL };

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	chmod(tool, 0755);
	/* the same script (by content, outside a repository) from two places: one job */
	assert_int_equal(xl_job_from_argv(argv_a, 4, NULL, &a), 0);
	assert_int_equal(xl_job_from_argv(argv_b, 5, NULL, &b), 0);
	assert_non_null(a.interpreter);
	assert_true(strstr(a.interpreter, "python3") != NULL);
	assert_string_equal(json_string_value(json_array_get(json_object_get(a.parts, "argv"), 0)), "python");
	assert_string_equal(json_string_value(json_array_get(json_object_get(a.parts, "argv"), 1)), "train.py");
	assert_true(json_equal(json_object_get(a.parts, "code"), json_object_get(b.parts, "code")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(a.parts, "code"), "file")), "train.py");
	assert_int_equal(strlen(json_string_value(json_object_get(json_object_get(a.parts, "code"), "sha256"))), 64);
	assert_string_equal(a.file, script);
	xl_job_release(&a);
	xl_job_release(&b);
	/* another script's content: another job */
	free(xl_test_write("elsewhere/train.py", "print('changed')\n"));
	assert_int_equal(xl_job_from_argv(argv_b, 5, NULL, &b), 0);
	assert_int_equal(xl_job_from_argv(argv_a, 4, NULL, &a), 0);
	assert_false(json_equal(json_object_get(a.parts, "code"), json_object_get(b.parts, "code")));
	xl_job_release(&a);
	xl_job_release(&b);
	/* python -m: the module's file under the current directory */
	assert_int_equal(chdir(xl_test_dir), 0);
	assert_int_equal(xl_job_from_argv(argv_c, 6, NULL, &c), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(c.parts, "code"), "module")), "pkg.trainer");
	assert_string_equal(json_string_value(json_object_get(json_object_get(c.parts, "code"), "file")), "trainer.py");
	xl_job_release(&c);
	/* an installed module: its name (its version is in the bundle) */
	{
		char *argv_d[] = { "python3", "-m", "json.tool", NULL };

		json_t *want = json_pack("{s:s}", "module", "json.tool");

		assert_int_equal(xl_job_from_argv(argv_d, 3, NULL, &c), 0);
		assert_true(json_equal(json_object_get(c.parts, "code"), want));
		json_decref(want);
		xl_job_release(&c);
	}
	/* a launcher script: its "#!" names the interpreter; the job is the .py it runs */
	{
		char *argv_e[] = { tool, "--nproc", "2", script, NULL };

		assert_int_equal(xl_job_from_argv(argv_e, 4, NULL, &c), 0);
		assert_non_null(c.interpreter);
		assert_string_equal(c.file, script);
		assert_string_equal(json_string_value(json_array_get(json_object_get(c.parts, "argv"), 3)), "train.py");
		assert_string_equal(json_string_value(json_array_get(json_object_get(c.parts, "argv"), 0)), "launcher");
		xl_job_release(&c);
	}
	/* python -c: the command's hash */
	{
		char *argv_f[] = { "python3", "-c", "print(1)", NULL };

		assert_int_equal(xl_job_from_argv(argv_f, 3, NULL, &c), 0);
		assert_int_equal(strlen(json_string_value(json_object_get(json_object_get(c.parts, "code"),
									     "command_sha256"))), 64);
		xl_job_release(&c);
	}
	/* a program that is not there: named, nothing more */
	{
		char *argv_g[] = { "no-such-program-here", "1", NULL };

		assert_int_equal(xl_job_from_argv(argv_g, 2, NULL, &c), 0);
		assert_null(c.interpreter);
		assert_int_equal(json_object_size(json_object_get(c.parts, "code")), 0);
		assert_int_equal(json_object_size(json_object_get(c.parts, "bundle")), 0);
		xl_job_release(&c);
	}
	assert_int_equal(chdir(cwd), 0);
	free(script);
	free(other);
	free(tool);
	free(mod);
}

static void test_limits(void **state)
{
	struct xl_profile *host = profile_of("hostjob", "description: x\nenv: {JAX_PLATFORMS: cpu}\n"
					     "limits: {address_space: 8GiB}\n");
	struct xl_profile *gpu = profile_of("gpujob", "description: x\nenv: {JAX_ENABLE_X64: 'false'}\n");
	struct xl_profile *frac = profile_of("fracjob", "description: x\n"
					     "env: {XLA_PYTHON_CLIENT_MEM_FRACTION: '0.5'}\n");
	struct xl_profile *torch = profile_of("torchjob", "description: x\nenv: {A: b}\n");
	struct calib_limit l[CALIB_MAX_LIMITS];
	struct calib_hardware hw;
	json_t *parts;
	size_t n;

	(void)state;
	assert_true(xl_job_on_host(host));
	assert_false(xl_job_on_host(gpu));
	/* the host: the address space bounds the largest process's address space */
	parts = json_pack("{s:{s:s, s:s, s:I}}", "hardware", "kind", "Xeon", "type", "host", "memory",
			  (json_int_t)24 << 30);
	n = xl_job_limits(host, parts, NULL, l, CALIB_MAX_LIMITS);
	assert_true(n >= 2);
	assert_int_equal(l[0].kind, CALIB_KIND_HOST_PEAK_VM);
	assert_int_equal(l[0].bytes, 8LL << 30);
	assert_string_equal(l[0].source, "limits.address_space");
	assert_int_equal(l[n - 1].kind, CALIB_KIND_HOST_PEAK_RSS);
	json_decref(parts);
	/* a GPU that JAX runs on: 0.75 of the device by default */
	memset(&hw, 0, sizeof(hw));
	snprintf(hw.kind, sizeof(hw.kind), "NVIDIA H100 80GB HBM3");
	snprintf(hw.backend, sizeof(hw.backend), "cuda");
	parts = json_pack("{s:{s:s, s:s, s:I}}", "hardware", "kind", hw.kind, "type", "accelerator",
			  "memory", (json_int_t)85000000000LL);
	n = xl_job_limits(gpu, parts, &hw, l, CALIB_MAX_LIMITS);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].kind, CALIB_KIND_DEVICE_PEAK);
	assert_int_equal(l[0].bytes, 63750000000LL);
	assert_non_null(strstr(l[0].source, "x 0.75 (JAX's default"));
	/* the device's figure is in the source where a share of it is the limit */
	assert_non_null(strstr(l[0].source, "device memory 79.2 GiB x 0.75"));
	/* ... or what XLA_PYTHON_CLIENT_MEM_FRACTION says */
	n = xl_job_limits(frac, parts, &hw, l, CALIB_MAX_LIMITS);
	assert_int_equal(l[0].bytes, 42500000000LL);
	assert_non_null(strstr(l[0].source, "x 0.5 (XLA_PYTHON_CLIENT_MEM_FRACTION)"));
	/* a job that is not JAX's: the device */
	n = xl_job_limits(torch, parts, &hw, l, CALIB_MAX_LIMITS);
	assert_int_equal(l[0].bytes, 85000000000LL);
	/* the limit is the whole device: printed beside its source, the
	 * figure is not repeated there ("16.0 GiB (device memory 16.0 GiB)") */
	assert_string_equal(l[0].source, "the device's memory");
	json_decref(parts);
	/* PJRT's figure is its allocator's limit, which the probe set at
	 * memory_fraction 1: the device's memory, of which JAX takes 0.75 */
	snprintf(hw.backend, sizeof(hw.backend), "pjrt:xla_cuda_plugin.so");
	snprintf(hw.memory_source, sizeof(hw.memory_source), "PJRT_Device_MemoryStats bytes_limit");
	parts = json_pack("{s:{s:s, s:s, s:I}}", "hardware", "kind", hw.kind, "type", "accelerator",
			  "memory", (json_int_t)85000000000LL);
	n = xl_job_limits(gpu, parts, &hw, l, CALIB_MAX_LIMITS);
	assert_int_equal(l[0].bytes, 63750000000LL);
	assert_non_null(strstr(l[0].source, "PJRT allocator limit at memory_fraction 1) x 0.75"));
	json_decref(parts);
	/* a device named by the profile, with units */
	parts = json_pack("{s:{s:s, s:s}}", "hardware", "kind", "tpu-v6e", "memory", "32GiB");
	n = xl_job_limits(torch, parts, NULL, l, CALIB_MAX_LIMITS);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].bytes, 32LL << 30);
	json_decref(parts);
	xl_profile_free(host);
	xl_profile_free(gpu);
	xl_profile_free(frac);
	xl_profile_free(torch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_request),
		cmocka_unit_test(test_modules_figure),
		cmocka_unit_test(test_dump_setup),
		cmocka_unit_test(test_report_figures),
		cmocka_unit_test(test_headline_device),
		cmocka_unit_test(test_report_figures_order),
		cmocka_unit_test(test_report_one_rule),
		cmocka_unit_test(test_job_identity),
		cmocka_unit_test(test_limits),
	};

	return XL_TEST_RUN(tests, setup_dir, xl_test_dir_teardown);
}
