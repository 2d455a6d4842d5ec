/* test_watch_storm.c - compilations from the runtimes' own lines (the captures in
 * tests/data/runtime-output/ and lines made here with chosen arrival
 * times), the report file read as it grows, and the storm rule by steps,
 * by the shape of the compile times and by torch.compile's recompile
 * limit; the patterns file's errors. */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/watch/watch.h"
#include "launcher/watch/events.h"
#include "tests/fuzz/targets.h"

static struct xl_cpats pats;

static int setup(void **state)
{
	xl_verbosity = -1;
	if (xl_cpats_read(NULL, &pats) != 0)
		return -1;
	return xl_test_dir_setup(state);
}

static int teardown(void **state)
{
	xl_cpats_release(&pats);
	return xl_test_dir_teardown(state);
}

static void watch_init(struct xl_watch *w, const char *step_pattern, const char *report)
{
	struct xl_watch_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.pats = &pats;
	cfg.rule = pats.rule;
	cfg.step_pattern = step_pattern;
	cfg.jobreport_path = report;
	cfg.start = 1000.0;
	xl_watch_init(w, &cfg);
}

/* Feeds text line by line, the first at time t, each next one dt later;
 * returns the time after the last line. */
static double feed(struct xl_watch *w, struct xl_cblock *b, const char *text, double t, double dt)
{
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char *line = xl_strndup(p, n);

		xl_watch_line(w, b, line, n, t);
		free(line);
		t += dt;
		p += n;
		if (*p)
			p++;
	}
	return t;
}

/* A capture (its first line is the command), all lines at once, then the
 * end of the run a moment later. */
static void replay(struct xl_watch *w, const char *name, const char *step_pattern,
		   struct xl_storm *s)
{
	char *path = xl_asprintf("tests/data/runtime-output/%s", name);
	size_t len;
	char *text = xl_read_file(path, &len, 0);
	struct xl_cblock b;

	assert_non_null(text);
	watch_init(w, step_pattern, NULL);
	xl_cblock_init(&b);
	feed(w, &b, strchr(text, '\n') + 1, 1000.5, 0);
	xl_cblock_close(w, &b);
	xl_watch_finish(w, 1000.6);
	xl_watch_verdict(w, s);
	free(text);
	free(path);
}

static const struct xl_cfn *fn(const struct xl_watch *w, const char *name)
{
	for (size_t i = 0; i < w->nfns; i++)
		if (strcmp(w->fns[i].name, name) == 0)
			return &w->fns[i];
	fail_msg("no function '%s'", name);
	return NULL;
}

static void test_jax_drift(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	const struct xl_cfn *f;

	(void)state;
	replay(&w, "jax-drift-cold.txt", "^step ([0-9]+) ", &s);
	/* the job's own count: 40 programs of step and two helpers */
	assert_int_equal(s.compiles, 42);
	assert_int_equal(s.recompiles, 39);
	assert_true(s.storm);
	assert_string_equal(s.by, "steps");
	f = fn(&w, "jit(step)");
	assert_int_equal(f->compiles, 40);
	assert_int_equal(f->after_warmup, 34);   /* steps 6..39: after step 5 */
	assert_non_null(strstr(s.reason, "jit(step) (jax_shape_drift.py:75) recompiled 34 times after warm-up (step 5): "));
	/* one count of recompilations in the line: no other */
	assert_null(strstr(s.reason, "40 times"));
	assert_non_null(strstr(f->cause, "different input types: at x, now f32[55,8] and before f32[16,8]"));
	/* where JAX said the function was called: its place */
	assert_true(xl_endswith(f->place, "jax_shape_drift.py:75"));
	assert_non_null(strstr(s.reason, "different input types"));
	assert_int_equal(fn(&w, "jit(convert_element_type)")->compiles, 1);
	xl_watch_release(&w);

	/* the same lines with a warm persistent cache: loads, not compilations */
	replay(&w, "jax-drift-warm.txt", "^step ([0-9]+) ", &s);
	assert_int_equal(s.compiles, 0);
	assert_int_equal(s.cache_hits, 42);
	assert_false(s.storm);
	assert_int_equal(fn(&w, "jit(step)")->loads, 40);
	xl_watch_release(&w);

	/* one shape: three programs, no storm */
	replay(&w, "jax-steady-cold.txt", "^step ([0-9]+) ", &s);
	assert_int_equal(s.compiles, 3);
	assert_int_equal(s.recompiles, 0);
	assert_false(s.storm);
	xl_watch_release(&w);

	/* without JAX_EXPLAIN_CACHE_MISSES the argument types say what changed */
	replay(&w, "jax-drift-nocache.txt", "^step ([0-9]+) ", &s);
	assert_true(s.storm);
	assert_non_null(strstr(s.reason, "new input types: now (float32[8,2], float32[55,8], float32[55,2]), "
					 "before (float32[8,2], float32[54,8], float32[54,2])"));
	xl_watch_release(&w);

	/* entries too quick to be written, in JAX's words */
	replay(&w, "jax-steady-not-written.txt", NULL, &s);
	assert_int_equal(w.not_written.n, 3);
	assert_string_equal(w.not_written.v[0], "jit_convert_element_type: it took < 1.00 seconds to compile (0.01s)");
	xl_watch_release(&w);
}

