/* The nightly history (harness/report/history.c, db/store_history.c):
 * jobs of one name written as the executor writes them (job, schedule,
 * each run begun and finished, the job's status), their history computed
 * from their reports and read back as series with gaps and change points;
 * and kabd's GET /api/v1/history handler on the same databases. */
#include "t_job.h"
#include "harness/daemon/api.h"
#include "harness/daemon/body_cache.h"
#include "harness/daemon/httpd.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/history.h"
#include "db/store.h"
#include "db/store_history.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DAY 86400.0
/* 2026-03-01 02:00 UTC: a nightly timer's hour */
#define DAY0 1772330400.0

static char dir[] = "/tmp/kab-test-history-XXXXXX";

static const char job_text[] = "[job]\nname = NAME\npairs = 6\nprimary = stress-ng.bogo_ops_per_s\n"
			       "[swap]\ndevice = none\n"
			       "[variant A]\nname = base\n[variant B]\nname = head\n"
			       "[workload vm]\ntype = stress-ng\nargs = --vm 2 --vm-bytes 256M --timeout 10s\nmemory.max = 512M\n";

enum night_kind { NIGHT_DONE, NIGHT_FAILED, NIGHT_CANCELLED, NIGHT_RUNS_FAILED };

static bool has(const char *s, const char *sub)
{
	return s && strstr(s, sub) != NULL;
}

/* Sets a column of a row by hand: what another part of kab writes (the
 * tracked variant's commit) or what the clock decided (a job's start). */
static void sql(const char *db, const char *stmt)
{
	sqlite3 *h = NULL;
	T_EQ_INT(sqlite3_open(db, &h), SQLITE_OK);
	char *err = NULL;
	T_EQ_INT(sqlite3_exec(h, stmt, NULL, NULL, &err), SQLITE_OK);
	if (err)
		fprintf(stderr, "sql: %s\n", err);
	sqlite3_free(err);
	sqlite3_close(h);
}

static long long sql_count(const char *db, const char *stmt)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;
	if (sqlite3_open(db, &h) == SQLITE_OK && sqlite3_prepare_v2(h, stmt, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

/* One night of job `name` on day `day`: variant head is shift_pct off
 * base (small, deterministic pair-to-pair noise); its runs ok, or all
 * failed, or the job failed or was cancelled after its first pair. With
 * units, each run also has a time in ns (about 135 ms) and a count of
 * pages above a million, the same in every run. */
static int64_t add_night_units(const char *db, const char *name, int day, double shift_pct, enum night_kind kind, bool units)
{
	char text[sizeof(job_text) + 128];
	const char *at = strstr(job_text, "NAME");
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - job_text), job_text, name, at + 4);
	struct job *j = t_parse_job(text);
	struct store *st = NULL;
	int64_t id = 0;
	struct store_step *steps = NULL;
	size_t n = 0;
	T_CHECK(j != NULL);
	if (!j || store_open(db, &st) < 0)
		goto out;
	T_EQ_INT(job_store_create(st, j, &id), 0);
	T_EQ_INT(exec_plan(j, &steps, &n), 0);
	T_EQ_INT(store_steps_create(st, id, steps, n), 0);
	free(steps);
	steps = NULL;
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		if ((kind == NIGHT_FAILED || kind == NIGHT_CANCELLED) && steps[i].pair > 0)
			break;
		struct store_run run = { .job_id = id,
					 .step_id = steps[i].id,
					 .pair = steps[i].pair,
					 .variant = steps[i].variant,
					 .workload = steps[i].workload,
					 .exit_code = 0,
					 .cpus = 2,
					 .cgroup_version = 1,
					 .mem_total = 24ull << 30 };
		snprintf(run.kernel_release, sizeof(run.kernel_release), "6.1.0-unit");
		int64_t rid;
		T_EQ_INT(store_run_begin(st, &run, &rid), 0);
		run.id = rid;
		run.started = DAY0 + day * DAY + (double)i * 20;
		run.finished = run.started + 10;
		run.status = kind == NIGHT_RUNS_FAILED ? RUN_FAILED : RUN_OK;
		if (steps[i].pair == STORE_PAIR_WARMUP) /* the warm-up, as the executor records it */
			run.status = RUN_WARMUP;
		struct wl_metrics m = { 0 };
		double noise = 0.002 * (double)((steps[i].pair * 7 + day * 3) % 5 - 2);
		double a = 1000 * (1 + noise), v = steps[i].variant ? a * (1 + shift_pct / 100) : a;
		wl_metrics_add(&m, "stress-ng.bogo_ops_per_s", "ops/s", v);
		wl_metrics_add(&m, "time.wall_s", "s", 10 + noise);
		if (units) {
			double ns = 135363000 * (1 + noise);
			wl_metrics_add(&m, "stress-ng.op_ns_mean", "ns", steps[i].variant ? ns * (1 + shift_pct / 100) : ns);
			wl_metrics_add(&m, "vmstat.pswpout", "pages", 1310724);
		}
		T_EQ_INT(store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0), 0);
		wl_metrics_free(&m);
	}
	enum job_status end = kind == NIGHT_FAILED ? JOB_FAILED : kind == NIGHT_CANCELLED ? JOB_CANCELLED : JOB_DONE;
	T_EQ_INT(store_job_set_status(st, id, end, kind == NIGHT_FAILED ? "the build of variant head failed" : NULL), 0);
