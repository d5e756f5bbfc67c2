/* Statistics for kab reports (doc/statistics.md states the rules, why,
 * and what they were measured to do): descriptive statistics,
 * Hodges-Lehmann estimates with confidence intervals, exact Wilcoxon
 * signed-rank and Mann-Whitney U with ties, Welch t on logs,
 * Benjamini-Hochberg and Holm, the two fixed thresholds (min_change and
 * the equivalence margin) and the verdict. Rank tests are written here;
 * GSL gives distributions and quantiles. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "harness/base/direction.h"

enum stats_verdict {
	STATS_VERDICT_NONE, /* nothing to compare (no data on a side) */
	STATS_VERDICT_BETTER,
	STATS_VERDICT_WORSE,
	STATS_VERDICT_CHANGED, /* significant, at least min_change, neutral direction */
	STATS_VERDICT_SAME,    /* 90% CI inside +-equivalence (TOST) */
	STATS_VERDICT_UNDECIDED,
};

enum stats_test {
	STATS_TEST_NONE,
	STATS_TEST_WILCOXON_EXACT,
	STATS_TEST_WILCOXON_NORMAL,
	STATS_TEST_MANN_WHITNEY_EXACT,
	STATS_TEST_MANN_WHITNEY_NORMAL,
	/* a counter with a zero in some run: every run against every run,
	 * Mann-Whitney's exact permutation distribution (rule 5) */
	STATS_TEST_PERMUTATION_EXACT,
	STATS_TEST_PERMUTATION_NORMAL,
};

/* Rule 7's defaults: a change smaller than MIN_CHANGE is not worth a
 * verdict; inside +-EQUIVALENCE two kernels count as the same. */
#define STATS_MIN_CHANGE_PCT 1.0
#define STATS_EQUIVALENCE_PCT 2.0
/* Below this many pairs no verdict says better, worse or changed. */
#define STATS_MIN_PAIRS 6

struct stats_desc {
	size_t n;
	double mean, median, stddev, cov_pct, min, max; /* NAN when n == 0 (stddev/cov: n < 2) */
};

/* x may hold NAN for missing values; they are skipped. */
int stats_describe(const double *x, size_t n, struct stats_desc *ret);

struct stats_input {
	const double *a, *b;   /* per pair index, execution order; NAN = missing run */
	size_t n;              /* number of pair slots */
	enum direction dir;
	double min_change_pct;  /* < 0: STATS_MIN_CHANGE_PCT */
	double equivalence_pct; /* < 0: STATS_EQUIVALENCE_PCT */
	double alpha;           /* 0: 0.05 */
};

struct stats_result {
	struct stats_desc a, b;
	size_t pairs;            /* complete pairs used by the paired test */
	size_t replicates;       /* pairs, or the smaller side's runs when unpaired (rule 8's "6") */
	double delta_abs;        /* mean B - mean A */
	double delta_pct;        /* 100 * delta_abs / |mean A|; NAN if mean A == 0 */
	bool log_scale;          /* true: ratios ln(B/A); false: differences (zeros or negatives present) */
	double hl;               /* HL estimate on the scale used (log or absolute) */
	double hl_pct, ci_low_pct, ci_high_pct; /* %Delta and its 95% CI; NAN if undefined */
	double ci_level;         /* achieved coverage of the CI, e.g. 0.953 for exact tests */
	double ci90_low_pct, ci90_high_pct; /* the 90% CI the equivalence test reads */
	double ci90_level;
	/* the intervals and the baseline on the scale used, for the verdict */
	double ci_lo, ci_hi, ci90_lo, ci90_hi, scale;
	enum stats_test test;
	double p_value;          /* NAN if no test could run */
	/* the smallest p the test could give on these values whatever their
	 * labels (rule 6: a metric with min_p >= alpha is left out of the BH
	 * family; the choice looks only at the pooled values) */
	double min_p;
	double z;                /* for adaptive looks: the paired t on the differences as a normal score (signed, B vs A); the rank test's z when unpaired or all differences equal */
	double welch_p;          /* Welch t on logs (or raw values when not log_scale); NAN if undefined */
	double q_value;          /* BH q (Holm's p among several primaries); NAN outside the family */
	double min_change_pct, equivalence_pct;
	enum stats_verdict verdict;
};

