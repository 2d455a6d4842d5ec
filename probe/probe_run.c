/*
 * probe_run.c - the probe ladder and its isolation: every backend runs in a
 * forked child, in its own process group, under a wall-clock limit, and
 * reports each stage it reaches through a pipe as one JSON line.  The parent
 * turns what it heard (or did not hear) into the backend's verdict.
 */
#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- options ------------------------------------------------------------ */

void xl_probe_opts_init(struct xl_probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = XL_PROBE_DEFAULT_TIMEOUT;
	o->record = true;
}

void xl_probe_opts_release(struct xl_probe_opts *o)
{
	xl_strv_release(&o->backends);
	xl_strv_release(&o->sitedirs);
}

bool xl_probe_wants_plugin_search(const struct xl_probe_opts *o)
{
	return !o->backends.n || xl_strv_contains(&o->backends, "pjrt");
}

bool xl_probe_parse_backends(struct xl_probe_opts *o, const char *list, char **err)
{
	static const char *const known[] = { "cpu", "opencl", "cuda", "pjrt", NULL };
	struct xl_strv items = XL_STRV_INIT;
	bool ok = true;

	xl_strv_split(&items, list, ",");
	if (!items.n) {
		*err = xl_strdup("--backend needs at least one of cpu, opencl, cuda, pjrt, pjrt:PATH");
		ok = false;
	}
	for (size_t i = 0; ok && i < items.n; i++) {
		const char *b = items.v[i];
		size_t k;

		if (xl_startswith(b, "pjrt:")) {
			if (!b[5]) {
				*err = xl_strdup("'pjrt:' needs the path of a plugin");
				ok = false;
				break;
			}
			if (!xl_strv_contains(&o->backends, b))
				xl_strv_push(&o->backends, b);
			continue;
		}
		for (k = 0; known[k]; k++)
			if (strcmp(b, known[k]) == 0)
				break;
		if (!known[k]) {
			const char *best = xl_did_you_mean(b, known);

			if (best)
				*err = xl_asprintf("unknown backend '%s'; did you mean '%s'?", b, best);
			else
				*err = xl_asprintf("unknown backend '%s' (cpu, opencl, cuda, pjrt, pjrt:PATH)", b);
			ok = false;
			break;
		}
		if (!xl_strv_contains(&o->backends, b))
			xl_strv_push(&o->backends, b);
	}
	xl_strv_release(&items);
	return ok;
}

double xl_probe_time_left(const struct xl_probe_rep *r)
{
	double left;

	if (r->deadline <= 0)
		return XL_PROBE_DEFAULT_TIMEOUT;
	left = r->deadline - xl_mono();
	return left > 0 ? left : 0;
}

static void child_main(int fd, int outfd, xl_probe_backend_fn *fn, const char *arg,
		       double deadline)
{
	struct xl_probe_rep r;
	json_t *msg;
	char *s;
	int devnull = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (devnull >= 0) {
		dup2(devnull, 0);
		close(devnull);
	}
	if (outfd >= 0) {
		dup2(outfd, 1);
		dup2(outfd, 2);
	}
	/* a crash must end the child by its signal, whatever handlers the
	 * parent (a sanitizer, a test harness) had installed */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	xl_probe_rep_init(&r, fd);
	r.deadline = deadline;
	fn(&r, arg);
	msg = json_pack("{s:s, s:O}", "stage", xl_probe_stage_name(r.stage), "result", r.doc);
	s = msg ? json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	if (s)
		xl_probe_send_line(fd, s);
	free(s);
	json_decref(msg);
	/* no atexit handlers, no runtime destructors: they may hang */
	_exit(0);
}

/* ---- the parent's side ------------------------------------------------ */

struct listen {
	struct xl_buf line;
	enum xl_probe_stage stage;
	json_t *result;
	json_t *partial;
	const char *name;
	void (*on_stage)(const char *name, enum xl_probe_stage st, void *u);
	void *u;
};

