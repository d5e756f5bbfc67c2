/* The header deadline (harness/daemon/reaper.h) on socket pairs: a
 * connection that never says its headers are in is shut down once its
 * time is up, and not before; one whose headers came in is left alone;
 * a kept-alive connection's deadline starts again at its request's end. */
#include "harness/daemon/reaper.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 200

struct pair {
	int server, client;
};

static struct pair new_pair(void)
{
	int fds[2] = { -1, -1 };
	T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	return (struct pair){ fds[0], fds[1] };
}

static void close_pair(struct pair *p)
{
	close(p->server);
	close(p->client);
}

/* Whether the client end reads the end of the stream within wait_ms. */
static bool ended(const struct pair *p, int wait_ms)
{
	struct pollfd pfd = { .fd = p->client, .events = POLLIN };
	if (poll(&pfd, 1, wait_ms) != 1)
		return false;
	char c;
	return read(p->client, &c, 1) == 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void test_deadline(void)
{
	struct reaper *r = NULL;
	T_EQ_INT(reaper_start("test", TIMEOUT_MS, &r), 0);
	if (!r)
		return;
	struct pair slow = new_pair(), quick = new_pair(), kept = new_pair();
	double t0 = util_mono_now();
	struct reaper_conn *cs = reaper_add(r, slow.server);
	struct reaper_conn *cq = reaper_add(r, quick.server);
	struct reaper_conn *ck = reaper_add(r, kept.server);
	T_CHECK(cs && cq && ck);
	/* bytes that trickle in do not move the deadline: nothing here reads them */
	T_EQ_INT(write(slow.client, "G", 1), 1);
	reaper_headers_done(r, cq);
	reaper_headers_done(r, ck);
	T_CHECK(!ended(&slow, TIMEOUT_MS / 2));
	T_EQ_INT(write(slow.client, "E", 1), 1);
	T_CHECK(ended(&slow, 2 * TIMEOUT_MS));
	double took = util_mono_now() - t0;
	T_CHECK(took >= TIMEOUT_MS / 1000.0 && took < 3 * TIMEOUT_MS / 1000.0);
	T_EQ_INT(reaper_dropped(r), 1);
	/* headers in: no deadline while the request is served */
	T_CHECK(!ended(&quick, 2 * TIMEOUT_MS));
	/* its request ended; the next one's headers have the timeout from now */
	reaper_rearm(r, ck);
	T_CHECK(!ended(&kept, TIMEOUT_MS / 2));
	T_CHECK(ended(&kept, 2 * TIMEOUT_MS));
	T_EQ_INT(reaper_dropped(r), 2);
	T_CHECK(!ended(&quick, 10));
	reaper_remove(r, cs);
	reaper_remove(r, cq);
	reaper_remove(r, ck);
	close_pair(&slow);
	close_pair(&quick);
	close_pair(&kept);
	reaper_stop(r);
}

/* A connection removed before its deadline (the server closed it) is
 * never shut down: its fd may be another connection's by then. */
static void test_removed(void)
{
	struct reaper *r = NULL;
	T_EQ_INT(reaper_start("test", TIMEOUT_MS, &r), 0);
	if (!r)
		return;
	struct pair p = new_pair();
	struct reaper_conn *c = reaper_add(r, p.server);
	reaper_remove(r, c);
	T_CHECK(!ended(&p, 2 * TIMEOUT_MS));
	T_EQ_INT(reaper_dropped(r), 0);
	close_pair(&p);
	reaper_stop(r);
	struct reaper *bad = NULL;
	T_EQ_INT(reaper_start("test", 0, &bad), -EINVAL);
}

/* Many connections, accepted in turn: each goes at its own deadline. */
static void test_order(void)
{
	struct reaper *r = NULL;
	T_EQ_INT(reaper_start("test", TIMEOUT_MS, &r), 0);
	if (!r)
		return;
	enum { N = 8 };
	struct pair p[N];
	struct reaper_conn *c[N];
	for (int i = 0; i < N; i++) {
		p[i] = new_pair();
		c[i] = reaper_add(r, p[i].server);
		sleep_ms(TIMEOUT_MS / N);
	}
	/* the first is due by now, the last not yet */
	T_CHECK(ended(&p[0], TIMEOUT_MS / 2));
	T_CHECK(!ended(&p[N - 1], 0));
	for (int i = 1; i < N; i++)
		T_CHECK(ended(&p[i], 2 * TIMEOUT_MS));
	T_EQ_INT(reaper_dropped(r), N);
	for (int i = 0; i < N; i++) {
		reaper_remove(r, c[i]);
		close_pair(&p[i]);
	}
	reaper_stop(r);
}

int main(void)
{
	log_quiet = true;
	test_deadline();
	test_removed();
	test_order();
	return t_done("test_reaper");
}
