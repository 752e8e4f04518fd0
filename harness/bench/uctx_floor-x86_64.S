/* SPDX-License-Identifier: MIT */
/*
 * The floor of a user-level context switch on x86-64 (SysV ABI), for the
 * uctx suite (bench/uctx.c): the fewest instructions that switch stacks and
 * keep what the ABI says a call keeps, and nothing else (no MXCSR, no x87
 * control word, no signal mask, no shadow stack).  CMake builds only the
 * file of the arch being built (harness/bench/uctx_floor-ARCH.S).
 *
 * Saved frame, on the stack being left (offsets from the saved sp):
 *
 *      0  r15     8  r14    16  r13    24  r12    32  rbx    40  rbp
 *     48  return address (where the switch resumes)
 */
	.text

/*
 * void kh_uctx_floor_switch(void **save_sp, void *to_sp)      resumes with
 *      pop + indirect jmp: the indirect predictor learns the alternation;
 * void kh_uctx_floor_switch_ret(void **save_sp, void *to_sp)  with `ret`:
 *      the fewest instructions, but the return-stack predictor expects this
 *      call's caller and misses every time.
 */
	.macro	FLOOR_SWITCH name, jmp
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	.if \jmp
	popq	%rcx
	jmpq	*%rcx
	.else
	ret
	.endif
	.size	\name, . - \name
	.endm

	FLOOR_SWITCH kh_uctx_floor_switch, 1
	FLOOR_SWITCH kh_uctx_floor_switch_ret, 0

/*
 * void *kh_uctx_floor_make(void *stack_top, void (*fn)(void))
 * A saved frame at the top of a new stack whose `ret` enters fn (which must
 * never return) as a call would: rsp+8 a multiple of 16 at its first
 * instruction, a zero return address above it, every saved register zero.
 */
	.globl	kh_uctx_floor_make
	.type	kh_uctx_floor_make, @function
	.p2align 4
kh_uctx_floor_make:
	andq	$-16, %rdi
	leaq	-64(%rdi), %rax
	xorl	%ecx, %ecx
	movq	%rcx, 0(%rax)
	movq	%rcx, 8(%rax)
	movq	%rcx, 16(%rax)
	movq	%rcx, 24(%rax)
	movq	%rcx, 32(%rax)
	movq	%rcx, 40(%rax)
	movq	%rsi, 48(%rax)
	movq	%rcx, 56(%rax)
	ret
	.size	kh_uctx_floor_make, . - kh_uctx_floor_make

	.section .note.GNU-stack, "", @progbits
