/* SQLite storage: runs, their metrics and samples, the metrics a run could
 * not measure, and each workload's adaptive progress; the display name of
 * a recorded settings key. */
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RUN_COLS "id, job_id, step_id, pair, variant_idx, workload_idx, status, exit_code, term_signal, reason," \
	" started, finished, pid, kab_version, kernel_release, boot_id, cmdline, cpus, mem_total, swap_total," \
	" swap_devices, cgroup_version, cgroup_path, knobs, memory_max, stdout_tail, stderr_tail, settings, conditioning"

static void read_run(sqlite3_stmt *st, struct store_run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->job_id = sqlite3_column_int64(st, 1);
	r->step_id = sqlite3_column_int64(st, 2);
	r->pair = sqlite3_column_int(st, 3);
	r->variant = sqlite3_column_int(st, 4);
	r->workload = sqlite3_column_int(st, 5);
	char status[24];
	store_col_text(st, 6, status, sizeof(status));
	if (run_status_parse(status, &r->status) < 0) {
		store_status_unknown("run", r->id, status);
		r->status = RUN_STATUS_UNKNOWN;
	}
	r->exit_code = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 7);
	r->term_signal = sqlite3_column_int(st, 8);
	store_col_text(st, 9, r->reason, sizeof(r->reason));
	r->started = sqlite3_column_double(st, 10);
	r->finished = sqlite3_column_double(st, 11);
	r->pid = sqlite3_column_int(st, 12);
	store_col_text(st, 13, r->kab_version, sizeof(r->kab_version));
	store_col_text(st, 14, r->kernel_release, sizeof(r->kernel_release));
	store_col_text(st, 15, r->boot_id, sizeof(r->boot_id));
	store_col_text(st, 16, r->cmdline, sizeof(r->cmdline));
	r->cpus = sqlite3_column_int(st, 17);
	r->mem_total = (uint64_t)sqlite3_column_int64(st, 18);
	r->swap_total = (uint64_t)sqlite3_column_int64(st, 19);
	store_col_text(st, 20, r->swap_devices, sizeof(r->swap_devices));
	r->cgroup_version = sqlite3_column_int(st, 21);
	store_col_text(st, 22, r->cgroup_path, sizeof(r->cgroup_path));
	store_col_text(st, 23, r->knobs, sizeof(r->knobs));
	r->memory_max = (uint64_t)sqlite3_column_int64(st, 24);
	store_col_text(st, 25, r->stdout_tail, sizeof(r->stdout_tail));
	store_col_text(st, 26, r->stderr_tail, sizeof(r->stderr_tail));
	store_col_text(st, 27, r->settings, sizeof(r->settings));
	store_col_text(st, 28, r->conditioning, sizeof(r->conditioning));
}

int store_run_begin(struct store *s, struct store_run *run, int64_t *ret_id)
{
	int r = store_begin(s);
	if (r < 0)
		return r;
	{
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		r = store_preparef(s, &st,
				   "INSERT INTO runs (job_id, step_id, pair, variant_idx, workload_idx, status, started, pid,"
				   " kab_version, schema_version, kernel_release, boot_id, cmdline, cpus, mem_total, swap_total,"
				   " swap_devices, cgroup_version, cgroup_path, knobs, memory_max, settings, conditioning)"
				   " VALUES (?,?,?,?,?,'%s',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
				   run_status_name(RUN_STARTED));
		if (r < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, run->job_id);
		sqlite3_bind_int64(st, 2, run->step_id);
		sqlite3_bind_int(st, 3, run->pair);
		sqlite3_bind_int(st, 4, run->variant);
		sqlite3_bind_int(st, 5, run->workload);
		sqlite3_bind_double(st, 6, run->started);
		sqlite3_bind_int(st, 7, run->pid);
		store_bind_text(st, 8, KAB_VERSION);
		sqlite3_bind_int(st, 9, STORE_SCHEMA_VERSION);
		store_bind_text(st, 10, run->kernel_release);
		store_bind_text(st, 11, run->boot_id);
		store_bind_text(st, 12, run->cmdline);
		sqlite3_bind_int(st, 13, run->cpus);
		sqlite3_bind_int64(st, 14, (sqlite3_int64)run->mem_total);
		sqlite3_bind_int64(st, 15, (sqlite3_int64)run->swap_total);
		store_bind_text(st, 16, run->swap_devices);
		sqlite3_bind_int(st, 17, run->cgroup_version);
		store_bind_text(st, 18, run->cgroup_path);
		store_bind_text(st, 19, run->knobs);
		sqlite3_bind_int64(st, 20, (sqlite3_int64)run->memory_max);
		store_bind_text(st, 21, run->settings[0] ? run->settings : NULL);
		store_bind_text(st, 22, run->conditioning[0] ? run->conditioning : NULL);
		if ((r = store_step_done(s, st)) < 0)
			goto fail;
	}
	int64_t id = sqlite3_last_insert_rowid(s->db);
	if ((r = store_step_set_status(s, run->step_id, STEP_STARTED)) < 0)
		goto fail;
	if ((r = store_commit(s)) < 0)
		goto fail;
	run->id = id;
	run->status = RUN_STARTED;
	*ret_id = id;
	return 0;
fail:
	store_rollback(s);
	return r;
}

