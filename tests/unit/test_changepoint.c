/* The change-point detector (harness/stats/changepoint.h): where it puts
 * points, what it reports about them, what it refuses, and that outliers,
 * flat noise and the window behave as its top comment says. The noise is
 * drawn from a fixed splitmix64 stream, so every run sees the same data. */
#include "t.h"
#include "harness/stats/changepoint.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static double uniform01(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

/* n nights around level with noise of cov (a fraction), from seed */
static void noisy(double *x, size_t n, double level, double cov, uint64_t seed)
{
	rng_state = seed;
	for (size_t i = 0; i < n; i++)
		x[i] = level * (1 + cov * gauss());
}

static double mean_of(const double *x, size_t lo, size_t hi)
{
	double s = 0;
	for (size_t i = lo; i < hi; i++)
		s += x[i];
	return s / (double)(hi - lo);
}

/* cp_detect with defaults; the number of points, or the error */
static long detect(const double *x, size_t n, struct cp_result *res)
{
	int r = cp_detect(x, n, NULL, res);
	return r < 0 ? r : (long)res->n;
}

static void test_clean_step(void)
{
	double x[80];
	noisy(x, 80, 100, 0.01, 1);
	for (size_t i = 40; i < 80; i++)
		x[i] += 10;
	struct cp_result res;
	T_EQ_INT(detect(x, 80, &res), 1);
	if (res.n == 1) {
		const struct cp_point *p = &res.points[0];
		T_EQ_INT(p->index, 40);
		T_EQ_INT(p->before_start, 10); /* the default window: 30 nights each side */
		T_EQ_INT(p->after_end, 70);
		T_NEAR(p->mean_before, mean_of(x, 10, 40), 1e-9);
		T_NEAR(p->mean_after, mean_of(x, 40, 70), 1e-9);
		T_NEAR(p->pct, 100 * (p->mean_after - p->mean_before) / p->mean_before, 1e-9);
		T_NEAR(p->pct, 10, 1.0);
		T_CHECK(p->p < 1e-20);
		T_CHECK(p->stat > 20);
	}
	cp_result_free(&res);
	T_CHECK(res.points == NULL && res.n == 0);

	/* the same step down: the sign of pct and of the statistic follow */
	for (size_t i = 40; i < 80; i++)
		x[i] -= 20;
	T_EQ_INT(detect(x, 80, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].index, 40);
		T_NEAR(res.points[0].pct, -10, 1.0);
		T_CHECK(res.points[0].stat < -20);
	}
	cp_result_free(&res);
}

/* A year of flat noise, and flat noise of several seeds and levels. */
static void test_flat(void)
{
	static double x[365];
	struct cp_result res;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		noisy(x, 365, 50.0 * (double)seed, 0.01 * (double)(seed % 5 + 1), seed * 7919);
		long n = detect(x, 365, &res);
		T_EQ_INT(n, 0);
		if (n > 0)
			fprintf(stderr, "  flat seed %llu: a point at %zu, p %g\n", (unsigned long long)seed,
				res.points[0].index, res.points[0].p);
		cp_result_free(&res);
	}
	/* a constant history, and an integer counter that is mostly 0 */
	for (size_t i = 0; i < 100; i++)
		x[i] = 7;
	T_EQ_INT(detect(x, 100, &res), 0);
	cp_result_free(&res);
	rng_state = 3;
	for (size_t i = 0; i < 100; i++)
		x[i] = uniform01() < 0.1 ? 1 : 0;
	T_EQ_INT(detect(x, 100, &res), 0);
	cp_result_free(&res);
}

/* One night off by a factor, at every position of a noisy flat history:
 * never a point. */
static void test_single_spikes(void)
{
	static const double factors[] = { 5, 50, 1e6, 0.2, 0.02, 0, -50 };
	double base[60], x[60];
	noisy(base, 60, 1000, 0.02, 11);
	size_t made = 0;
	for (size_t f = 0; f < sizeof(factors) / sizeof(*factors); f++)
		for (size_t at = 0; at < 60; at++) {
			memcpy(x, base, sizeof(x));
			x[at] = 1000 * factors[f];
			struct cp_result res;
			long n = detect(x, 60, &res);
			if (n != 0) {
				made++;
				fprintf(stderr, "  a spike x%g at night %zu made %ld points\n", factors[f], at, n);
			}
			cp_result_free(&res);
		}
	T_EQ_INT(made, 0);
}

