/* Statistics core: descriptive statistics, published signed-rank tables,
 * small-sample facts of doc/statistics.md, the degenerate rows a kernel counter
 * produces, Benjamini-Hochberg, O'Brien-Fleming bounds, and seeded
 * simulations of the adaptive rule and of A/A runs. Expected values are
 * hand-computed or from scipy 1.10 (noted where so). */
#include "t.h"
#include "harness/stats/stats.h"

#include <errno.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* Contract: every double of a result is finite or NAN. */
static bool no_inf(const struct stats_result *r)
{
	const double v[] = {
		r->a.mean,          r->a.median,     r->a.stddev,
		r->a.cov_pct,       r->a.min,        r->a.max,
		r->b.mean,          r->b.median,     r->b.stddev,
		r->b.cov_pct,       r->b.min,        r->b.max,
		r->delta_abs,       r->delta_pct,    r->hl,
		r->hl_pct,          r->ci_low_pct,   r->ci_high_pct,
		r->ci_level,        r->p_value,      r->z,
		r->welch_p,         r->q_value,      r->min_change_pct,
		r->equivalence_pct, r->ci90_low_pct, r->ci90_high_pct,
		r->ci90_level,      r->min_p,
	};
	for (size_t i = 0; i < N_ELEMS(v); i++)
		if (isinf(v[i]))
			return false;
	return true;
}

static struct stats_result compare(const double *a, const double *b, size_t n, enum direction dir)
{
	struct stats_input in = { .a = a, .b = b, .n = n, .dir = dir, .min_change_pct = -1, .equivalence_pct = -1 };
	struct stats_result r;
	memset(&r, 0xff, sizeof(r));
	T_EQ_INT(stats_compare(&in, &r), 0);
	T_CHECK(no_inf(&r));
	return r;
}

static void test_describe(void)
{
	const double x[] = { 4, NAN, 1, 3, 2 };
	struct stats_desc d;
	T_EQ_INT(stats_describe(x, N_ELEMS(x), &d), 0);
	T_EQ_INT(d.n, 4);
	T_NEAR(d.mean, 2.5, 1e-15);
	T_NEAR(d.median, 2.5, 1e-15);
	T_NEAR(d.stddev, sqrt(5.0 / 3), 1e-15);
	T_NEAR(d.cov_pct, 100 * sqrt(5.0 / 3) / 2.5, 1e-12);
	T_NEAR(d.min, 1, 0);
	T_NEAR(d.max, 4, 0);

	const double one[] = { NAN, 7, INFINITY };
	T_EQ_INT(stats_describe(one, N_ELEMS(one), &d), 0);
	T_EQ_INT(d.n, 1);
	T_NEAR(d.median, 7, 0);
	T_CHECK(isnan(d.stddev) && isnan(d.cov_pct));

	T_EQ_INT(stats_describe(NULL, 0, &d), 0);
	T_EQ_INT(d.n, 0);
	T_CHECK(isnan(d.mean) && isnan(d.median) && isnan(d.min));

	const double zeros[] = { 0, 0, 0 };
	T_EQ_INT(stats_describe(zeros, 3, &d), 0);
	T_NEAR(d.cov_pct, 0, 0);  /* a counter that never moved is not noisy */

	const double huge[] = { 1.7e308, 1.7e308 };
	T_EQ_INT(stats_describe(huge, 2, &d), 0);
	T_NEAR(d.mean / 1e308, 1.7, 1e-12);
	T_NEAR(d.median / 1e308, 1.7, 1e-12);
	T_EQ_INT(stats_describe(NULL, 3, &d), -EINVAL);
}

