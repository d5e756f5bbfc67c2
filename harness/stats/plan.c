/* The power of kab's verdict by simulation (plan.h): draws of N pairs from
 * a calibration's noise, an injected effect, stats_compare's verdict. */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/stats/plan.h"
#include "harness/stats/stats_priv.h"

#define EFFECT_MAX 1.0
#define EFFECT_TOL 0.0005

/* A smoothed-bootstrap pool: draws are mean + scale (x_k - mean + h z). */
struct pool {
	double *x;
	size_t n;
	double mean, h, scale;
};

static void pool_free(struct pool *p)
{
	free(p->x);
	p->x = NULL;
}

static double quantile_sorted(const double *x, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double f = pos - (double)i;
	return i + 1 < n ? x[i] + f * (x[i + 1] - x[i]) : x[n - 1];
}

/* Silverman's rule of thumb for the kernel, then the scale that keeps the
 * draws' variance at the sample's: picking a value has the variance
 * (n-1)/n s^2, the kernel adds h^2. centre: subtract the mean (the A/A's
 * log-ratios are noise around no change). */
static int pool_init(struct pool *p, const double *x, size_t n, bool log_values, bool centre, double inflate)
{
	*p = (struct pool){ 0 };
	p->x = malloc(n * sizeof(*p->x));
	if (!p->x)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p->x[i] = log_values ? log(x[i]) : x[i];
	p->n = n;
	double mean = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		mean += p->x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (p->x[i] - mean) * (p->x[i] - mean);
	double s = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	if (centre) {
		for (size_t i = 0; i < n; i++)
			p->x[i] -= mean;
		mean = 0;
	}
	p->mean = mean;
	double *sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {
		pool_free(p);
		return -ENOMEM;
	}
	memcpy(sorted, p->x, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), stats_cmp_double);
	double iqr = quantile_sorted(sorted, n, 0.75) - quantile_sorted(sorted, n, 0.25);
	free(sorted);
	double spread = iqr > 0 ? fmin(s, iqr / 1.34) : s;
	p->h = 0.9 * spread * pow((double)n, -0.2);
	double var = ss / (double)n + p->h * p->h;
	p->scale = (var > 0 ? s / sqrt(var) : 0) * (inflate > 0 ? inflate : 1);
	return 0;
}

/* The j-th value, its kernel and the rescaling around the mean. */
static double pool_draw(const struct pool *p, size_t j, gsl_rng *rng)
{
	double z = gsl_ran_gaussian_ziggurat(rng, 1.0);
	return p->mean + p->scale * (p->x[j] - p->mean + p->h * z);
}

static bool all_positive_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || !(x[i] > 0))
			return false;
	return true;
}

static int check_noise(const struct plan_noise *nz)
{
	if (!nz || !nz->a || !nz->b || nz->n < 2)
		return -EINVAL;
	if (!all_positive_finite(nz->a, nz->n) || !all_positive_finite(nz->b, nz->n))
		return -EINVAL;
	return 0;
}

/* Both ways round: runs[j] for j < n is A_j, else B_(j-n); d[j] is the
 * log-ratio of the pair with runs[j] as its A. */
static int both_ways(const struct plan_noise *nz, double **ret_runs, double **ret_d)
{
	size_t n = nz->n;
	double *runs = malloc(2 * n * sizeof(*runs)), *d = malloc(2 * n * sizeof(*d));
	if (!runs || !d) {
		free(runs);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		runs[i] = nz->a[i];
		runs[n + i] = nz->b[i];
		d[i] = log(nz->b[i] / nz->a[i]);
		d[n + i] = -d[i];
	}
	*ret_runs = runs;
	*ret_d = d;
	return 0;
}

double plan_upper_factor(size_t n, double conf)
{
	if (n < 2 || !(conf > 0 && conf < 1))
		return NAN;
	double df = (double)(n - 1);
	return sqrt(df / gsl_cdf_chisq_Pinv(1 - conf, df));
}

int plan_summarize(const struct plan_noise *nz, struct plan_summary *ret)
{
	int r = check_noise(nz);
	if (r < 0)
		return r;
	double *runs, *d;
	if ((r = both_ways(nz, &runs, &d)) < 0)
		return r;
	struct stats_desc dd, bd;
	/* the log-ratios one way round: the SD of the pairs as measured */
	if ((r = stats_describe(d, nz->n, &dd)) < 0 || (r = stats_describe(runs, 2 * nz->n, &bd)) < 0)
		goto out;
	struct plan_summary s = {
		.pairs = nz->n,
		.d_sd = dd.stddev,
		.noise_pct = 100 * expm1(dd.stddev),
		.base_cov_pct = bd.cov_pct,
	};
	s.min_change_pct = nz->min_change_pct >= 0 ? nz->min_change_pct : STATS_MIN_CHANGE_PCT;
	s.equivalence_pct = nz->equivalence_pct >= 0 ? nz->equivalence_pct : STATS_EQUIVALENCE_PCT;
	*ret = s;
out:
	free(runs);
	free(d);
	return r;
}