static void test_torch_xla(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	const struct xl_cfn *f;

	(void)state;
	/* about twenty lines per compilation, counted once */
	replay(&w, "ptxla-debug1-storm.txt", "^step ([0-9]+) ", &s);
	assert_int_equal(s.compiles, 20);
	assert_true(s.storm);
	f = fn(&w, "main");
	assert_int_equal(f->compiles, 20);
	assert_int_equal(f->graphs.n, 20);
	assert_true(xl_endswith(f->place, "examples/train_torch_xla.py:99"));
	assert_string_equal(f->cause, "user torch_xla.sync");
	assert_non_null(strstr(s.reason, "main (train_torch_xla.py:99) recompiled "));
	xl_watch_release(&w);

	/* one late recompilation: counted, named, no storm */
	replay(&w, "ptxla-debug2-late-recompile.txt", "^step ([0-9]+) ", &s);
	assert_int_equal(s.compiles, 2);
	assert_int_equal(s.recompiles, 1);
	assert_false(s.storm);
	assert_int_equal(fn(&w, "main")->last_step, 6);
	xl_watch_release(&w);

	/* the cache is written on the CPU and cannot be read back */
	replay(&w, "ptxla-cache-second-launch.txt", NULL, &s);
	assert_int_equal(w.cache_unreadable, 1);
	assert_string_equal(w.unreadable_reason,
			    "UNIMPLEMENTED: Deserializing serialized executable not supported.");
	assert_string_equal(w.unreadable_runtime, "torch_xla");
	xl_watch_release(&w);
}

static void test_torch_compile(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	const struct xl_cfn *f;

	(void)state;
	/* no logging asked for: the limit alone says it */
	replay(&w, "torch-compile-drift-static.txt", NULL, &s);
	assert_true(s.storm);
	assert_string_equal(s.by, "recompile-limit");
	f = fn(&w, "forward");
	assert_true(f->limit_hit);
	assert_int_equal(f->limit, 8);
	assert_int_equal(f->compiles, 8);
	assert_true(xl_endswith(f->place, "examples/train_torch_compile.py:59"));
	assert_string_equal(f->limit_reason, "0/7: tensor 'x' size mismatch at index 0. expected 15, actual 16");
	assert_non_null(strstr(s.reason, "it runs uncompiled (eager) from then on; last reason: 0/7"));
	xl_watch_release(&w);

	/* TORCH_LOGS=recompiles: 8 blocks, the 8th compiled nothing */
	replay(&w, "torch-compile-drift-static-logs.txt", NULL, &s);
	f = fn(&w, "forward");
	assert_int_equal(f->compiles, 8);
	assert_int_equal(s.recompiles, 7);
	assert_string_equal(f->first_reason, "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 9");
	assert_true(s.storm);
	xl_watch_release(&w);

	/* automatic dynamic shapes: one recompilation, no storm */
	replay(&w, "torch-compile-dynamic-logs.txt", NULL, &s);
	assert_int_equal(s.compiles, 2);
	assert_int_equal(s.recompiles, 1);
	assert_false(s.storm);
	assert_string_equal(fn(&w, "forward")->cause, "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 9");
	xl_watch_release(&w);

	/* a graph break: the default warning and the logged lines are one break */
	replay(&w, "torch-compile-graph-break-logs.txt", NULL, &s);
	assert_int_equal(w.gb_count, 1);
	assert_int_equal(w.ngbs, 1);
	assert_true(xl_endswith(w.gbs[0].place, "examples/train_torch_compile.py:64"));
	assert_string_equal(w.gbs[0].reason, "Unsupported Tensor.item() call with capture_scalar_outputs=False");
	assert_false(s.storm);
	xl_watch_release(&w);
	replay(&w, "torch-compile-graph-break.txt", NULL, &s);
	assert_int_equal(w.gb_count, 1);
	assert_string_equal(w.gbs[0].reason, "Tensor.item()");
	xl_watch_release(&w);
}

