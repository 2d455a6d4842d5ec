/* sweep.c - attempts whose supervisor was lost.
 *
 * A run directory is created whole, with its start manifest (written in a
 * hidden ".ID.part" directory and renamed into place), and is settled once
 * its record is in the store (a "settled" file).  The manifest names its
 * owner: host, pid, the pid's start time and the boot id.  When xlaunch is
 * killed, its guardian writes end.json (interrupted, the signal, the wall
 * time, the peak so far); when the guardian is lost too, nothing does.
 * Either way the next xlaunch that opens the store finds the directory
 * unsettled with its owner dead, and records the attempt.
 */
#include "launcher/run/rundir.h"
#include "launcher/run/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary file whose writer may still be at work is left this long. */
#define TMP_GRACE_S 600

static const char *boot_id(void)
{
	static char id[64];

	if (!id[0]) {
		char *s = xl_read_file("/proc/sys/kernel/random/boot_id", NULL, 256);

		snprintf(id, sizeof(id), "%s", s ? s : "");
		id[strcspn(id, " \t\r\n")] = '\0';
		free(s);
	}
	return id;
}

/* Field 22 of /proc/PID/stat (clock ticks since boot), -1 when the process
 * does not exist. */
static long long proc_start(pid_t pid)
{
	char path[64], *s, *p;
	long long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = xl_read_file(path, NULL, 4096);
	if (!s)
		return -1;
	p = strrchr(s, ')');
	if (p) {
		/* p++ is the space before field 3; 19 more spaces to the one
		 * before field 22 */
		p++;
		for (int f = 3; f < 22 && p; f++)
			p = strchr(p + 1, ' ');
		if (p)
			v = strtoll(p + 1, NULL, 10);
	}
	free(s);
	return v;
}

/* Whether pid runs (a zombie does not). */
static bool proc_runs(pid_t pid)
{
	char path[64], *s, *p;
	bool runs;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = xl_read_file(path, NULL, 4096);
	if (!s)
		return kill(pid, 0) == 0 || errno == EPERM;
	p = strrchr(s, ')');
	runs = !p || (p[1] == ' ' && p[2] != 'Z' && p[2] != 'X');
	free(s);
	return runs;
}

json_t *xl_run_owner(void)
{
	return json_pack("{s:s,s:i,s:I,s:s}", "host", xl_hostname(), "pid", (int)getpid(),
			 "pid_start", (json_int_t)proc_start(getpid()), "boot_id", boot_id());
}

enum owner_state { OWNER_ALIVE, OWNER_DEAD, OWNER_UNKNOWN };

/* Whether the owner is provably gone: on this host, the same boot and its
 * pid gone (or now another process), or a boot since.  Another host's
 * owner cannot be told from here. */
static enum owner_state owner_state(const json_t *owner, char *why, size_t n)
{
	const char *host = json_string_value(json_object_get(owner, "host"));
	const char *boot = json_string_value(json_object_get(owner, "boot_id"));
	json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
	json_int_t start = json_integer_value(json_object_get(owner, "pid_start"));
	long long now;

	if (!host || !boot || pid <= 0)
		return OWNER_UNKNOWN;
	if (strcmp(host, xl_hostname()) != 0)
		return OWNER_UNKNOWN;
	if (!*boot_id() || strcmp(boot, boot_id()) != 0) {
		if (!*boot_id())
			return OWNER_UNKNOWN;
		snprintf(why, n, "the host was booted again since xlaunch (pid %d) started",
			 (int)pid);
		return OWNER_DEAD;
	}
	now = proc_start((pid_t)pid);
	if (now >= 0 && (start <= 0 || now == start) && proc_runs((pid_t)pid))
		return OWNER_ALIVE;
	snprintf(why, n, "xlaunch (pid %d) is gone and nothing wrote the attempt's end", (int)pid);
	return OWNER_DEAD;
}

static bool exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

/* pid of "NAME.tmp.PID", or -1. */
static long tmp_pid(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	char *end;
	long pid;

	if (!t || !t[5])
		return -1;
	pid = strtol(t + 5, &end, 10);
	return *end || pid <= 0 ? -1 : pid;
}

