/* SPDX-License-Identifier: MIT */
/*
 * aarch64 rseq critical sections for the operations in <kcross/pseudocode.h>.
 * Included only through <kcross/rseq-ops.h>.
 *
 * Layout of every section (as on x86-64):
 *   - its struct rseq_cs descriptor in section __rseq_cs (32-byte aligned),
 *     and a pointer to it in __rseq_cs_ptr_array (for debuggers and tools);
 *   - `adrp/add` forms the descriptor's address PC-relatively (no text
 *     relocation in PIE or shared objects), `str` arms it in rseq->rseq_cs;
 *     label 1 starts the section, label 2 follows the commit;
 *   - the abort handler in section __rseq_failure, preceded by the
 *     signature emitted with .inst (code endianness: the kernel compares the
 *     32-bit word at abort_ip - 4, and a stray jump into it hits brk #0x45e0).
 *
 * Branch ranges.  b.cond, cbz and cbnz reach +-1 MiB and the linker makes no
 * veneers for them, while __rseq_failure is an output section of its own
 * after .text, possibly far away.  So the in-section exits (cpu mismatch,
 * comparison failure, empty list) branch straight to the C labels in the
 * same function, and only the kernel-directed abort goes through
 * __rseq_failure, whose `b` (+-128 MiB, veneered) reaches the C label from
 * anywhere.  The cpu-mismatch exit therefore leaves without passing abort_ip;
 * the result (-1, nothing stored) is the same.
 *
 * Scratch registers: x15 (and x14 for the memcpy index), clobbered.
 * Memory operands use "Qo" (base register, or base plus offset) so that the
 * 64-bit ldr/str and 32-bit ldr accept whatever address gcc picks.
 */
#ifndef KCROSS_RSEQ_OPS_H
# error "do not include <kcross/arch/aarch64-rseq.h> directly; include <kcross/rseq-ops.h>"
#endif
#ifndef KCROSS_ARCH_AARCH64_RSEQ_H
#define KCROSS_ARCH_AARCH64_RSEQ_H

#ifdef __AARCH64EB__
/* Big-endian data with little-endian code: the signature word the kernel
 * reads would not be KC_RSEQ_SIG.  Not a kcross target. */
# error "kcross rseq operations: big-endian aarch64 is not supported"
#endif

#include <kcross/arch/rseq-common.h>

/* The descriptor's address, PC-relative, stored to rseq->rseq_cs. */
#define KC__RSEQ_ARM(label)						\
	"adrp x15, " KC__STR(label) "b\n\t"				\
	"add x15, x15, :lo12:" KC__STR(label) "b\n\t"			\
	"str x15, %[rseq_cs]\n\t"

/* 32-bit compare; a mismatch goes straight to the C abort label. */
#define KC__RSEQ_CPU_CHECK						\
	"ldr w15, %[cpu_id]\n\t"					\
	"cmp w15, %w[cpu]\n\t"						\
	"b.ne %l[abort]\n\t"

/* .inst: code endianness, the word the kernel reads. */
#define KC__RSEQ_SIG_EMIT						\
	".balign 4\n\t"							\
	".inst " KC__STR(KC_RSEQ_SIG) "\n\t"
#define KC__RSEQ_JUMP "b"

#define KC__RSEQ_AREA_OPERANDS(a, cpu)					\
	[cpu_id] "Qo"((a)->cpu_id), [rseq_cs] "Qo"((a)->rseq_cs),	\
	[cpu] "r"(cpu)

static inline __attribute__((always_inline))
int kc_rseq_load_add_store(intptr_t *v, intptr_t count, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		"ldr x15, %[v]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"add x15, x15, %[count]\n\t"
		"str x15, %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		: /* no outputs in asm goto */
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "Qo"(*v), [count] "r"(count)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "x15" KC_RSEQ_INJECT_CLOBBER
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
		"ldr x15, %[v]\n\t"
		"cmp x15, %[expect]\n\t"
		"b.ne %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"str %[newv], %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "Qo"(*v), [expect] "r"(expect), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "x15" KC_RSEQ_INJECT_CLOBBER
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
		"ldr x15, %[v]\n\t"
		"cbz x15, %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"str x15, %[load]\n\t"
		"ldr x15, [x15, %[offset]]\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"str x15, %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "Qo"(*v), [offset] "r"(offset), [load] "Qo"(*load)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "x15" KC_RSEQ_INJECT_CLOBBER
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
		"ldr x15, %[v]\n\t"
		"cmp x15, %[expect]\n\t"
		"b.ne %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"str %[newv2], %[v2]\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"str %[newv], %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "Qo"(*v), [expect] "r"(expect), [v2] "Qo"(*v2),
		  [newv2] "r"(newv2), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "x15" KC_RSEQ_INJECT_CLOBBER
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
		"ldr x15, %[v]\n\t"
		"cmp x15, %[expect]\n\t"
		"b.ne %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		/* memcpy byte by byte, index in x14: the copy must stay
		 * inside the section, so no call to memcpy. */
		"cbz %[len], 5f\n\t"
		"mov x14, xzr\n\t"
		"6:\n\t"
		"ldrb w15, [%[src], x14]\n\t"
		"strb w15, [%[dst], x14]\n\t"
		"add x14, x14, #1\n\t"
		"cmp x14, %[len]\n\t"
		"b.ne 6b\n\t"
		"5:\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"str %[newv], %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "Qo"(*v), [expect] "r"(expect), [dst] "r"(dst),
		  [src] "r"(src), [len] "r"(len), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "x14", "x15" KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

#endif /* KCROSS_ARCH_AARCH64_RSEQ_H */
