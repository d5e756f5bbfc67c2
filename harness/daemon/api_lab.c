/* kabd's /api/v1/lab routes, when kabd is a member of a lab: the lab's
 * machines and jobs read from its PostgreSQL database, and a job
 * submitted to it (with the same right as a local submit: httpd checks
 * the caller of every POST). Each handler borrows a connection of its own
 * from the member's pool: libpq connections are not shared by threads. */
#include "harness/daemon/api.h"
#include "harness/daemon/lab_member.h"
#include "harness/base/json.h"
#include "harness/job/job.h"
#include "harness/report/history.h"
#include "db/store.h"
#include "db/store_lab.h"
#include "db/store_regress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAB_LIST_DEFAULT 100
#define LAB_LIST_MAX 1000

static bool in_lab(struct api *a, struct httpd_resp *rs)
{
	if (a->lab)
		return true;
	httpd_error(rs, 404, "this kabd is in no lab: set [lab] url in its machine.conf and restart it (doc/lab.md)");
	return false;
}

/* ?machine=, when given: a host name or a machine id, else a 400 */
static bool machine_ok(const char *machine, struct httpd_resp *rs)
{
	if (!machine || (*machine && strlen(machine) <= 255))
		return true;
	httpd_error(rs, 400, "machine must be a host name or a machine id");
	return false;
}

/* ?limit=, when given, into *ret: 1 to LAB_LIST_MAX, else a 400 */
static bool limit_ok(const char *ls, uint64_t *ret, struct httpd_resp *rs)
{
	if (!ls || (util_parse_u64(ls, ret) == 0 && *ret > 0 && *ret <= LAB_LIST_MAX))
		return true;
	httpd_error(rs, 400, "limit must be a whole number from 1 to %d", LAB_LIST_MAX);
	return false;
}

/* The caller's connection, or a 404 (this kabd is in no lab) or a 503
 * naming the lab and why. */
static struct lab *borrow(struct api *a, struct httpd_resp *rs)
{
	if (!in_lab(a, rs))
		return NULL;
	struct lab *l = NULL;
	struct strbuf err = { 0 };
	char why[512];
	/* a lab the member cannot reach is said at once, not after a connect timeout */
	if (!lab_member_connected(a->lab, why, sizeof(why))) {
		httpd_error(rs, 503, "the lab at %s does not answer (kabd keeps trying; its local work goes on): %s",
			    lab_member_url(a->lab), *why ? why : "kabd has not joined it yet");
		return NULL;
	}
	int r = lab_member_borrow(a->lab, &l, &err);
	if (r < 0)
		httpd_error(rs, r == -EPROTO ? 500 : 503, "the lab at %s cannot be reached: %s", lab_member_url(a->lab),
			    err.buf ? err.buf : strerror(-r));
	sb_free(&err);
	return r < 0 ? NULL : l;
}

/* A failed statement: 503 when the connection went, else 500; the
 * connection is closed rather than pooled. */
static void lab_failed(struct api *a, struct lab *l, struct httpd_resp *rs, int r, const struct strbuf *err)
{
	httpd_error(rs, r == -ECONNRESET ? 503 : r == -ENOENT ? 404 : 500, "%s", err->buf ? err->buf : strerror(-r));
	lab_member_give_back(a->lab, l, r == -ENOENT);
}

/* The connection given back after a call that returned r: true when it
 * succeeded, else false with the error answered; err freed either way. */
static bool lab_answered(struct api *a, struct lab *l, struct httpd_resp *rs, int r, struct strbuf *err)
{
	if (r < 0)
		lab_failed(a, l, rs, r, err);
	else
		lab_member_give_back(a->lab, l, true);
	sb_free(err);
	return r >= 0;
}

static void reply(struct httpd_resp *rs, json_t *v, int status)
{
	sb_free(&rs->body);
	if (!v || jw_dump_sb(&rs->body, v, 0) < 0) {
		httpd_error(rs, 500, "out of memory");
		return;
	}
	sb_puts(&rs->body, "\n");
	rs->status = status;
	rs->content_type = "application/json";
}

