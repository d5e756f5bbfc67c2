/* Reading secrets: every directory on the way to the file is checked as
 * the walk passes it, then owner and mode on the open file (fstat), so
 * what is checked is what is read and no other user could have swapped it. */
#include "harness/base/secret.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fd's stat into sb when it is a regular file: 0, else the error said */
static int regular(int fd, const char *path, const char *what, struct stat *sb, struct strbuf *err)
{
	if (fstat(fd, sb) < 0) {
		int e = errno;
		sb_printf(err, "%s: cannot stat the %s: %s", path, what, strerror(e));
		return -e;
	}
	if (!S_ISREG(sb->st_mode)) {
		sb_printf(err, "%s: the %s is %s, not a regular file", path, what, util_file_kind(sb->st_mode));
		return -EINVAL;
	}
	return 0;
}

int secret_check_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err)
{
	struct stat sb;
	int r = regular(fd, path, what, &sb, err);
	if (r < 0)
		return r;
	if (sb.st_uid != owner || (sb.st_mode & 077)) {
		char who[64], uid[16], chown[PATH_MAX + 32] = "";
		snprintf(uid, sizeof(uid), "%u", (unsigned)owner);
		if (owner == 0)
			snprintf(who, sizeof(who), "root");
		else
			snprintf(who, sizeof(who), "the user running kab (uid %u)", (unsigned)owner);
		if (sb.st_uid != owner)
			snprintf(chown, sizeof(chown), "chown %s %s; ", owner ? uid : "root", path);
		sb_printf(err,
			  "%s: the %s has mode %04o and owner uid %u: it must be owned by %s and not readable or writable by "
			  "group or others (%schmod 600 %s)",
			  path, what, (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid, who, chown, path);
		return -EPERM;
	}
	return 0;
}

int secret_check_trusted_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err)
{
	struct stat sb;
	int r = regular(fd, path, what, &sb, err);
	if (r < 0)
		return r;
	bool owned = sb.st_uid == 0 || sb.st_uid == owner;
	if (owned && !(sb.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	char who[80], chown[PATH_MAX + 32] = "";
	if (owner == 0)
		snprintf(who, sizeof(who), "root");
	else
		snprintf(who, sizeof(who), "root or the user running kab (uid %u)", (unsigned)owner);
	if (!owned)
		snprintf(chown, sizeof(chown), "chown root %s; ", path);
	sb_printf(err,
		  "%s: the %s has mode %04o and owner uid %u: it decides what kab trusts, so it must be owned by %s "
		  "and not writable by group or others (%schmod go-w %s)",
		  path, what, (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid, who, chown, path);
	return -EPERM;
}

/* as the kernel's MAXSYMLINKS */
#define SECRET_MAX_SYMLINKS 40

/* one walk from / to a secret (or a trusted file), for the checks and
 * their messages */
struct walk {
	const char *path, *what;
	uid_t owner;
	bool trusted; /* the file as secret_check_trusted_fd wants it, not secret_check_fd */
	struct strbuf *err;
	char at[PATH_MAX];   /* the directory reached, as a path from / */
	bool open_to_others; /* at is writable by others, with the sticky bit */
};

static bool may_own(const struct walk *w, uid_t uid)
{
	return uid == 0 || uid == w->owner;
}

/* what the walk leads to, for its messages */
static const char *kind(const struct walk *w)
{
	return w->trusted ? "a file kab trusts" : "a secret";
}

static const char *owners(const struct walk *w, char *buf, size_t n)
{
	if (w->owner == 0)
		return "root";
	snprintf(buf, n, "root or the user running kab (uid %u)", (unsigned)w->owner);
	return buf;
}

/* A directory others may write could have had the file, or a directory
 * or symlink on its way, swapped in; one with the sticky bit (/tmp) may
 * be passed, since what lies in it is checked as root's (or kab's), but
 * it may not hold the secret itself (see secret_open). */
static int check_dir(struct walk *w, int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		sb_printf(w->err, "%s: cannot stat %s on the way to the %s: %s", w->path, w->at, w->what, strerror(e));
		return -e;
	}
	bool writable = sb.st_mode & (S_IWGRP | S_IWOTH);
	w->open_to_others = writable && (sb.st_mode & S_ISVTX);
	if (may_own(w, sb.st_uid) && (!writable || w->open_to_others))
		return 0;
	char who[80], chown[PATH_MAX + 16] = "";
	if (!may_own(w, sb.st_uid))
		snprintf(chown, sizeof(chown), "chown root %s; ", w->at);
	sb_printf(w->err,
		  "%s: the %s is under the directory %s, which has mode %04o and owner uid %u: every directory on its path "
		  "must be owned by %s and not writable by group or others, or another user could swap the file "
		  "(%schmod go-w %s)",
		  w->path, w->what, w->at, (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid,
		  owners(w, who, sizeof(who)), chown, w->at);
	return -EPERM;
}

/* at, one directory down (name) or up (..) */
static int at_move(struct walk *w, const char *name)
{
	if (strcmp(name, "..") == 0) {
		char *slash = strrchr(w->at, '/');
		if (slash == w->at)
			w->at[1] = '\0'; /* up from /etc, or from / itself: / */
		else
			*slash = '\0';
		return 0;
	}
	size_t n = strlen(w->at);
	if (snprintf(w->at + n, sizeof(w->at) - n, "%s%s", n > 1 ? "/" : "", name) >= (int)(sizeof(w->at) - n)) {
		sb_printf(w->err, "%s: the %s's path is too long once its symlinks are followed", w->path, w->what);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* The symlink name (fd, in at) replaced by its target in todo, whose rest
 * is what followed it; 1 when the target is absolute (the walk starts
 * again from /). Its owner is checked: root's or kab's, as a directory. */
static int follow(struct walk *w, int fd, const struct stat *sb, const char *name, char *todo, size_t todo_size, const char *rest)
{
	char link[PATH_MAX], who[80];
	if (!may_own(w, sb->st_uid)) {
		const char *sep = strlen(w->at) > 1 ? "/" : "";
		sb_printf(w->err,
			  "%s: the %s's path goes through the symlink %s%s%s, owned by uid %u: a symlink on %s path "
			  "must be owned by %s (chown -h root %s%s%s)",
			  w->path, w->what, w->at, sep, name, (unsigned)sb->st_uid,
			  w->trusted ? "a trusted file's" : "a secret's", owners(w, who, sizeof(who)), w->at, sep, name);
		return -EPERM;
	}
	ssize_t n = readlinkat(fd, "", link, sizeof(link));
	if (n < 0 || n == (ssize_t)sizeof(link)) {
		int e = n < 0 ? errno : ENAMETOOLONG;
		sb_printf(w->err, "%s: cannot read the symlink %s on the way to the %s: %s", w->path, name, w->what, strerror(e));
		return -e;
	}
	link[n] = '\0';
	char next[2 * PATH_MAX];
	if (snprintf(next, sizeof(next), "%s%s", link, rest) >= (int)sizeof(next) || strlen(next) >= todo_size) {
		sb_printf(w->err, "%s: the %s's path is too long once its symlinks are followed", w->path, w->what);
		return -ENAMETOOLONG;
	}
	memcpy(todo, next, strlen(next) + 1);
	return link[0] == '/';
}

/* the file reached, as its kind wants it */
static int check_file(const struct walk *w, int fd)
{
	if (w->trusted)
		return secret_check_trusted_fd(fd, w->path, w->what, w->owner, w->err);
	return secret_check_fd(fd, w->path, w->what, w->owner, w->err);
}

/* The file at the end of the walk, in directory dir: checked before it
 * is opened (so no device or FIFO is), opened, and checked again. */
static int open_last(struct walk *w, int dir, int fd, const char *name, int *ret_fd)
{
	char who[80];
	if (w->open_to_others) {
		struct stat sb = { 0 };
		(void)fstat(dir, &sb);
		sb_printf(w->err,
			  "%s: the %s is in the directory %s, which has mode %04o: a directory others may write is no "
			  "place for %s, even with the sticky bit (as /tmp has): move it to a directory only %s "
			  "may write, such as /etc/kab",
			  w->path, w->what, w->at, (unsigned)(sb.st_mode & 07777), kind(w), owners(w, who, sizeof(who)));
		return -EPERM;
	}
	int r = check_file(w, fd);
	if (r < 0)
		return r;
	_cleanup_close_ int f = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (f < 0) {
		int e = errno;
		sb_printf(w->err, "%s: cannot open the %s: %s", w->path, w->what, strerror(e));
		return -e;
	}
	if ((r = check_file(w, f)) < 0)
		return r;
	*ret_fd = f;
	f = -1;
	return 0;
}

/* The walk at / again (at the start, and after an absolute symlink). */
static int walk_root(struct walk *w, int *ret_dir)
{
	snprintf(w->at, sizeof(w->at), "/");
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		int e = errno;
		sb_printf(w->err, "%s: cannot open / on the way to the %s: %s", w->path, w->what, strerror(e));
		return -e;
	}
	int r = check_dir(w, dir);
	if (r < 0) {
		close(dir);
		return r;
	}
	*ret_dir = dir;
	return 0;
}

/* The walk from / to path, then the file checked as w's kind wants it. */
static int walk_open(struct walk *w, int *ret_fd)
{
	const char *path = w->path, *what = w->what;
	struct strbuf *err = w->err;
	char todo[2 * PATH_MAX], name[NAME_MAX + 1], cwd[PATH_MAX] = "";
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		int e = errno;
		sb_printf(err, "%s: cannot open the %s: the working directory: %s", path, what, strerror(e));
		return -e;
	}
	if (snprintf(todo, sizeof(todo), "%s/%s", cwd, path) >= (int)sizeof(todo)) {
		sb_printf(err, "%s: cannot open the %s: %s", path, what, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	_cleanup_close_ int dir = -1;
	int r = walk_root(w, &dir);
	if (r < 0)
		return r;
	unsigned links = 0;
	for (char *p = todo;;) {
		p += strspn(p, "/");
		if (!*p) /* the path names a directory: said as the file's check says it */
			return check_file(w, dir);
		size_t len = strcspn(p, "/");
		if (len > NAME_MAX) {
			sb_printf(err, "%s: cannot open the %s: %s", path, what, strerror(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		if (strcmp(name, ".") == 0)
			continue;
		_cleanup_close_ int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat sb;
		if (fd < 0 || fstat(fd, &sb) < 0) {
			int e = errno;
			sb_printf(err, "%s: cannot open the %s: %s", path, what, strerror(e));
			return -e;
		}
		if (S_ISLNK(sb.st_mode)) {
			if (++links > SECRET_MAX_SYMLINKS) {
				sb_printf(err, "%s: cannot open the %s: %s", path, what, strerror(ELOOP));
				return -ELOOP;
			}
			if ((r = follow(w, fd, &sb, name, todo, sizeof(todo), p)) < 0)
				return r;
			p = todo;
			if (r == 1) {
				close(dir);
				dir = -1;
				if ((r = walk_root(w, &dir)) < 0)
					return r;
			}
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			if ((r = at_move(w, name)) < 0)
				return r;
			close(dir);
			dir = fd;
			fd = -1;
			if ((r = check_dir(w, dir)) < 0)
				return r;
			continue;
		}
		if (p[strspn(p, "/")]) {
			sb_printf(err, "%s: cannot open the %s: %s is %s, not a directory", path, what, name,
				  util_file_kind(sb.st_mode));
			return -ENOTDIR;
		}
		return open_last(w, dir, fd, name, ret_fd);
	}
}

int secret_open(const char *path, const char *what, uid_t owner, int *ret_fd, struct strbuf *err)
{
	struct walk w = { .path = path, .what = what, .owner = owner, .err = err };
	return walk_open(&w, ret_fd);
}

int secret_open_trusted(const char *path, const char *what, uid_t owner, int *ret_fd, struct strbuf *err)
{
	struct walk w = { .path = path, .what = what, .owner = owner, .trusted = true, .err = err };
	return walk_open(&w, ret_fd);
}

/* secret_read, the file owner's */
static int read_owned(const char *path, const char *what, uid_t owner, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	struct strbuf why = { 0 };
	int r = secret_open(path, what, owner, &fd, &why);
	if (r < 0) {
		log_error("%s", why.buf ? why.buf : path);
		sb_free(&why);
		return r;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return -errno;
	if (sb.st_size > SECRET_MAX_SIZE) {
		log_error("%s: the %s is over %d bytes", path, what, SECRET_MAX_SIZE);
		return -EFBIG;
	}
	char *buf;
	if ((r = util_read_fd_exact(fd, (size_t)sb.st_size, &buf)) < 0) {
		if (r == -EIO)
			log_error("%s: cannot read the %s", path, what);
		return r;
	}
	*ret = buf;
	*ret_len = (size_t)sb.st_size;
	return 0;
}

int secret_read_trusted(const char *path, const char *what, uid_t owner, char **ret, size_t *ret_len, struct strbuf *err)
{
	_cleanup_close_ int fd = -1;
	int r = secret_open_trusted(path, what, owner, &fd, err);
	if (r < 0)
		return r;
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		sb_printf(err, "%s: cannot stat the %s: %s", path, what, strerror(e));
		return -e;
	}
	if (sb.st_size > SECRET_TRUSTED_MAX_SIZE) {
		sb_printf(err, "%s: the %s is over %d bytes", path, what, SECRET_TRUSTED_MAX_SIZE);
		return -EFBIG;
	}
	char *buf;
	if ((r = util_read_fd_exact(fd, (size_t)sb.st_size, &buf)) < 0) {
		if (r == -EIO)
			sb_printf(err, "%s: cannot read the %s (it changed size while read?)", path, what);
		return r;
	}
	*ret = buf;
	if (ret_len)
		*ret_len = (size_t)sb.st_size;
	return 0;
}

int secret_read(const char *path, const char *what, char **ret, size_t *ret_len)
{
	return read_owned(path, what, 0, ret, ret_len);
}

int secret_read_token(const char *path, char **ret)
{
	return secret_read_user_token(path, 0, ret);
}

int secret_read_user_token(const char *path, uid_t owner, char **ret)
{
	char *t;
	size_t len;
	int r = read_owned(path, "token file", owner, &t, &len);
	if (r < 0)
		return r;
	while (len && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ' || t[len - 1] == '\t'))
		t[--len] = 0;
	if (len < 8 || strlen(t) != len || strpbrk(t, " \t\r\n")) {
		log_error("%s: the token must be one line of at least 8 characters without spaces", path);
		free(t);
		return -EINVAL;
	}
	*ret = t;
	return 0;
}
