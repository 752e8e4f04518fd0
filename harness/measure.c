/* SPDX-License-Identifier: MIT */
/*
 * The method.
 *
 *  1. The thread is pinned to one CPU (chosen by the caller or here).
 *  2. Warm-up: the benchmark runs in growing batches for warmup_ms, which
 *     also faults in its code and data and lets the CPU leave idle states.
 *  3. Batch size: doubled until one batch lasts min_batch_ms, so that the
 *     two timer reads and the counter reads around a batch are amortised;
 *     then KH_SIZING_BATCHES more batches of that size, whose median ns/op
 *     sets the size (one batch stalled by the scheduler must not fix it).
 *     Sizing batches whose ns/op differ by more than KH_SIZING_DISAGREE
 *     times flag the result "batches-disagree".
 *  4. Samples: `samples` batches of that size, each giving ns/op and
 *     ticks/op; the software counters of each batch flag a sample during
 *     which the thread migrated or was switched out ("disturbed").  Each
 *     starts outside CLOCK_MONOTONIC's second carry (timer.c), where the
 *     clock's reads cost more for up to a tick.
 *  5. Overhead: the empty loop (the same loop with no operation in it) is
 *     measured the same way: same batch size, same number of samples.  Its
 *     per-sample figures are reported beside the raw samples, which are
 *     never altered; whether to subtract it is the reader's decision by the
 *     rule in docs/result-format.md (stats.c for the harness's own table).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"
#include "stats.h"

/* The empty loop: what every benchmark's loop costs without its operation. */
static int empty_loop(struct kh_bench_ctx *c)
{
	kh_bench_begin(c);
	KH_REPEAT(c->iters)
		KC_BARRIER();
	kh_bench_end(c);
	return KH_OK;
}

static uint64_t empty_body(void *arg, int tid, uint64_t iters)
{
	(void)arg;
	(void)tid;
	KH_REPEAT(iters)
		KC_BARRIER();
	return 0;
}

static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static double batch_ticks(const struct kh_bench_ctx *c)
{
	return (double)(c->t1 - c->t0);
}

/* One batch of the benchmark fn (planted: its KCROSS_TEST_DELAY, if any),
 * or of the empty loop, or (fn NULL) the context made ready for one. */
static int run_batch(kh_bench_fn fn, struct kh_bench_ctx *c, uint64_t iters, bool planted)
{
	kh_bench_ctx_batch(c, iters, planted);
	return fn ? fn(c) : KH_OK;
}

static int bench_batch(struct kh_measure *ms, uint64_t iters)
{
	return run_batch(ms->b->fn, &ms->c, iters, true);
}

/* The empty loop as the benchmark ran: in as many threads, released by the
 * same barrier, so that its figures are comparable with the samples' (one
 * thread's loop if the threads cannot be had). */
static int empty_batch(struct kh_bench_ctx *c, uint64_t iters, int threads)
{
	if (threads > 1) {
		run_batch(NULL, c, iters, false);
		if (kh_run_threads(c, threads, empty_body, NULL) == KH_OK)
			return KH_OK;
	}
	return run_batch(empty_loop, c, iters, false);
}

/*
 * The batch size.  Doubling stops at the first batch that lasts min_ticks,
 * and that batch may have been stalled (preempted, migrated, its threads
 * sharing a CPU): so KH_SIZING_BATCHES more batches of that size are run
 * and the size is set from their median ticks/op, again at the new size
 * while it grows by more than a quarter (KH_SIZING_ROUNDS at most).  All
 * these batches' ticks/op are compared: a spread over KH_SIZING_DISAGREE
 * is flagged with the figures.  Last, the size is rounded up to a multiple
 * of --batch-multiple: kernel work that comes every k calls (a batched
 * random-number refill every 24 or 48 system calls, say) then falls the same
 * number of times in every batch when k divides it, instead of k-1 batches
 * in k having one event fewer (the labs: every batch a multiple of 384).
 */
