/* order.c - the order in which to try a profile's candidates. */
#include "calib/backend.h"

#include <stdlib.h>
#include <string.h>

enum place { P_GOOD, P_UNSEEN, P_SUSPECT, P_INFEASIBLE, P_BAD };
static const char *const place_names[] = {
	"known-good", "unseen", "suspect", "infeasible", "known-bad",
};

struct entry {
	size_t index;
	enum place place;
	json_t *obj;
};

/* The latest attempt matching the query: outcome and id copied out, or
 * false when none.  Returns 73 on a store error. */
static int latest(struct calib_store *st, const char *sql, const char *p1, const char *p2,
		  const char *p3, char *outcome, size_t on, char *id, size_t idn, double *t)
{
	sqlite3_stmt *s = calib_prepare(st, sql);
	int rc;

	*outcome = '\0';
	if (!s)
		return XL_EX_CANTCREAT;
	sqlite3_bind_text(s, 1, p1, -1, SQLITE_STATIC);
	if (p2)
		sqlite3_bind_text(s, 2, p2, -1, SQLITE_STATIC);
	if (p3)
		sqlite3_bind_text(s, 3, p3, -1, SQLITE_STATIC);
	rc = calib_step(s);
	if (rc == SQLITE_ROW) {
		snprintf(outcome, on, "%s", (const char *)sqlite3_column_text(s, 0));
		snprintf(id, idn, "%s", (const char *)sqlite3_column_text(s, 1));
		*t = sqlite3_column_double(s, 2);
		if (p3)
			snprintf(id + strlen(id), idn - strlen(id), "%s",
				 sqlite3_column_int(s, 3) ? " older-stack" : "");
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return calib_sqlfail(st, "cannot read past launches");
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->place != b->place)
		return a->place < b->place ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

int calib_order(struct calib_store *st, const json_t *candidates, json_t **order)
{
	struct entry *e;
	size_t n, i;
	const json_t *c;
	int rc = 0;

	*order = NULL;
	if (!json_is_array(candidates)) {
		if (st)
			calib_fail(st, XL_EX_DATAERR, "candidates must be an array");
		return XL_EX_DATAERR;
	}
	n = json_array_size(candidates);
	e = xl_calloc(n ? n : 1, sizeof(*e));
	json_array_foreach(candidates, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const json_t *parts = json_object_get(c, "parts");
		struct calib_sig sig;
		struct calib_prediction pred;
		char outcome[32] = "", id[160] = "", reason[400], mem[32], dev[32], when[32];
		double t = 0;
		enum place pl = P_UNSEEN;

		if (!name || (parts && !json_is_object(parts))) {
			rc = XL_EX_DATAERR;
			if (st)
				calib_fail(st, rc, "candidate %zu: needs a 'name' and object 'parts'", i + 1);
			break;
		}
		if (parts) {
			calib_signature(parts, &sig);
		} else {
			/* no parts: an empty signature, nothing known about it */
			json_t *empty = json_object();

			calib_signature(empty, &sig);
			json_decref(empty);
		}
		if (calib_predict(st, sig.parts, NULL, &pred) != 0)
			rc = XL_EX_CANTCREAT;
		xl_fmt_bytes(pred.predicted_bytes, mem, sizeof(mem));
		xl_fmt_bytes(pred.device_memory_bytes, dev, sizeof(dev));
		if (st && rc == 0)
			rc = latest(st, "SELECT outcome, id, time FROM attempts WHERE signature = ?1"
					" ORDER BY time DESC, rowid DESC LIMIT 1",
				    sig.hash, NULL, NULL, outcome, sizeof(outcome), id, sizeof(id), &t);
		if (strcmp(outcome, "ok") == 0) {
			pl = P_GOOD;
			snprintf(reason, sizeof(reason), "ok with this signature (run %s, %s)", id,
				 xl_iso_time(t, when, sizeof(when)));
		} else if (strcmp(outcome, "oom") == 0) {
			pl = P_BAD;
			snprintf(reason, sizeof(reason), "oom with this signature on this hardware and stack"
				 " (run %s, %s)", id, xl_iso_time(t, when, sizeof(when)));
		} else {
			char prev[32] = "", pid[200] = "";
			double pt = 0;
			bool suspect = false, infeasible;

			if (st && rc == 0)
				rc = latest(st, "SELECT a.outcome, a.id, a.time, s.stack_hash IS NOT ?2"
						" FROM signatures s JOIN attempts a ON a.signature = s.hash"
						" WHERE s.shape_hash = ?1 AND s.hash <> ?3"
						" ORDER BY a.time DESC, a.rowid DESC LIMIT 1",
					    sig.shape_hash, sig.stack_hash, sig.hash, prev, sizeof(prev),
					    pid, sizeof(pid), &pt);
			if (strcmp(prev, "oom") == 0) {
				char *sp = strstr(pid, " older-stack");

				suspect = true;
				if (sp)
					*sp = '\0';
				snprintf(reason, sizeof(reason), "oom %s (run %s, %s)",
					 sp ? "on an older stack with this shape" :
					      "with this shape and stack under other toggles",
					 pid, xl_iso_time(pt, when, sizeof(when)));
			}
			infeasible = pred.known && pred.device_memory_bytes &&
				     pred.predicted_bytes > pred.device_memory_bytes;
			if (infeasible) {
				size_t l = suspect ? strlen(reason) : 0;

				snprintf(reason + l, sizeof(reason) - l,
					 "%spredicted %s above %s of device memory (%s)",
					 suspect ? "; " : "", mem, dev, pred.note);
				pl = P_INFEASIBLE;
			} else if (suspect) {
				pl = P_SUSPECT;
			} else {
				int l = snprintf(reason, sizeof(reason), "%s",
						 *outcome ? "" : "never tried with this signature");

				if (*outcome)
					l = snprintf(reason, sizeof(reason), "last tried with outcome %s (run %s)",
						     outcome, id);
				if (pred.known && pred.device_memory_bytes)
					snprintf(reason + l, sizeof(reason) - (size_t)l,
						 "; predicted %s of %s", mem, dev);
				else if (pred.known)
					snprintf(reason + l, sizeof(reason) - (size_t)l,
						 "; predicted %s, device memory unknown", mem);
				else
					snprintf(reason + l, sizeof(reason) - (size_t)l,
						 "; no prediction (%s)", pred.note);
			}
		}
		e[i].index = i;
		e[i].place = pl;
		e[i].obj = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "name", name,
				     "signature", sig.hash, "place", place_names[pl], "reason", reason,
				     "predicted_bytes", pred.known ? json_integer((json_int_t)pred.predicted_bytes)
								   : json_null(),
				     "device_memory_bytes", pred.device_memory_bytes
						? json_integer((json_int_t)pred.device_memory_bytes) : json_null());
		calib_sig_release(&sig);
		if (rc)
			break;
	}
	if (rc == 0) {
		qsort(e, n, sizeof(*e), cmp_entry);
		*order = json_array();
		for (i = 0; i < n; i++)
			json_array_append(*order, e[i].obj);
	}
	for (i = 0; i < n; i++)
		json_decref(e[i].obj);
	free(e);
	return rc;
}
