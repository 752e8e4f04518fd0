/* SPDX-License-Identifier: MIT */
/*
 * ppc64le: what differs from the generic layer.
 *
 * Two system call instructions (Documentation/arch/powerpc/syscall64-abi.rst):
 *
 *   sc      number in r0, arguments r3-r8.  On error the kernel sets CR0.SO and
 *           leaves a positive errno in r3; the asm below turns that into
 *           -errno (`bns+ 1f; neg r3,r3`).  r0, r3-r12, cr0, ctr, xer are
 *           treated as clobbered; lr, cr1 and cr5-7 are preserved.
 *   scv 0   same number and arguments; returns -errno directly in r3.  It
 *           clobbers lr, ctr, xer, cr0, cr1, cr5-7 and r9-r12 as well (the
 *           kernel's rfscv returns through LR and uses CTR), so "lr" is in the
 *           clobber list and the compiler saves the link register around it.
 *           Only usable when AT_HWCAP2 has PPC_FEATURE2_SCV (POWER9+, Linux
 *           5.9+); otherwise it raises SIGILL.
 *
 * kc_syscallN use `sc` (always valid); kc_syscall_altN use `scv 0`.  The
 * dispatched kc_sysN in <kcross/syscall.h> picks between them with one load
 * and compare of a cached word, inline, as glibc does.
 */
#ifndef KCROSS_ARCH_H
# error "do not include <kcross/arch/ppc64le.h> directly; include <kcross/arch.h>"
#endif
#ifndef KCROSS_ARCH_PPC64LE_H
#define KCROSS_ARCH_PPC64LE_H

#include <stdint.h>

#define KC_ARCH_NAME "ppc64le"
#define KC_ARCH_PPC64LE 1
#define KC_ELF_MACHINE 21	/* EM_PPC64 */
/* A key only this architecture's /proc/cpuinfo has (qemu-user shows the host's). */
#define KC_CPUINFO_SIGNATURE "timebase"
/* rseq abort signature: the 4 bytes before every abort handler
 * (the encoding of twui r5,11: a trap that is never taken). */
#define KC_RSEQ_SIG 0x0fe5000b
#define KC_ARCH_RSEQ_HEADER <kcross/arch/ppc64le-rseq.h>
/* The context switch's saved frame, for <kcross/ctx.h>. */
#define KC_ARCH_CTX_HEADER <kcross/arch/ppc64le-ctx.h>
#define KC_CACHELINE_SIZE 128
#define KC_SYSMECH_NATIVE_NAME "sc"		/* kc_syscallN */
#define KC_SYSMECH_ALT_NAME    "scv"		/* kc_syscall_altN */
#define KC_SYSMECH_ALT_HWCAP2  0x00100000UL	/* PPC_FEATURE2_SCV */

#define KC__SC_CLOBBERS  "memory", "cr0", "ctr", "xer", "r9", "r10", "r11", "r12"
#define KC__SCV_CLOBBERS KC__SC_CLOBBERS, "lr", "cr1", "cr5", "cr6", "cr7"

/*
 * One body for both instructions: INSN is the instruction text (for sc it
 * carries the CR0.SO → -errno fix-up), the trailing arguments its clobber
 * list.  All seven argument registers are bound (unused ones to 0) so that
 * the kernel's view of r3-r8 is defined and both paths cost the same
 * set-up: the full-system lab compares sc and scv instruction counts.
 */
#define KC__PPC_SYSCALL(INSN, n, a1, a2, a3, a4, a5, a6, ...)		\
	register long r0 __asm__("r0") = (n);				\
	register long r3 __asm__("r3") = (a1);				\
	register long r4 __asm__("r4") = (a2);				\
	register long r5 __asm__("r5") = (a3);				\
	register long r6 __asm__("r6") = (a4);				\
	register long r7 __asm__("r7") = (a5);				\
	register long r8 __asm__("r8") = (a6);				\
	__asm__ __volatile__(INSN					\
			     : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5),	\
			       "+r"(r6), "+r"(r7), "+r"(r8)		\
			     : : __VA_ARGS__);				\
	return r3

#define KC__SC  "sc\n\tbns+ 1f\n\tneg %1, %1\n1:"
#define KC__SCV "scv 0"

