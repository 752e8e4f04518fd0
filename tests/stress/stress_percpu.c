/* SPDX-License-Identifier: MIT */
/*
 * Stress test of the per-CPU structures of <kcross/percpu.h>, in the manner
 * of the kernel's rseq param_test: many more threads than CPUs, random
 * delays injected at every step of every critical section (tests/stress/
 * inject.h, counts randomised per run), threads re-pinning themselves to
 * random CPUs (migration, also while holding a per-CPU lock), a thread
 * sending signals to the workers (the counter test's handler adds to the
 * counter too, nesting a section inside an aborted one), and sched_yield.
 *
 * Checks:
 *   counter  the sum equals every add made, handlers' included; with rseq,
 *            section attempts = adds + the aborts the adds reported
 *   list     no node popped while another thread holds it; at the end every
 *            node is on a list exactly once (count, id sum, bitmap)
 *   pool     no object handed out while held; held objects keep their
 *            contents; at the end every object can be allocated exactly once
 *   lock     never two holders of one CPU's lock; a plain read-delay-write
 *            counter under the lock loses no update
 *
 * Usage: stress_percpu [-s SCALE] [-t THREADS] [-S SEED] [-H HOOK=COUNT]...
 *                      [--fallback] [counter|list|pool|lock ...]
 *   SCALE (times $KC_STRESS_SCALE if set) multiplies the CI size: 4M counter
 *   adds + 2M list, 2M pool and 2M lock operations, 10^7 in all.
 *   -H fixes a hook's delay (negative: yield every -COUNT calls) in every
 *   round instead of drawing it; the run is ROUNDS rounds, each drawing the
 *   others afresh from SEED.
 *   --fallback re-executes itself with glibc's rseq off and a seccomp filter
 *   answering rseq with ENOSYS: the "atomic" paths.
 * Exit: 0 pass, 1 fail, 77 skipped (with the reason).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <kcross/percpu.h>
#include "refuse_rseq.h"
#include "tap.h"

#ifndef KC_RSEQ_INJECT_ASM
# error "build with -include tests/stress/inject.h"
#endif

/* Each run is this many rounds, each with freshly drawn delays. */
#define ROUNDS 8

int kc_stress_loop[KC_STRESS_NHOOKS];
__thread unsigned long kc_stress_attempts;
__thread unsigned int kc_stress_yield_tick;

/* ------------------------------------------------ set-up before kcross */

static long filter_rc = 1;	/* 1: not asked for */


#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"
/* Before kcross's priority-101 constructor registers the main thread. */
__attribute__((constructor(100))) static void before_kcross(void)
{
	const char *f = getenv("KC_STRESS_FALLBACK");

	if (f && !strcmp(f, "1"))
		filter_rc = refuse_rseq();
}

static bool rseq_in_kernel(void)
{
	return syscall(SYS_rseq, NULL, 0, 0, 0) != -1 || errno != ENOSYS;
}

/* ------------------------------------------------------------- chaos */

static int nthreads;
static int ncpus, cpus[CPU_SETSIZE];
static cpu_set_t all_cpus;
static bool rseq_mode;
static int stop_storm;

static unsigned int rnd(unsigned int *s)	/* xorshift32 */
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct worker {
	pthread_t t;
	int id;
	unsigned int seed;
	long ops;		/* operations to do */
	long progress;		/* operations done so far (for the watchdog) */
	/* results */
	long expect, aborts, bad, nulls, done_ops;
	unsigned long attempts, signals, migrations;
	char pad[64];
};

/* Every few hundred operations: re-pin to a random CPU (or back to all),
 * or yield. */
static void chaos(struct worker *w)
{
	unsigned int r = rnd(&w->seed);

	__atomic_store_n(&w->progress, w->progress + 1, __ATOMIC_RELAXED);
	if (r % 512 == 0 && ncpus > 1) {
		cpu_set_t one;

		if ((r >> 9) % 8 == 0) {
			sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
		} else {
			CPU_ZERO(&one);
			CPU_SET(cpus[(r >> 12) % (unsigned)ncpus], &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
		w->migrations++;
	} else if (r % 2048 == 1) {
		sched_yield();
	}
}

/* Signals: the handler counts, and in the counter test adds 1. */
static struct kc_percpu_counter *sig_counter;
static __thread long sig_adds, sig_aborts, sig_count;

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	sig_count++;
	if (sig_counter) {
		sig_aborts += kc_percpu_counter_add(sig_counter, 1);
		sig_adds++;
	}
	errno = saved;
}

/* Stop taking signals, then read what the handler counted. */
static void worker_finish(struct worker *w)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	w->signals = (unsigned long)sig_count;
	w->attempts = __atomic_load_n(&kc_stress_attempts, __ATOMIC_RELAXED);
}

