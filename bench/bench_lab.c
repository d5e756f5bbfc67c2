/* The lab's database under the load the issue names, against a PostgreSQL
 * server bench/run.sh started for it (tests/lab/pg.sh), each part against
 * a reference measured in the same invocation:
 *
 * The queue. JOBS jobs (10,000) queued with a selector every machine
 * meets, then claimed through lab_claim until none is left: first by one
 * claimer, then, in a fresh database, by CLAIMERS (50) threads at once,
 * each with its own connection and its own registered machine. After each
 * claim the claimer times a bare round trip (lab_ping, SELECT 1) on the
 * same connection: what a statement costs at the least under the same
 * load. Every job must be claimed exactly once (the claimers' lists and
 * the database both say so).
 *
 * The nights. MACHINES (20) machines each run a nightly job for NIGHTS
 * (365) nights, written as a member writes them: lab_submit, lab_claim,
 * lab_night_put (3 workloads x 16 metrics a night), lab_finish; then the
 * per-machine query of doc/lab.md's first Otava test (one metric's year on
 * one machine) from the view otava_nights, against the same query on a
 * plain table holding the view's rows with an index on the series and time.
 *
 * Targets are reported (PASS/MISS), not asserted; the exit code is 1 only
 * when the benchmark could not run.
 *
 * Usage: bench_lab HOST PORT USER CREDENTIALS   (the server's address, a
 * role that may create databases, its libpq password file, 0600)
 * Sizes: LAB_BENCH_JOBS, LAB_BENCH_CLAIMERS, LAB_BENCH_NIGHTS,
 * LAB_BENCH_MACHINES, LAB_BENCH_REPEAT (history queries, default 400). */
#include "db/lab.h"
#include "harness/base/util.h"

#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/bench_rng.h"

#define DAY 86400.0
#define T0 1735696800.0 /* 2025-01-01 02:00 UTC, the first night */
#define WORKLOADS 3
#define METRICS 16
#define SELECTOR "arch=x86_64 cpus>=32 tag=bench"
#define JOB_NAME "nightly-mm"

/* the targets, as ratios to the references */
#define TARGET_RATE_VS_ONE 1.0  /* many claimers' claims/s over one claimer's, at least */
#define TARGET_CLAIM_VS_PING 10 /* p99 claim over p99 SELECT 1 on the same connections, at most */
#define TARGET_DEPTH 2.0        /* the first thousand claims' p50 and the last thousand's, at most this apart */
#define TARGET_VIEW_VS_REF 10   /* p99 of the view's query over the plain table's, at most */
#define HISTORY_BUDGET_MS 20.0  /* GET /api/v1/history's p99 budget (bench/run.sh kabd) */

static struct {
	const char *host, *port, *user, *credentials;
	size_t jobs, claimers, nights, machines, repeat;
} cfg;

static uint64_t rng_state = 20250101;

static double gauss(void)
{
	return bench_gauss(&rng_state);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the q quantile of n sorted values (the nearest rank) */
static double pct(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	size_t i = (size_t)ceil(q * (double)n);
	return sorted[i ? (i <= n ? i - 1 : n - 1) : 0];
}

static size_t env_size(const char *name, size_t def, size_t lo, size_t hi)
{
	const char *s = getenv(name);
	uint64_t v = 0;
	if (!s || util_parse_u64(s, &v) < 0 || v < lo || v > hi)
		return def;
	return (size_t)v;
}

/* ---- connections ---- */

/* A plain libpq connection for the bench's own SQL: databases made and
 * dropped, the checks, the reference table, the queries Otava would send. */
static PGconn *raw_connect(const char *db)
{
	const char *k[] = { "host", "port", "user", "dbname", "passfile", "options", NULL };
	const char *v[] = { cfg.host, cfg.port, cfg.user, db, cfg.credentials, "-c client_min_messages=warning", NULL };
	PGconn *c = PQconnectdbParams(k, v, 0);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench_lab: connecting to %s: %s", db, PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	return c;
}

static int raw_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	PQclear(r);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return 0;
	fprintf(stderr, "bench_lab: %s: %s", sql, PQerrorMessage(c));
	return -EIO;
}

