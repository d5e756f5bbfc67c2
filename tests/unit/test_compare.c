/* kab compare's input: the RFC 4180 cursor (quotes, CRLF, line breaks in
 * quoted fields, bounds), the long-format reader (column order, pairing,
 * baseline, primary, units and directions, decimals) with its FILE:LINE
 * errors, and a seeded stream of garbage that must never crash it. */
#include "t.h"
#include "harness/report/compare.h"
#include "harness/base/csv.h"
#include "harness/report/report.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static struct csv_record rec;

static int next(struct csv_cursor *c)
{
	return csv_next(c, &rec);
}

static void test_cursor(void)
{
	const char *text = "a, b ,\"c,\"\"d\"\"\"\r\n\n\"multi\nline\",x\r\n  \ntrailing,\nlast";
	struct csv_cursor c = { .p = text, .end = text + strlen(text), .line = 1 };
	T_EQ_INT(next(&c), 1);
	T_EQ_INT(rec.n, 3);
	T_EQ_STR(rec.f[0], "a");
	T_EQ_STR(rec.f[1], "b");
	T_EQ_STR(rec.f[2], "c,\"d\"");
	T_CHECK(rec.quoted[2]);
	T_EQ_INT(rec.line, 1);
	T_EQ_INT(next(&c), 1);
	T_EQ_INT(rec.line, 3);
	T_EQ_STR(rec.f[0], "multi\nline");
	T_EQ_STR(rec.f[1], "x");
	T_EQ_INT(next(&c), 1);
	T_EQ_INT(rec.line, 6);
	T_EQ_INT(rec.n, 2);
	T_EQ_STR(rec.f[1], "");
	T_EQ_INT(next(&c), 1);
	T_EQ_STR(rec.f[0], "last");
	T_EQ_INT(next(&c), 0);

	const char *bad = "\"open\nnever closed";
	c = (struct csv_cursor){ .p = bad, .end = bad + strlen(bad), .line = 1 };
	T_EQ_INT(next(&c), -EINVAL);
	T_EQ_INT(rec.err_line, 1);
	T_CHECK(strstr(rec.err, "unterminated") != NULL);
	T_EQ_INT(next(&c), 0);

	const char *after = "\"a\"b,c\nok,1\n";
	c = (struct csv_cursor){ .p = after, .end = after + strlen(after), .line = 1 };
	T_EQ_INT(next(&c), -EINVAL);
	T_EQ_INT(next(&c), 1);
	T_EQ_STR(rec.f[0], "ok");
	T_EQ_INT(rec.line, 2);

	/* a field of exactly the limit passes, one byte more does not */
	static char big[2 * CSV_FIELD_MAX + 8];
	memset(big, 'x', CSV_FIELD_MAX);
	memcpy(big + CSV_FIELD_MAX, ",y\n", 4);
	c = (struct csv_cursor){ .p = big, .end = big + strlen(big), .line = 1 };
	T_EQ_INT(next(&c), 1);
	T_EQ_INT(strlen(rec.f[0]), CSV_FIELD_MAX);
	memset(big, 'x', CSV_FIELD_MAX + 1);
	memcpy(big + CSV_FIELD_MAX + 1, ",y\n", 4);
	c = (struct csv_cursor){ .p = big, .end = big + strlen(big), .line = 1 };
	T_EQ_INT(next(&c), -EINVAL);

	/* the cursor never reads past end, even without a NUL */
	char no_nul[4] = { 'a', ',', '"', 'b' };
	c = (struct csv_cursor){ .p = no_nul, .end = no_nul + sizeof(no_nul), .line = 1 };
	T_EQ_INT(next(&c), -EINVAL);
}

static struct report *parse_ok(const char *text, const struct compare_opts *o)
{
	struct diags d = { 0 };
	struct report *r = NULL;
	struct compare_opts none = { 0 };
	int e = compare_csv_parse("t.csv", text, strlen(text), o ? o : &none, &r, &d);
	if (e < 0)
		diags_print(&d, stderr);
	T_EQ_INT(e, 0);
	diags_free(&d);
	return r;
}

