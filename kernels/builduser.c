/* The build user: looked up, given its directories, and what it made read
 * back without following it anywhere. */
#include "kernels/builduser.h"
#include "kernels/kbuild_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int kbuser_lookup(struct krun_user *ret, struct strbuf *err)
{
	if (geteuid() != 0)
		return 0;
	struct passwd pw, *found = NULL;
	char buf[4096];
	int r = getpwnam_r(KBUILD_USER, &pw, buf, sizeof(buf), &found);
	if (!found) {
		sb_printf(err, "the build user %s does not exist%s%s: kab runs git, make and the compiler of a kernel build as %s, "
			  "never as root; create it (make install does, or: %s)",
			  KBUILD_USER, r ? ": " : "", r ? strerror(r) : "", KBUILD_USER, KBUILD_USER_ADD);
		return -ENOENT;
	}
	if (pw.pw_uid == 0 || pw.pw_gid == 0) {
		sb_printf(err, "the build user %s has uid %u, gid %u: it must not be root (builds would run as root); "
			  "give it ids of its own (userdel %s, then %s)",
			  KBUILD_USER, (unsigned)pw.pw_uid, (unsigned)pw.pw_gid, KBUILD_USER, KBUILD_USER_ADD);
		return -EPERM;
	}
	*ret = (struct krun_user){ .uid = pw.pw_uid, .gid = pw.pw_gid };
	snprintf(ret->name, sizeof(ret->name), "%s", pw.pw_name);
	snprintf(ret->home, sizeof(ret->home), "%s", pw.pw_dir && *pw.pw_dir ? pw.pw_dir : "/nonexistent");
	return 1;
}

int kbuser_owner(const char *path, struct krun_user *ret)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (geteuid() != 0 || st.st_uid == 0)
		return 0;
	struct passwd pw, *found = NULL;
	char buf[4096];
	*ret = (struct krun_user){ .uid = st.st_uid, .gid = st.st_gid };
	if (getpwuid_r(st.st_uid, &pw, buf, sizeof(buf), &found) == 0 && found)
		snprintf(ret->name, sizeof(ret->name), "%s", pw.pw_name);
	else
		snprintf(ret->name, sizeof(ret->name), "uid %u", (unsigned)st.st_uid);
	snprintf(ret->home, sizeof(ret->home), "/nonexistent");
	return 1;
}

/* nftw has no context argument: the take-over in progress (one per thread). */
static _Thread_local struct {
	const struct krun_user *u;
	char bad[PATH_MAX];
	uid_t bad_uid;
	int err;
} adopt;

static int adopt_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_NS || flag == FTW_DNR) {
		snprintf(adopt.bad, sizeof(adopt.bad), "%s", path);
		adopt.err = errno ? errno : EACCES;
		return 1;
	}
	if (st->st_uid == adopt.u->uid)
		return 0;
	if (st->st_uid != 0) {
		snprintf(adopt.bad, sizeof(adopt.bad), "%s", path);
		adopt.bad_uid = st->st_uid;
		adopt.err = EPERM;
		return 1;
	}
	if (lchown(path, adopt.u->uid, adopt.u->gid) < 0) {
		snprintf(adopt.bad, sizeof(adopt.bad), "%s", path);
		adopt.err = errno;
		return 1;
	}
	return 0;
}

/* Root's directory tree to u: depth first, so each directory stays root's
 * (closed to u) until everything in it is done. */
static int take_over(const struct krun_user *u, const char *dir, struct strbuf *err)
{
	adopt.u = u;
	adopt.bad[0] = 0;
	adopt.err = 0;
	int r = nftw(dir, adopt_entry, 16, FTW_PHYS | FTW_DEPTH | FTW_MOUNT);
	if (r == 0)
		return 1;
	if (adopt.bad[0] && adopt.err == EPERM)
		sb_printf(err, "%s: cannot give it to the build user %s: %s belongs to uid %u, neither root nor %s; "
			  "remove %s (rm -rf) so kab makes it anew", dir, u->name, adopt.bad, (unsigned)adopt.bad_uid, u->name, dir);
	else
		sb_printf(err, "%s: cannot give it to the build user %s: %s: %s", dir, u->name, adopt.bad[0] ? adopt.bad : dir,
			  strerror(adopt.err ? adopt.err : errno));
	return -(adopt.err ? adopt.err : EIO);
}

int kbuser_own_dir(const struct krun_user *u, const char *dir, struct strbuf *err)
{
	struct stat st;
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0 || (u && lchown(dir, u->uid, u->gid) < 0)) {
			int r = -errno;
			sb_printf(err, "%s: cannot make it for the build user: %s", dir, strerror(errno));
			return r;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		sb_printf(err, "%s is not a directory (%s): remove it so kab makes it", dir, S_ISLNK(st.st_mode) ? "a symlink" : "a file");
		return -ENOTDIR;
	}
	if (!u || st.st_uid == u->uid)
		return 0;
	if (st.st_uid != 0) {
		sb_printf(err, "%s belongs to uid %u, neither root nor the build user %s (uid %u): remove it (rm -rf %s) so kab makes it anew",
			  dir, (unsigned)st.st_uid, u->name, (unsigned)u->uid, dir);
		return -EPERM;
	}
	return take_over(u, dir, err);
}

int kbuser_open(const struct krun_user *u, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (u ? O_NOFOLLOW | O_NONBLOCK : 0));
	if (fd < 0)
		return errno == ELOOP && u ? -EPERM : -errno;
	struct stat st;
	if (u && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != u->uid)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

