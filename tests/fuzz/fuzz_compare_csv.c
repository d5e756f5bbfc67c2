/* libFuzzer target: kab compare's CSV reader on arbitrary bytes, and the
 * statistics and every report format on whatever it accepts. `make fuzz`
 * builds it with clang -fsanitize=fuzzer,address and runs it for a
 * bounded time from a corpus of tests/compare's files. */
#include "harness/report/compare.h"
#include "harness/report/report.h"
#include "harness/base/util.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size > (1u << 16) || !devnull)
		return 0;
	/* The first byte, when it is a control character, picks options. */
	static const char *const primary[] = { "a.b", "vmstat.*" };
	struct compare_opts o = { 0 };
	if (size > 0 && data[0] < 0x08) {
		o.baseline = data[0] & 1 ? "B" : NULL;
		o.primary = primary;
		o.n_primary = data[0] & 2 ? 2 : data[0] & 4 ? 1 : 0;
		data++;
		size--;
	}
	struct diags d = { 0 };
	struct report *r = NULL;
	if (compare_csv_parse("fuzz.csv", (const char *)data, size, &o, &r, &d) == 0) {
		if (report_analyze(r) == 0)
			for (int f = REPORT_TEXT; f <= REPORT_CSV; f++) {
				struct report_opts ro = { .format = (enum report_format)f, .ascii = f == REPORT_MARKDOWN };
				report_render(r, &ro, devnull);
			}
		report_free(r);
	}
	diags_free(&d);
	return 0;
}
