/* SPDX-License-Identifier: MIT */
/*
 * aarch64: what differs from the generic layer.
 *
 * System call: `svc #0`; number in x8, arguments in x0-x5, -errno returned in
 * x0; no other register is clobbered.
 */
#ifndef KCROSS_ARCH_H
# error "do not include <kcross/arch/aarch64.h> directly; include <kcross/arch.h>"
#endif
#ifndef KCROSS_ARCH_AARCH64_H
#define KCROSS_ARCH_AARCH64_H

#include <stdint.h>

#define KC_ARCH_NAME "aarch64"
#define KC_ARCH_AARCH64 1
#define KC_ELF_MACHINE 183	/* EM_AARCH64 */
/* A key only this architecture's /proc/cpuinfo has (qemu-user shows the host's). */
#define KC_CPUINFO_SIGNATURE "CPU implementer"
/* rseq abort signature: the 4 bytes before every abort handler
 * (the encoding of brk #0x45e0). */
#define KC_RSEQ_SIG 0xd428bc00
#define KC_ARCH_RSEQ_HEADER <kcross/arch/aarch64-rseq.h>
/* The context switch's saved frame, for <kcross/ctx.h>. */
#define KC_ARCH_CTX_HEADER <kcross/arch/aarch64-ctx.h>
#define KC_SYSMECH_NATIVE_NAME "svc"	/* kc_syscallN */

#define KC__SVC(...)							\
	__asm__ __volatile__("svc #0" : "+r"(x0) : __VA_ARGS__ : "memory")

static inline long kc_syscall0(long n)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = 0;
	KC__SVC("r"(x8));
	return x0;
}

static inline long kc_syscall1(long n, long a1)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	KC__SVC("r"(x8));
	return x0;
}

static inline long kc_syscall2(long n, long a1, long a2)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	KC__SVC("r"(x8), "r"(x1));
	return x0;
}

static inline long kc_syscall3(long n, long a1, long a2, long a3)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	KC__SVC("r"(x8), "r"(x1), "r"(x2));
	return x0;
}

static inline long kc_syscall4(long n, long a1, long a2, long a3, long a4)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	KC__SVC("r"(x8), "r"(x1), "r"(x2), "r"(x3));
	return x0;
}

static inline long kc_syscall5(long n, long a1, long a2, long a3, long a4,
			       long a5)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	KC__SVC("r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4));
	return x0;
}

static inline long kc_syscall6(long n, long a1, long a2, long a3, long a4,
			       long a5, long a6)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	KC__SVC("r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5));
	return x0;
}

/*
 * Cycle counter: the virtual counter CNTVCT_EL0, readable from EL0 on Linux,
 * constant rate CNTFRQ_EL0 by architecture.  isb before and after keeps the
 * read from moving across the measured code.
 */
#define KC_TICKS_NAME "cntvct"
#define KC_HAVE_TICKS_HZ 1

static inline uint64_t kc_ticks_begin(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) :: "memory");
	return v;
}

static inline uint64_t kc_ticks_end(void)
{
	return kc_ticks_begin();
}

/* Frequency the architecture states for the counter. */
static inline uint64_t kc_ticks_hz(void)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
}

/* Thread pointer: TPIDR_EL0. */
static inline void *kc_thread_pointer(void)
{
	void *tp;

	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
	return tp;
}

static inline void kc_cpu_relax(void)
{
	__asm__ __volatile__("yield" ::: "memory");
}
#define KC_HAVE_CPU_RELAX 1

/* vDSO: arm64 exports no getcpu. */
#define KC_VDSO_VERSION        "LINUX_2.6.39"
#define KC_VDSO_CLOCK_GETTIME  "__kernel_clock_gettime"
#define KC_VDSO_GETTIMEOFDAY   "__kernel_gettimeofday"
#define KC_VDSO_CLOCK_GETRES   "__kernel_clock_getres"

#endif /* KCROSS_ARCH_AARCH64_H */
