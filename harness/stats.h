/* SPDX-License-Identifier: MIT */
/*
 * The statistics rule of docs/result-format.md ("Statistics"), the harness's
 * one implementation of it (harness/stats.c).  kcross's Python side follows
 * the same rule in python/kcross/stats.py; `kcross-harness summarize --json`
 * lets a test compare the two on the same samples.
 */
#ifndef KCROSS_HARNESS_STATS_H
#define KCROSS_HARNESS_STATS_H

#include <stdbool.h>

/* The confidence level of the CI of the median in tables and `summarize`. */
#define KH_CI_CONFIDENCE 0.95

/* Quantile p (0..1) of sorted[0..n-1], n >= 1: Hyndman-Fan type 7. */
double kh_quantile_sorted(const double *sorted, int n, double p);
/* The median of sorted[0..n-1], n >= 1. */
double kh_median_sorted(const double *sorted, int n);
/* The median of v[0..n-1] in any order; NAN when n < 1 or out of memory. */
double kh_median(const double *v, int n);

/*
 * The lower rank l (1-based) of the distribution-free CI of the median,
 * [x(l), x(n+1-l)]: the largest l with 1 - 2 * BinomCDF(l-1; n, 1/2) >=
 * confidence.  *coverage (may be NULL) gets that probability.  Returns 0
 * (and NAN coverage) when n is too small for any interval at that level.
 */
int kh_ci_rank(int n, double confidence, double *coverage);
/* The fewest samples that give a CI at this confidence (6 for 0.95). */
int kh_ci_min_samples(double confidence);

enum kh_overhead_decision {
	KH_OVERHEAD_NONE,		/* no empty-loop figures given */
	KH_OVERHEAD_SUBTRACTED,		/* o > IQR/2 and 2o < median */
	KH_OVERHEAD_NOISE,		/* o <= IQR/2: "within the noise" */
	KH_OVERHEAD_HALF,		/* 2o >= median: "half the median or more" */
};
/* "subtracted", "within the noise", "half the median or more"; NULL for NONE. */
const char *kh_overhead_reason(enum kh_overhead_decision d);

struct kh_summary {
	int n;
	/* Of the corrected samples (each minus overhead_median) when the
	 * overhead was subtracted, else of the samples as given. */
	double median, q1, q3, min;
	double spread;			/* (q3 - q1) / median; NAN when median is 0 */
	int ci_low_rank, ci_high_rank;	/* 1-based; 0 when n is too small */
	double ci_low, ci_high;		/* NAN when n is too small */
	double ci_confidence;		/* coverage of [ci_low, ci_high], or NAN */
	double overhead_median;		/* NAN without overhead figures */
	double noise;			/* (q3 - q1) / 2 of the samples as given */
	enum kh_overhead_decision overhead;
};

/*
 * Summarise samples[0..n-1] (n >= 1) by the rule; overhead[0..n_overhead-1]
 * are the empty loop's figures (NULL / 0: none).  Returns 0, or -1 when
 * n < 1 or memory ran out.  The CI needs kh_ci_min_samples() samples; with
 * fewer, the ci_* fields say "none" (rank 0, NAN).
 */
int kh_summarize(const double *samples, int n, const double *overhead, int n_overhead,
		 struct kh_summary *s);

/* `kcross-harness summarize [--json] SAMPLES_FILE [OVERHEAD_FILE]` (summarize.c);
 * argv[0] is "summarize".  Returns the exit code. */
int kh_summarize_main(int argc, char **argv);

#endif
