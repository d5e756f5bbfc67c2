/* A bisection's life in kabd (bisect_life.h): asked for, replayed from the
 * store with step jobs, ended with its report, cancelled. */
#include "harness/daemon/bisect_life.h"
#include "harness/daemon/bisect_control.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/report.h"
#include "kernels/bisect_git.h"
#include "kernels/build.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "db/store_regress.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the runner: answers from the store only ---- */

/* One ended step job's pairs of the metric, loaded once a replay. */
struct pairs {
	int64_t job;
	double *a, *b; /* [k]: base's, sha's; NAN: no ok run */
	size_t n;
	char why[256]; /* the first run that gave no value, and why */
};

struct used {
	char control[16];
	char sha[41], base[41];
	size_t n; /* pairs the replay took so far */
};

struct store_runner {
	struct store *st;
	const struct store_bisect *b;
	const struct store_bisect_job *jobs;
	size_t n_jobs;
	struct pairs *p;
	size_t n_p, cap_p;
	struct used *u;
	size_t n_u, cap_u;
	unsigned short_by; /* pairs missing when measure said pending */
	/* the source variant boots recorded builds (build = ID): a commit is
	 * measured only on a recorded ok build with its build's config */
	bool recorded;
	char config_hash[65];
	const struct kbisect_git *g; /* the clone: the controls' sides are made there */
};

/* Whether the bisection's variant of j, its source job, boots recorded
 * builds (build = ID, a build machine builds, this one boots): 1 with
 * the config hash of its build in config_hash, 0 when kab builds it from
 * the tree here. */
static int recorded_source(struct store *st, const struct store_bisect *b, const struct job *j, char config_hash[65])
{
	if (b->variant < 0 || (size_t)b->variant >= j->n_variants)
		return -EINVAL;
	if (!job_variant_recorded(&j->variants[b->variant]))
		return 0;
	int64_t *ids = calloc(j->n_variants, sizeof(*ids));
	struct store_build bd = { 0 };
	int r = -ENOMEM;
	if (ids) {
		store_variant_builds_get(st, b->source_job, ids, j->n_variants);
		r = ids[b->variant] > 0 && store_build_get(st, ids[b->variant], &bd) == 0 ? 1 : -ENOENT;
	}
	if (r == 1)
		snprintf(config_hash, 65, "%s", bd.config_hash);
	store_build_clear(&bd);
	free(ids);
	return r;
}

static bool unfinished(const struct store_bisect_job *j)
{
	return j->job <= 0 || !job_status_finished(j->status);
}

static int build_answer(void *ctx, const char *sha, struct strbuf *why)
{
	struct store_runner *c = ctx;
	enum build_status bs;
	char reason[512];
	int r = store_bisect_build(c->st, c->b->tree, c->b->series, sha, &bs, reason, sizeof(reason));
	int64_t id;
	if (c->recorded && !(r == 0 && bs == BUILD_FAILED) &&
	    store_bisect_build_id(c->st, c->b->tree, c->b->series, c->config_hash, sha, &id) < 0) {
		/* nothing here builds it: a build machine did or did not */
		sb_printf(why,
			  "no build of %.12s with the variant's config is recorded (its variant boots recorded builds, "
			  "build = ID: build the commit with kab build where the nights are built)",
			  sha);
		return 1;
	}
	if (r == 0 && bs == BUILD_OK)
		return 0;
	if (r == 0) {
		sb_puts(why, reason[0] ? reason : "the build failed");
		return 1;
	}
	if (r != -ENOENT)
		return r;
	/* no build of it is recorded: what its step jobs say */
	const struct store_bisect_job *failed = NULL;
	bool waiting = false;
	for (size_t i = 0; i < c->n_jobs; i++) {
		const struct store_bisect_job *j = &c->jobs[i];
		if (j->control[0] || (strcmp(j->sha, sha) != 0 && strcmp(j->base, sha) != 0))
			continue;
		if (unfinished(j))
			waiting = true;
		else if (j->status == JOB_DONE)
			return 0; /* it ran, so it was built (under another record) */
		else if (!failed)
			failed = j;
	}
	if (failed && !waiting) {
		sb_printf(why, "step job %lld ended %s before %.12s was built: %s", (long long)failed->job,
			  job_status_name(failed->status), sha, failed->reason);
		return -EIO;
	}
	return BISECT_PENDING;
}

struct load_ctx {
	int workload;
	const char *metric;
	struct pairs *p;
	size_t k;
};

