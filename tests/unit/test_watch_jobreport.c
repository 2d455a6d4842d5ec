/* test_watch_jobreport.c - the one reader of the job's report file
 * (XLAUNCH_REPORT): the rule every line is read by, the file read as it
 * grows (a line in pieces, the last line without its newline, a line too
 * long to read), and what each line's reader sees. */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/watch/watch.h"
#include "launcher/watch/jobreport.h"

static int setup(void **state)
{
	xl_verbosity = -1;
	return xl_test_dir_setup(state);
}

static int parse(const char *text, struct xl_jobreport_line *l)
{
	return xl_jobreport_parse(text, strlen(text), l);
}

static void test_rule(void **state)
{
	struct xl_jobreport_line l;

	(void)state;
	/* a count: an integer >= 0, or a real >= 0 below 2^63, truncated */
	assert_int_equal(parse("{\"kind\":\"memory\",\"peak_bytes\":12,\"limit_bytes\":2.5e3,"
			       "\"predicted_bytes\":7.9,\"source\":\"host_rss\"}", &l), XL_JR_MEMORY);
	assert_int_equal(l.peak_bytes, 12);
	assert_int_equal(l.limit_bytes, 2500);
	assert_int_equal(l.predicted_bytes, 7);
	assert_int_equal(l.per_device_bytes, -1);
	assert_true(l.has_source);
	assert_string_equal(l.source, "host_rss");
	assert_false(l.has_memory_kind);
	assert_true(isnan(l.t));
	/* not counts: negative, a string, too large, true */
	assert_int_equal(parse("{\"kind\":\"memory\",\"peak_bytes\":-1,\"limit_bytes\":\"5\","
			       "\"predicted_bytes\":1e19,\"per_device_bytes\":true}", &l), XL_JR_MEMORY);
	assert_int_equal(l.peak_bytes, -1);
	assert_int_equal(l.limit_bytes, -1);
	assert_int_equal(l.predicted_bytes, -1);
	assert_int_equal(l.per_device_bytes, -1);
	/* the same rule for steps and compile counts */
	assert_int_equal(parse("{\"kind\":\"compile\",\"count\":3.0,\"cache_hits\":1}", &l),
			 XL_JR_COMPILE);
	assert_int_equal(l.count, 3);
	assert_int_equal(l.cache_hits, 1);
	assert_int_equal(parse("{\"kind\":\"step\",\"step\":4,\"t\":1700000000.5,\"step_time_s\":0.25}",
			       &l), XL_JR_STEP);
	assert_int_equal(l.step, 4);
	assert_true(l.t == 1700000000.5);
	assert_true(l.step_time_s == 0.25);
	assert_int_equal(parse("{\"kind\":\"step\",\"step\":-4}", &l), XL_JR_STEP);
	assert_int_equal(l.step, -1);
	/* malformed: not an object, no string kind, a duplicated key */
	assert_int_equal(parse("[1]", &l), XL_JR_MALFORMED);
	assert_int_equal(parse("{\"kind\":3}", &l), XL_JR_MALFORMED);
	assert_int_equal(parse("{\"kind\":\"step\",\"step\":1,\"step\":2}", &l), XL_JR_MALFORMED);
	assert_int_equal(parse("{\"kind\":\"weather\"}", &l), XL_JR_UNKNOWN);
}

static void test_totals(void **state)
{
	struct xl_jobreport r;
	struct xl_jobreport_line l;
	static const char *const lines[] = {
		"{\"kind\":\"memory\",\"peak_bytes\":50,\"source\":\"a\"}",
		"{\"kind\":\"memory\",\"peak_bytes\":70}",
		"{\"kind\":\"memory\",\"peak_bytes\":60,\"source\":\"b\",\"limit_bytes\":100,"
		"\"predicted_bytes\":40}",
		"{\"kind\":\"compile\",\"count\":4,\"cache_hits\":2}",
		"{\"kind\":\"compile\",\"count\":3}",
		"{\"kind\":\"step\",\"step\":9}",
		"nonsense",
		"{\"kind\":\"other\"}",
	};

	(void)state;
	xl_jobreport_init(&r);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		xl_jobreport_line(&r, lines[i], strlen(lines[i]), &l);
	assert_int_equal(r.lines, 8);
	assert_int_equal(r.peak_bytes, 70);
	assert_string_equal(r.peak_source, "report");
	assert_int_equal(r.limit_bytes, 100);
	assert_int_equal(r.predicted_bytes, 40);
	assert_int_equal(r.compiles, 3);
	assert_int_equal(r.cache_hits, 2);
	assert_int_equal(r.last_step, 9);
	assert_int_equal(r.malformed, 1);
	assert_int_equal(r.first_malformed, 7);
	assert_int_equal(r.unknown, 1);
	assert_int_equal(r.npeaks, 3);
	assert_int_equal(r.peaks[1].bytes, 70);
	assert_false(r.peaks[1].has_source);
	xl_jobreport_release(&r);
}

