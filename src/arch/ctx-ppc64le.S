/* SPDX-License-Identifier: MIT */
/*
 * kc_ctx_switch for ppc64le (ELFv2 ABI).  The saved frame, on the stack of
 * the context being suspended (a real ELFv2 frame: its back chain links to
 * the caller's, so debuggers can walk a suspended context); kc_ctx.sp
 * points at its offset 0.  The C mirror (struct kc_ctx_frame in
 * include/kcross/arch/ppc64le-ctx.h) repeats these offsets in
 * _Static_asserts: change both or neither.
 *
 *   offset  size  what
 *   ------  ----  -----------------------------------------------------
 *        0     8  back chain   the caller's r1 (stdu)
 *        8     4  CR           all fields saved; cr2-cr4 restored
 *       12     4  (padding)
 *       16     8  LR           the resume address; a new context:
 *                              kc__ctx_start
 *       24     8  r2 (TOC)     a new context: the library's TOC
 *       32     4  VRSAVE
 *       36     4  (padding)
 *       40     8  FPSCR        (mffs image)
 *       48   144  r14-r31      r31 of a new context: its struct kc_ctx *
 *      192   144  f14-f31
 *      336   192  v20-v31      16-byte aligned
 *   ------  ----  -----------------------------------------------------
 *      528        frame size (16-byte multiple); r1 = frame + 528 once
 *                 resumed
 *
 * r2.  The TOC is restored from the frame, not assumed: the context resumed
 * may have been suspended by code of another module (another TOC), and a
 * call to kc_ctx_switch within one module has no TOC reload after it.
 *
 * FPSCR.  ELFv2 makes FPSCR's control fields (rounding mode RN, the
 * exception enables, NI) "limited-access": a function leaves them as it
 * found them unless changing them is its purpose (fesetround), so to a
 * caller of kc_ctx_switch they are preserved, and each context keeps its
 * own.  The whole FPSCR (status flags too) is kept per context: read every
 * time (mffs, moved to a GPR with mfvsrd rather than reloaded from the
 * frame: a load right after a store to the same address is costly on
 * POWER), written (mtfsf, which serialises) only when the resumed
 * context's differs.  VRSAVE likewise: saved always, written only when it differs
 * (Linux user space rarely sets it).
 *
 * A context that shares the thread's FP environment (kc_ctx_share_fpenv,
 * KC_CTX_SHARED_FPENV in kc_ctx.flags) promised not to change FPSCR: leaving
 * it reads no FPSCR (mffs; its frame's slot is stale), resuming it writes
 * none.  Each test is a load and an andi. on the 16 bytes that hold
 * kc_ctx.sp; a switch from a sharing context to one with its own state
 * reads FPSCR there for the same compare.
 *
 * to->sp is loaded first, before the frame is stored: it is the head of
 * the chain every instruction after the switch depends on, and a load
 * issued after the stores waits on them (x86-64 measured: a round trip
 * twice as long; see ctx-x86_64.S).  `to` is never `from`: a running
 * context is not suspended.
 *
 * Not saved because a call may destroy them: r0 r3-r13 (r13 is the thread
 * pointer, the same for every context of a thread), f0-f13, v0-v19, the
 * VSX halves beyond f14-f31/v20-v31, cr0 cr1 cr5-cr7, CTR, XER, VSCR.
 *
 * The resume address is reached with mtctr/bctr, not mtlr/blr: the link
 * stack's top entry is this call's own return address, in the context being
 * left, so blr would mispredict on every switch; bctr is predicted from the
 * count cache, which learns a ping-pong's targets.  bctr also leaves the
 * target's address in r12, as a global entry point expects.
 */
#define FR_CR		8
#define FR_LR		16
#define FR_R2		24
#define FR_VRSAVE	32
#define FR_FPSCR	40
#define FRAME		528

/* struct kc_ctx (include/kcross/ctx.h; src/ctx.c asserts these) */
#define CTX_SP		0
#define CTX_FLAGS	8
#define SHARED_FPENV	0x8		/* KC_CTX_SHARED_FPENV */

	.abiversion 2
	.machine power8

