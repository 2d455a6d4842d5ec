/* store.c - the store interface above its backends (calib/store.h):
 * opening by location, typed attempt records and their JSON, checks before
 * writes, the queries, and export and import as JSON lines. */
#include "calib/store.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- retries --------------------------------------------------------------------- */

/* How many times one write runs again after failures the backend calls
 * passing (st->retry), within the wait limit. */
#define RETRY_MAX 25

/* A few milliseconds, more after each try, with jitter of this process's
 * own so that writers that failed together do not retry together. */
static void backoff(unsigned tries)
{
	static unsigned seed;
	struct timespec ts;
	unsigned ms;

	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)(xl_mono() * 1e6);
	ms = (tries < 6 ? 1u << tries : 64) + (unsigned)(rand_r(&seed) % 16);
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ms * 1000000L;
	nanosleep(&ts, NULL);
}

/* After a write failed: true, having waited a little, when the backend says
 * it may pass when run again from its start, and it is no part of a larger
 * transaction, and tries and the wait limit allow. */
static bool again(struct calib_store *st, unsigned *tries, double start)
{
	if (!st->retry || st->in_tx || *tries >= RETRY_MAX ||
	    xl_mono() - start > calib_wait_limit())
		return false;
	st->retry = false;
	backoff((*tries)++);
	return true;
}

const char *calib_store_path(const struct calib_store *st)
{
	return st->location;
}

const char *calib_errmsg(const struct calib_store *st)
{
	return st && st->err ? st->err : "";
}

/* ---- opening by location --------------------------------------------------------- */

