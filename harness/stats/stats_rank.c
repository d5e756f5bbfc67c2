/* Rank tests written here (GSL has none): the exact null distributions of
 * the signed-rank and Mann-Whitney statistics by dynamic programming, the
 * normal approximations with scipy's tie and continuity corrections, and
 * Welch's t with GSL's t distribution.
 *
 * Method, matched against scipy 1.10 by tests/unit/test_stats_oracle.c:
 *  - Wilcoxon: zeros dropped first (zero_method="wilcox"), midranks of |d|.
 *    Exact when fewer than 50 non-zero differences remain and no |d| ties,
 *    otherwise normal with the tie-corrected variance and a continuity
 *    correction of 1/2 towards the mean (scipy correction=True). scipy
 *    itself falls back to the normal approximation whenever a zero is
 *    present and uses its exact table on tied data; kab instead runs the
 *    exact test on the remaining non-zero differences and never uses an
 *    exact table that ties make wrong.
 *  - Mann-Whitney: exact when both samples have fewer than 50 values and
 *    there are no ties (scipy's "auto" stops at 8), otherwise normal with
 *    the tie correction and use_continuity=True.
 *  - z is signed so that positive means the second sample (B) is larger:
 *    the corrected statistic for the normal approximation, the normal score
 *    of the exact p-value for exact tests, so both meet the same
 *    O'Brien-Fleming bounds on an adaptive look. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "harness/stats/stats.h"
#include "harness/stats/stats_priv.h"

/* Tables past these sizes would cost megabytes for no gain: the normal
 * approximation is used from 50 on anyway. */
#define SIGNRANK_TABLE_MAX 1000
#define MW_TABLE_MAX 100

bool stats_all_finite(const double *x, size_t n) {
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return false;
	return true;
}

int stats_cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_median_sorted(const double *x, size_t n) {
	if (n % 2)
		return x[n / 2];
	/* halves first: the sum of two values near DBL_MAX overflows */
	return x[n / 2 - 1] / 2 + x[n / 2] / 2;
}

double stats_z_from_p(double p, double sign) {
	if (isnan(p) || isnan(sign))
		return NAN;
	if (p >= 1 || sign == 0)
		return 0;
	double z = gsl_cdf_ugaussian_Qinv(p / 2);
	if (!isfinite(z))
		return NAN;
	return sign > 0 ? z : -z;
}

