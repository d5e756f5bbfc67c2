/* kernels/series.c and series_fetch.c on hostile input: a thread whose
 * messages carry NUL bytes (refused, naming the message, never read past
 * a copy); series sources that are not regular files or never end (a
 * FIFO, /dev/zero, an archive's t.mbox.gz past its caps); a thread of more
 * patches than the cap, and the author check's refusals counted, not
 * timed. The well-formed series are test_kernels.c's. */
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

static int load(const char *source, const char *archive, struct kseries *s, struct strbuf *err)
{
	err->len = 0;
	return kseries_load(source, 0, archive, s, err);
}

static void write_gz(const char *path, const char *text, size_t len)
{
	gzFile g = gzopen(path, "wb1");
	T_CHECK(g != NULL);
	if (!g)
		return;
	for (size_t done = 0; done < len;) {
		unsigned n = len - done > (1u << 20) ? 1u << 20 : (unsigned)(len - done);
		T_CHECK(gzwrite(g, text + done, n) == (int)n);
		done += n;
	}
	T_EQ_INT(gzclose(g), Z_OK);
}

/* DIR/ID/, for a thread of a local archive */
static void thread_dir(char *path, size_t n, const char *dir, const char *id, const char *file)
{
	snprintf(path, n, "%s/%s", dir, id);
	mkdir(path, 0755);
	snprintf(path, n, "%s/%s/%s", dir, id, file);
}

/* series = FILE, a directory's .patch and a local archive's t.mbox.gz:
 * only regular files are read (a symlink to one too), never a device
 * whose size says 0 and that never ends, nor a FIFO that would block the
 * executor; each refusal names the file and what it is. A hang is a
 * failure (alarm), not a test that never ends. */
static void test_sources(void)
{
	char dir[] = "/tmp/kab-test-series.XXXXXX", p[4096], q[4096];
	T_CHECK(mkdtemp(dir) != NULL);
	struct kseries s;
	struct strbuf err = { 0 };
	alarm(60);

	snprintf(p, sizeof(p), "%s/zero.mbox", dir);
	T_CHECK(symlink("/dev/zero", p) == 0);
	T_EQ_INT(load(p, NULL, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "zero.mbox is a character device: kab reads a series only from a regular file"));
	snprintf(p, sizeof(p), "%s/fifo.mbox", dir);
	T_CHECK(mkfifo(p, 0600) == 0);
	T_EQ_INT(load(p, NULL, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "fifo.mbox is a FIFO: kab reads a series only from a regular file"));
	/* a symlink to a regular file is the file */
	char cwd[4096];
	T_CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(p, sizeof(p), "%s/single.mbox", dir);
	snprintf(q, sizeof(q), "%s/" DATA "single.mbox", cwd);
	T_CHECK(symlink(q, p) == 0);
	int r = load(p, NULL, &s, &err);
	T_EQ_INT(r, 0);
	if (r == 0)
		kseries_free(&s);

	/* a directory of patches: one of them /dev/zero, then a FIFO */
	snprintf(p, sizeof(p), "%s/patches", dir);
	T_CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/patches/0001-ok.patch", dir);
	T_CHECK(symlink(q, p) == 0);
	snprintf(p, sizeof(p), "%s/patches/0002-zero.patch", dir);
	T_CHECK(symlink("/dev/zero", p) == 0);
	snprintf(p, sizeof(p), "%s/patches", dir);
	T_EQ_INT(load(p, NULL, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "patches/0002-zero.patch is a character device"));
	snprintf(p, sizeof(p), "%s/patches/0002-zero.patch", dir);
	T_CHECK(unlink(p) == 0 && mkfifo(p, 0600) == 0);
	snprintf(p, sizeof(p), "%s/patches", dir);
	T_EQ_INT(load(p, NULL, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "patches/0002-zero.patch is a FIFO"));

	/* a local archive's t.mbox.gz */
	thread_dir(p, sizeof(p), dir, "zero@x", "t.mbox.gz");
	T_CHECK(symlink("/dev/zero", p) == 0);
	T_EQ_INT(load("lore:zero@x", dir, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "lore:zero@x: ") &&
		has(err.buf, "zero@x/t.mbox.gz is a character device: kab reads a thread only from a regular file"));
	thread_dir(p, sizeof(p), dir, "fifo@x", "t.mbox.gz");
	T_CHECK(mkfifo(p, 0600) == 0);
	T_EQ_INT(load("lore:fifo@x", dir, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "fifo@x/t.mbox.gz is a FIFO"));
	alarm(0);
	sb_free(&err);
	util_remove_tree(dir);
}

