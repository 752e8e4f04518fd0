/* SPDX-License-Identifier: MIT */
/*
 * The syscall suite: a null system call by every entry path, and a few
 * cheap real ones (lmbench's set).  Each benchmark checks its operation's
 * result once against an independent path, outside the timed loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

/* getppid: the null system call (no locks, no copies, always succeeds). */
static int check_getppid(struct kh_bench_ctx *c, long got, const char *path)
{
	long want = getppid();

	if (got != want)
		return kh_fail(c, "%s returned %ld, getppid() says %ld", path, got, want);
	return KH_OK;
}

static int bench_getppid_glibc(struct kh_bench_ctx *c)
{
	if (check_getppid(c, kc_syscall0(SYS_getppid), "kc_syscall0(SYS_getppid)"))
		return KH_FAIL;
	KH_LOOP(c, getppid());
	return KH_OK;
}

static int bench_getppid_libc_syscall(struct kh_bench_ctx *c)
{
	if (check_getppid(c, syscall(SYS_getppid), "syscall(SYS_getppid)"))
		return KH_FAIL;
	KH_LOOP(c, syscall(SYS_getppid));
	return KH_OK;
}

static int bench_getppid_inline(struct kh_bench_ctx *c)
{
	if (check_getppid(c, kc_syscall0(SYS_getppid), "kc_syscall0"))
		return KH_FAIL;
	KH_LOOP(c, kc_syscall0(SYS_getppid));
	return KH_OK;
}

#if KC_HAVE_SYSCALL_ALT
/*
 * The arch's second instruction (ppc64le: scv 0), where the kernel offers it
 * (kc_syscall_available() reads AT_HWCAP2): beside getppid-inline (sc), the
 * pair the labs compare.  A row only where the arch has an alternative;
 * skipped with the reason where this kernel does not offer it.
 */
static int bench_getppid_inline_alt(struct kh_bench_ctx *c)
{
	if (!(kc_syscall_available() & (1u << KC_SYSMECH_ALT)))
		return kh_skip(c, "the kernel does not offer %s (AT_HWCAP2 lacks its bit)",
			       KC_SYSMECH_ALT_NAME);
	if (check_getppid(c, kc_syscall_alt0(SYS_getppid), "kc_syscall_alt0"))
		return KH_FAIL;
	KH_LOOP(c, kc_syscall_alt0(SYS_getppid));
	return KH_OK;
}
#endif

static int bench_getppid_dispatch(struct kh_bench_ctx *c)
{
	if (check_getppid(c, kc_sys0(SYS_getppid), "kc_sys0"))
		return KH_FAIL;
	KH_LOOP(c, kc_sys0(SYS_getppid));
	return KH_OK;
}

/*
 * The same instruction behind a call through a function pointer, as a
 * library that selects its path with a pointer would do.  The `ret` after
 * the kernel returned is what this measures: on CPUs whose return-stack
 * mitigations (retbleed / SRSO "safe RET", RSB filling) leave the return
 * predictor cleared on kernel exit, that ret mispredicts every time.
 */
static __attribute__((noinline)) long getppid_outofline(void)
{
	return kc_syscall0(SYS_getppid);
}

static int bench_getppid_call(struct kh_bench_ctx *c)
{
	long (*volatile fp)(void) = getppid_outofline;
	long (*f)(void) = fp;

	if (check_getppid(c, f(), "getppid_outofline"))
		return KH_FAIL;
	KH_LOOP(c, f());
	return KH_OK;
}

static int bench_gettid_inline(struct kh_bench_ctx *c)
{
	long got = kc_syscall0(SYS_gettid), want = syscall(SYS_gettid);

	if (got != want)
		return kh_fail(c, "kc_syscall0(SYS_gettid) = %ld, syscall(3) says %ld", got, want);
	KH_LOOP(c, kc_syscall0(SYS_gettid));
	return KH_OK;
}

#if defined(KC_ARCH_X86_64)
/* i386 getppid through the compat gate; r8-r11 are not preserved by it. */
#define IA32_NR_GETPPID 64
static inline long int80_getppid(void)
{
	long ret;

	__asm__ __volatile__("int $0x80" : "=a"(ret) : "a"((long)IA32_NR_GETPPID)
			     : "r8", "r9", "r10", "r11", "memory");
	return ret;
}

static int bench_getppid_int80(struct kh_bench_ctx *c)
{
	if (check_getppid(c, int80_getppid(), "int $0x80"))
		return KH_FAIL;
	KH_LOOP(c, int80_getppid());
	return KH_OK;
}

