/* SPDX-License-Identifier: MIT */
/*
 * kcross/syscall.h - raw system calls.
 *
 * kc_syscall0..6(nr, ...)   the architecture's baseline instruction, inline
 *                           (KC_SYSMECH_NATIVE_NAME names it); return the
 *                           result or -errno.
 * kc_syscall_alt0..6        only where the architecture has a second
 *                           instruction (KC_HAVE_SYSCALL_ALT; its name is
 *                           KC_SYSMECH_ALT_NAME; see the arch header).
 * kc_sys0..6(nr, ...)       the mechanism chosen at run time.  The choice is
 *                           one cached word tested inline, so a call through
 *                           kc_sys is the instruction itself behind a load
 *                           and a branch, with no call/ret pair around it (at most
 *                           2 instructions over the inline instruction on
 *                           every arch, counted in the labs; see the arch
 *                           header's kc__sysmech_load for how it is read).
 *
 * The choice: the fastest mechanism the machine offers, unless the
 * environment variable KCROSS_SYSCALL names one: this architecture's native
 * name (KC_SYSMECH_NATIVE_NAME), its alternative's (KC_SYSMECH_ALT_NAME, if
 * any), "libc" or "auto".  Any other value (another architecture's name
 * included) is -EINVAL; naming the alternative on a machine that lacks it is
 * -ENOTSUP.  kc_syscall_init_error() reports either (the word keeps the
 * always-valid default).
 * "libc" routes every call through syscall(3), for tools that intercept libc.
 */
#ifndef KCROSS_SYSCALL_H
#define KCROSS_SYSCALL_H

#include <kcross/arch.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The mechanisms, named the same on every architecture; their names (what
 * kc_sysmech_name() returns and KCROSS_SYSCALL accepts) come from the arch
 * header.  KC_SYSMECH_ALT exists everywhere so that code can loop over the
 * enum, but it is available only where KC_HAVE_SYSCALL_ALT is 1.
 */
enum kc_sysmech {
	KC_SYSMECH_LIBC = 0,	/* syscall(3) */
	KC_SYSMECH_NATIVE,	/* the arch's baseline instruction: kc_syscallN */
	KC_SYSMECH_ALT,		/* its alternative, if any: kc_syscall_altN */
	KC_SYSMECH_COUNT
};

/*
 * The cached word: the mechanism XOR KC_SYSMECH_NATIVE XOR the arch's
 * KC_SYSMECH_NATIVE_WORD, so that the native instruction is the value the
 * arch tests in the fewest instructions (0: aarch64 `ldr; cbnz`; x86-64 1:
 * `cmpl $1, mem; jne`).  Starts at the native value, valid before any init.
 * Read through kc__sysmech_load() (the arch header's, else a plain load).
 *
 * Tested alternative first, then native, each out of line (KC_UNLIKELY):
 * whichever the machine selected, its path is then one not-taken branch per
 * test before it, or one taken branch and the jump back (ppc64le, where the
 * alternative is POWER9's default: 2 branches either way).
 */
extern unsigned int kc__sysmech;
#define KC__SYSMECH_WORD(m)						\
	((unsigned int)(m) ^ (unsigned int)KC_SYSMECH_NATIVE ^ KC_SYSMECH_NATIVE_WORD)

/* Out of line: syscall(3), converted to -errno. */
long kc__sys_libc(long n, long a1, long a2, long a3, long a4, long a5, long a6);

#if KC_HAVE_SYSCALL_ALT
# define KC__SYS_ALT(N, ...)						\
	if (KC_UNLIKELY(kc__w == KC__SYSMECH_WORD(KC_SYSMECH_ALT)))	\
		return kc_syscall_alt##N(__VA_ARGS__);
#else
# define KC__SYS_ALT(N, ...)
#endif

#define KC__SYS_BODY(N, a1, a2, a3, a4, a5, a6, ...)			\
	unsigned int kc__w = kc__sysmech_load(&kc__sysmech);		\
	KC__SYS_ALT(N, __VA_ARGS__)					\
	if (KC_UNLIKELY(kc__w != KC__SYSMECH_WORD(KC_SYSMECH_NATIVE)))	\
		return kc__sys_libc(n, a1, a2, a3, a4, a5, a6);		\
	return kc_syscall##N(__VA_ARGS__)

static inline long kc_sys0(long n)
{ KC__SYS_BODY(0, 0, 0, 0, 0, 0, 0, n); }
static inline long kc_sys1(long n, long a1)
{ KC__SYS_BODY(1, a1, 0, 0, 0, 0, 0, n, a1); }
static inline long kc_sys2(long n, long a1, long a2)
{ KC__SYS_BODY(2, a1, a2, 0, 0, 0, 0, n, a1, a2); }
static inline long kc_sys3(long n, long a1, long a2, long a3)
{ KC__SYS_BODY(3, a1, a2, a3, 0, 0, 0, n, a1, a2, a3); }
static inline long kc_sys4(long n, long a1, long a2, long a3, long a4)
{ KC__SYS_BODY(4, a1, a2, a3, a4, 0, 0, n, a1, a2, a3, a4); }
static inline long kc_sys5(long n, long a1, long a2, long a3, long a4, long a5)
{ KC__SYS_BODY(5, a1, a2, a3, a4, a5, 0, n, a1, a2, a3, a4, a5); }
static inline long kc_sys6(long n, long a1, long a2, long a3, long a4, long a5,
			   long a6)
{ KC__SYS_BODY(6, a1, a2, a3, a4, a5, a6, n, a1, a2, a3, a4, a5, a6); }

/* Name of a mechanism: "libc", KC_SYSMECH_NATIVE_NAME, KC_SYSMECH_ALT_NAME;
 * "unknown" for a value out of range or the alternative where there is none. */
const char *kc_sysmech_name(enum kc_sysmech m);
/* The mechanism kc_sys* use now. */
enum kc_sysmech kc_syscall_mechanism(void);

/*
 * The selection rule, pure so tests can inject any AT_HWCAP2 value.
 * force: NULL, "" or "auto" for the best available, else a mechanism name.
 * Where the architecture has an alternative, AT_HWCAP2 & KC_SYSMECH_ALT_HWCAP2
 * says whether the machine offers it.
 * Returns 0 and sets *out, -EINVAL for an unknown name, -ENOTSUP for a
 * mechanism this hwcap2 (or this architecture) does not offer.
 */
int kc_syscall_choose(unsigned long hwcap2, const char *force,
		      enum kc_sysmech *out);
/* Mechanisms available on this machine, as a bit mask of 1u << kc_sysmech
 * (libc and native always; the alternative when the machine offers it). */
unsigned int kc_syscall_available(void);
/* Install a mechanism; -ENOTSUP if this machine lacks it.  A start-up call:
 * not thread-safe with respect to calls in flight (call it before starting
 * threads), and a function already running may keep the choice it read (on
 * ppc64le the compiler reads it once per function, code inlined into it
 * included: see kc__sysmech_load in the arch header), so make the calls that
 * should see the new choice from functions entered after it returns. */
int kc_syscall_select(enum kc_sysmech m);
/* 0, or the -errno that KCROSS_SYSCALL caused at start-up. */
int kc_syscall_init_error(void);
/* The KCROSS_SYSCALL value seen at start-up, or NULL. */
const char *kc_syscall_forced(void);

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_SYSCALL_H */
