/* Switching kernels: checking that a kernel can be kexec'd, the command
 * line a kab boot gets, loading an image with kexec_file_load(2) (or
 * kexec-tools where the syscall is missing) and jumping to it, and judging
 * after a boot whether the kernel asked for is the one that came up. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* The marker kab puts on the command line of the kernels it boots. */
#define KEXEC_MARKER "kab.build="

/* Whether this kernel can kexec (CONFIG_KEXEC_CORE: /sys/kernel/kexec_loaded,
 * and not disabled by kernel.kexec_load_disabled). 0, or -ENOTSUP with why. */
int kexec_supported(struct strbuf *why);

/* The command line for a boot of build_id: current with kab's markers and
 * the parameters kab sets (kab.build, panic, oops) and the boot loader's
 * (BOOT_IMAGE, initrd) removed, then panic=panic_s oops=panic
 * kab.build=ID, then the variant's extra parameters (later ones win, so
 * extra can override panic). -ENAMETOOLONG when it does not fit len. */
int kexec_cmdline(const char *current, int64_t build_id, unsigned panic_s, const char *extra, char *buf, size_t len);

/* The longest command line the image takes (its setup header's
 * cmdline_size; 255 for boot protocols before 2.06). -EINVAL: not a bzImage. */
int kexec_cmdline_max(const char *image, size_t *ret);

/* The build id of kab.build=ID on a command line; -1 when absent. */
int64_t kexec_marker(const char *cmdline);

/* Checks before switching: the image and initrd readable, the image a
 * bzImage, the command line within its limit. 0, or -EINVAL with err. */
int kexec_preflight(const char *image, const char *initrd, const char *cmdline, struct strbuf *err);

/* Loads image (and initrd, may be NULL) with cmdline for the next kexec. */
int kexec_load(const char *image, const char *initrd, const char *cmdline, struct strbuf *err);
/* Jumps to the loaded kernel; returns only on failure. */
int kexec_exec(struct strbuf *err);

/* After a boot: whether the kernel running (its command line and
 * release) is build_id with release expected_release. true, or false with
 * the reason (written as "the machine came up on …"). */
bool kexec_judge(int64_t build_id, const char *expected_release, const char *cmdline, const char *release,
		 char *reason, size_t len);
