/* kabd's /api/v1/regressions: the change points nightly tracking found,
 * their confirmation, and acknowledging them (api.h). */
#include "harness/daemon/api.h"
#include "harness/daemon/api_page.h"
#include "harness/report/regress.h"
#include "db/store.h"
#include "db/store_regress.h"
#include "harness/base/esc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A page of the list in format json or text (api_page.h), newest first;
 * atom: the newest API_PAGE_MAX confirmed ones, a feed's latest entries. */
static void api_regressions_render(struct api *a, const struct httpd_req *rq, const char *fmt,
				   const struct api_page *page, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	bool atom = strcmp(fmt, "atom") == 0;
	struct store_regress *rows = NULL;
	size_t n = 0;
	/* one more than a page: whether there is a next one */
	int r = store_regress_page(st, page->after, page->limit + !atom, atom, &rows, &n);
	bool more = !atom && n > page->limit;
	if (more)
		n = page->limit;
	struct regress_bisections bs = { 0 };
	if (r >= 0)
		r = regress_bisections_load(st, rows, n, &bs);
	store_close(st);
	if (r < 0) {
		free(rows);
		httpd_error(rs, 500, "cannot read the regressions; see kabd's log");
		return;
	}
	int64_t last = n ? rows[n - 1].id : 0;
	if (strcmp(fmt, "text") == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		if (out) {
			r = regress_render_text(rows, n, &bs, out);
			if (r >= 0 && more && fprintf(out, "\n(older change points: after=%lld)\n", (long long)last) < 0)
				r = -ENOMEM;
			if (fclose(out) != 0 && r >= 0)
				r = -ENOMEM;
		}
		if (!out || r < 0) {
			free(buf);
			free(rows);
			regress_bisections_free(&bs);
			httpd_error(rs, 500, "cannot render the regressions: out of memory");
			return;
		}
		sb_append(&rs->body, buf, len);
		free(buf);
		rs->content_type = "text/plain; charset=utf-8";
	} else if (atom) {
		regress_render_atom(rows, n, &bs, "", &rs->body);
		rs->content_type = "application/atom+xml; charset=utf-8";
	} else {
		regress_render_json_page(rows, n, &bs, more, last, &rs->body);
		rs->content_type = "application/json";
	}
	free(rows);
	regress_bisections_free(&bs);
	rs->status = 200;
}

void api_regressions_list(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	static const char *const keys[] = { "format", "limit", "after" };
	struct api_page page;
	if (api_page_parse(rq, keys, ARRAY_SIZE(keys), &page, rs) < 0)
		return;
	const char *fmt = httpd_query(rq, "format");
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "text") && strcmp(fmt, "atom")) {
		httpd_error(rs, 400, "format must be json, text or atom");
		return;
	}
	if (fmt && strcmp(fmt, "atom") == 0)
		page = (struct api_page){ .limit = API_PAGE_MAX };
	api_regressions_render(a, rq, fmt ? fmt : "json", &page, rs);
}

void api_regressions_atom(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	const struct api_page page = { .limit = API_PAGE_MAX };
	api_regressions_render(a, rq, "atom", &page, rs);
}

void api_regression_get(struct api *a, const struct httpd_req *rq, struct httpd_resp *rs)
{
	struct store *st;
	if (api_open_store(a, rq, rs, &st) < 0)
		return;
	struct store_regress g;
	struct regress_bisections bs = { 0 };
	int r = store_regress_get(st, rq->id, &g);
	if (r == 0)
		r = regress_bisections_load(st, &g, 1, &bs);
	store_close(st);
	if (r == -ENOENT) {
		httpd_error(rs, 404, "no change point %lld", (long long)rq->id);
		return;
	}
	if (r < 0) {
		httpd_error(rs, 500, "cannot read change point %lld; see kabd's log", (long long)rq->id);
		return;
	}
	regress_render_json(&g, 1, &bs, &rs->body);
	regress_bisections_free(&bs);
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
	struct regress_bisections bs = { 0 };
	if (r == 0)
		r = store_regress_get(st, rq->id, &g);
	if (r == 0)
		r = regress_bisections_load(st, &g, 1, &bs);
	store_close(st);
	if (r == -ENOENT)
		httpd_error(rs, 404, "no change point %lld", (long long)rq->id);
	else if (r == -EALREADY)
		httpd_error(rs, 409, "change point %lld was acknowledged already", (long long)rq->id);
	else if (r < 0)
		httpd_error(rs, 500, "cannot acknowledge change point %lld; see kabd's log", (long long)rq->id);
	else {
		regress_render_json(&g, 1, &bs, &rs->body);
		rs->content_type = "application/json";
		rs->status = 200;
	}
	regress_bisections_free(&bs);
}

void api_metrics_label(struct strbuf *b, const char *s)
{
	struct strbuf safe = { 0 };
	esc_text_sb(&safe, s, strlen(s), 0);
	for (size_t i = 0; i < safe.len; i++) {
		if (safe.buf[i] == '\\' || safe.buf[i] == '"')
			sb_printf(b, "\\%c", safe.buf[i]);
		else
			sb_append(b, safe.buf + i, 1);
	}
	sb_free(&safe);
}

static void open_series(void *ctx, const char *name, const char *metric, const char *verdict, size_t open)
{
	struct strbuf *b = ctx;
	/* the kind a confirmed row of that verdict has */
	struct store_regress g = { .state = REGRESS_CONFIRMED };
	snprintf(g.verdict, sizeof(g.verdict), "%s", verdict);
	sb_puts(b, "kab_regressions_open{job=\"");
	api_metrics_label(b, name);
	sb_puts(b, "\",metric=\"");
	api_metrics_label(b, metric);
	sb_printf(b, "\",kind=\"%s\"} %zu\n", regress_kind(&g), open);
}

int api_metrics_regressions(struct store *st, struct strbuf *b)
{
	sb_puts(b, "# HELP kab_regressions_open Confirmed changes not yet acknowledged, by job, metric and kind.\n"
		   "# TYPE kab_regressions_open gauge\n");
	/* one series per (job, metric, kind), counted by the database: a
	 * scrape costs the same however many change points there are */
	return store_regress_open_counts(st, open_series, b);
}
