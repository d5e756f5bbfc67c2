/* Change points of a nightly history (changepoint.h).
 *
 * The method is Hunter's, now Apache Otava's (Fleming et al., "Hunter:
 * Using Change Point Detection to Hunt for Performance Regressions", ICPE
 * 2023): E-divisive means (Matteson & James, JASA 2014) run over sliding
 * windows, with a t-test in place of E-divisive's permutation test, then
 * a merge that keeps only the points that stay significant against their
 * neighbours. The permutation test draws random numbers, so two runs over
 * the same history can disagree (Otava's users asked for a deterministic
 * variant); a t-test on the segments gives the same answer every time.
 * The t-test is Yuen's (Biometrika 1974): Welch's test on 20%-trimmed
 * means, with winsorized variances (below, why).
 *
 * 1. Split. Windows of 2w nights, [s, s + 2w), from s = 0. In each, the
 *    E-divisive bisection: every segment of the window (cut at the points
 *    found in it so far) of at least 2m nights proposes the split tau and
 *    end kappa that maximize the energy statistic
 *      Q = 2/(n1+n2) sum|X-Y| - 2 n2/((n1+n2)(n1-1)) sum_{i<k}|Xi-Xk|
 *                             - 2 n1/((n1+n2)(n2-1)) sum_{j<k}|Yj-Yk|
 *    of X = [start, tau), Y = [tau, kappa), n1 = |X| >= m, n2 = |Y| >= m
 *    (distance exponent 1, as in Otava and the paper's default). The
 *    proposal with the largest Q is tested between [start, tau) and
 *    [tau, segment end), as Otava does, and kept if p reaches the weak
 *    level, 10 alpha (Otava's), at most 0.5 and at least alpha; the first
 *    proposal that fails ends the window. The next window starts w nights
 *    on, or at the window's last point if that is later.
 * 2. Merge. The points of all windows (the weak points) are each judged
 *    by the test of [max(previous point, p - w), p) against
 *    [p, min(next point, p + w)); a point with fewer than m nights on a
 *    side (two windows can find neighbouring nights) has p = 1. While the
 *    largest p exceeds alpha, that point goes and its two neighbours are
 *    judged again. What remains is reported, with those segments.
 * Ties (a flat stretch, integer counters) go to the first candidate, in
 * the order of tau then kappa, segments and points by position, among
 * those within a relative 1e-9 of the best, and a p within a relative
 * 1e-9 above a level reaches it: the same choices whatever the last
 * digits of the sums, which differ with summation order and libm.
 *
 * Single outliers. The energy statistic is blind to one: for a value S
 * beyond the data's range, its distances to X and to the rest of Y
 * cancel in Q. Student's pooled t-test, which Otava uses, is not: the
 * outlier's variance is spread over both segments, and with it in a
 * short segment t grows like sqrt(N/2) with the other segment's N nights
 * (p < 1e-3 for N = 30). Welch's test is safe from false points (one
 * outlier moves its segment's mean by about S/k and the standard error by
 * about S/k too, so t stays near 1), but its variance swallows real
 * steps: of 150 steps of 5-20% with a spike within 8 nights, Welch's test
 * found 16, Yuen's 119. Yuen's test trims g = floor(n/5) nights from each
 * end of a segment, so a spike is not in the means it compares; in a
 * segment of 4 or fewer nothing is trimmed and Welch's bound holds. The
 * means reported are the plain ones and the trimmed ones beside them.
 *
 * The parameters and why (measured with tests/stats/check_changepoint.sh
 * and on a second set of 620 histories drawn with another seed):
 *  - alpha = 1e-4. The split tested is the best of ~50 positions, so its
 *    p is smaller than a fixed split's would be. At Otava's 1e-3, flat
 *    noise gave 0.87 false points per 1000 nights (over 60,000) and short
 *    excursions of noise beside real steps passed as points (precision
 *    0.81 on the second set); at 1e-4 the flat rate is 0.12 per 1000 and
 *    precision 0.93 (0.95 in the suite), for a loss of recall only on
 *    steps smaller than about 1.7 x the noise. A lab's 200 metrics over a
 *    year are 73,000 metric-nights, and every point costs a confirming
 *    A/B.
 *  - min_segment = 4 (the test needs 2 a side to have a variance). A run
 *    of up to three outlying nights cannot be a segment of its own: with
 *    one ordinary night beside them the t is at most 3 with ~3 degrees of
 *    freedom (p > 0.05); with 3, three nights that happened to lie close
 *    together made false points. The price is latency: a step at the end
 *    of a history is found 7 nights after it when it is 10 sd (40 of 40),
 *    8 nights after when 5 sd (97%), 4 nights after in 72% / 38%.
 *  - window = 30 nights each side, a month: the mean difference of two
 *    30-night segments has a standard error of 0.26 sd, so a 1.5 sd shift
 *    reaches t = 5.8. Judging a point on its own month keeps a change
 *    from last March judged on March's nights, and a slow drift from
 *    adding up over a year into one significant split. The search costs
 *    O(w^2) per window, O(n w) for a history.
 * What it misses: an excursion that returns to the old level within about
 * 12 nights is judged against all the nights after it in the window and
 * is mostly not found (8 nights at 5 sd: 15%). Testing the energy
 * statistic's own [tau, kappa) instead finds it (90%) but made 8 times
 * the false points on flat noise (0.9 per 1000 nights).
 * The input is scaled by a power of two (exact) so that sums of distances
 * and squares neither overflow near DBL_MAX nor underflow near 0. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "harness/stats/changepoint.h"
#include "harness/base/util.h"

#define CP_TIE 1e-9
/* Yuen's test trims 20% of each segment from each end (Wilcox's advice) */
#define CP_TRIM_NUM 1
#define CP_TRIM_DEN 5
#define CP_WEAK_FACTOR 10.0
#define CP_WEAK_MAX 0.5

