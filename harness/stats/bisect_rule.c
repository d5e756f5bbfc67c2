/* A paired bisection's anchor, step and confirmation decisions, over
 * arrays; why each rule is what it is: doc/bisect.md. */
#include "harness/stats/bisect_rule.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness/base/util.h"

#define BRULE_WORD(name, word) [BRULE_##name] = word,
static const char *const decision_words[BRULE_N] = { BRULE_LIST(BRULE_WORD) };
UTIL_WORD_FUNCS(brule_decision, decision_words, BRULE_N)

static unsigned cap_of(const struct brule_opts *o)
{
	return o && o->cap ? o->cap : BRULE_CAP;
}

/* The look points: STATS_MIN_PAIRS, then half, three quarters and all of
 * the cap, each past the one before. */
static size_t looks(unsigned cap, unsigned ret[BRULE_LOOKS])
{
	unsigned want[BRULE_LOOKS] = { STATS_MIN_PAIRS, cap / 2, cap * 3 / 4, cap };
	size_t n = 0;
	for (size_t i = 0; i < BRULE_LOOKS; i++)
		if (want[i] <= cap && (n == 0 || want[i] > ret[n - 1]))
			ret[n++] = want[i];
	return n;
}

unsigned brule_next_look(unsigned pairs, const struct brule_opts *o)
{
	unsigned at[BRULE_LOOKS];
	size_t n = looks(cap_of(o), at);
	for (size_t i = 0; i < n; i++)
		if (at[i] > pairs)
			return at[i];
	return 0;
}

/* Which look n pairs are (1-based: the looks at or below n), of how many. */
static unsigned look_of(size_t pairs, unsigned cap, unsigned *ret_n_looks)
{
	unsigned at[BRULE_LOOKS];
	size_t n = looks(cap, at), k = 0;
	while (k < n && at[k] <= pairs)
		k++;
	*ret_n_looks = (unsigned)n;
	return k ? (unsigned)k : 1;
}

static int compare(const double *a, const double *b, size_t n, const struct brule_opts *o, struct stats_result *ret)
{
	struct stats_input in = {
		.a = a,
		.b = b,
		.n = n,
		.dir = o ? o->dir : DIRECTION_NEUTRAL,
		.min_change_pct = o ? o->min_change_pct : -1,
		.equivalence_pct = o ? o->equivalence_pct : -1,
	};
	return stats_compare(&in, ret);
}

/* Checks the options and compares; the shift and the verdict go to ret. */
static int begin(const double *a, const double *b, size_t n, const struct brule_opts *o, struct stats_result *r, struct brule_out *ret)
{
	if (!ret || (n && (!a || !b)) || cap_of(o) < STATS_MIN_PAIRS)
		return -EINVAL;
	int e = compare(a, b, n, o, r);
	if (e < 0)
		return e;
	*ret = (struct brule_out){
		.decision = BRULE_MORE,
		.effect = { r->hl_pct, r->ci_low_pct, r->ci_high_pct, r->pairs },
		.verdict = r->verdict,
		.p_value = r->p_value,
	};
	return 0;
}

static bool at_cap(const struct stats_result *r, const struct brule_opts *o)
{
	return r->pairs >= cap_of(o);
}

/* kab's adaptive rule on one comparison (doc/statistics.md, rule 9): before the
 * cap, decided past the look's O'Brien-Fleming bound, "same" by the
 * equivalence test, else go on; at the cap, kab compare's verdict, as a
 * job's report gives it at the end of its budget. */
static enum stats_stop adaptive(const struct stats_result *r, const struct brule_opts *o)
{
	unsigned n_looks, k = look_of(r->pairs, cap_of(o), &n_looks);
	if (r->pairs < STATS_MIN_PAIRS)
		return STATS_CONTINUE;
	if (!at_cap(r, o))
		return stats_adaptive_look(r, 1, k, n_looks);
	switch (r->verdict) {
	case STATS_VERDICT_BETTER:
	case STATS_VERDICT_WORSE:
	case STATS_VERDICT_CHANGED: return STATS_STOP_DECIDED;
	case STATS_VERDICT_SAME: return STATS_STOP_SAME;
	default: return STATS_CONTINUE;
	}
}

