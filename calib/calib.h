/*
 * calib.h - the calibration store: launch signatures, predicted against
 * observed memory, retry order; typed records and typed queries.  No
 * commands: `xlaunch calib` (launcher/cmd-calib.c) is built on this header
 * and never sees the store's query language.
 *
 * A store is named by a location: NULL (the default SQLite file,
 * $XDG_STATE_HOME/xlaunch/calib.db), a file path, or a URI.  "sqlite:PATH"
 * and plain paths are SQLite: one file, 0600 in a 0700 directory, WAL mode,
 * busy timeout, foreign keys, schema versioned by PRAGMA user_version with
 * forward migrations; every write is one BEGIN IMMEDIATE transaction,
 * retried while another writer holds the lock, so many ranks and launches on
 * one host may record at once.  "postgresql://..." (or "postgres://") names
 * a server store shared by a fleet, read by libpq as it reads any URI (its
 * environment, service and password files apply); its tables live in the
 * database named, in the first schema of its search_path, versioned by the
 * table calib_schema and migrated forward on open like SQLite's.  Every
 * function below works the same on either backend (calib/backend.h is the
 * interface a backend implements).  A server that cannot be reached fails
 * calib_open with 73, "unreachable: why", without waiting longer than the
 * store's wait; a message never shows the location's password.
 *
 * Ownership: a calib_store is opened by calib_open() and freed by
 * calib_close().  Functions returning json_t * return a new reference (the
 * caller json_decref()s it); json_t * arguments are borrowed.  char ** out
 * parameters are allocated and freed by the caller with free().  Records
 * handed to a callback are borrowed for the call.
 *
 * Return values: 0, or an exit status (enum xl_exit) with the message in
 * calib_errmsg(st): 64 (a bad or ambiguous signature prefix), 65 (bad data),
 * 66 (nothing found), 73 (the store failed).  Nothing here prints.
 *
 * This module depends on common only.
 */
#ifndef XLAUNCH_CALIB_H
#define XLAUNCH_CALIB_H

#include "common/common.h"

#include <jansson.h>
#include <math.h>

/* The schema version this build writes; older stores are migrated forward
 * one step at a time on open, newer ones are refused (73). */
#define CALIB_SCHEMA_VERSION 3

/* ---- the store ------------------------------------------------------------ */

struct calib_store;

enum {
	CALIB_OPEN_NOCREATE = 1 << 0,  /* a missing store is an error (73), not created */
};

/* Opens (creating when missing) the store at location (see above; NULL: the
 * default).  Returns 0 with *out set, or 73 with *out NULL and *err (caller
 * frees) set to "store 'LOCATION': what failed".  err may be NULL. */
int calib_open(const char *location, unsigned flags, struct calib_store **out, char **err);
/* NULL is fine. */
void calib_close(struct calib_store *st);
/* How long, in seconds, a store operation waits for another process's lock,
 * or for a server to connect or answer, before it fails with 73 (default
 * 30).  Process-wide. */
void calib_set_wait(double seconds);
/* Where the store lives: its file, or its URI without a password (owned by
 * the store). */
const char *calib_store_path(const struct calib_store *st);
/* A location as it may be shown: a URI without its password (of
 * "user:password@" and of "password=" parameters).  Caller frees. */
char *calib_location_display(const char *location);
/* The last error of a store operation, "store 'LOCATION': what failed", or
 * "" (owned by the store; valid until the next call on it). */
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

/* ---- launch attempts ------------------------------------------------------- */

/* An integer field that is not known. */
#define CALIB_UNSET INT64_MIN

/* One launch attempt: every field `calib history --json` shows, and what
 * export and import carry besides.  Strings are owned by the record
 * (calib_attempt_release frees them); NULL, "", CALIB_UNSET and NAN mean
 * unknown. */
struct calib_attempt {
	char *id;                  /* unique run id; recording an id again is a no-op */
	double time;               /* start, epoch seconds */
	char *profile, *candidate;
	char signature[65];        /* SHA-256 hex of the signature */
	char *host;
	int64_t rank;
	enum xl_outcome outcome;
	int64_t exit_status;
	int64_t predicted_bytes, observed_bytes;
	double wall_s;
	int64_t compile_count;
	int64_t host_peak_rss_bytes;
	/* what the signature is made of */
	char *signature_json;      /* canonical JSON of the parts */
	char shape_hash[65], stack_hash[65];
	char *hardware_kind;
};

