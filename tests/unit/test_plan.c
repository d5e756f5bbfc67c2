/* kab plan's simulated power against what is known of it: the normal
 * approximation of the signed-rank test's power for a known noise, no
 * power below 6 pairs or below epsilon, the same numbers for the same
 * seed. */
#include "t.h"
#include "plan.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#define POOL 4000
/* Pitman efficiency of the signed-rank test against the t test under
 * normal noise: its power at N pairs is the t test's at 0.955 N. */
#define ARE_NORMAL (3 / M_PI)

static double base[POOL], d[POOL];

/* A calibration so large that the bootstrap is the normal noise itself:
 * log-ratios N(0, sd), baseline values with a CoV of about base_cov. */
static void synth(double sd, double base_cov, unsigned long seed)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, seed);
	for (size_t i = 0; i < POOL; i++) {
		d[i] = gsl_ran_gaussian(rng, sd);
		base[i] = 100 * exp(gsl_ran_gaussian(rng, base_cov));
	}
	gsl_rng_free(rng);
}

/* The power of a two-sided 5% test of a shift delta - margin with noise
 * sd at n pairs: the t test's, by the normal approximation with the t
 * quantile of n - 1 degrees of freedom, at the signed-rank test's
 * efficiency. */
static double analytic(double delta, double margin, double sd, unsigned n)
{
	double z = gsl_cdf_tdist_Qinv(0.025, (double)n - 1);
	return gsl_cdf_ugaussian_P(sqrt(ARE_NORMAL * n) * (delta - margin) / sd - z);
}

static struct plan_noise noise(double eps_pct, enum stats_direction dir)
{
	return (struct plan_noise){
		.base = base, .n_base = POOL, .d = d, .n_d = POOL,
		.dir = dir, .epsilon_pct = eps_pct, .sims = 2000, .seed = 7,
	};
}

static void test_summary(void)
{
	synth(0.02, 0.004, 1);
	struct plan_noise nz = noise(-1, STATS_DIR_HIGHER);
	struct plan_summary s;
	T_EQ_INT(plan_summarize(&nz, &s), 0);
	T_NEAR(s.d_sd, 0.02, 0.001);
	T_NEAR(s.noise_pct, 100 * expm1(0.02), 0.1);
	/* baseline CoV 0.4%: epsilon is the 1% floor */
	T_NEAR(s.epsilon_pct, 1.0, 1e-12);
	synth(0.02, 0.03, 1);
	T_EQ_INT(plan_summarize(&nz, &s), 0);
	T_NEAR(s.epsilon_pct, 2 * s.base_cov_pct, 1e-12);
	T_NEAR(s.epsilon_pct, 6.0, 0.4);
	nz.epsilon_pct = 2.5;
	T_EQ_INT(plan_summarize(&nz, &s), 0);
	T_NEAR(s.epsilon_pct, 2.5, 1e-12);
}

/* With epsilon 0 the verdict is the signed-rank test (and its interval,
 * which agrees with it): the simulated power follows the normal
 * approximation. */
