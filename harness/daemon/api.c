/* kabd's /api/v1 handlers: JSON out, job file text in. */
#include "harness/daemon/api.h"
#include "harness/daemon/api_page.h"
#include "harness/daemon/body_cache.h"
#include "harness/base/json.h"
#include "harness/job/job.h"
#include "harness/daemon/queue.h"
#include "harness/report/report.h"
#include "db/counter.h"
#include "db/series.h"
#include "db/store.h"
#include "db/store_boots.h"

#include <errno.h>
#include <math.h>
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

/* A reply the writer finished: 200-ish with a newline after the JSON,
 * or 500 if a value could not be made. */
static void ok_json(struct httpd_resp *rs, struct jw *w, int status)
{
	if (jw_end(w) < 0) {
		httpd_error(rs, 500, "out of memory");
		return;
	}
	rs->status = status;
	rs->content_type = "application/json";
	sb_puts(&rs->body, "\n");
}

static void ok_value(struct httpd_resp *rs, json_t *v, int status)
{
	struct jw w;
	jw_init_sb(&w, &rs->body, 0);
	jw_put(&w, NULL, v);
	ok_json(rs, &w, status);
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
	struct jw w;
	jw_init_sb(&w, &rs->body, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_open(&w, "jobs", '[', JW_ROWS);
	int64_t last = 0;
	for (; i < n && api_page_room(&page, shown, rs->body.len); i++) {
		struct store_job sj;
		if (store_job_info(st, ids[i], &sj) < 0)
			continue;
		jw_put(&w, NULL,
		       json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)sj.id, "name", jw_str(sj.name),
				 "status", jw_str(job_status_name(sj.status)), "submitter", jw_str_opt(sj.submitter),
				 "created", jw_time(sj.created), "finished", jw_time(sj.finished)));
		last = sj.id;
		shown++;
		store_job_clear(&sj);
	}
	jw_close(&w);
	api_page_end(&w, i < n, last);
	ok_json(rs, &w, 200);
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

/* A job's own fields in GET /api/v1/jobs/ID, "id" to "finished". */
static void job_json_fields(struct jw *w, const struct store_job *sj)
{
	jw_put_members(w, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)sj->id, "name",
				    jw_str(sj->name), "status", jw_str(job_status_name(sj->status)), "reason",
				    jw_str_opt(sj->reason), "file", jw_str(sj->file), "submitter",
				    jw_str_opt(sj->submitter), "created", jw_time(sj->created), "started",
				    jw_time(sj->started), "finished", jw_time(sj->finished)));
}

/* Names and kinds of the variants or workloads, as [{"name": , kind_key: }]. */
static json_t *parts_json(const struct store_job_part *v, size_t n, const char *kind_key)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_pack("{s:o, s:o}", "name", jw_str(v[i].name), kind_key, jw_str(v[i].kind))) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Its pairs, order, variants and workloads, when the job has them stored. */
static void job_json_parts(struct jw *w, const struct store_job *sj, const struct job_names *jn)
{
	if (!jn->n_variants)
		return;
	jw_put(w, "pairs", json_integer(sj->pairs));
	jw_put(w, "order", jw_str(sj->order));
	jw_put(w, "variants", parts_json(jn->variants, jn->n_variants, "kernel"));
	jw_put(w, "workloads", parts_json(jn->workloads, jn->n_workloads, "type"));
}

struct boots_json {
	struct jw *w;
	const struct job_names *jn;
	size_t shown;
};

static void boot_json(void *ctx, const struct store_boot *x)
{
	struct boots_json *bj = ctx;
	struct jw *w = bj->w;
	if (!bj->shown++)
		jw_open(w, "boots", '[', JW_INLINE);
	jw_open(w, NULL, '{', JW_INLINE);
	jw_put(w, "slot", json_integer(x->slot + 1));
	jw_put(w, "variant", jw_str(name_at(bj->jn->variants, bj->jn->n_variants, x->variant)));
	jw_put(w, "build", json_integer(x->build_id));
	jw_put(w, "method", jw_str(x->method));
	jw_put(w, "status", jw_str(boot_status_name(x->status)));
	jw_put(w, "reason", jw_str_opt(x->reason));
	jw_put(w, "boot_id", jw_str_opt(x->boot_id));
	jw_put(w, "kernel_release", jw_str_opt(x->kernel_release));
	jw_put(w, "switch_at", jw_time(x->switch_at));
	/* the durations to the millisecond, as they were measured */
	bool ready = x->ready_at > 0;
	jw_fixed(w, "prep_s", ready ? x->prep_s : NAN, 3);
	jw_fixed(w, "uptime_s", ready ? x->uptime_s : NAN, 3);
	jw_fixed(w, "kexec_s", ready ? x->kexec_s : NAN, 3);
	jw_close(w);
}

