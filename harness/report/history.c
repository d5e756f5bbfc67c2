/* The nightly history model: each ended job's rows from its report
 * (history_refresh), and the series of a name read back with their gaps
 * and change points (history_load). */
#include "harness/report/history.h"
#include "harness/report/report.h"
#include "harness/stats/changepoint.h"
#include "harness/stats/stats.h"
#include "db/store.h"
#include "db/store_history.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY_S 86400.0

#define STATE_WORD(e, word) [e] = word,
static const char *const state_words[HISTORY_POINT_STATE_N] = { HISTORY_POINT_STATE_LIST(STATE_WORD) };

UTIL_WORD_FUNCS(history_point_state, state_words, HISTORY_POINT_STATE_N)

static bool chars_ok(const char *s, size_t max, const char *extra)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i]))
			return false;
	return true;
}

bool history_name_ok(const char *s)
{
	return chars_ok(s, HISTORY_NAME_MAX, "._-");
}
bool history_metric_ok(const char *s)
{
	return chars_ok(s, HISTORY_METRIC_MAX, "._-:+/[]");
}

/* ---- refresh: a job's rows from its report ---- */

/* The night's finished runs (run_status_finished), and those of them that
 * did not produce a value: failed, killed, timed out or contaminated. */
static void count_runs(const struct report *rep, struct store_history_night *n)
{
	for (size_t wi = 0; wi < rep->n_workloads; wi++) {
		const size_t *c = rep->w[wi].runs;
		for (size_t v = 0; c && v < rep->n_variants; v++)
			for (size_t s = 0; s < RUN_STATUS_N; s++) {
				size_t k = c[v * RUN_STATUS_N + s];
				if (!run_status_finished((enum run_status)s))
					continue;
				n->runs += (unsigned)k;
				if (s != RUN_OK)
					n->runs_failed += (unsigned)k;
			}
	}
}

static void fill_row(const struct report *rep, const struct report_workload *w, size_t i, size_t v, struct store_history_row *x)
{
	const struct report_metric *m = &w->m[i];
	const struct stats_result *res = &m->cmp[v];
	*x = (struct store_history_row){
		.job_id = rep->job_id,
		.variant = (int)v,
		.rank = (int)i,
		.primary = m->primary,
		.pairs = (unsigned)res->pairs,
		.estimate_pct = res->hl_pct,
		.ci_lo_pct = res->ci_low_pct,
		.ci_hi_pct = res->ci_high_pct,
		.p = res->p_value,
		.median_base = m->desc[0].median,
		.median_variant = m->desc[v].median,
	};
	snprintf(x->workload, sizeof(x->workload), "%s", w->name);
	snprintf(x->metric, sizeof(x->metric), "%s", m->name);
	snprintf(x->variant_name, sizeof(x->variant_name), "%s", rep->variants[v]);
	snprintf(x->base_name, sizeof(x->base_name), "%s", rep->variants[0]);
	snprintf(x->verdict, sizeof(x->verdict), "%s", stats_verdict_name(res->verdict));
	snprintf(x->unit, sizeof(x->unit), "%s", m->info.unit);
	snprintf(x->direction, sizeof(x->direction), "%s", direction_name(m->info.dir));
}

/* One row per workload, metric and compared variant that has values; a
 * counter that stayed 0 on both sides is left out, as the report does. */
static int report_rows(const struct report *rep, struct store_history_row **ret, size_t *ret_n)
{
	size_t cap = 0, n = 0;
	for (size_t wi = 0; wi < rep->n_workloads; wi++)
		cap += rep->w[wi].n_metrics * (rep->n_variants ? rep->n_variants - 1 : 0);
	struct store_history_row *rows = calloc(cap ? cap : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t wi = 0; wi < rep->n_workloads; wi++) {
		const struct report_workload *w = &rep->w[wi];
		for (size_t i = 0; i < w->n_metrics; i++)
			for (size_t v = 1; v < rep->n_variants; v++) {
				if (report_all_zero(w, &w->m[i], v) || (w->m[i].desc[0].n == 0 && w->m[i].desc[v].n == 0))
					continue;
				fill_row(rep, w, i, v, &rows[n++]);
			}
	}
	*ret = rows;
	*ret_n = n;
	return 0;
}

