/* Strings from outside made safe to show (esc.h). One walk over the UTF-8
 * of a string finds what must not go out as it is; the text escaper, its
 * stream and the XML writer differ only in what they put in its place. */
#include "harness/base/esc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t esc_utf8_len(const char *s, size_t left)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t cp;
	if (left == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

bool esc_utf8_valid(const char *s, size_t len, size_t *ret_bad)
{
	for (size_t i = 0; i < len;) {
		size_t n = esc_utf8_len(s + i, len - i);
		if (n == 0) {
			if (ret_bad)
				*ret_bad = i;
			return false;
		}
		i += n;
	}
	return true;
}

/* The code point of a valid sequence of n bytes. */
static uint32_t decode(const unsigned char *p, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = p[0] & lead_mask[n];
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* The length of the sequence a lead byte starts; 0 for any other byte. */
static size_t lead_len(unsigned char c)
{
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

/* Whether the left bytes at p may be the start of a valid sequence that
 * more bytes would complete: a lead byte and continuation bytes, too few. */
static bool utf8_prefix(const unsigned char *p, size_t left)
{
	size_t n = lead_len(p[0]);
	if (n == 0 || left >= n)
		return false;
	for (size_t i = 1; i < left; i++)
		if ((p[i] & 0xc0) != 0x80)
			return false;
	return true;
}

struct sink {
	/* whole: an escape, put entirely or not at all */
	void (*put)(struct sink *to, const char *s, size_t n, bool whole);
	struct strbuf *sb;
	FILE *out;
	char *buf; /* esc_text_buf's buffer, its size and what is used */
	size_t cap, used;
	bool full;
	int err; /* the first failure of sb_append */
};

static void put_sb(struct sink *to, const char *s, size_t n, bool whole)
{
	int r = sb_append(to->sb, s, n);
	if (r < 0 && !to->err)
		to->err = r;
}

static void put_file(struct sink *to, const char *s, size_t n, bool whole)
{
	if (n)
		fwrite(s, 1, n, to->out);
}

/* Into a buffer of cap bytes: a run of text cut at a character, an escape
 * not at all; nothing after the first cut. */
static void put_buf(struct sink *to, const char *s, size_t n, bool whole)
{
	size_t fit = to->full ? 0 : to->cap - 1 - to->used;
	if (n <= fit) {
		memcpy(to->buf + to->used, s, n);
		to->used += n;
		return;
	}
	for (size_t i = 0, k; !whole && i < fit; i += k) {
		k = esc_utf8_len(s + i, n - i);
		if (k == 0)
			k = 1; /* a bad byte is escaped, never put: not reached */
		if (i + k > fit)
			break;
		memcpy(to->buf + to->used, s + i, k);
		to->used += k;
	}
	to->full = true;
}

/* How the text escaper shows the character of n bytes at p (n 0: a byte
 * of no valid sequence) into shown; false: it goes out as it is. */
static bool text_shown(const unsigned char *p, size_t n, unsigned flags, char shown[8])
{
	static const char hex[] = "0123456789abcdef";
	if (n == 0 || (n == 1 && (p[0] < 0x20 || p[0] == 0x7f))) {
		if (n == 1 && (p[0] == '\n' || p[0] == '\t') && (flags & ESC_LINES))
			return false;
		shown[0] = '\\', shown[1] = 'x', shown[2] = hex[p[0] >> 4], shown[3] = hex[p[0] & 0xf], shown[4] = 0;
		return true;
	}
	if (n == 1)
		return false;
	uint32_t cp = decode(p, n);
	if (!((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)))
		return false;
	shown[0] = '\\', shown[1] = 'u';
	for (int i = 0; i < 4; i++)
		shown[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xf];
	shown[6] = 0;
	return true;
}

/* Escapes the len bytes at s into to. With partial, stops before a tail
 * that more bytes may make a character of; returns the bytes used. */
static size_t text_walk(struct sink *to, const char *s, size_t len, unsigned flags, bool partial)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0, i = 0; /* run: where the bytes not yet put start */
	while (i < len) {
		char shown[8];
		size_t n = esc_utf8_len(s + i, len - i);
		if (n == 0 && partial && utf8_prefix(p + i, len - i))
			break;
		if (!text_shown(p + i, n, flags, shown)) {
			i += n;
			continue;
		}
		to->put(to, s + run, i - run, false);
		to->put(to, shown, strlen(shown), true);
		i += n ? n : 1;
		run = i;
	}
	to->put(to, s + run, i - run, false);
	return i;
}

int esc_text_sb(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	struct sink to = { .put = put_sb, .sb = sb };
	text_walk(&to, s, len, flags, false);
	return to.err;
}

const char *esc_text_buf(const char *s, char *buf, size_t len, unsigned flags)
{
	if (len == 0)
		return buf;
	struct sink to = { .put = put_buf, .buf = buf, .cap = len };
	text_walk(&to, s, strlen(s), flags, false);
	buf[to.used] = 0;
	return buf;
}

void esc_text_file(FILE *out, const char *s, size_t len, unsigned flags)
{
	struct sink to = { .put = put_file, .out = out };
	text_walk(&to, s, len, flags, false);
}

int esc_printf(FILE *out, const char *fmt, ...)
{
	char *text;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	esc_text_file(out, text, (size_t)n, ESC_LINES);
	free(text);
	return ferror(out) ? -EIO : 0;
}

/* ---- the stream ---- */

struct stream {
	FILE *to;
	struct strbuf held; /* written, not yet escaped: at most a cut character */
};

static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct stream *st = cookie;
	struct sink to = { .put = put_file, .out = st->to };
	const char *s = buf;
	size_t len = size;
	if (st->held.len) {
		if (sb_append(&st->held, buf, size) < 0) {
			errno = ENOMEM;
			return -1;
		}
		s = st->held.buf;
		len = st->held.len;
	}
	size_t used = text_walk(&to, s, len, ESC_LINES, true);
	if (used < len) {
		/* at most 3 bytes: keep them (they may be in held already) */
		char tail[4];
		memcpy(tail, s + used, len - used);
		st->held.len = 0;
		if (sb_append(&st->held, tail, len - used) < 0) {
			errno = ENOMEM;
			return -1;
		}
	} else {
		st->held.len = 0;
	}
	if (ferror(st->to)) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)size;
}

