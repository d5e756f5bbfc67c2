/* kernels/: mbox splitting, subject tags, which version is taken and that
 * it is one author's, cover letters; lore archives (https only, a local
 * one, a gzip bomb at the cap); sha256 against known digests; the bzImage
 * header reader; krun's child signal mask, its cancel check and its drop
 * to an unprivileged user; the build user's directories. */
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "kernels/series.h"
#include "kernels/sha256.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define DATA "tests/data/kernels/"

/* kseries_load's message, put in err as each check reads it. */
static int load_from(const char *name, unsigned version, const char *archive, struct kseries *s, char *err, size_t len)
{
	struct strbuf sb = { 0 };
	int r = kseries_load(name, version, archive, s, &sb);
	snprintf(err, len, "%s", sb.len ? sb.buf : "");
	sb_free(&sb);
	return r;
}

static int load(const char *name, struct kseries *s, char *err, size_t len)
{
	return load_from(name, 0, NULL, s, err, len);
}

static int load_v(const char *name, unsigned version, struct kseries *s, char *err, size_t len)
{
	return load_from(name, version, NULL, s, err, len);
}

static int parse(const char *text, size_t n, const char *name, const char *anchor, struct kseries *s, char *err, size_t len)
{
	struct strbuf sb = { 0 };
	int r = kseries_parse(text, n, name, 0, anchor, s, &sb);
	snprintf(err, len, "%s", sb.len ? sb.buf : "");
	sb_free(&sb);
	return r;
}

static bool has(const char *err, const char *what)
{
	if (strstr(err, what))
		return true;
	fprintf(stderr, "  \"%s\" is not in: %s\n", what, err);
	return false;
}

static void test_subjects(void)
{
	unsigned v, i, n;
	const char *title;
	T_CHECK(kseries_parse_subject("[PATCH v2 1/2] mm: x", &v, &i, &n, &title));
	T_EQ_INT(v, 2);
	T_EQ_INT(i, 1);
	T_EQ_INT(n, 2);
	T_EQ_STR(title, "mm: x");
	T_CHECK(kseries_parse_subject("[RFC PATCH net-next v10 03/12] net: y", &v, &i, &n, &title));
	T_EQ_INT(v, 10);
	T_EQ_INT(i, 3);
	T_EQ_INT(n, 12);
	T_EQ_STR(title, "net: y");
	T_CHECK(kseries_parse_subject("[RFC][PATCH 2/3] z", &v, &i, &n, &title));
	T_EQ_INT(v, 1);
	T_EQ_INT(i, 2);
	T_CHECK(kseries_parse_subject("[PATCH] one", &v, &i, &n, &title));
	T_EQ_INT(i, 0);
	T_EQ_STR(title, "one");
	T_CHECK(!kseries_parse_subject("mm: no tag", &v, &i, &n, &title));
}

/* Two versions: refused without vN, listing both; v2 taken when asked. */
static void test_thread(void)
{
	struct kseries s;
	char err[4096] = "";
	T_EQ_INT(load(DATA "thread-v1-v2.mbox", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "more than one version") && has(err, "v1: 2 patches and a cover letter from A Developer <dev@example.org>") &&
		has(err, "v2: 2 patches and a cover letter from A Developer <dev@example.org>") && has(err, "series = ... vN"));
	int r = load_v(DATA "thread-v1-v2.mbox", 2, &s, err, sizeof(err));
	T_EQ_INT(r, 0);
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	T_EQ_INT(s.version, 2);
	T_EQ_INT(s.n, 2);
	T_EQ_STR(s.v[0].message_id, "v2-1@x");
	T_EQ_STR(s.v[1].message_id, "v2-2@x");
	T_EQ_STR(s.v[0].title, "mm: first");
	T_EQ_STR(s.v[1].subject, "[PATCH v2 2/2] mm: second, folded");
	T_EQ_STR(s.author, "A Developer <dev@example.org>");
	T_EQ_INT(strlen(s.hash), 64);
	kseries_free(&s);
	T_EQ_INT(load_v(DATA "thread-v1-v2.mbox", 1, &s, err, sizeof(err)), 0);
	T_CHECK(s.version == 1 && s.n == 2 && strcmp(s.v[0].message_id, "v1-1@x") == 0);
	kseries_free(&s);
}

