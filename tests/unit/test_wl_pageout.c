/* The pageout and shmem-truncate adapters: the "kab-metric" lines their
 * helper programs print (fixtures captured from real runs, and broken
 * lines), and the checks of their keys. */
#include "t_job.h"
#include "t_config.h"
#include "workloads/wl.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <stdlib.h>


static const struct store_metric *find(const struct wl_metrics *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].name, name) == 0)
			return &m->v[i];
	return NULL;
}

static int read_fixture(const char *name, const char *prefix, struct wl_metrics *m)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/data/%s", name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int n = wl_prog_metrics_read(f, prefix, m);
	fclose(f);
	return n;
}

static void test_pageout_output(void)
{
	struct wl_metrics m = { 0 };
	T_EQ_INT(read_fixture("kab-pageout.stdout", "pageout.", &m), 31);
	const struct store_metric *x = find(&m, "pageout.ns_mean");
	T_CHECK(x && x->value == 40485028 && strcmp(x->unit, "ns") == 0);
	x = find(&m, "pageout.ns_stddev_pct");
	T_CHECK(x && fabs(x->value - 18.292) < 1e-9 && strcmp(x->unit, "%") == 0);
	x = find(&m, "pageout.folios_64kB_alloc");
	T_CHECK(x && fabs(x->value - 1024.333) < 1e-9 && strcmp(x->unit, "folios") == 0);
	x = find(&m, "pageout.large_folio_pct");
	T_CHECK(x && x->value == 100);
	T_CHECK(find(&m, "pageout.refault_ns_median") != NULL);
	wl_metrics_free(&m);
	/* another program's prefix is not taken */
	T_EQ_INT(read_fixture("kab-pageout.stdout", "shmem-truncate.", &m), 0);
	T_EQ_INT(m.n, 0);
	wl_metrics_free(&m);
}

static void test_shmem_output(void)
{
	struct wl_metrics m = { 0 };
	T_CHECK(read_fixture("kab-shmem-truncate.stdout", "shmem-truncate.", &m) > 15);
	const struct store_metric *x = find(&m, "shmem-truncate.op_ms_median");
	T_CHECK(x && x->value > 0 && strcmp(x->unit, "ms") == 0);
	T_CHECK(find(&m, "shmem-truncate.op_ms_mean") && find(&m, "shmem-truncate.op_ms_min") && find(&m, "shmem-truncate.large_folio_pct"));
	x = find(&m, "shmem-truncate.folio_kB_mean");
	T_CHECK(x && x->value == 4);
	wl_metrics_free(&m);
}

/* Only well-formed lines count: three words, a strict number, names and
 * units that fit, the prefix with something after it. */
static void test_bad_lines(void)
{
	struct wl_metrics m = { 0 };
	T_EQ_INT(read_fixture("kab-pageout.bad", "pageout.", &m), 2);
	const struct store_metric *x = find(&m, "pageout.ok");
	T_CHECK(x && x->value == 7.5 && strcmp(x->unit, "ns") == 0);
	x = find(&m, "pageout.last"); /* no newline at the end of the file */
	T_CHECK(x && x->value == 2);
	T_CHECK(!find(&m, "pageout.ns_mean") && !find(&m, "pageout.extra") && !find(&m, "pageout."));
	wl_metrics_free(&m);
}

/* The diags of a check that mention text, and at which line. */
static int line_of(const struct diags *d, const char *text)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, text))
			return d->v[i].line;
	return -1;
}

static void test_pageout_check(void)
{
	const struct wl_ops *ops = wl_find("pageout");
	T_CHECK(ops && ops->check && ops->argv && ops->collect);
	static const char *const bad[] = { "size", "5000", "reps", "0", "fill", "ones", "refault", "maybe",
					   "align", "3M", "thp_madvise", "1", NULL };
	struct job_workload *w = t_workload("pageout", bad);
	struct diags d = { 0 };
	T_CHECK(ops->check(w, "x.job", &d) < 0);
	T_EQ_INT(line_of(&d, "size \"5000\""), 11);
	T_EQ_INT(line_of(&d, "reps \"0\""), 12);
	T_EQ_INT(line_of(&d, "fill \"ones\""), 13);
	T_EQ_INT(line_of(&d, "refault \"maybe\""), 14);
	T_EQ_INT(line_of(&d, "align \"3M\""), 15);
	T_EQ_INT(line_of(&d, "thp_madvise \"1\""), 16);
	diags_free(&d);
	t_workload_free(w);

	static const char *const good[] = { "size", "256M", "reps", "10", "fill", "random", "refault", "yes",
					    "align", "64K", "thp_madvise", "no", NULL };
	w = t_workload("pageout", good);
	ops->check(w, "x.job", &d);
	for (size_t i = 0; i < d.n; i++) /* the helper may be missing here: that alone */
		T_CHECK(strstr(d.v[i].msg, "kab-pageout is not built") != NULL);
	diags_free(&d);
	t_workload_free(w);
}

