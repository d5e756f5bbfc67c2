/* The store: migrations, job/schedule/run round trips, the journal, and
 * the plan's balanced orders. Uses a temporary database file. */
#include "t_job.h"
#include "harness/exec/executor.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "harness/report/report.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char job_text[] =
	"[job]\nname = unit\npairs = 4\norder = abba\n"
	"[swap]\ndevice = none\n"
	"[variant A]\nname = base\n"
	"[variant B]\nname = patched\n"
	"[workload w]\ntype = command\ncommand = true\nmemory.max = 64M\n";

/* The schedule as letters: a step's variant, lower case for a warm-up. */
static void plan_string(const struct job *j, char *buf)
{
	struct store_step *s;
	size_t n;
	if (exec_plan(j, &s, &n) < 0) {
		buf[0] = 0;
		return;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)((s[i].pair == STORE_PAIR_WARMUP ? 'a' : 'A') + s[i].variant);
	buf[n] = 0;
	free(s);
}

static void test_plan(void)
{
	struct job *j = t_parse_job(job_text);
	T_CHECK(j != NULL);
	if (!j)
		return;
	char buf[64];
	/* the warm-up (doc/statistics.md rule 1) first, in the first step's variant */
	T_EQ_INT(j->warmup, 1);
	plan_string(j, buf);
	T_EQ_STR(buf, "aABBAABBA");
	j->order = JOB_ORDER_ALTERNATE;
	plan_string(j, buf);
	T_EQ_STR(buf, "aABABABAB");
	j->order = JOB_ORDER_RANDOM;
	j->seed = 7;
	plan_string(j, buf);
	/* the warm-up is in the variant the schedule starts with, whichever */
	T_CHECK(buf[0] == buf[1] - 'A' + 'a');
	/* balanced: every block of two pairs holds one AB and one BA */
	for (int b = 0; b < 2; b++) {
		const char *p = buf + 1 + 4 * b;
		T_CHECK((p[0] == 'A' && p[1] == 'B' && p[2] == 'B' && p[3] == 'A') ||
			(p[0] == 'B' && p[1] == 'A' && p[2] == 'A' && p[3] == 'B'));
	}
	char again[64];
	plan_string(j, again);
	T_EQ_STR(again, buf); /* same seed, same schedule */
	/* warmup = 0: the plan as it was, no warm-up */
	j->warmup = 0;
	j->order = JOB_ORDER_ABBA;
	plan_string(j, buf);
	T_EQ_STR(buf, "ABBAABBA");
	job_free(j);

	/* two workloads: each warm-up just before that workload's first
	 * step, in no pair, the steps numbered in order */
	j = t_parse_job("[job]\nname = two\npairs = 2\n[swap]\ndevice = none\n[variant A]\n[variant B]\n"
			"[workload v]\ntype = command\ncommand = true\n[workload w]\ntype = command\ncommand = true\n");
	T_CHECK(j != NULL);
	if (!j)
		return;
	plan_string(j, buf);
	T_EQ_STR(buf, "aABaABBABA");
	struct store_step *s;
	size_t n;
	T_EQ_INT(exec_plan(j, &s, &n), 0);
	T_EQ_INT(n, 10);
	char work[16] = "", pairs[16] = "";
	for (size_t i = 0; i < n && i < 10; i++) {
		work[i] = (char)('v' + s[i].workload);
		pairs[i] = s[i].pair == STORE_PAIR_WARMUP ? '-' : (char)('1' + s[i].pair);
		T_EQ_INT(s[i].seq, (int)i);
		T_EQ_INT(s[i].status, STEP_PENDING);
		T_EQ_INT(s[i].boot, -1);
	}
	T_EQ_STR(work, "vvvwwwvvww");
	T_EQ_STR(pairs, "-11-112222");
	free(s);
	job_free(j);
}

struct seen_series {
	int calls;
	char metric[64];
	size_t len, n;
	uint8_t last;
};

static void see_series(void *ctx, const char *metric, const uint8_t *blob, size_t len, size_t n)
{
	struct seen_series *s = ctx;
	s->calls++;
	snprintf(s->metric, sizeof(s->metric), "%s", metric);
	s->len = len;
	s->n = n;
	s->last = len ? blob[len - 1] : 0;
}

