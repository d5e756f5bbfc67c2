/* For the unit tests that render reports. */
#pragma once
#include "t.h"
#include "harness/report/report.h"

#include <stdio.h>
#include <stdlib.h>

/* r rendered in fmt (ASCII markers), malloc'd; the caller frees it. */
static inline char *t_render(const struct report *r, enum report_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct report_opts o = { .format = fmt, .ascii = true };
	T_EQ_INT(report_render(r, &o, f), 0);
	fclose(f);
	return text;
}
