/* kexec_file_load(2) and the kexec-tools fallback; see kexec.h. */
#include "kernels/kexec.h"
#include "kernels/run.h"
#include "harness/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/reboot.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef KEXEC_FILE_NO_INITRAMFS
#define KEXEC_FILE_NO_INITRAMFS 0x4
#endif

int kexec_supported(struct strbuf *why)
{
	if (access("/sys/kernel/kexec_loaded", F_OK) != 0) {
		sb_puts(why, "this kernel cannot kexec (no /sys/kernel/kexec_loaded: built without CONFIG_KEXEC_CORE)");
		return -ENOTSUP;
	}
	char *v = NULL;
	uint64_t on = 0;
	bool disabled = util_read_line("/proc/sys/kernel/kexec_load_disabled", &v) == 0 && util_parse_u64(v, &on) == 0 && on != 0;
	free(v);
	if (disabled) {
		sb_puts(why, "kexec is disabled on this machine (kernel.kexec_load_disabled = 1, which stays until reboot)");
		return -ENOTSUP;
	}
	return 0;
}

/* Whether word is a parameter kab replaces. */
static bool ours(const char *w, size_t n)
{
	static const char *const keys[] = { KEXEC_MARKER, "panic=", "oops=", "BOOT_IMAGE=", "initrd=" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t k = strlen(keys[i]);
		if (n >= k && strncmp(w, keys[i], k) == 0)
			return true;
	}
	return false;
}

int kexec_cmdline(const char *current, int64_t build_id, unsigned panic_s, const char *extra, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	/* everything after " -- " goes to init; keep it last */
	const char *end = current + strlen(current), *init_args = NULL;
	for (const char *p = current; *p; p++)
		if ((p == current || isspace((unsigned char)p[-1])) && strncmp(p, "--", 2) == 0 &&
		    (p[2] == 0 || isspace((unsigned char)p[2]))) {
			end = p;
			init_args = p;
			break;
		}
	for (const char *p = current; p < end;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n");
		if (p + n > end)
			n = (size_t)(end - p);
		if (n && !ours(p, n))
			sb_printf(&sb, "%s%.*s", sb.len ? " " : "", (int)n, p);
		p += n;
	}
	sb_printf(&sb, "%spanic=%u oops=panic " KEXEC_MARKER "%lld", sb.len ? " " : "", panic_s, (long long)build_id);
	if (extra && extra[0])
		sb_printf(&sb, " %s", extra);
	if (init_args) {
		size_t n = strlen(init_args);
		while (n && isspace((unsigned char)init_args[n - 1]))
			n--;
		sb_printf(&sb, " %.*s", (int)n, init_args);
	}
	int r = 0;
	if (!sb.buf)
		r = -ENOMEM;
	else if (sb.len >= len)
		r = -ENAMETOOLONG;
	else
		snprintf(buf, len, "%s", sb.buf);
	sb_free(&sb);
	return r;
}

int kexec_cmdline_max(const char *image, size_t *ret)
{
	_cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char h[0x240];
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h + 0x202, "HdrS", 4) != 0)
		return -EINVAL;
	unsigned version = h[0x206] | (unsigned)h[0x207] << 8;
	if (version < 0x206) {
		*ret = 255;
		return 0;
	}
	*ret = (size_t)h[0x238] | (size_t)h[0x239] << 8 | (size_t)h[0x23a] << 16 | (size_t)h[0x23b] << 24;
	return 0;
}

int64_t kexec_marker(const char *cmdline)
{
	size_t k = strlen(KEXEC_MARKER);
	int64_t id = -1;
	for (const char *p = cmdline; p && *p;) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n");
		if (n == 2 && strncmp(p, "--", 2) == 0)
			break;
		if (n > k && strncmp(p, KEXEC_MARKER, k) == 0) {
			char v[32];
			uint64_t u;
			snprintf(v, sizeof(v), "%.*s", (int)(n - k), p + k);
			if (util_parse_u64(v, &u) == 0 && u <= INT64_MAX)
				id = (int64_t)u; /* the last one wins, as for the kernel */
		}
		p += n;
	}
	return id;
}