/* r14-r31, f14-f31, v20-v31 into the frame at r1 (r9, r10: scratch) */
	.macro	SAVE_REGS
	std	14, 48(1)		/* r14 */
	std	15, 56(1)		/* r15 */
	std	16, 64(1)		/* r16 */
	std	17, 72(1)		/* r17 */
	std	18, 80(1)		/* r18 */
	std	19, 88(1)		/* r19 */
	std	20, 96(1)		/* r20 */
	std	21, 104(1)		/* r21 */
	std	22, 112(1)		/* r22 */
	std	23, 120(1)		/* r23 */
	std	24, 128(1)		/* r24 */
	std	25, 136(1)		/* r25 */
	std	26, 144(1)		/* r26 */
	std	27, 152(1)		/* r27 */
	std	28, 160(1)		/* r28 */
	std	29, 168(1)		/* r29 */
	std	30, 176(1)		/* r30 */
	std	31, 184(1)		/* r31 */
	stfd	14, 192(1)		/* f14 */
	stfd	15, 200(1)		/* f15 */
	stfd	16, 208(1)		/* f16 */
	stfd	17, 216(1)		/* f17 */
	stfd	18, 224(1)		/* f18 */
	stfd	19, 232(1)		/* f19 */
	stfd	20, 240(1)		/* f20 */
	stfd	21, 248(1)		/* f21 */
	stfd	22, 256(1)		/* f22 */
	stfd	23, 264(1)		/* f23 */
	stfd	24, 272(1)		/* f24 */
	stfd	25, 280(1)		/* f25 */
	stfd	26, 288(1)		/* f26 */
	stfd	27, 296(1)		/* f27 */
	stfd	28, 304(1)		/* f28 */
	stfd	29, 312(1)		/* f29 */
	stfd	30, 320(1)		/* f30 */
	stfd	31, 328(1)		/* f31 */
	li	9, 336
	stvx	20, 1, 9		/* v20 */
	li	10, 352
	stvx	21, 1, 10		/* v21 */
	li	9, 368
	stvx	22, 1, 9		/* v22 */
	li	10, 384
	stvx	23, 1, 10		/* v23 */
	li	9, 400
	stvx	24, 1, 9		/* v24 */
	li	10, 416
	stvx	25, 1, 10		/* v25 */
	li	9, 432
	stvx	26, 1, 9		/* v26 */
	li	10, 448
	stvx	27, 1, 10		/* v27 */
	li	9, 464
	stvx	28, 1, 9		/* v28 */
	li	10, 480
	stvx	29, 1, 10		/* v29 */
	li	9, 496
	stvx	30, 1, 9		/* v30 */
	li	10, 512
	stvx	31, 1, 10		/* v31 */
	.endm

/* from->sp stored, onto to's stack; cr0 "ne" when `to` shares the FP environment */
	.macro	TO_STACK
	std	1, CTX_SP(3)		/* from->sp */
	mr	1, 5			/* to->sp: now on the other stack */
	lwz	11, CTX_FLAGS(4)
	andi.	11, 11, SHARED_FPENV
	.endm

	.macro	RESTORE_REGS
	ld	14, 48(1)
	ld	15, 56(1)
	ld	16, 64(1)
	ld	17, 72(1)
	ld	18, 80(1)
	ld	19, 88(1)
	ld	20, 96(1)
	ld	21, 104(1)
	ld	22, 112(1)
	ld	23, 120(1)
	ld	24, 128(1)
	ld	25, 136(1)
	ld	26, 144(1)
	ld	27, 152(1)
	ld	28, 160(1)
	ld	29, 168(1)
	ld	30, 176(1)
	ld	31, 184(1)
	lfd	14, 192(1)
	lfd	15, 200(1)
	lfd	16, 208(1)
	lfd	17, 216(1)
	lfd	18, 224(1)
	lfd	19, 232(1)
	lfd	20, 240(1)
	lfd	21, 248(1)
	lfd	22, 256(1)
	lfd	23, 264(1)
	lfd	24, 272(1)
	lfd	25, 280(1)
	lfd	26, 288(1)
	lfd	27, 296(1)
	lfd	28, 304(1)
	lfd	29, 312(1)
	lfd	30, 320(1)
	lfd	31, 328(1)
	li	9, 336
	lvx	20, 1, 9		/* v20 */
	li	10, 352
	lvx	21, 1, 10		/* v21 */
	li	9, 368
	lvx	22, 1, 9		/* v22 */
	li	10, 384
	lvx	23, 1, 10		/* v23 */
	li	9, 400
	lvx	24, 1, 9		/* v24 */
	li	10, 416
	lvx	25, 1, 10		/* v25 */
	li	9, 432
	lvx	26, 1, 9		/* v26 */
	li	10, 448
	lvx	27, 1, 10		/* v27 */
	li	9, 464
	lvx	28, 1, 9		/* v28 */
	li	10, 480
	lvx	29, 1, 10		/* v29 */
	li	9, 496
	lvx	30, 1, 9		/* v30 */
	li	10, 512
	lvx	31, 1, 10		/* v31 */
	.endm

	.text

