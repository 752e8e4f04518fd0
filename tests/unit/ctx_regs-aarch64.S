/* SPDX-License-Identifier: MIT */
/*
 * Register-pattern helpers for tests/unit/test_ctx.c (aarch64 AAPCS64).
 *
 * unsigned long ctx_regs_check(struct kc_ctx *self, struct kc_ctx *other,
 *                              unsigned long seed)
 *   fills x19-x28 with seed+1..seed+10, x29 with seed+11, d8-d15 with the
 *   bit patterns seed+20..seed+27, switches to `other` and, once resumed,
 *   returns a bit per register that did not come back (bits 0-9 x19-x28,
 *   10 x29, 11-18 d8-d15, 19 sp), 0 when all did.
 * void ctx_regs_clobber(struct kc_ctx *self, struct kc_ctx *back,
 *                       unsigned long seed)
 *   fills the same registers from ~seed, switches to `back`, returns.
 * void ctx_sp_entry(void *arg)
 *   a context entry: records sp at entry in ctx_entry_sp, then tail-calls
 *   ctx_sp_entry_c(arg).
 *
 * The fill and the check are regs-aarch64.inc's.
 */
#include "regs-aarch64.inc"

	.text
	.globl	ctx_regs_check
	.type	ctx_regs_check, %function
ctx_regs_check:
	regs_enter
	regs_fill
	bl	kc_ctx_switch
	regs_check regs_bit
	regs_leave
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, %function
ctx_regs_clobber:
	regs_enter
	mvn	x2, x2
	regs_fill
	bl	kc_ctx_switch
	regs_leave
	.size	ctx_regs_clobber, . - ctx_regs_clobber

	.globl	ctx_sp_entry
	.type	ctx_sp_entry, %function
ctx_sp_entry:
	adrp	x9, ctx_entry_sp
	mov	x10, sp
	str	x10, [x9, :lo12:ctx_entry_sp]
	b	ctx_sp_entry_c
	.size	ctx_sp_entry, . - ctx_sp_entry

	.section .note.GNU-stack, "", %progbits
