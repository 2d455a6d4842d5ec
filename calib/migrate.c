/* migrate.c - the store's one migration loop (calib/store.h), over a
 * driver's steps, version and lock (calib/driver.h), and the data each
 * schema version derives from what the store held before it. */
#include "calib/store.h"

#include <stdlib.h>
#include <string.h>

/* The data step of the migration to schema 4, after its DDL: the figures
 * recorded before kinds were kept are classified where they can be
 * (observed bytes equal to the peak RSS are host_peak_rss) and marked
 * unclassified where not, and the probe backends are emptied, to be
 * refilled by device kind from the stored documents (fill_backends). */
static const char v4_classify[] =
	"UPDATE attempts SET observed_kind = CASE WHEN observed_bytes = host_peak_rss_bytes"
	" THEN 'host_peak_rss' ELSE 'unclassified' END WHERE observed_bytes IS NOT NULL;"
	"UPDATE attempts SET predicted_kind = 'unclassified', predicted_basis = 'unclassified'"
	" WHERE predicted_bytes IS NOT NULL;"
	"INSERT INTO figures (attempt, role, kind, bytes, source)"
	" SELECT id, 'observed', observed_kind, observed_bytes,"
	" CASE WHEN observed_kind = 'host_peak_rss' THEN"
	" 'the largest process (wait4), recorded before kinds were kept'"
	" ELSE 'recorded before kinds were kept' END"
	" FROM attempts WHERE observed_bytes IS NOT NULL;"
	"INSERT INTO figures (attempt, role, kind, bytes, source)"
	" SELECT id, 'observed', 'host_peak_rss', host_peak_rss_bytes,"
	" 'the largest process (wait4), recorded before kinds were kept'"
	" FROM attempts WHERE host_peak_rss_bytes IS NOT NULL"
	" AND (observed_bytes IS NULL OR observed_bytes <> host_peak_rss_bytes);"
	"INSERT INTO figures (attempt, role, kind, bytes, basis, source)"
	" SELECT id, 'predicted', 'unclassified', predicted_bytes, 'unclassified',"
	" 'recorded before kinds were kept' FROM attempts WHERE predicted_bytes IS NOT NULL;"
	"DELETE FROM probe_backends;";

/* Runs sql, statements separated by ';' without parameters, each to its
 * end. */
static int run_sql(struct calib_store *st, const char *sql, const char *what)
{
	const struct calib_driver *drv = st->drv;
	size_t len;
	int rc = 0;

	for (const char *p = sql; rc == 0 && *p; p += len + (p[len] == ';')) {
		struct calib_stmt *s;
		char *one;

		len = strcspn(p, ";");
		if (strspn(p, " \t\n") >= len)
			continue;
		one = xl_strndup(p, len);
		s = drv->prepare(st, one, what);
		free(one);
		if (!s)
			return XL_EX_CANTCREAT;
		while ((rc = drv->step(s)) == CALIB_ROW)
			;
		drv->finalize(s);
	}
	return rc;
}

/* Schema 2: a uid for every probe already kept, so that imports are
 * idempotent. */
static int fill_uids(struct calib_store *st)
{
	const struct calib_driver *drv = st->drv;
	const char *what = "migration to schema 2";
	struct calib_stmt *sel, *upd;
	int rc;

	sel = drv->prepare(st, "SELECT id, host, time, doc FROM probes", what);
	upd = sel ? drv->prepare(st, "UPDATE probes SET uid = $1 WHERE id = $2", what) : NULL;
	if (!upd) {
		if (sel)
			drv->finalize(sel);
		return XL_EX_CANTCREAT;
	}
	while ((rc = drv->step(sel)) == CALIB_ROW) {
		const char *host = drv->col_text(sel, 1), *text = drv->col_text(sel, 3);
		char *uid = calib_probe_uid(host ? host : "", drv->col_real(sel, 2), text ? text : "");

		drv->reset(upd);
		drv->bind_text(upd, 1, uid);
		drv->bind_int(upd, 2, drv->col_int(sel, 0));
		free(uid);
		if ((rc = drv->step(upd)))
			break;
	}
	drv->finalize(sel);
	drv->finalize(upd);
	return rc;
}

/* Schema 4: the probe backends again from every stored document, grouped
 * by kind of device. */
static int fill_backends(struct calib_store *st)
{
	const struct calib_driver *drv = st->drv;
	struct calib_stmt *sel;
	int rc;

	if ((rc = run_sql(st, v4_classify, "migration to schema 4")))
		return rc;
	if (!(sel = drv->prepare(st, "SELECT id, doc FROM probes ORDER BY id", "migration to schema 4")))
		return XL_EX_CANTCREAT;
	while ((rc = drv->step(sel)) == CALIB_ROW) {
		const char *text = drv->col_text(sel, 1);
		json_t *doc = json_loads(text ? text : "", 0, NULL);

		rc = doc ? calib_insert_backends(st, drv->col_int(sel, 0), doc) : 0;
		json_decref(doc);
		if (rc)
			break;
	}
	drv->finalize(sel);
	return rc;
}

/* The step that takes a store of version v further: a new store's first
 * step, else the step to v + 1; NULL when this build has none. */
static const struct calib_step *next_step(const struct calib_step *steps, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (v == 0 ? i == 0 : steps[i].version == v + 1)
			return &steps[i];
	return NULL;
}

/* The steps from version *v to this build's, each its DDL, its data and
 * its version. */
static int run_steps(struct calib_store *st, const struct calib_step *steps, size_t n, int *v)
{
	while (*v < CALIB_SCHEMA_VERSION) {
		const struct calib_step *s = next_step(steps, n, *v);
		char what[64];
		int rc;

		if (!s)
			return calib_fail(st, XL_EX_SOFTWARE, "no migration to schema %d in this build",
					  *v + 1);
		snprintf(what, sizeof(what), "migration to schema %d", s->version);
		if ((rc = run_sql(st, s->ddl, what)) ||
		    (s->version == 2 && (rc = fill_uids(st))) ||
		    (s->version == 4 && (rc = fill_backends(st))) ||
		    (rc = st->drv->set_version(st, s->version)))
			return rc;
		*v = s->version;
	}
	return 0;
}

static int newer(struct calib_store *st, int v)
{
	return calib_fail(st, XL_EX_CANTCREAT, "schema version %d is newer than this xlaunch knows (%d)",
			  v, CALIB_SCHEMA_VERSION);
}

int calib_migrate(struct calib_store *st, const struct calib_step *steps, size_t nsteps,
		  unsigned flags)
{
	const struct calib_driver *drv = st->drv;
	int v, rc;

	if ((rc = drv->version(st, &v)))
		return rc;
	if (v == CALIB_SCHEMA_VERSION)
		return 0;
	if (v > CALIB_SCHEMA_VERSION)
		return newer(st, v);
	if (v == 0 && (flags & CALIB_OPEN_NOCREATE) && drv->absent_without_schema) {
		st->absent = true;
		return calib_fail(st, XL_EX_CANTCREAT, "no store in this database");
	}
	if ((rc = drv->lock(st)))
		goto out;
	/* another process may have migrated while this one waited for the lock */
	if ((rc = drv->version(st, &v)) == 0)
		rc = v > CALIB_SCHEMA_VERSION ? newer(st, v) : run_steps(st, steps, nsteps, &v);
	if (rc == 0)
		rc = drv->commit(st);
out:
	if (rc)
		drv->rollback(st);
	return rc;
}