static void say(struct brule_out *ret, enum brule_decision d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(struct brule_out *ret, enum brule_decision d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ret->reason, sizeof(ret->reason), fmt, ap);
	va_end(ap);
	ret->decision = d;
}

#define EFF_FMT "%+.2f%% [%+.2f, %+.2f]"
#define EFF_ARGS(e) (e).est, (e).lo, (e).hi

/* An effect a bisection can resolve: BAD itself, as a step, would be
 * decided bad, its CI clear of half the effect. */
static bool resolvable(const struct brule_effect *e)
{
	return fabs(e->est) > 0 && fmin(fabs(e->lo), fabs(e->hi)) > fabs(e->est) / 2 && (e->lo > 0) == (e->hi > 0);
}

int brule_anchor(const double *a, const double *b, size_t n, const struct brule_opts *o, struct brule_out *ret)
{
	struct stats_result r;
	int e = begin(a, b, n, o, &r, ret);
	if (e < 0)
		return e;
	switch (adaptive(&r, o)) {
	case STATS_STOP_DECIDED:
		if (!resolvable(&ret->effect))
			break;
		say(ret, BRULE_ANCHORED, "BAD is %s than GOOD: " EFF_FMT " after %zu pairs, p %.3g",
		    stats_verdict_name(r.verdict), EFF_ARGS(ret->effect), r.pairs, r.p_value);
		return 0;
	case STATS_STOP_SAME:
		say(ret, BRULE_REFUSED, "GOOD and BAD are the same within +-%.3g%% (90%% CI [%+.2f, %+.2f] after %zu pairs): nothing to bisect",
		    r.equivalence_pct, r.ci90_low_pct, r.ci90_high_pct, r.pairs);
		return 0;
	case STATS_CONTINUE: break;
	}
	if (!at_cap(&r, o))
		return 0;
	if (r.verdict == STATS_VERDICT_BETTER || r.verdict == STATS_VERDICT_WORSE || r.verdict == STATS_VERDICT_CHANGED)
		say(ret, BRULE_REFUSED,
		    "BAD is %s than GOOD, " EFF_FMT
		    " after %zu pairs, but its CI reaches past half the effect: a step could not be told from either end",
		    stats_verdict_name(r.verdict), EFF_ARGS(ret->effect), r.pairs);
	else
		say(ret, BRULE_REFUSED, "GOOD against BAD not decided after %zu pairs (" EFF_FMT ", p %.3g): a bisection of noise names a random commit",
		    r.pairs, EFF_ARGS(ret->effect), r.p_value);
	return 0;
}

struct brule_effect brule_span_effect(const struct brule_span *s)
{
	return (struct brule_effect){
		.est = s->bad.est - s->good.est,
		.lo = s->bad.lo - s->good.hi,
		.hi = s->bad.hi - s->good.lo,
		.pairs = s->bad.pairs,
	};
}

/* Where x lies in the span: 0 at the good level, 1 at the bad one. */
static double place(const struct brule_span *s, double x)
{
	return (x - s->good.est) / (s->bad.est - s->good.est);
}

/* A step that cannot be placed yet: more pairs, or undecided at the cap. */
static void not_yet(const struct stats_result *r, const struct brule_opts *o, const char *why, struct brule_out *ret)
{
	if (!at_cap(r, o))
		say(ret, BRULE_MORE, "%s", why);
	else
		say(ret, BRULE_UNDECIDED, "%s after %zu pairs (the cap)", why, r->pairs);
}

/* The shift's BRULE_SPLIT_CONF interval in percent, from the paired log
 * ratios (kab's paired HL interval at a higher level); false when the
 * values are not all positive or the level cannot be reached. */
