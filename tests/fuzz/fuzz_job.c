/* libFuzzer target: the job parser kabd's submit runs on an HTTP body
 * (job_parse_text, before the machine checks), on arbitrary bytes. What
 * it accepts must print in the normalized form and parse back to the
 * same form, as `kab check` promises. `make fuzz` builds it with clang
 * -fsanitize=fuzzer,address, linked with the parser's objects only, and
 * runs it for a bounded time from a corpus of examples/ and tests/golden/
 * job files. */
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The job printed normalized, as a string; NULL: out of memory. */
static char *printed(const struct job *j)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	job_print(j, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* kabd refuses a body with a NUL byte or over JOB_TEXT_MAX at its door */
	if (size > JOB_TEXT_MAX || memchr(data, 0, size))
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_text("fuzz.job", "/fuzz", text, &j, &d) == 0) {
		char *once = printed(j);
		struct diags d2 = { 0 };
		struct job *again = NULL;
		if (once && job_parse_text("fuzz.job", "/fuzz", once, &again, &d2) != 0) {
			fprintf(stderr, "the normalized form does not parse again:\n%s\n", once);
			diags_print(&d2, stderr);
			__builtin_trap();
		}
		char *twice = again ? printed(again) : NULL;
		if (once && twice && strcmp(once, twice) != 0) {
			fprintf(stderr, "the normalized form prints differently when parsed again:\n%s\n---\n%s\n", once, twice);
			__builtin_trap();
		}
		free(twice);
		free(once);
		job_free(again);
		diags_free(&d2);
		job_free(j);
	}
	diags_free(&d);
	free(text);
	return 0;
}
