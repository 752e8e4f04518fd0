/* SPDX-License-Identifier: MIT */
/*
 * kcross/ctx.h - user-level context switches (kc_ctx) and a small
 * cooperative scheduler on top of them (kc_sched).
 *
 * A context is a stack and the registers the ABI says a call preserves.
 * kc_ctx_switch(from, to) saves the calling context's callee-saved registers
 * and floating-point control state on its own stack, stores that stack
 * pointer in from->sp, and resumes `to` where it last called
 * kc_ctx_switch (or, the first time, at its entry function).  Nothing else
 * is saved: no signal mask, no system call, nothing the ABI lets a call
 * destroy anyway.
 *
 * What one switch keeps (the saved frame: include/kcross/arch/ARCH-ctx.h and
 * the table at the top of src/arch/ctx-ARCH.S):
 *   x86-64   rbx rbp r12-r15 rsp, MXCSR and the x87 control word
 *   aarch64  x19-x29 lr sp d8-d15, FPCR
 *   ppc64le  r1 r2 (TOC) r14-r31 f14-f31 v20-v31 VRSAVE CR2-CR4 LR, FPSCR
 * The floating-point control registers (rounding mode, exception masks)
 * are per context: a context that calls fesetround() keeps its mode and
 * leaves the others' alone.  A context that promises never to change them
 * (kc_ctx_share_fpenv) has none of its own: it runs in the environment of
 * the thread as it finds it, and its switches skip the FP control state.
 *
 * A struct kc_ctx that was never made (zero-initialised) stands for the
 * thread's current context: pass it as `from` to leave the thread's own
 * stack, and switch back to it later.
 *
 * Contexts are not threads: a context runs on whichever thread switches to
 * it, and must not be resumed by two threads at once.  Switching is not
 * async-signal-safe with respect to the same context.
 */
#ifndef KCROSS_CTX_H
#define KCROSS_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <kcross/arch.h>
#include KC_ARCH_CTX_HEADER	/* struct kc_ctx_frame, KC_CTX_FRAME_SIZE */

