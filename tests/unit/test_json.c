/* JSON out (json.h): what a string escapes and how (jansson's forms),
 * UTF-8 that passes through, bytes that are not UTF-8, NULs inside a
 * length, every form reading back as the string meant; numbers; the
 * writer's layouts, streaming, fixed and unsigned numbers, and its
 * errors. */
#include "t.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* v written alone into a strbuf, as a NUL-terminated copy the caller frees. */
static char *sb_form(json_t *v)
{
	struct strbuf sb = { 0 };
	T_EQ_INT(jw_dump_sb(&sb, v, 0), 0);
	return sb.buf;
}

static char *file_form(json_t *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		json_decref(v);
		return NULL;
	}
	T_EQ_INT(jw_dump_file(f, v, 0), 0);
	fclose(f);
	return text;
}

/* The text written reads back (jansson's parser) as the string `means`
 * of mlen bytes. */
static void reads_back(const char *text, const char *means, size_t mlen)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	T_CHECK(v && json_is_string(v));
	if (v && json_is_string(v)) {
		T_EQ_INT(json_string_length(v), mlen);
		T_CHECK(json_string_length(v) == mlen && memcmp(json_string_value(v), means, mlen) == 0);
	}
	json_decref(v);
}

/* Both forms of s are want, which reads back as means. */
static void check_as(const char *s, const char *want, const char *means)
{
	char *a = sb_form(jw_str(s)), *b = file_form(jw_str(s));
	T_EQ_STR(a, want);
	T_EQ_STR(b, want);
	if (means)
		reads_back(a, means, strlen(means));
	free(a);
	free(b);
}

static void check(const char *s, const char *want)
{
	check_as(s, want, s);
}

static void check_n(const char *s, size_t len, const char *want, const char *means, size_t mlen)
{
	char *a = sb_form(jw_str_n(s, len));
	T_EQ_STR(a, want);
	reads_back(a, means, mlen);
	free(a);
}

static void test_plain(void)
{
	check("", "\"\"");
	check("stress-vm", "\"stress-vm\"");
	check("a/b", "\"a/b\"");  /* '/' may stay as it is (RFC 8259) */
	check("~ {}[]:,'", "\"~ {}[]:,'\"");
	check_as(NULL, "null", NULL);
	char *e = sb_form(jw_str_opt(""));
	T_EQ_STR(e, "null");
	free(e);
}

