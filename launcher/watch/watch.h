/* watch.h - the compile watch: compilations seen from outside the job, and
 * the storm rule over them.  Code outside launcher/watch/ includes only this
 * header; the room builds on common/ alone.
 *
 * It owns:
 *   - XLA's dump read as the job runs (dump.c: each compiled module, its
 *     times, entry shapes and memory-usage report; pruned there only);
 *   - Inductor's compiled graphs counted from its cache (inductor.c);
 *   - the job's report file (XLAUNCH_REPORT): its one reader, fed as the
 *     file grows, read by the outcome and the figures after the end
 *     (jobreport.c);
 *   - the runtimes' own lines about compiling (etc/outcomes.yaml,
 *     compile_events), the job's report file's steps and counts, and the
 *     dump, turned into one event per compilation and per function (a
 *     compilation the dump and a line both saw is one event), the
 *     persistent cache's hits, misses and failed loads, torch.compile's
 *     recompile limit and graph breaks, steps and the time to the first one
 *     (watch.c);
 *   - the storm rule (compile_storm) and what is said of it (verdict.c);
 *   - the watch's configuration: outcomes.yaml's compile sections (read by
 *     the watch from the file, or from its parsed tree) and a profile's
 *     compile settings over them (watch.c).
 * The watch owns its inputs: from what xl_watch_init is given (the dump
 * directory, the child's environment, the report file's path) it creates,
 * polls and releases its dump reader, its count of Inductor's graphs and
 * its reader of the job's report file.
 * The back rooms' headers (dump.h, events.h, inductor.h, jobreport.h) each
 * declare their own file's functions and are private to launcher/watch/.
 *
 * Ownership: xl_cpats_load and xl_cpats_read fill patterns that
 * xl_cpats_release frees.  An xl_watch borrows its patterns and settings,
 * copies what it reads from the rest of its configuration, and
 * xl_watch_release frees what it collected and made.  Strings returned as
 * char * are the caller's to free.
 */
#ifndef XLAUNCH_LAUNCHER_WATCH_H
#define XLAUNCH_LAUNCHER_WATCH_H

#include "common/common.h"

#include <regex.h>
#include <stdint.h>
#include <sys/types.h>

/* The readers the watch makes (their back rooms: dump.h, inductor.h). */
struct xl_dump;
struct xl_inductor;

/* ---- XLA's dump: the entry computation of a module (dump.c) ---------------------------------------------------------- */

/* A train state has hundreds of inputs, and the batch that changes shape
 * usually comes last (or first): the names and types of the first and the
 * last ones are kept, and of every one a hash of its type, so that any
 * input that changed is named by its place. */
#define XL_HLO_KEEP_HEAD 128
#define XL_HLO_KEEP_TAIL 128
#define XL_HLO_MAX_PARAMS (XL_HLO_KEEP_HEAD + XL_HLO_KEEP_TAIL)

struct xl_hlo_param {
	char *name;              /* "x.1" (without the %) */
	char *type;              /* "f32[100,64]", layouts and comments taken out */
	size_t index;            /* its place among all the entry's parameters */
};

struct xl_hlo_entry {
	struct xl_hlo_param *v;  /* the first XL_HLO_KEEP_HEAD and the last
				  * XL_HLO_KEEP_TAIL, by index */
	size_t n;                /* parameters kept (at most XL_HLO_MAX_PARAMS) */
	size_t total;            /* parameters in the line */
	uint64_t *hash;          /* per parameter (total of them): a hash of its type */
};

/* ---- the job's report file (its reader: jobreport.c) ----------------------------- */

/* The job's report file (XLAUNCH_REPORT: JSON lines the job or its helper
 * writes, etc/report/xlaunch_report.py) has one reader: the watch feeds it
 * as the file grows, the outcome and the figures read what it kept.  Not
 * XLA's memory-usage reports (the dump) nor `calib report` (the report
 * room).
 *
 * One rule for every line: a JSON object with a string "kind" (a
 * duplicated key, or a line over 1 MiB, makes it malformed).  A count
 * (bytes, a step, a compile count) is a JSON integer >= 0 or a real >= 0
 * below 2^63, truncated; anything else is no figure. */
enum xl_jobreport_kind { XL_JR_MALFORMED, XL_JR_MEMORY, XL_JR_COMPILE, XL_JR_STEP, XL_JR_UNKNOWN };

