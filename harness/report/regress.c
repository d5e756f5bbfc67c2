/* Regressions rendered (regress.h). */
#include "harness/report/regress.h"
#include "harness/base/esc.h"
#include "harness/base/json.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

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

void regress_title(const struct store_regress *r, char *buf, size_t len)
{
	char where[300], what[64];
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
	snprintf(buf, len, "%s: %s %s %s", where, r->metric, what, regress_kind(r));
}

static void iso_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	if (t <= 0 || !gmtime_r(&s, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%s", "");
}

static void json_key_num(struct strbuf *b, const char *key, double v)
{
	char num[40];
	json_num(v, num, sizeof(num));
	sb_printf(b, ",\"%s\":%s", key, num);
}

static void json_key_str(struct strbuf *b, const char *key, const char *v)
{
	sb_printf(b, ",\"%s\":", key);
	json_str_sb(b, v && v[0] ? v : NULL);
}

static void json_night(struct strbuf *b, const char *key, int64_t job, double night, const char *sha, const char *subject)
{
	char t[32];
	iso_time(night, t, sizeof(t));
	sb_printf(b, ",\"%s\":{\"job\":%lld", key, (long long)job);
	json_key_str(b, "night", t);
	json_key_str(b, "sha", sha);
	json_key_str(b, "subject", subject);
	sb_puts(b, "}");
}

static void json_row(struct strbuf *b, const struct store_regress *r)
{
	char title[512], t[32];
	regress_title(r, title, sizeof(title));
	sb_printf(b, "{\"id\":%lld", (long long)r->id);
	json_key_str(b, "title", title);
	json_key_str(b, "kind", regress_kind(r));
	json_key_str(b, "state", regress_state_name(r->state));
	sb_printf(b, ",\"open\":%s", regress_open(r) ? "true" : "false");
	iso_time(r->created, t, sizeof(t));
	json_key_str(b, "detected", t);
	json_key_str(b, "job", r->name);
	json_key_str(b, "workload", r->workload);
	json_key_str(b, "metric", r->metric);
	sb_printf(b, ",\"variant\":%d", r->variant);
	json_key_str(b, "direction", r->direction);
	json_key_str(b, "track", r->track);
	json_key_str(b, "machine", r->machine);
	json_night(b, "last_good", r->good_job, r->good_night, r->good_sha, r->good_subject);
	json_night(b, "first_bad", r->bad_job, r->bad_night, r->bad_sha, r->bad_subject);
	sb_puts(b, ",\"detection\":{\"mean_before_pct\":");
	char num[40];
	json_num(r->mean_before, num, sizeof(num));
	sb_puts(b, num);
	json_key_num(b, "mean_after_pct", r->mean_after);
	json_key_num(b, "change_pct", r->detected_pct);
	json_key_num(b, "p", r->detected_p);
	sb_puts(b, "}");
	if (r->confirm_job)
		sb_printf(b, ",\"confirmation\":{\"job\":%lld", (long long)r->confirm_job);
	else
		sb_puts(b, ",\"confirmation\":{\"job\":null");
	json_key_num(b, "estimate_pct", r->estimate_pct);
	json_key_num(b, "ci_low_pct", r->ci_lo_pct);
	json_key_num(b, "ci_high_pct", r->ci_hi_pct);
	json_key_num(b, "p", r->p);
	json_key_str(b, "verdict", r->verdict);
	json_key_str(b, "reason", r->reason);
	sb_puts(b, "}");
	iso_time(r->acked, t, sizeof(t));
	json_key_str(b, "acknowledged", t);
	json_key_str(b, "acknowledged_by", r->acked_by);
	sb_puts(b, "}");
}

static void json_rows(const struct store_regress *rows, size_t n, struct strbuf *out)
{
	sb_puts(out, "{\"regressions\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(out, ",");
		json_row(out, &rows[i]);
	}
}

int regress_render_json(const struct store_regress *rows, size_t n, struct strbuf *out)
{
	json_rows(rows, n, out);
	return sb_puts(out, "]}\n");
}

int regress_render_json_page(const struct store_regress *rows, size_t n, bool more, int64_t last, struct strbuf *out)
{
	json_rows(rows, n, out);
	if (more)
		return sb_printf(out, "],\"next_after\":%lld}\n", (long long)last);
	return sb_puts(out, "],\"next_after\":null}\n");
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

static void text_rows(const struct store_regress *rows, size_t n, FILE *out)
{
	if (n == 0) {
		fprintf(out, "no change points recorded\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct store_regress *r = &rows[i];
		char title[512];
		regress_title(r, title, sizeof(title));
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
	}
}

/* Branch names and commit subjects come from git, metric names and units
 * from what a command workload printed: shown, never acted on by a
 * terminal (esc.h). */
int regress_render_text(const struct store_regress *rows, size_t n, FILE *out)
{
	FILE *f = esc_stream(out);
	if (!f)
		return -ENOMEM;
	text_rows(rows, n, f);
	return fclose(f) != 0 ? -EIO : 0;
}

int regress_render_atom(const struct store_regress *rows, size_t n, const char *base, struct strbuf *out)
{
	char t[32] = "";
	for (size_t i = 0; i < n; i++)
		if (rows[i].state == REGRESS_CONFIRMED && !t[0])
			iso_time(rows[i].created, t, sizeof(t));
	if (!t[0])
		iso_time(1, t, sizeof(t));
	sb_puts(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
	sb_puts(out, "  <title>kab: confirmed changes</title>\n  <id>urn:kab:regressions</id>\n");
	sb_printf(out, "  <updated>%s</updated>\n  <link rel=\"alternate\" href=\"", t);
	esc_xml_sb(out, base);
	sb_puts(out, "/regressions.html\"/>\n  <author><name>kabd</name></author>\n");
	for (size_t i = 0; i < n; i++) {
		const struct store_regress *r = &rows[i];
		if (r->state != REGRESS_CONFIRMED)
			continue;
		char title[512], sum[512];
		regress_title(r, title, sizeof(title));
		iso_time(r->created, t, sizeof(t));
		snprintf(sum, sizeof(sum), "%s, workload %s on %s: last good job %lld, first bad job %lld; confirmed by job %lld: %+.1f%% [%+.1f, %+.1f]%s",
			 r->name, r->workload, r->machine[0] ? r->machine : "?", (long long)r->good_job,
			 (long long)r->bad_job, (long long)r->confirm_job, r->estimate_pct, r->ci_lo_pct, r->ci_hi_pct,
			 r->acked > 0 ? "; acknowledged" : "");
		sb_puts(out, "  <entry>\n    <title>");
		esc_xml_sb(out, title);
		sb_printf(out, "</title>\n    <id>urn:kab:regression:%lld</id>\n    <updated>%s</updated>\n",
			  (long long)r->id, t);
		sb_puts(out, "    <link rel=\"alternate\" href=\"");
		esc_xml_sb(out, base);
		sb_printf(out, "/regressions.html#r%lld\"/>\n    <summary>", (long long)r->id);
		esc_xml_sb(out, sum);
		sb_puts(out, "</summary>\n  </entry>\n");
	}
	return sb_puts(out, "</feed>\n");
}
