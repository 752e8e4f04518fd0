/* SPDX-License-Identifier: MIT */
/*
 * The rseq per-CPU operations of <kcross/pseudocode.h>, on every
 * architecture, with and without a kernel behind them.
 *
 * Without rseq (qemu-user: ENOSYS) the area's cpu_id is a negative constant
 * (-2, registration failed), so calling an operation with cpu =
 * kc_rseq_cpu_raw() passes the section's cpu check and runs the whole body:
 * every path of the asm (success, comparison failure, cpu-mismatch abort)
 * is exercised on aarch64 and ppc64le under qemu as on x86-64.
 *
 * Kernel-directed aborts.  A test hook (KC_RSEQ_INJECT_ASM) can trap at
 * each step of a section (ud2 / brk / tweqi).  The signal handler then does
 * what the kernel does on signal delivery: it reads rseq->rseq_cs, checks
 * that the interrupted pc lies in [start_ip, start_ip + post_commit_offset)
 * and that abort_ip - 4 holds the signature, clears rseq_cs and resumes at
 * abort_ip.  So the descriptor, the arming store and the __rseq_failure
 * stub run on every architecture.  With a live kernel the kernel itself has
 * already moved the pc to abort_ip before the handler runs; the handler
 * then only checks that pc is a known abort_ip.
 *
 * With a live kernel (native), two threads pinned to one CPU add to the same
 * per-CPU counter with a delay loop inside the section and SIGALRM firing:
 * aborts must happen, and the sum must be exact (a section whose range
 * missed its commit, or whose abort stored, would lose or add counts).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

/* The arch's own macros (KC_ARCH_*) first; the injection hooks below must
 * still precede <kcross/rseq-ops.h>. */
#include <kcross/arch.h>

/* ------------------------------------------------ hooks, before kcross */

/*
 * trap_at: step (1..6) at which the section traps, 0 for none;
 * spin: iterations of a delay loop at step 3; c_calls: KC_RSEQ_INJECT_C.
 */
static volatile struct {
	int trap_at;
	int spin;
	unsigned long c_calls;
} kc_test_inj;

#define KC_RSEQ_INJECT_C(n) (kc_test_inj.c_calls++)

#if defined(KC_ARCH_X86_64)
# define KC_TEST_TRAP_SIGNAL SIGILL
# define KC_TEST_M "m"
# define KC_RSEQ_INJECT_ASM(n)						\
	".if " #n " == 3\n\t"						\
	"movl %[kc_spin], %%r11d\n\t"					\
	"testl %%r11d, %%r11d\n\t"					\
	"jz 778f\n\t"							\
	"777: decl %%r11d\n\t"						\
	"jnz 777b\n\t"							\
	"778:\n\t"							\
	".endif\n\t"							\
	"cmpl $" #n ", %[kc_trap_at]\n\t"				\
	"jne 779f\n\t"							\
	"ud2\n\t"							\
	"779:\n\t"
# define KC_RSEQ_INJECT_CLOBBER , "r11"
#elif defined(KC_ARCH_AARCH64)
# define KC_TEST_TRAP_SIGNAL SIGTRAP
# define KC_TEST_M "m"
# define KC_RSEQ_INJECT_ASM(n)						\
	".if " #n " == 3\n\t"						\
	"ldr w13, %[kc_spin]\n\t"					\
	"cbz w13, 778f\n\t"						\
	"777: subs w13, w13, #1\n\t"					\
	"b.ne 777b\n\t"							\
	"778:\n\t"							\
	".endif\n\t"							\
	"ldr w13, %[kc_trap_at]\n\t"					\
	"cmp w13, #" #n "\n\t"						\
	"b.ne 779f\n\t"							\
	"brk #0x7\n\t"							\
	"779:\n\t"
