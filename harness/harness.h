/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of kcross-harness.  A benchmark sees none of this:
 * its API is bench/api.h, which this header includes.
 *
 *   timer.c        the cycle counter, calibrated against CLOCK_MONOTONIC_RAW
 *   counters.c     perf_event_open hardware and software counters
 *   context.c      the benchmark's context (bench/api.h): its reason, the
 *                  timed region's out-of-line parts, the planted delay
 *   threads.c      pinning and the multi-threaded batches
 *   measure.c      the method: warm up, size the batch, sample, overhead
 *   stats.c        the statistics rule (stats.h): quantiles, overhead, CI
 *   summarize.c    the `summarize` command
 *   output.c       the result record (JSON) and the readable table line
 *   registry.c     joins the suites (each bench/NAME.c defines its own)
 *   settings.c     the harness's environment forcings, validated
 *   fingerprint.c  what machine this is (first JSON record)
 *   json.c         the JSON-lines writer
 *   bench/api.h    the benchmark author's API
 *   bench/NAME.c   a suite: its benchmarks and its table of rows
 *
 * Files use each other one way only, never in a circle (a test checks:
 * tests/harness_layers.sh).
 */
#ifndef KCROSS_HARNESS_H
#define KCROSS_HARNESS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <kcross/kcross.h>

#include "bench/api.h"

/* Version of the JSON-lines format; history in docs/result-format.md. */
#define KH_RESULT_SCHEMA 2

/* ------------------------------------------------------------------ timer */

struct kh_timer {
	const char *source;	/* "tsc", "cntvct", "timebase", "clock_gettime" */
	bool cycle_counter;	/* false: CLOCK_MONOTONIC_RAW in ns */
	int invariant;		/* 1 yes, 0 no, -1 unknown */
	double hz;		/* ticks per second */
	double calib_ms;	/* length of the calibration interval */
	double calib_error_ppm;	/* disagreement of two calibrations */
	const char *why_fallback; /* why the cycle counter is not used, or NULL */
};

/* KCROSS_TIMER's valid values (kc_setting), NULL-terminated. */
extern const char *const kh_timer_setting_values[];

/*
 * Wait, if need be, so that a batch of about batch_ns starting now neither
 * begins inside nor runs into CLOCK_MONOTONIC's "second carry": from the
 * moment the clock passes a whole second until the next timer tick, every
 * read of it (the vDSO's, the kernel's) carries the second in a loop, a few
 * instructions more per read (timer.c).  Bounded: it never waits longer than
 * the batch and two ticks.
 */
void kh_clock_avoid_second_carry(uint64_t batch_ns);

/* Choose and calibrate the timer; calib_ms is each calibration interval. */
int kh_timer_init(struct kh_timer *t, double calib_ms);

/* The timer's reads (bench/api.h has them for the timed region). */
static inline uint64_t kh_timer_begin(const struct kh_timer *t)
{
	return kh_ticks_begin(t->cycle_counter);
}

static inline uint64_t kh_timer_end(const struct kh_timer *t)
{
	return kh_ticks_end(t->cycle_counter);
}

/* --------------------------------------------------------------- counters */

enum kh_event {
	KH_EV_CYCLES_U, KH_EV_CYCLES_K,
	KH_EV_INSNS_U, KH_EV_INSNS_K,
	KH_EV_BRMISS_U, KH_EV_BRMISS_K,
	KH_EV_TASK_CLOCK, KH_EV_CSW, KH_EV_MIGRATIONS, KH_EV_PAGE_FAULTS,
	KH_EV_COUNT
};
#define KH_EV_FIRST_SOFTWARE KH_EV_TASK_CLOCK

struct kh_counters {
	int group_fd[3];			/* hw user, hw kernel, software */
	int fd[KH_EV_COUNT];			/* -1 when unavailable */
	int slot[KH_EV_COUNT];			/* index within its group read */
	int errnum[KH_EV_COUNT];		/* why it could not be opened */
	int paranoid;				/* perf_event_paranoid, */
	bool paranoid_known;			/* valid only when this is true */
	bool suspended;				/* closed by kh_counters_suspend */
};

struct kh_snapshot {
	uint64_t value[KH_EV_COUNT];
	uint64_t enabled[KH_EV_COUNT];
	uint64_t running[KH_EV_COUNT];
};

