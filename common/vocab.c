/* vocab.c - the names every module shares: outcomes and severities. */
#include "common.h"

#include <string.h>

static const char *const outcome_names[XL_OUT_COUNT] = {
	[XL_OUT_OOM] = "oom",
	[XL_OUT_CRASH] = "crash",
	[XL_OUT_TIMEOUT] = "timeout",
	[XL_OUT_ERROR] = "error",
	[XL_OUT_INTERRUPTED] = "interrupted",
	[XL_OUT_PEER_FAILED] = "peer-failed",
	[XL_OUT_COMPILE_STORM] = "compile-storm",
	[XL_OUT_OK] = "ok",
};

const char *xl_outcome_name(enum xl_outcome o)
{
	return (unsigned)o < XL_OUT_COUNT ? outcome_names[o] : "?";
}

bool xl_outcome_parse(const char *s, enum xl_outcome *out)
{
	for (int k = 0; s && k < XL_OUT_COUNT; k++) {
		if (strcmp(s, outcome_names[k]) == 0) {
			*out = (enum xl_outcome)k;
			return true;
		}
	}
	return false;
}

bool xl_outcome_set_parse(const char *s, unsigned *set)
{
	struct xl_strv parts = XL_STRV_INIT;
	bool ok = true;

	*set = 0;
	xl_strv_split(&parts, s, ",");
	for (size_t i = 0; i < parts.n && ok; i++) {
		enum xl_outcome o;

		if (strcmp(parts.v[i], "none") == 0)
			continue;
		if (xl_outcome_parse(parts.v[i], &o))
			*set |= 1u << o;
		else
			ok = false;
	}
	if (!parts.n)
		ok = false;
	xl_strv_release(&parts);
	return ok;
}

const char *xl_severity_name(enum xl_severity s)
{
	static const char *const names[] = {
		[XL_SEV_NOTE] = "note", [XL_SEV_WARNING] = "warning", [XL_SEV_ERROR] = "error",
	};

	return (unsigned)s <= XL_SEV_ERROR ? names[s] : "?";
}
