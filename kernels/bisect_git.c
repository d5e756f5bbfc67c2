/* git bisect's own commands in a clone, and its answers read back: the
 * next commit ("[SHA] subject"), the first bad commit ("SHA is the first
 * bad commit") or the candidates when only skipped commits are left. */
#include "kernels/bisect_git.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>

/* git's output beyond this is not kept (a first bad commit's --stat). */
#define GIT_OUT_MAX (1u << 20)
/* A revision as kab passes it to git: short, no option, no space. */
#define REV_MAX 256

static const char *const mark_words[] = { "good", "bad", "skip" };

const char *kbisect_mark_name(enum kbisect_mark m)
{
	return util_word_name(mark_words, (int)ARRAY_SIZE(mark_words), (int)m);
}

static bool is_sha(const char *s, size_t len)
{
	if (len != KBISECT_SHA_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

/* git -C tree ARGS as g's user; 0 with *ret_status, out git's output
 * (stdout and stderr) without its trailing newlines. */
static int git_run_env(const struct kbisect_git *g, char *const *env, char *const *args, size_t n, struct strbuf *out, int *ret_status)
{
	char safe[4200];
	snprintf(safe, sizeof(safe), "safe.directory=%s", g->tree);
	char *argv[16] = { "git", "-c", safe, "-C", (char *)g->tree };
	size_t k = 5;
	if (n + k + 1 > ARRAY_SIZE(argv))
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	struct krun o = { .stdout_fd = -1, .log_fd = -1, .capture = out, .user = g->user, .env = env };
	int r = krun(argv, &o, ret_status);
	if (r < 0)
		return r;
	if (out->len > GIT_OUT_MAX)
		out->buf[out->len = GIT_OUT_MAX] = 0;
	while (out->len && (out->buf[out->len - 1] == '\n' || out->buf[out->len - 1] == '\r'))
		out->buf[--out->len] = 0;
	return 0;
}

static int git_run(const struct kbisect_git *g, char *const *args, size_t n, struct strbuf *out, int *ret_status)
{
	return git_run_env(g, NULL, args, n, out, ret_status);
}

/* git's message, first line, for an error. */
static void git_said(struct strbuf *err, const char *what, const struct kbisect_git *g, const struct strbuf *out)
{
	const char *m = out->buf ? out->buf : "";
	sb_printf(err, "%s in %s failed: %.*s", what, g->tree, (int)strcspn(m, "\n"), m);
}

static bool rev_ok(const char *rev)
{
	size_t n = strnlen(rev, REV_MAX + 1);
	return n > 0 && n <= REV_MAX && rev[0] != '-' && !strpbrk(rev, " \t\n");
}

/* rev-parse --verify of spec to a sha; -ENOENT when git knows none. */
static int verify(const struct kbisect_git *g, const char *spec, char sha[KBISECT_SHA_LEN + 1])
{
	char *args[] = { "rev-parse", "--verify", "--quiet", (char *)spec };
	struct strbuf out = { 0 };
	int status, r = git_run(g, args, ARRAY_SIZE(args), &out, &status);
	if (r >= 0)
		r = WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.buf && is_sha(out.buf, out.len) ? 0 : -ENOENT;
	if (r == 0)
		snprintf(sha, KBISECT_SHA_LEN + 1, "%s", out.buf);
	sb_free(&out);
	return r;
}

static int git_resolve(void *ctx, const char *rev, char sha[KBISECT_SHA_LEN + 1], struct strbuf *err)
{
	const struct kbisect_git *g = ctx;
	if (!rev || !rev_ok(rev)) {
		sb_printf(err, "revision \"%.64s\" is not one kab passes to git: at most %d characters, no leading '-', no blank",
			  rev ? rev : "", REV_MAX);
		return -EINVAL;
	}
	char spec[REV_MAX + 16];
	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	int r = verify(g, spec, sha);
	if (r == -ENOENT)
		sb_printf(err, "unknown revision \"%s\" in %s: no commit of that name (git rev-parse --verify %s)", rev,
			  g->tree, spec);
	else if (r < 0)
		sb_printf(err, "git rev-parse in %s: %s", g->tree, strerror(-r));
	return r;
}

static int git_is_ancestor(void *ctx, const char *ancestor, const char *sha, struct strbuf *err)
{
	const struct kbisect_git *g = ctx;
	char *args[] = { "merge-base", "--is-ancestor", (char *)ancestor, (char *)sha };
	struct strbuf out = { 0 };
	int status, r = git_run(g, args, ARRAY_SIZE(args), &out, &status);
	if (r >= 0 && WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		r = WEXITSTATUS(status) == 0;
	else if (r >= 0) {
		git_said(err, "git merge-base --is-ancestor", g, &out);
		r = -EIO;
	}
	sb_free(&out);
	return r;
}

static int git_parent(void *ctx, const char *sha, char parent[KBISECT_SHA_LEN + 1], struct strbuf *err)
{
	char spec[KBISECT_SHA_LEN + 8];
	snprintf(spec, sizeof(spec), "%.40s^1", sha);
	int r = verify(ctx, spec, parent);
	if (r < 0)
		sb_printf(err, "commit %.40s has no parent in %s", sha, ((const struct kbisect_git *)ctx)->tree);
	return r;
}

/* git ARGS that must exit 0: its output appended to out (NULL: dropped),
 * else -EIO with git's message in err. */
static int git_ok(const struct kbisect_git *g, char *const *args, size_t n, const char *what, struct strbuf *out, struct strbuf *err)
{
	struct strbuf o = { 0 };
	int status, r = git_run(g, args, n, &o, &status);
	if (r >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		git_said(err, what, g, &o);
		r = -EIO;
	}
	if (r >= 0 && out && o.len)
		sb_append(out, o.buf, o.len);
	sb_free(&o);
	return r < 0 ? r : 0;
}

static int git_describe(void *ctx, const char *sha, struct strbuf *out, struct strbuf *err)
{
	char *args[] = { "show", "-s", "--format=%H%x09%s%x09%an <%ae>%x09%aI", (char *)sha, "--" };
	return git_ok(ctx, args, ARRAY_SIZE(args), "git show", out, err);
}

/* The candidates after "could be any of:", up to "We cannot bisect more!". */
static void parse_candidates(const char *p, struct kbisect_step *ret)
{
	while (p && *p) {
		size_t len = strcspn(p, "\n");
		if (is_sha(p, len)) {
			if (ret->n_cand < KBISECT_MAX_CANDIDATES)
				snprintf(ret->cand[ret->n_cand++], KBISECT_SHA_LEN + 1, "%.*s", (int)len, p);
			ret->n_cand_total++;
		}
		p = p[len] ? p + len + 1 : NULL;
	}
}

int kbisect_parse(const char *out, struct kbisect_step *ret)
{
	static const char found[] = " is the first bad commit", skipped[] = "There are only 'skip'ped commits left to test.";
	struct kbisect_step s = { .state = KBISECT_NEXT };
	for (const char *p = out; p && *p;) {
		size_t len = strcspn(p, "\n");
		if (len >= KBISECT_SHA_LEN + 2 && p[0] == '[' && p[KBISECT_SHA_LEN + 1] == ']' && is_sha(p + 1, KBISECT_SHA_LEN)) {
			snprintf(s.sha, sizeof(s.sha), "%.40s", p + 1);
			*ret = s;
			return 0;
		}
		if (len == KBISECT_SHA_LEN + sizeof(found) - 1 && is_sha(p, KBISECT_SHA_LEN) &&
		    memcmp(p + KBISECT_SHA_LEN, found, sizeof(found) - 1) == 0) {
			s.state = KBISECT_FOUND;
			snprintf(s.sha, sizeof(s.sha), "%.40s", p);
			*ret = s;
			return 0;
		}
		if (len == sizeof(skipped) - 1 && memcmp(p, skipped, len) == 0) {
			s.state = KBISECT_ONLY_SKIPPED;
			parse_candidates(p + len, &s);
			*ret = s;
			return s.n_cand ? 0 : -EIO;
		}
		p = p[len] ? p + len + 1 : p + len;
	}
	return -EIO;
}

/* A bisect command whose answer is one of git's three. */
static int bisect_cmd(const struct kbisect_git *g, char *const *args, size_t n, struct kbisect_step *ret, struct strbuf *err)
{
	struct strbuf out = { 0 };
	int status, r = git_run(g, args, n, &out, &status);
	if (r >= 0 && kbisect_parse(out.buf ? out.buf : "", ret) < 0) {
		char how[64];
		util_wait_status_text(status, how, sizeof(how));
		sb_printf(err, "git bisect %s in %s %s: %s", args[1], g->tree, how, out.buf ? out.buf : "(no output)");
		r = -EIO;
	}
	sb_free(&out);
	return r < 0 ? r : 0;
}

static int git_start(void *ctx, const char *good, const char *bad, struct kbisect_step *ret, struct strbuf *err)
{
	char *args[] = { "bisect", "start", "--no-checkout", (char *)bad, (char *)good, "--" };
	return bisect_cmd(ctx, args, ARRAY_SIZE(args), ret, err);
}

static int git_mark(void *ctx, const char *sha, enum kbisect_mark m, struct kbisect_step *ret, struct strbuf *err)
{
	char *args[] = { "bisect", (char *)kbisect_mark_name(m), (char *)sha };
	return bisect_cmd(ctx, args, ARRAY_SIZE(args), ret, err);
}

static int git_log(void *ctx, struct strbuf *out, struct strbuf *err)
{
	char *args[] = { "bisect", "log" };
	size_t len = out->len;
	int r = git_ok(ctx, args, ARRAY_SIZE(args), "git bisect log", out, err);
	if (r >= 0 && out->len > len)
		sb_puts(out, "\n");
	return r;
}

static int git_reset(void *ctx, struct strbuf *err)
{
	char *args[] = { "bisect", "reset" };
	return git_ok(ctx, args, ARRAY_SIZE(args), "git bisect reset", NULL, err);
}

const struct kbisect_ops kbisect_git_ops = {
	.resolve = git_resolve,
	.is_ancestor = git_is_ancestor,
	.parent = git_parent,
	.describe = git_describe,
	.start = git_start,
	.mark = git_mark,
	.log = git_log,
	.reset = git_reset,
};

/* ---- the controls of a culprit (doc/bisect.md, "Controls") ---- */

/* A commit of tree on parent, its author, committer and dates fixed: the
 * same inputs make the same commit at every replay of a bisection. */
static int commit_tree(const struct kbisect_git *g, const char *tree, const char *parent, const char *msg,
		       char ret[KBISECT_SHA_LEN + 1], struct strbuf *err)
{
	char *env[] = { "GIT_AUTHOR_NAME=kab",
			"GIT_AUTHOR_EMAIL=kab@localhost",
			"GIT_AUTHOR_DATE=@0 +0000",
			"GIT_COMMITTER_NAME=kab",
			"GIT_COMMITTER_EMAIL=kab@localhost",
			"GIT_COMMITTER_DATE=@0 +0000",
			NULL };
	char *args[] = { "commit-tree", (char *)tree, "-p", (char *)parent, "-m", (char *)msg };
	struct strbuf out = { 0 };
	int status, r = git_run_env(g, env, args, ARRAY_SIZE(args), &out, &status);
	if (r >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.buf && is_sha(out.buf, out.len))) {
		git_said(err, "git commit-tree", g, &out);
		r = -EIO;
	}
	if (r >= 0)
		snprintf(ret, KBISECT_SHA_LEN + 1, "%s", out.buf);
	sb_free(&out);
	return r;
}

int kbisect_git_revert(const struct kbisect_git *g, const char *sha, const char *onto, char ret[KBISECT_SHA_LEN + 1],
		       struct strbuf *why)
{
	char parent[KBISECT_SHA_LEN + 1], undo[KBISECT_SHA_LEN + 1], spec[KBISECT_SHA_LEN + 16], msg[160];
	if (!is_sha(sha, strlen(sha)) || !is_sha(onto, strlen(onto)))
		return -EINVAL;
	int r = git_parent((void *)g, sha, parent, why);
	if (r < 0)
		return r;
	/* the parent's tree as a child of sha: merged into onto with sha as
	 * the base, it takes out of onto what sha brought, as git revert
	 * does (git 2.38's merge-tree merges without a work tree) */
	snprintf(spec, sizeof(spec), "%s^{tree}", parent);
	snprintf(msg, sizeof(msg), "kab: the tree of %.12s's parent on top of it", sha);
	if ((r = commit_tree(g, spec, sha, msg, undo, why)) < 0)
		return r;
	char *args[] = { "merge-tree", "--write-tree", "--no-messages", "--name-only", (char *)onto, undo };
	struct strbuf out = { 0 };
	int status;
	if ((r = git_run(g, args, ARRAY_SIZE(args), &out, &status)) < 0)
		goto out;
	const char *text = out.buf ? out.buf : "";
	size_t first = strcspn(text, "\n");
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1 || !is_sha(text, first)) {
		git_said(why, "git merge-tree --write-tree (git 2.38 or later)", g, &out);
		r = -EIO;
		goto out;
	}
	if (WEXITSTATUS(status) == 1) {
		const char *files = text[first] ? text + first + 1 : "";
		sb_printf(why, "the revert of %.12s does not apply on BAD %.12s: it conflicts in %.*s", sha, onto,
			  (int)strcspn(files, "\n"), files[0] ? files : "(git named no file)");
		size_t more = 0;
		for (const char *p = files; (p = strchr(p, '\n')); p++)
			more++;
		if (more)
			sb_printf(why, " and %zu more file%s", more, more == 1 ? "" : "s");
		r = 1;
		goto out;
	}
	char tree[KBISECT_SHA_LEN + 1];
	snprintf(tree, sizeof(tree), "%.*s", (int)first, text);
	snprintf(msg, sizeof(msg), "Revert %.12s on %.12s (kab's revert control of a bisection)", sha, onto);
	if ((r = commit_tree(g, tree, onto, msg, ret, why)) < 0)
		goto out;
	/* a ref keeps it from git's pruning while its builds may need it */
	char ref[128];
	snprintf(ref, sizeof(ref), "refs/kab/revert/%.40s-on-%.12s", sha, onto);
	char *upd[] = { "update-ref", ref, ret };
	r = git_ok(g, upd, ARRAY_SIZE(upd), "git update-ref", NULL, why);
out:
	sb_free(&out);
	return r;
}

int kbisect_git_has_config(const struct kbisect_git *g, const char *sha, const char *file, const char *symbol)
{
	char pattern[160], spec[KBISECT_SHA_LEN + 1];
	if (!is_sha(sha, strlen(sha)) || strspn(symbol, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(symbol))
		return -EINVAL;
	snprintf(spec, sizeof(spec), "%s", sha);
	snprintf(pattern, sizeof(pattern), "^(menu)?config[[:space:]]+%s[[:space:]]*$", symbol);
	char *args[] = { "grep", "-q", "-E", "-e", pattern, spec, "--", (char *)file };
	struct strbuf out = { 0 };
	int status, r = git_run(g, args, ARRAY_SIZE(args), &out, &status);
	sb_free(&out);
	if (r < 0)
		return r;
	return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? WEXITSTATUS(status) == 0 : -EIO;
}
