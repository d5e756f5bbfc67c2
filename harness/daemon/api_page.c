/* Paging of kabd's lists: the limit and after parameters, and the row and
 * byte caps of one response (api_page.h). */
#include "harness/daemon/api_page.h"

#include <errno.h>
#include <stdio.h>

/* "limit, after and format" */
static void keys_words(const char *const *keys, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && at < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " and " : ", ";
		int k = snprintf(buf + at, len - at, "%s%s", sep, keys[i]);
		if (k < 0)
			break;
		at += (size_t)k;
	}
}

int api_page_parse(const struct httpd_req *rq, const char *const *keys, size_t n, struct api_page *ret, struct httpd_resp *rs)
{
	char bad[80];
	int r = httpd_query_check(rq, keys, n, bad, sizeof(bad));
	if (r == -EEXIST) {
		httpd_error(rs, 400, "parameter \"%s\" is given twice: give it once", bad);
		return -EINVAL;
	}
	if (r < 0) {
		char words[256];
		keys_words(keys, n, words, sizeof(words));
		httpd_error(rs, 400, "unknown parameter \"%s\" (this list takes %s)", bad, words);
		return -EINVAL;
	}
	const char *ls = httpd_query(rq, "limit"), *as = httpd_query(rq, "after");
	uint64_t limit = API_PAGE_DEFAULT;
	int64_t after = 0;
	if (ls && (util_parse_u64(ls, &limit) < 0 || limit == 0)) {
		httpd_error(rs, 400, "limit must be a number from 1 to %d (a larger one is taken as %d)", API_PAGE_MAX, API_PAGE_MAX);
		return -EINVAL;
	}
	if (as && (util_parse_i64(as, &after) < 0 || after <= 0)) {
		httpd_error(rs, 400, "after must be an id (a positive number): the next_after of the page before");
		return -EINVAL;
	}
	ret->limit = limit > API_PAGE_MAX ? API_PAGE_MAX : (size_t)limit;
	ret->after = after;
	return 0;
}

bool api_page_room(const struct api_page *p, size_t shown, size_t body_len)
{
	return shown < p->limit && body_len < API_PAGE_BYTES;
}

void api_page_end(struct jw *w, bool more, int64_t last)
{
	jw_put(w, "next_after", more ? json_integer(last) : json_null());
	jw_close(w);
}