static void test_bh(void)
{
	/* by hand: sorted 0.005 0.01 0.03 0.04 0.5 (m = 5, NAN left out);
	 * m p / rank = 0.025 0.025 0.05 0.05 0.5, already monotone */
	const double p[] = { 0.01, 0.04, 0.03, 0.005, NAN, 0.5 };
	double q[N_ELEMS(p)];
	T_EQ_INT(stats_bh(p, N_ELEMS(p), q), 0);
	T_NEAR(q[0], 0.025, 1e-15);
	T_NEAR(q[1], 0.05, 1e-15);
	T_NEAR(q[2], 0.05, 1e-15);
	T_NEAR(q[3], 0.025, 1e-15);
	T_CHECK(isnan(q[4]));
	T_NEAR(q[5], 0.5, 1e-15);
	/* Holm by hand: sorted 0.01 0.03 0.04 (m = 3): 3 x 0.01, 2 x 0.03,
	 * 1 x 0.04 -> 0.03 0.06 0.04, then monotone: 0.03 0.06 0.06 */
	const double hp[] = { 0.01, 0.04, 0.03, NAN };
	double hq[N_ELEMS(hp)];
	T_EQ_INT(stats_holm(hp, N_ELEMS(hp), hq), 0);
	T_NEAR(hq[0], 0.03, 1e-15);
	T_NEAR(hq[1], 0.06, 1e-15);
	T_NEAR(hq[2], 0.06, 1e-15);
	T_CHECK(isnan(hq[3]));
	const double hbig[] = { 0.6, 0.7 };
	T_EQ_INT(stats_holm(hbig, 2, hq), 0);
	T_NEAR(hq[0], 1, 0);
	T_NEAR(hq[1], 1, 0);
	/* step-up: 2 x 0.02 / 1 = 0.04 is lowered to 0.021 by the larger p */
	double pq[] = { 0.02, 0.021 };
	T_EQ_INT(stats_bh(pq, 2, pq), 0);  /* in place */
	T_NEAR(pq[0], 0.021, 1e-15);
	T_NEAR(pq[1], 0.021, 1e-15);
	const double big[] = { 0.9, 0.8 };
	T_EQ_INT(stats_bh(big, 2, q), 0);
	T_NEAR(q[0], 0.9, 1e-15);
	T_NEAR(q[1], 0.9, 1e-15);

	struct stats_result r[3] = { { .p_value = 0.01 }, { .p_value = NAN }, { .p_value = 0.03 } };
	T_EQ_INT(stats_bh_fill(r, 3), 0);
	T_NEAR(r[0].q_value, 0.02, 1e-15);
	T_CHECK(isnan(r[1].q_value));
	T_NEAR(r[2].q_value, 0.03, 1e-15);
}

/* Largest w with P(W+ <= w) <= alpha / 2, -1 if none: the lower critical
 * value of the two-sided test, rejecting when min(W+, W-) <= it. */
static int signrank_critical(unsigned n, double alpha)
{
	int w = -1;
	while (stats_signrank_cdf(n, (unsigned)(w + 1)) <= alpha / 2)
		w++;
	return w;
}

static void test_signrank_tables(void)
{
	/* Lower critical values of W for two-sided alpha 0.05 and 0.01, in the
	 * convention of the common textbook table (reject H0 when the smaller
	 * rank sum is <= the value; "-" = no decision possible, here -1): e.g.
	 * Zar, Biostatistical Analysis, table B.12, and the Wilcoxon
	 * signed-rank table in Sheskin's handbook. Verified against the DP
	 * here and scipy's _get_wilcoxon_distr. */
	static const int crit05[] = { 0, 2, 3, 5, 8, 10, 13 };
	static const int crit01[] = { -1, -1, 0, 1, 3, 5, 7 };
	for (unsigned n = 6; n <= 12; n++) {
		T_EQ_INT(signrank_critical(n, 0.05), crit05[n - 6]);
		T_EQ_INT(signrank_critical(n, 0.01), crit01[n - 6]);
	}
	/* n = 10: subsets of {1..10} with sum <= w, counted by hand */
	static const unsigned cum10[] = { 1, 2, 3, 5, 7, 10, 14, 19, 25, 33, 43 };
	for (unsigned w = 0; w < N_ELEMS(cum10); w++)
		T_NEAR(stats_signrank_cdf(10, w), cum10[w] / 1024.0, 0);
	T_NEAR(stats_signrank_cdf(10, 55), 1, 0);
	T_NEAR(stats_signrank_cdf(10, 27), 0.5, 0);  /* 27 + 28 = 55: symmetric */
	T_NEAR(stats_signrank_cdf(0, 0), 1, 0);
	T_NEAR(stats_signrank_cdf(49, 0), ldexp(1, -49), 0);
	/* MW: P(U <= u) for 4 vs 5, from scipy's _mwu_state.cdf */
	T_NEAR(stats_mann_whitney_cdf(4, 5, 0), 1.0 / 126, 1e-15);
	T_NEAR(stats_mann_whitney_cdf(5, 4, 3), 7.0 / 126, 1e-15);
	T_NEAR(stats_mann_whitney_cdf(4, 5, 10), 69.0 / 126, 1e-15);
	T_NEAR(stats_mann_whitney_cdf(3, 3, 0), 0.05, 1e-15);
}

