/* kab's exact rank tests with ties and zeros against brute force: the data
 * sets in tests/stats/exact.tsv and their p-values and smallest reachable
 * p-values, found by tests/stats/exact_ref.py enumerating every sign
 * vector or split (KAB_EXACT overrides the path). Then, past the sizes an
 * enumeration can reach, what must hold up to 49 a side: on untied data
 * the tied dynamic programs give the untied tables' answers, and the
 * smallest p (closed form) is the p of the most extreme arrangement.
 *
 * Tolerance: relative 1e-9 on p-values, as check_exact.sh. The reference
 * is exact (fractions); kab sums probabilities in doubles, which rounds at
 * about 1e-15. */
#include "t.h"
#include "harness/stats/stats.h"
#include "harness/base/util.h"

#include <gsl/gsl_cdf.h>
#include <stdlib.h>

#define MAX_COLS 24
#define MAX_VALUES 64

enum col {
	C_NAME,
	C_X,
	C_Y,
	C_W_K,
	C_W_PLUS,
	C_W_P,
	C_W_P_FRAC,
	C_W_MIN_P,
	C_W_MIN_P_FRAC,
	C_MW_U,
	C_MW_P,
	C_MW_P_FRAC,
	C_MW_MIN_P,
	C_MW_MIN_P_FRAC,
	C_NOTE,
	C_COUNT,
};

static const char *const col_names[C_COUNT] = {
	"name",         "x",    "y",    "w_k",       "w_plus",   "w_p",           "w_p_frac", "w_min_p",
	"w_min_p_frac", "mw_u", "mw_p", "mw_p_frac", "mw_min_p", "mw_min_p_frac", "note",
};

static unsigned cases, w_checked, mw_checked;
static double worst;

