/* Descriptive statistics, the A/B comparison behind a report row, the
 * verdict, Benjamini-Hochberg, Holm and the adaptive stopping rule (rules
 * 3-9 of doc/statistics.md). The rank tests are in stats_rank.c, the
 * Hodges-Lehmann intervals in stats_hl.c. */
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/stats/stats.h"
#include "harness/stats/stats_priv.h"
#include "harness/base/util.h"

#define DEFAULT_ALPHA 0.05
/* the equivalence test's two one-sided tests at 5% each: a 90% interval */
#define EQUIVALENCE_CONF 0.90
/* an exact interval's achieved coverage, compared with its nominal one */
#define LEVEL_SLACK 1e-9

static double finite_or_nan(double x) {
	return isfinite(x) ? x : NAN;
}

int stats_describe(const double *x, size_t n, struct stats_desc *ret) {
	if (!ret || (!x && n))
		return -EINVAL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += isfinite(x[i]) != 0;
	struct stats_desc s = {
		.n = k, .mean = NAN, .median = NAN, .stddev = NAN,
		.cov_pct = NAN, .min = NAN, .max = NAN,
	};
	if (k == 0) {
		*ret = s;
		return 0;
	}
	double *v = malloc(k * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]))
			v[k++] = x[i];
	qsort(v, k, sizeof(*v), stats_cmp_double);
	/* running mean: a plain sum of values near DBL_MAX would overflow */
	double mean = 0;
	for (size_t i = 0; i < k; i++)
		mean += (v[i] - mean) / (double)(i + 1);
	s.mean = mean;
	s.median = stats_median_sorted(v, k);
	s.min = v[0];
	s.max = v[k - 1];
	if (k > 1) {
		double ss = 0;
		for (size_t i = 0; i < k; i++)
			ss += (v[i] - mean) * (v[i] - mean);
		s.stddev = finite_or_nan(sqrt(ss / (double)(k - 1)));
		/* a constant series has no noise, even a constant 0 counter */
		if (s.stddev == 0)
			s.cov_pct = 0;
		else if (mean != 0)
			s.cov_pct = finite_or_nan(100 * s.stddev / fabs(mean));
	}
	free(v);
	*ret = s;
	return 0;
}

const char *stats_verdict_name(enum stats_verdict v) {
	switch (v) {
	case STATS_VERDICT_NONE: return "none";
	case STATS_VERDICT_BETTER: return "better";
	case STATS_VERDICT_WORSE: return "worse";
	case STATS_VERDICT_CHANGED: return "changed";
	case STATS_VERDICT_SAME: return "same";
	case STATS_VERDICT_UNDECIDED: return "undecided";
	}
	return "unknown";
}

/* "none" is a dash in UTF-8 tables but blank in ASCII, where "-" means
 * worse. */
const char *stats_verdict_marker(enum stats_verdict v, bool utf8) {
	switch (v) {
	case STATS_VERDICT_NONE: return utf8 ? "-" : "";
	case STATS_VERDICT_BETTER: return utf8 ? "\u25b2" : "+";
	case STATS_VERDICT_WORSE: return utf8 ? "\u25bc" : "-";
	case STATS_VERDICT_CHANGED: return utf8 ? "\u2260" : "*";
	case STATS_VERDICT_SAME: return "~";
	case STATS_VERDICT_UNDECIDED: return "?";
	}
	return "?";
}

const char *stats_test_name(enum stats_test t) {
	switch (t) {
	case STATS_TEST_NONE: return "none";
	case STATS_TEST_WILCOXON_EXACT: return "wilcoxon-signed-rank-exact";
	case STATS_TEST_WILCOXON_NORMAL: return "wilcoxon-signed-rank-normal";
	case STATS_TEST_MANN_WHITNEY_EXACT: return "mann-whitney-u-exact";
	case STATS_TEST_MANN_WHITNEY_NORMAL: return "mann-whitney-u-normal";
	case STATS_TEST_PERMUTATION_EXACT: return "permutation-runs-exact";
	case STATS_TEST_PERMUTATION_NORMAL: return "permutation-runs-normal";
	}
	return "unknown";
}