int stats_signrank_pmf(unsigned n, double **ret_pmf) {
	if (n > SIGNRANK_TABLE_MAX)
		return -E2BIG;
	size_t top = (size_t)n * (n + 1) / 2;
	double *p = calloc(top + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* Rank k joins W+ or not with probability 1/2 each. The values stay
	 * count / 2^k, exact in a double while the counts are below 2^53. */
	p[0] = 1;
	for (unsigned k = 1; k <= n; k++) {
		size_t hi = (size_t)k * (k + 1) / 2;
		for (size_t w = hi; w >= k; w--)
			p[w] = 0.5 * (p[w] + p[w - k]);
		for (size_t w = 0; w < k && w <= hi; w++)
			p[w] *= 0.5;
	}
	*ret_pmf = p;
	return 0;
}

double stats_signrank_cdf(unsigned n, unsigned w) {
	size_t top = (size_t)n * (n + 1) / 2;
	if (w >= top)
		return 1;
	double *p;
	if (stats_signrank_pmf(n, &p) < 0)
		return NAN;
	/* the lower tail summed from its small end keeps tiny p-values exact */
	double sum = 0;
	for (size_t i = 0; i <= w; i++)
		sum += p[i];
	free(p);
	return sum;
}

int stats_mw_pmf(unsigned m, unsigned n, double **ret_pmf) {
	if (m > MW_TABLE_MAX || n > MW_TABLE_MAX)
		return -E2BIG;
	/* The distribution is symmetric in the two sizes: iterate the longer. */
	unsigned small = m < n ? m : n, big = m < n ? n : m;
	size_t width = (size_t)small * big + 1;
	double *rows = calloc((size_t)(small + 1) * width, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	/* rows[i] holds P(U = u) for sizes (i, j) as j grows; U counts pairs
	 * where the i-side value is larger. The largest of all i + j values
	 * belongs to the i side with probability i/(i+j) and then beats all
	 * j others: f(i,j,u) = i/(i+j) f(i-1,j,u-j) + j/(i+j) f(i,j-1,u).
	 * Only additions of positive terms: no cancellation in the tails. */
	for (unsigned i = 0; i <= small; i++)
		rows[(size_t)i * width] = 1;
	for (unsigned j = 1; j <= big; j++) {
		for (unsigned i = 1; i <= small; i++) {
			double *cur = rows + (size_t)i * width;
			const double *prev = rows + (size_t)(i - 1) * width;
			double wi = (double)i / (i + j), wj = (double)j / (i + j);
			for (size_t u = 0; u <= (size_t)i * j; u++)
				cur[u] = wj * cur[u] + (u >= j ? wi * prev[u - j] : 0);
		}
	}
	double *pmf = malloc(width * sizeof(*pmf));
	if (!pmf) {
		free(rows);
		return -ENOMEM;
	}
	memcpy(pmf, rows + (size_t)small * width, width * sizeof(*pmf));
	free(rows);
	*ret_pmf = pmf;
	return 0;
}

double stats_mann_whitney_cdf(unsigned m, unsigned n, unsigned u) {
	if ((size_t)u >= (size_t)m * n)
		return 1;
	double *p;
	if (stats_mw_pmf(m, n, &p) < 0)
		return NAN;
	double sum = 0;
	for (size_t i = 0; i <= u; i++)
		sum += p[i];
	free(p);
	return sum;
}

struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b) {
	const struct ranked *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

int stats_midranks(const double *x, size_t n, double *ret_ranks, double *ret_tie_term) {
	if (n == 0) {
		*ret_tie_term = 0;
		return 0;
	}
	struct ranked *r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ x[i], i };
	qsort(r, n, sizeof(*r), cmp_ranked);
	double ties = 0;
	for (size_t lo = 0; lo < n;) {
		size_t hi = lo + 1;
		while (hi < n && r[hi].v == r[lo].v)
			hi++;
		double mid = (double)(lo + 1 + hi) / 2;  /* mean of ranks lo+1 .. hi */
		for (size_t k = lo; k < hi; k++)
			ret_ranks[r[k].i] = mid;
		double t = (double)(hi - lo);
		ties += t * t * t - t;
		lo = hi;
	}
	free(r);
	*ret_tie_term = ties;
	return 0;
}

static double sign_of(double x) {
	return (x > 0) - (x < 0);
}

int stats_wilcoxon(const double *d, size_t n, double *ret_w_plus, double *ret_p, bool *ret_exact, double *ret_z) {
	if (!d && n)
		return -EINVAL;
	if (!stats_all_finite(d, n))
		return -EINVAL;
	size_t used = 0;
	for (size_t i = 0; i < n; i++)
		used += d[i] != 0;
	if (used == 0) {
		/* nothing but zeros: no evidence of any shift */
		*ret_w_plus = 0;
		*ret_p = 1;
		*ret_exact = true;
		*ret_z = 0;
		return 0;
	}

	double *abs_d = malloc(used * sizeof(*abs_d));
	double *ranks = malloc(used * sizeof(*ranks));
	int r = -ENOMEM;
	if (!abs_d || !ranks)
		goto out;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			abs_d[k++] = fabs(d[i]);
	double tie_term;
	r = stats_midranks(abs_d, used, ranks, &tie_term);
	if (r < 0)
		goto out;
	double w_plus = 0;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0) {
			if (d[i] > 0)
				w_plus += ranks[k];
			k++;
		}

	double nu = (double)used, top = nu * (nu + 1) / 2, mean = top / 2;
	double p, z;
	bool exact = used < STATS_EXACT_LIMIT && tie_term == 0;
	if (exact) {
		/* untied ranks: W+ is an integer */
		unsigned w = (unsigned)w_plus, w_top = (unsigned)top;
		double tail = stats_signrank_cdf((unsigned)used, w < w_top - w ? w : w_top - w);
		if (isnan(tail)) {
			r = -ENOMEM;
			goto out;
		}
		p = fmin(1, 2 * tail);
		z = stats_z_from_p(p, sign_of(w_plus - mean));
	} else {
		double var = (nu * (nu + 1) * (2 * nu + 1) - tie_term / 2) / 24;
		double se = sqrt(var);
		double t = fmin(w_plus, top - w_plus);  /* scipy's statistic */
		double zz = (t - mean - 0.5 * sign_of(t - mean)) / se;
		p = fmin(1, 2 * gsl_cdf_ugaussian_Q(fabs(zz)));
		z = sign_of(w_plus - mean) * fabs(zz);
	}
	*ret_w_plus = w_plus;
	*ret_p = p;
	*ret_exact = exact;
	*ret_z = z;
	r = 0;
out:
	free(abs_d);
	free(ranks);
	return r;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u, double *ret_p, bool *ret_exact, double *ret_z) {
	if (!x || !y || nx == 0 || ny == 0)
		return -EINVAL;
	if (!stats_all_finite(x, nx) || !stats_all_finite(y, ny))
		return -EINVAL;
	size_t n = nx + ny;
	double *all = malloc(n * sizeof(*all)), *ranks = malloc(n * sizeof(*ranks));
	int r = -ENOMEM;
	if (!all || !ranks)
		goto out;
	memcpy(all, x, nx * sizeof(*x));
	memcpy(all + nx, y, ny * sizeof(*y));
	double tie_term;
	r = stats_midranks(all, n, ranks, &tie_term);
	if (r < 0)
		goto out;
	double rx = 0;
	for (size_t i = 0; i < nx; i++)
		rx += ranks[i];
	double fx = (double)nx, fy = (double)ny, fn = (double)n;
	double u_x = rx - fx * (fx + 1) / 2;  /* scipy's statistic: x above y */
	double u_y = fx * fy - u_x;
	double mean = fx * fy / 2, u_max = fmax(u_x, u_y);

	double p, z;
	bool exact = nx < STATS_EXACT_LIMIT && ny < STATS_EXACT_LIMIT && tie_term == 0;
	if (exact) {
		double tail = stats_mann_whitney_cdf((unsigned)nx, (unsigned)ny, (unsigned)fmin(u_x, u_y));
		if (isnan(tail)) {
			r = -ENOMEM;
			goto out;
		}
		p = fmin(1, 2 * tail);
		z = stats_z_from_p(p, sign_of(u_y - mean));
	} else {
		double s = sqrt(fx * fy / 12 * ((fn + 1) - tie_term / (fn * (fn - 1))));
		if (!(s > 0)) {
			/* every value equal: nothing to rank */
			p = 1;
			z = 0;
		} else {
			double zz = (u_max - mean - 0.5) / s;
			p = fmin(1, 2 * gsl_cdf_ugaussian_Q(zz));
			z = sign_of(u_y - mean) * fmax(zz, 0);
		}
	}
	*ret_u = u_x;
	*ret_p = p;
	*ret_exact = exact;
	*ret_z = z;
	r = 0;
out:
	free(all);
	free(ranks);
	return r;
}