/* the first value of sql's first row as a number; -1 when none */
static long long raw_value(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	long long v = -1;
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "bench_lab: %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	return v;
}

/* the database name made anew, owned by the bench's role */
static int fresh_db(const char *name)
{
	PGconn *c = raw_connect("postgres");
	if (!c)
		return -ECONNREFUSED;
	char sql[128];
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", name);
	int r = raw_exec(c, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	if (r == 0)
		r = raw_exec(c, sql);
	PQfinish(c);
	return r;
}

static void drop_db(const char *name)
{
	PGconn *c = raw_connect("postgres");
	char sql[128];
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", name);
	if (c)
		raw_exec(c, sql);
	PQfinish(c);
}

/* kab's own connection, as a member opens it: the URL and credentials
 * checked, the schema made or found */
static struct lab *open_lab(const char *db)
{
	char url[512];
	snprintf(url, sizeof(url), "host=%s port=%s dbname=%s user=%s", cfg.host, cfg.port, db, cfg.user);
	struct lab_opts o = { .url = url, .credentials = cfg.credentials };
	struct lab *l = NULL;
	struct strbuf err = { 0 };
	if (lab_open(&o, &l, &err) < 0) {
		fprintf(stderr, "bench_lab: %s\n", err.buf ? err.buf : "lab_open failed");
		l = NULL;
	}
	sb_free(&err);
	return l;
}

static struct lab_machine bench_machine(size_t i, const char *prefix)
{
	struct lab_machine m = { .cpus = 64, .memory = 64ULL << 30, .can_kexec = true, .cgroup_version = 2 };
	snprintf(m.id, sizeof(m.id), "00000000-0000-4000-8000-%012zu", i + 1);
	snprintf(m.hostname, sizeof(m.hostname), "%s%02zu", prefix, i + 1);
	snprintf(m.arch, sizeof(m.arch), "x86_64");
	snprintf(m.kernel, sizeof(m.kernel), "6.1.0-bench");
	snprintf(m.tags[0], sizeof(m.tags[0]), "bench");
	m.n_tags = 1;
	return m;
}

static int register_machines(struct lab *l, size_t n, const char *prefix)
{
	struct strbuf err = { 0 };
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct lab_machine m = bench_machine(i, prefix);
		if ((r = lab_register(l, &m, &err)) < 0)
			fprintf(stderr, "bench_lab: %s\n", err.buf ? err.buf : "lab_register failed");
	}
	sb_free(&err);
	return r;
}

/* ---- the queue ---- */

struct sample {
	double at, ms; /* when the claim returned (monotonic s), and how long it took */
};

struct claimer {
	struct lab *lab;
	char machine[LAB_UUID_LEN + 1];
	pthread_barrier_t *start;
	int64_t *jobs; /* claimed, in order */
	struct sample *claims;
	double *ping_ms;
	size_t n;
	int err;
};

/* Claims until the queue is empty: a claim that finds nothing while jobs
 * are still queued (all of them locked by other claimers' statements at
 * that moment) is tried again. */
static void *claim_loop(void *arg)
{
	struct claimer *c = arg;
	struct strbuf err = { 0 };
	pthread_barrier_wait(c->start);
	while (c->err == 0 && c->n < cfg.jobs) {
		struct lab_claim got = { 0 };
		double t0 = util_mono_now();
		int r = lab_claim(c->lab, c->machine, 600, &got, &err);
		double t1 = util_mono_now();
		if (r == 0) {
			int64_t depth = 0;
			if ((r = lab_queue_depth(c->lab, &depth, &err)) == 0 && depth == 0)
				break;
			continue;
		}
		if (r < 0 || lab_ping(c->lab, &err) < 0) {
			fprintf(stderr, "bench_lab: %s\n", err.buf ? err.buf : "a claim failed");
			c->err = r < 0 ? r : -EIO;
			break;
		}
		double t2 = util_mono_now();
		c->jobs[c->n] = got.job;
		c->claims[c->n] = (struct sample){ t1, (t1 - t0) * 1e3 };
		c->ping_ms[c->n++] = (t2 - t1) * 1e3;
		lab_claim_free(&got);
	}
	sb_free(&err);
	return NULL;
}

