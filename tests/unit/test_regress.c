/* Change points and their confirmation: the regressions table, the
 * confirmation job built from two nights, settling it from a stored
 * confirmation's runs, and the title, text, JSON and Atom forms. */
#include "t_job.h"
#include "t_runs.h"
#include "harness/daemon/api.h"
#include "harness/daemon/nightly.h"
#include "harness/daemon/queue.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/regress.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_regress.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

/* A nightly job as a lab writes it: a baseline and a variant whose knob
 * changed on the bad night, and an expect for each. */
static const char night_text[] = "[job]\nname = nightly-unit\npairs = 6\nprimary = pageout.ns_mean\n"
				 "[swap]\ndevice = none\n"
				 "[variant A]\nname = base\nsysctl vm.swappiness = 60\n"
				 "[variant B]\nname = head\nsysctl vm.swappiness = %s\n"
				 "[workload w]\ntype = command\ncommand = true\n"
				 "expect.base = time.wall_s > 0\nexpect.head = time.wall_s >= 0\nexpect = time.wall_s < 100\n";

static struct job *night(const char *swappiness)
{
	char text[1024];
	snprintf(text, sizeof(text), night_text, swappiness);
	return t_parse_job(text);
}

static void test_confirmation_job(void)
{
	struct job *good = night("100"), *bad = night("10");
	T_CHECK(good && bad);
	if (!good || !bad)
		return;
	struct job_confirm c = { .name = "nightly-unit.confirm-1",
				 .good_name = "good-job3",
				 .bad_name = "bad-job4",
				 .min_pairs = 6,
				 .max_pairs = 16,
				 .step = 2 };
	char *text = NULL;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &text), 0);
	job_free(good);
	job_free(bad);
	struct job *j = text ? t_parse_job(text) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_STR(j->name, "nightly-unit.confirm-1");
		T_EQ_INT(j->n_variants, 2);
		T_EQ_STR(j->variants[0].name, "good-job3");
		T_EQ_STR(j->variants[1].name, "bad-job4");
		/* each side is the compared variant of its own night */
		T_EQ_INT(j->variants[0].n_knobs, 1);
		T_EQ_STR(j->variants[0].knobs[0].value, "100");
		T_EQ_STR(j->variants[1].knobs[0].value, "10");
		T_EQ_INT(j->order, JOB_ORDER_ABBA);
		T_CHECK(j->adaptive.on);
		T_EQ_INT(j->adaptive.min, 6);
		T_EQ_INT(j->adaptive.max, 16);
		T_EQ_INT(j->adaptive.step, 2);
		/* expect.head holds for both sides; expect.base went with the baseline */
		T_EQ_INT(j->workloads[0].n_expect, 2);
		for (size_t i = 0; i < j->workloads[0].n_expect; i++)
			T_CHECK(j->workloads[0].expect[i].variant == NULL);
		T_EQ_STR(j->primary[0], "pageout.ns_mean");
	}
	job_free(j);
	free(text);

	/* a variant that is not in both nights, the same name twice */
	good = night("100");
	bad = night("10");
	T_EQ_INT(job_confirmation(good, bad, 2, &c, &text), -EINVAL);
	c.bad_name = c.good_name;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &text), -EINVAL);
	job_free(good);
	job_free(bad);
}

/* Only the workloads that changed: the others are not run again. */
static void test_confirmation_workloads(void)
{
	static const char text[] = "[job]\nname = nightly-w\npairs = 2\nprimary = time.wall_s\n[swap]\ndevice = none\n"
				   "[variant A]\nname = base\n[variant B]\nname = head\n"
				   "[workload w1]\ntype = command\ncommand = true\n"
				   "[workload w2]\ntype = command\ncommand = true\nexpect.head = time.wall_s >= 0\n"
				   "[workload w3]\ntype = command\ncommand = true\n";
	static const char *const changed[] = { "w3", "w2", "gone" };
	struct job *good = t_parse_job(text), *bad = t_parse_job(text);
	T_CHECK(good && bad);
	if (!good || !bad)
		return;
	struct job_confirm c = { .name = "nightly-w.confirm-1",
				 .good_name = "good-job1",
				 .bad_name = "bad-job2",
				 .min_pairs = 6,
				 .max_pairs = 16,
				 .step = 2,
				 .workloads = changed,
				 .n_workloads = ARRAY_SIZE(changed) };
	char *out = NULL;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), 0);
	job_free(good);
	job_free(bad);
	struct job *j = out ? t_parse_job(out) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		/* the bad night's order, those named only */
		T_EQ_INT(j->n_workloads, 2);
		T_EQ_STR(j->workloads[0].name, "w2");
		T_EQ_STR(j->workloads[1].name, "w3");
		T_EQ_INT(j->workloads[0].n_expect, 1);
	}
	job_free(j);
	free(out);
	/* none of them in the night's job */
	good = t_parse_job(text);
	bad = t_parse_job(text);
	c.workloads = changed + 2;
	c.n_workloads = 1;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), -ENOENT);
	job_free(good);
	job_free(bad);
}

/* Nights that boot recorded builds (build = ID): the confirmation keeps
 * each night's build, as its commit; a bisection's step pins a recorded
 * build of each commit, in place of a tree and base. */
static void test_confirmation_builds(void)
{
	static const char fmt[] = "[job]\nname = nightly-b\npairs = 2\nprimary = time.wall_s\n[swap]\ndevice = none\n"
				  "[variant A]\nname = release\nkernel = build\nbuild = 3\n"
				  "[variant B]\nname = head\nkernel = build\nbuild = %d\ninitrd = /x/initrd.gz\n"
				  "[workload w]\ntype = command\ncommand = true\n";
	char t1[512], t2[512];
	snprintf(t1, sizeof(t1), fmt, 11);
	snprintf(t2, sizeof(t2), fmt, 12);
	struct job *good = t_parse_job(t1), *bad = t_parse_job(t2);
	T_CHECK(good && bad);
	if (!good || !bad)
		return;
	const char *a = "1111111111111111111111111111111111111111", *b = "2222222222222222222222222222222222222222";
	struct job_confirm c = { .name = "nightly-b.confirm-1",
				 .good_name = "good",
				 .bad_name = "bad",
				 .good_base = a,
				 .bad_base = b,
				 .min_pairs = 6,
				 .max_pairs = 16,
				 .step = 2 };
	char *out = NULL;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), 0);
	job_free(good);
	job_free(bad);
	struct job *j = out ? t_parse_job(out) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_INT(j->variants[0].build_id, 11);
		T_EQ_INT(j->variants[1].build_id, 12);
		T_CHECK(j->variants[0].base == NULL && j->variants[1].base == NULL && j->variants[0].tree == NULL);
		T_EQ_STR(j->variants[1].initrd, "/x/initrd.gz");
	}
	job_free(j);
	free(out);

	/* a step of a bisection: the builds of its two commits */
	good = t_parse_job(t1);
	bad = t_parse_job(t1);
	c.good_build = 21;
	c.bad_build = 22;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), 0);
	job_free(good);
	job_free(bad);
	j = out ? t_parse_job(out) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_INT(j->variants[0].build_id, 21);
		T_EQ_INT(j->variants[1].build_id, 22);
	}
	job_free(j);
	free(out);

	/* a variant kab builds from a tree, pinned to recorded builds: no tree left */
	static const char tree_text[] = "[job]\nname = nightly-t\npairs = 2\nprimary = time.wall_s\n[swap]\ndevice = none\n"
					"[variant A]\nname = release\nkernel = build\nbuild = 3\n"
					"[variant B]\nname = head\nkernel = build\ntree = /src/linux\ntrack = origin main\n"
					"config = tinyconfig\nconfig.fragment = /x/f.config\n"
					"[workload w]\ntype = command\ncommand = true\n";
	good = t_parse_job(tree_text);
	bad = t_parse_job(tree_text);
	T_CHECK(good && bad);
	if (!good || !bad)
		return;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), 0);
	job_free(good);
	job_free(bad);
	j = out ? t_parse_job(out) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_INT(j->variants[1].build_id, 22);
		T_CHECK(j->variants[1].tree == NULL && j->variants[1].config == NULL &&
			j->variants[1].n_fragments == 0 && j->variants[1].track_remote == NULL);
	}
	job_free(j);
	free(out);
}

/* Changes group by night pair and compared variant; the groups come
 * largest change first, then the newest bad night. */
