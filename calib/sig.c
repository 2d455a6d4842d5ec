/* sig.c - canonical JSON of a launch's parts and its three hashes. */
#include "calib/calib.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds a non-integral real to 15 significant digits so that values equal
 * up to float noise hash alike. */
static double round15(double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	return strtod(buf, NULL);
}

static json_t *number(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	if (!isfinite(v))
		return json_null();
	return json_real(round15(v));
}

/* A string that is wholly a number, or a number with a byte unit, as a JSON
 * number; NULL when it is neither. */
static json_t *string_number(const char *s)
{
	char *end;
	double v;
	uint64_t bytes;

	if (!*s || !(isdigit((unsigned char)*s) || ((*s == '-' || *s == '+' || *s == '.') && s[1])))
		return NULL;
	v = strtod(s, &end);
	if (end != s && !*end && isfinite(v))
		return number(v);
	if (isdigit((unsigned char)*s) && xl_parse_bytes(s, &bytes) && bytes < (1ull << 53))
		return json_integer((json_int_t)bytes);
	return NULL;
}

/* A normalized deep copy: nulls dropped, numbers normalized, and (when
 * units) numeric strings converted.  New reference. */
static json_t *normalize(const json_t *v, bool units)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		json_t *o = json_object();
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)v, k, x) {
			if (json_is_null(x))
				continue;
			json_t *n = normalize(x, units);

			if (json_is_null(n))
				json_decref(n);
			else
				json_object_set_new(o, k, n);
		}
		return o;
	}
	case JSON_ARRAY: {
		json_t *a = json_array();
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x)
			json_array_append_new(a, normalize(x, units));
		return a;
	}
	case JSON_INTEGER:
		return json_integer(json_integer_value(v));
	case JSON_REAL:
		return number(json_real_value(v));
	case JSON_STRING: {
		json_t *n = units ? string_number(json_string_value(v)) : NULL;

		return n ? n : json_string(json_string_value(v));
	}
	default:
		return json_incref((json_t *)v);
	}
}

static char *canonical_dump(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
				       JSON_REAL_PRECISION(15));

	if (!s)
		xl_oom();
	return s;
}

static void hash_subset(const json_t *parts, const char *const *keys, char hex[65])
{
	json_t *o = json_object();
	char *s;

	for (size_t i = 0; keys[i]; i++) {
		json_t *x = json_object_get(parts, keys[i]);

		if (x)
			json_object_set(o, keys[i], x);
	}
	s = canonical_dump(o);
	calib_sha256_hex(s, strlen(s), hex);
	free(s);
	json_decref(o);
}

int calib_signature(const json_t *parts, struct calib_sig *out)
{
	static const char *const shape_keys[] = {
		"model", "train", "parallel", "features", "hardware", NULL,
	};
	static const char *const stack_keys[] = { "bundle", "code", NULL };
	json_t *norm;
	const char *k;
	json_t *x, *hw;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(parts))
		return XL_EX_DATAERR;
	norm = json_object();
	json_object_foreach((json_t *)parts, k, x) {
		const char *key = k;
		bool units;

		if (json_is_null(x))
			continue;
		if (strcmp(k, "device") == 0) {
			if (json_object_get(parts, "hardware"))
				continue;
			key = "hardware";
		}
		units = strcmp(key, "code") != 0 && strcmp(key, "toggles") != 0 &&
			strcmp(key, "bundle") != 0 && strcmp(key, "argv") != 0;
		json_object_set_new(norm, key, normalize(x, units));
	}
	out->parts = norm;
	out->canonical = canonical_dump(norm);
	calib_sha256_hex(out->canonical, strlen(out->canonical), out->hash);
	hash_subset(norm, shape_keys, out->shape_hash);
	hash_subset(norm, stack_keys, out->stack_hash);
	hw = json_object_get(norm, "hardware");
	if (json_is_string(json_object_get(hw, "kind")))
		out->hardware_kind = xl_strdup(json_string_value(json_object_get(hw, "kind")));
	return 0;
}

void calib_sig_release(struct calib_sig *sig)
{
	if (!sig)
		return;
	free(sig->canonical);
	free(sig->hardware_kind);
	json_decref(sig->parts);
	memset(sig, 0, sizeof(*sig));
}
