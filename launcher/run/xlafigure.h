/* xlafigure.h - xlafigure.c's function, private to launcher/run/: the
 * compiler's figure of a run, from the programs of XLA's memory-usage
 * reports the watch read (launcher/watch/) and the same signature's last
 * ones. */
#ifndef XLAUNCH_LAUNCHER_RUN_XLAFIGURE_H
#define XLAUNCH_LAUNCHER_RUN_XLAFIGURE_H

#include "launcher/run/run.h"

/* The largest program's figure of mods ({name: bytes}, this run's reports),
 * after adding the programs of prev (the same signature's last figures,
 * from run prev_run) that this run did not compile; -1 when none.  source
 * says where it came from (reused and marked so on a cache hit). */
int64_t xl_xla_modules_figure(json_t *mods, const json_t *prev, const char *prev_run,
			      char *source, size_t size);

#endif
