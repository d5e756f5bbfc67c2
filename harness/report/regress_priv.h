/* A regression's bisection as its readers see it (regress_bisect.c):
 * read once from the bisection's row and the report bisect_life.c wrote
 * when it ended, then given to the title, the JSON, the text and the
 * Atom entry of regress.c. Private to harness/report/regress*.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "db/store_bisect.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

/* culprits kept of a report: one a part, and a bisection makes at most
 * BISECT_MAX_SPLITS (3) splits; more are counted, not kept */
#define RB_CULPRITS 8

struct rb_effect {
	double est, lo, hi; /* NAN: not measured */
	long long pairs;
	char decision[24], reason[256];
};

/* A control of a confirmed culprit (bisect.revert, bisect.align): asked,
 * its comparison, what it compared against and what it was. */
struct rb_control {
	bool asked;
	struct rb_effect e;
	char base[41], note[192];
};

/* One answer of the report: a culprit (confirmed against its parent), an
 * unconfirmed one, a layout-sensitive one (its effect vanished with
 * forced alignment), or a range of commits git could not tell apart. */
struct rb_culprit {
	char answer[24]; /* culprit | unconfirmed | layout-sensitive | range */
	long long part;
	char sha[41], parent[41];
	char subject[256], author[256], date[48];
	struct rb_effect confirm;
	struct rb_control revert, align;
	long long n_candidates; /* a range's */
	char reason[256];       /* a range's */
};

struct rb {
	const struct store_bisect *b; /* NULL: the regression has none */
	bool report;                  /* the report read (an ended one has it) */
	long long steps, builds, boots;
	struct rb_culprit c[RB_CULPRITS];
	size_t n;       /* kept */
	size_t n_total; /* in the report */
};

/* b's report read into ret (b may be NULL; a report that does not parse
 * reads as none). */
void rb_read(const struct store_bisect *b, struct rb *ret);
/* What the title says after its kind: ": first bad commit SHA12
 * \"subject\"" (" +N more" after a split), ": layout-sensitive, not a
 * regression of commit SHA12 \"subject\"" when the only confirmed one's
 * effect vanished with forced alignment, ": first bad commit: one of N
 * commits"; "" while it runs, when it ended otherwise than done, or when
 * its culprits are unconfirmed only. */
void rb_title(const struct rb *v, char *buf, size_t len);
/* The "bisection" member of a regression's JSON; null when none. */
json_t *rb_json(const struct rb *v);
/* The text list's lines of it (out escapes what came from git). */
void rb_text(const struct rb *v, FILE *out);
/* The Atom summary's sentence of it; nothing when none. */
void rb_summary(const struct rb *v, struct strbuf *out);
/* When it last changed what a reader is shown: its end, else its start;
 * 0 when none. */
double rb_changed(const struct rb *v);
