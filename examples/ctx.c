/* SPDX-License-Identifier: MIT */
/*
 * examples/ctx.c - user-level context switches and the cooperative scheduler.
 *
 *   cc -o ctx ctx.c $(pkg-config --cflags --libs --static kcross)
 *
 * A generator: a context that produces the Fibonacci numbers one at a time,
 * switching back to main after each, on a stack the library maps (with a
 * guard page).  When its function returns, the context switches to its
 * link (main here) and kc_ctx_done() says so.  Then three kc_sched tasks
 * take turns with kc_sched_yield.
 */
#include <stdio.h>
#include <string.h>

#include <kcross/ctx.h>

static struct kc_ctx main_ctx, gen_ctx;
static unsigned long value;

static void fibonacci(void *arg)
{
	unsigned long a = 0, b = 1, n = *(unsigned long *)arg;

	while (n--) {
		unsigned long t = a + b;

		value = a;
		kc_ctx_switch(&gen_ctx, &main_ctx);	/* "yield value" */
		a = b;
		b = t;
	}
}							/* returns: back to main, done */

static struct kc_sched sched;

static void task(void *arg)
{
	const char *name = arg;
	int round;

	for (round = 1; round <= 2; round++) {
		printf(" %s%d", name, round);
		kc_sched_yield(&sched);
	}
}

int main(void)
{
	unsigned long count = 10, sum = 0;
	int rc;

	rc = kc_ctx_make(&gen_ctx, NULL, 0, fibonacci, &count, &main_ctx);
	if (rc) {
		fprintf(stderr, "ERROR: kc_ctx_make: %s\n", strerror(-rc));
		return 1;
	}
	printf("fibonacci:");
	for (;;) {
		kc_ctx_switch(&main_ctx, &gen_ctx);
		if (kc_ctx_done(&gen_ctx))
			break;
		printf(" %lu", value);
		sum += value;
	}
	printf("\n");
	kc_ctx_free(&gen_ctx);

	kc_sched_init(&sched);
	printf("tasks:");
	kc_sched_spawn(&sched, task, "a", 0);
	kc_sched_spawn(&sched, task, "b", 0);
	kc_sched_spawn(&sched, task, "c", 0);
	rc = kc_sched_run(&sched);
	printf("\n");
	kc_sched_destroy(&sched);

	if (sum != 88 || rc != 0) {	/* 0+1+1+2+3+5+8+13+21+34 */
		fprintf(stderr, "ERROR: sum %lu (want 88), run %d\n", sum, rc);
		return 1;
	}
	printf("ctx example: ok\n");
	return 0;
}
