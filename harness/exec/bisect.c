/* The bisection's loop: the anchor, the parts of the range each bisected
 * with git's own choices, the culprits confirmed; builds and measurements
 * kept by commit (and base) so that none is made twice. */
#include "harness/exec/bisect.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct meas {
	enum bisect_control kind;
	char sha[KBISECT_SHA_LEN + 1], base[KBISECT_SHA_LEN + 1];
	double *a, *b;
	size_t n, cap;
	bool failed, not_applicable;
	char why[192];
	char note[192]; /* a control's: what it was */
};

struct built {
	char sha[KBISECT_SHA_LEN + 1];
	bool failed;
	char why[192];
};

struct part {
	char good[KBISECT_SHA_LEN + 1], bad[KBISECT_SHA_LEN + 1];
	struct brule_span span;
};

struct bctx {
	const struct kbisect_ops *ops;
	void *vcs;
	const struct bisect_runner *run;
	const struct bisect_opts *o;
	struct bisect_report *rep;
	struct strbuf *err;
	struct meas *m;
	size_t n_m, cap_m;
	struct built *b;
	size_t n_b, cap_b;
	struct part parts[BISECT_MAX_PARTS];
	size_t n_parts;
};

static const char *const answer_words[] = { "culprit", "unconfirmed", "range", "layout-sensitive" };
static const char *const control_words[] = { "none", "revert", "align" };

/* The runner had no answer: what the bisection waits for is kept in the
 * report, and -EAGAIN unwinds the loop to bisect_run (never an error). */
static int wait_for(struct bctx *c, enum bisect_control kind, const char *sha, const char *base, unsigned k, bool is_build)
{
	struct bisect_request *w = &c->rep->wait;
	c->rep->pending = true;
	*w = (struct bisect_request){ .k = k, .build = is_build, .control = kind };
	snprintf(w->sha, sizeof(w->sha), "%s", sha);
	snprintf(w->base, sizeof(w->base), "%s", base);
	return -EAGAIN;
}

const char *bisect_answer_name(enum bisect_answer a)
{
	return util_word_name(answer_words, (int)ARRAY_SIZE(answer_words), (int)a);
}

const char *bisect_control_name(enum bisect_control k)
{
	return util_word_name(control_words, (int)ARRAY_SIZE(control_words), (int)k);
}

int bisect_control_parse(const char *s, enum bisect_control *ret)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(control_words); i++)
		if (strcmp(s, control_words[i]) == 0) {
			*ret = (enum bisect_control)i;
			return 0;
		}
	return -EINVAL;
}

/* sha built, once: 0 built, 1 it does not build (*ret_why), -errno.
 * for_sha against for_base is the comparison the build is for: what a
 * bisection waits for when the runner does not know yet. */
