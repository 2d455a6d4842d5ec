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
 * function below works the same on either backend (calib/driver.h is the
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
#define CALIB_SCHEMA_VERSION 6

/* The signature scheme this build writes.  2: a launch is identified by the
 * job's own files (the script or module in argv and its repository), its
 * argv and the bundle of the interpreter that runs it; cache and dump paths
 * are left out.  1: what stores before schema 4 hold (the code state of the
 * directory xlaunch ran in, no argv, the bundle of VIRTUAL_ENV); such
 * signatures keep their history but join no family. */
#define CALIB_SIG_SCHEME 2

/* ---- memory kinds and bases ------------------------------------------------- */

/* What a memory figure measures.  Figures of different kinds are never
 * related to each other: a correction, a fit or a feasibility check takes
 * one kind on both sides. */
enum calib_kind {
	CALIB_KIND_DEVICE_PEAK,    /* "device_peak": the job's peak on one device
				    * (NVML per process, the runtime's statistics) */
	CALIB_KIND_HOST_PEAK_RSS,  /* "host_peak_rss": peak resident memory of the
				    * whole process group */
	CALIB_KIND_HOST_PEAK_VM,   /* "host_peak_vm": peak address space of the
				    * group's largest process (RLIMIT_AS is per process) */
	CALIB_KIND_XLA_BUFFERS,    /* "xla_buffers": XLA's buffer assignment of the
				    * largest compiled program, per device */
	CALIB_KIND_OOM_REQUEST,    /* "oom_request": the allocation that failed, as
				    * the runtime's out-of-memory message gives it */
	CALIB_KIND_UNCLASSIFIED,   /* "unclassified": recorded before kinds existed */
	CALIB_KIND_COUNT
};
const char *calib_kind_name(enum calib_kind k);
/* False when s names no kind. */
bool calib_kind_parse(const char *s, enum calib_kind *out);

/* How a prediction was made. */
enum calib_basis {
	CALIB_BASIS_NONE,          /* "none": no prediction */
	CALIB_BASIS_LEARNED,       /* "learned": fitted on this family's launches */
	CALIB_BASIS_COMPILER,      /* "compiler": from XLA's own figure for this program */
	CALIB_BASIS_REPORTED,      /* "reported": the job's own prediction */
	CALIB_BASIS_ANALYTIC,      /* "analytic": the model of etc/memory.yaml */
	CALIB_BASIS_UNCLASSIFIED,  /* "unclassified": recorded before bases existed */
	CALIB_BASIS_COUNT
};
const char *calib_basis_name(enum calib_basis b);
bool calib_basis_parse(const char *s, enum calib_basis *out);

/* ---- the store ------------------------------------------------------------ */

struct calib_store;

enum {
	CALIB_OPEN_NOCREATE = 1 << 0,  /* a missing store is an error (73), not created */
	CALIB_OPEN_READONLY = 1 << 1,  /* for queries: a missing store is not created and
					* reads as an empty one (an older one is still
					* migrated: it exists) */
};

/* Opens (creating when missing) the store at location (see above; NULL: the
 * default).  Returns 0 with *out set, or 73 with *out NULL and *err (caller
 * frees) set to "store 'LOCATION': what failed".  err may be NULL. */
int calib_open(const char *location, unsigned flags, struct calib_store **out, char **err);
/* NULL is fine. */
void calib_close(struct calib_store *st);
/* Whether no store exists at the location and an empty one answers in its
 * place (opened with CALIB_OPEN_READONLY): the caller says so. */
bool calib_store_stand_in(const struct calib_store *st);
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

/* parts is an object {code, argv, hardware, model, train, parallel,
 * features, toggles, bundle}, any of which may be missing ("device" is read
 * as "hardware" when "hardware" is absent).  Canonical form: keys sorted,
 * nulls dropped, integral numbers as integers, other numbers rounded to 15
 * significant digits, and in every part but code, argv, toggles and bundle,
 * strings that are numbers or byte sizes ("32GiB", "1e9") become integers.  Returns 0,
 * or 65 when parts is not an object.  out is zeroed first. */
int calib_signature(const json_t *parts, struct calib_sig *out);
void calib_sig_release(struct calib_sig *sig);

/* SHA-256 of len bytes into hex[65] (NUL terminated). */
void calib_sha256_hex(const void *data, size_t len, char hex[65]);

enum {
	CALIB_HW_HOST = 1 << 0,    /* the host itself (the cpu backend), not an accelerator */
};
/* Fills parts.hardware (when absent) from the latest probe of this host:
 * {kind, count, memory, type: "host" or "accelerator"}, the host's when
 * flags has CALIB_HW_HOST, else the best accelerator (the host when there is
 * none).  Returns true when parts now has a hardware part. */
bool calib_parts_fill_hardware(struct calib_store *st, json_t *parts, unsigned flags);

/* Whether parts.hardware (or parts.device) is the host's own processor: its
 * type "host", or, without a type, a kind that says cpu.  False when there
 * is no hardware part. */
bool calib_parts_on_host(const json_t *parts);

/* The family of a launch: its normalized parts (calib_signature's) less the
 * stack (bundle, code), the limits (toggles.limits) and its coordinates,
 * the numbers a family's members may differ in: train.micro_batch, the
 * sequence length (train.seq, else model.seq), every environment value that
 * is a number (toggles.env) and every number in argv (a whole argument, the
 * value of --name=N, or the argument after an option --name).  Launches with
 * one family hash are one job at different sizes; the coordinates say which
 * size.  hash[65] gets the family's SHA-256 hex; *coords (new reference) an
 * object {"micro_batch": 8, "seq": 2048, "env MICRO_BATCH": 8,
 * "--batch": 64, "arg 2": 20}.  Returns 0, or 65 when parts is not an
 * object. */
int calib_family(const json_t *parts, char hash[65], json_t **coords);

/* ---- launch attempts ------------------------------------------------------- */

/* An integer field that is not known. */
#define CALIB_UNSET INT64_MIN

/* One memory figure of an attempt: observed, or predicted before launch. */
struct calib_figure {
	bool predicted;
	enum calib_kind kind;
	int64_t bytes;
	enum calib_basis basis;    /* predictions (CALIB_BASIS_NONE for observations) */
	int64_t error_bytes;       /* predictions: the error bar, CALIB_UNSET when none */
	char *source;              /* what measured or predicted it; owned, may be NULL */
};

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
	/* the headline figures, one kind on both sides where a prediction of
	 * the observed kind was made (CALIB_KIND_COUNT: no kind) */
	int64_t predicted_bytes, observed_bytes;
	enum calib_kind predicted_kind, observed_kind;
	enum calib_basis predicted_basis;
	double wall_s;
	int64_t compile_count;
	int64_t host_peak_rss_bytes;
	/* every figure, the headline ones included (calib_attempt_add_figure) */
	struct calib_figure *figures;
	size_t nfigures;
	/* filled by later work where known */
	char *job_id;              /* the job launch this attempt belongs to */
	int64_t cache_hits;        /* persistent compile-cache hits */
	double first_step_s;       /* seconds from start to the end of the first step */
	char *details;             /* JSON object text: compile and recompile details,
				    * the compiler's per-program figures */
	/* what the signature is made of */
	char *signature_json;      /* canonical JSON of the parts */
	char shape_hash[65], stack_hash[65];
	char *hardware_kind;
	int signature_scheme;      /* CALIB_SIG_SCHEME, or 1 (see there) */
};

