/* fuzz_flags.c - the composite-flag tokenizer, the property that a
 * formatted map parses back to itself, and a value merged as a profile
 * layer merges it (list-valued flags repeated, no flags file read). */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/profile/layer.h"
#include "launcher/flags/xlareader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xl_strndup((const char *)data, size);
	struct xl_tokens t;
	struct xl_flagmap m = { NULL, 0, 0 }, m2 = { NULL, 0, 0 };
	struct xl_prov src = { "fuzz", 1, 1 };
	char *err = NULL;

	xl_verbosity = -2;
	if (strlen(s) != size) {
		free(s);
		return 0; /* an environment variable cannot hold NUL */
	}
	if (xl_flags_tokenize(s, &t, &err))
		xl_tokens_release(&t);
	free(err);
	err = NULL;
	if (xl_flagmap_parse(&m, s, src, &err)) {
		char *f = xl_flagmap_format(&m), *f2;

		/* a value holding both a quote and whitespace cannot round-trip,
		 * nor a backslash after a name XLA's quote rule does not apply to
		 * (a byte outside [-_A-Za-z0-9]); everything else must */
		if (xl_flagmap_parse(&m2, f, src, &err)) {
			f2 = xl_flagmap_format(&m2);
			if (strcmp(f, f2) != 0 && !strpbrk(s, "\"'\\"))
				abort();
			free(f2);
		}
		free(f);
	}
	free(err);
	err = NULL;
	xl_flagmap_release(&m);
	xl_flagmap_release(&m2);
	/* two layers: the second value's flags replace the first's, lists
	 * whole; every entry keeps a name and a place */
	{
		struct xl_prov at, src2 = { "fuzz2", 2, 1 };
		size_t half = size / 2;
		char *first = xl_strndup(s, half);

		if (xl_flagmap_read(&m, "XLA_FLAGS", first, src, NULL, &at, &err) &&
		    xl_flagmap_read(&m, "XLA_FLAGS", s + half, src2, NULL, &at, &err)) {
			for (size_t i = 0; i < m.n; i++)
				if (!m.v[i].name || !m.v[i].src.file ||
				    (m.v[i].prev.file && !xl_xla_list_valued(xl_catalog_flag("XLA_FLAGS", m.v[i].name))))
					abort();
			free(xl_flagmap_format(&m));
		}
		free(err);
		free(first);
		xl_flagmap_release(&m);
	}
	free(s);
	return 0;
}
