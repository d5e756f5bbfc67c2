/* The nightly history as text (kab history) and as JSON (GET
 * /api/v1/history, kab history --format json). The JSON's field names
 * are a contract for the web page and scripts (doc/nightly.md, "Nightly history"). */
#include "harness/report/history.h"
#include "harness/report/report_priv.h"
#include "harness/base/esc.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HISTORY_JSON_SCHEMA 1

/* YYYY-MM-DD of t: local time for nights, UTC for the missed days' noons. */
static void fmt_date(double t, bool local, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!(local ? localtime_r(&tt, &tm) : gmtime_r(&tt, &tm)) || strftime(buf, len, "%Y-%m-%d", &tm) == 0)
		snprintf(buf, len, "?");
}

static void point_date(const struct history *h, const struct history_point *p, char *buf, size_t len)
{
	if (p->state == HISTORY_MISSED)
		fmt_date(p->missed_from, false, buf, len);
	else
		fmt_date(h->nights[p->night].night, true, buf, len);
}

static const char *dir_words(const char *dir)
{
	enum direction d = DIRECTION_NEUTRAL;
	direction_parse(dir, &d);
	return d == DIRECTION_HIGHER ? "higher is better" : d == DIRECTION_LOWER ? "lower is better" : "no direction";
}

/* "1a2b3c4d5e6f mm: subject" cut to width, or "-". */
static void fmt_commit(const struct store_history_commit *c, char *buf, size_t len)
{
	if (!c || !c->sha[0]) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf, len, "%.12s %.40s", c->sha, c->subject);
}

/* One scale for a series' medians, picked from all of them as the text
 * report picks a row's (report_unit.c): the largest picks the unit
 * ("135 ms", "1.50 GiB"), the smallest its decimals; a unit kab does not
 * scale shows the raw number with the decimals of stored values (a count
 * whole: "1310724"). One unit down the column: nights read side by side. */
