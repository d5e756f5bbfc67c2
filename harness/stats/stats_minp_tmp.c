/* TEMPORARY stand-in until the exact versions land from branch rank23. */
#include <math.h>
#include <stdlib.h>
#include "harness/stats/stats.h"
#include "harness/stats/stats_priv.h"

double stats_wilcoxon_min_p(const double *d, size_t n) {
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += d[i] != 0;
	return k ? fmin(1, ldexp(1, 1 - (int)k)) : NAN;
}

double stats_mann_whitney_min_p(const double *x, size_t nx, const double *y, size_t ny) {
	size_t n = nx + ny;
	double *v = malloc(n * sizeof(*v));
	if (!v)
		return NAN;
	for (size_t i = 0; i < nx; i++)
		v[i] = x[i];
	for (size_t i = 0; i < ny; i++)
		v[nx + i] = y[i];
	qsort(v, n, sizeof(*v), stats_cmp_double);
	double u, p1 = 1, p2 = 1, z;
	bool exact;
	stats_mann_whitney(v, nx, v + nx, ny, &u, &p1, &exact, &z);
	stats_mann_whitney(v + ny, nx, v, ny, &u, &p2, &exact, &z);
	free(v);
	return fmin(p1, p2);
}