/* Runs of two and three outlying nights: still no point (min_segment 4). */
static void test_outlier_runs(void)
{
	double base[90], x[90];
	noisy(base, 90, 1000, 0.02, 12);
	size_t made = 0;
	for (size_t len = 2; len <= 3; len++)
		for (size_t at = 0; at + len <= 90; at++)
			for (int sign = -1; sign <= 1; sign += 2) {
				memcpy(x, base, sizeof(x));
				for (size_t i = at; i < at + len; i++)
					x[i] = 1000 * (sign > 0 ? 5 + 0.3 * (double)(i - at) : 0.2 - 0.05 * (double)(i - at));
				struct cp_result res;
				if (detect(x, 90, &res) != 0) {
					made++;
					fprintf(stderr, "  %zu outliers (%+d) from night %zu made a point at %zu\n",
						len, sign, at, res.points[0].index);
				}
				cp_result_free(&res);
			}
	T_EQ_INT(made, 0);
	/* four at the end of the history can be the start of a change */
	memcpy(x, base, sizeof(x));
	for (size_t i = 86; i < 90; i++)
		x[i] = 5000 + 10 * (double)i;
	struct cp_result res;
	T_EQ_INT(detect(x, 90, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].index, 86);
		T_EQ_INT(res.points[0].after_end, 90);
	}
	cp_result_free(&res);
	/* and an excursion of 15 nights has its two ends found */
	memcpy(x, base, sizeof(x));
	for (size_t i = 40; i < 55; i++)
		x[i] *= 1.1;
	T_EQ_INT(detect(x, 90, &res), 2);
	if (res.n == 2) {
		T_EQ_INT(res.points[0].index, 40);
		T_EQ_INT(res.points[1].index, 55);
		T_CHECK(res.points[0].pct > 8 && res.points[1].pct < -7);
	}
	cp_result_free(&res);
}

/* A spike beside a real step neither hides nor moves it. */
static void test_spike_beside_step(void)
{
	double x[100];
	noisy(x, 100, 500, 0.01, 13);
	for (size_t i = 50; i < 100; i++)
		x[i] *= 1.08;
	x[47] = 500 * 50;
	x[53] = 500 * 0.1;
	struct cp_result res;
	T_EQ_INT(detect(x, 100, &res), 1);
	if (res.n == 1)
		T_EQ_INT(res.points[0].index, 50);
	cp_result_free(&res);
}

static void test_two_steps(void)
{
	double x[150];
	noisy(x, 150, 200, 0.02, 14);
	for (size_t i = 60; i < 150; i++)
		x[i] += 20;
	for (size_t i = 110; i < 150; i++)
		x[i] -= 30;
	struct cp_result res;
	T_EQ_INT(detect(x, 150, &res), 2);
	if (res.n == 2) {
		T_EQ_INT(res.points[0].index, 60);
		T_EQ_INT(res.points[1].index, 110);
		/* each judged between its neighbours, within the window */
		T_EQ_INT(res.points[0].before_start, 30);
		T_EQ_INT(res.points[0].after_end, 90);
		T_EQ_INT(res.points[1].before_start, 80);
		T_EQ_INT(res.points[1].after_end, 140);
		T_NEAR(res.points[0].pct, 10, 1.5);
		T_NEAR(res.points[1].pct, -100.0 * 30 / 220, 1.5);
	}
	cp_result_free(&res);

	/* closer than a window: the segments stop at the neighbour */
	noisy(x, 150, 200, 0.02, 15);
	for (size_t i = 70; i < 150; i++)
		x[i] += 20;
	for (size_t i = 80; i < 150; i++)
		x[i] += 20;
	T_EQ_INT(detect(x, 150, &res), 2);
	if (res.n == 2) {
		T_EQ_INT(res.points[0].index, 70);
		T_EQ_INT(res.points[0].after_end, 80);
		T_EQ_INT(res.points[1].index, 80);
		T_EQ_INT(res.points[1].before_start, 70);
	}
	cp_result_free(&res);
}

