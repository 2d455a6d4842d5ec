/* dumpkeys.c - whether the dump flags `run` adds stay out of every
 * persistent-cache key, by the key rules compiled into the binary
 * (tools/gen-cachekeys from etc/cachekeys.yaml), so no launch parses YAML
 * for it. */
#include "launcher/run/dumpsetup.h"
#include "launcher/flags/flags.h"
#include <stdio.h>
#include <string.h>

static bool in_list(const char *const *list, const char *name)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* Whether runtime r leaves flag NAME ("--xla_x") out of its key: in its
 * exclude list and none of its exceptions. */
static bool out_of_key(const struct xl_ck_runtime *r, const char *name)
{
	if (!in_list(r->exclude, name))
		return false;
	for (size_t k = 0; k < r->nexceptions; k++)
		if (r->exceptions[k].flag && strcmp(r->exceptions[k].flag, name) == 0)
			return false;
	return true;
}

bool xl_xla_dump_keyless_rules(const struct xl_ck_runtime *rts, size_t n, char *why, size_t size)
{
	static const char *const names[] = {
		"--xla_dump_to", "--xla_dump_hlo_as_text", "--xla_dump_disable_metadata", NULL,
	};

	if (n == 0) {
		snprintf(why, size, "not asked: etc/cachekeys.yaml names no runtime");
		return false;
	}
	for (size_t i = 0; names[i]; i++)
		for (size_t k = 0; k < n; k++)
			if (!out_of_key(&rts[k], names[i])) {
				snprintf(why, size, "not asked: %s would enter %s's persistent-cache key"
					 " (etc/cachekeys.yaml)", names[i], rts[k].name);
				return false;
			}
	return true;
}