out:
	free(steps);
	store_close(st);
	job_free(j);
	char q[160];
	snprintf(q, sizeof(q), "UPDATE jobs SET started = %.1f WHERE id = %lld", DAY0 + day * DAY, (long long)id);
	sql(db, q);
	return id;
}

static int64_t add_night(const char *db, const char *name, int day, double shift_pct, enum night_kind kind)
{
	return add_night_units(db, name, day, shift_pct, kind, false);
}

static void new_db(char *db, size_t len, const char *tag)
{
	snprintf(db, len, "%s/%s.db", dir, tag);
	unlink(db);
}

/* history_refresh, then history_load of the default view (primary metrics). */
static struct history *refresh_load(const char *db, const char *name, const char *metric, size_t *ret_added, int *ret_r)
{
	struct store *st = NULL;
	struct history *h = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	if (!st)
		return NULL;
	size_t added = 0;
	T_EQ_INT(history_refresh(st, name, &added), 0);
	if (ret_added)
		*ret_added = added;
	struct history_query q = { .metric = metric };
	int r = history_load(st, name, &q, &h);
	if (ret_r)
		*ret_r = r;
	store_close(st);
	return r == 0 ? h : NULL;
}

static char *render(const struct history *h, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	T_EQ_INT(json ? history_render_json(h, f) : history_render_text(h, false, f), 0);
	fclose(f);
	return buf;
}

/* Five nights in a row, head 2% faster each: five measured points with
 * the paired estimate and both medians, no gaps. */
static void test_clean(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "clean");
	int64_t first = 0;
	for (int d = 0; d < 5; d++) {
		int64_t id = add_night(db, "nightly", d, 2.0, NIGHT_DONE);
		if (d == 0)
			first = id;
	}
	add_night(db, "other", 0, 9.0, NIGHT_DONE); /* another name: not in this history */
	size_t added = 0;
	struct history *h = refresh_load(db, "nightly", NULL, &added, NULL);
	T_EQ_INT(added, 5);
	T_CHECK(h != NULL);
	if (!h)
		return;
	T_EQ_INT(h->n_nights, 5);
	T_EQ_INT(h->n_failed, 0);
	T_EQ_INT(h->n_series, 1); /* the primary metric */
	const struct history_series *s = &h->series[0];
	T_EQ_STR(s->key->metric, "stress-ng.bogo_ops_per_s");
	T_EQ_STR(s->key->workload, "vm");
	T_EQ_STR(s->key->variant_name, "head");
	T_EQ_STR(s->key->base_name, "base");
	T_CHECK(s->key->primary);
	T_EQ_INT(s->n_points, 5);
	T_EQ_INT(s->measured, 5);
	for (size_t i = 0; i < s->n_points; i++) {
		const struct history_point *p = &s->points[i];
		T_EQ_INT(p->state, HISTORY_MEASURED);
		T_EQ_INT(h->nights[p->night].job_id, first + (int64_t)i);
		T_NEAR(p->row->estimate_pct, 2.0, 0.05);
		T_CHECK(p->row->ci_lo_pct <= 2.0 + 1e-6 && p->row->ci_hi_pct >= 2.0 - 1e-6);
		T_EQ_INT(p->row->pairs, 6);
		T_NEAR(p->row->median_base, 1000, 3);
		T_NEAR(p->row->median_variant, 1020, 3);
		T_EQ_STR(p->row->verdict, "better");
		T_CHECK(p->commit == NULL);
	}
	T_EQ_INT(h->n_metrics, 2); /* bogo ops and wall time */
	char *json = render(h, true);
	T_CHECK(has(json, "\"job\": \"nightly\", \"metric\": null, \"nights\": 5, \"failed\": 0, \"measured\": 5"));
	T_CHECK(has(json, "\"metrics\": [\"stress-ng.bogo_ops_per_s\", \"time.wall_s\"]"));
	T_CHECK(has(json, "{\"state\": \"measured\", \"date\": \"2026-03-01\", \"job\": 1, \"night\": \"2026-03-01T02:00:00"));
	free(json);
	history_free(h);
	/* one metric asked for: its series only */
	h = refresh_load(db, "nightly", "time.wall_s", NULL, NULL);
	T_CHECK(h && h->n_series == 1 && strcmp(h->series[0].key->metric, "time.wall_s") == 0);
	history_free(h);
	int r = 0;
	h = refresh_load(db, "nightly", "vmstat.nope", NULL, &r);
	T_EQ_INT(r, 0);
	T_CHECK(h && h->n_series == 0);
	history_free(h);
}

