/* events.h - watch.c's functions used elsewhere inside the room (private
 * to launcher/watch/): the events' names, the runtime's own programs, and
 * the steps of a poll taken one by one. */
#ifndef XLAUNCH_LAUNCHER_WATCH_EVENTS_H
#define XLAUNCH_LAUNCHER_WATCH_EVENTS_H

#include "launcher/watch/watch.h"

/* "compiled", "cache-hit", ...; NULL when out of range. */
const char *xl_cev_name(int ev);
/* Whether a line of this event opens a block. */
bool xl_cev_opens(int ev);
/* Whether a function of runtime named name ("jit(broadcast_in_dim)") is a
 * program the runtime compiled for itself (compile_internal of c; c may
 * be NULL: nothing is). */
bool xl_cpats_internal(const struct xl_cpats *c, const char *runtime, const char *name);
/* Reads what was appended to the job's report file since the last call. */
void xl_watch_poll_jobreport(struct xl_watch *w, double t);
/* The modules the dump reader handed out since it was last asked. */
void xl_watch_take_dump(struct xl_watch *w);
/* While the run goes on (monotonic time t): what the verdict reads, as if
 * the run ended now (xl_watch_finish settles it again at the end). */
void xl_watch_settle(struct xl_watch *w, double t);

#endif
