/* jobreport.h - jobreport.c's functions, private to launcher/watch/: the
 * one reader of the job's report file (its lines' rule and the reader's
 * state are in watch.h, which the outcome and the figures read).  The
 * watch feeds it as the file grows. */
#ifndef XLAUNCH_LAUNCHER_WATCH_JOBREPORT_H
#define XLAUNCH_LAUNCHER_WATCH_JOBREPORT_H

#include "launcher/watch/watch.h"

/* Called with each line as it is read, and with the reader as it was
 * before that line. */
typedef void xl_jobreport_fn(void *arg, const struct xl_jobreport_line *l,
			     const struct xl_jobreport *before);

void xl_jobreport_init(struct xl_jobreport *r);
void xl_jobreport_release(struct xl_jobreport *r);
/* Parses one line (len bytes, no newline) by the rule above; returns its
 * kind (a fuzz entry point). */
int xl_jobreport_parse(const char *line, size_t len, struct xl_jobreport_line *out);
/* One line into r (parsed into *out); returns its kind. */
int xl_jobreport_line(struct xl_jobreport *r, const char *line, size_t len,
		      struct xl_jobreport_line *out);
/* Reads what was appended to path since the last call (a file not there
 * yet is read later); each complete line goes to fn (may be NULL).  final:
 * the job has ended: the last line without its newline too, and the file
 * is closed. */
void xl_jobreport_poll(struct xl_jobreport *r, const char *path, bool final,
		       xl_jobreport_fn *fn, void *arg);
/* The whole file at once (a missing file is an empty report). */
void xl_jobreport_read(struct xl_jobreport *r, const char *path);
/* Malformed lines and lines of unknown kind, said once each (warnings). */
void xl_jobreport_warn(const struct xl_jobreport *r, const char *path);

#endif
