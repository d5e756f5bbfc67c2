/* The paired bisection: the step, anchor and confirmation rules at their
 * edges (a zero or negative effect, pairs below the exact test's minimum,
 * the cap), git's answers read back, and the bisection loop over a small
 * generated repository (a range of one commit, unknown revisions, a GOOD
 * that is not an ancestor, measurements reused). Its accuracy is measured
 * by tests/stats/check_bisect.sh. */
#include "t.h"
#include "t_git.h"
#include "harness/exec/bisect.h"
#include "harness/stats/bisect_rule.h"
#include "kernels/bisect_git.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define NP 40

/* n pairs: A about 1000, B shifted by pct percent, a small spread. */
static void pairs(double pct, size_t n, double spread, double *a, double *b)
{
	for (size_t i = 0; i < n; i++) {
		double wobble = spread * ((double)((i * 7) % 5) - 2) / 2; /* -spread .. +spread */
		a[i] = 1000 * (1 + 0.001 * (double)(i % 3));
		b[i] = a[i] * (1 + pct / 100) * (1 + wobble / 100);
	}
}

static const struct brule_opts opts = { .dir = DIRECTION_HIGHER, .min_change_pct = -1, .equivalence_pct = -1 };

static struct brule_span span_of(double delta)
{
	return (struct brule_span){ { 0, 0, 0, 0 }, { delta, delta - fabs(delta) / 10, delta + fabs(delta) / 10, 10 } };
}

static enum brule_decision step(double delta, double pct, size_t n, double spread)
{
	double a[NP], b[NP];
	pairs(pct, n, spread, a, b);
	struct brule_span s = span_of(delta);
	struct brule_out o;
	int r = brule_step(&s, a, b, n, &opts, &o);
	return r < 0 ? (enum brule_decision) - 1 : o.decision;
}

static void test_looks(void)
{
	T_EQ_INT(brule_next_look(0, &opts), 6);
	T_EQ_INT(brule_next_look(6, &opts), 10);
	T_EQ_INT(brule_next_look(12, &opts), 15);
	T_EQ_INT(brule_next_look(15, &opts), 20);
	T_EQ_INT(brule_next_look(20, &opts), 0);
	struct brule_opts six = opts;
	six.cap = 6;
	T_EQ_INT(brule_next_look(0, &six), 6);
	T_EQ_INT(brule_next_look(6, &six), 0);
	T_EQ_STR(brule_decision_name(BRULE_SPLIT), "split");
	enum brule_decision d;
	T_EQ_INT(brule_decision_parse("unconfirmed", &d), 0);
	T_EQ_INT(d, BRULE_UNCONFIRMED);
}

