/* SPDX-License-Identifier: MIT */
/* Benchmark functions, one group per file; the table is in registry.c. */
#ifndef KCROSS_BENCH_H
#define KCROSS_BENCH_H

#include "harness.h"

/* bench/syscall.c */
int bench_getppid_glibc(struct kh_bench_ctx *c);
int bench_getppid_libc_syscall(struct kh_bench_ctx *c);
int bench_getppid_inline(struct kh_bench_ctx *c);
int bench_getppid_dispatch(struct kh_bench_ctx *c);
int bench_getppid_call(struct kh_bench_ctx *c);
int bench_gettid_inline(struct kh_bench_ctx *c);
int bench_getppid_int80(struct kh_bench_ctx *c);
int bench_clock_gettime_vdso(struct kh_bench_ctx *c);
int bench_clock_gettime_syscall(struct kh_bench_ctx *c);
int bench_clock_gettime_kc(struct kh_bench_ctx *c);
int bench_getcpu_vdso(struct kh_bench_ctx *c);
int bench_getcpu_syscall(struct kh_bench_ctx *c);
int bench_stat_root(struct kh_bench_ctx *c);
int bench_read_devzero(struct kh_bench_ctx *c);
int bench_write_devnull(struct kh_bench_ctx *c);
int bench_open_close(struct kh_bench_ctx *c);

/* bench/cpuid.c */
int bench_cpuid_rseq(struct kh_bench_ctx *c);
int bench_cpuid_kc_cpu(struct kh_bench_ctx *c);
int bench_cpuid_rdpid(struct kh_bench_ctx *c);
int bench_cpuid_rdtscp(struct kh_bench_ctx *c);
int bench_cpuid_lsl(struct kh_bench_ctx *c);
int bench_cpuid_vdso(struct kh_bench_ctx *c);
int bench_cpuid_syscall(struct kh_bench_ctx *c);
int bench_cpuid_glibc(struct kh_bench_ctx *c);

/* bench/percpu.c */
int bench_percpu_inc_plain(struct kh_bench_ctx *c);
int bench_percpu_add_atomic(struct kh_bench_ctx *c);
int bench_percpu_add_getcpu_atomic(struct kh_bench_ctx *c);
int bench_percpu_add_vdso_getcpu_atomic(struct kh_bench_ctx *c);
int bench_percpu_add_rseq(struct kh_bench_ctx *c);
int bench_percpu_cmpstore_rseq(struct kh_bench_ctx *c);
int bench_percpu_cmpstore_cas(struct kh_bench_ctx *c);
int bench_percpu_counter_kc(struct kh_bench_ctx *c);
int bench_percpu_list_rseq(struct kh_bench_ctx *c);
int bench_percpu_list_mutex(struct kh_bench_ctx *c);
int bench_percpu_list_treiber(struct kh_bench_ctx *c);
int bench_percpu_pool_kc(struct kh_bench_ctx *c);
int bench_percpu_pool_malloc(struct kh_bench_ctx *c);
int bench_percpu_lock_rseq(struct kh_bench_ctx *c);
int bench_percpu_lock_cas(struct kh_bench_ctx *c);
int bench_scaling_atomic_x1(struct kh_bench_ctx *c);
int bench_scaling_atomic_xn(struct kh_bench_ctx *c);
int bench_scaling_atomic_x2n(struct kh_bench_ctx *c);
int bench_scaling_rseq_x1(struct kh_bench_ctx *c);
int bench_scaling_rseq_xn(struct kh_bench_ctx *c);
int bench_scaling_rseq_x2n(struct kh_bench_ctx *c);
int bench_scaling_getcpu_atomic_x1(struct kh_bench_ctx *c);
int bench_scaling_getcpu_atomic_xn(struct kh_bench_ctx *c);
int bench_scaling_getcpu_atomic_x2n(struct kh_bench_ctx *c);

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
