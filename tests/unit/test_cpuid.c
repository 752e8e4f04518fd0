/* SPDX-License-Identifier: MIT */
/*
 * Every CPU-number method of the cpuid suite (harness/bench/cpuid_methods.h,
 * the very readers the benchmarks time) agrees with the getcpu system call:
 *
 *   pinned      pinned to each allowed CPU in turn, in the main thread and
 *               in a second thread (whose rseq area is registered at its
 *               start, by glibc or lazily by kcross);
 *   migration   re-pinned back and forth between CPUs many times, all
 *               methods read after each re-pin: a method that caches the
 *               CPU, or that the kernel updates late (rseq's cpu_id is
 *               written on the return to user space after a migration),
 *               names the CPU the thread left.
 *
 * A method this machine lacks (rdpid on a CPU without it, rseq under
 * qemu-user or a seccomp filter, no vDSO...) is skipped with its reason.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <kcross/kcross.h>
#include "tap.h"
#include "bench/cpuid_methods.h"

#define MIGRATIONS 2000

static int cpus[CPU_SETSIZE], ncpus;
static const char *unmet[KH_CM_COUNT];

static int pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* Pinned to each CPU in turn: every method names it. */
static void check_pinned(const char *who)
{
	for (int i = 0; i < ncpus; i++) {
		int sys;

		if (pin(cpus[i])) {
			tap_ok(0, "%s: pin to CPU %d", who, cpus[i]);
			continue;
		}
		sys = kh_cm_syscall();
		tap_ok(sys == cpus[i], "%s: pinned to CPU %d, the getcpu syscall says %d",
		       who, cpus[i], sys);
		for (int m = 0; m < KH_CM_COUNT; m++) {
			int got;

			if (unmet[m])
				continue;
			got = kh_cm_methods[m].read();
			tap_ok(got == sys, "%s: CPU %d: %s says %d", who, cpus[i],
			       kh_cm_methods[m].name, got);
		}
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	/* The raw rseq load needs this thread's area registered: glibc did it
	 * at thread start, else kcross does it now (kc_cpu() would do it on
	 * its first slow path, the raw load never). */
	if (!unmet[KH_CM_RSEQ])
		tap_ok(kc_rseq_register_current_thread() == 0,
		       "second thread: rseq area registered");
	check_pinned("second thread");
	return NULL;
}

/* Re-pinned between CPUs: after each move, every method names the new CPU. */
static void check_migrations(void)
{
	int wrong[KH_CM_COUNT] = { 0 }, first_got[KH_CM_COUNT], first_want[KH_CM_COUNT];
	int sys_wrong = 0, pin_failed = 0;

	if (ncpus < 2) {
		tap_skip("migration: only CPU %d is allowed, there is nowhere to migrate to",
			 cpus[0]);
		return;
	}
	for (int round = 0; round < MIGRATIONS; round++) {
		/* Alternate neighbours, and every few rounds jump further, so
		 * with more than two CPUs every pair gets exercised. */
		int target = cpus[(round + round / 7) % ncpus];
		int sys;

		if (pin(target)) {
			pin_failed++;
			continue;
		}
		sys = kh_cm_syscall();
		if (sys != target)
			sys_wrong++;
		for (int m = 0; m < KH_CM_COUNT; m++) {
			int got;

			if (unmet[m])
				continue;
			got = kh_cm_methods[m].read();
			if (got != target && !wrong[m]++) {
				first_got[m] = got;
				first_want[m] = target;
			}
		}
	}
	tap_ok(!pin_failed, "migration: %d of %d re-pins failed", pin_failed, MIGRATIONS);
	tap_ok(!sys_wrong, "migration: the getcpu syscall disagreed with the new pinning %d times",
	       sys_wrong);
	for (int m = 0; m < KH_CM_COUNT; m++) {
		if (unmet[m])
			continue;
		if (wrong[m])
			tap_ok(0, "migration: %s named the wrong CPU %d times of %d (first: %d "
			       "instead of %d)", kh_cm_methods[m].name, wrong[m], MIGRATIONS,
			       first_got[m], first_want[m]);
		else
			tap_ok(1, "migration: %s named the new CPU after each of %d re-pins",
			       kh_cm_methods[m].name, MIGRATIONS);
	}
}

int main(void)
{
	cpu_set_t allowed;
	pthread_t th;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		tap_skip_all("sched_getaffinity failed: cannot pin");
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed))
			cpus[ncpus++] = i;
	tap_diag("allowed CPUs: %d; rseq owner: %s", ncpus,
		 kc_rseq_owner_name(kc_rseq_info().owner));
	for (int m = 0; m < KH_CM_COUNT; m++) {
		unmet[m] = kh_cm_methods[m].unmet();
		if (unmet[m])
			tap_skip("%s: %s", kh_cm_methods[m].name, unmet[m]);
	}
	/* The always-available ones must really be there. */
	tap_ok(kh_cm_syscall() >= 0, "the getcpu system call works");
	tap_ok(kh_cm_kc_cpu() >= 0, "kc_cpu() gives a CPU (rseq or its fallback)");

	check_pinned("main thread");
	if (pthread_create(&th, NULL, thread_main, NULL) == 0) {
		pthread_join(th, NULL);
	} else {
		tap_ok(0, "create a second thread");
	}
	check_migrations();
	sched_setaffinity(0, sizeof(allowed), &allowed);
	return tap_done();
}
