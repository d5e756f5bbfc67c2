/* /etc/kab/machine.conf: comments, blanks, spaces and CRLF; a missing file
 * sets nothing; each bad line is named with its number. knobs.allow: its
 * patterns, how they match, and a job's knobs refused, then accepted once
 * the machine allows them. */
#include "harness/job/job.h"
#include "harness/job/knob_allow.h"
#include "harness/job/machine.h"
#include "t.h"
#include "t_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int load(const char *text, struct machine_conf *mc, struct diags *d)
{
	char path[160];
	if (t_conf_file(path, sizeof(path), "/tmp/kab-machine-XXXXXX", text) < 0)
		return -EIO;
	int r = machine_conf_load(mc, path, d);
	t_conf_remove(path);
	return r;
}

static bool pattern_matches(const char *pattern, const char *path)
{
	char *p = NULL;
	const char *why = NULL;
	if (knob_allow_parse(pattern, &p, &why) < 0)
		return false;
	bool m = knob_allow_match(p, path);
	free(p);
	return m;
}

static const char *pattern_error(const char *pattern)
{
	char *p = NULL;
	const char *why = NULL;
	int r = knob_allow_parse(pattern, &p, &why);
	free(p);
	return r == -EINVAL ? why : NULL;
}

static void test_patterns(void)
{
	char *p = NULL;
	const char *why = NULL;
	T_EQ_INT(knob_allow_parse("vm.*", &p, &why), 0);
	T_EQ_STR(p, "/proc/sys/vm/*");
	free(p);
	T_EQ_INT(knob_allow_parse("kernel/numa_balancing", &p, &why), 0);
	T_EQ_STR(p, "/proc/sys/kernel/numa_balancing");
	free(p);
	T_EQ_INT(knob_allow_parse("/sys/kernel/mm/**", &p, &why), 0);
	T_EQ_STR(p, "/sys/kernel/mm/**");
	free(p);

	/* "*" stays in its component, "**" crosses any number of them */
	T_CHECK(pattern_matches("vm.*", "/proc/sys/vm/swappiness"));
	T_CHECK(!pattern_matches("vm.*", "/proc/sys/vm"));
	T_CHECK(!pattern_matches("vm.*", "/proc/sys/kernel/core_pattern"));
	T_CHECK(!pattern_matches("vm.*", "/proc/sys/vm/a/b"));
	T_CHECK(pattern_matches("/sys/kernel/mm/**", "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"));
	T_CHECK(pattern_matches("/sys/kernel/mm/**", "/sys/kernel/mm"));
	T_CHECK(!pattern_matches("/sys/kernel/mm/**", "/sys/kernel/mmx/y"));
	T_CHECK(!pattern_matches("/sys/kernel/mm/**", "/sys/kernel/uevent_helper"));
	T_CHECK(pattern_matches("/sys/**/enabled", "/sys/enabled"));
	T_CHECK(pattern_matches("/sys/**/enabled", "/sys/module/zswap/parameters/enabled"));
	T_CHECK(!pattern_matches("/sys/**/enabled", "/sys/module/zswap/parameters/enabled/x"));
	T_CHECK(pattern_matches("/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled",
				"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"));
	T_CHECK(!pattern_matches("/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled",
				 "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/x/enabled"));
	T_CHECK(pattern_matches("/sys/devices/virtual/block/zram*/{comp_algorithm,disksize}",
				"/sys/devices/virtual/block/zram12/disksize"));
	T_CHECK(pattern_matches("/sys/devices/virtual/block/zram*/{comp_algorithm,disksize}",
				"/sys/devices/virtual/block/zram/comp_algorithm"));
	T_CHECK(!pattern_matches("/sys/devices/virtual/block/zram*/{comp_algorithm,disksize}",
				 "/sys/devices/virtual/block/zram0/reset"));
	T_CHECK(!pattern_matches("/sys/devices/virtual/block/zram*/{comp_algorithm,disksize}",
				 "/sys/devices/virtual/block/zram0/disksizex"));
	T_CHECK(pattern_matches("/sys/a{b,c}d*", "/sys/acdxyz"));

	T_CHECK(pattern_error("/etc/passwd") != NULL);
	T_CHECK(pattern_error("relative/path*") == NULL); /* a sysctl name with slashes */
	T_CHECK(pattern_error("/sys/kernel/../power/state") != NULL);
	T_CHECK(pattern_error("/proc/sys/vm/../kernel/core_pattern") != NULL);
	T_CHECK(pattern_error("/sys/a**") != NULL);
	T_CHECK(pattern_error("/sys/{a,b") != NULL);
	T_CHECK(pattern_error("/sys/a}") != NULL);
	T_CHECK(pattern_error("/sys/{a*,b}") != NULL);
	T_CHECK(pattern_error("/sys/") != NULL);
	T_CHECK(pattern_error("vm. x") != NULL);
}

