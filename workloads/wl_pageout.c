/* pageout: times madvise(MADV_PAGEOUT) over freshly filled anonymous memory
 * (and optionally the refault) with build/kab-pageout, which also reports
 * the folio sizes the kernel really used. */
#include "wl.h"
#include "job.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGEOUT_MAX_SIZE (1ull << 40)
#define PAGEOUT_MAX_REPS 10000

static const struct wl_key keys[] = {
	{ "size", "anonymous memory per repetition, e.g. 256M (a multiple of 4K; memory.max must be above it)", true },
	{ "reps", "repetitions inside one run, 1 to 10000 (default 10); each maps, fills and pages out afresh", false },
	{ "fill", "zero, pattern or random (default pattern); zero-filled pages are not written to swap", false },
	{ "refault", "yes or no (default no): after the pageout write every word again (stores only: each first touch is a write fault) and time the refault", false },
	{ "align", "alignment of the mapping, a power of two from 4K to 1G (default 2M), so large folios fit", false },
	{ "thp_madvise", "yes or no (default no): madvise(MADV_HUGEPAGE) the range, for folio sizes set to madvise", false },
	{ NULL, NULL, false },
};

static bool one_of(const char *v, const char *const *choices)
{
	for (size_t i = 0; choices[i]; i++)
		if (strcmp(v, choices[i]) == 0)
			return true;
	return false;
}

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	int r = 0;
	char path[4096];
	const struct job_param *p;
	if (!wl_helper_path("kab-pageout", path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": helper program kab-pageout is not built or installed (make all)", wl->name);
		r = -ENOENT;
	}
	uint64_t size = 0;
	if ((p = job_param_entry(wl, "size")) &&
	    (util_parse_size(p->value, &size) < 0 || size < 4096 || size % 4096 || size > PAGEOUT_MAX_SIZE)) {
		diags_add(d, file, p->line, "workload \"%s\": size \"%s\" must be a size from 4K to 1T in whole 4K pages, e.g. 256M",
			  wl->name, p->value);
		r = -EINVAL;
	}
	uint64_t reps;
	if ((p = job_param_entry(wl, "reps")) &&
	    (util_parse_u64(p->value, &reps) < 0 || reps < 1 || reps > PAGEOUT_MAX_REPS)) {
		diags_add(d, file, p->line, "workload \"%s\": reps \"%s\" must be a whole number from 1 to %d",
			  wl->name, p->value, PAGEOUT_MAX_REPS);
		r = -EINVAL;
	}
	static const char *const fills[] = { "zero", "pattern", "random", NULL };
	if ((p = job_param_entry(wl, "fill")) && !one_of(p->value, fills)) {
		diags_add(d, file, p->line, "workload \"%s\": fill \"%s\" is not one of zero, pattern, random", wl->name, p->value);
		r = -EINVAL;
	}
	static const char *const yes_no[] = { "yes", "no", NULL };
	static const char *const flags[] = { "refault", "thp_madvise" };
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if ((p = job_param_entry(wl, flags[i])) && !one_of(p->value, yes_no)) {
			diags_add(d, file, p->line, "workload \"%s\": %s \"%s\" must be yes or no", wl->name, flags[i], p->value);
			r = -EINVAL;
		}
	uint64_t align;
	if ((p = job_param_entry(wl, "align")) &&
	    (util_parse_size(p->value, &align) < 0 || align < 4096 || align > (1ull << 30) || (align & (align - 1)))) {
		diags_add(d, file, p->line, "workload \"%s\": align \"%s\" must be a power of two from 4K to 1G, e.g. 2M",
			  wl->name, p->value);
		r = -EINVAL;
	}
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char prog[4096];
	if (!wl_helper_path("kab-pageout", prog, sizeof(prog)))
		return -ENOENT;
	const char *v;
	uint64_t size, align = 2u << 20;
	if (!(v = job_param(c->wl, "size")) || util_parse_size(v, &size) < 0)
		return -EINVAL;
	if ((v = job_param(c->wl, "align")) && util_parse_size(v, &align) < 0)
		return -EINVAL;
	const char *reps = job_param(c->wl, "reps");
	const char *fill = job_param(c->wl, "fill");
	const char *refault = job_param(c->wl, "refault");
	const char *madv = job_param(c->wl, "thp_madvise");
	char sz[32], al[32];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	snprintf(al, sizeof(al), "%llu", (unsigned long long)align);
	const char *args[] = {
		prog, "--size", sz, "--reps", reps ? reps : "10", "--fill", fill ? fill : "pattern",
		"--refault", refault ? refault : "no", "--align", al, "--thp-madvise", madv ? madv : "no",
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
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
