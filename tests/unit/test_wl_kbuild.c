/* The kbuild workload: its keys, the object count (symlinks not
 * followed), and check's file:line errors against a fake kernel tree. */
#include "harness/job/job.h"
#include "t.h"
#include "harness/base/util.h"
#include "workloads/wl.h"
#include "workloads/wl_kbuild.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/kab-test-kbuild-XXXXXX";

static void touch(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void mkd(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	T_EQ_INT(mkdir(p, 0755), 0);
}

/* jobs and drop_caches as kbuild's key table has them */
static void test_parsers(void)
{
	const struct wl_ops *ops = wl_find("kbuild");
	T_CHECK(ops != NULL);
	if (!ops)
		return;
	const struct wl_key *jobs = wl_key_find(ops->keys, "jobs"), *drop = wl_key_find(ops->keys, "drop_caches");
	T_CHECK(jobs && drop);
	if (!jobs || !drop)
		return;
	uint64_t j = 7;
	T_EQ_INT(wl_key_parse_u64(jobs, "4", &j), 0);
	T_EQ_INT(j, 4);
	T_EQ_INT(wl_key_parse_u64(jobs, "1024", &j), 0);
	T_EQ_INT(wl_key_parse_u64(jobs, "0", &j), -ERANGE);
	T_EQ_INT(wl_key_parse_u64(jobs, "1025", &j), -ERANGE);
	T_EQ_INT(wl_key_parse_u64(jobs, "two", &j), -EINVAL);
	T_EQ_INT(wl_key_parse_u64(jobs, "4x", &j), -EINVAL);
	T_EQ_INT(wl_key_parse_u64(jobs, "-4", &j), -EINVAL);
	T_EQ_INT(wl_key_parse_u64(jobs, "", &j), -EINVAL);
	T_EQ_INT(j, 1024);
	bool b = false;
	T_EQ_INT(wl_key_parse_bool(drop, "yes", &b), 0);
	T_CHECK(b);
	T_EQ_INT(wl_key_parse_bool(drop, "no", &b), 0);
	T_CHECK(!b);
	T_EQ_INT(wl_key_parse_bool(drop, "on", &b), 0);
	T_CHECK(b);
	T_EQ_INT(wl_key_parse_bool(drop, "maybe", &b), -EINVAL);
	T_EQ_INT(wl_key_parse_bool(drop, "Yes ", &b), -EINVAL);
	T_CHECK(b);
}

/* tmp/obj: 3 objects, one more behind a symlink that must not count */
static void test_count(void)
{
	mkd("obj");
	mkd("obj/mm");
	mkd("obj/mm/sub");
	touch("obj/init.o");
	touch("obj/mm/page_alloc.o");
	touch("obj/mm/sub/x.o");
	touch("obj/mm/page_alloc.c");
	touch("obj/mm/.page_alloc.o.cmd");
	touch("obj/mm/x.order");
	mkd("elsewhere");
	touch("elsewhere/hidden.o");
	char target[512], link[512];
	snprintf(target, sizeof(target), "%s/elsewhere", tmp);
	snprintf(link, sizeof(link), "%s/obj/source", tmp);
	T_EQ_INT(symlink(target, link), 0);
	char obj[512];
	snprintf(obj, sizeof(obj), "%s/obj", tmp);
	uint64_t n = 99;
	T_EQ_INT(wl_kbuild_count_files(obj, ".o", &n), 0);
	T_EQ_INT(n, 3);
	snprintf(obj, sizeof(obj), "%s/nonexistent", tmp);
	T_EQ_INT(wl_kbuild_count_files(obj, ".o", &n), -ENOENT);
	T_EQ_INT(n, 3);
}

/* Runs the kbuild check on a workload section; returns the diags. */
static void check_section(const char *section, struct diags *d)
{
	char text[2048];
	snprintf(text, sizeof(text), "[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\ntype = kbuild\n%s", section);
	struct diags pd = { 0 };
	struct job *j = NULL;
	int r = job_parse_string_nocheck("t.job", text, &j, &pd);
	T_EQ_INT(r, 0);
	if (r < 0)
		diags_print(&pd, stderr);
	diags_free(&pd);
	if (!j)
		return;
	const struct wl_ops *ops = wl_find("kbuild");
	T_CHECK(ops != NULL);
	if (ops)
		ops->check(&j->workloads[0], "t.job", d);
	job_free(j);
}

/* The diag containing needle: its line, or -1 when there is none. */
static int diag_line(const struct diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, needle))
			return d->v[i].line;
	return -1;
}

