/* SPDX-License-Identifier: MIT */
/*
 * test_ctx_toc A.so B.so: two contexts, one running in each shared object,
 * switch to each other with the objects' own copies of kc_ctx_switch (see
 * CMakeLists.txt here).  Each side checks after every switch that r2 is its
 * object's TOC (ppc64le) and that a variable it reaches through the TOC has
 * its own value.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <kcross/ctx.h>
#include "tap.h"

struct toc_arg {
	struct kc_ctx *self, *peer;
	int rounds;
	int bad_toc, bad_mark, turns;
	uintptr_t toc;
};

#define ROUNDS 500

int main(int argc, char **argv)
{
	static struct kc_ctx main_ctx, ca, cb;
	struct toc_arg a = { &ca, &cb, ROUNDS, 0, 0, 0, 0 };
	struct toc_arg b = { &cb, &ca, ROUNDS, 0, 0, 0, 0 };
	void (*body[2])(void *);
	void *h[2];

	if (argc != 3)
		tap_skip_all("usage: test_ctx_toc A.so B.so (ctest passes the two objects)");
	for (int i = 0; i < 2; i++) {
		h[i] = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
		if (!h[i]) {
			tap_ok(0, "dlopen %s: %s", argv[1 + i], dlerror());
			return tap_done();
		}
		body[i] = (void (*)(void *))dlsym(h[i], "toc_peer_body");
		if (!body[i]) {
			tap_ok(0, "dlsym toc_peer_body in %s: %s", argv[1 + i], dlerror());
			return tap_done();
		}
	}
	tap_ok(body[0] != body[1], "two objects, two copies of the code");
	if (kc_ctx_make(&ca, NULL, 64 * 1024, body[0], &a, &main_ctx) ||
	    kc_ctx_make(&cb, NULL, 64 * 1024, body[1], &b, &main_ctx)) {
		tap_ok(0, "kc_ctx_make");
		return tap_done();
	}
	/* A and B switch to each other; A ends first (back to main), then B. */
	kc_ctx_switch(&main_ctx, &ca);
	if (!kc_ctx_done(&cb))
		kc_ctx_switch(&main_ctx, &cb);
	tap_ok(kc_ctx_done(&ca) && kc_ctx_done(&cb) && a.turns == ROUNDS && b.turns == ROUNDS,
	       "both sides ran %d rounds and ended (%d, %d)", ROUNDS, a.turns, b.turns);
#if defined(KC_ARCH_PPC64LE)
	tap_ok(a.toc != 0 && b.toc != 0 && a.toc != b.toc,
	       "the objects have different TOCs (%#lx, %#lx)", (unsigned long)a.toc,
	       (unsigned long)b.toc);
#endif
	tap_ok(a.bad_toc == 0 && b.bad_toc == 0,
	       "r2 is each object's own TOC after every switch (%d, %d wrong)", a.bad_toc, b.bad_toc);
	tap_ok(a.bad_mark == 0 && b.bad_mark == 0,
	       "each side reads its own object's variable after every switch (%d, %d wrong)",
	       a.bad_mark, b.bad_mark);
	kc_ctx_free(&ca);
	kc_ctx_free(&cb);
	return tap_done();
}