static void test_group(void)
{
	struct nightly_change c[] = {
		{ .workload = "w2", .metric = "m", .variant = 1, .good_job = 9, .bad_job = 10, .pct = -3 },
		{ .workload = "w1", .metric = "m", .variant = 2, .good_job = 9, .bad_job = 10, .pct = -8 },
		{ .workload = "w1", .metric = "m", .variant = 1, .good_job = 9, .bad_job = 10, .pct = -2 },
		{ .workload = "w1", .metric = "m", .variant = 1, .good_job = 4, .bad_job = 5, .pct = 3 },
		{ .workload = "w2", .metric = "m", .variant = 2, .good_job = 9, .bad_job = 10, .pct = -1 },
		{ .workload = "w1", .metric = "n", .variant = 1, .good_job = 9, .bad_job = 10, .pct = NAN },
		{ .workload = "w3", .metric = "m", .variant = 1, .good_job = 11, .bad_job = 12, .pct = 3 },
	};
	struct nightly_group *g = NULL;
	size_t n = 0;
	T_EQ_INT(nightly_group_changes(c, ARRAY_SIZE(c), &g, &n), 0);
	T_EQ_INT(n, 4);
	if (n == 4) {
		/* variant 2 of 9-10 (-8), then the three of 3, the newest bad night first */
		T_EQ_INT(g[0].n, 2);
		T_EQ_INT(c[g[0].first].variant, 2);
		T_NEAR(g[0].size, 8, 1e-9);
		T_EQ_INT(c[g[1].first].bad_job, 12);
		T_EQ_INT(g[2].n, 3);
		T_EQ_INT(c[g[2].first].bad_job, 10);
		T_EQ_INT(c[g[2].first].variant, 1);
		T_NEAR(g[2].size, 3, 1e-9); /* an estimate that is not a number counts as none */
		T_EQ_INT(c[g[3].first].bad_job, 5);
		/* within a group, by workload and metric */
		T_EQ_STR(c[g[2].first].workload, "w1");
		T_EQ_STR(c[g[2].first].metric, "m");
		T_EQ_STR(c[g[2].first + 1].metric, "n");
		T_EQ_STR(c[g[2].first + 2].workload, "w2");
	}
	free(g);
	T_EQ_INT(nightly_group_changes(c, 0, &g, &n), 0);
	T_EQ_INT(n, 0);
	free(g);
}

/* A build variant is pinned to the commits the nights ran. */
static void test_confirmation_pins(void)
{
	static const char text[] = "[job]\nname = nightly-k\npairs = 2\n[swap]\ndevice = none\n"
				   "[variant A]\nname = release\nkernel = build\ntree = /src/linux\nbase = v6.1\n"
				   "[variant B]\nname = head\nkernel = build\ntree = /src/linux\ntrack = origin master\n"
				   "[workload w]\ntype = command\ncommand = true\n";
	struct job *good = t_parse_job(text), *bad = t_parse_job(text);
	T_CHECK(good && bad);
	if (!good || !bad)
		return;
	struct job_confirm c = { .name = "nightly-k.confirm-2",
				 .good_name = "good-aaaa",
				 .bad_name = "bad-bbbb",
				 .good_base = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				 .bad_base = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
				 .min_pairs = 6,
				 .max_pairs = 6 };
	char *out = NULL;
	T_EQ_INT(job_confirmation(good, bad, 1, &c, &out), 0);
	job_free(good);
	job_free(bad);
	struct job *j = out ? t_parse_job(out) : NULL;
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_STR(j->variants[0].base, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		T_EQ_STR(j->variants[1].base, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
		/* a tracked variant: the commit of its night, no longer the branch */
		T_CHECK(j->variants[1].track_remote == NULL && j->variants[1].track_branch == NULL);
		T_CHECK(!j->adaptive.on);
		T_EQ_INT(j->pairs, 6);
	}
	job_free(j);
	free(out);
}

static struct store_regress row(const char *metric, int64_t good, int64_t bad)
{
	struct store_regress g = { .created = 1764547200,
				   .variant = 1,
				   .good_job = good,
				   .bad_job = bad,
				   .good_night = 1764547200,
				   .bad_night = 1764633600,
				   .mean_before = 0.5,
				   .mean_after = 31.0,
				   .detected_pct = 30.5,
				   .detected_p = 1e-5,
				   .state = REGRESS_PENDING,
				   .estimate_pct = NAN,
				   .ci_lo_pct = NAN,
				   .ci_hi_pct = NAN,
				   .p = NAN };
	snprintf(g.name, sizeof(g.name), "nightly-unit");
	snprintf(g.workload, sizeof(g.workload), "w");
	snprintf(g.metric, sizeof(g.metric), "%s", metric);
	snprintf(g.direction, sizeof(g.direction), "lower");
	return g;
}

static void test_store(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-regress-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	/* jobs 1..6 of the name: the nights */
	for (int i = 0; i < 6; i++) {
		struct job *j = night("60");
		int64_t id;
		T_EQ_INT(job_store_create(st, j, &id), 0);
		job_free(j);
	}
	struct store_regress g = row("pageout.ns_mean", 3, 4), got;
	int64_t id;
	T_EQ_INT(store_regress_add(st, &g, &id), 0);
	T_EQ_INT(id, 1);
	bool known = false;
	T_EQ_INT(store_regress_known(st, "nightly-unit", "w", "pageout.ns_mean", 1, 5, 2, &known), 0);
	T_CHECK(known); /* night 5 is one night after 4: the same change moved */
	T_EQ_INT(store_regress_known(st, "nightly-unit", "w", "pageout.ns_mean", 1, 6, 1, &known), 0);
	T_CHECK(!known);
	T_EQ_INT(store_regress_known(st, "nightly-unit", "w", "other", 1, 4, 2, &known), 0);
	T_CHECK(!known);
	/* the same first bad night twice is refused by the table */
	T_CHECK(store_regress_add(st, &g, &id) < 0);
	T_EQ_INT(store_regress_set_confirm(st, 1, 6), 0);
	struct store_regress *waiting = NULL;
	size_t n_waiting = 0;
	T_EQ_INT(store_regress_by_confirm(st, 6, &waiting, &n_waiting), 0);
	T_EQ_INT(n_waiting, 1);
	got = n_waiting ? waiting[0] : (struct store_regress){ 0 };
	free(waiting);
	T_EQ_INT(got.id, 1);
	T_EQ_INT(got.state, REGRESS_PENDING);
	T_CHECK(isnan(got.estimate_pct));
	T_EQ_INT(store_regress_by_confirm(st, 5, &waiting, &n_waiting), -ENOENT);
	got.state = REGRESS_CONFIRMED;
	got.estimate_pct = 29.9;
	got.ci_lo_pct = 25.0;
	got.ci_hi_pct = 35.0;
	got.p = 0.0005;
	snprintf(got.verdict, sizeof(got.verdict), "worse");
	T_EQ_INT(store_regress_settle(st, &got), 0);
	struct store_regress g2 = row("pageout.refault_ns_mean", 3, 4);
	T_EQ_INT(store_regress_add(st, &g2, &id), 0);
	struct store_regress *rows = NULL;
	size_t n = 0;
	T_EQ_INT(store_regress_list(st, &rows, &n), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_INT(rows[0].id, 2); /* newest first */
		T_CHECK(store_regress_is_regression(&rows[1]));
		T_CHECK(regress_open(&rows[1]));
		T_CHECK(!regress_open(&rows[0]));
	}
	free(rows);
	T_EQ_INT(store_regress_ack(st, 1, "token", 1764700000), 0);
	T_EQ_INT(store_regress_ack(st, 1, "token", 1764700001), -EALREADY);
	T_EQ_INT(store_regress_ack(st, 9, "token", 1764700001), -ENOENT);
	T_EQ_INT(store_regress_get(st, 1, &got), 0);
	T_EQ_STR(got.acked_by, "token");
	T_CHECK(!regress_open(&got));
	store_close(st);
	unlink(path);
}

static void test_render(void)
{
	struct store_regress g = row("pageout.ns_mean", 3, 4);
	char title[512];
	regress_title(&g, NULL, title, sizeof(title));
	T_EQ_STR(title, "[nightly-unit] job 4: pageout.ns_mean +30.5% pending confirmation");
	g.state = REGRESS_CONFIRMED;
	g.estimate_pct = 29.94;
	g.ci_lo_pct = 25;
	g.ci_hi_pct = 35;
	g.p = 0.0005;
	g.confirm_job = 7;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	snprintf(g.track, sizeof(g.track), "origin mm-unstable");
	snprintf(g.bad_sha, sizeof(g.bad_sha), "6ccdcb6d3a741b5a2cbd1f0e2d5a0b9c8d7e6f50");
	snprintf(g.bad_subject, sizeof(g.bad_subject), "mm, pcp: <drain> & \"more\"");
	regress_title(&g, NULL, title, sizeof(title));
	T_EQ_STR(title, "[origin:mm-unstable] 6ccdcb6d3a: pageout.ns_mean +29.9% regression");
	snprintf(g.verdict, sizeof(g.verdict), "better");
	T_EQ_STR(regress_kind(&g), "improvement");
	snprintf(g.verdict, sizeof(g.verdict), "worse");

	struct store_regress two[2] = { g, row("x", 1, 2) };
	struct strbuf b = { 0 };
	T_EQ_INT(regress_render_json(two, 2, NULL, &b), 0);
	T_CHECK(b.buf && strstr(b.buf, "\"title\":\"[origin:mm-unstable] 6ccdcb6d3a: pageout.ns_mean +29.9% regression\""));
	T_CHECK(b.buf && strstr(b.buf, "\"first_bad\":{\"job\":4,\"night\":\"2025-12-02T00:00:00Z\",\"sha\":\"6ccdcb6d3a"));
	T_CHECK(b.buf && strstr(b.buf, "\"confirmation\":{\"job\":7,\"estimate_pct\":29.94,\"ci_low_pct\":25"));
	T_CHECK(b.buf && strstr(b.buf, "\"confirmation\":{\"job\":null,\"estimate_pct\":null"));
	T_CHECK(b.buf && strstr(b.buf, "\"open\":true"));
	sb_free(&b);
	T_EQ_INT(regress_render_atom(two, 2, NULL, "http://lab:8080", &b), 0);
	/* the confirmed one only, its subject's markup escaped */
	T_CHECK(b.buf && strstr(b.buf, "<entry>") && strstr(b.buf, "</entry>") &&
		strstr(b.buf, "<entry>") == strrchr(b.buf, '<') - (strrchr(b.buf, '<') - strstr(b.buf, "<entry>")));
	T_CHECK(b.buf && strstr(b.buf, "<id>urn:kab:regression:0</id>"));
	T_CHECK(b.buf && !strstr(b.buf, "pending confirmation"));
	T_CHECK(b.buf && strstr(b.buf, "href=\"http://lab:8080/regressions.html#r0\""));
	size_t entries = 0;
	for (const char *p = b.buf; p && (p = strstr(p, "<entry>")); p++)
		entries++;
	T_EQ_INT(entries, 1);
	sb_free(&b);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	regress_render_text(two, 2, NULL, f);
	fclose(f);
	T_CHECK(text && strstr(text, "confirmed  job 7: +29.9% [+25.0, +35.0], p 0.001, worse"));
	T_CHECK(text && strstr(text, "first bad  job 4, 2025-12-02T00:00:00Z, 6ccdcb6d3a74 mm, pcp"));
	free(text);
}

/* Variant A's time by pair, and B's factor (*ctx) times it. */
static double confirmation_value(void *ctx, const struct store_step *step)
{
	double base = 0.3 * (1 + 0.01 * (double)(step->pair % 3));
	return step->variant ? base * *(const double *)ctx : base;
}

/* A stored confirmation job: variant B's metric is factor x variant A's. */
static int64_t stored_confirmation(struct store *st, double factor, const char *status)
{
	static const char text[] = "[job]\nname = nightly-unit.confirm-1\npairs = 8\norder = abba\nprimary = time.wall_s\n"
				   "[swap]\ndevice = none\n[variant A]\nname = good\n[variant B]\nname = bad\n"
				   "[workload w]\ntype = command\ncommand = true\n";
	struct job *j = t_parse_job(text);
	int64_t id = 0;
	struct store_step *steps = NULL;
	size_t n = 0;
	T_CHECK(j && job_store_create(st, j, &id) == 0 && exec_plan(j, &steps, &n) == 0);
	T_EQ_INT(store_steps_create(st, id, steps, n), 0);
	free(steps);
	t_finish_runs(st, id, "time.wall_s", "s", confirmation_value, &factor);
	enum job_status s;
	T_EQ_INT(job_status_parse(status, &s), 0);
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), 0); /* as the executor does */
	T_EQ_INT(store_job_set_status(st, id, s, strcmp(status, "done") ? "the executor stopped" : NULL), 0);
	job_free(j);
	return id;
}

