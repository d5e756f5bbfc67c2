/* What kabd does once a job has ended, for nightly tracking: the job's
 * name's history is brought up to date, new change points on primary
 * metrics get confirmation jobs queued behind the nightly work (the last
 * good night's variant against the first bad night's, paired, ABBA,
 * adaptive pairs), and a confirmation job that ended settles its changes:
 * each confirmed when its paired verdict for the metric is worse or better
 * in the direction the history moved, not confirmed otherwise. Runs on the
 * executor's thread, between jobs.
 *
 * One confirmation job serves every change of one night pair and compared
 * variant (a kernel change moves many metrics of many workloads on the
 * same night), and runs only the workloads that changed; at most
 * NIGHTLY_CONFIRM_MAX_PER_NIGHT are queued after a night, the largest
 * changes first. The changes over the cap are not recorded: the next
 * night's pass finds them again (they are still in the history) and
 * queues them if there is room, and a log line says which waited. */
#pragma once
#include <stddef.h>
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
/* Confirmation jobs queued after one night, at most: each runs its
 * workloads for 6 to 16 pairs, so a night whose kernel moved everything
 * (a job of many variants) cannot queue days of confirmations. */
#define NIGHTLY_CONFIRM_MAX_PER_NIGHT 4u

/* The changes of one confirmation: changes[first .. first + n) share the
 * night pair and the compared variant. */
struct nightly_group {
	size_t first, n;
	double size; /* the largest |pct| among them */
};
/* Sorts changes by night pair, variant, workload and metric and groups
 * them, the group with the largest change first (then the newest bad
 * night). *ret is malloc'd; 0 groups for 0 changes. */
int nightly_group_changes(struct nightly_change *changes, size_t n, struct nightly_group **ret, size_t *ret_n);

void nightly_after_job(struct queue *q, struct store *st, int64_t job_id);
/* Records changes c[0..n) (one group: a night pair and variant; those
 * already known are skipped) and queues one confirmation job that runs
 * their workloads: 1 queued, 0 all known already, < 0 on error (the rows
 * then say why). */
int nightly_confirm(struct queue *q, struct store *st, const struct nightly_change *c, size_t n);
/* Settles the changes that wait on confirmation job job_id; -ENOENT when
 * none does. */
int nightly_settle(struct store *st, int64_t job_id);
