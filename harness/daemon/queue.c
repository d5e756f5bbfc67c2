/* kabd's executor thread. Signals: every thread blocks SIGINT/SIGTERM/
 * SIGCHLD/SIGHUP; exec_job takes them with sigtimedwait, so stopping a run
 * means a SIGTERM directed at this thread (pthread_kill). A stop signal
 * sent to the process may land here instead of in main's sigwait; then the
 * run stops and main is told to shut down. */
#include "harness/daemon/queue.h"
#include "harness/daemon/bisect_auto.h"
#include "harness/daemon/bisect_life.h"
#include "harness/daemon/nightly.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/report/history.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_S 2

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread, main_thread;
	struct store *st;   /* the executor's own connection */
	bool stopping, woken;
	bool history_due;    /* some ended job may have no night in its name's history yet */
	bool bisect_due;     /* a bisection was asked for: advance the running ones */
	struct bisect_env benv;
	struct krun_user git_user; /* who runs git in kab's clones (kab-build, when root) */
	int64_t current;     /* the job exec_job is running; 0: none */
	int64_t cancel_req;  /* the running job a client cancelled */
	void (*on_idle)(void *ctx); /* the lab member's wake; NULL: none */
	void *on_idle_ctx;
};

/* The next job: one left running or interrupted by an earlier kabd first,
 * then the oldest queued one. 0: none. */
static int64_t next_job(struct store *st)
{
	static const enum job_status order[] = { JOB_RUNNING, JOB_INTERRUPTED, JOB_QUEUED };
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		int64_t *ids = NULL;
		size_t n = 0;
		if (store_jobs_with_status(st, order[i], &ids, &n) < 0)
			continue;
		int64_t id = n ? ids[0] : 0;
		free(ids);
		if (id)
			return id;
	}
	return 0;
}

/* Takes stop signals left pending for this thread after exec_job, so the
 * next job does not start interrupted. One nobody asked for came from
 * outside: it was meant for main. */
static void drain_signals(struct queue *q)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	struct timespec zero = { 0 };
	int sig;
	while ((sig = sigtimedwait(&set, NULL, &zero)) > 0) {
		pthread_mutex_lock(&q->mu);
		bool expected = q->stopping || q->cancel_req;
		pthread_mutex_unlock(&q->mu);
		if (!expected && sig != SIGHUP)
			pthread_kill(q->main_thread, SIGTERM);
	}
}

/* A stopped job (jl_hooks.stopped): cancelled when a client asked,
 * else kabd is stopping and the job resumes at its next start. */
static enum job_status job_stopped(void *ctx, int64_t id, char *reason, size_t len)
{
	struct queue *q = ctx;
	pthread_mutex_lock(&q->mu);
	bool cancelled = q->cancel_req == id;
	pthread_mutex_unlock(&q->mu);
	snprintf(reason, len, "%s", cancelled ? "cancelled over the API" : "kabd stopped; the job resumes when it starts again");
	return cancelled ? JOB_CANCELLED : JOB_INTERRUPTED;
}

/* After a job's run, whatever its end (jl_hooks.after). An ended job is a
 * night of its name's history (a job that resumes later is not ended:
 * history_refresh leaves it), before the nightly work looks at the
 * history; a finished one may settle or start a confirmation. Only the
 * executor makes nights: readers only read. */
static void job_after(void *ctx, struct store *st, int64_t id, const char *name, enum job_status now)
{
	struct queue *q = ctx;
	if (history_refresh(st, name, NULL) < 0) {
		log_warn("kabd: job %lld: the history of \"%s\" was not refreshed; kabd tries again when it is idle",
			 (long long)id, name);
		pthread_mutex_lock(&q->mu);
		q->history_due = true;
		pthread_mutex_unlock(&q->mu);
	}
	/* a bisection's step job is the bisection's business, not a night's */
	if (job_status_finished(now) && bisect_after_job(st, &q->benv, id) == 0)
		nightly_after_job(q, st, id);
}

/* The running bisections, once asked for (bisect_create over the API):
 * git bisect runs in kab's clones here, in the executor's thread, never
 * beside a build. */
static void advance_bisections(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	bool due = q->bisect_due;
	q->bisect_due = false;
	pthread_mutex_unlock(&q->mu);
	if (due && bisect_advance_all(q->st, &q->benv) < 0)
		log_warn("kabd: the running bisections could not be listed: %s", store_errmsg(q->st));
}

