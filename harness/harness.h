/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of kcross-harness.
 *
 *   timer.c        the cycle counter, calibrated against CLOCK_MONOTONIC_RAW
 *   counters.c     perf_event_open hardware and software counters
 *   measure.c      the method: pin, warm up, size the batch, sample, overhead
 *   registry.c     the one table of benchmarks, used by list and run
 *   fingerprint.c  what machine this is (first JSON record)
 *   json.c         the JSON-lines writer
 *   bench/NAME.c   the benchmarks themselves
 */
#ifndef KCROSS_HARNESS_H
#define KCROSS_HARNESS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <kcross/kcross.h>

/* Version of the JSON-lines format; history in docs/result-format.md. */
#define KC_RESULT_SCHEMA 1

/* ------------------------------------------------------------------ timer */

struct kc_timer {
	const char *source;	/* "tsc", "cntvct", "timebase", "clock_gettime" */
	bool cycle_counter;	/* false: CLOCK_MONOTONIC_RAW in ns */
	int invariant;		/* 1 yes, 0 no, -1 unknown */
	double hz;		/* ticks per second */
	double calib_ms;	/* length of the calibration interval */
	double calib_error_ppm;	/* disagreement of two calibrations */
	const char *why_fallback; /* why the cycle counter is not used, or NULL */
};

/* Choose and calibrate the timer; calib_ms is each calibration interval. */
int kc_timer_init(struct kc_timer *t, double calib_ms);
uint64_t kc_clock_raw_ns(void);

static inline uint64_t kc_timer_begin(const struct kc_timer *t)
{
	return t->cycle_counter ? kc_ticks_begin() : kc_clock_raw_ns();
}

static inline uint64_t kc_timer_end(const struct kc_timer *t)
{
	return t->cycle_counter ? kc_ticks_end() : kc_clock_raw_ns();
}

/* --------------------------------------------------------------- counters */

enum kc_event {
	KC_EV_CYCLES_U, KC_EV_CYCLES_K,
	KC_EV_INSNS_U, KC_EV_INSNS_K,
	KC_EV_BRMISS_U, KC_EV_BRMISS_K,
	KC_EV_TASK_CLOCK, KC_EV_CSW, KC_EV_MIGRATIONS, KC_EV_PAGE_FAULTS,
	KC_EV_COUNT
};
#define KC_EV_FIRST_SOFTWARE KC_EV_TASK_CLOCK

struct kc_counters {
	int group_fd[3];			/* hw user, hw kernel, software */
	int fd[KC_EV_COUNT];			/* -1 when unavailable */
	int slot[KC_EV_COUNT];			/* index within its group read */
	int errnum[KC_EV_COUNT];		/* why it could not be opened */
	int paranoid;
};

struct kc_snapshot {
	uint64_t value[KC_EV_COUNT];
	uint64_t enabled[KC_EV_COUNT];
	uint64_t running[KC_EV_COUNT];
};

extern const char *const kc_event_names[KC_EV_COUNT];
void kc_counters_open(struct kc_counters *c);
void kc_counters_close(struct kc_counters *c);
bool kc_counter_available(const struct kc_counters *c, enum kc_event e);
const char *kc_counter_reason(const struct kc_counters *c, enum kc_event e);
void kc_counters_read(const struct kc_counters *c, struct kc_snapshot *s);

/* -------------------------------------------------------------- benchmark */

enum kc_bench_status { KC_OK = 0, KC_SKIP = 1, KC_FAIL = 2 };

/* Most threads one benchmark may run (kc_run_threads). */
#define KC_MAX_THREADS 1024

/*
 * What a benchmark function gets.  It sets itself up, checks the return
 * value of its operation once, then brackets a loop of exactly `iters`
 * operations with kc_bench_begin()/kc_bench_end(), and tears down.  Only the
 * loop is timed and counted.
 */