/* One line, parsed.  Counts not given are -1, numbers NAN. */
struct xl_jobreport_line {
	int kind;                    /* enum xl_jobreport_kind */
	double t;                    /* when the job wrote it (epoch seconds) */
	/* memory */
	char source[64], memory_kind[64];     /* "" when not given (or not strings) */
	bool has_source, has_memory_kind;
	long long predicted_bytes, peak_bytes, limit_bytes, per_device_bytes;
	/* compile */
	long long count, cache_hits;
	/* step */
	long long step;
	double step_time_s;
};

/* The largest peak the report gave of one source and memory kind, and the
 * line that first reached it (lines count from 1). */
struct xl_jobreport_peak {
	char source[64], memory_kind[64];
	bool has_source, has_memory_kind;
	long long bytes;
	long line;                   /* the first line with this peak */
	long first_line;             /* the first line of this source and kind */
};

/* At most this many distinct (source, memory kind) peaks are kept; the
 * lines of later ones count in peak_bytes only. */
#define XL_JOBREPORT_MAX_PEAKS 64

struct xl_jobreport {
	/* what the lines read so far say */
	long long predicted_bytes;   /* the last given, -1 */
	long long peak_bytes;        /* the largest given, -1 */
	char peak_source[64];        /* its source ("report" when it said none) */
	long long limit_bytes;       /* the last given, -1 */
	long compiles;               /* the last cumulative compile count, -1 */
	long cache_hits;             /* the last given, -1 */
	long last_step;              /* -1 */
	long lines, malformed, unknown;
	long first_malformed;        /* its line, 0 none */
	struct xl_jobreport_peak *peaks;
	size_t npeaks;
	long long xla_per_device_bytes;   /* the first per_device_bytes of an
					   * xla_memory_analysis line, -1 */
	long xla_per_device_line;
	/* the reader */
	int fd;
	char *buf;
	size_t len;
	bool skip;                   /* inside a line over the bound */
	bool done;                   /* read to its end */
};

/* ---- events, patterns and the watch (watch.c; the storm rule: verdict.c) ------------- */

/* What a line about compilation says (the `event` of a pattern). */
enum xl_cev {
	XL_CEV_COMPILED,
	XL_CEV_CACHE_HIT,
	XL_CEV_CACHE_MISS,
	XL_CEV_CACHE_WRITTEN,
	XL_CEV_CACHE_NOT_WRITTEN,
	XL_CEV_CACHE_UNREADABLE,
	XL_CEV_SHAPES,
	XL_CEV_TRACE_MISS,
	XL_CEV_TRACE_FUNCTION,
	XL_CEV_TRACE_KIND,
	XL_CEV_TRACE_CHANGE,
	XL_CEV_COMPILE_CAUSE,
	XL_CEV_GRAPH,
	XL_CEV_FRAME,
	XL_CEV_RECOMPILING,
	XL_CEV_GUARD,
	XL_CEV_LIMIT,
	XL_CEV_LIMIT_FUNCTION,
	XL_CEV_LIMIT_REASON,
	XL_CEV_GRAPH_BREAK,
	XL_CEV_GRAPH_BREAK_PLACE,
	XL_CEV_GRAPH_BREAK_REASON,
	XL_CEV_N
};

/* One pattern of compile_events. */
struct xl_cpat {
	char *id, *runtime;
	int event;               /* enum xl_cev */
	int in;                  /* the block's event, or -1 */
	bool first;              /* only the line right after the opening line */
	char *text;              /* substring every such line has */
	regex_t re;
	bool has_re;
	int g_function, g_file, g_line, g_detail, g_frame, g_seconds;  /* group numbers, 0: none */
	regex_t skip;            /* frames of the runtime itself */
	bool has_skip;
};

/* The storm thresholds (etc/outcomes.yaml compile_storm, or a profile's
 * compile section). */
struct xl_storm_rule {
	long warmup_steps;       /* by steps: warm-up ends at this step */
	long max_after_warmup;   /* more recompilations than this after warm-up, still
				  * arriving past the middle of the run, is a storm */
	double max_compile_share;   /* recompiling more than this share of the time
				     * after warm-up is a storm */
};

/* A runtime's own programs (compile_internal): programs the runtime
 * compiles for itself, not for a function of the user's (JAX: an
 * operation run outside jit, jnp.ones or jax.random.normal, compiles a
 * program named after it).  A program whose name starts with prefix (a
 * private function of the runtime's), or is one of names, is internal. */
struct xl_internal {
	char *runtime;
	char *prefix;            /* or NULL */
	struct xl_strv names;
	struct xl_strmap index;  /* over names */
};

