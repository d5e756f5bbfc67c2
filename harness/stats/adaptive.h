/* Adaptive budgets (doc/statistics.md rule 9): at each look point the executor asks
 * whether every primary metric of a workload is decided, so the rest of
 * its pairs can be skipped. Functions over arrays: the executor reads the
 * runs from the store (exec_look.c) and hands them here. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "harness/stats/stats.h"

/* One primary metric so far: v[variant * pairs + pair], n_variants * pairs
 * values (NAN where no ok run), with the job's thresholds for it (< 0:
 * the defaults). */
struct adaptive_metric {
	const double *v;
	double min_change_pct, equivalence_pct;
};

/* Several runs inside one boot count as one value, their median, as in the
 * report (doc/statistics.md rule 1: the boot is the unit of replication): for each of the
 * cells, ret_v[c] is the median of runs[c * reps ..] (its n_runs[c] first
 * values), NAN when it has none. */
int adaptive_boot_medians(const double *runs, const unsigned *n_runs, size_t cells, unsigned reps, double *ret_v);

/* Compares variant 0 with every other variant on each metric over the
 * first `pairs` pairs, and decides at look `look` of `n_looks`. No
 * metric, or fewer than two variants: STATS_CONTINUE. */
int adaptive_decide(const struct adaptive_metric *m, size_t n_metrics, size_t n_variants, unsigned pairs, unsigned look,
		    unsigned n_looks, enum stats_stop *ret);
