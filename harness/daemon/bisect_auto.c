/* bisect = auto: kabd asks for a confirmed regression's bisection itself
 * (bisect_auto.h). */
#include "harness/daemon/bisect_auto.h"
#include "harness/daemon/bisect_life.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_regress.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_SUBMITTER "kabd (bisect = auto)"

/* Whether the regression's first bad night ran with bisect = auto. */
static bool wants_bisection(struct store *st, int64_t rid)
{
	struct store_regress g;
	struct job *j = NULL;
	struct strbuf why = { 0 };
	bool want = store_regress_get(st, rid, &g) == 0 && job_store_load(st, g.bad_job, &j, &why) >= 0 && j->bisect == JOB_BISECT_AUTO;
	job_free(j);
	sb_free(&why);
	return want;
}

/* A failure of the store or of memory is not the regression's: it is
 * asked for again at the next pass, unnoted. */
static bool transient(int r)
{
	return r == -ENOMEM || r == -EIO || r == -EBUSY;
}

/* 1 when its bisection was started, 0 when not (noted, or not wanted). */
static int ask_one(struct store *st, const struct bisect_env *env, int64_t rid)
{
	if (!wants_bisection(st, rid))
		return 0;
	const struct bisect_ask a = { .regression = rid, .submitter = AUTO_SUBMITTER };
	struct strbuf err = { 0 };
	int64_t id = 0;
	int r = bisect_create(st, env, &a, &id, &err);
	char note[512];
	if (r == 0)
		snprintf(note, sizeof(note), "bisection %lld, asked by %s", (long long)id, AUTO_SUBMITTER);
	else if (r == 1)
		snprintf(note, sizeof(note), "bisection %lld, asked before %s could", (long long)id, AUTO_SUBMITTER);
	else
		snprintf(note, sizeof(note), "not bisected (bisect = auto): %s", err.buf ? err.buf : strerror(-r));
	if (r < 0)
		log_warn("kabd: regression %lld: %s%s", (long long)rid, note, transient(r) ? "; asked again at the next pass" : "");
	sb_free(&err);
	if (transient(r))
		return 0;
	int e = store_bisect_auto_note(st, rid, note);
	if (e < 0 && e != -EALREADY)
		log_warn("kabd: regression %lld: what bisect = auto did could not be noted: %s", (long long)rid, strerror(-e));
	return r == 0;
}

int bisect_auto_all(struct store *st, const struct bisect_env *env)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int r = store_bisect_auto_todo(st, &ids, &n);
	if (r < 0)
		return r;
	int started = 0;
	for (size_t i = 0; i < n; i++)
		started += ask_one(st, env, ids[i]);
	free(ids);
	return started;
}
