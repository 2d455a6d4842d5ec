/* postgres.c - the PostgreSQL store driver, on libpq (calib/driver.h):
 * connecting, transactions, statements, and the schema's steps, its
 * version (the table calib_schema) and the lock a migration holds (an
 * advisory lock of the transaction).  Each schema version's DDL is a step
 * of its own, as in calib/sqlite.c, so that a schema change is made in both
 * files the same way.  It writes no operation of its own: where PostgreSQL
 * takes SQL of its own (the server's clock, one round trip, LATERAL), that
 * SQL is the store's (calib_pg_queries, calib/query.c).
 *
 * libpq: loaded with dlopen() the first time a postgresql:// store is
 * opened (or linked, when built with LIBPQ=link), so that no other command,
 * `exec` above all, loads it and the libraries it brings (TLS, Kerberos,
 * LDAP).  The location is handed to libpq as given: its URI syntax, its
 * environment (PGPASSFILE, PGSERVICEFILE, PGSSLMODE, ...), service files
 * and .pgpass apply as they do for psql.
 *
 * Waiting: connecting and each answer of the server wait at most the store's
 * wait (calib_set_wait, XLAUNCH_STORE_WAIT), or the connection's own
 * connect_timeout when that is shorter; a server that does not answer in
 * time is given up and its connection closed (the next operation connects
 * again).  Transactions are READ COMMITTED, and every write is an
 * insert-if-absent, so concurrent writers do not conflict; a serialization
 * failure or a deadlock (a server whose default isolation is SERIALIZABLE,
 * two imports at once) sets st->retry, and store.c runs the write again.  A
 * statement outside a transaction whose connection turns out to be lost (a
 * server restarted since the last one) runs again, once, on a new
 * connection; inside a transaction the whole write is retried.
 */
#include "calib/driver.h"

#include <libpq-fe.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- libpq, loaded when first needed ---------------------------------------- */

#define PQ_FUNCS(X) \
	X(PQconnectStartParams) X(PQconnectPoll) X(PQstatus) X(PQerrorMessage) X(PQsocket) \
	X(PQfinish) X(PQconninfo) X(PQconninfoFree) X(PQsetNoticeProcessor) X(PQsendQuery) \
	X(PQsendQueryParams) X(PQsetSingleRowMode) X(PQconsumeInput) X(PQisBusy) \
	X(PQgetResult) X(PQresultStatus) X(PQresultErrorField) X(PQclear) X(PQntuples) \
	X(PQgetvalue) X(PQgetisnull) X(PQcmdTuples) X(PQtransactionStatus) X(PQconninfoParse) \
	X(PQfreemem)

static struct {
#define X(f) __typeof__(f) *f;
	PQ_FUNCS(X)
#undef X
} pq;

/* The soname of libpq's C API (stable since PostgreSQL 8.0). */
#define LIBPQ_SONAME "libpq.so.5"

/* Fills pq once.  Returns 0, or -1 with why[] saying what failed. */
static int pq_load(char *why, size_t len)
{
	static int state;          /* 0: not tried, 1: loaded, -1: failed */
	static char reason[256];

	if (state == 0) {
#ifdef XL_LIBPQ_LINKED
#define X(f) pq.f = f;
		PQ_FUNCS(X)
#undef X
		state = 1;
#else
		void *h = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
		const char *missing = NULL;

		if (!h) {
			snprintf(reason, sizeof(reason), "%s", dlerror());
			state = -1;
		} else {
#define X(f) if (!missing && !(*(void **)&pq.f = dlsym(h, #f))) missing = #f;
			PQ_FUNCS(X)
#undef X
			if (missing) {
				snprintf(reason, sizeof(reason), "%s has no %s", LIBPQ_SONAME, missing);
				dlclose(h);
				state = -1;
			} else {
				state = 1;
			}
		}
#endif
	}
	if (state < 0)
		snprintf(why, len, "%s", reason);
	return state > 0 ? 0 : -1;
}

/* ---- connection --------------------------------------------------------------- */

struct pg {
	PGconn *conn;              /* NULL when not connected */
	char *uri;                 /* as given, password included: for libpq only */
	int tx_depth;              /* begin nesting: only the outermost one talks */
	bool ended;                /* the server ended the connection (it may not
				    * know it yet) */
	char sqlstate[6];          /* of the last failed statement, "" when none */
	bool connecting;           /* inside pg_connect: a statement found lost
				    * is not run again on a new connection */
	struct calib_stmt *active; /* the statement whose rows the connection
				    * is sending, one at a time */
};

