/* Job file parser: values, defaults, knob paths, continuation lines,
 * diagnostics and the print/parse round trip. No machine checks here
 * (job_parse_string_nocheck), except where a test says so. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/exec/executor.h"
#include "db/store.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define HEAD "[job]\nname = t\n"
#define TWO_VARIANTS "[variant A]\n[variant B]\n"
#define WORKLOAD "[workload w]\ntype = command\ncommand = true\n"

static struct job *parse_ok(const char *text)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_string_nocheck("t.job", text, &j, &d);
	if (r < 0) {
		fprintf(stderr, "unexpected errors in:\n%s", text);
		diags_print(&d, stderr);
	}
	T_EQ_INT(r, 0);
	diags_free(&d);
	return j;
}

/* Parses text expecting errors; returns how many, and the first's line. */
static size_t parse_bad(const char *text, int *ret_line, char **ret_msg)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	int r = job_parse_string_nocheck("t.job", text, &j, &d);
	T_EQ_INT(r, -22);
	T_CHECK(j == NULL);
	size_t n = d.n;
	if (ret_line)
		*ret_line = n ? d.v[0].line : -1;
	if (ret_msg)
		*ret_msg = n && d.v[0].msg ? strdup(d.v[0].msg) : strdup("");
	diags_free(&d);
	return n;
}

static char *print_job(const struct job *j)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	job_print(j, f);
	fclose(f);
	return buf;
}

static void test_defaults(void)
{
	struct job *j = parse_ok(HEAD TWO_VARIANTS WORKLOAD);
	if (!j)
		return;
	T_EQ_STR(j->name, "t");
	T_EQ_INT(j->pairs, 3);
	T_EQ_INT(j->order, JOB_ORDER_ABBA);
	T_NEAR(j->interval_s, 1.0, 0);
	T_EQ_INT(j->n_metrics, 0);
	T_EQ_INT(j->swap.kind, JOB_SWAP_EXISTING);
	T_EQ_INT(j->swap.priority, -1);
	T_EQ_INT(j->n_variants, 2);
	T_EQ_STR(j->variants[0].label, "A");
	T_EQ_STR(j->variants[0].name, "A");
	T_EQ_STR(j->variants[1].kernel, "running");
	T_EQ_INT(j->variants[0].line, 3);
	T_EQ_INT(j->n_workloads, 1);
	T_EQ_INT(j->workloads[0].memory_max, JOB_MEM_UNSET);
	T_EQ_INT(j->workloads[0].memory_swap_max, JOB_MEM_UNSET);
	T_NEAR(j->workloads[0].timeout_s, 0, 0);
	T_EQ_STR(job_param(&j->workloads[0], "command"), "true");
	T_CHECK(job_param(&j->workloads[0], "args") == NULL);
	T_EQ_STR(j->file, "t.job");
	T_CHECK(strstr(j->text, "[workload w]") != NULL);
	job_free(j);
}

/* [swap]'s zswap keys become the zswap module's parameters, in the key
 * table's order; unset ones are kept. */
static void test_zswap_keys(void)
{
	struct job *j = parse_ok(HEAD "[swap]\ndevice = existing\nzswap = on\nzswap.shrinker = off\n"
				      "zswap.compressor = lzo\nzswap.max_pool_percent = 10\n"
				      "zswap.accept_threshold_percent = 0\n" TWO_VARIANTS WORKLOAD);
	if (!j)
		return;
	static const char *const want[][2] = { { "enabled", "Y" },
					       { "shrinker_enabled", "N" },
					       { "compressor", "lzo" },
					       { "max_pool_percent", "10" },
					       { "accept_threshold_percent", "0" } };
	T_EQ_INT(j->swap.zswap_accept_threshold, 0);
	T_EQ_INT(j->swap.n_knobs, 5);
	for (size_t i = 0; i < j->swap.n_knobs && i < 5; i++) {
		char path[128];
		snprintf(path, sizeof(path), "/sys/module/zswap/parameters/%s", want[i][0]);
		T_EQ_STR(j->swap.knobs[i].path, path);
		T_EQ_STR(j->swap.knobs[i].value, want[i][1]);
		T_EQ_INT(j->swap.knobs[i].kind, JOB_KNOB_SYSFS);
	}
	job_free(j);
	j = parse_ok(HEAD TWO_VARIANTS WORKLOAD);
	if (!j)
		return;
	T_EQ_INT(j->swap.zswap_accept_threshold, -1);
	T_EQ_INT(j->swap.zswap_max_pool, -1);
	T_EQ_INT(j->swap.n_knobs, 0);
	job_free(j);
}

static void test_sizes(void)
{
	struct job *j = parse_ok(HEAD TWO_VARIANTS
				 "[swap]\ndevice = zram\nsize = 1.5G\n"
				 "[workload w]\ntype = command\ncommand = true\n"
				 "memory.max = 256M\nmemory.high = 200MiB\nmemory.swap.max = 0\n"
				 "[workload x]\ntype = command\ncommand = true\nmemory.max = max\nmemory.swap.max = 64k\n");
	if (!j)
		return;
	T_EQ_INT(j->swap.size, 1536ull << 20);
	T_EQ_INT(j->workloads[0].memory_max, 256ull << 20);
	T_EQ_INT(j->workloads[0].memory_high, 200ull << 20);
	T_EQ_INT(j->workloads[0].memory_swap_max, JOB_MEM_ZERO);
	T_CHECK(j->workloads[1].memory_max == JOB_MEM_MAX);
	T_EQ_INT(j->workloads[1].memory_swap_max, 64ull << 10);
	char *out = print_job(j);
	T_CHECK(strstr(out, "size = 1536M\n") != NULL);
	T_CHECK(strstr(out, "memory.high = 200M\n") != NULL);
	T_CHECK(strstr(out, "memory.swap.max = 0\n") != NULL);
	T_CHECK(strstr(out, "memory.max = max\n") != NULL);
	T_CHECK(strstr(out, "memory.swap.max = 64K\n") != NULL);
	free(out);
	job_free(j);

	int line;
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "memory.max = 15M\n", &line, NULL), 1);
	T_EQ_INT(line, 8);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "memory.max = 16M\nmemory.high = 17M\n", &line, NULL), 1);
	T_EQ_INT(line, 9);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "memory.max = 1.5\n", NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "memory.max = -1G\n", NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "memory.max = 1Q\n", NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "[swap]\ndevice = zram\nsize = 1023K\n", &line, NULL), 1);
	T_EQ_INT(line, 10);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "[swap]\ndevice = file\n", &line, NULL), 1);
	T_EQ_INT(line, 8);
}

