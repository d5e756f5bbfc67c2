/* A tracked variant's commit of the night, on its variants row. */
#include "db/store_track.h"
#include "db/store.h"
#include "db/store_priv.h"

#include <errno.h>
#include <string.h>

int store_variant_track_set(struct store *s, int64_t job_id, size_t idx, const struct store_track *t)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "UPDATE variants SET track = ?, commit_sha = ?, commit_subject = ?, commit_date = ?, track_event = ?"
			      " WHERE job_id = ? AND idx = ?",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, t->track[0] ? t->track : NULL);
	store_bind_text(st, 2, t->sha[0] ? t->sha : NULL);
	store_bind_text(st, 3, t->sha[0] ? t->subject : NULL);
	if (t->sha[0])
		sqlite3_bind_double(st, 4, t->date);
	else
		sqlite3_bind_null(st, 4);
	store_bind_text(st, 5, t->event[0] ? t->event : NULL);
	sqlite3_bind_int64(st, 6, job_id);
	sqlite3_bind_int64(st, 7, (int64_t)idx);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	return sqlite3_changes(store_sqlite(s)) == 1 ? 0 : -ENOENT;
}

int store_variant_track_get(struct store *s, int64_t job_id, size_t idx, struct store_track *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT track, commit_sha, commit_subject, commit_date, track_event FROM variants"
			      " WHERE job_id = ? AND idx = ? AND track IS NOT NULL AND commit_sha IS NOT NULL",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, (int64_t)idx);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "select variant track");
	struct store_track t = { 0 };
	store_col_text(st, 0, t.track, sizeof(t.track));
	store_col_text(st, 1, t.sha, sizeof(t.sha));
	store_col_text(st, 2, t.subject, sizeof(t.subject));
	t.date = sqlite3_column_double(st, 3);
	store_col_text(st, 4, t.event, sizeof(t.event));
	*ret = t;
	return 0;
}

int store_track_previous(struct store *s, const char *job_name, const char *variant, const char *track,
			 int64_t before_job_id, char sha[41])
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "SELECT v.commit_sha FROM variants v JOIN jobs j ON j.id = v.job_id"
			      " WHERE j.name = ? AND v.name = ? AND v.track = ? AND v.commit_sha IS NOT NULL"
			      " AND (? <= 0 OR v.job_id < ?) ORDER BY v.job_id DESC LIMIT 1",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, job_name);
	store_bind_text(st, 2, variant);
	store_bind_text(st, 3, track);
	sqlite3_bind_int64(st, 4, before_job_id);
	sqlite3_bind_int64(st, 5, before_job_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "select previous track");
	char buf[64];
	store_col_text(st, 0, buf, sizeof(buf));
	if (strspn(buf, "0123456789abcdef") != 40 || buf[40])
		return -ENOENT;
	memcpy(sha, buf, 41);
	return 0;
}
