/* Adaptive looks: the primary metrics' statistics so far, from the store. */
#include "harness/stats/adaptive.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct series {
	char name[96];
	double *v;     /* [variant][pair]: the value, or the median of the runs inside one boot */
	double *runs;  /* [variant][pair][rep] when a boot has several runs */
	unsigned *n_runs;
};

struct gather {
	const struct job *j;
	int workload;
	unsigned pairs;
	unsigned reps;  /* runs inside one boot; 1: none collapse */
	struct series *s;
	size_t n, cap;
	int err;
};

static struct series *series_for(struct gather *g, const char *metric)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->s[i].name, metric) == 0)
			return &g->s[i];
	if (util_grow(g->s, g->cap, g->n + 1, 8) < 0)
		return NULL;
	size_t cells = g->j->n_variants * g->pairs;
	struct series *s = &g->s[g->n];
	*s = (struct series){ 0 };
	s->v = malloc(cells * sizeof(double));
	if (g->reps > 1) {
		s->runs = malloc(cells * g->reps * sizeof(double));
		s->n_runs = calloc(cells, sizeof(unsigned));
	}
	if (!s->v || (g->reps > 1 && (!s->runs || !s->n_runs))) {
		free(s->v);
		free(s->runs);
		free(s->n_runs);
		return NULL;
	}
	for (size_t i = 0; i < cells; i++)
		s->v[i] = NAN;
	snprintf(s->name, sizeof(s->name), "%s", metric);
	g->n++;
	return s;
}

static void collect(void *ctx, const struct store_run *r, const char *metric, const char *unit, double value)
{
	struct gather *g = ctx;
	if (r->workload != g->workload || r->status != RUN_OK || r->pair < 0 ||
	    (unsigned)r->pair >= g->pairs || r->variant < 0 || (size_t)r->variant >= g->j->n_variants ||
	    !job_metric_is_primary(g->j, metric))
		return;
	struct series *s = series_for(g, metric);
	if (!s) {
		g->err = -ENOMEM;
		return;
	}
	size_t cell = (size_t)r->variant * g->pairs + (size_t)r->pair;
	if (g->reps <= 1) {
		s->v[cell] = value;
		return;
	}
	if (s->n_runs[cell] < g->reps)
		s->runs[cell * g->reps + s->n_runs[cell]++] = value;
}

/* Several runs inside one boot count as one value, their median, as in
 * the report (STATS.md: the boot is the unit of replication). */
static int collapse_runs(struct gather *g, struct series *s)
{
	size_t cells = g->j->n_variants * g->pairs;
	for (size_t c = 0; c < cells; c++) {
		struct stats_desc d; /* median NAN when the cell has no run */
		int r = stats_describe(s->runs + c * g->reps, s->n_runs[c], &d);
		if (r < 0)
			return r;
		s->v[c] = d.median;
	}
	return 0;
}

int adaptive_look(struct store *st, const struct job *j, int64_t job_id, int workload, unsigned pairs,
		  unsigned look, unsigned n_looks, enum stats_stop *ret)
{
	*ret = STATS_CONTINUE;
	if (j->n_primary == 0 || j->n_variants < 2 || pairs == 0)
		return 0;
	struct gather g = { .j = j, .workload = workload, .pairs = pairs,
			    .reps = job_boots_kernels(j) && j->runs_per_boot > 1 ? j->runs_per_boot : 1 };
	int r = store_foreach_metric(st, job_id, collect, &g);
	if (r >= 0)
		r = g.err;
	for (size_t i = 0; r >= 0 && g.reps > 1 && i < g.n; i++)
		r = collapse_runs(&g, &g.s[i]);
	size_t nv = j->n_variants, n_results = g.n * (nv - 1);
	struct stats_result *res = calloc(n_results ? n_results : 1, sizeof(*res));
	if (!res)
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < g.n; i++) {
		struct job_metric set;
		job_metric_settings(j, g.s[i].name, &set);
		for (size_t v = 1; r >= 0 && v < nv; v++) {
			/* only the decision matters here, and it does not depend
			 * on the direction of goodness */
			struct stats_input in = {
				.a = g.s[i].v,
				.b = g.s[i].v + v * pairs,
				.n = pairs,
				.dir = STATS_DIR_NEUTRAL,
				.min_change_pct = set.min_change_pct,
				.equivalence_pct = set.equivalence_pct,
			};
			r = stats_compare(&in, &res[i * (nv - 1) + v - 1]);
		}
	}
	if (r >= 0 && n_results > 0)
		*ret = stats_adaptive_look(res, n_results, look, n_looks);
	for (size_t i = 0; i < g.n; i++) {
		free(g.s[i].v);
		free(g.s[i].runs);
		free(g.s[i].n_runs);
	}
	free(g.s);
	free(res);
	return r;
}
