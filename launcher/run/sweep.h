/* sweep.h - sweep.c's function used elsewhere in launcher/run/ (private to
 * it): who owns a run directory, so that a later sweep can tell the owner
 * is gone (xl_sweep_lost, run.h). */
#ifndef XLAUNCH_LAUNCHER_RUN_SWEEP_H
#define XLAUNCH_LAUNCHER_RUN_SWEEP_H

#include "launcher/run/run.h"

/* {host, pid, pid_start, boot_id} of this process: who owns a run
 * directory, so that a later xlaunch can tell the owner is gone.  New
 * reference. */
json_t *xl_run_owner(void);
#endif
