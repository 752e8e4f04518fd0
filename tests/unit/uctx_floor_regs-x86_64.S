/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, x86-64 SysV.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills rbx rbp r12-r15 with seed+1..seed+6, calls sw(save, to) (a floor
 *   switch: bench/uctx_floor-x86_64.S) and, once resumed, returns how many
 *   of them, and rsp, did not come back (0: all did).
 */
	.text
	.globl	floor_regs_check
	.type	floor_regs_check, @function
floor_regs_check:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$24, %rsp		/* rsp 16-byte aligned at the call */
	movq	%rdx, 0(%rsp)		/* seed */
	movq	%rsp, 8(%rsp)		/* rsp, to compare */
	leaq	1(%rdx), %rbx
	leaq	2(%rdx), %rbp
	leaq	3(%rdx), %r12
	leaq	4(%rdx), %r13
	leaq	5(%rdx), %r14
	leaq	6(%rdx), %r15
	call	*%rcx
	xorl	%eax, %eax
	movq	0(%rsp), %rdx
	.macro	same reg, k
	leaq	\k(%rdx), %rcx
	cmpq	%rcx, \reg
	je	1f
	incq	%rax
1:
	.endm
	same	%rbx, 1
	same	%rbp, 2
	same	%r12, 3
	same	%r13, 4
	same	%r14, 5
	same	%r15, 6
	cmpq	8(%rsp), %rsp
	je	2f
	incq	%rax
2:	addq	$24, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", @progbits