/* void kc_ctx_switch(struct kc_ctx *from (r3), struct kc_ctx *to (r4)) */
	.globl	kc_ctx_switch
	.type	kc_ctx_switch, @function
	.p2align 4
kc_ctx_switch:
	.cfi_startproc
	ld	5, CTX_SP(4)		/* to->sp, first: see the header */
	mflr	0
	stdu	1, -FRAME(1)
	.cfi_adjust_cfa_offset FRAME
	std	0, FR_LR(1)
	mfcr	12
	lwz	11, CTX_FLAGS(3)
	std	2, FR_R2(1)
	stw	12, FR_CR(1)
	mfvrsave 6
	andi.	11, 11, SHARED_FPENV
	stw	6, FR_VRSAVE(1)
	bne	0, .Lfrom_shared
	mffs	0
	mfvsrd	8, 0			/* the current FPSCR, as a GPR (no load-hit-store) */
	stfd	0, FR_FPSCR(1)
	SAVE_REGS
	TO_STACK
	bne	0, .Lresume
.Lload_own:				/* r8: FPSCR now */
	ld	7, FR_FPSCR(1)
	cmpd	7, 8
	bne-	.Lload_fpscr
.Lresume:
	lwz	11, FR_VRSAVE(1)
	cmpw	1, 11, 6
	bne-	1, .Lload_vrsave
.Lvrsave_done:
	RESTORE_REGS
	lwz	12, FR_CR(1)
	ld	2, FR_R2(1)
	mtcrf	0x38, 12		/* cr2, cr3, cr4 */
	ld	12, FR_LR(1)
	mtctr	12
	.cfi_remember_state
	addi	1, 1, FRAME
	.cfi_adjust_cfa_offset -FRAME
	bctr				/* not blr: see the header */
	.cfi_restore_state

.Lload_fpscr:
	lfd	0, FR_FPSCR(1)
	mtfsf	0xff, 0
	b	.Lresume
.Lload_vrsave:
	mtvrsave 11
	b	.Lvrsave_done

/* From a context sharing the thread's FP environment: nothing of it saved. */
.Lfrom_shared:
	SAVE_REGS
	TO_STACK
	bne	0, .Lresume
	mffs	0			/* to one with its own FPSCR: compare as above */
	mfvsrd	8, 0
	b	.Lload_own
	.cfi_endproc
	.size	kc_ctx_switch, . - kc_ctx_switch

/*
 * A new context's first instructions: r1 is 32 bytes below the 16-byte
 * aligned top of its stack (a frame header whose back chain is 0), r31 its
 * struct kc_ctx *, r2 the library's TOC.  kc__ctx_entry (src/ctx.c) runs
 * the function and never returns.
 */
	.globl	kc__ctx_start
	.hidden	kc__ctx_start
	.type	kc__ctx_start, @function
	.p2align 4
kc__ctx_start:
	.cfi_startproc
	.cfi_undefined 65		/* LR: unwinders stop here */
	mr	3, 31
	bl	kc__ctx_entry
	nop
	trap
	.cfi_endproc
	.size	kc__ctx_start, . - kc__ctx_start

	.section .note.GNU-stack, "", @progbits
