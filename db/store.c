/* SQLite storage: schema, migrations and every query kab makes. */
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *store_path(const struct store *st)
{
	const char *p = sqlite3_db_filename(st->db, "main");
	return p ? p : "";
}

/* Migration N takes user_version from N-1 to N. Never edit a landed one. */
static const char *const migrations[] = {
	/* 1 */
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT, text TEXT NOT NULL,"
	"  status TEXT NOT NULL, reason TEXT, created REAL NOT NULL, started REAL, finished REAL,"
	"  pairs INTEGER, job_order TEXT, swap TEXT,"
	"  kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL, kernel_release TEXT);"
	"CREATE TABLE variants ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL,"
	"  label TEXT NOT NULL, name TEXT NOT NULL, kernel TEXT NOT NULL, knobs TEXT,"
	"  PRIMARY KEY (job_id, idx));"
	"CREATE TABLE workloads ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id), idx INTEGER NOT NULL,"
	"  name TEXT NOT NULL, type TEXT NOT NULL, memory_max INTEGER, memory_high INTEGER,"
	"  memory_swap_max INTEGER, timeout_s REAL,"
	"  PRIMARY KEY (job_id, idx));"
	"CREATE TABLE steps ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id), seq INTEGER NOT NULL,"
	"  pair INTEGER NOT NULL, variant_idx INTEGER NOT NULL, workload_idx INTEGER NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'pending', UNIQUE (job_id, seq));"
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id),"
	"  step_id INTEGER NOT NULL REFERENCES steps(id), pair INTEGER NOT NULL,"
	"  variant_idx INTEGER NOT NULL, workload_idx INTEGER NOT NULL,"
	"  status TEXT NOT NULL, exit_code INTEGER, term_signal INTEGER, reason TEXT,"
	"  started REAL, finished REAL, pid INTEGER,"
	"  kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL, kernel_release TEXT NOT NULL,"
	"  boot_id TEXT NOT NULL, cmdline TEXT, cpus INTEGER, mem_total INTEGER, swap_total INTEGER,"
	"  swap_devices TEXT, cgroup_version INTEGER, cgroup_path TEXT, knobs TEXT,"
	"  memory_max INTEGER, stdout_tail TEXT, stderr_tail TEXT);"
	"CREATE INDEX runs_job ON runs(job_id);"
	"CREATE TABLE metrics ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL NOT NULL,"
	"  unit TEXT, PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
	"CREATE TABLE samples ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL, n INTEGER NOT NULL,"
	"  data BLOB NOT NULL, PRIMARY KEY (run_id, metric)) WITHOUT ROWID;"
	"CREATE TABLE journal ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER, kind TEXT NOT NULL, target TEXT NOT NULL,"
	"  original TEXT, boot_id TEXT NOT NULL, created REAL NOT NULL);",
	/* 2: adaptive budgets: how many looks a workload took and why it stopped */
	"CREATE TABLE workload_progress ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id), workload_idx INTEGER NOT NULL,"
	"  looks INTEGER NOT NULL DEFAULT 0, pairs_done INTEGER NOT NULL DEFAULT 0,"
	"  stop_reason TEXT, PRIMARY KEY (job_id, workload_idx));",
	/* 3: kabd's /metrics counts jobs and runs by status on every scrape */
	"CREATE INDEX jobs_status ON jobs(status);"
	"CREATE INDEX runs_status ON runs(status);",
	/* 4: metrics a run could not measure on this machine, and why */
	"CREATE TABLE run_unavailable ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL, reason TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, metric)) WITHOUT ROWID;",
	/* 5: kernel builds (kernels/), reused when their inputs are the same */
	"CREATE TABLE builds ("
	"  id INTEGER PRIMARY KEY, created REAL NOT NULL, finished REAL, status TEXT NOT NULL, reason TEXT,"
	"  tree TEXT NOT NULL, base_ref TEXT NOT NULL, base_sha TEXT NOT NULL, series TEXT, patches TEXT,"
	"  series_hash TEXT, config_source TEXT NOT NULL, config_hash TEXT NOT NULL, compiler TEXT,"
	"  duration_s REAL, warnings INTEGER, objects INTEGER, log_tail TEXT, kernelrelease TEXT,"
	"  dir TEXT, image TEXT, system_map TEXT, config_path TEXT, modules TEXT, log_path TEXT,"
	"  inputs_key TEXT NOT NULL, kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL);"
	"CREATE INDEX builds_inputs ON builds(inputs_key, status);",
	/* 6: jobs that boot kernels: each switch and the boot that followed,
	 * the plan's boot of each step and its run inside that boot, and the
	 * initramfs a build boots with */
	"CREATE TABLE boots ("
	"  id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id), slot INTEGER NOT NULL,"
	"  variant_idx INTEGER NOT NULL, build_id INTEGER NOT NULL REFERENCES builds(id), method TEXT NOT NULL,"
	"  status TEXT NOT NULL, reason TEXT, from_boot_id TEXT NOT NULL, switch_at REAL NOT NULL, prep_s REAL,"
	"  cmdline TEXT NOT NULL, boot_id TEXT, kernel_release TEXT, booted_cmdline TEXT, ready_at REAL,"
	"  uptime_s REAL, kexec_s REAL);"
	"CREATE INDEX boots_job ON boots(job_id, id);"
	"ALTER TABLE steps ADD COLUMN boot INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE steps ADD COLUMN rep INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE builds ADD COLUMN initrd TEXT;"
	"ALTER TABLE builds ADD COLUMN kind TEXT NOT NULL DEFAULT 'build';"
	"ALTER TABLE variants ADD COLUMN build_id INTEGER REFERENCES builds(id);",
	/* 7: the name of the job's own directory under the state directory's
	 * jobs/ (made fresh by mkdtemp), so that a resumed job finds it and
	 * kab never reuses a directory it did not make */
	"ALTER TABLE jobs ADD COLUMN jobdir TEXT;",
	/* 8: who submitted a job to kabd: "uid 1001 (alice)" over its unix
	 * socket (the kernel's word), "token" over TCP; NULL for kab run */
	"ALTER TABLE jobs ADD COLUMN submitter TEXT;",
	/* 9: the machine's settings a run ran under ("path=value" lines: THP,
	 * mTHP, MGLRU, cpufreq, swappiness, zswap) and what the job's
	 * conditioning did before it (drop_caches, compact, idle); NULL in
	 * runs recorded before */
	"ALTER TABLE runs ADD COLUMN settings TEXT;"
	"ALTER TABLE runs ADD COLUMN conditioning TEXT;",
};

