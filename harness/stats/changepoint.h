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

/* The defaults, and why, are in changepoint.c's top comment. */
#define CP_DEFAULT_ALPHA 1e-4
#define CP_DEFAULT_MIN_SEGMENT 4
#define CP_DEFAULT_WINDOW 30
/* The largest window taken: a window's energy table holds (2 w + 1)^2
 * doubles (8 MB here). */
#define CP_WINDOW_MAX 500

/* A zero field takes its default. alpha in (0, 1); 2 <= min_segment <=
 * window <= CP_WINDOW_MAX; anything else is -EINVAL. */
struct cp_params {
	double alpha;       /* significance a split must reach; 0: CP_DEFAULT_ALPHA */
	size_t min_segment; /* the fewest nights on either side; 0: CP_DEFAULT_MIN_SEGMENT */
	/* nights each side a split is judged on (the search looks at 2 *
	 * window nights at a time); 0: CP_DEFAULT_WINDOW */
	size_t window;
};

struct cp_point {
	size_t index;        /* the first value after the shift */
	size_t before_start; /* the segment before: [before_start, index), at most window nights */
	size_t after_end;    /* the segment after: [index, after_end), at most window nights */
	double mean_before, mean_after;
	double pct; /* 100 (mean_after - mean_before) / |mean_before|; NAN if before is 0 */
	/* the split's significance: Yuen's trimmed-mean Welch t-test of the
	 * two segments, two-sided (not corrected for the search that chose
	 * the split) */
	double p;
	/* that test's t, after against before; +-INFINITY when both trimmed
	 * segments are constant and differ (p is then 0) */
	double stat;
	/* the 20%-trimmed means the test compares: an outlying night moves
	 * them little, the plain means a lot */
	double trimmed_before, trimmed_after;
};

struct cp_result {
	struct cp_point *points; /* by index, ascending */
	size_t n;
};

/* Finds the change points of x[0..n). Returns 0 (points may be none),
 * -ENODATA when n is below 2 * min_segment ("not enough nights"),
 * -EINVAL on a non-finite value or bad parameters, -ENOMEM. */
int cp_detect(const double *x, size_t n, const struct cp_params *par, struct cp_result *out);
/* The parameters cp_detect runs with for par (NULL: all defaults), for
 * callers that show them; -EINVAL when cp_detect would refuse them. */
int cp_params_effective(const struct cp_params *par, struct cp_params *ret);
void cp_result_free(struct cp_result *r);