static void take_value(void *ctx, const struct store_run *r, const char *metric, const char *unit, double value)
{
	struct load_ctx *l = ctx;
	if (r->workload != l->workload || r->pair < 0 || (size_t)r->pair >= l->k || r->variant > 1 ||
	    r->status != RUN_OK || strcmp(metric, l->metric) != 0)
		return;
	(r->variant == 0 ? l->p->a : l->p->b)[r->pair] = value;
}

/* The first run of the workload that gave no value, and why. */
static void first_failure(struct store *st, int64_t job, int workload, char *why, size_t len)
{
	struct store_run *runs = NULL;
	size_t n = 0;
	if (store_runs_load(st, job, &runs, &n) < 0)
		return;
	for (size_t i = 0; i < n && !why[0]; i++)
		if (runs[i].workload == workload && runs[i].pair >= 0 && runs[i].status != RUN_OK)
			snprintf(why, len, "run %lld %s%s%.200s", (long long)runs[i].id,
				 run_status_name(runs[i].status), runs[i].reason[0] ? ": " : "", runs[i].reason);
	free(runs);
}

/* The pairs of an ended step job (done), loaded once. */
static int job_pairs(struct store_runner *c, const struct store_bisect_job *j, struct pairs **ret)
{
	for (size_t i = 0; i < c->n_p; i++)
		if (c->p[i].job == j->job) {
			*ret = &c->p[i];
			return 0;
		}
	struct store_job_part *w = NULL;
	size_t n_w = 0;
	int r = store_job_workloads(c->st, j->job, &w, &n_w);
	if (r < 0)
		return r;
	int wi = -1;
	for (size_t i = 0; i < n_w && wi < 0; i++)
		if (strcmp(w[i].name, c->b->workload) == 0)
			wi = (int)i;
	free(w);
	if (util_grow(c->p, c->cap_p, c->n_p + 1, 8) < 0)
		return -ENOMEM;
	struct pairs *p = &c->p[c->n_p];
	*p = (struct pairs){ .job = j->job, .n = j->k };
	p->a = malloc((j->k ? j->k : 1) * sizeof(double));
	p->b = malloc((j->k ? j->k : 1) * sizeof(double));
	if (!p->a || !p->b) {
		free(p->a);
		free(p->b);
		return -ENOMEM;
	}
	c->n_p++;
	for (size_t i = 0; i < p->n; i++)
		p->a[i] = p->b[i] = NAN;
	if (wi >= 0) {
		struct load_ctx l = { .workload = wi, .metric = c->b->metric, .p = p, .k = p->n };
		if ((r = store_foreach_metric(c->st, j->job, take_value, &l)) < 0)
			return r;
		first_failure(c->st, j->job, wi, p->why, sizeof(p->why));
	} else
		snprintf(p->why, sizeof(p->why), "it has no workload %s", c->b->workload);
	/* the regression's confirmation stopped adaptively: its pairs that
	 * were made, only (a step job makes every pair it has) */
	size_t k = 0;
	for (size_t i = 0; j->id == 0 && i < p->n; i++)
		if (isfinite(p->a[i]) && isfinite(p->b[i])) {
			p->a[k] = p->a[i];
			p->b[k++] = p->b[i];
		}
	if (j->id == 0)
		p->n = k;
	*ret = p;
	return 0;
}

static struct used *used_get(struct store_runner *c, const char *control, const char *sha, const char *base)
{
	for (size_t i = 0; i < c->n_u; i++)
		if (strcmp(c->u[i].control, control) == 0 && strcmp(c->u[i].sha, sha) == 0 && strcmp(c->u[i].base, base) == 0)
			return &c->u[i];
	if (util_grow(c->u, c->cap_u, c->n_u + 1, 8) < 0)
		return NULL;
	struct used *u = &c->u[c->n_u++];
	*u = (struct used){ 0 };
	snprintf(u->control, sizeof(u->control), "%s", control);
	snprintf(u->sha, sizeof(u->sha), "%s", sha);
	snprintf(u->base, sizeof(u->base), "%s", base);
	return u;
}

/* The next k pairs of sha against base (for control: of that control of
 * the culprit sha) from the step jobs that compared them, in the order
 * they were queued, after those this replay took. */
