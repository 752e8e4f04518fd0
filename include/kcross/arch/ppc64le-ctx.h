/* SPDX-License-Identifier: MIT */
/*
 * ppc64le (ELFv2): the frame kc_ctx_switch leaves on a suspended context's
 * stack (the C mirror of the table at the top of src/arch/ctx-ppc64le.S;
 * the _Static_asserts repeat that table).  Included only through
 * <kcross/ctx.h>.  r1 = frame + 528 once resumed.
 */
#ifndef KCROSS_CTX_H
# error "do not include <kcross/arch/ppc64le-ctx.h> directly; include <kcross/ctx.h>"
#endif
#ifndef KCROSS_ARCH_PPC64LE_CTX_H
#define KCROSS_ARCH_PPC64LE_CTX_H

#include <stddef.h>
#include <stdint.h>

struct kc_ctx_frame {
	uint64_t back_chain;	/*   0: the suspended caller's r1 */
	uint32_t cr;		/*   8: CR (cr2-cr4 restored) */
	uint32_t pad0;
	uint64_t lr;		/*  16: the resume address (a new context: kc__ctx_start) */
	uint64_t r2;		/*  24: TOC */
	uint32_t vrsave;	/*  32 */
	uint32_t pad1;
	uint64_t fpscr;		/*  40: as mffs leaves it in an FPR */
	uint64_t r14_r31[18];	/*  48: r31 of a new context: its struct kc_ctx * */
	double f14_f31[18];	/* 192 */
	uint64_t v20_v31[12][2];	/* 336: 16-byte aligned (r1 is) */
};
#define KC_CTX_FRAME_SIZE 528
/* A new context's r1 points at a 32-byte frame header above its first
 * frame (ELFv2: a callee stores its LR at 16(r1) of its caller). */
#define KC_CTX_TOP_RESERVE 32

_Static_assert(offsetof(struct kc_ctx_frame, back_chain) == 0, "ctx-ppc64le.S table: back chain");
_Static_assert(offsetof(struct kc_ctx_frame, cr) == 8, "ctx-ppc64le.S table: CR");
_Static_assert(offsetof(struct kc_ctx_frame, lr) == 16, "ctx-ppc64le.S table: LR");
_Static_assert(offsetof(struct kc_ctx_frame, r2) == 24, "ctx-ppc64le.S table: r2");
_Static_assert(offsetof(struct kc_ctx_frame, vrsave) == 32, "ctx-ppc64le.S table: VRSAVE");
_Static_assert(offsetof(struct kc_ctx_frame, fpscr) == 40, "ctx-ppc64le.S table: FPSCR");
_Static_assert(offsetof(struct kc_ctx_frame, r14_r31) == 48, "ctx-ppc64le.S table: r14");
_Static_assert(offsetof(struct kc_ctx_frame, f14_f31) == 192, "ctx-ppc64le.S table: f14");
_Static_assert(offsetof(struct kc_ctx_frame, v20_v31) == 336, "ctx-ppc64le.S table: v20");
_Static_assert(sizeof(struct kc_ctx_frame) == KC_CTX_FRAME_SIZE, "ctx-ppc64le.S table: size");

static inline void kc__ctx_frame_init(struct kc_ctx_frame *f, void *ctx, void (*start)(void))
{
	double fpscr;
	uint64_t toc, bits;

	__asm__ __volatile__("mffs %0" : "=d"(fpscr));
	__asm__("mr %0, 2" : "=r"(toc));
	__builtin_memcpy(&bits, &fpscr, 8);
	f->fpscr = bits;
	f->r2 = toc;		/* the library's TOC: kc__ctx_start calls into it */
	f->r14_r31[17] = (uint64_t)(uintptr_t)ctx;
	f->lr = (uint64_t)(uintptr_t)start;
	/* back chain 0: the frame chain ends here */
}

#endif /* KCROSS_ARCH_PPC64LE_CTX_H */
