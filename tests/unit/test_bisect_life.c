/* A bisection's life in kabd (harness/daemon/bisect_life.h) over a store
 * in a temporary file and a generated git repository: each step job it
 * queues is "run" here by writing its builds and finished runs the way
 * the executor does; bisect_advance then replays the bisection from the
 * store. Checked: the replay takes the same steps to the same answer as
 * one uninterrupted bisect_run; a pending request queues exactly one job,
 * and another advance before it ends queues none; a restart finds a step
 * row whose job was never queued or linked; nothing is measured twice;
 * bad requests are refused with the field named; a cancel cancels the
 * queued step job; the state table. */
#include "t.h"
#include "t_git.h"
#include "t_job.h"
#include "t_runs.h"
#include "harness/daemon/api.h"
#include "harness/daemon/bisect_auto.h"
#include "harness/daemon/bisect_life.h"
#include "harness/daemon/queue.h"
#include "harness/exec/bisect.h"
#include "harness/exec/joblife.h"
#include "harness/job/job.h"
#include "kernels/bisect_git.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "db/store_regress.h"
#include "workloads/wl.h"
#include "harness/base/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define NC 9 /* commits 0 (GOOD) .. 8 */
static char shas[NC][KBISECT_SHA_LEN + 1];
static const char tree[] = "/unit/linux";

/* ---- the machine, simulated: levels, builds, pairs ---- */

struct sim {
	int culprit;            /* commits from it on take 10% longer */
	int nobuild;            /* a commit that does not build, or -1 */
	unsigned pairs[NC][NC]; /* pairs made, by commit and base */
	unsigned builds[NC];
	unsigned calls; /* measure calls of the uninterrupted run */
	unsigned ctl_pairs; /* pairs of the revert control */
};

static int index_of(const char *sha)
{
	for (int i = 0; i < NC; i++)
		if (strcmp(shas[i], sha) == 0)
			return i;
	return -1;
}

/* Pair n of commit i against base g: the same whoever asks. */
static void pair_values(const struct sim *s, int i, int g, unsigned n, double *a, double *b)
{
	double amp = i >= 6 ? 0.02 : 0.002; /* commits 6 and up are noisier: more looks */
	double wobble = 1 + amp * ((double)((n * 7 + (unsigned)i) % 5) - 2);
	*a = 0.3 * (g >= s->culprit ? 1.1 : 1);
	*b = 0.3 * (i >= s->culprit ? 1.1 : 1) * wobble;
}

static int sim_build(void *ctx, const char *sha, struct strbuf *why)
{
	struct sim *s = ctx;
	int i = index_of(sha);
	if (i < 0)
		return -ENOENT;
	s->builds[i]++;
	if (i == s->nobuild) {
		sb_puts(why, "make: *** [vmlinux] Error 2");
		return 1;
	}
	return 0;
}

static int sim_measure(void *ctx, const char *sha, const char *base, unsigned k, double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct sim *s = ctx;
	int i = index_of(sha), g = index_of(base);
	if (i < 0 || g < 0)
		return -ENOENT;
	for (unsigned p = 0; p < k; p++)
		pair_values(s, i, g, s->pairs[i][g] + p, &ret_base[p], &ret_sha[p]);
	s->pairs[i][g] += k;
	s->calls++;
	return 0;
}

static const struct brule_opts rule = { .dir = DIRECTION_LOWER, .min_change_pct = -1, .equivalence_pct = -1 };

/* ---- the store ---- */

static struct store *open_store(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-bisect-XXXXXX", NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	return st;
}

static int64_t add_build(struct store *st, const char *sha, bool ok)
{
	struct store_build b = { .status = BUILD_BUILDING };
	b.tree = (char *)tree;
	b.base_ref = (char *)sha;
	snprintf(b.base_sha, sizeof(b.base_sha), "%s", sha);
	b.config_source = "defconfig";
	snprintf(b.config_hash, sizeof(b.config_hash), "c0");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "k%.20s", sha);
	snprintf(b.kind, sizeof(b.kind), "build");
	int64_t id = 0;
	T_EQ_INT(store_build_begin(st, &b, &id), 0);
	b.id = id;
	b.status = ok ? BUILD_OK : BUILD_FAILED;
	b.reason = ok ? NULL : "make: *** [vmlinux] Error 2";
	T_EQ_INT(store_build_finish(st, &b), 0);
	return id;
}

static void end_job(struct store *st, int64_t id, enum job_status to, const char *why)
{
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_QUEUED), JOB_RUNNING, NULL), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), to, why), 0);
}

static double source_value(void *ctx, const struct store_step *step)
{
	return step->variant ? 0.33 * (1 + 0.001 * step->pair) : 0.3;
}

/* A queued job of two kernel builds of the tree, at good (A) and bad (B). */
static int64_t two_builds(struct store *st, const char *name, unsigned pairs, const char *good, const char *bad)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "[job]\nname = %s\npairs = %u\n[swap]\ndevice = none\n"
		 "[variant A]\nname = base\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[variant B]\nname = head\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[workload w]\ntype = command\ncommand = true\n",
		 name, pairs, tree, good, tree, bad);
	struct job *j = t_parse_job(text);
	int64_t id = 0;
	T_CHECK(j && jl_submit(st, j, "unit", &id, NULL) == 0);
	job_free(j);
	return id;
}

/* The job a bisection is asked on: GOOD's build and BAD's, with its runs
 * and builds recorded. */
static int64_t source_job(struct store *st)
{
	int64_t id = two_builds(st, "bis-unit", 2, shas[0], shas[8]);
	int64_t builds[2] = { add_build(st, shas[0], true), add_build(st, shas[8], true) };
	T_EQ_INT(store_variant_builds_set(st, id, builds, 2), 0);
	t_finish_runs(st, id, "time.wall_s", "s", source_value, NULL);
	end_job(st, id, JOB_DONE, NULL);
	return id;
}

