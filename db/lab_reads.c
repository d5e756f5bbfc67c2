/* Lab-wide reads: a job's uploaded report, one machine's nightly history
 * from the nights it uploaded (in the shapes of db/store_history.h, so the
 * history's series and change points are computed as on the machine), and
 * the change points machines upload. A history never mixes machines: every
 * read of nights names one machine's id. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double col_num(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NAN : strtod(PQgetvalue(r, row, col), NULL);
}

static void cpy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int lab_machine_find(struct lab *l, const char *machine, char ret_id[LAB_UUID_LEN + 1], char ret_host[256], struct strbuf *err)
{
	const char *p[] = { machine };
	_cleanup_pgres_ PGresult *r = lab_exec(l, "finding a machine",
					       "SELECT id, hostname FROM machines WHERE hostname = $1 OR id::text = lower($1)"
					       " ORDER BY id",
					       1, p, err);
	if (!r)
		return lab_errno(l);
	int n = PQntuples(r);
	if (n == 0) {
		sb_printf(err, "no machine \"%s\" in the lab (GET /api/v1/lab/machines lists them)", machine);
		return -ENOENT;
	}
	if (n > 1) {
		sb_printf(err, "%d machines have the host name \"%s\" (", n, machine);
		for (int i = 0; i < n; i++)
			sb_printf(err, "%s%s", i ? ", " : "", lab_col(r, i, 0));
		sb_puts(err, "): name one by its id");
		return -EEXIST;
	}
	cpy(ret_id, LAB_UUID_LEN + 1, lab_col(r, 0, 0));
	cpy(ret_host, 256, lab_col(r, 0, 1));
	return 0;
}

int lab_job_report(struct lab *l, int64_t job, int attempt, char **ret, char ret_machine[LAB_UUID_LEN + 1],
		   char ret_host[256], int64_t *ret_local_job, struct strbuf *err)
{
	char id[24], att[16];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	snprintf(att, sizeof(att), "%d", attempt);
	const char *p[] = { id, att };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "reading a job's report",
			 "SELECT s.machine, m.hostname, coalesce(s.data->'report', 'null'::jsonb)::text,"
			 "  coalesce((s.data->>'local_job')::bigint, 0)"
			 " FROM lab_job_states s JOIN machines m ON m.id = s.machine WHERE s.job = $1 AND s.attempt = $2",
			 2, p, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) == 0) {
		sb_printf(err, "attempt %d of lab job %lld has uploaded no state yet (it uploads when it ends)",
			  attempt, (long long)job);
		return -ENOENT;
	}
	char *text = strdup(lab_col(r, 0, 2));
	if (!text)
		return -ENOMEM;
	cpy(ret_machine, LAB_UUID_LEN + 1, lab_col(r, 0, 0));
	cpy(ret_host, 256, lab_col(r, 0, 1));
	*ret_local_job = lab_col_i64(r, 0, 3);
	*ret = text;
	return 0;
}

/* ---- one machine's history ---- */

/* the nights counted: of the machine and name, their attempt not lost */
#define NIGHTS_OF \
	" FROM lab_nights n JOIN lab_attempts a ON a.job = n.job AND a.attempt = n.attempt" \
	" WHERE n.machine = $1::uuid AND n.name = $2 AND a.outcome <> 'lost'"

