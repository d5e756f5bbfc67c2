/* kabd's /api/v1 handlers: JSON out, job file text in. */
#include "harness/daemon/api.h"
#include "harness/daemon/api_page.h"
#include "harness/daemon/body_cache.h"
#include "harness/job/job.h"
#include "harness/base/json.h"
#include "harness/daemon/queue.h"
#include "harness/report/report.h"
#include "harness/sampler/sampler.h"
#include "db/store.h"
#include "db/store_boots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(HTTPD_MAX_BODY == JOB_TEXT_MAX, "kabd takes a body as large as a job may be, no larger");

static void store_closep(struct store **s) { store_close(*s); }
#define _cleanup_store_ _cleanup_(store_closep)

static bool is_read(const struct httpd_req *rq)
{
	return rq->method && (strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0);
}

int api_open_store(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs, struct store **ret)
{
	int r = is_read(rq) ? store_open_readonly(a->db_path, ret) : store_open(a->db_path, ret);
	if (r < 0) {
		httpd_error(rs, 500, "the database cannot be opened; see kabd's log");
		return -EIO;
	}
	return 0;
}

static void json_time(struct strbuf *sb, double t)
{
	if (t <= 0) {
		sb_puts(sb, "null");
		return;
	}
	char buf[64];
	util_iso_time(t, buf, sizeof(buf));
	json_str_sb(sb, buf);
}

static void ok_json(struct httpd_resp *rs, int status)
{
	rs->status = status;
	rs->content_type = "application/json";
	sb_puts(&rs->body, "\n");
}

/* A page of jobs, newest first: ?limit=N jobs below ?after=ID, and
 * next_after for the page after (api_page.h). */
void api_jobs_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "limit", "after" };
	struct api_page page;
	if (api_page_parse(rq, keys, ARRAY_SIZE(keys), &page, rs) < 0)
		return;
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	/* one more than asked for tells whether there is a next page */
	_cleanup_free_ int64_t *ids = NULL;
	size_t n;
	if (store_jobs_page(st, page.after, page.limit + 1, &ids, &n) < 0) {
		httpd_error(rs, 500, "cannot list jobs: %s", store_errmsg(st));
		return;
	}
	size_t i = 0, shown = 0;
	sb_puts(&rs->body, "{\"jobs\": [");
	int64_t last = 0;
	for (; i < n && api_page_room(&page, shown, rs->body.len); i++) {
		struct store_job sj;
		if (store_job_info(st, ids[i], &sj) < 0)
			continue;
		sb_printf(&rs->body, "%s\n  {\"id\": %lld, \"name\": ", shown ? "," : "", (long long)sj.id);
		json_str_sb(&rs->body, sj.name);
		sb_puts(&rs->body, ", \"status\": ");
		json_str_sb(&rs->body, job_status_name(sj.status));
		sb_puts(&rs->body, ", \"submitter\": ");
		json_str_sb(&rs->body, sj.submitter[0] ? sj.submitter : NULL);
		sb_puts(&rs->body, ", \"created\": ");
		json_time(&rs->body, sj.created);
		sb_puts(&rs->body, ", \"finished\": ");
		json_time(&rs->body, sj.finished);
		sb_puts(&rs->body, "}");
		last = sj.id;
		shown++;
		store_job_clear(&sj);
	}
	sb_puts(&rs->body, "\n]");
	api_page_end(&rs->body, i < n, last);
	ok_json(rs, 200);
}

/* Variant and workload names of a stored job, as stored at submit: a
 * GET never parses the job's text again. */
struct job_names {
	struct store_job_part *variants, *workloads;
	size_t n_variants, n_workloads;
};

static void job_names_load(struct store *st, int64_t id, struct job_names *ret)
{
	*ret = (struct job_names){ 0 };
	if (store_job_variants(st, id, &ret->variants, &ret->n_variants) < 0)
		ret->n_variants = 0;
	if (store_job_workloads(st, id, &ret->workloads, &ret->n_workloads) < 0)
		ret->n_workloads = 0;
}

static void job_names_free(struct job_names *jn)
{
	free(jn->variants);
	free(jn->workloads);
}

