/* Regressions rendered (regress.h). */
#include "harness/report/regress.h"
#include "harness/report/regress_priv.h"
#include "db/store_bisect.h"
#include "harness/base/esc.h"
#include "harness/base/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int regress_bisections_load(struct store *st, const struct store_regress *rows, size_t n, struct regress_bisections *ret)
{
	*ret = (struct regress_bisections){ 0 };
	if (n == 0)
		return 0;
	int64_t lo = rows[0].id, hi = rows[0].id;
	for (size_t i = 1; i < n; i++) {
		lo = rows[i].id < lo ? rows[i].id : lo;
		hi = rows[i].id > hi ? rows[i].id : hi;
	}
	return store_bisect_of_regressions(st, lo, hi, &ret->v, &ret->n);
}

void regress_bisections_free(struct regress_bisections *bs)
{
	for (size_t i = 0; i < bs->n; i++)
		store_bisect_clear(&bs->v[i]);
	free(bs->v);
	*bs = (struct regress_bisections){ 0 };
}

const struct store_bisect *regress_bisection_of(const struct regress_bisections *bs, int64_t id)
{
	for (size_t i = 0; bs && i < bs->n; i++)
		if (bs->v[i].regression == id)
			return &bs->v[i];
	return NULL;
}

bool regress_open(const struct store_regress *r)
{
	return r->state == REGRESS_CONFIRMED && r->acked <= 0;
}

const char *regress_kind(const struct store_regress *r)
{
	switch (r->state) {
	case REGRESS_PENDING: return "pending confirmation";
	case REGRESS_NOT_CONFIRMED: return "not confirmed";
	case REGRESS_FAILED: return "confirmation failed";
	case REGRESS_CONFIRMED:
		if (strcmp(r->verdict, "worse") == 0)
			return "regression";
		if (strcmp(r->verdict, "better") == 0)
			return "improvement";
		return "change";
	default: return "unknown";
	}
}

/* "origin:mm-unstable" from "origin mm-unstable" */
static void branch_of(const char *track, char *buf, size_t len)
{
	snprintf(buf, len, "%s", track);
	char *sp = strchr(buf, ' ');
	if (sp)
		*sp = ':';
}

/* The title of r whose bisection v read. */
static void title_of(const struct store_regress *r, const struct rb *v, char *buf, size_t len)
{
	char where[300], what[64], culprit[400];
	if (r->track[0] && r->bad_sha[0]) {
		char br[260];
		branch_of(r->track, br, sizeof(br));
		snprintf(where, sizeof(where), "[%s] %.10s", br, r->bad_sha);
	} else {
		snprintf(where, sizeof(where), "[%s] job %lld", r->name, (long long)r->bad_job);
	}
	double pct = isfinite(r->estimate_pct) ? r->estimate_pct : r->detected_pct;
	if (isfinite(pct))
		snprintf(what, sizeof(what), "%+.1f%%", pct);
	else
		snprintf(what, sizeof(what), "changed");
	rb_title(v, culprit, sizeof(culprit));
	snprintf(buf, len, "%s: %s %s %s%s", where, r->metric, what, regress_kind(r), culprit);
}

void regress_title(const struct store_regress *r, const struct store_bisect *b, char *buf, size_t len)
{
	struct rb v;
	rb_read(b, &v);
	title_of(r, &v, buf, len);
}