struct xl_cpats {
	struct xl_cpat *v;
	size_t n;
	long block_lines;
	struct xl_storm_rule rule;
	struct xl_internal *internal;   /* compile_internal, per runtime */
	size_t ninternal;
	char *debug_profile;         /* compile_logging.debug_profile, or NULL */
	struct xl_strv logging_vars; /* compile_logging.variables */
};

/* Reads compile_events, block_lines, compile_storm and compile_logging from
 * the parsed etc/outcomes.yaml root (path for messages).  Returns 0, or 65
 * after printing "outcomes 'PATH':LINE:COL: what failed". */
int xl_cpats_load(const char *path, const struct xl_ynode *root, struct xl_cpats *out);
/* The same from the file itself (NULL: the shipped etc/outcomes.yaml);
 * 66 when it cannot be read, 65 when it does not parse or a section is
 * wrong, each after its message; after a failure *out holds nothing to
 * release. */
int xl_cpats_read(const char *path, struct xl_cpats *out);
void xl_cpats_release(struct xl_cpats *c);
/* The compiled-in defaults of the storm rule. */
void xl_storm_rule_default(struct xl_storm_rule *r);

/* ---- the watch ------------------------------------------------------------------ */

/* Pairs the compilations two sources saw of one program, in order: the
 * first unpaired event of the side that is ahead, and the last event. */
struct xl_mkey {
	int cursor, tail;        /* event indices, -1 */
};

/* One function (program, graph-triggering frame) that compiled. */
struct xl_cfn {
	char *name;              /* "jit(step)", "forward", "main" */
	char *runtime;           /* "jax", "torch_xla", "torch.compile", "report" */
	char *place;             /* "file:line", or NULL */
	bool internal;           /* a program the runtime compiled for itself
				  * (xl_cpats_internal) */
	long compiles;           /* real compilations */
	long loads;              /* programs loaded from the persistent cache (its lines) */
	long dump_loads;         /* the same, seen in XLA's dump */
	long after_warmup;       /* compilations after warm-up (by steps) */
	long first_step, last_step;   /* the step seen before its first and last compilation, -1 */
	double first_s, last_s;       /* seconds from the start of the run */
	char *cause;             /* why it compiled the last time, in the runtime's words */
	char *first_reason;      /* torch.compile: the first guard failure seen */
	char *shapes, *prev_shapes;   /* JAX: argument types now and before */
	struct xl_strv graphs;   /* torch_xla: distinct graph hashes */
	bool limit_hit;          /* torch.compile gave up on it (recompile limit) */
	long limit;
	char *limit_reason;
	/* from the dump and the lines' times */
	long from_log, from_dump;      /* compilations each source saw */
	double compile_s;              /* the known compile time, summed */
	double recompile_after_s;      /* of recompilations after warm-up (by cost) */
	long after_cost;               /* recompilations after the cost rule's warm-up */
	struct xl_mkey mk;
	long entries;                  /* entry parameter lists read */
	struct xl_hlo_entry e_first, e_second, e_prev, e_last;
	long entry_changed, entry_same;   /* recompilations whose inputs changed, or not */
	long *pchg;                    /* per input (its index among all): recompilations
					* that changed it */
	size_t npchg;
	long count_changed;            /* recompilations whose number of inputs changed */
	size_t count_from, count_to;   /* the last such change */
	uint64_t progs[32];            /* program texts seen */
	size_t nprogs;
	long same_program;             /* compilations of a text seen before */
};

/* A graph break, by place. */
struct xl_gbreak {
	char *place;             /* file:line, or NULL when the runtime did not say */
	char *reason;
	long count;              /* distinct occurrences (frames) */
	struct xl_strv frames;
	bool reason_strong;      /* the reason is the logged one, not the warning's summary */
};

/* The state of one open block (per output stream). */
struct xl_cblock {
	int event;               /* the opening event, -1 when none is open */
	long lines;              /* lines since it opened */
	double t;                /* when it opened */
	long step;
	char *runtime;
	char *function, *place, *detail, *frame;
	char *extra;             /* trace-kind, graph hash, ... */
	double secs;             /* the compile time the opening line says, -1 */
	struct xl_buf changes;   /* trace-change lines */
	bool frame_done;
};

/* Who saw a compilation. */
enum { XL_SRC_LOG = 1, XL_SRC_DUMP = 2, XL_SRC_REPORT = 4 };

