/* SPDX-License-Identifier: MIT */
/*
 * The benchmark author's API: all that a suite file, harness/bench/NAME.c,
 * uses of the harness (with bench/bench.h for what the suites share).  How
 * the harness times, counts, repeats and judges is behind it (harness.h, the
 * internals, includes this header; this header includes nothing of theirs).
 *
 * A benchmark is one function, `static int bench_x(struct kh_bench_ctx *c)`,
 * which the harness calls once per batch:
 *
 *   1. it sets up, and checks the result of its operation once against an
 *      independent path: kh_fail(c, "...") when they disagree;
 *   2. it times exactly c->iters operations with KH_LOOP(c, op), nothing
 *      else in the loop (kh_run_threads for several threads at once);
 *   3. it tears down and returns KH_OK (or what kh_skip / kh_fail returned).
 *
 * and one row of its suite's table (struct kh_bench, below) names it.  A
 * function serving several rows reads the row's parameter with kh_arg().
 *
 * Implemented by harness/context.c (the context, kh_skip, kh_fail) and
 * harness/threads.c (kh_run_threads, kh_allowed_cpus).
 */
#ifndef KCROSS_BENCH_API_H
#define KCROSS_BENCH_API_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kcross/kcross.h>

/* What a benchmark function returns. */
enum kh_bench_status { KH_OK = 0, KH_SKIP = 1, KH_FAIL = 2 };

/* Most threads one benchmark may run (kh_run_threads). */
#define KH_MAX_THREADS 1024

struct kh_timing;	/* the harness's side of the timed region (harness.h) */

/*
 * What a benchmark function gets: read `iters`, write the reports; the rest
 * is the harness's, reached through the functions and macros below.
 */
struct kh_bench_ctx {
	uint64_t iters;		/* operations to run in the timed loop */
	/*
	 * Optional reports, reset before every call.  A benchmark whose
	 * operation is an rseq critical section adds the aborts it retried in
	 * the timed loop to `aborts` and sets `counts_aborts`.  kh_run_threads()
	 * sets `threads` (else 1) and `thread_cpu`.
	 */
	bool counts_aborts;
	uint64_t aborts;
	int threads;
	int thread_cpu[KH_MAX_THREADS];	/* CPU each thread was pinned to, or -1 */
	/*
	 * Context switches (suites ctxsw, uctx): switches_per_op is what one
	 * iteration makes by design (a ping-pong round trip between two
	 * threads: 2), 0 when not declared.  A benchmark that counted the
	 * kernel's switches in all its threads over the timed loop (ctxsw)
	 * adds them to `switches` and sets `counts_switches`; the harness then
	 * compares the two and stops treating the measuring thread's own
	 * switches as a disturbance.
	 */
	double switches_per_op;
	bool counts_switches;
	uint64_t switches;

	/* ---- the harness's: through kh_arg, kh_skip/kh_fail, KH_LOOP ---- */
	long arg;		/* the row's parameter */
	bool arg_read;		/* kh_arg() was called (the registry test checks) */
	char reason[200];	/* kh_skip / kh_fail */
	struct kh_timing *timing;
	bool cycles;		/* the timer is the cycle counter (else ns) */
	bool plain_end;		/* cycles and nothing planted: the end read inline */
	uint64_t t0, t1;	/* the timer at the start and end of the timed region */
};

/* The row's parameter (struct kh_bench.arg): variants of one function. */
static inline long kh_arg(struct kh_bench_ctx *c)
{
	c->arg_read = true;
	return c->arg;
}

/* Set the reason (printf-style, one line) and return KH_SKIP / KH_FAIL:
 * `return kh_skip(c, "...")`. */