static struct worker *workers;
static int workers_done;
static unsigned int storm_us;

static void *storm(void *p)
{
	struct timespec ts = { 0, (long)storm_us * 1000 };

	(void)p;
	while (!__atomic_load_n(&stop_storm, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < nthreads; i++)
			pthread_kill(workers[i].t, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* What the watchdog prints about the structure under test. */
static void (*stall_dump)(void);

#define STALL_SECONDS 60

/* No worker made progress for STALL_SECONDS: say where they are, abort. */
static void stalled(void)
{
	fprintf(stderr, "stress_percpu: no progress for %d s; workers (done %d of %d):\n",
		STALL_SECONDS, __atomic_load_n(&workers_done, __ATOMIC_RELAXED), nthreads);
	for (int i = 0; i < nthreads; i++)
		fprintf(stderr, "  worker %d: %ld of %ld operations\n", i,
			__atomic_load_n(&workers[i].progress, __ATOMIC_RELAXED), workers[i].ops);
	if (stall_dump)
		stall_dump();
	abort();
}

/* Run fn in nthreads workers with the signal storm; returns seconds. */
static double run(void *(*fn)(void *), long total_ops, unsigned int seed)
{
	pthread_t st;
	double t0 = now(), last_change = t0;
	long last_sum = -1;

	memset(workers, 0, sizeof(*workers) * (size_t)nthreads);
	__atomic_store_n(&stop_storm, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&workers_done, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].seed = (seed + (unsigned)i * 2654435761u) | 1;
		workers[i].ops = total_ops / nthreads;
		if (pthread_create(&workers[i].t, NULL, fn, &workers[i])) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	pthread_create(&st, NULL, storm, NULL);
	/* Workers stay joinable (valid targets for pthread_kill) until the
	 * storm has stopped. */
	while (__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE) < nthreads) {
		struct timespec ts = { 0, 2000000 };
		long sum = 0;

		nanosleep(&ts, NULL);
		for (int i = 0; i < nthreads; i++)
			sum += __atomic_load_n(&workers[i].progress, __ATOMIC_RELAXED);
		if (sum != last_sum) {
			last_sum = sum;
			last_change = now();
		} else if (now() - last_change > STALL_SECONDS) {
			stalled();
		}
	}
	__atomic_store_n(&stop_storm, 1, __ATOMIC_RELEASE);
	pthread_join(st, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i].t, NULL);
	return now() - t0;
}

#define WORKER_DONE() __atomic_fetch_add(&workers_done, 1, __ATOMIC_RELEASE)

static void report(const char *name, double secs, long ops)
{
	unsigned long att = 0, sig = 0, mig = 0;

	for (int i = 0; i < nthreads; i++) {
		att += workers[i].attempts;
		sig += workers[i].signals;
		mig += workers[i].migrations;
	}
	tap_diag("%s: %ld ops in %.2f s, %d threads, %lu signals, %lu migrations, "
		 "%lu section attempts", name, ops, secs, nthreads, sig, mig, att);
}

/* ------------------------------------------------------------ counter */

static struct kc_percpu_counter counter;

static void *counter_worker(void *p)
{
	struct worker *w = p;
	long expect = 0, aborts = 0;

	for (long i = 0; i < w->ops; i++) {
		intptr_t v = (intptr_t)(rnd(&w->seed) % 5) - 1;

		aborts += kc_percpu_counter_add(&counter, v);
		expect += v;
		chaos(w);
	}
	worker_finish(w);
	w->expect = expect + sig_adds;
	w->aborts = aborts + sig_aborts;
	w->done_ops = w->ops + sig_adds;
	WORKER_DONE();
	return NULL;
}

static void test_counter(long ops, unsigned int seed)
{
	long expect = 0, aborts = 0, done = 0;
	unsigned long attempts = 0;
	double secs;

	if (!tap_ok(kc_percpu_counter_init(&counter) == 0, "counter: init"))
		return;
	sig_counter = &counter;
	secs = run(counter_worker, ops, seed);
	sig_counter = NULL;
	for (int i = 0; i < nthreads; i++) {
		expect += workers[i].expect;
		aborts += workers[i].aborts;
		done += workers[i].done_ops;
		attempts += workers[i].attempts;
	}
	report("counter", secs, done);
	tap_diag("counter: %ld aborts retried (%.1f per million adds)", aborts,
		 done ? aborts * 1e6 / (double)done : 0.0);
	tap_eq_long(kc_percpu_counter_sum(&counter), expect,
		    "counter: sum exact (adds from workers and signal handlers)");
	if (rseq_mode)
		tap_ok(attempts == (unsigned long)(done + aborts),
		       "counter: section attempts %lu = adds %ld + reported aborts %ld",
		       attempts, done, aborts);
	else
		tap_ok(attempts == 0 && aborts == 0,
		       "counter: no rseq section and no abort without rseq (%lu, %ld)",
		       attempts, aborts);
	kc_percpu_counter_destroy(&counter);
}

/* --------------------------------------------------------------- list */

struct lnode {
	struct kc_percpu_node node;
	long id;
	int held;
};

static struct kc_percpu_list list;
static struct lnode *lnodes;
static long nr_lnodes;

#define HOLD 16

static void *list_worker(void *p)
{
	struct worker *w = p;
	long per = nr_lnodes / nthreads, first = w->id * per;
	struct lnode *hand[HOLD];
	int nhand = 0;

	for (long i = first; i < first + per; i++)
		kc_percpu_list_push(&list, &lnodes[i].node);
	for (long i = 0; i < w->ops; i++) {
		if (nhand < HOLD && (nhand == 0 || rnd(&w->seed) & 1)) {
			struct lnode *n = (struct lnode *)kc_percpu_list_pop(&list);

			if (!n) {
				w->nulls++;
			} else {
				if (n < lnodes || n >= lnodes + nr_lnodes ||
				    __atomic_exchange_n(&n->held, 1, __ATOMIC_RELAXED))
					w->bad++;
				hand[nhand++] = n;
			}
		} else {
			/* Any held node, not the last popped: pop A, pop B, push A
			 * is the sequence that gives a stale next to a broken pop. */
			int k = (int)(rnd(&w->seed) % (unsigned)nhand);
			struct lnode *n = hand[k];

			hand[k] = hand[--nhand];
			__atomic_store_n(&n->held, 0, __ATOMIC_RELAXED);
			kc_percpu_list_push(&list, &n->node);
		}
		chaos(w);
	}
	while (nhand) {
		struct lnode *n = hand[--nhand];

		__atomic_store_n(&n->held, 0, __ATOMIC_RELAXED);
		kc_percpu_list_push(&list, &n->node);
	}
	worker_finish(w);
	WORKER_DONE();
	return NULL;
}

static void test_list(long ops, unsigned int seed)
{
	struct kc_percpu_node *x;
	unsigned char *seen;
	long bad = 0, nulls = 0, n = 0, twice = 0, stray = 0, idsum = 0;
	double secs;

	nr_lnodes = 16L * nthreads;
	lnodes = calloc((size_t)nr_lnodes, sizeof(*lnodes));
	seen = calloc((size_t)nr_lnodes, 1);
	if (!tap_ok(lnodes && seen && kc_percpu_list_init(&list) == 0, "list: init"))
		return;
	for (long i = 0; i < nr_lnodes; i++)
		lnodes[i].id = i;
	secs = run(list_worker, ops, seed);
	for (int i = 0; i < nthreads; i++) {
		bad += workers[i].bad;
		nulls += workers[i].nulls;
	}
	report("list", secs, ops);
	tap_diag("list: %ld nodes, %ld pops found the CPU's list empty", nr_lnodes, nulls);
	tap_ok(bad == 0, "list: no node popped while another thread held it (%ld)", bad);
	while ((x = kc_percpu_list_pop_any(&list))) {
		struct lnode *ln = (struct lnode *)x;

		if (ln < lnodes || ln >= lnodes + nr_lnodes) {
			stray++;
			break;
		}
		twice += seen[ln->id]++ != 0;
		if (twice > nr_lnodes)
			break;	/* a cycle */
		idsum += ln->id;
		n++;
	}
	tap_ok(n == nr_lnodes && twice == 0 && stray == 0 &&
	       idsum == nr_lnodes * (nr_lnodes - 1) / 2,
	       "list: every node on a list exactly once (%ld of %ld, %ld twice, %ld stray, "
	       "id sum %ld)", n, nr_lnodes, twice, stray, idsum);
	kc_percpu_list_destroy(&list);
	free(lnodes);
	free(seen);
}

/* --------------------------------------------------------------- pool */

static struct kc_percpu_pool pool;
static size_t pool_obj_size;
static unsigned char *pool_held;

#define POOL_HOLD 32

static size_t pool_index(void *o)
{
	return (size_t)((char *)o - pool.base) / pool.stride;
}

static void fill(void *o, size_t k, long stamp)
{
	long *q = o;

	for (size_t j = 0; j < pool_obj_size / sizeof(long); j++)
		q[j] = stamp ^ (long)k ^ (long)j;
}

static long check(void *o, size_t k, long stamp)
{
	long *q = o, bad = 0;

	for (size_t j = 0; j < pool_obj_size / sizeof(long); j++)
		bad += q[j] != (stamp ^ (long)k ^ (long)j);
	return bad;
}

static void *pool_worker(void *p)
{
	struct worker *w = p;
	void *hand[POOL_HOLD];
	long stamp[POOL_HOLD];
	int nhand = 0;

	for (long i = 0; i < w->ops; i++) {
		if (nhand < POOL_HOLD && (nhand == 0 || rnd(&w->seed) % 3)) {
			char *o = kc_percpu_pool_alloc(&pool);
			size_t k;

			if (!o) {
				w->nulls++;
				chaos(w);
				continue;
			}
			if (o < pool.base || o >= pool.end || (o - pool.base) % pool.stride) {
				w->bad++;
				continue;
			}
			k = pool_index(o);
			if (__atomic_exchange_n(&pool_held[k], 1, __ATOMIC_RELAXED))
				w->bad++;
			stamp[nhand] = (long)w->id << 40 ^ i;
			fill(o, k, stamp[nhand]);
			hand[nhand++] = o;
		} else {
			int h = (int)(rnd(&w->seed) % (unsigned)nhand);
			void *o = hand[h];
			size_t k = pool_index(o);

			w->bad += check(o, k, stamp[h]);
			--nhand;
			hand[h] = hand[nhand];
			stamp[h] = stamp[nhand];
			__atomic_store_n(&pool_held[k], 0, __ATOMIC_RELAXED);
			kc_percpu_pool_free(&pool, o);
		}
		chaos(w);
	}
	while (nhand) {
		void *o = hand[--nhand];

		w->bad += check(o, pool_index(o), stamp[nhand]);
		__atomic_store_n(&pool_held[pool_index(o)], 0, __ATOMIC_RELAXED);
		kc_percpu_pool_free(&pool, o);
	}
	worker_finish(w);
	WORKER_DONE();
	return NULL;
}

static void test_pool(long ops, unsigned int seed)
{
	static const size_t sizes[] = { 8, 24, 64, 200 };
	static const size_t caches[] = { 0, 1, 2, 16, 64 };
	size_t nr, cache, n = 0, twice = 0, idsum = 0;
	unsigned char *seen;
	long bad = 0, nulls = 0;
	double secs;
	unsigned int r = seed | 1;

	pool_obj_size = sizes[rnd(&r) % 4];
	cache = caches[rnd(&r) % 5];
	nr = (size_t)64 * (size_t)nthreads;
	pool_held = calloc(nr, 1);
	seen = calloc(nr, 1);
	if (!tap_ok(pool_held && seen &&
		    kc_percpu_pool_init(&pool, pool_obj_size, nr, cache) == 0, "pool: init"))
		return;
	tap_diag("pool: %zu objects of %zu bytes, %zu cached per CPU", nr, pool_obj_size, cache);
	secs = run(pool_worker, ops, seed);
	for (int i = 0; i < nthreads; i++) {
		bad += workers[i].bad;
		nulls += workers[i].nulls;
	}
	report("pool", secs, ops);
	tap_diag("pool: %ld allocations found the pool empty", nulls);
	tap_ok(bad == 0, "pool: no object handed out while held, none changed while held (%ld)",
	       bad);
	/* Every object, allocating on each CPU in turn (a CPU's cache is only
	 * reachable from that CPU). */
	for (int c = 0; c < ncpus; c++) {
		cpu_set_t one;
		void *o;

		CPU_ZERO(&one);
		CPU_SET(cpus[c], &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		while (n <= nr && (o = kc_percpu_pool_alloc(&pool))) {
			size_t k = pool_index(o);

			twice += seen[k]++ != 0;
			idsum += k;
			n++;
		}
	}
	sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
	tap_ok(n == nr && twice == 0 && idsum == nr * (nr - 1) / 2,
	       "pool: every object allocatable exactly once afterwards (%zu of %zu, %zu twice)",
	       n, nr, twice);
	kc_percpu_pool_destroy(&pool);
	free(pool_held);
	free(seen);
}

/* --------------------------------------------------------------- lock */

struct locked {
	long v;
	int inside;
} __attribute__((aligned(128)));

static struct kc_percpu_lock lock;
static struct locked *locked;

static void *lock_worker(void *p)
{
	struct worker *w = p;

	for (long i = 0; i < w->ops; i++) {
		int cpu = kc_percpu_lock_acquire(&lock);
		struct locked *s;
		long v;

		if ((unsigned)cpu >= (unsigned)lock.nr) {
			w->bad++;
			continue;
		}
		s = &locked[cpu];
		if (__atomic_exchange_n(&s->inside, 1, __ATOMIC_RELAXED))
			w->bad++;
		v = s->v;
		/* Widen the window; now and then migrate or yield while holding
		 * the lock (the lock stays the CPU's; release from elsewhere). */
		for (unsigned int d = rnd(&w->seed) % 64; d; d--)
			KC_BARRIER();
		chaos(w);
		s->v = v + 1;
		__atomic_store_n(&s->inside, 0, __ATOMIC_RELAXED);
		kc_percpu_lock_release(&lock, cpu);
		w->done_ops++;
	}
	worker_finish(w);
	WORKER_DONE();
	return NULL;
}

static void lock_dump(void)
{
	for (int i = 0; i < lock.nr; i++)
		fprintf(stderr, "  lock of CPU %d: %ld\n", i,
			(long)__atomic_load_n(&lock.cpus[i].v, __ATOMIC_RELAXED));
}

static void test_lock(long ops, unsigned int seed)
{
	long bad = 0, done = 0, total = 0;
	double secs;

	if (!tap_ok(kc_percpu_lock_init(&lock) == 0, "lock: init"))
		return;
	locked = aligned_alloc(128, sizeof(*locked) * (size_t)lock.nr);
	memset(locked, 0, sizeof(*locked) * (size_t)lock.nr);
	stall_dump = lock_dump;
	secs = run(lock_worker, ops, seed);
	stall_dump = NULL;
	for (int i = 0; i < nthreads; i++) {
		bad += workers[i].bad;
		done += workers[i].done_ops;
	}
	for (int i = 0; i < lock.nr; i++)
		total += locked[i].v;
	report("lock", secs, done);
	tap_ok(bad == 0, "lock: never two holders of a CPU's lock (%ld)", bad);
	tap_eq_long(total, done, "lock: a plain counter under the locks is exact");
	free(locked);
	kc_percpu_lock_destroy(&lock);
}

/* ---------------------------------------------------------------- main */

/* Hooks fixed on the command line (-H n=count), as param_test's -1..-9. */
static int fixed_loop[KC_STRESS_NHOOKS];
static bool fixed[KC_STRESS_NHOOKS];

static unsigned int mix(unsigned int x)	/* a 32-bit finaliser (murmur3) */
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x | 1;
}

/*
 * Round 0 yields in every C hook (every 10..60 calls: whole time slices of
 * other threads inside the windows between a section's reads and its
 * retry); round 1 has long delays at every asm hook (preemption and signals
 * land inside sections); later rounds draw each hook on its own.
 */
static void randomise_hooks(unsigned int seed, int round)
{
	unsigned int r = mix(seed);
	char buf[256];
	int len = 0;

	rnd(&r);
	for (int n = 1; n < KC_STRESS_NHOOKS; n++) {
		unsigned int x = rnd(&r) % 20;
		bool c_hook = n == 1 || n >= 7;
		int v;

		if (x < 5)
			v = 0;
		else if (x < 13 || !c_hook)
			v = 1 + (int)(rnd(&r) % (1u << (rnd(&r) % 12)));	/* 1..2048 */
		else	/* C hooks: yield every 10..200 calls */
			v = -(int)(10 + rnd(&r) % 190);
		if (round == 0)
			v = c_hook ? -(int)(10 + rnd(&r) % 50) : 0;
		else if (round == 1)
			v = c_hook ? 0 : (int)(256 + rnd(&r) % 1792);
		if (fixed[n])
			v = fixed_loop[n];
		kc_stress_loop[n] = v;
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, " %d", v);
	}
	tap_diag("delay loops at hooks 1..%d:%s", KC_STRESS_NHOOKS - 1, buf);
}

