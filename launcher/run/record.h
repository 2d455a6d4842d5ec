/* record.h - record.c's functions, private to launcher/run/: the signature
 * parts of a resolved profile (for the plan) and a record kept until the
 * store has it. */
#ifndef XLAUNCH_LAUNCHER_RUN_RECORD_H
#define XLAUNCH_LAUNCHER_RUN_RECORD_H

#include "launcher/run/run.h"
#include "calib/calib.h"

/* The signature parts of a resolved profile: model, train, parallel,
 * features, hardware (from signature.device), toggles ({env: the managed
 * variables less cache and dump paths, limits: {address_space}}) and the
 * job's own parts ({argv, code, bundle} of launcher/run/job.h; NULL: none).
 * New reference. */
json_t *xl_signature_parts(const struct xl_profile *p, const json_t *job);

/* Keeps a record in pending/ of the directory in use until the store has
 * it (falling back to the fallback when the state directory cannot take
 * it).  *where gets its path (caller frees), even when it fails.  0 or -1
 * (errno). */
int xl_record_keep(const json_t *record, char **where);

#endif
