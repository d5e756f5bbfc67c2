/* bisect_sim: the paired bisection's accuracy, by simulation (issue 27,
 * doc/bisect.md), for tests/stats/check_bisect.sh.
 *
 * kab's bisection (harness/exec/bisect.c, the rules of
 * harness/stats/bisect_rule.c) runs with a simulated runner in place of
 * builds and boots: per-run log-normal noise, a per-boot offset, a slow
 * drift that pairing cancels, rare slow outliers, commits that do not
 * build (1%), one or two culprits, and a per-commit layout offset that is
 * not cumulative. git's choices come from real `git bisect` in a generated
 * repository (git fast-import: one commit a file) for a subset, and for
 * the whole grid from an in-process chooser written to answer as git
 * 2.39's bisect.c does on a linear history (the halfway rule, and with
 * skips the distance order and skip_away's pseudo-random step); on the
 * subset both run side by side and must agree at every step.
 *
 * Prints the table over noise CoV, effect and N (right culprit, wrong
 * culprit, no answer, boots and builds) with the naive rule (one run a
 * commit, a threshold halfway between GOOD's and BAD's single runs)
 * beside it, and checks the floors. Then the optional controls of a
 * confirmed culprit (N 64, over noise and effect): forced alignment of a
 * real culprit and of one whose step is the code's layout (gone when
 * both sides are built aligned), the revert on BAD of a real culprit and
 * of one whose revert gives none or half of its step back; their table
 * and floors. Ends with "N passed, N failed, N skipped". Usage:
 * bisect_sim [--reps M] [--no-git] [--seed S] */
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/base/util.h"
#include "harness/exec/bisect.h"
#include "harness/stats/bisect_rule.h"
#include "kernels/bisect_git.h"

#define SHA_SZ (KBISECT_SHA_LEN + 1)
#define MAX_CULPRITS 2
/* the model's shares of the noise CoV (their squares add to 1) */
#define RUN_SHARE 0.8
#define BOOT_SHARE 0.6
#define DRIFT_SHARE 0.3   /* per pair, a random walk: pairing cancels it */
#define LAYOUT_SHARE 0.25 /* per commit, fixed: no number of pairs averages it away */
#define OUTLIER_P 0.01
#define NOBUILD_P 0.01

static int passed, failed, skipped;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAILED");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	ok ? passed++ : failed++;
}

/* ---- the world: N commits after GOOD, their true levels ---- */

struct world {
	unsigned n;          /* commits 1..n after GOOD (0); BAD is n */
	char (*sha)[SHA_SZ]; /* [0..n] */
	bool synthetic;      /* sha = 8 random hex digits, then the index: found without a search */
	double *level;       /* ln of the true value: culprits' effects and the layout */
	bool *nobuild;
	unsigned culprit[MAX_CULPRITS], n_culprits;
	double cov;
	gsl_rng *rng;
	double drift; /* the machine's slow state, walks a step a pair */
	unsigned long pairs;
	/* the controls' builds (drawn in control scenarios only, so that the
	 * grid's worlds are as they were): each commit built with forced
	 * alignment, and BAD with a commit reverted (culprit[0], or any other) */
	double *aligned;
	double revert_culprit, revert_other;
	unsigned long ctl_pairs[BISECT_CTL_N]; /* this bisection's, by control */
};

static long world_index(const struct world *w, const char *sha)
{
	if (w->synthetic) {
		uint64_t v;
		char tail[16];
		snprintf(tail, sizeof(tail), "%.8s", sha + 32);
		/* the index is in the last 8 digits, in hex */
		char *end;
		errno = 0;
		v = strtoull(tail, &end, 16);
		return errno || *end || v > w->n || strcmp(w->sha[v], sha) ? -1 : (long)v;
	}
	for (unsigned i = 0; i <= w->n; i++)
		if (strcmp(w->sha[i], sha) == 0)
			return i;
	return -1;
}

struct scenario {
	unsigned n;
	double cov, effect[MAX_CULPRITS]; /* effects as fractions (0.05: 5% slower) */
	unsigned n_culprits;
	unsigned culprit[MAX_CULPRITS]; /* 0: drawn */
	bool nobuild_beside;            /* the culprit's parent and child do not build */
	/* the controls (doc/bisect.md, "Controls") */
	bool controls;      /* draw the aligned builds and the revert */
	bool layout_only;   /* culprit 0's step is the code's layout: gone with forced alignment */
	double revert_back; /* the share of culprit 0's step its revert on BAD gives back */
};

/* The culprits' steps (ln) at commit i; without culprit 0's when it is
 * the layout's. */
static double steps_at(const struct world *w, const struct scenario *sc, unsigned i, bool real_only)
{
	double step = 0;
	for (unsigned k = 0; k < w->n_culprits; k++)
		if (i >= w->culprit[k] && !(real_only && k == 0 && sc->layout_only))
			step += log1p(-sc->effect[k]);
	return step;
}

/* The controls' builds. Built aligned, a commit has the culprits' real
 * steps and a layout offset of its own, as small as an unaligned build's
 * (the alignment is a layout too, not none): culprit 0's step is gone
 * when it is the layout's. BAD with culprit 0 reverted is BAD less the
 * share of its step the revert gives back, in a build with a layout of
 * its own; with another commit reverted, BAD in such a build. */
static void controls_draw(struct world *w, const struct scenario *sc)
{
	double base = log(1000);
	for (unsigned i = 0; i <= w->n; i++)
		w->aligned[i] = base + steps_at(w, sc, i, true) + gsl_ran_gaussian(w->rng, LAYOUT_SHARE * w->cov);
	double bad = base + steps_at(w, sc, w->n, false);
	w->revert_other = bad + gsl_ran_gaussian(w->rng, LAYOUT_SHARE * w->cov);
	w->revert_culprit = w->revert_other - sc->revert_back * log1p(-sc->effect[0]);
}

