/* A bounded cursor over RFC 4180 CSV text: fields separated by commas,
 * quoted with '"' (and "" for a quote inside), records ended by LF, CRLF
 * or CR, line breaks allowed inside quoted fields. Unquoted fields lose
 * their surrounding blanks; blank lines are skipped. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define CSV_FIELD_MAX 1024
#define CSV_FIELDS_MAX 16

struct csv_cursor {
	const char *p, *end;
	int line;   /* of the text at p, from 1 */
};

struct csv_record {
	char f[CSV_FIELDS_MAX][CSV_FIELD_MAX + 1];
	bool quoted[CSV_FIELDS_MAX];
	size_t n;
	int line;        /* where the record starts */
	char err[160];   /* after -EINVAL: what is wrong */
	int err_line;
};

/* 1: a record in rec; 0: end of input; -EINVAL: a malformed record,
 * described in rec->err at rec->err_line; the cursor is then past the
 * line, so reading can go on. */
int csv_next(struct csv_cursor *c, struct csv_record *rec);
