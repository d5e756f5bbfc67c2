/* The lab (db/lab*.c): selectors, tags, the URL and credentials checks and
 * the machine id here, always; against a real PostgreSQL server, when
 * tests/lab/run.sh started one (its socket directory, port, role and
 * password in KAB_TEST_PG_*): the schema created, refused when newer,
 * migrated when older; register and heartbeat; submit and claim; two
 * machines claiming at once, 1,000 times; leases that expire; an
 * idempotent finish; uploads, one machine's rows and attempts safe from
 * another's; nights read back through otava_nights by doc/lab.md's Otava
 * queries; the lab-wide reads (a job's report, one machine's history never
 * mixed with another's, change points uploaded); a job no machine matches
 * and why; LISTEN/NOTIFY; the bad inputs. */
#include "db/lab.h"
#include "harness/base/util.h"
#include "harness/report/history.h"
#include "t.h"

#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has(const struct strbuf *sb, const char *s)
{
	return sb->buf && strstr(sb->buf, s);
}

/* path made (or emptied) with text in it, 0600 */
static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	bool ok = fputs(text, f) >= 0;
	ok = fclose(f) == 0 && ok;
	return ok && chmod(path, 0600) == 0 ? 0 : -EIO;
}

/* ---- no server needed ---- */

static void selector_is(const char *text, const char *want)
{
	struct lab_selector s, again;
	struct strbuf err = { 0 };
	char got[LAB_SELECTOR_MAX], got2[LAB_SELECTOR_MAX];
	T_EQ_INT(lab_selector_parse(text, &s, &err), 0);
	lab_selector_format(&s, got, sizeof(got));
	T_EQ_STR(got, want);
	/* the normalized form is what the lab stores and parses back */
	T_EQ_INT(lab_selector_parse(got, &again, &err), 0);
	lab_selector_format(&again, got2, sizeof(got2));
	T_EQ_STR(got2, want);
	if (err.buf)
		fprintf(stderr, "%s: %s\n", text, err.buf);
	sb_free(&err);
}

static void selector_bad(const char *text, const char *a, const char *b)
{
	struct lab_selector s;
	struct strbuf err = { 0 };
	T_EQ_INT(lab_selector_parse(text, &s, &err), -EINVAL);
	T_CHECK(has(&err, a) && (!b || has(&err, b)));
	if (!has(&err, a) || (b && !has(&err, b)))
		fprintf(stderr, "  %s: %s\n", text, err.buf ? err.buf : "(no message)");
	sb_free(&err);
}

static void test_selectors(void)
{
	selector_is("", "");
	selector_is("cpus>=64, arch=x86_64 kexec", "arch=x86_64 cpus>=64 kexec");
	selector_is("tag=numa memory>=64G tag=fast-disk host=lab3", "host=lab3 memory>=64G tag=fast-disk tag=numa");
	selector_is("cpus>8 cpus<=128 cpus>=4", "cpus>=9 cpus<=128");
	selector_is("cpus=2 cgroup=v2", "cpus=2 cgroup=2");
	selector_is("memory<1G", "memory<=1073741823");
	selector_bad("cpu>=64", "bad selector term \"cpu>=64\"", "did you mean \"cpus\"");
	selector_bad("cpus>=many", "\"cpus>=many\"", "whole number");
	selector_bad("arch>=x86_64", "\"arch>=x86_64\"", "take =");
	selector_bad("cpus>=64 cpus<=8", "\"cpus<=8\"", "no machine can meet it");
	selector_bad("host=a host=b", "host=a and host=b", NULL);
	selector_bad("kexec=yes", "kexec takes no value", NULL);
	selector_bad("=5", "bad selector term \"=5\"", NULL);
	selector_bad("arch", "\"arch\"", "value is missing");
	selector_bad("tag=a;drop", "\"tag=a;drop\"", NULL);
	selector_bad("cgroup=3", "cgroup=1 or cgroup=2", NULL);
	/* under the limit as written, over it once normalized: refused, never cut */
	char text[1100] = "host=h234567890123456789012345678901234567 memory<1G";
	for (int i = 0; i < 14; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " tag=t%02d%061d", i, 0);
	T_CHECK(strlen(text) < LAB_SELECTOR_MAX);
	struct lab_selector s;
	struct strbuf err = { 0 };
	T_EQ_INT(lab_selector_parse(text, &s, &err), -E2BIG);
	T_CHECK(has(&err, "too long once normalized"));
	sb_free(&err);
}

static struct lab_machine machine(const char *id, const char *host, int cpus, const char *tags)
{
	struct lab_machine m = { .cpus = cpus, .memory = 8ULL << 30, .can_kexec = false, .cgroup_version = 2 };
	snprintf(m.id, sizeof(m.id), "%s", id);
	snprintf(m.hostname, sizeof(m.hostname), "%s", host);
	snprintf(m.arch, sizeof(m.arch), "x86_64");
	snprintf(m.kernel, sizeof(m.kernel), "6.1.0-test");
	struct strbuf err = { 0 };
	T_EQ_INT(lab_tags_parse(tags, &m, &err), 0);
	sb_free(&err);
	return m;
}

static void test_match_and_tags(void)
{
	struct lab_machine m = machine("00000000-0000-4000-8000-000000000001", "lab1", 4, "numa, fast-disk numa");
	T_EQ_INT(m.n_tags, 2);
	T_EQ_STR(m.tags[0], "fast-disk");
	struct lab_selector s;
	struct strbuf err = { 0 }, why = { 0 };
	T_EQ_INT(lab_selector_parse("cpus>=4 tag=numa arch=x86_64", &s, &err), 0);
	T_CHECK(lab_selector_match(&s, &m, &why));
	T_EQ_INT(lab_selector_parse("cpus>=64", &s, &err), 0);
	T_CHECK(!lab_selector_match(&s, &m, &why));
	T_CHECK(has(&why, "cpus>=64: it has 4"));
	sb_free(&why);
	T_EQ_INT(lab_selector_parse("kexec", &s, &err), 0);
	T_CHECK(!lab_selector_match(&s, &m, &why) && has(&why, "cannot kexec"));
	sb_free(&why);
	T_EQ_INT(lab_selector_parse("tag=gpu", &s, &err), 0);
	T_CHECK(!lab_selector_match(&s, &m, &why) && has(&why, "tag=gpu"));
	sb_free(&why);
	T_EQ_INT(lab_tags_parse("ok bad/tag", &m, &err), -EINVAL);
	T_CHECK(has(&err, "bad tag \"bad/tag\""));
	sb_free(&err);
}

static void url_ok(const char *url)
{
	struct strbuf err = { 0 };
	T_EQ_INT(lab_check_url(url, &err), 0);
	if (err.buf)
		fprintf(stderr, "  %s: %s\n", url, err.buf);
	sb_free(&err);
}

static void url_bad(const char *url, const char *a, const char *b)
{
	struct strbuf err = { 0 };
	T_EQ_INT(lab_check_url(url, &err), -EINVAL);
	T_CHECK(has(&err, a) && (!b || has(&err, b)));
	if (!has(&err, a) || (b && !has(&err, b)))
		fprintf(stderr, "  %s: %s\n", url, err.buf ? err.buf : "(no message)");
	sb_free(&err);
}

static void test_urls(void)
{
	url_ok("postgresql:///kablab?host=/run/postgresql");
	url_ok("postgresql://kab@localhost/kablab");
	url_ok("postgresql://kab@127.0.0.1:5433/kablab");
	url_ok("host=::1 dbname=kablab");
	url_ok("postgresql://kab@db1.lab/kablab?sslmode=verify-full&sslrootcert=/etc/kab/lab-ca.pem");
	url_ok("service=kablab");
	url_bad("postgresql://kab@db1.lab/kablab", "db1.lab is not local", "sslmode=verify-full");
	url_bad("postgresql://kab@db1.lab/kablab?sslmode=require", "not sslmode=require", NULL);
	url_bad("host=127.0.0.1,db2 dbname=kablab", "db2 is not local", NULL);
	url_bad("postgresql://kab:secret@localhost/kablab", "holds a password", "credentials file");
	url_bad("postgresql://kab@localhost/kablab?nonsense=1", "does not parse", "nonsense");
	url_bad("", "no lab URL", NULL);
}

static void test_credentials(const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/lab.pgpass", dir);
	T_EQ_INT(put_file(path, "*:*:*:kab:secret\n"), 0);
	struct strbuf err = { 0 };
	T_CHECK(chmod(path, 0600) == 0);
	T_EQ_INT(lab_check_credentials(path, &err), 0);
	T_CHECK(chmod(path, 0644) == 0);
	T_EQ_INT(lab_check_credentials(path, &err), -EPERM);
	T_CHECK(has(&err, path) && has(&err, "mode 0644") && has(&err, "chmod 600"));
	sb_free(&err);
	if (geteuid() == 0) {
		T_CHECK(chmod(path, 0600) == 0 && chown(path, 65534, 0) == 0);
		T_EQ_INT(lab_check_credentials(path, &err), -EPERM);
		T_CHECK(has(&err, path) && has(&err, "owned by root"));
		sb_free(&err);
	} else
		t_skip("a credentials file not root's", "needs root");
	unlink(path);
	T_EQ_INT(lab_check_credentials(path, &err), -ENOENT);
	T_CHECK(has(&err, path));
	sb_free(&err);
	/* in a directory its group may write: refused, the directory named
	 * (secret_open's walk; test_gate has the rest) */
	char sub[256], fix[300];
	snprintf(sub, sizeof(sub), "%s/gw", dir);
	T_CHECK(mkdir(sub, 0770) == 0 && chmod(sub, 0770) == 0);
	snprintf(path, sizeof(path), "%s/lab.pgpass", sub);
	T_EQ_INT(put_file(path, "*:*:*:kab:secret\n"), 0);
	T_EQ_INT(lab_check_credentials(path, &err), -EPERM);
	snprintf(fix, sizeof(fix), "chmod go-w %s)", sub);
	T_CHECK(has(&err, sub) && has(&err, "mode 0770") && has(&err, fix));
	sb_free(&err);
	T_CHECK(chmod(sub, 0700) == 0);
	T_EQ_INT(lab_check_credentials(path, &err), 0);
	unlink(path);
	rmdir(sub);
}