# define KC_RSEQ_INJECT_CLOBBER , "x13"
#elif defined(KC_ARCH_PPC64LE)
# define KC_TEST_TRAP_SIGNAL SIGTRAP
# if defined(__PCREL__) || defined(__clang__)
#  define KC_TEST_M "Z"	/* "m" may print sym@pcrel, which lwz cannot take */
# else
#  define KC_TEST_M "m"
# endif
# define KC_RSEQ_INJECT_ASM(n)						\
	".if " #n " == 3\n\t"						\
	"lwz%U[kc_spin]%X[kc_spin] %%r10, %[kc_spin]\n\t"		\
	"cmpwi %%r10, 0\n\t"						\
	"beq 778f\n\t"							\
	"777: addi %%r10, %%r10, -1\n\t"				\
	"cmpwi %%r10, 0\n\t"						\
	"bne 777b\n\t"							\
	"778:\n\t"							\
	".endif\n\t"							\
	"lwz%U[kc_trap_at]%X[kc_trap_at] %%r10, %[kc_trap_at]\n\t"	\
	"tweqi %%r10, " #n "\n\t"
# define KC_RSEQ_INJECT_CLOBBER , "r10"
#else
# error "test_rseq_ops: no trap hook for this architecture"
#endif

#define KC_RSEQ_INJECT_INPUT						\
	, [kc_trap_at] KC_TEST_M(kc_test_inj.trap_at),			\
	  [kc_spin] KC_TEST_M(kc_test_inj.spin)

#include <kcross/kcross.h>
#include <kcross/rseq-ops.h>
#include "tap.h"

/* The interrupted pc in a signal's ucontext. */
#if defined(KC_ARCH_X86_64)
# define KC_TEST_UC_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
# define KC_TEST_INSN_ALIGN 1
#elif defined(KC_ARCH_AARCH64)
# define KC_TEST_UC_PC(uc) ((uc)->uc_mcontext.pc)
# define KC_TEST_INSN_ALIGN 4
#elif defined(KC_ARCH_PPC64LE)
# define KC_TEST_UC_PC(uc) ((uc)->uc_mcontext.gp_regs[32])	/* PT_NIP */
# define KC_TEST_INSN_ALIGN 4
#else
# error "test_rseq_ops: no ucontext pc for this architecture"
#endif

/* Linker-provided bounds of the sections the asm fills. */
extern const struct kc_rseq_cs __start___rseq_cs[], __stop___rseq_cs[];
/* Read with memcpy: x86-64 does not align this section (8-byte entries). */
extern const unsigned char __start___rseq_cs_ptr_array[], __stop___rseq_cs_ptr_array[];

static int live;		/* this thread's rseq is registered with the kernel */
static long retries;		/* kernel aborts absorbed by RUN() */
#define MAX_TRIES 100000

/*
 * Run OP (an expression using `cpu`) with a fresh cpu.  Only a live kernel
 * aborts a section whose cpu matches (preemption, signal), so only then is
 * -1 retried; without a kernel a -1 is reported as it is.
 */
#define RUN(op) __extension__ ({					\
	int r_, n_ = 0;							\
	do {								\
		cpu = kc_rseq_cpu_raw();				\
		r_ = (op);						\
	} while (r_ == KC_RSEQ_ABORT && live && ++n_ < MAX_TRIES);	\
	retries += n_;							\
	r_;								\
})

/* tap_eq_long evaluates its arguments twice: never hand it an operation. */
static void eq(long got, long want, const char *what)
{
	tap_eq_long(got, want, what);
}

static uint32_t word_at(uint64_t addr)
{
	uint32_t w;

	__builtin_memcpy(&w, (const void *)(uintptr_t)addr, sizeof w);
	return w;
}

static int known_desc(const struct kc_rseq_cs *cs)
{
	return cs >= __start___rseq_cs && cs < __stop___rseq_cs;
}

static const struct kc_rseq_cs *desc_by_abort_ip(uint64_t ip)
{
	for (const struct kc_rseq_cs *d = __start___rseq_cs; d < __stop___rseq_cs; d++)
		if (d->abort_ip == ip)
			return d;
	return NULL;
}

