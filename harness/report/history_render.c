/* The nightly history as text (kab history) and as JSON (GET
 * /api/v1/history, kab history --format json). The JSON's field names
 * are a contract for the web page and scripts (README, "History"). */
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
	if (strcmp(dir, "higher") == 0)
		return "higher is better";
	if (strcmp(dir, "lower") == 0)
		return "lower is better";
	return "no direction";
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
		fprintf(out, "%s%s%s", history_state_name(p->state), n->reason[0] ? ": " : "", n->reason);
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

static void jnum(FILE *out, const char *key, double v)
{
	char buf[40];
	json_num(v, buf, sizeof(buf));
	fprintf(out, ", \"%s\": %s", key, buf);
}

static void jtime(FILE *out, double t)
{
	char buf[64];
	if (t <= 0) {
		fputs("null", out);
		return;
	}
	util_iso_time(t, buf, sizeof(buf));
	json_str_file(out, buf);
}

static void json_commit(FILE *out, const struct store_history_commit *c)
{
	if (!c) {
		fputs("null", out);
		return;
	}
	fputs("{\"track\": ", out);
	json_str_file(out, c->track);
	fputs(", \"sha\": ", out);
	json_str_file(out, c->sha[0] ? c->sha : NULL);
	fputs(", \"subject\": ", out);
	json_str_file(out, c->sha[0] ? c->subject : NULL);
	fputs(", \"date\": ", out);
	jtime(out, c->date);
	fputs(", \"event\": ", out);
	json_str_file(out, c->event[0] ? c->event : NULL);
	fputc('}', out);
}

static void json_point(const struct history *h, const struct history_point *p, FILE *out)
{
	char date[16];
	point_date(h, p, date, sizeof(date));
	fputs("{\"state\": ", out);
	json_str_file(out, history_state_name(p->state));
	fputs(", \"date\": ", out);
	json_str_file(out, date);
	if (p->state == HISTORY_MISSED) {
		fprintf(out, ", \"days\": %u}", p->missed_days);
		return;
	}
	const struct store_history_night *n = &h->nights[p->night];
	fprintf(out, ", \"job\": %lld, \"night\": ", (long long)n->job_id);
	jtime(out, n->night);
	fputs(", \"status\": ", out);
	json_str_file(out, job_status_name(n->status));
	fputs(", \"reason\": ", out);
	json_str_file(out, n->reason[0] ? n->reason : NULL);
	fprintf(out, ", \"runs\": %u, \"runs_failed\": %u, \"commit\": ", n->runs, n->runs_failed);
	json_commit(out, p->commit);
	fprintf(out, ", \"force_pushed\": %s", p->force_pushed ? "true" : "false");
	const struct store_history_row *r = p->row;
	fprintf(out, ", \"pairs\": %u", r ? r->pairs : 0);
	jnum(out, "estimate_pct", r ? r->estimate_pct : NAN);
	jnum(out, "ci_low_pct", r ? r->ci_lo_pct : NAN);
	jnum(out, "ci_high_pct", r ? r->ci_hi_pct : NAN);
	jnum(out, "p_value", r ? r->p : NAN);
	jnum(out, "median_base", r ? r->median_base : NAN);
	jnum(out, "median_variant", r ? r->median_variant : NAN);
	fputs(", \"verdict\": ", out);
	json_str_file(out, r && r->verdict[0] ? r->verdict : NULL);
	fputc('}', out);
}

static void json_side(const struct history *h, const struct history_series *s, size_t i, FILE *out)
{
	const struct history_point *p = &s->points[i];
	char date[16];
	point_date(h, p, date, sizeof(date));
	fprintf(out, "{\"point\": %zu, \"job\": %lld, \"date\": ", i, (long long)h->nights[p->night].job_id);
	json_str_file(out, date);
	fputs(", \"night\": ", out);
	jtime(out, h->nights[p->night].night);
	fputs(", \"commit\": ", out);
	json_commit(out, p->commit);
	fputc('}', out);
}

static void json_change(const struct history *h, const struct history_series *s, const struct history_change *c, FILE *out)
{
	fprintf(out, "{\"point\": %zu, \"last_good\": ", c->first_bad);
	json_side(h, s, c->last_good, out);
	fputs(", \"first_bad\": ", out);
	json_side(h, s, c->first_bad, out);
	fprintf(out, ", \"nights_before\": %zu, \"nights_after\": %zu, \"from_point\": %zu, \"to_point\": %zu",
		c->nights_before, c->nights_after, c->before_first, c->after_last);
	jnum(out, "mean_before_pct", c->mean_before);
	jnum(out, "mean_after_pct", c->mean_after);
	jnum(out, "delta_points", c->delta_pts);
	jnum(out, "change_pct", c->pct);
	jnum(out, "p_value", c->p);
	fputc('}', out);
}

static void json_series(const struct history *h, const struct history_series *s, FILE *out)
{
	const struct store_history_row *k = s->key;
	fputs("{\"workload\": ", out);
	json_str_file(out, k->workload);
	fputs(", \"metric\": ", out);
	json_str_file(out, k->metric);
	fputs(", \"unit\": ", out);
	json_str_file(out, k->unit);
	fputs(", \"direction\": ", out);
	json_str_file(out, k->direction);
	fprintf(out, ", \"primary\": %s, \"variant\": ", k->primary ? "true" : "false");
	json_str_file(out, k->variant_name);
	fputs(", \"baseline\": ", out);
	json_str_file(out, k->base_name);
	fprintf(out, ", \"measured\": %zu, \"state\": ", s->measured);
	json_str_file(out, s->enough ? "ok" : "not enough nights");
	fputs(", \"note\": ", out);
	json_str_file(out, s->note[0] ? s->note : NULL);
	fputs(",\n   \"points\": [", out);
	for (size_t i = 0; i < s->n_points; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		json_point(h, &s->points[i], out);
	}
	fputs("],\n   \"change_points\": [", out);
	for (size_t i = 0; i < s->n_changes; i++) {
		fputs(i ? ",\n    " : "\n    ", out);
		json_change(h, s, &s->changes[i], out);
	}
	fputs("]}", out);
}

int history_render_json(const struct history *h, FILE *out)
{
	fprintf(out, "{\"schema\": %d, \"job\": ", HISTORY_JSON_SCHEMA);
	json_str_file(out, h->name);
	fputs(", \"metric\": ", out);
	json_str_file(out, h->metric[0] ? h->metric : NULL);
	fprintf(out, ", \"nights\": %zu, \"failed\": %zu, \"measured\": %zu, \"first\": ", h->n_nights, h->n_failed, h->n_measured);
	jtime(out, h->nights[0].night);
	fputs(", \"last\": ", out);
	jtime(out, h->nights[h->n_nights - 1].night);
	fputs(", \"state\": ", out);
	json_str_file(out, h->enough ? "ok" : "not enough nights");
	fputs(", \"note\": ", out);
	json_str_file(out, h->note[0] ? h->note : NULL);
	fputs(",\n \"metrics\": [", out);
	for (size_t i = 0; i < h->n_metrics; i++) {
		fputs(i ? ", " : "", out);
		json_str_file(out, h->metrics[i]);
	}
	fputs("],\n \"series\": [", out);
	for (size_t i = 0; i < h->n_series; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_series(h, &h->series[i], out);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}