/* The length of "scheme://" at the start of s, or 0 when s is no URI. */
static size_t uri_scheme(const char *s)
{
	size_t i = 0;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while (s[i] && (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
		i++;
	return strncmp(s + i, "://", 3) == 0 ? i + 3 : 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* len bytes of s with %XX decoded; NULL when an escape is malformed.
 * Caller frees. */
static char *percent_decode(const char *s, size_t len)
{
	char *out = xl_malloc(len + 1), *o = out;

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
		} else if (i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			*o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}

/* Adds a password as written and as decoded to secrets. */
static void add_secret(struct xl_strv *secrets, const char *s, size_t len)
{
	char *raw = xl_strndup(s, len), *dec = percent_decode(s, len);

	if (*raw)
		xl_strv_push_owned(secrets, raw);
	else
		free(raw);
	if (dec && *dec && !xl_strv_contains(secrets, dec))
		xl_strv_push_owned(secrets, dec);
	else
		free(dec);
}

/* A URI as it may be shown, and the passwords it holds: the password of
 * "user:password@host" and "password=" parameters are left out.  As libpq
 * reads a URI: the user part ends at the first '@' before any '/'; the
 * parameters follow the first '?' after it, separated by '&'; names and
 * values are percent-decoded.  Caller frees. */
static char *redact(const char *uri, size_t scheme_len, struct xl_strv *secrets)
{
	const char *auth = uri + scheme_len;
	const char *end = auth + strcspn(auth, "@/");
	const char *rest = auth, *query;
	struct xl_buf b = XL_BUF_INIT;
	bool first = true;

	xl_buf_add(&b, uri, scheme_len);
	if (*end == '@') {
		const char *colon = memchr(auth, ':', (size_t)(end - auth));

		if (colon) {
			add_secret(secrets, colon + 1, (size_t)(end - colon - 1));
			xl_buf_add(&b, auth, (size_t)(colon - auth));
			rest = end;
		}
	}
	query = strchr(*end == '@' ? end : rest, '?');
	if (!query) {
		xl_buf_adds(&b, rest);
		return xl_buf_detach(&b);
	}
	xl_buf_add(&b, rest, (size_t)(query - rest));
	for (const char *p = query + 1;; p++) {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);
		char *key = eq ? percent_decode(p, (size_t)(eq - p)) : NULL;

		if (key && strcmp(key, "password") == 0) {
			add_secret(secrets, eq + 1, len - (size_t)(eq + 1 - p));
		} else {
			xl_buf_addc(&b, first ? '?' : '&');
			xl_buf_add(&b, p, len);
			first = false;
		}
		free(key);
		p += len;
		if (*p != '&')
			break;
	}
	return xl_buf_detach(&b);
}

char *calib_location_display(const char *location)
{
	struct xl_strv secrets = XL_STRV_INIT;
	size_t scheme = uri_scheme(location);
	char *shown = scheme ? redact(location, scheme, &secrets) : xl_strdup(location);

	xl_strv_release(&secrets);
	return shown;
}

/* st speaks through drv: the operations are calib_queries, with
 * PostgreSQL's own SQL in place of some on its driver. */
static void use_driver(struct calib_store *st, const struct calib_driver *drv)
{
	const struct calib_ops *own = drv == &calib_pg_driver ? &calib_pg_queries : NULL;

	st->drv = drv;
	if (!st->ops)
		st->ops = xl_malloc(sizeof(*st->ops));
	*st->ops = calib_queries;
#define OWN(op) if (own && own->op) st->ops->op = own->op;
	CALIB_OPS(OWN)
#undef OWN
}

/* Opens st through its driver, and migrates the store. */
static int open_driver(struct calib_store *st, const char *path, unsigned flags)
{
	const struct calib_driver *drv = st->drv;
	int rc = drv->open(st, path, flags);

	return rc ? rc : calib_migrate(st, drv->steps, drv->nsteps, flags);
}

int calib_open(const char *location, unsigned flags, struct calib_store **out, char **err)
{
	struct calib_store *st = xl_calloc(1, sizeof(*st));
	const char *path = NULL;
	size_t scheme;
	int rc;

	*out = NULL;
	if (err)
		*err = NULL;
	if (!location) {
		char *sd = xl_state_dir();

		st->location = xl_asprintf("%s/calib.db", sd);
		free(sd);
		path = st->location;
		st->drv = &calib_sqlite_driver;
	} else if (xl_startswith(location, "sqlite:")) {
		path = location + strlen("sqlite:");
		if (xl_startswith(path, "//"))
			path += 2;
		st->location = xl_strdup(path);
		path = st->location;
		st->drv = &calib_sqlite_driver;
	} else if ((scheme = uri_scheme(location)) != 0) {
		st->location = redact(location, scheme, &st->secrets);
		/* a server store: libpq reads the URI as given, password and all */
		if (strncmp(location, "postgresql://", scheme) == 0 ||
		    strncmp(location, "postgres://", scheme) == 0) {
			st->drv = &calib_pg_driver;
			path = location;
		} else {
			rc = calib_fail(st, XL_EX_CANTCREAT,
					"unknown kind of store '%.*s' (a path, sqlite:PATH or "
					"postgresql://...)", (int)scheme, location);
			goto fail;
		}
	} else {
		st->location = xl_strdup(location);
		path = st->location;
		st->drv = &calib_sqlite_driver;
	}
	if (!*path) {
		rc = calib_fail(st, XL_EX_CANTCREAT, "no file named");
		goto fail;
	}
	if (flags & CALIB_OPEN_READONLY)
		flags |= CALIB_OPEN_NOCREATE;
	use_driver(st, st->drv);
	rc = open_driver(st, path, flags);
	if (rc && st->absent && (flags & CALIB_OPEN_READONLY)) {
		/* nothing recorded yet: an empty store in memory answers */
		st->drv->close(st);
		free(st->err);
		st->err = NULL;
		use_driver(st, &calib_sqlite_driver);
		rc = open_driver(st, NULL, flags);
		st->stand_in = rc == 0;
	}
	if (rc)
		goto fail;
	*out = st;
	return 0;
fail:
	if (err)
		*err = xl_strdup(st->err ? st->err : "cannot open");
	calib_close(st);
	return rc ? rc : XL_EX_CANTCREAT;
}

bool calib_store_stand_in(const struct calib_store *st)
{
	return st && st->stand_in;
}

void calib_close(struct calib_store *st)
{
	if (!st)
		return;
	calib_family_cache_drop(st);
	if (st->drv && st->impl)
		st->drv->close(st);
	free(st->ops);
	free(st->location);
	free(st->err);
	xl_strv_release(&st->secrets);
	free(st);
}

/* ---- attempt records ------------------------------------------------------------- */

void calib_attempt_init(struct calib_attempt *a)
{
	memset(a, 0, sizeof(*a));
	a->time = xl_now();
	a->rank = a->exit_status = a->predicted_bytes = a->observed_bytes = CALIB_UNSET;
	a->compile_count = a->host_peak_rss_bytes = a->cache_hits = CALIB_UNSET;
	a->predicted_kind = a->observed_kind = CALIB_KIND_COUNT;
	a->predicted_basis = CALIB_BASIS_NONE;
	a->wall_s = a->first_step_s = NAN;
	a->outcome = XL_OUT_ERROR;
	a->signature_scheme = CALIB_SIG_SCHEME;
}

void calib_attempt_release(struct calib_attempt *a)
{
	free(a->id);
	free(a->profile);
	free(a->candidate);
	free(a->host);
	free(a->signature_json);
	free(a->hardware_kind);
	free(a->job_id);
	free(a->details);
	for (size_t i = 0; i < a->nfigures; i++)
		free(a->figures[i].source);
	free(a->figures);
	a->id = a->profile = a->candidate = a->host = a->signature_json = a->hardware_kind = NULL;
	a->job_id = a->details = NULL;
	a->figures = NULL;
	a->nfigures = 0;
}

void calib_attempt_add_figure(struct calib_attempt *a, bool predicted, enum calib_kind kind,
			      int64_t bytes, enum calib_basis basis, int64_t error_bytes,
			      const char *source)
{
	struct calib_figure *f = (struct calib_figure *)calib_attempt_figure(a, predicted, kind);

	if (!f) {
		a->figures = xl_realloc(a->figures, (a->nfigures + 1) * sizeof(*a->figures));
		f = &a->figures[a->nfigures++];
		f->source = NULL;
	}
	free(f->source);
	f->predicted = predicted;
	f->kind = kind;
	f->bytes = bytes;
	f->basis = predicted ? basis : CALIB_BASIS_NONE;
	f->error_bytes = error_bytes;
	f->source = source ? xl_strdup(source) : NULL;
}

const struct calib_figure *calib_attempt_figure(const struct calib_attempt *a, bool predicted,
						enum calib_kind kind)
{
	for (size_t i = 0; i < a->nfigures; i++)
		if (a->figures[i].predicted == predicted && a->figures[i].kind == kind)
			return &a->figures[i];
	return NULL;
}

static bool is_hash(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* An optional integer field: true when absent/null (CALIB_UNSET) or an
 * integral number. */
static bool opt_int(const json_t *o, const char *key, int64_t *v)
{
	const json_t *x = json_object_get(o, key);

	*v = CALIB_UNSET;
	if (!x || json_is_null(x))
		return true;
	if (json_is_integer(x)) {
		*v = json_integer_value(x);
	} else if (json_is_real(x) && json_real_value(x) == (double)(int64_t)json_real_value(x)) {
		*v = (int64_t)json_real_value(x);
	} else {
		return false;
	}
	return true;
}

static bool opt_str(const json_t *o, const char *key, const char **v)
{
	const json_t *x = json_object_get(o, key);

	*v = NULL;
	if (!x || json_is_null(x))
		return true;
	if (!json_is_string(x))
		return false;
	*v = json_string_value(x);
	return true;
}

static char *dup_or_null(const char *s)
{
	return s ? xl_strdup(s) : NULL;
}

/* Sets a's signature description from signature_json (a string or an
 * object): canonical JSON and the hashes it gives.  *err on failure. */
static bool take_signature_json(struct calib_attempt *a, const json_t *sj, const char *given,
				char **err)
{
	struct calib_sig computed;
	json_t *parsed = NULL;
	int rc;

	if (json_is_string(sj)) {
		parsed = json_loads(json_string_value(sj), 0, NULL);
		if (!parsed) {
			*err = xl_asprintf("attempt '%s': 'signature_json' is not JSON", a->id);
			return false;
		}
	}
	rc = calib_signature(parsed ? parsed : sj, &computed);
	json_decref(parsed);
	if (rc) {
		*err = xl_asprintf("attempt '%s': 'signature_json' is not an object", a->id);
		return false;
	}
	if (given && strcmp(given, computed.hash) != 0) {
		calib_sig_release(&computed);
		*err = xl_asprintf("attempt '%s': 'signature' does not match 'signature_json'", a->id);
		return false;
	}
	snprintf(a->signature, sizeof(a->signature), "%s", computed.hash);
	snprintf(a->shape_hash, sizeof(a->shape_hash), "%s", computed.shape_hash);
	snprintf(a->stack_hash, sizeof(a->stack_hash), "%s", computed.stack_hash);
	free(a->signature_json);
	a->signature_json = xl_strdup(computed.canonical);
	free(a->hardware_kind);
	a->hardware_kind = dup_or_null(computed.hardware_kind);
	calib_sig_release(&computed);
	return true;
}

/* figures: [{role, kind, bytes, basis, error_bytes, source}] into a. */
static bool figures_from_json(struct calib_attempt *a, const json_t *arr, char **err)
{
	size_t i;
	const json_t *f;

	if (!json_is_array(arr)) {
		*err = xl_asprintf("attempt '%s': 'figures' is not an array", a->id);
		return false;
	}
	json_array_foreach(arr, i, f) {
		const char *role, *kind, *basis, *source;
		enum calib_kind k;
		enum calib_basis b = CALIB_BASIS_NONE;
		int64_t bytes, error;

		if (!json_is_object(f) || !opt_str(f, "role", &role) || !opt_str(f, "kind", &kind) ||
		    !opt_str(f, "basis", &basis) || !opt_str(f, "source", &source) ||
		    !opt_int(f, "bytes", &bytes) || !opt_int(f, "error_bytes", &error) ||
		    bytes == CALIB_UNSET || !role ||
		    (strcmp(role, "observed") != 0 && strcmp(role, "predicted") != 0)) {
			*err = xl_asprintf("attempt '%s': figure %zu is not {role: observed|predicted,"
					   " kind, bytes, ...}", a->id, i + 1);
			return false;
		}
		if (!calib_kind_parse(kind, &k)) {
			*err = xl_asprintf("attempt '%s': figure %zu: unknown memory kind '%s'", a->id,
					   i + 1, kind ? kind : "(none)");
			return false;
		}
		if (basis && !calib_basis_parse(basis, &b)) {
			*err = xl_asprintf("attempt '%s': figure %zu: unknown basis '%s'", a->id, i + 1,
					   basis);
			return false;
		}
		calib_attempt_add_figure(a, strcmp(role, "predicted") == 0, k, bytes, b, error, source);
	}
	return true;
}

/* Headline figures without a kind are classified as schema 4's migration
 * does, and every headline figure is among the figures. */
static void classify_headline(struct calib_attempt *a)
{
	if (a->observed_bytes != CALIB_UNSET && a->observed_kind >= CALIB_KIND_COUNT)
		a->observed_kind = a->observed_bytes == a->host_peak_rss_bytes ? CALIB_KIND_HOST_PEAK_RSS
									   : CALIB_KIND_UNCLASSIFIED;
	if (a->predicted_bytes != CALIB_UNSET && a->predicted_kind >= CALIB_KIND_COUNT) {
		a->predicted_kind = CALIB_KIND_UNCLASSIFIED;
		a->predicted_basis = CALIB_BASIS_UNCLASSIFIED;
	}
	if (a->observed_bytes != CALIB_UNSET && !calib_attempt_figure(a, false, a->observed_kind))
		calib_attempt_add_figure(a, false, a->observed_kind, a->observed_bytes,
					 CALIB_BASIS_NONE, CALIB_UNSET, NULL);
	if (a->host_peak_rss_bytes != CALIB_UNSET &&
	    !calib_attempt_figure(a, false, CALIB_KIND_HOST_PEAK_RSS))
		calib_attempt_add_figure(a, false, CALIB_KIND_HOST_PEAK_RSS, a->host_peak_rss_bytes,
					 CALIB_BASIS_NONE, CALIB_UNSET, NULL);
	if (a->predicted_bytes != CALIB_UNSET && !calib_attempt_figure(a, true, a->predicted_kind))
		calib_attempt_add_figure(a, true, a->predicted_kind, a->predicted_bytes,
					 a->predicted_basis, CALIB_UNSET, NULL);
}

/* The text fields of o (strings or null) into a's own, and into its
 * shape and stack hashes; the attempt's signature, its kinds, basis and
 * outcome are the caller's, by name.  false when one is not a string. */
static bool text_fields_from_json(const json_t *o, struct calib_attempt *a)
{
	for (const struct calib_column *c = calib_attempt_cols; c->name; c++) {
		void *p = (char *)a + c->offset;
		const char *v;

		if (c->type != CALIB_COL_TEXT && c->type != CALIB_COL_HASH && c->type != CALIB_COL_KIND &&
		    c->type != CALIB_COL_BASIS && c->type != CALIB_COL_OUTCOME)
			continue;
		if (!opt_str(o, c->name, &v))
			return false;
		if (c->type == CALIB_COL_TEXT && c->offset != offsetof(struct calib_attempt, id))
			*(char **)p = dup_or_null(v);
		else if (c->type == CALIB_COL_HASH && (c->flags & CALIB_COL_SIG))
			snprintf(p, 65, "%s", v ? v : "");
	}
	return true;
}

/* The fields of o of type (CALIB_COL_INT: integers, or reals that are
 * integral; CALIB_COL_REAL: numbers; either may be null) into a; *err on
 * failure. */
static bool numbers_from_json(const json_t *o, enum calib_col_type type, struct calib_attempt *a,
			      char **err)
{
	for (const struct calib_column *c = calib_attempt_cols; c->name; c++) {
		void *p = (char *)a + c->offset;
		const json_t *x = json_object_get(o, c->name);

		if (c->type != type)
			continue;
		if (type == CALIB_COL_INT && !opt_int(o, c->name, p)) {
			*err = xl_asprintf("attempt '%s': '%s' is not an integer", a->id, c->name);
			return false;
		}
		if (type == CALIB_COL_INT)
			continue;
		if (x && !json_is_null(x) && !json_is_number(x)) {
			*err = xl_asprintf("attempt '%s': '%s' is not a number", a->id, c->name);
			return false;
		}
		if (json_is_number(x))
			*(double *)p = json_number_value(x);
	}
	return true;
}

int calib_attempt_from_json(const json_t *o, struct calib_attempt *a, char **err)
{
	const char *id, *sig, *outcome, *pkind, *pbasis, *okind;
	const json_t *sj, *tj, *fj, *dj;
	int64_t scheme;

	calib_attempt_init(a);
	*err = NULL;
	if (!json_is_object(o)) {
		*err = xl_strdup("an attempt must be a JSON object");
		return XL_EX_DATAERR;
	}
	if (!opt_str(o, "id", &id) || !id || !*id) {
		*err = xl_strdup("attempt without a string 'id'");
		return XL_EX_DATAERR;
	}
	a->id = xl_strdup(id);
	if (!text_fields_from_json(o, a)) {
		*err = xl_asprintf("attempt '%s': a text field is not a string", id);
		goto bad;
	}
	opt_str(o, "signature", &sig);
	opt_str(o, "outcome", &outcome);
	opt_str(o, "predicted_kind", &pkind);
	opt_str(o, "predicted_basis", &pbasis);
	opt_str(o, "observed_kind", &okind);
	if ((pkind && !calib_kind_parse(pkind, &a->predicted_kind)) ||
	    (okind && !calib_kind_parse(okind, &a->observed_kind))) {
		*err = xl_asprintf("attempt '%s': unknown memory kind '%s'", id,
				   pkind && !calib_kind_parse(pkind, &a->predicted_kind) ? pkind : okind);
		goto bad;
	}
	if (pbasis && !calib_basis_parse(pbasis, &a->predicted_basis)) {
		*err = xl_asprintf("attempt '%s': unknown basis '%s'", id, pbasis);
		goto bad;
	}
	if (!xl_outcome_parse(outcome, &a->outcome)) {
		*err = xl_asprintf("attempt '%s': unknown outcome '%s'", id, outcome ? outcome : "(none)");
		goto bad;
	}
	tj = json_object_get(o, "time");
	if (json_is_number(tj)) {
		a->time = json_number_value(tj);
	} else if (tj && !json_is_null(tj) &&
		   !(json_is_string(tj) && xl_parse_iso_time(json_string_value(tj), &a->time))) {
		*err = xl_asprintf("attempt '%s': 'time' is not an ISO 8601 time", id);
		goto bad;
	}
	if (!numbers_from_json(o, CALIB_COL_REAL, a, err))
		goto bad;
	dj = json_object_get(o, "details");
	if (dj && !json_is_null(dj)) {
		if (!json_is_object(dj)) {
			*err = xl_asprintf("attempt '%s': 'details' is not an object", id);
			goto bad;
		}
		a->details = json_dumps(dj, JSON_COMPACT | JSON_SORT_KEYS);
	}
	if (!opt_int(o, "signature_scheme", &scheme) ||
	    (scheme != CALIB_UNSET && (scheme < 1 || scheme > CALIB_SIG_SCHEME))) {
		*err = xl_asprintf("attempt '%s': 'signature_scheme' is not 1 to %d", id,
				   CALIB_SIG_SCHEME);
		goto bad;
	}
	/* a record without one was written before signatures had schemes */
	a->signature_scheme = scheme == CALIB_UNSET ? 1 : (int)scheme;
	fj = json_object_get(o, "figures");
	if (fj && !json_is_null(fj) && !figures_from_json(a, fj, err))
		goto bad;
	sj = json_object_get(o, "signature_json");
	if (sj && !json_is_null(sj)) {
		if (!take_signature_json(a, sj, sig, err))
			goto bad;
	} else if (is_hash(sig)) {
		snprintf(a->signature, sizeof(a->signature), "%s", sig);
	}
	if (!is_hash(a->signature)) {
		*err = xl_asprintf("attempt '%s': 'signature' is not a SHA-256 hex digest", id);
		goto bad;
	}
	if (!numbers_from_json(o, CALIB_COL_INT, a, err))
		goto bad;
	classify_headline(a);
	return 0;
bad:
	calib_attempt_release(a);
	return XL_EX_DATAERR;
}

static json_t *int_or_null(int64_t v)
{
	return v == CALIB_UNSET ? json_null() : json_integer((json_int_t)v);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/* [{role, kind, bytes, basis, error_bytes, source}]: observations first. */
static json_t *figures_json(const struct calib_attempt *a)
{
	json_t *arr = json_array();

	for (int pred = 0; pred < 2; pred++)
		for (size_t i = 0; i < a->nfigures; i++) {
			const struct calib_figure *f = &a->figures[i];

			if (f->predicted != (pred == 1))
				continue;
			json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}",
				"role", f->predicted ? "predicted" : "observed",
				"kind", calib_kind_name(f->kind), "bytes", (json_int_t)f->bytes,
				"basis", f->predicted ? json_string(calib_basis_name(f->basis)) : json_null(),
				"error_bytes", int_or_null(f->error_bytes),
				"source", str_or_null(f->source)));
		}
	return arr;
}

/* Column c of a, which is not NULL, as JSON. */
static json_t *col_json(const struct calib_column *c, const struct calib_attempt *a)
{
	const void *p = (const char *)a + c->offset;
	char tb[40];
	json_t *d;

	switch (c->type) {
	case CALIB_COL_TEXT:
		return str_or_null(*(char *const *)p);
	case CALIB_COL_HASH:
		return str_or_null(p);
	case CALIB_COL_INT:
		return json_integer((json_int_t)*(const int64_t *)p);
	case CALIB_COL_REAL:
		return json_real(*(const double *)p);
	case CALIB_COL_TIME:
		return json_string(xl_iso_time_ms(*(const double *)p, tb, sizeof(tb)));
	case CALIB_COL_OUTCOME:
		return json_string(xl_outcome_name(*(const enum xl_outcome *)p));
	case CALIB_COL_KIND:
		return json_string(calib_kind_name(*(const enum calib_kind *)p));
	case CALIB_COL_BASIS:
		return json_string(calib_basis_name(*(const enum calib_basis *)p));
	case CALIB_COL_OBJECT:
		d = json_loads(*(char *const *)p, 0, NULL);
		if (json_is_object(d))
			return d;
		json_decref(d);
		return json_null();
	case CALIB_COL_SCHEME:
		return json_integer(*(const int *)p);
	case CALIB_COL_FIGURES:
		return figures_json(a);
	}
	return json_null();
}

json_t *calib_attempt_to_json(const struct calib_attempt *a, unsigned flags)
{
	json_t *o = json_object();

	for (const struct calib_column *c = calib_attempt_cols; c->name; c++) {
		if ((c->flags & (CALIB_COL_SIG | CALIB_COL_FULL)) && !(flags & CALIB_JSON_FULL))
			continue;
		json_object_set_new(o, c->name, c->type != CALIB_COL_FIGURES && calib_col_is_null(c, a)
				    ? json_null() : col_json(c, a));
	}
	return o;
}

/* ---- recording --------------------------------------------------------------------- */

/* Adds a headline figure to c's own array when it lacks one (no source). */
static void headline_figure(struct calib_attempt *c, bool predicted, enum calib_kind kind,
			    int64_t bytes, enum calib_basis basis)
{
	if (bytes == CALIB_UNSET || calib_attempt_figure(c, predicted, kind))
		return;
	c->figures[c->nfigures++] = (struct calib_figure){ predicted, kind, bytes,
		predicted ? basis : CALIB_BASIS_NONE, CALIB_UNSET, NULL };
}

int calib_record_attempt(struct calib_store *st, const struct calib_attempt *a)
{
	struct calib_attempt c = *a;
	struct calib_sig computed;
	char family[65] = "";
	char *coords = NULL;
	int rc;

	if (!a->id || !*a->id)
		return calib_fail(st, XL_EX_DATAERR, "attempt without an id");
	if ((unsigned)a->outcome >= XL_OUT_COUNT)
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': unknown outcome", a->id);
	if (a->signature_scheme < 1 || a->signature_scheme > CALIB_SIG_SCHEME)
		return calib_fail(st, XL_EX_DATAERR, "attempt '%s': unknown signature scheme %d",
				  a->id, a->signature_scheme);
	for (size_t i = 0; i < a->nfigures; i++)
		if ((unsigned)a->figures[i].kind >= CALIB_KIND_COUNT ||
		    (unsigned)a->figures[i].basis >= CALIB_BASIS_COUNT)
			return calib_fail(st, XL_EX_DATAERR, "attempt '%s': a figure of unknown kind",
					  a->id);
	if (a->details) {
		json_t *d = json_loads(a->details, 0, NULL);
		bool obj = json_is_object(d);

		json_decref(d);
		if (!obj)
			return calib_fail(st, XL_EX_DATAERR,
					  "attempt '%s': 'details' is not a JSON object", a->id);
	}
	if (a->signature_json) {
		json_t *parts = json_loads(a->signature_json, 0, NULL);

		rc = parts ? calib_signature(parts, &computed) : XL_EX_DATAERR;
		if (rc == 0 && a->signature_scheme >= 2) {
			json_t *cj = NULL;

			if (calib_family(parts, family, &cj) == 0)
				coords = json_dumps(cj, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(cj);
		}
		json_decref(parts);
		if (rc) {
			free(coords);
			return calib_fail(st, XL_EX_DATAERR,
					  "attempt '%s': 'signature_json' is not a JSON object", a->id);
		}
		if (strcmp(computed.hash, a->signature) != 0) {
			calib_sig_release(&computed);
			free(coords);
			return calib_fail(st, XL_EX_DATAERR,
					  "attempt '%s': 'signature' does not match 'signature_json'", a->id);
		}
		/* the description as the parts give it */
		memcpy(c.shape_hash, computed.shape_hash, sizeof(c.shape_hash));
		memcpy(c.stack_hash, computed.stack_hash, sizeof(c.stack_hash));
		c.signature_json = computed.canonical;
		c.hardware_kind = computed.hardware_kind;
	}
	/* headline figures have a kind and are among the figures (the copy's
	 * array borrows the sources of a's) */
	c.figures = xl_malloc((a->nfigures + 3) * sizeof(*c.figures));
	if (a->nfigures)
		memcpy(c.figures, a->figures, a->nfigures * sizeof(*c.figures));
	if (c.observed_bytes != CALIB_UNSET && c.observed_kind >= CALIB_KIND_COUNT)
		c.observed_kind = c.observed_bytes == c.host_peak_rss_bytes ? CALIB_KIND_HOST_PEAK_RSS
									    : CALIB_KIND_UNCLASSIFIED;
	if (c.predicted_bytes != CALIB_UNSET && c.predicted_kind >= CALIB_KIND_COUNT) {
		c.predicted_kind = CALIB_KIND_UNCLASSIFIED;
		c.predicted_basis = CALIB_BASIS_UNCLASSIFIED;
	}
	headline_figure(&c, false, c.observed_kind, c.observed_bytes, CALIB_BASIS_NONE);
	headline_figure(&c, false, CALIB_KIND_HOST_PEAK_RSS, c.host_peak_rss_bytes, CALIB_BASIS_NONE);
	headline_figure(&c, true, c.predicted_kind, c.predicted_bytes, c.predicted_basis);
	if (!is_hash(c.signature)) {
		rc = calib_fail(st, XL_EX_DATAERR,
				"attempt '%s': 'signature' is not a SHA-256 hex digest", a->id);
	} else {
		double start = xl_mono();
		unsigned tries = 0;

		calib_family_cache_drop(st);
		do {
			st->retry = false;
			rc = st->ops->record_attempt(st, &c, family[0] ? family : NULL, coords);
		} while (rc && again(st, &tries, start));
	}
	free(c.figures);
	free(coords);
	if (a->signature_json)
		calib_sig_release(&computed);
	return rc;
}

int calib_record_attempt_json(struct calib_store *st, const json_t *o)
{
	struct calib_attempt a;
	char *err = NULL;
	int rc = calib_attempt_from_json(o, &a, &err);

	if (rc) {
		calib_fail(st, rc, "%s", err);
		free(err);
		return rc;
	}
	rc = calib_record_attempt(st, &a);
	calib_attempt_release(&a);
	return rc;
}

int calib_record_probe(struct calib_store *st, const json_t *doc)
{
	const json_t *tj = json_object_get(doc, "time");
	const char *host;
	double t;

	if (!json_is_object(doc))
		return calib_fail(st, XL_EX_DATAERR, "a probe document must be a JSON object");
	if (!json_is_array(json_object_get(doc, "backends")))
		return calib_fail(st, XL_EX_DATAERR, "probe document without a 'backends' array");
	host = json_string_value(json_object_get(doc, "host"));
	if (!host)
		host = xl_hostname();
	if (json_is_number(tj)) {
		t = json_number_value(tj);
	} else if (json_is_string(tj)) {
		if (!xl_parse_iso_time(json_string_value(tj), &t))
			return calib_fail(st, XL_EX_DATAERR, "probe document: 'time' is not an ISO 8601 time");
	} else {
		t = xl_now();
	}
	{
		double start = xl_mono();
		unsigned tries = 0;
		int rc;

		do {
			st->retry = false;
			rc = st->ops->record_probe(st, doc, host, t, NULL);
		} while (rc && again(st, &tries, start));
		return rc;
	}
}

int calib_latest_hardware(struct calib_store *st, const char *host, unsigned flags,
			  struct calib_hardware *out)
{
	struct calib_hardware *all = NULL;
	size_t n = 0;
	ssize_t best = -1, host_i = -1;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = st->ops->latest_hardware(st, host, &all, &n)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		double total = (double)all[i].count * (double)all[i].memory_bytes;

		if (all[i].host) {
			/* the cpu backend speaks for the host before an OpenCL CPU */
			if (host_i < 0 || (strcmp(all[i].backend, "cpu") == 0 &&
					   strcmp(all[host_i].backend, "cpu") != 0))
				host_i = (ssize_t)i;
		} else if (best < 0 ||
			   total > (double)all[best].count * (double)all[best].memory_bytes) {
			best = (ssize_t)i;
		}
	}
	if ((flags & CALIB_HW_HOST) || best < 0)
		best = host_i;
	if (best >= 0)
		*out = all[best];
	free(all);
	if (best < 0)
		return calib_fail(st, XL_EX_NOINPUT, "no probe of host '%s' found an alive device",
				  host ? host : xl_hostname());
	return 0;
}

bool calib_parts_fill_hardware(struct calib_store *st, json_t *parts, unsigned flags)
{
	struct calib_hardware hw;

	if (json_object_get(parts, "hardware") || json_object_get(parts, "device"))
		return true;
	if (!st || calib_latest_hardware(st, NULL, flags, &hw) != 0)
		return false;
	json_object_set_new(parts, "hardware",
			    json_pack("{s:s, s:I, s:I, s:s}", "kind", hw.kind, "count", (json_int_t)hw.count,
				      "memory", (json_int_t)hw.memory_bytes,
				      "type", hw.host ? "host" : "accelerator"));
	return true;
}

int calib_last_parts(struct calib_store *st, const char *profile, json_t **parts, char **id)
{
	char *text = NULL;
	int rc = st->ops->last_parts(st, profile, &text, id);

	*parts = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (rc == 0 && !*parts) {
		free(*id);
		*id = NULL;
	}
	return rc;
}

/* ---- queries ----------------------------------------------------------------------- */

int calib_history(struct calib_store *st, const struct calib_filter *f, calib_attempt_fn *fn,
		  void *arg)
{
	return st->ops->history(st, f, fn, arg);
}

int calib_stats(struct calib_store *st, const char *profile, long long limit,
		calib_stats_fn *fn, void *arg)
{
	return st->ops->stats(st, profile, limit, fn, arg);
}

int calib_resolve_signature(struct calib_store *st, const char *prefix, char hash[65])
{
	for (const char *p = prefix; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return calib_fail(st, XL_EX_USAGE, "signature prefix '%s' is not lowercase hex",
					  prefix);
	if (!*prefix)
		return calib_fail(st, XL_EX_USAGE, "empty signature prefix");
	if (strlen(prefix) > 64)
		return calib_fail(st, XL_EX_NOINPUT, "no signature starts with '%s'", prefix);
	return st->ops->resolve_signature(st, prefix, hash);
}

int calib_forget(struct calib_store *st, const char *hash, int64_t *attempts)
{
	double start = xl_mono();
	unsigned tries = 0;
	int rc;

	do {
		st->retry = false;
		rc = st->ops->forget(st, hash, attempts);
	} while (rc && again(st, &tries, start));
	return rc;
}

/* ---- export and import ------------------------------------------------------------ */

/* Writes line as one line of JSON to f (dumped with flags), and drops it. */
static int export_line(json_t *line, size_t flags, FILE *f)
{
	char *text = json_dumps(line, flags);

	if (!text)
		xl_oom();
	fprintf(f, "%s\n", text);
	free(text);
	json_decref(line);
	return 0;
}

static int export_probe(const struct calib_probe_row *p, void *arg)
{
	char tb[40];

	return export_line(json_pack("{s:s, s:s?, s:s?, s:s, s:O?}", "type", "probe", "uid", p->uid,
				     "host", p->host, "time", xl_iso_time_ms(p->time, tb, sizeof(tb)),
				     "doc", p->doc), JSON_COMPACT, arg);
}

static int export_attempt(const struct calib_attempt *a, void *arg)
{
	json_t *line = json_pack("{s:s}", "type", "attempt");
	json_t *o = calib_attempt_to_json(a, CALIB_JSON_FULL);

	json_object_update(line, o);
	json_decref(o);
	return export_line(line, JSON_COMPACT | JSON_REAL_PRECISION(17), arg);
}

int calib_export(struct calib_store *st, FILE *f)
{
	return st->ops->export(st, export_probe, export_attempt, f);
}

/* One line of an import: 0, 65 with *err, or 73 (the store failed). */
static int import_one(struct calib_store *st, json_t *o, bool *probe, char **err)
{
	const char *type = json_string_value(json_object_get(o, "type"));
	int rc;

	*probe = false;
	if (!type || strcmp(type, "attempt") == 0) {
		struct calib_attempt a;

		if ((rc = calib_attempt_from_json(o, &a, err)))
			return rc;
		rc = calib_record_attempt(st, &a);
		calib_attempt_release(&a);
		if (rc == XL_EX_DATAERR) {
			const char *msg = calib_errmsg(st);
			const char *colon = strstr(msg, "': ");

			*err = xl_strdup(colon ? colon + 3 : msg);
		}
		return rc;
	}
	if (strcmp(type, "probe") == 0) {
		const json_t *doc = json_object_get(o, "doc");
		const char *host = json_string_value(json_object_get(o, "host"));
		const char *uid = json_string_value(json_object_get(o, "uid"));
		const char *ts = json_string_value(json_object_get(o, "time"));
		double t;

		*probe = true;
		if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "backends"))) {
			*err = xl_strdup("probe without a 'doc' with 'backends'");
			return XL_EX_DATAERR;
		}
		if (!host || !ts || !xl_parse_iso_time(ts, &t)) {
			*err = xl_strdup("probe without 'host' and an ISO 8601 'time'");
			return XL_EX_DATAERR;
		}
		return st->ops->record_probe(st, doc, host, t, uid);
	}
	*err = xl_asprintf("unknown line type '%s'", type);
	return XL_EX_DATAERR;
}