static void test_escapes(void)
{
	check("a\"b", "\"a\\\"b\"");
	check("a\\b", "\"a\\\\b\"");
	check("\\\"", "\"\\\\\\\"\"");
	check("one\ntwo\r\n\tend", "\"one\\ntwo\\r\\n\\tend\"");
	check("\x01", "\"\\u0001\"");
	check("\b\f", "\"\\b\\f\"");
	check("\x1b[1m", "\"\\u001B[1m\"");
	check("\x1f", "\"\\u001F\"");
	check(" ", "\" \"");
	/* DEL too: a terminal acts on it, and esc_stream would show it as \x7f */
	check("\x7f", "\"\\u007f\"");
	check("a\x7f\x7f!", "\"a\\u007f\\u007f!\"");
	/* every control character escaped, each reading back as itself */
	for (unsigned c = 1; c < 0x20; c++) {
		char s[2] = { (char)c, 0 };
		char *a = sb_form(jw_str(s));
		T_CHECK(a && a[0] == '"' && a[1] == '\\' && strlen(a) >= 4);
		reads_back(a, s, 1);
		free(a);
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

#define FFFD "\xef\xbf\xbd"

/* Each byte that starts no valid sequence is one U+FFFD; what follows it
 * is read afresh. */
static void test_not_utf8(void)
{
	check_as("caf\xe9", "\"caf" FFFD "\"", "caf" FFFD);                               /* Latin-1 é */
	check_as("\x80", "\"" FFFD "\"", FFFD);                                           /* a lone continuation */
	check_as("\xc0\xaf", "\"" FFFD FFFD "\"", FFFD FFFD);                             /* overlong '/' */
	check_as("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"", FFFD FFFD FFFD);               /* overlong, 3 bytes */
	check_as("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"", FFFD FFFD FFFD);               /* a surrogate, U+D800 */
	check_as("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"", FFFD FFFD FFFD FFFD); /* past U+10FFFF */
	check_as("\xf5", "\"" FFFD "\"", FFFD);
	check_as("\xff\xfe", "\"" FFFD FFFD "\"", FFFD FFFD);
	check_as("\xe2\x86", "\"" FFFD FFFD "\"", FFFD FFFD); /* cut: a %.Ns in the middle of ↑ */
	check_as("\xe2\x86x", "\"" FFFD FFFD "x\"", FFFD FFFD "x");
	check_as("\xc2\"", "\"" FFFD "\\\"\"", FFFD "\""); /* the quote after a bad byte is still escaped */
}

static void test_lengths(void)
{
	check_n("a\0b", 3, "\"a\\u0000b\"", "a\0b", 3);
	check_n("\0", 1, "\"\\u0000\"", "\0", 1);
	check_n("", 0, "\"\"", "", 0);
	check_n("abcdef", 3, "\"abc\"", "abc", 3);
	/* a sequence the length cuts is not read past it */
	check_n("\xe2\x86\x91", 2, "\"" FFFD FFFD "\"", FFFD FFFD, 6);
	check_n("\xe2\x86\x91", 3, "\"\xe2\x86\x91\"", "\xe2\x86\x91", 3);
	check_n("\xc3\0", 2, "\"" FFFD "\\u0000\"", FFFD "\0", 4);
}

/* The writer appends: what the buffer held stays. */
static void test_appends(void)
{
	struct strbuf sb = { 0 };
	sb_puts(&sb, "reply: ");
	T_EQ_INT(jw_dump_sb(&sb, json_pack("{s:o, s:o}", "error", jw_str("no \"job\""), "reason", jw_str(NULL)), 0), 0);
	T_EQ_STR(sb.buf, "reply: {\"error\": \"no \\\"job\\\"\", \"reason\": null}");
	T_EQ_INT(sb.len, strlen(sb.buf));
	sb_free(&sb);

	/* a long string with escapes all along, past the first allocation */
	struct strbuf big = { 0 }, want = { 0 };
	char s[3001];
	for (size_t i = 0; i < 1000; i++) {
		memcpy(s + 3 * i, "a\"\xc3", 3);
		sb_puts(&want, i ? "a\\\"" FFFD : "\"a\\\"" FFFD);
	}
	s[3000] = 0;
	sb_puts(&want, "\"");
	T_EQ_INT(jw_dump_sb(&big, jw_str(s), 0), 0);
	T_EQ_STR(big.buf, want.buf);
	char *f = file_form(jw_str(s));
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
	jw_num_text(NAN, buf, sizeof(buf));
	T_EQ_STR(buf, "null");
	jw_num_text(-INFINITY, buf, sizeof(buf));
	T_EQ_STR(buf, "null");
	jw_num_text(-0.0, buf, sizeof(buf));
	T_EQ_STR(buf, "0");
	jw_num_text(7200, buf, sizeof(buf));
	T_EQ_STR(buf, "7200");
	jw_num_text(-3, buf, sizeof(buf));
	T_EQ_STR(buf, "-3");
	jw_num_text(0.1, buf, sizeof(buf));
	T_EQ_STR(buf, "0.1");
	jw_num_text(1.0 / 3, buf, sizeof(buf));
	T_CHECK(strtod(buf, NULL) == 1.0 / 3);
	jw_num_text(1e300, buf, sizeof(buf));
	T_EQ_STR(buf, "1e+300");
	jw_num_text(1e15, buf, sizeof(buf));
	T_EQ_STR(buf, "1e+15");
	jw_num_text(999999999999999.0, buf, sizeof(buf));
	T_EQ_STR(buf, "999999999999999");

	/* the values: the same texts, inside the writer's output */
	char *t = sb_form(json_pack("[o, o, o, o, o, o, o]", jw_num(NAN), jw_num(-0.0), jw_num(7200), jw_num(0.1),
				    jw_num(28238.63), jw_num(1e15), jw_num(26.896984733324526)));
	T_EQ_STR(t, "[null, 0, 7200, 0.1, 28238.63, 1e+15, 26.896984733324526]");
	free(t);
	t = sb_form(jw_time(0));
	T_EQ_STR(t, "null");
	free(t);
	t = sb_form(jw_time(1767225600));
	T_EQ_STR(t, "\"2026-01-01T00:00:00Z\"");
	free(t);
}

/* The layouts, as kabd's pages, the report and the history use them. */
static void test_layouts(void)
{
	struct strbuf sb = { 0 };
	struct jw w;
	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_open(&w, "jobs", '[', JW_ROWS);
	jw_put(&w, NULL, json_pack("{s:i, s:s}", "id", 2, "name", "b"));
	jw_put(&w, NULL, json_pack("{s:i, s:[]}", "id", 1, "tags"));
	jw_close(&w);
	jw_put(&w, "next_after", json_null());
	jw_close(&w);
	T_EQ_INT(jw_end(&w), 0);
	T_EQ_STR(sb.buf, "{\"jobs\": [\n  {\"id\": 2, \"name\": \"b\"},\n  {\"id\": 1, \"tags\": []}\n], \"next_after\": null}");
	sb_free(&sb);

	/* an empty page still ends on its own line; empty lines do not */
	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '{', JW_LINES);
	jw_open(&w, "runs", '[', JW_ROWS);
	jw_close(&w);
	jw_open(&w, "points", '[', JW_LINES);
	jw_close(&w);
	jw_open(&w, "kernels", '[', JW_LINES);
	jw_put(&w, NULL, json_pack("{s:b}", "found", 1));
	jw_close(&w);
	jw_put(&w, "boots", json_array());
	jw_close(&w);
	T_EQ_INT(jw_end(&w), 0);
	T_EQ_STR(sb.buf, "{\n  \"runs\": [\n  ],\n  \"points\": [],\n  \"kernels\": [\n    {\"found\": true}\n  ],\n  \"boots\": []\n}");
	sb_free(&sb);

	/* lines inside an inline object indent from the enclosing lines */
	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '[', JW_LINES);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "a", json_integer(1));
	jw_open(&w, "points", '[', JW_LINES);
	jw_put(&w, NULL, json_integer(2));
	jw_close(&w);
	jw_close(&w);
	jw_close(&w);
	T_EQ_INT(jw_end(&w), 0);
	T_EQ_STR(sb.buf, "[\n  {\"a\": 1, \"points\": [\n    2\n  ]}\n]");
	sb_free(&sb);

	/* compact; fixed decimals; unsigned */
	jw_init_sb(&w, &sb, JW_COMPACT);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "r", json_pack("{s:[i, b], s:{}}", "a", 1, 0, "o"));
	jw_open(&w, "t_s", '[', JW_INLINE);
	jw_fixed(&w, NULL, 0, 6);
	jw_fixed(&w, NULL, 0.3, 6);
	jw_fixed(&w, NULL, NAN, 6);
	jw_close(&w);
	jw_u64(&w, "seed", UINT64_MAX);
	jw_close(&w);
	T_EQ_INT(jw_end(&w), 0);
	T_EQ_STR(sb.buf, "{\"r\":{\"a\":[1,false],\"o\":{}},\"t_s\":[0.000000,0.300000,null],\"seed\":18446744073709551615}");
	sb_free(&sb);

	/* the report's metric: a line break inside an inline object, the
	 * lines inside it indented from there, a list closed after its last */
	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '[', JW_LINES);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, "name", jw_str("m"));
	jw_break(&w);
	jw_open(&w, "variants", '[', JW_LINES);
	jw_put(&w, NULL, json_integer(1));
	jw_close(&w);
	jw_break(&w);
	jw_put_members(&w, json_pack("{s:i, s:i}", "d", 2, "e", 3));
	jw_break(&w);
	jw_open(&w, "comparisons", '[', JW_LINES_TIGHT);
	jw_put(&w, NULL, json_integer(4));
	jw_close(&w);
	jw_close(&w);
	jw_close(&w);
	T_EQ_INT(jw_end(&w), 0);
	T_EQ_STR(sb.buf, "[\n  {\"name\": \"m\",\n    \"variants\": [\n      1\n    ],\n    \"d\": 2, \"e\": 3,\n"
			 "    \"comparisons\": [\n      4]}\n]");
	sb_free(&sb);

	/* a key that is not UTF-8 is made so, as a string is */
	json_t *o = json_object();
	T_EQ_INT(jw_set(o, "caf\xe9", json_integer(1)), 0);
	char *t = sb_form(o);
	T_EQ_STR(t, "{\"caf" FFFD "\": 1}");
	free(t);
}

/* What the writer refuses: a value that could not be made, a member
 * without its key, an unbalanced open; a failed stream. */
static void test_errors(void)
{
	struct strbuf sb = { 0 };
	struct jw w;
	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '[', JW_INLINE);
	jw_put(&w, NULL, NULL);
	jw_close(&w);
	T_EQ_INT(jw_end(&w), -ENOMEM);
	T_EQ_STR(sb.buf, "[null]");
	sb_free(&sb);

	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	jw_put(&w, NULL, json_integer(1));
	jw_close(&w);
	T_EQ_INT(jw_end(&w), -EINVAL);
	sb_free(&sb);

	jw_init_sb(&w, &sb, 0);
	jw_open(&w, NULL, '{', JW_INLINE);
	T_EQ_INT(jw_end(&w), -EINVAL);
	sb_free(&sb);

	FILE *f = fopen("/dev/full", "w");
	if (f) {
		setvbuf(f, NULL, _IONBF, 0);
		T_EQ_INT(jw_dump_file(f, json_pack("{s:s}", "a", "b"), 0), -EIO);
		fclose(f);
	}
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
	test_layouts();
	test_errors();
	return t_done("test_json");
}