/* Every field unknown; time now; host NULL (this host when recorded);
 * signature scheme CALIB_SIG_SCHEME. */
void calib_attempt_init(struct calib_attempt *a);
void calib_attempt_release(struct calib_attempt *a);
/* Adds a figure (replacing one of the same role and kind); source is
 * copied and may be NULL; error_bytes CALIB_UNSET when none. */
void calib_attempt_add_figure(struct calib_attempt *a, bool predicted, enum calib_kind kind,
			      int64_t bytes, enum calib_basis basis, int64_t error_bytes,
			      const char *source);
/* The figure of that role and kind, or NULL (borrowed). */
const struct calib_figure *calib_attempt_figure(const struct calib_attempt *a, bool predicted,
						enum calib_kind kind);
/* Reads a JSON attempt (a `calib history --json` entry, an export line, a
 * kept record): id, time (ISO 8601 or epoch seconds), profile, candidate,
 * signature, host, rank, outcome, exit_status, predicted_bytes,
 * predicted_kind, predicted_basis, observed_bytes, observed_kind, wall_s,
 * compile_count, host_peak_rss_bytes, figures ([{role, kind, bytes, basis,
 * error_bytes, source}]), job_id, cache_hits, first_step_s, details (an
 * object), signature_scheme (1 when absent: a record written before schema
 * 4), and signature_json (string or object; its hash must equal signature,
 * and the shape and stack hashes and hardware kind are taken from it),
 * shape_hash, stack_hash, hardware_kind.  A headline figure without a kind
 * is classified as the migration does: observed bytes equal to
 * host_peak_rss_bytes are host_peak_rss, other figures unclassified.
 * Returns 0, or 65 with *err (caller frees). */
