/* SPDX-License-Identifier: MIT */
/*
 * The statistics rule (docs/result-format.md, "Statistics"): the harness's
 * only quantile, median, overhead and confidence-interval code.  Python's
 * kcross.stats follows the same rule; where floating point lets two
 * formulas differ in the last bit, this file computes as numpy does
 * (np.percentile's "linear" method, np.median) so that both agree exactly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Type 7: h = (n-1)p, q = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
 * With a weight t >= 1/2 the same point is reached from the upper
 * neighbour, x[floor h + 1] - (1 - t)(x[floor h + 1] - x[floor h]), which
 * is numpy's lerp: same value, same rounding.
 */
double kh_quantile_sorted(const double *v, int n, double p)
{
	double h = (double)(n - 1) * p, lo = floor(h), t = h - lo, d;
	int i = (int)lo;

	if (i < 0)
		return v[0];
	if (i >= n - 1)
		return v[n - 1];
	d = v[i + 1] - v[i];
	return t >= 0.5 ? v[i + 1] - d * (1.0 - t) : v[i] + d * t;
}

/* q(0.5): the middle value, or the point halfway between the two middle
 * values (computed as type 7 does, not as (a + b) / 2). */
double kh_median_sorted(const double *v, int n)
{
	return kh_quantile_sorted(v, n, 0.5);
}

static double *sorted_copy(const double *v, int n)
{
	double *s = malloc(sizeof(*s) * (size_t)n);

	if (!s)
		return NULL;
	memcpy(s, v, sizeof(*s) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return s;
}

double kh_median(const double *v, int n)
{
	double *s, m;

	if (n < 1 || !(s = sorted_copy(v, n)))
		return NAN;
	m = kh_median_sorted(s, n);
	free(s);
	return m;
}

/*
 * The number of samples below the true median is Binomial(n, 1/2), so
 * [x(l), x(n+1-l)] covers it with probability 1 - 2 P(B <= l-1).  The CDF
 * is summed term by term from the smallest; each term C(n, k) / 2^n is
 * computed in log space (lgamma), so nothing underflows or overflows for
 * any n an int holds.
 */
int kh_ci_rank(int n, double confidence, double *coverage)
{
	double base, cdf = 0, cov = NAN;
	int l = 0;

	if (n >= 1) {
		base = lgamma(n + 1.0) - n * M_LN2;
		for (int k = 1; k <= n / 2; k++) {
			double c;

			/* add P(B = k-1) = C(n, k-1) / 2^n */
			cdf += exp(base - lgamma((double)k) - lgamma((double)(n - k + 2)));
			c = 1.0 - 2.0 * cdf;
			if (c < confidence)
				break;
			l = k;
			cov = c;
		}
	}
	if (coverage)
		*coverage = cov;
	return l;
}

int kh_ci_min_samples(double confidence)
{
	int n = 1;

	/* the widest interval, [min, max], covers with 1 - 2 / 2^n */
	while (n < 1100 && 1.0 - 2.0 * pow(0.5, n) < confidence)
		n++;
	return n;
}

const char *kh_overhead_reason(enum kh_overhead_decision d)
{
	switch (d) {
	case KH_OVERHEAD_SUBTRACTED: return "subtracted";
	case KH_OVERHEAD_NOISE: return "within the noise";
	case KH_OVERHEAD_HALF: return "half the median or more";
	case KH_OVERHEAD_NONE: break;
	}
	return NULL;
}

int kh_summarize(const double *samples, int n, const double *overhead, int n_overhead,
		 struct kh_summary *s)
{
	double *x;

	memset(s, 0, sizeof(*s));
	s->overhead_median = s->ci_low = s->ci_high = s->ci_confidence = NAN;
	if (n < 1 || !(x = sorted_copy(samples, n)))
		return -1;
	s->n = n;
	s->median = kh_median_sorted(x, n);
	s->q1 = kh_quantile_sorted(x, n, 0.25);
	s->q3 = kh_quantile_sorted(x, n, 0.75);
	s->noise = (s->q3 - s->q1) / 2;
	if (overhead && n_overhead >= 1) {
		double o = kh_median(overhead, n_overhead);

		if (isnan(o)) {
			free(x);
			return -1;
		}
		s->overhead_median = o;
		if (!(o > s->noise)) {
			s->overhead = KH_OVERHEAD_NOISE;
		} else if (!(2 * o < s->median)) {
			s->overhead = KH_OVERHEAD_HALF;
		} else {
			/* Subtract from every sample, then take every figure of
			 * the corrected samples (x stays sorted). */
			s->overhead = KH_OVERHEAD_SUBTRACTED;
			for (int i = 0; i < n; i++)
				x[i] -= o;
			s->median = kh_median_sorted(x, n);
			s->q1 = kh_quantile_sorted(x, n, 0.25);
			s->q3 = kh_quantile_sorted(x, n, 0.75);
		}
	}
	s->min = x[0];
	s->spread = s->median != 0 ? (s->q3 - s->q1) / s->median : NAN;
	s->ci_low_rank = kh_ci_rank(n, KH_CI_CONFIDENCE, &s->ci_confidence);
	if (s->ci_low_rank) {
		s->ci_high_rank = n + 1 - s->ci_low_rank;
		s->ci_low = x[s->ci_low_rank - 1];
		s->ci_high = x[s->ci_high_rank - 1];
	}
	free(x);
	return 0;
}
