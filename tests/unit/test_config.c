/* The configuration as main resolves it: defaults, the environment over
 * them, a flag over both; machine.conf's settings with their file and
 * line, a job's switch over machine.conf's over the default; a bad value
 * named with its variable or flag and what to do; what `kab config`
 * prints. The environment here is a table, not the process's. */
#include "harness/base/config.h"
#include "harness/job/job.h"
#include "harness/job/machine.h"
#include "kernels/kexec.h"
#include "harness/base/util.h"
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const *fake_env; /* NAME, VALUE, ..., NULL */

static const char *lookup(const char *name)
{
	for (const char *const *p = fake_env; p && *p; p += 2)
		if (strcmp(p[0], name) == 0)
			return p[1];
	return NULL;
}

static int resolve(const char *const *env, struct kab_config *cfg, struct diags *d)
{
	fake_env = env;
	return config_resolve(cfg, lookup, d);
}

static bool has_diag(const struct diags *d, const char *a, const char *b)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, a) && (!b || strstr(d->v[i].msg, b)))
			return true;
	return false;
}

static void test_defaults(void)
{
	static const char *const none[] = { NULL };
	struct kab_config cfg;
	struct diags d = { 0 };
	T_EQ_INT(resolve(none, &cfg, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_STR(cfg.v[CONFIG_STATE_DIR].value, "/var/lib/kab");
	T_EQ_STR(cfg.v[CONFIG_MACHINE_CONF].value, "/etc/kab/machine.conf");
	T_CHECK(cfg.v[CONFIG_KERNELS_DIR].value == NULL); /* kernels/ in the state directory */
	T_EQ_STR(cfg.v[CONFIG_KBUILD_WORK].value, "/var/cache/kab/kbuild");
	T_EQ_STR(cfg.v[CONFIG_KBUILD_CACHE].value, "/var/cache/kab/src");
	T_CHECK(cfg.v[CONFIG_CA_BUNDLE].value == NULL);
	T_EQ_STR(cfg.v[CONFIG_SWITCH_DRY_RUN].value, "no");
	T_CHECK(cfg.v[CONFIG_URL].value == NULL);
	T_EQ_STR(cfg.v[CONFIG_SOCKET].value, "/run/kab/kabd.sock");
	T_EQ_STR(cfg.v[CONFIG_PATH].value, CONFIG_PATH_DEFAULT);
	T_EQ_STR(cfg.v[CONFIG_UTF8].value, "no");
	for (size_t k = 0; k < CONFIG_N; k++)
		T_EQ_INT(cfg.v[k].source, CONFIG_FROM_DEFAULT);
	config_free(&cfg);
}

/* flag > environment > default, each value saying where it came from */
static void test_precedence(void)
{
	static const char *const env[] = {
		"KAB_KERNELS_DIR", "/srv/kernels",    "KAB_KBUILD_WORK",    "", /* empty: unset */
		"STATE_DIRECTORY", "/srv/kab:/other", "KAB_SWITCH_DRY_RUN", "1", "KAB_CA_BUNDLE", "ca.pem", NULL,
	};
	struct kab_config cfg;
	struct diags d = { 0 };
	T_EQ_INT(resolve(env, &cfg, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].value, "/srv/kernels");
	T_EQ_INT(cfg.v[CONFIG_KERNELS_DIR].source, CONFIG_FROM_ENV);
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].origin, "KAB_KERNELS_DIR");
	T_EQ_STR(cfg.v[CONFIG_KBUILD_WORK].value, "/var/cache/kab/kbuild");
	T_EQ_INT(cfg.v[CONFIG_KBUILD_WORK].source, CONFIG_FROM_DEFAULT);
	T_EQ_STR(cfg.v[CONFIG_STATE_DIR].value, "/srv/kab"); /* systemd's list: its first entry */
	T_EQ_STR(cfg.v[CONFIG_SWITCH_DRY_RUN].value, "yes");
	T_EQ_STR(cfg.v[CONFIG_CA_BUNDLE].value, "ca.pem"); /* a file read: relative is fine */

	T_EQ_INT(config_set_flag(&cfg, CONFIG_KERNELS_DIR, "--kernels-dir", "/given", &d), 0);
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].value, "/given");
	T_EQ_INT(cfg.v[CONFIG_KERNELS_DIR].source, CONFIG_FROM_FLAG);
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].origin, "--kernels-dir");
	T_EQ_INT(config_set_flag(&cfg, CONFIG_KBUILD_WORK, "--work-dir", "/w", &d), 0);
	T_EQ_INT(cfg.v[CONFIG_KBUILD_WORK].source, CONFIG_FROM_FLAG);
	T_EQ_INT(d.n, 0);

	/* installed: what the library reads */
	config_use(&cfg);
	T_CHECK(cfg.v[CONFIG_KERNELS_DIR].value == NULL); /* moved */
	T_EQ_STR(config_str(CONFIG_KERNELS_DIR), "/given");
	T_CHECK(config_bool(CONFIG_SWITCH_DRY_RUN));
	char buf[64];
	T_EQ_STR(config_origin(CONFIG_KERNELS_DIR, buf, sizeof(buf)), "--kernels-dir");
	T_EQ_STR(config_origin(CONFIG_CA_BUNDLE, buf, sizeof(buf)), "KAB_CA_BUNDLE");
	T_EQ_STR(config_origin(CONFIG_SOCKET, buf, sizeof(buf)), "default");
	/* a verb's flag over the installed configuration */
	T_EQ_INT(config_use_flag(CONFIG_SOCKET, "--socket", "/tmp/k.sock", &d), 0);
	T_EQ_STR(config_str(CONFIG_SOCKET), "/tmp/k.sock");
	T_EQ_STR(config_origin(CONFIG_SOCKET, buf, sizeof(buf)), "--socket");
	config_free(&cfg);
}

