/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, ppc64le ELFv2.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills r14-r31 with seed+1..seed+18, f14-f31 with seed+30..seed+47 (as
 *   bits), doubleword 0 of v20-v31 with seed+60..seed+71, r2 (the TOC)
 *   with seed+100 and CR fields 2-4 from seed+90, calls sw(save, to) (a
 *   floor switch: bench/uctx_floor-ppc64le.S, which uses no TOC) and, once
 *   resumed, returns how many of them, and r1, did not come back.  r2 is
 *   its caller's again on return.
 *
 * Frame, 528 bytes: 0 back chain, 16 LR, 24 r2, 32 r14-r31, 176 f14-f31,
 * 320 v20-v31, 512 seed, 520 r1 to compare, CR in the caller's frame (8).
 */
#define FRAME 528
	.abiversion 2
	.machine power8
	.text
	.globl	floor_regs_check
	.type	floor_regs_check, @function
floor_regs_check:
	mflr	%r0
	std	%r0, 16(%r1)
	mfcr	%r0
	stw	%r0, 8(%r1)
	stdu	%r1, -FRAME(%r1)
	std	%r2, 24(%r1)
	std	%r14, 32(%r1)
	std	%r15, 40(%r1)
	std	%r16, 48(%r1)
	std	%r17, 56(%r1)
	std	%r18, 64(%r1)
	std	%r19, 72(%r1)
	std	%r20, 80(%r1)
	std	%r21, 88(%r1)
	std	%r22, 96(%r1)
	std	%r23, 104(%r1)
	std	%r24, 112(%r1)
	std	%r25, 120(%r1)
	std	%r26, 128(%r1)
	std	%r27, 136(%r1)
	std	%r28, 144(%r1)
	std	%r29, 152(%r1)
	std	%r30, 160(%r1)
	std	%r31, 168(%r1)
	stfd	%f14, 176(%r1)
	stfd	%f15, 184(%r1)
	stfd	%f16, 192(%r1)
	stfd	%f17, 200(%r1)
	stfd	%f18, 208(%r1)
	stfd	%f19, 216(%r1)
	stfd	%f20, 224(%r1)
	stfd	%f21, 232(%r1)
	stfd	%f22, 240(%r1)
	stfd	%f23, 248(%r1)
	stfd	%f24, 256(%r1)
	stfd	%f25, 264(%r1)
	stfd	%f26, 272(%r1)
	stfd	%f27, 280(%r1)
	stfd	%f28, 288(%r1)
	stfd	%f29, 296(%r1)
	stfd	%f30, 304(%r1)
	stfd	%f31, 312(%r1)
	li	%r0, 320
	stvx	%v20, %r1, %r0
	li	%r0, 336
	stvx	%v21, %r1, %r0
	li	%r0, 352
	stvx	%v22, %r1, %r0
	li	%r0, 368
	stvx	%v23, %r1, %r0
	li	%r0, 384
	stvx	%v24, %r1, %r0
	li	%r0, 400
	stvx	%v25, %r1, %r0
	li	%r0, 416
	stvx	%v26, %r1, %r0
	li	%r0, 432
	stvx	%v27, %r1, %r0
	li	%r0, 448
	stvx	%v28, %r1, %r0
	li	%r0, 464
	stvx	%v29, %r1, %r0
	li	%r0, 480
	stvx	%v30, %r1, %r0
	li	%r0, 496
	stvx	%v31, %r1, %r0
	std	%r5, 512(%r1)
	std	%r1, 520(%r1)
	addi	%r14, %r5, 1
	addi	%r15, %r5, 2
	addi	%r16, %r5, 3
	addi	%r17, %r5, 4
	addi	%r18, %r5, 5
	addi	%r19, %r5, 6
	addi	%r20, %r5, 7
	addi	%r21, %r5, 8
	addi	%r22, %r5, 9
	addi	%r23, %r5, 10
	addi	%r24, %r5, 11
	addi	%r25, %r5, 12
	addi	%r26, %r5, 13
	addi	%r27, %r5, 14
	addi	%r28, %r5, 15
	addi	%r29, %r5, 16
	addi	%r30, %r5, 17
	addi	%r31, %r5, 18
	addi	%r0, %r5, 30
	mtfprd	%f14, %r0
	addi	%r0, %r5, 31
	mtfprd	%f15, %r0
	addi	%r0, %r5, 32
	mtfprd	%f16, %r0
	addi	%r0, %r5, 33
	mtfprd	%f17, %r0
	addi	%r0, %r5, 34
	mtfprd	%f18, %r0
	addi	%r0, %r5, 35
	mtfprd	%f19, %r0
	addi	%r0, %r5, 36
	mtfprd	%f20, %r0
	addi	%r0, %r5, 37
	mtfprd	%f21, %r0
	addi	%r0, %r5, 38
	mtfprd	%f22, %r0
	addi	%r0, %r5, 39
	mtfprd	%f23, %r0
	addi	%r0, %r5, 40
	mtfprd	%f24, %r0
	addi	%r0, %r5, 41
	mtfprd	%f25, %r0
	addi	%r0, %r5, 42
	mtfprd	%f26, %r0
	addi	%r0, %r5, 43
	mtfprd	%f27, %r0
	addi	%r0, %r5, 44
	mtfprd	%f28, %r0
	addi	%r0, %r5, 45
	mtfprd	%f29, %r0
	addi	%r0, %r5, 46
	mtfprd	%f30, %r0
	addi	%r0, %r5, 47
	mtfprd	%f31, %r0
	addi	%r0, %r5, 60
	mtvrd	%v20, %r0
	addi	%r0, %r5, 61
	mtvrd	%v21, %r0
	addi	%r0, %r5, 62
	mtvrd	%v22, %r0
	addi	%r0, %r5, 63
	mtvrd	%v23, %r0
	addi	%r0, %r5, 64
	mtvrd	%v24, %r0
	addi	%r0, %r5, 65
	mtvrd	%v25, %r0
	addi	%r0, %r5, 66
	mtvrd	%v26, %r0
	addi	%r0, %r5, 67
	mtvrd	%v27, %r0
	addi	%r0, %r5, 68
	mtvrd	%v28, %r0
	addi	%r0, %r5, 69
	mtvrd	%v29, %r0
	addi	%r0, %r5, 70
	mtvrd	%v30, %r0
	addi	%r0, %r5, 71
	mtvrd	%v31, %r0
	addi	%r0, %r5, 90
	mtcrf	0x38, %r0
	addi	%r2, %r5, 100
	mtctr	%r6
	mr	%r12, %r6
	bctrl
	ld	%r5, 512(%r1)
	li	%r3, 0
	.macro	same reg, k
	addi	%r9, %r5, \k
	cmpd	\reg, %r9
	beq	1f
	addi	%r3, %r3, 1
