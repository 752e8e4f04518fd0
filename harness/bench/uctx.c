/* SPDX-License-Identifier: MIT */
/*
 * The uctx suite: a user-level context switch, kcross's own (kc_ctx, and
 * the cooperative scheduler on top of it) against the floor and what others
 * offer.  Every row's operation is a round trip between two contexts on one
 * thread, A (the harness's loop) -> B -> A: two switches, declared so that
 * the result also reads per switch.
 *
 *   kc_ctx           kc_ctx_switch() there and back (<kcross/ctx.h>)
 *   kc_ctx-shared-fpenv  the same between two contexts that share the
 *                    thread's floating-point environment (the opt-in,
 *                    kc_ctx_share_fpenv: no FP control state switched)
 *   kc_sched-yield   two kc_sched tasks yielding to each other
 *   floor            the fewest instructions that switch stacks and keep the
 *                    ABI's callee-saved registers (bench/uctx_floor-ARCH.S),
 *                    resuming the other context with an indirect jump
 *   floor-ret        the same resuming with a return: one instruction fewer,
 *                    but the return-stack predictor misses it every time
 *   swapcontext      glibc's ucontext (it saves the signal mask: a syscall)
 *   boost-fcontext   Boost.Context's jump_fcontext, when the build found
 *                    libboost-context-dev (KCROSS_HAVE_BOOST_CONTEXT, CMake)
 *
 * B counts its runs: after the loop the count must equal the round trips,
 * so a switch that went elsewhere (or nowhere) fails the check.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "bench/bench.h"

#if __has_include(<kcross/ctx.h>)
# include <kcross/ctx.h>
# define UCTX_HAVE_KC_CTX 1
#else
# define UCTX_HAVE_KC_CTX 0
#endif

#define UCTX_STACK (64 * 1024)
#define UCTX_NO_KC_CTX "kc_ctx not built in (this build has no <kcross/ctx.h>)"
#define UCTX_NO_BOOST "built without libboost-context-dev (apt-get install libboost-context-dev)"

/*
 * Every row is a round trip, two switches: the result's switches_per_op,
 * so the renderer shows "per switch" beside "per op (round trip)".  No
 * counted figure: these switches never enter the kernel.
 */
#define UCTX_SWITCHES_PER_OP 2
static void declare_round_trip(struct kh_bench_ctx *c)
{
	c->switches_per_op = UCTX_SWITCHES_PER_OP;
}

/* The floor (bench/uctx_floor-ARCH.S): resuming with an indirect jump, or
 * with a return the return-stack predictor misses (row floor-ret). */
void kh_uctx_floor_switch(void **save_sp, void *to_sp);
void kh_uctx_floor_switch_ret(void **save_sp, void *to_sp);
void *kh_uctx_floor_make(void *stack_top, void (*fn)(void));

/* Runs of context B since the benchmark set it up. */
static uint64_t b_runs;