/* ---------------------------------------------------- the trap handler */

static struct {
	volatile unsigned long emulated;	/* we moved pc to abort_ip */
	volatile unsigned long by_kernel;	/* the kernel had done it */
	const struct kc_rseq_cs *volatile cs;	/* the section that aborted */
	volatile uint64_t pc;			/* where the trap hit */
} trap;

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	static const char msg[] = "test_rseq_ops: trap outside any rseq critical section\n";
	ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)KC_TEST_UC_PC(uc);
	struct kc_rseq_abi *a = kc_rseq_area();
	const struct kc_rseq_cs *cs =
		(const struct kc_rseq_cs *)(uintptr_t)__atomic_load_n(&a->rseq_cs, __ATOMIC_RELAXED);
	const struct kc_rseq_cs *d;

	(void)sig;
	(void)si;
	kc_test_inj.trap_at = 0;	/* one shot */
	trap.pc = pc;
	/* The kernel's rule: abort if rseq_cs is armed and pc is inside. */
	if (cs && known_desc(cs) && pc - cs->start_ip < cs->post_commit_offset &&
	    word_at(cs->abort_ip - 4) == (uint32_t)KC_RSEQ_SIG) {
		__atomic_store_n(&a->rseq_cs, 0, __ATOMIC_RELAXED);
		trap.cs = cs;
		KC_TEST_UC_PC(uc) = cs->abort_ip;
		trap.emulated++;
		return;
	}
	d = desc_by_abort_ip(pc);
	if (d) {
		trap.cs = d;
		trap.by_kernel++;
		return;
	}
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to say */
	}
	_exit(3);
}

/* ------------------------------------------------------- descriptors */

static int is_commit_store(uint32_t insn)
{
#if defined(KC_ARCH_AARCH64)
	return (insn & 0xffc00000u) == 0xf9000000u ||	/* str x, [xn, #imm] */
	       (insn & 0xffe00c00u) == 0xf8000000u ||	/* stur x */
	       (insn & 0xffe00c00u) == 0xf8200800u;	/* str x, [xn, xm] */
#elif defined(KC_ARCH_PPC64LE)
	return ((insn >> 26) == 62 && (insn & 3) == 0) ||	/* std */
	       ((insn >> 26) == 31 && ((insn >> 1) & 0x3ff) == 149);	/* stdx */
#elif defined(KC_ARCH_X86_64)
	(void)insn;	/* variable-length: the test does not decode x86 stores */
	return 1;
#else
# error "test_rseq_ops: no store decoder for this architecture"
#endif
}

static int is_branch(uint32_t insn)
{
#if defined(KC_ARCH_AARCH64)
	return (insn & 0xfc000000u) == 0x14000000u;	/* b */
#elif defined(KC_ARCH_PPC64LE)
	return (insn & 0xfc000003u) == 0x48000000u;	/* b (not ba/bl) */
#elif defined(KC_ARCH_X86_64)
	return (insn & 0xffu) == 0xe9 || (insn & 0xffu) == 0xeb;	/* jmp rel32/rel8 */
#else
# error "test_rseq_ops: no branch decoder for this architecture"
#endif
}