/* Compilations of one function at chosen times, no steps, each taking
 * secs seconds by its line. */
static void timed_secs(struct xl_watch *w, int n, double t0, double dt, double secs, double end,
		       struct xl_storm *s)
{
	struct xl_cblock b;
	double t = t0;
	char line[96];

	watch_init(w, NULL, NULL);
	xl_cblock_init(&b);
	snprintf(line, sizeof(line), "Finished XLA compilation of jit(f) in %.3f sec", secs);
	for (int i = 0; i < n; i++, t += dt)
		xl_watch_line(w, &b, line, strlen(line), 1000 + t);
	xl_cblock_close(w, &b);
	xl_watch_finish(w, 1000 + end);
	xl_watch_verdict(w, s);
}

static void timed(struct xl_watch *w, int n, double t0, double dt, double end, struct xl_storm *s)
{
	timed_secs(w, n, t0, dt, 0.01, end, s);
}

static void test_time_rule(void **state)
{
	struct xl_watch w;
	struct xl_storm s;

	(void)state;
	/* one function compiled again and again back to back, then a quiet
	 * end about as long: no warm-up (that compiles programs, not one
	 * program twenty times) but a storm with no pause in it, by its cost */
	timed(&w, 20, 0.5, 0.01, 0.9, &s);
	assert_true(s.storm);
	assert_string_equal(s.by, "time");
	assert_string_equal(s.rule, "cost");
	assert_int_equal(s.recompiles, 19);
	assert_int_equal(s.after_cost, 14);
	xl_watch_release(&w);
	timed(&w, 20, 0.5, 0, 1.5, &s);
	assert_false(s.storm);
	xl_watch_release(&w);
	/* a new program every step, until shortly before the end: a storm */
	timed(&w, 20, 0.5, 0.1, 2.45, &s);
	assert_true(s.storm);
	assert_string_equal(s.rule, "arrival");
	assert_non_null(strstr(s.reason, "jit(f) recompiled 13 times after warm-up (the first third of"
					 " the run): "));
	xl_watch_release(&w);
	/* ... however long the exit after it takes, up to the storm's own
	 * length, nearly (the old rule called the first one ok: its exit was longer than
	 * four of its gaps) */
	timed(&w, 30, 1.0, 0.05, 3.0, &s);
	assert_true(s.storm);
	xl_watch_release(&w);
	timed(&w, 30, 1.0, 0.05, 1.0 + 29 * 0.05 * 1.8, &s);
	assert_true(s.storm);
	xl_watch_release(&w);
	/* a quiet time longer than the compilations before it looks, from
	 * outside, like a job that compiled at start and then ran: no storm */
	timed(&w, 30, 1.0, 0.05, 6.0, &s);
	assert_false(s.storm);
	xl_watch_release(&w);
	/* on an hour's scale: one every five minutes, to the end */
	timed(&w, 14, 60, 300, 60 + 13 * 300 + 200, &s);
	assert_true(s.storm);
	xl_watch_release(&w);
	/* a few late recompilations are no storm */
	timed(&w, 8, 1, 100, 900, &s);
	assert_false(s.storm);
	xl_watch_release(&w);
}

/* Compilations of functions fns[] (NULL: train_step) at chosen times with
 * their durations (lines saying "in X sec" when each ends). */
static void costly_fns(struct xl_watch *w, const char *const *fns, const double *start,
		       const double *secs, size_t n, double end, struct xl_storm *s)
{
	struct xl_cblock b;

	watch_init(w, NULL, NULL);
	xl_cblock_init(&b);
	for (size_t i = 0; i < n; i++) {
		char line[96];

		snprintf(line, sizeof(line), "Finished XLA compilation of jit(%s) in %.3f sec",
			 fns ? fns[i] : "train_step", secs[i]);
		xl_watch_line(w, &b, line, strlen(line), 1000 + start[i] + secs[i]);
	}
	xl_cblock_close(w, &b);
	xl_watch_finish(w, 1000 + end);
	xl_watch_verdict(w, s);
}