static bool lost(const struct pg *g)
{
	return !g->conn || g->ended || pq.PQstatus(g->conn) == CONNECTION_BAD;
}

/* SQLSTATEs after which the connection is of no more use: connection
 * exceptions (class 08) and the server ending it (57P01 admin_shutdown,
 * 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05 idle session
 * timeout). */
static bool ends_connection(const char *state)
{
	return state && (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
			 strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0 ||
			 strcmp(state, "57P05") == 0);
}

/* A server gets at least this long to answer, whatever the wait. */
#define MIN_ANSWER_S 1.0

static double answer_limit(void)
{
	return calib_wait_limit() > MIN_ANSWER_S ? calib_wait_limit() : MIN_ANSWER_S;
}

static void drop(struct pg *g)
{
	if (g->conn)
		pq.PQfinish(g->conn);
	g->conn = NULL;
	g->tx_depth = 0;
	g->ended = false;
	g->active = NULL;
}

/* A message of libpq or the server on one line: lines joined by "; ", no
 * trailing newline.  Caller frees. */
static char *one_line(const char *msg)
{
	struct xl_buf b = XL_BUF_INIT;
	size_t len = msg ? strlen(msg) : 0;

	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ' || msg[len - 1] == '\t'))
		len--;
	for (size_t i = 0; i < len; i++) {
		if (msg[i] == '\n') {
			while (i + 1 < len && (msg[i + 1] == '\t' || msg[i + 1] == ' '))
				i++;
			xl_buf_adds(&b, "; ");
		} else {
			xl_buf_addc(&b, msg[i]);
		}
	}
	return xl_buf_detach(&b);
}

/* Waits until fd is ready for events or deadline (xl_mono() seconds) has
 * passed: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		double left = deadline - xl_mono();
		struct pollfd p = { .fd = fd, .events = events };
		int r;

		if (left <= 0)
			return 0;
		if (fd < 0)             /* no socket yet: libpq has more to do */
			return 1;
		r = poll(&p, 1, left > 3600 ? 3600 * 1000 : (int)(left * 1000) + 1);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Server notices (such as "relation already exists, skipping") are not
 * for the user. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* How long connecting may take: the wait, or the connection's own
 * connect_timeout (URI, PGCONNECT_TIMEOUT or service file) when shorter. */
static double connect_limit(PGconn *conn)
{
	PQconninfoOption *opts = pq.PQconninfo(conn);
	double limit = answer_limit();

	for (PQconninfoOption *o = opts; o && o->keyword; o++) {
		if (strcmp(o->keyword, "connect_timeout") == 0 && o->val && *o->val) {
			long t = strtol(o->val, NULL, 10);

			/* libpq reads 1 as 2; 0 or less means none */
			if (t > 0 && (t < 2 ? 2.0 : (double)t) < limit)
				limit = t < 2 ? 2.0 : (double)t;
		}
	}
	if (opts)
		pq.PQconninfoFree(opts);
	return limit;
}

static int exec_sql(struct calib_store *st, const char *sql, const char *what);

/* Whether the server refused the connection for want of a free slot
 * (SQLSTATE 53300, which libpq gives a connection only as its message:
 * "sorry, too many clients already", "remaining connection slots are
 * reserved ..."; a server with localized messages is not recognized and
 * fails at once, as before), or its Unix socket's queue of connections
 * not yet accepted was full (EAGAIN: "Resource temporarily unavailable"). */
static bool server_full(PGconn *conn)
{
	const char *m = pq.PQerrorMessage(conn);

	return m && (strstr(m, "too many clients") || strstr(m, "remaining connection slots") ||
		     strstr(m, strerror(EAGAIN)));
}

/* Sleeps before connecting again to a full server: a little longer each
 * time, with jitter, so that many waiting clients (a job's ranks starting
 * together) do not come back together. */