/* Whether a temporary file's writer may still be writing it. */
static bool writer_may_live(const char *path, long pid)
{
	struct stat sb;

	if (pid == (long)getpid())
		return true;
	if (stat(path, &sb) == 0 && time(NULL) - sb.st_mtime > TMP_GRACE_S)
		return false;
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The temporary files of pending records in root/pending. */
static int sweep_pending_tmp_in(const char *root)
{
	char *dir = xl_asprintf("%s/pending", root);
	DIR *d = opendir(dir);
	struct dirent *e;
	int fixed = 0;

	if (!d) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d))) {
		long pid = tmp_pid(e->d_name);
		char *path, *final;
		json_t *rec;

		if (pid < 0 || !strstr(e->d_name, ".json.tmp."))
			continue;
		path = xl_asprintf("%s/%s", dir, e->d_name);
		if (writer_may_live(path, pid)) {
			free(path);
			continue;
		}
		final = xl_strndup(path, (size_t)(strstr(path, ".json.tmp.") - path) + 5);
		rec = json_load_file(path, 0, NULL);
		/* whole JSON with its id: completed, unless the record is
		 * there already; anything else: removed */
		if (json_is_object(rec) && json_is_string(json_object_get(rec, "id")) &&
		    link(path, final) == 0)
			fixed++;
		unlink(path);
		json_decref(rec);
		free(final);
		free(path);
	}
	closedir(d);
	free(dir);
	return fixed;
}

int xl_sweep_pending_tmp(void)
{
	char *roots[2];
	size_t n = xl_keep_dirs(roots);
	int fixed = 0;

	for (size_t i = 0; i < n; i++) {
		fixed += sweep_pending_tmp_in(roots[i]);
		free(roots[i]);
	}
	return fixed;
}

/* The host and pid in a run id ("...Z-HOST-PID-rRANK-aN"); false when it
 * is not one. */
static bool id_owner(const char *id, char *host, size_t n, long *pid)
{
	const char *h = strstr(id, "Z-"), *r = strrchr(id, 'r'), *p;

	if (!h || !r || r - id < 2 || r[-1] != '-')
		return false;
	h += 2;
	for (p = r - 2; p > h && *p >= '0' && *p <= '9'; p--)
		;
	if (p <= h || *p != '-' || p + 1 >= r - 1)
		return false;
	*pid = strtol(p + 1, NULL, 10);
	snprintf(host, n, "%.*s", (int)(p - h), h);
	return *pid > 0;
}

/* Whether the owner of ".ID.part" is gone: this host's pid in the id no
 * longer runs (its manifest may not have been written). */
static bool part_owner_gone(const char *name)
{
	char host[128], mine[128], *self = xl_new_run_id(0, 0);
	char *id = xl_strndup(name + 1, strlen(name) - 6);   /* less "." and ".part" */
	long pid, my_pid;
	bool gone = false;

	if (id_owner(id, host, sizeof(host), &pid) &&
	    id_owner(self, mine, sizeof(mine), &my_pid) && strcmp(host, mine) == 0)
		gone = pid != my_pid && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
	free(id);
	free(self);
	return gone;
}

/* Removes dir and the plain files in it (a run directory that was never
 * finished being created). */
static void remove_part_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char *p = xl_asprintf("%s/%s", dir, e->d_name);

		unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

/* Removes the temporary files a killed writer left in a run directory. */
static void remove_stale_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		long pid = tmp_pid(e->d_name);
		char *p;

		if (pid < 0)
			continue;
		p = xl_asprintf("%s/%s", dir, e->d_name);
		if (!writer_may_live(p, pid))
			unlink(p);
		free(p);
	}
	closedir(d);
}

static void copy_field(json_t *to, const char *name, const json_t *from, const char *from_name)
{
	json_t *v = json_object_get(from, from_name ? from_name : name);

	if (v && !json_is_null(v))
		json_object_set(to, name, v);
}

/* What the record of an attempt keeps in its details besides, from the
 * manifest of its end: the compilations, XLA's figures per program, the
 * rank it was ended for (attempt.c's fill_record). */
static void manifest_details(json_t *details, const json_t *m)
{
	json_t *c = json_object_get(m, "compile");
	json_t *mods = json_object_get(json_object_get(m, "xla_dump"), "modules");
	json_t *peer = json_object_get(m, "peer");

	if (json_is_object(c))
		json_object_set(details, "compile", c);
	if (json_is_object(mods) && json_object_size(mods))
		json_object_set(details, "xla_modules", mods);
	if (peer && !json_is_null(peer))
		json_object_set(details, "peer", peer);
}

/* The record of a lost attempt from its manifest and the guardian's end
 * (NULL: none); NULL when the manifest is not one xlaunch wrote. */
