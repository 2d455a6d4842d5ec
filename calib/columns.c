/* columns.c - the columns of an attempt as data (calib/store.h): one
 * table that the store's queries, its row reader and its writer
 * (calib/query.c) and the JSON codec (calib/store.c) all follow. */
#include "calib/store.h"

#include <math.h>
#include <stddef.h>

#define COL(name, sql, type, field, nullable, flags) \
	{ name, sql, type, offsetof(struct calib_attempt, field), nullable, flags }

const struct calib_column calib_attempt_cols[] = {
	COL("id", "a.id", CALIB_COL_TEXT, id, false, 0),
	COL("time", "a.time", CALIB_COL_TIME, time, false, 0),
	COL("profile", "a.profile", CALIB_COL_TEXT, profile, true, 0),
	COL("candidate", "a.candidate", CALIB_COL_TEXT, candidate, true, 0),
	COL("signature", "a.signature", CALIB_COL_HASH, signature, false, 0),
	COL("host", "a.host", CALIB_COL_TEXT, host, false, CALIB_COL_HOST),
	COL("rank", "a.rank", CALIB_COL_INT, rank, true, 0),
	COL("outcome", "a.outcome", CALIB_COL_OUTCOME, outcome, false, 0),
	COL("exit_status", "a.exit_status", CALIB_COL_INT, exit_status, true, 0),
	COL("predicted_bytes", "a.predicted_bytes", CALIB_COL_INT, predicted_bytes, true, 0),
	COL("predicted_kind", "a.predicted_kind", CALIB_COL_KIND, predicted_kind, true,
	    CALIB_COL_PREDICTED),
	COL("predicted_basis", "a.predicted_basis", CALIB_COL_BASIS, predicted_basis, true,
	    CALIB_COL_PREDICTED),
	COL("observed_bytes", "a.observed_bytes", CALIB_COL_INT, observed_bytes, true, 0),
	COL("observed_kind", "a.observed_kind", CALIB_COL_KIND, observed_kind, true,
	    CALIB_COL_OBSERVED),
	COL("wall_s", "a.wall_s", CALIB_COL_REAL, wall_s, true, 0),
	COL("compile_count", "a.compile_count", CALIB_COL_INT, compile_count, true, 0),
	COL("figures", "@fig", CALIB_COL_FIGURES, figures, true, 0),
	COL("job_id", "a.job_id", CALIB_COL_TEXT, job_id, true, CALIB_COL_EMPTY),
	COL("cache_hits", "a.cache_hits", CALIB_COL_INT, cache_hits, true, 0),
	COL("first_step_s", "a.first_step_s", CALIB_COL_REAL, first_step_s, true, 0),
	COL("details", "a.details", CALIB_COL_OBJECT, details, true, CALIB_COL_EMPTY),
	COL("host_peak_rss_bytes", "a.host_peak_rss_bytes", CALIB_COL_INT, host_peak_rss_bytes,
	    true, CALIB_COL_FULL),
	COL("signature_json", "s.json", CALIB_COL_OBJECT, signature_json, true, CALIB_COL_SIG),
	COL("shape_hash", "s.shape_hash", CALIB_COL_HASH, shape_hash, true, CALIB_COL_SIG),
	COL("stack_hash", "s.stack_hash", CALIB_COL_HASH, stack_hash, true, CALIB_COL_SIG),
	COL("hardware_kind", "s.hardware_kind", CALIB_COL_TEXT, hardware_kind, true,
	    CALIB_COL_SIG),
	COL("signature_scheme", "s.scheme", CALIB_COL_SCHEME, signature_scheme, false,
	    CALIB_COL_SIG),
	{ NULL, NULL, CALIB_COL_TEXT, 0, false, 0 },
};

bool calib_col_is_null(const struct calib_column *c, const struct calib_attempt *a)
{
	const void *p = (const char *)a + c->offset;

	if (!c->nullable)
		return false;
	if ((c->flags & CALIB_COL_PREDICTED) &&
	    (a->predicted_bytes == CALIB_UNSET || a->predicted_kind >= CALIB_KIND_COUNT))
		return true;
	if ((c->flags & CALIB_COL_OBSERVED) &&
	    (a->observed_bytes == CALIB_UNSET || a->observed_kind >= CALIB_KIND_COUNT))
		return true;
	switch (c->type) {
	case CALIB_COL_TEXT:
	case CALIB_COL_OBJECT:
		return !*(char *const *)p || ((c->flags & CALIB_COL_EMPTY) && !**(char *const *)p);
	case CALIB_COL_HASH:
		return !*(const char *)p;
	case CALIB_COL_INT:
		return *(const int64_t *)p == CALIB_UNSET;
	case CALIB_COL_REAL:
		return isnan(*(const double *)p);
	case CALIB_COL_KIND:
		return *(const enum calib_kind *)p >= CALIB_KIND_COUNT;
	case CALIB_COL_FIGURES:
		return a->nfigures == 0;
	default:
		return false;
	}
}