/* ---- the executor, simulated: each queued step job built and run ---- */

struct step_ctx {
	struct sim *s;
	int i, g;
	unsigned first; /* the pairs of commit i against g made before this job */
};

static double step_value(void *ctx, const struct store_step *step)
{
	struct step_ctx *c = ctx;
	double a, b;
	pair_values(c->s, c->i, c->g, c->first + (unsigned)(step->pair < 0 ? 0 : step->pair), &a, &b);
	return step->variant ? b : a;
}

static bool built(struct store *st, const char *sha)
{
	enum build_status bs;
	char why[64];
	return store_bisect_build(st, tree, NULL, sha, &bs, why, sizeof(why)) == 0;
}

/* A control's step job: the revert's (BAD with the culprit reverted,
 * at the culprit's parent's level, against BAD); the builds are its own. */
static void run_control(struct store *st, struct sim *s, const struct store_bisect_job *row)
{
	int i = index_of(row->sha), g = index_of(row->base);
	T_CHECK(strcmp(row->control, "revert") == 0 && i >= 1 && g == NC - 1);
	if (strcmp(row->control, "revert") != 0 || i < 1 || g < 0)
		return;
	struct step_ctx c = { s, g, i - 1, s->ctl_pairs };
	t_finish_runs(st, row->job, "time.wall_s", "s", step_value, &c);
	s->ctl_pairs += row->k;
	end_job(st, row->job, JOB_DONE, NULL);
}

/* Runs the queued step jobs of bisection id; how many. */
static size_t run_steps(struct store *st, struct sim *s, int64_t id)
{
	struct store_bisect_job *rows = NULL;
	size_t n = 0, ran = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	for (size_t r = 0; r < n; r++) {
		if (rows[r].job <= 0 || rows[r].status != JOB_QUEUED)
			continue;
		if (rows[r].control[0]) {
			run_control(st, s, &rows[r]);
			ran++;
			continue;
		}
		int i = index_of(rows[r].sha), g = index_of(rows[r].base);
		T_CHECK(i >= 0 && g >= 0);
		if (i < 0 || g < 0)
			continue;
		ran++;
		/* the base first, as variant A builds first; a build is reused */
		bool ok = true;
		for (int k = 0; k < 2 && ok; k++) {
			int c = k ? i : g;
			if (!built(st, shas[c]))
				add_build(st, shas[c], c != s->nobuild);
			ok = c != s->nobuild;
		}
		if (!ok) {
			end_job(st, rows[r].job, JOB_FAILED, "kernel build failed: make: *** [vmlinux] Error 2");
			continue;
		}
		struct step_ctx c = { s, i, g, s->pairs[i][g] };
		t_finish_runs(st, rows[r].job, "time.wall_s", "s", step_value, &c);
		s->pairs[i][g] += rows[r].k;
		end_job(st, rows[r].job, JOB_DONE, NULL);
	}
	free(rows);
	return ran;
}

static size_t count_status(struct store *st, enum job_status s)
{
	int64_t *ids = NULL;
	size_t n = 0;
	T_EQ_INT(store_jobs_with_status(st, s, &ids, &n), 0);
	free(ids);
	return n;
}

static enum bisect_state state_of(struct store *st, int64_t id)
{
	struct store_bisect b;
	if (store_bisect_get(st, id, &b) < 0)
		return BISECT_STATE_UNKNOWN;
	store_bisect_clear(&b);
	return b.state;
}

/* Advances and runs until the bisection ends; the step jobs run. */
static size_t drive(struct store *st, const struct bisect_env *env, struct sim *s, int64_t id)
{
	size_t jobs = 0;
	for (int round = 0; round < 200 && state_of(st, id) == BISECT_RUNNING; round++) {
		T_EQ_INT(bisect_advance(st, env, id), 0);
		jobs += run_steps(st, s, id);
	}
	return jobs;
}

/* The uninterrupted run's report and the stored one agree: every step's
 * commit and decision, the culprits, builds and boots. */
static void same_as_direct(struct store *st, int64_t id, const struct bisect_report *direct)
{
	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	json_t *rep = b.report ? json_loads(b.report, 0, NULL) : NULL;
	T_CHECK(rep != NULL);
	if (!rep) {
		store_bisect_clear(&b);
		return;
	}
	json_t *steps = json_object_get(rep, "steps"), *culprits = json_object_get(rep, "culprits");
	T_EQ_INT(json_array_size(steps), direct->n_rows);
	for (size_t i = 0; i < direct->n_rows && i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		T_EQ_STR(json_string_value(json_object_get(s, "sha")), direct->rows[i].sha);
		T_EQ_STR(json_string_value(json_object_get(s, "decision")), brule_decision_name(direct->rows[i].out.decision));
		T_EQ_INT(json_integer_value(json_object_get(s, "pairs")), direct->rows[i].out.effect.pairs);
	}
	T_EQ_INT(json_array_size(culprits), direct->n_culprits);
	for (size_t i = 0; i < direct->n_culprits && i < json_array_size(culprits); i++) {
		json_t *c = json_array_get(culprits, i);
		T_EQ_STR(json_string_value(json_object_get(c, "answer")), bisect_answer_name(direct->culprits[i].answer));
		if (direct->culprits[i].answer != BISECT_RANGE)
			T_EQ_STR(json_string_value(json_object_get(c, "sha")), direct->culprits[i].sha);
	}
	T_EQ_INT(json_integer_value(json_object_get(rep, "builds")), direct->builds);
	T_EQ_INT(json_integer_value(json_object_get(rep, "boots")), direct->boots);
	json_decref(rep);
	store_bisect_clear(&b);
}

