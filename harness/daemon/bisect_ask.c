/* A bisection asked for (bisect_life.h, bisect_create): the regression or
 * the job, its variant, workload and metric, and the revisions checked
 * before anything is recorded (the branch the variant tracks fetched
 * into kab's clone for one the clone lacks); and a bisection as JSON. */
#include "harness/daemon/bisect_life.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/report.h"
#include "kernels/bisect_git.h"
#include "kernels/build.h"
#include "kernels/track.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "db/store_regress.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* kab builds it from a tree here, or it boots a build recorded from a tree
 * (build = ID: a build machine builds each commit, kab build records it) */
static bool builds_from_tree(const struct job_variant *v)
{
	return v->kernel && strcmp(v->kernel, "build") == 0 && (v->tree || job_variant_recorded(v));
}

/* The job's variant a bisection builds at each commit: the last one that
 * kab builds from a tree (the first is the baseline of a nightly job). */
static int pick_variant(const struct job *j, int64_t job_id, int want, struct strbuf *err)
{
	if (want >= 0) {
		if ((size_t)want < j->n_variants && builds_from_tree(&j->variants[want]))
			return want;
		sb_printf(err,
			  "variant: job %lld's variant %d is not built by kab from a tree (kernel = build with tree): "
			  "a bisection builds each commit",
			  (long long)job_id, want);
		return -EINVAL;
	}
	for (size_t i = j->n_variants; i-- > 0;)
		if (builds_from_tree(&j->variants[i]))
			return (int)i;
	sb_printf(err,
		  "job: job %lld has no variant that kab builds from a tree (kernel = build with tree): "
		  "a bisection builds each commit, give a job whose variants are kernel = build",
		  (long long)job_id);
	return -EINVAL;
}

/* The branch the bisection's variant follows, if any: where a revision
 * kab's clone lacks is fetched from. */
struct ask_track {
	char remote[KTRACK_NAME_MAX + 1], branch[KTRACK_NAME_MAX + 1];
};

/* The job's track = REMOTE BRANCH, else the base ref of the build the
 * variant ran (a build of a track records "REMOTE BRANCH"). */
static void variant_track(const struct job_variant *jv, const struct store_build *bd, struct ask_track *t)
{
	if (jv->track_remote && jv->track_branch) {
		snprintf(t->remote, sizeof(t->remote), "%s", jv->track_remote);
		snprintf(t->branch, sizeof(t->branch), "%s", jv->track_branch);
	} else if (bd->base_ref && strcmp(bd->kind, "build") == 0) {
		ktrack_parse_ref(bd->base_ref, t->remote, t->branch);
	}
}

/* The tree and series as the variant's build recorded them (real path),
 * else as the job gives them; and the branch the variant tracks. */
