/* The storage layer: the only module that speaks SQL. SQLite, WAL mode,
 * numbered migrations in PRAGMA user_version. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 16

/* ---- statuses ----
 * Each status the store records comes from one list below: X(ENUM, word),
 * in the enum's order. The list makes the enum, its name table, its
 * parser (store_status.c) and the words the SQL writes and matches (the
 * columns keep them as TEXT; a word, once stored, never changes: older
 * databases must read). A word the list does not know, read from a
 * database (a newer kab's, a hand edit), loads as X_STATUS_UNKNOWN: never
 * ok, named "unknown", and the store refuses to write it back. parse: 0,
 * or -EINVAL for an unknown word. */
/* The third column: the job finished (job_status_finished). */
/* clang-format off */
#define JOB_STATUS_LIST(X) \
	X(JOB_QUEUED, "queued", false) X(JOB_RUNNING, "running", false) X(JOB_INTERRUPTED, "interrupted", false) \
	X(JOB_DONE, "done", true) X(JOB_FAILED, "failed", true) X(JOB_CANCELLED, "cancelled", true)
#define STEP_STATUS_LIST(X) \
	X(STEP_PENDING, "pending") X(STEP_STARTED, "started") X(STEP_FINISHED, "finished") \
	X(STEP_ABORTED, "aborted") X(STEP_SKIPPED, "skipped") X(STEP_BOOT_FAILED, "boot-failed")
/* In the order the report counts them (kab report, its JSON, /metrics).
 * RUN_WARMUP: a workload's warm-up run (STORE_PAIR_WARMUP), whatever its
 * outcome (in its reason); like every status but ok, never counted. The
 * third column: the run finished (run_status_finished). */
#define RUN_STATUS_LIST(X) \
	X(RUN_OK, "ok", true) X(RUN_FAILED, "failed", true) X(RUN_OOM_KILLED, "oom-killed", true) \
	X(RUN_OOM_CONTAMINATED, "oom-contaminated", true) X(RUN_EXPECT_FAILED, "expect-failed", true) \
	X(RUN_TIMED_OUT, "timed-out", true) \
	X(RUN_ABORTED, "aborted", false) X(RUN_SKIPPED, "skipped", false) X(RUN_STARTED, "started", false) \
	X(RUN_WARMUP, "warmup", false)
#define BOOT_STATUS_LIST(X) \
	X(BOOT_SWITCHING, "switching") X(BOOT_OK, "ok") X(BOOT_FAILED, "failed") X(BOOT_ABANDONED, "abandoned")
#define BUILD_STATUS_LIST(X) X(BUILD_BUILDING, "building") X(BUILD_OK, "ok") X(BUILD_FAILED, "failed")
/* clang-format on */

#define STORE_ENUM_ITEM(e, ...) e,
enum job_status { JOB_STATUS_UNKNOWN = -1, JOB_STATUS_LIST(STORE_ENUM_ITEM) JOB_STATUS_N };
enum step_status { STEP_STATUS_UNKNOWN = -1, STEP_STATUS_LIST(STORE_ENUM_ITEM) STEP_STATUS_N };
enum run_status { RUN_STATUS_UNKNOWN = -1, RUN_STATUS_LIST(STORE_ENUM_ITEM) RUN_STATUS_N };
enum boot_status { BOOT_STATUS_UNKNOWN = -1, BOOT_STATUS_LIST(STORE_ENUM_ITEM) BOOT_STATUS_N };
enum build_status { BUILD_STATUS_UNKNOWN = -1, BUILD_STATUS_LIST(STORE_ENUM_ITEM) BUILD_STATUS_N };
const char *job_status_name(enum job_status v);
int job_status_parse(const char *s, enum job_status *ret);
const char *step_status_name(enum step_status v);
int step_status_parse(const char *s, enum step_status *ret);
const char *run_status_name(enum run_status v);
int run_status_parse(const char *s, enum run_status *ret);
const char *boot_status_name(enum boot_status v);
int boot_status_parse(const char *s, enum boot_status *ret);
const char *build_status_name(enum build_status v);
int build_status_parse(const char *s, enum build_status *ret);
/* A finished run: one that ran to its end as one of the job's runs, ok or
 * not (failed, killed, timed out, contaminated, its expectation unmet).
 * Not finished: a warm-up, an aborted run (run again), a skipped one (an
 * adaptive stop), one still started. The one definition the report's
 * run counts and the history's nights use (the daemon's ETA adds the
 * warm-ups, whose time is the job's too). */
