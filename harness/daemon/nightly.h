/* What kabd does once a job has ended, for nightly tracking: the job's
 * name's history is brought up to date, a new change point on a primary
 * metric gets a confirmation job queued behind the nightly work (the last
 * good night's variant against the first bad night's, paired, ABBA,
 * adaptive pairs), and a confirmation job that ended settles its change:
 * confirmed when its paired verdict for the metric is worse or better in
 * the direction the history moved, not confirmed otherwise. Runs on the
 * executor's thread, between jobs. */
#pragma once
#include <stdint.h>

struct queue;
struct store;

/* A change point as the history found it. Strings may be NULL. */
struct nightly_change {
	const char *name, *workload, *metric, *direction;
	int variant;               /* the nights' compared variant */
	int64_t good_job, bad_job; /* the last night before, the first after */
	double good_night, bad_night;
	const char *track, *good_sha, *bad_sha, *good_subject, *bad_subject;
	double mean_before, mean_after; /* the nightly estimates' means on each side, % */
	double pct, p;                  /* mean_after - mean_before in points, its significance */
};

/* Confirmation jobs: pairs = adaptive MIN..MAX step STEP. */
#define NIGHTLY_CONFIRM_MIN_PAIRS 6u
#define NIGHTLY_CONFIRM_MAX_PAIRS 16u
#define NIGHTLY_CONFIRM_STEP 2u
/* A change point whose first bad night is this close (in nights) to a
 * recorded one is that one, moved by the nights that came after it. */
#define NIGHTLY_SAME_CHANGE_NIGHTS 2u

void nightly_after_job(struct queue *q, struct store *st, int64_t job_id);
/* Records the change and queues its confirmation (unless it is known):
 * 1 queued, 0 known already, < 0 on error (the row then says why). */
int nightly_confirm(struct queue *q, struct store *st, const struct nightly_change *c);
/* Settles the change that waits on confirmation job job_id; -ENOENT when
 * none does. */
int nightly_settle(struct store *st, int64_t job_id);