static void test_step(void)
{
	/* a regression of -10% (throughput: higher is better) */
	T_EQ_INT(step(-10, -10, 6, 0.5), BRULE_BAD);
	T_EQ_INT(step(-10, 0, 6, 0.5), BRULE_GOOD);
	T_EQ_INT(step(-10, -9, 10, 0.5), BRULE_BAD);
	/* "better is lower": latency up 10% is the same rule mirrored */
	T_EQ_INT(step(+10, +10, 6, 0.5), BRULE_BAD);
	T_EQ_INT(step(+10, +1, 6, 0.5), BRULE_GOOD);
	/* a zero effect: nothing to place a step against */
	T_EQ_INT(step(0, 5, 20, 0.5), BRULE_UNDECIDED);
	/* below the exact test's minimum: more pairs, whatever the shift */
	T_EQ_INT(step(-10, -10, 5, 0.1), BRULE_MORE);
	T_EQ_INT(step(-10, -10, 0, 0.1), BRULE_MORE);
	/* half the effect: more pairs before the cap, a split at it */
	T_EQ_INT(step(-10, -5, 10, 0.5), BRULE_MORE);
	T_EQ_INT(step(-10, -5, 20, 0.5), BRULE_SPLIT);
	/* noise wider than the effect: more, then undecided at the cap */
	T_EQ_INT(step(-10, -5, 15, 30), BRULE_MORE);
	T_EQ_INT(step(-10, -5, 20, 30), BRULE_UNDECIDED);
	T_EQ_INT(step(-10, -5, 25, 30), BRULE_UNDECIDED);
	/* a cap below the exact test's minimum is refused */
	double a[NP], b[NP];
	pairs(-10, 6, 0.5, a, b);
	struct brule_span s = span_of(-10);
	struct brule_opts low = opts;
	low.cap = 5;
	struct brule_out o;
	T_EQ_INT(brule_step(&s, a, b, 6, &low, &o), -EINVAL);
	/* with a cap of 6 the first look is the last */
	low.cap = 6;
	pairs(-10, 6, 30, a, b);
	T_EQ_INT(brule_step(&s, a, b, 6, &low, &o), 0);
	T_EQ_INT(o.decision, BRULE_UNDECIDED);
	T_CHECK(strstr(o.reason, "the cap") != NULL);
	/* a part of a split range: levels -5 and -10 */
	struct brule_span part = { { -5, -5.5, -4.5, 20 }, { -10, -11, -9, 10 } };
	pairs(-5.2, 10, 0.5, a, b);
	T_EQ_INT(brule_step(&part, a, b, 10, &opts, &o), 0);
	T_EQ_INT(o.decision, BRULE_GOOD);
	pairs(-10, 10, 0.5, a, b);
	T_EQ_INT(brule_step(&part, a, b, 10, &opts, &o), 0);
	T_EQ_INT(o.decision, BRULE_BAD);
	T_CHECK(strstr(o.reason, "BAD's side") != NULL);
}

static enum brule_decision anchor(double pct, size_t n, double spread)
{
	double a[NP], b[NP];
	pairs(pct, n, spread, a, b);
	struct brule_out o;
	return brule_anchor(a, b, n, &opts, &o) < 0 ? (enum brule_decision) - 1 : o.decision;
}

static void test_anchor(void)
{
	T_EQ_INT(anchor(-10, 6, 0.5), BRULE_ANCHORED);
	T_EQ_INT(anchor(+10, 6, 0.5), BRULE_ANCHORED); /* an improvement can be bisected too */
	T_EQ_INT(anchor(-10, 5, 0.5), BRULE_MORE);
	T_EQ_INT(anchor(0, 6, 0.5), BRULE_REFUSED); /* the same within the equivalence margin */
	T_EQ_INT(anchor(0, 20, 0.5), BRULE_REFUSED);
	T_EQ_INT(anchor(-3, 20, 30), BRULE_REFUSED);
	T_EQ_INT(anchor(-3, 15, 30), BRULE_MORE);
	/* decided, but its CI reaches past half the effect: refused at the cap */
	double a[NP], b[NP];
	pairs(-4, 20, 10, a, b);
	struct brule_out o;
	T_EQ_INT(brule_anchor(a, b, 20, &opts, &o), 0);
	T_EQ_INT(o.decision, BRULE_REFUSED);
	T_CHECK(strstr(o.reason, "past half the effect") != NULL);
}

static enum brule_decision confirm(double delta, double pct, size_t n, double spread)
{
	double a[NP], b[NP];
	pairs(pct, n, spread, a, b);
	struct brule_span s = span_of(delta);
	struct brule_out o;
	return brule_confirm(&s, a, b, n, &opts, &o) < 0 ? (enum brule_decision) - 1 : o.decision;
}

