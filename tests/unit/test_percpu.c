/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU counter, list, pool and lock: their invariants across threads, in
 * each way a process can come to use them:
 *
 *   (default)  glibc's rseq registration: "rseq" mode
 *   tunable    GLIBC_TUNABLES=glibc.pthread.rseq=0: kcross's own lazy
 *              registration ("rseq" mode), plus the mixed cases: a thread
 *              refused rseq by a seccomp filter of the thread that created
 *              it adds to a counter beside rseq threads (exact), and pushes
 *              to a list of an rseq-mode process (aborts with a message)
 *   fallback   the tunable plus a seccomp filter answering rseq with ENOSYS,
 *              installed before kcross's constructor: "atomic" mode
 *
 * Each mode other than the default is this program re-executed with
 * KC_TEST_MODE set.  Under qemu-user (no rseq) every mode is "atomic".
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kcross/percpu.h>
#include "refuse_rseq.h"
#include "tap.h"

#define NTHREADS 8

static const char *mode(void)
{
	const char *m = getenv("KC_TEST_MODE");

	return m ? m : "default";
}

/* ------------------------------------------------ set-up before kcross */


static long setup_rc;

/* Before kcross's priority-101 constructor registers the main thread. */
#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"

__attribute__((constructor(100))) static void before_kcross(void)
{
	if (!strcmp(mode(), "fallback"))
		setup_rc = refuse_rseq();
}

static bool rseq_in_kernel(void)
{
	/* EINVAL for a NULL area when the kernel has rseq; ENOSYS without
	 * (qemu-user) or under our filter. */
	return syscall(SYS_rseq, NULL, 0, 0, 0) != -1 || errno != ENOSYS;
}

/* --------------------------------------------------------- utilities */

static unsigned int rnd(unsigned int *s)	/* xorshift32 */
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int run_threads(void *(*fn)(void *), void *args, size_t argsize, int n)
{
	pthread_t t[NTHREADS * 2];

	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (char *)args + i * argsize))
			return -1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* ------------------------------------------------------------ counter */

struct counter_arg {
	struct kc_percpu_counter *c;
	pthread_barrier_t *registered;	/* wait there after registering */
	int iters;
	long expect;
	long aborts;
	int rseq;	/* the thread had rseq */
};

static void *counter_worker(void *p)
{
	struct counter_arg *a = p;
	unsigned int seed = (unsigned int)(uintptr_t)p | 1;

	if (a->registered) {
		kc_rseq_register_current_thread();
		pthread_barrier_wait(a->registered);
	}
	for (int i = 0; i < a->iters; i++) {
		intptr_t v = (intptr_t)(rnd(&seed) % 7) - 2;	/* negatives too */

		a->aborts += kc_percpu_counter_add(a->c, v);
		a->expect += v;
		if ((i & 1023) == 0)
			sched_yield();
	}
	a->rseq = kc_rseq_cpu_raw() >= 0;
	return NULL;
}

static void test_counter(void)
{
	struct kc_percpu_counter c;
	struct counter_arg args[NTHREADS];
	long expect = 0, aborts = 0;
	int nrseq = 0;

	if (!tap_ok(kc_percpu_counter_init(&c) == 0, "counter: init"))
		return;
	tap_eq_long(kc_percpu_counter_sum(&c), 0, "counter: a new counter sums to 0");
	kc_percpu_counter_add(&c, 5);
	kc_percpu_counter_add(&c, -7);
	tap_eq_long(kc_percpu_counter_sum(&c), -2, "counter: 5 + -7, one thread");
	kc_percpu_counter_add(&c, 2);

	for (int i = 0; i < NTHREADS; i++)
		args[i] = (struct counter_arg){ .c = &c, .iters = 100000 };
	run_threads(counter_worker, args, sizeof(args[0]), NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		expect += args[i].expect;
		aborts += args[i].aborts;
		nrseq += args[i].rseq;
	}
	tap_eq_long(kc_percpu_counter_sum(&c), expect,
		    "counter: exact after 8 threads x 100000 adds");
	tap_diag("counter: %d of %d threads on rseq, %ld aborts retried", nrseq, NTHREADS, aborts);
	if (!strcmp(kc_percpu_mode(), "atomic"))
		tap_ok(nrseq == 0 && aborts == 0, "counter: no rseq in atomic mode (%d threads, %ld aborts)",
		       nrseq, aborts);
	else
		tap_ok(nrseq == NTHREADS, "counter: every thread used rseq (%d)", nrseq);
	kc_percpu_counter_destroy(&c);
}