1:
	.endm
	same	%r14, 1
	same	%r15, 2
	same	%r16, 3
	same	%r17, 4
	same	%r18, 5
	same	%r19, 6
	same	%r20, 7
	same	%r21, 8
	same	%r22, 9
	same	%r23, 10
	same	%r24, 11
	same	%r25, 12
	same	%r26, 13
	same	%r27, 14
	same	%r28, 15
	same	%r29, 16
	same	%r30, 17
	same	%r31, 18
	mffprd	%r8, %f14
	same	%r8, 30
	mffprd	%r8, %f15
	same	%r8, 31
	mffprd	%r8, %f16
	same	%r8, 32
	mffprd	%r8, %f17
	same	%r8, 33
	mffprd	%r8, %f18
	same	%r8, 34
	mffprd	%r8, %f19
	same	%r8, 35
	mffprd	%r8, %f20
	same	%r8, 36
	mffprd	%r8, %f21
	same	%r8, 37
	mffprd	%r8, %f22
	same	%r8, 38
	mffprd	%r8, %f23
	same	%r8, 39
	mffprd	%r8, %f24
	same	%r8, 40
	mffprd	%r8, %f25
	same	%r8, 41
	mffprd	%r8, %f26
	same	%r8, 42
	mffprd	%r8, %f27
	same	%r8, 43
	mffprd	%r8, %f28
	same	%r8, 44
	mffprd	%r8, %f29
	same	%r8, 45
	mffprd	%r8, %f30
	same	%r8, 46
	mffprd	%r8, %f31
	same	%r8, 47
	mfvrd	%r8, %v20
	same	%r8, 60
	mfvrd	%r8, %v21
	same	%r8, 61
	mfvrd	%r8, %v22
	same	%r8, 62
	mfvrd	%r8, %v23
	same	%r8, 63
	mfvrd	%r8, %v24
	same	%r8, 64
	mfvrd	%r8, %v25
	same	%r8, 65
	mfvrd	%r8, %v26
	same	%r8, 66
	mfvrd	%r8, %v27
	same	%r8, 67
	mfvrd	%r8, %v28
	same	%r8, 68
	mfvrd	%r8, %v29
	same	%r8, 69
	mfvrd	%r8, %v30
	same	%r8, 70
	mfvrd	%r8, %v31
	same	%r8, 71
	same	%r2, 100
	mfcr	%r8
	addi	%r9, %r5, 90
	lis	%r10, 0x00ff
	ori	%r10, %r10, 0xf000	/* CR fields 2-4 */
	and	%r8, %r8, %r10
	and	%r9, %r9, %r10
	cmpw	%r8, %r9
	beq	2f
	addi	%r3, %r3, 1