bool run_status_finished(enum run_status v);
/* The words of the statuses for which pred is true, as an SQL list for IN
 * (...): "'done','failed'"; "NULL" when none (matches nothing). Words are
 * the list's own, never a caller's: no quoting is needed. Returns buf. */
const char *job_status_sql_set(bool (*pred)(enum job_status), char *buf, size_t len);
const char *run_status_sql_set(bool (*pred)(enum run_status), char *buf, size_t len);
/* done, failed or cancelled: a job that will not run again by itself
 * (kab run --resume may continue a failed or cancelled one by hand). */
bool job_status_finished(enum job_status v);
/* A job's life: the statuses that may follow each (a status may always be
 * written again, with a new reason). store_job_set_status refuses any
 * other change.
 *
 *   queued      -> running, failed, cancelled
 *   running     -> interrupted, done, failed, cancelled
 *   interrupted -> running, failed, cancelled
 *   failed      -> running (kab run --resume)
 *   cancelled   -> running (kab run --resume)
 *   done        -> nothing
 */
bool job_transition_allowed(enum job_status from, enum job_status to);
/* The statuses from which `to` may be written, at most cap of them in
 * from; their count. */
size_t job_transition_from(enum job_status to, enum job_status *from, size_t cap);

struct store;

/* Opens (or creates, mode 0600, its -wal and -shm alike) the database,
 * once store_file_prepare allows it; its refusal is logged. */
int store_open(const char *path, struct store **ret);
/* Before SQLite opens path: refuses (-EPERM, the file, its owner and
 * mode and what to do in err) a database, -wal, -shm or -journal that is
 * not this user's or root's (root's only, for root) or is writable by
 * its group or others, a directory it is in that is so, or one above it
 * that is so and not sticky; -ELOOP for a symbolic link anywhere on its
 * path. Makes a missing database 0600; closes one of this user's that
 * others may read (a warning). ":memory:" and "file:" URIs pass as they
 * are. Walks the path by directory fd from /, never following a link. */
struct strbuf;
int store_file_prepare(const char *path, struct strbuf *err);
/* Opens, once store_file_prepare allows it, an existing database that a
 * writer has brought to this kab's schema, for reading only: every write
 * through it fails (SQLITE_READONLY). -EPROTO for another schema version. */
int store_open_readonly(const char *path, struct store **ret);
/* The database file's absolute path ("" for an in-memory one). */
const char *store_path(const struct store *st);
void store_close(struct store *s);
const char *store_errmsg(struct store *s);

int store_begin(struct store *s);
int store_commit(struct store *s);
int store_rollback(struct store *s);

/* ---- jobs ---- */
/* A job as the store records it: the caller fills it from a parsed job
 * (harness/job/job_store.c); every string is the caller's. */