static void test_matches_analytic(void)
{
	synth(0.02, 0.004, 2);
	struct plan_noise nz = noise(0, STATS_DIR_HIGHER);
	static const struct { unsigned n; double effect; } cases[] = {
		{ 10, 0.015 }, { 10, 0.025 }, { 15, 0.012 }, { 20, 0.01 }, { 8, 0.03 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double pw = -1;
		T_EQ_INT(plan_power(&nz, cases[i].n, cases[i].effect, &pw), 0);
		double want = analytic(log1p(cases[i].effect), 0, 0.02, cases[i].n);
		T_NEAR(pw, want, 0.08);
		if (getenv("T_VERBOSE")) fprintf(stderr, "n %u effect %g: simulated %.3f analytic %.3f\n", cases[i].n, cases[i].effect, pw, want);
	}
	/* with epsilon 1%: the interval's lower end must clear ln(1.01) */
	nz.epsilon_pct = 1.0;
	double pw = -1;
	T_EQ_INT(plan_power(&nz, 15, 0.03, &pw), 0);
	T_NEAR(pw, analytic(log1p(0.03), log1p(0.01), 0.02, 15), 0.1);
}

static void test_never(void)
{
	synth(0.01, 0.004, 3);
	struct plan_noise nz = noise(-1, STATS_DIR_LOWER);
	double pw = -1;
	/* 5 pairs: the smallest two-sided p is 0.0625, whatever the effect */
	for (unsigned n = 1; n < PLAN_MIN_DECIDING_PAIRS; n++) {
		T_EQ_INT(plan_power(&nz, n, 0.5, &pw), 0);
		T_NEAR(pw, 0, 0);
	}
	T_EQ_INT(plan_power(&nz, 6, 0.5, &pw), 0);
	T_NEAR(pw, 1, 0);
	/* below epsilon: the interval sits inside the band */
	nz.epsilon_pct = 10;
	T_EQ_INT(plan_power(&nz, 20, 0.05, &pw), 0);
	T_NEAR(pw, 0, 0);
	T_EQ_INT(plan_power(&nz, 100, 0.09, &pw), 0);
	T_NEAR(pw, 0, 0);
	/* well above it: decided, as worse (lower is better, B went up) */
	T_EQ_INT(plan_power(&nz, 10, 0.15, &pw), 0);
	T_CHECK(pw > 0.95);
	unsigned pairs = 1;
	T_EQ_INT(plan_pairs_for(&nz, 0.05, 0.8, 50, &pairs, &pw), 0);
	T_EQ_INT(pairs, 0);
	double e = 0;
	T_EQ_INT(plan_min_effect(&nz, 10, 0.8, &e), 0);
	T_CHECK(e > 0.10);
}

static void test_search(void)
{
	synth(0.03, 0.01, 4);
	struct plan_noise nz = noise(-1, STATS_DIR_HIGHER);
	double e6, e20, pw, again;
	T_EQ_INT(plan_min_effect(&nz, 6, 0.8, &e6), 0);
	T_EQ_INT(plan_min_effect(&nz, 20, 0.8, &e20), 0);
	T_CHECK(e20 < e6);
	T_EQ_INT(plan_power(&nz, 20, e20, &pw), 0);
	T_CHECK(pw >= 0.8);
	T_EQ_INT(plan_power(&nz, 20, e20 - 0.001, &pw), 0);
	T_CHECK(pw < 0.8);
	/* the same seed, the same draws */
	T_EQ_INT(plan_power(&nz, 20, e20, &pw), 0);
	T_EQ_INT(plan_power(&nz, 20, e20, &again), 0);
	T_NEAR(pw, again, 0);
	unsigned pairs = 0;
	T_EQ_INT(plan_pairs_for(&nz, 0.05, 0.8, PLAN_PAIRS_MAX, &pairs, &pw), 0);
	T_CHECK(pairs >= PLAN_MIN_DECIDING_PAIRS && pairs <= PLAN_PAIRS_MAX);
	T_CHECK(pw >= 0.8);
	double check;
	T_EQ_INT(plan_power(&nz, pairs, 0.05, &check), 0);
	T_NEAR(check, pw, 0);
	if (pairs > PLAN_MIN_DECIDING_PAIRS) {
		T_EQ_INT(plan_power(&nz, pairs - 1, 0.05, &check), 0);
		T_CHECK(check < 0.8 + 0.03);
	}
	/* a neutral metric counts "changed" upwards */
	nz.dir = STATS_DIR_NEUTRAL;
	T_EQ_INT(plan_power(&nz, 20, 0.2, &pw), 0);
	T_CHECK(pw > 0.95);
}

static void test_small_calibration(void)
{
	/* four pairs, the bootstrap still gives distinct draws (no ties
	 * that would send the test to its normal approximation) */
	static const double b4[] = { 100, 101, 99.5, 100.4, 100.2, 99.8, 100.9, 99.1 };
	static const double d4[] = { 0.012, -0.008, 0.004, -0.01 };
	struct plan_noise nz = {
		.base = b4, .n_base = 8, .d = d4, .n_d = 4, .dir = STATS_DIR_HIGHER, .epsilon_pct = -1,
	};
	struct plan_summary s;
	T_EQ_INT(plan_summarize(&nz, &s), 0);
	T_EQ_INT(s.pairs, 4);
	double pw;
	T_EQ_INT(plan_power(&nz, 10, 0.05, &pw), 0);
	T_CHECK(pw > 0.8);
}

static void test_bad(void)
{
	static const double one[] = { 1 }, z[] = { 1, 0, 2 }, dd[] = { 0.1, -0.1, 0 };
	struct plan_noise nz = { .base = one, .n_base = 1, .d = dd, .n_d = 3, .epsilon_pct = -1 };
	struct plan_summary s;
	double pw;
	unsigned n;
	T_EQ_INT(plan_summarize(&nz, &s), -EINVAL);
	nz.base = z;
	nz.n_base = 3;
	T_EQ_INT(plan_power(&nz, 10, 0.05, &pw), -EINVAL);
	nz.base = dd;  /* has a negative value */
	T_EQ_INT(plan_summarize(&nz, &s), -EINVAL);
	static const double ok[] = { 1, 2, 3 };
	nz.base = ok;
	T_EQ_INT(plan_power(&nz, 0, 0.05, &pw), -EINVAL);
	T_EQ_INT(plan_power(&nz, 10, -1, &pw), -EINVAL);
	T_EQ_INT(plan_pairs_for(&nz, 0.05, 0.8, 5, &n, &pw), -EINVAL);
	T_EQ_INT(plan_min_effect(&nz, 10, 0, &pw), -EINVAL);
}

int main(void)
{
	test_summary();
	test_matches_analytic();
	test_never();
	test_search();
	test_small_calibration();
	test_bad();
	return t_done("test_plan");
}
