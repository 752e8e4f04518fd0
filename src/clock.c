/* SPDX-License-Identifier: MIT */
/*
 * clock_gettime and getcpu: vDSO or system call, chosen at the first call.
 *
 * Each entry point has one function pointer with three possible values:
 * its init stub (not decided yet), the vDSO function, or NULL (use the
 * system call).  The stub decides and installs the answer with a
 * compare-and-swap; racing first callers compute the same answer, so
 * whichever CAS wins, every caller ends up with it.  The pointer only ever
 * names code that is valid for the life of the process, and no data is
 * published through it, so relaxed atomics suffice (plain loads and stores
 * on every supported architecture).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <kcross/clock.h>
#include <kcross/settings.h>
#include <kcross/vdso.h>

typedef kc_vdso_clock_gettime_fn cgt_fn;
/* The kernel's vDSO getcpu takes a third argument, an unused cache. */
typedef kc_vdso_getcpu_fn getcpu_fn;

/* KCROSS_VDSO=0: behave as if the vDSO lacked every function; 1 (or unset):
 * use it.  Any other value is refused by kc_settings_error(). */
const char *const kc__vdso_setting_values[] = { "0", "1", NULL };

static bool vdso_disabled(void)
{
	const char *e = kc_setting("KCROSS_VDSO", kc__vdso_setting_values, NULL, 0);

	return e && !strcmp(e, "0");
}

/* ------------------------------------------------------------ clock_gettime */

static int cgt_init(clockid_t clk, struct timespec *ts);
static cgt_fn cgt = cgt_init;

static cgt_fn cgt_resolve(void)
{
	cgt_fn stub = cgt_init, f = NULL;

	if (!vdso_disabled())
		f = (cgt_fn)kc_vdso_sym(KC_VDSO_CLOCK_GETTIME);
	if (__atomic_compare_exchange_n(&cgt, &stub, f, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return f;
	return stub;	/* another thread's answer, now in stub */
}

static int cgt_init(clockid_t clk, struct timespec *ts)
{
	cgt_fn f = cgt_resolve();

	/* Non-zero sends kc_clock_gettime() to the system call. */
	return f ? f(clk, ts) : -ENOSYS;
}

int kc_clock_gettime(clockid_t clk, struct timespec *ts)
{
	cgt_fn f = __atomic_load_n(&cgt, __ATOMIC_RELAXED);

	/*
	 * Any non-zero result is a failure under both vDSO conventions
	 * (-errno, or ppc's positive errno with CR0.SO, which C cannot see).
	 * The system call then gives the authoritative -errno; on x86-64 and
	 * arm64 the vDSO has usually just made that same call itself, but an
	 * error is the slow path and this keeps one rule for all.
	 */
	if (f && KC_LIKELY(f(clk, ts) == 0))
		return 0;
	return kc_clock_gettime_syscall(clk, ts);
}

const char *kc_clock_gettime_impl(void)
{
	cgt_fn f = __atomic_load_n(&cgt, __ATOMIC_RELAXED);

	if (f == cgt_init)
		f = cgt_resolve();
	return f ? "vdso" : "syscall";
}

/* ------------------------------------------------------------------ getcpu */

static long getcpu_init(unsigned *cpu, unsigned *node, void *cache);
static getcpu_fn gcpu = getcpu_init;

static getcpu_fn getcpu_resolve(void)
{
	getcpu_fn stub = getcpu_init, f = NULL;

#ifdef KC_VDSO_GETCPU	/* not every architecture's vDSO has one (arm64) */
	if (!vdso_disabled())
		f = (getcpu_fn)kc_vdso_sym(KC_VDSO_GETCPU);
#endif
	if (__atomic_compare_exchange_n(&gcpu, &stub, f, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return f;
	return stub;
}

static long getcpu_init(unsigned *cpu, unsigned *node, void *cache)
{
	getcpu_fn f = getcpu_resolve();

	return f ? f(cpu, node, cache) : -ENOSYS;
}

int kc_getcpu(unsigned *cpu, unsigned *node)
{
	getcpu_fn f = __atomic_load_n(&gcpu, __ATOMIC_RELAXED);

	if (f && KC_LIKELY(f(cpu, node, NULL) == 0))
		return 0;
	return kc_getcpu_syscall(cpu, node);
}

const char *kc_getcpu_impl(void)
{
	getcpu_fn f = __atomic_load_n(&gcpu, __ATOMIC_RELAXED);

	if (f == getcpu_init)
		f = getcpu_resolve();
	return f ? "vdso" : "syscall";
}