#define KC__PPC_DEFINE(PFX, INSN, ...)					\
static inline long PFX##0(long n)					\
{ KC__PPC_SYSCALL(INSN, n, 0, 0, 0, 0, 0, 0, __VA_ARGS__); }			\
static inline long PFX##1(long n, long a1)				\
{ KC__PPC_SYSCALL(INSN, n, a1, 0, 0, 0, 0, 0, __VA_ARGS__); }			\
static inline long PFX##2(long n, long a1, long a2)			\
{ KC__PPC_SYSCALL(INSN, n, a1, a2, 0, 0, 0, 0, __VA_ARGS__); }			\
static inline long PFX##3(long n, long a1, long a2, long a3)		\
{ KC__PPC_SYSCALL(INSN, n, a1, a2, a3, 0, 0, 0, __VA_ARGS__); }		\
static inline long PFX##4(long n, long a1, long a2, long a3, long a4)	\
{ KC__PPC_SYSCALL(INSN, n, a1, a2, a3, a4, 0, 0, __VA_ARGS__); }		\
static inline long PFX##5(long n, long a1, long a2, long a3, long a4,	\
			  long a5)					\
{ KC__PPC_SYSCALL(INSN, n, a1, a2, a3, a4, a5, 0, __VA_ARGS__); }		\
static inline long PFX##6(long n, long a1, long a2, long a3, long a4,	\
			  long a5, long a6)				\
{ KC__PPC_SYSCALL(INSN, n, a1, a2, a3, a4, a5, a6, __VA_ARGS__); }

KC__PPC_DEFINE(kc_syscall, KC__SC, KC__SC_CLOBBERS)
KC__PPC_DEFINE(kc_syscall_alt, KC__SCV, KC__SCV_CLOBBERS)

/*
 * The mechanism word of <kcross/syscall.h>, read by an asm without a memory
 * operand: the compiler sees a pure function of the address, so it reads the
 * word once per function (hoisted out of loops, past the system calls'
 * "memory" clobbers) and each call costs its branches only.  A POWER branch
 * tests a condition register field, so a word read at every call would cost a
 * load, a compare and a branch (3; 4-5 for the second mechanism tested: the
 * ppc64le lab counted 404 vs 400 instructions for sc, 351 vs 348 for scv);
 * read once, the calls cost 1-2 (docs/lab.md).  The price: a function already
 * running may keep the choice it read (kc_syscall_select in <kcross/syscall.h>).
 */
static inline unsigned int kc__sysmech_load(const unsigned int *word)
{
	unsigned int v;

	__asm__("lwz %0, 0(%1)" : "=r"(v) : "b"(word));
	return v;
}
#define KC_HAVE_SYSMECH_LOAD 1

/*
 * Cycle counter: the time base (mftb).  It runs at a fixed frequency that the
 * kernel reports in /proc/cpuinfo ("timebase"); the timer code calibrates it
 * like any other counter.  isync keeps the read from running ahead.
 */
#define KC_TICKS_NAME "timebase"

static inline uint64_t kc_ticks_begin(void)
{
	uint64_t v;
	__asm__ __volatile__("isync\n\tmftb %0\n\tisync" : "=r"(v) :: "memory");
	return v;
}

static inline uint64_t kc_ticks_end(void)
{
	return kc_ticks_begin();
}

/* Thread pointer: r13 (ELFv2 ABI; the TCB ends 0x7000 below it). */
static inline void *kc_thread_pointer(void)
{
	void *tp;

	/* An asm operand: GCC supports local register variables only there. */
	__asm__("mr %0, 13" : "=r"(tp));
	return tp;
}

/* Spin-wait hint: lower SMT thread priority for the duration (or 1,1,1 form). */
static inline void kc_cpu_relax(void)
{
	__asm__ __volatile__("or 1,1,1\n\tor 2,2,2" ::: "memory");
}
#define KC_HAVE_CPU_RELAX 1

#define KC_VDSO_VERSION        "LINUX_2.6.15"
#define KC_VDSO_CLOCK_GETTIME  "__kernel_clock_gettime"
#define KC_VDSO_GETTIMEOFDAY   "__kernel_gettimeofday"
#define KC_VDSO_CLOCK_GETRES   "__kernel_clock_getres"
#define KC_VDSO_GETCPU         "__kernel_getcpu"
#define KC_VDSO_TIME           "__kernel_time"
/*
 * powerpc vDSO functions report errors like `sc`: CR0.SO set and a positive
 * errno in r3.  A plain C call sees only r3, so callers treat any non-zero
 * return as failure and fall back to the system call.
 */
#define KC_VDSO_ERR_POSITIVE 1

#endif /* KCROSS_ARCH_PPC64LE_H */