static void test_settle(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-settle-XXXXXX", "KAB_UNIT_KEEP");
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	struct {
		double factor;
		const char *status;
		double detected;
		enum regress_state want;
		const char *verdict;
	} c[] = {
		{ 1.30, "done", 30.5, REGRESS_CONFIRMED, "worse" },
		{ 1.00, "done", 30.5, REGRESS_NOT_CONFIRMED, "same" },
		{ 0.70, "done", 30.5, REGRESS_NOT_CONFIRMED, "better" }, /* the other way round */
		{ 0.70, "done", -30.0, REGRESS_CONFIRMED, "better" },
		{ 1.30, "failed", 30.5, REGRESS_FAILED, "" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		int64_t cj = stored_confirmation(st, c[i].factor, c[i].status);
		struct store_regress g = row("time.wall_s", cj, cj), got;
		g.detected_pct = c[i].detected;
		int64_t id;
		/* the nights stand in: any job of the store will do */
		T_EQ_INT(store_regress_add(st, &g, &id), 0);
		T_EQ_INT(store_regress_set_confirm(st, id, cj), 0);
		T_EQ_INT(nightly_settle(st, cj), 0);
		T_EQ_INT(store_regress_get(st, id, &got), 0);
		T_EQ_INT(got.state, c[i].want);
		T_EQ_STR(got.verdict, c[i].verdict);
		if (c[i].want != REGRESS_FAILED) {
			T_NEAR(got.estimate_pct, 100 * (c[i].factor - 1), 0.5);
			T_CHECK(got.ci_lo_pct <= got.estimate_pct && got.estimate_pct <= got.ci_hi_pct);
		} else {
			T_CHECK(strstr(got.reason, "ended failed: the executor stopped") != NULL);
		}
	}
	T_EQ_INT(nightly_settle(st, 999), -ENOENT);
	/* one confirmation for two changes of its night pair: each settles from its own metric */
	int64_t cj = stored_confirmation(st, 1.30, "done"), ids[2];
	struct store_regress two[2] = { row("time.wall_s", cj, cj), row("pageout.ns_mean", cj, cj) };
	for (size_t i = 0; i < 2; i++) {
		T_EQ_INT(store_regress_add(st, &two[i], &ids[i]), 0);
		T_EQ_INT(store_regress_set_confirm(st, ids[i], cj), 0);
	}
	T_EQ_INT(nightly_settle(st, cj), 0);
	struct store_regress got;
	T_EQ_INT(store_regress_get(st, ids[0], &got), 0);
	T_EQ_INT(got.state, REGRESS_CONFIRMED);
	T_EQ_INT(store_regress_get(st, ids[1], &got), 0);
	T_EQ_INT(got.state, REGRESS_FAILED);
	T_CHECK(strstr(got.reason, "has no pageout.ns_mean in workload w") != NULL);
	store_close(st);
	if (!getenv("KAB_UNIT_KEEP"))
		unlink(path);
}

typedef void (*handler_t)(struct api *, const struct httpd_req *, struct httpd_resp *);

static int call(handler_t fn, const char *db, const char *method, int64_t id, const char *const *args, struct httpd_resp *rs)
{
	struct api a = { .db_path = db };
	struct httpd_req rq = { .method = method, .path = "/regressions", .id = id, .args = args, .submitter = "token" };
	sb_free(&rs->body);
	*rs = (struct httpd_resp){ 0 };
	fn(&a, &rq, rs);
	return rs->status;
}

/* The API's door: formats, parameters, ids, and who acknowledges what. */
static void test_api(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-regapi-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	struct job *j = night("60");
	int64_t jid, id;
	T_EQ_INT(job_store_create(st, j, &jid), 0);
	job_free(j);
	struct store_regress g = row("pageout.ns_mean", jid, jid);
	T_EQ_INT(store_regress_add(st, &g, &id), 0);
	store_close(st);
	struct httpd_resp rs = { 0 };
	static const char *const none[] = { NULL };
	static const char *const text[] = { "format", "text", NULL };
	static const char *const atom[] = { "format", "atom", NULL };
	static const char *const bad_fmt[] = { "format", "xml", NULL };
	static const char *const unknown[] = { "job", "x", NULL };
	static const char *const twice[] = { "format", "json", "format", "text", NULL };
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, none, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "\"regressions\":[{\"id\":1,"));
	T_EQ_STR(rs.content_type, "application/json");
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, text, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "#1 [nightly-unit] job "));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, atom, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "<feed xmlns=\"http://www.w3.org/2005/Atom\">") &&
		!strstr(rs.body.buf, "<entry>")); /* pending: not in the feed */
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, bad_fmt, &rs), 400);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "format must be json, text or atom"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, unknown, &rs), 400);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "unknown parameter \\\"job\\\""));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, twice, &rs), 400);
	T_EQ_INT(call(api_regression_get, path, "GET", 1, none, &rs), 200);
	T_EQ_INT(call(api_regression_get, path, "GET", 2, none, &rs), 404);
	/* only a confirmed change is acknowledged, once, by the caller kabd names */
	T_EQ_INT(call(api_regression_ack, path, "POST", 1, none, &rs), 409);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "is pending"));
	T_EQ_INT(store_open(path, &st), 0);
	T_EQ_INT(store_regress_get(st, 1, &g), 0);
	g.state = REGRESS_CONFIRMED;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	T_EQ_INT(store_regress_settle(st, &g), 0);
	store_close(st);
	T_EQ_INT(call(api_regression_ack, path, "POST", 1, none, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "\"acknowledged_by\":\"token\"") && strstr(rs.body.buf, "\"open\":false"));
	T_EQ_INT(call(api_regression_ack, path, "POST", 1, none, &rs), 409);
	T_EQ_INT(call(api_regression_ack, path, "POST", 7, none, &rs), 404);
	struct strbuf m = { 0 };
	T_EQ_INT(store_open(path, &st), 0);
	T_EQ_INT(api_metrics_regressions(st, &m), 0);
	store_close(st);
	T_CHECK(m.buf && strstr(m.buf, "kab_regressions_open{job=\"nightly-unit\",metric=\"pageout.ns_mean\",kind=\"regression\"} 0\n"));
	sb_free(&m);
	sb_free(&rs.body);
	unlink(path);
}

