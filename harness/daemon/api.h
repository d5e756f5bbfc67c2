/* kabd's /api/v1 handlers. Each opens its own store connection (SQLite
 * WAL: readers do not block the executor), reads, or enqueues through the
 * queue; none acts on the machine. A GET or HEAD reads through a
 * read-only connection: whoever may read (with --public-read, anyone who
 * can reach the port) never makes kabd write. */
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
/* The handler's own store connection, read-only for a GET or HEAD; false
 * with a 500 in rs when it cannot be opened. */
int api_open_store(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs, struct store **ret);
/* /metrics' kab_regressions_open lines */
int api_metrics_regressions(struct store *st, struct strbuf *b);
