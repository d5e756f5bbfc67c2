/* The controls of a bisection's confirmed culprit in kabd: their sides
 * made in kab's clone and their step jobs' text (bisect_control.h). */
#include "harness/daemon/bisect_control.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "kernels/bisect_git.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The alignment options both sides' trees define. */
static int align_sides(const struct kbisect_git *g, const char *sha, const char *base, struct bisect_sides *ret, struct strbuf *why)
{
	struct strbuf missing = { 0 };
	int r = 0;
	for (unsigned i = 0; i < KBISECT_ALIGN_N && r >= 0; i++) {
		int at_sha = kbisect_git_has_config(g, sha, KBISECT_ALIGN_FILE, kbisect_align_symbols[i]);
		int at_base = at_sha == 1 ? kbisect_git_has_config(g, base, KBISECT_ALIGN_FILE, kbisect_align_symbols[i]) : 0;
		if (at_sha < 0 || at_base < 0)
			r = at_sha < 0 ? at_sha : at_base;
		else if (at_sha && at_base)
			ret->align |= 1u << i;
		else
			sb_printf(&missing, "%sCONFIG_%s", missing.len ? ", " : "", kbisect_align_symbols[i]);
	}
	if (r < 0)
		sb_printf(why, "git grep of %s at %.12s and %.12s in %s failed: %s", KBISECT_ALIGN_FILE, sha, base,
			  g->tree, strerror(-r));
	else if (!ret->align) {
		sb_printf(why, "%s of %.12s and its parent %.12s defines none of the options that force alignment (%s)",
			  KBISECT_ALIGN_FILE, sha, base, missing.buf);
		r = BISECT_NOT_APPLICABLE;
	} else {
		size_t at = 0;
		at += (size_t)snprintf(ret->note, sizeof(ret->note), "forced");
		for (unsigned i = 0; i < KBISECT_ALIGN_N && at < sizeof(ret->note); i++)
			if (ret->align & (1u << i))
				at += (size_t)snprintf(ret->note + at, sizeof(ret->note) - at, " CONFIG_%s=y",
						       kbisect_align_symbols[i]);
		if (missing.len && at < sizeof(ret->note))
			snprintf(ret->note + at, sizeof(ret->note) - at, " (not in the tree: %s)", missing.buf);
		snprintf(ret->a, sizeof(ret->a), "%s", base);
		snprintf(ret->b, sizeof(ret->b), "%s", sha);
	}
	sb_free(&missing);
	return r;
}

int bisect_control_sides(const struct kbisect_git *g, enum bisect_control kind, const char *sha, const char *base,
			 struct bisect_sides *ret, struct strbuf *why)
{
	*ret = (struct bisect_sides){ 0 };
	if (kind == BISECT_CTL_ALIGN)
		return align_sides(g, sha, base, ret, why);
	if (kind != BISECT_CTL_REVERT)
		return -EINVAL;
	int r = kbisect_git_revert(g, sha, base, ret->a, why);
	if (r == 1)
		return BISECT_NOT_APPLICABLE;
	if (r < 0)
		return r;
	snprintf(ret->b, sizeof(ret->b), "%s", base);
	snprintf(ret->note, sizeof(ret->note), "BAD %.12s with %.12s reverted: commit %.12s of kab's clone", base, sha, ret->a);
	return 0;
}

/* Adds path to the variant's config fragments (last: it wins). */
static int add_fragment(struct job_variant *v, const char *path)
{
	char **f = realloc(v->fragments, (v->n_fragments + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	v->fragments = f;
	if (!(f[v->n_fragments] = strdup(path)))
		return -ENOMEM;
	v->n_fragments++;
	return 0;
}

int bisect_control_text(struct store *st, const struct kbisect_git *g, const struct store_bisect *b,
			const struct store_bisect_job *row, char **ret, struct strbuf *err)
{
	enum bisect_control kind;
	struct bisect_sides s;
	if (bisect_control_parse(row->control, &kind) < 0 || kind == BISECT_CTL_NONE) {
		sb_printf(err, "step row %lld: unknown control \"%s\"", (long long)row->id, row->control);
		return -EINVAL;
	}
	struct strbuf why = { 0 };
	int r = bisect_control_sides(g, kind, row->sha, row->base, &s, &why);
	if (r != 0) {
		sb_printf(err, "the %s control of %.12s: %s", row->control, row->sha,
			  why.buf ? why.buf : strerror(r < 0 ? -r : EINVAL));
		sb_free(&why);
		return r < 0 ? r : -EINVAL;
	}
	sb_free(&why);
	char fragment[PATH_MAX];
	if (s.align && (r = kbisect_align_fragment(s.align, fragment, sizeof(fragment), err)) < 0)
		return r;
	struct job *one = NULL, *two = NULL;
	r = job_store_load(st, b->source_job, &one, err);
	if (r >= 0)
		r = job_store_load(st, b->source_job, &two, err);
	if (r >= 0 && (b->variant < 0 || (size_t)b->variant >= one->n_variants || job_variant_recorded(&one->variants[b->variant]))) {
		sb_printf(err, "job %lld's variant %d is not built by kab from a tree: the %s control rebuilds it",
			  (long long)b->source_job, b->variant, row->control);
		r = -EINVAL;
	}
	if (r >= 0 && s.align &&
	    ((r = add_fragment(&one->variants[b->variant], fragment)) < 0 ||
	     (r = add_fragment(&two->variants[b->variant], fragment)) < 0))
		sb_puts(err, "out of memory");
	if (r >= 0) {
		char aname[64], bname[64];
		snprintf(aname, sizeof(aname), "%s-%.12s", kind == BISECT_CTL_REVERT ? "revert" : "align-base", s.a);
		snprintf(bname, sizeof(bname), "%s-%.12s", kind == BISECT_CTL_REVERT ? "bad" : "align-step", s.b);
		const char *names[] = { b->workload };
		struct job_confirm jc = {
			.name = row->name,
			.good_name = aname,
			.bad_name = bname,
			.good_base = s.a,
			.bad_base = s.b,
			.min_pairs = row->k,
			.max_pairs = row->k,
			.workloads = names,
			.n_workloads = 1,
		};
		r = job_confirmation(one, two, (size_t)b->variant, &jc, ret);
		if (r < 0 && !err->len)
			sb_printf(err, "job %lld's variant %d and workload %s make no %s control job: %s",
				  (long long)b->source_job, b->variant, b->workload, row->control, strerror(-r));
	}
	job_free(one);
	job_free(two);
	return r;
}