#define KH_SIZING_BATCHES 5	/* batches per round, sized from their median */
#define KH_SIZING_ROUNDS 4	/* rounds at most, while the size grows */
#define KH_SIZING_DISAGREE 4.0	/* max/min ns/op of sizing batches flagged */
static int size_batch(struct kh_measure *ms, double min_ticks, uint64_t *iters_io)
{
	struct kh_bench_ctx *c = &ms->c;
	double per_op[1 + KH_SIZING_ROUNDS * KH_SIZING_BATCHES], lo, hi, med = 0;
	uint64_t iters = *iters_io, first;
	int st, n = 0;

	for (;;) {
		double bt;

		if ((st = bench_batch(ms, iters)) != KH_OK)
			return st;
		bt = batch_ticks(c);
		if (bt >= min_ticks)
			break;
		if (bt < min_ticks / 8 || bt <= 0)
			iters *= 2;
		else
			iters = (uint64_t)ceil((double)iters * min_ticks / bt);
	}
	first = iters;
	per_op[n++] = batch_ticks(c) / (double)iters;
	for (int round = 0; round < KH_SIZING_ROUNDS; round++) {
		uint64_t next;

		for (int i = 0; i < KH_SIZING_BATCHES; i++) {
			if ((st = bench_batch(ms, iters)) != KH_OK)
				return st;
			/* A batch shorter than the timer's tick counts as one tick:
			 * at most that fast, never infinitely so. */
			per_op[n++] = fmax(batch_ticks(c), 1) / (double)iters;
		}
		med = kh_median(per_op + n - KH_SIZING_BATCHES, KH_SIZING_BATCHES);
		if (!(med > 0))
			break;
		next = (uint64_t)fmax(1, ceil(min_ticks / med));
		if (next <= iters + iters / 4) {
			iters = next;
			break;
		}
		iters = next;	/* the batches were stalled: size again, larger */
	}
	lo = hi = per_op[0];
	for (int i = 1; i < n; i++) {
		lo = fmin(lo, per_op[i]);
		hi = fmax(hi, per_op[i]);
	}
	if (hi > KH_SIZING_DISAGREE * lo) {
		double ns = 1e9 / ms->t->hz;

		kh_result_flag(ms->r, "batches-disagree",
			       "%d sizing batches (first of %llu iterations) took %.4g to %.4g "
			       "ns/op (max/min %.3g > %g); batch size %llu from a median of "
			       "%.4g ns/op", n, (unsigned long long)first, lo * ns, hi * ns,
			       lo > 0 ? hi / lo : INFINITY, KH_SIZING_DISAGREE,
			       (unsigned long long)iters, med * ns);
	}
	if (ms->m->batch_multiple > 1)
		iters = (iters + ms->m->batch_multiple - 1) / ms->m->batch_multiple
			* ms->m->batch_multiple;
	*iters_io = iters;
	return KH_OK;
}

/*
 * The method in three phases so that several benchmarks can take their
 * samples in turn (--interleave): prepare (check, warm up, size the batch),
 * one sample at a time, finish (overhead, throughput, ns).  kh_measure()
 * runs them back to back for one benchmark.
 */
int kh_measure_prepare(struct kh_measure *ms, const struct kh_bench *b,
		       const struct kh_method *m, const struct kh_timer *t,
		       const struct kh_counters *ctr, int cpu, struct kh_result *r)
{
	struct kh_bench_ctx *c = &ms->c;
	double min_ticks = m->min_batch_ms * 1e-3 * t->hz;
	uint64_t start = kh_clock_raw_ns(), iters = 1;
	int st;

	memset(ms, 0, sizeof(*ms));
	memset(r, 0, sizeof(*r));
	ms->b = b;
	ms->m = m;
	ms->t = t;
	ms->r = r;
	kh_bench_ctx_init(c, &ms->timing, t, ctr, b->arg,
			  m->delay_glob && kh_bench_matches(b, m->delay_glob) ? m->delay_ns : 0);
	r->cpu = cpu;
	r->n = m->samples;

	/* First call: setup and the return-value check; nothing timed kept. */
	st = bench_batch(ms, 1);
	if (st == KH_OK && m->force_fail && kh_bench_matches(b, m->force_fail))
		st = kh_fail(c, KH_FORCED_FAILURE);
	if (st != KH_OK)
		goto out;

	/* Warm-up, growing the batch as we go. */
	for (uint64_t until = kh_clock_raw_ns() + (uint64_t)(m->warmup_ms * 1e6);
	     kh_clock_raw_ns() < until;) {
		if ((st = bench_batch(ms, iters)) != KH_OK)
			goto out;
		if (batch_ticks(c) < min_ticks / 4)
			iters *= 2;
	}
	if ((st = size_batch(ms, min_ticks, &iters)) != KH_OK)
		goto out;
	r->iters = iters;
	r->ns = calloc((size_t)m->samples, sizeof(double));
	r->ticks = calloc((size_t)m->samples, sizeof(double));
	r->disturbed = calloc((size_t)m->samples, sizeof(int));
out:
	ms->status = st;
	ms->elapsed_ns = kh_clock_raw_ns() - start;
	return st;
}