/* --------------------------------------------------------------- list */

#define LIST_NODES 4096

struct lnode {
	struct kc_percpu_node node;	/* first: pop returns it */
	int id;
	int held;
};

static struct lnode lnodes[LIST_NODES];

struct list_arg {
	struct kc_percpu_list *l;
	int first, count;	/* the nodes this thread pushes at first */
	int iters;
	long dup, badcpu, popped;
};

static void *list_worker(void *p)
{
	struct list_arg *a = p;
	struct lnode *hand[8];
	int nhand = 0;
	unsigned int seed = (unsigned int)a->first * 2654435761u | 1;

	for (int i = a->first; i < a->first + a->count; i++)
		if ((unsigned)kc_percpu_list_push(a->l, &lnodes[i].node) >= (unsigned)a->l->nr)
			a->badcpu++;
	for (int i = 0; i < a->iters; i++) {
		if (nhand < 8 && (nhand == 0 || rnd(&seed) & 1)) {
			struct lnode *n = (struct lnode *)kc_percpu_list_pop(a->l);

			if (!n)
				continue;
			/* A node popped while another thread holds it: duplicate. */
			if (__atomic_exchange_n(&n->held, 1, __ATOMIC_RELAXED))
				a->dup++;
			hand[nhand++] = n;
			a->popped++;
		} else {
			struct lnode *n = hand[--nhand];

			__atomic_store_n(&n->held, 0, __ATOMIC_RELAXED);
			if ((unsigned)kc_percpu_list_push(a->l, &n->node) >= (unsigned)a->l->nr)
				a->badcpu++;
		}
	}
	while (nhand) {
		struct lnode *n = hand[--nhand];

		__atomic_store_n(&n->held, 0, __ATOMIC_RELAXED);
		kc_percpu_list_push(a->l, &n->node);
	}
	return NULL;
}

static void test_list(void)
{
	struct kc_percpu_list l;
	struct list_arg args[NTHREADS];
	struct kc_percpu_node a, b, *x, *y, *z;
	cpu_set_t saved;
	static unsigned char seen[LIST_NODES];
	long dup = 0, badcpu = 0, popped = 0, n = 0, twice = 0, sum = 0;
	unsigned int cpu;
	int pushed_on;

	if (!tap_ok(kc_percpu_list_init(&l) == 0, "list: init"))
		return;
	tap_ok(kc_percpu_list_pop(&l) == NULL && kc_percpu_list_pop_any(&l) == NULL,
	       "list: a new list is empty");

	/* LIFO on one CPU. */
	sched_getaffinity(0, sizeof(saved), &saved);
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &saved); cpu++)
		;
	pin((int)cpu);
	kc_getcpu(&cpu, NULL);
	pushed_on = kc_percpu_list_push(&l, &a);
	kc_percpu_list_push(&l, &b);
	x = kc_percpu_list_pop(&l);
	y = kc_percpu_list_pop(&l);
	z = kc_percpu_list_pop(&l);
	sched_setaffinity(0, sizeof(saved), &saved);
	tap_ok(pushed_on == (int)cpu % l.nr, "list: push returns the CPU it ran on (%d, getcpu %u)",
	       pushed_on, cpu);
	tap_ok(x == &b && y == &a && z == NULL, "list: pinned, push a, b pops b, a, then NULL");

	for (int i = 0; i < LIST_NODES; i++)
		lnodes[i] = (struct lnode){ .id = i };
	for (int i = 0; i < NTHREADS; i++)
		args[i] = (struct list_arg){ .l = &l, .first = i * (LIST_NODES / NTHREADS),
					     .count = LIST_NODES / NTHREADS, .iters = 100000 };
	run_threads(list_worker, args, sizeof(args[0]), NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		dup += args[i].dup;
		badcpu += args[i].badcpu;
		popped += args[i].popped;
	}
	tap_ok(dup == 0, "list: no node handed to two threads at once (%ld times)", dup);
	tap_ok(badcpu == 0, "list: push always returned a CPU in [0, %d)", l.nr);
	tap_ok(popped > 0, "list: threads popped %ld nodes", popped);
	while ((x = kc_percpu_list_pop_any(&l))) {
		struct lnode *ln = (struct lnode *)x;

		if (ln < lnodes || ln >= lnodes + LIST_NODES)
			break;
		twice += seen[ln->id]++ != 0;
		sum += ln->id;
		n++;
	}
	tap_ok(n == LIST_NODES && twice == 0 && sum == (long)LIST_NODES * (LIST_NODES - 1) / 2,
	       "list: every node back exactly once (%ld of %d, %ld twice, id sum %ld)",
	       n, LIST_NODES, twice, sum);
	kc_percpu_list_destroy(&l);
}

