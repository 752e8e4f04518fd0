/* SPDX-License-Identifier: MIT */
/*
 * kc_ctx and kc_sched: callee-saved registers (integer, FP, vector) survive
 * a switch whose other side clobbers them all (tests/unit/ctx_regs-ARCH.S),
 * the saved frame is where struct kc_ctx_frame says (both with and without
 * the shared FP environment on either side), the stack is aligned as the
 * ABI wants at a new context's entry, floating-point control state is per
 * context, contexts that share the FP environment behave as <kcross/ctx.h>
 * says (a broken promise included), a thousand contexts take turns, a
 * returning context ends cleanly, the guard page faults, and the
 * scheduler's order.
 */
#include <errno.h>
#include <fenv.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kcross/ctx.h>
#include "tap.h"

/* ctx_regs-ARCH.S */
unsigned long ctx_regs_check(struct kc_ctx *self, struct kc_ctx *other, unsigned long seed);
void ctx_regs_clobber(struct kc_ctx *self, struct kc_ctx *back, unsigned long seed);
void ctx_sp_entry(void *arg);
void ctx_sp_entry_c(void *arg);
uintptr_t ctx_entry_sp;

static struct kc_ctx main_ctx;

/* ---------------------------------------------------------------- registers */

#define REG_ROUNDS 200
static struct kc_ctx clob_ctx;
static unsigned long reg_seed[REG_ROUNDS];
static int frame_bad, frame_checked;
/* The thread's context in this round of test_registers: main_ctx, or a
 * context of its own when it shares the FP environment (for good). */
static struct kc_ctx *reg_main;

/* reg_main is suspended inside ctx_regs_check with seed's patterns: its
 * frame, read through the C mirror, must hold them where the table says. */
static void check_main_frame(unsigned long seed)
{
	const struct kc_ctx_frame *f = reg_main->sp;
	int bad = 0;

#if defined(KC_ARCH_X86_64)
	bad |= f->rbx != seed + 1 || f->rbp != seed + 2 || f->r12 != seed + 3;
	bad |= f->r13 != seed + 4 || f->r14 != seed + 5 || f->r15 != seed + 6;
#elif defined(KC_ARCH_AARCH64)
	for (int i = 0; i < 10; i++)
		bad |= f->x19_x28[i] != seed + 1 + (unsigned long)i;
	bad |= f->x29 != seed + 11;
	for (int i = 0; i < 8; i++) {
		uint64_t d;

		memcpy(&d, &f->d8_d15[i], 8);
		bad |= d != seed + 20 + (unsigned long)i;
	}
#elif defined(KC_ARCH_PPC64LE)
	for (int i = 0; i < 18; i++)
		bad |= f->r14_r31[i] != seed + 14 + (unsigned long)i;
	for (int i = 0; i < 18; i++) {
		uint64_t d;

		memcpy(&d, &f->f14_f31[i], 8);
		bad |= d != seed + 114 + (unsigned long)i;
	}
	for (int i = 0; i < 12; i++)
		bad |= f->v20_v31[i][0] != seed + 220 + (unsigned long)i ||
		       f->v20_v31[i][1] != ~(seed + 220 + (unsigned long)i);
	bad |= f->vrsave != (uint32_t)(seed * 7u);
	bad |= (f->cr & 0x00fff000u) != ((uint32_t)(seed << 12) & 0x00fff000u);
#endif
	frame_bad += bad;
	frame_checked++;
}

static void clobber_loop(void *arg)
{
	(void)arg;
	for (int i = 0; i < REG_ROUNDS; i++) {
		check_main_frame(reg_seed[i]);
		ctx_regs_clobber(&clob_ctx, reg_main, reg_seed[i] * 3 + 5);
	}
}

/* Which of the two sides share the FP environment: every path through the
 * asm core (own or shared, to own or shared) in one round each. */
static const struct {
	bool main_shares, clob_shares;
	const char *what;
} reg_modes[] = {
	{ false, false, "" },
	{ true, true, ", both sharing the FP environment" },
	{ true, false, ", the thread's context sharing the FP environment" },
	{ false, true, ", the clobbering context sharing the FP environment" },
};