/* The lab's sslrootcert decides which server kab takes for the lab: from
 * the URL, a service file or $PGSSLROOTCERT, checked as a file kab trusts
 * before any connection (the socket here does not exist: no network) */
static void test_rootcert(const char *dir)
{
	char ca[256], url[512], fix[300], services[256];
	snprintf(ca, sizeof(ca), "%s/lab-ca.pem", dir);
	T_EQ_INT(put_file(ca, "-----BEGIN CERTIFICATE-----\n"), 0);
	snprintf(url, sizeof(url), "postgresql:///kablab?host=%s/no-socket&sslrootcert=%s", dir, ca);
	struct lab_opts o = { .url = url, .timeout_s = 2 };
	struct lab *l = NULL;
	struct strbuf err = { 0 };
	snprintf(fix, sizeof(fix), "(chmod go-w %s)", ca);
	T_CHECK(chmod(ca, 0664) == 0);
	T_EQ_INT(lab_connect(&o, &l, &err), -EPERM);
	T_CHECK(has(&err, ca) && has(&err, "sslrootcert") && has(&err, "mode 0664") && has(&err, fix));
	sb_free(&err);
	/* readable by all is fine: checked, then the connection fails on the
	 * socket, and no message names the descriptor libpq was given */
	T_CHECK(chmod(ca, 0644) == 0);
	T_EQ_INT(lab_connect(&o, &l, &err), -ECONNREFUSED);
	T_CHECK(has(&err, "cannot connect") && !has(&err, "/proc/self/fd/"));
	sb_free(&err);
	/* from the environment, the URL naming none */
	snprintf(url, sizeof(url), "postgresql:///kablab?host=%s/no-socket", dir);
	T_CHECK(chmod(ca, 0646) == 0);
	setenv("PGSSLROOTCERT", ca, 1);
	T_EQ_INT(lab_connect(&o, &l, &err), -EPERM);
	T_CHECK(has(&err, ca) && has(&err, "mode 0646"));
	sb_free(&err);
	unsetenv("PGSSLROOTCERT");
	/* from a service file */
	snprintf(services, sizeof(services), "%s/pg_service.conf", dir);
	char svc[512];
	snprintf(svc, sizeof(svc), "[kabca]\nhost=%s/no-socket\ndbname=kablab\nsslrootcert=%s\n", dir, ca);
	T_EQ_INT(put_file(services, svc), 0);
	setenv("PGSERVICEFILE", services, 1);
	o.url = "service=kabca";
	T_EQ_INT(lab_connect(&o, &l, &err), -EPERM);
	T_CHECK(has(&err, ca) && has(&err, "mode 0646"));
	sb_free(&err);
	T_CHECK(chmod(ca, 0644) == 0);
	T_EQ_INT(lab_connect(&o, &l, &err), -ECONNREFUSED);
	T_CHECK(!has(&err, "/proc/self/fd/"));
	sb_free(&err);
	unsetenv("PGSERVICEFILE");
	unlink(services);
	/* missing: named */
	unlink(ca);
	snprintf(url, sizeof(url), "postgresql:///kablab?host=%s/no-socket&sslrootcert=%s", dir, ca);
	o.url = url;
	T_EQ_INT(lab_connect(&o, &l, &err), -ENOENT);
	T_CHECK(has(&err, ca) && has(&err, "No such file"));
	sb_free(&err);
}

