/* Rank tests written here (GSL has none): the exact permutation
 * distributions of the signed-rank and Mann-Whitney statistics, conditional
 * on the ties, by dynamic programming; the normal approximations with
 * scipy's tie and continuity corrections; the smallest p each test can
 * reach on given data (how a metric that can never reach p < alpha is left
 * out of the Benjamini-Hochberg family, doc/statistics.md rule 6); and Welch's t
 * with GSL's t distribution.
 *
 * Method (doc/statistics.md rule 5), matched against scipy 1.10 where scipy has the
 * test (tests/unit/test_stats_oracle.c) and against brute-force enumeration
 * on data with ties and zeros (tests/unit/test_stats_exact.c):
 *  - Wilcoxon: zeros dropped first (zero_method="wilcox"), midranks of |d|.
 *    Below 50 non-zero differences always exact: W+ over the 2^k equally
 *    likely sign flips of the midranks observed, a table over sums of
 *    doubled midranks (integers); p = min(1, 2 min(P(W+ <= w), P(W+ >= w))).
 *    Without ties that is scipy's exact table. With ties scipy has no exact
 *    test (its table is the untied one, wrong there), and its "auto" goes
 *    normal on any zero; kab stays exact on the non-zero differences. From
 *    50 on, normal with the tie-corrected variance and a continuity
 *    correction of 1/2 towards the mean (scipy correction=True).
 *  - Mann-Whitney: exact when both samples have fewer than 50 values (scipy's
 *    "auto" stops at 8, and at any tie): the smaller sample's midrank sum
 *    over the C(nx+ny, ny) equally likely splits of the pooled midranks, a
 *    table over (values picked, sum) of probabilities (the counts pass
 *    2^53); p twice the smaller tail, as above. From 50 a side, normal with
 *    the tie correction and use_continuity=True.
 *  - Smallest p: 2 / 2^k for the signed rank whatever the ties; for
 *    Mann-Whitney the more extreme end split (y holding the largest values,
 *    or the smallest), which C(t, u) of the C(n, m) splits make when a tie
 *    of t values crosses the border with u inside, so ties can keep it far
 *    above 2 / C(n, m). From 50 on, the normal approximation's p at the same
 *    extremes.
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

static double sign_of(double x)
{
	return (x > 0) - (x < 0);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* A midrank doubled is an integer (ranks lo..hi tied share (lo + hi) / 2),
 * so the exact distributions below are tables indexed by sums. */
static size_t doubled(double midrank)
{
	return (size_t)lround(2 * midrank);
}

/* Two-sided p of an exact distribution pmf[0..top] at the observed value:
 * twice the smaller tail, each tail summed from its far end so that a tiny
 * one keeps its digits. */
static double exact_two_sided(const double *pmf, size_t top, size_t obs)
{
	double lower = 0, upper = 0;
	for (size_t s = 0; s <= obs; s++)
		lower += pmf[s];
	for (size_t s = top + 1; s-- > obs;)
		upper += pmf[s];
	return fmin(1, 2 * fmin(lower, upper));
}

/* The exact conditional signed-rank test: with no shift, each of the 2^k
 * sign vectors over the doubled midranks r2 (all >= 2) is equally likely,
 * whatever the ties; w2 is the observed sum of the positive ones. Each
 * rank joins the sum with probability 1/2: the values stay count / 2^k,
 * exact in a double. */
static int signflip_p(const size_t *r2, size_t k, size_t w2, double *ret_p)
{
	size_t top = 0;
	for (size_t i = 0; i < k; i++)
		top += r2[i];
	double *pmf = calloc(top + 1, sizeof(*pmf));
	if (!pmf)
		return -ENOMEM;
	pmf[0] = 1;
	size_t reach = 0;
	for (size_t i = 0; i < k; i++) {
		size_t r = r2[i];
		reach += r;
		for (size_t s = reach; s >= r; s--)
			pmf[s] = 0.5 * (pmf[s] + pmf[s - r]);
		for (size_t s = 0; s < r; s++)
			pmf[s] *= 0.5;
	}
	*ret_p = exact_two_sided(pmf, top, w2);
	free(pmf);
	return 0;
}

/* The exact conditional Mann-Whitney test: with no shift, every way to
 * pick m of the n pooled doubled midranks r2 (ascending) is equally likely,
 * whatever the ties; s2 is the observed sum of the sample of size m.
 * Row j holds P(sum = s) for j ranks picked among the first i: the i-th
 * is in with probability j/i, so f_i(j, s) = j/i f_{i-1}(j-1, s - r_i) +
 * (i-j)/i f_{i-1}(j, s). Probabilities, not counts: C(98, 49) is far past
 * 2^53. Sorted ranks bound row j to the sums that j of the first i can
 * make, and rows that can no longer reach m are left: 49 against 49 takes
 * milliseconds. */
