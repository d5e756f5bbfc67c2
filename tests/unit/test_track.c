/* track = REMOTE BRANCH: the names kab passes to git, the branch looked
 * up and fetched from a real local "origin" made here (git as the
 * current user: the unit test has no build user), the head's move
 * (forward, unchanged, force-pushed backwards, a commit no longer
 * there), the night's commit on the variant row and the previous
 * night's found by job name, and the job file's track lines. */
#include "t.h"
#include "t_job.h"
#include "kernels/run.h"
#include "kernels/track.h"
#include "harness/job/job.h"
#include "harness/job/job_store.h"
#include "db/store.h"
#include "db/store_track.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static void test_names(void)
{
	const char *why = NULL;
	static const char *const good[] = { "main", "mm-unstable", "for-next/core", "v6.1.y", "a@b", "x.lock2" };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		T_CHECK(ktrack_branch_ok(good[i], &why));
	static const char *const bad[] = { "",       "-x",       "--upload-pack=touch",
					   "a..b",   "a b",      "a~1",
					   "a^",     "a:b",      "a?",
					   "a*",     "a[",       "a\\b",
					   "/a",     "a/",       "a.",
					   "a//b",   ".a",       "a/.b",
					   "a.lock", "a.lock/b", "@",
					   "a@{1}",  "a\tb",     "a\x7f" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		T_CHECK(!ktrack_branch_ok(bad[i], &why) && why != NULL);
	}
	char longname[KTRACK_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	T_CHECK(!ktrack_branch_ok(longname, &why) && strstr(why, "longer"));
	T_CHECK(!ktrack_remote_ok("-o", &why) && strstr(why, "option"));
	T_CHECK(ktrack_remote_ok("origin", &why));
}

/* sh -c CMD in dir; true when it exited 0. */
static bool sh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool sh(const char *dir, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	char *argv[] = { "sh", "-c", cmd, NULL };
	return krun_ok(argv, dir, NULL);
}

static void head_of(const char *repo, const char *rev, char sha[41])
{
	char *argv[] = { "git", "-C", (char *)repo, "rev-parse", (char *)rev, NULL };
	struct strbuf out = { 0 };
	sha[0] = 0;
	if (krun_ok(argv, NULL, &out) && out.len == 40)
		memcpy(sha, out.buf, 41);
	sb_free(&out);
}

#define GIT "git -c user.name=kab -c user.email=kab@localhost -c init.defaultBranch=main"

static void test_git(const char *top)
{
	char origin[4200], tree[4200], src[4200], url[4200];
	snprintf(origin, sizeof(origin), "%s/origin.git", top);
	snprintf(tree, sizeof(tree), "%s/tree", top);
	snprintf(src, sizeof(src), "%s/src", top);
	/* origin: two commits on main; the tree: a clone with its remote; kab's clone of the tree */
	T_CHECK(sh(top, GIT " init -q w && cd w && echo 1 >f && " GIT " add f && GIT_COMMITTER_DATE='1700000000 +0000' " GIT
			    " commit -q -m 'night one' && " GIT " clone -q --bare . ../origin.git && " GIT
			    " clone -q ../origin.git ../tree && " GIT " clone -q --shared --no-checkout ../tree ../src"));
	struct strbuf why = { 0 };
	char real_url[4200], real_origin[4200];
	T_EQ_INT(ktrack_remote_url(tree, "origin", NULL, NULL, url, sizeof(url), &why), 0);
	T_CHECK(realpath(url, real_url) && realpath(origin, real_origin) && strcmp(real_url, real_origin) == 0);
	T_EQ_INT(ktrack_remote_url(tree, "upstream", NULL, NULL, url, sizeof(url), &why), -ENOENT);
	sb_free(&why);

	/* check time: the branch, an unknown branch (with a hint), an unknown remote, a remote gone */
	struct ktrack_head head;
	char one[41];
	head_of(origin, "main", one);
	T_EQ_INT(ktrack_check(tree, "origin", "main", NULL, &head, &why), 0);
	T_EQ_STR(head.sha, one);
	T_EQ_INT(ktrack_check(tree, "origin", "mian", NULL, &head, &why), -ESRCH);
	T_CHECK(why.buf && strstr(why.buf, "has no branch \"mian\" (did you mean \"main\"?)"));
	sb_free(&why);
	T_EQ_INT(ktrack_check(tree, "orgin", "main", NULL, &head, &why), -ENOENT);
	T_CHECK(why.buf && strstr(why.buf, "has no remote \"orgin\" (its remotes: origin)"));
	sb_free(&why);
	T_CHECK(sh(tree, "git remote add gone %s/nonexistent.git", top));
	T_EQ_INT(ktrack_check(tree, "gone", "main", NULL, &head, &why), -EHOSTUNREACH);
	T_CHECK(why.buf && strstr(why.buf, "could not be reached"));
	sb_free(&why);

	/* run time: fetched into kab's clone, its subject and committer date */
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &head, &why), 0);
	T_EQ_STR(head.sha, one);
	T_EQ_STR(head.subject, "night one");
	T_NEAR(head.date, 1700000000, 0);
	char ev[512];
	T_EQ_INT(ktrack_event(src, NULL, head.sha, NULL, NULL, ev, sizeof(ev)), 0);
	T_EQ_STR(ev, "");
	T_EQ_INT(ktrack_event(src, one, one, NULL, NULL, ev, sizeof(ev)), 0);
	T_EQ_STR(ev, "");

	/* night two moves forward */
	T_CHECK(sh(top, "cd w && echo 2 >f && " GIT " commit -q -am 'night two' && git push -q ../origin.git main"));
	char two[41];
	head_of(origin, "main", two);
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &head, &why), 0);
	T_EQ_STR(head.sha, two);
	T_EQ_INT(ktrack_event(src, one, two, NULL, NULL, ev, sizeof(ev)), 0);
	T_EQ_STR(ev, "");

	/* night three: main force-pushed back to night one, then to a rewrite */
	T_CHECK(sh(top, "cd w && git push -q -f ../origin.git %s:main", one));
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &head, &why), 0);
	T_EQ_STR(head.sha, one);
	T_EQ_INT(ktrack_event(src, two, one, NULL, NULL, ev, sizeof(ev)), 0);
	char want[128];
	snprintf(want, sizeof(want), "force-pushed: %.12s is not an ancestor of %.12s", two, one);
	T_EQ_STR(ev, want);
	/* a previous night's commit this clone never had */
	T_EQ_INT(ktrack_event(src, "0123456789abcdef0123456789abcdef01234567", one, NULL, NULL, ev, sizeof(ev)), 0);
	static const char unknown[] = "unknown: the previous night's 0123456789ab is no longer in kab's clone or the tree";
	T_CHECK(strncmp(ev, unknown, strlen(unknown)) == 0);

	/* fetch failures: a branch deleted, the remote gone; nothing resolved */
	T_CHECK(sh(origin, "git branch -q -m main old"));
	struct ktrack_head untouched = { .sha = "x" };
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &untouched, &why), -EIO);
	T_CHECK(why.buf && strstr(why.buf, "track = origin main: cannot fetch branch main from remote origin (") &&
		strstr(why.buf, "couldn't find remote ref refs/heads/main"));
	T_EQ_STR(untouched.sha, "x");
	sb_free(&why);
	snprintf(url, sizeof(url), "%s/moved.git", top);
	T_EQ_INT(ktrack_fetch(src, url, "origin", "main", NULL, NULL, 0, &untouched, &why), -EIO);
	T_CHECK(why.buf && strstr(why.buf, "does not appear to be a git repository"));
	sb_free(&why);
	T_CHECK(ktrack_local_path("/srv/linux.git") && ktrack_local_path("file:///srv/x") &&
		strcmp(ktrack_local_path("file:///srv/x"), "/srv/x") == 0 && !ktrack_local_path("https://git.kernel.org/x"));
}