/* Draws the world of one bisection: levels, culprits, commits that do not build. */
static void world_draw(struct world *w, const struct scenario *sc)
{
	w->cov = sc->cov / 100;
	w->n_culprits = sc->n_culprits;
	w->drift = 0;
	for (unsigned k = 0; k < sc->n_culprits; k++)
		w->culprit[k] = sc->culprit[k] ? sc->culprit[k] : 1 + (unsigned)gsl_rng_uniform_int(w->rng, w->n);
	for (unsigned i = 0; i <= w->n; i++) {
		double step = 0;
		for (unsigned k = 0; k < w->n_culprits; k++)
			if (i >= w->culprit[k])
				step += log1p(-sc->effect[k]);
		w->level[i] = log(1000) + step + gsl_ran_gaussian(w->rng, LAYOUT_SHARE * w->cov);
		w->nobuild[i] = i > 0 && i < w->n && gsl_rng_uniform(w->rng) < NOBUILD_P;
	}
	/* a culprit that does not build, or whose parent does not, can only
	 * be bracketed, never named: that is a scenario of its own */
	for (unsigned k = 0; k < w->n_culprits; k++)
		w->nobuild[w->culprit[k]] = w->nobuild[w->culprit[k] - 1] = false;
	if (sc->nobuild_beside && w->n_culprits)
		for (unsigned d = 0; d < 2; d++) {
			unsigned c = w->culprit[0] + (d ? 1 : -1);
			if (c > 0 && c < w->n)
				w->nobuild[c] = true;
		}
	if (w->synthetic)
		for (unsigned i = 0; i <= w->n; i++)
			snprintf(w->sha[i], SHA_SZ, "%08lx%024x%08x", gsl_rng_get(w->rng) & 0xffffffffUL, 0, i);
	memset(w->ctl_pairs, 0, sizeof(w->ctl_pairs));
	if (sc->controls)
		controls_draw(w, sc);
}

/* One boot's value of a build whose level (ln) is level: the drift, the
 * boot's offset, the run's noise, now and then a slow outlier. */
static double boot_at(struct world *w, double level)
{
	double x = level + w->drift + gsl_ran_gaussian(w->rng, BOOT_SHARE * w->cov) + gsl_ran_gaussian(w->rng, RUN_SHARE * w->cov);
	if (gsl_rng_uniform(w->rng) < OUTLIER_P)
		x += log(0.6 + 0.3 * gsl_rng_uniform(w->rng));
	return exp(x);
}

static double boot_value(struct world *w, long i)
{
	return boot_at(w, w->level[i]);
}

static int sim_build(void *ctx, const char *sha, struct strbuf *why)
{
	struct world *w = ctx;
	long i = world_index(w, sha);
	if (i < 0)
		return -ENOENT;
	if (!w->nobuild[i])
		return 0;
	sb_printf(why, "make failed (simulated)");
	return 1;
}

static int sim_measure(void *ctx, const char *sha, const char *base, unsigned k, double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct world *w = ctx;
	long i = world_index(w, sha), g = world_index(w, base);
	if (i < 0 || g < 0)
		return -ENOENT;
	for (unsigned p = 0; p < k; p++) {
		w->drift += gsl_ran_gaussian(w->rng, DRIFT_SHARE * w->cov);
		w->pairs++;
		ret_base[p] = boot_value(w, g);
		ret_sha[p] = boot_value(w, i);
	}
	return 0;
}

/* k pairs of a control of commit sha: the revert, BAD with sha reverted
 * against BAD (base); the alignment, sha's parent (base) against sha, both
 * built aligned. */
static int sim_control(void *ctx, enum bisect_control kind, const char *sha, const char *base, unsigned k,
		       double *ret_base, double *ret_sha, struct strbuf *why)
{
	struct world *w = ctx;
	long i = world_index(w, sha), g = world_index(w, base);
	if (i < 0 || g < 0)
		return -ENOENT;
	bool revert = kind == BISECT_CTL_REVERT;
	double la = revert ? ((unsigned)i == w->culprit[0] ? w->revert_culprit : w->revert_other) : w->aligned[g];
	double lb = revert ? w->level[g] : w->aligned[i];
	for (unsigned p = 0; p < k; p++) {
		w->drift += gsl_ran_gaussian(w->rng, DRIFT_SHARE * w->cov);
		w->pairs++;
		ret_base[p] = boot_at(w, la);
		ret_sha[p] = boot_at(w, lb);
	}
	w->ctl_pairs[kind] += k;
	return 0;
}

/* ---- git's choice on a linear history, in process ---- */

struct chooser {
	struct world *w;
	long lo, hi; /* the last good and the first bad commit */
	bool *skipped;
	bool any_skip; /* git sorts by distance as soon as a skip ref exists */
	long *order;
	unsigned skip_away, only_skipped; /* how often those paths ran */
};

/* git's "halfway" short cut: within one of the middle, or 0.1% of it. */
static bool halfway(long weight, long nr)
{
	long diff = 2 * weight - nr;
	return labs(diff) <= 1 || labs(diff) < nr / 1024;
}

/* the pseudo-random numbers and integer square root git's skip_away uses */
static unsigned prn_of(unsigned count)
{
	count = count * 1103515245u + 12345u;
	return (count / 65536) % 32768;
}

static int sqrt_int(int val)
{
	if (!val)
		return 0;
	float x = (float)val, d;
	do {
		float y = (x + (float)val / x) / 2;
		d = y > x ? y - x : x - y;
		x = y;
	} while (d >= 0.5f);
	return (int)x;
}

static struct chooser *sort_ctx;
static long distance(long i)
{
	long n = sort_ctx->hi - sort_ctx->lo, wgt = i - sort_ctx->lo;
	return wgt < n - wgt ? wgt : n - wgt;
}

static int by_distance(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b, dx = distance(x), dy = distance(y);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(sort_ctx->w->sha[x], sort_ctx->w->sha[y]);
}

/* Without skips: the first commit from the oldest up at the halfway
 * point, else the best distance (the oldest of equals). */
static long choose_plain(const struct chooser *c)
{
	long n = c->hi - c->lo, best = c->hi, best_d = -1;
	for (long wgt = 2; wgt <= n; wgt++)
		if (halfway(wgt, n))
			return c->lo + wgt;
	for (long wgt = 1; wgt <= n; wgt++) {
		long d = wgt < n - wgt ? wgt : n - wgt;
		if (d > best_d) {
			best_d = d;
			best = c->lo + wgt;
		}
	}
	return best;
}

