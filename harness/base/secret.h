/* Files holding a secret kabd trusts (the API token, the TLS key): read
 * only when owned by root and closed to group and others, so no other
 * user could have read or replaced them. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

struct strbuf;

#define SECRET_MAX_SIZE (64 * 1024)

/* The open file fd of path as a secret only owner may read: 0, or
 * -EINVAL (not a regular file), -EPERM (another owner, or open to group
 * or others) with err naming path, what it is, and the chmod or chown
 * that mends it. fstat on the open file: what is checked is what is read. */
int secret_check_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err);
/* The whole file into ret (NUL-terminated). what names it in the error,
 * e.g. "token file": "/etc/kab/token: the token file has mode 0644 ..." */
int secret_read(const char *path, const char *what, char **ret, size_t *ret_len);
/* A token file: one line of at least 8 characters without spaces. */
int secret_read_token(const char *path, char **ret);
