/* A confirmation job from two nights of a nightly job (job.h,
 * job_confirmation): the good night's variant against the bad night's,
 * paired, ABBA, with adaptive pairs. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_str(char **dst, const char *v)
{
	char *n = strdup(v);
	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

/* Renames a variant and pins its build (a recorded one: build > 0) or its
 * base; the section label is A or B. A variant of a recorded build keeps
 * it when no build is given: the night's build is of the night's commit. */
static int shape_variant(struct job_variant *v, const char *label, const char *name, const char *base, int64_t build)
{
	int r;
	if ((r = set_str(&v->label, label)) < 0 || (r = set_str(&v->name, name)) < 0)
		return r;
	if (!v->kernel || strcmp(v->kernel, "build") != 0)
		return 0;
	if (build > 0) {
		/* what build = ID excludes (and the track: the build fixed them) */
		job_variant_clear_source(v);
		v->build_id = build;
		return 0;
	}
	if (!base || job_variant_recorded(v))
		return 0;
	if ((r = set_str(&v->base, base)) < 0)
		return r;
	/* the commit its night ran, not the branch's head of today */
	free(v->track_remote);
	free(v->track_branch);
	free(v->track_note);
	v->track_remote = v->track_branch = v->track_note = NULL;
	return 0;
}

/* expect.VARIANT lines name the nights' variants: those of variant v
 * (named old) hold for both of the confirmation's variants, which are
 * variant v on two nights; those of the others go. */
static void keep_expects(struct job *j, const char *old)
{
	for (size_t w = 0; w < j->n_workloads; w++) {
		struct job_workload *wl = &j->workloads[w];
		size_t k = 0;
		for (size_t i = 0; i < wl->n_expect; i++) {
			struct job_expect *e = &wl->expect[i];
			if (e->variant && strcmp(e->variant, old) != 0) {
				free(e->metric);
				free(e->number);
				free(e->variant);
				continue;
			}
			free(e->variant);
			e->variant = NULL;
			wl->expect[k++] = *e;
		}
		wl->n_expect = k;
	}
}

/* Only the workloads c names: a change in one workload is confirmed by
 * running that one, not the whole night again. */
static int keep_workloads(struct job *j, const struct job_confirm *c)
{
	if (!c->workloads)
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < j->n_workloads; i++) {
		bool keep = false;
		for (size_t m = 0; m < c->n_workloads && !keep; m++)
			keep = j->workloads[i].name && strcmp(j->workloads[i].name, c->workloads[m]) == 0;
		if (keep)
			j->workloads[k++] = j->workloads[i];
		else
			job_workload_clear(&j->workloads[i]);
	}
	j->n_workloads = k;
	return k ? 0 : -ENOENT;
}

int job_confirmation(struct job *good, struct job *bad, size_t v, const struct job_confirm *c, char **ret_text)
{
	*ret_text = NULL;
	if (v >= good->n_variants || v >= bad->n_variants || !c->name || !c->good_name || !c->bad_name ||
	    strcmp(c->good_name, c->bad_name) == 0 || c->min_pairs == 0 || c->max_pairs < c->min_pairs)
		return -EINVAL;
	struct job_variant *two = calloc(2, sizeof(*two));
	if (!two)
		return -ENOMEM;
	two[0] = good->variants[v];
	good->variants[v] = (struct job_variant){ 0 };
	two[1] = bad->variants[v];
	bad->variants[v] = (struct job_variant){ 0 };
	for (size_t i = 0; i < bad->n_variants; i++)
		job_variant_clear(&bad->variants[i]);
	free(bad->variants);
	bad->variants = two;
	bad->n_variants = 2;

	if (two[1].name)
		keep_expects(bad, two[1].name);
	int r;
	if ((r = keep_workloads(bad, c)) < 0)
		return r;
	if ((r = shape_variant(&two[0], "A", c->good_name, c->good_base, c->good_build)) < 0 ||
	    (r = shape_variant(&two[1], "B", c->bad_name, c->bad_base, c->bad_build)) < 0 ||
	    (r = set_str(&bad->name, c->name)) < 0)
		return r;
	bad->order = JOB_ORDER_ABBA;
	bad->adaptive = (struct job_adaptive){
		.on = c->max_pairs > c->min_pairs, .min = c->min_pairs, .max = c->max_pairs, .step = c->step ? c->step : 1
	};
	bad->pairs = c->max_pairs;
	/* a confirmation (or a bisection's step) is no nightly of its own */
	bad->bisect = JOB_BISECT_OFF;
	bad->bisect_revert = bad->bisect_align = 0;

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return -ENOMEM;
	job_print(bad, out);
	if (fclose(out) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	return 0;
}
