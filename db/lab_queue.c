/* The lab's queue: submit, claim (one short statement, FOR UPDATE SKIP
 * LOCKED), leases renewed and rescued, an attempt's idempotent finish,
 * and LISTEN/NOTIFY to wake idle machines. Locks are always taken job row
 * first, then its attempt row, so claim, finish and rescue never deadlock. */
#include "db/lab.h"
#include "db/lab_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAB_CHANNEL "kab_lab_jobs"

static const char *job_word(enum lab_job_state s)
{
	return lab_job_state_name(s);
}

static const char *attempt_word(enum lab_attempt_outcome o)
{
	return lab_attempt_outcome_name(o);
}

/* "{a,b}": tags are words (lab_tags_parse), so nothing needs quoting */
static void tags_array(char (*tags)[LAB_TAG_MAX + 1], size_t n, char *buf, size_t len)
{
	struct strbuf sb = { 0 };
	sb_puts(&sb, "{");
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, "%s%s", i ? "," : "", tags[i]);
	sb_puts(&sb, "}");
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "{}");
	sb_free(&sb);
}

void lab_tags_sql(const struct lab_machine *m, char *buf, size_t len)
{
	tags_array((char(*)[LAB_TAG_MAX + 1]) m->tags, m->n_tags, buf, len);
}

int lab_submit(struct lab *l, const struct lab_submit *s, int64_t *ret_id, struct strbuf *err)
{
	if (!s->text || strlen(s->text) > LAB_JOB_TEXT_MAX || s->max_attempts < 1 || !s->submitted_by) {
		sb_printf(err, "lab: a job needs its text (at most %d bytes), a submitter and at least 1 attempt", LAB_JOB_TEXT_MAX);
		return -EINVAL;
	}
	const struct lab_selector *sel = s->selector;
	char normal[LAB_SELECTOR_MAX], cmin[24], cmax[24], mmin[24], mmax[24], cg[8], tags[LAB_TAGS_MAX * 66 + 3], attempts[16];
	lab_selector_format(sel, normal, sizeof(normal));
	snprintf(cmin, sizeof(cmin), "%lld", (long long)sel->cpus_min);
	snprintf(cmax, sizeof(cmax), "%lld", (long long)sel->cpus_max);
	snprintf(mmin, sizeof(mmin), "%llu", (unsigned long long)sel->memory_min);
	snprintf(mmax, sizeof(mmax), "%llu", (unsigned long long)sel->memory_max);
	snprintf(cg, sizeof(cg), "%d", sel->cgroup);
	snprintf(attempts, sizeof(attempts), "%d", s->max_attempts);
	tags_array((char(*)[LAB_TAG_MAX + 1]) sel->tags, sel->n_tags, tags, sizeof(tags));
	const char *p[] = { s->text,    normal,
			    sel->host,  sel->arch,
			    cmin,       cmax,
			    mmin,       mmax,
			    cg,         sel->kexec ? "true" : "false",
			    tags,       job_word(LAB_JOB_QUEUED),
			    attempts,   s->submitted_by,
			    KAB_VERSION };
	return lab_exec_row(l, "submitting a job",
			    "INSERT INTO lab_jobs (text, selector, sel_host, sel_arch, sel_cpus_min, sel_cpus_max, sel_memory_min,"
			    "  sel_memory_max, sel_cgroup, sel_kexec, sel_tags, state, max_attempts, submitted_by, kab_version)"
			    " VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), $5, $6, $7, $8, NULLIF($9::int, 0), $10, $11::text[],"
			    "  $12, $13, $14, $15) RETURNING id",
			    (int)ARRAY_SIZE(p), p, ret_id, 1, err);
}

void lab_claim_free(struct lab_claim *c)
{
	free(c->text);
	c->text = NULL;
}

/* The claim walks the queued jobs' index (lab_jobs_queued) in id order and
 * stops at the first it matches and can lock: its cost is the jobs ahead
 * of that one, not the queue's depth. The plan must not hang on
 * PostgreSQL's estimate of how many jobs match: it multiplies a guess per
 * selector term into about one row, and for one row a full scan and a
 * sort of every matching job looks cheaper than the index walk (with
 * 10,000 queued, 27 ms a claim instead of 0.3). So the match is one CASE
 * expression, which the planner does not take apart and estimates as half
 * the rows whatever they hold: half of any queue finds a match at once
 * down the index. The machine's values are read once (m, each an
 * InitPlan), parameters to the walk rather than a join per job; a machine
 * not registered matches nothing (its cpus are NULL). */