/* Probe in a child: without IA32 emulation `int $0x80` kills the caller. */
const char *kh_probe_ia32(void)
{
	static const char *answer;
	static int done;
	pid_t pid;
	int st;

	if (done)
		return answer;
	done = 1;
	pid = fork();
	if (pid == 0)
		_exit(int80_getppid() == kc_syscall0(SYS_getppid) ? 0 : 1);
	if (pid < 0)
		return answer = "cannot fork to probe int $0x80";
	if (waitpid(pid, &st, 0) != pid)
		return answer = "cannot wait for the int $0x80 probe";
	if (WIFSIGNALED(st))
		return answer = "kernel has no IA32 emulation (int $0x80 raised a signal)";
	if (WEXITSTATUS(st))
		return answer = "int $0x80 getppid gave a wrong answer (IA32 emulation disabled?)";
	return NULL;
}
#else
const char *kh_probe_ia32(void)
{
	return "int $0x80 exists only on x86";
}
#endif

/* ------------------------------------------------------------ clock_gettime */

typedef kc_vdso_clock_gettime_fn cgt_fn;

static long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000L + ts->tv_nsec;
}

/* a <= b <= c, the vDSO read bracketed by two system calls. */
static int check_bracketed(struct kh_bench_ctx *c, cgt_fn f, const char *what)
{
	struct timespec a, b, d;

	kc_clock_gettime_syscall(CLOCK_MONOTONIC, &a);
	if (f(CLOCK_MONOTONIC, &b))
		return kh_fail(c, "%s(CLOCK_MONOTONIC) failed", what);
	kc_clock_gettime_syscall(CLOCK_MONOTONIC, &d);
	if (ts_ns(&a) > ts_ns(&b) || ts_ns(&b) > ts_ns(&d))
		return kh_fail(c, "%s disagrees with the clock_gettime syscall", what);
	return KH_OK;
}

static int bench_clock_gettime_vdso(struct kh_bench_ctx *c)
{
	cgt_fn f = (cgt_fn)kc_vdso_sym(KC_VDSO_CLOCK_GETTIME);
	struct timespec ts;

	if (!f)
		return kh_skip(c, "the vDSO has no " KC_VDSO_CLOCK_GETTIME);
	if (check_bracketed(c, f, KC_VDSO_CLOCK_GETTIME))
		return KH_FAIL;
	KH_LOOP(c, f(CLOCK_MONOTONIC, &ts));
	return KH_OK;
}

static int cgt_syscall(clockid_t clk, struct timespec *ts)
{
	return (int)kc_clock_gettime_syscall(clk, ts);
}

static int bench_clock_gettime_syscall(struct kh_bench_ctx *c)
{
	struct timespec ts;

	if (check_bracketed(c, cgt_syscall, "clock_gettime syscall"))
		return KH_FAIL;
	KH_LOOP(c, kc_clock_gettime_syscall(CLOCK_MONOTONIC, &ts));
	return KH_OK;
}

static int bench_clock_gettime_kc(struct kh_bench_ctx *c)
{
	struct timespec ts;

	if (check_bracketed(c, kc_clock_gettime, "kc_clock_gettime"))
		return KH_FAIL;
	KH_LOOP(c, kc_clock_gettime(CLOCK_MONOTONIC, &ts));
	return KH_OK;
}

/* ------------------------------------------------------------------ getcpu */

static int check_cpu(struct kh_bench_ctx *c, long rc, unsigned cpu, const char *what)
{
	unsigned want;

	if (rc)
		return kh_fail(c, "%s failed: %ld", what, rc);
	if (kc_getcpu_syscall(&want, NULL))
		return kh_fail(c, "getcpu syscall failed");
	if (cpu != want)
		return kh_fail(c, "%s says CPU %u, the getcpu syscall says %u", what, cpu, want);
	return KH_OK;
}

static int bench_getcpu_vdso(struct kh_bench_ctx *c)
{
#ifdef KC_VDSO_GETCPU
	kc_vdso_getcpu_fn f = (kc_vdso_getcpu_fn)kc_vdso_sym(KC_VDSO_GETCPU);
	unsigned cpu = ~0u, node;
	long rc;

	if (!f)
		return kh_skip(c, "the vDSO has no " KC_VDSO_GETCPU);
	rc = f(&cpu, &node, NULL);
	if (check_cpu(c, rc, cpu, KC_VDSO_GETCPU))
		return KH_FAIL;
	KH_LOOP(c, f(&cpu, &node, NULL));
	return KH_OK;
#else
	return kh_skip(c, "this architecture's vDSO exports no getcpu");
#endif
}

static int bench_getcpu_syscall(struct kh_bench_ctx *c)
{
	unsigned cpu = ~0u, node;
	long rc = kc_getcpu_syscall(&cpu, &node);

	if (check_cpu(c, rc, cpu, "getcpu syscall"))
		return KH_FAIL;
	KH_LOOP(c, kc_getcpu_syscall(&cpu, &node));
	return KH_OK;
}

/* ------------------------------------------------------ real system calls */

static int bench_stat_root(struct kh_bench_ctx *c)
{
	struct stat st;
	long rc = kc_sys4(SYS_newfstatat, AT_FDCWD, (long)"/", (long)&st, 0);

	if (rc || !S_ISDIR(st.st_mode))
		return kh_fail(c, "newfstatat(\"/\") = %ld", rc);
	KH_LOOP(c, kc_sys4(SYS_newfstatat, AT_FDCWD, (long)"/", (long)&st, 0));
	return KH_OK;
}