static void costly(struct xl_watch *w, const double *start, const double *secs, size_t n,
		   double end, struct xl_storm *s)
{
	costly_fns(w, NULL, start, secs, n, end, s);
}

static void test_cost_rule(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	/* the slow form seen on TPU runs: compiled at start, then again at
	 * step 40 (73 s), 196 (a minute) and 312 (two), 1,000 steps in all */
	static const double start[] = { 5, 77, 197, 292 }, secs[] = { 60, 73, 60, 120 };
	static const double bstart[] = { 1, 1.2, 1.4, 1.6, 1.8, 2.0 };
	static const double bsecs[] = { 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 };

	(void)state;
	costly(&w, start, secs, 4, 558, &s);
	assert_true(s.storm);
	assert_string_equal(s.rule, "cost");
	assert_string_equal(s.by, "time");
	assert_int_equal(s.after_cost, 3);
	assert_true(s.share > 0.5 && s.share < 0.52);
	assert_non_null(strstr(s.reason, "jit(train_step) recompiled 3 times after warm-up, taking 253.0 s:"
					 " 51% of the 493.0 s after it was spent recompiling (more than 25%)"));
	xl_watch_release(&w);
	/* the same three, cheap: no storm */
	{
		static const double cheap[] = { 60, 0.5, 0.5, 0.5 };

		costly(&w, start, cheap, 4, 558, &s);
		assert_false(s.storm);
		assert_true(s.share >= 0 && s.share < 0.01);
		xl_watch_release(&w);
	}
	/* one costly late recompilation is not a storm that keeps costing */
	costly(&w, start, secs, 2, 558, &s);
	assert_false(s.storm);
	xl_watch_release(&w);
	/* compilations back to back at start are warm-up, however costly */
	costly(&w, bstart, bsecs, 6, 3.5, &s);
	assert_false(s.storm);
	assert_int_equal(s.after_cost, 0);
	xl_watch_release(&w);
}

/* With no steps to see, the cost rule's warm-up is the first burst of
 * compilations; a function recompiled on every step with no pause makes
 * one burst of the whole run, so that burst ends at its (warmup_steps +
 * 1)-th recompilation. */
static void test_cost_burst(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	double start[18], secs[18];
	const char *names[18];
	static const char *const six[] = { "a", "b", "c", "d", "e", "f" };

	(void)state;
	/* a new program every step: 2 s of compiling and 0.1 s of step,
	 * twelve times, then the end (too few after the first third for the
	 * arrival rule) */
	for (int i = 0; i < 12; i++) {
		start[i] = 1 + i * 2.1;
		secs[i] = 2;
	}
	costly(&w, start, secs, 12, 26.5, &s);
	assert_true(s.storm);
	assert_string_equal(s.rule, "cost");
	assert_int_equal(s.after_cost, 6);
	assert_true(fabs(w.cost_from_s - start[6]) < 1e-6);
	assert_true(s.share > 0.8);
	assert_non_null(strstr(s.reason, "jit(train_step) recompiled 6 times after warm-up, taking 12.0 s"));
	xl_watch_release(&w);
	/* a few shapes of one function at start (4 recompilations, no more
	 * than warmup_steps), then steady: warm-up */
	costly(&w, start, secs, 5, 30, &s);
	assert_false(s.storm);
	assert_int_equal(s.after_cost, 0);
	assert_true(w.cost_from_s > start[4] + secs[4] - 1e-6);
	xl_watch_release(&w);
	/* several functions compiled once each at start, then steady */
	for (int i = 0; i < 8; i++) {
		names[i] = six[i % 6];
		start[i] = 1 + i * 1.05;
		secs[i] = 1;
	}
	names[6] = "g";
	names[7] = "h";
	costly_fns(&w, names, start, secs, 8, 30, &s);
	assert_false(s.storm);
	assert_int_equal(s.recompiles, 0);
	assert_true(w.cost_from_s > start[7] + secs[7] - 1e-6);
	xl_watch_release(&w);
	/* six functions three shapes each, back to back: twelve
	 * recompilations, none more than twice of one function */
	for (int i = 0; i < 18; i++) {
		names[i] = six[i % 6];
		start[i] = 1 + i * 0.55;
		secs[i] = 0.5;
	}
	costly_fns(&w, names, start, secs, 18, 30, &s);
	assert_false(s.storm);
	assert_int_equal(s.recompiles, 12);
	assert_int_equal(s.after_cost, 0);
	xl_watch_release(&w);
}

