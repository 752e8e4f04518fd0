/* SPDX-License-Identifier: MIT */
/*
 * One side of test_ctx_toc, built twice (ctx_toc_a, ctx_toc_b), each with
 * its own copy of libkcross and, on ppc64le, its own TOC.
 */
#include <stdint.h>

#include <kcross/ctx.h>

struct toc_arg {
	struct kc_ctx *self, *peer;
	int rounds;
	int bad_toc, bad_mark, turns;
	uintptr_t toc;		/* r2 at entry (ppc64le), 0 elsewhere */
};

/* Reached through the TOC on ppc64le: with the other object's r2 it reads
 * the other object's variable (the same offset, the other value). */
volatile long peer_mark = PEER_MARK;

static uintptr_t current_toc(void)
{
	uintptr_t toc = 0;
#if defined(KC_ARCH_PPC64LE)
	__asm__ __volatile__("mr %0, 2" : "=r"(toc));
#endif
	return toc;
}

__attribute__((visibility("default"))) void toc_peer_body(void *p);

void toc_peer_body(void *p)
{
	struct toc_arg *a = p;

	a->toc = current_toc();
	for (int i = 0; i < a->rounds; i++) {
		kc_ctx_switch(a->self, a->peer);	/* this object's own copy */
		a->bad_toc += current_toc() != a->toc;
		a->bad_mark += peer_mark != PEER_MARK;
		a->turns++;
	}
}
