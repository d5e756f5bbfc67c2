/* expect = METRIC OP NUMBER [, ...]: the parser's cursor, the check of a
 * run's metrics, and the status a run that exited 0 gets from its
 * evidence (OOM kills first, then expect). */
#include "t.h"
#include "t_job.h"
#include "harness/job/expect.h"
#include "harness/report/report.h"
#include "db/store.h"

#include <errno.h>
#include <stdint.h>

/* All of text's comparisons, or the number of errors (negative). */
static int parse_all(const char *text, struct job_expect *v, size_t cap, char *err, size_t errlen)
{
	const char *cur = text;
	int n = 0, bad = 0;
	for (;;) {
		struct job_expect e;
		int r = expect_parse_next(&cur, &e, err, errlen);
		if (r == 1)
			break;
		if (r < 0) {
			bad++;
			continue;
		}
		if ((size_t)n < cap)
			v[n++] = e;
		else
			expect_clear(&e);
	}
	return bad ? -bad : n;
}

static void clear_all(struct job_expect *v, int n)
{
	for (int i = 0; i < n; i++)
		expect_clear(&v[i]);
}

static void test_parse(void)
{
	struct job_expect v[8];
	char err[256] = "";
	int n = parse_all("vmstat.pswpout > 0, pageout.large_folio_pct>=90\n time.wall_s < 1e3 a.b != -2.5", v, 8, err,
			  sizeof(err));
	T_EQ_INT(n, 4);
	if (n == 4) {
		T_EQ_STR(v[0].metric, "vmstat.pswpout");
		T_EQ_INT(v[0].op, EXPECT_GT);
		T_NEAR(v[0].value, 0, 0);
		T_EQ_STR(v[1].metric, "pageout.large_folio_pct");
		T_EQ_INT(v[1].op, EXPECT_GE);
		T_NEAR(v[1].value, 90, 0);
		T_EQ_INT(v[2].op, EXPECT_LT);
		T_EQ_STR(v[2].number, "1e3");
		T_EQ_INT(v[3].op, EXPECT_NE);
		T_NEAR(v[3].value, -2.5, 0);
		clear_all(v, n);
	}
	for (int op = EXPECT_GT; op <= EXPECT_NE; op++) {
		char text[64];
		snprintf(text, sizeof(text), "x.y %s 1", expect_op_name((enum expect_op)op));
		n = parse_all(text, v, 8, err, sizeof(err));
		T_EQ_INT(n, 1);
		if (n == 1) {
			T_EQ_INT(v[0].op, op);
			clear_all(v, n);
		}
	}

	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "vmstat.pswpout", "bad expect \"vmstat.pswpout\": a comparison is missing after vmstat.pswpout" },
		{ "vmstat.pswpout@ > 1", "bad expect \"vmstat.pswpout@ > 1\": expected METRIC OP NUMBER" },
		{ "pswpout > 0", "bad expect \"pswpout > 0\": expected METRIC OP NUMBER" },
		{ "vmstat.pswpout >", "bad expect \"vmstat.pswpout >\": a number is missing after >" },
		{ "vmstat.pswpout => 1", "bad expect \"vmstat.pswpout => 1\": unknown comparison \"=>\"" },
		{ "vmstat.pswpout = 1", "bad expect \"vmstat.pswpout = 1\": unknown comparison \"=\"" },
		{ "vmstat.pswpout 1", "bad expect \"vmstat.pswpout 1\": a comparison is missing after vmstat.pswpout" },
		{ "vmstat.pswpout > 9O", "bad expect \"vmstat.pswpout > 9O\": \"9O\" is not a number" },
		{ "vmstat.pswpout > nan", "\"nan\" is not a number" },
		{ "vmstat.pswpout > inf", "\"inf\" is not a number" },
		{ "vmstat.pswpout > 1e999", "\"1e999\" is not a number" },
		{ "vmstat.* > 0", "bad expect \"vmstat.* > 0\": name one metric, not a pattern" },
		{ "vmstat. > 0", "expected METRIC OP NUMBER" },
		{ ".x > 0", "expected METRIC OP NUMBER" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		n = parse_all(bad[i].text, v, 8, err, sizeof(err));
		T_EQ_INT(n, -1);
		if (!strstr(err, bad[i].err))
			fprintf(stderr, "  %s: got \"%s\"\n", bad[i].text, err);
		T_CHECK(strstr(err, bad[i].err) != NULL);
	}
	/* one bad comparison does not hide the next: both reported, the good one kept */
	const char *cur = "a.b => 1, c.d > x, e.f > 1";
	struct job_expect e;
	T_EQ_INT(expect_parse_next(&cur, &e, err, sizeof(err)), -EINVAL);
	T_EQ_INT(expect_parse_next(&cur, &e, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "\"x\" is not a number") != NULL);
	T_EQ_INT(expect_parse_next(&cur, &e, err, sizeof(err)), 0);
	T_EQ_STR(e.metric, "e.f");
	expect_clear(&e);
	T_EQ_INT(expect_parse_next(&cur, &e, err, sizeof(err)), 1);
	cur = "  ,  ";
	T_EQ_INT(expect_parse_next(&cur, &e, err, sizeof(err)), 1);
}