static int ranksum_p(const size_t *r2, size_t n, size_t m, size_t s2, double *ret_p)
{
	size_t *prefix = malloc((n + 1) * sizeof(*prefix));
	if (!prefix)
		return -ENOMEM;
	prefix[0] = 0;
	for (size_t i = 0; i < n; i++)
		prefix[i + 1] = prefix[i] + r2[i];
	size_t width = prefix[n] - prefix[n - m] + 1; /* up to the sum of the m largest */
	double *f = calloc((m + 1) * width, sizeof(*f));
	if (!f) {
		free(prefix);
		return -ENOMEM;
	}
	f[0] = 1;
	for (size_t i = 1; i <= n; i++) {
		size_t r = r2[i - 1];
		size_t j_hi = i < m ? i : m, j_lo = m + i > n ? m + i - n : 1;
		/* j descending: row j - 1 still holds the first i - 1 ranks */
		for (size_t j = j_hi; j >= j_lo; j--) {
			double *row = f + j * width;
			const double *fewer = f + (j - 1) * width;
			double take = (double)j / (double)i, leave = (double)(i - j) / (double)i;
			size_t lo = prefix[j], hi = prefix[i] - prefix[i - j];
			for (size_t s = lo; s <= hi; s++)
				row[s] = leave * row[s] + (s >= r ? take * fewer[s - r] : 0);
		}
	}
	*ret_p = exact_two_sided(f + m * width, width - 1, s2);
	free(f);
	free(prefix);
	return 0;
}

/* The exact p for the pooled midranks (x's first, then y's), on the rank
 * sum of the smaller sample, whose table is the narrower. */
static int mw_exact_p(const double *ranks, size_t nx, size_t ny, double *ret_p)
{
	size_t n = nx + ny, m = ny <= nx ? ny : nx, first = ny <= nx ? nx : 0;
	size_t *r2 = malloc(n * sizeof(*r2));
	if (!r2)
		return -ENOMEM;
	size_t s2 = 0;
	for (size_t i = 0; i < n; i++)
		r2[i] = doubled(ranks[i]);
	for (size_t i = first; i < first + m; i++)
		s2 += r2[i];
	qsort(r2, n, sizeof(*r2), cmp_size);
	int r = ranksum_p(r2, n, m, s2, ret_p);
	free(r2);
	return r;
}

/* scipy's normal approximation of the signed-rank test on k ranks: the
 * tie-corrected variance, a continuity correction of 1/2 towards the mean.
 * *ret_z is positive when W+ is above its mean. */
static double signrank_normal_p(double w_plus, double k, double tie_term, double *ret_z)
{
	double top = k * (k + 1) / 2, mean = top / 2;
	double se = sqrt((k * (k + 1) * (2 * k + 1) - tie_term / 2) / 24);
	double t = fmin(w_plus, top - w_plus); /* scipy's statistic */
	double zz = (t - mean - 0.5 * sign_of(t - mean)) / se;
	*ret_z = sign_of(w_plus - mean) * fabs(zz);
	return fmin(1, 2 * gsl_cdf_ugaussian_Q(fabs(zz)));
}

/* scipy's normal approximation of Mann-Whitney (tie correction,
 * use_continuity=True); *ret_z is positive when y is the larger. */
static double mw_normal_p(double u_x, double nx, double ny, double tie_term, double *ret_z)
{
	double n = nx + ny, mean = nx * ny / 2, u_y = nx * ny - u_x;
	double s = sqrt(nx * ny / 12 * ((n + 1) - tie_term / (n * (n - 1))));
	if (!(s > 0)) {
		/* every value equal: nothing to rank */
		*ret_z = 0;
		return 1;
	}
	double zz = (fmax(u_x, u_y) - mean - 0.5) / s;
	*ret_z = sign_of(u_y - mean) * fmax(zz, 0);
	return fmin(1, 2 * gsl_cdf_ugaussian_Q(zz));
}

static size_t count_nonzero(const double *d, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += d[i] != 0;
	return k;
}

/* The non-zero values of d[0..n) into ret_nz and their midranks by
 * absolute value into ret_ranks (both k long). */
static int rank_nonzero(const double *d, size_t n, double *ret_nz, double *ret_ranks, double *ret_tie_term)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			ret_nz[k++] = d[i];
	double *abs_d = malloc(k * sizeof(*abs_d));
	if (!abs_d)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++)
		abs_d[i] = fabs(ret_nz[i]);
	int r = stats_midranks(abs_d, k, ret_ranks, ret_tie_term);
	free(abs_d);
	return r;
}

