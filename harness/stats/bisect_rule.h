/* The decisions of a paired statistical bisection (doc/bisect.md), over
 * arrays: the anchor (GOOD against BAD must be decided before anything is
 * bisected), each step (a commit against GOOD, placed against the span's
 * two levels: bad, good, split, more pairs, or undecided at the cap) and
 * the confirmation (the culprit against its parent, worse, with a CI that
 * overlaps the effect) and its two optional controls (the culprit
 * reverted on BAD; both sides rebuilt with forced alignment). Every comparison is kab compare's: the exact
 * signed-rank test on paired log ratios and the Hodges-Lehmann shift with
 * its 95% CI (stats_compare); shifts are in percent. */
#pragma once
#include <stddef.h>

#include "harness/stats/stats.h"

#define BRULE_LIST(X) \
	X(MORE, "more") \
	X(BAD, "bad") \
	X(GOOD, "good") \
	X(SPLIT, "split") \
	X(UNDECIDED, "undecided") \
	X(ANCHORED, "anchored") \
	X(REFUSED, "refused") \
	X(CONFIRMED, "confirmed") \
	X(UNCONFIRMED, "unconfirmed") \
	X(LAYOUT, "layout-sensitive") \
	X(NOT_APPLICABLE, "not applicable")
#define BRULE_ENUM(name, word) BRULE_##name,
enum brule_decision { BRULE_LIST(BRULE_ENUM) };
#undef BRULE_ENUM
#define BRULE_N (BRULE_NOT_APPLICABLE + 1)
const char *brule_decision_name(enum brule_decision v);
int brule_decision_parse(const char *s, enum brule_decision *ret);

/* Pairs at which a step stops adding more, by default; the looks are at
 * STATS_MIN_PAIRS and then at half, three quarters and all of the cap. */
#define BRULE_CAP 20
#define BRULE_LOOKS 4
/* A step whose shift, with its CI, lies inside this part of the span
 * (0 = the good level, 1 = the bad one) is a change spread over commits. */
#define BRULE_SPLIT_LO 0.2
#define BRULE_SPLIT_HI 0.8
/* ... judged at the cap only, with an interval of this level: a 95% one
 * checked at every look of every step would call a split at one step in
 * dozens where the truth is 0 or the whole effect. */
#define BRULE_SPLIT_CONF 0.999

/* A shift of B against A in percent with its 95% CI, from pairs pairs;
 * NAN where not computed. A level exactly known (GOOD against itself) is
 * {0, 0, 0}. */
struct brule_effect {
	double est, lo, hi;
	size_t pairs;
};

struct brule_opts {
	unsigned cap;          /* 0: BRULE_CAP; below STATS_MIN_PAIRS: -EINVAL */
	enum direction dir;    /* of the metric: names "worse" or "better" in reasons */
	double min_change_pct; /* < 0: the stats defaults (rule 7) */
	double equivalence_pct;
};

/* The levels a step is placed between, both against GOOD: good = {0, 0,
 * 0} and bad = the anchor for a whole range; a part of a split range has
 * the split commit's shift at one end. */
struct brule_span {
	struct brule_effect good, bad;
};

struct brule_out {
	enum brule_decision decision;
	struct brule_effect effect; /* this comparison's shift */
	enum stats_verdict verdict; /* kab compare's verdict on it */
	double p_value;
	char reason[224];
};

/* The pairs of the next look after pairs (the cap when pairs is past the
 * last look but under the cap); 0 at or past the cap. */
unsigned brule_next_look(unsigned pairs, const struct brule_opts *o);

/* GOOD's values a against BAD's b, n pairs in order (NAN: a missing run):
 * ANCHORED when kab's adaptive rule decides the change at this look and
 * its CI lies clear of half the estimate (BAD, as a step, would be
 * decided bad: the two levels can be told apart); REFUSED when it says
 * "same", or the change is not decided or not that clear at the cap (a
 * bisection of noise names a random commit); else MORE. */
int brule_anchor(const double *a, const double *b, size_t n, const struct brule_opts *o, struct brule_out *ret);

/* GOOD's values a against the step commit's b: BAD when the shift with its
 * 95% CI lies on the bad level's side of the span's midpoint, GOOD on the
 * good level's side; a CI inside [BRULE_SPLIT_LO, BRULE_SPLIT_HI] of the
 * span asks for more pairs, and at the cap is a SPLIT when the
 * BRULE_SPLIT_CONF interval lies there too; else MORE, or UNDECIDED at
 * the cap (and when the span has no width: nothing to place a step
 * against). */
int brule_step(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
	       struct brule_out *ret);

/* The culprit's parent a against the culprit b: CONFIRMED when kab's
 * adaptive rule decides the change at this look, the shift goes the way
 * of the span's effect and its CI reaches BRULE_SPLIT_HI of the effect's
 * CI or beyond (it can carry the effect); UNCONFIRMED when it cannot be
 * (the other way, "same", a part of the effect only, or undecided at the
 * cap); else MORE. */
int brule_confirm(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		  struct brule_out *ret);

/* The revert control: BAD with the culprit reverted a against BAD b.
 * The confirmation's rule, BAD in the culprit's place and the revert in
 * its parent's: CONFIRMED when BAD is decided worse than the revert (the
 * revert gives the effect back) and reaches the span's effect as the
 * culprit must; UNCONFIRMED when it does not (the other way, the same, a
 * part only, undecided at the cap); else MORE. */
int brule_revert(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		 struct brule_out *ret);

/* The alignment control: the culprit's parent a against the culprit b,
 * both built with functions (and data, where the tree can) forced to an
 * alignment. Placed as a step is, between 0 and the span's effect:
 * LAYOUT when the effect vanishes (the 95% CI holds 0 and lies on 0's
 * side of half the effect: the culprit moved code, not the metric);
 * CONFIRMED when the CI lies on the effect's side of its half (the effect
 * survives the alignment); else MORE, UNDECIDED at the cap. */
int brule_align(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		struct brule_out *ret);

/* The effect between a span's two levels with a CI that holds both
 * levels' (conservative: the widths add). */
struct brule_effect brule_span_effect(const struct brule_span *span);
