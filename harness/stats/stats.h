/* Statistics for kab reports (../shared/STATS.md is the specification):
 * descriptive statistics, Hodges-Lehmann estimates with confidence
 * intervals, Wilcoxon signed-rank, Mann-Whitney U, Welch t on logs,
 * Benjamini-Hochberg, the practical threshold and the verdict. Rank tests
 * are written here; GSL gives distributions and quantiles. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum stats_direction { STATS_DIR_NEUTRAL, STATS_DIR_HIGHER, STATS_DIR_LOWER };

enum stats_verdict {
	STATS_VERDICT_NONE,      /* nothing to compare (no data on a side) */
	STATS_VERDICT_BETTER,
	STATS_VERDICT_WORSE,
	STATS_VERDICT_CHANGED,   /* significant, outside epsilon, neutral direction */
	STATS_VERDICT_SAME,      /* CI inside +-epsilon */
	STATS_VERDICT_UNDECIDED,
};

enum stats_test {
	STATS_TEST_NONE,
	STATS_TEST_WILCOXON_EXACT,
	STATS_TEST_WILCOXON_NORMAL,
	STATS_TEST_MANN_WHITNEY_EXACT,
	STATS_TEST_MANN_WHITNEY_NORMAL,
};

struct stats_desc {
	size_t n;
	double mean, median, stddev, cov_pct, min, max; /* NAN when n == 0 (stddev/cov: n < 2) */
};

/* x may hold NAN for missing values; they are skipped. */
int stats_describe(const double *x, size_t n, struct stats_desc *ret);

struct stats_input {
	const double *a, *b;   /* per pair index, execution order; NAN = missing run */
	size_t n;              /* number of pair slots */
	enum stats_direction dir;
	double epsilon_pct;    /* < 0: default max(1%, 2 x baseline CoV) */
	double alpha;          /* 0: 0.05 */
};

struct stats_result {
	struct stats_desc a, b;
	size_t pairs;            /* complete pairs used by the paired test */
	double delta_abs;        /* mean B - mean A */
	double delta_pct;        /* 100 * delta_abs / |mean A|; NAN if mean A == 0 */
	bool log_scale;          /* true: ratios ln(B/A); false: differences (zeros or negatives present) */
	double hl;               /* HL estimate on the scale used (log or absolute) */
	double hl_pct, ci_low_pct, ci_high_pct;  /* %Delta and its CI; NAN if undefined */
	double ci_level;         /* achieved coverage of the CI, e.g. 0.953 for exact tests */
	enum stats_test test;
	double p_value;          /* NAN if no test could run */
	double z;                /* for adaptive looks: the paired t on the differences as a normal score (signed, B vs A); the rank test's z when unpaired or all differences equal */
	double welch_p;          /* Welch t on logs (or raw values when not log_scale); NAN if undefined */
	double q_value;          /* filled by stats_bh_fill; NAN until then */
	double epsilon_pct;
	enum stats_verdict verdict;
};

/* Paired comparison when both sides have >= 1 complete pair and most runs
 * are paired; Mann-Whitney with the HL shift CI when pairs are broken.
 * Never NaN-crashes: zeros, identical samples, n = 1 give NAN fields and a
 * NONE or UNDECIDED verdict. */
int stats_compare(const struct stats_input *in, struct stats_result *ret);

/* Benjamini-Hochberg q-values for n p-values (NAN p-values stay NAN). */
int stats_bh(const double *p, size_t n, double *q_out);
/* Sets q_value from p_value across n results (one workload's non-primary
 * metrics; primary metrics are left out of the correction, STATS.md rule 6). */
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
const char *stats_direction_name(enum stats_direction d);  /* "higher" "lower" "neutral" */