/* Every field unknown; time now; host NULL (this host when recorded). */
void calib_attempt_init(struct calib_attempt *a);
void calib_attempt_release(struct calib_attempt *a);
/* Reads a JSON attempt (a `calib history --json` entry, an export line, a
 * kept record): id, time (ISO 8601 or epoch seconds), profile, candidate,
 * signature, host, rank, outcome, exit_status, predicted_bytes,
 * observed_bytes, wall_s, compile_count, host_peak_rss_bytes, and
 * signature_json (string or object; its hash must equal signature, and the
 * shape and stack hashes and hardware kind are taken from it), shape_hash,
 * stack_hash, hardware_kind.  Returns 0, or 65 with *err (caller frees). */
int calib_attempt_from_json(const json_t *o, struct calib_attempt *a, char **err);
enum {
	CALIB_JSON_HISTORY = 0,    /* the fields of `calib history --json` */
	CALIB_JSON_FULL = 1 << 0,  /* and host_peak_rss_bytes, signature_json (an
				    * object), shape_hash, stack_hash, hardware_kind */
};
/* New reference. */
json_t *calib_attempt_to_json(const struct calib_attempt *a, unsigned flags);

/* Records one attempt, in one transaction, together with its signature row.
 * A record whose signature_json is given must hash to its signature.
 * Returns 0, 65 or 73. */
int calib_record_attempt(struct calib_store *st, const struct calib_attempt *a);
/* calib_attempt_from_json, then calib_record_attempt (a 65 message names
 * the attempt in calib_errmsg). */
int calib_record_attempt_json(struct calib_store *st, const json_t *attempt);

/* ---- probes ---------------------------------------------------------------- */

/* Records a `probe --json` document {"host", "backends": [...]} (time: now,
 * or the document's "time" when present).  Returns 0, 65 or 73. */
int calib_record_probe(struct calib_store *st, const json_t *probe_doc);

/* The best alive backend of a probe: accelerators before cpu, then the most
 * total memory. */
struct calib_hardware {
	char kind[128];
	int64_t count;
	int64_t memory_bytes;
};
/* The hardware of the latest probe of host (NULL: this host).  Returns 0, 66
 * when no probe of host has an alive device, or 73. */
int calib_latest_hardware(struct calib_store *st, const char *host, struct calib_hardware *out);

/* ---- queries --------------------------------------------------------------- */

/* Called once per record; a non-zero return stops the query and is returned. */
typedef int calib_attempt_fn(const struct calib_attempt *a, void *arg);

/* Which attempts `calib history` shows.  Zero (CALIB_FILTER_INIT) is all. */
struct calib_filter {
	const char *profile;
	const char *signature;     /* a full hash: see calib_resolve_signature */
	int outcome;               /* an enum xl_outcome, or -1 for any */
	const char *host;
	double since;              /* epoch seconds, or NAN for no bound */
	long long limit;           /* at most this many; 0: all */
};
#define CALIB_FILTER_INIT { NULL, NULL, -1, NULL, NAN, 0 }
/* The attempts that match, newest first (time, then the order recorded). */
int calib_history(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		  void *arg);

/* One signature of `calib stats`. */
struct calib_sig_stats {
	char signature[65];
	const char *profile, *candidate;   /* of its latest attempt */
	int64_t attempts, ok, oom;
	double ratio_median;       /* observed/predicted of its ok attempts; NAN: none */
	double last_seen;          /* epoch seconds */
};
typedef int calib_stats_fn(const struct calib_sig_stats *s, void *arg);
/* Per signature (of attempts of profile, when not NULL), most recently seen
 * first, at most limit (0: all). */
int calib_stats(struct calib_store *st, const char *profile, long long limit,
		calib_stats_fn *fn, void *arg);

/* The full hash of the one recorded signature that starts with prefix
 * (lowercase hex).  Returns 0, 64 (not hex, empty or ambiguous), 66 (none) or
 * 73. */
