/* Change points and their confirmation (the regressions table of
 * migration 11). A row is made when the history of a nightly job shows a
 * change point on a primary metric; the confirmation job (the last good
 * night's variant against the first bad night's, paired) settles it:
 * confirmed when its verdict is worse or better, not confirmed otherwise.
 * A confirmed row in the bad direction is a regression, in the good one an
 * improvement; both stay open until someone with the token acknowledges
 * them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* X(ENUM, word): pending: the confirmation job is queued or running;
 * confirmed: the paired test said worse or better; not-confirmed: it
 * said same or undecided (shown with its interval); failed: the
 * confirmation could not be queued or did not finish. */
/* clang-format off */
#define REGRESS_STATE_LIST(X) \
	X(REGRESS_PENDING, "pending") X(REGRESS_CONFIRMED, "confirmed") X(REGRESS_NOT_CONFIRMED, "not-confirmed") \
	X(REGRESS_FAILED, "failed")
/* clang-format on */
#define REGRESS_ENUM_ITEM(e, ...) e,
enum regress_state {
	REGRESS_STATE_LIST(REGRESS_ENUM_ITEM) REGRESS_STATE_N,
	REGRESS_STATE_UNKNOWN = REGRESS_STATE_N,
};
const char *regress_state_name(enum regress_state s);
int regress_state_parse(const char *s, enum regress_state *ret);

struct store_regress {
	int64_t id;
	double created;
	char name[256]; /* the nightly job's name */
	char workload[128], metric[128];
	int variant;                  /* the compared variant of the nights (0 is the baseline) */
	char direction[16];           /* the metric's: higher | lower | neutral */
	int64_t good_job, bad_job;    /* the last night before the change, the first after */
	double good_night, bad_night; /* their start times */
	char track[256];              /* "REMOTE BRANCH" of a tracked variant; "" */
	char good_sha[41], bad_sha[41];
	char good_subject[256], bad_subject[256];
	double mean_before, mean_after; /* of the nightly estimates, in percent */
	/* mean_after - mean_before, in points of the nightly estimate (from
	 * +0.4% to +190% is +189.6), and its significance */
	double detected_pct, detected_p;
	char machine[256];   /* "hostname (kernel release)" where the nights ran */
	int64_t confirm_job; /* 0: none queued */
	enum regress_state state;
	char reason[512];
	/* the confirmation's paired result for the metric; NAN until it ends */
	double estimate_pct, ci_lo_pct, ci_hi_pct, p;
	char verdict[16]; /* better | worse | same | undecided | ...; "" */
	double acked;     /* when acknowledged; 0: open */
	char acked_by[64];
	/* bisect = auto: what kabd's own asking for the bisection did
	 * ("bisection 7", or why it was refused); "": not asked (migration 14) */
	char auto_bisect[512];
};

/* Whether a change for name/workload/metric/variant was already recorded
 * with its first bad night within `near` nights of bad_job (job ids of the
 * same name in order): a point that moves by a night as nights come in is
 * the same change. */
int store_regress_known(struct store *s, const char *name, const char *workload, const char *metric, int variant,
			int64_t bad_job, unsigned near, bool *ret);
int store_regress_add(struct store *s, const struct store_regress *r, int64_t *ret_id);
int store_regress_set_confirm(struct store *s, int64_t id, int64_t confirm_job);
/* The confirmation's outcome: state, reason, and its paired result. */
int store_regress_settle(struct store *s, const struct store_regress *r);
int store_regress_get(struct store *s, int64_t id, struct store_regress *ret);
/* The rows that wait on that confirmation job (one job confirms every
 * change of a night pair and compared variant), oldest first; -ENOENT
 * when none does. */
int store_regress_by_confirm(struct store *s, int64_t confirm_job, struct store_regress **ret, size_t *ret_n);
/* Newest first; ret_n 0 when there are none. */
int store_regress_list(struct store *s, struct store_regress **ret, size_t *ret_n);
/* The same, of the rows with ids below `before` (all when before <= 0), at
 * most limit of them; only the confirmed ones when confirmed. */
int store_regress_page(struct store *s, int64_t before, size_t limit, bool confirmed, struct store_regress **ret, size_t *ret_n);
/* One call per job name, metric and verdict ("worse", "better", "" for
 * another) of the confirmed rows, newest first, with how many of them are
 * not acknowledged: counted by the database, no row loaded. */
typedef void (*store_regress_count_fn)(void *ctx, const char *name, const char *metric, const char *verdict, size_t open);
int store_regress_open_counts(struct store *s, store_regress_count_fn fn, void *ctx);
/* -ENOENT: no such row; -EALREADY: acknowledged before (ret keeps who and when). */
int store_regress_ack(struct store *s, int64_t id, const char *by, double when);
/* Whether a confirmed row is a regression: its verdict is worse. */
bool store_regress_is_regression(const struct store_regress *r);
