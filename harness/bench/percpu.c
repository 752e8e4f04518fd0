/* SPDX-License-Identifier: MIT */
/*
 * The percpu suite: what a per-CPU update costs with rseq, against the
 * plain increment (the floor), an atomic, and "find the CPU, then an
 * atomic" (the pre-rseq way), single-threaded; and the percpu-scaling
 * suite: the same counters with 1, N and 2N threads (N = CPUs the process
 * may use), where the shared atomic's line bounces and rseq's does not.
 *
 * Every rseq loop retries on abort and counts the retries in a register
 * (an increment on the abort path only, so the fast path is unchanged);
 * the harness reports them as aborts_per_million.  After every batch the
 * counters are summed and must equal the number of operations exactly.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <kcross/percpu.h>
#include <kcross/rseq-ops.h>

#include "bench/bench.h"

/* ------------------------------------------------------ per-CPU slots */

struct slot {
	intptr_t v;
} __attribute__((aligned(KC_CACHELINE_SIZE)));

struct slots {
	struct slot *cpu;	/* one per possible CPU (kc_percpu_nr_cpus) */
	int nr;
	struct slot shared;	/* the single shared counter, its own line */
	struct kc_percpu_counter counter;	/* percpu-scaling's rseq counter */
	int unregistered;	/* a thread found no rseq area (must not happen) */
};

/*
 * Every CPU this process may run on must have a slot.  Without /sys (an
 * initramfs, an empty chroot) the possible-CPU count can come out too low,
 * and the per-CPU arrays too short: skip rather than index past them (the
 * library itself aborts the process in that case).
 */
static int percpu_ready(struct kh_bench_ctx *c)
{
	const cpu_set_t *allowed = kh_allowed_cpus();
	int nr = kc_percpu_nr_cpus();

	for (int i = nr; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, allowed))
			return kh_skip(c, "CPU %d is allowed but kc_percpu_nr_cpus() says %d CPUs "
				       "are possible (/sys/devices/system/cpu not mounted?)", i, nr);
	return KH_OK;
}

static int slots_init(struct kh_bench_ctx *c, struct slots *s)
{
	int nr = kc_percpu_nr_cpus(), rc;

	memset(s, 0, sizeof(*s));
	if ((rc = percpu_ready(c)) != KH_OK)
		return rc;
	s->cpu = aligned_alloc(KC_CACHELINE_SIZE, sizeof(struct slot) * (size_t)nr);
	if (!s->cpu)
		return kh_fail(c, "cannot allocate %d per-CPU slots", nr);
	memset(s->cpu, 0, sizeof(struct slot) * (size_t)nr);
	s->nr = nr;
	return KH_OK;
}

static intptr_t slots_sum(const struct slots *s)
{
	intptr_t sum = 0;

	for (int i = 0; i < s->nr; i++)
		sum += __atomic_load_n(&s->cpu[i].v, __ATOMIC_RELAXED);
	return sum;
}

/* The count must be exactly `want`; frees the slots either way. */
static int slots_done(struct kh_bench_ctx *c, struct slots *s, intptr_t got, uint64_t want,
		      const char *what)
{
	int unreg = s->unregistered;

	free(s->cpu);
	s->cpu = NULL;
	if (unreg)
		return kh_fail(c, "%d thread(s) had no rseq area", unreg);
	if (got != (intptr_t)want)
		return kh_fail(c, "%s counted %ld after %llu operations", what, (long)got,
			       (unsigned long long)want);
	return KH_OK;
}

/* A usable cpu_id for the slots, else a reason (the registry's
 * KH_NEED_RSEQ normally keeps us from getting here without one); the
 * slots are freed when it is not. */
static int rseq_ready(struct kh_bench_ctx *c, struct slots *s)
{
	int32_t cpu = kc_rseq_cpu_raw();
	int rc = KH_OK;

	if (cpu < 0)
		rc = kh_skip(c, "rseq is not registered for this thread (cpu_id %d)", (int)cpu);
	else if (cpu >= s->nr)
		rc = kh_fail(c, "rseq cpu_id %d is not below the %d possible CPUs", (int)cpu,
			     s->nr);
	if (rc != KH_OK)
		free(s->cpu);
	return rc;
}

