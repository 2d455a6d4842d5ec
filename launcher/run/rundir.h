/* rundir.h - rundir.c's functions, private to launcher/run/: where a
 * launch keeps its files (the state directory, or its fallback), run
 * directories and their ids, and the mark of a settled one. */
#ifndef XLAUNCH_LAUNCHER_RUN_RUNDIR_H
#define XLAUNCH_LAUNCHER_RUN_RUNDIR_H

#include "launcher/run/run.h"

#include <stdbool.h>
#include <stddef.h>

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

/* ---- settled run directories -------------------------------------------------------- */

/* Marks the run directory of attempt id as settled (its record is in the
 * store, or it is not to be recorded): later sweeps pass over it.  The
 * directory is looked for in each of xl_keep_dirs(). */
void xl_run_settled(const char *id, const char *why);
/* The same for the run directory dir. */
void xl_run_settled_dir(const char *dir, const char *why);

/* ---- the index of unsettled run directories ------------------------------------------ */

/* runs/.unsettled holds an empty file named ID for each run directory of
 * runs/ that is not settled yet: made before the run directory appears,
 * removed when it is settled.  The sweep of lost attempts reads it, never
 * the whole history.  ".indexed" in it says that every run directory
 * older than the index is in it too. */
#define XL_UNSETTLED_DIR ".unsettled"
#define XL_UNSETTLED_DONE ".indexed"
/* runs/.unsettled/ID (id NULL: runs/.unsettled); caller frees. */
char *xl_unsettled_path(const char *runs, const char *id);
/* Puts run id of runs in the index; 0, or -1 with errno. */
int xl_unsettled_add(const char *runs, const char *id);
/* Takes it out (the run directory is settled or gone). */
void xl_unsettled_remove(const char *runs, const char *id);

#endif
