/* An initramfs made with Debian's mkinitramfs for a kernel kab built.
 *
 * mkinitramfs takes a release, not a directory: it reads the modules from
 * /lib/modules/<release> (and the modprobe and modinfo its hooks run read
 * them there too) and the kernel's config from /boot/config-<release>,
 * paths fixed in the script. A build's modules are in a directory of its
 * own, so mkinitramfs runs in a private mount namespace where
 *
 *   /lib/modules            an empty directory of ours (over the machine's,
 *                           or overlaid onto /usr/lib where there is none)
 *   /lib/modules/<release>  the build's modules, bound read-only
 *   /boot                   a directory holding only config-<release>
 *
 * and the rest of the machine (its /etc/initramfs-tools, hooks, busybox,
 * udev rules) is as it is, so the image is the one the machine would get
 * for an installed kernel of that release. Nothing is written to the
 * machine's /lib/modules or /boot and no other process sees the mounts;
 * they go away with mkinitramfs. The staging directory sits next to the
 * output, which is renamed into place only when mkinitramfs succeeded. */
#include "kernels/initramfs.h"
#include "kernels/run.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTPUT_TAIL_LINES 15

/* What the child does before it execs mkinitramfs; the parent makes
 * every path, so the child allocates nothing. */
struct ns_plan {
	bool over_modules;        /* the machine has /lib/modules: ours goes over it */
	char stage_modules[PATH_MAX + 32];  /* STAGE/lib/modules, holding an empty <release> */
	char libdir[PATH_MAX];    /* else what /lib is (/usr/lib), overlaid with STAGE/lib */
	char overlay_opts[3 * PATH_MAX];
	char release_dir[256];    /* /lib/modules/<release> */
	char modules[PATH_MAX + 160];  /* the build's modules */
	char stage_boot[PATH_MAX + 32];
};

static int child_fail(int fd, const char *what, const char *path)
{
	dprintf(fd, "%s %s: %s", what, path, strerror(errno));
	return -1;
}

