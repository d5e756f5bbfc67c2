/* The lab's schema: numbered migrations, a version row, and the one
 * transaction that brings a database to this kab's version. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Migration N takes the version from N-1 to N, one statement a line (each
 * goes through PQexecParams, which takes one). Never edit a landed one. */
static const char *const migration_1[] = {
	/* the machines, what each says of itself at registration, its heartbeat */
	"CREATE TABLE machines ("
	"  id uuid PRIMARY KEY, hostname text NOT NULL, cpus integer NOT NULL, memory bigint NOT NULL,"
	"  arch text NOT NULL, kernel text NOT NULL, can_kexec boolean NOT NULL, cgroup_version integer NOT NULL,"
	"  tags text[] NOT NULL DEFAULT '{}', state text NOT NULL,"
	"  registered timestamptz NOT NULL DEFAULT now(), last_heartbeat timestamptz NOT NULL DEFAULT now(),"
	"  db_role text NOT NULL DEFAULT session_user, kab_version text NOT NULL)",
	/* the queue of whole jobs: the selector normalized (selector) and as
	 * the columns the claim compares (sel_*); who holds a job, until when */
	"CREATE TABLE lab_jobs ("
	"  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, text text NOT NULL, selector text NOT NULL,"
	"  sel_host text, sel_arch text, sel_cpus_min bigint NOT NULL, sel_cpus_max bigint NOT NULL,"
	"  sel_memory_min bigint NOT NULL, sel_memory_max bigint NOT NULL, sel_cgroup integer,"
	"  sel_kexec boolean NOT NULL, sel_tags text[] NOT NULL DEFAULT '{}',"
	"  state text NOT NULL, reason text, attempts integer NOT NULL DEFAULT 0,"
	"  max_attempts integer NOT NULL CHECK (max_attempts >= 1),"
	"  machine uuid REFERENCES machines(id), lease_until timestamptz, submitted_by text NOT NULL,"
	"  created timestamptz NOT NULL DEFAULT now(), finished timestamptz, kab_version text NOT NULL)",
	"CREATE INDEX lab_jobs_queued ON lab_jobs (id) WHERE state = 'queued'",
	"CREATE INDEX lab_jobs_leased ON lab_jobs (lease_until) WHERE state = 'running'",
	/* every claim of a job: the machine, when, how it ended */
	"CREATE TABLE lab_attempts ("
	"  job bigint NOT NULL REFERENCES lab_jobs(id), attempt integer NOT NULL,"
	"  machine uuid NOT NULL REFERENCES machines(id), started timestamptz NOT NULL DEFAULT now(),"
	"  ended timestamptz, outcome text NOT NULL, reason text, PRIMARY KEY (job, attempt))",
	/* idle machines LISTEN: a job queued, or queued again, wakes them */
	"CREATE FUNCTION lab_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS"
	"  $$BEGIN PERFORM pg_notify('kab_lab_jobs', NEW.id::text); RETURN NULL; END$$",
	"CREATE TRIGGER lab_jobs_queued AFTER INSERT OR UPDATE OF state ON lab_jobs"
	"  FOR EACH ROW WHEN (NEW.state = 'queued') EXECUTE FUNCTION lab_jobs_notify()",
	NULL,
};

#define UPLOAD_COLUMNS \
	"  machine uuid NOT NULL REFERENCES machines(id), job bigint REFERENCES lab_jobs(id), attempt integer," \
	"  status text NOT NULL, data jsonb NOT NULL, kab_version text NOT NULL, schema_version integer NOT NULL," \
	"  uploaded timestamptz NOT NULL DEFAULT now()"

static const char *const migration_2[] = {
	/* what machines upload from their own SQLite, keyed by UUIDs; the
	 * columns the lab filters on, the rest of the record in data */
	"CREATE TABLE lab_builds (id uuid PRIMARY KEY," UPLOAD_COLUMNS ")",
	"CREATE TABLE lab_boots (id uuid PRIMARY KEY," UPLOAD_COLUMNS ")",
	"CREATE TABLE lab_runs (id uuid PRIMARY KEY," UPLOAD_COLUMNS ")",
	"CREATE INDEX lab_runs_job ON lab_runs (job, attempt)",
	"CREATE TABLE lab_job_states ("
	"  job bigint NOT NULL REFERENCES lab_jobs(id), attempt integer NOT NULL,"
	"  machine uuid NOT NULL REFERENCES machines(id), status text NOT NULL, data jsonb NOT NULL,"
	"  kab_version text NOT NULL, schema_version integer NOT NULL, uploaded timestamptz NOT NULL DEFAULT now(),"
	"  PRIMARY KEY (job, attempt))",
	NULL,
};