static void test_registers_in(bool main_shares, bool clob_shares, const char *what)
{
	static struct kc_ctx sharing_mains[4];
	static int nsharing;
	unsigned long worst = 0;
	int rc, failed = 0;

	reg_main = main_shares ? &sharing_mains[nsharing++] : &main_ctx;
	if (main_shares)
		kc_ctx_share_fpenv(reg_main);	/* the running context: the thread */
	frame_bad = frame_checked = 0;
	rc = kc_ctx_make(&clob_ctx, NULL, 64 * 1024, clobber_loop, NULL, reg_main);
	tap_ok(rc == 0, "kc_ctx_make with a library stack%s (%d)", what, rc);
	if (rc)
		return;
	if (clob_shares)
		kc_ctx_share_fpenv(&clob_ctx);
	for (int i = 0; i < REG_ROUNDS; i++) {
		unsigned long m;

		reg_seed[i] = 0x5a5a000000000000ul ^ ((unsigned long)i * 0x9e3779b97f4a7c15ul);
		m = ctx_regs_check(reg_main, &clob_ctx, reg_seed[i]);
		if (m) {
			failed++;
			worst |= m;
		}
	}
	tap_ok(failed == 0, "callee-saved registers (integer, FP, vector, CR/VRSAVE on ppc64le) "
	       "survive %d switches to a context that clobbers them%s (mask of lost ones: %#lx)",
	       REG_ROUNDS, what, worst);
	tap_ok(frame_checked == REG_ROUNDS && frame_bad == 0,
	       "the saved frame holds each register where struct kc_ctx_frame says%s "
	       "(%d frames read, %d wrong)", what, frame_checked, frame_bad);
	/* clobber_loop returns after its last round: link (main) resumes. */
	kc_ctx_switch(reg_main, &clob_ctx);
	tap_ok(kc_ctx_done(&clob_ctx), "the clobbering context ended after its last round%s",
	       what);
	kc_ctx_free(&clob_ctx);
}

static void test_registers(void)
{
	for (size_t i = 0; i < sizeof(reg_modes) / sizeof(reg_modes[0]); i++)
		test_registers_in(reg_modes[i].main_shares, reg_modes[i].clob_shares,
				  reg_modes[i].what);
	fesetround(FE_TONEAREST);
}

/* ---------------------------------------------------------------- alignment */

static int entered;

void ctx_sp_entry_c(void *arg)
{
	(void)arg;
	entered++;
}

/* What the ABI says the stack pointer is, mod 16, at a function's first
 * instruction. */
#if defined(KC_ARCH_X86_64)
# define ENTRY_SP_MOD16 8	/* 16-aligned at the call, minus the return address */
#else
# define ENTRY_SP_MOD16 0	/* AAPCS64 and ELFv2: 16-aligned always */
#endif

