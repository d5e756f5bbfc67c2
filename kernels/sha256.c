/* SHA-256 hex digests by nettle (sha256.h). */
#include "kernels/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

void sha256_hex(struct sha256_ctx *c, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(c, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 0xf];
	}
	hex[2 * sizeof(d)] = 0;
}

void sha256_buf(const void *data, size_t n, char hex[65])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, n, data);
	sha256_hex(&c, hex);
}

int sha256_file(const char *path, char hex[65])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct sha256_ctx c;
	sha256_init(&c);
	uint8_t buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&c, (size_t)n, buf);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err < 0)
		return err;
	sha256_hex(&c, hex);
	return 0;
}