static const char *name_at(const struct store_job_part *v, size_t n, int i)
{
	return v && i >= 0 && (size_t)i < n ? v[i].name : NULL;
}

static int get_job(struct store *st, int64_t id, struct httpd_resp *rs, struct store_job *ret)
{
	int r = store_job_info(st, id, ret);
	if (r == -ENOENT)
		httpd_error(rs, 404, "no job %lld", (long long)id);
	else if (r < 0)
		httpd_error(rs, 500, "cannot read job %lld: %s", (long long)id, store_errmsg(st));
	return r;
}

/* Elapsed time of a job, and the time left: the mean duration of its
 * finished runs times the steps left, less what the current run has
 * already taken. False for ETA when no run has finished yet, or the job
 * is not running. */
static bool job_timing(struct store *st, const struct store_job *sj, size_t left, double *ret_elapsed,
		       double *ret_eta)
{
	double now = util_real_now();
	double end = sj->finished > 0 ? sj->finished : now;
	*ret_elapsed = sj->started > 0 ? end - sj->started : 0;
	if (sj->status != JOB_RUNNING || left == 0)
		return false;
	size_t k;
	double sum, cur_started;
	if (store_job_run_times(st, sj->id, &k, &sum, &cur_started) < 0 || k == 0)
		return false;
	double eta = sum / (double)k * (double)left;
	if (cur_started > 0)
		eta -= now - cur_started;
	*ret_eta = eta > 0 ? eta : 0;
	return true;
}

/* A job's own fields in GET /api/v1/jobs/ID, from "{" to "finished". */
static void job_json_fields(struct strbuf *b, const struct store_job *sj)
{
	sb_printf(b, "{\"id\": %lld, \"name\": ", (long long)sj->id);
	json_str_sb(b, sj->name);
	sb_puts(b, ", \"status\": ");
	json_str_sb(b, job_status_name(sj->status));
	sb_puts(b, ", \"reason\": ");
	json_str_sb(b, sj->reason[0] ? sj->reason : NULL);
	sb_puts(b, ", \"file\": ");
	json_str_sb(b, sj->file);
	sb_puts(b, ", \"submitter\": ");
	json_str_sb(b, sj->submitter[0] ? sj->submitter : NULL);
	sb_puts(b, ", \"created\": ");
	json_time(b, sj->created);
	sb_puts(b, ", \"started\": ");
	json_time(b, sj->started);
	sb_puts(b, ", \"finished\": ");
	json_time(b, sj->finished);
}

/* Its pairs, order, variants and workloads, when the job has them stored. */
static void job_json_parts(struct strbuf *b, const struct store_job *sj, const struct job_names *jn)
{
	if (!jn->n_variants)
		return;
	sb_printf(b, ", \"pairs\": %u, \"order\": ", sj->pairs);
	json_str_sb(b, sj->order);
	sb_puts(b, ", \"variants\": [");
	for (size_t i = 0; i < jn->n_variants; i++) {
		sb_puts(b, i ? ", {\"name\": " : "{\"name\": ");
		json_str_sb(b, jn->variants[i].name);
		sb_puts(b, ", \"kernel\": ");
		json_str_sb(b, jn->variants[i].kind);
		sb_puts(b, "}");
	}
	sb_puts(b, "], \"workloads\": [");
	for (size_t i = 0; i < jn->n_workloads; i++) {
		sb_puts(b, i ? ", {\"name\": " : "{\"name\": ");
		json_str_sb(b, jn->workloads[i].name);
		sb_puts(b, ", \"type\": ");
		json_str_sb(b, jn->workloads[i].kind);
		sb_puts(b, "}");
	}
	sb_puts(b, "]");
}

struct boots_json {
	struct strbuf *b;
	const struct job_names *jn;
	size_t shown;
};