int history_refresh_job(struct store *st, int64_t job_id)
{
	struct store_job sj;
	int r = store_job_info(st, job_id, &sj);
	if (r < 0)
		return r;
	struct report *rep = NULL;
	struct store_history_row *rows = NULL;
	size_t n = 0;
	if (!job_status_finished(sj.status))
		goto out; /* not a night yet */
	struct store_history_night night = { .job_id = job_id, .status = sj.status, .night = sj.started > 0 ? sj.started : sj.created };
	snprintf(night.reason, sizeof(night.reason), "%s", sj.reason);
	r = report_load(st, job_id, &rep);
	if (r == -ENOMEM || r == -EBUSY || r == -EIO)
		goto out; /* the next refresh tries again */
	if (r < 0) {
		/* a job file this kab no longer parses: a night without an estimate, said so */
		snprintf(night.reason, sizeof(night.reason), "its report cannot be made: %s", strerror(-r));
		rep = NULL;
	}
	if (rep)
		count_runs(rep, &night);
	if (rep && sj.status == JOB_DONE) {
		if ((r = report_analyze(rep)) < 0) {
			log_error("history: job %lld: statistics failed: %s", (long long)job_id, strerror(-r));
			goto out;
		}
		if ((r = report_rows(rep, &rows, &n)) < 0)
			goto out;
	}
	r = store_history_put(st, sj.name, &night, rows, n);
out:
	free(rows);
	report_free(rep);
	store_job_clear(&sj);
	return r;
}

int history_refresh(struct store *st, const char *name, size_t *ret_added)
{
	int64_t *ids = NULL;
	size_t n = 0, added = 0;
	int r = store_history_missing(st, name, &ids, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = history_refresh_job(st, ids[i]);
		added += r >= 0;
	}
	free(ids);
	if (ret_added)
		*ret_added = added;
	return r < 0 ? r : 0;
}

int history_refresh_all(struct store *st, size_t *ret_names, size_t *ret_added)
{
	char **names = NULL;
	size_t n = 0, added = 0, done = 0;
	int r = store_history_missing_names(st, &names, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		size_t k = 0;
		/* one name that cannot be made does not keep the others out */
		if (history_refresh(st, names[i], &k) < 0)
			log_warn("history: the nights of \"%s\" could not all be made", names[i]);
		added += k;
		done += k > 0;
	}
	if (r >= 0)
		store_history_names_free(names, n);
	if (ret_names)
		*ret_names = done;
	if (ret_added)
		*ret_added = added;
	return r < 0 ? r : 0;
}

/* ---- load: the series of a name ---- */

void history_free(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_series; i++) {
		free(h->series[i].points);
		free(h->series[i].changes);
	}
	free(h->series);
	free(h->nights);
	free(h->rows);
	store_history_names_free(h->metrics, h->n_metrics);
	free(h);
}

/* The local calendar day of t, as days since 1970-01-01. */
static long local_day(double t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm))
		return 0;
	struct tm civil = { .tm_year = tm.tm_year, .tm_mon = tm.tm_mon, .tm_mday = tm.tm_mday, .tm_hour = 12 };
	return (long)floor((double)timegm(&civil) / DAY_S);
}

static int row_cmp(const void *a, const void *b)
{
	const struct store_history_row *x = *(const struct store_history_row *const *)a;
	const struct store_history_row *y = *(const struct store_history_row *const *)b;
	int c = strcmp(x->workload, y->workload);
	if (!c)
		c = strcmp(x->metric, y->metric);
	if (!c)
		c = x->variant - y->variant;
	if (!c)
		c = x->night < y->night ? -1 : x->night > y->night;
	if (!c)
		c = x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
	return c;
}

static bool same_series(const struct store_history_row *x, const struct store_history_row *y)
{
	return x->variant == y->variant && strcmp(x->workload, y->workload) == 0 && strcmp(x->metric, y->metric) == 0;
}

static int series_cmp(const void *a, const void *b)
{
	const struct store_history_row *x = ((const struct history_series *)a)->key;
	const struct store_history_row *y = ((const struct history_series *)b)->key;
	int c = strcmp(x->workload, y->workload);
	if (!c)
		c = x->rank - y->rank;
	if (!c)
		c = strcmp(x->metric, y->metric);
	if (!c)
		c = x->variant - y->variant;
	return c;
}

