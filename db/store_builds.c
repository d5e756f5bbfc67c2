/* Kernel build records: the builds table of migration 5. */
#include "store.h"
#include "store_builds.h"
#include "store_priv.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COLS "id, created, finished, status, reason, tree, base_ref, base_sha, series, patches, series_hash," \
	     " config_source, config_hash, compiler, duration_s, warnings, objects, log_tail, kernelrelease," \
	     " dir, image, system_map, config_path, modules, log_path, inputs_key," \
	     " initrd, kind"

static int db_err(struct store *s, const char *what)
{
	log_error("database: %s: %s", what, sqlite3_errmsg(store_sqlite(s)));
	return -EIO;
}

static void bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? strdup((const char *)t) : NULL;
}

static void col_copy(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(buf, len, "%s", t ? (const char *)t : "");
}

static void read_row(sqlite3_stmt *st, struct store_build *b)
{
	*b = (struct store_build){ .id = sqlite3_column_int64(st, 0) };
	b->created = sqlite3_column_double(st, 1);
	b->finished = sqlite3_column_double(st, 2);
	col_copy(st, 3, b->status, sizeof(b->status));
	b->reason = col_dup(st, 4);
	b->tree = col_dup(st, 5);
	b->base_ref = col_dup(st, 6);
	col_copy(st, 7, b->base_sha, sizeof(b->base_sha));
	b->series = col_dup(st, 8);
	b->patches = col_dup(st, 9);
	col_copy(st, 10, b->series_hash, sizeof(b->series_hash));
	b->config_source = col_dup(st, 11);
	col_copy(st, 12, b->config_hash, sizeof(b->config_hash));
	b->compiler = col_dup(st, 13);
	b->duration_s = sqlite3_column_double(st, 14);
	b->warnings = sqlite3_column_int64(st, 15);
	b->objects = sqlite3_column_int64(st, 16);
	b->log_tail = col_dup(st, 17);
	col_copy(st, 18, b->kernelrelease, sizeof(b->kernelrelease));
	b->dir = col_dup(st, 19);
	b->image = col_dup(st, 20);
	b->system_map = col_dup(st, 21);
	b->config_path = col_dup(st, 22);
	b->modules = col_dup(st, 23);
	b->log_path = col_dup(st, 24);
	col_copy(st, 25, b->inputs_key, sizeof(b->inputs_key));
	b->initrd = col_dup(st, 26);
	col_copy(st, 27, b->kind, sizeof(b->kind));
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
	if (sqlite3_prepare_v2(store_sqlite(s),
			       "INSERT INTO builds (created, status, tree, base_ref, base_sha, series, patches, series_hash,"
			       " config_source, config_hash, compiler, inputs_key, kab_version, schema_version, kind)"
			       " VALUES (?, 'building', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, "prepare");
	sqlite3_bind_double(st, 1, util_real_now());
	bind_str(st, 2, b->tree);
	bind_str(st, 3, b->base_ref);
	bind_str(st, 4, b->base_sha);
	bind_str(st, 5, b->series);
	bind_str(st, 6, b->patches);
	bind_str(st, 7, b->series_hash);
	bind_str(st, 8, b->config_source);
	bind_str(st, 9, b->config_hash);
	bind_str(st, 10, b->compiler);
	bind_str(st, 11, b->inputs_key);
	bind_str(st, 12, KAB_VERSION);
	sqlite3_bind_int(st, 13, STORE_SCHEMA_VERSION);
	bind_str(st, 14, b->kind[0] ? b->kind : "build");
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, "insert build");
	*ret_id = sqlite3_last_insert_rowid(store_sqlite(s));
	return 0;
}

int store_build_finish(struct store *s, const struct store_build *b)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s),
			       "UPDATE builds SET finished = ?, status = ?, reason = ?, duration_s = ?, warnings = ?,"
			       " objects = ?, log_tail = ?, kernelrelease = ?, dir = ?, image = ?, system_map = ?,"
			       " config_path = ?, modules = ?, log_path = ?, config_hash = ?, initrd = ? WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return db_err(s, "prepare");
	sqlite3_bind_double(st, 1, util_real_now());
	bind_str(st, 2, b->status);
	bind_str(st, 3, b->reason);
	sqlite3_bind_double(st, 4, b->duration_s);
	sqlite3_bind_int64(st, 5, b->warnings);
	sqlite3_bind_int64(st, 6, b->objects);
	bind_str(st, 7, b->log_tail);
	bind_str(st, 8, b->kernelrelease[0] ? b->kernelrelease : NULL);
	bind_str(st, 9, b->dir);
	bind_str(st, 10, b->image);
	bind_str(st, 11, b->system_map);
	bind_str(st, 12, b->config_path);
	bind_str(st, 13, b->modules);
	bind_str(st, 14, b->log_path);
	bind_str(st, 15, b->config_hash);
	bind_str(st, 16, b->initrd);
	sqlite3_bind_int64(st, 17, b->id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_err(s, "update build");
}

static int get_one(struct store *s, const char *sql, const char *key, int64_t id, struct store_build *ret)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(s, "prepare");
	if (key)
		bind_str(st, 1, key);
	else
		sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st), r = 0;
	if (rc == SQLITE_ROW)
		read_row(st, ret);
	else
		r = rc == SQLITE_DONE ? -ENOENT : db_err(s, "select build");
	sqlite3_finalize(st);
	return r;
}

int store_build_find(struct store *s, const char *inputs_key, struct store_build *ret)
{
	return get_one(s, "SELECT " COLS " FROM builds WHERE inputs_key = ? AND status = 'ok' ORDER BY id DESC LIMIT 1",
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
		return db_err(s, "prepare");
	struct store_build *v = NULL;
	size_t n = 0, cap = 0;
	int rc, r = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			struct store_build *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		read_row(st, &v[n++]);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = db_err(s, "select builds");
	sqlite3_finalize(st);
	if (r < 0) {
		store_builds_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