sqlite3 *store_sqlite(struct store *s) { return s->db; }

const char *store_errmsg(struct store *s) { return sqlite3_errmsg(s->db); }

int store_sql_err(struct store *s, int rc, const char *what)
{
	log_error("database: %s: %s", what, sqlite3_errmsg(s->db));
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? -EBUSY : rc == SQLITE_NOMEM ? -ENOMEM : -EIO;
}

int store_exec(struct store *s, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &err);
	if (rc != SQLITE_OK) {
		log_error("database: %s", err ? err : sqlite3_errstr(rc));
		sqlite3_free(err);
		return -EIO;
	}
	return 0;
}

int store_prepare(struct store *s, const char *sql, sqlite3_stmt **ret)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, ret, NULL);
	return rc == SQLITE_OK ? 0 : store_sql_err(s, rc, "prepare");
}

void store_finalizep(sqlite3_stmt **st) { sqlite3_finalize(*st); }

int store_step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_sql_err(s, rc, "step");
}

int store_db_err(struct store *s, const char *what) { return store_sql_err(s, sqlite3_extended_errcode(s->db), what); }

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void store_col_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(buf, len, "%s", t ? (const char *)t : "");
}

void store_status_unknown(const char *table, int64_t id, const char *word)
{
	log_warn("store: %s %lld has the status \"%s\", which this kab does not know; it reads as unknown", table,
		 (long long)id, word);
}

char *store_col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? strdup((const char *)t) : NULL;
}

static int migrate(struct store *s)
{
	sqlite3_stmt *st;
	int r = store_prepare(s, "PRAGMA user_version", &st);
	if (r < 0)
		return r;
	int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	int latest = (int)ARRAY_SIZE(migrations);
	_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION, "STORE_SCHEMA_VERSION names the last migration");
	if (version > latest) {
		log_error("database schema version %d is newer than this kab (%d): use a newer kab", version, latest);
		return -EPROTO;
	}
	for (int v = version; v < latest; v++) {
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if ((r = store_exec(s, "BEGIN IMMEDIATE")) < 0)
			return r;
		if ((r = store_exec(s, migrations[v])) < 0 || (r = store_exec(s, pragma)) < 0) {
			store_exec(s, "ROLLBACK");
			return r;
		}
		if ((r = store_exec(s, "COMMIT")) < 0)
			return r;
	}
	return 0;
}

/* kab's database is 0600: a new file is made so before SQLite opens it
 * (SQLite gives its -wal and -shm the database file's mode and owner, so
 * they follow whatever the umask), and one of ours that is open to its
 * group or others (made by an older kab) is closed to them, with a line
 * saying so. Results are read through kabd, which decides who may. */
static int files_private(const char *path)
{
	if (!path[0] || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 0;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		int r = fchmod(fd, 0600) < 0 ? -errno : 0;
		close(fd);
		return r;
	}
	if (errno != EEXIST)
		return -errno;
	struct stat lst;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
		return -ELOOP; /* SQLITE_OPEN_NOFOLLOW would refuse it less clearly */
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || !(st.st_mode & 077))
			continue;
		if (chmod(p, st.st_mode & 0700) == 0)
			log_warn("%s was mode %04o, open to its group or others; now %04o", p, (unsigned)(st.st_mode & 07777),
				 (unsigned)(st.st_mode & 0700));
	}
	return 0;
}