static enum history_point_state night_state(const struct store_history_night *n, const struct store_history_row *row)
{
	if (n->status == JOB_CANCELLED)
		return HISTORY_CANCELLED;
	if (n->status != JOB_DONE)
		return HISTORY_FAILED;
	return row && isfinite(row->estimate_pct) ? HISTORY_MEASURED : HISTORY_NO_ESTIMATE;
}

static const struct store_history_commit *night_commit(const struct store_history_night *n, int variant)
{
	for (size_t i = 0; i < n->n_commits; i++)
		if (n->commits[i].variant == variant)
			return &n->commits[i];
	return n->n_commits ? &n->commits[0] : NULL;
}

/* The points of one series: every night, the rows rs[0..nr) (its own,
 * by night) where they are, the missed days between nights. */
static int series_points(const struct history *h, const long *days, struct store_history_row *const *rs, size_t nr,
			 struct history_series *s)
{
	s->points = calloc(2 * h->n_nights + 1, sizeof(*s->points));
	if (!s->points)
		return -ENOMEM;
	size_t k = 0;
	for (size_t j = 0; j < h->n_nights; j++) {
		const struct store_history_night *n = &h->nights[j];
		if (j > 0 && days[j] - days[j - 1] > 1)
			s->points[s->n_points++] =
				(struct history_point){ .state = HISTORY_MISSED,
							.night = SIZE_MAX,
							.missed_from = (double)(days[j - 1] + 1) * DAY_S + DAY_S / 2,
							.missed_days = (unsigned)(days[j] - days[j - 1] - 1) };
		while (k < nr && (rs[k]->night < n->night || (rs[k]->night == n->night && rs[k]->job_id < n->job_id)))
			k++;
		const struct store_history_row *row = k < nr && rs[k]->job_id == n->job_id ? rs[k] : NULL;
		struct history_point *p = &s->points[s->n_points++];
		*p = (struct history_point){
			.state = night_state(n, row), .night = j, .row = row, .commit = night_commit(n, s->key->variant)
		};
		p->force_pushed = p->commit && strstr(p->commit->event, "force-push") != NULL;
		s->measured += p->state == HISTORY_MEASURED;
	}
	return 0;
}

/* cp_detect on the measured nights' estimates, each point mapped back to
 * the series' points. */