static void choose(struct chooser *c, struct kbisect_step *ret)
{
	struct world *w = c->w;
	memset(ret, 0, sizeof(*ret));
	long pick, n = c->hi - c->lo;
	size_t tried = 0;
	if (n <= 0) { /* marks git would refuse: answer the bad end */
		ret->state = KBISECT_FOUND;
		snprintf(ret->sha, SHA_SZ, "%s", w->sha[c->hi]);
		return;
	}
	if (!c->any_skip)
		pick = choose_plain(c);
	else {
		for (long k = 0; k < n; k++)
			c->order[k] = c->lo + 1 + k;
		sort_ctx = c;
		qsort(c->order, (size_t)n, sizeof(*c->order), by_distance);
		pick = c->order[0];
		if (c->skipped[pick]) {
			/* the untested ones in order; the skipped ones are "tried" */
			long *kept = malloc((size_t)n * sizeof(*kept));
			unsigned count = 0;
			for (long k = 0; k < n; k++) {
				if (c->skipped[c->order[k]]) {
					if (tried < KBISECT_MAX_CANDIDATES)
						snprintf(ret->cand[tried], SHA_SZ, "%s", w->sha[c->order[k]]);
					tried++;
				} else
					kept[count++] = c->order[k];
			}
			c->skip_away++;
			unsigned prn = prn_of(count);
			int index = (int)(count * prn / 32768) * sqrt_int((int)prn) / sqrt_int(32768);
			pick = kept[index] != c->hi ? kept[index] : index ? kept[index - 1] : kept[0];
			free(kept);
		}
	}
	if (pick == c->hi && tried) {
		c->only_skipped++;
		ret->state = KBISECT_ONLY_SKIPPED;
		ret->n_cand = tried < KBISECT_MAX_CANDIDATES ? tried + 1 : tried;
		ret->n_cand_total = tried + 1;
		if (tried < KBISECT_MAX_CANDIDATES)
			snprintf(ret->cand[tried], SHA_SZ, "%s", w->sha[c->hi]);
		return;
	}
	ret->state = pick == c->hi ? KBISECT_FOUND : KBISECT_NEXT;
	snprintf(ret->sha, SHA_SZ, "%s", w->sha[pick]);
}

static int ch_resolve(void *ctx, const char *rev, char sha[SHA_SZ], struct strbuf *err)
{
	struct chooser *c = ctx;
	if (world_index(c->w, rev) < 0) {
		sb_printf(err, "unknown revision \"%s\"", rev);
		return -ENOENT;
	}
	snprintf(sha, SHA_SZ, "%s", rev);
	return 0;
}

static int ch_is_ancestor(void *ctx, const char *a, const char *b, struct strbuf *err)
{
	struct chooser *c = ctx;
	return world_index(c->w, a) <= world_index(c->w, b);
}

static int ch_parent(void *ctx, const char *sha, char parent[SHA_SZ], struct strbuf *err)
{
	struct chooser *c = ctx;
	long i = world_index(c->w, sha);
	if (i <= 0)
		return -ENOENT;
	snprintf(parent, SHA_SZ, "%s", c->w->sha[i - 1]);
	return 0;
}

static int ch_describe(void *ctx, const char *sha, struct strbuf *out, struct strbuf *err)
{
	struct chooser *c = ctx;
	sb_printf(out, "%s\tcommit %ld", sha, world_index(c->w, sha));
	return 0;
}

static int ch_start(void *ctx, const char *good, const char *bad, struct kbisect_step *ret, struct strbuf *err)
{
	struct chooser *c = ctx;
	c->lo = world_index(c->w, good);
	c->hi = world_index(c->w, bad);
	c->any_skip = false;
	memset(c->skipped, 0, (c->w->n + 1) * sizeof(*c->skipped));
	choose(c, ret);
	return 0;
}

static int ch_mark(void *ctx, const char *sha, enum kbisect_mark m, struct kbisect_step *ret, struct strbuf *err)
{
	struct chooser *c = ctx;
	long i = world_index(c->w, sha);
	if (i < 0)
		return -ENOENT;
	if (m == KBISECT_GOOD && i > c->lo)
		c->lo = i;
	else if (m == KBISECT_BAD && i < c->hi)
		c->hi = i;
	else if (m == KBISECT_SKIP)
		c->skipped[i] = c->any_skip = true;
	choose(c, ret);
	return 0;
}

static int ch_log(void *ctx, struct strbuf *out, struct strbuf *err)
{
	return 0;
}

static int ch_reset(void *ctx, struct strbuf *err)
{
	return 0;
}

static const struct kbisect_ops chooser_ops = {
	.resolve = ch_resolve,
	.is_ancestor = ch_is_ancestor,
	.parent = ch_parent,
	.describe = ch_describe,
	.start = ch_start,
	.mark = ch_mark,
	.log = ch_log,
	.reset = ch_reset,
};

/* ---- both side by side: git's answer is used, the chooser's compared ---- */

/* git's operations but start and mark, which run both (git first in the
 * struct, so that git's own take it as their kbisect_git) */
struct pairing {
	struct kbisect_git git;
	struct chooser *ch;
	unsigned steps, disagree;
};

