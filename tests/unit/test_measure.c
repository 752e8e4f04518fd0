/* SPDX-License-Identifier: MIT */
/*
 * The method's preparation (harness/measure.c kh_measure_prepare), driven
 * with fake benchmarks whose behaviour is fixed, so nothing depends on the
 * machine's speed:
 *
 *   stall      the first sizing batch is stalled (a busy wait inside the
 *              timed region, as a preemption would do): the batch size must
 *              come from the following batches, not from that one, and the
 *              result must carry the flag "batches-disagree";
 *   forced     KCROSS_TEST_FAIL's glob (kh_method.force_fail) fails a
 *              matching benchmark after its first call, by name or
 *              suite/name, with the fixed reason; others run;
 *   threads    a benchmark running more threads than CPUs allowed carries
 *              "threads-share-cpus"; a one-thread one does not;
 *   delay      KCROSS_TEST_DELAY's glob and nanoseconds (kh_method.delay_glob,
 *              delay_ns) add the delay to every operation of a matching
 *              benchmark: its median minus a twin's (the same loop, not
 *              matching) is the delay within 5% (natively within 0.02%: the
 *              spin stops at the delay, overshooting by a timer read per
 *              batch; under ASan and load within 1%); nothing is added to the
 *              twin (its median stays under 5% of the delay, where it is
 *              under a nanosecond) nor to the empty loop (the planted's is the
 *              twin's within that much), in an attempt the machine's other
 *              work left alone (attempts until one is, a hang guard only).  In two threads, where batches swing
 *              with the load: every sample holds the delay, and the fastest
 *              is the delay above the fastest empty loop (same threads, same
 *              batch size), within half the delay, in an attempt no other
 *              task disturbed (attempts until one is, a hang guard only).
 *              Differences within one process and ratios to the delay, not
 *              times.
 */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "harness.h"
#include "stats.h"

#define MIN_BATCH_MS 2.0
#define HANG_S 50.0	/* each delay check's attempts, at most (ctest: 120 s) */
#define X2_BATCH 1000000	/* operations per batch of the two-thread delay */

static int calls;

/* An empty loop; the 2nd call (the first batch after setup) stalls for
 * three minimum batches inside the timed region. */
static int bench_stalled_once(struct kh_bench_ctx *c)
{
	int call = calls++;

	kh_bench_begin(c);
	for (uint64_t i = c->iters; i; i--)
		KC_BARRIER();
	if (call == 1)
		for (uint64_t until = kh_clock_raw_ns() + (uint64_t)(3 * MIN_BATCH_MS * 1e6);
		     kh_clock_raw_ns() < until;)
			;
	kh_bench_end(c);
	return KH_OK;
}

static uint64_t body_empty(void *arg, int tid, uint64_t iters)
{
	(void)arg;
	(void)tid;
	for (uint64_t i = iters; i; i--)
		KC_BARRIER();
	return 0;
}

static int bench_threads(struct kh_bench_ctx *c)
{
	calls++;
	return kh_run_threads(c, (int)kh_arg(c), body_empty, NULL);
}

/* One empty loop per operation; kh_arg threads (1: this one alone). */
static int bench_twin(struct kh_bench_ctx *c)
{
	long threads = kh_arg(c);

	if (threads > 1)
		return kh_run_threads(c, (int)threads, body_empty, NULL);
	KH_LOOP(c, KC_BARRIER());
	return KH_OK;
}

static bool has_flag(const struct kh_result *r, const char *flag, const char **detail)
{
	for (int i = 0; i < r->n_flags; i++)
		if (!strcmp(r->flags[i].flag, flag)) {
			if (detail)
				*detail = r->flags[i].detail;
			return true;
		}
	return false;
}

static int prepare(const struct kh_bench *b, const struct kh_method *m,
		   const struct kh_timer *t, const struct kh_counters *ctr,
		   struct kh_measure *ms, struct kh_result *r)
{
	calls = 0;
	return kh_measure_prepare(ms, b, m, t, ctr, -1, r);
}

