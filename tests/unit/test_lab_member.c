/* kabd's member of a lab (harness/daemon/lab_member.c, lab_outbox.c), its
 * steps called in turn as the member's thread calls them, against the
 * real PostgreSQL server tests/lab/run.sh started (KAB_TEST_PG_*): a lab
 * job claimed into the local queue with its claim, run (its runs written
 * as the executor writes them), uploaded and finished; the upload sent
 * again, changing nothing; the outbox kept while the server is stopped
 * and sent once it is back, nothing lost or twice, and the pool's idle
 * connections dropped with the lost one; a lease that expires
 * under a running job (the local job cancelled, its runs uploaded under
 * the lost attempt, the job run again whole by another machine as
 * attempt 2); a lease the lab holds for a job this machine never stored,
 * given back; the machine's change points uploaded at the heartbeat, again
 * only when one changed; a lab that does not answer. Without a server it
 * says the cases are skipped. */
#include "harness/daemon/lab_member.h"
#include "harness/exec/joblife.h"
#include "harness/report/history.h"
#include "workloads/wl.h"
#include "db/lab.h"
#include "db/store.h"
#include "db/store_lab.h"
#include "db/store_regress.h"
#include "harness/base/util.h"
#include "t.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char job_text[] = "[job]\nname = labunit\npairs = 2\norder = abba\n"
			       "[swap]\ndevice = none\n"
			       "[variant A]\nname = base\n"
			       "[variant B]\nname = patched\n"
			       "[workload w]\ntype = command\ncommand = true\nmemory.max = 64M\n";

static struct {
	const char *dir, *port, *user, *ctl;
	char scratch[128];
	char url[512];
} pg;

/* ---- the server, as the superuser (checks only) ---- */