struct cp_ctx {
	const double *y; /* the input scaled by 2^-scale */
	size_t n, m, w;
	double alpha, weak;
	double *scratch; /* 2w values, for sorting a segment */
};

/* A sorted set of nights, for the points of the split and the merge. */
struct cp_set {
	size_t *v;
	size_t n, cap;
};

static int set_insert(struct cp_set *s, size_t night)
{
	size_t i = 0;
	while (i < s->n && s->v[i] < night)
		i++;
	if (i < s->n && s->v[i] == night)
		return 0;
	if (util_grow(s->v, s->cap, s->n + 1, 16) < 0)
		return -ENOMEM;
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = night;
	s->n++;
	return 0;
}

/* The tie rule: a caller finds the largest value best in a first pass,
 * then takes the first value this accepts in a second. */
static bool near_best(double value, double best)
{
	return value >= best - CP_TIE * fabs(best);
}

/* Whether p reaches level: a p equal to it in exact arithmetic (integer
 * counters give such p) counts whatever its last digits. */
static bool reaches(double p, double level)
{
	return p <= level * (1 + CP_TIE);
}

/* One side of Yuen's test: its plain mean, its trimmed mean and the
 * squared standard error of that, from h = n - 2g trimmed values. */
struct side {
	double mean, tmean, d;
	size_t h;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* y[lo..hi), at least 2 values; scratch holds hi - lo. g = floor(n/5)
 * values go from each end (trimmed mean); the winsorized sum of squares
 * (each of them replaced by the nearest kept value) over h (h - 1) is
 * the trimmed mean's squared standard error. */
static struct side side_stats(const double *y, size_t lo, size_t hi, double *scratch)
{
	size_t n = hi - lo, g = n * CP_TRIM_NUM / CP_TRIM_DEN, h = n - 2 * g;
	memcpy(scratch, y + lo, n * sizeof(*scratch));
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	struct side r = { .h = h };
	double sum = 0, tsum = 0, wsum = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		sum += y[lo + i];
	for (size_t i = g; i < n - g; i++)
		tsum += scratch[i];
	for (size_t i = 0; i < n; i++)
		wsum += scratch[i < g ? g : i >= n - g ? n - g - 1 : i];
	double wmean = wsum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double w = scratch[i < g ? g : i >= n - g ? n - g - 1 : i] - wmean;
		ss += w * w;
	}
	r.mean = sum / (double)n;
	r.tmean = tsum / (double)h;
	r.d = h > 1 ? ss / ((double)h * (double)(h - 1)) : 0;
	return r;
}