static void full_backoff(unsigned tries, double deadline)
{
	double s = (tries < 5 ? 0.05 * (1u << tries) : 1.0) * (0.5 + (double)(rand() % 1000) / 1000.0);
	struct timespec ts;

	if (xl_mono() + s > deadline)
		s = deadline - xl_mono();
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static int pg_connect_once(struct calib_store *st, double *deadline_io);

/* Connects (again) to the server; a server without a free connection slot
 * is asked again until the connect limit.  Returns 0 or 73 ("unreachable:
 * why"). */
static int pg_connect(struct calib_store *st)
{
	double deadline = NAN;
	unsigned tries = 0;
	int rc;

	((struct pg *)st->impl)->connecting = true;
	while ((rc = pg_connect_once(st, &deadline)) == -1)
		full_backoff(tries++, deadline);
	((struct pg *)st->impl)->connecting = false;
	return rc;
}

/* One try; -1 when the server was full and there is time to try again
 * (*deadline_io is set on the first try). */
static int pg_connect_once(struct calib_store *st, double *deadline_io)
{
	struct pg *g = st->impl;
	/* the URI is expanded in place of dbname; client_encoding after it
	 * wins over the URI and PGCLIENTENCODING: the store's text is UTF-8 */
	const char *const keys[] = { "fallback_application_name", "dbname", "client_encoding", NULL };
	const char *const vals[] = { "xlaunch", g->uri, "UTF8", NULL };
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	double limit, deadline;

	drop(g);
	g->conn = pq.PQconnectStartParams(keys, vals, 1);
	if (!g->conn)
		xl_oom();
	limit = connect_limit(g->conn);
	if (isnan(*deadline_io))
		*deadline_io = xl_mono() + limit;
	deadline = *deadline_io;
	while (pq.PQstatus(g->conn) != CONNECTION_BAD && ps != PGRES_POLLING_OK &&
	       ps != PGRES_POLLING_FAILED) {
		if (ps == PGRES_POLLING_READING || ps == PGRES_POLLING_WRITING) {
			int w = wait_fd(pq.PQsocket(g->conn),
					ps == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline);

			if (w == 0) {
				drop(g);
				return calib_fail(st, XL_EX_CANTCREAT,
						  "unreachable: no answer from the server within %.0f s",
						  limit);
			}
		}
		ps = pq.PQconnectPoll(g->conn);
	}
	if (pq.PQstatus(g->conn) != CONNECTION_OK && server_full(g->conn) &&
	    xl_mono() + 0.05 < deadline) {
		drop(g);
		return -1;
	}
	if (pq.PQstatus(g->conn) != CONNECTION_OK) {
		char *msg = one_line(pq.PQerrorMessage(g->conn));
		int rc = calib_fail(st, XL_EX_CANTCREAT, "unreachable: %s", *msg ? msg : "cannot connect");

		free(msg);
		drop(g);
		return rc;
	}
	pq.PQsetNoticeProcessor(g->conn, quiet, NULL);
	/* doubles as text both ways without loss (PostgreSQL 12 and later
	 * print the shortest exact form for any value above 0) */
	return exec_sql(st, "SET extra_float_digits = 3", "cannot set up the connection");
}

/* Waits until a result can be read without blocking.  A server that does
 * not answer within the wait loses its connection.  Returns 0 or 73. */
static int await(struct calib_store *st, const char *what)
{
	struct pg *g = st->impl;
	double limit = answer_limit(), deadline = xl_mono() + limit;

	while (pq.PQisBusy(g->conn)) {
		int w = wait_fd(pq.PQsocket(g->conn), POLLIN, deadline);

		if (w == 0) {
			drop(g);
			return calib_fail(st, XL_EX_CANTCREAT, "%s: no answer from the server within %.0f s",
					  what, limit);
		}
		/* on failure PQgetResult gives the error */
		if (w < 0 || !pq.PQconsumeInput(g->conn))
			break;
	}
	return 0;
}

/* Sets st->err from a failed result (or the connection's message when r is
 * NULL), and st->retry when running the transaction again may pass. */
static int pg_error(struct calib_store *st, const char *what, const PGresult *r)
{
	struct pg *g = st->impl;
	const char *state = r ? pq.PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = r ? pq.PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char *msg = one_line(primary ? primary : g->conn ? pq.PQerrorMessage(g->conn) : "");
	int rc;

	snprintf(g->sqlstate, sizeof(g->sqlstate), "%s", state ? state : "");
	if (ends_connection(state))
		g->ended = true;
	/* serialization_failure, deadlock_detected */
	if (state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0))
		st->retry = true;
	if (lost(g)) {
		if (g->tx_depth > 0)
			st->retry = true;
		rc = calib_fail(st, XL_EX_CANTCREAT, "%s: the connection to the server was lost (%s)",
				what, *msg ? msg : "closed");
	} else {
		rc = calib_fail(st, XL_EX_CANTCREAT, "%s: %s", what, *msg ? msg : "failed");
	}
	free(msg);
	return rc;
}

