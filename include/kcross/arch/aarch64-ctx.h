/* SPDX-License-Identifier: MIT */
/*
 * aarch64 (AAPCS64): the frame kc_ctx_switch leaves on a suspended context's
 * stack (the C mirror of the table at the top of src/arch/ctx-aarch64.S;
 * the _Static_asserts repeat that table).  Included only through
 * <kcross/ctx.h>.  sp = frame + 176 once resumed.
 */
#ifndef KCROSS_CTX_H
# error "do not include <kcross/arch/aarch64-ctx.h> directly; include <kcross/ctx.h>"
#endif
#ifndef KCROSS_ARCH_AARCH64_CTX_H
#define KCROSS_ARCH_AARCH64_CTX_H

#include <stddef.h>
#include <stdint.h>

struct kc_ctx_frame {
	uint64_t x19_x28[10];	/*   0: x19 (a new context: its struct kc_ctx *) .. x28 */
	uint64_t x29;		/*  80: frame pointer */
	uint64_t x30;		/*  88: lr, the resume address (a new context: kc__ctx_start) */
	double d8_d15[8];	/*  96: low 64 bits of v8-v15 */
	uint64_t fpcr;		/* 160 */
	uint64_t pad;		/* 168 */
};
#define KC_CTX_FRAME_SIZE 176
#define KC_CTX_TOP_RESERVE 0

_Static_assert(offsetof(struct kc_ctx_frame, x19_x28) == 0, "ctx-aarch64.S table: x19");
_Static_assert(offsetof(struct kc_ctx_frame, x29) == 80, "ctx-aarch64.S table: x29");
_Static_assert(offsetof(struct kc_ctx_frame, x30) == 88, "ctx-aarch64.S table: x30");
_Static_assert(offsetof(struct kc_ctx_frame, d8_d15) == 96, "ctx-aarch64.S table: d8");
_Static_assert(offsetof(struct kc_ctx_frame, fpcr) == 160, "ctx-aarch64.S table: FPCR");
_Static_assert(sizeof(struct kc_ctx_frame) == KC_CTX_FRAME_SIZE, "ctx-aarch64.S table: size");

static inline void kc__ctx_frame_init(struct kc_ctx_frame *f, void *ctx, void (*start)(void))
{
	uint64_t fpcr;

	__asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
	f->fpcr = fpcr;
	f->x19_x28[0] = (uint64_t)(uintptr_t)ctx;
	f->x30 = (uint64_t)(uintptr_t)start;
}

#endif /* KCROSS_ARCH_AARCH64_CTX_H */