/* Pairs the step jobs of a bisection asked for, by commit and base. */
static void step_pairs(struct store *st, int64_t id, unsigned out[NC][NC])
{
	memset(out, 0, sizeof(unsigned) * NC * NC);
	struct store_bisect_job *rows = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	for (size_t r = 0; r < n; r++) {
		int i = index_of(rows[r].sha), g = index_of(rows[r].base);
		if (i >= 0 && g >= 0 && rows[r].status == JOB_DONE)
			out[i][g] += rows[r].k;
	}
	free(rows);
}

/* In a store of its own: the builds of one bisection are not another's. */
static void test_replay(const struct bisect_env *env, int nobuild)
{
	struct store *st = open_store();
	int64_t src = source_job(st);
	struct sim direct = { .culprit = 5, .nobuild = nobuild };
	struct kbisect_git g = { .tree = env->clone };
	struct bisect_runner run = { .ctx = &direct, .build = sim_build, .measure = sim_measure };
	struct bisect_opts o = { .good = shas[0], .bad = shas[8], .rule = rule };
	struct bisect_report rep;
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_run(&kbisect_git_ops, &g, &run, &o, &rep, &err), 0);
	if (getenv("T_DEBUG"))
		for (size_t i = 0; i < rep.n_rows; i++)
			fprintf(stderr, "row %zu %.8s %s %zu\n", i, rep.rows[i].sha,
				brule_decision_name(rep.rows[i].out.decision), rep.rows[i].out.effect.pairs);

	struct bisect_ask a = { .job = src, .good = shas[0], .bad = shas[8], .metric = "time.wall_s", .submitter = "unit" };
	int64_t id = 0;
	sb_free(&err);
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	if (err.len)
		fprintf(stderr, "%s\n", err.buf);
	T_EQ_INT(state_of(st, id), BISECT_RUNNING);
	size_t queued = count_status(st, JOB_QUEUED);
	/* the first advance queues the anchor's step job, once */
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued + 1);
	/* kabd restarted before the job ran: nothing more is queued */
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(bisect_advance_all(st, env), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued + 1);
	struct store_bisect_job *rows = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	T_EQ_INT(n, 1);
	if (n) {
		T_EQ_STR(rows[0].sha, shas[8]);
		T_EQ_STR(rows[0].base, shas[0]);
		T_EQ_INT(rows[0].k, 6);
	}
	free(rows);

	struct sim replayed = { .culprit = 5, .nobuild = nobuild };
	size_t jobs = drive(st, env, &replayed, id);
	T_EQ_INT(state_of(st, id), BISECT_DONE);
	same_as_direct(st, id, &rep);
	/* nothing measured twice: the step jobs made the pairs the
	 * uninterrupted run made, no more; one job a comparison it asked for,
	 * and one more for the step that did not build */
	unsigned got[NC][NC];
	step_pairs(st, id, got);
	for (int i = 0; i < NC; i++)
		for (int k = 0; k < NC; k++)
			T_EQ_INT(got[i][k], direct.pairs[i][k]);
	T_EQ_INT(jobs, direct.calls + (nobuild >= 0));
	/* an ended bisection is not advanced again */
	size_t before = count_status(st, JOB_QUEUED);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), before);
	struct strbuf js = { 0 };
	T_EQ_INT(bisect_json(st, id, &js), 0);
	T_CHECK(js.buf && strstr(js.buf, "\"state\": \"done\"") && strstr(js.buf, "\"step_jobs\""));
	if (nobuild < 0)
		T_CHECK(js.buf && strstr(js.buf, "change 5"));
	else
		T_CHECK(js.buf && strstr(js.buf, "\"range\"") && strstr(js.buf, "does not build"));
	sb_free(&js);
	bisect_report_free(&rep);
	sb_free(&err);
	store_close(st);
}

/* A crash between a step row and its job: the next advance queues the
 * row's job (or links the one that was queued), and no other. */
static void test_crash_between(struct store *st, const struct bisect_env *env, int64_t src)
{
	struct bisect_ask a = { .job = src, .good = shas[2], .bad = shas[8], .metric = "time.wall_s" };
	int64_t id = 0;
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	struct store_bisect_job row = { .bisection = id, .k = 6 };
	snprintf(row.name, sizeof(row.name), "bis-unit.bisect-%lld-1", (long long)id);
	snprintf(row.sha, sizeof(row.sha), "%s", shas[8]);
	snprintf(row.base, sizeof(row.base), "%s", shas[2]);
	T_EQ_INT(store_bisect_job_add(st, &row, &row.id), 0);
	size_t queued = count_status(st, JOB_QUEUED);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued + 1);
	struct store_bisect_job *rows = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	T_EQ_INT(n, 1);
	T_CHECK(n == 1 && rows[0].job > 0 && rows[0].status == JOB_QUEUED);
	int64_t job = n ? rows[0].job : 0;
	free(rows);
	/* the job queued, its link lost: found by its name */
	T_EQ_INT(store_bisect_job_add(st, &(struct store_bisect_job){ .bisection = id, .k = 6, .name = "bis-unit.orphan", .sha = "x", .base = "y" },
				      &row.id),
		 0);
	struct job *j = t_parse_job("[job]\nname = bis-unit.orphan\n[variant A]\n[variant B]\nname = b\n"
				    "[workload w]\ntype = command\ncommand = true\n");
	int64_t orphan = 0;
	T_CHECK(j && jl_submit(st, j, "unit", &orphan, NULL) == 0);
	job_free(j);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued + 2);
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	T_EQ_INT(n, 2);
	T_CHECK(n == 2 && rows[0].job == job && rows[1].job == orphan);
	free(rows);
	/* cancelled in the middle: its queued step jobs with it, nothing lost */
	T_EQ_INT(bisect_cancel(st, env, id, "unit", &err), 0);
	T_EQ_INT(state_of(st, id), BISECT_CANCELLED);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), queued);
	sb_free(&err);
	T_EQ_INT(bisect_cancel(st, env, id, "unit", &err), -EALREADY);
	T_CHECK(err.buf && strstr(err.buf, "has ended: cancelled"));
	sb_free(&err);
}

