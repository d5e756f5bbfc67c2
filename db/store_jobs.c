/* SQLite storage: jobs with their variants and workloads, and the steps of their plans. */
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int insert_variants(struct store *s, int64_t job_id, const struct store_job_spec *j)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "INSERT INTO variants (job_id, idx, label, name, kernel, knobs) VALUES (?,?,?,?,?,?)", &st);
	if (r < 0)
		return r;
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct store_variant_spec *v = &j->variants[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, job_id);
		sqlite3_bind_int(st, 2, (int)i);
		store_bind_text(st, 3, v->label);
		store_bind_text(st, 4, v->name);
		store_bind_text(st, 5, v->kernel);
		store_bind_text(st, 6, v->knobs ? v->knobs : "");
		if ((r = store_step_done(s, st)) < 0)
			return r;
	}
	return 0;
}

static int insert_workloads(struct store *s, int64_t job_id, const struct store_job_spec *j)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "INSERT INTO workloads (job_id, idx, name, type, memory_max, memory_high, memory_swap_max, timeout_s) VALUES (?,?,?,?,?,?,?,?)", &st);
	if (r < 0)
		return r;
	for (size_t i = 0; i < j->n_workloads; i++) {
		const struct store_workload_spec *w = &j->workloads[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, job_id);
		sqlite3_bind_int(st, 2, (int)i);
		store_bind_text(st, 3, w->name);
		store_bind_text(st, 4, w->type);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)w->memory_max);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)w->memory_high);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)w->memory_swap_max);
		sqlite3_bind_double(st, 8, w->timeout_s);
		if ((r = store_step_done(s, st)) < 0)
			return r;
	}
	return 0;
}

/* The job's row, its variants and workloads, inside the caller's
 * transaction; submitter NULL when none is recorded (kab run). */
static int insert_job(struct store *s, const struct store_job_spec *j, const char *submitter, int64_t *ret_id)
{
	int r;
	{
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		r = store_preparef(s, &st,
				   "INSERT INTO jobs (name, file, text, status, created, pairs, job_order, swap, kab_version,"
				   " schema_version, kernel_release, submitter) VALUES (?,?,?,'%s',?,?,?,?,?,?,?,?)",
				   job_status_name(JOB_QUEUED));
		if (r < 0)
			return r;
		char release[128] = "";
		char *rel = NULL;
		if (util_read_line("/proc/sys/kernel/osrelease", &rel) == 0)
			snprintf(release, sizeof(release), "%s", rel);
		free(rel);
		store_bind_text(st, 1, j->name);
		store_bind_text(st, 2, j->file);
		store_bind_text(st, 3, j->text ? j->text : "");
		sqlite3_bind_double(st, 4, util_real_now());
		sqlite3_bind_int(st, 5, (int)j->pairs);
		store_bind_text(st, 6, j->order);
		store_bind_text(st, 7, j->swap);
		store_bind_text(st, 8, KAB_VERSION);
		sqlite3_bind_int(st, 9, STORE_SCHEMA_VERSION);
		store_bind_text(st, 10, release);
		store_bind_text(st, 11, submitter);
		if ((r = store_step_done(s, st)) < 0)
			return r;
	}
	int64_t id = sqlite3_last_insert_rowid(s->db);
	if ((r = insert_variants(s, id, j)) < 0 || (r = insert_workloads(s, id, j)) < 0)
		return r;
	*ret_id = id;
	return 0;
}

static int insert_steps(struct store *s, int64_t job_id, const struct store_step *steps, size_t n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_preparef(s, &st,
			       "INSERT INTO steps (job_id, seq, pair, variant_idx, workload_idx, status, boot, rep)"
			       " VALUES (?,?,?,?,?,'%s',?,?)",
			       step_status_name(STEP_PENDING));
	for (size_t i = 0; r >= 0 && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, job_id);
		sqlite3_bind_int(st, 2, steps[i].seq);
		sqlite3_bind_int(st, 3, steps[i].pair);
		sqlite3_bind_int(st, 4, steps[i].variant);
		sqlite3_bind_int(st, 5, steps[i].workload);
		sqlite3_bind_int(st, 6, steps[i].boot);
		sqlite3_bind_int(st, 7, steps[i].rep);
		r = store_step_done(s, st);
	}
	return r;
}

