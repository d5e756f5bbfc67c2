/* Header deadlines for kabd's connections (reaper.h). */
#include "harness/daemon/reaper.h"
#include "harness/base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define NS_PER_S 1000000000LL
#define FOREVER INT64_MAX

struct reaper_conn {
	int fd;
	int64_t deadline; /* CLOCK_MONOTONIC ns */
	bool listed;      /* waiting for headers, in the list */
	bool kept;        /* kept alive after a request: its close is no news */
	struct reaper_conn *prev, *next;
};

struct reaper {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	const char *what;
	int64_t timeout_ns;
	/* every deadline is now + timeout when it is set, so appending keeps
	 * the list in deadline order: the head is always the next one due */
	struct reaper_conn *head, *tail;
	bool stopping;
	uint64_t dropped, unlogged;
	int64_t next_log;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void unlink_conn(struct reaper *r, struct reaper_conn *c)
{
	if (!c->listed)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		r->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		r->tail = c->prev;
	c->prev = c->next = NULL;
	c->listed = false;
}

/* Due timeout from now; wakes the thread when the list was empty (a
 * deadline behind the head's needs no wake-up). Under mu. */
static void append(struct reaper *r, struct reaper_conn *c)
{
	bool was_empty = !r->head;
	c->deadline = now_ns() + r->timeout_ns;
	c->prev = r->tail;
	c->next = NULL;
	if (r->tail)
		r->tail->next = c;
	else
		r->head = c;
	r->tail = c;
	c->listed = true;
	if (was_empty)
		pthread_cond_signal(&r->cv);
}

/* Shuts down every connection past its deadline; under mu. */
static void reap(struct reaper *r, int64_t now)
{
	while (r->head && r->head->deadline <= now) {
		struct reaper_conn *c = r->head;
		unlink_conn(r, c);
		shutdown(c->fd, SHUT_RDWR);
		r->dropped++;
		r->unlogged += !c->kept;
	}
}

/* One line for the connections shut down since the last, at most every
 * REAPER_LOG_EVERY_S (and the last when the reaper stops): a client that
 * reconnects as fast as it is dropped cannot fill the journal. Takes mu
 * back before returning. */
static void log_dropped(struct reaper *r, int64_t now, bool last)
{
	if (!r->unlogged || (now < r->next_log && !last))
		return;
	uint64_t n = r->unlogged;
	r->unlogged = 0;
	r->next_log = now + REAPER_LOG_EVERY_S * NS_PER_S;
	pthread_mutex_unlock(&r->mu);
	log_warn("kabd %s: closed %llu connection%s that sent no complete request headers within %.3g s of connecting (slow "
		 "or stalled clients; at most one such line every %d s)",
		 r->what, (unsigned long long)n, n == 1 ? "" : "s", (double)r->timeout_ns / NS_PER_S, REAPER_LOG_EVERY_S);
	pthread_mutex_lock(&r->mu);
}

static void *reaper_main(void *arg)
{
	struct reaper *r = arg;
	pthread_mutex_lock(&r->mu);
	while (!r->stopping) {
		int64_t now = now_ns();
		reap(r, now);
		log_dropped(r, now, false);
		int64_t wake = r->head ? r->head->deadline : FOREVER;
		if (r->unlogged && r->next_log < wake)
			wake = r->next_log;
		if (wake == FOREVER) {
			pthread_cond_wait(&r->cv, &r->mu);
			continue;
		}
		struct timespec ts = { .tv_sec = wake / NS_PER_S, .tv_nsec = wake % NS_PER_S };
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	}
	log_dropped(r, now_ns(), true);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int reaper_start(const char *what, unsigned timeout_ms, struct reaper **ret)
{
	if (timeout_ms == 0)
		return -EINVAL;
	struct reaper *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->what = what;
	r->timeout_ns = (int64_t)timeout_ms * 1000000;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&r->mu, NULL);
	int e = pthread_create(&r->thread, NULL, reaper_main, r);
	if (e != 0) {
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		free(r);
		return -e;
	}
	*ret = r;
	return 0;
}

void reaper_stop(struct reaper *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct reaper_conn *reaper_add(struct reaper *r, int fd)
{
	struct reaper_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		shutdown(fd, SHUT_RDWR); /* no deadline, no connection */
		return NULL;
	}
	c->fd = fd;
	pthread_mutex_lock(&r->mu);
	append(r, c);
	pthread_mutex_unlock(&r->mu);
	return c;
}

void reaper_headers_done(struct reaper *r, struct reaper_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&r->mu);
	unlink_conn(r, c);
	pthread_mutex_unlock(&r->mu);
}

void reaper_rearm(struct reaper *r, struct reaper_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&r->mu);
	unlink_conn(r, c);
	c->kept = true;
	append(r, c);
	pthread_mutex_unlock(&r->mu);
}

void reaper_remove(struct reaper *r, struct reaper_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&r->mu);
	unlink_conn(r, c);
	pthread_mutex_unlock(&r->mu);
	free(c);
}

uint64_t reaper_dropped(struct reaper *r)
{
	pthread_mutex_lock(&r->mu);
	uint64_t n = r->dropped;
	pthread_mutex_unlock(&r->mu);
	return n;
}
