/* Regressions as people read them: a 0-day style title, the text list of
 * kab regressions, the JSON of GET /api/v1/regressions and its Atom feed.
 * The rows are the store's (db/store_regress.h); confirmed ones first in
 * what a reader sees, newest first within. A regression that has a
 * bisection (db/store_bisect.h) shows it in each: its first bad commit
 * once it ended done, its state while it runs. */
#pragma once
#include <stdio.h>

#include "db/store_bisect.h"
#include "db/store_regress.h"
#include "harness/base/util.h"

struct store;

/* The rows' bisections, the newest of each (store_bisect_of_regressions),
 * in any order: each row finds its own by id. { NULL, 0 } or a NULL
 * pointer where one is asked for: none. */
struct regress_bisections {
	struct store_bisect *v;
	size_t n;
};
int regress_bisections_load(struct store *st, const struct store_regress *rows, size_t n, struct regress_bisections *ret);
void regress_bisections_free(struct regress_bisections *bs);
/* Regression id's bisection in bs; NULL when it has none. */
const struct store_bisect *regress_bisection_of(const struct regress_bisections *bs, int64_t id);

/* "[origin:mm-unstable] 1a2b3c4d5e: pageout.ns_mean +12.3% regression";
 * for a variant that follows no branch, the job name and the first bad
 * night's job stand for them: "[nightly] job 12: ...". The percentage is
 * the confirmation's estimate once it has one, the detector's before.
 * When its bisection b (NULL: none) ended done, the first bad commit
 * follows, 0-day style: "...regression: first bad commit 1a2b3c4d5e6f
 * \"mm: subject\"", " +1 more" after a split, ": first bad commit: one of
 * 3 commits" for a range; while it runs the title is the same. */
void regress_title(const struct store_regress *r, const struct store_bisect *b, char *buf, size_t len);
/* What the row is now: "regression", "improvement", "change" (a neutral
 * metric), "not confirmed", "pending confirmation", "confirmation failed". */
const char *regress_kind(const struct store_regress *r);
/* Open: confirmed and not acknowledged. */
bool regress_open(const struct store_regress *r);

/* {"regressions": [...]}; each row's "bisection" is null or {id, state,
 * reason, started, ended, good, bad, culprits, steps, builds, boots}
 * (doc/nightly.md). */
int regress_render_json(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, struct strbuf *out);
/* A page of the list: {"regressions": [...], "next_after": LAST}, null
 * when there is no page after it. */
int regress_render_json_page(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, bool more,
			     int64_t last, struct strbuf *out);
/* One block a row: title, state, commit range, machine, job, the
 * confirmation's estimate with its CI, its bisection's state and first
 * bad commit; what came from git or a workload escaped (esc.h). 0, or
 * -errno when out failed. */
int regress_render_text(const struct store_regress *rows, size_t n, const struct regress_bisections *bs, FILE *out);
/* An Atom feed (RFC 4287) of the confirmed rows; base is the URL the
 * entries link to ("" for relative links). An entry's <updated> is the
 * last change a reader is shown: its detection, its bisection's start or
 * end. Well-formed XML whatever the rows hold (esc_xml_sb). */
int regress_render_atom(const struct store_regress *rows, size_t n, const struct regress_bisections *bs,
			const char *base, struct strbuf *out);