static void test_descriptors(void)
{
	size_t n = (size_t)(__stop___rseq_cs - __start___rseq_cs);
	size_t np = (size_t)(__stop___rseq_cs_ptr_array - __start___rseq_cs_ptr_array) / 8;
	int shape = 1, sig = 1, outside = 1, commit = 1, stub = 1, ptrs = np == n;

	tap_ok(n >= 5, "__rseq_cs holds the descriptors: %zu (at least one per operation)", n);
	for (size_t i = 0; i < n; i++) {
		const struct kc_rseq_cs *d = &__start___rseq_cs[i];
		uint64_t end = d->start_ip + d->post_commit_offset;

		if (d->version != 0 || d->flags != 0 || d->post_commit_offset == 0 ||
		    d->post_commit_offset > 4096 || d->start_ip % KC_TEST_INSN_ALIGN ||
		    d->post_commit_offset % KC_TEST_INSN_ALIGN || d->abort_ip % KC_TEST_INSN_ALIGN) {
			tap_diag("descriptor %zu: version %u flags %u start %#llx len %llu abort %#llx",
				 i, d->version, d->flags, (unsigned long long)d->start_ip,
				 (unsigned long long)d->post_commit_offset,
				 (unsigned long long)d->abort_ip);
			shape = 0;
			continue;
		}
		if (word_at(d->abort_ip - 4) != (uint32_t)KC_RSEQ_SIG) {
			tap_diag("descriptor %zu: %#x before abort_ip, want %#x", i,
				 word_at(d->abort_ip - 4), (unsigned)KC_RSEQ_SIG);
			sig = 0;
		}
		if (d->abort_ip >= d->start_ip && d->abort_ip < end)
			outside = 0;
		if (KC_TEST_INSN_ALIGN == 4 && !is_commit_store(word_at(end - 4))) {
			tap_diag("descriptor %zu: last instruction %#x is not a 64-bit store", i,
				 word_at(end - 4));
			commit = 0;
		}
		if (!is_branch(word_at(d->abort_ip))) {
			tap_diag("descriptor %zu: abort handler starts with %#x, not a branch", i,
				 word_at(d->abort_ip));
			stub = 0;
		}
	}
	for (size_t i = 0; ptrs && i < np; i++) {
		uint64_t e;
		const struct kc_rseq_cs *p;

		memcpy(&e, __start___rseq_cs_ptr_array + 8 * i, sizeof e);
		p = (const struct kc_rseq_cs *)(uintptr_t)e;

		/* Descriptors and pointers are emitted pairwise, in order. */
		if (p != &__start___rseq_cs[i])
			ptrs = 0;
	}
	tap_ok(shape, "every descriptor: version 0, flags 0, 0 < post_commit_offset, aligned ips");
	tap_ok(sig, "every abort_ip is preceded by the signature %#x", (unsigned)KC_RSEQ_SIG);
	tap_ok(outside, "every abort_ip lies outside its [start_ip, start_ip + post_commit_offset)");
	tap_ok(commit, "every section ends with a 64-bit store (the commit)%s",
	       KC_TEST_INSN_ALIGN == 4 ? "" : " (not decoded on x86-64)");
	tap_ok(stub, "every abort handler is a branch (to the C abort label)");
	tap_ok(ptrs, "__rseq_cs_ptr_array: %zu pointers, one to each descriptor", np);
}

/* ---------------------------------------------------- the operations */

/* A 64-bit value between guards: a store of the wrong width or place shows. */
struct guarded {
	intptr_t lo;
	intptr_t v;
	intptr_t hi;
};
#define GUARD ((intptr_t)0x5a5a5a5a5a5a5a5aLL)
#define BIG1 ((intptr_t)0x0000000100000005LL)	/* differs from BIG2 only above bit 31 */
#define BIG2 ((intptr_t)0x0000000200000005LL)

static int guards_ok(const struct guarded *g)
{
	return g->lo == GUARD && g->hi == GUARD;
}

static void test_add(void)
{
	struct guarded g = { GUARD, BIG1, GUARD };
	unsigned long calls = kc_test_inj.c_calls;
	int cpu;

	eq(RUN(kc_rseq_load_add_store(&g.v, 0x100000000LL, cpu)), KC_RSEQ_DONE,
		    "add: returns 0");
	tap_ok(g.v == BIG2 && guards_ok(&g), "add: 64-bit sum stored, neighbours intact");
	tap_ok(kc_test_inj.c_calls > calls, "add: KC_RSEQ_INJECT_C runs before the section");
	RUN(kc_rseq_load_add_store(&g.v, -BIG2 - 7, cpu));
	eq(g.v, -7, "add: negative count");
	cpu = kc_rseq_cpu_raw();
	eq(kc_rseq_load_add_store(&g.v, 5, cpu + 1), KC_RSEQ_ABORT,
		    "add: cpu mismatch aborts");
	tap_ok(g.v == -7 && guards_ok(&g), "add: nothing stored on abort");
}

