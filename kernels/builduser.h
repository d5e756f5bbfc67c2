/* The unprivileged user kernel builds run as, and the directories it owns.
 *
 * kab as root runs git, make and the compiler as kab-build (a system user
 * `make install` creates), never as root: a series' Makefile, a Kconfig
 * script or a compiler plugin then runs with kab-build's rights only. The
 * user owns the build's worktree, config and object directories; kab's
 * own files (logs, the lock, what it hands the build) stay root's in the
 * directory around them. kab reads what a build made only through
 * kbuser_open: no symlink is followed and only kab-build's regular files
 * are read, so a build cannot make root copy a file it could not read
 * itself. kab not root: its tools run as kab, and these are plain file
 * operations. */
#pragma once
#include "kernels/run.h"

#include <stddef.h>

struct strbuf;

#define KBUILD_USER "kab-build"
#define KBUILD_USER_ADD "useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin " KBUILD_USER
/* The largest file kab reads or copies out of a build directory. */
#define KBUSER_FILE_MAX (512u << 20)

/* The user a build's tools run as: 1 and *ret set when kab is root
 * (kab-build from the password database, HOME its entry's); 0 when kab
 * is not root (its tools run as kab; *ret untouched); -ENOENT when the
 * user is missing, -EPERM when it is root, with why and what to do in err. */
int kbuser_lookup(struct krun_user *ret, struct strbuf *err);

/* The user that reads path's repository: 1 and *ret set to path's owner
 * (its name from the password database, else "uid N"; HOME /nonexistent)
 * when kab is root and path belongs to another user, so that git never
 * runs as root in a directory someone else could have written; 0 when git
 * runs as kab itself (kab is not root, or root owns path); -errno when
 * path cannot be read. */
int kbuser_owner(const char *path, struct krun_user *ret);

/* dir made for u (mode 0755), or taken over when it exists: one made by
 * root (by an earlier kab) is chowned to u, its contents first and never
 * through a symlink (nftw FTW_PHYS, lchown); u's own is kept as it is;
 * one of another user is refused. dir's parent must be kab's. 1 when it
 * was taken over from root, 0 otherwise; -errno with err set. u NULL:
 * only made. */
int kbuser_own_dir(const struct krun_user *u, const char *dir, struct strbuf *err);

/* Opens a file a build made, for reading: O_NOFOLLOW, and it must be a
 * regular file of u's. -EPERM when it is not (a symlink, a device, a
 * file of root's). u NULL: a plain open. */
int kbuser_open(const struct krun_user *u, const char *path);
/* Its whole text (NUL-terminated), at most KBUSER_FILE_MAX bytes (-EFBIG). */
int kbuser_read_file(const struct krun_user *u, const char *path, char **ret, size_t *ret_len);
/* Copies it to `to`, a file kab makes anew (0644, not through a symlink). */
int kbuser_copy_out(const struct krun_user *u, const char *from, const char *to);
/* strerror, with -EPERM from kbuser_open said plainly. */
const char *kbuser_strerror(int r);

/* A file of kab's the build user reads: made anew (not through a
 * symlink), 0644 whatever the umask. */
int kbuser_write_for(const char *path, const char *text, size_t len);
/* dir (made as with mkdir -p, new directories 0755 whatever the umask), a
 * directory of kab's the build user only passes through: with u, it must
 * be root's and writable by root alone, else -EPERM with why in err. */
int kbuser_kab_dir(const struct krun_user *u, const char *dir, struct strbuf *err);

/* Removes dir, a directory u owns (taken over first when root made it),
 * as u (rm -rf), then its empty self as kab. 0 when gone or absent. */
int kbuser_remove(const struct krun_user *u, const char *dir, struct strbuf *err);