#define CLAIM_NEXT \
	"SELECT j.id FROM lab_jobs j WHERE j.state = $4" \
	"  AND CASE WHEN (j.sel_host IS NULL OR j.sel_host = (SELECT hostname FROM m))" \
	"  AND (j.sel_arch IS NULL OR j.sel_arch = (SELECT arch FROM m))" \
	"  AND (SELECT cpus FROM m) BETWEEN j.sel_cpus_min AND j.sel_cpus_max" \
	"  AND (SELECT memory FROM m) BETWEEN j.sel_memory_min AND j.sel_memory_max" \
	"  AND (j.sel_cgroup IS NULL OR j.sel_cgroup = (SELECT cgroup_version FROM m))" \
	"  AND (NOT j.sel_kexec OR (SELECT can_kexec FROM m)) AND j.sel_tags <@ (SELECT tags FROM m)" \
	"  THEN true END" \
	"  ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED"

int lab_claim(struct lab *l, const char *machine, double lease_s, struct lab_claim *ret, struct strbuf *err)
{
	char lease[32];
	snprintf(lease, sizeof(lease), "%.3f", lease_s);
	const char *p[] = { machine, lease, job_word(LAB_JOB_RUNNING), job_word(LAB_JOB_QUEUED), attempt_word(LAB_ATTEMPT_RUNNING) };
	/* the row lock of the inner SELECT lasts this one statement */
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "claiming a job",
			 "WITH m AS MATERIALIZED (SELECT hostname, arch, cpus, memory, cgroup_version, can_kexec, tags"
			 "  FROM machines WHERE id = $1),"
			 " c AS (UPDATE lab_jobs SET state = $3, machine = $1, attempts = attempts + 1, reason = NULL,"
			 "    lease_until = now() + make_interval(secs => $2::float8)"
			 "  WHERE state = $4 AND id = (" CLAIM_NEXT ")"
			 "  RETURNING id, attempts, text),"
			 " a AS (INSERT INTO lab_attempts (job, attempt, machine, outcome) SELECT id, attempts, $1, $5 FROM c)"
			 " SELECT id, attempts, text FROM c",
			 (int)ARRAY_SIZE(p), p, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) == 0)
		return 0;
	char *text = strdup(lab_col(r, 0, 2));
	if (!text)
		return -ENOMEM;
	*ret = (struct lab_claim){ .job = lab_col_i64(r, 0, 0), .attempt = (int)lab_col_i64(r, 0, 1), .text = text };
	return 1;
}

int lab_renew(struct lab *l, const char *machine, int64_t job, int attempt, double lease_s, struct strbuf *err)
{
	char id[24], att[16], lease[32];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	snprintf(att, sizeof(att), "%d", attempt);
	snprintf(lease, sizeof(lease), "%.3f", lease_s);
	const char *p[] = { machine, id, att, lease, job_word(LAB_JOB_RUNNING) };
	int n = lab_run_count(l, "renewing a lease",
			      "UPDATE lab_jobs SET lease_until = now() + make_interval(secs => $4::float8)"
			      " WHERE id = $2 AND machine = $1 AND attempts = $3 AND state = $5",
			      (int)ARRAY_SIZE(p), p, err);
	if (n < 0)
		return n;
	if (n == 0) {
		sb_printf(err,
			  "lab: job %lld attempt %d is no longer this machine's: its lease expired and the job "
			  "went back to the queue",
			  (long long)job, attempt);
		return -ESTALE;
	}
	return 0;
}

static enum lab_job_state job_state_of(enum lab_attempt_outcome o)
{
	return o == LAB_ATTEMPT_DONE ? LAB_JOB_DONE : o == LAB_ATTEMPT_CANCELLED ? LAB_JOB_CANCELLED : LAB_JOB_FAILED;
}

/* The attempt's outcome before this finish: -ENOENT when it is not the
 * machine's, -ESTALE when it was lost, else 0 (it had ended already). */
static int finished_before(struct lab *l, const char *machine, int64_t job, int attempt, struct strbuf *err)
{
	enum lab_attempt_outcome o;
	char who[LAB_UUID_LEN + 1];
	int r = lab_attempt_get(l, job, attempt, &o, who, err);
	if (r < 0)
		return r;
	if (strcmp(who, machine) != 0) {
		sb_printf(err, "lab: job %lld attempt %d is not this machine's", (long long)job, attempt);
		return -ENOENT;
	}
	if (o == LAB_ATTEMPT_LOST) {
		sb_printf(err, "lab: job %lld attempt %d was lost (its lease expired): its end is not recorded",
			  (long long)job, attempt);
		return -ESTALE;
	}
	return 0;
}