/* KAB_URL before KAB_SERVER; the locale variables in libc's order */
static void test_first_set(void)
{
	static const char *const both[] = { "KAB_SERVER", "http://b:1", "KAB_URL", "http://a:1", NULL };
	static const char *const server[] = { "KAB_SERVER", "http://b:1", "KAB_URL", "", NULL };
	static const char *const ctype[] = { "LC_ALL", "", "LC_CTYPE", "C", "LANG", "en_US.UTF-8", NULL };
	static const char *const lang[] = { "LANG", "de_DE.utf8", NULL };
	struct kab_config cfg;
	struct diags d = { 0 };
	resolve(both, &cfg, &d);
	T_EQ_STR(cfg.v[CONFIG_URL].value, "http://a:1");
	T_EQ_STR(cfg.v[CONFIG_URL].origin, "KAB_URL");
	config_free(&cfg);
	resolve(server, &cfg, &d);
	T_EQ_STR(cfg.v[CONFIG_URL].value, "http://b:1");
	T_EQ_STR(cfg.v[CONFIG_URL].origin, "KAB_SERVER");
	config_free(&cfg);
	resolve(ctype, &cfg, &d);
	T_EQ_STR(cfg.v[CONFIG_UTF8].value, "no");
	T_EQ_STR(cfg.v[CONFIG_UTF8].origin, "LC_CTYPE");
	config_free(&cfg);
	resolve(lang, &cfg, &d);
	T_EQ_STR(cfg.v[CONFIG_UTF8].value, "yes");
	config_free(&cfg);
	T_EQ_INT(d.n, 0);
}

/* A bad value: the variable or flag, the value, why, what to do; the
 * default stays, every bad one is reported. */
