/* SPDX-License-Identifier: MIT */
/*
 * The cpuid suite: what it costs to learn which CPU this thread runs on,
 * by every method there is (bench/cpuid_methods.h, shared with the test
 * tests/unit/test_cpuid.c).  Before timing, each benchmark checks that its
 * method names the CPU the harness pinned the thread to, and that
 * sched_getcpu() and the getcpu system call agree.  The timed loops consume
 * each answer (KC_OPAQUE), so no read can be dropped or hoisted.
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

int bench_cpuid_rseq(struct kh_bench_ctx *c)
{
	if (kh_cm_unmet_rseq())
		return kh_skip(c, "%s", kh_cm_unmet_rseq());
	if (check_method(c, KH_CM_RSEQ))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = kh_cm_rseq(); KC_OPAQUE(cpu); });
	return KH_OK;
}

int bench_cpuid_kc_cpu(struct kh_bench_ctx *c)
{
	if (check_method(c, KH_CM_KC_CPU))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = kh_cm_kc_cpu(); KC_OPAQUE(cpu); });
	return KH_OK;
}

int bench_cpuid_rdpid(struct kh_bench_ctx *c)
{
	if (kh_cm_unmet_rdpid())
		return kh_skip(c, "%s", kh_cm_unmet_rdpid());
	if (check_method(c, KH_CM_RDPID))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = kh_cm_rdpid(); KC_OPAQUE(cpu); });
	return KH_OK;
}

int bench_cpuid_rdtscp(struct kh_bench_ctx *c)
{
	if (kh_cm_unmet_rdtscp())
		return kh_skip(c, "%s", kh_cm_unmet_rdtscp());
	if (check_method(c, KH_CM_RDTSCP))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = kh_cm_rdtscp(); KC_OPAQUE(cpu); });
	return KH_OK;
}

int bench_cpuid_lsl(struct kh_bench_ctx *c)
{
	if (kh_cm_unmet_lsl())
		return kh_skip(c, "%s", kh_cm_unmet_lsl());
	if (check_method(c, KH_CM_LSL))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = kh_cm_lsl(); KC_OPAQUE(cpu); });
	return KH_OK;
}

int bench_cpuid_vdso(struct kh_bench_ctx *c)
{
	kh_cm_getcpu_fn f = kh_cm_vdso_fn();
	unsigned cpu;

	if (kh_cm_unmet_vdso())
		return kh_skip(c, "%s", kh_cm_unmet_vdso());
	if (check_method(c, KH_CM_VDSO))
		return KH_FAIL;
	/* As sched_getcpu() calls it: the CPU only, no node. */
	KH_LOOP(c, f(&cpu, NULL, NULL));
	return KH_OK;
}

int bench_cpuid_syscall(struct kh_bench_ctx *c)
{
	unsigned cpu;

	if (check_method(c, KH_CM_SYSCALL))
		return KH_FAIL;
	KH_LOOP(c, kc_getcpu_syscall(&cpu, NULL));
	return KH_OK;
}

int bench_cpuid_glibc(struct kh_bench_ctx *c)
{
	if (check_method(c, KH_CM_GLIBC))
		return KH_FAIL;
	KH_LOOP(c, { int cpu = sched_getcpu(); KC_OPAQUE(cpu); });
	return KH_OK;
}
