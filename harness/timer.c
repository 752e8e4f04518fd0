/* SPDX-License-Identifier: MIT */
/*
 * The timer: the CPU's cycle counter when it runs at a constant rate,
 * calibrated against CLOCK_MONOTONIC_RAW (never slewed by NTP); otherwise
 * CLOCK_MONOTONIC_RAW itself.
 *
 * Calibration measures the counter over two back-to-back intervals and keeps
 * the second; their disagreement (ppm) is recorded so that a machine whose
 * counter wanders shows it in its results.  Each counter read is bracketed
 * by clock reads; an interval whose brackets are wide (the thread was
 * preempted beside a counter read, which would skew the frequency by the
 * time lost) is taken again, and the tightest of a few attempts is kept.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kcross/settings.h>

#include "harness.h"

#if defined(KC_ARCH_X86_64)
# include <cpuid.h>
#endif

uint64_t kh_clock_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * CLOCK_MONOTONIC's second carry.  The vDSO (lib/vdso/gettimeofday.c,
 * do_hres) adds the time since the last tick to the base the tick stored,
 * then carries whole seconds with __iter_div_u64_rem, a loop; the tick stores
 * the base with its nanoseconds below a second, so the loop runs once only
 * between the moment the clock passes a whole second and the next tick (at
 * most one tick, 4 ms at HZ=250, in every second).  In that window each read
 * costs more (11 instructions in the ppc64le lab: clock_gettime-vdso 74
 * instead of 63 per call), and a benchmark short enough to fit in it (the
 * labs' 11 samples of 0.2 ms) measured the window, depending on where the
 * runs before it had left the clock.  The window is exactly when the fine
 * clock's second is ahead of the coarse one's (the tick's base).  A batch
 * is started outside it and not less than batch_ns before the next second,
 * so that at most the one batch a late tick stretches over it can be touched,
 * and the median leaves that one out.
 */
void kh_clock_avoid_second_carry(uint64_t batch_ns)
{
	struct timespec fine, coarse, res;
	uint64_t now, limit = 0;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec)
		return;		/* no coarse clock, or a tick of a second or more */
	if (batch_ns >= 1000000000u - (uint64_t)res.tv_nsec)
		batch_ns = 0;	/* no room before a second for it: avoid the carry alone */
	for (;;) {
		if (clock_gettime(CLOCK_MONOTONIC, &fine) ||
		    clock_gettime(CLOCK_MONOTONIC_COARSE, &coarse))
			return;
		if (fine.tv_sec == coarse.tv_sec &&
		    (uint64_t)(1000000000 - fine.tv_nsec) > batch_ns)
			return;
		now = (uint64_t)fine.tv_sec * 1000000000u + (uint64_t)fine.tv_nsec;
		if (!limit)
			limit = now + batch_ns + 2 * (uint64_t)res.tv_nsec;
		else if (now > limit)
			return;		/* no tick came (a tickless CPU): go on */
	}
}

/* 1: the counter is architecturally constant-rate, 0: not, -1: unknown. */
static int counter_invariant(const char **why)
{
#if defined(KC_ARCH_X86_64)
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) {
		*why = "CPUID leaf 0x80000007 absent: cannot tell whether the TSC is invariant";
		return -1;
	}
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	if (!(d & (1u << 8))) {
		*why = "TSC not invariant (CPUID 0x80000007 EDX bit 8 clear)";
		return 0;
	}
	return 1;
#else
	/* CNTVCT_EL0 and the POWER time base run at a fixed frequency by
	 * architecture. */
	(void)why;
	return 1;
#endif
}

/* KCROSS_TIMER: auto (or unset) uses the cycle counter when it can,
 * clock_gettime never does.  main.c refuses any other value at start; here
 * an invalid one counts as unset. */
const char *const kh_timer_setting_values[] = { "auto", "clock_gettime", NULL };

/* Brackets wider than this fraction of the interval are retried: a
 * preemption of 25 us in 50 ms, well above a clock read even under qemu-user
 * (about 2 us there).  The midpoints keep the error well below it. */
#define CALIB_MAX_UNCERTAINTY 5e-4
#define CALIB_ATTEMPTS 5

/*
 * Ticks per second over one interval of `ms`, and in *unc the relative
 * uncertainty from the brackets around the two counter reads.
 */
static double measure_hz_once(double ms, double *unc)
{
	uint64_t a0, a1, b0, b1, c0, c1;
	uint64_t span = (uint64_t)(ms * 1e6);
	double ns;

	a0 = kh_clock_raw_ns();
	c0 = kc_ticks_begin();
	a1 = kh_clock_raw_ns();
	do
		b0 = kh_clock_raw_ns();
	while (b0 - a1 < span);
	c1 = kc_ticks_end();
	b1 = kh_clock_raw_ns();
	/* Each counter read lies within its bracket: take the midpoints. */
	ns = (double)(b0 - a1) + (double)((b1 - b0) + (a1 - a0)) / 2;
	*unc = (double)((b1 - b0) + (a1 - a0)) / 2 / ns;
	return (double)(c1 - c0) * 1e9 / ns;
}

/* The tightest of up to CALIB_ATTEMPTS intervals (usually the first). */
static double measure_hz(double ms)
{
	double best = 0, best_unc = INFINITY;

	for (int i = 0; i < CALIB_ATTEMPTS && best_unc > CALIB_MAX_UNCERTAINTY; i++) {
		double unc, hz = measure_hz_once(ms, &unc);

		if (unc < best_unc) {
			best = hz;
			best_unc = unc;
		}
	}
	return best;
}

int kh_timer_init(struct kh_timer *t, double calib_ms)
{
	const char *why = NULL;
	const char *force = kc_setting("KCROSS_TIMER", kh_timer_setting_values, NULL, 0);

	memset(t, 0, sizeof(*t));
	t->calib_ms = calib_ms;
	t->invariant = counter_invariant(&why);
	if (force && !strcmp(force, "clock_gettime"))
		why = "KCROSS_TIMER=clock_gettime";
	else if (t->invariant == 1) {
		double h1 = measure_hz(calib_ms), h2 = measure_hz(calib_ms);

		if (h1 > 0 && h2 > 0) {
			t->source = KC_TICKS_NAME;
			t->cycle_counter = true;
			t->hz = h2;
			t->calib_error_ppm = fabs(h2 - h1) / h2 * 1e6;
			return 0;
		}
		why = "cycle counter did not advance during calibration";
	}
	t->source = "clock_gettime";
	t->cycle_counter = false;
	t->hz = 1e9;
	t->why_fallback = why;
	return 0;
}
