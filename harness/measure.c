/* SPDX-License-Identifier: MIT */
/*
 * The method.
 *
 *  1. The thread is pinned to one CPU (chosen by the caller or here).
 *  2. Warm-up: the benchmark runs in growing batches for warmup_ms, which
 *     also faults in its code and data and lets the CPU leave idle states.
 *  3. Batch size: doubled until one batch lasts min_batch_ms, so that the
 *     two timer reads and the counter reads around a batch are amortised.
 *  4. Samples: `samples` batches of that size, each giving ns/op and
 *     ticks/op; the software counters of each batch flag a sample during
 *     which the thread migrated or was switched out ("disturbed").
 *  5. Overhead: the empty loop (the same loop with no operation in it) is
 *     measured the same way with the same batch size.  It is subtracted only
 *     when it is larger than the benchmark's own noise (half its IQR), since
 *     subtracting a figure smaller than the noise only adds noise, and less
 *     than half the median, since an operation about as cheap as the loop
 *     cannot be separated from it; the result says which was done and why.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"

int kc_skip(struct kc_bench_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	return KC_SKIP;
}

int kc_fail(struct kc_bench_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	return KC_FAIL;
}

static cpu_set_t allowed_at_start;
static bool allowed_known;

const cpu_set_t *kc_allowed_cpus(void)
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

int kc_pin_cpu(int cpu)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorted copy helpers: median and quartiles by linear interpolation. */
static double quantile_sorted(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos;

	if (lo >= n - 1)
		return v[n - 1];
	return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

static void quartiles(const double *v, int n, double *q1, double *q2, double *q3)
{
	double *s = malloc(sizeof(*s) * (size_t)n);

	memcpy(s, v, sizeof(*s) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	*q1 = quantile_sorted(s, n, 0.25);
	*q2 = quantile_sorted(s, n, 0.5);
	*q3 = quantile_sorted(s, n, 0.75);
	free(s);
}

double kc_median(const double *v, int n)
{
	double q1, q2, q3;

	quartiles(v, n, &q1, &q2, &q3);
	return q2;
}

/* The empty loop: what every benchmark's loop costs without its operation. */
static int empty_loop(struct kc_bench_ctx *c)
{
	kc_bench_begin(c);
	for (uint64_t i = c->iters; i; i--)
		KC_BARRIER();
	kc_bench_end(c);
	return KC_OK;
}

static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static double batch_ticks(const struct kc_bench_ctx *c)
{
	return (double)(c->t1 - c->t0);
}

static int run_batch(kc_bench_fn fn, struct kc_bench_ctx *c, uint64_t iters)
{
	c->iters = iters;
	c->reason[0] = 0;
	c->counts_aborts = false;
	c->aborts = 0;
	c->threads = 1;
	return fn(c);
}

/*
 * The method in three phases so that several benchmarks can take their
 * samples in turn (--interleave): prepare (check, warm up, size the batch),
 * one sample at a time, finish (overhead, throughput, ns).  kc_measure()
 * runs them back to back for one benchmark.
 */
int kc_measure_prepare(struct kc_measure *ms, const struct kc_bench *b,
		       const struct kc_method *m, const struct kc_timer *t,
		       const struct kc_counters *ctr, int cpu, struct kc_result *r)
{
	struct kc_bench_ctx *c = &ms->c;
	double min_ticks = m->min_batch_ms * 1e-3 * t->hz;
	uint64_t start = kc_clock_raw_ns(), iters = 1;
	int st;

	memset(ms, 0, sizeof(*ms));
	memset(r, 0, sizeof(*r));
	ms->b = b;
	ms->m = m;
	ms->t = t;
	ms->r = r;
	c->timer = t;
	c->counters = ctr;
	r->cpu = cpu;
	r->n = m->samples;

	/* First call: setup and the return-value check; nothing timed kept. */
	st = run_batch(b->fn, c, 1);
	if (st != KC_OK)
		goto out;

	/* Warm-up, growing the batch as we go. */
	for (uint64_t until = kc_clock_raw_ns() + (uint64_t)(m->warmup_ms * 1e6);
	     kc_clock_raw_ns() < until;) {
		if ((st = run_batch(b->fn, c, iters)) != KC_OK)
			goto out;
		if (batch_ticks(c) < min_ticks / 4)
			iters *= 2;
	}
	/* Batch size: double until a batch lasts min_batch_ms, then scale. */
	for (;;) {
		double bt;

		if ((st = run_batch(b->fn, c, iters)) != KC_OK)
			goto out;
		bt = batch_ticks(c);
		if (bt >= min_ticks)
			break;
		if (bt < min_ticks / 8 || bt <= 0)
			iters *= 2;
		else
			iters = (uint64_t)ceil((double)iters * min_ticks / bt);
	}
	r->iters = iters;
	r->ns = calloc((size_t)m->samples, sizeof(double));
	r->ticks = calloc((size_t)m->samples, sizeof(double));
	r->disturbed = calloc((size_t)m->samples, sizeof(int));
out:
	ms->status = st;
	ms->elapsed_ns = kc_clock_raw_ns() - start;
	return st;
}

int kc_measure_sample(struct kc_measure *ms, int s)
{
	struct kc_bench_ctx *c = &ms->c;
	struct kc_result *r = ms->r;
	uint64_t start = kc_clock_raw_ns();
	long ivcsw = nivcsw();
	bool moved = false;
	int st;

	if (ms->status != KC_OK)
		return ms->status;
	if ((st = run_batch(ms->b->fn, c, r->iters)) != KC_OK)
		goto out;
	r->ticks[s] = batch_ticks(c) / (double)r->iters;
	for (int e = 0; e < KC_EV_COUNT; e++) {
		uint64_t d = c->snap[1].value[e] - c->snap[0].value[e];

		r->counter_total[e] += d;
		if (c->snap[1].running[e] != c->snap[1].enabled[e])
			r->counter_scaled[e] = true;
		if ((e == KC_EV_CSW || e == KC_EV_MIGRATIONS) && d)
			moved = true;
	}
	if (moved || nivcsw() != ivcsw)
		r->disturbed[r->n_disturbed++] = s;
	if (s == 0) {
		r->threads = c->threads;
		r->counts_aborts = c->counts_aborts;
	} else if (c->threads != r->threads) {
		st = kc_fail(c, "ran %d threads in sample 0 but %d in sample %d",
			     r->threads, c->threads, s);
		goto out;
	}
	r->aborts += c->aborts;
out:
	ms->status = st;
	ms->elapsed_ns += kc_clock_raw_ns() - start;
	return st;
}

void kc_measure_finish(struct kc_measure *ms)
{
	struct kc_bench_ctx *c = &ms->c;
	struct kc_result *r = ms->r;
	const struct kc_method *m = ms->m;
	double ns_per_tick = 1e9 / ms->t->hz;
	uint64_t start = kc_clock_raw_ns();
	double *oh = NULL;

	if (ms->status != KC_OK)
		goto out;
	/* Which thread ran where, and the throughput of all of them, from
	 * the wall time of the batches (before any overhead subtraction). */
	r->thread_cpu = calloc((size_t)r->threads, sizeof(int));
	if (r->threads == 1)
		r->thread_cpu[0] = r->cpu;
	else
		memcpy(r->thread_cpu, c->thread_cpu, sizeof(int) * (size_t)r->threads);
	{
		double med = kc_median(r->ticks, m->samples);

		r->throughput = med > 0 ? r->threads * ms->t->hz / med : NAN;
	}
	/* The empty loop, same batch size, same number of samples. */
	oh = calloc((size_t)m->samples, sizeof(double));
	for (int s = 0; s < m->samples; s++) {
		run_batch(empty_loop, c, r->iters);
		oh[s] = batch_ticks(c) / (double)r->iters;
	}
	{
		double q1, med, q3;

		quartiles(r->ticks, m->samples, &q1, &med, &q3);
		r->overhead_ticks = kc_median(oh, m->samples);
		r->overhead_ns = r->overhead_ticks * ns_per_tick;
		double noise = (q3 - q1) / 2;

		if (r->overhead_ticks <= noise) {
			snprintf(r->overhead_why, sizeof(r->overhead_why),
				 "not subtracted: empty loop %.3g ns/op is within the noise (IQR/2 = %.3g ns/op)",
				 r->overhead_ns, noise * ns_per_tick);
		} else if (r->overhead_ticks * 2 >= med) {
			/* The difference of two nearly equal figures would be
			 * mostly noise, and single samples could go negative. */
			snprintf(r->overhead_why, sizeof(r->overhead_why),
				 "not subtracted: empty loop %.3g ns/op is half the median or more: "
				 "the operation cannot be separated from the loop; compare raw figures",
				 r->overhead_ns);
		} else {
			r->overhead_subtracted = true;
			snprintf(r->overhead_why, sizeof(r->overhead_why),
				 "subtracted: empty loop %.3g ns/op exceeds the noise (IQR/2 = %.3g ns/op)",
				 r->overhead_ns, noise * ns_per_tick);
			for (int s = 0; s < m->samples; s++)
				r->ticks[s] -= r->overhead_ticks;
		}
	}
	for (int s = 0; s < m->samples; s++)
		r->ns[s] = r->ticks[s] * ns_per_tick;
out:
	r->status = ms->status;
	if (ms->status != KC_OK) {
		snprintf(r->reason, sizeof(r->reason), "%s", c->reason);
		r->iters = 0;
	}
	free(oh);
	ms->elapsed_ns += kc_clock_raw_ns() - start;
	r->elapsed_s = (double)ms->elapsed_ns * 1e-9;
}

void kc_measure(const struct kc_bench *b, const struct kc_method *m,
		const struct kc_timer *t, const struct kc_counters *ctr,
		int cpu, struct kc_result *r)
{
	struct kc_measure ms;

	if (kc_measure_prepare(&ms, b, m, t, ctr, cpu, r) == KC_OK)
		for (int s = 0; s < m->samples && kc_measure_sample(&ms, s) == KC_OK; s++)
			;
	kc_measure_finish(&ms);
}

void kc_result_free(struct kc_result *r)
{
	free(r->ns);
	free(r->ticks);
	free(r->disturbed);
	free(r->thread_cpu);
	r->ns = r->ticks = NULL;
	r->disturbed = NULL;
	r->thread_cpu = NULL;
}

void kc_result_write_extra(struct kc_json *j, const struct kc_result *r)
{
	bool ok = r->status == KC_OK && r->thread_cpu;
	double ops = (double)r->iters * r->n * r->threads;

	if (ok)
		kc_json_int(j, "threads", r->threads);
	else
		kc_json_null(j, "threads");
	kc_json_arr(j, "thread_cpus");
	for (int i = 0; ok && i < r->threads; i++) {
		if (r->thread_cpu[i] >= 0)
			kc_json_int(j, NULL, r->thread_cpu[i]);
		else
			kc_json_null(j, NULL);
	}
	kc_json_arr_end(j);
	kc_json_num(j, "throughput_ops_per_s", ok ? r->throughput : NAN);
	kc_json_num(j, "aborts_per_million",
		    ok && r->counts_aborts && ops > 0 ? (double)r->aborts * 1e6 / ops : NAN);
}

const char *kc_result_text_extra(const struct kc_result *r)
{
	static char buf[160];
	double ops = (double)r->iters * r->n * r->threads;
	size_t off = 0;

	buf[0] = 0;
	if (r->status != KC_OK || !r->thread_cpu)
		return buf;
	if (r->threads > 1) {
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " [%d threads on", r->threads);
		for (int i = 0; i < r->threads && off < sizeof(buf) - 40; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d",
						i ? "," : " ", r->thread_cpu[i]);
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, ", %.4g Mops/s]",
					r->throughput * 1e-6);
	}
	if (r->counts_aborts && off < sizeof(buf))
		snprintf(buf + off, sizeof(buf) - off, " [aborts %.3g/M ops]",
			 ops > 0 ? (double)r->aborts * 1e6 / ops : 0.0);
	return buf;
}