static void test_durations(void)
{
	struct job *j = parse_ok("[job]\nname = t\ninterval = 100ms\n" TWO_VARIANTS WORKLOAD "timeout = 2m\n"
				 "[workload x]\ntype = command\ncommand = true\ntimeout = 1.5\n");
	if (!j)
		return;
	T_NEAR(j->interval_s, 0.1, 1e-12);
	T_NEAR(j->workloads[0].timeout_s, 120, 0);
	T_NEAR(j->workloads[1].timeout_s, 1.5, 0);
	char *out = print_job(j);
	T_CHECK(strstr(out, "interval = 0.1s\n") != NULL);
	T_CHECK(strstr(out, "timeout = 2m\n") != NULL);
	T_CHECK(strstr(out, "timeout = 1.5s\n") != NULL);
	free(out);
	job_free(j);

	/* 300 * 0.001 is not 0.3 in binary; it must still print as 0.3s. */
	j = parse_ok("[job]\nname = t\ninterval = 300ms\n" TWO_VARIANTS WORKLOAD "timeout = 3600s\n");
	if (j) {
		out = print_job(j);
		T_CHECK(strstr(out, "interval = 0.3s\n") != NULL);
		T_CHECK(strstr(out, "timeout = 1h\n") != NULL);
		free(out);
		job_free(j);
	}
	T_EQ_INT(parse_bad("[job]\nname = t\ninterval = 49ms\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\ninterval = 61s\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\ninterval = 1 s\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "timeout = 0\n", NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS WORKLOAD "timeout = 1d\n", NULL, NULL), 1);
}

static void test_numbers_and_enums(void)
{
	struct job *j = parse_ok("[job]\nname = t\npairs = 1000\norder = random\nseed = 18446744073709551615\n"
				 TWO_VARIANTS WORKLOAD);
	if (j) {
		T_EQ_INT(j->pairs, 1000);
		T_EQ_INT(j->order, JOB_ORDER_RANDOM);
		T_CHECK(j->seed == UINT64_MAX);
		job_free(j);
	}
	T_EQ_INT(parse_bad("[job]\nname = t\npairs = 1001\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\npairs = +3\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\npairs = 3x\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\norder = ABBA\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\nseed = 3\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad("[job]\nname = t\nseed = 3\norder = alternate\n" TWO_VARIANTS WORKLOAD, NULL, NULL), 1);
}

static void test_knobs(void)
{
	struct job *j = parse_ok(HEAD
				 "[variant A]\n"
				 "sysctl vm.swappiness = 100\n"
				 "sysctl vm/dirty_ratio = 5\n"
				 "sysctl /proc/sys/kernel/pid_max = 4096\n"
				 "sysctl net.ipv4.conf.eth0/1.forwarding = 1\n"
				 "sysfs /sys/devices/pci0000:00/0000:00:01.0/power/control = auto\n"
				 "sysctl   vm.overcommit_memory: 1\n"
				 "[variant B]\nname = patched\nsysfs /sys/kernel/mm/transparent_hugepage/enabled = always [madvise] never\n"
				 WORKLOAD);
	if (!j)
		return;
	struct job_variant *a = &j->variants[0];
	T_EQ_INT(a->n_knobs, 6);
	if (a->n_knobs == 6) {
		T_EQ_STR(a->knobs[0].path, "/proc/sys/vm/swappiness");
		T_EQ_STR(a->knobs[0].name, "vm.swappiness");
		T_EQ_STR(a->knobs[0].value, "100");
		T_EQ_INT(a->knobs[0].kind, JOB_KNOB_SYSCTL);
		T_EQ_INT(a->knobs[0].line, 4);
		T_EQ_STR(a->knobs[1].path, "/proc/sys/vm/dirty_ratio");
		T_EQ_STR(a->knobs[1].name, "vm.dirty_ratio");
		T_EQ_STR(a->knobs[2].path, "/proc/sys/kernel/pid_max");
		T_EQ_STR(a->knobs[2].name, "kernel.pid_max");
		T_EQ_STR(a->knobs[3].path, "/proc/sys/net/ipv4/conf/eth0.1/forwarding");
		T_EQ_STR(a->knobs[3].name, "net.ipv4.conf.eth0/1.forwarding");
		T_EQ_STR(a->knobs[4].path, "/sys/devices/pci0000:00/0000:00:01.0/power/control");
		T_EQ_STR(a->knobs[4].value, "auto");
		T_EQ_INT(a->knobs[4].kind, JOB_KNOB_SYSFS);
		T_EQ_STR(a->knobs[5].path, "/proc/sys/vm/overcommit_memory");
		T_EQ_STR(a->knobs[5].value, "1");
	}
	T_EQ_STR(j->variants[1].name, "patched");
	T_EQ_STR(j->variants[1].knobs[0].value, "always [madvise] never");
	job_free(j);

	int line;
	/* Two spellings of one file. */
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysctl vm.swappiness = 1\nsysctl vm/swappiness = 2\n[variant B]\n" WORKLOAD,
			   &line, NULL), 1);
	T_EQ_INT(line, 5);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysctl /etc/passwd = 1\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysfs /proc/sys/vm/swappiness = 1\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysfs /sys/../etc/passwd = 1\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysctl vm..swappiness = 1\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysctl = 1\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	T_EQ_INT(parse_bad(HEAD "[variant A]\nsysctl vm.swappiness =\n[variant B]\n" WORKLOAD, NULL, NULL), 1);
	/* The same path in two variants is what A/B is for. */
	j = parse_ok(HEAD "[variant A]\nsysctl vm.swappiness = 1\n[variant B]\nsysctl vm.swappiness = 2\n" WORKLOAD);
	job_free(j);
}

static void test_continuations(void)
{
	struct job *j = parse_ok("[job]\nname = t\nmetrics = vmstat.a\n    vmstat.b ; comment\n" TWO_VARIANTS
				 "[workload w]\ntype = stress-ng\nargs = --vm 1\n  --vm-bytes 64M\n\n  --timeout 5s\n");
	if (!j)
		return;
	T_EQ_INT(j->n_metrics, 2);
	T_EQ_STR(j->metrics[1], "vmstat.b");
	T_CHECK(j->metrics[2] == NULL);
	T_EQ_STR(job_param(&j->workloads[0], "args"), "--vm 1 --vm-bytes 64M --timeout 5s");
	job_free(j);

	int line;
	char *msg;
	/* An indented key reads as a continuation: say so. */
	T_EQ_INT(parse_bad("[job]\nname = t\n  pairs = 3\n" TWO_VARIANTS WORKLOAD, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "remove the leading whitespace") != NULL);
	free(msg);
	/* Keys with one-line values take no continuation. */
	T_EQ_INT(parse_bad("[job]\nname = t\npairs = 3\n  4\n" TWO_VARIANTS WORKLOAD, &line, NULL), 1);
	T_EQ_INT(line, 4);
	/* After a section header an indented key is a key. */
	j = parse_ok("[job]\n  name = t\n" TWO_VARIANTS WORKLOAD);
	job_free(j);
}

static void test_diagnostics(void)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	const char *text = "[job]\nname = t\npairz = 3\n" TWO_VARIANTS
			   "[workload w]\ntype = command\ncommand = true\nmemroy.max = 1G\n"
			   "[bogus]\n";
	T_EQ_INT(job_parse_string_nocheck("x.job", text, &j, &d), -22);
	T_EQ_INT(d.n, 3);
	if (d.n == 3) {
		T_EQ_INT(d.v[0].line, 3);
		T_EQ_STR(d.v[0].msg, "unknown key \"pairz\" in [job] (did you mean \"pairs\"?)");
		T_EQ_STR(d.v[0].file, "x.job");
		T_EQ_INT(d.v[1].line, 9);
		T_EQ_STR(d.v[1].msg, "unknown key \"memroy.max\" in [workload w] (did you mean \"memory.max\"?)");
		T_EQ_INT(d.v[2].line, 10);
	}
	diags_free(&d);

	/* File-wide problems (line 0) come after the others. */
	T_EQ_INT(job_parse_string_nocheck("x.job", "[job]\nname = t\npairs = 0\n[variant A]\n", &j, &d), -22);
	T_EQ_INT(d.n, 3);
	if (d.n == 3) {
		T_EQ_INT(d.v[0].line, 3);
		T_EQ_INT(d.v[1].line, 0);
		T_EQ_INT(d.v[2].line, 0);
	}
	diags_free(&d);

	/* Not readable. */
	T_EQ_INT(job_parse_file("/nonexistent/x.job", &j, &d), -2);
	T_EQ_INT(d.n, 1);
	if (d.n == 1)
		T_EQ_STR(d.v[0].msg, "cannot read: No such file or directory");
	diags_free(&d);
}

static void test_syntax(void)
{
	/* A BOM, CRLF line ends, ':' and a header with spaces inside. */
	struct job *j = parse_ok("\xEF\xBB\xBF[ job ]\r\nname: crlf\r\n[variant   A]\r\n[variant B]\r\n"
				 "[workload w]\r\ntype = command\r\ncommand = sh -c 'a;b' ; comment\r\n");
	if (j) {
		T_EQ_STR(j->name, "crlf");
		T_EQ_STR(j->variants[0].label, "A");
		T_EQ_STR(job_param(&j->workloads[0], "command"), "sh -c 'a;b'");
		job_free(j);
	}
	j = parse_ok("[job]\nname = t\nmetrics = vmstat.nr_tlb_* memcg.pgsteal\n" TWO_VARIANTS WORKLOAD);
	if (j) {
		T_EQ_STR(j->metrics[0], "vmstat.nr_tlb_*");
		job_free(j);
	}

	int line;
	char *msg;
	/* A line longer than inih's buffer is reported once, nothing follows from it. */
	char text[1024];
	snprintf(text, sizeof(text), HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommand = echo %0300d\n", 0);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 7);
	T_CHECK(strncmp(msg, "line too long", 13) == 0);
	free(msg);
	/* A typo in a header: reported, and no "needs two variants" after it. */
	T_EQ_INT(parse_bad(HEAD "[variant A]\n[varaint B]\n" WORKLOAD, &line, &msg), 1);
	T_EQ_INT(line, 4);
	T_EQ_STR(msg, "unknown section [varaint B] (did you mean [variant B]?)");
	free(msg);
	/* A typo in a required key: reported as unknown, not also as missing. */
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS "[workload w]\ntpye = command\ncommand = true\n", &line, &msg), 1);
	T_EQ_STR(msg, "unknown key \"tpye\" in [workload w] (did you mean \"type\"?)");
	free(msg);
	T_EQ_INT(parse_bad(HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommnd = true\n", &line, &msg), 1);
	T_EQ_STR(msg, "unknown key \"commnd\" in [workload w] (did you mean \"command\"?)");
	free(msg);
	/* Keys before any section, lines that are not keys. */
	T_EQ_INT(parse_bad("pairs = 3\n" HEAD TWO_VARIANTS WORKLOAD, &line, NULL), 1);
	T_EQ_INT(line, 1);
	T_EQ_INT(parse_bad(HEAD "just words\n" TWO_VARIANTS WORKLOAD, &line, NULL), 1);
	T_EQ_INT(line, 3);
	T_EQ_INT(parse_bad(HEAD "[variant A\n" TWO_VARIANTS WORKLOAD, &line, NULL), 1);
	T_EQ_INT(line, 3);
}

static void test_machine_checks(void)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	const char *text = HEAD "[variant A]\nsysctl vm.no_such_knob_kab = 1\n[variant B]\n"
			   "[workload w]\ntype = command\ncommand = kab-no-such-program\n";
	T_EQ_INT(job_parse_string("x.job", text, &j, &d), -22);
	T_EQ_INT(d.n, 2);
	diags_free(&d);
	/* Stored jobs are read back without looking at the machine. */
	T_EQ_INT(job_parse_string_nocheck("x.job", text, &j, &d), 0);
	T_EQ_INT(d.n, 0);
	job_free(j);
}

/* job_parse_text reads the text alone: what only the machine can refuse
 * (knobs, files, the git tree, kexec) passes, and relative paths are made
 * absolute from the directory it is given, which need not exist. */
static void test_text_only(void)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	const char *text = "[job]\nname = t\ncompact = yes\nturbo = off\ncpus = 1000\n"
			   "[swap]\ndevice = file\nsize = 1G\npath = /kab-no-such-dir/swap\nzswap.compressor = kab-none\n"
			   "[variant A]\nsysctl vm.no_such_knob_kab = 1\nkernel = build\ntree = linux\nbase = kab-no-such-ref\n"
			   "config = kab.config\n"
			   "[variant B]\nkernel = image\nimage = /kab-no-such-image\n"
			   "[workload w]\ntype = command\ncommand = kab-no-such-program\n";
	T_EQ_INT(job_parse_text("x.job", "/kab-no-such-dir", text, &j, &d), 0);
	T_EQ_INT(d.n, 0);
	if (j) {
		T_EQ_STR(j->variants[0].tree, "/kab-no-such-dir/linux");
		T_EQ_STR(j->variants[0].config, "/kab-no-such-dir/kab.config");
		T_CHECK(j->switch_source == NULL);
	}
	job_free(j);
	diags_free(&d);
	/* the same text checked against the machine: at least the knob, the
	 * swap file's directory, the image and the program are refused */
	j = NULL;
	T_EQ_INT(job_parse_string("x.job", text, &j, &d), -22);
	T_CHECK(d.n >= 4);
	diags_free(&d);
}

