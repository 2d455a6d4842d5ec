/* record.h - signature parts, run directories and kept records (internal). */
#ifndef XLAUNCH_RECORD_H
#define XLAUNCH_RECORD_H

#include "launcher/launcher.h"
#include "calib/calib.h"

#include <time.h>

/* {commit, dirty} of the git work tree in the current directory, {} when
 * there is none (computed once per process).  New reference. */
json_t *xl_code_state(void);
/* The signature parts of a resolved profile: model, train, parallel,
 * features, hardware (from signature.device), toggles (the managed
 * variables) and code.  New reference. */
json_t *xl_signature_parts(const struct xl_profile *p);

/* {python, packages: {name: version}} of the lane packages of the Python
 * environment (VIRTUAL_ENV, else python3 on PATH); {} when there is none.
 * Cached until the environment changes.  New reference. */
json_t *xl_bundle_summary(void);
/* From now on xl_bundle_summary() reads its cache but writes none (a dry
 * run, a query: they create nothing). */
void xl_bundle_summary_readonly(void);

/* $XDG_STATE_HOME/xlaunch/runs; caller frees. */
char *xl_runs_dir(void);
/* "20261122T101500Z-host-PID-rRANK-aATTEMPT"; caller frees. */
char *xl_new_run_id(int rank, int attempt);
/* Writes j to path through a temporary file and rename(); durable: fsync
 * before the rename (records), not for what is rewritten anyway (manifests,
 * caches).  0 or -1 (errno). */
int xl_write_json_atomic(const char *path, const json_t *j, bool durable);

/* Keeps a record in $XDG_STATE_HOME/xlaunch/pending until the store has it. */
int xl_record_keep(const json_t *record, char **where);
void xl_record_done(const json_t *record);
/* Puts kept records into the store; returns how many went in. */
int xl_record_replay(struct calib_store *st);

#endif
