/* kab compare's input: long-format CSV (RFC 4180: commas, fields quoted
 * with '"' and "" for a quote inside, CRLF or LF line ends, line breaks
 * inside quoted fields), read by a bounded cursor. Every problem is
 * reported as FILE:LINE with what to do; reading goes on so that all of
 * them show (up to ERRORS_MAX). A pair with one side missing is not an
 * error: the statistics then treat the metric as unpaired. */
#include "harness/report/compare.h"
#include "harness/base/csv.h"
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define METRIC_NAME_MAX 127
#define VARIANT_NAME_MAX 63
#define METRICS_MAX 4096
#define VARIANTS_MAX 64
#define WORKLOADS_MAX 64
#define PAIR_NUMBER_MAX 1000000000ull
#define CELLS_MAX (1u << 22)
#define ERRORS_MAX 50

enum col { COL_METRIC, COL_VARIANT, COL_PAIR, COL_VALUE, COL_UNIT, COL_DIRECTION, COL_WORKLOAD, N_COL };
static const char *const col_names[N_COL] = { "metric", "variant", "pair", "value", "unit", "direction", "workload" };
#define N_REQUIRED 4
#define COLUMNS_HELP "columns: metric, variant, pair, value; optional: unit, direction, workload"

/* Strings seen in the file, numbered in order of first appearance. */
struct intern {
	char **s;
	int *line;
	size_t n, cap;
	uint32_t *slot;  /* index + 1; 0: empty */
	size_t nslot;
};

struct row {
	uint32_t w, m, v;
	int line;
	int decimals;
	uint64_t pair;
	double value;
};

struct parser {
	const char *file;
	struct diags *d;
	size_t errors;
	bool oom;
	struct csv_cursor c;
	int col[N_COL];
	size_t n_cols;
	struct intern metrics, variants, workloads;
	char **unit;       /* per metric, NULL: none given */
	int *unit_line;
	int *dir; /* per metric, an enum direction; -1: none given */
	int *dir_line;
	struct row *rows;
	size_t n_rows, cap_rows;
};