static void test_machine_id(const char *dir)
{
	char mid[256], own[256], id[LAB_UUID_LEN + 1], again[LAB_UUID_LEN + 1];
	snprintf(mid, sizeof(mid), "%s/machine-id", dir);
	snprintf(own, sizeof(own), "%s/lab-machine-id", dir);
	struct strbuf err = { 0 };
	T_EQ_INT(put_file(mid, "0123456789abcdef0123456789abcdef\n"), 0);
	T_EQ_INT(lab_machine_id(mid, own, id, &err), 0);
	T_EQ_STR(id, "01234567-89ab-cdef-0123-456789abcdef");
	unlink(mid);
	T_EQ_INT(lab_machine_id(mid, own, id, &err), 0); /* made, 0600 */
	T_EQ_INT(lab_machine_id(mid, own, again, &err), 0);
	T_EQ_STR(again, id);
	T_CHECK(id[14] == '4');
	struct stat sb;
	T_CHECK(stat(own, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	T_EQ_INT(put_file(mid, "not-an-id\n"), 0);
	T_EQ_INT(lab_machine_id(mid, own, id, &err), -EINVAL);
	T_CHECK(has(&err, mid));
	unlink(mid);
	unlink(own);
	sb_free(&err);
}

/* ---- against tests/lab/run.sh's server ---- */

static struct {
	const char *dir, *port, *user, *password;
	char scratch[128]; /* a directory of this test's */
} pg;

static PGconn *admin(void)
{
	const char *k[] = { "host", "port", "user", "dbname", "options", NULL };
	const char *v[] = { pg.dir, pg.port, "kab_admin", "postgres", "-c client_min_messages=warning", NULL };
	PGconn *c = PQconnectdbParams(k, v, 0);
	T_CHECK(PQstatus(c) == CONNECTION_OK);
	return c;
}

/* runs sql (test set-up and checks only: kab's SQL is db/'s) on db as
 * the superuser; its first value as a number, -1 when none */
static long long admin_sql(const char *db, const char *sql)
{
	const char *k[] = { "host", "port", "user", "dbname", NULL };
	const char *v[] = { pg.dir, pg.port, "kab_admin", db, NULL };
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

/* a fresh database owned by the lab's role */
static void fresh_db(const char *name)
{
	char sql[256];
	PGconn *c = admin();
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", name);
	PQclear(PQexec(c, sql));
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s OWNER %s", name, pg.user);
	PGresult *r = PQexec(c, sql);
	T_CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	PQfinish(c);
}

static void socket_url(const char *db, char *buf, size_t len)
{
	snprintf(buf, len, "host=%s port=%s dbname=%s user=%s", pg.dir, pg.port, db, pg.user);
}

static struct lab *open_db(const char *db)
{
	char url[512];
	socket_url(db, url, sizeof(url));
	struct lab *l = NULL;
	struct strbuf err = { 0 };
	struct lab_opts o = { .url = url };
	int r = lab_open(&o, &l, &err);
	T_EQ_INT(r, 0);
	if (r < 0)
		fprintf(stderr, "  lab_open %s: %s\n", db, err.buf);
	sb_free(&err);
	return l;
}

static void test_schema(void)
{
	struct strbuf err = { 0 };
	int v = -1;
	fresh_db("t_schema");
	struct lab *l = open_db("t_schema");
	T_EQ_INT(lab_schema_version(l, &v, &err), 0);
	T_EQ_INT(v, lab_schema_latest());
	lab_close(l);
	l = open_db("t_schema"); /* a second open changes nothing */
	lab_close(l);
	T_EQ_INT(admin_sql("t_schema", "SELECT count(*) FROM lab_schema"), 1);

	/* newer than this kab: refused, both versions said */
	char sql[128], url[512], want[128];
	snprintf(sql, sizeof(sql), "UPDATE lab_schema SET version = %d", lab_schema_latest() + 1);
	admin_sql("t_schema", sql);
	socket_url("t_schema", url, sizeof(url));
	struct lab_opts o = { .url = url };
	T_EQ_INT(lab_open(&o, &l, &err), -EPROTO);
	snprintf(want, sizeof(want), "schema version %d, newer than this kab's %d", lab_schema_latest() + 1, lab_schema_latest());
	T_CHECK(has(&err, want));
	sb_free(&err);

	/* older: migrated forward, what it held kept */
	fresh_db("t_older");
	socket_url("t_older", url, sizeof(url));
	T_EQ_INT(lab_connect(&o, &l, &err), 0);
	T_EQ_INT(lab_schema_upgrade(l, 1, &err), 0);
	T_EQ_INT(lab_schema_version(l, &v, &err), 0);
	T_EQ_INT(v, 1);
	struct lab_selector any = { .cpus_max = INT64_MAX, .memory_max = INT64_MAX };
	struct lab_submit s = { .text = "[job]\nname = old\n", .selector = &any, .max_attempts = 1, .submitted_by = "t" };
	int64_t id = 0;
	T_EQ_INT(lab_submit(l, &s, &id, &err), 0);
	T_EQ_INT(admin_sql("t_older", "SELECT count(*) FROM pg_tables WHERE tablename = 'lab_runs'"), 0);
	lab_close(l);
	l = open_db("t_older");
	T_EQ_INT(lab_schema_version(l, &v, &err), 0);
	T_EQ_INT(v, lab_schema_latest());
	T_EQ_INT(admin_sql("t_older", "SELECT count(*) FROM lab_jobs WHERE text LIKE '%name = old%'"), 1);
	T_EQ_INT(admin_sql("t_older", "SELECT count(*) FROM pg_tables WHERE tablename = 'lab_runs'"), 1);
	lab_close(l);
	sb_free(&err);
}

#define M1 "11111111-1111-4111-8111-111111111111"
#define M2 "22222222-2222-4222-8222-222222222222"

static int64_t submit(struct lab *l, const char *selector, int max_attempts)
{
	struct lab_selector sel;
	struct strbuf err = { 0 };
	T_EQ_INT(lab_selector_parse(selector, &sel, &err), 0);
	struct lab_submit s = { .text = "[job]\nname = t\n", .selector = &sel, .max_attempts = max_attempts, .submitted_by = "uid 0 (root)" };
	int64_t id = 0;
	T_EQ_INT(lab_submit(l, &s, &id, &err), 0);
	if (err.buf)
		fprintf(stderr, "  submit: %s\n", err.buf);
	sb_free(&err);
	return id;
}

/* 1 and the job and attempt claimed, 0 none, else -errno */
static int claim(struct lab *l, const char *m, double lease, int64_t *job, int *attempt)
{
	struct lab_claim c = { 0 };
	struct strbuf err = { 0 };
	int r = lab_claim(l, m, lease, &c, &err);
	if (r < 0)
		fprintf(stderr, "  claim: %s\n", err.buf);
	sb_free(&err);
	if (r == 1) {
		*job = c.job;
		*attempt = c.attempt;
		T_CHECK(c.text && strstr(c.text, "[job]"));
	}
	lab_claim_free(&c);
	return r;
}

static void register_two(struct lab *l)
{
	struct strbuf err = { 0 };
	struct lab_machine a = machine(M1, "lab1", 2, "race small"), b = machine(M2, "lab2", 4, "race numa");
	T_EQ_INT(lab_register(l, &a, &err), 0);
	T_EQ_INT(lab_register(l, &b, &err), 0);
	sb_free(&err);
}

/* a fresh database, open, with lab1 and lab2 registered */
static struct lab *fresh_lab(const char *db)
{
	fresh_db(db);
	struct lab *l = open_db(db);
	if (l)
		register_two(l);
	return l;
}

static void test_register_claim(void)
{
	struct lab *l = fresh_lab("t_queue");
	struct strbuf err = { 0 };
	int renewed = -1;
	T_EQ_INT(lab_heartbeat(l, M1, LAB_MACHINE_IDLE, 60, &renewed, &err), 0);
	T_EQ_INT(renewed, 0);
	T_EQ_INT(lab_heartbeat(l, "33333333-3333-4333-8333-333333333333", LAB_MACHINE_IDLE, 60, NULL, &err), -ENOENT);
	T_CHECK(has(&err, "not registered"));
	sb_free(&err);
	struct lab_machine *v = NULL;
	size_t n = 0;
	T_EQ_INT(lab_machines(l, &v, &n, &err), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_STR(v[0].hostname, "lab1");
		T_EQ_INT(v[1].cpus, 4);
		T_EQ_INT(v[1].n_tags, 2);
		T_EQ_STR(v[1].tags[0], "numa");
		T_CHECK(v[0].heartbeat_age_s >= 0 && v[0].heartbeat_age_s < 60);
	}
	free(v);
	/* the same machine again: its new facts, still one row */
	struct lab_machine again = machine(M1, "lab1", 3, "race small");
	T_EQ_INT(lab_register(l, &again, &err), 0);
	T_EQ_INT(admin_sql("t_queue", "SELECT cpus FROM machines WHERE hostname = 'lab1'"), 3);

	/* oldest first; a job for 4 CPUs is lab2's alone, a host's its own */
	int64_t j1 = submit(l, "", 1), j2 = submit(l, "cpus>=4", 1), j3 = submit(l, "host=lab1", 1), job = 0;
	int att = 0;
	T_EQ_INT(claim(l, M1, 60, &job, &att), 1);
	T_EQ_INT(job, j1);
	T_EQ_INT(att, 1);
	T_EQ_INT(claim(l, M1, 60, &job, &att), 1);
	T_EQ_INT(job, j3);
	T_EQ_INT(claim(l, M1, 60, &job, &att), 0);
	T_EQ_INT(claim(l, M2, 60, &job, &att), 1);
	T_EQ_INT(job, j2);
	struct lab_job j;
	T_EQ_INT(lab_job_get(l, j2, &j, &err), 0);
	T_EQ_INT(j.state, LAB_JOB_RUNNING);
	T_EQ_STR(j.machine, M2);
	T_EQ_STR(j.selector, "cpus>=4");
	/* the heartbeat renews every lease the machine holds */
	T_EQ_INT(lab_heartbeat(l, M1, LAB_MACHINE_BUSY, 120, &renewed, &err), 0);
	T_EQ_INT(renewed, 2);
	/* the machines' list names the running job each holds (lab1 its newest) */
	T_EQ_INT(lab_machines(l, &v, &n, &err), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_INT(v[0].job, j3);
		T_EQ_INT(v[1].job, j2);
	}
	free(v);
	lab_close(l);
	sb_free(&err);
}

/* The claim's SQL against lab_selector_match: random submits and claims
 * on machines of every kind, each claim the oldest queued job the model
 * (the selectors matched in C) says the machine matches. */
static void test_claim_model(void)
{
	static const char *const selectors[] = {
		"",          "cpus>=4",         "cpus<=2",   "cpus=8 arch=x86_64", "arch=aarch64", "kexec",
		"cgroup=1",  "cgroup=2 kexec",  "tag=numa",  "tag=numa tag=gpu",   "memory>=16G",  "memory<16G cpus>2",
		"host=lab3", "host=lab4 kexec", "memory=8G",
	};
	enum { MACHINES = 4, OPS = 400 };
	fresh_db("t_model");
	struct lab *l = open_db("t_model");
	struct strbuf err = { 0 };
	struct lab_machine m[MACHINES] = {
		machine("a0000000-0000-4000-8000-000000000001", "lab1", 2, ""),
		machine("a0000000-0000-4000-8000-000000000002", "lab2", 4, "numa"),
		machine("a0000000-0000-4000-8000-000000000003", "lab3", 8, "numa gpu"),
		machine("a0000000-0000-4000-8000-000000000004", "lab4", 64, "gpu"),
	};
	m[1].can_kexec = m[3].can_kexec = true;
	m[0].cgroup_version = 1;
	m[2].memory = 32ULL << 30;
	snprintf(m[3].arch, sizeof(m[3].arch), "aarch64");
	for (int i = 0; i < MACHINES; i++)
		T_EQ_INT(lab_register(l, &m[i], &err), 0);
	struct {
		int64_t id;
		struct lab_selector sel;
	} queued[OPS];
	size_t n = 0;
	int claims = 0, mismatches = 0;
	srand(28);
	for (int op = 0; op < OPS; op++) {
		if (n == 0 || rand() % 2) {
			const char *text = selectors[(size_t)rand() % ARRAY_SIZE(selectors)];
			T_EQ_INT(lab_selector_parse(text, &queued[n].sel, &err), 0);
			queued[n++].id = submit(l, text, 1);
			continue;
		}
		int k = rand() % MACHINES;
		size_t want = n;
		for (size_t i = 0; i < n && want == n; i++)
			if (lab_selector_match(&queued[i].sel, &m[k], NULL))
				want = i;
		int64_t job = 0;
		int att = 0, r = claim(l, m[k].id, 60, &job, &att);
		bool same = want == n ? r == 0 : r == 1 && job == queued[want].id;
		mismatches += !same;
		if (!same)
			fprintf(stderr, "  %s: claimed %lld (%d), the model says %lld\n", m[k].hostname, (long long)job,
				r, want == n ? 0LL : (long long)queued[want].id);
		if (want < n) {
			claims++;
			memmove(&queued[want], &queued[want + 1], (n - want - 1) * sizeof(queued[0]));
			n--;
		}
	}
	T_EQ_INT(mismatches, 0);
	T_CHECK(claims > 50);
	printf("  model: %d operations, %d claims as lab_selector_match says, %zu jobs left queued\n", OPS, claims, n);
	lab_close(l);
	sb_free(&err);
}

/* ---- two machines claiming at once ---- */

struct racer {
	struct lab *l;
	const char *machine;
	pthread_barrier_t *start, *done;
	int trials;
	int64_t *got; /* per trial: the job claimed, 0 none, -1 an error */
};

static void *race(void *arg)
{
	struct racer *r = arg;
	for (int t = 0; t < r->trials; t++) {
		pthread_barrier_wait(r->start);
		struct lab_claim c = { 0 };
		int k = lab_claim(r->l, r->machine, 60, &c, NULL);
		r->got[t] = k == 1 ? c.job : k == 0 ? 0 : -1;
		lab_claim_free(&c);
		pthread_barrier_wait(r->done);
	}
	return NULL;
}

static void test_race(void)
{
	enum { TRIALS = 1000 };
	struct lab *l = fresh_lab("t_race"), *a = open_db("t_race"), *b = open_db("t_race");
	if (!l || !a || !b)
		return;
	pthread_barrier_t start, done;
	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	static int64_t got_a[TRIALS], got_b[TRIALS];
	struct racer ra = { a, M1, &start, &done, TRIALS, got_a }, rb = { b, M2, &start, &done, TRIALS, got_b };
	pthread_t ta, tb;
	pthread_create(&ta, NULL, race, &ra);
	pthread_create(&tb, NULL, race, &rb);
	int distinct = 0, single = 0, errors = 0;
	for (int t = 0; t < TRIALS; t++) {
		/* odd trials: one job for two claimers; even: two */
		int64_t x = submit(l, "tag=race", 1), y = t % 2 ? 0 : submit(l, "tag=race", 1);
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		errors += got_a[t] < 0 || got_b[t] < 0;
		if (y)
			distinct += got_a[t] && got_b[t] && got_a[t] != got_b[t] && (got_a[t] == x || got_a[t] == y) &&
				    (got_b[t] == x || got_b[t] == y);
		else
			single += (got_a[t] == x) != (got_b[t] == x) && (got_a[t] == 0 || got_b[t] == 0);
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	T_EQ_INT(errors, 0);
	T_EQ_INT(distinct, TRIALS / 2);
	T_EQ_INT(single, TRIALS / 2);
	/* every job claimed once, by one attempt */
	T_EQ_INT(admin_sql("t_race", "SELECT count(*) FROM lab_jobs WHERE state = 'running' AND attempts = 1"), TRIALS / 2 * 3);
	T_EQ_INT(admin_sql("t_race", "SELECT count(*) FROM lab_attempts"), TRIALS / 2 * 3);
	printf("  race: %d trials, two machines claiming at once: %d of two jobs each got one, %d of one job one "
	       "got it\n",
	       TRIALS, distinct, single);
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&done);
	lab_close(a);
	lab_close(b);
	lab_close(l);
}

/* lab_rescue until it rescues a job, at most 10 s: the lease's end is the event */
static int rescue_one(struct lab *l)
{
	struct strbuf err = { 0 };
	double deadline = util_mono_now() + 10;
	int n = 0;
	while (n == 0 && util_mono_now() < deadline) {
		T_EQ_INT(lab_rescue(l, &n, &err), 0);
		if (n == 0)
			usleep(20 * 1000);
	}
	sb_free(&err);
	return n;
}

static void test_leases(void)
{
	struct lab *l = fresh_lab("t_lease");
	struct strbuf err = { 0 };
	int64_t id = submit(l, "tag=race", 2), job = 0;
	int att = 0, n = -1;
	T_EQ_INT(claim(l, M1, 0.2, &job, &att), 1);
	T_EQ_INT(rescue_one(l), 1);
	struct lab_job j;
	T_EQ_INT(lab_job_get(l, id, &j, &err), 0);
	T_EQ_INT(j.state, LAB_JOB_QUEUED);
	T_EQ_INT(j.attempts, 1);
	T_EQ_STR(j.machine, "");
	T_CHECK(strstr(j.reason, "attempt 1 of 2 lost: the lease of lab1 expired") != NULL);
	enum lab_attempt_outcome o;
	char who[LAB_UUID_LEN + 1];
	T_EQ_INT(lab_attempt_get(l, id, 1, &o, who, &err), 0);
	T_EQ_INT(o, LAB_ATTEMPT_LOST);
	T_EQ_STR(who, M1);
	/* the lost machine's late renew and finish change nothing */
	T_EQ_INT(lab_renew(l, M1, id, 1, 60, &err), -ESTALE);
	T_EQ_INT(lab_finish(l, M1, id, 1, LAB_ATTEMPT_DONE, NULL, &err), -ESTALE);
	T_CHECK(has(&err, "was lost"));
	sb_free(&err);
	/* the job whole to the other machine, attempt 2; lost too: no attempts left */
	T_EQ_INT(claim(l, M2, 0.2, &job, &att), 1);
	T_EQ_INT(job, id);
	T_EQ_INT(att, 2);
	T_EQ_INT(rescue_one(l), 1);
	T_EQ_INT(lab_job_get(l, id, &j, &err), 0);
	T_EQ_INT(j.state, LAB_JOB_FAILED);
	T_CHECK(strstr(j.reason, "attempt 2 of 2 lost") && strstr(j.reason, "no attempts left"));
	T_EQ_INT(admin_sql("t_lease", "SELECT count(*) FROM lab_attempts WHERE outcome = 'lost'"), 2);
	T_EQ_INT(claim(l, M1, 60, &job, &att), 0);

	/* a lease the heartbeat keeps renewing is not rescued */
	id = submit(l, "tag=race", 2);
	T_EQ_INT(claim(l, M1, 0.3, &job, &att), 1);
	T_EQ_INT(lab_heartbeat(l, M1, LAB_MACHINE_BUSY, 60, &n, &err), 0);
	T_EQ_INT(n, 1);
	T_EQ_INT(lab_renew(l, M1, id, 1, 60, &err), 0);
	usleep(400 * 1000);
	T_EQ_INT(lab_rescue(l, &n, &err), 0);
	T_EQ_INT(n, 0);

	/* finish: once, then a repeat changes nothing */
	T_EQ_INT(lab_finish(l, M1, id, 1, LAB_ATTEMPT_DONE, NULL, &err), 1);
	T_EQ_INT(lab_finish(l, M1, id, 1, LAB_ATTEMPT_DONE, NULL, &err), 0);
	T_EQ_INT(lab_finish(l, M1, id, 1, LAB_ATTEMPT_FAILED, "late", &err), 0);
	T_EQ_INT(lab_job_get(l, id, &j, &err), 0);
	T_EQ_INT(j.state, LAB_JOB_DONE);
	T_EQ_INT(lab_attempt_get(l, id, 1, &o, NULL, &err), 0);
	T_EQ_INT(o, LAB_ATTEMPT_DONE);
	T_EQ_INT(lab_finish(l, M2, id, 1, LAB_ATTEMPT_DONE, NULL, &err), -ENOENT); /* not its attempt */
	lab_close(l);
	sb_free(&err);
}

static void test_uploads(void)
{
	struct lab *l = fresh_lab("t_upload");
	struct strbuf err = { 0 };
	int64_t id = submit(l, "host=lab1", 1), job = 0;
	int att = 0;
	T_EQ_INT(claim(l, M1, 600, &job, &att), 1); /* attempt 1 is lab1's */
	T_EQ_INT(job, id);
	struct lab_upload u = { .kind = LAB_UPLOAD_RUN,
				.id = "aaaaaaaa-0000-4000-8000-000000000001",
				.machine = M1,
				.job = id,
				.attempt = 1,
				.status = "ok",
				.data = "{\"v\": 1}" };
	T_EQ_INT(lab_upload(l, &u, &err), 0);
	T_EQ_INT(lab_upload(l, &u, &err), 0); /* the same run again: one row */
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_runs"), 1);
	/* another machine's upload with the same id: refused, the row as it was */
	struct lab_upload other = u;
	snprintf(other.machine, sizeof(other.machine), "%s", M2);
	other.data = "{\"v\": 2}";
	T_EQ_INT(lab_upload(l, &other, &err), -EPERM);
	T_CHECK(has(&err, "ran on machine " M1 " (lab1), not on this one (" M2 ")") && has(&err, "not written"));
	sb_free(&err);
	T_EQ_INT(admin_sql("t_upload", "SELECT (data->>'v')::int FROM lab_runs"), 1);
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_runs WHERE machine = '" M1 "'"), 1);
	/* boots, builds, a job's state likewise */
	for (int k = LAB_UPLOAD_BOOT; k <= LAB_UPLOAD_JOB_STATE; k++) {
		struct lab_upload w = u;
		w.kind = (enum lab_upload_kind)k;
		T_EQ_INT(lab_upload(l, &w, &err), 0);
		T_EQ_INT(lab_upload(l, &w, &err), 0);
		snprintf(w.machine, sizeof(w.machine), "%s", M2);
		T_EQ_INT(lab_upload(l, &w, &err), -EPERM);
		T_CHECK(has(&err, "ran on machine " M1));
		sb_free(&err);
	}
	T_EQ_INT(admin_sql("t_upload", "SELECT (SELECT count(*) FROM lab_boots) + (SELECT count(*) FROM lab_builds)"
				       " + (SELECT count(*) FROM lab_job_states)"),
		 3);
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_job_states WHERE machine = '" M1 "'"), 1);

	/* First writes under another machine's attempt: lab2 uploads a run,
	 * boot and build of new ids, and the job state, under lab1's job and
	 * attempt before lab1 sends its own: each refused naming lab1, nothing
	 * written; then lab1's own go in. */
	int64_t id2 = submit(l, "host=lab1", 1);
	T_EQ_INT(claim(l, M1, 600, &job, &att), 1);
	T_EQ_INT(job, id2);
	static const char *const fresh[] = { "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000003",
					     "aaaaaaaa-0000-4000-8000-000000000004", "" };
	for (int k = LAB_UPLOAD_RUN; k <= LAB_UPLOAD_JOB_STATE; k++) {
		struct lab_upload w = {
			.kind = (enum lab_upload_kind)k, .machine = M2, .job = id2, .attempt = 1, .status = "ok", .data = "{\"by\": \"lab2\"}"
		};
		snprintf(w.id, sizeof(w.id), "%s", fresh[k]);
		T_EQ_INT(lab_upload(l, &w, &err), -EPERM);
		T_CHECK(has(&err, "attempt 1 of job") && has(&err, "ran on machine " M1 " (lab1), not on this one (" M2 ")"));
		sb_free(&err);
		/* an attempt the lab does not have: -ENOENT, nothing written */
		w.attempt = 2;
		T_EQ_INT(lab_upload(l, &w, &err), -ENOENT);
		T_CHECK(has(&err, "has no attempt 2 in the lab"));
		sb_free(&err);
		/* no job at all */
		w.job = 0;
		T_EQ_INT(lab_upload(l, &w, &err), -EINVAL);
		sb_free(&err);
	}
	T_EQ_INT(admin_sql("t_upload", "SELECT (SELECT count(*) FROM lab_runs) + (SELECT count(*) FROM lab_boots)"
				       " + (SELECT count(*) FROM lab_builds) + (SELECT count(*) FROM lab_job_states)"),
		 4);
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_runs WHERE data ? 'by'"), 0);
	for (int k = LAB_UPLOAD_RUN; k <= LAB_UPLOAD_JOB_STATE; k++) {
		struct lab_upload w = { .kind = (enum lab_upload_kind)k, .machine = M1, .job = id2, .attempt = 1, .status = "ok" };
		snprintf(w.id, sizeof(w.id), "%s", fresh[k]);
		T_EQ_INT(lab_upload(l, &w, &err), 0);
	}
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_job_states WHERE machine = '" M1 "'"), 2);
	T_EQ_INT(admin_sql("t_upload", "SELECT (SELECT count(*) FROM lab_runs) + (SELECT count(*) FROM lab_boots)"
				       " + (SELECT count(*) FROM lab_builds)"),
		 6);
	/* lab1's own run moved to an attempt of lab2's: refused, the row
	 * still under lab1's attempt */
	int64_t id3 = submit(l, "host=lab2", 1);
	T_EQ_INT(claim(l, M2, 600, &job, &att), 1);
	T_EQ_INT(job, id3);
	u.job = id3;
	T_EQ_INT(lab_upload(l, &u, &err), -EPERM);
	T_CHECK(has(&err, "ran on machine " M2 " (lab2)"));
	sb_free(&err);
	T_EQ_INT(admin_sql("t_upload", "SELECT count(*) FROM lab_runs WHERE job = (SELECT min(id) FROM lab_jobs)"), 1);
	lab_close(l);
	sb_free(&err);
}

/* ---- nights, and the view Otava reads ---- */

#define DAY 86400.0
#define T0 1767225600.0 /* 2026-01-01 00:00:00 UTC */

/* a lab job for one host, claimed by that machine: its attempt 1 */
static int64_t night_job(struct lab *l, const char *machine, const char *host, double lease_s)
{
	char sel[64];
	snprintf(sel, sizeof(sel), "host=%s", host);
	int64_t id = submit(l, sel, 1), job = 0;
	int att = 0;
	T_EQ_INT(claim(l, machine, lease_s, &job, &att), 1);
	T_EQ_INT(job, id);
	return id;
}

static struct store_history_row hrow(const char *metric, const char *direction, double est, double median)
{
	struct store_history_row r = { .variant = 1,
				       .pairs = 5,
				       .estimate_pct = est,
				       .ci_lo_pct = est - 1,
				       .ci_hi_pct = est + 1,
				       .p = 0.03,
				       .median_base = 100,
				       .median_variant = median,
				       .primary = true };
	snprintf(r.workload, sizeof(r.workload), "stress-vm");
	snprintf(r.metric, sizeof(r.metric), "%s", metric);
	snprintf(r.variant_name, sizeof(r.variant_name), "head");
	snprintf(r.base_name, sizeof(r.base_name), "base");
	snprintf(r.verdict, sizeof(r.verdict), "undecided");
	snprintf(r.unit, sizeof(r.unit), "ops/s");
	snprintf(r.direction, sizeof(r.direction), "%s", direction);
	return r;
}

#define BOGO "stress-ng.bogo_ops_per_s"
#define WALL "time.wall_s"

struct night_in {
	const char *machine, *name, *sha; /* sha NULL: no variant tracks a branch */
	int64_t job;
	enum job_status status;
	double start, committed;
	const struct store_history_row *rows;
	size_t n;
};

static int put_night(struct lab *l, const struct night_in *in, struct strbuf *err)
{
	struct store_history_night hn = { .night = in->start, .status = in->status, .runs = 10 };
	if (in->sha) {
		hn.n_commits = 1;
		hn.commits[0] = (struct store_history_commit){ .variant = 1, .date = in->committed };
		snprintf(hn.commits[0].track, sizeof(hn.commits[0].track), "origin mm-unstable");
		snprintf(hn.commits[0].sha, sizeof(hn.commits[0].sha), "%s", in->sha);
		snprintf(hn.commits[0].subject, sizeof(hn.commits[0].subject), "mm: the night of %s", in->sha);
	}
	struct lab_night n = {
		.job = in->job, .attempt = 1, .name = in->name ? in->name : "nightly-mm", .night = &hn, .rows = in->rows, .n_rows = in->n
	};
	snprintf(n.machine, sizeof(n.machine), "%s", in->machine);
	return lab_night_put(l, &n, err);
}

static void put_ok(struct lab *l, const struct night_in *in)
{
	struct strbuf err = { 0 };
	int r = put_night(l, in, &err);
	T_EQ_INT(r, 0);
	if (r < 0)
		fprintf(stderr, "  the night of job %lld: %s\n", (long long)in->job, err.buf ? err.buf : "");
	sb_free(&err);
}

/* An Otava test as doc/lab.md's example otava.yaml writes it: the
 * columns its importer looks up by name, and the query it sends. */
struct otava_test {
	char name[128], time_column[64], query[4096];
	char attributes[8][64], metrics[8][64]; /* metrics: their columns */
	size_t n_attributes, n_metrics;
};

static size_t indent(const char *s)
{
	size_t i = 0;
	while (s[i] == ' ')
		i++;
	return i;
}

/* "key: value" at this indentation: value, or NULL */
static const char *yaml_key(const char *line, size_t at, const char *key)
{
	size_t n = strlen(key);
	if (indent(line) != at || strncmp(line + at, key, n) != 0 || line[at + n] != ':')
		return NULL;
	return line + at + n + 1 + (line[at + n + 1] == ' ');
}

/* The tests of the otava.yaml blocks of path, as far as these fields go
 * (no templates, no anchors: the page's example uses none). */
static size_t doc_otava_tests(const char *path, struct otava_test *t, size_t max)
{
	FILE *f = fopen(path, "r");
	T_CHECK(f != NULL);
	if (!f)
		return 0;
	char line[1024];
	size_t n = 0;
	bool yaml = false, tests = false, metrics = false, query = false;
	struct otava_test *c = NULL;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *v;
		if (!yaml) {
			yaml = strcmp(line, "```yaml") == 0;
			tests = false;
			continue;
		}
		if (strcmp(line, "```") == 0) {
			yaml = false;
			continue;
		}
		if (!*line) {
			query = false;
			continue;
		}
		if (query && indent(line) >= 6) {
			snprintf(c->query + strlen(c->query), sizeof(c->query) - strlen(c->query), "%s\n", line + 6);
			continue;
		}
		query = false;
		if (indent(line) == 0) {
			tests = strcmp(line, "tests:") == 0;
			continue;
		}
		if (!tests)
			continue;
		if (indent(line) == 2 && n < max) {
			c = &t[n++];
			memset(c, 0, sizeof(*c));
			snprintf(c->name, sizeof(c->name), "%.*s", (int)strcspn(line + 2, ":"), line + 2);
			metrics = false;
		} else if (!c)
			continue;
		else if ((v = yaml_key(line, 4, "time_column")))
			snprintf(c->time_column, sizeof(c->time_column), "%s", v);
		else if ((v = yaml_key(line, 4, "attributes")) && *v == '[') {
			for (v++; *v && *v != ']' && c->n_attributes < 8; v += strspn(v, ", ")) {
				size_t k = strcspn(v, ", ]");
				snprintf(c->attributes[c->n_attributes++], 64, "%.*s", (int)k, v);
				v += k;
			}
		} else if (yaml_key(line, 4, "metrics"))
			metrics = true;
		else if (yaml_key(line, 4, "query"))
			query = true;
		else if (indent(line) == 4)
			metrics = false;
		else if (metrics && indent(line) == 6 && c->n_metrics < 8)
			snprintf(c->metrics[c->n_metrics++], 64, "%.*s", (int)strcspn(line + 6, ":"), line + 6);
		else if (metrics && (v = yaml_key(line, 8, "column")) && c->n_metrics)
			snprintf(c->metrics[c->n_metrics - 1], 64, "%s", v);
	}
	fclose(f);
	return n;
}

/* one row of an expected series: the metric columns' values in the order
 * the test names them, the commit (NULL: none) */
struct want_row {
	double m[2];
	const char *commit;
};

/* Runs the test's query as Otava would (the read-only role, the columns
 * by name) and checks what Otava takes of it: a timestamptz time, in
 * order; numbers in every metric column, never NULL; every attribute;
 * the one machine; the rows wanted. */
static void otava_query(PGconn *c, const struct otava_test *t, const char *host, const struct want_row *want, size_t n)
{
	PGresult *r = PQexec(c, t->query);
	T_CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "  %s: %s\n", t->name, PQerrorMessage(c));
		PQclear(r);
		return;
	}
	int tc = PQfnumber(r, t->time_column), mc = PQfnumber(r, "machine"), cc = PQfnumber(r, "commit"), m[8];
	T_CHECK(tc >= 0 && mc >= 0 && cc >= 0);
	T_EQ_INT(PQftype(r, tc), 1184); /* timestamptz: Otava compares it with aware times */
	for (size_t a = 0; a < t->n_attributes; a++)
		T_CHECK(PQfnumber(r, t->attributes[a]) >= 0);
	for (size_t k = 0; k < t->n_metrics; k++) {
		m[k] = PQfnumber(r, t->metrics[k]);
		T_CHECK(m[k] >= 0 && PQftype(r, m[k]) == 701); /* float8 */
	}
	T_EQ_INT(PQntuples(r), (int)n);
	if (tc < 0 || mc < 0 || cc < 0 || PQntuples(r) != (int)n || t->n_metrics > 2) {
		PQclear(r);
		return;
	}
	for (int i = 0; i < (int)n; i++) {
		T_EQ_STR(PQgetvalue(r, i, mc), host);
		/* the session is in UTC: the text orders as the time */
		if (i)
			T_CHECK(strcmp(PQgetvalue(r, i - 1, tc), PQgetvalue(r, i, tc)) <= 0);
		for (size_t k = 0; k < t->n_metrics; k++) {
			T_CHECK(!PQgetisnull(r, i, m[k]));
			double got = strtod(PQgetvalue(r, i, m[k]), NULL);
			T_CHECK(fabs(got - want[i].m[k]) < 1e-9);
			if (fabs(got - want[i].m[k]) >= 1e-9)
				fprintf(stderr, "  %s row %d %s: %.12g, not %.12g\n", t->name, i, t->metrics[k], got,
					want[i].m[k]);
		}
		if (want[i].commit)
			T_EQ_STR(PQgetvalue(r, i, cc), want[i].commit);
		else
			T_CHECK(PQgetisnull(r, i, cc));
	}
	PQclear(r);
}