struct queue_result {
	size_t claimed, twice, never;
	bool db_once; /* the database: one attempt a job, none queued */
	double wall_s, rate, claim_p50, claim_p99, ping_p50, ping_p99, first_p50, last_p50, seed_s;
};

static int seed_queue(struct lab *l, int64_t *ret_first)
{
	static const char text[] = "[job]\nname = bench-queue\npairs = 3\n\n[variant A]\nname = base\n\n"
				   "[variant B]\nname = swappiness\nsysctl vm.swappiness = 10\n\n"
				   "[workload vm]\ntype = stress-ng\nargs = --vm 1 --vm-bytes 64M --timeout 10s\n";
	struct lab_selector sel;
	struct strbuf err = { 0 };
	int r = lab_selector_parse(SELECTOR, &sel, &err);
	struct lab_submit s = { .text = text, .selector = &sel, .max_attempts = 3, .submitted_by = "bench_lab" };
	for (size_t i = 0; i < cfg.jobs && r == 0; i++) {
		int64_t id = 0;
		if ((r = lab_submit(l, &s, &id, &err)) == 0 && i == 0)
			*ret_first = id;
	}
	if (r < 0)
		fprintf(stderr, "bench_lab: %s\n", err.buf ? err.buf : "lab_submit failed");
	sb_free(&err);
	return r;
}

static int cmp_sample_at(const void *a, const void *b)
{
	return cmp_double(&((const struct sample *)a)->at, &((const struct sample *)b)->at);
}

/* the p50 of k claims' latencies, from claims sorted by time */
static double p50_ms(const struct sample *s, size_t k)
{
	double *v = calloc(k ? k : 1, sizeof(*v));
	if (!v)
		return NAN;
	for (size_t i = 0; i < k; i++)
		v[i] = s[i].ms;
	qsort(v, k, sizeof(*v), cmp_double);
	double m = pct(v, k, 0.5);
	free(v);
	return m;
}

/* Who claimed what: each job once in the claimers' lists, and in the
 * database one attempt a job and no job left queued. */
static void check_once(struct claimer *c, size_t n, int64_t first, PGconn *raw, struct queue_result *ret)
{
	unsigned char *seen = calloc(cfg.jobs, 1);
	if (!seen)
		return;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < c[k].n; i++) {
			int64_t at = c[k].jobs[i] - first;
			if (at < 0 || at >= (int64_t)cfg.jobs || seen[at]++)
				ret->twice++;
			ret->claimed++;
		}
	for (size_t i = 0; i < cfg.jobs; i++)
		ret->never += !seen[i];
	free(seen);
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT count(*) FROM lab_attempts) = %zu AND (SELECT count(DISTINCT job) FROM lab_attempts) = %zu"
		 " AND NOT EXISTS (SELECT 1 FROM lab_jobs WHERE state <> 'running' OR attempts <> 1)",
		 cfg.jobs, cfg.jobs);
	PGresult *r = PQexec(raw, sql);
	ret->db_once = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
}

static void summarize(struct claimer *c, size_t n, struct queue_result *ret)
{
	size_t total = 0;
	for (size_t k = 0; k < n; k++)
		total += c[k].n;
	struct sample *all = calloc(total ? total : 1, sizeof(*all));
	double *claim = calloc(total ? total : 1, sizeof(*claim)), *ping = calloc(total ? total : 1, sizeof(*ping));
	if (all && claim && ping) {
		size_t at = 0;
		for (size_t k = 0; k < n; k++)
			for (size_t i = 0; i < c[k].n; i++, at++) {
				all[at] = c[k].claims[i];
				claim[at] = c[k].claims[i].ms;
				ping[at] = c[k].ping_ms[i];
			}
		qsort(claim, total, sizeof(*claim), cmp_double);
		qsort(ping, total, sizeof(*ping), cmp_double);
		qsort(all, total, sizeof(*all), cmp_sample_at);
		ret->claim_p50 = pct(claim, total, 0.5);
		ret->claim_p99 = pct(claim, total, 0.99);
		ret->ping_p50 = pct(ping, total, 0.5);
		ret->ping_p99 = pct(ping, total, 0.99);
		size_t k = total < 1000 ? total : 1000;
		ret->first_p50 = p50_ms(all, k);
		ret->last_p50 = p50_ms(all + total - k, k);
	}
	free(all);
	free(claim);
	free(ping);
}

