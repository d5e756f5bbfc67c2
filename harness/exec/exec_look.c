/* An adaptive look's data: the primary metrics' ok runs of one workload,
 * read back from the store and laid out as the arrays harness/stats
 * decides on (stats reads no store). */
#include "harness/exec/exec_priv.h"
#include "harness/stats/adaptive.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct look_series {
	char name[96];
	double *v;    /* [variant][pair]: the value, or the median of the runs inside one boot */
	double *runs; /* [variant][pair][rep] when a boot has several runs */
	unsigned *n_runs;
};

struct look_gather {
	const struct job *j;
	int workload;
	unsigned pairs;
	unsigned reps; /* runs inside one boot; 1: none collapse */
	struct look_series *s;
	size_t n, cap;
	int err;
};

static struct look_series *series_for(struct look_gather *g, const char *metric)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->s[i].name, metric) == 0)
			return &g->s[i];
	if (util_grow(g->s, g->cap, g->n + 1, 8) < 0)
		return NULL;
	size_t cells = g->j->n_variants * g->pairs;
	struct look_series *s = &g->s[g->n];
	*s = (struct look_series){ 0 };
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
	struct look_gather *g = ctx;
	if (r->workload != g->workload || r->status != RUN_OK || r->pair < 0 || (unsigned)r->pair >= g->pairs ||
	    r->variant < 0 || (size_t)r->variant >= g->j->n_variants || !job_metric_is_primary(g->j, metric))
		return;
	struct look_series *s = series_for(g, metric);
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

/* The metrics gathered, with the job's thresholds, as stats takes them. */
static int decide(const struct look_gather *g, unsigned look, unsigned n_looks, enum stats_stop *ret)
{
	struct adaptive_metric *m = calloc(g->n ? g->n : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		struct job_metric set;
		job_metric_settings(g->j, g->s[i].name, &set);
		m[i] = (struct adaptive_metric){ .v = g->s[i].v, .min_change_pct = set.min_change_pct, .equivalence_pct = set.equivalence_pct };
	}
	int r = adaptive_decide(m, g->n, g->j->n_variants, g->pairs, look, n_looks, ret);
	free(m);
	return r;
}

int exec_adaptive_look(struct store *st, const struct job *j, int64_t job_id, int workload, unsigned pairs,
		       unsigned look, unsigned n_looks, enum stats_stop *ret)
{
	*ret = STATS_CONTINUE;
	if (j->n_primary == 0 || j->n_variants < 2 || pairs == 0)
		return 0;
	struct look_gather g = { .j = j,
				 .workload = workload,
				 .pairs = pairs,
				 .reps = job_boots_kernels(j) && j->runs_per_boot > 1 ? j->runs_per_boot : 1 };
	int r = store_foreach_metric(st, job_id, collect, &g);
	if (r >= 0)
		r = g.err;
	for (size_t i = 0; r >= 0 && g.reps > 1 && i < g.n; i++)
		r = adaptive_boot_medians(g.s[i].runs, g.s[i].n_runs, j->n_variants * pairs, g.reps, g.s[i].v);
	if (r >= 0)
		r = decide(&g, look, n_looks, ret);
	for (size_t i = 0; i < g.n; i++) {
		free(g.s[i].v);
		free(g.s[i].runs);
		free(g.s[i].n_runs);
	}
	free(g.s);
	return r;
}