static void round_trip(const char *text)
{
	struct job *j = parse_ok(text);
	if (!j)
		return;
	char *a = print_job(j);
	job_free(j);
	j = parse_ok(a);
	if (!j) {
		free(a);
		return;
	}
	char *b = print_job(j);
	job_free(j);
	T_EQ_STR(b, a);
	free(a);
	free(b);
}

static void test_round_trip(void)
{
	round_trip(HEAD TWO_VARIANTS WORKLOAD);
	/* a value starting with ';' (no whitespace before it: not a comment) */
	round_trip(HEAD "[variant A]\nsysctl vm.swappiness =; 15\n[variant B]\n"
		   "[workload w]\ntype = command\ncommand =;true\n[metric a.b]\nlabel =;x\n");
	round_trip("[job]\nname = rt\npairs: 7\norder = random\nseed = 9\ninterval = 250ms\nmetrics = a.b c.d\n"
		   "[swap]\ndevice = file\nsize = 100M\npath = /tmp/kab-rt.swap\npriority = 3\n"
		   "[variant base]\nname = base-line\nsysctl vm/swappiness = 0\n"
		   "[variant B]\nsysfs /sys/devices/pci0000:00/x = 1\n"
		   "[workload w]\ntype = stress-ng\nargs = --vm 1 --vm-bytes 'a b'\n  --timeout 3\n"
		   "memory.max = 1G\nmemory.high = 512M\nmemory.swap.max = 0\ntimeout = 0.1s\n");
	/* A long value wraps on print and reads back the same. */
	char text[4096];
	int n = snprintf(text, sizeof(text), "%s", HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommand = echo");
	for (int i = 0; i < 60; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s word%d", i % 7 == 3 ? "\n " : "", i);
	snprintf(text + n, sizeof(text) - (size_t)n, "\n");
	round_trip(text);
	/* A long word right after "key=": it moves to its own line. */
	snprintf(text, sizeof(text), HEAD TWO_VARIANTS "[workload w]\ntype=command\ncommand=echo %0180d\n", 0);
	round_trip(text);
	/* A word that cannot be printed within the line limit is refused. */
	snprintf(text, sizeof(text), HEAD TWO_VARIANTS "[workload w]\ntype=command\ncommand=echo\n %0197d\n", 0);
	int line;
	char *msg;
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 7);
	T_CHECK(strstr(msg, "over the limit of 198") != NULL);
	free(msg);
}

/* Jobs that boot kernels: their keys, what is refused, the normal form
 * and the plan (a boot of each variant per pair, every workload and its
 * runs inside it, ABBA over boots). */
static void test_boot_jobs(void)
{
	static const char head[] = "[job]\nname = k\n";
	static const char vars[] = "[variant A]\nname = base\nkernel = image\nimage = /boot/a\n"
				   "[variant B]\nname = new\nkernel = image\nimage = /boot/b\ninitrd = /boot/b.img\ncmdline = thp=1\n"
				   "[workload w]\ntype = command\ncommand = true\n[workload v]\ntype = command\ncommand = true\n";
	char text[2048];
	snprintf(text, sizeof(text), "%sboots = 2\nruns_per_boot = 3\nswitch = reboot\nboot_attempts = 4\non_boot_failure = abort\npanic = 30\n%s",
		 head, vars);
	struct job *j = parse_ok(text);
	if (j) {
		T_CHECK(job_boots_kernels(j));
		T_EQ_INT(j->pairs, 2);
		T_EQ_INT(j->runs_per_boot, 3);
		T_EQ_INT(j->switch_mode, JOB_SWITCH_REBOOT);
		T_EQ_INT(j->boot_attempts, 4);
		T_EQ_INT(j->on_boot_failure, JOB_BOOTFAIL_ABORT);
		T_EQ_INT(j->panic_s, 30);
		T_EQ_STR(j->variants[1].initrd, "/boot/b.img");
		T_EQ_STR(j->variants[1].cmdline, "thp=1");
		char *printed = print_job(j);
		T_CHECK(printed && strstr(printed, "runs_per_boot = 3\nswitch = reboot\nboot_attempts = 4\non_boot_failure = abort\npanic = 30\n"));
		T_CHECK(printed && strstr(printed, "image = /boot/b\ninitrd = /boot/b.img\ncmdline = thp=1\n"));
		struct job *again = printed ? parse_ok(printed) : NULL;
		char *twice = again ? print_job(again) : NULL;
		T_CHECK(twice && strcmp(printed, twice) == 0);
		free(printed);
		free(twice);
		job_free(again);
		/* the plan: A's boot, B's, B's, A's; in each boot w three times then
		 * v three times; each workload's warm-up (lower case) just before
		 * its first run, in the first boot: it costs no switch of kernel */
		struct store_step *st;
		size_t n;
		T_EQ_INT(exec_plan(j, &st, &n), 0);
		T_EQ_INT(n, 26);
		char order[32] = "", boots[32] = "", work[32] = "";
		for (size_t i = 0; i < n && i < 26; i++) {
			order[i] = (char)((st[i].pair == STORE_PAIR_WARMUP ? 'a' : 'A') + st[i].variant);
			boots[i] = (char)('0' + st[i].boot);
			work[i] = (char)('w' - st[i].workload);
		}
		T_EQ_STR(order, "aAAAaAAABBBBBBBBBBBBAAAAAA");
		T_EQ_STR(boots, "00000000111111222222333333");
		T_EQ_STR(work, "wwwwvvvvwwwvvvwwwvvvwwwvvv");
		T_EQ_INT(st[0].rep, 0);
		T_EQ_INT(st[4].rep, 0);
		T_EQ_INT(st[6].rep, 1);
		T_EQ_INT(st[15].pair, 1);
		free(st);
		job_free(j);
	}
	/* a job without kernels plans no boots */
	j = parse_ok("[job]\nname = r\npairs = 1\n[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n");
	if (j) {
		struct store_step *st;
		size_t n;
		T_EQ_INT(exec_plan(j, &st, &n), 0);
		T_EQ_INT(n, 3);
		T_EQ_INT(st[0].boot, -1);
		T_EQ_INT(st[1].boot, -1);
		T_EQ_INT(st[2].boot, -1);
		free(st);
		job_free(j);
	}

	int line;
	char *msg;
	snprintf(text, sizeof(text), "%sboots = 2\npairs = 2\n%s", head, vars);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "give boots or pairs, not both") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\nswitch = kexec\n[variant A]\n[variant B]\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "switch applies only to a job whose variants boot kernels") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\ncmdline = quiet\n[variant B]\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 4);
	T_CHECK(strstr(msg, "cmdline applies only to a variant that boots its own kernel") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = image\n[variant B]\nkernel = image\nimage = /b\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 4);
	T_CHECK(strstr(msg, "missing required key \"image\" in [variant A]") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\n[variant B]\nkernel = image\nimage = /b\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "[variant A] has kernel = running in a job whose other variants boot kernels") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = image\nimage = /a\n[variant B]\nkernel = image\nimage = /b\ncmdline = a=\"b c\"\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 9);
	T_CHECK(strstr(msg, "bad cmdline: quotes") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = image\nimage = /a\ntree = /t\n[variant B]\nkernel = image\nimage = /b\n[workload w]\ntype = command\ncommand = true\n",
			   &line, &msg), 1);
	T_EQ_INT(line, 6);
	T_CHECK(strstr(msg, "tree applies only to kernel = build, not kernel = image") != NULL);
	free(msg);
}

