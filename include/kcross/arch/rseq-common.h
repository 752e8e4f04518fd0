/* SPDX-License-Identifier: MIT */
/*
 * The parts of every architecture's rseq critical sections that do not
 * differ: the descriptor, the abort handler's frame, the prologue's order,
 * the epilogue.  Included by each <kcross/arch/ARCH-rseq.h>, which defines
 * only what is its own:
 *
 *   KC__RSEQ_ARM(label)       store the address of descriptor `label`b to
 *                             the %[rseq_cs] operand (PC-relative: no text
 *                             relocation in PIE or shared objects);
 *   KC__RSEQ_CPU_CHECK        compare %[cpu_id] with %[cpu], leave to the
 *                             abort path when they differ;
 *   KC__RSEQ_SIG_EMIT         what precedes the abort handler: alignment and
 *                             the 32-bit KC_RSEQ_SIG the kernel checks at
 *                             abort_ip - 4;
 *   KC__RSEQ_JUMP             the unconditional branch to a C label.
 *
 * Every section uses the same local labels: 1 its start, 2 the end of the
 * commit, 3 the descriptor, 4 the abort handler.
 */
#ifndef KCROSS_RSEQ_OPS_H
# error "do not include <kcross/arch/rseq-common.h> directly; include <kcross/rseq-ops.h>"
#endif
#ifndef KCROSS_ARCH_RSEQ_COMMON_H
#define KCROSS_ARCH_RSEQ_COMMON_H

#define KC__STR_(x) #x
#define KC__STR(x) KC__STR_(x)

/*
 * The struct rseq_cs descriptor (version 0, flags 0, start_ip,
 * post_commit_offset, abort_ip) in section __rseq_cs, 32-byte aligned as the
 * ABI requires, and a pointer to it in __rseq_cs_ptr_array (for debuggers and
 * tools).  64-bit fields: every kcross target is LP64.
 */
#define KC__RSEQ_CS_DESC(label, start, post_commit, abort)		\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	KC__STR(label) ":\n\t"						\
	".long 0x0, 0x0\n\t"						\
	".quad " KC__STR(start) "f, (" KC__STR(post_commit) "f - "	\
		KC__STR(start) "f), " KC__STR(abort) "f\n\t"		\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".balign 8\n\t"						\
	".quad " KC__STR(label) "b\n\t"					\
	".popsection\n\t"

/*
 * The abort handler, in section __rseq_failure (out of the hot path),
 * preceded by the signature; it branches to the C label `abort_target`.
 */
#define KC__RSEQ_ABORT_HANDLER(label, abort_target)			\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	KC__RSEQ_SIG_EMIT						\
	KC__STR(label) ":\n\t"						\
	KC__RSEQ_JUMP " %l[" abort_target "]\n\t"			\
	".popsection\n\t"

/* Arm the section, start it, check the CPU. */
#define KC__RSEQ_PROLOGUE						\
	KC__RSEQ_CS_DESC(3, 1, 2, 4)					\
	KC__RSEQ_ARM(3)							\
	"1:\n\t"							\
	KC_RSEQ_INJECT_ASM(1)						\
	KC__RSEQ_CPU_CHECK						\
	KC_RSEQ_INJECT_ASM(2)

/* End of the commit, then the abort handler. */
#define KC__RSEQ_EPILOGUE						\
	"2:\n\t"							\
	KC__RSEQ_ABORT_HANDLER(4, "abort")

#endif /* KCROSS_ARCH_RSEQ_COMMON_H */