static void test_step_rule(void **state)
{
	struct xl_watch w;
	struct xl_cblock b;
	struct xl_storm s;
	double t = 1000;

	(void)state;
	/* a step pattern from the profile: compilations after step 5 count */
	watch_init(&w, "^it ([0-9]+):", NULL);
	xl_cblock_init(&b);
	for (int i = 0; i < 15; i++) {
		char line[64];

		if (i == 0 || i > 5)
			t = feed(&w, &b, "Finished XLA compilation of jit(f) in 0.01 sec", t, 0.01);
		snprintf(line, sizeof(line), "it %d: loss 1.0", i);
		t = feed(&w, &b, line, t, 0.01);
	}
	xl_cblock_close(&w, &b);
	xl_watch_finish(&w, t + 100);
	xl_watch_verdict(&w, &s);
	assert_int_equal(w.steps, 15);
	assert_true(w.steps_from_output);
	assert_string_equal(s.by, "steps");
	assert_int_equal(s.after_warmup, 9);
	assert_true(s.storm);
	xl_watch_release(&w);
}

static void test_report_live(void **state)
{
	struct xl_watch w;
	struct xl_storm s;
	char *path;
	FILE *f;

	(void)state;
	/* a count with every step: placed in the steps it happened in */
	path = xl_test_path("report.jsonl");
	f = fopen(path, "w");
	for (int i = 0; i < 20; i++)
		fprintf(f, "{\"kind\":\"compile\",\"count\":%d}\n{\"kind\":\"step\",\"step\":%d,\"step_time_s\":0.5}\n",
			i + 1, i);
	fclose(f);
	watch_init(&w, NULL, path);
	xl_watch_poll_jobreport(&w, 1001);
	xl_watch_finish(&w, 1002);
	xl_watch_verdict(&w, &s);
	assert_int_equal(s.compiles, 20);
	assert_true(w.steps_from_report);
	assert_true(s.storm);
	assert_int_equal(s.after_warmup, 14);
	assert_true(w.first_step_s >= 0);
	assert_true(w.jobreport_first_step_time > 0.49 && w.jobreport_first_step_time < 0.51);
	xl_watch_release(&w);

	/* a count reported only after the last step is a total: no storm */
	f = fopen(path, "w");
	for (int i = 0; i < 20; i++)
		fprintf(f, "{\"kind\":\"step\",\"step\":%d}\n", i);
	fprintf(f, "{\"kind\":\"compile\",\"count\":50,\"cache_hits\":3}\n");
	fclose(f);
	watch_init(&w, NULL, path);
	xl_watch_poll_jobreport(&w, 1001);
	xl_watch_finish(&w, 1002);
	xl_watch_verdict(&w, &s);
	assert_int_equal(s.compiles, 50);
	assert_int_equal(s.cache_hits, 3);
	assert_false(s.storm);
	xl_watch_release(&w);

	/* a line cut in two by the poll is read whole */
	f = fopen(path, "w");
	fputs("{\"kind\":\"st", f);
	fclose(f);
	watch_init(&w, NULL, path);
	xl_watch_poll_jobreport(&w, 1001);
	f = fopen(path, "a");
	fputs("ep\",\"step\":3}\n", f);
	fclose(f);
	xl_watch_poll_jobreport(&w, 1001.1);
	xl_watch_finish(&w, 1002);
	assert_int_equal(w.steps, 1);
	assert_int_equal(w.step, 3);
	xl_watch_release(&w);
	free(path);
}

/* A step whose line says when it was written is placed then, not when the
 * file was read (later: the report is polled, and a busy host is slow to
 * poll); a time after the read or before the run is not believed. */
