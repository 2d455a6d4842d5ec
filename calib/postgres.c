/* postgres.c - the PostgreSQL store driver, on libpq (calib/backend.h):
 * connecting, schema migrations, transactions and statements for the
 * queries of calib/query.c, and the operations it writes itself: the
 * leases of ranks on the server's clock, and reads of one round trip where
 * the common query would take one per row (stats, families) or where the
 * planner needs LATERAL to stay on an index.  Each schema version's DDL is
 * a statement of its own, as in calib/sqlite.c, so that a schema change is
 * made in both files the same way.
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
#include "calib/backend.h"

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
	bool whole;                /* the next statement's rows go to its row
				    * function once all have come (the function may
				    * run statements of its own); else one at a time */
	struct calib_stmt *active; /* the statement whose rows the connection
				    * is sending, one at a time */
};

static void hold_rest(struct calib_stmt *cs);

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

static int run_script(struct calib_store *st, const char *what, const char *sql);

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

	while ((rc = pg_connect_once(st, &deadline)) == -1)
		full_backoff(tries++, deadline);
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
	return run_script(st, "cannot set up the connection", "SET extra_float_digits = 3");
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

/* Runs SQL of one or more statements without parameters (DDL, session
 * settings), every result read.  Returns 0 or 73. */
static int run_script(struct calib_store *st, const char *what, const char *sql)
{
	struct pg *g = st->impl;
	PGresult *r;
	int rc = 0;

	if (lost(g))
		return pg_error(st, what, NULL);
	if (!pq.PQsendQuery(g->conn, sql))
		return pg_error(st, what, NULL);
	for (;;) {
		if (await(st, what))
			return XL_EX_CANTCREAT;
		if (!(r = pq.PQgetResult(g->conn)))
			break;
		if (rc == 0 && pq.PQresultStatus(r) != PGRES_COMMAND_OK &&
		    pq.PQresultStatus(r) != PGRES_TUPLES_OK)
			rc = pg_error(st, what, r);
		pq.PQclear(r);
	}
	return rc;
}

/* One statement's parameters, as text; NULL is SQL NULL.  Numbers are
 * written into the struct, which therefore is not copied. */
#define NUM_STR_(x) #x
#define NUM_STR(x) NUM_STR_(x)

#define MAX_PARAMS 24
struct params {
	const char *v[MAX_PARAMS];
	char num[MAX_PARAMS][32];
	int n;
};

static void p_text(struct params *p, const char *s)
{
	p->v[p->n++] = s;
}

