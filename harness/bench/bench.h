/* SPDX-License-Identifier: MIT */
/*
 * What the benchmark files share, and what they offer the registry.  Each
 * bench/NAME.c keeps its benchmark functions static and defines its suite
 * table (struct kh_suite, api.h: the whole of what it sees of the harness)
 * beside them; registry.c joins the suites.
 */
#ifndef KCROSS_BENCH_H
#define KCROSS_BENCH_H

#include "api.h"

/* bench/syscall.c, for KH_NEED_IA32_EMULATION (registry.c): is IA32
 * emulation (int $0x80 from 64-bit) usable here?  NULL if so. */
const char *kh_probe_ia32(void);

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
