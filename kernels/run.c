/* Child processes of a kernel build. */
#include "run.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* environ with LC_ALL=C, so tool messages parse the same everywhere. */
static char **c_locale_env(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LC_ALL=", 7) != 0)
			env[k++] = environ[i];
	env[k++] = "LC_ALL=C";
	env[k] = NULL;
	return env;
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

int krun(char *const argv[], const struct krun *o, int *ret_status)
{
	_cleanup_free_ char **env = c_locale_env();
	if (!env)
		return -ENOMEM;
	int p[2], e[2] = { -1, -1 };
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	/* the setup hook's message comes back on its own pipe, so it cannot
	 * be mistaken for the program's output; exec closes it */
	if (o->child_setup && pipe2(e, O_CLOEXEC) < 0) {
		int r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(p[0]);
		close(p[1]);
		if (e[0] >= 0) {
			close(e[0]);
			close(e[1]);
		}
		return r;
	}
	bool (*cancelled)(void) = cancel_check;
	if (pid == 0) {
		/* kabd blocks its stop signals in every thread and ignores
		 * SIGPIPE; make and the compilers must still die of them */
		util_child_signals();
		if (cancelled)
			setpgid(0, 0);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(o->stdout_fd >= 0 ? o->stdout_fd : p[1], 1) < 0 ||
		    dup2(p[1], 2) < 0)
			_exit(127);
		if (o->cwd && chdir(o->cwd) < 0) {
			dprintf(2, "cannot enter %s: %s\n", o->cwd, strerror(errno));
			_exit(127);
		}
		if (o->child_setup && o->child_setup(o->setup_ctx, e[1]) < 0)
			_exit(127);
		environ = env;
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (e[1] >= 0)
		close(e[1]);
	if (cancelled)
		setpgid(pid, pid); /* both sides, so the group exists before any kill */
	struct strbuf pending = { 0 };
	char buf[8192];
	double killed_at = 0;
	bool sent_kill = false;
	for (;;) {
		if (cancelled) {
			struct pollfd pfd = { .fd = p[0], .events = POLLIN };
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
		ssize_t n = read(p[0], buf, sizeof(buf));
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
	close(p[0]);
	/* the child has exited or exec'd: the pipe is at its end */
	for (ssize_t n; e[0] >= 0 && (n = read(e[0], buf, sizeof(buf))) != 0;) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (o->setup_err)
			sb_append(o->setup_err, buf, (size_t)n);
	}
	if (e[0] >= 0)
		close(e[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	if (killed_at) {
		kill(-pid, SIGKILL); /* what is left of the group */
		return -ECANCELED;
	}
	return 0;
}

bool krun_ok(char *const argv[], const char *cwd, struct strbuf *out)
{
	struct krun o = { .cwd = cwd, .stdout_fd = -1, .log_fd = -1, .capture = out };
	int status;
	if (krun(argv, &o, &status) < 0)
		return false;
	while (out && out->len && (out->buf[out->len - 1] == '\n' || out->buf[out->len - 1] == '\r'))
		out->buf[--out->len] = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

