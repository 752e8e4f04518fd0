/* SPDX-License-Identifier: MIT */
/*
 * Where threads run: the CPUs the process was allowed at start, pinning the
 * measuring thread, and the multi-threaded batches (kh_run_threads) whose
 * threads wait at a barrier so a sample is timed from their release to the
 * end of the last one.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "harness.h"

static cpu_set_t allowed_at_start;
static bool allowed_known;

const cpu_set_t *kh_allowed_cpus(void)
{
	if (!allowed_known) {
		if (sched_getaffinity(0, sizeof(allowed_at_start), &allowed_at_start)) {
			CPU_ZERO(&allowed_at_start);
			CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &allowed_at_start);
		}
		allowed_known = true;
	}
	return &allowed_at_start;
}

int kh_pin_cpu(int cpu)
{
	cpu_set_t allowed, one;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -errno;
	if (!allowed_known) {
		allowed_at_start = allowed;
		allowed_known = true;
	}
	if (cpu < 0) {
		/* The highest allowed CPU: CPU 0 usually takes more of the
		 * machine's interrupts and housekeeping. */
		for (int i = CPU_SETSIZE - 1; i >= 0; i--)
			if (CPU_ISSET(i, &allowed)) {
				cpu = i;
				break;
			}
	}
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
		return -EINVAL;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	return cpu;
}

/* ------------------------------------------------ multi-threaded batches */

struct mt_shared {
	kh_thread_body body;
	void *arg;
	uint64_t iters;
	int ready, go, done;	/* the barrier and the finish line */
	uint64_t aborts;
};

struct mt_thread {
	struct mt_shared *s;
	int tid;
	pthread_t th;
};

/* Wait until *v >= want: spin briefly, then yield, so that a waiter that
 * shares its CPU with a worker (more threads than CPUs) gives the CPU up. */
static void mt_wait(int *v, int want)
{
	for (unsigned spins = 0; __atomic_load_n(v, __ATOMIC_ACQUIRE) < want; spins++) {
		if (spins < 1000)
			kc_cpu_relax();
		else
			sched_yield();
	}
}

static void *mt_worker(void *p)
{
	struct mt_thread *t = p;
	struct mt_shared *s = t->s;
	uint64_t aborts;

	kc_rseq_register_current_thread();	/* a no-op under glibc's */
	__atomic_fetch_add(&s->ready, 1, __ATOMIC_ACQ_REL);
	mt_wait(&s->go, 1);
	aborts = s->body(s->arg, t->tid, __atomic_load_n(&s->iters, __ATOMIC_RELAXED));
	__atomic_fetch_add(&s->aborts, aborts, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int kh_run_threads(struct kh_bench_ctx *c, int threads, kh_thread_body body, void *arg)
{
	static struct mt_thread th[KH_MAX_THREADS];
	const cpu_set_t *allowed = kh_allowed_cpus();
	int cpus[CPU_SETSIZE], ncpus = 0, self = -1, start = 0, created, rc = KH_OK;
	struct mt_shared s = { .body = body, .arg = arg, .iters = c->iters };
	cpu_set_t mine;
	uint64_t aborts;

	if (threads < 1 || threads > KH_MAX_THREADS)
		return kh_skip(c, "%d threads: this harness runs 1 to %d", threads,
			       KH_MAX_THREADS);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, allowed))
			cpus[ncpus++] = i;
	if (!sched_getaffinity(0, sizeof(mine), &mine) && CPU_COUNT(&mine) == 1)
		for (int i = 0; i < ncpus; i++)
			if (CPU_ISSET(cpus[i], &mine)) {
				self = cpus[i];
				start = i;
			}
	c->threads = threads;
	c->thread_cpu[0] = self;
	for (created = 1; created < threads; created++) {
		struct mt_thread *t = &th[created];
		pthread_attr_t attr;
		cpu_set_t one;
		int err;

		t->s = &s;
		t->tid = created;
		c->thread_cpu[created] = cpus[(start + created) % ncpus];
		CPU_ZERO(&one);
		CPU_SET(c->thread_cpu[created], &one);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		err = pthread_create(&t->th, &attr, mt_worker, t);
		pthread_attr_destroy(&attr);
		if (err) {
			rc = kh_fail(c, "cannot create thread %d of %d: %s", created + 1,
				     threads, strerror(err));
			break;
		}
	}
	mt_wait(&s.ready, created - 1);
	if (rc != KH_OK) {
		/* Release the threads there are with nothing to do. */
		__atomic_store_n(&s.iters, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
	} else {
		kh_bench_begin(c);
		__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
		aborts = body(arg, 0, c->iters);
		mt_wait(&s.done, threads - 1);
		kh_bench_end(c);
		c->aborts += aborts + __atomic_load_n(&s.aborts, __ATOMIC_RELAXED);
	}
	for (int i = 1; i < created; i++)
		pthread_join(th[i].th, NULL);
	return rc;
}
