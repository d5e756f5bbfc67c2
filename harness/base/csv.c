/* RFC 4180 records, one at a time, never reading past the end of the
 * text and never storing more than CSV_FIELD_MAX bytes of a field. */
#include "harness/base/csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void skip_line(struct csv_cursor *c)
{
	while (c->p < c->end && *c->p != '\n')
		c->p++;
	if (c->p < c->end) {
		c->p++;
		c->line++;
	}
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static bool fail(struct csv_cursor *c, struct csv_record *rec, int line, bool skip, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static bool fail(struct csv_cursor *c, struct csv_record *rec, int line, bool skip, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rec->err, sizeof(rec->err), fmt, ap);
	va_end(ap);
	rec->err_line = line;
	if (skip)
		skip_line(c);
	return false;
}

/* Field idx of rec; false on a malformed one. */
static bool read_field(struct csv_cursor *c, struct csv_record *rec, size_t idx)
{
	char *f = rec->f[idx];
	size_t fl = 0;
	const char *q = c->p;
	while (q < c->end && blank(*q))
		q++;
	rec->quoted[idx] = q < c->end && *q == '"';
	if (rec->quoted[idx]) {
		int open_line = c->line;
		c->p = q + 1;
		for (;;) {
			if (c->p >= c->end)
				return fail(c, rec, open_line, false,
					    "unterminated quoted field %zu: the '\"' opened here is never closed", idx + 1);
			char ch = *c->p++;
			if (ch == '"') {
				if (c->p < c->end && *c->p == '"')
					c->p++;
				else
					break;
			}
			if (ch == '\n')
				c->line++;
			if (fl == CSV_FIELD_MAX)
				return fail(c, rec, rec->line, true, "field %zu is longer than %d bytes", idx + 1, CSV_FIELD_MAX);
			f[fl++] = ch;
		}
		while (c->p < c->end && blank(*c->p))
			c->p++;
		if (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
			return fail(c, rec, c->line, true,
				    "text after the closing quote of field %zu: write \"\" for a quote inside a quoted field", idx + 1);
	} else {
		c->p = q;
		while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r') {
			if (*c->p == '"')
				return fail(c, rec, c->line, true,
					    "quote inside unquoted field %zu: quote the whole field, as in \"a \"\"b\"\"\"", idx + 1);
			if (fl == CSV_FIELD_MAX)
				return fail(c, rec, c->line, true, "field %zu is longer than %d bytes", idx + 1, CSV_FIELD_MAX);
			f[fl++] = *c->p++;
		}
		while (fl > 0 && blank(f[fl - 1]))
			fl--;
	}
	f[fl] = 0;
	return true;
}

int csv_next(struct csv_cursor *c, struct csv_record *rec)
{
	for (;;) {
		if (c->p >= c->end)
			return 0;
		rec->n = 0;
		rec->line = c->line;
		for (;;) {
			if (rec->n == CSV_FIELDS_MAX) {
				fail(c, rec, rec->line, true, "more than %d fields", CSV_FIELDS_MAX);
				return -EINVAL;
			}
			if (!read_field(c, rec, rec->n))
				return -EINVAL;
			rec->n++;
			if (c->p >= c->end)
				break;
			char ch = *c->p++;
			if (ch == ',')
				continue;
			if (ch == '\r' && c->p < c->end && *c->p == '\n')
				c->p++;
			c->line++;
			break;
		}
		if (rec->n == 1 && !rec->quoted[0] && !rec->f[0][0])
			continue;
		return 1;
	}
}
