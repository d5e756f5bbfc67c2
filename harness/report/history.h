/* The nightly history of a job name: per workload, metric and compared
 * variant, one point a night (the paired estimate against the baseline
 * with its CI, each side's median, the commit a tracked variant ran),
 * gaps for nights that failed or measured nothing and for calendar days
 * with no job, and the change points of the series (stats/changepoint.h)
 * mapped back to nights and commits. Rows are computed once a job has
 * ended (history_refresh), from the same report the job's own report
 * shows; history_load reads them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store_history.h"

struct store;

#define HISTORY_NAME_MAX 127 /* a job's name, as the store keeps it */
#define HISTORY_METRIC_MAX 95

/* Computes the rows of every ended job of that name that has none (or
 * whose status changed since): done jobs from their report (variant 0 is
 * the baseline), failed and cancelled jobs as nights without estimates.
 * Cheap when nothing is new (one indexed query). ret_added: the jobs
 * computed (may be NULL). */
int history_refresh(struct store *st, const char *name, size_t *ret_added);
/* The same for one job (its name's history): what kabd calls when a job ends. */
int history_refresh_job(struct store *st, int64_t job_id);
/* history_refresh of every name with such a job: those that ended before
 * kabd started, were cancelled while queued, or whose refresh failed.
 * ret_names, ret_added: the names and jobs computed (may be NULL). */
int history_refresh_all(struct store *st, size_t *ret_names, size_t *ret_added);

/* A point's state, X(NAME, word): the word is the "state" of the JSON
 * (/api/history, kab history --format json) and of the text.
 * MEASURED: an estimate with its CI. NO_ESTIMATE: the job ended done, but
 * this series has no estimate that night. FAILED: the job failed (or has
 * a status this kab does not know). MISSED: calendar days with no job
 * between two nights. */
/* clang-format off */
#define HISTORY_POINT_STATE_LIST(X) \
	X(HISTORY_MEASURED, "measured") \
	X(HISTORY_NO_ESTIMATE, "no-estimate") \
	X(HISTORY_FAILED, "failed") \
	X(HISTORY_CANCELLED, "cancelled") \
	X(HISTORY_MISSED, "missed")
/* clang-format on */
#define HISTORY_POINT_STATE_ITEM(e, word) e,
enum history_point_state { HISTORY_POINT_STATE_LIST(HISTORY_POINT_STATE_ITEM) HISTORY_POINT_STATE_N };
const char *history_point_state_name(enum history_point_state s); /* "measured", ...; "unknown" */
/* The state of word s: 0, or -EINVAL (*ret untouched) for another word. */
int history_point_state_parse(const char *s, enum history_point_state *ret);

struct history_point {
	enum history_point_state state;
	size_t night;       /* index into history.nights; SIZE_MAX for missed days */
	double missed_from; /* missed: noon of the first day missed (local time) */
	unsigned missed_days;
	const struct store_history_commit *commit; /* the tracked variant's; NULL: none */
	bool force_pushed;                         /* the tracked branch moved backwards or sideways that night */
	const struct store_history_row *row;       /* NULL: no row that night */
};

/* A change point: where the series of measured nights shifted. Indexes
 * are into the series' points. */
struct history_change {
	size_t last_good, first_bad;        /* the measured nights on each side */
	size_t before_first, after_last;    /* the segments the means are over */
	size_t nights_before, nights_after; /* measured nights in them */
	double mean_before, mean_after;     /* of the nightly estimate (%) */
	double pct;                         /* 100 (after - before) / |before|; NAN if before is 0 */
	double delta_pts;                   /* after - before, in percentage points */
	double p;
};

struct history_series {
	const struct store_history_row *key; /* its newest row: workload, metric, variant, unit, ... */
	struct history_point *points;
	size_t n_points;
	size_t measured;
	bool enough;    /* false: not enough nights, no change points */
	char note[160]; /* why not enough, or why detection did not run */
	struct history_change *changes;
	size_t n_changes;
};

struct history {
	char name[HISTORY_NAME_MAX + 1];
	char metric[HISTORY_METRIC_MAX + 1]; /* the one asked for; "" for the default view */
	struct store_history_night *nights;  /* by night */
	size_t n_nights, n_failed;           /* failed or cancelled */
	size_t n_measured;                   /* the most measured nights of a series */
	bool enough;                         /* some series has enough nights for change points */
	char note[160];                      /* why not: "not enough nights: ..." */
	struct store_history_row *rows;
	size_t n_rows;
	struct history_series *series;
	size_t n_series;
	char **metrics; /* every metric with rows, sorted */
	size_t n_metrics;
};

/* What history_load reads: metric NULL shows the job's primary metrics,
 * or each workload's first report row when it declares none. */
struct history_query {
	const char *metric;
	const char *workload; /* NULL: all */
};
/* Refreshes nothing: call history_refresh first. -ENOENT when the name
 * has no nights, -EINVAL for a name or metric history_*_ok refuses; a
 * metric with no rows gives a history without series. */
int history_load(struct store *st, const char *name, const struct history_query *q, struct history **ret);
void history_free(struct history *h);
/* Where a history's nights, rows and metric names come from, each as its
 * store_history_* namesake gives them (arrays the history takes and frees:
 * malloc'd, the names each malloc'd): kabd's own store for history_load,
 * or one machine's nights in a lab (harness/daemon/api_lab.c). 0 or
 * -errno. */
struct history_source {
	void *ctx;
	int (*nights)(void *ctx, const char *name, struct store_history_night **ret, size_t *ret_n);
	int (*rows)(void *ctx, const char *name, const struct store_history_filter *f, struct store_history_row **ret, size_t *ret_n);
	int (*metric_names)(void *ctx, const char *name, char ***ret, size_t *ret_n);
};
/* history_load from another source: the same series and change points. */
int history_load_from(const struct history_source *src, const char *name, const struct history_query *q, struct history **ret);

/* The door checks of a name from a user or the network: a job name is 1
 * to HISTORY_NAME_MAX letters, digits, '.', '_' and '-' (what a job file
 * allows, and no more); a metric 1 to HISTORY_METRIC_MAX of those and
 * ":+/[]". */
bool history_name_ok(const char *s);
bool history_metric_ok(const char *s);

/* history_render.c: the text table (one row a night, then the change
 * points; commit subjects, metric names and units escaped, esc.h) and the
 * JSON GET /api/v1/history serves. */
int history_render_text(const struct history *h, bool utf8, FILE *out);
int history_render_json(const struct history *h, FILE *out);