/* Slots plus a usable cpu_id for them, for the rseq benchmarks. */
static int slots_init_rseq(struct kh_bench_ctx *c, struct slots *s)
{
	int rc = slots_init(c, s);

	return rc != KH_OK ? rc : rseq_ready(c, s);
}

/* ------------------------------------------------------- the operations */

/* The rseq per-CPU add, retried until it commits; aborts counted. */
static inline __attribute__((always_inline))
void op_rseq_add(struct slot *cpus, uint64_t *aborts)
{
	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();

		if (KC_LIKELY(kc_rseq_load_add_store(&cpus[cpu].v, 1, cpu) == KC_RSEQ_DONE))
			return;
		++*aborts;
	}
}

/* Compare-and-store of v + 1 in a critical section: a CAS without a lock
 * prefix.  A comparison failure (another thread on this CPU got in between
 * the read and the section) is retried but is not an abort. */
static inline __attribute__((always_inline))
void op_rseq_cmpstore(struct slot *cpus, uint64_t *aborts)
{
	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();
		intptr_t *p = &cpus[cpu].v;
		intptr_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
		int rc = kc_rseq_load_cmp_store(p, old, old + 1, cpu);

		if (KC_LIKELY(rc == KC_RSEQ_DONE))
			return;
		*aborts += rc == KC_RSEQ_ABORT;
	}
}