/* series = SOURCE vN, and archive: https or a local directory only. */
static void test_series_keys(void)
{
	const char *vars = "[variant A]\nkernel = build\ntree = /t\nbase = v6.1\n"
			   "[variant B]\nkernel = build\ntree = /t\nbase = v6.1\nseries = lore:x@y  v12\n" WORKLOAD;
	char text[2048];
	snprintf(text, sizeof(text), "[job]\nname = r\narchive = https://lore.kernel.org/all\n%s", vars);
	struct job *j = parse_ok(text);
	if (j) {
		T_EQ_STR(j->variants[1].series, "lore:x@y");
		T_EQ_INT(j->variants[1].series_version, 12);
		T_EQ_INT(j->variants[0].series_version, 0);
		char *out = print_job(j);
		T_CHECK(out && strstr(out, "\nseries = lore:x@y v12\n") && strstr(out, "\narchive = https://lore.kernel.org/all\n"));
		free(out);
		job_free(j);
	}
	round_trip(text);
	/* a local archive, relative to the job file, is made absolute */
	snprintf(text, sizeof(text), "[job]\nname = r\narchive = lore-mirror\n%s", vars);
	j = parse_ok(text);
	if (j) {
		T_CHECK(j->archive[0] == '/' && strstr(j->archive, "/lore-mirror"));
		job_free(j);
	}
	int line;
	char *msg;
	snprintf(text, sizeof(text), "[job]\nname = r\narchive = http://lore.kernel.org/all\n%s", vars);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "archive http://lore.kernel.org/all is plain http") != NULL);
	free(msg);
	snprintf(text, sizeof(text), "[job]\nname = r\narchive = ftp://x/\n%s", vars);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_CHECK(strstr(msg, "only over https") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = build\ntree = /t\nbase = v\nseries = /s.mbox v2 v3\n"
			   "[variant B]\nkernel = build\ntree = /t\nbase = v\n" WORKLOAD, &line, &msg), 1);
	T_EQ_INT(line, 7);
	T_CHECK(strstr(msg, "bad series \"/s.mbox v2 v3\": expected SOURCE [vN]") != NULL);
	free(msg);
}

