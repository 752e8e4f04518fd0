/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, aarch64 AAPCS64.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills x19-x29 with seed+1..seed+11 and d8-d15 with seed+20..seed+27,
 *   calls sw(save, to) (a floor switch: bench/uctx_floor-aarch64.S) and,
 *   once resumed, returns how many of them, and sp, did not come back.
 *
 * The fill and the check are regs-aarch64.inc's.
 */
#include "regs-aarch64.inc"

	.text
	.globl	floor_regs_check
	.type	floor_regs_check, %function
floor_regs_check:
	regs_enter
	regs_fill
	blr	x3
	regs_check regs_count
	regs_leave
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", %progbits
