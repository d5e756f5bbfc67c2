/* A bisection asked with a revision kab's clone of the tree lacks
 * (harness/daemon/bisect_ask.c): when the job's variant tracks a branch
 * (track = REMOTE BRANCH, or boots a recorded build of one), that branch
 * is fetched into kab's clone and the revision looked for again. Over
 * real git in a temporary directory: an "origin" a commit ahead of the
 * tree, the tree, kab's clone of it under a work directory of the
 * test's. Git runs as the build user when the test is root (as kabd
 * does), as the current user otherwise. Checked: a BAD only the remote
 * has is fetched and accepted; one that is nowhere after the fetch is
 * 400 naming the field and the branch; a remote gone is -EHOSTUNREACH
 * (502 over the API) naming the tree, remote, branch and git's message;
 * a tree whose lock a build holds is -EBUSY (409), without waiting; a
 * variant that tracks nothing fetches nothing; nothing is recorded by a
 * refusal. */
#include "t.h"
#include "t_job.h"
#include "t_runs.h"
#include "harness/daemon/api.h"
#include "harness/daemon/bisect_life.h"
#include "harness/daemon/queue.h"
#include "harness/exec/joblife.h"
#include "harness/job/job.h"
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "db/store.h"
#include "db/store_bisect.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#define GIT "git -c user.name=t -c user.email=t@kab -c init.defaultBranch=main"

static char top[] = "/tmp/kab-test-bisect-fetch.XXXXXX";
static char tree[PATH_MAX], origin[PATH_MAX + 16], work[PATH_MAX + 16], kclone[PATH_MAX + 64];
/* c[0..2] in the tree and origin; c[3] and c[4] pushed to origin after
 * (and more commits, one a case, as the test goes) */
static char c[5][41];

static bool sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	char *argv[] = { "sh", "-c", cmd, NULL };
	return krun_ok(argv, top, NULL);
}

static void rev(const char *repo, const char *spec, char sha[41])
{
	char *argv[] = { "git", "-C", (char *)repo, "rev-parse", (char *)spec, NULL };
	struct strbuf out = { 0 };
	sha[0] = 0;
	if (krun_ok(argv, NULL, &out) && out.len == 40)
		memcpy(sha, out.buf, 41);
	sb_free(&out);
}

/* A commit in w, pushed to origin when push. */
static bool commit(int i, bool push)
{
	return sh("cd w && echo %d >f%d && " GIT " add f%d && GIT_COMMITTER_DATE='%d +0000' " GIT " commit -q -m 'change %d'%s",
		  i, i, i, 1700000000 + i, i, push ? " && git push -q ../origin.git main" : "");
}

/* origin (bare) with c0..c2, the tree cloned from it (its remote
 * "origin"), kab's clone of the tree, then c3 and c4 on origin only. */
static bool make_repos(bool root)
{
	snprintf(tree, sizeof(tree), "%s/tree", top);
	snprintf(origin, sizeof(origin), "%s/origin.git", top);
	if (!sh(GIT " init -q w") || !commit(0, false) || !commit(1, false) || !commit(2, false) ||
	    !sh("git clone -q --bare w origin.git && git clone -q origin.git tree"))
		return false;
	for (int i = 0; i < 3; i++) {
		char spec[16];
		snprintf(spec, sizeof(spec), "HEAD~%d", 2 - i);
		rev(tree, spec, c[i]);
	}
	if (!commit(3, true) || !commit(4, true))
		return false;
	rev(origin, "main~1", c[3]);
	rev(origin, "main", c[4]);
	if (kbuild_clone_dir(work, tree, kclone, sizeof(kclone)) < 0)
		return false;
	/* the work directory root's and searchable, the clone the build
	 * user's (as a first build leaves them); the rest readable by it */
	if (!sh("chmod 0711 . && mkdir -m 0711 work && chmod -R a+rX tree origin.git && mkdir -p \"$(dirname %s)\" && "
		"git clone -q --shared --no-checkout tree %s",
		kclone, kclone))
		return false;
	return !root || sh("chown -R %s: %s", KBUILD_USER, kclone);
}

/* variant B's lines: the tree and what it builds (a track, a base) */
static const char *tree_lines(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "tree = %s\n%s\nconfig = defconfig", tree, what);
	return buf;
}

static double value(void *ctx, const struct store_step *step)
{
	(void)ctx;
	return step->variant ? 0.33 : 0.3;
}

