/* SPDX-License-Identifier: MIT */
/*
 * The untimed counting passes of the percpu benchmarks whose operations
 * retry rseq aborts internally (lists, pools, locks).  This file includes
 * <kcross/percpu.h> with KC_RSEQ_INJECT_C defined to count the attempts of
 * each critical section (hooks 8 list push, 9 list pop, 10 lock; see the
 * header), so it runs exactly the library's code plus a counter; the timed
 * loops in bench/percpu.c are compiled without it.  Retries = attempts -
 * operations: rseq aborts, plus comparison failures, which a single thread
 * on its own CPU list cannot cause.
 */
#include <stdint.h>

static uint64_t attempts[16];

#define KC_RSEQ_INJECT_C(n) (attempts[(n) & 15]++)

#include <kcross/percpu.h>

#include "bench/bench.h"

static void reset(void)
{
	for (int i = 0; i < 16; i++)
		attempts[i] = 0;
}

/* iters push + pop pairs of n; the list must hold nothing else. */
uint64_t kh_percpu_retries_list(struct kc_percpu_list *l, struct kc_percpu_node *n,
				uint64_t iters)
{
	reset();
	for (uint64_t i = iters; i; i--) {
		kc_percpu_list_push(l, n);
		n = kc_percpu_list_pop(l);
		KC_OPAQUE(n);
	}
	return attempts[8] + attempts[9] - 2 * iters;
}

/* iters alloc + free pairs: one pop and one push of the CPU's cache each
 * (a refill or flush, outside rseq, adds no attempt). */
uint64_t kh_percpu_retries_pool(struct kc_percpu_pool *p, uint64_t iters)
{
	uint64_t pops, pushes;

	reset();
	for (uint64_t i = iters; i; i--) {
		void *o = kc_percpu_pool_alloc(p);

		KC_OPAQUE(o);
		kc_percpu_pool_free(p, o);
	}
	pops = attempts[9] > iters ? attempts[9] - iters : 0;
	pushes = attempts[8] > iters ? attempts[8] - iters : 0;
	return pops + pushes;
}

uint64_t kh_percpu_retries_lock(struct kc_percpu_lock *l, uint64_t iters)
{
	reset();
	for (uint64_t i = iters; i; i--)
		kc_percpu_lock_release(l, kc_percpu_lock_acquire(l));
	return attempts[10] - iters;
}
