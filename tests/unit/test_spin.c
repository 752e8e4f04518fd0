/* SPDX-License-Identifier: MIT */
/*
 * The spin suite's parts that this machine's rows may never reach (it has
 * no SMT siblings): thread_siblings_list parsing, and the sibling rows'
 * spinner and counting loop, run here against any other CPU this process
 * may use (not a sibling: the figures mean nothing, the mechanics are what
 * is tested: the spinner starts, stops, and the loop counts exactly).
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "harness.h"

#define kh_suite_spin test_suite_spin
#include "bench/spin.c"
#undef kh_suite_spin

static void parse(const char *list, int cpu, const cpu_set_t *allowed, int want,
		  const char *why_has)
{
	char why[200] = "";
	int got = sibling_in_list(cpu, list, allowed, why, sizeof(why));

	tap_ok(got == want && (want >= 0 || strstr(why, why_has)),
	       "CPU %d in \"%s\": sibling %d (want %d) %s", cpu, list, got, want, why);
}

int main(void)
{
	static struct kh_timer timer;
	static struct kh_counters counters;
	static struct kh_timing timing;
	struct kh_bench_ctx *c = calloc(1, sizeof(*c));
	cpu_set_t all, none;
	int self, other = -1;

	CPU_ZERO(&all);
	for (int i = 0; i < 16; i++)
		CPU_SET(i, &all);
	CPU_ZERO(&none);
	CPU_SET(0, &none);
	parse("0-1", 0, &all, 1, "");
	parse("0-1", 1, &all, 0, "");
	parse("0,4", 4, &all, 0, "");
	parse("2-3,8-9", 3, &all, 2, "");
	parse("8-11", 10, &all, 8, "");
	parse("3,11", 3, &all, 11, "");
	parse("1", 1, &all, -1, "CPU 1 has no SMT sibling (thread_siblings_list: 1)");
	parse("", 1, &all, -1, "no SMT sibling (thread_siblings_list: empty)");
	parse("0-3", 0, &none, -1, "CPU 0's SMT sibling(s) (0-3) are outside this process's");

	/* The spinner and counting loop, with each of this arch's hints. */
	if ((self = kh_pin_cpu(-1)) < 0)
		tap_diag("cannot pin; the loops run unpinned");
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, kh_allowed_cpus()) && i != self) {
			other = i;
			break;
		}
	if (other < 0) {
		tap_diag("one CPU allowed: the spinner shares it with the counting loop");
		other = self < 0 ? 0 : self;
	}
	kh_timer_init(&timer, 5);
	kh_counters_open(&counters);
	for (int h = 0; h < H_COUNT; h++) {
		kh_bench_ctx_init(c, &timing, &timer, &counters, h, 0);
		kh_bench_ctx_batch(c, 100000, false);
		tap_ok(sibling_run(c, (enum hint)h, other) == KH_OK,
		       "counting loop beside a spinner on CPU %d with %s: %s", other,
		       hint_text[h], c->reason[0] ? c->reason : "ok");
	}
	kh_counters_close(&counters);
	free(c);
	return tap_done();
}
