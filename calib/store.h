/*
 * store.h - private to the calib module (not a public header): the store's
 * internals above its drivers (calib/driver.h).
 *
 * The ~30 operations of the store are written once over the driver, in one
 * SQL dialect both servers take (calib/query.c, calib_queries); where
 * PostgreSQL answers in one round trip what the common query asks in one
 * per row, or its planner needs LATERAL to stay on an index, or the leases
 * of ranks take the server's clock, calib_pg_queries has its own SQL over
 * the same driver calls, and the rows are read by the same code.  The
 * schema migrates in one loop (calib/migrate.c) over each driver's steps,
 * with the data each version derives from the last.  The public functions
 * of calib.h are written above the operations (store.c, order.c,
 * predict.c), and so is what does not depend on the store's language:
 * probe uids and backend rows, the choice of hardware, medians, retries and
 * the redaction of passwords (store.c).
 *
 * Every operation returns 0 or an exit status with st->err set (calib_fail).
 * Writes made between begin and commit are one transaction; outside one,
 * each write is its own.  A driver whose failure may pass when the whole
 * transaction runs again sets st->retry; store.c then runs the write again
 * from its start, a bounded number of times, when it is not part of a
 * larger transaction.
 */
#ifndef XLAUNCH_CALIB_STORE_H
#define XLAUNCH_CALIB_STORE_H

#include "calib/driver.h"

/* One observed figure of an attempt of a family (family_points). */
struct calib_point {
	const char *attempt, *signature;
	const char *coords;        /* the signature's coordinates (JSON text) */
	const char *parts;         /* the signature's canonical parts (JSON text) */
	double time;
	enum xl_outcome outcome;
	enum calib_kind kind;      /* CALIB_KIND_COUNT: the attempt has no figures */
	int64_t bytes;
};
typedef int calib_point_fn(const struct calib_point *p, void *arg);

/* A probe as kept: what export writes and import reads. */
struct calib_probe_row {
	const char *uid, *host;
	double time;
	const json_t *doc;
};
typedef int calib_probe_fn(const struct calib_probe_row *p, void *arg);

/* The operations of the store: calib_queries (calib/query.c) has them all;
 * calib_pg_queries has those PostgreSQL asks in SQL of its own, the rest
 * NULL.  calib_open merges the two into st->ops. */
struct calib_ops {
	/* a checked record (calib_record_attempt checks before it calls), with
	 * its signature's family hash and coordinates (JSON text; both NULL
	 * for a signature of scheme 1 or without parts); the figures go in
	 * with a new attempt only */
	int (*record_attempt)(struct calib_store *st, const struct calib_attempt *a,
			      const char *family, const char *coords);
	/* doc stored as it is, its alive backends as rows; a uid already
	 * present is left alone */
	int (*record_probe)(struct calib_store *st, const json_t *doc, const char *host, double t,
			    const char *uid);

	int (*history)(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		       void *arg);
	int (*stats)(struct calib_store *st, const char *profile, long long limit,
		     calib_stats_fn *fn, void *arg);
	int (*resolve_signature)(struct calib_store *st, const char *prefix, char hash[65]);
	int (*forget)(struct calib_store *st, const char *hash, int64_t *attempts);
	/* every probe, then every attempt (the CALIB_JSON_FULL fields), oldest
	 * first, from one snapshot */
	int (*export)(struct calib_store *st, calib_probe_fn *pfn, calib_attempt_fn *afn,
		      void *arg);