extern const char *const kh_event_names[KH_EV_COUNT];
void kh_counters_open(struct kh_counters *c);
void kh_counters_close(struct kh_counters *c);
/* Close every event for KH_SUITE_NO_PERF_EVENTS (each then unavailable with
 * that reason) and wait for the kernel to drop its sched hooks; reopen.  Both
 * do nothing when already in that state. */
void kh_counters_suspend(struct kh_counters *c);
void kh_counters_resume(struct kh_counters *c);
/* The wait after closing them: the kernel drops its perf_sched_events key
 * only a second after the last event closes (it rate-limits it to HZ). */
#define KH_PERF_KEY_DELAY_MS	1100
bool kh_counter_available(const struct kh_counters *c, enum kh_event e);
const char *kh_counter_reason(const struct kh_counters *c, enum kh_event e);
void kh_counters_read(const struct kh_counters *c, struct kh_snapshot *s);

/* ------------------------------------------------------------- context */

/*
 * The harness's side of a benchmark's timed region (context.c): the timer,
 * the counters, their readings at the start and at the end, and the delay
 * KCROSS_TEST_DELAY plants at the end of each of the benchmark's batches.
 */
struct kh_timing {
	const struct kh_timer *timer;
	const struct kh_counters *counters;
	struct kh_snapshot snap[2];
	double delay_ticks;	/* per operation; 0: nothing planted */
	double planted;		/* the same in this batch, or 0 (kh_bench_ctx_batch) */
	int window;		/* KH_WINDOW_*: the batch is a profile window (profile.c) */
};

/* Zero c and tie it to tm, for a row with parameter arg whose operations
 * each get delay_ns more (0: none; KCROSS_TEST_DELAY). */
void kh_bench_ctx_init(struct kh_bench_ctx *c, struct kh_timing *tm, const struct kh_timer *t,
		       const struct kh_counters *ctr, long arg, double delay_ns);
/* Ready c for a batch of iters operations: the reports reset; `plant`: the
 * timing's delay is planted at the batch's end (the benchmark's batches,
 * never the empty loop's). */
void kh_bench_ctx_batch(struct kh_bench_ctx *c, uint64_t iters, bool plant);

/*
 * The delay is the timer spinning at the end of the timed region, before its
 * end read, for iters times the delay: one branch per batch, nothing per
 * operation.  In a multi-threaded batch it is the calling thread's (after
 * the last thread finished), so it adds the delay to ns/op (wall / iters
 * per thread) as it does in one thread.  At most KH_DELAY_MAX_NS.
 */
#define KH_DELAY_MAX_NS 1e6

/* -------------------------------------------------------------- registry */

/* Every benchmark of every suite, in order, suite filled in; ends with a
 * row whose name is NULL.  `list` and `run` both walk it. */
const struct kh_bench *kh_registry(void);
/* The KH_SUITE_* flags of b's suite. */
unsigned int kh_bench_suite_flags(const struct kh_bench *b);
/* Does glob (fnmatch) match b's name or suite/name? */
bool kh_bench_matches(const struct kh_bench *b, const char *glob);
/* NULL when the machine has all that b needs, else the first reason. */
const char *kh_bench_unmet(const struct kh_bench *b);
const char *kh_need_names(unsigned int needs, char *buf, size_t len);

/* --------------------------------------------------------------- measure */

struct kh_method {
	int samples;
	double min_batch_ms;
	double warmup_ms;
	int cpu;		/* -1: choose */
	uint64_t batch_multiple;	/* batch iterations rounded up to a multiple
				 * of this (1: none); see measure.c size_batch */
	const char *force_fail;	/* KCROSS_TEST_FAIL: a glob of benchmarks whose
				 * check is forced to fail (tests), or NULL */
	const char *delay_glob;	/* KCROSS_TEST_DELAY: a glob of benchmarks each of
				 * whose operations takes delay_ns longer (tests),
				 * or NULL */
	double delay_ns;
};

/* The reason of a check failed on purpose (KCROSS_TEST_FAIL, measure.c). */
#define KH_FORCED_FAILURE "forced failure (KCROSS_TEST_FAIL, for tests)"

/* Something the harness noticed about a result that a reader must weigh
 * (written as `flags`; docs/result-format.md lists the names). */
#define KH_MAX_FLAGS 4
struct kh_flag {
	const char *flag;	/* a fixed name, e.g. "batches-disagree" */
	char detail[200];	/* the figures behind it, in words */
};