static void boot_json(void *ctx, const struct store_boot *x)
{
	struct boots_json *bj = ctx;
	struct strbuf *b = bj->b;
	sb_printf(b, "%s{\"slot\": %d, \"variant\": ", bj->shown++ ? ", " : ", \"boots\": [", x->slot + 1);
	json_str_sb(b, name_at(bj->jn->variants, bj->jn->n_variants, x->variant));
	sb_printf(b, ", \"build\": %lld, \"method\": ", (long long)x->build_id);
	json_str_sb(b, x->method);
	sb_puts(b, ", \"status\": ");
	json_str_sb(b, boot_status_name(x->status));
	sb_puts(b, ", \"reason\": ");
	json_str_sb(b, x->reason[0] ? x->reason : NULL);
	sb_puts(b, ", \"boot_id\": ");
	json_str_sb(b, x->boot_id[0] ? x->boot_id : NULL);
	sb_puts(b, ", \"kernel_release\": ");
	json_str_sb(b, x->kernel_release[0] ? x->kernel_release : NULL);
	sb_puts(b, ", \"switch_at\": ");
	json_time(b, x->switch_at);
	if (x->ready_at > 0)
		sb_printf(b, ", \"prep_s\": %.3f, \"uptime_s\": %.3f, \"kexec_s\": %.3f}", x->prep_s, x->uptime_s, x->kexec_s);
	else
		sb_puts(b, ", \"prep_s\": null, \"uptime_s\": null, \"kexec_s\": null}");
}

/* A job that boots kernels: every switch and the boot that followed
 * (nothing for a job that boots none), read one at a time. */
static void job_json_boots(struct strbuf *b, struct store *st, int64_t id, const struct job_names *jn)
{
	struct boots_json bj = { .b = b, .jn = jn };
	size_t len = b->len;
	if (store_boots_foreach(st, id, boot_json, &bj) < 0) {
		b->len = len; /* as before: a job whose boots cannot be read shows none */
		if (b->buf)
			b->buf[len] = 0;
		return;
	}
	if (bj.shown)
		sb_puts(b, "]");
}

/* Its progress over the schedule, the stage, the elapsed time and the
 * time left, to the closing braces. */
static void job_json_progress(struct strbuf *b, struct store *st, const struct store_job *sj,
			      const struct job_names *jn, const struct store_steps_count *c)
{
	size_t done = c->n[STEP_FINISHED] + c->n[STEP_ABORTED];
	size_t skipped = c->n[STEP_SKIPPED] + c->n[STEP_BOOT_FAILED];
	const struct store_step *cur = c->current.id ? &c->current : NULL;
	sb_printf(b, ", \"progress\": {\"runs_done\": %zu, \"runs_skipped\": %zu, \"runs_total\": %zu, \"current\": ", done,
		  skipped, c->total);
	if (cur) {
		sb_printf(b, "{\"seq\": %d, \"pair\": %d, \"variant\": ", cur->seq, cur->pair + 1);
		json_str_sb(b, name_at(jn->variants, jn->n_variants, cur->variant));
		sb_puts(b, ", \"workload\": ");
		json_str_sb(b, name_at(jn->workloads, jn->n_workloads, cur->workload));
		sb_puts(b, "}");
	} else {
		sb_puts(b, "null");
	}
	/* what the executor does between runs (building kernels) */
	sb_puts(b, ", \"stage\": ");
	json_str_sb(b, !cur && sj->status == JOB_RUNNING && sj->reason[0] ? sj->reason : NULL);
	double elapsed, eta;
	bool have_eta = job_timing(st, sj, c->total - done - skipped, &elapsed, &eta);
	sb_puts(b, ", \"elapsed_s\": ");
	if (sj->started > 0)
		sb_printf(b, "%.1f", elapsed);
	else
		sb_puts(b, "null");
	sb_puts(b, ", \"eta_s\": ");
	if (have_eta)
		sb_printf(b, "%.0f", eta);
	else
		sb_puts(b, "null");
	sb_puts(b, "}}");
}

