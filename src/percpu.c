/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU structures: the out-of-line parts (set-up, sums, mode decision,
 * fallbacks' CPU choice, pool refill and flush).  The operations themselves
 * are inline in <kcross/percpu.h>; the design is described there.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include <kcross/percpu.h>

int kc__percpu_mode;
static int nr_cpus_cached;

/* Highest CPU number in a list like "0-3,8-11\n", plus one; 0 if unreadable. */
static int parse_cpu_list(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t len;
	int max = -1;
	char *p;

	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (p = buf; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p)
			break;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				break;
		}
		if (b > max)
			max = (int)b;
		p = end;
		if (*p == ',')
			p++;
		else
			break;
	}
	return max + 1;
}

int kc_percpu_nr_cpus(void)
{
	int n = __atomic_load_n(&nr_cpus_cached, __ATOMIC_RELAXED);
	long conf, onln;

	if (n > 0)
		return n;
	/* Every CPU the kernel can ever report (cpu_id < nr_cpu_ids); sysconf
	 * too, in case /sys is not mounted or is narrower than the truth. */
	n = parse_cpu_list("/sys/devices/system/cpu/possible");
	conf = sysconf(_SC_NPROCESSORS_CONF);
	onln = sysconf(_SC_NPROCESSORS_ONLN);
	if (conf > n)
		n = (int)conf;
	if (onln > n)
		n = (int)onln;
	/* Without /sys and /proc (a bare initramfs) both say 1: the affinity
	 * mask still names every CPU this process may run on. */
	{
		cpu_set_t set;

		if (!sched_getaffinity(0, sizeof(set), &set))
			for (int c = CPU_SETSIZE - 1; c >= n; c--)
				if (CPU_ISSET(c, &set)) {
					n = c + 1;
					break;
				}
	}
	if (n < 1)
		n = 1;
	__atomic_store_n(&nr_cpus_cached, n, __ATOMIC_RELAXED);
	return n;
}

/* What the calling thread would decide: rseq if it has (or can now get) a
 * registration.  Registering the thread is per-thread, not the process's
 * mode: every kcross thread that reads its CPU does the same. */
static int mode_for_this_thread(void)
{
	return kc_rseq_register_current_thread() == 0 ? KC__PERCPU_RSEQ : KC__PERCPU_ATOMIC;
}

/*
 * The decision: fix the process-wide mode if nothing has, from the calling
 * thread.  Taken only by the structures that depend on it (list, pool and
 * lock init, and the slow path of their operations); never by a query.
 */