int calib_attempt_from_json(const json_t *o, struct calib_attempt *a, char **err);
enum {
	CALIB_JSON_HISTORY = 0,    /* the fields of `calib history --json` */
	CALIB_JSON_FULL = 1 << 0,  /* and host_peak_rss_bytes, signature_json (an
				    * object), shape_hash, stack_hash, hardware_kind,
				    * signature_scheme */
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

/* One kind of device of an alive backend of a probe: a backend's devices are
 * grouped by kind (an OpenCL platform may hold a CPU and a GPU). */
struct calib_hardware {
	char kind[128];
	char backend[64];          /* "cpu", "opencl", "cuda", "pjrt:FILE" */
	bool host;                 /* the host's own processor (the cpu backend, or a
				    * device whose type or kind is cpu) */
	int64_t count;
	int64_t memory_bytes;      /* the smallest of the group */
	char memory_source[96];    /* how the probe knows it ("" when unsaid; PJRT
				    * gives its allocator's limit, not the size) */
};
/* The hardware of the latest probe of host (NULL: this host): with
 * CALIB_HW_HOST the host's own processor, else the best accelerator
 * (the most total memory), or the host when the probe found none.  Returns
 * 0, 66 when no probe of host has an alive device, or 73. */
int calib_latest_hardware(struct calib_store *st, const char *host, unsigned flags,
			  struct calib_hardware *out);

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
	const char *job;           /* a job id: its launches (ID, and ID#N of its restarts) */
	const char *id_prefix;     /* attempts whose run id starts with this (by the
				    * id's index); NULL: any */
};
#define CALIB_FILTER_INIT { NULL, NULL, -1, NULL, NAN, 0, NULL, NULL }
/* The attempts that match, newest first (time, then the order recorded). */
int calib_history(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		  void *arg);

/* One signature of `calib stats`. */
struct calib_sig_stats {
	char signature[65];
	const char *profile, *candidate;   /* of its latest attempt */
	int64_t attempts, ok, oom;
	double ratio_median;       /* observed/predicted of its ok attempts whose
				    * two figures are of one kind; NAN: none */
	const char *kind;          /* that kind (of the latest such attempt), or NULL */
	double last_seen;          /* epoch seconds */
};
typedef int calib_stats_fn(const struct calib_sig_stats *s, void *arg);
/* Per signature (of attempts of profile, when not NULL), most recently seen
 * first, at most limit (0: all). */
int calib_stats(struct calib_store *st, const char *profile, long long limit,
		calib_stats_fn *fn, void *arg);

/* The canonical signature parts of the newest attempt of profile whose
 * signature identifies its job (scheme 2 and later): *parts (new
 * reference), or NULL when there is none, and *id, that attempt's id
 * (caller frees; NULL with it).  `calib order PROFILE` without a command
 * takes the job's argv, code and bundle from there.  Returns 0 or 73. */
int calib_last_parts(struct calib_store *st, const char *profile, json_t **parts, char **id);

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

/* The analytic model: memory per device, in bytes, from the signature's
 * model shape (the prior of a family that has not been learned yet). */
struct calib_prediction {
	uint64_t model_state_bytes;   /* parameters, gradients, optimizer state */
	uint64_t activation_bytes;    /* all layers, one micro-batch */
	uint64_t logits_bytes;
	uint64_t overhead_bytes;
	uint64_t analytic_bytes;      /* the sum of the four parts */
	double correction;            /* learned observed/analytic factor, 1 when none */
	unsigned samples;             /* launches the correction came from */
	uint64_t predicted_bytes;     /* analytic * correction */
	uint64_t device_memory_bytes; /* hardware.memory, 0 when unknown */
	enum calib_kind kind;         /* what it predicts: device_peak on an
				       * accelerator, host_peak_rss on the host */
	bool known;                   /* the parts were enough to predict */
	bool calibrated;              /* correction learned on this family and stack */
	char note[200];               /* e.g. "family uncalibrated" */
};

/* The analytic model of parts, times the correction learned from the
 * family's successful launches on this stack (observed figures of the
 * model's kind over the model's value; st may be NULL: factor 1).  Parts
 * without a model shape give known = false and a note, not an error.
 * Returns 0, or 73 when the store could not be read (out is still filled,
 * uncalibrated). */
int calib_predict(struct calib_store *st, const json_t *parts, struct calib_prediction *out);
/* {model_state_bytes, activation_bytes, logits_bytes, overhead_bytes,
 *  analytic_bytes, correction, samples, predicted_bytes, device_memory_bytes,
 *  calibrated, note}; unknown byte counts are null.  New reference. */
json_t *calib_prediction_json(const struct calib_prediction *p);

/* A limit a launch runs under, and the kind of figure it bounds:
 * host_peak_vm against limits.address_space, host_peak_rss against a
 * cgroup's memory.max (or the host's memory), device_peak against what the
 * runtime allows itself of the device. */
struct calib_limit {
	enum calib_kind kind;
	int64_t bytes;
	char source[160];             /* "limits.address_space", "cgroup memory.max", ... */
};
#define CALIB_MAX_LIMITS 4

/* A launch to estimate or order: its signature parts (NULL: nothing known)
 * and its limits.  Borrowed. */
