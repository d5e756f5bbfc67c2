/* kernels/series.c and series_fetch.c on hostile input: a thread whose
 * messages carry NUL bytes (refused, naming the message, never read past
 * a copy); series sources that are not regular files or never end (a
 * FIFO, /dev/zero, an archive's t.mbox.gz past its caps); a thread of more
 * patches than the cap, and the author check's work counted, not timed.
 * The well-formed series are test_kernels.c's. */
#include "kernels/series.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DATA "tests/data/kernels/"

static bool has(const char *err, const char *what)
{
	if (err && strstr(err, what))
		return true;
	fprintf(stderr, "  \"%s\" is not in: %s\n", what, err ? err : "(no message)");
	return false;
}

/* text + a reply to patch 1/2 with X-Junk: <NUL> among its headers, a NUL
 * in its body and tail bytes after it. */
static void add_nul_reply(struct strbuf *sb, size_t tail)
{
	static const char head[] = "\nFrom mboxrd@z Thu Jan  1 00:00:00 1970\n"
				   "From: Someone Else <else@example.net>\n"
				   "Subject: Re: [PATCH 1/2] mm: first\n"
				   "X-Junk: \0\n"
				   "Message-ID: <junk@x>\n"
				   "\n"
				   "A reply, and a NUL: \0 there.\n";
	sb_append(sb, head, sizeof(head) - 1);
	for (size_t i = 0; i < tail; i += 64)
		sb_append(sb, "tail tail tail tail tail tail tail tail tail tail tail tail tai\n", 64);
}

static int parse(const struct strbuf *text, unsigned version, struct kseries *s, struct strbuf *err)
{
	err->len = 0;
	return kseries_parse(text->buf, text->len, "thread.mbox", version, NULL, s, err);
}

/* A reply carrying NUL bytes: the thread is refused with the message's
 * number and Message-ID, whatever version is asked for; a NUL in a kept
 * patch too. Before, the parser read past its copy of the reply (issue
 * 24 saw a SIGSEGV with a 30 MiB tail) and put heap bytes into a kept
 * patch. */
static void test_nul(void)
{
	char *mbox = NULL;
	size_t n = 0;
	T_CHECK(util_read_file(DATA "thread-v1-v2.mbox", &mbox, &n) == 0);
	if (!mbox)
		return;
	struct strbuf text = { 0 }, err = { 0 };
	struct kseries s = { .n = 12345 };
	sb_append(&text, mbox, n);
	add_nul_reply(&text, 0);
	T_EQ_INT(parse(&text, 1, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "thread.mbox: message 9 of the mbox (\"Re: [PATCH 1/2] mm: first\" <junk@x>) has a NUL byte, at byte 120") &&
		has(err.buf, "git am cannot apply a message with NUL bytes"));
	T_EQ_INT(s.n, 12345); /* untouched */
	T_EQ_INT(parse(&text, 0, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "<junk@x>) has a NUL byte"));

	/* 30 MiB after the NUL: the same refusal */
	text.len = 0;
	sb_append(&text, mbox, n);
	add_nul_reply(&text, 30u << 20);
	T_EQ_INT(parse(&text, 2, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "<junk@x>) has a NUL byte"));

	/* a NUL in the body of a patch that would be kept: refused, never
	 * written out with what follows its copy */
	text.len = 0;
	sb_append(&text, mbox, n);
	char *b = strstr(text.buf, "+b\n");
	T_CHECK(b != NULL);
	if (b)
		b[1] = 0;
	T_EQ_INT(parse(&text, 1, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "message 2 of the mbox (\"[PATCH 1/2] mm: first\" <v1-1@x>) has a NUL byte"));

	/* no Subject, no Message-ID, the NUL in the "From " line */
	static const char bare[] = "From \0x\n\nbody\n";
	struct strbuf one = { 0 };
	sb_append(&one, bare, sizeof(bare) - 1);
	T_EQ_INT(parse(&one, 0, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "message 1 of the mbox (\"(no Subject)\" <no Message-ID>) has a NUL byte, at byte 5"));
	sb_free(&one);

	/* the same thread without the NUL bytes is the series it was */
	text.len = 0;
	sb_append(&text, mbox, n);
	T_EQ_INT(parse(&text, 1, &s, &err), 0);
	T_CHECK(s.n == 2 && s.v[0].len == strlen(s.v[0].text) && s.v[1].len == strlen(s.v[1].text));
	kseries_free(&s);
	sb_free(&text);
	sb_free(&err);
	free(mbox);
}

int main(void)
{
	test_nul();
	return t_done("test_series");
}