static int measure_rows(struct store_runner *c, const char *control, const char *sha, const char *base, unsigned k,
			double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct used *u = used_get(c, control, sha, base);
	if (!u)
		return -ENOMEM;
	size_t skip = u->n, got = 0;
	const char *first_why = NULL;
	for (size_t i = 0; i < c->n_jobs && got < k; i++) {
		const struct store_bisect_job *j = &c->jobs[i];
		if (strcmp(j->control, control) != 0 || strcmp(j->sha, sha) != 0 || strcmp(j->base, base) != 0)
			continue;
		if (unfinished(j))
			break;
		if (j->status == JOB_CANCELLED) {
			sb_printf(why, "step job %lld was cancelled%s%s", (long long)j->job, j->reason[0] ? ": " : "", j->reason);
			return -ECANCELED;
		}
		if (j->status != JOB_DONE) {
			sb_printf(why, "step job %lld %s: %s", (long long)j->job, job_status_name(j->status), j->reason);
			return 1;
		}
		struct pairs *p;
		int r = job_pairs(c, j, &p);
		if (r < 0)
			return r;
		for (size_t q = 0; q < p->n && got < k; q++) {
			if (skip) {
				skip--;
				continue;
			}
			ret_base[got] = p->a[q];
			ret_sha[got++] = p->b[q];
			if (!first_why && p->why[0])
				first_why = p->why;
		}
	}
	if (got < k) {
		c->short_by = k - (unsigned)got;
		return BISECT_PENDING;
	}
	u->n += k;
	bool any = false;
	for (size_t i = 0; i < k && !any; i++)
		any = isfinite(ret_base[i]) && isfinite(ret_sha[i]);
	if (!any) {
		sb_printf(why, "no pair gave %s in workload %s%s%s", c->b->metric, c->b->workload,
			  first_why ? ": " : "", first_why ? first_why : "");
		return 1;
	}
	return 0;
}

static int measure_answer(void *ctx, const char *sha, const char *base, unsigned k, double *ret_base, double *ret_sha,
			  struct strbuf *why)
{
	return measure_rows(ctx, "", sha, base, k, ret_base, ret_sha, why);
}

/* A control: not applicable where it cannot be made (git says so in the
 * clone at every replay: cheap, and the same answer), else its rows'. */
static int control_answer(void *ctx, enum bisect_control kind, const char *sha, const char *base, unsigned k,
			  double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct store_runner *c = ctx;
	if (c->recorded) {
		sb_printf(why, "the variant boots recorded builds (build = ID), which kab cannot rebuild %s",
			  kind == BISECT_CTL_REVERT ? "with the culprit reverted" : "with forced alignment");
		return BISECT_NOT_APPLICABLE;
	}
	struct bisect_sides s;
	int r = bisect_control_sides(c->g, kind, sha, base, &s, why);
	if (r != 0)
		return r;
	if ((r = measure_rows(c, bisect_control_name(kind), sha, base, k, ret_base, ret_sha, why)) == 0)
		sb_puts(why, s.note);
	return r;
}

static void runner_free(struct store_runner *c)
{
	for (size_t i = 0; i < c->n_p; i++) {
		free(c->p[i].a);
		free(c->p[i].b);
	}
	free(c->p);
	free(c->u);
}

/* ---- step jobs ---- */

/* A step job's text: the source job's variant at base (A) against the
 * same variant at sha (B), the bisection's workload only, ABBA, k pairs. */
static int step_text(struct store *st, const struct store_bisect *b, const struct store_bisect_job *row, char **ret, struct strbuf *err)
{
	struct job *one = NULL, *two = NULL;
	int r = job_store_load(st, b->source_job, &one, err);
	if (r >= 0)
		r = job_store_load(st, b->source_job, &two, err);
	if (r >= 0) {
		char gname[64], bname[64];
		snprintf(gname, sizeof(gname), "base-%.12s", row->base);
		snprintf(bname, sizeof(bname), "step-%.12s", row->sha);
		const char *names[] = { b->workload };
		struct job_confirm jc = {
			.name = row->name,
			.good_name = gname,
			.bad_name = bname,
			.good_base = row->base,
			.bad_base = row->sha,
			.min_pairs = row->k,
			.max_pairs = row->k,
			.workloads = names,
			.n_workloads = 1,
		};
		char config_hash[65];
		int rec = recorded_source(st, b, one, config_hash);
		if (rec == 1 && (store_bisect_build_id(st, b->tree, b->series, config_hash, row->base, &jc.good_build) < 0 ||
				 store_bisect_build_id(st, b->tree, b->series, config_hash, row->sha, &jc.bad_build) < 0)) {
			sb_printf(err, "no recorded build of %.12s or %.12s with the config of job %lld's variant %d",
				  row->base, row->sha, (long long)b->source_job, b->variant);
			r = -ENOENT;
		} else if (rec < 0) {
			sb_printf(err, "job %lld's variant %d: its build cannot be read", (long long)b->source_job, b->variant);
			r = rec;
		}
		if (r >= 0)
			r = job_confirmation(one, two, (size_t)b->variant, &jc, ret);
		if (r < 0 && !err->len)
			sb_printf(err, "job %lld's variant %d and workload %s make no step job: %s",
				  (long long)b->source_job, b->variant, b->workload, strerror(-r));
	}
	job_free(one);
	job_free(two);
	return r;
}