static void p_int(struct params *p, int64_t v)
{
	if (v == CALIB_UNSET) {
		p->v[p->n++] = NULL;
		return;
	}
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%" PRId64, v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* Exact: 17 significant digits read back to the same double. */
static void p_real(struct params *p, double v)
{
	if (isnan(v)) {
		p->v[p->n++] = NULL;
		return;
	}
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%.17g", v);
	p->v[p->n] = p->num[p->n];
	p->n++;
}

/* Called with each row of a statement's result (row of r); a non-zero
 * return is what the statement returns (the rest of the rows are read
 * and dropped). */
typedef int row_fn(struct calib_store *st, const PGresult *r, int row, void *arg);

/* run() once; *again when it failed on a connection found lost before any
 * row was handed out, so that running it on a new connection is safe. */
static int run_once(struct calib_store *st, const char *what, const char *sql,
		    const struct params *p, row_fn *fn, void *arg, int64_t *changed, bool whole,
		    bool *again)
{
	struct pg *g = st->impl;
	bool rows = false;
	int rc = 0;
	PGresult *r, *held = NULL;

	*again = false;
	if (g->active)
		hold_rest(g->active);
	if (lost(g)) {
		*again = g->tx_depth == 0;
		return pg_error(st, what, NULL);
	}
	if (!pq.PQsendQueryParams(g->conn, sql, p ? p->n : 0, NULL, p ? p->v : NULL, NULL, NULL, 0)) {
		rc = pg_error(st, what, NULL);
		*again = lost(g) && g->tx_depth == 0;
		return rc;
	}
	/* rows one at a time, so that a long history is never all in memory */
	if (fn && !whole)
		pq.PQsetSingleRowMode(g->conn);
	for (;;) {
		if (await(st, what)) {
			if (held)
				pq.PQclear(held);
			return XL_EX_CANTCREAT;
		}
		if (!(r = pq.PQgetResult(g->conn)))
			break;
		switch (pq.PQresultStatus(r)) {
		case PGRES_SINGLE_TUPLE:
		case PGRES_TUPLES_OK:
			if (whole && fn && !held && pq.PQresultStatus(r) == PGRES_TUPLES_OK) {
				if (changed)
					*changed = strtoll(pq.PQcmdTuples(r), NULL, 10);
				held = r;      /* handed out when the connection is free */
				continue;
			}
			for (int i = 0; fn && rc == 0 && i < pq.PQntuples(r); i++) {
				rows = true;
				rc = fn(st, r, i, arg);
			}
			/* fall through */
		case PGRES_COMMAND_OK:
			if (changed && pq.PQresultStatus(r) != PGRES_SINGLE_TUPLE)
				*changed = strtoll(pq.PQcmdTuples(r), NULL, 10);
			break;
		default:
			if (rc == 0) {
				rc = pg_error(st, what, r);
				*again = !rows && lost(g) && g->tx_depth == 0;
			}
			break;
		}
		pq.PQclear(r);
	}
	for (int i = 0; held && rc == 0 && i < pq.PQntuples(held); i++)
		rc = fn(st, held, i, arg);
	if (held)
		pq.PQclear(held);
	return rc;
}

/* Runs one statement with parameters p (NULL: none).  Each row of its
 * result goes to fn (may be NULL); *changed (may be NULL) is how many rows
 * it inserted, updated or deleted.  Outside a transaction, a statement
 * whose connection was lost runs again on a new one.  Returns 0, what fn
 * returned, or 73 with st->err "WHAT: why". */
static int run(struct calib_store *st, const char *what, const char *sql, const struct params *p,
	       row_fn *fn, void *arg, int64_t *changed)
{
	struct pg *g = st->impl;
	bool again, whole = g->whole;
	int rc;

	g->whole = false;
	g->sqlstate[0] = '\0';
	rc = run_once(st, what, sql, p, fn, arg, changed, whole, &again);
	if (rc && again && pg_connect(st) == 0)
		rc = run_once(st, what, sql, p, fn, arg, changed, whole, &again);
	return rc;
}

/* Runs sql, keeping st->err as it is: for a rollback after a failure. */
static void run_quietly(struct calib_store *st, const char *sql)
{
	char *err = st->err ? xl_strdup(st->err) : NULL;
	bool retry = st->retry;

	run_script(st, "cannot roll back", sql);
	free(st->err);
	st->err = err;
	st->retry = retry;
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
	if ((rc = run(st, "cannot begin a transaction", begin_sql, NULL, NULL, NULL, NULL)))
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
	/* not run again on a new connection: the commit may have happened */
	rc = run(st, "cannot commit", "COMMIT", NULL, NULL, NULL, NULL);
	g->tx_depth = 0;
	return rc;
}

static void tx_rollback(struct calib_store *st)
{
	struct pg *g = st->impl;

	g->tx_depth = 0;
	if (!lost(g) && pq.PQtransactionStatus(g->conn) != PQTRANS_IDLE)
		run_quietly(st, "ROLLBACK");
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
 * device kind (refilled from the stored documents by migrate_v4_fill). */
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
	"CREATE INDEX attempts_job ON attempts(job_id);"
	CALIB_V4_CLASSIFY;

static int migrate_v4_fill(struct calib_store *st);

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

/* The steps from an older store to this build's, oldest first: each runs
 * in the one migration transaction when the store is below its version, its
 * DDL first, then its fill (data the new schema derives from the old, as
 * migrate_v2_backfill is to SQLite), when it has one.  A new schema version
 * is one more step here (and one in sqlite.c). */
static const struct {
	int version;
	const char *sql;
	int (*fill)(struct calib_store *st);
} migrations[] = {
	{ 3, schema_v3, NULL },
	{ 4, schema_v4, migrate_v4_fill },
	{ 5, schema_v5, NULL },
	{ 6, schema_v6, NULL },
};

static const char q_schema_version[] = "SELECT coalesce(max(version), 0) FROM calib_schema";
static const char q_schema_set[] = "INSERT INTO calib_schema (version, applied) VALUES ($1, $2)";
/* READ COMMITTED whatever the server's default: each statement must see
 * what a migration that held the lock before committed */
static const char q_migration_begin[] = "BEGIN ISOLATION LEVEL READ COMMITTED";
/* one migration at a time per database ('xlaunch' as a number) */
static const char q_migration_lock[] = "SELECT pg_advisory_xact_lock(33896163043074920)";

static int version_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	*(int *)arg = atoi(pq.PQgetvalue(r, row, 0));
	return 0;
}

/* *v: the store's schema version, 0 when this database has none. */
static int schema_version(struct calib_store *st, int *v)
{
	struct pg *g = st->impl;
	int rc;

	*v = 0;
	rc = run(st, "cannot read the schema version", q_schema_version, NULL, version_row, v, NULL);
	if (rc && strcmp(g->sqlstate, "42P01") == 0) {   /* undefined_table: a new store */
		*v = 0;
		return 0;
	}
	return rc;
}

static int migrate(struct calib_store *st, unsigned flags)
{
	int v, rc;

	if ((rc = schema_version(st, &v)))
		return rc;
	if (v == CALIB_SCHEMA_VERSION)
		return 0;
	if (v > CALIB_SCHEMA_VERSION)
		return calib_fail(st, XL_EX_CANTCREAT,
				  "schema version %d is newer than this xlaunch knows (%d)",
				  v, CALIB_SCHEMA_VERSION);
	if (v == 0 && (flags & CALIB_OPEN_NOCREATE)) {
		st->absent = true;
		return calib_fail(st, XL_EX_CANTCREAT, "no store in this database");
	}
	if ((rc = tx_begin_as(st, q_migration_begin)))
		return rc;
	/* another process may be migrating: wait for it, then look again */
	if ((rc = run(st, "cannot lock for a schema migration", q_migration_lock, NULL, NULL, NULL,
		      NULL)) ||
	    (rc = run_script(st, "cannot create the schema table", schema_table)) ||
	    (rc = run(st, "cannot read the schema version", q_schema_version, NULL, version_row, &v,
		      NULL)))
		goto out;
	for (size_t i = 0; i < sizeof(migrations) / sizeof(migrations[0]); i++) {
		struct params p = { .n = 0 };
		char what[64];

		if (migrations[i].version <= v)
			continue;
		snprintf(what, sizeof(what), "migration to schema %d", migrations[i].version);
		p_int(&p, migrations[i].version);
		p_real(&p, xl_now());
		if ((rc = run_script(st, what, migrations[i].sql)) ||
		    (migrations[i].fill && (rc = migrations[i].fill(st))) ||
		    (rc = run(st, "cannot set the schema version", q_schema_set, &p, NULL, NULL, NULL)))
			goto out;
		v = migrations[i].version;
	}
	if (v != CALIB_SCHEMA_VERSION) {
		rc = calib_fail(st, XL_EX_SOFTWARE, "no migration to schema %d in this build",
				CALIB_SCHEMA_VERSION);
		goto out;
	}
	rc = tx_commit(st);
out:
	if (rc)
		tx_rollback(st);
	return rc;
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
	if ((rc = pg_connect(st)))
		return rc;
	return migrate(st, flags);
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

/* ---- column helpers ---------------------------------------------------------- */

static const char *col(const PGresult *r, int row, int c)
{
	return pq.PQgetisnull(r, row, c) ? NULL : pq.PQgetvalue(r, row, c);
}

static char *col_dup(const PGresult *r, int row, int c)
{
	const char *v = col(r, row, c);

	return v ? xl_strdup(v) : NULL;
}

/* a boolean is 1 or 0 */
static int64_t col_int(const PGresult *r, int row, int c)
{
	const char *v = col(r, row, c);

	if (v && (v[0] == 't' || v[0] == 'f') && !v[1])
		return v[0] == 't';
	return v ? (int64_t)strtoll(v, NULL, 10) : CALIB_UNSET;
}

static double col_real(const PGresult *r, int row, int c)
{
	const char *v = col(r, row, c);

	return v ? strtod(v, NULL) : NAN;
}

static void col_hash(const PGresult *r, int row, int c, char hash[65])
{
	const char *v = col(r, row, c);

	snprintf(hash, 65, "%s", v ? v : "");
}

/* v4's fill: the probe backends again from every stored document, grouped
 * by kind of device (the documents are read first: one statement at a time
 * on a connection). */
struct probe_docs {
	int64_t *id;
	char **doc;
	size_t n;
};

static int probe_doc_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	struct probe_docs *d = arg;

	d->id = xl_realloc(d->id, (d->n + 1) * sizeof(*d->id));
	d->doc = xl_realloc(d->doc, (d->n + 1) * sizeof(*d->doc));
	d->id[d->n] = col_int(r, row, 0);
	d->doc[d->n] = col_dup(r, row, 1);
	d->n++;
	return 0;
}

static int migrate_v4_fill(struct calib_store *st)
{
	struct probe_docs d = { NULL, NULL, 0 };
	int rc = run(st, "migration to schema 4", "SELECT id, doc FROM probes ORDER BY id", NULL,
		     probe_doc_row, &d, NULL);

	for (size_t i = 0; i < d.n; i++) {
		json_t *doc = rc == 0 && d.doc[i] ? json_loads(d.doc[i], 0, NULL) : NULL;

		if (doc)
			rc = calib_insert_backends(st, d.id[i], doc);
		json_decref(doc);
		free(d.doc[i]);
	}
	free(d.id);
	free(d.doc);
	return rc;
}

/* ---- statements ------------------------------------------------------------ */

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
	if (!cs->sent && (rc = send_stmt(cs, &again)) && again && pg_connect(cs->st) == 0)
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
			if (again && pg_connect(cs->st) == 0) {
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
	return cs->row ? col(cs->row, 0, c) : NULL;
}

static int64_t pg_col_int(struct calib_stmt *cs, int c)
{
	return cs->row ? col_int(cs->row, 0, c) : CALIB_UNSET;
}

static double pg_col_real(struct calib_stmt *cs, int c)
{
	return cs->row ? col_real(cs->row, 0, c) : NAN;
}

static void pg_finalize(struct calib_stmt *cs)
{
	pg_reset(cs);
	for (int i = 0; i < cs->n; i++)
		free((char *)cs->v[i]);
	free(cs->sql);
	free(cs);
}

/* ---- the operations of its own --------------------------------------------------- */

static int id_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	*(int64_t *)arg = col_int(r, row, 0);
	return 0;
}

