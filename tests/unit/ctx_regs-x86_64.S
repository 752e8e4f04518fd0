/* SPDX-License-Identifier: MIT */
/*
 * Register-pattern helpers for tests/unit/test_ctx.c (x86-64 SysV).
 *
 * unsigned long ctx_regs_check(struct kc_ctx *self, struct kc_ctx *other,
 *                              unsigned long seed)
 *   fills rbx rbp r12-r15 with seed+1..seed+6, switches to `other` and,
 *   once resumed, returns a bit per register that did not come back
 *   (bit 0 rbx, 1 rbp, 2-5 r12-r15, 6 rsp), 0 when all did.
 * void ctx_regs_clobber(struct kc_ctx *self, struct kc_ctx *back,
 *                       unsigned long seed)
 *   fills the same registers with ~seed+1.., switches to `back`, returns.
 * void ctx_sp_entry(void *arg)
 *   a context entry: records rsp at entry in ctx_entry_sp (C), then
 *   tail-calls ctx_sp_entry_c(arg).
 *
 * The fill and the check are regs-x86_64.inc's.
 */
#include "regs-x86_64.inc"

	.text
	.globl	ctx_regs_check
	.type	ctx_regs_check, @function
ctx_regs_check:
	regs_enter
	regs_fill
	call	kc_ctx_switch@PLT
	regs_check regs_bit
	regs_leave
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, @function
ctx_regs_clobber:
	regs_enter
	notq	%rdx
	regs_fill
	call	kc_ctx_switch@PLT
	regs_leave
	.size	ctx_regs_clobber, . - ctx_regs_clobber

	.globl	ctx_sp_entry
	.type	ctx_sp_entry, @function
ctx_sp_entry:
	movq	%rsp, ctx_entry_sp(%rip)
	jmp	ctx_sp_entry_c@PLT
	.size	ctx_sp_entry, . - ctx_sp_entry

	.section .note.GNU-stack, "", @progbits