static void run_one(struct queue *q, int64_t id)
{
	struct job *j = NULL;
	struct diags d = { 0 };
	int r = jl_resume(q->st, id, &j, NULL, 0, &d);
	if (r == -ENOENT) {
		log_error("kabd: job %lld vanished from the store", (long long)id);
		return;
	}
	if (r == -EINVAL) {
		diags_print(&d, stderr);
		jl_transition(q->st, id, JL_FAILABLE, JOB_FAILED, "the job file no longer passes its checks on this machine");
	}
	if (r < 0)
		goto out;
	pthread_mutex_lock(&q->mu);
	/* cancelled between next_job and here? queue_cancel holds mu */
	struct store_job now;
	bool go = false;
	if (!q->stopping && store_job_get(q->st, id, &now) == 0) {
		go = !job_status_finished(now.status);
		store_job_clear(&now);
	}
	if (go)
		q->current = id;
	pthread_mutex_unlock(&q->mu);
	if (!go)
		goto out;

	log_info("kabd: job %lld \"%s\" starts", (long long)id, j->name);
	const struct jl_hooks hooks = { .stopped = job_stopped, .after = job_after, .ctx = q };
	r = jl_run(q->st, j, id, &hooks);

	pthread_mutex_lock(&q->mu);
	q->current = 0;
	bool cancelled = q->cancel_req == id;
	if (r == -EINTR && !cancelled && !q->stopping) {
		/* a stop signal meant for the whole daemon landed here */
		q->stopping = true;
		pthread_kill(q->main_thread, SIGTERM);
	}
	pthread_mutex_unlock(&q->mu);
	drain_signals(q);
	pthread_mutex_lock(&q->mu);
	q->cancel_req = 0;
	pthread_mutex_unlock(&q->mu);
	const char *how = r == 0 ? "finished" : r == -EINTR ? "stopped" : strerror(-r);
	log_info("kabd: job %lld ends (%s)", (long long)id, how);
out:
	job_free(j);
	diags_free(&d);
}

/* The nights no job's end made: jobs that ended before this kabd started
 * (kab run, an older kab), were cancelled while queued, or whose refresh
 * at their end failed. Once, when due: a night that cannot be made is not
 * tried again every tick. */
static void refresh_histories(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	bool due = q->history_due;
	q->history_due = false;
	pthread_mutex_unlock(&q->mu);
	if (!due)
		return;
	size_t names = 0, nights = 0;
	double t0 = util_mono_now();
	if (history_refresh_all(q->st, &names, &nights) < 0)
		log_warn("kabd: the histories could not be brought up to date: %s", store_errmsg(q->st));
	else if (nights)
		log_info("kabd: %zu night%s added to the history of %zu job name%s in %.1f s", nights,
			 nights == 1 ? "" : "s", names, names == 1 ? "" : "s", util_mono_now() - t0);
}

static void *executor_main(void *arg)
{
	struct queue *q = arg;
	/* before the first job, so that readers see every night there is;
	 * then (bisect_due is set at start) a bisection whose step job ended
	 * while kabd was down goes on, and a regression of a bisect = auto
	 * night confirmed just before a kabd stopped is asked for now */
	refresh_histories(q);
	if (bisect_auto_all(q->st, &q->benv) < 0)
		log_warn("kabd: the regressions bisect = auto asks for could not be listed: %s", store_errmsg(q->st));
	for (;;) {
		pthread_mutex_lock(&q->mu);
		bool stop = q->stopping;
		q->woken = false;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			break;
		/* between jobs: a step job asked for meanwhile is queued now */
		advance_bisections(q);
		int64_t id = next_job(q->st);
		if (id) {
			run_one(q, id);
			continue;
		}
		refresh_histories(q);
		pthread_mutex_lock(&q->mu);
		void (*on_idle)(void *) = q->on_idle;
		void *on_idle_ctx = q->on_idle_ctx;
		pthread_mutex_unlock(&q->mu);
		if (on_idle)
			on_idle(on_idle_ctx);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += POLL_S;
		pthread_mutex_lock(&q->mu);
		while (!q->stopping && !q->woken)
			if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT)
				break;
		pthread_mutex_unlock(&q->mu);
	}
	return NULL;
}