int kexec_preflight(const char *image, const char *initrd, const char *cmdline, struct strbuf *err)
{
	if (access(image, R_OK) != 0) {
		sb_printf(err, "kernel image %s cannot be read (%s)", image, strerror(errno));
		return -EINVAL;
	}
	if (initrd && access(initrd, R_OK) != 0) {
		sb_printf(err, "initrd %s cannot be read (%s)", initrd, strerror(errno));
		return -EINVAL;
	}
	size_t max;
	int r = kexec_cmdline_max(image, &max);
	if (r < 0) {
		sb_printf(err, "kernel image %s is not an x86 bzImage (no \"HdrS\" setup header); kab switches only to bzImages", image);
		return -EINVAL;
	}
	/* cmdline_size counts the characters before the terminating NUL */
	if (strlen(cmdline) > max) {
		sb_printf(err, "the command line for %s is %zu characters, more than the %zu the kernel takes: shorten the variant's cmdline or the running kernel's",
			  image, strlen(cmdline), max);
		return -EINVAL;
	}
	return 0;
}

static int load_with_tools(const char *image, const char *initrd, const char *cmdline, struct strbuf *err)
{
	char *initrd_arg = NULL, *cmd_arg = NULL;
	if ((initrd && asprintf(&initrd_arg, "--initrd=%s", initrd) < 0) || asprintf(&cmd_arg, "--command-line=%s", cmdline) < 0) {
		free(initrd_arg);
		return -ENOMEM;
	}
	char *argv[] = { "kexec", "--load", (char *)image, cmd_arg, initrd_arg, NULL };
	struct strbuf out = { 0 };
	bool ok = krun_ok(argv, NULL, &out);
	if (!ok)
		sb_printf(err, "kexec_file_load is not in this kernel and kexec --load %s failed: %s", image,
			  out.buf ? out.buf : "kexec-tools not installed? (apt-get install kexec-tools)");
	sb_free(&out);
	free(initrd_arg);
	free(cmd_arg);
	return ok ? 0 : -EIO;
}

int kexec_load(const char *image, const char *initrd, const char *cmdline, struct strbuf *err)
{
	_cleanup_close_ int kfd = open(image, O_RDONLY | O_CLOEXEC);
	if (kfd < 0) {
		sb_printf(err, "cannot open %s: %s", image, strerror(errno));
		return -errno;
	}
	_cleanup_close_ int ifd = -1;
	if (initrd && (ifd = open(initrd, O_RDONLY | O_CLOEXEC)) < 0) {
		sb_printf(err, "cannot open %s: %s", initrd, strerror(errno));
		return -errno;
	}
	unsigned long flags = initrd ? 0 : KEXEC_FILE_NO_INITRAMFS;
	if (syscall(SYS_kexec_file_load, kfd, ifd, strlen(cmdline) + 1, cmdline, flags) == 0)
		return 0;
	int e = errno;
	if (e == ENOSYS) {
		log_info("kexec_file_load is not in this kernel: loading %s with kexec-tools (kexec --load)", image);
		return load_with_tools(image, initrd, cmdline, err);
	}
	if (e == EPERM)
		sb_printf(err, "kexec_file_load %s: not permitted (%s; run as root, and a kernel in lockdown takes only signed images)",
			  image, strerror(e));
	else if (e == EKEYREJECTED || e == EBADMSG)
		sb_printf(err, "kexec_file_load %s: the kernel wants a signed image (%s)", image, strerror(e));
	else
		sb_printf(err, "kexec_file_load %s: %s", image, strerror(e));
	return -e;
}

int kexec_exec(struct strbuf *err)
{
	reboot(LINUX_REBOOT_CMD_KEXEC);
	int e = errno;
	if (e == EINVAL || e == ENOSYS) {
		char *argv[] = { "kexec", "--exec", NULL };
		struct strbuf out = { 0 };
		krun_ok(argv, NULL, &out);
		sb_printf(err, "kexec --exec returned: %s", out.buf ? out.buf : "no output");
		sb_free(&out);
		return -EIO;
	}
	sb_printf(err, "reboot(LINUX_REBOOT_CMD_KEXEC): %s (was an image loaded?)", strerror(e));
	return -e;
}

bool kexec_judge(int64_t build_id, const char *expected_release, const char *cmdline, const char *release,
		 char *reason, size_t len)
{
	int64_t marker = kexec_marker(cmdline);
	if (marker != build_id) {
		if (marker < 0)
			snprintf(reason, len, "build %lld did not come up: the machine came up on %s without a kab.build marker (its default kernel, after a panic, a reset or a power cut)",
				 (long long)build_id, release);
		else
			snprintf(reason, len, "build %lld did not come up: the machine came up on build %lld (%s)", (long long)build_id,
				 (long long)marker, release);
		return false;
	}
	if (expected_release && expected_release[0] && strcmp(expected_release, release) != 0) {
		snprintf(reason, len, "build %lld came up as kernelrelease %s, not the %s it was built as", (long long)build_id,
			 release, expected_release);
		return false;
	}
	reason[0] = 0;
	return true;
}