static int cmp_sha(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool same_step(struct kbisect_step *a, struct kbisect_step *b)
{
	if (a->state != b->state)
		return false;
	if (a->state != KBISECT_ONLY_SKIPPED)
		return strcmp(a->sha, b->sha) == 0;
	qsort(a->cand, a->n_cand, SHA_SZ, cmp_sha);
	qsort(b->cand, b->n_cand, SHA_SZ, cmp_sha);
	return a->n_cand_total == b->n_cand_total && a->n_cand == b->n_cand && memcmp(a->cand, b->cand, a->n_cand * SHA_SZ) == 0;
}

static void compare_step(struct pairing *p, int r, struct kbisect_step *git, struct kbisect_step *mine)
{
	p->steps++;
	if (r >= 0 && !same_step(git, mine)) {
		p->disagree++;
		struct chooser *c = p->ch;
		fprintf(stderr, "bisect_sim: git chose %d %.12s (%ld), the chooser %d %.12s (%ld); good %ld bad %ld, skipped:",
			git->state, git->sha, world_index(c->w, git->sha), mine->state, mine->sha,
			world_index(c->w, mine->sha), c->lo, c->hi);
		for (long i = c->lo + 1; i < c->hi; i++)
			if (c->skipped[i])
				fprintf(stderr, " %ld", i);
		fprintf(stderr, "\n");
	}
}

/* git's start (bad set) or mark of sha, the chooser's beside it, compared. */
static int both(struct pairing *p, const char *sha, const char *bad, enum kbisect_mark m, struct kbisect_step *ret, struct strbuf *err)
{
	struct kbisect_step mine;
	int r = bad ? kbisect_git_ops.start(&p->git, sha, bad, ret, err) : kbisect_git_ops.mark(&p->git, sha, m, ret, err);
	if (bad)
		ch_start(p->ch, sha, bad, &mine, err);
	else
		ch_mark(p->ch, sha, m, &mine, err);
	compare_step(p, r, ret, &mine);
	return r;
}

static int pr_start(void *ctx, const char *good, const char *bad, struct kbisect_step *ret, struct strbuf *err)
{
	return both(ctx, good, bad, KBISECT_GOOD, ret, err);
}

static int pr_mark(void *ctx, const char *sha, enum kbisect_mark m, struct kbisect_step *ret, struct strbuf *err)
{
	return both(ctx, sha, NULL, m, ret, err);
}

/* ---- outcomes ---- */

struct tally {
	unsigned runs, right, wrong, none, range_holds, both;
	unsigned long boots, builds;
};

static bool is_culprit(const struct world *w, long i)
{
	for (unsigned k = 0; k < w->n_culprits; k++)
		if (w->culprit[k] == (unsigned)i)
			return true;
	return false;
}

/* Counts one bisection's answers: right when every culprit named is a
 * true one and at least one is named; wrong when one named is not. */
static void count(struct tally *t, const struct world *w, const struct bisect_report *rep)
{
	unsigned named = 0, true_named = 0, false_named = 0;
	bool range_holds = false;
	for (size_t i = 0; i < rep->n_culprits; i++) {
		const struct bisect_culprit *k = &rep->culprits[i];
		if (k->answer == BISECT_CULPRIT) {
			named++;
			is_culprit(w, world_index(w, k->sha)) ? true_named++ : false_named++;
		} else if (k->answer == BISECT_RANGE)
			for (size_t j = 0; j < k->range.n_cand; j++)
				range_holds |= is_culprit(w, world_index(w, k->range.cand[j]));
	}
	t->runs++;
	t->wrong += false_named > 0;
	t->right += false_named == 0 && true_named > 0;
	t->none += named == 0;
	t->range_holds += named == 0 && range_holds;
	t->both += false_named == 0 && true_named == w->n_culprits && w->n_culprits > 1;
	t->boots += rep->boots;
	t->builds += rep->builds;
}

static struct bisect_runner sim_runner_of(struct world *w)
{
	return (struct bisect_runner){ .ctx = w, .build = sim_build, .measure = sim_measure, .control = sim_control };
}

static bool verbose;

/* A bisection that did not name the culprit, step by step. */
static void show(const struct world *w, const struct bisect_report *rep)
{
	printf("-- N %u culprit %u: anchor %s: %s\n", w->n, w->culprit[0], brule_decision_name(rep->anchor.decision),
	       rep->anchor.reason);
	for (size_t i = 0; i < rep->n_rows; i++)
		printf("   part %u commit %ld (true %+.2f%%) %s: %s\n", rep->rows[i].part, world_index(w, rep->rows[i].sha),
		       100 * expm1(w->level[world_index(w, rep->rows[i].sha)] - w->level[0]),
		       brule_decision_name(rep->rows[i].out.decision), rep->rows[i].out.reason);
	for (size_t i = 0; i < rep->n_culprits; i++)
		printf("   => %s %ld: %s\n", bisect_answer_name(rep->culprits[i].answer),
		       world_index(w, rep->culprits[i].sha), rep->culprits[i].confirm.reason);
}

/* One bisection of the world with ops and the controls asked into ret;
 * -errno when it could not run. */
static int bisect_world(struct world *w, const struct kbisect_ops *ops, void *vcs, bool revert, bool align, struct bisect_report *ret)
{
	struct bisect_runner run = sim_runner_of(w);
	struct bisect_opts o = { .good = w->sha[0],
				 .bad = w->sha[w->n],
				 .rule = { .dir = DIRECTION_HIGHER, .min_change_pct = -1, .equivalence_pct = -1 },
				 .revert = revert,
				 .align = align };
	struct strbuf err = { 0 };
	int r = bisect_run(ops, vcs, &run, &o, ret, &err);
	if (r < 0)
		fprintf(stderr, "bisect_sim: %s\n", err.buf ? err.buf : strerror(-r));
	sb_free(&err);
	return r;
}

/* One bisection of the world with ops; -errno when it could not run. */
static int bisect_once(struct world *w, const struct kbisect_ops *ops, void *vcs, struct tally *t)
{
	struct bisect_report rep;
	int r = bisect_world(w, ops, vcs, false, false, &rep);
	if (r < 0)
		return r;
	unsigned right0 = t->right;
	count(t, w, &rep);
	if (verbose && t->right == right0)
		show(w, &rep);
	bisect_report_free(&rep);
	return 0;
}

/* The naive rule: one run of GOOD and of BAD, then one run a step, bad
 * when on BAD's side of the halfway threshold, no confirmation. */
static void naive_once(struct world *w, struct chooser *ch, struct tally *t)
{
	struct kbisect_step s;
	struct strbuf err = { 0 };
	double lg = log(boot_value(w, 0)), lb = log(boot_value(w, w->n)), mid = (lg + lb) / 2;
	unsigned long boots = 2, builds = 2;
	ch_start(ch, w->sha[0], w->sha[w->n], &s, &err);
	while (s.state == KBISECT_NEXT) {
		char sha[SHA_SZ]; /* s is the answer's too */
		snprintf(sha, sizeof(sha), "%s", s.sha);
		long i = world_index(w, sha);
		enum kbisect_mark m = KBISECT_SKIP;
		builds++;
		if (!w->nobuild[i]) {
			w->drift += gsl_ran_gaussian(w->rng, DRIFT_SHARE * w->cov);
			double x = log(boot_value(w, i));
			boots++;
			m = (x - mid) * (lb - lg) > 0 ? KBISECT_BAD : KBISECT_GOOD;
		}
		ch_mark(ch, sha, m, &s, &err);
	}
	struct bisect_report rep = { .n_culprits = 1, .boots = (unsigned)boots, .builds = (unsigned)builds };
	rep.culprits[0] =
		(struct bisect_culprit){ .answer = s.state == KBISECT_FOUND ? BISECT_CULPRIT : BISECT_RANGE, .range = s };
	snprintf(rep.culprits[0].sha, SHA_SZ, "%s", s.sha);
	count(t, w, &rep);
}

/* ---- worlds ---- */

static int world_alloc(struct world *w, unsigned n, bool synthetic, unsigned long seed)
{
	*w = (struct world){ .n = n, .synthetic = synthetic };
	w->sha = calloc(n + 1, SHA_SZ);
	w->level = calloc(n + 1, sizeof(*w->level));
	w->nobuild = calloc(n + 1, sizeof(*w->nobuild));
	w->aligned = calloc(n + 1, sizeof(*w->aligned));
	w->rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!w->sha || !w->level || !w->nobuild || !w->aligned || !w->rng)
		return -ENOMEM;
	gsl_rng_set(w->rng, seed);
	return 0;
}

