/* JSON strings and numbers (RFC 8259): the one escaper of every JSON kab
 * writes, kabd's replies (httpd.c, api.c), the JSON report and kab plan's
 * JSON. Base level: it includes util.h only. */
#pragma once
#include "harness/base/util.h"

#include <stddef.h>
#include <stdio.h>

/* Appends s as a JSON string literal, quotes included; NULL gives null.
 * '"', '\\' and control characters are escaped (\n, \r and \t by name,
 * the others and DEL as \u00XX), valid UTF-8 is copied as it is, and a
 * byte that starts no valid UTF-8 sequence (a stray byte, an overlong, a
 * surrogate, a sequence a %.Ns cut) becomes \ufffd, so the text always
 * parses. 0, or -ENOMEM. */
int json_str_sb(struct strbuf *sb, const char *s);
/* The same for the len bytes at s, which may hold NULs (as \u0000). */
int json_str_sb_n(struct strbuf *sb, const char *s, size_t len);
/* The same, written to out; a failed write shows in ferror(out). */
void json_str_file(FILE *out, const char *s);

/* A number: the shortest text that reads back as v (a whole number below
 * 1e15 as digits only, "-0" as "0"), or null for NAN and infinities, which
 * JSON has no word for. */
void json_num(double v, char *buf, size_t len);