/*
 * The cpu check compares 32 bits: an int argument may sit in a 64-bit
 * register whose upper half is not its sign extension (the truncation of a
 * long is free), and cpu_id is loaded zero-extended.
 */
static void test_cpu_width(void)
{
	static volatile long wide;
	intptr_t v = 1;
	int cpu, r, n = 0;

	do {
		wide = (long)(((uint64_t)0x7777 << 32) | (uint32_t)kc_rseq_cpu_raw());
		cpu = (int)wide;
		r = kc_rseq_load_add_store(&v, 1, cpu);
	} while (r == KC_RSEQ_ABORT && live && ++n < MAX_TRIES);
	tap_ok(r == KC_RSEQ_DONE && v == 2,
	       "cpu check: an int cpu with other bits above it in the register matches (ret %d)", r);
}

static void test_cmp_store(void)
{
	struct guarded g = { GUARD, BIG1, GUARD };
	int cpu;

	eq(RUN(kc_rseq_load_cmp_store(&g.v, BIG2, 99, cpu)), KC_RSEQ_CMPFAIL,
		    "cmp_store: values differing only in the upper 32 bits compare unequal");
	tap_ok(g.v == BIG1 && guards_ok(&g), "cmp_store: nothing stored on comparison failure");
	eq(RUN(kc_rseq_load_cmp_store(&g.v, BIG1, BIG2, cpu)), KC_RSEQ_DONE,
		    "cmp_store: equal: returns 0");
	tap_ok(g.v == BIG2 && guards_ok(&g), "cmp_store: new value stored");
	cpu = kc_rseq_cpu_raw();
	eq(kc_rseq_load_cmp_store(&g.v, BIG2, 1, cpu + 1), KC_RSEQ_ABORT,
		    "cmp_store: cpu mismatch aborts");
	tap_ok(g.v == BIG2 && guards_ok(&g), "cmp_store: nothing stored on abort");
}

struct node {
	intptr_t payload;
	struct node *next;	/* at a non-zero offset */
};

static void test_list_pop(void)
{
	struct node n3 = { 3, NULL }, n2 = { 2, &n3 }, n1 = { 1, &n2 };
	intptr_t head = (intptr_t)&n1, load = 0x1234;
	ptrdiff_t off = offsetof(struct node, next);
	int cpu, ok = 1;

	cpu = kc_rseq_cpu_raw();
	eq(kc_rseq_load_notnull_load_store(&head, off, &load, cpu + 1), KC_RSEQ_ABORT,
		    "list pop: cpu mismatch aborts");
	tap_ok(head == (intptr_t)&n1 && load == 0x1234, "list pop: nothing stored on abort");
	for (struct node *want = &n1; want; want = want->next) {
		int r = RUN(kc_rseq_load_notnull_load_store(&head, off, &load, cpu));

		if (r != KC_RSEQ_DONE || load != (intptr_t)want || head != (intptr_t)want->next) {
			tap_diag("pop of node %ld: ret %d, load %#lx, head %#lx", (long)want->payload,
				 r, (unsigned long)load, (unsigned long)head);
			ok = 0;
		}
	}
	tap_ok(ok, "list pop: three pops return the nodes in order, head follows ->next");
	eq(RUN(kc_rseq_load_notnull_load_store(&head, off, &load, cpu)), KC_RSEQ_CMPFAIL,
		    "list pop: empty list returns 1");
	tap_ok(head == 0 && load == (intptr_t)&n3, "list pop: nothing stored on the empty list");
}

