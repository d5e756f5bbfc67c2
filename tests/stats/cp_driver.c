/* cp_driver: runs kab's change-point detector (harness/stats/changepoint.h)
 * on history files, for tests/stats/check_changepoint.sh.
 *
 * Usage: cp_driver [--alpha A] [--min-segment M] [--window W] FILE...
 * Each FILE holds one value a line; '#' lines and blank ones are skipped.
 * Prints, per file, one line a point:
 *   FILE<TAB>index<TAB>before_start<TAB>after_end<TAB>mean_before<TAB>mean_after<TAB>pct<TAB>p<TAB>t
 *   <TAB>trimmed_before<TAB>trimmed_after
 * (numbers in %.17g), FILE<TAB>none when there is none, FILE<TAB>ENODATA
 * when there are too few values: the format of changepoint_ref.py. A line
 * that is not a number is reported as FILE:LINE and ends the run (exit 2). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/util.h"
#include "harness/stats/changepoint.h"

/* The values of path's lines; -EINVAL (reported) on a line that is not a number. */
static int read_values(const char *path, double **ret, size_t *ret_n)
{
	char *text;
	size_t len;
	int r = util_read_file(path, &text, &len);
	if (r < 0) {
		fprintf(stderr, "cp_driver: %s: %s\n", path, strerror(-r));
		return r;
	}
	size_t n = 0, cap = 256, lineno = 0;
	double *v = malloc(cap * sizeof(*v));
	char *line = text;
	while (v && line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		if (*line && *line != '#') {
			if (n == cap) {
				double *nv = realloc(v, 2 * cap * sizeof(*v));
				if (!nv)
					break;
				v = nv;
				cap *= 2;
			}
			if (util_parse_double(line, &v[n]) < 0) {
				fprintf(stderr, "%s:%zu: \"%s\" is not a number: one value a line, '#' for comments\n",
					path, lineno, line);
				free(v);
				free(text);
				return -EINVAL;
			}
			n++;
		}
		line = nl ? nl + 1 : NULL;
	}
	bool short_of_memory = !v || (line && *line);
	free(text);
	if (short_of_memory) {
		free(v);
		return -ENOMEM;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int run_file(const char *path, const struct cp_params *par)
{
	double *x;
	size_t n;
	int r = read_values(path, &x, &n);
	if (r < 0)
		return r;
	struct cp_result res;
	r = cp_detect(x, n, par, &res);
	free(x);
	if (r == -ENODATA) {
		printf("%s\tENODATA\n", path);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "cp_driver: %s: cp_detect: %s\n", path, strerror(-r));
		return r;
	}
	if (res.n == 0)
		printf("%s\tnone\n", path);
	for (size_t k = 0; k < res.n; k++) {
		const struct cp_point *p = &res.points[k];
		printf("%s\t%zu\t%zu\t%zu\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n", path, p->index, p->before_start,
		       p->after_end, p->mean_before, p->mean_after, p->pct, p->p, p->stat, p->trimmed_before, p->trimmed_after);
	}
	cp_result_free(&res);
	return 0;
}

int main(int argc, char **argv)
{
	struct cp_params par = { 0 };
	int i = 1;
	for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		uint64_t u = 0;
		int r = -EINVAL;
		if (strcmp(argv[i], "--alpha") == 0)
			r = util_parse_double(argv[i + 1], &par.alpha);
		else if (strcmp(argv[i], "--min-segment") == 0 && (r = util_parse_u64(argv[i + 1], &u)) == 0)
			par.min_segment = (size_t)u;
		else if (strcmp(argv[i], "--window") == 0 && (r = util_parse_u64(argv[i + 1], &u)) == 0)
			par.window = (size_t)u;
		if (r < 0) {
			fprintf(stderr, "cp_driver: bad option %s %s (--alpha A, --min-segment M, --window W)\n",
				argv[i], argv[i + 1]);
			return 2;
		}
	}
	struct cp_params eff;
	if (cp_params_effective(&par, &eff) < 0) {
		fprintf(stderr, "cp_driver: parameters refused: alpha in (0, 1), 2 <= min-segment <= window <= %d\n", CP_WINDOW_MAX);
		return 2;
	}
	for (; i < argc; i++)
		if (run_file(argv[i], &par) < 0)
			return 2;
	return 0;
}