static int clone_of(const struct bisect_env *env, const struct store_bisect *b, char *buf, size_t len);

/* Queues the job of a step row (written before: a crash between the two
 * leaves a row whose job is found by its name) and links it. */
static int queue_row(struct store *st, const struct bisect_env *env, const struct store_bisect *b,
		     struct store_bisect_job *row, struct strbuf *err)
{
	int64_t id;
	if (store_job_by_name(st, row->name, &id) == 0) {
		row->job = id;
		return store_bisect_job_link(st, row->id, id);
	}
	char *text = NULL;
	struct job *j = NULL;
	struct diags d = { 0 };
	int r;
	if (row->control[0]) {
		char clone[PATH_MAX];
		struct kbisect_git g = { .tree = clone, .user = env->git_user };
		r = clone_of(env, b, clone, sizeof(clone));
		r = r < 0 ? r : bisect_control_text(st, &g, b, row, &text, err);
	} else
		r = step_text(st, b, row, &text, err);
	if (r >= 0) {
		r = env->no_machine_checks ? job_parse_string_nocheck("bisection", text, &j, &d)
					   : job_parse_string("bisection", text, &j, &d);
		if (r < 0)
			sb_printf(err, "the step job of %.12s against %.12s does not pass its checks: %s", row->sha,
				  row->base, d.n ? d.v[0].msg : "see kabd's log");
	}
	char who[64];
	snprintf(who, sizeof(who), "kabd (bisection %lld)", (long long)b->id);
	if (r >= 0) {
		r = env->submit ? env->submit(env->ctx, st, j, who, &id) : jl_submit(st, j, who, &id, NULL);
		if (r < 0)
			sb_printf(err, "the step job could not be queued: %s", strerror(-r));
	}
	if (r >= 0 && (r = store_bisect_job_link(st, row->id, id)) >= 0) {
		row->job = id;
		log_info("kabd: bisection %lld: %s job %lld queued, %u pair%s of %.12s against %.12s", (long long)b->id,
			 row->control[0] ? row->control : "step", (long long)id, row->k, row->k == 1 ? "" : "s",
			 row->sha, row->base);
	}
	free(text);
	job_free(j);
	diags_free(&d);
	return r;
}

static void cancel_step(struct store *st, const struct bisect_env *env, int64_t id, int64_t job)
{
	char status[32];
	int e = env->cancel ? env->cancel(env->ctx, st, job)
			    : jl_cancel(st, job, "its bisection was cancelled", status, sizeof(status));
	if (e < 0 && e != -EALREADY)
		log_warn("kabd: bisection %lld: step job %lld could not be cancelled: %s", (long long)id,
			 (long long)job, strerror(-e));
}

static int add_step(struct store *st, const struct bisect_env *env, const struct store_bisect *b, size_t seq,
		    const struct bisect_request *w, unsigned k, struct strbuf *err)
{
	struct store_job sj;
	int r = store_job_info(st, b->source_job, &sj);
	if (r < 0)
		return r;
	struct store_bisect_job row = { .bisection = b->id, .k = k };
	snprintf(row.name, sizeof(row.name), "%.100s.bisect-%lld-%zu", sj.name, (long long)b->id, seq);
	store_job_clear(&sj);
	snprintf(row.sha, sizeof(row.sha), "%s", w->sha);
	snprintf(row.base, sizeof(row.base), "%s", w->base);
	if (w->control != BISECT_CTL_NONE)
		snprintf(row.control, sizeof(row.control), "%s", bisect_control_name(w->control));
	if ((r = store_bisect_job_add(st, &row, &row.id)) < 0 || (r = queue_row(st, env, b, &row, err)) < 0)
		return r;
	/* cancelled over the API while this replay ran: the job goes too */
	struct store_bisect now;
	if (store_bisect_get(st, b->id, &now) == 0) {
		if (now.state != BISECT_RUNNING)
			cancel_step(st, env, b->id, row.job);
		store_bisect_clear(&now);
	}
	return 0;
}