static bool split_interval(const double *a, const double *b, size_t n, double *ret_lo, double *ret_hi)
{
	double *d = malloc((n ? n : 1) * sizeof(*d));
	size_t k = 0;
	bool ok = d != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		if (isnan(a[i]) || isnan(b[i]))
			continue;
		ok = a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i]);
		d[k++] = log(b[i] / a[i]);
	}
	double est, lo, hi, level;
	ok = ok && k >= STATS_MIN_PAIRS && stats_hl_paired(d, k, BRULE_SPLIT_CONF, &est, &lo, &hi, &level) >= 0 &&
	     level >= BRULE_SPLIT_CONF;
	free(d);
	if (ok) {
		*ret_lo = 100 * expm1(lo);
		*ret_hi = 100 * expm1(hi);
	}
	return ok;
}

/* Where an interval lies in the span, its ends in order. */
static void place_ci(const struct brule_span *s, double lo, double hi, double *ret_lo, double *ret_hi)
{
	*ret_lo = fmin(place(s, lo), place(s, hi));
	*ret_hi = fmax(place(s, lo), place(s, hi));
}

static bool in_band(double t_lo, double t_hi)
{
	return t_lo >= BRULE_SPLIT_LO && t_hi <= BRULE_SPLIT_HI;
}

/* At the cap: a split when even the BRULE_SPLIT_CONF interval lies in
 * the band. */
static bool split_at_cap(const struct brule_span *span, const double *a, const double *b, size_t n, struct brule_out *ret)
{
	double lo, hi, t_lo, t_hi;
	if (!split_interval(a, b, n, &lo, &hi))
		return false;
	place_ci(span, lo, hi, &t_lo, &t_hi);
	if (!in_band(t_lo, t_hi))
		return false;
	say(ret, BRULE_SPLIT, "shift " EFF_FMT " (%.1f%% CI [%+.2f, %+.2f]) lies inside %.0f%%-%.0f%% of the span (%+.2f%% to %+.2f%%): the change is spread over commits",
	    EFF_ARGS(ret->effect), 100 * BRULE_SPLIT_CONF, lo, hi, 100 * BRULE_SPLIT_LO, 100 * BRULE_SPLIT_HI,
	    span->good.est, span->bad.est);
	return true;
}

/* A rule that places a comparison in a span. */
typedef void (*span_rule)(const struct brule_span *span, const double *a, const double *b, size_t n,
			  const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret);

/* Compares, then the rule decides. */
static int apply(span_rule rule, const struct brule_span *span, const double *a, const double *b, size_t n,
		 const struct brule_opts *o, struct brule_out *ret)
{
	struct stats_result r;
	int e = span ? begin(a, b, n, o, &r, ret) : -EINVAL;
	if (e >= 0)
		rule(span, a, b, n, &r, o, ret);
	return e;
}

/* Fewer pairs than the exact test needs, or no CI yet: not yet decided,
 * said so in ret; false when the rule can look. */
static bool too_few(const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret)
{
	if (r->pairs >= STATS_MIN_PAIRS && !isnan(ret->effect.lo) && !isnan(ret->effect.hi))
		return false;
	char why[96];
	snprintf(why, sizeof(why), "%zu pairs, below the exact test's %d", r->pairs, STATS_MIN_PAIRS);
	not_yet(r, o, why, ret);
	return true;
}

static void step_rule(const struct brule_span *span, const double *a, const double *b, size_t n,
		      const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret)
{
	double width = span->bad.est - span->good.est, mid = (span->good.est + span->bad.est) / 2;
	if (!isfinite(width) || width == 0) {
		say(ret, BRULE_UNDECIDED,
		    "the span's two levels are the same (%+.2f%%): nothing to place a step against", span->good.est);
		return;
	}
	if (too_few(r, o, ret))
		return;
	double t_lo, t_hi;
	place_ci(span, ret->effect.lo, ret->effect.hi, &t_lo, &t_hi);
	bool band = in_band(t_lo, t_hi);
	char why[160];
	if (at_cap(r, o) && split_at_cap(span, a, b, n, ret))
		return;
	if (!band && t_lo > 0.5)
		say(ret, BRULE_BAD, "shift " EFF_FMT " lies on BAD's side of the midpoint %+.2f%%", EFF_ARGS(ret->effect), mid);
	else if (!band && t_hi < 0.5)
		say(ret, BRULE_GOOD, "shift " EFF_FMT " lies on GOOD's side of the midpoint %+.2f%%", EFF_ARGS(ret->effect), mid);
	else {
		snprintf(why, sizeof(why), "shift " EFF_FMT " %s the midpoint %+.2f%%", EFF_ARGS(ret->effect),
			 band ? "lies between the levels, near" : "straddles", mid);
		not_yet(r, o, why, ret);
	}
}

