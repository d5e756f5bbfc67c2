/* Kernel build records: the builds table of migration 5. */
#include "db/store.h"
#include "db/store_builds.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COLS "id, created, finished, status, reason, tree, base_ref, base_sha, series, patches, series_hash," \
	     " config_source, config_hash, compiler, duration_s, warnings, objects, log_tail, kernelrelease," \
	     " dir, image, system_map, config_path, modules, log_path, inputs_key," \
	     " initrd, kind"

static void read_row(sqlite3_stmt *st, struct store_build *b)
{
	*b = (struct store_build){ .id = sqlite3_column_int64(st, 0) };
	b->created = sqlite3_column_double(st, 1);
	b->finished = sqlite3_column_double(st, 2);
	char status[24];
	store_col_text(st, 3, status, sizeof(status));
	if (build_status_parse(status, &b->status) < 0) {
		store_status_unknown("build", b->id, status);
		b->status = BUILD_STATUS_UNKNOWN;
	}
	b->reason = store_col_dup(st, 4);
	b->tree = store_col_dup(st, 5);
	b->base_ref = store_col_dup(st, 6);
	store_col_text(st, 7, b->base_sha, sizeof(b->base_sha));
	b->series = store_col_dup(st, 8);
	b->patches = store_col_dup(st, 9);
	store_col_text(st, 10, b->series_hash, sizeof(b->series_hash));
	b->config_source = store_col_dup(st, 11);
	store_col_text(st, 12, b->config_hash, sizeof(b->config_hash));
	b->compiler = store_col_dup(st, 13);
	b->duration_s = sqlite3_column_double(st, 14);
	b->warnings = sqlite3_column_int64(st, 15);
	b->objects = sqlite3_column_int64(st, 16);
	b->log_tail = store_col_dup(st, 17);
	store_col_text(st, 18, b->kernelrelease, sizeof(b->kernelrelease));
	b->dir = store_col_dup(st, 19);
	b->image = store_col_dup(st, 20);
	b->system_map = store_col_dup(st, 21);
	b->config_path = store_col_dup(st, 22);
	b->modules = store_col_dup(st, 23);
	b->log_path = store_col_dup(st, 24);
	store_col_text(st, 25, b->inputs_key, sizeof(b->inputs_key));
	b->initrd = store_col_dup(st, 26);
	store_col_text(st, 27, b->kind, sizeof(b->kind));
}

void store_build_clear(struct store_build *b)
{
	char **fields[] = { &b->reason, &b->tree, &b->base_ref, &b->series, &b->patches, &b->config_source,
			    &b->compiler, &b->log_tail, &b->dir, &b->image, &b->system_map, &b->config_path,
			    &b->modules, &b->log_path, &b->initrd };
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		free(*fields[i]);
		*fields[i] = NULL;
	}
}

void store_builds_free(struct store_build *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_build_clear(&v[i]);
	free(v);
}

int store_build_begin(struct store *s, const struct store_build *b, int64_t *ret_id)
{
	sqlite3_stmt *st;
	int r = store_preparef(s, &st,
			       "INSERT INTO builds (created, status, tree, base_ref, base_sha, series, patches, series_hash,"
			       " config_source, config_hash, compiler, inputs_key, kab_version, schema_version, kind)"
			       " VALUES (?, '%s', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       build_status_name(BUILD_BUILDING));
	if (r < 0)
		return r;
	sqlite3_bind_double(st, 1, util_real_now());
	store_bind_text(st, 2, b->tree);
	store_bind_text(st, 3, b->base_ref);
	store_bind_text(st, 4, b->base_sha);
	store_bind_text(st, 5, b->series);
	store_bind_text(st, 6, b->patches);
	store_bind_text(st, 7, b->series_hash);
	store_bind_text(st, 8, b->config_source);
	store_bind_text(st, 9, b->config_hash);
	store_bind_text(st, 10, b->compiler);
	store_bind_text(st, 11, b->inputs_key);
	store_bind_text(st, 12, KAB_VERSION);
	sqlite3_bind_int(st, 13, STORE_SCHEMA_VERSION);
	store_bind_text(st, 14, b->kind[0] ? b->kind : "build");
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return store_db_err(s, "insert build");
	*ret_id = sqlite3_last_insert_rowid(store_sqlite(s));
	return 0;
}

int store_build_finish(struct store *s, const struct store_build *b)
{
	if (b->status < 0 || b->status >= BUILD_STATUS_N)
		return -EINVAL;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s),
			       "UPDATE builds SET finished = ?, status = ?, reason = ?, duration_s = ?, warnings = ?,"
			       " objects = ?, log_tail = ?, kernelrelease = ?, dir = ?, image = ?, system_map = ?,"
			       " config_path = ?, modules = ?, log_path = ?, config_hash = ?, initrd = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	sqlite3_bind_double(st, 1, util_real_now());
	store_bind_text(st, 2, build_status_name(b->status));
	store_bind_text(st, 3, b->reason);
	sqlite3_bind_double(st, 4, b->duration_s);
	sqlite3_bind_int64(st, 5, b->warnings);
	sqlite3_bind_int64(st, 6, b->objects);
	store_bind_text(st, 7, b->log_tail);
	store_bind_text(st, 8, b->kernelrelease[0] ? b->kernelrelease : NULL);
	store_bind_text(st, 9, b->dir);
	store_bind_text(st, 10, b->image);
	store_bind_text(st, 11, b->system_map);
	store_bind_text(st, 12, b->config_path);
	store_bind_text(st, 13, b->modules);
	store_bind_text(st, 14, b->log_path);
	store_bind_text(st, 15, b->config_hash);
	store_bind_text(st, 16, b->initrd);
	sqlite3_bind_int64(st, 17, b->id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_db_err(s, "update build");
}

static int get_one(struct store *s, const char *sql, const char *key, int64_t id, struct store_build *ret)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	if (key)
		store_bind_text(st, 1, key);
	else
		sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st), r = 0;
	if (rc == SQLITE_ROW)
		read_row(st, ret);
	else
		r = rc == SQLITE_DONE ? -ENOENT : store_db_err(s, "select build");
	sqlite3_finalize(st);
	return r;
}

int store_build_find(struct store *s, const char *inputs_key, struct store_build *ret)
{
	char sql[1024];
	return get_one(s,
		       store_sql(sql, sizeof(sql), "SELECT " COLS " FROM builds WHERE inputs_key = ? AND status = '%s' ORDER BY id DESC LIMIT 1",
				 build_status_name(BUILD_OK)),
		       inputs_key, 0, ret);
}

int store_build_get(struct store *s, int64_t id, struct store_build *ret)
{
	return get_one(s, "SELECT " COLS " FROM builds WHERE id = ?", NULL, id, ret);
}

int store_builds_list(struct store *s, struct store_build **ret, size_t *ret_n)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), "SELECT " COLS " FROM builds ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, "prepare");
	struct store_build *v = NULL;
	size_t n = 0, cap = 0;
	int rc, r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 16) < 0) {
			r = -ENOMEM;
			break;
		}
		read_row(st, &v[n++]);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_db_err(s, "select builds");
	sqlite3_finalize(st);
	if (r < 0) {
		store_builds_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