/* ------------------------------------------------ multi-threaded batches */

struct mt_shared {
	kc_thread_body body;
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

int kc_run_threads(struct kc_bench_ctx *c, int threads, kc_thread_body body, void *arg)
{
	static struct mt_thread th[KC_MAX_THREADS];
	const cpu_set_t *allowed = kc_allowed_cpus();
	int cpus[CPU_SETSIZE], ncpus = 0, self = -1, start = 0, created, rc = KC_OK;
	struct mt_shared s = { .body = body, .arg = arg, .iters = c->iters };
	cpu_set_t mine;
	uint64_t aborts;

	if (threads < 1 || threads > KC_MAX_THREADS)
		return kc_skip(c, "%d threads: this harness runs 1 to %d", threads,
			       KC_MAX_THREADS);
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
			rc = kc_fail(c, "cannot create thread %d of %d: %s", created + 1,
				     threads, strerror(err));
			break;
		}
	}
	mt_wait(&s.ready, created - 1);
	if (rc != KC_OK) {
		/* Release the threads there are with nothing to do. */
		__atomic_store_n(&s.iters, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
	} else {
		kc_bench_begin(c);
		__atomic_store_n(&s.go, 1, __ATOMIC_RELEASE);
		aborts = body(arg, 0, c->iters);
		mt_wait(&s.done, threads - 1);
		kc_bench_end(c);
		c->aborts += aborts + __atomic_load_n(&s.aborts, __ATOMIC_RELAXED);
	}
	for (int i = 1; i < created; i++)
		pthread_join(th[i].th, NULL);
	return rc;
}
