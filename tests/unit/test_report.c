/* Reports: number formatting (the seed's Delta column), JSON and CSV
 * helpers, the metric table, the job's metric settings, and the model
 * end to end from a temporary store, including the bad cases (no runs, a
 * single run, every run failed, a metric in one variant only). */
#include "t_job.h"
#include "t_report.h"
#include "t_config.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/base/json.h"
#include "harness/report/metrics.h"
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "db/store.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static char buf[512];

static const char *delta(double abs, double pct, int dec, enum direction dir)
{
	report_fmt_delta(abs, pct, dec, dir, buf, sizeof(buf));
	return buf;
}

static void test_seed_delta(void)
{
	/* seed 000, as posted: '+' on improvements and neutral rises, none on a
	 * rise that is a regression */
	T_EQ_STR(delta(35833.97 - 28238.63, 100 * 7595.34 / 28238.63, 2, DIRECTION_HIGHER), "+7595.34 (+26.9%)");
	T_EQ_STR(delta(17621697.0 - 55428953.0, -68.208, 0, DIRECTION_LOWER), "-37807256 (-68.2%)");
	T_EQ_STR(delta(14498768.0 - 34073695.0, -57.449, 0, DIRECTION_LOWER), "-19574927 (-57.4%)");
	T_EQ_STR(delta(60252894.0 - 52856224.0, 13.994, 0, DIRECTION_LOWER), "7396670 (+14.0%)");
	T_EQ_STR(delta(34054753.0 - 29004962.0, 17.41, 0, DIRECTION_LOWER), "5049791 (+17.4%)");
	T_EQ_STR(delta(5, 1.5, 0, DIRECTION_NEUTRAL), "+5 (+1.5%)");
	T_EQ_STR(delta(-5, -1.5, 0, DIRECTION_HIGHER), "-5 (-1.5%)");
	T_EQ_STR(delta(0.001, 0.01, 2, DIRECTION_HIGHER), "0.00 (0.0%)");
	T_EQ_STR(delta(-0.001, -0.04, 2, DIRECTION_HIGHER), "0.00 (0.0%)");
	T_EQ_STR(delta(3047, NAN, 0, DIRECTION_NEUTRAL), "+3047 (n/a)");
	T_EQ_STR(delta(NAN, NAN, 0, DIRECTION_NEUTRAL), "-");
}

static void test_numbers(void)
{
	report_fmt_num(28238.634, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "28238.63");
	report_fmt_num(55428953.4, 0, buf, sizeof(buf));
	T_EQ_STR(buf, "55428953");
	report_fmt_num(-0.0001, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "0.00");
	report_fmt_num(NAN, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "-");
	report_fmt_num(INFINITY, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "-");
	report_fmt_num(1.5, 99, buf, sizeof(buf));
	T_EQ_STR(buf, "1.500000");
	report_fmt_pct(26.897, buf, sizeof(buf));
	T_EQ_STR(buf, "+26.9%");
	report_fmt_pct(-0.04, buf, sizeof(buf));
	T_EQ_STR(buf, "0.0%");
	report_fmt_ci(25.06, 28.64, buf, sizeof(buf));
	T_EQ_STR(buf, "[+25.1, +28.6]");
	report_fmt_ci(-0.04, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "[+0.0, +2.0]");
	report_fmt_ci(NAN, 2, buf, sizeof(buf));
	T_EQ_STR(buf, "-");
	report_fmt_p(0.001953125, buf, sizeof(buf));
	T_EQ_STR(buf, "0.002");
	report_fmt_p(0.0004, buf, sizeof(buf));
	T_EQ_STR(buf, "<0.001");
	report_fmt_p(1, buf, sizeof(buf));
	T_EQ_STR(buf, "1.000");
	report_fmt_p(NAN, buf, sizeof(buf));
	T_EQ_STR(buf, "-");

	T_EQ_INT(report_decimals_text("28238.63"), 2);
	T_EQ_INT(report_decimals_text("55428953"), 0);
	T_EQ_INT(report_decimals_text("-3.500"), 3);
	T_EQ_INT(report_decimals_text("1.5e3"), 0);
	T_EQ_INT(report_decimals_text("1.25e1"), 1);
	T_EQ_INT(report_decimals_text("1e-3"), 3);
	T_EQ_INT(report_decimals_text("1.123456789"), REPORT_DECIMALS_MAX);
	T_EQ_INT(report_decimals_text("5e-999999999999"), REPORT_DECIMALS_MAX);

	double whole[] = { 1, 2, NAN, 3e9 }, rates[] = { 28238.63, 35833.97 }, small[] = { 0.0123, 0.5 };
	double none[] = { NAN, NAN };
	T_EQ_INT(report_decimals_auto(whole, 4), 0);
	T_EQ_INT(report_decimals_auto(rates, 2), 2);
	T_EQ_INT(report_decimals_auto(small, 2), 4);
	T_EQ_INT(report_decimals_auto(none, 2), 0);
}

static void test_json_csv(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	jw_dump_file(f, jw_str("a\"b\\c\n\x01"), 0);
	fputc(' ', f);
	report_csv_field(f, "plain");
	fputc(' ', f);
	report_csv_field(f, "latency, \"p95\"");
	fclose(f);
	T_EQ_STR(text, "\"a\\\"b\\\\c\\n\\u0001\" plain \"latency, \"\"p95\"\"\"");
	free(text);
}