/* ---- the report ---- */

static json_t *effect_json(const struct brule_out *o)
{
	json_t *v = json_object();
	if (!v)
		return NULL;
	jw_set(v, "decision", jw_str(brule_decision_name(o->decision)));
	jw_set(v, "reason", jw_str(o->reason));
	jw_set(v, "estimate_pct", jw_num(o->effect.est));
	jw_set(v, "ci_lo_pct", jw_num(o->effect.lo));
	jw_set(v, "ci_hi_pct", jw_num(o->effect.hi));
	jw_set(v, "pairs", json_integer((json_int_t)o->effect.pairs));
	return v;
}

/* A control of a culprit: null when not asked; else its comparison
 * (decision, reason, estimate with CI, pairs), what it compared and what
 * it was. */
static json_t *control_json(const struct bisect_ctl *k)
{
	if (!k->asked)
		return json_null();
	json_t *v = effect_json(&k->out);
	if (!v)
		return NULL;
	jw_set(v, "base", jw_str_opt(k->base));
	jw_set(v, "note", jw_str_opt(k->note));
	return v;
}

/* "SHA<TAB>subject<TAB>author<TAB>date" into the object's fields. */
static void describe(const struct kbisect_git *g, const char *sha, json_t *v)
{
	struct strbuf d = { 0 }, e = { 0 };
	if (kbisect_git_ops.describe((void *)g, sha, &d, &e) == 0 && d.buf) {
		static const char *const keys[] = { NULL, "subject", "author", "date" };
		char *p = d.buf;
		for (size_t i = 0; i < ARRAY_SIZE(keys) && p; i++) {
			char *tab = strchr(p, '\t');
			if (tab)
				*tab = 0;
			p[strcspn(p, "\n")] = 0;
			if (keys[i])
				jw_set(v, keys[i], jw_str(p));
			p = tab ? tab + 1 : NULL;
		}
	}
	sb_free(&d);
	sb_free(&e);
}

static json_t *report_json(const struct bisect_report *rep, const struct kbisect_git *g)
{
	json_t *v = json_object(), *steps = json_array(), *culprits = json_array();
	if (!v || !steps || !culprits) {
		json_decref(v);
		json_decref(steps);
		json_decref(culprits);
		return NULL;
	}
	jw_set(v, "good", jw_str(rep->good));
	jw_set(v, "bad", jw_str(rep->bad));
	jw_set(v, "anchor", effect_json(&rep->anchor));
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct bisect_row *row = &rep->rows[i];
		json_t *s = effect_json(&row->out);
		if (!s)
			continue;
		jw_set(s, "sha", jw_str(row->sha));
		jw_set(s, "part", json_integer(row->part));
		jw_set(s, "mark", row->marked ? jw_str(kbisect_mark_name(row->mark)) : json_null());
		json_array_append_new(steps, s);
	}
	for (size_t i = 0; i < rep->n_culprits; i++) {
		const struct bisect_culprit *k = &rep->culprits[i];
		json_t *c = json_object();
		if (!c)
			continue;
		jw_set(c, "answer", jw_str(bisect_answer_name(k->answer)));
		jw_set(c, "part", json_integer(k->part));
		if (k->answer == BISECT_RANGE) {
			json_t *cand = json_array();
			for (size_t m = 0; cand && m < k->range.n_cand; m++)
				json_array_append_new(cand, jw_str(k->range.cand[m]));
			jw_set(c, "candidates", cand);
			jw_set(c, "n_candidates", json_integer((json_int_t)k->range.n_cand_total));
			jw_set(c, "reason", jw_str(k->confirm.reason));
		} else {
			jw_set(c, "sha", jw_str(k->sha));
			describe(g, k->sha, c);
			jw_set(c, "parent", jw_str_opt(k->parent));
			jw_set(c, "confirmation", effect_json(&k->confirm));
			json_t *ctl = json_object();
			if (ctl) {
				jw_set(ctl, "revert", control_json(&k->revert));
				jw_set(ctl, "align", control_json(&k->align));
			}
			jw_set(c, "controls", ctl);
		}
		json_array_append_new(culprits, c);
	}
	jw_set(v, "steps", steps);
	jw_set(v, "culprits", culprits);
	jw_set(v, "builds", json_integer(rep->builds));
	jw_set(v, "boots", json_integer(rep->boots));
	jw_set(v, "parts", json_integer(rep->parts));
	jw_set(v, "log", jw_str(rep->log.buf ? rep->log.buf : ""));
	return v;
}