static void test_store(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	struct job *j = t_parse_job(job_text);
	if (!j)
		return;
	int64_t id;
	T_EQ_INT(job_store_create(st, j, &id), 0);
	T_EQ_INT(id, 1);
	struct store_step *steps;
	size_t n;
	T_EQ_INT(exec_plan(j, &steps, &n), 0);
	T_EQ_INT(store_steps_create(st, id, steps, n), 0);
	free(steps);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(n, 9); /* 4 pairs of 2 and the warm-up, which is stored as the first step */
	T_EQ_INT(steps[0].status, STEP_PENDING);
	T_EQ_INT(steps[0].pair, STORE_PAIR_WARMUP);
	T_EQ_INT(steps[1].pair, 0);

	/* the warm-up's run: recorded like any other, with its own status */
	struct store_run r = { .job_id = id, .step_id = steps[0].id, .pair = steps[0].pair, .variant = 0, .workload = 0, .exit_code = -1 };
	snprintf(r.kernel_release, sizeof(r.kernel_release), "6.1.0-test");
	snprintf(r.boot_id, sizeof(r.boot_id), "boot-1");
	int64_t run_id;
	r.started = 1000;
	T_EQ_INT(store_run_begin(st, &r, &run_id), 0);
	size_t tn;
	double tsum, tcur;
	T_EQ_INT(store_job_run_times(st, id, &tn, &tsum, &tcur), 0);
	T_EQ_INT(tn, 0);
	T_NEAR(tcur, 1000, 1e-9);
	struct store_run *started;
	size_t ns;
	T_EQ_INT(store_runs_started(st, &started, &ns), 0);
	T_EQ_INT(ns, 1);
	free(started);

	struct wl_metrics m = { 0 };
	wl_metrics_add(&m, "vmstat.pswpout", "pages", 1234);
	wl_metrics_add(&m, "time.wall_s", "s", 1.5);
	uint8_t blob[] = { 1, 2, 3 };
	struct store_series ser = { "vmstat.pswpout", blob, sizeof(blob), 3 };
	r.status = RUN_WARMUP;
	r.exit_code = 0;
	r.finished = 1012.5;
	T_EQ_INT(store_run_finish(st, &r, STEP_FINISHED, m.v, m.n, &ser, 1), 0);
	wl_metrics_free(&m);
	T_EQ_INT(store_job_run_times(st, id, &tn, &tsum, &tcur), 0);
	T_EQ_INT(tn, 1);
	T_NEAR(tsum, 12.5, 1e-9);
	T_NEAR(tcur, 0, 1e-9);
	free(steps);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(steps[0].status, STEP_FINISHED);
	free(steps);

	uint8_t *b;
	size_t bl, bn;
	T_EQ_INT(store_series_get(st, run_id, "vmstat.pswpout", &b, &bl, &bn), 0);
	T_EQ_INT(bl, 3);
	T_EQ_INT(bn, 3);
	T_EQ_INT(b[2], 3);
	free(b);
	struct seen_series seen = { 0 };
	T_EQ_INT(store_series_foreach(st, run_id, see_series, &seen), 0);
	T_EQ_INT(seen.calls, 1);
	T_EQ_STR(seen.metric, "vmstat.pswpout");
	T_EQ_INT(seen.len, 3);
	T_EQ_INT(seen.n, 3);
	T_CHECK(seen.last == 3);
	seen = (struct seen_series){ 0 };
	T_EQ_INT(store_series_foreach(st, run_id + 1000, see_series, &seen), 0);
	T_EQ_INT(seen.calls, 0);

	struct store_run *runs;
	size_t nr;
	T_EQ_INT(store_runs_load(st, id, &runs, &nr), 0);
	T_EQ_INT(nr, 1);
	T_EQ_INT(runs[0].status, RUN_WARMUP);
	T_EQ_INT(runs[0].pair, STORE_PAIR_WARMUP);
	int64_t counted = -1;
	T_EQ_INT(store_count_runs(st, RUN_WARMUP, &counted), 0);
	T_EQ_INT(counted, 1);
	T_EQ_INT(store_count_runs(st, RUN_OK, &counted), 0);
	T_EQ_INT(counted, 0);
	T_EQ_STR(runs[0].kernel_release, "6.1.0-test");
	T_EQ_STR(runs[0].kab_version, KAB_VERSION);
	free(runs);

	struct store_journal e = { .job_id = id };
	snprintf(e.kind, sizeof(e.kind), "knob");
	snprintf(e.target, sizeof(e.target), "/proc/sys/vm/swappiness");
	snprintf(e.original, sizeof(e.original), "60");
	snprintf(e.boot_id, sizeof(e.boot_id), "boot-1");
	int64_t jid;
	T_EQ_INT(store_journal_add(st, &e, &jid), 0);
	struct store_journal *jl;
	size_t nj;
	T_EQ_INT(store_journal_list(st, &jl, &nj), 0);
	T_EQ_INT(nj, 1);
	T_EQ_STR(jl[0].original, "60");
	free(jl);
	T_EQ_INT(store_journal_del(st, jid), 0);
	T_EQ_INT(store_journal_list(st, &jl, &nj), 0);
	T_EQ_INT(nj, 0);
	free(jl);

	char dn[64];
	T_EQ_INT(store_job_dir_get(st, id, dn, sizeof(dn)), 0);
	T_EQ_STR(dn, "");
	T_EQ_INT(store_job_dir_set(st, id, "job1-AbC123"), 0);
	T_EQ_INT(store_job_dir_get(st, id, dn, sizeof(dn)), 0);
	T_EQ_STR(dn, "job1-AbC123");
	T_EQ_INT(store_job_dir_set(st, id, NULL), 0);
	T_EQ_INT(store_job_dir_get(st, id, dn, sizeof(dn)), 0);
	T_EQ_STR(dn, "");
	T_EQ_INT(store_job_dir_set(st, 99, "x"), -ENOENT);
	T_EQ_INT(store_job_dir_get(st, 99, dn, sizeof(dn)), -ENOENT);

	struct store_job sj;
	T_EQ_INT(store_job_get(st, id, &sj), 0);
	T_EQ_STR(sj.name, "unit");
	T_EQ_INT(sj.status, JOB_QUEUED);
	T_EQ_STR(sj.submitter, "");  /* kab run's jobs record none */
	store_job_clear(&sj);
	T_EQ_INT(store_job_get(st, 99, &sj), -ENOENT);
	/* kabd's record who submitted them */
	int64_t by;
	T_EQ_INT(job_store_submit(st, j, "uid 1001 (alice)", NULL, 0, NULL, &by), 0);
	T_EQ_INT(store_job_get(st, by, &sj), 0);
	T_EQ_STR(sj.submitter, "uid 1001 (alice)");
	store_job_clear(&sj);
	store_close(st);

	/* reopening migrates nothing and keeps the data */
	T_EQ_INT(store_open(path, &st), 0);
	T_EQ_INT(store_job_get(st, id, &sj), 0);
	store_job_clear(&sj);
	store_close(st);
	job_free(j);
	unlink(path);
	char aux[64];
	snprintf(aux, sizeof(aux), "%s-wal", path);
	unlink(aux);
	snprintf(aux, sizeof(aux), "%s-shm", path);
	unlink(aux);
}