/* The newest nights: a 10 sd step is found once 6 nights are past it. */
static void test_recent_step(void)
{
	double x[66];
	noisy(x, 66, 100, 0.01, 16);
	for (size_t i = 60; i < 66; i++)
		x[i] += 10;
	struct cp_result res;
	T_EQ_INT(detect(x, 66, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].index, 60);
		T_EQ_INT(res.points[0].after_end, 66);
	}
	cp_result_free(&res);
	/* three nights past it cannot be judged yet (min_segment 4) */
	T_EQ_INT(detect(x, 63, &res), 0);
	cp_result_free(&res);
}

static void test_not_enough_nights(void)
{
	double x[20];
	noisy(x, 20, 100, 0.01, 17);
	struct cp_result res = { .points = (struct cp_point *)&res, .n = 99 };
	T_EQ_INT(cp_detect(x, 0, NULL, &res), -ENODATA);
	T_EQ_INT(cp_detect(x, 1, NULL, &res), -ENODATA);
	T_EQ_INT(cp_detect(x, 2 * CP_DEFAULT_MIN_SEGMENT - 1, NULL, &res), -ENODATA);
	T_CHECK(res.n == 99); /* untouched on failure */
	T_EQ_INT(cp_detect(NULL, 0, NULL, &res), -ENODATA);
	struct cp_params par = { .min_segment = 6 };
	T_EQ_INT(cp_detect(x, 11, &par, &res), -ENODATA);
	T_EQ_INT(cp_detect(x, 12, &par, &res), 0);
	cp_result_free(&res);
	/* exactly 2 * min_segment nights with a large step: the one split */
	for (size_t i = 4; i < 8; i++)
		x[i] += 100;
	T_EQ_INT(detect(x, 8, &res), 1);
	if (res.n == 1)
		T_EQ_INT(res.points[0].index, 4);
	cp_result_free(&res);
}

static void test_invalid(void)
{
	double x[40];
	noisy(x, 40, 100, 0.01, 18);
	struct cp_result res = { .n = 99 };
	static const double bad[] = { NAN, INFINITY, -INFINITY };
	for (size_t b = 0; b < 3; b++)
		for (size_t at = 0; at < 40; at += 13) {
			double y[40];
			memcpy(y, x, sizeof(y));
			y[at] = bad[b];
			T_EQ_INT(cp_detect(y, 40, NULL, &res), -EINVAL);
		}
	/* a non-finite value is refused even in a history too short to judge */
	double one = NAN;
	T_EQ_INT(cp_detect(&one, 1, NULL, &res), -EINVAL);
	T_EQ_INT(cp_detect(NULL, 5, NULL, &res), -EINVAL);
	T_EQ_INT(cp_detect(x, 40, NULL, NULL), -EINVAL);
	static const struct cp_params params[] = {
		{ .alpha = 1 },
		{ .alpha = 1.5 },
		{ .alpha = -0.01 },
		{ .alpha = NAN },
		{ .alpha = INFINITY },
		{ .min_segment = 1 },
		{ .min_segment = 8, .window = 7 },
		{ .window = 3 },
		{ .window = CP_WINDOW_MAX + 1 },
	};
	for (size_t i = 0; i < sizeof(params) / sizeof(*params); i++) {
		T_EQ_INT(cp_detect(x, 40, &params[i], &res), -EINVAL);
		struct cp_params eff;
		T_EQ_INT(cp_params_effective(&params[i], &eff), -EINVAL);
	}
	T_CHECK(res.n == 99);
	struct cp_params eff;
	T_EQ_INT(cp_params_effective(NULL, &eff), 0);
	T_NEAR(eff.alpha, CP_DEFAULT_ALPHA, 0);
	T_EQ_INT(eff.min_segment, CP_DEFAULT_MIN_SEGMENT);
	T_EQ_INT(eff.window, CP_DEFAULT_WINDOW);
	struct cp_params mine = { .alpha = 0.01, .min_segment = 2, .window = 2 };
	T_EQ_INT(cp_params_effective(&mine, &eff), 0);
	T_EQ_INT(eff.window, 2);
	T_EQ_INT(cp_detect(x, 40, &mine, &res), 0);
	cp_result_free(&res);
}

