/*
 * driver.h - private to the calib module (not a public header): the
 * contract between the store and a driver, the one header calib/sqlite.c
 * and calib/postgres.c include.
 *
 * A driver speaks to one kind of server and knows nothing of the store's
 * operations: it opens a connection, runs transactions, prepares, binds,
 * steps and reads statements, and keeps the store's schema in its own
 * dialect (its DDL per version, its version read and written, its lock for
 * a migration), as SQLite's sqlite3_vfs is a dozen calls under a whole
 * database.  calib_open() picks the driver by the location's scheme
 * (calib/store.c): a path or "sqlite:" is calib_sqlite_driver (calib/sqlite.c,
 * the only file that speaks to SQLite); "postgresql://" and "postgres://"
 * are calib_pg_driver (calib/postgres.c, the only file that speaks to
 * libpq).  The operations, the one migration loop and what a migration
 * fills are written once above the driver (calib/store.h).
 *
 * Every call that can fail returns 0 or an exit status with st->err set
 * (calib_fail).  A driver whose failure may pass when the whole
 * transaction runs again (a serialization failure, a deadlock, a lost
 * connection made again) sets st->retry.
 */
#ifndef XLAUNCH_CALIB_DRIVER_H
#define XLAUNCH_CALIB_DRIVER_H

#include "calib/calib.h"

struct calib_ops;
struct calib_family_cache;

/* The handle of an open store. */
struct calib_store {
	const struct calib_driver *drv;
	struct calib_ops *ops;     /* store.c's: the operations for drv (owned) */
	char *location;            /* for messages: the file, or the URI without
				    * its password */
	char *err;                 /* last error message, owned */
	void *impl;                /* the driver's own state */
	bool retry;                /* the driver's: the failed write may pass
				    * when run again from its start */
	bool absent;               /* the driver's: open with CALIB_OPEN_NOCREATE
				    * found no store at all */
	bool stand_in;             /* store.c's: no store exists at location, and
				    * an empty one in memory answers (a query) */
	bool in_tx;                /* store.c's: inside a transaction of its own
				    * (an import), where parts are not retried */
	struct xl_strv secrets;    /* the location's password as written and
				    * decoded: calib_fail never shows them */
	/* the last family read (estimate.c): the candidates of one profile are
	 * mostly one family; a record through this handle drops it */
	struct calib_family_cache *fcache;
};

/* A statement of a driver: prepared SQL, its parameters, its current row. */
struct calib_stmt;

/* What step returns besides an exit status. */
enum { CALIB_DONE = 0, CALIB_ROW = -1 };

/* One step of the schema: the DDL that takes a store of the version below
 * (of none, for a driver's first step) to this version, statements
 * separated by ';' (none inside a literal).  What the new version derives
 * from the data already there is the store's (calib_migrate). */
struct calib_step {
	int version;
	const char *ddl;
};

/* The SQL given to prepare is the one dialect both servers take, with
 * parameters $1, $2, ... (a text parameter compared with NULL is written
 * CAST($N AS TEXT)) and four words of the driver's own, replaced before it
 * is prepared (calib_sql): @seq, the column of attempts that orders them as
 * recorded; @pos, the column that orders the rows of a table as written;
 * @fig, the figures of attempt a as JSON text ([[role, kind, bytes, basis,
 * error_bytes, source], ...], NULL or [] when none); @bin, what makes a
 * text column that is not a key sort byte by byte.  Of SQLite it takes 3.39
 * or later (IS [NOT] DISTINCT FROM, upsert, RETURNING) with the JSON and
 * math functions (json_group_array, ln, trunc). */
struct calib_driver {
	const char *name;          /* "sqlite", "postgresql" */

	/* Opens location (a path for SQLite, the URI as given for PostgreSQL;
	 * NULL: an empty SQLite store in memory) into st->impl.  The store
	 * migrates it after (calib_migrate). */
	int (*open)(struct calib_store *st, const char *location, unsigned flags);
	void (*close)(struct calib_store *st);

	/* begin (snapshot: a read-only transaction that sees one snapshot),
	 * commit and rollback; nested calls join the outermost transaction */
	int (*begin)(struct calib_store *st, bool snapshot);
	int (*commit)(struct calib_store *st);
	void (*rollback)(struct calib_store *st);
	/* gives the connection back (NULL: nothing to give) */
	void (*idle)(struct calib_store *st);

	/* A statement of sql; what says what fails ("cannot read attempts"),
	 * in st->err as "WHAT: why".  NULL with st->err set. */
	struct calib_stmt *(*prepare)(struct calib_store *st, const char *sql, const char *what);
	/* parameter $i (from 1): NULL text, CALIB_UNSET and NAN are NULL; a
	 * parameter bound and not used by the SQL is harmless */
	void (*bind_text)(struct calib_stmt *s, int i, const char *v);
	void (*bind_int)(struct calib_stmt *s, int i, int64_t v);
	void (*bind_real)(struct calib_stmt *s, int i, double v);
	/* the next row: CALIB_ROW, CALIB_DONE, or an exit status (st->err and
	 * st->retry set); a statement that runs again from the start after
	 * reset keeps its parameters */
	int (*step)(struct calib_stmt *s);
	void (*reset)(struct calib_stmt *s);
	/* the rows the statement inserted, updated or deleted */
	int64_t (*changes)(struct calib_stmt *s);
	/* column c (from 0) of the current row: text NULL, int CALIB_UNSET and
	 * real NAN for NULL; a boolean is 0 or 1; text lives until the next
	 * step */
	const char *(*col_text)(struct calib_stmt *s, int c);
	int64_t (*col_int)(struct calib_stmt *s, int c);
	double (*col_real)(struct calib_stmt *s, int c);
	void (*finalize)(struct calib_stmt *s);

	const char *seq, *pos, *figures, *bin;   /* @seq, @pos, @fig and @bin */

	/* the schema: its steps, oldest first (a new store starts at the
	 * first); the store's version (0: none yet) read and written inside
	 * the migration's transaction; lock begins that transaction and holds
	 * the driver's lock for it, so that one process migrates at a time
	 * (commit or rollback ends it) */
	const struct calib_step *steps;
	size_t nsteps;
	int (*version)(struct calib_store *st, int *v);
	int (*set_version)(struct calib_store *st, int v);
	int (*lock)(struct calib_store *st);
	/* a place without the schema is no store (CALIB_OPEN_NOCREATE says so,
	 * st->absent): a database, not a file the driver creates */
	bool absent_without_schema;
};

extern const struct calib_driver calib_sqlite_driver;
extern const struct calib_driver calib_pg_driver;

/* Sets st->err to "store 'LOCATION': MSG" and returns code.  The password
 * of the location, wherever MSG holds it (a library's message may quote
 * the URI), is shown as "***". */
int calib_fail(struct calib_store *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds a password the driver found in the location (as its library reads
 * it) to those never shown, and takes it out of st->location. */
void calib_add_secret(struct calib_store *st, const char *secret);
/* The wait set by calib_set_wait(), in seconds. */
double calib_wait_limit(void);

#endif