/* An injected [PATCH v99 1/2] and a second v2 2/2 from another sender. */
static void test_injected(void)
{
	const char *f = DATA "thread-injected.mbox";
	struct kseries s;
	char err[4096] = "";
	/* newest-wins would take Mallory's v99: refused, every version and sender named */
	T_EQ_INT(load(f, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "more than one version") && has(err, "v1: 2 patches and a cover letter from A Developer <dev@example.org>") &&
		has(err, "v2: 3 patches and a cover letter from A Developer <dev@example.org>, Mallory <mallory@evil.example>") &&
		has(err, "v99: 1 patch from Mallory <mallory@evil.example>"));
	/* v2 has a patch number twice and a patch from another sender: both named */
	T_EQ_INT(load_v(f, 2, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "v2 of the series is not one author's") &&
		has(err, "\"[PATCH v2 2/2] mm: second, better\" <evil-2@x> from Mallory <mallory@evil.example> is not from A Developer <dev@example.org>, the sender of its cover letter") &&
		has(err, "two patches are numbered 2/2: \"[PATCH v2 2/2] mm: second\" <v2-2@x> from A Developer <dev@example.org> and \"[PATCH v2 2/2] mm: second, better\" <evil-2@x>"));
	/* the message a lore: source names picks its version: the same refusal */
	char err2[4096] = "";
	char *text = NULL;
	size_t len = 0;
	T_CHECK(util_read_file(f, &text, &len) == 0);
	T_EQ_INT(parse(text, len, "lore:v2-0@x", "v2-0@x", &s, err2, sizeof(err2)), -EINVAL);
	T_CHECK(has(err2, "v2 of the series is not one author's"));
	/* v1 is the author's alone */
	int r = parse(text, len, "lore:v1-0@x", "v1-0@x", &s, err2, sizeof(err2));
	T_EQ_INT(r, 0);
	if (r == 0) {
		T_CHECK(s.version == 1 && s.n == 2 && strcmp(s.author, "A Developer <dev@example.org>") == 0);
		kseries_free(&s);
	}
	free(text);
	T_EQ_INT(load_v(f, 1, &s, err, sizeof(err)), 0);
	T_CHECK(s.n == 2 && strcmp(s.v[1].message_id, "v1-2@x") == 0);
	kseries_free(&s);
	/* v99 chosen: Mallory's own, but not whole */
	T_EQ_INT(load_v(f, 99, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "v99 of the series has 1 of its 2 patches: patch 2/2 is missing"));
	T_EQ_INT(load_v(f, 5, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "the thread has no patches of v5; it has v1: ") && has(err, "v99: 1 patch from Mallory"));
}

/* One version, a patch from someone else (a sender compared by address,
 * case aside). */
static void test_foreign(void)
{
	struct kseries s;
	char err[4096] = "";
	T_EQ_INT(load(DATA "thread-foreign.mbox", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "\"[PATCH 2/2] mm: second\" <f-2@x> from Dev Impostor <other@example.net> is not from A Developer <dev@example.org>, the sender of its cover letter"));
	T_CHECK(!strstr(err, "<f-1@x>")); /* DEV@Example.ORG is dev@example.org */
}