/* The defaults: memory management in, what runs programs or weakens
 * hardening out. */
static void test_defaults(void)
{
	static const char *const in[] = {
		"/proc/sys/vm/swappiness",
		"/proc/sys/vm/page-cluster",
		"/proc/sys/vm/overcommit_memory",
		"/sys/kernel/mm/transparent_hugepage/enabled",
		"/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled",
		"/sys/kernel/mm/ksm/run",
		"/sys/kernel/mm/lru_gen/enabled",
		"/sys/module/zswap/parameters/enabled",
		"/sys/module/zswap/parameters/max_pool_percent",
		"/sys/devices/virtual/block/zram0/comp_algorithm",
		"/sys/devices/virtual/block/zram3/disksize",
		"/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages",
		"/proc/sys/kernel/numa_balancing",
	};
	static const char *const out[] = {
		"/proc/sys/kernel/core_pattern",
		"/proc/sys/kernel/modprobe",
		"/proc/sys/kernel/numa_balancing_x",
		"/sys/kernel/uevent_helper",
		"/sys/power/state",
		"/sys/kernel/security/lockdown",
		"/sys/kernel/debug/tracing/tracing_on",
		"/proc/sys/vm/mmap_min_addr",
		"/proc/sys/vm/unprivileged_userfaultfd",
		"/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds",
		"/sys/kernel/mm/page_idle/bitmap",
		"/sys/devices/virtual/block/zram0/backing_dev",
		"/sys/devices/virtual/block/zram0/reset",
		"/sys/block/zram0/disksize", /* a link: only its target is matched */
		"/sys/module/zswap/parameters/x/y",
	};
	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		if (!knob_allowed(in[i], NULL, 0)) {
			T_CHECK(!in[i]);
			fprintf(stderr, "  refused: %s\n", in[i]);
		}
	for (size_t i = 0; i < ARRAY_SIZE(out); i++)
		if (knob_allowed(out[i], NULL, 0)) {
			T_CHECK(!out[i]);
			fprintf(stderr, "  allowed: %s\n", out[i]);
		}
	/* an operator's pattern wins over the default exceptions */
	struct knob_pattern extra[] = { { .text = "vm.mmap_min_addr", .line = 1 }, { .text = "/sys/power/*", .line = 2 } };
	T_CHECK(knob_allowed("/proc/sys/vm/mmap_min_addr", extra, 2));
	T_CHECK(knob_allowed("/sys/power/state", extra, 2));
	T_CHECK(!knob_allowed("/proc/sys/kernel/core_pattern", extra, 2));
}

