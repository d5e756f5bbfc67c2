/* Paging of kabd's lists (api_page.c) and the handlers that page: the
 * parameters and their 400s, GET /jobs/ID/runs walked page by page (every
 * run once, in order, each page within its row and byte caps), GET /jobs,
 * GET /jobs/ID's progress counted by the database, with its boots, and a
 * long sampled series thinned under its cap. */
#include "t_job.h"
#include "harness/cli/client.h"
#include "harness/daemon/api.h"
#include "harness/daemon/api_page.h"
#include "harness/job/job_store.h"
#include "db/series.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char job_text[] = "[job]\nname = paged\npairs = 3\n"
			       "[variant A]\nname = a\n[variant B]\nname = b\n"
			       "[workload w]\ntype = command\ncommand = true\n";

typedef void (*handler_t)(struct api *, const struct httpd_req *, struct httpd_resp *);

static int call(handler_t fn, const char *db, int64_t id, const char *const *args, struct httpd_resp *rs)
{
	struct api a = { .db_path = db };
	struct httpd_req rq = { .method = "GET", .path = "/jobs", .id = id, .args = args };
	sb_free(&rs->body);
	*rs = (struct httpd_resp){ 0 };
	fn(&a, &rq, rs);
	return rs->status;
}

static bool has(const struct httpd_resp *rs, const char *s)
{
	return rs->body.buf && strstr(rs->body.buf, s);
}

/* The page's next_after; 0 for null, -1 when there is none. */
static long long next_after(const struct httpd_resp *rs)
{
	const char *p = rs->body.buf ? strstr(rs->body.buf, "\"next_after\": ") : NULL;
	if (!p)
		return -1;
	p += strlen("\"next_after\": ");
	return strncmp(p, "null", 4) == 0 ? 0 : strtoll(p, NULL, 10);
}

