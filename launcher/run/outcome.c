/* outcome.c - naming how a launch ended: output patterns, what the job's
 * report file said and the exit status (see outcome.h). */
#include "launcher/run/outcome.h"
#include "launcher/run/supervise.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

/* ---- patterns ------------------------------------------------------------------ */

/* with_reason: each pattern also needs a reason (peer_exit). */
static int load_list(const char *path, const struct xl_ynode *seq, struct xl_pattern **out,
		     size_t *n, bool with_reason)
{
	if (!seq)
		return 0;
	if (seq->kind != XL_Y_SEQ) {
		xl_error("outcomes '%s':%u:%u: expected a list of patterns", path, seq->line, seq->col);
		return XL_EX_DATAERR;
	}
	*out = xl_calloc(seq->n, sizeof(**out));
	for (size_t i = 0; i < seq->n; i++) {
		const struct xl_ynode *m = seq->items[i];
		const struct xl_ynode *id = xl_ymap_get(m, "id");
		const struct xl_ynode *text = xl_ymap_get(m, "text");
		const struct xl_ynode *re = xl_ymap_get(m, "regex");
		const struct xl_ynode *why = xl_ymap_get(m, "reason");
		struct xl_pattern *p = &(*out)[i];

		*n = i + 1;
		if (!id || id->kind != XL_Y_SCALAR || (!text == !re) ||
		    (text && text->kind != XL_Y_SCALAR) || (re && re->kind != XL_Y_SCALAR)) {
			xl_error("outcomes '%s':%u:%u: a pattern needs an id and one of text or regex",
				 path, m->line, m->col);
			return XL_EX_DATAERR;
		}
		if (with_reason && (!why || why->kind != XL_Y_SCALAR || !*why->str)) {
			xl_error("outcomes '%s':%u:%u: a peer_exit pattern needs a reason", path,
				 m->line, m->col);
			return XL_EX_DATAERR;
		}
		p->id = xl_strdup(id->str);
		if (with_reason)
			p->reason = xl_strdup(why->str);
		if (text) {
			p->text = xl_strdup(text->str);
		} else {
			int e = regcomp(&p->re, re->str, REG_EXTENDED | REG_NOSUB);

			if (e) {
				char msg[200];

				regerror(e, &p->re, msg, sizeof(msg));
				xl_error("outcomes '%s':%u:%u: bad regex: %s", path, re->line, re->col, msg);
				return XL_EX_DATAERR;
			}
			p->has_re = true;
		}
	}
	return 0;
}

int xl_patterns_load(const char *path, struct xl_patterns *out)
{
	char *def = NULL;
	struct xl_ynode *root;
	int rc;

	memset(out, 0, sizeof(*out));
	xl_storm_rule_default(&out->compile.rule);
	if (!path)
		path = def = xl_data_path("etc/outcomes.yaml");
	root = xl_yaml_read("outcomes", path, &rc);
	if (!root) {
		free(def);
		return rc;
	}
	rc = load_list(path, xl_ymap_get(root, "oom"), &out->oom, &out->noom, false);
	if (!rc)
		rc = load_list(path, xl_ymap_get(root, "peer_exit"), &out->peer, &out->npeer, true);
	if (!rc)
		rc = load_list(path, xl_ymap_get(root, "device_busy"), &out->busy, &out->nbusy, true);
	if (!rc)
		rc = xl_cpats_load(path, root, &out->compile);
	xl_ynode_free(root);
	free(def);
	if (rc)
		xl_patterns_release(out);
	return rc;
}

static void release_list(struct xl_pattern *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].text);
		free(v[i].reason);
		if (v[i].has_re)
			regfree(&v[i].re);
	}
	free(v);
}

void xl_patterns_release(struct xl_patterns *p)
{
	release_list(p->oom, p->noom);
	release_list(p->peer, p->npeer);
	release_list(p->busy, p->nbusy);
	xl_cpats_release(&p->compile);
	memset(p, 0, sizeof(*p));
}

