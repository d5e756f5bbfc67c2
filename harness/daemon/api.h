/* kabd's /api/v1 handlers. Each opens its own store connection (SQLite
 * WAL: readers do not block the executor), reads, or enqueues through the
 * queue; none acts on the machine. */
#pragma once
#include "harness/daemon/httpd.h"

struct queue;

struct api {
	const char *db_path;
	struct queue *queue;
	const char *web_root;  /* the pages kabd serves; NULL: none */
};

void api_jobs_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_job_create(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_job_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_job_runs(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_job_report(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_job_cancel(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_run_samples(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_health(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_metrics(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
/* GET /api/v1/history?job=NAME[&metric=M][&workload=W][&format=json|text] (api_history.c) */
void api_history(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
/* api_regress.c: change points, their confirmation, acknowledging them */
void api_regressions_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_regressions_atom(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_regression_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_regression_ack(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
struct store;
/* /metrics' kab_regressions_open lines */
int api_metrics_regressions(struct store *st, struct strbuf *b);