const char *stats_test_label(enum stats_test t)
{
	switch (t) {
	case STATS_TEST_NONE: return "no test";
	case STATS_TEST_WILCOXON_EXACT: return "exact Wilcoxon signed-rank on paired log ratios";
	case STATS_TEST_WILCOXON_NORMAL: return "Wilcoxon signed-rank, normal approximation (50 pairs or more)";
	case STATS_TEST_MANN_WHITNEY_EXACT: return "exact Mann-Whitney U (pairs broken by missing runs)";
	case STATS_TEST_MANN_WHITNEY_NORMAL: return "Mann-Whitney U, normal approximation (50 runs a side or more)";
	case STATS_TEST_PERMUTATION_EXACT: return "exact run-level permutation test (a zero in some run)";
	case STATS_TEST_PERMUTATION_NORMAL: return "run-level permutation test, normal approximation";
	}
	return "unknown";
}

/* Everything stats_compare works out before it fills the result. */
struct cmp {
	bool log_scale;
	double scale;           /* |median A|: the difference scale's 100% */
	double hl, lo, hi;      /* on the scale used; lo/hi NAN without a CI */
	double level;
	double lo90, hi90, level90;
	double p, z, min_p;
	enum stats_test test;
	size_t pairs;
	size_t replicates; /* pairs, or the smaller side's runs unpaired */
};

/* A shift on the scale used, in percent. On the difference scale a zero
 * baseline leaves percentages undefined, except for no shift at all. */
static double to_pct(bool log_scale, double scale, double x)
{
	if (isnan(x))
		return NAN;
	if (log_scale)
		return finite_or_nan(100 * expm1(x));
	if (x == 0)
		return 0;
	return scale > 0 ? finite_or_nan(100 * x / scale) : NAN;
}

/* The statistic an adaptive look compares with its O'Brien-Fleming bound.
 * A rank test's exact p is too coarse for that at 5 or 10 pairs (at 10,
 * |z| >= 2.862 needs W+ >= 54 of 55), so a look uses the paired t on the
 * differences, its p mapped to the normal scale: the statistic group
 * sequential bounds are made for. Stopping still needs the rank test's
 * verdict (p and the HL interval), so an outlier cannot stop a job alone.
 * Differences that are all the same fall back to the rank test's z. */
static double look_z(const double *d, size_t k, double rank_z) {
	if (k < 3)
		return rank_z;
	double mean = 0, ss = 0;
	for (size_t i = 0; i < k; i++)
		mean += d[i];
	mean /= (double)k;
	for (size_t i = 0; i < k; i++)
		ss += (d[i] - mean) * (d[i] - mean);
	double se = sqrt(ss / (double)(k - 1) / (double)k);
	double t = mean / se;
	if (!(se > 0) || !isfinite(t))
		return rank_z;
	double p = 2 * gsl_cdf_tdist_Q(fabs(t), (double)(k - 1));
	if (!(p > 0))
		return copysign(38, t); /* beyond any bound; Qinv(0) is inf */
	double z = gsl_cdf_ugaussian_Qinv(p / 2);
	return isfinite(z) ? copysign(z, t) : rank_z;
}

/* The paired Hodges-Lehmann estimate with its 1 - alpha and 90% intervals.
 * One pair gives an estimate and no interval. */
static int intervals_paired(const double *d, size_t k, double conf, struct cmp *c)
{
	if (k == 1) {
		c->hl = d[0];
		return 0;
	}
	double est, lo, hi, level;
	int r = stats_hl_paired(d, k, conf, &est, &lo, &hi, &level);
	if (r < 0)
		return r;
	c->hl = est;
	c->lo = lo;
	c->hi = hi;
	c->level = level;
	if ((r = stats_hl_paired(d, k, EQUIVALENCE_CONF, &est, &lo, &hi, &level)) < 0)
		return r;
	c->lo90 = lo;
	c->hi90 = hi;
	c->level90 = level;
	return 0;
}

/* The same for the two-sample shift; a one-against-one comparison has
 * intervals of coverage 0, which are left out. */
static int intervals_shift(const double *x, size_t nx, const double *y, size_t ny, double conf, struct cmp *c)
{
	double est, lo, hi, level;
	int r = stats_hl_shift(x, nx, y, ny, conf, &est, &lo, &hi, &level);
	if (r < 0)
		return r;
	c->hl = est;
	if (level > 0) {
		c->lo = lo;
		c->hi = hi;
		c->level = level;
	}
	if ((r = stats_hl_shift(x, nx, y, ny, EQUIVALENCE_CONF, &est, &lo, &hi, &level)) < 0)
		return r;
	if (level > 0) {
		c->lo90 = lo;
		c->hi90 = hi;
		c->level90 = level;
	}
	return 0;
}

