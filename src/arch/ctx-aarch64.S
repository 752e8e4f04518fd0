/* SPDX-License-Identifier: MIT */
/*
 * kc_ctx_switch for aarch64 (AAPCS64).  The saved frame, on the stack of the
 * context being suspended; kc_ctx.sp points at its offset 0.  The C mirror
 * (struct kc_ctx_frame in include/kcross/arch/aarch64-ctx.h) repeats these
 * offsets in _Static_asserts: change both or neither.
 *
 *   offset  size  what
 *   ------  ----  -----------------------------------------------------
 *        0    80  x19-x28      x19 of a new context: its struct kc_ctx *
 *       80     8  x29 (fp)
 *       88     8  x30 (lr)     the resume address; a new context:
 *                              kc__ctx_start
 *       96    64  d8-d15       (AAPCS64 keeps only the low 64 bits of
 *                              v8-v15 across a call)
 *      160     8  FPCR
 *      168     8  (padding)
 *   ------  ----  -----------------------------------------------------
 *      176        frame size (16-byte multiple: sp stays aligned);
 *                 sp = frame + 176 once resumed
 *
 * FPCR.  AAPCS64 treats FPCR's mode fields (rounding, flush-to-zero,
 * default NaN, trap enables) as state a function must leave as it found
 * them unless changing them is what it is for (fesetround): to a caller of
 * kc_ctx_switch they are preserved, so each context keeps its own.  FPSR
 * (the cumulative exception flags) is a status register a call may change:
 * not saved.  FPCR is read every time (cheap) and written only when the
 * resumed context's differs (an FPCR write can synchronise the FP pipeline).
 *
 * A context that shares the thread's FP environment (kc_ctx_share_fpenv,
 * KC_CTX_SHARED_FPENV in kc_ctx.flags) promised not to change FPCR: leaving
 * it does not read FPCR (its frame's slot is stale), resuming it does not
 * write it.  Each test is one load and a tbnz on the 16 bytes that hold
 * kc_ctx.sp; a switch from a sharing context to one with its own state
 * reads FPCR there for the same compare.
 *
 * to->sp is loaded first, before the frame is stored: it is the head of
 * the chain every instruction after the switch depends on, and a load
 * issued after the stores waits on them (x86-64 measured: a round trip
 * twice as long; see ctx-x86_64.S).  `to` is never `from`: a running
 * context is not suspended.
 *
 * Not saved because a call may destroy them: x0-x18 (x18 is the platform
 * register, unused by Linux user space), v0-v7, v16-v31 and the upper
 * halves of v8-v15, NZCV, FPSR.
 *
 * The resume address is reached with `br x30`, not `ret`: the return stack
 * predictor's top entry is this call's own return address, in the context
 * being left, so `ret` would mispredict on every switch; `br` is predicted
 * from the indirect branch predictor, which learns a ping-pong's targets.
 * No BTI/PAC: this file carries no GNU property note, so a program linking
 * it is not marked for BTI (a `br` to a return site would need a landing
 * pad there).
 */
#define FR_X19		0
#define FR_X29		80
#define FR_D8		96
#define FR_FPCR		160
#define FRAME		176

/* struct kc_ctx (include/kcross/ctx.h; src/ctx.c asserts these) */
#define CTX_SP		0
#define CTX_FLAGS	8
#define SHARED_FPENV_BIT 3		/* KC_CTX_SHARED_FPENV, 0x8 */

	.macro	SAVE_REGS
	stp	x19, x20, [sp, #FR_X19 + 0]
	stp	x21, x22, [sp, #FR_X19 + 16]
	stp	x23, x24, [sp, #FR_X19 + 32]
	stp	x25, x26, [sp, #FR_X19 + 48]
	stp	x27, x28, [sp, #FR_X19 + 64]
	stp	x29, x30, [sp, #FR_X29]
	stp	d8, d9, [sp, #FR_D8 + 0]
	stp	d10, d11, [sp, #FR_D8 + 16]
	stp	d12, d13, [sp, #FR_D8 + 32]
	stp	d14, d15, [sp, #FR_D8 + 48]
	.endm

/* from->sp stored, onto to's stack; w12 `to`'s flags */
	.macro	TO_STACK
	mov	x11, sp
	str	x11, [x0, #CTX_SP]		/* from->sp */
	mov	sp, x10				/* now on the other stack */
	ldr	w12, [x1, #CTX_FLAGS]
	.endm

/* Restore and resume; the CFA rule stays the frame body's for the code
 * after it (each use ends a path). */
	.macro	RESUME
	ldp	x19, x20, [sp, #FR_X19 + 0]
	ldp	x21, x22, [sp, #FR_X19 + 16]
	ldp	x23, x24, [sp, #FR_X19 + 32]
	ldp	x25, x26, [sp, #FR_X19 + 48]
	ldp	x27, x28, [sp, #FR_X19 + 64]
	ldp	x29, x30, [sp, #FR_X29]
	ldp	d8, d9, [sp, #FR_D8 + 0]
	ldp	d10, d11, [sp, #FR_D8 + 16]
	ldp	d12, d13, [sp, #FR_D8 + 32]
	ldp	d14, d15, [sp, #FR_D8 + 48]
	.cfi_remember_state
	add	sp, sp, #FRAME
	.cfi_adjust_cfa_offset -FRAME
	br	x30				/* not ret: see the header */
	.cfi_restore_state
	.endm

	.text

/* void kc_ctx_switch(struct kc_ctx *from (x0), struct kc_ctx *to (x1)) */
	.globl	kc_ctx_switch
	.type	kc_ctx_switch, %function
	.p2align 4
kc_ctx_switch:
	.cfi_startproc
	ldr	x10, [x1, #CTX_SP]		/* to->sp, first: see the header */
	sub	sp, sp, #FRAME
	.cfi_adjust_cfa_offset FRAME
	ldr	w12, [x0, #CTX_FLAGS]
	tbnz	w12, #SHARED_FPENV_BIT, .Lfrom_shared
	SAVE_REGS
	mrs	x9, fpcr
	str	x9, [sp, #FR_FPCR]
	TO_STACK
	tbnz	w12, #SHARED_FPENV_BIT, .Lresume
.Lload_own:					/* x9: FPCR now */
	ldr	x11, [sp, #FR_FPCR]
	cmp	x11, x9
	b.ne	.Lload_fpcr
.Lresume:
	RESUME

.Lload_fpcr:
	msr	fpcr, x11
	b	.Lresume

/* From a context sharing the thread's FP environment: nothing of it saved. */
.Lfrom_shared:
	SAVE_REGS
	TO_STACK
	tbz	w12, #SHARED_FPENV_BIT, .Lshared_to_own
	RESUME

.Lshared_to_own:
	mrs	x9, fpcr
	b	.Lload_own
	.cfi_endproc
	.size	kc_ctx_switch, . - kc_ctx_switch

/*
 * A new context's first instructions: sp is the 16-byte aligned top of its
 * stack, x19 its struct kc_ctx *, x29 zero (the end of the frame chain).
 * kc__ctx_entry (src/ctx.c) runs the function and never returns.
 */
	.globl	kc__ctx_start
	.hidden	kc__ctx_start
	.type	kc__ctx_start, %function
	.p2align 4
kc__ctx_start:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x19
	bl	kc__ctx_entry
	brk	#0x3c
	.cfi_endproc
	.size	kc__ctx_start, . - kc__ctx_start

	.section .note.GNU-stack, "", %progbits