/* inside finish's transaction, the job's row locked first; key: machine,
 * job, attempt */
static int finish_locked(struct lab *l, const char *const *key, int64_t job, int attempt,
			 enum lab_attempt_outcome outcome, const char *reason, struct strbuf *err)
{
	_cleanup_pgres_ PGresult *lock =
		lab_exec(l, "finishing an attempt", "SELECT 1 FROM lab_jobs WHERE id = $1 FOR UPDATE", 1, key + 1, err);
	if (!lock)
		return lab_errno(l);
	const char *pa[] = { key[0], key[1], key[2], attempt_word(outcome), reason, attempt_word(LAB_ATTEMPT_RUNNING) };
	int r = lab_run_count(l, "finishing an attempt",
			      "UPDATE lab_attempts SET outcome = $4, ended = now(), reason = $5"
			      " WHERE machine = $1 AND job = $2 AND attempt = $3 AND outcome = $6",
			      (int)ARRAY_SIZE(pa), pa, err);
	if (r == 0)
		return finished_before(l, key[0], job, attempt, err);
	if (r < 0)
		return r;
	const char *pj[] = { key[0], key[1], key[2], job_word(job_state_of(outcome)), reason, job_word(LAB_JOB_RUNNING) };
	r = lab_run(l, "finishing a job",
		    "UPDATE lab_jobs SET state = $4, finished = now(), lease_until = NULL, reason = $5"
		    " WHERE machine = $1 AND id = $2 AND attempts = $3 AND state = $6",
		    (int)ARRAY_SIZE(pj), pj, err);
	return r < 0 ? r : 1;
}

int lab_finish(struct lab *l, const char *machine, int64_t job, int attempt, enum lab_attempt_outcome outcome,
	       const char *reason, struct strbuf *err)
{
	if (outcome != LAB_ATTEMPT_DONE && outcome != LAB_ATTEMPT_FAILED && outcome != LAB_ATTEMPT_CANCELLED)
		return -EINVAL;
	char id[24], att[16];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	snprintf(att, sizeof(att), "%d", attempt);
	const char *key[] = { machine, id, att };
	int r = lab_begin(l, err);
	if (r < 0)
		return r;
	return lab_end(l, finish_locked(l, key, job, attempt, outcome, reason, err), err);
}

int lab_rescue(struct lab *l, int *ret_n, struct strbuf *err)
{
	const char *p[] = { job_word(LAB_JOB_RUNNING), attempt_word(LAB_ATTEMPT_RUNNING),
			    attempt_word(LAB_ATTEMPT_LOST), job_word(LAB_JOB_FAILED), job_word(LAB_JOB_QUEUED) };
	/* lost locks the jobs' rows (first, as everywhere), att marks their
	 * attempts, the UPDATE puts each back or fails it */
	int n = lab_run_count(l, "rescuing expired leases",
			      "WITH lost AS (SELECT j.id, j.attempts, j.max_attempts, j.machine, j.lease_until,"
			      "    coalesce(m.hostname, j.machine::text) AS host"
			      "  FROM lab_jobs j LEFT JOIN machines m ON m.id = j.machine"
			      "  WHERE j.state = $1 AND j.lease_until < now() ORDER BY j.id LIMIT 1000 FOR UPDATE OF j SKIP LOCKED),"
			      " att AS (UPDATE lab_attempts a SET outcome = $3, ended = now(),"
			      "    reason = format('the lease of %s expired at %s', lost.host, lost.lease_until)"
			      "  FROM lost WHERE a.job = lost.id AND a.attempt = lost.attempts AND a.outcome = $2)"
			      " UPDATE lab_jobs j SET machine = NULL, lease_until = NULL,"
			      "  state = CASE WHEN lost.attempts >= lost.max_attempts THEN $4 ELSE $5 END,"
			      "  finished = CASE WHEN lost.attempts >= lost.max_attempts THEN now() END,"
			      "  reason = format('attempt %s of %s lost: the lease of %s expired at %s%s', lost.attempts,"
			      "    lost.max_attempts, lost.host, lost.lease_until,"
			      "    CASE WHEN lost.attempts >= lost.max_attempts THEN '; no attempts left' ELSE '' END)"
			      " FROM lost WHERE j.id = lost.id",
			      (int)ARRAY_SIZE(p), p, err);
	if (n < 0)
		return n;
	if (ret_n)
		*ret_n = n;
	return 0;
}