static void claimers_free(struct claimer *c, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		lab_close(c[k].lab);
		free(c[k].jobs);
		free(c[k].claims);
		free(c[k].ping_ms);
	}
	free(c);
}

/* n claimers on a fresh database db of cfg.jobs queued jobs */
static int run_queue(const char *db, size_t n, struct queue_result *ret)
{
	*ret = (struct queue_result){ 0 };
	if (fresh_db(db) < 0)
		return -EIO;
	struct lab *l = open_lab(db);
	PGconn *raw = raw_connect(db);
	int64_t first = 0;
	double t0 = util_mono_now();
	int r = l && raw ? 0 : -ECONNREFUSED;
	if (r == 0 && (r = register_machines(l, cfg.claimers, "claimer")) == 0 && (r = seed_queue(l, &first)) == 0)
		r = raw_exec(raw, "VACUUM ANALYZE lab_jobs, lab_attempts, machines");
	ret->seed_s = util_mono_now() - t0;
	struct claimer *c = calloc(n, sizeof(*c));
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	for (size_t k = 0; r == 0 && c && k < n; k++) {
		struct lab_machine m = bench_machine(k, "claimer");
		c[k] = (struct claimer){ .lab = open_lab(db), .start = &start };
		snprintf(c[k].machine, sizeof(c[k].machine), "%s", m.id);
		c[k].jobs = calloc(cfg.jobs, sizeof(*c[k].jobs));
		c[k].claims = calloc(cfg.jobs, sizeof(*c[k].claims));
		c[k].ping_ms = calloc(cfg.jobs, sizeof(*c[k].ping_ms));
		if (!c[k].lab || !c[k].jobs || !c[k].claims || !c[k].ping_ms)
			r = -ENOMEM;
	}
	if (!c)
		r = -ENOMEM;
	pthread_t *th = calloc(n, sizeof(*th));
	size_t started = 0;
	for (; r == 0 && th && started < n; started++)
		if (pthread_create(&th[started], NULL, claim_loop, &c[started]) != 0)
			break;
	if (r == 0 && th && started == n) {
		pthread_barrier_wait(&start);
		double w0 = util_mono_now();
		for (size_t k = 0; k < n; k++)
			pthread_join(th[k], NULL);
		ret->wall_s = util_mono_now() - w0;
		for (size_t k = 0; k < n; k++)
			if (c[k].err < 0)
				r = c[k].err;
		check_once(c, n, first, raw, ret);
		summarize(c, n, ret);
		ret->rate = (double)ret->claimed / ret->wall_s;
	} else if (r == 0) {
		fprintf(stderr, "bench_lab: cannot start the claimers' threads\n");
		r = -EAGAIN; /* the started ones wait at the barrier: the process ends them */
	}
	pthread_barrier_destroy(&start);
	free(th);
	if (c)
		claimers_free(c, n);
	lab_close(l);
	PQfinish(raw);
	if (r == 0)
		drop_db(db);
	return r;
}

/* ---- the nights ---- */

static const char *const workloads[WORKLOADS] = { "stress-vm", "kbuild", "pageout" };

static void metric_name(size_t k, char *buf, size_t len)
{
	static const char *const named[] = { "stress-ng.bogo_ops_per_s", "time.wall_s", "vmstat.pgscan_direct",
					     "vmstat.pswpout", "psi.memory_some_avg10" };
	if (k < ARRAY_SIZE(named))
		snprintf(buf, len, "%s", named[k]);
	else
		snprintf(buf, len, "vmstat.counter_%02zu", k);
}