/* A step job cancelled by hand (not by its bisection) ends the
 * bisection failed with the reason; one that fails (no boot) skips its
 * commit. */
static void test_step_job_ends(const struct bisect_env *env)
{
	struct store *st = open_store();
	int64_t src = source_job(st), id = 0;
	struct bisect_ask a = { .job = src, .good = shas[0], .bad = shas[8], .metric = "time.wall_s" };
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	struct store_bisect_job *rows = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	char status[32];
	int64_t job = n ? rows[0].job : 0;
	free(rows);
	T_CHECK(n == 1 && jl_cancel(st, job, "cancelled over the API", status, sizeof(status)) == 0);
	T_EQ_INT(bisect_after_job(st, env, job), 1);
	T_EQ_INT(state_of(st, id), BISECT_FAILED);
	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	T_CHECK(strstr(b.reason, "was cancelled") != NULL);
	if (!strstr(b.reason, "was cancelled"))
		fprintf(stderr, "  reason: %s\n", b.reason);
	store_bisect_clear(&b);
	T_EQ_INT(bisect_after_job(st, env, 99999), 0); /* no step job: the nightly's */
	sb_free(&err);
	store_close(st);
}

static int64_t confirmed_regression(struct store *st, int64_t src, int variant, const char *metric, enum regress_state state)
{
	struct store_regress g = { .created = 1,
				   .variant = variant,
				   .good_job = src,
				   .bad_job = src,
				   .state = REGRESS_PENDING,
				   .estimate_pct = NAN,
				   .ci_lo_pct = NAN,
				   .ci_hi_pct = NAN,
				   .p = NAN,
				   .detected_pct = 10 };
	snprintf(g.name, sizeof(g.name), "bis-unit");
	snprintf(g.workload, sizeof(g.workload), "w");
	snprintf(g.metric, sizeof(g.metric), "%s", metric);
	snprintf(g.direction, sizeof(g.direction), "lower");
	snprintf(g.good_sha, sizeof(g.good_sha), "%s", shas[4]);
	snprintf(g.bad_sha, sizeof(g.bad_sha), "%s", shas[5]);
	int64_t id = 0;
	T_EQ_INT(store_regress_add(st, &g, &id), 0);
	g.id = id;
	g.state = state;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	T_EQ_INT(store_regress_settle(st, &g), 0);
	return id;
}

static double confirmation_value(void *ctx, const struct store_step *step)
{
	/* what the source job's nights show: BAD 10% slower, with a wobble */
	return step->variant ? 0.33 * (1 + 0.002 * (double)(step->pair % 3)) : 0.3;
}

/* The regression's confirmation job measured BAD against GOOD already:
 * its pairs are the anchor's, and a range of one commit needs no step job
 * at all. */
static void test_reuse_confirmation(const struct bisect_env *env)
{
	struct store *st = open_store();
	int64_t src = source_job(st), conf = two_builds(st, "bis-unit.confirm-1", 8, shas[4], shas[5]);
	t_finish_runs(st, conf, "time.wall_s", "s", confirmation_value, NULL);
	end_job(st, conf, JOB_DONE, NULL);
	int64_t rid = confirmed_regression(st, src, 1, "time.wall_s", REGRESS_CONFIRMED), id = 0;
	T_EQ_INT(store_regress_set_confirm(st, rid, conf), 0);
	struct bisect_ask a = { .regression = rid };
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(state_of(st, id), BISECT_DONE);
	struct store_bisect b;
	struct store_bisect_job *rows = NULL;
	size_t n = 9;
	T_EQ_INT(store_bisect_load(st, id, &b, &rows, &n), 0);
	T_EQ_INT(n, 0);
	T_CHECK(b.report && strstr(b.report, shas[5]) && strstr(b.report, "\"confirmed\""));
	if (b.reason[0] && !strstr(b.reason, "first bad commit"))
		fprintf(stderr, "  reason: %s\n", b.reason);
	store_bisect_clear(&b);
	free(rows);
	sb_free(&err);
	store_close(st);
}

/* A regression's bisection, asked twice; its range is one commit, which is
 * the answer, confirmed with the anchor's own pairs. */
static void test_regression(struct store *st, const struct bisect_env *env, int64_t src)
{
	int64_t rid = confirmed_regression(st, src, 1, "time.wall_s", REGRESS_CONFIRMED), id = 0, again = 0;
	struct bisect_ask a = { .regression = rid, .submitter = "unit" };
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	T_EQ_INT(bisect_create(st, env, &a, &again, &err), 1);
	T_EQ_INT(again, id);
	T_CHECK(err.buf && strstr(err.buf, "is bisected already"));
	struct sim s = { .culprit = 5, .nobuild = -1 };
	T_EQ_INT(drive(st, env, &s, id), 1);
	T_EQ_INT(state_of(st, id), BISECT_DONE);
	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	T_EQ_INT(b.regression, rid);
	T_CHECK(strstr(b.reason, "first bad commit") && strstr(b.reason, "0 steps"));
	T_CHECK(b.report && strstr(b.report, shas[5]) && strstr(b.report, "\"confirmed\""));
	T_CHECK(b.ended > 0);
	store_bisect_clear(&b);
	/* done: asked again, the same one */
	T_EQ_INT(bisect_create(st, env, &a, &again, &err), 1);
	T_EQ_INT(again, id);
	/* not confirmed */
	int64_t pending = confirmed_regression(st, src, 0, "time.wall_s", REGRESS_NOT_CONFIRMED);
	a.regression = pending;
	sb_free(&err);
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), -EPERM);
	T_CHECK(err.buf && strstr(err.buf, "regression:") && strstr(err.buf, "not confirmed"));
	a.regression = 999;
	sb_free(&err);
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), -ENOENT);
	sb_free(&err);
}