static int night_commits(struct lab *l, const char *const *key, struct store_history_night *v, size_t n, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "reading the nights' commits",
			 "SELECT c.job, c.variant, c.track, c.sha, c.subject, coalesce(extract(epoch FROM c.committed)::float8, 0),"
			 "  coalesce(c.event, '')"
			 " FROM lab_night_commits c JOIN lab_nights n ON n.job = c.job AND n.attempt = c.attempt"
			 " JOIN lab_attempts a ON a.job = n.job AND a.attempt = n.attempt"
			 " WHERE n.machine = $1::uuid AND n.name = $2 AND a.outcome <> 'lost' ORDER BY c.job, c.variant",
			 2, key, err);
	if (!r)
		return lab_errno(l);
	/* both by job: one walk */
	size_t j = 0;
	for (int i = 0; i < PQntuples(r); i++) {
		int64_t job = lab_col_i64(r, i, 0);
		while (j < n && v[j].job_id < job)
			j++;
		if (j == n)
			break;
		if (v[j].job_id != job || v[j].n_commits >= STORE_HISTORY_COMMITS)
			continue;
		struct store_history_commit *c = &v[j].commits[v[j].n_commits++];
		c->variant = (int)lab_col_i64(r, i, 1);
		cpy(c->track, sizeof(c->track), lab_col(r, i, 2));
		cpy(c->sha, sizeof(c->sha), lab_col(r, i, 3));
		cpy(c->subject, sizeof(c->subject), lab_col(r, i, 4));
		c->date = col_num(r, i, 5);
		cpy(c->event, sizeof(c->event), lab_col(r, i, 6));
	}
	return 0;
}

