/* Recovery acts only on what kab journals (recover_scope.h): journal rows
 * naming a root-only file to overwrite, a swap file outside the state
 * directory or through a link, a cgroup outside kab's hierarchy, a tag or
 * device kab does not make, a kind it does not know are each refused,
 * reported with the database, row, kind, target and why, kept in the
 * journal and not acted on; kab's own rows are undone. Real files under
 * /tmp, a state directory there, a child process in a planted
 * cgroup.procs; needs root (the state directory must be root's). Writes
 * no machine knob but one with the value it already has. */
#include "t.h"
#include "harness/exec/cgroup.h"
#include "harness/exec/condition.h"
#include "harness/exec/executor.h"
#include "harness/exec/knobs.h"
#include "harness/exec/provenance.h"
#include "harness/exec/recover_scope.h"
#include "db/store.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[] = "/tmp/kab-unit-recover-XXXXXX";
static char boot_id[64];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	T_CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* The file's text ("" when it cannot be read). */
static void get(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void in_base(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", base, name);
}

static int64_t row(struct store *st, const char *kind, const char *target, const char *original, const char *boot)
{
	struct store_journal e = { .job_id = 1 };
	snprintf(e.kind, sizeof(e.kind), "%s", kind);
	snprintf(e.target, sizeof(e.target), "%s", target);
	snprintf(e.original, sizeof(e.original), "%s", original ? original : "");
	snprintf(e.boot_id, sizeof(e.boot_id), "%s", boot ? boot : boot_id);
	int64_t id = 0;
	T_EQ_INT(store_journal_add(st, &e, &id), 0);
	return id;
}

static bool kept(struct store *st, int64_t id)
{
	struct store_journal *v = NULL;
	size_t n = 0;
	bool found = false;
	T_EQ_INT(store_journal_list(st, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		found |= v[i].id == id;
	free(v);
	return found;
}

/* exec_recover_in with its standard error in out (malloc'd). */
static int recover_captured(struct store *st, const struct rscope *sc, char **out)
{
	char path[160];
	in_base(path, sizeof(path), "stderr");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int saved = dup(STDERR_FILENO);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	int r = exec_recover_in(st, sc);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	*out = NULL;
	util_read_file(path, out, NULL);
	unlink(path);
	return r;
}

/* The report of row id names the database, the row, its kind and target, and why. */
static void reported(const char *log, const char *db, int64_t id, const char *kind, const char *target, const char *why)
{
	char want[1200];
	snprintf(want, sizeof(want), "%s: journal row %lld (%s %s) refused: %s", db, (long long)id, kind, target, why);
	bool ok = log && strstr(log, want);
	T_CHECK(ok);
	if (!ok)
		fprintf(stderr, "  wanted: %s\n  in: %s\n", want, log ? log : "(nothing)");
	snprintf(want, sizeof(want), "not acted on, kept in the journal (once you have undone it yourself, or know it is not kab's: sqlite3 %s \"DELETE FROM journal WHERE id = %lld\")",
		 db, (long long)id);
	T_CHECK(log && strstr(log, want));
}

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static bool alive(pid_t pid)
{
	int status;
	return waitpid(pid, &status, WNOHANG) == 0;
}

/* The rows and their kin, none acted on; kab's own undone. */
static void test_confined(void)
{
	char state[160], db[160], victim[160], passwd[160], text[512];
	in_base(state, sizeof(state), "state");
	struct strbuf err = { 0 };
	state_reset();
	T_EQ_INT(state_init(state, &err), 0);
	sb_free(&err);
	t_db_path(db, sizeof(db), "/tmp/kab-unit-recover-db-XXXXXX", NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	if (!st)
		return;

	/* root-only files kab must never write or remove */
	in_base(passwd, sizeof(passwd), "passwd");
	put(passwd, "root:x:0:0:root:/root:/bin/bash\n");
	T_EQ_INT(chmod(passwd, 0600), 0);
	in_base(victim, sizeof(victim), "delete-me");
	put(victim, "root's\n");
	char core[256];
	get("/proc/sys/kernel/core_pattern", core, sizeof(core));

	/* knobs: outside /proc/sys and /sys, off the allow list, "..", a link */
	int64_t k_passwd = row(st, "knob", passwd, "written by uid 65534 through root", NULL);
	int64_t k_core = row(st, "knob", "/proc/sys/kernel/core_pattern", "|/tmp/pwn", NULL);
	int64_t k_dots = row(st, "knob", "/proc/sys/vm/../kernel/core_pattern", "|/tmp/pwn", NULL);
	char link[160];
	in_base(link, sizeof(link), "sys");
	T_EQ_INT(symlink(base, link), 0);
	char via[200];
	snprintf(via, sizeof(via), "%s/passwd", link);
	int64_t k_link = row(st, "knob", via, "through a link", NULL);

	/* swap files: outside the state directory; in it but a link to root's
	 * file; a job directory that is a link; kab's own, and one gone */
	int64_t s_out = row(st, "swapfile", victim, NULL, NULL);
	char jobs[200], jd[220], p[260];
	snprintf(jobs, sizeof(jobs), "%s/jobs", state);
	T_EQ_INT(mkdir(jobs, 0700), 0);
	snprintf(jd, sizeof(jd), "%s/job1-aB3dEf", jobs);
	T_EQ_INT(mkdir(jd, 0700), 0);
	snprintf(p, sizeof(p), "%s/swap-Link00", jd);
	T_EQ_INT(symlink(victim, p), 0);
	int64_t s_link = row(st, "swapfile", p, NULL, NULL);
	char elsewhere[160], ejd[220];
	in_base(elsewhere, sizeof(elsewhere), "elsewhere");
	T_EQ_INT(mkdir(elsewhere, 0700), 0);
	snprintf(p, sizeof(p), "%s/swap-Kept00", elsewhere);
	put(p, "not kab's\n");
	snprintf(ejd, sizeof(ejd), "%s/job2-aB3dEf", jobs);
	T_EQ_INT(symlink(elsewhere, ejd), 0);
	snprintf(p, sizeof(p), "%s/swap-Kept00", ejd);
	int64_t s_jdlink = row(st, "swapfile", p, NULL, NULL);
	snprintf(p, sizeof(p), "%s/swap-..0000", jd);
	int64_t s_name = row(st, "swapfile", p, NULL, NULL);
	char own[260];
	snprintf(own, sizeof(own), "%s/swap-Own000", jd);
	put(own, "a swap file kab made\n");
	int64_t s_own = row(st, "swapfile", own, NULL, "another-boot");
	snprintf(p, sizeof(p), "%s/swap-Gone00", jd);
	int64_t s_gone = row(st, "swapfile", p, NULL, NULL);

	/* cgroups: a directory anywhere, and one shaped like kab's under the
	 * scope's root that is no cgroup file system; each lists a live pid */
	pid_t pid = sleeper();
	char procs[64];
	snprintf(procs, sizeof(procs), "%d\n", (int)pid);
	char cgany[160], cgroot[160], cgkab[200], cgstep[240];
	in_base(cgany, sizeof(cgany), "anycg");
	T_EQ_INT(mkdir(cgany, 0755), 0);
	snprintf(p, sizeof(p), "%s/cgroup.procs", cgany);
	put(p, procs);
	in_base(cgroot, sizeof(cgroot), "cg");
	snprintf(cgkab, sizeof(cgkab), "%s/kab", cgroot);
	snprintf(cgstep, sizeof(cgstep), "%s/job1-step3", cgkab);
	T_EQ_INT(util_mkdir_p(cgstep, 0755), 0);
	snprintf(p, sizeof(p), "%s/cgroup.procs", cgstep);
	put(p, procs);
	int64_t c_any = row(st, "cgroup", cgany, NULL, NULL);
	int64_t c_fake = row(st, "cgroup", cgstep, NULL, NULL);
	snprintf(p, sizeof(p), "%s/../../anycg", cgkab);
	int64_t c_dots = row(st, "cgroup", p, NULL, NULL);

	/* a tag kab does not give, a device it does not make, a kind it does not know */
	int64_t f_tag = row(st, "fcount", "../../../../etc", NULL, NULL);
	int64_t z_dev = row(st, "zram", "/dev/sda", "0", NULL);
	int64_t u_kind = row(st, "exec", "/bin/sh", "-c id", NULL);

	/* kab's own knob, written back with the value it has */
	char stat_interval[64] = "";
	bool root_knob = geteuid() == 0 && knob_read("/proc/sys/vm/stat_interval", stat_interval, sizeof(stat_interval)) == 0;
	int64_t k_own = root_knob ? row(st, "knob", "/proc/sys/vm/stat_interval", stat_interval, NULL) : 0;

	struct rscope sc = { .state_dir = state_path(), .state_fd = state_fd() };
	snprintf(sc.cg_root, sizeof(sc.cg_root), "%s", cgroot);
	char *log = NULL;
	T_EQ_INT(recover_captured(st, &sc, &log), -EPERM);

	/* nothing acted on */
	get(passwd, text, sizeof(text));
	T_EQ_STR(text, "root:x:0:0:root:/root:/bin/bash\n");
	get(victim, text, sizeof(text));
	T_EQ_STR(text, "root's\n");
	get("/proc/sys/kernel/core_pattern", text, sizeof(text));
	T_EQ_STR(text, core);
	snprintf(p, sizeof(p), "%s/swap-Kept00", elsewhere);
	T_CHECK(access(p, F_OK) == 0);
	snprintf(p, sizeof(p), "%s/swap-Link00", jd);
	struct stat lst;
	T_CHECK(lstat(p, &lst) == 0 && S_ISLNK(lst.st_mode));
	T_CHECK(alive(pid));
	T_CHECK(access(cgstep, F_OK) == 0 && access(cgany, F_OK) == 0);

	/* each reported and kept */
	reported(log, db, k_passwd, "knob", passwd, "not a path under /proc/sys or /sys");
	reported(log, db, k_core, "knob", "/proc/sys/kernel/core_pattern",
		 "/proc/sys/kernel/core_pattern is not a knob kab sets: neither on the allow list");
	reported(log, db, k_dots, "knob", "/proc/sys/vm/../kernel/core_pattern",
		 "not a path under /proc/sys or /sys without \".\", \"..\"");
	reported(log, db, k_link, "knob", via, "not a path under /proc/sys or /sys");
	reported(log, db, s_out, "swapfile", victim, "not a swap file kab makes (");
	char why[600];
	snprintf(p, sizeof(p), "%s/swap-Link00", jd);
	snprintf(why, sizeof(why), "%s is not a regular file of root's", p);
	reported(log, db, s_link, "swapfile", p, why);
	snprintf(p, sizeof(p), "%s/swap-Kept00", ejd);
	snprintf(why, sizeof(why), "%s: not a directory (a symbolic link?)", ejd);
	reported(log, db, s_jdlink, "swapfile", p, why);
	snprintf(p, sizeof(p), "%s/swap-..0000", jd);
	reported(log, db, s_name, "swapfile", p, "not a swap file kab makes (");
	reported(log, db, c_any, "cgroup", cgany, "not one of kab's cgroups (");
	snprintf(why, sizeof(why), "%s is not on a cgroup file system", cgroot);
	reported(log, db, c_fake, "cgroup", cgstep, why);
	snprintf(p, sizeof(p), "%s/../../anycg", cgkab);
	reported(log, db, c_dots, "cgroup", p, "not one of kab's cgroups (");
	reported(log, db, f_tag, "fcount", "../../../../etc", "not the tag kab gives a run's tracing");
	reported(log, db, z_dev, "zram", "/dev/sda", "not a zram device kab made");
	reported(log, db, u_kind, "exec", "/bin/sh", "\"exec\" is not a kind of row this kab journals");
	int64_t refused[] = { k_passwd, k_core, k_dots, k_link, s_out, s_link, s_jdlink,
			      s_name,   c_any,  c_fake, c_dots, f_tag, z_dev,  u_kind };
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		T_CHECK(kept(st, refused[i]));

	/* kab's own: the swap file of another boot removed, one gone
	 * forgotten, the knob written back */
	T_CHECK(access(own, F_OK) != 0);
	T_CHECK(!kept(st, s_own));
	T_CHECK(!kept(st, s_gone));
	if (root_knob) {
		T_CHECK(!kept(st, k_own));
		char now[64];
		T_EQ_INT(knob_read("/proc/sys/vm/stat_interval", now, sizeof(now)), 0);
		T_EQ_STR(now, stat_interval);
	} else {
		t_skip("kab's own knob row", "needs root");
	}
	free(log);

	/* again: the same rows refused again, none lost */
	T_EQ_INT(recover_captured(st, &sc, &log), -EPERM);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		T_CHECK(kept(st, refused[i]));
	free(log);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	store_close(st);
	state_reset();
}

/* The checks on their own, on this machine's files: read-only. */
static void test_checks(void)
{
	struct rscope sc = { .state_fd = -1 };
	int version;
	bool have_cg = cg_memory_version(&version, sc.cg_root, sizeof(sc.cg_root)) == 0;
	struct strbuf why = { 0 };
	int fd = -1;
	/* a knob on the allow list, through a link kab resolves (sysfs), opened not written */
	if (geteuid() == 0 && access("/sys/kernel/mm/transparent_hugepage/enabled", W_OK) == 0) {
		T_EQ_INT(rscope_knob(&sc, "/sys/kernel/mm/transparent_hugepage/enabled", &fd, &why), 0);
		if (fd >= 0)
			close(fd);
	} else {
		t_skip("rscope_knob of an allowed knob", "needs root and a writable transparent_hugepage/enabled");
	}
	T_EQ_INT(rscope_knob(&sc, "/sys/kernel/mm/../../../etc/shadow", &fd, &why), -EPERM);
	T_EQ_INT(rscope_knob(&sc, "/proc/sys/fs/suid_dumpable", &fd, &why), -EPERM);
	T_EQ_INT(rscope_knob(&sc, "/proc/self/attr/current", &fd, &why), -EPERM);
	/* no state directory: no swap file */
	const char *name;
	T_EQ_INT(rscope_swapfile(&sc, "/var/lib/kab/jobs/job1-aB3dEf/swap-aB3dEf", &fd, &name, &why), -EPERM);
	/* the machine's own cgroup hierarchy: a step that is not there, and
	 * names that are not kab's */
	if (have_cg) {
		char p[400];
		snprintf(p, sizeof(p), "%s/kab/job999999999-step0", sc.cg_root);
		T_EQ_INT(rscope_cgroup(&sc, p, &why), 1);
		snprintf(p, sizeof(p), "%s/kab/job1-step1/..", sc.cg_root);
		T_EQ_INT(rscope_cgroup(&sc, p, &why), -EPERM);
		snprintf(p, sizeof(p), "%s/system.slice", sc.cg_root);
		T_EQ_INT(rscope_cgroup(&sc, p, &why), -EPERM);
		snprintf(p, sizeof(p), "%s/kab", sc.cg_root);
		T_EQ_INT(rscope_cgroup(&sc, p, &why), -EPERM);
	}
	T_EQ_INT(rscope_fcount("kab-j12-s3", &why), 0);
	T_EQ_INT(rscope_fcount("kab-j12-s3/../x", &why), -EPERM);
	T_EQ_INT(rscope_fcount("kab-j-s3", &why), -EPERM);
	int id = -1;
	T_EQ_INT(rscope_zram("/dev/zram3", "3", &id, &why), 0);
	T_EQ_INT(id, 3);
	T_EQ_INT(rscope_zram("/dev/zram3", "4", &id, &why), -EPERM);
	T_EQ_INT(rscope_zram("/dev/zram3x", "3", &id, &why), -EPERM);
	sb_free(&why);

	/* the conditioning keys' files, as cond_knobs names them */
	T_CHECK(cond_knob_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
	T_CHECK(cond_knob_file("/sys/devices/system/cpu/cpu127/cpufreq/scaling_governor"));
	T_CHECK(cond_knob_file("/sys/devices/system/cpu/intel_pstate/no_turbo"));
	T_CHECK(cond_knob_file("/sys/devices/system/cpu/cpufreq/boost"));
	T_CHECK(!cond_knob_file("/sys/devices/system/cpu/cpu/cpufreq/scaling_governor"));
	T_CHECK(!cond_knob_file("/sys/devices/system/cpu/cpu0x/cpufreq/scaling_governor"));
	T_CHECK(!cond_knob_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq"));
	T_CHECK(!cond_knob_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor/.."));
}

int main(void)
{
	log_quiet = true;
	if (geteuid() != 0) {
		t_skip("test_confined", "needs root (the state directory must be root's)");
		test_checks();
		return t_done("test_recover");
	}
	T_CHECK(mkdtemp(base) != NULL);
	prov_boot_id(boot_id, sizeof(boot_id));
	test_confined();
	test_checks();
	T_EQ_INT(util_remove_tree(base), 0);
	return t_done("test_recover");
}
