/* The series codec (db/series.h): zigzag LEB128 varints of successive
 * differences. */
#include <errno.h>
#include <stdlib.h>

#include "db/series.h"

#define SERIES_INITIAL 64
#define VARINT_MAX 10

static int reserve(struct series_buf *b, size_t extra)
{
	size_t cap;
	uint8_t *nb;

	if (b->cap - b->len >= extra)
		return 0;
	cap = b->cap ? b->cap : SERIES_INITIAL;
	while (cap - b->len < extra) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	nb = realloc(b->buf, cap);
	if (!nb)
		return -ENOMEM;
	b->buf = nb;
	b->cap = cap;
	return 0;
}

void series_buf_free(struct series_buf *b)
{
	free(b->buf);
	*b = (struct series_buf){ 0 };
}

int series_append(struct series_buf *b, uint64_t prev, uint64_t cur)
{
	int64_t d = (int64_t)(cur - prev);
	uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
	int r = reserve(b, VARINT_MAX);

	if (r < 0)
		return r;
	while (z >= 0x80) {
		b->buf[b->len++] = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	b->buf[b->len++] = (uint8_t)z;
	return 0;
}

void series_cursor_init(struct series_cursor *c, const uint8_t *blob, size_t len)
{
	c->p = blob;
	c->end = blob ? blob + len : blob;
	c->value = 0;
}

int series_cursor_next(struct series_cursor *c, int64_t *ret)
{
	uint64_t z = 0;
	unsigned shift = 0;

	if (c->p == c->end)
		return 0;
	for (;;) {
		uint8_t byte;

		if (c->p == c->end)
			return -EINVAL; /* truncated varint */
		byte = *c->p++;
		if (shift == 63 && byte > 1)
			return -EINVAL; /* more than 64 bits */
		z |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			break;
		shift += 7;
		if (shift > 63)
			return -EINVAL;
	}
	int64_t d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
	c->value += (uint64_t)d;
	*ret = (int64_t)c->value;
	return 1;
}

int series_decode(const uint8_t *blob, size_t len, int64_t *out, size_t n)
{
	struct series_cursor c;
	size_t i;

	series_cursor_init(&c, blob, len);
	for (i = 0; i < n; i++) {
		int r = series_cursor_next(&c, &out[i]);
		if (r < 0)
			return r;
		if (r == 0)
			break;
	}
	return i > INT32_MAX ? INT32_MAX : (int)i;
}

int series_summarize(const uint8_t *blob, size_t len, size_t n, struct series_summary *ret)
{
	struct series_cursor c;
	struct series_summary sum = { 0 };
	uint64_t prev = 0;
	double total = 0;
	int64_t x;
	int r = 0;

	series_cursor_init(&c, blob, len);
	while (sum.n < n && (r = series_cursor_next(&c, &x)) > 0) {
		uint64_t v = (uint64_t)x;
		if (sum.n == 0 || v < sum.min)
			sum.min = v;
		if (sum.n == 0 || v > sum.max)
			sum.max = v;
		sum.changes += sum.n > 0 && v != prev;
		total += (double)v;
		prev = v;
		sum.n++;
	}
	if (r < 0)
		return r;
	sum.mean = sum.n ? total / (double)sum.n : 0;
	*ret = sum;
	return 0;
}

int series_encode(const int64_t *values, size_t n, uint8_t **ret_blob, size_t *ret_len)
{
	struct series_buf b = { 0 };
	uint64_t prev = 0;

	for (size_t i = 0; i < n; i++) {
		int r = series_append(&b, prev, (uint64_t)values[i]);
		if (r < 0) {
			series_buf_free(&b);
			return r;
		}
		prev = (uint64_t)values[i];
	}
	*ret_blob = b.buf;
	*ret_len = b.len;
	return 0;
}
