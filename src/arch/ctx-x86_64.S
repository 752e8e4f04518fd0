/* SPDX-License-Identifier: MIT */
/*
 * kc_ctx_switch for x86-64 (System V ABI).  The saved frame, on the stack of
 * the context being suspended; kc_ctx.sp points at its offset 0.  The C
 * mirror (struct kc_ctx_frame in include/kcross/arch/x86_64-ctx.h) repeats
 * these offsets in _Static_asserts: change both or neither.
 *
 *   offset  size  what
 *   ------  ----  -----------------------------------------------------
 *        0     4  MXCSR (control and status)
 *        4     2  x87 control word
 *        6     2  (padding)
 *        8     8  r15
 *       16     8  r14
 *       24     8  r13
 *       32     8  r12
 *       40     8  rbx          a new context: its struct kc_ctx *
 *       48     8  rbp
 *       56     8  resume rip   pushed by the caller's `call`; a new
 *                              context: kc__ctx_start
 *   ------  ----  -----------------------------------------------------
 *       64        frame size; rsp = frame + 64 once resumed (the SysV
 *                 value after a `ret`: 16-byte aligned + 8 at a call
 *                 site, 16-byte aligned at kc__ctx_start)
 *
 * Not saved, because the ABI lets a call destroy them: rax rcx rdx rsi rdi
 * r8-r11, every xmm/ymm/zmm register, the x87 stack and status word, rflags
 * (DF is clear at every call and stays so).  That is all "skip work that is
 * not needed" amounts to here, plus: the x87 control word is stored every
 * time and loaded (fldcw, which serialises the x87 unit) only when the
 * resumed context's differs.  MXCSR is stored and loaded every time:
 * comparing first means reading back what stmxcsr has just stored, and on
 * the machine this was measured on (AMD EPYC, KVM guest) that read-back cost
 * more than ldmxcsr itself (round trip 12 ns with the compare, 9.4 ns
 * without; 6 ns with no FP control state at all).
 *
 * A context that shares the thread's FP environment (kc_ctx_share_fpenv,
 * KC_CTX_SHARED_FPENV in kc_ctx.flags) promised not to change MXCSR or the
 * x87 control word: leaving it stores neither (its frame's two slots are
 * stale), resuming it loads neither.  The two tests are each one fused
 * test-and-branch on the cache line that holds kc_ctx.sp; the paths are
 * laid out so that both of the common cases, no context sharing and both
 * sharing, run straight through after their first branch.  A switch from a
 * sharing context to one with its own state reads the x87 control word
 * (fnstcw, below the resumed frame) for the compare the usual path has.
 *
 * to->sp is loaded first, before anything is stored: it is the head of the
 * chain every instruction after the switch depends on, and loaded after the
 * frame's stores it waited on them.  On an Intel Xeon (KVM guest) a round
 * trip with no FP control state took 17.6 TSC ticks with the load after the
 * stores and 8.7 with it first (the floor, which gets the stack pointer in
 * a register: 7-8); with MXCSR and the x87 control word it went from 8.5 to
 * 6.8 ns (docs/api.md).  `to` is never `from` (a running context is not
 * suspended), so the frame stored cannot be the one loaded.
 *
 * The resume address is popped and jumped to, not `ret`urned to: the return
 * stack buffer's top entry is this call's own return address, in the context
 * being left, so a `ret` into the other context would mispredict on every
 * switch; an indirect jmp is predicted from the branch target buffer (with
 * history), which learns a ping-pong's alternating targets.  The call's RSB
 * entry is left behind; the RSB is a ring and loses nothing by it.
 *
 * No CET shadow stack support: this file carries no IBT/SHSTK property note,
 * so a program that links it is not marked for them.
 */
#define FR_MXCSR	0
#define FR_X87CW	4
#define FR_R15		8
#define FR_R14		16
#define FR_R13		24
#define FR_R12		32
#define FR_RBX		40
#define FR_RBP		48
#define FR_RIP		56
#define FRAME		64