static void test_errors(void)
{
	struct kseries s;
	char err[512] = "";
	T_EQ_INT(load(DATA "empty.mbox", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "empty.mbox: empty mbox") != NULL);
	T_EQ_INT(load(DATA "cover-only.mbox", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "only a cover letter") && strstr(err, "[PATCH v3 0/4]"));
	T_EQ_INT(load(DATA "gap.mbox", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "patch 2/3 is missing") != NULL);
	T_EQ_INT(load(DATA "no-such.mbox", &s, err, sizeof(err)), -ENOENT);
	T_CHECK(load(DATA "single.mbox", &s, err, sizeof(err)) == 0 && s.n == 1);
	if (s.n == 1)
		kseries_free(&s);
	/* a directory of .patch files: none here */
	T_EQ_INT(load("tests/unit", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(strstr(err, "no .patch files") != NULL);
}

/* The seed postings' backports to linux-source-6.12 (000, 002, 003 and
 * 004): each is one author's series, numbered without gaps, with the
 * posting's titles, and every patch carries its backport note. */
static void test_backports(void)
{
	static const struct {
		const char *file, *author;
		size_t n;
		const char *titles[5];
	} b[] = {
		{ "003-shmem-batch-6.12.mbox", "Qiliang Yuan <odys.yuan@gmail.com>", 1, { "mm/shmem: remove truncated folios from the page cache in batches" } },
		{ "004-lru-drain-6.12.mbox",
		  "\"Barry Song (Xiaomi)\" <baohua@kernel.org>",
		  3,
		  { "mm: avoid unnecessary lru drain for wp_can_reuse_anon_folio()",
		    "mm: entirely remove lru_add_drain in do_swap_page", "mm: try to free swapcache for non-LRU folios" } },
		{ "000-batch-tlb-flush-6.12.mbox",
		  "Zhang Peng <bruzzhang@tencent.com>",
		  5,
		  { "mm/vmscan: introduce folio_activate_locked() helper", "mm/vmscan: extract folio reclaim freeing from shrink_folio_list()",
		    "mm/vmscan: extract folio pageout from shrink_folio_list()", "mm/vmscan: extract folio unmap logic into folio_try_unmap()",
		    "mm/vmscan: batch dirty TLB flushes before pageout" } },
		{ "002-zswap-dropbehind-6.12.mbox",
		  "Alexandre Ghiti <alex@ghiti.fr>",
		  2,
		  { "mm: zswap: free synchronous-IO writeback folios directly", "mm: zswap: deferred dropbehind free of writeback folios" } },
	};
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		struct kseries s;
		char path[256], err[4096] = "";
		snprintf(path, sizeof(path), DATA "%s", b[i].file);
		int r = load(path, &s, err, sizeof(err));
		T_EQ_INT(r, 0);
		if (r < 0) {
			fprintf(stderr, "  %s: %s\n", b[i].file, err);
			continue;
		}
		T_EQ_INT(s.n, b[i].n);
		T_EQ_STR(s.author, b[i].author);
		for (size_t k = 0; k < s.n && k < b[i].n; k++) {
			T_EQ_STR(s.v[k].title, b[i].titles[k]);
			T_CHECK(strstr(s.v[k].text, "\n[ kab test backport to linux-source-6.12: ") != NULL);
		}
		kseries_free(&s);
	}
}

static void write_gz(const char *path, const char *text, size_t len, size_t zeros)
{
	static const char zero[65536];
	gzFile g = gzopen(path, "wb9");
	T_CHECK(g != NULL);
	if (!g)
		return;
	if (len)
		T_CHECK(gzwrite(g, text, (unsigned)len) == (int)len);
	for (size_t done = 0; done < zeros; done += sizeof(zero))
		gzwrite(g, zero, sizeof(zero));
	gzclose(g);
}

static void archive_thread(const char *dir, const char *id, const char *mbox, size_t zeros)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, id);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/t.mbox.gz", dir, id);
	char *text = NULL;
	size_t len = 0;
	if (mbox)
		T_CHECK(util_read_file(mbox, &text, &len) == 0);
	write_gz(path, text, len, zeros);
	free(text);
}

/* archive = https:// or a local directory; a local thread, one of two
 * gzip members, a bomb refused at the cap, a bad message id. */
