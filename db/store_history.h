/* The nightly history's storage (migration 10): for each ended job of a
 * name, a night marker (its status, when it ran, how many runs failed)
 * and, for a job that measured something, one row per workload, metric
 * and compared variant (variant 0 is the baseline). harness/report/
 * history.c computes the rows from the job's report; this file only
 * stores and reads them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

#define STORE_HISTORY_COMMITS 4 /* tracked variants read per night */

/* What a variant that follows a branch resolved that night (the variants
 * table's track columns; another part of kab fills them). */
struct store_history_commit {
	int variant;     /* the variant's index */
	char track[160]; /* "origin mm-unstable" */
	char sha[41];
	char subject[256];
	double date;     /* the commit date; 0: not recorded */
	char event[256]; /* how the head moved ("force-pushed ..."); "": forward or first night */
};

struct store_history_night {
	int64_t job_id;
	double night; /* the job's start; its creation when it never started */
	enum job_status status;
	char reason[256];
	unsigned runs, runs_failed;                                 /* runs recorded, and those not ok */
	struct store_history_commit commits[STORE_HISTORY_COMMITS]; /* read only */
	size_t n_commits;
};

struct store_history_row {
	int64_t job_id;
	double night; /* read only: the night's */
	char workload[128];
	char metric[96];
	int variant; /* >= 1 */
	char variant_name[128], base_name[128];
	int rank; /* the metric's row in the workload's report */
	bool primary;
	unsigned pairs;
	double estimate_pct, ci_lo_pct, ci_hi_pct, p; /* NAN: none (stored NULL) */
	char verdict[16];                             /* stats_verdict_name */
	double median_base, median_variant;           /* NAN: none */
	char unit[32];
	char direction[8]; /* direction_name */
};

/* The job's marker and rows, replacing any it had, in one transaction. */
int store_history_put(struct store *s, const char *name, const struct store_history_night *night,
		      const struct store_history_row *rows, size_t n);
/* Jobs of that name that ended (done, failed, cancelled) and have no
 * marker, or one made when the job had another status; oldest first. */
int store_history_missing(struct store *s, const char *name, int64_t **ret_ids, size_t *ret_n);
/* The names that have such jobs, sorted; freed with store_history_names_free. */
int store_history_missing_names(struct store *s, char ***ret, size_t *ret_n);
/* The name's nights by night, then job id, with their tracked variants. */
int store_history_nights(struct store *s, const char *name, struct store_history_night **ret, size_t *ret_n);

/* Which rows store_history_rows reads: NULL strings and variant < 0
 * match all; primary_only keeps the job's primary metrics. */
struct store_history_filter {
	const char *metric, *workload;
	int variant;
	bool primary_only;
	bool first_rank; /* only each workload's first report row (rank 0) */
};
/* The name's rows by night, job, workload, metric and variant. */
int store_history_rows(struct store *s, const char *name, const struct store_history_filter *f,
		       struct store_history_row **ret, size_t *ret_n);
/* The distinct metric names of the name's rows, sorted; the caller frees
 * each and the array. */
int store_history_metric_names(struct store *s, const char *name, char ***ret, size_t *ret_n);
/* What a name's history is made of, in two numbers that change whenever
 * it does: its night markers and the newest time one was computed (a
 * marker is remade when its job's status changes; rows only come with
 * markers). 0 and 0 when it has none. */
int store_history_version(struct store *s, const char *name, int64_t *ret_nights, double *ret_computed);
/* The job names that have nights, sorted; freed as above. */
int store_history_names(struct store *s, char ***ret, size_t *ret_n);
/* Deletes the markers and rows of one job (job_id > 0) or of a name. */
int store_history_delete_job(struct store *s, int64_t job_id);
int store_history_delete_name(struct store *s, const char *name);
void store_history_names_free(char **names, size_t n);
