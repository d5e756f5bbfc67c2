/* Adaptive looks: the executor reads the primary metrics' runs back from
 * the store (exec_adaptive_look), and stats, over arrays alone, stops only
 * when the statistics say so. */
#include "t.h"
#include "harness/stats/adaptive.h"
#include "harness/exec/exec_priv.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "db/store.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static const char job_text[] =
	"[job]\nname = adaptive\npairs = adaptive 5..20\nprimary = command.m\n"
	"[variant A]\nname = base\n"
	"[variant B]\nname = patched\n"
	"[workload w]\ntype = command\ncommand = true\n";

/* Stores, for the job of text, the workload's warm-up (cold: its value far
 * off, and never to be looked at) and then reps ok runs per (pair,
 * variant) with metric "command.m" = value(pair, variant, rep), in that
 * order. */
static int64_t fill(struct store *st, const char *text, unsigned pairs, int reps, double (*value)(unsigned, int, int))
{
	struct diags d = { 0 };
	struct job *j = NULL;
	int64_t id = 0;
	if (job_parse_string_nocheck("adaptive.job", text, &j, &d) < 0 || job_store_create(st, j, &id) < 0)
		return 0;
	diags_free(&d);
	int seq = 0;
	struct store_step warm = { .seq = seq++, .pair = STORE_PAIR_WARMUP, .boot = reps > 1 ? 0 : -1 };
	struct store_step *warm_loaded;
	size_t warm_n;
	store_steps_create(st, id, &warm, 1);
	store_steps_load(st, id, &warm_loaded, &warm_n);
	struct store_run wr = { .job_id = id, .step_id = warm_loaded[warm_n - 1].id, .pair = STORE_PAIR_WARMUP, .exit_code = 0 };
	free(warm_loaded);
	int64_t warm_id;
	store_run_begin(st, &wr, &warm_id);
	struct wl_metrics wm = { 0 };
	wl_metrics_add(&wm, "command.m", "ops/s", 1e6);
	wr.status = RUN_WARMUP;
	store_run_finish(st, &wr, STEP_FINISHED, wm.v, wm.n, NULL, 0);
	wl_metrics_free(&wm);
	for (unsigned p = 0; p < pairs; p++)
		for (int v = 0; v < 2; v++)
			for (int rep = 0; rep < reps; rep++) {
				struct store_step step = { .seq = seq++, .pair = (int)p, .variant = v,
							   .boot = reps > 1 ? (int)p * 2 + v : -1, .rep = rep };
				struct store_step *loaded;
				size_t n;
				store_steps_create(st, id, &step, 1);
				store_steps_load(st, id, &loaded, &n);
				struct store_run r = { .job_id = id, .step_id = loaded[n - 1].id, .pair = (int)p, .variant = v, .exit_code = 0 };
				free(loaded);
				int64_t run_id;
				store_run_begin(st, &r, &run_id);
				struct wl_metrics m = { 0 };
				wl_metrics_add(&m, "command.m", "ops/s", value(p, v, rep));
				r.status = RUN_OK;
				store_run_finish(st, &r, STEP_FINISHED, m.v, m.n, NULL, 0);
				wl_metrics_free(&m);
			}
	job_free(j);
	return id;
}

/* A fresh store in a directory of its own; drop() closes it and removes
 * its files. */
static struct store *fresh(char *path, size_t len)
{
	t_db_path(path, len, "/tmp/kab-adaptive-XXXXXX", NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	return st;
}

static void drop(struct store *st, const char *path)
{
	store_close(st);
	unlink(path);
	char aux[80];
	snprintf(aux, sizeof(aux), "%s-wal", path);
	unlink(aux);
	snprintf(aux, sizeof(aux), "%s-shm", path);
	unlink(aux);
}

/* distinct values around 100 (no tied differences, so the exact test
 * applies), B 5% higher */
static double shifted(unsigned p, int v, int rep) { return (100.0 + (double)p * 0.37) * (v ? 1.05 : 1.0); }
static double identical(unsigned p, int v, int rep) { return 100.0; }

static struct job *parse(const char *text)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_string_nocheck("adaptive.job", text, &j, &d) < 0)
		diags_print(&d, stderr);
	diags_free(&d);
	return j;
}

static void run(const char *name, double (*value)(unsigned, int, int), unsigned pairs, unsigned look, enum stats_stop want)
{
	char path[64];
	struct store *st = fresh(path, sizeof(path));
	int64_t id = fill(st, job_text, pairs, 1, value);
	T_CHECK(id > 0);
	struct job *j = parse(job_text);
	T_CHECK(j != NULL);
	if (!j)
		return;
	T_EQ_INT(job_looks(j), 4);
	enum stats_stop got = STATS_CONTINUE;
	T_EQ_INT(exec_adaptive_look(st, j, id, 0, pairs, look, 4, &got), 0);
	if (got != want)
		fprintf(stderr, "%s: stop %d, expected %d\n", name, (int)got, (int)want);
	T_EQ_INT(got, want);
	job_free(j);
	/* a primary metric nobody recorded never stops a workload */
	j = parse("[job]\nname = a\npairs = adaptive 5..20\nprimary = command.nope\n[variant A]\n[variant B]\n"
		  "[workload w]\ntype = command\ncommand = true\n");
	T_CHECK(j != NULL);
	if (j) {
		T_EQ_INT(exec_adaptive_look(st, j, id, 0, pairs, look, 4, &got), 0);
		T_EQ_INT(got, STATS_CONTINUE);
		job_free(j);
	}
	drop(st, path);
}

