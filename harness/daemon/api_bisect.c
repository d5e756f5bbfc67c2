/* kabd's /api/v1/bisections and /regressions/{id}/bisect: a bisection
 * asked for, shown, listed and cancelled (api.h, bisect_life.h). The
 * handlers check and record; the executor's thread advances the
 * bisection and runs git bisect in kab's clone. */
#include "harness/daemon/api.h"
#include "harness/daemon/api_page.h"
#include "harness/daemon/bisect_life.h"
#include "harness/daemon/queue.h"
#include "harness/job/job.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void reply(struct httpd_resp *rs, json_t *v, int status)
{
	sb_free(&rs->body);
	if (jw_dump_sb(&rs->body, v, 0) < 0) {
		httpd_error(rs, 500, "out of memory");
		return;
	}
	sb_puts(&rs->body, "\n");
	rs->content_type = "application/json";
	rs->status = status;
}

/* What bisect_create said, as HTTP: 201 a new one, 200 the one that runs
 * (or ended done) already; the input's faults with the field they name;
 * 409 a fetch that must wait for a build of the tree, 502 a fetch that
 * failed (the remote is the upstream kabd could not reach). */
static void created(struct api *a, struct httpd_resp *rs, int r, int64_t id, const struct strbuf *err)
{
	const char *msg = err->buf ? err->buf : strerror(r < 0 ? -r : EINVAL);
	switch (r) {
	case 0:
		queue_bisect_due(a->queue);
		reply(rs, json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", bisect_state_name(BISECT_RUNNING)), 201);
		return;
	case 1:
		reply(rs, json_pack("{s:I, s:b, s:o}", "id", (json_int_t)id, "existing", 1, "message", jw_str(msg)), 200);
		return;
	case -ENOENT: httpd_error(rs, 404, "%s", msg); return;
	case -EPERM:
	case -EBUSY:
	case -ENODEV: httpd_error(rs, 409, "%s", msg); return;
	case -EHOSTUNREACH: httpd_error(rs, 502, "%s", msg); return;
	case -EINVAL: httpd_error(rs, 400, "%s", msg); return;
	default: httpd_error(rs, 500, "the bisection could not be recorded: %s; see kabd's log", msg); return;
	}
}

static void create(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs, const struct bisect_ask *ask)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct strbuf err = { 0 };
	int64_t id = 0;
	int r = bisect_create(st, queue_bisect_env(a->queue), ask, &id, &err);
	store_close(st);
	created(a, rs, r, id, &err);
	sb_free(&err);
}

/* boots=N: the bisection's budget of boots; absent: the job's bisect.boots. */
static int parse_boots(const struct httpd_req *rq, struct httpd_resp *rs, unsigned *ret)
{
	const char *v = httpd_query(rq, "boots");
	uint64_t n = 0;
	*ret = 0;
	if (!v)
		return 0;
	if (util_parse_u64(v, &n) < 0 || n < 1 || n > JOB_BISECT_BOOTS_MAX) {
		httpd_error(rs, 400, "boots: \"%.40s\" is not a budget of boots: give a whole number from 1 to %u", v,
			    JOB_BISECT_BOOTS_MAX);
		return -EINVAL;
	}
	*ret = (unsigned)n;
	return 0;
}

void api_regression_bisect(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "boots" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "%.60s: not a parameter of a regression's bisection, or given twice (boots)", bad);
		return;
	}
	struct bisect_ask ask = { .regression = rq->id, .submitter = rq->submitter };
	if (parse_boots(rq, rs, &ask.boots) < 0)
		return;
	create(a, rq, rs, &ask);
}

void api_bisections_create(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "job", "good", "bad", "metric", "workload", "boots" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "%.60s: not a parameter of a bisection, or given twice (job, good, bad, metric, workload, boots)",
			    bad);
		return;
	}
	const char *job = httpd_query(rq, "job");
	int64_t job_id = 0;
	if (!job || util_parse_i64(job, &job_id) < 0 || job_id <= 0) {
		httpd_error(rs, 400, "job: %s: give the id of a job whose variants are kernel = build",
			    job ? "not a job id" : "missing");
		return;
	}
	unsigned boots;
	if (parse_boots(rq, rs, &boots) < 0)
		return;
	const struct bisect_ask ask = {
		.boots = boots,
		.job = job_id,
		.good = httpd_query(rq, "good"),
		.bad = httpd_query(rq, "bad"),
		.metric = httpd_query(rq, "metric"),
		.workload = httpd_query(rq, "workload"),
		.submitter = rq->submitter,
	};
	create(a, rq, rs, &ask);
}

void api_bisections_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "limit", "after" };
	struct api_page page;
	if (api_page_parse(rq, keys, ARRAY_SIZE(keys), &page, rs) < 0)
		return;
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_bisect *v = NULL;
	size_t n = 0;
	int r = store_bisect_page(st, page.after, page.limit + 1, &v, &n);
	store_close(st);
	if (r < 0) {
		httpd_error(rs, 500, "cannot read the bisections; see kabd's log");
		return;
	}
	bool more = n > page.limit;
	json_int_t next = more && page.limit ? (json_int_t)v[page.limit - 1].id : 0;
	json_t *rows = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = i < page.limit && rows ? json_object() : NULL;
		if (o) {
			jw_set(o, "id", json_integer(v[i].id));
			jw_set(o, "state", jw_str(bisect_state_name(v[i].state)));
			jw_set(o, "reason", jw_str_opt(v[i].reason));
			jw_set(o, "regression", v[i].regression > 0 ? json_integer(v[i].regression) : json_null());
			jw_set(o, "job", json_integer(v[i].source_job));
			jw_set(o, "good", jw_str(v[i].good));
			jw_set(o, "bad", jw_str(v[i].bad));
			jw_set(o, "workload", jw_str(v[i].workload));
			jw_set(o, "metric", jw_str(v[i].metric));
			json_array_append_new(rows, o);
		}
		store_bisect_clear(&v[i]);
	}
	free(v);
	reply(rs, json_pack("{s:o, s:o}", "bisections", rows, "next_after", next ? json_integer(next) : json_null()), 200);
}

void api_bisection_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	sb_free(&rs->body);
	int r = bisect_json(st, rq->id, &rs->body);
	store_close(st);
	if (r == -ENOENT)
		httpd_error(rs, 404, "no bisection %lld", (long long)rq->id);
	else if (r < 0)
		httpd_error(rs, 500, "cannot read bisection %lld; see kabd's log", (long long)rq->id);
	else {
		sb_puts(&rs->body, "\n");
		rs->content_type = "application/json";
		rs->status = 200;
	}
}

void api_bisection_cancel(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct strbuf err = { 0 };
	int r = bisect_cancel(st, queue_bisect_env(a->queue), rq->id, rq->submitter, &err);
	store_close(st);
	const char *msg = err.buf ? err.buf : "";
	if (r == -ENOENT)
		httpd_error(rs, 404, "no bisection %lld", (long long)rq->id);
	else if (r == -EALREADY)
		httpd_error(rs, 409, "%s", msg);
	else if (r < 0)
		httpd_error(rs, 500, "cannot cancel bisection %lld: %s", (long long)rq->id, msg);
	else
		reply(rs, json_pack("{s:I, s:s}", "id", (json_int_t)rq->id, "state", bisect_state_name(BISECT_CANCELLED)), 200);
	sb_free(&err);
}
