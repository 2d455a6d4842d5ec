/*
 * backend.h - private to the calib module (not a public header): the store
 * handle and the helpers its files share.
 */
#ifndef XLAUNCH_CALIB_BACKEND_H
#define XLAUNCH_CALIB_BACKEND_H

#include "calib/calib.h"

#include <sqlite3.h>

struct calib_store {
	sqlite3 *db;
	char *path;
	char *err;    /* last error message, owned */
	int tx_depth; /* calib_begin nesting: only the outermost one talks to SQLite */
};

/* Sets st->err to "store 'PATH': MSG" and returns code. */
int calib_fail(struct calib_store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* As calib_fail with the SQLite error message appended after "what: ". */
int calib_sqlfail(struct calib_store *st, const char *what);

/* BEGIN IMMEDIATE and COMMIT, retried while another connection holds the
 * write lock.  Return an SQLite code. */
int calib_begin(struct calib_store *st);
int calib_commit(struct calib_store *st);
void calib_rollback(struct calib_store *st);
/* Records a probe document with a given uid (NULL: derived from host, time
 * and the document), as calib_record_probe does. */
int calib_store_probe(struct calib_store *st, const json_t *doc, const char *host, double t,
		      const char *uid);
/* "2026-11-22T10:00:00Z", with milliseconds when there are any; buf >= 40. */
const char *calib_fmt_time(double t, char *buf, size_t n);

/* Prepares sql, retrying while busy; NULL on failure (st->err set). */
sqlite3_stmt *calib_prepare(struct calib_store *st, const char *sql);
/* sqlite3_step retried while busy. */
int calib_step(sqlite3_stmt *stmt);

/* Epoch seconds from an ISO 8601 UTC time ("2026-11-22T10:00:00Z", the
 * date alone, fractional seconds) or false. */
bool calib_parse_time(const char *s, double *out);

/* Outcome names. */
bool calib_valid_outcome(const char *s);

/* Full hash of the one signature starting with prefix: 0, 66 none, 64
 * ambiguous (message in st->err). */
int calib_resolve_prefix(struct calib_store *st, const char *prefix, char hash[65]);

/* The analytic part of a prediction from parts (no store). */
void calib_predict_analytic(const json_t *parts, struct calib_prediction *out);

#endif
