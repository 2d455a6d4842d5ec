/* jobreport.c - the job's report file (XLAUNCH_REPORT, see watch.h): the
 * one reader of it.  The watch feeds it as the file grows and reacts to
 * each line (steps, compile counts); the outcome and the figures read what
 * it kept once the job has ended.
 *
 * One rule for every line: a line is a JSON object (a duplicated key makes
 * it malformed) whose "kind" is a string; a line over 1 MiB is malformed
 * unread.  A count (bytes, a step, a compile count) is a JSON integer >= 0
 * or a real >= 0 below 2^63, truncated; anything else is no figure.  So a
 * real-valued peak both counts against the limit and becomes a figure.
 */
#include "launcher/watch/jobreport.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_BYTES (1u << 20)

void xl_jobreport_init(struct xl_jobreport *r)
{
	memset(r, 0, sizeof(*r));
	r->predicted_bytes = r->peak_bytes = r->limit_bytes = -1;
	r->compiles = r->cache_hits = r->last_step = -1;
	r->xla_per_device_bytes = -1;
	r->fd = -1;
}

void xl_jobreport_release(struct xl_jobreport *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->peaks);
	xl_jobreport_init(r);
}

static bool get_count(json_t *o, const char *key, long long *out)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v);
		return true;
	}
	if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 9.2e18) {
		*out = (long long)json_real_value(v);
		return true;
	}
	return false;
}

static double get_number(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void get_string(json_t *o, const char *key, char *out, size_t size, bool *has)
{
	json_t *v = json_object_get(o, key);

	*has = json_is_string(v);
	snprintf(out, size, "%s", *has ? json_string_value(v) : "");
}

static void parse_memory(json_t *o, struct xl_jobreport_line *l)
{
	get_string(o, "source", l->source, sizeof(l->source), &l->has_source);
	get_string(o, "memory_kind", l->memory_kind, sizeof(l->memory_kind), &l->has_memory_kind);
	if (!get_count(o, "predicted_bytes", &l->predicted_bytes))
		l->predicted_bytes = -1;
	if (!get_count(o, "peak_bytes", &l->peak_bytes))
		l->peak_bytes = -1;
	if (!get_count(o, "limit_bytes", &l->limit_bytes))
		l->limit_bytes = -1;
	if (!get_count(o, "per_device_bytes", &l->per_device_bytes))
		l->per_device_bytes = -1;
}

int xl_jobreport_parse(const char *line, size_t len, struct xl_jobreport_line *l)
{
	json_t *o;
	const char *kind;

	memset(l, 0, sizeof(*l));
	l->t = l->step_time_s = NAN;
	l->count = l->cache_hits = l->step = -1;
	l->predicted_bytes = l->peak_bytes = l->limit_bytes = l->per_device_bytes = -1;
	l->kind = XL_JR_MALFORMED;
	if (len > LINE_MAX_BYTES)
		return l->kind;
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o) || !json_is_string(json_object_get(o, "kind"))) {
		json_decref(o);
		return l->kind;
	}
	kind = json_string_value(json_object_get(o, "kind"));
	l->t = get_number(o, "t");
	if (strcmp(kind, "memory") == 0) {
		l->kind = XL_JR_MEMORY;
		parse_memory(o, l);
	} else if (strcmp(kind, "compile") == 0) {
		l->kind = XL_JR_COMPILE;
		if (!get_count(o, "count", &l->count))
			l->count = -1;
		if (!get_count(o, "cache_hits", &l->cache_hits))
			l->cache_hits = -1;
	} else if (strcmp(kind, "step") == 0) {
		l->kind = XL_JR_STEP;
		if (!get_count(o, "step", &l->step))
			l->step = -1;
		l->step_time_s = get_number(o, "step_time_s");
	} else {
		l->kind = XL_JR_UNKNOWN;
	}
	json_decref(o);
	return l->kind;
}

/* The largest peak of one (source, memory_kind), and the line that first
 * reached it. */
static void keep_peak(struct xl_jobreport *r, const struct xl_jobreport_line *l)
{
	struct xl_jobreport_peak *p = NULL;

	for (size_t i = 0; i < r->npeaks && !p; i++) {
		struct xl_jobreport_peak *q = &r->peaks[i];

		if (q->has_source == l->has_source && q->has_memory_kind == l->has_memory_kind &&
		    strcmp(q->source, l->source) == 0 && strcmp(q->memory_kind, l->memory_kind) == 0)
			p = q;
	}
	if (!p) {
		if (r->npeaks == XL_JOBREPORT_MAX_PEAKS)
			return;
		r->peaks = xl_realloc(r->peaks, (r->npeaks + 1) * sizeof(*r->peaks));
		p = &r->peaks[r->npeaks++];
		memset(p, 0, sizeof(*p));
		memcpy(p->source, l->source, sizeof(p->source));
		memcpy(p->memory_kind, l->memory_kind, sizeof(p->memory_kind));
		p->has_source = l->has_source;
		p->has_memory_kind = l->has_memory_kind;
		p->bytes = -1;
		p->first_line = r->lines;
	}
	if (l->peak_bytes > p->bytes) {
		p->bytes = l->peak_bytes;
		p->line = r->lines;
	}
}