const char *kbuser_strerror(int r)
{
	if (r == -EPERM)
		return "not a regular file of the build user's (kab follows no symlink and reads no other file there)";
	if (r == -EFBIG)
		return "larger than kab reads from a build";
	return strerror(-r);
}

int kbuser_read_file(const struct krun_user *u, const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = kbuser_open(u, path);
	if (fd < 0)
		return fd;
	struct strbuf sb = { 0 };
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		int r = n < 0 ? -errno : sb.len + (size_t)n > KBUSER_FILE_MAX ? -EFBIG : 0;
		if (r == 0 && n > 0)
			r = sb_append(&sb, buf, (size_t)n);
		if (r < 0) {
			sb_free(&sb);
			return r;
		}
		if (n == 0)
			break;
	}
	if (!sb.buf && !(sb.buf = strdup("")))
		return -ENOMEM;
	*ret = sb.buf;
	*ret_len = sb.len;
	return 0;
}

int kbuser_copy_out(const struct krun_user *u, const char *from, const char *to)
{
	_cleanup_close_ int in = kbuser_open(u, from);
	if (in < 0)
		return in;
	unlink(to);
	_cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	int r = util_copy_fd(in, out, KBUSER_FILE_MAX);
	if (r < 0)
		return r;
	int fd = out;
	out = -1;
	return close(fd) < 0 ? -errno : 0;
}

int kbuser_remove(const struct krun_user *u, const char *dir, struct strbuf *err)
{
	struct stat st;
	if (lstat(dir, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!u || !S_ISDIR(st.st_mode)) {
		int r = util_remove_tree(dir);
		if (r < 0)
			sb_printf(err, "%s: cannot remove: %s", dir, strerror(-r));
		return r;
	}
	int r = kbuser_own_dir(u, dir, err);
	if (r < 0)
		return r;
	/* its contents as u; the directory itself sits in kab's */
	char *argv[] = { "rm", "-rf", "--one-file-system", "--", (char *)dir, NULL };
	struct strbuf out = { 0 };
	struct krun o = { .user = u };
	krun_ok_as(argv, &o, &out);
	if (rmdir(dir) < 0 && errno != ENOENT) {
		r = -errno;
		sb_printf(err, "%s: cannot remove it: %s%s%s", dir, strerror(errno), out.len ? "; rm said: " : "", out.len ? out.buf : "");
	}
	sb_free(&out);
	return r < 0 ? r : 0;
}

static int write_all(int fd, const char *text, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

int kbuild_copy_as(const struct kbuild_as *as, const char *from, const char *to, struct strbuf *err)
{
	if (!as->user) {
		int r = util_copy_file(from, to);
		if (r < 0)
			sb_printf(err, "cannot copy %s to %s: %s", from, to, strerror(-r));
		return r;
	}
	char *argv[] = { "cp", "-f", "--", (char *)from, (char *)to, NULL };
	struct strbuf out = { 0 };
	struct krun o = { .user = as->user, .env = as->env };
	bool ok = krun_ok_as(argv, &o, &out);
	if (!ok)
		sb_printf(err, "cannot copy %s to %s as %s: %s", from, to, as->user->name, out.len ? out.buf : "cp failed");
	sb_free(&out);
	return ok ? 0 : -EIO;
}

int kbuild_put(const struct kbuild_as *as, const char *text, size_t len, const char *dst, struct strbuf *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", dst);
	if (as->user)
		snprintf(path, sizeof(path), "%s/put.tmp", as->stage);
	unlink(path);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	int r = fd < 0 ? -errno : fchmod(fd, 0644) < 0 ? -errno : write_all(fd, text, len);
	if (r == 0) {
		int f = fd;
		fd = -1;
		r = close(f) < 0 ? -errno : 0;
	}
	if (r < 0) {
		sb_printf(err, "%s: cannot write: %s", path, strerror(-r));
		return r;
	}
	if (as->user) {
		r = kbuild_copy_as(as, path, dst, err);
		unlink(path);
	}
	return r;
}

/* A file of kab's the build user reads (0644 whatever the umask), made anew. */
int kbuser_write_for(const char *path, const char *text, size_t len)
{
	unlink(path);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || fchmod(fd, 0644) < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	int f = fd;
	fd = -1;
	return close(f) < 0 ? -errno : 0;
}

/* mkdir -p whose new directories are searchable (0755) whatever the
 * umask: the build user passes through them. */
static int mkdir_searchable(const char *path)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char was = *s;
		*s = 0;
		if (mkdir(p, 0755) == 0) {
			if (chmod(p, 0755) < 0)
				return -errno;
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (!was)
			return 0;
		*s = was;
	}
}

int kbuser_kab_dir(const struct krun_user *u, const char *dir, struct strbuf *err)
{
	struct stat st;
	int r = mkdir_searchable(dir);
	if (r < 0 || lstat(dir, &st) < 0) {
		sb_printf(err, "%s: cannot create: %s", dir, strerror(r < 0 ? -r : errno));
		return r < 0 ? r : -errno;
	}
	if (!u)
		return 0;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		sb_printf(err, "%s must be a directory of root's that only root may write (it is %s of uid %u, mode %04o): "
			  "kab keeps its logs and lock there, out of the build user's reach; fix it or give another --work-dir",
			  dir, S_ISDIR(st.st_mode) ? "a directory" : "not a directory", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}
