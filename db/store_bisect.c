/* The bisections and bisection_jobs tables of migration 13
 * (store_bisect.h), and the build outcomes a bisection reads. */
#include "db/store_bisect.h"
#include "db/store.h"
#include "db/store_priv.h"
#include "db/store_regress.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATE_WORD(e, word) [e] = word,
static const char *const state_names[BISECT_STATE_N] = { BISECT_STATE_LIST(STATE_WORD) };

UTIL_WORD_FUNCS(bisect_state, state_names, BISECT_STATE_N)

/* A bisection's life (store_bisect.h): which state may follow which. */
static const unsigned bisect_next[BISECT_STATE_N] = {
	[BISECT_RUNNING] = BISECT_FROM(BISECT_DONE) | BISECT_FROM(BISECT_REFUSED) | BISECT_FROM(BISECT_FAILED) |
			   BISECT_FROM(BISECT_CANCELLED),
};

bool bisect_transition_allowed(enum bisect_state from, enum bisect_state to)
{
	if (from < 0 || from >= BISECT_STATE_N || to < 0 || to >= BISECT_STATE_N)
		return false;
	return from == to || (bisect_next[from] & BISECT_FROM(to));
}

bool bisect_state_ended(enum bisect_state s)
{
	return s != BISECT_RUNNING;
}

#define COLS \
	"id, created, ended, regression_id, source_job, variant_idx, tree, series, good, bad, workload, metric," \
	" direction, state, reason, report, submitter, boots"

static void read_row(sqlite3_stmt *st, void *elem)
{
	struct store_bisect *b = elem;
	int c = 0;
	b->id = sqlite3_column_int64(st, c++);
	b->created = sqlite3_column_double(st, c++);
	b->ended = sqlite3_column_double(st, c++);
	b->regression = sqlite3_column_int64(st, c++);
	b->source_job = sqlite3_column_int64(st, c++);
	b->variant = sqlite3_column_int(st, c++);
	store_col_text(st, c++, b->tree, sizeof(b->tree));
	store_col_text(st, c++, b->series, sizeof(b->series));
	store_col_text(st, c++, b->good, sizeof(b->good));
	store_col_text(st, c++, b->bad, sizeof(b->bad));
	store_col_text(st, c++, b->workload, sizeof(b->workload));
	store_col_text(st, c++, b->metric, sizeof(b->metric));
	store_col_text(st, c++, b->direction, sizeof(b->direction));
	const char *w = (const char *)sqlite3_column_text(st, c++);
	if (bisect_state_parse(w, &b->state) < 0) {
		store_status_unknown("bisections", b->id, w ? w : "");
		b->state = BISECT_STATE_UNKNOWN;
	}
	store_col_text(st, c++, b->reason, sizeof(b->reason));
	b->report = store_col_dup(st, c++);
	store_col_text(st, c++, b->submitter, sizeof(b->submitter));
	b->boots = (unsigned)sqlite3_column_int64(st, c++);
}

void store_bisect_clear(struct store_bisect *b)
{
	if (!b)
		return;
	free(b->report);
	b->report = NULL;
}

static void clear_row(void *elem)
{
	store_bisect_clear(elem);
}

static const char *or_null(const char *v)
{
	return v && v[0] ? v : NULL;
}

/* Inside the caller's transaction: the bisection of regression that runs
 * or is done; 0 when none. */
static int regression_taken(struct store *s, int64_t regression, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_preparef(s, &st,
			       "SELECT id FROM bisections WHERE regression_id = ? AND state IN ('%s', '%s')"
			       " ORDER BY id LIMIT 1",
			       bisect_state_name(BISECT_RUNNING), bisect_state_name(BISECT_DONE));
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, regression);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_db_err(s, "find a regression's bisection");
	*ret_id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	return 0;
}

