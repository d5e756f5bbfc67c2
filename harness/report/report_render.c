/* Choosing a report format: its name, and the renderer that prints it.
 * The renderers read the model (report.c); the model calls none of them. */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <string.h>

int report_format_parse(const char *s, enum report_format *ret)
{
	static const char *const names[] = { "text", "cover-letter", "markdown", "json", "csv" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum report_format)i;
			return 0;
		}
	return -EINVAL;
}

static int render(const struct report *r, const struct report_opts *o, FILE *out)
{
	switch (o->format) {
	case REPORT_TEXT: return report_render_text(r, !o->ascii && report_utf8_locale(), out);
	case REPORT_COVER_LETTER: return report_render_cover_letter(r, out);
	case REPORT_MARKDOWN: return report_render_markdown(r, !o->ascii, out);
	case REPORT_JSON: return report_render_json(r, out);
	case REPORT_CSV: return report_render_csv(r, out);
	}
	return -EINVAL;
}

/* A report's strings are the job's, its workloads' (the metric names and
 * units a command prints), the machine's and git's: every format goes out
 * through the escaper, so none of them can act on a terminal (esc.h). */
int report_render(const struct report *r, const struct report_opts *o, FILE *out)
{
	FILE *f = esc_stream(out);
	if (!f)
		return -ENOMEM;
	int rc = render(r, o, f);
	if (fclose(f) != 0 && rc >= 0)
		rc = -EIO;
	return rc;
}