/* One line for the bisection's reason. */
static void summary(const struct bisect_report *rep, char *buf, size_t len)
{
	if (rep->anchor.decision == BRULE_REFUSED) {
		snprintf(buf, len, "not bisected: GOOD against BAD: %s", rep->anchor.reason);
		return;
	}
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < rep->n_culprits && at < len; i++) {
		const struct bisect_culprit *k = &rep->culprits[i];
		const char *what = "first bad commit", *why = "";
		if (k->answer == BISECT_LAYOUT) {
			what = "layout-sensitive first bad commit";
			why = ": its effect vanishes with forced alignment, not a regression of its code";
		} else if (k->answer == BISECT_UNCONFIRMED) {
			what = "unconfirmed first bad commit";
			why = k->confirm.decision == BRULE_CONFIRMED ? ", its revert on BAD does not give the effect back"
								     : ", not confirmed against its parent";
		}
		int n = k->answer == BISECT_RANGE
				? snprintf(buf + at, len - at, "%sone of %zu commits (only skipped ones left)",
					   i ? "; " : "", k->range.n_cand_total)
				: snprintf(buf + at, len - at, "%s%s %.12s%s", i ? "; " : "", what, k->sha, why);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	if (at < len)
		snprintf(buf + at, len - at, " (%u steps, %u builds, %u boots)", (unsigned)rep->n_rows, rep->builds, rep->boots);
}

/* ---- the life ---- */

static int to_state(struct store *st, int64_t id, enum bisect_state to, const char *reason, const char *report)
{
	return store_bisect_set_state(st, id, BISECT_FROM(BISECT_RUNNING), to, reason, report);
}

static int clone_of(const struct bisect_env *env, const struct store_bisect *b, char *buf, size_t len)
{
	if (env->clone) {
		snprintf(buf, len, "%s", env->clone);
		return 0;
	}
	return kbuild_clone_dir(env->work_dir, b->tree, buf, len);
}

static int end(struct store *st, const struct store_bisect *b, const struct bisect_report *rep, const struct kbisect_git *g)
{
	json_t *v = report_json(rep, g);
	struct strbuf text = { 0 };
	int r = v ? jw_dump_sb(&text, v, 0) : -ENOMEM;
	if (r >= 0) {
		char why[512];
		summary(rep, why, sizeof(why));
		r = to_state(st, b->id, rep->anchor.decision == BRULE_REFUSED ? BISECT_REFUSED : BISECT_DONE, why, text.buf);
		log_info("kabd: bisection %lld ends: %s", (long long)b->id, why);
	}
	sb_free(&text);
	return r;
}

/* The budget: queuing k more pairs (2k boots) must keep the boots of the
 * bisection's step jobs within b->boots (0: none). 0 when it does; 1
 * when it would not, and the bisection ended failed with the boots used
 * and the range git's marks narrowed it to (the last good and the last
 * bad step of the part it bisects); -errno for the store. */
static int budget_spent(struct store *st, const struct store_bisect *b, const struct bisect_report *rep, unsigned k)
{
	unsigned used = 0;
	int r = b->boots ? store_bisect_boots_spent(st, b->id, &used) : 0;
	if (r < 0 || !b->boots || (unsigned long long)used + 2ull * k <= b->boots)
		return r;
	const char *good = b->good, *bad = b->bad;
	unsigned part = rep->n_rows ? rep->rows[rep->n_rows - 1].part : 0, marked = 0;
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct bisect_row *row = &rep->rows[i];
		if (row->part != part || !row->marked || row->mark == KBISECT_SKIP)
			continue;
		marked++;
		*(row->mark == KBISECT_GOOD ? &good : &bad) = row->sha;
	}
	char why[512];
	snprintf(why, sizeof(why),
		 "budget of %u boots spent (%u used): the next step, %.12s against %.12s, needs %u more; so far the "
		 "first bad commit is after %.12s and at or before %.12s (%u step%s marked); ask again with more boots "
		 "(kab bisect --boots N, or bisect.boots in the job)",
		 b->boots, used, rep->wait.sha, rep->wait.base, 2 * k, good, bad, marked, marked == 1 ? "" : "s");
	log_info("kabd: bisection %lld ends: %s", (long long)b->id, why);
	r = to_state(st, b->id, BISECT_FAILED, why, NULL);
	return r < 0 ? r : 1;
}