static void *stack_map(struct kh_bench_ctx *c)
{
	void *s = mmap(NULL, UCTX_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	if (s == MAP_FAILED) {
		kh_fail(c, "cannot map a %d KiB stack: %s", UCTX_STACK / 1024, strerror(errno));
		return NULL;
	}
	return s;
}

/* B ran once per round trip, or the switch went astray. */
static int check_runs(struct kh_bench_ctx *c, const char *what)
{
	if (b_runs != c->iters)
		return kh_fail(c, "%s: context B ran %llu times in %llu round trips", what,
			       (unsigned long long)b_runs, (unsigned long long)c->iters);
	return KH_OK;
}

/* ------------------------------------------------------------- the floor */

static void *floor_a, *floor_b;
static void (*floor_switch)(void **save_sp, void *to_sp);

static void floor_b_main(void)
{
	for (;;) {
		b_runs++;
		floor_switch(&floor_b, floor_a);
	}
}

static int bench_floor(struct kh_bench_ctx *c)
{
	void (*sw)(void **, void *) = kh_arg(c) ? kh_uctx_floor_switch_ret
						 : kh_uctx_floor_switch;
	void *stack = stack_map(c);
	int rc;

	if (!stack)
		return KH_FAIL;
	declare_round_trip(c);
	b_runs = 0;
	floor_switch = sw;
	floor_b = kh_uctx_floor_make((char *)stack + UCTX_STACK, floor_b_main);
	KH_LOOP(c, sw(&floor_a, floor_b));
	rc = check_runs(c, kh_arg(c) ? "kh_uctx_floor_switch_ret" : "kh_uctx_floor_switch");
	munmap(stack, UCTX_STACK);
	return rc;
}

/* ----------------------------------------------------------- swapcontext */

static ucontext_t uc_a, uc_b;

static void uc_b_main(void)
{
	for (;;) {
		b_runs++;
		swapcontext(&uc_b, &uc_a);
	}
}

static int bench_swapcontext(struct kh_bench_ctx *c)
{
	void *stack;
	int rc;

	if (getcontext(&uc_b))
		return kh_fail(c, "getcontext: %s", strerror(errno));
	if (!(stack = stack_map(c)))
		return KH_FAIL;
	declare_round_trip(c);
	uc_b.uc_stack.ss_sp = stack;
	uc_b.uc_stack.ss_size = UCTX_STACK;
	uc_b.uc_link = NULL;
	makecontext(&uc_b, uc_b_main, 0);
	b_runs = 0;
	KH_LOOP(c, swapcontext(&uc_a, &uc_b));
	rc = check_runs(c, "swapcontext");
	munmap(stack, UCTX_STACK);
	return rc;
}

/* -------------------------------------------------------- Boost.Context */

#if KCROSS_HAVE_BOOST_CONTEXT
/* boost/context/detail/fcontext.hpp's extern "C" functions, as C sees them
 * (transfer_t: two pointers, returned in two registers on every ABI here). */
struct kh_fc_transfer {
	void *fctx;
	void *data;
};
struct kh_fc_transfer jump_fcontext(void *to, void *vp);
void *make_fcontext(void *sp, size_t size, void (*fn)(struct kh_fc_transfer));

static void fc_b_main(struct kh_fc_transfer t)
{
	for (;;) {	/* never returns: Boost's trampoline would _exit(0) */
		b_runs++;
		t = jump_fcontext(t.fctx, NULL);
	}
}
#endif

static int bench_boost_fcontext(struct kh_bench_ctx *c)
{
#if KCROSS_HAVE_BOOST_CONTEXT
	void *stack = stack_map(c), *b;
	int rc;

	if (!stack)
		return KH_FAIL;
	declare_round_trip(c);
	b_runs = 0;
	b = make_fcontext((char *)stack + UCTX_STACK, UCTX_STACK, fc_b_main);
	KH_LOOP(c, b = jump_fcontext(b, NULL).fctx);
	rc = check_runs(c, "jump_fcontext");
	munmap(stack, UCTX_STACK);
	return rc;
#else
	return kh_skip(c, UCTX_NO_BOOST);
#endif
}

/* ---------------------------------------------------------------- kc_ctx */

#if UCTX_HAVE_KC_CTX
static struct kc_ctx kc_a, kc_b;
static volatile int kc_stop;

/* Runs once per round trip, then returns when told to: the context ends
 * through its link (A), and kc_ctx_done() must say so. */
static void kc_b_main(void *arg)
{
	(void)arg;
	while (!kc_stop) {
		b_runs++;
		kc_ctx_switch(&kc_b, &kc_a);
	}
}

/* Row parameter: 1 when both contexts share the FP environment. */
static int bench_kc_ctx(struct kh_bench_ctx *c)
{
	bool shared = kh_arg(c) != 0;
	int err, rc;

	memset(&kc_a, 0, sizeof(kc_a));
	memset(&kc_b, 0, sizeof(kc_b));
	if ((err = kc_ctx_make(&kc_b, NULL, 0, kc_b_main, NULL, &kc_a)))
		return kh_fail(c, "kc_ctx_make: %s", strerror(-err));
	if (shared) {
		kc_ctx_share_fpenv(&kc_a);	/* the harness's own context, running */
		kc_ctx_share_fpenv(&kc_b);	/* made, not started */
	}
	declare_round_trip(c);
	b_runs = 0;
	kc_stop = 0;
	KH_LOOP(c, kc_ctx_switch(&kc_a, &kc_b));
	rc = check_runs(c, "kc_ctx_switch");
	kc_stop = 1;
	kc_ctx_switch(&kc_a, &kc_b);	/* B returns: back here through its link */
	if (rc == KH_OK && !kc_ctx_done(&kc_b))
		rc = kh_fail(c, "context B returned but kc_ctx_done() says it did not");
	kc_ctx_free(&kc_b);
	return rc;
}

/* Two tasks: A times `iters` yields, B yields back until A is done. */
struct sched_pair {
	struct kh_bench_ctx *c;
	struct kc_sched *s;
	volatile int a_done;
};

static void sched_a_main(void *arg)
{
	struct sched_pair *p = arg;

	KH_LOOP(p->c, kc_sched_yield(p->s));
	p->a_done = 1;
}

static void sched_b_main(void *arg)
{
	struct sched_pair *p = arg;

	while (!p->a_done) {
		b_runs++;
		kc_sched_yield(p->s);
	}
}

static int bench_kc_sched(struct kh_bench_ctx *c)
{
	struct kc_sched s;
	struct sched_pair p = { .c = c, .s = &s };
	int err, rc = KH_OK;
	long a, b;

	if ((err = kc_sched_init(&s)))
		return kh_fail(c, "kc_sched_init: %s", strerror(-err));
	declare_round_trip(c);
	b_runs = 0;
	a = kc_sched_spawn(&s, sched_a_main, &p, 0);
	b = a < 0 ? a : kc_sched_spawn(&s, sched_b_main, &p, 0);
	if (a < 0 || b < 0)
		rc = kh_fail(c, "kc_sched_spawn: %s", strerror((int)-(a < 0 ? a : b)));
	else if ((err = kc_sched_run(&s)))
		rc = kh_fail(c, "kc_sched_run: %s", strerror(-err));
	else if (b_runs != c->iters && b_runs != c->iters + 1)	/* B may run first */
		rc = kh_fail(c, "task B ran %llu times while A yielded %llu times",
			     (unsigned long long)b_runs, (unsigned long long)c->iters);
	kc_sched_destroy(&s);
	return rc;
}
#else
static int bench_kc_ctx(struct kh_bench_ctx *c)
{
	return kh_skip(c, UCTX_NO_KC_CTX);
}

static int bench_kc_sched(struct kh_bench_ctx *c)
{
	return kh_skip(c, UCTX_NO_KC_CTX);
}
#endif

static const struct kh_bench benches[] = {
	{ "kc_ctx", "kc_ctx_switch round trip A->B->A (2 switches)", bench_kc_ctx, 0, 0, NULL },
	{ "kc_ctx-shared-fpenv", "the same, both contexts sharing the FP environment "
	  "(kc_ctx_share_fpenv)", bench_kc_ctx, 0, 1, NULL },
	{ "kc_sched-yield", "kc_sched_yield between two tasks, A->B->A (2 switches)",
	  bench_kc_sched, 0, 0, NULL },
	{ "floor", "hand-written minimal switch (callee-saved registers + sp), round trip",
	  bench_floor, 0, 0, NULL },
	{ "floor-ret", "the floor resuming with a return (the return-stack predictor misses)",
	  bench_floor, 0, 1, NULL },
	{ "swapcontext", "glibc swapcontext round trip (saves the signal mask: a syscall)",
	  bench_swapcontext, 0, 0, NULL },
	{ "boost-fcontext", "Boost.Context jump_fcontext round trip (libboost-context-dev)",
	  bench_boost_fcontext, 0, 0, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_uctx = { "uctx", benches, 0 };
