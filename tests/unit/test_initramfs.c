/* kernels/initramfs: how mkinitramfs is driven, with a stand-in for it
 * on PATH (the real one, on Debian's kernel, is tests/integration/
 * t_initramfs.sh's): what it is given and sees (only the build's modules
 * under /lib/modules, read-only, and its config under /boot), that the
 * machine's /lib/modules and /boot are left alone, and the errors (a bad
 * release, the tool missing, no modules of that release, no config, a
 * failing tool) with no image left behind.
 *
 * The stand-in's runs need root (a mount namespace); not root, the
 * refusal is checked instead.
 *
 * `test_initramfs make MODROOT RELEASE CONFIG OUT` makes OUT with the real
 * tool, its output on stdout, for the integration test. */
#include "kernels/initramfs.h"
#include "t.h"
#include "t_config.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REL "6.1.0-kab7"

static char dir[] = "/tmp/kab-initramfs-XXXXXX";
static char path_env[8192];

/* A stand-in for mkinitramfs: writes what it sees into the image, or
 * fails half-way through writing it when FAKE_FAIL is set. */
static const char fake_tool[] =
	"#!/bin/sh\n"
	"[ \"$1\" = -o ] && [ $# = 3 ] || { echo \"usage: $0 -o OUT RELEASE\" >&2; exit 2; }\n"
	"out=$2 rel=$3\n"
	"if [ -n \"$FAKE_FAIL\" ]; then echo partial >\"$out\"; echo 'W: a warning'; echo 'E: the hook broke' >&2; exit 3; fi\n"
	"[ -f /boot/config-$rel ] || { echo \"E: no /boot/config-$rel\" >&2; exit 4; }\n"
	"{ echo \"modules: $(ls /lib/modules | tr '\\n' ' ')\"\n"
	"  echo \"boot: $(ls /boot | tr '\\n' ' ')\"\n"
	"  echo \"config: $(cat /boot/config-$rel)\"\n"
	"  echo \"ko: $(ls /lib/modules/$rel/kernel/drivers/block)\"\n"
	"  [ -e /lib/modules/$rel/modules.dep ] && echo dep: yes\n"
	"  touch /lib/modules/$rel/kab-probe 2>/dev/null && echo modules: writable || echo modules: read-only\n"
	"} >\"$out\"\n";

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static char *read_text(const char *path)
{
	char *s = NULL;
	size_t n;
	return util_read_file(path, &s, &n) == 0 ? s : NULL;
}

/* The entries of a directory, sorted, as one string ("-" when it is missing). */
static void listing(const char *path, char *buf, size_t len)
{
	struct dirent **v;
	int n = scandir(path, &v, NULL, alphasort);
	snprintf(buf, len, "%s", n < 0 ? "-" : "");
	for (int i = 0; i < n; i++) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s ", v[i]->d_name);
		free(v[i]);
	}
	if (n >= 0)
		free(v);
}

/* A modroot with one module of release rel (and modules.dep when dep). */
static void modroot(const char *root, const char *rel, bool dep)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/drivers/block", root, rel);
	util_mkdir_p(p, 0755);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/kernel/drivers/block/virtio_blk.ko", root, rel);
	write_text(p, "not really a module", 0644);
	snprintf(p, sizeof(p), "%s/lib/modules/%s/modules.dep", root, rel);
	if (dep)
		write_text(p, "kernel/drivers/block/virtio_blk.ko:\n", 0644);
}

/* Whether this process may have a mount namespace. */
static bool can_unshare(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWNS) == 0 ? 0 : 1);
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int make(const char *root, const char *rel, const char *config, const char *out, struct strbuf *err)
{
	sb_free(err);
	*err = (struct strbuf){ 0 };
	return kinitramfs_make(root, rel, config, out, NULL, -1, err);
}

static void test_refusals(void)
{
	char root[PATH_MAX], cfg[PATH_MAX], out[PATH_MAX];
	struct strbuf err = { 0 };
	snprintf(root, sizeof(root), "%s/refusals", dir);
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	snprintf(out, sizeof(out), "%s/initrd.img", dir);
	modroot(root, "6.1.0-other", true);

	/* a release is one name */
	T_EQ_INT(make(root, "../" REL, cfg, out, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "\"../" REL "\" is not a kernel release"));
	T_EQ_INT(make(root, "", cfg, out, &err), -EINVAL);
	T_EQ_INT(make(root, "..", cfg, out, &err), -EINVAL);

	/* no modules of that release: which directory, and which releases there are */
	T_EQ_INT(make(root, REL, cfg, out, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "no modules of " REL " in ") && strstr(err.buf, "/lib/modules/" REL " is missing") &&
		strstr(err.buf, "INSTALL_MOD_PATH=") && strstr(err.buf, "it has modules of 6.1.0-other"));
	T_EQ_INT(make(dir, REL, cfg, out, &err), -ENOENT);  /* no lib/modules at all */

	/* no config */
	modroot(root, REL, true);
	char missing[PATH_MAX + 16];
	snprintf(missing, sizeof(missing), "%s/no-config", dir);
	T_EQ_INT(make(root, REL, missing, out, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "the config of " REL) && strstr(err.buf, "cannot be read"));

	/* where the image goes: a directory that exists, not under /boot or /lib */
	char nodir[PATH_MAX + 16];
	snprintf(nodir, sizeof(nodir), "%s/nowhere/initrd.img", dir);
	T_EQ_INT(make(root, REL, cfg, nodir, &err), -ENOENT);
	T_CHECK(err.buf && strstr(err.buf, "does not exist"));
	T_EQ_INT(make(root, REL, cfg, "/boot/initrd.img-" REL, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "under /boot or /lib"));
	T_EQ_INT(make(root, REL, cfg, "/lib/initrd.img-" REL, &err), -EINVAL);
	T_EQ_INT(make(root, REL, cfg, dir, &err) < 0, 1);  /* a directory is not an image */
	char slash[PATH_MAX + 2];
	snprintf(slash, sizeof(slash), "%s/", dir);
	T_EQ_INT(make(root, REL, cfg, slash, &err), -EINVAL);

	/* the tool missing: which package to install */
	setenv("PATH", "/nonexistent-kab", 1);
	t_config_from_env();
	T_EQ_INT(make(root, REL, cfg, out, &err), -ENOPKG);
	T_CHECK(err.buf && strstr(err.buf, "mkinitramfs is not in PATH (/nonexistent-kab)") &&
		strstr(err.buf, "apt-get install " KINITRAMFS_PACKAGE));
	setenv("PATH", path_env, 1);
	t_config_from_env();
	T_CHECK(access(out, F_OK) < 0);
	sb_free(&err);
}