static void line_error(struct calib_import_result *res, size_t line, int col, char *msg)
{
	if (res->nerrors < 20) {
		res->errors = xl_realloc(res->errors, (res->nerrors + 1) * sizeof(*res->errors));
		res->errors[res->nerrors].line = line;
		res->errors[res->nerrors].col = col;
		res->errors[res->nerrors].msg = msg;
		res->nerrors++;
	} else {
		free(msg);
	}
	res->bad++;
}

/* One try at an import: every line in one transaction, committed when all
 * are good. */
static int import_pass(struct calib_store *st, const char *data, size_t len,
		       struct calib_import_result *res)
{
	calib_family_cache_drop(st);
	char *copy = xl_strndup(data, len), *line, *next;
	size_t lineno = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	if ((rc = st->drv->begin(st, false))) {
		free(copy);
		return rc;
	}
	st->in_tx = true;
	for (line = copy; line && *line; line = next) {
		json_error_t je;
		json_t *o;
		bool probe;
		char *err = NULL;
		int r;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		if (!o || !json_is_object(o)) {
			line_error(res, lineno, o ? 1 : je.column,
				   xl_strdup(o ? "not a JSON object" : je.text));
			json_decref(o);
			continue;
		}
		r = import_one(st, o, &probe, &err);
		json_decref(o);
		if (r == XL_EX_DATAERR) {
			line_error(res, lineno, 0, err ? err : xl_strdup("bad line"));
		} else if (r) {
			free(err);
			st->in_tx = false;
			st->drv->rollback(st);
			free(copy);
			return r;
		} else if (probe) {
			res->probes++;
		} else {
			res->attempts++;
		}
	}
	free(copy);
	st->in_tx = false;
	if (res->bad) {
		st->drv->rollback(st);
		return calib_fail(st, XL_EX_DATAERR, "%zu bad line%s: nothing imported", res->bad,
				  res->bad == 1 ? "" : "s");
	}
	if ((rc = st->drv->commit(st))) {
		st->drv->rollback(st);
		return rc;
	}
	return 0;
}