/* A page of the list and the next, the text's pointer to older ones, the
 * feed of the confirmed ones, and /metrics' series as the database counts
 * them: one per job, metric and kind, newest first, its open rows. */
static void test_api_pages(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-regpage-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	int64_t jid[6] = { 0 };
	for (int i = 1; i <= 5; i++) {
		struct job *j = night("60");
		T_EQ_INT(job_store_create(st, j, &jid[i]), 0);
		job_free(j);
	}
	static const struct {
		const char *metric, *verdict; /* NULL: pending */
		bool acked;
	} rows[] = {
		{ "m1", "worse", true }, { "m1", "worse", false }, { "m2", "better", false },
		{ "m1", NULL, false },   { "m2", "same", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct store_regress g = row(rows[i].metric, jid[1], jid[i + 1]);
		int64_t id;
		T_EQ_INT(store_regress_add(st, &g, &id), 0);
		T_EQ_INT(id, (int64_t)i + 1);
		if (!rows[i].verdict)
			continue;
		T_EQ_INT(store_regress_get(st, id, &g), 0);
		g.state = REGRESS_CONFIRMED;
		snprintf(g.verdict, sizeof(g.verdict), "%s", rows[i].verdict);
		T_EQ_INT(store_regress_settle(st, &g), 0);
		if (rows[i].acked)
			T_EQ_INT(store_regress_ack(st, id, "token", 1764700000), 0);
	}
	struct strbuf m = { 0 };
	T_EQ_INT(api_metrics_regressions(st, &m), 0);
	store_close(st);
	T_CHECK(m.buf && strstr(m.buf, "# TYPE kab_regressions_open gauge\n"
				       "kab_regressions_open{job=\"nightly-unit\",metric=\"m2\",kind=\"change\"} 1\n"
				       "kab_regressions_open{job=\"nightly-unit\",metric=\"m2\",kind=\"improvement\"} 1\n"
				       "kab_regressions_open{job=\"nightly-unit\",metric=\"m1\",kind=\"regression\"} 1\n"));
	if (m.buf)
		T_CHECK(strstr(m.buf, "metric=\"m1\",kind=\"regression\"} 1\n") + strlen("metric=\"m1\",kind=\"regression\"} 1\n") ==
			m.buf + m.len); /* the pending row makes no series */
	sb_free(&m);

	struct httpd_resp rs = { 0 };
	static const char *const first[] = { "limit", "2", NULL };
	static const char *const second[] = { "limit", "2", "after", "4", NULL };
	static const char *const last[] = { "limit", "2", "after", "2", NULL };
	static const char *const text[] = { "format", "text", "limit", "2", NULL };
	static const char *const atom[] = { "format", "atom", "limit", "1", NULL };
	static const char *const bad[] = { "limit", "x", NULL };
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, first, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "{\"regressions\":[{\"id\":5,") && strstr(rs.body.buf, "},{\"id\":4,") &&
		!strstr(rs.body.buf, "{\"id\":3,") && strstr(rs.body.buf, "],\"next_after\":4}\n"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, second, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "[{\"id\":3,") && strstr(rs.body.buf, "},{\"id\":2,") &&
		strstr(rs.body.buf, "],\"next_after\":2}\n"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, last, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "[{\"id\":1,") && strstr(rs.body.buf, "],\"next_after\":null}\n"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, text, &rs), 200);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "#5 ") && strstr(rs.body.buf, "#4 ") &&
		!strstr(rs.body.buf, "#3 ") && strstr(rs.body.buf, "\n(older change points: after=4)\n"));
	/* the feed: the confirmed ones, whatever limit says */
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, atom, &rs), 200);
	size_t entries = 0;
	for (const char *p = rs.body.buf; p && (p = strstr(p, "<entry>")); p++)
		entries++;
	T_EQ_INT(entries, 4);
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, bad, &rs), 400);
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "limit must be"));
	sb_free(&rs.body);
	unlink(path);
}

/* No byte a terminal acts on (C0 but newline and tab, DEL, C1) and
 * nothing that is not UTF-8. */
static bool terminal_safe(const char *s)
{
	if (!s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return esc_utf8_valid(s, strlen(s), NULL);
}

/* Nothing XML 1.0 forbids: UTF-8, no C0 control but tab, newline, CR. */
static bool xml_chars_ok(const char *s)
{
	if (!s || !esc_utf8_valid(s, strlen(s), NULL))
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r')
			return false;
	return true;
}

/* A row whose strings came from git and a command workload as an older
 * kab stored them: escape sequences in the subjects, the metric and the
 * machine, a branch that is no UTF-8. The text list, kabd's text and
 * Atom forms and /metrics show them and run none. */
static void test_hostile(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-reghostile-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	struct job *j = night("60");
	int64_t jid, id;
	T_EQ_INT(job_store_create(st, j, &jid), 0);
	job_free(j);
	struct store_regress g = row("command.\x1b[2Jwiped", jid, jid);
	g.state = REGRESS_CONFIRMED;
	g.estimate_pct = 12;
	g.ci_lo_pct = 10;
	g.ci_hi_pct = 14;
	g.p = 0.001;
	g.confirm_job = jid;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	snprintf(g.track, sizeof(g.track), "origin caf\xe9");
	snprintf(g.bad_sha, sizeof(g.bad_sha), "6ccdcb6d3a741b5a2cbd1f0e2d5a0b9c8d7e6f50");
	snprintf(g.good_sha, sizeof(g.good_sha), "0123456789abcdef0123456789abcdef01234567");
	snprintf(g.bad_subject, sizeof(g.bad_subject), "mm: \033]0;owned\007\302\23331m & <b>");
	snprintf(g.good_subject, sizeof(g.good_subject), "mm: good\x1b[0m\r");
	snprintf(g.machine, sizeof(g.machine), "lab\x1b[8m");
	T_EQ_INT(store_regress_add(st, &g, &id), 0);
	struct store_regress got;
	T_EQ_INT(store_regress_get(st, id, &got), 0);
	got.state = REGRESS_CONFIRMED;
	got.estimate_pct = 12;
	snprintf(got.verdict, sizeof(got.verdict), "worse");
	T_EQ_INT(store_regress_settle(st, &got), 0);
	store_close(st);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	T_EQ_INT(regress_render_text(&g, 1, NULL, f), 0);
	fclose(f);
	T_CHECK(terminal_safe(text));
	T_CHECK(text && strstr(text, "[origin:caf\\xe9] 6ccdcb6d3a: command.\\x1b[2Jwiped +12.0% regression"));
	T_CHECK(text && strstr(text, "6ccdcb6d3a74 mm: \\x1b]0;owned\\x07\\u009b31m & <b>"));
	free(text);

	struct httpd_resp rs = { 0 };
	static const char *const as_text[] = { "format", "text", NULL };
	static const char *const as_atom[] = { "format", "atom", NULL };
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, as_text, &rs), 200);
	T_CHECK(terminal_safe(rs.body.buf));
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "machine lab\\x1b[8m"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, as_atom, &rs), 200);
	T_CHECK(xml_chars_ok(rs.body.buf));
	/* the branch's byte is U+FFFD, ESC left out, markup as entities */
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "<title>[origin:caf\xef\xbf\xbd] 6ccdcb6d3a: command.[2Jwiped +12.0% regression</title>"));
	T_CHECK(rs.body.buf && strstr(rs.body.buf, "on lab[8m:"));
	sb_free(&rs.body);
	struct strbuf m = { 0 };
	T_EQ_INT(store_open(path, &st), 0);
	T_EQ_INT(api_metrics_regressions(st, &m), 0);
	store_close(st);
	T_CHECK(terminal_safe(m.buf));
	T_CHECK(m.buf && strstr(m.buf, "metric=\"command.\\\\x1b[2Jwiped\""));
	sb_free(&m);
	unlink(path);
}