void api_job_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_job sj;
	if (get_job(st, rq->id, rs, &sj) < 0)
		return;
	struct job_names jn;
	job_names_load(st, rq->id, &jn);
	/* counted by the database: a schedule of JOB_STEPS_MAX steps is never loaded */
	struct store_steps_count c;
	if (store_steps_count(st, rq->id, &c) < 0) {
		httpd_error(rs, 500, "cannot read the schedule of job %lld", (long long)rq->id);
		goto out;
	}
	job_json_fields(&rs->body, &sj);
	job_json_parts(&rs->body, &sj, &jn);
	job_json_boots(&rs->body, st, rq->id, &jn);
	job_json_progress(&rs->body, st, &sj, &jn, &c);
	ok_json(rs, 200);
out:
	job_names_free(&jn);
	store_job_clear(&sj);
}

/* A page of GET /jobs/ID/runs as it is written, one run at a time. */
struct runs_page {
	struct strbuf *b;
	struct api_page page;
	const struct job_names *jn;
	size_t shown;
	int64_t last;
	bool more;
};

static void run_provenance_json(struct strbuf *b, const struct store_run_row *r)
{
	sb_puts(b, ", \"provenance\": {\"kab_version\": ");
	json_str_sb(b, r->kab_version);
	sb_puts(b, ", \"kernel_release\": ");
	json_str_sb(b, r->kernel_release);
	sb_puts(b, ", \"boot_id\": ");
	json_str_sb(b, r->boot_id);
	sb_puts(b, ", \"cmdline\": ");
	json_str_sb(b, r->cmdline);
	sb_printf(b, ", \"cpus\": %d, \"mem_total\": %llu, \"swap_total\": %llu, \"swap_devices\": ", r->cpus,
		  (unsigned long long)r->mem_total, (unsigned long long)r->swap_total);
	json_str_sb(b, r->swap_devices);
	sb_printf(b, ", \"cgroup_version\": %d, \"cgroup_path\": ", r->cgroup_version);
	json_str_sb(b, r->cgroup_path);
	sb_puts(b, ", \"knobs\": ");
	json_str_sb(b, r->knobs);
	sb_puts(b, ", \"settings\": "); /* null: a run recorded before kab read them */
	json_str_sb(b, r->settings[0] ? r->settings : NULL);
	sb_puts(b, ", \"conditioning\": ");
	json_str_sb(b, r->conditioning[0] ? r->conditioning : NULL);
	sb_printf(b, ", \"memory_max\": %llu}}", (unsigned long long)r->memory_max);
}

static int run_row_json(void *ctx, const struct store_run_row *r)
{
	struct runs_page *p = ctx;
	struct strbuf *b = p->b;
	if (!api_page_room(&p->page, p->shown, b->len)) {
		p->more = true;
		return 1;
	}
	sb_printf(b, "%s\n  {\"id\": %lld, \"step\": %lld, \"pair\": %d, \"variant\": ", p->shown ? "," : "",
		  (long long)r->id, (long long)r->step_id, r->pair + 1);
	json_str_sb(b, name_at(p->jn->variants, p->jn->n_variants, r->variant));
	sb_puts(b, ", \"workload\": ");
	json_str_sb(b, name_at(p->jn->workloads, p->jn->n_workloads, r->workload));
	sb_puts(b, ", \"status\": ");
	json_str_sb(b, run_status_name(r->status));
	sb_puts(b, ", \"reason\": ");
	json_str_sb(b, r->reason[0] ? r->reason : NULL);
	sb_puts(b, ", \"exit_code\": ");
	if (r->exit_code >= 0)
		sb_printf(b, "%d", r->exit_code);
	else
		sb_puts(b, "null");
	sb_printf(b, ", \"term_signal\": %d, \"started\": ", r->term_signal);
	json_time(b, r->started);
	sb_puts(b, ", \"finished\": ");
	json_time(b, r->finished);
	run_provenance_json(b, r);
	p->last = r->id;
	p->shown++;
	return 0;
}

/* A page of the job's runs in execution order: ?limit=N (API_PAGE_DEFAULT,
 * at most API_PAGE_MAX) runs after run ?after=ID, and next_after for the
 * page after; read a row at a time, and cut at API_PAGE_BYTES. */