static double wilcoxon_p(const double *d, size_t n, bool *exact)
{
	double w, p = NAN, z;
	T_EQ_INT(stats_wilcoxon(d, n, &w, &p, exact, &z), 0);
	return p;
}

static void test_small_sample_facts(void)
{
	/* all pairs in one direction is the strongest evidence n pairs give */
	const double d[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	bool exact;
	T_NEAR(wilcoxon_p(d, 5, &exact), 0.0625, 1e-15);
	T_CHECK(exact);
	T_CHECK(wilcoxon_p(d, 5, &exact) >= 0.05);
	T_CHECK(wilcoxon_p(d, 6, &exact) < 0.05);   /* 6 pairs reach 0.05 */
	T_CHECK(wilcoxon_p(d, 7, &exact) >= 0.01);
	T_CHECK(wilcoxon_p(d, 8, &exact) < 0.01);   /* 8 pairs reach 0.01 */
	T_NEAR(wilcoxon_p(d, 8, &exact), 2.0 / 256, 1e-15);

	/* 3 vs 3 Mann-Whitney: complete separation is p = 2/20 */
	const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 };
	double u, p, z;
	T_EQ_INT(stats_mann_whitney(x, 3, y, 3, &u, &p, &exact, &z), 0);
	T_CHECK(exact);
	T_NEAR(u, 0, 0);
	T_NEAR(p, 0.10, 1e-15);
	T_CHECK(z > 0);  /* y (B) is larger */
	T_EQ_INT(stats_mann_whitney(y, 3, x, 3, &u, &p, &exact, &z), 0);
	T_NEAR(p, 0.10, 1e-15);
	T_CHECK(z < 0);
	/* and no arrangement of 3 vs 3 does better */
	double p_min = 1;
	for (unsigned k = 0; k <= 9; k++)
		p_min = fmin(p_min, fmin(1, 2 * stats_mann_whitney_cdf(3, 3, k < 9 - k ? k : 9 - k)));
	T_NEAR(p_min, 0.10, 1e-15);

	/* scipy.stats.wilcoxon([1.5,-.5,2,3.25,.75,-1,2.5,4]): W- = 4, p = 0.0546875 */
	const double e[] = { 1.5, -0.5, 2.0, 3.25, 0.75, -1.0, 2.5, 4.0 };
	double w;
	T_EQ_INT(stats_wilcoxon(e, 8, &w, &p, &exact, &z), 0);
	T_NEAR(w, 32, 0);
	T_NEAR(p, 0.0546875, 1e-15);
	T_CHECK(z > 0);
	/* its HL: 36 Walsh averages, c = 3 (P(W+ <= 3) = 5/256) */
	double est, lo, hi, level;
	T_EQ_INT(stats_hl_paired(e, 8, 0.95, &est, &lo, &hi, &level), 0);
	T_NEAR(est, 1.5625, 1e-15);
	T_NEAR(lo, -0.125, 1e-15);
	T_NEAR(hi, 3.25, 1e-15);
	T_NEAR(level, 1 - 10.0 / 256, 1e-15);
	/* 5 values: the range is the best there is, at 1 - 2/32 */
	T_EQ_INT(stats_hl_paired(d, 5, 0.95, &est, &lo, &hi, &level), 0);
	T_NEAR(lo, 1, 0);
	T_NEAR(hi, 5, 0);
	T_NEAR(level, 0.9375, 1e-15);
	/* two-sample: 20 differences, c = 1 (P(U <= 1) = 2/126) */
	const double hx[] = { 1.0, 2.5, 3.0, 4.5 }, hy[] = { 2.0, 5.0, 6.5, 7.0, 8.0 };
	T_EQ_INT(stats_hl_shift(hx, 4, hy, 5, 0.95, &est, &lo, &hi, &level), 0);
	T_NEAR(est, 3.5, 1e-15);
	T_NEAR(lo, -1, 1e-15);
	T_NEAR(hi, 6, 1e-15);
	T_NEAR(level, 1 - 4.0 / 126, 1e-15);

	/* Ties no longer force the normal approximation (which said 0.0502
	 * here): the exact test is conditional on the midranks.
	 * |d| = 1, 1, 1 share rank 2 (doubled: 4), then 8, 10, 12, 14, sum 56;
	 * the -1 makes W+ 52. Of the 128 sign vectors, W+ >= 52 takes at
	 * most one 4 negative: 4 of them, so p = 2 * 4/128. */
	const double tied[] = { 1, 1, 2, 3, -1, 4, 5 };
	T_NEAR(wilcoxon_p(tied, 7, &exact), 0.0625, 1e-15);
	T_CHECK(exact);
	T_EQ_INT(stats_wilcoxon(NULL, 3, &w, &p, &exact, &z), -EINVAL);
	T_EQ_INT(stats_hl_paired(e, 0, 0.95, &est, &lo, &hi, &level), -EINVAL);
	T_EQ_INT(stats_welch(x, 1, y, 3, &w, &z, &p), -EINVAL);
}

