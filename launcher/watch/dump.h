/* dump.h - dump.c's functions used inside the watch room (private to
 * launcher/watch/): the names of the files in XLA's dump, the ENTRY line of
 * a module's HLO text, the total of its memory-usage report, and the
 * reader itself, which the watch creates, polls and releases (xl_watch_init
 * with cfg.dump_dir).
 *
 * Every XLA front end (JAX, torch_xla) has XLA write a set of files per
 * compiled module, `module_NNNN.NAME.*`: the reader turns each module into
 * one compilation with its program's name, the times its files bracket
 * (the first file appears when the compilation starts, the last when it
 * ends), the parameters of its entry computation (the `ENTRY` line of the
 * `before_optimizations` text), a hash of that text and the total of its
 * memory-usage report.  Pruning happens here only: in a dump that xlaunch
 * added, every file is deleted once read, except the text and the report
 * of the first and the latest compilation of each program, and what was
 * deleted is counted.  A user's own dump is read, never changed.
 *
 * Entries filled by xl_hlo_entry_parse are released with
 * xl_hlo_entry_release.  xl_dump_init copies what it is given;
 * xl_dump_release frees everything the reader holds, including its
 * modules.
 */
#ifndef XLAUNCH_LAUNCHER_WATCH_DUMP_H
#define XLAUNCH_LAUNCHER_WATCH_DUMP_H

#include "launcher/watch/watch.h"

/* ---- file names ------------------------------------------------------------------- */

/* What a name in the dump directory is. */
enum xl_dump_file {
	XL_DF_OTHER,         /* not a module's file */
	XL_DF_MODULE,        /* some file of a module (or its directory) */
	XL_DF_BEFORE,        /* NAME.before_optimizations.txt: the HLO text before passes */
	XL_DF_MEMORY_REPORT,        /* NAME.STAGE-memory-usage-report.txt */
	XL_DF_LOADED,        /* NAME.after_optimizations.txt without a stage: a program
			      * loaded from a persistent cache (nothing compiled) */
};

struct xl_dump_name {
	long id;                 /* NNNN of module_NNNN; -1 for XL_DF_OTHER */
	int kind;                /* enum xl_dump_file */
	char module[200];        /* the program's name when the file name says it
				  * unambiguously ("jit_train_step", "SyncTensorsGraph.93"),
				  * else "" */
	bool optimized;          /* a file XLA writes once the module's passes ran:
				  * an after_optimizations text or proto, its buffer
				  * assignment or memory-usage report */
};

/* Parses one name of the directory (not a path).  dir: it is a directory
 * (JAX writes `module_NNNN.NAME/` with the module's MLIR first).  Returns
 * out->kind. */
int xl_dump_name_parse(const char *name, bool dir, struct xl_dump_name *out);

/* The runtime a module's name belongs to: "jax" for jit_ and pmap_ names,
 * "torch_xla" for SyncTensorsGraph, else "xla". */
const char *xl_dump_runtime(const char *module);
/* The program as the runtime's own lines name it: "jit_train_step" ->
 * "jit(train_step)", "pmap_f" -> "pmap(f)", "SyncTensorsGraph.93" ->
 * "SyncTensorsGraph" (torch_xla's graph ids move between graphs of one
 * step); others as they are.  Caller frees. */
char *xl_dump_function(const char *module);

/* ---- the entry computation --------------------------------------------------------- */

/* Parses an ENTRY line ("ENTRY %main.1 (w.1: f32[64,8], x.1: f32[100,64])
 * -> f32[64,8] {"), len bytes, no NUL needed.  Returns 0, or -1 when it is
 * not one (out is then empty). */
int xl_hlo_entry_parse(const char *line, size_t len, struct xl_hlo_entry *out);
/* Finds the ENTRY line of an HLO module's text and parses it; *hash is a
 * hash of the whole text (the program's identity).  Returns 0 or -1. */
int xl_hlo_text_entry(const char *text, size_t len, struct xl_hlo_entry *out, uint64_t *hash);
void xl_hlo_entry_release(struct xl_hlo_entry *e);
/* Whether two entries have the same parameter types. */
bool xl_hlo_entry_same(const struct xl_hlo_entry *a, const struct xl_hlo_entry *b);
/* The kept parameter at index (of all the entry's), or NULL when it is
 * past the kept ones or the entry has fewer. */
const struct xl_hlo_param *xl_hlo_entry_param(const struct xl_hlo_entry *e, size_t index);
/* dst (zeroed, or an entry) becomes a copy of src. */
void xl_hlo_entry_copy(struct xl_hlo_entry *dst, const struct xl_hlo_entry *src);

/* ---- the memory-usage report -------------------------------------------------------- */

/* "Total bytes: N" of an XLA memory-usage report's default memory space (of
 * an older XLA's report, "Total bytes used: N"); -1 when absent. */