/* one machine's night i: the night, its tracked commit and its rows */
static void make_night(size_t machine, size_t i, struct store_history_night *n, struct store_history_row *rows)
{
	*n = (struct store_history_night){ .night = T0 + (double)i * DAY + (double)machine * 60, .status = JOB_DONE, .runs = 12 };
	n->n_commits = 1;
	struct store_history_commit *c = &n->commits[0];
	c->variant = 1;
	c->date = T0 + (double)i * DAY - 5 * 3600;
	snprintf(c->track, sizeof(c->track), "origin mm-unstable");
	snprintf(c->sha, sizeof(c->sha), "%016zx%024zx", i + 1, machine + 1);
	snprintf(c->subject, sizeof(c->subject), "mm: the change of night %zu", i);
	for (size_t w = 0; w < WORKLOADS; w++)
		for (size_t k = 0; k < METRICS; k++) {
			struct store_history_row *r = &rows[w * METRICS + k];
			double est = (i >= 200 && k == 0 ? -3.0 : 0.0) + 0.8 * gauss();
			double base = 1000 * (1 + (double)k) * (1 + 0.01 * gauss());
			*r = (struct store_history_row){ .variant = 1,
							 .rank = (int)k,
							 .primary = k < 2,
							 .pairs = 6,
							 .estimate_pct = est,
							 .ci_lo_pct = est - 1.2,
							 .ci_hi_pct = est + 1.2,
							 .p = 0.2,
							 .median_base = base,
							 .median_variant = base * (1 + est / 100) };
			snprintf(r->workload, sizeof(r->workload), "%s", workloads[w]);
			metric_name(k, r->metric, sizeof(r->metric));
			snprintf(r->variant_name, sizeof(r->variant_name), "head");
			snprintf(r->base_name, sizeof(r->base_name), "base");
			snprintf(r->verdict, sizeof(r->verdict), "undecided");
			snprintf(r->unit, sizeof(r->unit), k == 1 ? "s" : "ops/s");
			snprintf(r->direction, sizeof(r->direction), k == 1 ? "lower" : "higher");
		}
}

struct writer {
	const char *db;
	size_t from, step; /* the machines from, from + step, ... */
	int err;
};

/* Every night of the writer's machines, as a member writes one: the lab
 * job queued for the machine, claimed by it, its night put, its attempt
 * finished. */
static void *write_nights(void *arg)
{
	struct writer *w = arg;
	struct lab *l = open_lab(w->db);
	struct strbuf err = { 0 };
	struct store_history_row rows[WORKLOADS * METRICS];
	static const char text[] = "[job]\nname = " JOB_NAME "\npairs = 6\n\n[variant A]\nname = base\n\n"
				   "[variant B]\nname = head\n\n[workload stress-vm]\ntype = stress-ng\n"
				   "args = --vm 1 --vm-bytes 64M --timeout 10s\n";
	int r = l ? 0 : -ECONNREFUSED;
	for (size_t i = 0; i < cfg.nights && r == 0; i++)
		for (size_t m = w->from; m < cfg.machines && r == 0; m += w->step) {
			struct lab_machine self = bench_machine(m, "lab");
			struct lab_selector sel;
			char on[300];
			snprintf(on, sizeof(on), "host=%s", self.hostname);
			struct lab_submit s = { .text = text, .selector = &sel, .max_attempts = 1, .submitted_by = "bench_lab" };
			struct lab_claim c = { 0 };
			int64_t id = 0;
			struct store_history_night hn;
			if ((r = lab_selector_parse(on, &sel, &err)) < 0 || (r = lab_submit(l, &s, &id, &err)) < 0 ||
			    (r = lab_claim(l, self.id, 600, &c, &err)) < 0)
				break;
			if (r == 0 || c.job != id) {
				fprintf(stderr, "bench_lab: %s claimed %s, not its night's job %lld\n", self.hostname,
					r ? "another job" : "nothing", (long long)id);
				lab_claim_free(&c);
				r = -EPROTO;
				break;
			}
			make_night(m, i, &hn, rows);
			struct lab_night n = {
				.job = c.job, .attempt = c.attempt, .name = JOB_NAME, .night = &hn, .rows = rows, .n_rows = ARRAY_SIZE(rows)
			};
			snprintf(n.machine, sizeof(n.machine), "%s", self.id);
			lab_claim_free(&c);
			if ((r = lab_night_put(l, &n, &err)) < 0 ||
			    (r = lab_finish(l, self.id, n.job, n.attempt, LAB_ATTEMPT_DONE, NULL, &err)) < 0)
				break;
			r = 0;
		}
	if (r < 0 && err.buf)
		fprintf(stderr, "bench_lab: %s\n", err.buf);
	w->err = r;
	sb_free(&err);
	lab_close(l);
	return NULL;
}

