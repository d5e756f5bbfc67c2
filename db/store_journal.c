/* SQLite storage: the journal of machine changes kab has to undo. */
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int store_journal_add(struct store *s, const struct store_journal *e, int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "INSERT INTO journal (job_id, kind, target, original, boot_id, created) VALUES (?,?,?,?,?,?)", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, e->job_id);
	store_bind_text(st, 2, e->kind);
	store_bind_text(st, 3, e->target);
	store_bind_text(st, 4, e->original);
	store_bind_text(st, 5, e->boot_id);
	sqlite3_bind_double(st, 6, util_real_now());
	if ((r = store_step_done(s, st)) < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_journal_list(struct store *s, struct store_journal **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT id, job_id, kind, target, original, boot_id FROM journal ORDER BY id DESC", &st);
	if (r < 0)
		return r;
	struct store_journal *v = NULL;
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_journal *nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		struct store_journal *e = &v[n++];
		e->id = sqlite3_column_int64(st, 0);
		e->job_id = sqlite3_column_int64(st, 1);
		store_col_text(st, 2, e->kind, sizeof(e->kind));
		store_col_text(st, 3, e->target, sizeof(e->target));
		store_col_text(st, 4, e->original, sizeof(e->original));
		store_col_text(st, 5, e->boot_id, sizeof(e->boot_id));
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "journal");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_journal_del(struct store *s, int64_t id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "DELETE FROM journal WHERE id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return store_step_done(s, st);
}
