/* libFuzzer target: the patch series parser (kseries_parse) on arbitrary
 * bytes, as a lore thread's t.mbox.gz decompresses to them: anyone who
 * posts to the thread writes some. It must give a series or a refusal
 * with a reason, and a series' messages must be exactly the bytes they
 * say (what kseries_write hands git am and hash_series digests), with no
 * NUL among them. `make fuzz` builds it with clang
 * -fsanitize=fuzzer,address and runs it for a bounded time from a corpus
 * of tests/data/kernels' mboxes. */
#include "kernels/series.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every byte of a kept message as kseries_write does, so that
 * AddressSanitizer sees a length longer than the allocation. */
static void check_series(const struct kseries *s)
{
	unsigned sum = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct kseries_patch *p = &s->v[i];
		for (size_t k = 0; k < p->len; k++)
			sum += (unsigned char)p->text[k];
		if (strlen(p->text) != p->len) {
			fprintf(stderr, "patch %zu: %zu bytes by its length, %zu up to its first NUL\n", i, p->len,
				strlen(p->text));
			__builtin_trap();
		}
	}
	if (s->n == 0 || strlen(s->hash) != 64 || sum == 1u) /* sum: keep the reads */
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	/* The first byte, when it is a control character, picks the version
	 * asked for and an anchor, as series = ... vN and lore:ID do. */
	unsigned version = 0;
	const char *anchor = NULL;
	if (size > 0 && data[0] < 0x08) {
		version = data[0] & 3;
		anchor = data[0] & 4 ? "v2-0@x" : NULL;
		data++;
		size--;
	}
	/* no NUL after the end: the parser is given a length and must keep to it */
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	struct kseries s = { 0 };
	struct strbuf err = { 0 };
	int r = kseries_parse(text, size, "fuzz.mbox", version, anchor, &s, &err);
	if (r == 0)
		check_series(&s);
	else if (r != -ENOMEM && (err.len == 0 || (r != -EINVAL && r != -EFBIG))) {
		fprintf(stderr, "refused with %d and %s\n", r, err.len ? err.buf : "no reason");
		__builtin_trap();
	}
	kseries_free(&s);
	sb_free(&err);
	free(text);
	return 0;
}