#define SERIES_WHERE \
	" WHERE machine = $1 AND job_name = '" JOB_NAME "' AND workload = 'stress-vm'" \
	"  AND metric = 'stress-ng.bogo_ops_per_s' AND variant = 'head' ORDER BY time, job"
#define SERIES_COLUMNS "SELECT time, commit, branch, machine, job, kab_version, ratio, median_variant FROM "

/* one query of one machine's series: its milliseconds, or -1 when it did
 * not answer cfg.nights rows */
static double time_query(PGconn *c, const char *sql, const char *machine)
{
	const char *p[] = { machine };
	double t0 = util_mono_now();
	PGresult *r = PQexecParams(c, sql, 1, NULL, p, NULL, NULL, 0);
	double ms = (util_mono_now() - t0) * 1e3;
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != (int)cfg.nights) {
		fprintf(stderr, "bench_lab: %s's series: %d rows, not %zu: %s", machine,
			PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : -1, cfg.nights, PQerrorMessage(c));
		ms = -1;
	}
	PQclear(r);
	return ms;
}

struct nights_result {
	double seed_s, view_p50, view_p99, ref_p50, ref_p99;
	long long rows;
};

/* The view's query and the reference's, alternately, each machine in
 * turn; the first round of each warms the caches. */
static int time_series(PGconn *raw, struct nights_result *ret)
{
	double *view = calloc(cfg.repeat, sizeof(*view)), *ref = calloc(cfg.repeat, sizeof(*ref));
	int r = view && ref ? 0 : -ENOMEM;
	for (size_t i = 0; r == 0 && i < cfg.repeat + cfg.machines; i++) {
		struct lab_machine m = bench_machine(i % cfg.machines, "lab");
		double v = time_query(raw, SERIES_COLUMNS "otava_nights" SERIES_WHERE, m.hostname);
		double f = time_query(raw, SERIES_COLUMNS "bench_ref" SERIES_WHERE, m.hostname);
		if (v < 0 || f < 0)
			r = -EPROTO;
		else if (i >= cfg.machines) {
			view[i - cfg.machines] = v;
			ref[i - cfg.machines] = f;
		}
	}
	if (r == 0) {
		qsort(view, cfg.repeat, sizeof(*view), cmp_double);
		qsort(ref, cfg.repeat, sizeof(*ref), cmp_double);
		ret->view_p50 = pct(view, cfg.repeat, 0.5);
		ret->view_p99 = pct(view, cfg.repeat, 0.99);
		ret->ref_p50 = pct(ref, cfg.repeat, 0.5);
		ret->ref_p99 = pct(ref, cfg.repeat, 0.99);
	}
	free(view);
	free(ref);
	return r;
}