/* Commits what body did, or rolls it back. */
static int in_transaction(struct store *s, int r)
{
	if (r < 0) {
		store_rollback(s);
		return r;
	}
	if ((r = store_commit(s)) < 0)
		store_rollback(s);
	return r;
}

int store_job_create(struct store *s, const struct store_job_spec *j, int64_t *ret_id)
{
	int r = store_begin(s);
	if (r < 0)
		return r;
	int64_t id = 0;
	if ((r = in_transaction(s, insert_job(s, j, NULL, &id))) < 0)
		return r;
	*ret_id = id;
	return 0;
}

int store_job_submit(struct store *s, const struct store_job_spec *j, const char *submitter, const struct store_step *steps, size_t n,
		     int64_t *ret_id)
{
	int r = store_begin(s);
	if (r < 0)
		return r;
	int64_t id = 0;
	r = insert_job(s, j, submitter, &id);
	if (r >= 0)
		r = insert_steps(s, id, steps, n);
	if (r >= 0 && j->lab)
		r = store_lab_insert(s, id, j->lab);
	if ((r = in_transaction(s, r)) < 0)
		return r;
	*ret_id = id;
	return 0;
}

int store_job_set_status(struct store *s, int64_t job_id, enum job_status status, const char *reason)
{
	return store_job_set_status_from(s, job_id, ~0u, status, reason);
}

int store_job_set_status_from(struct store *s, int64_t job_id, unsigned from_set, enum job_status status, const char *reason)
{
	if (status < 0 || status >= JOB_STATUS_N)
		return -EINVAL;
	/* the statuses it may follow, of those the caller names, checked in
	 * the same statement (?5..?10); an unused placeholder is NULL, which
	 * no status equals */
	_Static_assert(JOB_STATUS_N <= 6, "one placeholder a status");
	enum job_status allowed[JOB_STATUS_N], from[JOB_STATUS_N];
	size_t n_allowed = job_transition_from(status, allowed, JOB_STATUS_N), n_from = 0;
	for (size_t i = 0; i < n_allowed; i++)
		if (from_set & 1u << allowed[i])
			from[n_from++] = allowed[i];
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "UPDATE jobs SET status = ?1, reason = ?2,"
			      " started = CASE WHEN ?11 AND started IS NULL THEN ?3 ELSE started END,"
			      " finished = CASE WHEN ?12 THEN ?3 ELSE NULL END"
			      " WHERE id = ?4 AND status IN (?5, ?6, ?7, ?8, ?9, ?10)",
			      &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, job_status_name(status));
	store_bind_text(st, 2, reason);
	sqlite3_bind_double(st, 3, util_real_now());
	sqlite3_bind_int64(st, 4, job_id);
	for (size_t i = 0; i < n_from && i < 6; i++)
		store_bind_text(st, 5 + (int)i, job_status_name(from[i]));
	/* it started when it first runs; it stopped (finished, or interrupted
	 * to go on later) when it is no longer waiting or running */
	sqlite3_bind_int(st, 11, status == JOB_RUNNING);
	sqlite3_bind_int(st, 12, status != JOB_QUEUED && status != JOB_RUNNING);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	if (sqlite3_changes(s->db) == 1)
		return 0;
	struct store_job sj;
	if (store_job_info(s, job_id, &sj) < 0)
		return -ENOENT;
	if (job_transition_allowed(sj.status, status))
		log_error("job %lld is %s, not in a status its writer expected: it is not made %s; its status is kept",
			  (long long)job_id, job_status_name(sj.status), job_status_name(status));
	else
		log_error("job %lld is %s: it cannot become %s (a job's life, db/store.h); its status is kept", (long long)job_id,
			  sj.status == JOB_STATUS_UNKNOWN ? "in a status this kab does not know" : job_status_name(sj.status),
			  job_status_name(status));
	return -EPERM;
}