static unsigned mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 01000;
}

/* The database, its -wal and -shm are 0600 whatever the umask; a symbolic
 * link is refused; one an older kab left open to others is closed. */
static void test_store_modes(void)
{
	char dir[] = "/tmp/kab-unit-modes-XXXXXX";
	T_CHECK(mkdtemp(dir) != NULL);
	char db[128], wal[140], shm[140], link[128];
	snprintf(db, sizeof(db), "%s/k.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", db);
	snprintf(shm, sizeof(shm), "%s-shm", db);
	snprintf(link, sizeof(link), "%s/link.db", dir);
	mode_t old = umask(0);
	struct store *st;
	T_EQ_INT(store_open(db, &st), 0);
	struct job *j = t_parse_job(job_text);
	int64_t id;
	T_EQ_INT(j && job_store_create(st, j, &id) == 0, 1);
	T_EQ_INT(mode_of(db), 0600);
	T_EQ_INT(mode_of(wal), 0600);
	T_EQ_INT(mode_of(shm), 0600);
	store_close(st);
	T_EQ_INT(symlink(db, link), 0);
	T_EQ_INT(store_open(link, &st), -ELOOP);
	T_EQ_INT(chmod(db, 0644), 0);
	T_EQ_INT(store_open(db, &st), 0);
	T_EQ_INT(mode_of(db), 0600);
	store_close(st);
	umask(old);
	job_free(j);
	unlink(link);
	unlink(wal);
	unlink(shm);
	unlink(db);
	rmdir(dir);
}

/* store_file_prepare on path: its return, and its message in msg. */
static int prepare(const char *path, char *msg, size_t len)
{
	struct strbuf err = { 0 };
	int r = store_file_prepare(path, &err);
	snprintf(msg, len, "%s", err.buf ? err.buf : "");
	sb_free(&err);
	return r;
}

static void touch(const char *path, mode_t mode, uid_t uid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	T_CHECK(fd >= 0 && fchmod(fd, mode) == 0 && fchown(fd, uid, (gid_t)-1) == 0);
	if (fd >= 0)
		close(fd);
}

static bool has(const char *msg, const char *part)
{
	if (strstr(msg, part))
		return true;
	fprintf(stderr, "  expected \"%s\" in: %s\n", part, msg);
	return false;
}

/* Root opening a database someone else could change: the file, its
 * directory, its -wal, -shm and -journal, a directory above it; each
 * refused naming it, its owner and mode, before anything is made. What
 * is root's and closed passes, under a sticky directory too. */