/* --------------------------------------------------------------- pool */

#define POOL_OBJS 2000
#define POOL_OBJ_SIZE 40

struct pool_arg {
	struct kc_percpu_pool *p;
	unsigned char *held;	/* one byte per object */
	int iters;
	long dup, misaligned, corrupt, allocs, nulls;
};

static size_t obj_index(struct kc_percpu_pool *p, void *o)
{
	return (size_t)((char *)o - p->base) / p->stride;
}

static void *pool_worker(void *v)
{
	struct pool_arg *a = v;
	void *hand[64];
	int nhand = 0;
	unsigned int seed = (unsigned int)(uintptr_t)v | 1;

	for (int i = 0; i < a->iters; i++) {
		if (nhand < 64 && (nhand == 0 || rnd(&seed) % 3)) {
			char *o = kc_percpu_pool_alloc(a->p);
			size_t k;

			if (!o) {
				a->nulls++;
				continue;
			}
			a->allocs++;
			if ((uintptr_t)o % 16 || o < a->p->base || o >= a->p->end) {
				a->misaligned++;
				continue;
			}
			k = obj_index(a->p, o);
			if (__atomic_exchange_n(&a->held[k], 1, __ATOMIC_RELAXED))
				a->dup++;
			/* The whole object is the caller's: fill it, check it on free. */
			memset(o, (int)(k & 0xff), POOL_OBJ_SIZE);
			hand[nhand++] = o;
		} else {
			char *o = hand[--nhand];
			size_t k = obj_index(a->p, o);

			for (int j = 0; j < POOL_OBJ_SIZE; j++)
				a->corrupt += (unsigned char)o[j] != (k & 0xff);
			__atomic_store_n(&a->held[k], 0, __ATOMIC_RELAXED);
			kc_percpu_pool_free(a->p, o);
		}
	}
	while (nhand) {
		char *o = hand[--nhand];

		__atomic_store_n(&a->held[obj_index(a->p, o)], 0, __ATOMIC_RELAXED);
		kc_percpu_pool_free(a->p, o);
	}
	return NULL;
}

/* Every free object, by allocating on each CPU in turn until it fails:
 * objects cached on a CPU are only reachable from that CPU. */
static long drain_pool(struct kc_percpu_pool *p, void **out, long max)
{
	cpu_set_t saved;
	long n = 0;

	sched_getaffinity(0, sizeof(saved), &saved);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		void *o;

		if (!CPU_ISSET(c, &saved) || pin(c))
			continue;
		while (n < max && (o = kc_percpu_pool_alloc(p)))
			out[n++] = o;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	return n;
}