struct calib_target {
	const json_t *parts;
	const struct calib_limit *limits;
	size_t nlimits;
};

/* ---- curves ---------------------------------------------------------------------
 *
 * How one kind of memory grows with a family's scale.  A point of a family
 * is (u, v): with one coordinate as the scale, u = 1 and v is that
 * coordinate; with the scale "tokens (micro_batch x seq)", u is the micro
 * batch and v the sequence length (memory grows with the batch, and with
 * the sequence length as the shape says: attention without a fused kernel
 * keeps a batch x heads x seq x seq score matrix).  The scale's value is
 * x = u v. */

enum calib_shape {
	CALIB_SHAPE_AFFINE,        /* "affine": a + b u v */
	CALIB_SHAPE_POWER,         /* "power": a + b u v^p, p fitted (0.5 to 3) */
	CALIB_SHAPE_QUADRATIC,     /* "quadratic": a + b u v + c u v^2 */
	CALIB_SHAPE_XLA_POWER,     /* "xla-power": a + b u v^p, p the exponent XLA's own
				    * buffers show on the family */
	CALIB_SHAPE_SQUARE,        /* "square": a + b u v^2, where v is a sequence
				    * length (attention's score matrix) */
	CALIB_SHAPE_COUNT
};
const char *calib_shape_name(enum calib_shape s);
/* How many numbers a shape fits (a, b and c or p; xla-power's p is given). */
unsigned calib_shape_params(enum calib_shape s);

/* What the coordinate v of a family is, as far as the scale's name says:
 * memory grows with a batch as a line; with a sequence length it may grow
 * as its square (the square shape is tried only then). */
enum calib_coord {
	CALIB_COORD_OTHER,
	CALIB_COORD_BATCH,
	CALIB_COORD_SEQ,
};

/* One observed figure at (u, v); count launches gave it (their mean). */
struct calib_obs {
	double u, v, y;
	unsigned count;
};

/* A fitted curve: y = a + b u v^p + c u v^2 (affine: p = 1, c = 0;
 * quadratic: p = 1).  Beyond the largest size it was fitted on (x_hi) it
 * never falls below the line through its two largest sizes (the safe
 * side: a curve that bends down there would call a larger size feasible on
 * the strength of a bend nobody saw continue). */
struct calib_curve {
	enum calib_shape shape;
	double a, b, c, p;
	double x_hi, y_hi;         /* the largest size fitted on, its mean figure */
	double rise;               /* bytes per unit of x of that line (>= 0); NAN: none */
};
/* The curve's value at (u, v). */
double calib_curve_at(const struct calib_curve *c, double u, double v);
/* "641.7 MiB + 21.5 KiB x seq + 262 B x seq^2", the terms named after
 * scale_name (tokens: "micro_batch x seq"). */
const char *calib_curve_str(const struct calib_curve *c, const char *scale_name, bool tokens,
			    char *buf, size_t n);

/* One shape tried on a family. */
struct calib_trial {
	bool fitted;               /* enough sizes for its numbers */
	bool judged;               /* one more: every size was predicted from the others */
	double loo;                /* the largest relative error of those predictions
				    * (NAN: not judged) */
	double predicted;          /* at the launch to come, bytes */
	struct calib_curve curve;  /* fitted on every size */
};

/* The curve chosen for one launch, and its band. */
struct calib_choice {
	unsigned points, sizes;    /* launches and distinct (u, v) they were at */
	enum calib_shape chosen;   /* CALIB_SHAPE_COUNT: nothing could be fitted */
	struct calib_trial trial[CALIB_SHAPE_COUNT];
	unsigned contenders;       /* a mask of the shapes the choice was between */
	bool safe_side;            /* always false: being the largest is no reason to
				    * be chosen (kept for the JSON's "safe_side") */
	enum calib_coord coord;    /* what v is */
	bool by_prior;             /* no shape could be judged: the chosen one is the
				    * one the compiler's growth or the coordinate
				    * expects */
	double xla_exponent;       /* the exponent xla-power took (NAN: none) */
	bool xla_lower;            /* from two sizes of XLA's figures (see below) */
	double xla_shown;          /* the exponent they show (a lower bound with xla_lower) */
	double u, v;               /* the launch to come */
	double predicted;          /* bytes */
	double loo;                /* the out-of-sample error the band rests on (NAN:
				    * none could be measured: a prior of 5%) */
	double x_lo, x_hi, step;   /* the sizes seen (x = u v), and the mean ratio of
				    * one to the next, as a logarithm */
	double band;               /* bytes either way at the launch */
	char why[320];             /* which shape and why, in one line */
	double y_lo, y_hi;         /* the mean figure at the least and the largest size seen */
	double noise;              /* bytes: the largest difference between launches of one
				    * size (at least 1% of y_hi): growth within it is no slope */
	bool repeats;              /* noise was measured between repeated launches */
	double sd, xbar, sxx;      /* the pooled standard deviation of launches of one
				    * size, and the mean and spread of x over the launches */
	unsigned df, nlaunch;      /* its degrees of freedom, the launches */
	bool flat;                 /* |y_hi - y_lo| is within the noise: no slope shown */
	bool held;                 /* a shape's formula falls below the line through the
				    * two largest sizes beyond them: held on that line */
	char how[320];             /* what the prediction is, as computed */
};

