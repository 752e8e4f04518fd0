/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_uctx_floor.c's register check, x86-64 SysV.
 *
 * unsigned long floor_regs_check(void **save, void *to, unsigned long seed,
 *                                void (*sw)(void **save, void *to))
 *   fills rbx rbp r12-r15 with seed+1..seed+6, calls sw(save, to) (a floor
 *   switch: bench/uctx_floor-x86_64.S) and, once resumed, returns how many
 *   of them, and rsp, did not come back (0: all did).
 *
 * The fill and the check are regs-x86_64.inc's.
 */
#include "regs-x86_64.inc"

	.text
	.globl	floor_regs_check
	.type	floor_regs_check, @function
floor_regs_check:
	regs_enter
	regs_fill
	call	*%rcx
	regs_check regs_count
	regs_leave
	.size	floor_regs_check, . - floor_regs_check

	.section .note.GNU-stack, "", @progbits