int store_run_finish(struct store *s, const struct store_run *run, enum step_status step_status,
		     const struct store_metric *metrics, size_t n_metrics, const struct store_series *series,
		     size_t n_series)
{
	if (run->status < 0 || run->status >= RUN_STATUS_N)
		return -EINVAL;
	int r = store_begin(s);
	if (r < 0)
		return r;
	{
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		r = store_prepare(s, "UPDATE runs SET status = ?, exit_code = ?, term_signal = ?, reason = ?, finished = ?,"
			       " stdout_tail = ?, stderr_tail = ?, pid = ?, cgroup_path = ?, knobs = ? WHERE id = ?", &st);
		if (r < 0)
			goto fail;
		store_bind_text(st, 1, run_status_name(run->status));
		if (run->exit_code >= 0)
			sqlite3_bind_int(st, 2, run->exit_code);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int(st, 3, run->term_signal);
		store_bind_text(st, 4, run->reason[0] ? run->reason : NULL);
		sqlite3_bind_double(st, 5, run->finished);
		store_bind_text(st, 6, run->stdout_tail);
		store_bind_text(st, 7, run->stderr_tail);
		sqlite3_bind_int(st, 8, run->pid);
		store_bind_text(st, 9, run->cgroup_path);
		store_bind_text(st, 10, run->knobs);
		sqlite3_bind_int64(st, 11, run->id);
		if ((r = store_step_done(s, st)) < 0)
			goto fail;
	}
	if (n_metrics) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		r = store_prepare(s, "INSERT OR REPLACE INTO metrics (run_id, name, value, unit) VALUES (?,?,?,?)", &st);
		for (size_t i = 0; r >= 0 && i < n_metrics; i++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, run->id);
			store_bind_text(st, 2, metrics[i].name);
			sqlite3_bind_double(st, 3, metrics[i].value);
			store_bind_text(st, 4, metrics[i].unit);
			r = store_step_done(s, st);
		}
		if (r < 0)
			goto fail;
	}
	if (n_series) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		r = store_prepare(s, "INSERT OR REPLACE INTO samples (run_id, metric, n, data) VALUES (?,?,?,?)", &st);
		for (size_t i = 0; r >= 0 && i < n_series; i++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, run->id);
			store_bind_text(st, 2, series[i].metric);
			sqlite3_bind_int64(st, 3, (sqlite3_int64)series[i].n);
			sqlite3_bind_blob(st, 4, series[i].blob, (int)series[i].len, SQLITE_STATIC);
			r = store_step_done(s, st);
		}
		if (r < 0)
			goto fail;
	}
	if ((r = store_step_set_status(s, run->step_id, step_status)) < 0)
		goto fail;
	return store_commit(s);
fail:
	store_rollback(s);
	return r;
}

static int load_runs(struct store *s, const char *sql, int64_t job_id, struct store_run **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	if (job_id >= 0)
		sqlite3_bind_int64(st, 1, job_id);
	struct store_run *v = NULL;
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_run *nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		read_run(st, &v[n++]);
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "runs");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_runs_load(struct store *s, int64_t job_id, struct store_run **ret, size_t *ret_n)
{
	return load_runs(s, "SELECT " RUN_COLS " FROM runs WHERE job_id = ? ORDER BY id", job_id, ret, ret_n);
}

/* A page of a job's runs: the text columns cut (in characters, so never
 * inside one) to what struct store_run keeps of them; runs_job's
 * (job_id, rowid) gives the range and the order. */
static const char run_page_sql[] =
	"SELECT id, step_id, pair, variant_idx, workload_idx, status, exit_code, term_signal, started, finished,"
	" cpus, cgroup_version, mem_total, swap_total, memory_max, substr(reason, 1, 511), substr(kab_version, 1, 31),"
	" substr(kernel_release, 1, 127), substr(boot_id, 1, 63), substr(cmdline, 1, 1023),"
	" substr(swap_devices, 1, 511), substr(cgroup_path, 1, 255), substr(knobs, 1, 2047),"
	" substr(settings, 1, 6143), substr(conditioning, 1, 511)"
	" FROM runs WHERE job_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3";

