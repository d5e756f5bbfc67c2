/* What machines upload to the lab: builds, boots, runs by UUID and a job's
 * state by its lab job and attempt. Each is one upsert that writes only
 * under an attempt the lab records as the uploader's (the INSERT takes its
 * machine, job and attempt from lab_attempts, as lab_night_put does) and
 * updates only the uploader's row (ON CONFLICT ... DO UPDATE ... WHERE the
 * row's machine is the uploader's): a repeat leaves one row, and neither
 * another machine's attempt nor its row is written. The check and the
 * write are one statement, so no claim or upload comes between them. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* the parameters: id, machine, job, attempt, status, data, kab version,
 * schema version ($1 to $8) */
#define UPSERT_BY_ID(table) \
	"INSERT INTO " table " (id, machine, job, attempt, status, data, kab_version, schema_version)" \
	" SELECT $1::uuid, a.machine, a.job, a.attempt, $5, $6::jsonb, $7, $8::int FROM lab_attempts a" \
	"  WHERE a.job = $3::bigint AND a.attempt = $4::int AND a.machine = $2::uuid" \
	" ON CONFLICT (id) DO UPDATE SET job = EXCLUDED.job, attempt = EXCLUDED.attempt, status = EXCLUDED.status," \
	"  data = EXCLUDED.data, kab_version = EXCLUDED.kab_version, schema_version = EXCLUDED.schema_version," \
	"  uploaded = now() WHERE " table ".machine = EXCLUDED.machine RETURNING 1"
#define OWNER_BY_ID(table) "SELECT machine FROM " table " WHERE id = $1"

/* Each kind's statements take the parameters of lab_upload's list from
 * first on (the upsert) and the key (owner): the id, or a job state's job
 * and attempt. */
static const struct upload_kind {
	const char *what; /* for messages */
	const char *upsert, *owner;
	int first, key, n_key;
} kinds[LAB_UPLOAD_N] = {
	[LAB_UPLOAD_RUN] = { "run", UPSERT_BY_ID("lab_runs"), OWNER_BY_ID("lab_runs"), 0, 0, 1 },
	[LAB_UPLOAD_BOOT] = { "boot", UPSERT_BY_ID("lab_boots"), OWNER_BY_ID("lab_boots"), 0, 0, 1 },
	[LAB_UPLOAD_BUILD] = { "build", UPSERT_BY_ID("lab_builds"), OWNER_BY_ID("lab_builds"), 0, 0, 1 },
	[LAB_UPLOAD_JOB_STATE] = { "job state",
				   "INSERT INTO lab_job_states (machine, job, attempt, status, data, kab_version,"
				   "  schema_version) SELECT a.machine, a.job, a.attempt, $4, $5::jsonb, $6, $7::int"
				   "  FROM lab_attempts a WHERE a.job = $2::bigint AND a.attempt = $3::int"
				   "  AND a.machine = $1::uuid"
				   " ON CONFLICT (job, attempt) DO UPDATE SET status = EXCLUDED.status,"
				   "  data = EXCLUDED.data, kab_version = EXCLUDED.kab_version,"
				   "  schema_version = EXCLUDED.schema_version, uploaded = now()"
				   "  WHERE lab_job_states.machine = EXCLUDED.machine RETURNING 1",
				   "SELECT machine FROM lab_job_states WHERE job = $1 AND attempt = $2", 1, 2, 2 },
};

/* what the upload is, for messages: "the run ID", "the job state" */
static void upload_what(const struct upload_kind *k, const char *const *p, struct strbuf *err)
{
	if (k->n_key == 2)
		sb_printf(err, "the %s", k->what);
	else
		sb_printf(err, "the %s %s", k->what, p[0]);
}

/* The upsert wrote nothing: the attempt is another machine's (or the lab
 * has none of that number), or another machine's row holds the key. */
static int refused(struct lab *l, const struct upload_kind *k, const char *const *p, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *a = lab_exec(l, "reading an attempt's machine",
					       "SELECT a.machine, m.hostname FROM lab_attempts a JOIN machines m ON m.id = a.machine"
					       " WHERE a.job = $1 AND a.attempt = $2",
					       2, p + 2, err);
	if (!a)
		return lab_errno(l);
	if (PQntuples(a) == 0) {
		sb_printf(err, "lab: job %s has no attempt %s in the lab: ", p[2], p[3]);
		upload_what(k, p, err);
		sb_puts(err, " is not written");
		return -ENOENT;
	}
	if (strcasecmp(lab_col(a, 0, 0), p[1]) != 0) {
		sb_printf(err, "lab: attempt %s of job %s ran on machine %s (%s), not on this one (%s): ", p[3], p[2],
			  lab_col(a, 0, 0), lab_col(a, 0, 1), p[1]);
		upload_what(k, p, err);
		sb_puts(err, " is not written");
		return -EPERM;
	}
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading an upload's owner", k->owner, k->n_key, p + k->key, err);
	if (!r)
		return lab_errno(l);
	sb_puts(err, "lab: ");
	upload_what(k, p, err);
	if (k->n_key == 2)
		sb_printf(err, " of job %s attempt %s", p[2], p[3]);
	sb_printf(err, " belongs to machine %s, not to this one (%s): not overwritten",
		  PQntuples(r) ? lab_col(r, 0, 0) : "(none)", p[1]);
	return -EPERM;
}

int lab_upload(struct lab *l, const struct lab_upload *u, struct strbuf *err)
{
	if ((unsigned)u->kind >= LAB_UPLOAD_N || !u->status)
		return -EINVAL;
	if (u->job <= 0 || u->attempt <= 0) {
		sb_printf(err, "lab: an upload belongs to a lab job and attempt of this machine's (job %lld attempt %d)",
			  (long long)u->job, u->attempt);
		return -EINVAL;
	}
	const struct upload_kind *k = &kinds[u->kind];
	char job[24], attempt[16], schema[16];
	snprintf(job, sizeof(job), "%lld", (long long)u->job);
	snprintf(attempt, sizeof(attempt), "%d", u->attempt);
	snprintf(schema, sizeof(schema), "%d", lab_schema_latest());
	const char *p[] = { u->id, u->machine, job, attempt, u->status, u->data ? u->data : "{}", KAB_VERSION, schema };
	char what[64];
	snprintf(what, sizeof(what), "uploading a %s", k->what);
	_cleanup_pgres_ PGresult *r = lab_exec(l, what, k->upsert, (int)ARRAY_SIZE(p) - k->first, p + k->first, err);
	if (!r)
		return lab_errno(l);
	return PQntuples(r) == 1 ? 0 : refused(l, k, p, err);
}