int store_job_dir_get(struct store *s, int64_t job_id, char *buf, size_t len)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT jobdir FROM jobs WHERE id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? -ENOENT : store_sql_err(s, rc, "step");
	store_col_text(st, 0, buf, len);
	return 0;
}

int store_job_dir_set(struct store *s, int64_t job_id, const char *name)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE jobs SET jobdir = ? WHERE id = ?", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, job_id);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	return sqlite3_changes(s->db) == 1 ? 0 : -ENOENT;
}

static int job_get(struct store *s, int64_t job_id, bool with_text, struct store_job *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, with_text ? "SELECT id, name, status, reason, file, created, started, finished, pairs, job_order, submitter, text FROM jobs WHERE id = ?"
				     : "SELECT id, name, status, reason, file, created, started, finished, pairs, job_order, submitter FROM jobs WHERE id = ?",
			&st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "job");
	struct store_job j = { 0 };
	j.id = sqlite3_column_int64(st, 0);
	store_col_text(st, 1, j.name, sizeof(j.name));
	char status[24];
	store_col_text(st, 2, status, sizeof(status));
	if (job_status_parse(status, &j.status) < 0) {
		store_status_unknown("job", j.id, status);
		j.status = JOB_STATUS_UNKNOWN;
	}
	store_col_text(st, 3, j.reason, sizeof(j.reason));
	store_col_text(st, 4, j.file, sizeof(j.file));
	j.created = sqlite3_column_double(st, 5);
	j.started = sqlite3_column_double(st, 6);
	j.finished = sqlite3_column_double(st, 7);
	j.pairs = (unsigned)sqlite3_column_int(st, 8);
	store_col_text(st, 9, j.order, sizeof(j.order));
	store_col_text(st, 10, j.submitter, sizeof(j.submitter));
	if (with_text) {
		const unsigned char *t = sqlite3_column_text(st, 11);
		if (!(j.text = strdup(t ? (const char *)t : "")))
			return -ENOMEM;
	}
	*ret = j;
	return 0;
}

int store_job_get(struct store *s, int64_t job_id, struct store_job *ret) { return job_get(s, job_id, true, ret); }

int store_job_info(struct store *s, int64_t job_id, struct store_job *ret) { return job_get(s, job_id, false, ret); }

/* name and kernel of variants, or name and type of workloads, by idx */
static int job_parts(struct store *s, const char *sql, int64_t job_id, struct store_job_part **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	struct store_job_part *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 8) < 0) {
			free(v);
			return -ENOMEM;
		}
		store_col_text(st, 0, v[n].name, sizeof(v[n].name));
		store_col_text(st, 1, v[n].kind, sizeof(v[n].kind));
		n++;
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "job parts");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_job_variants(struct store *s, int64_t job_id, struct store_job_part **ret, size_t *ret_n)
{
	return job_parts(s, "SELECT name, kernel FROM variants WHERE job_id = ? ORDER BY idx", job_id, ret, ret_n);
}

int store_job_workloads(struct store *s, int64_t job_id, struct store_job_part **ret, size_t *ret_n)
{
	return job_parts(s, "SELECT name, type FROM workloads WHERE job_id = ? ORDER BY idx", job_id, ret, ret_n);
}

void store_job_clear(struct store_job *j)
{
	free(j->text);
	j->text = NULL;
}

int store_jobs_with_status(struct store *s, enum job_status status, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT id FROM jobs WHERE status = ? ORDER BY id", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, job_status_name(status));
	int64_t *ids = NULL;
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t *ni = realloc(ids, (n + 1) * sizeof(*ids));
		if (!ni) {
			free(ids);
			return -ENOMEM;
		}
		ids = ni;
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		free(ids);
		return store_sql_err(s, rc, "jobs");
	}
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}

int store_steps_create(struct store *s, int64_t job_id, const struct store_step *steps, size_t n)
{
	int r = store_begin(s);
	if (r < 0)
		return r;
	return in_transaction(s, insert_steps(s, job_id, steps, n));
}