/* The same history twice, and a copy elsewhere in memory: the same bytes. */
static void test_deterministic(void)
{
	static double x[365], y[365];
	noisy(x, 365, 1000, 0.03, 19);
	for (size_t i = 100; i < 365; i++)
		x[i] *= 1.1;
	for (size_t i = 250; i < 365; i++)
		x[i] *= 0.95;
	memcpy(y, x, sizeof(x));
	struct cp_result a, b, c;
	T_CHECK(detect(x, 365, &a) >= 2);
	T_EQ_INT(detect(x, 365, &b), (long)a.n);
	T_EQ_INT(detect(y, 365, &c), (long)a.n);
	if (a.n == b.n && a.n == c.n) {
		T_CHECK(memcmp(a.points, b.points, a.n * sizeof(*a.points)) == 0);
		T_CHECK(memcmp(a.points, c.points, a.n * sizeof(*a.points)) == 0);
	}
	cp_result_free(&a);
	cp_result_free(&b);
	cp_result_free(&c);
}

/* cp_detect with par; the number of points, or the error */
static long detect_with(const double *x, size_t n, const struct cp_params *par, struct cp_result *res)
{
	int r = cp_detect(x, n, par, res);
	return r < 0 ? r : (long)res->n;
}

static void test_window(void)
{
	double x[200];
	noisy(x, 200, 100, 0.02, 20);
	for (size_t i = 100; i < 200; i++)
		x[i] += 10;
	struct cp_params narrow = { .window = 10 }, wide = { .window = 100 };
	struct cp_result res;
	/* the segments a point is judged on reach window nights each side */
	T_EQ_INT(detect_with(x, 200, &narrow, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].index, 100);
		T_EQ_INT(res.points[0].before_start, 90);
		T_EQ_INT(res.points[0].after_end, 110);
		T_NEAR(res.points[0].mean_before, mean_of(x, 90, 100), 1e-9);
	}
	cp_result_free(&res);
	T_EQ_INT(detect_with(x, 200, &wide, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].index, 100);
		T_EQ_INT(res.points[0].before_start, 0);
		T_EQ_INT(res.points[0].after_end, 200);
		T_NEAR(res.points[0].mean_after, mean_of(x, 100, 200), 1e-9);
	}
	cp_result_free(&res);

	/* a step of 1.2 sd: too small to see on 10 nights a side, clear on 100 */
	noisy(x, 200, 100, 0.02, 21);
	for (size_t i = 100; i < 200; i++)
		x[i] += 2.4;
	T_EQ_INT(detect_with(x, 200, &narrow, &res), 0);
	cp_result_free(&res);
	T_EQ_INT(detect_with(x, 200, &wide, &res), 1);
	if (res.n == 1) /* a step this small is placed within a few nights, not on the night */
		T_NEAR((double)res.points[0].index, 100, 6);
	cp_result_free(&res);

	/* a window longer than the history: the whole history at once */
	struct cp_params huge = { .window = CP_WINDOW_MAX };
	T_EQ_INT(detect_with(x, 200, &huge, &res), 1);
	if (res.n == 1) {
		T_EQ_INT(res.points[0].before_start, 0);
		T_EQ_INT(res.points[0].after_end, 200);
	}
	cp_result_free(&res);
}