/* The smallest p each test could give, whatever the signs or labels:
 * doc/statistics.md's small-sample facts, and ties that keep the floor up. */
static void test_min_p(void)
{
	const double d[] = { 3, -1, 4, 1, -5, 9, 2, 6 };
	T_NEAR(stats_wilcoxon_min_p(d, 5), 1.0 / 16, 0); /* 5 pairs never reach 0.05 */
	T_NEAR(stats_wilcoxon_min_p(d, 6), 2.0 / 64, 0);
	T_NEAR(stats_wilcoxon_min_p(d, 1), 1, 0);
	const double counter[] = { -655364, -655364, -655364, -655364, -655364, -655364 };
	T_NEAR(stats_wilcoxon_min_p(counter, 6), 2.0 / 64, 0); /* ties do not move it */
	const double zeros[] = { 0, 0, 2, 0, -2 };
	T_NEAR(stats_wilcoxon_min_p(zeros, 5), 2.0 / 4, 0);
	T_CHECK(isnan(stats_wilcoxon_min_p(zeros, 2))); /* no non-zero d: no test */

	/* Mann-Whitney: 3 vs 3 cannot go below 2/20; a counter at 6 pairs 2/924 */
	const double x[] = { 1, 2, 3 }, y[] = { 2.5, 0.5, 7 };
	T_NEAR(stats_mann_whitney_min_p(x, 3, y, 3), 0.1, 1e-15);
	const double big[] = { 655364, 655364, 655364, 655364, 655364, 655364 }, none[] = { 0, 0, 0, 0, 0, 0 };
	T_NEAR(stats_mann_whitney_min_p(big, 6, none, 6), 2.0 / 924, 1e-15);
	/* 9 of the 12 values tied at 0: y holding the top is 1, 2, 3 and any 2
	 * of the zeros, C(9, 2) = 36 of the C(12, 5) = 792 splits; y holding
	 * the bottom is any 5 zeros, 126 splits. The floor is 2 * 36/792, not
	 * 2/792. */
	const double cx[] = { 0, 0, 0, 0, 0, 0, 0 }, cy[] = { 0, 0, 1, 2, 3 };
	T_NEAR(stats_mann_whitney_min_p(cx, 7, cy, 5), 2.0 * 36 / 792, 1e-15);
	const double four[] = { 4, 4, 4, 4 };
	T_NEAR(stats_mann_whitney_min_p(four, 4, four, 3), 1, 0); /* every value equal */
	T_CHECK(isnan(stats_mann_whitney_min_p(x, 0, y, 3)));
}

