/* A build that follows a branch: its names checked before git sees them,
 * the branch looked up on its remote (check time) and fetched into kab's
 * clone of the tree (run time), the head compared with the night before.
 * git runs as the caller's user (the build user when kab is root), under
 * timeout(1) where it talks to the network, never prompting. */
#include "kernels/track.h"
#include "kernels/run.h"
#include "harness/base/esc.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The child's environment for git: the caller's entries, then no
 * credential prompt on a terminal and ssh without questions. */
struct git_env {
	char *v[16];
};

static void git_env_make(struct git_env *e, char *const *env)
{
	size_t n = 0;
	for (; env && env[n] && n + 3 < ARRAY_SIZE(e->v); n++)
		e->v[n] = env[n];
	e->v[n++] = "GIT_TERMINAL_PROMPT=0";
	e->v[n++] = "GIT_SSH_COMMAND=ssh -o BatchMode=yes";
	e->v[n] = NULL;
}

/* Runs argv (NULL-terminated) as u in dir; true when it exited 0. The
 * exit status goes to *ret_code (-1: it did not run or was killed). */
static bool run_git(char *const *argv, const struct krun_user *u, char *const *env, struct strbuf *out, int *ret_code)
{
	struct git_env e;
	git_env_make(&e, env);
	struct krun o = { .stdout_fd = -1, .log_fd = -1, .capture = out, .user = u, .env = e.v };
	int status = 0;
	int r = krun(argv, &o, &status);
	while (out->len && (out->buf[out->len - 1] == '\n' || out->buf[out->len - 1] == '\r'))
		out->buf[--out->len] = 0;
	*ret_code = r == 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return *ret_code == 0;
}

/* What git said, on one line: its fatal: or error: lines, else its
 * first line, cut to fit. */
static void git_says(const struct strbuf *out, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (const char *l = out->buf; l && *l && used + 1 < len;) {
		size_t n = strcspn(l, "\n");
		if (strncmp(l, "fatal: ", 7) == 0 || strncmp(l, "error: ", 7) == 0)
			used += (size_t)snprintf(buf + used, len - used, "%s%.*s", used ? "; " : "", (int)n, l);
		l += n + (l[n] == '\n');
	}
	if (!used && out->buf)
		snprintf(buf, len, "%.*s", (int)strcspn(out->buf, "\n"), out->buf);
	if (!buf[0])
		snprintf(buf, len, "no message");
	for (size_t n = strlen(buf); n && buf[n - 1] == '.';)
		buf[--n] = 0;
}

const char *ktrack_local_path(const char *url)
{
	return url[0] == '/' ? url : strncmp(url, "file:///", 8) == 0 ? url + 7 : NULL;
}

static bool is_sha(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == 40 && s[n] == 0;
}

/* A URL git takes as a path relative to the repository: no scheme, not
 * host:path, not absolute. */
static bool relative_path_url(const char *url)
{
	if (url[0] == '/' || strstr(url, "://"))
		return false;
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
	return !colon || (slash && slash < colon);
}

int ktrack_remote_url(const char *tree, const char *remote, const struct krun_user *u, char *const *env, char *url,
		      size_t len, struct strbuf *why)
{
	char safe[PATH_MAX + 32];
	snprintf(safe, sizeof(safe), "safe.directory=%s", tree);
	char *argv[] = { "git", "-c", safe, "-C", (char *)tree, "remote", "get-url", "--", (char *)remote, NULL };
	struct strbuf out = { 0 };
	int code, r = 0;
	if (!run_git(argv, u, env, &out, &code) || !out.len) {
		char said[512];
		git_says(&out, said, sizeof(said));
		sb_printf(why, "the tree %s has no remote \"%s\" (git remote get-url: %s)", tree, remote, said);
		r = -ENOENT;
	} else if (out.buf[0] == '-' || strpbrk(out.buf, "\n\r\t")) {
		sb_printf(why, "remote \"%s\" of %s has the URL \"%.200s\", which kab does not pass to git: give it a URL or an absolute path",
			  remote, tree, out.buf);
		r = -EINVAL;
	} else if (relative_path_url(out.buf)) {
		snprintf(url, len, "%s/%s", tree, out.buf);
	} else {
		snprintf(url, len, "%s", out.buf);
	}
	sb_free(&out);
	return r;
}

