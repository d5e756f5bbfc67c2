/* shmem-truncate: fills a tmpfs file or a memfd and times its teardown
 * (ftruncate, hole punch, close, unlink) with build/kab-shmem-truncate,
 * which also reports the folio sizes the file really got. */
#include "wl.h"
#include "job.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHMEM_MAX_SIZE (1ull << 40)
#define SHMEM_MAX_REPS 10000

static const struct wl_key keys[] = {
	{ .name = "backing", .help = "tmpfs (a file on a private tmpfs mount) or memfd", .required = true },
	{ .name = "op", .help = "the teardown timed: ftruncate (to 0), punch (a hole over the whole file), close (memfd only), unlink (tmpfs only)", .required = true },
	{ .name = "size", .help = "file size, e.g. 1G (whole 4K pages; memory.max must be above it or the fill swaps)", .required = true },
	{ .name = "reps", .help = "repetitions inside one run, 1 to 10000 (default 5); each fills a new file", .required = false },
	{ .name = "huge", .help = "tmpfs only: its huge= mount option, never, always, within_size or advise (default never)", .required = false },
	{ .name = "fill", .help = "write (default: pwrite of non-zero data) or fallocate", .required = false },
	{ .name = NULL },
};

/* Reports a value of key that is not among choices; true when it is. */
static bool check_choice(const struct job_workload *wl, const char *file, struct diags *d, const char *key,
			 const char *const *choices, const char *list)
{
	const struct job_param *p = job_param_entry(wl, key);
	if (!p)
		return true;
	for (size_t i = 0; choices[i]; i++)
		if (strcmp(p->value, choices[i]) == 0)
			return true;
	diags_add(d, file, p->line, "workload \"%s\": %s \"%s\" is not one of %s", wl->name, key, p->value, list);
	return false;
}

static int check(const struct job_workload *wl, const char *file, struct diags *d)
{
	static const char *const backings[] = { "tmpfs", "memfd", NULL };
	static const char *const ops[] = { "ftruncate", "punch", "close", "unlink", NULL };
	static const char *const huges[] = { "never", "always", "within_size", "advise", NULL };
	static const char *const fills[] = { "write", "fallocate", NULL };
	int r = 0;
	char path[4096];
	if (!wl_helper_path("kab-shmem-truncate", path, sizeof(path))) {
		diags_add(d, file, wl->line, "workload \"%s\": helper program kab-shmem-truncate is not built or installed (make all)",
			  wl->name);
		r = -ENOENT;
	}
	bool backing_ok = check_choice(wl, file, d, "backing", backings, "tmpfs, memfd");
	bool op_ok = check_choice(wl, file, d, "op", ops, "ftruncate, punch, close, unlink");
	bool huge_ok = check_choice(wl, file, d, "huge", huges, "never, always, within_size, advise");
	bool fill_ok = check_choice(wl, file, d, "fill", fills, "write, fallocate");
	if (!backing_ok || !op_ok || !huge_ok || !fill_ok)
		r = -EINVAL;
	const struct job_param *p, *b = job_param_entry(wl, "backing"), *op = job_param_entry(wl, "op");
	bool memfd = b && strcmp(b->value, "memfd") == 0;
	if (backing_ok && op_ok && b && op) {
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
	uint64_t size;
	if ((p = job_param_entry(wl, "size")) &&
	    (util_parse_size(p->value, &size) < 0 || size < 4096 || size % 4096 || size > SHMEM_MAX_SIZE)) {
		diags_add(d, file, p->line, "workload \"%s\": size \"%s\" must be a size from 4K to 1T in whole 4K pages, e.g. 1G",
			  wl->name, p->value);
		r = -EINVAL;
	}
	uint64_t reps;
	if ((p = job_param_entry(wl, "reps")) &&
	    (util_parse_u64(p->value, &reps) < 0 || reps < 1 || reps > SHMEM_MAX_REPS)) {
		diags_add(d, file, p->line, "workload \"%s\": reps \"%s\" must be a whole number from 1 to %d",
			  wl->name, p->value, SHMEM_MAX_REPS);
		r = -EINVAL;
	}
	return r;
}

static int make_argv(const struct wl_ctx *c, char ***ret_argv)
{
	char prog[4096];
	if (!wl_helper_path("kab-shmem-truncate", prog, sizeof(prog)))
		return -ENOENT;
	const char *v;
	uint64_t size;
	if (!(v = job_param(c->wl, "size")) || util_parse_size(v, &size) < 0)
		return -EINVAL;
	const char *backing = job_param(c->wl, "backing"), *op = job_param(c->wl, "op");
	const char *reps = job_param(c->wl, "reps"), *huge = job_param(c->wl, "huge");
	const char *fill = job_param(c->wl, "fill");
	if (!backing || !op)
		return -EINVAL;
	char sz[32];
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	const char *args[] = {
		prog, "--backing", backing, "--op", op, "--size", sz, "--reps", reps ? reps : "5",
		"--fill", fill ? fill : "write", "--huge", huge ? huge : "never",
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
	.check = check,
	.argv = make_argv,
	.collect = collect,
};
