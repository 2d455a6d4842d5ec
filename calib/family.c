/* family.c - memory kinds and bases, and the family of a launch: the job at
 * one size, less the numbers its sizes differ in (its coordinates). */
#include "calib/store.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------ */

static const char *const kind_names[CALIB_KIND_COUNT] = {
	[CALIB_KIND_DEVICE_PEAK] = "device_peak",
	[CALIB_KIND_HOST_PEAK_RSS] = "host_peak_rss",
	[CALIB_KIND_HOST_PEAK_VM] = "host_peak_vm",
	[CALIB_KIND_XLA_BUFFERS] = "xla_buffers",
	[CALIB_KIND_OOM_REQUEST] = "oom_request",
	[CALIB_KIND_UNCLASSIFIED] = "unclassified",
};

static const char *const basis_names[CALIB_BASIS_COUNT] = {
	[CALIB_BASIS_NONE] = "none",
	[CALIB_BASIS_LEARNED] = "learned",
	[CALIB_BASIS_COMPILER] = "compiler",
	[CALIB_BASIS_REPORTED] = "reported",
	[CALIB_BASIS_ANALYTIC] = "analytic",
	[CALIB_BASIS_UNCLASSIFIED] = "unclassified",
};

const char *calib_kind_name(enum calib_kind k)
{
	return (unsigned)k < CALIB_KIND_COUNT ? kind_names[k] : "?";
}

bool calib_kind_parse(const char *s, enum calib_kind *out)
{
	for (int k = 0; s && k < CALIB_KIND_COUNT; k++)
		if (strcmp(s, kind_names[k]) == 0) {
			*out = (enum calib_kind)k;
			return true;
		}
	return false;
}

const char *calib_basis_name(enum calib_basis b)
{
	return (unsigned)b < CALIB_BASIS_COUNT ? basis_names[b] : "?";
}

bool calib_basis_parse(const char *s, enum calib_basis *out)
{
	for (int b = 0; s && b < CALIB_BASIS_COUNT; b++)
		if (strcmp(s, basis_names[b]) == 0) {
			*out = (enum calib_basis)b;
			return true;
		}
	return false;
}

bool calib_parts_on_host(const json_t *parts)
{
	const json_t *hw = json_object_get(parts, "hardware");
	const char *type, *kind;

	if (!hw)
		hw = json_object_get(parts, "device");
	if (!json_is_object(hw))
		return false;
	type = json_string_value(json_object_get(hw, "type"));
	if (type)
		return strcmp(type, "host") == 0;
	kind = json_string_value(json_object_get(hw, "kind"));
	return kind && strcasestr(kind, "cpu") != NULL;
}

/* ---- the family -------------------------------------------------------------------- */

/* s as a finite number when it is wholly one ("8", "1e-3", "-2.5"). */
static bool numeric(const char *s, double *v)
{
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	*v = strtod(s, &end);
	return end != s && !*end && isfinite(*v);
}

static json_t *number(double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* Sets coords[name] = v, naming a second coordinate of the same name
 * "NAME (2)", and so on. */
static void coord_set(json_t *coords, const char *name, double v)
{
	char *n = xl_strdup(name);

	for (int i = 2; json_object_get(coords, n); i++) {
		free(n);
		n = xl_asprintf("%s (%d)", name, i);
	}
	json_object_set_new(coords, n, number(v));
	free(n);
}

/* Moves parts.SECTION.KEY into coords[name] when it is a number. */
static bool take_number(json_t *skel, const char *section, const char *key, json_t *coords,
			const char *name)
{
	json_t *sec = json_object_get(skel, section);
	json_t *x = json_object_get(sec, key);

	if (!json_is_number(x))
		return false;
	coord_set(coords, name, json_number_value(x));
	json_object_del(sec, key);
	if (json_object_size(sec) == 0)
		json_object_del(skel, section);
	return true;
}

/* Whether the len bytes at s are the key of a trainer's key=value argument
 * (per_device_batch_size=4, model.seq_len=2048): a letter or '_', then
 * letters, digits, '_', '.' and '-'. */
static bool key_word(const char *s, size_t len)
{
	if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

/* Numbers in argv become coordinates; the skeleton keeps "#" in their place. */
static void take_argv(json_t *argv, json_t *coords)
{
	size_t n = json_array_size(argv);

	for (size_t i = 1; i < n; i++) {
		const char *a = json_string_value(json_array_get(argv, i));
		const char *prev = json_string_value(json_array_get(argv, i - 1));
		const char *eq;
		double v, pv;

		if (!a)
			continue;
		if (numeric(a, &v)) {
			char *name;

			/* "--batch 64": named by its option ("-1 2" is two numbers) */
			if (prev && prev[0] == '-' && !strchr(prev, '=') && !numeric(prev, &pv))
				name = xl_strdup(prev);
			else
				name = xl_asprintf("arg %zu", i);
			coord_set(coords, name, v);
			free(name);
			json_array_set_new(argv, i, json_string("#"));
		} else if ((eq = strchr(a, '=')) && numeric(eq + 1, &v) &&
			   (a[0] == '-' || key_word(a, (size_t)(eq - a)))) {
			/* "--batch=64", and a trainer's "per_device_batch_size=64" */
			char *name = xl_strndup(a, (size_t)(eq - a));
			char *skel = xl_asprintf("%s=#", name);

			coord_set(coords, name, v);
			json_array_set_new(argv, i, json_string(skel));
			free(skel);
			free(name);
		}
	}
}

int calib_family(const json_t *parts, char hash[65], json_t **coords)
{
	struct calib_sig sig;
	json_t *skel, *toggles, *env, *argv;
	const char *k;
	json_t *x;
	char *text;

	*coords = NULL;
	hash[0] = '\0';
	if (calib_signature(parts, &sig) != 0)
		return XL_EX_DATAERR;
	skel = json_deep_copy(sig.parts);
	calib_sig_release(&sig);
	*coords = json_object();
	json_object_del(skel, "bundle");
	json_object_del(skel, "code");
	toggles = json_object_get(skel, "toggles");
	json_object_del(toggles, "limits");
	take_number(skel, "train", "micro_batch", *coords, "micro_batch");
	if (!take_number(skel, "train", "seq", *coords, "seq"))
		take_number(skel, "model", "seq", *coords, "seq");
	env = json_object_get(toggles, "env");
	json_object_foreach(env, k, x) {
		double v;

		if (json_is_string(x) && numeric(json_string_value(x), &v)) {
			char *name = xl_asprintf("env %s", k);

			coord_set(*coords, name, v);
			free(name);
			json_object_set_new(env, k, json_string("#"));
		}
	}
	argv = json_object_get(skel, "argv");
	if (json_is_array(argv))
		take_argv(argv, *coords);
	/* the skeleton's own version, so that a later rule can tell itself apart */
	json_object_set_new(skel, "family", json_integer(1));
	text = json_dumps(skel, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	if (!text)
		xl_oom();
	calib_sha256_hex(text, strlen(text), hash);
	free(text);
	json_decref(skel);
	return 0;
}