static int run_nights(const char *db, struct nights_result *ret)
{
	*ret = (struct nights_result){ 0 };
	if (fresh_db(db) < 0)
		return -EIO;
	struct lab *l = open_lab(db);
	int r = l ? register_machines(l, cfg.machines, "lab") : -ECONNREFUSED;
	lab_close(l);
	/* two writers: the server and the writers share this machine's CPUs */
	struct writer w[2] = { { db, 0, 2, 0 }, { db, 1, 2, 0 } };
	pthread_t th[2];
	double t0 = util_mono_now();
	size_t started = 0;
	for (; r == 0 && started < 2; started++)
		if (pthread_create(&th[started], NULL, write_nights, &w[started]) != 0)
			r = -EAGAIN;
	for (size_t k = 0; k < started; k++) {
		pthread_join(th[k], NULL);
		if (w[k].err < 0)
			r = w[k].err;
	}
	ret->seed_s = util_mono_now() - t0;
	PGconn *raw = r == 0 ? raw_connect(db) : NULL;
	if (r == 0 && !raw)
		r = -ECONNREFUSED;
	/* the reference: the view's rows in a table of their own, an index on
	 * the series and time, as a plain indexed select reads them */
	if (r == 0 &&
	    ((r = raw_exec(raw, "VACUUM ANALYZE lab_nights, lab_night_rows, lab_night_commits, lab_attempts, lab_jobs, machines")) < 0 ||
	     (r = raw_exec(raw, "CREATE TABLE bench_ref AS SELECT * FROM otava_nights")) < 0 ||
	     (r = raw_exec(raw, "CREATE INDEX bench_ref_series ON bench_ref (machine, job_name, workload, metric,"
				" variant, time)")) < 0 ||
	     (r = raw_exec(raw, "VACUUM ANALYZE bench_ref")) < 0))
		fprintf(stderr, "bench_lab: the reference table could not be made\n");
	if (r == 0) {
		ret->rows = raw_value(raw, "SELECT count(*) FROM lab_night_rows");
		r = time_series(raw, ret);
	}
	PQfinish(raw);
	if (r == 0)
		drop_db(db);
	return r;
}

/* ---- the report ---- */

static void verdict(bool pass, const char *what)
{
	printf("  %s  %s\n", pass ? "PASS" : "MISS", what);
}

static void print_queue(const char *what, const struct queue_result *q)
{
	printf("  %-14s %9.0f %9.3f %9.3f %9.3f %9.3f %8.1fx %9.3f %9.3f\n", what, q->rate, q->claim_p50, q->claim_p99,
	       q->ping_p50, q->ping_p99, q->claim_p99 / q->ping_p99, q->first_p50, q->last_p50);
}