/* The controls the source job asks for (bisect.revert, bisect.align):
 * its text is fixed, so every replay reads the same. */
static void controls_asked(struct store *st, const struct store_bisect *b, struct bisect_opts *o)
{
	struct job *j = NULL;
	struct strbuf err = { 0 };
	if (job_store_load(st, b->source_job, &j, &err) >= 0) {
		o->revert = j->bisect_revert;
		o->align = j->bisect_align;
	}
	job_free(j);
	sb_free(&err);
}

/* The replay: bisect_run over the store's answers; what it waits for
 * queued unless a step job for it is queued or running already. */
static int replay(struct store *st, const struct bisect_env *env, const struct store_bisect *b,
		  struct store_bisect_job *jobs, size_t n_jobs)
{
	char clone[PATH_MAX];
	struct strbuf err = { 0 };
	int r = clone_of(env, b, clone, sizeof(clone));
	if (r < 0)
		return to_state(st, b->id, BISECT_FAILED, "the path of kab's clone of the tree is too long", NULL);
	struct kbisect_git g = { .tree = clone, .user = env->git_user };
	struct store_runner c = { .st = st, .b = b, .jobs = jobs, .n_jobs = n_jobs };
	struct job *src = NULL;
	r = job_store_load(st, b->source_job, &src, &err);
	if (r >= 0)
		r = recorded_source(st, b, src, c.config_hash);
	job_free(src);
	sb_free(&err);
	if (r < 0)
		return to_state(st, b->id, BISECT_FAILED, "the source job's variant or its build cannot be read", NULL);
	c.recorded = r == 1;
	c.g = &g;
	struct bisect_runner run = { .ctx = &c, .build = build_answer, .measure = measure_answer, .control = control_answer };
	struct bisect_opts o = { .good = b->good, .bad = b->bad, .rule = { .min_change_pct = -1, .equivalence_pct = -1 } };
	controls_asked(st, b, &o);
	direction_parse(b->direction, &o.rule.dir);
	struct bisect_report rep;
	r = bisect_run(&kbisect_git_ops, &g, &run, &o, &rep, &err);
	if (r == BISECT_PENDING) {
		bool in_flight = false;
		for (size_t i = 0; i < n_jobs; i++)
			in_flight |= unfinished(&jobs[i]) && strcmp(jobs[i].sha, rep.wait.sha) == 0 &&
				     strcmp(jobs[i].base, rep.wait.base) == 0 &&
				     strcmp(jobs[i].control, rep.wait.control ? bisect_control_name(rep.wait.control) : "") == 0;
		r = 0;
		if (!in_flight) {
			unsigned k = !rep.wait.build && c.short_by ? c.short_by : rep.wait.k;
			size_t rows = 0;
			for (size_t i = 0; i < n_jobs; i++)
				rows += jobs[i].id != 0;
			if ((r = budget_spent(st, b, &rep, k)) != 0)
				r = r < 0 ? r : 0; /* it ended failed */
			else if ((r = add_step(st, env, b, rows + 1, &rep.wait, k, &err)) < 0) {
				char why[512];
				snprintf(why, sizeof(why), "%s", err.buf ? err.buf : strerror(-r));
				r = to_state(st, b->id, BISECT_FAILED, why, NULL);
			}
		}
		bisect_report_free(&rep);
	} else if (r == 0) {
		r = end(st, b, &rep, &g);
		bisect_report_free(&rep);
	} else if (r != -ENOMEM && r != -EBUSY) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err.buf ? err.buf : strerror(-r));
		log_warn("kabd: bisection %lld fails: %s", (long long)b->id, why);
		r = to_state(st, b->id, BISECT_FAILED, why, NULL);
	}
	sb_free(&err);
	runner_free(&c);
	return r;
}

/* A regression's confirmation job compared BAD with GOOD, paired, as
 * the anchor does: its pairs come first (a row of id 0, no step job's),
 * so the anchor measures only what they did not decide. */
