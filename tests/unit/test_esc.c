/* The escaper of stored strings (esc.h): what a terminal would act on is
 * shown (C0, DEL, C1, bidirectional overrides, bytes of no UTF-8), the
 * rest copied; twice is once; the buffer form cuts whole; the stream
 * escapes a character split between writes whole; the XML form is
 * well-formed whatever the string holds. */
#include "t.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <stdlib.h>
#include <string.h>

/* s through esc_text_sb, esc_text_file and esc_text_buf (a large buffer):
 * all three give want. */
static void check_text(const char *s, unsigned flags, const char *want)
{
	struct strbuf sb = { 0 };
	T_EQ_INT(esc_text_sb(&sb, s, strlen(s), flags), 0);
	T_EQ_STR(sb.buf ? sb.buf : "", want);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	T_CHECK(f != NULL);
	if (f) {
		esc_text_file(f, s, strlen(s), flags);
		fclose(f);
		T_EQ_STR(text, want);
	}
	char buf[512];
	T_EQ_STR(esc_text_buf(s, buf, sizeof(buf), flags), want);
	/* escaping what was escaped changes nothing */
	struct strbuf again = { 0 };
	T_EQ_INT(esc_text_sb(&again, sb.buf ? sb.buf : "", sb.len, flags), 0);
	T_EQ_STR(again.buf ? again.buf : "", want);
	sb_free(&sb);
	sb_free(&again);
	free(text);
}

static void test_text(void)
{
	check_text("", 0, "");
	check_text("mm: fix a leak in foo()", 0, "mm: fix a leak in foo()");
	/* the 22 ESC bytes of the issue: colour, a title, a cursor move */
	check_text("\x1b[31mred\x1b[0m", 0, "\\x1b[31mred\\x1b[0m");
	check_text("\x1b]0;owned\x07", 0, "\\x1b]0;owned\\x07");
	check_text("a\rb\bc\x7f", 0, "a\\x0db\\x08c\\x7f");
	check_text("one\ntwo\tthree", 0, "one\\x0atwo\\x09three");
	check_text("one\ntwo\tthree\r\n", ESC_LINES, "one\ntwo\tthree\\x0d\n");
	/* C1 controls (CSI as U+009B) and bidirectional overrides */
	check_text("\302\23331m", 0, "\\u009b31m");
	check_text("\xc2\x85", ESC_LINES, "\\u0085");
	check_text("abc\342\200\256cba", 0, "abc\\u202ecba");
	check_text("\xe2\x81\xa6x\xe2\x81\xa9", 0, "\\u2066x\\u2069");
	/* printable UTF-8 is kept: accents, arrows, CJK, emoji, U+00A0 */
	check_text("caf\xc3\xa9 \xe2\x86\x91 \xe4\xb8\xad \xf0\x9f\x90\xa7 \xc2\xa0", 0,
		   "caf\xc3\xa9 \xe2\x86\x91 \xe4\xb8\xad \xf0\x9f\x90\xa7 \xc2\xa0");
	/* bytes of no UTF-8: Latin-1, a cut sequence, overlong, surrogate, past U+10FFFF */
	check_text("caf\xe9", 0, "caf\\xe9");
	check_text("\xe2\x86", 0, "\\xe2\\x86");
	check_text("\xc0\xaf", 0, "\\xc0\\xaf");
	check_text("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	check_text("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");
	check_text("\xc2\x9b", 0, "\\u009b");
	/* backslashes are copied: the form is the same after any number of passes */
	check_text("C:\\x1b and \\u009b", 0, "C:\\x1b and \\u009b");
}

static void test_buf(void)
{
	char buf[8];
	/* cut before the escape that does not fit, never inside it */
	T_EQ_STR(esc_text_buf("abcde\x1b", buf, sizeof(buf), 0), "abcde");
	T_EQ_STR(esc_text_buf("ab\033cdefgh", buf, sizeof(buf), 0), "ab\\x1bc");
	T_EQ_STR(esc_text_buf("abc\033defgh", buf, sizeof(buf), 0), "abc\\x1b");
	/* cut before a character that does not fit, never inside it */
	T_EQ_STR(esc_text_buf("abcdef\xc3\xa9", buf, sizeof(buf), 0), "abcdef");
	T_EQ_STR(esc_text_buf("abcde\xe2\x86\x91", buf, sizeof(buf), 0), "abcde");
	T_EQ_STR(esc_text_buf("abcdefghij", buf, sizeof(buf), 0), "abcdefg");
	T_EQ_STR(esc_text_buf("abc", buf, 1, 0), "");
	/* the buffer's result is valid UTF-8 with no control character */
	char big[40];
	esc_text_buf("\xff\xfe\x1b\xe2\x80\xae\xc3", big, sizeof(big), 0);
	T_CHECK(esc_utf8_valid(big, strlen(big), NULL));
	for (const char *p = big; *p; p++)
		T_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
}

/* text written to an esc_stream in pieces of size step */
static char *through_stream(const char *s, size_t step)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	FILE *f = m ? esc_stream(m) : NULL;
	T_CHECK(f != NULL);
	if (!f) {
		if (m)
			fclose(m);
		free(text);
		return NULL;
	}
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i += step) {
		fwrite(s + i, 1, i + step > n ? n - i : step, f);
		fflush(f); /* each piece a write of its own */
	}
	T_EQ_INT(fclose(f), 0);
	fclose(m);
	return text;
}

