/* The command workload's own metrics: "kab-metric NAME VALUE [UNIT]"
 * lines of its standard output become command.NAME, and what the command
 * printed is stored safe to show: escape sequences, C1 controls and bytes
 * of no UTF-8 visible (esc.h), UTF-8 kept, long names cut at a character. */
#include "t_job.h"
#include "workloads/wl.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool stored_safe(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return esc_utf8_valid(s, strlen(s), NULL);
}

static void test_collect(void)
{
	char dir[] = "/tmp/kab-unit-wlcmd-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof(path), "%s/stdout", dir);
	FILE *f = fopen(path, "w");
	T_CHECK(f != NULL);
	if (!f)
		return;
	fputs("hello\n", f);
	fputs("kab-metric ops 12.5 ops/s\n", f);
	fputs("kab-metric '\x1b[2J\x1b]0;owned\x07red' 1 '\x1b[31mms'\n", f);
	fputs("kab-metric caf\xe9 2 \xb5s\n", f);
	fputs("kab-metric \302\23331m 3\n", f);
	fputs("kab-metric caf\xc3\xa9 4 \xc2\xb5s\n", f);
	/* 90 letters and a 2-byte character where command.NAME passes 95 bytes */
	fputs("kab-metric ", f);
	for (int i = 0; i < 86; i++)
		fputc('a', f);
	fputs("\xc3\xa9\xc3\xa9 5\n", f);
	fclose(f);
	const struct wl_ops *ops = wl_find("command");
	T_CHECK(ops && ops->collect);
	if (!ops || !ops->collect)
		return;
	struct wl_ctx c = { .workdir = dir };
	struct wl_metrics m = { 0 };
	T_EQ_INT(ops->collect(&c, 0, &m), 0);
	T_EQ_INT(m.n, 6);
	if (m.n == 6) {
		T_EQ_STR(m.v[0].name, "command.ops");
		T_EQ_STR(m.v[0].unit, "ops/s");
		T_EQ_STR(m.v[1].name, "command.\\x1b[2J\\x1b]0;owned\\x07red");
		T_EQ_STR(m.v[1].unit, "\\x1b[31mms");
		T_EQ_STR(m.v[2].name, "command.caf\\xe9");
		T_EQ_STR(m.v[2].unit, "\\xb5s");
		T_EQ_STR(m.v[3].name, "command.\\u009b31m");
		T_EQ_STR(m.v[4].name, "command.caf\xc3\xa9");
		T_EQ_STR(m.v[4].unit, "\xc2\xb5s");
		/* cut before the character that would not fit, not inside it */
		T_EQ_INT(strlen(m.v[5].name), 8 + 86 + 0);
		for (size_t i = 0; i < m.n; i++) {
			T_CHECK(stored_safe(m.v[i].name));
			T_CHECK(stored_safe(m.v[i].unit));
		}
	}
	wl_metrics_free(&m);
	unlink(path);
	rmdir(dir);
}

/* The argv a type makes from a job's workload, its words joined by "|". */
static void argv_of(const char *workload, struct strbuf *ret)
{
	char text[1024];
	snprintf(text, sizeof(text), "[job]\nname = t\n[variant A]\n[variant B]\n[workload w]\n%s", workload);
	struct job *j = t_parse_job(text);
	T_CHECK(j && j->n_workloads == 1 && j->workloads[0].opts);
	if (!j || j->n_workloads != 1)
		return;
	char **argv = NULL;
	struct wl_ctx c = { .wl = &j->workloads[0], .workdir = "/run/w" };
	T_EQ_INT(wl_find(j->workloads[0].type)->argv(&c, &argv), 0);
	for (size_t i = 0; argv && argv[i]; i++)
		sb_printf(ret, "%s%s", i ? "|" : "", argv[i]);
	wl_argv_free(argv);
	job_free(j);
}

/* command and args are read once, as the job is, into the type's options. */
static void test_argv(void)
{
	struct strbuf a = { 0 };
	argv_of("type = command\ncommand = /bin/echo 'a b' c\n", &a);
	T_EQ_STR(a.buf, "/bin/echo|a b|c");
	sb_free(&a);
	a = (struct strbuf){ 0 };
	argv_of("type = stress-ng\nargs = --vm 1 --timeout 5s\n", &a);
	T_EQ_STR(a.buf, "stress-ng|--vm|1|--timeout|5s|--metrics|--yaml|/run/w/stress-ng.yaml");
	sb_free(&a);
}

int main(void)
{
	test_collect();
	test_argv();
	return t_done("test_wl_command");
}