/* A job that boots kernels with 3 runs a boot: each (pair, variant) has
 * runs 5% apart in B's favour twice and once equal to A's (stored last).
 * The look takes each boot's median, as the report does, and decides;
 * the last run alone would say the variants are the same. */
static const char boots_text[] =
	"[job]\nname = adaptive-boots\npairs = adaptive 5..20\nruns_per_boot = 3\nprimary = command.m\nswitch = reboot\n"
	"[variant A]\nname = base\nkernel = image\nimage = /boot/a\n"
	"[variant B]\nname = patched\nkernel = image\nimage = /boot/b\n"
	"[workload w]\ntype = command\ncommand = true\n";

/* B 5% above A in runs 0 and 1 of a boot, equal to A in run 2 */
static double last_equal(unsigned p, int v, int rep) { return shifted(p, rep == 2 ? 0 : v, rep); }

static void run_boots(void)
{
	char path[64];
	struct store *st = fresh(path, sizeof(path));
	const unsigned pairs = 10;
	int64_t id = fill(st, boots_text, pairs, 3, last_equal);
	T_CHECK(id > 0);
	struct job *j = parse(boots_text);
	T_CHECK(j != NULL && job_boots_kernels(j));
	enum stats_stop got = STATS_CONTINUE;
	if (j)
		T_EQ_INT(exec_adaptive_look(st, j, id, 0, pairs, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_STOP_DECIDED);
	job_free(j);
	drop(st, path);
}

/* stats alone, no store: the arrays decide as the stored runs do */
static void arrays(void)
{
	enum { PAIRS = 10 };
	double v[2 * PAIRS], same[2 * PAIRS];
	for (unsigned p = 0; p < PAIRS; p++)
		for (int var = 0; var < 2; var++) {
			v[var * PAIRS + p] = shifted(p, var, 0);
			same[var * PAIRS + p] = identical(p, var, 0);
		}
	struct adaptive_metric m[2] = { { .v = v, .min_change_pct = -1, .equivalence_pct = -1 },
					{ .v = same, .min_change_pct = -1, .equivalence_pct = -1 } };
	enum stats_stop got = STATS_STOP_SAME;
	T_EQ_INT(adaptive_decide(m, 1, 2, PAIRS, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_STOP_DECIDED);
	T_EQ_INT(adaptive_decide(m + 1, 1, 2, PAIRS, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_STOP_SAME);
	/* every metric must be settled: one decided, one same stops */
	T_EQ_INT(adaptive_decide(m, 2, 2, PAIRS, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_STOP_DECIDED);
	/* the first look is too early for 5 pairs */
	double five[2 * 5];
	for (unsigned p = 0; p < 5; p++)
		for (int var = 0; var < 2; var++)
			five[var * 5 + p] = shifted(p, var, 0);
	struct adaptive_metric m5 = { .v = five, .min_change_pct = -1, .equivalence_pct = -1 };
	T_EQ_INT(adaptive_decide(&m5, 1, 2, 5, 1, 4, &got), 0);
	T_EQ_INT(got, STATS_CONTINUE);
	/* nothing to compare */
	T_EQ_INT(adaptive_decide(m, 0, 2, PAIRS, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_CONTINUE);
	T_EQ_INT(adaptive_decide(m, 1, 1, PAIRS, 2, 4, &got), 0);
	T_EQ_INT(got, STATS_CONTINUE);

	/* a boot's runs: their median; a cell without runs: NAN */
	double runs[3 * 3] = { 5, 1, 3, 7, 0, 0, 0, 0, 0 };
	unsigned n_runs[3] = { 3, 1, 0 };
	double med[3];
	T_EQ_INT(adaptive_boot_medians(runs, n_runs, 3, 3, med), 0);
	T_CHECK(med[0] == 3);
	T_CHECK(med[1] == 7);
	T_CHECK(isnan(med[2]));
}

int main(void)
{
	log_quiet = true;
	arrays();
	/* 5 pairs: the exact test cannot pass the first O'Brien-Fleming bound */
	run("5 shifted pairs", shifted, 5, 1, STATS_CONTINUE);
	/* 10 pairs all 5% higher: decided at the second look */
	run("10 shifted pairs", shifted, 10, 2, STATS_STOP_DECIDED);
	/* identical variants: the CI is [0, 0], inside the threshold */
	run("10 identical pairs", identical, 10, 2, STATS_STOP_SAME);
	/* 3 runs a boot: the look takes each boot's median */
	run_boots();
	return t_done("adaptive");
}
