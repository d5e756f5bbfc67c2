/* Internals shared by stats.c, stats_rank.c and stats_hl.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Exact null distributions below this many observations (per side for
 * Mann-Whitney): doc/statistics.md rule 5 says "exact below 50 pairs". */
#define STATS_EXACT_LIMIT 50

/* P(W+ = w) for w = 0 .. n(n+1)/2, n untied ranks; caller frees. */
int stats_signrank_pmf(unsigned n, double **ret_pmf);
/* P(U = u) for u = 0 .. m*n, sizes m and n without ties; caller frees. */
int stats_mw_pmf(unsigned m, unsigned n, double **ret_pmf);

/* Midranks of x[0..n) into ret_ranks; *ret_tie_term = sum of t^3 - t over
 * groups of t equal values (0 when there are no ties). */
int stats_midranks(const double *x, size_t n, double *ret_ranks, double *ret_tie_term);

int stats_cmp_double(const void *a, const void *b);
/* Median of an ascending array, n >= 1. */
double stats_median_sorted(const double *x, size_t n);
/* The normal score matching a two-sided p-value, signed: how exact tests
 * feed the same O'Brien-Fleming bounds as the normal approximation. */
double stats_z_from_p(double p, double sign);
bool stats_all_finite(const double *x, size_t n);