static const char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

static void read_run_row(sqlite3_stmt *st, struct store_run_row *r)
{
	*r = (struct store_run_row){ .id = sqlite3_column_int64(st, 0), .step_id = sqlite3_column_int64(st, 1) };
	r->pair = sqlite3_column_int(st, 2);
	r->variant = sqlite3_column_int(st, 3);
	r->workload = sqlite3_column_int(st, 4);
	const char *status = col_str(st, 5);
	if (run_status_parse(status, &r->status) < 0) {
		store_status_unknown("run", r->id, status);
		r->status = RUN_STATUS_UNKNOWN;
	}
	r->exit_code = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6);
	r->term_signal = sqlite3_column_int(st, 7);
	r->started = sqlite3_column_double(st, 8);
	r->finished = sqlite3_column_double(st, 9);
	r->cpus = sqlite3_column_int(st, 10);
	r->cgroup_version = sqlite3_column_int(st, 11);
	r->mem_total = (uint64_t)sqlite3_column_int64(st, 12);
	r->swap_total = (uint64_t)sqlite3_column_int64(st, 13);
	r->memory_max = (uint64_t)sqlite3_column_int64(st, 14);
	const char **dst[] = { &r->reason,       &r->kab_version, &r->kernel_release, &r->boot_id,  &r->cmdline,
			       &r->swap_devices, &r->cgroup_path, &r->knobs,          &r->settings, &r->conditioning };
	for (size_t i = 0; i < ARRAY_SIZE(dst); i++)
		*dst[i] = col_str(st, 15 + (int)i);
}

int store_runs_page(struct store *s, int64_t job_id, int64_t after, size_t limit, store_run_row_fn fn, void *ctx)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, run_page_sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, after);
	sqlite3_bind_int64(st, 3, limit >= (size_t)INT64_MAX ? -1 : (sqlite3_int64)limit);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_run_row row;
		read_run_row(st, &row);
		if (fn(ctx, &row) != 0)
			return 0;
	}
	return rc == SQLITE_DONE ? 0 : store_sql_err(s, rc, "runs");
}

int store_runs_started(struct store *s, struct store_run **ret, size_t *ret_n)
{
	char sql[1024];
	return load_runs(s,
			 store_sql(sql, sizeof(sql), "SELECT " RUN_COLS " FROM runs WHERE status = '%s' ORDER BY id",
				   run_status_name(RUN_STARTED)),
			 -1, ret, ret_n);
}

int store_foreach_metric(struct store *s, int64_t job_id, store_metric_fn fn, void *ctx)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT " RUN_COLS ", m.name, m.unit, m.value FROM runs JOIN metrics m ON m.run_id = runs.id"
			   " WHERE runs.job_id = ? ORDER BY runs.id, m.name", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	struct store_run *run = malloc(sizeof(*run));
	if (!run)
		return -ENOMEM;
	int64_t last = -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != last) {
			read_run(st, run);
			last = run->id;
		}
		const unsigned char *name = sqlite3_column_text(st, 29);
		const unsigned char *unit = sqlite3_column_text(st, 30);
		fn(ctx, run, (const char *)name, unit ? (const char *)unit : "", sqlite3_column_double(st, 31));
	}
	free(run);
	return rc == SQLITE_DONE ? 0 : store_sql_err(s, rc, "metrics");
}

int store_series_get(struct store *s, int64_t run_id, const char *metric, uint8_t **ret_blob, size_t *ret_len, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT n, data FROM samples WHERE run_id = ? AND metric = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	store_bind_text(st, 2, metric);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "samples");
	size_t len = (size_t)sqlite3_column_bytes(st, 1);
	uint8_t *b = malloc(len ? len : 1);
	if (!b)
		return -ENOMEM;
	memcpy(b, sqlite3_column_blob(st, 1), len);
	*ret_blob = b;
	*ret_len = len;
	*ret_n = (size_t)sqlite3_column_int64(st, 0);
	return 0;
}

int store_series_foreach(struct store *s, int64_t run_id, store_series_fn fn, void *ctx)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT metric, n, data FROM samples WHERE run_id = ? ORDER BY metric", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);
		sqlite3_int64 n = sqlite3_column_int64(st, 1);
		fn(ctx, m ? m : "", sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2), n > 0 ? (size_t)n : 0);
	}
	return rc == SQLITE_DONE ? 0 : store_sql_err(s, rc, "samples");
}

int store_progress_set(struct store *s, int64_t job_id, int workload, int looks, int pairs_done, const char *stop_reason)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "INSERT OR REPLACE INTO workload_progress (job_id, workload_idx, looks, pairs_done, stop_reason)"
			   " VALUES (?,?,?,?,?)", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, workload);
	sqlite3_bind_int(st, 3, looks);
	sqlite3_bind_int(st, 4, pairs_done);
	store_bind_text(st, 5, stop_reason);
	return store_step_done(s, st);
}

