/* Adaptive looks: the primary metrics' statistics so far, from the store. */
#include "adaptive.h"
#include "store.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gather {
	int workload;
	unsigned pairs;
	size_t n_variants;
	const struct adaptive_metric *m;
	size_t n_metrics;
	double *values; /* [metric][variant][pair] */
};

static void collect(void *ctx, const struct store_run *r, const char *metric, const char *unit, double value)
{
	struct gather *g = ctx;
	if (r->workload != g->workload || strcmp(r->status, "ok") != 0 || r->pair < 0 ||
	    (unsigned)r->pair >= g->pairs || r->variant < 0 || (size_t)r->variant >= g->n_variants)
		return;
	for (size_t i = 0; i < g->n_metrics; i++)
		if (strcmp(g->m[i].name, metric) == 0)
			g->values[(i * g->n_variants + (size_t)r->variant) * g->pairs + (size_t)r->pair] = value;
}

int adaptive_look(struct store *st, int64_t job_id, int workload, size_t n_variants, unsigned pairs,
		  const struct adaptive_metric *m, size_t n_metrics, unsigned look, unsigned n_looks,
		  enum stats_stop *ret)
{
	if (n_metrics == 0 || n_variants < 2 || pairs == 0) {
		*ret = STATS_CONTINUE;
		return 0;
	}
	size_t cells = n_metrics * n_variants * pairs;
	struct gather g = { workload, pairs, n_variants, m, n_metrics, malloc(cells * sizeof(double)) };
	size_t n_results = n_metrics * (n_variants - 1);
	struct stats_result *res = calloc(n_results, sizeof(*res));
	if (!g.values || !res) {
		free(g.values);
		free(res);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cells; i++)
		g.values[i] = NAN;
	int r = store_foreach_metric(st, job_id, collect, &g);
	for (size_t i = 0; r >= 0 && i < n_metrics; i++)
		for (size_t v = 1; r >= 0 && v < n_variants; v++) {
			struct stats_input in = {
				.a = &g.values[(i * n_variants) * pairs],
				.b = &g.values[(i * n_variants + v) * pairs],
				.n = pairs,
				.dir = m[i].dir,
				.epsilon_pct = m[i].epsilon_pct,
			};
			r = stats_compare(&in, &res[i * (n_variants - 1) + v - 1]);
		}
	if (r >= 0)
		*ret = stats_adaptive_look(res, n_results, look, n_looks);
	free(g.values);
	free(res);
	return r;
}