struct stats_rows {
	calib_stats_fn *fn;
	void *arg;
};

/* The observed/predicted ratios of a stats row: a float8[] as text,
 * "{1.1,1.25}" (NULL: none), into the median. */
static double median_of_array(const char *text)
{
	double *v = NULL, med;
	size_t n = 0, cap = 0;
	const char *s = text;

	if (!s || *s++ != '{')
		return NAN;
	while (*s && *s != '}') {
		char *end;
		double d = strtod(s, &end);

		if (end == s)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xl_realloc(v, cap * sizeof(*v));
		}
		v[n++] = d;
		s = *end == ',' ? end + 1 : end;
	}
	med = calib_median(v, n);
	free(v);
	return med;
}

static int stats_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	struct stats_rows *sr = arg;
	struct calib_sig_stats ss;

	memset(&ss, 0, sizeof(ss));
	col_hash(r, row, 0, ss.signature);
	ss.attempts = col_int(r, row, 1);
	ss.ok = col_int(r, row, 2);
	ss.oom = col_int(r, row, 3);
	ss.last_seen = col_real(r, row, 4);
	ss.profile = col(r, row, 5);
	ss.candidate = col(r, row, 6);
	ss.kind = col(r, row, 7);
	ss.ratio_median = median_of_array(col(r, row, 8));
	return sr->fn(&ss, sr->arg);
}