struct kc_bench_ctx {
	uint64_t iters;
	const struct kc_timer *timer;
	const struct kc_counters *counters;
	struct kc_snapshot snap[2];
	uint64_t t0, t1;
	char reason[200];
	/*
	 * Optional reports, reset before every call.  A benchmark whose
	 * operation is an rseq critical section adds the aborts it retried in
	 * the timed loop to `aborts` and sets `counts_aborts`.  kc_run_threads()
	 * sets `threads` (else 1) and `thread_cpu`.
	 */
	bool counts_aborts;
	uint64_t aborts;
	int threads;
	int thread_cpu[KC_MAX_THREADS];	/* CPU each thread was pinned to, or -1 */
};

static inline void kc_bench_begin(struct kc_bench_ctx *c)
{
	kc_counters_read(c->counters, &c->snap[0]);
	c->t0 = kc_timer_begin(c->timer);
}

static inline void kc_bench_end(struct kc_bench_ctx *c)
{
	c->t1 = kc_timer_end(c->timer);
	kc_counters_read(c->counters, &c->snap[1]);
}

/*
 * The timed loop: exactly c->iters executions of BODY between the timer and
 * counter reads, nothing else.  BODY must have an effect the compiler cannot
 * drop (a volatile asm, an external call, a store to a KC_OPAQUE value).
 */
#define KC_LOOP(c, ...)							\
	do {								\
		kc_bench_begin(c);					\
		for (uint64_t kc__i = (c)->iters; kc__i; kc__i--) {	\
			__VA_ARGS__;					\
		}							\
		kc_bench_end(c);					\
	} while (0)

/*
 * Multi-threaded batches.  kc_run_threads() runs body(arg, tid, c->iters)
 * in `threads` threads at once: the calling thread (tid 0, still pinned
 * where the harness put it) and threads-1 new ones pinned round-robin over
 * the CPUs the process was allowed at start (kc_allowed_cpus()), starting
 * with the CPU after the caller's.  All wait at a barrier; the batch is
 * timed (c->t0/c->t1, counters of the calling thread only) from their
 * release to the moment the last one finished, so ns/op = wall / iters per
 * thread and throughput = threads * iters / wall.  body returns the rseq
 * aborts it retried (0 if none).  Thread creation and joining are outside
 * the timed region.  Returns KC_OK, or KC_FAIL/KC_SKIP with c->reason.
 */
typedef uint64_t (*kc_thread_body)(void *arg, int tid, uint64_t iters);
int kc_run_threads(struct kc_bench_ctx *c, int threads, kc_thread_body body, void *arg);
/* The CPUs this process could use before the harness pinned itself. */
const cpu_set_t *kc_allowed_cpus(void);

