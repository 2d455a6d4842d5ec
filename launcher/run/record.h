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

/* ---- attempts whose supervisor was lost (launcher/sweep.c) ------------------------ */

/* {host, pid, pid_start, boot_id} of this process: who owns a run
 * directory, so that a later xlaunch can tell the owner is gone.  New
 * reference. */
json_t *xl_run_owner(void);
/* Marks the run directory of attempt id as settled (its record is in the
 * store, or it is not to be recorded): later sweeps pass over it. */
void xl_run_settled(const char *id, const char *why);

/* Makes the state directory whole again: completes or removes temporary
 * files of pending records left by a killed writer, removes run
 * directories that were never finished being created, then records every
 * run directory with a start manifest and no record whose owner is
 * provably dead (same host and boot and its pid gone, or the same host
 * booted since) into st: interrupted, with the guardian's end record where
 * there is one, else "supervisor lost".  Each directory is claimed with a
 * lock before it is read, and the store takes a run id once, so sweepers at
 * once record each attempt once.  Stops at the first store failure (the
 * rest wait for the next sweep).  Returns how many attempts it recorded;
 * *store_failed set when it stopped for the store (may be NULL). */
int xl_sweep_lost(struct calib_store *st, bool *store_failed);
/* Only the temporary files of pending records (before a replay). */
int xl_sweep_pending_tmp(void);

#endif
