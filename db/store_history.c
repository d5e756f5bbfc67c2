/* SQLite storage of the nightly history: night markers and their rows
 * (store_history.h). A year of one metric is one indexed read. */
#include "db/store_history.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static int delete_where(struct store *s, const char *sql_rows, const char *sql_nights, int64_t id, const char *name)
{
	const char *sqls[] = { sql_rows, sql_nights };
	for (size_t i = 0; i < ARRAY_SIZE(sqls); i++) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		int r = store_prepare(s, sqls[i], &st);
		if (r < 0)
			return r;
		if (name)
			store_bind_text(st, 1, name);
		else
			sqlite3_bind_int64(st, 1, id);
		if ((r = store_step_done(s, st)) < 0)
			return r;
	}
	return 0;
}

static int delete_job(struct store *s, int64_t job_id)
{
	return delete_where(s, "DELETE FROM history WHERE job_id = ?", "DELETE FROM history_nights WHERE job_id = ?", job_id, NULL);
}

static int put_night(struct store *s, const char *name, const struct store_history_night *n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO history_nights (job_id, name, night, status, reason, runs, runs_failed,"
			      " computed, kab_version, schema_version) VALUES (?,?,?,?,?,?,?,?,?,?)",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, n->job_id);
	store_bind_text(st, 2, name);
	sqlite3_bind_double(st, 3, n->night);
	store_bind_text(st, 4, job_status_name(n->status));
	store_bind_text(st, 5, n->reason[0] ? n->reason : NULL);
	sqlite3_bind_int(st, 6, (int)n->runs);
	sqlite3_bind_int(st, 7, (int)n->runs_failed);
	sqlite3_bind_double(st, 8, util_real_now());
	store_bind_text(st, 9, KAB_VERSION);
	sqlite3_bind_int(st, 10, STORE_SCHEMA_VERSION);
	return store_step_done(s, st);
}

static int put_rows(struct store *s, const char *name, double night, const struct store_history_row *rows, size_t n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs,"
			      " estimate_pct, ci_lo_pct, ci_hi_pct, p, verdict, median_base, median_variant, unit,"
			      " direction, is_primary, rank, variant_name, base_name)"
			      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			      &st);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct store_history_row *x = &rows[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, x->job_id);
		store_bind_text(st, 2, name);
		sqlite3_bind_double(st, 3, night);
		store_bind_text(st, 4, x->workload);
		store_bind_text(st, 5, x->metric);
		sqlite3_bind_int(st, 6, x->variant);
		sqlite3_bind_int(st, 7, (int)x->pairs);
		bind_num(st, 8, x->estimate_pct);
		bind_num(st, 9, x->ci_lo_pct);
		bind_num(st, 10, x->ci_hi_pct);
		bind_num(st, 11, x->p);
		store_bind_text(st, 12, x->verdict[0] ? x->verdict : NULL);
		bind_num(st, 13, x->median_base);
		bind_num(st, 14, x->median_variant);
		store_bind_text(st, 15, x->unit);
		store_bind_text(st, 16, x->direction);
		sqlite3_bind_int(st, 17, x->primary);
		sqlite3_bind_int(st, 18, x->rank);
		store_bind_text(st, 19, x->variant_name);
		store_bind_text(st, 20, x->base_name);
		r = store_step_done(s, st);
	}
	return r;
}

int store_history_put(struct store *s, const char *name, const struct store_history_night *night,
		      const struct store_history_row *rows, size_t n)
{
	if (!name || !night || night->job_id <= 0 || night->status < 0 || night->status >= JOB_STATUS_N)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (rows[i].job_id != night->job_id || rows[i].variant < 1)
			return -EINVAL;
	int r = store_begin(s);
	if (r < 0)
		return r;
	if ((r = delete_job(s, night->job_id)) >= 0 && (r = put_night(s, name, night)) >= 0)
		r = put_rows(s, name, night->night, rows, n);
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	if ((r = store_commit(s)) < 0)
		store_rollback(s);
	return r;
}

int store_history_missing(struct store *s, const char *name, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char finished[128];
	job_status_sql_set(job_status_finished, finished, sizeof(finished));
	int r = store_preparef(s, &st,
			       "SELECT j.id FROM jobs j LEFT JOIN history_nights h ON h.job_id = j.id WHERE j.name = ?"
			       " AND j.status IN (%s) AND (h.job_id IS NULL OR h.status != j.status) ORDER BY j.id",
			       finished);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(ids, cap, n + 1, 16) < 0) {
			free(ids);
			return -ENOMEM;
		}
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		free(ids);
		return store_sql_err(s, rc, "history: ended jobs");
	}
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}