int main(int argc, char **argv)
{
	double scale = 1.0;
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	bool fallback = false, want[4] = { 0 }, any = false;
	static const char *const names[4] = { "counter", "list", "pool", "lock" };
	const char *env = getenv("KC_STRESS_SCALE");
	struct sigaction sa;
	const char *mode;
	long base;

	nthreads = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			scale = atof(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-S") && i + 1 < argc)
			seed = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-H") && i + 1 < argc) {
			int n, v;

			if (sscanf(argv[++i], "%d=%d", &n, &v) != 2 || n < 1 ||
			    n >= KC_STRESS_NHOOKS) {
				fprintf(stderr, "-H n=count, n in 1..%d\n", KC_STRESS_NHOOKS - 1);
				return 2;
			}
			fixed[n] = true;
			fixed_loop[n] = v;
		} else if (!strcmp(argv[i], "--fallback"))
			fallback = true;
		else {
			int k;

			for (k = 0; k < 4 && strcmp(argv[i], names[k]); k++)
				;
			if (k == 4) {
				fprintf(stderr, "usage: %s [-s SCALE] [-t THREADS] [-S SEED] "
					"[-H HOOK=COUNT]... [--fallback] [counter|list|pool|lock ...]\n",
					argv[0]);
				return 2;
			}
			want[k] = any = true;
		}
	}
	if (!any)
		want[0] = want[1] = want[2] = want[3] = true;
	if (env)
		scale *= atof(env);

	if (fallback && filter_rc == 1) {
		/* The filter must precede kcross's constructor and glibc's own
		 * registration must be off: start again with both. */
		setenv("KC_STRESS_FALLBACK", "1", 1);
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		fflush(stdout);
		execv("/proc/self/exe", argv);
		if (rseq_in_kernel())
			tap_skip_all("--fallback: cannot re-execute /proc/self/exe (%s)",
				     strerror(errno));
		tap_diag("--fallback: cannot re-execute, but rseq is unavailable anyway");
	}
	if (filter_rc < 0 && rseq_in_kernel())
		tap_skip_all("cannot install the seccomp filter (%s): the fallback cannot be "
			     "forced here", strerror((int)-filter_rc));

	sched_getaffinity(0, sizeof(all_cpus), &all_cpus);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all_cpus))
			cpus[ncpus++] = c;
	if (nthreads <= 0)
		nthreads = 4 * ncpus < 8 ? 8 : 4 * ncpus;
	workers = calloc((size_t)nthreads, sizeof(*workers));

	mode = kc_percpu_mode();
	rseq_mode = !strcmp(mode, "rseq");
	tap_diag("seed %u (-S %u replays the delays and choices), scale %g, %d threads "
		 "on %d CPUs, mode %s%s", seed, seed, scale, nthreads, ncpus, mode,
		 ncpus > 1 ? "" : " (one CPU: no migrations)");
	if (filter_rc == 0 || fallback)
		tap_ok(!strcmp(mode, "atomic"), "fallback requested: mode is \"atomic\" (%s)", mode);
	else if (rseq_in_kernel())
		tap_ok(rseq_mode, "rseq available: mode is \"rseq\" (%s)", mode);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	/* Rounds, each with its own delays: one unlucky draw (no delay where
	 * a bug's window is) does not make the whole run weak. */
	base = (long)(1000000 * scale / ROUNDS);
	if (base < nthreads)
		base = nthreads;
	for (int round = 0; round < ROUNDS; round++) {
		unsigned int rs = mix(seed + 7919u * (unsigned)round), r = rs;

		tap_diag("round %d of %d", round + 1, ROUNDS);
		randomise_hooks(rs, round);
		storm_us = 20 + rnd(&r) % 180;
		tap_diag("signal storm: every worker signalled every %u us", storm_us);
		if (want[0])
			test_counter(4 * base, rs + 1);
		if (want[1])
			test_list(2 * base, rs + 2);
		if (want[2])
			test_pool(2 * base, rs + 3);
		if (want[3])
			test_lock(2 * base, rs + 4);
	}
	free(workers);
	return tap_done();
}