static json_t *machine_json(const struct lab_machine *m)
{
	json_t *tags = json_array();
	for (size_t i = 0; tags && i < m->n_tags; i++)
		json_array_append_new(tags, jw_str(m->tags[i]));
	return json_pack("{s:o, s:o, s:o, s:i, s:I, s:o, s:o, s:b, s:i, s:o, s:o, s:o}", "id", jw_str(m->id),
			 "hostname", jw_str(m->hostname), "state", jw_str(lab_machine_state_name(m->state)), "cpus",
			 m->cpus, "memory", (json_int_t)m->memory, "arch", jw_str(m->arch), "kernel", jw_str(m->kernel),
			 "kexec", m->can_kexec, "cgroup_version", m->cgroup_version, "tags", tags, "heartbeat_age_s",
			 jw_num(round(m->heartbeat_age_s * 10) / 10), "job",
			 m->job > 0 ? json_integer((json_int_t)m->job) : json_null());
}

void api_lab_machines(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	_cleanup_free_ struct lab_machine *v = NULL;
	size_t n = 0;
	struct strbuf err = { 0 };
	int r = lab_machines(l, &v, &n, &err);
	if (!lab_answered(a, l, rs, r, &err))
		return;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, machine_json(&v[i]));
	reply(rs, json_pack("{s:o, s:o}", "lab", jw_str(lab_member_url(a->lab)), "machines", arr), 200);
}

static json_t *job_json(const struct lab_job *j)
{
	return json_pack("{s:I, s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)j->id, "state",
			 jw_str(lab_job_state_name(j->state)), "attempts", j->attempts, "max_attempts", j->max_attempts,
			 "machine", jw_str_opt(j->hostname), "machine_id", jw_str_opt(j->machine), "selector",
			 jw_str(j->selector), "reason", jw_str_opt(j->reason), "submitted_by", jw_str(j->submitted_by),
			 "created", jw_time(j->created), "finished", jw_time(j->finished));
}

/* ?machine=HOST|ID&limit=N */
void api_lab_jobs(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "machine", "limit" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "unknown or repeated parameter \"%s\" (parameters: machine, limit)", bad);
		return;
	}
	const char *machine = httpd_query(rq, "machine"), *ls = httpd_query(rq, "limit");
	uint64_t limit = LAB_LIST_DEFAULT;
	if (!limit_ok(ls, &limit, rs))
		return;
	if (!machine_ok(machine, rs))
		return;
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	_cleanup_free_ struct lab_job *v = NULL;
	size_t n = 0;
	struct strbuf err = { 0 };
	int r = lab_jobs_list(l, machine, (size_t)limit, &v, &n, &err);
	if (!lab_answered(a, l, rs, r, &err))
		return;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, job_json(&v[i]));
	reply(rs, json_pack("{s:o}", "jobs", arr), 200);
}

static json_t *attempts_json(const struct lab_attempt *v, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "attempt", v[i].attempt, "machine",
						     jw_str_opt(v[i].hostname), "machine_id", jw_str(v[i].machine),
						     "outcome", jw_str(lab_attempt_outcome_name(v[i].outcome)),
						     "reason", jw_str_opt(v[i].reason), "started",
						     jw_time(v[i].started), "ended", jw_time(v[i].ended)));
	return arr;
}

/* The attempt whose results count: the one that ended done (or, for a
 * job that failed or was cancelled, its last); 0: none yet. */
static int counted_attempt(const struct lab_attempt *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].outcome == LAB_ATTEMPT_DONE)
			return v[i].attempt;
	for (size_t i = n; i-- > 0;)
		if (v[i].outcome == LAB_ATTEMPT_FAILED || v[i].outcome == LAB_ATTEMPT_CANCELLED)
			return v[i].attempt;
	return 0;
}

void api_lab_job_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	struct lab_job j;
	_cleanup_free_ struct lab_attempt *att = NULL;
	size_t n = 0;
	struct strbuf err = { 0 }, why = { 0 };
	int r = lab_job_get(l, rq->id, &j, &err);
	if (r >= 0)
		r = lab_attempts(l, rq->id, &att, &n, &err);
	if (r >= 0 && j.state == LAB_JOB_QUEUED)
		r = lab_job_why(l, rq->id, &why, &err);
	if (r < 0) {
		lab_failed(a, l, rs, r, &err);
		sb_free(&err);
		sb_free(&why);
		return;
	}
	lab_member_give_back(a->lab, l, true);
	json_t *o = job_json(&j);
	int counted = counted_attempt(att, n);
	if (o && (jw_set(o, "attempts_list", attempts_json(att, n)) < 0 ||
		  jw_set(o, "counted_attempt", counted ? json_integer(counted) : json_null()) < 0 ||
		  jw_set(o, "why", jw_str_opt(why.buf)) < 0)) {
		json_decref(o);
		o = NULL;
	}
	sb_free(&why);
	reply(rs, o, 200);
}

