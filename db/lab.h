/* The lab: one PostgreSQL database many machines share, as the queue of
 * whole jobs and the store of everyone's uploaded results (libpq). Each
 * machine's SQLite stays its own journal; this is what they share.
 *
 * The queue follows what PostgreSQL job queues learned: a job is claimed
 * in one short statement (SELECT ... FOR UPDATE SKIP LOCKED), then held by
 * a lease the machine renews (its heartbeat renews all of its leases); no
 * row lock or transaction stays open while a job runs. A lease past its
 * time is rescued: the job goes back to the queue whole, its lost attempt
 * kept and marked, until its attempts run out. Every write is idempotent:
 * a finish or an upload sent twice changes nothing the second time.
 *
 * Every statement is parameterized (PQexecParams); the words of the state
 * lists below go in as parameters too. Errors go out through a strbuf:
 * what failed, where, and what to do. doc/lab.md is the operator's side. */
#pragma once
#include "db/store_history.h"
#include "harness/base/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lab; /* one connection to the lab's database */

/* clang-format off */
#define LAB_MACHINE_STATE_LIST(X) \
	X(LAB_MACHINE_IDLE, "idle") X(LAB_MACHINE_BUSY, "busy") X(LAB_MACHINE_OFFLINE, "offline")
#define LAB_JOB_STATE_LIST(X) \
	X(LAB_JOB_QUEUED, "queued") X(LAB_JOB_RUNNING, "running") X(LAB_JOB_DONE, "done") \
	X(LAB_JOB_FAILED, "failed") X(LAB_JOB_CANCELLED, "cancelled")
/* an attempt is one claim of a job by a machine; "lost": its lease ran
 * out (the machine died or was cut off), its runs kept but not counted */
#define LAB_ATTEMPT_OUTCOME_LIST(X) \
	X(LAB_ATTEMPT_RUNNING, "running") X(LAB_ATTEMPT_DONE, "done") X(LAB_ATTEMPT_FAILED, "failed") \
	X(LAB_ATTEMPT_LOST, "lost") X(LAB_ATTEMPT_CANCELLED, "cancelled")
/* clang-format on */
#define LAB_ENUM_ITEM(e, w) e,
#define LAB_WORD_ITEM(e, w) w,
/* each list's enum, its word and its parser (0, or -EINVAL) */
enum lab_machine_state { LAB_MACHINE_STATE_LIST(LAB_ENUM_ITEM) LAB_MACHINE_STATE_N };
const char *lab_machine_state_name(enum lab_machine_state v);
int lab_machine_state_parse(const char *s, enum lab_machine_state *ret);
enum lab_job_state { LAB_JOB_STATE_LIST(LAB_ENUM_ITEM) LAB_JOB_STATE_N };
const char *lab_job_state_name(enum lab_job_state v);
int lab_job_state_parse(const char *s, enum lab_job_state *ret);
enum lab_attempt_outcome { LAB_ATTEMPT_OUTCOME_LIST(LAB_ENUM_ITEM) LAB_ATTEMPT_OUTCOME_N };
const char *lab_attempt_outcome_name(enum lab_attempt_outcome v);
int lab_attempt_outcome_parse(const char *s, enum lab_attempt_outcome *ret);

/* ---- connecting ---- */

#define LAB_CONNECT_TIMEOUT_S 10.0

struct lab_opts {
	const char *url;         /* postgresql://... or key=value conninfo, service=NAME too */
	const char *credentials; /* a libpq password file (0600, root's when kab is root); NULL: none */
	double timeout_s;        /* connecting; 0: LAB_CONNECT_TIMEOUT_S */
};

/* The URL as kab takes it, before any network: it parses, holds no
 * password (that belongs in the credentials file), and every host that is
 * not local (a unix socket, localhost, 127.0.0.0/8, ::1) is reached with
 * sslmode=verify-full. -EINVAL with the reason in err. */
int lab_check_url(const char *url, struct strbuf *err);
/* The credentials file: a regular file closed to group and others, owned
 * by root when kab runs as root (else by the user running it), reached
 * through directories only root (or that user) may write (secret_open).
 * -EPERM or -errno with the file, or the directory at fault, named in err.
 * lab_connect checks it so at every connect and hands libpq the open file
 * it checked (/proc/self/fd/N), never the name again. The sslrootcert the
 * URL, a service file or $PGSSLROOTCERT names (it decides which server is
 * the lab) goes the same way as a file kab trusts (secret_open_trusted):
 * root's or that user's, not writable by group or others. */
int lab_check_credentials(const char *path, struct strbuf *err);

/* Connects (both checks first, the URL's again on what a service file
 * gave), within the timeout, then brings the schema to this kab's version:
 * created when missing, migrated when older, refused when newer (both
 * versions in err). Close with lab_close. */
