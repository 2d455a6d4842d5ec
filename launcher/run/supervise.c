/* supervise.c - spawning and watching a training command.
 *
 * The child runs in its own process group.  Signals that reach xlaunch are
 * forwarded to that group.  A guardian process holds the read end of a pipe
 * whose write end only xlaunch holds: when xlaunch dies, even by SIGKILL,
 * the guardian sees end-of-file and kills the whole group, so no trainer is
 * left holding an accelerator, and writes the attempt's end (interrupted,
 * with the peak xlaunch last told it) to the run directory.  Output is copied to the run directory as it
 * comes and handed to the terminal by a writer thread per stream, so a slow
 * terminal never stalls the child (what it cannot take in time is counted,
 * and the log files still have everything).
 */
#include "launcher/run/supervise.h"
#include "launcher/run/outcome.h"
#include "launcher/run/memcg.h"
#include "launcher/run/peers.h"
#include "launcher/run/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TERM_QUEUE_MAX (16u << 20)

static int sig_pipe[2] = { -1, -1 };
static const int forwarded_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NFWD (sizeof(forwarded_sigs) / sizeof(forwarded_sigs[0]))

static void on_signal(int sig)
{
	int e = errno;
	unsigned char c = (unsigned char)sig;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the loop is already awake */
	}
	errno = e;
}

/* ---- terminal writer ------------------------------------------------------ */

struct chunk {
	struct chunk *next;
	size_t len;
	char data[];
};

struct termq {
	int fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk *head, *tail;
	size_t bytes;
	size_t dropped;
	bool closing;
	pthread_t thread;
	bool started;
};

static void *term_writer(void *arg)
{
	struct termq *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->head && !q->closing)
			pthread_cond_wait(&q->cv, &q->mu);
		if (!q->head)
			break;
		struct chunk *c = q->head;

		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		q->bytes -= c->len;
		pthread_mutex_unlock(&q->mu);
		/* a terminal that went away loses this; the logs still have it */
		xl_write_all(q->fd, c->data, c->len);
		free(c);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void termq_init(struct termq *q, int fd)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->started = pthread_create(&q->thread, NULL, term_writer, q) == 0;
}

static void termq_push(struct termq *q, const char *data, size_t n)
{
	struct chunk *c;

	if (!q->started) {
		if (write(q->fd, data, n) < 0) {
			/* nothing to do: the logs have it */
		}
		return;
	}
	pthread_mutex_lock(&q->mu);
	if (q->bytes + n > TERM_QUEUE_MAX) {
		q->dropped += n;
		pthread_mutex_unlock(&q->mu);
		return;
	}
	c = xl_malloc(sizeof(*c) + n);
	c->next = NULL;
	c->len = n;
	memcpy(c->data, data, n);
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->bytes += n;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* Waits for the terminal to take what is queued while it takes some of it:
 * gives up once it has taken nothing for `wait_s` (a slow terminal on a busy
 * host still gets everything, a stuck one is let go). */
static size_t termq_close(struct termq *q, double wait_s)
{
	double deadline = xl_mono() + wait_s;
	size_t dropped, left = SIZE_MAX;

	if (!q->started)
		return 0;
	pthread_mutex_lock(&q->mu);
	q->closing = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (;;) {
		pthread_mutex_lock(&q->mu);
		bool empty = !q->head;
		size_t bytes = q->bytes;
		pthread_mutex_unlock(&q->mu);
		if (bytes < left) {
			left = bytes;
			deadline = xl_mono() + wait_s;
		}
		if (empty || xl_mono() > deadline)
			break;
		usleep(10000);
	}
	pthread_mutex_lock(&q->mu);
	/* whatever the terminal did not take in time is given up */
	while (q->head) {
		struct chunk *c = q->head;

		q->head = c->next;
		q->dropped += c->len;
		free(c);
	}
	q->tail = NULL;
	dropped = q->dropped;
	pthread_mutex_unlock(&q->mu);
	if (dropped == 0 || xl_mono() <= deadline)
		pthread_join(q->thread, NULL);
	else
		pthread_detach(q->thread); /* stuck in write(): let it be */
	return dropped;
}

/* ---- the guardian --------------------------------------------------------- */

/* What xlaunch tells the guardian as the attempt goes: the child's process
 * group first, then messages of this shape.  Each is one write() of less
 * than PIPE_BUF bytes, so none is ever read in part. */
struct guard_msg {
	char type;           /* 'p': the peak so far; 'd': the child's wait status;
			      * 'x': all is well, xlaunch ends the attempt itself */
	int64_t value;
};

static void guard_send(int wfd, char type, int64_t value)
{
	struct guard_msg m;

	if (wfd < 0)
		return;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.value = value;
	if (write(wfd, &m, sizeof(m)) != (ssize_t)sizeof(m)) {
		/* the guardian is gone: nothing to tell */
	}
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	default: return "a signal";
	}
}