static void err(struct parser *ps, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err(struct parser *ps, int line, const char *fmt, ...)
{
	if (ps->errors > ERRORS_MAX)
		return;
	if (++ps->errors > ERRORS_MAX) {
		diags_add(ps->d, ps->file, 0, "more than %d problems; fix these first", ERRORS_MAX);
		return;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* quoted text from the file stays on the message's one line */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	diags_add(ps->d, ps->file, line, "%s", msg);
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int intern_grow(struct intern *t)
{
	size_t nslot = t->nslot ? 2 * t->nslot : 64;
	uint32_t *slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = hash(t->s[i]) & (nslot - 1);
		while (slot[k])
			k = (k + 1) & (nslot - 1);
		slot[k] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* The number of s, adding it if new: 0 found, 1 added, -ENOMEM, -E2BIG
 * when max strings are there already. */
static int intern_get(struct intern *t, const char *s, int line, size_t max, uint32_t *ret)
{
	if (2 * (t->n + 1) > t->nslot && intern_grow(t) < 0)
		return -ENOMEM;
	size_t k = hash(s) & (t->nslot - 1);
	for (; t->slot[k]; k = (k + 1) & (t->nslot - 1))
		if (strcmp(t->s[t->slot[k] - 1], s) == 0) {
			*ret = t->slot[k] - 1;
			return 0;
		}
	if (t->n == max)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **ns = realloc(t->s, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->s = ns;
		int *nl = realloc(t->line, cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		t->line = nl;
		t->cap = cap;
	}
	if (!(t->s[t->n] = strdup(s)))
		return -ENOMEM;
	t->line[t->n] = line;
	t->slot[k] = (uint32_t)t->n + 1;
	*ret = (uint32_t)t->n++;
	return 1;
}

static void intern_free(struct intern *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->line);
	free(t->slot);
}

/* csv_next, reporting a malformed record. */
static int next_record(struct parser *ps, struct csv_record *rec)
{
	int r = csv_next(&ps->c, rec);
	if (r == -EINVAL)
		err(ps, rec->err_line, "%s", rec->err);
	return r;
}

static bool read_header(struct parser *ps, struct csv_record *rec)
{
	for (size_t c = 0; c < N_COL; c++)
		ps->col[c] = -1;
	int r = next_record(ps, rec);
	if (r == 0) {
		err(ps, 1, "empty file: expected a header line such as metric,variant,pair,value (%s)", COLUMNS_HELP);
		return false;
	}
	if (r < 0)
		return false;
	bool ok = true, hinted[N_COL] = { 0 };
	size_t known = 0;
	for (size_t i = 0; i < rec->n; i++) {
		const char *name = rec->f[i];
		size_t c = 0;
		while (c < N_COL && strcasecmp(name, col_names[c]) != 0)
			c++;
		if (c == N_COL) {
			const char *hint = util_did_you_mean(name, col_names, N_COL);
			if (!*name)
				err(ps, rec->line, "empty column name in field %zu of the header (%s)", i + 1, COLUMNS_HELP);
			else if (hint) {
				err(ps, rec->line, "unknown column \"%s\" (did you mean \"%s\"? %s)", name, hint, COLUMNS_HELP);
				for (size_t k = 0; k < N_COL; k++)
					hinted[k] = hinted[k] || col_names[k] == hint;
			}
			else
				err(ps, rec->line, "unknown column \"%s\" (%s)", name, COLUMNS_HELP);
			ok = false;
		} else if (ps->col[c] >= 0) {
			err(ps, rec->line, "column \"%s\" appears twice in the header", col_names[c]);
			ok = false;
		} else {
			ps->col[c] = (int)i;
			known++;
		}
	}
	for (size_t c = 0; c < N_REQUIRED; c++)
		if (ps->col[c] < 0 && !hinted[c]) {
			err(ps, rec->line, "missing column \"%s\" in the header (%s)%s", col_names[c], COLUMNS_HELP,
			    known ? "" : ": the first line must be the header");
			ok = false;
		}
	ps->n_cols = rec->n;
	return ok;
}

/* A plain decimal: [+-]digits[.digits][e[+-]digits]; no hex, inf or nan. */
static bool strict_number(const char *s, double *ret)
{
	const char *p = s;
	bool digits = false;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p)
		return false;
	double v;
	int e = util_parse_double(s, &v);
	if (e == -ERANGE) {
		*ret = INFINITY;  /* the caller says "out of range" */
		return true;
	}
	if (e < 0)
		return false;
	*ret = v;
	return true;
}

static bool printable_name(struct parser *ps, int line, const char *what, const char *s, size_t max)
{
	if (!*s) {
		err(ps, line, "empty %s: every row needs one", what);
		return false;
	}
	if (strlen(s) > max) {
		err(ps, line, "%s \"%.40s...\" is longer than %zu characters", what, s, max);
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			err(ps, line, "%s has a control character (a line break inside quotes?): use printable text", what);
			return false;
		}
	return true;
}

/* Room for the attributes of metric n - 1 (the one just added). */
static int metric_attrs_grow(struct parser *ps, size_t n)
{
	char **u = realloc(ps->unit, n * sizeof(*u));
	if (!u)
		return -ENOMEM;
	ps->unit = u;
	ps->unit[n - 1] = NULL;
	int *ul = realloc(ps->unit_line, n * sizeof(*ul));
	if (!ul)
		return -ENOMEM;
	ps->unit_line = ul;
	int *dv = realloc(ps->dir, n * sizeof(*dv));
	if (!dv)
		return -ENOMEM;
	ps->dir = dv;
	ps->dir[n - 1] = -1;
	int *dl = realloc(ps->dir_line, n * sizeof(*dl));
	if (!dl)
		return -ENOMEM;
	ps->dir_line = dl;
	return 0;
}

static const char *field(const struct parser *ps, const struct csv_record *rec, enum col c)
{
	return ps->col[c] >= 0 ? rec->f[ps->col[c]] : "";
}

/* A name into t; false when reported. */
static bool intern_name(struct parser *ps, struct intern *t, const char *what, const char *s, int line, size_t max,
			uint32_t *ret, bool *ret_new)
{
	int r = intern_get(t, s, line, max, ret);
	if (r == -ENOMEM)
		ps->oom = true;
	else if (r == -E2BIG)
		err(ps, line, "more than %zu different %ss: kab compare takes at most that many", max, what);
	*ret_new = r == 1;
	return r >= 0;
}

static void data_row(struct parser *ps, const struct csv_record *rec)
{
	int line = rec->line;
	if (rec->n != ps->n_cols) {
		err(ps, line, "%zu field%s, but the header has %zu columns", rec->n, rec->n == 1 ? "" : "s", ps->n_cols);
		return;
	}
	const char *metric = field(ps, rec, COL_METRIC), *variant = field(ps, rec, COL_VARIANT);
	const char *pair = field(ps, rec, COL_PAIR), *value = field(ps, rec, COL_VALUE);
	const char *unit = field(ps, rec, COL_UNIT), *dir = field(ps, rec, COL_DIRECTION);
	const char *workload = ps->col[COL_WORKLOAD] >= 0 ? field(ps, rec, COL_WORKLOAD) : NULL;
	struct row row = { .line = line };
	bool ok = printable_name(ps, line, "metric", metric, METRIC_NAME_MAX);
	ok = printable_name(ps, line, "variant", variant, VARIANT_NAME_MAX) && ok;
	if (workload)
		ok = printable_name(ps, line, "workload", workload, VARIANT_NAME_MAX) && ok;
	if (!*pair) {
		err(ps, line, "empty pair: every row needs the number of its pair");
		ok = false;
	} else if (util_parse_u64(pair, &row.pair) < 0 || !isdigit((unsigned char)pair[0]) || row.pair > PAIR_NUMBER_MAX) {
		err(ps, line, "pair \"%s\" is not a whole number from 0 to %llu: rows with the same pair number are paired", pair,
		    PAIR_NUMBER_MAX);
		ok = false;
	}
	if (!*value) {
		err(ps, line, "empty value: leave out the row of a missing run");
		ok = false;
	} else if (!strict_number(value, &row.value)) {
		err(ps, line, "value \"%s\" is not a number: write a plain decimal such as 12, -3.5 or 1.2e6", value);
		ok = false;
	} else if (!isfinite(row.value)) {
		err(ps, line, "value \"%s\" is out of range: a value must fit a double (about 1.8e308)", value);
		ok = false;
	}
	row.decimals = ok ? report_decimals_text(value) : 0;
	int d = -1;
	if (*dir) {
		enum direction sd;
		if (direction_parse(dir, &sd) == 0) {
			d = (int)sd;
		} else {
			err(ps, line, "direction \"%s\": expected higher, lower or neutral (or leave it empty)", dir);
			ok = false;
		}
	}
	if (*unit && !job_valid_unit(unit)) {
		err(ps, line, "unit \"%s\": use at most 31 printable characters, no spaces, commas, quotes, ';' or '#'", unit);
		ok = false;
	}
	if (!ok)
		return;
	bool added;
	if (!intern_name(ps, &ps->variants, "variant", variant, line, VARIANTS_MAX, &row.v, &added) ||
	    !intern_name(ps, &ps->workloads, "workload", workload ? workload : "", line, WORKLOADS_MAX, &row.w, &added) ||
	    !intern_name(ps, &ps->metrics, "metric", metric, line, METRICS_MAX, &row.m, &added))
		return;
	if (added && metric_attrs_grow(ps, ps->metrics.n) < 0) {
		ps->oom = true;
		return;
	}
	if (*unit) {
		if (!ps->unit[row.m]) {
			if (!(ps->unit[row.m] = strdup(unit)))
				ps->oom = true;
			ps->unit_line[row.m] = line;
		} else if (strcmp(ps->unit[row.m], unit) != 0) {
			err(ps, line, "metric \"%s\" has unit \"%s\" here but \"%s\" at line %d: one unit per metric", metric, unit,
			    ps->unit[row.m], ps->unit_line[row.m]);
		}
	}
	if (d >= 0) {
		if (ps->dir[row.m] < 0) {
			ps->dir[row.m] = d;
			ps->dir_line[row.m] = line;
		} else if (ps->dir[row.m] != d) {
			err(ps, line, "metric \"%s\" has direction \"%s\" here but another at line %d: one direction per metric",
			    metric, dir, ps->dir_line[row.m]);
		}
	}
	if (util_grow(ps->rows, ps->cap_rows, ps->n_rows + 1, 256) < 0) {
		ps->oom = true;
		return;
	}
	ps->rows[ps->n_rows++] = row;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* "dir/seed000.csv" -> "seed000": the title and default workload name. */
static void stem(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	snprintf(buf, len, "%s", base && base[1] ? base + 1 : path);
	char *dot = strrchr(buf, '.');
	if (dot && dot != buf)
		*dot = 0;
}

/* The variants in report order: the baseline first, then the others as
 * they first appear. */
static bool order_variants(struct parser *ps, const struct compare_opts *o, uint32_t *order)
{
	if (ps->variants.n < 2) {
		err(ps, ps->variants.line[0], "only one variant, \"%s\", in the file: kab compare needs a baseline and at least one other variant (column variant)",
		    ps->variants.s[0]);
		return false;
	}
	uint32_t base = 0;
	if (o->baseline) {
		size_t i = 0;
		while (i < ps->variants.n && strcmp(ps->variants.s[i], o->baseline) != 0)
			i++;
		if (i == ps->variants.n) {
			struct strbuf sb = { 0 };
			for (size_t k = 0; k < ps->variants.n; k++)
				sb_printf(&sb, "%s%s", k ? ", " : "", ps->variants.s[k]);
			err(ps, 0, "--baseline \"%s\" is not a variant in the file (variants: %s)", o->baseline, sb.buf ? sb.buf : "");
			sb_free(&sb);
			return false;
		}
		base = (uint32_t)i;
	}
	size_t k = 0;
	order[k++] = base;
	for (uint32_t i = 0; i < ps->variants.n; i++)
		if (i != base)
			order[k++] = i;
	return true;
}

static bool is_primary(const struct compare_opts *o, const char *metric)
{
	for (size_t i = 0; i < o->n_primary; i++)
		if (job_metric_matches(o->primary[i], metric))
			return true;
	return false;
}

static bool check_primary(struct parser *ps, const struct compare_opts *o)
{
	bool ok = true;
	for (size_t i = 0; i < o->n_primary; i++) {
		bool found = false;
		for (size_t m = 0; m < ps->metrics.n && !found; m++)
			found = job_metric_matches(o->primary[i], ps->metrics.s[m]);
		if (found)
			continue;
		const char *hint = util_did_you_mean(o->primary[i], (const char *const *)ps->metrics.s, ps->metrics.n);
		if (hint)
			err(ps, 0, "--primary \"%s\" matches no metric in the file (did you mean \"%s\"?)", o->primary[i], hint);
		else
			err(ps, 0, "--primary \"%s\" matches no metric in the file", o->primary[i]);
		ok = false;
	}
	return ok;
}

/* Rows sorted by workload, metric, variant, pair: a run given twice is
 * next to its first. */
static bool check_duplicates(struct parser *ps)
{
	bool ok = true;
	for (size_t i = 1; i < ps->n_rows; i++) {
		const struct row *a = &ps->rows[i - 1], *b = &ps->rows[i];
		if (a->w == b->w && a->m == b->m && a->v == b->v && a->pair == b->pair) {
			err(ps, b->line, "a second value for metric \"%s\", variant \"%s\", pair %llu (first at line %d): one row per run",
			    ps->metrics.s[b->m], ps->variants.s[b->v], (unsigned long long)b->pair, a->line);
			ok = false;
		}
	}
	return ok;
}

/* The distinct pair numbers of rows [from, to), sorted: their index is
 * the pair slot. */
static int pair_numbers(const struct parser *ps, size_t from, size_t to, uint64_t **ret, size_t *ret_n)
{
	uint64_t *v = malloc((to - from + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = from; i < to; i++)
		v[n++] = ps->rows[i].pair;
	qsort(v, n, sizeof(*v), u64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || v[u - 1] != v[i])
			v[u++] = v[i];
	*ret = v;
	*ret_n = u;
	return 0;
}

static size_t pair_slot(const uint64_t *v, size_t n, uint64_t pair)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < pair)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int build_workload(struct parser *ps, struct report *r, const struct compare_opts *o, const uint32_t *vpos,
			  const char *name, size_t from, size_t to)
{
	uint64_t *pairs;
	size_t np;
	int e = pair_numbers(ps, from, to, &pairs, &np);
	if (e < 0)
		return e;
	struct report_workload *w;
	if ((e = report_add_workload(r, name, np, &w)) < 0)
		goto out;
	for (size_t i = from; i < to;) {
		uint32_t m = ps->rows[i].m;
		struct report_metric *rm;
		if ((e = report_add_metric(r, w, ps->metrics.s[m], ps->unit[m], &rm)) < 0)
			goto out;
		if (ps->unit[m])
			snprintf(rm->info.unit, sizeof(rm->info.unit), "%s", ps->unit[m]);
		if (ps->dir[m] >= 0)
			rm->info.dir = (enum direction)ps->dir[m];
		rm->primary = is_primary(o, rm->name);
		rm->decimals = 0;
		for (; i < to && ps->rows[i].m == m; i++) {
			const struct row *x = &ps->rows[i];
			if (x->decimals > rm->decimals)
				rm->decimals = x->decimals;
			rm->values[vpos[x->v] * np + pair_slot(pairs, np, x->pair)] = x->value;
		}
	}
out:
	free(pairs);
	return e;
}

static int build(struct parser *ps, const struct compare_opts *o, const uint32_t *order, struct report **ret)
{
	char title[256];
	stem(ps->file, title, sizeof(title));
	size_t nv = ps->variants.n;
	char **names = calloc(nv, sizeof(char *));
	uint32_t *vpos = calloc(nv, sizeof(uint32_t));
	struct report *r = NULL;
	int e = -ENOMEM;
	if (!names || !vpos)
		goto out;
	for (size_t k = 0; k < nv; k++) {
		names[k] = ps->variants.s[order[k]];
		vpos[order[k]] = (uint32_t)k;
	}
	if ((e = report_new(title, names, nv, &r)) < 0)
		goto out;
	if (!(r->source = strdup(ps->file))) {
		e = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ps->n_rows;) {
		size_t j = i;
		while (j < ps->n_rows && ps->rows[j].w == ps->rows[i].w)
			j++;
		const char *wname = ps->workloads.s[ps->rows[i].w];
		if ((e = build_workload(ps, r, o, vpos, wname[0] ? wname : title, i, j)) < 0)
			goto out;
		i = j;
	}
	*ret = r;
	r = NULL;
	e = 0;
out:
	report_free(r);
	free(names);
	free(vpos);
	return e;
}

/* metric x variant x pair cells the report would hold, per workload. */
static bool check_size(struct parser *ps)
{
	uint64_t cells = 0;
	for (size_t i = 0; i < ps->n_rows;) {
		size_t j = i, metrics = 0;
		while (j < ps->n_rows && ps->rows[j].w == ps->rows[i].w) {
			metrics += j == i || ps->rows[j].m != ps->rows[j - 1].m;
			j++;
		}
		uint64_t *pairs;
		size_t np;
		if (pair_numbers(ps, i, j, &pairs, &np) < 0) {
			ps->oom = true;
			return false;
		}
		free(pairs);
		cells += (uint64_t)metrics * ps->variants.n * np;
		i = j;
	}
	if (cells > CELLS_MAX) {
		err(ps, 0, "%llu metric x variant x pair cells, more than kab compare takes (%u): split the file",
		    (unsigned long long)cells, CELLS_MAX);
		return false;
	}
	return true;
}

int compare_csv_parse(const char *file, const char *text, size_t len, const struct compare_opts *o,
		      struct report **ret, struct diags *d)
{
	struct parser ps = { .file = file, .d = d, .c = { .p = text, .end = text + len, .line = 1 } };
	struct csv_record *rec = malloc(sizeof(*rec));
	uint32_t *order = NULL;
	int e = -ENOMEM;
	size_t d0 = d->n;
	if (!rec)
		goto out;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		ps.c.p += 3;
	if (read_header(&ps, rec)) {
		int r;
		while (!ps.oom && ps.errors <= ERRORS_MAX && (r = next_record(&ps, rec)) != 0)
			if (r > 0)
				data_row(&ps, rec);
		if (ps.n_rows == 0 && ps.errors == 0)
			err(&ps, ps.c.line, "no data rows after the header: one row per run, e.g. vmstat.pgscan_anon,A,1,52856224");
	}
	if (ps.oom)
		goto out;
	e = -EINVAL;
	if (ps.errors)
		goto out;
	qsort(ps.rows, ps.n_rows, sizeof(*ps.rows), row_cmp);
	if (!(order = calloc(ps.variants.n, sizeof(*order)))) {
		e = -ENOMEM;
		goto out;
	}
	bool ok = order_variants(&ps, o, order);
	ok = check_primary(&ps, o) && ok;
	ok = check_duplicates(&ps) && ok;
	ok = ok && check_size(&ps);
	if (ps.oom)
		e = -ENOMEM;
	else if (ok)
		e = build(&ps, o, order, ret);
out:
	if (e == -ENOMEM)
		diags_add(d, file, 0, "out of memory while reading the file");
	if (e == -EINVAL && d->n == d0)
		diags_add(d, file, 0, "cannot be read as kab compare input");
	for (size_t i = 0; i < ps.metrics.n && ps.unit; i++)
		free(ps.unit[i]);
	free(ps.unit);
	free(ps.unit_line);
	free(ps.dir);
	free(ps.dir_line);
	intern_free(&ps.metrics);
	intern_free(&ps.variants);
	intern_free(&ps.workloads);
	free(ps.rows);
	free(order);
	free(rec);
	return e;
}

int compare_csv_read(const char *path, const struct compare_opts *o, struct report **ret, struct diags *d)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = util_read_file(path, &text, &len);
	if (r < 0) {
		diags_add(d, path, 0, "cannot read: %s", strerror(-r));
		return r;
	}
	if (len > COMPARE_FILE_MAX) {
		diags_add(d, path, 0, "too large (%zu bytes, at most %u)", len, COMPARE_FILE_MAX);
		return -EFBIG;
	}
	if (memchr(text, 0, len)) {
		diags_add(d, path, 0, "contains a NUL byte: a CSV file is text");
		return -EINVAL;
	}
	return compare_csv_parse(path, text, len, o, ret, d);
}