/* What a local t.mbox.gz may be: 16 MiB of gzip data, decompressing to
 * 64 MiB; one byte more is refused with the cap named. Made here with
 * zlib: an mbox of one patch whose body is padded to the size. */
static void test_gz_caps(void)
{
	char dir[] = "/tmp/kab-test-series-gz.XXXXXX", p[4096];
	T_CHECK(mkdtemp(dir) != NULL);
	char *mbox = NULL;
	size_t n = 0;
	T_CHECK(util_read_file(DATA "single.mbox", &mbox, &n) == 0);
	if (!mbox)
		return;
	size_t big = KSERIES_MBOX_MAX + 1;
	char *text = malloc(big);
	T_CHECK(text != NULL);
	if (!text) {
		free(mbox);
		return;
	}
	/* "From ...\n...headers...\n\n" + padding lines + the rest */
	const char *body = strstr(mbox, "\n\n");
	size_t head = body ? (size_t)(body - mbox) + 2 : 0;
	memcpy(text, mbox, head);
	memcpy(text + big - (n - head), mbox + head, n - head);
	for (size_t i = head; i < big - (n - head); i++)
		text[i] = (i - head) % 64 == 63 ? '\n' : 'x';
	text[big - (n - head) - 1] = '\n';
	struct kseries s;
	struct strbuf err = { 0 };

	thread_dir(p, sizeof(p), dir, "over@x", "t.mbox.gz");
	write_gz(p, text, big);
	T_EQ_INT(load("lore:over@x", dir, &s, &err), -EFBIG);
	T_CHECK(has(err.buf, "over@x/t.mbox.gz decompresses to more than 64 MiB, the cap on a thread's mbox: refused"));
	/* the cap itself is taken: the same mbox one padding byte shorter */
	memmove(text + head, text + head + 1, big - head - 1);
	thread_dir(p, sizeof(p), dir, "cap@x", "t.mbox.gz");
	write_gz(p, text, big - 1);
	int r = load("lore:cap@x", dir, &s, &err);
	T_EQ_INT(r, 0);
	if (r == 0) {
		T_CHECK(s.n == 1 && s.v[0].len == KSERIES_MBOX_MAX);
		kseries_free(&s);
	}
	free(text);
	free(mbox);

	/* gzip data over 16 MiB (a sparse file): refused on its size, before
	 * it is read */
	thread_dir(p, sizeof(p), dir, "large@x", "t.mbox.gz");
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	T_CHECK(fd >= 0 && ftruncate(fd, KSERIES_DOWNLOAD_MAX + 1) == 0);
	T_CHECK(fd >= 0 && write(fd, "\x1f\x8b", 2) == 2);
	if (fd >= 0)
		close(fd);
	T_EQ_INT(load("lore:large@x", dir, &s, &err), -EFBIG);
	T_CHECK(has(err.buf, "large@x/t.mbox.gz: larger than 16 MiB, the cap on a thread's t.mbox.gz: refused"));
	/* and series = FILE over 64 MiB */
	snprintf(p, sizeof(p), "%s/large.mbox", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	T_CHECK(fd >= 0 && ftruncate(fd, KSERIES_MBOX_MAX + 1) == 0);
	if (fd >= 0)
		close(fd);
	T_EQ_INT(load(p, NULL, &s, &err), -EFBIG);
	T_CHECK(has(err.buf, "large.mbox: larger than 64 MiB, the cap on a series: refused"));
	sb_free(&err);
	util_remove_tree(dir);
}

/* n patches: "[PATCH k/n]" from one sender (dup: all "[PATCH 1/1]";
 * senders: each from its own address, but the first). */
enum shape { NUMBERED, DUP, SENDERS };

static void many_patches(struct strbuf *sb, size_t n, enum shape shape)
{
	sb->len = 0;
	for (size_t i = 1; i <= n; i++) {
		if (shape == SENDERS && i > 1)
			sb_printf(sb, "From x\nFrom: s%zu@example.net\n", i);
		else
			sb_puts(sb, "From x\nFrom: A <a@example.org>\n");
		if (shape == DUP)
			sb_printf(sb, "Subject: [PATCH 1/1] x\nMessage-ID: <p%zu@x>\n\n--- a\n+++ b\n\n", i);
		else
			sb_printf(sb, "Subject: [PATCH %zu/%zu] x\nMessage-ID: <p%zu@x>\n\n--- a\n+++ b\n\n", i, n, i);
	}
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* At most KSERIES_PATCHES_MAX patches (and cover letters) in a thread or
 * a directory, one more refused naming the cap. The author check counts
 * each duplicate once, against the first patch of its number (not every
 * pair), and a refusal lists at most 8 problems and counts the rest: what
 * is checked is counts, not times (before, 4,000 copies of one number
 * took 14 s and made a refusal of 728 MB; 80,000 numbered patches 5 s). */
static void test_patch_cap(void)
{
	struct strbuf text = { 0 }, err = { 0 };
	struct kseries s;
	many_patches(&text, KSERIES_PATCHES_MAX, NUMBERED);
	int r = parse(&text, 0, &s, &err);
	T_EQ_INT(r, 0);
	if (r == 0) {
		T_EQ_INT(s.n, KSERIES_PATCHES_MAX);
		T_CHECK(s.v[KSERIES_PATCHES_MAX - 1].index == KSERIES_PATCHES_MAX);
		kseries_free(&s);
	}
	many_patches(&text, KSERIES_PATCHES_MAX + 1, NUMBERED);
	T_EQ_INT(parse(&text, 0, &s, &err), -EFBIG);
	T_CHECK(has(err.buf, "thread.mbox: more than 10000 patches and cover letters (all versions together), the cap on a series: refused"));

	/* every patch numbered 1/1: 9,999 duplicates, 8 of them named */
	many_patches(&text, KSERIES_PATCHES_MAX, DUP);
	T_EQ_INT(parse(&text, 0, &s, &err), -EINVAL);
	T_EQ_INT(count(err.buf, "two patches are numbered 1/1: \"[PATCH 1/1] x\" <p1@x>"), 8);
	T_CHECK(has(err.buf, "; and 9991 more. kab takes a series only whole from its author"));
	T_CHECK(err.len < 4096);
	/* three of one number: two duplicates, each with the first */
	text.len = 0;
	sb_puts(&text, "From x\nFrom: a@x\nSubject: [PATCH 1/2] x\nMessage-ID: <a@x>\n\n--- a\n+++ b\n\n"
		       "From x\nFrom: a@x\nSubject: [PATCH 1/2] y\nMessage-ID: <b@x>\n\n--- a\n+++ b\n\n"
		       "From x\nFrom: a@x\nSubject: [PATCH 1/2] z\nMessage-ID: <c@x>\n\n--- a\n+++ b\n\n");
	T_EQ_INT(parse(&text, 0, &s, &err), -EINVAL);
	T_EQ_INT(count(err.buf, "two patches are numbered"), 2);
	T_CHECK(has(err.buf, "<a@x> from a@x and \"[PATCH 1/2] y\" <b@x>") &&
		has(err.buf, "<a@x> from a@x and \"[PATCH 1/2] z\" <c@x>"));

	/* 9,999 patches from others: 8 named, the rest counted */
	many_patches(&text, KSERIES_PATCHES_MAX, SENDERS);
	T_EQ_INT(parse(&text, 0, &s, &err), -EINVAL);
	T_EQ_INT(count(err.buf, " is not from A <a@example.org>, the sender of its first patch"), 8);
	T_CHECK(has(err.buf, "; and 9991 more."));
	/* two versions, a sender per patch: each version's senders counted */
	text.len = 0;
	for (size_t i = 1; i <= KSERIES_PATCHES_MAX; i++)
		sb_printf(&text, "From x\nFrom: s%zu@x\nSubject: [PATCH v%zu %zu/5000] x\n\n--- a\n+++ b\n\n", i,
			  1 + i % 2, (i + 1) / 2);
	T_EQ_INT(parse(&text, 0, &s, &err), -EINVAL);
	T_CHECK(has(err.buf, "(v1: 5000 patches from s2@x, s4@x, s6@x, s8@x and 4996 more; v2: 5000 patches from s1@x, s3@x, s5@x, s7@x and 4996 more)"));

	/* a directory of one .patch more than the cap: refused before it is read */
	char dir[] = "/tmp/kab-test-series-cap.XXXXXX", p[4096];
	T_CHECK(mkdtemp(dir) != NULL);
	unsigned made = 0;
	for (unsigned i = 0; i <= KSERIES_PATCHES_MAX; i++) {
		snprintf(p, sizeof(p), "%s/%05u.patch", dir, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		made += fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	T_EQ_INT(made, KSERIES_PATCHES_MAX + 1);
	T_EQ_INT(load(dir, NULL, &s, &err), -EFBIG);
	T_CHECK(has(err.buf, ": 10001 .patch files, more than 10000, the cap on a series: refused"));
	util_remove_tree(dir);
	sb_free(&text);
	sb_free(&err);
}

int main(void)
{
	test_nul();
	test_sources();
	test_gz_caps();
	test_patch_cap();
	return t_done("test_series");
}