int store_open(const char *path, struct store **ret)
{
	int r = files_private(path);
	if (r < 0) {
		log_error("cannot create database %s: %s%s", path, strerror(-r),
			  r == -ELOOP ? " (a symbolic link: name the database file itself)" : "");
		return r;
	}
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		log_error("cannot open database %s: %s", path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		sqlite3_close(s->db);
		free(s);
		return -EIO;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* synchronous = FULL: a commit is on disk before the call returns, so
	 * after a power cut the store knows every run it started and every
	 * boot it judged (NORMAL could lose the last commits). kab commits a
	 * few times a run; the fsyncs cost nothing it measures. */
	r = store_exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;");
	if (r >= 0)
		r = migrate(s);
	if (r < 0) {
		log_error("database %s is not usable", path);
		sqlite3_close(s->db);
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s);
}

int store_begin(struct store *s) { return store_exec(s, "BEGIN IMMEDIATE"); }
int store_commit(struct store *s) { return store_exec(s, "COMMIT"); }
int store_rollback(struct store *s) { return store_exec(s, "ROLLBACK"); }

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
		r = store_prepare(s, "INSERT INTO jobs (name, file, text, status, created, pairs, job_order, swap, kab_version, schema_version, kernel_release, submitter)"
			       " VALUES (?,?,?,'queued',?,?,?,?,?,?,?,?)", &st);
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
	int r = store_prepare(s, "INSERT INTO steps (job_id, seq, pair, variant_idx, workload_idx, status, boot, rep)"
			   " VALUES (?,?,?,?,?,'pending',?,?)", &st);
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
	if ((r = in_transaction(s, r)) < 0)
		return r;
	*ret_id = id;
	return 0;
}

int store_job_set_status(struct store *s, int64_t job_id, enum job_status status, const char *reason)
{
	if (status < 0 || status >= JOB_STATUS_N)
		return -EINVAL;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE jobs SET status = ?1, reason = ?2,"
			   " started = CASE WHEN ?1 = 'running' AND started IS NULL THEN ?3 ELSE started END,"
			   " finished = CASE WHEN ?1 IN ('done','failed','cancelled','interrupted') THEN ?3 ELSE NULL END"
			   " WHERE id = ?4", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, job_status_name(status));
	store_bind_text(st, 2, reason);
	sqlite3_bind_double(st, 3, util_real_now());
	sqlite3_bind_int64(st, 4, job_id);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	return sqlite3_changes(s->db) == 1 ? 0 : -ENOENT;
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
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			struct store_job_part *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
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
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct store_step *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
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
		r = store_prepare(s, "INSERT INTO runs (job_id, step_id, pair, variant_idx, workload_idx, status, started, pid,"
			       " kab_version, schema_version, kernel_release, boot_id, cmdline, cpus, mem_total, swap_total,"
			       " swap_devices, cgroup_version, cgroup_path, knobs, memory_max, settings, conditioning)"
			       " VALUES (?,?,?,?,?,'started',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st);
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

int store_runs_started(struct store *s, struct store_run **ret, size_t *ret_n)
{
	return load_runs(s, "SELECT " RUN_COLS " FROM runs WHERE status = 'started' ORDER BY id", -1, ret, ret_n);
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

int store_steps_skip(struct store *s, int64_t job_id, int workload, int from_pair)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "UPDATE steps SET status = 'skipped' WHERE job_id = ? AND workload_idx = ? AND pair >= ? AND status = 'pending'", &st);
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

static int count_where(struct store *s, const char *sql, const char *status, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, status);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return store_sql_err(s, rc, "count");
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

int store_count_jobs(struct store *s, enum job_status status, int64_t *ret)
{
	return count_where(s, "SELECT count(*) FROM jobs WHERE status = ?", job_status_name(status), ret);
}

int store_count_runs(struct store *s, enum run_status status, int64_t *ret)
{
	return count_where(s, "SELECT count(*) FROM runs WHERE status = ?", run_status_name(status), ret);
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

int store_job_run_times(struct store *s, int64_t job_id, size_t *ret_n, double *ret_sum, double *ret_current_started)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT count(finished), coalesce(sum(finished - started), 0), "
			   "coalesce(max(CASE WHEN finished IS NULL THEN started END), 0) FROM runs "
			   "WHERE job_id = ?1 AND started > 0 AND status <> 'aborted'", &st);
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
	/* newest finished run first, by rowid; each probe is a primary-key
	 * lookup in metrics, so this stops at the first run that has it */
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT r.id, m.value FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = ?1 "
			   "WHERE r.finished IS NOT NULL ORDER BY r.id DESC LIMIT 1", &st);
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
		if (n + 1 >= cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn)
				goto nomem;
			names = nn;
			cap = nc;
		}
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
