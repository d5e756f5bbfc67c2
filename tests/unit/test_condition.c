/* Conditioning: the [job] keys, the idle detector on /proc/stat samples,
 * the settings provenance records (from a fixture tree) and the report
 * header's line of settings that differ between variants. */
#include "t.h"
#include "t_job.h"
#include "harness/exec/condition.h"
#include "harness/exec/executor.h"
#include "db/store.h"
#include "harness/exec/provenance.h"
#include "harness/report/report.h"
#include "harness/base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/"

static void test_cpus(void)
{
	bool m[JOB_CPUS_MAX] = { 0 };
	const char *why = NULL;
	T_EQ_INT(job_parse_cpus("1", m, &why), 1);
	T_CHECK(m[1] && !m[0]);
	memset(m, 0, sizeof(m));
	T_EQ_INT(job_parse_cpus("0-3,6", m, &why), 5);
	T_CHECK(m[0] && m[3] && !m[4] && m[6]);
	T_EQ_INT(job_parse_cpus("1023", m, &why), 1);
	T_EQ_INT(job_parse_cpus("1024", m, &why), -ERANGE);
	T_EQ_INT(job_parse_cpus("3-1", m, &why), -EINVAL);
	T_EQ_STR(why, "list the CPUs in ascending order, each once");
	T_EQ_INT(job_parse_cpus("1,1", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("2,1", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("1,", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("a", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("1-", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus(" 1", m, &why), -EINVAL);
	T_EQ_INT(job_parse_cpus("-1", m, &why), -EINVAL);
}

static const char *const base_job = "[variant A]\n[variant B]\n[workload t]\ntype = command\ncommand = true\n";

static struct job *job_with(const char *keys)
{
	char text[2048];
	snprintf(text, sizeof(text), "[job]\nname = c\n%s\n%s", keys, base_job);
	return t_parse_job(text);
}

static void test_keys(void)
{
	struct job *j = job_with("");
	T_CHECK(j && !job_conditioned(j));
	if (j) {
		T_EQ_INT(j->cond.drop_caches, 0);
		T_CHECK(j->cond.wait_idle_pct <= 0);
		T_EQ_INT(j->cond.sampler_cpu, -1);
		T_EQ_INT(j->cond.cpufreq, JOB_CPUFREQ_KEEP);
		T_EQ_INT(j->cond.turbo, JOB_KEEP);
	}
	job_free(j);
	j = job_with("drop_caches = yes\ncompact = yes\nwait_idle = 5%\nwait_idle_max = 2m\ncpufreq = performance\nturbo = off\ncpus = 1\nsampler_cpu = 0");
	T_CHECK(j && job_conditioned(j));
	if (j) {
		T_EQ_INT(j->cond.drop_caches, 1);
		T_EQ_INT(j->cond.compact, 1);
		T_NEAR(j->cond.wait_idle_pct, 5, 1e-9);
		T_NEAR(j->cond.wait_idle_max_s, 120, 1e-9);
		T_EQ_INT(j->cond.cpufreq, JOB_CPUFREQ_PERFORMANCE);
		T_EQ_INT(j->cond.turbo, JOB_OFF);
		T_EQ_STR(j->cond.cpus, "1");
		T_EQ_INT(j->cond.sampler_cpu, 0);
		T_EQ_INT(j->cond.cpus_line, 9);
		/* the normalized form parses back to the same conditioning */
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);
		job_print(j, f);
		fclose(f);
		T_CHECK(strstr(out, "wait_idle = 5%\nwait_idle_max = 2m\ncpufreq = performance\nturbo = off\ncpus = 1\nsampler_cpu = 0\n"));
		struct job *again = t_parse_job(out);
		T_CHECK(again && again->cond.turbo == JOB_OFF && again->cond.sampler_cpu == 0);
		job_free(again);
		free(out);
	}
	job_free(j);
	/* bad values: at their lines */
	struct diags d = { 0 };
	char text[2048];
	snprintf(text, sizeof(text), "[job]\nname = c\ndrop_caches = 1\ncpus = 2-1\nsampler_cpu = -1\nwait_idle_max = 5s\nturbo = of\n%s", base_job);
	j = NULL;
	T_CHECK(job_parse_string_nocheck("u.job", text, &j, &d) < 0);
	T_EQ_INT(d.n, 5);
	if (d.n == 5) {
		T_EQ_STR(d.v[0].msg, "unknown drop_caches \"1\" (did you mean \"no\"? choices: no, yes)");
		T_EQ_INT(d.v[0].line, 3);
		T_EQ_STR(d.v[1].msg, "bad cpus \"2-1\": list the CPUs in ascending order, each once");
		T_EQ_INT(d.v[1].line, 4);
		T_EQ_STR(d.v[2].msg, "sampler_cpu -1 is out of range: expected 0 to 1023");
		T_EQ_STR(d.v[3].msg, "wait_idle_max bounds wait_idle: give wait_idle = PERCENT too (wait_idle = 10%)");
		T_EQ_STR(d.v[4].msg, "unknown turbo \"of\" (did you mean \"off\"? choices: keep, off, on)");
		T_EQ_INT(d.v[4].line, 7);
	} else {
		diags_print(&d, stderr);
	}
	diags_free(&d);
	job_free(j);
}

static void test_stat(void)
{
	struct cond_cpu_ticks a, b;
	T_EQ_INT(cond_read_stat(DATA "proc-stat.vm-2cpu.a", &a), 0);
	T_EQ_INT(cond_read_stat(DATA "proc-stat.vm-2cpu.b", &b), 0);
	/* two sampled seconds of this VM under someone's build: fully busy */
	T_EQ_INT(a.busy, 628194ull + 329353 + 444710 + 7282 + 816);
	T_EQ_INT(a.total, a.busy + 1398918 + 17183);
	T_NEAR(cond_busy_pct(&a, &b), 100.0, 1e-9);
	/* an idle second: 2 CPUs, 200 ticks, 3 of them busy */
	struct cond_cpu_ticks c, e;
	T_EQ_INT(cond_parse_stat("cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 1 2 3 4\n", &c), 0);
	T_EQ_INT(cond_parse_stat("cpu  102 0 51 1195 12 0 0 0 0 0\n", &e), 0);
	T_NEAR(cond_busy_pct(&c, &e), 1.5, 1e-9);
	/* no tick, or a counter going down: no answer */
	T_NEAR(cond_busy_pct(&c, &c), -1, 0);
	T_NEAR(cond_busy_pct(&e, &c), -1, 0);
	/* old kernels: four fields */
	T_EQ_INT(cond_parse_stat("cpu  1 2 3 4\n", &c), 0);
	T_EQ_INT(c.total, 10);
	T_EQ_INT(cond_parse_stat("cpu0 1 2 3 4\n", &c), -EINVAL);
	T_EQ_INT(cond_parse_stat("cpu  1 2 3\n", &c), -EINVAL);
	T_EQ_INT(cond_parse_stat("cpu  1 2 x 4\n", &c), -EINVAL);
	T_EQ_INT(cond_parse_stat("cpu  1 2 3 4x\n", &c), -EINVAL);
	T_EQ_INT(cond_parse_stat("", &c), -EINVAL);
}

static bool stop_now(void) { return true; }

static void test_wait_idle(void)
{
	double busy = 0, waited = 0;
	/* a file that never moves: no window measures, so the bound passes, not idle */
	T_EQ_INT(cond_wait_idle(DATA "proc-stat.vm-2cpu.a", 50, 0.2, 0.05, NULL, &busy, &waited), 0);
	T_NEAR(busy, -1, 0);
	T_CHECK(waited >= 0.15 && waited < 1);
	/* this machine is always below 101% busy */
	T_EQ_INT(cond_wait_idle("/proc/stat", 101, 5, 0.05, NULL, &busy, &waited), 1);
	T_CHECK(busy >= 0 && busy <= 100);
	T_EQ_INT(cond_wait_idle("/proc/stat", 101, 5, 0.05, stop_now, &busy, &waited), -EINTR);
	T_EQ_INT(cond_wait_idle(DATA "no-such-stat", 50, 1, 0.05, NULL, &busy, &waited), -ENOENT);

	struct job_condition c = { .wait_idle_pct = 101, .wait_idle_max_s = 5, .sampler_cpu = 1, .cpus = (char *)"0" };
	char note[512];
	struct strbuf err = { 0 };
	T_EQ_INT(cond_before_run(&c, NULL, note, sizeof(note), &err), 0);
	T_EQ_INT(err.len, 0);
	sb_free(&err);
	T_CHECK(strncmp(note, "idle=yes busy=", 14) == 0);
	T_CHECK(strstr(note, "below=101% waited=") && strstr(note, "s\ncpus=0\nsampler_cpu=1\n"));
}

static void test_knobs(void)
{
	/* this VM has no cpufreq: the same words as kab check */
	struct job_condition c = { .cpufreq = JOB_CPUFREQ_PERFORMANCE, .sampler_cpu = -1 };
	struct job_variant v;
	struct strbuf err = { 0 };
	if (access("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", F_OK) == 0) {
		printf("test_condition: this machine has cpufreq; the no-cpufreq message is not checked\n");
		return;
	}
	T_EQ_INT(cond_knobs(&c, &v, &err), -ENOENT);
	T_EQ_STR(err.len ? err.buf : "",
		 "cpufreq = performance: this machine has no cpufreq (no /sys/devices/system/cpu/cpu0/cpufreq): remove the key, or run on bare metal");
	sb_free(&err);
	c = (struct job_condition){ .turbo = JOB_OFF, .sampler_cpu = -1 };
	if (access("/sys/devices/system/cpu/cpufreq/boost", F_OK) != 0 && access("/sys/devices/system/cpu/intel_pstate/no_turbo", F_OK) != 0) {
		T_EQ_INT(cond_knobs(&c, &v, &err), -ENOENT);
		T_CHECK(err.len && strncmp(err.buf, "turbo = off: this machine has no turbo switch", 45) == 0);
		sb_free(&err);
	}
	c = (struct job_condition){ .sampler_cpu = -1 };
	T_EQ_INT(cond_knobs(&c, &v, &err), 0);
	T_EQ_INT(err.len, 0);
	sb_free(&err);
	T_EQ_INT(v.n_knobs, 0);
	cond_knobs_free(&v);
}

/* A governor set through the knob journal, then kab killed before it put
 * it back: the journal holds the original. A file stands in for
 * scaling_governor, and the next start (exec_recover) refuses to write a
 * file outside /sys: the row stays, the file is not touched. What a row
 * may restore is test_recover.c's. */
static void test_recover(void)
{
	char dir[] = "/tmp/kab-test-cond.XXXXXX", gov[64], path[256];
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(gov, sizeof(gov), "%s/scaling_governor", dir);
	FILE *f = fopen(gov, "w");
	T_CHECK(f && fputs("powersave\n", f) >= 0 && fclose(f) == 0);
	t_db_path(path, sizeof(path), "/tmp/kab-test-cond-db.XXXXXX", NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	if (!st)
		return;
	struct job_knob k = { .kind = JOB_KNOB_SYSFS, .name = (char *)"cpufreq", .path = gov, .value = (char *)"performance" };
	struct job_variant v = { .name = (char *)"[job] cpufreq", .knobs = &k, .n_knobs = 1 };
	char boot_id[64], in_force[256], now[64];
	struct strbuf err = { 0 };
	prov_boot_id(boot_id, sizeof(boot_id));
	struct knob_applied *a = NULL;
	size_t n = 0;
	T_EQ_INT(knob_apply(st, 0, boot_id, &v, &a, &n, in_force, sizeof(in_force), &err), 0);
	sb_free(&err);
	T_EQ_INT(knob_read(gov, now, sizeof(now)), 0);
	T_EQ_STR(now, "performance");
	free(a); /* killed: never restored */
	struct store_journal *jv = NULL;
	size_t nj = 0;
	T_EQ_INT(store_journal_list(st, &jv, &nj), 0);
	T_EQ_INT(nj, 1);
	free(jv);
	T_EQ_INT(exec_recover(st), -EPERM);
	T_EQ_INT(knob_read(gov, now, sizeof(now)), 0);
	T_EQ_STR(now, "performance");
	T_EQ_INT(store_journal_list(st, &jv, &nj), 0);
	T_EQ_INT(nj, 1);
	if (nj == 1)
		T_EQ_STR(jv[0].original, "powersave");
	free(jv);
	store_close(st);
	unlink(path);
	unlink(gov);
	rmdir(dir);
}

static void test_pin(void)
{
	cpu_set_t before, now;
	T_EQ_INT(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
	if (!CPU_ISSET(0, &before) || !CPU_ISSET(1, &before)) {
		printf("test_condition: needs CPUs 0 and 1; pinning not checked\n");
		return;
	}
	struct job_condition c = { .cpus = (char *)"1", .sampler_cpu = -1 };
	struct cond_pin p = { 0 };
	struct strbuf err = { 0 };
	T_EQ_INT(cond_pin_workload(&c, &p, &err), 0);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(1, &now));
	/* no sampler_cpu: the sampler takes the others */
	T_EQ_INT(cond_pin_sampler(&c, &p, &err), 0);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(!CPU_ISSET(1, &now) && CPU_ISSET(0, &now) && CPU_COUNT(&now) == CPU_COUNT(&before) - 1);
	cond_unpin(&p);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(CPU_EQUAL(&now, &before));
	/* sampler_cpu alone */
	c = (struct job_condition){ .sampler_cpu = 1 };
	T_EQ_INT(cond_pin_workload(&c, &p, &err), 0);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(CPU_EQUAL(&now, &before));
	T_EQ_INT(cond_pin_sampler(&c, &p, &err), 0);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(1, &now));
	cond_unpin(&p);
	pthread_getaffinity_np(pthread_self(), sizeof(now), &now);
	T_CHECK(CPU_EQUAL(&now, &before));
	/* nothing set: nothing done */
	c = (struct job_condition){ .sampler_cpu = -1 };
	T_EQ_INT(cond_pin_workload(&c, &p, &err), 0);
	T_CHECK(!p.saved);
	T_EQ_INT(cond_pin_sampler(&c, &p, &err), 0);
	cond_unpin(&p);
	T_EQ_INT(err.len, 0);
	sb_free(&err);
}

static void test_settings(void)
{
	char buf[4096];
	prov_settings(DATA "settings-bare", buf, sizeof(buf));
	T_EQ_STR(buf, "/sys/kernel/mm/transparent_hugepage/enabled=madvise\n"
		      "/sys/kernel/mm/transparent_hugepage/defrag=madvise\n"
		      "/sys/kernel/mm/transparent_hugepage/shmem_enabled=never\n"
		      "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled=inherit\n"
		      "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled=never\n"
		      "/sys/kernel/mm/lru_gen/enabled=0x0007\n"
		      "/proc/sys/vm/swappiness=100\n"
		      "/sys/module/zswap/parameters/compressor=zstd\n"
		      "/sys/module/zswap/parameters/enabled=Y\n"
		      "/sys/module/zswap/parameters/max_pool_percent=20\n"
		      "cpufreq.governor=mixed: cpu0 performance, cpu1 powersave\n"
		      "cpufreq.turbo=off\n");
	/* a VM: no cpufreq, no turbo, no lru_gen */
	prov_settings(DATA "no-such-root", buf, sizeof(buf));
	T_EQ_STR(buf, "cpufreq.governor=none\ncpufreq.turbo=none\n");
	/* lines that do not fit are left out, never cut */
	prov_settings(DATA "settings-bare", buf, 60);
	T_EQ_STR(buf, "/sys/kernel/mm/transparent_hugepage/enabled=madvise\n");
	char name[128];
	T_EQ_STR(store_setting_name("/sys/kernel/mm/transparent_hugepage/enabled", name, sizeof(name)), "transparent_hugepage/enabled");
	T_EQ_STR(store_setting_name("/proc/sys/vm/swappiness", name, sizeof(name)), "vm.swappiness");
	T_EQ_STR(store_setting_name("/sys/module/zswap/parameters/enabled", name, sizeof(name)), "zswap/enabled");
	T_EQ_STR(store_setting_name("cpufreq.governor", name, sizeof(name)), "cpufreq.governor");
}

static void test_differ(void)
{
	const char *names[] = { "base", "patched", "third" };
	const char *a = "/sys/kernel/mm/transparent_hugepage/enabled=always\n/proc/sys/vm/swappiness=60\ncpufreq.governor=none\n";
	const char *b = "/sys/kernel/mm/transparent_hugepage/enabled=madvise\n/proc/sys/vm/swappiness=100\ncpufreq.governor=none\n";
	const char *s2[] = { a, b };
	const char *knobs[] = { "/proc/sys/vm/swappiness" };
	char buf[1024];
	report_settings_differ(s2, names, 2, knobs, 1, buf, sizeof(buf));
	T_EQ_STR(buf, "transparent_hugepage/enabled (base: always, patched: madvise)");
	report_settings_differ(s2, names, 2, NULL, 0, buf, sizeof(buf));
	T_EQ_STR(buf, "transparent_hugepage/enabled (base: always, patched: madvise); vm.swappiness (base: 60, patched: 100)");
	const char *same[] = { a, a };
	report_settings_differ(same, names, 2, NULL, 0, buf, sizeof(buf));
	T_EQ_STR(buf, "");
	/* a variant without recorded settings (an older database) is left out */
	const char *old[] = { a, "", b };
	report_settings_differ(old, names, 3, knobs, 1, buf, sizeof(buf));
	T_EQ_STR(buf, "transparent_hugepage/enabled (base: always, third: madvise)");
	const char *one[] = { a, NULL };
	report_settings_differ(one, names, 2, NULL, 0, buf, sizeof(buf));
	T_EQ_STR(buf, "");
	/* a key only one variant has */
	const char *c = "/sys/kernel/mm/lru_gen/enabled=0x0007\n";
	const char *s3[] = { "", c, "/sys/kernel/mm/lru_gen/enabled=0x0000\n" };
	report_settings_differ(s3, names, 3, NULL, 0, buf, sizeof(buf));
	T_EQ_STR(buf, "lru_gen/enabled (patched: 0x0007, third: 0x0000)");
	const char *s4[] = { a, c };
	report_settings_differ(s4, names, 2, knobs, 1, buf, sizeof(buf));
	T_EQ_STR(buf, "transparent_hugepage/enabled (base: always, patched: (none)); cpufreq.governor (base: none, patched: (none)); lru_gen/enabled (base: (none), patched: 0x0007)");
}

int main(void)
{
	test_cpus();
	test_keys();
	test_stat();
	test_wait_idle();
	test_knobs();
	test_pin();
	test_recover();
	test_settings();
	test_differ();
	return t_done("test_condition");
}
