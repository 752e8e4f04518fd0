/* SPDX-License-Identifier: MIT */
/*
 * harness/stats.c, the harness's statistics rule (docs/result-format.md),
 * on vectors computed by hand and, where noted, once with numpy/scipy
 * (np.quantile "linear", scipy.special.bdtr): type-7
 * quantiles for n = 1..6 and with ties, the overhead decision's three
 * outcomes and its two boundaries, and the ranks and coverage of the CI of
 * the median.  Figures that numpy computes are compared bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "tap.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int same(double got, double want, const char *what)
{
	return tap_ok(got == want || (isnan(got) && isnan(want)),
		      "%s: got %.17g, want %.17g", what, got, want);
}

static int near(double got, double want, double tol, const char *what)
{
	return tap_ok(fabs(got - want) <= tol, "%s: got %.17g, want %.17g (+-%g)",
		      what, got, want, tol);
}

/* Quartiles and median of a small vector, by hand: h = (n-1)p. */
static void quartiles(void)
{
	static const struct {
		int n;
		double x[7];
		double q1, median, q3, min;
	} v[] = {
		{ 1, { 5 }, 5, 5, 5, 5 },
		{ 2, { 3, 1 }, 1.5, 2, 2.5, 1 },			/* h = .25, .5, .75 */
		{ 3, { 3, 1, 2 }, 1.5, 2, 2.5, 1 },			/* h = .5, 1, 1.5 */
		{ 4, { 4, 1, 3, 2 }, 1.75, 2.5, 3.25, 1 },		/* h = .75, 1.5, 2.25 */
		{ 5, { 10, 2, 2, 1, 2 }, 2, 2, 2, 1 },			/* ties: h = 1, 2, 3 */
		{ 6, { 6, 5, 4, 3, 2, 1 }, 2.25, 3.5, 4.75, 1 },	/* h = 1.25, 2.5, 3.75 */
		{ 6, { 1, 1, 1, 9, 9, 9 }, 1, 5, 9, 1 },		/* ties, even n */
		{ 7, { 7, 1, 6, 2, 5, 3, 4 }, 2.5, 4, 5.5, 1 },	/* h = 1.5, 3, 4.5 */
	};
	char what[80];

	for (int i = 0; i < N(v); i++) {
		struct kh_summary s;

		tap_eq_long(kh_summarize(v[i].x, v[i].n, NULL, 0, &s), 0, "kh_summarize");
		snprintf(what, sizeof(what), "n=%d vector %d: q1", v[i].n, i);
		same(s.q1, v[i].q1, what);
		snprintf(what, sizeof(what), "n=%d vector %d: median", v[i].n, i);
		same(s.median, v[i].median, what);
		same(kh_median(v[i].x, v[i].n), v[i].median, "kh_median, the same");
		snprintf(what, sizeof(what), "n=%d vector %d: q3", v[i].n, i);
		same(s.q3, v[i].q3, what);
		snprintf(what, sizeof(what), "n=%d vector %d: min", v[i].n, i);
		same(s.min, v[i].min, what);
		snprintf(what, sizeof(what), "n=%d vector %d: spread = IQR/median", v[i].n, i);
		same(s.spread, (v[i].q3 - v[i].q1) / v[i].median, what);
		tap_ok(s.overhead == KH_OVERHEAD_NONE && isnan(s.overhead_median) &&
		       !kh_overhead_reason(s.overhead), "no overhead given: no decision");
	}
	{
		double zero[] = { 0, 0, 0, 1 };
		struct kh_summary s;

		kh_summarize(zero, N(zero), NULL, 0, &s);
		tap_ok(isnan(s.spread), "median 0: spread undefined (NaN, null in JSON)");
	}
	tap_ok(kh_summarize(NULL, 0, NULL, 0, &(struct kh_summary){ 0 }) == -1,
	       "no samples: error");
	tap_ok(isnan(kh_median(NULL, 0)), "kh_median of nothing is NaN");
	same(kh_quantile_sorted((double[]){ 1, 2, 3, 4, 5 }, 5, 0.1), 1.4, "q(0.1) of 1..5");
	same(kh_quantile_sorted((double[]){ 1, 2, 3, 4, 5 }, 5, 1.0), 5, "q(1) of 1..5");
	same(kh_quantile_sorted((double[]){ 1, 2, 3, 4, 5 }, 5, 0.0), 1, "q(0) of 1..5");
}

