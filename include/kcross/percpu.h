/* SPDX-License-Identifier: MIT */
/*
 * kcross/percpu.h - per-CPU data structures over the rseq operations of
 * <kcross/rseq-ops.h>: a counter, a LIFO list of caller-provided nodes, a
 * fixed-size object pool, and a lock.  Each has the same API whether rseq
 * is available or not.
 *
 * Per-CPU slots.  Every structure keeps one slot per *possible* CPU
 * (/sys/devices/system/cpu/possible, at least sysconf's count), each
 * padded to KC_CACHELINE_SIZE so CPUs never share a line.
 *
 * Choosing the path.  Every operation loads the calling thread's rseq
 * cpu_id (one load from the thread pointer) and, for lists, pools and
 * locks, the process-wide mode word; both are tested in one predictable
 * branch.  rseq active and in range: the critical section.  Otherwise an
 * out-of-line slow path registers the thread if that is kcross's to do
 * (then retries the rseq path) or takes the fallback.  No indirect call.
 *
 * Mixing rseq and fallback threads.  A process can hold threads with and
 * without rseq at once: threads not yet registered (kcross registers its
 * own area lazily), or a thread whose registration was refused (a seccomp
 * filter installed by one thread applies to that thread and the threads it
 * creates, not to the others).
 *
 *   - Counters are safe to mix.  Each slot has two words: `v`, changed only
 *     by rseq critical sections on that CPU, and `atomic_v`, changed only by
 *     atomic adds from fallback threads.  The two paths never write the same
 *     word, and the sum reads both.
 *
 *   - Lists, pools and locks are not: an rseq critical section is atomic
 *     only against other threads on the same CPU, and a fallback thread
 *     taking a slot's lock (or CAS-ing a lock word) may be running on any
 *     CPU, since the CPU number it read may be stale.  So the process
 *     decides once, at the first kc_percpu_{list,pool,lock}_init() (or
 *     operation on one), from whether the deciding thread has rseq:
 *     "rseq" or "atomic".  kc_percpu_mode() only asks: it never fixes the mode (it may register the calling thread for rseq, as kc_cpu() does).  In "atomic" mode every thread uses the locked
 *     fallback (rseq threads too; their cpu_id is just an index).  In "rseq"
 *     mode a thread that cannot be registered aborts the process with a
 *     message instead of corrupting a list.  That takes a thread-specific
 *     difference (in practice a seccomp filter installed by one thread
 *     before it created the failing one, or a foreign rseq registration in
 *     one thread) under kcross's own registration (glibc.pthread.rseq=0, or
 *     a glibc before 2.35): glibc 2.35+ with its own registration already
 *     kills a thread whose registration fails ("Fatal glibc error: rseq
 *     registration failed").  A process-wide lack of rseq is seen by the
 *     first thread already and gives "atomic" mode.
 *
 * Memory order.  The rseq sections are relaxed (see <kcross/pseudocode.h>):
 * a CPU's list is only touched by threads on that CPU, and migration orders
 * a thread's accesses.  Lock acquisition adds an acquire fence; release is a
 * release store.  Results read from other CPUs (kc_percpu_counter_sum,
 * kc_percpu_list_pop_any) are exact only when no operation is in flight.
 *
 * Constructors: do not use these from constructors of priority <= 101 (the
 * rseq offset is set up at priority 101; see <kcross/rseq.h>).
 *
 * Test builds define KC_RSEQ_INJECT_C(n) before including this header; the
 * retry loops here use hooks 7 (counter), 8 (list push), 9 (list pop),
 * 10 (lock), and 11 in the fallbacks (spin loops, and between the read and
 * the write of the locked list operations).
 */
#ifndef KCROSS_PERCPU_H
#define KCROSS_PERCPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <kcross/clock.h>
#include <kcross/rseq-ops.h>
#include <kcross/rseq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- shared */

#define KC__PERCPU_UNDECIDED 0
#define KC__PERCPU_RSEQ 1
#define KC__PERCPU_ATOMIC 2

