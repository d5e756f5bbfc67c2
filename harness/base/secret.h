/* Files holding a secret kabd trusts (the API token, the TLS key): read
 * only when owned by root and closed to group and others, so no other
 * user could have read or replaced them. */
#pragma once
#include <stddef.h>

#define SECRET_MAX_SIZE (64 * 1024)

/* The whole file into ret (NUL-terminated). what names it in the error,
 * e.g. "token file": "/etc/kab/token: the token file has mode 0644 ..." */
int secret_read(const char *path, const char *what, char **ret, size_t *ret_len);
/* A token file: one line of at least 8 characters without spaces. */
int secret_read_token(const char *path, char **ret);
