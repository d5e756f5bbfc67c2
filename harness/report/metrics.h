/* What kab knows about a metric by its name — unit, direction of
 * goodness and the label a cover letter shows: a workload's own metrics
 * from the workload's declaration (wl_ops.metrics), the kernel's counters
 * from the table in metrics.c. A job's [metric NAME] sections override
 * both (job_metric_settings). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "harness/job/job.h"
#include "harness/stats/stats.h"

#define METRIC_LABEL_MAX 96
#define METRIC_UNIT_MAX 32

struct metric_info {
	char label[METRIC_LABEL_MAX]; /* "bogo ops/s", "TLB shootdowns", "pgscan_anon (pages)" */
	char unit[METRIC_UNIT_MAX];   /* "ops/s", "pages", "" */
	enum direction dir;
	bool known; /* from the table, not guessed from the unit or name */
};

/* Describes name. unit_hint is the unit the data came with (the
 * workload's, the CSV's; NULL or "" if none): the table's unit wins for
 * known metrics, the hint for the others, whose direction is guessed from
 * unit and name (ops/s, tps, qps: higher; s, ms, latency: lower). */
void metrics_describe(const char *name, const char *unit_hint, struct metric_info *ret);

/* A job's [metric] direction, or dflt (the table's) when it gives none. */
enum direction metrics_direction(enum direction d, enum direction dflt);
/* The kernel table's i-th pattern (util_glob), NULL past its end. */
const char *metrics_kernel_pattern(size_t i);
