/* libFuzzer target: the lab's machine selector and tag parsers on
 * arbitrary text (a selector will come from a submitter over the network,
 * tags from machine.conf). Whatever parses must format to a normalized
 * form that parses back to itself, and match a machine without fault. */
#include "db/lab.h"
#include "harness/base/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_selector(const char *text, const struct lab_machine *m)
{
	struct lab_selector s, again;
	struct strbuf err = { 0 }, why = { 0 };
	if (lab_selector_parse(text, &s, &err) == 0) {
		char normal[LAB_SELECTOR_MAX], second[LAB_SELECTOR_MAX];
		lab_selector_format(&s, normal, sizeof(normal));
		if (lab_selector_parse(normal, &again, &err) != 0)
			abort();
		lab_selector_format(&again, second, sizeof(second));
		if (strcmp(normal, second) != 0)
			abort();
		lab_selector_match(&s, m, &why);
	} else if (!err.buf)
		abort(); /* a refusal always says why */
	sb_free(&err);
	sb_free(&why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* text ends at a NUL byte, as a C string the selector came in would */
	char *text = size <= 4096 ? strndup((const char *)data, size) : NULL;
	if (!text)
		return 0;
	struct lab_machine m = { .cpus = 8, .memory = 16ULL << 30, .can_kexec = true, .cgroup_version = 2 };
	snprintf(m.hostname, sizeof(m.hostname), "lab1");
	snprintf(m.arch, sizeof(m.arch), "x86_64");
	struct strbuf err = { 0 };
	lab_tags_parse(text, &m, &err);
	sb_free(&err);
	check_selector(text, &m);
	free(text);
	return 0;
}