int lab_open(const struct lab_opts *o, struct lab **ret, struct strbuf *err);
/* lab_open without the schema step (tests; lab_schema_upgrade then). */
int lab_connect(const struct lab_opts *o, struct lab **ret, struct strbuf *err);
void lab_close(struct lab *l);
/* One round trip of SELECT 1: whether the lab answers, and the least a
 * statement costs on this connection (bench_lab's reference). */
int lab_ping(struct lab *l, struct strbuf *err);
#define _cleanup_lab_ _cleanup_(lab_closep)
void lab_closep(struct lab **l);

/* ---- the schema ---- */

/* This kab's schema version: the number of its migrations. */
int lab_schema_latest(void);
/* The database's schema version into *ret (0: no schema yet). */
int lab_schema_version(struct lab *l, int *ret, struct strbuf *err);
/* Migrates up to version upto (at most lab_schema_latest()), in one
 * transaction under an advisory lock, so machines starting together
 * migrate once. A newer database than upto is refused: -EPROTO. */
int lab_schema_upgrade(struct lab *l, int upto, struct strbuf *err);

/* ---- machines ---- */

#define LAB_UUID_LEN 36
#define LAB_TAGS_MAX 32
#define LAB_TAG_MAX 64

struct lab_machine {
	char id[LAB_UUID_LEN + 1]; /* lab_machine_id */
	char hostname[256];
	int cpus;
	uint64_t memory; /* bytes */
	char arch[32];
	char kernel[128];
	bool can_kexec;
	int cgroup_version; /* 1 or 2 */
	char tags[LAB_TAGS_MAX][LAB_TAG_MAX + 1];
	size_t n_tags;
	/* read back (lab_machines): its state and its heartbeat's age */
	enum lab_machine_state state;
	double heartbeat_age_s;
	int64_t job; /* the lab job it holds (running), 0: none */
};

/* The machine's id as a UUID: /etc/machine-id's 32 hex digits (path), else
 * kab's own, read from own_path or made there once (random, 0600). */
int lab_machine_id(const char *path, const char *own_path, char ret[LAB_UUID_LEN + 1], struct strbuf *err);
/* Tags as machine.conf writes them ("fast-disk numa2"): words of letters,
 * digits, '.', '_' and '-', separated by spaces or commas; -EINVAL naming
 * the bad one. Sorted, duplicates dropped. */
int lab_tags_parse(const char *text, struct lab_machine *m, struct strbuf *err);

/* Registers the machine (or updates what it says of itself), idle. */
int lab_register(struct lab *l, const struct lab_machine *m, struct strbuf *err);
/* The machine is alive: its heartbeat, its state, and every lease it holds
 * renewed for lease_s more seconds (how many in *ret_renewed, may be NULL). */
int lab_heartbeat(struct lab *l, const char *machine, enum lab_machine_state state, double lease_s, int *ret_renewed,
		  struct strbuf *err);
/* Every registered machine, by hostname, into *ret (free). */
int lab_machines(struct lab *l, struct lab_machine **ret, size_t *ret_n, struct strbuf *err);

/* ---- selectors ---- */

/* Which machines a job may run on: every term must hold. Terms, separated
 * by spaces or commas:
 *   host=NAME  tag=NAME  arch=NAME  cgroup=1|2  kexec
 *   cpus OP N  memory OP SIZE     (OP: >= <= > < =; SIZE as 64G)
 * Empty: any machine. */
struct lab_selector {
	char host[256]; /* "": any */
	char arch[32];  /* "": any */
	int64_t cpus_min, cpus_max;
	uint64_t memory_min, memory_max; /* bytes */
	int cgroup;                      /* 0: any */
	bool kexec;
	char tags[LAB_TAGS_MAX][LAB_TAG_MAX + 1];
	size_t n_tags;
};
#define LAB_SELECTOR_MAX 1024
/* -EINVAL with the bad term named in err (and what was meant, when close),
 * or terms no machine could meet together (cpus>=64 cpus<=8). */
int lab_selector_parse(const char *text, struct lab_selector *ret, struct strbuf *err);
/* The normalized form: terms in a fixed order, "" for any machine. */
void lab_selector_format(const struct lab_selector *s, char *buf, size_t len);
/* Whether m meets s; if not and why is not NULL, the first term it fails
 * and what the machine has ("cpus>=64: it has 2"). */
bool lab_selector_match(const struct lab_selector *s, const struct lab_machine *m, struct strbuf *why);

/* ---- the queue ---- */

#define LAB_JOB_TEXT_MAX (256 * 1024)

struct lab_submit {
	const char *text; /* the job file's text, checked by the caller */
	const struct lab_selector *selector;
	int max_attempts; /* >= 1 */
	const char *submitted_by;
};
/* Queues a job; its id in *ret_id. Machines that LISTEN are woken. */
int lab_submit(struct lab *l, const struct lab_submit *s, int64_t *ret_id, struct strbuf *err);