struct kh_result {
	int status;
	char reason[200];
	int cpu;
	uint64_t iters;
	int n;
	double *ns;		/* n samples, ns/op, raw (never corrected) */
	double *ticks;		/* n samples, ticks/op, raw */
	double *oh_ns;		/* n samples of the empty loop, ns/op */
	double *oh_ticks;	/* the same in ticks/op */
	uint64_t counter_total[KH_EV_COUNT];
	bool counter_scaled[KH_EV_COUNT];
	int *disturbed;		/* indices */
	int n_disturbed;
	double elapsed_s;
	int threads;		/* threads that each ran iters per sample */
	int *thread_cpu;	/* threads entries */
	double throughput;	/* ops/s of all threads, from the raw median */
	bool counts_aborts;
	uint64_t aborts;	/* rseq aborts retried over all samples */
	double switches_per_op;	/* declared per iteration, 0: not declared */
	bool counts_switches;
	uint64_t switches;	/* counted over all samples, all its threads */
	int n_flags;
	struct kh_flag flags[KH_MAX_FLAGS];
};

/* Add a flag to r (ignored beyond KH_MAX_FLAGS). */
void kh_result_flag(struct kh_result *r, const char *flag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Declared and counted context switches per iteration (batches of iters):
 * they disagree when they differ by more than KH_SWITCH_TOLERANCE of the
 * declared figure or, in small batches, KH_SWITCH_SLACK switches per batch
 * (the reasoning is in measure.c).  Returns true and writes both figures
 * into detail (len bytes) when they disagree.
 */
#define KH_SWITCH_TOLERANCE 0.10
#define KH_SWITCH_SLACK 2.0
bool kh_switches_mismatch(double declared, double counted, uint64_t iters, char *detail,
			  size_t len);

/* Pin the calling thread; cpu < 0 picks one.  Returns the CPU or -errno. */
int kh_pin_cpu(int cpu);
/* One benchmark's measurement in progress (see measure.c). */
struct kh_measure {
	const struct kh_bench *b;
	const struct kh_method *m;
	const struct kh_timer *t;
	struct kh_result *r;
	struct kh_bench_ctx c;
	struct kh_timing timing;
	int status;
	uint64_t elapsed_ns;
	uint64_t batches_ns;	/* the samples' batches so far */
};

int kh_measure_prepare(struct kh_measure *ms, const struct kh_bench *b,
		       const struct kh_method *m, const struct kh_timer *t,
		       const struct kh_counters *ctr, int cpu, struct kh_result *r);
int kh_measure_sample(struct kh_measure *ms, int s);
void kh_measure_finish(struct kh_measure *ms);
void kh_measure(const struct kh_bench *b, const struct kh_method *m,
		const struct kh_timer *t, const struct kh_counters *ctr,
		int cpu, struct kh_result *r);
void kh_result_free(struct kh_result *r);

/* ---------------------------------------------------------------- output */

struct kh_json;
/* Open a JSON-lines record on stdout: its "type" and "schema" keys. */
void kh_record_begin(struct kh_json *j, const char *type);
/* One `result` record (JSON lines) or one line of the readable table. */
void kh_result_emit_json(const struct kh_bench *b, const struct kh_result *r,
			 const struct kh_timer *t, const struct kh_counters *ctr);
/* --result-lines UNIT: the one-line form of a result (output.c). */
void kh_result_print_line(const struct kh_bench *b, const struct kh_result *r, const char *unit);
void kh_result_print_text(const struct kh_bench *b, const struct kh_result *r,
			  const struct kh_timer *t);

/* ------------------------------------------------------------------ json */

/*
 * One record (an object) is built in memory and written with one write(2)
 * by kh_json_end().  Strings become valid UTF-8: each byte that does not
 * begin a well-formed sequence is replaced by U+FFFD, control characters are
 * escaped (json.c).
 */
#define KH_JSON_MAX_DEPTH 16	/* record object included */

struct kh_json {
	FILE *f;
	bool text;		/* readable "key: value" rendering */
	int depth;
	bool need_comma[KH_JSON_MAX_DEPTH];
	bool in_array[KH_JSON_MAX_DEPTH];
	char *buf;		/* the record so far */
	size_t len, cap;
	int err;		/* errno of the first failure building it */
};

void kh_json_begin(struct kh_json *j, FILE *f);
void kh_json_begin_text(struct kh_json *j, FILE *f);
void kh_json_obj(struct kh_json *j, const char *key);	/* key NULL in arrays */
void kh_json_obj_end(struct kh_json *j);
void kh_json_arr(struct kh_json *j, const char *key);
void kh_json_arr_end(struct kh_json *j);
void kh_json_str(struct kh_json *j, const char *key, const char *v); /* NULL → null */
void kh_json_int(struct kh_json *j, const char *key, long long v);
void kh_json_uint(struct kh_json *j, const char *key, unsigned long long v);
void kh_json_num(struct kh_json *j, const char *key, double v);	/* NaN, ±Inf → null */
/* A finite number as kh_json_num writes it, read back: what a reader of the record sees. */
double kh_json_num_as_written(double v);
void kh_json_bool(struct kh_json *j, const char *key, bool v);
void kh_json_null(struct kh_json *j, const char *key);
/* Close the record, write it (one write(2)) and free it: 0, or -1 with errno
 * set when it could not be built or written (the stream's ferror() is then
 * set too, except for ENOMEM).  Unbalanced nesting aborts (a bug). */
int kh_json_end(struct kh_json *j);
/* 0, or the errno of the first record of this process that kh_json_end()
 * could not write: sticky, for a check before exit. */
int kh_json_error(void);
/* Length of the well-formed UTF-8 sequence starting at NUL-terminated p,
 * 0 when p[0] does not begin one. */
size_t kh_utf8_len(const unsigned char *p);

/* ------------------------------------------------------------ fingerprint */

/* Write the fingerprint's fields into an open writer (JSON or text). */
void kh_fingerprint_write(struct kh_json *j, const struct kh_timer *t,
			  const struct kh_counters *c, int cpu);
/* --------------------------------------------------------------- settings */

/*
 * The harness's own environment forcings (settings.c; the library's are
 * kc_library_settings), NULL-terminated: a name, its valid values (NULL:
 * any non-empty value) and a check of a value no list can hold (NULL: none;
 * false with the error line in err).  The fingerprint's `forced` object
 * records these and the library's, each validated value or null; a forcing
 * added after schema 2's first version is recorded only when set
 * (absent_when_unset), so that a run without it keeps the fingerprint, and
 * the machine identity, of the runs stored before it existed.
 */
struct kh_setting {
	const char *name;
	const char *const *valid;
	bool (*check)(const char *value, char *err, size_t len);
	bool absent_when_unset;
};
extern const struct kh_setting kh_settings[];
/* How many of the library's forcings (the first of kc_library_settings) date
 * from schema 2's first version, KCROSS_SYSCALL and KCROSS_VDSO: recorded
 * null when unset.  A later one (KCROSS_RSEQ) is recorded only when set. */
#define KH_LIBRARY_SETTINGS_ALWAYS_RECORDED 2

/* Profile windows for the labs' plugin (profile.c; KCROSS_PROFILE). */
enum { KH_WINDOW_NONE, KH_WINDOW_SAMPLE, KH_WINDOW_EMPTY };
void kh_profile_init(const char *mode);	/* KCROSS_PROFILE's value, or NULL */
void kh_profile_finish(void);
bool kh_profile_on(void);
void kh_profile_open(int window);
void kh_profile_close(void);
void kh_profile_reported(void);
/* s's validated value, or NULL when it is unset, empty or invalid (then,
 * with err not NULL, the error line in err). */
const char *kh_setting_value(const struct kh_setting *s, char *err, size_t len);
/* NULL when every forcing, the library's and the harness's, is valid or
 * unset; else the first one's error line "NAME=value: ..." (a static
 * buffer), for main.c to refuse the run with. */
const char *kh_settings_error(void);
const char *kh_setting_named(const char *name);
/* The forcings the method obeys, into m: force_fail, delay_glob, delay_ns
 * (call after kh_settings_error() said all are valid). */
void kh_settings_method(struct kh_method *m);
/*
 * KCROSS_RSEQ=off where glibc registered rseq (it does so before main(),
 * unless its tunable glibc.pthread.rseq=0 was in GLIBC_TUNABLES at process
 * start): execute this program (argv) again, once, with that tunable added;
 * returns only when nothing needs doing (NULL) or it cannot be done (the
 * error line: glibc registered although the tunable is set, or the exec
 * failed).  Call after kh_settings_error() said all are valid, before
 * anything else runs.
 */
const char *kh_settings_exec_without_rseq(char **argv);

#endif