static void heard(struct listen *l, const char *s)
{
	json_t *msg = json_loads(s, 0, NULL);
	int st;

	if (!msg)
		return;
	st = xl_probe_stage_parse(json_string_value(json_object_get(msg, "stage")));
	if (st > (int)l->stage) {
		l->stage = (enum xl_probe_stage)st;
		if (l->on_stage)
			l->on_stage(l->name, l->stage, l->u);
	}
	if (json_is_object(json_object_get(msg, "partial"))) {
		json_decref(l->partial);
		l->partial = json_incref(json_object_get(msg, "partial"));
	}
	if (json_is_object(json_object_get(msg, "result")) && !l->result)
		l->result = json_incref(json_object_get(msg, "result"));
	json_decref(msg);
}

static void take(struct listen *l, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			heard(l, xl_buf_str(&l->line));
			xl_buf_reset(&l->line);
		} else {
			xl_buf_addc(&l->line, p[i]);
		}
	}
}

/* The last non-empty line the child wrote to stdout or stderr, trimmed. */
static char *last_output_line(FILE *f)
{
	char buf[4096], *last = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) != 0)
		return NULL;
	size = ftell(f);
	if (size <= 0)
		return NULL;
	fseek(f, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0, SEEK_SET);
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);

		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
			buf[--n] = '\0';
		if (n) {
			free(last);
			last = xl_strndup(buf, n > 300 ? 300 : n);
		}
	}
	return last;
}

static void copy_output(FILE *f, const char *name)
{
	char buf[4096];
	size_t n;

	if (!f || fseek(f, 0, SEEK_SET) != 0)
		return;
	fprintf(stderr, "--- output of the %s probe\n", name);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fprintf(stderr, "--- end of output\n");
}

static const char *signame(int sig)
{
	const char *s = xl_signal_abbrev(sig);
	static char buf[32];

	if (!s) {
		snprintf(buf, sizeof(buf), "signal %d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", s);
	return buf;
}

/* Waits up to `secs` for pid; true when reaped. */
static bool reap(pid_t pid, int *status, double secs)
{
	double end = xl_mono() + secs;

	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return true;
		if (w < 0 && errno != EINTR)
			return true; /* not ours any more */
		if (xl_mono() > end)
			return false;
		nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
	}
}

static json_t *verdict(const char *name, json_t *res, enum xl_probe_state state,
		       enum xl_probe_stage stage, const char *error, double elapsed)
{
	json_t *o = json_object();
	json_t *v;

	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "state", json_string(xl_probe_state_name(state)));
	json_object_set_new(o, "stage", json_string(xl_probe_stage_name(stage)));
	json_object_set_new(o, "error", error ? json_string(error) : json_null());
	v = res ? json_object_get(res, "version") : NULL;
	json_object_set_new(o, "version", json_is_string(v) ? json_incref(v) : json_null());
	v = res ? json_object_get(res, "devices") : NULL;
	json_object_set_new(o, "devices", json_is_array(v) ? json_incref(v) : json_array());
	v = res ? json_object_get(res, "bandwidth_gbs") : NULL;
	json_object_set_new(o, "bandwidth_gbs", json_is_number(v) ? json_incref(v) : json_null());
	v = res ? json_object_get(res, "gflops") : NULL;
	json_object_set_new(o, "gflops", json_is_number(v) ? json_incref(v) : json_null());
	json_object_set_new(o, "elapsed_s", json_real((double)(long)(elapsed * 1000 + 0.5) / 1000));
	v = res ? json_object_get(res, "details") : NULL;
	json_object_set_new(o, "details", json_is_object(v) ? json_incref(v) : json_object());
	return o;
}

