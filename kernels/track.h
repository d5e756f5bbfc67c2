/* A build that follows a branch (a job's track = REMOTE BRANCH): the
 * names checked before git sees them, the branch looked up on its remote
 * at check time, and at run time fetched into kab's clone of the tree,
 * its head resolved to a commit and compared with the previous night's.
 * The tree itself is never written: the fetch goes into the build's
 * worktree (WORK/<tree key>/src), which the build user owns. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct krun_user;

/* Bounds of git's network calls (they run under timeout(1)): ls-remote
 * at check time, fetch at run time. */
#define KTRACK_CHECK_TIMEOUT_S 30
#define KTRACK_FETCH_TIMEOUT_S 600
/* Longest remote and branch names kab takes. */
#define KTRACK_NAME_MAX 128

/* Whether name can be a remote's name (remote_ok) or a branch's
 * (branch_ok) as kab passes them to git: not empty, at most
 * KTRACK_NAME_MAX bytes, no leading '-', and git's ref-name rules (no
 * control characters, spaces, ~ ^ : ? * [ \, no "..", "@{", "//", no
 * component starting with '.' or ending in ".lock", no leading or
 * trailing '/', no trailing '.', not "@"; git takes the same rules for
 * a remote's name). false with *why set to what is wrong. Machine-free:
 * the job parser calls them. */
bool ktrack_remote_ok(const char *name, const char **why);
bool ktrack_branch_ok(const char *name, const char **why);

/* A branch head as resolved: the commit, its subject line and committer
 * date (epoch seconds). */
struct ktrack_head {
	char sha[41];
	char subject[256];
	double date;
};

/* Check time: remote is one of tree's remotes and branch is a head on it
 * (git ls-remote --heads of its URL, bounded by KTRACK_CHECK_TIMEOUT_S),
 * git as u (the build user; NULL: as kab). 0 with ret->sha the head (no
 * subject or date: nothing is fetched); -ENOENT: no such remote (why
 * names the tree's remotes); -ESRCH: the remote has no such branch (why
 * with a close name when there is one); -EHOSTUNREACH: the remote could
 * not be reached or listed in time (why with git's message); -EINVAL: a
 * URL kab does not pass to git. Nothing is written. */
int ktrack_check(const char *tree, const char *remote, const char *branch, const struct krun_user *u,
		 struct ktrack_head *ret, struct strbuf *why);

/* The fetch URL of tree's remote (git remote get-url, insteadOf applied),
 * made absolute when it is a path relative to the tree. 0, or -ENOENT
 * (no such remote) / -EINVAL (a URL kab does not pass to git: a leading
 * '-', control characters) with why. */
int ktrack_remote_url(const char *tree, const char *remote, const struct krun_user *u, char *const *env, char *url,
		      size_t len, struct strbuf *why);

/* The repository path of a remote on this machine (an absolute path or
 * a file:// URL), or NULL for one elsewhere. */
const char *ktrack_local_path(const char *url);

/* Run time, in src (a clone of the tree the caller owns and has locked),
 * as u (NULL: as kab) with env added: fetches url's refs/heads/branch
 * into refs/kab/track/REMOTE/BRANCH (no tags, no prompts, bounded by
 * timeout_s, 0: KTRACK_FETCH_TIMEOUT_S) and resolves it. 0 with *ret
 * set; -EIO with err naming remote, branch, URL and git's message (or
 * the timeout). */
int ktrack_fetch(const char *src, const char *url, const char *remote, const char *branch, const struct krun_user *u,
		 char *const *env, unsigned timeout_s, struct ktrack_head *ret, struct strbuf *err);

/* A build's base ref that names a track ("REMOTE BRANCH", as a build of
 * track = REMOTE BRANCH records it), split and checked (remote_ok,
 * branch_ok): true with both names set; false for any other ref (a tag,
 * a sha, a branch of the tree). */
bool ktrack_parse_ref(const char *ref, char remote[KTRACK_NAME_MAX + 1], char branch[KTRACK_NAME_MAX + 1]);

/* The commit rev names in src: its sha, committer date and subject (as
 * kab stores it: esc.h), git as u with env (NULL: none). -EIO: git does
 * not know it. */
int ktrack_describe(const char *src, const char *rev, const struct krun_user *u, char *const *env, struct ktrack_head *ret);
/* How the head moved from prev, the previous night's commit (NULL or "":
 * the first night), to head, judged in src: 0 with *event "" (first
 * night, unchanged, or moved forward: prev is an ancestor of head) or
 * "force-pushed: <old12> is not an ancestor of <new12>"; when prev is no
 * longer in src or the tree, "unknown: ..." saying so. -EIO when git
 * could not tell (why in event). */
int ktrack_event(const char *src, const char *prev, const char *head, const struct krun_user *u, char *const *env,
		 char *event, size_t len);
