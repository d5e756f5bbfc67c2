/* The boots table of migration 6. */
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COLS "id, job_id, slot, variant_idx, build_id, method, status, reason, from_boot_id, switch_at, prep_s," \
	     " cmdline, boot_id, kernel_release, booted_cmdline, ready_at, uptime_s, kexec_s"

/* An empty text field is stored as NULL. */
static const char *or_null(const char *v) { return v && v[0] ? v : NULL; }

static int run(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_db_err(s, what);
}

int store_boot_begin(struct store *s, const struct store_boot *b, int64_t *ret_id)
{
	sqlite3_stmt *st;
	int r = store_preparef(s, &st,
			       "INSERT INTO boots (job_id, slot, variant_idx, build_id, method, status, from_boot_id,"
			       " switch_at, cmdline) VALUES (?, ?, ?, ?, ?, '%s', ?, ?, ?)",
			       boot_status_name(BOOT_SWITCHING));
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, b->job_id);
	sqlite3_bind_int(st, 2, b->slot);
	sqlite3_bind_int(st, 3, b->variant);
	sqlite3_bind_int64(st, 4, b->build_id);
	store_bind_text(st, 5, or_null(b->method));
	sqlite3_bind_text(st, 6, b->from_boot_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 7, b->switch_at);
	sqlite3_bind_text(st, 8, b->cmdline, -1, SQLITE_TRANSIENT);
	r = run(s, st, "insert boot");
	if (r == 0)
		*ret_id = sqlite3_last_insert_rowid(store_sqlite(s));
	return r;
}

int store_boot_prepared(struct store *s, int64_t id, double prep_s)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "UPDATE boots SET prep_s = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	sqlite3_bind_double(st, 1, prep_s);
	sqlite3_bind_int64(st, 2, id);
	return run(s, st, "update boot");
}

int store_boot_finish(struct store *s, const struct store_boot *b)
{
	if (b->status < 0 || b->status >= BOOT_STATUS_N)
		return -EINVAL;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s),
			       "UPDATE boots SET status = ?, reason = ?, boot_id = ?, kernel_release = ?, booted_cmdline = ?,"
			       " ready_at = ?, uptime_s = ?, kexec_s = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	store_bind_text(st, 1, boot_status_name(b->status));
	store_bind_text(st, 2, or_null(b->reason));
	store_bind_text(st, 3, or_null(b->boot_id));
	store_bind_text(st, 4, or_null(b->kernel_release));
	store_bind_text(st, 5, or_null(b->booted_cmdline));
	if (b->ready_at > 0) {
		sqlite3_bind_double(st, 6, b->ready_at);
		sqlite3_bind_double(st, 7, b->uptime_s);
		sqlite3_bind_double(st, 8, b->kexec_s);
	}
	sqlite3_bind_int64(st, 9, b->id);
	return run(s, st, "update boot");
}

static void read_boot(sqlite3_stmt *st, struct store_boot *b)
{
	*b = (struct store_boot){ .id = sqlite3_column_int64(st, 0), .job_id = sqlite3_column_int64(st, 1) };
	b->slot = sqlite3_column_int(st, 2);
	b->variant = sqlite3_column_int(st, 3);
	b->build_id = sqlite3_column_int64(st, 4);
	store_col_text(st, 5, b->method, sizeof(b->method));
	char status[24];
	store_col_text(st, 6, status, sizeof(status));
	if (boot_status_parse(status, &b->status) < 0) {
		store_status_unknown("boot", b->id, status);
		b->status = BOOT_STATUS_UNKNOWN;
	}
	store_col_text(st, 7, b->reason, sizeof(b->reason));
	store_col_text(st, 8, b->from_boot_id, sizeof(b->from_boot_id));
	b->switch_at = sqlite3_column_double(st, 9);
	b->prep_s = sqlite3_column_double(st, 10);
	store_col_text(st, 11, b->cmdline, sizeof(b->cmdline));
	store_col_text(st, 12, b->boot_id, sizeof(b->boot_id));
	store_col_text(st, 13, b->kernel_release, sizeof(b->kernel_release));
	store_col_text(st, 14, b->booted_cmdline, sizeof(b->booted_cmdline));
	b->ready_at = sqlite3_column_double(st, 15);
	b->uptime_s = sqlite3_column_double(st, 16);
	b->kexec_s = sqlite3_column_double(st, 17);
}