/* The escaper of every /metrics label kab did not write: a lab machine's
 * host name (api_lab.c) as another machine registered it, with ESC, CR,
 * a newline, a C1 CSI, a bidirectional override, a byte of no UTF-8,
 * a quote and a backslash: one line, valid UTF-8, no control character,
 * the quote and backslashes escaped for the exposition format. */
static void test_metrics_label(void)
{
	struct strbuf b = { 0 };
	api_metrics_label(&b, "lab\x1b[2J\r\nkabd_up 1\302\233"
			      "31m\342\200\256x\xff\"q\\");
	T_CHECK(b.buf && strcmp(b.buf, "lab\\\\x1b[2J\\\\x0d\\\\x0akabd_up 1\\\\u009b31m\\\\u202ex\\\\xff\\\"q\\\\") == 0);
	T_CHECK(terminal_safe(b.buf) && !strchr(b.buf, '\n'));
	T_CHECK(esc_utf8_valid(b.buf, b.len, NULL));
	sb_free(&b);
	api_metrics_label(&b, "plain-host.example");
	T_CHECK(b.buf && strcmp(b.buf, "plain-host.example") == 0);
	sb_free(&b);
}

/* ---- a regression's bisection ---- */

/* Reports as harness/daemon/bisect_life.c's report_json() writes them
 * (jw_dump_sb, flags 0): GOOD..BAD, the anchor, three steps, and the
 * culprits given. */
#define B_GOOD "0123456789abcdef0123456789abcdef01234567"
#define B_BAD "6ccdcb6d3a741b5a2cbd1f0e2d5a0b9c8d7e6f50"
#define B_SHA1 "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
#define B_PAR1 "0f0f0f0f0f0f1e1e1e1e1e1e2d2d2d2d2d2d3c3c"
#define B_SHA2 "aabbccddeeff00112233445566778899aabbccdd"
#define B_PAR2 "99887766554433221100ffeeddccbbaa99887766"
#define EFFECT(d, why, est, lo, hi, n) \
	"{\"decision\": \"" d "\", \"reason\": \"" why "\", \"estimate_pct\": " #est ", \"ci_lo_pct\": " #lo \
	", \"ci_hi_pct\": " #hi ", \"pairs\": " #n "}"
#define STEP(sha, mark, est, lo, hi) \
	"{\"decision\": \"" mark "\", \"reason\": \"shift on " mark "'s side\", \"estimate_pct\": " #est \
	", \"ci_lo_pct\": " #lo ", \"ci_hi_pct\": " #hi ", \"pairs\": 6, \"sha\": \"" sha \
	"\", \"part\": 0, \"mark\": \"" mark "\"}"
#define CULPRIT(answer, part, sha, subject, parent, confirmation) \
	"{\"answer\": \"" answer "\", \"part\": " #part ", \"sha\": \"" sha "\", \"subject\": \"" subject \
	"\", \"author\": \"A U Thor <author@example.org>\", \"date\": \"2025-11-30T10:00:00+01:00\", \"parent\": \"" parent \
	"\", \"confirmation\": " confirmation "}"
#define CONFIRMED \
	EFFECT("confirmed", "against its parent +9.80% [+8.10, +11.50] (worse), reaching the effect", 9.8, 8.1, 11.5, 12)
#define RANGE(part, n) \
	"{\"answer\": \"range\", \"part\": " #part ", \"candidates\": [\"" B_SHA1 "\", \"" B_SHA2 \
	"\"], \"n_candidates\": " #n ", \"reason\": \"only skipped commits left\"}"
#define B_ANCHOR EFFECT("anchored", "BAD is worse than GOOD", 10.2, 8.9, 11.6, 10)
#define B_STEP1 STEP(B_SHA2, "good", 0.3, -0.5, 1.1)
#define B_STEP2 STEP(B_SHA1, "bad", 9.9, 8.7, 11.0)
#define B_STEP3 STEP(B_PAR1, "good", 0.1, -0.6, 0.9)
#define B_LOG "git bisect start\\n# good: [" B_GOOD "]\\n"
#define REPORT(culprits) \
	"{\"good\": \"" B_GOOD "\", \"bad\": \"" B_BAD "\", \"anchor\": " B_ANCHOR ", \"steps\": [" B_STEP1 ", " B_STEP2 \
	", " B_STEP3 "], \"culprits\": [" culprits "], \"builds\": 4, \"boots\": 52, \"parts\": 1, \"log\": \"" B_LOG "\"}"

#define B_CULPRIT1 CULPRIT("culprit", 0, B_SHA1, "mm, pcp: drain less", B_PAR1, CONFIRMED)
#define B_CULPRIT2 \
	CULPRIT("culprit", 1, B_SHA2, "mm: batch more", B_PAR2, EFFECT("confirmed", "reaching it", 4.1, 3.0, 5.2, 10))

static const char rep_culprit[] = REPORT(B_CULPRIT1);
static const char rep_split[] = REPORT(B_CULPRIT1 ", " B_CULPRIT2);
static const char rep_range[] = REPORT(RANGE(0, 3));
static const char rep_unconfirmed[] =
	REPORT(CULPRIT("unconfirmed", 0, B_SHA1, "mm, pcp: drain less", B_PAR1,
		       EFFECT("unconfirmed", "it explains a part of it only", 3.0, 1.2, 4.8, 20)));

/* a culprit with both controls: the revert gives the effect back, the
 * effect vanishes with forced alignment */
#define B_CONTROLS \
	"{\"answer\": \"layout-sensitive\", \"part\": 0, \"sha\": \"" B_SHA1 "\", \"subject\": \"mm, pcp: drain less\", " \
	"\"author\": \"A U Thor <author@example.org>\", \"date\": \"2025-11-30T10:00:00+01:00\", \"parent\": \"" B_PAR1 \
	"\", \"confirmation\": " CONFIRMED ", \"controls\": {\"revert\": {\"decision\": \"confirmed\", \"reason\": " \
	"\"the revert gives it back\", \"estimate_pct\": 9.5, \"ci_lo_pct\": 8.0, \"ci_hi_pct\": 11.0, \"pairs\": 6, " \
	"\"base\": \"" B_BAD "\", \"note\": \"commit 77 of kab's clone\"}, \"align\": " \
	"{\"decision\": \"layout-sensitive\", \"reason\": \"the effect vanishes\", \"estimate_pct\": 0.2, " \
	"\"ci_lo_pct\": -0.9, \"ci_hi_pct\": 1.3, \"pairs\": 10, \"base\": \"" B_PAR1 "\", \"note\": " \
	"\"forced CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y\"}}}"
static const char rep_layout[] = REPORT(B_CONTROLS);

static struct store_bisect bisection(int64_t id, int64_t regression, enum bisect_state state, const char *reason, const char *report)
{
	struct store_bisect b = { .id = id,
				  .created = 1764720000, /* 2025-12-03 */
				  .ended = state == BISECT_RUNNING ? 0 : 1764806400,
				  .regression = regression,
				  .source_job = 4,
				  .variant = 1,
				  .state = state,
				  .report = (char *)report };
	snprintf(b.reason, sizeof(b.reason), "%s", reason);
	snprintf(b.good, sizeof(b.good), B_GOOD);
	snprintf(b.bad, sizeof(b.bad), B_BAD);
	snprintf(b.workload, sizeof(b.workload), "w");
	snprintf(b.metric, sizeof(b.metric), "pageout.ns_mean");
	return b;
}

/* A confirmed regression of a tracked branch, as test_render makes it. */
static struct store_regress confirmed_row(int64_t id)
{
	struct store_regress g = row("pageout.ns_mean", 3, 4);
	g.id = id;
	g.state = REGRESS_CONFIRMED;
	g.estimate_pct = 29.94;
	g.ci_lo_pct = 25;
	g.ci_hi_pct = 35;
	g.p = 0.0005;
	g.confirm_job = 7;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	snprintf(g.track, sizeof(g.track), "origin mm-unstable");
	snprintf(g.good_sha, sizeof(g.good_sha), B_GOOD);
	snprintf(g.bad_sha, sizeof(g.bad_sha), B_BAD);
	snprintf(g.bad_subject, sizeof(g.bad_subject), "mm: the bad night's head");
	return g;
}

struct forms {
	char title[1024];
	struct strbuf json, atom;
	char *text;
};

