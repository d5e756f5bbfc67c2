/* The sysbench report parser against output captured from sysbench 1.0.20
 * on MariaDB 10.11 (tests/data/sysbench-*) and against broken reports; the
 * check of the workload's keys, each bad one at its line. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "harness/job/job.h"
#include "t.h"
#include "harness/base/util.h"
#include "workloads/wl.h"
#include "workloads/wl_sysbench.h"

static char *fixture(const char *name)
{
	const char *dir = getenv("KAB_TEST_DATA");
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	char *text;
	if (util_read_file(path, &text, NULL) < 0) {
		fprintf(stderr, "cannot open fixture %s\n", path);
		exit(2);
	}
	return text;
}

static void test_read_write(void)
{
	char *text = fixture("sysbench-oltp_read_write.out");
	struct wl_sysbench_report r;
	T_EQ_INT(wl_sysbench_parse_report(text, &r), 0);
	T_NEAR(r.transactions, 2465, 0);
	T_NEAR(r.tps, 492.37, 0);
	T_NEAR(r.queries, 49415, 0);
	T_NEAR(r.qps, 9870.40, 0);
	T_NEAR(r.errors, 7, 0);
	T_NEAR(r.reconnects, 0, 0);
	T_NEAR(r.total_time_s, 5.0058, 0);
	T_NEAR(r.lat_min_ms, 1.45, 0);
	T_NEAR(r.lat_avg_ms, 4.05, 0);
	T_NEAR(r.lat_max_ms, 19.71, 0);
	T_NEAR(r.lat_pct_ms, 7.84, 0);
	T_NEAR(r.percentile, 95, 0);
	free(text);
}

static void test_other_tests(void)
{
	struct wl_sysbench_report r;
	char *text = fixture("sysbench-oltp_point_select.out");
	T_EQ_INT(wl_sysbench_parse_report(text, &r), 0);
	T_NEAR(r.tps, 19293.97, 0);
	T_NEAR(r.qps, 19293.97, 0);
	T_NEAR(r.lat_pct_ms, 0.17, 0);
	free(text);

	text = fixture("sysbench-oltp_write_only.out");
	T_EQ_INT(wl_sysbench_parse_report(text, &r), 0);
	T_NEAR(r.tps, 1329.10, 0);
	T_NEAR(r.errors, 1, 0);
	T_NEAR(r.lat_max_ms, 16.64, 0);
	free(text);

	/* --percentile=99: the percentile line is read with its number */
	text = fixture("sysbench-oltp_read_only-p99.out");
	T_EQ_INT(wl_sysbench_parse_report(text, &r), 0);
	T_NEAR(r.tps, 706.12, 0);
	T_NEAR(r.percentile, 99, 0);
	T_NEAR(r.lat_pct_ms, 8.13, 0);
	free(text);
}

/* The server was killed -9 two seconds into the run: interim reports and
 * FATAL lines, no final report. */
static void test_server_killed(void)
{
	char *text = fixture("sysbench-server-killed.out");
	struct wl_sysbench_report r = { .tps = -1 };
	T_EQ_INT(wl_sysbench_parse_report(text, &r), -ENODATA);
	T_NEAR(r.tps, -1, 0); /* untouched on failure */
	free(text);
}

static void test_broken(void)
{
	struct wl_sysbench_report r;
	char *text = fixture("sysbench-oltp_read_write.out");
	/* cut in the middle of the latency block: no max, no percentile */
	char *cut = strstr(text, "         max:");
	T_CHECK(cut != NULL);
	if (cut) {
		*cut = 0;
		T_EQ_INT(wl_sysbench_parse_report(text, &r), -ENODATA);
	}
	free(text);

	static const char *const bad[] = {
		"SQL statistics:\n    transactions:   12x   (4.0 per sec.)\n",
		"SQL statistics:\n    transactions:   12   (4.0 per second)\n",
		"SQL statistics:\n    transactions:   12   (abc per sec.)\n",
		"SQL statistics:\nLatency (ms):\n         avg:   1.5 ms\n",
		"SQL statistics:\nLatency (ms):\n         Xth percentile:   1.5\n",
		"SQL statistics:\nGeneral statistics:\n    total time:   5.0\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		T_EQ_INT(wl_sysbench_parse_report(bad[i], &r), -EINVAL);
	T_EQ_INT(wl_sysbench_parse_report("", &r), -ENODATA);

	/* figures outside their section do not count */
	T_EQ_INT(wl_sysbench_parse_report("transactions: 1 (1.0 per sec.)\n", &r), -ENODATA);
}

/* A report as the wrapper leaves it in the run's stdout, with CRLF line
 * ends and interim lines before it, parses the same. */
static void test_crlf(void)
{
	char *text = fixture("sysbench-oltp_read_write.out");
	struct strbuf sb = { 0 };
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			sb_puts(&sb, "\r");
		sb_append(&sb, p, 1);
	}
	struct wl_sysbench_report r;
	T_EQ_INT(wl_sysbench_parse_report(sb.buf, &r), 0);
	T_NEAR(r.tps, 492.37, 0);
	T_NEAR(r.total_time_s, 5.0058, 0);
	sb_free(&sb);
	free(text);
}

