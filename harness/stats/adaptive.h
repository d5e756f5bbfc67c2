/* Adaptive budgets (STATS.md rule 9): at each look point the executor asks
 * whether every primary metric of a workload is decided, so the rest of
 * its pairs can be skipped. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "harness/stats/stats.h"

struct store;
struct job;

/* Compares variant 0 with every other variant on each primary metric of
 * the job (names or PREFIX* patterns, matched against what the runs
 * recorded; min_change and equivalence from the job's [metric] sections), over the ok runs of
 * the workload's first `pairs` pairs, and decides at look `look` of
 * `n_looks`. No primary metric recorded: STATS_CONTINUE. */
int adaptive_look(struct store *st, const struct job *j, int64_t job_id, int workload, unsigned pairs,
		  unsigned look, unsigned n_looks, enum stats_stop *ret);