static int with_confirmation(struct store *st, const struct store_bisect *b, struct store_bisect_job **jobs, size_t *n)
{
	struct store_regress g;
	struct store_job sj;
	if (b->regression <= 0 || store_regress_get(st, b->regression, &g) < 0 || g.confirm_job <= 0 ||
	    strcmp(g.good_sha, b->good) != 0 || strcmp(g.bad_sha, b->bad) != 0)
		return 0;
	if (store_job_info(st, g.confirm_job, &sj) < 0)
		return 0;
	bool done = sj.status == JOB_DONE;
	unsigned pairs = sj.pairs;
	store_job_clear(&sj);
	if (!done)
		return 0;
	struct store_bisect_job *v = realloc(*jobs, (*n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memmove(v + 1, v, *n * sizeof(*v));
	v[0] = (struct store_bisect_job){ .bisection = b->id, .job = g.confirm_job, .k = pairs, .status = JOB_DONE };
	snprintf(v[0].sha, sizeof(v[0].sha), "%s", b->bad);
	snprintf(v[0].base, sizeof(v[0].base), "%s", b->good);
	*jobs = v;
	(*n)++;
	return 1;
}

int bisect_advance(struct store *st, const struct bisect_env *env, int64_t id)
{
	struct store_bisect_job *jobs = NULL;
	size_t n = 0;
	struct store_bisect b = { 0 };
	int r = store_bisect_load(st, id, &b, &jobs, &n);
	if (r < 0 || b.state != BISECT_RUNNING)
		goto out;
	/* a row whose job was not queued or linked before a crash */
	bool fixed = false;
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].job > 0)
			continue;
		struct strbuf err = { 0 };
		if ((r = queue_row(st, env, &b, &jobs[i], &err)) < 0)
			r = to_state(st, id, BISECT_FAILED, err.buf ? err.buf : strerror(-r), NULL);
		sb_free(&err);
		store_bisect_clear(&b);
		if (r < 0 || store_bisect_get(st, id, &b) < 0 || b.state != BISECT_RUNNING)
			goto out;
		fixed = true;
	}
	/* the linked jobs' statuses as they are */
	if (fixed) {
		free(jobs);
		jobs = NULL;
		if ((r = store_bisect_jobs(st, id, &jobs, &n)) < 0)
			goto out;
	}
	if ((r = with_confirmation(st, &b, &jobs, &n)) >= 0)
		r = replay(st, env, &b, jobs, n);
out:
	free(jobs);
	store_bisect_clear(&b);
	return r;
}

int bisect_advance_all(struct store *st, const struct bisect_env *env)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int r = store_bisect_running(st, &ids, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		int e = bisect_advance(st, env, ids[i]);
		if (e < 0)
			log_warn("kabd: bisection %lld could not be advanced: %s", (long long)ids[i], strerror(-e));
	}
	free(ids);
	return r;
}

int bisect_after_job(struct store *st, const struct bisect_env *env, int64_t job_id)
{
	int64_t id;
	int r = store_bisect_of_job(st, job_id, &id);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if ((r = bisect_advance(st, env, id)) < 0)
		log_warn("kabd: bisection %lld could not be advanced after job %lld: %s", (long long)id,
			 (long long)job_id, strerror(-r));
	return 1;
}

int bisect_cancel(struct store *st, const struct bisect_env *env, int64_t id, const char *who, struct strbuf *err)
{
	struct store_bisect b;
	int r = store_bisect_get(st, id, &b);
	if (r < 0) {
		sb_printf(err, "no bisection %lld", (long long)id);
		return r;
	}
	enum bisect_state was = b.state;
	store_bisect_clear(&b);
	if (was != BISECT_RUNNING) {
		sb_printf(err, "bisection %lld has ended: %s", (long long)id, bisect_state_name(was));
		return -EALREADY;
	}
	char why[160];
	snprintf(why, sizeof(why), "cancelled by %s; the step jobs that ended are kept", who ? who : "?");
	/* first the state: a step job's end then advances nothing */
	if ((r = to_state(st, id, BISECT_CANCELLED, why, NULL)) < 0) {
		sb_printf(err, "bisection %lld could not be cancelled", (long long)id);
		return r;
	}
	struct store_bisect_job *jobs = NULL;
	size_t n = 0;
	if ((r = store_bisect_jobs(st, id, &jobs, &n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].job <= 0 || job_status_finished(jobs[i].status))
			continue;
		cancel_step(st, env, id, jobs[i].job);
	}
	free(jobs);
	return 0;
}
