/* The report model: building it and the statistics over it. Loading a
 * stored job is report_store.c (its kernels and boots report_boots.c),
 * reading a CSV file compare_csv.c; the formats are report_text.c,
 * report_cover.c and report_json.c, which read the model, and choosing
 * one is report_render.c. */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int report_new(const char *title, char *const *variants, size_t n_variants, struct report **ret)
{
	struct report *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->alpha = 0.05;
	r->title = strdup(title);
	r->variants = calloc(n_variants + 1, sizeof(char *));
	if (!r->title || !r->variants) {
		report_free(r);
		return -ENOMEM;
	}
	for (size_t v = 0; v < n_variants; v++) {
		if (!(r->variants[v] = strdup(variants[v]))) {
			report_free(r);
			return -ENOMEM;
		}
		r->n_variants++;
	}
	*ret = r;
	return 0;
}

static void metric_clear(struct report_metric *m)
{
	free(m->name);
	free(m->values);
	free(m->desc);
	free(m->cmp);
}

void report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_workloads; i++) {
		struct report_workload *w = &r->w[i];
		for (size_t k = 0; k < w->n_metrics; k++)
			metric_clear(&w->m[k]);
		free(w->m);
		free(w->name);
		free(w->runs);
		free(w->family);
		free(w->holm);
	}
	free(r->w);
	for (size_t v = 0; v < r->n_variants; v++)
		free(r->variants[v]);
	free(r->variants);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	for (size_t i = 0; i < r->n_unavailable; i++)
		free(r->unavailable[i]);
	free(r->unavailable);
	for (size_t i = 0; i < r->n_boots; i++)
		free(r->boots[i]);
	free(r->boots);
	report_boots_free(r);
	free(r->title);
	free(r->source);
	job_free(r->job);
	free(r);
}

