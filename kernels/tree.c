/* The tree a build reads: whether it is a git repository the build user
 * can read, its refs, and the git config that lets the build user read it
 * (git refuses another user's repository without a safe.directory). git
 * runs as the build user when kab is root. */
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/kbuild_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Whether dir has what a git repository has: a .git, or a bare one's
 * HEAD and objects. Looked at by kab, so that a tree the build user
 * cannot read is told apart from one that is no repository. */
static bool looks_like_repo(const char *dir)
{
	char p[PATH_MAX + 16], q[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/.git", dir);
	if (exists(p))
		return true;
	snprintf(p, sizeof(p), "%s/HEAD", dir);
	snprintf(q, sizeof(q), "%s/objects", dir);
	return exists(p) && exists(q);
}

/* git in tree, as the build user when kab is root: the tree is root's or
 * another user's, which git reads for kab-build only when told it is safe. */
static bool git_tree(const char *tree, struct strbuf *out, struct strbuf *err, char *const *args, size_t n)
{
	struct krun_user u;
	struct strbuf why = { 0 };
	int r = kbuser_lookup(&u, &why);
	if (r < 0) {
		sb_puts(err ? err : out, why.buf ? why.buf : "");
		sb_free(&why);
		return false;
	}
	char safe[PATH_MAX + 32];
	snprintf(safe, sizeof(safe), "safe.directory=%s", tree);
	char *argv[16] = { "git", "-c", safe, "-C", (char *)tree };
	size_t k = 5;
	for (size_t i = 0; i < n && k + 1 < ARRAY_SIZE(argv); i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	struct krun o = { .user = r > 0 ? &u : NULL };
	return krun_ok_as(argv, &o, out);
}

int kbuild_check_tree(const char *tree, struct strbuf *why)
{
	struct stat st;
	char real[PATH_MAX];
	if (stat(tree, &st) < 0 || !realpath(tree, real)) {
		sb_printf(why, "tree %s does not exist: give the path of a git repository of the kernel", tree);
		return -ENOENT;
	}
	if (!S_ISDIR(st.st_mode) || !looks_like_repo(real)) {
		sb_printf(why, "tree %s is not a git repository (no .git in it): give the path of a git repository of the kernel", tree);
		return -EINVAL;
	}
	struct strbuf out = { 0 }, err = { 0 };
	char *args[] = { "rev-parse", "--git-dir" };
	bool ok = git_tree(real, &out, &err, args, ARRAY_SIZE(args));
	if (!ok && err.len)
		sb_printf(why, "tree %s: %s", tree, err.buf);
	else if (!ok)
		sb_printf(why, "tree %s cannot be read by the build user %s: git rev-parse says \"%.*s\"; make it readable by %s "
			  "(chmod -R o+rX, or a group of %s's, its parent directories searchable) or give a copy it can read",
			  tree, KBUILD_USER, out.buf ? (int)strcspn(out.buf, "\n") : 0, out.buf ? out.buf : "", KBUILD_USER, KBUILD_USER);
	sb_free(&out);
	sb_free(&err);
	return ok ? 0 : -EACCES;
}

int kbuild_resolve_ref(const char *tree, const char *ref, char sha[41])
{
	char spec[1024], real[PATH_MAX];
	snprintf(spec, sizeof(spec), "%s^{commit}", ref);
	char *args[] = { "rev-parse", "--verify", "--quiet", spec };
	struct strbuf out = { 0 };
	bool ok = ref[0] != '-' && realpath(tree, real) && git_tree(real, &out, NULL, args, ARRAY_SIZE(args)) && out.len == 40;
	if (ok)
		snprintf(sha, 41, "%s", out.buf);
	sb_free(&out);
	return ok ? 0 : -ENOENT;
}

int kbuild_resolve_sha(const char *work_dir, const char *tree, const char *ref, char sha[41])
{
	if (kbuild_resolve_ref(tree, ref, sha) == 0)
		return 0;
	/* a commit fetched for a tracked branch lives in kab's clone only */
	char real[PATH_MAX], clone[PATH_MAX];
	if (strspn(ref, "0123456789abcdef") != 40 || ref[40] || !realpath(tree, real) ||
	    kbuild_clone_dir(work_dir, real, clone, sizeof(clone)) < 0 || !exists(clone))
		return -ENOENT;
	return kbuild_resolve_ref(clone, ref, sha);
}

/* A git config value, quoted. */
static void git_quoted(struct strbuf *sb, const char *v)
{
	sb_puts(sb, "\"");
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_puts(sb, "\\");
		sb_append(sb, p, 1);
	}
	sb_puts(sb, "\"");
}

int ktree_gitconfig(const char *tree, const char *extra, const char *path, struct strbuf *err)
{
	struct strbuf dirs = { 0 }, cfg = { 0 };
	char *args[] = { "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir" };
	int r = -EIO;
	if (!git_tree(tree, &dirs, err, args, ARRAY_SIZE(args))) {
		sb_printf(err, "git rev-parse --git-dir in %s failed: %s", tree, dirs.buf ? dirs.buf : "");
		goto out;
	}
	sb_puts(&cfg, "# written by kab for the build user: the trees it may read\n[safe]\n\tdirectory = ");
	git_quoted(&cfg, tree);
	for (char *line = dirs.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		sb_puts(&cfg, "\n\tdirectory = ");
		git_quoted(&cfg, line);
	}
	if (extra) {
		sb_puts(&cfg, "\n\tdirectory = ");
		git_quoted(&cfg, extra);
	}
	sb_puts(&cfg, "\n");
	if ((r = kbuser_write_for(path, cfg.buf, cfg.len)) < 0)
		sb_printf(err, "%s: cannot write: %s", path, strerror(-r));
out:
	sb_free(&dirs);
	sb_free(&cfg);
	return r;
}