static void test_pool(void)
{
	struct kc_percpu_pool p;
	struct pool_arg args[NTHREADS];
	static unsigned char held[POOL_OBJS], seen[POOL_OBJS];
	static void *objs[POOL_OBJS + 1];
	long dup = 0, mis = 0, corrupt = 0, allocs = 0, twice = 0, n;

	tap_ok(kc_percpu_pool_init(&p, 0, 10, 4) == -EINVAL &&
	       kc_percpu_pool_init(&p, 8, 0, 4) == -EINVAL &&
	       kc_percpu_pool_init(&p, SIZE_MAX / 2, 4, 4) == -EINVAL,
	       "pool: init refuses size 0, count 0 and an overflowing size");
	if (!tap_ok(kc_percpu_pool_init(&p, POOL_OBJ_SIZE, POOL_OBJS, 16) == 0, "pool: init"))
		return;
	for (int i = 0; i < NTHREADS; i++)
		args[i] = (struct pool_arg){ .p = &p, .held = held, .iters = 100000 };
	run_threads(pool_worker, args, sizeof(args[0]), NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		dup += args[i].dup;
		mis += args[i].misaligned;
		corrupt += args[i].corrupt;
		allocs += args[i].allocs;
	}
	tap_ok(dup == 0, "pool: no object handed out twice at once (%ld times in %ld allocs)",
	       dup, allocs);
	tap_ok(mis == 0, "pool: every object inside the pool and 16-byte aligned (%ld not)", mis);
	tap_ok(corrupt == 0, "pool: no object changed while its owner held it (%ld bytes)", corrupt);

	n = drain_pool(&p, objs, POOL_OBJS + 1);
	for (long i = 0; i < n; i++)
		twice += seen[obj_index(&p, objs[i])]++ != 0;
	tap_ok(n == POOL_OBJS && twice == 0,
	       "pool: every object allocatable again exactly once (%ld of %d, %ld twice)",
	       n, POOL_OBJS, twice);
	tap_ok(kc_percpu_pool_alloc(&p) == NULL, "pool: exhausted pool returns NULL");
	for (long i = 0; i < n; i++)
		kc_percpu_pool_free(&p, objs[i]);
	n = drain_pool(&p, objs, POOL_OBJS + 1);
	tap_eq_long(n, POOL_OBJS, "pool: all objects again after freeing all");
	kc_percpu_pool_destroy(&p);
}

/* --------------------------------------------------------------- lock */

struct lock_slot {
	long v;		/* plain, only under the lock */
	int inside;
} __attribute__((aligned(64)));

struct lock_arg {
	struct kc_percpu_lock *l;
	struct lock_slot *data;
	int iters;
	long overlap, badcpu;
};

static void *lock_worker(void *p)
{
	struct lock_arg *a = p;

	for (int i = 0; i < a->iters; i++) {
		int cpu = kc_percpu_lock_acquire(a->l);
		struct lock_slot *s;
		long v;

		if ((unsigned)cpu >= (unsigned)a->l->nr) {
			a->badcpu++;
			continue;
		}
		s = &a->data[cpu];
		if (__atomic_exchange_n(&s->inside, 1, __ATOMIC_RELAXED))
			a->overlap++;
		/* A read-modify-write with a window: lost updates if two
		 * threads get here at once. */
		v = s->v;
		KC_OPAQUE(v);
		if ((i & 255) == 0)
			sched_yield();
		s->v = v + 1;
		__atomic_store_n(&s->inside, 0, __ATOMIC_RELAXED);
		kc_percpu_lock_release(a->l, cpu);
	}
	return NULL;
}

static void test_lock(void)
{
	struct kc_percpu_lock l;
	struct lock_arg args[NTHREADS];
	struct lock_slot *data;
	long overlap = 0, badcpu = 0, total = 0;
	int iters = 100000;

	if (!tap_ok(kc_percpu_lock_init(&l) == 0, "lock: init"))
		return;
	data = aligned_alloc(64, sizeof(*data) * (size_t)l.nr);
	memset(data, 0, sizeof(*data) * (size_t)l.nr);
	for (int i = 0; i < NTHREADS; i++)
		args[i] = (struct lock_arg){ .l = &l, .data = data, .iters = iters };
	run_threads(lock_worker, args, sizeof(args[0]), NTHREADS);
	for (int i = 0; i < NTHREADS; i++) {
		overlap += args[i].overlap;
		badcpu += args[i].badcpu;
	}
	for (int i = 0; i < l.nr; i++)
		total += data[i].v;
	tap_ok(badcpu == 0, "lock: acquire always returned a CPU in [0, %d)", l.nr);
	tap_ok(overlap == 0, "lock: never two holders of one CPU's lock (%ld times)", overlap);
	tap_eq_long(total, (long)NTHREADS * iters,
		    "lock: a plain counter under the lock is exact");
	free(data);
	kc_percpu_lock_destroy(&l);
}

/* ------------------------------------------------ mixed rseq/fallback */

struct mixed {
	struct kc_percpu_counter c;
	struct kc_percpu_list l;
	long expect;
	int refused;		/* the inner thread had no rseq */
	int filter_rc;
	bool use_list;
};

