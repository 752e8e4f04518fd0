/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, ppc64le ELFv2.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills r14-r31 with seed+1..seed+18, f14-f31 with seed+30..seed+47 (as
 *   bits), doubleword 0 of v20-v31 with seed+60..seed+71, r2 (the TOC)
 *   with seed+100 and CR fields 2-4 from seed+90, calls sw(save, to) (a
 *   floor switch: bench/uctx_floor-ppc64le.S, which uses no TOC) and, once
 *   resumed, returns how many of them, and r1, did not come back.  r2 is
 *   its caller's again on return.
 *
 * The fill and the check are regs-ppc64le.inc's.
 */
#include "regs-ppc64le.inc"

#define PATTERN gpr=1, fpr=30, vr=60, vr_both=0, cr=addi, cr_k=90, toc=100

	.text
	.globl	floor_regs_check
	.type	floor_regs_check, @function
floor_regs_check:
	regs_enter
	regs_fill PATTERN
	mtctr	6
	mr	12, 6
	bctrl
	regs_check regs_count, PATTERN
	regs_leave toc=1
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", @progbits
