/* SPDX-License-Identifier: MIT */
/*
 * kcross/rseq-ops.h - the rseq per-CPU operations of <kcross/pseudocode.h>,
 * implemented per architecture.  Callers read the CPU, compute their per-CPU
 * pointers for it, and retry on -1; <kcross/percpu.h> does that for the
 * common structures, with fallbacks when rseq is unavailable.
 *
 * Test builds define the KC_RSEQ_INJECT_* hooks before including this.
 */
#ifndef KCROSS_RSEQ_OPS_H
#define KCROSS_RSEQ_OPS_H

#include <kcross/pseudocode.h>
#include <kcross/rseq.h>

#include KC_ARCH_RSEQ_HEADER

#endif /* KCROSS_RSEQ_OPS_H */