static const char *const migration_3[] = {
	/* the nights of nightly jobs, as the machine that ran each lab job's
	 * attempt computed them (kab history: db/store_history.h), written
	 * whole by lab_night_put: the night, the commits its tracked variants
	 * ran, a row per workload, metric and compared variant */
	"CREATE TABLE lab_nights ("
	"  job bigint NOT NULL, attempt integer NOT NULL, machine uuid NOT NULL REFERENCES machines(id),"
	"  name text NOT NULL, night timestamptz NOT NULL, status text NOT NULL, reason text,"
	"  runs integer NOT NULL, runs_failed integer NOT NULL, kab_version text NOT NULL,"
	"  schema_version integer NOT NULL, uploaded timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job, attempt),"
	"  FOREIGN KEY (job, attempt) REFERENCES lab_attempts (job, attempt))",
	"CREATE INDEX lab_nights_name ON lab_nights (name, machine, night)",
	"CREATE TABLE lab_night_commits ("
	"  job bigint NOT NULL, attempt integer NOT NULL, variant integer NOT NULL, track text NOT NULL,"
	"  sha text NOT NULL, subject text NOT NULL, committed timestamptz, event text,"
	"  PRIMARY KEY (job, attempt, variant), FOREIGN KEY (job, attempt) REFERENCES lab_nights (job, attempt))",
	"CREATE TABLE lab_night_rows ("
	"  job bigint NOT NULL, attempt integer NOT NULL, workload text NOT NULL, metric text NOT NULL,"
	"  variant integer NOT NULL, variant_name text NOT NULL, base_name text NOT NULL, rank integer NOT NULL,"
	"  is_primary boolean NOT NULL, pairs integer NOT NULL, estimate_pct double precision,"
	"  ci_lo_pct double precision, ci_hi_pct double precision, p double precision, verdict text,"
	"  median_base double precision, median_variant double precision, unit text, direction text,"
	"  PRIMARY KEY (job, attempt, workload, metric, variant),"
	"  FOREIGN KEY (job, attempt) REFERENCES lab_nights (job, attempt))",
	"CREATE INDEX lab_night_rows_metric ON lab_night_rows (metric, workload, variant)",
	/* What Apache Otava reads (doc/lab.md): a row per measured night and
	 * workload, metric and compared variant, long rather than a column per
	 * metric (their names are the jobs'; an Otava test's query picks one,
	 * or pivots a few). Only nights that ended done, of an attempt that was
	 * not lost, with an estimate and both medians: Otava takes every row's
	 * metric columns as numbers and has no word for a gap. The time is the
	 * commit the row's variant ran (else the first tracked one's, as kab
	 * history shows it), the night's start when no variant tracks a branch.
	 * No order: a view has none; the query says ORDER BY time. */
	"CREATE VIEW otava_nights AS"
	"  SELECT coalesce(c.committed, n.night) AS time, n.night, m.hostname AS machine, n.machine AS machine_id,"
	"    n.name AS job_name, n.job, n.attempt, r.workload, r.metric, r.variant_name AS variant,"
	"    r.base_name AS baseline, r.unit, r.direction, r.is_primary, r.pairs,"
	"    r.estimate_pct, 1 + r.estimate_pct / 100 AS ratio, r.median_base, r.median_variant,"
	"    r.ci_lo_pct, r.ci_hi_pct, r.p, r.verdict, c.sha AS commit, c.subject, c.committed AS commit_time,"
	"    c.track, nullif(substr(c.track, strpos(c.track, ' ') + 1), '') AS branch, n.kab_version"
	"  FROM lab_nights n"
	"  JOIN lab_attempts a ON a.job = n.job AND a.attempt = n.attempt"
	"  JOIN machines m ON m.id = n.machine"
	"  JOIN lab_night_rows r ON r.job = n.job AND r.attempt = n.attempt"
	"  LEFT JOIN LATERAL (SELECT * FROM lab_night_commits k WHERE k.job = n.job AND k.attempt = n.attempt"
	"    ORDER BY k.variant <> r.variant, k.variant LIMIT 1) c ON true"
	"  WHERE n.status = 'done' AND a.outcome <> 'lost' AND r.estimate_pct IS NOT NULL"
	"    AND r.median_base IS NOT NULL AND r.median_variant IS NOT NULL",
	NULL,
};