static void test_check(void)
{
	mkd("linux");
	mkd("linux/kernel");
	mkd("linux/mm");
	mkd("linux/kernel/sched");
	touch("linux/Makefile");
	touch("linux/Kconfig");
	touch("my.config");
	char sec[1024];
	struct diags d = { 0 };

	/* a good section: nothing said about its keys */
	snprintf(sec, sizeof(sec), "source = %s/linux\nconfig = %s/my.config\njobs = 2\ntarget = mm/ kernel/sched/ vmlinux\ndrop_caches = yes\n", tmp, tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "source"), -1);
	T_EQ_INT(diag_line(&d, "config"), -1);
	T_EQ_INT(diag_line(&d, "jobs"), -1);
	T_EQ_INT(diag_line(&d, "target"), -1);
	T_EQ_INT(diag_line(&d, "drop_caches"), -1);
	diags_free(&d);

	/* every bad key on its own line (lines 7..11) */
	snprintf(sec, sizeof(sec), "source = %s/linux\nconfig = tinyconfg\njobs = 2.5\ntarget = mm/ nope/ kernel/x.o\ndrop_caches = sometimes\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "unknown config \"tinyconfg\" (did you mean \"tinyconfig\"?)"), 8);
	T_EQ_INT(diag_line(&d, "jobs \"2.5\" must be a whole number from 1 to 1024"), 9);
	T_EQ_INT(diag_line(&d, "target \"nope/\": there is no directory nope in"), 10);
	T_EQ_INT(diag_line(&d, "kernel/x.o"), -1);
	T_EQ_INT(diag_line(&d, "drop_caches \"sometimes\" is not yes or no"), 11);
	diags_free(&d);

	check_section("target = -j8\n", &d);
	T_EQ_INT(diag_line(&d, "target \"-j8\" is a make option"), 7);
	diags_free(&d);
	check_section("target = V=1 vmlinux\n", &d);
	T_EQ_INT(diag_line(&d, "target \"V=1\" is a make option"), 7);
	diags_free(&d);
	snprintf(sec, sizeof(sec), "source = %s/linux\ntarget = ../../etc/\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "must be a path inside the kernel tree"), 8);
	diags_free(&d);

	/* sources: relative, missing, not a kernel tree, configured in place */
	check_section("source = linux\n", &d);
	T_EQ_INT(diag_line(&d, "must be \"debian\" or an absolute path"), 7);
	diags_free(&d);
	snprintf(sec, sizeof(sec), "source = %s/nonexistent\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "is not a directory"), 7);
	diags_free(&d);
	snprintf(sec, sizeof(sec), "source = %s/obj\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "does not look like a kernel tree"), 7);
	diags_free(&d);
	touch("linux/.config");
	snprintf(sec, sizeof(sec), "source = %s/linux\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "make mrproper"), 7);
	diags_free(&d);

	snprintf(sec, sizeof(sec), "config = %s/no.config\n", tmp);
	check_section(sec, &d);
	T_EQ_INT(diag_line(&d, "is not a readable file"), 7);
	diags_free(&d);
}

/* drop_caches asks the executor to drop the page cache after before():
 * the workload itself writes nothing to the machine */
static void test_drop_caches(void)
{
	static const char *const cases[][2] = { { "drop_caches = yes\n", "y" }, { "drop_caches = no\n", "n" }, { "", "n" } };
	const struct wl_ops *ops = wl_find("kbuild");
	T_CHECK(ops && ops->drop_caches);
	for (size_t i = 0; ops && ops->drop_caches && i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\ntype = kbuild\n%s", cases[i][0]);
		struct diags pd = { 0 };
		struct job *j = NULL;
		T_EQ_INT(job_parse_string_nocheck("t.job", text, &j, &pd), 0);
		diags_free(&pd);
		if (j)
			T_EQ_INT(ops->drop_caches(&j->workloads[0]), cases[i][1][0] == 'y');
		job_free(j);
	}
}

/* before() makes the run's object directory with the job's .config in
 * it; without that .config the run fails with a message naming both */
static void test_before(void)
{
	const struct wl_ops *ops = wl_find("kbuild");
	T_CHECK(ops && ops->before);
	if (!ops || !ops->before)
		return;
	char jobdir[300], workdir[300], cfg[320], want[1200];
	snprintf(jobdir, sizeof(jobdir), "%s/before-job", tmp);
	snprintf(workdir, sizeof(workdir), "%s/before-run", tmp);
	T_CHECK(mkdir(jobdir, 0755) == 0 && mkdir(workdir, 0755) == 0);
	struct wl_ctx c = { .jobdir = jobdir, .workdir = workdir };
	struct strbuf err = { 0 };
	T_EQ_INT(ops->before(&c, &err), -ENOENT);
	snprintf(want, sizeof(want), "cannot copy the job's kernel configuration %s/.config to %s/obj/.config: %s",
		 jobdir, workdir, strerror(ENOENT));
	T_EQ_STR(err.buf, want);
	sb_free(&err);
	snprintf(cfg, sizeof(cfg), "%s/.config", jobdir);
	FILE *f = fopen(cfg, "w");
	T_CHECK(f && fputs("CONFIG_MMU=y\n", f) >= 0 && fclose(f) == 0);
	T_EQ_INT(ops->before(&c, &err), 0);
	T_EQ_INT(err.len, 0);
	snprintf(cfg, sizeof(cfg), "%s/obj/.config", workdir);
	T_CHECK(access(cfg, R_OK) == 0);
	sb_free(&err);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_parsers();
	test_count();
	test_check();
	test_drop_caches();
	test_before();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return t_done("test_wl_kbuild");
}