/* A failed night, a cancelled one and one whose runs all failed are
 * gaps with their reasons, never zeros; a calendar day without a job is
 * shown as missed. */
static void test_gaps(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "gaps");
	add_night(db, "gaps", 0, 1.0, NIGHT_DONE);
	add_night(db, "gaps", 1, 1.0, NIGHT_FAILED);
	add_night(db, "gaps", 2, 1.0, NIGHT_RUNS_FAILED);
	/* day 3 and 4: the machine was down */
	add_night(db, "gaps", 5, 1.0, NIGHT_CANCELLED);
	add_night(db, "gaps", 6, 1.0, NIGHT_DONE);
	add_night(db, "gaps", 6, 1.0, NIGHT_DONE); /* two jobs on one day: nothing missed */
	struct history *h = refresh_load(db, "gaps", NULL, NULL, NULL);
	T_CHECK(h != NULL);
	if (!h)
		return;
	T_EQ_INT(h->n_nights, 6);
	T_EQ_INT(h->n_failed, 2);
	T_EQ_INT(h->n_series, 1);
	const struct history_series *s = &h->series[0];
	static const enum history_point_state want[] = { HISTORY_MEASURED, HISTORY_FAILED,    HISTORY_NO_ESTIMATE,
							 HISTORY_MISSED,   HISTORY_CANCELLED, HISTORY_MEASURED,
							 HISTORY_MEASURED };
	T_EQ_INT(s->n_points, ARRAY_SIZE(want));
	for (size_t i = 0; i < s->n_points && i < ARRAY_SIZE(want); i++)
		T_EQ_INT(s->points[i].state, want[i]);
	T_EQ_INT(s->measured, 3);
	if (s->n_points == ARRAY_SIZE(want)) {
		T_CHECK(s->points[1].row == NULL);
		T_EQ_STR(h->nights[s->points[1].night].reason, "the build of variant head failed");
		/* 13 runs recorded: the warm-up is none of the night's runs, failed or not */
		char q[96];
		snprintf(q, sizeof(q), "SELECT count(*) FROM runs WHERE job_id = %lld",
			 (long long)h->nights[s->points[2].night].job_id);
		T_EQ_INT(sql_count(db, q), 13);
		T_EQ_INT(h->nights[s->points[2].night].runs, 12);
		T_EQ_INT(h->nights[s->points[2].night].runs_failed, 12);
		T_EQ_INT(s->points[3].missed_days, 2);
		T_EQ_INT(s->points[3].night, SIZE_MAX);
	}
	char *json = render(h, true);
	T_CHECK(has(json, "{\"state\": \"missed\", \"date\": \"2026-03-04\", \"days\": 2}"));
	T_CHECK(has(json, "\"state\": \"failed\", \"date\": \"2026-03-02\", \"job\": 2"));
	T_CHECK(has(json, "\"reason\": \"the build of variant head failed\", \"runs\": 2, \"runs_failed\": 0, \"commit\": null, "
			  "\"force_pushed\": false, \"pairs\": 0, \"estimate_pct\": null"));
	free(json);
	char *text = render(h, false);
	T_CHECK(has(text, "2026-03-04       -  (2 days with no job)"));
	T_CHECK(has(text, "failed: the build of variant head failed"));
	T_CHECK(has(text, "no estimate (12 of 12 runs failed)"));
	free(text);
	history_free(h);
}

/* One night, and nights that all failed: "not enough nights", and no
 * change points; a name with no ended job: -ENOENT. */
