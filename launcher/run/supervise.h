/* supervise.h - supervise.c's function, private to launcher/run/: the
 * child in its own process group, its signals, output, limits and end, and
 * a guardian that records the end when xlaunch dies. */
#ifndef XLAUNCH_LAUNCHER_RUN_SUPERVISE_H
#define XLAUNCH_LAUNCHER_RUN_SUPERVISE_H

#include "launcher/run/run.h"

#include <sys/types.h>

struct xl_observe;
struct xl_memcg;
struct xl_peers;
struct xl_scan;
struct xl_watch;

/* ---- supervision ------------------------------------------------------------- */

struct xl_sup_opts {
	char **argv;
	char **envp;
	const struct xl_limits *limits;
	double timeout_s;     /* 0: none */
	double grace_s;       /* between SIGTERM and SIGKILL */
	int out_log, err_log; /* run-directory files, or -1 */
	struct xl_scan *scan_out, *scan_err;
	struct xl_watch *watch; /* its report file is read as the child runs, or NULL */
	struct xl_observe *observe;   /* samples the child's group as it runs, or NULL
				       * (launcher/run/sampler.h) */
	const char *end_path;         /* where the guardian writes the attempt's end
				       * when xlaunch dies (JSON), or NULL */
	const char *guardian_path;    /* where the guardian's pid is written, or NULL */
	struct xl_peers *peers;       /* the other ranks of the job, watched from the
				       * spawn on, or NULL (launcher/run/peers.h) */
	struct xl_memcg *memcg;       /* the launch's own memory cgroup, the child
				       * moved into it at its start, or NULL
				       * (launcher/run/memcg.h) */
	bool stop_on_storm;           /* compile.on_storm: stop: the child is ended
				       * (as at a timeout, with grace_s) as soon as
				       * the watch's storm rule is met */
	int64_t early_oom_bytes;      /* > 0: a program whose XLA memory-usage
				       * report (the watch's dump) exceeds this
				       * ends the child (as at a timeout, with
				       * grace_s); 0: never */
	const char *early_oom_limit;  /* what that limit is, for the reason
				       * ("limits.address_space") */
};

struct xl_sup_result {
	int exit_code;        /* 0..255, or 128+signal */
	bool signaled;
	int sig;
	bool timed_out;
	int forwarded;        /* the last INT/TERM/HUP/QUIT forwarded, 0 none */
	bool oom_killed;      /* the kernel OOM killer acted (cgroup memory.events) */
	bool exec_failed;
	double wall_s;
	long long peak_rss_bytes;
	size_t term_dropped;  /* bytes a stuck terminal did not get (the logs have them) */
	bool peer_ended;      /* ended because another rank of the job was gone */
	bool oom_cgroup;      /* the OOM killer acted in the launch's own cgroup
			       * (at its limit: limits.memory) */
	bool oom_cgroup_own;  /* ... and that cgroup is the one xlaunch runs in
			       * (a step's, a pod's), not one of its own */
	bool oom_cgroup_limited; /* ... and the launch's own cgroup had a limit
				  * (limits.memory); without one, the limit met
				  * was that of a cgroup above it */
	bool storm_stopped;   /* ended for a compile storm (stop_on_storm) */
	double storm_at_s;    /* when the storm rule was met (seconds from the start) */
	char storm_reason[512];   /* the storm rule's verdict at that moment */
	bool early_oom;       /* ended at a compile: XLA's report exceeded early_oom_bytes */
	double early_oom_at_s;    /* when the report was read (seconds from the start) */
	char early_oom_reason[512];   /* "compiler: jit(f) needs X of Y (limit)" */
};

/* Spawns argv in its own process group and supervises it to the end.
 * Returns 0, or 70 when it could not be started at all. */
int xl_supervise(const struct xl_sup_opts *o, struct xl_sup_result *r);

#endif
