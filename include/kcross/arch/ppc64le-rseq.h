/* SPDX-License-Identifier: MIT */
/*
 * ppc64le rseq critical sections for the operations in <kcross/pseudocode.h>.
 * Included only through <kcross/rseq-ops.h>.
 *
 * Layout of every section (as on x86-64):
 *   - its struct rseq_cs descriptor in section __rseq_cs (32-byte aligned),
 *     and a pointer to it in __rseq_cs_ptr_array (for debuggers and tools);
 *   - the descriptor's address is formed without absolute relocations (which
 *     would be text relocations in PIE and shared objects; the kernel
 *     selftests' lis/ori@highest sequence has them) and stored with `std` to
 *     rseq->rseq_cs; label 1 starts the section, label 2 follows the commit:
 *       TOC code (ELFv2 up to POWER9):  addis/addi from r2, @toc@ha/@toc@l.
 *         r2 is this module's TOC pointer in every function that uses the
 *         TOC, and every function inlining an operation does: kc_rseq_area()
 *         loads the global kc__rseq_offset through it.
 *       PC-relative code (__PCREL__, -mcpu=power10): pla ...@pcrel, as r2
 *         may then be anything.
 *   - the abort handler in section __rseq_failure, preceded by the signature
 *     0x0fe5000b (`twui r5,11`: a trap never taken, so a stray jump into it
 *     stops there).
 *
 * Branch ranges.  Conditional branches reach +-32 KiB; __rseq_failure is an
 * output section after .text, possibly far away.  So the in-section exits
 * (cpu mismatch, comparison failure, empty list) branch straight to the C
 * labels in the same function, and only the kernel-directed abort goes
 * through __rseq_failure, whose `b` (+-32 MiB, with linker stubs beyond)
 * reaches the C label.  The cpu-mismatch exit thus leaves without passing
 * abort_ip; the result (-1, nothing stored) is the same.
 *
 * Scratch registers: r11 (and r12 for the memcpy index), both volatile in
 * ELFv2, so no save/restore; compares use cr0.
 *
 * Memory operands.  ld/std are DS-form: a displacement must be a multiple
 * of 4.  "Y" asks gcc for such an address, "Z" allows indexed/indirect
 * forms, and %X appends the `x` of the indexed opcode when needed
 * (ld -> ldx); %U would append `u` for update forms, which these
 * constraints never produce.  With -mpcrel gcc may print a global's address
 * as sym@pcrel, which only the prefixed pld/pstd accept, and clang (14) has
 * no "Y": there only "Z" (register or register+register) is used.
 */
#ifndef KCROSS_RSEQ_OPS_H
# error "do not include <kcross/arch/ppc64le-rseq.h> directly; include <kcross/rseq-ops.h>"
#endif
#ifndef KCROSS_ARCH_PPC64LE_RSEQ_H
#define KCROSS_ARCH_PPC64LE_RSEQ_H

#include <kcross/arch/rseq-common.h>

#if defined(__PCREL__) || defined(__clang__)
# define KC__PPC_M64 "Z"	/* 8-byte ld/std operand */
# define KC__PPC_M32 "Z"	/* 4-byte lwz operand */
#else
# define KC__PPC_M64 "YZ"
# define KC__PPC_M32 "m"
#endif

#ifdef __PCREL__
# define KC__RSEQ_CS_ADDR(label)					\
	"pla %%r11, " KC__STR(label) "b@pcrel\n\t"
#else
# define KC__RSEQ_CS_ADDR(label)					\
	"addis %%r11, %%r2, " KC__STR(label) "b@toc@ha\n\t"		\
	"addi %%r11, %%r11, " KC__STR(label) "b@toc@l\n\t"
#endif

#define KC__RSEQ_ARM(label)						\
	KC__RSEQ_CS_ADDR(label)						\
	"std%U[rseq_cs]%X[rseq_cs] %%r11, %[rseq_cs]\n\t"

/* 32-bit compare; a mismatch goes straight to the C abort label. */
#define KC__RSEQ_CPU_CHECK						\
	"lwz%U[cpu_id]%X[cpu_id] %%r11, %[cpu_id]\n\t"			\
	"cmpw %%r11, %[cpu]\n\t"					\
	"bne- %l[abort]\n\t"

#define KC__RSEQ_SIG_EMIT						\
	".balign 4\n\t"							\
	".long " KC__STR(KC_RSEQ_SIG) "\n\t"
#define KC__RSEQ_JUMP "b"