static void test_stand_in(void)
{
	char root[PATH_MAX], cfg[PATH_MAX], out[PATH_MAX], outdir[PATH_MAX];
	char mods_before[4096], mods_after[4096], boot_before[4096], boot_after[4096], left[4096];
	struct strbuf err = { 0 };
	snprintf(root, sizeof(root), "%s/build", dir);
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	snprintf(outdir, sizeof(outdir), "%s/kernels", dir);
	snprintf(out, sizeof(out), "%s/initrd.img", outdir);
	util_mkdir_p(outdir, 0755);
	modroot(root, REL, true);
	if (geteuid() != 0) {
		/* not root: refused, saying so */
		T_EQ_INT(make(root, REL, cfg, out, &err), -EPERM);
		T_CHECK(err.buf && strstr(err.buf, "build as root"));
		T_CHECK(access(out, F_OK) < 0);
		t_skip("the stand-in's runs", "needs root");
		sb_free(&err);
		return;
	}
	if (!can_unshare()) {
		t_skip("the stand-in's runs", "unshare(CLONE_NEWNS) is refused here");
		return;
	}
	listing("/lib/modules", mods_before, sizeof(mods_before));
	listing("/boot", boot_before, sizeof(boot_before));

	int r = make(root, REL, cfg, out, &err);
	T_EQ_INT(r, 0);
	if (r < 0)
		fprintf(stderr, "%s\n", err.buf);
	_cleanup_free_ char *img = read_text(out);
	T_CHECK(img && strstr(img, "modules: " REL " \n"));       /* only the build's release */
	T_CHECK(img && strstr(img, "boot: config-" REL " \n"));   /* only its config */
	T_CHECK(img && strstr(img, "config: CONFIG_MODULES=y\n"));
	T_CHECK(img && strstr(img, "ko: virtio_blk.ko\n"));
	T_CHECK(img && strstr(img, "dep: yes\n"));
	T_CHECK(img && strstr(img, "modules: read-only\n"));
	/* nothing of the machine's changed, nothing left next to the image */
	listing("/lib/modules", mods_after, sizeof(mods_after));
	listing("/boot", boot_after, sizeof(boot_after));
	T_EQ_STR(mods_after, mods_before);
	T_EQ_STR(boot_after, boot_before);
	listing(outdir, left, sizeof(left));
	T_EQ_STR(left, ". .. initrd.img ");

	/* a build without modules.dep gets one from depmod -b first */
	char dep[PATH_MAX + 64];
	snprintf(root, sizeof(root), "%s/nodep", dir);
	modroot(root, REL, false);
	snprintf(dep, sizeof(dep), "%s/lib/modules/" REL "/modules.dep", root);
	T_EQ_INT(make(root, REL, cfg, out, &err), 0);
	T_CHECK(access(dep, F_OK) == 0);

	/* the tool fails half-way: its status and last words, no image */
	unlink(out);
	setenv("FAKE_FAIL", "1", 1);
	T_EQ_INT(make(root, REL, cfg, out, &err), -EIO);
	unsetenv("FAKE_FAIL");
	T_CHECK(err.buf && strstr(err.buf, "/mkinitramfs (" KINITRAMFS_PACKAGE ") for " REL " exited with status 3") &&
		strstr(err.buf, "its output ends:\n") && strstr(err.buf, "E: the hook broke"));
	listing(outdir, left, sizeof(left));
	T_EQ_STR(left, ". .. ");
	sb_free(&err);
}

static int make_command(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s make MODROOT RELEASE CONFIG OUT\n", argv[0]);
		return 2;
	}
	/* as kab's main: the configuration (PATH among it) from the environment */
	t_config_from_env();
	struct strbuf err = { 0 };
	int r = kinitramfs_make(argv[2], argv[3], argv[4], argv[5], NULL, 1, &err);
	if (r < 0)
		fprintf(stderr, "%s (%s)\n", err.buf ? err.buf : "", strerror(-r));
	sb_free(&err);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "make") == 0)
		return make_command(argc, argv);
	if (!mkdtemp(dir))
		return 1;
	/* the stand-in first on PATH */
	char tool[PATH_MAX], cfg[PATH_MAX];
	snprintf(tool, sizeof(tool), "%s/bin", dir);
	util_mkdir_p(tool, 0755);
	snprintf(path_env, sizeof(path_env), "%s:%s", tool, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", path_env, 1);
	t_config_from_env();
	snprintf(tool, sizeof(tool), "%s/bin/mkinitramfs", dir);
	write_text(tool, fake_tool, 0755);
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	write_text(cfg, "CONFIG_MODULES=y\n", 0644);

	test_refusals();
	test_stand_in();
	util_remove_tree(dir);
	return t_done("test_initramfs");
}
