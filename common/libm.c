/* libm.c - the C math functions the program calls, each taken from
 * libm.so.6 the first time it is called.
 *
 * The binary is not linked with -lm.  A shared library on the link line is
 * mapped and relocated at every start, and libm was the one that `exec`
 * paid for without using: a launch does no math the compiler does not
 * inline, while loading libm cost about 100 us of a 2 ms start
 * (tests/bench/RESULTS.md, "libm on first use").  The calibration fits,
 * the reports, the probes and SQLite's SQL math functions do use it: the
 * first call of each function below opens libm.so.6 (once per process)
 * and looks the function up; later calls go straight to it.  Same
 * mechanism as libpq in calib/postgres.c.
 *
 * The definitions carry the standard names so that the static SQLite and
 * our own objects bind to them; the executable does not export them
 * unless a shared library linked at build time needs them (a build with
 * STATIC_DEPS=0), and then that library's calls come here too and reach
 * the same libm.  A libm that cannot be opened ends the process (70): it is
 * part of every glibc system, so that is a broken installation. */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static void *libm_handle(void)
{
	static void *handle;
	void *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);

	if (!h) {
		h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();

			fprintf(stderr, "xlaunch: error: cannot load libm.so.6: %s\n", e ? e : "dlopen failed");
			_exit(XL_EX_SOFTWARE);
		}
		__atomic_store_n(&handle, h, __ATOMIC_RELEASE);
	}
	return h;
}

/* the address of NAME in libm, kept in *SLOT after the first call */
static void *libm_fn(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(libm_handle(), name);
		if (!f) {
			fprintf(stderr, "xlaunch: error: libm.so.6 has no %s\n", name);
			_exit(XL_EX_SOFTWARE);
		}
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

#define XL_LIBM1(ret, name, t1) \
	ret name(t1 a); \
	ret name(t1 a) \
	{ \
		static void *slot; \
		ret (*f)(t1); \
		*(void **)&f = libm_fn(&slot, #name); \
		return f(a); \
	}
#define XL_LIBM2(ret, name, t1, t2) \
	ret name(t1 a, t2 b); \
	ret name(t1 a, t2 b) \
	{ \
		static void *slot; \
		ret (*f)(t1, t2); \
		*(void **)&f = libm_fn(&slot, #name); \
		return f(a, b); \
	}
#define XL_LIBM3(ret, name, t1, t2, t3) \
	ret name(t1 a, t2 b, t3 c); \
	ret name(t1 a, t2 b, t3 c) \
	{ \
		static void *slot; \
		ret (*f)(t1, t2, t3); \
		*(void **)&f = libm_fn(&slot, #name); \
		return f(a, b, c); \
	}

/* ours: calib/, launcher/report/, probe/, common/ */
XL_LIBM1(double, floor, double)
XL_LIBM1(double, ceil, double)
XL_LIBM1(double, round, double)
XL_LIBM1(long, lround, double)
XL_LIBM1(long long, llround, double)
XL_LIBM2(double, fmax, double, double)
XL_LIBM2(double, fmin, double, double)
XL_LIBM3(float, fmaf, float, float, float)
XL_LIBM1(double, log10, double)
XL_LIBM1(double, log2, double)
XL_LIBM1(double, exp2, double)
/* ours and SQLite's */
XL_LIBM2(double, pow, double, double)
XL_LIBM1(double, log, double)
XL_LIBM1(double, exp, double)
XL_LIBM1(double, sqrt, double)
XL_LIBM1(double, trunc, double)
XL_LIBM2(double, fmod, double, double)
/* SQLite's SQL math functions */
XL_LIBM1(double, sin, double)
XL_LIBM1(double, cos, double)
XL_LIBM1(double, tan, double)
XL_LIBM1(double, asin, double)
XL_LIBM1(double, acos, double)
XL_LIBM1(double, atan, double)
XL_LIBM2(double, atan2, double, double)
XL_LIBM1(double, sinh, double)
XL_LIBM1(double, cosh, double)
XL_LIBM1(double, tanh, double)
XL_LIBM1(double, asinh, double)
XL_LIBM1(double, acosh, double)
XL_LIBM1(double, atanh, double)
