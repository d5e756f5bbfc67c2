/* kab plan: how many pairs a question needs. From the noise an A/A
 * calibration measured, the power of kab's own paired test and
 * verdict, found by simulation: many draws of N pairs, each judged by
 * stats_compare (the function behind every report row), counting the
 * verdicts that find the injected effect. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/stats/stats.h"

/* The signed-rank test cannot reach p < 0.05 below this many pairs
 * (exact: the smallest two-sided p at 5 pairs is 2/32 = 0.0625). */
#define PLAN_MIN_DECIDING_PAIRS 6u
#define PLAN_TARGET_POWER 0.80
#define PLAN_DEFAULT_SIMS 2000u
#define PLAN_DEFAULT_SEED 20261201u
/* The most pairs kab plan looks for a target effect. */
#define PLAN_PAIRS_MAX 200u

/* The noise one metric showed in a calibration, and how kab judges it.
 * The simulation resamples calibration pairs, the unit kab replicates: a
 * disturbed run moves both its pair's log-ratio and its baseline, so the
 * two are drawn together. An A/A pair is
 * exchangeable, so each is used either way round (A, B or B, A, at
 * random): the log-ratios are symmetric about 0 by construction. Each
 * pick gets a Gaussian kernel (Silverman's bandwidth), rescaled so the
 * draws keep the calibration's variance: resampling keeps the
 * calibration's shape (a skew, an outlier) that a normal model would smooth
 * away, the kernel keeps the draws apart (plain resampling of a few pairs
 * gives tied log-ratios, which push the signed-rank test onto its normal
 * approximation where real runs would use the exact one). */
struct plan_noise {
	const double *a, *b;   /* the calibration's pairs: A_i and its A/A partner B_i, > 0 */
	size_t n;
	enum direction dir;
	double min_change_pct;  /* the job's [metric] min_change; < 0: STATS_MIN_CHANGE_PCT */
	double equivalence_pct; /* the job's [metric] equivalence; < 0: STATS_EQUIVALENCE_PCT */
	/* Spread of the draws against the calibration's: 1 (or 0) draws with
	 * its SD; plan_upper_factor() gives the factor for an upper bound. */
	double d_inflate, base_inflate;
	unsigned sims;         /* 0: PLAN_DEFAULT_SIMS */
	uint64_t seed;         /* 0: PLAN_DEFAULT_SEED */
};

/* What the calibration says about one metric's noise. */
struct plan_summary {
	size_t pairs;          /* complete pairs */
	double d_sd;           /* SD of the paired log-ratios */
	double noise_pct;      /* their CoV in percent: 100 (e^sd - 1) */
	double base_cov_pct;   /* CoV of the baseline runs (both sides) */
	double min_change_pct; /* the thresholds kab would use: the job's or the defaults */
	double equivalence_pct;
};

/* An SD estimated from n values is below the true one often: the factor
 * that takes it to its upper confidence bound at level conf (chi-square
 * with n - 1 degrees of freedom; 1.46 for 6 values at 80%). */
double plan_upper_factor(size_t n, double conf);

/* Checks the noise (>= 2 pairs, every value positive and finite) and
 * summarizes it. */
int plan_summarize(const struct plan_noise *nz, struct plan_summary *ret);

/* The fraction of sims draws of pairs pairs, B shifted by effect (0.05:
 * +5%), that kab's verdict calls a change in the effect's direction
 * (better for a higher-is-better metric, worse for a lower-is-better one,
 * changed with a positive estimate for a neutral one). The same seed gives
 * the same draws for every effect, so power grows with the effect. */
int plan_power(const struct plan_noise *nz, unsigned pairs, double effect, double *ret_power);

/* The smallest effect (a fraction, found to 0.0005) that pairs pairs
 * decide with at least target power; NAN when even +100% does not. */
int plan_min_effect(const struct plan_noise *nz, unsigned pairs, double target, double *ret_effect);

/* The fewest pairs (from PLAN_MIN_DECIDING_PAIRS up to max_pairs) that
 * decide effect with at least target power, and that power; 0 pairs when
 * none up to max_pairs does. */
int plan_pairs_for(const struct plan_noise *nz, double effect, double target, unsigned max_pairs,
		   unsigned *ret_pairs, double *ret_power);

struct job;
/* The A/A calibration of a job as job text: named NAME.calibration, its
 * first variant twice ([variant A] and [variant B], named V and V.again,
 * the same kernel and knobs), pairs fixed pairs (an adaptive budget off),
 * everything else the job's. j is borrowed and left as it was; *ret is
 * the caller's to free. */
int plan_calibration_text(struct job *j, unsigned pairs, char **ret);