/* Keeps the non-missing values of x. */
static size_t compact(const double *x, size_t n, double *out) {
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			out[k++] = x[i];
	return k;
}

/* Rule 5's run-level permutation test: every run of A against every run
 * of B, exact with midranks below 50 a side. */
static int permutation(const double *x, size_t nx, const double *y, size_t ny, struct cmp *c, double *ret_z)
{
	double u, p, z;
	bool exact;
	int r = stats_mann_whitney(x, nx, y, ny, &u, &p, &exact, &z);
	if (r < 0)
		return r;
	c->p = p;
	c->min_p = stats_mann_whitney_min_p(x, nx, y, ny);
	*ret_z = z;
	return exact;
}

/* Paired data. Log ratios: the exact signed-rank test on them.
 * Differences (a zero or a negative value in some run): the estimate and
 * intervals on the paired differences, the p of the run-level
 * permutation test. */
static int run_paired(const double *va, const double *vb, size_t n, double conf, struct cmp *c)
{
	double *d = malloc(n * sizeof(*d)), *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	int r = -ENOMEM;
	if (!d || !x || !y)
		goto out;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(va[i]) && !isnan(vb[i]))
			d[k++] = vb[i] - va[i];
	c->pairs = c->replicates = k;
	r = 0;
	if (!stats_all_finite(d, k)) {
		r = -ERANGE; /* ratios or differences beyond a double */
		goto out;
	}
	if ((r = intervals_paired(d, k, conf, c)) < 0 || k == 1)
		goto out;
	double rank_z;
	if (c->log_scale) {
		double w;
		bool exact;
		if ((r = stats_wilcoxon(d, k, &w, &c->p, &exact, &rank_z)) < 0)
			goto out;
		c->min_p = stats_wilcoxon_min_p(d, k);
		c->test = exact ? STATS_TEST_WILCOXON_EXACT : STATS_TEST_WILCOXON_NORMAL;
	} else {
		size_t nx = compact(va, n, x), ny = compact(vb, n, y);
		if ((r = permutation(x, nx, y, ny, c, &rank_z)) < 0)
			goto out;
		c->test = r ? STATS_TEST_PERMUTATION_EXACT : STATS_TEST_PERMUTATION_NORMAL;
		r = 0;
	}
	c->z = look_z(d, k, rank_z);
out:
	free(d);
	free(x);
	free(y);
	return r;
}

static int run_unpaired(const double *va, const double *vb, size_t n, double conf, struct cmp *c) {
	double *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	int r = -ENOMEM;
	if (!x || !y)
		goto out;
	size_t nx = compact(va, n, x), ny = compact(vb, n, y);
	c->replicates = nx < ny ? nx : ny;
	if ((r = intervals_shift(x, nx, y, ny, conf, c)) < 0)
		goto out;
	double z;
	if ((r = permutation(x, nx, y, ny, c, &z)) < 0)
		goto out;
	if (c->log_scale)
		c->test = r ? STATS_TEST_MANN_WHITNEY_EXACT : STATS_TEST_MANN_WHITNEY_NORMAL;
	else
		c->test = r ? STATS_TEST_PERMUTATION_EXACT : STATS_TEST_PERMUTATION_NORMAL;
	c->z = z;
	r = 0;
out:
	free(x);
	free(y);
	return r;
}

static int welch_on(const double *va, const double *vb, size_t n, double *ret_p) {
	double *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
	int r = -ENOMEM;
	if (!x || !y)
		goto out;
	size_t nx = compact(va, n, x), ny = compact(vb, n, y);
	double t, df;
	r = stats_welch(x, nx, y, ny, &t, &df, ret_p);
out:
	free(x);
	free(y);
	return r;
}

bool stats_testable(const struct stats_result *r, double alpha)
{
	return r && r->min_p < (alpha == 0 ? DEFAULT_ALPHA : alpha);
}

