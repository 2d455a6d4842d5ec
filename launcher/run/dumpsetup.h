/* dumpsetup.h - dumpsetup.c's functions, private to launcher/run/: the
 * dump flags xlaunch adds to an XLA job's XLA_FLAGS, so that the compile
 * watch (launcher/watch/) reads XLA's memory-usage reports as the job
 * runs, or the user's own dump directory, read and never changed. */
#ifndef XLAUNCH_LAUNCHER_RUN_DUMPSETUP_H
#define XLAUNCH_LAUNCHER_RUN_DUMPSETUP_H

#include "launcher/run/run.h"

struct xl_xla_dump {
	char *dir;                /* where XLA writes (ours or the user's), or NULL */
	bool ours;                /* xlaunch added the flags (and prunes the dump) */
	bool user;                /* XLA_FLAGS has the user's own --xla_dump_to */
	char *tokens;             /* what xlaunch added to XLA_FLAGS, or NULL */
	char why[240];            /* why nothing is asked for, when dir is NULL */
};

/* Asks XLA to dump each compiled module (its files are read as the job
 * runs: launcher/watch/) by adding dump flags to XLA_FLAGS in *envp, into
 * RUN_DIR/xla-dump: only for an XLA
 * job (its bundle has jax, jaxlib or torch-xla, or the profile sets XLA,
 * JAX, PJRT or TPU variables), never under policy.timing, never when a
 * token would enter a persistent-cache key by etc/cachekeys.yaml (every
 * token must be excluded by every runtime there), never when XLA_FLAGS
 * names a flags file.  A user's own --xla_dump_to is read instead (never
 * changed; not when it is "-" or "sponge").  disabled: --no-xla-dump. */
void xl_xla_dump_setup(const struct xl_profile *p, const json_t *parts, const char *run_dir,
		       bool disabled, char ***envp, struct xl_xla_dump *d);
/* Whether every token xlaunch adds stays out of every runtime's
 * persistent-cache key by the rules in file (the layout of
 * etc/cachekeys.yaml: per runtime, flags.exclude and flags.exceptions);
 * *why says which would not. */
bool xl_xla_dump_keyless(const char *file, char *why, size_t size);
/* The same by n runtimes' compiled rules (xl_ck_runtimes: what a launch
 * asks, without parsing the file; dumpkeys.c). */
struct xl_ck_runtime;
bool xl_xla_dump_keyless_rules(const struct xl_ck_runtime *rts, size_t n, char *why, size_t size);
/* The tokens xlaunch adds for dir (caller frees). */
char *xl_xla_dump_tokens(const char *dir);
void xl_xla_dump_release(struct xl_xla_dump *d);

#endif