static void test_parse(void)
{
	static const char *const keys[] = { "limit", "after" };
	static const struct {
		const char *args[5];
		int status;
		size_t limit;
		int64_t after;
		const char *says;
	} cases[] = {
		{ { NULL }, 0, API_PAGE_DEFAULT, 0, NULL },
		{ { "limit", "1", NULL }, 0, 1, 0, NULL },
		{ { "limit", "500", "after", "7", NULL }, 0, 500, 7, NULL },
		{ { "limit", "501", NULL }, 0, API_PAGE_MAX, 0, NULL },
		{ { "limit", "4000000000", NULL }, 0, API_PAGE_MAX, 0, NULL },
		{ { "limit", "0", NULL }, 400, 0, 0, "limit must be a number from 1 to 500" },
		{ { "limit", "-1", NULL }, 400, 0, 0, "limit must be" },
		{ { "limit", "ten", NULL }, 400, 0, 0, "limit must be" },
		{ { "limit", "", NULL }, 400, 0, 0, "limit must be" },
		{ { "limit", "5 ", NULL }, 400, 0, 0, "limit must be" },
		{ { "limit", "99999999999999999999999", NULL }, 400, 0, 0, "limit must be" },
		{ { "after", "0", NULL }, 400, 0, 0, "after must be an id" },
		{ { "after", "-3", NULL }, 400, 0, 0, "after must be an id" },
		{ { "after", "x", NULL }, 400, 0, 0, "after must be an id" },
		{ { "after", "9223372036854775808", NULL }, 400, 0, 0, "after must be an id" },
		{ { "offset", "5", NULL }, 400, 0, 0, "unknown parameter \\\"offset\\\" (this list takes limit and after)" },
		{ { "limit", "5", "limit", "6", NULL }, 400, 0, 0, "parameter \\\"limit\\\" is given twice" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct httpd_req rq = { .method = "GET", .args = cases[i].args };
		struct httpd_resp rs = { 0 };
		struct api_page p = { .limit = 12345, .after = 12345 };
		int r = api_page_parse(&rq, keys, ARRAY_SIZE(keys), &p, &rs);
		if (cases[i].status == 0) {
			T_EQ_INT(r, 0);
			T_EQ_INT(p.limit, cases[i].limit);
			T_EQ_INT(p.after, cases[i].after);
			T_EQ_INT(rs.body.len, 0);
		} else {
			T_EQ_INT(r, -EINVAL);
			T_EQ_INT(rs.status, cases[i].status);
			T_CHECK(has(&rs, cases[i].says));
			if (!has(&rs, cases[i].says))
				fprintf(stderr, "  case %zu said: %s", i, rs.body.buf ? rs.body.buf : "(nothing)");
			T_EQ_INT(p.limit, 12345); /* untouched on failure */
		}
		sb_free(&rs.body);
	}
	static const char *const three[] = { "format", "limit", "after" };
	static const char *const unknown[] = { "job", "x", NULL };
	struct httpd_req rq = { .method = "GET", .args = unknown };
	struct httpd_resp rs = { 0 };
	struct api_page p;
	T_EQ_INT(api_page_parse(&rq, three, 3, &p, &rs), -EINVAL);
	T_CHECK(has(&rs, "(this list takes format, limit and after)"));
	sb_free(&rs.body);

	struct api_page pg = { .limit = 3 };
	T_CHECK(api_page_room(&pg, 2, 0));
	T_CHECK(!api_page_room(&pg, 3, 0));
	T_CHECK(api_page_room(&pg, 0, API_PAGE_BYTES - 1));
	T_CHECK(!api_page_room(&pg, 0, API_PAGE_BYTES));
	/* kab asks for pages of kabd's largest size */
	T_EQ_INT(CLIENT_PAGE_MAX, API_PAGE_MAX);
}

static void exec_sql(const char *db, const char *sql)
{
	sqlite3 *h = NULL;
	char *err = NULL;
	T_EQ_INT(sqlite3_open(db, &h), SQLITE_OK);
	sqlite3_busy_timeout(h, 5000);
	int rc = sqlite3_exec(h, sql, NULL, NULL, &err);
	T_EQ_INT(rc, SQLITE_OK);
	if (rc != SQLITE_OK)
		fprintf(stderr, "  sql: %s\n", err ? err : "?");
	sqlite3_free(err);
	sqlite3_close(h);
}

#define N_RUNS 1201

/* A job with N_RUNS runs: one step each, run i of step i; every 100th
 * run failed, with a reason, and without an exit code; the others ok.
 * Run 7's settings are longer than a run keeps (cut at 6143 characters). */
static int64_t make_job(const char *db)
{
	struct store *st;
	T_EQ_INT(store_open(db, &st), 0);
	struct job *j = t_parse_job(job_text);
	int64_t id = 0;
	T_CHECK(j != NULL);
	if (j)
		T_EQ_INT(job_store_create(st, j, &id), 0);
	job_free(j);
	store_close(st);
	char sql[4096];
	snprintf(sql, sizeof(sql),
		 "BEGIN;"
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO steps (id, job_id, seq, pair, variant_idx, workload_idx, status)"
		 " SELECT i, %lld, i - 1, (i - 1) / 2, (i - 1) %% 2, 0, 'finished' FROM n;"
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO runs (id, job_id, step_id, pair, variant_idx, workload_idx, status, exit_code, reason,"
		 " started, finished, kab_version, schema_version, kernel_release, boot_id, cmdline, cpus, mem_total,"
		 " settings, stdout_tail)"
		 " SELECT i, %lld, i, (i - 1) / 2, (i - 1) %% 2, 0, CASE WHEN i %% 100 = 0 THEN 'failed' ELSE 'ok' END,"
		 " CASE WHEN i %% 100 = 0 THEN NULL ELSE 0 END, CASE WHEN i %% 100 = 0 THEN 'exit 3' END,"
		 " 1.7e9 + i, 1.7e9 + i + 0.5, '0.1', 12, '6.18.0', 'boot', 'ro quiet', 2, 1024,"
		 " CASE WHEN i = 7 THEN replace(hex(zeroblob(3500)), '00', 'ab') || 'END' ELSE 'vm/swappiness=60' END,"
		 " 'stdout is not listed'"
		 " FROM n;"
		 "COMMIT;",
		 N_RUNS, (long long)id, N_RUNS, (long long)id);
	exec_sql(db, sql);
	return id;
}

/* Walks GET /jobs/ID/runs with limit (NULL: none given), checking every
 * page; the number of pages, or -1 when a run came twice or out of order
 * or a page broke its caps. */
static int walk(const char *db, int64_t job, const char *limit, size_t want_rows, size_t *ret_seen)
{
	struct httpd_resp rs = { 0 };
	long long after = 0, expect = 1;
	int pages = 0;
	size_t seen = 0;
	char as[32];
	do {
		const char *args[5] = { NULL };
		size_t k = 0;
		if (limit) {
			args[k++] = "limit";
			args[k++] = limit;
		}
		if (after) {
			snprintf(as, sizeof(as), "%lld", after);
			args[k++] = "after";
			args[k++] = as;
		}
		if (call(api_job_runs, db, job, args, &rs) != 200)
			return -1;
		pages++;
		size_t rows = 0;
		for (const char *p = rs.body.buf; (p = strstr(p, "\n  {\"id\": ")); p++, rows++) {
			long long id = strtoll(p + strlen("\n  {\"id\": "), NULL, 10);
			if (id != expect++)
				return -1;
		}
		if (rows > want_rows || rs.body.len > API_PAGE_BYTES + 32 * 1024)
			return -1;
		seen += rows;
		after = next_after(&rs);
		if (after < 0 || (after && after != expect - 1))
			return -1;
	} while (after && pages < 5000);
	sb_free(&rs.body);
	*ret_seen = seen;
	return pages;
}

static void test_runs(const char *db, int64_t job)
{
	struct httpd_resp rs = { 0 };
	static const char *const none[] = { NULL };
	T_EQ_INT(call(api_job_runs, db, job, none, &rs), 200);
	T_CHECK(has(&rs, "\"job\": "));
	T_CHECK(has(&rs, "{\"id\": 1, \"step\": 1, \"pair\": 1, \"variant\": \"a\", \"workload\": \"w\", \"status\": \"ok\", \"reason\": null, \"exit_code\": 0,"));
	T_CHECK(has(&rs, "\"provenance\": {\"kab_version\": \"0.1\", \"kernel_release\": \"6.18.0\", \"boot_id\": \"boot\", \"cmdline\": \"ro quiet\", \"cpus\": 2, \"mem_total\": 1024,"));
	T_CHECK(has(&rs, "\"settings\": \"vm/swappiness=60\", \"conditioning\": null, \"memory_max\": 0}}"));
	T_CHECK(!has(&rs, "stdout is not listed"));
	T_CHECK(!has(&rs, "END")); /* run 7's settings, cut */
	T_CHECK(has(&rs, "\"settings\": \"abab"));
	T_EQ_INT(next_after(&rs), API_PAGE_DEFAULT);
	T_CHECK(rs.body.len > 0 && rs.body.buf[rs.body.len - 1] == '\n');

	size_t seen = 0;
	T_EQ_INT(walk(db, job, NULL, API_PAGE_DEFAULT, &seen), (N_RUNS + API_PAGE_DEFAULT - 1) / API_PAGE_DEFAULT);
	T_EQ_INT(seen, N_RUNS);
	T_EQ_INT(walk(db, job, "500", 500, &seen), 3);
	T_EQ_INT(seen, N_RUNS);
	T_EQ_INT(walk(db, job, "1000000", 500, &seen), 3); /* taken as 500 */
	T_EQ_INT(seen, N_RUNS);
	T_EQ_INT(walk(db, job, "1", 1, &seen), N_RUNS);
	T_EQ_INT(seen, N_RUNS);

	/* a failed run: its reason, no exit code */
	static const char *const at99[] = { "limit", "1", "after", "99", NULL };
	T_EQ_INT(call(api_job_runs, db, job, at99, &rs), 200);
	T_CHECK(has(&rs, "{\"id\": 100, \"step\": 100, \"pair\": 50, \"variant\": \"b\", \"workload\": \"w\", \"status\": \"failed\", \"reason\": \"exit 3\", \"exit_code\": null,"));
	T_EQ_INT(next_after(&rs), 100);
	/* past the last run: none, and no page after */
	static const char *const past[] = { "after", "1201", NULL };
	T_EQ_INT(call(api_job_runs, db, job, past, &rs), 200);
	T_CHECK(has(&rs, "\"runs\": [\n]"));
	T_EQ_INT(next_after(&rs), 0);

	static const char *const bad[] = { "limit", "0", NULL };
	T_EQ_INT(call(api_job_runs, db, job, bad, &rs), 400);
	T_CHECK(has(&rs, "limit must be"));
	static const char *const unknown[] = { "page", "2", NULL };
	T_EQ_INT(call(api_job_runs, db, job, unknown, &rs), 400);
	T_CHECK(has(&rs, "unknown parameter \\\"page\\\""));
	T_EQ_INT(call(api_job_runs, db, 999, none, &rs), 404);
	sb_free(&rs.body);
}

/* Runs as large as a run's fields allow: a page of 500 stops at
 * API_PAGE_BYTES, and the walk still gives every run once. */
static void test_runs_bytes(const char *db, int64_t job)
{
	exec_sql(db, "UPDATE runs SET settings = replace(hex(zeroblob(3100)), '00', 'xy'),"
		     " cmdline = replace(hex(zeroblob(510)), '00', 'c=')");
	struct httpd_resp rs = { 0 };
	static const char *const max[] = { "limit", "500", NULL };
	T_EQ_INT(call(api_job_runs, db, job, max, &rs), 200);
	size_t rows = 0;
	for (const char *p = rs.body.buf; p && (p = strstr(p, "\n  {\"id\": ")); p++)
		rows++;
	T_CHECK(rows > 100 && rows < 500);
	T_CHECK(rs.body.len >= API_PAGE_BYTES && rs.body.len < API_PAGE_BYTES + 16 * 1024);
	T_EQ_INT(next_after(&rs), (long long)rows);
	sb_free(&rs.body);
	size_t seen = 0;
	T_CHECK(walk(db, job, "500", 500, &seen) > 3);
	T_EQ_INT(seen, N_RUNS);
}

static void test_jobs_list(const char *db)
{
	struct store *st;
	T_EQ_INT(store_open(db, &st), 0);
	for (int i = 0; i < 2; i++) {
		struct job *j = t_parse_job(job_text);
		int64_t id;
		if (j)
			T_EQ_INT(job_store_create(st, j, &id), 0);
		job_free(j);
	}
	store_close(st);
	struct httpd_resp rs = { 0 };
	static const char *const two[] = { "limit", "2", NULL };
	T_EQ_INT(call(api_jobs_list, db, 0, two, &rs), 200);
	T_CHECK(has(&rs, "{\"id\": 3,") && has(&rs, "{\"id\": 2,") && !has(&rs, "{\"id\": 1,"));
	T_EQ_INT(next_after(&rs), 2);
	static const char *const rest[] = { "limit", "2", "after", "2", NULL };
	T_EQ_INT(call(api_jobs_list, db, 0, rest, &rs), 200);
	T_CHECK(has(&rs, "{\"id\": 1,") && !has(&rs, "{\"id\": 2,"));
	T_EQ_INT(next_after(&rs), 0);
	static const char *const bad[] = { "after", "x", NULL };
	T_EQ_INT(call(api_jobs_list, db, 0, bad, &rs), 400);
	T_CHECK(has(&rs, "after must be an id"));
	sb_free(&rs.body);
}

/* GET /jobs/ID: the progress from the steps' counts, the started step
 * latest in the plan as the current one, and the boots, in order. */
static void test_job_get(const char *db, int64_t job)
{
	exec_sql(db, "UPDATE steps SET status = 'aborted' WHERE id IN (2, 3);"
		     "UPDATE steps SET status = 'skipped' WHERE id = 4;"
		     "UPDATE steps SET status = 'boot-failed' WHERE id = 5;"
		     "UPDATE steps SET status = 'pending' WHERE id > 1190;"
		     "UPDATE steps SET status = 'started' WHERE id IN (1189, 1190);"
		     "UPDATE steps SET status = 'from-the-future' WHERE id = 6;"
		     "INSERT INTO builds (id, created, status, tree, base_ref, base_sha, config_source, config_hash,"
		     " inputs_key, kab_version, schema_version) VALUES (1, 1, 'ok', 't', 'r', 's', 'c', 'h', 'k', '0.1', 12);"
		     "INSERT INTO boots (job_id, slot, variant_idx, build_id, method, status, from_boot_id, switch_at,"
		     " cmdline, boot_id) VALUES (1, 0, 0, 1, 'kexec', 'ok', 'x', 1.7e9, 'c', 'b0'),"
		     " (1, 1, 1, 1, 'kexec', 'failed', 'b0', 1.7e9 + 60, 'c', NULL);");
	struct httpd_resp rs = { 0 };
	static const char *const none[] = { NULL };
	T_EQ_INT(call(api_job_get, db, job, none, &rs), 200);
	/* 1183 finished and 2 aborted; 1 skipped, 1 boot-failed; 1 unknown, 2 started, 11 pending */
	T_CHECK(has(&rs, "\"progress\": {\"runs_done\": 1185, \"runs_skipped\": 2, \"runs_total\": 1201, \"current\": {\"seq\": 1189, \"pair\": 595, \"variant\": \"b\", \"workload\": \"w\"}"));
	T_CHECK(has(&rs, "\"boots\": [{\"slot\": 1, \"variant\": \"a\", \"build\": 1, \"method\": \"kexec\", \"status\": \"ok\", \"reason\": null, \"boot_id\": \"b0\""));
	T_CHECK(has(&rs, "}, {\"slot\": 2, \"variant\": \"b\", \"build\": 1, \"method\": \"kexec\", \"status\": \"failed\", \"reason\": null, \"boot_id\": null"));
	if (!has(&rs, "\"runs_done\": 1185"))
		fprintf(stderr, "  GET /jobs/%lld: %s", (long long)job, rs.body.buf ? rs.body.buf : "(nothing)");
	sb_free(&rs.body);
}

static void put_series(const char *db, int64_t run, const char *metric, const int64_t *v, size_t n)
{
	uint8_t *blob = NULL;
	size_t len = 0;
	T_EQ_INT(series_encode(v, n, &blob, &len), 0);
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	T_EQ_INT(sqlite3_open(db, &h), SQLITE_OK);
	T_EQ_INT(sqlite3_prepare_v2(h, "INSERT INTO samples (run_id, metric, n, data) VALUES (?, ?, ?, ?)", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)n);
	sqlite3_bind_blob(st, 4, blob, (int)len, SQLITE_STATIC);
	T_EQ_INT(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(h);
	free(blob);
}

/* A series of 50,000 samples comes as every third one and the last (at
 * most 20,000 points); a short one whole. */
static void test_samples(const char *db)
{
	size_t n = 50000;
	int64_t *t = calloc(n, sizeof(*t)), *v = calloc(n, sizeof(*v));
	T_CHECK(t && v);
	if (!t || !v)
		goto out;
	for (size_t i = 0; i < n; i++) {
		t[i] = (int64_t)i * 100000000;
		v[i] = (int64_t)i * 3;
	}
	put_series(db, 1, "t_ns", t, n);
	put_series(db, 1, "vmstat.pswpout", v, n);
	put_series(db, 2, "t_ns", t, 5);
	put_series(db, 2, "vmstat.pswpout", v, 5);
	struct httpd_resp rs = { 0 };
	static const char *const metric[] = { "metric", "vmstat.pswpout", NULL };
	T_EQ_INT(call(api_run_samples, db, 1, metric, &rs), 200);
	T_CHECK(has(&rs, "\"n\": 50000, \"stride\": 3, \"t_s\": [0.000000, 0.300000, 0.600000,"));
	T_CHECK(has(&rs, ", 4999.800000, 4999.900000], \"values\": [0, 9, 18,"));
	T_CHECK(has(&rs, ", 149994, 149997]}"));
	size_t commas = 0;
	const char *vals = rs.body.buf ? strstr(rs.body.buf, "\"values\": [") : NULL;
	for (const char *p = vals; p && *p; p++)
		commas += *p == ',';
	T_EQ_INT(commas + 1, 16668); /* 0, 3, ..., 49998 and 49999 */
	T_CHECK(rs.body.len < API_PAGE_BYTES);
	T_EQ_INT(call(api_run_samples, db, 2, metric, &rs), 200);
	T_CHECK(has(&rs, "\"n\": 5, \"stride\": 1, \"t_s\": [0.000000, 0.100000, 0.200000, 0.300000, 0.400000], \"values\": [0, 3, 6, 9, 12]}"));
	sb_free(&rs.body);
out:
	free(t);
	free(v);
}

int main(void)
{
	log_quiet = true;
	test_parse();
	char db[64];
	t_db_path(db, sizeof(db), "/tmp/kab-unit-page-XXXXXX", "KAB_UNIT_KEEP");
	int64_t job = make_job(db);
	T_EQ_INT(job, 1);
	test_runs(db, job);
	test_job_get(db, job);
	test_jobs_list(db);
	test_runs_bytes(db, job);
	test_samples(db);
	if (!getenv("KAB_UNIT_KEEP")) {
		unlink(db);
		char side[80];
		snprintf(side, sizeof(side), "%s-wal", db);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", db);
		unlink(side);
	}
	return t_done("test_api_page");
}
