/* kab's rank tests, Hodges-Lehmann intervals and Welch against scipy, on
 * the data sets in tests/stats/oracle.tsv (written by gen_cases.py, which
 * documents the method matched per test; KAB_ORACLE overrides the path).
 *
 * Rows with ties below 50 (n15-int-ties, counter-zero-a, u-ties, ...)
 * expected scipy's normal approximation until kab's rank tests became
 * exact with ties (doc/statistics.md rule 5): scipy has no exact test conditional
 * on midranks, so their expected p is now gen_cases.py's exact_tied_p
 * (integer counts; the note column keeps scipy's old approximate p), and
 * tests/unit/test_stats_exact.c checks the same definition by enumeration.
 *
 * Tolerances, relative:
 *  - exact p-values 1e-6 (the bar); both sides sum the same exact
 *    distribution, so the errors seen are near 1e-15.
 *  - normal-approximation p-values and |z| 1e-9: the same formula with the
 *    same tie and continuity terms; what differs is the order of rank
 *    sums and GSL's normal tail against scipy's ndtr, both good to about
 *    1e-15 relative even far in the tail.
 *  - Welch p 1e-6: GSL's incomplete-beta t tail against cephes' stdtr,
 *    each accurate to about 1e-12 at non-integer df; t and df 1e-9.
 *  - Hodges-Lehmann estimates and bounds 1e-9: the very same doubles are
 *    averaged or subtracted, so they agree exactly; coverage levels 1e-12
 *    absolute. */
#include "t.h"
#include "harness/stats/stats.h"
#include "harness/base/util.h"

#include <stdlib.h>

#define MAX_COLS 32
#define MAX_VALUES 256

enum col {
	C_NAME, C_X, C_Y, C_W_METHOD, C_W_PLUS, C_W_STAT, C_W_P, C_W_ABSZ,
	C_HL_EST, C_HL_LO, C_HL_HI, C_HL_LEVEL, C_MW_METHOD, C_MW_U, C_MW_P,
	C_HS_EST, C_HS_LO, C_HS_HI, C_HS_LEVEL, C_WELCH_T, C_WELCH_DF,
	C_WELCH_P, C_NOTE, C_COUNT,
};

static const char *const col_names[C_COUNT] = {
	"name", "x", "y", "w_method", "w_plus", "w_stat", "w_p", "w_absz",
	"hl_est", "hl_lo", "hl_hi", "hl_level", "mw_method", "mw_u", "mw_p",
	"hs_est", "hs_lo", "hs_hi", "hs_level", "welch_t", "welch_df",
	"welch_p", "note",
};

/* Largest relative error seen per kind, printed for the record. */
static double worst_exact_p, worst_normal_p, worst_welch_p, worst_hl;
static unsigned cases, skipped;

static double rel_err(double got, double want)
{
	if (got == want)
		return 0;
	double scale = fmax(fabs(got), fabs(want));
	return fabs(got - want) / scale;
}

static void check_rel(const char *row, const char *what, double got, double want, double tol, double *worst)
{
	double e = isnan(got) || isnan(want) ? INFINITY : rel_err(got, want);
	if (worst && e > *worst && isfinite(e))
		*worst = e;
	if (e <= tol) {
		t_passed++;
		return;
	}
	t_failed++;
	fprintf(stderr, "%s: %s = %.17g, scipy %.17g (relative error %.3g > %.3g)\n", row, what, got, want, e, tol);
}

static double field_num(char **f, enum col c)
{
	double v = NAN;
	if (strcmp(f[c], "nan") == 0)
		return NAN;
	if (util_parse_double(f[c], &v) < 0) {
		fprintf(stderr, "%s: column %s: not a number: \"%s\"\n", f[C_NAME], col_names[c], f[c]);
		t_failed++;
	}
	return v;
}

/* "1.5,2,3e12" into v; returns the count, 0 on a malformed list. */
static size_t field_vec(char **f, enum col c, double *v)
{
	size_t n = 0;
	char *s = f[c];
	while (*s && n < MAX_VALUES) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		if (util_parse_double(s, &v[n]) < 0)
			return 0;
		n++;
		if (!comma)
			break;
		s = comma + 1;
	}
	return n;
}

static bool has(char **f, enum col c)
{
	return strcmp(f[c], "-") != 0;
}

static void check_paired(char **f, const double *x, const double *y, size_t n)
{
	const char *row = f[C_NAME];
	double d[MAX_VALUES];
	for (size_t i = 0; i < n; i++)
		d[i] = y[i] - x[i];

	double w_plus, p, z;
	bool exact;
	T_EQ_INT(stats_wilcoxon(d, n, &w_plus, &p, &exact, &z), 0);
	bool want_exact = strcmp(f[C_W_METHOD], "exact") == 0;
	if (exact != want_exact) {
		t_failed++;
		fprintf(stderr, "%s: wilcoxon method %s, reference %s\n", row, exact ? "exact" : "normal", f[C_W_METHOD]);
	}
	check_rel(row, "wilcoxon W+", w_plus, field_num(f, C_W_PLUS), 1e-12, NULL);
	size_t used = 0;
	for (size_t i = 0; i < n; i++)
		used += d[i] != 0;
	double top = (double)used * (used + 1) / 2;
	check_rel(row, "wilcoxon min(W+, W-)", fmin(w_plus, top - w_plus), field_num(f, C_W_STAT), 1e-12, NULL);
	if (want_exact) {
		check_rel(row, "wilcoxon exact p", p, field_num(f, C_W_P), 1e-6, &worst_exact_p);
	} else {
		check_rel(row, "wilcoxon normal p", p, field_num(f, C_W_P), 1e-9, &worst_normal_p);
		check_rel(row, "wilcoxon |z|", fabs(z), field_num(f, C_W_ABSZ), 1e-9, NULL);
	}

	double est, lo, hi, level;
	T_EQ_INT(stats_hl_paired(d, n, 0.95, &est, &lo, &hi, &level), 0);
	check_rel(row, "HL paired estimate", est, field_num(f, C_HL_EST), 1e-9, &worst_hl);
	check_rel(row, "HL paired low", lo, field_num(f, C_HL_LO), 1e-9, &worst_hl);
	check_rel(row, "HL paired high", hi, field_num(f, C_HL_HI), 1e-9, &worst_hl);
	T_NEAR(level, field_num(f, C_HL_LEVEL), 1e-12);
}