void api_job_runs(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "limit", "after" };
	struct runs_page p = { .b = &rs->body };
	if (api_page_parse(rq, keys, ARRAY_SIZE(keys), &p.page, rs) < 0)
		return;
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_job sj;
	if (get_job(st, rq->id, rs, &sj) < 0)
		return;
	store_job_clear(&sj);
	struct job_names jn;
	job_names_load(st, rq->id, &jn);
	p.jn = &jn;
	sb_printf(p.b, "{\"job\": %lld, \"runs\": [", (long long)rq->id);
	/* one more than a page: whether there is a next one */
	if (store_runs_page(st, rq->id, p.page.after, p.page.limit + 1, run_row_json, &p) < 0) {
		httpd_error(rs, 500, "cannot read the runs of job %lld", (long long)rq->id);
		goto out;
	}
	sb_puts(p.b, "\n]");
	api_page_end(p.b, p.more, p.last);
	ok_json(rs, 200);
out:
	job_names_free(&jn);
}

/* Finished jobs never change, so their rendered reports are kept: a report
 * of a year-old job is one memcpy, not a statistics run over its metrics.
 * The key is the job and the format; a finished job has one version. */
static struct body_cache report_cache = BODY_CACHE_INIT;

void api_job_report(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const content_types[] = {
		[REPORT_TEXT] = "text/plain; charset=utf-8",
		[REPORT_COVER_LETTER] = "text/plain; charset=utf-8",
		[REPORT_MARKDOWN] = "text/markdown; charset=utf-8",
		[REPORT_JSON] = "application/json",
		[REPORT_CSV] = "text/csv; charset=utf-8",
	};
	struct report_opts ro = { .format = REPORT_JSON };
	const char *fs = httpd_query(rq, "format");
	if (fs && report_format_parse(fs, &ro.format) < 0) {
		httpd_error(rs, 400, "unknown format \"%.64s\" (formats: %s)", fs, REPORT_FORMATS);
		return;
	}
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	char *buf = NULL;
	size_t len = 0;
	struct store_job sj;
	bool done = false;
	if (store_job_info(st, rq->id, &sj) == 0) {
		done = sj.status == JOB_DONE;
		store_job_clear(&sj);
	}
	char key[64];
	snprintf(key, sizeof(key), "%lld\n%d", (long long)rq->id, (int)ro.format);
	if (done && body_cache_get(&report_cache, key, 0, 0, &buf, &len)) {
		httpd_body_take(rs, buf, len, content_types[ro.format]);
		return;
	}
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		httpd_error(rs, 500, "out of memory");
		return;
	}
	int r = report_print_format(st, rq->id, &ro, f);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0) {
		free(buf);
		if (r == -ENOENT)
			httpd_error(rs, 404, "no job %lld", (long long)rq->id);
		else
			httpd_error(rs, 500, "the report of job %lld could not be made: %s", (long long)rq->id, strerror(-r));
		return;
	}
	if (done)
		body_cache_put(&report_cache, key, 0, 0, buf, len);
	httpd_body_take(rs, buf, len, content_types[ro.format]);
}

/* 400 (413 for a text over the size budget) with every kept problem as
 * "LINE: message", and how many more were found. */
static void reply_diags(struct httpd_resp *rs, int r, const struct diags *d)
{
	struct strbuf *b = &rs->body;
	rs->status = r == -EFBIG ? 413 : 400;
	rs->content_type = "application/json";
	sb_printf(b, "{\"error\": \"the job has %zu error(s)\", \"errors\": [", diags_count(d));
	for (size_t i = 0; i < d->n; i++) {
		struct strbuf line = { 0 };
		/* the machine's /etc/kab/machine.conf is named; the job's own file is not */
		bool other = d->v[i].file && strcmp(d->v[i].file, "submitted.job") != 0;
		if (other)
			sb_printf(&line, "%s:", d->v[i].file);
		if (d->v[i].line > 0)
			sb_printf(&line, "%d: %s", d->v[i].line, d->v[i].msg);
		else
			sb_printf(&line, "%s%s", other ? " " : "", d->v[i].msg);
		if (i)
			sb_puts(b, ", ");
		json_str_sb(b, line.buf);
		sb_free(&line);
	}
	if (d->dropped)
		sb_printf(b, "%s\"and %zu more not shown: fix these first\"", d->n ? ", " : "", d->dropped);
	sb_puts(b, "]}\n");
}

