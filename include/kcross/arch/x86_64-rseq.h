/* SPDX-License-Identifier: MIT */
/*
 * x86-64 rseq critical sections for the operations in <kcross/pseudocode.h>.
 * Included only through <kcross/rseq-ops.h>.
 *
 * Layout of every section:
 *   - its struct rseq_cs descriptor in section __rseq_cs (32-byte aligned),
 *     and a pointer to it in __rseq_cs_ptr_array (for debuggers and tools);
 *   - `lea desc; mov -> rseq->rseq_cs` arms it; label 1 starts it, label 2
 *     follows the commit;
 *   - the abort handler in section __rseq_failure, preceded by the
 *     signature.  The three bytes 0f b9 3d before the signature make the
 *     pair decode as `ud1 0x53053053(%rip),%edi`, so a disassembler stays
 *     in step and a stray jump into it traps.
 * asm goto carries the two exits: %l[cmpfail] and %l[abort].
 */
#ifndef KCROSS_RSEQ_OPS_H
# error "do not include <kcross/arch/x86_64-rseq.h> directly; include <kcross/rseq-ops.h>"
#endif
#ifndef KCROSS_ARCH_X86_64_RSEQ_H
#define KCROSS_ARCH_X86_64_RSEQ_H

#include <kcross/arch/rseq-common.h>

#define KC__RSEQ_ARM(label)						\
	"leaq " KC__STR(label) "b(%%rip), %%rax\n\t"			\
	"movq %%rax, %[rseq_cs]\n\t"

#define KC__RSEQ_CPU_CHECK						\
	"cmpl %[cpu], %[cpu_id]\n\t"					\
	"jnz 4f\n\t"

/* 0f b9 3d before the signature: together `ud1 0x53053053(%rip),%edi`. */
#define KC__RSEQ_SIG_EMIT						\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long " KC__STR(KC_RSEQ_SIG) "\n\t"
#define KC__RSEQ_JUMP "jmp"

#define KC__RSEQ_AREA_OPERANDS(a, cpu)					\
	[cpu_id] "m"((a)->cpu_id), [rseq_cs] "m"((a)->rseq_cs),	\
	[cpu] "r"(cpu)

static inline __attribute__((always_inline))
int kc_rseq_load_add_store(intptr_t *v, intptr_t count, int cpu)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	KC_RSEQ_INJECT_C(1);
	__asm__ goto(
		KC__RSEQ_PROLOGUE
		KC_RSEQ_INJECT_ASM(3)
		"addq %[count], %[v]\n\t"			/* commit */
		KC__RSEQ_EPILOGUE
		: /* no outputs in asm goto */
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "m"(*v), [count] "er"(count)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "rax" KC_RSEQ_INJECT_CLOBBER
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
		"cmpq %[v], %[expect]\n\t"
		"jnz %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"movq %[newv], %[v]\n\t"			/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "m"(*v), [expect] "r"(expect), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "rax" KC_RSEQ_INJECT_CLOBBER
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
		"movq %[v], %%rbx\n\t"
		"testq %%rbx, %%rbx\n\t"
		"jz %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"movq %%rbx, %[load]\n\t"
		"addq %[offset], %%rbx\n\t"
		"movq (%%rbx), %%rbx\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"movq %%rbx, %[v]\n\t"				/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "m"(*v), [offset] "er"(offset), [load] "m"(*load)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "rax", "rbx" KC_RSEQ_INJECT_CLOBBER
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
		"cmpq %[v], %[expect]\n\t"
		"jnz %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		"movq %[newv2], %[v2]\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"movq %[newv], %[v]\n\t"			/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "m"(*v), [expect] "r"(expect), [v2] "m"(*v2),
		  [newv2] "r"(newv2), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "rax" KC_RSEQ_INJECT_CLOBBER
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
		"cmpq %[v], %[expect]\n\t"
		"jnz %l[cmpfail]\n\t"
		KC_RSEQ_INJECT_ASM(3)
		/* memcpy byte by byte: rep movsb would need rdi/rsi/rcx
		 * bound, and the copy must stay inside the section. */
		"movq %[len], %%rcx\n\t"
		"movq %[src], %%rsi\n\t"
		"movq %[dst], %%rdi\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 5f\n\t"
		"6:\n\t"
		"movb (%%rsi), %%al\n\t"
		"movb %%al, (%%rdi)\n\t"
		"incq %%rsi\n\t"
		"incq %%rdi\n\t"
		"decq %%rcx\n\t"
		"jnz 6b\n\t"
		"5:\n\t"
		KC_RSEQ_INJECT_ASM(4)
		"movq %[newv], %[v]\n\t"			/* commit */
		KC__RSEQ_EPILOGUE
		:
		: KC__RSEQ_AREA_OPERANDS(a, cpu),
		  [v] "m"(*v), [expect] "r"(expect), [dst] "r"(dst),
		  [src] "r"(src), [len] "r"(len), [newv] "r"(newv)
		  KC_RSEQ_INJECT_INPUT
		: "memory", "cc", "rax", "rcx", "rsi", "rdi" KC_RSEQ_INJECT_CLOBBER
		: abort, cmpfail);
	return KC_RSEQ_DONE;
abort:
	return KC_RSEQ_ABORT;
cmpfail:
	return KC_RSEQ_CMPFAIL;
}

#endif /* KCROSS_ARCH_X86_64_RSEQ_H */