int stats_wilcoxon(const double *d, size_t n, double *ret_w_plus, double *ret_p, bool *ret_exact, double *ret_z)
{
	if (!d && n)
		return -EINVAL;
	if (!stats_all_finite(d, n))
		return -EINVAL;
	size_t used = count_nonzero(d, n);
	if (used == 0) {
		/* nothing but zeros: no evidence of any shift */
		*ret_w_plus = 0;
		*ret_p = 1;
		*ret_exact = true;
		*ret_z = 0;
		return 0;
	}

	double *nz = malloc(used * sizeof(*nz)), *ranks = malloc(used * sizeof(*ranks));
	size_t *r2 = malloc(used * sizeof(*r2));
	int r = -ENOMEM;
	if (!nz || !ranks || !r2)
		goto out;
	double tie_term;
	r = rank_nonzero(d, n, nz, ranks, &tie_term);
	if (r < 0)
		goto out;
	double w_plus = 0;
	size_t w2 = 0;
	for (size_t i = 0; i < used; i++) {
		r2[i] = doubled(ranks[i]);
		if (nz[i] > 0) {
			w_plus += ranks[i];
			w2 += r2[i];
		}
	}

	double nu = (double)used, mean = nu * (nu + 1) / 4;
	double p, z;
	bool exact = used < STATS_EXACT_LIMIT;
	if (exact) {
		r = signflip_p(r2, used, w2, &p);
		if (r < 0)
			goto out;
		z = stats_z_from_p(p, sign_of(w_plus - mean));
	} else {
		p = signrank_normal_p(w_plus, nu, tie_term, &z);
	}
	*ret_w_plus = w_plus;
	*ret_p = p;
	*ret_exact = exact;
	*ret_z = z;
	r = 0;
out:
	free(nz);
	free(ranks);
	free(r2);
	return r;
}

double stats_wilcoxon_min_p(const double *d, size_t n)
{
	if ((!d && n) || !stats_all_finite(d, n))
		return NAN;
	size_t used = count_nonzero(d, n);
	if (used == 0)
		return NAN;
	/* every sign one way: one sign vector of the 2^k at either end */
	if (used < STATS_EXACT_LIMIT)
		return fmin(1, ldexp(1, 1 - (int)used));
	double *nz = malloc(used * sizeof(*nz)), *ranks = malloc(used * sizeof(*ranks));
	double p = NAN, tie_term, z, nu = (double)used;
	if (nz && ranks && rank_nonzero(d, n, nz, ranks, &tie_term) == 0)
		p = signrank_normal_p(nu * (nu + 1) / 2, nu, tie_term, &z);
	free(nz);
	free(ranks);
	return p;
}

int stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, double *ret_u, double *ret_p,
		       bool *ret_exact, double *ret_z)
{
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
	double fx = (double)nx, fy = (double)ny;
	double u_x = rx - fx * (fx + 1) / 2; /* scipy's statistic: x above y */
	double u_y = fx * fy - u_x;

	double p, z;
	bool exact = nx < STATS_EXACT_LIMIT && ny < STATS_EXACT_LIMIT;
	if (exact) {
		r = mw_exact_p(ranks, nx, ny, &p);
		if (r < 0)
			goto out;
		z = stats_z_from_p(p, sign_of(u_y - fx * fy / 2));
	} else {
		p = mw_normal_p(u_x, fx, fy, tie_term, &z);
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

/* C(n, k) as a double: exact while it is below 2^53, since every partial
 * product is itself a binomial coefficient. */
static double choose(size_t n, size_t k)
{
	double c = 1;
	for (size_t i = 1; i <= k; i++)
		c = c * (double)(n - k + i) / (double)i;
	return c;
}

/* P(a random m of the ascending pooled values s[0..n) are its m largest
 * (top) or its m smallest): 1 / C(n, m), or C(t, u) / C(n, m) when a tie
 * of t values crosses the border with u of them inside, since any u of
 * the t make the same ranks. */
static double end_prob(const double *s, size_t n, size_t m, bool top)
{
	double v = s[top ? n - m : m - 1];
	size_t t = 0, u = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == v) {
			t++;
			u += top ? i >= n - m : i < m;
		}
	return choose(t, u) / choose(n, m);
}

double stats_mann_whitney_min_p(const double *x, size_t nx, const double *y, size_t ny)
{
	if (!x || !y || nx == 0 || ny == 0 || !stats_all_finite(x, nx) || !stats_all_finite(y, ny))
		return NAN;
	size_t n = nx + ny;
	double *s = malloc(n * sizeof(*s)), *ranks = malloc(n * sizeof(*ranks));
	double p = NAN, tie_term, z;
	if (!s || !ranks)
		goto out;
	memcpy(s, x, nx * sizeof(*x));
	memcpy(s + nx, y, ny * sizeof(*y));
	qsort(s, n, sizeof(*s), stats_cmp_double);
	/* the most extreme splits: y holding the largest values, or the smallest */
	if (nx < STATS_EXACT_LIMIT && ny < STATS_EXACT_LIMIT) {
		p = fmin(1, 2 * fmin(end_prob(s, n, ny, true), end_prob(s, n, ny, false)));
		goto out;
	}
	if (stats_midranks(s, n, ranks, &tie_term) < 0)
		goto out;
	double fx = (double)nx, fy = (double)ny, r_low = 0, r_high = 0, base = fy * (fy + 1) / 2;
	for (size_t i = 0; i < ny; i++) {
		r_low += ranks[i];
		r_high += ranks[n - 1 - i];
	}
	p = fmin(mw_normal_p(fx * fy - (r_high - base), fx, fy, tie_term, &z),
		 mw_normal_p(fx * fy - (r_low - base), fx, fy, tie_term, &z));
out:
	free(s);
	free(ranks);
	return p;
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