static void read_commit(sqlite3_stmt *st, int c, struct store_history_commit *x)
{
	x->variant = sqlite3_column_int(st, c);
	store_col_text(st, c + 1, x->track, sizeof(x->track));
	store_col_text(st, c + 2, x->sha, sizeof(x->sha));
	store_col_text(st, c + 3, x->subject, sizeof(x->subject));
	x->date = sqlite3_column_type(st, c + 4) == SQLITE_NULL ? 0 : sqlite3_column_double(st, c + 4);
	store_col_text(st, c + 5, x->event, sizeof(x->event));
}

int store_history_nights(struct store *s, const char *name, struct store_history_night **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT h.job_id, h.night, h.status, h.reason, h.runs, h.runs_failed,"
			      " v.idx, v.track, v.commit_sha, v.commit_subject, v.commit_date, v.track_event"
			      " FROM history_nights h LEFT JOIN variants v ON v.job_id = h.job_id AND v.track IS NOT NULL"
			      " WHERE h.name = ? ORDER BY h.night, h.job_id, v.idx",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	struct store_history_night *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (n == 0 || v[n - 1].job_id != id) {
			if (util_grow(v, cap, n + 1, 64) < 0) {
				free(v);
				return -ENOMEM;
			}
			struct store_history_night *x = &v[n++];
			*x = (struct store_history_night){ .job_id = id, .night = sqlite3_column_double(st, 1) };
			char word[32];
			store_col_text(st, 2, word, sizeof(word));
			if (job_status_parse(word, &x->status) < 0) {
				store_status_unknown("history night", id, word);
				x->status = JOB_STATUS_UNKNOWN;
			}
			store_col_text(st, 3, x->reason, sizeof(x->reason));
			x->runs = (unsigned)sqlite3_column_int(st, 4);
			x->runs_failed = (unsigned)sqlite3_column_int(st, 5);
		}
		struct store_history_night *x = &v[n - 1];
		if (sqlite3_column_type(st, 6) != SQLITE_NULL && x->n_commits < STORE_HISTORY_COMMITS)
			read_commit(st, 6, &x->commits[x->n_commits++]);
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "history: nights");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static void read_row(sqlite3_stmt *st, struct store_history_row *x)
{
	*x = (struct store_history_row){ .job_id = sqlite3_column_int64(st, 0), .night = sqlite3_column_double(st, 1) };
	store_col_text(st, 2, x->workload, sizeof(x->workload));
	store_col_text(st, 3, x->metric, sizeof(x->metric));
	x->variant = sqlite3_column_int(st, 4);
	x->pairs = (unsigned)sqlite3_column_int(st, 5);
	x->estimate_pct = col_num(st, 6);
	x->ci_lo_pct = col_num(st, 7);
	x->ci_hi_pct = col_num(st, 8);
	x->p = col_num(st, 9);
	store_col_text(st, 10, x->verdict, sizeof(x->verdict));
	x->median_base = col_num(st, 11);
	x->median_variant = col_num(st, 12);
	store_col_text(st, 13, x->unit, sizeof(x->unit));
	store_col_text(st, 14, x->direction, sizeof(x->direction));
	x->primary = sqlite3_column_int(st, 15) != 0;
	x->rank = sqlite3_column_int(st, 16);
	store_col_text(st, 17, x->variant_name, sizeof(x->variant_name));
	store_col_text(st, 18, x->base_name, sizeof(x->base_name));
}

/* The statement for f: each filter the index can serve is written out,
 * never "?N IS NULL OR col = ?N", which keeps SQLite from the index. */
static void rows_sql(const struct store_history_filter *f, struct strbuf *sb)
{
	sb_puts(sb, "SELECT job_id, night, workload, metric, variant_idx, pairs, estimate_pct, ci_lo_pct, ci_hi_pct, p,"
		    " verdict, median_base, median_variant, unit, direction, is_primary, rank, variant_name, base_name"
		    " FROM history WHERE name = ?1");
	if (f->metric)
		sb_puts(sb, " AND metric = ?2");
	if (f->primary_only)
		sb_puts(sb, " AND is_primary = 1");
	else if (f->first_rank)
		sb_puts(sb, " AND is_primary = 0 AND rank = 0"); /* primary metrics rank first */
	if (f->workload)
		sb_puts(sb, " AND workload = ?3");
	if (f->variant >= 0)
		sb_puts(sb, " AND variant_idx = ?4");
	sb_puts(sb, " ORDER BY night, job_id, workload, metric, variant_idx");
}

