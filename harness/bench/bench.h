/* SPDX-License-Identifier: MIT */
/*
 * What the benchmark files share.  Each bench/NAME.c keeps its benchmark
 * functions static and defines its suite table (struct kh_suite, harness.h)
 * beside them; registry.c joins the suites.
 */
#ifndef KCROSS_BENCH_H
#define KCROSS_BENCH_H

#include "harness.h"

/* bench/percpu_aborts.c: untimed passes counting the rseq retries inside
 * the <kcross/percpu.h> operations (which do not report them) */
struct kc_percpu_list;
struct kc_percpu_node;
struct kc_percpu_pool;
struct kc_percpu_lock;
uint64_t kh_percpu_retries_list(struct kc_percpu_list *l, struct kc_percpu_node *n,
				uint64_t iters);
uint64_t kh_percpu_retries_pool(struct kc_percpu_pool *p, uint64_t iters);
uint64_t kh_percpu_retries_lock(struct kc_percpu_lock *l, uint64_t iters);

#endif