static void test_report_times(void **state)
{
	struct xl_watch w;
	char *path = xl_test_path("report.jsonl");
	FILE *f;

	(void)state;
	watch_init(&w, NULL, path);   /* the run started at 1000 (monotonic) */
	f = fopen(path, "w");
	fprintf(f, "{\"kind\":\"step\",\"step\":0,\"t\":%.6f}\n", w.wall_origin + 0.25);
	fprintf(f, "{\"kind\":\"step\",\"step\":1,\"t\":%.6f}\n", w.wall_origin + 9.0);
	fprintf(f, "{\"kind\":\"step\",\"step\":2,\"t\":%.6f}\n", w.wall_origin - 9.0);
	fprintf(f, "{\"kind\":\"step\",\"step\":3}\n");
	fclose(f);
	xl_watch_poll_jobreport(&w, 1002);
	xl_watch_finish(&w, 1003);
	assert_int_equal(w.nstep_t, 4);
	assert_true(fabs(w.step_t[0] - 0.25) < 1e-3);   /* when it was written */
	assert_true(fabs(w.first_step_s - 0.25) < 1e-3);
	assert_true(fabs(w.step_t[1] - 2.0) < 1e-9);    /* later than read: the read */
	assert_true(fabs(w.step_t[2] - 2.0) < 1e-9);    /* before the run: the read */
	assert_true(fabs(w.step_t[3] - 2.0) < 1e-9);    /* no time: the read */
	xl_watch_release(&w);
	free(path);
}

/* etc/outcomes.yaml with one thing wrong is refused with its place */
static void test_bad_patterns(void **state)
{
	static const char *const bad[] = {
		"compile_events:\n  - {id: a, runtime: jax, event: compild, text: x}\n",
		"compile_events:\n  - {id: a, runtime: jax, event: compiled, regex: 'x(y)', function: 2}\n",
		"compile_events:\n  - {id: a, runtime: jax, event: guard, in: shapes, text: x}\n",
		"compile_events:\n  - {id: a, runtime: jax, event: compiled}\n",
		"compile_events:\n  - {id: a, runtime: jax, event: compiled, text: x, functon: 1}\n",
		"compile_events:\n  - {id: a, runtime: jax, event: compiled, regex: '('}\n",
		"compile_storm: {warmup_step: 3}\n",
		"compile_storm: {quiet_gaps: 0}\n",
		"block_lines: -1\n",
		"compile_internal: [jax]\n",
		"compile_internal: {jax: {prefix: _, name: [iota]}}\n",
		"compile_internal: {jax: {names: iota}}\n",
		"compile_internal: {jax: {names: [[iota]]}}\n",
		"compile_internal: {jax: {prefix: ''}}\n",
		"compile_internal: {[jax]: {prefix: _}}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xl_cpats p;
		char *path = xl_test_write("outcomes.yaml", bad[i]);

		assert_int_equal(xl_cpats_read(path, &p), 65);
		free(path);
	}
}

/* The fuzz entry point on its seeds and hostile bytes: no crash, counts sane. */
static void test_fuzz_entry(void **state)
{
	static const char *const seeds[] = {
		"jax-drift-cold", "ptxla-debug1-late-recompile", "torch-compile-drift-static-logs",
		"torch-compile-graph-break-logs", "ptxla-cache-second-launch", "jax-ranks-rank0-leaves",
	};
	static const char hostile[] =
		"\x07Compilation Analysis: Compilation Cause\nCompilation Analysis:   \n"
		"[0/0] torch._dynamo hit config.recompile_limit (99999999999999999999)\n"
		"   function: '' (:)\n   last reason: \n"
		"[9/9] [__recompiles] Recompiling function f in x:1\n[__recompiles]     - \n"
		"Persistent compilation cache hit for ''\nFinished XLA compilation of () in 1\n"
		"step 99999999999999999999999 \n\n\n";

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char *path = xl_asprintf("tests/fuzz/corpus/compile/%s", seeds[i]);
		size_t len;
		char *data = xl_read_file(path, &len, 0);

		assert_non_null(data);
		/* the last three seeds have no compilation in their first 4 KB */
		assert_true(xl_fuzz_compile((const uint8_t *)data, len) > (i < 3 ? 0 : -1));
		free(data);
		free(path);
	}
	assert_int_equal(xl_fuzz_compile(NULL, 0), 0);
	assert_true(xl_fuzz_compile((const uint8_t *)hostile, sizeof(hostile) - 1) >= 0);
}

/* Steps 0..nsteps-1, each printing "step N" after its compilations: per
 * step, for each of fns[] whose rate divides the step, one compilation
 * taking secs[] (by its line); user_first: the user's line comes first in
 * each step, else last.  The same job, its lines in either order. */
struct stepfn {
	const char *name;
	int every;        /* compiles at the steps divisible by this */
	int per_step;     /* compilations at such a step */
	double secs;
};

