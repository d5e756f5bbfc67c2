/* switch = reboot: boot a build once through the machine's boot loader
 * instead of kexec. A plan is a list of steps (copy, write, run) made from
 * the build and the files under a root directory ("/" normally, a fake
 * root in tests); it is printed for logs and dry runs, then performed.
 *
 * systemd-boot: the image (and initrd) go to ESP/kab/ID/, a Boot Loader
 * Specification Type #1 entry to ESP/loader/entries/kab-ID.conf, then
 * `bootctl set-oneshot kab-ID.conf` and `systemctl reboot`.
 *
 * GRUB: the image (and initrd) go to /boot/kab/ID/, the entry into kab's
 * block of /boot/grub/custom.cfg (which the stock /etc/grub.d/41_custom
 * sources at boot, so no update-grub), then `grub-reboot kab-build-ID`
 * and `systemctl reboot`. One-shot relies on GRUB clearing next_entry
 * with save_env at boot, which it cannot do when grubenv sits on LVM,
 * RAID or btrfs: there the entry stays the default until grub-reboot or
 * grub-editenv unset next_entry is run. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct strbuf;

enum kreboot_loader { KREBOOT_AUTO, KREBOOT_SYSTEMD_BOOT, KREBOOT_GRUB };

struct kreboot_target {
	int64_t build_id;          /* > 0 */
	const char *image;         /* the kernel image file (bzImage) */
	const char *initrd;        /* NULL: none */
	const char *kernelrelease; /* e.g. 6.1.0-kab3 */
	const char *cmdline;       /* the full command line, kab.build=ID included */
};

enum kreboot_kind { KREBOOT_COPY, KREBOOT_WRITE, KREBOOT_RUN };

struct kreboot_step {
	enum kreboot_kind kind;
	char *path;     /* COPY: destination; WRITE: file written (tmp + rename) */
	char *src;      /* COPY: source */
	char *content;  /* WRITE: the file's text */
	char **argv;    /* RUN: NULL-terminated */
};

struct kreboot_plan {
	enum kreboot_loader loader;
	struct kreboot_step *steps;
	size_t n;
};

/* The boot loader of the machine under root: systemd-boot when an ESP
 * holds loader/loader.conf (looked for in <root>/efi, <root>/boot,
 * <root>/boot/efi, bootctl's order), else GRUB when <root>/boot/grub/grub.cfg
 * exists; -ENOENT and err naming what was looked for otherwise. esp (may
 * be NULL) gets the ESP's path with root in front for systemd-boot, ""
 * for GRUB. */
int kreboot_detect(const char *root, enum kreboot_loader *ret, char *esp, size_t esp_len, struct strbuf *err);

/* The steps that make the next boot, and only the next, boot t, the last
 * one the reboot. l = KREBOOT_AUTO detects the loader. Paths in the steps
 * are under root. Refuses (-EINVAL, -ENOENT, …, err saying why) a missing
 * or unreadable image or initrd, a command line with a newline (either
 * loader) or, for GRUB, with a quote or backslash, and a grub.cfg that
 * does not source custom.cfg. */
int kreboot_plan_make(const struct kreboot_target *t, enum kreboot_loader l, const char *root,
		      struct kreboot_plan *ret, struct strbuf *err);

/* The plan shell-like: "install -D -m 0644 SRC DST", "write PATH <<'EOF'"
 * with the text and "EOF" on lines of their own, "bootctl set-oneshot
 * kab-3.conf", "systemctl reboot"; words quoted when the shell needs it. */
void kreboot_plan_print(const struct kreboot_plan *p, FILE *out);

/* Performs the steps in order: COPY and WRITE through a temporary file in
 * the same directory, fsync'd and renamed over the destination (parents
 * created); RUN waits for the command, which must exit 0. dry performs
 * the COPY and WRITE steps and none of the RUN steps: the files are in
 * place but the one-shot is not armed and nothing reboots. With dry false
 * the last step asks systemd to reboot and returns 0 once it has accepted.
 * The first failing step stops the plan, err naming it. */
int kreboot_plan_run(const struct kreboot_plan *p, bool dry, struct strbuf *err);

void kreboot_plan_free(struct kreboot_plan *p);

/* Helpers of the GRUB plan, public for the tests. */

/* One menuentry for t, its kernel under boot_prefix ("/boot", or "" when
 * /boot is a filesystem of its own) and `search --fs-uuid` for uuid
 * unless it is NULL. -EINVAL with err when the command line cannot be
 * written for GRUB. */
int kreboot_grub_entry(const struct kreboot_target *t, const char *boot_prefix, const char *uuid,
		       struct strbuf *out, struct strbuf *err);
/* custom.cfg's text old (NULL: no file) with entry (of build id) put in
 * kab's block: the operator's text outside the block kept as it is, the
 * block's entries of other builds kept, one of the same id replaced. */
int kreboot_grub_merge(const char *old, int64_t id, const char *entry, char **ret, struct strbuf *err);
/* The name in by_uuid_dir (/dev/disk/by-uuid) of the block device dev:
 * -ENOENT when none. */
int kreboot_fs_uuid(const char *by_uuid_dir, dev_t dev, char *ret, size_t len);