static int report_queue(void)
{
	struct queue_result one, many;
	printf("queue: %zu jobs (selector \"%s\"), %zu registered machines; claimed until none is left\n", cfg.jobs,
	       SELECTOR, cfg.claimers);
	if (run_queue("kab_bench_queue1", 1, &one) < 0)
		return -1;
	if (run_queue("kab_bench_queue", cfg.claimers, &many) < 0)
		return -1;
	printf("  (queueing %zu jobs: %.1f s; claims then drained in %.1f s by one claimer, %.1f s by %zu)\n", cfg.jobs,
	       many.seed_s, one.wall_s, many.wall_s, cfg.claimers);
	printf("\n  %-14s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "claims/s", "claim p50", "claim p99", "SELECT 1",
	       "SELECT 1", "p99", "first 1k", "last 1k");
	printf("  %-14s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "", "ms", "ms", "p50 ms", "p99 ms", "ratio", "p50 ms", "p50 ms");
	print_queue("1 claimer", &one);
	char name[32];
	snprintf(name, sizeof(name), "%zu claimers", cfg.claimers);
	print_queue(name, &many);
	printf("  (SELECT 1: a bare round trip on the claimer's connection right after each claim; first/last 1k: the "
	       "first and last thousand claims by time)\n\n");
	char what[512];
	snprintf(what, sizeof(what), "every job claimed exactly once: %zu claims by %zu claimers, %zu twice, %zu never; the database: %s",
		 many.claimed, cfg.claimers, many.twice, many.never,
		 many.db_once ? "one attempt a job, none queued" : "NOT one attempt a job");
	verdict(many.claimed == cfg.jobs && !many.twice && !many.never && many.db_once && one.claimed == cfg.jobs &&
			!one.twice && one.db_once,
		what);
	snprintf(what, sizeof(what), "%zu claimers' claims/s >= %.0fx one claimer's (SKIP LOCKED: no convoy): %.2fx",
		 cfg.claimers, TARGET_RATE_VS_ONE, many.rate / one.rate);
	verdict(many.rate >= TARGET_RATE_VS_ONE * one.rate, what);
	snprintf(what, sizeof(what), "p99 claim <= %dx p99 SELECT 1 on the same connections, %zu claimers: %.1fx",
		 TARGET_CLAIM_VS_PING, cfg.claimers, many.claim_p99 / many.ping_p99);
	verdict(many.claim_p99 <= TARGET_CLAIM_VS_PING * many.ping_p99, what);
	snprintf(what, sizeof(what), "p99 claim <= %dx p99 SELECT 1, one claimer: %.1fx", TARGET_CLAIM_VS_PING,
		 one.claim_p99 / one.ping_p99);
	verdict(one.claim_p99 <= TARGET_CLAIM_VS_PING * one.ping_p99, what);
	/* a claim walks the queue in order and stops at the first match: its
	 * cost should not depend on how many jobs wait behind it */
	double d1 = one.first_p50 / one.last_p50, dn = many.first_p50 / many.last_p50;
	snprintf(what, sizeof(what),
		 "a claim costs the same with %zu jobs queued as with the last few: first and last thousand "
		 "claims' p50 within %.0fx (first/last: one claimer %.2fx, %zu claimers %.2fx)",
		 cfg.jobs, TARGET_DEPTH, d1, cfg.claimers, dn);
	verdict(fmax(d1, 1 / d1) <= TARGET_DEPTH && fmax(dn, 1 / dn) <= TARGET_DEPTH, what);
	return 0;
}

static int report_nights(void)
{
	struct nights_result n;
	printf("\nnights: %zu machines x %zu nights of \"%s\" (%d workloads x %d metrics a night), written with "
	       "lab_submit, lab_claim, lab_night_put and lab_finish\n",
	       cfg.machines, cfg.nights, JOB_NAME, WORKLOADS, METRICS);
	if (run_nights("kab_bench_nights", &n) < 0)
		return -1;
	size_t nights = cfg.machines * cfg.nights;
	printf("  (written in %.1f s, %.2f ms a night; %lld rows in lab_night_rows)\n", n.seed_s,
	       n.seed_s * 1e3 / (double)nights, n.rows);
	printf("\n  one machine's year of stress-ng.bogo_ops_per_s (%zu rows), doc/lab.md's first Otava query, %zu "
	       "times (machines in turn)\n",
	       cfg.nights, cfg.repeat);
	printf("  %-44s %9s %9s\n", "", "p50 ms", "p99 ms");
	printf("  %-44s %9.3f %9.3f\n", "from the view otava_nights", n.view_p50, n.view_p99);
	printf("  %-44s %9.3f %9.3f\n", "reference: the same rows, a plain indexed table", n.ref_p50, n.ref_p99);
	printf("  %-44s %8.1fx %8.1fx\n\n", "ratio", n.view_p50 / n.ref_p50, n.view_p99 / n.ref_p99);
	char what[256];
	snprintf(what, sizeof(what), "p99 of the view's query <= %dx the plain indexed select of the same rows: %.1fx",
		 TARGET_VIEW_VS_REF, n.view_p99 / n.ref_p99);
	verdict(n.view_p99 <= TARGET_VIEW_VS_REF * n.ref_p99, what);
	snprintf(what, sizeof(what), "p99 of the view's query within GET /api/v1/history's %.0f ms budget: %.2f ms",
		 HISTORY_BUDGET_MS, n.view_p99);
	verdict(n.view_p99 < HISTORY_BUDGET_MS, what);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bench_lab HOST PORT USER CREDENTIALS (bench/run.sh lab starts the server)\n");
		return 1;
	}
	cfg.host = argv[1];
	cfg.port = argv[2];
	cfg.user = argv[3];
	cfg.credentials = argv[4];
	cfg.jobs = env_size("LAB_BENCH_JOBS", 10000, 1, 10000000);
	cfg.claimers = env_size("LAB_BENCH_CLAIMERS", 50, 1, 1000);
	cfg.nights = env_size("LAB_BENCH_NIGHTS", 365, 1, 100000);
	cfg.machines = env_size("LAB_BENCH_MACHINES", 20, 1, 1000);
	cfg.repeat = env_size("LAB_BENCH_REPEAT", 400, 1, 1000000);
	if (report_queue() < 0 || report_nights() < 0) {
		fprintf(stderr, "bench_lab: the benchmark could not run (above)\n");
		return 1;
	}
	return 0;
}