static void test_confirm(void)
{
	T_EQ_INT(confirm(-10, -10, 6, 0.5), BRULE_CONFIRMED);
	T_EQ_INT(confirm(-10, -14, 6, 0.5), BRULE_CONFIRMED);   /* larger than the effect: still the culprit */
	T_EQ_INT(confirm(-10, +10, 6, 0.5), BRULE_UNCONFIRMED); /* the other way */
	T_EQ_INT(confirm(-10, -4, 6, 0.5), BRULE_UNCONFIRMED);  /* a part only */
	T_EQ_INT(confirm(-10, 0, 20, 0.5), BRULE_UNCONFIRMED);  /* the same as its parent */
	T_EQ_INT(confirm(+10, +10, 6, 0.5), BRULE_CONFIRMED);
	T_EQ_INT(confirm(-10, -10, 4, 0.5), BRULE_MORE);
	T_EQ_INT(confirm(-10, -6, 20, 40), BRULE_UNCONFIRMED);
}

static enum brule_decision revert(double delta, double pct, size_t n, double spread)
{
	double a[NP], b[NP];
	pairs(pct, n, spread, a, b); /* a: BAD with the culprit reverted, b: BAD */
	struct brule_span s = span_of(delta);
	struct brule_out o;
	return brule_revert(&s, a, b, n, &opts, &o) < 0 ? (enum brule_decision) - 1 : o.decision;
}

static enum brule_decision align(double delta, double pct, size_t n, double spread)
{
	double a[NP], b[NP];
	pairs(pct, n, spread, a, b);
	struct brule_span s = span_of(delta);
	struct brule_out o;
	return brule_align(&s, a, b, n, &opts, &o) < 0 ? (enum brule_decision) - 1 : o.decision;
}

static void test_controls_rules(void)
{
	/* the revert gives the effect back: BAD is the effect's way from it */
	T_EQ_INT(revert(-10, -10, 6, 0.5), BRULE_CONFIRMED);
	T_EQ_INT(revert(-10, 0, 20, 0.5), BRULE_UNCONFIRMED); /* the revert changes nothing */
	T_EQ_INT(revert(-10, +10, 6, 0.5), BRULE_UNCONFIRMED);
	T_EQ_INT(revert(-10, -4, 6, 0.5), BRULE_UNCONFIRMED);
	T_EQ_INT(revert(-10, -10, 4, 0.5), BRULE_MORE);
	/* forced alignment: the effect kept, vanished, or not decided */
	T_EQ_INT(align(-10, -10, 6, 0.5), BRULE_CONFIRMED);
	T_EQ_INT(align(-10, 0, 6, 0.5), BRULE_LAYOUT);
	T_EQ_INT(align(+10, 0, 10, 0.5), BRULE_LAYOUT);
	T_EQ_INT(align(-10, -3, 10, 0.5), BRULE_MORE);      /* smaller, but not 0 */
	T_EQ_INT(align(-10, -3, 20, 0.5), BRULE_UNDECIDED); /* ... at the cap */
	T_EQ_INT(align(-10, -5, 20, 30), BRULE_UNDECIDED);
	T_EQ_INT(align(-10, 0, 5, 0.5), BRULE_MORE);
	T_EQ_INT(align(0, 0, 10, 0.5), BRULE_UNDECIDED);
	T_EQ_STR(brule_decision_name(BRULE_LAYOUT), "layout-sensitive");
	T_EQ_STR(bisect_control_name(BISECT_CTL_ALIGN), "align");
	enum bisect_control k;
	T_EQ_INT(bisect_control_parse("revert", &k), 0);
	T_EQ_INT(k, BISECT_CTL_REVERT);
	T_EQ_INT(bisect_control_parse("x", &k), -EINVAL);
}