static void check_two_sample(char **f, const double *x, size_t nx, const double *y, size_t ny)
{
	const char *row = f[C_NAME];
	double u, p, z;
	bool exact;
	T_EQ_INT(stats_mann_whitney(x, nx, y, ny, &u, &p, &exact, &z), 0);
	bool want_exact = strcmp(f[C_MW_METHOD], "exact") == 0;
	if (exact != want_exact) {
		t_failed++;
		fprintf(stderr, "%s: mann-whitney method %s, reference %s\n", row, exact ? "exact" : "normal", f[C_MW_METHOD]);
	}
	check_rel(row, "mann-whitney U", u, field_num(f, C_MW_U), 1e-12, NULL);
	check_rel(row, want_exact ? "mann-whitney exact p" : "mann-whitney normal p", p, field_num(f, C_MW_P),
		  want_exact ? 1e-6 : 1e-9, want_exact ? &worst_exact_p : &worst_normal_p);

	double est, lo, hi, level;
	T_EQ_INT(stats_hl_shift(x, nx, y, ny, 0.95, &est, &lo, &hi, &level), 0);
	check_rel(row, "HL shift estimate", est, field_num(f, C_HS_EST), 1e-9, &worst_hl);
	check_rel(row, "HL shift low", lo, field_num(f, C_HS_LO), 1e-9, &worst_hl);
	check_rel(row, "HL shift high", hi, field_num(f, C_HS_HI), 1e-9, &worst_hl);
	T_NEAR(level, field_num(f, C_HS_LEVEL), 1e-12);

	double t, df;
	int r = stats_welch(x, nx, y, ny, &t, &df, &p);
	double want_p = field_num(f, C_WELCH_P);
	if (isnan(want_p)) {
		/* both samples constant: scipy divides 0 by 0 */
		printf("skip %s: welch: scipy gives nan without variance; kab gives p = 1 for equal constants\n", row);
		skipped++;
		T_EQ_INT(r, 0);
		T_NEAR(p, 1, 0);
		return;
	}
	T_EQ_INT(r, 0);
	check_rel(row, "welch t", t, field_num(f, C_WELCH_T), 1e-9, NULL);
	check_rel(row, "welch df", df, field_num(f, C_WELCH_DF), 1e-9, NULL);
	check_rel(row, "welch p", p, want_p, 1e-6, &worst_welch_p);
}

/* Splits a line into tab-separated fields in place. */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;
	for (char *s = line; n < max;) {
		f[n++] = s;
		char *tab = strchr(s, '\t');
		if (!tab)
			break;
		*tab = '\0';
		s = tab + 1;
	}
	return n;
}

static void check_row(char **f)
{
	double x[MAX_VALUES], y[MAX_VALUES];
	size_t nx = field_vec(f, C_X, x), ny = field_vec(f, C_Y, y);
	if (nx == 0 || ny == 0) {
		t_failed++;
		fprintf(stderr, "%s: bad value list\n", f[C_NAME]);
		return;
	}
	cases++;
	if (has(f, C_NOTE))
		printf("note %s: %s\n", f[C_NAME], f[C_NOTE]);
	if (has(f, C_W_METHOD)) {
		T_EQ_INT(nx, ny);
		if (nx == ny)
			check_paired(f, x, y, nx);
	}
	check_two_sample(f, x, nx, y, ny);
}

int main(void)
{
	const char *path = getenv("KAB_ORACLE");
	if (!path)
		path = "tests/stats/oracle.tsv";
	char *buf;
	size_t len;
	int r = util_read_file(path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "%s: %s (run from the top of the tree)\n", path, strerror(-r));
		return 2;
	}
	bool header = false;
	unsigned line_no = 0;
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		line_no++;
		if (*line && *line != '#') {
			char *f[MAX_COLS];
			size_t n = split_tabs(line, f, MAX_COLS);
			if (n != C_COUNT) {
				t_failed++;
				fprintf(stderr, "%s:%u: %zu columns, expected %d\n", path, line_no, n, C_COUNT);
			} else if (!header) {
				for (int c = 0; c < C_COUNT; c++)
					T_EQ_STR(f[c], col_names[c]);
				header = true;
			} else {
				check_row(f);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	T_CHECK(header);
	T_CHECK(cases >= 30);
	printf("%u data sets, %u comparisons skipped by design\n", cases, skipped);
	printf("largest relative error: exact p %.3g, normal p %.3g, welch p %.3g, HL %.3g\n",
	       worst_exact_p, worst_normal_p, worst_welch_p, worst_hl);
	return t_done("test_stats_oracle");
}
