/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, aarch64 AAPCS64.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills x19-x29 with seed+1..seed+11 and d8-d15 with seed+20..seed+27,
 *   calls sw(save, to) (a floor switch: bench/uctx_floor-aarch64.S) and,
 *   once resumed, returns how many of them, and sp, did not come back.
 */
	.text
	.globl	floor_regs_check
	.type	floor_regs_check, %function
floor_regs_check:
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
	mov	x9, sp
	stp	x2, x9, [sp, #160]	/* seed, sp to compare */
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
	add	x9, x2, #20
	fmov	d8, x9
	add	x9, x2, #21
	fmov	d9, x9
	add	x9, x2, #22
	fmov	d10, x9
	add	x9, x2, #23
	fmov	d11, x9
	add	x9, x2, #24
	fmov	d12, x9
	add	x9, x2, #25
	fmov	d13, x9
	add	x9, x2, #26
	fmov	d14, x9
	add	x9, x2, #27
	fmov	d15, x9
	blr	x3
	ldr	x2, [sp, #160]
	mov	x0, #0
	.macro	same reg, k
	add	x9, x2, #\k
	cmp	\reg, x9
	b.eq	1f
	add	x0, x0, #1
1:
	.endm
	same	x19, 1
	same	x20, 2
	same	x21, 3
	same	x22, 4
	same	x23, 5
	same	x24, 6
	same	x25, 7
	same	x26, 8
	same	x27, 9
	same	x28, 10
	same	x29, 11
	fmov	x10, d8
	same	x10, 20
	fmov	x10, d9
	same	x10, 21
	fmov	x10, d10
	same	x10, 22
	fmov	x10, d11
	same	x10, 23
	fmov	x10, d12
	same	x10, 24
	fmov	x10, d13
	same	x10, 25
	fmov	x10, d14
	same	x10, 26
	fmov	x10, d15
	same	x10, 27
	ldr	x9, [sp, #168]
	mov	x10, sp
	cmp	x9, x10
	b.eq	2f
	add	x0, x0, #1
2:	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	ldp	x29, x30, [sp], #176
	ret
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", %progbits