static long long admin_sql(const char *sql)
{
	const char *k[] = { "host", "port", "user", "dbname", NULL };
	const char *v[] = { pg.dir, pg.port, "kab_admin", "t_member", NULL };
	PGconn *c = PQconnectdbParams(k, v, 0);
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		fprintf(stderr, "  %s: %s", sql, PQerrorMessage(c));
	T_CHECK(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
	long long n = st == PGRES_TUPLES_OK && PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : -1;
	PQclear(r);
	PQfinish(c);
	return n;
}

static long long count(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long long count(const char *fmt, ...)
{
	char sql[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return admin_sql(sql);
}

static void fresh_db(void)
{
	const char *k[] = { "host", "port", "user", "dbname", NULL };
	const char *v[] = { pg.dir, pg.port, "kab_admin", "postgres", NULL };
	PGconn *c = PQconnectdbParams(k, v, 0);
	PQclear(PQexec(c, "DROP DATABASE IF EXISTS t_member"));
	char sql[256];
	snprintf(sql, sizeof(sql), "CREATE DATABASE t_member OWNER %s", pg.user);
	PGresult *r = PQexec(c, sql);
	T_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	PQfinish(c);
}

static void server(const char *what)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1", pg.ctl, what);
	T_EQ_INT(system(cmd), 0);
}

/* ---- a member and its machine's SQLite ---- */

struct machine {
	char dir[256], db[300];
	struct store *st;
	struct lab_member *m;
	int cancelled, woken;
};

static bool fake_idle(void *ctx, struct store *st)
{
	static const enum job_status busy[] = { JOB_QUEUED, JOB_RUNNING, JOB_INTERRUPTED };
	for (size_t i = 0; i < ARRAY_SIZE(busy); i++) {
		int64_t n = 0;
		if (store_count_jobs(st, busy[i], &n) < 0 || n)
			return false;
	}
	return true;
}

/* as queue_cancel ends a running job that the executor stops */
static int fake_cancel(void *ctx, struct store *st, int64_t id)
{
	struct machine *mc = ctx;
	mc->cancelled++;
	return jl_transition(st, id, JL_FROM(JOB_QUEUED) | JL_FROM(JOB_RUNNING), JOB_CANCELLED, "cancelled over the API");
}

static void fake_wake(void *ctx)
{
	struct machine *mc = ctx;
	mc->woken++;
}

static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static void machine_up(struct machine *mc, const char *name, const char *id_hex)
{
	*mc = (struct machine){ 0 };
	snprintf(mc->dir, sizeof(mc->dir), "%s/%s", pg.scratch, name);
	T_CHECK(mkdir(mc->dir, 0700) == 0);
	snprintf(mc->db, sizeof(mc->db), "%s/kab.db", mc->dir);
	T_EQ_INT(store_open(mc->db, &mc->st), 0);
	char idf[400], own[400];
	snprintf(idf, sizeof(idf), "%s/machine-id", mc->dir);
	snprintf(own, sizeof(own), "%s/own-id", mc->dir);
	T_EQ_INT(put_file(idf, id_hex), 0);
	struct lab_member_conf c = {
		.url = pg.url, .tags = "unit", .heartbeat_s = 1, .lease_s = 3, .machine_id_path = idf, .own_id_path = own, .db_path = mc->db
	};
	struct lab_member_hooks h = { .idle = fake_idle, .cancel = fake_cancel, .wake = fake_wake, .ctx = mc };
	struct strbuf err = { 0 };
	T_EQ_INT(lab_member_new(&c, &h, &mc->m, &err), 0);
	if (err.buf)
		fprintf(stderr, "  %s\n", err.buf);
	sb_free(&err);
}

static void machine_down(struct machine *mc)
{
	lab_member_free(mc->m);
	store_close(mc->st);
}

static int step(int r, struct strbuf *err, const char *what)
{
	if (r < 0)
		fprintf(stderr, "  %s: %s (%s)\n", what, err->buf ? err->buf : "", strerror(-r));
	sb_free(err);
	return r;
}

static struct lab *open_lab(void)
{
	struct lab *l = NULL;
	struct strbuf err = { 0 };
	struct lab_opts o = { .url = pg.url };
	T_EQ_INT(step(lab_open(&o, &l, &err), &err, "lab_open"), 0);
	return l;
}

static int64_t submit(struct lab *l, const char *selector)
{
	struct lab_selector sel;
	struct strbuf err = { 0 };
	T_EQ_INT(lab_selector_parse(selector, &sel, &err), 0);
	struct lab_submit s = { .text = job_text, .selector = &sel, .max_attempts = 3, .submitted_by = "unit" };
	int64_t id = 0;
	T_EQ_INT(step(lab_submit(l, &s, &id, &err), &err, "lab_submit"), 0);
	return id;
}

/* The local job run as the executor runs it: its steps' runs recorded
 * (the first `runs` of them; all when < 0), then its end and night. */
static void run_local(struct store *st, int64_t id, int runs, enum job_status end)
{
	struct store_step *steps = NULL;
	size_t n = 0;
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_QUEUED), JOB_RUNNING, NULL), 0);
	for (size_t i = 0; i < n && (runs < 0 || (int)i < runs); i++) {
		struct store_run run = { .job_id = id,
					 .step_id = steps[i].id,
					 .pair = steps[i].pair,
					 .variant = steps[i].variant,
					 .workload = steps[i].workload,
					 .cpus = 2,
					 .cgroup_version = 1 };
		snprintf(run.kernel_release, sizeof(run.kernel_release), "6.1.0-unit");
		int64_t rid;
		T_EQ_INT(store_run_begin(st, &run, &rid), 0);
		run.id = rid;
		run.started = util_real_now();
		run.finished = run.started + 1;
		run.status = steps[i].pair == STORE_PAIR_WARMUP ? RUN_WARMUP : RUN_OK;
		struct wl_metrics m = { 0 };
		wl_metrics_add(&m, "time.wall_s", "s", 1 + 0.01 * (double)(i % 3) + (steps[i].variant ? 0.1 : 0));
		T_EQ_INT(store_run_finish(st, &run, STEP_FINISHED, m.v, m.n, NULL, 0), 0);
		wl_metrics_free(&m);
	}
	free(steps);
	if (end != JOB_RUNNING) {
		T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), end, NULL), 0);
		T_EQ_INT(history_refresh_job(st, id), 0);
	}
}

