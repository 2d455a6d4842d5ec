/* probedoc.c - a probe document as the store keeps it (calib/store.h): its
 * uid, and its backends as rows, one per kind of device. */
#include "calib/store.h"

#include <stdlib.h>
#include <string.h>

char *calib_probe_uid(const char *host, double t, const char *doc_text)
{
	char *s = xl_asprintf("%s\n%.6f\n%s", host, t, doc_text);
	char hex[65];

	calib_sha256_hex(s, strlen(s), hex);
	free(s);
	return xl_strdup(hex);
}

size_t calib_probe_backends(const json_t *doc, struct calib_probe_backend **out)
{
	const json_t *b;
	size_t i, n = 0, cap = 0;

	*out = NULL;
	json_array_foreach(json_object_get(doc, "backends"), i, b) {
		const json_t *d;
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *state = json_string_value(json_object_get(b, "state"));
		size_t j, first = n;

		if (!name)
			continue;
		json_array_foreach(json_object_get(b, "devices"), j, d) {
			const char *kind = json_string_value(json_object_get(d, "kind"));
			const char *type = json_string_value(json_object_get(d, "type"));
			const json_t *m = json_object_get(d, "memory_bytes");
			int64_t mem = json_is_integer(m) ? (int64_t)json_integer_value(m) :
				      json_is_real(m) ? (int64_t)json_real_value(m) : -1;
			size_t k;

			for (k = first; k < n; k++)
				if (xl_streq((*out)[k].kind, kind) && xl_streq((*out)[k].type, type))
					break;
			if (k == n) {
				if (n == cap)
					*out = xl_realloc(*out, (cap = cap ? 2 * cap : 8) * sizeof(**out));
				(*out)[n++] = (struct calib_probe_backend){
					name, state, kind, type,
					json_string_value(json_object_get(d, "memory_source")), 0, -1 };
			}
			(*out)[k].count++;
			if (mem >= 0 && ((*out)[k].memory_bytes < 0 || mem < (*out)[k].memory_bytes))
				(*out)[k].memory_bytes = mem;
		}
		if (n == first) {
			if (n == cap)
				*out = xl_realloc(*out, (cap = cap ? 2 * cap : 8) * sizeof(**out));
			(*out)[n++] = (struct calib_probe_backend){ name, state, NULL, NULL, NULL, 0, -1 };
		}
	}
	return n;
}