static const struct xl_pattern *match(const struct xl_pattern *v, size_t n, const char *line)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].text ? strstr(line, v[i].text) != NULL
			      : regexec(&v[i].re, line, 0, NULL, 0) == 0)
			return &v[i];
	}
	return NULL;
}

/* ---- the scanner ------------------------------------------------------------------ */

void xl_scan_init(struct xl_scan *s, const struct xl_patterns *pats)
{
	memset(s, 0, sizeof(*s));
	s->pats = pats;
	xl_cblock_init(&s->block);
}

void xl_scan_watch(struct xl_scan *s, struct xl_watch *w)
{
	s->watch = w;
}

static void scan_line(struct xl_scan *s)
{
	const struct xl_pattern *p;

	s->line[s->len] = '\0';
	if (!s->pats || !s->len)
		return;
	if (!s->oom_id && (p = match(s->pats->oom, s->pats->noom, s->line))) {
		s->oom_id = xl_strdup(p->id);
		s->oom_line = xl_strndup(s->line, s->len > 400 ? 400 : s->len);
	}
	if (!s->peer && (p = match(s->pats->peer, s->pats->npeer, s->line))) {
		s->peer = p;
		s->peer_line = xl_strndup(s->line, s->len > 400 ? 400 : s->len);
	}
	if (!s->busy && (p = match(s->pats->busy, s->pats->nbusy, s->line))) {
		s->busy = p;
		s->busy_line = xl_strndup(s->line, s->len > 400 ? 400 : s->len);
	}
	if (s->watch)
		xl_watch_line(s->watch, &s->block, s->line, s->len, xl_mono());
}

void xl_scan_feed(struct xl_scan *s, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = data[i];

		s->tail[s->tail_pos++] = c;
		if (s->tail_pos == XL_SCAN_TAIL) {
			s->tail_pos = 0;
			s->tail_full = true;
		}
		if (c == '\n' || c == '\r') {
			scan_line(s);
			s->len = 0;
			continue;
		}
		if (c == '\0')
			c = ' ';
		s->line[s->len++] = c;
		if (s->len == XL_SCAN_LINE_MAX - 1) {
			/* a very long line is scanned in pieces */
			scan_line(s);
			s->len = 0;
		}
	}
}

void xl_scan_finish(struct xl_scan *s)
{
	if (s->len) {
		scan_line(s);
		s->len = 0;
	}
	if (s->watch)
		xl_cblock_close(s->watch, &s->block);
}

char *xl_scan_tail(const struct xl_scan *s, int lines)
{
	struct xl_buf b = XL_BUF_INIT;
	const char *start;
	char *all;

	if (s->tail_full)
		xl_buf_add(&b, s->tail + s->tail_pos, XL_SCAN_TAIL - s->tail_pos);
	xl_buf_add(&b, s->tail, s->tail_pos);
	all = xl_buf_detach(&b);
	start = all + strlen(all);
	while (start > all && (start[-1] == '\n'))
		start--;
	for (int k = 0; start > all; start--) {
		if (start[-1] == '\n' && ++k == lines)
			break;
	}
	char *out = xl_strdup(start);

	free(all);
	return out;
}

void xl_scan_release(struct xl_scan *s)
{
	free(s->oom_id);
	free(s->oom_line);
	free(s->peer_line);
	free(s->busy_line);
	s->oom_id = s->oom_line = s->peer_line = s->busy_line = NULL;
	s->peer = NULL;
	s->busy = NULL;
	if (s->watch)
		xl_cblock_close(s->watch, &s->block);
}

/* "22.82G" (TSL's HumanReadableNumBytes: B, K, M, G, T, P, E, powers of
 * 1024) right after p, up to ')': bytes, or -1. */
