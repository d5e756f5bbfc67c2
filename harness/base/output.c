/* kab's standard output and error: broken streams noticed, never fatal. */
#include "harness/base/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define OUT_FULL_WAIT_MS 1000

/* the errno that closed fd 1 and fd 2; 0 while open. Any thread may log. */
static atomic_int closed_err[3];

static const char *const stream_names[3] = { "standard input", "standard output", "standard error" };

/* The first failure wins; the stream becomes /dev/null, so later writes
 * (kab's, and those of children that inherit it) go nowhere instead of
 * failing on every line. */
static void mark_closed(int fd, int err)
{
	int none = 0;
	if (fd < 1 || fd > 2 || err == 0 || !atomic_compare_exchange_strong(&closed_err[fd], &none, err))
		return;
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0)
		return;
	dup2(null, fd);
	close(null);
}

int out_init(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int null = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (null < 0)
			return -errno;
		if (null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigemptyset(&ign.sa_mask);
	return sigaction(SIGPIPE, &ign, NULL) < 0 ? -errno : 0;
}

/* A non-blocking stream that is full is waited for once; then the line is
 * dropped, and the stream stays open. */
static bool wait_writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	return poll(&p, 1, OUT_FULL_WAIT_MS) == 1 && (p.revents & POLLOUT);
}

int out_write(int fd, const char *buf, size_t len)
{
	bool waited = false;
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		int err = n < 0 ? errno : EIO;
		if (err == EINTR)
			continue;
		if (err == EAGAIN || err == EWOULDBLOCK) {
			if (!waited && wait_writable(fd)) {
				waited = true;
				continue;
			}
			return -EAGAIN;
		}
		mark_closed(fd, err);
		return -err;
	}
	return 0;
}

void out_failed(FILE *f, int err)
{
	if (f == stdout || f == stderr)
		mark_closed(fileno(f), err ? err : EIO);
}

int out_flush(FILE *f)
{
	if (fflush(f) == 0 && !ferror(f))
		return 0;
	/* a failed fflush sets errno; an error flag alone comes from an
	 * earlier write, whose errno is most likely still the last one set */
	int err = errno ? errno : EIO;
	clearerr(f);
	out_failed(f, err);
	return -err;
}

/* A pipe without a reader polls POLLERR, a hung-up terminal or a socket
 * whose peer closed POLLHUP: a write would fail with EPIPE or EIO. */
static void poll_stream(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (atomic_load(&closed_err[fd]) || poll(&p, 1, 0) != 1)
		return;
	if (p.revents & POLLNVAL)
		mark_closed(fd, EBADF);
	else if (p.revents & POLLERR)
		mark_closed(fd, EPIPE);
	else if (p.revents & POLLHUP)
		mark_closed(fd, EIO);
}

bool out_closed(char *ret_why, size_t len)
{
	for (int fd = 1; fd <= 2; fd++)
		poll_stream(fd);
	for (int fd = 2; fd >= 1; fd--) {
		int err = atomic_load(&closed_err[fd]);
		if (!err)
			continue;
		if (ret_why && len)
			snprintf(ret_why, len, "%s: %s", stream_names[fd], strerror(err));
		return true;
	}
	return false;
}

bool out_stop_check(char *why, size_t len)
{
	char what[96];
	if (!out_closed(what, sizeof(what)))
		return false;
	snprintf(why, len, "%s (%s)", OUT_CLOSED_REASON, what);
	return true;
}