static void *refused_thread(void *p)
{
	struct mixed *m = p;

	m->refused = kc_rseq_register_current_thread() != 0 && kc_rseq_cpu_raw() < 0;
	if (m->use_list) {
		static struct kc_percpu_node node;

		kc_percpu_list_push(&m->l, &node);	/* must abort */
		return NULL;
	}
	for (int i = 0; i < 200000; i++) {
		kc_percpu_counter_add(&m->c, 3);
		m->expect += 3;
	}
	return NULL;
}

/* Installs the filter on itself, then creates the thread that inherits it. */
static void *filtered_parent(void *p)
{
	struct mixed *m = p;
	pthread_t t;

	m->filter_rc = refuse_rseq();
	if (m->filter_rc == 0 && pthread_create(&t, NULL, refused_thread, m) == 0)
		pthread_join(t, NULL);
	return NULL;
}

/* In a child process: filters are irreversible and, with kcross's own
 * registration, one refused thread makes rseq "unavailable" process-wide. */
static void test_mixed_counter(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static struct mixed m;
		static pthread_barrier_t registered;
		struct counter_arg args[4];
		pthread_t t, w[4];
		long expect;
		int nrseq = 0;

		if (kc_percpu_counter_init(&m.c))
			_exit(2);
		/* The rseq threads register before the refused one exists: with
		 * kcross's own registration, a refusal makes rseq unavailable to
		 * threads that register later (src/rseq.c). */
		pthread_barrier_init(&registered, NULL, 5);
		for (int i = 0; i < 4; i++) {
			args[i] = (struct counter_arg){ .c = &m.c, .iters = 200000,
							.registered = &registered };
			pthread_create(&w[i], NULL, counter_worker, &args[i]);
		}
		pthread_barrier_wait(&registered);
		pthread_create(&t, NULL, filtered_parent, &m);
		for (int i = 0; i < 4; i++)
			pthread_join(w[i], NULL);
		pthread_join(t, NULL);
		if (m.filter_rc)
			_exit(3);
		expect = m.expect;
		for (int i = 0; i < 4; i++) {
			expect += args[i].expect;
			nrseq += args[i].rseq;
		}
		if (!m.refused || nrseq != 4)
			_exit(4);
		_exit(kc_percpu_counter_sum(&m.c) == expect ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		tap_skip("counter, mixed: cannot install a seccomp filter here");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 4)
		tap_ok(0, "counter, mixed: expected 4 rseq threads and 1 refused one");
	else
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "counter, mixed: a thread refused rseq adds beside 4 rseq threads, "
		       "the sum is exact (status %#x)", st);
}

static void test_mixed_list_aborts(void)
{
	int fds[2];
	pid_t pid;
	int st;
	char buf[2048] = "";
	ssize_t len, got = 0;

	if (pipe(fds))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static struct mixed m = { .use_list = true };
		pthread_t t;

		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		if (kc_percpu_list_init(&m.l) || strcmp(kc_percpu_mode(), "rseq"))
			_exit(2);
		pthread_create(&t, NULL, filtered_parent, &m);
		pthread_join(t, NULL);
		_exit(m.filter_rc ? 3 : 0);	/* 0: it did not abort */
	}
	close(fds[1]);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (len = read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += len;
	buf[got] = '\0';
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		tap_skip("list, mixed: cannot install a seccomp filter here");
		return;
	}
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	       strstr(buf, "cannot use rseq") != NULL,
	       "list, mixed: a thread without rseq in an rseq-mode process aborts with a "
	       "message (status %#x)", st);
}

static void test_bad_free(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct kc_percpu_pool p;
		static char outside[64];

		close(STDERR_FILENO);
		if (kc_percpu_pool_init(&p, 32, 4, 2))
			_exit(2);
		kc_percpu_pool_free(&p, outside);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	       "pool: freeing a pointer from outside the pool aborts (status %#x)", st);
}

/* ---------------------------------------------------------- mode query */

struct query_arg {
	long filter_rc;
	const char *answer;
	int mode_after;
};

/* Refused rseq by its own filter, then only asks. */
static void *refused_query(void *p)
{
	struct query_arg *q = p;

	q->filter_rc = refuse_rseq();
	if (q->filter_rc == 0) {
		q->answer = kc_percpu_mode();
		q->mode_after = __atomic_load_n(&kc__percpu_mode, __ATOMIC_ACQUIRE);
	}
	return NULL;
}

