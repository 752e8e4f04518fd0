/* SPDX-License-Identifier: MIT */
/*
 * The syscall mechanism selection, with injected AT_HWCAP2 values: the rule
 * is tested on every architecture, including the scv branch that qemu-user
 * can never take.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kcross/syscall.h>
#include "tap.h"

#define SCV_BIT 0x00100000UL

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
	expect(0, "auto", 0, KC_SYSMECH_NATIVE == KC_SYSMECH_SC ? KC_SYSMECH_SC : KC_SYSMECH_NATIVE);
	expect(0, "libc", 0, KC_SYSMECH_LIBC);
	expect(0, "bogus", -EINVAL, 0);
	expect(~0UL, "libc", 0, KC_SYSMECH_LIBC);

#if defined(KC_ARCH_PPC64LE)
	expect(SCV_BIT, NULL, 0, KC_SYSMECH_SCV);
	expect(SCV_BIT, "auto", 0, KC_SYSMECH_SCV);
	expect(SCV_BIT, "sc", 0, KC_SYSMECH_SC);
	expect(SCV_BIT, "scv", 0, KC_SYSMECH_SCV);
	expect(0, "scv", -ENOTSUP, 0);
	expect(~SCV_BIT, NULL, 0, KC_SYSMECH_SC);
	expect(0, "syscall", -ENOTSUP, 0);
#elif defined(KC_ARCH_X86_64)
	expect(SCV_BIT, NULL, 0, KC_SYSMECH_SYSCALL);
	expect(0, "syscall", 0, KC_SYSMECH_SYSCALL);
	expect(~0UL, "scv", -ENOTSUP, 0);
	expect(0, "svc", -ENOTSUP, 0);
#elif defined(KC_ARCH_AARCH64)
	expect(SCV_BIT, NULL, 0, KC_SYSMECH_SVC);
	expect(0, "svc", 0, KC_SYSMECH_SVC);
	expect(~0UL, "scv", -ENOTSUP, 0);
#endif

	/* The live selection: started at the native one (no KCROSS_SYSCALL
	 * set by ctest), switchable, and every switch still gives right answers. */
	tap_ok(getenv("KCROSS_SYSCALL") || kc_syscall_init_error() == 0, "no start-up error");
	tap_ok(avail & 1u << KC_SYSMECH_NATIVE && avail & 1u << KC_SYSMECH_LIBC,
	       "native and libc mechanisms always available (mask %#x)", avail);
	for (int m = 0; m < KC_SYSMECH_COUNT; m++) {
		int rc = kc_syscall_select((enum kc_sysmech)m);

		if (!(avail & 1u << m)) {
			tap_ok(rc == -ENOTSUP, "select %s refused here (rc %d)", kc_sysmech_name(m), rc);
			continue;
		}
		tap_ok(rc == 0 && kc_syscall_mechanism() == (enum kc_sysmech)m,
		       "select %s", kc_sysmech_name(m));
		tap_eq_long(kc_sys0(SYS_getppid), getppid(), "getppid through the selection");
		tap_eq_long(kc_sys1(SYS_close, -1), -EBADF, "-EBADF through the selection");
		tap_eq_long(kc_sys0(4095), -ENOSYS, "-ENOSYS through the selection");
	}
	tap_ok(kc_syscall_select(KC_SYSMECH_COUNT) == -ENOTSUP, "out-of-range mechanism refused");
	return tap_done();
}