/* The first problem's line and message. */
static int parse_bad(const char *text, const struct compare_opts *o, char *msg, size_t len)
{
	struct diags d = { 0 };
	struct report *r = NULL;
	struct compare_opts none = { 0 };
	int e = compare_csv_parse("t.csv", text, strlen(text), o ? o : &none, &r, &d);
	T_EQ_INT(e, -EINVAL);
	T_CHECK(r == NULL);
	int line = d.n ? d.v[0].line : -1;
	snprintf(msg, len, "%s", d.n ? d.v[0].msg : "");
	diags_free(&d);
	return line;
}

static void test_reader(void)
{
	struct report *r = parse_ok("value,metric,pair,variant,unit,direction\n"
				    "1.50,x.lat,30,new,ms,\n"
				    "2,x.lat,10,old,,lower\n"
				    "2.25,x.lat,10,new,,\n"
				    "3,x.lat,20,old,,\n"
				    "7,y.count,10,old,,\n"
				    "9,y.count,20,new,,\n",
				    NULL);
	if (r) {
		T_EQ_STR(r->title, "t");
		T_EQ_INT(r->n_variants, 2);
		T_EQ_STR(r->variants[0], "new");
		T_EQ_INT(r->n_workloads, 1);
		struct report_workload *w = &r->w[0];
		T_EQ_STR(w->name, "t");
		T_EQ_INT(w->pairs, 3); /* pair numbers 10, 20, 30 */
		T_EQ_INT(w->n_metrics, 2);
		struct report_metric *m = &w->m[0];
		T_EQ_STR(m->name, "x.lat");
		T_EQ_STR(m->info.unit, "ms");
		T_EQ_INT(m->info.dir, DIRECTION_LOWER);
		T_EQ_INT(m->decimals, 2);
		/* new: 2.25 (10), - (20), 1.50 (30); old: 2 (10), 3 (20), - (30) */
		T_NEAR(m->values[0], 2.25, 0);
		T_CHECK(isnan(m->values[1]));
		T_NEAR(m->values[2], 1.5, 0);
		T_NEAR(m->values[3], 2, 0);
		T_NEAR(m->values[4], 3, 0);
		T_CHECK(isnan(m->values[5]));
		T_EQ_INT(w->m[1].decimals, 0);
		T_EQ_INT(report_analyze(r), 0);
		report_free(r);
	}

	const char *const primary[] = { "x.*" };
	struct compare_opts o = { .baseline = "old", .primary = primary, .n_primary = 1 };
	r = parse_ok("metric,variant,pair,value,workload\nx.a,new,1,1,w1\nx.a,old,1,2,w1\nz.b,new,1,1,w2\nz.b,old,1,2,w2\n", &o);
	if (r) {
		T_EQ_STR(r->variants[0], "old");
		T_EQ_INT(r->n_workloads, 2);
		T_EQ_STR(r->w[1].name, "w2");
		T_CHECK(r->w[0].m[0].primary);
		T_CHECK(!r->w[1].m[0].primary);
		report_free(r);
	}

	/* BOM, CRLF, no final newline, upper-case header */
	r = parse_ok("\xEF\xBB\xBFMetric,Variant,Pair,Value\r\na.b,A,0,1\r\na.b,B,0,2", NULL);
	if (r) {
		T_EQ_INT(r->w[0].pairs, 1);
		report_free(r);
	}
}