#define JOB_COLUMNS \
	"j.id, j.state, j.attempts, j.max_attempts, j.machine, j.selector, j.reason, m.hostname, j.submitted_by," \
	" extract(epoch FROM j.created)::float8, coalesce(extract(epoch FROM j.finished)::float8, 0)"
#define JOB_FROM " FROM lab_jobs j LEFT JOIN machines m ON m.id = j.machine"

static int job_from_row(const PGresult *r, int i, struct lab_job *ret, struct strbuf *err)
{
	struct lab_job j = { .id = lab_col_i64(r, i, 0),
			     .attempts = (int)lab_col_i64(r, i, 2),
			     .max_attempts = (int)lab_col_i64(r, i, 3) };
	if (lab_job_state_parse(lab_col(r, i, 1), &j.state) < 0) {
		sb_printf(err, "lab: job %lld has a state this kab does not know: \"%s\"", (long long)j.id, lab_col(r, i, 1));
		return -EPROTO;
	}
	snprintf(j.machine, sizeof(j.machine), "%s", lab_col(r, i, 4));
	snprintf(j.selector, sizeof(j.selector), "%s", lab_col(r, i, 5));
	snprintf(j.reason, sizeof(j.reason), "%s", lab_col(r, i, 6));
	snprintf(j.hostname, sizeof(j.hostname), "%s", lab_col(r, i, 7));
	snprintf(j.submitted_by, sizeof(j.submitted_by), "%s", lab_col(r, i, 8));
	util_parse_double(lab_col(r, i, 9), &j.created);
	util_parse_double(lab_col(r, i, 10), &j.finished);
	*ret = j;
	return 0;
}

int lab_job_get(struct lab *l, int64_t id, struct lab_job *ret, struct strbuf *err)
{
	char sid[24];
	snprintf(sid, sizeof(sid), "%lld", (long long)id);
	const char *p[] = { sid };
	_cleanup_pgres_ PGresult *r = lab_exec(l, "reading a job", "SELECT " JOB_COLUMNS JOB_FROM " WHERE j.id = $1", 1, p, err);
	if (!r)
		return lab_errno(l);
	if (PQntuples(r) == 0) {
		sb_printf(err, "lab: no job %lld", (long long)id);
		return -ENOENT;
	}
	return job_from_row(r, 0, ret, err);
}