int store_steps_load(struct store *s, int64_t job_id, struct store_step **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT id, seq, pair, variant_idx, workload_idx, status, boot, rep FROM steps WHERE job_id = ? ORDER BY seq", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	struct store_step *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (util_grow(v, cap, n + 1, 64) < 0) {
			free(v);
			return -ENOMEM;
		}
		struct store_step *x = &v[n++];
		x->id = sqlite3_column_int64(st, 0);
		x->seq = sqlite3_column_int(st, 1);
		x->pair = sqlite3_column_int(st, 2);
		x->variant = sqlite3_column_int(st, 3);
		x->workload = sqlite3_column_int(st, 4);
		char status[24];
		store_col_text(st, 5, status, sizeof(status));
		if (step_status_parse(status, &x->status) < 0) {
			store_status_unknown("step", x->id, status);
			x->status = STEP_STATUS_UNKNOWN;
		}
		x->boot = sqlite3_column_int(st, 6);
		x->rep = sqlite3_column_int(st, 7);
	}
	if (rc != SQLITE_DONE) {
		free(v);
		return store_sql_err(s, rc, "steps");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_steps_count(struct store *s, int64_t job_id, struct store_steps_count *ret)
{
	struct store_steps_count c = { 0 };
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT status, count(*) FROM steps WHERE job_id = ? GROUP BY status", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char status[24];
		store_col_text(st, 0, status, sizeof(status));
		size_t k = (size_t)sqlite3_column_int64(st, 1);
		enum step_status v;
		if (step_status_parse(status, &v) < 0)
			c.unknown += k;
		else
			c.n[v] += k;
		c.total += k;
	}
	if (rc != SQLITE_DONE)
		return store_sql_err(s, rc, "steps");
	_cleanup_stmt_ sqlite3_stmt *cur = NULL;
	r = store_preparef(s, &cur,
			   "SELECT id, seq, pair, variant_idx, workload_idx, boot, rep FROM steps"
			   " WHERE job_id = ? AND status = '%s' ORDER BY seq DESC LIMIT 1",
			   step_status_name(STEP_STARTED));
	if (r < 0)
		return r;
	sqlite3_bind_int64(cur, 1, job_id);
	rc = sqlite3_step(cur);
	if (rc == SQLITE_ROW)
		c.current = (struct store_step){ .id = sqlite3_column_int64(cur, 0),
						 .seq = sqlite3_column_int(cur, 1),
						 .pair = sqlite3_column_int(cur, 2),
						 .variant = sqlite3_column_int(cur, 3),
						 .workload = sqlite3_column_int(cur, 4),
						 .status = STEP_STARTED,
						 .boot = sqlite3_column_int(cur, 5),
						 .rep = sqlite3_column_int(cur, 6) };
	else if (rc != SQLITE_DONE)
		return store_sql_err(s, rc, "steps");
	*ret = c;
	return 0;
}

int store_step_set_status(struct store *s, int64_t step_id, enum step_status status)
{
	if (status < 0 || status >= STEP_STATUS_N)
		return -EINVAL;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE steps SET status = ? WHERE id = ?", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, step_status_name(status));
	sqlite3_bind_int64(st, 2, step_id);
	return store_step_done(s, st);
}

int store_steps_skip(struct store *s, int64_t job_id, int workload, int from_pair)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_preparef(s, &st, "UPDATE steps SET status = '%s' WHERE job_id = ? AND workload_idx = ? AND pair >= ? AND status = '%s'",
			       step_status_name(STEP_SKIPPED), step_status_name(STEP_PENDING));
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, workload);
	sqlite3_bind_int(st, 3, from_pair);
	return store_step_done(s, st);
}

int store_jobs_page(struct store *s, int64_t before, size_t limit, int64_t **ret_ids, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT id FROM jobs WHERE ?1 <= 0 OR id < ?1 ORDER BY id DESC LIMIT ?2", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
	int64_t *ids = malloc((limit ? limit : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	size_t n = 0;
	int rc;
	while (n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(st, 0);
	if (n < limit && rc != SQLITE_DONE) {
		free(ids);
		return store_sql_err(s, rc, "jobs");
	}
	*ret_ids = ids;
	*ret_n = n;
	return 0;
}