static void bad(struct store *st, const struct bisect_env *env, const struct bisect_ask *a, int want, const char *field)
{
	struct strbuf err = { 0 };
	int64_t id = -1;
	size_t before = 0;
	int64_t *ids = NULL;
	store_bisect_running(st, &ids, &before);
	free(ids);
	T_EQ_INT(bisect_create(st, env, a, &id, &err), want);
	T_CHECK(err.buf && strncmp(err.buf, field, strlen(field)) == 0);
	if (!err.buf || strncmp(err.buf, field, strlen(field)) != 0)
		fprintf(stderr, "  said: %s\n", err.buf ? err.buf : "(nothing)");
	T_EQ_INT(id, -1);
	size_t after = 0;
	store_bisect_running(st, &ids, &after);
	free(ids);
	T_EQ_INT(after, before); /* nothing recorded */
	sb_free(&err);
}

static void test_bad_input(struct store *st, const struct bisect_env *env, int64_t src)
{
	struct bisect_ask a = { .job = src, .good = shas[0], .bad = shas[8], .metric = "time.wall_s" };
	a.good = "no-such-rev";
	bad(st, env, &a, -EINVAL, "good: \"no-such-rev\" is not a commit");
	a.good = shas[8];
	a.bad = shas[0];
	bad(st, env, &a, -EINVAL, "good:");
	a.good = a.bad = shas[3];
	bad(st, env, &a, -EINVAL, "bad:");
	a.good = shas[0];
	a.bad = shas[8];
	a.metric = "vmstat.no_such";
	bad(st, env, &a, -EINVAL, "metric: job");
	a.metric = NULL;
	bad(st, env, &a, -EINVAL, "metric: missing");
	a.metric = "time.wall_s";
	a.workload = "nope";
	bad(st, env, &a, -EINVAL, "workload:");
	a.workload = NULL;
	a.job = 999;
	bad(st, env, &a, -ENOENT, "job: job 999 is not in the database");
	a.job = src;
	struct bisect_env gone = *env;
	gone.clone = "/nonexistent/kab-clone";
	bad(st, &gone, &a, -ENODEV, "tree: kab's clone");
	/* a job whose variants build no kernel */
	struct job *j = t_parse_job("[job]\nname = knobs\n[variant A]\n[variant B]\nname = b\n"
				    "[workload w]\ntype = command\ncommand = true\n");
	int64_t plain = 0;
	T_CHECK(j && jl_submit(st, j, "unit", &plain, NULL) == 0);
	job_free(j);
	a.job = plain;
	bad(st, env, &a, -EINVAL, "job: job");
}

typedef void (*handler_t)(struct api *, const struct httpd_req *, struct httpd_resp *);

static int call(struct api *a, handler_t fn, const char *method, int64_t id, const char *const *args, struct httpd_resp *rs)
{
	struct httpd_req rq = { .method = method, .path = "/bisections", .id = id, .args = args, .submitter = "token" };
	sb_free(&rs->body);
	*rs = (struct httpd_resp){ 0 };
	fn(a, &rq, rs);
	return rs->status;
}

static bool body_has(const struct httpd_resp *rs, const char *what)
{
	bool yes = rs->body.buf && strstr(rs->body.buf, what);
	if (!yes)
		fprintf(stderr, "  the body: %s\n", rs->body.buf ? rs->body.buf : "(none)");
	return yes;
}

/* kabd's door to bisections: each refusal with its code and field, and
 * a bisection shown, listed and cancelled. The queue is kabd's own, on a
 * database of its own with nothing to run; the requests go to path's. */