static int decide_mode(void)
{
	int m = __atomic_load_n(&kc__percpu_mode, __ATOMIC_ACQUIRE);
	int want;

	if (m != KC__PERCPU_UNDECIDED)
		return m;
	want = mode_for_this_thread();
	m = KC__PERCPU_UNDECIDED;
	if (__atomic_compare_exchange_n(&kc__percpu_mode, &m, want, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return want;
	return m;
}

/* The query: the decided mode, or the one this thread would decide now. */
const char *kc_percpu_mode(void)
{
	int m = __atomic_load_n(&kc__percpu_mode, __ATOMIC_ACQUIRE);

	if (m == KC__PERCPU_UNDECIDED)
		m = mode_for_this_thread();
	return m == KC__PERCPU_RSEQ ? "rseq" : "atomic";
}

static __attribute__((noreturn, format(printf, 1, 2))) void fatal(const char *fmt, ...);

static void fatal(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	/* write(2), not stdio: the process may be in any state. */
	if (write(STDERR_FILENO, msg, (size_t)n) < 0)
		(void)0;
	abort();
}

int kc__percpu_use_rseq(int32_t cpu, int nr)
{
	int m = decide_mode();
	int rc;

	if (m == KC__PERCPU_ATOMIC)
		return 0;
	if (cpu >= nr)	/* registered, but beyond the possible CPUs */
		fatal("kcross percpu: the kernel reports CPU %d but only %d CPUs are possible "
		      "(/sys/devices/system/cpu/possible)\n", (int)cpu, nr);
	rc = kc_rseq_register_current_thread();
	if (rc == 0 && (uint32_t)kc_rseq_cpu_raw() < (uint32_t)nr)
		return 1;
	{
		struct kc_rseq_info i = kc_rseq_info();

		fatal("kcross percpu: this thread cannot use rseq (%d: %s), but the process's "
		      "per-CPU lists, pools and locks are in rseq mode (chosen by the first "
		      "thread that used them), and the locked fallback cannot run beside rseq "
		      "critical sections.  Threads differing in rseq usually means a seccomp "
		      "filter installed by one thread, inherited only by the threads it created.\n",
		      rc, i.why ? i.why : "registration refused");
	}
}

int kc__percpu_fallback_cpu(int nr)
{
	int32_t raw = kc_rseq_cpu_raw();
	unsigned int cpu;

	/* A registered thread in "atomic" mode: its cpu_id is as good an index. */
	if (raw >= 0)
		return (int)((uint32_t)raw % (uint32_t)nr);
	if (kc_getcpu(&cpu, NULL) != 0)
		return 0;
	return (int)(cpu % (unsigned int)nr);
}

void kc__percpu_spin_slow(void)
{
	sched_yield();
}

static void *alloc_slots(size_t size, int nr)
{
	size_t bytes = size * (size_t)nr;
	void *p = aligned_alloc(KC_CACHELINE_SIZE, bytes);

	if (p)
		memset(p, 0, bytes);
	return p;
}

/* ------------------------------------------------------------ counter */

int kc_percpu_counter_init(struct kc_percpu_counter *c)
{
	c->nr = kc_percpu_nr_cpus();
	c->cpus = alloc_slots(sizeof(*c->cpus), c->nr);
	return c->cpus ? 0 : -ENOMEM;
}

void kc_percpu_counter_destroy(struct kc_percpu_counter *c)
{
	free(c->cpus);
	c->cpus = NULL;
	c->nr = 0;
}

intptr_t kc_percpu_counter_sum(const struct kc_percpu_counter *c)
{
	uintptr_t sum = 0;	/* unsigned: wrap-around is defined */

	for (int i = 0; i < c->nr; i++) {
		sum += (uintptr_t)__atomic_load_n(&c->cpus[i].v, __ATOMIC_RELAXED);
		sum += (uintptr_t)__atomic_load_n(&c->cpus[i].atomic_v, __ATOMIC_RELAXED);
	}
	return (intptr_t)sum;
}

int kc__percpu_counter_add_slow(struct kc_percpu_counter *c, intptr_t v, int32_t cpu)
{
	if (cpu >= c->nr)
		fatal("kcross percpu: the kernel reports CPU %d but only %d CPUs are possible\n",
		      (int)cpu, c->nr);
	if (kc_rseq_register_current_thread() == 0 &&
	    (uint32_t)kc_rseq_cpu_raw() < (uint32_t)c->nr)
		return 1;
	/* Never into `v`: rseq threads on that CPU write it without atomics. */
	__atomic_fetch_add(&c->cpus[kc__percpu_fallback_cpu(c->nr)].atomic_v, v,
			   __ATOMIC_RELAXED);
	return 0;
}

/* --------------------------------------------------------------- list */

int kc_percpu_list_init(struct kc_percpu_list *l)
{
	decide_mode();
	l->nr = kc_percpu_nr_cpus();
	l->cpus = alloc_slots(sizeof(*l->cpus), l->nr);
	return l->cpus ? 0 : -ENOMEM;
}

void kc_percpu_list_destroy(struct kc_percpu_list *l)
{
	free(l->cpus);
	l->cpus = NULL;
	l->nr = 0;
}

struct kc_percpu_node *kc_percpu_list_pop_any(struct kc_percpu_list *l)
{
	int locked = decide_mode() == KC__PERCPU_ATOMIC;

	for (int i = 0; i < l->nr; i++) {
		struct kc__percpu_list_slot *s = &l->cpus[i];
		struct kc_percpu_node *n;

		if (!__atomic_load_n(&s->head, __ATOMIC_RELAXED))
			continue;
		if (locked)
			kc__percpu_spin_lock(&s->lock);
		n = (struct kc_percpu_node *)__atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
		if (n)
			__atomic_store_n(&s->head, (intptr_t)n->next, __ATOMIC_RELAXED);
		if (locked)
			kc__percpu_spin_unlock(&s->lock);
		if (n)
			return n;
	}
	return NULL;
}

/* --------------------------------------------------------------- pool */

#define POOL_ALIGN 16u

int kc_percpu_pool_init(struct kc_percpu_pool *p, size_t obj_size, size_t nr_objs,
			size_t cache_per_cpu)
{
	size_t stride, bytes;
	int rc;

	memset(p, 0, sizeof(*p));
	if (obj_size == 0 || nr_objs == 0)
		return -EINVAL;
	if (obj_size < sizeof(struct kc_percpu_node))
		obj_size = sizeof(struct kc_percpu_node);
	if (obj_size > SIZE_MAX - POOL_ALIGN)
		return -EINVAL;
	stride = (obj_size + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	if (nr_objs > (SIZE_MAX - KC_CACHELINE_SIZE) / stride)
		return -EINVAL;
	bytes = (stride * nr_objs + KC_CACHELINE_SIZE - 1) & ~(size_t)(KC_CACHELINE_SIZE - 1);

	rc = kc_percpu_list_init(&p->cache);
	if (rc)
		return rc;
	p->count = alloc_slots(sizeof(*p->count), p->cache.nr);
	p->base = aligned_alloc(KC_CACHELINE_SIZE, bytes);
	if (!p->count || !p->base) {
		free(p->count);
		free(p->base);
		kc_percpu_list_destroy(&p->cache);
		memset(p, 0, sizeof(*p));
		return -ENOMEM;
	}
	p->end = p->base + stride * nr_objs;
	p->stride = stride;
	p->nr_objs = nr_objs;
	p->cache_per_cpu = cache_per_cpu;
	p->batch = cache_per_cpu / 2 ? cache_per_cpu / 2 : 1;
	pthread_mutex_init(&p->lock, NULL);
	/* All on the global list, object 0 first. */
	for (size_t i = nr_objs; i-- > 0;) {
		struct kc_percpu_node *n = (struct kc_percpu_node *)(p->base + i * stride);

		n->next = p->global;
		p->global = n;
	}
	p->global_nr = nr_objs;
	return 0;
}

void kc_percpu_pool_destroy(struct kc_percpu_pool *p)
{
	if (!p->base)
		return;
	pthread_mutex_destroy(&p->lock);
	kc_percpu_list_destroy(&p->cache);
	free(p->count);
	free(p->base);
	memset(p, 0, sizeof(*p));
}

/* The calling CPU's cache is empty: take a batch from the global list,
 * keep one for the caller and cache the rest. */
void *kc__percpu_pool_refill(struct kc_percpu_pool *p)
{
	struct kc_percpu_node *first, *last, *n;
	size_t got = 0;

	pthread_mutex_lock(&p->lock);
	first = p->global;
	for (last = NULL, n = first; n && got < p->batch + 1; last = n, n = n->next)
		got++;
	if (last) {
		p->global = last->next;
		p->global_nr -= got;
		last->next = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (!first)
		return NULL;
	for (n = first->next; n;) {
		struct kc_percpu_node *next = n->next;
		int cpu = kc_percpu_list_push(&p->cache, n);

		kc__percpu_pool_count(p, cpu, 1);
		n = next;
	}
	return first;
}

/* The calling CPU's cache grew above cache_per_cpu: give a batch back. */
void kc__percpu_pool_flush(struct kc_percpu_pool *p)
{
	struct kc_percpu_node *first = NULL, *last = NULL;
	size_t got = 0;

	while (got < p->batch) {
		int cpu;
		struct kc_percpu_node *n = kc__percpu_list_pop_cpu(&p->cache, &cpu);

		if (!n) {
			__atomic_store_n(&p->count[cpu].nr, 0, __ATOMIC_RELAXED);
			break;
		}
		kc__percpu_pool_count(p, cpu, -1);
		n->next = first;
		first = n;
		if (!last)
			last = n;
		got++;
	}
	if (!first)
		return;
	pthread_mutex_lock(&p->lock);
	last->next = p->global;
	p->global = first;
	p->global_nr += got;
	pthread_mutex_unlock(&p->lock);
}

void kc__percpu_pool_bad_free(struct kc_percpu_pool *p, void *obj)
{
	fatal("kcross percpu: kc_percpu_pool_free(%p): not an object of the pool [%p, %p)\n",
	      obj, (void *)p->base, (void *)p->end);
}

/* --------------------------------------------------------------- lock */

int kc_percpu_lock_init(struct kc_percpu_lock *l)
{
	decide_mode();
	l->nr = kc_percpu_nr_cpus();
	l->cpus = alloc_slots(sizeof(*l->cpus), l->nr);
	return l->cpus ? 0 : -ENOMEM;
}

void kc_percpu_lock_destroy(struct kc_percpu_lock *l)
{
	free(l->cpus);
	l->cpus = NULL;
	l->nr = 0;
}