/* More threads than CPUs allowed: they take turns, and a reader must know. */
static void flag_shared_cpus(struct kh_result *r, const struct kh_bench_ctx *c)
{
	int allowed = CPU_COUNT(kh_allowed_cpus()), used = 0, off = 0;
	cpu_set_t seen;
	char list[120] = "";

	if (c->threads <= allowed)
		return;
	CPU_ZERO(&seen);
	for (int i = 0; i < c->threads && i < KH_MAX_THREADS; i++) {
		int cpu = c->thread_cpu[i];

		if (cpu < 0 || cpu >= CPU_SETSIZE || CPU_ISSET(cpu, &seen))
			continue;
		CPU_SET(cpu, &seen);
		used++;
		if (off < (int)sizeof(list))
			off += snprintf(list + off, sizeof(list) - (size_t)off, "%s%d",
					off ? "," : "", cpu);
	}
	kh_result_flag(r, "threads-share-cpus",
		       "%d threads ran on %d CPU(s) (%s); %d CPU(s) allowed", c->threads, used,
		       list, allowed);
}

int kh_measure_sample(struct kh_measure *ms, int s)
{
	struct kh_bench_ctx *c = &ms->c;
	struct kh_result *r = ms->r;
	uint64_t start = kh_clock_raw_ns(), batch_start;
	long ivcsw;
	bool moved = false;
	char why[sizeof(r->flags[0].detail)];
	int st;

	if (ms->status != KH_OK)
		return ms->status;
	/* The batch lasts about min_batch_ms, or as the samples so far did. */
	kh_clock_avoid_second_carry(s ? ms->batches_ns / (uint64_t)s
				      : (uint64_t)(ms->m->min_batch_ms * 1e6));
	ivcsw = nivcsw();
	batch_start = kh_clock_raw_ns();
	ms->timing.window = kh_profile_on() ? KH_WINDOW_SAMPLE : KH_WINDOW_NONE;
	st = bench_batch(ms, r->iters);
	ms->timing.window = KH_WINDOW_NONE;
	ms->batches_ns += kh_clock_raw_ns() - batch_start;
	if (st != KH_OK)
		goto out;
	r->ticks[s] = batch_ticks(c) / (double)r->iters;
	for (int e = 0; e < KH_EV_COUNT; e++) {
		const struct kh_snapshot *snap = ms->timing.snap;
		uint64_t d = snap[1].value[e] - snap[0].value[e];

		r->counter_total[e] += d;
		if (snap[1].running[e] != snap[1].enabled[e])
			r->counter_scaled[e] = true;
		if ((e == KH_EV_MIGRATIONS || (e == KH_EV_CSW && !c->counts_switches)) && d)
			moved = true;
	}
	/* A benchmark that switches on purpose is disturbed when its own count
	 * disagrees with what it declares, not by switching. */
	if (c->counts_switches)
		moved |= kh_switches_mismatch(c->switches_per_op,
					      (double)c->switches / (double)r->iters, r->iters,
					      why, sizeof(why));
	else if (nivcsw() != ivcsw)
		moved = true;
	if (moved)
		r->disturbed[r->n_disturbed++] = s;
	r->switches += c->switches;
	if (s == 0) {
		r->threads = c->threads;
		r->counts_aborts = c->counts_aborts;
		r->switches_per_op = c->switches_per_op;
		r->counts_switches = c->counts_switches;
		flag_shared_cpus(r, c);
	} else if (c->threads != r->threads) {
		st = kh_fail(c, "ran %d threads in sample 0 but %d in sample %d",
			     r->threads, c->threads, s);
		goto out;
	}
	r->aborts += c->aborts;
out:
	ms->status = st;
	ms->elapsed_ns += kh_clock_raw_ns() - start;
	return st;
}

