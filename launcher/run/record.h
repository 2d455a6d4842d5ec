/* record.h - signature parts (record.c), run directories (rundir.c), kept
 * records (record.c) and the owners of run directories (sweep.c); private
 * to launcher/run/. */
#ifndef XLAUNCH_LAUNCHER_RUN_RECORD_H
#define XLAUNCH_LAUNCHER_RUN_RECORD_H

#include "launcher/run/run.h"
#include "calib/calib.h"

#include <time.h>

/* The signature parts of a resolved profile: model, train, parallel,
 * features, hardware (from signature.device), toggles ({env: the managed
 * variables less cache and dump paths, limits: {address_space}}) and the
 * job's own parts ({argv, code, bundle} of launcher/job.h; NULL: none).
 * New reference. */
json_t *xl_signature_parts(const struct xl_profile *p, const json_t *job);


/* $XDG_STATE_HOME/xlaunch/runs; caller frees. */
char *xl_runs_dir(void);
/* "20261122T101500Z-host-PID-rRANK-aATTEMPT"; caller frees. */
char *xl_new_run_id(int rank, int attempt);

/* Keeps a record in $XDG_STATE_HOME/xlaunch/pending until the store has it. */
int xl_record_keep(const json_t *record, char **where);
void xl_record_done(const json_t *record);
/* ---- attempts whose supervisor was lost (sweep.c, rundir.c) ------------------------ */

/* {host, pid, pid_start, boot_id} of this process: who owns a run
 * directory, so that a later xlaunch can tell the owner is gone.  New
 * reference. */
json_t *xl_run_owner(void);
/* Marks the run directory of attempt id as settled (its record is in the
 * store, or it is not to be recorded): later sweeps pass over it. */
void xl_run_settled(const char *id, const char *why);

#endif
