/* What change-point detection costs: a year of nightly history (365
 * nights) for 200 metrics, drawn from a fixed seed (levels of 50-5000,
 * noise of 1-5% CoV, 0-3 steps of 5-20%, a spike now and then, one
 * metric in five an integer counter), run through cp_detect with the
 * defaults. The reference in the same invocation is the least any
 * detector must do: one pass over each series that computes Welch's t at
 * every split from prefix sums. Prints the median of BENCH_REPEAT
 * (default 11) tries of each, their ratio and the points found (the same
 * on every try: detection is deterministic). Targets are reported, not
 * asserted: the year of 200 metrics well under a second, and one metric
 * within a tenth of GET /api/v1/history's 20 ms p99 budget. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/util.h"
#include "harness/stats/changepoint.h"
#include "bench/bench_rng.h"

#define NIGHTS 365
#define METRICS 200

static uint64_t rng_state = 20240917;

static double uniform01(void)
{
	return bench_uniform01(&rng_state);
}
static double gauss(void)
{
	return bench_gauss(&rng_state);
}

static void gen_metric(double *x, size_t m)
{
	double level = 50 + 4950 * uniform01(), cov = 0.01 + 0.04 * uniform01();
	bool counter = m % 5 == 4;
	int steps = (int)(uniform01() * 4);
	for (size_t i = 0; i < NIGHTS; i++)
		x[i] = counter ? floor(level / 500 * (1 + 0.3 * gauss())) : level * (1 + cov * gauss());
	for (int s = 0; s < steps; s++) {
		size_t at = 10 + (size_t)(uniform01() * (NIGHTS - 20));
		double by = (uniform01() < 0.5 ? -1 : 1) * (0.05 + 0.15 * uniform01()) * level;
		for (size_t i = at; i < NIGHTS; i++)
			x[i] += counter ? floor(by / 100) : by;
	}
	if (uniform01() < 0.3)
		x[(size_t)(uniform01() * NIGHTS)] *= 20;
}

/* The reference: Welch's t at every split with at least 2 nights a side,
 * from prefix sums of x and x^2; returns the largest |t| (kept so that
 * the compiler cannot drop the work). */
static double welch_scan(const double *x, size_t n, double *sum, double *sq)
{
	sum[0] = sq[0] = 0;
	double ref = x[0];
	for (size_t i = 0; i < n; i++) {
		sum[i + 1] = sum[i] + (x[i] - ref);
		sq[i + 1] = sq[i] + (x[i] - ref) * (x[i] - ref);
	}
	double best = 0;
	for (size_t k = 2; k + 2 <= n; k++) {
		double na = (double)k, nb = (double)(n - k);
		double ma = sum[k] / na, mb = (sum[n] - sum[k]) / nb;
		double va = (sq[k] - na * ma * ma) / (na - 1), vb = (sq[n] - sq[k] - nb * mb * mb) / (nb - 1);
		double se = sqrt(fmax(va, 0) / na + fmax(vb, 0) / nb);
		if (se > 0)
			best = fmax(best, fabs(mb - ma) / se);
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One pass of cp_detect over every metric: its seconds, the points found
 * (-1 when a call failed) and a digest of their nights. */
static double time_detect(double (*x)[NIGHTS], long *ret_points, uint64_t *ret_digest)
{
	long points = 0;
	uint64_t digest = 0;
	double t0 = util_mono_now();
	for (size_t m = 0; m < METRICS; m++) {
		struct cp_result res;
		if (cp_detect(x[m], NIGHTS, NULL, &res) < 0) {
			points = -1;
			break;
		}
		points += (long)res.n;
		for (size_t k = 0; k < res.n; k++)
			digest = digest * 1000003u + res.points[k].index * 31u + m;
		cp_result_free(&res);
	}
	double dt = util_mono_now() - t0;
	*ret_points = points;
	*ret_digest = digest;
	return dt;
}

int main(void)
{
	const char *rs = getenv("BENCH_REPEAT");
	size_t repeat = rs ? strtoul(rs, NULL, 10) : 11;
	if (repeat < 1 || repeat > 101)
		repeat = 11;
	static double x[METRICS][NIGHTS];
	for (size_t m = 0; m < METRICS; m++)
		gen_metric(x[m], m);

	double det[101], ref[101], sum[NIGHTS + 1], sq[NIGHTS + 1], sink = 0;
	long points = 0, first_points = 0;
	uint64_t digest = 0, first_digest = 0;
	bool same = true;
	for (size_t k = 0; k < repeat; k++) {
		det[k] = time_detect(x, &points, &digest);
		if (k == 0) {
			first_points = points;
			first_digest = digest;
		}
		same = same && points == first_points && digest == first_digest;
		double t0 = util_mono_now();
		for (size_t m = 0; m < METRICS; m++)
			sink += welch_scan(x[m], NIGHTS, sum, sq);
		ref[k] = util_mono_now() - t0;
	}
	if (first_points < 0) {
		fprintf(stderr, "bench_changepoint: cp_detect failed\n");
		return 1;
	}
	double d = median(det, repeat), r = median(ref, repeat);
	printf("%d metrics x %d nights, median of %zu tries\n", METRICS, NIGHTS, repeat);
	printf("  cp_detect (defaults)             %9.2f ms   %6.3f ms a metric   %ld points\n", d * 1e3,
	       d * 1e3 / METRICS, first_points);
	printf("  reference: Welch t at every split %8.2f ms   %6.3f ms a metric   (max |t| sum %.0f)\n", r * 1e3,
	       r * 1e3 / METRICS, sink / (double)repeat);
	printf("  ratio cp_detect / reference       %8.1fx\n", d / r);
	printf("  %s  a year of %d metrics < 1 s (%.3f s)\n", d < 1 ? "PASS" : "MISS", METRICS, d);
	printf("  %s  one metric's year < 2 ms, a tenth of GET /api/v1/history's 20 ms p99 (%.3f ms)\n",
	       d / METRICS < 2e-3 ? "PASS" : "MISS", d * 1e3 / METRICS);
	printf("  %s  the same points on every try (deterministic)\n", same ? "PASS" : "MISS");
	return 0;
}
