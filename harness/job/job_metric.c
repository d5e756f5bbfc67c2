/* Job files: what concerns metrics and the statistics of the report:
 * metric lists (metrics =, primary =), pairs = N or adaptive MIN..MAX,
 * [metric NAME] sections (direction, unit, min_change, equivalence, label), and the
 * lookups the report makes in them. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ERR(file, line, ...) diags_add(d, (file), (line), __VA_ARGS__)

bool job_valid_metric(const char *m)
{
	const char *dot = strchr(m, '.');
	if (!dot || dot == m || !dot[1] || m[strlen(m) - 1] == '.')
		return false;
	for (const char *p = m; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p) && !(*p == '*' && !p[1]))
			return false;
	return true;
}

/* A kernel symbol as ftrace names it: letters, digits, '_' and '.'
 * (foo.isra.0), not starting with a digit. */
static bool valid_function(const char *s)
{
	if (!*s || isdigit((unsigned char)*s) || strlen(s) > 100)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
			return false;
	return true;
}

static int parse_list(const char *file, int line, const char *value, bool functions, char ***ret_v, size_t *ret_n,
		      struct diags *d)
{
	_cleanup_free_ char *copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	char **v = calloc(JOB_LIST_MAX + 1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	struct util_strmap seen = { 0 };  /* words of copy: duplicates in linear time */
	size_t n = 0, words = 0;
	int bad = 0;
	bool oom = false;
	for (char *p = copy; *p;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		char *w = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = 0;
		if (++words > JOB_LIST_MAX)
			continue; /* counted, reported below */
		int dup = 0;
		if (functions && !valid_function(w)) {
			ERR(file, line, "bad function name \"%s\": expected a kernel function, e.g. lru_add_drain", w);
			bad++;
		} else if (!functions && !job_valid_metric(w)) {
			ERR(file, line, "bad metric \"%s\": expected SOURCE.NAME or SOURCE.PREFIX*, e.g. vmstat.pgmajfault, interrupts.RES or vmstat.nr_tlb_*", w);
			bad++;
		} else if ((dup = util_strmap_put(&seen, w, 0, NULL)) < 0) {
			oom = true;
		} else if (dup) {
			ERR(file, line, "%s \"%s\" is listed twice", functions ? "function" : "metric", w);
			bad++;
		} else if (!(v[n++] = strdup(w))) {
			oom = true;
		}
	}
	if (words > JOB_LIST_MAX) {
		ERR(file, line, "too many %s in one list (%zu, at most %u): %s (doc/jobs.md, \"Budgets\")",
		    functions ? "functions" : "metrics", words, JOB_LIST_MAX,
		    functions ? "count the few functions the series changes" : "a PREFIX* name stands for a family of metrics");
		bad++;
	}
	util_strmap_free(&seen);
	*ret_v = v;
	*ret_n = n;
	return oom ? -ENOMEM : bad;
}

int job_parse_metric_list(const char *file, int line, const char *value, char ***ret_v, size_t *ret_n,
			  struct diags *d)
{
	return parse_list(file, line, value, false, ret_v, ret_n, d);
}

int job_parse_function_list(const char *file, int line, const char *value, char ***ret_v, size_t *ret_n,
			    struct diags *d)
{
	return parse_list(file, line, value, true, ret_v, ret_n, d);
}

static bool parse_uint(const char *s, unsigned *ret)
{
	uint64_t u;
	if (util_parse_u64(s, &u) < 0 || u > UINT_MAX)
		return false;
	*ret = (unsigned)u;
	return true;
}

/* "adaptive 5..20 step 5", split into at most four words. */
static size_t split_words(char *s, char **w, size_t max)
{
	size_t n = 0;
	for (char *p = s; *p;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		w[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = 0;
	}
	return n;
}

bool job_parse_pairs(const char *file, int line, const char *value, struct job *j, struct diags *d)
{
	unsigned n;
	if (parse_uint(value, &n)) {
		if (n < 1 || n > JOB_PAIRS_MAX) {
			ERR(file, line, "pairs %s is out of range: expected 1 to %u", value, JOB_PAIRS_MAX);
			return false;
		}
		j->pairs = n;
		j->adaptive = (struct job_adaptive){ 0 };
		return true;
	}
	char buf[128], *w[4];
	snprintf(buf, sizeof(buf), "%s", value);
	size_t nw = strlen(value) < sizeof(buf) ? split_words(buf, w, 4) : 0;
	if (nw == 0 || strcmp(w[0], "adaptive") != 0) {
		ERR(file, line, "bad pairs \"%s\": expected a whole number from 1 to %u, or adaptive MIN..MAX (e.g. adaptive 5..20)",
		    value, JOB_PAIRS_MAX);
		return false;
	}
	struct job_adaptive a = { .on = true };
	char *dots = nw >= 2 ? strstr(w[1], "..") : NULL;
	if (dots)
		*dots = 0;
	if ((nw != 2 && nw != 4) || !dots || !parse_uint(w[1], &a.min) || !parse_uint(dots + 2, &a.max) ||
	    (nw == 4 && (strcmp(w[2], "step") != 0 || !parse_uint(w[3], &a.step)))) {
		ERR(file, line, "bad pairs \"%s\": expected adaptive MIN..MAX or adaptive MIN..MAX step STEP (e.g. adaptive 5..20: looks at 5, 10, 15 and 20 pairs)",
		    value);
		return false;
	}
	if (nw == 2)
		a.step = a.min;
	if (a.min < JOB_ADAPTIVE_MIN || a.max > JOB_PAIRS_MAX) {
		ERR(file, line, "pairs = %s is out of range: MIN at least %u, MAX at most %u", value, JOB_ADAPTIVE_MIN,
		    JOB_PAIRS_MAX);
		return false;
	}
	if (a.min == a.max) {
		ERR(file, line, "pairs = %s has a single look: write pairs = %u", value, a.max);
		return false;
	}
	if (a.min > a.max) {
		ERR(file, line, "pairs = %s: MIN (%u) must be below MAX (%u)", value, a.min, a.max);
		return false;
	}
	if (a.step == 0 || (a.max - a.min) % a.step != 0) {
		ERR(file, line, "pairs = %s: MAX - MIN must be a multiple of the step (%u), so that the budget is a look",
		    value, a.step);
		return false;
	}
	unsigned looks = (a.max - a.min) / a.step + 1;
	if (looks > JOB_LOOKS_MAX) {
		ERR(file, line, "pairs = %s makes %u looks, at most %u: use a larger step", value, looks, JOB_LOOKS_MAX);
		return false;
	}
	j->adaptive = a;
	j->pairs = a.max;
	return true;
}

/* Digits with at most one '.', as a percentage is written. */
static bool plain_decimal(const char *s, size_t n)
{
	bool digit = false, dot = false;
	for (size_t i = 0; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			digit = true;
		else if (s[i] == '.' && !dot)
			dot = true;
		else
			return false;
	}
	return digit;
}

bool job_parse_percent(const char *file, int line, const char *key, const char *value, double *ret, struct diags *d)
{
	char num[64];
	size_t n = strlen(value);
	if (n && value[n - 1] == '%')
		n--;
	double v = 0;
	bool ok = n > 0 && n < sizeof(num) && plain_decimal(value, n);
	if (ok) {
		memcpy(num, value, n);
		num[n] = 0;
		ok = util_parse_double(num, &v) == 0;
	}
	if (!ok) {
		ERR(file, line, "bad %s \"%s\": expected a percentage such as 2%% or 0.5%%", key, value);
		return false;
	}
	v = round(v * 1e6) / 1e6;
	if (v <= 0 || v > JOB_EPSILON_MAX) {
		ERR(file, line, "%s %s is out of range: expected more than 0%% and at most %.0f%%", key, value, JOB_EPSILON_MAX);
		return false;
	}
	*ret = v;
	return true;
}

bool job_valid_unit(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 31)
		return false;
	for (const char *p = s; *p; p++)
		if (!isgraph((unsigned char)*p) || *p == ';' || *p == '#' || *p == '"' || *p == ',')
			return false;
	return true;
}

void job_format_pairs(const struct job *j, char *buf, size_t len)
{
	if (j->adaptive.on)
		snprintf(buf, len, "adaptive %u..%u step %u", j->adaptive.min, j->adaptive.max, j->adaptive.step);
	else
		snprintf(buf, len, "%u", j->pairs);
}

void job_format_percent(double pct, char *buf, size_t len)
{
	char num[64];
	snprintf(num, sizeof(num), "%.6f", pct);
	size_t n = strlen(num);
	while (n > 0 && num[n - 1] == '0')
		num[--n] = 0;
	if (n > 0 && num[n - 1] == '.')
		num[--n] = 0;
	snprintf(buf, len, "%s%%", num);
}

/* One operand of ratio = A / B: a metric a run records itself, not a
 * prefix and not another ratio. */
static bool ratio_operand(const char *w)
{
	return job_valid_metric(w) && !strchr(w, '*') && strncmp(w, "ratio.", 6) != 0;
}

static char *trimmed(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

int job_parse_ratio(const char *file, int line, struct job_metric *m, struct diags *d)
{
	const char *slash = strchr(m->ratio, '/');
	if (strncmp(m->name, "ratio.", 6) != 0 || strchr(m->name, '*')) {
		ERR(file, line, "ratio in [metric %s]: a derived metric is named ratio.NAME (no '*'), e.g. [metric ratio.tlb_per_page]",
		    m->name);
		return -EINVAL;
	}
	if (!slash || strchr(slash + 1, '/')) {
		ERR(file, line, "bad ratio \"%s\": expected METRIC / METRIC, e.g. interrupts.TLB / vmstat.pswpout", m->ratio);
		return -EINVAL;
	}
	char *of = trimmed(m->ratio, (size_t)(slash - m->ratio));
	char *per = trimmed(slash + 1, strlen(slash + 1));
	if (!of || !per) {
		free(of);
		free(per);
		return -ENOMEM;
	}
	int bad = 0;
	if (!ratio_operand(of) || !ratio_operand(per)) {
		ERR(file, line, "bad ratio \"%s\": each side is one metric a run records (SOURCE.NAME, no '*', not a ratio.), e.g. interrupts.TLB / vmstat.pswpout",
		    m->ratio);
		bad = -EINVAL;
	} else if (strcmp(of, per) == 0) {
		ERR(file, line, "bad ratio \"%s\": a metric divided by itself is 1 in every run", m->ratio);
		bad = -EINVAL;
	}
	if (bad) {
		free(of);
		free(per);
		return bad;
	}
	free(m->ratio_of);
	free(m->ratio_per);
	m->ratio_of = of;
	m->ratio_per = per;
	return 0;
}

bool job_metric_matches(const char *pattern, const char *metric)
{
	size_t pl = strlen(pattern);
	if (pl && pattern[pl - 1] == '*')
		return strncmp(metric, pattern, pl - 1) == 0;
	return strcmp(metric, pattern) == 0;
}

bool job_metric_is_primary(const struct job *j, const char *metric)
{
	for (size_t i = 0; i < j->n_primary; i++)
		if (job_metric_matches(j->primary[i], metric))
			return true;
	return false;
}

static bool in_list(char *const *list, size_t n, const char *metric)
{
	for (size_t i = 0; i < n; i++)
		if (job_metric_matches(list[i], metric))
			return true;
	return false;
}

bool job_metric_is_cover_row(const struct job *j, const char *metric)
{
	if (j->n_report_rows)
		return in_list(j->report_rows, j->n_report_rows, metric);
	if (!j->n_primary && !j->n_metrics)
		return true;
	return in_list(j->primary, j->n_primary, metric) || in_list(j->metrics, j->n_metrics, metric);
}

/* How closely a section names a metric: -1 no match; an exact name beats
 * any prefix, a longer prefix a shorter one. */
static long specificity(const char *pattern, const char *metric)
{
	if (!job_metric_matches(pattern, metric))
		return -1;
	size_t pl = strlen(pattern);
	return pattern[pl - 1] == '*' ? (long)pl : LONG_MAX;
}

void job_metric_settings(const struct job *j, const char *metric, struct job_metric *ret)
{
	struct job_metric m = { .name = NULL, .direction = DIRECTION_UNSET, .min_change_pct = -1, .equivalence_pct = -1 };
	long best_dir = -1, best_unit = -1, best_min = -1, best_eq = -1, best_label = -1;
	for (size_t i = 0; j && i < j->n_metric_settings; i++) {
		const struct job_metric *s = &j->metric_settings[i];
		long sp = specificity(s->name, metric);
		if (sp < 0)
			continue;
		if (s->direction != DIRECTION_UNSET && sp > best_dir) {
			m.direction = s->direction;
			best_dir = sp;
		}
		if (s->unit && sp > best_unit) {
			m.unit = s->unit;
			best_unit = sp;
		}
		if (s->min_change_pct >= 0 && sp > best_min) {
			m.min_change_pct = s->min_change_pct;
			best_min = sp;
		}
		if (s->equivalence_pct >= 0 && sp > best_eq) {
			m.equivalence_pct = s->equivalence_pct;
			best_eq = sp;
		}
		if (s->label && sp > best_label) {
			m.label = s->label;
			best_label = sp;
		}
	}
	*ret = m;
}

unsigned job_looks(const struct job *j)
{
	if (!j->adaptive.on || j->adaptive.step == 0)
		return 1;
	return (j->adaptive.max - j->adaptive.min) / j->adaptive.step + 1;
}

unsigned job_look_pairs(const struct job *j, unsigned look)
{
	if (!j->adaptive.on)
		return j->pairs;
	if (look < 1)
		look = 1;
	unsigned p = j->adaptive.min + (look - 1) * j->adaptive.step;
	return p > j->adaptive.max ? j->adaptive.max : p;
}