static int64_t human_bytes(const char *p)
{
	static const char units[] = "BKMGTPE";
	const char *u;
	char *end;
	double v;

	if (!isdigit((unsigned char)*p))
		return -1;
	v = strtod(p, &end);
	if (end == p || !*end || !(u = strchr(units, *end)) || end[1] != ')')
		return -1;
	for (long i = u - units; i > 0; i--)
		v *= 1024.0;
	return v >= 0 && v < 9.0e18 ? (int64_t)(v + 0.5) : -1;
}

bool xl_tpu_hbm_oom(const char *line, int64_t *required, int64_t *available)
{
	const char *r = strstr(line, "memory required for "), *a = strstr(line, "exceeds available HBM (");

	*required = *available = -1;
	if (!r || !a || a < r)
		return false;
	r = strchr(r, '(');
	if (!r || r > a)
		return false;
	*required = human_bytes(r + 1);
	*available = human_bytes(a + strlen("exceeds available HBM ("));
	return *required > 0 && *available > 0;
}

/* ---- classification --------------------------------------------------------------------- */

/* The live process that holds a lock on file path (from /proc/locks), as
 * "pid N (COMMAND)", or NULL when none does or it cannot be told. */
static char *lock_holder(const char *path)
{
	struct stat st;
	char line[256], want[64], *out = NULL;
	FILE *f;

	if (stat(path, &st) != 0 || !(f = fopen("/proc/locks", "r")))
		return NULL;
	snprintf(want, sizeof(want), ":%llu", (unsigned long long)st.st_ino);
	while (!out && fgets(line, sizeof(line), f)) {
		/* "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
		char dev[64];
		long pid;

		if (sscanf(line, "%*s %*s %*s %*s %ld %63s", &pid, dev) != 2 || pid <= 0)
			continue;
		if (strlen(dev) >= strlen(want) && strcmp(dev + strlen(dev) - strlen(want), want) == 0 &&
		    kill((pid_t)pid, 0) == 0) {
			char comm[64] = "", p[64];
			FILE *c;

			snprintf(p, sizeof(p), "/proc/%ld/comm", pid);
			if ((c = fopen(p, "r"))) {
				if (fgets(comm, sizeof(comm), c))
					comm[strcspn(comm, "\n")] = '\0';
				fclose(c);
			}
			out = xl_asprintf("pid %ld (%s)", pid, *comm ? comm : "?");
		}
	}
	fclose(f);
	return out;
}

/* A launch that could not have the device: another process holds it. */
static void device_busy(const struct xl_scan *busy, struct xl_classified *out)
{
	char *who = lock_holder("/tmp/libtpu_lockfile");

	out->outcome = XL_OUT_ERROR;
	snprintf(out->reason, sizeof(out->reason), "%s; %s; %s: %.200s", busy->busy->reason,
		 who ? who : "no live process holds the lock now (the holder has gone, or the lock is another host's view)",
		 busy->busy->id, busy->busy_line);
	free(who);
}

void xl_classify(const struct xl_sup_result *sr, const struct xl_scan *so,
		 const struct xl_scan *se, const struct xl_jobreport *rep,
		 const struct xl_storm *storm, struct xl_classified *out)
{
	const struct xl_scan *hit = se && se->oom_id ? se : so && so->oom_id ? so : NULL;
	const struct xl_scan *peer = se && se->peer ? se : so && so->peer ? so : NULL;
	const struct xl_scan *busy = se && se->busy ? se : so && so->busy ? so : NULL;
	bool failed = sr->exit_code != 0;

	memset(out, 0, sizeof(*out));
	out->compile_count = storm ? storm->compiles : 0;
	if (rep && rep->compiles > out->compile_count)
		out->compile_count = rep->compiles;
	out->storm = storm && storm->storm;

	if (sr->forwarded) {
		out->outcome = XL_OUT_INTERRUPTED;
		snprintf(out->reason, sizeof(out->reason), "interrupted by %s (forwarded to the child)",
			 strsignal(sr->forwarded));
	} else if (sr->timed_out) {
		out->outcome = XL_OUT_TIMEOUT;
		snprintf(out->reason, sizeof(out->reason), "ran past --timeout and was stopped");
	} else if (failed && sr->oom_cgroup) {
		out->outcome = XL_OUT_OOM;
		snprintf(out->reason, sizeof(out->reason), "killed by the kernel OOM killer at the cgroup"
			 " limit (%s)", sr->oom_cgroup_own ? "of the cgroup xlaunch runs in, or one above it"
			 : sr->oom_cgroup_limited ? "limits.memory, the launch's own cgroup"
			 : "of a cgroup above the launch's own: the one xlaunch runs in, or one above it");
	} else if (sr->storm_stopped) {
		/* ended by xlaunch for the storm (compile.on_storm: stop): the
		 * verdict at that moment */
		out->outcome = XL_OUT_COMPILE_STORM;
		out->storm = true;
		snprintf(out->reason, sizeof(out->reason), "stopped after %.1f s (on_storm: stop): %.460s",
			 sr->storm_at_s, sr->storm_reason);
	} else if (sr->early_oom) {
		/* ended by xlaunch at the compile (compile.early_oom) */
		out->outcome = XL_OUT_OOM;
		snprintf(out->reason, sizeof(out->reason), "%.460s, stopped after %.1f s", sr->early_oom_reason,
			 sr->early_oom_at_s);
	} else if (failed && sr->oom_killed) {
		out->outcome = XL_OUT_OOM;
		snprintf(out->reason, sizeof(out->reason), "killed by the kernel OOM killer (cgroup oom_kill)");
	} else if (failed && hit) {
		out->outcome = XL_OUT_OOM;
		snprintf(out->reason, sizeof(out->reason), "%s: %s", hit->oom_id, hit->oom_line);
	} else if (failed && rep && rep->peak_bytes >= 0 && rep->limit_bytes > 0 &&
		   rep->peak_bytes >= rep->limit_bytes) {
		out->outcome = XL_OUT_OOM;
		snprintf(out->reason, sizeof(out->reason), "reported peak %lld bytes reached the limit %lld",
			 rep->peak_bytes, rep->limit_bytes);
	} else if (sr->exec_failed) {
		out->outcome = XL_OUT_ERROR;
		snprintf(out->reason, sizeof(out->reason), "the command could not be run");
	} else if (failed && busy) {
		/* not a crash of the program: the device was never its */
		device_busy(busy, out);
	} else if (failed && peer) {
		/* the rank did not fail on its own: its runtime stopped it when
		 * another rank left; the class stays what the status says */
		char how[64];

		if (sr->signaled)
			snprintf(how, sizeof(how), "killed by signal %d (%s)", sr->sig, strsignal(sr->sig));
		else
			snprintf(how, sizeof(how), "exited with status %d", sr->exit_code);
		out->outcome = sr->signaled ? XL_OUT_CRASH : XL_OUT_ERROR;
		snprintf(out->reason, sizeof(out->reason), "%s; %s; %s: %.200s", peer->peer->reason,
			 how, peer->peer->id, peer->peer_line);
	} else if (sr->signaled) {
		out->outcome = XL_OUT_CRASH;
		snprintf(out->reason, sizeof(out->reason), "killed by signal %d (%s)", sr->sig,
			 strsignal(sr->sig));
	} else if (failed) {
		out->outcome = XL_OUT_ERROR;
		snprintf(out->reason, sizeof(out->reason), "exited with status %d", sr->exit_code);
	} else if (out->storm) {
		out->outcome = XL_OUT_COMPILE_STORM;
		snprintf(out->reason, sizeof(out->reason), "%s", storm->reason);
	} else {
		out->outcome = XL_OUT_OK;
		snprintf(out->reason, sizeof(out->reason), "exited 0");
	}
}