static void test_parse(void)
{
	struct kbisect_step s;
	const char sha[] = "0123456789abcdef0123456789abcdef01234567", other[] = "89abcdef0123456789abcdef0123456789abcdef";
	char text[512];
	snprintf(text, sizeof(text), "Bisecting: 3 revisions left to test after this (roughly 2 steps)\n[%s] subject [x]\n", sha);
	T_EQ_INT(kbisect_parse(text, &s), 0);
	T_EQ_INT(s.state, KBISECT_NEXT);
	T_EQ_STR(s.sha, sha);
	snprintf(text, sizeof(text), "%s is the first bad commit\ncommit %s\nAuthor: x\n", sha, sha);
	T_EQ_INT(kbisect_parse(text, &s), 0);
	T_EQ_INT(s.state, KBISECT_FOUND);
	T_EQ_STR(s.sha, sha);
	snprintf(text, sizeof(text), "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of:\n%s\n%s\nWe cannot bisect more!\n",
		 sha, other);
	T_EQ_INT(kbisect_parse(text, &s), 0);
	T_EQ_INT(s.state, KBISECT_ONLY_SKIPPED);
	T_EQ_INT(s.n_cand, 2);
	T_EQ_STR(s.cand[1], other);
	T_EQ_INT(kbisect_parse("fatal: bad revision 'x'\n", &s), -EIO);
	T_EQ_INT(kbisect_parse("[0123] short\n", &s), -EIO);
	T_EQ_INT(kbisect_parse("", &s), -EIO);
	T_EQ_STR(kbisect_mark_name(KBISECT_SKIP), "skip");
}

/* ---- the loop over a generated repository ---- */

#define NC 9 /* commits 0 (GOOD) .. 8 */
static char shas[NC][KBISECT_SHA_LEN + 1];

struct fake {
	int culprit;  /* commits from it on are 10% slower */
	int culprit2; /* 0: none; else each culprit makes 5% of it */
	int nobuild;  /* a commit that does not build, or -1 */
	bool layout;  /* the culprit's effect is its code's layout: gone with forced alignment */
	bool revert_conflict; /* the culprit's revert does not apply on BAD */
	unsigned ctl_pairs[BISECT_CTL_N];
	unsigned builds[NC];
	unsigned calls[NC][NC]; /* measure calls by commit and base */
	unsigned pairs[NC][NC];
};

static int index_of(const char *sha)
{
	for (int i = 0; i < NC; i++)
		if (strcmp(shas[i], sha) == 0)
			return i;
	return -1;
}

static int fake_build(void *ctx, const char *sha, struct strbuf *why)
{
	struct fake *f = ctx;
	int i = index_of(sha);
	if (i < 0)
		return -ENOENT;
	f->builds[i]++;
	if (i == f->nobuild) {
		sb_puts(why, "make: *** [vmlinux] Error 2");
		return 1;
	}
	return 0;
}

static double level(const struct fake *f, int i)
{
	if (!f->culprit2)
		return i >= f->culprit ? 0.9 : 1;
	return 1 - 0.05 * (i >= f->culprit) - 0.05 * (i >= f->culprit2);
}

static int fake_measure(void *ctx, const char *sha, const char *base, unsigned k, double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct fake *f = ctx;
	int i = index_of(sha), g = index_of(base);
	if (i < 0 || g < 0)
		return -ENOENT;
	for (unsigned p = 0; p < k; p++) {
		unsigned n = f->pairs[i][g] + p;
		double wobble = 1 + 0.002 * ((double)((n * 7 + (unsigned)i) % 5) - 2);
		ret_base[p] = 1000 * level(f, g);
		ret_sha[p] = 1000 * level(f, i) * wobble;
	}
	f->calls[i][g]++;
	f->pairs[i][g] += k;
	return 0;
}

/* The controls: BAD with the culprit reverted is at the level of the
 * culprit's parent (a layout change undone is undone too); with forced
 * alignment a real culprit keeps its effect and a layout one loses it. */