struct test {
	struct side before, after;
	double t, p;
};

/* Yuen's test of y[mid..hi) against y[lo..mid), both at least 2 long. */
static struct test yuen(const double *y, size_t lo, size_t mid, size_t hi, double *scratch)
{
	struct test r = { .before = side_stats(y, lo, mid, scratch), .after = side_stats(y, mid, hi, scratch) };
	double da = r.before.d, db = r.after.d, se2 = da + db;
	double diff = r.after.tmean - r.before.tmean;
	if (se2 == 0) {
		/* the kept values are constant on both sides: equal, or as
		 * different as can be */
		r.t = diff == 0 ? 0 : copysign(INFINITY, diff);
		r.p = diff == 0 ? 1 : 0;
		return r;
	}
	r.t = diff / sqrt(se2);
	double df = se2 * se2 / (da * da / (double)(r.before.h - 1) + db * db / (double)(r.after.h - 1));
	r.p = fmin(1, 2 * gsl_cdf_tdist_Q(fabs(r.t), df));
	return r;
}

/* The sums of pairwise distances inside every stretch [a, b) of one
 * window's z[0..len): within[a * (len + 1) + b]. */
struct cp_energy {
	double *within;
	size_t len;
};

static double within(const struct cp_energy *e, size_t a, size_t b)
{
	return e->within[a * (e->len + 1) + b];
}

/* within(a, b) = within(a, b - 1) + the distances of z[b - 1] to
 * z[a .. b - 1), summed from a = b - 1 down: O(len^2). */
static int energy_init(struct cp_energy *e, const double *z, size_t len)
{
	e->len = len;
	e->within = calloc((len + 1) * (len + 1), sizeof(double));
	if (!e->within)
		return -ENOMEM;
	size_t stride = len + 1;
	for (size_t b = 2; b <= len; b++) {
		double to_last = 0;
		for (size_t a = b - 1; a-- > 0;) {
			to_last += fabs(z[a] - z[b - 1]);
			e->within[a * stride + b] = e->within[a * stride + b - 1] + to_last;
		}
	}
	return 0;
}

static double energy_q(const struct cp_energy *e, size_t a, size_t tau, size_t kappa)
{
	double n1 = (double)(tau - a), n2 = (double)(kappa - tau), sum = n1 + n2;
	double wx = within(e, a, tau), wy = within(e, tau, kappa);
	double cross = within(e, a, kappa) - wx - wy;
	return 2 / sum * cross - 2 * n2 / (sum * (n1 - 1)) * wx - 2 * n1 / (sum * (n2 - 1)) * wy;
}

/* A segment's proposal: the best tau of [a, b) and its Q. */
struct proposal {
	size_t tau;
	double q;
};

static struct proposal best_split(const struct cp_energy *e, size_t a, size_t b, size_t m)
{
	double top = -INFINITY;
	for (size_t tau = a + m; tau + m <= b; tau++)
		for (size_t kappa = tau + m; kappa <= b; kappa++)
			top = fmax(top, energy_q(e, a, tau, kappa));
	for (size_t tau = a + m; tau + m <= b; tau++)
		for (size_t kappa = tau + m; kappa <= b; kappa++) {
			double q = energy_q(e, a, tau, kappa);
			if (near_best(q, top))
				return (struct proposal){ .tau = tau, .q = q };
		}
	return (struct proposal){ .tau = a, .q = top }; /* not reached: b - a >= 2m */
}

/* E-divisive in the window [lo, hi): adds the points it keeps to weak,
 * and the largest of them to *ret_last (unchanged when none). */