/* 64-bit load/store of a memory operand by name. */
#define KC__LD(reg, op)  "ld%U[" op "]%X[" op "] " reg ", %[" op "]\n\t"
#define KC__STD(reg, op) "std%U[" op "]%X[" op "] " reg ", %[" op "]\n\t"

#define KC__RSEQ_AREA_OPERANDS(a, cpu)					\
	[cpu_id] KC__PPC_M32((a)->cpu_id),				\
	[rseq_cs] KC__PPC_M64((a)->rseq_cs),				\
	[cpu] "r"(cpu)

#define KC__RSEQ_CLOBBERS "memory", "cc", "cr0", "r11"

static inline __attribute__((always_inline))
int kc_rseq_load_add_store(intptr_t *v, intptr_t count, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC__LD("%%r11", "v")
		KC_RSEQ_INJECT_ASM(3)
		"add %%r11, %%r11, %[count]\n\t"
		KC__STD("%%r11", "v")				/* commit */
		KC__RSEQ_EPILOGUE
		: /* no outputs in asm goto */
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] KC__PPC_M64(*v), [count] "r"(count)
		  KC_RSEQ_INJECT_INPUT
		: KC__RSEQ_CLOBBERS KC_RSEQ_INJECT_CLOBBER
		: abort);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
}

static inline __attribute__((always_inline))
int kc_rseq_load_cmp_store(intptr_t *v, intptr_t expect, intptr_t newv, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC__LD("%%r11", "v")
		"cmpd %%r11, %[expect]\n\t"
		"bne- %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		KC__STD("%[newv]", "v")				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] KC__PPC_M64(*v), [expect] "r"(expect), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: KC__RSEQ_CLOBBERS KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

static inline __attribute__((always_inline))
int kc_rseq_load_notnull_load_store(intptr_t *v, ptrdiff_t offset, intptr_t *load, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC__LD("%%r11", "v")
		"cmpdi %%r11, 0\n\t"
		"beq- %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		KC__STD("%%r11", "load")
		/* r11 as the base (RA) operand: never r0, which would read as 0. */
		"ldx %%r11, %%r11, %[offset]\n\t"
		KC_RSEQ_INJECT_ASM(4)
		KC__STD("%%r11", "v")				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] KC__PPC_M64(*v), [offset] "r"(offset), [load] KC__PPC_M64(*load)
		  KC_RSEQ_INJECT_INPUT
		: KC__RSEQ_CLOBBERS KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

static inline __attribute__((always_inline))
int kc_rseq_load_cmp_store_store(intptr_t *v, intptr_t expect, intptr_t *v2,
				 intptr_t newv2, intptr_t newv, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC__LD("%%r11", "v")
		"cmpd %%r11, %[expect]\n\t"
		"bne- %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		KC__STD("%[newv2]", "v2")
		KC_RSEQ_INJECT_ASM(4)
		KC__STD("%[newv]", "v")				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] KC__PPC_M64(*v), [expect] "r"(expect), [v2] KC__PPC_M64(*v2),
		  [newv2] "r"(newv2), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: KC__RSEQ_CLOBBERS KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

static inline __attribute__((always_inline))
int kc_rseq_load_cmp_memcpy_store(intptr_t *v, intptr_t expect, void *dst,
				  const void *src, size_t len, intptr_t newv, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC__LD("%%r11", "v")
		"cmpd %%r11, %[expect]\n\t"
		"bne- %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		/* memcpy byte by byte, index in r12: the copy must stay inside
		 * the section, so no call to memcpy.  src and dst are base
		 * (RA) operands: "b" keeps them out of r0. */
		"cmpdi %[len], 0\n\t"
		"beq 5f\n\t"
		"li %%r12, 0\n\t"
		"6:\n\t"
		"lbzx %%r11, %[src], %%r12\n\t"
		"stbx %%r11, %[dst], %%r12\n\t"
		"addi %%r12, %%r12, 1\n\t"
		"cmpld %%r12, %[len]\n\t"
		"bne 6b\n\t"
		"5:\n\t"
		KC_RSEQ_INJECT_ASM(4)
		KC__STD("%[newv]", "v")				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] KC__PPC_M64(*v), [expect] "r"(expect), [dst] "b"(dst),
		  [src] "b"(src), [len] "r"(len), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: KC__RSEQ_CLOBBERS, "r12" KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

#endif /* KCROSS_ARCH_PPC64LE_RSEQ_H */