static void test_alignment(void)
{
	static char buf[3 * 8192] __attribute__((aligned(16)));
	struct kc_ctx c;
	/* library stack, a caller's aligned stack, and misaligned ones */
	struct { void *stack; size_t size; const char *what; } cases[] = {
		{ NULL, 0, "library stack" },
		{ buf, 8192, "caller's aligned stack" },
		{ buf + 8192 + 3, 8192 - 5, "caller's stack at +3, odd size" },
		{ buf + 2 * 8192 + 8, 8192 - 8, "caller's stack at +8" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = kc_ctx_make(&c, cases[i].stack, cases[i].size, ctx_sp_entry, NULL, &main_ctx);

		if (!tap_eq_long(rc, 0, cases[i].what))
			continue;
		ctx_entry_sp = 1;
		entered = 0;
		kc_ctx_switch(&main_ctx, &c);
		tap_ok(entered == 1 && ctx_entry_sp % 16 == ENTRY_SP_MOD16 &&
		       ctx_entry_sp > (uintptr_t)c.stack &&
		       ctx_entry_sp <= (uintptr_t)c.stack + c.size,
		       "%s: sp at the entry function's first instruction is %#lx, "
		       "mod 16 = %lu (ABI: %d), inside the stack", cases[i].what,
		       (unsigned long)ctx_entry_sp, (unsigned long)(ctx_entry_sp % 16),
		       ENTRY_SP_MOD16);
		tap_ok(kc_ctx_done(&c), "%s: done after the entry returned", cases[i].what);
		kc_ctx_free(&c);
	}
}

/* ---------------------------------------------------------------- FP control */

/* The raw control register(s) this arch's switch keeps, as one number. */
static unsigned long fpctl_raw(void)
{
#if defined(KC_ARCH_X86_64)
	uint32_t mxcsr;
	uint16_t cw;

	__asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
	return ((unsigned long)cw << 32) | (mxcsr & 0xffc0u);	/* control bits only */
#elif defined(KC_ARCH_AARCH64)
	unsigned long fpcr;

	__asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
	return fpcr;
#elif defined(KC_ARCH_PPC64LE)
	double d;
	uint64_t v;

	__asm__ __volatile__("mffs %0" : "=d"(d));
	memcpy(&v, &d, 8);
	return v & 0xffu;	/* VE..XE, NI, RN: the control bits */
#endif
}

#if defined(KC_ARCH_X86_64)
/* x86: MXCSR and the x87 control word set apart, so that each is checked
 * on its own: SSE rounding `sse_rc`, x87 rounding `x87_rc` and precision. */
static void x86_set(unsigned sse_rc, unsigned x87_rc, unsigned x87_pc)
{
	uint32_t mxcsr;
	uint16_t cw;

	__asm__ __volatile__("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
	mxcsr = (mxcsr & ~0x6000u) | (sse_rc << 13);
	cw = (uint16_t)((cw & ~0x0f00u) | (x87_rc << 10) | (x87_pc << 8));
	__asm__ __volatile__("ldmxcsr %0\n\tfldcw %1" : : "m"(mxcsr), "m"(cw));
}
#endif

struct fpctx {
	struct kc_ctx ctx;
	int mode;		/* fesetround mode */
	unsigned long raw;	/* fpctl_raw() right after setting it */
	int bad;
};

static struct fpctx fpc[2];
static const int fp_modes[2] = { FE_UPWARD, FE_TOWARDZERO };
#define FP_ROUNDS 100

static double third(void)
{
	volatile double one = 1.0, three = 3.0;

	return one / three;
}

static void fp_body(void *arg)
{
	struct fpctx *me = arg;
	int idx = (int)(me - fpc);
	double q;

	fesetround(me->mode);
#if defined(KC_ARCH_X86_64)
	/* SSE and x87 rounding differ within the context, and from the other's */
	x86_set(idx ? 3 : 2, idx ? 1 : 3, idx ? 2 : 0);
#endif
	me->raw = fpctl_raw();
	q = third();
	for (int i = 0; i < FP_ROUNDS; i++) {
		struct kc_ctx *peer = &fpc[!idx].ctx;

		/* to the other context or to main, in turn */
		kc_ctx_switch(&me->ctx, i % 2 || kc_ctx_done(peer) ? &main_ctx : peer);
		me->bad += fpctl_raw() != me->raw;
		me->bad += third() != q;
#if !defined(KC_ARCH_X86_64)
		me->bad += fegetround() != me->mode;
#endif
	}
	fesetround(FE_TONEAREST);
}

static void test_fp_control(void)
{
	unsigned long mine;
	double q_near;
	int rounds = 0;

	fesetround(FE_TONEAREST);
	mine = fpctl_raw();
	q_near = third();
	for (int i = 0; i < 2; i++) {
		fpc[i].mode = fp_modes[i];
		if (kc_ctx_make(&fpc[i].ctx, NULL, 64 * 1024, fp_body, &fpc[i], &main_ctx) != 0) {
			tap_ok(0, "kc_ctx_make for the FP control test");
			return;
		}
	}
	while (!kc_ctx_done(&fpc[0].ctx) || !kc_ctx_done(&fpc[1].ctx)) {
		kc_ctx_switch(&main_ctx, kc_ctx_done(&fpc[0].ctx) ? &fpc[1].ctx : &fpc[0].ctx);
		rounds += fpctl_raw() != mine || third() != q_near;
	}
	tap_ok(fpc[0].raw != fpc[1].raw && fpc[0].raw != mine && fpc[1].raw != mine,
	       "three contexts, three FP control states (%#lx, %#lx, main %#lx)",
	       fpc[0].raw, fpc[1].raw, mine);
	tap_ok(fpc[0].bad == 0 && fpc[1].bad == 0,
	       "each context's rounding mode survives %d switches (%d and %d wrong)",
	       FP_ROUNDS, fpc[0].bad, fpc[1].bad);
	tap_ok(rounds == 0, "the main context's round-to-nearest comes back every time "
	       "(%d wrong)", rounds);
	for (int i = 0; i < 2; i++)
		kc_ctx_free(&fpc[i].ctx);
}

/* ------------------------------------------------- shared FP environment */

/*
 * Two contexts that promised not to change the FP environment
 * (kc_ctx_share_fpenv), sh1 and sh2, one without the promise (own), and the
 * thread's (main_ctx, without it).  sh1 breaks its promise twice.  What
 * <kcross/ctx.h> says, step by step (the mode each step sees):
 *   1 sh1, first run      main's FE_UPWARD: the thread's as it is, not the
 *                         maker's at kc_ctx_make (FE_TONEAREST)
 *   2 sh2, after sh1 set FE_TOWARDZERO   FE_TOWARDZERO: a broken promise
 *                         reaches the contexts that share the environment
 *   3 own, first run      FE_TONEAREST, the maker's: its own, not sh2's
 *   4 sh1, after own set FE_DOWNWARD     FE_DOWNWARD: the thread's, own's
 *   5 own, after sh1 set FE_TOWARDZERO again   FE_DOWNWARD: its own kept
 *   6 main                FE_UPWARD: its own kept through all of it
 *   7 sh2, from main      FE_UPWARD
 *   8 main, sh2 returned  FE_UPWARD
 */
static struct kc_ctx sh1, sh2, own;
#define SH_STEPS 8
static int sh_seen[SH_STEPS + 1];
static unsigned long sh_raw[SH_STEPS + 1];
static int sh_n;

static void sh_see(void)
{
	if (sh_n < SH_STEPS) {
		sh_n++;
		sh_seen[sh_n] = fegetround();
		sh_raw[sh_n] = fpctl_raw();
	}
}

static void sh1_body(void *arg)
{
	(void)arg;
	sh_see();			/* 1 */
	fesetround(FE_TOWARDZERO);	/* the promise broken */
	kc_ctx_switch(&sh1, &sh2);
	sh_see();			/* 4 */
	fesetround(FE_TOWARDZERO);	/* again */
	kc_ctx_switch(&sh1, &own);
}

static void sh2_body(void *arg)
{
	(void)arg;
	sh_see();			/* 2 */
	kc_ctx_switch(&sh2, &own);
	sh_see();			/* 7 */
}

static void own_body(void *arg)
{
	(void)arg;
	sh_see();			/* 3 */
	fesetround(FE_DOWNWARD);
	kc_ctx_switch(&own, &sh1);
	sh_see();			/* 5 */
	kc_ctx_switch(&own, &main_ctx);
}

static const char *mode_name(int m)
{
	return m == FE_TONEAREST ? "to nearest" : m == FE_UPWARD ? "upward" :
	       m == FE_DOWNWARD ? "downward" : m == FE_TOWARDZERO ? "toward zero" : "?";
}

static void test_fp_shared(void)
{
	static const int want[SH_STEPS + 1] = {
		0, FE_UPWARD, FE_TOWARDZERO, FE_TONEAREST, FE_DOWNWARD,
		FE_DOWNWARD, FE_UPWARD, FE_UPWARD, FE_UPWARD,
	};
	static const int modes[4] = { FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
	unsigned long raw_of[4];
	char got[200] = "";
	int bad = 0, rc = 0;

	/* Each mode's control registers as fesetround leaves them (x86-64:
	 * MXCSR and the x87 control word both), to compare the raw ones with. */
	for (int i = 0; i < 4; i++) {
		fesetround(modes[i]);
		raw_of[i] = fpctl_raw();
	}
	fesetround(FE_TONEAREST);
	rc |= kc_ctx_make(&sh1, NULL, 64 * 1024, sh1_body, NULL, &main_ctx);
	rc |= kc_ctx_make(&sh2, NULL, 64 * 1024, sh2_body, NULL, &main_ctx);
	rc |= kc_ctx_make(&own, NULL, 64 * 1024, own_body, NULL, &main_ctx);
	if (!tap_ok(rc == 0, "kc_ctx_make for the shared FP environment test"))
		return;
	tap_ok(!kc_ctx_shares_fpenv(&sh1) && !kc_ctx_shares_fpenv(&main_ctx),
	       "a made context and the thread's do not share the FP environment until told");
	kc_ctx_share_fpenv(&sh1);
	kc_ctx_share_fpenv(&sh2);
	tap_ok(kc_ctx_shares_fpenv(&sh1) && kc_ctx_shares_fpenv(&sh2) &&
	       !kc_ctx_shares_fpenv(&own), "kc_ctx_share_fpenv marks the context, only it");

	fesetround(FE_UPWARD);
	sh_n = 0;
	kc_ctx_switch(&main_ctx, &sh1);		/* steps 1-5; own switches back */
	sh_see();				/* 6 */
	kc_ctx_switch(&main_ctx, &sh2);		/* 7; sh2 returns to main */
	sh_see();				/* 8 */
	for (int i = 1; i <= SH_STEPS; i++) {
		int m = 0;

		while (modes[m] != want[i])
			m++;
		bad += i > sh_n || sh_seen[i] != want[i] || sh_raw[i] != raw_of[m];
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i > 1 ? ", " : "",
			 i > sh_n ? "-" : mode_name(sh_seen[i]));
	}
	tap_ok(bad == 0, "sharing contexts run in the thread's FP environment, a broken promise "
	       "reaches only them, contexts without the promise keep their own (steps 1-8: "
	       "%s; %d wrong)", got, bad);

	/* The rest return to main through their links: a sharing context's
	 * last switch restores main's own state. */
	kc_ctx_switch(&main_ctx, &own);
	kc_ctx_switch(&main_ctx, &sh1);
	tap_ok(kc_ctx_done(&sh1) && kc_ctx_done(&sh2) && kc_ctx_done(&own) &&
	       fegetround() == FE_UPWARD && fpctl_raw() == raw_of[1],
	       "all three ended; main's FE_UPWARD back after each (now %s)",
	       mode_name(fegetround()));
	kc_ctx_free(&sh1);
	kc_ctx_free(&sh2);
	kc_ctx_free(&own);
	fesetround(FE_TONEAREST);

	/* A context made from a sharing struct again: kc_ctx_make clears the promise. */
	if (kc_ctx_make(&sh1, NULL, 0, sh2_body, NULL, &main_ctx) == 0) {
		tap_ok(!kc_ctx_shares_fpenv(&sh1), "kc_ctx_make clears the promise");
		kc_ctx_free(&sh1);
	}
}

/* The thread's own context sharing the environment: it keeps none of its
 * own, so a context with its own state that it switches to leaves that
 * state behind when it switches back. */
static struct kc_ctx thread_sharing, setter;

static void setter_body(void *arg)
{
	(void)arg;
	fesetround(FE_DOWNWARD);	/* its own state: it has no promise to keep */
}

static void test_fp_shared_thread(void)
{
	int after;

	fesetround(FE_UPWARD);
	if (!tap_ok(kc_ctx_make(&setter, NULL, 64 * 1024, setter_body, NULL,
				&thread_sharing) == 0, "kc_ctx_make for the sharing thread test"))
		return;
	kc_ctx_share_fpenv(&thread_sharing);
	kc_ctx_switch(&thread_sharing, &setter);	/* setter returns: to its link */
	after = fegetround();
	tap_ok(kc_ctx_done(&setter) && after == FE_DOWNWARD,
	       "the thread's context, sharing, resumes in the state the last context left "
	       "(%s; its own was upward, the other's downward)", mode_name(after));
	kc_ctx_free(&setter);
	fesetround(FE_TONEAREST);
}

/* ---------------------------------------------------------------- many */

#define MANY 1000
#define MANY_ROUNDS 20
static struct kc_ctx many[MANY];
static int many_bad, many_turns;

static void many_body(void *arg)
{
	int id = (int)(intptr_t)arg;
	volatile unsigned long local[16];	/* on this context's stack */

	for (int k = 0; k < 16; k++)
		local[k] = (unsigned long)id * 1000003u + (unsigned long)k;
	for (int r = 0; r < MANY_ROUNDS; r++) {
		for (int k = 0; k < 16; k++)
			many_bad += local[k] != (unsigned long)id * 1000003u + (unsigned long)k + (unsigned long)r;
		for (int k = 0; k < 16; k++)
			local[k]++;
		many_turns++;
		/* round-robin: the next context, the last one back to main */
		kc_ctx_switch(&many[id], id + 1 < MANY ? &many[id + 1] : &main_ctx);
	}
}

static void test_many(void)
{
	int made = 0, done = 0;

	for (int i = 0; i < MANY; i++)
		made += kc_ctx_make(&many[i], NULL, 16 * 1024, many_body, (void *)(intptr_t)i,
				    &main_ctx) == 0;
	tap_eq_long(made, MANY, "contexts made, each with its own guarded stack");
	if (made != MANY)
		return;
	for (int r = 0; r < MANY_ROUNDS; r++)
		kc_ctx_switch(&main_ctx, &many[0]);
	tap_ok(many_turns == MANY * MANY_ROUNDS && many_bad == 0,
	       "%d contexts x %d rounds, round-robin: %d turns, %d stack-local values wrong",
	       MANY, MANY_ROUNDS, many_turns, many_bad);
	/* one more round: each body returns to main (its link) in turn */
	for (int i = 0; i < MANY; i++) {
		kc_ctx_switch(&main_ctx, &many[i]);
		done += kc_ctx_done(&many[i]);
	}
	tap_eq_long(done, MANY, "contexts whose function returned ended cleanly (done, back to link)");
	for (int i = 0; i < MANY; i++)
		kc_ctx_free(&many[i]);
}

/* ---------------------------------------------------------------- guard page */

static struct kc_ctx deep_ctx;

static unsigned long deep(unsigned long n)
{
	volatile char pad[512];

	pad[0] = (char)n;
	pad[sizeof(pad) - 1] = (char)n;
	return n ? deep(n - 1) + pad[0] + pad[sizeof(pad) - 1] : 0;
}

static void overflow(void *arg)
{
	*(volatile unsigned long *)arg = deep(1ul << 20);
}

static void test_guard_page(void)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_skip("guard page: fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		unsigned long sink;

		setrlimit(RLIMIT_CORE, &none);
		signal(SIGSEGV, SIG_DFL);
		if (kc_ctx_make(&deep_ctx, NULL, 16 * 1024, overflow, &sink, &main_ctx) != 0)
			_exit(3);
		kc_ctx_switch(&main_ctx, &deep_ctx);
		_exit(0);	/* the overflow did not fault */
	}
	if (waitpid(pid, &status, 0) != pid) {
		tap_ok(0, "guard page: waitpid: %s", strerror(errno));
		return;
	}
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	       "a context overflowing its 16 KiB library stack dies of SIGSEGV on the guard page "
	       "(status %#x)", status);
}