static void test_store_store(void)
{
	struct guarded g = { GUARD, 10, GUARD }, g2 = { GUARD, 0, GUARD };
	int cpu;

	eq(RUN(kc_rseq_load_cmp_store_store(&g.v, 11, &g2.v, 222, 12, cpu)),
		    KC_RSEQ_CMPFAIL, "store_store: unequal: returns 1");
	tap_ok(g.v == 10 && g2.v == 0, "store_store: neither store on comparison failure");
	cpu = kc_rseq_cpu_raw();
	eq(kc_rseq_load_cmp_store_store(&g.v, 10, &g2.v, 222, 11, cpu + 1),
		    KC_RSEQ_ABORT, "store_store: cpu mismatch aborts");
	tap_ok(g.v == 10 && g2.v == 0, "store_store: neither store on abort");
	eq(RUN(kc_rseq_load_cmp_store_store(&g.v, 10, &g2.v, BIG1, BIG2, cpu)),
		    KC_RSEQ_DONE, "store_store: equal: returns 0");
	tap_ok(g.v == BIG2 && g2.v == BIG1 && guards_ok(&g) && guards_ok(&g2),
	       "store_store: both stores done, neighbours intact");
}

static void test_memcpy(void)
{
	unsigned char src[64], dst[80], want[80];
	intptr_t v = 5;
	int cpu;

	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i * 37 + 11);
	memset(dst, 0xaa, sizeof dst);
	memcpy(want, dst, sizeof want);

	eq(RUN(kc_rseq_load_cmp_memcpy_store(&v, 5, dst, src, 0, 6, cpu)),
		    KC_RSEQ_DONE, "memcpy: 0 bytes: returns 0");
	tap_ok(v == 6 && !memcmp(dst, want, sizeof dst), "memcpy: 0 bytes: v stored, dst untouched");

	/* Odd length at odd addresses: the byte loop has no alignment to lean on. */
	memcpy(want + 3, src + 1, 37);
	eq(RUN(kc_rseq_load_cmp_memcpy_store(&v, 6, dst + 3, src + 1, 37, 7, cpu)),
		    KC_RSEQ_DONE, "memcpy: 37 bytes: returns 0");
	tap_ok(v == 7 && !memcmp(dst, want, sizeof dst),
	       "memcpy: 37 bytes copied exactly, bytes around them untouched");

	eq(RUN(kc_rseq_load_cmp_memcpy_store(&v, 6, dst, src + 40, 8, 8, cpu)),
		    KC_RSEQ_CMPFAIL, "memcpy: unequal: returns 1");
	tap_ok(v == 7 && !memcmp(dst, want, sizeof dst), "memcpy: nothing copied or stored on comparison failure");
	cpu = kc_rseq_cpu_raw();
	eq(kc_rseq_load_cmp_memcpy_store(&v, 7, dst, src + 40, 8, 8, cpu + 1),
		    KC_RSEQ_ABORT, "memcpy: cpu mismatch aborts");
	tap_ok(v == 7 && !memcmp(dst, want, sizeof dst), "memcpy: nothing copied or stored on abort");
	memcpy(want, src, 1);
	eq(RUN(kc_rseq_load_cmp_memcpy_store(&v, 7, dst, src, 1, 8, cpu)),
		    KC_RSEQ_DONE, "memcpy: 1 byte: returns 0");
	tap_ok(v == 8 && !memcmp(dst, want, sizeof dst), "memcpy: 1 byte copied");
}

/* ------------------------------------------- aborts inside the section */

/*
 * Arm the trap at STEP and run EXPR until the trap has fired (with a live
 * kernel an earlier preemption may abort first; nothing is stored then, so
 * it is simply run again).  Sets `fired` to the number of traps taken.
 */
#define TRAPPED(step, expr) __extension__ ({				\
	int r_, n_ = 0;							\
	unsigned long before_ = trap.emulated + trap.by_kernel;		\
	trap.cs = NULL;							\
	kc_test_inj.trap_at = (step);					\
	do {								\
		cpu = kc_rseq_cpu_raw();				\
		r_ = (expr);						\
	} while (kc_test_inj.trap_at && r_ == KC_RSEQ_ABORT && live &&	\
		 ++n_ < MAX_TRIES);					\
	kc_test_inj.trap_at = 0;					\
	fired = trap.emulated + trap.by_kernel - before_;		\
	r_;								\
})

