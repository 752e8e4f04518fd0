/* SPDX-License-Identifier: MIT */
/*
 * kcross.h - everything libkcross offers.
 *
 *   <kcross/syscall.h>  raw and run-time-selected system calls
 *   <kcross/vdso.h>     vDSO parsing and symbol lookup
 *   <kcross/clock.h>    clock_gettime / getcpu through the vDSO or the kernel
 *   <kcross/rseq.h>     rseq registration; kc_cpu(), kc_node(), kc_cid()
 *   <kcross/rseq-ops.h> the rseq per-CPU operations of <kcross/pseudocode.h>
 *   <kcross/percpu.h>   per-CPU counter, list, pool and lock (rseq or atomic)
 *   <kcross/ctx.h>      user-level context switches; a cooperative scheduler
 */
#ifndef KCROSS_KCROSS_H
#define KCROSS_KCROSS_H

#include <kcross/syscall.h>
#include <kcross/vdso.h>
#include <kcross/clock.h>
#include <kcross/rseq.h>
#include <kcross/percpu.h>
#include <kcross/settings.h>
#include <kcross/ctx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version ("0.1.0") and the git revision it was built from. */
const char *kc_version(void);
const char *kc_git_rev(void);

#ifdef __cplusplus
}
#endif
#endif
