/* A build's artifacts: the kernels directory, bzImage, System.map and the
 * config copied out of the object directory, modules.tar, the initramfs,
 * and the bzImage header's version string that shows the image boots. */
#include "kernels/build.h"
#include "kernels/build_priv.h"
#include "kernels/builduser.h"
#include "kernels/initramfs.h"
#include "kernels/run.h"
#include "harness/base/config.h"
#include "harness/base/statedir.h"
#include "db/store_builds.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int kbuild_image_version(const char *path, char *buf, size_t len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char hdr[0x210];
	if (pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4) != 0)
		return -EINVAL;
	unsigned off = hdr[0x20e] | (unsigned)hdr[0x20f] << 8;
	char v[256];
	ssize_t n = pread(fd, v, sizeof(v) - 1, 0x200 + (off_t)off);
	if (off == 0 || n <= 0)
		return -EINVAL;
	v[n] = 0;
	snprintf(buf, len, "%s", v);
	return 0;
}

/* modules.tar, packed by the build user into a file of kab's. */
static int pack_modules(struct kbuild_ctx *c, const char *mod, const char *to)
{
	unlink(to);
	_cleanup_close_ int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		sb_printf(c->err, "artifacts: %s: %s", to, strerror(errno));
		return -EIO;
	}
	char *tar[] = { "tar", "-cf", "-", "-C", (char *)mod, "lib/modules", NULL };
	struct strbuf msg = { 0 };
	struct krun o = kbuild_as_builder(c, -1);
	o.stdout_fd = fd;
	o.capture = &msg;
	int status, r = krun(tar, &o, &status);
	if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r = -EIO;
	if (r < 0)
		sb_printf(c->err, "artifacts: tar of the modules into %s failed: %s", to, msg.len ? msg.buf : strerror(-r));
	sb_free(&msg);
	return r < 0 ? -EIO : 0;
}

/* modules.tar and, when the kernel can load one, initrd.img made from the
 * installed modules with the distribution's mkinitramfs (as root: it
 * reads them, bound read-only, and writes in kab's directory). */
static int install_modules(struct kbuild_ctx *c, struct store_build *b, bool initrd, const char *localversion, int log_fd)
{
	char mod[PATH_MAX + 48], arg[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(mod, sizeof(mod), "%s/modroot", c->root);
	snprintf(arg, sizeof(arg), "INSTALL_MOD_PATH=%s", mod);
	int r;
	if ((r = kbuser_remove(kbuild_builder(c), mod, c->err)) < 0 || (r = kbuser_own_dir(kbuild_builder(c), mod, c->err)) < 0)
		goto out;
	if ((r = kbuild_make(c, log_fd, localversion, false, "modules_install", arg)) < 0) {
		sb_printf(c->err, "artifacts: make modules_install failed: see %s", b->log_path);
		goto out;
	}
	snprintf(to, sizeof(to), "%s/modules.tar", b->dir);
	if ((r = pack_modules(c, mod, to)) < 0)
		goto out;
	b->modules = strdup(to);
	if (!initrd)
		goto out;
	snprintf(to, sizeof(to), "%s/initrd.img", b->dir);
	kbuild_stage(c, "initramfs: %s of %s's modules, with this machine's /etc/initramfs-tools", KINITRAMFS_TOOL, b->kernelrelease);
	double t0 = util_mono_now();
	if ((r = kinitramfs_make(mod, b->kernelrelease, b->config_path, to, kbuild_builder(c), log_fd, c->err)) < 0) {
		sb_printf(c->err, "\n(all of it is in the build log %s)", b->log_path);
		goto out;
	}
	struct stat st;
	double mib = stat(to, &st) == 0 ? (double)st.st_size / MiB : 0;
	kbuild_stage(c, "initramfs: %s, %.1f MiB, %.0f s", to, mib, util_mono_now() - t0);
	b->initrd = strdup(to);
out:;
	struct strbuf why = { 0 };
	if (kbuser_remove(kbuild_builder(c), mod, &why) < 0)
		log_warn("build: %s", why.buf ? why.buf : mod);
	sb_free(&why);
	return r;
}

/* A bootable bzImage of the release the build wrote: its header's version
 * string names it. */
static int check_image(struct kbuild_ctx *c, const struct store_build *b)
{
	char version[256];
	if (kbuild_image_version(b->image, version, sizeof(version)) < 0 || !strstr(version, b->kernelrelease)) {
		sb_printf(c->err, "build %lld: %s is not a bootable bzImage of %s (version string \"%s\")", (long long)b->id,
			  b->image, b->kernelrelease, version);
		return -EIO;
	}
	return 0;
}

int kbuild_artifacts_copy(struct kbuild_ctx *c, struct store_build *b, bool modules, bool initrd, const char *localversion,
			  int log_fd)
{
	char dir[PATH_MAX + 32], from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/%lld", c->kernels, (long long)b->id);
	util_remove_tree(dir);
	int r = util_mkdir_p(dir, 0755);
	if (r < 0) {
		sb_printf(c->err, "%s: cannot create: %s", dir, strerror(-r));
		return r;
	}
	b->dir = strdup(dir);
	static const struct { const char *from, *to; } files[] = {
		{ "arch/x86/boot/bzImage", "bzImage" }, { "System.map", "System.map" }, { ".config", "config" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(from, sizeof(from), "%s/%s", c->obj, files[i].from);
		snprintf(to, sizeof(to), "%s/%s", dir, files[i].to);
		if ((r = kbuser_copy_out(kbuild_builder(c), from, to)) < 0) {
			sb_printf(c->err, "artifacts: cannot copy %s to %s: %s", from, to, kbuser_strerror(r));
			return r;
		}
		char **field = i == 0 ? &b->image : i == 1 ? &b->system_map : &b->config_path;
		*field = strdup(to);
	}
	if (modules && (r = install_modules(c, b, initrd, localversion, log_fd)) < 0)
		return r;
	return check_image(c, b);
}

int kbuild_kernels_dir(const char *given, char *buf, size_t len, struct strbuf *err)
{
	if (!given)
		given = config_str(CONFIG_KERNELS_DIR);
	int r = given ? 0 : state_init(NULL, err);
	if (r < 0)
		return r;
	if (given)
		r = snprintf(buf, len, "%s", given);
	else
		r = snprintf(buf, len, "%s/" KBUILD_KERNELS_SUBDIR, state_path());
	if (r >= (int)len) {
		sb_printf(err, "%s: path too long", given ? given : KBUILD_KERNELS_SUBDIR);
		return -ENAMETOOLONG;
	}
	return 0;
}
