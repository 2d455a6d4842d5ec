/*
 * calib.h - the calibration store: launch signatures, predicted against
 * observed memory, retry order, and the `calib` commands.
 *
 * The store is one SQLite file (default $XDG_STATE_HOME/xlaunch/calib.db,
 * 0600 in a 0700 directory, WAL mode, busy timeout, foreign keys, schema
 * versioned by PRAGMA user_version with forward migrations).  Every write is
 * one BEGIN IMMEDIATE transaction, retried while another writer holds the
 * lock, so many ranks and launches on one host may record at once.
 *
 * Ownership: a calib_store is opened by calib_open() and freed by
 * calib_close().  Functions returning json_t * return a new reference (the
 * caller json_decref()s it); json_t * arguments are borrowed.  char ** out
 * parameters are allocated and freed by the caller with free().
 *
 * This module depends on common only; profile resolution, which lives in the
 * launcher, is reached through calib_set_profile_loader().
 */
#ifndef XLAUNCH_CALIB_H
#define XLAUNCH_CALIB_H

#include "common/common.h"

#include <jansson.h>

/* The schema version this build writes; older stores are migrated forward
 * one step at a time on open, newer ones are refused (73). */
#define CALIB_SCHEMA_VERSION 3

/* ---- the store ------------------------------------------------------------ */

struct calib_store;

enum {
	CALIB_OPEN_NOCREATE = 1 << 0,  /* a missing store is an error (73), not created */
};

/* Opens (creating when missing) the store at path, or the default location
 * when path is NULL.  Returns 0 with *out set, or 73 with *out NULL and *err
 * (caller frees) set to "store 'FILE': what failed".  err may be NULL. */
int calib_open(const char *path, unsigned flags, struct calib_store **out, char **err);
/* NULL is fine. */
void calib_close(struct calib_store *st);
/* How long, in seconds, a store operation waits for another process's lock
 * before it fails with 73 (default 30).  Process-wide. */
void calib_set_wait(double seconds);
/* The file the store lives in (owned by the store). */
const char *calib_store_path(const struct calib_store *st);
/* The last error of a store operation, "store 'FILE': what failed", or ""
 * (owned by the store; valid until the next call on it). */
const char *calib_errmsg(const struct calib_store *st);

/* ---- signatures ------------------------------------------------------------ */

/* The signature of a launch.  Every field is owned by the struct; release with
 * calib_sig_release().  Hashes are lowercase SHA-256 hex. */
struct calib_sig {
	char hash[65];         /* of the canonical JSON of all parts */
	char shape_hash[65];   /* of {model, train, parallel, features, hardware} */
	char stack_hash[65];   /* of {bundle, code} */
	char *canonical;       /* canonical JSON of all parts */
	json_t *parts;         /* the normalized parts (a reference owned here) */
	char *hardware_kind;   /* hardware.kind, or NULL when the parts have none */
};

/* parts is an object {code, hardware, model, train, parallel, features,
 * toggles, bundle}, any of which may be missing ("device" is read as
 * "hardware" when "hardware" is absent).  Canonical form: keys sorted,
 * nulls dropped, integral numbers as integers, other numbers rounded to 15
 * significant digits, and in every part but code, toggles and bundle, strings
 * that are numbers or byte sizes ("32GiB", "1e9") become integers.  Returns 0,
 * or 65 when parts is not an object.  out is zeroed first. */
int calib_signature(const json_t *parts, struct calib_sig *out);
void calib_sig_release(struct calib_sig *sig);

/* SHA-256 of len bytes into hex[65] (NUL terminated). */
void calib_sha256_hex(const void *data, size_t len, char hex[65]);

/* Fills parts.hardware (when absent) from the latest probe of this host.
 * Returns true when parts now has a hardware part. */
bool calib_parts_fill_hardware(struct calib_store *st, json_t *parts);

/* ---- recording ------------------------------------------------------------- */

