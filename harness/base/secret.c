/* Reading secrets: owner and mode are checked on the open file (fstat),
 * so what is checked is what is read. */
#include "harness/base/secret.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_owner_mode(const char *path, const char *what, const struct stat *sb)
{
	if (!S_ISREG(sb->st_mode)) {
		log_error("%s: the %s is not a regular file", path, what);
		return -EINVAL;
	}
	if (sb->st_uid != 0 || (sb->st_mode & 077)) {
		log_error("%s: the %s has mode %04o and owner uid %u: it must be owned by root and not readable or "
			  "writable by group or others (%s%s%schmod 600 %s)",
			  path, what, (unsigned)(sb->st_mode & 07777), (unsigned)sb->st_uid, sb->st_uid ? "chown root " : "",
			  sb->st_uid ? path : "", sb->st_uid ? "; " : "", path);
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
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		log_error("%s: cannot stat the %s: %s", path, what, strerror(errno));
		return -errno;
	}
	int r = check_owner_mode(path, what, &sb);
	if (r < 0)
		return r;
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
