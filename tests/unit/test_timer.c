/* SPDX-License-Identifier: MIT */
/*
 * The calibrated cycle counter agrees with CLOCK_MONOTONIC_RAW within 1%
 * over 100 ms.  (An accuracy check of the calibration, not a timing
 * threshold: both clocks measure the same interval.)
 */
#include <math.h>
#include <time.h>

#include "harness.h"
#include "tap.h"

int main(void)
{
	struct kh_timer t;
	uint64_t n0, n1, c0, c1;
	double ns_by_counter, err;

	kh_timer_init(&t, 50);
	tap_diag("timer %s, %.6g MHz, invariant %d, calibration disagreement %.1f ppm%s%s",
		 t.source, t.hz / 1e6, t.invariant, t.calib_error_ppm,
		 t.why_fallback ? ", fallback because: " : "", t.why_fallback ? t.why_fallback : "");
	if (!t.cycle_counter)
		tap_skip_all("no usable cycle counter here: %s", t.why_fallback);
	tap_ok(t.hz > 1e6 && t.hz < 1e11, "plausible frequency %.6g Hz", t.hz);
	/* Three 100 ms intervals; each must agree within 1%. */
	for (int i = 0; i < 3; i++) {
		n0 = kh_clock_raw_ns();
		c0 = kh_timer_begin(&t);
		do
			n1 = kh_clock_raw_ns();
		while (n1 - n0 < 100000000u);
		c1 = kh_timer_end(&t);
		n1 = kh_clock_raw_ns();
		ns_by_counter = (double)(c1 - c0) * 1e9 / t.hz;
		err = fabs(ns_by_counter - (double)(n1 - n0)) / (double)(n1 - n0);
		tap_ok(err < 0.01, "interval %d: counter %.0f ns vs CLOCK_MONOTONIC_RAW %llu ns (%.3f%%)",
		       i, ns_by_counter, (unsigned long long)(n1 - n0), err * 100);
	}
	{
		uint64_t a = kh_timer_begin(&t), b = kh_timer_end(&t);

		tap_ok(b >= a, "two consecutive reads are ordered (%llu then %llu)",
		       (unsigned long long)a, (unsigned long long)b);
	}
	return tap_done();
}