static void world_free(struct world *w)
{
	free(w->sha);
	free(w->level);
	free(w->nobuild);
	free(w->aligned);
	if (w->rng)
		gsl_rng_free(w->rng);
}

static int chooser_alloc(struct chooser *c, struct world *w)
{
	*c = (struct chooser){ .w = w };
	c->skipped = calloc(w->n + 1, sizeof(*c->skipped));
	c->order = calloc(w->n + 1, sizeof(*c->order));
	return c->skipped && c->order ? 0 : -ENOMEM;
}

static void chooser_free(struct chooser *c)
{
	free(c->skipped);
	free(c->order);
}

/* M bisections of sc with the chooser, kab's rule and the naive one. */
static int run_cell(const struct scenario *sc, unsigned reps, unsigned long seed, struct tally *kab, struct tally *naive)
{
	struct world w;
	struct chooser ch;
	int r = world_alloc(&w, sc->n, true, seed);
	if (r >= 0)
		r = chooser_alloc(&ch, &w);
	for (unsigned i = 0; r >= 0 && i < reps; i++) {
		world_draw(&w, sc);
		r = bisect_once(&w, &chooser_ops, &ch, kab);
		if (r >= 0 && naive)
			naive_once(&w, &ch, naive);
	}
	chooser_free(&ch);
	world_free(&w);
	return r;
}

static double pct(unsigned k, unsigned n)
{
	return n ? 100.0 * k / n : 0;
}

static const double covs[] = { 1, 2, 5 }, effects[] = { 2, 5, 10, 20 };
static const unsigned sizes[] = { 8, 64, 1024 };

static void print_header(void)
{
	printf("%-5s %-6s %-5s | %7s %7s %7s %8s %7s %7s | %7s %7s %7s %7s\n", "cov%", "eff%", "N", "right%", "wrong%",
	       "none%", "range+%", "boots", "builds", "n:right", "n:wrong", "n:boots", "n:built");
}

static void print_row(const char *cov, const char *eff, unsigned n, const struct tally *k, const struct tally *v)
{
	printf("%-5s %-6s %-5u | %7.1f %7.1f %7.1f %8.1f %7.1f %7.1f |", cov, eff, n, pct(k->right, k->runs),
	       pct(k->wrong, k->runs), pct(k->none, k->runs), pct(k->range_holds, k->runs), (double)k->boots / k->runs,
	       (double)k->builds / k->runs);
	if (v)
		printf(" %7.1f %7.1f %7.1f %7.1f", pct(v->right, v->runs), pct(v->wrong, v->runs),
		       (double)v->boots / v->runs, (double)v->builds / v->runs);
	printf("\n");
}

/* The grid, and the floors on it. */
static int grid(unsigned reps, unsigned long seed)
{
	struct tally all = { 0 }, aa_all = { 0 };
	bool floor_right = true;
	print_header();
	for (size_t ci = 0; ci < ARRAY_SIZE(covs); ci++)
		for (size_t ei = 0; ei < ARRAY_SIZE(effects); ei++)
			for (size_t ni = 0; ni < ARRAY_SIZE(sizes); ni++) {
				struct scenario sc = { .n = sizes[ni], .cov = covs[ci], .effect = { effects[ei] / 100 }, .n_culprits = 1 };
				struct tally k = { 0 }, v = { 0 };
				unsigned long s = seed + 1000 * (ci * 100 + ei * 10 + ni);
				if (run_cell(&sc, reps, s, &k, &v) < 0)
					return -EIO;
				char c[16], e[16];
				snprintf(c, sizeof(c), "%g", covs[ci]);
				snprintf(e, sizeof(e), "%g", effects[ei]);
				print_row(c, e, sizes[ni], &k, &v);
				all.runs += k.runs;
				all.wrong += k.wrong;
				if (effects[ei] >= 4 * covs[ci] && pct(k.right, k.runs) < 95) {
					floor_right = false;
					printf("  ^ below the floor: right %.1f%% < 95%% where the effect is >= 4x the noise\n",
					       pct(k.right, k.runs));
				}
			}
	for (size_t ci = 0; ci < ARRAY_SIZE(covs); ci++)
		for (size_t ni = 0; ni < ARRAY_SIZE(sizes); ni++) {
			struct scenario sc = { .n = sizes[ni], .cov = covs[ci] };
			struct tally k = { 0 }, v = { 0 };
			if (run_cell(&sc, reps, seed + 7000 + 10 * ci + ni, &k, &v) < 0)
				return -EIO;
			char c[16];
			snprintf(c, sizeof(c), "%g", covs[ci]);
			print_row(c, "A/A", sizes[ni], &k, &v);
			aa_all.runs += k.runs;
			aa_all.wrong += k.wrong;
		}
	check(floor_right,
	      "right culprit in >= 95%% of bisections in every cell where the effect is >= 4x the noise (%u a cell)", reps);
	check(pct(all.wrong, all.runs) <= 1, "a wrong culprit named in %.2f%% of %u bisections (floor: <= 1%%)",
	      pct(all.wrong, all.runs), all.runs);
	check(pct(aa_all.wrong, aa_all.runs) <= 1, "A/A: a culprit named in %.2f%% of %u bisections (floor: none in >= 99%%)",
	      pct(aa_all.wrong, aa_all.runs), aa_all.runs);
	return 0;
}

/* ---- real git ---- */

/* A repository of n + 1 commits (one file each) made by git fast-import,
 * its shas oldest first into w->sha. */
static int make_repo(const char *dir, struct world *w)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "git init -q --bare %s && git -C %s symbolic-ref HEAD refs/heads/main && git -C %s fast-import --quiet",
		 dir, dir, dir);
	FILE *f = popen(cmd, "w");
	if (!f)
		return -errno;
	for (unsigned i = 0; i <= w->n; i++)
		fprintf(f, "commit refs/heads/main\ncommitter sim <sim@kab> %u +0000\ndata <<EOT\ncommit %u\nEOT\nM 100644 inline f%u\ndata <<EOT\n%u\nEOT\n\n",
			1000000 + i, i, i, i);
	if (pclose(f) != 0)
		return -EIO;
	snprintf(cmd, sizeof(cmd), "git -C %s rev-list --reverse main", dir);
	if (!(f = popen(cmd, "r")))
		return -errno;
	unsigned i = 0;
	char line[64];
	while (i <= w->n && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(w->sha[i++], SHA_SZ, "%s", line);
	}
	return pclose(f) == 0 && i == w->n + 1 ? 0 : -EIO;
}

