/* fuzz_flags.c - the composite-flag tokenizer, and the property that a
 * formatted map parses back to itself. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"

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
	xl_flagmap_release(&m);
	xl_flagmap_release(&m2);
	free(s);
	return 0;
}