static void test_not_enough(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "few");
	add_night(db, "one", 0, 1.0, NIGHT_DONE);
	struct history *h = refresh_load(db, "one", NULL, NULL, NULL);
	T_CHECK(h != NULL);
	if (h) {
		T_CHECK(!h->enough);
		T_EQ_STR(h->note, "not enough nights: 1 night, 0 failed, 1 measured");
		T_EQ_INT(h->n_series, 1);
		T_CHECK(h->n_series == 1 && !h->series[0].enough && h->series[0].n_changes == 0);
		T_CHECK(h->n_series == 1 && has(h->series[0].note, "not enough nights: 1 measured of 1"));
		char *json = render(h, true);
		T_CHECK(has(json, "\"state\": \"not enough nights\", \"note\": \"not enough nights: 1 night, 0 failed, 1 measured\""));
		T_CHECK(has(json, "\"change_points\": []"));
		free(json);
	}
	history_free(h);
	for (int d = 0; d < 4; d++)
		add_night(db, "dead", d, 1.0, NIGHT_FAILED);
	h = refresh_load(db, "dead", NULL, NULL, NULL);
	T_CHECK(h != NULL);
	if (h) {
		T_CHECK(!h->enough);
		T_EQ_INT(h->n_series, 0);
		T_EQ_STR(h->note, "not enough nights: 4 nights, 4 failed, 0 measured");
		char *text = render(h, false);
		T_CHECK(has(text, "not enough nights: 4 nights, 4 failed, 0 measured: no change points"));
		free(text);
	}
	history_free(h);
	int r = 0;
	h = refresh_load(db, "nobody", NULL, NULL, &r);
	T_EQ_INT(r, -ENOENT);
	T_CHECK(h == NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	T_EQ_INT(history_load(st, "bad name", NULL, &h), -EINVAL);
	T_EQ_INT(history_load(st, "one", &(struct history_query){ .metric = "a\"b" }, &h), -EINVAL);
	char **names = NULL;
	size_t n = 0;
	T_EQ_INT(store_history_names(st, &names, &n), 0);
	T_CHECK(n == 2 && strcmp(names[0], "dead") == 0 && strcmp(names[1], "one") == 0);
	store_history_names_free(names, n);
	T_EQ_INT(store_history_delete_name(st, "dead"), 0);
	T_EQ_INT(store_history_names(st, &names, &n), 0);
	T_CHECK(n == 1 && strcmp(names[0], "one") == 0);
	store_history_names_free(names, n);
	store_close(st);
}

/* The text shows medians in the units of the text report: a time in ns
 * as "135 ms", a count whole ("1310724"), never "1.35363e+08". */
static void test_text_units(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "units");
	for (int d = 0; d < 3; d++)
		add_night_units(db, "units", d, 3.0, NIGHT_DONE, true);
	struct history *h = refresh_load(db, "units", "stress-ng.op_ns_mean", NULL, NULL);
	T_CHECK(h && h->n_series == 1);
	if (h && h->n_series == 1) {
		const struct history_point *p = &h->series[0].points[0];
		T_NEAR(p->row->median_base, 135363000, 1e6);
		T_NEAR(p->row->median_variant, 139423890, 1e6);
		char *text = render(h, false);
		bool ok = has(text, "stress-ng.op_ns_mean (ns, ") && has(text, " 135 ms ") && has(text, " 139 ms  ") &&
			  !has(text, "e+0") && !has(text, "35363");
		T_CHECK(ok);
		if (!ok)
			fprintf(stderr, "%s", text);
		free(text);
	}
	history_free(h);
	h = refresh_load(db, "units", "vmstat.pswpout", NULL, NULL);
	T_CHECK(h && h->n_series == 1);
	if (h && h->n_series == 1) {
		char *text = render(h, false);
		bool ok = has(text, "vmstat.pswpout (pages, ") && has(text, " 1310724      1310724  ") &&
			  !has(text, "e+0") && !has(text, "1310724.");
		T_CHECK(ok);
		if (!ok)
			fprintf(stderr, "%s", text);
		free(text);
	}
	history_free(h);
}

/* The tracked variant's commit on each night, and a head that was
 * force-pushed backwards shown as such on its night. */
