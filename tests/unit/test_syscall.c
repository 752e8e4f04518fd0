/* SPDX-License-Identifier: MIT */
/*
 * kc_syscallN and kc_sysN against libc: same answers, -errno conventions.
 * Runs natively and under qemu-user for aarch64 and ppc64le (the `sc` path).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kcross/syscall.h>
#include "tap.h"

/* A number no Linux architecture assigns. */
#define BOGUS_NR 4095

int main(void)
{
	char buf[8] = { 0 };
	int p[2];

	tap_eq_long(kc_syscall0(SYS_getppid), getppid(), "kc_syscall0(getppid)");
	tap_eq_long(kc_syscall0(SYS_gettid), syscall(SYS_gettid), "kc_syscall0(gettid)");
	tap_eq_long(kc_syscall0(SYS_getpid), getpid(), "kc_syscall0(getpid)");
	tap_eq_long(kc_sys0(SYS_getppid), getppid(), "kc_sys0(getppid)");
	tap_eq_long(kc_syscall0(BOGUS_NR), -ENOSYS, "unknown number gives -ENOSYS");
	tap_eq_long(kc_sys0(BOGUS_NR), -ENOSYS, "kc_sys0 unknown number gives -ENOSYS");
	tap_eq_long(kc_syscall1(SYS_close, -1), -EBADF, "close(-1) gives -EBADF");
	tap_eq_long(kc_sys1(SYS_close, -1), -EBADF, "kc_sys1 close(-1) gives -EBADF");

	/* Arguments reach the kernel in the right registers. */
	if (tap_ok(pipe(p) == 0, "pipe")) {
		tap_eq_long(kc_syscall3(SYS_write, p[1], (long)"kcross", 6), 6, "write 6 via kc_syscall3");
		tap_eq_long(kc_sys3(SYS_read, p[0], (long)buf, 6), 6, "read 6 via kc_sys3");
		tap_ok(!memcmp(buf, "kcross", 6), "bytes round-trip through the pipe");
		tap_eq_long(kc_syscall3(SYS_read, -1, (long)buf, 1), -EBADF, "read(-1) gives -EBADF");
		close(p[0]);
		close(p[1]);
	}
	/* Six arguments: pselect6-free check with a 4-arg openat and a 6-arg mmap. */
	{
		long fd = kc_syscall4(SYS_openat, AT_FDCWD, (long)"/nonexistent/kcross", O_RDONLY, 0);
		long addr = kc_syscall6(SYS_mmap, 0, 4096, 3 /* RW */, 0x22 /* PRIVATE|ANON */, -1, 0);

		tap_eq_long(fd, -ENOENT, "openat of a missing path gives -ENOENT");
		tap_ok(addr > 0 && (addr & 4095) == 0, "kc_syscall6(mmap) returns a page (%lx)", addr);
		if (addr > 0) {
			*(volatile char *)addr = 1;
			tap_eq_long(kc_syscall2(SYS_munmap, addr, 4096), 0, "munmap");
		}
		tap_eq_long(kc_syscall6(SYS_mmap, 0, 4096, 3, 0x22, -1, 1), -EINVAL,
			    "mmap with an unaligned offset gives -EINVAL (6th argument seen)");
	}
	return tap_done();
}