static int by_job(const void *a, const void *b)
{
	const struct store_history_night *x = a, *y = b;
	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

static int by_night(const void *a, const void *b)
{
	const struct store_history_night *x = a, *y = b;
	if (x->night != y->night)
		return x->night < y->night ? -1 : 1;
	return by_job(a, b);
}

int lab_history_nights(struct lab *l, const char *machine, const char *name, struct store_history_night **ret,
		       size_t *ret_n, struct strbuf *err)
{
	const char *p[] = { machine, name };
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading a machine's nights",
					       "SELECT n.job, extract(epoch FROM n.night)::float8, n.status,"
					       "  coalesce(n.reason, ''), n.runs, n.runs_failed" NIGHTS_OF " ORDER BY n.job",
					       2, p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct store_history_night *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct store_history_night *x = &v[i];
		x->job_id = lab_col_i64(r, (int)i, 0);
		x->night = col_num(r, (int)i, 1);
		if (job_status_parse(lab_col(r, (int)i, 2), &x->status) < 0)
			x->status = JOB_FAILED; /* a newer kab's word: a gap, never a measure */
		cpy(x->reason, sizeof(x->reason), lab_col(r, (int)i, 3));
		x->runs = (unsigned)lab_col_i64(r, (int)i, 4);
		x->runs_failed = (unsigned)lab_col_i64(r, (int)i, 5);
	}
	int e = night_commits(l, p, v, n, err);
	if (e < 0) {
		free(v);
		return e;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_night);
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_history_rows(struct lab *l, const char *machine, const char *name, const struct store_history_filter *f,
		     struct store_history_row **ret, size_t *ret_n, struct strbuf *err)
{
	char variant[16];
	snprintf(variant, sizeof(variant), "%d", f->variant);
	const char *p[] = { machine,
			    name,
			    f->metric,
			    f->workload,
			    variant,
			    f->primary_only ? "true" : "false",
			    f->first_rank ? "true" : "false" };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "reading a machine's history rows",
			 "SELECT r.job, extract(epoch FROM n.night)::float8, r.workload, r.metric, r.variant, r.variant_name,"
			 "  r.base_name, r.rank, r.is_primary, r.pairs, r.estimate_pct, r.ci_lo_pct, r.ci_hi_pct, r.p,"
			 "  coalesce(r.verdict, ''), r.median_base, r.median_variant, coalesce(r.unit, ''), coalesce(r.direction, '')"
			 " FROM lab_night_rows r JOIN lab_nights n ON n.job = r.job AND n.attempt = r.attempt"
			 " JOIN lab_attempts a ON a.job = n.job AND a.attempt = n.attempt"
			 " WHERE n.machine = $1::uuid AND n.name = $2 AND a.outcome <> 'lost'"
			 "  AND ($3::text IS NULL OR r.metric = $3) AND ($4::text IS NULL OR r.workload = $4)"
			 "  AND ($5::int < 0 OR r.variant = $5) AND (NOT $6::boolean OR r.is_primary)"
			 "  AND (NOT $7::boolean OR r.rank = 0)"
			 " ORDER BY n.night, r.job, r.workload COLLATE \"C\", r.metric COLLATE \"C\", r.variant",
			 (int)ARRAY_SIZE(p), p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct store_history_row *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct store_history_row *x = &v[i];
		int k = (int)i;
		x->job_id = lab_col_i64(r, k, 0);
		x->night = col_num(r, k, 1);
		cpy(x->workload, sizeof(x->workload), lab_col(r, k, 2));
		cpy(x->metric, sizeof(x->metric), lab_col(r, k, 3));
		x->variant = (int)lab_col_i64(r, k, 4);
		cpy(x->variant_name, sizeof(x->variant_name), lab_col(r, k, 5));
		cpy(x->base_name, sizeof(x->base_name), lab_col(r, k, 6));
		x->rank = (int)lab_col_i64(r, k, 7);
		x->primary = strcmp(lab_col(r, k, 8), "t") == 0;
		x->pairs = (unsigned)lab_col_i64(r, k, 9);
		x->estimate_pct = col_num(r, k, 10);
		x->ci_lo_pct = col_num(r, k, 11);
		x->ci_hi_pct = col_num(r, k, 12);
		x->p = col_num(r, k, 13);
		cpy(x->verdict, sizeof(x->verdict), lab_col(r, k, 14));
		x->median_base = col_num(r, k, 15);
		x->median_variant = col_num(r, k, 16);
		cpy(x->unit, sizeof(x->unit), lab_col(r, k, 17));
		cpy(x->direction, sizeof(x->direction), lab_col(r, k, 18));
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_history_metric_names(struct lab *l, const char *machine, const char *name, char ***ret, size_t *ret_n, struct strbuf *err)
{
	const char *p[] = { machine, name };
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading a machine's history metrics",
					       "SELECT DISTINCT r.metric COLLATE \"C\" FROM lab_night_rows r"
					       " JOIN lab_nights n ON n.job = r.job AND n.attempt = r.attempt"
					       " JOIN lab_attempts a ON a.job = n.job AND a.attempt = n.attempt"
					       " WHERE n.machine = $1::uuid AND n.name = $2 AND a.outcome <> 'lost' ORDER BY 1",
					       2, p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	char **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(lab_col(r, (int)i, 0)))) {
			for (size_t k = 0; k < i; k++)
				free(v[k]);
			free(v);
			return -ENOMEM;
		}
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_history_machines(struct lab *l, const char *name, struct strbuf *out, size_t *ret_n, struct strbuf *err)
{
	const char *p[] = { name };
	_cleanup_pgres_ PGresult *r = lab_exec(l, "listing the machines of a history",
					       "SELECT m.hostname, m.id FROM machines m WHERE EXISTS (SELECT 1 FROM lab_nights n"
					       "  WHERE n.machine = m.id AND n.name = $1) ORDER BY m.hostname, m.id",
					       1, p, err);
	if (!r)
		return lab_errno(l);
	int n = PQntuples(r);
	for (int i = 0; i < n; i++)
		sb_printf(out, "%s%s (%s)", i ? ", " : "", lab_col(r, i, 0), lab_col(r, i, 1));
	*ret_n = (size_t)n;
	return 0;
}

/* ---- change points ---- */

int lab_regress_put(struct lab *l, const struct lab_regress *g, struct strbuf *err)
{
	if (g->local_id <= 0 || !g->name || !g->workload || !g->metric || !g->state || !g->data) {
		sb_printf(err, "lab: change point %lld: a local id, a name, workload, metric, state and data are needed",
			  (long long)g->local_id);
		return -EINVAL;
	}
	char id[24], variant[16], created[32], good[24], bad[24], schema[16];
	snprintf(id, sizeof(id), "%lld", (long long)g->local_id);
	snprintf(variant, sizeof(variant), "%d", g->variant);
	snprintf(created, sizeof(created), "%.6f", g->created);
	snprintf(good, sizeof(good), "%lld", (long long)g->good_job);
	snprintf(bad, sizeof(bad), "%lld", (long long)g->bad_job);
	snprintf(schema, sizeof(schema), "%d", lab_schema_latest());
	const char *p[] = { g->machine, id,   g->name, g->workload, g->metric,   variant, g->state,
			    created,    good, bad,     g->data,     KAB_VERSION, schema };
	/* the machine is in the key: no upload names another machine's row */
	return lab_run(l, "uploading a change point",
		       "INSERT INTO lab_regressions (machine, local_id, name, workload, metric, variant, state, created,"
		       "  good_job, bad_job, data, kab_version, schema_version)"
		       " VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, to_timestamp($8::float8), NULLIF($9::bigint, 0),"
		       "  NULLIF($10::bigint, 0), $11::jsonb, $12, $13)"
		       " ON CONFLICT (machine, local_id) DO UPDATE SET name = EXCLUDED.name, workload = EXCLUDED.workload,"
		       "  metric = EXCLUDED.metric, variant = EXCLUDED.variant, state = EXCLUDED.state,"
		       "  created = EXCLUDED.created, good_job = EXCLUDED.good_job, bad_job = EXCLUDED.bad_job,"
		       "  data = EXCLUDED.data, kab_version = EXCLUDED.kab_version,"
		       "  schema_version = EXCLUDED.schema_version, uploaded = now()"
		       " WHERE lab_regressions.machine = EXCLUDED.machine",
		       (int)ARRAY_SIZE(p), p, err);
}

void lab_regressions_free(struct lab_regress *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free((char *)v[i].name);
		free((char *)v[i].workload);
		free((char *)v[i].metric);
		free((char *)v[i].state);
		free((char *)v[i].data);
	}
	free(v);
}