/* A done job of two kernel builds of the tree: A at c0, B as variant_b
 * says (a track, a base, or build = ID), with the metric recorded. */
static int64_t source_job(struct store *st, const char *name, const char *variant_b, const int64_t *builds)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "[job]\nname = %s\npairs = 2\n[swap]\ndevice = none\n"
		 "[variant A]\nname = base\nkernel = build\ntree = %s\nbase = %s\nconfig = defconfig\n"
		 "[variant B]\nname = head\nkernel = build\n",
		 name, tree, c[0]);
	size_t n = strlen(text);
	snprintf(text + n, sizeof(text) - n, "%s\n[workload w]\ntype = command\ncommand = true\n", variant_b);
	struct job *j = t_parse_job(text);
	int64_t id = 0;
	T_CHECK(j && jl_submit(st, j, "unit", &id, NULL) == 0);
	job_free(j);
	if (builds)
		T_EQ_INT(store_variant_builds_set(st, id, builds, 2), 0);
	t_finish_runs(st, id, "time.wall_s", "s", value, NULL);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_QUEUED), JOB_RUNNING, NULL), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), JOB_DONE, NULL), 0);
	return id;
}

/* A build of the tree recorded as kab build records one: base_ref the
 * track ("origin main") or a ref, at sha. */
static int64_t add_build(struct store *st, const char *base_ref, const char *sha)
{
	struct store_build b = { .status = BUILD_BUILDING };
	b.tree = tree;
	b.base_ref = (char *)base_ref;
	snprintf(b.base_sha, sizeof(b.base_sha), "%s", sha);
	b.config_source = "defconfig";
	snprintf(b.config_hash, sizeof(b.config_hash), "c0");
	snprintf(b.inputs_key, sizeof(b.inputs_key), "k%.20s", sha);
	snprintf(b.kind, sizeof(b.kind), "build");
	int64_t id = 0;
	T_EQ_INT(store_build_begin(st, &b, &id), 0);
	b.id = id;
	b.status = BUILD_OK;
	T_EQ_INT(store_build_finish(st, &b), 0);
	return id;
}