void api_job_create(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	if (rq->body_len == 0) {
		httpd_error(rs, 400, "empty body: send the job file's text");
		return;
	}
	if (strlen(rq->body) != rq->body_len) {
		httpd_error(rs, 400, "the body has a NUL byte: send the job file's text");
		return;
	}
	/* parsed once, here, outside any lock or transaction; httpd has
	 * refused a body over JOB_TEXT_MAX already */
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_string("submitted.job", rq->body, &j, &d);
	if (r < 0) {
		reply_diags(rs, r, &d);
		diags_free(&d);
		return;
	}
	diags_free(&d);
	_cleanup_store_ struct store *st = NULL;
	int64_t id;
	if (api_open_store(a, rq, rs, &st) < 0)
		goto out;
	/* build = ID: the parser has no database; kabd's is the one the job runs with */
	if (job_check_builds(j, st, &d) > 0) {
		reply_diags(rs, -EINVAL, &d);
		diags_free(&d);
		goto out;
	}
	if (queue_submit(a->queue, st, j, rq->submitter, &id) < 0) {
		httpd_error(rs, 500, "the job could not be stored: %s", store_errmsg(st));
		goto out;
	}
	sb_printf(&rs->body, "{\"id\": %lld}", (long long)id);
	ok_json(rs, 201);
out:
	job_free(j);
}

void api_job_cancel(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	char status[16] = "";
	int r = queue_cancel(a->queue, st, rq->id, status, sizeof(status));
	if (r == -ENOENT) {
		httpd_error(rs, 404, "no job %lld", (long long)rq->id);
	} else if (r == -EALREADY) {
		httpd_error(rs, 409, "job %lld is already %s", (long long)rq->id, status);
	} else if (r < 0) {
		httpd_error(rs, 500, "cannot cancel job %lld: %s", (long long)rq->id, store_errmsg(st));
	} else {
		/* 1: the executor stops the run now; its status follows */
		sb_printf(&rs->body, "{\"id\": %lld, \"status\": \"%s\"}", (long long)rq->id, r == 1 ? "cancelling" : "cancelled");
		ok_json(rs, r == 1 ? 202 : 200);
	}
}

void api_health(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	bool db_ok = store_open_readonly(a->db_path, &st) == 0;
	int64_t cur = queue_current(a->queue);
	sb_printf(&rs->body, "{\"status\": \"%s\", \"version\": \"%s\", \"database\": %s, \"executor\": \"%s\", \"current_job\": ",
		  db_ok ? "ok" : "degraded", KAB_VERSION, db_ok ? "true" : "false", queue_state(a->queue));
	if (cur)
		sb_printf(&rs->body, "%lld}", (long long)cur);
	else
		sb_puts(&rs->body, "null}");
	ok_json(rs, db_ok ? 200 : 503);
}