static void stepped(struct xl_watch *w, const struct stepfn *fns, size_t nfns, int nsteps, bool reverse,
		    struct xl_storm *s)
{
	struct xl_cblock b;
	double t = 1000.1;
	char line[128];

	watch_init(w, "^step ([0-9]+)$", NULL);
	xl_cblock_init(&b);
	for (int i = 0; i < nsteps; i++) {
		for (size_t k = 0; k < nfns; k++) {
			const struct stepfn *f = &fns[reverse ? nfns - 1 - k : k];

			if (i % f->every)
				continue;
			for (int j = 0; j < f->per_step; j++) {
				t += f->secs;
				snprintf(line, sizeof(line), "Finished XLA compilation of jit(%s) in %.3f sec", f->name,
					 f->secs);
				xl_watch_line(w, &b, line, strlen(line), t);
			}
		}
		t += 0.01;
		snprintf(line, sizeof(line), "step %d", i);
		xl_watch_line(w, &b, line, strlen(line), t);
	}
	xl_cblock_close(w, &b);
	xl_watch_finish(w, t + 0.01);
	xl_watch_verdict(w, s);
}

/* A user's function and JAX's own programs storming in the same steps:
 * the user's is named, whichever compiled more, took longer or came
 * first; JAX's are listed after it as what they are. */
static void test_storm_culprit(void **state)
{
	/* jnp.ones for a new shape: broadcast_in_dim twice a step, costlier */
	const struct stepfn fns[] = {
		{ "broadcast_in_dim", 1, 2, 0.05 },
		{ "_normal", 1, 1, 0.04 },
		{ "train_step", 1, 1, 0.03 },
	};
	struct xl_watch w;
	struct xl_storm s;

	(void)state;
	for (int order = 0; order < 2; order++) {
		stepped(&w, fns, 3, 40, order == 1, &s);
		assert_true(s.storm);
		assert_true(fn(&w, "jit(broadcast_in_dim)")->internal);
		assert_true(fn(&w, "jit(_normal)")->internal);
		assert_false(fn(&w, "jit(train_step)")->internal);
		assert_string_equal(w.fns[s.top].name, "jit(train_step)");
		assert_int_equal(s.nranked, 3);
		assert_string_equal(w.fns[s.ranked[1]].name, "jit(broadcast_in_dim)");
		assert_string_equal(w.fns[s.ranked[2]].name, "jit(_normal)");
		assert_non_null(strstr(s.reason, "jit(train_step) recompiled 34 times after warm-up (step 5): "));
		assert_non_null(strstr(s.reason, "; JAX's own programs recompiling with it: jit(broadcast_in_dim)"
					 " (68), jit(_normal) (34)"));
		{
			json_t *j = xl_watch_json(&w, &s), *sf = json_object_get(j, "storm_functions");

			assert_int_equal(json_array_size(sf), 3);
			assert_string_equal(json_string_value(json_object_get(json_array_get(sf, 0), "name")),
					    "jit(train_step)");
			assert_true(json_is_true(json_object_get(json_array_get(sf, 1), "internal")));
			json_decref(j);
		}
		xl_watch_release(&w);
	}
	/* JAX's own programs alone: named as JAX's */
	stepped(&w, fns, 2, 40, false, &s);
	assert_true(s.storm);
	assert_non_null(strstr(s.reason, "JAX's own jit(broadcast_in_dim) recompiled 68 times after warm-up"));
	xl_watch_release(&w);
}

/* Two functions of the user's storming at different rates: the one whose
 * recompilations cost more is named, the other listed; the cost is time
 * first (a slow program recompiling less often can cost more), then count. */
static void test_storm_rates(void **state)
{
	const struct stepfn same[] = {
		{ "eval_step", 3, 1, 0.03 },
		{ "train_step", 1, 1, 0.03 },
	};
	const struct stepfn slow_eval[] = {
		{ "eval_step", 3, 1, 0.5 },
		{ "train_step", 1, 1, 0.03 },
	};
	struct xl_watch w;
	struct xl_storm s;

	(void)state;
	for (int order = 0; order < 2; order++) {
		stepped(&w, same, 2, 40, order == 1, &s);
		assert_true(s.storm);
		assert_string_equal(w.fns[s.top].name, "jit(train_step)");
		assert_non_null(strstr(s.reason, "jit(train_step) recompiled 34 times after warm-up (step 5): "));
		assert_non_null(strstr(s.reason, "; also recompiling: jit(eval_step) (12)"));
		xl_watch_release(&w);
		stepped(&w, slow_eval, 2, 40, order == 1, &s);
		assert_true(s.storm);
		assert_string_equal(w.fns[s.top].name, "jit(eval_step)");
		assert_non_null(strstr(s.reason, "; also recompiling: jit(train_step) (34)"));
		xl_watch_release(&w);
	}
}