static void test_locale(void)
{
	setenv("LC_ALL", "", 1);
	setenv("LC_CTYPE", "", 1);
	setenv("LANG", "en_US.UTF-8", 1);
	t_config_from_env();
	T_CHECK(report_utf8_locale());
	setenv("LANG", "de_DE.utf8", 1);
	t_config_from_env();
	T_CHECK(report_utf8_locale());
	setenv("LC_CTYPE", "C", 1);
	t_config_from_env();
	T_CHECK(!report_utf8_locale());
	setenv("LC_ALL", "C.UTF-8", 1);
	t_config_from_env();
	T_CHECK(report_utf8_locale());
	unsetenv("LC_ALL");
	unsetenv("LC_CTYPE");
	unsetenv("LANG");
	t_config_from_env();
	T_CHECK(!report_utf8_locale());
	T_EQ_STR(report_dir_arrow(DIRECTION_HIGHER, false), "^");
	T_EQ_STR(report_dir_arrow(DIRECTION_LOWER, false), "v");
	T_EQ_STR(report_dir_arrow(DIRECTION_NEUTRAL, false), ".");
	T_EQ_STR(report_dir_arrow(DIRECTION_HIGHER, true), "\xe2\x86\x91");
	T_EQ_INT(report_width("\xe2\x86\x91 up"), 4);
	T_EQ_INT(report_width("95% CI of \xce\x94%"), 12);
	enum report_format fmt;
	T_EQ_INT(report_format_parse("cover-letter", &fmt), 0);
	T_EQ_INT(fmt, REPORT_COVER_LETTER);
	T_EQ_INT(report_format_parse("yaml", &fmt), -EINVAL);
}