	/* every alive device group of the latest probe of host, in the order
	 * recorded */
	int (*latest_hardware)(struct calib_store *st, const char *host,
			       struct calib_hardware **out, size_t *n);
	/* the latest attempt with this signature that says something of
	 * memory (ok, compile-storm or oom): outcome, id, time; *found */
	int (*latest_attempt)(struct calib_store *st, const char *signature,
			      struct calib_attempt *out, bool *found);
	/* the latest attempt of another signature with this shape; *other_stack
	 * when its stack is not this one */
	int (*latest_same_shape)(struct calib_store *st, const char *shape, const char *stack,
				 const char *not_signature, struct calib_attempt *out, bool *found,
				 bool *other_stack);
	/* the observed figures of the ok, compile-storm and oom attempts of
	 * signatures of this family and stack (the newest CALIB_FAMILY_SIGS
	 * signatures, of each the newest CALIB_FAMILY_PER_SIG attempts), the
	 * rows of one attempt together, newest first within a signature (an
	 * attempt without figures is one row without a kind) */
	int (*family_points)(struct calib_store *st, const char *family, const char *stack,
			     calib_point_fn *fn, void *arg);
	/* successful attempts with observed figures of this family on other
	 * stacks (counted up to 1000) */
	int (*family_other_stacks)(struct calib_store *st, const char *family, const char *stack,
				   unsigned *n);
	/* the canonical parts of the signature of profile's newest attempt
	 * whose signature is of scheme 2 or later (*parts NULL when none;
	 * caller frees), and that attempt's id */
	int (*last_parts)(struct calib_store *st, const char *profile, char **parts, char **id);
	/* in one transaction: publishes (job_id, candidate, signature, rank)
	 * unless job_id has a choice already, then reads the choice
	 * (*chosen and *chosen_sig, caller frees; NULL for a NULL column) */
	int (*job_choose)(struct calib_store *st, const char *job_id, const char *candidate,
			  const char *signature, int64_t rank, char **chosen, char **chosen_sig);
	/* ranks watching each other (calib.h): the same contracts */
	int (*rank_begin)(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
			  const char *run_id, double lease_s, double *started);
	int (*rank_poll)(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
			 double since, bool judge_leases, struct calib_peer_end *out);
	int (*rank_end)(struct calib_store *st, const char *job_id, int64_t rank,
			const char *outcome, int64_t exit_status, int64_t peer_rank,
			const char *peer_outcome);
	int (*job_ranks)(struct calib_store *st, const char *job, calib_job_rank_fn *fn, void *arg);
	/* `calib report` (calib.h: report queries); the same contracts */
	int (*report_profiles)(struct calib_store *st, const struct calib_report_filter *f,
			       long long limit, calib_report_profile_fn *fn, void *arg);
	int (*report_timeline)(struct calib_store *st, const struct calib_report_filter *f,
			       double t0, double width, calib_timeline_fn *fn, void *arg);
	int (*report_stacks)(struct calib_store *st, const struct calib_report_filter *f,
			     calib_report_stack_fn *fn, void *arg);
	int (*report_pvo)(struct calib_store *st, const struct calib_report_filter *f,
			  int bins_per_e, calib_pvo_fn *fn, void *arg);
	int (*report_sources)(struct calib_store *st, const struct calib_report_filter *f,
			      calib_report_source_fn *fn, void *arg);
	int (*report_families)(struct calib_store *st, const struct calib_report_filter *f,
			       long long limit, calib_report_family_fn *fn, void *arg);
	int (*report_members)(struct calib_store *st, const struct calib_report_filter *f,
			      const char *family, const char *stack, long long limit,
			      calib_report_member_fn *fn, void *arg);
	int (*report_probes)(struct calib_store *st, const struct calib_report_filter *f,
			     calib_report_probe_fn *fn, void *arg);
};

/* The names of the operations, for what is done to each (store.c merges a
 * driver's own into st->ops). */
#define CALIB_OPS(X) \
	X(record_attempt) X(record_probe) X(history) X(stats) X(resolve_signature) X(forget) \
	X(export) X(latest_hardware) X(latest_attempt) X(latest_same_shape) X(family_points) \
	X(family_other_stacks) X(last_parts) X(job_choose) X(rank_begin) X(rank_poll) \
	X(rank_end) X(job_ranks) X(report_profiles) X(report_timeline) X(report_stacks) \
	X(report_pvo) X(report_sources) X(report_families) X(report_members) X(report_probes)

/* Every operation, written once over the driver (calib/query.c). */
extern const struct calib_ops calib_queries;
/* PostgreSQL's own SQL for some of them, over the same driver calls
 * (calib/query.c); store.c puts them in place for calib_pg_driver. */
extern const struct calib_ops calib_pg_queries;

/* sql with the driver's words (@seq, @pos, @fig) in place.  Caller frees. */
char *calib_sql(const struct calib_driver *drv, const char *sql);
/* The rows of a probe's backends (calib_probe_backends) into probe_backends,
 * as probe `probe` (the migration to schema 4 runs it too). */
int calib_insert_backends(struct calib_store *st, int64_t probe, const json_t *doc);

/* The one migration loop: from the store's version (drv->version) up to
 * CALIB_SCHEMA_VERSION through steps (a driver's, oldest first), under the
 * driver's lock, in one transaction: each step's DDL, then what its
 * version derives from the data there (probe uids at 2; the figures'
 * kinds and the probe backends by device kind at 4), then the version.  A
 * new store starts at the first step; a version without a step is refused
 * ("no migration to schema N in this build", 70) and nothing changes.  A
 * store newer than this build is refused (73); with CALIB_OPEN_NOCREATE, a
 * place of a driver that is absent without its schema is refused with
 * st->absent (73).  Returns 0 or that status (calib/migrate.c). */
int calib_migrate(struct calib_store *st, const struct calib_step *steps, size_t nsteps,
		  unsigned flags);

/* ---- the attempt's columns ----------------------------------------------------- */