static size_t local_runs(struct store *st, int64_t id)
{
	struct store_run *v = NULL;
	size_t n = 0;
	T_EQ_INT(store_runs_load(st, id, &v, &n), 0);
	free(v);
	return n;
}

/* ---- the cases ---- */

static void test_round_trip(struct machine *a, struct lab *l)
{
	struct strbuf err = { 0 };
	T_EQ_INT(step(lab_member_connect(a->m, a->st, &err), &err, "connect"), 0);
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "heartbeat"), 0);
	int64_t lj = submit(l, "tag=unit");
	int64_t local = 0;
	T_EQ_INT(step(lab_member_claim(a->m, a->st, &local, &err), &err, "claim"), 1);
	T_CHECK(local > 0 && a->woken == 1);
	struct store_lab_claim c;
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	T_CHECK(c.lab_job == lj && c.attempt == 1 && c.state == STORE_LAB_HELD && !c.lost && strlen(c.key) == 32);
	/* busy: no second claim while the local job waits */
	submit(l, "tag=unit");
	T_EQ_INT(step(lab_member_claim(a->m, a->st, NULL, &err), &err, "claim while busy"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'running' AND machine IS NOT NULL", (long long)lj), 1);

	run_local(a->st, local, -1, JOB_DONE);
	size_t runs = local_runs(a->st, local);
	T_CHECK(runs >= 4);
	int sent = 0;
	T_EQ_INT(step(lab_member_sync(a->m, a->st, &sent, &err), &err, "sync"), 0);
	T_EQ_INT(sent, 1);
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	T_CHECK(c.state == STORE_LAB_DONE);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), (long long)runs);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND data->'metrics' ? 'time.wall_s'", (long long)lj),
		 (long long)runs);
	T_EQ_INT(count("SELECT count(*) FROM lab_job_states WHERE job = %lld AND attempt = %lld AND status = 'done'"
		       " AND data->'report' IS NOT NULL AND jsonb_typeof(data->'report') = 'object'",
		       (long long)lj, 1LL),
		 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'done'", (long long)lj), 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_attempts WHERE job = %lld AND attempt = %lld AND outcome = 'done'",
		       (long long)lj, 1LL),
		 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_nights WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), 1);

	/* sent again: the same rows, nothing twice, the finish a no-op */
	struct lab *l2 = open_lab();
	T_EQ_INT(step(lab_outbox_send(l2, lab_member_machine(a->m), a->st, &c, &err), &err, "send again"), 0);
	lab_close(l2);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), (long long)runs);
	T_EQ_INT(count("SELECT count(*) FROM lab_job_states WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_nights WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), 1);
	sb_free(&err);
}

/* The machine's change points go up at its heartbeat, keyed by its id and
 * the local id, with the lab's jobs of the two nights; again only when one
 * changed (its confirmation settled). */
static void test_regressions_up(struct machine *a)
{
	struct strbuf err = { 0 };
	_cleanup_free_ struct store_lab_claim *v = NULL;
	size_t n = 0;
	T_EQ_INT(store_lab_claims(a->st, STORE_LAB_DONE, &v, &n), 0);
	T_CHECK(n >= 1);
	if (n < 1)
		return;
	struct store_regress g = { .created = 1767225600,
				   .variant = 1,
				   .good_job = v[0].job_id,
				   .bad_job = v[0].job_id,
				   .mean_before = 0,
				   .mean_after = -8,
				   .detected_pct = -8,
				   .detected_p = 0.001,
				   .state = REGRESS_PENDING,
				   .estimate_pct = NAN,
				   .ci_lo_pct = NAN,
				   .ci_hi_pct = NAN,
				   .p = NAN };
	snprintf(g.name, sizeof(g.name), "labunit");
	snprintf(g.workload, sizeof(g.workload), "w");
	snprintf(g.metric, sizeof(g.metric), "time.wall_s");
	snprintf(g.direction, sizeof(g.direction), "lower");
	snprintf(g.machine, sizeof(g.machine), "a (6.1.0)");
	int64_t rid = 0;
	T_EQ_INT(store_regress_add(a->st, &g, &rid), 0);
	const char *me = lab_member_machine(a->m)->id;
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "heartbeat with a change point"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_regressions WHERE machine = '%s' AND local_id = %lld AND state = 'pending'"
		       " AND good_job = %lld AND data->>'job' = 'labunit'",
		       me, (long long)rid, (long long)v[0].lab_job),
		 1);
	long long at = count("SELECT (extract(epoch FROM uploaded) * 1000000)::bigint FROM lab_regressions WHERE local_id = %lld",
			     (long long)rid);
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "heartbeat, nothing changed"), 0);
	T_EQ_INT(count("SELECT (extract(epoch FROM uploaded) * 1000000)::bigint FROM lab_regressions WHERE local_id = %lld",
		       (long long)rid),
		 at);
	g.id = rid;
	g.state = REGRESS_CONFIRMED;
	g.estimate_pct = -7.5;
	g.ci_lo_pct = -9;
	g.ci_hi_pct = -6;
	g.p = 0.002;
	snprintf(g.verdict, sizeof(g.verdict), "worse");
	snprintf(g.reason, sizeof(g.reason), "the paired comparison says worse");
	T_EQ_INT(store_regress_settle(a->st, &g), 0);
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "heartbeat after the confirmation"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_regressions WHERE machine = '%s' AND local_id = %lld AND state = 'confirmed'",
		       me, (long long)rid),
		 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_regressions"), 1);
	sb_free(&err);
}