static void test_archives(void)
{
	char why[1024] = "";
	T_CHECK(kseries_archive_ok("https://lore.kernel.org/all", why, sizeof(why)));
	T_CHECK(kseries_archive_ok("/srv/lore", why, sizeof(why)));
	T_CHECK(!kseries_archive_ok("http://lore.kernel.org/all", why, sizeof(why)) && has(why, "is plain http"));
	T_CHECK(!kseries_archive_ok("ftp://x/y", why, sizeof(why)) && has(why, "only over https"));
	T_CHECK(!kseries_archive_ok("lore", why, sizeof(why)) && has(why, "neither an https:// URL nor an absolute path"));

	char dir[] = "/tmp/kab-test-lore.XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	struct kseries s;
	char err[4096] = "";
	archive_thread(dir, "good@x", DATA "single.mbox", 0);
	T_EQ_INT(load_from("lore:good@x", 0, dir, &s, err, sizeof(err)), 0);
	T_CHECK(s.n == 1 && strcmp(s.v[0].message_id, "one@x") == 0);
	kseries_free(&s);
	T_EQ_INT(load_from("lore:<good@x>", 0, dir, &s, err, sizeof(err)), 0);
	kseries_free(&s);

	/* two gzip members, as a concatenation of .gz files is */
	archive_thread(dir, "two@x", DATA "single.mbox", 0);
	char one[4096], two[4096];
	snprintf(one, sizeof(one), "%s/two@x/t.mbox.gz", dir);
	snprintf(two, sizeof(two), "%s/two@x/second.gz", dir);
	char *v1 = NULL, *gz = NULL;
	size_t n1 = 0, ngz = 0;
	T_CHECK(util_read_file(DATA "thread-foreign.mbox", &v1, &n1) == 0);
	write_gz(two, v1, n1, 0);
	T_CHECK(util_read_file(two, &gz, &ngz) == 0);
	int fd = open(one, O_WRONLY | O_APPEND);
	T_CHECK(fd >= 0 && write(fd, gz, ngz) == (ssize_t)ngz);
	close(fd);
	T_EQ_INT(load_from("lore:two@x", 0, dir, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "<f-2@x> from Dev Impostor")); /* the second member was read */
	free(v1);
	free(gz);

	/* 64 MiB and a little more of zeros, in a few dozen KiB */
	archive_thread(dir, "bomb@x", NULL, KSERIES_MBOX_MAX + 65536);
	char bomb[4096];
	struct stat st;
	snprintf(bomb, sizeof(bomb), "%s/bomb@x/t.mbox.gz", dir);
	T_CHECK(stat(bomb, &st) == 0 && st.st_size < (1 << 20));
	double t0 = util_mono_now();
	T_EQ_INT(load_from("lore:bomb@x", 0, dir, &s, err, sizeof(err)), -EFBIG);
	T_CHECK(has(err, "bomb@x/t.mbox.gz decompresses to more than 64 MiB, the cap on a thread's mbox: refused"));
	T_CHECK(util_mono_now() - t0 < 5);

	T_EQ_INT(load_from("lore:none@x", 0, dir, &s, err, sizeof(err)), -ENOENT);
	T_CHECK(has(err, "the local archive has no such thread"));
	T_EQ_INT(load_from("lore:../good@x", 0, dir, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "no '/' for a local archive"));
	T_EQ_INT(load_from("lore:good@x", 0, "http://127.0.0.1:1/", &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "lore:good@x: archive http://127.0.0.1:1/ is plain http"));
	/* cut short */
	snprintf(one, sizeof(one), "%s/good@x/t.mbox.gz", dir);
	T_CHECK(truncate(one, 20) == 0);
	T_EQ_INT(load_from("lore:good@x", 0, dir, &s, err, sizeof(err)), -EINVAL);
	T_CHECK(has(err, "does not decompress"));
	util_remove_tree(dir);
}