static const char job_text[] = "[job]\nname = nightly\nswitch = reboot\n\n"
			       "[variant A]\nname = base\nkernel = build\ntree = /src/linux\nbase = v6.1\n\n"
			       "[variant B]\nname = head\nkernel = build\ntree = /src/linux\ntrack = origin  mm-unstable\n\n"
			       "[workload w]\ntype = command\ncommand = /bin/true\n";

/* The commit of each night on its variant row; the previous night's by
 * job name, variant and track. */
/* A commit whose subject holds escape sequences, a C1 CSI, a byte of no
 * UTF-8 (git keeps a message's bytes as given): the head's subject, which
 * kab stores and prints, has them shown, and is cut at a character. */
static void test_hostile_subject(const char *top)
{
	char origin[4200], src[4200];
	snprintf(origin, sizeof(origin), "%s/hostile.git", top);
	snprintf(src, sizeof(src), "%s/hostile-src", top);
	/* git commit would take the byte for Latin-1 and convert it: the
	 * commit object is written as it is, as any other git may have */
	T_CHECK(sh(top, GIT " init -q hw && cd hw && echo 1 >f && " GIT " add f && t=$(git write-tree) && "
			    "c=$(printf 'tree %%s\\nauthor kab <kab@localhost> 1700000000 +0000\\n"
			    "committer kab <kab@localhost> 1700000000 +0000\\n\\n"
			    "mm: \\033[2J\\033]0;owned\\007\\302\\23331m caf\\351\\n' $t | git hash-object -t commit -w --stdin) && "
			    "git update-ref refs/heads/main $c && " GIT " clone -q --bare . ../hostile.git && " GIT
			    " clone -q --shared --no-checkout ../hostile.git ../hostile-src"));
	struct ktrack_head head;
	struct strbuf why = { 0 };
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &head, &why), 0);
	T_EQ_STR(head.subject, "mm: \\x1b[2J\\x1b]0;owned\\x07\\u009b31m caf\\xe9");
	/* a subject longer than the head's field, ending in a 3-byte character */
	T_CHECK(sh(top, "cd hw && echo 2 >f && " GIT
			" commit -q -am \"$(printf '%%0253d\\342\\206\\222' 0)\" && git push -q ../hostile.git main"));
	T_EQ_INT(ktrack_fetch(src, origin, "origin", "main", NULL, NULL, 0, &head, &why), 0);
	T_EQ_INT(strlen(head.subject), 253);
	sb_free(&why);
}

