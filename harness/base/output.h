/* kab's own standard output and error. A pipe whose reader left, a
 * terminal that went away or a restarted journald is noticed (a failed
 * write, or poll saying so), never a SIGPIPE: from then on the stream is
 * /dev/null, for kab and for every child it starts, and out_closed says
 * which stream closed and why. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* At start: fds 0-2 open (on /dev/null when they were not, so that no
 * database or kernel file ever becomes fd 1 or 2), SIGPIPE ignored. */
int out_init(void);

/* Writes all of buf to fd 1 or 2 (any fd works; only 1 and 2 are marked
 * closed when a write fails). -errno on failure. */
int out_write(int fd, const char *buf, size_t len);

/* A stdio write to f failed with err: stdout or stderr is marked closed
 * (nothing happens for other streams). */
void out_failed(FILE *f, int err);

/* Flushes f and checks its error flag; a failure on stdout or stderr
 * marks it closed. 0 or -errno. */
int out_flush(FILE *f);

/* Whether stdout or stderr closed; asks poll as well, so a pipe whose
 * reader left is seen before the next write. ret_why (may be NULL) gets
 * "standard error: Broken pipe". */
bool out_closed(char *ret_why, size_t len);

/* The start of a job's reason when kab's output closed under it. */
#define OUT_CLOSED_REASON "kab's output was closed"

/* The executor's stop check for kab's foreground verbs: stdout or stderr
 * closed (a pipe whose reader left, a terminal gone), so the job stops as
 * on SIGHUP; why gets OUT_CLOSED_REASON and which stream. */
bool out_stop_check(char *why, size_t len);