/* The tree's remotes, comma-separated, and whether remote is one. */
static bool list_remotes(const char *tree, const char *remote, const struct krun_user *u, struct strbuf *names)
{
	char safe[PATH_MAX + 32];
	snprintf(safe, sizeof(safe), "safe.directory=%s", tree);
	char *argv[] = { "git", "-c", safe, "-C", (char *)tree, "remote", NULL };
	struct strbuf out = { 0 };
	int code;
	bool found = false;
	if (run_git(argv, u, NULL, &out, &code))
		for (char *l = out.buf, *nl; l && *l; l = nl ? nl + 1 : NULL) {
			nl = strchr(l, '\n');
			if (nl)
				*nl = 0;
			found = found || strcmp(l, remote) == 0;
			sb_printf(names, "%s%s", names->len ? ", " : "", l);
		}
	sb_free(&out);
	return found;
}

/* The head of branch in ls-remote's output, and a close branch name
 * for a hint when there is none. */
static bool find_head(char *listing, const char *branch, char sha[41], char *hint, size_t hint_len)
{
	const char *names[64];
	size_t n = 0;
	char want[KTRACK_NAME_MAX + 16];
	snprintf(want, sizeof(want), "refs/heads/%s", branch);
	hint[0] = 0;
	for (char *l = listing, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		char *tab = strchr(l, '\t');
		if (!tab || tab - l != 40)
			continue;
		*tab = 0;
		if (!is_sha(l))
			continue;
		if (strcmp(tab + 1, want) == 0) {
			snprintf(sha, 41, "%s", l);
			return true;
		}
		if (strncmp(tab + 1, "refs/heads/", 11) == 0 && n < ARRAY_SIZE(names))
			names[n++] = tab + 12;
	}
	const char *h = util_did_you_mean(branch, names, n);
	if (h)
		snprintf(hint, hint_len, "%s", h);
	return false;
}

int ktrack_check(const char *tree, const char *remote, const char *branch, const struct krun_user *u,
		 struct ktrack_head *ret, struct strbuf *why)
{
	struct strbuf names = { 0 }, out = { 0 };
	char url[PATH_MAX + 256];
	int r;
	if (!list_remotes(tree, remote, u, &names)) {
		sb_printf(why, "the tree %s has no remote \"%s\" (its remotes: %s): add it (git -C %s remote add %s URL) or name one of those",
			  tree, remote, names.len ? names.buf : "none", tree, remote);
		r = -ENOENT;
		goto out;
	}
	if ((r = ktrack_remote_url(tree, remote, u, NULL, url, sizeof(url), why)) < 0)
		goto out;
	char bound[16];
	snprintf(bound, sizeof(bound), "%d", KTRACK_CHECK_TIMEOUT_S);
	/* a remote on this machine is read where it is: git's upload-pack
	 * would refuse another user's repository, and check time writes no
	 * git config that could say it is safe */
	const char *local = ktrack_local_path(url);
	char safe[PATH_MAX + 300];
	snprintf(safe, sizeof(safe), "safe.directory=%s", local ? local : "");
	char *remote_argv[] = { "timeout",   "-k",      "5",  bound, "git", "-c", "protocol.ext.allow=never",
				"ls-remote", "--heads", "--", url,   NULL };
	char *local_argv[] = {
		"timeout", "-k", "5", bound, "git", "-c", safe, "-C", (char *)local, "for-each-ref", "--format=%(objectname)%09%(refname)", "refs/heads/", NULL
	};
	int code;
	if (!run_git(local ? local_argv : remote_argv, u, NULL, &out, &code)) {
		char said[512];
		if (code == 124 || code == 137)
			snprintf(said, sizeof(said), "no answer in %d s", KTRACK_CHECK_TIMEOUT_S);
		else
			git_says(&out, said, sizeof(said));
		sb_printf(why, "remote %s (%s) could not be reached to look for branch %s: %s", remote, url, branch, said);
		r = -EHOSTUNREACH;
		goto out;
	}
	char sha[41], hint[KTRACK_NAME_MAX + 1];
	if (!find_head(out.buf, branch, sha, hint, sizeof(hint))) {
		sb_printf(why, "remote %s (%s) has no branch \"%s\"", remote, url, branch);
		if (hint[0])
			sb_printf(why, " (did you mean \"%s\"?)", hint);
		sb_printf(why, ": git ls-remote --heads %s lists its branches", remote);
		r = -ESRCH;
		goto out;
	}
	*ret = (struct ktrack_head){ 0 };
	snprintf(ret->sha, sizeof(ret->sha), "%s", sha);
	r = 0;
out:
	sb_free(&names);
	sb_free(&out);
	return r;
}

