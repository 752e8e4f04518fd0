/* SPDX-License-Identifier: MIT */
/*
 * kcross/pseudocode.h - what every rseq per-CPU operation does, once.
 *
 * Each architecture implements these in <kcross/arch/<arch>-rseq.h> as one
 * restartable critical section; this file is the specification the asm
 * must match, and the C fallbacks in <kcross/percpu.h> match it too.
 *
 * Common to all operations:
 *   - `cpu` is the CPU the caller read (kc_rseq_cpu_raw()) and computed its
 *     per-CPU pointers for.  The section first compares it with the
 *     kernel's cpu_id; if they differ, the thread migrated: abort.
 *     The caller must pass a cpu >= 0: a negative value would match the
 *     -1/-2 of an unregistered area and the section would run with no
 *     kernel protection (tests use exactly that to run the bodies under
 *     qemu-user; production code never may).
 *   - Abort: the kernel moves the thread to the abort handler whenever it is
 *     preempted, migrated or interrupted by a signal inside the section, or
 *     the cpu check fails.  Nothing was stored; the caller retries with a
 *     fresh cpu.
 *   - Only the final store ("commit") makes the operation visible; it is a
 *     single instruction, so the operation is all or nothing.
 *   - Return codes: 0 done; 1 comparison failed (nothing stored); -1 aborted
 *     (nothing stored).
 *   - Memory order: relaxed.  Per-CPU data is only modified by threads on
 *     that CPU, and a context switch orders their accesses; readers on other
 *     CPUs (sums) see each value atomically.
 *
 * kc_rseq_load_add_store(v, count, cpu)
 *	if cpu != rseq->cpu_id: return -1
 *	*v = *v + count				(commit)
 *	return 0
 *
 * kc_rseq_load_cmp_store(v, expect, newv, cpu)
 *	if cpu != rseq->cpu_id: return -1
 *	if *v != expect: return 1
 *	*v = newv				(commit)
 *	return 0
 *
 * kc_rseq_load_notnull_load_store(v, offset, load, cpu)     (list pop)
 *	if cpu != rseq->cpu_id: return -1
 *	head = *v
 *	if head == NULL: return 1
 *	*load = head
 *	*v = *(intptr_t *)(head + offset)	(commit)
 *	return 0
 *
 * kc_rseq_load_cmp_store_store(v, expect, v2, newv2, newv, cpu)
 *	if cpu != rseq->cpu_id: return -1
 *	if *v != expect: return 1
 *	*v2 = newv2				(speculative: may happen on abort)
 *	*v = newv				(commit)
 *	return 0
 *
 * kc_rseq_load_cmp_memcpy_store(v, expect, dst, src, len, newv, cpu)
 *	if cpu != rseq->cpu_id: return -1
 *	if *v != expect: return 1
 *	memcpy(dst, src, len)			(speculative: may happen on abort)
 *	*v = newv				(commit)
 *	return 0
 *
 * "Speculative" stores go to memory that nothing reads until the commit
 * publishes it (a slot beyond the published end of a buffer): repeating them
 * after an abort is harmless.
 *
 * Delay injection.  Every section has hooks KC_RSEQ_INJECT_ASM(1..6) at its
 * steps (after the rseq_cs store, after the cpu check, after each load,
 * before the commit) and KC_RSEQ_INJECT_C(n) before it starts.  They are
 * empty unless a test defines them before including kcross headers, as the
 * kernel's rseq selftests do, to widen the windows in which preemption,
 * migration and signals hit.
 */
#ifndef KCROSS_PSEUDOCODE_H
#define KCROSS_PSEUDOCODE_H

#define KC_RSEQ_DONE 0
#define KC_RSEQ_CMPFAIL 1
#define KC_RSEQ_ABORT (-1)

#ifndef KC_RSEQ_INJECT_ASM
# define KC_RSEQ_INJECT_ASM(n) ""
#endif
#ifndef KC_RSEQ_INJECT_CLOBBER
# define KC_RSEQ_INJECT_CLOBBER	/* e.g. , "ecx" */
#endif
#ifndef KC_RSEQ_INJECT_INPUT
# define KC_RSEQ_INJECT_INPUT	/* e.g. , [loop_cnt] "m"(counts) */
#endif
#ifndef KC_RSEQ_INJECT_C
# define KC_RSEQ_INJECT_C(n)
#endif

#endif /* KCROSS_PSEUDOCODE_H */