static void test_bad_values(void)
{
	static const char *const env[] = {
		"KAB_SWITCH_DRY_RUN", "maybe", "KAB_KBUILD_CACHE", "src", "KAB_KERNELS_DIR", "/ok", NULL,
	};
	struct kab_config cfg;
	struct diags d = { 0 };
	T_EQ_INT(resolve(env, &cfg, &d), -EINVAL);
	T_EQ_INT(d.n, 2);
	T_CHECK(has_diag(&d, "KAB_SWITCH_DRY_RUN=maybe: not a yes or no", "or unset it for the default (no)"));
	T_CHECK(has_diag(&d, "KAB_KBUILD_CACHE=src: not an absolute path", "set it to e.g. KAB_KBUILD_CACHE=/"));
	T_EQ_STR(cfg.v[CONFIG_SWITCH_DRY_RUN].value, "no");
	T_EQ_STR(cfg.v[CONFIG_KBUILD_CACHE].value, "/var/cache/kab/src");
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].value, "/ok");
	diags_free(&d);

	T_EQ_INT(config_set_flag(&cfg, CONFIG_KERNELS_DIR, "--kernels-dir", "kernels", &d), -EINVAL);
	T_CHECK(has_diag(&d, "--kernels-dir kernels: not an absolute path", "give e.g. --kernels-dir /"));
	T_EQ_STR(cfg.v[CONFIG_KERNELS_DIR].value, "/ok");
	diags_free(&d);

	static const char *const words[] = { "yes", "TRUE", "on", "0", "off", "No" };
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		T_EQ_INT(config_set_flag(&cfg, CONFIG_SWITCH_DRY_RUN, "--x", words[i], &d), 0);
		T_EQ_STR(cfg.v[CONFIG_SWITCH_DRY_RUN].value, i < 3 ? "yes" : "no");
	}
	T_EQ_INT(d.n, 0);
	config_free(&cfg);
}

static char *printed(const struct kab_config *cfg, bool clients)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	config_print(cfg, clients, f);
	if (cfg->machine)
		machine_conf_print(cfg->machine, f);
	fclose(f);
	return text;
}

/* machine.conf as main loads it (the path from the configuration), then
 * everything printed with where it came from */
static void test_machine_and_print(void)
{
	char path[160];
	static const char text[] = "# test\nswitch = reboot\nknobs.allow = kernel.core_pattern\n";
	T_EQ_INT(t_conf_file(path, sizeof(path), "/tmp/kab-config-XXXXXX", text), 0);
	const char *env[] = { "KAB_MACHINE_CONF", path, "KAB_KBUILD_WORK", "/w\x1b[31m", NULL };
	struct kab_config cfg;
	struct machine_conf mc;
	struct diags d = { 0 };
	resolve(env, &cfg, &d);
	T_EQ_INT(machine_conf_load(&mc, cfg.v[CONFIG_MACHINE_CONF].value, &d), 0);
	cfg.machine = &mc;
	T_EQ_INT(d.n, 0);
	config_set_flag(&cfg, CONFIG_STATE_DIR, "--state-dir", "/srv/state", &d);

	char *out = printed(&cfg, true);
	char want[256];
	T_CHECK(strstr(out, "state-dir       /srv/state") && strstr(out, "flag --state-dir\n"));
	snprintf(want, sizeof(want), "%s", path);
	T_CHECK(strstr(out, want) && strstr(out, "environment KAB_MACHINE_CONF\n"));
	T_CHECK(strstr(out, "(kernels/ in the state directory)"));
	T_CHECK(strstr(out, "url ") != NULL);
	T_CHECK(strstr(out, "\x1b") == NULL); /* a variable's control characters shown, not sent */
	snprintf(want, sizeof(want), "reboot                                   %s:2\n", path);
	T_CHECK(strstr(out, want) != NULL);
	snprintf(want, sizeof(want), "kernel.core_pattern                      %s:3\n", path);
	T_CHECK(strstr(out, want) != NULL);
	free(out);
	out = printed(&cfg, false); /* kabd's: not the clients' url and socket */
	T_CHECK(strstr(out, "\nurl ") == NULL && strstr(out, "\nsocket ") == NULL);
	free(out);

	/* the library sees the installed machine.conf, and only that */
	config_use(&cfg);
	T_CHECK(machine_conf_current() == &mc);
	T_EQ_STR(machine_conf_path(), path);
	T_CHECK(machine_conf_current()->has_switch);
	static const char *const none[] = { NULL };
	resolve(none, &cfg, &d);
	config_use(&cfg);
	T_CHECK(!machine_conf_current()->has_switch);
	T_EQ_INT(machine_conf_current()->n_knob_allow, 0);
	machine_conf_free(&mc);
	t_conf_remove(path);
	diags_free(&d);
}

#define BOOTS_JOB \
	"[job]\nname = t\n%s[variant A]\nkernel = build\nbuild = 1\n[variant B]\nkernel = build\nbuild = 2\n" \
	"[workload w]\ntype = command\ncommand = true\n"

