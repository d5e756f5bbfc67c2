/* Hodges-Lehmann estimates and the confidence intervals that invert the
 * rank tests (Hollander & Wolfe, "Nonparametric Statistical Methods",
 * chapters 3 and 4):
 *  - paired: the median of the n(n+1)/2 Walsh averages (d_i + d_j) / 2,
 *    i <= j. The number of positive Walsh averages of d - theta is the
 *    signed-rank W+ of d - theta, so [W_(c+1), W_(N-c)] (1-based, sorted)
 *    misses theta with probability 2 P(W+ <= c). c is the largest value
 *    with P(W+ <= c) <= alpha/2, from the exact distribution below 50
 *    values and the normal approximation (continuity-corrected, no tie
 *    term) from 50 on. Below 6 values even c = 0, the whole range, covers
 *    less than 95%; the interval is then the range and the achieved
 *    coverage (1 - 2^(1-n)) is reported, never a fake 95%.
 *  - two-sample: the median of the nx * ny differences y_j - x_i with the
 *    same construction on the Mann-Whitney U distribution.
 * Zeros and ties enter both the estimate and the interval as they are:
 * the interval inverts the test over shifts, where they do not occur. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "harness/stats/stats.h"
#include "harness/stats/stats_priv.h"

/* n(n+1)/2 Walsh averages or nx * ny differences are held in memory:
 * 16 MB at most. Benchmarks have tens of runs, not thousands. */
#define HL_MAX_TERMS (2u * 1000 * 1000)

/* Largest c with P(S <= c) <= alpha/2 (0 when even c = 0 exceeds it) and
 * the coverage 1 - 2 P(S <= c), from a pmf over 0 .. top. */
static void exact_cut(const double *pmf, size_t top, double alpha, size_t *ret_c, double *ret_cover) {
	size_t c = 0;
	double cdf = pmf[0];
	while (c + 1 <= top / 2 && cdf + pmf[c + 1] <= alpha / 2) {
		c++;
		cdf += pmf[c];
	}
	*ret_c = c;
	*ret_cover = 1 - 2 * cdf;
}

/* The same from a normal approximation with mean top/2 and sd. */
static void normal_cut(double top, double sd, double alpha, size_t *ret_c, double *ret_cover) {
	double mean = top / 2;
	double c = floor(mean - 0.5 - gsl_cdf_ugaussian_Qinv(alpha / 2) * sd);
	if (c < 0)
		c = 0;
	*ret_c = (size_t)c;
	*ret_cover = 1 - 2 * gsl_cdf_ugaussian_P((c + 0.5 - mean) / sd);
}

/* Sorts terms, takes the median and the interval trimmed by c per end. */
static void finish(double *terms, size_t count, size_t c, double cover, double *ret_est, double *ret_lo, double *ret_hi, double *ret_level) {
	qsort(terms, count, sizeof(*terms), stats_cmp_double);
	if (c > (count - 1) / 2)
		c = (count - 1) / 2;
	*ret_est = stats_median_sorted(terms, count);
	*ret_lo = terms[c];
	*ret_hi = terms[count - 1 - c];
	*ret_level = cover;
}

int stats_hl_paired(const double *d, size_t n, double conf, double *ret_est, double *ret_lo, double *ret_hi, double *ret_level) {
	if (!d || n == 0 || !(conf > 0 && conf < 1) || !stats_all_finite(d, n))
		return -EINVAL;
	if (n > HL_MAX_TERMS || n * (n + 1) / 2 > HL_MAX_TERMS)
		return -E2BIG;
	size_t count = n * (n + 1) / 2;
	double alpha = 1 - conf;
	size_t c;
	double cover;
	if (n < STATS_EXACT_LIMIT) {
		double *pmf;
		int r = stats_signrank_pmf((unsigned)n, &pmf);
		if (r < 0)
			return r;
		exact_cut(pmf, count, alpha, &c, &cover);
		free(pmf);
	} else {
		double fn = (double)n;
		normal_cut((double)count, sqrt(fn * (fn + 1) * (2 * fn + 1) / 24), alpha, &c, &cover);
	}

	double *walsh = malloc(count * sizeof(*walsh));
	if (!walsh)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			walsh[k++] = d[i] / 2 + d[j] / 2;  /* halves first: no overflow */
	finish(walsh, count, c, cover, ret_est, ret_lo, ret_hi, ret_level);
	free(walsh);
	return 0;
}

int stats_hl_shift(const double *x, size_t nx, const double *y, size_t ny, double conf, double *ret_est, double *ret_lo, double *ret_hi, double *ret_level) {
	if (!x || !y || nx == 0 || ny == 0 || !(conf > 0 && conf < 1))
		return -EINVAL;
	if (!stats_all_finite(x, nx) || !stats_all_finite(y, ny))
		return -EINVAL;
	if (nx > HL_MAX_TERMS || ny > HL_MAX_TERMS || nx * ny > HL_MAX_TERMS)
		return -E2BIG;
	size_t count = nx * ny;
	double alpha = 1 - conf;
	size_t c;
	double cover;
	if (nx < STATS_EXACT_LIMIT && ny < STATS_EXACT_LIMIT) {
		double *pmf;
		int r = stats_mw_pmf((unsigned)nx, (unsigned)ny, &pmf);
		if (r < 0)
			return r;
		exact_cut(pmf, count, alpha, &c, &cover);
		free(pmf);
	} else {
		double fx = (double)nx, fy = (double)ny;
		normal_cut((double)count, sqrt(fx * fy * (fx + fy + 1) / 12), alpha, &c, &cover);
	}

	double *diff = malloc(count * sizeof(*diff));
	if (!diff)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			diff[k++] = y[j] - x[i];
	finish(diff, count, c, cover, ret_est, ret_lo, ret_hi, ret_level);
	free(diff);
	return 0;
}