/* Fits every shape in mask (bits 1 << enum calib_shape; 0: every shape) to
 * the n observations, judges each by leaving one size out at a time, and
 * chooses for the launch at (u, v).  Only shapes with out-of-sample
 * evidence are chosen between where any has it: a shape with as many
 * numbers as there are sizes fits them exactly and says nothing about the
 * next one, and being the largest is no evidence either.  Of the judged
 * shapes, those within 1.25 times the best one's error (or 1% more) cannot
 * be told apart by the launches; among them the one the family's other
 * evidence expects is taken: the growth XLA's buffers show (below x^1.2 a
 * line, from it the curve xla-power takes), else the coordinate (a
 * sequence length: the square; a batch or anything else: a line), else the
 * one with fewer numbers, else the least error.  Where no shape could be
 * judged (two sizes), the same expectation picks among the exact fits
 * (by_prior).  xla (nxla of them; NULL: none) are XLA's buffer figures of
 * the family: xla-power takes its exponent from them (see
 * calib_growth_exponent; from two sizes only a lower bound, so from 1.2 up
 * the square, or the bound when higher; below 1.2 the bound, at least 1),
 * and, when judged, from them without the size left out.  The band: 1%
 * (the spread of a figure between launches of one size) plus the chosen
 * shape's out-of-sample error (a prior of 5% when it has none) times the
 * square of 1 + the distance beyond the sizes seen in mean steps between
 * them (the logarithm of x = u v); at least the spread of the shapes the
 * launches could not tell apart from it, and 8 MiB.  The coordinate is
 * unknown here (CALIB_COORD_OTHER).  Returns the number of shapes fitted
 * (0: out->chosen is CALIB_SHAPE_COUNT). */
unsigned calib_choose_curve(const struct calib_obs *obs, size_t n, double u, double v,
			    const struct calib_obs *xla, size_t nxla, unsigned mask,
			    struct calib_choice *out);
/* calib_choose_curve in two steps: the fits and their judgement, which do
 * not depend on the launch (out's choice left empty; returns the number of
 * shapes fitted), then the choice for the launch at (u, v) from them (false
 * when nothing was fitted).  The candidates of one family share the first. */
unsigned calib_fit_curves(const struct calib_obs *obs, size_t n, const struct calib_obs *xla,
			  size_t nxla, unsigned mask, struct calib_choice *out);
/* calib_fit_curves for a family whose coordinate v is coord. */
unsigned calib_fit_curves_for(const struct calib_obs *obs, size_t n, const struct calib_obs *xla,
			      size_t nxla, unsigned mask, enum calib_coord coord,
			      struct calib_choice *out);
bool calib_choice_for(struct calib_choice *ch, double u, double v);
/* How far (u, v) lies beyond the sizes seen, in mean steps between them (0
 * within them). */
double calib_choice_reach(const struct calib_choice *ch, double u, double v);
/* "+/- 56.5 MiB = 1% + 3.20 x 0.5% (the out-of-sample error; 2.2 mean
 * steps beyond the sizes seen)": what the band at the launch is made of. */
const char *calib_band_str(const struct calib_choice *ch, char *buf, size_t n);
/* The choice's band at (u, v), its chosen curve's prediction in *pred. */
double calib_choice_band_at(const struct calib_choice *ch, double u, double v, double *pred);

/* The exponent p with which figures grow with v: of a + b u v^p fitted to
 * three sizes or more; from two sizes, the slope of log(y/u) against log v
 * (*lower_bound: a constant part of the figures only lowers it).  Returns
 * false when the sizes do not say (fewer than two values of v, or figures
 * that are not positive). */
bool calib_growth_exponent(const struct calib_obs *obs, size_t n, double *p, bool *lower_bound);

/* What is predicted of one launch, for the kind that decides whether it
 * fits: the kind of the limit with the least room, or, without limits,
 * device_peak on an accelerator and host_peak_rss on the host.
 *
 * Bases, in precedence: compiler (XLA's own buffer figure for this very
 * program, seen in an earlier attempt, through a line learned between that
 * figure and the kind on this family; with no line, a device figure above
 * the device's limit still makes it infeasible), learned (a curve of the
 * family's successful launches on this stack against the scale, chosen by
 * calib_choose_curve, from two launches at different scales on; on XLA
 * jobs the exponent XLA's buffers show over the family's launches, those
 * that ran out of memory after compiling included, is one of the shapes),
 * analytic (the model of etc/memory.yaml times the family's correction),
 * none.  An out-of-memory attempt of the family at a scale at or below
 * this one, under the same limits, makes it infeasible whatever the
 * prediction says. */