/* ---- statements ------------------------------------------------------------ */

#define MAX_PARAMS 24

/* A statement: its parameters (typed, so that one a query leaves out does
 * no harm), and its results, read one row at a time while it is the
 * connection's active one; a statement run while another is active first
 * reads the other's rest into that one's held results. */
struct calib_stmt {
	struct calib_store *st;
	char *sql;
	const char *what;
	const char *v[MAX_PARAMS];
	Oid types[MAX_PARAMS];
	int n;
	PGresult *row;             /* the current row */
	PGresult **held;
	size_t nheld, next;
	bool sent, rows, retried;
	int rc;                    /* a failure, given again by every step */
	int64_t changes;
};

#define OID_INT8 20
#define OID_TEXT 25
#define OID_FLOAT8 701

static struct calib_stmt *pg_prepare(struct calib_store *st, const char *sql, const char *what)
{
	struct calib_stmt *cs = xl_calloc(1, sizeof(*cs));

	cs->st = st;
	cs->sql = xl_strdup(sql);
	cs->what = what;
	for (int i = 0; i < MAX_PARAMS; i++)
		cs->types[i] = OID_TEXT;
	return cs;
}

static void set_param(struct calib_stmt *cs, int i, Oid type, char *owned)
{
	if (i < 1 || i > MAX_PARAMS)
		abort();   /* a query of more parameters than MAX_PARAMS */
	free((char *)cs->v[i - 1]);
	cs->v[i - 1] = owned;
	cs->types[i - 1] = type;
	if (cs->n < i)
		cs->n = i;
}

static void pg_bind_text(struct calib_stmt *cs, int i, const char *v)
{
	set_param(cs, i, OID_TEXT, v ? xl_strdup(v) : NULL);
}

static void pg_bind_int(struct calib_stmt *cs, int i, int64_t v)
{
	set_param(cs, i, OID_INT8, v == CALIB_UNSET ? NULL : xl_asprintf("%" PRId64, v));
}

/* Exact: 17 significant digits read back to the same double. */
static void pg_bind_real(struct calib_stmt *cs, int i, double v)
{
	set_param(cs, i, OID_FLOAT8, isnan(v) ? NULL : xl_asprintf("%.17g", v));
}

/* Reads the rest of cs's results off the connection, to be handed out
 * later, so that another statement may run. */
static void hold_rest(struct calib_stmt *cs)
{
	struct pg *g = cs->st->impl;
	PGresult *r;

	while (g->active == cs) {
		if (await(cs->st, cs->what)) {
			cs->rc = XL_EX_CANTCREAT;
			g->active = NULL;
		} else if (!(r = pq.PQgetResult(g->conn))) {
			g->active = NULL;
		} else {
			cs->held = xl_realloc(cs->held, (cs->nheld + 1) * sizeof(*cs->held));
			cs->held[cs->nheld++] = r;
		}
	}
}

/* The next result of cs, NULL when there are no more (*rc set when the
 * server did not answer). */
static PGresult *next_result(struct calib_stmt *cs, int *rc)
{
	struct pg *g = cs->st->impl;
	PGresult *r;

	if (cs->next < cs->nheld)
		return cs->held[cs->next++];
	if (g->active != cs)
		return NULL;
	if (await(cs->st, cs->what)) {
		*rc = XL_EX_CANTCREAT;
		g->active = NULL;
		return NULL;
	}
	if (!(r = pq.PQgetResult(g->conn)))
		g->active = NULL;
	return r;
}

/* Sends cs; *again when the connection was found lost outside a
 * transaction, so that sending it on a new one is safe. */
static int send_stmt(struct calib_stmt *cs, bool *again)
{
	struct calib_store *st = cs->st;
	struct pg *g = st->impl;
	int rc;

	*again = false;
	if (g->active)
		hold_rest(g->active);
	g->sqlstate[0] = '\0';
	if (lost(g)) {
		*again = g->tx_depth == 0;
		return pg_error(st, cs->what, NULL);
	}
	if (!pq.PQsendQueryParams(g->conn, cs->sql, cs->n, cs->types, cs->v, NULL, NULL, 0)) {
		rc = pg_error(st, cs->what, NULL);
		*again = lost(g) && g->tx_depth == 0;
		return rc;
	}
	pq.PQsetSingleRowMode(g->conn);
	g->active = cs;
	cs->sent = true;
	return 0;
}

