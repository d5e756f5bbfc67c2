/* Child processes of a kernel build. */
#include "kernels/run.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define KRUN_POLL_MS 500
#define KRUN_KILL_AFTER_S 10.0

static _Thread_local bool (*cancel_check)(void); /* the executor thread's own */

void krun_set_cancel(bool (*cancelled)(void))
{
	cancel_check = cancelled;
}

bool krun_cancel_requested(void)
{
	return cancel_check && cancel_check();
}

static void free_env(char ***env)
{
	for (char **e = *env; e && *e; e++)
		free(*e);
	free(*env);
}
#define _cleanup_env_ _cleanup_(free_env)

static int env_add(char **env, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int env_add(char **env, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&env[*n], fmt, ap);
	va_end(ap);
	if (r < 0) {
		env[*n] = NULL;
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* The child's environment, every entry its own copy: kab's with LC_ALL=C,
 * so tool messages parse the same everywhere; for a child that drops to a
 * user, only PATH, HOME, USER, LOGNAME and LC_ALL=C, as nothing of root's
 * environment is for it. Then o->env. */
static char **child_env(const struct krun *o)
{
	size_t n = 0, extra = 0;
	while (environ[n])
		n++;
	while (o->env && o->env[extra])
		extra++;
	char **env = calloc(n + extra + 6, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	int r = 0;
	if (o->user) {
		r |= env_add(env, &k, "PATH=%s", KRUN_USER_PATH);
		r |= env_add(env, &k, "HOME=%s", o->user->home);
		r |= env_add(env, &k, "USER=%s", o->user->name);
		r |= env_add(env, &k, "LOGNAME=%s", o->user->name);
	} else {
		for (size_t i = 0; i < n; i++)
			if (strncmp(environ[i], "LC_ALL=", 7) != 0)
				r |= env_add(env, &k, "%s", environ[i]);
	}
	r |= env_add(env, &k, "LC_ALL=C");
	for (size_t i = 0; i < extra; i++)
		r |= env_add(env, &k, "%s", o->env[i]);
	if (r < 0) {
		free_env(&env);
		return NULL;
	}
	return env;
}

/* A child that could not drop to its user says why on the error pipe and
 * exits with this status (a program's own 126 comes with no message). */
#define KRUN_EXIT_DROP 126

static int child_fail(int fd, const char *what)
{
	int e = errno;
	dprintf(fd, "%s: %s", what, strerror(e));
	return -1;
}

/* In the child: leaves root for u, for good. System calls only. */
static int drop_to(const struct krun_user *u, int err_fd)
{
	if (setgroups(0, NULL) < 0)
		return child_fail(err_fd, "setgroups(0)");
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return child_fail(err_fd, "setresgid");
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return child_fail(err_fd, "setresuid");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return child_fail(err_fd, "prctl(PR_SET_NO_NEW_PRIVS)");
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return child_fail(err_fd, "getresuid");
	errno = EPERM;
	if (ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid || eg != u->gid || sg != u->gid)
		return child_fail(err_fd, "the ids did not change");
	if (getgroups(0, NULL) != 0)
		return child_fail(err_fd, "supplementary groups are left");
	if (u->uid != 0 && setuid(0) == 0)
		return child_fail(err_fd, "root can be regained");
	return 0;
}

/* In the child, after fork: never returns. */
static void child(char *const argv[], const struct krun *o, char **env, bool group, int out_fd, int err_fd)
{
	/* kabd blocks its stop signals in every thread and ignores
	 * SIGPIPE; make and the compilers must still die of them */
	util_child_signals();
	if (group)
		setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(o->stdout_fd >= 0 ? o->stdout_fd : out_fd, 1) < 0 ||
	    dup2(out_fd, 2) < 0)
		_exit(127);
	if (o->child_setup && o->child_setup(o->setup_ctx, err_fd) < 0)
		_exit(127);
	if (o->user && drop_to(o->user, err_fd) < 0)
		_exit(KRUN_EXIT_DROP);
	if (o->cwd && chdir(o->cwd) < 0) {
		dprintf(2, "cannot enter %s: %s\n", o->cwd, strerror(errno));
		_exit(127);
	}
	environ = env;
	/* make, git and the compilers get none of root's descriptors but 0,
	 * 1 and 2: not kabd's, not a library's, not the /dev/null above */
	util_child_fds();
	execvp(argv[0], argv);
	dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static void feed_lines(const struct krun *o, struct strbuf *pending, const char *data, size_t n)
{
	if (!o->line)
		return;
	sb_append(pending, data, n);
	char *start = pending->buf, *nl;
	while (start && (nl = memchr(start, '\n', pending->len - (size_t)(start - pending->buf)))) {
		*nl = 0;
		o->line(o->ctx, start);
		start = nl + 1;
	}
	size_t rest = pending->len - (size_t)(start - pending->buf);
	memmove(pending->buf, start, rest);
	pending->len = rest;
	pending->buf[rest] = 0;
}

static void close_pair(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* Reads the child's output until its end (or a cancel has killed it);
 * true when the cancel check stopped it. */
static bool pump(const struct krun *o, pid_t pid, int fd, bool (*cancelled)(void))
{
	struct strbuf pending = { 0 };
	char buf[8192];
	double killed_at = 0;
	bool sent_kill = false;
	for (;;) {
		if (cancelled) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			int pr = poll(&pfd, 1, KRUN_POLL_MS);
			if (pr < 0 && errno != EINTR)
				break;
			if (!killed_at && cancelled()) {
				killed_at = util_mono_now();
				kill(-pid, SIGTERM);
			} else if (killed_at && !sent_kill && util_mono_now() - killed_at > KRUN_KILL_AFTER_S) {
				sent_kill = true;
				kill(-pid, SIGKILL);
			} else if (sent_kill && util_mono_now() - killed_at > 2 * KRUN_KILL_AFTER_S) {
				break; /* something outside the group holds the pipe */
			}
			if (pr <= 0)
				continue;
		}
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (o->log_fd >= 0 && write(o->log_fd, buf, (size_t)n) < 0)
			log_warn("cannot write the build log: %s", strerror(errno));
		if (o->capture)
			sb_append(o->capture, buf, (size_t)n);
		feed_lines(o, &pending, buf, (size_t)n);
	}
	if (o->line && pending.len)
		o->line(o->ctx, pending.buf);
	sb_free(&pending);
	return killed_at > 0;
}

/* What the child said on the error pipe before exec (which closes it). */
static void read_child_error(int fd, struct strbuf *out)
{
	char buf[1024];
	for (ssize_t n; (n = read(fd, buf, sizeof(buf))) != 0;) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		sb_append(out, buf, (size_t)n);
	}
}

/* Where a failed drop is told: the setup message, else the output
 * collected, else kab's log; and the log file. */
static void report_drop_failure(const char *prog, const struct krun *o, const char *why)
{
	char msg[1024];
	snprintf(msg, sizeof(msg), "cannot run %s as %s (uid %u): %s", prog, o->user ? o->user->name : "?",
		 o->user ? (unsigned)o->user->uid : 0, why);
	if (o->log_fd >= 0)
		dprintf(o->log_fd, "%s\n", msg);
	if (o->setup_err)
		sb_puts(o->setup_err, msg);
	else if (o->capture)
		sb_puts(o->capture, msg);
	else
		log_error("%s", msg);
}

int krun(char *const argv[], const struct krun *o, int *ret_status)
{
	_cleanup_env_ char **env = child_env(o);
	if (!env)
		return -ENOMEM;
	/* what the setup hook or the drop to the user says comes back on a
	 * pipe of its own, so it cannot be mistaken for the program's output */
	int p[2] = { -1, -1 }, e[2] = { -1, -1 };
	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		int r = -errno;
		close_pair(p);
		return r;
	}
	bool (*cancelled)(void) = cancel_check;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close_pair(p);
		close_pair(e);
		return r;
	}
	if (pid == 0)
		child(argv, o, env, cancelled != NULL, p[1], e[1]);
	close(p[1]);
	close(e[1]);
	if (cancelled)
		setpgid(pid, pid); /* both sides, so the group exists before any kill */
	bool killed = pump(o, pid, p[0], cancelled);
	close(p[0]);
	struct strbuf why = { 0 };
	read_child_error(e[0], &why);
	close(e[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			sb_free(&why);
			return -errno;
		}
	*ret_status = status;
	bool drop_failed = why.len && WIFEXITED(status) && WEXITSTATUS(status) == KRUN_EXIT_DROP;
	if (drop_failed)
		report_drop_failure(argv[0], o, why.buf);
	else if (why.len && o->setup_err)
		sb_append(o->setup_err, why.buf, why.len);
	sb_free(&why);
	if (killed) {
		kill(-pid, SIGKILL); /* what is left of the group */
		return -ECANCELED;
	}
	return drop_failed ? -EPERM : 0;
}

bool krun_ok_as(char *const argv[], const struct krun *base, struct strbuf *out)
{
	struct krun o = { .cwd = base ? base->cwd : NULL, .stdout_fd = -1, .log_fd = -1, .capture = out,
			  .user = base ? base->user : NULL, .env = base ? base->env : NULL };
	int status;
	if (krun(argv, &o, &status) < 0)
		return false;
	while (out && out->len && (out->buf[out->len - 1] == '\n' || out->buf[out->len - 1] == '\r'))
		out->buf[--out->len] = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool krun_ok(char *const argv[], const char *cwd, struct strbuf *out)
{
	struct krun o = { .cwd = cwd };
	return krun_ok_as(argv, &o, out);
}