static int variant_tree(struct store *st, int64_t job_id, const struct job *j, int v, struct store_bisect *b,
			struct ask_track *t, struct strbuf *err)
{
	int64_t *ids = calloc(j->n_variants, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	store_variant_builds_get(st, job_id, ids, j->n_variants);
	struct store_build bd = { 0 };
	int r = 0;
	if (ids[v] > 0 && store_build_get(st, ids[v], &bd) == 0 && bd.tree) {
		snprintf(b->tree, sizeof(b->tree), "%s", bd.tree);
		snprintf(b->series, sizeof(b->series), "%s", bd.series ? bd.series : "");
	} else if (!j->variants[v].tree) {
		sb_printf(err, "job: job %lld's variant %s boots build %lld, which is not recorded with a tree here",
			  (long long)job_id, j->variants[v].name, (long long)j->variants[v].build_id);
		r = -EINVAL;
	} else {
		char real[PATH_MAX];
		if (!realpath(j->variants[v].tree, real)) {
			sb_printf(err, "tree: job %lld's variant %s names tree %s, which is not there",
				  (long long)job_id, j->variants[v].name, j->variants[v].tree);
			r = -EINVAL;
		} else {
			snprintf(b->tree, sizeof(b->tree), "%s", real);
			snprintf(b->series, sizeof(b->series), "%s", j->variants[v].series ? j->variants[v].series : "");
		}
	}
	if (r >= 0)
		variant_track(&j->variants[v], &bd, t);
	store_build_clear(&bd);
	free(ids);
	return r;
}

/* The workload (given, or the first that records the metric) and the
 * metric's direction, from the job's report. */
static int pick_metric(struct store *st, int64_t job_id, const char *workload, const char *metric,
		       struct store_bisect *b, struct strbuf *err)
{
	struct report *rep = NULL;
	int r = report_load(st, job_id, &rep);
	if (r >= 0)
		r = report_analyze(rep);
	if (r < 0) {
		sb_printf(err, "job: job %lld has no report to read metric %s from: %s", (long long)job_id, metric, strerror(-r));
		report_free(rep);
		return -EINVAL;
	}
	const struct report_metric *m = NULL;
	const struct report_workload *w = NULL;
	for (size_t i = 0; i < rep->n_workloads && !m; i++) {
		if (workload && strcmp(rep->w[i].name, workload) != 0)
			continue;
		w = &rep->w[i];
		m = report_find_metric(w, metric);
	}
	if (!m) {
		if (workload && !w)
			sb_printf(err, "workload: job %lld has no workload %s", (long long)job_id, workload);
		else
			sb_printf(err, "metric: job %lld records no metric %s%s%s (kab report %lld lists its metrics)",
				  (long long)job_id, metric, workload ? " in workload " : "", workload ? workload : "",
				  (long long)job_id);
		report_free(rep);
		return -EINVAL;
	}
	snprintf(b->workload, sizeof(b->workload), "%s", w->name);
	snprintf(b->metric, sizeof(b->metric), "%s", metric);
	snprintf(b->direction, sizeof(b->direction), "%s", direction_name(m->info.dir));
	report_free(rep);
	return 0;
}

/* rev in the clone (which reads the tree's objects too), else in the
 * tree (a tag or branch the clone does not have): 0, or -ENOENT. */
static int lookup(const struct kbisect_git *g, const char *tree, const char *rev, char sha[41])
{
	struct strbuf quiet = { 0 };
	int r = rev && rev[0] ? kbisect_git_ops.resolve((void *)g, rev, sha, &quiet) : -EINVAL;
	sb_free(&quiet);
	if (r < 0 && rev && rev[0] && rev[0] != '-' && kbuild_resolve_ref(tree, rev, sha) == 0)
		r = 0;
	return r < 0 ? -ENOENT : 0;
}

/* The branch t fetched into kab's clone of the tree as a nightly fetches
 * it (kbuild_track_fetch: as the build user, under the tree's lock, the
 * tree never written), for field's rev, which neither has. A request
 * does not wait for a build: the lock is taken at once or not at all
 * (-EBUSY), and the fetch takes BISECT_FETCH_TIMEOUT_S at most. A fetch
 * that fails is -EHOSTUNREACH, with what git said. */
static int fetch_track(const struct bisect_env *env, const struct store_bisect *b, const struct ask_track *t,
		       const char *field, const char *rev, struct strbuf *err)
{
	struct kbuild_request rq = {
		.tree = b->tree,
		.name = "bisection",
		.work_dir = env->work_dir,
		.no_wait = true,
		.fetch_timeout_s = BISECT_FETCH_TIMEOUT_S,
	};
	struct ktrack_head head;
	char event[512];
	struct strbuf why = { 0 };
	int r = kbuild_track_fetch(&rq, t->remote, t->branch, NULL, &head, event, sizeof(event), &why);
	const char *said = why.buf ? why.buf : strerror(-r);
	if (r == -EBUSY)
		sb_printf(err,
			  "tree: %s \"%s\" is in neither %s nor kab's clone of it, and branch %s of remote %s, which the "
			  "job's variant tracks, cannot be fetched now: %s; ask again when that build ends",
			  field, rev, b->tree, t->branch, t->remote, said);
	else if (r < 0)
		sb_printf(err,
			  "tree: %s \"%s\" is in neither %s nor kab's clone of it, and fetching the branch the job's variant "
			  "tracks failed: %s",
			  field, rev, b->tree, said);
	else
		log_info("kabd: %s \"%s\" of a bisection is not in %s: fetched %s %s into kab's clone, at %.12s", field,
			 rev, b->tree, t->remote, t->branch, head.sha);
	sb_free(&why);
	return r >= 0 || r == -EBUSY || r == -ENOMEM ? r : -EHOSTUNREACH;
}

/* Both ends resolved into b; one neither the clone nor the tree knows
 * fetched with the branch the variant tracks, once, then looked up again. */
static int resolve_range(const struct bisect_env *env, const struct kbisect_git *g, struct store_bisect *b,
			 const struct ask_track *t, const char *good, const char *bad, struct strbuf *err)
{
	const char *const field[] = { "good", "bad" }, *const rev[] = { good, bad };
	char *const sha[] = { b->good, b->bad };
	bool fetched = false;
	for (size_t i = 0; i < ARRAY_SIZE(rev); i++) {
		if (lookup(g, b->tree, rev[i], sha[i]) == 0)
			continue;
		if (!fetched && t->remote[0] && rev[i] && rev[i][0]) {
			int r = fetch_track(env, b, t, field[i], rev[i], err);
			if (r < 0)
				return r;
			fetched = true;
			if (lookup(g, b->tree, rev[i], sha[i]) == 0)
				continue;
		}
		sb_printf(err, "%s: \"%s\" is not a commit in %s or in kab's clone of it", field[i], rev[i] ? rev[i] : "", b->tree);
		if (fetched)
			sb_printf(err, ", nor on branch %s of remote %s, fetched just now", t->branch, t->remote);
		sb_puts(err, ": give a sha, branch or tag");
		return -EINVAL;
	}
	return 0;
}

/* The range: both ends known, different, GOOD an ancestor of BAD. */
static int check_range(const struct bisect_env *env, struct store_bisect *b, const struct ask_track *t,
		       const char *good, const char *bad, struct strbuf *err)
{
	char clone[PATH_MAX];
	if (env->clone)
		snprintf(clone, sizeof(clone), "%s", env->clone);
	else if (kbuild_clone_dir(env->work_dir, b->tree, clone, sizeof(clone)) < 0)
		return -ENAMETOOLONG;
	if (access(clone, F_OK) != 0) {
		sb_printf(err,
			  "tree: kab's clone of %s (%s) is not there: kab makes it with the tree's first build "
			  "(kab build JOB, or a job that builds it)",
			  b->tree, clone);
		return -ENODEV;
	}
	struct kbisect_git g = { .tree = clone, .user = env->git_user };
	int r = resolve_range(env, &g, b, t, good, bad, err);
	if (r < 0)
		return r;
	if (strcmp(b->good, b->bad) == 0) {
		sb_printf(err, "bad: GOOD %s and BAD %s are the same commit (%.12s): nothing to bisect", good, bad, b->good);
		return -EINVAL;
	}
	struct strbuf why = { 0 };
	r = kbisect_git_ops.is_ancestor(&g, b->good, b->bad, &why);
	if (r < 0)
		sb_printf(err, "good: %s", why.buf ? why.buf : "git merge-base failed");
	else if (r == 0)
		sb_printf(err, "good: %s (%.12s) is not an ancestor of BAD %s (%.12s): give a GOOD that BAD's history contains",
			  good, b->good, bad, b->bad);
	sb_free(&why);
	return r > 0 ? 0 : -EINVAL;
}

/* The source job, parsed; what is wrong with it said of field. */
static int load(struct store *st, const char *field, int64_t id, struct job **ret, struct strbuf *err)
{
	struct strbuf why = { 0 };
	int r = job_store_load(st, id, ret, &why);
	if (r < 0)
		sb_printf(err, "%s: %s", field, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r == -ENOENT || r >= 0 ? r : -EINVAL;
}

/* A regression's bisection: confirmed, with commits on both sides. */
static int from_regression(struct store *st, int64_t id, struct store_bisect *b, struct job **j, const char **good,
			   const char **bad, struct strbuf *err, struct store_regress *g)
{
	int r = store_regress_get(st, id, g);
	if (r < 0) {
		sb_printf(err, "regression: no regression %lld", (long long)id);
		return -ENOENT;
	}
	if (g->state != REGRESS_CONFIRMED) {
		sb_printf(err, "regression: regression %lld is %s, not confirmed: only a confirmed change is bisected",
			  (long long)id, regress_state_name(g->state));
		return -EPERM;
	}
	if (!g->good_sha[0] || !g->bad_sha[0]) {
		sb_printf(err, "regression: regression %lld has no commits (its variant does not build a kernel from a tree)",
			  (long long)id);
		return -EINVAL;
	}
	b->regression = id;
	b->source_job = g->bad_job;
	snprintf(b->workload, sizeof(b->workload), "%s", g->workload);
	snprintf(b->metric, sizeof(b->metric), "%s", g->metric);
	snprintf(b->direction, sizeof(b->direction), "%s", g->direction);
	if ((r = load(st, "regression", g->bad_job, j, err)) < 0)
		return r;
	if ((r = pick_variant(*j, g->bad_job, g->variant, err)) < 0)
		return r;
	b->variant = r;
	*good = g->good_sha;
	*bad = g->bad_sha;
	return 0;
}

static int from_job(struct store *st, const struct bisect_ask *a, struct store_bisect *b, struct job **j, struct strbuf *err)
{
	static const struct {
		const char *field;
		size_t off;
	} need[] = {
		{ "good", offsetof(struct bisect_ask, good) },
		{ "bad", offsetof(struct bisect_ask, bad) },
		{ "metric", offsetof(struct bisect_ask, metric) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(need); i++) {
		const char *v = *(const char *const *)((const char *)a + need[i].off);
		if (!v || !v[0]) {
			sb_printf(err, "%s: missing: a bisection of a job needs good, bad and metric", need[i].field);
			return -EINVAL;
		}
	}
	int r = load(st, "job", a->job, j, err);
	if (r < 0)
		return r;
	if ((r = pick_variant(*j, a->job, -1, err)) < 0)
		return r;
	b->variant = r;
	b->source_job = a->job;
	return pick_metric(st, a->job, a->workload, a->metric, b, err);
}

int bisect_create(struct store *st, const struct bisect_env *env, const struct bisect_ask *a, int64_t *ret_id, struct strbuf *err)
{
	struct store_bisect *b = calloc(1, sizeof(*b));
	struct store_regress *g = calloc(1, sizeof(*g));
	struct job *j = NULL;
	struct ask_track t = { 0 };
	const char *good = a->good, *bad = a->bad;
	int r = b && g ? 0 : -ENOMEM;
	if (r >= 0 && a->regression > 0)
		r = from_regression(st, a->regression, b, &j, &good, &bad, err, g);
	else if (r >= 0)
		r = from_job(st, a, b, &j, err);
	if (r >= 0) {
		b->boots = a->boots ? a->boots : j->bisect_boots;
		r = variant_tree(st, b->source_job, j, b->variant, b, &t, err);
	}
	if (r >= 0)
		r = check_range(env, b, &t, good, bad, err);
	if (r >= 0) {
		snprintf(b->submitter, sizeof(b->submitter), "%s", a->submitter ? a->submitter : "");
		int64_t id = 0;
		r = store_bisect_add(st, b, &id);
		if (r == -EEXIST) {
			sb_printf(err, "regression %lld is bisected already: bisection %lld", (long long)a->regression,
				  (long long)id);
			r = 1;
		}
		if (r >= 0) {
			*ret_id = id;
			if (r == 0)
				log_info("kabd: bisection %lld of %.12s..%.12s (%s/%s) asked by %s", (long long)id,
					 b->good, b->bad, b->workload, b->metric, b->submitter[0] ? b->submitter : "?");
		}
	}
	job_free(j);
	free(b);
	free(g);
	return r;
}

int bisect_json(struct store *st, int64_t id, struct strbuf *out)
{
	struct store_bisect b;
	struct store_bisect_job *jobs = NULL;
	size_t n = 0;
	int r = store_bisect_load(st, id, &b, &jobs, &n);
	if (r < 0)
		return r;
	json_t *v = json_object(), *steps = json_array();
	jw_set(v, "id", json_integer(b.id));
	jw_set(v, "state", jw_str(bisect_state_name(b.state)));
	jw_set(v, "reason", jw_str_opt(b.reason));
	jw_set(v, "regression", b.regression > 0 ? json_integer(b.regression) : json_null());
	jw_set(v, "job", json_integer(b.source_job));
	jw_set(v, "variant", json_integer(b.variant));
	jw_set(v, "tree", jw_str(b.tree));
	jw_set(v, "good", jw_str(b.good));
	jw_set(v, "bad", jw_str(b.bad));
	jw_set(v, "workload", jw_str(b.workload));
	jw_set(v, "metric", jw_str(b.metric));
	jw_set(v, "direction", jw_str_opt(b.direction));
	jw_set(v, "created", jw_time(b.created));
	jw_set(v, "ended", jw_time(b.ended));
	jw_set(v, "submitter", jw_str_opt(b.submitter));
	unsigned spent = 0;
	jw_set(v, "boots_budget", b.boots ? json_integer(b.boots) : json_null());
	jw_set(v, "boots_spent", store_bisect_boots_spent(st, id, &spent) == 0 ? json_integer(spent) : json_null());
	for (size_t i = 0; steps && i < n; i++) {
		json_t *s = json_object();
		jw_set(s, "job", jobs[i].job > 0 ? json_integer(jobs[i].job) : json_null());
		jw_set(s, "sha", jw_str(jobs[i].sha));
		jw_set(s, "base", jw_str(jobs[i].base));
		jw_set(s, "pairs", json_integer(jobs[i].k));
		jw_set(s, "control", jw_str_opt(jobs[i].control)); /* null: a step's comparison */
		jw_set(s, "status", jobs[i].job > 0 ? jw_str(job_status_name(jobs[i].status)) : json_null());
		jw_set(s, "reason", jw_str_opt(jobs[i].reason));
		json_array_append_new(steps, s);
	}
	jw_set(v, "step_jobs", steps);
	json_t *rep = b.report ? json_loads(b.report, 0, NULL) : NULL;
	jw_set(v, "report", rep ? rep : json_null());
	r = v ? jw_dump_sb(out, v, 0) : -ENOMEM;
	free(jobs);
	store_bisect_clear(&b);
	return r;
}
