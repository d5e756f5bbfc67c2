/* kabd's /api/v1 handlers. Each opens its own store connection (SQLite
 * WAL: readers do not block the executor), reads, or enqueues through the
 * queue; none acts on the machine. A GET or HEAD reads through a
 * read-only connection: whoever may read (with --public-read, anyone who
 * can reach the port) never makes kabd write. */
#pragma once
#include "harness/daemon/httpd.h"

struct queue;
struct lab_member;

struct api {
	const char *db_path;
	struct queue *queue;
	const char *web_root;  /* the pages kabd serves; NULL: none */
	struct lab_member *lab; /* the lab kabd is a member of; NULL: none */
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
/* api_bisect.c: bisections asked for (on a regression or a job), shown,
 * listed and cancelled */
void api_regression_bisect(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_bisections_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_bisections_create(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_bisection_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_bisection_cancel(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
/* api_lab.c: the lab's machines and jobs (kabd in a lab), a job submitted to it */
void api_lab_machines(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_lab_jobs(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_lab_job_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_lab_submit(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
/* the lab-wide reads: a job's uploaded report, one machine's history, the
 * change points machines uploaded */
void api_lab_job_report(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_lab_history(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
void api_lab_regressions(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs);
struct strbuf;
struct store;
/* /metrics' lab lines: the uploads pending here, and from the lab its
 * queue's depth, each machine's state and its last heartbeat's age */
void api_metrics_lab(struct api *a, struct store *st, struct strbuf *b);
struct diags;
/* 400 (413 for a text over the size budget) with a job's problems, each
 * "LINE: message" (api.c) */
void api_reply_diags(struct httpd_resp *rs, int r, const struct diags *d);
/* The handler's own store connection, read-only for a GET or HEAD; false
 * with a 500 in rs when it cannot be opened. */
int api_open_store(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs, struct store **ret);
/* /metrics' kab_regressions_open lines */
int api_metrics_regressions(struct store *st, struct strbuf *b);
/* Appends s as a /metrics label value (api_regress.c), for every label
 * whose text kab did not write (job and metric names, lab host names):
 * control characters and bytes of no UTF-8 shown first as kab's escaper
 * shows them (esc.h; a scrape wants UTF-8, a terminal may show it), then
 * backslash and quote escaped as the exposition format says (no newline
 * is left to escape). */
void api_metrics_label(struct strbuf *b, const char *s);