/* etc/outcomes.yaml's compile_internal: JAX's primitives, its jitted
 * jax.numpy functions and its private helpers. */
static void test_internal_names(void **state)
{
	const struct xl_cpats *c = &pats;

	(void)state;
	assert_true(xl_cpats_internal(c, "jax", "jit(broadcast_in_dim)"));
	assert_true(xl_cpats_internal(c, "jax", "jit(convert_element_type)"));
	assert_true(xl_cpats_internal(c, "jax", "jit(iota)"));
	assert_true(xl_cpats_internal(c, "jax", "jit(_threefry_split)"));
	assert_true(xl_cpats_internal(c, "jax", "jit(unstack)"));
	assert_true(xl_cpats_internal(c, "jax", "jit(matmul)"));
	assert_true(xl_cpats_internal(c, "jax", "pjit(_normal)"));
	assert_false(xl_cpats_internal(c, "jax", "jit(train_step)"));
	assert_false(xl_cpats_internal(c, "jax", "jit(step)"));
	assert_false(xl_cpats_internal(c, "torch_xla", "jit(iota)"));
	assert_false(xl_cpats_internal(NULL, "jax", "jit(iota)"));
}

/* compile.on_storm: stop judges the run so far: a burst of compilations at
 * start that stops is never stopped, however its check falls; a storm is,
 * once the run has gone on as long again with the rule holding. */
static void test_storm_live(void **state)
{
	const char *line = "Finished XLA compilation of jit(f) in 0.010 sec";
	struct xl_watch w;
	struct xl_storm s;
	struct xl_storm_live live;
	struct xl_cblock b;
	double stopped = -1;

	(void)state;
	/* twenty in the first second, then quiet for 30 s */
	for (double phase = 0; phase < 1; phase += 0.25) {
		watch_init(&w, NULL, NULL);
		xl_cblock_init(&b);
		xl_storm_live_init(&live);
		for (int i = 0; i < 20; i++) {
			xl_watch_line(&w, &b, line, strlen(line), 1000 + 0.05 * i);
			xl_cblock_close(&w, &b);
			assert_false(xl_watch_storm_now(&w, &live, 1000 + 0.05 * i + phase, &s));
		}
		for (double t = 1; t < 30; t += 0.25)
			assert_false(xl_watch_storm_now(&w, &live, 1000 + t + phase, &s));
		xl_watch_release(&w);
	}
	/* one every 0.1 s for a minute: stopped within seconds */
	watch_init(&w, NULL, NULL);
	xl_cblock_init(&b);
	xl_storm_live_init(&live);
	for (int i = 0; i < 600 && stopped < 0; i++) {
		xl_watch_line(&w, &b, line, strlen(line), 1000 + 0.1 * i);
		xl_cblock_close(&w, &b);
		if (xl_watch_storm_now(&w, &live, 1000 + 0.1 * i, &s))
			stopped = 0.1 * i;
	}
	assert_true(stopped > 2 && stopped < 8);
	assert_string_equal(s.rule, "arrival");
	assert_non_null(strstr(s.reason, "jit(f) recompiled "));
	xl_watch_release(&w);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jax_drift),
		cmocka_unit_test(test_torch_xla),
		cmocka_unit_test(test_torch_compile),
		cmocka_unit_test(test_time_rule),
		cmocka_unit_test(test_cost_rule),
		cmocka_unit_test(test_cost_burst),
		cmocka_unit_test(test_step_rule),
		cmocka_unit_test(test_report_live),
		cmocka_unit_test(test_report_times),
		cmocka_unit_test(test_bad_patterns),
		cmocka_unit_test(test_fuzz_entry),
		cmocka_unit_test(test_storm_culprit),
		cmocka_unit_test(test_storm_rates),
		cmocka_unit_test(test_internal_names),
		cmocka_unit_test(test_storm_live),
	};

	return XL_TEST_RUN(tests, setup, teardown);
}
