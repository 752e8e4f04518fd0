/* SPDX-License-Identifier: MIT */
/*
 * The registry: the one table of benchmarks.  `list` prints it and `run`
 * walks it; nothing else knows which benchmarks exist.
 */
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"

const struct kc_bench kc_benches[] = {
	{ "syscall", "getppid-glibc", "getppid() through the glibc wrapper",
	  bench_getppid_glibc, 0 },
	{ "syscall", "getppid-libc-syscall", "getppid through syscall(3)",
	  bench_getppid_libc_syscall, 0 },
	{ "syscall", "getppid-inline", "getppid by the inline instruction (kc_syscall0)",
	  bench_getppid_inline, 0 },
	{ "syscall", "getppid-dispatch", "getppid by the run-time selected mechanism (kc_sys0)",
	  bench_getppid_dispatch, 0 },
	{ "syscall", "getppid-call", "getppid inline but behind a call/ret through a function pointer",
	  bench_getppid_call, 0 },
	{ "syscall", "gettid-inline", "gettid by the inline instruction",
	  bench_gettid_inline, 0 },
#if defined(__x86_64__)
	{ "syscall", "getppid-int80", "i386 getppid through the int $0x80 compat gate",
	  bench_getppid_int80, KC_NEED_IA32_EMULATION },
#endif
	{ "syscall", "clock_gettime-vdso", "clock_gettime(CLOCK_MONOTONIC) calling the vDSO directly",
	  bench_clock_gettime_vdso, KC_NEED_VDSO_CLOCK_GETTIME },
	{ "syscall", "clock_gettime-syscall", "clock_gettime(CLOCK_MONOTONIC) as a raw system call",
	  bench_clock_gettime_syscall, 0 },
	{ "syscall", "clock_gettime-kc", "kc_clock_gettime(CLOCK_MONOTONIC), the run-time selected path",
	  bench_clock_gettime_kc, 0 },
	{ "syscall", "getcpu-vdso", "getcpu calling the vDSO directly",
	  bench_getcpu_vdso, KC_NEED_VDSO_GETCPU },
	{ "syscall", "getcpu-syscall", "getcpu as a raw system call",
	  bench_getcpu_syscall, 0 },
	{ "syscall", "stat-root", "newfstatat(AT_FDCWD, \"/\")",
	  bench_stat_root, 0 },
	{ "syscall", "read-devzero", "read 1 byte from /dev/zero",
	  bench_read_devzero, KC_NEED_DEV_NULL_ZERO },
	{ "syscall", "write-devnull", "write 1 byte to /dev/null",
	  bench_write_devnull, KC_NEED_DEV_NULL_ZERO },
	{ "syscall", "open-close", "openat(\"/dev/null\") + close",
	  bench_open_close, KC_NEED_DEV_NULL_ZERO },
	{ NULL, NULL, NULL, NULL, 0 },
};

static const char *need_vdso(const char *sym)
{
	if (!kc_vdso_self())
		return "no usable vDSO in this process (AT_SYSINFO_EHDR absent or unparsable)";
	if (!sym || !kc_vdso_sym(sym))
		return "the vDSO does not export this function";
	return NULL;
}

static const char *unmet_clock_gettime(void)
{
	return need_vdso(KC_VDSO_CLOCK_GETTIME);
}

static const char *unmet_getcpu(void)
{
#ifdef KC_VDSO_GETCPU
	return need_vdso(KC_VDSO_GETCPU);
#else
	return "this architecture's vDSO exports no getcpu";
#endif
}

static const char *unmet_devices(void)
{
	if (access("/dev/zero", R_OK) || access("/dev/null", R_OK | W_OK))
		return "/dev/zero or /dev/null missing (mount devtmpfs)";
	return NULL;
}

static const struct {
	unsigned int bit;
	const char *name;
	const char *(*unmet)(void);
} needs[] = {
	{ KC_NEED_VDSO_CLOCK_GETTIME, "vdso-clock_gettime", unmet_clock_gettime },
	{ KC_NEED_VDSO_GETCPU, "vdso-getcpu", unmet_getcpu },
	{ KC_NEED_IA32_EMULATION, "ia32-emulation", kc_probe_ia32 },
	{ KC_NEED_DEV_NULL_ZERO, "dev-null-zero", unmet_devices },
};

const char *kc_bench_unmet(const struct kc_bench *b)
{
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const char *why;

		if ((b->needs & needs[i].bit) && (why = needs[i].unmet()))
			return why;
	}
	return NULL;
}

const char *kc_need_names(unsigned int bits, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (bits & needs[i].bit && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", needs[i].name);
	return buf;
}