int calib_import(struct calib_store *st, const char *data, size_t len,
		 struct calib_import_result *res)
{
	double start = xl_mono();
	unsigned tries = 0;
	int rc;

	for (;;) {
		st->retry = false;
		rc = import_pass(st, data, len, res);
		if (!rc || !again(st, &tries, start))
			return rc;
		calib_import_result_release(res);
	}
}

void calib_import_result_release(struct calib_import_result *res)
{
	for (size_t i = 0; i < res->nerrors; i++)
		free(res->errors[i].msg);
	free(res->errors);
	memset(res, 0, sizeof(*res));
}

/* ---- shared by the operations ------------------------------------------------------ */

void calib_hardware_add(struct calib_hardware **all, size_t *n, const char *kind,
			const char *backend, const char *type, const char *memory_source,
			int64_t count, int64_t memory_bytes)
{
	struct calib_hardware *h;

	*all = xl_realloc(*all, (*n + 1) * sizeof(**all));
	h = &(*all)[(*n)++];
	memset(h, 0, sizeof(*h));
	snprintf(h->kind, sizeof(h->kind), "%s", kind ? kind : "");
	snprintf(h->backend, sizeof(h->backend), "%s", backend ? backend : "");
	snprintf(h->memory_source, sizeof(h->memory_source), "%s",
		 memory_source ? memory_source : "");
	h->count = count;
	h->memory_bytes = memory_bytes < 0 ? 0 : memory_bytes;
	h->host = strcmp(h->backend, "cpu") == 0 || (type && strcasecmp(type, "cpu") == 0) ||
		  strcasecmp(h->kind, "cpu") == 0;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double calib_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int calib_job_choose(struct calib_store *st, const char *job_id, const char *candidate,
		     const char *signature, int64_t rank, char **chosen, char **chosen_sig)
{
	*chosen = *chosen_sig = NULL;
	if (!job_id || !*job_id)
		return calib_fail(st, XL_EX_DATAERR, "a job choice needs a job id");
	return st->ops->job_choose(st, job_id, candidate, signature, rank, chosen, chosen_sig);
}

/* ---- ranks watching each other ------------------------------------------------------- */

/* A lapsed lease, as peer_outcome says it in a rank's row. */
#define LEASE_LAPSED "lease-lapsed"

static int check_rank(struct calib_store *st, const char *job_id, int64_t rank)
{
	if (!job_id || !*job_id)
		return calib_fail(st, XL_EX_DATAERR, "a rank's lease needs a job id");
	if (rank < 0)
		return calib_fail(st, XL_EX_DATAERR, "job '%s': rank %lld is not a rank", job_id,
				  (long long)rank);
	return 0;
}

int calib_rank_begin(struct calib_store *st, const char *job_id, int64_t rank, int64_t world,
		     const char *run_id, double lease_s, double *started)
{
	double t;
	int rc;

	if ((rc = check_rank(st, job_id, rank)))
		return rc;
	if (!(lease_s > 0))
		return calib_fail(st, XL_EX_DATAERR, "job '%s': a lease of %g s", job_id, lease_s);
	rc = st->ops->rank_begin(st, job_id, rank, world, run_id, lease_s, &t);
	if (rc == 0 && started)
		*started = t;
	return rc;
}

int calib_rank_poll(struct calib_store *st, const char *job_id, int64_t rank, double lease_s,
		    double since, bool judge_leases, struct calib_peer_end *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->when = out->now = NAN;
	if ((rc = check_rank(st, job_id, rank)))
		return rc;
	return st->ops->rank_poll(st, job_id, rank, lease_s, since, judge_leases, out);
}

int calib_rank_end(struct calib_store *st, const char *job_id, int64_t rank,
		   enum xl_outcome outcome, int64_t exit_status, int64_t peer_rank,
		   enum xl_outcome peer_outcome)
{
	int rc;

	if ((rc = check_rank(st, job_id, rank)))
		return rc;
	if ((unsigned)outcome >= XL_OUT_COUNT)
		return calib_fail(st, XL_EX_DATAERR, "job '%s': rank %lld: unknown outcome", job_id,
				  (long long)rank);
	return st->ops->rank_end(st, job_id, rank, xl_outcome_name(outcome), exit_status,
				peer_rank < 0 ? CALIB_UNSET : peer_rank,
				peer_rank < 0 ? NULL : (unsigned)peer_outcome < XL_OUT_COUNT
				? xl_outcome_name(peer_outcome) : LEASE_LAPSED);
}

int calib_job_ranks(struct calib_store *st, const char *job, calib_job_rank_fn *fn, void *arg)
{
	if (!job || !*job)
		return calib_fail(st, XL_EX_DATAERR, "no job id");
	return st->ops->job_ranks(st, job, fn, arg);
}

int calib_peer_outcome_parse(const char *s)
{
	enum xl_outcome o;

	if (!s)
		return -1;
	if (strcmp(s, LEASE_LAPSED) == 0)
		return XL_OUT_COUNT;
	return xl_outcome_parse(s, &o) ? (int)o : -1;
}

void calib_idle(struct calib_store *st)
{
	if (st && st->drv->idle)
		st->drv->idle(st);
}

/* ---- report queries ------------------------------------------------------------------- */

int calib_report_profiles(struct calib_store *st, const struct calib_report_filter *f,
			  long long limit, calib_report_profile_fn *fn, void *arg)
{
	return st->ops->report_profiles(st, f, limit, fn, arg);
}

int calib_report_timeline(struct calib_store *st, const struct calib_report_filter *f, double t0,
			  double width, calib_timeline_fn *fn, void *arg)
{
	if (!f->profile || !(width > 0))
		return calib_fail(st, XL_EX_SOFTWARE, "timeline: no profile or no bin width");
	return st->ops->report_timeline(st, f, t0, width, fn, arg);
}

int calib_report_stacks(struct calib_store *st, const struct calib_report_filter *f,
			calib_report_stack_fn *fn, void *arg)
{
	if (!f->profile)
		return calib_fail(st, XL_EX_SOFTWARE, "stacks: no profile");
	return st->ops->report_stacks(st, f, fn, arg);
}

int calib_report_pvo(struct calib_store *st, const struct calib_report_filter *f,
		     int bins_per_e, calib_pvo_fn *fn, void *arg)
{
	return st->ops->report_pvo(st, f, bins_per_e > 0 ? bins_per_e : 8, fn, arg);
}

int calib_report_sources(struct calib_store *st, const struct calib_report_filter *f,
			 calib_report_source_fn *fn, void *arg)
{
	return st->ops->report_sources(st, f, fn, arg);
}

int calib_report_families(struct calib_store *st, const struct calib_report_filter *f,
			  long long limit, calib_report_family_fn *fn, void *arg)
{
	return st->ops->report_families(st, f, limit, fn, arg);
}

int calib_report_members(struct calib_store *st, const struct calib_report_filter *f,
			 const char *family, const char *stack, long long limit,
			 calib_report_member_fn *fn, void *arg)
{
	return st->ops->report_members(st, f, family, stack, limit, fn, arg);
}

int calib_report_probes(struct calib_store *st, const struct calib_report_filter *f,
			calib_report_probe_fn *fn, void *arg)
{
	return st->ops->report_probes(st, f, fn, arg);
}