/* A compilation in time. */
struct xl_cev_at {
	double t;                /* its start (the dump), or when its line came */
	double dur;              /* seconds it took, -1 unknown */
	long step;               /* the step seen before it started */
	int fn;                  /* index into fns, -1 */
	int knext;               /* the next event of its pairing key, -1 */
	unsigned char src;       /* XL_SRC_* */
	bool recompile;          /* its function had compiled before */
};

struct xl_watch_cfg {
	const struct xl_cpats *pats;      /* may be NULL: nothing is matched */
	struct xl_storm_rule rule;        /* in effect (profile over outcomes.yaml) */
	const char *step_pattern;         /* a profile's, or NULL */
	const char *jobreport_path;       /* the job's report file, read as the run
					   * goes, or NULL */
	double start;                     /* monotonic start of the run */
	/* XLA's dump, read as the run goes: its directory or NULL (none), whether
	 * xlaunch added it (then it is pruned as read), and the launch's start
	 * (epoch: a user's dump's older files are earlier runs') */
	const char *dump_dir;
	bool dump_ours;
	double dump_since;
	/* Inductor's cache, counted as the run goes when torch_job: found from
	 * the child's environment envp (read at xl_watch_init only); since as
	 * for the dump */
	bool torch_job;
	char *const *envp;
	double inductor_since;
};

struct xl_watch {
	struct xl_watch_cfg cfg;     /* its dump_dir and envp not kept after init */
	struct xl_dump *dump;        /* the dump reader (cfg.dump_dir), or NULL; owned */
	struct xl_inductor *inductor;   /* Inductor's graphs (cfg.torch_job), or NULL; owned */
	double wall_origin;          /* the wall clock's time at cfg.start */
	regex_t step_re;
	bool has_step_re;
	struct xl_cfn *fns;
	size_t nfns;
	struct xl_cev_at *ev;
	size_t nev, capev;
	long compiles;               /* real compilations named (output and dump, paired) */
	long from_log, from_dump;    /* what each source saw */
	struct xl_mkey xla_mk;       /* torch_xla: its lines and its modules, paired in order */
	long loads;                  /* cache hits seen in the output */
	long dump_loads;             /* programs the dump shows loaded, not compiled */
	long cache_misses, cache_written, cache_unreadable;
	char *unreadable_reason, *unreadable_runtime;
	struct xl_strv not_written;  /* "NAME: why", the first few */
	struct xl_strv pending_hits; /* programs announced as loaded, not yet built */
	struct xl_strv pending_shapes;  /* "NAME\tshapes" */
	char *pending_cause_fn, *pending_cause;   /* JAX: why the next compile */
	char *pending_cause_place;   /* JAX: where the traced function was called */
	struct xl_gbreak *gbs;
	size_t ngbs;
	long gb_count;
	long limits_hit;
	/* steps */
	long steps;                  /* step events seen */
	long step;                   /* the last step number, -1 none */
	double *step_t;              /* when each step was seen (the first million) */
	long *step_n;
	size_t nstep_t, capstep_t;
	double first_step_s;         /* seconds from start to the first step, -1 */
	bool steps_from_report, steps_from_output;
	/* the job's report file, read as it grows (its latest compile count
	 * and cache hits: jobreport.compiles, cache_hits) */
	struct xl_jobreport jobreport;
	double jobreport_t;          /* when the lines being read arrived */
	long jobreport_pending;      /* count increments not yet followed by a step */
	double jobreport_first_step_time;  /* a reported step_time_s of the first step, -1 */
	double end_s;                /* seconds from start to the end, set by finish */
	bool finished;
	/* set by finish, for the verdict */
	double first_s;              /* the first compilation, -1 none */
	double warmup_s;             /* the arrival rule's warm-up ends (time) */
	double middle_s;             /* past this, recompilations are still arriving */
	double cost_from_s;          /* the cost rule's warm-up ends */
	double compile_s;            /* all known compile time */
	bool durations;              /* some compilation's duration is known */
};

/* A profile's compile section as the watch takes it: a number not set is
 * -1 and the rule's value applies. */
struct xl_watch_settings {
	const char *step_pattern;   /* a POSIX extended regex for a step line, or NULL */
	long warmup_steps, max_after_warmup;
	double max_compile_share;   /* 0 < share <= 1, or -1 */
};

/* The watch's configuration: pats' rule (the compiled-in one when pats is
 * NULL) with the settings over it (set may be NULL).  The caller then sets
 * what the launch gives: the job's report file, the dump's directory, the
 * child's environment for Inductor's cache, and the start. */
void xl_watch_configure(struct xl_watch_cfg *cfg, const struct xl_cpats *pats,
			const struct xl_watch_settings *set);
