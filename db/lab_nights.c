/* The nights of nightly jobs in the lab: what the machine that ran a lab
 * job's attempt computed for its history (db/store_history.h), written
 * whole in one transaction and read by Apache Otava through the view
 * otava_nights (lab_schema.c, doc/lab.md). The commits and rows go up as
 * one JSON array each, a parameter that jsonb_to_recordset spreads into
 * rows: one statement for a night of any size, nothing spliced into SQL. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/direction.h"
#include "harness/base/json.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A field that cannot be stored as it is: said with the night and row. */
static int bad(struct strbuf *err, const struct lab_night *n, const char *what)
{
	sb_printf(err, "lab: the night of job %lld attempt %d (%s): %s", (long long)n->job, n->attempt,
		  n->name ? n->name : "no name", what);
	return -EINVAL;
}

static int check(const struct lab_night *n, struct strbuf *err)
{
	char what[512];
	if (n->job <= 0 || n->attempt < 1)
		return bad(err, n, "a lab job and attempt (>= 1) are needed");
	if (!n->name || !*n->name)
		return bad(err, n, "the job's name is empty");
	if (!n->night || !(n->night->night > 0))
		return bad(err, n, "the night's start time is missing");
	if (!job_status_finished(n->night->status))
		return bad(err, n, "its status is not one a job ends with (done, failed, cancelled)");
	if (n->n_rows && !n->rows)
		return bad(err, n, "rows are counted but not given");
	if (n->night->n_commits > STORE_HISTORY_COMMITS)
		return bad(err, n, "more tracked commits than a night has");
	for (size_t i = 0; i < n->night->n_commits; i++) {
		const struct store_history_commit *c = &n->night->commits[i];
		if (c->variant < 0 || !*c->sha) {
			snprintf(what, sizeof(what), "tracked commit %zu (variant %d) has no sha or a negative variant",
				 i, c->variant);
			return bad(err, n, what);
		}
	}
	for (size_t i = 0; i < n->n_rows; i++) {
		const struct store_history_row *r = &n->rows[i];
		if (!*r->workload || !*r->metric || r->variant < 1) {
			snprintf(what, sizeof(what),
				 "row %zu (workload \"%.128s\", metric \"%.96s\", variant %d) needs a workload, a metric "
				 "and a compared variant (>= 1)",
				 i, r->workload, r->metric, r->variant);
			return bad(err, n, what);
		}
		enum direction d;
		if (*r->direction && direction_parse(r->direction, &d) < 0) {
			snprintf(what, sizeof(what), "row %zu (%.128s %.96s): unknown direction \"%.8s\"", i,
				 r->workload, r->metric, r->direction);
			return bad(err, n, what);
		}
	}
	return 0;
}

/* the tracked commits as the JSON array the insert spreads */
static int commits_json(const struct store_history_night *night, struct strbuf *out)
{
	struct jw w;
	jw_init_sb(&w, out, JW_COMPACT);
	jw_open(&w, NULL, '[', JW_INLINE);
	for (size_t i = 0; i < night->n_commits; i++) {
		const struct store_history_commit *c = &night->commits[i];
		jw_open(&w, NULL, '{', JW_INLINE);
		jw_put(&w, "variant", json_integer(c->variant));
		jw_put(&w, "track", jw_str(c->track));
		jw_put(&w, "sha", jw_str(c->sha));
		jw_put(&w, "subject", jw_str(c->subject));
		jw_put(&w, "committed", jw_num(c->date > 0 ? c->date : NAN));
		jw_put(&w, "event", jw_str_opt(c->event));
		jw_close(&w);
	}
	jw_close(&w);
	return jw_end(&w);
}

static int rows_json(const struct lab_night *n, struct strbuf *out)
{
	struct jw w;
	jw_init_sb(&w, out, JW_COMPACT);
	jw_open(&w, NULL, '[', JW_INLINE);
	for (size_t i = 0; i < n->n_rows; i++) {
		const struct store_history_row *r = &n->rows[i];
		jw_open(&w, NULL, '{', JW_INLINE);
		jw_put(&w, "workload", jw_str(r->workload));
		jw_put(&w, "metric", jw_str(r->metric));
		jw_put(&w, "variant", json_integer(r->variant));
		jw_put(&w, "variant_name", jw_str(r->variant_name));
		jw_put(&w, "base_name", jw_str(r->base_name));
		jw_put(&w, "rank", json_integer(r->rank));
		jw_put(&w, "is_primary", json_boolean(r->primary));
		jw_put(&w, "pairs", json_integer(r->pairs));
		jw_put(&w, "estimate_pct", jw_num(r->estimate_pct));
		jw_put(&w, "ci_lo_pct", jw_num(r->ci_lo_pct));
		jw_put(&w, "ci_hi_pct", jw_num(r->ci_hi_pct));
		jw_put(&w, "p", jw_num(r->p));
		jw_put(&w, "verdict", jw_str_opt(r->verdict));
		jw_put(&w, "median_base", jw_num(r->median_base));
		jw_put(&w, "median_variant", jw_num(r->median_variant));
		jw_put(&w, "unit", jw_str_opt(r->unit));
		jw_put(&w, "direction", jw_str_opt(r->direction));
		jw_close(&w);
	}
	jw_close(&w);
	return jw_end(&w);
}

/* The night's row, only when the attempt is this machine's: the INSERT
 * takes its machine from lab_attempts, so no row is written for an attempt
 * another machine made, and the upsert updates only this machine's. */