static json_t *lost_record(const json_t *m, const json_t *end, const char *why, char **err)
{
	const json_t *sigj = json_object_get(m, "signature");
	const json_t *parts = json_object_get(sigj, "parts");
	const char *hash = json_string_value(json_object_get(sigj, "hash"));
	const char *outcome = json_string_value(json_object_get(m, "outcome"));
	struct calib_sig sig;
	json_t *rec, *details;

	if (!json_is_string(json_object_get(m, "id")) || !hash || !json_is_object(parts)) {
		*err = xl_strdup("the manifest has no id or signature");
		return NULL;
	}
	if (calib_signature(parts, &sig) != 0 || strcmp(sig.hash, hash) != 0) {
		calib_sig_release(&sig);
		*err = xl_strdup("the manifest's signature parts do not give its signature");
		return NULL;
	}
	rec = json_object();
	copy_field(rec, "id", m, NULL);
	copy_field(rec, "time", m, "start");
	copy_field(rec, "profile", m, NULL);
	if (json_is_string(json_object_get(m, "candidate")))
		copy_field(rec, "candidate", m, NULL);
	json_object_set_new(rec, "signature", json_string(sig.hash));
	json_object_set_new(rec, "signature_json", json_string(sig.canonical));
	json_object_set_new(rec, "signature_scheme", json_integer(CALIB_SIG_SCHEME));
	copy_field(rec, "host", m, NULL);
	copy_field(rec, "rank", m, NULL);
	copy_field(rec, "job_id", m, NULL);
	details = json_object();
	if (outcome) {
		/* the supervisor classified the attempt and died before the
		 * record was kept: the manifest has everything.  A child killed
		 * by a SIGKILL xlaunch did not send, and then the supervisor,
		 * is one kill of the whole tree (scancel of a Slurm step kills
		 * every process of it, children first): interrupted. */
		bool tree = strcmp(outcome, "crash") == 0 &&
			    json_integer_value(json_object_get(m, "exit_status")) == 128 + SIGKILL;

		json_object_set_new(rec, "outcome", json_string(tree ? "interrupted" : outcome));
		copy_field(rec, "exit_status", m, NULL);
		copy_field(rec, "wall_s", m, NULL);
		copy_field(rec, "compile_count", m, NULL);
		copy_field(rec, "cache_hits", m, NULL);
		copy_field(rec, "host_peak_rss_bytes", m, NULL);
		copy_field(rec, "figures", m, NULL);
		copy_field(rec, "observed_bytes", m, NULL);
		if (json_object_get(rec, "observed_bytes"))
			copy_field(rec, "observed_kind", m, NULL);
		json_object_set_new(details, "ended_by", json_string("manifest"));
		json_object_set_new(details, "why", json_string(tree ?
			"the child was killed by a SIGKILL that xlaunch did not send, and then the"
			" supervisor, before recording it: the whole process tree was killed" :
			"the supervisor ended the attempt and died before recording it"));
		if (tree)
			json_object_set_new(details, "manifest_outcome", json_string(outcome));
	} else if (end) {
		json_object_set_new(rec, "outcome", json_string("interrupted"));
		copy_field(rec, "exit_status", end, NULL);
		copy_field(rec, "wall_s", end, NULL);
		if (json_integer_value(json_object_get(end, "observed_bytes")) > 0) {
			json_int_t b = json_integer_value(json_object_get(end, "observed_bytes"));

			json_object_set_new(rec, "observed_bytes", json_integer(b));
			json_object_set_new(rec, "observed_kind", json_string("host_peak_rss"));
			json_object_set_new(rec, "figures", json_pack("[{s:s,s:s,s:I,s:s}]",
				"role", "observed", "kind", "host_peak_rss", "bytes", b, "source",
				"the process group's peak sampled until the supervisor died"));
		}
		json_object_set_new(details, "ended_by", json_string("guardian"));
		copy_field(details, "why", end, "reason");
		copy_field(details, "signal", end, NULL);
	} else {
		json_object_set_new(rec, "outcome", json_string("interrupted"));
		json_object_set_new(details, "ended_by", json_string("sweep"));
		json_object_set_new(details, "why", json_string(why));
	}
	json_object_set_new(rec, "details", json_pack("{s:o}", "lost", details));
	if (outcome)
		manifest_details(json_object_get(rec, "details"), m);
	calib_sig_release(&sig);
	return rec;
}

enum sweep_res { SW_SKIP, SW_RECORDED, SW_SETTLED, SW_STORE_FAILED };

/* Whether the record of attempt id waits in a pending/ of this user's. */
static bool kept_anywhere(const char *id)
{
	char *roots[2];
	size_t n = xl_keep_dirs(roots);
	bool kept = false;

	for (size_t i = 0; i < n; i++) {
		char *pend = xl_asprintf("%s/pending/%s.json", roots[i], id);

		kept = kept || exists(pend);
		free(pend);
		free(roots[i]);
	}
	return kept;
}

