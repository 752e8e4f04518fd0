/* SPDX-License-Identifier: MIT */
/*
 * Register-pattern helpers for tests/unit/test_ctx.c (ppc64le ELFv2).
 *
 * unsigned long ctx_regs_check(struct kc_ctx *self, struct kc_ctx *other,
 *                              unsigned long seed)
 *   fills rN (N = 14..31) with seed+N, fN with the bit pattern seed+100+N,
 *   vN (N = 20..31) with the doublewords {seed+200+N, ~(seed+200+N)},
 *   cr2-cr4 with bits 8-19 of seed<<12, VRSAVE with (u32)(seed*7), switches
 *   to `other` and, once resumed, returns a bit per register that did not
 *   come back (bits 0-17 r14-r31, 18-35 f14-f31, 36-47 v20-v31, 48 CR,
 *   49 VRSAVE, 50 r1), 0 when all did.
 * void ctx_regs_clobber(struct kc_ctx *self, struct kc_ctx *back,
 *                       unsigned long seed)
 *   fills the same registers from ~seed, switches to `back`, returns.
 * void ctx_sp_entry(void *arg)
 *   a context entry: records r1 at entry in ctx_entry_sp, then tail-calls
 *   ctx_sp_entry_c(arg).
 *
 * The fill and the check are regs-ppc64le.inc's.
 */
#include "regs-ppc64le.inc"

#define PATTERN gpr=14, fpr=114, vr=220, vr_both=1, cr=sldi, cr_k=12, vrsave=7

	.text
	.globl	ctx_regs_check
	.type	ctx_regs_check, @function
ctx_regs_check:
	regs_enter
	regs_fill PATTERN
	bl	kc_ctx_switch
	nop
	regs_check regs_bit, PATTERN
	regs_leave
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, @function
ctx_regs_clobber:
	regs_enter
	not	5, 5
	regs_fill PATTERN
	bl	kc_ctx_switch
	nop
	regs_leave
	.size	ctx_regs_clobber, . - ctx_regs_clobber

	.globl	ctx_sp_entry
	.type	ctx_sp_entry, @function
ctx_sp_entry:
0:	addis	2, 12, .TOC.-0b@ha
	addi	2, 2, .TOC.-0b@l
	.localentry ctx_sp_entry, . - ctx_sp_entry
	addis	9, 2, ctx_entry_sp@toc@ha
	std	1, ctx_entry_sp@toc@l(9)
	b	ctx_sp_entry_c
	.size	ctx_sp_entry, . - ctx_sp_entry

	.section .note.GNU-stack, "", @progbits