static void test_zeros(void)
{
	/* a counter that never moved on either side: at 3 pairs the 90%
	 * interval cannot reach its coverage (0.75), so not even "same" */
	const double z0[] = { 0, 0, 0, 0, 0, 0 };
	struct stats_result r = compare(z0, z0, 3, DIRECTION_LOWER);
	T_CHECK(!r.log_scale);
	T_EQ_INT(r.verdict, STATS_VERDICT_UNDECIDED);
	T_EQ_INT(r.test, STATS_TEST_PERMUTATION_EXACT);
	T_CHECK(!stats_testable(&r, 0.05));
	T_NEAR(r.min_p, 1, 0);
	r = compare(z0, z0, 6, DIRECTION_LOWER);
	T_EQ_INT(r.verdict, STATS_VERDICT_SAME);
	T_NEAR(r.p_value, 1, 0);
	T_NEAR(r.hl_pct, 0, 0);
	T_NEAR(r.ci_low_pct, 0, 0);
	T_NEAR(r.ci_high_pct, 0, 0);
	T_NEAR(r.delta_abs, 0, 0);
	T_NEAR(r.delta_pct, 0, 0);
	T_NEAR(r.welch_p, 1, 0);
	T_NEAR(r.min_change_pct, STATS_MIN_CHANGE_PCT, 0);
	T_NEAR(r.equivalence_pct, STATS_EQUIVALENCE_PCT, 0);

	/* zero before, moving after: no percentages, but a clear verdict from
	 * the run-level permutation test (rule 5): B takes the 8 largest of
	 * 16 runs, 2 / C(16, 8) */
	const double a[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	const double b[] = { 120, 90, 130, 101, 87, 140, 99, 111 };
	r = compare(a, b, 8, DIRECTION_LOWER);
	T_CHECK(!r.log_scale);
	T_EQ_INT(r.test, STATS_TEST_PERMUTATION_EXACT);
	T_EQ_INT(r.verdict, STATS_VERDICT_WORSE);
	T_CHECK(isnan(r.hl_pct) && isnan(r.delta_pct));
	T_NEAR(r.p_value, 2.0 / 12870, 1e-15);
	T_NEAR(r.min_p, 2.0 / 12870, 1e-15);
	T_CHECK(r.hl > 0);
	r = compare(b, a, 8, DIRECTION_LOWER);
	T_EQ_INT(r.verdict, STATS_VERDICT_BETTER);
	T_CHECK(r.hl < 0);
	T_NEAR(r.hl_pct, 100 * r.hl / 106, 1e-9);  /* percent of median A (106) */

	/* some zeros on one side */
	const double c[] = { 0, 3, 5, 0, 4, 6, 2, 0 };
	const double d[] = { 1, 3, 6, 0, 4, 5, 2, 1 };
	r = compare(c, d, 8, DIRECTION_NEUTRAL);
	T_CHECK(!r.log_scale);
	T_CHECK(r.verdict == STATS_VERDICT_UNDECIDED || r.verdict == STATS_VERDICT_SAME);
	T_CHECK(r.p_value > 0.05 && r.p_value <= 1);
}

static void test_degenerate(void)
{
	/* one pair: an estimate, no test */
	const double a1[] = { 100 }, b1[] = { 110 };
	struct stats_result r = compare(a1, b1, 1, DIRECTION_HIGHER);
	T_EQ_INT(r.test, STATS_TEST_NONE);
	T_CHECK(isnan(r.p_value) && isnan(r.z) && isnan(r.ci_low_pct));
	T_EQ_INT(r.verdict, STATS_VERDICT_UNDECIDED);
	T_NEAR(r.hl_pct, 10, 1e-9);
	T_NEAR(r.delta_pct, 10, 1e-12);
	T_EQ_INT(r.pairs, 1);

	/* identical samples */
	const double same[] = { 10, 11, 12, 13, 14, 15 };
	r = compare(same, same, 6, DIRECTION_HIGHER);
	T_NEAR(r.p_value, 1, 0);
	T_NEAR(r.ci_low_pct, 0, 0);
	T_NEAR(r.ci_high_pct, 0, 0);
	T_EQ_INT(r.verdict, STATS_VERDICT_SAME);
	T_CHECK(r.log_scale);
	T_NEAR(r.z, 0, 0);

	/* empty input */
	r = compare(NULL, NULL, 0, DIRECTION_HIGHER);
	T_EQ_INT(r.verdict, STATS_VERDICT_NONE);
	T_EQ_INT(r.test, STATS_TEST_NONE);
	T_EQ_INT(r.a.n, 0);

	/* a metric recorded in one variant only */
	const double none[] = { NAN, NAN, NAN, NAN };
	const double some[] = { 5, 6, 7, 8 };
	r = compare(none, some, 4, DIRECTION_HIGHER);
	T_EQ_INT(r.verdict, STATS_VERDICT_NONE);
	T_EQ_INT(r.b.n, 4);
	T_CHECK(isnan(r.p_value) && isnan(r.delta_abs));
	r = compare(some, none, 4, DIRECTION_HIGHER);
	T_EQ_INT(r.verdict, STATS_VERDICT_NONE);

	/* huge and tiny magnitudes on the log scale */
	const double ha[] = { 1e12, 1.01e12, 0.99e12, 1.02e12, 1.005e12, 0.98e12 };
	const double hb[] = { 1.2e12, 1.23e12, 1.19e12, 1.22e12, 1.21e12, 1.15e12 };
	r = compare(ha, hb, 6, DIRECTION_HIGHER);
	T_EQ_INT(r.verdict, STATS_VERDICT_BETTER);
	T_NEAR(r.p_value, 2.0 / 64, 1e-15);
	const double ta[] = { 1e-9, 1.01e-9, 0.99e-9, 1.02e-9, 1e-9, 0.98e-9 };
	r = compare(ta, ta, 6, DIRECTION_HIGHER);
	T_EQ_INT(r.verdict, STATS_VERDICT_SAME);
	r = compare(hb, ha, 6, DIRECTION_NEUTRAL);
	T_EQ_INT(r.verdict, STATS_VERDICT_CHANGED);
	T_CHECK(r.z < 0 && r.hl_pct < 0 && r.ci_high_pct < 0);

	/* broken pairs: one missing partner keeps the paired test ... */
	const double pa[] = { 10, 11, 12, 13, 14, 15, 16, NAN, 10.5 };
	const double pb[] = { 11, 12, 13, 14, 15, 16, 17, 12.5, 11.5 };
	r = compare(pa, pb, 9, DIRECTION_HIGHER);
	T_EQ_INT(r.test, STATS_TEST_WILCOXON_EXACT);
	T_EQ_INT(r.pairs, 8);
	T_NEAR(r.p_value, 2.0 / 256, 1e-15);
	/* ... half of the runs unpaired switches to Mann-Whitney */
	const double qa[] = { 10, NAN, 12, NAN, 14, NAN };
	const double qb[] = { NAN, 12.2, NAN, 14.1, NAN, 16.3 };
	r = compare(qa, qb, 6, DIRECTION_HIGHER);
	T_EQ_INT(r.test, STATS_TEST_MANN_WHITNEY_EXACT);
	T_EQ_INT(r.pairs, 0);
	T_NEAR(r.p_value, 0.2, 1e-12);  /* only 14 > 12.2: 2 P(U <= 1) = 4/20 */
	T_EQ_INT(r.verdict, STATS_VERDICT_UNDECIDED);

	/* negative values: differences, percent of |median A| */
	const double na[] = { -10, -10, -10 }, nb[] = { -9, -9, -9 };
	r = compare(na, nb, 3, DIRECTION_HIGHER);
	T_CHECK(!r.log_scale);
	T_NEAR(r.hl_pct, 10, 1e-12);
	T_NEAR(r.delta_pct, 10, 1e-12);

	/* explicit thresholds and alpha; bad alpha */
	struct stats_input in = { .a = same, .b = same, .n = 6, .min_change_pct = 0, .equivalence_pct = 0, .alpha = 0.01 };
	T_EQ_INT(stats_compare(&in, &r), 0);
	T_NEAR(r.min_change_pct, 0, 0);
	T_NEAR(r.equivalence_pct, 0, 0);
	T_EQ_INT(r.verdict, STATS_VERDICT_SAME);
	in.alpha = 1.5;
	T_EQ_INT(stats_compare(&in, &r), -EINVAL);
	T_EQ_INT(stats_compare(NULL, &r), -EINVAL);

	/* rule 7: a noisy baseline widens nothing */
	const double noisy[] = { 90, 110, 100, 95, 105 };
	r = compare(noisy, noisy, 5, DIRECTION_HIGHER);
	T_CHECK(r.a.cov_pct > 5);
	T_NEAR(r.min_change_pct, STATS_MIN_CHANGE_PCT, 0);
	T_NEAR(r.equivalence_pct, STATS_EQUIVALENCE_PCT, 0);
}

static void test_names(void)
{
	T_EQ_STR(stats_verdict_name(STATS_VERDICT_BETTER), "better");
	T_EQ_STR(stats_verdict_name(STATS_VERDICT_NONE), "none");
	T_EQ_STR(stats_verdict_name(STATS_VERDICT_UNDECIDED), "undecided");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_BETTER, true), "▲");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_WORSE, true), "▼");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_CHANGED, true), "≠");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_SAME, true), "~");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_UNDECIDED, true), "?");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_BETTER, false), "+");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_WORSE, false), "-");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_CHANGED, false), "*");
	T_EQ_STR(stats_verdict_marker(STATS_VERDICT_NONE, false), "");
	T_EQ_STR(stats_test_name(STATS_TEST_WILCOXON_EXACT), "wilcoxon-signed-rank-exact");
	T_EQ_STR(stats_test_name(STATS_TEST_MANN_WHITNEY_NORMAL), "mann-whitney-u-normal");
	T_EQ_STR(direction_name(DIRECTION_LOWER), "lower");
}