/* The overhead decision: samples 10..16 (median 13, q1 11.5, q3 14.5, noise 1.5). */
static void overhead(void)
{
	static const double x[] = { 16, 10, 15, 11, 14, 12, 13 };
	struct kh_summary s;

	kh_summarize(x, N(x), (double[]){ 2, 1.9, 2.1 }, 3, &s);
	tap_ok(s.overhead == KH_OVERHEAD_SUBTRACTED, "o=2 > noise 1.5 and 2o < 13: subtracted (%s)",
	       kh_overhead_reason(s.overhead));
	same(s.overhead_median, 2, "overhead median");
	same(s.noise, 1.5, "noise = IQR/2 of the raw samples");
	same(s.median, 11, "corrected median");
	same(s.q1, 9.5, "corrected q1");
	same(s.q3, 12.5, "corrected q3");
	same(s.min, 8, "corrected min");
	same(s.spread, 3.0 / 11, "corrected spread");
	same(s.ci_low, 8, "corrected CI low (rank 1)");
	same(s.ci_high, 14, "corrected CI high (rank 7)");

	kh_summarize(x, N(x), (double[]){ 1.5 }, 1, &s);
	tap_ok(s.overhead == KH_OVERHEAD_NOISE && s.median == 13 && s.min == 10,
	       "o = noise exactly: not subtracted, within the noise (%s)",
	       kh_overhead_reason(s.overhead));
	kh_summarize(x, N(x), (double[]){ 0.2, 1, 0.1 }, 3, &s);
	tap_ok(s.overhead == KH_OVERHEAD_NOISE, "o=0.2 < noise: within the noise");
	tap_ok(!strcmp(kh_overhead_reason(s.overhead), "within the noise"), "reason text");
	kh_summarize(x, N(x), (double[]){ 6.5, 6.5 }, 2, &s);
	tap_ok(s.overhead == KH_OVERHEAD_HALF && s.median == 13,
	       "2o = median exactly: not subtracted, half the median or more (%s)",
	       kh_overhead_reason(s.overhead));
	tap_ok(!strcmp(kh_overhead_reason(s.overhead), "half the median or more"), "reason text");
	kh_summarize(x, N(x), (double[]){ 6.4999 }, 1, &s);
	tap_ok(s.overhead == KH_OVERHEAD_SUBTRACTED, "2o just under the median: subtracted");
	kh_summarize(x, N(x), (double[]){ 20, 30, 40 }, 3, &s);
	tap_ok(s.overhead == KH_OVERHEAD_HALF, "o above the median: half the median or more");
	tap_ok(!strcmp(kh_overhead_reason(KH_OVERHEAD_SUBTRACTED), "subtracted"), "reason text");
}

