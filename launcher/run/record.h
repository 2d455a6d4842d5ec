/* record.h - record.c's function used elsewhere in launcher/run/ (private to
 * it): a record kept until the store has it (xl_record_replay, run.h, puts
 * the kept ones in). */
#ifndef XLAUNCH_LAUNCHER_RUN_RECORD_H
#define XLAUNCH_LAUNCHER_RUN_RECORD_H

#include "launcher/run/run.h"
#include "calib/calib.h"

/* Keeps a record in pending/ of the directory in use until the store has
 * it (falling back to the fallback when the state directory cannot take
 * it).  *where gets its path (caller frees), even when it fails.  0 or -1
 * (errno). */
int xl_record_keep(const json_t *record, char **where);

#endif
