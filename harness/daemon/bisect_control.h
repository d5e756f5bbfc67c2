/* The controls of a bisection's confirmed culprit in kabd (doc/bisect.md,
 * "Controls"): what each compares, made in kab's clone (the revert as a
 * commit, the alignment options the tree has), and the text of the step
 * job that measures it. */
#pragma once
#include "harness/exec/executor.h"

struct store;
struct store_bisect;
struct store_bisect_job;
struct strbuf;

/* A control's two sides: A's commit against B's, and for align the
 * options forced on both (bits of kbisect_align_symbols). */
struct bisect_sides {
	char a[KBISECT_SHA_LEN + 1], b[KBISECT_SHA_LEN + 1];
	unsigned align;
	char note[192]; /* what the control is, for its report */
};

/* The sides of control kind of the culprit sha against base (revert: BAD
 * with sha reverted against BAD, base; align: base, sha's parent, against
 * sha): 0; BISECT_NOT_APPLICABLE with why (the revert does not apply on
 * BAD, the tree has none of the options); -errno with why. */
int bisect_control_sides(const struct kbisect_git *g, enum bisect_control kind, const char *sha, const char *base,
			 struct bisect_sides *ret, struct strbuf *why);

/* The step job of a control row: the source job's variant at the two
 * sides, the workload only, ABBA, row->k pairs; for align the fragment
 * that forces alignment added to both. 0 with the text; -errno with err. */
int bisect_control_text(struct store *st, const struct kbisect_git *g, const struct store_bisect *b,
			const struct store_bisect_job *row, char **ret, struct strbuf *err);
