/* inductor.h - inductor.c's functions, private to launcher/watch/: the
 * count of torch.compile's graphs from Inductor's cache, which the watch
 * creates, polls and releases (xl_watch_init with cfg.torch_job and
 * cfg.envp).  xl_inductor_setup copies what it needs; xl_inductor_release
 * frees it. */
#ifndef XLAUNCH_LAUNCHER_WATCH_INDUCTOR_H
#define XLAUNCH_LAUNCHER_WATCH_INDUCTOR_H

#include "launcher/watch/watch.h"

/* torch.compile's compilations seen from outside: Inductor's cache
 * directory gains one AOTAutograd entry per graph it compiles (and an
 * FX-graph entry per forward and per backward), so the entries written
 * while the job runs count its compiled graphs without TORCH_LOGS.
 * Measured with torch 2.9.0 on the CPU: equal to Dynamo's own count of
 * compiled graphs for a steady job, automatic dynamic shapes, static shapes
 * up to the recompile limit, and a graph break.  Not counted: graphs loaded
 * from a warm cache (nothing is written), other backends than Inductor,
 * caches turned off; and a cache directory shared with another job at the
 * same time counts that job's graphs too. */
struct xl_inductor {
	char *dir;               /* the cache directory, or NULL (not watched: why) */
	const char *from;        /* "TORCHINDUCTOR_CACHE_DIR" or "the default" */
	char why[200];
	double since;            /* epoch: entries older than this are earlier runs' */
	double origin;           /* epoch of time 0 for first_s, last_s */
	double next_at, interval;
	long graphs;             /* AOTAutograd entries written during the run */
	long fx_graphs;          /* FX-graph entries written during the run */
	double first_s, last_s;  /* the first and the last written, -1 */
	struct xl_strv names;    /* entries counted (the first million) */
	struct xl_strmap seen;   /* over names */
	long polls;
};

/* Watches Inductor's cache for a job whose environment is envp: its
 * TORCHINDUCTOR_CACHE_DIR, else Inductor's default (TMPDIR, TEMP or TMP,
 * else /tmp; then torchinductor_ and the user's name), when torch_job (the
 * bundle has torch, or the profile sets torch.compile's variables) and
 * the caches are not turned off.  since: the launch's start (epoch). */
void xl_inductor_setup(struct xl_inductor *c, char *const *envp, bool torch_job, double since);
/* Counts the entries written since the last poll, when due (now:
 * monotonic; force: now). */
void xl_inductor_poll(struct xl_inductor *c, double now, bool force);
/* {dir, from, graphs, fx_graphs, first_s, last_s, counts} or {why}.  New
 * reference. */
json_t *xl_inductor_json(const struct xl_inductor *c);
void xl_inductor_release(struct xl_inductor *c);

#endif
