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
 */
	.text
	.globl	ctx_regs_check
	.type	ctx_regs_check, @function
ctx_regs_check:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$24, %rsp		/* 16-byte aligned at the call below */
	movq	%rdx, 0(%rsp)
	movq	%rsp, 8(%rsp)
	leaq	1(%rdx), %rbx
	leaq	2(%rdx), %rbp
	leaq	3(%rdx), %r12
	leaq	4(%rdx), %r13
	leaq	5(%rdx), %r14
	leaq	6(%rdx), %r15
	call	kc_ctx_switch@PLT
	xorl	%eax, %eax
	movq	0(%rsp), %rdx
	.macro	want reg, k, bit
	leaq	\k(%rdx), %rcx
	cmpq	%rcx, \reg
	je	1f
	orl	$\bit, %eax
1:
	.endm
	want	%rbx, 1, 1
	want	%rbp, 2, 2
	want	%r12, 3, 4
	want	%r13, 4, 8
	want	%r14, 5, 16
	want	%r15, 6, 32
	cmpq	8(%rsp), %rsp
	je	2f
	orl	$64, %eax
2:
	addq	$24, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, @function
ctx_regs_clobber:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	notq	%rdx
	leaq	1(%rdx), %rbx
	leaq	2(%rdx), %rbp
	leaq	3(%rdx), %r12
	leaq	4(%rdx), %r13
	leaq	5(%rdx), %r14
	leaq	6(%rdx), %r15
	call	kc_ctx_switch@PLT
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	ctx_regs_clobber, . - ctx_regs_clobber

	.globl	ctx_sp_entry
	.type	ctx_sp_entry, @function
ctx_sp_entry:
	movq	%rsp, ctx_entry_sp(%rip)
	jmp	ctx_sp_entry_c@PLT
	.size	ctx_sp_entry, . - ctx_sp_entry

	.section .note.GNU-stack, "", @progbits