struct fake_run {
	const char *name[4];
	double value[4];
};

static bool fake_lookup(void *ctx, const char *metric, double *ret)
{
	const struct fake_run *r = ctx;
	for (size_t i = 0; i < 4 && r->name[i]; i++)
		if (strcmp(r->name[i], metric) == 0) {
			*ret = r->value[i];
			return true;
		}
	return false;
}

static void test_check(void)
{
	struct job_expect v[4];
	char err[256];
	int n = parse_all("vmstat.pswpout > 0, pageout.large_folio_pct >= 90", v, 4, err, sizeof(err));
	T_EQ_INT(n, 2);
	struct fake_run good = { { "vmstat.pswpout", "pageout.large_folio_pct" }, { 1200, 90 } };
	struct fake_run low = { { "vmstat.pswpout", "pageout.large_folio_pct" }, { 0, 12.5 } };
	struct fake_run none = { { "vmstat.pswpout" }, { 5 } };
	struct strbuf sb = { 0 };
	T_EQ_INT(expect_check(v, (size_t)n, NULL, fake_lookup, &good, &sb), 0);
	T_EQ_INT(sb.len, 0);
	T_EQ_INT(expect_check(v, (size_t)n, NULL, fake_lookup, &low, &sb), 2);
	T_EQ_STR(sb.buf, "expect vmstat.pswpout > 0: it was 0; expect pageout.large_folio_pct >= 90: it was 12.5");
	sb_free(&sb);
	T_EQ_INT(expect_check(v, (size_t)n, NULL, fake_lookup, &none, &sb), 1);
	T_EQ_STR(sb.buf, "expect pageout.large_folio_pct >= 90: the run recorded no pageout.large_folio_pct");
	sb_free(&sb);
	/* appended after what the buffer holds, with no separator before the first */
	sb_puts(&sb, "run 3: ");
	T_EQ_INT(expect_check(v, (size_t)n, NULL, fake_lookup, &none, &sb), 1);
	T_EQ_STR(sb.buf, "run 3: expect pageout.large_folio_pct >= 90: the run recorded no pageout.large_folio_pct");
	sb_free(&sb);
	T_EQ_INT(expect_check(v, (size_t)n, NULL, fake_lookup, &low, NULL), 2);

	char why[512];

	/* the decision: OOM kills first unless tolerated, then expect */
	enum run_status st = expect_judge(false, 4, v, (size_t)n, "B", fake_lookup, &good, why, sizeof(why));
	T_EQ_INT(st, RUN_OOM_CONTAMINATED);
	T_EQ_STR(why, "memcg OOM killer killed 4 process(es) during the run; oom = tolerate counts such runs");
	st = expect_judge(false, 4, v, (size_t)n, "B", fake_lookup, &low, why, sizeof(why));
	T_EQ_INT(st, RUN_OOM_CONTAMINATED);
	st = expect_judge(true, 4, v, (size_t)n, "B", fake_lookup, &good, why, sizeof(why));
	T_EQ_INT(st, RUN_OK);
	st = expect_judge(true, 4, v, (size_t)n, "B", fake_lookup, &low, why, sizeof(why));
	T_EQ_INT(st, RUN_EXPECT_FAILED);
	T_CHECK(strncmp(why, "expect vmstat.pswpout > 0: it was 0", 35) == 0);
	st = expect_judge(false, 0, v, (size_t)n, "B", fake_lookup, &good, why, sizeof(why));
	T_EQ_INT(st, RUN_OK);
	st = expect_judge(false, 0, NULL, 0, "B", fake_lookup, &low, why, sizeof(why));
	T_EQ_INT(st, RUN_OK);
	/* the words the store records for them */
	T_EQ_STR(run_status_name(RUN_OOM_CONTAMINATED), "oom-contaminated");
	T_EQ_STR(run_status_name(RUN_EXPECT_FAILED), "expect-failed");
	clear_all(v, n);
}

