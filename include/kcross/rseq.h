/* SPDX-License-Identifier: MIT */
/*
 * kcross/rseq.h - restartable sequences: the current CPU, NUMA node and
 * concurrency id for the cost of a load, and per-CPU operations without
 * atomics.
 *
 * Registration.  glibc 2.35+ registers an rseq area for every thread and
 * exports where (__rseq_offset from the thread pointer) and how much of it
 * is meaningful (__rseq_size); kcross uses that registration when present.
 * Otherwise it registers its own per-thread area, lazily, the first time a
 * thread needs it, with the length and alignment the kernel asks for
 * (AT_RSEQ_FEATURE_SIZE, AT_RSEQ_ALIGN; at least 32 bytes).  Either way one
 * process-wide offset from the thread pointer locates the calling thread's
 * area, so every read is `thread pointer + offset`, one load.
 *
 * kcross never writes cpu_id_start, cpu_id, node_id or mm_cid of a
 * registered area (newer kernels kill a process that does); it writes only
 * rseq_cs, as the ABI requires.
 *
 * KCROSS_RSEQ=off (<kcross/settings.h>; auto, on or unset: the above) makes
 * rseq unavailable on purpose: kcross registers no area of its own and uses
 * no registration of glibc's (kc_rseq_info() says owner none, and why).  It
 * cannot undo glibc's registration, which glibc makes before main() unless
 * its tunable says GLIBC_TUNABLES=glibc.pthread.rseq=0 at process start:
 * kcross-harness adds that and executes itself again (docs/commands.md).
 *
 * Fallback.  When rseq is unavailable (kernel without it, qemu-user,
 * valgrind, a seccomp filter, glibc.pthread.rseq=0 with our registration
 * refused, KCROSS_RSEQ=off, or an unknown party already registered), the
 * area's cpu_id is negative and every function below takes its fallback
 * path: vDSO getcpu, then the getcpu system call, and atomic per-CPU
 * operations.  The choice is made per call by that same load, so there is
 * no indirect call on the fast path.
 */
#ifndef KCROSS_RSEQ_H
#define KCROSS_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kcross/arch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's struct rseq (include/uapi/linux/rseq.h), first 32 bytes. */
struct kc_rseq_abi {
	uint32_t cpu_id_start;
	uint32_t cpu_id;		/* -1 not registered, -2 registration failed */
	uint64_t rseq_cs;		/* pointer to the active kc_rseq_cs, or 0 */
	uint32_t flags;
	uint32_t node_id;		/* feature size >= 24 (Linux 6.3+) */
	uint32_t mm_cid;		/* feature size >= 28 (Linux 6.3+) */
	uint32_t slice_ctrl;		/* Linux 7.0+ */
} __attribute__((aligned(32)));

/* The kernel's struct rseq_cs: one per critical section, in __rseq_cs. */
struct kc_rseq_cs {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
} __attribute__((aligned(32)));

#define KC_RSEQ_CPU_ID_UNINITIALIZED ((int32_t)-1)
#define KC_RSEQ_CPU_ID_REGISTRATION_FAILED ((int32_t)-2)

_Static_assert(offsetof(struct kc_rseq_abi, cpu_id) == 4, "rseq ABI: cpu_id");
_Static_assert(offsetof(struct kc_rseq_abi, rseq_cs) == 8, "rseq ABI: rseq_cs");
_Static_assert(offsetof(struct kc_rseq_abi, node_id) == 20, "rseq ABI: node_id");
_Static_assert(offsetof(struct kc_rseq_abi, mm_cid) == 24, "rseq ABI: mm_cid");
_Static_assert(offsetof(struct kc_rseq_cs, abort_ip) == 24, "rseq ABI: abort_ip");

/*
 * Offset of the calling thread's area from the thread pointer.  Written once,
 * by the library's constructor, before any user code runs; const to users
 * (as glibc's __rseq_offset is) so the compiler may keep it in a register
 * across the slow-path calls in a loop.
 */