static void test_obf(void)
{
	T_NEAR(stats_obf_bound(1, 4), 4.048, 1e-12);
	T_NEAR(stats_obf_bound(2, 4), 2.862, 1e-12);
	T_NEAR(stats_obf_bound(3, 4), 2.337, 1e-12);
	T_NEAR(stats_obf_bound(4, 4), 2.024, 1e-12);
	/* the table is the shape c sqrt(K / k), rounded */
	for (unsigned k = 1; k <= 4; k++)
		T_NEAR(stats_obf_bound(k, 4), 2.024 * sqrt(4.0 / k), 5e-4);
	T_NEAR(stats_obf_bound(1, 2), 2.024 * sqrt(2.0), 1e-12);
	T_CHECK(isnan(stats_obf_bound(0, 4)));
	T_CHECK(isnan(stats_obf_bound(5, 4)));

	struct stats_result r[2] = {
		{ .z = 3.0, .ci_lo = 0.02, .ci_hi = 0.08, .verdict = STATS_VERDICT_BETTER },
		{ .z = 0.1, .ci_lo = -0.005, .ci_hi = 0.005, .verdict = STATS_VERDICT_SAME },
	};
	T_EQ_INT(stats_adaptive_look(r, 1, 1, 4), STATS_CONTINUE);      /* 3.0 < 4.048 */
	T_EQ_INT(stats_adaptive_look(r, 1, 2, 4), STATS_STOP_DECIDED);
	T_EQ_INT(stats_adaptive_look(r + 1, 1, 1, 4), STATS_STOP_SAME);
	T_EQ_INT(stats_adaptive_look(r, 2, 2, 4), STATS_STOP_DECIDED);  /* a mix */
	r[1].verdict = STATS_VERDICT_UNDECIDED;
	T_EQ_INT(stats_adaptive_look(r, 2, 2, 4), STATS_CONTINUE);
	r[0].ci_lo = -0.01; /* |z| beyond the bound but the CI touches 0 */
	r[0].verdict = STATS_VERDICT_UNDECIDED;
	T_EQ_INT(stats_adaptive_look(r, 1, 2, 4), STATS_CONTINUE);
	T_EQ_INT(stats_adaptive_look(r, 0, 2, 4), STATS_CONTINUE);
}