static const char *trap_how(void)
{
	return live ? "the kernel moved pc to abort_ip" : "pc inside the armed section moved to abort_ip";
}

static void check_trap(const char *op, int step, int r, unsigned long fired, int state_ok,
		       const char *state)
{
	tap_ok(r == KC_RSEQ_ABORT && fired == 1 && known_desc(trap.cs) && state_ok,
	       "%s, trap at step %d: %s, returns -1, %s (ret %d, traps %lu)",
	       op, step, trap_how(), state, r, fired);
}

static void test_traps(void)
{
	int cpu, r;
	unsigned long fired;

	for (int step = 1; step <= 3; step++) {
		struct guarded g = { GUARD, 40, GUARD };

		r = TRAPPED(step, kc_rseq_load_add_store(&g.v, 2, cpu));
		check_trap("add", step, r, fired, g.v == 40 && guards_ok(&g), "nothing stored");
	}
	for (int step = 1; step <= 3; step++) {
		intptr_t v = 40;

		r = TRAPPED(step, kc_rseq_load_cmp_store(&v, 40, 41, cpu));
		check_trap("cmp_store", step, r, fired, v == 40, "nothing stored");
	}
	for (int step = 1; step <= 4; step++) {
		struct node n2 = { 2, NULL }, n1 = { 1, &n2 };
		intptr_t head = (intptr_t)&n1, load = 0;

		r = TRAPPED(step, kc_rseq_load_notnull_load_store(&head, offsetof(struct node, next),
								  &load, cpu));
		/* *load is written before step 4: harmless, the caller only
		 * reads it after a 0 return. */
		check_trap("list pop", step, r, fired,
			   head == (intptr_t)&n1 && load == (step < 4 ? 0 : (intptr_t)&n1),
			   step < 4 ? "nothing stored" : "head not popped");
	}
	for (int step = 1; step <= 4; step++) {
		intptr_t v = 10, v2 = 0;

		r = TRAPPED(step, kc_rseq_load_cmp_store_store(&v, 10, &v2, 222, 11, cpu));
		/* Step 4 sits between the two stores: the speculative store is
		 * done, the commit is not: the order the pseudo-code states. */
		check_trap("store_store", step, r, fired,
			   v == 10 && v2 == (step < 4 ? 0 : 222),
			   step < 4 ? "nothing stored" : "v2 stored before the commit, v not");
	}
	for (int step = 1; step <= 4; step++) {
		unsigned char src[16] = "fifteen bytes..", dst[16] = { 0 };
		intptr_t v = 3;
		int copied;

		r = TRAPPED(step, kc_rseq_load_cmp_memcpy_store(&v, 3, dst, src, sizeof src, 4, cpu));
		copied = !memcmp(dst, src, sizeof dst);
		check_trap("memcpy", step, r, fired, v == 3 && copied == (step == 4),
			   step < 4 ? "nothing copied or stored" : "copy done before the commit, v not");
	}
	/* Re-arming after an abort: the next call runs to completion. */
	{
		intptr_t v = 1;

		eq(RUN(kc_rseq_load_add_store(&v, 1, cpu)), KC_RSEQ_DONE,
			    "after the aborts, the same section completes again");
	}
	tap_diag("traps: %lu emulated, %lu redirected by the kernel", trap.emulated, trap.by_kernel);
}

/* -------------------------------------------- live kernel: concurrency */

#define MAX_CPUS 1024
static struct {
	intptr_t v;
	char pad[KC_CACHELINE_SIZE - sizeof(intptr_t)];
} counts[MAX_CPUS] __attribute__((aligned(KC_CACHELINE_SIZE)));