/* like for like: the successful attempts whose prediction is of the kind
 * observed (never unclassified) */
#define LIKE_FOR_LIKE \
	" AND b.outcome IN ('ok', 'compile-storm') AND b.observed_bytes > 0" \
	" AND b.predicted_bytes > 0 AND b.observed_kind = b.predicted_kind" \
	" AND b.observed_kind <> 'unclassified'"

static int pg_stats(struct calib_store *st, const char *profile, long long limit,
		    calib_stats_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct params p = { .n = 0 };
	struct stats_rows sr = { fn, arg };
	int rc;

	/* a job's ranks are one launch: ok when every rank is, oom when any is */
	xl_buf_adds(&q, "WITH j AS (SELECT signature, max(time) AS time,"
			" bool_and(outcome = 'ok') AS ok, bool_or(outcome = 'oom') AS oom"
			" FROM attempts GROUP BY signature, coalesce(job_id, id))"
			" SELECT a.signature, count(*), count(*) FILTER (WHERE a.ok),"
			" count(*) FILTER (WHERE a.oom), max(a.time),"
			" (SELECT b.profile FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1),"
			" (SELECT b.candidate FROM attempts b WHERE b.signature = a.signature"
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1),"
			" k.kind, (SELECT array_agg(b.observed_bytes::float8 / b.predicted_bytes::float8)"
			" FROM attempts b WHERE b.signature = a.signature" LIKE_FOR_LIKE
			" AND b.observed_kind = k.kind)"
			" FROM j a LEFT JOIN LATERAL (SELECT b.observed_kind AS kind FROM attempts b"
			" WHERE b.signature = a.signature" LIKE_FOR_LIKE
			" ORDER BY b.time DESC, b.seq DESC LIMIT 1) k ON true");
	if (profile) {
		p_text(&p, profile);
		xl_buf_adds(&q, " WHERE a.signature IN (SELECT signature FROM attempts WHERE profile = $1)");
	}
	xl_buf_adds(&q, " GROUP BY a.signature, k.kind ORDER BY max(a.time) DESC, a.signature");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	rc = run(st, "cannot read attempts", xl_buf_str(&q), &p, stats_row, &sr, NULL);
	xl_buf_release(&q);
	return rc;
}

