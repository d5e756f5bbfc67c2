/* What a journal row may act on at recovery; see recover_scope.h. Each
 * check ends on what was opened (fstat, fstatfs), never on a name looked
 * at before. */
#include "harness/exec/recover_scope.h"
#include "harness/exec/cgroup.h"
#include "harness/exec/condition.h"
#include "harness/job/knob_allow.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

void rscope_machine(struct rscope *sc)
{
	*sc = (struct rscope){ .state_dir = state_path(), .state_fd = state_fd() };
	int version;
	if (cg_memory_version(&version, sc->cg_root, sizeof(sc->cg_root)) < 0)
		sc->cg_root[0] = 0;
	sc->mc = machine_conf_current();
}

void rscope_free(struct rscope *sc)
{
	sc->mc = NULL;
}

/* path is dir or below it (dir without a trailing "/"). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* s is prefix, then 1 to 19 digits, then the rest of s is what follows
 * (NULL: nothing), for names kab makes from numbers. */
static const char *after_number(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(s, prefix, n) != 0)
		return NULL;
	size_t digits = strspn(s + n, "0123456789");
	return digits > 0 && digits <= 19 ? s + n + digits : NULL;
}

/* prefix then the 6 characters of state_tempname and state_mkdtemp */
static bool random_name(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	if (len != n + 6 || strncmp(s, prefix, n) != 0)
		return false;
	for (size_t i = n; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", s[i]))
			return false;
	return true;
}

/* The resolved path opened with no symbolic link on it (openat2's
 * RESOLVE_NO_SYMLINKS; the last component alone without it). */
static int open_no_links(const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, flags | O_NOFOLLOW);
	return (int)fd;
}

int rscope_knob(const struct rscope *sc, const char *target, int *ret_fd, struct strbuf *why)
{
	static const char outside[] =
		"not a path under /proc/sys or /sys without \".\", \"..\" or empty components, where every knob kab sets is";
	if (!(under(target, "/proc/sys") || under(target, "/sys"))) {
		sb_puts(why, outside);
		return -EPERM;
	}
	_cleanup_free_ char *real = NULL;
	int r = knob_allow_canonical(target, &real); /* -EINVAL: ".", ".." or empty components */
	if (r == -EINVAL) {
		sb_puts(why, outside);
		return -EPERM;
	}
	if (r < 0) {
		sb_printf(why, "cannot resolve it: %s", strerror(-r));
		return r;
	}
	if (!(under(real, "/proc/sys") || under(real, "/sys"))) {
		sb_printf(why, "it resolves to %s, outside /proc/sys and /sys", real);
		return -EPERM;
	}
	const struct machine_conf *mc = sc->mc ? sc->mc : machine_conf_current();
	if (!cond_knob_file(target) && !knob_allowed(real, mc->knob_allow, mc->n_knob_allow)) {
		sb_printf(why, "%s is not a knob kab sets: neither on the allow list (SECURITY.md, \"Knobs\"; knobs.allow in %s) nor one of the conditioning keys' files",
			  real, machine_conf_path());
		return -EPERM;
	}
	int fd = open_no_links(real, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP || r == -EXDEV) {
			sb_printf(why, "a symbolic link appeared on %s", real);
			return -EPERM;
		}
		sb_printf(why, "cannot open %s: %s", real, strerror(-r));
		return r;
	}
	struct statfs sfs;
	struct stat st;
	if (fstatfs(fd, &sfs) < 0 || (sfs.f_type != SYSFS_MAGIC && sfs.f_type != PROC_SUPER_MAGIC) ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sb_printf(why, "%s is not a file of sysfs or procfs", real);
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return 0;
}

/* name under dirfd opened as a directory (O_PATH), not through a link:
 * 0 with *ret_fd, 1 when there is none, else -errno with why. */
static int open_dir_here(int dirfd, const char *name, const char *shown, int *ret_fd, struct strbuf *why)
{
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return 1;
		sb_printf(why, "%s: %s", shown, e == ENOTDIR || e == ELOOP ? "not a directory (a symbolic link?)" : strerror(e));
		return e == ENOTDIR || e == ELOOP ? -EPERM : -e;
	}
	*ret_fd = fd;
	return 0;
}

/* Opens name under dirfd as a directory, not through a link, and judges
 * it: root's and closed to other writers (state_subdir made it so). */