void xl_watch_init(struct xl_watch *w, const struct xl_watch_cfg *cfg);
void xl_watch_release(struct xl_watch *w);
/* One complete line of output (without its newline) from one stream's
 * block state.  t: monotonic time of arrival. */
void xl_watch_line(struct xl_watch *w, struct xl_cblock *b, const char *line, size_t len,
		   double t);
void xl_cblock_init(struct xl_cblock *b);
/* Closes an open block (end of stream); then releases it. */
void xl_cblock_close(struct xl_watch *w, struct xl_cblock *b);
/* The job's report file, and XLA's dump when due. */
void xl_watch_poll(struct xl_watch *w, double t);
/* The end of the run (monotonic time): the last lines of the job's report
 * file are read (what it says stays in w->jobreport). */
void xl_watch_finish(struct xl_watch *w, double t);

/* The storming functions the verdict lists, at most. */
#define XL_STORM_RANKED 8

/* The verdict of the storm rule. */
struct xl_storm {
	bool storm;
	const char *by;          /* "steps", "time", "recompile-limit", or "none" */
	const char *rule;        /* "arrival", "cost", "recompile-limit", or NULL */
	double share;            /* of the time after the cost rule's warm-up, recompiling; -1
				  * (the functions the rule counts) */
	double share_all;        /* the same, every function's (the runtime's own too) */
	double recompile_s;      /* the recompilations after it, seconds */
	long after_cost;         /* how many */
	long compiles;           /* real compilations (output and report, the larger) */
	long cache_hits;         /* -1 when nothing says */
	long recompiles;         /* compilations of a function compiled before */
	long after_warmup;       /* by steps: after warmup_steps; by time: recompilations */
	int top;                 /* the function named (ranked[0]), -1 */
	/* every function that recompiled after warm-up, ranked: the user's
	 * own before the runtime's internal programs, then by the time its
	 * recompilations after warm-up took, then by their count, then by
	 * name (so that the same job names the same function, idle or busy) */
	int ranked[XL_STORM_RANKED];
	long ranked_after[XL_STORM_RANKED];   /* their recompilations after warm-up */
	size_t nranked;
	char reason[512];        /* for the outcome line */
};

void xl_watch_verdict(const struct xl_watch *w, struct xl_storm *out);

/* The storm rule while the run goes on (compile.on_storm: stop), judged
 * on the run so far (at most once a second; t: monotonic).  The arrival
 * and recompile-limit rules only (the cost rule is judged at the end: a
 * few new shapes right after warm-up are most of a short run's time); and
 * the rule must still hold once the run, from its first compilation, has
 * gone on as long again (at least 2 s), every check between holding too:
 * a burst of compilations at start that then stops is warm-up.  Returns
 * true when the child should be stopped, with the verdict in *out. */
struct xl_storm_live {
	double next_check;       /* monotonic, 0 at first */
	double held_since;       /* run seconds when the rule first held, -1 */
	size_t nev_checked;      /* events at the last check */
};
void xl_storm_live_init(struct xl_storm_live *l);
bool xl_watch_storm_now(struct xl_watch *w, struct xl_storm_live *l, double t, struct xl_storm *out);
/* The manifest's "compile" object.  New reference. */
json_t *xl_watch_json(const struct xl_watch *w, const struct xl_storm *s);
/* Warnings after a run: the storm with its function and cause, a cache that
 * cannot be read back, graph breaks; run_dir names where the logs are. */
void xl_watch_warn(const struct xl_watch *w, const struct xl_storm *s, const char *run_dir);
/* ", 40 compiles, 0 persistent-cache hits, first step at 1.2 s" into buf. */
void xl_watch_summary(const struct xl_watch *w, const struct xl_storm *s, char *buf, size_t n);
/* The dump's memory-usage reports, {module name: bytes} ({} without a
 * dump).  New reference. */
json_t *xl_watch_dump_reports(const struct xl_watch *w);
/* The largest total of the dump's memory-usage reports read so far (-1:
 * none yet, or no dump), its program's name as the runtime says it
 * ("jit(train_step)") into name (n 0: the figure only). */
int64_t xl_watch_largest_report(const struct xl_watch *w, char *name, size_t n);
/* What the dump reader read, kept and dropped (null without a dump).  New
 * reference. */
json_t *xl_watch_dump_json(const struct xl_watch *w);
/* The job's report file's malformed lines and lines of unknown kind, said
 * once each (warnings); nothing without a report file. */
void xl_watch_jobreport_warn(const struct xl_watch *w);

#endif