/* The queries below go from the signatures to each one's newest
 * attempts (LATERAL, on attempts(signature, time, seq)): their cost is
 * bounded by the signatures that match, never by all the attempts, which a
 * plan walking attempts newest first until one matches would read through
 * when none does (the planner's guess for LIMIT; SQLite's CROSS JOIN). */
static int pg_latest_same_shape(struct calib_store *st, const char *shape, const char *stack,
				const char *not_signature, struct calib_attempt *out, bool *found,
				bool *other_stack)
{
	struct calib_stmt *s;

	*found = *other_stack = false;
	s = calib_prepare_attempt(st, ", s.stack_hash IS DISTINCT FROM CAST($2 AS TEXT)",
				  " FROM signatures s CROSS JOIN LATERAL (SELECT * FROM attempts b"
				  " WHERE b.signature = s.hash ORDER BY b.time DESC, b.seq DESC LIMIT 1) a"
				  " WHERE s.shape_hash = $1 AND s.hash <> $3"
				  " ORDER BY a.time DESC, a.seq DESC LIMIT 1");
	if (!s)
		return XL_EX_CANTCREAT;
	pg_bind_text(s, 1, shape);
	pg_bind_text(s, 2, stack);
	pg_bind_text(s, 3, not_signature);
	return calib_one_attempt(st, s, out, found, other_stack);
}

/* bounded whatever the store holds: at most CALIB_FAMILY_SIGS signatures of
 * the family (index on family and stack), of each the newest
 * CALIB_FAMILY_PER_SIG attempts that say anything of memory (index on
 * signature and time), with their observed figures */