int brule_step(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
	       struct brule_out *ret)
{
	return apply(step_rule, span, a, b, n, o, ret);
}

/* How a decided shift stands to the span's effect d: -1 it goes the
 * other way, 0 it falls short, 1 it can carry the effect: its CI reaches
 * BRULE_SPLIT_HI of the way to the effect's CI (its end nearer 0), or
 * beyond. Two CIs of few pairs each, the anchor's narrowed by its early
 * stop, need not overlap for one change seen twice; a shift that reaches
 * less is a part of the change. */
static int reach(const struct brule_span *span, const struct brule_out *ret, struct brule_effect *d)
{
	*d = brule_span_effect(span);
	double sign = d->est > 0 ? 1 : -1, near = fmin(sign * d->lo, sign * d->hi);
	double far = fmax(sign * ret->effect.lo, sign * ret->effect.hi);
	if (sign * ret->effect.est <= 0)
		return -1;
	return far >= BRULE_SPLIT_HI * near ? 1 : 0;
}

/* A decided culprit: the way of the effect, and whether it can carry it. */
static void confirm_decided(const struct brule_span *span, struct brule_out *ret)
{
	struct brule_effect d;
	switch (reach(span, ret, &d)) {
	case -1:
		say(ret, BRULE_UNCONFIRMED,
		    "against its parent the culprit goes the other way: " EFF_FMT " where the effect is " EFF_FMT,
		    EFF_ARGS(ret->effect), EFF_ARGS(d));
		break;
	case 0:
		say(ret, BRULE_UNCONFIRMED, "against its parent " EFF_FMT ", short of the effect " EFF_FMT ": it explains a part of it only",
		    EFF_ARGS(ret->effect), EFF_ARGS(d));
		break;
	default:
		say(ret, BRULE_CONFIRMED, "against its parent " EFF_FMT " (%s), reaching the effect " EFF_FMT,
		    EFF_ARGS(ret->effect), stats_verdict_name(ret->verdict), EFF_ARGS(d));
	}
}

static void confirm_rule(const struct brule_span *span, const double *a, const double *b, size_t n,
			 const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret)
{
	switch (adaptive(r, o)) {
	case STATS_STOP_DECIDED: confirm_decided(span, ret); return;
	case STATS_STOP_SAME:
		say(ret, BRULE_UNCONFIRMED, "the culprit is the same as its parent within +-%.3g%% (" EFF_FMT ")",
		    r->equivalence_pct, EFF_ARGS(ret->effect));
		return;
	case STATS_CONTINUE: break;
	}
	if (at_cap(r, o))
		say(ret, BRULE_UNCONFIRMED, "against its parent not decided after %zu pairs (" EFF_FMT ", p %.3g)",
		    r->pairs, EFF_ARGS(ret->effect), r->p_value);
	else
		say(ret, BRULE_MORE, "against its parent not decided yet (" EFF_FMT ")", EFF_ARGS(ret->effect));
}

int brule_confirm(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		  struct brule_out *ret)
{
	return apply(confirm_rule, span, a, b, n, o, ret);
}

/* The revert: BAD (b) against BAD with the culprit reverted (a) is the
 * culprit against its parent once more, on top of what came after it. */