#ifdef KC__RSEQ_OFFSET_WRITABLE
extern ptrdiff_t kc__rseq_offset;
#else
extern const ptrdiff_t kc__rseq_offset;
#endif
/* Bytes of the area the kernel fills (0 until known): gates node_id/mm_cid. */
extern unsigned int kc__rseq_feature_size;

static inline struct kc_rseq_abi *kc_rseq_area(void)
{
	return (struct kc_rseq_abi *)((char *)kc_thread_pointer() + kc__rseq_offset);
}

/* cpu_id as the kernel last wrote it: >= 0 when rseq is active. */
static inline int32_t kc_rseq_cpu_raw(void)
{
	return (int32_t)__atomic_load_n(&kc_rseq_area()->cpu_id, __ATOMIC_RELAXED);
}

/* Out of line: register this thread if that is ours to do, else ask the
 * vDSO or the kernel.  Returns the CPU, or -errno. */
int kc__cpu_slow(void);
int kc__node_slow(void);
int kc__cid_slow(void);

/* The CPU this thread runs on (may be stale by the time it is used). */
static inline int kc_cpu(void)
{
	int32_t cpu = kc_rseq_cpu_raw();

	if (KC_LIKELY(cpu >= 0))
		return cpu;
	return kc__cpu_slow();
}

/* The NUMA node of that CPU. */
static inline int kc_node(void)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	if (KC_LIKELY((int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) >= 0 &&
		      kc__rseq_feature_size >= 24))
		return (int)__atomic_load_n(&a->node_id, __ATOMIC_RELAXED);
	return kc__node_slow();
}

/*
 * A concurrency id: dense, below min(threads of this process, CPUs), unique
 * among this process's running threads (the kernel's mm_cid).  Without
 * mm_cid support it is the CPU number, which has the same uniqueness.
 */
static inline int kc_cid(void)
{
	struct kc_rseq_abi *a = kc_rseq_area();

	if (KC_LIKELY((int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) >= 0 &&
		      kc__rseq_feature_size >= 28))
		return (int)__atomic_load_n(&a->mm_cid, __ATOMIC_RELAXED);
	return kc__cid_slow();
}

/* ------------------------------------------------------------ registration */

enum kc_rseq_owner {
	KC_RSEQ_OWNER_NONE = 0,	/* rseq unavailable: fallbacks in use */
	KC_RSEQ_OWNER_LIBC,	/* glibc's registration */
	KC_RSEQ_OWNER_KCROSS,	/* kcross's own per-thread registration */
};

/* Auxiliary vector entries of the extensible rseq ABI (Linux 6.3+); the
 * values are the kernel's, defined here for C libraries that predate them. */
#define KC_AT_RSEQ_FEATURE_SIZE 27
#define KC_AT_RSEQ_ALIGN 28

struct kc_rseq_info {
	enum kc_rseq_owner owner;	/* whose registration the process uses */
	bool active;			/* the calling thread is registered */
	unsigned int size;		/* bytes registered (0 if none) */
	unsigned int feature_size;	/* bytes the kernel fills */
	unsigned int align;		/* alignment the kernel asked for */
	int libc_size;			/* glibc's __rseq_size, or -1 when it exports none;
					 * above 0: glibc registered every thread (0: its
					 * registration is off or failed) */
	int error;			/* why not active here: -errno, or 0 */
	const char *why;		/* the same in words, or NULL */
};

/* Make sure the calling thread is registered (if rseq can be had).
 * 0 when this thread's area is active, else the -errno that prevented it. */
int kc_rseq_register_current_thread(void);
/* Undo kcross's own registration of the calling thread (before its TLS goes
 * away in unusual thread libraries); no-op for glibc's registration. */
int kc_rseq_unregister_current_thread(void);
/* Who registered, sizes, and why not: for fingerprints and diagnostics. */
struct kc_rseq_info kc_rseq_info(void);
const char *kc_rseq_owner_name(enum kc_rseq_owner o);

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_RSEQ_H */
