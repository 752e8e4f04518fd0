/* SPDX-License-Identifier: MIT */
/*
 * kcross/clock.h - clock_gettime and getcpu through the fastest path the
 * process has: the vDSO function when the vDSO exports it, else the system
 * call.
 *
 * The choice is made at the first call (or the first *_impl() query), as
 * musl does it: each entry point calls through a function pointer that
 * starts at an init stub; the stub looks the function up in the vDSO,
 * installs it (or "no vDSO": the system call) with a compare-and-swap, and
 * completes the call.  From then on a call costs one load and an indirect
 * call.
 *
 * Environment: KCROSS_VDSO=0, seen by the init stub, chooses the system call
 * even when the vDSO has the function (to test and measure the fallback).
 * It is read once per entry point, at its first use.
 *
 * Errors: 0 or -errno, never errno.  When the vDSO function fails (a
 * negative errno on x86-64 and aarch64; on ppc64le, where vDSO functions
 * report failure like `sc`, a positive one: see KC_VDSO_ERR_POSITIVE) the
 * call is made again as a system call, whose -errno is returned; so both
 * paths give the same answers.
 *
 * clockid_t needs POSIX declarations (_POSIX_C_SOURCE >= 199309L, or
 * glibc's default/_GNU_SOURCE).
 */
#ifndef KCROSS_CLOCK_H
#define KCROSS_CLOCK_H

#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

#include <kcross/syscall.h>

#ifdef __cplusplus
extern "C" {
#endif

/* clock_gettime(2): 0, or -EINVAL for an unknown clock, -EFAULT, ... */
int kc_clock_gettime(clockid_t clk, struct timespec *ts);

/* getcpu(2): the CPU and NUMA node running the caller; either may be NULL. */
int kc_getcpu(unsigned *cpu, unsigned *node);

/* The path each call takes: "vdso" or "syscall".  Makes the choice if no
 * call has made it yet. */
const char *kc_clock_gettime_impl(void);
const char *kc_getcpu_impl(void);

/* The system calls themselves, inline, for benchmarks and tests. */
static inline int kc_clock_gettime_syscall(clockid_t clk, struct timespec *ts)
{
	return (int)kc_syscall2(SYS_clock_gettime, clk, (long)ts);
}

static inline int kc_getcpu_syscall(unsigned *cpu, unsigned *node)
{
	/* The third argument, struct getcpu_cache *, is unused since 2.6.24. */
	return (int)kc_syscall3(SYS_getcpu, (long)cpu, (long)node, 0);
}

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_CLOCK_H */