static const char q_family_points[] =
	"SELECT r.id, r.time, r.outcome, f.kind, f.bytes, s.hash, s.coords, s.json"
	" FROM (SELECT hash, coords, json, first_seen FROM signatures"
	" WHERE family_hash = $1 AND stack_hash = $2 ORDER BY first_seen DESC, hash"
	" LIMIT " NUM_STR(CALIB_FAMILY_SIGS) ") s"
	" CROSS JOIN LATERAL (SELECT b.id, b.time, b.outcome, b.seq FROM attempts b"
	" WHERE b.signature = s.hash AND b.outcome IN ('ok', 'compile-storm', 'oom')"
	" ORDER BY b.time DESC, b.seq DESC LIMIT " NUM_STR(CALIB_FAMILY_PER_SIG) ") r"
	" LEFT JOIN figures f ON f.attempt = r.id AND f.role = 'observed'"
	" ORDER BY s.first_seen DESC, s.hash, r.time DESC, r.seq DESC, f.kind";

struct point_rows {
	calib_point_fn *fn;
	void *arg;
};

static int point_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	struct point_rows *pr = arg;
	struct calib_point p;
	enum xl_outcome o = XL_OUT_ERROR;
	const char *kind = col(r, row, 3);

	/* an attempt without figures comes once, with no kind */
	if (!kind)
		p.kind = CALIB_KIND_COUNT;
	else if (!calib_kind_parse(kind, &p.kind))
		return 0;
	xl_outcome_parse(col(r, row, 2), &o);
	p.attempt = col(r, row, 0);
	p.time = col_real(r, row, 1);
	p.outcome = o;
	p.bytes = kind ? col_int(r, row, 4) : 0;
	p.signature = col(r, row, 5);
	p.coords = col(r, row, 6);
	p.parts = col(r, row, 7);
	return pr->fn(&p, pr->arg);
}

static int pg_family_points(struct calib_store *st, const char *family, const char *stack,
			    calib_point_fn *fn, void *arg)
{
	struct point_rows pr = { fn, arg };
	struct params p = { .n = 0 };

	p_text(&p, family);
	p_text(&p, stack);
	return run(st, "cannot read past launches", q_family_points, &p, point_row, &pr, NULL);
}

static const char q_family_other_stacks[] =
	"SELECT count(*) FROM (SELECT 1 FROM signatures s CROSS JOIN LATERAL (SELECT 1"
	" FROM attempts b WHERE b.signature = s.hash AND b.outcome IN ('ok', 'compile-storm')"
	" AND b.observed_bytes > 0 LIMIT 1000) a"
	" WHERE s.family_hash = $1 AND s.stack_hash IS DISTINCT FROM $2::text LIMIT 1000) x";

static int pg_family_other_stacks(struct calib_store *st, const char *family, const char *stack,
				  unsigned *n)
{
	struct params p = { .n = 0 };
	int64_t count = 0;
	int rc;

	*n = 0;
	p_text(&p, family);
	p_text(&p, stack);
	rc = run(st, "cannot read past launches", q_family_other_stacks, &p, id_row, &count, NULL);
	if (rc == 0)
		*n = (unsigned)count;
	return rc;
}

/* ---- ranks watching each other ------------------------------------------------------------ */

/* The server's clock: hosts of one job may disagree on the time. */
#define SERVER_NOW "extract(epoch FROM clock_timestamp())::double precision"

static const char q_rank_begin[] =
	"INSERT INTO job_ranks (job_id, rank, world, host, pid, run_id, started, renewed, expires)"
	" SELECT $1, $2, $3, $4, $5, $6, t, t, t + $7 FROM (SELECT " SERVER_NOW " AS t) n"
	" ON CONFLICT (job_id, rank) DO UPDATE SET world = excluded.world, host = excluded.host,"
	" pid = excluded.pid, run_id = excluded.run_id, started = excluded.started,"
	" renewed = excluded.renewed, expires = excluded.expires, ended = NULL, outcome = NULL,"
	" exit_status = NULL, peer_rank = NULL, peer_outcome = NULL"
	" RETURNING started";