static int insert(struct store *s, const struct store_bisect *b, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO bisections (created, regression_id, source_job, variant_idx, tree, series, good, bad,"
			      " workload, metric, direction, state, reason, submitter, kab_version, schema_version, boots)"
			      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      &st);
	if (r < 0)
		return r;
	int c = 1;
	sqlite3_bind_double(st, c++, b->created > 0 ? b->created : util_real_now());
	if (b->regression > 0)
		sqlite3_bind_int64(st, c++, b->regression);
	else
		sqlite3_bind_null(st, c++);
	sqlite3_bind_int64(st, c++, b->source_job);
	sqlite3_bind_int(st, c++, b->variant);
	store_bind_text(st, c++, b->tree);
	store_bind_text(st, c++, or_null(b->series));
	store_bind_text(st, c++, b->good);
	store_bind_text(st, c++, b->bad);
	store_bind_text(st, c++, b->workload);
	store_bind_text(st, c++, b->metric);
	store_bind_text(st, c++, or_null(b->direction));
	store_bind_text(st, c++, bisect_state_name(BISECT_RUNNING));
	store_bind_text(st, c++, or_null(b->reason));
	store_bind_text(st, c++, or_null(b->submitter));
	store_bind_text(st, c++, KAB_VERSION);
	sqlite3_bind_int(st, c++, STORE_SCHEMA_VERSION);
	sqlite3_bind_int64(st, c++, b->boots);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_bisect_add(struct store *s, const struct store_bisect *b, int64_t *ret_id)
{
	int r = store_begin(s);
	if (r < 0)
		return r;
	int64_t id = 0;
	if (b->regression > 0 && (r = regression_taken(s, b->regression, &id)) >= 0 && id > 0)
		r = -EEXIST;
	if (r >= 0)
		r = insert(s, b, &id);
	if (r >= 0)
		r = store_commit(s);
	if (r < 0 && store_rollback(s) < 0)
		log_warn("database: a bisection's insert could not be rolled back: %s", store_errmsg(s));
	if (r >= 0 || r == -EEXIST)
		*ret_id = id;
	return r;
}

int store_bisect_get(struct store *s, int64_t id, struct store_bisect *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT " COLS " FROM bisections WHERE id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	*ret = (struct store_bisect){ 0 };
	return store_row(s, st, read_row, ret, "read a bisection");
}

static void read_id(sqlite3_stmt *st, void *elem)
{
	*(int64_t *)elem = sqlite3_column_int64(st, 0);
}

int store_bisect_running(struct store *s, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_preparef(s, &st, "SELECT id FROM bisections WHERE state = '%s' ORDER BY id", bisect_state_name(BISECT_RUNNING));
	if (r < 0)
		return r;
	return store_rows(s, st, sizeof(int64_t), read_id, NULL, (void **)ret_ids, ret_n, "list the running bisections");
}

int store_bisect_page(struct store *s, int64_t before, size_t limit, struct store_bisect **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT " COLS " FROM bisections WHERE ?1 <= 0 OR id < ?1 ORDER BY id DESC LIMIT ?2", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int64(st, 2, limit > INT32_MAX ? INT32_MAX : (int64_t)limit);
	return store_rows(s, st, sizeof(**ret), read_row, clear_row, (void **)ret, ret_n, "list the bisections");
}

int store_bisect_of_regressions(struct store *s, int64_t lo, int64_t hi, struct store_bisect **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT " COLS " FROM bisections WHERE id IN (SELECT max(id) FROM bisections"
			      " WHERE regression_id BETWEEN ?1 AND ?2 GROUP BY regression_id) ORDER BY regression_id",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	return store_rows(s, st, sizeof(**ret), read_row, clear_row, (void **)ret, ret_n, "find the regressions' bisections");
}

int store_bisect_set_state(struct store *s, int64_t id, unsigned from_set, enum bisect_state to, const char *reason, const char *report)
{
	if (to < 0 || to >= BISECT_STATE_N)
		return -EINVAL;
	/* the states it may follow, of those the caller names (?5..?9), in
	 * the statement that writes: an unused placeholder is NULL */
	_Static_assert(BISECT_STATE_N <= 5, "one placeholder a state");
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "UPDATE bisections SET state = ?1, reason = ?2, report = coalesce(?3, report),"
			      " ended = CASE WHEN ?10 THEN coalesce(ended, ?4) ELSE NULL END"
			      " WHERE id = ?11 AND state IN (?5, ?6, ?7, ?8, ?9)",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, bisect_state_name(to));
	store_bind_text(st, 2, reason);
	store_bind_text(st, 3, report);
	sqlite3_bind_double(st, 4, util_real_now());
	int k = 5;
	for (int f = 0; f < BISECT_STATE_N; f++)
		if ((from_set & BISECT_FROM(f)) && bisect_transition_allowed((enum bisect_state)f, to))
			store_bind_text(st, k++, bisect_state_name((enum bisect_state)f));
	sqlite3_bind_int(st, 10, bisect_state_ended(to));
	sqlite3_bind_int64(st, 11, id);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	if (sqlite3_changes(s->db) == 1)
		return 0;
	struct store_bisect b;
	if (store_bisect_get(s, id, &b) < 0)
		return -ENOENT;
	log_error("bisection %lld is %s: it cannot become %s here (a bisection's life, db/store_bisect.h); its state is kept",
		  (long long)id,
		  b.state == BISECT_STATE_UNKNOWN ? "in a state this kab does not know" : bisect_state_name(b.state),
		  bisect_state_name(to));
	store_bisect_clear(&b);
	return -EPERM;
}

int store_bisect_job_add(struct store *s, const struct store_bisect_job *j, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO bisection_jobs (bisection_id, job_id, name, sha, base, k, created, control)"
			      " VALUES (?, NULL, ?, ?, ?, ?, ?, ?)",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, j->bisection);
	store_bind_text(st, 2, j->name);
	store_bind_text(st, 3, j->sha);
	store_bind_text(st, 4, j->base);
	sqlite3_bind_int(st, 5, (int)j->k);
	sqlite3_bind_double(st, 6, util_real_now());
	if (j->control[0])
		store_bind_text(st, 7, j->control);
	else
		sqlite3_bind_null(st, 7);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_bisect_job_link(struct store *s, int64_t row_id, int64_t job_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE bisection_jobs SET job_id = ? WHERE id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, row_id);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	return sqlite3_changes(s->db) == 1 ? 0 : -ENOENT;
}

