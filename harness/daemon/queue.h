/* kabd's job queue and its one executor thread: queued jobs run one at a
 * time, oldest first, through exec_job. Only this thread acts on the
 * machine; HTTP handlers only enqueue (a 'queued' row) and cancel. */
#pragma once
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct queue;
struct store;

/* Starts the executor thread on its own store connection. The caller
 * holds the executor lock and has blocked SIGINT/SIGTERM/SIGCHLD/SIGHUP.
 * main_thread gets a SIGTERM if the executor took a stop signal meant for
 * the whole daemon. */
int queue_start(const char *db_path, pthread_t main_thread, struct queue **ret);
/* Stops the current run (its job stays resumable), joins, frees. */
void queue_stop(struct queue *q);
/* A job was enqueued: look now rather than at the next poll. */
void queue_wake(struct queue *q);
/* What a bisection's life needs of this queue (bisect_life.h): its step
 * jobs queued and cancelled here, git run as the build user. */
struct bisect_env;
const struct bisect_env *queue_bisect_env(struct queue *q);
/* A bisection was asked for: the executor advances the running ones when
 * it is next idle (git bisect runs in its thread, never beside a build). */
void queue_bisect_due(struct queue *q);

/* Stores a parsed job and its schedule as 'queued', in one transaction
 * (never under the queue's mutex), and wakes the executor. submitter: who
 * asked, as the job records it ("uid 1001 (alice)", "token"). */
struct job;
int queue_submit(struct queue *q, struct store *st, const struct job *j, const char *submitter, int64_t *ret_id);

/* Cancels a job through st (the caller's connection): a queued job
 * becomes 'cancelled'; the running one is stopped by the executor.
 * Returns 1 when the running job was told to stop, 0 when a waiting job
 * was cancelled, -ENOENT: no such job, -EALREADY: already finished (its
 * status in ret_status). */
int queue_cancel(struct queue *q, struct store *st, int64_t job_id, char *ret_status, size_t len);

/* Called on the executor's thread after each job's end (its night made)
 * and whenever it goes idle: kabd's lab member looks for work then. */
void queue_on_idle(struct queue *q, void (*fn)(void *ctx), void *ctx);
/* Whether the executor is idle and no local job waits, runs or is
 * interrupted (st: the caller's connection): a lab job may be claimed. */
bool queue_idle_empty(struct queue *q, struct store *st);

/* The executor's states, X(ENUM, word), as /health and /metrics name them. */
#define QUEUE_STATE_LIST(X) X(QUEUE_IDLE, "idle") X(QUEUE_RUNNING, "running") X(QUEUE_STOPPING, "stopping")
#define QUEUE_STATE_ITEM(e, word) e,
enum queue_state { QUEUE_STATE_LIST(QUEUE_STATE_ITEM) QUEUE_STATE_N };
const char *queue_state_name(enum queue_state s);
/* -EINVAL for a word that is none of them. */
int queue_state_parse(const char *s, enum queue_state *ret);
/* For /health and /metrics. */
enum queue_state queue_state(struct queue *q);
int64_t queue_current(struct queue *q);    /* 0: none */