static volatile unsigned long alarms;
static cpu_set_t one_cpu;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

struct worker {
	pthread_t t;
	long n;
	long aborts;
	int err;
};

static void *work(void *p)
{
	struct worker *w = p;
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	if (sched_setaffinity(0, sizeof one_cpu, &one_cpu) || kc_rseq_register_current_thread()) {
		w->err = errno ? errno : EINVAL;
		return NULL;
	}
	for (long i = 0; i < w->n; i++) {
		for (;;) {
			int cpu = kc_rseq_cpu_raw();

			if (cpu < 0 || cpu >= MAX_CPUS) {
				w->err = ERANGE;
				return NULL;
			}
			if (kc_rseq_load_add_store(&counts[cpu].v, 1, cpu) == KC_RSEQ_DONE)
				break;
			w->aborts++;
		}
	}
	return NULL;
}

static void test_kernel_aborts(void)
{
	enum { THREADS = 2, N = 100000, ROUNDS = 5 };
	struct itimerval it = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct worker w[THREADS];
	long aborts = 0, sum = 0;
	int round, err = 0;
	sigset_t s;

	if (!live) {
		tap_skip("kernel-directed aborts under concurrency: rseq is not registered here "
			 "(qemu-user or no kernel support); run natively for this");
		return;
	}
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);	/* the workers take the signals */
	kc_test_inj.spin = 2000;
	setitimer(ITIMER_REAL, &it, NULL);
	for (round = 0; round < ROUNDS && aborts == 0 && !err; round++) {
		memset(counts, 0, sizeof counts);
		for (int i = 0; i < THREADS; i++) {
			w[i] = (struct worker){ .n = N };
			if (pthread_create(&w[i].t, NULL, work, &w[i]))
				w[i].err = EAGAIN;
		}
		sum = 0;
		for (int i = 0; i < THREADS; i++) {
			if (w[i].err != EAGAIN)
				pthread_join(w[i].t, NULL);
			aborts += w[i].aborts;
			if (w[i].err)
				err = w[i].err;
		}
		for (int c = 0; c < MAX_CPUS; c++)
			sum += counts[c].v;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	kc_test_inj.spin = 0;
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	tap_ok(!err, "kernel aborts: %d threads on one CPU ran (error %d)", THREADS, err);
	tap_ok(aborts > 0, "kernel aborts: preemption and %lu SIGALRMs aborted %ld sections "
	       "(%d round%s)", alarms, aborts, round, round == 1 ? "" : "s");
	eq(sum, (long)THREADS * N, "kernel aborts: per-CPU sum exact despite the aborts");
}

/* ----------------------------------------------------------------- main */

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
	int reg = kc_rseq_register_current_thread();
	int32_t raw = kc_rseq_cpu_raw();

	live = raw >= 0;
	tap_diag("%s: rseq %s (cpu_id %d, registration %d)", KC_ARCH_NAME,
		 live ? "registered: sections run under the kernel"
		      : "not registered: cpu_id is a constant, sections run without a kernel",
		 raw, reg);
	if (live) {
		/* Pinned, cpu + 1 never matches and the cpu never goes stale. */
		CPU_ZERO(&one_cpu);
		CPU_SET(raw, &one_cpu);
		if (sched_setaffinity(0, sizeof one_cpu, &one_cpu))
			tap_diag("could not pin to cpu %d: %s", raw, strerror(errno));
	}
	sigemptyset(&sa.sa_mask);
	sigaction(KC_TEST_TRAP_SIGNAL, &sa, NULL);

	test_descriptors();
	test_add();
	test_cpu_width();
	test_cmp_store();
	test_list_pop();
	test_store_store();
	test_memcpy();
	test_traps();
	test_kernel_aborts();
	if (live)
		tap_diag("%ld kernel aborts retried in the single-thread tests", retries);
	else
		eq(retries, 0, "no retries without a kernel (every -1 was reported)");
	return tap_done();
}
