/* A job's life (joblife.h): the one place a job's status is written. */
#include "harness/exec/joblife.h"
#include "harness/exec/exec_priv.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int jl_transition(struct store *st, int64_t job_id, unsigned from, enum job_status to, const char *reason)
{
	for (int f = 0; f < JOB_STATUS_N; f++)
		if ((from & JL_FROM(f)) && !job_transition_allowed((enum job_status)f, to)) {
			log_error("job %lld: a %s job cannot become %s (a job's life, db/store.h); its status is kept",
				  (long long)job_id, job_status_name((enum job_status)f), job_status_name(to));
			return -EINVAL;
		}
	if (!from || to < 0 || to >= JOB_STATUS_N)
		return -EINVAL;
	return store_job_set_status_from(st, job_id, from, to, reason);
}

int jl_note(struct store *st, int64_t job_id, const char *reason)
{
	return jl_transition(st, job_id, JL_FROM(JOB_RUNNING), JOB_RUNNING, reason);
}

int jl_submit(struct store *st, const struct job *j, const char *submitter, int64_t *ret_id, size_t *ret_n)
{
	return jl_submit_claimed(st, j, submitter, NULL, ret_id, ret_n);
}

int jl_submit_claimed(struct store *st, const struct job *j, const char *submitter, const struct store_lab_claim *lab,
		      int64_t *ret_id, size_t *ret_n)
{
	struct store_step *steps = NULL;
	size_t n = 0;
	int r = exec_plan(j, &steps, &n);
	if (r < 0)
		return r;
	r = job_store_submit(st, j, submitter, steps, n, lab, ret_id);
	free(steps);
	if (r >= 0 && ret_n)
		*ret_n = n;
	return r;
}

/* The end of a stopped run: its status and reason, and the statuses it
 * may be written from (a stop can come before the job was marked
 * running: while it waited, or was being resumed). */
static enum job_status stop_end(const struct jl_hooks *h, int64_t job_id, const struct exec_end *end, char *reason,
				size_t len, unsigned *from)
{
	enum job_status to;
	if (end->rebooting) {
		snprintf(reason, len, "rebooting into the next boot's kernel; kabd resumes the job after the boot");
		to = JOB_INTERRUPTED;
	} else if (h && h->stopped) {
		to = h->stopped(h->ctx, job_id, reason, len);
	} else {
		const char *why = exec_stop_why();
		if (why[0])
			snprintf(reason, len, "%s; its finished runs are kept and kab run --resume %lld continues the job",
				 why, (long long)job_id);
		else
			snprintf(reason, len, "interrupted by a signal");
		to = JOB_CANCELLED;
	}
	*from = JL_FROM(JOB_RUNNING) | JL_FROM(JOB_INTERRUPTED);
	if (to == JOB_CANCELLED)
		*from |= JL_FROM(JOB_QUEUED);
	return to;
}

int jl_run(struct store *st, const struct job *j, int64_t job_id, const struct jl_hooks *h)
{
	struct exec_end end = { 0 };
	int r = exec_job(st, j, job_id, &end);
	struct store_job sj = { .status = JOB_STATUS_UNKNOWN };
	char reason[768];
	if (r == -EINTR) {
		unsigned from;
		enum job_status to = stop_end(h, job_id, &end, reason, sizeof(reason), &from);
		jl_transition(st, job_id, from, to, reason);
	} else if (r < 0 && store_job_info(st, job_id, &sj) == 0 && !job_status_finished(sj.status) && sj.status != JOB_STATUS_UNKNOWN) {
		/* the executor returned before recording an end: never pick it again */
		jl_transition(st, job_id, JL_FAILABLE, JOB_FAILED, "the executor could not run the job; see the log");
	}
	/* the end as written, read once for the note and the after-job hook */
	bool known = store_job_info(st, job_id, &sj) == 0;
	if (known && end.note[0] && sj.status != JOB_STATUS_UNKNOWN) {
		snprintf(reason, sizeof(reason), "%.500s%s%s", sj.reason, sj.reason[0] ? "; " : "", end.note);
		jl_transition(st, job_id, JL_FROM(sj.status), sj.status, reason);
		known = store_job_info(st, job_id, &sj) == 0;
	}
	if (h && h->after)
		h->after(h->ctx, st, job_id, j->name, known ? sj.status : JOB_STATUS_UNKNOWN);
	return r;
}

int jl_resume(struct store *st, int64_t job_id, struct job **ret, char *was, size_t len, struct diags *d)
{
	struct store_job sj;
	if (store_job_get(st, job_id, &sj) < 0)
		return -ENOENT;
	int r = 0;
	struct job *j = NULL;
	if (sj.status == JOB_DONE)
		r = -EALREADY;
	else if (sj.status == JOB_STATUS_UNKNOWN)
		r = -EPROTO;
	else if (job_parse_string(sj.file, sj.text, &j, d) < 0)
		r = -EINVAL;
	if (r < 0)
		job_free(j);
	else
		*ret = j;
	if (was)
		snprintf(was, len, "%s%s%s", job_status_name(sj.status), sj.reason[0] ? ": " : "", sj.reason);
	store_job_clear(&sj);
	return r;
}

int jl_cancel(struct store *st, int64_t job_id, const char *reason, char *ret_status, size_t len)
{
	struct store_job sj;
	if (store_job_info(st, job_id, &sj) < 0)
		return -ENOENT;
	if (job_status_finished(sj.status)) {
		snprintf(ret_status, len, "%s", job_status_name(sj.status));
		return -EALREADY;
	}
	return jl_transition(st, job_id, JL_FROM(JOB_QUEUED) | JL_FROM(JOB_INTERRUPTED), JOB_CANCELLED, reason);
}
