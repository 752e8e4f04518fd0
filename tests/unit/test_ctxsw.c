/* SPDX-License-Identifier: MIT */
/*
 * Declared and counted context switches (suite ctxsw, harness/measure.c):
 *
 *   compare    kh_switches_mismatch: within 10% (or 2 switches per batch in
 *              small batches) agrees, beyond disagrees, with both figures;
 *   rows       every ctxsw row, measured through the method, is skipped with
 *              a reason or declares its switches per iteration and counts
 *              them in all its threads; same-CPU rows agree with their
 *              declaration (a blocking round trip on one CPU must switch);
 *              child processes are reaped;
 *   /proc      the same with the harness's perf counters unavailable (the
 *              /proc/self/task/TID/status path for the measuring thread);
 *   wrong      a row that declares 1 switch per round trip (the classic
 *              mistake; it makes 2) is flagged "counts-mismatch";
 *   direct     the pipe and eventfd rows' round trips are system calls
 *              (kc_sys3), not glibc's read() and write(), which are
 *              cancellation points: in a process that has had a second
 *              thread they cost two atomic operations each, on every arch
 *              (this test links with --wrap=read,--wrap=write and counts
 *              the calls of this process: the handshake's few, not the
 *              loop's).
 *
 * Whatever the scheduling (a loaded machine, a guest, the sanitizers): another
 * task's preemption only adds switches, one each, so a row that declares its
 * switches rightly agrees in a batch nothing preempted, and a row that
 * declares too few never does.  A same-CPU row is measured again until it
 * agrees, for HANG_S seconds at most (a guard against a hang, not a limit
 * on the machine's load).  The wrong declaration is measured in batches of at
 * least LIAR_BATCH round trips: in a batch of a few, the count's slack of
 * KH_SWITCH_SLACK switches per batch covers a whole switch per iteration (a
 * busy machine makes the sized batches that small), and nothing can be
 * flagged.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "tap.h"
#include "harness.h"

/* --wrap=read,--wrap=write (CMakeLists.txt): every call of glibc's read()
 * and write() from the harness's code in this process, counted. */
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_write(int fd, const void *buf, size_t n);
static long libc_rw;

ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	__atomic_add_fetch(&libc_rw, 1, __ATOMIC_RELAXED);
	return __real_read(fd, buf, n);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	__atomic_add_fetch(&libc_rw, 1, __ATOMIC_RELAXED);
	return __real_write(fd, buf, n);
}

#define DIRECT_ITERS 200	/* round trips of the batch test_direct runs */

#define HANG_S 60.0		/* a same-CPU row's attempts, at most (ctest: 120 s) */
#define LIAR_BATCH 100		/* round trips per batch, at least: 2/100 < 10% */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static void test_compare(void)
{
	char d[200] = "";

	tap_ok(!kh_switches_mismatch(2, 2, 1000, d, sizeof(d)), "2 declared, 2 counted: agree");
	tap_ok(!kh_switches_mismatch(2, 2.19, 1000, d, sizeof(d)), "2 declared, 2.19: within 10%%");
	tap_ok(!kh_switches_mismatch(2, 1.81, 1000, d, sizeof(d)), "2 declared, 1.81: within 10%%");
	tap_ok(kh_switches_mismatch(2, 2.21, 1000, d, sizeof(d)), "2 declared, 2.21: beyond");
	tap_ok(strstr(d, "declared 2 ") && strstr(d, "counted 2.21"), "detail has both: %s", d);
	tap_ok(kh_switches_mismatch(1, 2, 1000, d, sizeof(d)), "1 declared, 2 counted: flagged");
	tap_ok(kh_switches_mismatch(2, 1, 1000, d, sizeof(d)), "2 declared, 1 counted: flagged");
	tap_ok(!kh_switches_mismatch(2, 1.7, 5, d, sizeof(d)),
	       "batches of 5: 1.5 switches short per batch is within the slack of 2");
	tap_ok(kh_switches_mismatch(2, 1.7, 100, d, sizeof(d)), "batches of 100: 1.7 flagged");
	tap_ok(kh_switches_mismatch(2, NAN, 1000, d, sizeof(d)), "NaN count flagged");
	tap_ok(kh_switches_mismatch(0, 0, 1000, d, sizeof(d)), "nothing declared: no agreement");
}

/* The registry row `name`'s function, for the wrong declaration. */
static kh_bench_fn real_fn;

static int declares_one(struct kh_bench_ctx *c)
{
	int st = real_fn(c);

	c->switches_per_op = 1;
	return st;
}

static int measure(const struct kh_bench *b, const struct kh_counters *ctr,
		   const struct kh_timer *t, uint64_t batch_multiple, struct kh_result *r)
{
	struct kh_method m = { .samples = 3, .min_batch_ms = 1, .warmup_ms = 0, .cpu = -1,
			       .batch_multiple = batch_multiple };

	kh_measure(b, &m, t, ctr, kh_pin_cpu(-1), r);
	return r->status;
}

static double counted_per_op(const struct kh_result *r)
{
	return r->iters ? (double)r->switches / ((double)r->iters * r->n) : 0;
}

