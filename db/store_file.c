/* The database file before SQLite opens it: only the user kab runs as (and
 * root) may be able to change it, its -wal, -shm and -journal, its
 * directory and every directory above it. kab as root replays the
 * journal it holds and runs the jobs it stores, so a database another
 * user could write is root for that user (SECURITY.md, "The database").
 * Judged on what is opened: directories walked from / by fd with
 * O_NOFOLLOW, each fstat'ed, the file opened under the last of them. */
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const sidecars[] = { "-wal", "-shm", "-journal" };

/* Root may use only root's; another user his own or root's. */
static bool owner_ok(uid_t owner, uid_t euid)
{
	return owner == euid || owner == 0;
}

static void owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];
	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

/* Why this user must not use a file or directory that is so, and what to do. */
static const char *why_it_matters(uid_t euid)
{
	return euid == 0 ? "kab runs as root and replays this database's journal and runs its jobs, so only root may be able to change it"
			 : "kab opens a database only when nobody but you and root can change it";
}

static const char *what_to_do(uid_t euid)
{
	return euid == 0 ? "use one only root can change: leave out --db (kab.db in the state directory, /var/lib/kab), "
			   "or, if you trust what is in it, chown root: and chmod go-w it, its -wal and -shm and its directory"
			 : "use one only you can change (chmod go-w it and its directory, or copy it to a directory of your own)";
}

/* A file (the database or a sidecar): why it is refused, or NULL. */
static const char *file_refusal(const struct stat *st, uid_t euid)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (!owner_ok(st->st_uid, euid))
		return euid == 0 ? "not root's" : "neither yours nor root's";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by its group or others";
	return NULL;
}

/* A directory on the way: its owner, and whoever may write in it, could
 * rename what lies below and put another database in its place; in a
 * sticky one (/tmp) others cannot. The database's own directory may not
 * be writable by others even when sticky: they could make its -wal. */
static const char *dir_refusal(const struct stat *st, uid_t euid, bool own)
{
	if (!owner_ok(st->st_uid, euid))
		return euid == 0 ? "not root's" : "neither yours nor root's";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (own || !(st->st_mode & S_ISVTX)))
		return "writable by its group or others";
	return NULL;
}

/* The first refusal that counts: the file's own, then its directory's,
 * its sidecars', the directories' above it. */
enum { AT_FILE, AT_DIR, AT_SIDECAR, AT_ABOVE, AT_N };
struct findings {
	char text[AT_N][PATH_MAX + 200];
	bool set[AT_N];
};

/* "kab.db: owned by uid 65534 (nobody), mode 0600 (not root's)" and the
 * like, for the path the user gave (db) and the name refused. */
static void note(struct findings *f, int at, const char *db, const char *name, const struct stat *st, const char *why)
{
	if (f->set[at])
		return;
	char who[96];
	owner_name(st->st_uid, who, sizeof(who));
	unsigned mode = (unsigned)(st->st_mode & 07777);
	if (at == AT_DIR)
		snprintf(f->text[at], sizeof(f->text[at]),
			 "%s: its directory %s is owned by %s, mode %04o (%s), so others could replace the database or its -wal",
			 db, name, who, mode, why);
	else if (at == AT_ABOVE)
		snprintf(f->text[at], sizeof(f->text[at]),
			 "%s: %s above it is owned by %s, mode %04o (%s), so others could put another database in its place",
			 db, name, who, mode, why);
	else
		snprintf(f->text[at], sizeof(f->text[at]), "%s: owned by %s, mode %04o (%s)", name, who, mode, why);
	f->set[at] = true;
}

static int absolute(const char *path, char *buf, size_t len)
{
	if (path[0] == '/')
		return snprintf(buf, len, "%s", path) >= (int)len ? -ENAMETOOLONG : 0;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return snprintf(buf, len, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path) >= (int)len ? -ENAMETOOLONG : 0;
}

/* Opens component comp of the walk under fd, a directory and not a link
 * (seen: the path so far, for messages). */
static int walk_one(int fd, const char *comp, const char *db, const char *seen, int *ret_fd, struct stat *ret_st, struct strbuf *err)
{
	int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd >= 0 && fstat(nfd, ret_st) == 0 && S_ISDIR(ret_st->st_mode)) {
		*ret_fd = nfd;
		return 0;
	}
	int e = nfd < 0 ? errno : ENOTDIR;
	if (nfd >= 0)
		close(nfd);
	struct stat lst;
	if (fstatat(fd, comp, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode)) {
		sb_printf(err, "database %s: %s is a symbolic link; kab opens a database by a path without one: name the file itself",
			  db, seen);
		return -ELOOP;
	}
	sb_printf(err, "database %s: %s: %s", db, seen, strerror(e));
	return -e;
}

/* Opens the directory that holds the database (abs, an absolute path),
 * from / one component at a time, never following a link, each judged
 * on what was opened; its fd and the offset of the file's name in abs. */
