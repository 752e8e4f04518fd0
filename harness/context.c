/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's context (bench/api.h): the reason a benchmark skips or
 * fails, the parts of its timed region that are not inline (the counter
 * reads outside it; the end read where the timer is CLOCK_MONOTONIC_RAW),
 * and the delay KCROSS_TEST_DELAY plants at a batch's end.  It uses the
 * timer and the counters only: the method (measure.c) and the threads
 * (threads.c) use it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* The reason, one line; one too long for c->reason is cut at a word boundary
 * and ends in "..." (never cut mid-word, unless a single word fills it). */
static void set_reason(struct kh_bench_ctx *c, const char *fmt, va_list ap)
{
	const size_t size = sizeof(c->reason);
	int n = vsnprintf(c->reason, size, fmt, ap);
	char *cut, *space;

	if (n < 0 || (size_t)n < size)
		return;
	cut = c->reason + size - 4;		/* room for "..." and the NUL */
	*cut = '\0';
	space = strrchr(c->reason, ' ');
	if (space && space > c->reason)
		cut = space;
	strcpy(cut, "...");
}

int kh_skip(struct kh_bench_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(c, fmt, ap);
	va_end(ap);
	return KH_SKIP;
}

int kh_fail(struct kh_bench_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(c, fmt, ap);
	va_end(ap);
	return KH_FAIL;
}

void kh_bench_ctx_init(struct kh_bench_ctx *c, struct kh_timing *tm, const struct kh_timer *t,
		       const struct kh_counters *ctr, long arg, double delay_ns)
{
	memset(c, 0, sizeof(*c));
	memset(tm, 0, sizeof(*tm));
	tm->timer = t;
	tm->counters = ctr;
	tm->delay_ticks = delay_ns > 0 ? delay_ns * 1e-9 * t->hz : 0;
	c->timing = tm;
	c->arg = arg;
	c->cycles = t->cycle_counter;
	c->threads = 1;
}

void kh_bench_ctx_batch(struct kh_bench_ctx *c, uint64_t iters, bool plant)
{
	c->iters = iters;
	c->reason[0] = 0;
	c->counts_aborts = false;
	c->aborts = 0;
	c->threads = 1;
	c->switches_per_op = 0;
	c->counts_switches = false;
	c->switches = 0;
	c->timing->planted = plant ? c->timing->delay_ticks : 0;
	c->plain_end = c->cycles && !(c->timing->planted > 0);
}

void kh__bracket_open(struct kh_bench_ctx *c)
{
	kh_counters_read(c->timing->counters, &c->timing->snap[0]);
	if (c->timing->window)
		kh_profile_open(c->timing->window);
}

/*
 * The end read when it is not the inline one: after the planted delay, if
 * any (spinning on the timer until iters times the delay has passed), the
 * timer's end read.  Reached only from the timed region's end.
 */
uint64_t kh__bracket_end_slow(struct kh_bench_ctx *c)
{
	double delay = c->timing->planted;

	if (delay > 0 && c->iters) {
		uint64_t until = kh_ticks_end(c->cycles) + (uint64_t)((double)c->iters * delay);

		while (kh_ticks_end(c->cycles) < until)
			;
	}
	return kh_ticks_end(c->cycles);
}

void kh__bracket_close(struct kh_bench_ctx *c)
{
	if (c->timing->window)
		kh_profile_close();
	kh_counters_read(c->timing->counters, &c->timing->snap[1]);
}