static void add_memory(struct xl_jobreport *r, const struct xl_jobreport_line *l)
{
	if (l->predicted_bytes >= 0)
		r->predicted_bytes = l->predicted_bytes;
	if (l->peak_bytes >= 0) {
		if (l->peak_bytes > r->peak_bytes) {
			r->peak_bytes = l->peak_bytes;
			snprintf(r->peak_source, sizeof(r->peak_source), "%s",
				 l->has_source ? l->source : "report");
		}
		keep_peak(r, l);
	}
	if (l->limit_bytes >= 0)
		r->limit_bytes = l->limit_bytes;
	if (l->per_device_bytes >= 0 && r->xla_per_device_bytes < 0 && l->has_source &&
	    strcmp(l->source, "xla_memory_analysis") == 0) {
		r->xla_per_device_bytes = l->per_device_bytes;
		r->xla_per_device_line = r->lines;
	}
}

int xl_jobreport_line(struct xl_jobreport *r, const char *line, size_t len,
		      struct xl_jobreport_line *l)
{
	r->lines++;
	switch (xl_jobreport_parse(line, len, l)) {
	case XL_JR_MALFORMED:
		if (!r->malformed++)
			r->first_malformed = r->lines;
		break;
	case XL_JR_UNKNOWN:
		r->unknown++;
		break;
	case XL_JR_MEMORY:
		add_memory(r, l);
		break;
	case XL_JR_COMPILE:
		if (l->count >= 0)
			r->compiles = (long)l->count;
		if (l->cache_hits >= 0)
			r->cache_hits = (long)l->cache_hits;
		break;
	case XL_JR_STEP:
		if (l->step >= 0)
			r->last_step = (long)l->step;
		break;
	}
	return l->kind;
}

/* One line of the file (without its newline); empty lines are not lines. */
static void take_line(struct xl_jobreport *r, const char *line, size_t len,
		      xl_jobreport_fn *fn, void *arg)
{
	struct xl_jobreport_line l;

	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (!len)
		return;
	if (fn) {
		/* fn sees r as it was before the line */
		xl_jobreport_parse(line, len, &l);
		fn(arg, &l, r);
	}
	xl_jobreport_line(r, line, len, &l);
}

/* Appends n bytes read; complete lines go out. */
static void take_bytes(struct xl_jobreport *r, const char *data, size_t n, xl_jobreport_fn *fn,
		       void *arg)
{
	size_t start = 0;

	r->buf = xl_realloc(r->buf, r->len + n + 1);
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	for (size_t i = 0; i < r->len; i++) {
		if (r->buf[i] != '\n')
			continue;
		if (r->skip)
			r->skip = false;   /* the end of a line too long to read */
		else
			take_line(r, r->buf + start, i - start, fn, arg);
		start = i + 1;
	}
	memmove(r->buf, r->buf + start, r->len - start);
	r->len -= start;
	if (r->len > LINE_MAX_BYTES) {
		/* a line over the bound is malformed, unread: counted once, and
		 * what is left of it passed over up to its newline */
		if (!r->skip) {
			r->lines++;
			if (!r->malformed++)
				r->first_malformed = r->lines;
		}
		r->skip = true;
		r->len = 0;
	}
}

void xl_jobreport_poll(struct xl_jobreport *r, const char *path, bool final, xl_jobreport_fn *fn,
		       void *arg)
{
	char buf[65536];
	ssize_t n;

	if (!path)
		return;
	if (r->fd < 0 && !r->done) {
		r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (r->fd < 0 && final)
			r->done = true;
	}
	if (r->fd >= 0) {
		while ((n = read(r->fd, buf, sizeof(buf))) > 0)
			take_bytes(r, buf, (size_t)n, fn, arg);
	}
	if (!final)
		return;
	/* the last line, without its newline */
	if (r->len && !r->skip)
		take_line(r, r->buf, r->len, fn, arg);
	r->len = 0;
	r->skip = false;
	r->done = true;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

void xl_jobreport_read(struct xl_jobreport *r, const char *path)
{
	xl_jobreport_poll(r, path, true, NULL, NULL);
}

void xl_jobreport_warn(const struct xl_jobreport *r, const char *path)
{
	if (r->malformed)
		xl_warn("report '%s': %ld malformed line%s ignored (first: line %ld)", path,
			r->malformed, r->malformed == 1 ? "" : "s", r->first_malformed);
	if (r->unknown)
		xl_warn("report '%s': %ld line%s of unknown kind ignored", path, r->unknown,
			r->unknown == 1 ? "" : "s");
}