static size_t recorded(struct store *st)
{
	struct store_bisect *v = NULL;
	size_t n = 0;
	T_EQ_INT(store_bisect_page(st, 0, 100, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		store_bisect_clear(&v[i]);
	free(v);
	return n;
}

static bool in_clone(const char *sha)
{
	char spec[64];
	snprintf(spec, sizeof(spec), "%s^{commit}", sha);
	/* the clone is the build user's when the test is root */
	char *argv[] = { "git", "-c", "safe.directory=*", "-C", kclone, "cat-file", "-e", spec, NULL };
	return krun_ok(argv, NULL, NULL);
}

static bool has(const struct strbuf *sb, const char *what)
{
	bool yes = sb->buf && strstr(sb->buf, what);
	if (!yes)
		fprintf(stderr, "  wanted \"%s\" in: %s\n", what, sb->buf ? sb->buf : "(nothing)");
	return yes;
}

/* A refusal: the code, err's start, and nothing recorded. */
static void refused(struct store *st, const struct bisect_env *env, const struct bisect_ask *a, int want,
		    const char *start, struct strbuf *err)
{
	size_t before = recorded(st);
	int64_t id = -1;
	sb_free(err);
	T_EQ_INT(bisect_create(st, env, a, &id, err), want);
	if (getenv("T_DEBUG"))
		fprintf(stderr, "  %d: %s\n", want, err->buf ? err->buf : "");
	T_CHECK(has(err, start) && strncmp(err->buf, start, strlen(start)) == 0);
	T_EQ_INT(id, -1);
	T_EQ_INT(recorded(st), before);
}

static void test_tracked(struct store *st, const struct bisect_env *env)
{
	char lines[PATH_MAX + 128];
	int64_t src = source_job(st, "fetch-track", tree_lines(lines, sizeof(lines), "track = origin main"), NULL);
	struct bisect_ask a = { .job = src, .good = c[0], .bad = c[3], .metric = "time.wall_s", .submitter = "unit" };
	struct strbuf err = { 0 };
	int64_t id = 0;
	T_CHECK(!in_clone(c[3]));
	/* the tree's lock held by a build: no wait, no fetch, nothing recorded */
	char root[PATH_MAX], lock[PATH_MAX + 8];
	kbuild_tree_dir(work, tree, root, sizeof(root));
	snprintf(lock, sizeof(lock), "%s/lock", root);
	T_EQ_INT(util_mkdir_p(root, 0755), 0);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	T_CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
	double t0 = util_mono_now();
	refused(st, env, &a, -EBUSY, "tree: bad \"", &err);
	T_CHECK(util_mono_now() - t0 < 10);
	T_CHECK(has(&err, "branch main of remote origin, which the job's variant tracks, cannot be fetched now: ") &&
		has(&err, "a build of the tree holds its lock") && has(&err, "ask again when that build ends"));
	T_CHECK(!in_clone(c[3]));
	if (fd >= 0)
		close(fd);

	/* BAD only origin has: fetched into kab's clone, accepted */
	sb_free(&err);
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	if (err.len)
		fprintf(stderr, "  said: %s\n", err.buf);
	T_CHECK(in_clone(c[3]));
	struct store_bisect b;
	T_EQ_INT(store_bisect_get(st, id, &b), 0);
	T_EQ_STR(b.bad, c[3]);
	T_EQ_STR(b.good, c[0]);
	store_bisect_clear(&b);
	sb_free(&err);
	T_EQ_INT(bisect_cancel(st, env, id, "unit", &err), 0);

	/* nowhere, even on the branch just fetched: 400 naming the field */
	a.bad = "no-such-rev";
	refused(st, env, &a, -EINVAL, "bad: \"no-such-rev\" is not a commit in ", &err);
	T_CHECK(has(&err, ", nor on branch main of remote origin, fetched just now: give a sha, branch or tag"));
	/* GOOD unknown too: one fetch, the first unknown named */
	a.good = "nor-this";
	refused(st, env, &a, -EINVAL, "good: \"nor-this\" is not a commit", &err);
	a.good = c[0];

	/* the remote gone: the tree, remote, branch and git's message; 502 */
	char c5[41];
	T_CHECK(commit(5, true));
	rev(origin, "main", c5);
	T_CHECK(sh("mv origin.git origin.gone"));
	a.bad = c5;
	refused(st, env, &a, -EHOSTUNREACH, "tree: bad \"", &err);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof(want),
		 "is in neither %s nor kab's clone of it, and fetching the branch the job's variant tracks failed: ", tree);
	T_CHECK(has(&err, want) && has(&err, "cannot fetch branch main from remote origin (") && has(&err, origin) &&
		has(&err, "origin.git"));
	T_CHECK(has(&err, "fatal: ") || has(&err, "error: "));
	T_CHECK(!in_clone(c5));
	T_CHECK(sh("mv origin.gone origin.git"));
	sb_free(&err);
}

/* A variant that boots a recorded build of a track (build = ID, base ref
 * "origin main"): the build's track is fetched. One that tracks nothing
 * fetches nothing. */
static void test_recorded(struct store *st, const struct bisect_env *env)
{
	int64_t builds[2] = { add_build(st, c[0], c[0]), add_build(st, "origin main", c[2]) };
	char b_line[64];
	snprintf(b_line, sizeof(b_line), "build = %lld", (long long)builds[1]);
	int64_t src = source_job(st, "fetch-recorded", b_line, builds);
	char c6[41];
	T_CHECK(commit(6, true));
	rev(origin, "main", c6);
	struct bisect_ask a = { .job = src, .good = c[0], .bad = c6, .metric = "time.wall_s", .submitter = "unit" };
	struct strbuf err = { 0 };
	int64_t id = 0;
	T_CHECK(!in_clone(c6));
	T_EQ_INT(bisect_create(st, env, &a, &id, &err), 0);
	if (err.len)
		fprintf(stderr, "  said: %s\n", err.buf);
	T_CHECK(in_clone(c6));
	sb_free(&err);
	T_EQ_INT(bisect_cancel(st, env, id, "unit", &err), 0);

	/* a base that names no track: nothing fetched, 400 as before */
	T_CHECK(commit(7, true));
	char c7[41];
	rev(origin, "main", c7);
	char base[64], lines[PATH_MAX + 128];
	snprintf(base, sizeof(base), "base = %s", c[2]);
	int64_t plain = source_job(st, "fetch-plain", tree_lines(lines, sizeof(lines), base), NULL);
	struct bisect_ask p = { .job = plain, .good = c[0], .bad = c7, .metric = "time.wall_s" };
	refused(st, env, &p, -EINVAL, "bad: \"", &err);
	T_CHECK(!strstr(err.buf, "fetched") && !in_clone(c7));
	sb_free(&err);
}

typedef void (*handler_t)(struct api *, const struct httpd_req *, struct httpd_resp *);

/* kabd's door: the fetch's failures as 502 and 409, and nothing recorded. */
static void test_api(struct store *st)
{
	char lines[PATH_MAX + 128];
	int64_t src = source_job(st, "fetch-api", tree_lines(lines, sizeof(lines), "track = origin main"), NULL);
	char qdb[64];
	t_db_path(qdb, sizeof(qdb), "/tmp/kab-unit-bisectfq-XXXXXX", NULL);
	struct queue *q = NULL;
	T_EQ_INT(queue_start(qdb, pthread_self(), &q), 0);
	if (!q)
		return;
	struct api a = { .db_path = store_path(st), .queue = q };
	struct httpd_resp rs = { 0 };
	char job[24];
	snprintf(job, sizeof(job), "%lld", (long long)src);
	T_CHECK(commit(8, true));
	char c8[41];
	rev(origin, "main", c8);
	const char *const args[] = { "job", job, "good", c[0], "bad", c8, "metric", "time.wall_s", NULL };
	struct httpd_req rq = { .method = "POST", .path = "/bisections", .args = args, .submitter = "token" };
	size_t before = recorded(st);
	T_CHECK(sh("mv origin.git origin.gone"));
	api_bisections_create(&a, &rq, &rs);
	T_EQ_INT(rs.status, 502);
	T_CHECK(has(&rs.body, "tree: bad ") && has(&rs.body, "cannot fetch branch main from remote origin"));
	T_CHECK(sh("mv origin.gone origin.git"));
	char root[PATH_MAX], lock[PATH_MAX + 8];
	kbuild_tree_dir(work, tree, root, sizeof(root));
	snprintf(lock, sizeof(lock), "%s/lock", root);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	T_CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
	sb_free(&rs.body);
	rs = (struct httpd_resp){ 0 };
	api_bisections_create(&a, &rq, &rs);
	T_EQ_INT(rs.status, 409);
	T_CHECK(has(&rs.body, "cannot be fetched now"));
	if (fd >= 0)
		close(fd);
	T_EQ_INT(recorded(st), before);
	sb_free(&rs.body);
	rs = (struct httpd_resp){ 0 };
	api_bisections_create(&a, &rq, &rs);
	T_EQ_INT(rs.status, 201);
	T_EQ_INT(recorded(st), before + 1);
	sb_free(&rs.body);
	queue_stop(q);
}

int main(void)
{
	log_quiet = true;
	if (!mkdtemp(top)) {
		t_skip("a bisection's fetch", "mkdtemp failed");
		return t_done("test_bisect_fetch");
	}
	/* kabd's queue takes the work directory from kab's configuration, as
	 * --work-dir sets it; the kernels directory is never written by a
	 * fetch, but named */
	char kernels[PATH_MAX + 16];
	snprintf(work, sizeof(work), "%s/work", top);
	snprintf(kernels, sizeof(kernels), "%s/kernels", top);
	struct diags d = { 0 };
	T_EQ_INT(config_use_flag(CONFIG_KBUILD_WORK, "--work-dir", work, &d), 0);
	T_EQ_INT(config_use_flag(CONFIG_KERNELS_DIR, "--kernels-dir", kernels, &d), 0);
	diags_free(&d);
	struct krun_user u;
	struct strbuf why = { 0 };
	int as = kbuser_lookup(&u, &why);
	sb_free(&why);
	if (!util_find_program("git", NULL, 0))
		t_skip("a bisection's fetch", "no git");
	else if (as < 0)
		t_skip("a bisection's fetch", "root, and no build user " KBUILD_USER " to run git as");
	else if (!make_repos(as > 0))
		t_skip("a bisection's fetch", "the repositories could not be made");
	else {
		char path[64];
		t_db_path(path, sizeof(path), "/tmp/kab-unit-bisectf-XXXXXX", NULL);
		struct store *st = NULL;
		T_EQ_INT(store_open(path, &st), 0);
		struct bisect_env env = { .work_dir = work, .git_user = as > 0 ? &u : NULL, .no_machine_checks = true };
		if (st) {
			test_tracked(st, &env);
			test_recorded(st, &env);
			test_api(st);
			store_close(st);
		}
	}
	util_remove_tree(top);
	return t_done("test_bisect_fetch");
}