static void test_shmem_check(void)
{
	const struct wl_ops *ops = wl_find("shmem-truncate");
	T_CHECK(ops && ops->check);
	static const char *const close_tmpfs[] = { "backing", "tmpfs", "op", "close", "size", "64M", NULL };
	struct job_workload *w = t_workload("shmem-truncate", close_tmpfs);
	struct diags d = { 0 };
	T_CHECK(ops->check(w, "x.job", &d) < 0);
	T_EQ_INT(line_of(&d, "op close needs backing = memfd"), 12);
	diags_free(&d);
	t_workload_free(w);

	static const char *const unlink_memfd[] = { "backing", "memfd", "op", "unlink", "size", "64M", "huge", "always", NULL };
	w = t_workload("shmem-truncate", unlink_memfd);
	T_CHECK(ops->check(w, "x.job", &d) < 0);
	T_EQ_INT(line_of(&d, "op unlink needs backing = tmpfs"), 12);
	T_EQ_INT(line_of(&d, "huge applies to backing = tmpfs only"), 14);
	diags_free(&d);
	t_workload_free(w);

	static const char *const bad[] = { "backing", "disk", "op", "chop", "size", "1", "reps", "x", "huge", "often",
					   "fill", "zero", NULL };
	w = t_workload("shmem-truncate", bad);
	T_CHECK(ops->check(w, "x.job", &d) < 0);
	T_EQ_INT(line_of(&d, "backing \"disk\""), 11);
	T_EQ_INT(line_of(&d, "op \"chop\""), 12);
	T_EQ_INT(line_of(&d, "size \"1\""), 13);
	T_EQ_INT(line_of(&d, "reps \"x\""), 14);
	T_EQ_INT(line_of(&d, "huge \"often\""), 15);
	T_EQ_INT(line_of(&d, "fill \"zero\""), 16);
	diags_free(&d);
	t_workload_free(w);

	static const char *const good[] = { "backing", "tmpfs", "op", "punch", "size", "1G", "reps", "5", "huge",
					    "within_size", "fill", "fallocate", NULL };
	w = t_workload("shmem-truncate", good);
	ops->check(w, "x.job", &d);
	for (size_t i = 0; i < d.n; i++)
		T_CHECK(strstr(d.v[i].msg, "kab-shmem-truncate is not built") != NULL);
	diags_free(&d);
	t_workload_free(w);
}

/* argv of a workload from a parsed job, without the program: "--size 1 ...". */
static void args_of(const char *type, const char *keys, struct strbuf *ret)
{
	char text[1024];
	snprintf(text, sizeof(text), "[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\ntype = %s\n%s", type, keys);
	struct job *j = t_parse_job(text);
	T_CHECK(j && j->n_workloads == 1 && j->workloads[0].opts);
	if (!j || j->n_workloads != 1)
		return;
	char **argv = NULL;
	struct wl_ctx c = { .wl = &j->workloads[0] };
	T_EQ_INT(wl_find(type)->argv(&c, &argv), 0);
	for (size_t i = 1; argv && argv[i]; i++)
		sb_printf(ret, "%s%s", i > 1 ? " " : "", argv[i]);
	wl_argv_free(argv);
	job_free(j);
}

/* The keys are parsed once, as the job is read, into the type's options;
 * the programs' arguments come from them, defaults filled in. */
static void test_options(void)
{
	char path[8192];
	const char *old = getenv("PATH");
	snprintf(path, sizeof(path), "build:%s", old ? old : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	t_config_from_env();
	char prog[4096];
	if (!wl_helper_path("kab-pageout", prog, sizeof(prog)) || !wl_helper_path("kab-shmem-truncate", prog, sizeof(prog))) {
		t_skip("test_options", "build/kab-pageout or build/kab-shmem-truncate is not built (make all)");
		return;
	}
	struct strbuf a = { 0 };
	args_of("pageout", "size = 64M\nrefault = yes\n", &a);
	T_EQ_STR(a.buf, "--size 67108864 --reps 10 --fill pattern --refault yes --align 2097152 --thp-madvise no");
	sb_free(&a);
	a = (struct strbuf){ 0 };
	args_of("shmem-truncate", "backing = memfd\nop = close\nsize = 1G\nfill = fallocate\n", &a);
	T_EQ_STR(a.buf, "--backing memfd --op close --size 1073741824 --reps 5 --fill fallocate --huge never");
	sb_free(&a);
	/* a bad value leaves no options: kab check says why, and no run starts */
	struct job *j = t_parse_job("[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\ntype = pageout\nsize = 3\n");
	T_CHECK(j && j->workloads[0].opts == NULL);
	if (j)
		job_free(j);
}

int main(void)
{
	test_pageout_output();
	test_shmem_output();
	test_bad_lines();
	test_pageout_check();
	test_shmem_check();
	test_options();
	return t_done("test_wl_pageout");
}