int ktrack_describe(const char *src, const char *rev, const struct krun_user *u, char *const *env, struct ktrack_head *ret)
{
	char *argv[] = { "git",       "-C", (char *)src, "log", "-1", "--no-show-signature", "--format=%H%n%ct%n%s",
			 (char *)rev, "--", NULL };
	struct strbuf out = { 0 };
	int code, r = -EIO;
	if (run_git(argv, u, env, &out, &code) && out.len > 41 && out.buf[40] == '\n') {
		char *date = out.buf + 41, *nl = strchr(date, '\n');
		uint64_t t;
		out.buf[40] = 0;
		if (nl)
			*nl = 0;
		if (is_sha(out.buf) && util_parse_u64(date, &t) == 0) {
			*ret = (struct ktrack_head){ .date = (double)t };
			snprintf(ret->sha, sizeof(ret->sha), "%s", out.buf);
			/* the subject is whoever committed's: kab stores and prints
			 * it with what a terminal would act on shown (esc.h) */
			esc_text_buf(nl ? nl + 1 : "", ret->subject, sizeof(ret->subject), 0);
			r = 0;
		}
	}
	sb_free(&out);
	return r;
}

int ktrack_fetch(const char *src, const char *url, const char *remote, const char *branch, const struct krun_user *u,
		 char *const *env, unsigned timeout_s, struct ktrack_head *ret, struct strbuf *err)
{
	char refspec[2 * KTRACK_NAME_MAX + 64], ref[2 * KTRACK_NAME_MAX + 32], bound[16];
	unsigned limit = timeout_s ? timeout_s : KTRACK_FETCH_TIMEOUT_S;
	snprintf(ref, sizeof(ref), "refs/kab/track/%s/%s", remote, branch);
	snprintf(refspec, sizeof(refspec), "+refs/heads/%s:%s", branch, ref);
	snprintf(bound, sizeof(bound), "%u", limit);
	/* no gc: the previous night's head, unreachable after a force-push,
	 * must still be there for the ancestry check */
	char *argv[] = { "timeout",
			 "-k",
			 "10",
			 bound,
			 "git",
			 "-c",
			 "protocol.ext.allow=never",
			 "-c",
			 "gc.auto=0",
			 "-C",
			 (char *)src,
			 "fetch",
			 "-q",
			 "--no-tags",
			 "--no-write-fetch-head",
			 "--no-recurse-submodules",
			 "--",
			 (char *)url,
			 refspec,
			 NULL };
	struct strbuf out = { 0 };
	int code;
	if (!run_git(argv, u, env, &out, &code)) {
		char said[768];
		if (code == 124 || code == 137)
			snprintf(said, sizeof(said), "no answer in %u s (git fetch was stopped)", limit);
		else
			git_says(&out, said, sizeof(said));
		sb_printf(err, "track = %s %s: cannot fetch branch %s from remote %s (%s): %s", remote, branch, branch,
			  remote, url, said);
		sb_free(&out);
		return -EIO;
	}
	sb_free(&out);
	char spec[sizeof(ref) + 16];
	snprintf(spec, sizeof(spec), "%s^{commit}", ref);
	if (ktrack_describe(src, spec, u, env, ret) < 0) {
		sb_printf(err, "track = %s %s: fetched branch %s from %s, but %s is not a commit in %s", remote, branch,
			  branch, url, ref, src);
		return -EIO;
	}
	return 0;
}

int ktrack_event(const char *src, const char *prev, const char *head, const struct krun_user *u, char *const *env,
		 char *event, size_t len)
{
	event[0] = 0;
	if (!prev || !prev[0] || strcmp(prev, head) == 0)
		return 0;
	if (!is_sha(prev) || !is_sha(head)) {
		snprintf(event, len, "bad commit names \"%.48s\", \"%.48s\"", prev, head);
		return -EIO;
	}
	char spec[64];
	snprintf(spec, sizeof(spec), "%s^{commit}", prev);
	char *have[] = { "git", "-C", (char *)src, "cat-file", "-e", spec, NULL };
	char *anc[] = { "git", "-C", (char *)src, "merge-base", "--is-ancestor", (char *)prev, (char *)head, NULL };
	struct strbuf out = { 0 };
	int code, r = 0;
	if (!run_git(have, u, env, &out, &code))
		snprintf(event, len, "unknown: the previous night's %.12s is no longer in kab's clone or the tree, so whether %.12s follows it cannot be told",
			 prev, head);
	else if (run_git(anc, u, env, &out, &code))
		event[0] = 0;
	else if (code == 1)
		snprintf(event, len, "force-pushed: %.12s is not an ancestor of %.12s", prev, head);
	else {
		char said[256];
		git_says(&out, said, sizeof(said));
		snprintf(event, len, "git merge-base --is-ancestor %.12s %.12s failed: %s", prev, head, said);
		r = -EIO;
	}
	sb_free(&out);
	return r;
}
