/* peers.c - the ranks of one job launch watching each other through the
 * store (see peers.h).
 *
 * The lease: each poll renews it for ranks.lease from the store's clock.
 * A rank judges the leases of others only once it has itself polled
 * without a failure for a whole lease: after an outage of the store every
 * rank gets that long to renew again, so an outage ends no job.  Ends and
 * lapses from before this rank's start, less a lease, belong to an earlier
 * launch under the same job id and are passed over.
 *
 * A server store is not held open: each poll connects, runs its one
 * statement and gives the connection back (calib_idle), so that a job of
 * hundreds of ranks does not take a connection per rank.  The thread uses
 * the launch's own handle while the supervisor does not (from the spawn to
 * the child's end); the rank's end then goes in on the connection its
 * record takes next.
 */
#include "launcher/run/peers.h"
#include "launcher/run/outcome.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct xl_peers {
	struct calib_store *st;        /* the launch's handle (borrowed): the thread's
				       * while it runs, the supervisor's before and
				       * after (never both at once) */
	char *job_id;
	int rank, world;
	double poll_s, lease_s, grace_s;
	double started;                /* the store's time of calib_rank_begin */
	int wake[2];                   /* the thread writes a byte: a rank is gone */
	int stop[2];                   /* the supervisor writes a byte: stop */
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	struct calib_peer_end gone;    /* under mu; gone.found once fired */
	double noticed;                /* the store's time of the poll that saw it */
	bool fired;                    /* the child was ended for it */
	unsigned failures;             /* polls in a row the store did not answer */
	unsigned seed;                 /* the thread's jitter (rand_r) */
};

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

static void peers_free(struct xl_peers *w)
{
	close_pair(w->wake);
	close_pair(w->stop);
	pthread_mutex_destroy(&w->mu);
	free(w->job_id);
	free(w);
}

/* The poll period: the profile's, and no shorter than a job of this size
 * allows (XL_PEERS_JOB_RATE); the lease covers three polls at least. */
static void periods(struct xl_peers *w, const struct xl_ranks_cfg *cfg)
{
	double floor_s = (double)w->world / XL_PEERS_JOB_RATE;

	w->poll_s = cfg->poll_s > floor_s ? cfg->poll_s : floor_s;
	w->lease_s = cfg->lease_s;
	if (w->lease_s < 3 * w->poll_s) {
		w->lease_s = 3 * w->poll_s;
		xl_info("job '%s': %d ranks poll the store every %.1f s: a lease of %.1f s instead of"
			" %.1f s", w->job_id, w->world, w->poll_s, w->lease_s, cfg->lease_s);
	}
	w->grace_s = cfg->grace_s;
}

struct xl_peers *xl_peers_begin(struct calib_store *st, const char *job_id, int rank, int world,
				const char *run_id, const struct xl_ranks_cfg *cfg)
{
	struct xl_peers *w;

	if (world <= 1 || !job_id || !cfg->watch) {
		if (world > 1)
			xl_debug("rank %d of %d: not watching the other ranks (%s)", rank, world,
				 !job_id ? "no job id" : "ranks.watch is false");
		return NULL;
	}
	w = xl_calloc(1, sizeof(*w));
	w->wake[0] = w->wake[1] = w->stop[0] = w->stop[1] = -1;
	pthread_mutex_init(&w->mu, NULL);
	w->job_id = xl_strdup(job_id);
	w->rank = rank;
	w->world = world;
	w->seed = (unsigned)getpid() ^ (unsigned)(xl_now() * 1000);
	periods(w, cfg);
	w->st = st;
	if (calib_rank_begin(st, job_id, rank, world, run_id, w->lease_s, &w->started)) {
		xl_warn("%s; rank %d does not watch the other ranks of job '%s', and they cannot"
			" see it", calib_errmsg(st), rank, job_id);
		peers_free(w);
		return NULL;
	}
	calib_idle(w->st);
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(w->stop, O_CLOEXEC) < 0) {
		xl_warn("cannot create pipes: %s; rank %d does not watch the other ranks", strerror(errno),
			rank);
		calib_rank_end(w->st, job_id, rank, XL_OUT_ERROR, CALIB_UNSET, -1, XL_OUT_COUNT);
		peers_free(w);
		return NULL;
	}
	xl_debug("job '%s': rank %d watches its %d peers, polling every %.2f s, lease %.1f s",
		 job_id, rank, world - 1, w->poll_s, w->lease_s);
	return w;
}