void kh_measure_finish(struct kh_measure *ms)
{
	struct kh_bench_ctx *c = &ms->c;
	struct kh_result *r = ms->r;
	const struct kh_method *m = ms->m;
	double ns_per_tick = 1e9 / ms->t->hz;
	uint64_t start = kh_clock_raw_ns();

	if (ms->status != KH_OK)
		goto out;
	/* Which thread ran where, and the throughput of all of them, from
	 * the median wall time of the raw batches. */
	r->thread_cpu = calloc((size_t)r->threads, sizeof(int));
	r->oh_ns = calloc((size_t)m->samples, sizeof(double));
	r->oh_ticks = calloc((size_t)m->samples, sizeof(double));
	if (!r->thread_cpu || !r->oh_ns || !r->oh_ticks) {
		ms->status = kh_fail(c, "out of memory for the results");
		goto out;
	}
	if (r->threads == 1)
		r->thread_cpu[0] = r->cpu;
	else
		memcpy(r->thread_cpu, c->thread_cpu, sizeof(int) * (size_t)r->threads);
	{
		double med = kh_median(r->ticks, m->samples);

		r->throughput = med > 0 ? r->threads * ms->t->hz / med : NAN;
	}
	/* The empty loop, same batch size, same number of samples, same threads. */
	for (int s = 0; s < m->samples; s++) {
		ms->timing.window = kh_profile_on() ? KH_WINDOW_EMPTY : KH_WINDOW_NONE;
		empty_batch(c, r->iters, r->threads);
		ms->timing.window = KH_WINDOW_NONE;
		r->oh_ticks[s] = batch_ticks(c) / (double)r->iters;
		r->oh_ns[s] = r->oh_ticks[s] * ns_per_tick;
	}
	for (int s = 0; s < m->samples; s++)
		r->ns[s] = r->ticks[s] * ns_per_tick;
	if (r->counts_switches && r->switches_per_op > 0) {
		char why[sizeof(r->flags[0].detail)];

		if (kh_switches_mismatch(r->switches_per_op, (double)r->switches /
					 ((double)r->iters * r->n), r->iters, why, sizeof(why)))
			kh_result_flag(r, "counts-mismatch", "%s", why);
	}
out:
	r->status = ms->status;
	if (ms->status != KH_OK) {
		snprintf(r->reason, sizeof(r->reason), "%s", c->reason);
		r->iters = 0;
	}
	ms->elapsed_ns += kh_clock_raw_ns() - start;
	r->elapsed_s = (double)ms->elapsed_ns * 1e-9;
}

/*
 * Declared versus counted switches, per iteration, in batches of `iters`.
 * The count brackets each batch with counter reads taken while the
 * partner is blocked, so its own error is at most KH_SWITCH_SLACK switches
 * per batch: across CPUs the partner's last switch-out (after its last
 * answer) can land after the read, and one before the loop inside it.  What
 * moves the count further is real: another task preempting one of the
 * benchmark's threads (one more switch each time), a waiter that found its
 * answer already there and did not sleep (one fewer), a sched_yield that
 * returned without switching (nothing else runnable), or a declaration that
 * is wrong.  A wrong declaration is off by a whole switch per iteration
 * (50% or more for the 1-4 switches per iteration these rows make); the
 * noise of a shared machine stays within a few percent.  10% separates the
 * two; the detail gives both figures.
 */
bool kh_switches_mismatch(double declared, double counted, uint64_t iters, char *detail,
			  size_t len)
{
	double tol = KH_SWITCH_TOLERANCE * declared;

	if (iters && KH_SWITCH_SLACK / (double)iters > tol)
		tol = KH_SWITCH_SLACK / (double)iters;
	if (declared > 0 && isfinite(counted) && fabs(counted - declared) <= tol)
		return false;
	snprintf(detail, len, "declared %.4g context switches per iteration, counted %.4g "
		 "in all of its threads (tolerance %.3g per iteration in batches of %llu)",
		 declared, counted, tol, (unsigned long long)iters);
	return true;
}

void kh_measure(const struct kh_bench *b, const struct kh_method *m,
		const struct kh_timer *t, const struct kh_counters *ctr,
		int cpu, struct kh_result *r)
{
	struct kh_measure ms;

	if (kh_measure_prepare(&ms, b, m, t, ctr, cpu, r) == KH_OK)
		for (int s = 0; s < m->samples && kh_measure_sample(&ms, s) == KH_OK; s++)
			;
	kh_measure_finish(&ms);
}

void kh_result_free(struct kh_result *r)
{
	free(r->ns);
	free(r->ticks);
	free(r->disturbed);
	free(r->thread_cpu);
	free(r->oh_ns);
	free(r->oh_ticks);
	r->ns = r->ticks = r->oh_ns = r->oh_ticks = NULL;
	r->disturbed = NULL;
	r->thread_cpu = NULL;
}
