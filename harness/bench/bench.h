/* SPDX-License-Identifier: MIT */
/* Benchmark functions, one group per file; the table is in registry.c. */
#ifndef KCROSS_BENCH_H
#define KCROSS_BENCH_H

#include "harness.h"

/* bench/syscall.c */
int bench_getppid_glibc(struct kc_bench_ctx *c);
int bench_getppid_libc_syscall(struct kc_bench_ctx *c);
int bench_getppid_inline(struct kc_bench_ctx *c);
int bench_getppid_dispatch(struct kc_bench_ctx *c);
int bench_getppid_call(struct kc_bench_ctx *c);
int bench_gettid_inline(struct kc_bench_ctx *c);
int bench_getppid_int80(struct kc_bench_ctx *c);
int bench_clock_gettime_vdso(struct kc_bench_ctx *c);
int bench_clock_gettime_syscall(struct kc_bench_ctx *c);
int bench_clock_gettime_kc(struct kc_bench_ctx *c);
int bench_getcpu_vdso(struct kc_bench_ctx *c);
int bench_getcpu_syscall(struct kc_bench_ctx *c);
int bench_stat_root(struct kc_bench_ctx *c);
int bench_read_devzero(struct kc_bench_ctx *c);
int bench_write_devnull(struct kc_bench_ctx *c);
int bench_open_close(struct kc_bench_ctx *c);

#endif