static void test_nights(void)
{
	struct lab *l = fresh_lab("t_nights");
	if (!l)
		return;
	struct strbuf err = { 0 };
	char sha[8][16];
	/* lab1: six nights; night 3 follows no branch (its time is its start),
	 * night 4 ran a commit older than night 1's (a force-push back) */
	static const int lab1_order[] = { 0, 4, 1, 2, 3, 5 };
	struct store_history_row r1[6][2], r2[4][2];
	int64_t j1[6], j2[4];
	for (int i = 0; i < 6; i++) {
		j1[i] = night_job(l, M1, "lab1", 60);
		if (i < 4)
			j2[i] = night_job(l, M2, "lab2", 60);
	}
	for (int i = 5; i >= 0; i--) { /* uploaded out of order: the view's order is the query's */
		snprintf(sha[i], sizeof(sha[i]), "c1%04d", i);
		r1[i][0] = hrow(BOGO, "higher", 1.0 + i, 1000 + i);
		r1[i][1] = hrow(WALL, "lower", -(double)i, 50 - i);
		struct night_in in = { .machine = M1,
				       .sha = i == 3 ? NULL : sha[i],
				       .job = j1[i],
				       .status = JOB_DONE,
				       .start = T0 + i * DAY + 7200,
				       .committed = i == 4 ? T0 + DAY / 2 : T0 + i * DAY - 10800,
				       .rows = r1[i],
				       .n = 2 };
		put_ok(l, &in);
		put_ok(l, &in); /* a repeat: the same night */
	}
	/* lab2: four nights of the same job name; night 2 measured no wall time */
	for (int i = 0; i < 4; i++) {
		r2[i][0] = hrow(BOGO, "higher", -10.0 - i, 2000 + i);
		r2[i][1] = hrow(WALL, "lower", 2.0 + i, 60 + i);
		char s2[16];
		snprintf(s2, sizeof(s2), "c2%04d", i);
		struct night_in in = { .machine = M2,
				       .sha = s2,
				       .job = j2[i],
				       .status = JOB_DONE,
				       .start = T0 + i * DAY + 3600,
				       .committed = T0 + i * DAY - 3600,
				       .rows = r2[i],
				       .n = i == 2 ? 1 : 2 };
		put_ok(l, &in);
	}
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM lab_nights"), 10);
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM lab_night_rows"), 19);
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM lab_night_commits"), 9);

	/* night 0 again, changed: its estimate, and only one row now */
	struct store_history_row again = hrow(BOGO, "higher", 1.5, 1000);
	struct night_in in0 = { M1, NULL, sha[0], j1[0], JOB_DONE, T0 + 7200, T0 - 10800, &again, 1 };
	put_ok(l, &in0);
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM lab_night_rows"), 18);

	/* what the view leaves out, all lab1's nightly-mm */
	struct store_history_row nan_row[2] = { hrow(BOGO, "higher", NAN, 1000), hrow(WALL, "lower", 1, 50) };
	struct store_history_row other = hrow(BOGO, "higher", 9, 9);
	snprintf(other.variant_name, sizeof(other.variant_name), "other");
	other.variant = 2;
	struct night_in out[] = {
		{ M1, NULL, "f", night_job(l, M1, "lab1", 60), JOB_FAILED, T0 + 10 * DAY, T0 + 10 * DAY, r1[1], 2 },
		{ M1, NULL, "e", night_job(l, M1, "lab1", 60), JOB_DONE, T0 + 11 * DAY, T0 + 11 * DAY, NULL, 0 },
		{ M1, NULL, "n", night_job(l, M1, "lab1", 60), JOB_DONE, T0 + 12 * DAY, T0 + 12 * DAY, nan_row, 2 },
		{ M1, "nightly-other", "o", night_job(l, M1, "lab1", 60), JOB_DONE, T0 + 13 * DAY, T0 + 13 * DAY, r1[2], 2 },
		{ M1, NULL, "v", night_job(l, M1, "lab1", 60), JOB_DONE, T0 + 14 * DAY, T0 + 14 * DAY, &other, 1 },
		{ M1, NULL, "l", night_job(l, M1, "lab1", 0.2), JOB_DONE, T0 + 15 * DAY, T0 + 15 * DAY, r1[3], 2 },
	};
	T_EQ_INT(rescue_one(l), 1); /* the last one's attempt is lost */
	for (size_t i = 0; i < ARRAY_SIZE(out); i++)
		put_ok(l, &out[i]);
	/* lab1's six, and the other variant's night */
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM otava_nights WHERE job_name = 'nightly-mm'"
				       "  AND machine = 'lab1' AND metric = '" BOGO "'"),
		 6 + 1);
	/* after them: the wall time of the night without a bogo ops estimate,
	 * the other name's two, the other variant's */
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM otava_nights WHERE time >= '2026-01-10'"), 4);

	/* refused: another machine's attempt, an attempt the lab does not
	 * have, a bad row; a night the server refuses rolls back whole */
	struct night_in bad = in0;
	bad.machine = M2;
	T_EQ_INT(put_night(l, &bad, &err), -EPERM);
	T_CHECK(has(&err, "ran on machine " M1 " (lab1)") && has(&err, "not written"));
	sb_free(&err);
	bad = in0;
	bad.job = 999999;
	T_EQ_INT(put_night(l, &bad, &err), -ENOENT);
	T_CHECK(has(&err, "job 999999 has no attempt 1"));
	sb_free(&err);
	struct store_history_row no_metric = hrow("", "higher", 1, 1);
	bad = in0;
	bad.rows = &no_metric;
	T_EQ_INT(put_night(l, &bad, &err), -EINVAL);
	T_CHECK(has(&err, "row 0") && has(&err, "needs a workload, a metric"));
	sb_free(&err);
	struct store_history_row twice[2] = { again, again };
	bad = in0;
	bad.rows = twice;
	bad.n = 2;
	bad.start = T0;
	T_CHECK(put_night(l, &bad, &err) < 0);
	T_CHECK(has(&err, "writing a night's rows"));
	sb_free(&err);
	T_EQ_INT(admin_sql("t_nights", "SELECT count(*) FROM lab_night_rows r JOIN lab_nights n USING (job, attempt)"
				       "  WHERE n.night = to_timestamp(1767232800) AND r.estimate_pct = 1.5"),
		 1);

	/* the page's queries, as a role that may read the view alone */
	admin_sql("t_nights", "DO $$BEGIN CREATE ROLE otava LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$");
	admin_sql("t_nights", "GRANT SELECT ON otava_nights TO otava");
	const char *k[] = { "host", "port", "user", "dbname", "options", NULL };
	const char *v[] = { pg.dir, pg.port, "otava", "t_nights", "-c TimeZone=UTC", NULL };
	PGconn *c = PQconnectdbParams(k, v, 0);
	T_CHECK(PQstatus(c) == CONNECTION_OK);
	PGresult *denied = PQexec(c, "SELECT count(*) FROM lab_jobs");
	T_CHECK(PQresultStatus(denied) == PGRES_FATAL_ERROR);
	PQclear(denied);
	struct otava_test t[4];
	size_t n = doc_otava_tests("doc/lab.md", t, ARRAY_SIZE(t)), ran = 0;
	T_EQ_INT(n, 2);
	struct want_row w1[6], w2[3];
	for (int i = 0; i < 6; i++) {
		int night = lab1_order[i];
		w1[i] = (struct want_row){ { 1 + (night ? 1.0 + night : 1.5) / 100, 1000.0 + night },
					   night == 3 ? NULL : sha[night] };
	}
	static const int lab2_nights[] = { 0, 1, 3 }; /* night 2 lacks the wall time */
	char s2[3][16];
	for (int i = 0; i < 3; i++) {
		int night = lab2_nights[i];
		snprintf(s2[i], sizeof(s2[i]), "c2%04d", night);
		w2[i] = (struct want_row){ { 1 + (-10.0 - night) / 100, 1 + (2.0 + night) / 100 }, s2[i] };
	}
	for (size_t i = 0; i < n; i++) {
		if (strstr(t[i].name, "lab1.") == t[i].name)
			otava_query(c, &t[i], "lab1", w1, 6), ran++;
		else if (strstr(t[i].name, "lab2.") == t[i].name)
			otava_query(c, &t[i], "lab2", w2, 3), ran++;
	}
	T_EQ_INT(ran, 2);
	printf("  otava: %zu tests of doc/lab.md's otava.yaml queried as a read-only role\n", ran);
	PQfinish(c);
	lab_close(l);
	sb_free(&err);
}

