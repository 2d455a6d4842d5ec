/*
 * probe_rep.c - the stage and state names, and what a backend uses to say how
 * far it got: xl_probe_reached(), the ladder of stages every backend climbs
 * (xl_probe_climb()) and xl_probe_error().
 */
#include "probe/probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const stage_names[] = {
	"absent", "installed", "initialized", "devices", "compiled", "executed", "verified",
};
static const char *const state_names[] = {
	"alive", "installed", "absent", "hung", "crashed",
};

const char *xl_probe_stage_name(enum xl_probe_stage st)
{
	if ((unsigned)st >= sizeof(stage_names) / sizeof(stage_names[0]))
		return "?";
	return stage_names[st];
}

const char *xl_probe_state_name(enum xl_probe_state st)
{
	if ((unsigned)st >= sizeof(state_names) / sizeof(state_names[0]))
		return "?";
	return state_names[st];
}

int xl_probe_stage_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(stage_names) / sizeof(stage_names[0]); i++)
		if (strcmp(s, stage_names[i]) == 0)
			return (int)i;
	return -1;
}

/* ---- the child's side ------------------------------------------------- */

void xl_probe_rep_init(struct xl_probe_rep *r, int fd)
{
	r->fd = fd;
	r->stage = XL_STAGE_ABSENT;
	r->doc = json_object();
	r->deadline = 0;
}

void xl_probe_rep_release(struct xl_probe_rep *r)
{
	json_decref(r->doc);
	r->doc = NULL;
}

void xl_probe_send_line(int fd, const char *s)
{
	if (xl_write_all(fd, s, strlen(s)) == 0)
		xl_write_all(fd, "\n", 1);
}

void xl_probe_reached(struct xl_probe_rep *r, enum xl_probe_stage st)
{
	if (st > r->stage)
		r->stage = st;
	if (r->fd >= 0) {
		/* what is known so far travels with the stage, so a hang or a
		 * crash later still shows the version and devices */
		json_t *msg = json_pack("{s:s, s:O}", "stage", xl_probe_stage_name(r->stage),
					"partial", r->doc);
		char *line = msg ? json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;

		if (line)
			xl_probe_send_line(r->fd, line);
		free(line);
		json_decref(msg);
	}
}

int xl_probe_climb(struct xl_probe_rep *r, enum xl_probe_stage from, xl_probe_rung_fn *rung,
		   void *backend)
{
	for (int st = (int)from; st <= (int)XL_STAGE_VERIFIED; st++) {
		if (rung(backend, (enum xl_probe_stage)st) < 0)
			return -1;
		xl_probe_reached(r, (enum xl_probe_stage)st);
	}
	return 0;
}

void xl_probe_error(struct xl_probe_rep *r, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	if (json_object_get(r->doc, "error"))
		return;
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	/* runtimes end their messages with newlines and periods; keep one line */
	while (b.len && (b.buf[b.len - 1] == '\n' || b.buf[b.len - 1] == ' '))
		b.buf[--b.len] = '\0';
	for (size_t i = 0; i < b.len; i++)
		if (b.buf[i] == '\n' || b.buf[i] == '\t')
			b.buf[i] = ' ';
	json_object_set_new(r->doc, "error", json_string(xl_buf_str(&b)));
	xl_buf_release(&b);
}