static void test_tracked(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "tracked");
	int64_t a = add_night(db, "track", 0, 1.0, NIGHT_DONE);
	int64_t b = add_night(db, "track", 1, 1.0, NIGHT_DONE);
	char q[1024];
	snprintf(q, sizeof(q),
		 "UPDATE variants SET track = 'origin mm-unstable', commit_sha = '6ccdcb6d3a0123456789abcdef0123456789abcd',"
		 " commit_subject = 'mm, pcp: a subject', commit_date = %.0f WHERE job_id = %lld AND idx = 1;"
		 "UPDATE variants SET track = 'origin mm-unstable', commit_sha = '0123456789abcdef0123456789abcdef01234567',"
		 " commit_subject = 'mm: older', commit_date = %.0f,"
		 " track_event = 'force-pushed: 6ccdcb6d3a01 is not an ancestor of 0123456789ab'"
		 " WHERE job_id = %lld AND idx = 1;",
		 DAY0 - DAY, (long long)a, DAY0 - 2 * DAY, (long long)b);
	sql(db, q);
	struct history *h = refresh_load(db, "track", NULL, NULL, NULL);
	T_CHECK(h && h->n_series == 1 && h->series[0].n_points == 2);
	if (!h || h->n_series != 1 || h->series[0].n_points != 2) {
		history_free(h);
		return;
	}
	const struct history_point *p = h->series[0].points;
	T_CHECK(p[0].commit && strcmp(p[0].commit->sha, "6ccdcb6d3a0123456789abcdef0123456789abcd") == 0);
	T_CHECK(!p[0].force_pushed);
	T_CHECK(p[1].commit && strcmp(p[1].commit->subject, "mm: older") == 0);
	T_CHECK(p[1].force_pushed);
	char *text = render(h, false);
	T_CHECK(has(text, "6ccdcb6d3a01 mm, pcp: a subject"));
	T_CHECK(has(text, "[FORCE-PUSHED: force-pushed: 6ccdcb6d3a01 is not an ancestor of 0123456789ab]"));
	free(text);
	char *json = render(h, true);
	T_CHECK(has(json, "\"commit\": {\"track\": \"origin mm-unstable\", \"sha\": \"0123456789abcdef0123456789abcdef01234567\", "
			  "\"subject\": \"mm: older\", \"date\": \"2026-02-27T02:00:00"));
	T_CHECK(has(json, "\"force_pushed\": true"));
	free(json);
	history_free(h);
}

static void get(const char *db, const char *const *args, struct httpd_resp *rs);

/* No byte a terminal acts on: no C0 control but newline and tab, no DEL,
 * no C1 control, nothing that is not UTF-8. */
static bool terminal_safe(const char *s)
{
	if (!s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return esc_utf8_valid(s, strlen(s), NULL);
}

/* A commit subject from git holding escape sequences, a C1 CSI and a byte
 * of no UTF-8 (an older kab stored it as git printed it): the text table,
 * kab history's and kabd's ?format=text, shows them and runs none. */
static void test_hostile_subject(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "hostile");
	int64_t a = add_night(db, "hostile", 0, 1.0, NIGHT_DONE);
	char q[1024];
	/* ESC [ 2 J ESC ] 0 ; x BEL, CSI 31m, "caf\xe9" */
	snprintf(q, sizeof(q),
		 "UPDATE variants SET track = 'origin main', commit_sha = '6ccdcb6d3a0123456789abcdef0123456789abcd',"
		 " commit_subject = CAST(X'6d6d3a201b5b324a1b5d303b7807c29b33316d63616ce9' AS TEXT), commit_date = %.0f"
		 " WHERE job_id = %lld AND idx = 1;",
		 DAY0 - DAY, (long long)a);
	sql(db, q);
	struct history *h = refresh_load(db, "hostile", NULL, NULL, NULL);
	T_CHECK(h && h->n_series == 1);
	if (!h || h->n_series != 1) {
		history_free(h);
		return;
	}
	char *text = render(h, false);
	T_CHECK(terminal_safe(text));
	T_CHECK(has(text, "6ccdcb6d3a01 mm: \\x1b[2J\\x1b]0;x\\x07\\u009b31mcal\\xe9"));
	free(text);
	history_free(h);
	struct httpd_resp rs;
	get(db, (const char *const[]){ "job", "hostile", "format", "text", NULL }, &rs);
	T_EQ_INT(rs.status, 200);
	T_CHECK(terminal_safe(rs.body.buf));
	T_CHECK(has(rs.body.buf, "mm: \\x1b[2J"));
	sb_free(&rs.body);
}

/* A refresh with nothing new adds nothing and duplicates no row; a job
 * that ends later (queued when first refreshed) joins on the next one. */
static void test_idempotent(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "idem");
	for (int d = 0; d < 3; d++)
		add_night(db, "idem", d, 1.0, NIGHT_DONE);
	size_t added = 9;
	history_free(refresh_load(db, "idem", NULL, &added, NULL));
	T_EQ_INT(added, 3);
	long long rows = sql_count(db, "SELECT count(*) FROM history WHERE name = 'idem'");
	T_EQ_INT(rows, 3 * 2); /* 3 nights x (bogo ops, wall time) x 1 compared variant */
	history_free(refresh_load(db, "idem", NULL, &added, NULL));
	T_EQ_INT(added, 0);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history WHERE name = 'idem'"), rows);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history_nights WHERE name = 'idem'"), 3);
	/* a job still running is no night; once done it is */
	int64_t id = add_night(db, "idem", 3, 1.0, NIGHT_DONE);
	char q[128];
	snprintf(q, sizeof(q), "UPDATE jobs SET status = 'running' WHERE id = %lld", (long long)id);
	sql(db, q);
	history_free(refresh_load(db, "idem", NULL, &added, NULL));
	T_EQ_INT(added, 0);
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	T_EQ_INT(history_refresh_job(st, id), 0);
	store_close(st);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history_nights WHERE name = 'idem'"), 3);
	snprintf(q, sizeof(q), "UPDATE jobs SET status = 'done' WHERE id = %lld", (long long)id);
	sql(db, q);
	history_free(refresh_load(db, "idem", NULL, &added, NULL));
	T_EQ_INT(added, 1);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history WHERE name = 'idem'"), rows + 2);
}