/* Whether a verdict found a positive effect (B above A). */
static bool found(const struct stats_result *res, enum direction dir)
{
	switch (dir) {
	case DIRECTION_HIGHER: return res->verdict == STATS_VERDICT_BETTER;
	case DIRECTION_LOWER: return res->verdict == STATS_VERDICT_WORSE;
	case DIRECTION_NEUTRAL:
	case DIRECTION_UNSET: return res->verdict == STATS_VERDICT_CHANGED && res->hl_pct > 0;
	}
	return false;
}

int plan_power(const struct plan_noise *nz, unsigned pairs, double effect, double *ret_power)
{
	int r = check_noise(nz);
	if (r < 0)
		return r;
	if (pairs < 1 || pairs > 10 * PLAN_PAIRS_MAX || !(effect > -1) || !ret_power)
		return -EINVAL;
	unsigned sims = nz->sims ? nz->sims : PLAN_DEFAULT_SIMS;
	uint64_t seed = nz->seed ? nz->seed : PLAN_DEFAULT_SEED;
	struct pool pb = { 0 }, pd = { 0 };
	double *runs = NULL, *d = NULL;
	double *a = malloc(pairs * sizeof(*a)), *b = malloc(pairs * sizeof(*b));
	/* a stream of its own per pair count, the same for every effect */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	r = -ENOMEM;
	if (!a || !b || !rng)
		goto out;
	if ((r = both_ways(nz, &runs, &d)) < 0 ||
	    (r = pool_init(&pb, runs, 2 * nz->n, true, false, nz->base_inflate)) < 0 ||
	    (r = pool_init(&pd, d, 2 * nz->n, false, true, nz->d_inflate)) < 0)
		goto out;
	gsl_rng_set(rng, (unsigned long)(seed * 1000003u + pairs));
	double shift = log1p(effect);
	unsigned hits = 0;
	for (unsigned s = 0; s < sims; s++) {
		for (unsigned i = 0; i < pairs; i++) {
			/* one calibration pair, one way round: its A and its log-ratio */
			size_t j = gsl_rng_uniform_int(rng, 2 * nz->n);
			a[i] = exp(pool_draw(&pb, j, rng));
			b[i] = a[i] * exp(pool_draw(&pd, j, rng) + shift);
		}
		struct stats_input in = {
			.a = a,
			.b = b,
			.n = pairs,
			.dir = nz->dir,
			.min_change_pct = nz->min_change_pct,
			.equivalence_pct = nz->equivalence_pct,
		};
		struct stats_result res;
		if ((r = stats_compare(&in, &res)) < 0)
			goto out;
		hits += found(&res, nz->dir);
	}
	*ret_power = (double)hits / (double)sims;
	r = 0;
out:
	pool_free(&pb);
	pool_free(&pd);
	free(runs);
	free(d);
	gsl_rng_free(rng);
	free(a);
	free(b);
	return r;
}

int plan_min_effect(const struct plan_noise *nz, unsigned pairs, double target, double *ret_effect)
{
	if (!(target > 0 && target <= 1) || !ret_effect)
		return -EINVAL;
	double pw;
	int r = plan_power(nz, pairs, EFFECT_MAX, &pw);
	if (r < 0)
		return r;
	if (pw < target) {
		*ret_effect = NAN;
		return 0;
	}
	/* power grows with the effect on common draws: bisection */
	double lo = 0, hi = EFFECT_MAX;
	while (hi - lo > EFFECT_TOL) {
		double mid = (lo + hi) / 2;
		if ((r = plan_power(nz, pairs, mid, &pw)) < 0)
			return r;
		if (pw >= target)
			hi = mid;
		else
			lo = mid;
	}
	*ret_effect = hi;
	return 0;
}

int plan_pairs_for(const struct plan_noise *nz, double effect, double target, unsigned max_pairs,
		   unsigned *ret_pairs, double *ret_power)
{
	if (!(target > 0 && target <= 1) || !ret_pairs || !ret_power || max_pairs < PLAN_MIN_DECIDING_PAIRS)
		return -EINVAL;
	/* doubling to a pair count that is enough, then bisection below it:
	 * power is not strictly monotone in the pairs (the exact test's steps),
	 * so the answer is a count that reaches the target, close to the fewest */
	unsigned lo = PLAN_MIN_DECIDING_PAIRS - 1, hi = PLAN_MIN_DECIDING_PAIRS;
	double pw, hi_pw = 0;
	int r;
	for (;;) {
		if ((r = plan_power(nz, hi, effect, &pw)) < 0)
			return r;
		if (pw >= target) {
			hi_pw = pw;
			break;
		}
		if (hi == max_pairs) {
			*ret_pairs = 0;
			*ret_power = pw;
			return 0;
		}
		lo = hi;
		hi = 2 * hi > max_pairs ? max_pairs : 2 * hi;
	}
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		if ((r = plan_power(nz, mid, effect, &pw)) < 0)
			return r;
		if (pw >= target) {
			hi = mid;
			hi_pw = pw;
		} else {
			lo = mid;
		}
	}
	*ret_pairs = hi;
	*ret_power = hi_pw;
	return 0;
}