/* |shift| of at least min_change, on the scale used. From a zero baseline
 * any shift is an infinite percentage, so any non-zero one counts. */
static bool big_enough(const struct stats_result *r)
{
	if (r->log_scale)
		return fabs(100 * expm1(r->hl)) >= r->min_change_pct;
	if (r->scale > 0)
		return fabs(100 * r->hl / r->scale) >= r->min_change_pct;
	return r->hl != 0;
}

/* The equivalence margin +-Delta on the scale used: [ln(1 - D), ln(1 + D)]
 * for ratios, +-D |median A| for differences (with a zero baseline only an
 * interval of exactly [0, 0] is inside it). */
static bool inside_margin(const struct stats_result *r)
{
	double e = r->equivalence_pct / 100, lo, hi;
	if (r->log_scale) {
		lo = e < 1 ? log1p(-e) : -INFINITY;
		hi = log1p(e);
	} else {
		lo = -e * r->scale;
		hi = e * r->scale;
	}
	return r->ci90_lo >= lo && r->ci90_hi <= hi;
}

/* Rule 8. A change needs the test (p_used < alpha), an interval of its
 * full coverage clear of 0, a shift of at least min_change and at least
 * STATS_MIN_PAIRS replicates; "same" needs the 90% interval, at its full
 * coverage, inside the equivalence margin. Neither: undecided. */
enum stats_verdict stats_decide(const struct stats_result *r, double p_used, double alpha, enum direction dir)
{
	if (r->a.n == 0 || r->b.n == 0)
		return STATS_VERDICT_NONE;
	if (alpha == 0)
		alpha = DEFAULT_ALPHA;
	bool full = r->ci_level >= 1 - alpha - LEVEL_SLACK;
	bool up = r->ci_lo > 0, down = r->ci_hi < 0;
	if (r->replicates >= STATS_MIN_PAIRS && p_used < alpha && full && (up || down) && big_enough(r)) {
		switch (dir) {
		case DIRECTION_HIGHER: return up ? STATS_VERDICT_BETTER : STATS_VERDICT_WORSE;
		case DIRECTION_LOWER: return up ? STATS_VERDICT_WORSE : STATS_VERDICT_BETTER;
		case DIRECTION_NEUTRAL:
		case DIRECTION_UNSET: return STATS_VERDICT_CHANGED;
		}
		return STATS_VERDICT_CHANGED;
	}
	if (r->ci90_level >= EQUIVALENCE_CONF - LEVEL_SLACK && inside_margin(r))
		return STATS_VERDICT_SAME;
	return STATS_VERDICT_UNDECIDED;
}

/* Rule 5: log-ratios when every value on both sides is positive, so a
 * counter that stayed 0 compares by differences instead of giving NaN. */
static bool all_positive(const double *x, size_t n) {
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]) && !(x[i] > 0))
			return false;
	return true;
}

/* Missing runs become NAN, the only marker the tests look for. */
static void transform(const double *x, size_t n, bool log_scale, double *out) {
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			out[i] = NAN;
		else
			out[i] = log_scale ? log(x[i]) : x[i];
	}
}

static void fill_deltas(struct stats_result *res)
{
	res->delta_abs = finite_or_nan(res->b.mean - res->a.mean);
	/* no change is 0% even of a zero baseline (a counter that never moved) */
	if (res->delta_abs == 0)
		res->delta_pct = 0;
	else if (res->a.mean != 0)
		res->delta_pct = finite_or_nan(100 * res->delta_abs / fabs(res->a.mean));
}

static void fill_from(struct stats_result *res, const struct cmp *c)
{
	res->pairs = c->pairs;
	res->replicates = c->replicates;
	res->log_scale = c->log_scale;
	res->scale = c->scale;
	res->hl = finite_or_nan(c->hl);
	res->hl_pct = to_pct(c->log_scale, c->scale, c->hl);
	res->ci_lo = c->lo;
	res->ci_hi = c->hi;
	res->ci_low_pct = to_pct(c->log_scale, c->scale, c->lo);
	res->ci_high_pct = to_pct(c->log_scale, c->scale, c->hi);
	res->ci_level = finite_or_nan(c->level);
	res->ci90_lo = c->lo90;
	res->ci90_hi = c->hi90;
	res->ci90_low_pct = to_pct(c->log_scale, c->scale, c->lo90);
	res->ci90_high_pct = to_pct(c->log_scale, c->scale, c->hi90);
	res->ci90_level = finite_or_nan(c->level90);
	res->test = c->test;
	res->p_value = finite_or_nan(c->p);
	res->min_p = finite_or_nan(c->min_p);
	res->z = finite_or_nan(c->z);
}