struct lab_claim {
	int64_t job;
	int attempt; /* 1 for the first */
	char *text;  /* the job file's text (free) */
};
/* The oldest queued job this machine matches, taken in one short
 * statement (FOR UPDATE SKIP LOCKED) and leased for lease_s seconds: 1
 * and *ret filled, or 0 when there is none. */
int lab_claim(struct lab *l, const char *machine, double lease_s, struct lab_claim *ret, struct strbuf *err);
void lab_claim_free(struct lab_claim *c);
/* The lease of the machine's attempt for lease_s more seconds (after a
 * kexec, say); -ESTALE when the attempt is no longer the machine's. */
int lab_renew(struct lab *l, const char *machine, int64_t job, int attempt, double lease_s, struct strbuf *err);
/* The attempt ended (done, failed or cancelled), reason may be NULL: 1
 * when this call ended it, 0 when it had ended already (a repeat), -ESTALE
 * when the attempt was lost (its lease expired and the job was rescued). */
int lab_finish(struct lab *l, const char *machine, int64_t job, int attempt, enum lab_attempt_outcome outcome,
	       const char *reason, struct strbuf *err);
/* Leases past their time: each job back to the queue whole, or failed once
 * its attempts are spent, its lost attempt marked; how many in *ret_n. */
int lab_rescue(struct lab *l, int *ret_n, struct strbuf *err);

struct lab_job {
	int64_t id;
	enum lab_job_state state;
	int attempts, max_attempts;
	char machine[LAB_UUID_LEN + 1]; /* "": none holds it */
	char selector[LAB_SELECTOR_MAX];
	char reason[512];
	char hostname[256]; /* the machine's that holds it, "": none */
	char submitted_by[128];
	double created, finished; /* the server's clock, seconds since the epoch; finished 0: not yet */
};
int lab_job_get(struct lab *l, int64_t id, struct lab_job *ret, struct strbuf *err);
/* Up to limit jobs, newest first; machine (a host name or a machine id,
 * NULL: any) keeps the jobs it holds or made an attempt of. *ret (free). */
int lab_jobs_list(struct lab *l, const char *machine, size_t limit, struct lab_job **ret, size_t *ret_n, struct strbuf *err);
/* How many jobs are queued. */
int lab_queue_depth(struct lab *l, int64_t *ret, struct strbuf *err);
/* Every attempt of a job, in order: who made it, when, how it ended. */
struct lab_attempt {
	int attempt;
	char machine[LAB_UUID_LEN + 1];
	char hostname[256];
	enum lab_attempt_outcome outcome;
	char reason[512];
	double started, ended; /* ended 0: not yet */
};
int lab_attempts(struct lab *l, int64_t job, struct lab_attempt **ret, size_t *ret_n, struct strbuf *err);
/* Gives a lease back now (the machine claimed a job it cannot run, or
 * lost track of one): its lease ends and the job is rescued at once,
 * back to the queue whole with the attempt counted (lab_rescue). 0 also
 * when the attempt was no longer the machine's. */
int lab_release(struct lab *l, const char *machine, int64_t job, int attempt, struct strbuf *err);
/* The jobs the lab says this machine holds (running, its lease): their
 * ids and attempts, *ret pairs (free), *ret_n of them. */
int lab_held(struct lab *l, const char *machine, int64_t **ret, size_t *ret_n, struct strbuf *err);
/* One attempt's outcome and the machine that made it. */
int lab_attempt_get(struct lab *l, int64_t job, int attempt, enum lab_attempt_outcome *ret_outcome,
		    char ret_machine[LAB_UUID_LEN + 1], struct strbuf *err);
/* Why a job is still queued, for people: each registered machine and the
 * term it fails, or that it matches (and is busy). */
int lab_job_why(struct lab *l, int64_t id, struct strbuf *out, struct strbuf *err);

/* Wakes on submits: lab_listen once on a connection of its own (a direct
 * one: LISTEN does not pass a transaction pooler), then lab_wait: 1 when a
 * job was queued (or re-queued), 0 when timeout_s passed first. Claim
 * after either: the wait is a hint, polling is the fallback. */
int lab_listen(struct lab *l, struct strbuf *err);
int lab_wait(struct lab *l, double timeout_s, struct strbuf *err);

/* ---- uploads ---- */

/* What a machine uploads, each row keyed by a UUID (a job's state by its
 * lab job and attempt) and belonging to a lab job's attempt, written with
 * an upsert that only the machine that wrote the row may update: sending
 * it twice leaves one row. Refused and nothing written, named in err: an
 * attempt the lab records as another machine's (-EPERM, naming it) or
 * does not have (-ENOENT), another machine's row with the same key
 * (-EPERM, naming its owner), no job or attempt (-EINVAL). */