static void test_stream(void)
{
	const char *s = "caf\xc3\xa9 \xe2\x86\x91 \xf0\x9f\x90\xa7\n\x1b[1m\tx\xe9\xe2\x80\xae end\xe2\x86";
	const char *want = "caf\xc3\xa9 \xe2\x86\x91 \xf0\x9f\x90\xa7\n\\x1b[1m\tx\\xe9\\u202e end\\xe2\\x86";
	for (size_t step = 1; step <= 5; step++) {
		char *out = through_stream(s, step);
		T_EQ_STR(out, want);
		free(out);
	}
	char *out = through_stream(s, strlen(s));
	T_EQ_STR(out, want);
	free(out);
	/* a write to a closed stream under it fails the close */
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		FILE *f = esc_stream(full);
		T_CHECK(f != NULL);
		if (f) {
			fputs("text\n", f);
			T_CHECK(fclose(f) != 0);
		}
		fclose(full);
	}
}

static void check_xml(const char *s, const char *want)
{
	struct strbuf sb = { 0 };
	T_EQ_INT(esc_xml_sb(&sb, s), 0);
	T_EQ_STR(sb.buf ? sb.buf : "", want);
	sb_free(&sb);
}

static void test_xml(void)
{
	check_xml("", "");
	check_xml("a < b & c > d \"q\" 'a'", "a &lt; b &amp; c &gt; d &quot;q&quot; &apos;a&apos;");
	check_xml("caf\xc3\xa9 \xe2\x86\x91", "caf\xc3\xa9 \xe2\x86\x91");
	check_xml("caf\xe9", "caf\xef\xbf\xbd");
	check_xml("\x1b[31mred\x07\x01", "[31mred");
	check_xml("tab\tnl\ncr\r", "tab\tnl\ncr\r");
	check_xml("x\xef\xbf\xbey\xef\xbf\xbfz", "xyz");
	check_xml("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

static void test_valid(void)
{
	size_t bad = 99;
	T_CHECK(esc_utf8_valid("", 0, &bad));
	T_CHECK(esc_utf8_valid("caf\xc3\xa9", 5, &bad));
	T_CHECK(!esc_utf8_valid("caf\xe9", 4, &bad));
	T_EQ_INT(bad, 3);
	T_CHECK(!esc_utf8_valid("ab\xc3", 3, &bad));
	T_EQ_INT(bad, 2);
	T_EQ_INT(esc_utf8_len("\xf0\x9f\x90\xa7", 4), 4);
	T_EQ_INT(esc_utf8_len("\xf0\x9f\x90\xa7", 3), 0);
	T_EQ_INT(esc_utf8_len("\xe0\x80\x80", 3), 0); /* overlong */
}

int main(void)
{
	test_text();
	test_buf();
	test_stream();
	test_xml();
	test_valid();
	return t_done("test_esc");
}