/* The end of an attempt whose supervisor died, written by the guardian to
 * path (through a temporary file and rename, so it is whole or absent).
 * Plain system calls and snprintf only: this runs in a forked copy. */
static void guard_write_end(const char *path, pid_t sup, double wall_s, int64_t peak,
			    bool child_done, int status, int sig_sent)
{
	char tmp[4200], body[2048], reason[512], obs[96];
	struct timespec now;
	int fd, sig, ec;
	ssize_t len;

	if (!path)
		return;
	if (child_done && WIFEXITED(status)) {
		sig = 0;
		ec = WEXITSTATUS(status);
		snprintf(reason, sizeof(reason), "the supervisor (pid %d) died after the child exited"
			 " with status %d, before it recorded the attempt", (int)sup, ec);
	} else {
		sig = child_done && WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
		ec = 128 + sig;
		if (child_done)
			snprintf(reason, sizeof(reason), "the supervisor (pid %d) died after the child"
				 " ended by signal %d, before it recorded the attempt", (int)sup, sig);
		else
			snprintf(reason, sizeof(reason), "the supervisor (pid %d) was killed; the child"
				 " was ended by SIGKILL when it died%s%s", (int)sup,
				 sig_sent ? ", and what was left of its process group by the guardian's " : "",
				 sig_sent ? sig_name(sig_sent) : "");
	}
	if (peak > 0)
		snprintf(obs, sizeof(obs), "%lld", (long long)peak);
	else
		snprintf(obs, sizeof(obs), "null");
	clock_gettime(CLOCK_REALTIME, &now);
	len = snprintf(body, sizeof(body),
		       "{\"outcome\": \"interrupted\", \"ended_by\": \"guardian\", \"reason\": \"%s\","
		       " \"signal\": %d, \"exit_status\": %d, \"wall_s\": %.3f,"
		       " \"observed_bytes\": %s, \"observed_kind\": \"host_peak_rss\","
		       " \"supervisor_pid\": %d, \"end_time\": %.3f}\n",
		       reason, sig, ec, wall_s, obs, (int)sup,
		       (double)now.tv_sec + now.tv_nsec / 1e9);
	if (len <= 0 || (size_t)len >= sizeof(body))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (xl_write_all(fd, body, (size_t)len) == 0 && fsync(fd) == 0 && close(fd) == 0) {
		if (rename(tmp, path) < 0)
			unlink(tmp);
		return;
	}
	close(fd);
	unlink(tmp);
}

/* Forks the guardian.  It learns the child's process group through the
 * pipe, then reads messages until 'x' (all is well) or end-of-file
 * (xlaunch died): then it takes the whole group down and writes the
 * attempt's end to end_path (NULL: nowhere). */