/* ---------------------------------------------------------------- errors */

static void nop(void *arg)
{
	(void)arg;
}

static void test_errors(void)
{
	static char small[KC_CTX_MIN_STACK - 1];
	struct kc_ctx c;

	tap_eq_long(kc_ctx_make(&c, NULL, 0, NULL, NULL, NULL), -EINVAL, "no function: -EINVAL");
	tap_eq_long(kc_ctx_make(&c, small, sizeof(small), nop, NULL, NULL), -EINVAL,
		    "a caller's stack below KC_CTX_MIN_STACK: -EINVAL");
	tap_eq_long(kc_ctx_make(&c, NULL, 100, nop, NULL, NULL), -EINVAL,
		    "a library stack below KC_CTX_MIN_STACK: -EINVAL");
	tap_eq_long(kc_ctx_make(&c, NULL, 0, nop, NULL, NULL), 0, "a default library stack");
	tap_ok(c.size == KC_CTX_DEFAULT_STACK && c.map != NULL && !kc_ctx_done(&c),
	       "it is KC_CTX_DEFAULT_STACK bytes, mapped by the library, not done");
	kc_ctx_free(&c);
	tap_ok(c.map == NULL, "kc_ctx_free unmaps it");
}

/* ---------------------------------------------------------------- kc_sched */

