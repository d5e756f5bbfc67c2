/* JSON out, through jansson: every JSON kab writes (kabd's replies, the
 * JSON report, the history and regressions, kab plan's JSON) is values
 * jansson holds, written by one writer. Jansson escapes every string and
 * key; the writer only lays containers out (inline, or a member a line)
 * and streams them, so a page of rows is written a row at a time and
 * never held as one tree. Base level: it includes util.h only. */
#pragma once
#include "harness/base/util.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- values (NULL only when out of memory) ---- */

/* A string of any bytes: a byte that starts no valid UTF-8 sequence (a
 * stray byte, an overlong, a surrogate, a sequence a %.Ns cut) becomes
 * U+FFFD, so the text always parses; NULL gives null. */
json_t *jw_str(const char *s);
/* The same for the len bytes at s, which may hold NULs. */
json_t *jw_str_n(const char *s, size_t len);
/* jw_str, with "" as null too: a field kab leaves empty when unknown. */
json_t *jw_str_opt(const char *s);
/* A number: null for NAN and infinities, which JSON has no word for; a
 * whole number below 1e15 as an integer; else a real, written in the
 * fewest digits that read back as v (jw_num_text). */
json_t *jw_num(double v);
/* A time as "2026-03-01T02:00:00Z" (UTC); null for t <= 0 (not yet, or unknown). */
json_t *jw_time(double t);
/* obj[key] = v, v's reference taken (also on failure); a key that is
 * not UTF-8 is made so as jw_str does. 0, or -ENOMEM. */
int jw_set(json_t *obj, const char *key, json_t *v);

/* The text of jw_num's real: the shortest that reads back as v (a whole
 * number below 1e15 as digits only, "-0" as "0"), or null. Also the
 * numbers of the CSV report. */
void jw_num_text(double v, char *buf, size_t len);

/* ---- the writer ---- */

/* How a container opened with jw_open lays out its members:
 * JW_INLINE      {"a": 1, "b": 2} on the line it starts on (but see
 *                jw_break);
 * JW_LINES       each member on a line of its own, indented two spaces
 *                more than the enclosing lines, the closing bracket on a
 *                line of its own when there are members ({} or [] when
 *                empty);
 * JW_LINES_TIGHT the same, with the closing bracket right after the last
 *                member;
 * JW_ROWS        as JW_LINES, with the closing bracket on its own line
 *                even when empty: a page of rows. */
enum jw_layout { JW_INLINE, JW_LINES, JW_LINES_TIGHT, JW_ROWS };

/* "," and ":" with no space after them (the regressions' JSON). */
#define JW_COMPACT 1u

#define JW_DEPTH 8

struct jw {
	struct strbuf *sb; /* where it goes: a strbuf, */
	FILE *out;         /* or a stream */
	unsigned flags;
	int err; /* the first failure */
	int depth;
	struct jw_level {
		char close; /* '}' or ']' */
		enum jw_layout layout;
		unsigned pad; /* indentation of a member on a line of its own */
		size_t n;     /* members written */
		bool brk;     /* the next member starts a line (jw_break) */
		bool broken;  /* an inline container some of whose members start lines */
	} lv[JW_DEPTH];
};

void jw_init_sb(struct jw *w, struct strbuf *sb, unsigned flags);
void jw_init_file(struct jw *w, FILE *out, unsigned flags);
/* Opens an object (kind '{') or array ('[') as the next member: key is
 * its name inside an object, NULL inside an array or at the top. */
void jw_open(struct jw *w, const char *key, char kind, enum jw_layout layout);
/* v as the next member, written inline, its reference taken. NULL (a
 * value that could not be made) is written as null and fails jw_end. */
void jw_put(struct jw *w, const char *key, json_t *v);
/* A number with a fixed count of decimals (printf's %.*f): a time in
 * seconds to the microsecond, as readers of the value have it; null if
 * not finite. */
void jw_fixed(struct jw *w, const char *key, double v, int decimals);
/* An unsigned 64-bit number, which jansson's integers (signed) cannot
 * all hold: a raw counter, a seed. */
void jw_u64(struct jw *w, const char *key, uint64_t v);
/* The members of the object obj, as members of the open object, obj's
 * reference taken: fields two objects share. */
void jw_put_members(struct jw *w, json_t *obj);
/* In an inline container: the next member starts a line of its own,
 * indented two spaces more than the enclosing lines, and lines opened
 * inside the container from then on indent from there. */
void jw_break(struct jw *w);
void jw_close(struct jw *w);
/* After the last close: 0, -ENOMEM, -EIO (a failed write to the stream),
 * or -EINVAL (an unbalanced open, a member without its key). */
int jw_end(struct jw *w);

/* v on its own, inline, its reference taken; appended to sb or written
 * to out. What jw_end returns. */
int jw_dump_sb(struct strbuf *sb, json_t *v, unsigned flags);
int jw_dump_file(FILE *out, json_t *v, unsigned flags);