/* A step in the data: head +0% for ten nights, then -5% from night 10
 * on, with one outlying night before it. The change point lands on night
 * 10, its last good night is 9, and the outlier makes none. */
static void test_step(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "step");
	int64_t ids[20];
	for (int d = 0; d < 20; d++)
		ids[d] = add_night(db, "step", d, d == 4 ? 6.0 : d < 10 ? 0.0 : -5.0, NIGHT_DONE);
	struct history *h = refresh_load(db, "step", NULL, NULL, NULL);
	T_CHECK(h && h->n_series == 1);
	if (!h || h->n_series != 1) {
		history_free(h);
		return;
	}
	const struct history_series *s = &h->series[0];
	T_CHECK(s->enough);
	T_EQ_INT(s->n_changes, 1);
	if (s->n_changes == 1) {
		const struct history_change *c = &s->changes[0];
		T_EQ_INT(h->nights[s->points[c->first_bad].night].job_id, ids[10]);
		T_EQ_INT(h->nights[s->points[c->last_good].night].job_id, ids[9]);
		T_NEAR(c->mean_after, -5.0, 0.2);
		T_CHECK(c->mean_before > -0.5 && c->mean_before < 1.5);
		T_CHECK(c->p < 0.05);
		char *text = render(h, false);
		T_CHECK(has(text, "change points: 1\n  2026-03-11: mean "));
		T_CHECK(has(text, "last good 2026-03-10, job 10"));
		T_CHECK(has(text, "first bad 2026-03-11, job 11"));
		free(text);
		char *json = render(h, true);
		T_CHECK(has(json, "\"change_points\": [\n    {\"point\": 10, \"last_good\": {\"point\": 9, \"job\": 10"));
		free(json);
	}
	history_free(h);
}

/* kabd's GET /api/v1/history on the databases above. */
static void get(const char *db, const char *const *args, struct httpd_resp *rs)
{
	struct api a = { .db_path = db };
	struct httpd_req rq = { .method = "GET", .path = "/history", .args = args };
	*rs = (struct httpd_resp){ 0 };
	api_history(&a, &rq, rs);
}