2:	ld	%r8, 520(%r1)
	cmpd	%r8, %r1
	beq	3f
	addi	%r3, %r3, 1
3:
	li	%r0, 320
	lvx	%v20, %r1, %r0
	li	%r0, 336
	lvx	%v21, %r1, %r0
	li	%r0, 352
	lvx	%v22, %r1, %r0
	li	%r0, 368
	lvx	%v23, %r1, %r0
	li	%r0, 384
	lvx	%v24, %r1, %r0
	li	%r0, 400
	lvx	%v25, %r1, %r0
	li	%r0, 416
	lvx	%v26, %r1, %r0
	li	%r0, 432
	lvx	%v27, %r1, %r0
	li	%r0, 448
	lvx	%v28, %r1, %r0
	li	%r0, 464
	lvx	%v29, %r1, %r0
	li	%r0, 480
	lvx	%v30, %r1, %r0
	li	%r0, 496
	lvx	%v31, %r1, %r0
	lfd	%f14, 176(%r1)
	lfd	%f15, 184(%r1)
	lfd	%f16, 192(%r1)
	lfd	%f17, 200(%r1)
	lfd	%f18, 208(%r1)
	lfd	%f19, 216(%r1)
	lfd	%f20, 224(%r1)
	lfd	%f21, 232(%r1)
	lfd	%f22, 240(%r1)
	lfd	%f23, 248(%r1)
	lfd	%f24, 256(%r1)
	lfd	%f25, 264(%r1)
	lfd	%f26, 272(%r1)
	lfd	%f27, 280(%r1)
	lfd	%f28, 288(%r1)
	lfd	%f29, 296(%r1)
	lfd	%f30, 304(%r1)
	lfd	%f31, 312(%r1)
	ld	%r14, 32(%r1)
	ld	%r15, 40(%r1)
	ld	%r16, 48(%r1)
	ld	%r17, 56(%r1)
	ld	%r18, 64(%r1)
	ld	%r19, 72(%r1)
	ld	%r20, 80(%r1)
	ld	%r21, 88(%r1)
	ld	%r22, 96(%r1)
	ld	%r23, 104(%r1)
	ld	%r24, 112(%r1)
	ld	%r25, 120(%r1)
	ld	%r26, 128(%r1)
	ld	%r27, 136(%r1)
	ld	%r28, 144(%r1)
	ld	%r29, 152(%r1)
	ld	%r30, 160(%r1)
	ld	%r31, 168(%r1)
	ld	%r2, 24(%r1)
	addi	%r1, %r1, FRAME
	ld	%r0, 16(%r1)
	mtlr	%r0
	lwz	%r0, 8(%r1)
	mtcrf	0x38, %r0
	blr
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", @progbits