/* Records one launch attempt, in one transaction, together with its signature
 * row.  attempt fields (those of `calib history --json`):
 *   id (string, unique run id; re-recording an id is a no-op, so replays and
 *   imports are idempotent), time (ISO 8601 string or epoch seconds; default
 *   now), profile, candidate, signature (64 hex), host (default this host),
 *   rank, outcome (ok|oom|compile-storm|crash|error|timeout|interrupted),
 *   exit_status, predicted_bytes, observed_bytes, wall_s, compile_count,
 *   host_peak_rss_bytes;
 * and, describing the signature: signature_json (the canonical parts, string
 * or object), shape_hash, stack_hash, hardware_kind.  When signature_json is
 * given its hash must equal signature.
 * Returns 0, 65 (bad attempt data) or 73 (store failure); on failure the
 * message is in calib_errmsg(st).  Prints nothing. */
int calib_record_attempt(struct calib_store *st, const json_t *attempt);

/* Records a `probe --json` document {"host", "backends": [...]} (time: now,
 * or the document's "time" when present).  Returns 0, 65 or 73 as above. */
int calib_record_probe(struct calib_store *st, const json_t *probe_doc);

/* {kind, count, memory_bytes} of the best alive backend of the latest probe
 * of host (NULL: this host): accelerators before cpu, then the most total
 * memory.  NULL when there is none.  New reference. */
json_t *calib_latest_hardware(struct calib_store *st, const char *host);

/* Imports one line of `calib export` output (an attempt or a probe); the
 * fuzz entry point of the import.  Returns 0, 65 or 73 (message in
 * calib_errmsg). */
int calib_import_line(struct calib_store *st, const char *line, size_t len);

/* ---- prediction ------------------------------------------------------------ */

/* Memory per device, in bytes. */
struct calib_prediction {
	uint64_t model_state_bytes;   /* parameters, gradients, optimizer state */
	uint64_t activation_bytes;    /* all layers, one micro-batch */
	uint64_t logits_bytes;
	uint64_t overhead_bytes;
	uint64_t analytic_bytes;      /* the sum of the four parts */
	double correction;            /* learned observed/predicted factor, 1 when none */
	unsigned samples;             /* launches the correction came from */
	uint64_t predicted_bytes;     /* analytic * correction, or the reported value */
	uint64_t device_memory_bytes; /* hardware.memory, 0 when unknown */
	bool known;                   /* the parts were enough to predict */
	bool calibrated;              /* correction learned on this hardware and stack */
	bool reported;                /* predicted_bytes is the child's own */
	char note[200];               /* e.g. "stack uncalibrated" */
};

/* Predicts the memory of a launch from its parts.  st may be NULL (factor 1);
 * reported is a child-reported predicted_bytes (a JSON integer) or NULL and,
 * when positive, wins.  Parts without a model shape give known = false and a
 * note, not an error.  Returns 0, or 73 when the store could not be read
 * (out is still filled, uncalibrated). */
int calib_predict(struct calib_store *st, const json_t *parts, const json_t *reported,
		  struct calib_prediction *out);
/* {model_state_bytes, activation_bytes, logits_bytes, overhead_bytes,
 *  analytic_bytes, correction, samples, predicted_bytes, device_memory_bytes,
 *  calibrated, reported, note}; unknown byte counts are null.  New reference. */
json_t *calib_prediction_json(const struct calib_prediction *p);

/* ---- retry order ------------------------------------------------------------- */

/* candidates: array of {name, parts} in profile order.  *order (new
 * reference) is an array of {name, signature, place, reason,
 * predicted_bytes, device_memory_bytes} in the order to try; place is one of
 * known-good, unseen, suspect (oom on an older stack), infeasible (predicted
 * above the device memory), known-bad (latest attempt with this signature
 * was an oom); ties keep profile order.  st may be NULL (nothing known).
 * Returns 0, 65 (bad candidates) or 73. */
int calib_order(struct calib_store *st, const json_t *candidates, json_t **order);

/* ---- profile resolution, provided by the launcher -------------------------- */

/* Resolves profile (and only candidate cand when non-NULL) into
 * *out = {"profile": NAME, "candidates": [{"name": ..., "parts": {...}}, ...]}
 * (new reference).  Returns 0, or an exit code after printing its own error. */
typedef int (*calib_profile_loader)(const struct xl_ctx *ctx, const char *profile,
				    const char *cand, json_t **out);
/* Registers the loader the PROFILE-taking calib commands use. */
void calib_set_profile_loader(calib_profile_loader fn);

#endif
