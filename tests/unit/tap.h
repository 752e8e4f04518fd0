/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP producer for the C unit tests (run by ctest; the TAP lines are
 * for people and for `prove`).  A test that cannot run on this machine calls
 * tap_skip_all(reason): it prints "1..0 # SKIP reason" and exits 77, which
 * ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
 */
#ifndef KCROSS_TESTS_TAP_H
#define KCROSS_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap__n, tap__failed;

static inline void tap__vline(int ok, const char *fmt, va_list ap)
{
	printf("%sok %d - ", ok ? "" : "not ", ++tap__n);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		tap__failed++;
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap__vline(ok, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

__attribute__((format(printf, 1, 2)))
static inline void tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap__n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

__attribute__((format(printf, 1, 2), noreturn))
static inline void tap_skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("1..0 # SKIP ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	exit(77);
}

/* Each argument evaluated once: `got` is often the call under test. */
#define tap_eq_long(got, want, what)					\
	({								\
		long tap__got = (long)(got), tap__want = (long)(want);	\
		tap_ok(tap__got == tap__want, "%s: got %ld, want %ld",	\
		       (what), tap__got, tap__want);			\
	})

static inline int tap_done(void)
{
	printf("1..%d\n", tap__n);
	if (tap__failed)
		printf("# %d of %d failed\n", tap__failed, tap__n);
	return tap__failed ? 1 : 0;
}

#endif