/* Waits up to s seconds for the stop byte; true when it came. */
static bool wait_stop(struct xl_peers *w, double s)
{
	struct pollfd p = { .fd = w->stop[0], .events = POLLIN };
	double end = xl_mono() + s;

	for (;;) {
		double left = end - xl_mono();
		int r;

		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

/* One poll; true when a rank is gone (w->gone set).  *ok_since is the
 * monotonic time since which every poll passed. */
static bool poll_once(struct xl_peers *w, double *ok_since)
{
	struct calib_peer_end e;
	bool judge = xl_mono() - *ok_since >= w->lease_s;
	int rc = calib_rank_poll(w->st, w->job_id, w->rank, w->lease_s, w->started - w->lease_s,
				 judge, &e);

	calib_idle(w->st);
	if (rc) {
		/* said once per outage; the lease of this rank may lapse meanwhile */
		if (w->failures++ == 0)
			xl_warn("%s; rank %d keeps trying to reach the store for its lease", calib_errmsg(w->st),
				w->rank);
		*ok_since = NAN;
		return false;
	}
	if (w->failures || isnan(*ok_since)) {
		if (w->failures)
			xl_info("job '%s': rank %d reaches the store again", w->job_id, w->rank);
		w->failures = 0;
		*ok_since = xl_mono();
	}
	if (!e.found)
		return false;
	pthread_mutex_lock(&w->mu);
	w->gone = e;
	w->noticed = e.now;
	pthread_mutex_unlock(&w->mu);
	return true;
}

static void *watch_thread(void *arg)
{
	struct xl_peers *w = arg;
	double ok_since = xl_mono();
	/* the first poll at a random point of the period, so that ranks
	 * started together do not poll together */
	double next = w->poll_s * (double)(rand_r(&w->seed) % 1000) / 1000.0;

	while (!wait_stop(w, next)) {
		if (poll_once(w, &ok_since)) {
			char c = 1;

			if (write(w->wake[1], &c, 1) < 0) {
				/* the supervisor reads the pipe only to wake */
			}
			break;
		}
		/* jitter of a tenth either way keeps them apart */
		next = w->poll_s * (0.9 + 0.2 * (double)(rand_r(&w->seed) % 1000) / 1000.0);
	}
	return NULL;
}

int xl_peers_start(struct xl_peers *w)
{
	if (!w)
		return -1;
	if (pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
		xl_warn("cannot start watching the other ranks of job '%s': %s", w->job_id,
			strerror(errno));
		return -1;
	}
	w->running = true;
	return w->wake[0];
}

static void gone_str(const struct calib_peer_end *g, char *buf, size_t n)
{
	if (g->lapsed)
		snprintf(buf, n, "stopped renewing its lease (it ran out %.0f s ago)", g->now - g->when);
	else
		snprintf(buf, n, "ended with %s", xl_outcome_name(g->outcome));
}

double xl_peers_fire(struct xl_peers *w)
{
	char how[128];

	pthread_mutex_lock(&w->mu);
	gone_str(&w->gone, how, sizeof(how));
	w->fired = true;
	pthread_mutex_unlock(&w->mu);
	xl_error("rank %lld of job %s %s; ending rank %d", (long long)w->gone.rank, w->job_id, how,
		 w->rank);
	if (w->grace_s > 0)
		xl_info("rank %d: SIGTERM to its process group, SIGKILL after %.0f s", w->rank,
			w->grace_s);
	return w->grace_s;
}

void xl_peers_stop(struct xl_peers *w)
{
	char c = 1;

	if (!w || !w->running)
		return;
	if (write(w->stop[1], &c, 1) < 0) {
		/* the thread then ends at its next poll */
	}
	pthread_join(w->thread, NULL);
	w->running = false;
}

bool xl_peers_fired(const struct xl_peers *w)
{
	return w && w->fired;
}

void xl_peers_classify(const struct xl_peers *w, struct xl_classified *cl)
{
	char how[128];

	if (!xl_peers_fired(w) || cl->outcome == XL_OUT_OOM)
		return;
	gone_str(&w->gone, how, sizeof(how));
	cl->outcome = XL_OUT_PEER_FAILED;
	snprintf(cl->reason, sizeof(cl->reason), "rank %lld of job %s%s%s %s; this rank was ended",
		 (long long)w->gone.rank, w->job_id, w->gone.host[0] ? " on " : "", w->gone.host, how);
}

json_t *xl_peers_json(const struct xl_peers *w)
{
	const struct calib_peer_end *g;
	char t1[40], t2[40];

	if (!xl_peers_fired(w))
		return NULL;
	g = &w->gone;
	return json_pack("{s:s, s:I, s:o, s:b, s:s?, s:s, s:s}", "job_id", w->job_id,
			 "rank", (json_int_t)g->rank,
			 "outcome", g->lapsed ? json_null() : json_string(xl_outcome_name(g->outcome)),
			 "lease_lapsed", g->lapsed, "host", g->host[0] ? g->host : NULL,
			 g->lapsed ? "lease_ran_out" : "ended", xl_iso_time_ms(g->when, t1, sizeof(t1)),
			 "noticed", xl_iso_time_ms(w->noticed, t2, sizeof(t2)));
}

void xl_peers_end(struct xl_peers *w, enum xl_outcome outcome, int exit_status)
{
	if (!w)
		return;
	xl_peers_stop(w);
	if (calib_rank_end(w->st, w->job_id, w->rank, outcome, exit_status,
			   w->fired ? w->gone.rank : -1,
			   w->gone.lapsed ? XL_OUT_COUNT : w->gone.outcome))
		xl_warn("%s; the other ranks of job '%s' see rank %d's end when its lease runs out",
			calib_errmsg(w->st), w->job_id, w->rank);
	peers_free(w);
}
