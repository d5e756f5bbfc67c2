/* An initramfs for a kernel kab built, made with the distribution's tool
 * (Debian's mkinitramfs from initramfs-tools), so that a build whose
 * boot needs modules (a disk or file system driver built as a module)
 * can be kexec'd with it. */
#pragma once

struct strbuf;
struct krun_user;

#define KINITRAMFS_TOOL "mkinitramfs"
#define KINITRAMFS_PACKAGE "initramfs-tools-core"

/* Makes out, the initramfs of kernel release from the modules under
 * modroot/lib/modules/<release> (where make modules_install
 * INSTALL_MOD_PATH=modroot puts them; a missing modules.dep is made with
 * depmod -b) and the kernel's config, with the machine's
 * /etc/initramfs-tools settings: the image update-initramfs would make
 * for an installed kernel of that release. The machine's /lib/modules and
 * /boot are not written: mkinitramfs runs in a private mount namespace
 * where they show the release's modules and config only (so this needs
 * root). The tool's output goes to log_fd (-1: none). On failure err gets
 * one message naming the tool, what it said and what to do, and no out
 * is left, not even a partial one. -EINVAL: a bad release or an out under
 * /boot or /lib; -ENOENT: no modules of the release or no config;
 * -ENOPKG: mkinitramfs not in PATH; -EPERM: not root, or no mount
 * namespace; -EIO: mkinitramfs failed. owner (may be NULL): the user
 * modroot belongs to, as whom depmod writes there (mkinitramfs only
 * reads it, bound read-only, and its final component is not followed). */
int kinitramfs_make(const char *modroot, const char *release, const char *config, const char *out,
		    const struct krun_user *owner, int log_fd, struct strbuf *err);

/* Whether kinitramfs_make can work here (mkinitramfs in PATH, root), for
 * a check before a build: 0, or -ENOPKG / -EPERM with err saying why. */
int kinitramfs_usable(struct strbuf *err);
