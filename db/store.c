/* SQLite storage: open, the schema and its migrations, transactions, the
 * statement helpers the other store_*.c files share, counts by status. */
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
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
	/* 10: nightly history. A variant that follows a branch (track =
	 * REMOTE BRANCH) records what it resolved that night: the commit, its
	 * subject and commit date, and how the head moved since the job's
	 * previous night ("force-pushed ..."; NULL: forward or first night).
	 * history caches each night's row per workload, metric and compared
	 * variant (variant 0 is the baseline): the paired estimate (HL %
	 * change with its CI), each side's median, the verdict; filled once
	 * the job has ended, so a year of nights is one indexed read */
	"ALTER TABLE variants ADD COLUMN track TEXT;"
	"ALTER TABLE variants ADD COLUMN commit_sha TEXT;"
	"ALTER TABLE variants ADD COLUMN commit_subject TEXT;"
	"ALTER TABLE variants ADD COLUMN commit_date REAL;"
	"ALTER TABLE variants ADD COLUMN track_event TEXT;"
	"CREATE TABLE history ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id), name TEXT NOT NULL, night REAL NOT NULL,"
	"  workload TEXT NOT NULL, metric TEXT NOT NULL, variant_idx INTEGER NOT NULL,"
	"  pairs INTEGER NOT NULL, estimate_pct REAL, ci_lo_pct REAL, ci_hi_pct REAL, p REAL,"
	"  verdict TEXT, median_base REAL, median_variant REAL, unit TEXT, direction TEXT,"
	"  is_primary INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (job_id, workload, metric, variant_idx)) WITHOUT ROWID;"
	"CREATE INDEX history_name ON history(name, metric, night);",
	/* 11: change points of a nightly history and their confirmation: the
	 * nights on each side (last good, first bad) and their commits, what
	 * the detector saw, the confirmation job (last good against first bad,
	 * paired) and its verdict; confirmed ones are regressions or
	 * improvements, open until acknowledged */
	"CREATE TABLE regressions ("
	"  id INTEGER PRIMARY KEY, created REAL NOT NULL, name TEXT NOT NULL, workload TEXT NOT NULL,"
	"  metric TEXT NOT NULL, variant_idx INTEGER NOT NULL, direction TEXT,"
	"  good_job INTEGER NOT NULL REFERENCES jobs(id), bad_job INTEGER NOT NULL REFERENCES jobs(id),"
	"  good_night REAL, bad_night REAL, track TEXT, good_sha TEXT, bad_sha TEXT,"
	"  good_subject TEXT, bad_subject TEXT, mean_before REAL, mean_after REAL,"
	"  detected_pct REAL, detected_p REAL, machine TEXT,"
	"  confirm_job INTEGER REFERENCES jobs(id), state TEXT NOT NULL, reason TEXT,"
	"  estimate_pct REAL, ci_lo_pct REAL, ci_hi_pct REAL, p REAL, verdict TEXT,"
	"  acked REAL, acked_by TEXT,"
	"  UNIQUE (name, workload, metric, variant_idx, bad_job));"
	"CREATE INDEX regressions_confirm ON regressions(confirm_job);",
	/* 12: the history's night markers: each ended job of a name once its
	 * rows are made, measured or not (a failed night is a marker without
	 * rows: a gap, never a zero), so a job with a marker is not computed
	 * again. A row's rank is its metric's row in the job's report (0: the
	 * workload's first; primary metrics rank first), and it names its
	 * variant and baseline. The indexes serve the default view (primary
	 * metrics) and the jobs of a name */
	"ALTER TABLE history ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE history ADD COLUMN variant_name TEXT;"
	"ALTER TABLE history ADD COLUMN base_name TEXT;"
	"CREATE INDEX history_view ON history(name, is_primary, rank);"
	"CREATE TABLE history_nights ("
	"  job_id INTEGER PRIMARY KEY REFERENCES jobs(id), name TEXT NOT NULL, night REAL NOT NULL,"
	"  status TEXT NOT NULL, reason TEXT, runs INTEGER NOT NULL, runs_failed INTEGER NOT NULL,"
	"  computed REAL NOT NULL, kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL);"
	"CREATE INDEX history_nights_name ON history_nights(name, night);"
	"CREATE INDEX jobs_name ON jobs(name, status);",
	/* 13: bisections (doc/bisect.md): a range GOOD..BAD of a tree searched
	 * for the commit that moved a source job's metric, its state through
	 * a checked table (store_bisect.h) and its report once it ends; each
	 * comparison it needs is a step job, recorded under a unique name
	 * before it is queued, so that a restart finds it and replays the
	 * bisection from the store */
	"CREATE TABLE bisections ("
	"  id INTEGER PRIMARY KEY, created REAL NOT NULL, ended REAL,"
	"  regression_id INTEGER REFERENCES regressions(id), source_job INTEGER NOT NULL REFERENCES jobs(id),"
	"  variant_idx INTEGER NOT NULL, tree TEXT NOT NULL, series TEXT, good TEXT NOT NULL, bad TEXT NOT NULL,"
	"  workload TEXT NOT NULL, metric TEXT NOT NULL, direction TEXT, state TEXT NOT NULL, reason TEXT,"
	"  report TEXT, submitter TEXT, kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL);"
	"CREATE INDEX bisections_regression ON bisections(regression_id);"
	"CREATE INDEX bisections_state ON bisections(state);"
	"CREATE TABLE bisection_jobs ("
	"  id INTEGER PRIMARY KEY, bisection_id INTEGER NOT NULL REFERENCES bisections(id),"
	"  job_id INTEGER REFERENCES jobs(id), name TEXT NOT NULL UNIQUE, sha TEXT NOT NULL, base TEXT NOT NULL,"
	"  k INTEGER NOT NULL, created REAL NOT NULL);"
	"CREATE INDEX bisection_jobs_bisection ON bisection_jobs(bisection_id, id);"
	"CREATE INDEX bisection_jobs_job ON bisection_jobs(job_id);"
	"CREATE INDEX builds_commit ON builds(tree, base_sha);",
	/* 14: a bisection's budget of boots for its step jobs (0: none, a
	 * bisection asked before there were budgets); and on a regression of a
	 * nightly job with bisect = auto, what kabd's own asking for its
	 * bisection did (started it, or why not), written once so that it is
	 * asked for once, also across restarts */
	"ALTER TABLE bisections ADD COLUMN boots INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE regressions ADD COLUMN auto_bisect TEXT;",
	/* 15: a bisection's controls of a confirmed culprit (bisect.revert,
	 * bisect.align) are step jobs too: which control a row measures
	 * (NULL: a step's, the anchor's or a confirmation's comparison) */
	"ALTER TABLE bisection_jobs ADD COLUMN control TEXT;",
	/* 16: a lab's job this machine claimed (doc/lab.md): the local job it
	 * became, written with the job in one transaction, so that after a
	 * kexec, a restart or a power cut kabd knows which lease it holds;
	 * its key makes the UUIDs of its uploads; then its end, and its
	 * upload to the lab (the outbox: tries and the last error until
	 * uploaded), or that the lab took it back (lost) */
	"CREATE TABLE lab_claims ("
	"  job_id INTEGER PRIMARY KEY REFERENCES jobs(id), lab_job INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	"  key TEXT NOT NULL, state TEXT NOT NULL, lost INTEGER NOT NULL DEFAULT 0, outcome TEXT, reason TEXT,"
	"  claimed REAL NOT NULL, ended REAL, uploaded REAL, tries INTEGER NOT NULL DEFAULT 0, error TEXT,"
	"  kab_version TEXT NOT NULL, schema_version INTEGER NOT NULL, UNIQUE (lab_job, attempt));"
	"CREATE INDEX lab_claims_state ON lab_claims(state);",
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

