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
 */
	.text
	.macro	save_all
	stp	x29, x30, [sp, #-176]!
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	.endm
	.macro	restore_all
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	ldp	x29, x30, [sp], #176
	.endm
	/* fill from the seed in x2 */
	.macro	fill
	add	x19, x2, #1
	add	x20, x2, #2
	add	x21, x2, #3
	add	x22, x2, #4
	add	x23, x2, #5
	add	x24, x2, #6
	add	x25, x2, #7
	add	x26, x2, #8
	add	x27, x2, #9
	add	x28, x2, #10
	add	x29, x2, #11
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	add	x9, x2, #(20 + \n - 8)
	fmov	d\n, x9
	.endr
	.endm

	.globl	ctx_regs_check
	.type	ctx_regs_check, %function
ctx_regs_check:
	save_all
	str	x2, [sp, #160]
	mov	x9, sp
	str	x9, [sp, #168]
	fill
	bl	kc_ctx_switch
	ldr	x2, [sp, #160]
	mov	x0, #0
	.macro	want reg, k, bit
	add	x9, x2, #\k
	cmp	\reg, x9
	b.eq	1f
	orr	x0, x0, #(1 << \bit)
1:
	.endm
	want	x19, 1, 0
	want	x20, 2, 1
	want	x21, 3, 2
	want	x22, 4, 3
	want	x23, 5, 4
	want	x24, 6, 5
	want	x25, 7, 6
	want	x26, 8, 7
	want	x27, 9, 8
	want	x28, 10, 9
	want	x29, 11, 10
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	fmov	x10, d\n
	want	x10, (20 + \n - 8), (11 + \n - 8)
	.endr
	mov	x9, sp
	ldr	x10, [sp, #168]
	cmp	x9, x10
	b.eq	2f
	orr	x0, x0, #(1 << 19)
2:
	restore_all
	ret
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, %function
ctx_regs_clobber:
	save_all
	mvn	x2, x2
	fill
	bl	kc_ctx_switch
	restore_all
	ret
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