struct seen {
	long n;
	long compiles_before[8];
	int kind[8];
};

static void on_line(void *arg, const struct xl_jobreport_line *l, const struct xl_jobreport *before)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->kind[s->n] = l->kind;
		s->compiles_before[s->n] = before->compiles;
	}
	s->n++;
}

static void append(int fd, const char *text)
{
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* As it grows: a line is read once it is whole, the last one without its
 * newline at the end; each line's reader sees the reader before it. */
static void test_growing(void **state)
{
	char *path = xl_test_write("grow.jsonl", "");
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	struct xl_jobreport r;
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_true(fd >= 0);
	xl_jobreport_init(&r);
	append(fd, "{\"kind\":\"compile\",\"count\":2}\n{\"kind\":\"comp");
	xl_jobreport_poll(&r, path, false, on_line, &s);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.compiles_before[0], -1);
	assert_int_equal(r.compiles, 2);
	append(fd, "ile\",\"count\":5}\r\n\n{\"kind\":\"step\",\"step\":1}");
	xl_jobreport_poll(&r, path, false, on_line, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.compiles_before[1], 2);
	assert_int_equal(r.compiles, 5);
	assert_int_equal(r.last_step, -1);
	xl_jobreport_poll(&r, path, true, on_line, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.kind[2], XL_JR_STEP);
	assert_int_equal(r.last_step, 1);
	assert_int_equal(r.lines, 3);
	assert_int_equal(r.malformed, 0);
	close(fd);
	xl_jobreport_release(&r);
	free(path);
}

/* A line over 1 MiB is one malformed line, the rest of it passed over;
 * the lines after it are read. */
static void test_long_line(void **state)
{
	char *path = xl_test_write("long.jsonl", "{\"kind\":\"step\",\"step\":1}\n");
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	size_t big = (3u << 20) / 2;
	char *junk = xl_malloc(big + 1);
	struct xl_jobreport r;
	struct xl_jobreport w;

	(void)state;
	assert_true(fd >= 0);
	memset(junk, 'x', big);
	junk[big] = '\0';
	xl_jobreport_init(&r);
	append(fd, junk);
	xl_jobreport_poll(&r, path, false, NULL, NULL);
	append(fd, junk);
	xl_jobreport_poll(&r, path, false, NULL, NULL);
	append(fd, "\n{\"kind\":\"step\",\"step\":2}\n");
	xl_jobreport_poll(&r, path, true, NULL, NULL);
	assert_int_equal(r.lines, 3);
	assert_int_equal(r.malformed, 1);
	assert_int_equal(r.first_malformed, 2);
	assert_int_equal(r.last_step, 2);
	/* read at once after the end: the same */
	xl_jobreport_init(&w);
	xl_jobreport_read(&w, path);
	assert_int_equal(w.lines, 3);
	assert_int_equal(w.malformed, 1);
	assert_int_equal(w.last_step, 2);
	/* a missing file is an empty report */
	xl_jobreport_release(&w);
	xl_jobreport_read(&w, "/nonexistent/report.jsonl");
	assert_int_equal(w.lines, 0);
	assert_int_equal(w.peak_bytes, -1);
	close(fd);
	free(junk);
	xl_jobreport_release(&r);
	xl_jobreport_release(&w);
	free(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_growing),
		cmocka_unit_test(test_long_line),
	};

	return XL_TEST_RUN(tests, setup, xl_test_dir_teardown);
}