static void test_errors(void)
{
	char msg[512];
	T_EQ_INT(parse_bad("", NULL, msg, sizeof(msg)), 1);
	T_CHECK(strstr(msg, "empty file") != NULL);
	T_EQ_INT(parse_bad("metric,variant,value\na.b,A,1\n", NULL, msg, sizeof(msg)), 1);
	T_EQ_STR(msg, "missing column \"pair\" in the header (columns: metric, variant, pair, value; optional: unit, direction, workload)");
	T_EQ_INT(parse_bad("metric,variant,pair,value\na.b,A,1,x\n", NULL, msg, sizeof(msg)), 2);
	T_EQ_INT(parse_bad("metric,variant,pair,value\na.b,A,1,1\na.b,A,2,2\n", NULL, msg, sizeof(msg)), 2);
	T_CHECK(strstr(msg, "only one variant") != NULL);
	T_EQ_INT(parse_bad("metric,variant,pair,value\na.b,A,1,1\na.b,B,1,2\n\na.b,B,1,3\n", NULL, msg, sizeof(msg)), 5);
	T_CHECK(strstr(msg, "(first at line 3)") != NULL);
	T_EQ_INT(parse_bad("metric,variant,pair,value,unit\na.b,A,1,1,s\na.b,B,1,1,ms\n", NULL, msg, sizeof(msg)), 3);
	T_EQ_INT(parse_bad("metric,variant,pair,value\na.b,A,1,1\na.b,B,1,\"2\n", NULL, msg, sizeof(msg)), 3);
	struct compare_opts o = { .baseline = "C" };
	T_EQ_INT(parse_bad("metric,variant,pair,value\na.b,A,1,1\na.b,B,1,2\n", &o, msg, sizeof(msg)), 0);
	T_EQ_STR(msg, "--baseline \"C\" is not a variant in the file (variants: A, B)");
	/* a pair with one side only is not an error */
	struct report *r = parse_ok("metric,variant,pair,value\na.b,A,1,1\na.b,B,2,2\n", NULL);
	if (r) {
		T_EQ_INT(report_analyze(r), 0);
		T_EQ_INT(r->w[0].m[0].cmp[1].pairs, 0);
		report_free(r);
	}
	/* errors stop at a bound */
	struct strbuf sb = { 0 };
	sb_puts(&sb, "metric,variant,pair,value\n");
	for (int i = 0; i < 500; i++)
		sb_puts(&sb, "a.b,A,1,x\n");
	struct diags d = { 0 };
	struct compare_opts none = { 0 };
	T_EQ_INT(compare_csv_parse("t.csv", sb.buf, sb.len, &none, &r, &d), -EINVAL);
	T_CHECK(d.n <= 52);
	diags_free(&d);
	sb_free(&sb);
}

/* Seeded garbage built from CSV-ish pieces: reading, analyzing and
 * rendering must never crash or leak (run under SANITIZE=1). */
static void test_garbage(void)
{
	static const char *const pieces[] = {
		"metric", "variant", "pair", "value", "unit", "direction", "workload", ",", ",", ",", "\n", "\r\n",
		"\"", "\"\"", "a.b", "x.y", "A", "B", "C", "0", "1", "2", "17", "-3.5", "1e9", "nan", "0x1", " ",
		"ms", "lower", "higher", "neutral", "w", "\t", "1.25", "99999999999", "\xEF\xBB\xBF",
	};
	uint64_t s = 42;
	FILE *devnull = fopen("/dev/null", "w");
	size_t parsed = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct strbuf sb = { 0 };
		if (iter % 3)
			sb_puts(&sb, iter % 2 ? "metric,variant,pair,value\n" : "value,pair,variant,metric,unit,direction\n");
		int n = 1 + (int)((s >> 33) % 120);
		for (int k = 0; k < n; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			if (iter % 2 && iter % 3) {
				/* well-formed rows with random content */
				static const char *const metrics[] = { "a.b", "x.y", "vmstat.pswpin", "m" };
				static const char *const variants[] = { "A", "B", "C" };
				static const char *const values[] = { "0", "1", "2.5", "-3", "1e9", "7", "0.001" };
				uint64_t x = s >> 20;
				sb_printf(&sb, "%s,%s,%llu,%s\n", metrics[x % 4], variants[(x >> 4) % 3],
					  (unsigned long long)((x >> 8) % 9), values[(x >> 12) % 7]);
				continue;
			}
			sb_puts(&sb, pieces[(s >> 33) % ARRAY_SIZE(pieces)]);
		}
		struct diags d = { 0 };
		struct report *r = NULL;
		struct compare_opts o = { 0 };
		if (compare_csv_parse("g.csv", sb.buf ? sb.buf : "", sb.len, &o, &r, &d) == 0) {
			parsed++;
			T_EQ_INT(report_analyze(r), 0);
			for (int f = REPORT_TEXT; f <= REPORT_CSV; f++) {
				struct report_opts ro = { .format = (enum report_format)f };
				report_render(r, &ro, devnull);
			}
			report_free(r);
		}
		diags_free(&d);
		sb_free(&sb);
	}
	fclose(devnull);
	T_CHECK(parsed > 0);
}

int main(void)
{
	test_cursor();
	test_reader();
	test_errors();
	test_garbage();
	return t_done("test_compare");
}
