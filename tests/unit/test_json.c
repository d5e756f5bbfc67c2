/* The JSON writer (json.h): what a string escapes and how, UTF-8 that
 * passes through, bytes that are not UTF-8, NULs inside a length, the
 * strbuf and FILE forms giving the same bytes; numbers. */
#include "t.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* s through json_str_sb, as a NUL-terminated copy the caller frees. */
static char *sb_form(const char *s)
{
	struct strbuf sb = { 0 };
	T_EQ_INT(json_str_sb(&sb, s), 0);
	return sb.buf;
}

static char *file_form(const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	json_str_file(f, s);
	fclose(f);
	return text;
}

/* Both forms of s are want. */
static void check(const char *s, const char *want)
{
	char *a = sb_form(s), *b = file_form(s);
	T_EQ_STR(a, want);
	T_EQ_STR(b, want);
	free(a);
	free(b);
}

static void check_n(const char *s, size_t len, const char *want)
{
	struct strbuf sb = { 0 };
	T_EQ_INT(json_str_sb_n(&sb, s, len), 0);
	T_EQ_STR(sb.buf, want);
	sb_free(&sb);
}

static void test_plain(void)
{
	check("", "\"\"");
	check("stress-vm", "\"stress-vm\"");
	check("a/b", "\"a/b\"");  /* '/' may stay as it is (RFC 8259) */
	check("~ {}[]:,'", "\"~ {}[]:,'\"");
	check(NULL, "null");
}

static void test_escapes(void)
{
	check("a\"b", "\"a\\\"b\"");
	check("a\\b", "\"a\\\\b\"");
	check("\\\"", "\"\\\\\\\"\"");
	check("one\ntwo\r\n\tend", "\"one\\ntwo\\r\\n\\tend\"");
	check("\x01", "\"\\u0001\"");
	check("\b\f", "\"\\u0008\\u000c\"");
	check("\x1b[1m", "\"\\u001b[1m\"");
	check("\x1f", "\"\\u001f\"");
	check(" ", "\" \"");
	check("\x7f", "\"\\u007f\"");
	/* every control character, each as \u00XX unless it has a name */
	for (unsigned c = 1; c < 0x20; c++) {
		char s[2] = { (char)c, 0 }, want[16];
		if (c == '\n' || c == '\r' || c == '\t')
			continue;
		snprintf(want, sizeof(want), "\"\\u%04x\"", c);
		check(s, want);
	}
}

static void test_utf8(void)
{
	check("\xc2\xb5s", "\"\xc2\xb5s\"");                  /* µs, 2 bytes */
	check("\xe2\x86\x91 higher", "\"\xe2\x86\x91 higher\"");  /* ↑, 3 bytes */
	check("\xf0\x9f\x93\x88", "\"\xf0\x9f\x93\x88\"");      /* U+1F4C8, 4 bytes */
	check("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");      /* U+10FFFF, the last */
	check("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");              /* U+FFFD itself */
	check("\xc2\x80", "\"\xc2\x80\"");                      /* a C1 control is valid UTF-8 */
}

/* Each byte that starts no valid sequence is one \ufffd; what follows it
 * is read afresh. */
static void test_not_utf8(void)
{
	check("caf\xe9", "\"caf\\ufffd\"");                    /* Latin-1 é */
	check("\x80", "\"\\ufffd\"");                          /* a lone continuation */
	check("\xc0\xaf", "\"\\ufffd\\ufffd\"");               /* overlong '/' */
	check("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");    /* overlong, 3 bytes */
	check("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");    /* a surrogate, U+D800 */
	check("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  /* past U+10FFFF */
	check("\xf5", "\"\\ufffd\"");
	check("\xff\xfe", "\"\\ufffd\\ufffd\"");
	check("\xe2\x86", "\"\\ufffd\\ufffd\"");               /* cut: a %.Ns in the middle of ↑ */
	check("\xe2\x86x", "\"\\ufffd\\ufffdx\"");
	check("\xc2\"", "\"\\ufffd\\\"\"");                    /* the quote after a bad byte is still escaped */
}

static void test_lengths(void)
{
	check_n("a\0b", 3, "\"a\\u0000b\"");
	check_n("\0", 1, "\"\\u0000\"");
	check_n("", 0, "\"\"");
	check_n("abcdef", 3, "\"abc\"");
	/* a sequence the length cuts is not read past it */
	check_n("\xe2\x86\x91", 2, "\"\\ufffd\\ufffd\"");
	check_n("\xe2\x86\x91", 3, "\"\xe2\x86\x91\"");
	check_n("\xc3\0", 2, "\"\\ufffd\\u0000\"");
}

/* The writer appends: what the buffer held stays. */
static void test_appends(void)
{
	struct strbuf sb = { 0 };
	sb_puts(&sb, "{\"error\": ");
	json_str_sb(&sb, "no \"job\"");
	sb_puts(&sb, ", \"reason\": ");
	json_str_sb(&sb, NULL);
	sb_puts(&sb, "}");
	T_EQ_STR(sb.buf, "{\"error\": \"no \\\"job\\\"\", \"reason\": null}");
	T_EQ_INT(sb.len, strlen(sb.buf));
	sb_free(&sb);

	/* a long string with escapes all along, past the first allocation */
	struct strbuf big = { 0 }, want = { 0 };
	char s[3001];
	for (size_t i = 0; i < 1000; i++) {
		memcpy(s + 3 * i, "a\"\xc3", 3);
		sb_puts(&want, i ? "a\\\"\\ufffd" : "\"a\\\"\\ufffd");
	}
	s[3000] = 0;
	sb_puts(&want, "\"");
	json_str_sb(&big, s);
	T_EQ_STR(big.buf, want.buf);
	char *f = file_form(s);
	T_EQ_STR(f, want.buf);
	free(f);
	sb_free(&big);
	sb_free(&want);
}

/* Numbers: null for what JSON cannot say, whole numbers as digits, the
 * rest in the fewest digits that read back the same. */
static void test_num(void)
{
	char buf[64];
	json_num(NAN, buf, sizeof(buf));
	T_EQ_STR(buf, "null");
	json_num(-INFINITY, buf, sizeof(buf));
	T_EQ_STR(buf, "null");
	json_num(-0.0, buf, sizeof(buf));
	T_EQ_STR(buf, "0");
	json_num(7200, buf, sizeof(buf));
	T_EQ_STR(buf, "7200");
	json_num(-3, buf, sizeof(buf));
	T_EQ_STR(buf, "-3");
	json_num(0.1, buf, sizeof(buf));
	T_EQ_STR(buf, "0.1");
	json_num(1.0 / 3, buf, sizeof(buf));
	T_CHECK(strtod(buf, NULL) == 1.0 / 3);
	json_num(1e300, buf, sizeof(buf));
	T_EQ_STR(buf, "1e+300");
	json_num(1e15, buf, sizeof(buf));
	T_EQ_STR(buf, "1e+15");
	json_num(999999999999999.0, buf, sizeof(buf));
	T_EQ_STR(buf, "999999999999999");
}

int main(void)
{
	test_plain();
	test_escapes();
	test_utf8();
	test_not_utf8();
	test_lengths();
	test_appends();
	test_num();
	return t_done("test_json");
}