static void test_api(void)
{
	char db[PATH_MAX];
	snprintf(db, sizeof(db), "%s/gaps.db", dir);
	struct httpd_resp rs;
	get(db, (const char *const[]){ "job", "gaps", NULL }, &rs);
	T_EQ_INT(rs.status, 200);
	T_EQ_STR(rs.content_type, "application/json");
	T_CHECK(has(rs.body.buf, "{\"schema\": 1, \"job\": \"gaps\", \"metric\": null, \"nights\": 6, \"failed\": 2"));
	sb_free(&rs.body);
	get(db, (const char *const[]){ "job", "gaps", "metric", "time.wall_s", "format", "text", NULL }, &rs);
	T_EQ_INT(rs.status, 200);
	T_CHECK(has(rs.body.buf, "vm: time.wall_s (s, lower is better), head against base"));
	sb_free(&rs.body);
	get(db, (const char *const[]){ "job", "nobody", NULL }, &rs);
	T_EQ_INT(rs.status, 404);
	T_CHECK(has(rs.body.buf, "no nightly history for job nobody"));
	sb_free(&rs.body);
	get(db, (const char *const[]){ "job", "gaps", "metric", "vmstat.nope", NULL }, &rs);
	T_EQ_INT(rs.status, 404);
	T_CHECK(has(rs.body.buf, "job gaps has no history of metric vmstat.nope"));
	sb_free(&rs.body);
	const struct {
		const char *const *args;
		const char *want;
	} bad[] = {
		{ (const char *const[]){ NULL }, "job=NAME is required" },
		{ (const char *const[]){ "job", "", NULL }, "job=NAME is required" },
		{ (const char *const[]){ "job", "../etc", NULL }, "job must be a job's name" },
		{ (const char *const[]){ "job", "a b", NULL }, "job must be a job's name" },
		{ (const char *const[]){ "job", "gaps", "metric", "x'; DROP TABLE history", NULL }, "metric must be a metric's name" },
		{ (const char *const[]){ "job", "gaps", "jobs", "x", NULL }, "unknown parameter \\\"jobs\\\"" },
		{ (const char *const[]){ "job", "gaps", "job", "other", NULL }, "parameter \\\"job\\\" is given twice" },
		{ (const char *const[]){ "job", "gaps", "format", "xml", NULL }, "unknown format" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		get(db, bad[i].args, &rs);
		T_EQ_INT(rs.status, 400);
		T_CHECK(has(rs.body.buf, bad[i].want));
		if (!has(rs.body.buf, bad[i].want))
			fprintf(stderr, "  case %zu: %s", i, rs.body.buf ? rs.body.buf : "(null)\n");
		sb_free(&rs.body);
	}
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	get(db, (const char *const[]){ "job", longname, NULL }, &rs);
	T_EQ_INT(rs.status, 400);
	sb_free(&rs.body);
}

/* What kabd's executor does when jobs end, or when it is idle. */
static void executor_refresh(const char *db)
{
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	if (st)
		T_EQ_INT(history_refresh_all(st, NULL, NULL), 0);
	store_close(st);
}

/* The handler's cache: the same body until a night of the name is added. */
static void test_api_cache(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "cache");
	for (int d = 0; d < 3; d++)
		add_night(db, "cached", d, 1.0, NIGHT_DONE);
	executor_refresh(db);
	struct httpd_resp a, b, c;
	const char *const args[] = { "job", "cached", NULL };
	get(db, args, &a);
	get(db, args, &b);
	T_EQ_INT(a.status, 200);
	T_EQ_INT(b.status, 200);
	T_CHECK(a.body.buf && b.body.buf && strcmp(a.body.buf, b.body.buf) == 0);
	T_CHECK(has(b.body.buf, "\"nights\": 3"));
	/* the text form of the same query is its own entry */
	get(db, (const char *const[]){ "job", "cached", "format", "text", NULL }, &c);
	T_CHECK(c.body.buf && c.body.buf[0] != '{');
	sb_free(&c.body);
	/* a night, and one that failed: the next GET shows them */
	add_night(db, "cached", 3, 1.0, NIGHT_DONE);
	executor_refresh(db);
	get(db, args, &c);
	T_CHECK(has(c.body.buf, "\"nights\": 4"));
	sb_free(&c.body);
	add_night(db, "cached", 4, 1.0, NIGHT_FAILED);
	executor_refresh(db);
	get(db, args, &c);
	T_CHECK(has(c.body.buf, "\"nights\": 5, \"failed\": 1"));
	sb_free(&a.body);
	sb_free(&b.body);
	sb_free(&c.body);
}

