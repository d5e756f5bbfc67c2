/* Files holding a secret kabd trusts (the API token, the TLS key, the
 * lab's credentials): read only when owned by root, closed to group and
 * others, and reached through directories no other user may write, so no
 * other user could have read or replaced them. Files that are not secret
 * but decide what kab trusts (machine.conf, the lab's sslrootcert, the TLS
 * certificate) go the same way, and may be readable by all. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

struct strbuf;

#define SECRET_MAX_SIZE (64 * 1024)
/* a trusted file's, read whole (secret_read_trusted) */
#define SECRET_TRUSTED_MAX_SIZE (1024 * 1024)

/* The open file fd of path as a secret only owner may read: 0, or
 * -EINVAL (not a regular file), -EPERM (another owner, or open to group
 * or others) with err naming path, what it is, and the chmod or chown
 * that mends it. fstat on the open file: what is checked is what is read. */
int secret_check_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err);
/* path opened for reading as a secret, walked component by component
 * from / (the working directory's path first when path is relative):
 * every directory passed, symlinks' targets too, must be owned by root or
 * owner and not writable by group or others (one with the sticky bit, as
 * /tmp, may be passed but may not hold the file), every symlink owned by
 * root or owner, and the file as secret_check_fd wants it. The open fd
 * (O_CLOEXEC) into ret_fd; else -EPERM, -EINVAL or -errno with err naming
 * path, the offending directory or symlink, and the command that mends it. */
int secret_open(const char *path, const char *what, uid_t owner, int *ret_fd, struct strbuf *err);
/* The open file fd of path as one that decides what kab trusts: 0, or
 * -EINVAL (not a regular file), -EPERM (owned by neither root nor owner,
 * or writable by group or others; readable is fine) with err naming path,
 * what it is, and the chmod go-w or chown that mends it. */
int secret_check_trusted_fd(int fd, const char *path, const char *what, uid_t owner, struct strbuf *err);
/* path opened for reading as secret_open does it (the same walk, the same
 * rules for its directories and symlinks, the same refusal of a sticky
 * directory such as /tmp as the file's own), the file as
 * secret_check_trusted_fd wants it. */
int secret_open_trusted(const char *path, const char *what, uid_t owner, int *ret_fd, struct strbuf *err);
/* The whole file (at most SECRET_TRUSTED_MAX_SIZE bytes) into ret,
 * NUL-terminated, opened by secret_open_trusted: 0, or -errno with err
 * naming path (-ENOENT when it, or a directory on its way, is missing). */
int secret_read_trusted(const char *path, const char *what, uid_t owner, char **ret, size_t *ret_len, struct strbuf *err);
/* The whole file into ret (NUL-terminated), opened by secret_open as
 * root's. what names it in the error, e.g. "token file":
 * "/etc/kab/token: the token file has mode 0644 ..." */
int secret_read(const char *path, const char *what, char **ret, size_t *ret_len);
/* A token file: one line of at least 8 characters without spaces. */
int secret_read_token(const char *path, char **ret);
/* secret_read_token of a token that is owner's (the CLI's --token-file:
 * the user running it), 0600, not root's. */
int secret_read_user_token(const char *path, uid_t owner, char **ret);