/* Paired comparison when both sides have >= 1 complete pair and most runs
 * are paired; Mann-Whitney with the HL shift CI when pairs are broken.
 * Never NaN-crashes: zeros, identical samples, n = 1 give NAN fields and a
 * NONE or UNDECIDED verdict. */
int stats_compare(const struct stats_input *in, struct stats_result *ret);

/* Rule 8 on a result, with p_used in place of its p (a q-value, or a
 * Holm-adjusted p): better/worse/changed, same, or undecided. */
enum stats_verdict stats_decide(const struct stats_result *r, double p_used, double alpha, enum direction dir);
/* true when the result's test could reach p < alpha on its values. */
bool stats_testable(const struct stats_result *r, double alpha);

/* Benjamini-Hochberg q-values for n p-values (NAN p-values stay NAN). */
int stats_bh(const double *p, size_t n, double *q_out);
/* Holm's step-down adjusted p-values (NAN p-values stay NAN). */
int stats_holm(const double *p, size_t n, double *adj_out);
/* Sets q_value from p_value across n results (one workload's non-primary
 * metrics; primary metrics are left out of the correction, doc/statistics.md rule 6). */
int stats_bh_fill(struct stats_result *res, size_t n);

/* ---- building blocks, exposed for tests ---- */

/* Exact null distribution of the signed-rank statistic W+ for n untied
 * ranks: P(W+ <= w). */
double stats_signrank_cdf(unsigned n, unsigned w);
/* Exact null distribution of Mann-Whitney U for sizes m and n without
 * ties: P(U <= u). */
double stats_mann_whitney_cdf(unsigned m, unsigned n, unsigned u);
/* Wilcoxon signed-rank on d (zeros dropped, as scipy zero_method="wilcox";
 * ties by midranks). Two-sided p; below 50 non-zero d always exact: the
 * permutation distribution over the sign flips of the midranks observed
 * (conditional on the ties); from 50 on normal with tie correction
 * (continuity correction as scipy). */
int stats_wilcoxon(const double *d, size_t n, double *ret_w_plus, double *ret_p, bool *ret_exact, double *ret_z);
/* Smallest two-sided p stats_wilcoxon could give on d whatever its signs; NAN if no d is non-zero. */
double stats_wilcoxon_min_p(const double *d, size_t n);
/* Mann-Whitney U of x against y, two-sided; exact with midranks (over every
 * split of the pooled values) when both < 50, else normal with tie correction. */
int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u, double *ret_p, bool *ret_exact, double *ret_z);
/* Smallest two-sided p stats_mann_whitney could give over every relabeling of the pooled values. */
double stats_mann_whitney_min_p(const double *x, size_t nx, const double *y, size_t ny);
/* Welch's t test, two-sided p. */
int stats_welch(const double *x, size_t nx, const double *y, size_t ny, double *ret_t, double *ret_df, double *ret_p);
/* One-sample HL (median of Walsh averages) with a CI at level conf. */
int stats_hl_paired(const double *d, size_t n, double conf, double *ret_est, double *ret_lo, double *ret_hi, double *ret_level);
/* Two-sample HL shift (median of y_j - x_i) with a CI at level conf. */
int stats_hl_shift(const double *x, size_t nx, const double *y, size_t ny, double conf, double *ret_est, double *ret_lo, double *ret_hi, double *ret_level);

/* ---- adaptive budget ---- */
/* O'Brien-Fleming bound for look k of 4 at alpha 0.05: 4.048, 2.862, 2.337, 2.024. */
double stats_obf_bound(unsigned look, unsigned n_looks);
enum stats_stop { STATS_CONTINUE, STATS_STOP_DECIDED, STATS_STOP_SAME };
/* Decides at look k (1-based) from the primary metrics' results. */
enum stats_stop stats_adaptive_look(const struct stats_result *primary, size_t n, unsigned look, unsigned n_looks);

const char *stats_verdict_name(enum stats_verdict v);   /* "better", ... "undecided", "none" */
const char *stats_verdict_marker(enum stats_verdict v, bool utf8);  /* ▲ ▼ ≠ ~ ? ; ASCII: + - * ~ ?; none: "-" / "" */
const char *stats_test_name(enum stats_test t);         /* "wilcoxon-signed-rank-exact", ... */
const char *stats_test_label(enum stats_test t);        /* for footnotes: "exact Wilcoxon signed-rank", ... */