int lab_regressions(struct lab *l, const char *machine, const char *name, const char *state, size_t limit,
		    struct lab_regress **ret, size_t *ret_n, struct strbuf *err)
{
	char lim[24];
	snprintf(lim, sizeof(lim), "%zu", limit);
	const char *p[] = { lim, machine, name, state };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "listing change points",
			 "SELECT g.machine, m.hostname, g.local_id, g.name, g.workload, g.metric, g.variant, g.state,"
			 "  extract(epoch FROM g.created)::float8, coalesce(g.good_job, 0), coalesce(g.bad_job, 0), g.data::text"
			 " FROM lab_regressions g JOIN machines m ON m.id = g.machine"
			 " WHERE ($2::text IS NULL OR m.hostname = $2 OR m.id::text = lower($2))"
			 "  AND ($3::text IS NULL OR g.name = $3) AND ($4::text IS NULL OR g.state = $4)"
			 " ORDER BY g.created DESC, m.hostname, g.local_id DESC LIMIT $1::bigint",
			 (int)ARRAY_SIZE(p), p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct lab_regress *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lab_regress *x = &v[i];
		int k = (int)i;
		cpy(x->machine, sizeof(x->machine), lab_col(r, k, 0));
		cpy(x->hostname, sizeof(x->hostname), lab_col(r, k, 1));
		x->local_id = lab_col_i64(r, k, 2);
		x->name = strdup(lab_col(r, k, 3));
		x->workload = strdup(lab_col(r, k, 4));
		x->metric = strdup(lab_col(r, k, 5));
		x->variant = (int)lab_col_i64(r, k, 6);
		x->state = strdup(lab_col(r, k, 7));
		x->created = col_num(r, k, 8);
		x->good_job = lab_col_i64(r, k, 9);
		x->bad_job = lab_col_i64(r, k, 10);
		x->data = strdup(lab_col(r, k, 11));
		if (!x->name || !x->workload || !x->metric || !x->state || !x->data) {
			lab_regressions_free(v, i + 1);
			return -ENOMEM;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
