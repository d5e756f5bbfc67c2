/* A stored job's schedule run, as the executor records it: each step a
 * finished run (a workload's warm-up as a warm-up) with one metric, its
 * value fn's for the step. For the tests of what reads ended jobs. */
#pragma once
#include "t.h"
#include "db/store.h"
#include "workloads/wl.h"

#include <stdlib.h>

typedef double (*t_run_value_fn)(void *ctx, const struct store_step *step);

static inline void t_finish_runs(struct store *st, int64_t id, const char *metric, const char *unit, t_run_value_fn fn, void *ctx)
{
	struct store_step *steps = NULL;
	size_t n = 0;
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	for (size_t i = 0; i < n; i++) {
		struct store_run run = { .job_id = id,
					 .step_id = steps[i].id,
					 .pair = steps[i].pair,
					 .variant = steps[i].variant,
					 .workload = steps[i].workload,
					 .cpus = 2,
					 .cgroup_version = 1 };
		snprintf(run.kernel_release, sizeof(run.kernel_release), "6.1.0-unit");
		int64_t rid;
		T_EQ_INT(store_run_begin(st, &run, &rid), 0);
		run.id = rid;
		run.status = steps[i].pair == STORE_PAIR_WARMUP ? RUN_WARMUP : RUN_OK;
		run.started = 1000.0 + (double)i;
		run.finished = run.started + 0.5;
		struct wl_metrics m = { 0 };
		wl_metrics_add(&m, metric, unit, fn(ctx, &steps[i]));
		T_EQ_INT(store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0), 0);
		wl_metrics_free(&m);
	}
	free(steps);
}