/* The diag containing needle: its line, or -1 when there is none. */
static int diag_line(const struct diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, needle))
			return d->v[i].line;
	return -1;
}

static void test_check(void)
{
	const char *text = "[job]\nname = t\n[variant A]\n[variant B]\n[workload db]\ntype = sysbench-oltp\n"
			   "tables = 0\ntable_size = 3000000000\nduration = 2.5s\nthreads = 2\nbuffer_pool = 4M\n"
			   "test = oltp_raed_write\nreport_interval = 0\n";
	struct diags d = { 0 };
	struct job *j = NULL;
	T_EQ_INT(job_parse_string_nocheck("t.job", text, &j, &d), 0);
	diags_free(&d);
	const struct wl_ops *ops = wl_find("sysbench-oltp");
	T_CHECK(j && ops);
	if (!j || !ops)
		return;
	T_CHECK(ops->check(&j->workloads[0], "t.job", &d) < 0);
	T_EQ_INT(diag_line(&d, "tables \"0\" must be a whole number from 1 to 100000"), 7);
	T_EQ_INT(diag_line(&d, "table_size \"3000000000\" must be a whole number from 1 to 2147483647 (sysbench 1.0 reads it as a 32-bit int)"), 8);
	T_EQ_INT(diag_line(&d, "duration \"2.5s\" must be whole seconds from 1 s to 7 days (sysbench counts in seconds), e.g. 300s or 5m"), 9);
	T_EQ_INT(diag_line(&d, "threads"), -1);
	T_EQ_INT(diag_line(&d, "buffer_pool \"4M\" must be a size of at least 8M, e.g. 512M"), 11);
	T_EQ_INT(diag_line(&d, "test \"oltp_raed_write\" is not one of oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select (did you mean \"oltp_read_write\"?)"), 12);
	T_EQ_INT(diag_line(&d, "report_interval"), -1);
	diags_free(&d);
	job_free(j);
}

/* before() gives each run a fresh copy of the prepared datadir; without
 * one the run fails with a message naming it */
static void test_before(void)
{
	const struct wl_ops *ops = wl_find("sysbench-oltp");
	T_CHECK(ops && ops->before);
	if (!ops || !ops->before)
		return;
	char dir[] = "/tmp/kab-test-sysbench-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	char path[200], want[600];
	struct wl_ctx c = { .jobdir = dir };
	struct strbuf err = { 0 };
	T_EQ_INT(ops->before(&c, &err), -EIO);
	snprintf(want, sizeof(want), "cannot open %s/pristine: %s", dir, strerror(ENOENT));
	T_EQ_STR(err.buf, want);
	sb_free(&err);
	snprintf(path, sizeof(path), "%s/pristine", dir);
	T_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/pristine/db", dir);
	T_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/pristine/db/t.frm", dir);
	FILE *f = fopen(path, "w");
	T_CHECK(f && fputs("rows\n", f) >= 0 && fclose(f) == 0);
	for (int round = 0; round < 2; round++) { /* the second replaces the first run's copy */
		T_EQ_INT(ops->before(&c, &err), 0);
		T_EQ_INT(err.len, 0);
		sb_free(&err);
		snprintf(path, sizeof(path), "%s/run/db/t.frm", dir);
		char *text = NULL;
		T_CHECK(util_read_file(path, &text, NULL) >= 0);
		T_EQ_STR(text, "rows\n");
		free(text);
	}
	T_EQ_INT(util_remove_tree(dir), 0);
}

int main(void)
{
	test_read_write();
	test_other_tests();
	test_server_killed();
	test_broken();
	test_crlf();
	test_check();
	test_before();
	return t_done("test_wl_sysbench");
}