/* kernel = build with build = ID: a build recorded earlier, named by
 * its id; the keys it fixed are refused, each at its line. */
static void test_recorded_build_keys(void)
{
	const char *vars = "[variant A]\nname = base\nkernel = build\nbuild = 1\n"
			   "[variant B]\nname = new\nkernel = build\nbuild = 12\ninitrd = /img/initrd.gz\ncmdline = quiet\n" WORKLOAD;
	char text[2048];
	snprintf(text, sizeof(text), "[job]\nname = r\n%s", vars);
	struct job *j = parse_ok(text);
	if (j) {
		T_EQ_INT(j->variants[0].build_id, 1);
		T_EQ_INT(j->variants[0].build_line, 6);
		T_EQ_INT(j->variants[1].build_id, 12);
		T_EQ_INT(j->variants[1].build_line, 10);
		T_CHECK(j->variants[0].tree == NULL && j->variants[0].base == NULL && j->variants[0].config == NULL);
		T_EQ_STR(j->variants[1].initrd, "/img/initrd.gz");
		T_EQ_STR(j->variants[1].cmdline, "quiet");
		T_CHECK(job_variant_recorded(&j->variants[0]) && job_variant_recorded(&j->variants[1]));
		T_CHECK(job_has_builds(j) && job_boots_kernels(j));
		char *out = print_job(j);
		T_CHECK(out && strstr(out, "\nkernel = build\nbuild = 1\n") && strstr(out, "\nbuild = 12\ninitrd = /img/initrd.gz\ncmdline = quiet\n"));
		T_CHECK(out && !strstr(out, "config ="));
		free(out);
		job_free(j);
	}
	round_trip(text);
	/* beside a variant kab builds now */
	j = parse_ok("[job]\nname = r\n[variant A]\nkernel = build\nbuild = 3\n[variant B]\nkernel = build\ntree = /t\nbase = v6.1\n" WORKLOAD);
	if (j) {
		T_CHECK(job_variant_recorded(&j->variants[0]) && !job_variant_recorded(&j->variants[1]));
		T_EQ_STR(j->variants[1].config, "running");
		job_free(j);
	}

	int line;
	char *msg;
	/* only with kernel = build */
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nbuild = 1\n[variant B]\n" WORKLOAD, &line, &msg), 1);
	T_EQ_INT(line, 4);
	T_CHECK(strstr(msg, "build applies only to kernel = build, not kernel = running") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = image\nimage = /a\nbuild = 1\n[variant B]\nkernel = build\nbuild = 1\n" WORKLOAD,
			   &line, &msg), 1);
	T_EQ_INT(line, 6);
	T_CHECK(strstr(msg, "build applies only to kernel = build, not kernel = image") != NULL);
	free(msg);
	/* what the build fixed, each refused at its own line */
	struct diags d = { 0 };
	struct job *bad = NULL;
	T_EQ_INT(job_parse_string_nocheck("t.job",
					  "[job]\nname = r\n[variant A]\nkernel = build\nbuild = 1\ntree = /t\nbase = v6.1\n"
					  "series = /s.mbox\nconfig = defconfig\nconfig.fragment = /a.config\nimage = /i\n"
					  "[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD, &bad, &d), -EINVAL);
	static const char *const fixed[] = { "tree", "base", "series", "config", "config.fragment" };
	T_EQ_INT(d.n, 6);
	for (size_t i = 0; i < d.n && i < 5; i++) {
		char want[128];
		snprintf(want, sizeof(want), "%s does not go with build (line 5): a recorded build's tree, base, series and config were fixed",
			 fixed[i]);
		T_EQ_INT(d.v[i].line, (int)i + 6);
		T_CHECK(strstr(d.v[i].msg, want) != NULL);
	}
	T_CHECK(d.n == 6 && d.v[5].line == 11 && strstr(d.v[5].msg, "image applies only to kernel = image"));
	diags_free(&d);
	/* tree and base are still required without build */
	T_EQ_INT(parse_bad("[job]\nname = r\n[variant A]\nkernel = build\nbase = v1\n[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD, &line,
			   &msg), 1);
	T_EQ_INT(line, 4);
	T_CHECK(strstr(msg, "missing required key \"tree\"") && strstr(msg, "or the build = ID of one kab built earlier"));
	free(msg);
	/* the id: a positive whole number that fits an int64 */
	static const struct { const char *value, *want; } ids[] = {
		{ "x", "bad build \"x\": expected a build id, a positive whole number (kab builds lists them)" },
		{ "1x", "bad build \"1x\": expected a build id" },
		{ "1.5", "bad build \"1.5\": expected a build id" },
		{ "-1", "bad build \"-1\": expected a build id" },
		{ "+1", "bad build \"+1\": expected a build id" },
		{ "0", "build 0 is out of range: a build id is from 1 to 9223372036854775807 (kab builds lists them)" },
		{ "9223372036854775808", "build 9223372036854775808 is out of range" },
		{ "99999999999999999999999999", "build 99999999999999999999999999 is out of range" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		snprintf(text, sizeof(text), "[job]\nname = r\n[variant A]\nkernel = build\nbuild = %s\n[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD,
			 ids[i].value);
		T_EQ_INT(parse_bad(text, &line, &msg), 1);
		T_EQ_INT(line, 5);
		if (!strstr(msg, ids[i].want))
			fprintf(stderr, "build = %s: got \"%s\"\n", ids[i].value, msg);
		T_CHECK(strstr(msg, ids[i].want) != NULL);
		free(msg);
	}
	snprintf(text, sizeof(text), "[job]\nname = r\n[variant A]\nkernel = build\nbuild = 9223372036854775807\n[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD);
	j = parse_ok(text);
	if (j)
		T_EQ_INT(j->variants[0].build_id, INT64_MAX);
	job_free(j);
}

/* ---- budgets (doc/jobs.md, "Budgets") ---- */

/* Appends pattern with each '#' replaced by i. */
static void add_numbered(struct strbuf *sb, const char *pattern, size_t i)
{
	for (const char *p = pattern; *p; p++)
		if (*p == '#')
			sb_printf(sb, "%zu", i);
		else
			sb_append(sb, p, 1);
}

/* HEAD, extra lines in [job], then n copies of pattern ('#': the copy's
 * index), then tail. */
static char *budget_job(const char *job_extra, const char *pattern, size_t n, const char *tail)
{
	struct strbuf sb = { 0 };
	sb_printf(&sb, HEAD "%s", job_extra);
	for (size_t i = 0; i < n; i++)
		add_numbered(&sb, pattern, i);
	sb_puts(&sb, tail);
	return sb.buf;
}

/* Parses text expecting exactly one problem, whose message contains want,
 * at line want_line; prints them all otherwise. */
static void expect_one(const char *text, int want_line, const char *want)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	T_CHECK(job_parse_string_nocheck("t.job", text, &j, &d) < 0);
	T_CHECK(j == NULL);
	T_EQ_INT(diags_count(&d), 1);
	if (d.n >= 1) {
		T_EQ_INT(d.v[0].line, want_line);
		T_CHECK(d.v[0].msg && strstr(d.v[0].msg, want));
	}
	if (diags_count(&d) != 1 || (d.n && (d.v[0].line != want_line || !strstr(d.v[0].msg, want))))
		diags_print(&d, stderr);
	diags_free(&d);
	job_free(j);
}

static void accept(const char *text)
{
	struct job *j = parse_ok(text);
	job_free(j);
}

static void test_budget_text_and_lines(void)
{
	/* exactly JOB_TEXT_MAX bytes parses; one more is refused before it is read */
	struct strbuf sb = { 0 };
	sb_puts(&sb, HEAD TWO_VARIANTS WORKLOAD);
	while (sb.len + 101 <= JOB_TEXT_MAX)
		sb_printf(&sb, "; %097d\n", 0);
	while (sb.len < JOB_TEXT_MAX)
		sb_puts(&sb, sb.len + 2 <= JOB_TEXT_MAX ? ";\n" : "\n");
	T_EQ_INT(sb.len, JOB_TEXT_MAX);
	accept(sb.buf);
	sb_puts(&sb, "\n");
	struct diags d = { 0 };
	struct job *j = NULL;
	T_EQ_INT(job_parse_string_nocheck("t.job", sb.buf, &j, &d), -EFBIG);
	T_EQ_INT(diags_count(&d), 1);
	if (d.n)
		T_EQ_STR(d.v[0].msg, "too large (262145 bytes, at most 262144 = 256 KiB): a job file is a few KiB; split it over several jobs (doc/jobs.md, \"Budgets\")");
	diags_free(&d);
	/* a file too: refused on its size */
	char path[] = "/tmp/kab-test-job.XXXXXX";
	int fd = mkstemp(path);
	T_CHECK(fd >= 0 && write(fd, sb.buf, sb.len) == (ssize_t)sb.len);
	close(fd);
	T_EQ_INT(job_parse_file(path, &j, &d), -EFBIG);
	T_CHECK(d.n == 1 && d.v[0].line == 0 && strncmp(d.v[0].msg, "too large (262145 bytes", 23) == 0);
	diags_free(&d);
	unlink(path);
	sb_free(&sb);

	/* JOB_LINES_MAX lines parse; at one more the reader stops, and the
	 * [job] section after it is not missed: the budget is the one error */
	char *t = budget_job("", "\n", JOB_LINES_MAX - 7, TWO_VARIANTS WORKLOAD);
	accept(t);
	free(t);
	sb = (struct strbuf){ 0 };
	for (unsigned i = 0; i < JOB_LINES_MAX - 5; i++)
		sb_puts(&sb, "\n");
	sb_puts(&sb, TWO_VARIANTS WORKLOAD HEAD);  /* [job] at line 10001 */
	expect_one(sb.buf, (int)JOB_LINES_MAX + 1, "too many lines (10002, at most 10000): the rest of the job is not read");
	sb_free(&sb);

	/* a line of JOB_LINE_MAX characters reads, one more is too long */
	char line[512];
	snprintf(line, sizeof(line), HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommand = %0*d\n", JOB_LINE_MAX - 10, 0);
	T_EQ_INT(strlen(strstr(line, "command = ")) - 1, JOB_LINE_MAX);
	accept(line);
	snprintf(line, sizeof(line), HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommand = %0*d\n", JOB_LINE_MAX - 9, 0);
	expect_one(line, 7, "line too long (199 characters, at most 198)");
}

static void test_budget_sections(void)
{
	/* 64 variants, then a 65th: one error, at its header */
	char *t = budget_job("", "[variant v#]\n", JOB_VARIANTS_MAX, WORKLOAD);
	accept(t);
	free(t);
	t = budget_job("", "[variant v#]\n", JOB_VARIANTS_MAX + 1, WORKLOAD);
	expect_one(t, 2 + (int)JOB_VARIANTS_MAX + 1, "too many [variant] sections (65, at most 64): this is the first over the budget");
	free(t);
	/* workloads */
	t = budget_job("", "[workload w#]\ntype = command\ncommand = true\n", JOB_WORKLOADS_MAX, TWO_VARIANTS);
	accept(t);
	free(t);
	t = budget_job("", "[workload w#]\ntype = command\ncommand = true\n", JOB_WORKLOADS_MAX + 1, TWO_VARIANTS);
	expect_one(t, 2 + 3 * (int)JOB_WORKLOADS_MAX + 1, "too many [workload] sections (65, at most 64)");
	free(t);
	/* [metric] sections */
	t = budget_job("", "[metric m.x#]\ndirection = lower\n", JOB_METRIC_SECTIONS_MAX, TWO_VARIANTS WORKLOAD);
	accept(t);
	free(t);
	t = budget_job("", "[metric m.x#]\ndirection = lower\n", JOB_METRIC_SECTIONS_MAX + 1, TWO_VARIANTS WORKLOAD);
	expect_one(t, 2 + 2 * (int)JOB_METRIC_SECTIONS_MAX + 1, "too many [metric] sections (257, at most 256)");
	free(t);
}

static void test_budget_keys(void)
{
	/* continuation lines of one key */
	char *t = budget_job("", "", 0, TWO_VARIANTS "[workload w]\ntype = command\ncommand = true\n");
	free(t);
	struct strbuf sb = { 0 };
	sb_puts(&sb, HEAD TWO_VARIANTS "[workload w]\ntype = command\ncommand = true\n");
	for (unsigned i = 0; i < JOB_CONT_MAX; i++)
		sb_puts(&sb, "  x\n");
	accept(sb.buf);
	sb_puts(&sb, "  y\n");
	expect_one(sb.buf, 7 + (int)JOB_CONT_MAX + 1, "more than 256 continuation lines for \"command\" (line 7)");
	sb_free(&sb);

	/* knobs of one variant */
	t = budget_job("[variant A]\n", "sysctl vm.k# = 1\n", JOB_KNOBS_MAX, "[variant B]\n" WORKLOAD);
	accept(t);
	free(t);
	t = budget_job("[variant A]\n", "sysctl vm.k# = 1\n", JOB_KNOBS_MAX + 2, "[variant B]\n" WORKLOAD);
	expect_one(t, 3 + (int)JOB_KNOBS_MAX + 1, "too many knobs in [variant A] (130, at most 128): this is the first over the budget");
	free(t);

	/* names in one list: metrics, primary, fcount, config.fragment */
	static const struct {
		const char *head, *fmt, *tail, *want;
		int line;
	} lists[] = {
		{ "metrics =", " m.x#", "\n" TWO_VARIANTS WORKLOAD, "too many metrics in one list (257, at most 256)", 3 },
		{ "primary =", " m.x#", "\n" TWO_VARIANTS WORKLOAD, "too many metrics in one list (257, at most 256)", 3 },
		{ TWO_VARIANTS WORKLOAD "fcount =", " f#", "\n", "too many functions in one list (257, at most 256)", 8 },
		{ "[variant A]\nkernel = build\ntree = /t\nbase = v1\nconfig.fragment =", " f#",
		  "\n[variant B]\nkernel = build\ntree = /t\nbase = v1\n" WORKLOAD,
		  "too many config.fragment files (257, at most 256)", 7 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		/* a list takes continuation lines: 16 names a line */
		sb = (struct strbuf){ 0 };
		sb_printf(&sb, HEAD "%s", lists[i].head);
		for (size_t k = 0; k < JOB_LIST_MAX; k++) {
			add_numbered(&sb, lists[i].fmt, k);
			if (k % 16 == 15)
				sb_puts(&sb, "\n ");
		}
		size_t at = sb.len;
		sb_puts(&sb, lists[i].tail);
		accept(sb.buf);
		sb.len = at;
		sb.buf[at] = 0;
		add_numbered(&sb, lists[i].fmt, JOB_LIST_MAX);
		sb_puts(&sb, lists[i].tail);
		expect_one(sb.buf, lists[i].line, lists[i].want);
		sb_free(&sb);
	}
}

static void test_budget_steps(void)
{
	/* 1000 pairs x 2 variants x 25 workloads = JOB_STEPS_MAX runs; one workload more is over */
	const char *w = "[workload w#]\ntype = command\ncommand = true\n";
	char *t = budget_job("pairs = 1000\n" TWO_VARIANTS, w, 25, "");
	accept(t);
	free(t);
	t = budget_job("pairs = 1000\n" TWO_VARIANTS, w, 26, "");
	expect_one(t, 3, "the job has 52000 runs (1000 pairs x 2 variants x 26 workloads x 1 per boot), at most 50000");
	free(t);
	/* runs_per_boot counts for jobs that boot kernels, at the boots line */
	const char *img = "[variant A]\nkernel = image\nimage = /a\n[variant B]\nkernel = image\nimage = /b\n" WORKLOAD;
	t = budget_job("boots = 250\nruns_per_boot = 100\n", "", 0, img);
	accept(t);
	free(t);
	t = budget_job("boots = 251\nruns_per_boot = 100\n", "", 0, img);
	expect_one(t, 3, "the job has 50200 runs (251 pairs x 2 variants x 1 workloads x 100 per boot), at most 50000");
	free(t);
}

static void test_budget_diags(void)
{
	/* 150 unknown keys: the first DIAGS_MAX kept, in line order, the rest counted */
	char *t = budget_job("", "bogus# = 1\n", 150, TWO_VARIANTS WORKLOAD);
	struct diags d = { 0 };
	struct job *j = NULL;
	T_EQ_INT(job_parse_string_nocheck("t.job", t, &j, &d), -EINVAL);
	T_EQ_INT(d.n, DIAGS_MAX);
	T_EQ_INT(d.dropped, 50);
	T_EQ_INT(diags_count(&d), 150);
	T_CHECK(d.n == DIAGS_MAX && d.v[0].line == 3 && d.v[DIAGS_MAX - 1].line == 3 + DIAGS_MAX - 1);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	diags_print(&d, f);
	fclose(f);
	T_CHECK(out && strstr(out, "\nt.job: and 50 more problems not shown: fix these first\n"));
	free(out);
	diags_free(&d);
	free(t);
	/* a job whose only errors come after earlier ones filled the list is still refused */
	for (int i = 0; i < DIAGS_MAX + 5; i++)
		diags_add(&d, "other", 1, "earlier");
	T_EQ_INT(job_parse_string_nocheck("t.job", HEAD "pairz = 3\n" TWO_VARIANTS WORKLOAD, &j, &d), -EINVAL);
	T_EQ_INT(diags_count(&d), DIAGS_MAX + 6);
	diags_free(&d);
}

/* The shapes of the issue: 1 MiB of 80,000 variants, 300,000
 * continuation lines or 250,000 metrics, refused at the size budget; and
 * each cut to just under it, refused at its own budget. Each well under
 * 100 ms (a few ms here; they took 15 s, 25 s and 2.5 s before the budgets). */
static double timed_refusal(const char *what, const char *text, int want_rc, const char *want)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	double t0 = util_mono_now();
	int r = job_parse_string("big.job", text, &j, &d);
	double ms = (util_mono_now() - t0) * 1e3;
	printf("  %-34s %7zu bytes: refused in %6.2f ms: %s\n", what, strlen(text), ms, d.n ? d.v[0].msg : "(no error)");
	T_EQ_INT(r, want_rc);
	T_CHECK(j == NULL);
	T_CHECK(d.n > 0 && strstr(d.v[0].msg, want));
	T_CHECK(ms < 100);
	diags_free(&d);
	job_free(j);
	return ms;
}

static void test_budget_speed(void)
{
	static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	for (int cut = 0; cut < 2; cut++) {
		size_t limit = cut ? JOB_TEXT_MAX : SIZE_MAX;
		struct strbuf v = { 0 }, c = { 0 }, m = { 0 };
		sb_puts(&v, HEAD WORKLOAD);
		for (size_t i = 0; i < 80000 && v.len + 16 <= limit; i++)
			sb_printf(&v, "[variant %c%c%c]\n", b62[i / 3844 % 62], b62[i / 62 % 62], b62[i % 62]);
		sb_puts(&c, HEAD TWO_VARIANTS WORKLOAD);
		for (size_t i = 0; i < 300000 && c.len + 4 <= limit; i++)
			sb_puts(&c, " x\n");
		sb_puts(&m, TWO_VARIANTS WORKLOAD HEAD "metrics =");
		for (size_t i = 0; i < 250000 && m.len + 8 <= limit; i++)
			sb_printf(&m, "%s m.%c%c", i % 32 == 31 ? "\n" : "", b62[i / 62 % 62], b62[i % 62]);
		sb_puts(&m, "\n");
		if (!cut) {
			T_CHECK(v.len > 1000000 && c.len > 900000 && m.len > 1000000);
			timed_refusal("80,000 variants", v.buf, -EFBIG, "too large");
			timed_refusal("300,000 continuation lines", c.buf, -EFBIG, "too large");
			timed_refusal("250,000 metrics", m.buf, -EFBIG, "too large");
		} else {
			timed_refusal("variants, cut to 256 KiB", v.buf, -EINVAL, "too many [variant] sections");
			timed_refusal("continuation lines, cut to 256 KiB", c.buf, -EINVAL, "more than 256 continuation lines");
			timed_refusal("metrics, cut to 256 KiB", m.buf, -EINVAL, "more than 256 continuation lines");
		}
		sb_free(&v);
		sb_free(&c);
		sb_free(&m);
	}
}

/* bisect = auto | off and bisect.boots: parsed, printed when they say
 * something, read back; refused on a job a bisection cannot build. */
static void test_bisect_keys(void)
{
	const char *builds = "[variant A]\nkernel = build\ntree = /t\nbase = v6.1\n"
			     "[variant B]\nkernel = build\ntree = /t\nbase = v6.2\n" WORKLOAD;
	char text[1024];
	/* the defaults: off, 300, neither printed */
	snprintf(text, sizeof(text), "[job]\nname = b\n%s", builds);
	struct job *j = parse_ok(text);
	if (j) {
		T_EQ_INT(j->bisect, JOB_BISECT_OFF);
		T_EQ_INT(j->bisect_boots, JOB_BISECT_BOOTS_DEFAULT);
		char *out = print_job(j);
		T_CHECK(out && !strstr(out, "bisect"));
		free(out);
		job_free(j);
	}
	/* auto: both printed, the budget spelled out */
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect = auto\n%s", builds);
	j = parse_ok(text);
	if (j) {
		T_EQ_INT(j->bisect, JOB_BISECT_AUTO);
		char *out = print_job(j);
		T_CHECK(out && strstr(out, "\nbisect = auto\nbisect.boots = 300\n"));
		free(out);
		job_free(j);
	}
	round_trip(text);
	/* a budget of its own, for kab bisect, without auto: printed */
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect.boots = 120\n%s", builds);
	j = parse_ok(text);
	if (j) {
		T_EQ_INT(j->bisect, JOB_BISECT_OFF);
		T_EQ_INT(j->bisect_boots, 120);
		char *out = print_job(j);
		T_CHECK(out && strstr(out, "\nbisect.boots = 120\n") && !strstr(out, "bisect = "));
		free(out);
		job_free(j);
	}
	round_trip(text);
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect = off\nbisect.boots = 100000\n%s", builds);
	round_trip(text);

	int line;
	char *msg;
	/* bad values, with their line */
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect = yes\n%s", builds);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "unknown bisect \"yes\"") && strstr(msg, "choices: off, auto"));
	free(msg);
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect.boots = 0\n%s", builds);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "bisect.boots 0 is out of range: expected 1 to 100000") != NULL);
	free(msg);
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect.boots = 3e2\n%s", builds);
	T_EQ_INT(parse_bad(text, &line, &msg), 1);
	T_CHECK(strstr(msg, "bad bisect.boots \"3e2\"") != NULL);
	free(msg);
	/* nothing to build at each commit */
	T_EQ_INT(parse_bad("[job]\nname = b\nbisect = auto\n" TWO_VARIANTS WORKLOAD, &line, &msg), 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "bisect = auto: this job has no variant that kab builds from a tree") != NULL);
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = b\nbisect.boots = 50\n" TWO_VARIANTS WORKLOAD, &line, &msg), 1);
	T_CHECK(strstr(msg, "bisect.boots: this job has no variant") != NULL);
	free(msg);
	/* recorded builds: a build machine builds each commit of the range */
	j = parse_ok("[job]\nname = b\nbisect = auto\n[variant A]\nkernel = build\nbuild = 1\n"
		     "[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD);
	T_CHECK(j && j->bisect == JOB_BISECT_AUTO);
	job_free(j);
	/* the controls: printed when asked for, read back */
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect.revert = yes\nbisect.align = yes\n%s", builds);
	j = parse_ok(text);
	if (j) {
		T_EQ_INT(j->bisect_revert, 1);
		T_EQ_INT(j->bisect_align, 1);
		char *out = print_job(j);
		T_CHECK(out && strstr(out, "\nbisect.revert = yes\nbisect.align = yes\n"));
		free(out);
		job_free(j);
	}
	round_trip(text);
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect.align = no\n%s", builds);
	j = parse_ok(text);
	T_CHECK(j && !j->bisect_align && !j->bisect_revert);
	job_free(j);
	/* ... refused where the variant cannot be rebuilt, naming the key */
	T_EQ_INT(parse_bad("[job]\nname = b\nbisect.revert = yes\n[variant A]\nkernel = build\nbuild = 1\n"
			   "[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD,
			   &line, &msg),
		 1);
	T_EQ_INT(line, 3);
	T_CHECK(strstr(msg, "bisect.revert = yes: [variant B], the variant a bisection measures, boots a recorded build") &&
		strstr(msg, "remove bisect.revert"));
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = b\nbisect.align = yes\n[variant A]\nkernel = build\nbuild = 1\n"
			   "[variant B]\nkernel = build\nbuild = 2\n" WORKLOAD,
			   &line, &msg),
		 1);
	T_CHECK(strstr(msg, "bisect.align = yes") && strstr(msg, "with forced alignment"));
	free(msg);
	T_EQ_INT(parse_bad("[job]\nname = b\nbisect.align = yes\n" TWO_VARIANTS WORKLOAD, &line, &msg), 1);
	T_CHECK(strstr(msg, "bisect.align: this job has no variant") != NULL);
	free(msg);
	/* off says nothing a running job cannot do */
	j = parse_ok("[job]\nname = b\nbisect = off\n" TWO_VARIANTS WORKLOAD);
	job_free(j);
	/* a confirmation of such a nightly is no nightly: its bisect is off */
	snprintf(text, sizeof(text), "[job]\nname = b\nbisect = auto\nbisect.revert = yes\n%s", builds);
	struct job *good = parse_ok(text), *bad = parse_ok(text);
	char *conf = NULL;
	struct job_confirm jc = { .name = "b.confirm-1", .good_name = "g", .bad_name = "x", .min_pairs = 6, .max_pairs = 6 };
	if (good && bad && job_confirmation(good, bad, 1, &jc, &conf) == 0) {
		T_CHECK(!strstr(conf, "bisect = auto") && !strstr(conf, "bisect.revert"));
		j = parse_ok(conf);
		T_CHECK(j && j->bisect == JOB_BISECT_OFF);
		job_free(j);
	} else {
		T_CHECK(!"job_confirmation");
	}
	free(conf);
	job_free(good);
	job_free(bad);
}

int main(void)
{
	test_boot_jobs();
	test_series_keys();
	test_recorded_build_keys();
	test_bisect_keys();
	test_defaults();
	test_zswap_keys();
	test_sizes();
	test_durations();
	test_numbers_and_enums();
	test_knobs();
	test_continuations();
	test_syntax();
	test_diagnostics();
	test_machine_checks();
	test_text_only();
	test_round_trip();
	test_budget_text_and_lines();
	test_budget_sections();
	test_budget_keys();
	test_budget_steps();
	test_budget_diags();
	test_budget_speed();
	return t_done("test_job");
}
