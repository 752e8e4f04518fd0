/* SPDX-License-Identifier: MIT */
/*
 * The floor of a user-level context switch on aarch64 (AAPCS64), for the
 * uctx suite (bench/uctx.c): the fewest instructions that switch stacks and
 * keep what the ABI says a call keeps (x19-x29, x30 (lr), sp, the low
 * halves d8-d15 of v8-v15), nothing else (no FPCR, no signal mask).  CMake
 * builds only the file of the arch being built (uctx_floor-ARCH.S).
 *
 * Saved frame, 160 bytes on the stack being left (offsets from the saved sp):
 *
 *      0  x19    8  x20    16  x21    24  x22    32  x23    40  x24
 *     48  x25   56  x26    64  x27    72  x28    80  x29    88  x30 (lr)
 *     96  d8   104  d9    112  d10   120  d11   128  d12   136  d13
 *    144  d14  152  d15
 */
	.text

/*
 * void kh_uctx_floor_switch(void **save_sp, void *to_sp)      resumes with
 *      `br x30`: an indirect branch, predicted from its history;
 * void kh_uctx_floor_switch_ret(void **save_sp, void *to_sp)  with `ret`:
 *      the return-stack predictor expects this call's caller and misses.
 */
	.macro	FLOOR_SWITCH name, jmp
	.globl	\name
	.type	\name, %function
	.p2align 4
\name:
	sub	sp, sp, #160
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mov	x2, sp
	str	x2, [x0]
	mov	sp, x1
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #160
	.if \jmp
	br	x30
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
 * never return) with sp 16-byte aligned, x29 zero (the end of the frame
 * chain) and every other saved register zero.
 */
	.globl	kh_uctx_floor_make
	.type	kh_uctx_floor_make, %function
	.p2align 4
kh_uctx_floor_make:
	and	x0, x0, #~15
	sub	x0, x0, #160
	stp	xzr, xzr, [x0, #0]
	stp	xzr, xzr, [x0, #16]
	stp	xzr, xzr, [x0, #32]
	stp	xzr, xzr, [x0, #48]
	stp	xzr, xzr, [x0, #64]
	stp	xzr, x1, [x0, #80]
	stp	xzr, xzr, [x0, #96]
	stp	xzr, xzr, [x0, #112]
	stp	xzr, xzr, [x0, #128]
	stp	xzr, xzr, [x0, #144]
	ret
	.size	kh_uctx_floor_make, . - kh_uctx_floor_make

	.section .note.GNU-stack, "", %progbits