static int open_dev(struct kh_bench_ctx *c, const char *path, int flags)
{
	int fd = (int)kc_sys4(SYS_openat, AT_FDCWD, (long)path, flags | O_CLOEXEC, 0);

	if (fd < 0)
		kh_skip(c, "cannot open %s: %s", path, strerror(-fd));
	return fd;
}

static int bench_read_devzero(struct kh_bench_ctx *c)
{
	char b = 1;
	int fd = open_dev(c, "/dev/zero", O_RDONLY);
	long rc;

	if (fd < 0)
		return KH_SKIP;
	rc = kc_sys3(SYS_read, fd, (long)&b, 1);
	if (rc != 1 || b != 0) {
		close(fd);
		return kh_fail(c, "read(/dev/zero, 1) = %ld", rc);
	}
	KH_LOOP(c, kc_sys3(SYS_read, fd, (long)&b, 1));
	close(fd);
	return KH_OK;
}

static int bench_write_devnull(struct kh_bench_ctx *c)
{
	char b = 'k';
	int fd = open_dev(c, "/dev/null", O_WRONLY);
	long rc;

	if (fd < 0)
		return KH_SKIP;
	rc = kc_sys3(SYS_write, fd, (long)&b, 1);
	if (rc != 1) {
		close(fd);
		return kh_fail(c, "write(/dev/null, 1) = %ld", rc);
	}
	KH_LOOP(c, kc_sys3(SYS_write, fd, (long)&b, 1));
	close(fd);
	return KH_OK;
}

static int bench_open_close(struct kh_bench_ctx *c)
{
	int fd = open_dev(c, "/dev/null", O_RDONLY);

	if (fd < 0)
		return KH_SKIP;
	if (kc_sys1(SYS_close, fd))
		return kh_fail(c, "close(%d) failed", fd);
	KH_LOOP(c, kc_sys1(SYS_close, kc_sys4(SYS_openat, AT_FDCWD, (long)"/dev/null",
						O_RDONLY | O_CLOEXEC, 0)));
	return KH_OK;
}

/* ------------------------------------------------------------------ suite */

static const struct kh_bench benches[] = {
	{ "getppid-glibc", "getppid() through the glibc wrapper",
	  bench_getppid_glibc, 0, 0, NULL },
	{ "getppid-libc-syscall", "getppid through syscall(3)",
	  bench_getppid_libc_syscall, 0, 0, NULL },
	{ "getppid-inline", "getppid by the inline instruction (kc_syscall0)",
	  bench_getppid_inline, 0, 0, NULL },
#if KC_HAVE_SYSCALL_ALT
	{ "getppid-inline-alt", "getppid by the arch's alternative instruction (ppc64le scv 0)",
	  bench_getppid_inline_alt, 0, 0, NULL },
#endif
	{ "getppid-dispatch", "getppid by the run-time selected mechanism (kc_sys0)",
	  bench_getppid_dispatch, 0, 0, NULL },
	{ "getppid-call", "getppid inline but behind a call/ret through a function pointer",
	  bench_getppid_call, 0, 0, NULL },
	{ "gettid-inline", "gettid by the inline instruction",
	  bench_gettid_inline, 0, 0, NULL },
#if defined(KC_ARCH_X86_64)
	{ "getppid-int80", "i386 getppid through the int $0x80 compat gate",
	  bench_getppid_int80, KH_NEED_IA32_EMULATION, 0, NULL },
#endif
	{ "clock_gettime-vdso", "clock_gettime(CLOCK_MONOTONIC) calling the vDSO directly",
	  bench_clock_gettime_vdso, KH_NEED_VDSO_CLOCK_GETTIME, 0, NULL },
	{ "clock_gettime-syscall", "clock_gettime(CLOCK_MONOTONIC) as a raw system call",
	  bench_clock_gettime_syscall, 0, 0, NULL },
	{ "clock_gettime-kc", "kc_clock_gettime(CLOCK_MONOTONIC), the run-time selected path",
	  bench_clock_gettime_kc, 0, 0, NULL },
	{ "getcpu-vdso", "getcpu calling the vDSO directly",
	  bench_getcpu_vdso, KH_NEED_VDSO_GETCPU, 0, NULL },
	{ "getcpu-syscall", "getcpu as a raw system call",
	  bench_getcpu_syscall, 0, 0, NULL },
	{ "stat-root", "newfstatat(AT_FDCWD, \"/\")",
	  bench_stat_root, 0, 0, NULL },
	{ "read-devzero", "read 1 byte from /dev/zero",
	  bench_read_devzero, KH_NEED_DEV_NULL_ZERO, 0, NULL },
	{ "write-devnull", "write 1 byte to /dev/null",
	  bench_write_devnull, KH_NEED_DEV_NULL_ZERO, 0, NULL },
	{ "open-close", "openat(\"/dev/null\") + close",
	  bench_open_close, KH_NEED_DEV_NULL_ZERO, 0, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_syscall = { "syscall", benches, 0 };
