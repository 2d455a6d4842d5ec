/* outcome.h - outcome.c's functions, private to launcher/run/: the patterns
 * of etc/outcomes.yaml (out-of-memory and peer_exit lines; the compile
 * sections are the watch's), the streaming scanner of the child's output,
 * and how a launch ended from its status, its output, the job's report
 * file and the storm verdict. */
#ifndef XLAUNCH_LAUNCHER_RUN_OUTCOME_H
#define XLAUNCH_LAUNCHER_RUN_OUTCOME_H

#include "launcher/run/run.h"
#include "launcher/watch/watch.h"

#include <regex.h>

struct xl_sup_result;

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
	struct xl_pattern *busy;     /* the device is held by another process (device_busy) */
	size_t nbusy;
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
	const struct xl_pattern *busy; /* first device_busy pattern seen, */
	char *busy_line;              /* and its line */
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

/* The TPU compiler's figures in its out-of-memory line ("... the total
 * memory required for HLO temporaries (22.82G) exceeds available HBM
 * (15.75G)"): what the program needs and what the device has, in bytes
 * (its units are powers of 1024).  False when the line has not both. */
bool xl_tpu_hbm_oom(const char *line, int64_t *required, int64_t *available);

/* ---- classification ---------------------------------------------------------------- */

struct xl_classified {
	enum xl_outcome outcome;
	char reason[512];
	bool storm;           /* compiles kept coming after warm-up, or a recompile limit */
	long compile_count;
};

/* The outcome from the exit status, the OOM lines of both streams, what
 * the job's report file said (launcher/watch/watch.h) and the storm verdict
 * (NULL: none).  A failed rank whose output
 * has a peer_exit line keeps the class its status gives (crash, error) and
 * that pattern's reason. */
void xl_classify(const struct xl_sup_result *sr, const struct xl_scan *so,
		 const struct xl_scan *se, const struct xl_jobreport *rep,
		 const struct xl_storm *storm, struct xl_classified *out);

#endif