#define LOOKS 4
#define PAIRS_PER_LOOK 5

struct sim {
	double shift;  /* B / A - 1 */
	double cov;    /* per variant */
	double min_change; /* min_change_pct, < 0 for the default */
};

struct outcome {
	unsigned look;  /* where it stopped (LOOKS: ran to the budget) */
	enum stats_verdict verdict;
};

/* One adaptive job: looks after 5, 10, 15, 20 pairs of lognormal data. */
static struct outcome run_adaptive(gsl_rng *rng, const struct sim *s)
{
	double a[LOOKS * PAIRS_PER_LOOK], b[LOOKS * PAIRS_PER_LOOK];
	double sigma = sqrt(log1p(s->cov * s->cov));  /* lognormal with that CoV */
	for (size_t i = 0; i < N_ELEMS(a); i++) {
		a[i] = 1000 * exp(gsl_ran_gaussian(rng, sigma));
		b[i] = 1000 * (1 + s->shift) * exp(gsl_ran_gaussian(rng, sigma));
	}
	struct outcome o = { 0, STATS_VERDICT_NONE };
	for (unsigned look = 1; look <= LOOKS; look++) {
		struct stats_input in = {
			.a = a,
			.b = b,
			.n = look * PAIRS_PER_LOOK,
			.dir = DIRECTION_HIGHER,
			.min_change_pct = s->min_change,
			.equivalence_pct = -1,
		};
		struct stats_result r;
		if (stats_compare(&in, &r) < 0) {
			T_CHECK(!"stats_compare failed");
			return o;
		}
		o.look = look;
		o.verdict = r.verdict;
		if (stats_adaptive_look(&r, 1, look, LOOKS) != STATS_CONTINUE)
			break;
	}
	return o;
}

static bool is_change(enum stats_verdict v)
{
	return v == STATS_VERDICT_BETTER || v == STATS_VERDICT_WORSE || v == STATS_VERDICT_CHANGED;
}

/* Runs trials with seeds seed0.. and returns how many changed / stopped
 * with a change by look 2 (10 pairs). */