struct calib_estimate {
	bool known;                   /* predicted_bytes is known */
	enum calib_kind kind;
	enum calib_basis basis;
	int64_t predicted_bytes;      /* CALIB_UNSET when unknown */
	int64_t error_bytes;          /* the band, either way; CALIB_UNSET when unknown */
	int64_t limit_bytes;          /* the limit of kind, CALIB_UNSET when none */
	char limit_source[160];
	int feasible;                 /* 1: predicted + error within the limit; 0:
				       * predicted - error above it, or an
				       * out-of-memory attempt at a scale at or
				       * below; -1: unknown (no prediction, no limit,
				       * or the band holds the limit: near_limit) */
	bool near_limit;              /* the band holds the limit */
	/* the learned curve (points == 0: none) */
	unsigned points;              /* successful launches it used */
	struct calib_choice fit;      /* the shapes tried and the one chosen */
	double scale;                 /* this launch's value of the scale */
	bool tokens;                  /* the scale is micro_batch x seq */
	char scale_name[64];          /* "micro_batch", "tokens (micro_batch x seq)",
				       * "env MICRO_BATCH", "--batch", "arg 3" */
	/* XLA's buffers for this launch, predicted from the family's (before
	 * the program is ever compiled; compiler.sizes == 0: none) */
	struct calib_choice compiler;
	double xla_exponent;          /* the exponent they show (NAN: unknown) */
	bool xla_exponent_lower;      /* from two sizes: a lower bound */
	char summary[400];            /* one line: how it was predicted */
	char reason[480];             /* why it fits, does not, or is not known to */
	struct calib_prediction analytic;  /* the analytic model and its parts */
	/* never launched with this signature: how it differs from the family's
	 * latest launch ("differs from the family's latest launch (run ID) in
	 * --steps 200 (was 100), limits"), or that the family has none on this
	 * stack; "" when launched */
	char differs[240];
};

/* Estimates one launch (st may be NULL: the analytic model alone).
 * Returns 0, or 73 when the store could not be read (out holds what could
 * be estimated without it). */
int calib_estimate(struct calib_store *st, const struct calib_target *t,
		   struct calib_estimate *out);
/* {predicted_bytes, kind, basis, error_bytes, limit_bytes, limit_source,
 *  feasible (true, false or null), near_limit, summary, reason, points,
 *  scale_name, scale, intercept_bytes, slope_bytes, fit, curve, compiler,
 *  analytic: calib_prediction_json}.  New reference. */
json_t *calib_estimate_json(const struct calib_estimate *e);
/* The chosen curve "1.51 GiB + 24.9 KiB x micro_batch" into buf, or ""
 * without a fit. */
const char *calib_fit_str(const struct calib_estimate *e, char *buf, size_t n);
/* The learned curve of e at scale value x, the launch's other coordinates
 * as they are (with tokens, its micro batch); NAN without a fit.  With band
 * not NULL, *band is the band there. */
double calib_fit_at(const struct calib_estimate *e, double x, double *band);

/* ---- retry order ------------------------------------------------------------- */

/* A candidate's place in the order; the store gives the first six, the
 * launcher the last two (a pinned candidate, a profile without any). */
enum calib_place {
	CALIB_PLACE_KNOWN_GOOD,    /* the latest attempt with this signature that says
				    * anything of memory fitted (ok, compile-storm) */
	CALIB_PLACE_UNSEEN,        /* not launched with this signature */
	CALIB_PLACE_NEAR_LIMIT,    /* unseen, and the band of its prediction holds
				    * the limit: "near-limit" */
	CALIB_PLACE_SUSPECT,       /* an oom with this shape on an older stack */
	CALIB_PLACE_INFEASIBLE,    /* predicted not to fit: "predicted-infeasible" */
	CALIB_PLACE_KNOWN_BAD,     /* that latest attempt was an oom */
	CALIB_PLACE_PINNED,        /* named with -c: the only one tried */
	CALIB_PLACE_ONLY,          /* the profile has no candidates */
};
/* "known-good", "unseen", "near-limit", "suspect", "predicted-infeasible",
 * "known-bad", "pinned", "only". */
const char *calib_place_name(enum calib_place p);

struct calib_rank {
	size_t index;              /* the candidate's position in the profile */
	enum calib_place place;
	int tier;                  /* 0: known-good or predicted to fit; 1: unseen
				    * without a verdict, or near the limit (the
				    * profile's order between them); 2: suspect; 3:
				    * predicted infeasible; 4: known-bad */
	char reason[600];
	char signature[65];
	struct calib_estimate est;
};