static int build(struct bctx *c, const char *sha, const char *for_sha, const char *for_base, const char **ret_why)
{
	for (size_t i = 0; i < c->n_b; i++)
		if (strcmp(c->b[i].sha, sha) == 0) {
			*ret_why = c->b[i].why;
			return c->b[i].failed;
		}
	if (util_grow(c->b, c->cap_b, c->n_b + 1, 16) < 0)
		return -ENOMEM;
	struct built *b = &c->b[c->n_b];
	*b = (struct built){ 0 };
	snprintf(b->sha, sizeof(b->sha), "%s", sha);
	struct strbuf why = { 0 };
	int r = c->run->build(c->run->ctx, sha, &why);
	if (r == BISECT_PENDING) {
		sb_free(&why);
		return wait_for(c, BISECT_CTL_NONE, for_sha, for_base, brule_next_look(0, &c->o->rule), true);
	}
	if (r >= 0) {
		c->n_b++;
		c->rep->builds++;
		b->failed = r > 0;
		snprintf(b->why, sizeof(b->why), "%s", why.buf ? why.buf : "the build failed");
		*ret_why = b->why;
	} else
		sb_printf(c->err, "building %.12s: %s", sha, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r < 0 ? r : b->failed;
}

static struct meas *meas_get(struct bctx *c, enum bisect_control kind, const char *sha, const char *base)
{
	for (size_t i = 0; i < c->n_m; i++)
		if (c->m[i].kind == kind && strcmp(c->m[i].sha, sha) == 0 && strcmp(c->m[i].base, base) == 0)
			return &c->m[i];
	if (util_grow(c->m, c->cap_m, c->n_m + 1, 16) < 0)
		return NULL;
	struct meas *m = &c->m[c->n_m++];
	*m = (struct meas){ .kind = kind };
	snprintf(m->sha, sizeof(m->sha), "%s", sha);
	snprintf(m->base, sizeof(m->base), "%s", base);
	return m;
}

/* k more pairs of m: 0, 1 when they could not be made (m->why), -errno. */
static int measure_more(struct bctx *c, struct meas *m, unsigned k)
{
	size_t need = m->n + k;
	if (need > m->cap) {
		double *a = realloc(m->a, need * sizeof(*a));
		if (a)
			m->a = a;
		double *b = a ? realloc(m->b, need * sizeof(*b)) : NULL;
		if (!a || !b)
			return -ENOMEM;
		m->b = b;
		m->cap = need;
	}
	struct strbuf why = { 0 };
	int r = m->kind == BISECT_CTL_NONE
			? c->run->measure(c->run->ctx, m->sha, m->base, k, m->a + m->n, m->b + m->n, &why)
			: c->run->control(c->run->ctx, m->kind, m->sha, m->base, k, m->a + m->n, m->b + m->n, &why);
	if (r == BISECT_PENDING)
		r = wait_for(c, m->kind, m->sha, m->base, k, false);
	else if (r == 0) {
		m->n = need;
		c->rep->boots += 2 * k;
		if (why.len)
			snprintf(m->note, sizeof(m->note), "%s", why.buf);
	} else if (r > 0) {
		m->failed = true;
		m->not_applicable = r == BISECT_NOT_APPLICABLE && m->kind != BISECT_CTL_NONE;
		snprintf(m->why, sizeof(m->why), "%s", why.buf ? why.buf : "it could not be measured");
	} else if (r != -EAGAIN)
		sb_printf(c->err, "measuring %.12s against %.12s: %s", m->sha, m->base, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r;
}

typedef int (*judge_fn)(const struct brule_span *span, const double *a, const double *b, size_t n,
			const struct brule_opts *o, struct brule_out *ret);

static int judge_anchor(const struct brule_span *span, const double *a, const double *b, size_t n,
			const struct brule_opts *o, struct brule_out *ret)
{
	return brule_anchor(a, b, n, o, ret);
}

/* Pairs of sha against base, look after look, until fn decides: 0 with
 * out, 1 when sha could not be measured (out says why), -errno. What was
 * measured before for the same two commits is used first. */
static int judge(struct bctx *c, enum bisect_control kind, const char *sha, const char *base, judge_fn fn,
		 const struct brule_span *span, struct brule_out *out)
{
	struct meas *m = meas_get(c, kind, sha, base);
	if (!m)
		return -ENOMEM;
	for (;;) {
		if (m->failed) {
			*out = (struct brule_out){ .decision = m->not_applicable ? BRULE_NOT_APPLICABLE : BRULE_UNDECIDED,
						   .effect = { NAN, NAN, NAN, m->n } };
			snprintf(out->reason, sizeof(out->reason), "%s: %s",
				 m->not_applicable ? "not applicable" : "not measured", m->why);
			return 1;
		}
		int r = fn(span, m->a, m->b, m->n, &c->o->rule, out);
		if (r < 0 || out->decision != BRULE_MORE)
			return r;
		unsigned next = brule_next_look((unsigned)m->n, &c->o->rule);
		if (next <= m->n)
			return -EINVAL; /* the rule asked for more past its cap */
		if ((r = measure_more(c, m, next - (unsigned)m->n)) < 0)
			return r;
	}
}

static int add_row(struct bctx *c, const char *sha, unsigned part, struct bisect_row **ret)
{
	struct bisect_report *rep = c->rep;
	if (util_grow(rep->rows, rep->cap_rows, rep->n_rows + 1, 16) < 0)
		return -ENOMEM;
	struct bisect_row *row = &rep->rows[rep->n_rows++];
	*row = (struct bisect_row){ .part = part };
	snprintf(row->sha, sizeof(row->sha), "%s", sha);
	*ret = row;
	return 0;
}

/* Checks the revisions: known, different, GOOD an ancestor of BAD. */
static int check_range(struct bctx *c)
{
	const struct bisect_opts *o = c->o;
	struct bisect_report *rep = c->rep;
	int r;
	if ((r = c->ops->resolve(c->vcs, o->good, rep->good, c->err)) < 0 ||
	    (r = c->ops->resolve(c->vcs, o->bad, rep->bad, c->err)) < 0)
		return r;
	if (strcmp(rep->good, rep->bad) == 0) {
		sb_printf(c->err, "GOOD %s and BAD %s are the same commit (%.12s): nothing to bisect", o->good, o->bad, rep->good);
		return -EINVAL;
	}
	if ((r = c->ops->is_ancestor(c->vcs, rep->good, rep->bad, c->err)) < 0)
		return r;
	if (r == 0) {
		sb_printf(c->err, "GOOD %s (%.12s) is not an ancestor of BAD %s (%.12s): give a GOOD that BAD's history contains",
			  o->good, rep->good, o->bad, rep->bad);
		return -EINVAL;
	}
	return 0;
}

/* Both ends build, and GOOD against BAD is decided (or refused). */
static int anchor(struct bctx *c)
{
	struct bisect_report *rep = c->rep;
	const char *ends[] = { rep->good, rep->bad }, *names[] = { "GOOD", "BAD" };
	for (size_t i = 0; i < 2; i++) {
		const char *why;
		int r = build(c, ends[i], rep->bad, rep->good, &why);
		if (r < 0)
			return r;
		if (r > 0) {
			sb_printf(c->err, "%s (%.12s) does not build: %s", names[i], ends[i], why);
			return -EINVAL;
		}
	}
	int r = judge(c, BISECT_CTL_NONE, rep->bad, rep->good, judge_anchor, NULL, &rep->anchor);
	if (r > 0)
		sb_printf(c->err, "GOOD against BAD: %s", rep->anchor.reason);
	return r > 0 ? -EIO : r;
}

static void add_part(struct bctx *c, const char *good, const char *bad, struct brule_span span)
{
	struct part *p = &c->parts[c->n_parts++];
	snprintf(p->good, sizeof(p->good), "%s", good);
	snprintf(p->bad, sizeof(p->bad), "%s", bad);
	p->span = span;
	c->rep->parts = (unsigned)c->n_parts;
}

/* A control of the confirmed culprit k (doc/bisect.md, "Controls"): its
 * comparison judged as the confirmation is, against the part's effect. */
static int control(struct bctx *c, const struct part *p, struct bisect_culprit *k, enum bisect_control kind, struct bisect_ctl *ret)
{
	const char *base = kind == BISECT_CTL_REVERT ? c->rep->bad : k->parent;
	*ret = (struct bisect_ctl){ .asked = true };
	snprintf(ret->base, sizeof(ret->base), "%s", base);
	int r = judge(c, kind, k->sha, base, kind == BISECT_CTL_REVERT ? brule_revert : brule_align, &p->span, &ret->out);
	const struct meas *m = meas_get(c, kind, k->sha, base);
	if (m)
		snprintf(ret->note, sizeof(ret->note), "%s", m->note);
	return r < 0 ? r : 0;
}

/* The controls run on a confirmed culprit: a revert that does not give the
 * effect back unconfirms it; an effect that vanishes with forced
 * alignment makes it layout-sensitive. One that cannot be made or
 * measured is reported and changes nothing. */
static int controls(struct bctx *c, const struct part *p, struct bisect_culprit *k)
{
	int r;
	if (c->o->revert) {
		if ((r = control(c, p, k, BISECT_CTL_REVERT, &k->revert)) < 0)
			return r;
		if (k->revert.out.decision == BRULE_UNCONFIRMED)
			k->answer = BISECT_UNCONFIRMED;
	}
	if (c->o->align && k->answer == BISECT_CULPRIT) {
		if ((r = control(c, p, k, BISECT_CTL_ALIGN, &k->align)) < 0)
			return r;
		if (k->align.out.decision == BRULE_LAYOUT)
			k->answer = BISECT_LAYOUT;
	}
	return 0;
}

/* The first bad commit of a part, against its parent. */
static int confirm(struct bctx *c, const struct part *p, unsigned id, const char *sha)
{
	struct bisect_culprit *k = &c->rep->culprits[c->rep->n_culprits++];
	*k = (struct bisect_culprit){ .answer = BISECT_UNCONFIRMED, .part = id, .span = p->span };
	snprintf(k->sha, sizeof(k->sha), "%s", sha);
	int r = c->ops->parent(c->vcs, sha, k->parent, c->err);
	const char *why;
	if (r >= 0 && (r = build(c, k->parent, sha, k->parent, &why)) > 0) {
		k->confirm.decision = BRULE_UNCONFIRMED;
		snprintf(k->confirm.reason, sizeof(k->confirm.reason), "its parent does not build: %s", why);
		return 0;
	}
	if (r < 0 || (r = judge(c, BISECT_CTL_NONE, sha, k->parent, brule_confirm, &p->span, &k->confirm)) < 0)
		return r;
	if (k->confirm.decision != BRULE_CONFIRMED)
		return 0;
	k->answer = BISECT_CULPRIT;
	return controls(c, p, k);
}

/* One step of a part: build, compare against GOOD, and the mark for git
 * (*ret_split set instead when the step splits the part). */
static int step(struct bctx *c, unsigned id, const char *sha, bool *ret_split, struct bisect_row **ret_row)
{
	const struct part *p = &c->parts[id];
	struct bisect_row *row;
	int r = add_row(c, sha, id, &row);
	if (r < 0)
		return r;
	*ret_row = row;
	const char *why;
	if ((r = build(c, sha, sha, c->rep->good, &why)) < 0)
		return r;
	row->mark = KBISECT_SKIP;
	row->marked = true;
	if (r > 0) {
		row->out = (struct brule_out){ .decision = BRULE_UNDECIDED, .effect = { NAN, NAN, NAN, 0 } };
		snprintf(row->out.reason, sizeof(row->out.reason), "does not build: %s", why);
		return 0;
	}
	if ((r = judge(c, BISECT_CTL_NONE, sha, c->rep->good, brule_step, &p->span, &row->out)) != 0)
		return r < 0 ? r : 0;
	switch (row->out.decision) {
	case BRULE_BAD: row->mark = KBISECT_BAD; break;
	case BRULE_GOOD: row->mark = KBISECT_GOOD; break;
	case BRULE_SPLIT:
		if (c->n_parts + 2 <= BISECT_MAX_PARTS) {
			row->marked = false;
			*ret_split = true;
			break;
		}
		row->out.decision = BRULE_UNDECIDED;
		snprintf(row->out.reason, sizeof(row->out.reason),
			 "a split, but the range was split %d times already: skipped", BISECT_MAX_SPLITS);
		break;
	default: break;
	}
	return 0;
}

/* The part's session: git's log kept (when it ran), the session ended. */
static int end_session(struct bctx *c, unsigned id, int r)
{
	struct bisect_report *rep = c->rep;
	int e = 0;
	if (r >= 0) {
		sb_printf(&rep->log, "# part %u: %s..%s\n", id, c->parts[id].good, c->parts[id].bad);
		e = c->ops->log(c->vcs, &rep->log, c->err);
	}
	struct strbuf quiet = { 0 }; /* after an error, the first one is the message */
	int f = c->ops->reset(c->vcs, r < 0 ? &quiet : c->err);
	sb_free(&quiet);
	return r < 0 ? r : e < 0 ? e : f;
}

/* Bisects part id with git's choices until git names its first bad
 * commit or its candidates, or a step splits it in two new parts. */
static int bisect_part(struct bctx *c, unsigned id)
{
	struct part p = c->parts[id];
	struct kbisect_step s;
	int r = c->ops->start(c->vcs, p.good, p.bad, &s, c->err);
	while (r >= 0 && s.state == KBISECT_NEXT) {
		bool split = false;
		struct bisect_row *row;
		char sha[KBISECT_SHA_LEN + 1];
		snprintf(sha, sizeof(sha), "%s", s.sha);
		if ((r = step(c, id, sha, &split, &row)) < 0)
			break;
		if (split) {
			add_part(c, p.good, sha, (struct brule_span){ p.span.good, row->out.effect });
			add_part(c, sha, p.bad, (struct brule_span){ row->out.effect, p.span.bad });
			return end_session(c, id, 0);
		}
		r = c->ops->mark(c->vcs, sha, row->mark, &s, c->err);
	}
	if (r >= 0 && s.state == KBISECT_FOUND)
		r = confirm(c, &p, id, s.sha);
	else if (r >= 0) {
		struct bisect_culprit *k = &c->rep->culprits[c->rep->n_culprits++];
		*k = (struct bisect_culprit){ .answer = BISECT_RANGE, .part = id, .span = p.span, .range = s };
		snprintf(k->confirm.reason, sizeof(k->confirm.reason),
			 "only skipped commits left: the first bad commit is one of %zu", s.n_cand_total);
	}
	return end_session(c, id, r);
}

int bisect_run(const struct kbisect_ops *ops, void *vcs, const struct bisect_runner *runner,
	       const struct bisect_opts *o, struct bisect_report *ret, struct strbuf *err)
{
	if (!ops || !runner || !o || !o->good || !o->bad || !ret || !err || ((o->revert || o->align) && !runner->control))
		return -EINVAL;
	*ret = (struct bisect_report){ 0 };
	struct bctx c = { .ops = ops, .vcs = vcs, .run = runner, .o = o, .rep = ret, .err = err };
	int r = check_range(&c);
	if (r >= 0)
		r = anchor(&c);
	if (r >= 0 && ret->anchor.decision == BRULE_ANCHORED) {
		add_part(&c, ret->good, ret->bad, (struct brule_span){ { 0, 0, 0, 0 }, ret->anchor.effect });
		for (size_t i = 0; r >= 0 && i < c.n_parts; i++)
			r = bisect_part(&c, (unsigned)i);
	}
	for (size_t i = 0; i < c.n_m; i++) {
		free(c.m[i].a);
		free(c.m[i].b);
	}
	free(c.m);
	free(c.b);
	if (r == -EAGAIN && ret->pending)
		return BISECT_PENDING;
	if (r < 0)
		bisect_report_free(ret);
	return r < 0 ? r : 0;
}

void bisect_report_free(struct bisect_report *r)
{
	if (!r)
		return;
	free(r->rows);
	sb_free(&r->log);
	r->rows = NULL;
	r->n_rows = r->cap_rows = 0;
}