/* A job that boots kernels: every switch and the boot that followed
 * (nothing for a job that boots none), read one at a time. */
static void job_json_boots(struct jw *w, struct store *st, int64_t id, const struct job_names *jn)
{
	struct boots_json bj = { .w = w, .jn = jn };
	struct jw before = *w;
	size_t len = w->sb->len;
	if (store_boots_foreach(st, id, boot_json, &bj) < 0) {
		/* as before: a job whose boots cannot be read shows none */
		*w = before;
		w->sb->len = len;
		if (w->sb->buf)
			w->sb->buf[len] = 0;
		return;
	}
	if (bj.shown)
		jw_close(w);
}

/* Its progress over the schedule, the stage, the elapsed time and the
 * time left. */
static void job_json_progress(struct jw *w, struct store *st, const struct store_job *sj, const struct job_names *jn,
			      const struct store_steps_count *c)
{
	size_t done = c->n[STEP_FINISHED] + c->n[STEP_ABORTED];
	size_t skipped = c->n[STEP_SKIPPED] + c->n[STEP_BOOT_FAILED];
	const struct store_step *cur = c->current.id ? &c->current : NULL;
	jw_open(w, "progress", '{', JW_INLINE);
	jw_put(w, "runs_done", json_integer((json_int_t)done));
	jw_put(w, "runs_skipped", json_integer((json_int_t)skipped));
	jw_put(w, "runs_total", json_integer((json_int_t)c->total));
	if (cur)
		jw_put(w, "current",
		       json_pack("{s:i, s:i, s:o, s:o}", "seq", cur->seq, "pair", cur->pair + 1, "variant",
				 jw_str(name_at(jn->variants, jn->n_variants, cur->variant)), "workload",
				 jw_str(name_at(jn->workloads, jn->n_workloads, cur->workload))));
	else
		jw_put(w, "current", json_null());
	/* what the executor does between runs (building kernels) */
	jw_put(w, "stage", jw_str_opt(!cur && sj->status == JOB_RUNNING ? sj->reason : NULL));
	double elapsed, eta;
	bool have_eta = job_timing(st, sj, c->total - done - skipped, &elapsed, &eta);
	jw_fixed(w, "elapsed_s", sj->started > 0 ? elapsed : NAN, 1);
	jw_fixed(w, "eta_s", have_eta ? eta : NAN, 0);
	jw_close(w);
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
	struct jw w;
	jw_init_sb(&w, &rs->body, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	job_json_fields(&w, &sj);
	job_json_parts(&w, &sj, &jn);
	job_json_boots(&w, st, rq->id, &jn);
	job_json_progress(&w, st, &sj, &jn, &c);
	jw_close(&w);
	ok_json(rs, &w, 200);
out:
	job_names_free(&jn);
	store_job_clear(&sj);
}

/* A page of GET /jobs/ID/runs as it is written, one run at a time. */
struct runs_page {
	struct jw *w;
	struct api_page page;
	const struct job_names *jn;
	size_t shown;
	int64_t last;
	bool more;
};

static json_t *run_provenance_json(const struct store_run_row *r)
{
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:i, s:I, s:I, s:o, s:i, s:o, s:o}", "kab_version", jw_str(r->kab_version),
			      "kernel_release", jw_str(r->kernel_release), "boot_id", jw_str(r->boot_id), "cmdline",
			      jw_str(r->cmdline), "cpus", r->cpus, "mem_total", (json_int_t)r->mem_total, "swap_total",
			      (json_int_t)r->swap_total, "swap_devices", jw_str(r->swap_devices), "cgroup_version",
			      r->cgroup_version, "cgroup_path", jw_str(r->cgroup_path), "knobs", jw_str(r->knobs));
	/* settings null: a run recorded before kab read them */
	if (o && (jw_set(o, "settings", jw_str_opt(r->settings)) < 0 || jw_set(o, "conditioning", jw_str_opt(r->conditioning)) < 0 ||
		  jw_set(o, "memory_max", json_integer((json_int_t)r->memory_max)) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int run_row_json(void *ctx, const struct store_run_row *r)
{
	struct runs_page *p = ctx;
	if (!api_page_room(&p->page, p->shown, p->w->sb->len)) {
		p->more = true;
		return 1;
	}
	jw_put(p->w, NULL,
	       json_pack("{s:I, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:i, s:o, s:o, s:o}", "id", (json_int_t)r->id,
			 "step", (json_int_t)r->step_id, "pair", r->pair + 1, "variant",
			 jw_str(name_at(p->jn->variants, p->jn->n_variants, r->variant)), "workload",
			 jw_str(name_at(p->jn->workloads, p->jn->n_workloads, r->workload)), "status",
			 jw_str(run_status_name(r->status)), "reason", jw_str_opt(r->reason), "exit_code",
			 r->exit_code >= 0 ? json_integer(r->exit_code) : json_null(), "term_signal", r->term_signal, "started",
			 jw_time(r->started), "finished", jw_time(r->finished), "provenance", run_provenance_json(r)));
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
	struct jw w;
	jw_init_sb(&w, &rs->body, 0);
	struct runs_page p = { .w = &w };
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
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "job", json_integer(rq->id));
	jw_open(&w, "runs", '[', JW_ROWS);
	/* one more than a page: whether there is a next one */
	if (store_runs_page(st, rq->id, p.page.after, p.page.limit + 1, run_row_json, &p) < 0) {
		httpd_error(rs, 500, "cannot read the runs of job %lld", (long long)rq->id);
		goto out;
	}
	jw_close(&w);
	api_page_end(&w, p.more, p.last);
	ok_json(rs, &w, 200);
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
void api_reply_diags(struct httpd_resp *rs, int r, const struct diags *d)
{
	char head[64];
	snprintf(head, sizeof(head), "the job has %zu error(s)", diags_count(d));
	json_t *errors = json_array();
	for (size_t i = 0; errors && i < d->n; i++) {
		struct strbuf line = { 0 };
		/* the machine's /etc/kab/machine.conf is named; the job's own file is not */
		bool other = d->v[i].file && strcmp(d->v[i].file, "submitted.job") != 0;
		if (other)
			sb_printf(&line, "%s:", d->v[i].file);
		if (d->v[i].line > 0)
			sb_printf(&line, "%d: %s", d->v[i].line, d->v[i].msg);
		else
			sb_printf(&line, "%s%s", other ? " " : "", d->v[i].msg);
		json_array_append_new(errors, jw_str(line.buf ? line.buf : ""));
		sb_free(&line);
	}
	if (errors && d->dropped) {
		char more[96];
		snprintf(more, sizeof(more), "and %zu more not shown: fix these first", d->dropped);
		json_array_append_new(errors, jw_str(more));
	}
	sb_free(&rs->body);
	if (jw_dump_sb(&rs->body, json_pack("{s:s, s:o}", "error", head, "errors", errors), 0) < 0) {
		httpd_error(rs, 500, "out of memory");
		return;
	}
	sb_puts(&rs->body, "\n");
	rs->status = r == -EFBIG ? 413 : 400;
	rs->content_type = "application/json";
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
		api_reply_diags(rs, r, &d);
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
		api_reply_diags(rs, -EINVAL, &d);
		diags_free(&d);
		goto out;
	}
	if (queue_submit(a->queue, st, j, rq->submitter, &id) < 0) {
		httpd_error(rs, 500, "the job could not be stored: %s", store_errmsg(st));
		goto out;
	}
	ok_value(rs, json_pack("{s:I}", "id", (json_int_t)id), 201);
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
		ok_value(rs, json_pack("{s:I, s:s}", "id", (json_int_t)rq->id, "status", r == 1 ? "cancelling" : job_status_name(JOB_CANCELLED)),
			 r == 1 ? 202 : 200);
	}
}

