/* SPDX-License-Identifier: MIT */
/*
 * Delay injection for the stress tests, force-included (-include) before
 * every kcross header in the stress programs and in their copy of
 * src/percpu.c, as the kernel's rseq param_test does it.
 *
 * KC_RSEQ_INJECT_ASM(n), n = 1..6: a busy loop of kc_stress_loop[n]
 * iterations at step n of every rseq critical section (after arming, after
 * the CPU check, after loads, before the commit), widening the windows in
 * which preemption, migration and signals abort the section.  The loop uses
 * one scratch register that no section keeps live across a hook.
 *
 * KC_RSEQ_INJECT_C(n), n = 1 (start of every section attempt) and 7..11
 * (the retry loops of <kcross/percpu.h>): counts attempts, then either a
 * busy loop of kc_stress_loop[n] iterations or, when it is negative,
 * sched_yield() every -kc_stress_loop[n] calls.
 *
 * The counts are chosen at random per run by the stress program (and
 * printed with the seed, so a failure can be replayed).
 */
#ifndef KCROSS_TESTS_STRESS_INJECT_H
#define KCROSS_TESTS_STRESS_INJECT_H

#define KC_STRESS_NHOOKS 12

/* Hidden: addressed PC-relative, so the asm memory operands need no
 * register for a GOT load (x86-64 sections have few registers to spare). */
extern int kc_stress_loop[KC_STRESS_NHOOKS] __attribute__((visibility("hidden")));
/* Attempts of rseq sections (hook 1) by the calling thread. */
extern __thread unsigned long kc_stress_attempts __attribute__((visibility("hidden")));
extern __thread unsigned int kc_stress_yield_tick __attribute__((visibility("hidden")));
int sched_yield(void);

#define KC_RSEQ_INJECT_C(n)						\
	do {								\
		int kc__l = __atomic_load_n(&kc_stress_loop[n], __ATOMIC_RELAXED); \
									\
		if ((n) == 1)						\
			__atomic_fetch_add(&kc_stress_attempts, 1, __ATOMIC_RELAXED); \
		if (kc__l < 0) {					\
			if (++kc_stress_yield_tick >= (unsigned int)-kc__l) { \
				kc_stress_yield_tick = 0;		\
				sched_yield();				\
			}						\
		}							\
		for (; kc__l > 0; kc__l--)				\
			__asm__ __volatile__("" ::: "memory");		\
	} while (0)

#define KC__INJ_INPUTS(c)						\
	, [inj1] c(kc_stress_loop[1]), [inj2] c(kc_stress_loop[2])	\
	, [inj3] c(kc_stress_loop[3]), [inj4] c(kc_stress_loop[4])	\
	, [inj5] c(kc_stress_loop[5]), [inj6] c(kc_stress_loop[6])

#include <kcross/arch.h>	/* KC_ARCH_*: only arch.h tests compiler macros */

#if defined(KC_ARCH_X86_64)
# define KC_RSEQ_INJECT_INPUT KC__INJ_INPUTS("m")
# define KC_RSEQ_INJECT_CLOBBER , "r11"
# define KC_RSEQ_INJECT_ASM(n)						\
	"movl %[inj" #n "], %%r11d\n\t"					\
	"testl %%r11d, %%r11d\n\t"					\
	"jle 333f\n\t"							\
	"222:\n\t"							\
	"decl %%r11d\n\t"						\
	"jnz 222b\n\t"							\
	"333:\n\t"
#elif defined(KC_ARCH_AARCH64)
/* x15 and x14 are the sections' own scratch registers. */
# define KC_RSEQ_INJECT_INPUT KC__INJ_INPUTS("Qo")
# define KC_RSEQ_INJECT_CLOBBER , "x13"
# define KC_RSEQ_INJECT_ASM(n)						\
	"ldr w13, %[inj" #n "]\n\t"					\
	"cmp w13, #0\n\t"						\
	"b.le 333f\n\t"							\
	"222:\n\t"							\
	"subs w13, w13, #1\n\t"						\
	"b.ne 222b\n\t"							\
	"333:\n\t"
#elif defined(KC_ARCH_PPC64LE)
/* r11 and r12 are the sections' own scratch registers; r18 is what the
 * kernel's param_test uses (callee-saved: the compiler saves it). */
# define KC_RSEQ_INJECT_INPUT KC__INJ_INPUTS("m")
# define KC_RSEQ_INJECT_CLOBBER , "r18"
# define KC_RSEQ_INJECT_ASM(n)						\
	"lwz%U[inj" #n "]%X[inj" #n "] %%r18, %[inj" #n "]\n\t"	\
	"cmpwi %%r18, 0\n\t"						\
	"ble 333f\n\t"							\
	"222:\n\t"							\
	"addi %%r18, %%r18, -1\n\t"					\
	"cmpwi %%r18, 0\n\t"						\
	"bne 222b\n\t"							\
	"333:\n\t"
#else
# error "tests/stress/inject.h: no delay injection for this architecture (add a section like those above)"
#endif

#endif
