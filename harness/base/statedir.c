/* kab's state directory: found, created 0700, checked that only root can
 * change it or anything above it; fresh names under it by directory fd. */
#include "harness/base/statedir.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define WHAT_TO_DO "or name another with --state-dir or $" STATE_DIR_ENV

static struct {
	char path[PATH_MAX];
	int fd;
} state = { "", -1 };

const char *state_path(void) { return state.fd >= 0 ? state.path : NULL; }
int state_fd(void) { return state.fd; }

void state_reset(void)
{
	if (state.fd >= 0)
		close(state.fd);
	state.fd = -1;
	state.path[0] = 0;
}

/* kab writes there as root, so root must own it (also when a test or
 * kab check runs as another user: the answer is the one root would get) */
static bool owner_ok(uid_t uid) { return uid == 0; }

/* "/a/b/" -> "/a/b"; refuses a relative path and ".", ".." or empty
 * components, so the path shown is the path used. */
static int normalize(const char *in, char *out, size_t len)
{
	size_t n = strlen(in);
	while (n > 1 && in[n - 1] == '/')
		n--;
	if (in[0] != '/' || n >= len || n < 2)
		return -EINVAL;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && in[j] != '/')
			j++;
		size_t c = j - i - 1;
		if (c == 0 || (c == 1 && in[i + 1] == '.') || (c == 2 && in[i + 1] == '.' && in[i + 2] == '.'))
			return -EINVAL;
		i = j;
	}
	memcpy(out, in, n);
	out[n] = 0;
	return 0;
}

static void join(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
}

/* Why a directory kab writes in as root is refused, or NULL. */
static const char *dir_refusal(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a directory";
	if (!owner_ok(st->st_uid))
		return "is not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "is writable by its group or others";
	return NULL;
}

static void refuse(struct strbuf *err, const char *path, const struct stat *st, const char *why)
{
	sb_printf(err, "%s %s (owner uid %u, mode %04o): kab writes there as root, so whoever else can change it could redirect those writes; "
		  "chown root:root %s and chmod 0700 %s, " WHAT_TO_DO,
		  path, why, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), path, path);
}

int state_subdir(int dirfd, const char *path, const char *name, int *ret_fd, struct strbuf *err)
{
	char full[PATH_MAX];
	join(path, name, full, sizeof(full));
	bool made = mkdirat(dirfd, name, 0700) == 0;
	if (!made && errno != EEXIST) {
		int e = errno;
		sb_printf(err, "cannot create %s: %s", full, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;
		sb_printf(err, "%s: %s", full, strerror(e));
		return -e;
	}
	if (S_ISLNK(st.st_mode)) {
		sb_printf(err, "%s is a symbolic link: kab never writes through one there; remove it, " WHAT_TO_DO, full);
		return -ELOOP;
	}
	if (!S_ISDIR(st.st_mode)) {
		refuse(err, full, &st, "is not a directory");
		return -EPERM;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		sb_printf(err, "cannot open %s: %s", full, strerror(e));
		return -e;
	}
	/* judged on what was opened, not on the name looked at before */
	const char *why = fstat(fd, &st) < 0 ? "cannot be examined" : dir_refusal(&st);
	if (!why && made && (st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0)
		why = "cannot be made mode 0700";
	if (why) {
		refuse(err, full, &st, why);
		close(fd);
		return -EPERM;
	}
	*ret_fd = fd;
	return made ? 1 : 0;
}

static int trusted_one(const char *dir, struct strbuf *err)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		int e = errno;
		sb_printf(err, "%s: %s", dir, strerror(e));
		return -e;
	}
	/* in a sticky directory (/tmp) others cannot rename what is root's */
	bool sticky = st.st_mode & S_ISVTX;
	if (owner_ok(st.st_uid) && (sticky || !(st.st_mode & (S_IWGRP | S_IWOTH))))
		return 0;
	sb_printf(err, "%s (owner uid %u, mode %04o) can be changed by a user other than root, who could replace what lies below it",
		  dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return -EPERM;
}

int state_path_trusted(const char *path, struct strbuf *err)
{
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		int e = errno;
		sb_printf(err, "%s: %s", path, strerror(e));
		return -e;
	}
	int r = trusted_one("/", err);
	size_t n = strlen(real);
	for (size_t i = 2; r >= 0 && i <= n; i++) {
		if (real[i] != '/' && real[i] != 0)
			continue;
		char c = real[i];
		real[i] = 0;
		r = trusted_one(real, err);
		real[i] = c;
	}
	return r;
}