static void forms_of(const struct store_regress *g, const struct store_bisect *b, struct forms *ret)
{
	*ret = (struct forms){ 0 };
	struct regress_bisections bs = { .v = (struct store_bisect *)b, .n = b ? 1 : 0 };
	regress_title(g, b, ret->title, sizeof(ret->title));
	T_EQ_INT(regress_render_json(g, 1, &bs, &ret->json), 0);
	T_EQ_INT(regress_render_atom(g, 1, &bs, "", &ret->atom), 0);
	size_t len = 0;
	FILE *f = open_memstream(&ret->text, &len);
	T_EQ_INT(regress_render_text(g, 1, &bs, f), 0);
	fclose(f);
}

static void forms_free(struct forms *f)
{
	sb_free(&f->json);
	sb_free(&f->atom);
	free(f->text);
}

static bool has(const char *s, const char *want)
{
	bool ok = s && strstr(s, want);
	if (!ok)
		fprintf(stderr, "  expected to find:\n    %s\n  in:\n%s\n", want, s ? s : "(null)");
	return ok;
}

#define B_TITLE "[origin:mm-unstable] 6ccdcb6d3a: pageout.ns_mean +29.9% regression"

/* A done bisection with its culprit: the 0-day title names it, the JSON
 * carries it with its confirmation, the text and the Atom entry have the
 * first bad commit line, and the entry's <updated> is the bisection's end. */
static void test_bisection_done(void)
{
	struct store_regress g = confirmed_row(2);
	struct store_bisect b =
		bisection(3, 2, BISECT_DONE, "first bad commit 1a2b3c4d5e6f (3 steps, 4 builds, 52 boots)", rep_culprit);
	struct forms f;
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE ": first bad commit 1a2b3c4d5e6f \"mm, pcp: drain less\"");
	T_CHECK(has(f.json.buf, "\"title\":\"" B_TITLE ": first bad commit 1a2b3c4d5e6f \\\"mm, pcp: drain less\\\"\""));
	T_CHECK(has(f.json.buf, "\"bisection\":{\"id\":3,\"state\":\"done\",\"reason\":\"first bad commit 1a2b3c4d5e6f (3 steps, "
				"4 builds, 52 boots)\",\"started\":\"2025-12-03T00:00:00Z\",\"ended\":\"2025-12-04T00:00:00Z\","
				"\"good\":\"" B_GOOD "\",\"bad\":\"" B_BAD "\",\"culprits\":[{\"answer\":\"culprit\",\"part\":0,"
				"\"sha\":\"" B_SHA1 "\",\"subject\":\"mm, pcp: drain less\",\"author\":\"A U Thor "
				"<author@example.org>\",\"date\":\"2025-11-30T10:00:00+01:00\",\"parent\":\"" B_PAR1 "\","
				"\"confirmation\":{\"decision\":\"confirmed\",\"reason\":\"against its parent +9.80% [+8.10, "
				"+11.50] (worse), reaching the effect\",\"estimate_pct\":9.8,\"ci_lo_pct\":8.1,\"ci_hi_pct\":11.5,"
				"\"pairs\":12}}],\"steps\":3,\"builds\":4,\"boots\":52}}"));
	T_CHECK(has(f.text, "#2 " B_TITLE ": first bad commit 1a2b3c4d5e6f \"mm, pcp: drain less\"\n"));
	T_CHECK(has(f.text, "\n  bisection  3: done, first bad commit 1a2b3c4d5e6f (3 steps, 4 builds, 52 boots)\n"
			    "  first bad commit " B_SHA1 " \"mm, pcp: drain less\" (A U Thor <author@example.org>, "
			    "2025-11-30T10:00:00+01:00)\n"
			    "    against its parent 0f0f0f0f0f0f: +9.8% [+8.1, +11.5], 12 pairs, confirmed: against its parent "
			    "+9.80% [+8.10, +11.50] (worse), reaching the effect\n"));
	T_CHECK(has(f.atom.buf, "<title>" B_TITLE ": first bad commit 1a2b3c4d5e6f &quot;mm, pcp: drain less&quot;</title>"));
	T_CHECK(has(f.atom.buf, "; first bad commit " B_SHA1 " &quot;mm, pcp: drain less&quot; by A U Thor "
				"&lt;author@example.org&gt;, 2025-11-30T10:00:00+01:00; against its parent 0f0f0f0f0f0f: +9.8% "
				"[+8.1, +11.5], 12 pairs, confirmed (bisection 3: 3 steps, 4 builds, 52 boots)</summary>"));
	/* the entry and the feed changed when the bisection ended */
	T_CHECK(has(f.atom.buf, "<updated>2025-12-04T00:00:00Z</updated>\n  <link"));
	T_CHECK(has(f.atom.buf, "<id>urn:kab:regression:2</id>\n    <updated>2025-12-04T00:00:00Z</updated>"));
	forms_free(&f);

	/* without it the same regression is as it was */
	forms_of(&g, NULL, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.json.buf, "\"acknowledged_by\":null,\"auto_bisect\":null,\"bisection\":null}"));
	T_CHECK(f.text && !strstr(f.text, "bisection"));
	T_CHECK(has(f.atom.buf, "<updated>2025-12-01T00:00:00Z</updated>\n  <link"));
	T_CHECK(f.atom.buf && !strstr(f.atom.buf, "bisection"));
	forms_free(&f);
}

/* While it runs: the title is the same, the JSON has its state and no
 * culprit yet, the text says "bisection N: running", the entry changed
 * when it started. */
static void test_bisection_running(void)
{
	struct store_regress g = confirmed_row(2);
	struct store_bisect b = bisection(4, 2, BISECT_RUNNING, "", NULL);
	struct forms f;
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.json.buf, "\"bisection\":{\"id\":4,\"state\":\"running\",\"reason\":null,\"started\":"
				"\"2025-12-03T00:00:00Z\",\"ended\":null,\"good\":\"" B_GOOD "\",\"bad\":\"" B_BAD
				"\",\"culprits\":[],\"steps\":null,\"builds\":null,\"boots\":null}}"));
	T_CHECK(has(f.text, "\n  bisection  4: running\n"));
	T_CHECK(f.text && !strstr(f.text, "first bad commit "));
	T_CHECK(has(f.atom.buf, "<title>" B_TITLE "</title>"));
	T_CHECK(has(f.atom.buf, "; bisection 4: running</summary>"));
	T_CHECK(has(f.atom.buf, "<updated>2025-12-03T00:00:00Z</updated>\n    <link"));
	forms_free(&f);
	/* one that ended otherwise: its state and reason, the title as it was */
	b = bisection(5, 2, BISECT_FAILED, "step job 9 was cancelled by hand", NULL);
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.text, "\n  bisection  5: failed, step job 9 was cancelled by hand\n"));
	T_CHECK(has(f.atom.buf, "; bisection 5: failed, step job 9 was cancelled by hand</summary>"));
	T_CHECK(has(f.atom.buf, "<updated>2025-12-04T00:00:00Z</updated>\n    <link"));
	forms_free(&f);
}

/* A range (only skipped commits left), a split (two culprits), a culprit
 * that is not confirmed, and a report that is not the shape it should be. */