int store_history_rows(struct store *s, const char *name, const struct store_history_filter *f,
		       struct store_history_row **ret, size_t *ret_n)
{
	struct store_history_filter all = { .variant = -1 };
	if (!f)
		f = &all;
	struct strbuf sql = { 0 };
	rows_sql(f, &sql);
	if (!sql.buf)
		return -ENOMEM;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql.buf, &st);
	sb_free(&sql);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	if (f->metric)
		store_bind_text(st, 2, f->metric);
	if (f->workload)
		store_bind_text(st, 3, f->workload);
	if (f->variant >= 0)
		sqlite3_bind_int(st, 4, f->variant);
	struct store_history_row *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 256) < 0) {
			free(v);
			return -ENOMEM;
		}
		read_row(st, &v[n++]);
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "history: rows");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void store_history_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int read_names(struct store *s, const char *sql, const char *name, char ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	if (name)
		store_bind_text(st, 1, name);
	char **v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 32) < 0)
			goto nomem;
		if (!(v[n] = store_col_dup(st, 0)))
			goto nomem;
		n++;
	}
	if (rc != SQLITE_DONE) {
		store_history_names_free(v, n);
		return store_sql_err(s, rc, "history: names");
	}
	*ret = v;
	*ret_n = n;
	return 0;
nomem:
	store_history_names_free(v, n);
	return -ENOMEM;
}

/* One index seek per distinct metric (a year has ~100 rows of each):
 * SELECT DISTINCT would walk every row of the name. */
int store_history_metric_names(struct store *s, const char *name, char ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT min(metric) FROM history WHERE name = ?1 AND metric > ?2", &st);
	if (r < 0)
		return r;
	char **v = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		sqlite3_reset(st);
		store_bind_text(st, 1, name);
		store_bind_text(st, 2, n ? v[n - 1] : "");
		int rc = sqlite3_step(st);
		if (rc != SQLITE_ROW) {
			store_history_names_free(v, n);
			return store_sql_err(s, rc, "history: metrics");
		}
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			break;
		if (util_grow(v, cap, n + 1, 32) < 0)
			goto nomem;
		if (!(v[n] = store_col_dup(st, 0)))
			goto nomem;
		n++;
	}
	*ret = v;
	*ret_n = n;
	return 0;
nomem:
	store_history_names_free(v, n);
	return -ENOMEM;
}

int store_history_missing_names(struct store *s, char ***ret, size_t *ret_n)
{
	char finished[128], sql[256];
	job_status_sql_set(job_status_finished, finished, sizeof(finished));
	return read_names(s,
			  store_sql(sql, sizeof(sql),
				    "SELECT DISTINCT j.name FROM jobs j LEFT JOIN history_nights h ON h.job_id = j.id"
				    " WHERE j.status IN (%s) AND (h.job_id IS NULL OR h.status != j.status) ORDER BY j.name",
				    finished),
			  NULL, ret, ret_n);
}

int store_history_names(struct store *s, char ***ret, size_t *ret_n)
{
	return read_names(s, "SELECT DISTINCT name FROM history_nights ORDER BY name", NULL, ret, ret_n);
}

int store_history_delete_job(struct store *s, int64_t job_id)
{
	if (job_id <= 0)
		return -EINVAL;
	return delete_job(s, job_id);
}

int store_history_delete_name(struct store *s, const char *name)
{
	if (!name)
		return -EINVAL;
	return delete_where(s, "DELETE FROM history WHERE name = ?", "DELETE FROM history_nights WHERE name = ?", 0, name);
}

int store_history_version(struct store *s, const char *name, int64_t *ret_nights, double *ret_computed)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT count(*), coalesce(max(computed), 0) FROM history_nights WHERE name = ?", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_err(s, "read a history's version");
	*ret_nights = sqlite3_column_int64(st, 0);
	*ret_computed = sqlite3_column_double(st, 1);
	return 0;
}
