/* SPDX-License-Identifier: MIT */
/*
 * x86-64: what differs from the generic layer.
 *
 * System call: `syscall`; number in rax, arguments in rdi rsi rdx r10 r8 r9;
 * the kernel returns -errno in rax and clobbers rcx (return rip) and r11
 * (saved rflags).
 */
#ifndef KCROSS_ARCH_H
# error "do not include <kcross/arch/x86_64.h> directly; include <kcross/arch.h>"
#endif
#ifndef KCROSS_ARCH_X86_64_H
#define KCROSS_ARCH_X86_64_H

#include <stdint.h>

#define KC_ARCH_NAME "x86_64"
#define KC_ARCH_X86_64 1	/* for code elsewhere: never test compiler macros */
#define KC_ELF_MACHINE 62	/* EM_X86_64 */
/* A key only this architecture's /proc/cpuinfo has (qemu-user shows the host's). */
#define KC_CPUINFO_SIGNATURE "vendor_id"
/* rseq abort signature: the 4 bytes before every abort handler. */
#define KC_RSEQ_SIG 0x53053053
/* The rseq critical sections, for <kcross/rseq-ops.h>. */
#define KC_ARCH_RSEQ_HEADER <kcross/arch/x86_64-rseq.h>
/* The context switch's saved frame, for <kcross/ctx.h>. */
#define KC_ARCH_CTX_HEADER <kcross/arch/x86_64-ctx.h>

/* The mechanism the inline kc_syscallN use, as KCROSS_SYSCALL names it. */
#define KC_SYSMECH_NATIVE_NAME "syscall"
/* <kcross/syscall.h>'s mechanism word for it: GCC compares memory with a
 * non-zero immediate in one instruction (`cmpl $1, kc__sysmech(%rip); jne`),
 * but loads and tests for zero (`movl; testl; jne`: one more per call). */
#define KC_SYSMECH_NATIVE_WORD 1u

#define KC__SYSCALL_CLOBBERS "rcx", "r11", "memory"

static inline long kc_syscall0(long n)
{
	unsigned long ret;
	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(n) : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall1(long n, long a1)
{
	unsigned long ret;
	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(n), "D"(a1)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall2(long n, long a1, long a2)
{
	unsigned long ret;
	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(n), "D"(a1), "S"(a2)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall3(long n, long a1, long a2, long a3)
{
	unsigned long ret;
	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "a"(n), "D"(a1), "S"(a2), "d"(a3)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall4(long n, long a1, long a2, long a3, long a4)
{
	unsigned long ret;
	register long r10 __asm__("r10") = a4;
	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall5(long n, long a1, long a2, long a3, long a4,
			       long a5)
{
	unsigned long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

static inline long kc_syscall6(long n, long a1, long a2, long a3, long a4,
			       long a5, long a6)
{
	unsigned long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : KC__SYSCALL_CLOBBERS);
	return (long)ret;
}

/*
 * Cycle counter: the TSC.  It counts at a constant rate only when CPUID
 * 0x80000007 EDX bit 8 (invariant TSC) is set; the timer code checks that
 * before trusting it.  lfence before rdtsc keeps earlier instructions from
 * being still in flight; rdtscp at the end waits for the measured code to
 * retire and the trailing lfence keeps later code from starting early.
 */
#define KC_TICKS_NAME "tsc"

static inline uint64_t kc_ticks_begin(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t kc_ticks_end(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Thread pointer: %fs base, whose first word points to itself (TLS ABI). */
static inline void *kc_thread_pointer(void)
{
	void *tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

/* Spin-wait hint. */
static inline void kc_cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}
#define KC_HAVE_CPU_RELAX 1

/* vDSO: names and version as the x86-64 kernel exports them. */
#define KC_VDSO_VERSION        "LINUX_2.6"
#define KC_VDSO_CLOCK_GETTIME  "__vdso_clock_gettime"
#define KC_VDSO_GETTIMEOFDAY   "__vdso_gettimeofday"
#define KC_VDSO_CLOCK_GETRES   "__vdso_clock_getres"
#define KC_VDSO_GETCPU         "__vdso_getcpu"
#define KC_VDSO_TIME           "__vdso_time"

#endif /* KCROSS_ARCH_X86_64_H */
