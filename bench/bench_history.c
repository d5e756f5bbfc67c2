/* GET /api/v1/history for one metric over a year of nights, timed through
 * kabd's own handler (api_history: the store opened, the history
 * refreshed, read, change points found, JSON rendered), as kabd runs it
 * for each request; without the HTTP transport, which kabd's bench
 * section measures for the report endpoint.
 *
 * DB is a copy of seed_history's year (365 jobs "nightly", 3 workloads x
 * 2 variants x 5 pairs, ~200 metrics a run). seed_history writes through
 * the store API, which stamps a job's start with the clock; the copy's
 * jobs get their first run's start instead (a night a day), here, by hand.
 * Then: the cold refresh of all nights (once), and REPEAT requests of the
 * history of one metric, against a reference in the same invocation:
 * GET /api/v1/jobs/ID (one job's row, variants and schedule).
 *
 * Usage: bench_history DB [--repeat N]   (DB is modified) */
#include "harness/daemon/api.h"
#include "harness/daemon/httpd.h"
#include "harness/report/history.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_P99_MS 20.0

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *sorted, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n) - 1;
	return sorted[i < n ? i : n - 1];
}

typedef void (*handler_fn)(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);

struct timing {
	double p50, p99, max;
	size_t bytes;
	int status;
};

static int time_handler(struct api *a, handler_fn fn, const struct httpd_req *rq, size_t repeat, struct timing *ret)
{
	double *ms = calloc(repeat, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	*ret = (struct timing){ 0 };
	for (size_t i = 0; i < repeat + 5; i++) {
		struct httpd_resp rs = { 0 };
		double t0 = util_mono_now();
		fn(a, rq, &rs);
		double el = (util_mono_now() - t0) * 1e3;
		if (i >= 5) /* the first requests warm the page cache */
			ms[i - 5] = el;
		ret->status = rs.status;
		ret->bytes = rs.body.len;
		sb_free(&rs.body);
	}
	qsort(ms, repeat, sizeof(*ms), cmp_double);
	ret->p50 = pct(ms, repeat, 0.50);
	ret->p99 = pct(ms, repeat, 0.99);
	ret->max = ms[repeat - 1];
	free(ms);
	return 0;
}

/* A night a day: each seeded job starts when its first run did. */
static int fix_starts(const char *db)
{
	sqlite3 *h = NULL;
	char *err = NULL;
	int rc = sqlite3_open(db, &h);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h,
				  "UPDATE jobs SET started = (SELECT min(started) FROM runs WHERE runs.job_id = jobs.id)"
				  " WHERE EXISTS (SELECT 1 FROM runs WHERE runs.job_id = jobs.id)",
				  NULL, NULL, &err);
	if (rc != SQLITE_OK)
		fprintf(stderr, "bench_history: %s: %s\n", db, err ? err : sqlite3_errstr(rc));
	sqlite3_free(err);
	sqlite3_close(h);
	return rc == SQLITE_OK ? 0 : -EIO;
}

static int cold_refresh(const char *db, const char *name)
{
	struct store *st;
	if (store_open(db, &st) < 0)
		return -EIO;
	size_t added = 0;
	double t0 = util_mono_now();
	int r = history_refresh(st, name, &added);
	double el = util_mono_now() - t0;
	if (r < 0)
		fprintf(stderr, "bench_history: refresh: %s\n", strerror(-r));
	else
		printf("  cold refresh: %zu nights computed in %.1f s (%.0f ms a night; once, when each job ends in kabd)\n",
		       added, el, added ? el * 1e3 / (double)added : 0);
	store_close(st);
	return r;
}

static void row(const char *what, const struct timing *t)
{
	printf("  %-52s %6d %9zu %8.2f %8.2f %8.2f\n", what, t->status, t->bytes, t->p50, t->p99, t->max);
}

int main(int argc, char **argv)
{
	const char *db = NULL;
	unsigned long repeat = 300;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
			uint64_t v;
			if (util_parse_u64(argv[++i], &v) < 0 || v < 10 || v > 100000) {
				fprintf(stderr, "bench_history: --repeat wants 10 to 100000\n");
				return 2;
			}
			repeat = (unsigned long)v;
		} else if (!db && argv[i][0] != '-') {
			db = argv[i];
		} else {
			fprintf(stderr, "usage: bench_history DB [--repeat N]\n");
			return 2;
		}
	}
	if (!db) {
		fprintf(stderr, "usage: bench_history DB [--repeat N]\n");
		return 2;
	}
	log_quiet = true;
	if (fix_starts(db) < 0 || cold_refresh(db, "nightly") < 0)
		return 1;
	struct api a = { .db_path = db };
	static const char *const one[] = { "job", "nightly", "metric", "stress-ng.bogo_ops_per_s", NULL };
	static const char *const text[] = { "job",    "nightly", "metric", "stress-ng.bogo_ops_per_s",
					    "format", "text",    NULL };
	static const char *const dflt[] = { "job", "nightly", NULL };
	struct httpd_req rq_one = { .method = "GET", .path = "/history", .args = one };
	struct httpd_req rq_text = { .method = "GET", .path = "/history", .args = text };
	struct httpd_req rq_dflt = { .method = "GET", .path = "/history", .args = dflt };
	struct httpd_req rq_job = { .method = "GET", .path = "/jobs/183", .id = 183 };
	struct timing t_one, t_text, t_dflt, t_job;
	if (time_handler(&a, api_history, &rq_one, repeat, &t_one) < 0 ||
	    time_handler(&a, api_history, &rq_text, repeat, &t_text) < 0 ||
	    time_handler(&a, api_history, &rq_dflt, repeat, &t_dflt) < 0 ||
	    time_handler(&a, api_job_get, &rq_job, repeat, &t_job) < 0)
		return 1;
	printf("\n  %-52s %6s %9s %8s %8s %8s\n",
	       "handler, "
	       "365 nights, 3 workloads",
	       "status", "bytes", "p50 ms", "p99 ms", "max ms");
	row("history?job=nightly&metric=stress-ng.bogo_ops_per_s", &t_one);
	row("  the same, format=text", &t_text);
	row("history?job=nightly (no metric: first rows, 3 series)", &t_dflt);
	row("reference: jobs/183 (one job and its schedule)", &t_job);
	printf("  (%lu requests each, after 5 to warm up; each opens the store and refreshes, as kabd does)\n\n", repeat);
	bool ok = t_one.status == 200 && t_one.p99 < TARGET_P99_MS;
	printf("  %s  history of one metric over a year: p99 %.2f ms < %.0f ms (HTTP %d)\n", ok ? "PASS" : "MISS",
	       t_one.p99, TARGET_P99_MS, t_one.status);
	return t_one.status == 200 ? 0 : 1;
}