json_t *xl_probe_isolated(const char *name, xl_probe_backend_fn *fn, const char *arg,
			  double timeout_s,
			  void (*on_stage)(const char *name, enum xl_probe_stage st, void *u),
			  void *u)
{
	struct listen l = { XL_BUF_INIT, XL_STAGE_ABSENT, NULL, NULL, name, on_stage, u };
	FILE *out = tmpfile();
	double t0 = xl_mono(), deadline = t0 + timeout_s;
	bool timed_out = false, reaped;
	int pfd[2], status = 0;
	pid_t pid;
	json_t *o;
	char *err = NULL, *last;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		err = xl_asprintf("cannot make a pipe: %s", strerror(errno));
		o = verdict(name, NULL, XL_PROBE_CRASHED, XL_STAGE_ABSENT, err, 0);
		free(err);
		if (out)
			fclose(out);
		return o;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = xl_asprintf("cannot fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		o = verdict(name, NULL, XL_PROBE_CRASHED, XL_STAGE_ABSENT, err, 0);
		free(err);
		if (out)
			fclose(out);
		return o;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_main(pfd[1], out ? fileno(out) : -1, fn, arg, deadline);
	}
	setpgid(pid, pid); /* also done by the child: whichever runs first */
	close(pfd[1]);

	for (;;) {
		double left = deadline - xl_mono();
		struct pollfd p = { pfd[0], POLLIN, 0 };
		char buf[4096];
		ssize_t n;
		int r;

		if (left <= 0) {
			timed_out = true;
			break;
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			continue; /* the deadline check above decides */
		n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		take(&l, buf, (size_t)n);
	}
	close(pfd[0]);
	if (timed_out && !l.result) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	reaped = reap(pid, &status, timed_out ? 2.0 : timeout_s);
	if (!reaped) {
		/* it sent its result but will not exit: stop it */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		reaped = reap(pid, &status, 2.0);
	}
	/* whatever the backend started in its group goes with it */
	kill(-pid, SIGKILL);

	last = last_output_line(out);
	if (xl_verbosity > 0)
		copy_output(out, name);
	if (l.result) {
		enum xl_probe_stage st = l.stage;
		json_t *e = json_object_get(l.result, "error");
		enum xl_probe_state state = st == XL_STAGE_VERIFIED ? XL_PROBE_ALIVE
			: st >= XL_STAGE_INSTALLED ? XL_PROBE_INSTALLED : XL_PROBE_ABSENT;

		o = verdict(name, l.result, state, st,
			    state == XL_PROBE_ALIVE ? NULL
			    : json_is_string(e) ? json_string_value(e) : "not alive (no reason given)",
			    xl_mono() - t0);
	} else if (timed_out) {
		err = xl_asprintf("hung at %s: no answer within %gs%s%s%s",
				  xl_probe_stage_name(l.stage), timeout_s,
				  reaped ? "" : "; the process could not be killed (stuck in the kernel?)",
				  last ? "; last output: " : "", last ? last : "");
		o = verdict(name, l.partial, XL_PROBE_HUNG, l.stage, err, xl_mono() - t0);
	} else if (reaped && WIFSIGNALED(status)) {
		err = xl_asprintf("crashed at %s (%s)%s%s", xl_probe_stage_name(l.stage),
				  signame(WTERMSIG(status)),
				  last ? "; last output: " : "", last ? last : "");
		o = verdict(name, l.partial, XL_PROBE_CRASHED, l.stage, err, xl_mono() - t0);
	} else {
		err = xl_asprintf("crashed at %s (exited with status %d without a report)%s%s",
				  xl_probe_stage_name(l.stage),
				  reaped && WIFEXITED(status) ? WEXITSTATUS(status) : -1,
				  last ? "; last output: " : "", last ? last : "");
		o = verdict(name, l.partial, XL_PROBE_CRASHED, l.stage, err, xl_mono() - t0);
	}
	free(err);
	free(last);
	json_decref(l.result);
	json_decref(l.partial);
	xl_buf_release(&l.line);
	if (out)
		fclose(out);
	return o;
}

/* ---- the whole probe -------------------------------------------------- */

struct plan_item {
	char *name;
	char *arg;
	xl_probe_backend_fn *fn;
	char *absent_error; /* set: nothing to run, report absent */
};

static void plan_add(struct plan_item **v, size_t *n, const char *name, const char *arg,
		     xl_probe_backend_fn *fn, char *absent_error)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0 && xl_streq((*v)[i].arg, arg)) {
			free(absent_error);
			return;
		}
	*v = xl_realloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].name = xl_strdup(name);
	(*v)[*n].arg = arg ? xl_strdup(arg) : NULL;
	(*v)[*n].fn = fn;
	(*v)[*n].absent_error = absent_error;
	(*n)++;
}

