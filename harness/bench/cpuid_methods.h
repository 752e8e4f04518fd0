/* SPDX-License-Identifier: MIT */
/*
 * Every way user space can learn the number of the CPU it runs on, as
 * static inline readers shared by the cpuid benchmarks (bench/cpuid.c) and
 * their correctness test (tests/unit/test_cpuid.c), so that what is timed
 * is exactly what is tested.
 *
 * Each reader returns the CPU number, or a negative value when the method
 * gave no answer (rseq not registered, a failed system call, an invalid
 * segment).  Each method has an `unmet` check: NULL when this machine has
 * it, else why not, in words.
 *
 *   rseq      the cpu_id field of this thread's rseq area, one load
 *   kc_cpu    kc_cpu(): that load, a sign test, and the fallbacks
 *   rdpid     x86 RDPID: reads IA32_TSC_AUX, which Linux sets to
 *             (node << 12) | cpu on every CPU with RDTSCP or RDPID
 *   rdtscp    the same MSR as the ecx output of RDTSCP (also reads the TSC)
 *   lsl       x86 LSL of the per-CPU GDT entry GDT_ENTRY_CPUNODE (15 on
 *             x86-64, selector 15*8+3 = 0x7b = __CPUNODE_SEG), whose limit
 *             Linux sets to (node << 12) | cpu; the vDSO's fallback when
 *             the CPU has no RDPID
 *   vdso      the vDSO's getcpu (which itself uses rdpid or lsl on x86)
 *   syscall   the getcpu system call
 *   glibc     sched_getcpu(): reads glibc's rseq area (2.35+), else vDSO
 *
 * Architecture checks live here, not in the benchmarks: this header is the
 * harness's "arch.h" for CPU-number instructions.
 */
#ifndef KCROSS_BENCH_CPUID_METHODS_H
#define KCROSS_BENCH_CPUID_METHODS_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include <kcross/kcross.h>

#if defined(KC_ARCH_X86_64)
# include <cpuid.h>
#endif

/* Linux puts the node above bit 12 of TSC_AUX and of the CPUNODE limit
 * (arch/x86/include/asm/segment.h: VDSO_CPUNODE_BITS, VDSO_CPUNODE_MASK). */
#define KH_CPUNODE_BITS 12
#define KH_CPUNODE_MASK 0xfffu
/* x86-64 GDT_ENTRY_CPUNODE * 8 + 3 (RPL 3). */
#define KH_CPUNODE_SEG 0x7bu

enum kh_cpuid_method {
	KH_CM_RSEQ,
	KH_CM_KC_CPU,
	KH_CM_RDPID,
	KH_CM_RDTSCP,
	KH_CM_LSL,
	KH_CM_VDSO,
	KH_CM_SYSCALL,
	KH_CM_GLIBC,
	KH_CM_COUNT
};

/* ------------------------------------------------------------- readers */

static inline int kh_cm_rseq(void)
{
	return (int)kc_rseq_cpu_raw();
}

static inline int kh_cm_kc_cpu(void)
{
	return kc_cpu();
}

#if defined(KC_ARCH_X86_64)
static inline int kh_cm_rdpid(void)
{
	uint64_t aux;

	__asm__ __volatile__("rdpid %0" : "=r"(aux));
	return (int)(aux & KH_CPUNODE_MASK);
}

static inline int kh_cm_rdtscp(void)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	return (int)(aux & KH_CPUNODE_MASK);
}

/* LSL sets ZF when the selector is valid and visible at CPL 3; otherwise
 * it leaves the destination alone and clears ZF. */
static inline int kh_cm_lsl(void)
{
	unsigned long limit = 0;
	uint8_t ok;

	__asm__ __volatile__("lsl %[sel], %k[lim]\n\tsetz %[ok]"
			     : [lim] "+r"(limit), [ok] "=qm"(ok)
			     : [sel] "r"(KH_CPUNODE_SEG) : "cc");
	return ok ? (int)(limit & KH_CPUNODE_MASK) : -1;
}
#else
static inline int kh_cm_rdpid(void) { return -1; }
static inline int kh_cm_rdtscp(void) { return -1; }
static inline int kh_cm_lsl(void) { return -1; }
#endif

typedef kc_vdso_getcpu_fn kh_cm_getcpu_fn;