static int bisect_submit(void *ctx, struct store *st, const struct job *j, const char *submitter, int64_t *ret_id)
{
	return queue_submit(ctx, st, j, submitter, ret_id);
}

static int bisect_cancel_job(void *ctx, struct store *st, int64_t job_id)
{
	char status[32];
	int r = queue_cancel(ctx, st, job_id, status, sizeof(status));
	return r < 0 ? r : 0;
}

int queue_start(const char *db_path, pthread_t main_thread, struct queue **ret)
{
	struct queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	int r = store_open(db_path, &q->st);
	if (r < 0) {
		free(q);
		return r;
	}
	if (exec_recover(q->st) < 0)
		log_warn("kabd: some of what an earlier executor left could not be restored; see above");
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->main_thread = main_thread;
	q->history_due = true;
	q->bisect_due = true;
	struct strbuf why = { 0 };
	bool as_builder = kbuser_lookup(&q->git_user, &why) > 0;
	sb_free(&why);
	q->benv = (struct bisect_env){
		.submit = bisect_submit, .cancel = bisect_cancel_job, .ctx = q, .git_user = as_builder ? &q->git_user : NULL
	};
	if ((r = pthread_create(&q->thread, NULL, executor_main, q)) != 0) {
		store_close(q->st);
		free(q);
		return -r;
	}
	*ret = q;
	return 0;
}

void queue_stop(struct queue *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	if (q->current)
		pthread_kill(q->thread, SIGTERM);
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	store_close(q->st);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

const struct bisect_env *queue_bisect_env(struct queue *q)
{
	return &q->benv;
}

void queue_bisect_due(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->bisect_due = true;
	q->woken = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void queue_wake(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->woken = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

int queue_submit(struct queue *q, struct store *st, const struct job *j, const char *submitter, int64_t *ret_id)
{
	int64_t id;
	/* The plan is made before, and the job goes in with its schedule in
	 * one short transaction: the executor never sees a job without its
	 * steps, and neither mu nor the database's write lock is held while
	 * anything slower than the inserts runs. */
	int r = jl_submit(st, j, submitter, &id, NULL);
	if (r < 0)
		return r;
	log_info("job %lld (%s) queued, submitted by %s", (long long)id, j->name, submitter ? submitter : "?");
	queue_wake(q);
	*ret_id = id;
	return 0;
}

int queue_cancel(struct queue *q, struct store *st, int64_t job_id, char *ret_status, size_t len)
{
	int r;
	pthread_mutex_lock(&q->mu);
	if (q->current == job_id) {
		q->cancel_req = job_id;
		pthread_kill(q->thread, SIGTERM);
		r = 1;
	} else if ((r = jl_cancel(st, job_id, "cancelled over the API", ret_status, len)) == 0) {
		/* queued, or interrupted and waiting to resume: a night of its
		 * name that the executor adds when it is next idle */
		q->history_due = true;
		q->woken = true;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return r;
}

#define QUEUE_STATE_WORD(e, word) [e] = word,
static const char *const state_names[QUEUE_STATE_N] = { QUEUE_STATE_LIST(QUEUE_STATE_WORD) };

UTIL_WORD_FUNCS(queue_state, state_names, QUEUE_STATE_N)

enum queue_state queue_state(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	enum queue_state s = q->stopping ? QUEUE_STOPPING : q->current ? QUEUE_RUNNING : QUEUE_IDLE;
	pthread_mutex_unlock(&q->mu);
	return s;
}

int64_t queue_current(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	int64_t id = q->current;
	pthread_mutex_unlock(&q->mu);
	return id;
}

void queue_on_idle(struct queue *q, void (*fn)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&q->mu);
	q->on_idle = fn;
	q->on_idle_ctx = ctx;
	pthread_mutex_unlock(&q->mu);
}

bool queue_idle_empty(struct queue *q, struct store *st)
{
	if (queue_state(q) != QUEUE_IDLE)
		return false;
	static const enum job_status busy[] = { JOB_QUEUED, JOB_RUNNING, JOB_INTERRUPTED };
	for (size_t i = 0; i < ARRAY_SIZE(busy); i++) {
		int64_t n = 0;
		if (store_count_jobs(st, busy[i], &n) < 0 || n > 0)
			return false;
	}
	return true;
}