static void test_bisection_answers(void)
{
	struct store_regress g = confirmed_row(2);
	struct store_bisect b = bisection(6, 2, BISECT_DONE, "one of 3 commits (only skipped ones left)", rep_range);
	struct forms f;
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE ": first bad commit: one of 3 commits");
	T_CHECK(has(f.json.buf, "\"culprits\":[{\"answer\":\"range\",\"part\":0,\"n_candidates\":3,\"reason\":\"only skipped "
				"commits left\"}],\"steps\":3,"));
	T_CHECK(has(f.text, "\n  first bad commit: one of 3 commits: only skipped commits left\n"));
	T_CHECK(has(f.atom.buf, "; first bad commit: one of 3 commits (bisection 6: 3 steps"));
	forms_free(&f);

	b = bisection(7, 2, BISECT_DONE, "first bad commit 1a2b3c4d5e6f; first bad commit aabbccddeeff", rep_split);
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE ": first bad commit 1a2b3c4d5e6f \"mm, pcp: drain less\" +1 more");
	T_CHECK(has(f.json.buf, "\"pairs\":12}},{\"answer\":\"culprit\",\"part\":1,\"sha\":\"" B_SHA2 "\",\"subject\":\"mm: "
				"batch more\","));
	T_CHECK(has(f.text, "  first bad commit " B_SHA1 " \"mm, pcp: drain less\""));
	T_CHECK(has(f.text, "  first bad commit " B_SHA2 " \"mm: batch more\""));
	T_CHECK(has(f.text, "    against its parent 998877665544: +4.1% [+3.0, +5.2], 10 pairs, confirmed: reaching it\n"));
	T_CHECK(has(f.atom.buf, "<title>" B_TITLE ": first bad commit 1a2b3c4d5e6f &quot;mm, pcp: drain less&quot; +1 "
				"more</title>"));
	T_CHECK(has(f.atom.buf, "12 pairs, confirmed; first bad commit " B_SHA2));
	forms_free(&f);

	/* unconfirmed: shown, never in the title */
	b = bisection(8, 2, BISECT_DONE, "unconfirmed first bad commit 1a2b3c4d5e6f", rep_unconfirmed);
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.json.buf, "\"answer\":\"unconfirmed\""));
	T_CHECK(has(f.text, "  unconfirmed first bad commit " B_SHA1 " \"mm, pcp: drain less\""));
	T_CHECK(has(f.text, "3.0% [+1.2, +4.8], 20 pairs, unconfirmed: it explains a part of it only\n"));
	forms_free(&f);

	/* layout-sensitive: the title says so, not "first bad commit"; each
	 * control shown with its pairs, estimate [CI], decision and why */
	b = bisection(11, 2, BISECT_DONE, "layout-sensitive first bad commit 1a2b3c4d5e6f", rep_layout);
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE ": layout-sensitive, not a regression of commit 1a2b3c4d5e6f \"mm, pcp: drain less\"");
	T_CHECK(has(f.json.buf, "\"answer\":\"layout-sensitive\""));
	T_CHECK(has(f.json.buf, "\"controls\":{\"revert\":{\"decision\":\"confirmed\","));
	T_CHECK(has(f.json.buf, "\"note\":\"forced CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y\"}}"));
	T_CHECK(has(f.text, "  layout-sensitive (not a regression) first bad commit " B_SHA1));
	T_CHECK(has(f.text, "    reverted on BAD: +9.5% [+8.0, +11.0], 6 pairs, confirmed: the revert gives it back [commit 77 of kab's clone]\n"));
	T_CHECK(has(f.text, "    with forced alignment: +0.2% [-0.9, +1.3], 10 pairs, layout-sensitive: the effect vanishes [forced "));
	T_CHECK(has(f.atom.buf, "with forced alignment: +0.2% [-0.9, +1.3], 10 pairs, layout-sensitive"));
	T_CHECK(!has(f.title, "first bad commit"));
	forms_free(&f);

	/* members of other types, a report that is no JSON: unknown, no culprit */
	static const char odd[] = "{\"culprits\": [{\"answer\": 3, \"sha\": [], \"confirmation\": \"x\"}], \"builds\": \"many\"}";
	b = bisection(9, 2, BISECT_DONE, "", odd);
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.json.buf, "\"culprits\":[{\"answer\":null,\"part\":0,\"sha\":null,"));
	T_CHECK(has(f.json.buf, "\"steps\":0,\"builds\":0,\"boots\":0}"));
	forms_free(&f);
	b = bisection(10, 2, BISECT_DONE, "", "{\"culprits\": [");
	forms_of(&g, &b, &f);
	T_EQ_STR(f.title, B_TITLE);
	T_CHECK(has(f.json.buf, "\"culprits\":[],\"steps\":null"));
	forms_free(&f);
}

/* Subjects and authors come from git: a terminal is shown them, not
 * driven by them, and the feed stays XML. */
static void test_bisection_hostile(void)
{
	static const char rep[] = REPORT(CULPRIT("culprit", 0, B_SHA1, "mm: \\u001b]0;owned\\u0007 <b>&", B_PAR1, CONFIRMED));
	struct store_regress g = confirmed_row(2);
	struct store_bisect b = bisection(3, 2, BISECT_DONE, "first bad commit 1a2b3c4d5e6f", rep);
	struct forms f;
	forms_of(&g, &b, &f);
	T_CHECK(terminal_safe(f.text));
	T_CHECK(has(f.text, "\"mm: \\x1b]0;owned\\x07 <b>&\""));
	T_CHECK(xml_chars_ok(f.atom.buf));
	T_CHECK(has(f.atom.buf, "first bad commit 1a2b3c4d5e6f &quot;mm: ]0;owned &lt;b&gt;&amp;&quot;</title>"));
	forms_free(&f);
}

/* The store's side: the newest bisection of each regression of a range
 * of ids, and the API's list, one row, text and feed with it. */
static void test_bisection_store(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-regbis-XXXXXX", "KAB_UNIT_KEEP");
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	struct job *j = night("60");
	int64_t jid = 0, id = 0;
	T_EQ_INT(job_store_create(st, j, &jid), 0);
	job_free(j);
	/* regressions 1..3; 1 bisected twice (failed, then done), 2 running, 3 never */
	for (int i = 1; i <= 3; i++) {
		struct store_regress g = confirmed_row(0);
		snprintf(g.metric, sizeof(g.metric), "m%d", i);
		g.good_job = g.bad_job = jid;
		T_EQ_INT(store_regress_add(st, &g, &id), 0);
		struct store_regress c = confirmed_row(id);
		snprintf(c.metric, sizeof(c.metric), "m%d", i);
		T_EQ_INT(store_regress_settle(st, &c), 0);
	}
	int64_t b1 = 0, b2 = 0, b3 = 0;
	struct store_bisect b = bisection(0, 1, BISECT_RUNNING, "", NULL);
	b.source_job = jid;
	snprintf(b.tree, sizeof(b.tree), "/unit/linux");
	T_EQ_INT(store_bisect_add(st, &b, &b1), 0);
	T_EQ_INT(store_bisect_set_state(st, b1, BISECT_FROM(BISECT_RUNNING), BISECT_FAILED, "git: bad object", NULL), 0);
	T_EQ_INT(store_bisect_add(st, &b, &b2), 0);
	T_EQ_INT(store_bisect_set_state(st, b2, BISECT_FROM(BISECT_RUNNING), BISECT_DONE,
					"first bad commit 1a2b3c4d5e6f (3 steps, 4 builds, 52 boots)", rep_culprit),
		 0);
	b.regression = 2;
	T_EQ_INT(store_bisect_add(st, &b, &b3), 0);
	struct store_bisect *v = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_of_regressions(st, 1, 3, &v, &n), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_INT(v[0].id, b2); /* the newest of regression 1 */
		T_EQ_INT(v[0].regression, 1);
		T_EQ_INT(v[0].state, BISECT_DONE);
		T_CHECK(v[0].report && strstr(v[0].report, B_SHA1));
		T_EQ_INT(v[1].id, b3);
		T_EQ_INT(v[1].state, BISECT_RUNNING);
	}
	for (size_t i = 0; i < n; i++)
		store_bisect_clear(&v[i]);
	free(v);
	T_EQ_INT(store_bisect_of_regressions(st, 3, 3, &v, &n), 0);
	T_EQ_INT(n, 0);
	free(v);
	T_EQ_INT(store_bisect_of_regressions(st, 2, 2, &v, &n), 0);
	T_EQ_INT(n, 1);
	for (size_t i = 0; i < n; i++)
		store_bisect_clear(&v[i]);
	free(v);
	/* what kab regressions --db does */
	struct store_regress *rows = NULL;
	struct regress_bisections bs;
	T_EQ_INT(store_regress_list(st, &rows, &n), 0);
	T_EQ_INT(regress_bisections_load(st, rows, n, &bs), 0);
	T_EQ_INT(bs.n, 2);
	T_CHECK(regress_bisection_of(&bs, 1) && regress_bisection_of(&bs, 1)->id == b2);
	T_CHECK(regress_bisection_of(&bs, 3) == NULL);
	regress_bisections_free(&bs);
	free(rows);
	store_close(st);

	struct httpd_resp rs = { 0 };
	static const char *const none[] = { NULL };
	static const char *const text[] = { "format", "text", NULL };
	static const char *const atom[] = { "format", "atom", NULL };
	static const char *const page[] = { "limit", "1", "after", "3", NULL };
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, none, &rs), 200);
	T_CHECK(has(rs.body.buf, "{\"id\":3,"));
	T_CHECK(has(rs.body.buf, "m3 +29.9% regression\","));
	T_CHECK(has(rs.body.buf, "\"bisection\":null}"));
	T_CHECK(has(rs.body.buf, "m2 +29.9% regression\","));
	T_CHECK(has(rs.body.buf, "\"bisection\":{\"id\":3,\"state\":\"running\","));
	T_CHECK(has(rs.body.buf, "m1 +29.9% regression: first bad commit 1a2b3c4d5e6f \\\"mm, pcp: drain less\\\"\""));
	T_CHECK(has(rs.body.buf, "\"bisection\":{\"id\":2,\"state\":\"done\","));
	/* a page of one row finds its own */
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, page, &rs), 200);
	T_CHECK(has(rs.body.buf, "{\"regressions\":[{\"id\":2,"));
	T_CHECK(has(rs.body.buf, "\"bisection\":{\"id\":3,\"state\":\"running\","));
	T_EQ_INT(call(api_regression_get, path, "GET", 1, none, &rs), 200);
	T_CHECK(has(rs.body.buf, "\"bisection\":{\"id\":2,\"state\":\"done\","));
	T_CHECK(has(rs.body.buf, "\"steps\":3,\"builds\":4,\"boots\":52}}"));
	T_EQ_INT(call(api_regression_ack, path, "POST", 1, none, &rs), 200);
	T_CHECK(has(rs.body.buf, "\"acknowledged_by\":\"token\",\"auto_bisect\":null,\"bisection\":{\"id\":2,"));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, text, &rs), 200);
	T_CHECK(has(rs.body.buf, "\n  bisection  3: running\n"));
	T_CHECK(has(rs.body.buf, "\n  first bad commit " B_SHA1 " \"mm, pcp: drain less\""));
	T_EQ_INT(call(api_regressions_list, path, "GET", 0, atom, &rs), 200);
	T_CHECK(has(rs.body.buf, "m1 +29.9% regression: first bad commit 1a2b3c4d5e6f &quot;mm, pcp: drain less&quot;</title>"));
	T_CHECK(has(rs.body.buf, "; bisection 3: running</summary>"));
	sb_free(&rs.body);
	if (!getenv("KAB_UNIT_KEEP"))
		unlink(path);
}