static void test_store(void)
{
	char path[256];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-track-XXXXXX", NULL);
	struct store *st = NULL;
	T_EQ_INT(store_open(path, &st), 0);
	if (!st)
		return;
	struct job *j = t_parse_job(job_text);
	int64_t n1 = 0, n2 = 0, n3 = 0;
	T_CHECK(j && job_store_create(st, j, &n1) == 0 && job_store_create(st, j, &n2) == 0 && job_store_create(st, j, &n3) == 0);
	char sha[41];
	T_EQ_INT(store_track_previous(st, "nightly", "head", "origin mm-unstable", n1, sha), -ENOENT);
	struct store_track t = {
		.track = "origin mm-unstable", .sha = "1111111111111111111111111111111111111111", .subject = "one", .date = 1700000000
	};
	T_EQ_INT(store_variant_track_set(st, n1, 1, &t), 0);
	struct store_track got;
	T_EQ_INT(store_variant_track_get(st, n1, 1, &got), 0);
	T_EQ_STR(got.sha, t.sha);
	T_EQ_STR(got.subject, "one");
	T_EQ_STR(got.event, "");
	T_NEAR(got.date, 1700000000, 0);
	T_EQ_INT(store_variant_track_get(st, n1, 0, &got), -ENOENT);
	T_EQ_INT(store_variant_track_get(st, n2, 1, &got), -ENOENT);
	T_EQ_INT(store_track_previous(st, "nightly", "head", "origin mm-unstable", n2, sha), 0);
	T_EQ_STR(sha, t.sha);
	T_EQ_INT(store_track_previous(st, "nightly", "head", "origin mm-stable", n2, sha), -ENOENT);
	T_EQ_INT(store_track_previous(st, "other", "head", "origin mm-unstable", n2, sha), -ENOENT);
	T_EQ_INT(store_track_previous(st, "nightly", "base", "origin mm-unstable", n2, sha), -ENOENT);
	/* night two failed its fetch: no commit; night three finds night one's */
	struct store_track t3 = t;
	snprintf(t3.sha, sizeof(t3.sha), "3333333333333333333333333333333333333333");
	snprintf(t3.event, sizeof(t3.event), "force-pushed: 111111111111 is not an ancestor of 333333333333");
	T_EQ_INT(store_track_previous(st, "nightly", "head", "origin mm-unstable", n3, sha), 0);
	T_EQ_STR(sha, t.sha);
	T_EQ_INT(store_variant_track_set(st, n3, 1, &t3), 0);
	T_EQ_INT(store_variant_track_get(st, n3, 1, &got), 0);
	T_EQ_STR(got.event, t3.event);
	T_EQ_INT(store_track_previous(st, "nightly", "head", "origin mm-unstable", 0, sha), 0);
	T_EQ_STR(sha, t3.sha);
	T_EQ_INT(store_variant_track_set(st, n3 + 10, 1, &t3), -ENOENT);
	job_free(j);
	store_close(st);
	unlink(path);
	char aux[300];
	snprintf(aux, sizeof(aux), "%s-wal", path);
	unlink(aux);
	snprintf(aux, sizeof(aux), "%s-shm", path);
	unlink(aux);
}

/* The job file's track line: parsed, printed normalized, parsed again. */
static void test_job(void)
{
	struct job *j = t_parse_job(job_text);
	T_CHECK(j != NULL);
	if (!j)
		return;
	T_EQ_STR(j->variants[1].track_remote, "origin");
	T_EQ_STR(j->variants[1].track_branch, "mm-unstable");
	T_EQ_INT(j->variants[1].track_line, 15);
	T_CHECK(j->variants[1].base == NULL && j->variants[0].track_remote == NULL);
	char *printed = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&printed, &len);
	job_print(j, f);
	fclose(f);
	T_CHECK(printed && strstr(printed, "\ntree = /src/linux\ntrack = origin mm-unstable\nconfig = running\n"));
	struct job *again = printed ? t_parse_job(printed) : NULL;
	T_CHECK(again && strcmp(again->variants[1].track_branch, "mm-unstable") == 0);
	job_free(again);
	free(printed);
	job_free(j);
}

int main(void)
{
	log_quiet = true;
	test_names();
	char top[] = "/tmp/kab-unit-track.XXXXXX";
	if (mkdtemp(top)) {
		test_git(top);
		test_hostile_subject(top);
		util_remove_tree(top);
	} else {
		T_CHECK(!"mkdtemp");
	}
	test_store();
	test_job();
	return t_done("test_track");
}