static void test_api(const char *path, int64_t src)
{
	char qdb[64];
	t_db_path(qdb, sizeof(qdb), "/tmp/kab-unit-bisectq-XXXXXX", NULL);
	struct queue *q = NULL;
	T_EQ_INT(queue_start(qdb, pthread_self(), &q), 0);
	if (!q)
		return;
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	int64_t rid = confirmed_regression(st, src, 1, "rusage.sys_s", REGRESS_CONFIRMED);
	int64_t pending = confirmed_regression(st, src, 0, "rusage.sys_s", REGRESS_PENDING);
	struct api a = { .db_path = path, .queue = q };
	struct httpd_resp rs = { 0 };
	static const char *const none[] = { NULL };
	/* kabd's clone of the tree is where builds put it: not on this machine */
	T_EQ_INT(call(&a, api_regression_bisect, "POST", rid, none, &rs), 409);
	T_CHECK(body_has(&rs, "tree: kab's clone"));
	T_EQ_INT(call(&a, api_regression_bisect, "POST", pending, none, &rs), 409);
	T_CHECK(body_has(&rs, "not confirmed"));
	T_EQ_INT(call(&a, api_regression_bisect, "POST", 999, none, &rs), 404);
	const char *const nojob[] = { "good", shas[0], "bad", shas[8], "metric", "time.wall_s", NULL };
	T_EQ_INT(call(&a, api_bisections_create, "POST", 0, nojob, &rs), 400);
	T_CHECK(body_has(&rs, "job: missing"));
	const char *const color[] = { "job", "1", "color", "red", NULL };
	T_EQ_INT(call(&a, api_bisections_create, "POST", 0, color, &rs), 400);
	T_CHECK(body_has(&rs, "color: not a parameter"));
	char job[24];
	snprintf(job, sizeof(job), "%lld", (long long)src);
	const char *const nometric[] = { "job", job, "good", shas[0], "bad", shas[8], NULL };
	T_EQ_INT(call(&a, api_bisections_create, "POST", 0, nometric, &rs), 400);
	T_CHECK(body_has(&rs, "metric: missing"));
	const char *const unknown[] = { "job", "4242", "good", shas[0], "bad", shas[8], "metric", "m", NULL };
	T_EQ_INT(call(&a, api_bisections_create, "POST", 0, unknown, &rs), 404);

	/* one recorded as bisect_create records it: shown, listed, cancelled */
	struct store_bisect b = { .source_job = src, .variant = 1 };
	snprintf(b.tree, sizeof(b.tree), "%s", tree);
	snprintf(b.good, sizeof(b.good), "%s", shas[0]);
	snprintf(b.bad, sizeof(b.bad), "%s", shas[8]);
	snprintf(b.workload, sizeof(b.workload), "w");
	snprintf(b.metric, sizeof(b.metric), "time.wall_s");
	int64_t id = 0;
	T_EQ_INT(store_bisect_add(st, &b, &id), 0);
	T_EQ_INT(call(&a, api_bisection_get, "GET", id, none, &rs), 200);
	T_CHECK(body_has(&rs, "\"state\": \"running\"") && body_has(&rs, "\"step_jobs\": []"));
	T_EQ_INT(call(&a, api_bisection_get, "GET", 999, none, &rs), 404);
	T_EQ_INT(call(&a, api_bisections_list, "GET", 0, none, &rs), 200);
	T_CHECK(body_has(&rs, "\"bisections\"") && body_has(&rs, shas[8]));
	T_EQ_INT(call(&a, api_bisection_cancel, "POST", id, none, &rs), 200);
	T_CHECK(body_has(&rs, "cancelled"));
	T_EQ_INT(call(&a, api_bisection_cancel, "POST", id, none, &rs), 409);
	T_CHECK(body_has(&rs, "has ended: cancelled"));
	T_EQ_INT(call(&a, api_bisection_cancel, "POST", 999, none, &rs), 404);
	sb_free(&rs.body);
	store_close(st);
	queue_stop(q);
}

static void test_states(struct store *st)
{
	T_CHECK(bisect_transition_allowed(BISECT_RUNNING, BISECT_DONE));
	T_CHECK(bisect_transition_allowed(BISECT_RUNNING, BISECT_CANCELLED));
	T_CHECK(bisect_transition_allowed(BISECT_DONE, BISECT_DONE));
	T_CHECK(!bisect_transition_allowed(BISECT_DONE, BISECT_RUNNING));
	T_CHECK(!bisect_transition_allowed(BISECT_CANCELLED, BISECT_DONE));
	T_CHECK(!bisect_transition_allowed(BISECT_STATE_UNKNOWN, BISECT_DONE));
	enum bisect_state s;
	T_EQ_INT(bisect_state_parse("refused", &s), 0);
	T_EQ_INT(s, BISECT_REFUSED);
	T_EQ_INT(bisect_state_parse("paused", &s), -EINVAL);
	int64_t *ids = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_running(st, &ids, &n), 0);
	free(ids);
	/* an ended one cannot be made running again */
	struct store_bisect *page = NULL;
	size_t np = 0;
	T_EQ_INT(store_bisect_page(st, 0, 100, &page, &np), 0);
	for (size_t i = 0; i < np; i++) {
		if (page[i].state == BISECT_DONE)
			T_EQ_INT(store_bisect_set_state(st, page[i].id, BISECT_FROM(BISECT_DONE), BISECT_RUNNING, "again", NULL),
				 -EPERM);
		store_bisect_clear(&page[i]);
	}
	free(page);
	T_EQ_INT(store_bisect_set_state(st, 12345, BISECT_FROM(BISECT_RUNNING), BISECT_FAILED, "x", NULL), -ENOENT);
}

/* ---- the budget and bisect = auto ---- */

/* The boots a step job made: two a pair (one each variant), recorded as
 * the executor records each switch. */
static void add_boots(struct store *st, int64_t job, unsigned pairs)
{
	int64_t build = add_build(st, shas[0], true);
	for (unsigned i = 0; i < 2 * pairs; i++) {
		struct store_boot bt = { .job_id = job, .build_id = build, .slot = (int)i, .variant = (int)(i % 2) };
		snprintf(bt.method, sizeof(bt.method), "kexec");
		snprintf(bt.from_boot_id, sizeof(bt.from_boot_id), "b%u", i);
		int64_t id;
		T_EQ_INT(store_boot_begin(st, &bt, &id), 0);
	}
}

/* run_steps, with the boots of each step job it ran. */
static void run_steps_booted(struct store *st, struct sim *s, int64_t id)
{
	struct store_bisect_job *before = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &before, &n), 0);
	run_steps(st, s, id);
	for (size_t r = 0; r < n; r++)
		if (before[r].job > 0 && before[r].status == JOB_QUEUED)
			add_boots(st, before[r].job, before[r].k);
	free(before);
}

/* A budget of 40 boots: the anchor (6 pairs, then 4 more: 20 boots) and
 * git's first step (6 pairs, 12 more) fit, the next step's 12 do not; the
 * bisection ends failed naming the budget, the boots used and the range
 * so far (the first step marked), and queues nothing. */
