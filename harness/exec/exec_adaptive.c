/* Adaptive budgets: a look after each completed pair at a look point, and
 * the workloads whose remaining pairs it skips. */
#include "harness/stats/stats.h"
#include "harness/exec/exec_priv.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <stdio.h>
#include <string.h>

/* After a step: when it completed a pair at a look point, look. */
void exec_adaptive_after_step(struct store *st, const struct job *j, int64_t job_id, struct store_step *steps,
			      size_t n, size_t i)
{
	const struct job_adaptive *a = &j->adaptive;
	int w = steps[i].workload, p = steps[i].pair;
	for (size_t k = i + 1; k < n; k++)
		if (steps[k].workload == w && steps[k].pair == p && steps[k].status == STEP_PENDING)
			return; /* the pair is not complete yet */
	unsigned done = (unsigned)p + 1;
	if (a->step == 0 || done < a->min || (done - a->min) % a->step != 0 || done >= j->pairs)
		return;
	unsigned look = (done - a->min) / a->step + 1;
	enum stats_stop stop = STATS_CONTINUE;
	if (exec_adaptive_look(st, j, job_id, w, done, look, job_looks(j), &stop) < 0) {
		log_warn("adaptive look %u for workload %s failed; continuing to the budget", look, j->workloads[w].name);
		return;
	}
	const char *reason = stop == STATS_STOP_DECIDED ? "decided" : stop == STATS_STOP_SAME ? "same" : NULL;
	store_progress_set(st, job_id, w, (int)look, (int)done, reason);
	if (!reason) {
		log_info("look %u after %u pairs of %s: not decided yet, continuing", look, done, j->workloads[w].name);
		return;
	}
	log_info("look %u after %u pairs of %s: every primary metric is %s; skipping its remaining pairs",
		 look, done, j->workloads[w].name, stop == STATS_STOP_DECIDED ? "decided" : "within its threshold");
	store_steps_skip(st, job_id, w, (int)done);
	for (size_t k = 0; k < n; k++)
		if (steps[k].workload == w && steps[k].pair >= (int)done && steps[k].status == STEP_PENDING)
			steps[k].status = STEP_SKIPPED;
}

/* Workloads that ran all their pairs stopped on the budget. */
void exec_adaptive_finish(struct store *st, const struct job *j, int64_t job_id)
{
	for (size_t w = 0; w < j->n_workloads; w++) {
		int looks, done;
		char reason[32] = "";
		if (store_progress_get(st, job_id, (int)w, &looks, &done, reason, sizeof(reason)) == 0 && reason[0])
			continue;
		store_progress_set(st, job_id, (int)w, (int)job_looks(j), (int)j->pairs, "budget");
	}
}