/* A session whose first bad commit is culprit, each commit skipped with
 * probability 1/3, through both git and the chooser. */
static int random_marks(struct world *w, struct pairing *p, unsigned culprit)
{
	struct kbisect_step s;
	struct strbuf err = { 0 };
	int r = pr_start(p, w->sha[0], w->sha[w->n], &s, &err);
	while (r >= 0 && s.state == KBISECT_NEXT) {
		char sha[SHA_SZ]; /* s is the answer's too */
		snprintf(sha, sizeof(sha), "%s", s.sha);
		long i = world_index(w, sha);
		enum kbisect_mark m = gsl_rng_uniform(w->rng) < 1.0 / 3 ? KBISECT_SKIP
				      : i >= (long)culprit              ? KBISECT_BAD
									: KBISECT_GOOD;
		r = pr_mark(p, sha, m, &s, &err);
	}
	if (r < 0)
		fprintf(stderr, "bisect_sim: %s\n", err.buf ? err.buf : strerror(-r));
	kbisect_git_ops.reset(&p->git, &err);
	sb_free(&err);
	return r;
}

/* Bisections driven by real git with the chooser beside it. */
static int real_git(const char *dir, unsigned long seed)
{
	struct world w;
	struct chooser ch;
	int r = world_alloc(&w, 64, false, seed);
	if (r >= 0)
		r = chooser_alloc(&ch, &w);
	if (r >= 0 && (r = make_repo(dir, &w)) < 0)
		fprintf(stderr, "bisect_sim: could not make the repository in %s\n", dir);
	struct pairing p = { .git = { .tree = dir }, .ch = &ch };
	struct kbisect_ops pairing_ops = kbisect_git_ops;
	pairing_ops.start = pr_start;
	pairing_ops.mark = pr_mark;
	const struct scenario cases[] = {
		{ .n = 64, .cov = 2, .effect = { 0.10 }, .n_culprits = 1 },
		{ .n = 64, .cov = 1, .effect = { 0.05 }, .n_culprits = 1, .culprit = { 41 }, .nobuild_beside = true },
		{ .n = 64, .cov = 1, .effect = { 0.05, 0.05 }, .n_culprits = 2, .culprit = { 20, 44 } },
		{ .n = 64, .cov = 2 },
	};
	const char *names[] = { "2% noise, 10% effect", "skipped commits beside the culprit", "two culprits", "A/A" };
	double t0 = util_mono_now();
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(cases); i++) {
		struct tally t = { 0 };
		world_draw(&w, &cases[i]);
		r = bisect_once(&w, &pairing_ops, &p, &t);
		printf("real git: %-36s right %u wrong %u none %u range holding it %u both %u; %lu boots, %lu builds\n",
		       names[i], t.right, t.wrong, t.none, t.range_holds, t.both, t.boots, t.builds);
	}
	/* sessions marked at random, a third of the commits skipped: git's
	 * distance order, skip_away and "only skipped commits left" */
	for (unsigned i = 0; r >= 0 && i < 3; i++)
		r = random_marks(&w, &p, 2 + (unsigned)gsl_rng_uniform_int(w.rng, 62));
	double dt = util_mono_now() - t0;
	if (r >= 0)
		check(p.steps > 0 && p.disagree == 0 && ch.skip_away > 0 && ch.only_skipped > 0,
		      "the chooser agrees with git's bisect at %u of %u steps (%zu bisections, 3 sessions of random marks; skip_away %u times, only skipped left %u; %.1f s of git)",
		      p.steps - p.disagree, p.steps, ARRAY_SIZE(cases), ch.skip_away, ch.only_skipped, dt);
	chooser_free(&ch);
	world_free(&w);
	return r;
}

/* ---- scenarios checked on their own ---- */

static int scenarios(unsigned reps, unsigned long seed)
{
	struct tally beside = { 0 }, two = { 0 };
	struct scenario sk = { .n = 64, .cov = 1, .effect = { 0.05 }, .n_culprits = 1, .nobuild_beside = true };
	struct scenario tw = { .n = 64, .cov = 1, .effect = { 0.05, 0.05 }, .n_culprits = 2 };
	struct world w;
	struct chooser ch;
	int r = world_alloc(&w, 64, true, seed);
	if (r >= 0)
		r = chooser_alloc(&ch, &w);
	for (unsigned i = 0; r >= 0 && i < reps; i++) {
		sk.culprit[0] = 2 + (unsigned)gsl_rng_uniform_int(w.rng, 60);
		world_draw(&w, &sk);
		r = bisect_once(&w, &chooser_ops, &ch, &beside);
	}
	for (unsigned i = 0; r >= 0 && i < reps; i++) {
		/* two culprits at least 8 commits apart, so a step can fall between */
		tw.culprit[0] = 1 + (unsigned)gsl_rng_uniform_int(w.rng, 40);
		tw.culprit[1] = tw.culprit[0] + 8 + (unsigned)gsl_rng_uniform_int(w.rng, 64 - 8 - tw.culprit[0] + 1);
		world_draw(&w, &tw);
		r = bisect_once(&w, &chooser_ops, &ch, &two);
	}
	chooser_free(&ch);
	world_free(&w);
	if (r < 0)
		return r;
	printf("skipped commits beside the culprit (N 64, 1%% noise, 5%% effect): culprit named %u, range holding it %u, other %u, wrong %u of %u\n",
	       beside.right, beside.range_holds, beside.runs - beside.right - beside.range_holds, beside.wrong, beside.runs);
	printf("two culprits (N 64, 1%% noise, 5%% + 5%%): both named %u, one %u, wrong %u of %u; %.1f boots, %.1f builds\n",
	       two.both, two.right - two.both, two.wrong, two.runs, (double)two.boots / two.runs, (double)two.builds / two.runs);
	check(beside.wrong == 0 && beside.right + beside.range_holds >= beside.runs * 95 / 100,
	      "a culprit beside skipped commits: named or in the range given in %.1f%% (floor 95%%), wrong in %u",
	      pct(beside.right + beside.range_holds, beside.runs), beside.wrong);
	check(two.wrong == 0 && pct(two.both, two.runs) >= 90, "two culprits both named in %.1f%% of %u (floor 90%%), a wrong one in %u",
	      pct(two.both, two.runs), two.runs, two.wrong);
	return 0;
}

