/* Adaptive looks: the primary metrics' statistics so far, over the arrays
 * the executor gathered. */
#include "harness/stats/adaptive.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int adaptive_boot_medians(const double *runs, const unsigned *n_runs, size_t cells, unsigned reps, double *ret_v)
{
	for (size_t c = 0; c < cells; c++) {
		struct stats_desc d; /* median NAN when the cell has no run */
		int r = stats_describe(runs + c * reps, n_runs[c] < reps ? n_runs[c] : reps, &d);
		if (r < 0)
			return r;
		ret_v[c] = d.median;
	}
	return 0;
}

int adaptive_decide(const struct adaptive_metric *m, size_t n_metrics, size_t n_variants, unsigned pairs, unsigned look,
		    unsigned n_looks, enum stats_stop *ret)
{
	*ret = STATS_CONTINUE;
	if (n_metrics == 0 || n_variants < 2 || pairs == 0)
		return 0;
	size_t n_results = n_metrics * (n_variants - 1);
	struct stats_result *res = calloc(n_results, sizeof(*res));
	if (!res)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < n_metrics; i++)
		for (size_t v = 1; r >= 0 && v < n_variants; v++) {
			/* only the decision matters here, and it does not depend
			 * on the direction of goodness */
			struct stats_input in = {
				.a = m[i].v,
				.b = m[i].v + v * pairs,
				.n = pairs,
				.dir = DIRECTION_NEUTRAL,
				.min_change_pct = m[i].min_change_pct,
				.equivalence_pct = m[i].equivalence_pct,
			};
			r = stats_compare(&in, &res[i * (n_variants - 1) + v - 1]);
		}
	if (r >= 0)
		*ret = stats_adaptive_look(res, n_results, look, n_looks);
	free(res);
	return r;
}