int stats_compare(const struct stats_input *in, struct stats_result *ret) {
	if (!in || !ret || (in->n && (!in->a || !in->b)))
		return -EINVAL;
	double alpha = in->alpha == 0 ? DEFAULT_ALPHA : in->alpha;
	if (!(alpha > 0 && alpha < 1))
		return -EINVAL;

	struct stats_result res = {
		.delta_abs = NAN,
		.delta_pct = NAN,
		.hl = NAN,
		.hl_pct = NAN,
		.ci_low_pct = NAN,
		.ci_high_pct = NAN,
		.ci_level = NAN,
		.ci90_low_pct = NAN,
		.ci90_high_pct = NAN,
		.ci90_level = NAN,
		.ci_lo = NAN,
		.ci_hi = NAN,
		.ci90_lo = NAN,
		.ci90_hi = NAN,
		.scale = NAN,
		.test = STATS_TEST_NONE,
		.p_value = NAN,
		.min_p = NAN,
		.z = NAN,
		.welch_p = NAN,
		.q_value = NAN,
		.verdict = STATS_VERDICT_NONE,
		.min_change_pct = in->min_change_pct >= 0 ? in->min_change_pct : STATS_MIN_CHANGE_PCT,
		.equivalence_pct = in->equivalence_pct >= 0 ? in->equivalence_pct : STATS_EQUIVALENCE_PCT,
	};
	int r = stats_describe(in->a, in->n, &res.a);
	if (r < 0)
		return r;
	r = stats_describe(in->b, in->n, &res.b);
	if (r < 0)
		return r;
	if (res.a.n == 0 || res.b.n == 0) {
		*ret = res;
		return 0;
	}
	fill_deltas(&res);

	struct cmp c = {
		.log_scale = all_positive(in->a, in->n) && all_positive(in->b, in->n),
		.scale = fabs(res.a.median),
		.hl = NAN,
		.lo = NAN,
		.hi = NAN,
		.level = NAN,
		.lo90 = NAN,
		.hi90 = NAN,
		.level90 = NAN,
		.p = NAN,
		.z = NAN,
		.min_p = NAN,
		.test = STATS_TEST_NONE,
	};
	double *va = malloc(in->n * sizeof(*va)), *vb = malloc(in->n * sizeof(*vb));
	r = -ENOMEM;
	if (!va || !vb)
		goto out;
	transform(in->a, in->n, c.log_scale, va);
	transform(in->b, in->n, c.log_scale, vb);

	size_t pairs = 0;
	for (size_t i = 0; i < in->n; i++)
		pairs += !isnan(va[i]) && !isnan(vb[i]);
	/* Broken pairs: a few missing partners cost a few pairs; past a
	 * third of all runs the pairs left no longer represent the runs, and
	 * the unpaired test on every run is the honest one. */
	size_t runs = res.a.n + res.b.n, orphans = runs - 2 * pairs;
	double conf = 1 - alpha;
	if (pairs > 0 && 3 * orphans <= runs)
		r = run_paired(va, vb, in->n, conf, &c);
	else
		r = run_unpaired(va, vb, in->n, conf, &c);
	/* differences beyond a double: a row without a test, not an error */
	if (r < 0 && r != -ERANGE)
		goto out;

	double wp;
	if (welch_on(va, vb, in->n, &wp) >= 0)
		res.welch_p = wp;
	fill_from(&res, &c);
	res.verdict = stats_decide(&res, res.p_value, alpha, in->dir);
	*ret = res;
	r = 0;
out:
	free(va);
	free(vb);
	return r;
}

struct pq {
	double p;
	size_t i;
};

static int cmp_pq(const void *a, const void *b) {
	const struct pq *x = a, *y = b;
	return (x->p > y->p) - (x->p < y->p);
}

enum adjust_kind { ADJUST_BH, ADJUST_HOLM };

/* Multiple-testing adjustment of the non-NAN p-values, written into out
 * (which may be p itself: NANs are written last). */