/* A new connection for cs, found lost outside a transaction before any row
 * was handed out; none while connecting (the session's set-up fails as it
 * is).  Returns 0 or an exit status. */
static int reconnect(struct calib_stmt *cs)
{
	return ((struct pg *)cs->st->impl)->connecting ? XL_EX_CANTCREAT : pg_connect(cs->st);
}

static void pg_reset(struct calib_stmt *cs)
{
	struct pg *g = cs->st->impl;
	PGresult *r;
	int rc = 0;

	while ((r = next_result(cs, &rc)))
		pq.PQclear(r);
	if (g->active == cs)
		g->active = NULL;
	free(cs->held);
	cs->held = NULL;
	cs->nheld = cs->next = 0;
	if (cs->row)
		pq.PQclear(cs->row);
	cs->row = NULL;
	cs->sent = cs->rows = cs->retried = false;
	cs->rc = 0;
	cs->changes = 0;
}

static int pg_step(struct calib_stmt *cs)
{
	struct pg *g = cs->st->impl;
	PGresult *r;
	bool again;
	int rc = 0;

	if (cs->row)
		pq.PQclear(cs->row);
	cs->row = NULL;
	if (cs->rc)
		return cs->rc;
	if (!cs->sent && (rc = send_stmt(cs, &again)) && again && reconnect(cs) == 0)
		rc = send_stmt(cs, &again);
	if (rc)
		return cs->rc = rc;
	while ((r = next_result(cs, &rc))) {
		switch (pq.PQresultStatus(r)) {
		case PGRES_SINGLE_TUPLE:
			cs->row = r;
			cs->rows = true;
			return CALIB_ROW;
		case PGRES_TUPLES_OK:
		case PGRES_COMMAND_OK:
			cs->changes = strtoll(pq.PQcmdTuples(r), NULL, 10);
			pq.PQclear(r);
			break;
		default:
			rc = pg_error(cs->st, cs->what, r);
			pq.PQclear(r);
			/* lost before any row was handed out: once more, on a new one */
			again = !cs->rows && !cs->retried && lost(g) && g->tx_depth == 0;
			pg_reset(cs);
			if (again && reconnect(cs) == 0) {
				cs->retried = true;
				return pg_step(cs);
			}
			return cs->rc = rc;
		}
	}
	return cs->rc = rc;
}

static int64_t pg_changes(struct calib_stmt *cs)
{
	return cs->changes;
}

static const char *pg_col_text(struct calib_stmt *cs, int c)
{
	return cs->row && !pq.PQgetisnull(cs->row, 0, c) ? pq.PQgetvalue(cs->row, 0, c) : NULL;
}

/* a boolean is 1 or 0 */
static int64_t pg_col_int(struct calib_stmt *cs, int c)
{
	const char *v = pg_col_text(cs, c);

	if (v && (v[0] == 't' || v[0] == 'f') && !v[1])
		return v[0] == 't';
	return v ? (int64_t)strtoll(v, NULL, 10) : CALIB_UNSET;
}

static double pg_col_real(struct calib_stmt *cs, int c)
{
	const char *v = pg_col_text(cs, c);

	return v ? strtod(v, NULL) : NAN;
}

static void pg_finalize(struct calib_stmt *cs)
{
	pg_reset(cs);
	for (int i = 0; i < cs->n; i++)
		free((char *)cs->v[i]);
	free(cs->sql);
	free(cs);
}

/* Runs sql (no parameters) to its end through the driver's own statements.
 * Returns 0 or 73. */
static int exec_sql(struct calib_store *st, const char *sql, const char *what)
{
	struct calib_stmt *cs = pg_prepare(st, sql, what);
	int rc;

	while ((rc = pg_step(cs)) == CALIB_ROW)
		;
	pg_finalize(cs);
	return rc;
}

/* ---- transactions ---------------------------------------------------------- */

/* BEGIN (or begin_sql) and COMMIT; nested calls join the outermost
 * transaction.  A BEGIN on a connection found lost runs on a new one. */
static int tx_begin_as(struct calib_store *st, const char *begin_sql)
{
	struct pg *g = st->impl;
	int rc;

	if (g->tx_depth > 0) {
		g->tx_depth++;
		return 0;
	}
	if ((rc = exec_sql(st, begin_sql, "cannot begin a transaction")))
		return rc;
	g->tx_depth = 1;
	return 0;
}