/* The process-wide mode of lists, pools and locks (0 until decided). */
extern int kc__percpu_mode;

/* "rseq" or "atomic": the mode of lists, pools and locks in this process
 * once decided; before that, the mode the calling thread would decide now
 * (it may register the thread for rseq, as kc_cpu() does, but it leaves the
 * mode undecided: a fingerprint or a log line may call it at any time).
 * Counters do not follow it: they use rseq in every thread that has it (the
 * same answer unless threads differ). */
const char *kc_percpu_mode(void);

/* Number of possible CPUs: the length of every per-CPU array. */
int kc_percpu_nr_cpus(void);

/* Slow paths (src/percpu.c).  kc__percpu_use_rseq: decide the mode if
 * needed and register the thread if that is ours to do; 1 when the caller
 * should retry the rseq path, 0 when it must take the locked fallback;
 * aborts the process when the mode is rseq and this thread cannot have it. */
int kc__percpu_use_rseq(int32_t cpu, int nr);
/* A CPU index for the fallback paths: getcpu modulo nr (0 if it fails). */
int kc__percpu_fallback_cpu(int nr);
/* Spin-wait step: cpu_relax, then sched_yield every 64 spins (a lock holder
 * preempted on an oversubscribed machine is not waited for a whole slice). */
void kc__percpu_spin_slow(void);

static inline void kc__percpu_spin(unsigned int *spins)
{
	if (KC_LIKELY(++*spins & 63))
		kc_cpu_relax();
	else
		kc__percpu_spin_slow();
}

/* True when the rseq path applies: cpu_id in range and rseq mode.  One
 * unsigned compare covers negative ids (unregistered, failed). */
#define KC__PERCPU_RSEQ_OK(cpu, nr)					\
	KC_LIKELY((uint32_t)(cpu) < (uint32_t)(nr) &&			\
		  __atomic_load_n(&kc__percpu_mode, __ATOMIC_RELAXED) == KC__PERCPU_RSEQ)

