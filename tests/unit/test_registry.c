/* SPDX-License-Identifier: MIT */
/*
 * The benchmark registry (harness/registry.c joining the suites that each
 * harness/bench/NAME.c defines):
 *
 *   names      every row has a suite, a name and a summary; suite/name is
 *              unique (stored results key on it), a suite name is defined
 *              by one table only; the percpu-scaling names
 *              that results were stored under still exist;
 *   arches     a row only another arch can run is not registered here (it
 *              would be skipped in every run, saying nothing of this machine);
 *   variants   rows sharing a function differ in arg ((fn, arg) unique),
 *              and such a row's first call (setup + check) reads its arg
 *              through kh_arg(): a row whose arg is ignored would measure
 *              the same thing as its sibling under another name.
 *
 * A row this machine cannot run (unmet needs, or the benchmark skips before
 * reading its arg) is reported as skipped with the reason.
 */
#include <string.h>

#include "tap.h"
#include "harness.h"

static const char *const stored_names[] = {
	"percpu-scaling/counter-atomic-x1", "percpu-scaling/counter-atomic-xN",
	"percpu-scaling/counter-atomic-x2N", "percpu-scaling/counter-rseq-x1",
	"percpu-scaling/counter-rseq-xN", "percpu-scaling/counter-rseq-x2N",
	"percpu-scaling/counter-getcpu-atomic-x1", "percpu-scaling/counter-getcpu-atomic-xN",
	"percpu-scaling/counter-getcpu-atomic-x2N", "cpuid/rseq-load",
#if defined(KC_ARCH_X86_64)
	"cpuid/rdpid",
#endif
	"cpuid/sched_getcpu", "syscall/getppid-inline", NULL,
};

/* Rows that only some arches can run: none of them is listed elsewhere. */
static const char *const other_arches_rows[] = {
#if !defined(KC_ARCH_X86_64)
	"syscall/getppid-int80", "cpuid/rdpid", "cpuid/rdtscp", "cpuid/lsl", "spin/hint-pause",
	"spin/sibling-pause",
#endif
#if !defined(KC_ARCH_AARCH64)
	"spin/hint-yield", "spin/hint-isb", "spin/hint-sevl-wfe", "spin/sibling-yield",
	"spin/sibling-isb", "spin/sibling-sevl-wfe",
#endif
#if !defined(KC_ARCH_PPC64LE)
	"spin/hint-or27", "spin/hint-or1", "spin/hint-or31", "spin/hint-or2", "spin/sibling-or27",
	"spin/sibling-or1", "spin/sibling-or31", "spin/sibling-or2",
#endif
#if !KC_HAVE_SYSCALL_ALT
	"syscall/getppid-inline-alt",
#endif
	NULL,
};

static bool registered(const struct kh_bench *all, const char *suite_name)
{
	for (const struct kh_bench *b = all; b->name; b++)
		if (kh_bench_matches(b, suite_name) && strchr(suite_name, '/'))
			return true;
	return false;
}

static bool shares_fn(const struct kh_bench *all, const struct kh_bench *b)
{
	for (const struct kh_bench *o = all; o->name; o++)
		if (o != b && o->fn == b->fn)
			return true;
	return false;
}

int main(void)
{
	const struct kh_bench *all = kh_registry();
	struct kh_timer t;
	struct kh_timing timing;
	struct kh_counters ctr;
	int n = 0, dups = 0, same = 0;

	for (const struct kh_bench *b = all; b->name; b++) {
		n++;
		if (!b->suite || !*b->suite || !*b->name || !b->summary || !*b->summary || !b->fn)
			tap_ok(0, "row %d (%s/%s) lacks a suite, name, summary or function", n,
			       b->suite ? b->suite : "?", b->name);
		for (const struct kh_bench *o = all; o < b; o++) {
			if (!strcmp(o->suite, b->suite) && !strcmp(o->name, b->name)) {
				tap_ok(0, "%s/%s registered twice", b->suite, b->name);
				dups++;
			}
			if (o->fn == b->fn && o->arg == b->arg) {
				tap_ok(0, "%s/%s and %s/%s: same function, same arg %ld", o->suite,
				       o->name, b->suite, b->name, b->arg);
				same++;
			}
		}
	}
	/* One table per suite name: its rows form one run in the joined list. */
	for (const struct kh_bench *b = all; b->name; b++)
		if (b > all && strcmp(b[-1].suite, b->suite))
			for (const struct kh_bench *o = all; o < b - 1; o++)
				if (!strcmp(o->suite, b->suite)) {
					tap_ok(0, "suite %s is defined twice", b->suite);
					dups++;
					break;
				}
	tap_ok(n > 0, "the registry lists %d benchmarks", n);
	tap_ok(dups == 0, "suite/name unique (%d duplicates)", dups);
	tap_ok(same == 0, "(function, arg) unique (%d pairs alike)", same);
	for (const char *const *s = stored_names; *s; s++)
		tap_ok(registered(all, *s), "%s is still registered", *s);
	for (const char *const *s = other_arches_rows; *s; s++)
		tap_ok(!registered(all, *s), "%s, a row of other arches, is not registered on %s",
		       *s, KC_ARCH_NAME);

	/* Every row that is a variant reads its arg on its first call. */
	if (kh_pin_cpu(-1) < 0)
		tap_diag("cannot pin; the cpuid checks run unpinned");
	kh_timer_init(&t, 5);
	kh_counters_open(&ctr);
	for (const struct kh_bench *b = all; b->name; b++) {
		struct kh_bench_ctx *c;
		const char *unmet;
		int st;

		if (!b->arg && !shares_fn(all, b))
			continue;
		if ((unmet = kh_bench_unmet(b))) {
			tap_skip("%s/%s: %s", b->suite, b->name, unmet);
			continue;
		}
		c = malloc(sizeof(*c));	/* large: thread_cpu[KH_MAX_THREADS] */
		kh_bench_ctx_init(c, &timing, &t, &ctr, b->arg, 0);
		kh_bench_ctx_batch(c, 1, false);
		st = b->fn(c);
		if (st == KH_FAIL)
			tap_ok(0, "%s/%s: its check failed: %s", b->suite, b->name, c->reason);
		else if (st == KH_SKIP && !c->arg_read)
			tap_skip("%s/%s: %s", b->suite, b->name, c->reason);
		else
			tap_ok(c->arg_read, "%s/%s reads its arg (%ld)", b->suite, b->name, b->arg);
		free(c);
	}
	kh_counters_close(&ctr);
	return tap_done();
}