/* POST /lab/jobs?on=SELECTOR: the job file's text, checked here as a
 * local submit is, queued in the lab for the machines the selector
 * names (without ?on=, the job's lab.on; a job that tracks a branch must
 * name one or the other); a selector no machine matches is taken (the job
 * waits, and GET /lab/jobs/ID says why). */
void api_lab_submit(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "on" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "unknown or repeated parameter \"%s\" (parameters: on)", bad);
		return;
	}
	if (!in_lab(a, rs))
		return;
	if (rq->body_len == 0 || strlen(rq->body) != rq->body_len) {
		httpd_error(rs, 400, "send the job file's text (not empty, no NUL byte)");
		return;
	}
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_string("submitted.job", rq->body, &j, &d);
	if (r < 0) {
		api_reply_diags(rs, r, &d);
		diags_free(&d);
		job_free(j);
		return;
	}
	diags_free(&d);
	/* ?on= first, else the job's own lab.on */
	const char *on = httpd_query(rq, "on");
	char sel_text[LAB_SELECTOR_MAX] = "";
	if (on && strlen(on) >= LAB_SELECTOR_MAX) {
		job_free(j);
		httpd_error(rs, 400, "the selector is longer than %d bytes", LAB_SELECTOR_MAX - 1);
		return;
	}
	snprintf(sel_text, sizeof(sel_text), "%s", on ? on : j->lab_on ? j->lab_on : "");
	bool tracked = false;
	for (size_t i = 0; i < j->n_variants; i++)
		tracked = tracked || j->variants[i].track_remote;
	char name[128];
	snprintf(name, sizeof(name), "%s", j->name ? j->name : "");
	job_free(j);
	if (!*sel_text && tracked) {
		httpd_error(rs, 400,
			    "job %s tracks a branch: a nightly submitted to the lab names the machine it runs on "
			    "(lab.on = host=NAME in its [job], or kab submit --lab --on SELECTOR), so that its nights, "
			    "change points and confirmations stay on one machine (doc/lab.md)",
			    name);
		return;
	}
	struct lab_selector sel;
	struct strbuf err = { 0 };
	if (lab_selector_parse(sel_text, &sel, &err) < 0) {
		httpd_error(rs, 400, "%s%s", on ? "" : "lab.on: ", err.buf ? err.buf : "bad selector");
		sb_free(&err);
		return;
	}
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	char by[160], normal[LAB_SELECTOR_MAX];
	snprintf(by, sizeof(by), "%s on %s", rq->submitter ? rq->submitter : "?", lab_member_machine(a->lab)->hostname);
	struct lab_submit s = { .text = rq->body, .selector = &sel, .max_attempts = LAB_MEMBER_MAX_ATTEMPTS, .submitted_by = by };
	int64_t id = 0;
	struct strbuf why = { 0 };
	r = lab_submit(l, &s, &id, &err);
	if (r >= 0)
		lab_job_why(l, id, &why, NULL);
	if (!lab_answered(a, l, rs, r, &err))
		return;
	lab_selector_format(&sel, normal, sizeof(normal));
	log_info("lab: job %lld queued in the lab for %s, submitted by %s", (long long)id, *normal ? normal : "any machine", by);
	reply(rs,
	      json_pack("{s:I, s:o, s:i, s:o}", "lab_job", (json_int_t)id, "selector", jw_str(normal), "max_attempts",
			LAB_MEMBER_MAX_ATTEMPTS, "why", jw_str_opt(why.buf)),
	      201);
	sb_free(&why);
}

