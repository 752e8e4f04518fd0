/* SPDX-License-Identifier: MIT */
/*
 * kc_syscall0..6 (the inline instruction) and kc_sys0..6 (the run-time
 * choice, under every mechanism this machine offers) against libc and the
 * kernel's documented results.  Every argument position is checked with a
 * system call whose result depends on it, so a wrong register for any
 * argument fails a test, and every -errno convention is exercised:
 *
 *   0  getppid; an unassigned number gives -ENOSYS
 *   1  dup (the new descriptor shares the offset); close(-1) gives -EBADF
 *   2  clock_gettime writes a struct bracketed by libc's; a bad clock id
 *      gives -EINVAL and a bad pointer (2nd argument) -EFAULT;
 *      memfd_create with unknown flags (2nd) gives -EINVAL
 *   3  lseek: the result is computed from all three arguments
 *   4  pwrite64/pread64 at an offset (4th argument): the bytes land there
 *   5  mremap(MREMAP_MAYMOVE | MREMAP_FIXED) returns its 5th argument, the
 *      new address, and the page's content moves there; an unaligned 5th
 *      argument gives -EINVAL.  statx writes its buffer at the 5th
 *      argument; a bad one gives -EFAULT.
 *   6  mmap of a memfd, MAP_SHARED: the 5th argument (fd) picks the file
 *      and the 6th (offset) the page, both checked by content; a bad fd
 *      gives -EBADF, an unaligned offset -EINVAL.  copy_file_range copies
 *      its 5th argument's count of bytes; a non-zero 6th (flags) is -EINVAL.
 *
 * Runs natively and under qemu-user for aarch64 and ppc64le (the `sc` path).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <kcross/syscall.h>
#include "tap.h"

/* A number no Linux architecture assigns. */
#define BOGUS_NR 4095
/* Not a clock id (the dynamic clock ids are negative). */
#define BOGUS_CLOCK 1000

#ifndef MFD_CLOEXEC
# define MFD_CLOEXEC 1u
#endif
#ifndef MREMAP_MAYMOVE
# define MREMAP_MAYMOVE 1
#endif
#ifndef MREMAP_FIXED
# define MREMAP_FIXED 2
#endif
#ifndef AT_EMPTY_PATH
# define AT_EMPTY_PATH 0x1000
#endif

/* The seven entry points of one family, called through the same table. */
struct family {
	const char *name;
	long (*s0)(long);
	long (*s1)(long, long);
	long (*s2)(long, long, long);
	long (*s3)(long, long, long, long);
	long (*s4)(long, long, long, long, long);
	long (*s5)(long, long, long, long, long, long);
	long (*s6)(long, long, long, long, long, long, long);
};

static const struct family inline_family = {
	"kc_syscall", kc_syscall0, kc_syscall1, kc_syscall2, kc_syscall3,
	kc_syscall4, kc_syscall5, kc_syscall6,
};

static const struct family dispatched_family = {
	"kc_sys", kc_sys0, kc_sys1, kc_sys2, kc_sys3, kc_sys4, kc_sys5, kc_sys6,
};

static long page;

static long ts_ns(const struct timespec *t)
{
	return (long)t->tv_sec * 1000000000L + t->tv_nsec;
}

/* A memfd of three pages, page k filled with byte base + k; -errno on failure. */
static long make_memfd(const struct family *f, char base)
{
	long fd = f->s2(SYS_memfd_create, (long)"kcross-test", MFD_CLOEXEC);
	char *buf;

	if (fd < 0)
		return fd;
	buf = malloc((size_t)page);
	if (!buf)
		return -ENOMEM;
	for (int k = 0; k < 3; k++) {
		memset(buf, base + k, (size_t)page);
		if (f->s4(SYS_pwrite64, fd, (long)buf, page, (long)k * page) != page) {
			free(buf);
			close((int)fd);
			return -EIO;
		}
	}
	free(buf);
	return fd;
}

/* Not inlined: the calls after kc_syscall_select are made from a function
 * entered after it returned (a running function may keep the choice it read). */