int report_add_workload(struct report *r, const char *name, size_t pairs, struct report_workload **ret)
{
	struct report_workload *nw = realloc(r->w, (r->n_workloads + 1) * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	r->w = nw;
	struct report_workload *w = &r->w[r->n_workloads];
	*w = (struct report_workload){ .pairs = pairs, .looks = 1 };
	snprintf(w->stop_reason, sizeof(w->stop_reason), "budget");
	snprintf(w->budget, sizeof(w->budget), "%zu", pairs);
	w->name = strdup(name);
	w->runs = calloc(r->n_variants * RUN_STATUS_N + 1, sizeof(size_t));
	w->family = calloc(r->n_variants, sizeof(size_t));
	w->holm = calloc(r->n_variants, sizeof(size_t));
	if (!w->name || !w->runs || !w->family || !w->holm) {
		free(w->name);
		free(w->runs);
		free(w->family);
		free(w->holm);
		return -ENOMEM;
	}
	r->n_workloads++;
	*ret = w;
	return 0;
}

struct report_metric *report_find_metric(const struct report_workload *w, const char *name)
{
	for (size_t i = 0; i < w->n_metrics; i++)
		if (strcmp(w->m[i].name, name) == 0)
			return &w->m[i];
	return NULL;
}

int report_add_metric(struct report *r, struct report_workload *w, const char *name, const char *unit_hint,
		      struct report_metric **ret)
{
	if (util_grow(w->m, w->cap_metrics, w->n_metrics + 1, 16) < 0)
		return -ENOMEM;
	struct report_metric m = { .min_change_pct = -1, .equivalence_pct = -1, .decimals = -1 };
	size_t cells = r->n_variants * (w->pairs ? w->pairs : 1);
	m.name = strdup(name);
	m.values = malloc(cells * sizeof(double));
	m.desc = calloc(r->n_variants, sizeof(*m.desc));
	m.cmp = calloc(r->n_variants, sizeof(*m.cmp));
	if (!m.name || !m.values || !m.desc || !m.cmp) {
		metric_clear(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cells; i++)
		m.values[i] = NAN;
	metrics_describe(name, unit_hint, &m.info);
	if (r->job) {
		struct job_metric s;
		job_metric_settings(r->job, name, &s);
		m.info.dir = metrics_direction(s.direction, m.info.dir);
		if (s.unit)
			snprintf(m.info.unit, sizeof(m.info.unit), "%s", s.unit);
		if (s.label)
			snprintf(m.info.label, sizeof(m.info.label), "%s", s.label);
		m.min_change_pct = s.min_change_pct;
		m.equivalence_pct = s.equivalence_pct;
		m.primary = job_metric_is_primary(r->job, name);
		m.cover = job_metric_is_cover_row(r->job, name);
	} else {
		m.cover = true;
	}
	w->m[w->n_metrics] = m;
	*ret = &w->m[w->n_metrics++];
	return 0;
}

bool report_all_zero(const struct report_workload *w, const struct report_metric *m, size_t v)
{
	const size_t sides[2] = { 0, v };
	bool any = false;
	for (size_t k = 0; k < 2; k++)
		for (size_t p = 0; p < w->pairs; p++) {
			double x = m->values[sides[k] * w->pairs + p];
			if (isnan(x))
				continue;
			if (x != 0)
				return false;
			any = true;
		}
	return any;
}

static int add_line(char ***lines, size_t *n_lines, const char *fmt, va_list ap)
{
	char **nn = realloc(*lines, (*n_lines + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	*lines = nn;
	if (vasprintf(&nn[*n_lines], fmt, ap) < 0)
		return -ENOMEM;
	(*n_lines)++;
	return 0;
}

int report_add_note(struct report *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int e = add_line(&r->notes, &r->n_notes, fmt, ap);
	va_end(ap);
	return e;
}

int report_add_warning(struct report *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int e = add_line(&r->warnings, &r->n_warnings, fmt, ap);
	va_end(ap);
	return e;
}

const char *report_oom_tolerated(const struct report *r, const struct report_workload *w, char *buf, size_t len)
{
	size_t counted = 0;
	for (size_t v = 0; v < r->n_variants; v++)
		counted += w->runs ? w->runs[v * RUN_STATUS_N + RUN_OK] : 0;
	snprintf(buf, len, "oom = tolerate: %zu of %zu counted runs had memcg OOM kills", w->oom_counted, counted);
	return buf;
}

/* Rule 6 for one comparison. Secondary metrics: Benjamini-Hochberg over
 * those whose test could reach p < alpha on their values (a metric
 * constant in every run, or with too few non-zero differences, cannot:
 * leaving it out looks only at the pooled values, not at the labels);
 * they need q < alpha. Primary metrics: Holm among those that could reach
 * it when there are several, their own p when one. A metric outside both
 * keeps q = NAN. Each verdict is decided again on the adjusted value. */
static int adjust(const struct report *r, struct report_workload *w, size_t v)
{
	if (w->n_metrics == 0)
		return 0;
	size_t n = w->n_metrics;
	double *p = calloc(n, sizeof(double)), *q = calloc(n, sizeof(double));
	double *pp = calloc(n, sizeof(double)), *hq = calloc(n, sizeof(double));
	int ret = -ENOMEM;
	if (!p || !q || !pp || !hq)
		goto out;
	size_t family = 0, primaries = 0;
	for (size_t i = 0; i < n; i++) {
		const struct stats_result *res = &w->m[i].cmp[v];
		bool in = stats_testable(res, r->alpha) && !isnan(res->p_value);
		p[i] = in && !w->m[i].primary ? res->p_value : NAN;
		pp[i] = in && w->m[i].primary ? res->p_value : NAN;
		family += in && !w->m[i].primary;
		primaries += in && w->m[i].primary;
	}
	if ((ret = stats_bh(p, n, q)) < 0 || (ret = stats_holm(pp, n, hq)) < 0)
		goto out;
	w->family[v] = family;
	w->holm[v] = primaries > 1 ? primaries : 0;
	for (size_t i = 0; i < n; i++) {
		struct report_metric *m = &w->m[i];
		struct stats_result *res = &m->cmp[v];
		res->q_value = m->primary ? hq[i] : q[i];
		/* outside the family p >= alpha already; decide on p itself */
		double used = isnan(res->q_value) ? res->p_value : res->q_value;
		res->verdict = stats_decide(res, used, r->alpha, m->info.dir);
	}
	ret = 0;
out:
	free(p);
	free(q);
	free(pp);
	free(hq);
	return ret;
}

int report_analyze(struct report *r)
{
	for (size_t wi = 0; wi < r->n_workloads; wi++) {
		struct report_workload *w = &r->w[wi];
		size_t np = w->pairs;
		for (size_t i = 0; i < w->n_metrics; i++) {
			struct report_metric *m = &w->m[i];
			if (m->decimals < 0)
				m->decimals = report_decimals_auto(m->values, r->n_variants * np);
			for (size_t v = 0; v < r->n_variants; v++) {
				int e = stats_describe(m->values + v * np, np, &m->desc[v]);
				if (e < 0)
					return e;
			}
			/* Whole counts print whole, but a mean of 0.25 OOM kills
			 * must not show as 0. */
			for (size_t v = 0; v < r->n_variants && m->decimals == 0; v++) {
				double mean = m->desc[v].mean;
				if (isfinite(mean) && mean != floor(mean) && fabs(mean) < 100)
					m->decimals = 2;
			}
			for (size_t v = 1; v < r->n_variants; v++) {
				struct stats_input in = {
					.a = m->values,
					.b = m->values + v * np,
					.n = np,
					.dir = m->info.dir,
					.min_change_pct = m->min_change_pct,
					.equivalence_pct = m->equivalence_pct,
					.alpha = r->alpha,
				};
				int e = stats_compare(&in, &m->cmp[v]);
				if (e < 0)
					return e;
			}
		}
		for (size_t v = 1; v < r->n_variants; v++) {
			int e = adjust(r, w, v);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

void report_fmt_n(const struct report_metric *m, size_t v, char *buf, size_t len)
{
	size_t a = m->desc[0].n, b = m->desc[v].n;
	if (a == b)
		snprintf(buf, len, "%zu", a);
	else
		snprintf(buf, len, "%zu/%zu", a, b);
}