int store_boots_load(struct store *s, int64_t job_id, struct store_boot **ret, size_t *ret_n)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "SELECT " COLS " FROM boots WHERE job_id = ? ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	sqlite3_bind_int64(st, 1, job_id);
	struct store_boot *v = NULL;
	size_t n = 0;
	int rc, r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_boot *nv = realloc(v, (n + 1) * sizeof(*nv));
		if (!nv) {
			r = -ENOMEM;
			break;
		}
		v = nv;
		read_boot(st, &v[n++]);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_db_err(s, "select boots");
	sqlite3_finalize(st);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_boots_foreach(struct store *s, int64_t job_id, store_boot_fn fn, void *ctx)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "SELECT " COLS " FROM boots WHERE job_id = ? ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	sqlite3_bind_int64(st, 1, job_id);
	struct store_boot *b = malloc(sizeof(*b));
	int rc = SQLITE_NOMEM;
	while (b && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_boot(st, b);
		fn(ctx, b);
	}
	free(b);
	int r = rc == SQLITE_DONE ? 0 : rc == SQLITE_NOMEM ? -ENOMEM : store_db_err(s, "select boots");
	sqlite3_finalize(st);
	return r;
}

int store_steps_boot_failed(struct store *s, int64_t job_id, int variant, int *ret_n)
{
	sqlite3_stmt *st;
	int r = store_preparef(s, &st, "UPDATE steps SET status = '%s' WHERE job_id = ? AND variant_idx = ? AND status = '%s'",
			       step_status_name(STEP_BOOT_FAILED), step_status_name(STEP_PENDING));
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, variant);
	r = run(s, st, "update steps");
	if (r == 0 && ret_n)
		*ret_n = sqlite3_changes(store_sqlite(s));
	return r;
}

int store_checkpoint(struct store *s)
{
	int log = 0, done = 0;
	int rc = sqlite3_wal_checkpoint_v2(store_sqlite(s), NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return store_db_err(s, "checkpoint");
	return rc == SQLITE_BUSY ? -EBUSY : 0;
}

int store_variant_builds_set(struct store *s, int64_t job_id, const int64_t *builds, size_t n)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "UPDATE variants SET build_id = ? WHERE job_id = ? AND idx = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		sqlite3_reset(st);
		if (builds[i] > 0)
			sqlite3_bind_int64(st, 1, builds[i]);
		else
			sqlite3_bind_null(st, 1);
		sqlite3_bind_int64(st, 2, job_id);
		sqlite3_bind_int64(st, 3, (int64_t)i);
		if (sqlite3_step(st) != SQLITE_DONE)
			r = store_db_err(s, "update variant");
	}
	sqlite3_finalize(st);
	return r;
}

int store_variant_builds_get(struct store *s, int64_t job_id, int64_t *builds, size_t n)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "SELECT idx, build_id FROM variants WHERE job_id = ? ORDER BY idx", -1, &st,
			       NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	sqlite3_bind_int64(st, 1, job_id);
	size_t k = 0;
	int rc, r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t idx = sqlite3_column_int64(st, 0);
		if (idx < 0 || (size_t)idx >= n || sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		builds[idx] = sqlite3_column_int64(st, 1);
		k++;
	}
	if (rc != SQLITE_DONE)
		r = store_db_err(s, "select variants");
	sqlite3_finalize(st);
	return r < 0 ? r : k == n ? 0 : -ENOENT;
}