void api_health(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	bool db_ok = store_open_readonly(a->db_path, &st) == 0;
	int64_t cur = queue_current(a->queue);
	ok_value(rs,
		 json_pack("{s:s, s:s, s:b, s:s, s:o}", "status", db_ok ? "ok" : "degraded", "version", KAB_VERSION,
			   "database", db_ok, "executor", queue_state_name(queue_state(a->queue)), "current_job",
			   cur ? json_integer(cur) : json_null()),
		 db_ok ? 200 : 503);
}

void api_metrics(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	_cleanup_store_ struct store *st = NULL;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct strbuf *b = &rs->body;
	enum queue_state state = queue_state(a->queue);
	sb_puts(b, "# HELP kabd_up Whether kabd is serving.\n# TYPE kabd_up gauge\nkabd_up 1\n");
	sb_puts(b, "# HELP kabd_executor_state The executor's state (1 for the current one).\n# TYPE kabd_executor_state gauge\n");
	for (int i = 0; i < QUEUE_STATE_N; i++)
		sb_printf(b, "kabd_executor_state{state=\"%s\"} %d\n", queue_state_name((enum queue_state)i), (int)state == i);
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
	api_metrics_lab(a, st, b);
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
	r = series_decode(blob, len, v, n);
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

/* One entry of the run's list of series: its name and what it did (the
 * page opens on one that moves); a corrupt series has nulls. */
static void series_entry(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n)
{
	struct jw *w = ctx;
	struct series_summary sum;
	if (strcmp(metric, "t_ns") == 0)
		return;
	if (series_summarize(blob, len, n, &sum) < 0 || sum.n == 0) {
		jw_put(w, NULL, json_pack("{s:o, s:i, s:n, s:n, s:n, s:n}", "name", jw_str(metric), "n", 0, "min", "max", "mean", "changes"));
		return;
	}
	jw_put(w, NULL,
	       json_pack("{s:o, s:I, s:I, s:I, s:o, s:I}", "name", jw_str(metric), "n", (json_int_t)sum.n, "min",
			 (json_int_t)sum.min, "max", (json_int_t)sum.max, "mean", jw_num(sum.mean), "changes",
			 (json_int_t)sum.changes));
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
	struct jw w;
	jw_init_sb(&w, &rs->body, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "run", json_integer(rq->id));
	if (!metric) {
		jw_open(&w, "metrics", '[', JW_INLINE);
		for (size_t i = 0; i < nn; i++)
			if (strcmp(names[i], "t_ns") != 0)
				jw_put(&w, NULL, jw_str(names[i]));
		jw_close(&w);
		jw_open(&w, "series", '[', JW_LINES);
		if (store_series_foreach(st, rq->id, series_entry, &w) < 0) {
			httpd_error(rs, 500, "cannot read the samples of run %lld: %s", (long long)rq->id, store_errmsg(st));
			return;
		}
		jw_close(&w);
		jw_close(&w);
		ok_json(rs, &w, 200);
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
	jw_put(&w, "metric", jw_str(metric));
	jw_put(&w, "unit", jw_str(counter_unit(metric)));
	jw_put(&w, "n", json_integer((json_int_t)n));
	jw_put(&w, "stride", json_integer((json_int_t)stride));
	/* a point at a time: a series is never a tree of 20000 values */
	jw_open(&w, "t_s", '[', JW_INLINE);
	for (size_t i = 0; i < n; i = next_sample(i, n, stride))
		jw_fixed(&w, NULL, (double)t[i] / 1e9, 6);
	jw_close(&w);
	jw_open(&w, "values", '[', JW_INLINE);
	/* raw counters are unsigned; gauges fit either way */
	for (size_t i = 0; i < n; i = next_sample(i, n, stride))
		jw_u64(&w, NULL, (uint64_t)v[i]);
	jw_close(&w);
	jw_close(&w);
	ok_json(rs, &w, 200);
}