static void iso_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	if (t <= 0 || !gmtime_r(&s, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%s", "");
}

/* A night of the change point: its job, time and commit. */
static json_t *json_night(int64_t job, double night, const char *sha, const char *subject)
{
	return json_pack("{s:I, s:o, s:o, s:o}", "job", (json_int_t)job, "night", jw_time(night), "sha",
			 jw_str_opt(sha), "subject", jw_str_opt(subject));
}

static json_t *json_row(const struct store_regress *r, const struct store_bisect *b)
{
	char title[1024];
	struct rb v;
	rb_read(b, &v);
	title_of(r, &v, title, sizeof(title));
	return json_pack("{s:I, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o,"
			 " s:{s:o, s:o, s:o, s:o}, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}, s:o, s:o, s:o, s:o}",
			 "id", (json_int_t)r->id, "title", jw_str_opt(title), "kind", jw_str_opt(regress_kind(r)),
			 "state", jw_str_opt(regress_state_name(r->state)), "open", regress_open(r), "detected",
			 jw_time(r->created), "job", jw_str_opt(r->name), "workload", jw_str_opt(r->workload), "metric",
			 jw_str_opt(r->metric), "variant", r->variant, "direction", jw_str_opt(r->direction), "track",
			 jw_str_opt(r->track), "machine", jw_str_opt(r->machine), "last_good",
			 json_night(r->good_job, r->good_night, r->good_sha, r->good_subject), "first_bad",
			 json_night(r->bad_job, r->bad_night, r->bad_sha, r->bad_subject), "detection",
			 "mean_before_pct", jw_num(r->mean_before), "mean_after_pct", jw_num(r->mean_after),
			 "change_pct", jw_num(r->detected_pct), "p", jw_num(r->detected_p), "confirmation", "job",
			 r->confirm_job ? json_integer(r->confirm_job) : json_null(), "estimate_pct",
			 jw_num(r->estimate_pct), "ci_low_pct", jw_num(r->ci_lo_pct), "ci_high_pct",
			 jw_num(r->ci_hi_pct), "p", jw_num(r->p), "verdict", jw_str_opt(r->verdict), "reason",
			 jw_str_opt(r->reason), "acknowledged", jw_time(r->acked), "acknowledged_by",
			 jw_str_opt(r->acked_by), "auto_bisect", jw_str_opt(r->auto_bisect), "bisection", rb_json(&v));
}

/* {"regressions":[...] and what follows the rows: a row at a time, the
 * regressions' JSON is compact. */
static int json_rows(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, bool paged,
		     bool more, int64_t last, struct strbuf *out)
{
	struct jw w;
	jw_init_sb(&w, out, JW_COMPACT);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_open(&w, "regressions", '[', JW_INLINE);
	for (size_t i = 0; i < n; i++)
		jw_put(&w, NULL, json_row(&rows[i], regress_bisection_of(bs, rows[i].id)));
	jw_close(&w);
	if (paged)
		jw_put(&w, "next_after", more ? json_integer(last) : json_null());
	jw_close(&w);
	int r = jw_end(&w);
	return r < 0 ? r : sb_puts(out, "\n");
}

int regress_render_json(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, struct strbuf *out)
{
	return json_rows(rows, n, bs, false, false, 0, out);
}

int regress_render_json_page(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, bool more,
			     int64_t last, struct strbuf *out)
{
	return json_rows(rows, n, bs, true, more, last, out);
}

static void text_night(FILE *out, const char *what, int64_t job, double night, const char *sha, const char *subject)
{
	char t[32];
	iso_time(night, t, sizeof(t));
	fprintf(out, "  %-10s job %lld, %s", what, (long long)job, t[0] ? t : "?");
	if (sha[0])
		fprintf(out, ", %.12s %s", sha, subject);
	fputc('\n', out);
}

static void text_rows(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, FILE *out)
{
	if (n == 0) {
		fprintf(out, "no change points recorded\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct store_regress *r = &rows[i];
		char title[1024];
		struct rb v;
		rb_read(regress_bisection_of(bs, r->id), &v);
		title_of(r, &v, title, sizeof(title));
		fprintf(out, "%s#%lld %s\n", i ? "\n" : "", (long long)r->id, title);
		fprintf(out, "  state      %s%s", regress_state_name(r->state),
			r->state == REGRESS_CONFIRMED ? (r->acked > 0 ? ", acknowledged" : ", open") : "");
		if (r->acked > 0 && r->acked_by[0])
			fprintf(out, " by %s", r->acked_by);
		fputc('\n', out);
		fprintf(out, "  job        %s, workload %s, machine %s\n", r->name, r->workload, r->machine[0] ? r->machine : "?");
		text_night(out, "last good", r->good_job, r->good_night, r->good_sha, r->good_subject);
		text_night(out, "first bad", r->bad_job, r->bad_night, r->bad_sha, r->bad_subject);
		fprintf(out, "  detected   the nightly estimate moved from %+.1f%% to %+.1f%% (%+.1f points, p %.2g)\n",
			r->mean_before, r->mean_after, r->detected_pct, r->detected_p);
		if (r->confirm_job && isfinite(r->estimate_pct))
			fprintf(out, "  confirmed  job %lld: %+.1f%% [%+.1f, %+.1f], p %.3f, %s\n", (long long)r->confirm_job,
				r->estimate_pct, r->ci_lo_pct, r->ci_hi_pct, r->p, r->verdict[0] ? r->verdict : "?");
		else if (r->confirm_job)
			fprintf(out, "  confirm    job %lld%s%s\n", (long long)r->confirm_job, r->reason[0] ? ": " : "", r->reason);
		else if (r->reason[0])
			fprintf(out, "  confirm    %s\n", r->reason);
		if (r->auto_bisect[0])
			fprintf(out, "  bisect     %s\n", r->auto_bisect);
		rb_text(&v, out);
	}
}

/* Branch names and commit subjects come from git, metric names and units
 * from what a command workload printed: shown, never acted on by a
 * terminal (esc.h). */
int regress_render_text(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, FILE *out)
{
	FILE *f = esc_stream(out);
	if (!f)
		return -ENOMEM;
	text_rows(rows, n, bs, f);
	return fclose(f) != 0 ? -EIO : 0;
}

/* When the entry last changed as a reader sees it: its detection, or its
 * bisection's start or end. */
static double entry_updated(const struct store_regress *r, const struct rb *v)
{
	double t = rb_changed(v);
	return t > r->created ? t : r->created;
}

static void atom_entry(const struct store_regress *r, const struct rb *v, const char *base, struct strbuf *out)
{
	char title[1024], t[32];
	title_of(r, v, title, sizeof(title));
	iso_time(entry_updated(r, v), t, sizeof(t));
	struct strbuf sum = { 0 };
	sb_printf(&sum, "%s, workload %s on %s: last good job %lld, first bad job %lld; confirmed by job %lld: %+.1f%% [%+.1f, %+.1f]%s",
		  r->name, r->workload, r->machine[0] ? r->machine : "?", (long long)r->good_job, (long long)r->bad_job,
		  (long long)r->confirm_job, r->estimate_pct, r->ci_lo_pct, r->ci_hi_pct, r->acked > 0 ? "; acknowledged" : "");
	if (v->b) {
		sb_puts(&sum, "; ");
		rb_summary(v, &sum);
	}
	sb_puts(out, "  <entry>\n    <title>");
	esc_xml_sb(out, title);
	sb_printf(out, "</title>\n    <id>urn:kab:regression:%lld</id>\n    <updated>%s</updated>\n", (long long)r->id, t);
	sb_puts(out, "    <link rel=\"alternate\" href=\"");
	esc_xml_sb(out, base);
	sb_printf(out, "/regressions.html#r%lld\"/>\n    <summary>", (long long)r->id);
	esc_xml_sb(out, sum.buf ? sum.buf : "");
	sb_puts(out, "</summary>\n  </entry>\n");
	sb_free(&sum);
}

int regress_render_atom(const struct store_regress *rows, size_t n, const struct regress_bisections *bs,
			const char *base, struct strbuf *out)
{
	/* the feed changed when its newest entry did */
	double newest = 0;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].state != REGRESS_CONFIRMED)
			continue;
		struct rb v;
		rb_read(regress_bisection_of(bs, rows[i].id), &v);
		double u = entry_updated(&rows[i], &v);
		newest = u > newest ? u : newest;
	}
	char t[32] = "";
	iso_time(newest > 0 ? newest : 1, t, sizeof(t));
	sb_puts(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
	sb_puts(out, "  <title>kab: confirmed changes</title>\n  <id>urn:kab:regressions</id>\n");
	sb_printf(out, "  <updated>%s</updated>\n  <link rel=\"alternate\" href=\"", t);
	esc_xml_sb(out, base);
	sb_puts(out, "/regressions.html\"/>\n  <author><name>kabd</name></author>\n");
	for (size_t i = 0; i < n; i++) {
		if (rows[i].state != REGRESS_CONFIRMED)
			continue;
		struct rb v;
		rb_read(regress_bisection_of(bs, rows[i].id), &v);
		atom_entry(&rows[i], &v, base, out);
	}
	return sb_puts(out, "</feed>\n");
}