static char *sql_text(const char *db, const char *q)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char *v = NULL;
	if (sqlite3_open(db, &h) == SQLITE_OK && sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v ? v : strdup("");
}

static bool sql_is(const char *db, const char *q, const char *want)
{
	char *v = sql_text(db, q);
	bool ok = strcmp(v, want) == 0;
	if (!ok)
		fprintf(stderr, "  %s\n  gave \"%s\", expected \"%s\"\n", q, v, want);
	free(v);
	return ok;
}

#define CAP_NIGHTS 12
#define CAP_BAD 6 /* the first bad night */

/* Twelve nights of a job with five compared variants and three workloads:
 * from night CAP_BAD on, w1 and w2 move by -2% in v1, -4% in v2, ... -10%
 * in v5; w3 never moves. The nights' rows go in as kabd's history keeps
 * them. Returns the last night's job. */
static int64_t seed_cap_nights(struct store *st, const char *db)
{
	static const char text[] = "[job]\nname = nightly-cap\npairs = 2\nprimary = cap.score\n[swap]\ndevice = none\n"
				   "[variant A]\nname = base\n[variant B]\nname = v1\n[variant C]\nname = v2\n"
				   "[variant D]\nname = v3\n[variant E]\nname = v4\n[variant F]\nname = v5\n"
				   "[workload w1]\ntype = command\ncommand = true\n"
				   "[workload w2]\ntype = command\ncommand = true\n"
				   "[workload w3]\ntype = command\ncommand = true\n";
	int64_t id = 0;
	struct strbuf q = { 0 };
	sb_puts(&q, "BEGIN;");
	for (int d = 0; d < CAP_NIGHTS; d++) {
		struct job *j = t_parse_job(text);
		T_CHECK(j && job_store_create(st, j, &id) == 0);
		job_free(j);
		T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), 0);
		T_EQ_INT(store_job_set_status(st, id, JOB_DONE, NULL), 0);
		double night = 1764547200.0 + d * 86400.0;
		sb_printf(&q, "UPDATE jobs SET started = %.0f WHERE id = %lld;", night, (long long)id);
		sb_printf(&q,
			  "INSERT INTO history_nights (job_id, name, night, status, runs, runs_failed, computed, kab_version,"
			  " schema_version) VALUES (%lld, 'nightly-cap', %.0f, 'done', 30, 0, %.0f, '0.1.0', 12);",
			  (long long)id, night, night + 3600);
		for (int v = 1; v <= 5; v++)
			for (int w = 1; w <= 3; w++) {
				double noise = 0.1 * (double)((d * 7 + v * 3 + w) % 5 - 2);
				double e = (w < 3 && d >= CAP_BAD ? -2.0 * v : 0) + noise;
				sb_printf(&q,
					  "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs,"
					  " estimate_pct, ci_lo_pct, ci_hi_pct, p, verdict, median_base, median_variant, unit,"
					  " direction, is_primary, rank, variant_name, base_name) VALUES (%lld, 'nightly-cap',"
					  " %.0f, 'w%d', 'cap.score', %d, 2, %.2f, %.2f, %.2f, 0.04, 'same', 100, %.2f, 'ops/s',"
					  " 'higher', 1, 0, 'v%d', 'base');",
					  (long long)id, night, w, v, e, e - 0.5, e + 0.5, 100 + e, v);
			}
	}
	sb_puts(&q, "COMMIT;");
	sqlite3 *h = NULL;
	T_EQ_INT(sqlite3_open(db, &h), SQLITE_OK);
	T_EQ_INT(sqlite3_exec(h, q.buf, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	sb_free(&q);
	return id;
}

/* What kabd does after the last night: one confirmation job per night
 * pair and compared variant, running w1 and w2 only, at most
 * NIGHTLY_CONFIRM_MAX_PER_NIGHT of them, the largest changes first; the
 * next night's pass queues the one that waited. The queue is kabd's own,
 * on a database of its own with nothing to run: the confirmations go to
 * the nights' database and nothing runs them. */
static void test_confirm_cap(void)
{
	char db[64], qdb[64];
	t_db_path(db, sizeof(db), "/tmp/kab-unit-cap-XXXXXX", "KAB_UNIT_KEEP");
	t_db_path(qdb, sizeof(qdb), "/tmp/kab-unit-capq-XXXXXX", NULL);
	struct store *st = NULL;
	struct queue *q = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	T_EQ_INT(queue_start(qdb, pthread_self(), &q), 0);
	if (!st || !q)
		goto out;
	int64_t last = seed_cap_nights(st, db);
	nightly_after_job(q, st, last);
	char want[64];
	snprintf(want, sizeof(want), "%u", NIGHTLY_CONFIRM_MAX_PER_NIGHT);
	T_CHECK(sql_is(db, "SELECT count(*) FROM jobs WHERE name LIKE 'nightly-cap.confirm-%'", want));
	/* each runs the two workloads that moved, none the one that did not */
	T_CHECK(sql_is(db,
		       "SELECT group_concat(w, ' ') FROM (SELECT DISTINCT (SELECT group_concat(name, ',') FROM"
		       " (SELECT name FROM workloads WHERE job_id = j.id ORDER BY idx)) AS w FROM jobs j"
		       " WHERE j.name LIKE 'nightly-cap.confirm-%')",
		       "w1,w2"));
	/* a row per change, two per confirmation, every one waiting on its job */
	snprintf(want, sizeof(want), "%u %u", 2 * NIGHTLY_CONFIRM_MAX_PER_NIGHT, NIGHTLY_CONFIRM_MAX_PER_NIGHT);
	T_CHECK(sql_is(db,
		       "SELECT count(*) || ' ' || count(DISTINCT confirm_job) FROM regressions"
		       " WHERE state = 'pending' AND confirm_job IS NOT NULL",
		       want));
	/* the largest first: v1 (-2%) waits */
	T_CHECK(sql_is(db, "SELECT group_concat(DISTINCT variant_idx) FROM (SELECT variant_idx FROM regressions ORDER BY variant_idx)",
		       "2,3,4,5"));
	T_CHECK(sql_is(db, "SELECT count(*) FROM regressions WHERE workload = 'w3'", "0"));
	char *bad = sql_text(db, "SELECT group_concat(DISTINCT bad_job) FROM regressions");
	snprintf(want, sizeof(want), "%lld", (long long)(last - (CAP_NIGHTS - 1 - CAP_BAD)));
	T_EQ_STR(bad, want);
	free(bad);
	/* the next night's pass: the one that waited, and nothing twice */
	nightly_after_job(q, st, last);
	snprintf(want, sizeof(want), "%u", NIGHTLY_CONFIRM_MAX_PER_NIGHT + 1);
	T_CHECK(sql_is(db, "SELECT count(*) FROM jobs WHERE name LIKE 'nightly-cap.confirm-%'", want));
	T_CHECK(sql_is(db, "SELECT count(*) FROM regressions WHERE variant_idx = 1 AND confirm_job IS NOT NULL", "2"));
	nightly_after_job(q, st, last);
	T_CHECK(sql_is(db, "SELECT count(*) FROM jobs WHERE name LIKE 'nightly-cap.confirm-%'", want));
out:
	queue_stop(q);
	store_close(st);
	if (!getenv("KAB_UNIT_KEEP"))
		unlink(db);
	unlink(qdb);
}

int main(void)
{
	log_quiet = true;
	test_confirmation_job();
	test_confirmation_workloads();
	test_confirmation_builds();
	test_group();
	test_confirmation_pins();
	test_store();
	test_render();
	test_settle();
	test_confirm_cap();
	test_api();
	test_api_pages();
	test_hostile();
	test_metrics_label();
	test_bisection_done();
	test_bisection_running();
	test_bisection_answers();
	test_bisection_hostile();
	test_bisection_store();
	return t_done("test_regress");
}
