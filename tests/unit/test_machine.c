/* /etc/kab/machine.conf: comments, blanks, spaces and CRLF; a missing file
 * sets nothing; each bad line is named with its number. */
#include "machine.h"
#include "t.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static int load(const char *text, struct machine_conf *mc, struct diags *d)
{
	char path[] = "/tmp/kab-machine-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -EIO;
	close(fd);
	setenv("KAB_MACHINE_CONF", path, 1);
	int r = machine_conf_load(mc, d);
	unlink(path);
	return r;
}

int main(void)
{
	struct machine_conf mc;
	struct diags d = { 0 };

	setenv("KAB_MACHINE_CONF", "/nonexistent/kab-machine.conf", 1);
	T_EQ_STR(machine_conf_path(), "/nonexistent/kab-machine.conf");
	T_EQ_INT(machine_conf_load(&mc, &d), 0);
	T_CHECK(!mc.has_switch);
	T_EQ_INT(d.n, 0);
	unsetenv("KAB_MACHINE_CONF");
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
	return t_done("test_machine");
}
