/* Reading secrets: owner and mode are checked on the open file (fstat),
 * so what is checked is what is read. */
#include "harness/base/secret.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int secret_check_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		sb_printf(err, "%s: cannot stat the %s: %s", path, what, strerror(e));
		return -e;
	}
	if (!S_ISREG(sb.st_mode)) {
		sb_printf(err, "%s: the %s is %s, not a regular file", path, what, util_file_kind(sb.st_mode));
		return -EINVAL;
	}
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

int secret_read(const char *path, const char *what, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		log_error("%s: cannot open the %s: %s", path, what, strerror(errno));
		return -errno;
	}
	struct strbuf why = { 0 };
	int r = secret_check_fd(fd, path, what, 0, &why);
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

int secret_read_token(const char *path, char **ret)
{
	char *t;
	size_t len;
	int r = secret_read(path, "token file", &t, &len);
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
