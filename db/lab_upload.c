/* What machines upload to the lab: builds, boots, runs by UUID and a job's
 * state by its lab job and attempt, each an upsert that only the machine
 * that wrote the row may update (ON CONFLICT ... DO UPDATE ... WHERE the
 * row's machine is the uploader's): a repeat leaves one row, another
 * machine's row stays as it was. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define UPSERT_BY_ID(table) \
	"INSERT INTO " table " (id, machine, job, attempt, status, data, kab_version, schema_version)" \
	" VALUES ($1, $2, NULLIF($3::bigint, 0), NULLIF($4::int, 0), $5, $6::jsonb, $7, $8)" \
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
				   "  schema_version) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)"
				   " ON CONFLICT (job, attempt) DO UPDATE SET status = EXCLUDED.status,"
				   "  data = EXCLUDED.data, kab_version = EXCLUDED.kab_version,"
				   "  schema_version = EXCLUDED.schema_version, uploaded = now()"
				   "  WHERE lab_job_states.machine = EXCLUDED.machine RETURNING 1",
				   "SELECT machine FROM lab_job_states WHERE job = $1 AND attempt = $2", 1, 2, 2 },
};

/* the upsert changed nothing: another machine's row holds the key */
static int refused(struct lab *l, const struct upload_kind *k, const char *const *p, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading an upload's owner", k->owner, k->n_key, p + k->key, err);
	if (!r)
		return lab_errno(l);
	if (k->n_key == 2)
		sb_printf(err, "lab: the %s of job %s attempt %s", k->what, p[2], p[3]);
	else
		sb_printf(err, "lab: the %s %s", k->what, p[0]);
	sb_printf(err, " belongs to machine %s, not to this one (%s): not overwritten",
		  PQntuples(r) ? lab_col(r, 0, 0) : "(none)", p[1]);
	return -EPERM;
}

int lab_upload(struct lab *l, const struct lab_upload *u, struct strbuf *err)
{
	if ((unsigned)u->kind >= LAB_UPLOAD_N || !u->status || (u->kind == LAB_UPLOAD_JOB_STATE && u->job <= 0))
		return -EINVAL;
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
