/* GET /api/v1/history?job=NAME[&metric=M][&workload=W][&format=json|text]:
 * the nightly history of a job name (harness/report/history.h). Every
 * parameter is checked at the door: known keys only, each once, names
 * of the characters a job file allows. It only reads: kabd's executor
 * adds a job's night when the job ends (and, when it is idle, any night
 * that is missing), never a reader. */
#include "harness/daemon/api.h"
#include "harness/daemon/body_cache.h"
#include "harness/report/history.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void store_closep(struct store **s)
{
	store_close(*s);
}

/* The parameters, checked; false with the 400 in rs. */
static bool history_params(const struct httpd_req *rq, struct httpd_resp *rs, struct history_query *q,
			   const char **ret_job, bool *ret_text)
{
	static const char *const keys[] = { "job", "metric", "workload", "format" };
	char bad[80];
	int r = httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad));
	if (r == -EEXIST) {
		httpd_error(rs, 400, "parameter \"%s\" is given twice: give it once", bad);
		return false;
	}
	if (r < 0) {
		httpd_error(rs, 400, "unknown parameter \"%s\" (history takes job, metric, workload and format)", bad);
		return false;
	}
	const char *job = httpd_query(rq, "job"), *fmt = httpd_query(rq, "format");
	if (!job || !*job) {
		httpd_error(rs, 400, "job=NAME is required: the name of the nightly job (GET /api/v1/jobs lists jobs)");
		return false;
	}
	if (!history_name_ok(job)) {
		httpd_error(rs, 400, "job must be a job's name: 1 to %d letters, digits, '.', '_' and '-'", HISTORY_NAME_MAX);
		return false;
	}
	q->metric = httpd_query(rq, "metric");
	if (q->metric && !history_metric_ok(q->metric)) {
		httpd_error(rs, 400,
			    "metric must be a metric's name (\"stress-ng.bogo_ops_per_s\"): 1 to %d letters, "
			    "digits and ._-:+/[]",
			    HISTORY_METRIC_MAX);
		return false;
	}
	q->workload = httpd_query(rq, "workload");
	if (q->workload && !history_name_ok(q->workload)) {
		httpd_error(rs, 400, "workload must be a workload's name: 1 to %d letters, digits, '.', '_' and '-'", HISTORY_NAME_MAX);
		return false;
	}
	if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
		httpd_error(rs, 400, "unknown format (history formats: json, text)");
		return false;
	}
	*ret_job = job;
	*ret_text = fmt && strcmp(fmt, "text") == 0;
	return true;
}

/* Rendered histories, kept until a night of the name is added: a year of one
 * metric is ~12 ms of work (its rows, the detector, ~470 KB of JSON) that
 * is the same for every reader between two nights, and several readers
 * at once on 2 CPUs beside a running job queue behind each other. The key
 * is the database, the query and the format; the version is the name's
 * night markers (store_history_version). */
static struct body_cache history_cache = BODY_CACHE_INIT;

/* false when the key does not fit: that query is not cached */
static bool cache_key(const char *db, const char *job, const struct history_query *q, bool text, char *buf, size_t len)
{
	/* the names passed history_*_ok: no '\n' in them */
	int n = snprintf(buf, len, "%s\n%s\n%s\n%s\n%d", db, job, q->metric ? q->metric : "", q->workload ? q->workload : "", text);
	return n >= 0 && (size_t)n < len;
}

static void reply(struct httpd_resp *rs, char *buf, size_t len, bool text)
{
	httpd_body_take(rs, buf, len, text ? "text/plain; charset=utf-8" : "application/json");
}

void api_history(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct history_query q = { 0 };
	const char *job;
	bool text;
	if (!history_params(rq, rs, &q, &job, &text))
		return;
	__attribute__((cleanup(store_closep))) struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	char key[BODY_CACHE_KEY], *buf = NULL;
	size_t len = 0;
	int64_t nights = -1;
	double computed = 0;
	if (!cache_key(a->db_path, job, &q, text, key, sizeof(key)) || store_history_version(st, job, &nights, &computed) < 0)
		nights = -1; /* no caching */
	else if (body_cache_get(&history_cache, key, nights, computed, &buf, &len)) {
		reply(rs, buf, len, text);
		return;
	}
	struct history *h = NULL;
	int r = history_load(st, job, &q, &h);
	if (r == -ENOENT) {
		httpd_error(rs, 404, "no nightly history for job %s: no job of that name has ended", job);
		return;
	}
	if (r < 0) {
		httpd_error(rs, 500, "the history of %s could not be read: %s", job, strerror(-r));
		return;
	}
	if (q.metric && h->n_series == 0) {
		httpd_error(rs, 404, "job %s has no history of metric %s (GET /api/v1/history?job=%s lists its %zu metrics)",
			    job, q.metric, job, h->n_metrics);
		history_free(h);
		return;
	}
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		history_free(h);
		httpd_error(rs, 500, "out of memory");
		return;
	}
	r = text ? history_render_text(h, true, f) : history_render_json(h, f);
	history_free(h);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		free(buf);
		httpd_error(rs, 500, "the history of %s could not be rendered: %s", job, strerror(-r));
		return;
	}
	if (nights >= 0)
		body_cache_put(&history_cache, key, nights, computed, buf, len);
	reply(rs, buf, len, text);
}