/* Links and missing files: the canonical path of what would be written. */
static void test_canonical(void)
{
	char dir[] = "/tmp/kab-canon-XXXXXX", path[128], link[128];
	char *c = NULL;
	if (!mkdtemp(dir)) {
		T_CHECK(!"mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/real", dir);
	mkdir(path, 0700);
	snprintf(link, sizeof(link), "%s/link", dir);
	T_EQ_INT(symlink("real", link), 0);

	snprintf(path, sizeof(path), "%s/link/knob", dir);
	T_EQ_INT(knob_allow_canonical(path, &c), 0);
	snprintf(path, sizeof(path), "%s/real/knob", dir);
	T_EQ_STR(c, path);
	free(c);
	snprintf(path, sizeof(path), "%s/link/no/such/knob", dir);
	T_EQ_INT(knob_allow_canonical(path, &c), 0);
	snprintf(path, sizeof(path), "%s/real/no/such/knob", dir);
	T_EQ_STR(c, path);
	free(c);
	snprintf(path, sizeof(path), "%s/link/../x", dir);
	T_EQ_INT(knob_allow_canonical(path, &c), -EINVAL);
	T_EQ_INT(knob_allow_canonical("relative", &c), -EINVAL);
	T_EQ_INT(knob_allow_canonical("/sys/kernel/no-such-dir/knob", &c), 0);
	T_EQ_STR(c, "/sys/kernel/no-such-dir/knob");
	free(c);
	/* a sysfs link out of the allowed list, where this machine has one */
	if (access("/sys/block/zram0", F_OK) == 0) {
		T_EQ_INT(knob_allow_canonical("/sys/block/zram0/disksize", &c), 0);
		T_CHECK(strncmp(c, "/sys/devices/", 13) == 0);
		T_CHECK(knob_allowed(c, NULL, 0));
		free(c);
		T_EQ_INT(knob_allow_canonical("/sys/block/zram0/bdi/read_ahead_kb", &c), 0);
		T_CHECK(!knob_allowed(c, NULL, 0));
		free(c);
	}
	snprintf(path, sizeof(path), "%s/link", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/real", dir);
	rmdir(path);
	rmdir(dir);
}

/* whether d holds one problem, naming path and each of the words */
static bool said(const struct diags *d, const char *path, const char *const *words)
{
	bool all = d->n == 1 && strstr(d->v[0].msg, path);
	for (; all && *words; words++)
		all = strstr(d->v[0].msg, *words) != NULL;
	if (!all)
		diags_print(d, stderr);
	return all;
}

/* machine.conf decides what kab trusts: read only when its owner is root
 * or the user running kab and no group or other may write it or a
 * directory on its way; readable by all is fine, and a missing file is
 * still nothing set */
static void test_conf_trust(void)
{
	char path[160], fix[200], dir[160];
	struct machine_conf mc;
	struct diags d = { 0 };
	T_EQ_INT(t_conf_file(path, sizeof(path), "/tmp/kab-trust-XXXXXX", "switch = reboot\n"), 0);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';

	/* clean, 0644 and 0604: read */
	T_EQ_INT(machine_conf_load(&mc, path, &d), 0);
	T_CHECK(mc.has_switch && mc.switch_mode == JOB_SWITCH_REBOOT);
	T_EQ_INT(d.n, 0);
	machine_conf_free(&mc);
	T_EQ_INT(chmod(path, 0604), 0);
	T_EQ_INT(machine_conf_load(&mc, path, &d), 0);
	T_CHECK(mc.has_switch);
	T_EQ_INT(d.n, 0);
	machine_conf_free(&mc);

	/* group-writable, world-writable: refused, named, with the chmod */
	snprintf(fix, sizeof(fix), "(chmod go-w %s)", path);
	T_EQ_INT(chmod(path, 0664), 0);
	T_EQ_INT(machine_conf_load(&mc, path, &d), -EPERM);
	T_CHECK(!mc.has_switch);
	T_CHECK(said(&d, path, (const char *[]){ "machine's settings file has mode 0664", fix, NULL }));
	diags_free(&d);
	machine_conf_free(&mc);
	T_EQ_INT(chmod(path, 0646), 0);
	T_EQ_INT(machine_conf_load(&mc, path, &d), -EPERM);
	T_CHECK(said(&d, path, (const char *[]){ "mode 0646", fix, NULL }));
	diags_free(&d);
	machine_conf_free(&mc);
	T_EQ_INT(chmod(path, 0644), 0);

	/* its directory writable by its group: refused, naming the directory */
	T_EQ_INT(chmod(dir, 0770), 0);
	snprintf(fix, sizeof(fix), "(chmod go-w %s)", dir);
	T_EQ_INT(machine_conf_load(&mc, path, &d), -EPERM);
	T_CHECK(said(&d, path, (const char *[]){ dir, "mode 0770", fix, NULL }));
	diags_free(&d);
	machine_conf_free(&mc);
	T_EQ_INT(chmod(dir, 0700), 0);

	if (geteuid() == 0) {
		/* the file, or its directory, owned by nobody: refused, with the chown */
		T_EQ_INT(chown(path, 65534, 65534), 0);
		snprintf(fix, sizeof(fix), "(chown root %s; chmod go-w %s)", path, path);
		T_EQ_INT(machine_conf_load(&mc, path, &d), -EPERM);
		T_CHECK(said(&d, path, (const char *[]){ "owner uid 65534", fix, NULL }));
		diags_free(&d);
		machine_conf_free(&mc);
		T_EQ_INT(chown(path, 0, 0), 0);
		T_EQ_INT(chown(dir, 65534, 65534), 0);
		snprintf(fix, sizeof(fix), "(chown root %s; chmod go-w %s)", dir, dir);
		T_EQ_INT(machine_conf_load(&mc, path, &d), -EPERM);
		T_CHECK(said(&d, path, (const char *[]){ dir, "owner uid 65534", fix, NULL }));
		diags_free(&d);
		machine_conf_free(&mc);
		T_EQ_INT(chown(dir, 0, 0), 0);
	} else {
		t_skip("machine.conf, or its directory, owned by nobody", "needs root (chown)");
	}

	/* missing, in a directory that exists: nothing set, nothing said */
	t_conf_remove(path);
	T_EQ_INT(mkdir(dir, 0700), 0);
	T_EQ_INT(machine_conf_load(&mc, path, &d), 0);
	T_CHECK(!mc.has_switch && !mc.n_knob_allow);
	T_EQ_INT(d.n, 0);
	machine_conf_free(&mc);
	rmdir(dir);

	/* in /tmp itself (sticky, open to all): refused, naming the move */
	char in_tmp[] = "/tmp/kab-trust-XXXXXX";
	int fd = mkstemp(in_tmp);
	T_CHECK(fd >= 0 && write(fd, "switch = reboot\n", 16) == 16);
	close(fd);
	T_EQ_INT(machine_conf_load(&mc, in_tmp, &d), -EPERM);
	T_CHECK(said(&d, in_tmp, (const char *[]){ "in the directory /tmp", "sticky bit", "/etc/kab", NULL }));
	diags_free(&d);
	machine_conf_free(&mc);
	unlink(in_tmp);
}

static void test_conf_patterns(void)
{
	struct machine_conf mc;
	struct diags d = { 0 };
	T_EQ_INT(load("knobs.allow = kernel.core_pattern\nknobs.allow =  /sys/power/state\t/sys/kernel/uevent_helper \n", &mc, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_INT(mc.n_knob_allow, 3);
	if (mc.n_knob_allow == 3) {
		T_EQ_STR(mc.knob_allow[0].text, "kernel.core_pattern");
		T_EQ_INT(mc.knob_allow[0].line, 1);
		T_EQ_STR(mc.knob_allow[2].text, "/sys/kernel/uevent_helper");
		T_EQ_INT(mc.knob_allow[2].line, 2);
	}
	T_CHECK(knob_allowed("/proc/sys/kernel/core_pattern", mc.knob_allow, mc.n_knob_allow));
	T_CHECK(knob_allowed("/sys/kernel/uevent_helper", mc.knob_allow, mc.n_knob_allow));
	T_CHECK(knob_allowed("/sys/power/state", mc.knob_allow, mc.n_knob_allow));
	T_CHECK(!knob_allowed("/proc/sys/kernel/modprobe", mc.knob_allow, mc.n_knob_allow));
	machine_conf_free(&mc);

	T_EQ_INT(load("knobs.allow = vm.* /etc/passwd\nknobs.allow =\nknobs.allow = /sys/a/../b\n", &mc, &d), -EINVAL);
	T_EQ_INT(d.n, 3);
	if (d.n == 3) {
		T_EQ_INT(d.v[0].line, 1);
		T_CHECK(strstr(d.v[0].msg, "bad knobs.allow pattern \"/etc/passwd\"") != NULL);
		T_EQ_INT(d.v[1].line, 2);
		T_CHECK(strstr(d.v[1].msg, "needs at least one pattern") != NULL);
		T_EQ_INT(d.v[2].line, 3);
	}
	T_EQ_INT(mc.n_knob_allow, 1); /* the good one of line 1 */
	machine_conf_free(&mc);
	diags_free(&d);
}

#define JOB_HEAD "[job]\nname = t\n[workload w]\ntype = command\ncommand = true\n[variant B]\n"

/* kab check on a job: how many problems, and whether one says "not an
 * allowed knob" at line. */
static size_t check_job(const char *conf, const char *text, int line, bool *ret_refused)
{
	char path[160];
	if (t_conf_file(path, sizeof(path), "/tmp/kab-machine-XXXXXX", conf) < 0)
		return 99;
	/* as kab's main does: the file named by $KAB_MACHINE_CONF, loaded
	 * with the configuration, its problems the job's too */
	setenv("KAB_MACHINE_CONF", path, 1);
	struct kab_config cfg;
	struct machine_conf mc;
	struct diags d = { 0 };
	config_resolve(&cfg, t_getenv, &d);
	machine_conf_load(&mc, cfg.v[CONFIG_MACHINE_CONF].value, &d);
	cfg.machine = &mc;
	config_use(&cfg);
	struct job *j = NULL;
	if (job_parse_string("t.job", text, &j, &d) == 0)
		job_free(j);
	t_conf_remove(path);
	unsetenv("KAB_MACHINE_CONF");
	t_config_from_env();
	machine_conf_free(&mc);
	*ret_refused = false;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].line == line && strstr(d.v[i].msg, "is not an allowed knob: kab sets only memory-management knobs (vm.*,") &&
		    strstr(d.v[i].msg, "knobs.allow in /tmp/kab-machine-"))
			*ret_refused = true;
	size_t n = d.n;
	diags_free(&d);
	return n;
}

/* The three: refused with their line, accepted after knobs.allow. */
static void test_job_knobs(void)
{
	static const struct { const char *key, *path; } knobs[] = {
		{ "sysctl kernel.core_pattern = core", "/proc/sys/kernel/core_pattern" },
		{ "sysfs /sys/kernel/uevent_helper = /bin/true", "/sys/kernel/uevent_helper" },
		{ "sysfs /sys/power/state = freeze", "/sys/power/state" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(knobs); i++) {
		char text[512];
		bool refused;
		snprintf(text, sizeof(text), JOB_HEAD "[variant A]\n%s\n", knobs[i].key);
		T_EQ_INT(check_job("", text, 8, &refused), 1);
		T_CHECK(refused);
		char conf[256];
		snprintf(conf, sizeof(conf), "# the operator allows it\nknobs.allow = %s\n", knobs[i].path);
		size_t n = check_job(conf, text, 8, &refused);
		T_CHECK(!refused);
		/* accepted: no problem at all where the file exists here */
		if (access(knobs[i].path, W_OK) == 0)
			T_EQ_INT(n, 0);
	}
	bool refused;
	T_EQ_INT(check_job("", JOB_HEAD "[variant A]\nsysctl vm.swappiness = 60\n", 8, &refused), 0);
	/* a bad machine.conf fails the job too, naming its own file and line */
	T_CHECK(check_job("knobs.allow = /etc\n", JOB_HEAD "[variant A]\nsysctl vm.swappiness = 60\n", 8, &refused) == 1);
}

int main(void)
{
	struct machine_conf mc;
	struct diags d = { 0 };

	setenv("KAB_MACHINE_CONF", "/nonexistent/kab-machine.conf", 1);
	t_config_from_env();
	T_EQ_STR(machine_conf_path(), "/nonexistent/kab-machine.conf");
	T_EQ_INT(machine_conf_load(&mc, machine_conf_path(), &d), 0);
	T_CHECK(!mc.has_switch);
	T_EQ_INT(d.n, 0);
	unsetenv("KAB_MACHINE_CONF");
	t_config_from_env();
	T_EQ_STR(machine_conf_path(), "/etc/kab/machine.conf");

	T_EQ_INT(load("# comment\n\n   switch   =   reboot  \r\n", &mc, &d), 0);
	T_CHECK(mc.has_switch);
	T_EQ_INT(mc.switch_mode, JOB_SWITCH_REBOOT);
	T_EQ_INT(mc.switch_line, 3);
	T_EQ_INT(d.n, 0);

	T_EQ_INT(load("switch = reboot\nswitch = kexec\n", &mc, &d), 0);
	T_EQ_INT(mc.switch_mode, JOB_SWITCH_KEXEC); /* the last one wins */

	T_EQ_INT(load("#switch = reboot\n", &mc, &d), 0);
	T_CHECK(!mc.has_switch);

	T_EQ_INT(load("switch = warp\nswtich = reboot\njust words\n", &mc, &d), -EINVAL);
	T_EQ_INT(d.n, 3);
	if (d.n == 3) {
		T_EQ_INT(d.v[0].line, 1);
		T_CHECK(strstr(d.v[0].msg, "bad switch \"warp\" (choices: kexec, reboot)") != NULL);
		T_EQ_INT(d.v[1].line, 2);
		T_CHECK(strstr(d.v[1].msg, "did you mean \"switch\"") != NULL);
		T_EQ_INT(d.v[2].line, 3);
		T_CHECK(strstr(d.v[2].msg, "expected key = value") != NULL);
	}
	T_CHECK(!mc.has_switch);
	diags_free(&d);
	machine_conf_free(&mc);

	test_patterns();
	test_defaults();
	test_canonical();
	test_conf_trust();
	test_conf_patterns();
	test_job_knobs();
	return t_done("test_machine");
}