static int walk(const char *db, const char *abs, uid_t euid, struct findings *f, int *ret_fd, size_t *ret_name, struct strbuf *err)
{
	const char *last = strrchr(abs, '/');
	if (!last[1] || strcmp(last + 1, ".") == 0 || strcmp(last + 1, "..") == 0) {
		sb_printf(err, "database %s: not a file name", db);
		return -EISDIR;
	}
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		sb_printf(err, "database %s: cannot open /: %s", db, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	char seen[PATH_MAX] = "/";
	const char *why = dir_refusal(&st, euid, last == abs);
	if (why)
		note(f, last == abs ? AT_DIR : AT_ABOVE, db, seen, &st, why);
	for (const char *c = abs + 1; c < last;) {
		size_t n = strcspn(c, "/");
		if (n == 0) { /* "//" */
			c++;
			continue;
		}
		if (n > NAME_MAX) {
			close(fd);
			sb_printf(err, "database %s: a name in its path is longer than %d bytes", db, NAME_MAX);
			return -ENAMETOOLONG;
		}
		char comp[NAME_MAX + 1];
		memcpy(comp, c, n);
		comp[n] = 0;
		size_t sl = strlen(seen);
		snprintf(seen + sl, sizeof(seen) - sl, "%s%s", sl > 1 ? "/" : "", comp);
		int nfd = -1, r = walk_one(fd, comp, db, seen, &nfd, &st, err);
		close(fd);
		if (r < 0)
			return r;
		fd = nfd;
		const char *rest = c + n;
		while (rest < last && *rest == '/')
			rest++;
		bool own = rest == last;
		if ((why = dir_refusal(&st, euid, own)))
			note(f, own ? AT_DIR : AT_ABOVE, db, seen, &st, why);
		c += n + 1;
	}
	*ret_fd = fd;
	*ret_name = (size_t)(last + 1 - abs);
	return 0;
}

/* A file of ours that its group or others may read (an older kab made it
 * so) is closed to them; the database holds every job's text. */
static void close_to_others(int dirfd, const char *name, const char *shown, const struct stat *st, uid_t euid)
{
	if (st->st_uid != euid || !(st->st_mode & 077))
		return;
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
		return;
	if (fchmod(fd, st->st_mode & 0700) == 0)
		log_warn("%s was mode %04o, open to its group or others; now %04o", shown,
			 (unsigned)(st->st_mode & 07777), (unsigned)(st->st_mode & 0700));
}

/* The file name under dirfd: looked at through an O_PATH descriptor, which
 * needs no permission on the file and never follows a link. 1 when it is
 * not there. */
static int look(int dirfd, const char *name, struct stat *ret)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	return fstat(fd, ret) < 0 ? -errno : 0;
}

/* -EEXIST when a new database was made by someone else (root, or this
 * user: nobody else may write the directory) after it was looked for. */
static int prepare(const char *path, const char *abs, uid_t euid, struct strbuf *err)
{
	struct findings f = { 0 };
	int dirfd = -1;
	size_t name_at = 0;
	int r = walk(path, abs, euid, &f, &dirfd, &name_at, err);
	if (r < 0)
		return r;
	const char *name = abs + name_at;
	struct stat st, sst[ARRAY_SIZE(sidecars)];
	int sr[ARRAY_SIZE(sidecars)];
	r = look(dirfd, name, &st);
	if (r == 0 && S_ISLNK(st.st_mode)) {
		sb_printf(err, "database %s is a symbolic link: name the database file itself", path);
		r = -ELOOP;
		goto out;
	}
	if (r < 0) {
		sb_printf(err, "database %s: %s", path, strerror(-r));
		goto out;
	}
	const char *why = r == 0 ? file_refusal(&st, euid) : NULL;
	if (why)
		note(&f, AT_FILE, path, path, &st, why);
	for (size_t i = 0; i < ARRAY_SIZE(sidecars); i++) {
		char side[NAME_MAX + 16], shown[PATH_MAX + 16];
		snprintf(side, sizeof(side), "%s%s", name, sidecars[i]);
		snprintf(shown, sizeof(shown), "%s%s", path, sidecars[i]);
		sr[i] = look(dirfd, side, &sst[i]);
		if (sr[i] == 0 && (why = file_refusal(&sst[i], euid)))
			note(&f, AT_SIDECAR, path, shown, &sst[i], why);
	}
	for (int at = 0; at < AT_N; at++)
		if (f.set[at]) {
			sb_printf(err, "%s: %s; %s", f.text[at], why_it_matters(euid), what_to_do(euid));
			r = -EPERM;
			goto out;
		}
	if (r == 1) { /* a new database: 0600 whatever the umask (SQLite gives its -wal and -shm its mode) */
		int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = fd < 0 ? -errno : fchmod(fd, 0600) < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		if (r < 0 && r != -EEXIST)
			sb_printf(err, "cannot create database %s: %s", path, strerror(-r));
		goto out;
	}
	close_to_others(dirfd, name, path, &st, euid);
	for (size_t i = 0; i < ARRAY_SIZE(sidecars); i++)
		if (sr[i] == 0) {
			char side[NAME_MAX + 16], shown[PATH_MAX + 16];
			snprintf(side, sizeof(side), "%s%s", name, sidecars[i]);
			snprintf(shown, sizeof(shown), "%s%s", path, sidecars[i]);
			close_to_others(dirfd, side, shown, &sst[i], euid);
		}
	r = 0;
out:
	close(dirfd);
	return r;
}

int store_file_prepare(const char *path, struct strbuf *err)
{
	if (!path[0] || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 0;
	char abs[PATH_MAX];
	int r = absolute(path, abs, sizeof(abs));
	if (r < 0) {
		sb_printf(err, "database %s: %s", path, strerror(-r));
		return r;
	}
	uid_t euid = geteuid();
	r = prepare(path, abs, euid, err);
	if (r == -EEXIST) /* made meanwhile: judged as it now is */
		r = prepare(path, abs, euid, err);
	if (r == -EEXIST)
		sb_printf(err, "cannot create database %s: %s", path, strerror(EEXIST));
	return r;
}