static int real_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	*(double *)arg = col_real(r, row, 0);
	return 0;
}

static int pg_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
			 const char *run_id, double lease_s, double *started)
{
	struct params p = { .n = 0 };

	p_text(&p, job_id);
	p_int(&p, rank);
	p_int(&p, world);
	p_text(&p, xl_hostname());
	p_int(&p, (int64_t)getpid());
	p_text(&p, run_id);
	p_real(&p, lease_s);
	*started = NAN;
	return run(st, "cannot start the rank's lease", q_rank_begin, &p, real_row, started, NULL);
}

/* One round trip: the renewal, then a probe of job_ranks_bad (the first bad
 * end of another rank since $4) and one of job_ranks_live (the first lease
 * of another rank without an end that ran out, since $4, when $5). */
static const char q_rank_poll[] =
	"WITH n AS (SELECT " SERVER_NOW " AS t),"
	" renew AS (UPDATE job_ranks SET renewed = n.t, expires = n.t + $3 FROM n"
	" WHERE job_id = $1 AND rank = $2 AND ended IS NULL)"
	" (SELECT 0, rank, outcome, ended, host, (SELECT t FROM n) FROM job_ranks"
	" WHERE job_id = $1 AND outcome <> 'ok' AND outcome <> 'compile-storm'"
	" AND ended >= $4 AND rank <> $2"
	" ORDER BY ended LIMIT 1)"
	" UNION ALL (SELECT 1, rank, NULL, expires, host, (SELECT t FROM n) FROM job_ranks"
	" WHERE job_id = $1 AND ended IS NULL AND expires >= $4 AND expires < (SELECT t FROM n)"
	" AND rank <> $2"
	" AND $5 ORDER BY expires LIMIT 1)"
	" UNION ALL (SELECT 2, NULL, NULL, NULL, NULL, t FROM n)";

static int peer_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	struct calib_peer_end *out = arg;
	int kind = atoi(pq.PQgetvalue(r, row, 0));
	const char *host = col(r, row, 4);

	out->now = col_real(r, row, 5);
	/* an end wins over a lapse */
	if (kind == 2 || (out->found && (!out->lapsed || kind == 1)))
		return 0;
	out->found = true;
	out->lapsed = kind == 1;
	out->rank = col_int(r, row, 1);
	if (!out->lapsed) {
		int o = calib_peer_outcome_parse(col(r, row, 2));

		out->outcome = o >= 0 && o < XL_OUT_COUNT ? (enum xl_outcome)o : XL_OUT_ERROR;
	}
	out->when = col_real(r, row, 3);
	snprintf(out->host, sizeof(out->host), "%s", host ? host : "");
	return 0;
}

static int pg_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
			double since, bool judge_leases, struct calib_peer_end *out)
{
	struct params p = { .n = 0 };

	p_text(&p, job_id);
	p_int(&p, rank);
	p_real(&p, lease_s);
	p_real(&p, since);
	p_text(&p, judge_leases ? "true" : "false");
	return run(st, "cannot read the job's ranks", q_rank_poll, &p, peer_row, out, NULL);
}

static const char q_rank_end[] =
	"UPDATE job_ranks SET ended = " SERVER_NOW ", outcome = $3, exit_status = $4,"
	" peer_rank = $5, peer_outcome = $6 WHERE job_id = $1 AND rank = $2";

