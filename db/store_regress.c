/* The regressions table of migration 11 (store_regress.h). */
#include "db/store_regress.h"
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATE_WORD(e, word) [e] = word,
static const char *const state_names[REGRESS_STATE_N] = { REGRESS_STATE_LIST(STATE_WORD) };

UTIL_WORD_FUNCS(regress_state, state_names, REGRESS_STATE_N)

bool store_regress_is_regression(const struct store_regress *r)
{
	return r->state == REGRESS_CONFIRMED && strcmp(r->verdict, "worse") == 0;
}

#define COLS \
	"id, created, name, workload, metric, variant_idx, direction, good_job, bad_job, good_night, bad_night," \
	" track, good_sha, bad_sha, good_subject, bad_subject, mean_before, mean_after, detected_pct," \
	" detected_p, machine, confirm_job, state, reason, estimate_pct, ci_lo_pct, ci_hi_pct, p, verdict," \
	" acked, acked_by, auto_bisect"

static const char *or_null(const char *v)
{
	return v && v[0] ? v : NULL;
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static void read_row(sqlite3_stmt *st, struct store_regress *r)
{
	*r = (struct store_regress){ 0 };
	int c = 0;
	r->id = sqlite3_column_int64(st, c++);
	r->created = sqlite3_column_double(st, c++);
	store_col_text(st, c++, r->name, sizeof(r->name));
	store_col_text(st, c++, r->workload, sizeof(r->workload));
	store_col_text(st, c++, r->metric, sizeof(r->metric));
	r->variant = sqlite3_column_int(st, c++);
	store_col_text(st, c++, r->direction, sizeof(r->direction));
	r->good_job = sqlite3_column_int64(st, c++);
	r->bad_job = sqlite3_column_int64(st, c++);
	r->good_night = col_num(st, c++);
	r->bad_night = col_num(st, c++);
	store_col_text(st, c++, r->track, sizeof(r->track));
	store_col_text(st, c++, r->good_sha, sizeof(r->good_sha));
	store_col_text(st, c++, r->bad_sha, sizeof(r->bad_sha));
	store_col_text(st, c++, r->good_subject, sizeof(r->good_subject));
	store_col_text(st, c++, r->bad_subject, sizeof(r->bad_subject));
	r->mean_before = col_num(st, c++);
	r->mean_after = col_num(st, c++);
	r->detected_pct = col_num(st, c++);
	r->detected_p = col_num(st, c++);
	store_col_text(st, c++, r->machine, sizeof(r->machine));
	r->confirm_job = sqlite3_column_int64(st, c++);
	const char *w = (const char *)sqlite3_column_text(st, c++);
	if (regress_state_parse(w, &r->state) < 0) {
		store_status_unknown("regressions", r->id, w ? w : "");
		r->state = REGRESS_STATE_UNKNOWN;
	}
	store_col_text(st, c++, r->reason, sizeof(r->reason));
	r->estimate_pct = col_num(st, c++);
	r->ci_lo_pct = col_num(st, c++);
	r->ci_hi_pct = col_num(st, c++);
	r->p = col_num(st, c++);
	store_col_text(st, c++, r->verdict, sizeof(r->verdict));
	r->acked = sqlite3_column_type(st, c) == SQLITE_NULL ? 0 : sqlite3_column_double(st, c);
	c++;
	store_col_text(st, c++, r->acked_by, sizeof(r->acked_by));
	store_col_text(st, c++, r->auto_bisect, sizeof(r->auto_bisect));
}

int store_regress_known(struct store *s, const char *name, const char *workload, const char *metric, int variant,
			int64_t bad_job, unsigned near, bool *ret)
{
	/* the distance in nights: how many jobs of the name lie between */
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT r.bad_job FROM regressions r WHERE r.name = ? AND r.workload = ? AND r.metric = ?"
			      " AND r.variant_idx = ? AND (SELECT count(*) FROM jobs j WHERE j.name = r.name"
			      " AND j.id > min(r.bad_job, ?) AND j.id <= max(r.bad_job, ?)) <= ?",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	store_bind_text(st, 2, workload);
	store_bind_text(st, 3, metric);
	sqlite3_bind_int(st, 4, variant);
	sqlite3_bind_int64(st, 5, bad_job);
	sqlite3_bind_int64(st, 6, bad_job);
	sqlite3_bind_int(st, 7, (int)near);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_db_err(s, "find a change point");
	*ret = rc == SQLITE_ROW;
	return 0;
}

int store_regress_add(struct store *s, const struct store_regress *g, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO regressions (created, name, workload, metric, variant_idx, direction, good_job,"
			      " bad_job, good_night, bad_night, track, good_sha, bad_sha, good_subject, bad_subject,"
			      " mean_before, mean_after, detected_pct, detected_p, machine, state, reason)"
			      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      &st);
	if (r < 0)
		return r;
	int c = 1;
	sqlite3_bind_double(st, c++, g->created);
	store_bind_text(st, c++, g->name);
	store_bind_text(st, c++, g->workload);
	store_bind_text(st, c++, g->metric);
	sqlite3_bind_int(st, c++, g->variant);
	store_bind_text(st, c++, or_null(g->direction));
	sqlite3_bind_int64(st, c++, g->good_job);
	sqlite3_bind_int64(st, c++, g->bad_job);
	bind_num(st, c++, g->good_night);
	bind_num(st, c++, g->bad_night);
	store_bind_text(st, c++, or_null(g->track));
	store_bind_text(st, c++, or_null(g->good_sha));
	store_bind_text(st, c++, or_null(g->bad_sha));
	store_bind_text(st, c++, or_null(g->good_subject));
	store_bind_text(st, c++, or_null(g->bad_subject));
	bind_num(st, c++, g->mean_before);
	bind_num(st, c++, g->mean_after);
	bind_num(st, c++, g->detected_pct);
	bind_num(st, c++, g->detected_p);
	store_bind_text(st, c++, or_null(g->machine));
	store_bind_text(st, c++, regress_state_name(g->state));
	store_bind_text(st, c++, or_null(g->reason));
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_err(s, "insert a change point");
	*ret_id = sqlite3_last_insert_rowid(store_sqlite(s));
	return 0;
}

int store_regress_set_confirm(struct store *s, int64_t id, int64_t confirm_job)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE regressions SET confirm_job = ? WHERE id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, confirm_job);
	sqlite3_bind_int64(st, 2, id);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, "set a confirmation job");
}