static int enter_namespace(void *arg, int err_fd)
{
	const struct ns_plan *p = arg;
	if (unshare(CLONE_NEWNS) < 0)
		return child_fail(err_fd, "unshare", "CLONE_NEWNS");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return child_fail(err_fd, "cannot make the mounts private:", "/");
	/* opened in the new namespace (a bind source must be one of its
	 * mounts) and before a mount over /lib/modules can hide it */
	int fd = open(p->modules, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return child_fail(err_fd, "cannot open", p->modules);
	char src[32];
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	if (p->over_modules) {
		if (mount(p->stage_modules, "/lib/modules", NULL, MS_BIND, NULL) < 0)
			return child_fail(err_fd, "cannot bind an empty directory over", "/lib/modules");
	} else if (mount("overlay", p->libdir, "overlay", MS_RDONLY, p->overlay_opts) < 0) {
		return child_fail(err_fd, "cannot overlay a modules directory onto", p->libdir);
	}
	if (mount(src, p->release_dir, NULL, MS_BIND, NULL) < 0)
		return child_fail(err_fd, "cannot bind the build's modules to", p->release_dir);
	if (mount(NULL, p->release_dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		return child_fail(err_fd, "cannot make read-only:", p->release_dir);
	if (mount(p->stage_boot, "/boot", NULL, MS_BIND, NULL) < 0)
		return child_fail(err_fd, "cannot bind the build's config directory over", "/boot");
	return 0;
}

/* A path in overlayfs options: ',', ':' and '\' escaped. */
static void overlay_path(struct strbuf *sb, const char *path)
{
	for (const char *s = path; *s; s++) {
		if (*s == ',' || *s == ':' || *s == '\\')
			sb_append(sb, "\\", 1);
		sb_append(sb, s, 1);
	}
}

/* A release is one path component: what uname -r prints. */
static bool valid_release(const char *r)
{
	if (!r || !*r || strlen(r) >= 128 || strcmp(r, ".") == 0 || strcmp(r, "..") == 0)
		return false;
	for (const char *s = r; *s; s++)
		if (*s == '/' || (unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether path is dir or below it (both real paths). */
static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* "; it has modules of a, b" when dir holds other releases. */
static void other_releases(const char *dir, struct strbuf *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < 8;) {
		if (e->d_name[0] == '.')
			continue;
		sb_printf(err, "%s%s", n++ ? ", " : "; it has modules of ", e->d_name);
	}
	closedir(d);
}

static void output_tail(const struct strbuf *out, struct strbuf *err)
{
	if (!out->len) {
		sb_puts(err, " (it printed nothing)");
		return;
	}
	size_t n = out->len, lines = 0, i = n;
	while (i > 0 && out->buf[i - 1] == '\n')
		i--;
	size_t end = i;
	while (i > 0 && lines < OUTPUT_TAIL_LINES)
		if (out->buf[--i] == '\n')
			lines++;
	if (out->buf[i] == '\n')
		i++;
	sb_printf(err, "; its output ends:\n%.*s", (int)(end - i), out->buf + i);
}

static int run_depmod(const char *modroot, const char *release, const struct krun_user *owner, int log_fd,
		      struct strbuf *err)
{
	char *argv[] = { "depmod", "-b", (char *)modroot, (char *)release, NULL };
	struct strbuf out = { 0 };
	struct krun o = { .stdout_fd = -1, .log_fd = log_fd, .capture = &out, .user = owner };
	int status, r = krun(argv, &o, &status);
	if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		char how[64];
		util_wait_status_text(status, how, sizeof(how));
		sb_printf(err, "initramfs: depmod -b %s %s %s", modroot, release, how);
		output_tail(&out, err);
		r = -EIO;
	} else if (r < 0) {
		sb_printf(err, "initramfs: cannot run depmod (apt-get install kmod): %s", strerror(-r));
	}
	sb_free(&out);
	return r;
}

static int make_stage(const char *stage, const char *release, const char *config, struct ns_plan *p,
		      struct strbuf *err)
{
	char path[PATH_MAX + 300];
	static const char *const dirs[] = { "lib", "lib/modules", "boot" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", stage, dirs[i]);
		if (mkdir(path, 0755) < 0)
			goto fail;
	}
	snprintf(path, sizeof(path), "%s/lib/modules/%s", stage, release);
	if (mkdir(path, 0755) < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/boot/config-%s", stage, release);
	int r = util_copy_file(config, path);
	if (r < 0) {
		sb_printf(err, "initramfs: cannot copy %s to %s: %s", config, path, strerror(-r));
		return r;
	}
	snprintf(p->stage_modules, sizeof(p->stage_modules), "%s/lib/modules", stage);
	snprintf(p->stage_boot, sizeof(p->stage_boot), "%s/boot", stage);
	return 0;
fail:
	r = -errno;
	sb_printf(err, "initramfs: cannot make %s: %s", path, strerror(errno));
	return r;
}

/* The namespace plan, the machine's /lib/modules and /boot looked at. */
static int plan_namespace(const char *stage, const char *release, struct ns_plan *p, struct strbuf *err)
{
	snprintf(p->release_dir, sizeof(p->release_dir), "/lib/modules/%s", release);
	if (!is_dir("/boot")) {
		sb_printf(err, "initramfs: this machine has no /boot directory, where mkinitramfs reads the kernel's config");
		return -ENOENT;
	}
	p->over_modules = is_dir("/lib/modules");
	if (p->over_modules)
		return 0;
	if (!realpath("/lib", p->libdir)) {
		sb_printf(err, "initramfs: /lib: %s", strerror(errno));
		return -ENOENT;
	}
	struct strbuf o = { 0 };
	char lower[PATH_MAX + 8];
	snprintf(lower, sizeof(lower), "%s/lib", stage);
	sb_puts(&o, "lowerdir=");
	overlay_path(&o, lower);
	sb_puts(&o, ":");
	overlay_path(&o, p->libdir);
	bool fits = o.buf && o.len < sizeof(p->overlay_opts);
	if (fits)
		snprintf(p->overlay_opts, sizeof(p->overlay_opts), "%s", o.buf);
	sb_free(&o);
	if (!fits) {
		sb_printf(err, "initramfs: the path %s is too long for overlayfs options", stage);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Checks out's directory (real path into ret_dir): mkinitramfs must be
 * able to write there with /boot and /lib replaced. */
static int check_out_dir(const char *out, char ret_dir[PATH_MAX], struct strbuf *err)
{
	size_t n = out ? strlen(out) : 0;
	if (n == 0 || out[n - 1] == '/' || n >= PATH_MAX || is_dir(out)) {
		sb_printf(err, "initramfs: \"%s\" is not a file name to write the image to", out ? out : "");
		return -EINVAL;
	}
	char dir[PATH_MAX];
	const char *slash = strrchr(out, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash == out ? 1 : slash ? (int)(slash - out) : 1, slash ? out : ".");
	if (!realpath(dir, ret_dir) || !is_dir(ret_dir)) {
		sb_printf(err, "initramfs: the directory of %s, %s, does not exist", out, dir);
		return -ENOENT;
	}
	char boot[PATH_MAX], lib[PATH_MAX];
	if ((realpath("/boot", boot) && is_under(ret_dir, boot)) || (realpath("/lib", lib) && is_under(ret_dir, lib))) {
		sb_printf(err, "initramfs: %s is under /boot or /lib, which mkinitramfs sees replaced: write it elsewhere", out);
		return -EINVAL;
	}
	return 0;
}

static int usable(char tool[PATH_MAX], struct strbuf *err)
{
	if (!util_find_program(KINITRAMFS_TOOL, tool, PATH_MAX)) {
		const char *path = config_str(CONFIG_PATH);
		sb_printf(err, "initramfs: %s is not in PATH (%s): install Debian's initramfs-tools (apt-get install %s)",
			  KINITRAMFS_TOOL, path ? path : "unset", KINITRAMFS_PACKAGE);
		if (access("/usr/sbin/" KINITRAMFS_TOOL, X_OK) == 0)
			sb_puts(err, ", or add /usr/sbin, where it is, to PATH");
		return -ENOPKG;
	}
	/* a user namespace would do for the mounts, but mkinitramfs, root in
	 * it, then fails to give the files it copies their owner (root) */
	if (geteuid() != 0) {
		sb_printf(err, "initramfs: %s reads a kernel's modules only from /lib/modules/<release>; kab shows it a "
			  "build's there in a private mount namespace, which takes root: build as root", KINITRAMFS_TOOL);
		return -EPERM;
	}
	return 0;
}

int kinitramfs_usable(struct strbuf *err)
{
	char tool[PATH_MAX];
	return usable(tool, err);
}

int kinitramfs_make(const char *modroot, const char *release, const char *config, const char *out,
		    const struct krun_user *owner, int log_fd, struct strbuf *err)
{
	if (!valid_release(release)) {
		sb_printf(err, "initramfs: \"%s\" is not a kernel release (one name, as uname -r prints it)", release ? release : "");
		return -EINVAL;
	}
	char mods[PATH_MAX + 160], path[PATH_MAX + 200];
	snprintf(mods, sizeof(mods), "%s/lib/modules/%s", modroot, release);
	if (!is_dir(mods)) {
		sb_printf(err, "initramfs: no modules of %s in %s: %s is missing (make modules_install INSTALL_MOD_PATH=%s puts them there)",
			  release, modroot, mods, modroot);
		snprintf(path, sizeof(path), "%s/lib/modules", modroot);
		other_releases(path, err);
		return -ENOENT;
	}
	if (!config || access(config, R_OK) < 0) {
		sb_printf(err, "initramfs: the config of %s, %s, cannot be read: %s", release, config ? config : "(none)",
			  config ? strerror(errno) : "give the kernel's .config");
		return -ENOENT;
	}
	char outdir[PATH_MAX], tool[PATH_MAX];
	int r = check_out_dir(out, outdir, err);
	if (r < 0 || (r = usable(tool, err)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/modules.dep", mods);
	if (access(path, F_OK) < 0 && (r = run_depmod(modroot, release, owner, log_fd, err)) < 0)
		return r;

	char stage[PATH_MAX + 32], tmp_out[PATH_MAX + 48];
	snprintf(stage, sizeof(stage), "%s/.initramfs-XXXXXX", outdir);
	if (!mkdtemp(stage)) {
		r = -errno;
		sb_printf(err, "initramfs: cannot make a directory in %s: %s", outdir, strerror(errno));
		return r;
	}
	snprintf(tmp_out, sizeof(tmp_out), "%s/initrd.img", stage);
	struct ns_plan *plan = calloc(1, sizeof(*plan));
	struct strbuf output = { 0 }, setup_err = { 0 };
	if (!plan) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = make_stage(stage, release, config, plan, err)) < 0 || (r = plan_namespace(stage, release, plan, err)) < 0)
		goto out;
	snprintf(plan->modules, sizeof(plan->modules), "%s", mods);

	char *argv[] = { tool, "-o", tmp_out, (char *)release, NULL };
	struct krun o = { .stdout_fd = -1, .log_fd = log_fd, .capture = &output,
			  .child_setup = enter_namespace, .setup_ctx = plan, .setup_err = &setup_err };
	int status;
	if ((r = krun(argv, &o, &status)) < 0) {
		sb_printf(err, "initramfs: cannot run %s: %s", tool, strerror(-r));
		goto out;
	}
	if (setup_err.len) {
		sb_printf(err, "initramfs: cannot give %s its own /lib/modules and /boot: %s", KINITRAMFS_TOOL, setup_err.buf);
		r = -EPERM;
		goto out;
	}
	struct stat st;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char how[64];
		util_wait_status_text(status, how, sizeof(how));
		sb_printf(err, "initramfs: %s (%s) for %s %s", tool, KINITRAMFS_PACKAGE, release, how);
		output_tail(&output, err);
		r = -EIO;
	} else if (stat(tmp_out, &st) < 0 || st.st_size == 0) {
		sb_printf(err, "initramfs: %s for %s exited with status 0 but wrote no image", tool, release);
		output_tail(&output, err);
		r = -EIO;
	} else if (rename(tmp_out, out) < 0) {
		r = -errno;
		sb_printf(err, "initramfs: cannot rename %s to %s: %s", tmp_out, out, strerror(errno));
	}
out:
	util_remove_tree(stage);
	sb_free(&output);
	sb_free(&setup_err);
	free(plan);
	return r;
}