void api_metrics(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct strbuf *b = &rs->body;
	static const char *const states[] = { "idle", "running", "stopping" };
	const char *state = queue_state(a->queue);
	sb_puts(b, "# HELP kabd_up Whether kabd is serving.\n# TYPE kabd_up gauge\nkabd_up 1\n");
	sb_puts(b, "# HELP kabd_executor_state The executor's state (1 for the current one).\n# TYPE kabd_executor_state gauge\n");
	for (size_t i = 0; i < ARRAY_SIZE(states); i++)
		sb_printf(b, "kabd_executor_state{state=\"%s\"} %d\n", states[i], strcmp(state, states[i]) == 0);
	sb_puts(b, "# HELP kabd_jobs Jobs by status.\n# TYPE kabd_jobs gauge\n");
	int64_t queued = 0;
	for (int i = 0; i < JOB_STATUS_N; i++) {
		int64_t n;
		if (store_count_jobs(st, (enum job_status)i, &n) < 0) {
			httpd_error(rs, 500, "cannot count jobs: %s", store_errmsg(st));
			return;
		}
		sb_printf(b, "kabd_jobs{status=\"%s\"} %lld\n", job_status_name((enum job_status)i), (long long)n);
		if (i == JOB_QUEUED)
			queued = n;
	}
	int64_t runs[RUN_STATUS_N] = { 0 };
	for (int k = 0; k < RUN_STATUS_N; k++)
		if (store_count_runs(st, (enum run_status)k, &runs[k]) < 0) {
			httpd_error(rs, 500, "cannot count runs: %s", store_errmsg(st));
			return;
		}
	sb_printf(b, "# HELP kabd_queue_length Jobs waiting for the executor.\n# TYPE kabd_queue_length gauge\nkabd_queue_length %lld\n", (long long)queued);
	sb_puts(b, "# HELP kabd_runs Runs by status.\n# TYPE kabd_runs gauge\n");
	for (int s = 0; s < RUN_STATUS_N; s++)
		sb_printf(b, "kabd_runs{status=\"%s\"} %lld\n", run_status_name((enum run_status)s), (long long)runs[s]);
	if (api_metrics_regressions(st, b) < 0) {
		httpd_error(rs, 500, "cannot count regressions: %s", store_errmsg(st));
		return;
	}
	/* the sampler's lateness in the newest finished run: a scrape after
	 * each run shows whether serving (or anything else) disturbed it */
	static const struct { const char *metric, *name, *help; double scale; } smp[] = {
		{ "sampler.lateness_p99_ms", "kab_sampler_lateness_p99_seconds",
		  "99th percentile of how late the sampler woke, in the newest finished run.", 1e-3 },
		{ "sampler.samples", "kab_sampler_samples", "Samples the sampler took in the newest finished run.", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(smp); i++) {
		int64_t run;
		double v;
		int r = store_last_run_metric(st, smp[i].metric, &run, &v);
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			httpd_error(rs, 500, "cannot read %s: %s", smp[i].metric, store_errmsg(st));
			return;
		}
		sb_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s{run=\"%lld\"} %.6g\n", smp[i].name, smp[i].help,
			  smp[i].name, smp[i].name, (long long)run, v * smp[i].scale);
	}
	rs->status = 200;
	rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

static void names_freep(char ***p)
{
	for (size_t i = 0; *p && (*p)[i]; i++)
		free((*p)[i]);
	free(*p);
}

/* Decodes one stored series of a run into a fresh array. */
static int series_load(struct store *st, int64_t run_id, const char *metric, int64_t **ret, size_t *ret_n)
{
	_cleanup_free_ uint8_t *blob = NULL;
	size_t len, n;
	int r = store_series_get(st, run_id, metric, &blob, &len, &n);
	if (r < 0)
		return r;
	int64_t *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = sampler_decode(blob, len, v, n);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = (size_t)r;
	return 0;
}

/* The points one reply of a series holds at most: about 20 bytes each in
 * t_s and values, so under API_PAGE_BYTES whatever the run's length. */
#define SAMPLES_POINTS_MAX 20000
_Static_assert(SAMPLES_POINTS_MAX * 2 * 24 < API_PAGE_BYTES, "a thinned series fits in a page's bytes");

/* The sample after i when every stride-th is shown, and the last one. */
static size_t next_sample(size_t i, size_t n, size_t stride)
{
	if (i + 1 >= n)
		return n;
	return i + stride < n ? i + stride : n - 1;
}

struct series_list {
	struct strbuf *b;
	size_t shown;
};

/* One entry of the run's list of series: its name and what it did (the
 * page opens on one that moves); a corrupt series has nulls. */
static void series_entry(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n)
{
	struct series_list *l = ctx;
	struct sampler_summary sum;
	if (strcmp(metric, "t_ns") == 0)
		return;
	sb_puts(l->b, l->shown++ ? ",\n  {\"name\": " : "\n  {\"name\": ");
	json_str_sb(l->b, metric);
	if (sampler_summarize(blob, len, n, &sum) < 0 || sum.n == 0) {
		sb_puts(l->b, ", \"n\": 0, \"min\": null, \"max\": null, \"mean\": null, \"changes\": null}");
		return;
	}
	char mean[32];
	json_num(sum.mean, mean, sizeof(mean));
	sb_printf(l->b, ", \"n\": %zu, \"min\": %llu, \"max\": %llu, \"mean\": %s, \"changes\": %zu}", sum.n,
		  (unsigned long long)sum.min, (unsigned long long)sum.max, mean, sum.changes);
}

/* Without ?metric, the names of the run's series, and each with its
 * samples, smallest, largest and mean value and how often it changed;
 * with it, the series with its unit and its times in seconds since the
 * first sample. */
void api_run_samples(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	const char *metric = httpd_query(rq, "metric");
	if (metric && (!*metric || strlen(metric) > 256)) {
		httpd_error(rs, 400, "metric must be a series name (see /api/v1/runs/%lld/samples)", (long long)rq->id);
		return;
	}
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	__attribute__((cleanup(names_freep))) char **names = NULL;
	size_t nn = 0;
	if (store_series_names(st, rq->id, &names, &nn) < 0) {
		httpd_error(rs, 500, "cannot read the samples of run %lld: %s", (long long)rq->id, store_errmsg(st));
		return;
	}
	if (nn == 0) {
		httpd_error(rs, 404, "no samples for run %lld", (long long)rq->id);
		return;
	}
	struct strbuf *b = &rs->body;
	if (!metric) {
		sb_printf(b, "{\"run\": %lld, \"metrics\": [", (long long)rq->id);
		size_t shown = 0;
		for (size_t i = 0; i < nn; i++) {
			if (strcmp(names[i], "t_ns") == 0)
				continue;
			sb_puts(b, shown++ ? ", " : "");
			json_str_sb(b, names[i]);
		}
		sb_puts(b, "],\n \"series\": [");
		struct series_list l = { b, 0 };
		if (store_series_foreach(st, rq->id, series_entry, &l) < 0) {
			httpd_error(rs, 500, "cannot read the samples of run %lld: %s", (long long)rq->id, store_errmsg(st));
			return;
		}
		sb_puts(b, "]}");
		ok_json(rs, 200);
		return;
	}
	_cleanup_free_ int64_t *t = NULL, *v = NULL;
	size_t tn = 0, vn = 0;
	int r = strcmp(metric, "t_ns") == 0 ? -ENOENT : series_load(st, rq->id, metric, &v, &vn);
	if (r == -ENOENT) {
		httpd_error(rs, 404, "run %lld has no series \"%.64s\" (see /api/v1/runs/%lld/samples)", (long long)rq->id,
			    metric, (long long)rq->id);
		return;
	}
	if (r < 0 || (r = series_load(st, rq->id, "t_ns", &t, &tn)) < 0) {
		httpd_error(rs, 500, "the samples of run %lld cannot be read: %s", (long long)rq->id, strerror(-r));
		return;
	}
	size_t n = tn < vn ? tn : vn;
	/* a long run's series is thinned to every stride-th sample (the last
	 * one always kept): the reply stays under SAMPLES_POINTS_MAX points */
	size_t stride = n > SAMPLES_POINTS_MAX ? (n + SAMPLES_POINTS_MAX - 3) / (SAMPLES_POINTS_MAX - 1) : 1;
	sb_printf(b, "{\"run\": %lld, \"metric\": ", (long long)rq->id);
	json_str_sb(b, metric);
	sb_puts(b, ", \"unit\": ");
	json_str_sb(b, sampler_metric_unit(metric));
	sb_printf(b, ", \"n\": %zu, \"stride\": %zu, \"t_s\": [", n, stride);
	for (size_t i = 0; i < n; i = next_sample(i, n, stride))
		sb_printf(b, "%s%.6f", i ? ", " : "", (double)t[i] / 1e9);
	sb_puts(b, "], \"values\": [");
	/* raw counters are unsigned; gauges fit either way */
	for (size_t i = 0; i < n; i = next_sample(i, n, stride))
		sb_printf(b, "%s%llu", i ? ", " : "", (unsigned long long)(uint64_t)v[i]);
	sb_puts(b, "]}");
	ok_json(rs, 200);
}
