/* SPDX-License-Identifier: MIT */
/*
 * x86-64 SysV: the frame kc_ctx_switch leaves on a suspended context's stack
 * (the C mirror of the table at the top of src/arch/ctx-x86_64.S; the
 * _Static_asserts repeat that table).  Included only through <kcross/ctx.h>.
 *
 * kc_ctx.sp points at the frame; rsp itself is the frame's address + 64
 * once resumed (the resume address is popped, not returned to).
 */
#ifndef KCROSS_CTX_H
# error "do not include <kcross/arch/x86_64-ctx.h> directly; include <kcross/ctx.h>"
#endif
#ifndef KCROSS_ARCH_X86_64_CTX_H
#define KCROSS_ARCH_X86_64_CTX_H

#include <stddef.h>
#include <stdint.h>

struct kc_ctx_frame {
	uint32_t mxcsr;		/*  0 */
	uint16_t x87_cw;	/*  4 */
	uint16_t pad;		/*  6 */
	uint64_t r15;		/*  8 */
	uint64_t r14;		/* 16 */
	uint64_t r13;		/* 24 */
	uint64_t r12;		/* 32 */
	uint64_t rbx;		/* 40: a new context's struct kc_ctx * */
	uint64_t rbp;		/* 48 */
	uint64_t rip;		/* 56: resume address (a new context: kc__ctx_start) */
};
#define KC_CTX_FRAME_SIZE 64
/* Bytes between the top of a new context's stack and its frame's end. */
#define KC_CTX_TOP_RESERVE 0

_Static_assert(offsetof(struct kc_ctx_frame, mxcsr) == 0, "ctx-x86_64.S table: MXCSR");
_Static_assert(offsetof(struct kc_ctx_frame, x87_cw) == 4, "ctx-x86_64.S table: x87 CW");
_Static_assert(offsetof(struct kc_ctx_frame, r15) == 8, "ctx-x86_64.S table: r15");
_Static_assert(offsetof(struct kc_ctx_frame, r14) == 16, "ctx-x86_64.S table: r14");
_Static_assert(offsetof(struct kc_ctx_frame, r13) == 24, "ctx-x86_64.S table: r13");
_Static_assert(offsetof(struct kc_ctx_frame, r12) == 32, "ctx-x86_64.S table: r12");
_Static_assert(offsetof(struct kc_ctx_frame, rbx) == 40, "ctx-x86_64.S table: rbx");
_Static_assert(offsetof(struct kc_ctx_frame, rbp) == 48, "ctx-x86_64.S table: rbp");
_Static_assert(offsetof(struct kc_ctx_frame, rip) == 56, "ctx-x86_64.S table: resume rip");
_Static_assert(sizeof(struct kc_ctx_frame) == KC_CTX_FRAME_SIZE, "ctx-x86_64.S table: size");

/* A new context's frame: entry in kc__ctx_start with the context in rbx and
 * the floating-point control state of the caller. */
static inline void kc__ctx_frame_init(struct kc_ctx_frame *f, void *ctx, void (*start)(void))
{
	uint32_t mxcsr;
	uint16_t cw;

	__asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
	f->mxcsr = mxcsr;
	f->x87_cw = cw;
	f->rbx = (uint64_t)(uintptr_t)ctx;
	f->rip = (uint64_t)(uintptr_t)start;
}

#endif /* KCROSS_ARCH_X86_64_CTX_H */