static struct kc_sched sched;
static char order[256];

static void log_step(const char *what)
{
	strncat(order, what, sizeof(order) - strlen(order) - 1);
}

static void rounds3(void *arg)
{
	const char *name = arg;
	char step[8];

	for (int r = 1; r <= 3; r++) {
		snprintf(step, sizeof(step), "%s%d ", name, r);
		log_step(step);
		kc_sched_yield(&sched);
	}
}

static int child_id, join_rc, self_rc, run_rc, self_id;

static void parent(void *arg)
{
	(void)arg;
	log_step("p ");
	child_id = kc_sched_spawn(&sched, rounds3, "k", 0);
	self_id = kc_sched_self(&sched);
	self_rc = kc_sched_join(&sched, self_id);
	run_rc = kc_sched_run(&sched);
	join_rc = kc_sched_join(&sched, child_id);
	log_step("P ");
}

static void test_sched(void)
{
	int a, b, p;

	kc_sched_init(&sched);
	order[0] = 0;
	a = kc_sched_spawn(&sched, rounds3, "a", 0);
	b = kc_sched_spawn(&sched, rounds3, "b", 16 * 1024);
	kc_sched_spawn(&sched, rounds3, "c", 0);
	tap_ok(a == 1 && b == 2, "spawn returns ids 1, 2, ...");
	tap_eq_long(kc_sched_self(&sched), 0, "kc_sched_self outside the tasks: 0");
	tap_eq_long(kc_sched_run(&sched), 0, "kc_sched_run");
	tap_ok(strcmp(order, "a1 b1 c1 a2 b2 c2 a3 b3 c3 ") == 0,
	       "yield is round-robin in spawn order: \"%s\"", order);
	tap_eq_long(kc_sched_join(&sched, b), 0, "join of an ended task: 0 at once");
	tap_eq_long(kc_sched_join(&sched, 99), -ESRCH, "join of an unknown id: -ESRCH");

	order[0] = 0;
	kc_sched_spawn(&sched, rounds3, "x", 0);
	p = kc_sched_spawn(&sched, parent, NULL, 0);
	kc_sched_spawn(&sched, rounds3, "y", 0);
	tap_eq_long(kc_sched_join(&sched, p), 0,
		    "join from outside runs the tasks until that one ended");
	/* p spawns k, which runs once y and x have had their turn after it; p
	 * waits for k (joining yields), then ends last. */
	tap_ok(strcmp(order, "x1 p y1 x2 k1 y2 x3 k2 y3 k3 P ") == 0,
	       "a spawned task runs after the runnable ones; join waits: \"%s\"", order);
	tap_eq_long(self_rc, -EDEADLK, "a task joining itself: -EDEADLK");
	tap_eq_long(run_rc, -EDEADLK, "kc_sched_run from a task: -EDEADLK");
	tap_eq_long(join_rc, 0, "join from a task: 0");
	tap_eq_long(kc_sched_run(&sched), 0, "run with nothing left");
	kc_sched_destroy(&sched);
}

int main(void)
{
	test_errors();
	test_registers();
	test_alignment();
	test_fp_control();
	test_fp_shared();
	test_fp_shared_thread();
	test_many();
	test_guard_page();
	test_sched();
	return tap_done();
}