static int split_window(const struct cp_ctx *c, size_t lo, size_t hi, struct cp_set *weak, size_t *ret_last)
{
	size_t len = hi - lo, m = c->m;
	struct cp_energy e;
	int r = energy_init(&e, c->y + lo, len);
	if (r < 0)
		return r;
	/* cuts[0] = 0 < cuts[1] < ... < cuts[k] = len, window-relative;
	 * prop[i] is segment [cuts[i], cuts[i + 1])'s proposal, q = -inf when
	 * it is too short to split */
	size_t cap = len / m + 2, k = 1;
	size_t *cuts = calloc(cap, sizeof(*cuts));
	struct proposal *prop = calloc(cap, sizeof(*prop));
	if (!cuts || !prop) {
		r = -ENOMEM;
		goto out;
	}
	cuts[1] = len;
	prop[0] = len >= 2 * m ? best_split(&e, 0, len, m) : (struct proposal){ .q = -INFINITY };
	for (;;) {
		double top = -INFINITY;
		for (size_t i = 0; i < k; i++)
			top = fmax(top, prop[i].q);
		if (top == -INFINITY)
			break;
		size_t s = 0;
		while (!(prop[s].q > -INFINITY && near_best(prop[s].q, top)))
			s++;
		size_t tau = prop[s].tau;
		if (!reaches(yuen(c->y + lo, cuts[s], tau, cuts[s + 1], c->scratch).p, c->weak))
			break;
		memmove(cuts + s + 2, cuts + s + 1, (k - s) * sizeof(*cuts));
		memmove(prop + s + 2, prop + s + 1, (k - s - 1) * sizeof(*prop));
		cuts[s + 1] = tau;
		k++;
		for (size_t i = s; i <= s + 1; i++)
			prop[i] = cuts[i + 1] - cuts[i] >= 2 * m ? best_split(&e, cuts[i], cuts[i + 1], m)
								 : (struct proposal){ .q = -INFINITY };
		r = set_insert(weak, lo + tau);
		if (r < 0)
			goto out;
		if (lo + tau > *ret_last)
			*ret_last = lo + tau;
	}
out:
	free(cuts);
	free(prop);
	free(e.within);
	return r;
}

/* Step 1: the weak points of every window. */
static int split(const struct cp_ctx *c, struct cp_set *weak)
{
	size_t lo = 0;
	for (;;) {
		size_t hi = c->n - lo > 2 * c->w ? lo + 2 * c->w : c->n;
		size_t last = 0;
		if (hi - lo >= 2 * c->m) {
			int r = split_window(c, lo, hi, weak, &last);
			if (r < 0)
				return r;
		}
		if (hi == c->n)
			return 0;
		lo = last > lo + c->w ? last : lo + c->w;
	}
}

/* Judges pts[k] against its neighbours (step 2), in the scaled units. */
static void judge(const struct cp_ctx *c, const size_t *pts, size_t npts, size_t k, struct cp_point *ret)
{
	size_t at = pts[k];
	size_t prev = k > 0 ? pts[k - 1] : 0, next = k + 1 < npts ? pts[k + 1] : c->n;
	size_t lo = at - prev > c->w ? at - c->w : prev;
	size_t hi = next - at > c->w ? at + c->w : next;
	*ret = (struct cp_point){ .index = at, .before_start = lo, .after_end = hi, .p = 1, .stat = NAN };
	/* (a side of one night, from two windows that found neighbouring
	 * nights, trims nothing: its trimmed mean is its value) */
	struct side b = side_stats(c->y, lo, at, c->scratch), a = side_stats(c->y, at, hi, c->scratch);
	ret->mean_before = b.mean;
	ret->mean_after = a.mean;
	ret->trimmed_before = b.tmean;
	ret->trimmed_after = a.tmean;
	/* fewer than m nights a side cannot be judged: p stays 1, and the
	 * merge removes such a point first */
	if (at - lo >= c->m && hi - at >= c->m) {
		struct test t = yuen(c->y, lo, at, hi, c->scratch);
		ret->p = t.p;
		ret->stat = t.t;
	}
}