static int fake_control(void *ctx, enum bisect_control kind, const char *sha, const char *base, unsigned k,
			double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct fake *f = ctx;
	int i = index_of(sha), g = index_of(base);
	if (i < 1 || g < 0)
		return -ENOENT;
	if (kind == BISECT_CTL_REVERT && f->revert_conflict) {
		sb_printf(why, "the revert of %.12s does not apply on BAD %.12s (conflict in f%d)", sha, base, i);
		return BISECT_NOT_APPLICABLE;
	}
	for (unsigned p = 0; p < k; p++) {
		unsigned n = f->ctl_pairs[kind] + p;
		double wobble = 1 + 0.002 * ((double)((n * 7 + (unsigned)i) % 5) - 2);
		if (kind == BISECT_CTL_REVERT) {
			ret_base[p] = 1000 * level(f, g) * level(f, i - 1) / level(f, i);
			ret_sha[p] = 1000 * level(f, g) * wobble;
		} else {
			ret_base[p] = 1000 * level(f, g);
			ret_sha[p] = 1000 * (f->layout ? level(f, g) : level(f, i)) * wobble;
		}
	}
	f->ctl_pairs[kind] += k;
	sb_printf(why, kind == BISECT_CTL_REVERT ? "revert commit r%d" : "forced CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B", i);
	return 0;
}

static int run_with(struct kbisect_git *g, struct fake *f, const char *good, const char *bad, bool controls,
		    struct bisect_report *rep, struct strbuf *err)
{
	struct bisect_runner runner = { .ctx = f, .build = fake_build, .measure = fake_measure, .control = fake_control };
	struct bisect_opts o = { .good = good, .bad = bad, .rule = opts, .revert = controls, .align = controls };
	sb_free(err);
	return bisect_run(&kbisect_git_ops, g, &runner, &o, rep, err);
}

static int run(struct kbisect_git *g, struct fake *f, const char *good, const char *bad, struct bisect_report *rep, struct strbuf *err)
{
	struct bisect_runner runner = { .ctx = f, .build = fake_build, .measure = fake_measure };
	struct bisect_opts o = { .good = good, .bad = bad, .rule = opts };
	sb_free(err);
	return bisect_run(&kbisect_git_ops, g, &runner, &o, rep, err);
}

static void test_loop_inputs(struct kbisect_git *g)
{
	struct fake f = { .culprit = 5, .nobuild = -1 };
	struct bisect_report rep;
	struct strbuf err = { 0 };
	T_EQ_INT(run(g, &f, "no-such-rev", shas[8], &rep, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "unknown revision \"no-such-rev\""));
	T_EQ_INT(run(g, &f, shas[0], "-x", &rep, &err), -EINVAL);
	T_EQ_INT(run(g, &f, shas[8], shas[0], &rep, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "is not an ancestor of BAD"));
	T_EQ_INT(run(g, &f, "main", "main", &rep, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "the same commit"));
	/* GOOD that does not build */
	struct fake nb = { .culprit = 5, .nobuild = 0 };
	T_EQ_INT(run(g, &nb, shas[0], shas[8], &rep, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "GOOD") && strstr(err.buf, "does not build"));
	sb_free(&err);
}

static void test_loop_one(struct kbisect_git *g)
{
	/* a range of one commit: it is the answer, confirmed with the
	 * anchor's own pairs (its parent is GOOD) */
	struct fake f = { .culprit = 5, .nobuild = -1 };
	struct bisect_report rep;
	struct strbuf err = { 0 };
	T_EQ_INT(run(g, &f, shas[4], shas[5], &rep, &err), 0);
	T_EQ_INT(rep.anchor.decision, BRULE_ANCHORED);
	T_EQ_INT(rep.n_culprits, 1);
	T_EQ_INT(rep.culprits[0].answer, BISECT_CULPRIT);
	T_EQ_STR(rep.culprits[0].sha, shas[5]);
	T_EQ_INT(rep.n_rows, 0);
	T_EQ_INT(rep.builds, 2);
	T_EQ_INT(f.calls[5][4], 1); /* six pairs, once: the anchor's, reused */
	T_EQ_INT(rep.boots, 12);
	bisect_report_free(&rep);
	sb_free(&err);
}