static void test_store_refusals(void)
{
	if (geteuid() != 0) {
		t_skip("test_store_refusals", "needs root (files of another owner)");
		return;
	}
	const uid_t other = 65534;
	char top[] = "/tmp/kab-unit-owner-XXXXXX";
	T_CHECK(mkdtemp(top) != NULL);
	char dir[128], db[160], side[180], msg[2048];
	snprintf(dir, sizeof(dir), "%s/d", top);
	snprintf(db, sizeof(db), "%s/k.db", dir);
	T_EQ_INT(mkdir(dir, 0700), 0);

	/* the database: made by uid 65534 */
	touch(db, 0600, other);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "/k.db: owned by uid 65534"));
	T_CHECK(has(msg, "mode 0600 (not root's): kab runs as root and replays this database's journal"));
	T_CHECK(has(msg, "leave out --db"));
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), -EPERM);
	T_CHECK(st == NULL);
	/* root's, but its group may write it */
	touch(db, 0620, 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "mode 0620 (writable by its group or others)"));
	touch(db, 0600, 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), 0);

	/* its -wal, -shm or -journal: SQLite reads each into the database */
	static const char *const sides[] = { "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < ARRAY_SIZE(sides); i++) {
		snprintf(side, sizeof(side), "%s%s", db, sides[i]);
		touch(side, 0644, other);
		T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
		char want[64];
		snprintf(want, sizeof(want), "k.db%s: owned by uid 65534", sides[i]);
		T_CHECK(has(msg, want));
		touch(side, 0666, 0);
		T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
		T_CHECK(has(msg, "mode 0666 (writable by its group or others)"));
		unlink(side);
		T_EQ_INT(symlink("/etc/passwd", side), 0);
		T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
		T_CHECK(has(msg, "(a symbolic link)"));
		unlink(side);
	}

	/* its directory: another's, or open to others even when sticky */
	T_EQ_INT(chown(dir, other, (gid_t)-1), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "/k.db: its directory ") && has(msg, "/d is owned by uid 65534") && has(msg, "so others could replace"));
	T_EQ_INT(chown(dir, 0, (gid_t)-1), 0);
	T_EQ_INT(chmod(dir, 01777), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "mode 1777 (writable by its group or others)"));
	T_EQ_INT(chmod(dir, 0700), 0);
	/* nothing is made in a refused directory */
	unlink(db);
	T_EQ_INT(chown(dir, other, (gid_t)-1), 0);
	T_EQ_INT(store_open(db, &st), -EPERM);
	T_CHECK(access(db, F_OK) != 0);
	T_EQ_INT(chown(dir, 0, (gid_t)-1), 0);

	/* a directory above it: another's could be renamed away; a sticky
	 * root's one (/tmp) could not */
	T_EQ_INT(chown(top, other, (gid_t)-1), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "above it is owned by uid 65534") && has(msg, "could put another database in its place"));
	T_EQ_INT(chown(top, 0, (gid_t)-1), 0);
	T_EQ_INT(chmod(top, 01777), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), 0);
	T_EQ_INT(chmod(top, 0777), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_EQ_INT(chmod(top, 0700), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), 0);
	T_CHECK(access(db, F_OK) == 0);
	T_EQ_INT(mode_of(db), 0600);

	/* a link on the way, and not a file: refused, never waited on */
	char link[160], via[200];
	snprintf(link, sizeof(link), "%s/l", top);
	snprintf(via, sizeof(via), "%s/k.db", link);
	T_EQ_INT(symlink("d", link), 0);
	T_EQ_INT(prepare(via, msg, sizeof(msg)), -ELOOP);
	T_CHECK(has(msg, "/l is a symbolic link"));
	unlink(link);
	unlink(db);
	T_EQ_INT(mkfifo(db, 0600), 0);
	T_EQ_INT(prepare(db, msg, sizeof(msg)), -EPERM);
	T_CHECK(has(msg, "(not a regular file)"));
	unlink(db);

	/* a user other than root: his own database and root's pass, another
	 * user's is refused (a child as uid 65534, the answer its status) */
	T_EQ_INT(chmod(top, 0711), 0);
	T_EQ_INT(chown(dir, other, (gid_t)-1), 0);
	char mine[160], roots[160], theirs[160];
	snprintf(mine, sizeof(mine), "%s/mine.db", dir);
	snprintf(roots, sizeof(roots), "%s/roots.db", dir);
	snprintf(theirs, sizeof(theirs), "%s/theirs.db", dir);
	touch(roots, 0644, 0);
	touch(theirs, 0600, other - 1);
	pid_t pid = fork();
	if (pid == 0) {
		char m[2048];
		if (setgid(other) < 0 || setuid(other) < 0)
			_exit(9);
		int code = prepare(mine, m, sizeof(m)) == 0 && access(mine, F_OK) == 0 ? 0 : 1;
		code |= prepare(roots, m, sizeof(m)) == 0 ? 0 : 2;
		bool refused = prepare(theirs, m, sizeof(m)) == -EPERM;
		code |= refused && strstr(m, "(neither yours nor root's): kab opens a database only when nobody but you") ? 0 : 4;
		_exit(code);
	}
	int status = -1;
	T_EQ_INT(waitpid(pid, &status, 0), pid);
	T_CHECK(WIFEXITED(status));
	T_EQ_INT(WEXITSTATUS(status), 0);
	unlink(mine);
	unlink(roots);
	unlink(theirs);
	rmdir(dir);
	rmdir(top);
}

