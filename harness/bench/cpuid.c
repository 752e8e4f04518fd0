/* SPDX-License-Identifier: MIT */
/*
 * The cpuid suite: what it costs to learn which CPU this thread runs on,
 * by every method there is (bench/cpuid_methods.h, shared with the test
 * tests/unit/test_cpuid.c).  Before timing, each benchmark checks that its
 * method names the CPU the harness pinned the thread to, and that
 * sched_getcpu() and the getcpu system call agree.  The timed loops consume
 * each answer (KC_OPAQUE), so no read can be dropped or hoisted.  The x86
 * instructions' rows (rdpid, rdtscp, lsl) exist on x86-64 only.
 */
#include <sched.h>

#include "bench/bench.h"
#include "bench/cpuid_methods.h"

/* The single CPU this thread is pinned to, or -1. */
static int pinned_cpu(void)
{
	cpu_set_t mine;

	if (sched_getaffinity(0, sizeof(mine), &mine) || CPU_COUNT(&mine) != 1)
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &mine))
			return i;
	return -1;
}

/*
 * Pinned (the harness's normal case): the method, sched_getcpu() and the
 * getcpu system call must all name the pinned CPU.  Unpinned (the harness
 * could not pin): the method must agree with two getcpu system calls that
 * bracket it and agree with each other; a migration between them retries.
 */
static int check_method(struct kh_bench_ctx *c, enum kh_cpuid_method m)
{
	const struct kh_cm_desc *d = &kh_cm_methods[m];
	int pin = pinned_cpu();

	if (pin >= 0) {
		int got = d->read(), sys = kh_cm_syscall(), glibc = sched_getcpu();

		if (sys != pin || glibc != pin)
			return kh_fail(c, "pinned to CPU %d, but the getcpu syscall says %d and "
				       "sched_getcpu() %d", pin, sys, glibc);
		if (got != pin)
			return kh_fail(c, "%s says CPU %d; the thread is pinned to CPU %d",
				       d->name, got, pin);
		return KH_OK;
	}
	for (int tries = 0; tries < 1000; tries++) {
		int before = kh_cm_syscall(), got = d->read(), after = kh_cm_syscall();

		if (before < 0)
			return kh_fail(c, "the getcpu syscall failed: %d", before);
		if (before != after)
			continue;	/* migrated meanwhile */
		if (got != before)
			return kh_fail(c, "%s says CPU %d, the getcpu syscall %d (unpinned)",
				       d->name, got, before);
		if (sched_getcpu() == before)
			return KH_OK;
	}
	return kh_fail(c, "unpinned and migrating too often to check %s", d->name);
}

/*
 * One benchmark, the method its row's arg (enum kh_cpuid_method).  Each
 * case has its own loop so that the reader is inlined into it, exactly as
 * a caller would have it; the answer is consumed (KC_OPAQUE).
 */
static int bench_cpuid(struct kh_bench_ctx *c)
{
	long m = kh_arg(c);
	const char *unmet;
	unsigned cpu;

	if (m < 0 || m >= KH_CM_COUNT)
		return kh_fail(c, "no CPU-number method %ld", m);
	if ((unmet = kh_cm_methods[m].unmet()))
		return kh_skip(c, "%s", unmet);
	if (check_method(c, (enum kh_cpuid_method)m))
		return KH_FAIL;
	switch ((enum kh_cpuid_method)m) {
	case KH_CM_RSEQ:
		KH_LOOP(c, { int v = kh_cm_rseq(); KC_OPAQUE(v); });
		break;
	case KH_CM_KC_CPU:
		KH_LOOP(c, { int v = kh_cm_kc_cpu(); KC_OPAQUE(v); });
		break;
	case KH_CM_RDPID:
		KH_LOOP(c, { int v = kh_cm_rdpid(); KC_OPAQUE(v); });
		break;
	case KH_CM_RDTSCP:
		KH_LOOP(c, { int v = kh_cm_rdtscp(); KC_OPAQUE(v); });
		break;
	case KH_CM_LSL:
		KH_LOOP(c, { int v = kh_cm_lsl(); KC_OPAQUE(v); });
		break;
	case KH_CM_VDSO: {
		kh_cm_getcpu_fn f = kh_cm_vdso_fn();

		/* As sched_getcpu() calls it: the CPU only, no node. */
		KH_LOOP(c, f(&cpu, NULL, NULL));
		break;
	}
	case KH_CM_SYSCALL:
		KH_LOOP(c, kc_getcpu_syscall(&cpu, NULL));
		break;
	case KH_CM_GLIBC:
		KH_LOOP(c, { int v = sched_getcpu(); KC_OPAQUE(v); });
		break;
	case KH_CM_COUNT:
		break;
	}
	return KH_OK;
}

/* ------------------------------------------------------------------ suite */

static const struct kh_bench benches[] = {
	{ "rseq-load", "cpu_id loaded from this thread's rseq area (no check, no fallback)",
	  bench_cpuid, KH_NEED_RSEQ, KH_CM_RSEQ, NULL },
	{ "kc_cpu", "kc_cpu(): the rseq load, a sign test, fallbacks out of line",
	  bench_cpuid, 0, KH_CM_KC_CPU, NULL },
#if defined(KC_ARCH_X86_64)
	{ "rdpid", "x86 RDPID (TSC_AUX & 0xfff)",
	  bench_cpuid, KH_NEED_RDPID, KH_CM_RDPID, NULL },
	{ "rdtscp", "x86 RDTSCP, its TSC_AUX output (& 0xfff)",
	  bench_cpuid, KH_NEED_RDTSCP, KH_CM_RDTSCP, NULL },
	{ "lsl", "x86 LSL of the per-CPU GDT entry, selector 0x7b (& 0xfff)",
	  bench_cpuid, KH_NEED_X86_CPUNODE, KH_CM_LSL, NULL },
#endif
	{ "getcpu-vdso", "the vDSO's getcpu(&cpu, NULL, NULL)",
	  bench_cpuid, KH_NEED_VDSO_GETCPU, KH_CM_VDSO, NULL },
	{ "getcpu-syscall", "the getcpu system call, inline",
	  bench_cpuid, 0, KH_CM_SYSCALL, NULL },
	{ "sched_getcpu", "glibc sched_getcpu() (rseq area in 2.35+, else vDSO)",
	  bench_cpuid, 0, KH_CM_GLIBC, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_cpuid = { "cpuid", benches, 0 };