enum lab_upload_kind { LAB_UPLOAD_RUN, LAB_UPLOAD_BOOT, LAB_UPLOAD_BUILD, LAB_UPLOAD_JOB_STATE, LAB_UPLOAD_N };
struct lab_upload {
	enum lab_upload_kind kind;
	char id[LAB_UUID_LEN + 1]; /* not for a job state */
	char machine[LAB_UUID_LEN + 1];
	int64_t job; /* the lab job and attempt (>= 1) it belongs to, the uploader's */
	int attempt;
	const char *status;
	const char *data; /* a JSON object with the rest; NULL: {} */
};
int lab_upload(struct lab *l, const struct lab_upload *u, struct strbuf *err);

/* ---- nightly results ---- */

/* One night of a nightly job as the machine that ran it holds it in its
 * own history (store_history_nights and store_history_rows for the job),
 * for the lab job and attempt it was. Rows whose estimate is NAN are kept
 * (stored NULL): the night measured nothing for that metric. */
struct lab_night {
	char machine[LAB_UUID_LEN + 1];
	int64_t job;                             /* the lab's job, > 0 */
	int attempt;                             /* >= 1 */
	const char *name;                        /* the job's name */
	const struct store_history_night *night; /* status, start, runs, tracked commits */
	const struct store_history_row *rows;    /* NULL when n_rows is 0 */
	size_t n_rows;
};
/* Writes the night whole, in one transaction, replacing what an earlier
 * upload of it held: a repeat leaves the same rows. Only the machine whose
 * attempt it was may (another machine -EPERM, an attempt the lab does not
 * have -ENOENT, both named in err); a bad field -EINVAL, naming the row.
 * The view otava_nights shows its measured rows (doc/lab.md). */
int lab_night_put(struct lab *l, const struct lab_night *n, struct strbuf *err);

/* ---- lab-wide reads (db/lab_reads.c) ---- */

/* The machine a filter names, by host name or id: its id and host name.
 * -ENOENT when none has it, -EEXIST when two machines share that host
 * name (a machine reinstalled keeps its name and gets a new id): both
 * named in err, to be asked for by id. */
int lab_machine_find(struct lab *l, const char *machine, char ret_id[LAB_UUID_LEN + 1], char ret_host[256], struct strbuf *err);

/* The uploaded report (JSON text, malloc'd into *ret, "null" when the job
 * state carries none) of a job's attempt, with the machine that made it.
 * -ENOENT when the attempt has no uploaded state. */
int lab_job_report(struct lab *l, int64_t job, int attempt, char **ret, char ret_machine[LAB_UUID_LEN + 1],
		   char ret_host[256], int64_t *ret_local_job, struct strbuf *err);

/* One machine's nightly history of a job name, from the nights it
 * uploaded (lab_night_put), in the shapes store_history_nights, _rows and
 * _metric_names give them (harness/report/history.h's source): a night's
 * job_id is the lab's job. Nights of lost attempts are left out (their
 * job ran again whole). machine is an id (lab_machine_find). */
int lab_history_nights(struct lab *l, const char *machine, const char *name, struct store_history_night **ret,
		       size_t *ret_n, struct strbuf *err);
int lab_history_rows(struct lab *l, const char *machine, const char *name, const struct store_history_filter *f,
		     struct store_history_row **ret, size_t *ret_n, struct strbuf *err);
int lab_history_metric_names(struct lab *l, const char *machine, const char *name, char ***ret, size_t *ret_n, struct strbuf *err);
/* The machines with nights of that name, by host name: "lab1 (ID), ..."
 * into out; how many in *ret_n. */
int lab_history_machines(struct lab *l, const char *name, struct strbuf *out, size_t *ret_n, struct strbuf *err);

/* A change point a machine's nightly history found, as its SQLite holds
 * it (db/store_regress.h), uploaded whole as JSON (data) with the columns
 * the lab filters on. Keyed by the machine and its local id: a machine
 * writes only its own rows, and a repeat leaves one. */
struct lab_regress {
	char machine[LAB_UUID_LEN + 1];
	int64_t local_id;
	const char *name, *workload, *metric, *state;
	int variant;
	double created;
	int64_t good_job, bad_job; /* the lab's jobs of the two nights; 0: not lab jobs */
	const char *data;          /* a JSON object */
	/* read back (lab_regressions) */
	char hostname[256];
};
int lab_regress_put(struct lab *l, const struct lab_regress *r, struct strbuf *err);
/* Up to limit change points, newest first; machine (host name or id),
 * name and state NULL: any. *ret (free each data, then the array:
 * lab_regressions_free). */
int lab_regressions(struct lab *l, const char *machine, const char *name, const char *state, size_t limit,
		    struct lab_regress **ret, size_t *ret_n, struct strbuf *err);
void lab_regressions_free(struct lab_regress *v, size_t n);