/* A test-and-test-and-set spinlock word (fallback paths). */
static inline void kc__percpu_spin_lock(intptr_t *lock)
{
	unsigned int spins = 0;

	for (;;) {
		intptr_t expect = 0;

		KC_RSEQ_INJECT_C(11);
		if (__atomic_load_n(lock, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(lock, &expect, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		kc__percpu_spin(&spins);
	}
}

static inline void kc__percpu_spin_unlock(intptr_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ counter */

struct kc__percpu_counter_slot {
	intptr_t v;		/* rseq adds of threads on this CPU */
	intptr_t atomic_v;	/* atomic adds of fallback threads */
} __attribute__((aligned(KC_CACHELINE_SIZE)));

struct kc_percpu_counter {
	struct kc__percpu_counter_slot *cpus;
	int nr;
};

/* 0, or -ENOMEM. */
int kc_percpu_counter_init(struct kc_percpu_counter *c);
void kc_percpu_counter_destroy(struct kc_percpu_counter *c);
/* The total: exact when no add is in flight. */
intptr_t kc_percpu_counter_sum(const struct kc_percpu_counter *c);

/* Out of line: 1 if the thread now has rseq (retry), else adds atomically
 * into the fallback word of its CPU's slot and returns 0. */
int kc__percpu_counter_add_slow(struct kc_percpu_counter *c, intptr_t v, int32_t cpu);

/* Add v to the calling CPU's slot.  Returns how many rseq aborts (preemption,
 * migration, signal inside the section) it retried through: 0 normally. */
static inline int kc_percpu_counter_add(struct kc_percpu_counter *c, intptr_t v)
{
	int aborts = 0;

	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();

		if (KC_UNLIKELY((uint32_t)cpu >= (uint32_t)c->nr)) {
			if (kc__percpu_counter_add_slow(c, v, cpu))
				continue;
			return aborts;
		}
		KC_RSEQ_INJECT_C(7);
		if (KC_LIKELY(kc_rseq_load_add_store(&c->cpus[cpu].v, v, cpu) == KC_RSEQ_DONE))
			return aborts;
		aborts++;
	}
}

/* --------------------------------------------------------------- list */

struct kc_percpu_node {
	struct kc_percpu_node *next;
};

struct kc__percpu_list_slot {
	intptr_t head;		/* struct kc_percpu_node *, as the ops want */
	intptr_t lock;		/* "atomic" mode only */
} __attribute__((aligned(KC_CACHELINE_SIZE)));

struct kc_percpu_list {
	struct kc__percpu_list_slot *cpus;
	int nr;
};

/* 0, or -ENOMEM.  Decides the process mode if nothing did yet. */
int kc_percpu_list_init(struct kc_percpu_list *l);
/* Frees the per-CPU heads; the nodes are the caller's. */
void kc_percpu_list_destroy(struct kc_percpu_list *l);
/* Pop a node from any CPU's list (lowest CPU first), NULL when every list
 * is empty.  For teardown and verification: in rseq mode it must not run
 * concurrently with other operations on the list (it is not a critical
 * section of the CPUs it takes from). */
struct kc_percpu_node *kc_percpu_list_pop_any(struct kc_percpu_list *l);

static __attribute__((noinline, cold, unused))
int kc__percpu_list_push_locked(struct kc_percpu_list *l, struct kc_percpu_node *n)
{
	int cpu = kc__percpu_fallback_cpu(l->nr);
	struct kc__percpu_list_slot *s = &l->cpus[cpu];

	kc__percpu_spin_lock(&s->lock);
	n->next = (struct kc_percpu_node *)s->head;
	KC_RSEQ_INJECT_C(11);
	s->head = (intptr_t)n;
	kc__percpu_spin_unlock(&s->lock);
	return cpu;
}

static __attribute__((noinline, cold, unused))
struct kc_percpu_node *kc__percpu_list_pop_locked(struct kc_percpu_list *l, int *cpup)
{
	int cpu = kc__percpu_fallback_cpu(l->nr);
	struct kc__percpu_list_slot *s = &l->cpus[cpu];
	struct kc_percpu_node *n;

	kc__percpu_spin_lock(&s->lock);
	n = (struct kc_percpu_node *)s->head;
	KC_RSEQ_INJECT_C(11);
	if (n)
		s->head = (intptr_t)n->next;
	kc__percpu_spin_unlock(&s->lock);
	*cpup = cpu;
	return n;
}

/* Push n onto the calling CPU's list; returns that CPU. */
static inline int kc_percpu_list_push(struct kc_percpu_list *l, struct kc_percpu_node *n)
{
	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();
		struct kc__percpu_list_slot *s;
		intptr_t head;

		if (!KC__PERCPU_RSEQ_OK(cpu, l->nr)) {
			if (kc__percpu_use_rseq(cpu, l->nr))
				continue;
			return kc__percpu_list_push_locked(l, n);
		}
		KC_RSEQ_INJECT_C(8);
		s = &l->cpus[cpu];
		/*
		 * The head is read outside the section; the section commits only
		 * if it is still the head.  No ABA problem: whatever happened in
		 * between, n goes on top of the node that is the head at commit,
		 * and n->next points to it.
		 */
		head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
		n->next = (struct kc_percpu_node *)head;
		if (KC_LIKELY(kc_rseq_load_cmp_store(&s->head, head, (intptr_t)n, cpu) ==
			      KC_RSEQ_DONE))
			return cpu;
	}
}

/* Pop from the calling CPU's list; *cpup gets the CPU whose list it used
 * (whether or not that list was empty). */
static inline struct kc_percpu_node *kc__percpu_list_pop_cpu(struct kc_percpu_list *l, int *cpup)
{
	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();
		intptr_t head;
		int rc;

		if (!KC__PERCPU_RSEQ_OK(cpu, l->nr)) {
			if (kc__percpu_use_rseq(cpu, l->nr))
				continue;
			return kc__percpu_list_pop_locked(l, cpup);
		}
		KC_RSEQ_INJECT_C(9);
		/*
		 * ABA-safe only because reading the head, reading head->next and
		 * storing it as the new head are one critical section: no other
		 * thread touches this CPU's list without preempting us (which
		 * aborts the section), and threads on other CPUs never touch it
		 * in rseq mode.  Split in two (read head, then compare-and-store
		 * head->next), a thread preempted between the two could see head
		 * popped, its next changed and head pushed back, and would
		 * install a stale next.
		 */
		rc = kc_rseq_load_notnull_load_store(&l->cpus[cpu].head,
						     offsetof(struct kc_percpu_node, next),
						     &head, cpu);
		if (KC_LIKELY(rc == KC_RSEQ_DONE)) {
			*cpup = cpu;
			return (struct kc_percpu_node *)head;
		}
		if (rc == KC_RSEQ_CMPFAIL) {
			*cpup = cpu;
			return NULL;
		}
	}
}

/* Pop from the calling CPU's list: NULL if that list is empty (other CPUs'
 * lists may not be). */
static inline struct kc_percpu_node *kc_percpu_list_pop(struct kc_percpu_list *l)
{
	int cpu;

	return kc__percpu_list_pop_cpu(l, &cpu);
}

/* --------------------------------------------------------------- pool */

struct kc__percpu_pool_slot {
	intptr_t nr;		/* approximate length of this CPU's cache */
} __attribute__((aligned(KC_CACHELINE_SIZE)));

struct kc_percpu_pool {
	struct kc_percpu_list cache;	/* per-CPU free lists */
	struct kc__percpu_pool_slot *count;
	char *base, *end;		/* the objects */
	size_t stride;			/* object size, rounded up */
	size_t nr_objs;
	size_t cache_per_cpu;
	size_t batch;			/* refill / flush this many */
	pthread_mutex_t lock;		/* protects global, global_nr */
	struct kc_percpu_node *global;
	size_t global_nr;
};

/*
 * nr_objs objects of obj_size bytes (aligned to 16 bytes, at least one
 * pointer), all on the global list at first.  Each CPU caches up to about
 * cache_per_cpu free objects; it takes batch = max(1, cache_per_cpu / 2)
 * from the global list when empty and gives back as many when above
 * cache_per_cpu.  0, -EINVAL (obj_size or nr_objs 0, size overflow) or
 * -ENOMEM.
 */
int kc_percpu_pool_init(struct kc_percpu_pool *p, size_t obj_size, size_t nr_objs,
			size_t cache_per_cpu);
void kc_percpu_pool_destroy(struct kc_percpu_pool *p);

void *kc__percpu_pool_refill(struct kc_percpu_pool *p);
void kc__percpu_pool_flush(struct kc_percpu_pool *p);
void kc__percpu_pool_bad_free(struct kc_percpu_pool *p, void *obj);

/*
 * The per-CPU counts are approximate: they are updated with a relaxed load
 * and store after the list operation, not inside it, so two threads on one
 * CPU (or a thread migrating between the list operation and the update) can
 * lose an update.  They only decide when to flush; a pop that finds the list
 * empty resets the count to 0, so errors do not accumulate past that.
 */
static inline void kc__percpu_pool_count(struct kc_percpu_pool *p, int cpu, intptr_t d)
{
	intptr_t *c = &p->count[cpu].nr;
	intptr_t n = __atomic_load_n(c, __ATOMIC_RELAXED) + d;

	__atomic_store_n(c, n < 0 ? 0 : n, __ATOMIC_RELAXED);
}

/* An object from the calling CPU's cache, else from the global list; NULL
 * when both are empty.  Objects cached on other CPUs are not taken (an rseq
 * list can only be popped on its own CPU), so NULL can come while up to
 * about cache_per_cpu + batch objects per other CPU are free there. */
static inline void *kc_percpu_pool_alloc(struct kc_percpu_pool *p)
{
	int cpu;
	struct kc_percpu_node *n = kc__percpu_list_pop_cpu(&p->cache, &cpu);

	if (KC_LIKELY(n != NULL)) {
		kc__percpu_pool_count(p, cpu, -1);
		return n;
	}
	__atomic_store_n(&p->count[cpu].nr, 0, __ATOMIC_RELAXED);
	return kc__percpu_pool_refill(p);
}

/* Give obj back to the calling CPU's cache.  A pointer outside the pool,
 * NULL included, aborts the process (a range check; double frees are not
 * detected). */
static inline void kc_percpu_pool_free(struct kc_percpu_pool *p, void *obj)
{
	int cpu;

	if (KC_UNLIKELY((char *)obj < p->base || (char *)obj >= p->end))
		kc__percpu_pool_bad_free(p, obj);
	cpu = kc_percpu_list_push(&p->cache, (struct kc_percpu_node *)obj);
	kc__percpu_pool_count(p, cpu, 1);
	if (KC_UNLIKELY((size_t)__atomic_load_n(&p->count[cpu].nr, __ATOMIC_RELAXED) >
			p->cache_per_cpu))
		kc__percpu_pool_flush(p);
}

/* --------------------------------------------------------------- lock */

struct kc__percpu_lock_slot {
	intptr_t v;		/* 0 free, 1 held */
} __attribute__((aligned(KC_CACHELINE_SIZE)));

struct kc_percpu_lock {
	struct kc__percpu_lock_slot *cpus;
	int nr;
};

/* 0, or -ENOMEM.  Decides the process mode if nothing did yet. */
int kc_percpu_lock_init(struct kc_percpu_lock *l);
void kc_percpu_lock_destroy(struct kc_percpu_lock *l);

static __attribute__((noinline, cold, unused))
int kc__percpu_lock_acquire_atomic(struct kc_percpu_lock *l)
{
	int cpu = kc__percpu_fallback_cpu(l->nr);

	kc__percpu_spin_lock(&l->cpus[cpu].v);
	return cpu;
}

/*
 * Take the lock of the calling CPU; returns that CPU, to pass to release.
 * The thread may migrate while it holds the lock: the lock stays that
 * CPU's.  rseq mode: a compare-and-store 0 -> 1 inside a critical section,
 * atomic against the other threads that can take it (those on the same
 * CPU); the release store of a holder elsewhere only ever turns 1 into 0.
 * "atomic" mode: a compare-and-swap on the lock of getcpu()'s CPU.
 */
static inline int kc_percpu_lock_acquire(struct kc_percpu_lock *l)
{
	unsigned int spins = 0;

	for (;;) {
		int32_t cpu = kc_rseq_cpu_raw();
		int rc;

		if (!KC__PERCPU_RSEQ_OK(cpu, l->nr)) {
			if (kc__percpu_use_rseq(cpu, l->nr))
				continue;
			return kc__percpu_lock_acquire_atomic(l);
		}
		KC_RSEQ_INJECT_C(10);
		rc = kc_rseq_load_cmp_store(&l->cpus[cpu].v, 0, 1, cpu);
		if (KC_LIKELY(rc == KC_RSEQ_DONE)) {
			/* The section's load of 0 read the last holder's release
			 * store: order the protected accesses after it.  (TSan
			 * does not model fences, nor rseq sections: it can only
			 * check the "atomic" paths.) */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 12
# pragma GCC diagnostic push
# pragma GCC diagnostic ignored "-Wtsan"
#endif
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 12
# pragma GCC diagnostic pop
#endif
			return cpu;
		}
		if (rc == KC_RSEQ_CMPFAIL)
			kc__percpu_spin(&spins);
	}
}

static inline void kc_percpu_lock_release(struct kc_percpu_lock *l, int cpu)
{
	__atomic_store_n(&l->cpus[cpu].v, 0, __ATOMIC_RELEASE);
}

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_PERCPU_H */