struct store_variant_spec {
	const char *label, *name, *kernel;
	const char *knobs;   /* "path=value\n" per knob as applied; "" for none */
};
struct store_workload_spec {
	const char *name, *type;
	/* bytes; 0: unset; -1: "max", no limit */
	int64_t memory_max, memory_high, memory_swap_max;
	double timeout_s;    /* 0: none */
};
struct store_lab_claim;
struct store_job_spec {
	const char *name, *file;
	const char *text;    /* the job file; NULL stores "" */
	unsigned pairs;
	const char *order;   /* the order's name: "abba", "alternate", "random" */
	const char *swap;    /* the swap kind's name: "none", "zram", "file", "existing" */
	const struct store_variant_spec *variants;
	size_t n_variants;
	const struct store_workload_spec *workloads;
	size_t n_workloads;
	/* a lab's job this machine claimed, recorded with the job (store_lab.h); NULL: none */
	const struct store_lab_claim *lab;
};
int store_job_create(struct store *s, const struct store_job_spec *j, int64_t *ret_id);
/* The job, its variants, workloads and schedule in one transaction: no
 * reader ever sees a job without its steps, and the write lock is held
 * only for the inserts (parse and plan before calling). submitter: who
 * asked, as the job records it ("uid 1001 (alice)", "token"; NULL for
 * none, as kab run's). */
struct store_step;
int store_job_submit(struct store *s, const struct store_job_spec *j, const char *submitter, const struct store_step *steps, size_t n,
		     int64_t *ret_id);
/* A job's status and reason, when the table allows the change from the
 * row's status (-EPERM, logged, when not; -ENOENT: no such job). Only
 * harness/exec/joblife.c calls these (make lint): a job's life has one
 * owner. _from writes only when the row's status is also one of from_set
 * (bits 1u << status), in the same statement. */
int store_job_set_status(struct store *s, int64_t job_id, enum job_status status, const char *reason);
int store_job_set_status_from(struct store *s, int64_t job_id, unsigned from_set, enum job_status status, const char *reason);

/* The name of the job's directory under the state directory's jobs/
 * ("" when it has none); NULL clears it. */
int store_job_dir_get(struct store *s, int64_t job_id, char *buf, size_t len);
int store_job_dir_set(struct store *s, int64_t job_id, const char *name);

struct store_job {
	int64_t id;
	char name[128];
	enum job_status status;
	char reason[256];
	char file[256];
	char submitter[80];  /* "" when not recorded (kab run, older jobs) */
	double created, started, finished;
	unsigned pairs;
	char order[16];
	char *text;   /* the job file, malloc'd; NULL from store_job_info */
};
int store_job_get(struct store *s, int64_t job_id, struct store_job *ret);
/* The same without the job's text: what listing and showing a job need,
 * which never parses it again. */
int store_job_info(struct store *s, int64_t job_id, struct store_job *ret);
/* A job's variants (name, kernel) or workloads (name, type) by index, as
 * stored at submit. The caller frees *ret. */
struct store_job_part {
	char name[128];
	char kind[32];
};
int store_job_variants(struct store *s, int64_t job_id, struct store_job_part **ret, size_t *ret_n);
int store_job_workloads(struct store *s, int64_t job_id, struct store_job_part **ret, size_t *ret_n);
void store_job_clear(struct store_job *j);
/* Jobs with that status, oldest first. */
int store_jobs_with_status(struct store *s, enum job_status status, int64_t **ret_ids, size_t *ret_n);

/* Up to limit job ids below `before` (all when before <= 0), newest first. */
int store_jobs_page(struct store *s, int64_t before, size_t limit, int64_t **ret_ids, size_t *ret_n);
/* How many jobs, or runs, have that status. */
int store_count_jobs(struct store *s, enum job_status status, int64_t *ret);
int store_count_runs(struct store *s, enum run_status status, int64_t *ret);
/* Of a job's finished runs and warm-ups (run_status_finished): how many
 * and their summed durations (s); and when the one still going started
 * (0: none). */
int store_job_run_times(struct store *s, int64_t job_id, size_t *ret_n, double *ret_sum, double *ret_current_started);
/* A metric the run could not measure here (tracing locked down, …), and why. */
int store_run_unavailable(struct store *s, int64_t run_id, const char *metric, const char *reason);
typedef void (*store_unavailable_fn)(void *ctx, const char *metric, const char *reason, size_t runs);
/* Each distinct (metric, reason) of a job's runs, with how many runs. */
int store_job_unavailable(struct store *s, int64_t job_id, store_unavailable_fn fn, void *ctx);
/* The value of a metric in the newest finished run (run_status_finished)
 * that has it, and that run's id; -ENOENT when no run has it. */
