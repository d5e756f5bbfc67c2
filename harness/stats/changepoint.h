/* Change points in a nightly history: where a series of nights shifted.
 * The method is chosen, its parameters given and justified in
 * changepoint.c. The contract every caller relies on:
 *   - deterministic: the same values and parameters give the same points,
 *     on every run and machine (no random permutations);
 *   - a single outlying night never makes a change point on its own;
 *   - the series holds only nights that measured something (the caller
 *     drops gaps and failed nights and maps indices back). */
#pragma once
#include <stddef.h>

struct cp_params {
	double alpha;        /* significance a split must reach; 0: CP_DEFAULT_ALPHA */
	size_t min_segment;  /* the fewest nights on either side; 0: CP_DEFAULT_MIN_SEGMENT */
	size_t window;       /* nights each side a split is judged on; 0: CP_DEFAULT_WINDOW */
};

struct cp_point {
	size_t index;                /* the first value after the shift */
	size_t before_start;         /* the segment before: [before_start, index) */
	size_t after_end;            /* the segment after: [index, after_end) */
	double mean_before, mean_after;
	double pct;                  /* 100 (mean_after - mean_before) / |mean_before|; NAN if before is 0 */
	double p;                    /* the split's significance (two-sided) */
	double stat;                 /* the method's statistic at the split */
};

struct cp_result {
	struct cp_point *points;     /* by index, ascending */
	size_t n;
};

/* Finds the change points of x[0..n). Returns 0 (points may be none),
 * -ENODATA when n is below 2 * min_segment ("not enough nights"),
 * -EINVAL on a non-finite value or bad parameters, -ENOMEM. */
int cp_detect(const double *x, size_t n, const struct cp_params *par, struct cp_result *out);
void cp_result_free(struct cp_result *r);