/* The type of a column of an attempt: its field's C type, its SQL and its
 * JSON.  NULL is CALIB_UNSET, NAN, NULL, "" or the "none" of an enum. */
enum calib_col_type {
	CALIB_COL_TEXT,            /* char *; a JSON string */
	CALIB_COL_HASH,            /* char[65], "" NULL */
	CALIB_COL_INT,             /* int64_t */
	CALIB_COL_REAL,            /* double */
	CALIB_COL_TIME,            /* double epoch seconds; ISO 8601 in JSON */
	CALIB_COL_OUTCOME,         /* enum xl_outcome, by name */
	CALIB_COL_KIND,            /* enum calib_kind by name, CALIB_KIND_COUNT NULL */
	CALIB_COL_BASIS,           /* enum calib_basis by name, CALIB_BASIS_NONE NULL */
	CALIB_COL_OBJECT,          /* char * of JSON object text; an object in JSON */
	CALIB_COL_SCHEME,          /* int; never NULL */
	CALIB_COL_FIGURES,         /* the figures (@fig in SQL; an array in JSON) */
};

enum {
	CALIB_COL_SIG = 1 << 0,    /* a column of the signature (s.), not of the
				    * attempt: read by export, in CALIB_JSON_FULL */
	CALIB_COL_FULL = 1 << 1,   /* in JSON only with CALIB_JSON_FULL */
	CALIB_COL_EMPTY = 1 << 2,  /* "" is written NULL */
	CALIB_COL_HOST = 1 << 3,   /* NULL is written this host's name */
	CALIB_COL_PREDICTED = 1 << 4,  /* NULL unless the predicted figure and its
					* kind are known */
	CALIB_COL_OBSERVED = 1 << 5,   /* NULL unless the observed one and its kind are */
};

/* One column of an attempt: its name in JSON, in SQL (a. or s.), where it
 * lives in struct calib_attempt, and whether it may be NULL. */
struct calib_column {
	const char *name, *sql;
	enum calib_col_type type;
	size_t offset;
	bool nullable;
	unsigned flags;
};

/* The columns of an attempt in the order of its JSON (calib_attempt_to_json),
 * which is also the order the queries select them in; ends with a NULL
 * name. */
extern const struct calib_column calib_attempt_cols[];
/* Whether column c of a is NULL: never for a column that is not nullable
 * (its text is written as it is, a host as this host's name); else when
 * its field is unknown, or CALIB_COL_PREDICTED or OBSERVED's condition is
 * false. */
bool calib_col_is_null(const struct calib_column *c, const struct calib_attempt *a);


#define CALIB_FAMILY_SIGS 256
#define CALIB_FAMILY_PER_SIG 10


/* Drops st's family cache (estimate.c). */
void calib_family_cache_drop(struct calib_store *st);

/* ---- shared by the operations ---------------------------------------------- */

/* A probe document as the store keeps it (calib/probedoc.c). */

/* The uid of a probe recorded without one: SHA-256 hex of host, time and
 * the document's compact sorted-key JSON.  Caller frees. */
char *calib_probe_uid(const char *host, double t, const char *doc_text);

/* One backend of a probe document, as the probe_backends rows keep it:
 * the first device's kind, the device count, the smallest device memory
 * (-1: none given).  Strings are borrowed from the document. */
struct calib_probe_backend {
	const char *name, *state;
	const char *kind, *type, *memory_source;   /* NULL: a backend without devices */
	int64_t count;
	int64_t memory_bytes;      /* the smallest of the group; -1 unknown */
};
/* The named backends of doc as rows, one per kind (and type) of device of
 * each backend, in order; a backend without devices is one row without a
 * kind.  The strings are doc's; the array is the caller's to free.
 * Returns how many. */
size_t calib_probe_backends(const json_t *doc, struct calib_probe_backend **out);

/* The rest: calib/store.c, and the analytic model calib/predict.c. */

/* Appends one stored probe row to *all (of *n; caller frees the array):
 * what latest_hardware returns, for calib_latest_hardware to choose from. */
void calib_hardware_add(struct calib_hardware **all, size_t *n, const char *kind,
			const char *backend, const char *type, const char *memory_source,
			int64_t count, int64_t memory_bytes);

/* A rank row's outcome or peer_outcome text as calib_job_rank has it:
 * the outcome, XL_OUT_COUNT for a lapsed lease, -1 for NULL or unknown. */
int calib_peer_outcome_parse(const char *s);

/* The median of v[0..n) (sorted in place); NAN when n is 0. */
double calib_median(double *v, size_t n);

/* The analytic part of a prediction from parts (no store). */
void calib_predict_analytic(const json_t *parts, struct calib_prediction *out);


#endif