int kh_skip(struct kh_bench_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int kh_fail(struct kh_bench_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------- the timed loop */

/*
 * KH_LOOP(c, BODY): exactly c->iters executions of BODY between the timer
 * and counter reads, nothing else.  BODY must have an effect the compiler
 * cannot drop (a volatile asm, an external call, a store to a KC_OPAQUE
 * value).  KH_REPEAT(n) is every timed loop's head (the empty loop's and the
 * multi-threaded bodies' too): never unrolled (GCC unrolls small loops at -O2
 * on ppc64le), so each iteration is the operation plus the same
 * counter-and-branch on every arch and instruction counts (the labs) compare
 * across arches.  kh_bench_begin / kh_bench_end are the loop's bracket, for a
 * timed region KH_LOOP cannot express.
 */
#define KH_REPEAT(n)							\
	_Pragma("GCC unroll 1")						\
	for (uint64_t kh__i = (n); kh__i; kh__i--)
#define KH_LOOP(c, ...)							\
	do {								\
		kh_bench_begin(c);					\
		KH_REPEAT((c)->iters) {					\
			__VA_ARGS__;					\
		}							\
		kh_bench_end(c);					\
	} while (0)

/* The bracket's parts outside the timed region (context.c, timer.c). */
void kh__bracket_open(struct kh_bench_ctx *c);
uint64_t kh__bracket_end_slow(struct kh_bench_ctx *c);
void kh__bracket_close(struct kh_bench_ctx *c);
uint64_t kh_clock_raw_ns(void);

/* The timer's reads: the cycle counter, or CLOCK_MONOTONIC_RAW in ns. */
static inline uint64_t kh_ticks_begin(bool cycles)
{
	return cycles ? kc_ticks_begin() : kh_clock_raw_ns();
}

static inline uint64_t kh_ticks_end(bool cycles)
{
	return cycles ? kc_ticks_end() : kh_clock_raw_ns();
}

/*
 * The timed region holds the loop, the timer reads and one predictable
 * branch at its end: the end read inline, or out of line where the timer is
 * CLOCK_MONOTONIC_RAW or a delay is planted (KCROSS_TEST_DELAY, context.c).
 */
static inline void kh_bench_begin(struct kh_bench_ctx *c)
{
	kh__bracket_open(c);
	c->t0 = kh_ticks_begin(c->cycles);
}

static inline void kh_bench_end(struct kh_bench_ctx *c)
{
	c->t1 = c->plain_end ? kc_ticks_end() : kh__bracket_end_slow(c);
	kh__bracket_close(c);
}

/* ------------------------------------------------ multi-threaded batches */

/*
 * kh_run_threads() runs body(arg, tid, c->iters) in `threads` threads at
 * once: the calling thread (tid 0, still pinned where the harness put it)
 * and threads-1 new ones pinned round-robin over the CPUs the process was
 * allowed at start (kh_allowed_cpus()), starting with the CPU after the
 * caller's.  All wait at a barrier; the batch is timed (counters of the
 * calling thread only) from their release to the moment the last one
 * finished, so ns/op = wall / iters per thread and throughput = threads *
 * iters / wall.  body times nothing itself: its loop is KH_REPEAT(iters).
 * It returns the rseq aborts it retried (0 if none).  Thread creation and
 * joining are outside the timed region.  Returns KH_OK, or KH_FAIL/KH_SKIP
 * with the reason set.
 */
typedef uint64_t (*kh_thread_body)(void *arg, int tid, uint64_t iters);
int kh_run_threads(struct kh_bench_ctx *c, int threads, kh_thread_body body, void *arg);
/* The CPUs this process could use before the harness pinned itself. */
const cpu_set_t *kh_allowed_cpus(void);

/* ------------------------------------------------------ rows and suites */

typedef int (*kh_bench_fn)(struct kh_bench_ctx *c);

/* Machine features a benchmark needs: checked before it runs (a row whose
 * need is unmet is listed and reported as skipped, with the reason). */
enum kh_need {
	KH_NEED_VDSO_CLOCK_GETTIME = 1u << 0,
	KH_NEED_VDSO_GETCPU = 1u << 1,
	KH_NEED_IA32_EMULATION = 1u << 2,
	KH_NEED_DEV_NULL_ZERO = 1u << 3,
	KH_NEED_RSEQ = 1u << 4,		/* this thread has an active rseq area */
	KH_NEED_RDPID = 1u << 5,	/* x86 RDPID (CPUID 7.0:ECX[22]) */
	KH_NEED_RDTSCP = 1u << 6,	/* x86 RDTSCP (CPUID 80000001H:EDX[27]) */
	KH_NEED_X86_CPUNODE = 1u << 7,	/* LSL of Linux's per-CPU GDT entry works */
};

/*
 * One row of a suite: a benchmark.  Variants of one operation (thread
 * counts, same CPU or across CPUs...) are rows sharing `fn` with different
 * `arg`s, which fn reads with kh_arg(); (fn, arg) is unique.  A row that
 * only one architecture can run stands between #if defined(KC_ARCH_X) and
 * #endif: other arches do not list it at all (a row skipped at run time
 * says something about this machine, not about another arch).
 */
struct kh_bench {
	const char *name;	/* unique within its suite; stored results key on it */
	const char *summary;
	kh_bench_fn fn;
	unsigned int needs;	/* enum kh_need bits */
	long arg;		/* passed to fn as kh_arg(c) */
	const char *suite;	/* leave unset: the registry fills it in */
};

/*
 * A suite: each bench/NAME.c defines its own, beside its benchmarks,
 *
 *     static const struct kh_bench benches[] = {
 *             { "op", "what one operation is", bench_op, needs, arg, NULL },
 *             ...
 *             { NULL, NULL, NULL, 0, 0, NULL },
 *     };
 *     const struct kh_suite kh_suite_NAME = { "NAME", benches, 0 };
 *
 * and harness/registry.c lists &kh_suite_NAME once.
 */
struct kh_suite {
	const char *name;
	const struct kh_bench *benches;	/* ends with a row whose name is NULL */
	unsigned int flags;		/* KH_SUITE_* */
};

/*
 * The suite's benchmarks run with no perf event open in the harness: while
 * any per-task perf event exists on the system, every context switch (any
 * task's) goes through perf's sched-out/in hooks (the kernel's
 * perf_sched_events static key): on this project's VM `perf bench sched
 * pipe` took 4.40 us per round trip alone and 4.69 us while one other task
 * had a perf event.  Counts come from /proc instead (where /proc is missing
 * the events stay open: they are then the count's fallback).
 */
#define KH_SUITE_NO_PERF_EVENTS	1u

#endif /* KCROSS_BENCH_API_H */