/* Relative difference; NAN against NAN counts as equal (no min_p). */
static void check_rel(const char *row, const char *what, double got, double want, double tol)
{
	double e;
	if (isnan(got) || isnan(want))
		e = isnan(got) && isnan(want) ? 0 : INFINITY;
	else if (got == want)
		e = 0;
	else
		e = fabs(got - want) / fmax(fabs(got), fabs(want));
	if (isfinite(e) && e > worst)
		worst = e;
	if (e <= tol) {
		t_passed++;
		return;
	}
	t_failed++;
	fprintf(stderr, "%s: %s = %.17g, enumeration %.17g (relative error %.3g > %.3g)\n", row, what, got, want, e, tol);
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
static size_t field_vec(char *s, double *v)
{
	size_t n = 0;
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

static double sign_of(double v)
{
	return (v > 0) - (v < 0);
}

/* z is the normal score of the exact p, signed towards the larger side. */
static void check_z(const char *row, const char *what, double z, double p, double centred)
{
	if (p >= 1) {
		T_NEAR(z, 0, 0);
		return;
	}
	if (sign_of(z) != sign_of(centred)) {
		t_failed++;
		fprintf(stderr, "%s: %s z = %g has the wrong sign\n", row, what, z);
	}
	check_rel(row, what, fabs(z), gsl_cdf_ugaussian_Qinv(p / 2), 1e-9);
}

static void check_paired(char **f, const double *x, const double *y, size_t n)
{
	const char *row = f[C_NAME];
	double d[MAX_VALUES];
	for (size_t i = 0; i < n; i++)
		d[i] = y[i] - x[i];
	double w_plus, p, z;
	bool exact = false;
	T_EQ_INT(stats_wilcoxon(d, n, &w_plus, &p, &exact, &z), 0);
	T_CHECK(exact);
	double k = field_num(f, C_W_K), want_p = field_num(f, C_W_P);
	check_rel(row, "wilcoxon W+", w_plus, field_num(f, C_W_PLUS), 1e-12);
	check_rel(row, "wilcoxon p", p, want_p, 1e-9);
	check_z(row, "wilcoxon |z|", z, want_p, w_plus - k * (k + 1) / 4);
	double min_p = stats_wilcoxon_min_p(d, n);
	check_rel(row, "wilcoxon min p", min_p, field_num(f, C_W_MIN_P), 1e-9);
	T_CHECK(isnan(min_p) || p >= min_p * (1 - 1e-12));
	w_checked++;
}

static void check_two_sample(char **f, const double *x, size_t nx, const double *y, size_t ny)
{
	const char *row = f[C_NAME];
	double u, p, z;
	bool exact = false;
	T_EQ_INT(stats_mann_whitney(x, nx, y, ny, &u, &p, &exact, &z), 0);
	T_CHECK(exact);
	double want_p = field_num(f, C_MW_P);
	check_rel(row, "mann-whitney U", u, field_num(f, C_MW_U), 1e-12);
	check_rel(row, "mann-whitney p", p, want_p, 1e-9);
	check_z(row, "mann-whitney |z|", z, want_p, (double)nx * (double)ny / 2 - u);
	double min_p = stats_mann_whitney_min_p(x, nx, y, ny);
	check_rel(row, "mann-whitney min p", min_p, field_num(f, C_MW_MIN_P), 1e-9);
	T_CHECK(p >= min_p * (1 - 1e-12));
	mw_checked++;
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
	size_t nx = field_vec(f[C_X], x), ny = field_vec(f[C_Y], y);
	if (nx == 0 || ny == 0) {
		t_failed++;
		fprintf(stderr, "%s: bad value list\n", f[C_NAME]);
		return;
	}
	cases++;
	if (strcmp(f[C_W_K], "-") != 0) {
		T_EQ_INT(nx, ny);
		if (nx == ny)
			check_paired(f, x, y, nx);
	}
	if (strcmp(f[C_MW_P], "-") != 0)
		check_two_sample(f, x, nx, y, ny);
}

static void check_reference(const char *path)
{
	char *buf;
	size_t len;
	int r = util_read_file(path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "%s: %s (run from the top of the tree)\n", path, strerror(-r));
		t_failed++;
		return;
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
}

/* Untied data at the edge of the exact range: the tied dynamic programs
 * must give what the untied tables (stats_signrank_cdf and
 * stats_mann_whitney_cdf, separate code) give. */
static void test_untied_agrees_with_tables(void)
{
	double d[49], w, p, z;
	bool exact;
	for (size_t i = 0; i < 49; i++)
		d[i] = (double)(i + 1) * (i % 3 == 0 ? -1 : 1);
	T_EQ_INT(stats_wilcoxon(d, 49, &w, &p, &exact, &z), 0);
	T_CHECK(exact);
	unsigned top = 49 * 50 / 2, lo = (unsigned)fmin(w, top - w);
	check_rel("untied-49", "wilcoxon p against the untied table", p, fmin(1, 2 * stats_signrank_cdf(49, lo)), 1e-9);

	double x[49], y[40], u;
	for (size_t i = 0; i < 49; i++)
		x[i] = (double)i * 1.7;
	for (size_t i = 0; i < 40; i++)
		y[i] = (double)i * 2.1 + 0.35;
	T_EQ_INT(stats_mann_whitney(x, 49, y, 40, &u, &p, &exact, &z), 0);
	T_CHECK(exact);
	lo = (unsigned)fmin(u, 49 * 40 - u);
	check_rel("untied-49v40", "mann-whitney p against the untied table", p,
		  fmin(1, 2 * stats_mann_whitney_cdf(49, 40, lo)), 1e-9);
	/* no ties: the floor is 2 / C(89, 40) */
	double c = 1;
	for (unsigned i = 1; i <= 40; i++)
		c = c * (49 + i) / i;
	check_rel("untied-49v40", "mann-whitney min p", stats_mann_whitney_min_p(x, 49, y, 40), 2 / c, 1e-9);
}

/* Ties at 49 a side: the smallest p (closed form) is the p the exact test
 * gives to the most extreme split, y on top or at the bottom. */
static void test_min_p_is_the_extreme_split(void)
{
	double pooled[98], x[49], y[49], u, p_top, p_bottom, z;
	bool exact;
	for (size_t i = 0; i < 98; i++)
		pooled[i] = (double)(i / 7); /* 14 groups of 7 tied values, ascending */
	memcpy(x, pooled, sizeof(x));
	memcpy(y, pooled + 49, sizeof(y));
	T_EQ_INT(stats_mann_whitney(x, 49, y, 49, &u, &p_top, &exact, &z), 0);
	T_CHECK(exact);
	T_CHECK(z > 0);
	/* 49 = 7 x 7: no tie crosses the border, so the floor is 2 / C(98, 49) */
	double c = 1;
	for (unsigned i = 1; i <= 49; i++)
		c = c * (49 + i) / i;
	check_rel("tied-49v49", "exact p at the top", p_top, 2 / c, 1e-9);
	T_EQ_INT(stats_mann_whitney(y, 49, x, 49, &u, &p_bottom, &exact, &z), 0);
	T_CHECK(z < 0);
	check_rel("tied-49v49", "min p", stats_mann_whitney_min_p(x, 49, y, 49), fmin(p_top, p_bottom), 1e-9);

	/* groups of 10: ranks 41-50 cross the border, 9 in x and 1 in y */
	for (size_t i = 0; i < 98; i++)
		pooled[i] = (double)(i / 10);
	memcpy(x, pooled, sizeof(x));
	memcpy(y, pooled + 49, sizeof(y));
	T_EQ_INT(stats_mann_whitney(x, 49, y, 49, &u, &p_top, &exact, &z), 0);
	T_EQ_INT(stats_mann_whitney(y, 49, x, 49, &u, &p_bottom, &exact, &z), 0);
	double min_p = stats_mann_whitney_min_p(x, 49, y, 49);
	check_rel("tied-border-49v49", "min p", min_p, fmin(p_top, p_bottom), 1e-9);
	check_rel("tied-border-49v49", "min p, closed form", min_p, 2 * 10 / c, 1e-9); /* C(10, 1) ways */

	/* from 50 on: the normal approximation's p at the extreme */
	double big_x[60], big_y[55], p;
	for (size_t i = 0; i < 115; i++)
		*(i < 60 ? &big_x[i] : &big_y[i - 60]) = (double)(i / 9);
	T_EQ_INT(stats_mann_whitney(big_x, 60, big_y, 55, &u, &p_top, &exact, &z), 0);
	T_CHECK(!exact);
	for (size_t i = 0; i < 115; i++)
		*(i < 55 ? &big_y[i] : &big_x[i - 55]) = (double)(i / 9);
	T_EQ_INT(stats_mann_whitney(big_x, 60, big_y, 55, &u, &p_bottom, &exact, &z), 0);
	check_rel("tied-60v55", "normal min p", stats_mann_whitney_min_p(big_x, 60, big_y, 55), fmin(p_top, p_bottom), 1e-12);

	/* signed-rank: the floor 2 / 2^k whatever the ties, 49 of them tied */
	double d[60];
	for (size_t i = 0; i < 60; i++)
		d[i] = (double)(1 + i % 5);
	T_EQ_INT(stats_wilcoxon(d, 49, &u, &p, &exact, &z), 0);
	T_CHECK(exact);
	check_rel("tied-49", "wilcoxon p, every d positive", p, ldexp(1, -48), 1e-12);
	check_rel("tied-49", "wilcoxon min p", stats_wilcoxon_min_p(d, 49), ldexp(1, -48), 0);
	d[0] = -d[0];
	check_rel("tied-49", "wilcoxon min p, one sign flipped", stats_wilcoxon_min_p(d, 49), ldexp(1, -48), 0);
	d[0] = -d[0];
	/* 60: the normal approximation's p when every sign agrees */
	T_EQ_INT(stats_wilcoxon(d, 60, &u, &p, &exact, &z), 0);
	T_CHECK(!exact);
	check_rel("tied-60", "wilcoxon normal min p", stats_wilcoxon_min_p(d, 60), p, 1e-12);

	T_CHECK(isnan(stats_wilcoxon_min_p(NULL, 3)));
	T_CHECK(isnan(stats_mann_whitney_min_p(x, 0, y, 3)));
}

int main(void)
{
	const char *path = getenv("KAB_EXACT");
	check_reference(path ? path : "tests/stats/exact.tsv");
	test_untied_agrees_with_tables();
	test_min_p_is_the_extreme_split();
	printf("%u data sets: %u signed-rank, %u Mann-Whitney; largest relative error %.3g\n", cases, w_checked, mw_checked, worst);
	return t_done("test_stats_exact");
}
