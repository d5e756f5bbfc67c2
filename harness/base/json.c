/* JSON strings and numbers, for every JSON kab writes (json.h). Each
 * string goes out as runs of bytes that need no escape, one write a run,
 * with the escapes between them; the same walk serves a strbuf and a FILE. */
#include "harness/base/json.h"
#include "harness/base/esc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sink {
	void (*put)(struct sink *to, const char *s, size_t n);
	struct strbuf *sb;
	FILE *out;
	int err;  /* the first failure of sb_append */
};

static void put_sb(struct sink *to, const char *s, size_t n)
{
	int r = sb_append(to->sb, s, n);
	if (r < 0 && !to->err)
		to->err = r;
}

static void put_file(struct sink *to, const char *s, size_t n)
{
	fwrite(s, 1, n, to->out);
}

static void escape(struct sink *to, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;  /* where the bytes not yet written start */
	to->put(to, "\"", 1);
	for (size_t i = 0; i < len;) {
		char ctl[7] = "\\u00";
		const char *esc;
		size_t n = 1;
		switch (p[i]) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				ctl[4] = hex[p[i] >> 4];
				ctl[5] = hex[p[i] & 0xf];
				ctl[6] = 0;
				esc = ctl;
			} else if ((n = esc_utf8_len(s + i, len - i)) == 0) {
				esc = "\\ufffd";
				n = 1;
			} else {
				i += n;
				continue;
			}
		}
		to->put(to, s + run, i - run);
		to->put(to, esc, strlen(esc));
		i += n;
		run = i;
	}
	to->put(to, s + run, len - run);
	to->put(to, "\"", 1);
}

int json_str_sb_n(struct strbuf *sb, const char *s, size_t len)
{
	struct sink to = { .put = put_sb, .sb = sb };
	escape(&to, s, len);
	return to.err;
}

int json_str_sb(struct strbuf *sb, const char *s)
{
	if (!s)
		return sb_puts(sb, "null");
	return json_str_sb_n(sb, s, strlen(s));
}

void json_str_file(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	struct sink to = { .put = put_file, .out = out };
	escape(&to, s, strlen(s));
}

void json_num(double v, char *buf, size_t len)
{
	if (!isfinite(v)) {
		snprintf(buf, len, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v == 0 ? 0.0 : v);
		return;
	}
	/* the shortest form that reads back as v: a double carries at least
	 * 15 significant digits, so when some form of 15 digits or fewer
	 * round-trips, %.15g (which drops trailing zeros) prints exactly that
	 * one; otherwise 16 or 17 digits do. Three tries instead of seventeen:
	 * this runs for every number of every JSON report kabd serves. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}
