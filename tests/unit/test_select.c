/* SPDX-License-Identifier: MIT */
/*
 * The syscall mechanism selection, with injected AT_HWCAP2 values: the rule
 * is tested on every architecture, including the scv branch that qemu-user
 * can never take.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kcross/settings.h>
#include <kcross/syscall.h>
#include "tap.h"

/*
 * Every mechanism name some architecture uses.  The test names them (the
 * library never does) to show that a name that is not this architecture's
 * is refused as unknown, not as unavailable.
 */
static const char *const every_arch_name[] = { "syscall", "svc", "sc", "scv" };

static int is_this_arch_name(const char *n)
{
	return !strcmp(n, KC_SYSMECH_NATIVE_NAME)
#if KC_HAVE_SYSCALL_ALT
	       || !strcmp(n, KC_SYSMECH_ALT_NAME)
#endif
		;
}

/*
 * syscall(3), interposed: counts the calls that reach it, so that the test
 * sees which mechanism kc_sys really took (libc: through here; the others:
 * the instruction inline), then makes the call with the inline instruction.
 */
static volatile unsigned long libc_calls;

long syscall(long n, ...)
{
	long a[6];
	va_list ap;
	long r;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	libc_calls++;
	r = kc_syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * The calls through the selection, in a function entered after
 * kc_syscall_select returned (the contract: a running function may keep the
 * choice it read; on ppc64le the compiler reads it once per function).
 * Returns how many of its three calls went through syscall(3).
 */
static __attribute__((noinline)) unsigned long through_selection(const char *name)
{
	unsigned long before = libc_calls;

	long r;

	r = kc_sys0(SYS_getppid);
	tap_ok(r == getppid(), "getppid through the selection (%s): %ld", name, r);
	r = kc_sys1(SYS_close, -1);
	tap_ok(r == -EBADF, "-EBADF through the selection (%s): %ld", name, r);
	r = kc_sys0(4095);
	tap_ok(r == -ENOSYS, "-ENOSYS through the selection (%s): %ld", name, r);
	return libc_calls - before;
}

static void expect(unsigned long hwcap2, const char *force, int want_rc,
		   enum kc_sysmech want)
{
	enum kc_sysmech got = KC_SYSMECH_COUNT;
	int rc = kc_syscall_choose(hwcap2, force, &got);

	if (want_rc)
		tap_ok(rc == want_rc, "hwcap2=%#lx force=%s: rc %d, want %d", hwcap2,
		       force ? force : "(none)", rc, want_rc);
	else
		tap_ok(rc == 0 && got == want, "hwcap2=%#lx force=%s: %s (rc %d), want %s",
		       hwcap2, force ? force : "(none)", kc_sysmech_name(got), rc,
		       kc_sysmech_name(want));
}

int main(void)
{
	unsigned int avail = kc_syscall_available();

	/* Rules common to every architecture. */
	expect(0, NULL, 0, KC_SYSMECH_NATIVE);
	expect(0, "", 0, KC_SYSMECH_NATIVE);
	expect(0, "auto", 0, KC_SYSMECH_NATIVE);
	expect(0, "libc", 0, KC_SYSMECH_LIBC);
	expect(0, KC_SYSMECH_NATIVE_NAME, 0, KC_SYSMECH_NATIVE);
	expect(~0UL, KC_SYSMECH_NATIVE_NAME, 0, KC_SYSMECH_NATIVE);
	expect(0, "bogus", -EINVAL, 0);
	expect(0, "native", -EINVAL, 0);	/* enum spellings are not names */
	expect(0, "alt", -EINVAL, 0);
	expect(~0UL, "libc", 0, KC_SYSMECH_LIBC);
	tap_ok(!strcmp(kc_sysmech_name(KC_SYSMECH_NATIVE), KC_SYSMECH_NATIVE_NAME),
	       "native mechanism is named %s", kc_sysmech_name(KC_SYSMECH_NATIVE));
	tap_ok(!strcmp(kc_sysmech_name(KC_SYSMECH_LIBC), "libc"), "libc is named libc");
	tap_ok(!strcmp(kc_sysmech_name(KC_SYSMECH_COUNT), "unknown"), "out of range is unknown");

	/* Another architecture's mechanism is not a mechanism here at all. */
	for (size_t i = 0; i < sizeof(every_arch_name) / sizeof(every_arch_name[0]); i++)
		if (!is_this_arch_name(every_arch_name[i])) {
			expect(0, every_arch_name[i], -EINVAL, 0);
			expect(~0UL, every_arch_name[i], -EINVAL, 0);
		}

#if KC_HAVE_SYSCALL_ALT
	/* The alternative: offered exactly when AT_HWCAP2 has its bits. */
	tap_ok(!strcmp(kc_sysmech_name(KC_SYSMECH_ALT), KC_SYSMECH_ALT_NAME),
	       "alternative mechanism is named %s", kc_sysmech_name(KC_SYSMECH_ALT));
	expect(KC_SYSMECH_ALT_HWCAP2, NULL, 0, KC_SYSMECH_ALT);
	expect(KC_SYSMECH_ALT_HWCAP2, "auto", 0, KC_SYSMECH_ALT);
	expect(KC_SYSMECH_ALT_HWCAP2, KC_SYSMECH_NATIVE_NAME, 0, KC_SYSMECH_NATIVE);
	expect(KC_SYSMECH_ALT_HWCAP2, KC_SYSMECH_ALT_NAME, 0, KC_SYSMECH_ALT);
	expect(0, KC_SYSMECH_ALT_NAME, -ENOTSUP, 0);
	expect(~KC_SYSMECH_ALT_HWCAP2, NULL, 0, KC_SYSMECH_NATIVE);
	expect(~KC_SYSMECH_ALT_HWCAP2, KC_SYSMECH_ALT_NAME, -ENOTSUP, 0);
#else
	/* No alternative: no AT_HWCAP2 value makes one appear. */
	tap_ok(!strcmp(kc_sysmech_name(KC_SYSMECH_ALT), "unknown"),
	       "no alternative mechanism here: named unknown");
	expect(~0UL, NULL, 0, KC_SYSMECH_NATIVE);
	expect(~0UL, "auto", 0, KC_SYSMECH_NATIVE);
	tap_ok(!(avail & 1u << KC_SYSMECH_ALT), "alternative never available (mask %#x)", avail);
#endif

	/* KCROSS_SYSCALL's valid values are this architecture's names. */
	{
		char *saved = getenv("KCROSS_SYSCALL") ? strdup(getenv("KCROSS_SYSCALL")) : NULL;
		const char *e;

		for (size_t i = 0; i < sizeof(every_arch_name) / sizeof(every_arch_name[0]); i++) {
			setenv("KCROSS_SYSCALL", every_arch_name[i], 1);
			e = kc_settings_error();
			if (is_this_arch_name(every_arch_name[i]))
				tap_ok(!e, "KCROSS_SYSCALL=%s accepted here", every_arch_name[i]);
			else
				tap_ok(e && strstr(e, "not one of") && strstr(e, KC_SYSMECH_NATIVE_NAME),
				       "KCROSS_SYSCALL=%s refused: %s", every_arch_name[i], e ? e : "(accepted)");
		}
		setenv("KCROSS_SYSCALL", "libc", 1);
		tap_ok(!kc_settings_error(), "KCROSS_SYSCALL=libc accepted");
		setenv("KCROSS_SYSCALL", "auto", 1);
		tap_ok(!kc_settings_error(), "KCROSS_SYSCALL=auto accepted");
		if (saved)
			setenv("KCROSS_SYSCALL", saved, 1);
		else
			unsetenv("KCROSS_SYSCALL");
		free(saved);
	}

	/* The live selection: started at the native one (no KCROSS_SYSCALL
	 * set by ctest), switchable, and every switch still gives right answers. */
	tap_ok(getenv("KCROSS_SYSCALL") || kc_syscall_init_error() == 0, "no start-up error");
	tap_ok(avail & 1u << KC_SYSMECH_NATIVE && avail & 1u << KC_SYSMECH_LIBC,
	       "native and libc mechanisms always available (mask %#x)", avail);
	for (int m = 0; m < KC_SYSMECH_COUNT; m++) {
		int rc = kc_syscall_select((enum kc_sysmech)m);
		unsigned long calls;

		if (!(avail & 1u << m)) {
			tap_ok(rc == -ENOTSUP, "select %s refused here (rc %d)", kc_sysmech_name(m), rc);
			continue;
		}
		tap_ok(rc == 0 && kc_syscall_mechanism() == (enum kc_sysmech)m,
		       "select %s", kc_sysmech_name(m));
		calls = through_selection(kc_sysmech_name(m));
		tap_ok(calls == (m == KC_SYSMECH_LIBC ? 3u : 0u),
		       "%s: %lu of 3 calls through syscall(3)", kc_sysmech_name(m), calls);
	}
	tap_ok(kc_syscall_select(KC_SYSMECH_COUNT) == -ENOTSUP, "out-of-range mechanism refused");
	return tap_done();
}
