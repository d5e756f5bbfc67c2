/* How the store keeps a run's series: one blob per counter (and "t_ns",
 * the sample times in ns since the first sample), each the zigzag LEB128
 * varints of successive differences of the raw values. The sampler
 * appends to a series as it samples; readers decode a blob whole, value
 * by value, or summarize it. No SQL here: only the bytes. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* A growing blob. */
struct series_buf {
	uint8_t *buf;
	size_t len, cap;
};

/* Appends the value cur after prev (0 before the first value): the
 * difference cur - prev, modulo 2^64, as a signed varint. -ENOMEM leaves
 * b as it was. */
int series_append(struct series_buf *b, uint64_t prev, uint64_t cur);
void series_buf_free(struct series_buf *b);

/* Encodes n raw values; *ret_blob is malloc'd. */
int series_encode(const int64_t *values, size_t n, uint8_t **ret_blob, size_t *ret_len);
/* Decodes up to n values from blob into out; returns count or -EINVAL.
 * The values are the raw ones (the deltas summed back up); raw counters
 * are unsigned, so read them as (uint64_t)out[i]. */
int series_decode(const uint8_t *blob, size_t len, int64_t *out, size_t n);
/* Streaming form of series_decode, one value at a time, no buffer:
 * returns 1 with *ret set, 0 at the end of the blob, -EINVAL if corrupt. */
struct series_cursor {
	const uint8_t *p, *end;
	uint64_t value;
};
void series_cursor_init(struct series_cursor *c, const uint8_t *blob, size_t len);
int series_cursor_next(struct series_cursor *c, int64_t *ret);

/* What a stored series did, for choosing one worth plotting: how many
 * samples, their smallest, largest and mean value (read as unsigned, as
 * the raw counters are) and how many samples differ from the one before. */
struct series_summary {
	size_t n;
	size_t changes;
	uint64_t min, max;
	double mean;
};
/* Summarizes up to n values of blob; -EINVAL if it is corrupt, *ret then
 * untouched. An empty blob gives n 0 (and min, max, mean 0). */
int series_summarize(const uint8_t *blob, size_t len, size_t n, struct series_summary *ret);