/* The job keys: oom and expect parse, print back, and the default is refuse. */
static void test_job_keys(void)
{
	struct job *j = t_parse_job("[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n"
				    "oom = tolerate\nexpect = vmstat.pswpout > 0,\n  pageout.large_folio_pct>=90\n"
				    "[workload v]\ntype = command\ncommand = true\n");
	T_CHECK(j != NULL);
	if (!j)
		return;
	T_EQ_INT(j->workloads[0].oom, JOB_OOM_TOLERATE);
	T_EQ_INT(j->workloads[0].n_expect, 2);
	T_EQ_INT(j->workloads[1].oom, JOB_OOM_REFUSE);
	T_EQ_INT(j->workloads[1].n_expect, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	job_print(j, f);
	fclose(f);
	T_CHECK(strstr(buf, "oom = tolerate\nexpect = vmstat.pswpout > 0, pageout.large_folio_pct >= 90\n") != NULL);
	struct job *again = t_parse_job(buf);
	T_CHECK(again && again->workloads[0].n_expect == 2 && again->workloads[0].expect[1].op == EXPECT_GE);
	job_free(again);
	free(buf);
	job_free(j);
}

static void test_variant_expect(void)
{
	struct job *j;
	/* expect.VARIANT: for that variant's runs only, printed back as written */
	j = t_parse_job("[job]\nname = t\n[variant A]\nname = 4K\n[variant B]\nname = 64K\n[workload w]\ntype = command\n"
			"command = true\nexpect = vmstat.pswpout > 0\nexpect.64K = pageout.large_folio_pct >= 90, x.y < 1\n"
			"expect.4K = pageout.large_folio_pct == 0\n");
	T_CHECK(j && j->workloads[0].n_expect == 4);
	if (j && j->workloads[0].n_expect == 4) {
		const struct job_expect *x = j->workloads[0].expect;
		T_CHECK(x[0].variant == NULL);
		T_EQ_STR(x[1].variant, "64K");
		T_EQ_STR(x[3].variant, "4K");
		T_CHECK(expect_applies(&x[1], "64K") && !expect_applies(&x[1], "4K") && expect_applies(&x[0], "4K"));
		struct fake_run folios4k = { { "vmstat.pswpout", "pageout.large_folio_pct", "x.y" }, { 10, 0, 0 } };
		struct strbuf why = { 0 };
		T_EQ_INT(expect_check(x, 4, "4K", fake_lookup, &folios4k, &why), 0);
		T_EQ_INT(expect_check(x, 4, "64K", fake_lookup, &folios4k, &why), 1);
		T_EQ_STR(why.buf, "expect pageout.large_folio_pct >= 90: it was 0");
		sb_free(&why);
		char *out = NULL;
		size_t olen = 0;
		FILE *pf = open_memstream(&out, &olen);
		job_print(j, pf);
		fclose(pf);
		T_CHECK(strstr(out, "expect = vmstat.pswpout > 0\nexpect.64K = pageout.large_folio_pct >= 90, x.y < 1\n"
				    "expect.4K = pageout.large_folio_pct == 0\n") != NULL);
		free(out);
	}
	job_free(j);
	/* expect.VARIANT naming no variant */
	struct diags d = { 0 };
	T_EQ_INT(job_parse_string_nocheck("unit.job", "[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\n"
				 "type = command\ncommand = true\nexpect.C = x.y > 0\n", &j, &d), -EINVAL);
	T_EQ_INT(diags_count(&d), 1);
	diags_free(&d);
}

int main(void)
{
	test_parse();
	test_check();
	test_job_keys();
	test_variant_expect();
	return t_done("test_expect");
}