/* A job's switch: its own key > machine.conf's > the default (kexec). 0:
 * the job parsed, its switch and source in *ret; else its problems. */
static int job_switch(const char *key, enum job_switch *ret, char **ret_source, struct diags *d)
{
	char text[512];
	snprintf(text, sizeof(text), BOOTS_JOB, key);
	struct job *j = NULL;
	int r = job_parse_string("t.job", text, &j, d);
	if (r < 0 || !j)
		return r < 0 ? r : -EINVAL;
	*ret = j->switch_mode;
	*ret_source = j->switch_source ? strdup(j->switch_source) : NULL;
	job_free(j);
	return 0;
}

static void test_switch_precedence(void)
{
	char path[160];
	T_EQ_INT(t_conf_file(path, sizeof(path), "/tmp/kab-config-XXXXXX", "switch = reboot\n"), 0);
	struct strbuf why = { 0 };
	bool kexec = kexec_supported(&why) == 0;
	sb_free(&why);
	enum job_switch sw;
	char *source = NULL;
	struct diags d = { 0 };

	/* nothing says: the default, kexec (refused where it cannot be used) */
	static const char *const none[] = { NULL };
	struct kab_config cfg;
	resolve(none, &cfg, &d);
	config_use(&cfg);
	int r = job_switch("", &sw, &source, &d);
	if (kexec)
		T_CHECK(r == 0 && sw == JOB_SWITCH_KEXEC && source == NULL);
	else
		T_CHECK(r < 0 && has_diag(&d, "switched with kexec", "or in /etc/kab/machine.conf, for every job"));
	free(source);
	source = NULL;
	diags_free(&d);

	/* machine.conf's over the default, with where it came from */
	const char *env[] = { "KAB_MACHINE_CONF", path, NULL };
	struct machine_conf mc;
	resolve(env, &cfg, &d);
	T_EQ_INT(machine_conf_load(&mc, cfg.v[CONFIG_MACHINE_CONF].value, &d), 0);
	cfg.machine = &mc;
	config_use(&cfg);
	T_EQ_INT(job_switch("", &sw, &source, &d), 0);
	T_EQ_INT(sw, JOB_SWITCH_REBOOT);
	T_EQ_STR(source, path);
	free(source);
	source = NULL;
	T_EQ_INT(d.n, 0);

	/* the job's own over machine.conf's */
	r = job_switch("switch = kexec\n", &sw, &source, &d);
	if (kexec)
		T_CHECK(r == 0 && sw == JOB_SWITCH_KEXEC && source == NULL);
	else
		T_CHECK(r < 0 && has_diag(&d, "switched with kexec", NULL));
	free(source);
	diags_free(&d);
	resolve(none, &cfg, &d);
	config_use(&cfg);
	machine_conf_free(&mc);
	t_conf_remove(path);
}

/* doc/config.md's table of settings has a row for each, naming its variables */
static void test_readme(void)
{
	char *text = NULL;
	if (util_read_file("doc/config.md", &text, NULL) < 0) {
		T_CHECK(!"doc/config.md readable from the test's directory (the project root)");
		return;
	}
	for (size_t k = 0; k < CONFIG_N; k++) {
		char cell[64];
		snprintf(cell, sizeof(cell), "| %s: ", config_name((enum config_key)k));
		const char *row = strstr(text, cell);
		T_CHECK(row != NULL);
		if (!row)
			continue;
		while (row > text && row[-1] != '\n')
			row--;
		size_t len = strcspn(row, "\n");
		for (size_t i = 0; config_var((enum config_key)k, i); i++) {
			char var[64];
			snprintf(var, sizeof(var), "`%s`", config_var((enum config_key)k, i));
			T_CHECK(memmem(row, len, var, strlen(var)) != NULL);
		}
	}
	free(text);
}

/* machine.conf's [lab]: its values are settings with their file and line;
 * each mistake named at its line */