static void test_sha256(void)
{
	char hex[65];
	sha256_buf("", 0, hex);
	T_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_buf("abc", 3, hex);
	T_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_buf(two, strlen(two), hex);
	T_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* FIPS 180-2's million a's: from a file (read in pieces), and fed in
	 * pieces that cut blocks */
	static const char million[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	char path[] = "/tmp/kab-test-sha256.XXXXXX";
	int fd = mkstemp(path);
	T_CHECK(fd >= 0);
	if (fd >= 0) {
		char a[1000];
		memset(a, 'a', sizeof(a));
		bool wrote = true;
		for (int i = 0; i < 1000; i++)
			wrote &= write(fd, a, sizeof(a)) == (ssize_t)sizeof(a);
		T_CHECK(wrote);
		close(fd);
		T_EQ_INT(sha256_file(path, hex), 0);
		T_EQ_STR(hex, million);
		unlink(path);
		struct sha256_ctx c;
		sha256_init(&c);
		for (int i = 0; i < 1000; i++)
			sha256_update(&c, sizeof(a), (const uint8_t *)a);
		sha256_hex(&c, hex);
		T_EQ_STR(hex, million);
	}
	T_EQ_INT(sha256_file("/nonexistent/kab-sha256", hex), -ENOENT);
}

static void test_image(void)
{
	char path[] = "/tmp/kab-test-bzimage.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return;
	unsigned char img[0x400] = { 0 };
	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00; /* version at 0x200 + 0x100 */
	img[0x20f] = 0x01;
	memcpy(img + 0x300, "6.1.0-kab7 (root@x) #1", 22);
	T_CHECK(write(fd, img, sizeof(img)) == (ssize_t)sizeof(img));
	close(fd);
	char v[128];
	T_EQ_INT(kbuild_image_version(path, v, sizeof(v)), 0);
	T_EQ_STR(v, "6.1.0-kab7 (root@x) #1");
	T_EQ_INT(kbuild_image_version("/etc/hostname", v, sizeof(v)), -EINVAL);
	unlink(path);
}

static int cancel_calls;
static const char *cancel_pidfile;
static double cancel_first;
/* Cancels at the third check or later, once the script has started its
 * grandchild (its pid is in cancel_pidfile): the test, not a race with the
 * shell, says when. 10 s after the first check it cancels anyway, saying
 * what it saw (the checks after krun then fail). */
static bool cancel_after_two(void)
{
	if (cancel_calls++ == 0)
		cancel_first = util_mono_now();
	if (cancel_calls <= 2)
		return false;
	struct stat st;
	if (cancel_pidfile && stat(cancel_pidfile, &st) == 0 && st.st_size > 0)
		return true;
	if (util_mono_now() - cancel_first < 10.0)
		return false;
	fprintf(stderr, "timed out after 10 s waiting for the script to write its grandchild's pid to %s (%d cancel checks): cancelling\n",
		cancel_pidfile ? cancel_pidfile : "(no file)", cancel_calls);
	return true;
}

/* The child runs with nothing blocked though its parent blocks SIGTERM
 * (kabd blocks it in every thread); a cancel kills the child's whole
 * process group, a grandchild too, and krun says -ECANCELED. */
static void test_krun_signals(void)
{
	sigset_t term, old;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);

	struct strbuf out = { 0 };
	char *mask[] = { "sh", "-c", "grep '^SigBlk:' /proc/self/status", NULL };
	T_CHECK(krun_ok(mask, NULL, &out));
	T_EQ_STR(out.buf, "SigBlk:\t0000000000000000");
	sb_free(&out);
	/* kabd ignores SIGPIPE; make must still die of it */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	char *pipe_ign[] = { "sh", "-c", "grep '^SigIgn:' /proc/self/status", NULL };
	T_CHECK(krun_ok(pipe_ign, NULL, &out));
	T_CHECK(out.buf && (strtoull(out.buf + strlen("SigIgn:"), NULL, 16) & (1ull << (SIGPIPE - 1))) == 0);
	sb_free(&out);
	sigaction(SIGPIPE, &old_pipe, NULL);

	char pidfile[] = "/tmp/kab-test-krun.XXXXXX";
	int fd = mkstemp(pidfile);
	T_CHECK(fd >= 0);
	close(fd);
	char script[256];
	snprintf(script, sizeof(script), "sleep 60 & echo $! >%s; wait", pidfile);
	char *argv[] = { "sh", "-c", script, NULL };
	struct krun o = { .stdout_fd = -1, .log_fd = -1 };
	int status = 0;
	cancel_pidfile = pidfile;
	krun_set_cancel(cancel_after_two);
	double t0 = util_mono_now();
	int r = krun(argv, &o, &status);
	double took = util_mono_now() - t0;
	krun_set_cancel(NULL);
	T_EQ_INT(r, -ECANCELED);
	T_CHECK(cancel_calls >= 3);
	T_CHECK(took < 10.0); /* the child would sleep 60 s */
	T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	char *pid_text = NULL;
	T_CHECK(util_read_line(pidfile, &pid_text) == 0);
	pid_t grandchild = pid_text ? (pid_t)strtol(pid_text, NULL, 10) : 0;
	T_CHECK(grandchild > 0);
	/* the grandchild got SIGTERM with its group; wait (5 s at most) for
	 * init to reap it, and say what it is when it is not gone */
	bool gone = false;
	for (double end = util_mono_now() + 5.0; grandchild > 0 && !gone;) {
		gone = kill(grandchild, 0) < 0 && errno == ESRCH;
		if (gone)
			break;
		if (util_mono_now() >= end) {
			char stat_path[64], *stat_line = NULL;
			snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)grandchild);
			util_read_line(stat_path, &stat_line);
			fprintf(stderr, "timed out after 5 s waiting for the grandchild %d to be gone: /proc/%d/stat: %s\n",
				(int)grandchild, (int)grandchild, stat_line ? stat_line : "(unreadable)");
			free(stat_line);
			break;
		}
		usleep(100 * 1000);
	}
	T_CHECK(gone);
	free(pid_text);
	unlink(pidfile);

	/* no check set: the same command runs to its end */
	char *quick[] = { "sh", "-c", "exit 3", NULL };
	T_EQ_INT(krun(quick, &o, &status), 0);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static bool nobody(struct krun_user *u, const char *what)
{
	struct passwd *pw = getpwnam("nobody");
	if (!pw || geteuid() != 0) {
		t_skip(what, pw ? "needs root (it drops to the user nobody)" : "no user nobody");
		return false;
	}
	*u = (struct krun_user){ .uid = pw->pw_uid, .gid = pw->pw_gid, .name = "nobody", .home = "/nonexistent-kab" };
	return true;
}