static void test_why(void)
{
	fresh_db("t_why");
	struct lab *l = open_db("t_why");
	struct strbuf err = { 0 }, out = { 0 };
	int64_t id = submit(l, "cpus>=64 arch=x86_64", 1), job;
	T_EQ_INT(lab_job_why(l, id, &out, &err), 0);
	T_CHECK(has(&out, "no machine is registered"));
	sb_free(&out);
	register_two(l);
	int att;
	T_EQ_INT(claim(l, M1, 60, &job, &att), 0);
	T_EQ_INT(claim(l, M2, 60, &job, &att), 0);
	T_EQ_INT(lab_job_why(l, id, &out, &err), 0);
	T_CHECK(has(&out, "queued for arch=x86_64 cpus>=64") && has(&out, "no machine of the 2 registered matches"));
	T_CHECK(has(&out, "lab1: cpus>=64: it has 2") && has(&out, "lab2: cpus>=64: it has 4"));
	sb_free(&out);
	int64_t any = submit(l, "tag=numa", 1);
	T_EQ_INT(lab_job_why(l, any, &out, &err), 0);
	T_CHECK(has(&out, "1 of the 2 registered machines match") && has(&out, "lab2: matches (idle"));
	T_CHECK(has(&out, "lab1: tag=numa: it has no such tag"));
	sb_free(&out);
	T_EQ_INT(claim(l, M2, 60, &job, &att), 1);
	T_EQ_INT(lab_job_why(l, any, &out, &err), 0);
	T_CHECK(has(&out, "is running, not waiting"));
	sb_free(&out);
	lab_close(l);
	sb_free(&err);
}

