/* kernels/: mbox splitting, subject tags, newest version, cover letters;
 * sha256 against known digests; the bzImage header reader; krun's child
 * signal mask and its cancel check. */
#include "build.h"
#include "run.h"
#include "series.h"
#include "sha256.h"
#include "t.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA "tests/data/kernels/"

static int load(const char *name, struct kseries *s, char *err, size_t len)
{
	return kseries_load(name, NULL, "/tmp", s, err, len);
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

static void test_thread(void)
{
	struct kseries s;
	char err[512] = "";
	int r = load(DATA "thread-v1-v2.mbox", &s, err, sizeof(err));
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
	T_EQ_INT(strlen(s.hash), 64);
	kseries_free(&s);
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

int main(void)
{
	test_subjects();
	test_thread();
	test_errors();
	test_sha256();
	test_image();
	test_krun_signals();
	return t_done("test_kernels");
}