/* As root, a child with a user runs as it: ids, no groups, no new
 * privileges, no capabilities, an environment of its own. */
static void test_krun_user(void)
{
	struct krun_user u;
	if (!nobody(&u, "krun as a user"))
		return;
	setenv("KAB_TEST_SECRET", "root's", 1);
	char *env[] = { "KAB_EXTRA=1", NULL };
	char *argv[] = { "sh", "-c", "grep -E '^(Uid|Gid|Groups|NoNewPrivs|CapEff|CapPrm):' /proc/self/status; env | sort", NULL };
	struct strbuf out = { 0 };
	struct krun o = { .user = &u, .env = env };
	T_CHECK(krun_ok_as(argv, &o, &out));
	char want[256];
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u\n", u.uid, u.uid, u.uid, u.uid);
	T_CHECK(out.buf && has(out.buf, want));
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u\n", u.gid, u.gid, u.gid, u.gid);
	T_CHECK(out.buf && has(out.buf, want));
	const char *groups = out.buf ? strstr(out.buf, "Groups:") : NULL;
	T_CHECK(groups && strcspn(groups, "0123456789") > strcspn(groups, "\n")); /* none */
	T_CHECK(out.buf && has(out.buf, "NoNewPrivs:\t1") &&
		has(out.buf, "CapEff:\t0000000000000000") && has(out.buf, "CapPrm:\t0000000000000000"));
	T_CHECK(out.buf && has(out.buf, "\nHOME=/nonexistent-kab\n") && has(out.buf, "\nKAB_EXTRA=1\n") &&
		has(out.buf, "\nLC_ALL=C\n") && has(out.buf, "\nPATH=" KRUN_USER_PATH "\n") && has(out.buf, "\nUSER=nobody"));
	T_CHECK(out.buf && !strstr(out.buf, "KAB_TEST_SECRET"));
	sb_free(&out);
	unsetenv("KAB_TEST_SECRET");

	/* a parent that is not root cannot drop: -EPERM and nothing runs */
	char marker[64];
	snprintf(marker, sizeof(marker), "/tmp/kab-test-drop.%d", (int)getpid());
	unlink(marker);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(u.gid) < 0 || setuid(u.uid) < 0)
			_exit(2);
		char *touch[] = { "touch", marker, NULL };
		struct strbuf msg = { 0 };
		struct krun o2 = { .stdout_fd = -1, .log_fd = -1, .user = &u, .setup_err = &msg };
		int status;
		int r = krun(touch, &o2, &status);
		_exit(r == -EPERM && msg.buf && strstr(msg.buf, "cannot run touch as nobody") && strstr(msg.buf, "setgroups(0)") ? 0 : 1);
	}
	int status = 0;
	T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_CHECK(access(marker, F_OK) != 0);
	unlink(marker);
}

/* A descriptor of root's open without O_CLOEXEC in kab (a library's, an
 * older open's) reaches no program krun starts: ls of /proc/self/fd in
 * the child lists 0, 1, 2 and the directory ls reads, nothing else; as
 * the build user as well, whose make would otherwise hold it. */
static void test_krun_fds(void)
{
	char secret[] = "/tmp/kab-test-fd.XXXXXX";
	int fd = mkstemp(secret); /* 0600, and no O_CLOEXEC */
	T_CHECK(fd >= 0);
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	T_CHECK(dir >= 0);
	char *ls[] = { "ls", "/proc/self/fd", NULL };
	struct strbuf out = { 0 };
	T_CHECK(krun_ok(ls, NULL, &out));
	T_EQ_STR(out.buf, "0\n1\n2\n3");
	sb_free(&out);
	struct krun_user u;
	if (nobody(&u, "krun's descriptors as a user")) {
		struct krun o = { .user = &u };
		T_CHECK(krun_ok_as(ls, &o, &out));
		T_EQ_STR(out.buf, "0\n1\n2\n3");
		sb_free(&out);
	}
	/* the parent's own are untouched */
	T_CHECK(fcntl(fd, F_GETFD) == 0 && fcntl(dir, F_GETFD) == 0);
	close(dir);
	close(fd);
	unlink(secret);
}

