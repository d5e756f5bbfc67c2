/* A bisection's life in kabd (doc/bisect.md): it never holds a process
 * across boots. Each comparison it needs is an ordinary job, a step job
 * (GOOD's build against the step commit's, the source job's workload,
 * ABBA, k pairs), which the executor builds, boots and journals like any
 * job. bisect_advance replays the whole bisection from the start against
 * kab's clone of the tree, with a runner that answers from the store
 * only (the builds recorded for the tree, the paired values of the step
 * jobs that ended); where the store has no answer yet it queues the one
 * step job that gives it, once, and returns. After a kexec, kill -9 or a
 * power cut the next call replays the same steps and measures nothing
 * twice. The state of a bisection is written here only, through the
 * store's table of which state may follow which (db/store_bisect.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct job;
struct krun_user;
struct store;
struct strbuf;

/* How long a request for a bisection waits for the fetch of the branch
 * its variant tracks (a revision kab's clone lacks), in seconds: within
 * kab's client's 120 s, and far less than a nightly's fetch may take. */
#define BISECT_FETCH_TIMEOUT_S 90

/* What a bisection's life needs of kabd. */
struct bisect_env {
	/* Queues a step job (kabd: queue_submit); NULL: jl_submit. */
	int (*submit)(void *ctx, struct store *st, const struct job *j, const char *submitter, int64_t *ret_id);
	/* Cancels a step job that is queued or running (kabd: queue_cancel);
	 * NULL: jl_cancel (a queued one only). */
	int (*cancel)(void *ctx, struct store *st, int64_t job_id);
	void *ctx;
	/* kab's clones of the trees (WORK/<tree key>/src): NULL the configured
	 * work directory. */
	const char *work_dir;
	/* The repository git bisects in whatever the tree (tests); NULL: kab's
	 * clone of the bisection's tree. A fetch for a tracked branch goes to
	 * kab's clone under work_dir all the same. */
	const char *clone;
	const struct krun_user *git_user; /* who runs git in the clone; NULL: kab */
	/* Step jobs parsed without the machine's checks (tests, whose trees
	 * are not kernels). */
	bool no_machine_checks;
};

/* What someone asks to bisect: a regression (its range, workload, metric
 * and compared variant), or a job whose variant is a kernel build (the
 * last such variant) with GOOD, BAD and a metric. */
struct bisect_ask {
	int64_t regression; /* > 0: this regression */
	int64_t job;        /* else this job, with: */
	const char *good, *bad, *metric;
	const char *workload; /* NULL: the job's first workload that records the metric */
	const char *submitter;
	unsigned boots; /* the budget of boots of its step jobs; 0: the job's bisect.boots */
};

/* Checks the request and records a running bisection, then advances it
 * (which queues its first step job). A revision neither the tree nor
 * kab's clone has, when the variant tracks a branch (track = REMOTE
 * BRANCH, or a recorded build of one), is looked for again after that
 * branch is fetched into the clone (kbuild_track_fetch, as the build
 * user, in the caller's thread: without waiting for the tree's lock,
 * within BISECT_FETCH_TIMEOUT_S). 0 with its id; 1 when the regression
 * has a bisection running or done already (its id; nothing added). Bad
 * input, with err naming the field and what to do: -ENOENT no such
 * regression or job; -EPERM a regression that is not confirmed; -EINVAL a
 * revision git does not know (after the fetch, if any), a GOOD that is
 * not an ancestor of BAD, the same commit twice, a metric or workload the
 * job does not record, a job with no kernel build variant; -ENODEV kab's
 * clone of the tree is missing (no build of it yet); -EBUSY the fetch
 * was needed but a build holds the tree's lock; -EHOSTUNREACH the fetch
 * failed (err names the tree, remote, branch and git's message). Nothing
 * is recorded then. */
int bisect_create(struct store *st, const struct bisect_env *env, const struct bisect_ask *a, int64_t *ret_id, struct strbuf *err);

/* Replays the running bisection id and queues what it waits for, or ends
 * it with its report (done or refused) or the reason it cannot go on
 * (failed). 0 (also for a bisection that has ended: nothing is done);
 * -errno for what the store could not do. Executor thread only: git runs
 * in the clone builds use. */
int bisect_advance(struct store *st, const struct bisect_env *env, int64_t id);
/* bisect_advance of every running bisection (kabd's start). */
int bisect_advance_all(struct store *st, const struct bisect_env *env);
/* After a job ended: the bisection it is a step of advanced. 1 when it is
 * a step job (its end is the bisection's business, not the nightly's),
 * 0 when it is none. */
int bisect_after_job(struct store *st, const struct bisect_env *env, int64_t job_id);

/* Cancels a running bisection and its step job that is queued or
 * running. 0; -ENOENT no such bisection; -EALREADY it has ended (its
 * state in err). */
int bisect_cancel(struct store *st, const struct bisect_env *env, int64_t id, const char *who, struct strbuf *err);

/* The bisection as JSON (its row, its step jobs, its report) into out. */
int bisect_json(struct store *st, int64_t id, struct strbuf *out);
