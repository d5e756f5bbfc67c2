/* kabd's /api/v1/regressions: the change points nightly tracking found,
 * their confirmation, and acknowledging them (api.h). */
#include "harness/daemon/api.h"
#include "harness/report/regress.h"
#include "db/store.h"
#include "db/store_regress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The list in format (json, text or atom). */
static void api_regressions_render(struct api *a, const struct httpd_req *rq, const char *fmt, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_regress *rows = NULL;
	size_t n = 0;
	int r = store_regress_list(st, &rows, &n);
	store_close(st);
	if (r < 0) {
		httpd_error(rs, 500, "cannot read the regressions; see kabd's log");
		return;
	}
	if (strcmp(fmt, "text") == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		if (out) {
			regress_render_text(rows, n, out);
			fclose(out);
			sb_append(&rs->body, buf, len);
		}
		free(buf);
		rs->content_type = "text/plain; charset=utf-8";
	} else if (strcmp(fmt, "atom") == 0) {
		regress_render_atom(rows, n, "", &rs->body);
		rs->content_type = "application/atom+xml; charset=utf-8";
	} else {
		regress_render_json(rows, n, &rs->body);
		rs->content_type = "application/json";
	}
	free(rows);
	rs->status = 200;
}

void api_regressions_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "format" };
	char bad[80];
	int r = httpd_query_check(rq, keys, ARRAY_SIZE(keys), bad, sizeof(bad));
	if (r < 0) {
		httpd_error(rs, 400, r == -EEXIST ? "parameter \"%s\" is given twice: give it once" : "unknown parameter \"%s\" (regressions takes format)",
			    bad);
		return;
	}
	const char *fmt = httpd_query(rq, "format");
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "text") && strcmp(fmt, "atom")) {
		httpd_error(rs, 400, "format must be json, text or atom");
		return;
	}
	api_regressions_render(a, rq, fmt ? fmt : "json", rs);
}

void api_regressions_atom(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	api_regressions_render(a, rq, "atom", rs);
}

void api_regression_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_regress g;
	int r = store_regress_get(st, rq->id, &g);
	store_close(st);
	if (r == -ENOENT) {
		httpd_error(rs, 404, "no change point %lld", (long long)rq->id);
		return;
	}
	if (r < 0) {
		httpd_error(rs, 500, "cannot read change point %lld; see kabd's log", (long long)rq->id);
		return;
	}
	regress_render_json(&g, 1, &rs->body);
	rs->content_type = "application/json";
	rs->status = 200;
}

void api_regression_ack(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_regress g;
	int r = store_regress_get(st, rq->id, &g);
	if (r == 0 && g.state != REGRESS_CONFIRMED) {
		store_close(st);
		httpd_error(rs, 409, "change point %lld is %s: only a confirmed change is acknowledged",
			    (long long)rq->id, regress_state_name(g.state));
		return;
	}
	if (r == 0)
		r = store_regress_ack(st, rq->id, rq->submitter && rq->submitter[0] ? rq->submitter : "?", (double)time(NULL));
	if (r == 0)
		r = store_regress_get(st, rq->id, &g);
	store_close(st);
	if (r == -ENOENT)
		httpd_error(rs, 404, "no change point %lld", (long long)rq->id);
	else if (r == -EALREADY)
		httpd_error(rs, 409, "change point %lld was acknowledged already", (long long)rq->id);
	else if (r < 0)
		httpd_error(rs, 500, "cannot acknowledge change point %lld; see kabd's log", (long long)rq->id);
	else {
		regress_render_json(&g, 1, &rs->body);
		rs->content_type = "application/json";
		rs->status = 200;
	}
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void label(struct strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			sb_printf(b, "\\%c", *s);
		else if (*s == '\n')
			sb_puts(b, "\\n");
		else
			sb_append(b, s, 1);
	}
}

int api_metrics_regressions(struct store *st, struct strbuf *b)
{
	struct store_regress *rows = NULL;
	size_t n = 0;
	int r = store_regress_list(st, &rows, &n);
	if (r < 0)
		return r;
	sb_puts(b, "# HELP kab_regressions_open Confirmed changes not yet acknowledged, by job, metric and kind.\n"
		   "# TYPE kab_regressions_open gauge\n");
	/* one series per (job, metric, kind); rows come newest first */
	for (size_t i = 0; i < n; i++) {
		const char *kind = regress_kind(&rows[i]);
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			if (strcmp(rows[k].name, rows[i].name) == 0 && strcmp(rows[k].metric, rows[i].metric) == 0 &&
			    rows[k].state == REGRESS_CONFIRMED && strcmp(regress_kind(&rows[k]), kind) == 0)
				first = false;
		if (rows[i].state != REGRESS_CONFIRMED || !first)
			continue;
		size_t open = 0;
		for (size_t k = i; k < n; k++)
			if (strcmp(rows[k].name, rows[i].name) == 0 && strcmp(rows[k].metric, rows[i].metric) == 0 &&
			    rows[k].state == REGRESS_CONFIRMED && strcmp(regress_kind(&rows[k]), kind) == 0 &&
			    regress_open(&rows[k]))
				open++;
		sb_puts(b, "kab_regressions_open{job=\"");
		label(b, rows[i].name);
		sb_puts(b, "\",metric=\"");
		label(b, rows[i].metric);
		sb_printf(b, "\",kind=\"%s\"} %zu\n", kind, open);
	}
	free(rows);
	return 0;
}