/* store_job_submit: the job and its schedule in one transaction; what
 * kabd shows of a job read back without its text. */
static void test_submit(void)
{
	struct store *st;
	T_EQ_INT(store_open(":memory:", &st), 0);
	struct job *j = t_parse_job(job_text);
	if (!j)
		return;
	struct store_step *steps;
	size_t n;
	T_EQ_INT(exec_plan(j, &steps, &n), 0);
	int64_t id = 0;
	T_EQ_INT(job_store_submit(st, j, "uid 1001 (alice)", steps, n, NULL, &id), 0);
	T_EQ_INT(id, 1);
	free(steps);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(n, 9);
	free(steps);
	struct store_job sj;
	T_EQ_INT(store_job_info(st, id, &sj), 0);
	T_EQ_STR(sj.name, "unit");
	T_EQ_INT(sj.status, JOB_QUEUED);
	T_EQ_INT(sj.pairs, 4);
	T_EQ_STR(sj.order, "abba");
	T_EQ_STR(sj.submitter, "uid 1001 (alice)");
	T_CHECK(sj.text == NULL);
	store_job_clear(&sj);
	T_EQ_INT(store_job_info(st, 99, &sj), -ENOENT);
	struct store_job_part *v = NULL, *w = NULL;
	size_t nv = 0, nw = 0;
	T_EQ_INT(store_job_variants(st, id, &v, &nv), 0);
	T_EQ_INT(store_job_workloads(st, id, &w, &nw), 0);
	T_EQ_INT(nv, 2);
	T_EQ_INT(nw, 1);
	if (nv == 2 && nw == 1) {
		T_EQ_STR(v[0].name, "base");
		T_EQ_STR(v[1].name, "patched");
		T_EQ_STR(v[1].kind, "running");
		T_EQ_STR(w[0].name, "w");
		T_EQ_STR(w[0].kind, "command");
	}
	free(v);
	free(w);
	/* a schedule that cannot be stored leaves no job behind */
	struct store_step dup[2] = { { .seq = 0 }, { .seq = 0 } };
	T_CHECK(job_store_submit(st, j, NULL, dup, 2, NULL, &id) < 0);
	int64_t *ids = NULL;
	T_EQ_INT(store_jobs_page(st, 0, 10, &ids, &n), 0);
	T_EQ_INT(n, 1);
	free(ids);
	store_close(st);
	job_free(j);
}

/* Every status's name parses back to it; unknown words do not parse and
 * name "unknown", never a status that counts. */