int calib_resolve_signature(struct calib_store *st, const char *prefix, char hash[65]);
/* Deletes a signature and all its attempts, in one transaction; *attempts
 * is how many there were.  Returns 0, 66 (no such signature) or 73. */
int calib_forget(struct calib_store *st, const char *hash, int64_t *attempts);

/* Writes the store to f as JSON lines, from one consistent snapshot: one
 * line per probe ({"type": "probe", uid, host, time, doc}), then one per
 * attempt ({"type": "attempt", the CALIB_JSON_FULL fields}), oldest first.
 * Returns 0 or 73 (a write error of f is the caller's to find). */
int calib_export(struct calib_store *st, FILE *f);

/* A bad line of an import. */
struct calib_line_error {
	size_t line;               /* 1-based */
	int col;                   /* 0 when the line as a whole is bad */
	char *msg;
};
struct calib_import_result {
	size_t attempts, probes;   /* lines read (those already present included) */
	size_t bad;                /* bad lines in all */
	struct calib_line_error *errors;   /* the first 20 of them */
	size_t nerrors;
};
/* Imports `calib export` output (len bytes of data) in one transaction:
 * every line, or none when any line is bad (65; the bad lines in res).
 * Records already present (by attempt id or probe uid) are left as they
 * are, so importing twice is idempotent.  Returns 0, 65 or 73. */
int calib_import(struct calib_store *st, const char *data, size_t len,
		 struct calib_import_result *res);
void calib_import_result_release(struct calib_import_result *res);

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
 * reported_bytes is a child-reported prediction (0 or less: none) and, when
 * given, wins.  Parts without a model shape give known = false and a note,
 * not an error.  Returns 0, or 73 when the store could not be read (out is
 * still filled, uncalibrated). */
int calib_predict(struct calib_store *st, const json_t *parts, int64_t reported_bytes,
		  struct calib_prediction *out);
/* {model_state_bytes, activation_bytes, logits_bytes, overhead_bytes,
 *  analytic_bytes, correction, samples, predicted_bytes, device_memory_bytes,
 *  calibrated, reported, note}; unknown byte counts are null.  New reference. */
json_t *calib_prediction_json(const struct calib_prediction *p);

/* ---- retry order ------------------------------------------------------------- */

/* A candidate's place in the order; the store gives the first five, the
 * launcher the last two (a pinned candidate, a profile without any). */
enum calib_place {
	CALIB_PLACE_KNOWN_GOOD,    /* the latest attempt with this signature was ok */
	CALIB_PLACE_UNSEEN,        /* nothing known against it */
	CALIB_PLACE_SUSPECT,       /* an oom with this shape on an older stack */
	CALIB_PLACE_INFEASIBLE,    /* predicted above the device memory */
	CALIB_PLACE_KNOWN_BAD,     /* the latest attempt with this signature was an oom */
	CALIB_PLACE_PINNED,        /* named with -c: the only one tried */
	CALIB_PLACE_ONLY,          /* the profile has no candidates */
};
/* "known-good", "unseen", "suspect", "infeasible", "known-bad", "pinned",
 * "only". */
const char *calib_place_name(enum calib_place p);

struct calib_rank {
	size_t index;              /* the candidate's position in the profile */
	enum calib_place place;
	char reason[400];
	char signature[65];
	bool predicted;            /* predicted_bytes is known */
	uint64_t predicted_bytes;
	uint64_t device_memory_bytes;   /* 0: unknown */
};

/* Ranks n candidates given by their signature parts (parts[i] of the i-th in
 * profile order; NULL for none): ranks[0..n) receives them in the order to
 * try, ties in profile order.  st may be NULL (nothing known).  Returns 0,
 * 65 (parts not an object) or 73 (ranks then hold profile order, place
 * unseen, reason "profile order"). */
int calib_order(struct calib_store *st, const json_t *const *parts, size_t n,
		struct calib_rank *ranks);
/* {name, signature, place, reason, predicted_bytes, device_memory_bytes}
 * (name: null when NULL).  New reference. */
json_t *calib_rank_json(const struct calib_rank *r, const char *name);

#endif