static enum sweep_res sweep_one(struct calib_store *st, const char *runs, const char *id)
{
	char *dir = xl_asprintf("%s/%s", runs, id);
	char *settled = xl_asprintf("%s/settled", dir);
	char *claim = NULL, *mpath = NULL, *epath = NULL, *err = NULL;
	const char *store;
	json_t *m = NULL, *end = NULL, *rec = NULL;
	enum sweep_res res = SW_SKIP;
	char why[200] = "";
	int fd = -1;

	if (exists(settled))
		goto out;
	claim = xl_asprintf("%s/claim", dir);
	fd = open(claim, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	/* one sweeper at a time; a sweeper that dies lets go of it */
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		goto out;
	if (exists(settled))
		goto out;
	mpath = xl_asprintf("%s/manifest.json", dir);
	m = json_load_file(mpath, 0, NULL);
	if (!json_is_object(m))
		goto out;
	if (!json_object_get(m, "owner")) {
		/* written before owners were kept: nothing can be told of it */
		xl_run_settled_dir(dir, "not swept: written before run directories named their owner");
		res = SW_SETTLED;
		goto out;
	}
	store = json_string_value(json_object_get(m, "store"));
	if (store && strcmp(store, calib_store_path(st)) != 0)
		goto out;
	if (owner_state(json_object_get(m, "owner"), why, sizeof(why)) != OWNER_DEAD)
		goto out;
	if (!json_is_true(json_object_get(m, "end_record_expected"))) {
		xl_run_settled_dir(dir, "not recorded: this launch records nothing in the store");
		remove_stale_tmp(dir);
		res = SW_SETTLED;
		goto out;
	}
	/* a kept record goes in whole by the replay, which settles it */
	if (kept_anywhere(id))
		goto out;
	epath = xl_asprintf("%s/end.json", dir);
	end = json_load_file(epath, 0, NULL);
	if (!end) {
		/* a guardian that still lives is about to write the end */
		char *gpath = xl_asprintf("%s/guardian", dir);
		char *g = xl_read_file(gpath, NULL, 64);
		long gpid = g ? strtol(g, NULL, 10) : 0;

		free(g);
		free(gpath);
		if (gpid > 0 && proc_runs((pid_t)gpid)) {
			end = json_load_file(epath, 0, NULL);
			if (!end)
				goto out;
		}
	}
	rec = lost_record(m, json_is_object(end) ? end : NULL, why, &err);
	if (!rec) {
		xl_warn("run directory '%s': %s; not recorded", dir, err);
		xl_run_settled_dir(dir, "not recorded: the manifest could not be read as an attempt");
		res = SW_SETTLED;
		goto out;
	}
	switch (calib_record_attempt_json(st, rec)) {
	case 0:
		{
			char *w = xl_asprintf("recorded by xlaunch (pid %d), a later one: the supervisor was lost", (int)getpid());

			xl_run_settled_dir(dir, w);
			free(w);
		}
		remove_stale_tmp(dir);
		res = SW_RECORDED;
		break;
	case XL_EX_DATAERR:
		xl_warn("run directory '%s': the store refused its record: %s", dir, calib_errmsg(st));
		xl_run_settled_dir(dir, "not recorded: the store refused the record");
		res = SW_SETTLED;
		break;
	default:
		res = SW_STORE_FAILED;
		break;
	}
out:
	if (fd >= 0)
		close(fd);   /* and the lock with it */
	json_decref(m);
	json_decref(end);
	json_decref(rec);
	free(err);
	free(epath);
	free(mpath);
	free(claim);
	free(settled);
	free(dir);
	return res;
}

/* ".probe.PID" in dir: a check of the directory its writer left. */
static void sweep_probe(const char *dir, const char *name)
{
	char *p = xl_asprintf("%s/%s", dir, name);

	if (!writer_may_live(p, strtol(name + 7, NULL, 10)))
		unlink(p);
	free(p);
}

/* ".ID.part" in runs: a run directory its owner never finished, removed
 * when the owner is gone; true when this removed it (one that is no
 * longer there may have become the run directory). */
static bool sweep_part(const char *runs, const char *name)
{
	char *p = xl_asprintf("%s/%s", runs, name);
	char *mp = xl_asprintf("%s/manifest.json", p);
	json_t *m = json_load_file(mp, 0, NULL);
	struct stat sb;
	char why[200];
	bool gone;

	if (stat(p, &sb) < 0) {
		gone = false;
	} else {
		gone = m ? owner_state(json_object_get(m, "owner"), why, sizeof(why)) == OWNER_DEAD
			 : part_owner_gone(name) || time(NULL) - sb.st_mtime > TMP_GRACE_S;
		if (gone)
			remove_part_dir(p);
	}
	json_decref(m);
	free(mp);
	free(p);
	return gone;
}

/* Every entry of runs, for a runs/ that an xlaunch older than the index
 * of unsettled run directories wrote: each unsettled one is put in the
 * index as it is swept, and the index then says it is whole.  -1 when
 * the store failed. */
static int sweep_all(struct calib_store *st, const char *runs, int *recorded)
{
	DIR *d = opendir(runs);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, ".probe.", 7) == 0) {
			sweep_probe(runs, e->d_name);
			continue;
		}
		if (e->d_name[0] == '.') {
			if (xl_endswith(e->d_name, ".part") && strlen(e->d_name) > 6 &&
			    !sweep_part(runs, e->d_name)) {
				char *id = xl_strndup(e->d_name + 1, strlen(e->d_name) - 6);

				xl_unsettled_add(runs, id);
				free(id);
			}
			continue;
		}
		char *settled = xl_asprintf("%s/%s/settled", runs, e->d_name);
		bool done = exists(settled);

		free(settled);
		if (done)
			continue;
		xl_unsettled_add(runs, e->d_name);
		enum sweep_res r = sweep_one(st, runs, e->d_name);

		if (r == SW_RECORDED)
			(*recorded)++;
		if (r == SW_STORE_FAILED) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	if (rc == 0) {
		char *index = xl_unsettled_path(runs, NULL);
		char *done = xl_unsettled_path(runs, XL_UNSETTLED_DONE);
		int fd = xl_mkdirs(index, 0700) == 0 ? open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;

		if (fd >= 0)
			close(fd);
		free(done);
		free(index);
	}
	return rc;
}

