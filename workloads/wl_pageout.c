/* pageout: times madvise(MADV_PAGEOUT) over freshly filled anonymous memory
 * (and optionally the refault) with build/kab-pageout, which also reports
 * the folio sizes the kernel really used. */
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_SIZE, K_REPS, K_FILL, K_REFAULT, K_ALIGN, K_THP_MADVISE, K_END };
static const char *const fills[] = { "zero", "pattern", "random", NULL };

/* The keys, parsed once (wl_opts_make). */
struct pageout_opts {
	uint64_t size, reps, align;
	const char *fill;
	bool refault, thp_madvise;
};
#define OPT(f) WL_OPT(struct pageout_opts, f)

static const struct wl_key keys[] = {
	[K_SIZE] = { OPT(size), .name = "size", .type = WL_KEY_SIZE, .required = true, .min = 4096, .max = 1ull << 40, .page = 4096,
		     .example = "256M", .help = "anonymous memory per repetition, e.g. 256M (memory.max must be above it)" },
	[K_REPS] = { OPT(reps), .name = "reps", .type = WL_KEY_COUNT, .min = 1, .max = 10000, .def = "10",
		     .help = "repetitions inside one run; each maps, fills and pages out afresh" },
	[K_FILL] = { OPT(fill), .name = "fill", .type = WL_KEY_ENUM, .choices = fills, .def = "pattern",
		     .help = "what the memory is filled with; zero-filled pages are not written to swap" },
	[K_REFAULT] = { OPT(refault), .name = "refault", .type = WL_KEY_BOOL, .def = "no",
			.help = "after the pageout write every word again (stores only: each first touch is a write fault) and time the refault" },
	[K_ALIGN] = { OPT(align), .name = "align", .type = WL_KEY_SIZE, .min = 4096, .max = 1ull << 30, .pow2 = true,
		      .def = "2M", .example = "2M", .help = "alignment of the mapping, so large folios fit" },
	[K_THP_MADVISE] = { OPT(thp_madvise), .name = "thp_madvise", .type = WL_KEY_BOOL, .def = "no",
			    .help = "madvise(MADV_HUGEPAGE) the range, for folio sizes set to madvise" },
	[K_END] = { .name = NULL },
};

/* What kab-pageout prints besides wl_prog_metrics (its units are these);
 * the timings are better lower. */
static const struct wl_metric metrics[] = {
	WL_METRIC("pageout.ns_mean", "ns", LOWER, "MADV_PAGEOUT time (mean)"),
	WL_METRIC("pageout.ns_median", "ns", LOWER, "MADV_PAGEOUT time (median)"),
	WL_METRIC("pageout.ns_stddev_pct", "%", LOWER, "MADV_PAGEOUT std dev %"),
	WL_METRIC("pageout.refault_ns_mean", "ns", LOWER, "refault time (mean)"),
	WL_METRIC("pageout.*ns_stddev_pct", "%", LOWER, NULL),
	WL_METRIC("pageout.*ns_*", "ns", LOWER, NULL),
	WL_METRIC("pageout.swapped_pct", "%", NEUTRAL, NULL),
	WL_METRIC("pageout.mthp_swpout_pct", "%", NEUTRAL, NULL),
	{ NULL },
};

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	int r = 0;
	char path[4096];
	if (!wl_helper_path("kab-pageout", path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": helper program kab-pageout is not built or installed (make all)", wl->name);
		r = -ENOENT;
	}
	if (wl_keys_check(wl, keys, file, d) < 0)
		r = -EINVAL;
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char prog[4096];
	if (!wl_helper_path("kab-pageout", prog, sizeof(prog)))
		return -ENOENT;
	const struct pageout_opts *o = c->wl->opts;
	if (!o)
		return -EINVAL;
	char sz[32], rp[32], al[32];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)o->size);
	snprintf(rp, sizeof(rp), "%llu", (unsigned long long)o->reps);
	snprintf(al, sizeof(al), "%llu", (unsigned long long)o->align);
	const char *args[] = {
		prog,
		"--size",
		sz,
		"--reps",
		rp,
		"--fill",
		o->fill,
		"--refault",
		o->refault ? "yes" : "no",
		"--align",
		al,
		"--thp-madvise",
		o->thp_madvise ? "yes" : "no",
	};
	return wl_argv_dup(args, ARRAY_SIZE(args), ret_argv);
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	return wl_prog_collect(c, "pageout.", "pageout.ns_mean", m);
}

const struct wl_ops wl_pageout_ops = {
	.type = "pageout",
	.summary = "times madvise(MADV_PAGEOUT) over filled anonymous memory, with folio-size evidence",
	.keys = keys,
	.opts_size = sizeof(struct pageout_opts),
	.metrics = metrics,
	.prog_metrics = true,
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
