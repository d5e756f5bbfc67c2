/* Adaptive budgets (STATS.md rule 9): at each look point the executor asks
 * whether every primary metric of a workload is decided, so the rest of
 * its pairs can be skipped. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

struct store;

struct adaptive_metric {
	const char *name;
	enum stats_direction dir;
	double epsilon_pct;   /* < 0: default */
};

/* Compares variant 0 with every other variant on each metric, over the ok
 * runs of workload's first `pairs` pairs, and decides at look `look` of
 * `n_looks`. No metric or no data: STATS_CONTINUE. */
int adaptive_look(struct store *st, int64_t job_id, int workload, size_t n_variants, unsigned pairs,
		  const struct adaptive_metric *m, size_t n_metrics, unsigned look, unsigned n_looks,
		  enum stats_stop *ret);