/* Non-round figures; expected values from numpy 2.4 (np.quantile, method "linear"). */
static void like_numpy(void)
{
	static const double x11[] = { 150.0513, 152.0536, 151.8484, 149.2365, 149.5537, 149.211,
				      150.857, 149.9159, 151.1245, 147.2545, 152.3683 };
	static const double o11[] = { 3.2807, 3.4361, 3.2727, 3.2242, 3.3926, 3.4649, 3.2595,
				      3.2694, 3.4371, 3.1259, 2.9971 };
	static const double x12[] = { 150.5936, 148.9975, 147.147, 148.7839, 149.3002, 148.2208,
				      147.7779, 150.055, 151.3519, 149.6507, 148.8887, 150.5786 };
	static const double o12[] = { 3.4434, 3.24, 3.4089, 3.5086, 3.2586, 3.1373, 3.3695,
				      3.3495, 3.5198, 3.0431, 3.1677, 3.1324 };
	static const double y[] = { 150.0185, 154.5488, 145.9438, 137.2187, 143.3327, 135.839,
				    150.9049, 171.5126, 142.7957, 140.9757, 157.5306 };
	static const double oy[] = { 3.3714, 3.3211, 3.1139, 3.2941, 3.4391, 3.0312, 3.2085,
				     2.9198, 3.0421, 2.9317, 3.253 };
	/* q3 at h = 3.75: numpy's lerp rounds as x[4] - 0.25 (x[4] - x[3]), not
	 * x[3] + 0.75 (x[4] - x[3]) (579.5624227397473 here) */
	static const double u[] = { 16.676838270570983, 246.74784115974802, 861.2625322502753,
				    163.69416060025233, 689.6226001890659, 249.38189039179105 };
	struct kh_summary s;

	kh_summarize(u, 6, NULL, 0, &s);
	same(s.q3, 579.5624227397471, "n=6 q3 rounded as numpy's lerp");
	same(s.q1, 184.45758074012625, "n=6 q1");
	same(s.median, 248.06486577576953, "n=6 median");

	kh_summarize(x11, 11, o11, 11, &s);
	tap_ok(s.overhead == KH_OVERHEAD_SUBTRACTED, "n=11: subtracted");
	same(s.noise, 1.0456749999999886, "n=11 noise");
	same(s.overhead_median, 3.2727, "n=11 overhead median");
	same(s.median, 146.7786, "n=11 median");
	same(s.q1, 146.12240000000003, "n=11 q1");
	same(s.q3, 148.21375, "n=11 q3");
	same(s.min, 143.98180000000002, "n=11 min");
	same(s.spread, 0.014248330478693604, "n=11 spread");

	kh_summarize(x12, 12, o12, 12, &s);
	tap_ok(s.overhead == KH_OVERHEAD_SUBTRACTED, "n=12: subtracted");
	same(s.noise, 0.771387500000003, "n=12 noise");
	same(s.overhead_median, 3.30405, "n=12 overhead median");
	same(s.median, 145.84480000000002, "n=12 median");
	same(s.q1, 145.339075, "n=12 q1");
	same(s.q3, 146.88185000000001, "n=12 q3");
	same(s.min, 143.84295, "n=12 min");
	same(s.spread, 0.010578196822924135, "n=12 spread");

	kh_summarize(y, 11, oy, 11, &s);
	tap_ok(s.overhead == KH_OVERHEAD_NOISE, "wide samples: within the noise");
	same(s.noise, 5.420575000000014, "noise");
	same(s.median, 145.9438, "median (raw)");
	same(s.q1, 141.88569999999999, "q1 (raw)");
	same(s.q3, 152.72685, "q3 (raw)");
	same(s.spread, 0.0742830459396016, "spread (raw)");
}

/* CI ranks and coverage; reference: l = max{l : 1 - 2 bdtr(l-1, n, .5) >= .95}, scipy 1.17. */
static void ci(void)
{
	static const struct {
		int n, low, high;
		double coverage;
	} v[] = {
		{ 6, 1, 6, 0.96875 },
		{ 7, 1, 7, 0.984375 },
		{ 10, 2, 9, 0.978515625 },
		{ 201, 87, 115, 0.9519985339461617 },
		{ 1000, 469, 532, 0.9537088026394714 },
		{ 100000, 49690, 50311, 0.9504442853336214 },
	};
	char what[80];
	double cov;

	for (int n = 1; n <= 5; n++) {
		snprintf(what, sizeof(what), "n=%d: too few for a 95%% CI", n);
		tap_ok(kh_ci_rank(n, 0.95, &cov) == 0 && isnan(cov), "%s", what);
	}
	tap_eq_long(kh_ci_min_samples(0.95), 6, "fewest samples for a 95% CI");
	for (int i = 0; i < N(v); i++) {
		int l = kh_ci_rank(v[i].n, 0.95, &cov);

		snprintf(what, sizeof(what), "n=%d: lower rank", v[i].n);
		tap_eq_long(l, v[i].low, what);
		snprintf(what, sizeof(what), "n=%d: upper rank", v[i].n);
		tap_eq_long(v[i].n + 1 - l, v[i].high, what);
		snprintf(what, sizeof(what), "n=%d: coverage", v[i].n);
		near(cov, v[i].coverage, 1e-9, what);
	}
	{
		/* n = 10: the CI is [x(2), x(9)] of the sorted samples */
		double x[] = { 10, 1, 9, 2, 8, 3, 7, 4, 6, 5 };
		struct kh_summary s;

		kh_summarize(x, 10, NULL, 0, &s);
		tap_ok(s.ci_low == 2 && s.ci_high == 9 && s.ci_low_rank == 2 && s.ci_high_rank == 9,
		       "n=10: CI [x(2), x(9)] = [2, 9], got [%g, %g]", s.ci_low, s.ci_high);
		kh_summarize(x, 5, NULL, 0, &s);
		tap_ok(s.ci_low_rank == 0 && isnan(s.ci_low) && isnan(s.ci_high),
		       "n=5: no CI in the summary");
	}
}

int main(void)
{
	quartiles();
	overhead();
	like_numpy();
	ci();
	return tap_done();
}