static inline __attribute__((always_inline))
void op_getcpu_atomic(struct slot *cpus)
{
	__atomic_fetch_add(&cpus[sched_getcpu()].v, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------- single-threaded: percpu */

static int bench_percpu_inc_plain(struct kh_bench_ctx *c)
{
	struct slots s;
	int rc;
	intptr_t *p;
	int cpu = kc_cpu();

	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	if (cpu < 0 || cpu >= s.nr) {
		free(s.cpu);
		return kh_fail(c, "kc_cpu() = %d, not a CPU below %d", cpu, s.nr);
	}
	p = &s.cpu[cpu].v;
	/* The barrier makes the compiler load, add and store every time
	 * (one `addq $1, mem` on x86); it emits no instruction itself. */
	KH_LOOP(c, { ++*p; KC_BARRIER(); });
	return slots_done(c, &s, *p, c->iters, "plain increment");
}

static int bench_percpu_add_atomic(struct kh_bench_ctx *c)
{
	struct slots s;
	int rc;
	intptr_t *p;

	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	p = &s.shared.v;
	KH_LOOP(c, __atomic_fetch_add(p, 1, __ATOMIC_RELAXED));
	free(s.cpu);
	if (*p != (intptr_t)c->iters)
		return kh_fail(c, "atomic add counted %ld after %llu", (long)*p,
			       (unsigned long long)c->iters);
	return KH_OK;
}

static int bench_percpu_add_getcpu_atomic(struct kh_bench_ctx *c)
{
	struct slots s;
	int rc;
	int cpu = sched_getcpu();

	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	if (cpu < 0 || cpu >= s.nr) {
		free(s.cpu);
		return kh_fail(c, "sched_getcpu() = %d, not a CPU below %d", cpu, s.nr);
	}
	KH_LOOP(c, op_getcpu_atomic(s.cpu));
	return slots_done(c, &s, slots_sum(&s), c->iters, "sched_getcpu + atomic add");
}

static int bench_percpu_add_vdso_getcpu_atomic(struct kh_bench_ctx *c)
{
#ifdef KC_VDSO_GETCPU
	kc_vdso_getcpu_fn f = (kc_vdso_getcpu_fn)kc_vdso_sym(KC_VDSO_GETCPU);
	struct slots s;
	int rc;
	unsigned cpu = ~0u;

	if (!f)
		return kh_skip(c, "the vDSO has no " KC_VDSO_GETCPU);
	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	if (f(&cpu, NULL, NULL) || cpu >= (unsigned)s.nr) {
		free(s.cpu);
		return kh_fail(c, KC_VDSO_GETCPU " gave CPU %u, not below %d", cpu, s.nr);
	}
	KH_LOOP(c, {
		f(&cpu, NULL, NULL);
		__atomic_fetch_add(&s.cpu[cpu].v, 1, __ATOMIC_RELAXED);
	});
	return slots_done(c, &s, slots_sum(&s), c->iters, "vDSO getcpu + atomic add");
#else
	return kh_skip(c, "this architecture's vDSO exports no getcpu");
#endif
}

static int bench_percpu_add_rseq(struct kh_bench_ctx *c)
{
	struct slots s;
	uint64_t aborts = 0;
	int rc;

	if ((rc = slots_init_rseq(c, &s)) != KH_OK)
		return rc;
	/* The check: one add lands on this CPU's slot and nowhere else. */
	op_rseq_add(s.cpu, &aborts);
	if (s.cpu[kc_rseq_cpu_raw()].v != 1 || slots_sum(&s) != 1) {
		free(s.cpu);
		return kh_fail(c, "one rseq add did not add 1 to this CPU's slot");
	}
	KH_LOOP(c, op_rseq_add(s.cpu, &aborts));
	c->counts_aborts = true;
	c->aborts += aborts;
	return slots_done(c, &s, slots_sum(&s) - 1, c->iters, "rseq add");
}

static int bench_percpu_cmpstore_rseq(struct kh_bench_ctx *c)
{
	struct slots s;
	uint64_t aborts = 0;
	int rc;

	if ((rc = slots_init_rseq(c, &s)) != KH_OK)
		return rc;
	/* The check: a stale expected value stores nothing. */
	if (kc_rseq_load_cmp_store(&s.cpu[kc_rseq_cpu_raw()].v, 5, 6, kc_rseq_cpu_raw()) ==
	    KC_RSEQ_DONE || slots_sum(&s) != 0) {
		free(s.cpu);
		return kh_fail(c, "rseq compare-and-store stored despite a wrong expected value");
	}
	KH_LOOP(c, op_rseq_cmpstore(s.cpu, &aborts));
	c->counts_aborts = true;
	c->aborts += aborts;
	return slots_done(c, &s, slots_sum(&s), c->iters, "rseq compare-and-store");
}

static int bench_percpu_cmpstore_cas(struct kh_bench_ctx *c)
{
	struct slots s;
	int rc;
	intptr_t *p;

	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	p = &s.cpu[0].v;
	KH_LOOP(c, {
		intptr_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

		while (!__atomic_compare_exchange_n(p, &old, old + 1, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
			;
	});
	return slots_done(c, &s, *p, c->iters, "CAS increment");
}

/* ------------------------------- single-threaded: the <kcross/percpu.h> structures */

/*
 * rseq aborts inside the structures' operations are invisible to the caller
 * (the operations retry internally).  They are counted in a separate,
 * untimed pass of the same size over the same code compiled with a counting
 * hook (bench/percpu_aborts.c); the timed pass has no hook.
 */
static int need_rseq_mode(struct kh_bench_ctx *c)
{
	const char *mode;
	int rc;

	if ((rc = percpu_ready(c)) != KH_OK)
		return rc;
	mode = kc_percpu_mode();

	if (strcmp(mode, "rseq"))
		return kh_skip(c, "kcross per-CPU structures run in \"%s\" mode here (no rseq)",
			       mode);
	return KH_OK;
}

static int bench_percpu_counter_kc(struct kh_bench_ctx *c)
{
	struct kc_percpu_counter ctr;
	uint64_t aborts = 0;
	intptr_t sum;
	int rc;

	if ((rc = percpu_ready(c)) != KH_OK)
		return rc;
	if (kc_percpu_counter_init(&ctr))
		return kh_fail(c, "kc_percpu_counter_init: out of memory");
	aborts += (uint64_t)kc_percpu_counter_add(&ctr, 1);
	if (kc_percpu_counter_sum(&ctr) != 1) {
		kc_percpu_counter_destroy(&ctr);
		return kh_fail(c, "kc_percpu_counter_add(1) did not make the sum 1");
	}
	KH_LOOP(c, aborts += (uint64_t)kc_percpu_counter_add(&ctr, 1));
	sum = kc_percpu_counter_sum(&ctr) - 1;
	kc_percpu_counter_destroy(&ctr);
	rc = kc_rseq_cpu_raw() >= 0;	/* the counter used rseq, so aborts mean something */
	c->counts_aborts = rc;
	c->aborts += aborts;
	if (sum != (intptr_t)c->iters)
		return kh_fail(c, "kc_percpu_counter summed %ld after %llu adds", (long)sum,
			       (unsigned long long)c->iters);
	return KH_OK;
}

/* A list push + pop pair on kcross's per-CPU list (rseq mode). */
static int bench_percpu_list_rseq(struct kh_bench_ctx *c)
{
	struct kc_percpu_list l;
	struct kc_percpu_node nodes[2], *n = &nodes[0];
	uint64_t retries;
	int rc;

	if ((rc = need_rseq_mode(c)) != KH_OK)
		return rc;
	if (kc_percpu_list_init(&l))
		return kh_fail(c, "kc_percpu_list_init: out of memory");
	/* The check: LIFO on this CPU's list, empty afterwards. */
	kc_percpu_list_push(&l, &nodes[0]);
	kc_percpu_list_push(&l, &nodes[1]);
	if (kc_percpu_list_pop(&l) != &nodes[1] || kc_percpu_list_pop(&l) != &nodes[0] ||
	    kc_percpu_list_pop(&l) != NULL) {
		kc_percpu_list_destroy(&l);
		return kh_fail(c, "kcross per-CPU list is not LIFO on one CPU");
	}
	KH_LOOP(c, {
		kc_percpu_list_push(&l, n);
		n = kc_percpu_list_pop(&l);
		KC_OPAQUE(n);
	});
	rc = n == &nodes[0] && kc_percpu_list_pop_any(&l) == NULL ? KH_OK
		: kh_fail(c, "push + pop did not return the pushed node");
	if (rc == KH_OK) {
		retries = kh_percpu_retries_list(&l, n, c->iters);
		c->counts_aborts = true;
		c->aborts += retries;
	}
	kc_percpu_list_destroy(&l);
	return rc;
}

static void *nothing(void *arg)
{
	return arg;
}

/*
 * glibc (2.34+) locks a default mutex without an atomic, and malloc skips
 * its arena lock, while the process has never had a second thread.  A
 * program that wants a thread-safe list has threads, and which benchmarks
 * ran before (percpu-scaling creates threads) must not change the figure:
 * so create and join one thread first, once, which flips glibc to its
 * multi-threaded paths for good.
 */
static int make_multithreaded(struct kh_bench_ctx *c)
{
	static bool done;
	pthread_t th;
	int err;

	if (done)
		return KH_OK;
	if ((err = pthread_create(&th, NULL, nothing, NULL)))
		return kh_fail(c, "cannot create a thread: %s", strerror(err));
	pthread_join(th, NULL);
	done = true;
	return KH_OK;
}

/* The same pair on one list under a pthread mutex. */
static int bench_percpu_list_mutex(struct kh_bench_ctx *c)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct kc_percpu_node node, *head = NULL, *n = &node;

	if (make_multithreaded(c))
		return KH_FAIL;

	KH_LOOP(c, {
		pthread_mutex_lock(&lock);
		n->next = head;
		head = n;
		pthread_mutex_unlock(&lock);
		pthread_mutex_lock(&lock);
		n = head;
		if (n)
			head = n->next;
		pthread_mutex_unlock(&lock);
		KC_OPAQUE(n);
	});
	if (n != &node || head != NULL)
		return kh_fail(c, "mutex list push + pop did not return the pushed node");
	return KH_OK;
}

/*
 * The same pair on a lock-free (Treiber) stack: a CAS to push, a CAS to
 * pop.  Single-threaded only, as here: with concurrent pops this plain form
 * has the ABA problem, and the tags or hazard pointers that fix it cost
 * more, so this is a lower bound for a lock-free list.
 */
static inline void treiber_push(struct kc_percpu_node **top, struct kc_percpu_node *n)
{
	struct kc_percpu_node *old = __atomic_load_n(top, __ATOMIC_RELAXED);

	do
		n->next = old;
	while (!__atomic_compare_exchange_n(top, &old, n, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

static inline struct kc_percpu_node *treiber_pop(struct kc_percpu_node **top)
{
	struct kc_percpu_node *old = __atomic_load_n(top, __ATOMIC_ACQUIRE);

	while (old && !__atomic_compare_exchange_n(top, &old, old->next, true,
						   __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		;
	return old;
}

static int bench_percpu_list_treiber(struct kh_bench_ctx *c)
{
	struct kc_percpu_node nodes[2], *top = NULL, *n = &nodes[0];

	treiber_push(&top, &nodes[0]);
	treiber_push(&top, &nodes[1]);
	if (treiber_pop(&top) != &nodes[1] || treiber_pop(&top) != &nodes[0] ||
	    treiber_pop(&top) != NULL)
		return kh_fail(c, "Treiber stack is not LIFO");
	KH_LOOP(c, {
		treiber_push(&top, n);
		n = treiber_pop(&top);
		KC_OPAQUE(n);
	});
	if (n != &nodes[0] || top != NULL)
		return kh_fail(c, "Treiber push + pop did not return the pushed node");
	return KH_OK;
}

#define POOL_OBJ_SIZE 64
#define POOL_OBJS 4096
#define POOL_CACHE 64

/* alloc + free of one 64-byte object from kcross's per-CPU pool. */
static int bench_percpu_pool_kc(struct kh_bench_ctx *c)
{
	struct kc_percpu_pool p;
	void *a, *b, *o = NULL;
	int rc;

	if ((rc = need_rseq_mode(c)) != KH_OK)
		return rc;
	if ((rc = kc_percpu_pool_init(&p, POOL_OBJ_SIZE, POOL_OBJS, POOL_CACHE)))
		return kh_fail(c, "kc_percpu_pool_init: %s", strerror(-rc));
	/* The check: two live objects are distinct, inside the pool, usable. */
	a = kc_percpu_pool_alloc(&p);
	b = kc_percpu_pool_alloc(&p);
	if (!a || !b || a == b || (char *)a < p.base || (char *)b >= p.end) {
		kc_percpu_pool_destroy(&p);
		return kh_fail(c, "kc_percpu_pool_alloc gave %p and %p", a, b);
	}
	memset(a, 0xa5, POOL_OBJ_SIZE);
	memset(b, 0x5a, POOL_OBJ_SIZE);
	kc_percpu_pool_free(&p, a);
	kc_percpu_pool_free(&p, b);
	KH_LOOP(c, {
		o = kc_percpu_pool_alloc(&p);
		KC_OPAQUE(o);
		kc_percpu_pool_free(&p, o);
	});
	if (!o) {
		kc_percpu_pool_destroy(&p);
		return kh_fail(c, "kc_percpu_pool_alloc returned NULL in the loop");
	}
	c->counts_aborts = true;
	c->aborts += kh_percpu_retries_pool(&p, c->iters);
	kc_percpu_pool_destroy(&p);
	return KH_OK;
}

static int bench_percpu_pool_malloc(struct kh_bench_ctx *c)
{
	void *o;

	if (make_multithreaded(c))
		return KH_FAIL;
	if (!(o = malloc(POOL_OBJ_SIZE)))
		return kh_fail(c, "malloc(%d) failed", POOL_OBJ_SIZE);
	free(o);
	/* KC_OPAQUE hides the pointer, so the pair cannot be elided. */
	KH_LOOP(c, {
		o = malloc(POOL_OBJ_SIZE);
		KC_OPAQUE(o);
		free(o);
	});
	return KH_OK;
}

/* Acquire + release of this CPU's lock in kcross's per-CPU lock. */
static int bench_percpu_lock_rseq(struct kh_bench_ctx *c)
{
	struct kc_percpu_lock l;
	int cpu, rc;

	if ((rc = need_rseq_mode(c)) != KH_OK)
		return rc;
	if (kc_percpu_lock_init(&l))
		return kh_fail(c, "kc_percpu_lock_init: out of memory");
	cpu = kc_percpu_lock_acquire(&l);
	if (cpu != kc_rseq_cpu_raw() || l.cpus[cpu].v != 1) {
		kc_percpu_lock_destroy(&l);
		return kh_fail(c, "kc_percpu_lock_acquire returned CPU %d, running on %d", cpu,
			       (int)kc_rseq_cpu_raw());
	}
	kc_percpu_lock_release(&l, cpu);
	KH_LOOP(c, {
		cpu = kc_percpu_lock_acquire(&l);
		kc_percpu_lock_release(&l, cpu);
	});
	rc = l.cpus[cpu].v == 0 ? KH_OK : kh_fail(c, "the lock is still held after release");
	if (rc == KH_OK) {
		c->counts_aborts = true;
		c->aborts += kh_percpu_retries_lock(&l, c->iters);
	}
	kc_percpu_lock_destroy(&l);
	return rc;
}

/* Acquire + release of a test-and-test-and-set CAS spinlock. */
static int bench_percpu_lock_cas(struct kh_bench_ctx *c)
{
	intptr_t lock = 0;

	KH_LOOP(c, {
		intptr_t expect = 0;

		while (__atomic_load_n(&lock, __ATOMIC_RELAXED) != 0 ||
		       !__atomic_compare_exchange_n(&lock, &expect, 1, false, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED)) {
			expect = 0;
			kc_cpu_relax();
		}
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	});
	return lock == 0 ? KH_OK : kh_fail(c, "the CAS lock is still held after release");
}

/* ----------------------------------------------------- percpu-scaling */

static uint64_t body_shared_atomic(void *arg, int tid, uint64_t iters)
{
	struct slots *s = arg;

	KH_REPEAT(iters)
		__atomic_fetch_add(&s->shared.v, 1, __ATOMIC_RELAXED);
	return 0;
}

/* The per-CPU counter of <kcross/percpu.h>: its add is the rseq add plus
 * a range check of cpu_id (which also sends unregistered threads to the
 * slow path); it returns the aborts it retried. */
static uint64_t body_rseq(void *arg, int tid, uint64_t iters)
{
	struct slots *s = arg;
	uint64_t aborts = 0;

	if (kc_rseq_cpu_raw() < 0) {	/* would take the atomic fallback */
		__atomic_fetch_add(&s->unregistered, 1, __ATOMIC_RELAXED);
		return 0;
	}
	KH_REPEAT(iters)
		aborts += (uint64_t)kc_percpu_counter_add(&s->counter, 1);
	return aborts;
}

static uint64_t body_getcpu_atomic(void *arg, int tid, uint64_t iters)
{
	struct slots *s = arg;

	KH_REPEAT(iters)
		op_getcpu_atomic(s->cpu);
	return 0;
}

/*
 * The row's arg is the thread count: 0 one thread, k > 0 k threads per
 * CPU the process may use (N = CPUs allowed at start).
 */
#define ONE_THREAD 0
#define PER_CPU(k) (k)

static int scaling(struct kh_bench_ctx *c, kh_thread_body body, const char *what)
{
	long per_cpu = kh_arg(c);
	int n = CPU_COUNT(kh_allowed_cpus());
	long threads = per_cpu == ONE_THREAD ? 1 : per_cpu * n;
	struct slots s;
	intptr_t got;
	int rc;

	if (per_cpu < 0 || threads > KH_MAX_THREADS)
		return kh_skip(c, "%ld threads: this harness runs 1 to %d", threads,
			       KH_MAX_THREADS);
	if ((rc = slots_init(c, &s)) != KH_OK)
		return rc;
	if (body == body_rseq) {
		if ((rc = rseq_ready(c, &s)) != KH_OK)
			return rc;
		if (kc_percpu_counter_init(&s.counter)) {
			free(s.cpu);
			return kh_fail(c, "kc_percpu_counter_init: out of memory");
		}
	}
	rc = kh_run_threads(c, (int)threads, body, &s);
	if (body == body_rseq) {
		got = kc_percpu_counter_sum(&s.counter);
		kc_percpu_counter_destroy(&s.counter);
		c->counts_aborts = true;
	} else {
		got = body == body_shared_atomic ? s.shared.v : slots_sum(&s);
	}
	if (rc != KH_OK) {
		free(s.cpu);
		return rc;
	}
	return slots_done(c, &s, got, c->iters * (uint64_t)threads, what);
}

static int bench_scaling_atomic(struct kh_bench_ctx *c)
{
	return scaling(c, body_shared_atomic, "shared atomic counter");
}

static int bench_scaling_rseq(struct kh_bench_ctx *c)
{
	return scaling(c, body_rseq, "per-CPU rseq counter");
}

static int bench_scaling_getcpu_atomic(struct kh_bench_ctx *c)
{
	return scaling(c, body_getcpu_atomic, "per-CPU sched_getcpu + atomic counter");
}

/* ----------------------------------------------------------------- suites */

static const struct kh_bench percpu_benches[] = {
	{ "inc-plain", "plain increment of this CPU's slot (the floor; not atomic)",
	  bench_percpu_inc_plain, 0, 0, NULL },
	{ "add-atomic", "atomic add (lock add) to one counter",
	  bench_percpu_add_atomic, 0, 0, NULL },
	{ "add-getcpu-atomic", "sched_getcpu() + atomic add to that CPU's slot",
	  bench_percpu_add_getcpu_atomic, 0, 0, NULL },
	{ "add-vdso-getcpu-atomic", "vDSO getcpu + atomic add to that CPU's slot",
	  bench_percpu_add_vdso_getcpu_atomic, KH_NEED_VDSO_GETCPU, 0, NULL },
	{ "add-rseq", "rseq add to this CPU's slot (load cpu_id, section, retry on abort)",
	  bench_percpu_add_rseq, KH_NEED_RSEQ, 0, NULL },
	{ "cmpstore-rseq", "read + rseq compare-and-store of slot+1, retried",
	  bench_percpu_cmpstore_rseq, KH_NEED_RSEQ, 0, NULL },
	{ "cmpstore-cas", "read + CAS (lock cmpxchg) of counter+1, retried",
	  bench_percpu_cmpstore_cas, 0, 0, NULL },
	{ "counter-kc", "kc_percpu_counter_add(1): the rseq add behind its range check",
	  bench_percpu_counter_kc, KH_NEED_RSEQ, 0, NULL },
	{ "list-rseq", "push + pop on kcross's per-CPU list (rseq sections)",
	  bench_percpu_list_rseq, KH_NEED_RSEQ, 0, NULL },
	{ "list-mutex", "push + pop on a list under a pthread mutex",
	  bench_percpu_list_mutex, 0, 0, NULL },
	{ "list-treiber", "push + pop on a lock-free CAS (Treiber) stack, one thread",
	  bench_percpu_list_treiber, 0, 0, NULL },
	{ "pool-kc", "alloc + free of 64 bytes from kcross's per-CPU pool",
	  bench_percpu_pool_kc, KH_NEED_RSEQ, 0, NULL },
	{ "pool-malloc", "malloc(64) + free",
	  bench_percpu_pool_malloc, 0, 0, NULL },
	{ "lock-rseq", "acquire + release of this CPU's kcross per-CPU lock (rseq)",
	  bench_percpu_lock_rseq, KH_NEED_RSEQ, 0, NULL },
	{ "lock-cas", "acquire + release of a CAS spinlock",
	  bench_percpu_lock_cas, 0, 0, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_percpu = { "percpu", percpu_benches, 0 };

static const struct kh_bench scaling_benches[] = {
	{ "counter-atomic-x1", "one shared atomic counter, 1 thread",
	  bench_scaling_atomic, 0, ONE_THREAD, NULL },
	{ "counter-atomic-xN", "one shared atomic counter, a thread per allowed CPU",
	  bench_scaling_atomic, 0, PER_CPU(1), NULL },
	{ "counter-atomic-x2N", "one shared atomic counter, 2 threads per allowed CPU",
	  bench_scaling_atomic, 0, PER_CPU(2), NULL },
	{ "counter-rseq-x1", "kc_percpu_counter (rseq), 1 thread",
	  bench_scaling_rseq, KH_NEED_RSEQ, ONE_THREAD, NULL },
	{ "counter-rseq-xN", "kc_percpu_counter (rseq), a thread per allowed CPU",
	  bench_scaling_rseq, KH_NEED_RSEQ, PER_CPU(1), NULL },
	{ "counter-rseq-x2N", "kc_percpu_counter (rseq), 2 threads per allowed CPU",
	  bench_scaling_rseq, KH_NEED_RSEQ, PER_CPU(2), NULL },
	{ "counter-getcpu-atomic-x1", "per-CPU sched_getcpu + atomic counter, 1 thread",
	  bench_scaling_getcpu_atomic, 0, ONE_THREAD, NULL },
	{ "counter-getcpu-atomic-xN",
	  "per-CPU sched_getcpu + atomic counter, a thread per allowed CPU",
	  bench_scaling_getcpu_atomic, 0, PER_CPU(1), NULL },
	{ "counter-getcpu-atomic-x2N",
	  "per-CPU sched_getcpu + atomic counter, 2 threads per allowed CPU",
	  bench_scaling_getcpu_atomic, 0, PER_CPU(2), NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_percpu_scaling = { "percpu-scaling", scaling_benches, 0 };