static void test_budget(const struct bisect_env *env)
{
	struct store *st = open_store();
	int64_t src = source_job(st), id = 0;
	struct bisect_ask a = { .job = src, .good = shas[0], .bad = shas[8], .metric = "time.wall_s", .submitter = "unit" };
	struct strbuf err = { 0 };
	/* the job's bisect.boots, the default */
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	T_EQ_INT(b.boots, JOB_BISECT_BOOTS_DEFAULT);
	store_bisect_clear(&b);
	T_EQ_INT(bisect_cancel(st, env, id, "unit", &err), 0);
	/* one's own */
	a.boots = 40;
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	unsigned spent = 99;
	T_EQ_INT(store_bisect_boots_spent(st, id, &spent), 0);
	T_EQ_INT(spent, 0);
	struct sim s = { .culprit = 5, .nobuild = -1 };
	for (int round = 0; round < 50 && state_of(st, id) == BISECT_RUNNING; round++) {
		T_EQ_INT(bisect_advance(st, env, id), 0);
		run_steps_booted(st, &s, id);
	}
	T_EQ_INT(state_of(st, id), BISECT_FAILED);
	T_EQ_INT(store_bisect_boots_spent(st, id, &spent), 0);
	T_EQ_INT(spent, 32);
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	T_EQ_INT(b.boots, 40);
	T_CHECK(strstr(b.reason, "budget of 40 boots spent (32 used): the next step, ") &&
		strstr(b.reason, "needs 12 more; so far the first bad commit is after ") && strstr(b.reason, "(1 step marked)"));
	if (getenv("T_DEBUG") || !strstr(b.reason, "budget of 40"))
		fprintf(stderr, "  reason: %s\n", b.reason);
	store_bisect_clear(&b);
	T_EQ_INT(count_status(st, JOB_QUEUED), 0);
	struct strbuf js = { 0 };
	T_EQ_INT(bisect_json(st, id, &js), 0);
	json_t *doc = js.buf ? json_loads(js.buf, 0, NULL) : NULL;
	T_EQ_INT(json_integer_value(json_object_get(doc, "boots_budget")), 40);
	T_EQ_INT(json_integer_value(json_object_get(doc, "boots_spent")), 32);
	json_decref(doc);
	sb_free(&js);
	sb_free(&err);
	store_close(st);
}

/* A job like source_job's with bisect = auto, its night done. */
static int64_t auto_job(struct store *st)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "[job]\nname = bis-auto\npairs = 2\nbisect = auto\nbisect.boots = 40\n[swap]\ndevice = none\n"
		 "[variant A]\nname = base\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[variant B]\nname = head\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[workload w]\ntype = command\ncommand = true\n",
		 tree, shas[0], tree, shas[8]);
	struct job *j = t_parse_job(text);
	int64_t id = 0;
	T_CHECK(j && j->bisect == JOB_BISECT_AUTO && jl_submit(st, j, "unit", &id, NULL) == 0);
	job_free(j);
	int64_t builds[2] = { add_build(st, shas[0], true), add_build(st, shas[8], true) };
	T_EQ_INT(store_variant_builds_set(st, id, builds, 2), 0);
	t_finish_runs(st, id, "time.wall_s", "s", source_value, NULL);
	end_job(st, id, JOB_DONE, NULL);
	return id;
}

static void note_of(struct store *st, int64_t rid, char *buf, size_t len)
{
	struct store_regress g;
	buf[0] = 0;
	if (store_regress_get(st, rid, &g) == 0)
		snprintf(buf, len, "%s", g.auto_bisect);
}

/* bisect = auto: a confirmed regression of such a night is bisected by
 * kabd, once, with the job's budget; one of another job is not; a
 * refusal is noted and not asked again; a pending one waits for its
 * confirmation (as after a restart: the pass finds what is left). */
static void test_auto(const struct bisect_env *env)
{
	struct store *st = open_store();
	int64_t plain = source_job(st), night = auto_job(st);
	int64_t other = confirmed_regression(st, plain, 1, "time.wall_s", REGRESS_CONFIRMED);
	int64_t pending = confirmed_regression(st, night, 0, "time.wall_s", REGRESS_PENDING);
	int64_t rid = confirmed_regression(st, night, 1, "time.wall_s", REGRESS_CONFIRMED);
	T_EQ_INT(bisect_auto_all(st, env), 1);
	char note[512];
	note_of(st, rid, note, sizeof(note));
	T_CHECK(strstr(note, "asked by kabd (bisect = auto)") != NULL);
	note_of(st, other, note, sizeof(note));
	T_EQ_STR(note, "");
	note_of(st, pending, note, sizeof(note));
	T_EQ_STR(note, "");
	struct store_bisect *page = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_page(st, 0, 10, &page, &n), 0);
	T_EQ_INT(n, 1);
	if (n == 1) {
		T_EQ_INT(page[0].regression, rid);
		T_EQ_STR(page[0].submitter, "kabd (bisect = auto)");
		T_EQ_INT(page[0].boots, 40);
		T_EQ_INT(page[0].state, BISECT_RUNNING);
	}
	for (size_t i = 0; i < n; i++)
		store_bisect_clear(&page[i]);
	free(page);
	/* once: the next pass (a later confirmation, a restart) asks nothing */
	T_EQ_INT(bisect_auto_all(st, env), 0);
	/* the pending one confirmed, with no clone of the tree: refused, noted */
	struct store_regress g;
	T_EQ_INT(store_regress_get(st, pending, &g), 0);
	g.state = REGRESS_CONFIRMED;
	T_EQ_INT(store_regress_settle(st, &g), 0);
	struct bisect_env gone = *env;
	gone.clone = "/nonexistent/kab-clone";
	T_EQ_INT(bisect_auto_all(st, &gone), 0);
	note_of(st, pending, note, sizeof(note));
	T_CHECK(strstr(note, "not bisected (bisect = auto): tree: kab's clone") != NULL);
	T_EQ_INT(bisect_auto_all(st, env), 0);
	T_EQ_INT(store_bisect_auto_note(st, pending, "again"), -EALREADY);
	T_EQ_INT(store_bisect_auto_note(st, 9999, "none"), -ENOENT);
	T_EQ_INT(store_bisect_page(st, 0, 10, &page, &n), 0);
	T_EQ_INT(n, 1);
	for (size_t i = 0; i < n; i++)
		store_bisect_clear(&page[i]);
	free(page);
	store_close(st);
}

