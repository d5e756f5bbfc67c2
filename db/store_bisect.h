/* Bisections and their step jobs (the tables of migration 13). A
 * bisection searches a range GOOD..BAD of one tree for the commit that
 * moved a metric (doc/bisect.md): each comparison it needs is an ordinary
 * job, a step job, recorded here with the commits it compares, so that
 * kabd replays the bisection from what the store holds after any restart
 * and never measures a comparison twice. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct store;

/* X(ENUM, word): running: it waits for step jobs or is advanced; done: it
 * ended with its report (a culprit, an unconfirmed one or a range);
 * refused: GOOD against BAD was not decided, nothing was bisected (the
 * report says why); failed: it could not go on (the reason); cancelled:
 * someone asked. */
/* clang-format off */
#define BISECT_STATE_LIST(X) \
	X(BISECT_RUNNING, "running") X(BISECT_DONE, "done") X(BISECT_REFUSED, "refused") \
	X(BISECT_FAILED, "failed") X(BISECT_CANCELLED, "cancelled")
/* clang-format on */
enum bisect_state { BISECT_STATE_UNKNOWN = -1, BISECT_STATE_LIST(STORE_ENUM_ITEM) BISECT_STATE_N };
const char *bisect_state_name(enum bisect_state s);
int bisect_state_parse(const char *s, enum bisect_state *ret);
/* A bisection's life: running -> done, refused, failed, cancelled; an
 * ended one changes no more (a state may be written again with a new
 * reason). store_bisect_set_state refuses any other change. */
bool bisect_transition_allowed(enum bisect_state from, enum bisect_state to);
bool bisect_state_ended(enum bisect_state s);
#define BISECT_FROM(s) (1u << (s))

struct store_bisect {
	int64_t id;
	double created, ended; /* ended: 0 while running */
	int64_t regression;    /* the regression it bisects; 0: asked on a job */
	int64_t source_job;    /* the job whose variant, workload and metric it measures */
	int variant;           /* the source job's variant that is built at each commit */
	char tree[1024];       /* the tree as its builds record it (their real path) */
	char series[1024];     /* the series the variant applies on each commit; "" none */
	char good[41], bad[41];
	char workload[128], metric[128];
	char direction[16]; /* the metric's: higher | lower | neutral */
	enum bisect_state state;
	char reason[512];
	char *report; /* JSON, malloc'd; NULL until it ends (store_bisect_clear frees it) */
	char submitter[80];
	unsigned boots; /* the budget of boots of its step jobs; 0: none (migration 14) */
};

/* Records a running bisection. A bisection of a regression that one
 * already running or done bisects is not added: -EEXIST with that one's
 * id in *ret_id. */
int store_bisect_add(struct store *s, const struct store_bisect *b, int64_t *ret_id);
int store_bisect_get(struct store *s, int64_t id, struct store_bisect *ret);
void store_bisect_clear(struct store_bisect *b);
/* The running bisections' ids, oldest first. */
int store_bisect_running(struct store *s, int64_t **ret_ids, size_t *ret_n);
/* Up to limit bisections below `before` (all when before <= 0), newest
 * first; the caller clears each and frees the array. */
int store_bisect_page(struct store *s, int64_t before, size_t limit, struct store_bisect **ret, size_t *ret_n);
/* The newest bisection of each regression whose id lies in lo..hi (a
 * page of regressions; lo = hi: one regression), by regression id; ret_n 0
 * when none has one. The newest is the one a regression shows: one runs
 * or ended done, and none is added after it (store_bisect_add). The caller
 * clears each and frees the array. */
int store_bisect_of_regressions(struct store *s, int64_t lo, int64_t hi, struct store_bisect **ret, size_t *ret_n);
/* Its state, reason and (when not NULL) report, when the table allows the
 * change from the row's state and the row's state is one of from_set, in
 * one statement: -EPERM (logged) when not, -ENOENT: no such bisection.
 * Only harness/daemon/bisect_life.c calls it (make lint). */
int store_bisect_set_state(struct store *s, int64_t id, unsigned from_set, enum bisect_state to, const char *reason,
			   const char *report);

/* A step job: k pairs of sha against base. name is the job's name, unique:
 * the row is written before its job is queued, and a row without its job
 * finds it by name after a crash between the two. */
struct store_bisect_job {
	int64_t id, bisection, job; /* job 0: not linked yet */
	char name[160];
	char sha[41], base[41];
	unsigned k;
	/* "": a step's comparison; "revert" or "align": a control of the
	 * culprit sha (migration 15; the sides are bisect_life's to say) */
	char control[16];
	enum job_status status; /* the job's (JOB_STATUS_UNKNOWN without one) */
	char reason[256];
};
int store_bisect_job_add(struct store *s, const struct store_bisect_job *j, int64_t *ret_id);
int store_bisect_job_link(struct store *s, int64_t row_id, int64_t job_id);
/* The bisection's step jobs, in the order they were asked for. */
int store_bisect_jobs(struct store *s, int64_t bisection, struct store_bisect_job **ret, size_t *ret_n);
/* The bisection and its step jobs (the caller clears ret and frees
 * *ret_jobs); nothing is returned on failure. */
int store_bisect_load(struct store *s, int64_t id, struct store_bisect *ret, struct store_bisect_job **ret_jobs, size_t *ret_n);
/* The bisection a job is a step of; -ENOENT when it is none's. */
int store_bisect_of_job(struct store *s, int64_t job_id, int64_t *ret_bisection);
/* The newest job of that name; -ENOENT when none. */
int store_job_by_name(struct store *s, const char *name, int64_t *ret_id);

/* The boots the bisection's step jobs made so far (the boots table's rows
 * of those jobs: every switch to a kernel, a failed boot too). */
int store_bisect_boots_spent(struct store *s, int64_t bisection, unsigned *ret);

/* bisect = auto (harness/daemon/bisect_auto.c): the confirmed regressions
 * that have no bisection and were not asked for by kabd yet, whose first
 * bad night's job text names bisect (the caller parses it), oldest first. */
int store_bisect_auto_todo(struct store *s, int64_t **ret_ids, size_t *ret_n);
/* What kabd's asking did, on the regression: once (-EALREADY when it has
 * a note already; -ENOENT no such regression). */
int store_bisect_auto_note(struct store *s, int64_t regression, const char *note);

/* Whether sha was built from tree with series (NULL or "": none): any ok
 * build gives BUILD_OK, else the newest failed one BUILD_FAILED with its
 * reason in why; -ENOENT when there is neither. */
int store_bisect_build(struct store *s, const char *tree, const char *series, const char *sha, enum build_status *ret,
		       char *why, size_t len);
/* The newest ok build of sha from tree with series and the config whose
 * hash is config_hash, kab's own (not an image): what a step job of a
 * bisection whose variant boots recorded builds (build = ID) pins.
 * -ENOENT when there is none. */
int store_bisect_build_id(struct store *s, const char *tree, const char *series, const char *config_hash,
			  const char *sha, int64_t *ret_id);
