/* record.h - signature parts, run directories and kept records (internal). */
#ifndef XLAUNCH_RECORD_H
#define XLAUNCH_RECORD_H

#include "launcher/launcher.h"
#include "calib/calib.h"

#include <time.h>

/* The signature parts of a resolved profile: model, train, parallel,
 * features, hardware (from signature.device), toggles ({env: the managed
 * variables less cache and dump paths, limits: {address_space}}) and the
 * job's own parts ({argv, code, bundle} of launcher/job.h; NULL: none).
 * New reference. */
json_t *xl_signature_parts(const struct xl_profile *p, const json_t *job);

/* {python, packages: {name: version}} of the lane packages of the Python
 * environment of interpreter python (NULL or not found: {}).  Cached in the
 * state directory per interpreter until its environment changes.  New
 * reference. */
json_t *xl_bundle_summary(const char *python);
/* From now on xl_bundle_summary reads its cache but never writes it (for
 * commands that only read). */
void xl_bundle_cache_readonly(void);

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