static int adjust_p(const double *p, size_t n, enum adjust_kind kind, double *out) {
	if (n == 0)
		return 0;
	if (!p || !out)
		return -EINVAL;
	struct pq *v = malloc(n * sizeof(*v));
	double *adj = malloc(n * sizeof(*adj));
	if (!v || !adj) {
		free(v);
		free(adj);
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			v[m++] = (struct pq){ p[i], i };
	qsort(v, m, sizeof(*v), cmp_pq);
	if (kind == ADJUST_BH) {
		/* step-up: q_(i) = min over j >= i of m p_(j) / j, capped at 1 */
		double run = 1;
		for (size_t k = m; k-- > 0;) {
			run = fmin(run, v[k].p * (double)m / (double)(k + 1));
			v[k].p = run;
		}
	} else {
		/* step-down: adj_(i) = max over j <= i of (m - j + 1) p_(j), capped at 1 */
		double run = 0;
		for (size_t k = 0; k < m; k++) {
			run = fmax(run, fmin(1, v[k].p * (double)(m - k)));
			v[k].p = run;
		}
	}
	for (size_t i = 0; i < n; i++)
		adj[i] = NAN;
	for (size_t k = 0; k < m; k++)
		adj[v[k].i] = v[k].p;
	memcpy(out, adj, n * sizeof(*adj));
	free(adj);
	free(v);
	return 0;
}

int stats_bh(const double *p, size_t n, double *q_out) {
	return adjust_p(p, n, ADJUST_BH, q_out);
}

int stats_holm(const double *p, size_t n, double *adj_out) {
	return adjust_p(p, n, ADJUST_HOLM, adj_out);
}

int stats_bh_fill(struct stats_result *res, size_t n) {
	if (n == 0)
		return 0;
	if (!res)
		return -EINVAL;
	double *p = malloc(n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p[i] = res[i].p_value;
	int r = stats_bh(p, n, p);
	if (r >= 0)
		for (size_t i = 0; i < n; i++)
			res[i].q_value = p[i];
	free(p);
	return r;
}

/* O'Brien-Fleming bounds at two-sided alpha 0.05 have the shape
 * c sqrt(K / k). For K = 4 looks c = 2.024 (the published last bound), and
 * the table below is that shape rounded. Other K reuse c = 2.024: the exact
 * constant drifts a little with K (smaller for fewer looks, larger for
 * more), so those bounds are approximate, within about 1% of z for 2..6
 * looks. */
#define OBF_C4 2.024

double stats_obf_bound(unsigned look, unsigned n_looks) {
	static const double four[] = { 4.048, 2.862, 2.337, 2.024 };
	if (look == 0 || n_looks == 0 || look > n_looks)
		return NAN;
	if (n_looks == 4)
		return four[look - 1];
	return OBF_C4 * sqrt((double)n_looks / (double)look);
}

static bool ci_excludes_zero(const struct stats_result *r) {
	/* on the scale used: a zero baseline has no percent interval */
	return r->ci_lo > 0 || r->ci_hi < 0;
}

/* Rule 9: a look stops when every primary metric is decided (|z| beyond
 * the bound and a CI clear of 0) or "same"; a mix of both stops as
 * decided. No primary metrics: nothing to decide early, run the budget. */
enum stats_stop stats_adaptive_look(const struct stats_result *primary, size_t n, unsigned look, unsigned n_looks) {
	double bound = stats_obf_bound(look, n_looks);
	if (!primary || n == 0 || isnan(bound))
		return STATS_CONTINUE;
	size_t decided = 0, same = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stats_result *r = &primary[i];
		/* decided: past the bound, a CI clear of 0, and a verdict that
		 * says which way; stopping on an undecided row would only end
		 * the job early with nothing to report */
		bool verdict = r->verdict == STATS_VERDICT_BETTER || r->verdict == STATS_VERDICT_WORSE ||
			       r->verdict == STATS_VERDICT_CHANGED;
		if (fabs(r->z) >= bound && ci_excludes_zero(r) && verdict)
			decided++;
		else if (r->verdict == STATS_VERDICT_SAME)
			same++;
		else
			return STATS_CONTINUE;
	}
	return decided ? STATS_STOP_DECIDED : STATS_STOP_SAME;
}