static void revert_rule(const struct brule_span *span, const double *a, const double *b, size_t n,
			const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret)
{
	struct brule_effect d;
	switch (adaptive(r, o)) {
	case STATS_STOP_DECIDED:
		switch (reach(span, ret, &d)) {
		case -1:
			say(ret, BRULE_UNCONFIRMED,
			    "BAD against BAD with the culprit reverted goes the other way: " EFF_FMT
			    " where the effect is " EFF_FMT ": the revert does not give the effect back",
			    EFF_ARGS(ret->effect), EFF_ARGS(d));
			break;
		case 0:
			say(ret, BRULE_UNCONFIRMED,
			    "BAD against BAD with the culprit reverted " EFF_FMT ", short of the effect " EFF_FMT
			    ": the revert gives a part of it back only",
			    EFF_ARGS(ret->effect), EFF_ARGS(d));
			break;
		default:
			say(ret, BRULE_CONFIRMED,
			    "BAD against BAD with the culprit reverted " EFF_FMT " (%s), reaching the effect " EFF_FMT
			    ": the revert gives it back",
			    EFF_ARGS(ret->effect), stats_verdict_name(ret->verdict), EFF_ARGS(d));
		}
		return;
	case STATS_STOP_SAME:
		say(ret, BRULE_UNCONFIRMED,
		    "BAD is the same as BAD with the culprit reverted within +-%.3g%% (" EFF_FMT "): the revert gives nothing back",
		    r->equivalence_pct, EFF_ARGS(ret->effect));
		return;
	case STATS_CONTINUE: break;
	}
	if (at_cap(r, o))
		say(ret, BRULE_UNCONFIRMED, "BAD against BAD with the culprit reverted not decided after %zu pairs (" EFF_FMT ", p %.3g)",
		    r->pairs, EFF_ARGS(ret->effect), r->p_value);
	else
		say(ret, BRULE_MORE, "BAD against BAD with the culprit reverted not decided yet (" EFF_FMT ")",
		    EFF_ARGS(ret->effect));
}

int brule_revert(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		 struct brule_out *ret)
{
	return apply(revert_rule, span, a, b, n, o, ret);
}

/* Forced alignment: the culprit against its parent placed between 0 and
 * the effect, as a step is placed between GOOD and BAD. */
static void align_rule(const struct brule_span *span, const double *a, const double *b, size_t n,
		       const struct stats_result *r, const struct brule_opts *o, struct brule_out *ret)
{
	struct brule_effect d = brule_span_effect(span);
	struct brule_span levels = { { 0, 0, 0, 0 }, d };
	if (!isfinite(d.est) || d.est == 0) {
		say(ret, BRULE_UNDECIDED, "the effect is %+.2f%%: nothing to compare the aligned culprit with", d.est);
		return;
	}
	if (too_few(r, o, ret))
		return;
	double t_lo, t_hi;
	place_ci(&levels, ret->effect.lo, ret->effect.hi, &t_lo, &t_hi);
	if (t_lo <= 0 && t_hi >= 0 && t_hi < 0.5)
		say(ret, BRULE_LAYOUT,
		    "with forced alignment the culprit against its parent is " EFF_FMT
		    ", holding 0 and clear of half the effect " EFF_FMT ": the effect vanishes, it is the code's layout",
		    EFF_ARGS(ret->effect), EFF_ARGS(d));
	else if (t_lo > 0.5)
		say(ret, BRULE_CONFIRMED,
		    "with forced alignment the culprit against its parent is " EFF_FMT
		    ", on the effect's side of its half " EFF_FMT ": the effect survives the alignment",
		    EFF_ARGS(ret->effect), EFF_ARGS(d));
	else {
		char why[192];
		snprintf(why, sizeof(why), "with forced alignment " EFF_FMT " %s", EFF_ARGS(ret->effect),
			 t_hi < 0     ? "goes the other way"
			 : t_hi < 0.5 ? "is smaller than half the effect but not 0"
				      : "straddles half the effect");
		not_yet(r, o, why, ret);
	}
}

int brule_align(const struct brule_span *span, const double *a, const double *b, size_t n, const struct brule_opts *o,
		struct brule_out *ret)
{
	return apply(align_rule, span, a, b, n, o, ret);
}