static void test_status_names(void)
{
	for (int v = 0; v < JOB_STATUS_N; v++) {
		enum job_status x = JOB_STATUS_UNKNOWN;
		T_EQ_INT(job_status_parse(job_status_name((enum job_status)v), &x), 0);
		T_EQ_INT(x, v);
	}
	for (int v = 0; v < STEP_STATUS_N; v++) {
		enum step_status x = STEP_STATUS_UNKNOWN;
		T_EQ_INT(step_status_parse(step_status_name((enum step_status)v), &x), 0);
		T_EQ_INT(x, v);
	}
	for (int v = 0; v < RUN_STATUS_N; v++) {
		enum run_status x = RUN_STATUS_UNKNOWN;
		T_EQ_INT(run_status_parse(run_status_name((enum run_status)v), &x), 0);
		T_EQ_INT(x, v);
	}
	for (int v = 0; v < BOOT_STATUS_N; v++) {
		enum boot_status x = BOOT_STATUS_UNKNOWN;
		T_EQ_INT(boot_status_parse(boot_status_name((enum boot_status)v), &x), 0);
		T_EQ_INT(x, v);
	}
	for (int v = 0; v < BUILD_STATUS_N; v++) {
		enum build_status x = BUILD_STATUS_UNKNOWN;
		T_EQ_INT(build_status_parse(build_status_name((enum build_status)v), &x), 0);
		T_EQ_INT(x, v);
	}
	/* the words the database has always held */
	T_EQ_STR(job_status_name(JOB_CANCELLED), "cancelled");
	T_EQ_STR(step_status_name(STEP_BOOT_FAILED), "boot-failed");
	T_EQ_STR(run_status_name(RUN_OK), "ok");
	T_EQ_STR(run_status_name(RUN_OOM_CONTAMINATED), "oom-contaminated");
	T_EQ_STR(run_status_name(RUN_EXPECT_FAILED), "expect-failed");
	T_EQ_STR(run_status_name(RUN_WARMUP), "warmup");
	T_EQ_STR(boot_status_name(BOOT_ABANDONED), "abandoned");
	T_EQ_STR(build_status_name(BUILD_BUILDING), "building");

	enum run_status r = RUN_FAILED;
	T_EQ_INT(run_status_parse("weird", &r), -EINVAL);
	T_EQ_INT(r, RUN_FAILED);  /* untouched on failure */
	T_EQ_INT(run_status_parse("", &r), -EINVAL);
	T_EQ_INT(run_status_parse(NULL, &r), -EINVAL);
	T_EQ_INT(run_status_parse("OK", &r), -EINVAL);
	T_EQ_INT(run_status_parse("ok ", &r), -EINVAL);
	enum job_status j = JOB_DONE;
	T_EQ_INT(job_status_parse("cancelling", &j), -EINVAL);
	T_EQ_INT(j, JOB_DONE);
	enum step_status sp;
	T_EQ_INT(step_status_parse("boot_failed", &sp), -EINVAL);
	enum boot_status b;
	T_EQ_INT(boot_status_parse("okay", &b), -EINVAL);
	enum build_status bu;
	T_EQ_INT(build_status_parse("built", &bu), -EINVAL);
	T_EQ_STR(run_status_name(RUN_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(run_status_name(RUN_STATUS_N), "unknown");
	T_EQ_STR(job_status_name(JOB_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(step_status_name(STEP_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(boot_status_name(BOOT_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(build_status_name(BUILD_STATUS_UNKNOWN), "unknown");
}

/* The status word in row 1 of table, straight from the database. */
static void db_word(const char *path, const char *table, char *buf, size_t len)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	char sql[96];
	buf[0] = 0;
	snprintf(sql, sizeof(sql), "SELECT status FROM %s WHERE id = 1", table);
	T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
	T_EQ_INT(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	if (sqlite3_step(q) == SQLITE_ROW)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	sqlite3_close(db);
}

/* A new store in a temporary file (its path in PATH) with job_text
 * submitted: the job's id, or 0 when the job could not be made; its
 * steps in ret_steps and ret_n unless ret_steps is NULL (free them). */
static int64_t store_with_job(char path[64], struct store **st, struct store_step **ret_steps, size_t *ret_n)
{
	t_db_path(path, 64, "/tmp/kab-unit-XXXXXX", NULL);
	T_EQ_INT(store_open(path, st), 0);
	struct job *j = t_parse_job(job_text);
	if (!j)
		return 0;
	struct store_step *steps;
	size_t n;
	T_EQ_INT(exec_plan(j, &steps, &n), 0);
	int64_t id = 0;
	T_EQ_INT(job_store_submit(*st, j, NULL, steps, n, NULL, &id), 0);
	free(steps);
	job_free(j);
	if (id && ret_steps)
		T_EQ_INT(store_steps_load(*st, id, ret_steps, ret_n), 0);
	return id;
}

/* A status word this kab does not know (a newer kab's database, a hand
 * edit) loads as unknown, counts as nothing, and is never overwritten
 * by "unknown". */
static void test_status_unknown(void)
{
	char path[64];
	struct store *st;
	struct store_step *steps;
	size_t n;
	int64_t id = store_with_job(path, &st, &steps, &n);
	if (!id)
		return;
	struct store_run r = { .job_id = id, .step_id = steps[0].id, .exit_code = -1, .started = 1000 };
	free(steps);
	int64_t run_id, build_id, boot_id;
	T_EQ_INT(store_run_begin(st, &r, &run_id), 0);
	struct store_build b = { .tree = "/src/linux", .base_ref = "v6.1", .config_source = "defconfig" };
	snprintf(b.base_sha, sizeof(b.base_sha), "0123456789abcdef0123456789abcdef01234567");
	snprintf(b.config_hash, sizeof(b.config_hash), "c0ffee");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "key");
	T_EQ_INT(store_build_begin(st, &b, &build_id), 0);
	struct store_boot bt = { .job_id = id, .build_id = build_id };
	snprintf(bt.method, sizeof(bt.method), "kexec");
	snprintf(bt.from_boot_id, sizeof(bt.from_boot_id), "previous");
	T_EQ_INT(store_boot_begin(st, &bt, &boot_id), 0);
	/* the words the store's own SQL writes are the tables' */
	struct store_build nb0 = { 0 };
	T_EQ_INT(store_build_get(st, build_id, &nb0), 0);
	T_EQ_INT(nb0.status, BUILD_BUILDING);
	store_build_clear(&nb0);
	struct store_boot *nbt;
	size_t nnb;
	T_EQ_INT(store_boots_load(st, id, &nbt, &nnb), 0);
	T_EQ_INT(nnb, 1);
	if (nnb == 1)
		T_EQ_INT(nbt[0].status, BOOT_SWITCHING);
	free(nbt);
	struct store_job qj;
	T_EQ_INT(store_job_info(st, id, &qj), 0);
	T_EQ_INT(qj.status, JOB_QUEUED);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(steps[0].status, STEP_STARTED);
	T_EQ_INT(steps[1].status, STEP_PENDING);
	free(steps);
	T_EQ_INT(store_steps_skip(st, id, 0, 0), 0);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(steps[1].status, STEP_SKIPPED);
	free(steps);
	store_close(st);

	sqlite3 *db;
	T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
	const char *tables[] = { "jobs", "steps", "runs", "builds", "boots" };
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char sql[96];
		snprintf(sql, sizeof(sql), "UPDATE %s SET status = 'from-the-future' WHERE id = 1", tables[i]);
		T_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	sqlite3_close(db);

	T_EQ_INT(store_open(path, &st), 0);
	struct store_job sj;
	T_EQ_INT(store_job_info(st, id, &sj), 0);
	T_EQ_INT(sj.status, JOB_STATUS_UNKNOWN);
	T_CHECK(!job_status_finished(sj.status));
	T_EQ_STR(job_status_name(sj.status), "unknown");
	T_EQ_INT(store_job_set_status(st, id, sj.status, "a reason"), -EINVAL);
	store_job_clear(&sj);
	T_EQ_INT(store_steps_load(st, id, &steps, &n), 0);
	T_EQ_INT(steps[0].status, STEP_STATUS_UNKNOWN);
	T_EQ_INT(steps[1].status, STEP_SKIPPED);
	T_EQ_INT(store_step_set_status(st, steps[0].id, steps[0].status), -EINVAL);
	free(steps);
	struct store_run *runs;
	size_t nr;
	T_EQ_INT(store_runs_load(st, id, &runs, &nr), 0);
	T_EQ_INT(nr, 1);
	if (nr == 1) {
		T_EQ_INT(runs[0].status, RUN_STATUS_UNKNOWN);
		T_EQ_INT(store_run_finish(st, &runs[0], STEP_FINISHED, NULL, 0, NULL, 0), -EINVAL);
	}
	free(runs);
	int64_t count = -1;
	T_EQ_INT(store_count_runs(st, RUN_OK, &count), 0);
	T_EQ_INT(count, 0);
	T_EQ_INT(store_count_runs(st, RUN_STARTED, &count), 0);
	T_EQ_INT(count, 0);
	/* the report counts the run under no status, and names the job's */
	struct report *rep = NULL;
	T_EQ_INT(report_load(st, id, &rep), 0);
	if (rep) {
		T_EQ_INT(rep->job_status, JOB_STATUS_UNKNOWN);
		size_t counted = 0;
		for (size_t s = 0; s < rep->n_variants * RUN_STATUS_N; s++)
			counted += rep->w[0].runs[s];
		T_EQ_INT(counted, 0);
		char *text = NULL;
		size_t tl = 0;
		FILE *out = open_memstream(&text, &tl);
		T_CHECK(out != NULL);
		if (out) {
			struct report_opts ro = { .format = REPORT_TEXT, .ascii = true };
			T_EQ_INT(report_render(rep, &ro, out), 0);
			fclose(out);
			T_CHECK(strstr(text, "kab report: job 1 \"unit\" (unknown), order abba") != NULL);
			free(text);
		}
		report_free(rep);
	}
	struct store_build gb = { 0 };
	T_EQ_INT(store_build_get(st, build_id, &gb), 0);
	T_EQ_INT(gb.status, BUILD_STATUS_UNKNOWN);
	T_EQ_INT(store_build_finish(st, &gb), -EINVAL);
	store_build_clear(&gb);
	struct store_boot *boots;
	size_t nb;
	T_EQ_INT(store_boots_load(st, id, &boots, &nb), 0);
	T_EQ_INT(nb, 1);
	if (nb == 1) {
		T_EQ_INT(boots[0].status, BOOT_STATUS_UNKNOWN);
		T_EQ_INT(store_boot_finish(st, &boots[0]), -EINVAL);
	}
	free(boots);
	store_close(st);

	/* the refused writes left every word as it was */
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char word[32];
		db_word(path, tables[i], word, sizeof(word));
		T_EQ_STR(word, "from-the-future");
	}
	char side[sizeof(path) + 8];
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	unlink(path);
}

/* A job's life (store.h): every pair of statuses against the table, and
 * the store writing only the changes it allows, keeping the status (and
 * saying so) when refused; a job with a status this kab does not know is
 * never moved. */
static void test_job_life(void)
{
	static const char *const allowed[] = {
		"queued>running",     "queued>failed",         "queued>cancelled",  "running>interrupted",
		"running>done",       "running>failed",        "running>cancelled", "interrupted>running",
		"interrupted>failed", "interrupted>cancelled", "failed>running",    "cancelled>running",
	};
	for (int f = 0; f < JOB_STATUS_N; f++)
		for (int t = 0; t < JOB_STATUS_N; t++) {
			char pair[64];
			snprintf(pair, sizeof(pair), "%s>%s", job_status_name((enum job_status)f),
				 job_status_name((enum job_status)t));
			bool want = f == t;
			for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
				want |= strcmp(pair, allowed[i]) == 0;
			if (job_transition_allowed((enum job_status)f, (enum job_status)t) != want)
				fprintf(stderr, "  %s: table says %d\n", pair, !want);
			T_CHECK(job_transition_allowed((enum job_status)f, (enum job_status)t) == want);
		}
	T_CHECK(!job_transition_allowed(JOB_STATUS_UNKNOWN, JOB_RUNNING));
	T_CHECK(!job_transition_allowed(JOB_QUEUED, JOB_STATUS_UNKNOWN));

	char path[64];
	struct store *st;
	int64_t id = store_with_job(path, &st, NULL, NULL);
	if (!id)
		return;
	struct store_job sj;
	/* queued cannot end done without running */
	T_EQ_INT(store_job_set_status(st, id, JOB_DONE, NULL), -EPERM);
	T_EQ_INT(store_job_info(st, id, &sj), 0);
	T_EQ_INT(sj.status, JOB_QUEUED);
	T_EQ_INT(store_job_set_status(st, id, JOB_INTERRUPTED, "x"), -EPERM);
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), 0);
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, "building kernels"), 0);
	T_EQ_INT(store_job_set_status(st, id, JOB_QUEUED, NULL), -EPERM);
	T_EQ_INT(store_job_set_status(st, id, JOB_DONE, NULL), 0);
	/* done is final; its reason may still be amended */
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), -EPERM);
	T_EQ_INT(store_job_set_status(st, id, JOB_CANCELLED, "cancelled over the API"), -EPERM);
	T_EQ_INT(store_job_set_status(st, id, JOB_DONE, "the governor could not be restored"), 0);
	T_EQ_INT(store_job_info(st, id, &sj), 0);
	T_EQ_INT(sj.status, JOB_DONE);
	T_EQ_STR(sj.reason, "the governor could not be restored");
	T_EQ_INT(store_job_set_status(st, id + 1, JOB_RUNNING, NULL), -ENOENT);
	store_close(st);

	sqlite3 *db;
	T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
	T_EQ_INT(sqlite3_exec(db, "UPDATE jobs SET status = 'paused' WHERE id = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	T_EQ_INT(store_open(path, &st), 0);
	T_EQ_INT(store_job_set_status(st, id, JOB_RUNNING, NULL), -EPERM);
	T_EQ_INT(store_job_set_status(st, id, JOB_CANCELLED, NULL), -EPERM);
	store_close(st);
	char word[32] = "";
	db_word(path, "jobs", word, sizeof(word));
	T_EQ_STR(word, "paused");
	unlink(path);
}

/* A run of status s, finished at time t with metric m.x = t; its id. */
static int64_t run_with_metric(struct store *st, int64_t job_id, int64_t step_id, enum run_status s, double t)
{
	struct store_run r = { .job_id = job_id, .step_id = step_id, .exit_code = 0, .started = t - 1 };
	int64_t id = 0;
	T_EQ_INT(store_run_begin(st, &r, &id), 0);
	r.status = s;
	r.finished = t;
	struct store_metric m = { .name = "m.x", .value = t };
	T_EQ_INT(store_run_finish(st, &r, STEP_FINISHED, &m, 1, NULL, 0), 0);
	return id;
}

/* store_last_run_metric's finished run is run_status_finished's: of runs
 * of every status, each with the metric and a finish time (a warm-up, an
 * aborted or a skipped run has one too), it finds the newest whose status
 * finished, first with the unfinished statuses before the finished ones,
 * then after them. */
static void test_last_run_metric(void)
{
	char path[64];
	struct store *st;
	struct store_step *steps = NULL;
	size_t n = 0;
	int64_t id = store_with_job(path, &st, &steps, &n);
	if (!id)
		return;
	int64_t want = 0, got;
	double v, t = 1000;
	size_t finished = 0;
	for (int pass = 0; pass < 2 && n > 0; pass++)
		for (int k = 0; k < RUN_STATUS_N; k++) {
			enum run_status s = (enum run_status)(pass == 0 ? RUN_STATUS_N - 1 - k : k);
			int64_t run = run_with_metric(st, id, steps[(size_t)k % n].id, s, t += 10);
			if (run_status_finished(s)) {
				want = run;
				finished++;
			}
			got = -1;
			int r = store_last_run_metric(st, "m.x", &got, &v);
			if (!want) {
				T_EQ_INT(r, -ENOENT);
				continue;
			}
			T_EQ_INT(r, 0);
			if (got != want)
				fprintf(stderr, "  after a run %s: run %lld, not %lld\n", run_status_name(s),
					(long long)got, (long long)want);
			T_EQ_INT(got, want);
		}
	free(steps);
	T_CHECK(finished > 0 && finished < 2 * RUN_STATUS_N); /* both kinds were there */
	T_EQ_INT(store_last_run_metric(st, "m.none", &got, &v), -ENOENT);
	store_close(st);
	unlink(path);
}

int main(void)
{
	log_quiet = true;
	test_plan();
	test_store();
	test_store_modes();
	test_store_refusals();
	test_submit();
	test_status_names();
	test_status_unknown();
	test_job_life();
	test_last_run_metric();
	return t_done("store");
}