/* Two-pass mean and sample variance: exact enough at 1e12 and 1e-9. */
static void mean_var(const double *x, size_t n, double *ret_mean, double *ret_var) {
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += (x[i] - mean) / (double)(i + 1);
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	*ret_mean = mean;
	*ret_var = n > 1 ? ss / (double)(n - 1) : NAN;
}

int stats_welch(const double *x, size_t nx, const double *y, size_t ny, double *ret_t, double *ret_df, double *ret_p) {
	if (!x || !y || nx < 2 || ny < 2)
		return -EINVAL;
	if (!stats_all_finite(x, nx) || !stats_all_finite(y, ny))
		return -EINVAL;
	double mx, vx, my, vy;
	mean_var(x, nx, &mx, &vx);
	mean_var(y, ny, &my, &vy);
	double sx = vx / (double)nx, sy = vy / (double)ny, se2 = sx + sy;
	if (!(se2 > 0)) {
		if (mx != my)
			return -ERANGE;  /* two different constants: t is infinite */
		*ret_t = 0;
		*ret_df = NAN;
		*ret_p = 1;
		return 0;
	}
	double t = (my - mx) / sqrt(se2);
	double df = se2 * se2 / (sx * sx / (double)(nx - 1) + sy * sy / (double)(ny - 1));
	if (!isfinite(t) || !isfinite(df))
		return -ERANGE;
	*ret_t = t;
	*ret_df = df;
	*ret_p = fmin(1, 2 * gsl_cdf_tdist_Q(fabs(t), df));
	return 0;
}