/* The controls through kabd (bisect.revert, bisect.align = yes): the
 * revert made in the clone and measured by one step job of its own,
 * found again at every replay and measured once; the alignment control
 * not applicable in a tree without lib/Kconfig.debug; both reported. */
static void test_controls(const struct bisect_env *env)
{
	struct store *st = open_store();
	char text[1024];
	snprintf(text, sizeof(text),
		 "[job]\nname = bis-ctl\npairs = 2\nbisect.revert = yes\nbisect.align = yes\n[swap]\ndevice = none\n"
		 "[variant A]\nname = base\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[variant B]\nname = head\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[workload w]\ntype = command\ncommand = true\n",
		 tree, shas[0], tree, shas[8]);
	struct job *j = t_parse_job(text);
	int64_t src = 0;
	T_CHECK(j && jl_submit(st, j, "unit", &src, NULL) == 0);
	job_free(j);
	int64_t builds[2] = { add_build(st, shas[0], true), add_build(st, shas[8], true) };
	T_EQ_INT(store_variant_builds_set(st, src, builds, 2), 0);
	t_finish_runs(st, src, "time.wall_s", "s", source_value, NULL);
	end_job(st, src, JOB_DONE, NULL);

	struct sim s = { .culprit = 5, .nobuild = -1 };
	struct bisect_ask a = { .job = src, .good = shas[0], .bad = shas[8], .metric = "time.wall_s", .submitter = "unit" };
	int64_t id = 0;
	struct strbuf err = { 0 };
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	drive(st, env, &s, id);
	T_EQ_INT(state_of(st, id), BISECT_DONE);
	/* revert jobs of 6, then 4 pairs (BAD is a noisy commit here: a
	 * second look), every pair made once; another advance queues nothing */
	struct store_bisect_job *rows = NULL;
	size_t n = 0, reverts = 0, pairs = 0;
	T_EQ_INT(store_bisect_jobs(st, id, &rows, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].control, "revert") == 0) {
			reverts++;
			pairs += rows[i].k;
			T_EQ_STR(rows[i].sha, shas[5]);
			T_EQ_STR(rows[i].base, shas[8]);
		} else
			T_EQ_STR(rows[i].control, "");
	free(rows);
	T_EQ_INT(reverts, 2);
	T_EQ_INT(pairs, 10);
	T_EQ_INT(s.ctl_pairs, 10);
	T_EQ_INT(bisect_advance(st, env, id), 0);
	T_EQ_INT(count_status(st, JOB_QUEUED), 0);

	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	json_t *rep = b.report ? json_loads(b.report, 0, NULL) : NULL;
	json_t *c = json_array_get(json_object_get(rep, "culprits"), 0);
	json_t *ctl = json_object_get(c, "controls");
	json_t *rv = json_object_get(ctl, "revert"), *al = json_object_get(ctl, "align");
	T_EQ_STR(json_string_value(json_object_get(c, "answer")), "culprit");
	T_EQ_STR(json_string_value(json_object_get(rv, "decision")), "confirmed");
	T_CHECK(strstr(json_string_value(json_object_get(rv, "note")) ?: "", " reverted: commit ") != NULL);
	T_EQ_STR(json_string_value(json_object_get(rv, "base")), shas[8]);
	T_EQ_STR(json_string_value(json_object_get(al, "decision")), "not applicable");
	T_CHECK(strstr(json_string_value(json_object_get(al, "reason")) ?: "", "defines none of the options") != NULL);
	T_CHECK(strstr(b.reason, "first bad commit") != NULL);
	json_decref(rep);
	store_bisect_clear(&b);
	/* the revert is a commit of the clone, kept by its ref */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "git -C %s rev-parse -q --verify refs/kab/revert/%s-on-%.12s >/dev/null", env->clone,
		 shas[5], shas[8]);
	T_EQ_INT(system(cmd), 0);
	sb_free(&err);
	store_close(st);
}

int main(void)
{
	log_quiet = true;
	char dir[] = "/tmp/kab-test-bisect-life.XXXXXX", repo[64];
	if (!util_find_program("git", NULL, 0)) {
		t_skip("a bisection's life", "no git");
		return t_done("test_bisect_life");
	}
	if (!mkdtemp(dir)) {
		t_skip("a bisection's life", "mkdtemp failed");
		return t_done("test_bisect_life");
	}
	snprintf(repo, sizeof(repo), "%s/r.git", dir);
	if (!t_make_repo(repo, NC, shas))
		t_skip("a bisection's life", "git fast-import failed");
	else {
		struct bisect_env env = { .clone = repo, .no_machine_checks = true };
		test_replay(&env, -1);
		test_replay(&env, 4);
		test_step_job_ends(&env);
		test_reuse_confirmation(&env);
		test_budget(&env);
		test_auto(&env);
		test_controls(&env);
		struct store *st = open_store();
		int64_t src = source_job(st);
		test_crash_between(st, &env, src);
		test_regression(st, &env, src);
		test_bad_input(st, &env, src);
		test_states(st);
		char path[4096];
		snprintf(path, sizeof(path), "%s", store_path(st));
		store_close(st);
		test_api(path, src);
	}
	util_remove_tree(dir);
	return t_done("test_bisect_life");
}