static void read_job(sqlite3_stmt *st, void *elem)
{
	struct store_bisect_job *j = elem;
	j->id = sqlite3_column_int64(st, 0);
	j->bisection = sqlite3_column_int64(st, 1);
	j->job = sqlite3_column_int64(st, 2);
	store_col_text(st, 3, j->name, sizeof(j->name));
	store_col_text(st, 4, j->sha, sizeof(j->sha));
	store_col_text(st, 5, j->base, sizeof(j->base));
	j->k = (unsigned)sqlite3_column_int(st, 6);
	const char *w = (const char *)sqlite3_column_text(st, 7);
	if (!w || job_status_parse(w, &j->status) < 0)
		j->status = JOB_STATUS_UNKNOWN;
	store_col_text(st, 8, j->reason, sizeof(j->reason));
	store_col_text(st, 9, j->control, sizeof(j->control));
}

int store_bisect_jobs(struct store *s, int64_t bisection, struct store_bisect_job **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT b.id, b.bisection_id, coalesce(b.job_id, 0), b.name, b.sha, b.base, b.k, j.status, j.reason, b.control"
			      " FROM bisection_jobs b LEFT JOIN jobs j ON j.id = b.job_id WHERE b.bisection_id = ? ORDER BY b.id",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, bisection);
	return store_rows(s, st, sizeof(**ret), read_job, NULL, (void **)ret, ret_n, "list a bisection's step jobs");
}

int store_bisect_load(struct store *s, int64_t id, struct store_bisect *ret, struct store_bisect_job **ret_jobs, size_t *ret_n)
{
	int r = store_bisect_get(s, id, ret);
	if (r >= 0 && (r = store_bisect_jobs(s, id, ret_jobs, ret_n)) < 0)
		store_bisect_clear(ret);
	return r;
}