/* The vDSO's getcpu, or NULL. */
static inline kh_cm_getcpu_fn kh_cm_vdso_fn(void)
{
#ifdef KC_VDSO_GETCPU
	return (kh_cm_getcpu_fn)kc_vdso_sym(KC_VDSO_GETCPU);
#else
	return NULL;
#endif
}

static inline int kh_cm_vdso_with(kh_cm_getcpu_fn f)
{
	unsigned cpu = ~0u;

	if (!f || f(&cpu, NULL, NULL))
		return -1;
	return (int)cpu;
}

static inline int kh_cm_vdso(void)
{
	return kh_cm_vdso_with(kh_cm_vdso_fn());
}

static inline int kh_cm_syscall(void)
{
	unsigned cpu = ~0u;
	int rc = kc_getcpu_syscall(&cpu, NULL);

	return rc ? rc : (int)cpu;
}

static inline int kh_cm_glibc(void)
{
	return sched_getcpu();
}

/* ------------------------------------------------------ what is there */

static inline const char *kh_cm_unmet_rseq(void)
{
	struct kc_rseq_info i = kc_rseq_info();

	if (i.owner == KC_RSEQ_OWNER_NONE || kc_rseq_cpu_raw() < 0)
		return i.why ? i.why : "rseq is not registered for this thread";
	return NULL;
}

static inline const char *kh_cm_unmet_none(void)
{
	return NULL;
}

static inline const char *kh_cm_unmet_rdpid(void)
{
#if defined(KC_ARCH_X86_64)
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & (1u << 22)))
		return "CPUID.(EAX=7,ECX=0):ECX[22] says this CPU has no RDPID";
	return NULL;
#else
	return "RDPID is an x86 instruction";
#endif
}

static inline const char *kh_cm_unmet_rdtscp(void)
{
#if defined(KC_ARCH_X86_64)
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000001, &a, &b, &c, &d) || !(d & (1u << 27)))
		return "CPUID.80000001H:EDX[27] says this CPU has no RDTSCP";
	return NULL;
#else
	return "RDTSCP is an x86 instruction";
#endif
}

static inline const char *kh_cm_unmet_lsl(void)
{
#if defined(KC_ARCH_X86_64)
	if (kh_cm_lsl() < 0)
		return "LSL of selector 0x7b fails: this kernel has no user-visible "
		       "per-CPU GDT entry (GDT_ENTRY_CPUNODE)";
	return NULL;
#else
	return "LSL and the GDT exist only on x86";
#endif
}

static inline const char *kh_cm_unmet_vdso(void)
{
#ifdef KC_VDSO_GETCPU
	if (!kc_vdso_self())
		return "no usable vDSO in this process (AT_SYSINFO_EHDR absent or unparsable)";
	if (!kh_cm_vdso_fn())
		return "the vDSO does not export " KC_VDSO_GETCPU;
	return NULL;
#else
	return "this architecture's vDSO exports no getcpu";
#endif
}

/* --------------------------------------------------------------- table */

struct kh_cm_desc {
	const char *name;
	int (*read)(void);
	const char *(*unmet)(void);
};

static const struct kh_cm_desc kh_cm_methods[KH_CM_COUNT] = {
	[KH_CM_RSEQ] = { "rseq", kh_cm_rseq, kh_cm_unmet_rseq },
	[KH_CM_KC_CPU] = { "kc_cpu", kh_cm_kc_cpu, kh_cm_unmet_none },
	[KH_CM_RDPID] = { "rdpid", kh_cm_rdpid, kh_cm_unmet_rdpid },
	[KH_CM_RDTSCP] = { "rdtscp", kh_cm_rdtscp, kh_cm_unmet_rdtscp },
	[KH_CM_LSL] = { "lsl", kh_cm_lsl, kh_cm_unmet_lsl },
	[KH_CM_VDSO] = { "vdso", kh_cm_vdso, kh_cm_unmet_vdso },
	[KH_CM_SYSCALL] = { "syscall", kh_cm_syscall, kh_cm_unmet_none },
	[KH_CM_GLIBC] = { "glibc", kh_cm_glibc, kh_cm_unmet_none },
};

#endif /* KCROSS_BENCH_CPUID_METHODS_H */
