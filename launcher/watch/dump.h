/* dump.h - dump.c's functions used inside the watch room (private to
 * launcher/watch/): the names of the files in XLA's dump, the ENTRY line of
 * a module's HLO text, and the total of its memory-usage report.  The
 * reader itself is in watch.h.
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
 * xl_hlo_entry_release.
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

#endif