static void test_notify(void)
{
	fresh_db("t_notify");
	struct lab *idle = open_db("t_notify"), *l = open_db("t_notify");
	struct strbuf err = { 0 };
	T_EQ_INT(lab_wait(idle, 0.1, &err), -EINVAL); /* not listening */
	T_EQ_INT(lab_listen(idle, &err), 0);
	double t0 = util_mono_now();
	T_EQ_INT(lab_wait(idle, 0.2, &err), 0);
	T_CHECK(util_mono_now() - t0 >= 0.19);
	submit(l, "", 1);
	t0 = util_mono_now();
	T_EQ_INT(lab_wait(idle, 10, &err), 1);
	T_CHECK(util_mono_now() - t0 < 2);
	T_EQ_INT(lab_wait(idle, 0.05, &err), 0); /* consumed */
	lab_close(idle);
	lab_close(l);
	sb_free(&err);
}

static void test_bad_connections(void)
{
	struct strbuf err = { 0 };
	struct lab *l = NULL;
	char url[512], pass[256];
	/* a port where nothing listens: said at once, with where */
	snprintf(url, sizeof(url), "postgresql://%s@127.0.0.1:1/kablab", pg.user); /* tcpmux: nobody's */
	struct lab_opts o = { .url = url, .timeout_s = 5 };
	double t0 = util_mono_now();
	T_EQ_INT(lab_open(&o, &l, &err), -ECONNREFUSED);
	T_CHECK(util_mono_now() - t0 < 2);
	T_CHECK(has(&err, "127.0.0.1") && has(&err, "cannot connect"));
	sb_free(&err);

	/* over TCP with a password file: the right password, then a wrong one */
	snprintf(pass, sizeof(pass), "%s/lab.pgpass", pg.scratch);
	char line[256];
	snprintf(line, sizeof(line), "127.0.0.1:%s:kablab:%s:%s\n", pg.port, pg.user, pg.password);
	T_EQ_INT(put_file(pass, line), 0);
	T_CHECK(chmod(pass, 0600) == 0);
	snprintf(url, sizeof(url), "postgresql://%s@127.0.0.1:%s/kablab", pg.user, pg.port);
	o = (struct lab_opts){ .url = url, .credentials = pass };
	int r = lab_open(&o, &l, &err);
	T_EQ_INT(r, 0);
	if (r < 0)
		fprintf(stderr, "  %s\n", err.buf);
	lab_close(l);
	snprintf(line, sizeof(line), "127.0.0.1:%s:kablab:%s:wrong\n", pg.port, pg.user);
	T_EQ_INT(put_file(pass, line), 0);
	T_EQ_INT(lab_open(&o, &l, &err), -ECONNREFUSED);
	T_CHECK(has(&err, "password authentication failed"));
	/* libpq read it as /proc/self/fd/N (the file kab checked): named by its name */
	T_CHECK(!has(&err, "/proc/self/fd/") && has(&err, pass));
	sb_free(&err);
	/* readable by others: refused before connecting, the file named */
	T_CHECK(chmod(pass, 0644) == 0);
	T_EQ_INT(lab_open(&o, &l, &err), -EPERM);
	T_CHECK(has(&err, pass) && has(&err, "mode 0644"));
	sb_free(&err);
	unlink(pass);
	/* an address that does not answer: given up at the timeout (or at once
	 * when there is no route), not hung on */
	o = (struct lab_opts){ .url = "postgresql://kab@10.255.255.1/kablab?sslmode=verify-full", .timeout_s = 1 };
	t0 = util_mono_now();
	r = lab_open(&o, &l, &err);
	T_CHECK(r == -ETIMEDOUT || r == -ECONNREFUSED);
	T_CHECK(util_mono_now() - t0 < 2.5);
	T_CHECK(has(&err, "lab 10.255.255.1:") && (has(&err, "no answer within 1 s") || has(&err, "cannot connect")));
	sb_free(&err);
	/* what a service file gives is checked as a URL is */
	char services[256];
	snprintf(services, sizeof(services), "%s/pg_service.conf", pg.scratch);
	T_EQ_INT(put_file(services, "[kabtest]\nhost=10.255.255.1\ndbname=kablab\n"), 0);
	setenv("PGSERVICEFILE", services, 1);
	o = (struct lab_opts){ .url = "service=kabtest" };
	t0 = util_mono_now();
	T_EQ_INT(lab_open(&o, &l, &err), -EINVAL);
	T_CHECK(util_mono_now() - t0 < 1);
	T_CHECK(has(&err, "with its service file") && has(&err, "10.255.255.1 is not local"));
	sb_free(&err);
	unsetenv("PGSERVICEFILE");
	unlink(services);
	/* a host that is not local without verify-full: refused, no network */
	o = (struct lab_opts){ .url = "postgresql://kab@db.invalid/kablab" };
	T_EQ_INT(lab_open(&o, &l, &err), -EINVAL);
	T_CHECK(has(&err, "sslmode=verify-full"));
	sb_free(&err);
}