void api_metrics_lab(struct api *a, struct store *st, struct strbuf *b)
{
	if (!a->lab)
		return;
	int64_t pending = 0;
	if (store_lab_count(st, STORE_LAB_ENDED, &pending) == 0)
		sb_printf(b,
			  "# HELP kabd_lab_uploads_pending Lab jobs that ended here and are not uploaded yet.\n"
			  "# TYPE kabd_lab_uploads_pending gauge\nkabd_lab_uploads_pending %lld\n",
			  (long long)pending);
	struct strbuf err = { 0 };
	struct lab *l = NULL;
	int64_t depth = 0;
	_cleanup_free_ struct lab_machine *v = NULL;
	size_t n = 0;
	int r = lab_member_connected(a->lab, NULL, 0) ? lab_member_borrow(a->lab, &l, &err) : -ENOTCONN;
	if (r >= 0 && (r = lab_queue_depth(l, &depth, &err)) >= 0)
		r = lab_machines(l, &v, &n, &err);
	if (l)
		lab_member_give_back(a->lab, l, r >= 0);
	sb_free(&err);
	sb_printf(b,
		  "# HELP kabd_lab_up Whether the lab's database answered this scrape.\n# TYPE kabd_lab_up gauge\n"
		  "kabd_lab_up %d\n",
		  r >= 0);
	if (r < 0)
		return;
	sb_printf(b,
		  "# HELP kabd_lab_queue_length Jobs queued in the lab.\n# TYPE kabd_lab_queue_length gauge\n"
		  "kabd_lab_queue_length %lld\n",
		  (long long)depth);
	sb_puts(b, "# HELP kabd_lab_machine_state Each lab machine's state (1 for the current one).\n"
		   "# TYPE kabd_lab_machine_state gauge\n");
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < LAB_MACHINE_STATE_N; s++) {
			sb_puts(b, "kabd_lab_machine_state{machine=\"");
			api_metrics_label(b, v[i].hostname);
			sb_printf(b, "\",id=\"%s\",state=\"%s\"} %d\n", v[i].id,
				  lab_machine_state_name((enum lab_machine_state)s), (int)v[i].state == s);
		}
	sb_puts(b, "# HELP kabd_lab_heartbeat_age_seconds Seconds since each lab machine's last heartbeat.\n"
		   "# TYPE kabd_lab_heartbeat_age_seconds gauge\n");
	for (size_t i = 0; i < n; i++) {
		sb_puts(b, "kabd_lab_heartbeat_age_seconds{machine=\"");
		api_metrics_label(b, v[i].hostname);
		sb_printf(b, "\",id=\"%s\"} %.1f\n", v[i].id, v[i].heartbeat_age_s);
	}
}

/* ---- lab-wide reads: reports, histories, change points ---- */

/* GET /lab/jobs/ID/report[?attempt=N]: the report the machine uploaded
 * with the attempt's state, the counted attempt's by default, with "lab"
 * added: the lab job, the attempt, the machine and its local job. */
void api_lab_job_report(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "attempt" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "unknown or repeated parameter \"%s\" (parameters: attempt)", bad);
		return;
	}
	const char *as = httpd_query(rq, "attempt");
	uint64_t want = 0;
	if (as && (util_parse_u64(as, &want) < 0 || want == 0 || want > 1000)) {
		httpd_error(rs, 400, "attempt must be an attempt's number (1, 2, ...)");
		return;
	}
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	struct strbuf err = { 0 };
	_cleanup_free_ struct lab_attempt *att = NULL;
	size_t n = 0;
	struct lab_job j;
	int r = lab_job_get(l, rq->id, &j, &err);
	if (r >= 0)
		r = lab_attempts(l, rq->id, &att, &n, &err);
	int attempt = want ? (int)want : counted_attempt(att, n);
	_cleanup_free_ char *text = NULL;
	char machine[LAB_UUID_LEN + 1] = "", host[256] = "";
	int64_t local = 0;
	if (r >= 0 && attempt == 0) {
		lab_member_give_back(a->lab, l, true);
		httpd_error(rs, 404, "lab job %lld is %s: it has no report until an attempt ends and its machine uploads it",
			    (long long)rq->id, lab_job_state_name(j.state));
		return;
	}
	if (r >= 0)
		r = lab_job_report(l, rq->id, attempt, &text, machine, host, &local, &err);
	if (!lab_answered(a, l, rs, r, &err))
		return;
	json_t *o = json_loads(text, 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		httpd_error(rs, 404, "attempt %d of lab job %lld (on %s) uploaded no report", attempt, (long long)rq->id, host);
		return;
	}
	if (jw_set(o, "lab",
		   json_pack("{s:I, s:i, s:b, s:o, s:o, s:I}", "job", (json_int_t)rq->id, "attempt", attempt, "counted",
			     attempt == counted_attempt(att, n), "machine", jw_str(host), "machine_id", jw_str(machine),
			     "local_job", (json_int_t)local)) < 0) {
		json_decref(o);
		o = NULL;
	}
	reply(rs, o, 200);
}