static int stream_close(void *cookie)
{
	struct stream *st = cookie;
	struct sink to = { .put = put_file, .out = st->to };
	text_walk(&to, st->held.buf, st->held.len, ESC_LINES, false);
	sb_free(&st->held);
	bool failed = fflush(st->to) != 0 || ferror(st->to) != 0;
	free(st);
	if (failed) {
		errno = EIO;
		return EOF;
	}
	return 0;
}

FILE *esc_stream(FILE *to)
{
	struct stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->to = to;
	FILE *f = fopencookie(st, "w", (cookie_io_functions_t){ .write = stream_write, .close = stream_close });
	if (!f)
		free(st);
	return f;
}

/* ---- XML ---- */

int esc_xml_sb(struct strbuf *sb, const char *s)
{
	struct sink to = { .put = put_sb, .sb = sb };
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), run = 0, i = 0;
	while (i < len) {
		const char *shown;
		size_t n = esc_utf8_len(s + i, len - i);
		uint32_t cp = n ? decode(p + i, n) : 0;
		if (n == 0)
			shown = "\xef\xbf\xbd"; /* U+FFFD */
		else if (cp == '&')
			shown = "&amp;";
		else if (cp == '<')
			shown = "&lt;";
		else if (cp == '>')
			shown = "&gt;";
		else if (cp == '"')
			shown = "&quot;";
		else if (cp == '\'')
			shown = "&apos;";
		else if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe || cp == 0xffff)
			shown = "";
		else {
			i += n;
			continue;
		}
		to.put(&to, s + run, i - run, false);
		to.put(&to, shown, strlen(shown), true);
		i += n ? n : 1;
		run = i;
	}
	to.put(&to, s + run, i - run, false);
	return to.err;
}