/* Step 2: drops the weakest point while it is not significant. */
static int merge(const struct cp_ctx *c, struct cp_set *pts, struct cp_point **ret, size_t *ret_n)
{
	struct cp_point *j = calloc(pts->n ? pts->n : 1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	for (size_t k = 0; k < pts->n; k++)
		judge(c, pts->v, pts->n, k, &j[k]);
	while (pts->n > 0) {
		double top = -INFINITY;
		for (size_t k = 0; k < pts->n; k++)
			top = fmax(top, j[k].p);
		size_t k = 0;
		while (!near_best(j[k].p, top))
			k++;
		if (reaches(j[k].p, c->alpha))
			break;
		memmove(pts->v + k, pts->v + k + 1, (pts->n - k - 1) * sizeof(*pts->v));
		memmove(j + k, j + k + 1, (pts->n - k - 1) * sizeof(*j));
		pts->n--;
		if (k > 0)
			judge(c, pts->v, pts->n, k - 1, &j[k - 1]);
		if (k < pts->n)
			judge(c, pts->v, pts->n, k, &j[k]);
	}
	*ret = j;
	*ret_n = pts->n;
	return 0;
}

static int resolve(const struct cp_params *par, struct cp_params *ret)
{
	struct cp_params p = par ? *par : (struct cp_params){ 0 };
	if (p.alpha == 0)
		p.alpha = CP_DEFAULT_ALPHA;
	if (p.min_segment == 0)
		p.min_segment = CP_DEFAULT_MIN_SEGMENT;
	if (p.window == 0)
		p.window = CP_DEFAULT_WINDOW;
	if (!(p.alpha > 0 && p.alpha < 1) || p.min_segment < 2 || p.window < p.min_segment || p.window > CP_WINDOW_MAX)
		return -EINVAL;
	*ret = p;
	return 0;
}

int cp_params_effective(const struct cp_params *par, struct cp_params *ret)
{
	if (!ret)
		return -EINVAL;
	return resolve(par, ret);
}

/* Scales x by a power of two so that its largest magnitude is in [0.5, 1). */
static double *scaled_copy(const double *x, size_t n, int *ret_scale)
{
	double top = 0;
	for (size_t i = 0; i < n; i++)
		top = fmax(top, fabs(x[i]));
	int scale = 0;
	if (top > 0)
		frexp(top, &scale);
	double *y = malloc(n * sizeof(*y));
	if (!y)
		return NULL;
	for (size_t i = 0; i < n; i++)
		y[i] = ldexp(x[i], -scale);
	*ret_scale = scale;
	return y;
}

int cp_detect(const double *x, size_t n, const struct cp_params *par, struct cp_result *out)
{
	struct cp_params p;
	if (!out || (!x && n) || resolve(par, &p) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	if (n < 2 * p.min_segment)
		return -ENODATA;
	int scale;
	double *y = scaled_copy(x, n, &scale);
	if (!y)
		return -ENOMEM;
	struct cp_ctx c = { .y = y, .n = n, .m = p.min_segment, .w = p.window, .alpha = p.alpha };
	c.weak = fmax(p.alpha, fmin(CP_WEAK_FACTOR * p.alpha, CP_WEAK_MAX));
	c.scratch = malloc(2 * p.window * sizeof(double));
	struct cp_set pts = { 0 };
	struct cp_point *points = NULL;
	size_t npoints = 0;
	int r = c.scratch ? split(&c, &pts) : -ENOMEM;
	if (r == 0)
		r = merge(&c, &pts, &points, &npoints);
	free(pts.v);
	free(c.scratch);
	free(y);
	if (r < 0)
		return r;
	for (size_t k = 0; k < npoints; k++) {
		struct cp_point *pt = &points[k];
		pt->pct = pt->mean_before != 0 ? 100 * (pt->mean_after - pt->mean_before) / fabs(pt->mean_before) : NAN;
		pt->mean_before = ldexp(pt->mean_before, scale);
		pt->mean_after = ldexp(pt->mean_after, scale);
		pt->trimmed_before = ldexp(pt->trimmed_before, scale);
		pt->trimmed_after = ldexp(pt->trimmed_after, scale);
	}
	*out = (struct cp_result){ .points = points, .n = npoints };
	return 0;
}

void cp_result_free(struct cp_result *r)
{
	if (!r)
		return;
	free(r->points);
	r->points = NULL;
	r->n = 0;
}