static void plan_pjrt(struct plan_item **v, size_t *n, const char *path)
{
	const char *base = strrchr(path, '/');
	char *name = xl_asprintf("pjrt:%s", base ? base + 1 : path);

	plan_add(v, n, name, path, xl_probe_pjrt, NULL);
	free(name);
}

struct progress {
	bool on;
	size_t i, n;
};

static void show_stage(const char *name, enum xl_probe_stage st, void *u)
{
	struct progress *p = u;

	if (p->on)
		fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s...", p->i + 1, p->n, name,
			xl_probe_stage_name(st));
}

json_t *xl_probe_run(const struct xl_ctx *ctx, const struct xl_probe_opts *opts,
		     int *exit_code)
{
	static const char *const all[] = { "cpu", "opencl", "cuda", "pjrt" };
	struct plan_item *plan = NULL;
	size_t nplan = 0;
	struct xl_strv sel = XL_STRV_INIT;
	struct progress prog = { opts->progress, 0, 0 };
	json_t *doc, *arr;

	(void)ctx;
	if (opts->backends.n) {
		for (size_t i = 0; i < opts->backends.n; i++)
			xl_strv_push(&sel, opts->backends.v[i]);
	} else {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			xl_strv_push(&sel, all[i]);
	}
	for (size_t i = 0; i < sel.n; i++) {
		const char *b = sel.v[i];

		if (strcmp(b, "cpu") == 0) {
			plan_add(&plan, &nplan, "cpu", NULL, xl_probe_cpu, NULL);
		} else if (strcmp(b, "opencl") == 0) {
			plan_add(&plan, &nplan, "opencl", NULL, xl_probe_opencl, NULL);
		} else if (strcmp(b, "cuda") == 0) {
			plan_add(&plan, &nplan, "cuda", NULL, xl_probe_cuda, NULL);
		} else if (strcmp(b, "pjrt") == 0) {
			struct xl_strv found = XL_STRV_INIT;

			xl_pjrt_find_plugins(&opts->sitedirs, &found);
			if (!found.n)
				plan_add(&plan, &nplan, "pjrt", NULL, NULL,
					 xl_strdup("no PJRT plugin found in the Python environment's "
						   "site-packages, PJRT_PLUGIN_LIBRARY_PATH or "
						   "TPU_LIBRARY_PATH"));
			for (size_t k = 0; k < found.n; k++)
				plan_pjrt(&plan, &nplan, found.v[k]);
			xl_strv_release(&found);
		} else if (xl_startswith(b, "pjrt:")) {
			plan_pjrt(&plan, &nplan, b + 5);
		}
	}
	xl_strv_release(&sel);

	doc = json_object();
	arr = json_array();
	json_object_set_new(doc, "host", json_string(xl_hostname()));
	json_object_set_new(doc, "backends", arr);
	*exit_code = XL_EX_OK;
	prog.n = nplan;
	for (size_t i = 0; i < nplan; i++) {
		json_t *o;
		const char *state;

		prog.i = i;
		if (plan[i].absent_error) {
			o = verdict(plan[i].name, NULL, XL_PROBE_ABSENT, XL_STAGE_ABSENT,
				    plan[i].absent_error, 0);
		} else {
			show_stage(plan[i].name, XL_STAGE_ABSENT, &prog);
			o = xl_probe_isolated(plan[i].name, plan[i].fn, plan[i].arg,
					      opts->timeout_s, show_stage, &prog);
		}
		if (plan[i].arg)
			json_object_set_new(json_object_get(o, "details"), "path",
					    json_string(plan[i].arg));
		state = json_string_value(json_object_get(o, "state"));
		if (strcmp(state, "alive") != 0 && strcmp(state, "absent") != 0)
			*exit_code = XL_EX_UNAVAILABLE;
		json_array_append_new(arr, o);
		free(plan[i].name);
		free(plan[i].arg);
		free(plan[i].absent_error);
	}
	if (prog.on && nplan)
		fprintf(stderr, "\r\033[K");
	free(plan);
	return doc;
}