int store_last_run_metric(struct store *s, const char *name, int64_t *ret_run, double *ret_value);

/* ---- schedule ---- */
/* The pair of a workload's warm-up step and of its run: one uncounted run
 * before the workload's first pair (doc/statistics.md, rule 1), in no pair. */
#define STORE_PAIR_WARMUP (-1)
struct store_step {
	int64_t id;
	int seq, pair, variant, workload; /* pair: from 0; STORE_PAIR_WARMUP: the warm-up */
	enum step_status status;
	int boot;          /* the plan's boot (jobs that boot kernels); -1: none */
	int rep;           /* the run's index inside its boot */
};
int store_steps_create(struct store *s, int64_t job_id, const struct store_step *steps, size_t n);
int store_steps_load(struct store *s, int64_t job_id, struct store_step **ret, size_t *ret_n);
int store_step_set_status(struct store *s, int64_t step_id, enum step_status status);
/* A job's schedule in numbers, without loading it: its steps by status
 * (a status this kab does not know in `unknown`), and the started step
 * latest in the plan (id 0: none). */
struct store_steps_count {
	size_t n[STEP_STATUS_N];
	size_t unknown, total;
	struct store_step current;
};
int store_steps_count(struct store *s, int64_t job_id, struct store_steps_count *ret);

/* ---- runs ---- */
struct store_run {
	int64_t id, job_id, step_id;
	int pair, variant, workload;
	enum run_status status;
	int exit_code;      /* -1: none */
	int term_signal;    /* 0: none */
	char reason[512];
	double started, finished;
	int pid;
	/* provenance */
	char kab_version[32];
	char kernel_release[128];
	char boot_id[64];
	char cmdline[1024];
	int cpus;
	uint64_t mem_total, swap_total;
	char swap_devices[512];
	int cgroup_version;
	char cgroup_path[256];
	char knobs[2048];        /* "path=value\n" as read back after applying */
	uint64_t memory_max;     /* 0: none */
	char stdout_tail[2048];
	char stderr_tail[2048];
	/* "key=value\n": the machine's mm and cpufreq settings (prov_settings) */
	char settings[6144];
	/* "key=value\n": what [job]'s conditioning did before the run ("" none) */
	char conditioning[512];
};
/* A settings key for display: "transparent_hugepage/enabled",
 * "vm.swappiness", "zswap/enabled", "cpufreq.governor". */
const char *store_setting_name(const char *key, char *buf, size_t len);
/* Inserts a 'started' run and marks its step started, in one transaction. */
int store_run_begin(struct store *s, struct store_run *r, int64_t *ret_id);

/* A metric of a run as the store records it: a workload's own, a counter's
 * delta, the run's rusage (workloads/wl.h collects them). */
struct store_metric {
	char name[96];
	char unit[16];
	double value;
};

struct store_series {
	const char *metric;
	const uint8_t *blob;
	size_t len;
	size_t n;
};
/* Writes the run's final status, metrics and series and marks the step,
 * in one transaction. step_status: finished, aborted, ... */
int store_run_finish(struct store *s, const struct store_run *r, enum step_status step_status,
		     const struct store_metric *metrics, size_t n_metrics, const struct store_series *series,
		     size_t n_series);
int store_runs_load(struct store *s, int64_t job_id, struct store_run **ret, size_t *ret_n);
/* What a list of runs shows of one (GET /jobs/ID/runs): no output tails,
 * nothing copied. The strings are the store's, valid during the call, ""
 * for none, each cut to the length of struct store_run's field. */