/* Set c->reason and return KC_SKIP / KC_FAIL. */
int kc_skip(struct kc_bench_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int kc_fail(struct kc_bench_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

typedef int (*kc_bench_fn)(struct kc_bench_ctx *c);

/* Machine features a benchmark needs; checked before it runs. */
enum kc_need {
	KC_NEED_VDSO_CLOCK_GETTIME = 1u << 0,
	KC_NEED_VDSO_GETCPU = 1u << 1,
	KC_NEED_IA32_EMULATION = 1u << 2,
	KC_NEED_DEV_NULL_ZERO = 1u << 3,
	KC_NEED_RSEQ = 1u << 4,		/* this thread has an active rseq area */
	KC_NEED_RDPID = 1u << 5,	/* x86 RDPID (CPUID 7.0:ECX[22]) */
	KC_NEED_RDTSCP = 1u << 6,	/* x86 RDTSCP (CPUID 80000001H:EDX[27]) */
	KC_NEED_X86_CPUNODE = 1u << 7,	/* LSL of Linux's per-CPU GDT entry works */
};

struct kc_bench {
	const char *suite;
	const char *name;
	const char *summary;
	kc_bench_fn fn;
	unsigned int needs;	/* enum kc_need bits */
};

extern const struct kc_bench kc_benches[];	/* ends with {NULL} */
/* NULL when the machine has all that b needs, else the first reason. */
const char *kc_bench_unmet(const struct kc_bench *b);
const char *kc_need_names(unsigned int needs, char *buf, size_t len);

/* --------------------------------------------------------------- measure */

struct kc_method {
	int samples;
	double min_batch_ms;
	double warmup_ms;
	int cpu;		/* -1: choose */
};

struct kc_result {
	int status;
	char reason[200];
	int cpu;
	uint64_t iters;
	int n;
	double *ns;		/* n samples, ns/op */
	double *ticks;		/* n samples, ticks/op */
	double overhead_ns, overhead_ticks;
	bool overhead_subtracted;
	char overhead_why[200];
	uint64_t counter_total[KC_EV_COUNT];
	bool counter_scaled[KC_EV_COUNT];
	int *disturbed;		/* indices */
	int n_disturbed;
	double elapsed_s;
	int threads;		/* threads that each ran iters per sample */
	int *thread_cpu;	/* threads entries */
	double throughput;	/* ops/s of all threads: median, before subtraction */
	bool counts_aborts;
	uint64_t aborts;	/* rseq aborts retried over all samples */
};

/* Pin the calling thread; cpu < 0 picks one.  Returns the CPU or -errno. */
int kc_pin_cpu(int cpu);
/* One benchmark's measurement in progress (see measure.c). */
struct kc_measure {
	const struct kc_bench *b;
	const struct kc_method *m;
	const struct kc_timer *t;
	struct kc_result *r;
	struct kc_bench_ctx c;
	int status;
	uint64_t elapsed_ns;
};

int kc_measure_prepare(struct kc_measure *ms, const struct kc_bench *b,
		       const struct kc_method *m, const struct kc_timer *t,
		       const struct kc_counters *ctr, int cpu, struct kc_result *r);
int kc_measure_sample(struct kc_measure *ms, int s);
void kc_measure_finish(struct kc_measure *ms);
void kc_measure(const struct kc_bench *b, const struct kc_method *m,
		const struct kc_timer *t, const struct kc_counters *ctr,
		int cpu, struct kc_result *r);
void kc_result_free(struct kc_result *r);
struct kc_json;
/* The result keys of multi-threaded and rseq benchmarks (threads,
 * thread_cpus, throughput_ops_per_s, aborts_per_million), for main.c. */
void kc_result_write_extra(struct kc_json *j, const struct kc_result *r);
/* The same for the text table: "" or " [2 threads on 1,0: ...]" (static buffer). */
const char *kc_result_text_extra(const struct kc_result *r);
double kc_median(const double *v, int n);

/* ------------------------------------------------------------------ json */

struct kc_json {
	FILE *f;
	bool text;		/* readable "key: value" rendering */
	int depth;
	bool need_comma[16];
	bool in_array[16];
};

void kc_json_begin(struct kc_json *j, FILE *f);
void kc_json_begin_text(struct kc_json *j, FILE *f);
void kc_json_obj(struct kc_json *j, const char *key);	/* key NULL in arrays */
void kc_json_obj_end(struct kc_json *j);
void kc_json_arr(struct kc_json *j, const char *key);
void kc_json_arr_end(struct kc_json *j);
void kc_json_str(struct kc_json *j, const char *key, const char *v); /* NULL → null */
void kc_json_int(struct kc_json *j, const char *key, long long v);
void kc_json_uint(struct kc_json *j, const char *key, unsigned long long v);
void kc_json_num(struct kc_json *j, const char *key, double v);	/* NaN → null */
void kc_json_bool(struct kc_json *j, const char *key, bool v);
void kc_json_null(struct kc_json *j, const char *key);
void kc_json_end(struct kc_json *j);	/* newline + flush */

/* ------------------------------------------------------------ fingerprint */

/* Write the fingerprint's fields into an open writer (JSON or text). */
void kc_fingerprint_write(struct kc_json *j, const struct kc_timer *t,
			  const struct kc_counters *c, int cpu);
/* Is IA32 emulation (int $0x80 from 64-bit) usable here?  NULL if so. */
const char *kc_probe_ia32(void);

#endif
