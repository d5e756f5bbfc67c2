/* Paging of kabd's lists (GET /jobs, /jobs/ID/runs, /regressions): the
 * query's limit and after, and the caps that bound one response, so that
 * no GET holds more than a page in memory however long the list is. */
#pragma once
#include "harness/daemon/httpd.h"
#include "harness/base/json.h"
#include "harness/base/kab_api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define API_PAGE_DEFAULT 50 /* rows when no limit is given */
#define API_PAGE_MAX KAB_API_PAGE_MAX /* a larger limit is taken as this */
/* A page ends at the first row that takes its body to this many bytes or
 * more: a body is at most this plus one row, whatever the rows hold. */
#define API_PAGE_BYTES (1024 * 1024)

struct api_page {
	size_t limit;  /* 1 to API_PAGE_MAX */
	int64_t after; /* the last row of the page before (an id); 0: the first page */
};

/* The query of a list: only the parameters keys[0..n) (limit and after
 * among them), each at most once; limit and after into ret. 0, or
 * -EINVAL with a 400 in rs naming the parameter and what it takes. */
int api_page_parse(const struct httpd_req *rq, const char *const *keys, size_t n, struct api_page *ret, struct httpd_resp *rs);
/* Whether a page that shows `shown` rows in a body of body_len bytes has
 * room for another. */
bool api_page_room(const struct api_page *p, size_t shown, size_t body_len);
/* The end of a page's JSON object, after its rows: "next_after": LAST
 * (null when the list ended on this page) and the closing brace. */
void api_page_end(struct jw *w, bool more, int64_t last);
