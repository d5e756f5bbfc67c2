/* kab's stdout and stderr when their reader is gone: no SIGPIPE, from any
 * thread; the stream is noticed closed (by a write or by poll) and becomes
 * /dev/null; a report to a closed stdout fails its flush. And what children
 * get: SIGPIPE at its default and nothing blocked. Each case runs in a
 * forked child, whose stderr may be the broken pipe: it answers with its
 * exit status (the number of the first check that failed). */
#include "t.h"
#include "harness/base/output.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIGPIPE_BIT (1ull << (SIGPIPE - 1))

/* fd is a pipe's write end whose read end is closed */
static void broken_pipe_on(int fd)
{
	int p[2];
	if (pipe(p) < 0)
		_exit(100);
	close(p[0]);
	dup2(p[1], fd);
	close(p[1]);
}

static bool is_dev_null(int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat("/dev/null", &b) == 0 && S_ISCHR(a.st_mode) && a.st_rdev == b.st_rdev;
}

/* Runs fn in a child; its exit status, or 200 + the signal that killed it. */
static int in_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

static int log_to_closed_stderr(void)
{
	broken_pipe_on(2);
	if (out_init() < 0)
		return 1;
	char why[96] = "";
	log_info("a line nobody reads");
	if (!out_closed(why, sizeof(why)) || strcmp(why, "standard error: Broken pipe") != 0)
		return 2;
	if (!is_dev_null(2))
		return 3;
	log_error("and the next one goes to /dev/null");
	return 0;
}

/* A write that fails (not poll) marks it: the first thing is a log line. */
static int write_marks_closed(void)
{
	broken_pipe_on(2);
	if (out_init() < 0)
		return 1;
	if (out_write(2, "x\n", 2) != -EPIPE)
		return 2;
	char why[96];
	if (!out_closed(why, sizeof(why)) || strcmp(why, "standard error: Broken pipe") != 0)
		return 3;
	return out_write(2, "y\n", 2) == 0 ? 0 : 4;
}

static void *log_from_thread(void *arg)
{
	for (int i = 0; i < 100; i++)
		log_warn("sampler-like thread, line %d", i);
	return NULL;
}

/* SIGPIPE is thread-directed: a thread's write must not kill the process. */
static int thread_logs_to_closed_stderr(void)
{
	broken_pipe_on(2);
	if (out_init() < 0)
		return 1;
	pthread_t t;
	if (pthread_create(&t, NULL, log_from_thread, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	return out_closed(NULL, 0) ? 0 : 3;
}

/* Nothing written yet: poll sees the reader gone. A pipe with a reader is open. */
static int poll_sees_closed_stdout(void)
{
	int keep[2];
	if (pipe(keep) < 0)
		return 1;
	dup2(keep[1], 2); /* stderr: a pipe whose reader is still there */
	broken_pipe_on(1);
	if (out_init() < 0)
		return 2;
	char why[96];
	if (!out_closed(why, sizeof(why)))
		return 3;
	if (strcmp(why, "standard output: Broken pipe") != 0)
		return 4;
	if (!is_dev_null(1) || is_dev_null(2))
		return 5;
	return 0;
}

static int healthy_streams_stay_open(void)
{
	int a[2], b[2];
	if (pipe(a) < 0 || pipe(b) < 0)
		return 1;
	dup2(a[1], 1);
	dup2(b[1], 2);
	if (out_init() < 0)
		return 2;
	log_info("read by nobody yet, but the reader is there");
	return out_closed(NULL, 0) ? 3 : 0;
}

/* The report after a broken pipe: its flush fails, no SIGPIPE. */
static int report_to_closed_stdout(void)
{
	broken_pipe_on(1);
	if (out_init() < 0)
		return 1;
	for (int i = 0; i < 2000; i++)
		printf("a row of the report %d\n", i);
	if (out_flush(stdout) != -EPIPE)
		return 2;
	if (!out_closed(NULL, 0) || !is_dev_null(1))
		return 3;
	printf("more\n");
	return out_flush(stdout) == 0 ? 0 : 4;
}

/* A run of kab with fd 1 closed: it is opened on /dev/null, not left for
 * the database to take. */
static int closed_fd_reopened(void)
{
	close(1);
	if (out_init() < 0)
		return 1;
	return is_dev_null(1) ? 0 : 2;
}

static void test_streams(void)
{
	T_EQ_INT(in_child(log_to_closed_stderr), 0);
	T_EQ_INT(in_child(write_marks_closed), 0);
	T_EQ_INT(in_child(thread_logs_to_closed_stderr), 0);
	T_EQ_INT(in_child(poll_sees_closed_stdout), 0);
	T_EQ_INT(in_child(healthy_streams_stay_open), 0);
	T_EQ_INT(in_child(report_to_closed_stdout), 0);
	T_EQ_INT(in_child(closed_fd_reopened), 0);
}

/* A line longer than vlog's buffer arrives whole, in one line. */
static void test_long_line(void)
{
	int p[2];
	T_CHECK(pipe(p) == 0);
	int saved = dup(2);
	dup2(p[1], 2);
	char msg[5000];
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	log_info("%s", msg);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	char buf[8192];
	size_t got = 0;
	ssize_t n;
	while ((n = read(p[0], buf + got, sizeof(buf) - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	T_EQ_INT(got, strlen("kab: ") + sizeof(msg) - 1 + 1);
	T_CHECK(got > 0 && buf[got - 1] == '\n');
	T_CHECK(memcmp(buf, "kab: mmm", 8) == 0);
}

/* SigIgn and SigBlk of a child that execs sh, as numbers. */
static void child_sig_masks(bool spawn, unsigned long long *ret_ign, unsigned long long *ret_blk)
{
	int p[2];
	*ret_ign = *ret_blk = ~0ull;
	if (pipe(p) < 0)
		return;
	char *argv[] = { "/bin/sh", "-c", "grep -E '^Sig(Ign|Blk):' /proc/self/status", NULL };
	pid_t pid = -1;
	if (spawn) {
		posix_spawn_file_actions_t fa;
		posix_spawnattr_t attr;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		if (util_spawnattr_init(&attr) == 0) {
			if (posix_spawn(&pid, argv[0], &fa, &attr, argv, NULL) != 0)
				pid = -1;
			posix_spawnattr_destroy(&attr);
		}
		posix_spawn_file_actions_destroy(&fa);
	} else if ((pid = fork()) == 0) {
		util_child_signals();
		dup2(p[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	char buf[256] = "";
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(buf) - 1 && (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	char *ign = strstr(buf, "SigIgn:"), *blk = strstr(buf, "SigBlk:");
	if (ign)
		*ret_ign = strtoull(ign + 7, NULL, 16);
	if (blk)
		*ret_blk = strtoull(blk + 7, NULL, 16);
}

/* kab ignores SIGPIPE and blocks its stop signals; its children get neither. */
static void test_children(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigset_t stop, old_mask;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGCHLD);
	sigprocmask(SIG_BLOCK, &stop, &old_mask);
	for (int spawn = 0; spawn <= 1; spawn++) {
		unsigned long long ignored, blocked;
		child_sig_masks(spawn, &ignored, &blocked);
		T_EQ_INT(ignored & SIGPIPE_BIT, 0);
		T_EQ_INT(blocked, 0);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
}

int main(void)
{
	test_streams();
	test_long_line();
	test_children();
	return t_done("output");
}