static void test_loop_full(struct kbisect_git *g)
{
	struct fake f = { .culprit = 5, .nobuild = 4 };
	struct bisect_report rep;
	struct strbuf err = { 0 };
	T_EQ_INT(run(g, &f, shas[0], "main", &rep, &err), 0);
	if (err.len)
		fprintf(stderr, "%s\n", err.buf);
	T_EQ_INT(rep.n_culprits, 1);
	/* commit 4 does not build: 5 can only be bracketed */
	T_EQ_INT(rep.culprits[0].answer, BISECT_RANGE);
	T_EQ_INT(rep.culprits[0].range.n_cand, 2);
	bool has5 = false;
	for (size_t i = 0; i < rep.culprits[0].range.n_cand; i++)
		has5 |= strcmp(rep.culprits[0].range.cand[i], shas[5]) == 0;
	T_CHECK(has5);
	T_CHECK(rep.log.buf && strstr(rep.log.buf, "git bisect start") && strstr(rep.log.buf, "git bisect skip"));
	/* nothing built or measured twice: one build a commit, and no
	 * commit measured from scratch again (each call adds to its pairs) */
	for (int i = 0; i < NC; i++) {
		T_CHECK(f.builds[i] <= 1);
		T_CHECK(f.calls[i][0] <= BRULE_LOOKS);
	}
	bool skip_row = false;
	for (size_t i = 0; i < rep.n_rows; i++)
		skip_row |= rep.rows[i].mark == KBISECT_SKIP && strstr(rep.rows[i].out.reason, "does not build") != NULL;
	T_CHECK(skip_row);
	bisect_report_free(&rep);

	/* the same with every commit building: 5 named and confirmed */
	struct fake ok = { .culprit = 5, .nobuild = -1 };
	T_EQ_INT(run(g, &ok, shas[0], shas[8], &rep, &err), 0);
	T_EQ_INT(rep.n_culprits, 1);
	T_EQ_INT(rep.culprits[0].answer, BISECT_CULPRIT);
	T_EQ_STR(rep.culprits[0].sha, shas[5]);
	T_EQ_STR(rep.culprits[0].parent, shas[4]);
	T_CHECK(strstr(rep.culprits[0].confirm.reason, "against its parent") != NULL);
	struct strbuf d = { 0 };
	T_EQ_INT(kbisect_git_ops.describe(g, shas[5], &d, &err), 0);
	T_CHECK(d.buf && strstr(d.buf, "change 5") && strstr(d.buf, "t <t@kab>"));
	sb_free(&d);
	bisect_report_free(&rep);
	sb_free(&err);
}

static void test_loop_split(struct kbisect_git *g)
{
	/* two culprits of 5% each: git's first commit (4) sits between
	 * them, is a split at the cap, and each part names its own */
	struct fake f = { .culprit = 3, .culprit2 = 6, .nobuild = -1 };
	struct bisect_report rep;
	struct strbuf err = { 0 };
	T_EQ_INT(run(g, &f, shas[0], shas[8], &rep, &err), 0);
	T_EQ_INT(rep.parts, 3);
	T_EQ_INT(rep.n_culprits, 2);
	T_CHECK(rep.n_rows > 0 && rep.rows[0].out.decision == BRULE_SPLIT && !rep.rows[0].marked);
	T_EQ_STR(rep.rows[0].sha, shas[4]);
	T_EQ_INT(f.pairs[4][0], BRULE_CAP);
	for (size_t i = 0; i < rep.n_culprits; i++)
		T_EQ_INT(rep.culprits[i].answer, BISECT_CULPRIT);
	T_EQ_STR(rep.culprits[0].sha, shas[3]);
	T_EQ_STR(rep.culprits[1].sha, shas[6]);
	T_CHECK(rep.log.buf && strstr(rep.log.buf, "# part 1:") && strstr(rep.log.buf, "# part 2:"));
	bisect_report_free(&rep);
	sb_free(&err);
}

