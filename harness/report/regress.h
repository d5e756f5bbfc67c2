/* Regressions as people read them: a 0-day style title, the text list of
 * kab regressions, the JSON of GET /api/v1/regressions and its Atom feed.
 * The rows are the store's (db/store_regress.h); confirmed ones first in
 * what a reader sees, newest first within. */
#pragma once
#include <stdio.h>

#include "db/store_regress.h"
#include "harness/base/util.h"

/* "[origin:mm-unstable] 1a2b3c4d5e: pageout.ns_mean +12.3% regression";
 * for a variant that follows no branch, the job name and the first bad
 * night's job stand for them: "[nightly] job 12: ...". The percentage is
 * the confirmation's estimate once it has one, the detector's before. */
void regress_title(const struct store_regress *r, char *buf, size_t len);
/* What the row is now: "regression", "improvement", "change" (a neutral
 * metric), "not confirmed", "pending confirmation", "confirmation failed". */
const char *regress_kind(const struct store_regress *r);
/* Open: confirmed and not acknowledged. */
bool regress_open(const struct store_regress *r);

/* {"regressions": [...]} */
int regress_render_json(const struct store_regress *rows, size_t n, struct strbuf *out);
/* A page of the list: {"regressions": [...], "next_after": LAST}, null
 * when there is no page after it. */
int regress_render_json_page(const struct store_regress *rows, size_t n, bool more, int64_t last, struct strbuf *out);
/* One block a row: title, state, commit range, machine, job, the
 * confirmation's estimate with its CI; what came from git or a workload
 * escaped (esc.h). 0, or -errno when out failed. */
int regress_render_text(const struct store_regress *rows, size_t n, FILE *out);
/* An Atom feed (RFC 4287) of the confirmed rows; base is the URL the
 * entries link to ("" for relative links). Well-formed XML whatever the
 * rows hold (esc_xml_sb). */
int regress_render_atom(const struct store_regress *rows, size_t n, const char *base, struct strbuf *out);
