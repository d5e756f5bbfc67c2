/* expect = METRIC OP NUMBER [, ...]: parsing one comparison at a time
 * with a bounded cursor, and checking a run's metrics against them. */
#include "harness/job/expect.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = { ">", ">=", "<", "<=", "==", "!=" };

const char *expect_op_name(enum expect_op op)
{
	return (size_t)op < ARRAY_SIZE(op_names) ? op_names[op] : "?";
}

static bool metric_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

static bool op_char(char c)
{
	return c == '<' || c == '>' || c == '=' || c == '!';
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* SOURCE.NAME: letters, digits, . _ -, a dot inside, not at either end */
static bool valid_metric(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n);
	return n > 0 && n <= 160 && dot && dot != s && s[n - 1] != '.' && isalnum((unsigned char)s[0]);
}

/* The end of the word at p (after blanks): where a bad comparison's
 * operator or number ends, so parsing resumes at the next one. */
static const char *word_end(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && !blank(*p) && *p != ',')
		p++;
	return p;
}

static int bad(const char **cursor, const char *start, const char *end, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* err = "bad expect \"TEXT\": " + fmt, TEXT from start to end */
static int bad(const char **cursor, const char *start, const char *end, char *err, size_t errlen, const char *fmt, ...)
{
	int shown = (int)(end - start);
	if (shown > 80)
		shown = 80;
	int w = snprintf(err, errlen, "bad expect \"%.*s\": ", shown, start);
	if (w >= 0 && (size_t)w < errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
		va_end(ap);
	}
	*cursor = end;
	return -EINVAL;
}

int expect_parse_next(const char **cursor, struct job_expect *ret, char *err, size_t errlen)
{
	const char *p = *cursor;
	while (blank(*p) || *p == ',')
		p++;
	if (!*p) {
		*cursor = p;
		return 1;
	}
	const char *start = p, *m = p;
	while (metric_char(*p))
		p++;
	size_t mlen = (size_t)(p - m);
	if (*p == '*') {
		/* the rest of the comparison too: OP and NUMBER */
		const char *q = p + 1;
		while (*q == ' ' || *q == '\t')
			q++;
		while (op_char(*q))
			q++;
		return bad(cursor, start, word_end(q), err, errlen, "name one metric, not a pattern");
	}
	if (!valid_metric(m, mlen) || !(blank(*p) || op_char(*p) || !*p)) {
		/* the whole would-be comparison: the word, and OP NUMBER if they follow */
		const char *q = p, *r;
		while (*q && !blank(*q) && *q != ',')
			q++;
		r = q;
		while (*r == ' ' || *r == '\t')
			r++;
		if (op_char(*r)) {
			while (op_char(*r))
				r++;
			q = word_end(r);
		}
		return bad(cursor, start, q, err, errlen,
			   "expected METRIC OP NUMBER, e.g. vmstat.pswpout > 0 (METRIC as SOURCE.NAME; OP one of " EXPECT_OPS ")");
	}
	while (*p == ' ' || *p == '\t')
		p++;
	const char *o = p;
	while (op_char(*p))
		p++;
	size_t olen = (size_t)(p - o);
	int op = -1;
	for (size_t i = 0; i < ARRAY_SIZE(op_names); i++)
		if (olen == strlen(op_names[i]) && memcmp(o, op_names[i], olen) == 0)
			op = (int)i;
	if (op < 0 && olen == 0) {
		/* "METRIC NUMBER": the number belongs to this comparison */
		const char *q = m + mlen;
		if (isdigit((unsigned char)*p) || *p == '-' || *p == '+')
			q = word_end(p);
		return bad(cursor, start, q, err, errlen, "a comparison is missing after %.*s (use one of " EXPECT_OPS ")",
			   (int)mlen, m);
	}
	if (op < 0)
		return bad(cursor, start, word_end(p), err, errlen, "unknown comparison \"%.*s\" (use one of " EXPECT_OPS ")",
			   (int)olen, o);
	while (*p == ' ' || *p == '\t')
		p++;
	const char *num = p;
	p = word_end(p);
	size_t nlen = (size_t)(p - num);
	char nbuf[64];
	double v = NAN;
	char *end = NULL;
	if (nlen == 0)
		return bad(cursor, start, p, err, errlen, "a number is missing after %s", op_names[op]);
	if (nlen < sizeof(nbuf)) {
		memcpy(nbuf, num, nlen);
		nbuf[nlen] = 0;
		errno = 0;
		v = strtod(nbuf, &end);
	}
	if (nlen >= sizeof(nbuf) || *end || errno || !isfinite(v) ||
	    !(isdigit((unsigned char)num[0]) || num[0] == '-' || num[0] == '+' || num[0] == '.'))
		return bad(cursor, start, p, err, errlen, "\"%.*s\" is not a number (e.g. 0, 90 or 2.5)",
			   (int)(nlen > 40 ? 40 : nlen), num);
	struct job_expect e = { .op = (enum expect_op)op, .value = v };
	e.metric = strndup(m, mlen);
	e.number = strdup(nbuf);
	if (!e.metric || !e.number) {
		expect_clear(&e);
		return -ENOMEM;
	}
	*ret = e;
	*cursor = p;
	return 0;
}

void expect_clear(struct job_expect *e)
{
	free(e->metric);
	free(e->number);
	free(e->variant);
	e->metric = e->number = e->variant = NULL;
}

bool expect_applies(const struct job_expect *e, const char *variant)
{
	return !e->variant || !variant || strcmp(e->variant, variant) == 0;
}

bool expect_holds(const struct job_expect *e, double x)
{
	if (isnan(x))
		return false;
	switch (e->op) {
	case EXPECT_GT: return x > e->value;
	case EXPECT_GE: return x >= e->value;
	case EXPECT_LT: return x < e->value;
	case EXPECT_LE: return x <= e->value;
	case EXPECT_EQ: return x == e->value;
	case EXPECT_NE: return x != e->value;
	}
	return false;
}

size_t expect_check(const struct job_expect *v, size_t n, const char *variant, expect_lookup_fn lookup, void *ctx, struct strbuf *reason)
{
	size_t failed = 0, start = reason ? reason->len : 0;
	for (size_t i = 0; i < n; i++) {
		if (!expect_applies(&v[i], variant))
			continue;
		double x;
		bool have = lookup(ctx, v[i].metric, &x);
		if (have && expect_holds(&v[i], x))
			continue;
		failed++;
		if (!reason)
			continue;
		const char *sep = reason->len > start ? "; " : "";
		if (have)
			sb_printf(reason, "%sexpect %s %s %s: it was %.6g", sep, v[i].metric, op_names[v[i].op], v[i].number, x);
		else
			sb_printf(reason, "%sexpect %s %s %s: the run recorded no %s", sep, v[i].metric,
				  op_names[v[i].op], v[i].number, v[i].metric);
	}
	return failed;
}

enum run_status expect_judge(bool tolerate_oom, uint64_t oom_kills, const struct job_expect *v, size_t n,
			 const char *variant, expect_lookup_fn lookup, void *ctx, char *reason, size_t len)
{
	if (oom_kills > 0 && !tolerate_oom) {
		snprintf(reason, len, "memcg OOM killer killed %llu process(es) during the run; oom = tolerate counts such runs",
			 (unsigned long long)oom_kills);
		return RUN_OOM_CONTAMINATED;
	}
	struct strbuf why = { 0 };
	enum run_status st = RUN_OK;
	if (expect_check(v, n, variant, lookup, ctx, &why) > 0) {
		snprintf(reason, len, "%s", why.buf ? why.buf : "");
		st = RUN_EXPECT_FAILED;
	}
	sb_free(&why);
	return st;
}