/* ---- lab-wide reads ---- */

#define M3 "33333333-3333-4333-8333-333333333333"

struct src_ctx {
	struct lab *l;
	const char *machine;
};

static int t_nights(void *ctx, const char *name, struct store_history_night **ret, size_t *ret_n)
{
	struct src_ctx *s = ctx;
	struct strbuf err = { 0 };
	int r = lab_history_nights(s->l, s->machine, name, ret, ret_n, &err);
	sb_free(&err);
	return r;
}

static int t_rows(void *ctx, const char *name, const struct store_history_filter *f, struct store_history_row **ret, size_t *ret_n)
{
	struct src_ctx *s = ctx;
	struct strbuf err = { 0 };
	int r = lab_history_rows(s->l, s->machine, name, f, ret, ret_n, &err);
	sb_free(&err);
	return r;
}

static int t_metrics(void *ctx, const char *name, char ***ret, size_t *ret_n)
{
	struct src_ctx *s = ctx;
	struct strbuf err = { 0 };
	int r = lab_history_metric_names(s->l, s->machine, name, ret, ret_n, &err);
	sb_free(&err);
	return r;
}

static struct history *lab_history(struct lab *l, const char *machine, const char *name)
{
	struct src_ctx s = { .l = l, .machine = machine };
	const struct history_source src = { .ctx = &s, .nights = t_nights, .rows = t_rows, .metric_names = t_metrics };
	struct history *h = NULL;
	T_EQ_INT(history_load_from(&src, name, NULL, &h), 0);
	return h;
}

#define READ_NIGHTS 12

