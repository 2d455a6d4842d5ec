/* handle.c - what a driver calls on the store's handle (calib/driver.h):
 * the failure message, with the location's passwords never shown, the
 * passwords a driver finds, and the store's wait. */
#include "calib/driver.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* How long a write waits for another process's lock before it gives up
 * (the record is then kept by the caller); calib_set_wait() changes it. */
static double retry_limit_s = 30.0;

void calib_set_wait(double seconds)
{
	retry_limit_s = seconds;
}

double calib_wait_limit(void)
{
	return retry_limit_s;
}

/* True when hit (len bytes, inside s) stands alone: no letter or digit
 * right before or after it. */
static bool alone(const char *s, const char *hit, size_t len)
{
	return (hit == s || !isalnum((unsigned char)hit[-1])) && !isalnum((unsigned char)hit[len]);
}

/* s with each secret shown as "***": everywhere when it is 6 bytes or
 * more, else where it stands alone (a short password is not looked for
 * inside words such as "unreachable").  Caller frees. */
static char *scrub(const char *s, const struct xl_strv *secrets)
{
	char *out = xl_strdup(s);

	for (size_t i = 0; i < secrets->n; i++) {
		const char *sec = secrets->v[i];
		size_t len = strlen(sec);
		struct xl_buf b = XL_BUF_INIT;
		const char *p = out, *hit;

		if (!len || !strstr(out, sec))
			continue;
		while ((hit = strstr(p, sec))) {
			bool hide = len >= 6 || alone(out, hit, len);

			xl_buf_add(&b, p, (size_t)(hit - p));
			xl_buf_adds(&b, hide ? "***" : sec);
			p = hit + len;
		}
		xl_buf_adds(&b, p);
		free(out);
		out = xl_buf_detach(&b);
	}
	return out;
}

int calib_fail(struct calib_store *st, int code, const char *fmt, ...)
{
	struct xl_buf b = XL_BUF_INIT;
	va_list ap;

	xl_buf_addf(&b, "store '%s': ", st->location);
	va_start(ap, fmt);
	xl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(st->err);
	st->err = scrub(xl_buf_str(&b), &st->secrets);
	xl_buf_release(&b);
	return code;
}

void calib_add_secret(struct calib_store *st, const char *secret)
{
	char *shown;

	if (!secret || !*secret || xl_strv_contains(&st->secrets, secret))
		return;
	xl_strv_push(&st->secrets, secret);
	shown = scrub(st->location, &st->secrets);
	free(st->location);
	st->location = shown;
}