/* Ranks n launches (targets[i] of the i-th candidate in profile order):
 * ranks[0..n) receives them in the order to try: by tier, ties in profile
 * order.  Interrupted attempts and those that ended in error, crash or
 * timeout say nothing of memory and are passed over.  st may be NULL
 * (nothing known).  Returns 0, 65 (parts not an object) or 73 (ranks then
 * hold profile order, place unseen, reason "profile order"). */
int calib_order(struct calib_store *st, const struct calib_target *targets, size_t n,
		struct calib_rank *ranks);
/* {name, signature, place, reason, predicted_bytes, kind, basis,
 * error_bytes, limit_bytes, feasible, fit, device_memory_bytes} (name: null
 * when NULL).  New reference. */
json_t *calib_rank_json(const struct calib_rank *r, const char *name);

/* ---- jobs of several ranks ---------------------------------------------------- */

/* The candidate a job launch runs, the same for every rank: the first rank
 * to ask publishes its own (candidate and signature, either may be NULL),
 * every later one gets that.  job_id names one launch of a job (ID, or
 * ID#N for its Nth restart).  *chosen and *chosen_sig are set (caller
 * frees; NULL when the publisher's was).  Returns 0 or 73. */
int calib_job_choose(struct calib_store *st, const char *job_id, const char *candidate,
		     const char *signature, int64_t rank, char **chosen, char **chosen_sig);

/* ---- ranks watching each other ------------------------------------------------
 *
 * One row per rank of a job launch (job_id as calib_job_choose's): its
 * lease, renewed by its supervisor while it lives, and its end.  Times are
 * the store's clock (the server's for PostgreSQL, so hosts with skewed
 * clocks agree), epoch seconds. */

/* Starts rank's row of job_id (replacing one an earlier launch with the
 * same id left): started and renewed now, its lease running lease_s, no
 * end.  *started (may be NULL) gets the store's time.  Returns 0, 65 or
 * 73. */
int calib_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
		     const char *run_id, double lease_s, double *started);

/* Another rank of the job that is gone: ended badly, or its lease lapsed. */
struct calib_peer_end {
	bool found;
	bool lapsed;               /* its lease lapsed without an end */
	int64_t rank;
	enum xl_outcome outcome;   /* how it ended (not lapsed) */
	double when;               /* its end, or when its lease ran out */
	double now;                /* the store's time of the poll */
	char host[256];            /* where it ran ("" unknown) */
};

/* One poll of a rank of a job: renews its lease (lease_s from now) and
 * reads, in one indexed probe each, the first other rank that ended with
 * any outcome but ok at or after since, and (when judge_leases) the other
 * rank whose lease ran out first, at or after since, without an end.  The
 * end wins over a lapse.  Returns 0 or 73. */
int calib_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
		    double since, bool judge_leases, struct calib_peer_end *out);

/* Ends rank's row: outcome and exit status, and for peer-failed the rank it
 * was ended for and that rank's outcome (peer_rank < 0: none; a lapsed
 * lease is peer_outcome XL_OUT_COUNT).  Returns 0 or 73. */
int calib_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		   enum xl_outcome outcome, int64_t exit_status, int64_t peer_rank,
		   enum xl_outcome peer_outcome);

/* A rank's row, for `calib history --job`.  Strings are borrowed. */
struct calib_job_rank {
	const char *job_id, *host, *run_id;
	int64_t rank, world;
	double started, renewed, expires;
	double ended;              /* NAN: no end written */
	int outcome;               /* an enum xl_outcome, -1 when no end */
	int64_t exit_status;       /* CALIB_UNSET unknown */
	int64_t peer_rank;         /* CALIB_UNSET: none */
	int peer_outcome;          /* enum xl_outcome, XL_OUT_COUNT: a lapsed lease,
				    * -1 none */
};
typedef int calib_job_rank_fn(const struct calib_job_rank *r, void *arg);
/* The rows of job (ID, and ID#N of its restarts), by job launch, then by
 * end (ended ranks first, earliest first), then rank. */
int calib_job_ranks(struct calib_store *st, const char *job, calib_job_rank_fn *fn, void *arg);

/* Gives a server store's connection back while the handle waits unused (a
 * job's ranks must not hold one each); the next operation connects again.
 * Nothing for SQLite. */
void calib_idle(struct calib_store *st);

/* ---- report queries ------------------------------------------------------------
 *
 * What `calib report` draws, aggregated by the store so that the work does
 * not grow with the number of attempts beyond one indexed pass: groups,
 * bins and bounds, never one row per attempt.  Every query takes a filter
 * (profile: NULL any; since: epoch seconds, NAN none) on the attempts it
 * reads.  Strings in records are borrowed for the call. */