/* Values near the ends of the double range: the same points, means right. */
static void test_scale(void)
{
	double x[80], big[80], tiny[80];
	noisy(x, 80, 1, 0.01, 22);
	for (size_t i = 40; i < 80; i++)
		x[i] += 0.1;
	for (size_t i = 0; i < 80; i++) {
		big[i] = x[i] * 1e306;
		tiny[i] = x[i] * 1e-300;
	}
	struct cp_result a, b, c;
	T_EQ_INT(detect(x, 80, &a), 1);
	T_EQ_INT(detect(big, 80, &b), 1);
	T_EQ_INT(detect(tiny, 80, &c), 1);
	if (a.n == 1 && b.n == 1 && c.n == 1) {
		T_EQ_INT(b.points[0].index, a.points[0].index);
		T_EQ_INT(c.points[0].index, a.points[0].index);
		T_NEAR(b.points[0].mean_after / 1e306, a.points[0].mean_after, 1e-12);
		T_NEAR(c.points[0].mean_before / 1e-300, a.points[0].mean_before, 1e-12);
		T_NEAR(b.points[0].pct, a.points[0].pct, 1e-9);
		T_NEAR(c.points[0].p / a.points[0].p, 1, 1e-6);
	}
	cp_result_free(&a);
	cp_result_free(&b);
	cp_result_free(&c);
	/* both signs near DBL_MAX: no overflow to inf in the distances */
	for (size_t i = 0; i < 80; i++)
		big[i] = (i < 40 ? -0.9 : 0.9) * DBL_MAX * (1 - 1e-3 * (double)(i % 7));
	T_EQ_INT(detect(big, 80, &b), 1);
	if (b.n == 1) {
		T_EQ_INT(b.points[0].index, 40);
		T_CHECK(isfinite(b.points[0].mean_before) && isfinite(b.points[0].mean_after));
	}
	cp_result_free(&b);
}

/* Constant segments: a counter at 0 that starts counting. */
static void test_constant_segments(void)
{
	double x[60];
	for (size_t i = 0; i < 60; i++)
		x[i] = i < 30 ? 0 : 5;
	struct cp_result res;
	T_EQ_INT(detect(x, 60, &res), 1);
	if (res.n == 1) {
		const struct cp_point *p = &res.points[0];
		T_EQ_INT(p->index, 30);
		T_NEAR(p->mean_before, 0, 0);
		T_NEAR(p->mean_after, 5, 0);
		T_CHECK(isnan(p->pct)); /* no % of a zero mean */
		T_NEAR(p->p, 0, 0);
		T_CHECK(isinf(p->stat) && p->stat > 0);
	}
	cp_result_free(&res);

	/* The shortest histories a counter makes in t_nightly: the nightly %
	 * change of a folio size, 0 while both sides have 64K folios, -93.75
	 * once one has 4K, and no noise at all. Found on the step's first
	 * night with the fewest nights a side, with p 0 and no division by
	 * a zero variance; the same from one non-zero level to another. */
	static const struct {
		size_t n, at;
		double before, after;
	} steps[] = { { 12, 5, 0, -93.75 }, { 8, 4, 0, -93.75 }, { 9, 4, 64, 4 }, { 8, 4, 100, 0 } };
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		for (size_t i = 0; i < steps[k].n; i++)
			x[i] = i < steps[k].at ? steps[k].before : steps[k].after;
		T_EQ_INT(detect(x, steps[k].n, &res), 1);
		if (res.n == 1) {
			const struct cp_point *p = &res.points[0];
			T_EQ_INT(p->index, steps[k].at);
			T_EQ_INT(p->before_start, 0);
			T_EQ_INT(p->after_end, steps[k].n);
			T_NEAR(p->mean_before, steps[k].before, 0);
			T_NEAR(p->mean_after, steps[k].after, 0);
			T_NEAR(p->p, 0, 0);
			T_CHECK(isinf(p->stat) && (p->stat < 0) == (steps[k].after < steps[k].before));
			T_CHECK(steps[k].before == 0 ? isnan(p->pct) : isfinite(p->pct));
		}
		cp_result_free(&res);
	}
	/* a step one night too late for a segment of 4 after it: none */
	for (size_t i = 0; i < 8; i++)
		x[i] = i < 5 ? 0 : -93.75;
	T_EQ_INT(detect(x, 8, &res), 0);
	cp_result_free(&res);
}

int main(void)
{
	test_clean_step();
	test_flat();
	test_single_spikes();
	test_outlier_runs();
	test_spike_beside_step();
	test_two_steps();
	test_recent_step();
	test_not_enough_nights();
	test_invalid();
	test_deterministic();
	test_window();
	test_scale();
	test_constant_segments();
	return t_done("test_changepoint");
}
