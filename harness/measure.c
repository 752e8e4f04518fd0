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
 *     subtracting a figure smaller than the noise only adds noise; the
 *     result says which was done and why.
 */
#include <errno.h>
#include <math.h>
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

int kc_pin_cpu(int cpu)
{
	cpu_set_t allowed, one;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -errno;
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
	return fn(c);
}

void kc_measure(const struct kc_bench *b, const struct kc_method *m,
		const struct kc_timer *t, const struct kc_counters *ctr,
		int cpu, struct kc_result *r)
{
	struct kc_bench_ctx c = { .timer = t, .counters = ctr };
	double ns_per_tick = 1e9 / t->hz;
	double min_ticks = m->min_batch_ms * 1e-3 * t->hz;
	uint64_t start = kc_clock_raw_ns(), iters = 1;
	double *oh = NULL;
	int st;

	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	r->n = m->samples;

	/* First call: setup and the return-value check; nothing timed kept. */
	st = run_batch(b->fn, &c, 1);
	if (st != KC_OK)
		goto out_status;

	/* Warm-up, growing the batch as we go. */
	for (uint64_t until = kc_clock_raw_ns() + (uint64_t)(m->warmup_ms * 1e6);
	     kc_clock_raw_ns() < until;) {
		if ((st = run_batch(b->fn, &c, iters)) != KC_OK)
			goto out_status;
		if (batch_ticks(&c) < min_ticks / 4)
			iters *= 2;
	}
	/* Batch size: double until a batch lasts min_batch_ms, then scale. */
	for (;;) {
		double bt;

		if ((st = run_batch(b->fn, &c, iters)) != KC_OK)
			goto out_status;
		bt = batch_ticks(&c);
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
	oh = calloc((size_t)m->samples, sizeof(double));
	for (int s = 0; s < m->samples; s++) {
		long ivcsw = nivcsw();
		bool moved = false;

		if ((st = run_batch(b->fn, &c, iters)) != KC_OK)
			goto out_status;
		r->ticks[s] = batch_ticks(&c) / (double)iters;
		for (int e = 0; e < KC_EV_COUNT; e++) {
			uint64_t d = c.snap[1].value[e] - c.snap[0].value[e];

			r->counter_total[e] += d;
			if (c.snap[1].running[e] != c.snap[1].enabled[e])
				r->counter_scaled[e] = true;
			if ((e == KC_EV_CSW || e == KC_EV_MIGRATIONS) && d)
				moved = true;
		}
		if (moved || nivcsw() != ivcsw)
			r->disturbed[r->n_disturbed++] = s;
	}
	/* The empty loop, same batch size, same number of samples. */
	for (int s = 0; s < m->samples; s++) {
		run_batch(empty_loop, &c, iters);
		oh[s] = batch_ticks(&c) / (double)iters;
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
		} else if (r->overhead_ticks >= med) {
			snprintf(r->overhead_why, sizeof(r->overhead_why),
				 "not subtracted: empty loop %.3g ns/op is not below the median: the operation is lost in the loop",
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
	st = KC_OK;

out_status:
	r->status = st;
	if (st != KC_OK) {
		snprintf(r->reason, sizeof(r->reason), "%s", c.reason);
		r->iters = 0;
	}
	free(oh);
	r->elapsed_s = (double)(kc_clock_raw_ns() - start) * 1e-9;
}

void kc_result_free(struct kc_result *r)
{
	free(r->ns);
	free(r->ticks);
	free(r->disturbed);
	r->ns = r->ticks = NULL;
	r->disturbed = NULL;
}