static int one_id(struct store *s, const char *sql, int64_t key, const char *text, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	if (text)
		store_bind_text(st, 1, text);
	else
		sqlite3_bind_int64(st, 1, key);
	return store_row(s, st, read_id, ret, "find an id");
}

int store_bisect_of_job(struct store *s, int64_t job_id, int64_t *ret_bisection)
{
	return one_id(s, "SELECT bisection_id FROM bisection_jobs WHERE job_id = ?", job_id, NULL, ret_bisection);
}

int store_job_by_name(struct store *s, const char *name, int64_t *ret_id)
{
	return one_id(s, "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1", 0, name, ret_id);
}

int store_bisect_boots_spent(struct store *s, int64_t bisection, unsigned *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT count(*) FROM boots WHERE job_id IN"
			      " (SELECT job_id FROM bisection_jobs WHERE bisection_id = ? AND job_id IS NOT NULL)",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, bisection);
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_err(s, "count a bisection's boots");
	sqlite3_int64 n = sqlite3_column_int64(st, 0);
	*ret = n > UINT_MAX ? UINT_MAX : (unsigned)n;
	return 0;
}

int store_bisect_auto_todo(struct store *s, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	/* LIKE only narrows: the job's text is parsed by the caller */
	int r = store_preparef(s, &st,
			       "SELECT r.id FROM regressions r JOIN jobs j ON j.id = r.bad_job"
			       " WHERE r.state = '%s' AND r.auto_bisect IS NULL AND j.text LIKE '%%bisect%%'"
			       " AND NOT EXISTS (SELECT 1 FROM bisections b WHERE b.regression_id = r.id) ORDER BY r.id",
			       regress_state_name(REGRESS_CONFIRMED));
	if (r < 0)
		return r;
	return store_rows(s, st, sizeof(int64_t), read_id, NULL, (void **)ret_ids, ret_n, "list the regressions bisect = auto asks for");
}

int store_bisect_auto_note(struct store *s, int64_t regression, const char *note)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE regressions SET auto_bisect = ? WHERE id = ? AND auto_bisect IS NULL", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, note ? note : "");
	sqlite3_bind_int64(st, 2, regression);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	if (sqlite3_changes(s->db) == 1)
		return 0;
	struct store_regress g;
	return store_regress_get(s, regression, &g) < 0 ? -ENOENT : -EALREADY;
}

int store_bisect_build(struct store *s, const char *tree, const char *series, const char *sha, enum build_status *ret,
		       char *why, size_t len)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	/* an ok build first, then the newest failed one */
	int r = store_preparef(s, &st,
			       "SELECT status, reason FROM builds WHERE tree = ? AND base_sha = ? AND series IS ?"
			       " AND kind = 'build' AND status IN ('%s', '%s')"
			       " ORDER BY status = '%s' DESC, id DESC LIMIT 1",
			       build_status_name(BUILD_OK), build_status_name(BUILD_FAILED), build_status_name(BUILD_OK));
	if (r < 0)
		return r;
	store_bind_text(st, 1, tree);
	store_bind_text(st, 2, sha);
	store_bind_text(st, 3, or_null(series));
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_err(s, "find a commit's build");
	enum build_status b;
	if (build_status_parse((const char *)sqlite3_column_text(st, 0), &b) < 0)
		return -ENOENT;
	store_col_text(st, 1, why, len);
	*ret = b;
	return 0;
}

int store_bisect_build_id(struct store *s, const char *tree, const char *series, const char *config_hash,
			  const char *sha, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_preparef(s, &st,
			       "SELECT id FROM builds WHERE tree = ? AND base_sha = ? AND series IS ? AND config_hash = ?"
			       " AND kind = 'build' AND status = '%s' ORDER BY id DESC LIMIT 1",
			       build_status_name(BUILD_OK));
	if (r < 0)
		return r;
	store_bind_text(st, 1, tree);
	store_bind_text(st, 2, sha);
	store_bind_text(st, 3, or_null(series));
	store_bind_text(st, 4, config_hash);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_err(s, "find a commit's build");
	*ret_id = sqlite3_column_int64(st, 0);
	return 0;
}
