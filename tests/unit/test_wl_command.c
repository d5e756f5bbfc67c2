/* The command workload's own metrics: "kab-metric NAME VALUE [UNIT]"
 * lines of its standard output become command.NAME, and what the command
 * printed is stored safe to show: escape sequences, C1 controls and bytes
 * of no UTF-8 visible (esc.h), UTF-8 kept, long names cut at a character. */
#include "t.h"
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

int main(void)
{
	test_collect();
	return t_done("test_wl_command");
}