struct store_run_row {
	int64_t id, step_id;
	int pair, variant, workload;
	enum run_status status;
	int exit_code; /* -1: none */
	int term_signal;
	double started, finished;
	int cpus, cgroup_version;
	uint64_t mem_total, swap_total, memory_max;
	const char *reason, *kab_version, *kernel_release, *boot_id, *cmdline, *swap_devices, *cgroup_path, *knobs,
		*settings, *conditioning;
};
/* Non-zero stops the walk (and is not an error). */
typedef int (*store_run_row_fn)(void *ctx, const struct store_run_row *r);
/* The job's runs with ids above `after`, in id order, at most limit of
 * them (SIZE_MAX: all), one call each: one row in memory at a time. */
int store_runs_page(struct store *s, int64_t job_id, int64_t after, size_t limit, store_run_row_fn fn, void *ctx);
/* Runs left 'started' (by a crash): the caller decides they are stale. */
int store_runs_started(struct store *s, struct store_run **ret, size_t *ret_n);

/* One call per (run, metric), runs in execution order. */
typedef void (*store_metric_fn)(void *ctx, const struct store_run *r, const char *metric, const char *unit, double value);
int store_foreach_metric(struct store *s, int64_t job_id, store_metric_fn fn, void *ctx);

int store_series_get(struct store *s, int64_t run_id, const char *metric, uint8_t **ret_blob, size_t *ret_len, size_t *ret_n);
/* One call per series stored for a run, in name order ("t_ns" among
 * them): its name, encoded blob and sample count, valid during the call. */
typedef void (*store_series_fn)(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n);
int store_series_foreach(struct store *s, int64_t run_id, store_series_fn fn, void *ctx);

/* ---- adaptive budgets ---- */
/* Looks taken, pairs finished and why a workload stopped ("budget",
 * "decided", "same"; NULL while it runs). */
int store_progress_set(struct store *s, int64_t job_id, int workload, int looks, int pairs_done, const char *stop_reason);
int store_progress_get(struct store *s, int64_t job_id, int workload, int *ret_looks, int *ret_pairs_done,
		       char *ret_reason, size_t len);
/* Marks a workload's pending steps from pair from_pair on as skipped. */
int store_steps_skip(struct store *s, int64_t job_id, int workload, int from_pair);

/* ---- journal of machine changes, for restoring after a crash ---- */
/* The kinds of row kab journals: X(ENUM, word) as the kind column keeps
 * it. A row of another word is never acted on (exec_recover). */
/* clang-format off */
#define JOURNAL_KIND_LIST(X) \
	X(JOURNAL_KNOB, "knob") X(JOURNAL_ZRAM, "zram") X(JOURNAL_SWAPFILE, "swapfile") X(JOURNAL_CGROUP, "cgroup") \
	X(JOURNAL_FCOUNT, "fcount")
/* clang-format on */
enum journal_kind { JOURNAL_KIND_UNKNOWN = -1, JOURNAL_KIND_LIST(STORE_ENUM_ITEM) JOURNAL_KIND_N };
const char *journal_kind_name(enum journal_kind v);
int journal_kind_parse(const char *s, enum journal_kind *ret);
struct store_journal {
	int64_t id;
	int64_t job_id;
	char kind[16];        /* journal_kind_name, or a word this kab does not know */
	char target[512];     /* path or device */
	char original[4097];  /* value to restore (a knob's: up to a page, KNOB_VALUE_MAX), or extra data */
	char boot_id[64];
};
int store_journal_add(struct store *s, const struct store_journal *e, int64_t *ret_id);
int store_journal_list(struct store *s, struct store_journal **ret, size_t *ret_n);
int store_journal_del(struct store *s, int64_t id);

/* The names of the series stored for a run (sorted, "t_ns" among them),
 * a NULL-terminated array; ret_n 0 if it has none. The caller frees
 * each name and the array. */
int store_series_names(struct store *s, int64_t run_id, char ***ret, size_t *ret_n);