struct calib_report_filter {
	const char *profile;
	double since;
};

/* One profile (NULL: attempts recorded without one) and its attempts. */
struct calib_report_profile {
	const char *profile;
	int64_t attempts;
	double first, last;        /* epoch seconds */
};
typedef int calib_report_profile_fn(const struct calib_report_profile *p, void *arg);
/* Profiles with attempts, the most recently launched first, at most limit
 * (0: all). */
int calib_report_profiles(struct calib_store *st, const struct calib_report_filter *f,
			  long long limit, calib_report_profile_fn *fn, void *arg);

/* The attempts of one outcome in one bin of time. */
struct calib_timeline_bin {
	int64_t bin;               /* floor((time - t0) / width) */
	enum xl_outcome outcome;
	int64_t attempts;
	double time_min, time_max;
	double wall_mean, wall_max;    /* NAN: no wall time known */
	int64_t compiles;          /* sum of the known compile counts */
	int64_t cache_hits;        /* sum of the known cache hits */
	int64_t compiles_known, cache_known;   /* attempts that gave them */
};
typedef int calib_timeline_fn(const struct calib_timeline_bin *b, void *arg);
/* The attempts of f->profile (required; "" matches attempts without one)
 * in bins of width seconds from t0, in bin order. */
int calib_report_timeline(struct calib_store *st, const struct calib_report_filter *f, double t0,
			  double width, calib_timeline_fn *fn, void *arg);

/* A stack and hardware a profile ran on, and when. */
struct calib_report_stack {
	const char *stack_hash;    /* NULL when unknown */
	const char *hardware_kind; /* NULL when unknown */
	int64_t attempts;
	double first, last;
};
typedef int calib_report_stack_fn(const struct calib_report_stack *s, void *arg);
/* The (stack, hardware) pairs of f->profile's attempts, first seen first. */
int calib_report_stacks(struct calib_store *st, const struct calib_report_filter *f,
			calib_report_stack_fn *fn, void *arg);

/* Predicted against observed: the attempts with a predicted and an
 * observed figure of one kind, binned on the logarithm of both figures
 * (bins_per_e bins per factor e), per kind and outcome. */
struct calib_pvo_bin {
	enum calib_kind kind;
	enum xl_outcome outcome;
	int64_t attempts;
	double predicted, observed;            /* means over the bin, bytes */
};
typedef int calib_pvo_fn(const struct calib_pvo_bin *b, void *arg);
int calib_report_pvo(struct calib_store *st, const struct calib_report_filter *f,
		     int bins_per_e, calib_pvo_fn *fn, void *arg);

/* Where figures come from: per kind, role and source, how many. */
struct calib_report_source {
	enum calib_kind kind;
	bool predicted;
	const char *source;        /* NULL when unsaid */
	int64_t figures;
};
typedef int calib_report_source_fn(const struct calib_report_source *s, void *arg);
/* The most frequent first. */
int calib_report_sources(struct calib_store *st, const struct calib_report_filter *f,
			 calib_report_source_fn *fn, void *arg);

/* A family on one stack (signatures of scheme 2 and later). */
struct calib_report_family {
	const char *family, *stack;
	int64_t attempts, signatures;
	double last;
	const char *profile;       /* of its latest attempt */
	const char *parts;         /* canonical parts of its latest signature */
};
typedef int calib_report_family_fn(const struct calib_report_family *fa, void *arg);
/* Families, the most recently launched first, at most limit (0: all). */
int calib_report_families(struct calib_store *st, const struct calib_report_filter *f,
			  long long limit, calib_report_family_fn *fn, void *arg);

/* The observed figures of one signature of a family, per outcome and kind. */
struct calib_report_member {
	const char *signature;
	const char *coords, *parts;    /* JSON text */
	enum xl_outcome outcome;
	enum calib_kind kind;      /* CALIB_KIND_COUNT: attempts without figures */
	int64_t attempts;
	int64_t min_bytes, max_bytes;
	double mean_bytes;
};
typedef int calib_report_member_fn(const struct calib_report_member *m, void *arg);
/* The newest limit signatures of family on stack, their rows together. */
int calib_report_members(struct calib_store *st, const struct calib_report_filter *f,
			 const char *family, const char *stack, long long limit,
			 calib_report_member_fn *fn, void *arg);

/* The latest probe of every host (since f->since; the profile is not
 * used), hosts in name order. */
struct calib_report_probe {
	const char *host;
	double time;
	const json_t *doc;         /* the `probe --json` document */
};
typedef int calib_report_probe_fn(const struct calib_report_probe *p, void *arg);
int calib_report_probes(struct calib_store *st, const struct calib_report_filter *f,
			calib_report_probe_fn *fn, void *arg);

#endif