static int pg_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		       const char *outcome, int64_t exit_status, int64_t peer_rank,
		       const char *peer_outcome)
{
	struct params p = { .n = 0 };

	p_text(&p, job_id);
	p_int(&p, rank);
	p_text(&p, outcome);
	p_int(&p, exit_status);
	p_int(&p, peer_rank);
	p_text(&p, peer_outcome);
	return run(st, "cannot write the rank's end", q_rank_end, &p, NULL, NULL, NULL);
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

/* ---- report queries ---------------------------------------------------------------------- */

/* The parameter numbers of a report filter ($N; 0: not given). */
struct rfilter {
	int profile, since;
};

/* The filter's values as parameters of p. */
static void report_params(struct params *p, const struct calib_report_filter *f, struct rfilter *r)
{
	r->profile = r->since = 0;
	if (f->profile && *f->profile) {
		p_text(p, f->profile);
		r->profile = p->n;
	}
	if (!isnan(f->since)) {
		p_real(p, f->since);
		r->since = p->n;
	}
}

/* The attempt filter (a profile of "" is attempts without one). */
static void report_where(struct xl_buf *q, const struct calib_report_filter *f,
			 const struct rfilter *r)
{
	if (f->profile && *f->profile)
		xl_buf_addf(q, " AND a.profile = $%d", r->profile);
	else if (f->profile)
		xl_buf_adds(q, " AND a.profile IS NULL");
	if (r->since)
		xl_buf_addf(q, " AND a.time >= $%d", r->since);
}

struct report_rows {
	void *fn, *arg;
};

static int report_run(struct calib_store *st, struct xl_buf *q, const struct params *p,
		      row_fn *row, void *fn, void *arg)
{
	struct report_rows rr = { fn, arg };
	int rc;

	/* aggregates, few rows: the report may ask more of the store per row */
	((struct pg *)st->impl)->whole = true;
	rc = run(st, "cannot read the store for the report", xl_buf_str(q), p, row, &rr, NULL);

	xl_buf_release(q);
	return rc;
}

static int family_row(struct calib_store *st, const PGresult *r, int row, void *arg)
{
	struct report_rows *rr = arg;
	struct calib_report_family fa = {
		col(r, row, 0), col(r, row, 1), col_int(r, row, 2), col_int(r, row, 3),
		col_real(r, row, 4), col(r, row, 5), col(r, row, 6),
	};

	return ((calib_report_family_fn *)rr->fn)(&fa, rr->arg);
}

static int pg_report_families(struct calib_store *st, const struct calib_report_filter *f,
			      long long limit, calib_report_family_fn *fn, void *arg)
{
	struct xl_buf q = XL_BUF_INIT;
	struct params p = { .n = 0 };
	struct rfilter r;

	report_params(&p, f, &r);
	/* one statement (a connection runs one at a time): the families, and
	 * of each the profile and parts of its latest attempt */
	xl_buf_adds(&q, "SELECT g.family_hash, g.stack_hash, g.n, g.nsig, g.last, l.profile, l.json"
			" FROM (SELECT s.family_hash, s.stack_hash, count(*) AS n,"
			" count(DISTINCT s.hash) AS nsig, max(a.time) AS last FROM attempts a"
			" JOIN signatures s ON s.hash = a.signature WHERE s.family_hash IS NOT NULL");
	report_where(&q, f, &r);
	xl_buf_adds(&q, " GROUP BY s.family_hash, s.stack_hash ORDER BY max(a.time) DESC,"
			" s.family_hash");
	if (limit > 0)
		xl_buf_addf(&q, " LIMIT %lld", limit);
	xl_buf_adds(&q, ") g LEFT JOIN LATERAL (SELECT a.profile, s.json FROM signatures s"
			" JOIN attempts a ON a.signature = s.hash WHERE s.family_hash = g.family_hash"
			" AND s.stack_hash IS NOT DISTINCT FROM g.stack_hash");
	report_where(&q, f, &r);
	xl_buf_adds(&q, " ORDER BY a.time DESC, a.seq DESC LIMIT 1) l ON true"
			" ORDER BY g.last DESC, g.family_hash");
	return report_run(st, &q, &p, family_row, (void *)fn, arg);
}


static const struct calib_ops pg_own = {
	.stats = pg_stats,
	.latest_same_shape = pg_latest_same_shape,
	.family_points = pg_family_points,
	.family_other_stacks = pg_family_other_stacks,
	.rank_begin = pg_rank_begin,
	.rank_poll = pg_rank_poll,
	.rank_end = pg_rank_end,
	.report_families = pg_report_families,
};

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
	.own = &pg_own,
};