/* ---- the controls ---- */

/* What the controls said of the planted culprit, where the bisection
 * named it and confirmed it against its parent (found). */
struct ctl_tally {
	unsigned runs, found, wrong;
	unsigned rev, rev_conf, rev_unconf;
	unsigned al, al_layout, al_conf, al_undecided;
	unsigned long rev_pairs, al_pairs;
};

static void ctl_count(struct ctl_tally *t, const struct world *w, const struct bisect_report *rep)
{
	t->runs++;
	for (size_t i = 0; i < rep->n_culprits; i++) {
		const struct bisect_culprit *k = &rep->culprits[i];
		if (k->confirm.decision != BRULE_CONFIRMED)
			continue;
		if (world_index(w, k->sha) != (long)w->culprit[0]) {
			t->wrong++;
			continue;
		}
		t->found++;
		if (k->revert.asked) {
			t->rev++;
			t->rev_conf += k->revert.out.decision == BRULE_CONFIRMED;
			t->rev_unconf += k->revert.out.decision == BRULE_UNCONFIRMED;
			t->rev_pairs += w->ctl_pairs[BISECT_CTL_REVERT];
		}
		if (k->align.asked) {
			t->al++;
			t->al_layout += k->align.out.decision == BRULE_LAYOUT;
			t->al_conf += k->align.out.decision == BRULE_CONFIRMED;
			t->al_undecided += k->align.out.decision == BRULE_UNDECIDED;
			t->al_pairs += w->ctl_pairs[BISECT_CTL_ALIGN];
		}
	}
}

/* M bisections of sc (N 64) with the controls asked. */
static int ctl_cell(const struct scenario *sc, bool revert, bool align, unsigned reps, unsigned long seed, struct ctl_tally *t)
{
	struct world w;
	struct chooser ch;
	int r = world_alloc(&w, sc->n, true, seed);
	if (r >= 0)
		r = chooser_alloc(&ch, &w);
	for (unsigned i = 0; r >= 0 && i < reps; i++) {
		struct bisect_report rep;
		world_draw(&w, sc);
		if ((r = bisect_world(&w, &chooser_ops, &ch, revert, align, &rep)) < 0)
			break;
		ctl_count(t, &w, &rep);
		bisect_report_free(&rep);
	}
	chooser_free(&ch);
	world_free(&w);
	return r;
}

static void ctl_sum(struct ctl_tally *to, const struct ctl_tally *t)
{
	to->runs += t->runs;
	to->found += t->found;
	to->wrong += t->wrong;
	to->rev += t->rev;
	to->rev_conf += t->rev_conf;
	to->rev_unconf += t->rev_unconf;
	to->al += t->al;
	to->al_layout += t->al_layout;
	to->al_conf += t->al_conf;
	to->al_undecided += t->al_undecided;
	to->rev_pairs += t->rev_pairs;
	to->al_pairs += t->al_pairs;
}

/* boots a control cost where it ran */
static double ctl_boots(unsigned long pairs, unsigned n)
{
	return n ? 2.0 * (double)pairs / n : 0;
}

enum { CTL_REAL, CTL_LAYOUT, CTL_NONE_BACK, CTL_HALF_BACK, CTL_KINDS };
/* the share of the culprit's step its revert on BAD gives back, by world */
static const double revert_back[CTL_KINDS] = { 1, 1, 0, 0.5 };

/* Over noise and effect, N 64, four worlds a cell: a real culprit (both
 * controls), the culprit's step the code's layout (alignment), and a
 * culprit whose revert on BAD gives none or half of its step back (an
 * interaction the revert does not undo: the revert). Floors on them. */