static void simulate(const struct sim *s, unsigned trials, unsigned long seed0, unsigned *ret_changed, unsigned *ret_early)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	unsigned changed = 0, early = 0;
	for (unsigned t = 0; t < trials; t++) {
		gsl_rng_set(rng, seed0 + t);
		struct outcome o = run_adaptive(rng, s);
		changed += is_change(o.verdict);
		early += is_change(o.verdict) && o.look <= 2;
	}
	gsl_rng_free(rng);
	*ret_changed = changed;
	*ret_early = early;
}

/* Rates measured here go in the issue note. "2% CoV" read both ways: 2%
 * per variant (the stricter reading, the 90% target) and 2% of the
 * ratio B/A (1.41% per variant). The target uses min_change 1% (the
 * default since rule 7 stopped widening with the baseline's CoV), and the
 * default is printed too. A look's z is the paired t on the differences (see
 * look_z in stats.c); stopping also needs the rank test's verdict. */
static void test_adaptive_simulation(void)
{
	unsigned changed, early;
	double ratio_cov = 0.02 / sqrt(2.0);

	struct sim target = { 0.05, ratio_cov, 1 };
	simulate(&target, 100, 1000, &changed, &early);
	printf("adaptive, 5%% shift, 2%% CoV of B/A, min_change 1%%: better/worse by 10 pairs %u/100, by 20 %u/100\n", early, changed);
	T_CHECK(early >= 90);

	struct sim per_variant = { 0.05, 0.02, 1 };
	simulate(&per_variant, 100, 1000, &changed, &early);
	printf("adaptive, 5%% shift, 2%% CoV per variant, min_change 1%%: better/worse by 10 pairs %u/100, by 20 %u/100\n",
	       early, changed);
	T_CHECK(early >= 90);
	T_CHECK(changed >= 95);

	struct sim ratio_default = { 0.05, ratio_cov, -1 };
	simulate(&ratio_default, 100, 1000, &changed, &early);
	printf("adaptive, 5%% shift, 2%% CoV of B/A, default min_change: better/worse by 10 pairs %u/100, by 20 %u/100\n",
	       early, changed);
	struct sim per_variant_default = { 0.05, 0.02, -1 };
	simulate(&per_variant_default, 100, 1000, &changed, &early);
	printf("adaptive, 5%% shift, 2%% CoV per variant, default min_change: better/worse by 10 pairs %u/100, by 20 %u/100\n",
	       early, changed);

	/* no shift: false changes at the rate alpha allows */
	struct sim null_default = { 0, 0.02, -1 };
	simulate(&null_default, 100, 2000, &changed, &early);
	printf("adaptive, no shift, default min_change: change reported in %u/100\n", changed);
	T_CHECK(changed <= 8);
	struct sim null_eps0 = { 0, 0.02, 0 };
	simulate(&null_eps0, 100, 2000, &changed, &early);
	printf("adaptive, no shift, min_change 0 (significance alone): change reported in %u/100\n", changed);
	T_CHECK(changed <= 8);

	/* A/A: 20 seeded repetitions of identical variants (3% CoV), at 10
	 * pairs and on the adaptive schedule */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	unsigned aa_fixed = 0, aa_adaptive = 0;
	for (unsigned rep = 0; rep < 20; rep++) {
		gsl_rng_set(rng, 3000 + rep);
		double a[10], b[10];
		for (size_t i = 0; i < 10; i++) {
			a[i] = 500 * exp(gsl_ran_gaussian(rng, 0.03));
			b[i] = 500 * exp(gsl_ran_gaussian(rng, 0.03));
		}
		struct stats_result r = compare(a, b, 10, DIRECTION_HIGHER);
		aa_fixed += r.verdict == STATS_VERDICT_BETTER || r.verdict == STATS_VERDICT_WORSE;
		struct sim aa = { 0, 0.03, -1 };
		struct outcome o = run_adaptive(rng, &aa);
		aa_adaptive += o.verdict == STATS_VERDICT_BETTER || o.verdict == STATS_VERDICT_WORSE;
	}
	gsl_rng_free(rng);
	printf("A/A: better/worse in %u/20 (10 pairs), %u/20 (adaptive)\n", aa_fixed, aa_adaptive);
	T_CHECK(aa_fixed <= 1);
	T_CHECK(aa_adaptive <= 1);
}

int main(void)
{
	test_describe();
	test_bh();
	test_signrank_tables();
	test_small_sample_facts();
	test_min_p();
	test_zeros();
	test_degenerate();
	test_names();
	test_obf();
	test_adaptive_simulation();
	return t_done("test_stats");
}