static void test_outbox_across_restart(struct machine *a)
{
	struct strbuf err = { 0 };
	/* the second job submitted above */
	int64_t local = 0;
	T_EQ_INT(step(lab_member_claim(a->m, a->st, &local, &err), &err, "claim"), 1);
	struct store_lab_claim c;
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	run_local(a->st, local, -1, JOB_DONE);
	size_t runs = local_runs(a->st, local);
	/* a connection an HTTP read used, idle in the pool when the server stops */
	struct lab *pooled = NULL;
	T_EQ_INT(step(lab_member_borrow(a->m, &pooled, &err), &err, "borrow"), 0);
	lab_member_give_back(a->m, pooled, true);
	server("stop -m fast");
	int sent = -1;
	T_CHECK(lab_member_sync(a->m, a->st, &sent, &err) < 0);
	sb_free(&err);
	T_EQ_INT(sent, 0);
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	T_CHECK(c.state == STORE_LAB_ENDED && c.tries == 1 && c.error[0]);
	server("start");
	lab_member_disconnect(a->m);
	T_EQ_INT(step(lab_member_connect(a->m, a->st, &err), &err, "reconnect"), 0);
	T_EQ_INT(step(lab_member_sync(a->m, a->st, &sent, &err), &err, "sync after the restart"), 0);
	T_EQ_INT(sent, 1);
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	T_CHECK(c.state == STORE_LAB_DONE);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)c.lab_job, 1LL),
		 (long long)runs);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'done'", (long long)c.lab_job), 1);
	/* the pool went with the lost connection: a read borrows a live one */
	T_EQ_INT(step(lab_member_borrow(a->m, &pooled, &err), &err, "borrow after the restart"), 0);
	T_EQ_INT(step(lab_ping(pooled, &err), &err, "a read after the restart"), 0);
	lab_member_give_back(a->m, pooled, true);
}