/*
 * A query from a thread without rseq answers "atomic" for itself and leaves
 * the process's mode to the first structure: a list set up afterwards by an
 * rseq thread is in "rseq" mode.  In a child: the filter is irreversible.
 */
static void test_query_from_refused_thread(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static struct query_arg q;
		struct kc_percpu_list l;
		pthread_t t;

		if (pthread_create(&t, NULL, refused_query, &q) || pthread_join(t, NULL))
			_exit(5);
		if (q.filter_rc)
			_exit(3);
		if (strcmp(q.answer, "atomic") || q.mode_after != KC__PERCPU_UNDECIDED)
			_exit(1);
		if (kc_percpu_list_init(&l) || strcmp(kc_percpu_mode(), "rseq"))
			_exit(2);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		tap_skip("mode query from a refused thread: cannot install a seccomp filter here");
	else
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "a thread refused rseq asks the mode (\"atomic\" for it), the mode stays "
		       "undecided, and a list set up later by an rseq thread is in \"rseq\" mode "
		       "(status %#x: 1 the query decided, 2 the list is not rseq)", st);
}

/* ---------------------------------------------------------------- main */

static int reexec(char **argv, const char *m, const char *tunable)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setenv("KC_TEST_MODE", m, 1);
		setenv("GLIBC_TUNABLES", tunable, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	const char *m = mode(), *pm;
	bool have = rseq_in_kernel();
	struct kc_rseq_info info = kc_rseq_info();

	(void)argc;
	tap_diag("mode %s: rseq owner %s%s%s", m, kc_rseq_owner_name(info.owner),
		 info.why ? ", " : "", info.why ? info.why : "");
	if (!strcmp(m, "fallback") && setup_rc && have)
		tap_skip_all("cannot install a seccomp filter here (%ld): the fallback "
			     "cannot be forced", setup_rc);
	pm = kc_percpu_mode();
	/* The first per-CPU call of the process: a query, which decides nothing. */
	tap_ok(__atomic_load_n(&kc__percpu_mode, __ATOMIC_ACQUIRE) == KC__PERCPU_UNDECIDED,
	       "kc_percpu_mode() before any structure leaves the mode undecided");
	if (!strcmp(m, "tunable")) {
		if (have && !strcmp(pm, "rseq"))
			test_query_from_refused_thread();
		else
			tap_skip("mode query from a refused thread: no rseq here");
	}
	if (!strcmp(m, "fallback") || !have)
		tap_ok(!strcmp(pm, "atomic"), "mode is \"atomic\" without rseq (got %s)", pm);
	else
		tap_ok(!strcmp(pm, "rseq"), "mode is \"rseq\" with rseq (got %s)", pm);
	tap_ok(kc_percpu_nr_cpus() >= sysconf(_SC_NPROCESSORS_ONLN) &&
	       kc_cpu() < kc_percpu_nr_cpus(),
	       "%d possible CPUs: at least the online ones, more than kc_cpu() (%d)",
	       kc_percpu_nr_cpus(), kc_cpu());

	test_counter();
	test_list();
	test_pool();
	test_lock();
	test_bad_free();
	tap_ok(__atomic_load_n(&kc__percpu_mode, __ATOMIC_ACQUIRE) != KC__PERCPU_UNDECIDED &&
	       !strcmp(kc_percpu_mode(), pm),
	       "the lists decided the mode the first query announced (%s)", kc_percpu_mode());

	if (!strcmp(m, "tunable")) {
		if (have && !strcmp(pm, "rseq")) {
			test_mixed_list_aborts();
			test_mixed_counter();
		} else {
			tap_skip("mixed rseq/fallback threads: no rseq here");
		}
	}
	if (!strcmp(m, "default")) {
		static const char *const modes[] = { "tunable", "fallback" };

		fflush(stdout);
		for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
			int rc = reexec(argv, modes[k], "glibc.pthread.rseq=0");

			if (rc == 127)
				tap_skip("mode %s: cannot re-execute this program here "
					 "(qemu-user without binfmt_misc?)", modes[k]);
			else if (rc == 77)
				tap_skip("mode %s: skipped (see its output above)", modes[k]);
			else
				tap_ok(rc == 0, "mode %s passed (exit %d)", modes[k], rc);
		}
	}
	return tap_done();
}
