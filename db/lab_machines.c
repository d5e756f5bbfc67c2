/* The lab's machines: registration, the heartbeat that renews a machine's
 * leases, the list, and why a queued job waits (lab_selector_match on
 * each machine: the same terms the claim compares in SQL). */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lab_register(struct lab *l, const struct lab_machine *m, struct strbuf *err)
{
	char cpus[16], memory[24], cgroup[8], tags[LAB_TAGS_MAX * 66 + 3];
	snprintf(cpus, sizeof(cpus), "%d", m->cpus);
	snprintf(memory, sizeof(memory), "%llu", (unsigned long long)m->memory);
	snprintf(cgroup, sizeof(cgroup), "%d", m->cgroup_version);
	lab_tags_sql(m, tags, sizeof(tags));
	const char *p[] = {
		m->id, m->hostname, cpus, memory, m->arch, m->kernel, m->can_kexec ? "true" : "false", cgroup, tags, lab_machine_state_name(LAB_MACHINE_IDLE), KAB_VERSION
	};
	return lab_run(l, "registering the machine",
		       "INSERT INTO machines (id, hostname, cpus, memory, arch, kernel, can_kexec, cgroup_version, tags,"
		       "  state, kab_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10, $11)"
		       " ON CONFLICT (id) DO UPDATE SET hostname = $2, cpus = $3, memory = $4, arch = $5, kernel = $6,"
		       "  can_kexec = $7, cgroup_version = $8, tags = $9::text[], state = $10, kab_version = $11,"
		       "  last_heartbeat = now()",
		       (int)ARRAY_SIZE(p), p, err);
}

int lab_heartbeat(struct lab *l, const char *machine, enum lab_machine_state state, double lease_s, int *ret_renewed,
		  struct strbuf *err)
{
	char lease[32];
	snprintf(lease, sizeof(lease), "%.3f", lease_s);
	const char *p[] = { machine, lab_machine_state_name(state), lease, lab_job_state_name(LAB_JOB_RUNNING) };
	int64_t counts[2];
	int r = lab_exec_row(l, "the machine's heartbeat",
			     "WITH m AS (UPDATE machines SET last_heartbeat = now(), state = $2 WHERE id = $1 RETURNING id),"
			     " j AS (UPDATE lab_jobs SET lease_until = now() + make_interval(secs => $3::float8)"
			     "  WHERE machine = $1 AND state = $4 RETURNING id)"
			     " SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM j)",
			     (int)ARRAY_SIZE(p), p, counts, 2, err);
	if (r < 0)
		return r;
	if (counts[0] != 1) {
		sb_printf(err, "lab: machine %s is not registered", machine);
		return -ENOENT;
	}
	if (ret_renewed)
		*ret_renewed = (int)counts[1];
	return 0;
}

static int machine_from_row(const PGresult *r, int i, struct lab_machine *m, struct strbuf *err)
{
	*m = (struct lab_machine){ .cpus = (int)lab_col_i64(r, i, 2),
				   .memory = (uint64_t)lab_col_i64(r, i, 3),
				   .can_kexec = strcmp(lab_col(r, i, 6), "t") == 0,
				   .cgroup_version = (int)lab_col_i64(r, i, 7) };
	snprintf(m->id, sizeof(m->id), "%s", lab_col(r, i, 0));
	snprintf(m->hostname, sizeof(m->hostname), "%s", lab_col(r, i, 1));
	snprintf(m->arch, sizeof(m->arch), "%s", lab_col(r, i, 4));
	snprintf(m->kernel, sizeof(m->kernel), "%s", lab_col(r, i, 5));
	util_parse_double(lab_col(r, i, 10), &m->heartbeat_age_s);
	m->job = lab_col_i64(r, i, 11);
	if (lab_machine_state_parse(lab_col(r, i, 9), &m->state) < 0)
		m->state = LAB_MACHINE_OFFLINE; /* a newer kab's word: not one to count on */
	return lab_tags_parse(lab_col(r, i, 8), m, err);
}

int lab_machines(struct lab *l, struct lab_machine **ret, size_t *ret_n, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "listing the machines",
			 "SELECT id, hostname, cpus, memory, arch, kernel, can_kexec, cgroup_version, array_to_string(tags, ' '),"
			 "  state, extract(epoch FROM now() - last_heartbeat)::float8,"
			 "  coalesce((SELECT max(j.id) FROM lab_jobs j WHERE j.machine = machines.id AND j.state = $1), 0)"
			 " FROM machines ORDER BY hostname, id",
			 1, (const char *[]){ lab_job_state_name(LAB_JOB_RUNNING) }, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct lab_machine *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (machine_from_row(r, (int)i, &v[i], err) < 0) {
			free(v);
			return -EPROTO;
		}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* each machine and the term it fails, or that it could run the job */
static void explain(const struct lab_selector *sel, const struct lab_machine *v, size_t n, struct strbuf *out)
{
	size_t matching = 0;
	for (size_t i = 0; i < n; i++)
		matching += lab_selector_match(sel, &v[i], NULL);
	if (!matching)
		sb_printf(out, "no machine of the %zu registered matches it:\n", n);
	else
		sb_printf(out,
			  "%zu of the %zu registered machines match it; the job is next for the first of them "
			  "that claims work (they may be busy, or not heartbeating):\n",
			  matching, n);
	for (size_t i = 0; i < n; i++) {
		sb_printf(out, "  %s: ", v[i].hostname);
		if (lab_selector_match(sel, &v[i], out))
			sb_printf(out, "matches (%s, last heartbeat %.0f s ago)", lab_machine_state_name(v[i].state),
				  v[i].heartbeat_age_s);
		sb_puts(out, "\n");
	}
}

int lab_job_why(struct lab *l, int64_t id, struct strbuf *out, struct strbuf *err)
{
	struct lab_job j;
	int r = lab_job_get(l, id, &j, err);
	if (r < 0)
		return r;
	if (j.state != LAB_JOB_QUEUED) {
		sb_printf(out, "job %lld is %s, not waiting%s%s\n", (long long)id, lab_job_state_name(j.state),
			  *j.reason ? ": " : "", j.reason);
		return 0;
	}
	struct lab_selector sel;
	if ((r = lab_selector_parse(j.selector, &sel, err)) < 0)
		return r;
	_cleanup_free_ struct lab_machine *v = NULL;
	size_t n = 0;
	if ((r = lab_machines(l, &v, &n, err)) < 0)
		return r;
	sb_printf(out, "job %lld is queued for %s: ", (long long)id, *j.selector ? j.selector : "any machine");
	if (!n)
		sb_puts(out, "no machine is registered in the lab\n");
	else
		explain(&sel, v, n, out);
	return 0;
}