static int controls(unsigned reps, unsigned long seed)
{
	struct ctl_tally sum[CTL_KINDS] = { 0 }, sum4[CTL_KINDS] = { 0 },
			 cells[ARRAY_SIZE(covs)][ARRAY_SIZE(effects)][CTL_KINDS] = { 0 };
	bool floor_layout = true;
	for (size_t ci = 0; ci < ARRAY_SIZE(covs); ci++)
		for (size_t ei = 0; ei < ARRAY_SIZE(effects); ei++)
			for (unsigned kind = 0; kind < CTL_KINDS; kind++) {
				struct scenario sc = { .n = 64,
						       .cov = covs[ci],
						       .effect = { effects[ei] / 100 },
						       .n_culprits = 1,
						       .controls = true,
						       .layout_only = kind == CTL_LAYOUT,
						       .revert_back = revert_back[kind] };
				struct ctl_tally *t = &cells[ci][ei][kind];
				unsigned long s = seed + 100 * ci + 10 * ei + kind;
				if (ctl_cell(&sc, kind != CTL_LAYOUT, kind == CTL_REAL || kind == CTL_LAYOUT, reps, s, t) < 0)
					return -EIO;
				ctl_sum(&sum[kind], t);
				if (effects[ei] >= 4 * covs[ci])
					ctl_sum(&sum4[kind], t);
			}
	printf("controls, N 64, %u bisections a cell and world; of the planted culprit found (confirmed against its parent):\n", reps);
	printf("%-5s %-5s %-3s | %-33s | %-39s\n", "", "", "", "real culprit: forced alignment", "layout-only culprit: forced alignment");
	printf("%-5s %-5s %-3s | %5s %8s %7s %10s | %5s %8s %6s %7s %7s\n", "cov%", "eff%", ">4x", "found", "layout%",
	       "undec%", "boots", "found", "layout%", "kept%", "undec%", "boots");
	for (size_t ci = 0; ci < ARRAY_SIZE(covs); ci++)
		for (size_t ei = 0; ei < ARRAY_SIZE(effects); ei++) {
			const struct ctl_tally *r = &cells[ci][ei][CTL_REAL], *l = &cells[ci][ei][CTL_LAYOUT];
			bool x4 = effects[ei] >= 4 * covs[ci];
			printf("%-5g %-5g %-3s | %5u %8.1f %7.1f %10.1f | %5u %8.1f %6.1f %7.1f %7.1f\n", covs[ci],
			       effects[ei], x4 ? "yes" : "", r->al, pct(r->al_layout, r->al), pct(r->al_undecided, r->al),
			       ctl_boots(r->al_pairs, r->al), l->al, pct(l->al_layout, l->al), pct(l->al_conf, l->al),
			       pct(l->al_undecided, l->al), ctl_boots(l->al_pairs, l->al));
			if (x4 && (l->al == 0 || pct(l->al_layout, l->al) < 90)) {
				floor_layout = false;
				printf("  ^ below the floor: a layout-only culprit labelled layout-sensitive in %.1f%% < 90%%\n",
				       pct(l->al_layout, l->al));
			}
		}
	printf("%-5s %-5s %-3s | %-26s | %-17s | %-17s\n", "", "", "", "real culprit: revert", "none back: revert", "half back: revert");
	printf("%-5s %-5s %-3s | %5s %6s %7s %5s | %5s %7s %3s | %5s %7s %3s\n", "cov%", "eff%", ">4x", "found",
	       "conf%", "unconf%", "boots", "found", "unconf%", "boots", "found", "unconf%", "boots");
	for (size_t ci = 0; ci < ARRAY_SIZE(covs); ci++)
		for (size_t ei = 0; ei < ARRAY_SIZE(effects); ei++) {
			const struct ctl_tally *r = &cells[ci][ei][CTL_REAL], *z = &cells[ci][ei][CTL_NONE_BACK],
					       *h = &cells[ci][ei][CTL_HALF_BACK];
			printf("%-5g %-5g %-3s | %5u %6.1f %7.1f %5.1f | %5u %7.1f %5.1f | %5u %7.1f %5.1f\n", covs[ci],
			       effects[ei], effects[ei] >= 4 * covs[ci] ? "yes" : "", r->rev, pct(r->rev_conf, r->rev),
			       pct(r->rev_unconf, r->rev), ctl_boots(r->rev_pairs, r->rev), z->rev,
			       pct(z->rev_unconf, z->rev), ctl_boots(z->rev_pairs, z->rev), h->rev,
			       pct(h->rev_unconf, h->rev), ctl_boots(h->rev_pairs, h->rev));
		}
	/* the layout of BAD alone: every step good, BAD named against its parent */
	struct scenario at_bad = {
		.n = 64, .cov = 2, .effect = { 0.10 }, .n_culprits = 1, .culprit = { 64 }, .controls = true, .layout_only = true
	};
	struct ctl_tally b = { 0 };
	if (ctl_cell(&at_bad, false, true, reps, seed + 500, &b) < 0)
		return -EIO;
	printf("layout of BAD alone (N 64, 2%% noise, 10%%): BAD found %u of %u, labelled layout-sensitive %.1f%%, undecided %.1f%%, %.1f boots\n",
	       b.al, b.runs, pct(b.al_layout, b.al), pct(b.al_undecided, b.al), ctl_boots(b.al_pairs, b.al));
	unsigned wrong = 0, runs = 0;
	for (unsigned kind = 0; kind < CTL_KINDS; kind++) {
		wrong += sum[kind].wrong;
		runs += sum[kind].runs;
	}
	const struct ctl_tally *r = &sum[CTL_REAL], *r4 = &sum4[CTL_REAL], *z4 = &sum4[CTL_NONE_BACK];
	check(r->al > 0 && pct(r->al_layout, r->al) <= 1,
	      "alignment: a real culprit labelled layout-sensitive in %.2f%% of %u (floor: <= 1%%), undecided in %.2f%%",
	      pct(r->al_layout, r->al), r->al, pct(r->al_undecided, r->al));
	check(floor_layout, "alignment: a layout-only culprit labelled layout-sensitive in >= 90%% in every cell where it is >= 4x the noise (%.1f%% of %u in all)",
	      pct(sum4[CTL_LAYOUT].al_layout, sum4[CTL_LAYOUT].al), sum4[CTL_LAYOUT].al);
	check(b.al >= b.runs * 95 / 100 && pct(b.al_layout, b.al) >= 90,
	      "alignment: the layout of BAD alone found in %u of %u and labelled layout-sensitive in %.1f%% (floors: 95%%, 90%%)",
	      b.al, b.runs, pct(b.al_layout, b.al));
	check(r4->rev > 0 && pct(r4->rev_conf, r4->rev) >= 99,
	      "revert: a real culprit stays confirmed in %.2f%% of %u where it is >= 4x the noise (floor: >= 99%%; %.2f%% of %u in all)",
	      pct(r4->rev_conf, r4->rev), r4->rev, pct(r->rev_conf, r->rev), r->rev);
	check(z4->rev > 0 && pct(z4->rev_unconf, z4->rev) >= 99,
	      "revert: a culprit whose revert gives nothing back unconfirmed in %.2f%% of %u where it is >= 4x the noise (floor: >= 99%%)",
	      pct(z4->rev_unconf, z4->rev), z4->rev);
	printf("controls: half back unconfirmed in %.1f%% of %u where the culprit is >= 4x the noise; a wrong culprit confirmed in %u of %u bisections\n",
	       pct(sum4[CTL_HALF_BACK].rev_unconf, sum4[CTL_HALF_BACK].rev), sum4[CTL_HALF_BACK].rev, wrong, runs);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned reps = 100;
	unsigned long seed = 27;
	bool git = true;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--no-git") == 0)
			git = false;
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else {
			fprintf(stderr, "usage: bisect_sim [--reps M] [--seed S] [--no-git]\n");
			return 2;
		}
	}
	log_quiet = true;
	double t0 = util_mono_now();
	int r = grid(reps, seed);
	double t1 = util_mono_now();
	printf("grid: %.1f s for %u bisections a cell\n", t1 - t0, reps);
	if (r >= 0)
		r = scenarios(reps, seed + 9000);
	double t2 = util_mono_now();
	if (r >= 0)
		r = controls(reps, seed + 20000);
	if (r >= 0)
		printf("controls: %.1f s for %u bisections a cell and world\n", util_mono_now() - t2, reps);
	if (r >= 0 && git) {
		char dir[] = "/tmp/kab-bisect-sim.XXXXXX";
		if (!mkdtemp(dir))
			return 1;
		char repo[64];
		snprintf(repo, sizeof(repo), "%s/r.git", dir);
		r = real_git(repo, seed + 9500);
		util_remove_tree(dir);
	}
	if (!git) {
		printf("  skip real git against the chooser: --no-git\n");
		skipped++;
	}
	if (r < 0)
		failed++;
	printf("bisect_sim: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
