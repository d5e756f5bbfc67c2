/* A deadline for a request's headers. libmicrohttpd's own timeout is an
 * idle one: a client that sends a byte every few seconds never meets it,
 * and 64 such clients held every connection kabd serves before any of
 * them was asked who it is. Here a connection must deliver a whole
 * request's headers within a fixed time of being accepted, or of its last
 * request's end on a kept-alive connection; otherwise its socket is shut
 * down. One thread per server sleeps until the nearest deadline
 * (CLOCK_MONOTONIC). It never closes an fd: shutdown(2) makes the
 * server's own thread read the end of the stream and close the
 * connection, and a connection leaves the list (reaper_remove) before the
 * server closes its fd, so no fd is shut down after being reused. */
#pragma once
#include <stdint.h>

/* How often at most a line says how many connections were shut down
 * before their first request (kept-alive ones that go idle are not news). */
#define REAPER_LOG_EVERY_S 60

struct reaper;
struct reaper_conn;

/* what names the server in the log ("TCP 127.0.0.1:8469"); it must
 * outlive the reaper. timeout_ms > 0. */
int reaper_start(const char *what, unsigned timeout_ms, struct reaper **ret);
/* Stops the thread; every connection must have been removed. */
void reaper_stop(struct reaper *r);

/* A connection on fd was accepted: its deadline runs from now. NULL
 * when there is no memory for it: fd is then shut down at once. */
struct reaper_conn *reaper_add(struct reaper *r, int fd);
/* Its request's headers are in: no deadline until reaper_rearm. */
void reaper_headers_done(struct reaper *r, struct reaper_conn *c);
/* Its request has ended: the next request's headers are due within the
 * timeout from now. */
void reaper_rearm(struct reaper *r, struct reaper_conn *c);
/* The server is closing it (before it closes the fd); c is freed. */
void reaper_remove(struct reaper *r, struct reaper_conn *c);
/* Connections shut down since the start, kept-alive ones too. */
uint64_t reaper_dropped(struct reaper *r);