#ifdef __cplusplus
extern "C" {
#endif

/* A library stack's size when kc_ctx_make is given 0. */
#define KC_CTX_DEFAULT_STACK	(256u * 1024u)
/* The smallest stack kc_ctx_make accepts (room for the entry's frames). */
#define KC_CTX_MIN_STACK	4096u

/* kc_ctx.flags (read them through kc_ctx_done() and kc_ctx_shares_fpenv()). */
#define KC_CTX_MADE		0x1u	/* kc_ctx_make succeeded */
#define KC_CTX_DONE		0x2u	/* its function returned */
#define KC_CTX_OWN_STACK	0x4u	/* the library mapped the stack */
#define KC_CTX_SHARED_FPENV	0x8u	/* kc_ctx_share_fpenv: no FP control state of its own */

/*
 * The asm core reads sp and flags, and nothing else: both in the struct's
 * first 16 bytes, one cache line with the saved stack pointer (src/ctx.c
 * asserts the offsets the .S files use).
 */
struct kc_ctx {
	void *sp;		/* saved frame while suspended */
	unsigned int flags;	/* KC_CTX_*: the asm core tests KC_CTX_SHARED_FPENV */
	void *stack;		/* lowest usable byte of the stack */
	size_t size;		/* usable bytes */
	void *map;		/* library stacks: the mapping, guard page included */
	size_t map_size;
	void (*fn)(void *arg);
	void *arg;
	struct kc_ctx *link;	/* resumed when fn returns */
};

/*
 * Make `c` a context that runs fn(arg) on its own stack when first switched
 * to.  `stack` NULL: the library maps `size` bytes (0: KC_CTX_DEFAULT_STACK;
 * rounded up to whole pages) with an inaccessible guard page below, so an
 * overflow faults (SIGSEGV) instead of corrupting memory; kc_ctx_free unmaps
 * it.  Otherwise [stack, stack+size) is the caller's (at least
 * KC_CTX_MIN_STACK bytes) and stays so.  When fn returns the context is
 * marked done and switches to `link`; with link NULL the process aborts with
 * a message instead.  The new context starts with the floating-point control
 * state of the thread that calls kc_ctx_make.  Returns 0, -EINVAL (no fn,
 * stack too small) or -ENOMEM.
 */
int kc_ctx_make(struct kc_ctx *c, void *stack, size_t size,
		void (*fn)(void *arg), void *arg, struct kc_ctx *link);

/* Unmap a library stack (no-op for a caller's stack).  `c` must not be running. */
void kc_ctx_free(struct kc_ctx *c);

/*
 * Save the running context into `from` and resume `to`.  Returns when some
 * context switches back to `from`.  `to` must be suspended (made and not yet
 * started, or inside kc_ctx_switch) and not done.  The asm core (one .S per
 * architecture): a call and a few dozen instructions.
 */
void kc_ctx_switch(struct kc_ctx *from, struct kc_ctx *to);

/* True once the context's function has returned. */
static inline bool kc_ctx_done(const struct kc_ctx *c)
{
	return (c->flags & KC_CTX_DONE) != 0;
}

/*
 * The opt-in for contexts that never change the floating-point environment
 * (libaco's shared FPU environment): `c` promises that, while it runs, it
 * leaves the FP control registers as it found them (no fesetround, no
 * fesetenv, no _mm_setcsr or ldmxcsr, no feenableexcept):
 *   x86-64   MXCSR and the x87 control word
 *   aarch64  FPCR
 *   ppc64le  FPSCR
 * In return it has no FP control state of its own: a switch away from it
 * does not save them, a switch to it does not load them, and it runs in
 * whatever state the thread has when it is resumed: that of the last
 * context without the promise that ran (not the state at kc_ctx_make, which
 * a context without the promise starts with).  A switch between two
 * contexts that both promised touches no FP control register at all: the
 * floor's switch and two tests.  A context without the promise keeps its
 * own state whatever the others do.
 *
 * A broken promise (a context that shares the environment and changes it
 * anyway) is not detected: the change stays with the thread and every
 * context that shares the environment sees it, until a context without the
 * promise is resumed and its own state is loaded.  Contexts without the
 * promise never see it.
 *
 * Call it after kc_ctx_make (which clears it) and before the context first
 * runs, or from the running context itself (the thread's own, a
 * zero-initialised struct kc_ctx, included); it cannot be withdrawn.  The
 * FP status flags (MXCSR's, FPSR, FPSCR's) are shared as well.
 */
void kc_ctx_share_fpenv(struct kc_ctx *c);

/* True once kc_ctx_share_fpenv(c) was called. */
static inline bool kc_ctx_shares_fpenv(const struct kc_ctx *c)
{
	return (c->flags & KC_CTX_SHARED_FPENV) != 0;
}

/*
 * kc_sched: cooperative round-robin tasks on one thread.  Each task is a
 * kc_ctx with a library stack.  kc_sched_run (or kc_sched_join from outside
 * the tasks) runs them until they end; inside a task, kc_sched_yield passes
 * the CPU straight to the next runnable task (one switch, not two), and a
 * task spawned by a task runs after every task already runnable has had
 * its turn.  A task's stack is unmapped when it ends.
 *
 * The struct is the caller's (on its stack or anywhere); its fields are
 * private.  Not thread-safe: one thread drives one scheduler.
 */
struct kc_sched_task;
struct kc_sched {
	struct kc_ctx main;		/* the context that called run/join */
	struct kc_sched_task **tasks;	/* by id - 1; ended tasks stay (small) */
	int ntasks, cap;
	int live;			/* spawned and not ended */
	struct kc_sched_task *current;	/* NULL outside the tasks */
	struct kc_sched_task *next;	/* where run continues the ring */
};

/* 0 (cannot fail today; returns int for the future). */
int kc_sched_init(struct kc_sched *s);
/* A new task fn(arg) with a stack of stack_size bytes (0: default).  Returns
 * its id (>= 1) or -EINVAL / -ENOMEM.  Callable from a task or from outside. */
int kc_sched_spawn(struct kc_sched *s, void (*fn)(void *arg), void *arg, size_t stack_size);
/* Inside a task: let every other runnable task run once.  Outside: no-op. */
void kc_sched_yield(struct kc_sched *s);
/* Wait until task `id` has ended.  Inside a task it yields meanwhile; from
 * outside it runs the tasks until then.  0, -ESRCH (no such task) or
 * -EDEADLK (a task joining itself, or a cycle of joins). */
int kc_sched_join(struct kc_sched *s, int id);
/* Run every task until all have ended.  0, or -EDEADLK when called from a task. */
int kc_sched_run(struct kc_sched *s);
/* The running task's id, 0 outside the tasks. */
int kc_sched_self(const struct kc_sched *s);
/* Free everything.  Tasks that have not ended are dropped with their stacks
 * (their functions never finish); call it outside the tasks. */
void kc_sched_destroy(struct kc_sched *s);

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_CTX_H */