int lab_jobs_list(struct lab *l, const char *machine, size_t limit, struct lab_job **ret, size_t *ret_n, struct strbuf *err)
{
	char lim[24];
	snprintf(lim, sizeof(lim), "%zu", limit);
	const char *p[] = { lim, machine };
	/* a machine by its host name or its id (compared as text: a name is no uuid) */
	_cleanup_pgres_ PGresult *r = lab_exec(l, "listing jobs",
					       "SELECT " JOB_COLUMNS JOB_FROM " WHERE $2::text IS NULL OR j.id IN (SELECT a.job FROM lab_attempts a JOIN machines am ON am.id = a.machine"
					       "   WHERE am.hostname = $2 OR am.id::text = $2)"
					       "  OR m.hostname = $2 OR j.machine::text = $2"
					       " ORDER BY j.id DESC LIMIT $1::bigint",
					       2, p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct lab_job *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int e = job_from_row(r, (int)i, &v[i], err);
		if (e < 0) {
			free(v);
			return e;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_queue_depth(struct lab *l, int64_t *ret, struct strbuf *err)
{
	const char *p[] = { job_word(LAB_JOB_QUEUED) };
	return lab_exec_row(l, "counting the queued jobs", "SELECT count(*) FROM lab_jobs WHERE state = $1", 1, p, ret, 1, err);
}

int lab_attempts(struct lab *l, int64_t job, struct lab_attempt **ret, size_t *ret_n, struct strbuf *err)
{
	char id[24];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	const char *p[] = { id };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "listing a job's attempts",
			 "SELECT a.attempt, a.machine, m.hostname, a.outcome, a.reason, extract(epoch FROM a.started)::float8,"
			 "  coalesce(extract(epoch FROM a.ended)::float8, 0)"
			 " FROM lab_attempts a LEFT JOIN machines m ON m.id = a.machine WHERE a.job = $1 ORDER BY a.attempt",
			 1, p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	struct lab_attempt *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct lab_attempt *a = &v[i];
		a->attempt = (int)lab_col_i64(r, (int)i, 0);
		snprintf(a->machine, sizeof(a->machine), "%s", lab_col(r, (int)i, 1));
		snprintf(a->hostname, sizeof(a->hostname), "%s", lab_col(r, (int)i, 2));
		if (lab_attempt_outcome_parse(lab_col(r, (int)i, 3), &a->outcome) < 0)
			a->outcome = LAB_ATTEMPT_LOST; /* a newer kab's word: not one to count */
		snprintf(a->reason, sizeof(a->reason), "%s", lab_col(r, (int)i, 4));
		util_parse_double(lab_col(r, (int)i, 5), &a->started);
		util_parse_double(lab_col(r, (int)i, 6), &a->ended);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_release(struct lab *l, const char *machine, int64_t job, int attempt, struct strbuf *err)
{
	char id[24], att[16];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	snprintf(att, sizeof(att), "%d", attempt);
	const char *p[] = { machine, id, att, job_word(LAB_JOB_RUNNING) };
	int n = lab_run_count(l, "giving a lease back",
			      "UPDATE lab_jobs SET lease_until = now() - interval '1 millisecond'"
			      " WHERE id = $2 AND machine = $1 AND attempts = $3 AND state = $4",
			      (int)ARRAY_SIZE(p), p, err);
	if (n <= 0)
		return n;
	return lab_rescue(l, NULL, err);
}

int lab_held(struct lab *l, const char *machine, int64_t **ret, size_t *ret_n, struct strbuf *err)
{
	const char *p[] = { machine, job_word(LAB_JOB_RUNNING) };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "listing the jobs this machine holds",
			 "SELECT id, attempts FROM lab_jobs WHERE machine = $1 AND state = $2 ORDER BY id", 2, p, err);
	if (!r)
		return lab_errno(l);
	size_t n = (size_t)PQntuples(r);
	int64_t *v = calloc(2 * n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[2 * i] = lab_col_i64(r, (int)i, 0);
		v[2 * i + 1] = lab_col_i64(r, (int)i, 1);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int lab_attempt_get(struct lab *l, int64_t job, int attempt, enum lab_attempt_outcome *ret_outcome,
		    char ret_machine[LAB_UUID_LEN + 1], struct strbuf *err)
{
	char id[24], att[16];
	snprintf(id, sizeof(id), "%lld", (long long)job);
	snprintf(att, sizeof(att), "%d", attempt);
	const char *p[] = { id, att };
	_cleanup_pgres_ PGresult *r =
		lab_exec(l, "reading an attempt",
			 "SELECT outcome, machine FROM lab_attempts WHERE job = $1 AND attempt = $2", 2, p, err);
	if (!r)
		return lab_errno(l);
	enum lab_attempt_outcome o;
	if (PQntuples(r) == 0 || lab_attempt_outcome_parse(lab_col(r, 0, 0), &o) < 0) {
		sb_printf(err, "lab: job %lld has no attempt %d", (long long)job, attempt);
		return -ENOENT;
	}
	*ret_outcome = o;
	if (ret_machine)
		snprintf(ret_machine, LAB_UUID_LEN + 1, "%s", lab_col(r, 0, 1));
	return 0;
}

int lab_listen(struct lab *l, struct strbuf *err)
{
	int r = lab_run(l, "listening for queued jobs", "LISTEN " LAB_CHANNEL, 0, NULL, err);
	if (r == 0)
		l->listening = true;
	return r;
}

/* the notifications that came, all consumed: how many */
static int drain_notifies(struct lab *l)
{
	int n = 0;
	PGnotify *nf;
	while ((nf = PQnotifies(l->conn))) {
		n++;
		PQfreemem(nf);
	}
	return n;
}

int lab_wait(struct lab *l, double timeout_s, struct strbuf *err)
{
	if (!l->listening)
		return -EINVAL;
	double deadline = util_mono_now() + timeout_s;
	for (;;) {
		if (!PQconsumeInput(l->conn)) {
			sb_puts(err, "lab: waiting for queued jobs: the connection to the lab's server is lost");
			return -ECONNRESET;
		}
		if (drain_notifies(l) > 0)
			return 1;
		double left = deadline - util_mono_now();
		if (left <= 0)
			return 0;
		struct pollfd pfd = { .fd = PQsocket(l->conn), .events = POLLIN };
		if (poll(&pfd, 1, lab_poll_ms(left)) < 0 && errno != EINTR) {
			int e = errno;
			sb_printf(err, "lab: waiting for queued jobs: %s", strerror(e));
			return -e;
		}
	}
}
