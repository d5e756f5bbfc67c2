/* SHA-256 (FIPS 180-4), for content hashes of configs, series and build
 * inputs: small enough that kab needs no crypto library for it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;      /* bytes hashed so far */
	uint8_t buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
/* Finishes and writes 64 lowercase hex digits and a NUL to hex. */
void sha256_hex(struct sha256 *c, char hex[65]);
/* One-shot hash of a buffer; and of a file (-errno). */
void sha256_buf(const void *data, size_t n, char hex[65]);
int sha256_file(const char *path, char hex[65]);