static pid_t start_guardian(int *wfd, const char *end_path)
{
	int p[2];
	pid_t g, sup = getpid();
	double start = xl_mono();

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	g = fork();
	if (g < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (g == 0) {
		pid_t pgid = 0;
		struct guard_msg m;
		int64_t peak = -1;
		bool child_done = false;
		int status = 0, sent = 0;
		ssize_t n;

		close(p[1]);
		for (size_t i = 0; i < NFWD; i++)
			signal(forwarded_sigs[i], SIG_IGN);
		/* keep running if the terminal goes */
		setsid();
		for (size_t off = 0; off < sizeof(pgid);) {
			n = read(p[0], (char *)&pgid + off, sizeof(pgid) - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* xlaunch died before its child was known: the
				 * child, if any, has its parent-death signal */
				guard_write_end(end_path, sup, xl_mono() - start, -1, false, 0, 0);
				_exit(0);
			}
			off += (size_t)n;
		}
		for (;;) {
			do
				n = read(p[0], &m, sizeof(m));
			while (n < 0 && errno == EINTR);
			if (n != (ssize_t)sizeof(m))
				break;
			if (m.type == 'x')
				_exit(0);
			if (m.type == 'p' && m.value > peak)
				peak = m.value;
			if (m.type == 'd') {
				child_done = true;
				status = (int)m.value;
			}
		}
		/* xlaunch is gone: take the whole group down */
		double wall = xl_mono() - start;

		if (kill(-pgid, SIGTERM) == 0) {
			sent = SIGTERM;
			for (int i = 0; i < 50 && kill(-pgid, 0) == 0; i++)
				usleep(100000);
			if (kill(-pgid, SIGKILL) == 0)
				sent = SIGKILL;
		}
		guard_write_end(end_path, sup, wall, peak, child_done, status, sent);
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return g;
}

/* ---- the OOM killer ------------------------------------------------------------ */

static long oom_kill_count(void)
{
	char *cg, *ev, *path;
	long count = -1;

	cg = xl_read_file("/proc/self/cgroup", NULL, 1 << 16);
	if (!cg)
		return -1;
	/* cgroup v2: "0::/path" */
	char *line = strstr(cg, "0::");

	if (line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		path = xl_asprintf("/sys/fs/cgroup%s/memory.events", line + 3);
		ev = xl_read_file(path, NULL, 1 << 16);
		if (ev) {
			char *k = strstr(ev, "oom_kill ");

			if (k)
				count = strtol(k + 9, NULL, 10);
			free(ev);
		}
		free(path);
	}
	free(cg);
	return count;
}

/* ---- the child ------------------------------------------------------------------ */

static void child_exec(const struct xl_sup_opts *o, int out_w, int err_w, int exec_err_w)
{
	sigset_t none;
	int e;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (size_t i = 0; i < NFWD; i++)
		signal(forwarded_sigs[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (o->limits)
		xl_apply_limits(o->limits);
	xl_memcg_enter(o->memcg);
	dup2(out_w, 1);
	dup2(err_w, 2);
	/* the command is looked up in the PATH the child gets, as `exec` and
	 * env(1) do (execvpe would search this process's) and as the release
	 * the flags were judged against was found */
	environ = o->envp;
	execvp(o->argv[0], o->argv);
	e = errno;
	if (write(exec_err_w, &e, sizeof(e)) < 0) {
		/* the parent will see a plain exit 127 */
	}
	_exit(e == ENOENT ? 127 : 126);
}

/* ---- supervision --------------------------------------------------------------- */

/* One supervised child, from its spawn to its end. */
struct sup {
	const struct xl_sup_opts *o;
	struct xl_sup_result *r;
	int outp[2], errp[2], gw;
	pid_t child, guardian;
	struct sigaction old[NFWD], oldchld;
	struct termq tq_out, tq_err;
	int64_t peak_sent;
	double start, term_at, kill_at, child_done_at;
	long oom_before;
	bool child_done, out_open, err_open, log_failed;
	bool got;             /* the last pass read something from the child */
	int status, drains;
	int peer_fd;          /* readable when another rank is gone, or -1 */
	struct xl_storm_live storm_live;
	struct rusage ru;
	char buf[65536];
};

/* The guardian first, so it holds none of the child's pipes; its pid is
 * written where a sweep looks (it leaves the attempt to a guardian that
 * still lives). */
static void guardian_begin(struct sup *s)
{
	const struct xl_sup_opts *o = s->o;

	s->guardian = start_guardian(&s->gw, o->end_path);
	if (s->guardian < 0)
		xl_warn("cannot start the guardian process: %s; the child may outlive a killed xlaunch",
			strerror(errno));
	else if (o->guardian_path) {
		int fd = open(o->guardian_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		char line[32];
		int len = snprintf(line, sizeof(line), "%d\n", (int)s->guardian);

		if (fd >= 0) {
			if (xl_write_all(fd, line, (size_t)len) < 0)
				xl_warn("cannot write '%s': %s", o->guardian_path, strerror(errno));
			close(fd);
		}
	}
}

/* The signals to forward, and SIGCHLD, wake the loop through sig_pipe. */
static void signals_begin(struct sup *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < NFWD; i++)
		sigaction(forwarded_sigs[i], &sa, &s->old[i]);
	sigaction(SIGCHLD, &sa, &s->oldchld);
	/* a vanished terminal must not kill the supervisor */
	signal(SIGPIPE, SIG_IGN);
}

static void signals_end(struct sup *s)
{
	for (size_t i = 0; i < NFWD; i++)
		sigaction(forwarded_sigs[i], &s->old[i], NULL);
	sigaction(SIGCHLD, &s->oldchld, NULL);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
}

/* Forks the child into its own process group, tells the guardian which
 * group, and learns whether its exec failed.  Returns 0 or 70. */
static int spawn(struct sup *s)
{
	int exp[2];

	if (pipe2(s->outp, O_CLOEXEC) < 0 || pipe2(s->errp, O_CLOEXEC) < 0 ||
	    pipe2(exp, O_CLOEXEC) < 0 || pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		xl_error("cannot create pipes: %s", strerror(errno));
		return XL_EX_SOFTWARE;
	}
	signals_begin(s);
	s->child = fork();
	if (s->child < 0) {
		xl_error("cannot fork: %s", strerror(errno));
		return XL_EX_SOFTWARE;
	}
	if (s->child == 0) {
		close(s->outp[0]);
		close(s->errp[0]);
		close(exp[0]);
		child_exec(s->o, s->outp[1], s->errp[1], exp[1]);
	}
	setpgid(s->child, s->child);
	xl_memcg_adopt(s->o->memcg, s->child);
	close(s->outp[1]);
	close(s->errp[1]);
	close(exp[1]);
	if (s->gw >= 0) {
		pid_t pg = s->child;

		if (write(s->gw, &pg, sizeof(pg)) != (ssize_t)sizeof(pg))
			xl_warn("cannot reach the guardian process");
	}
	int e;
	ssize_t n = read(exp[0], &e, sizeof(e));

	close(exp[0]);
	if (n == (ssize_t)sizeof(e)) {
		s->r->exec_failed = true;
		xl_error("cannot run '%s': %s", s->o->argv[0], strerror(e));
	}
	return 0;
}

/* How long poll may sleep (ms, -1: until something comes): the timeout,
 * the kill after the grace period, the report file, the next sample; once
 * the child is gone, a little while for descendants that hold the pipes.
 * Returns -2 when that while is over. */
static int poll_timeout(struct sup *s, double now)
{
	const struct xl_sup_opts *o = s->o;
	int timeout = -1;

	if (!s->child_done && o->timeout_s > 0 && !s->term_at) {
		double left = s->start + o->timeout_s - now;

		timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
	}
	if (!s->child_done && s->term_at) {
		double left = s->kill_at - now;

		timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
	}
	if (!s->child_done && o->watch && (timeout < 0 || timeout > 100)) {
		/* the report file is read as it grows, so its steps and counts
		 * fall in time with the output's lines */
		timeout = 100;
	}
	if (!s->child_done && o->observe) {
		int t = xl_observe_timeout_ms(o->observe, now);

		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
	}
	if (s->child_done) {
		/* what is in the pipes is read however late this loop comes
		 * back on a busy host: past the wait, passes that do not wait,
		 * until one reads nothing (32 at most: a pipe holds 1 MiB at
		 * most) */
		double left = s->child_done_at + 2.0 - now;

		if (left <= 0 && ((s->drains++ && !s->got) || s->drains > 32))
			return -2;
		timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
	}
	return timeout;
}

/* Samples the group when due; the guardian keeps the peak so far, for an
 * end it may write. */
static void observe_tick(struct sup *s, double now)
{
	struct xl_observe *obs = s->o->observe;

	if (s->child_done || !obs)
		return;
	xl_observe_tick(obs, now);
	if (obs->rss_sum_peak > s->peak_sent + s->peak_sent / 64) {
		s->peak_sent = obs->rss_sum_peak;
		guard_send(s->gw, 'p', s->peak_sent);
	}
}

/* What the child wrote: to its log, to the scanner, to the terminal. */
static void copy_output(struct sup *s, const struct pollfd *pf, int nfds)
{
	const struct xl_sup_opts *o = s->o;

	s->got = false;
	for (int i = 1; i < nfds; i++) {
		bool is_out = pf[i].fd == s->outp[0];

		if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t n = read(pf[i].fd, s->buf, sizeof(s->buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (is_out)
				s->out_open = false;
			else
				s->err_open = false;
			continue;
		}
		int logfd = is_out ? o->out_log : o->err_log;

		s->got = true;
		if (logfd >= 0 && xl_write_all(logfd, s->buf, (size_t)n) < 0 && !s->log_failed) {
			s->log_failed = true;
			xl_warn("cannot write the run's %s log: %s; the terminal still gets it",
				is_out ? "stdout" : "stderr", strerror(errno));
		}
		xl_scan_feed(is_out ? o->scan_out : o->scan_err, s->buf, (size_t)n);
		termq_push(is_out ? &s->tq_out : &s->tq_err, s->buf, (size_t)n);
	}
}

/* Signals that reached xlaunch go to the child's group. */
static void forward_signals(struct sup *s)
{
	unsigned char sigs[64];
	ssize_t n = read(sig_pipe[0], sigs, sizeof(sigs));

	for (ssize_t i = 0; i < n; i++) {
		if (sigs[i] == SIGCHLD)
			continue;
		if (!s->child_done)
			kill(-s->child, sigs[i]);
		if (sigs[i] == SIGINT || sigs[i] == SIGTERM || sigs[i] == SIGHUP || sigs[i] == SIGQUIT)
			s->r->forwarded = sigs[i];
	}
}

/* The one way xlaunch ends a child it decided to end (a timeout, a dead
 * rank, a compile storm, a program over the limit): SIGTERM to its process group now, SIGKILL after
 * grace seconds (check_child sends it); the caller has said who asked. */
static void end_child(struct sup *s, double now, double grace)
{
	kill(-s->child, SIGTERM);
	s->term_at = now;
	s->kill_at = now + grace;
}

/* Whether the child just ended (what it left in its group goes too); else
 * the timeout: SIGTERM to the group, SIGKILL after the grace period. */
static bool check_child(struct sup *s, double now)
{
	const struct xl_sup_opts *o = s->o;
	pid_t w = wait4(s->child, &s->status, WNOHANG, &s->ru);

	if (w == s->child) {
		s->child_done = true;
		guard_send(s->gw, 'd', s->status);
		s->child_done_at = now;
		s->r->wall_s = now - s->start;
		if (kill(-s->child, 0) == 0) {
			kill(-s->child, SIGTERM);
			for (int i = 0; i < 20 && kill(-s->child, 0) == 0; i++)
				usleep(50000);
			kill(-s->child, SIGKILL);
		}
		return true;
	}
	if (o->timeout_s > 0 && !s->term_at && now - s->start >= o->timeout_s) {
		s->r->timed_out = true;
		xl_warn("timeout after %.0f s: stopping the child (SIGTERM, then SIGKILL after %.0f s)",
			o->timeout_s, o->grace_s);
		end_child(s, now, o->grace_s);
	} else if (s->term_at && now >= s->kill_at) {
		kill(-s->child, SIGKILL);
		s->kill_at = now + 3600;
	}
	return false;
}

/* Another rank of the job is gone: the child is ended as at a timeout,
 * with the profile's ranks.grace before SIGKILL.  A child that already
 * ended, or is already being ended (a timeout), keeps its own outcome:
 * nothing was ended for the other rank. */
static void peer_gone(struct sup *s, double now)
{
	double grace;

	s->peer_fd = -1;
	if (s->child_done || s->term_at)
		return;
	grace = xl_peers_fire(s->o->peers);
	s->r->peer_ended = true;
	end_child(s, now, grace);
}

/* compile.on_storm: stop: the storm rule, judged on the run so far, is
 * met: the child is ended as at a timeout, with run's --grace.  A
 * child already being ended keeps its own outcome. */
static void storm_check(struct sup *s, double now)
{
	const struct xl_sup_opts *o = s->o;
	struct xl_storm st;

	if (!o->stop_on_storm || !o->watch || s->child_done || s->term_at)
		return;
	if (!xl_watch_storm_now(o->watch, &s->storm_live, now, &st))
		return;
	s->r->storm_stopped = true;
	s->r->storm_at_s = now - s->start;
	snprintf(s->r->storm_reason, sizeof(s->r->storm_reason), "%s", st.reason);
	xl_warn("compile storm after %.1f s: stopping the child (on_storm: stop; SIGTERM, then"
		" SIGKILL after %.0f s)", s->r->storm_at_s, o->grace_s);
	end_child(s, now, o->grace_s);
}

/* A program XLA compiled needs more than the launch's limit (its memory
 * report, read from the dump): the child is ended now, as at a timeout,
 * with run's --grace, rather than when its runtime fails to allocate.  A
 * child already being ended, or whose runtime already said it ran out of
 * memory, keeps its own outcome. */
static void early_oom_check(struct sup *s, double now)
{
	const struct xl_sup_opts *o = s->o;
	char fn[200], need[32], have[32];
	int64_t b;

	if (o->early_oom_bytes <= 0 || !o->watch || s->child_done || s->term_at)
		return;
	/* the runtime already said it: its own words decide */
	if ((o->scan_out && o->scan_out->oom_id) || (o->scan_err && o->scan_err->oom_id))
		return;
	/* the figure alone first: this runs at every turn of the loop */
	if (xl_watch_largest_report(o->watch, NULL, 0) <= o->early_oom_bytes)
		return;
	b = xl_watch_largest_report(o->watch, fn, sizeof(fn));
	xl_fmt_bytes((uint64_t)b, need, sizeof(need));
	xl_fmt_bytes((uint64_t)o->early_oom_bytes, have, sizeof(have));
	s->r->early_oom = true;
	s->r->early_oom_at_s = now - s->start;
	snprintf(s->r->early_oom_reason, sizeof(s->r->early_oom_reason),
		 "compiler: %.200s needs %s of %s (%.160s; XLA's memory-usage report)", fn, need, have,
		 o->early_oom_limit ? o->early_oom_limit : "the limit");
	xl_warn("out of memory at compile after %.1f s, %s: stopping the child (early_oom; SIGTERM,"
		" then SIGKILL after %.0f s)", s->r->early_oom_at_s, s->r->early_oom_reason, o->grace_s);
	end_child(s, now, o->grace_s);
}

/* Until the child has ended and its output is read. */
static void watch_loop(struct sup *s)
{
	const struct xl_sup_opts *o = s->o;

	while (s->out_open || s->err_open || !s->child_done) {
		struct pollfd pf[4];
		int nfds = 0, timeout;
		double now = xl_mono();

		pf[nfds++] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
		if (s->out_open)
			pf[nfds++] = (struct pollfd){ s->outp[0], POLLIN, 0 };
		if (s->err_open)
			pf[nfds++] = (struct pollfd){ s->errp[0], POLLIN, 0 };
		/* last, so that copy_output reads only the child's pipes */
		if (s->peer_fd >= 0 && !s->child_done)
			pf[nfds++] = (struct pollfd){ s->peer_fd, POLLIN, 0 };
		if ((timeout = poll_timeout(s, now)) == -2)
			break;
		if (poll(pf, (nfds_t)nfds, timeout) < 0 && errno != EINTR)
			break;
		now = xl_mono();
		/* report lines written before the output just woken for come first */
		if (o->watch)
			xl_watch_poll(o->watch, now);
		storm_check(s, now);
		early_oom_check(s, now);
		observe_tick(s, now);
		if (pf[nfds - 1].fd == s->peer_fd && s->peer_fd >= 0) {
			if (pf[--nfds].revents & POLLIN)
				peer_gone(s, now);
		}
		copy_output(s, pf, nfds);
		if (pf[0].revents & POLLIN)
			forward_signals(s);
		if (!s->child_done && check_child(s, now))
			continue;
	}
}

/* A stop signal that reached xlaunch after the loop ended still counts.
 * srun --kill-on-bad-exit and scancel signal every process of a step, one
 * after the other, children first: the child can end of its copy and be
 * reaped before xlaunch's own copy comes (milliseconds later on a busy host,
 * after xlaunch had given its handlers back and was killed by it).  So when
 * the child ended of a stop signal that xlaunch did not forward, xlaunch
 * waits up to STOP_FOLLOW_S for its own copy.  After a SIGKILL it did not
 * send it waits as long before recording a crash: when the whole tree is
 * being killed (scancel JOB.STEP), xlaunch dies in that time and the sweep
 * records the attempt as interrupted. */
#define STOP_FOLLOW_S 0.5
static void await_own_stop(struct sup *s)
{
	int st = s->status, sig = WIFSIGNALED(st) ? WTERMSIG(st)
			       : WIFEXITED(st) && WEXITSTATUS(st) > 128 ? WEXITSTATUS(st) - 128 : 0;
	double end = xl_mono() + STOP_FOLLOW_S;
	struct pollfd pf = { sig_pipe[0], POLLIN, 0 };

	forward_signals(s);
	/* not when xlaunch ended the child itself (a timeout, a dead rank) */
	if ((sig != SIGTERM && sig != SIGINT && sig != SIGHUP && sig != SIGQUIT && sig != SIGKILL) ||
	    s->term_at)
		return;
	while (!s->r->forwarded) {
		double left = end - xl_mono();

		if (left <= 0)
			break;
		if (poll(&pf, 1, (int)(left * 1000) + 1) > 0)
			forward_signals(s);
	}
}

/* After the loop: the child reaped, the scanners and the terminal flushed,
 * the guardian told all is well, the signals given back; the result. */
static void finish(struct sup *s)
{
	const struct xl_sup_opts *o = s->o;
	struct xl_sup_result *r = s->r;

	close(s->outp[0]);
	close(s->errp[0]);
	if (!s->child_done) {
		/* should not happen; be sure */
		kill(-s->child, SIGKILL);
		wait4(s->child, &s->status, 0, &s->ru);
		s->child_done = true;
		s->child_done_at = xl_mono();
		r->wall_s = s->child_done_at - s->start;
	}
	xl_scan_finish(o->scan_out);
	xl_scan_finish(o->scan_err);
	if (o->watch)
		xl_watch_finish(o->watch, s->child_done ? s->child_done_at : xl_mono());
	xl_peers_stop(o->peers);
	r->term_dropped = termq_close(&s->tq_out, 5.0) + termq_close(&s->tq_err, 5.0);
	if (s->gw >= 0) {
		guard_send(s->gw, 'x', 0);
		close(s->gw);
		waitpid(s->guardian, NULL, 0);
	}
	await_own_stop(s);
	signals_end(s);
	r->peak_rss_bytes = (long long)s->ru.ru_maxrss * 1024;
	if (WIFSIGNALED(s->status)) {
		r->signaled = true;
		r->sig = WTERMSIG(s->status);
		r->exit_code = 128 + r->sig;
	} else {
		r->exit_code = WEXITSTATUS(s->status);
	}
	if (s->oom_before >= 0) {
		long after = oom_kill_count();

		r->oom_killed = after > s->oom_before && r->signaled && r->sig == SIGKILL;
	}
	if (r->signaled && r->sig == SIGKILL && xl_memcg_oom_kills(s->o->memcg) > 0) {
		r->oom_killed = r->oom_cgroup = true;
		r->oom_cgroup_own = s->o->memcg->own;
		r->oom_cgroup_limited = s->o->memcg->limit >= 0;
	}
}

int xl_supervise(const struct xl_sup_opts *o, struct xl_sup_result *r)
{
	/* on the stack: the guardian, a fork of this process, ends with
	 * _exit() and must not own a heap block of it */
	struct sup s;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.r = r;
	s.gw = -1;
	s.start = xl_mono();
	s.oom_before = oom_kill_count();
	s.out_open = s.err_open = true;
	guardian_begin(&s);
	if ((rc = spawn(&s)))
		return rc;
	/* sampled from the exec on: before it the child is a copy of xlaunch */
	if (o->observe && !r->exec_failed)
		xl_observe_begin(o->observe, s.child);
	termq_init(&s.tq_out, 1);
	termq_init(&s.tq_err, 2);
	s.peer_fd = xl_peers_start(o->peers);
	xl_storm_live_init(&s.storm_live);
	watch_loop(&s);
	finish(&s);
	return 0;
}
