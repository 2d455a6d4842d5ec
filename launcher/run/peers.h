/* peers.h - the ranks of one job launch watching each other through the
 * store (peers.c), for the attempt (attempt.c) and its supervision
 * (supervise.c).  Private to launcher/run/.
 *
 * Each rank of a job of several ranks with a job id keeps one row in the
 * store (calib_rank_begin): a lease its supervisor renews at every poll,
 * and its end.  A thread of the supervisor polls the store (one statement:
 * the renewal and two index probes) and, when another rank of the same job
 * launch ended with any outcome but ok, or let its lease lapse, wakes the
 * supervision loop, which ends the child: SIGTERM to its process group,
 * the profile's ranks.grace, then SIGKILL.  Nothing goes through /proc or
 * a side channel: ranks on other hosts are seen the same way.
 */
#ifndef XLAUNCH_LAUNCHER_RUN_PEERS_H
#define XLAUNCH_LAUNCHER_RUN_PEERS_H

#include "launcher/run/run.h"

struct xl_peers;
struct xl_classified;

/* A job's ranks make at most about this many polls per second in all: the
 * poll period of a rank is at least world / XL_PEERS_JOB_RATE seconds (a
 * poll of a PostgreSQL store is a connection: tests/bench/RESULTS.md). */
#define XL_PEERS_JOB_RATE 200.0

/* The watch of rank `rank` of `world` in job launch job_id, for the attempt
 * run_id, with the profile's ranks section; NULL when it does not watch
 * (said at -v): one rank, no job id, ranks.watch false, no store, or the
 * store would not take the rank's row (said).  Borrows st, the launch's
 * handle: the caller does not use it between xl_peers_start() and
 * xl_peers_stop().  Free with xl_peers_end(). */
struct xl_peers *xl_peers_begin(struct calib_store *st, const char *job_id, int rank, int world,
				const char *run_id, const struct xl_ranks_cfg *cfg);
/* Starts polling in a thread of its own: after the child is spawned, so
 * that no fork happens while the thread runs.  Returns the descriptor that
 * becomes readable when another rank is gone, or -1. */
int xl_peers_start(struct xl_peers *w);
/* After the descriptor became readable: says on stderr which rank ended
 * and how ("rank 1 of job J ended with oom; ending rank 0") and returns
 * the grace period before SIGKILL. */
double xl_peers_fire(struct xl_peers *w);
/* Stops the thread (the child has ended). */
void xl_peers_stop(struct xl_peers *w);
/* Whether this rank ended its child for another rank. */
bool xl_peers_fired(const struct xl_peers *w);
/* The outcome of a child this rank ended for another rank: peer-failed,
 * naming that rank, unless the child's own outcome is oom. */
void xl_peers_classify(const struct xl_peers *w, struct xl_classified *cl);
/* What the record keeps of it: {"rank", "outcome" (null: its lease lapsed),
 * "host", "ended", "noticed", "job_id"}, or NULL when nothing fired.  New
 * reference. */
json_t *xl_peers_json(const struct xl_peers *w);
/* Writes this rank's end (outcome, exit status, and the rank it was ended
 * for), stops the thread when it runs and frees w.  NULL is fine. */
void xl_peers_end(struct xl_peers *w, enum xl_outcome outcome, int exit_status);

#endif