static const char *sql_format(char *buf, size_t len, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, len, fmt, ap);
	if (n < 0 || (size_t)n >= len) {
		log_error("an SQL statement of kab's does not fit its buffer (%zu bytes): %.60s...", len, fmt);
		buf[0] = 0;
	}
	return buf;
}

const char *store_sql(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sql_format(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

int store_preparef(struct store *s, sqlite3_stmt **ret, const char *fmt, ...)
{
	char sql[2048];
	va_list ap;
	va_start(ap, fmt);
	sql_format(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return store_prepare(s, sql, ret);
}

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

int store_rows(struct store *s, sqlite3_stmt *st, size_t size, store_row_fn fn, void (*clear)(void *), void **ret,
	       size_t *ret_n, const char *what)
{
	char *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			char *nv = realloc(v, ncap * size);
			if (!nv) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		memset(v + n * size, 0, size);
		fn(st, v + n++ * size);
	}
	if (rc != SQLITE_DONE) {
		for (size_t i = 0; clear && i < n; i++)
			clear(v + i * size);
		free(v);
		return rc == SQLITE_NOMEM ? -ENOMEM : store_db_err(s, what);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_row(struct store *s, sqlite3_stmt *st, store_row_fn fn, void *elem, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return store_db_err(s, what);
	fn(st, elem);
	return 0;
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

/* The database at path, once store_file_prepare allows it, opened with
 * flags (no link followed) and SQLite's busy wait set; logged on failure. */
static int open_checked(const char *path, int flags, struct store **ret)
{
	struct strbuf err = { 0 };
	int r = store_file_prepare(path, &err);
	if (r < 0)
		log_error("%s", err.buf ? err.buf : strerror(-r));
	sb_free(&err);
	if (r < 0)
		return r;
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		log_error("cannot open database %s%s: %s", path, flags & SQLITE_OPEN_READONLY ? " to read" : "",
			  s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		sqlite3_close(s->db);
		free(s);
		return -EIO;
	}
	sqlite3_busy_timeout(s->db, 5000);
	*ret = s;
	return 0;
}

int store_open(const char *path, struct store **ret)
{
	struct store *s;
	int r = open_checked(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &s);
	if (r < 0)
		return r;
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

int store_open_readonly(const char *path, struct store **ret)
{
	/* the same ownership checks as a writer's: SQLite may still create or
	 * map the -shm of a WAL database for a reader */
	struct store *s;
	int r = open_checked(path, SQLITE_OPEN_READONLY, &s);
	if (r < 0)
		return r;
	/* no migration here: a reader never writes, and the writer that opened
	 * the database (kabd's executor) brought it to this schema */
	sqlite3_stmt *st;
	if ((r = store_prepare(s, "PRAGMA user_version", &st)) < 0)
		goto fail;
	int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (version != STORE_SCHEMA_VERSION) {
		log_error("database %s has schema version %d, this kab reads %d: open it with kab once to migrate it",
			  path, version, STORE_SCHEMA_VERSION);
		r = -EPROTO;
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	sqlite3_close(s->db);
	free(s);
	return r;
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
