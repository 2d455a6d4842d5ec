/*
 * backend.h - private to the calib module (not a public header): the store
 * handle and the interface a store backend implements.
 *
 * calib_open() picks the backend by the location's scheme (calib/store.c):
 * a path or "sqlite:" is calib_sqlite_backend (calib/sqlite.c, the only file
 * that speaks SQL to SQLite); "postgresql://" and "postgres://" are
 * calib_pg_backend (calib/postgres.c, the only file that speaks to libpq).
 * The public functions of calib.h are written once, above these operations
 * (store.c, order.c, predict.c), and so is what does not depend on the
 * store's language: probe uids and backend rows, the choice of hardware,
 * medians, retries and the redaction of passwords (store.c).
 *
 * Every operation returns 0 or an exit status with st->err set (calib_fail).
 * Writes made between begin and commit are one transaction; outside one,
 * each write is its own.  A backend whose failure may pass when the whole
 * transaction runs again (a serialization failure, a deadlock, a lost
 * connection made again) sets st->retry; store.c then runs the write again
 * from its start, a bounded number of times, when it is not part of a
 * larger transaction.
 */
#ifndef XLAUNCH_CALIB_BACKEND_H
#define XLAUNCH_CALIB_BACKEND_H

#include "calib/calib.h"

/* One ok attempt the correction factor learns from. */
struct calib_sample {
	int64_t observed_bytes;
	int64_t predicted_bytes;
	char *signature_json;      /* owned; NULL when unknown */
};

/* A probe as kept: what export writes and import reads. */
struct calib_probe_row {
	const char *uid, *host;
	double time;
	const json_t *doc;
};
typedef int calib_probe_fn(const struct calib_probe_row *p, void *arg);

struct calib_backend {
	const char *name;          /* "sqlite", "postgresql" */

	/* Opens location (a path for SQLite, the URI as given for PostgreSQL)
	 * into st->impl, creating and migrating the store as needed. */
	int (*open)(struct calib_store *st, const char *location, unsigned flags);
	void (*close)(struct calib_store *st);

	int (*begin)(struct calib_store *st);
	int (*commit)(struct calib_store *st);
	void (*rollback)(struct calib_store *st);

	/* a checked record (calib_record_attempt checks before it calls) */
	int (*record_attempt)(struct calib_store *st, const struct calib_attempt *a);
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

	int (*latest_hardware)(struct calib_store *st, const char *host,
			       struct calib_hardware *out);
	/* the latest attempt with this signature: outcome, id, time; *found */
	int (*latest_attempt)(struct calib_store *st, const char *signature,
			      struct calib_attempt *out, bool *found);
	/* the latest attempt of another signature with this shape; *other_stack
	 * when its stack is not this one */
	int (*latest_same_shape)(struct calib_store *st, const char *shape, const char *stack,
				 const char *not_signature, struct calib_attempt *out, bool *found,
				 bool *other_stack);
	/* the newest ok attempts (at most max) with observed memory on this
	 * hardware kind and stack */
	int (*correction_samples)(struct calib_store *st, const char *kind, const char *stack,
				  size_t max, struct calib_sample *out, size_t *n);
	/* ok attempts with observed memory on this hardware kind and another
	 * stack (counted up to 1000) */
	int (*count_other_stacks)(struct calib_store *st, const char *kind, const char *stack,
				  unsigned *n);
};

extern const struct calib_backend calib_sqlite_backend;
extern const struct calib_backend calib_pg_backend;

struct calib_store {
	const struct calib_backend *be;
	char *location;            /* for messages: the file, or the URI without
				    * its password */
	char *err;                 /* last error message, owned */
	void *impl;                /* the backend's own state */
	bool retry;                /* the backend's: the failed write may pass
				    * when run again from its start */
	bool in_tx;                /* store.c's: inside a transaction of its own
				    * (an import), where parts are not retried */
	struct xl_strv secrets;    /* the location's password as written and
				    * decoded: calib_fail never shows them */
};

/* Sets st->err to "store 'LOCATION': MSG" and returns code.  The password
 * of the location, wherever MSG holds it (a library's message may quote
 * the URI), is shown as "***". */
int calib_fail(struct calib_store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds a password the backend found in the location (as its library reads
 * it) to those never shown, and takes it out of st->location. */
void calib_add_secret(struct calib_store *st, const char *secret);
/* The wait set by calib_set_wait(), in seconds. */
double calib_wait_limit(void);

/* ---- shared by the backends ------------------------------------------------ */

/* The uid of a probe recorded without one: SHA-256 hex of host, time and
 * the document's compact sorted-key JSON.  Caller frees. */
char *calib_probe_uid(const char *host, double t, const char *doc_text);

/* One backend of a probe document, as the probe_backends rows keep it:
 * the first device's kind, the device count, the smallest device memory
 * (-1: none given).  Strings are borrowed from the document. */
struct calib_probe_backend {
	const char *name, *state, *kind;
	int64_t count;
	int64_t memory_bytes;
};
/* The named backends of doc, in order, into *out (caller frees the array).
 * Returns how many. */
size_t calib_probe_backends(const json_t *doc, struct calib_probe_backend **out);

/* The hardware of a probe, offered one alive backend at a time: an
 * accelerator before cpu, then the most total memory.  Start with
 * *best_rank = -1; it is still -1 when nothing was offered. */
void calib_hardware_offer(struct calib_hardware *out, int *best_rank, double *best_total,
			  const char *kind, int64_t count, int64_t memory_bytes);

/* The median of v[0..n) (sorted in place); NAN when n is 0. */
double calib_median(double *v, size_t n);

/* The analytic part of a prediction from parts (no store). */
void calib_predict_analytic(const json_t *parts, struct calib_prediction *out);

#endif
