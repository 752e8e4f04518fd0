/* SPDX-License-Identifier: MIT */
/*
 * The uctx suite's floor switch (harness/bench/uctx_floor-ARCH.S), both
 * ways of resuming (indirect jump, return), keeps what the ABI says a call
 * keeps: two contexts switch back and forth through an asm helper
 * (uctx_floor_regs-ARCH.S) that fills every callee-saved register (integer,
 * FP and vector where the ABI has them; the TOC and CR fields on ppc64le)
 * with its own pattern before the switch and checks them after, on both
 * sides, with a new pattern every round.  Also: the new context starts on a
 * 16-byte aligned stack as a called function would, and runs once a round.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "tap.h"

#define ROUNDS 1000
#define STACK (64 * 1024)

void kh_uctx_floor_switch(void **save_sp, void *to_sp);
void kh_uctx_floor_switch_ret(void **save_sp, void *to_sp);
void *kh_uctx_floor_make(void *stack_top, void (*fn)(void));
unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
			       void (*sw)(void **save, void *to));

static void *a_sp, *b_sp;
static void (*sw)(void **, void *);
static unsigned long b_bad, b_rounds;
static uintptr_t b_entry_misalign = 99;

static void b_main(void)
{
	char probe[16] __attribute__((aligned(16)));
	uintptr_t p = (uintptr_t)probe;

	__asm__ __volatile__("" : "+r"(p));	/* the compiler assumes alignment */
	b_entry_misalign = p & 15;
	for (;;) {
		b_rounds++;
		b_bad += floor_regs_check(&b_sp, a_sp, 0x5a5a0000ul + b_rounds * 1000, sw);
	}
}

static void run(const char *name, void (*fn)(void **, void *))
{
	void *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	unsigned long a_bad = 0;

	if (stack == MAP_FAILED) {
		tap_ok(0, "%s: cannot map a stack", name);
		return;
	}
	sw = fn;
	b_bad = b_rounds = 0;
	b_entry_misalign = 99;
	/* An odd top: make must align it. */
	b_sp = kh_uctx_floor_make((char *)stack + STACK - 24, b_main);
	for (unsigned long i = 0; i < ROUNDS; i++)
		a_bad += floor_regs_check(&a_sp, b_sp, 0x1230000ul + i * 1000, fn);
	tap_ok(a_bad == 0, "%s: A's callee-saved registers and sp came back (%lu lost)", name,
	       a_bad);
	/* B's last round is checked when B resumes: once more. */
	floor_regs_check(&a_sp, b_sp, 0x777, fn);
	tap_ok(b_bad == 0, "%s: B's callee-saved registers and sp came back (%lu lost)", name,
	       b_bad);
	tap_ok(b_rounds == ROUNDS + 1, "%s: B ran once a round (%lu in %d)", name, b_rounds,
	       ROUNDS + 1);
	tap_ok(b_entry_misalign == 0, "%s: B entered on a 16-byte aligned stack (off by %lu)",
	       name, (unsigned long)b_entry_misalign);
	munmap(stack, STACK);
}

int main(void)
{
	run("kh_uctx_floor_switch", kh_uctx_floor_switch);
	run("kh_uctx_floor_switch_ret", kh_uctx_floor_switch_ret);
	return tap_done();
}
