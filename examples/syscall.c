/* SPDX-License-Identifier: MIT */
/*
 * examples/syscall.c - raw system calls with libkcross.
 *
 *   cc -o syscall syscall.c $(pkg-config --cflags --libs --static kcross)
 *   ./syscall                     # the fastest mechanism this machine offers
 *   KCROSS_SYSCALL=libc ./syscall # forced through syscall(3)
 *
 * kc_syscallN(nr, args...) is the architecture's instruction, inline;
 * kc_sysN(nr, args...) is the mechanism chosen at start-up.  Both return the
 * result or -errno (errno is never touched).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kcross/kcross.h>

/*
 * After kc_syscall_select, the calls that should take the new mechanism are
 * made from a function entered afterwards: a running function may keep the
 * choice it read (on ppc64le it reads it once, to keep the test out of loops).
 */
static __attribute__((noinline)) long getppid_selected(void)
{
	return kc_sys0(SYS_getppid);
}

int main(void)
{
	const char *bad = kc_settings_error();
	char avail[64] = "";
	long r;

	/* A bad KCROSS_SYSCALL (or KCROSS_VDSO): one line, exit 2. */
	if (bad) {
		fprintf(stderr, "syscall: %s\n", bad);
		return 2;
	}
	if (kc_syscall_init_error()) {
		fprintf(stderr, "syscall: KCROSS_SYSCALL=%s: %s\n", kc_syscall_forced(),
			strerror(-kc_syscall_init_error()));
		return 2;
	}
	for (int m = 0; m < KC_SYSMECH_COUNT; m++)
		if (kc_syscall_available() & 1u << m)
			snprintf(avail + strlen(avail), sizeof(avail) - strlen(avail), "%s%s",
				 *avail ? ", " : "", kc_sysmech_name((enum kc_sysmech)m));
	printf("architecture %s: native mechanism %s, available: %s\n", KC_ARCH_NAME,
	       KC_SYSMECH_NATIVE_NAME, avail);
	printf("mechanism in use: %s (KCROSS_SYSCALL=%s)\n",
	       kc_sysmech_name(kc_syscall_mechanism()),
	       kc_syscall_forced() ? kc_syscall_forced() : "unset");

	/* A result. */
	r = kc_sys0(SYS_getpid);
	printf("getpid: %ld (libc: %d)\n", r, (int)getpid());
	if (r != getpid())
		return 1;

	/* Arguments: three of them, straight to the kernel (past stdio's buffer). */
	fflush(stdout);
	r = kc_syscall3(SYS_write, STDOUT_FILENO, (long)"write: through kc_syscall3\n", 27);
	if (r != 27)
		return 1;

	/* An error: -errno, not -1 and errno. */
	r = kc_sys1(SYS_close, -1);
	printf("close(-1): %ld (%s)\n", r, strerror((int)-r));
	if (r != -EBADF)
		return 1;

	/* Switch mechanism at run time (at start-up: before starting threads). */
	if (kc_syscall_select(KC_SYSMECH_LIBC) != 0)
		return 1;
	r = getppid_selected();
	printf("after kc_syscall_select(libc): mechanism %s, getppid %ld (libc: %d)\n",
	       kc_sysmech_name(kc_syscall_mechanism()), r, (int)getppid());
	if (r != getppid())
		return 1;
	puts("syscall example: ok");
	return 0;
}