/* struct kc_ctx (include/kcross/ctx.h; src/ctx.c asserts these) */
#define CTX_SP		0
#define CTX_FLAGS	8
#define SHARED_FPENV	0x8		/* KC_CTX_SHARED_FPENV */

	.macro	SAVE_GPRS
	movq	%r15, FR_R15(%rsp)
	movq	%r14, FR_R14(%rsp)
	movq	%r13, FR_R13(%rsp)
	movq	%r12, FR_R12(%rsp)
	movq	%rbx, FR_RBX(%rsp)
	movq	%rbp, FR_RBP(%rsp)
	.endm

/* from->sp stored, onto to's stack; ZF clear when `to` shares the FP environment */
	.macro	TO_STACK
	movq	%rsp, CTX_SP(%rdi)		/* from->sp */
	movq	%rax, %rsp			/* to->sp: now on the other stack */
	testb	$SHARED_FPENV, CTX_FLAGS(%rsi)
	.endm

/* Restore and resume; the CFA rule stays the one of the frame's body for
 * the code after it (each use ends a path). */
	.macro	RESUME
	movq	FR_R15(%rsp), %r15
	movq	FR_R14(%rsp), %r14
	movq	FR_R13(%rsp), %r13
	movq	FR_R12(%rsp), %r12
	movq	FR_RBX(%rsp), %rbx
	movq	FR_RBP(%rsp), %rbp
	movq	FR_RIP(%rsp), %rcx
	.cfi_remember_state
	leaq	FRAME(%rsp), %rsp
	.cfi_adjust_cfa_offset -(FRAME - 8)
	jmp	*%rcx				/* not ret: see the header */
	.cfi_restore_state
	.endm

	.text

/* void kc_ctx_switch(struct kc_ctx *from (rdi), struct kc_ctx *to (rsi)) */
	.globl	kc_ctx_switch
	.type	kc_ctx_switch, @function
	.p2align 4
kc_ctx_switch:
	.cfi_startproc
	movq	CTX_SP(%rsi), %rax		/* to->sp, first: see the header */
	subq	$(FRAME - 8), %rsp		/* the call pushed FR_RIP */
	.cfi_adjust_cfa_offset FRAME - 8
	testb	$SHARED_FPENV, CTX_FLAGS(%rdi)
	jnz	.Lfrom_shared
	stmxcsr	FR_MXCSR(%rsp)
	fnstcw	FR_X87CW(%rsp)
	SAVE_GPRS
	movzwl	FR_X87CW(%rsp), %edx		/* same-size reload: store-forwarded */
	TO_STACK
	jnz	.Lresume
.Lload_own:					/* edx: the x87 control word now */
	ldmxcsr	FR_MXCSR(%rsp)
	cmpw	FR_X87CW(%rsp), %dx
	jne	.Lload_cw
.Lresume:
	RESUME

.Lload_cw:
	fldcw	FR_X87CW(%rsp)
	jmp	.Lresume

/* From a context sharing the thread's FP environment: nothing of it saved. */
.Lfrom_shared:
	SAVE_GPRS
	TO_STACK
	jz	.Lshared_to_own
	RESUME

.Lshared_to_own:
	fnstcw	-8(%rsp)			/* below the frame: free stack */
	movzwl	-8(%rsp), %edx
	jmp	.Lload_own
	.cfi_endproc
	.size	kc_ctx_switch, . - kc_ctx_switch

/*
 * A new context's first instructions: rsp is the 16-byte aligned top of its
 * stack, rbx its struct kc_ctx *.  kc__ctx_entry (src/ctx.c) runs the
 * function and never returns.  The return address is marked undefined so
 * that unwinders and debuggers stop here.
 */
	.globl	kc__ctx_start
	.hidden	kc__ctx_start
	.type	kc__ctx_start, @function
	.p2align 4
kc__ctx_start:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%rbx, %rdi
	call	kc__ctx_entry
	ud2
	.cfi_endproc
	.size	kc__ctx_start, . - kc__ctx_start

	.section .note.GNU-stack, "", @progbits
