/* SPDX-License-Identifier: MIT */
/*
 * The calibrated cycle counter agrees with CLOCK_MONOTONIC_RAW: an accuracy
 * check of the calibration, not a timing threshold (both clocks measure the
 * same interval).
 *
 * Each 100 ms window reads the counter at its start and end, each read
 * bracketed by clock reads before and after, so the time between the two
 * counter reads is known to lie in [lo, hi] however long the thread was
 * preempted around them.  The counter's figure must fall within 1% of that
 * bracket.  A window whose bracket is wider than KEEP of the window (the
 * thread was preempted inside it) could hide an error and is not used.  Up to
 * WINDOWS windows are taken; the test passes when one usable window agrees
 * (a busy machine may disturb some), and it shows its power on the same
 * windows: a frequency 2% off must disagree in every usable one.
 */
#include <math.h>
#include <time.h>

#include "harness.h"
#include "tap.h"

#define WINDOWS 5
#define WINDOW_NS 100000000u
#define TOLERANCE 0.01		/* beyond the bracket */
#define KEEP 0.002		/* widest usable bracket, relative to the window */

struct window {
	double lo, hi;		/* ns between the two counter reads, bounds */
	uint64_t ticks;		/* counter ticks between them */
};

static void take(const struct kh_timer *t, struct window *w)
{
	uint64_t a0, a1, b0, b1, c0, c1;

	a0 = kh_clock_raw_ns();
	c0 = kh_timer_begin(t);
	a1 = kh_clock_raw_ns();
	do
		b0 = kh_clock_raw_ns();
	while (b0 - a1 < WINDOW_NS);
	c1 = kh_timer_end(t);
	b1 = kh_clock_raw_ns();
	w->lo = (double)(b0 - a1);
	w->hi = (double)(b1 - a0);
	w->ticks = c1 - c0;
}

static bool usable(const struct window *w)
{
	return w->hi - w->lo <= KEEP * w->lo;
}

/* Relative distance of the counter's figure at hz from [lo, hi]; 0 inside. */
static double error(const struct window *w, double hz)
{
	double ns = (double)w->ticks * 1e9 / hz;

	return ns < w->lo ? (w->lo - ns) / w->lo : ns > w->hi ? (ns - w->hi) / w->hi : 0;
}

int main(void)
{
	struct kh_timer t;
	struct window w[WINDOWS];
	int used = 0, agreed = 0, off_agreed = 0;

	kh_timer_init(&t, 50);
	tap_diag("timer %s, %.6g MHz, invariant %d, calibration disagreement %.1f ppm%s%s",
		 t.source, t.hz / 1e6, t.invariant, t.calib_error_ppm,
		 t.why_fallback ? ", fallback because: " : "", t.why_fallback ? t.why_fallback : "");
	if (!t.cycle_counter)
		tap_skip_all("no usable cycle counter here: %s", t.why_fallback);
	tap_ok(t.hz > 1e6 && t.hz < 1e11, "plausible frequency %.6g Hz", t.hz);

	for (int i = 0; i < WINDOWS && !agreed; i++) {
		take(&t, &w[i]);
		tap_diag("window %d: CLOCK_MONOTONIC_RAW %.0f..%.0f ns (bracket %.4f%%), counter %.0f ns"
			 " (%.4f%% outside)%s", i, w[i].lo, w[i].hi, (w[i].hi - w[i].lo) / w[i].lo * 100,
			 (double)w[i].ticks * 1e9 / t.hz, error(&w[i], t.hz) * 100,
			 usable(&w[i]) ? "" : ", bracket too wide: not used");
		if (!usable(&w[i]))
			continue;
		used++;
		agreed += error(&w[i], t.hz) <= TOLERANCE;
		off_agreed += error(&w[i], t.hz * 1.02) <= TOLERANCE;
		off_agreed += error(&w[i], t.hz / 1.02) <= TOLERANCE;
	}
	if (!used)
		tap_ok(0, "no window of %d had a bracket within %.2f%% (machine too busy to check)",
		       WINDOWS, KEEP * 100);
	tap_ok(agreed, "counter agrees with CLOCK_MONOTONIC_RAW within %.0f%% in one of %d usable"
	       " windows of 100 ms", TOLERANCE * 100, used);
	tap_ok(used && !off_agreed, "a frequency 2%% off (either way) disagrees in every usable window");
	{
		uint64_t a = kh_timer_begin(&t), b = kh_timer_end(&t);

		tap_ok(b >= a, "two consecutive reads are ordered (%llu then %llu)",
		       (unsigned long long)a, (unsigned long long)b);
	}
	return tap_done();
}