/* One entry of the index, run id: its run directory swept, or its
 * unfinished ".ID.part", or the entry taken out when neither is left and
 * its owner is gone. */
static enum sweep_res sweep_indexed(struct calib_store *st, const char *runs, const char *id)
{
	char *dir = xl_asprintf("%s/%s", runs, id), *settled = xl_asprintf("%s/settled", dir);
	char *part = xl_asprintf(".%s.part", id), *ppath = xl_asprintf("%s/%s", runs, part);
	enum sweep_res r = SW_SKIP;
	struct stat sb;

	if (stat(dir, &sb) == 0) {
		if (exists(settled))
			xl_unsettled_remove(runs, id);
		else
			r = sweep_one(st, runs, id);
	} else if (exists(ppath)) {
		/* its entry goes at a later sweep, when neither is there */
		sweep_part(runs, part);
	} else {
		/* made and never created (or removed by hand): gone with its
		 * owner.  Looked at again last: the ".part" may have been
		 * renamed into place since the first look. */
		char *entry = xl_unsettled_path(runs, id);

		if ((part_owner_gone(part) ||
		     (stat(entry, &sb) == 0 && time(NULL) - sb.st_mtime > TMP_GRACE_S)) &&
		    !exists(dir) && !exists(ppath))
			xl_unsettled_remove(runs, id);
		free(entry);
	}
	free(ppath);
	free(part);
	free(settled);
	free(dir);
	return r;
}

/* The run directories of root/runs that are not settled, from the index
 * (the whole of runs/ once, when the index is not whole yet); -1 when the
 * store failed. */
static int sweep_runs_in(struct calib_store *st, const char *root, int *recorded)
{
	char *runs = xl_asprintf("%s/runs", root), *index = xl_unsettled_path(runs, NULL);
	char *done = xl_unsettled_path(runs, XL_UNSETTLED_DONE);
	DIR *d = NULL;
	struct dirent *e;
	int rc = 0;

	if (!exists(done)) {
		rc = sweep_all(st, runs, recorded);
		goto out;
	}
	d = opendir(index);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, ".probe.", 7) == 0)
			sweep_probe(index, e->d_name);
		if (e->d_name[0] == '.')
			continue;
		enum sweep_res r = sweep_indexed(st, runs, e->d_name);

		if (r == SW_RECORDED)
			(*recorded)++;
		if (r == SW_STORE_FAILED) {
			rc = -1;
			break;
		}
	}
	if (d)
		closedir(d);
out:
	free(done);
	free(index);
	free(runs);
	return rc;
}

int xl_sweep_lost(struct calib_store *st, bool *store_failed)
{
	char *roots[2];
	size_t n = xl_keep_dirs(roots);
	int recorded = 0, rc = 0;

	/* the state directory's, and what launches kept under $TMPDIR */
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = sweep_runs_in(st, roots[i], &recorded);
		free(roots[i]);
	}
	if (store_failed)
		*store_failed = rc < 0;
	return recorded;
}