int state_db_path(const char *dir, char *buf, size_t len)
{
	char norm[PATH_MAX];
	const char *want = dir ? dir : config_str(CONFIG_STATE_DIR);
	if (normalize(want ? want : STATE_DIR_DEFAULT, norm, sizeof(norm)) < 0)
		return -EINVAL;
	join(norm, STATE_DB_NAME, buf, len);
	return strlen(buf) + 1 < len ? 0 : -ENAMETOOLONG;
}

int state_init(const char *dir, struct strbuf *err)
{
	if (!dir && state.fd >= 0)
		return 0;
	char norm[PATH_MAX];
	const char *want = dir ? dir : config_str(CONFIG_STATE_DIR);
	if (!want)
		want = STATE_DIR_DEFAULT;
	if (normalize(want, norm, sizeof(norm)) < 0) {
		sb_printf(err, "state directory \"%s\": not an absolute path without \".\", \"..\" or empty components", want);
		return -EINVAL;
	}
	char parent[PATH_MAX];
	char *slash = strrchr(norm, '/');
	snprintf(parent, sizeof(parent), "%.*s", slash == norm ? 1 : (int)(slash - norm), norm);
	/* the parents that are there are judged before any is made */
	char have[PATH_MAX];
	struct stat hst;
	snprintf(have, sizeof(have), "%s", parent);
	for (char *cut; stat(have, &hst) < 0 && (cut = strrchr(have, '/'));)
		cut[cut == have] = 0;
	struct strbuf why = { 0 };
	int r = state_path_trusted(have, &why);
	if (r >= 0 && (r = util_mkdir_p(parent, 0755)) < 0) {
		sb_printf(err, "cannot create %s, where the state directory %s goes: %s", parent, norm, strerror(-r));
		return r;
	}
	if (r >= 0)
		r = state_path_trusted(parent, &why);
	if (r < 0) {
		sb_printf(err, "state directory %s refused: %s; use one whose every parent is root's and not writable by others, " WHAT_TO_DO,
			  norm, why.buf ? why.buf : strerror(-r));
		sb_free(&why);
		return r;
	}
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		r = -errno;
		sb_printf(err, "cannot open %s: %s", parent, strerror(-r));
		return r;
	}
	int fd;
	if ((r = state_subdir(pfd, parent, slash + 1, &fd, &why)) < 0) {
		sb_printf(err, "state directory refused: %s", why.buf ? why.buf : strerror(-r));
		sb_free(&why);
		return r;
	}
	if (r == 1)
		log_info("created the state directory %s (mode 0700)", norm);
	state_reset();
	state.fd = fd;
	snprintf(state.path, sizeof(state.path), "%s", norm);
	return 0;
}

static int random_name(const char *prefix, const char *suffix, char *buf, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	char x[7];
	for (size_t i = 0; i < 6; i++)
		x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	x[6] = 0;
	if (snprintf(buf, len, "%s%s%s", prefix, x, suffix) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int state_tempname(const char *prefix, const char *suffix, char *ret_name, size_t len)
{
	return random_name(prefix, suffix, ret_name, len);
}

int state_mkdtemp(int dirfd, const char *prefix, char *ret_name, size_t len)
{
	char name[NAME_MAX + 1];
	for (int attempt = 0; attempt < 100; attempt++) {
		int r = random_name(prefix, "", name, sizeof(name));
		if (r < 0)
			return r;
		if (mkdirat(dirfd, name, 0700) == 0) {
			if (snprintf(ret_name, len, "%s", name) >= (int)len)
				return -ENAMETOOLONG;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}