static __attribute__((noinline)) void test_family(const struct family *f, const char *mech)
{
	char what[192];
	struct timespec before, mid, after;
	char buf[16] = { 0 };
	long fd, fd2, r;

#define W(...) (snprintf(what, sizeof(what), "%s [%s] ", f->name, mech), \
		snprintf(what + strlen(what), sizeof(what) - strlen(what), __VA_ARGS__), what)

	/* 0 */
	tap_eq_long(f->s0(SYS_getppid), getppid(), W("0: getppid"));
	tap_eq_long(f->s0(BOGUS_NR), -ENOSYS, W("0: unassigned number gives -ENOSYS"));

	/* 2: clock_gettime writes the struct at its 2nd argument */
	clock_gettime(CLOCK_MONOTONIC, &before);
	r = f->s2(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&mid);
	clock_gettime(CLOCK_MONOTONIC, &after);
	tap_ok(r == 0 && ts_ns(&before) <= ts_ns(&mid) && ts_ns(&mid) <= ts_ns(&after),
	       "%s", W("2: clock_gettime(MONOTONIC) between two libc reads (rc %ld)", r));
	tap_eq_long(f->s2(SYS_clock_gettime, BOGUS_CLOCK, (long)&mid), -EINVAL,
		    W("2: clock_gettime of a bad clock id gives -EINVAL"));
	tap_eq_long(f->s2(SYS_clock_gettime, CLOCK_MONOTONIC, 8), -EFAULT,
		    W("2: clock_gettime to a bad pointer gives -EFAULT"));
	tap_eq_long(f->s2(SYS_memfd_create, (long)"kcross-test", 0x40000000L), -EINVAL,
		    W("2: memfd_create with unknown flags gives -EINVAL"));

	fd = make_memfd(f, 'A');
	fd2 = make_memfd(f, 'a');
	if (!tap_ok(fd >= 0 && fd2 >= 0, "%s", W("2+4: two 3-page memfds written with pwrite64 "
					       "(%ld, %ld)", fd, fd2))) {
		if (fd >= 0)
			close((int)fd);
		if (fd2 >= 0)
			close((int)fd2);
		return;
	}

	/* 3: lseek's result depends on all three arguments */
	tap_eq_long(f->s3(SYS_lseek, fd, 5, SEEK_SET), 5, W("3: lseek(fd, 5, SET)"));
	tap_eq_long(f->s3(SYS_lseek, fd, -2, SEEK_END), 3 * page - 2, W("3: lseek(fd, -2, END)"));
	tap_eq_long(f->s3(SYS_lseek, fd, 7, SEEK_CUR), 3 * page + 5, W("3: lseek(fd, 7, CUR)"));
	tap_eq_long(f->s3(SYS_lseek, fd, 0, 77), -EINVAL, W("3: lseek with a bad whence gives -EINVAL"));

	/* 1: dup shares the offset just set */
	r = f->s1(SYS_dup, fd);
	tap_ok(r >= 0 && lseek((int)r, 0, SEEK_CUR) == 3 * page + 5,
	       "%s", W("1: dup(fd) shares the offset (new fd %ld)", r));
	if (r >= 0)
		tap_eq_long(f->s1(SYS_close, r), 0, W("1: close(dup)"));
	tap_eq_long(f->s1(SYS_close, -1), -EBADF, W("1: close(-1) gives -EBADF"));

	/* 4: pread64 at an offset reads that page */
	memset(buf, 0, sizeof(buf));
	r = f->s4(SYS_pread64, fd, (long)buf, 4, 2 * page - 2);
	tap_ok(r == 4 && !memcmp(buf, "BBCC", 4), "%s",
	       W("4: pread64 at 2 pages - 2 reads \"BBCC\" (%ld, \"%.4s\")", r, buf));
	tap_eq_long(f->s4(SYS_pread64, fd, (long)buf, 4, -1), -EINVAL,
		    W("4: pread64 at a negative offset gives -EINVAL"));
	tap_eq_long(f->s4(SYS_openat, AT_FDCWD, (long)"/nonexistent/kcross", O_RDONLY, 0), -ENOENT,
		    W("4: openat of a missing path gives -ENOENT"));

	/* 5: mremap to a fixed address returns it (the 5th argument) */
	{
		long area = f->s6(SYS_mmap, 0, 2 * page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (tap_ok(area > 0 && (area & (page - 1)) == 0, "%s",
			   W("6: anonymous mmap of two pages (%#lx)", area))) {
			*(volatile char *)area = 'm';
			r = f->s5(SYS_mremap, area, page, page, MREMAP_MAYMOVE | MREMAP_FIXED,
				  area + page);
			tap_ok(r == area + page && *(volatile char *)(area + page) == 'm', "%s",
			       W("5: mremap(FIXED) returns its 5th argument and moves the page "
				 "(%#lx, want %#lx)", r, area + page));
			tap_eq_long(f->s5(SYS_mremap, area + page, page, page,
					  MREMAP_MAYMOVE | MREMAP_FIXED, area + 1), -EINVAL,
				    W("5: mremap(FIXED) to an unaligned 5th argument gives -EINVAL"));
			munmap((void *)area, (size_t)(2 * page));
		}
	}
	/* 5: statx writes its 5th argument */
	{
		struct statx stx;

		memset(&stx, 0, sizeof(stx));
		r = f->s5(SYS_statx, fd2, (long)"", AT_EMPTY_PATH, STATX_SIZE, (long)&stx);
		if (r == -ENOSYS) {
			tap_skip("%s", W("5: statx: not in this kernel"));
		} else {
			tap_ok(r == 0 && (stx.stx_mask & STATX_SIZE) &&
			       (long)stx.stx_size == 3 * page, "%s",
			       W("5: statx(fd, \"\", EMPTY_PATH, SIZE, buf) fills buf (rc %ld, "
				 "size %llu)", r, (unsigned long long)stx.stx_size));
			tap_eq_long(f->s5(SYS_statx, fd2, (long)"", AT_EMPTY_PATH, STATX_SIZE, 8),
				    -EFAULT, W("5: statx to a bad 5th argument gives -EFAULT"));
		}
	}

	/* 6: mmap of a file, fd (5th) and offset (6th) checked by content */
	for (int k = 0; k < 3; k++) {
		const long fds[2] = { fd, fd2 };
		const char base[2] = { 'A', 'a' };

		for (int i = 0; i < 2; i++) {
			long a = f->s6(SYS_mmap, 0, page, PROT_READ, MAP_SHARED, fds[i],
				       (long)k * page);

			tap_ok(a > 0 && ((const char *)a)[0] == base[i] + k &&
			       ((const char *)a)[page - 1] == base[i] + k, "%s",
			       W("6: mmap(fd %c, offset %d pages) maps page %c", base[i], k,
				 base[i] + k));
			if (a > 0)
				munmap((void *)a, (size_t)page);
		}
	}
	tap_eq_long(f->s6(SYS_mmap, 0, page, PROT_READ, MAP_SHARED, fd, page + 1), -EINVAL,
		    W("6: mmap at an unaligned 6th argument gives -EINVAL"));
	tap_eq_long(f->s6(SYS_mmap, 0, page, PROT_READ, MAP_SHARED, -1, 0), -EBADF,
		    W("6: mmap of a bad 5th argument (fd) gives -EBADF"));

	/* 6: copy_file_range copies its 5th argument's count; 6th is flags */
	{
		loff_t in = page + 1, out = 3, pin = 0, pout = 3 * page;
		/* libc's answer first, appending to fd2's end: skip only what it cannot do */
		long probe = syscall(SYS_copy_file_range, (int)fd, &pin, (int)fd2, &pout, 1, 0);

		if (probe != 1) {
			tap_skip("%s", W("6: copy_file_range between memfds: not here (%s)",
					 strerror(errno)));
		} else {
			ftruncate((int)fd2, 3 * page);
			r = f->s6(SYS_copy_file_range, fd, (long)&in, fd2, (long)&out, 5, 0);
			memset(buf, 0, sizeof(buf));
			pread((int)fd2, buf, 9, 0);
			tap_ok(r == 5 && in == page + 6 && out == 8 && !memcmp(buf, "aaaBBBBBa", 9),
			       "%s", W("6: copy_file_range copies 5 bytes (%ld, \"%.9s\")", r, buf));
			tap_eq_long(f->s6(SYS_copy_file_range, fd, (long)&in, fd2, (long)&out, 5, 1),
				    -EINVAL, W("6: copy_file_range with flags 1 (6th) gives -EINVAL"));
		}
	}
	close((int)fd);
	close((int)fd2);
#undef W
}

int main(void)
{
	enum kc_sysmech start = kc_syscall_mechanism();
	unsigned int avail = kc_syscall_available();

	page = sysconf(_SC_PAGESIZE);
	tap_diag("page size %ld, mechanism %s", page, kc_sysmech_name(start));

	/* Inline, in the caller's own code. */
	tap_eq_long(kc_syscall0(SYS_gettid), syscall(SYS_gettid), "inline kc_syscall0(gettid)");
	tap_eq_long(kc_sys1(SYS_close, -1), -EBADF, "inline kc_sys1 close(-1) gives -EBADF");

	/* Every entry point, every argument position. */
	test_family(&inline_family, KC_SYSMECH_NATIVE_NAME);
	for (int m = 0; m < KC_SYSMECH_COUNT; m++) {
		if (!(avail & 1u << m))
			continue;
		if (!tap_ok(kc_syscall_select((enum kc_sysmech)m) == 0, "select %s",
			    kc_sysmech_name((enum kc_sysmech)m)))
			continue;
		test_family(&dispatched_family, kc_sysmech_name((enum kc_sysmech)m));
	}
	kc_syscall_select(start);
	return tap_done();
}