/* a history's source: one machine's nights in the lab */
struct lab_source {
	struct lab *l;
	const char *machine;
	struct strbuf *err;
	int r; /* the first error, for the status */
};

static int src_nights(void *ctx, const char *name, struct store_history_night **ret, size_t *ret_n)
{
	struct lab_source *s = ctx;
	return s->r = lab_history_nights(s->l, s->machine, name, ret, ret_n, s->err);
}

static int src_rows(void *ctx, const char *name, const struct store_history_filter *f, struct store_history_row **ret, size_t *ret_n)
{
	struct lab_source *s = ctx;
	return s->r = lab_history_rows(s->l, s->machine, name, f, ret, ret_n, s->err);
}

static int src_metric_names(void *ctx, const char *name, char ***ret, size_t *ret_n)
{
	struct lab_source *s = ctx;
	return s->r = lab_history_metric_names(s->l, s->machine, name, ret, ret_n, s->err);
}

/* GET /lab/history?machine=HOST|ID&job=NAME[&metric=M][&workload=W]
 * [&format=json|text]: one machine's history of a job name, from the
 * nights it uploaded, as GET /history shows a machine's own (the same
 * series and change points), with "machine" and "machine_id". A series
 * never mixes machines: without machine the request is refused, naming
 * the machines that have nights of the name. */
void api_lab_history(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "machine", "job", "metric", "workload", "format" };
	char bad[80];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "unknown or repeated parameter \"%s\" (parameters: machine, job, metric, workload, format)", bad);
		return;
	}
	const char *machine = httpd_query(rq, "machine"), *job = httpd_query(rq, "job"), *fmt = httpd_query(rq, "format");
	struct history_query q = { .metric = httpd_query(rq, "metric"), .workload = httpd_query(rq, "workload") };
	if (!job || !history_name_ok(job)) {
		httpd_error(rs, 400, "job=NAME is required: a nightly job's name, 1 to %d letters, digits, '.', '_' and '-'",
			    HISTORY_NAME_MAX);
		return;
	}
	if (q.metric && !history_metric_ok(q.metric)) {
		httpd_error(rs, 400, "metric must be a metric's name: 1 to %d letters, digits and ._-:+/[]", HISTORY_METRIC_MAX);
		return;
	}
	if (q.workload && !history_name_ok(q.workload)) {
		httpd_error(rs, 400, "workload must be a workload's name: 1 to %d letters, digits, '.', '_' and '-'", HISTORY_NAME_MAX);
		return;
	}
	if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
		httpd_error(rs, 400, "unknown format (history formats: json, text)");
		return;
	}
	if (!machine_ok(machine, rs))
		return;
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	struct strbuf err = { 0 }, which = { 0 };
	int r;
	if (!machine) {
		size_t n = 0;
		if ((r = lab_history_machines(l, job, &which, &n, &err)) < 0) {
			lab_failed(a, l, rs, r, &err);
		} else {
			lab_member_give_back(a->lab, l, true);
			httpd_error(rs, 400,
				    "machine=HOST (or its id) is required: a history is one machine's, numbers from two "
				    "machines are never one series; %s",
				    n ? which.buf : "no machine has uploaded nights of that name");
		}
		sb_free(&err);
		sb_free(&which);
		return;
	}
	char id[LAB_UUID_LEN + 1], host[256];
	if ((r = lab_machine_find(l, machine, id, host, &err)) < 0) {
		if (r == -EEXIST || r == -ENOENT) {
			lab_member_give_back(a->lab, l, true);
			httpd_error(rs, r == -EEXIST ? 400 : 404, "%s", err.buf);
		} else
			lab_failed(a, l, rs, r, &err);
		sb_free(&err);
		return;
	}
	struct lab_source s = { .l = l, .machine = id, .err = &err };
	const struct history_source src = { .ctx = &s, .nights = src_nights, .rows = src_rows, .metric_names = src_metric_names };
	struct history *h = NULL;
	r = history_load_from(&src, job, &q, &h);
	if (r < 0 && s.r < 0) {
		lab_failed(a, l, rs, s.r, &err);
		sb_free(&err);
		return;
	}
	lab_member_give_back(a->lab, l, true);
	sb_free(&err);
	if (r == -ENOENT) {
		httpd_error(rs, 404, "no nights of job %s from machine %s in the lab", job, host);
		return;
	}
	if (r < 0) {
		httpd_error(rs, 500, "the history of %s on %s could not be read: %s", job, host, strerror(-r));
		return;
	}
	if (q.metric && h->n_series == 0) {
		httpd_error(rs, 404, "job %s on %s has no history of metric %s (%zu metrics have one)", job, host,
			    q.metric, h->n_metrics);
		history_free(h);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		history_free(h);
		httpd_error(rs, 500, "out of memory");
		return;
	}
	bool text = fmt && strcmp(fmt, "text") == 0;
	if (text)
		fprintf(f, "machine %s (%s)\n", host, id);
	r = text ? history_render_text(h, true, f) : history_render_json(h, f);
	history_free(h);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		free(buf);
		httpd_error(rs, 500, "the history of %s on %s could not be rendered: %s", job, host, strerror(-r));
		return;
	}
	if (text) {
		httpd_body_take(rs, buf, len, "text/plain; charset=utf-8");
		return;
	}
	json_t *o = json_loadb(buf, len, 0, NULL);
	free(buf);
	if (o && (jw_set(o, "machine", jw_str(host)) < 0 || jw_set(o, "machine_id", jw_str(id)) < 0)) {
		json_decref(o);
		o = NULL;
	}
	reply(rs, o, 200);
}