static int series_scale(const struct history_series *s, bool utf8, struct report_scale *ret)
{
	double *v = malloc((2 * s->n_points + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	double big = 0, small = 0;
	for (size_t i = 0; i < s->n_points; i++) {
		const struct history_point *p = &s->points[i];
		if (p->state != HISTORY_MEASURED)
			continue;
		v[n++] = p->row->median_base;
		v[n++] = p->row->median_variant;
		for (size_t k = n - 2; k < n; k++)
			if (isfinite(v[k]) && v[k] != 0) {
				big = fmax(big, fabs(v[k]));
				small = small == 0 ? fabs(v[k]) : fmin(small, fabs(v[k]));
			}
	}
	report_scale_pick(s->key->unit, big, small, report_decimals_auto(v, n), utf8, ret);
	free(v);
	return 0;
}

static void text_point(const struct history *h, const struct history_point *p, const struct report_scale *scale, FILE *out)
{
	char date[16], commit[96], pct[32], ci[64], base[32], var[32];
	point_date(h, p, date, sizeof(date));
	if (p->state == HISTORY_MISSED) {
		fprintf(out, "%-10s  %6s  (%u day%s with no job)\n", date, "-", p->missed_days, p->missed_days == 1 ? "" : "s");
		return;
	}
	const struct store_history_night *n = &h->nights[p->night];
	fmt_commit(p->commit, commit, sizeof(commit));
	fprintf(out, "%-10s  %6lld  ", date, (long long)n->job_id);
	report_pad(out, commit, 54);
	if (p->state == HISTORY_MEASURED) {
		report_fmt_pct(p->row->estimate_pct, pct, sizeof(pct));
		report_fmt_ci(p->row->ci_lo_pct, p->row->ci_hi_pct, ci, sizeof(ci));
		report_fmt_scaled(p->row->median_base, scale, base, sizeof(base));
		report_fmt_scaled(p->row->median_variant, scale, var, sizeof(var));
		fprintf(out, "%8s %-18s %12s %12s  %s", pct, ci, base, var, p->row->verdict);
	} else if (p->state == HISTORY_NO_ESTIMATE) {
		fprintf(out, "no estimate (%u of %u runs failed)", n->runs_failed, n->runs);
	} else {
		fprintf(out, "%s%s%s", history_point_state_name(p->state), n->reason[0] ? ": " : "", n->reason);
	}
	if (p->commit && p->commit->event[0])
		fprintf(out, "  [%s%s]", p->force_pushed ? "FORCE-PUSHED: " : "", p->commit->event);
	fputc('\n', out);
}

static void text_side(const struct history *h, const struct history_point *p, const char *what, FILE *out)
{
	char date[16], commit[96];
	point_date(h, p, date, sizeof(date));
	fmt_commit(p->commit, commit, sizeof(commit));
	fprintf(out, "    %s %s, job %lld, %s\n", what, date, (long long)h->nights[p->night].job_id, commit);
}

static void text_changes(const struct history *h, const struct history_series *s, FILE *out)
{
	if (!s->enough) {
		fprintf(out, "change points: none: %s\n", s->note);
		return;
	}
	if (s->n_changes == 0) {
		fprintf(out, "change points: none in %zu measured nights\n", s->measured);
		return;
	}
	fprintf(out, "change points: %zu\n", s->n_changes);
	for (size_t i = 0; i < s->n_changes; i++) {
		const struct history_change *c = &s->changes[i];
		char before[32], after[32], p[32], date[16];
		report_fmt_pct(c->mean_before, before, sizeof(before));
		report_fmt_pct(c->mean_after, after, sizeof(after));
		report_fmt_p(c->p, p, sizeof(p));
		point_date(h, &s->points[c->first_bad], date, sizeof(date));
		fprintf(out, "  %s: mean %s over %zu nights, then %s over %zu nights (%+.1f points), p %s\n", date,
			before, c->nights_before, after, c->nights_after, c->delta_pts, p);
		text_side(h, &s->points[c->last_good], "last good", out);
		text_side(h, &s->points[c->first_bad], "first bad", out);
	}
}

static int text_series(const struct history *h, const struct history_series *s, bool utf8, FILE *out)
{
	const struct store_history_row *k = s->key;
	struct report_scale scale;
	int r = series_scale(s, utf8, &scale);
	if (r < 0)
		return r;
	fprintf(out, "\n%s: %s (%s%s%s), %s against %s%s\n", k->workload, k->metric, k->unit[0] ? k->unit : "",
		k->unit[0] ? ", " : "", dir_words(k->direction), k->variant_name, k->base_name, k->primary ? ", primary" : "");
	fprintf(out, "%-10s  %6s  ", "night", "job");
	report_pad(out, "commit", 54);
	fprintf(out, "%8s %-18s %12s %12s  %s\n", "delta", "95% CI", "base median", "median", "verdict");
	for (size_t i = 0; i < s->n_points; i++)
		text_point(h, &s->points[i], &scale, out);
	text_changes(h, s, out);
	return 0;
}

static int render_text(const struct history *h, bool utf8, FILE *out)
{
	char first[16], last[16];
	fmt_date(h->nights[0].night, true, first, sizeof(first));
	fmt_date(h->nights[h->n_nights - 1].night, true, last, sizeof(last));
	fprintf(out, "history of %s: %zu night%s from %s to %s, %zu failed or cancelled\n", h->name, h->n_nights,
		h->n_nights == 1 ? "" : "s", first, last, h->n_failed);
	if (h->metric[0] && h->n_series == 0)
		fprintf(out, "no rows of metric %s (%zu metrics have history)\n", h->metric, h->n_metrics);
	else if (!h->metric[0])
		fprintf(out, "%zu metrics have history; --metric M shows one\n", h->n_metrics);
	if (!h->enough)
		fprintf(out, "%s: no change points\n", h->note);
	for (size_t i = 0; i < h->n_series; i++) {
		int r = text_series(h, &h->series[i], utf8, out);
		if (r < 0)
			return r;
	}
	return ferror(out) ? -EIO : 0;
}

/* Commit subjects, metric names and units, a night's reason: shown, never
 * acted on by a terminal (esc.h). */
int history_render_text(const struct history *h, bool utf8, FILE *out)
{
	FILE *f = esc_stream(out);
	if (!f)
		return -ENOMEM;
	int r = render_text(h, utf8, f);
	if (fclose(f) != 0 && r >= 0)
		r = -EIO;
	return r;
}

/* ---- JSON ---- */

static json_t *json_commit(const struct store_history_commit *c)
{
	if (!c)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "track", jw_str(c->track), "sha", jw_str_opt(c->sha), "subject",
			 jw_str(c->sha[0] ? c->subject : NULL), "date", jw_time(c->date), "event", jw_str_opt(c->event));
}

static json_t *json_point(const struct history *h, const struct history_point *p)
{
	char date[16];
	point_date(h, p, date, sizeof(date));
	if (p->state == HISTORY_MISSED)
		return json_pack("{s:s, s:o, s:i}", "state", history_point_state_name(p->state), "date", jw_str(date),
				 "days", (int)p->missed_days);
	const struct store_history_night *n = &h->nights[p->night];
	const struct store_history_row *r = p->row;
	return json_pack("{s:s, s:o, s:I, s:o, s:o, s:o, s:i, s:i, s:o, s:b, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "state", history_point_state_name(p->state), "date", jw_str(date), "job", (json_int_t)n->job_id,
			 "night", jw_time(n->night), "status", jw_str(job_status_name(n->status)), "reason",
			 jw_str_opt(n->reason), "runs", (int)n->runs, "runs_failed", (int)n->runs_failed, "commit",
			 json_commit(p->commit), "force_pushed", p->force_pushed, "pairs", r ? (int)r->pairs : 0,
			 "estimate_pct", jw_num(r ? r->estimate_pct : NAN), "ci_low_pct",
			 jw_num(r ? r->ci_lo_pct : NAN), "ci_high_pct", jw_num(r ? r->ci_hi_pct : NAN), "p_value",
			 jw_num(r ? r->p : NAN), "median_base", jw_num(r ? r->median_base : NAN), "median_variant",
			 jw_num(r ? r->median_variant : NAN), "verdict", jw_str_opt(r ? r->verdict : NULL));
}

static json_t *json_side(const struct history *h, const struct history_series *s, size_t i)
{
	const struct history_point *p = &s->points[i];
	char date[16];
	point_date(h, p, date, sizeof(date));
	return json_pack("{s:I, s:I, s:o, s:o, s:o}", "point", (json_int_t)i, "job", (json_int_t)h->nights[p->night].job_id,
			 "date", jw_str(date), "night", jw_time(h->nights[p->night].night), "commit", json_commit(p->commit));
}

static json_t *json_change(const struct history *h, const struct history_series *s, const struct history_change *c)
{
	return json_pack("{s:I, s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "point", (json_int_t)c->first_bad,
			 "last_good", json_side(h, s, c->last_good), "first_bad", json_side(h, s, c->first_bad),
			 "nights_before", (json_int_t)c->nights_before, "nights_after", (json_int_t)c->nights_after,
			 "from_point", (json_int_t)c->before_first, "to_point", (json_int_t)c->after_last,
			 "mean_before_pct", jw_num(c->mean_before), "mean_after_pct", jw_num(c->mean_after),
			 "delta_points", jw_num(c->delta_pts), "change_pct", jw_num(c->pct), "p_value", jw_num(c->p));
}

/* One series, its points a line each, made and written one at a time. */
static void json_series(const struct history *h, const struct history_series *s, struct jw *w)
{
	const struct store_history_row *k = s->key;
	jw_open(w, NULL, '{', JW_INLINE);
	jw_put(w, "workload", jw_str(k->workload));
	jw_put(w, "metric", jw_str(k->metric));
	jw_put(w, "unit", jw_str(k->unit));
	jw_put(w, "direction", jw_str(k->direction));
	jw_put(w, "primary", json_boolean(k->primary));
	jw_put(w, "variant", jw_str(k->variant_name));
	jw_put(w, "baseline", jw_str(k->base_name));
	jw_put(w, "measured", json_integer((json_int_t)s->measured));
	jw_put(w, "state", jw_str(s->enough ? "ok" : "not enough nights"));
	jw_put(w, "note", jw_str_opt(s->note));
	jw_open(w, "points", '[', JW_LINES);
	for (size_t i = 0; i < s->n_points; i++)
		jw_put(w, NULL, json_point(h, &s->points[i]));
	jw_close(w);
	jw_open(w, "change_points", '[', JW_LINES);
	for (size_t i = 0; i < s->n_changes; i++)
		jw_put(w, NULL, json_change(h, s, &s->changes[i]));
	jw_close(w);
	jw_close(w);
}

int history_render_json(const struct history *h, FILE *out)
{
	struct jw w;
	jw_init_file(&w, out, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "schema", json_integer(HISTORY_JSON_SCHEMA));
	jw_put(&w, "job", jw_str(h->name));
	jw_put(&w, "metric", jw_str_opt(h->metric));
	jw_put(&w, "nights", json_integer((json_int_t)h->n_nights));
	jw_put(&w, "failed", json_integer((json_int_t)h->n_failed));
	jw_put(&w, "measured", json_integer((json_int_t)h->n_measured));
	jw_put(&w, "first", jw_time(h->nights[0].night));
	jw_put(&w, "last", jw_time(h->nights[h->n_nights - 1].night));
	jw_put(&w, "state", jw_str(h->enough ? "ok" : "not enough nights"));
	jw_put(&w, "note", jw_str_opt(h->note));
	jw_open(&w, "metrics", '[', JW_INLINE);
	for (size_t i = 0; i < h->n_metrics; i++)
		jw_put(&w, NULL, jw_str(h->metrics[i]));
	jw_close(&w);
	jw_open(&w, "series", '[', JW_LINES);
	for (size_t i = 0; i < h->n_series; i++)
		json_series(h, &h->series[i], &w);
	jw_close(&w);
	jw_close(&w);
	fputc('\n', out);
	int r = jw_end(&w);
	return r < 0 ? r : ferror(out) ? -EIO : 0;
}