static void test_loop_controls(struct kbisect_git *g)
{
	struct bisect_report rep;
	struct strbuf err = { 0 };
	/* a real culprit: the revert gives the effect back, the effect
	 * survives forced alignment; a culprit still */
	struct fake real = { .culprit = 5, .nobuild = -1 };
	T_EQ_INT(run_with(g, &real, shas[0], shas[8], true, &rep, &err), 0);
	T_EQ_INT(rep.n_culprits, 1);
	const struct bisect_culprit *k = &rep.culprits[0];
	T_EQ_INT(k->answer, BISECT_CULPRIT);
	T_EQ_STR(k->sha, shas[5]);
	T_CHECK(k->revert.asked && k->align.asked);
	T_EQ_INT(k->revert.out.decision, BRULE_CONFIRMED);
	T_CHECK(k->revert.out.effect.est < 0 && strstr(k->revert.out.reason, "gives it back") != NULL);
	T_EQ_STR(k->revert.base, shas[8]);
	T_EQ_STR(k->revert.note, "revert commit r5");
	T_EQ_INT(k->align.out.decision, BRULE_CONFIRMED);
	T_EQ_STR(k->align.base, shas[4]);
	T_CHECK(strstr(k->align.note, "FUNCTION_ALIGN_64B") != NULL);
	T_EQ_INT(real.ctl_pairs[BISECT_CTL_REVERT], 6);
	T_EQ_INT(real.ctl_pairs[BISECT_CTL_ALIGN], 6);
	bisect_report_free(&rep);

	/* a layout culprit: confirmed against its parent, gone with forced
	 * alignment: layout-sensitive, not a culprit */
	struct fake lay = { .culprit = 5, .nobuild = -1, .layout = true };
	T_EQ_INT(run_with(g, &lay, shas[0], shas[8], true, &rep, &err), 0);
	k = &rep.culprits[0];
	T_EQ_INT(k->confirm.decision, BRULE_CONFIRMED);
	T_EQ_INT(k->revert.out.decision, BRULE_CONFIRMED);
	T_EQ_INT(k->align.out.decision, BRULE_LAYOUT);
	T_EQ_INT(k->answer, BISECT_LAYOUT);
	T_EQ_STR(bisect_answer_name(k->answer), "layout-sensitive");
	T_CHECK(strstr(k->align.out.reason, "vanishes") != NULL);
	bisect_report_free(&rep);

	/* a revert that does not apply: reported so, and the culprit stands */
	struct fake conflict = { .culprit = 5, .nobuild = -1, .revert_conflict = true };
	T_EQ_INT(run_with(g, &conflict, shas[0], shas[8], true, &rep, &err), 0);
	k = &rep.culprits[0];
	T_EQ_INT(k->revert.out.decision, BRULE_NOT_APPLICABLE);
	T_CHECK(strstr(k->revert.out.reason, "not applicable: the revert of") != NULL);
	T_CHECK(strstr(k->revert.out.reason, "does not apply on BAD") != NULL);
	T_EQ_INT(k->answer, BISECT_CULPRIT);
	T_EQ_INT(k->align.out.decision, BRULE_CONFIRMED);
	T_EQ_INT(conflict.ctl_pairs[BISECT_CTL_REVERT], 0);
	bisect_report_free(&rep);

	/* without the controls nothing is asked of them; asking without a
	 * runner of controls is refused */
	struct fake none = { .culprit = 5, .nobuild = -1 };
	T_EQ_INT(run_with(g, &none, shas[0], shas[8], false, &rep, &err), 0);
	T_CHECK(!rep.culprits[0].revert.asked && !rep.culprits[0].align.asked);
	T_EQ_INT(none.ctl_pairs[BISECT_CTL_REVERT] + none.ctl_pairs[BISECT_CTL_ALIGN], 0);
	bisect_report_free(&rep);
	struct bisect_runner bare = { .ctx = &none, .build = fake_build, .measure = fake_measure };
	struct bisect_opts o = { .good = shas[0], .bad = shas[8], .rule = opts, .align = true };
	T_EQ_INT(bisect_run(&kbisect_git_ops, g, &bare, &o, &rep, &err), -EINVAL);
	sb_free(&err);
}