static void test_metric_table(void)
{
	struct metric_info m;
	metrics_describe("stress-ng.bogo_ops_per_s", "ops/s", &m);
	T_EQ_STR(m.label, "bogo ops/s");
	T_EQ_INT(m.dir, DIRECTION_HIGHER);
	T_CHECK(m.known);
	metrics_describe("interrupts.TLB", "interrupts", &m);
	T_EQ_STR(m.label, "TLB shootdowns");
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("interrupts.CAL", NULL, &m);
	T_EQ_STR(m.label, "Function call IPIs");
	metrics_describe("vmstat.pgscan_anon", "events", &m);
	T_EQ_STR(m.label, "pgscan_anon (pages)");
	T_EQ_STR(m.unit, "pages");
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("vmstat.pgsteal_direct", "events", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("vmstat.zswpwb", "events", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("vmstat.nr_tlb_remote_flush", "events", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	T_EQ_STR(m.label, "nr_tlb_remote_flush");
	metrics_describe("memcg.oom_kills", "kills", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("stress-ng.vm.bogo_ops_per_s", "ops/s", &m);
	T_EQ_INT(m.dir, DIRECTION_HIGHER);
	metrics_describe("vmstat.pgfault", "events", &m);
	T_EQ_INT(m.dir, DIRECTION_NEUTRAL);
	T_CHECK(!m.known);
	metrics_describe("interrupts.NMI", "interrupts", &m);
	T_EQ_STR(m.label, "NMI interrupts");
	T_EQ_INT(m.dir, DIRECTION_NEUTRAL);
	/* guessed from unit and name */
	metrics_describe("command.latency", "ms", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	T_EQ_STR(m.label, "latency (ms)");
	metrics_describe("transactions/s", NULL, &m);
	T_EQ_INT(m.dir, DIRECTION_HIGHER);
	T_EQ_STR(m.label, "transactions/s");
	metrics_describe("p95 latency (ms)", "", &m);
	T_EQ_INT(m.dir, DIRECTION_LOWER);
	metrics_describe("command.qps", "", &m);
	T_EQ_INT(m.dir, DIRECTION_HIGHER);
	metrics_describe("command.score", "points", &m);
	T_EQ_INT(m.dir, DIRECTION_NEUTRAL);
	T_CHECK(util_glob("psi.*avg*", "psi.memory.some_avg10"));
	T_CHECK(!util_glob("vmstat.pgscan_*", "vmstat.pgsteal_anon"));
	T_CHECK(util_glob("a*", "a"));
	T_CHECK(!util_glob("a", "ab"));
}


static void test_job_settings(void)
{
	struct job *j = t_parse_job("[job]\nname = s\npairs = adaptive 5..20\nprimary = stress-ng.bogo_ops_per_s vmstat.pgscan_*\n"
				    "[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n"
				    "[metric vmstat.*]\ndirection = neutral\nunit = pg\n"
				    "[metric vmstat.pgscan_*]\nmin_change = 3%\nepsilon = 4%\n"
				    "[metric vmstat.pgscan_anon]\nlabel = anon scans\ndirection = lower\n");
	T_CHECK(j != NULL);
	if (!j)
		return;
	T_CHECK(j->adaptive.on);
	T_EQ_INT(j->pairs, 20);
	T_EQ_INT(job_looks(j), 4);
	T_EQ_INT(job_look_pairs(j, 1), 5);
	T_EQ_INT(job_look_pairs(j, 4), 20);
	T_EQ_INT(job_look_pairs(j, 9), 20);
	struct job_metric m;
	job_metric_settings(j, "vmstat.pgscan_anon", &m);
	T_EQ_INT(m.direction, DIRECTION_LOWER);
	T_EQ_STR(m.unit, "pg");
	T_EQ_STR(m.label, "anon scans");
	T_NEAR(m.min_change_pct, 3, 1e-9);
	T_NEAR(m.equivalence_pct, 4, 1e-9); /* epsilon, the older name of equivalence */
	job_metric_settings(j, "vmstat.pgscan_file", &m);
	T_EQ_INT(m.direction, DIRECTION_NEUTRAL);
	T_CHECK(m.label == NULL);
	job_metric_settings(j, "interrupts.TLB", &m);
	T_EQ_INT(m.direction, DIRECTION_UNSET);
	T_CHECK(m.min_change_pct < 0 && m.equivalence_pct < 0);
	T_CHECK(job_metric_is_primary(j, "vmstat.pgscan_file"));
	T_CHECK(!job_metric_is_primary(j, "vmstat.pgsteal_anon"));
	job_free(j);
	j = t_parse_job("[job]\nname = s\npairs = 7\n[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n");
	if (j) {
		T_EQ_INT(job_looks(j), 1);
		T_EQ_INT(job_look_pairs(j, 1), 7);
		job_free(j);
	}
}


/* Every format renders; JSON has null where a number is missing and no NaN. */
static void render_all(const struct report *r, const char *must_have)
{
	for (int fmt = REPORT_TEXT; fmt <= REPORT_CSV; fmt++) {
		char *text = t_render(r, (enum report_format)fmt);
		T_CHECK(text && *text);
		if (text && fmt == REPORT_JSON) {
			T_CHECK(!strstr(text, "nan") && !strstr(text, "NaN") && !strstr(text, "inf"));
			T_CHECK(strstr(text, "\"schema\": 1") != NULL);
		}
		if (text && fmt == REPORT_TEXT && must_have && !strstr(text, must_have)) {
			T_CHECK(!"text report lacks an expected string");
			fprintf(stderr, "expected \"%s\" in:\n%s", must_have, text);
		}
		free(text);
	}
}

static void test_model_edges(void)
{
	char *names[] = { "A", "B" };
	struct report *r;
	T_EQ_INT(report_new("edges", names, 2, &r), 0);
	struct report_workload *w;
	T_EQ_INT(report_add_workload(r, "empty", 0, &w), 0);
	T_EQ_INT(report_add_workload(r, "w", 3, &w), 0);
	struct report_metric *m;
	/* a single run */
	T_EQ_INT(report_add_metric(r, w, "time.wall_s", "s", &m), 0);
	m->values[0] = 1.5;
	/* in one variant only */
	T_EQ_INT(report_add_metric(r, w, "vmstat.zswpwb", "events", &m), 0);
	m->values[3] = 10;
	m->values[4] = 12;
	/* nothing at all */
	T_EQ_INT(report_add_metric(r, w, "vmstat.pswpin", "events", &m), 0);
	/* zeros on both sides */
	T_EQ_INT(report_add_metric(r, w, "memcg.oom_kills", "kills", &m), 0);
	for (int i = 0; i < 6; i++)
		m->values[i] = 0;
	T_CHECK(report_find_metric(w, "vmstat.zswpwb") != NULL);
	T_CHECK(report_find_metric(w, "vmstat.nope") == NULL);
	T_EQ_INT(report_analyze(r), 0);
	T_EQ_INT(w->m[1].cmp[1].verdict, STATS_VERDICT_NONE);
	T_EQ_INT(w->m[1].desc[0].n, 0);
	T_EQ_INT(w->m[1].desc[1].n, 2);
	render_all(r, "In one variant only: time.wall_s, vmstat.zswpwb");
	char *json = t_render(r, REPORT_JSON);
	T_CHECK(json && strstr(json, "\"values\": [1.5, null, null]"));
	T_CHECK(json && strstr(json, "\"mean\": null"));
	free(json);
	char *text = t_render(r, REPORT_TEXT);
	T_CHECK(text && strstr(text, "(no metrics recorded)"));
	free(text);
	report_free(r);
}

/* Rule 6: the BH family holds only the metrics that could reach p < 0.05.
 * 6 pairs: a counter 655364 -> 0 in every pair (the permutation test's
 * 2/924), ten counters zero in every run, one constant one and a timing
 * with two tied pairs (left out), and 3 noisy timings (in). */
static void test_family(void)
{
	char *names[] = { "off", "on" };
	struct report *r;
	T_EQ_INT(report_new("family", names, 2, &r), 0);
	struct report_workload *w;
	T_EQ_INT(report_add_workload(r, "w", 6, &w), 0);
	struct report_metric *m;
	T_EQ_INT(report_add_metric(r, w, "vmstat.pswpout", "pages", &m), 0);
	for (int p = 0; p < 6; p++) {
		m->values[p] = 655364;
		m->values[6 + p] = 0;
	}
	for (int k = 0; k < 10; k++) {
		char name[32];
		snprintf(name, sizeof(name), "vmstat.zero%d", k);
		T_EQ_INT(report_add_metric(r, w, name, "pages", &m), 0);
		for (int i = 0; i < 12; i++)
			m->values[i] = 0;
	}
	T_EQ_INT(report_add_metric(r, w, "pageout.reps", "", &m), 0);
	for (int i = 0; i < 12; i++)
		m->values[i] = 10;
	/* three timings whose 6 pairs all differ, and one whose pairs 2 and 5
	 * are equal: 4 non-zero differences cannot give p below 2/16 (out) */
	static const double t[4][12] = {
		{ 100, 103, 98, 101, 99, 102, 101, 99, 100, 104, 97, 100 },
		{ 50, 51, 49, 52, 50, 48, 49.5, 51.3, 52.1, 50.4, 50.2, 49.1 },
		{ 7, 7.2, 6.9, 7.1, 7, 6.8, 7.05, 7.11, 6.93, 7.22, 7.04, 6.87 },
		{ 50, 51, 49, 52, 50, 48, 49, 51, 52, 50, 50, 49 },
	};
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof(name), "command.t%d", k);
		T_EQ_INT(report_add_metric(r, w, name, "ms", &m), 0);
		memcpy(m->values, t[k], sizeof(t[k]));
	}
	T_EQ_INT(report_analyze(r), 0);
	T_EQ_INT(w->family[1], 4);
	T_EQ_INT(w->holm[1], 0);
	const struct stats_result *c = &w->m[0].cmp[1];
	T_EQ_INT(c->test, STATS_TEST_PERMUTATION_EXACT);
	T_NEAR(c->p_value, 2.0 / 924, 1e-12);
	T_CHECK(c->q_value < 0.01);
	T_EQ_INT(c->verdict, STATS_VERDICT_BETTER);
	/* left out: no q, and "same" (a constant at 6 pairs) */
	T_CHECK(isnan(w->m[1].cmp[1].q_value));
	T_EQ_INT(w->m[1].cmp[1].verdict, STATS_VERDICT_SAME);
	T_CHECK(isnan(w->m[11].cmp[1].q_value));
	T_CHECK(isnan(w->m[15].cmp[1].q_value));
	T_CHECK(!isnan(w->m[12].cmp[1].q_value));
	char *text = t_render(r, REPORT_TEXT);
	T_CHECK(text && strstr(text, "q: Benjamini-Hochberg over the 4 metrics that could reach p < 0.05"));
	char *json = t_render(r, REPORT_JSON);
	T_CHECK(json && strstr(json, "\"bh_family\": 4"));
	T_CHECK(json && strstr(json, "\"test\": \"permutation-runs-exact\""));
	free(text);
	free(json);
	report_free(r);
}

/* A store with one job: workload "vm" has 6 pairs (one run oom-killed),
 * workload "dead" fails every run, workload "never" never ran. */
static const char store_job[] =
	"[job]\nname = unit-report\npairs = 6\nprimary = stress-ng.bogo_ops_per_s\nmetrics = vmstat.zswpwb vmstat.pswpin\n"
		"[swap]\ndevice = none\n"
		"[variant A]\nname = base\n[variant B]\nname = patched\n"
		"[workload vm]\ntype = stress-ng\nargs = --vm 4 --vm-bytes 1G --timeout 10s\nmemory.max = 128M\n"
		"[workload dead]\ntype = command\ncommand = false\n"
		"[workload never]\ntype = command\ncommand = true\n"
	"[metric vmstat.pgscan_anon]\ndirection = neutral\n";

/* A warm-up step's run as the executor records it: status warmup whatever
 * its outcome, the outcome in its reason. */
static bool warmup_run(const struct store_step *step, struct store_run *run, const char *outcome)
{
	if (step->pair != STORE_PAIR_WARMUP)
		return false;
	run->status = RUN_WARMUP;
	snprintf(run->reason, sizeof(run->reason), "warm-up before the first pair, not counted (%s)", outcome);
	return true;
}

static int make_store(const char *path, const char *text, int64_t *ret_id)
{
	struct store *st;
	struct job *j = t_parse_job(text);
	if (!j || store_open(path, &st) < 0)
		return -EINVAL;
	int64_t id;
	struct store_step *steps;
	size_t n;
	int r = job_store_create(st, j, &id);
	if (r == 0)
		r = exec_plan(j, &steps, &n);
	if (r == 0) {
		r = store_steps_create(st, id, steps, n);
		free(steps);
		steps = NULL;
		if (r == 0)
			r = store_steps_load(st, id, &steps, &n);
		for (size_t i = 0; r == 0 && i < n; i++) {
			if (steps[i].workload == 2)
				continue;
			struct store_run run = { .job_id = id, .step_id = steps[i].id, .pair = steps[i].pair,
						 .variant = steps[i].variant, .workload = steps[i].workload,
						 .exit_code = 0, .cpus = 8, .cgroup_version = 2,
						 .mem_total = 16ull << 30, .swap_total = 4ull << 30 };
			snprintf(run.kernel_release, sizeof(run.kernel_release), "6.1.0-unit");
			snprintf(run.swap_devices, sizeof(run.swap_devices), "/dev/zram0");
			int64_t rid;
			if ((r = store_run_begin(st, &run, &rid)) < 0)
				break;
			run.id = rid;
			run.started = 1000.0 + (double)i * 20;
			run.finished = run.started + 10.5;
			bool oom = steps[i].workload == 0 && steps[i].pair == 2 && steps[i].variant == 1;
			const char *status = steps[i].workload == 1 ? "failed" : oom ? "oom-killed" : "ok";
			T_EQ_INT(run_status_parse(status, &run.status), 0);
			if (strcmp(status, "ok") != 0)
				snprintf(run.reason, sizeof(run.reason), "%s", oom ? "memcg OOM kill" : "exit code 1");
			/* a cold warm-up: far off the others, where a count of it would show */
			bool warm = warmup_run(&steps[i], &run, steps[i].workload == 1 ? "failed: exit code 1" : "ok");
			struct wl_metrics m = { 0 };
			double p = steps[i].pair, b = steps[i].variant;
			wl_metrics_add(&m, "stress-ng.bogo_ops_per_s", "ops/s",
				       warm ? 1e6 : 1000 + 7 * p + 80 * b + (p == 3 ? 2 : 0));
			wl_metrics_add(&m, "vmstat.pgscan_anon", "events", warm ? 9e9 : 50000 + 100 * p + 5000 * b);
			wl_metrics_add(&m, "vmstat.pswpin", "events", 0);
			wl_metrics_add(&m, "vmstat.pgfault", "events", 12345); /* not in the report */
			if (b == 1)
				wl_metrics_add(&m, "vmstat.zswpwb", "events", 700 + p);
			r = store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0);
			wl_metrics_free(&m);
		}
		free(steps);
	}
	if (r == 0)
		r = store_progress_set(st, id, 0, 1, 6, "budget");
	store_close(st);
	job_free(j);
	*ret_id = id;
	return r;
}

/* OOM kills: workload "vm" (oom refused) has 5 of 6 zswap-off runs and 1
 * of 6 zswap-on runs oom-contaminated; workload "tol" (oom = tolerate)
 * counts all its runs, 3 of them with kills. */
static int make_oom_store(const char *path, int64_t *ret_id)
{
	static const char text[] =
		"[job]\nname = unit-oom\npairs = 6\nprimary = stress-ng.bogo_ops_per_s\n"
		"[swap]\ndevice = none\n"
		"[variant A]\nname = zswap-off\n[variant B]\nname = zswap-on\n"
		"[workload vm]\ntype = stress-ng\nargs = --vm 2 --vm-bytes 1G --timeout 10s\nmemory.max = 256M\n"
		"[workload tol]\ntype = stress-ng\nargs = --vm 2 --vm-bytes 1G --timeout 10s\nmemory.max = 256M\n"
		"oom = tolerate\n";
	struct store *st;
	struct job *j = t_parse_job(text);
	if (!j || store_open(path, &st) < 0)
		return -EINVAL;
	int64_t id;
	struct store_step *steps;
	size_t n;
	int r = job_store_create(st, j, &id);
	if (r == 0)
		r = exec_plan(j, &steps, &n);
	if (r == 0) {
		r = store_steps_create(st, id, steps, n);
		free(steps);
		steps = NULL;
		if (r == 0)
			r = store_steps_load(st, id, &steps, &n);
		for (size_t i = 0; r == 0 && i < n; i++) {
			struct store_run run = { .job_id = id, .step_id = steps[i].id, .pair = steps[i].pair,
						 .variant = steps[i].variant, .workload = steps[i].workload, .cpus = 2,
						 .cgroup_version = 1, .mem_total = 24ull << 30 };
			int64_t rid;
			if ((r = store_run_begin(st, &run, &rid)) < 0)
				break;
			run.id = rid;
			run.started = 1000.0 + (double)i * 20;
			run.finished = run.started + 10.5;
			int p = steps[i].pair, v = steps[i].variant;
			bool kills = steps[i].workload == 0 ? (v == 0 ? p < 5 : p == 0) : p % 2 == 0 && v == 0;
			bool contaminated = kills && steps[i].workload == 0;
			run.status = contaminated ? RUN_OOM_CONTAMINATED : RUN_OK;
			if (contaminated)
				snprintf(run.reason, sizeof(run.reason),
					 "memcg OOM killer killed 4 process(es) during the run; oom = tolerate counts such runs");
			/* the warm-ups had kills too: neither the warning nor the
			 * tolerated count may count them */
			kills = warmup_run(&steps[i], &run, "oom-contaminated") || kills;
			struct wl_metrics m = { 0 };
			wl_metrics_add(&m, "stress-ng.bogo_ops_per_s", "ops/s", 1000 + 7 * p + 80 * v);
			wl_metrics_add(&m, "memcg.oom_kills", "kills", kills ? 4 : 0);
			r = store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0);
			wl_metrics_free(&m);
		}
		free(steps);
	}
	store_close(st);
	job_free(j);
	*ret_id = id;
	return r;
}

static void test_oom_report(void)
{
	char path[256];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-oom-XXXXXX", "TEST_OOM_DB");
	int64_t id = 0;
	T_EQ_INT(make_oom_store(path, &id), 0);
	struct store *st;
	if (store_open(path, &st) < 0) {
		T_CHECK(!"store_open");
		return;
	}
	struct report *r;
	T_EQ_INT(report_load(st, id, &r), 0);
	T_EQ_INT(r->w[0].runs[0 * RUN_STATUS_N + RUN_OOM_CONTAMINATED], 5);
	T_EQ_INT(r->w[0].runs[1 * RUN_STATUS_N + RUN_OOM_CONTAMINATED], 1);
	T_EQ_INT(r->w[0].runs[0 * RUN_STATUS_N + RUN_OK], 1);
	T_CHECK(!r->w[0].oom_tolerate);
	T_CHECK(r->w[1].oom_tolerate);
	T_EQ_INT(r->w[1].oom_counted, 3);
	T_EQ_INT(r->w[0].runs[0 * RUN_STATUS_N + RUN_WARMUP], 1);
	T_EQ_INT(r->n_notes, 8); /* 6 oom-contaminated, 2 warm-ups */
	/* only zswap-off is over a third */
	T_EQ_INT(r->n_warnings, 1);
	const char *warning = "WARNING: workload vm: 5 of 6 runs of zswap-off had memcg OOM kills and are not counted: "
			      "lower the workload's footprint or raise memory.max";
	if (r->n_warnings == 1)
		T_EQ_STR(r->warnings[0], warning);
	T_EQ_INT(report_analyze(r), 0);
	T_EQ_INT(r->w[0].m[0].desc[0].n, 1); /* zswap-off: the one run without kills */
	T_EQ_INT(r->w[0].m[0].desc[1].n, 5);
	const char *tolerated = "oom = tolerate: 3 of 12 counted runs had memcg OOM kills";
	char *text = t_render(r, REPORT_TEXT);
	T_CHECK(text && strstr(text, warning) && strstr(text, warning) < strstr(text, "== workload"));
	T_CHECK(text && strstr(text, tolerated));
	T_CHECK(text && strstr(text, "Runs: zswap-off 1 ok 5 oom-contaminated 1 warmup; zswap-on 5 ok 1 oom-contaminated\n"));
	T_CHECK(text && strstr(text, "oom-contaminated: memcg OOM killer killed 4 process(es) during the run; "
				     "oom = tolerate counts such runs"));
	free(text);
	char *md = t_render(r, REPORT_MARKDOWN);
	T_CHECK(md && strstr(md, warning) && strstr(md, tolerated));
	free(md);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	T_CHECK(cover && strncmp(cover, warning, strlen(warning)) == 0);
	T_CHECK(cover && strstr(cover, tolerated));
	free(cover);
	char *json = t_render(r, REPORT_JSON);
	T_CHECK(json && strstr(json, "\"warnings\": [\"WARNING: workload vm: 5 of 6"));
	T_CHECK(json && strstr(json, "\"oom-contaminated\": 5"));
	T_CHECK(json && strstr(json, "\"oom\": {\"policy\": \"tolerate\", \"counted_runs_with_kills\": 3}"));
	free(json);
	report_free(r);
	store_close(st);
	if (!getenv("TEST_OOM_DB"))
		unlink(path);
}

static void test_store_report(void)
{
	/* TEST_REPORT_DB=PATH keeps the database there, for a look with kab report */
	char path[256];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-report-XXXXXX", "TEST_REPORT_DB");
	int64_t id = 0;
	T_EQ_INT(make_store(path, store_job, &id), 0);
	struct store *st;
	if (store_open(path, &st) < 0) {
		T_CHECK(!"store_open");
		return;
	}
	struct report *r;
	T_EQ_INT(report_load(st, 99, &r), -ENOENT);
	T_EQ_INT(report_load(st, id, &r), 0);
	T_EQ_INT(r->n_workloads, 3);
	T_EQ_INT(r->n_variants, 2);
	struct report_workload *w = &r->w[0];
	T_EQ_INT(w->pairs, 6);
	T_EQ_INT(w->h.workers, 4);
	T_EQ_STR(w->h.alloc, "1G");
	T_EQ_STR(w->h.timeout, "10s");
	T_EQ_STR(w->stop_reason, "budget");
	T_EQ_INT(w->runs[1 * RUN_STATUS_N + RUN_OOM_KILLED], 1); /* patched: 1 oom-killed */
	/* the warm-up: recorded, in base (the schedule's first variant), in no pair */
	T_EQ_INT(w->runs[0 * RUN_STATUS_N + RUN_WARMUP], 1);
	T_EQ_INT(w->runs[1 * RUN_STATUS_N + RUN_WARMUP], 0);
	T_EQ_INT(w->runs[0 * RUN_STATUS_N + RUN_OK], 6);
	/* primary first; the workload's own; the curated list; no pgfault */
	T_EQ_INT(w->n_metrics, 4);
	if (w->n_metrics == 4) {
		T_EQ_STR(w->m[0].name, "stress-ng.bogo_ops_per_s");
		T_CHECK(w->m[0].primary);
		T_EQ_STR(w->m[1].name, "vmstat.pgscan_anon");
		T_EQ_INT(w->m[1].info.dir, DIRECTION_NEUTRAL); /* the job's [metric] */
		T_EQ_STR(w->m[2].name, "vmstat.pswpin");
		T_EQ_STR(w->m[3].name, "vmstat.zswpwb");
		T_CHECK(isnan(w->m[0].values[1 * 6 + 2])); /* the oom-killed run */
		T_NEAR(w->m[0].values[0 * 6 + 3], 1023, 1e-9);
	}
	T_EQ_INT(r->w[1].n_metrics, 0);
	T_EQ_INT(r->n_notes, 15); /* 12 failed, 1 oom-killed, the warm-ups of vm and dead */
	if (r->n_notes == 15)
		T_EQ_STR(r->notes[0], "run 1 (warm-up, base, vm): warmup: warm-up before the first pair, not counted (ok)");
	T_EQ_INT(report_analyze(r), 0);
	if (w->n_metrics == 4) {
		/* the statistics have the pairs' runs alone: the warm-up's 1e6
		 * ops/s is in no mean (base: 1000 + 7 p, +2 at p = 3) */
		T_EQ_INT(w->m[0].desc[0].n, 6);
		T_NEAR(w->m[0].desc[0].mean, (6000 + 7 * 15 + 2) / 6.0, 1e-9);
		T_CHECK(w->m[0].desc[0].max < 2000);
		T_CHECK(w->m[1].desc[0].max < 1e6);
		T_EQ_INT(w->m[0].cmp[1].pairs, 5);
		T_EQ_INT(w->m[0].cmp[1].verdict, STATS_VERDICT_UNDECIDED); /* 5 pairs cannot reach p < 0.05 */
		T_EQ_INT(w->m[3].cmp[1].verdict, STATS_VERDICT_NONE);
	}
	render_all(r, "memory.max: 128M");
	char *text = t_render(r, REPORT_TEXT);
	T_CHECK(text && strstr(text, "no ok runs: every run of this workload failed"));
	T_CHECK(text && strstr(text, "no runs recorded for this workload"));
	T_CHECK(text && strstr(text, "Runs not counted:"));
	T_CHECK(text && strstr(text, "oom-killed: memcg OOM kill"));
	T_CHECK(text && strstr(text, "Delta (abs / %)"));
	/* the table leaves out the row that was zero throughout, and says so */
	T_CHECK(text && strstr(text, "\nvmstat.pgscan_anon "));
	T_CHECK(text && !strstr(text, "\nvmstat.pswpin "));
	T_CHECK(text && strstr(text, "\nAll zero in every run (left out): vmstat.pswpin\n"));
	/* on the running kernel: no kernels, no boots (test_report_boots.c has those) */
	T_CHECK(r->kernels == NULL && r->n_run_boots == 0 && r->n_kernel_warnings == 0);
	T_CHECK(text && !strstr(text, "Kernels:") && !strstr(text, "Runs by boot:") && !strstr(text, "WARNING"));
	T_CHECK(text && strstr(text, "\nKernel: 6.1.0-unit   CPUs: 8   Memory: 16.0 GiB   cgroup v2\n"));
	/* the header says the warm-up ran and was not counted */
	T_CHECK(text && strstr(text, "\nRuns: base 6 ok 1 warmup; patched 5 ok 1 oom-killed\n"
				     "Warm-up: 1 uncounted run of base before the first pair (not in the pairs or the statistics)\n"
				     "Pairs: 6 "));
	T_CHECK(text && strstr(text, "\nRuns: base none; patched none\nWarm-up: none recorded\n")); /* never */
	T_CHECK(text && strstr(text, "  run 1 (warm-up, base, vm): warmup: warm-up before the first pair, not counted (ok)\n"));
	T_CHECK(text && strstr(text, "(warm-up, base, dead): warmup: warm-up before the first pair, not counted (failed: exit code 1)\n"));
	free(text);
	char *json = t_render(r, REPORT_JSON);
	T_CHECK(json && !strstr(json, "\"kernels\"") && !strstr(json, "\"runs_by_boot\"") && !strstr(json, "\"kernel_warnings\""));
	T_CHECK(json && strstr(json, "\"boots\": []\n}\n"));
	T_CHECK(json && strstr(json, "\"name\": \"vmstat.pswpin\"")); /* JSON keeps every row */
	T_CHECK(json && strstr(json, "\"skipped\": 0, \"started\": 0, \"warmup\": 1}"));
	free(json);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	T_CHECK(cover && strstr(cover, "unit-report vm Benchmark Results"));
	T_CHECK(cover && strstr(cover, "  Kernel: 6.1.0-unit   CPUs: 8\n  MemTotal: 16384M   SwapTotal: 4096M\n"
				       "  memcg limit: 128M   alloc: 1G   workers: 4   duration: 10s\n"));
	T_CHECK(cover && strstr(cover, "  Warm-up: 1 uncounted run of base before the first pair (not in the pairs or the statistics)\n"));
	/* the job's primary and metrics = rows, less the one that was zero throughout */
	T_CHECK(cover && strstr(cover, "\nbogo ops/s "));
	T_CHECK(cover && strstr(cover, "\nzswpwb (pages) "));
	T_CHECK(cover && !strstr(cover, "pgscan_anon"));
	T_CHECK(cover && strstr(cover, "All zero in every run (left out): vmstat.pswpin\n"));
	T_CHECK(cover && !strstr(cover, "pswpin (events)"));
	T_CHECK(cover && strstr(cover, "The job's primary and metrics = rows; 1 other is in kab report 1.\n"));
	/* its q is still adjusted over every metric tested, shown or not */
	T_CHECK(cover && strstr(cover, "the\n3 metrics tested, Benjamini-Hochberg"));
	free(cover);
	report_free(r);

	struct report_opts o = { .format = REPORT_JSON };
	FILE *devnull = fopen("/dev/null", "w");
	T_EQ_INT(report_print_format(st, id, &o, devnull), 0);
	fclose(devnull);
	store_close(st);
	if (!getenv("TEST_REPORT_DB"))
		unlink(path);
}

/* [report] rows = names the cover letter's rows, over primary and metrics =. */
static void test_store_report_rows(void)
{
	char path[256], text[2048];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-report-XXXXXX", NULL);
	snprintf(text, sizeof(text), "%s[report]\nrows = vmstat.pgscan_* vmstat.pswpin\n", store_job);
	int64_t id = 0;
	T_EQ_INT(make_store(path, text, &id), 0);
	struct store *st;
	if (store_open(path, &st) < 0) {
		T_CHECK(!"store_open");
		return;
	}
	struct report *r;
	T_EQ_INT(report_load(st, id, &r), 0);
	T_EQ_INT(report_analyze(r), 0);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	T_CHECK(cover && strstr(cover, "\npgscan_anon (pages) "));
	T_CHECK(cover && !strstr(cover, "\nbogo ops/s ") && !strstr(cover, "\nzswpwb"));
	T_CHECK(cover && strstr(cover, "All zero in every run (left out): vmstat.pswpin\n"));
	T_CHECK(cover && strstr(cover, "The job's [report] rows; 2 others are in kab report 1.\n"));
	free(cover);
	/* the text report is unchanged by it: every row but the zero one */
	char *txt = t_render(r, REPORT_TEXT);
	T_CHECK(txt && strstr(txt, "\nstress-ng.bogo_ops_per_s ") && strstr(txt, "\nvmstat.zswpwb "));
	free(txt);
	report_free(r);
	store_close(st);
	unlink(path);
}

/* warmup = 0: no warm-up step, no warm-up run, and the header says so. */
static void test_store_report_warmup_off(void)
{
	char path[256], text[2048];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-report-XXXXXX", NULL);
	snprintf(text, sizeof(text), "[job]\nwarmup = 0\n%s", store_job + strlen("[job]\n"));
	int64_t id = 0;
	T_EQ_INT(make_store(path, text, &id), 0);
	struct store *st;
	if (store_open(path, &st) < 0) {
		T_CHECK(!"store_open");
		return;
	}
	struct report *r;
	T_EQ_INT(report_load(st, id, &r), 0);
	T_EQ_INT(r->w[0].runs[0 * RUN_STATUS_N + RUN_WARMUP], 0);
	T_EQ_INT(r->n_notes, 13); /* 12 failed, 1 oom-killed */
	T_EQ_INT(report_analyze(r), 0);
	char *txt = t_render(r, REPORT_TEXT);
	T_CHECK(txt && strstr(txt, "\nRuns: base 6 ok; patched 5 ok 1 oom-killed\n"
				   "Warm-up: off (warmup = 0): the first pair's runs were the workload's first\n"));
	T_CHECK(txt && !strstr(txt, "warm-up before"));
	free(txt);
	report_free(r);
	store_close(st);
	unlink(path);
}

/* Human units: one per row, from the larger of Before and After. */
static const char *scaled(const char *unit, double a, double b, int dec, double v)
{
	struct report_scale s;
	report_scale_pick(unit, a, b, dec, true, &s);
	report_fmt_scaled(v, &s, buf, sizeof(buf));
	return buf;
}

static void test_units(void)
{
	T_EQ_STR(scaled("ns", 206388029, 206388029, 0, 206388029), "206 ms");
	T_EQ_STR(scaled("ns", 1500, 1500, 0, 1500), "1.50 \xc2\xb5s");
	T_EQ_STR(scaled("ns", 999, 10, 0, 999), "999 ns");
	T_EQ_STR(scaled("ns", 2.5e9, 2.4e9, 0, 2.5e9), "2.50 s");
	T_EQ_STR(scaled("ns", 206388029, 180000000, 0, 0), "0");
	/* the smaller of the two decides the decimals: both keep 3 digits */
	T_EQ_STR(scaled("ns", 206388029, 5300000, 0, 5300000), "5.30 ms");
	T_EQ_STR(scaled("ns", 206388029, 5300000, 0, 206388029), "206.39 ms");
	T_EQ_STR(scaled("us", 1500, 1400, 0, 1500), "1.50 ms");
	/* a unit that stays keeps the input's decimals */
	T_EQ_STR(scaled("ms", 12.347, 11.2, 3, 12.347), "12.347 ms");
	T_EQ_STR(scaled("ms", 1234, 1100, 0, 1234), "1.23 s");
	T_EQ_STR(scaled("bytes", 3221225472.0, 3e9, 0, 3221225472.0), "3.00 GiB");
	T_EQ_STR(scaled("bytes", 512, 400, 0, 512), "512 B");
	T_EQ_STR(scaled("KiB", 204800, 200000, 0, 204800), "200 MiB");
	/* seconds stay seconds; other units stay raw */
	T_EQ_STR(scaled("s", 12.5, 13.25, 2, 12.5), "12.50");
	T_EQ_STR(scaled("s", 4000, 4100, 0, 4000), "4000");
	T_EQ_STR(scaled("pages", 206388029, 1, 0, 206388029), "206388029");
	T_EQ_STR(scaled("", 1e12, 1, 0, 1e12), "1000000000000");
	T_EQ_STR(scaled("ns", NAN, NAN, 0, NAN), "-");
	/* ASCII: us */
	struct report_scale s;
	report_scale_pick("ns", 1500, 1400, 0, false, &s);
	report_fmt_scaled(1500, &s, buf, sizeof(buf));
	T_EQ_STR(buf, "1.50 us");
	/* negative deltas in the row's unit; the percentage is untouched */
	report_scale_pick("ns", 206388029, 180000000, 0, true, &s);
	report_fmt_delta_scaled(-26388029, -12.786, &s, DIRECTION_LOWER, buf, sizeof(buf));
	T_EQ_STR(buf, "-26 ms (-12.8%)");
	report_fmt_delta_scaled(26388029, 12.786, &s, DIRECTION_HIGHER, buf, sizeof(buf));
	T_EQ_STR(buf, "+26 ms (+12.8%)");
	report_fmt_delta_scaled(26388029, 12.786, &s, DIRECTION_LOWER, buf, sizeof(buf));
	T_EQ_STR(buf, "26 ms (+12.8%)");
	report_fmt_delta_scaled(0, 0, &s, DIRECTION_LOWER, buf, sizeof(buf));
	T_EQ_STR(buf, "0 (0.0%)");
	report_scale_pick("ns", 1500, 1520, 0, true, &s);
	report_fmt_delta_scaled(20, 1.33, &s, DIRECTION_NEUTRAL, buf, sizeof(buf));
	T_EQ_STR(buf, "+0.020 \xc2\xb5s (+1.3%)");
	/* a Delta below the row's last digit keeps two significant digits */
	report_scale_pick("ns", 121510746, 120494893, 0, true, &s);
	report_fmt_delta_scaled(-418407, -0.3, &s, DIRECTION_LOWER, buf, sizeof(buf));
	T_EQ_STR(buf, "-0.42 ms (-0.3%)");
}

/* A report's rows in human units, zero rows left out, the Noisy lines. */
static void test_readable_rows(void)
{
	char *names[] = { "base", "patched" };
	struct report *r;
	T_EQ_INT(report_new("readable", names, 2, &r), 0);
	struct report_workload *w;
	T_EQ_INT(report_add_workload(r, "w", 6, &w), 0);
	struct report_metric *m;
	T_EQ_INT(report_add_metric(r, w, "pageout.ns_mean", "ns", &m), 0);
	for (int p = 0; p < 6; p++) {
		m->values[p] = 206388029 + 1000 * p;
		m->values[6 + p] = 180000000 + 3000 * p;
	}
	T_EQ_INT(report_add_metric(r, w, "vmstat.pgscan_direct", "pages", &m), 0);
	for (int i = 0; i < 12; i++)
		m->values[i] = 0;
	/* seven noisy metrics in base: the line names five, noisiest first */
	for (int k = 0; k < 7; k++) {
		char name[32];
		snprintf(name, sizeof(name), "noisy.m%d", k);
		T_EQ_INT(report_add_metric(r, w, name, "", &m), 0);
		for (int p = 0; p < 6; p++) {
			m->values[p] = 100 + (p % 2 ? 1 : -1) * (10 + k);
			m->values[6 + p] = 100;
		}
	}
	T_EQ_INT(report_analyze(r), 0);
	char *text = t_render(r, REPORT_TEXT);
	T_CHECK(text && strstr(text, " 206 ms "));
	T_CHECK(text && strstr(text, " 180 ms "));
	T_CHECK(text && strstr(text, "-26 ms (-12.8%)"));
	T_CHECK(text && !strstr(text, "e+"));
	T_CHECK(text && !strstr(text, "\nvmstat.pgscan_direct "));
	T_CHECK(text && strstr(text, "\nAll zero in every run (left out): vmstat.pgscan_direct\n"));
	T_CHECK(text && strstr(text, "\nNoisy in base (CoV > 3.5%): noisy.m6 "));
	T_CHECK(text && strstr(text, ", noisy.m2 ") && !strstr(text, "noisy.m1 1") && strstr(text, "% and 2 more\n"));
	T_CHECK(text && !strstr(text, "Noisy in patched"));
	free(text);
	char *cover = t_render(r, REPORT_COVER_LETTER);
	T_CHECK(cover && strstr(cover, "\nMADV_PAGEOUT time (mean) 206 ms        180 ms            -26 ms (-12.8%)\n"));
	T_CHECK(cover && strstr(cover, "All zero in every run (left out): vmstat.pgscan_direct\n"));
	T_CHECK(cover && !strstr(cover, "kab report"));  /* kab compare keeps every other row */
	free(cover);
	char *csv = t_render(r, REPORT_CSV);
	T_CHECK(csv && strstr(csv, "vmstat.pgscan_direct") && strstr(csv, "206388029"));
	free(csv);
	char *json = t_render(r, REPORT_JSON);
	T_CHECK(json && strstr(json, "vmstat.pgscan_direct") && strstr(json, "206388029"));
	free(json);
	report_free(r);
}

int main(void)
{
	test_family();
	test_seed_delta();
	test_numbers();
	test_json_csv();
	test_locale();
	test_metric_table();
	test_job_settings();
	test_model_edges();
	test_store_report();
	test_store_report_rows();
	test_store_report_warmup_off();
	test_units();
	test_readable_rows();
	test_oom_report();
	return t_done("test_report");
}
