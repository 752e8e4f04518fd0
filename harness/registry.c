/* SPDX-License-Identifier: MIT */
/*
 * The registry: the one table of benchmarks.  `list` prints it and `run`
 * walks it; nothing else knows which benchmarks exist.
 */
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/cpuid_methods.h"

const struct kh_bench kh_benches[] = {
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
#if defined(KC_ARCH_X86_64)
	{ "syscall", "getppid-int80", "i386 getppid through the int $0x80 compat gate",
	  bench_getppid_int80, KH_NEED_IA32_EMULATION },
#endif
	{ "syscall", "clock_gettime-vdso", "clock_gettime(CLOCK_MONOTONIC) calling the vDSO directly",
	  bench_clock_gettime_vdso, KH_NEED_VDSO_CLOCK_GETTIME },
	{ "syscall", "clock_gettime-syscall", "clock_gettime(CLOCK_MONOTONIC) as a raw system call",
	  bench_clock_gettime_syscall, 0 },
	{ "syscall", "clock_gettime-kc", "kc_clock_gettime(CLOCK_MONOTONIC), the run-time selected path",
	  bench_clock_gettime_kc, 0 },
	{ "syscall", "getcpu-vdso", "getcpu calling the vDSO directly",
	  bench_getcpu_vdso, KH_NEED_VDSO_GETCPU },
	{ "syscall", "getcpu-syscall", "getcpu as a raw system call",
	  bench_getcpu_syscall, 0 },
	{ "syscall", "stat-root", "newfstatat(AT_FDCWD, \"/\")",
	  bench_stat_root, 0 },
	{ "syscall", "read-devzero", "read 1 byte from /dev/zero",
	  bench_read_devzero, KH_NEED_DEV_NULL_ZERO },
	{ "syscall", "write-devnull", "write 1 byte to /dev/null",
	  bench_write_devnull, KH_NEED_DEV_NULL_ZERO },
	{ "syscall", "open-close", "openat(\"/dev/null\") + close",
	  bench_open_close, KH_NEED_DEV_NULL_ZERO },

	{ "cpuid", "rseq-load", "cpu_id loaded from this thread's rseq area (no check, no fallback)",
	  bench_cpuid_rseq, KH_NEED_RSEQ },
	{ "cpuid", "kc_cpu", "kc_cpu(): the rseq load, a sign test, fallbacks out of line",
	  bench_cpuid_kc_cpu, 0 },
	{ "cpuid", "rdpid", "x86 RDPID (TSC_AUX & 0xfff)",
	  bench_cpuid_rdpid, KH_NEED_RDPID },
	{ "cpuid", "rdtscp", "x86 RDTSCP, its TSC_AUX output (& 0xfff)",
	  bench_cpuid_rdtscp, KH_NEED_RDTSCP },
	{ "cpuid", "lsl", "x86 LSL of the per-CPU GDT entry, selector 0x7b (& 0xfff)",
	  bench_cpuid_lsl, KH_NEED_X86_CPUNODE },
	{ "cpuid", "getcpu-vdso", "the vDSO's getcpu(&cpu, NULL, NULL)",
	  bench_cpuid_vdso, KH_NEED_VDSO_GETCPU },
	{ "cpuid", "getcpu-syscall", "the getcpu system call, inline",
	  bench_cpuid_syscall, 0 },
	{ "cpuid", "sched_getcpu", "glibc sched_getcpu() (rseq area in 2.35+, else vDSO)",
	  bench_cpuid_glibc, 0 },

	{ "percpu", "inc-plain", "plain increment of this CPU's slot (the floor; not atomic)",
	  bench_percpu_inc_plain, 0 },
	{ "percpu", "add-atomic", "atomic add (lock add) to one counter",
	  bench_percpu_add_atomic, 0 },
	{ "percpu", "add-getcpu-atomic", "sched_getcpu() + atomic add to that CPU's slot",
	  bench_percpu_add_getcpu_atomic, 0 },
	{ "percpu", "add-vdso-getcpu-atomic", "vDSO getcpu + atomic add to that CPU's slot",
	  bench_percpu_add_vdso_getcpu_atomic, KH_NEED_VDSO_GETCPU },
	{ "percpu", "add-rseq", "rseq add to this CPU's slot (load cpu_id, section, retry on abort)",
	  bench_percpu_add_rseq, KH_NEED_RSEQ },
	{ "percpu", "cmpstore-rseq", "read + rseq compare-and-store of slot+1, retried",
	  bench_percpu_cmpstore_rseq, KH_NEED_RSEQ },
	{ "percpu", "cmpstore-cas", "read + CAS (lock cmpxchg) of counter+1, retried",
	  bench_percpu_cmpstore_cas, 0 },

	{ "percpu", "counter-kc", "kc_percpu_counter_add(1): the rseq add behind its range check",
	  bench_percpu_counter_kc, KH_NEED_RSEQ },
	{ "percpu", "list-rseq", "push + pop on kcross's per-CPU list (rseq sections)",
	  bench_percpu_list_rseq, KH_NEED_RSEQ },
	{ "percpu", "list-mutex", "push + pop on a list under a pthread mutex",
	  bench_percpu_list_mutex, 0 },
	{ "percpu", "list-treiber", "push + pop on a lock-free CAS (Treiber) stack, one thread",
	  bench_percpu_list_treiber, 0 },
	{ "percpu", "pool-kc", "alloc + free of 64 bytes from kcross's per-CPU pool",
	  bench_percpu_pool_kc, KH_NEED_RSEQ },
	{ "percpu", "pool-malloc", "malloc(64) + free",
	  bench_percpu_pool_malloc, 0 },
	{ "percpu", "lock-rseq", "acquire + release of this CPU's kcross per-CPU lock (rseq)",
	  bench_percpu_lock_rseq, KH_NEED_RSEQ },
	{ "percpu", "lock-cas", "acquire + release of a CAS spinlock",
	  bench_percpu_lock_cas, 0 },

	{ "percpu-scaling", "counter-atomic-x1", "one shared atomic counter, 1 thread",
	  bench_scaling_atomic_x1, 0 },
	{ "percpu-scaling", "counter-atomic-xN", "one shared atomic counter, a thread per allowed CPU",
	  bench_scaling_atomic_xn, 0 },
	{ "percpu-scaling", "counter-atomic-x2N", "one shared atomic counter, 2 threads per allowed CPU",
	  bench_scaling_atomic_x2n, 0 },
	{ "percpu-scaling", "counter-rseq-x1", "kc_percpu_counter (rseq), 1 thread",
	  bench_scaling_rseq_x1, KH_NEED_RSEQ },
	{ "percpu-scaling", "counter-rseq-xN", "kc_percpu_counter (rseq), a thread per allowed CPU",
	  bench_scaling_rseq_xn, KH_NEED_RSEQ },
	{ "percpu-scaling", "counter-rseq-x2N", "kc_percpu_counter (rseq), 2 threads per allowed CPU",
	  bench_scaling_rseq_x2n, KH_NEED_RSEQ },
	{ "percpu-scaling", "counter-getcpu-atomic-x1", "per-CPU sched_getcpu + atomic counter, 1 thread",
	  bench_scaling_getcpu_atomic_x1, 0 },
	{ "percpu-scaling", "counter-getcpu-atomic-xN",
	  "per-CPU sched_getcpu + atomic counter, a thread per allowed CPU",
	  bench_scaling_getcpu_atomic_xn, 0 },
	{ "percpu-scaling", "counter-getcpu-atomic-x2N",
	  "per-CPU sched_getcpu + atomic counter, 2 threads per allowed CPU",
	  bench_scaling_getcpu_atomic_x2n, 0 },
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

static const char *unmet_rseq(void)
{
	return kh_cm_unmet_rseq();
}

static const char *unmet_rdpid(void)
{
	return kh_cm_unmet_rdpid();
}

static const char *unmet_rdtscp(void)
{
	return kh_cm_unmet_rdtscp();
}

static const char *unmet_cpunode(void)
{
	return kh_cm_unmet_lsl();
}

static const struct {
	unsigned int bit;
	const char *name;
	const char *(*unmet)(void);
} needs[] = {
	{ KH_NEED_VDSO_CLOCK_GETTIME, "vdso-clock_gettime", unmet_clock_gettime },
	{ KH_NEED_VDSO_GETCPU, "vdso-getcpu", unmet_getcpu },
	{ KH_NEED_IA32_EMULATION, "ia32-emulation", kh_probe_ia32 },
	{ KH_NEED_DEV_NULL_ZERO, "dev-null-zero", unmet_devices },
	{ KH_NEED_RSEQ, "rseq", unmet_rseq },
	{ KH_NEED_RDPID, "rdpid", unmet_rdpid },
	{ KH_NEED_RDTSCP, "rdtscp", unmet_rdtscp },
	{ KH_NEED_X86_CPUNODE, "x86-cpunode-segment", unmet_cpunode },
};

const char *kh_bench_unmet(const struct kh_bench *b)
{
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const char *why;

		if ((b->needs & needs[i].bit) && (why = needs[i].unmet()))
			return why;
	}
	return NULL;
}

const char *kh_need_names(unsigned int bits, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (bits & needs[i].bit && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", needs[i].name);
	return buf;
}