/* The controls' git in a small repository: a revert that applies is a
 * commit (the same at a second asking) whose tree lacks the change; one
 * that conflicts says so; Kconfig symbols are found at a commit. */
static void test_git_controls(const char *dir)
{
	char cmd[1024], shas4[4][KBISECT_SHA_LEN + 1];
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; git init -q c; cd c; g() { git -c user.name=t -c user.email=t@kab \"$@\"; }; "
		 "mkdir lib; printf 'config DEBUG_FORCE_FUNCTION_ALIGN_64B\\n\\tbool \"x\"\\n' > lib/Kconfig.debug; "
		 "echo a > x; g add -A; g commit -qm c0; echo b > x; g commit -qam c1; echo c > x; g commit -qam c2; "
		 "echo y > y; g add y; g commit -qm c3; git rev-list --reverse HEAD > ../shas",
		 dir);
	if (system(cmd) != 0) {
		t_skip("the controls' git", "git could not make the repository");
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s/shas", dir);
	FILE *f = fopen(cmd, "r");
	char line[64];
	for (int i = 0; i < 4 && f && fgets(line, sizeof(line), f); i++)
		snprintf(shas4[i], sizeof(shas4[i]), "%.40s", line);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/c", dir);
	struct kbisect_git g = { .tree = cmd };
	struct strbuf why = { 0 };
	char r1[KBISECT_SHA_LEN + 1], r2[KBISECT_SHA_LEN + 1];
	T_EQ_INT(kbisect_git_revert(&g, shas4[3], shas4[3], r1, &why), 0);
	T_EQ_INT(kbisect_git_revert(&g, shas4[3], shas4[3], r2, &why), 0);
	T_EQ_STR(r1, r2); /* the same commit at every replay */
	char q[1400];
	snprintf(q, sizeof(q), "git -C %s cat-file -e %s:y 2>/dev/null", cmd, r1);
	T_CHECK(system(q) != 0); /* y is gone */
	snprintf(q, sizeof(q), "git -C %s cat-file -e %s:x", cmd, r1);
	T_EQ_INT(system(q), 0);
	/* c1 changed x, c2 changed it again: its revert on c3 conflicts */
	T_EQ_INT(kbisect_git_revert(&g, shas4[1], shas4[3], r1, &why), 1);
	T_CHECK(why.buf && strstr(why.buf, "does not apply on BAD") && strstr(why.buf, "conflicts in x"));
	T_EQ_INT(kbisect_git_has_config(&g, shas4[0], KBISECT_ALIGN_FILE, kbisect_align_symbols[0]), 1);
	T_EQ_INT(kbisect_git_has_config(&g, shas4[0], KBISECT_ALIGN_FILE, kbisect_align_symbols[1]), 0);
	T_EQ_INT(kbisect_git_has_config(&g, shas4[0], KBISECT_ALIGN_FILE, "x; rm"), -EINVAL);
	sb_free(&why);
}

int main(void)
{
	log_quiet = true;
	test_looks();
	test_step();
	test_anchor();
	test_confirm();
	test_controls_rules();
	test_parse();
	char dir[] = "/tmp/kab-test-bisect.XXXXXX", repo[64];
	if (!util_find_program("git", NULL, 0))
		t_skip("the bisection loop over a repository", "no git");
	else if (!mkdtemp(dir))
		t_skip("the bisection loop over a repository", "mkdtemp failed");
	else {
		snprintf(repo, sizeof(repo), "%s/r.git", dir);
		if (!t_make_repo(repo, NC, shas))
			t_skip("the bisection loop over a repository", "git fast-import failed");
		else {
			struct kbisect_git g = { .tree = repo };
			test_loop_inputs(&g);
			test_loop_one(&g);
			test_loop_full(&g);
			test_loop_split(&g);
			test_loop_controls(&g);
			test_git_controls(dir);
		}
		util_remove_tree(dir);
	}
	return t_done("test_bisect");
}
