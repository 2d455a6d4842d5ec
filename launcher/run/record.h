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


/* ---- where a launch keeps its files (rundir.c) ------------------------------------ */

/* The state directory ($XDG_STATE_HOME/xlaunch) keeps run directories and
 * the records waiting for the store.  When it cannot (missing and not
 * creatable, read-only, full), a private directory of the user's under
 * $TMPDIR does, "$TMPDIR/xlaunch-USER" (0700), and later runs read it too. */
enum xl_keep { XL_KEEP_STATE, XL_KEEP_TMP, XL_KEEP_NONE };

/* Chooses where this process keeps its files: the state directory when it
 * can, else the fallback (said once on stderr), else nowhere (XL_KEEP_NONE
 * with *why, caller frees). */
enum xl_keep xl_keep_choose(char **why);
/* After a write failed in the state directory (failed says what): falls
 * back from now on and says so.  False when the fallback cannot keep
 * either (or it is already in use). */
bool xl_keep_fall_back(const char *failed);
enum xl_keep xl_keep_where(void);
/* The directory in use (NULL for none) and the fallback's path; caller
 * frees. */
char *xl_keep_dir(void);
char *xl_keep_fallback_dir(void);
/* Every directory of this user's that may hold run directories and
 * pending records: the state directory, and the fallback when it exists
 * and is the user's own.  Returns how many (1 or 2); caller frees each. */
size_t xl_keep_dirs(char *out[2]);

/* The runs/ of the directory in use, NULL for none; caller frees. */
char *xl_runs_dir(void);
/* "20261122T101500Z-host-PID-rRANK-aATTEMPT"; caller frees. */
char *xl_new_run_id(int rank, int attempt);

/* Keeps a record in pending/ of the directory in use until the store has
 * it (falling back to the fallback when the state directory cannot take
 * it).  *where gets its path (caller frees), even when it fails.  0 or -1
 * (errno). */
int xl_record_keep(const json_t *record, char **where);
/* ---- attempts whose supervisor was lost (sweep.c, rundir.c) ------------------------ */

/* {host, pid, pid_start, boot_id} of this process: who owns a run
 * directory, so that a later xlaunch can tell the owner is gone.  New
 * reference. */
json_t *xl_run_owner(void);
/* Marks the run directory of attempt id as settled (its record is in the
 * store, or it is not to be recorded): later sweeps pass over it.  The
 * directory is looked for in each of xl_keep_dirs(). */
void xl_run_settled(const char *id, const char *why);
/* The same for the run directory dir. */
void xl_run_settled_dir(const char *dir, const char *why);

#endif