static int series_changes(const struct history *h, struct history_series *s)
{
	if (s->measured < 2) {
		snprintf(s->note, sizeof(s->note), "not enough nights: %zu measured of %zu", s->measured, h->n_nights);
		return 0;
	}
	double *x = calloc(s->measured, sizeof(*x));
	size_t *at = calloc(s->measured, sizeof(*at));
	struct cp_result res = { 0 };
	int r = -ENOMEM;
	if (!x || !at)
		goto out;
	size_t m = 0;
	for (size_t i = 0; i < s->n_points; i++)
		if (s->points[i].state == HISTORY_MEASURED) {
			at[m] = i;
			x[m++] = s->points[i].row->estimate_pct;
		}
	struct cp_params par = { 0 };
	r = cp_detect(x, m, &par, &res);
	if (r == -ENODATA) {
		snprintf(s->note, sizeof(s->note), "not enough nights: %zu measured of %zu, too few to detect a change",
			 m, h->n_nights);
		r = 0;
		goto out;
	}
	if (r < 0) {
		snprintf(s->note, sizeof(s->note), "change-point detection failed: %s", strerror(-r));
		r = 0;
		goto out;
	}
	s->enough = true;
	if (res.n && !(s->changes = calloc(res.n, sizeof(*s->changes)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < res.n; i++) {
		const struct cp_point *p = &res.points[i];
		if (p->index == 0 || p->index >= m || p->before_start >= p->index || p->after_end > m)
			continue; /* outside the contract: never shown */
		s->changes[s->n_changes++] = (struct history_change){
			.last_good = at[p->index - 1],
			.first_bad = at[p->index],
			.before_first = at[p->before_start],
			.after_last = at[p->after_end - 1],
			.nights_before = p->index - p->before_start,
			.nights_after = p->after_end - p->index,
			.mean_before = p->mean_before,
			.mean_after = p->mean_after,
			.pct = p->pct,
			.delta_pts = p->mean_after - p->mean_before,
			.p = p->p,
		};
	}
out:
	cp_result_free(&res);
	free(x);
	free(at);
	return r;
}

/* Groups h->rows into series and fills each. */
static int build_series(struct history *h)
{
	struct store_history_row **idx = calloc(h->n_rows ? h->n_rows : 1, sizeof(*idx));
	long *days = calloc(h->n_nights ? h->n_nights : 1, sizeof(*days));
	int r = -ENOMEM;
	if (!idx || !days)
		goto out;
	for (size_t i = 0; i < h->n_rows; i++)
		idx[i] = &h->rows[i];
	for (size_t j = 0; j < h->n_nights; j++)
		days[j] = local_day(h->nights[j].night);
	qsort(idx, h->n_rows, sizeof(*idx), row_cmp);
	size_t groups = 0;
	for (size_t i = 0; i < h->n_rows; i++)
		groups += i == 0 || !same_series(idx[i - 1], idx[i]);
	if (groups && !(h->series = calloc(groups, sizeof(*h->series))))
		goto out;
	r = 0;
	for (size_t i = 0; r >= 0 && i < h->n_rows;) {
		size_t k = i;
		while (k < h->n_rows && same_series(idx[i], idx[k]))
			k++;
		struct history_series *s = &h->series[h->n_series++];
		s->key = idx[k - 1];
		if ((r = series_points(h, days, idx + i, k - i, s)) >= 0)
			r = series_changes(h, s);
		i = k;
	}
	if (r >= 0 && h->n_series > 1) /* qsort of none: series may be NULL */
		qsort(h->series, h->n_series, sizeof(*h->series), series_cmp);
out:
	free(idx);
	free(days);
	return r;
}

static int load_rows(const struct history_source *src, struct history *h, const struct history_query *q)
{
	struct store_history_filter f = { .metric = q->metric, .workload = q->workload, .variant = -1 };
	if (!q->metric)
		f.primary_only = true;
	int r = src->rows(src->ctx, h->name, &f, &h->rows, &h->n_rows);
	if (r >= 0 && !q->metric && h->n_rows == 0) {
		free(h->rows);
		h->rows = NULL;
		f.primary_only = false;
		f.first_rank = true;
		r = src->rows(src->ctx, h->name, &f, &h->rows, &h->n_rows);
	}
	return r;
}

static int store_nights(void *ctx, const char *name, struct store_history_night **ret, size_t *ret_n)
{
	return store_history_nights(ctx, name, ret, ret_n);
}

static int store_rows(void *ctx, const char *name, const struct store_history_filter *f, struct store_history_row **ret, size_t *ret_n)
{
	return store_history_rows(ctx, name, f, ret, ret_n);
}

static int store_metric_names(void *ctx, const char *name, char ***ret, size_t *ret_n)
{
	return store_history_metric_names(ctx, name, ret, ret_n);
}

int history_load(struct store *st, const char *name, const struct history_query *q, struct history **ret)
{
	const struct history_source src = { .ctx = st, .nights = store_nights, .rows = store_rows, .metric_names = store_metric_names };
	return history_load_from(&src, name, q, ret);
}

int history_load_from(const struct history_source *src, const char *name, const struct history_query *q, struct history **ret)
{
	struct history_query none = { 0 };
	if (!q)
		q = &none;
	if (!history_name_ok(name) || (q->metric && !history_metric_ok(q->metric)))
		return -EINVAL;
	struct history *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->metric, sizeof(h->metric), "%s", q->metric ? q->metric : "");
	int r = src->nights(src->ctx, name, &h->nights, &h->n_nights);
	if (r >= 0 && h->n_nights == 0)
		r = -ENOENT;
	if (r >= 0)
		r = src->metric_names(src->ctx, name, &h->metrics, &h->n_metrics);
	if (r >= 0)
		r = load_rows(src, h, q);
	for (size_t j = 0; r >= 0 && j < h->n_nights; j++)
		h->n_failed += h->nights[j].status != JOB_DONE;
	if (r >= 0)
		r = build_series(h);
	for (size_t i = 0; r >= 0 && i < h->n_series; i++) {
		h->enough = h->enough || h->series[i].enough;
		if (h->series[i].measured > h->n_measured)
			h->n_measured = h->series[i].measured;
	}
	if (r >= 0 && !h->enough)
		snprintf(h->note, sizeof(h->note), "not enough nights: %zu night%s, %zu failed, %zu measured",
			 h->n_nights, h->n_nights == 1 ? "" : "s", h->n_failed, h->n_measured);
	if (r < 0) {
		history_free(h);
		return r;
	}
	*ret = h;
	return 0;
}
