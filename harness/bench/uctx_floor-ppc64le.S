/* SPDX-License-Identifier: MIT */
/*
 * The floor of a user-level context switch on ppc64le (ELFv2 ABI), for the
 * uctx suite (bench/uctx.c): the fewest instructions that switch stacks and
 * keep what the ABI says a call keeps: r1 (sp), r2 (the TOC), r14-r31,
 * f14-f31, v20-v31, the non-volatile CR fields (cr2-cr4) and LR; nothing
 * else (no VRSAVE, no FPSCR, no signal mask).  CMake builds only the file
 * of the arch being built (harness/bench/uctx_floor-ARCH.S).
 *
 * Saved frame, 512 bytes on the stack being left, made by `stdu` so that
 * the back chain stays whole (offsets from the saved r1):
 *
 *      0  back chain      8  CR             16  LR            24  r2
 *     32  r14 .. 168 r31 (8 bytes each)
 *    176  f14 .. 312 f31 (8 bytes each)
 *    320  v20 .. 496 v31 (16 bytes each, 16-byte aligned: r1 always is)
 */

#define FRAME 512

	.abiversion 2
	.text

/*
 * void kh_uctx_floor_switch(void **save_sp, void *to_sp)      resumes with
 *      `bctr`: an indirect branch, predicted from its history (LR is
 *      volatile across a call: it need not be restored);
 * void kh_uctx_floor_switch_ret(void **save_sp, void *to_sp)  with `blr`:
 *      the link-stack predictor expects this call's caller and misses.
 * Neither uses the TOC: one entry point each.
 */
	.macro	FLOOR_SWITCH name, jmp
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
	mflr	%r0
	mfcr	%r12
	stdu	%r1, -FRAME(%r1)
	std	%r0, 16(%r1)
	std	%r12, 8(%r1)
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
	/* v20-v31: bases r5, r12 (CR is stored), indexes r7-r11 = 16..80
	 * (0: the rA=0 form), which stay for the loads on the other stack */
	li	%r7, 16
	li	%r8, 32
	li	%r9, 48
	li	%r10, 64
	li	%r11, 80
	addi	%r5, %r1, 320
	addi	%r12, %r1, 416
	stvx	%v20, 0, %r5
	stvx	%v21, %r5, %r7
	stvx	%v22, %r5, %r8
	stvx	%v23, %r5, %r9
	stvx	%v24, %r5, %r10
	stvx	%v25, %r5, %r11
	stvx	%v26, 0, %r12
	stvx	%v27, %r12, %r7
	stvx	%v28, %r12, %r8
	stvx	%v29, %r12, %r9
	stvx	%v30, %r12, %r10
	stvx	%v31, %r12, %r11
	std	%r1, 0(%r3)
	mr	%r1, %r4
	addi	%r5, %r1, 320
	addi	%r12, %r1, 416
	lvx	%v20, 0, %r5
	lvx	%v21, %r5, %r7
	lvx	%v22, %r5, %r8
	lvx	%v23, %r5, %r9
	lvx	%v24, %r5, %r10
	lvx	%v25, %r5, %r11
	lvx	%v26, 0, %r12
	lvx	%v27, %r12, %r7
	lvx	%v28, %r12, %r8
	lvx	%v29, %r12, %r9
	lvx	%v30, %r12, %r10
	lvx	%v31, %r12, %r11
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
	ld	%r0, 16(%r1)
	ld	%r12, 8(%r1)
	.if \jmp
	mtctr	%r0
	.else
	mtlr	%r0
	.endif
	mtcrf	0x38, %r12
	addi	%r1, %r1, FRAME
	.if \jmp
	bctr
	.else
	blr
	.endif
	.size	\name, . - \name
	.endm

	FLOOR_SWITCH kh_uctx_floor_switch, 1
	FLOOR_SWITCH kh_uctx_floor_switch_ret, 0

/*
 * A new context's first `blr` lands here with fn in r14: call it through
 * CTR with r12 = fn, as ELFv2 requires at a global entry point (fn sets up
 * its own TOC from r12).  fn must never return.
 */
	.type	kh_uctx_floor_entry, @function
	.p2align 4
kh_uctx_floor_entry:
	mtctr	%r14
	mr	%r12, %r14
	bctrl
	trap
	.size	kh_uctx_floor_entry, . - kh_uctx_floor_entry

/*
 * void *kh_uctx_floor_make(void *stack_top, void (*fn)(void))
 * A saved frame at the top of a new stack, everything zero but: LR, the
 * entry above; r14, fn; r2, this module's TOC; the back chain, a 64-byte
 * zeroed frame above it (where fn stores its LR, as in its caller's frame).
 */
	.globl	kh_uctx_floor_make
	.type	kh_uctx_floor_make, @function
	.p2align 4
kh_uctx_floor_make:
0:	addis	%r2, %r12, .TOC.-0b@ha
	addi	%r2, %r2, .TOC.-0b@l
	.localentry kh_uctx_floor_make, . - kh_uctx_floor_make
	clrrdi	%r3, %r3, 4
	addi	%r3, %r3, -64
	li	%r0, 0
	li	%r6, (FRAME + 64) / 8
	mtctr	%r6
	addi	%r7, %r3, -FRAME - 8
1:	stdu	%r0, 8(%r7)
	bdnz	1b
	addi	%r5, %r3, -FRAME
	std	%r3, 0(%r5)
	addis	%r6, %r2, kh_uctx_floor_entry@toc@ha
	addi	%r6, %r6, kh_uctx_floor_entry@toc@l
	std	%r6, 16(%r5)
	std	%r2, 24(%r5)
	std	%r4, 32(%r5)
	mr	%r3, %r5
	blr
	.size	kh_uctx_floor_make, . - kh_uctx_floor_make

	.section .note.GNU-stack, "", @progbits