static void test_reads(void)
{
	struct lab *l = fresh_lab("t_reads");
	struct strbuf err = { 0 };
	if (!l)
		return;
	/* twelve nights of one name on each machine: lab1's estimate steps
	 * from 0 to -8 at its seventh night, lab2's stays near +3 */
	int64_t jobs1[READ_NIGHTS], jobs2[READ_NIGHTS];
	for (int i = 0; i < READ_NIGHTS; i++) {
		double wobble = i % 2 ? 0.3 : -0.3;
		char sha[41];
		snprintf(sha, sizeof(sha), "%040d", i + 1);
		jobs1[i] = night_job(l, M1, "lab1", 600);
		struct store_history_row r1[] = { hrow(BOGO, "higher", (i < 6 ? 0 : -8) + wobble, 100) };
		put_ok(l, &(struct night_in){ .machine = M1,
					      .sha = sha,
					      .job = jobs1[i],
					      .status = JOB_DONE,
					      .start = T0 + i * DAY,
					      .committed = T0 + i * DAY - 3600,
					      .rows = r1,
					      .n = 1 });
		jobs2[i] = night_job(l, M2, "lab2", 600);
		struct store_history_row r2[] = { hrow(BOGO, "higher", 3 + wobble, 100) };
		put_ok(l, &(struct night_in){
				  .machine = M2, .job = jobs2[i], .status = JOB_DONE, .start = T0 + i * DAY + 60, .rows = r2, .n = 1 });
	}
	/* a lost attempt's night is no night of the history */
	int64_t lost = night_job(l, M1, "lab1", 600);
	struct store_history_row rl[] = { hrow(BOGO, "higher", 40, 100) };
	put_ok(l, &(struct night_in){ .machine = M1, .job = lost, .status = JOB_DONE, .start = T0 + 20 * DAY, .rows = rl, .n = 1 });
	char sql[160];
	snprintf(sql, sizeof(sql), "UPDATE lab_attempts SET outcome = 'lost' WHERE job = %lld", (long long)lost);
	admin_sql("t_reads", sql);

	struct store_history_night *nights = NULL;
	size_t n = 0;
	T_EQ_INT(lab_history_nights(l, M1, "nightly-mm", &nights, &n, &err), 0);
	T_EQ_INT((int)n, READ_NIGHTS);
	for (size_t i = 0; i < n; i++) {
		T_EQ_INT((int)nights[i].job_id, (int)jobs1[i]); /* by night, lab1's own only */
		T_EQ_INT((int)nights[i].n_commits, 1);
	}
	if (n)
		T_CHECK(strcmp(nights[0].commits[0].sha, "0000000000000000000000000000000000000001") == 0 &&
			fabs(nights[0].commits[0].date - (T0 - 3600)) < 1e-3);
	free(nights);

	/* the history of each machine: its own nights, its own change points */
	struct history *h1 = lab_history(l, M1, "nightly-mm"), *h2 = lab_history(l, M2, "nightly-mm");
	if (h1 && h2) {
		T_EQ_INT((int)h1->n_nights, READ_NIGHTS);
		T_EQ_INT((int)h1->n_series, 1);
		T_EQ_INT((int)h2->n_series, 1);
		bool own = true;
		for (size_t i = 0; i < h1->n_rows; i++)
			own = own && h1->rows[i].job_id != lost && h1->rows[i].estimate_pct < 1;
		T_CHECK(own);
		T_EQ_INT((int)h1->series[0].measured, READ_NIGHTS);
		T_CHECK(h1->series[0].n_changes >= 1);
		if (h1->series[0].n_changes) {
			const struct history_change *c = &h1->series[0].changes[0];
			T_EQ_INT((int)h1->nights[h1->series[0].points[c->first_bad].night].job_id, (int)jobs1[6]);
		}
		T_EQ_INT((int)h2->series[0].n_changes, 0);
		T_EQ_INT((int)h1->n_metrics, 1);
	}
	history_free(h1);
	history_free(h2);
	struct strbuf which = { 0 };
	T_EQ_INT(lab_history_machines(l, "nightly-mm", &which, &n, &err), 0);
	T_EQ_INT((int)n, 2);
	T_CHECK(has(&which, "lab1 (" M1 "), lab2 (" M2 ")"));
	sb_free(&which);

	/* machines by name or id; a host name two machines share is refused */
	char id[LAB_UUID_LEN + 1], host[256];
	T_EQ_INT(lab_machine_find(l, "lab2", id, host, &err), 0);
	T_CHECK(strcmp(id, M2) == 0 && strcmp(host, "lab2") == 0);
	T_EQ_INT(lab_machine_find(l, M1, id, host, &err), 0);
	T_CHECK(strcmp(host, "lab1") == 0);
	T_EQ_INT(lab_machine_find(l, "lab9", id, host, &err), -ENOENT);
	T_CHECK(has(&err, "no machine \"lab9\""));
	sb_free(&err);
	struct lab_machine again = machine(M3, "lab1", 8, "");
	T_EQ_INT(lab_register(l, &again, &err), 0);
	T_EQ_INT(lab_machine_find(l, "lab1", id, host, &err), -EEXIST);
	T_CHECK(has(&err, M1) && has(&err, M3) && has(&err, "by its id"));
	sb_free(&err);

	/* a job's report, as its attempt's state carried it */
	struct lab_upload u = {
		.kind = LAB_UPLOAD_JOB_STATE, .machine = M1, .job = jobs1[0], .attempt = 1, .status = "done", .data = "{\"local_job\": 7, \"report\": {\"schema\": 1, \"job\": {\"name\": \"nightly-mm\"}}}"
	};
	T_EQ_INT(lab_upload(l, &u, &err), 0);
	char *text = NULL;
	int64_t local = 0;
	T_EQ_INT(lab_job_report(l, jobs1[0], 1, &text, id, host, &local, &err), 0);
	T_CHECK(text && strstr(text, "\"schema\": 1") && strcmp(host, "lab1") == 0 && strcmp(id, M1) == 0);
	T_EQ_INT((int)local, 7);
	free(text);
	text = NULL;
	T_EQ_INT(lab_job_report(l, jobs1[1], 1, &text, id, host, &local, &err), -ENOENT);
	T_CHECK(has(&err, "uploaded no state yet"));
	sb_free(&err);

	/* change points: one row per machine and local id, a repeat and a
	 * change of state update it, and no machine writes another's */
	struct lab_regress g = { .local_id = 1,
				 .name = "nightly-mm",
				 .workload = "stress-vm",
				 .metric = BOGO,
				 .state = "pending",
				 .variant = 1,
				 .created = T0 + 7 * DAY,
				 .good_job = jobs1[5],
				 .bad_job = jobs1[6],
				 .data = "{\"id\": 1, \"state\": \"pending\"}" };
	snprintf(g.machine, sizeof(g.machine), "%s", M1);
	T_EQ_INT(lab_regress_put(l, &g, &err), 0);
	T_EQ_INT(lab_regress_put(l, &g, &err), 0);
	g.state = "confirmed";
	g.data = "{\"id\": 1, \"state\": \"confirmed\"}";
	T_EQ_INT(lab_regress_put(l, &g, &err), 0);
	struct lab_regress g2 = g;
	snprintf(g2.machine, sizeof(g2.machine), "%s", M2); /* lab2's own change point 1 */
	g2.state = "not-confirmed";
	g2.good_job = g2.bad_job = 0;
	g2.created = T0 + 8 * DAY;
	g2.data = "{\"id\": 1, \"state\": \"not-confirmed\"}";
	T_EQ_INT(lab_regress_put(l, &g2, &err), 0);
	T_EQ_INT(admin_sql("t_reads", "SELECT count(*) FROM lab_regressions"), 2);
	T_EQ_INT(admin_sql("t_reads", "SELECT count(*) FROM lab_regressions WHERE machine = '" M1 "' AND state = 'confirmed'"), 1);
	struct lab_regress *v = NULL;
	T_EQ_INT(lab_regressions(l, NULL, NULL, NULL, 10, &v, &n, &err), 0);
	T_EQ_INT((int)n, 2);
	if (n == 2) {
		T_CHECK(strcmp(v[0].hostname, "lab2") == 0 && v[0].good_job == 0); /* newest first */
		T_CHECK(strcmp(v[1].machine, M1) == 0 && v[1].bad_job == jobs1[6] && strstr(v[1].data, "confirmed"));
	}
	lab_regressions_free(v, n);
	T_EQ_INT(lab_regressions(l, M1, "nightly-mm", "confirmed", 10, &v, &n, &err), 0);
	T_EQ_INT((int)n, 1);
	lab_regressions_free(v, n);
	T_EQ_INT(lab_regressions(l, "lab2", "other", NULL, 10, &v, &n, &err), 0);
	T_EQ_INT((int)n, 0);
	lab_regressions_free(v, n);
	g.data = "{";
	T_CHECK(lab_regress_put(l, &g, &err) < 0); /* not JSON: refused by the server, the row as it was */
	sb_free(&err);
	T_EQ_INT(admin_sql("t_reads", "SELECT count(*) FROM lab_regressions WHERE state = 'confirmed'"), 1);
	lab_close(l);
	sb_free(&err);
}

int main(void)
{
	char dir[] = "/tmp/kab-test-lab-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(pg.scratch, sizeof(pg.scratch), "%s", dir);
	test_selectors();
	test_match_and_tags();
	test_urls();
	test_credentials(dir);
	test_rootcert(dir);
	test_machine_id(dir);
	pg.dir = getenv("KAB_TEST_PG_DIR");
	pg.port = getenv("KAB_TEST_PG_PORT");
	pg.user = getenv("KAB_TEST_PG_USER");
	pg.password = getenv("KAB_TEST_PG_PASSWORD");
	if (pg.dir && pg.port && pg.user && pg.password) {
		test_schema();
		test_register_claim();
		test_claim_model();
		test_race();
		test_leases();
		test_uploads();
		test_nights();
		test_reads();
		test_why();
		test_notify();
		test_bad_connections();
	} else
		t_skip("the cases against a PostgreSQL server", "none started: tests/lab/run.sh starts one and runs them");
	rmdir(dir);
	return t_done("test_lab");
}