#define NIGHT_UPSERT \
	"INSERT INTO lab_nights (job, attempt, machine, name, night, status, reason, runs, runs_failed, kab_version," \
	"  schema_version)" \
	" SELECT a.job, a.attempt, a.machine, $4, to_timestamp($5::double precision), $6, NULLIF($7, ''), $8, $9, $10," \
	"  $11 FROM lab_attempts a WHERE a.job = $1 AND a.attempt = $2 AND a.machine = $3" \
	" ON CONFLICT (job, attempt) DO UPDATE SET name = EXCLUDED.name, night = EXCLUDED.night," \
	"  status = EXCLUDED.status, reason = EXCLUDED.reason, runs = EXCLUDED.runs," \
	"  runs_failed = EXCLUDED.runs_failed, kab_version = EXCLUDED.kab_version," \
	"  schema_version = EXCLUDED.schema_version, uploaded = now()" \
	" WHERE lab_nights.machine = EXCLUDED.machine RETURNING 1"

#define COMMITS_INSERT \
	"INSERT INTO lab_night_commits (job, attempt, variant, track, sha, subject, committed, event)" \
	" SELECT $1, $2, x.variant, x.track, x.sha, x.subject, to_timestamp(x.committed), x.event" \
	" FROM jsonb_to_recordset($3::jsonb) AS x(variant integer, track text, sha text, subject text," \
	"  committed double precision, event text)"

#define ROWS_INSERT \
	"INSERT INTO lab_night_rows (job, attempt, workload, metric, variant, variant_name, base_name, rank," \
	"  is_primary, pairs, estimate_pct, ci_lo_pct, ci_hi_pct, p, verdict, median_base, median_variant, unit," \
	"  direction)" \
	" SELECT $1, $2, x.* FROM jsonb_to_recordset($3::jsonb) AS x(workload text, metric text, variant integer," \
	"  variant_name text, base_name text, rank integer, is_primary boolean, pairs integer," \
	"  estimate_pct double precision, ci_lo_pct double precision, ci_hi_pct double precision," \
	"  p double precision, verdict text, median_base double precision, median_variant double precision," \
	"  unit text, direction text)"

/* the upsert wrote nothing: whose the attempt is, or that there is none */
static int refused(struct lab *l, const struct lab_night *n, const char *const *key, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading an attempt's machine",
					       "SELECT a.machine, m.hostname FROM lab_attempts a JOIN machines m ON m.id = a.machine"
					       " WHERE a.job = $1 AND a.attempt = $2",
					       2, key, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) == 0) {
		sb_printf(err, "lab: job %lld has no attempt %d in the lab: its night (%s) is not written",
			  (long long)n->job, n->attempt, n->name);
		return -ENOENT;
	}
	sb_printf(err,
		  "lab: attempt %d of job %lld ran on machine %s (%s), not on this one (%s): its night is not "
		  "written",
		  n->attempt, (long long)n->job, lab_col(r, 0, 0), lab_col(r, 0, 1), n->machine);
	return -EPERM;
}

/* inside the transaction: the night, then its commits and rows anew */
static int put_locked(struct lab *l, const struct lab_night *n, const char *const *p, const char *commits,
		      const char *rows, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r = lab_exec(l, "writing a night", NIGHT_UPSERT, 11, p, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) != 1)
		return refused(l, n, p, err);
	int e = lab_run(l, "replacing a night's commits",
			"DELETE FROM lab_night_commits WHERE job = $1 AND attempt = $2", 2, p, err);
	if (e < 0 || (e = lab_run(l, "replacing a night's rows",
				  "DELETE FROM lab_night_rows WHERE job = $1 AND attempt = $2", 2, p, err)) < 0)
		return e;
	const char *cp[] = { p[0], p[1], commits }, *rp[] = { p[0], p[1], rows };
	if (n->night->n_commits && (e = lab_run(l, "writing a night's commits", COMMITS_INSERT, 3, cp, err)) < 0)
		return e;
	if (n->n_rows && (e = lab_run(l, "writing a night's rows", ROWS_INSERT, 3, rp, err)) < 0)
		return e;
	return 0;
}

int lab_night_put(struct lab *l, const struct lab_night *n, struct strbuf *err)
{
	int r = check(n, err);
	if (r < 0)
		return r;
	struct strbuf commits = { 0 }, rows = { 0 };
	if (commits_json(n->night, &commits) < 0 || rows_json(n, &rows) < 0) {
		sb_free(&commits);
		sb_free(&rows);
		return -ENOMEM;
	}
	char job[24], attempt[16], night[32], runs[16], failed[16], schema[16];
	snprintf(job, sizeof(job), "%lld", (long long)n->job);
	snprintf(attempt, sizeof(attempt), "%d", n->attempt);
	snprintf(night, sizeof(night), "%.6f", n->night->night);
	snprintf(runs, sizeof(runs), "%u", n->night->runs);
	snprintf(failed, sizeof(failed), "%u", n->night->runs_failed);
	snprintf(schema, sizeof(schema), "%d", lab_schema_latest());
	const char *p[] = {
		job,  attempt, n->machine,  n->name, night, job_status_name(n->night->status), n->night->reason,
		runs, failed,  KAB_VERSION, schema
	};
	r = lab_begin(l, err);
	if (r >= 0)
		r = lab_end(l, put_locked(l, n, p, commits.buf, rows.buf, err), err);
	sb_free(&commits);
	sb_free(&rows);
	return r;
}
