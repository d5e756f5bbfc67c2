/* shmem-truncate: fills a tmpfs file or a memfd and times its teardown
 * (ftruncate, hole punch, close, unlink) with build/kab-shmem-truncate,
 * which also reports the folio sizes the file really got. */
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_BACKING, K_OP, K_SIZE, K_REPS, K_HUGE, K_FILL, K_END };
static const char *const backings[] = { "tmpfs", "memfd", NULL };
static const char *const ops[] = { "ftruncate", "punch", "close", "unlink", NULL };
static const char *const huges[] = { "never", "always", "within_size", "advise", NULL };
static const char *const fills[] = { "write", "fallocate", NULL };

/* The keys, parsed once (wl_opts_make). */
struct shmem_opts {
	const char *backing, *op, *huge, *fill;
	uint64_t size, reps;
};
#define OPT(f) WL_OPT(struct shmem_opts, f)

static const struct wl_key keys[] = {
	[K_BACKING] = { OPT(backing), .name = "backing", .type = WL_KEY_ENUM, .required = true, .choices = backings,
			.help = "tmpfs (a file on a private tmpfs mount) or memfd" },
	[K_OP] = { OPT(op), .name = "op", .type = WL_KEY_ENUM, .required = true, .choices = ops,
		   .help = "the teardown timed: ftruncate (to 0), punch (a hole over the whole file), close (memfd only), unlink (tmpfs only)" },
	[K_SIZE] = { OPT(size), .name = "size", .type = WL_KEY_SIZE, .required = true, .min = 4096, .max = 1ull << 40,
		     .page = 4096, .example = "1G", .help = "file size, e.g. 1G (memory.max must be above it or the fill swaps)" },
	[K_REPS] = { OPT(reps), .name = "reps", .type = WL_KEY_COUNT, .min = 1, .max = 10000, .def = "5",
		     .help = "repetitions inside one run; each fills a new file" },
	[K_HUGE] = { OPT(huge), .name = "huge", .type = WL_KEY_ENUM, .choices = huges, .def = "never",
		     .help = "tmpfs only: its huge= mount option" },
	[K_FILL] = { OPT(fill), .name = "fill", .type = WL_KEY_ENUM, .choices = fills, .def = "write",
		     .help = "write (pwrite of non-zero data) or fallocate" },
	[K_END] = { .name = NULL },
};

/* What kab-shmem-truncate prints besides wl_prog_metrics (its units are
 * these); the timings are better lower. */
static const struct wl_metric metrics[] = {
	WL_METRIC("shmem-truncate.op_ms_median", "ms", LOWER, "ms per operation (median)"),
	WL_METRIC("shmem-truncate.*_ms_stddev_pct", "%", LOWER, NULL),
	WL_METRIC("shmem-truncate.op_ms_*", "ms", LOWER, NULL),
	WL_METRIC("shmem-truncate.fill_ms_*", "ms", LOWER, NULL),
	WL_METRIC("shmem-truncate.meminfo_resident_pct", "%", NEUTRAL, NULL),
	WL_METRIC("shmem-truncate.pmd_folio_pct", "%", NEUTRAL, NULL),
	WL_METRIC("shmem-truncate.freed_pct", "%", NEUTRAL, NULL),
	{ NULL },
};

/* The pairs of keys the table cannot say: which op and huge go with which backing. */
static int check_backing(const struct job_workload *wl, const char *file, struct diags *d)
{
	const struct job_param *p, *b = job_param_entry(wl, "backing"), *op = job_param_entry(wl, "op");
	bool memfd = b && strcmp(b->value, "memfd") == 0;
	int r = 0;
	if (b && op && wl_key_choice(&keys[K_BACKING], b->value) && wl_key_choice(&keys[K_OP], op->value)) {
		if (strcmp(op->value, "close") == 0 && !memfd) {
			diags_add(d, file, op->line, "workload \"%s\": op close needs backing = memfd (a tmpfs file's "
				  "pages outlive its close; time its unlink instead)", wl->name);
			r = -EINVAL;
		}
		if (strcmp(op->value, "unlink") == 0 && memfd) {
			diags_add(d, file, op->line, "workload \"%s\": op unlink needs backing = tmpfs (a memfd has no "
				  "name; time its close instead)", wl->name);
			r = -EINVAL;
		}
	}
	if ((p = job_param_entry(wl, "huge")) && memfd) {
		diags_add(d, file, p->line, "workload \"%s\": huge applies to backing = tmpfs only; a memfd follows "
			  "/sys/kernel/mm/transparent_hugepage/shmem_enabled (and hugepages-*/shmem_enabled): set it "
			  "with a sysfs key in the variant", wl->name);
		r = -EINVAL;
	}
	return r;
}

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	int r = 0;
	char path[4096];
	if (!wl_helper_path("kab-shmem-truncate", path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": helper program kab-shmem-truncate is not built or installed (make all)",
			  wl->name);
		r = -ENOENT;
	}
	if (wl_keys_check(wl, keys, file, d) < 0)
		r = -EINVAL;
	if (check_backing(wl, file, d) < 0)
		r = -EINVAL;
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char prog[4096];
	if (!wl_helper_path("kab-shmem-truncate", prog, sizeof(prog)))
		return -ENOENT;
	const struct shmem_opts *o = c->wl->opts;
	if (!o)
		return -EINVAL;
	char sz[32], rp[32];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)o->size);
	snprintf(rp, sizeof(rp), "%llu", (unsigned long long)o->reps);
	const char *args[] = {
		prog,     "--backing", o->backing, "--op",  o->op,    "--size", sz,
		"--reps", rp,          "--fill",   o->fill, "--huge", o->huge,
	};
	return wl_argv_dup(args, ARRAY_SIZE(args), ret_argv);
}

static int collect(const struct wl_ctx *c, int exit_status, struct wl_metrics *m)
{
	return wl_prog_collect(c, "shmem-truncate.", "shmem-truncate.op_ms_median", m);
}

const struct wl_ops wl_shmem_truncate_ops = {
	.type = "shmem-truncate",
	.summary = "fills a tmpfs file or memfd and times ftruncate/punch/close/unlink, with folio-size evidence",
	.keys = keys,
	.opts_size = sizeof(struct shmem_opts),
	.metrics = metrics,
	.prog_metrics = true,
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