static void test_rows(const struct kh_counters *ctr, const struct kh_timer *t,
		      const char *how)
{
	int n = 0;

	for (const struct kh_bench *b = kh_registry(); b->name; b++) {
		bool same_cpu = !strstr(b->name, "across"), agree = false;
		const char *detail = "";
		double until = now_s() + HANG_S;
		struct kh_result r;
		int st = KH_FAIL, attempts = 0;

		if (strcmp(b->suite, "ctxsw"))
			continue;
		n++;
		for (;;) {
			st = measure(b, ctr, t, 1, &r);
			attempts++;
			agree = st != KH_OK || !has_flag(&r, "counts-mismatch", &detail);
			if (agree || !same_cpu || now_s() > until)
				break;
			if (attempts <= 3)	/* the first few: what preempted looks like */
				tap_diag("%s attempt %d: %s", b->name, attempts, detail);
			kh_result_free(&r);
		}
		if (st == KH_SKIP) {
			tap_ok(r.reason[0] != 0, "%s %s: skipped with a reason: %s", how, b->name,
			       r.reason);
		} else {
			double counted = counted_per_op(&r);

			tap_ok(st == KH_OK, "%s %s: ok (%s)", how, b->name, r.reason);
			tap_ok(r.switches_per_op > 0 && r.counts_switches && r.switches > 0,
			       "%s %s: declares %g switches per iteration, counted %.3g", how, b->name,
			       r.switches_per_op, counted);
			if (same_cpu)
				tap_ok(agree, "%s %s: same CPU, the count agrees (%s; attempt %d)",
				       how, b->name, agree ? "yes" : detail, attempts);
		}
		kh_result_free(&r);
	}
	tap_ok(n >= 9, "%s: %d ctxsw rows", how, n);
	errno = 0;
	tap_ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
	       "%s: every partner process was reaped", how);
}

static void test_wrong(const struct kh_counters *ctr, const struct kh_timer *t)
{
	struct kh_bench liar = { NULL };
	const char *detail = "";
	struct kh_result r;
	bool flagged;

	for (const struct kh_bench *b = kh_registry(); b->name; b++)
		if (!strcmp(b->suite, "ctxsw") && !strcmp(b->name, "pipe-threads-same-cpu"))
			liar = *b;
	if (!tap_ok(liar.fn != NULL, "ctxsw/pipe-threads-same-cpu exists"))
		return;
	real_fn = liar.fn;
	liar.fn = declares_one;
	tap_ok(measure(&liar, ctr, t, LIAR_BATCH, &r) == KH_OK,
	       "declared 1 per round trip: measured (%s)", r.reason);
	flagged = has_flag(&r, "counts-mismatch", &detail);
	tap_ok(flagged, "declared 1, flag counts-mismatch: %s", flagged ? detail : "");
	if (!flagged)
		tap_diag("counted %.4g per round trip in batches of %llu", counted_per_op(&r),
			 (unsigned long long)r.iters);
	kh_result_free(&r);
}

/* One batch of each pipe and eventfd row: the calls of glibc's read() and
 * write() it made in this process (measuring side and, for a thread row,
 * the partner) are the few of the handshake, none per round trip. */
static void test_direct(const struct kh_counters *ctr, const struct kh_timer *t)
{
	static struct kh_bench_ctx c;
	struct kh_timing timing;
	int rows = 0;

	for (const struct kh_bench *b = kh_registry(); b->name; b++) {
		long before, calls;
		int st;

		if (strcmp(b->suite, "ctxsw") || (strncmp(b->name, "pipe-", 5) &&
						   strncmp(b->name, "eventfd-", 8)))
			continue;
		rows++;
		kh_bench_ctx_init(&c, &timing, t, ctr, b->arg, 0);
		kh_bench_ctx_batch(&c, DIRECT_ITERS, false);
		before = __atomic_load_n(&libc_rw, __ATOMIC_RELAXED);
		st = b->fn(&c);
		calls = __atomic_load_n(&libc_rw, __ATOMIC_RELAXED) - before;
		if (st == KH_SKIP) {
			tap_skip("%s: %s", b->name, c.reason);
			continue;
		}
		tap_ok(st == KH_OK && calls < DIRECT_ITERS,
		       "%s: %ld calls of glibc's read()/write() for %d round trips: the loop's are "
		       "system calls (%s)", b->name, calls, DIRECT_ITERS,
		       st == KH_OK ? "ok" : c.reason);
	}
	tap_ok(rows >= 6, "%d pipe and eventfd rows", rows);
}

int main(void)
{
	struct kh_counters ctr, none;
	struct kh_timer t;

	test_compare();
	kh_pin_cpu(-1);
	kh_timer_init(&t, 5);
	kh_counters_open(&ctr);
	test_rows(&ctr, &t, kh_counter_available(&ctr, KH_EV_CSW) ? "perf" : "/proc");
	test_wrong(&ctr, &t);
	test_direct(&ctr, &t);
	/* No perf at all: the measuring thread is counted through /proc too. */
	memset(&none, 0, sizeof(none));
	for (int g = 0; g < 3; g++)
		none.group_fd[g] = -1;
	for (int e = 0; e < KH_EV_COUNT; e++) {
		none.fd[e] = -1;
		none.errnum[e] = ENOSYS;
		none.slot[e] = -1;
	}
	if (kh_counter_available(&ctr, KH_EV_CSW))
		test_rows(&none, &t, "no-perf");
	kh_counters_close(&ctr);
	return tap_done();
}