int store_progress_get(struct store *s, int64_t job_id, int workload, int *ret_looks, int *ret_pairs_done,
		       char *ret_reason, size_t len)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT looks, pairs_done, stop_reason FROM workload_progress WHERE job_id = ? AND workload_idx = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, workload);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "workload_progress");
	*ret_looks = sqlite3_column_int(st, 0);
	*ret_pairs_done = sqlite3_column_int(st, 1);
	store_col_text(st, 2, ret_reason, len);
	return 0;
}

int store_run_unavailable(struct store *s, int64_t run_id, const char *metric, const char *reason)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "INSERT OR REPLACE INTO run_unavailable (run_id, metric, reason) VALUES (?1, ?2, ?3)", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	store_bind_text(st, 2, metric);
	store_bind_text(st, 3, reason);
	int rc = sqlite3_step(st);
	return rc == SQLITE_DONE ? 0 : store_sql_err(s, rc, "record an unavailable metric");
}

int store_job_unavailable(struct store *s, int64_t job_id, store_unavailable_fn fn, void *ctx)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT u.metric, u.reason, count(*) FROM run_unavailable u JOIN runs r ON r.id = u.run_id "
			   "WHERE r.job_id = ?1 GROUP BY u.metric, u.reason ORDER BY u.metric, u.reason", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fn(ctx, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
		   (size_t)sqlite3_column_int64(st, 2));
	return rc == SQLITE_DONE ? 0 : store_sql_err(s, rc, "read unavailable metrics");
}

/* A run whose time is the job's: a finished one, or a warm-up. */
static bool run_timed(enum run_status v)
{
	return run_status_finished(v) || v == RUN_WARMUP;
}

int store_job_run_times(struct store *s, int64_t job_id, size_t *ret_n, double *ret_sum, double *ret_current_started)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char timed[256];
	run_status_sql_set(run_timed, timed, sizeof(timed));
	int r = store_preparef(s, &st,
			       "SELECT count(CASE WHEN status IN (%s) THEN 1 END),"
			       " coalesce(sum(CASE WHEN status IN (%s) THEN finished - started END), 0),"
			       " coalesce(max(CASE WHEN status = '%s' THEN started END), 0) FROM runs"
			       " WHERE job_id = ?1 AND started > 0",
			       timed, timed, run_status_name(RUN_STARTED));
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "run times");
	*ret_n = (size_t)sqlite3_column_int64(st, 0);
	*ret_sum = sqlite3_column_double(st, 1);
	*ret_current_started = sqlite3_column_double(st, 2);
	return 0;
}

int store_last_run_metric(struct store *s, const char *name, int64_t *ret_run, double *ret_value)
{
	/* newest finished run (run_status_finished) first, by rowid; each
	 * probe is a primary-key lookup in metrics, so this stops at the first
	 * run that has it */
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char finished[256];
	int r = store_preparef(s, &st,
			       "SELECT r.id, m.value FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = ?1 "
			       "WHERE r.status IN (%s) ORDER BY r.id DESC LIMIT 1",
			       run_status_sql_set(run_status_finished, finished, sizeof(finished)));
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "last run metric");
	*ret_run = sqlite3_column_int64(st, 0);
	*ret_value = sqlite3_column_double(st, 1);
	return 0;
}

static void names_free(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

int store_series_names(struct store *s, int64_t run_id, char ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT metric FROM samples WHERE run_id = ? ORDER BY metric", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, run_id);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);
		if (util_grow(names, cap, n + 2, 16) < 0)
			goto nomem;
		if (!(names[n] = strdup(m ? m : "")))
			goto nomem;
		names[++n] = NULL;
	}
	if (rc != SQLITE_DONE) {
		names_free(names);
		return store_sql_err(s, rc, "samples");
	}
	*ret = names;
	*ret_n = n;
	return 0;
nomem:
	names_free(names);
	return -ENOMEM;
}

const char *store_setting_name(const char *key, char *buf, size_t len)
{
	static const char *const prefixes[] = { "/sys/kernel/mm/", "/sys/module/zswap/parameters/" };
	if (strncmp(key, "/proc/sys/", 10) == 0) {
		snprintf(buf, len, "%s", key + 10);
		for (char *p = buf; *p; p++)
			if (*p == '/')
				*p = '.';
		return buf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0) {
			snprintf(buf, len, "%s%s", i == 1 ? "zswap/" : "", key + strlen(prefixes[i]));
			return buf;
		}
	snprintf(buf, len, "%s", key);
	return buf;
}