/* GET /lab/regressions[?machine=HOST|ID][&job=NAME][&state=S][&limit=N]:
 * the change points machines uploaded, newest first, each as its machine
 * renders it (GET /regressions) with "machine" (its host name),
 * "machine_id", "local_id", and the lab's jobs of its two nights
 * ("lab_good_job", "lab_bad_job", null when they were local jobs). */
void api_lab_regressions(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "machine", "job", "state", "limit" };
	char bad[64];
	if (httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad)) < 0) {
		httpd_error(rs, 400, "unknown or repeated parameter \"%s\" (parameters: machine, job, state, limit)", bad);
		return;
	}
	const char *machine = httpd_query(rq, "machine"), *job = httpd_query(rq, "job"),
		   *state = httpd_query(rq, "state"), *ls = httpd_query(rq, "limit");
	uint64_t limit = LAB_LIST_DEFAULT;
	enum regress_state st;
	if (!limit_ok(ls, &limit, rs))
		return;
	if (!machine_ok(machine, rs))
		return;
	if (job && !history_name_ok(job)) {
		httpd_error(rs, 400, "job must be a job's name: 1 to %d letters, digits, '.', '_' and '-'", HISTORY_NAME_MAX);
		return;
	}
	if (state && regress_state_parse(state, &st) < 0) {
		httpd_error(rs, 400, "state must be a change point's state (pending, confirmed, not-confirmed, failed)");
		return;
	}
	struct lab *l = borrow(a, rs);
	if (!l)
		return;
	struct lab_regress *v = NULL;
	size_t n = 0;
	struct strbuf err = { 0 };
	int r = lab_regressions(l, machine, job, state, (size_t)limit, &v, &n, &err);
	if (!lab_answered(a, l, rs, r, &err))
		return;
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_loads(v[i].data, 0, NULL);
		if (!json_is_object(o)) {
			json_decref(o);
			o = json_object();
		}
		/* the machine's own words for itself ("host (kernel)") stay, as machine_detail */
		json_t *detail = json_object_get(o, "machine");
		if (detail)
			jw_set(o, "machine_detail", json_incref(detail));
		jw_set(o, "machine", jw_str(v[i].hostname));
		jw_set(o, "machine_id", jw_str(v[i].machine));
		jw_set(o, "local_id", json_integer(v[i].local_id));
		jw_set(o, "lab_good_job", v[i].good_job ? json_integer(v[i].good_job) : json_null());
		jw_set(o, "lab_bad_job", v[i].bad_job ? json_integer(v[i].bad_job) : json_null());
		json_array_append_new(arr, o);
	}
	lab_regressions_free(v, n);
	reply(rs, json_pack("{s:o}", "regressions", arr), 200);
}