int store_regress_settle(struct store *s, const struct store_regress *g)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "UPDATE regressions SET state = ?, reason = ?, estimate_pct = ?, ci_lo_pct = ?,"
			      " ci_hi_pct = ?, p = ?, verdict = ? WHERE id = ?",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, regress_state_name(g->state));
	store_bind_text(st, 2, or_null(g->reason));
	bind_num(st, 3, g->estimate_pct);
	bind_num(st, 4, g->ci_lo_pct);
	bind_num(st, 5, g->ci_hi_pct);
	bind_num(st, 6, g->p);
	store_bind_text(st, 7, or_null(g->verdict));
	sqlite3_bind_int64(st, 8, g->id);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_err(s, "settle a change point");
}

static int get_where(struct store *s, const char *where, int64_t key, struct store_regress *ret)
{
	char sql[1024];
	snprintf(sql, sizeof(sql), "SELECT " COLS " FROM regressions WHERE %s = ? ORDER BY id DESC LIMIT 1", where);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, key);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_err(s, "read a change point");
	read_row(st, ret);
	return 0;
}

int store_regress_get(struct store *s, int64_t id, struct store_regress *ret)
{
	return get_where(s, "id", id, ret);
}

/* The rows of a query, its parameters ?1.. bound to keys in order. */
static int read_rows(struct store *s, const char *sql, const int64_t *keys, int n_keys, struct store_regress **ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	for (int i = 0; i < n_keys; i++)
		sqlite3_bind_int64(st, i + 1, keys[i]);
	struct store_regress *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 8) < 0) {
			free(v);
			return -ENOMEM;
		}
		read_row(st, &v[n++]);
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_db_err(s, "list change points");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_regress_by_confirm(struct store *s, int64_t confirm_job, struct store_regress **ret, size_t *ret_n)
{
	int r = read_rows(s, "SELECT " COLS " FROM regressions WHERE confirm_job = ?1 ORDER BY id", &confirm_job, 1, ret, ret_n);
	return r < 0 ? r : *ret_n ? 0 : -ENOENT;
}

int store_regress_list(struct store *s, struct store_regress **ret, size_t *ret_n)
{
	return read_rows(s, "SELECT " COLS " FROM regressions ORDER BY id DESC", NULL, 0, ret, ret_n);
}

int store_regress_page(struct store *s, int64_t before, size_t limit, bool confirmed, struct store_regress **ret, size_t *ret_n)
{
	/* below `before` (all when before <= 0), newest first, at most limit;
	 * only the confirmed ones when confirmed */
	const int64_t keys[] = { before, (int64_t)limit, confirmed };
	return read_rows(s,
			 "SELECT " COLS " FROM regressions WHERE (?1 <= 0 OR id < ?1) AND (?3 = 0 OR state = 'confirmed')"
			 " ORDER BY id DESC LIMIT ?2",
			 keys, 3, ret, ret_n);
}

int store_regress_open_counts(struct store *s, store_regress_count_fn fn, void *ctx)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	/* a series a (job, metric, verdict) of confirmed rows, in the order of
	 * its newest row; open: not acknowledged */
	int r = store_prepare(s,
			      "SELECT name, metric, CASE verdict WHEN 'worse' THEN 'worse' WHEN 'better' THEN 'better' ELSE '' END AS v,"
			      " sum(acked IS NULL OR acked <= 0) FROM regressions WHERE state = 'confirmed'"
			      " GROUP BY name, metric, v ORDER BY max(id) DESC",
			      &st);
	if (r < 0)
		return r;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0), *metric = (const char *)sqlite3_column_text(st, 1);
		const char *verdict = (const char *)sqlite3_column_text(st, 2);
		fn(ctx, name ? name : "", metric ? metric : "", verdict ? verdict : "", (size_t)sqlite3_column_int64(st, 3));
	}
	return rc == SQLITE_DONE ? 0 : store_db_err(s, "count open change points");
}

int store_regress_ack(struct store *s, int64_t id, const char *by, double when)
{
	struct store_regress g;
	int r = store_regress_get(s, id, &g);
	if (r < 0)
		return r;
	if (g.acked > 0)
		return -EALREADY;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = store_prepare(s, "UPDATE regressions SET acked = ?, acked_by = ? WHERE id = ? AND acked IS NULL", &st)) < 0)
		return r;
	sqlite3_bind_double(st, 1, when);
	store_bind_text(st, 2, or_null(by));
	sqlite3_bind_int64(st, 3, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return store_db_err(s, "acknowledge a change point");
	return sqlite3_changes(store_sqlite(s)) == 1 ? 0 : -EALREADY;
}