int main(void)
{
	static struct kh_measure ms;	/* large: the context's thread_cpu[] */
	struct kh_bench stalled = { "stalled-once", "fake", bench_stalled_once, 0, 0, "test" };
	struct kh_method m = { .samples = 3, .min_batch_ms = MIN_BATCH_MS, .warmup_ms = 0,
			       .cpu = -1 };
	const char *detail = "";
	struct kh_timer t;
	struct kh_counters ctr;
	struct kh_result r;
	int st, allowed;
	bool ok;

	kh_pin_cpu(-1);
	allowed = CPU_COUNT(kh_allowed_cpus());
	kh_timer_init(&t, 5);
	kh_counters_open(&ctr);

	/* stall */
	st = prepare(&stalled, &m, &t, &ctr, &ms, &r);
	tap_ok(st == KH_OK, "stalled benchmark prepared (status %d %s)", st, ms.c.reason);
	tap_ok(r.iters >= 100, "batch size %llu iterations, not the stalled batch's 1",
	       (unsigned long long)r.iters);
	ok = has_flag(&r, "batches-disagree", &detail);
	tap_ok(ok, "flag batches-disagree: %s", detail);
	tap_ok(!has_flag(&r, "threads-share-cpus", NULL), "one thread: no threads-share-cpus");
	kh_result_free(&r);

	/* forced */
	m.force_fail = "stalled-*";
	st = prepare(&stalled, &m, &t, &ctr, &ms, &r);
	tap_ok(st == KH_FAIL && !strcmp(ms.c.reason, KH_FORCED_FAILURE),
	       "KCROSS_TEST_FAIL by name: status %d, reason '%s'", st, ms.c.reason);
	tap_eq_long(calls, 1, "forced failure after the first (setup + check) call only");
	kh_result_free(&r);
	m.force_fail = "test/stalled-once";
	st = prepare(&stalled, &m, &t, &ctr, &ms, &r);
	tap_ok(st == KH_FAIL, "KCROSS_TEST_FAIL by suite/name: status %d", st);
	kh_result_free(&r);
	m.force_fail = "other*";
	st = prepare(&stalled, &m, &t, &ctr, &ms, &r);
	tap_ok(st == KH_OK, "KCROSS_TEST_FAIL not matching: status %d", st);
	kh_result_free(&r);
	m.force_fail = NULL;

	/* threads */
	{
		struct kh_bench more = { "threads", "fake", bench_threads, 0, allowed + 1, "test" };

		m.min_batch_ms = 0.05;
		st = prepare(&more, &m, &t, &ctr, &ms, &r);
		if (st == KH_OK)
			st = kh_measure_sample(&ms, 0);
		tap_ok(st == KH_OK, "%d threads on %d CPUs measured (%s)", allowed + 1, allowed,
		       ms.c.reason);
		detail = "";
		ok = has_flag(&r, "threads-share-cpus", &detail);
		tap_ok(ok, "%d threads on %d CPUs: flag threads-share-cpus: %s", allowed + 1,
		       allowed, detail);
		/* The empty loop runs as the benchmark ran: in as many threads. */
		for (int s = 1; st == KH_OK && s < m.samples; s++)
			st = kh_measure_sample(&ms, s);
		kh_measure_finish(&ms);
		tap_ok(st == KH_OK && r.oh_ns && ms.c.threads == allowed + 1,
		       "the empty loop ran in %d threads like the benchmark (ran in %d)",
		       allowed + 1, ms.c.threads);
		kh_result_free(&r);
	}
	/* delay */
	m.samples = 21;
	m.min_batch_ms = 1;
	m.delay_ns = 200;
	m.delay_glob = "test/plant*";
	{
		/* Attempts until one the machine's other work left alone (a median of
		 * 1 ms batches moves when most of them wait for a CPU: 957 ns for the
		 * 200 planted beside other jobs), for HANG_S seconds at most: a delay
		 * not planted, planted on the twin or on the empty loop fails every
		 * attempt. */
		struct kh_bench planted = { "planted", "fake", bench_twin, 0, 1, "test" };
		struct kh_bench twin = { "twin", "fake", bench_twin, 0, 1, "test" };
		struct kh_result rt;
		double added = NAN, twin_med = NAN, oh_planted = NAN, oh_twin = NAN;
		double until = kh_clock_raw_ns() * 1e-9 + HANG_S;
		bool measured, rose, twin_clean, oh_clean;
		int attempts = 0;

		do {
			kh_measure(&planted, &m, &t, &ctr, -1, &r);
			kh_measure(&twin, &m, &t, &ctr, -1, &rt);
			attempts++;
			measured = r.status == KH_OK && rt.status == KH_OK;
			if (measured) {
				twin_med = kh_median(rt.ns, rt.n);
				added = kh_median(r.ns, r.n) - twin_med;
				oh_planted = kh_median(r.oh_ns, r.n);
				oh_twin = kh_median(rt.oh_ns, rt.n);
			}
			rose = fabs(added - m.delay_ns) <= 0.05 * m.delay_ns;
			twin_clean = twin_med < 0.05 * m.delay_ns;
			oh_clean = oh_planted - oh_twin < 0.05 * m.delay_ns;
			if (!measured || (rose && twin_clean && oh_clean) ||
			    kh_clock_raw_ns() * 1e-9 > until)
				break;
			kh_result_free(&r);
			kh_result_free(&rt);
		} while (true);
		if (tap_ok(measured, "planted and twin measured (%s%s)", r.reason, rt.reason)) {
			tap_ok(rose, "%g ns planted per operation: the median rose by %.2f ns "
			       "(attempt %d)", m.delay_ns, added, attempts);
			tap_ok(twin_clean, "the twin, not matching the glob, got nothing "
			       "(%.3f ns/op)", twin_med);
			tap_ok(oh_clean, "the empty loop got nothing (%.3f ns/op, the twin's %.3f)",
			       oh_planted, oh_twin);
		}
		kh_result_free(&r);
		kh_result_free(&rt);
	}
	/*
	 * Two threads: the calling thread spins after the last one finished.  A
	 * two-thread batch's start and end swing with the machine's load (by
	 * milliseconds under qemu), so this reads what the spin guarantees and
	 * the best of 11 batches, each a multiple of X2_BATCH operations (200 ms
	 * of delay: a wait of milliseconds for a CPU moves it by nanoseconds per
	 * operation; sized by time, a busy machine's batches were of a few
	 * operations, each a wait): every sample holds the delay; the fastest is
	 * the delay above the fastest empty loop (same threads, same batch
	 * size), not twice it and not nothing.  Waiting for a CPU (a thread not
	 * yet running, the spin's end read late: another task had the CPU when
	 * its deadline passed) only adds, so a delay planted twice is never
	 * within half of it, and a delay planted once is, in an attempt nothing
	 * disturbed much: the attempts go on until one is, for HANG_S seconds at
	 * most (a guard against a hang, not a limit on the load).
	 */
	{
		struct kh_bench planted = { "planted-x2", "fake", bench_twin, 0, 2, "test" };
		double lo = INFINITY, oh_lo = INFINITY, until = kh_clock_raw_ns() * 1e-9 + HANG_S;
		bool measured = true, holds = true, once = false;
		int attempts = 0;

		m.min_batch_ms = 1;
		m.samples = 11;
		m.batch_multiple = X2_BATCH;
		for (;;) {
			lo = oh_lo = INFINITY;
			kh_measure(&planted, &m, &t, &ctr, -1, &r);
			attempts++;
			measured = r.status == KH_OK && r.threads == 2;
			for (int s = 0; measured && s < r.n; s++) {
				lo = fmin(lo, r.ns[s]);
				oh_lo = fmin(oh_lo, r.oh_ns[s]);
			}
			holds = lo >= 0.99 * m.delay_ns;
			once = fabs(lo - oh_lo - m.delay_ns) < 0.5 * m.delay_ns;
			if (!measured || !holds || once || kh_clock_raw_ns() * 1e-9 > until)
				break;
			kh_result_free(&r);
		}
		if (tap_ok(measured, "2 threads measured (%s)", r.reason)) {
			tap_ok(holds, "2 threads: every sample holds the %g ns delay (the fastest: "
			       "%.2f ns/op)", m.delay_ns, lo);
			tap_ok(once, "2 threads: the fastest sample is %.2f ns/op above the fastest "
			       "empty loop (attempt %d)", lo - oh_lo, attempts);
		}
		kh_result_free(&r);
	}
	m.delay_glob = NULL;
	kh_counters_close(&ctr);
	/* A reason too long for the context is cut at a word boundary, never mid-word. */
	{
		static struct kh_bench_ctx c;
		char want[sizeof(c.reason) * 2] = "";

		while (strlen(want) < sizeof(c.reason) + 20)
			strcat(want, "sibling ");
		st = kh_skip(&c, "needs an SMT %s", want);
		size_t len = strlen(c.reason);
		tap_ok(st == KH_SKIP && len < sizeof(c.reason) && len > sizeof(c.reason) - 16,
		       "a long reason fills its %zu bytes but a word (%zu)", sizeof(c.reason), len);
		tap_ok(len >= 10 && !strcmp(c.reason + len - 10, "sibling..."),
		       "cut after a whole word: '...%s'", c.reason + (len > 20 ? len - 20 : 0));
		st = kh_fail(&c, "short %s", "reason");
		tap_ok(st == KH_FAIL && !strcmp(c.reason, "short reason"), "a short reason whole: '%s'",
		       c.reason);
	}
	return tap_done();
}