static void test_lease_lost(struct machine *a, struct machine *b, struct lab *l)
{
	struct strbuf err = { 0 };
	int64_t lj = submit(l, "tag=unit");
	int64_t local = 0;
	T_EQ_INT(step(lab_member_claim(a->m, a->st, &local, &err), &err, "claim"), 1);
	run_local(a->st, local, 3, JOB_RUNNING); /* three runs, then the machine is cut off */
	/* its lease runs out (3 s) while nobody renews it; another machine rescues it */
	sleep(4);
	T_EQ_INT(step(lab_member_connect(b->m, b->st, &err), &err, "b connect"), 0);
	T_EQ_INT(step(lab_member_heartbeat(b->m, b->st, &err), &err, "b heartbeat (rescues)"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'queued' AND attempts = %lld", (long long)lj, 1LL), 1);
	/* machine a comes back: its renew is refused, the local job cancelled */
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "a heartbeat"), 0);
	T_EQ_INT(a->cancelled, 1);
	struct store_lab_claim c;
	T_EQ_INT(store_lab_get(a->st, local, &c), 0);
	T_CHECK(c.lost && strstr(c.reason, "lost"));
	T_EQ_INT(history_refresh_job(a->st, local), 0); /* the executor's, after the cancelled job's end */
	/* its three runs go up under attempt 1, which stays lost */
	int sent = 0;
	T_EQ_INT(step(lab_member_sync(a->m, a->st, &sent, &err), &err, "a sync"), 0);
	T_EQ_INT(sent, 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), 3);
	T_EQ_INT(count("SELECT count(*) FROM lab_attempts WHERE job = %lld AND attempt = %lld AND outcome = 'lost'",
		       (long long)lj, 1LL),
		 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_job_states WHERE job = %lld AND attempt = %lld AND status = 'lost'",
		       (long long)lj, 1LL),
		 1);
	/* machine b runs it whole as attempt 2: its runs apart from attempt 1's */
	int64_t blocal = 0;
	T_EQ_INT(step(lab_member_claim(b->m, b->st, &blocal, &err), &err, "b claim"), 1);
	struct store_lab_claim bc;
	T_EQ_INT(store_lab_get(b->st, blocal, &bc), 0);
	T_CHECK(bc.lab_job == lj && bc.attempt == 2);
	run_local(b->st, blocal, -1, JOB_DONE);
	T_EQ_INT(step(lab_member_sync(b->m, b->st, &sent, &err), &err, "b sync"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)lj, 2LL),
		 (long long)local_runs(b->st, blocal));
	T_EQ_INT(count("SELECT count(*) FROM lab_runs WHERE job = %lld AND attempt = %lld", (long long)lj, 1LL), 3);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'done' AND attempts = %lld", (long long)lj, 2LL), 1);
	/* a's late heartbeat leaves b's finished job alone */
	T_EQ_INT(step(lab_member_heartbeat(a->m, a->st, &err), &err, "a heartbeat again"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'done'", (long long)lj), 1);
}

/* A claim whose local job was never written (a crash right after it):
 * given back when the member connects. */
static void test_give_back(struct machine *a, struct lab *l)
{
	struct strbuf err = { 0 };
	int64_t lj = submit(l, "tag=unit");
	struct lab_claim c = { 0 };
	T_EQ_INT(step(lab_claim(l, lab_member_machine(a->m)->id, 60, &c, &err), &err, "raw claim"), 1);
	T_CHECK(c.job == lj);
	lab_claim_free(&c);
	lab_member_disconnect(a->m);
	T_EQ_INT(step(lab_member_connect(a->m, a->st, &err), &err, "connect"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'queued' AND attempts = %lld", (long long)lj, 1LL), 1);
	T_EQ_INT(count("SELECT count(*) FROM lab_attempts WHERE job = %lld AND attempt = %lld AND outcome = 'lost'",
		       (long long)lj, 1LL),
		 1);
	/* a job that does not parse here: failed in the lab, with the reason */
	admin_sql("UPDATE lab_jobs SET text = '[job]' || chr(10) || 'nmae = x' WHERE state = 'queued'");
	int64_t local = 0;
	T_EQ_INT(step(lab_member_claim(a->m, a->st, &local, &err), &err, "claim a bad job"), 0);
	T_EQ_INT(count("SELECT count(*) FROM lab_jobs WHERE id = %lld AND state = 'failed' AND reason LIKE '%%cannot run it%%'",
		       (long long)lj),
		 1);
}

static void test_unreachable(void)
{
	struct machine mc = { 0 };
	snprintf(mc.dir, sizeof(mc.dir), "%s/off", pg.scratch);
	T_CHECK(mkdir(mc.dir, 0700) == 0);
	snprintf(mc.db, sizeof(mc.db), "%s/kab.db", mc.dir);
	T_EQ_INT(store_open(mc.db, &mc.st), 0);
	char own[400];
	snprintf(own, sizeof(own), "%s/own-id", mc.dir);
	/* a port nobody listens on: refused at once, the host and port named */
	struct lab_member_conf c = { .url = "postgresql://kab@127.0.0.1:1/kablab",
				     .heartbeat_s = 1,
				     .lease_s = 3,
				     .machine_id_path = "/nonexistent",
				     .own_id_path = own,
				     .db_path = mc.db };
	struct lab_member_hooks h = { 0 };
	struct strbuf err = { 0 };
	T_EQ_INT(lab_member_new(&c, &h, &mc.m, &err), 0);
	double t0 = util_mono_now();
	T_CHECK(lab_member_connect(mc.m, mc.st, &err) < 0);
	T_CHECK(util_mono_now() - t0 < LAB_CONNECT_TIMEOUT_S + 1);
	T_CHECK(err.buf && strstr(err.buf, "127.0.0.1:1"));
	sb_free(&err);
	/* a lease no longer than two heartbeats is refused */
	c.lease_s = 1.5;
	struct lab_member *m2 = NULL;
	T_EQ_INT(lab_member_new(&c, &h, &m2, &err), -EINVAL);
	T_CHECK(err.buf && strstr(err.buf, "lease"));
	sb_free(&err);
	machine_down(&mc);
}

static void test_uuids(void)
{
	char a[LAB_UUID_LEN + 1], b[LAB_UUID_LEN + 1], c[LAB_UUID_LEN + 1];
	const char *key = "0123456789abcdef0123456789abcdef";
	lab_outbox_uuid(key, 'r', 1, a);
	lab_outbox_uuid(key, 'r', 2, b);
	lab_outbox_uuid(key, 'b', 1, c);
	T_CHECK(strlen(a) == LAB_UUID_LEN && a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
	T_CHECK(strcmp(a, b) != 0 && strcmp(a, c) != 0);
	lab_outbox_uuid(key, 'r', 1, b);
	T_EQ_STR(a, b);
}

int main(void)
{
	char dir[] = "/tmp/kab-test-member-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(pg.scratch, sizeof(pg.scratch), "%s", dir);
	test_uuids();
	pg.dir = getenv("KAB_TEST_PG_DIR");
	pg.port = getenv("KAB_TEST_PG_PORT");
	pg.user = getenv("KAB_TEST_PG_USER");
	pg.ctl = getenv("KAB_TEST_PG_CTL");
	if (pg.dir && pg.port && pg.user && pg.ctl) {
		snprintf(pg.url, sizeof(pg.url), "host=%s port=%s dbname=t_member user=%s", pg.dir, pg.port, pg.user);
		fresh_db();
		struct lab *l = open_lab();
		struct machine a, b;
		machine_up(&a, "a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
		machine_up(&b, "b", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n");
		test_round_trip(&a, l);
		test_regressions_up(&a);
		lab_close(l); /* the server restarts under it */
		test_outbox_across_restart(&a);
		l = open_lab();
		test_lease_lost(&a, &b, l);
		test_give_back(&a, l);
		lab_close(l);
		machine_down(&a);
		machine_down(&b);
		test_unreachable();
	} else
		t_skip("the member's cases against a PostgreSQL server", "none started: tests/lab/run.sh starts one and runs them");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return t_done("test_lab_member");
}