static uid_t owner(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

static void touch_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	T_CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* A tree an earlier kab made as root is given to the build user without
 * following its symlink; what the build made is read back only when it
 * is the user's own regular file; another user's directory is refused. */
static void test_build_dirs(void)
{
	struct krun_user u;
	if (!nobody(&u, "the build user's directories"))
		return;
	char top[] = "/tmp/kab-test-bu.XXXXXX", p[4096], q[4096];
	T_CHECK(mkdtemp(top) != NULL && chmod(top, 0755) == 0);
	struct strbuf err = { 0 };
	snprintf(p, sizeof(p), "%s/secret", top);
	touch_file(p, "root only\n");
	snprintf(p, sizeof(p), "%s/obj", top);
	T_CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/obj/sub", top);
	T_CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/obj/sub/b.o", top);
	touch_file(p, "object\n");
	snprintf(p, sizeof(p), "%s/obj/link", top);
	snprintf(q, sizeof(q), "%s/secret", top);
	T_CHECK(symlink(q, p) == 0);
	snprintf(p, sizeof(p), "%s/obj", top);
	T_EQ_INT(kbuser_own_dir(&u, p, &err), 1);
	T_EQ_INT(kbuser_own_dir(&u, p, &err), 0);
	T_EQ_INT(owner(p), u.uid);
	snprintf(p, sizeof(p), "%s/obj/sub/b.o", top);
	T_EQ_INT(owner(p), u.uid);
	snprintf(p, sizeof(p), "%s/obj/link", top);
	T_EQ_INT(owner(p), u.uid);
	T_EQ_INT(owner(q), 0); /* not through the symlink */

	char *text = NULL;
	size_t len;
	snprintf(p, sizeof(p), "%s/obj/sub/b.o", top);
	T_EQ_INT(kbuser_read_file(&u, p, &text, &len), 0);
	T_CHECK(text && strcmp(text, "object\n") == 0);
	free(text);
	snprintf(p, sizeof(p), "%s/obj/link", top);
	T_EQ_INT(kbuser_read_file(&u, p, &text, &len), -EPERM);
	snprintf(q, sizeof(q), "%s/copy", top);
	T_EQ_INT(kbuser_copy_out(&u, p, q), -EPERM);
	T_CHECK(access(q, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/obj/roots", top);
	touch_file(p, "root's\n");
	T_EQ_INT(kbuser_open(&u, p), -EPERM);
	snprintf(p, sizeof(p), "%s/obj/sub/b.o", top);
	T_EQ_INT(kbuser_copy_out(&u, p, q), 0);
	T_EQ_INT(owner(q), 0);

	/* another user's directory, or a file of another's in root's */
	snprintf(p, sizeof(p), "%s/other", top);
	T_CHECK(mkdir(p, 0755) == 0 && chown(p, 12345, 12345) == 0);
	T_EQ_INT(kbuser_own_dir(&u, p, &err), -EPERM);
	T_CHECK(err.buf && has(err.buf, "belongs to uid 12345, neither root nor the build user nobody"));
	sb_free(&err);
	snprintf(p, sizeof(p), "%s/mixed", top);
	T_CHECK(mkdir(p, 0755) == 0);
	snprintf(q, sizeof(q), "%s/mixed/f", top);
	touch_file(q, "x");
	T_CHECK(chown(q, 12345, 12345) == 0);
	T_EQ_INT(kbuser_own_dir(&u, p, &err), -EPERM);
	T_CHECK(err.buf && has(err.buf, "mixed/f belongs to uid 12345"));
	sb_free(&err);

	snprintf(p, sizeof(p), "%s/new", top);
	T_EQ_INT(kbuser_own_dir(&u, p, &err), 0);
	struct stat st;
	T_CHECK(stat(p, &st) == 0 && st.st_uid == u.uid && (st.st_mode & 07777) == 0755);
	snprintf(p, sizeof(p), "%s/obj", top);
	T_EQ_INT(kbuser_remove(&u, p, &err), 0);
	T_CHECK(access(p, F_OK) != 0);
	sb_free(&err);
	util_remove_tree(top);
}

int main(void)
{
	test_subjects();
	test_thread();
	test_injected();
	test_foreign();
	test_errors();
	test_backports();
	test_archives();
	test_krun_user();
	test_krun_fds();
	test_build_dirs();
	test_sha256();
	test_image();
	test_krun_signals();
	return t_done("test_kernels");
}