static void test_lab_section(void)
{
	char path[160];
	static const char text[] = "switch = reboot\n[lab]\n# the lab\n"
				   "url = postgresql://kab@db1.lab/kablab?sslmode=verify-full\n"
				   "credentials = /etc/kab/lab.pgpass\ntags = numa, fast-disk\n";
	T_EQ_INT(t_conf_file(path, sizeof(path), "/tmp/kab-config-XXXXXX", text), 0);
	const char *env[] = { "KAB_MACHINE_CONF", path, NULL };
	struct kab_config cfg;
	struct machine_conf mc;
	struct diags d = { 0 };
	resolve(env, &cfg, &d);
	T_EQ_INT(machine_conf_load(&mc, path, &d), 0);
	T_EQ_INT(machine_conf_apply(&mc, &cfg, &d), 0);
	T_EQ_INT(d.n, 0);
	T_EQ_STR(cfg.v[CONFIG_LAB_URL].value, "postgresql://kab@db1.lab/kablab?sslmode=verify-full");
	T_EQ_INT(cfg.v[CONFIG_LAB_URL].source, CONFIG_FROM_MACHINE);
	T_EQ_INT(cfg.v[CONFIG_LAB_URL].line, 4);
	T_EQ_STR(cfg.v[CONFIG_LAB_CREDENTIALS].value, "/etc/kab/lab.pgpass");
	T_EQ_STR(cfg.v[CONFIG_LAB_TAGS].value, "numa, fast-disk");
	T_CHECK(mc.has_switch);
	cfg.machine = &mc;
	char *out = printed(&cfg, false), want[300];
	snprintf(want, sizeof(want), "lab-credentials /etc/kab/lab.pgpass                      %s:5\n", path);
	T_CHECK(strstr(out, want) != NULL);
	free(out);
	machine_conf_free(&mc);
	config_free(&cfg);

	/* no lab: the settings unset, said so */
	static const char *const none[] = { NULL };
	resolve(none, &cfg, &d);
	out = printed(&cfg, false);
	T_CHECK(strstr(out, "(none: this machine is in no lab)") != NULL);
	free(out);
	config_free(&cfg);

	/* a file, and the mistake named at its line */
	static const char *const bad[][2] = {
		{ "[lab]\nurl = postgresql://kab@db1.lab/kablab\n", ":2: [lab] url: the lab URL: the lab's host db1.lab is not local" },
		{ "[lab]\nurl = postgresql://kab:pw@localhost/kablab\n", ":2: [lab] url: the lab URL holds a password" },
		{ "[lab]\ntags = a b/c\n", ":2: [lab] tags: bad tag \"b/c\"" },
		{ "[lab]\nurl = host=/run/postgresql\nurl = host=/tmp\n", ":3: [lab] url is set twice (first at line 2)" },
		{ "[lab]\nuri = host=/tmp\n", ":2: unknown key \"uri\" in [lab]: did you mean \"url\"?" },
		{ "[lab]\nswitch = kexec\n", ":2: unknown key \"switch\" in [lab]" },
		{ "[labs]\n", ":1: unknown section [labs]" },
		{ "[lab]\ncredentials = lab.pgpass\n", ":2: lab-credentials = lab.pgpass: not an absolute path" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int fd;
		T_CHECK((fd = open(path, O_WRONLY | O_TRUNC)) >= 0);
		T_CHECK(write(fd, bad[i][0], strlen(bad[i][0])) == (ssize_t)strlen(bad[i][0]));
		close(fd);
		resolve(none, &cfg, &d);
		int r = machine_conf_load(&mc, path, &d);
		if (r == 0)
			r = machine_conf_apply(&mc, &cfg, &d);
		T_EQ_INT(r, -EINVAL);
		snprintf(want, sizeof(want), "%s%s", path, bad[i][1]);
		bool found = false;
		for (size_t k = 0; k < d.n; k++) {
			char line[1024];
			snprintf(line, sizeof(line), "%s:%d: %s", d.v[k].file ? d.v[k].file : "", d.v[k].line, d.v[k].msg);
			found |= strstr(line, want) != NULL;
		}
		T_CHECK(found);
		if (!found)
			diags_print(&d, stderr);
		diags_free(&d);
		machine_conf_free(&mc);
		config_free(&cfg);
	}
	t_conf_remove(path);
}

int main(void)
{
	test_defaults();
	test_precedence();
	test_first_set();
	test_bad_values();
	test_machine_and_print();
	test_switch_precedence();
	test_lab_section();
	test_readme();
	return t_done("test_config");
}
