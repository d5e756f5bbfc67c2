/* Time to a verdict: how many pairs kab's own comparison (stats_compare,
 * the function behind every report row, with the default min_change and
 * equivalence) needs to decide a change, and how often it decides one that
 * is not there. Simulated jobs from a fixed seed: each run lognormal with
 * the given CoV, B = A x (1 + shift), the pairs independent.
 *
 * The reference in the same invocation is the ceiling of any exact rank
 * rule: at n pairs the signed-rank test can only reach p < 0.05 when
 * (nearly) every pair agrees in sign, and with no ties the most extreme
 * outcome, all n in one direction, has probability Phi(d / sd)^n for a
 * shift d in logs and the pair differences' sd. At 6 pairs that is the
 * only outcome with p < 0.05, so it bounds every exact rank rule; kab's
 * decided fraction is printed beside it as a ratio (1.00: kab decides
 * whenever the data allow it). The A/A rate of false verdicts (better, worse or changed on
 * identical variants) is printed beside alpha. Reported, not asserted.
 * BENCH_JOBS (default 4000) sets the simulated jobs per point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness/stats/stats.h"

#define ALPHA 0.05
#define TARGET_POWER 0.80
#define MAX_PAIRS 40

#define SEED 20261202u

static gsl_rng *rng;

static double gauss(void)
{
	return gsl_ran_gaussian(rng, 1);
}

static unsigned jobs_per_point(void)
{
	const char *s = getenv("BENCH_JOBS");
	long v = s ? strtol(s, NULL, 10) : 0;
	return v >= 100 && v <= 1000000 ? (unsigned)v : 4000;
}

static bool is_change(enum stats_verdict v)
{
	return v == STATS_VERDICT_BETTER || v == STATS_VERDICT_WORSE || v == STATS_VERDICT_CHANGED;
}

/* The fraction of jobs of n pairs whose verdict is a change (better for
 * a shift > 0 on a higher-is-better metric; any change when shift is 0). */
static double decided(unsigned n, double shift, double cov, unsigned jobs, enum stats_verdict *want)
{
	double a[MAX_PAIRS], b[MAX_PAIRS];
	double sigma = sqrt(log1p(cov * cov));
	unsigned hits = 0;
	for (unsigned j = 0; j < jobs; j++) {
		for (unsigned i = 0; i < n; i++) {
			a[i] = 1000 * exp(sigma * gauss());
			b[i] = 1000 * (1 + shift) * exp(sigma * gauss());
		}
		struct stats_input in = {
			.a = a,
			.b = b,
			.n = n,
			.dir = DIRECTION_HIGHER,
			.min_change_pct = -1,
			.equivalence_pct = -1,
			.alpha = ALPHA,
		};
		struct stats_result r;
		if (stats_compare(&in, &r) < 0) {
			fprintf(stderr, "bench_verdict: stats_compare failed\n");
			exit(1);
		}
		hits += want ? r.verdict == *want : is_change(r.verdict);
	}
	return (double)hits / jobs;
}

/* Phi(d / sd)^n: every pair's log ratio on the side of the shift. */
static double ceiling(unsigned n, double shift, double cov)
{
	double sd = sqrt(2 * log1p(cov * cov));
	return pow(gsl_cdf_ugaussian_P(log1p(shift) / sd), n);
}

int main(void)
{
	unsigned jobs = jobs_per_point();
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!rng)
		return 1;
	gsl_rng_set(rng, SEED);
	enum stats_verdict better = STATS_VERDICT_BETTER;
	const double shift = 0.05, cov = 0.02;
	printf("simulated jobs per point: %u (BENCH_JOBS), seed %llu; min_change %g%%, equivalence %g%%, alpha %g\n",
	       jobs, (unsigned long long)SEED, STATS_MIN_CHANGE_PCT, STATS_EQUIVALENCE_PCT, ALPHA);
	printf("\n+5%% at 2%% CoV per run: the fraction of jobs kab calls better, against the exact rank rule's ceiling\n");
	printf("%6s %8s %8s %7s\n", "pairs", "kab", "ceiling", "ratio");
	static const unsigned show[] = { 6, 8, 10 };
	for (size_t k = 0; k < sizeof(show) / sizeof(show[0]); k++) {
		double f = decided(show[k], shift, cov, jobs, &better), c = ceiling(show[k], shift, cov);
		printf("%6u %7.1f%% %7.1f%% %7.2f\n", show[k], 100 * f, 100 * c, c > 0 ? f / c : NAN);
	}
	unsigned need = 0;
	for (unsigned n = STATS_MIN_PAIRS; n <= MAX_PAIRS && !need; n++)
		if (decided(n, shift, cov, jobs, &better) >= TARGET_POWER)
			need = n;
	if (need)
		printf("pairs for %.0f%% of jobs better: %u\n", 100 * TARGET_POWER, need);
	else
		printf("pairs for %.0f%% of jobs better: more than %u\n", 100 * TARGET_POWER, MAX_PAIRS);
	printf("(at 6 pairs only all six agreeing reaches p < 0.05, so the ceiling bounds every exact rank rule there;\n"
	       " from 7 pairs on one or more small discordant pairs also reach it, and the ratio can pass 1)\n");

	printf("\nA/A (identical variants): jobs with a false verdict on one primary metric, against alpha\n");
	printf("%6s %6s %8s %7s\n", "CoV", "pairs", "false", "/alpha");
	static const double covs[] = { 0.01, 0.02, 0.10 };
	static const unsigned pairs[] = { 6, 10, 20 };
	double worst = 0;
	for (size_t c = 0; c < sizeof(covs) / sizeof(covs[0]); c++)
		for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			double f = decided(pairs[k], 0, covs[c], jobs, NULL);
			worst = fmax(worst, f);
			printf("%5.0f%% %6u %7.2f%% %7.2f\n", 100 * covs[c], pairs[k], 100 * f, f / ALPHA);
		}
	printf("\n  %s  A/A false verdicts at most alpha (worst %.2f%%)\n", worst <= ALPHA + 0.01 ? "PASS" : "MISS", 100 * worst);
	double f8 = decided(8, shift, cov, jobs, &better);
	printf("  %s  +5%% at 2%% CoV decided in at least 90%% of 8-pair jobs (%.1f%%)\n", f8 >= 0.90 ? "PASS" : "MISS", 100 * f8);
	gsl_rng_free(rng);
	return 0;
}
