/* SHA-256 as hex, for content hashes of configs, series and build
 * inputs. The hash is nettle's (GnuTLS's crypto layer, Debian's
 * nettle-dev); kab adds only the hex form and the file loop. For a hash
 * fed in pieces: struct sha256_ctx, sha256_init and sha256_update from
 * <nettle/sha2.h>, then sha256_hex. */
#pragma once
#include <nettle/sha2.h>
#include <stddef.h>

/* Finishes c and writes 64 lowercase hex digits and a NUL to hex. */
void sha256_hex(struct sha256_ctx *c, char hex[65]);
/* One-shot hash of a buffer; and of a file (-errno). */
void sha256_buf(const void *data, size_t n, char hex[65]);
int sha256_file(const char *path, char hex[65]);
