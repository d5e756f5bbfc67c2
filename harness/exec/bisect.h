/* A paired statistical bisection (doc/bisect.md): the anchor (GOOD
 * against BAD, decided or refused), then git's own next commit built and
 * compared against GOOD until git names the first bad commit, a split
 * step cutting the range in two parts bisected each, and every culprit
 * confirmed against its parent. Builds and measurements come from a
 * runner (the executor's real builds and ABBA boots, or the simulation's
 * model), git's choices from a kbisect_ops table (git in a clone, or the
 * simulation's chooser); every measurement is kept by commit and base, so
 * nothing is built or measured twice. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "harness/base/util.h"
#include "harness/stats/bisect_rule.h"
#include "kernels/bisect_git.h"

/* Splits a bisection makes at most: the whole range and two parts a
 * split, and a culprit (or range) for each part not split again. */
#define BISECT_MAX_SPLITS 3
#define BISECT_MAX_PARTS (1 + 2 * BISECT_MAX_SPLITS)
#define BISECT_MAX_CULPRITS (1 + BISECT_MAX_SPLITS)

/* What a runner returns when it has no answer yet (a runner that answers
 * from what was recorded, kabd's: the step job that would give it is
 * queued or running): bisect_run stops there and says what it waits for. */
#define BISECT_PENDING 2
/* What a runner returns for a control that cannot be made (the revert
 * does not apply on BAD; the tree has no option that forces alignment):
 * reported as such, never a failure of the bisection. */
#define BISECT_NOT_APPLICABLE 3

/* The optional controls of a confirmed culprit (doc/bisect.md,
 * "Controls"): none is a step's or a confirmation's comparison. */
enum bisect_control { BISECT_CTL_NONE, BISECT_CTL_REVERT, BISECT_CTL_ALIGN };
#define BISECT_CTL_N (BISECT_CTL_ALIGN + 1)
const char *bisect_control_name(enum bisect_control k); /* "none", "revert", "align" */
int bisect_control_parse(const char *s, enum bisect_control *ret);

struct bisect_runner {
	void *ctx;
	/* Builds sha: 0 built, 1 it does not build (why says so),
	 * BISECT_PENDING not known yet, -errno an error that ends the
	 * bisection. */
	int (*build)(void *ctx, const char *sha, struct strbuf *why);
	/* k more pairs of sha against base (paired, ABBA): base's values in
	 * ret_base[0..k), sha's in ret_sha (NAN: a run that gave none). 0; 1
	 * when sha cannot be measured (no boot, a missed expect: why says
	 * so, the commit is skipped); BISECT_PENDING when they are not known
	 * yet; -errno ends the bisection. */
	int (*measure)(void *ctx, const char *sha, const char *base, unsigned k, double *ret_base, double *ret_sha,
		       struct strbuf *why);
	/* k more pairs of a control of the confirmed culprit sha, as measure
	 * does: revert: BAD with sha reverted (ret_base) against BAD (base,
	 * ret_sha); align: sha's parent (base, ret_base) against sha, both
	 * built with alignment forced. Also BISECT_NOT_APPLICABLE when the
	 * control cannot be made (why says why). On 0 why may say what the
	 * control was (the revert's commit, the options forced): the report
	 * keeps it. NULL: no runner of controls (asking for one: -EINVAL). */
	int (*control)(void *ctx, enum bisect_control kind, const char *sha, const char *base, unsigned k,
		       double *ret_base, double *ret_sha, struct strbuf *why);
};

struct bisect_opts {
	const char *good, *bad; /* revisions */
	struct brule_opts rule;
	/* the controls a confirmed culprit gets (bisect.revert, bisect.align) */
	bool revert, align;
};

/* One step: git's commit, what kab decided and the mark git got. */
struct bisect_row {
	char sha[KBISECT_SHA_LEN + 1];
	unsigned part;          /* 0: the whole range; splits number the parts */
	struct brule_out out;   /* decision UNDECIDED with the reason for a commit that did not build or run */
	enum kbisect_mark mark; /* what git was told (none for a split: the part ends there) */
	bool marked;
};

enum bisect_answer {
	BISECT_CULPRIT,     /* first bad commit, confirmed against its parent */
	BISECT_UNCONFIRMED, /* git's first bad commit, not confirmed (why in confirm.reason) */
	BISECT_RANGE,       /* only skipped commits left: it is one of range.cand */
	BISECT_LAYOUT,      /* confirmed, but its effect vanishes with forced alignment: the code's layout */
};

/* A control's outcome: asked, its comparison (decision NOT_APPLICABLE with
 * the reason when it could not be made, UNDECIDED "not measured: ..."
 * when its step job failed), and what it was. */
struct bisect_ctl {
	bool asked;
	struct brule_out out;
	char base[KBISECT_SHA_LEN + 1]; /* its comparison: the culprit against base (BAD, or the parent) */
	char note[192];
};

struct bisect_culprit {
	enum bisect_answer answer;
	unsigned part;
	char sha[KBISECT_SHA_LEN + 1], parent[KBISECT_SHA_LEN + 1];
	struct brule_span span; /* the part's levels against GOOD */
	struct brule_out confirm;
	struct bisect_ctl revert, align; /* asked only for a culprit confirmed against its parent */
	struct kbisect_step range;
};

/* What a stopped bisection waits for: k more pairs of sha against base
 * (for a build the runner did not know: the first look's pairs of the
 * comparison that build is for, which builds it). */
struct bisect_request {
	char sha[KBISECT_SHA_LEN + 1], base[KBISECT_SHA_LEN + 1];
	unsigned k;
	bool build; /* the runner did not know whether sha builds */
	enum bisect_control control; /* a control's pairs (sha: the culprit) */
};

struct bisect_report {
	char good[KBISECT_SHA_LEN + 1], bad[KBISECT_SHA_LEN + 1];
	bool pending;               /* bisect_run returned BISECT_PENDING */
	struct bisect_request wait; /* then: what it waits for */
	struct brule_out anchor; /* REFUSED: nothing else was done */
	struct bisect_row *rows;
	size_t n_rows, cap_rows;
	struct bisect_culprit culprits[BISECT_MAX_CULPRITS];
	size_t n_culprits;
	unsigned builds, boots, parts;
	struct strbuf log; /* git bisect log of each part, one after the other */
};

/* Bisects o->good..o->bad. 0 with ret filled (a refused anchor
 * included: ret->anchor.decision says so); BISECT_PENDING when the runner
 * had no answer yet: ret holds the steps so far and ret->wait the request
 * (the caller frees ret; git's session is reset, and a later call with the
 * same runner, which knows more, replays the same steps); -errno with err saying what
 * and where for a revision git does not know, a GOOD that is not an
 * ancestor of BAD, GOOD and BAD the same commit, a build of GOOD or BAD
 * that fails, or an error of the runner or of git. */
int bisect_run(const struct kbisect_ops *ops, void *vcs, const struct bisect_runner *runner,
	       const struct bisect_opts *o, struct bisect_report *ret, struct strbuf *err);
void bisect_report_free(struct bisect_report *r);
const char *bisect_answer_name(enum bisect_answer a); /* "culprit", "unconfirmed", "range", "layout-sensitive" */