static long long data_version(sqlite3 *h)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;
	if (sqlite3_prepare_v2(h, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A GET only reads: nights of ended jobs that the executor has not made
 * yet stay unmade (a reader is anyone, with --public-read), and nothing
 * commits to the database while it answers (PRAGMA data_version, seen
 * from another connection, moves with every other connection's commit). */
static void test_api_reads_only(void)
{
	char db[PATH_MAX];
	new_db(db, sizeof(db), "reads");
	for (int d = 0; d < 3; d++)
		add_night(db, "seen", d, 1.0, NIGHT_DONE);
	executor_refresh(db);
	add_night(db, "seen", 3, 1.0, NIGHT_DONE);
	add_night(db, "unseen", 0, 1.0, NIGHT_DONE);
	sqlite3 *watch = NULL;
	T_EQ_INT(sqlite3_open(db, &watch), SQLITE_OK);
	long long v0 = data_version(watch);
	struct httpd_resp rs;
	get(db, (const char *const[]){ "job", "seen", NULL }, &rs);
	T_EQ_INT(rs.status, 200);
	T_CHECK(has(rs.body.buf, "\"nights\": 3,"));
	sb_free(&rs.body);
	get(db, (const char *const[]){ "job", "unseen", "format", "text", NULL }, &rs);
	T_EQ_INT(rs.status, 404);
	sb_free(&rs.body);
	T_EQ_INT(data_version(watch), v0);
	sqlite3_close(watch);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history_nights"), 3);
	/* the executor's refresh makes them; then readers see them */
	executor_refresh(db);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history_nights"), 5);
	get(db, (const char *const[]){ "job", "seen", NULL }, &rs);
	T_CHECK(has(rs.body.buf, "\"nights\": 4,"));
	sb_free(&rs.body);
	/* the store a GET opens refuses writes */
	struct store *st = NULL;
	T_EQ_INT(store_open_readonly(db, &st), 0);
	if (st)
		T_CHECK(store_history_delete_name(st, "seen") < 0);
	store_close(st);
	T_EQ_INT(sql_count(db, "SELECT count(*) FROM history_nights WHERE name = 'seen'"), 4);
}

/* The shared body cache itself: a copy per reader, a stale version is a
 * miss and is replaced in its slot, the least recently used body goes
 * first, and a key too long to keep is never cached. */
static void test_body_cache(void)
{
	static struct body_cache c = BODY_CACHE_INIT;
	char key[32], *buf = NULL;
	size_t len = 0;
	body_cache_put(&c, "a", 1, 0.5, "alpha", 5);
	T_CHECK(body_cache_get(&c, "a", 1, 0.5, &buf, &len) && len == 5 && strcmp(buf, "alpha") == 0);
	free(buf);
	T_CHECK(!body_cache_get(&c, "a", 2, 0.5, &buf, &len));
	T_CHECK(!body_cache_get(&c, "a", 1, 0.75, &buf, &len));
	body_cache_put(&c, "a", 2, 0.5, "beta", 4);
	T_CHECK(!body_cache_get(&c, "a", 1, 0.5, &buf, &len));
	T_CHECK(body_cache_get(&c, "a", 2, 0.5, &buf, &len) && strcmp(buf, "beta") == 0);
	free(buf);
	size_t used = 0;
	for (size_t i = 0; i < BODY_CACHE_SLOTS; i++)
		used += c.slot[i].buf != NULL;
	T_CHECK(used == 1);
	/* fill every slot; "a" was read last of the first ones, "k0" is the oldest */
	for (int i = 0; i < BODY_CACHE_SLOTS - 1; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		body_cache_put(&c, key, 0, 0, key, strlen(key));
	}
	T_CHECK(body_cache_get(&c, "a", 2, 0.5, &buf, &len));
	free(buf);
	body_cache_put(&c, "new", 0, 0, "n", 1);
	T_CHECK(!body_cache_get(&c, "k0", 0, 0, &buf, &len));
	T_CHECK(body_cache_get(&c, "k1", 0, 0, &buf, &len) && strcmp(buf, "k1") == 0);
	free(buf);
	T_CHECK(body_cache_get(&c, "a", 2, 0.5, &buf, &len));
	free(buf);
	T_CHECK(body_cache_get(&c, "new", 0, 0, &buf, &len));
	free(buf);
	char *long_key = malloc(BODY_CACHE_KEY + 1);
	memset(long_key, 'x', BODY_CACHE_KEY);
	long_key[BODY_CACHE_KEY] = 0;
	body_cache_put(&c, long_key, 0, 0, "long", 4);
	T_CHECK(!body_cache_get(&c, long_key, 0, 0, &buf, &len));
	free(long_key);
	/* bytes: a body over a quarter of BODY_CACHE_BYTES is not kept; four
	 * of a quarter fill it, and a fifth makes room by dropping the least
	 * recently used, not itself; a hole is filled before another goes */
	size_t q = BODY_CACHE_BYTES / 4;
	char *big = calloc(1, q + 2);
	T_CHECK(big != NULL);
	if (big) {
		body_cache_put(&c, "huge", 0, 0, big, q + 1);
		T_CHECK(!body_cache_get(&c, "huge", 0, 0, &buf, &len));
		for (int i = 0; i < 5; i++) {
			snprintf(key, sizeof(key), "q%d", i);
			body_cache_put(&c, key, 0, 0, big, q - 64);
		}
		T_CHECK(c.bytes <= BODY_CACHE_BYTES);
		T_CHECK(!body_cache_get(&c, "q0", 0, 0, &buf, &len));
		T_CHECK(body_cache_get(&c, "q4", 0, 0, &buf, &len) && len == q - 64);
		free(buf);
		T_CHECK(body_cache_get(&c, "q1", 0, 0, &buf, &len));
		free(buf);
		size_t kept = 0, bytes = 0;
		for (size_t i = 0; i < BODY_CACHE_SLOTS; i++) {
			kept += c.slot[i].buf != NULL;
			bytes += c.slot[i].buf ? c.slot[i].len : 0;
		}
		T_EQ_INT(bytes, c.bytes);
		body_cache_put(&c, "small", 0, 0, "s", 1);
		size_t kept2 = 0;
		for (size_t i = 0; i < BODY_CACHE_SLOTS; i++)
			kept2 += c.slot[i].buf != NULL;
		T_EQ_INT(kept2, kept + 1); /* into a hole: nothing else dropped */
		free(big);
	}
	for (size_t i = 0; i < BODY_CACHE_SLOTS; i++)
		free(c.slot[i].buf);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	log_quiet = true;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_clean();
	test_gaps();
	test_not_enough();
	test_text_units();
	test_tracked();
	test_hostile_subject();
	test_idempotent();
	test_step();
	test_api();
	test_api_cache();
	test_api_reads_only();
	test_body_cache();
	util_remove_tree(dir);
	return t_done("test_history");
}