static const char *const migration_4[] = {
	/* the change points each machine's nightly histories found, as its
	 * own SQLite holds them (their confirmation, its verdict, the
	 * acknowledgement, a bisection): keyed by the machine and its local
	 * id, so a machine writes only its own rows; good_job and bad_job are
	 * the lab's jobs of the two nights when they were lab jobs */
	"CREATE TABLE lab_regressions ("
	"  machine uuid NOT NULL REFERENCES machines(id), local_id bigint NOT NULL, name text NOT NULL,"
	"  workload text NOT NULL, metric text NOT NULL, variant integer NOT NULL, state text NOT NULL,"
	"  created timestamptz NOT NULL, good_job bigint, bad_job bigint, data jsonb NOT NULL,"
	"  kab_version text NOT NULL, schema_version integer NOT NULL, uploaded timestamptz NOT NULL DEFAULT now(),"
	"  PRIMARY KEY (machine, local_id))",
	"CREATE INDEX lab_regressions_created ON lab_regressions (created DESC)",
	"CREATE INDEX lab_nights_machine ON lab_nights (machine, name, night)",
	NULL,
};

static const char *const *const migrations[] = { migration_1, migration_2, migration_3, migration_4 };

/* the advisory lock machines take to migrate one at a time ("kab" "lab") */
#define SCHEMA_LOCK "4839585237018230146"

int lab_schema_latest(void)
{
	return (int)ARRAY_SIZE(migrations);
}

/* lab_schema may not exist yet: to_regclass says so without an error */
int lab_schema_version(struct lab *l, int *ret, struct strbuf *err)
{
	int64_t v = 0;
	int r = lab_exec_row(l, "reading the schema version",
			     "SELECT CASE WHEN to_regclass('lab_schema') IS NULL THEN 0 ELSE"
			     "  (SELECT coalesce(max(version), 0) FROM lab_schema) END",
			     0, NULL, &v, 1, err);
	if (r == 0)
		*ret = (int)v;
	return r;
}

static int migrate(struct lab *l, int from, int upto, struct strbuf *err)
{
	char what[64];
	for (int v = from + 1; v <= upto; v++) {
		snprintf(what, sizeof(what), "migration %d", v);
		for (const char *const *s = migrations[v - 1]; *s; s++) {
			int r = lab_run(l, what, *s, 0, NULL, err);
			if (r < 0)
				return r;
		}
	}
	char version[16];
	snprintf(version, sizeof(version), "%d", upto);
	const char *p[] = { version, KAB_VERSION };
	return lab_run(l, "recording the schema version",
		       "INSERT INTO lab_schema (one, version, kab_version) VALUES (true, $1, $2)"
		       "  ON CONFLICT (one) DO UPDATE SET version = $1, kab_version = $2, updated = now()",
		       2, p, err);
}

/* inside the transaction, under the lock */
static int upgrade_locked(struct lab *l, int upto, struct strbuf *err)
{
	const char *lock[] = { SCHEMA_LOCK };
	int r = lab_run(l, "locking the schema", "SELECT pg_advisory_xact_lock($1::bigint)", 1, lock, err);
	if (r < 0)
		return r;
	r = lab_run(l, "creating the schema's version row",
		    "CREATE TABLE IF NOT EXISTS lab_schema (one boolean PRIMARY KEY CHECK (one),"
		    "  version integer NOT NULL, kab_version text NOT NULL, updated timestamptz NOT NULL DEFAULT now())",
		    0, NULL, err);
	int have = 0;
	if (r < 0 || (r = lab_schema_version(l, &have, err)) < 0)
		return r;
	if (have > upto) {
		sb_printf(err,
			  "the lab's database has schema version %d, newer than this kab's %d (kab %s): upgrade kab "
			  "on this machine to one that knows version %d",
			  have, upto, KAB_VERSION, have);
		return -EPROTO;
	}
	return have == upto ? 0 : migrate(l, have, upto, err);
}

int lab_schema_upgrade(struct lab *l, int upto, struct strbuf *err)
{
	if (upto < 1 || upto > lab_schema_latest())
		return -EINVAL;
	int r = lab_begin(l, err);
	if (r < 0)
		return r;
	return lab_end(l, upgrade_locked(l, upto, err), err);
}
