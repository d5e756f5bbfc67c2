/* A job's life, with one owner (DESIGN.md, "The states"): every change of
 * a job's status is made here, checked against the store's table of which
 * status may follow which (db/store.h, job_transition_allowed). The verbs
 * are submit, run, resume and cancel; a run's end is decided once, in
 * jl_run, which then calls the caller's after-job work (history, nightly
 * confirmation). make lint refuses a status write anywhere else. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct diags;
struct job;

/* A set of statuses a job may be in before a transition. */
#define JL_FROM(s) (1u << (s))
/* What a job is started or resumed from: waiting, left running by a
 * killed kab, or (kab run --resume) failed or cancelled. */
#define JL_STARTABLE \
	(JL_FROM(JOB_QUEUED) | JL_FROM(JOB_INTERRUPTED) | JL_FROM(JOB_RUNNING) | JL_FROM(JOB_FAILED) | JL_FROM(JOB_CANCELLED))
/* What a job fails from: any status but done and cancelled (a failed job
 * fails again, with the new reason). */
#define JL_FAILABLE (JL_FROM(JOB_QUEUED) | JL_FROM(JOB_INTERRUPTED) | JL_FROM(JOB_RUNNING) | JL_FROM(JOB_FAILED))

/* Writes the job's status to, with reason (NULL: none), when its status is
 * one of from. Every status in from must be allowed to become to by the
 * table: a caller asking for a change the table forbids is refused
 * (-EINVAL, logged) and nothing is written. Then the store's check, in
 * the same statement as the write: -EPERM (logged) when the row's status
 * is not one of from or may not become to; -ENOENT: no such job. */
int jl_transition(struct store *st, int64_t job_id, unsigned from, enum job_status to, const char *reason);
/* The running job's reason, while it runs (building, switching kernels). */
int jl_note(struct store *st, int64_t job_id, const char *reason);

/* Plans j and stores it with its schedule as queued, in one transaction.
 * submitter: who asked, as the job records it (NULL: kab run's). Its id
 * in ret_id, its number of steps in ret_n (NULL: not wanted). */
int jl_submit(struct store *st, const struct job *j, const char *submitter, int64_t *ret_id, size_t *ret_n);
/* The same for a lab's job this machine claimed: the claim (store_lab.h)
 * goes in with the job, in the same transaction. */
struct store_lab_claim;
int jl_submit_claimed(struct store *st, const struct job *j, const char *submitter, const struct store_lab_claim *lab,
		      int64_t *ret_id, size_t *ret_n);

/* What the caller of jl_run adds to a job's end. */
struct jl_hooks {
	/* The job was stopped (a signal, a cancel, kabd stopping): the status
	 * it ends in (cancelled or interrupted) and why, in reason (len
	 * bytes). NULL: cancelled, with the stop's own reason (kab run). */
	enum job_status (*stopped)(void *ctx, int64_t job_id, char *reason, size_t len);
	/* Once the end is written, whatever it is (interrupted included):
	 * the after-job work. now: the job's status as stored. NULL: none. */
	void (*after)(void *ctx, struct store *st, int64_t job_id, const char *name, enum job_status now);
	void *ctx;
};
/* Runs the stored job's pending steps (exec_job) and writes how the run
 * ended: done or failed (as the executor found), cancelled or interrupted
 * when stopped (h->stopped), interrupted to go on after a reboot, failed
 * when the executor could not run it and left it unfinished; then
 * h->after. h may be NULL. Returns exec_job's value. */
int jl_run(struct store *st, const struct job *j, int64_t job_id, const struct jl_hooks *h);

/* A stored job to run again (kab run --resume, kabd's next job), parsed
 * from its text. -ENOENT: no such job; -EALREADY: it is done; -EPROTO:
 * its status is one this kab does not know; -EINVAL: its text no longer
 * parses (the diagnostics in d). was (len bytes, may be NULL): its status and
 * reason. Writes nothing. */
int jl_resume(struct store *st, int64_t job_id, struct job **ret, char *was, size_t len, struct diags *d);

/* Cancels a job that is not running: queued or interrupted. -EALREADY
 * when it is finished (its status in ret_status, len bytes), -ENOENT: no
 * such job, -EPERM: its status may not become cancelled. */
int jl_cancel(struct store *st, int64_t job_id, const char *reason, char *ret_status, size_t len);