static int private_dir(int dirfd, const char *name, const char *shown, int *ret_fd, struct strbuf *why)
{
	int fd = -1;
	int r = open_dir_here(dirfd, name, shown, &fd, why);
	if (r != 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		sb_printf(why, "%s is not a directory of root's closed to others", shown);
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return 0;
}

int rscope_swapfile(const struct rscope *sc, const char *target, int *ret_dirfd, const char **ret_name, struct strbuf *why)
{
	if (!sc->state_dir || sc->state_fd < 0) {
		sb_puts(why, "no state directory is open, and kab removes only the swap files it made in its state directory");
		return -EPERM;
	}
	char jobs[PATH_MAX];
	snprintf(jobs, sizeof(jobs), "%s/jobs", sc->state_dir);
	const char *jd = under(target, jobs) ? target + strlen(jobs) + 1 : NULL;
	const char *slash = jd ? strchr(jd, '/') : NULL;
	const char *name = slash ? slash + 1 : NULL;
	const char *rest = jd ? after_number(jd, "job") : NULL;
	if (!name || !rest || *rest != '-' || !random_name(rest + 1, (size_t)(slash - rest - 1), "") ||
	    !random_name(name, strlen(name), "swap-")) {
		sb_printf(why,
			  "not a swap file kab makes (%s/jobN-XXXXXX/swap-XXXXXX in the state directory in use); "
			  "one of a job's own [swap] path is removed when its job ends, by hand after a crash (swapoff and rm it)",
			  jobs);
		return -EPERM;
	}
	char jdname[NAME_MAX + 1];
	snprintf(jdname, sizeof(jdname), "%.*s", (int)(slash - jd), jd);
	int jobs_fd, dfd;
	int r = private_dir(sc->state_fd, "jobs", jobs, &jobs_fd, why);
	if (r != 0)
		return r;
	char shown[PATH_MAX + 32];
	snprintf(shown, sizeof(shown), "%s/%s", jobs, jdname);
	r = private_dir(jobs_fd, jdname, shown, &dfd, why);
	close(jobs_fd);
	if (r != 0)
		return r;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = errno == ENOENT ? 1 : -errno;
		if (r < 0)
			sb_printf(why, "%s: %s", target, strerror(-r));
		close(dfd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0) {
		sb_printf(why, "%s is not a regular file of root's", target);
		close(dfd);
		return -EPERM;
	}
	*ret_dirfd = dfd;
	*ret_name = name;
	return 0;
}

static bool on_cgroupfs(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 && (sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC);
}

/* One step down a cgroup hierarchy: a directory, not a link, on cgroupfs. */
static int cgroup_dir(int dirfd, const char *name, const char *shown, int *ret_fd, struct strbuf *why)
{
	int fd = -1;
	int r = open_dir_here(dirfd, name, shown, &fd, why);
	if (r != 0)
		return r;
	if (!on_cgroupfs(fd)) {
		sb_printf(why, "%s is not on a cgroup file system", shown);
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return 0;
}

int rscope_cgroup(const struct rscope *sc, const char *target, struct strbuf *why)
{
	if (!sc->cg_root[0]) {
		sb_puts(why, "no memory cgroup controller is mounted, and kab's cgroups are under its mount");
		return -EPERM;
	}
	char kab[300];
	snprintf(kab, sizeof(kab), "%s/kab", sc->cg_root);
	const char *name = under(target, kab) ? target + strlen(kab) + 1 : NULL;
	const char *rest = name ? after_number(name, "job") : NULL;
	rest = rest ? after_number(rest, "-step") : NULL;
	if (!rest || *rest) {
		sb_printf(why, "not one of kab's cgroups (%s/jobN-stepM)", kab);
		return -EPERM;
	}
	_cleanup_close_ int root_fd = open(sc->cg_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		int e = errno;
		sb_printf(why, "%s: %s", sc->cg_root, strerror(e));
		return -e;
	}
	if (!on_cgroupfs(root_fd)) {
		sb_printf(why, "%s is not on a cgroup file system", sc->cg_root);
		return -EPERM;
	}
	int kab_fd, fd;
	int r = cgroup_dir(root_fd, "kab", kab, &kab_fd, why);
	if (r != 0)
		return r;
	r = cgroup_dir(kab_fd, name, target, &fd, why);
	close(kab_fd);
	if (r == 0)
		close(fd);
	return r;
}

int rscope_fcount(const char *target, struct strbuf *why)
{
	const char *rest = after_number(target, "kab-j");
	rest = rest ? after_number(rest, "-s") : NULL;
	if (!rest || *rest) {
		sb_puts(why, "not the tag kab gives a run's tracing (kab-jN-sM)");
		return -EPERM;
	}
	return 0;
}

int rscope_zram(const char *target, const char *original, int *ret_id, struct strbuf *why)
{
	uint64_t id;
	char dev[64];
	if (util_parse_u64(original, &id) < 0 || id > 65535 ||
	    (snprintf(dev, sizeof(dev), "/dev/zram%u", (unsigned)id), strcmp(dev, target) != 0)) {
		sb_puts(why, "not a zram device kab made (/dev/zramN, N its original)");
		return -EPERM;
	}
	*ret_id = (int)id;
	return 0;
}