/* a snapshot: one view of the store for every statement, read only */
static int tx_begin(struct calib_store *st, bool snapshot)
{
	return tx_begin_as(st, snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN");
}

static int tx_commit(struct calib_store *st)
{
	struct pg *g = st->impl;
	int rc;

	if (g->tx_depth > 1) {
		g->tx_depth--;
		return 0;
	}
	/* not run again on a new connection (inside the transaction): the
	 * commit may have happened */
	rc = exec_sql(st, "COMMIT", "cannot commit");
	g->tx_depth = 0;
	return rc;
}

/* st->err and st->retry stay those of the failure; the ROLLBACK runs
 * inside the transaction it ends, so never on a new connection */
static void tx_rollback(struct calib_store *st)
{
	struct pg *g = st->impl;

	if (!lost(g) && pq.PQtransactionStatus(g->conn) != PQTRANS_IDLE) {
		char *err = st->err ? xl_strdup(st->err) : NULL;
		bool retry = st->retry;

		g->tx_depth = 1;
		exec_sql(st, "ROLLBACK", "cannot roll back");
		free(st->err);
		st->err = err;
		st->retry = retry;
	}
	g->tx_depth = 0;
}

/* ---- schema ------------------------------------------------------------------ */

/* The schema version of the store in this database (its search_path): one
 * row per version applied, the highest is the store's (what PRAGMA
 * user_version is to SQLite). */
static const char schema_table[] =
	"CREATE TABLE IF NOT EXISTS calib_schema ("
	" version integer PRIMARY KEY,"
	" applied double precision NOT NULL)";

/* v0 -> v3: a new store starts at schema 3, which is SQLite's v3 in one
 * step (no PostgreSQL store ever had versions 1 and 2).  Types keep what
 * SQLite keeps: 64-bit integers, doubles, text compared byte by byte
 * (COLLATE "C", as SQLite's BINARY) for keys and hashes; seq is the order
 * attempts were recorded in (SQLite's rowid), the tie-break of every
 * "newest first".  Indexes: those of SQLite's v3, with seq last. */
static const char schema_v3[] =
	"CREATE TABLE signatures ("
	" hash text COLLATE \"C\" PRIMARY KEY,"
	" shape_hash text COLLATE \"C\","
	" stack_hash text COLLATE \"C\","
	" hardware_kind text,"
	" json text,"
	" first_seen double precision NOT NULL);"
	"CREATE TABLE attempts ("
	" seq bigint GENERATED ALWAYS AS IDENTITY,"
	" id text COLLATE \"C\" PRIMARY KEY,"
	" time double precision NOT NULL,"
	" profile text,"
	" candidate text,"
	" signature text COLLATE \"C\" NOT NULL REFERENCES signatures(hash) ON DELETE CASCADE,"
	" host text,"
	" rank bigint,"
	" outcome text NOT NULL,"
	" exit_status bigint,"
	" predicted_bytes bigint,"
	" observed_bytes bigint,"
	" wall_s double precision,"
	" compile_count bigint,"
	" host_peak_rss_bytes bigint);"
	"CREATE TABLE probes ("
	" id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
	" uid text COLLATE \"C\","
	" host text NOT NULL,"
	" time double precision NOT NULL,"
	" doc text NOT NULL);"
	"CREATE TABLE probe_backends ("
	" probe bigint NOT NULL REFERENCES probes(id) ON DELETE CASCADE,"
	" name text NOT NULL,"
	" state text,"
	" kind text,"
	" count bigint,"
	" memory_bytes bigint);"
	"CREATE INDEX attempts_time ON attempts(time, seq);"
	"CREATE INDEX attempts_signature_time ON attempts(signature, time, seq);"
	"CREATE INDEX attempts_profile_time ON attempts(profile, time, seq);"
	"CREATE INDEX attempts_host_time ON attempts(host, time, seq);"
	"CREATE INDEX attempts_outcome_time ON attempts(outcome, time, seq);"
	"CREATE INDEX signatures_shape ON signatures(shape_hash);"
	"CREATE INDEX signatures_kind_stack ON signatures(hardware_kind, stack_hash);"
	"CREATE INDEX probes_host_time ON probes(host, time, id);"
	"CREATE UNIQUE INDEX probes_uid ON probes(uid);"
	"CREATE INDEX probe_backends_probe ON probe_backends(probe);";

/* v3 -> v4, as SQLite's v4: the kind of every figure and a table of
 * figures (what was recorded before is classified where it can be, and
 * marked unclassified where not); job id, cache hits, time to the first
 * step, details; signature schemes and families; probe backends grouped by
 * device kind (the store classifies and refills after this DDL,
 * calib/migrate.c). */
static const char schema_v4[] =
	"ALTER TABLE attempts ADD COLUMN predicted_kind text;"
	"ALTER TABLE attempts ADD COLUMN predicted_basis text;"
	"ALTER TABLE attempts ADD COLUMN observed_kind text;"
	"ALTER TABLE attempts ADD COLUMN job_id text;"
	"ALTER TABLE attempts ADD COLUMN cache_hits bigint;"
	"ALTER TABLE attempts ADD COLUMN first_step_s double precision;"
	"ALTER TABLE attempts ADD COLUMN details text;"
	"ALTER TABLE signatures ADD COLUMN scheme integer NOT NULL DEFAULT 1;"
	"ALTER TABLE signatures ADD COLUMN family_hash text COLLATE \"C\";"
	"ALTER TABLE signatures ADD COLUMN coords text;"
	"ALTER TABLE probe_backends ADD COLUMN device_type text;"
	"ALTER TABLE probe_backends ADD COLUMN memory_source text;"
	"CREATE TABLE figures ("
	" attempt text COLLATE \"C\" NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
	" role text NOT NULL,"
	" kind text NOT NULL,"
	" bytes bigint NOT NULL,"
	" basis text,"
	" error_bytes bigint,"
	" source text,"
	" PRIMARY KEY (attempt, role, kind));"
	"CREATE INDEX signatures_family ON signatures(family_hash, stack_hash);"
	"CREATE INDEX attempts_job ON attempts(job_id);";

/* v4 -> v5, as SQLite's v5: the candidate each job launch runs, chosen once
 * for all its ranks; a job's ranks merged by job and signature. */
static const char schema_v5[] =
	"CREATE TABLE job_choices ("
	" job_id text COLLATE \"C\" PRIMARY KEY,"
	" candidate text,"
	" signature text COLLATE \"C\","
	" rank bigint,"
	" host text,"
	" time double precision NOT NULL);"
	"CREATE INDEX attempts_job_signature ON attempts(job_id, signature, seq);";

/* v5 -> v6, as SQLite's v6: the ranks of a job launch watching each other,
 * one row per rank (its lease and its end), probed through two partial
 * indexes. */
static const char schema_v6[] =
	"CREATE TABLE job_ranks ("
	" job_id text COLLATE \"C\" NOT NULL,"
	" rank bigint NOT NULL,"
	" world bigint,"
	" host text,"
	" pid bigint,"
	" run_id text,"
	" started double precision NOT NULL,"
	" renewed double precision NOT NULL,"
	" expires double precision NOT NULL,"
	" ended double precision,"
	" outcome text,"
	" exit_status bigint,"
	" peer_rank bigint,"
	" peer_outcome text,"
	" PRIMARY KEY (job_id, rank));"
	"CREATE INDEX job_ranks_bad ON job_ranks(job_id, ended) WHERE outcome <> 'ok';"
	"CREATE INDEX job_ranks_live ON job_ranks(job_id, expires) WHERE ended IS NULL;";

/* The steps from an older store to this build's, oldest first: a new
 * store starts at schema 3. */
static const struct calib_step steps[] = {
	{ 3, schema_v3 }, { 4, schema_v4 }, { 5, schema_v5 }, { 6, schema_v6 },
};

static const char q_schema_version[] = "SELECT coalesce(max(version), 0) FROM calib_schema";
static const char q_schema_set[] = "INSERT INTO calib_schema (version, applied) VALUES ($1, $2)";
/* READ COMMITTED whatever the server's default: each statement must see
 * what a migration that held the lock before committed */
static const char q_migration_begin[] = "BEGIN ISOLATION LEVEL READ COMMITTED";
/* one migration at a time per database ('xlaunch' as a number) */
static const char q_migration_lock[] = "SELECT pg_advisory_xact_lock(33896163043074920)";

/* *v: the store's schema version, 0 when this database has none. */
static int pg_version(struct calib_store *st, int *v)
{
	struct pg *g = st->impl;
	struct calib_stmt *cs = pg_prepare(st, q_schema_version, "cannot read the schema version");
	int rc;

	*v = 0;
	if ((rc = pg_step(cs)) == CALIB_ROW) {
		*v = (int)pg_col_int(cs, 0);
		rc = pg_step(cs);
	}
	pg_finalize(cs);
	if (rc && strcmp(g->sqlstate, "42P01") == 0) {   /* undefined_table: a new store */
		free(st->err);
		st->err = NULL;
		return 0;
	}
	return rc;
}

static int pg_set_version(struct calib_store *st, int v)
{
	struct calib_stmt *cs = pg_prepare(st, q_schema_set, "cannot set the schema version");
	int rc;

	pg_bind_int(cs, 1, v);
	pg_bind_real(cs, 2, xl_now());
	rc = pg_step(cs);
	pg_finalize(cs);
	return rc;
}

/* another process may be migrating: its lock is waited for, and the
 * schema table made when none is there */
static int pg_lock(struct calib_store *st)
{
	int rc;

	if ((rc = tx_begin_as(st, q_migration_begin)) ||
	    (rc = exec_sql(st, q_migration_lock, "cannot lock for a schema migration")))
		return rc;
	return exec_sql(st, schema_table, "cannot create the schema table");
}

/* A location libpq cannot read (an unknown parameter, a bad escape) is
 * said to be so, not unreachable. */
static int check_location(struct calib_store *st, const char *uri)
{
	char *err = NULL, *msg;
	PQconninfoOption *opts = pq.PQconninfoParse(uri, &err);
	int rc;

	if (opts) {
		/* the password as libpq reads it, whatever the URI's shape */
		for (PQconninfoOption *o = opts; o->keyword; o++)
			if (strcmp(o->keyword, "password") == 0)
				calib_add_secret(st, o->val);
		pq.PQconninfoFree(opts);
		return 0;
	}
	if (!err)
		xl_oom();
	msg = one_line(err);
	pq.PQfreemem(err);
	rc = calib_fail(st, XL_EX_CANTCREAT, "invalid location: %s", msg);
	free(msg);
	return rc;
}

static int pg_open(struct calib_store *st, const char *uri, unsigned flags)
{
	struct pg *g = xl_calloc(1, sizeof(*g));
	char why[300];
	int rc;

	st->impl = g;
	if (pq_load(why, sizeof(why)))
		return calib_fail(st, XL_EX_CANTCREAT, "PostgreSQL stores need libpq (%s)", why);
	if ((rc = check_location(st, uri)))
		return rc;
	g->uri = xl_strdup(uri);
	return pg_connect(st);
}

static void pg_close(struct calib_store *st)
{
	struct pg *g = st->impl;

	if (!g)
		return;
	drop(g);
	if (g->uri) {
		/* the password goes no further than libpq */
		memset(g->uri, 0, strlen(g->uri));
		free(g->uri);
	}
	free(g);
	st->impl = NULL;
}

/* The connection goes back to the server while the handle waits unused;
 * the next statement connects again (run: a lost connection outside a
 * transaction). */
static void pg_idle(struct calib_store *st)
{
	struct pg *g = st->impl;

	if (g && g->tx_depth == 0)
		drop(g);
}

const struct calib_driver calib_pg_driver = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.begin = tx_begin,
	.commit = tx_commit,
	.rollback = tx_rollback,
	.idle = pg_idle,
	.prepare = pg_prepare,
	.bind_text = pg_bind_text,
	.bind_int = pg_bind_int,
	.bind_real = pg_bind_real,
	.step = pg_step,
	.reset = pg_reset,
	.changes = pg_changes,
	.col_text = pg_col_text,
	.col_int = pg_col_int,
	.col_real = pg_col_real,
	.finalize = pg_finalize,
	.seq = "seq",
	.pos = "ctid",
	.figures = "(SELECT json_agg(json_build_array(f.role, f.kind, f.bytes, f.basis, f.error_bytes,"
		   " f.source) ORDER BY f.role, f.kind) FROM figures f WHERE f.attempt = a.id)",
	.bin = " COLLATE \"C\"",
	.steps = steps,
	.nsteps = sizeof(steps) / sizeof(steps[0]),
	.version = pg_version,
	.set_version = pg_set_version,
	.lock = pg_lock,
	.absent_without_schema = true,
};
