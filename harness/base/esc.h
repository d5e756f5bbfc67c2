/* Strings kab did not write itself, made safe to show: a job's values, a
 * commit's subject, the metric names a command workload prints, anything
 * read back from the database. On a terminal, an escape sequence in one
 * (ESC [ ... or a C1 CSI) would be run by the terminal, not shown; in XML,
 * a byte that is no UTF-8 or a control character makes the document
 * unreadable. The one escaper of every text kab prints (esc_text_*,
 * esc_stream) and of its XML (esc_xml_sb). Base level: util.h only. */
#pragma once
#include "harness/base/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s, of the left bytes there (no
 * overlongs, surrogates or code points past U+10FFFF); 0 if invalid or
 * cut short. */
size_t esc_utf8_len(const char *s, size_t left);
/* Whether the len bytes at s are valid UTF-8; ret_bad (may be NULL) gets
 * the offset of the first byte that is not. */
bool esc_utf8_valid(const char *s, size_t len, size_t *ret_bad);

/* Keep '\n' and '\t' as they are: text of several lines or columns. */
#define ESC_LINES 1u

/* Appends the len bytes at s with every character a terminal would act
 * on shown instead: C0 controls (but '\n' and '\t' with ESC_LINES) and
 * DEL as \x1b, C1 controls and the bidirectional overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069) as \u009b, a byte that starts no valid
 * UTF-8 sequence as \xe9. Everything else, backslashes too, is copied:
 * escaping twice changes nothing, so a client may escape what kabd
 * escaped. 0, or -ENOMEM. */
int esc_text_sb(struct strbuf *sb, const char *s, size_t len, unsigned flags);
/* The same, NUL-terminated, into buf of len bytes, cut before a character
 * or escape that does not fit; buf is returned (for a printf argument). */
const char *esc_text_buf(const char *s, char *buf, size_t len, unsigned flags);
/* The same, written to out; a failed write shows in ferror(out). */
void esc_text_file(FILE *out, const char *s, size_t len, unsigned flags);
/* fprintf whose result goes out escaped with ESC_LINES: for a line of
 * kab's that quotes stored strings. 0, or -errno. */
int esc_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A stream whose text goes to `to` escaped as above with ESC_LINES: the
 * FILE a renderer writes to instead of stdout or a memstream. A character
 * cut between two writes is escaped whole. fclose() writes what is left
 * and flushes `to`, which stays open; it fails if a write to `to` did.
 * NULL (errno set) if it cannot be made. */
FILE *esc_stream(FILE *to);

/* Appends s as XML 1.0 character data or attribute value: & < > " ' as
 * entities, a byte that starts no valid UTF-8 sequence as U+FFFD, and the
 * characters XML 1.0 forbids (C0 controls but tab, newline and carriage
 * return; U+FFFE, U+FFFF) left out, so the document stays well-formed
 * whatever s holds. 0, or -ENOMEM. */
int esc_xml_sb(struct strbuf *sb, const char *s);
