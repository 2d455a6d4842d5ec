/* policy.c - checks on a resolved profile (placeholder until the flag
 * catalogs land; replaced by the catalog-based checks). */
#include "launcher/launcher.h"

int xl_profile_check(const struct xl_ctx *ctx, struct xl_profile *p)
{
	(void)ctx;
	(void)p;
	return 0;
}