int64_t xl_dump_memory_report_total(const char *text);

/* ---- the reader (the watch makes it: xl_watch_init) ---------------------------- */

/* One compiled module, as far as it has been read. */
struct xl_dump_mod {
	long id;
	char *module;            /* "jit_train_step" */
	double start, end;       /* seconds from the reader's origin: its first and last file */
	struct xl_hlo_entry entry;
	bool entry_read;         /* the before_optimizations text was parsed */
	uint64_t program;        /* hash of that text, 0 unknown */
	int64_t bytes;           /* memory-usage report total, -1 none yet */
	bool load;               /* loaded from a persistent cache, not compiled */
	int handle;              /* the caller's (an event index), -1 until it sets one */
	bool taken;              /* the caller's: it took the entry */
	/* the reader's own */
	double changed_at;       /* when a file of it last appeared (epoch) */
	bool changed;            /* not yet handed out by xl_dump_next_changed */
	bool keep;               /* its text and report stay in the dump */
	bool memreport_read;
	bool started;            /* its directory or before_optimizations file was seen */
	bool text;               /* its before_optimizations text was seen (a text dump:
				  * its memory-usage report will follow) */
	bool optimized;          /* a file of its end was seen (xl_dump_name.optimized) */
	bool memreport_seen;        /* its memory-usage report was seen */
	char *before_path, *memreport_path;   /* kept files, or NULL */
	int64_t kept_bytes;
};

/* What is kept per program, and in all. */
#define XL_DUMP_KEEP_PER_FUNCTION 2
#define XL_DUMP_KEEP_MODULES 256

struct xl_dump {
	char *dir;
	bool ours;               /* prune (xlaunch added the dump) */
	double origin;           /* epoch seconds of time 0 */
	double since;            /* a user's dump: files older than this are earlier runs' */
	double next_at;          /* monotonic time of the next poll */
	double interval;         /* between polls (grows when a poll is slow) */
	bool final;              /* the job has ended: what is there is all there is */
	/* modules still open (their compilation may still be writing files) */
	struct xl_dump_mod **open;
	size_t nopen, capopen;
	size_t next_changed;     /* iterator over open */
	/* ids done with (closed): an open-addressing set */
	long *done;
	unsigned char *done_keep;   /* its files stay in the dump */
	size_t ndone, capdone;
	bool done_full;          /* the set reached its cap: later modules are not read */
	/* per program: the first and the latest module kept */
	struct xl_dump_keep {
		char *module;
		long first, last;                /* module ids; -1 none */
		char *last_before, *last_memreport; /* the latest's kept files */
		int64_t last_bytes;
	} *keep;
	size_t nkeep;
	size_t kept_modules;
	/* the memory-usage reports: {module name: largest total} */
	json_t *memory_reports;
	/* the largest of them so far, and its module ("" none) */
	int64_t largest_report;
	char largest_module[200];
	/* counts */
	long modules;            /* modules seen (compiled) */
	long loads;              /* modules loaded from a persistent cache */
	long polls;
	long files_seen, files_deleted, dirs_deleted;
	int64_t bytes_deleted, bytes_kept;
	long files_kept;
	long unreadable;         /* before_optimizations texts that did not parse */
	double poll_cpu_s;       /* CPU time spent polling (xlaunch's thread) */
	char err[240];           /* the first failure to read the directory, or "" */
};

/* Starts reading dir (ours: prune it).  origin: epoch seconds of time 0
 * for the modules' times; since: ignore files older than this in a user's
 * dump. */
void xl_dump_init(struct xl_dump *r, const char *dir, bool ours, double origin, double since);
/* Reads what appeared since the last poll, when due (now: monotonic; force:
 * now whatever the interval).  Modules whose files stopped appearing are
 * closed (their kept files decided); a compilation that started and has
 * not yet written its optimized files (in a text dump, its memory-usage
 * report too) is waited for up to an hour.  Returns the number of modules that
 * changed. */
size_t xl_dump_poll(struct xl_dump *r, double now, bool force);
/* The last poll at the end of the run: everything read, every module
 * closed (each changed one handed out before it is freed: call
 * xl_dump_next_changed until NULL, then xl_dump_close_all). */
void xl_dump_finish(struct xl_dump *r);
void xl_dump_close_all(struct xl_dump *r);
/* The next module that changed since it was last handed out, or NULL. */
struct xl_dump_mod *xl_dump_next_changed(struct xl_dump *r);
void xl_dump_release(struct xl_dump *r);
/* {dir, ours, modules, polls, read: {...}, kept: {...}, dropped: {...}}
 * for the manifest.  New reference. */
json_t *xl_dump_json(const struct xl_dump *r);
/* The memory-usage reports, {module name: bytes}.  New reference. */
json_t *xl_dump_memory_reports(const struct xl_dump *r);

#endif
