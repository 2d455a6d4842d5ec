/* run.h - internals of `xlaunch run`: outcome patterns, the streaming
 * output scanner, the report file, child supervision and run records. */
#ifndef XLAUNCH_LAUNCHER_RUN_SUPERVISE_H
#define XLAUNCH_LAUNCHER_RUN_SUPERVISE_H

#include "launcher/run/run.h"
#include "launcher/run/storm.h"

#include <regex.h>
#include <sys/types.h>

struct xl_observe;
struct xl_peers;

/* ---- patterns and the streaming scanner ------------------------------------ */

struct xl_pattern {
	char *id;
	char *text;      /* fixed substring, or NULL */
	regex_t re;      /* when text is NULL */
	bool has_re;
	char *reason;    /* peer_exit: what the outcome says; NULL elsewhere */
};

struct xl_patterns {
	struct xl_pattern *oom;
	size_t noom;
	struct xl_pattern *peer;     /* the rank was stopped by another rank's exit */
	size_t npeer;
	struct xl_cpats compile;     /* lines about compiling, the storm rule */
};

/* Loads etc/outcomes.yaml (or path).  Returns 0 or 65/66 after printing. */
int xl_patterns_load(const char *path, struct xl_patterns *out);
void xl_patterns_release(struct xl_patterns *p);

#define XL_SCAN_LINE_MAX 65536
#define XL_SCAN_TAIL 8192

/* One output stream's scanner: lines are matched once as they arrive. */
struct xl_scan {
	const struct xl_patterns *pats;
	char line[XL_SCAN_LINE_MAX];
	size_t len;
	char tail[XL_SCAN_TAIL];      /* ring of the last bytes, for messages */
	size_t tail_pos;
	bool tail_full;
	char *oom_id;                 /* first OOM pattern seen, and its line */
	char *oom_line;
	const struct xl_pattern *peer; /* first peer_exit pattern seen (in pats), */
	char *peer_line;              /* and its line */
	struct xl_watch *watch;       /* compile events go here, or NULL */
	struct xl_cblock block;       /* this stream's open block of compile lines */
};

void xl_scan_init(struct xl_scan *s, const struct xl_patterns *pats);
/* Lines of the stream go to w as well (compilations, steps). */
void xl_scan_watch(struct xl_scan *s, struct xl_watch *w);
void xl_scan_feed(struct xl_scan *s, const char *data, size_t n);
void xl_scan_finish(struct xl_scan *s);
/* The last few lines of the stream; caller frees. */
char *xl_scan_tail(const struct xl_scan *s, int lines);
void xl_scan_release(struct xl_scan *s);

/* ---- the report file ----------------------------------------------------------- */

struct xl_report {
	long long predicted_bytes;   /* -1 unknown */
	long long peak_bytes;        /* -1 unknown; the largest reported */
	long long limit_bytes;
	char source[64];
	long compiles;               /* last cumulative count reported, -1 none */
	long cache_hits;             /* -1 none */
	long last_step;              /* -1 none */
	long lines, malformed, unknown;
};

/* Reads the report file (a missing file is an empty report).  Malformed and
 * unknown lines are counted and warned about once; nothing fails. */
void xl_report_read(const char *path, struct xl_report *r);
/* One line into r; returns false when malformed (fuzz entry point). */
bool xl_report_line(const char *line, size_t len, struct xl_report *r);
void xl_report_init(struct xl_report *r);

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
				       * (launcher/observe.h) */
	const char *end_path;         /* where the guardian writes the attempt's end
				       * when xlaunch dies (JSON), or NULL */
	const char *guardian_path;    /* where the guardian's pid is written, or NULL */
	struct xl_peers *peers;       /* the other ranks of the job, watched from the
				       * spawn on, or NULL (launcher/run/peers.h) */
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
};

/* Spawns argv in its own process group and supervises it to the end.
 * Returns 0, or 70 when it could not be started at all. */
int xl_supervise(const struct xl_sup_opts *o, struct xl_sup_result *r);

/* ---- classification ---------------------------------------------------------------- */

struct xl_classified {
	enum xl_outcome outcome;
	char reason[512];
	bool storm;           /* compiles kept coming after warm-up, or a recompile limit */
	long compile_count;
};

/* The outcome from the exit status, the OOM lines of both streams, the
 * report and the storm verdict (NULL: none).  A failed rank whose output
 * has a peer_exit line keeps the class its status gives (crash, error) and
 * that pattern's reason. */
void xl_classify(const struct xl_sup_result *sr, const struct xl_scan *so,
		 const struct xl_scan *se, const struct xl_report *rep,
		 const struct xl_storm *storm, struct xl_classified *out);

/* Starts watching an attempt's compilations: the patterns' rule with the
 * profile's compile section over it, its step pattern, the report file,
 * XLA's dump and Inductor's cache (dump, inductor: may be NULL; borrowed),
 * read as they grow.
 * Release with xl_watch_release. */
void xl_run_watch_init(struct xl_watch *w, const struct xl_patterns *pats,
		       const struct xl_profile *p, const char *report_path, struct xl_dump *dump,
		       struct xl_inductor *inductor, double start);

/* ---- ranks ------------------------------------------------------------------------ */

/* The rank from RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK or
 * TPU_WORKER_ID; 0 when none is set.  *from names the variable (or NULL). */
int xl_rank(const char **from);
/* The number of ranks from WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE or
 * PMI_SIZE; 1 when none is set.  *from names the variable (or NULL). */
int xl_world_size(const char **from);
/* The job launch this process belongs to: the id from XLAUNCH_JOB_ID,
 * SLURM_JOB_ID (with ".STEP" when SLURM_STEP_ID is set: each srun of an
 * allocation is a launch of its own), TORCHELASTIC_RUN_ID or JOBSET_NAME
 * (the first set; *from names it), followed by "#N" for the engine's Nth
 * restart of it
 * (XLAUNCH_JOB_ATTEMPT, TORCHELASTIC_RESTART_COUNT, SLURM_RESTART_COUNT;
 * nothing for 0).  NULL when no id is set.  Caller frees. */
char *xl_job_launch_id(const char **from);

#endif
