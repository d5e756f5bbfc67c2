/* Kernel builds: one worktree and one kconfig directory per tree, one
 * object directory per (tree, config hash). The worktree is reset to the
 * base and the series applied with git am, which rewrites only the files
 * it patches, so make recompiles just those objects in the shared O=.
 * git, make and the compiler run as the build user (builduser.h), which
 * owns the directories they write; kab's own files stay root's.
 *
 *   WORK/home                   the build user's HOME (ccache's cache)
 *   WORK/<tree key>/            kab's: lock, logs, gitconfig, what it hands the build
 *   WORK/<tree key>/src         the worktree: a clone of the tree sharing its
 *                               objects (git clone --shared), at the base, then patched
 *   WORK/<tree key>/kconfig     where configs are produced
 *   WORK/<tree key>/obj-<hash>  object directory of one config
 *   WORK/<tree key>/modroot     make modules_install's output, while it is packed
 *   KERNELS/<build id>/         bzImage, System.map, config, modules.tar, initrd.img
 */
#include "kernels/build.h"
#include "kernels/build_priv.h"
#include "kernels/builduser.h"
#include "kernels/initramfs.h"
#include "kernels/kbuild_priv.h"
#include "kernels/run.h"
#include "kernels/series.h"
#include "kernels/sha256.h"
#include "kernels/track.h"
#include "db/store.h"
#include "db/store_builds.h"
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Disk estimates, checked before anything is written: a Linux worktree,
 * an object directory (a base plus a share per enabled option), the
 * artifacts. Rough on purpose; they only have to catch a disk too full. */
#define WORKTREE_BYTES (1700 * MiB)
#define KCONFIG_BYTES (32 * MiB)
#define OBJ_BASE_BYTES (400 * MiB)
#define OBJ_PER_OPTION_BYTES (2 * MiB)
#define OBJ_INCREMENT_BYTES (200 * MiB)
#define ARTIFACT_BYTES (64 * MiB)
#define INITRAMFS_BYTES (64 * MiB)  /* Debian's MODULES=most image is about 30M */

static void where(const struct kbuild_ctx *c, int line)
{
	if (c->rq->file && line > 0)
		sb_printf(c->err, "%s:%d: ", c->rq->file, line);
	else if (c->rq->file)
		sb_printf(c->err, "%s: ", c->rq->file);
}

void kbuild_stage(const struct kbuild_ctx *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_info("build %s: %s", c->rq->name ? c->rq->name : "", msg);
	if (c->rq->progress)
		c->rq->progress(c->rq->progress_ctx, c->rq->name ? c->rq->name : "", msg);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Free bytes on the file system holding path (or its nearest existing parent). */
static int free_bytes(const char *path, uint64_t *ret)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	struct statvfs sv;
	while (statvfs(p, &sv) < 0) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			return statvfs("/", &sv) < 0 ? -errno : (*ret = (uint64_t)sv.f_bavail * sv.f_frsize, 0);
		*slash = 0;
	}
	*ret = (uint64_t)sv.f_bavail * sv.f_frsize;
	return 0;
}

static int check_space(struct kbuild_ctx *c, const char *dir, uint64_t need, const char *what)
{
	uint64_t have;
	if (free_bytes(dir, &have) < 0 || have >= need)
		return 0;
	char h[32], n[32];
	util_format_size(have, h, sizeof(h));
	util_format_size(need, n, sizeof(n));
	sb_printf(c->err, "not enough disk for %s: %s has %s free, the build needs about %s there; free some space or choose another %s",
		  what, dir, h, n, strcmp(what, "the artifacts") == 0 ? "--kernels-dir" : "--work-dir");
	return -ENOSPC;
}

const struct krun_user *kbuild_builder(const struct kbuild_ctx *c)
{
	return c->drop ? &c->user : NULL;
}

/* A krun of the build user's, its output to log_fd. */
struct krun kbuild_as_builder(const struct kbuild_ctx *c, int log_fd)
{
	return (struct krun){ .stdout_fd = -1, .log_fd = log_fd, .user = kbuild_builder(c), .env = c->env };
}

static bool git(const struct kbuild_ctx *c, struct strbuf *out, ...)
{
	char *argv[32] = { "git", "-c", "user.name=kab", "-c", "user.email=kab@localhost", "-C", (char *)c->src };
	size_t n = 7;
	va_list ap;
	va_start(ap, out);
	for (char *a; n + 1 < ARRAY_SIZE(argv) && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct krun o = kbuild_as_builder(c, -1);
	return krun_ok_as(argv, &o, out);
}

/* A clone of the tree sharing its objects (alternates), so that the tree
 * is only read: the build user writes nothing in it. */
static int clone_tree(struct kbuild_ctx *c, struct strbuf *out, bool checkout)
{
	int r;
	char dotgit[PATH_MAX + 16];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", c->src);
	struct stat st;
	if (lstat(c->src, &st) == 0) {
		if (exists(dotgit))
			kbuild_stage(c, "worktree: removing %s, a git worktree of an earlier kab (builds now clone the tree)", c->src);
		else
			kbuild_stage(c, "worktree: removing %s, an unfinished clone", c->src);
		if ((r = kbuser_remove(kbuild_builder(c), c->src, c->err)) < 0)
			return r;
	}
	if (checkout)
		kbuild_stage(c, "worktree: cloning %s into %s (git clone --shared) at %.12s", c->tree, c->src, c->sha);
	else
		kbuild_stage(c, "worktree: cloning %s into %s (git clone --shared)", c->tree, c->src);
	if ((r = kbuser_own_dir(kbuild_builder(c), c->src, c->err)) < 0)
		return r;
	char *clone[] = { "git", "clone", "-q", "--shared", "--no-checkout", "--", c->tree, c->src, NULL };
	struct krun o = kbuild_as_builder(c, -1);
	if (!krun_ok_as(clone, &o, out))
		return -EIO;
	return !checkout || git(c, out, "checkout", "-q", "--detach", c->sha, NULL) ? 0 : -EIO;
}

/* The build user's git config (GIT_CONFIG_GLOBAL): the tree is safe to read. */
static int write_gitconfig(struct kbuild_ctx *c, const char *extra)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/gitconfig", c->root);
	int r = ktree_gitconfig(c->tree, extra, path, c->err);
	if (r < 0)
		return r;
	snprintf(c->gitconfig_env, sizeof(c->gitconfig_env), "GIT_CONFIG_GLOBAL=%s", path);
	c->env[0] = c->gitconfig_env;
	return 0;
}

/* The worktree, created or reset to the base. Reset rewrites only the
 * files that differ, so objects of unchanged files stay up to date. */
static int prepare_worktree(struct kbuild_ctx *c)
{
	char dotgit[PATH_MAX + 16];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", c->src);
	struct stat st;
	struct strbuf out = { 0 };
	int r;
	if ((r = write_gitconfig(c, NULL)) < 0)
		return r;
	bool have_clone = lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode);
	if (have_clone && (r = kbuser_own_dir(kbuild_builder(c), c->src, c->err)) < 0)
		return r;
	if (r > 0)
		kbuild_stage(c, "worktree: gave %s, made by an earlier kab as root, to %s (chown -R, no symlink followed)", c->src,
			     c->user.name);
	if (!have_clone) {
		r = clone_tree(c, &out, true);
	} else {
		kbuild_stage(c, "worktree: resetting to %.12s", c->sha);
		git(c, NULL, "am", "--abort", NULL);
		/* the index's stat data first: after a chown (the build user
		 * made again, src given back to it) every entry is stat-dirty,
		 * and reset --hard would rewrite every file, new mtimes and a
		 * whole rebuild; a refresh rereads them and rewrites none */
		git(c, NULL, "update-index", "-q", "--refresh", NULL);
		r = git(c, &out, "reset", "-q", "--hard", c->sha, NULL) && git(c, &out, "clean", "-q", "-fdx", NULL) ? 0 : -EIO;
	}
	if (r == -EIO)
		sb_printf(c->err, "git worktree %s at %s failed: %s", c->src, c->sha, out.buf ? out.buf : "");
	sb_free(&out);
	return r;
}

/* Which hunk of the failed patch did not apply: "FILE, hunk @@ ... @@". */
static void failed_hunk(struct kbuild_ctx *c, struct strbuf *msg)
{
	struct strbuf diff = { 0 }, check = { 0 };
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/failed.patch", c->root);
	if (!git(c, &diff, "am", "--show-current-patch=diff", NULL) || !diff.buf)
		goto out;
	sb_puts(&diff, "\n");
	if (kbuser_write_for(path, diff.buf, diff.len) < 0)
		goto out;
	git(c, &check, "apply", "--check", "-v", path, NULL);
	const char *e = check.buf ? strstr(check.buf, "error: patch failed: ") : NULL;
	if (!e) {
		const char *d = check.buf ? strstr(check.buf, "error: ") : NULL;
		if (d)
			sb_printf(msg, ": %.*s", (int)strcspn(d + 7, "\n"), d + 7);
		goto out;
	}
	e += strlen("error: patch failed: ");
	size_t n = strcspn(e, "\n");
	const char *colon = memrchr(e, ':', n);
	if (!colon)
		goto out;
	char file[1024], line[32];
	snprintf(file, sizeof(file), "%.*s", (int)(colon - e), e);
	snprintf(line, sizeof(line), "%.*s", (int)(n - (size_t)(colon - e) - 1), colon + 1);
	sb_printf(msg, ": %s", file);
	/* the hunk of that file starting at that line */
	char marker[1100];
	snprintf(marker, sizeof(marker), "\n+++ b/%s\n", file);
	const char *sec = strstr(diff.buf, marker);
	char want[64];
	snprintf(want, sizeof(want), "\n@@ -%s,", line);
	const char *h = sec ? strstr(sec, want) : NULL;
	const char *next_file = sec ? strstr(sec + 1, "\ndiff --git ") : NULL;
	if (h && (!next_file || h < next_file))
		sb_printf(msg, ", hunk %.*s", (int)strcspn(h + 1, "\n"), h + 1);
	else
		sb_printf(msg, ", the hunk at line %s", line);
	sb_printf(msg, " (its context is not in the tree at %.12s)", c->sha);
out:
	unlink(path);
	sb_free(&diff);
	sb_free(&check);
}

static int apply_series(struct kbuild_ctx *c)
{
	char mbox[PATH_MAX + 32];
	snprintf(mbox, sizeof(mbox), "%s/series.mbox", c->root);
	int r = kseries_write(&c->series, mbox);
	if (r < 0) {
		sb_printf(c->err, "%s: cannot write: %s", mbox, strerror(-r));
		return r;
	}
	kbuild_stage(c, "series: git am -3 of %zu patches (v%u, from %s)", c->series.n, c->series.version, c->series.author);
	struct strbuf out = { 0 };
	bool ok = git(c, &out, "am", "-3", mbox, NULL);
	if (!ok) {
		/* "Patch failed at 0002 subject": which one */
		const char *pf = out.buf ? strstr(out.buf, "Patch failed at ") : NULL;
		uint64_t k = 0;
		if (pf) {
			char num[16];
			snprintf(num, sizeof(num), "%.*s", (int)strspn(pf + 16, "0123456789"), pf + 16);
			util_parse_u64(num, &k);
		}
		where(c, c->rq->series_line);
		if (k >= 1 && k <= c->series.n)
			sb_printf(c->err, "series %s: patch %llu of %zu \"%s\" does not apply", c->rq->series, (unsigned long long)k,
				  c->series.n, c->series.v[k - 1].subject);
		else
			sb_printf(c->err, "series %s does not apply", c->rq->series);
		failed_hunk(c, c->err);
		sb_printf(c->err, "; rebase the series onto %s or pick another base", c->rq->base);
		git(c, NULL, "am", "--abort", NULL);
		git(c, NULL, "reset", "-q", "--hard", c->sha, NULL);
	}
	unlink(mbox);
	sb_free(&out);
	return ok ? 0 : -EINVAL;
}

/* The key of everything a build depends on. */
static void inputs_key(const struct kbuild_ctx *c, char key[65])
{
	struct strbuf sb = { 0 };
	sb_printf(&sb, "recipe %s\ntree %s\nbase %s\nseries %s\nconfig %s\n", KBUILD_RECIPE, c->tree, c->sha,
		  c->has_series ? c->series.hash : "none", c->config_hash);
	sha256_buf(sb.buf, sb.len, key);
	sb_free(&sb);
}

static void compiler_version(const struct kbuild_ctx *c, char *buf, size_t len)
{
	char *argv[] = { "gcc", "--version", NULL };
	struct strbuf out = { 0 };
	buf[0] = 0;
	struct krun o = kbuild_as_builder(c, -1);
	if (krun_ok_as(argv, &o, &out) && out.buf)
		snprintf(buf, len, "%.*s", (int)strcspn(out.buf, "\n"), out.buf);
	sb_free(&out);
}

/* The tree is a git repository the build user reads; its real path. */
static int check_tree(struct kbuild_ctx *c)
{
	const struct kbuild_request *rq = c->rq;
	struct strbuf why = { 0 };
	int r = rq->tree ? kbuild_check_tree(rq->tree, &why) : -ENOENT;
	if (r < 0 || !realpath(rq->tree, c->tree)) {
		where(c, rq->tree_line);
		sb_puts(c->err, why.buf ? why.buf : "no tree: give tree = the path of a git repository of the kernel");
		sb_free(&why);
		return -EINVAL;
	}
	return 0;
}

static bool is_sha(const char *s)
{
	return s && strspn(s, "0123456789abcdef") == 40 && !s[40];
}

/* Input checks and the series, before anything is written. A tracked
 * base is a commit fetched into kab's clone, not in the tree. */
static int check_inputs(struct kbuild_ctx *c)
{
	const struct kbuild_request *rq = c->rq;
	int r = check_tree(c);
	if (r < 0)
		return r;
	if (rq->track && !is_sha(rq->base)) {
		where(c, rq->track_line);
		sb_printf(c->err, "track = %s: no commit resolved for it (kbuild_track_fetch comes first)", rq->track);
		return -EINVAL;
	}
	if (rq->track)
		snprintf(c->sha, sizeof(c->sha), "%s", rq->base);
	else if (!rq->base || kbuild_resolve_sha(c->work, c->tree, rq->base, c->sha) < 0) {
		where(c, rq->base_line);
		sb_printf(c->err, "base \"%s\" is not a commit in %s or kab's clone of it (git rev-parse --verify %s^{commit} fails): give a branch, tag or sha",
			  rq->base ? rq->base : "", c->tree, rq->base ? rq->base : "");
		return -EINVAL;
	}
	const char *cfg = rq->config ? rq->config : "running";
	char running[PATH_MAX];
	if (strcmp(cfg, "running") == 0 ? kbuild_running_config(running, sizeof(running)) < 0
	    : (strcmp(cfg, "defconfig") != 0 && strcmp(cfg, "tinyconfig") != 0 && !exists(cfg))) {
		where(c, rq->config_line);
		sb_printf(c->err, "config %s does not exist: give running, defconfig, tinyconfig or the path of a .config", cfg);
		return -EINVAL;
	}
	for (size_t i = 0; i < rq->n_fragments; i++)
		if (!exists(rq->fragments[i])) {
			where(c, rq->config_line);
			sb_printf(c->err, "config.fragment %s does not exist", rq->fragments[i]);
			return -EINVAL;
		}
	if (rq->series) {
		struct strbuf msg = { 0 };
		r = kseries_load(rq->series, rq->series_version, rq->archive, &c->series, &msg);
		if (r < 0) {
			where(c, rq->series_line);
			sb_append(c->err, msg.len ? msg.buf : "", msg.len);
		}
		sb_free(&msg);
		if (r < 0)
			return r == -ENOMEM ? r : -EINVAL;
		c->has_series = true;
	}
	return 0;
}

/* The sha256 of a file the build made. */
int kbuild_builder_sha256(const struct kbuild_ctx *c, const char *path, char hex[65])
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = kbuser_read_file(kbuild_builder(c), path, &text, &len);
	if (r == 0)
		sha256_buf(text, len, hex);
	return r;
}

/* The config in the kconfig directory, its hash and its object directory. */
static int produce_config(struct kbuild_ctx *c, int log_fd)
{
	const struct kbuild_request *rq = c->rq;
	const char *cfg = rq->config ? rq->config : "running";
	struct strbuf warn = { 0 }, err = { 0 };
	kbuild_stage(c, "config: %s%s", cfg, rq->n_fragments ? " with fragments" : "");
	int r = kconfig_produce(&c->as, c->src, c->kc, cfg, rq->fragments, rq->n_fragments, rq->need, log_fd, &warn, &err);
	if (warn.len)
		log_warn("build %s: %s", rq->name ? rq->name : "", warn.buf);
	if (r < 0) {
		where(c, rq->config_line);
		sb_puts(c->err, err.len ? err.buf : strerror(-r));
	}
	sb_free(&warn);
	sb_free(&err);
	if (r < 0)
		return r;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/.config", c->kc);
	if ((r = kbuild_builder_sha256(c, path, c->config_hash)) < 0) {
		sb_printf(c->err, "config: %s: %s", path, kbuser_strerror(r));
		return r;
	}
	snprintf(c->obj, sizeof(c->obj), "%s/obj-%.16s", c->root, c->config_hash);
	size_t used = (size_t)snprintf(c->config_desc, sizeof(c->config_desc), "%s", cfg);
	for (size_t i = 0; i < rq->n_fragments && used < sizeof(c->config_desc); i++)
		used += (size_t)snprintf(c->config_desc + used, sizeof(c->config_desc) - used, " + %s", rq->fragments[i]);
	return 0;
}

static int reuse(struct kbuild_ctx *c, struct store *st, const char *key, struct kbuild_result *ret)
{
	struct store_build old;
	if (store_build_find(st, key, &old) < 0)
		return -ENOENT;
	int r = -ENOENT;
	if (old.image && exists(old.image) && (!old.initrd || exists(old.initrd))) {
		kbuild_stage(c, "reusing build %lld (same tree, base, series and config): %s", (long long)old.id, old.kernelrelease);
		*ret = (struct kbuild_result){ .id = old.id, .reused = true, .duration_s = old.duration_s };
		snprintf(ret->kernelrelease, sizeof(ret->kernelrelease), "%s", old.kernelrelease);
		snprintf(ret->image, sizeof(ret->image), "%s", old.image);
		r = 0;
	}
	store_build_clear(&old);
	return r;
}

static char *patch_list(const struct kbuild_ctx *c)
{
	struct strbuf sb = { 0 };
	for (size_t i = 0; c->has_series && i < c->series.n; i++)
		sb_printf(&sb, "%s\t%s\n", c->series.v[i].subject, c->series.v[i].message_id);
	return sb.buf;
}

static int kab_dir(struct kbuild_ctx *c, const char *dir)
{
	return kbuser_kab_dir(kbuild_builder(c), dir, c->err);
}

/* A directory of the build user's, told when it was taken over from root. */
static int builder_dir(struct kbuild_ctx *c, const char *dir)
{
	int r = kbuser_own_dir(kbuild_builder(c), dir, c->err);
	if (r > 0)
		kbuild_stage(c, "gave %s, made by an earlier kab as root, to %s (chown -R, no symlink followed)", dir, c->user.name);
	return r < 0 ? r : 0;
}

/* Who builds (the build user when kab is root), the work directory and
 * the build user's HOME in it, which it must be able to reach. */
static int setup(struct kbuild_ctx *c)
{
	struct strbuf why = { 0 };
	int r = kbuser_lookup(&c->user, &why);
	if (r < 0) {
		where(c, 0);
		sb_puts(c->err, why.buf ? why.buf : "no build user");
		sb_free(&why);
		return r;
	}
	c->drop = r > 0;
	c->as = (struct kbuild_as){ .user = kbuild_builder(c), .env = c->env, .stage = c->root };
	char home[PATH_MAX + 8];
	snprintf(home, sizeof(home), "%s/home", c->work);
	if ((r = check_space(c, c->work, KCONFIG_BYTES, "the work directory")) < 0 || (r = kab_dir(c, c->work)) < 0 ||
	    (r = builder_dir(c, home)) < 0)
		return r;
	if (!c->drop)
		return 0;
	snprintf(c->user.home, sizeof(c->user.home), "%s", home);
	char *test[] = { "test", "-w", home, "-a", "-x", home, NULL };
	struct krun o = kbuild_as_builder(c, -1);
	if (!krun_ok_as(test, &o, NULL)) {
		sb_printf(c->err, "the build user %s cannot reach %s, its directory in the work directory: a directory above it "
			  "is closed to it (each must be searchable by others: chmod o+x), or give another --work-dir",
			  c->user.name, home);
		return -EACCES;
	}
	kbuild_stage(c, "git, make and the compiler run as %s (uid %u)", c->user.name, (unsigned)c->user.uid);
	return 0;
}

/* The tree's lock, polled, so that a stop or a cancel does not wait for
 * the other build. */
static int lock_tree(struct kbuild_ctx *c, int *ret_fd)
{
	char lock[PATH_MAX + 8];
	snprintf(lock, sizeof(lock), "%s/lock", c->root);
	int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sb_printf(c->err, "%s: cannot open: %s", lock, strerror(errno));
		return -EIO;
	}
	*ret_fd = fd;
	for (bool told = false; flock(fd, LOCK_EX | LOCK_NB) < 0;) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			sb_printf(c->err, "%s: cannot lock: %s", lock, strerror(errno));
			return -EIO;
		}
		if (c->rq->no_wait) {
			sb_printf(c->err, "a build of the tree holds its lock (%s)", lock);
			return -EBUSY;
		}
		if (!told)
			kbuild_stage(c, "waiting for another build of this tree (%s)", lock);
		told = true;
		if (krun_cancel_requested()) {
			sb_printf(c->err, "stopped while waiting for another build of this tree (%s)", lock);
			return -ECANCELED;
		}
		struct timespec ts = { 0, 500 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The work and kernels directories: the request's, else the configuration's
 * ($KAB_KBUILD_WORK / $KAB_KERNELS_DIR: how kabd is pointed elsewhere, else
 * the defaults: the work directory outside the state directory, which the
 * build user could not reach, the artifacts in it). */
static int locate_dirs(struct kbuild_ctx *c)
{
	const struct kbuild_request *rq = c->rq;
	snprintf(c->work, sizeof(c->work), "%s", rq->work_dir ? rq->work_dir : config_str(CONFIG_KBUILD_WORK));
	return kbuild_kernels_dir(rq->kernels_dir, c->kernels, sizeof(c->kernels), c->err);
}

void kbuild_tree_dir(const char *work_dir, const char *tree, char *buf, size_t len)
{
	char key[65];
	sha256_buf(tree, strlen(tree), key);
	snprintf(buf, len, "%s/%.16s", work_dir ? work_dir : config_str(CONFIG_KBUILD_WORK), key);
}

int kbuild_clone_dir(const char *work_dir, const char *tree, char *buf, size_t len)
{
	char root[PATH_MAX];
	kbuild_tree_dir(work_dir, tree, root, sizeof(root));
	int n = snprintf(buf, len, "%s/src", root);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The tree's directories, locked (the lock in *ret_lock_fd, the caller's to
 * close), and its worktree at the base with the series applied. */
/* The tree's directories (c->tree set), made and locked: the lock in
 * *ret_lock_fd, the caller's to close. */
static int enter_tree(struct kbuild_ctx *c, int *ret_lock_fd)
{
	int r;
	kbuild_tree_dir(c->work, c->tree, c->root, sizeof(c->root));
	snprintf(c->src, sizeof(c->src), "%s/src", c->root);
	snprintf(c->kc, sizeof(c->kc), "%s/kconfig", c->root);
	if (!exists(c->src) && (r = check_space(c, c->work, WORKTREE_BYTES + KCONFIG_BYTES, "a worktree")) < 0)
		return r;
	if ((r = kab_dir(c, c->root)) < 0 || (r = lock_tree(c, ret_lock_fd)) < 0)
		return r;
	return builder_dir(c, c->kc);
}

static int prepare_tree(struct kbuild_ctx *c, int *ret_lock_fd)
{
	/* the tree key needs the tree's real path: check_inputs sets it */
	int r = check_inputs(c);
	if (r < 0 || (r = enter_tree(c, ret_lock_fd)) < 0 || (r = prepare_worktree(c)) < 0)
		return r;
	return c->has_series ? apply_series(c) : 0;
}

/* The config, its tools' output in WORK/<tree key>/config.log. */
static int configure(struct kbuild_ctx *c)
{
	char cfg_log[PATH_MAX + 16];
	snprintf(cfg_log, sizeof(cfg_log), "%s/config.log", c->root);
	_cleanup_close_ int cfg_fd = open(cfg_log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (cfg_fd >= 0)
		fchmod(cfg_fd, 0600);
	return produce_config(c, cfg_fd);
}

/* What the compile needs, checked before minutes of compiling: what the
 * initramfs needs, when the config has modules and initrd support, and
 * disk for the objects and the artifacts. */
static int check_needs(struct kbuild_ctx *c)
{
	_cleanup_free_ char *cfg_text = NULL;
	size_t cfg_len;
	char cfg_path[PATH_MAX + 16];
	snprintf(cfg_path, sizeof(cfg_path), "%s/.config", c->kc);
	bool have_cfg = kbuser_read_file(kbuild_builder(c), cfg_path, &cfg_text, &cfg_len) == 0;
	bool initrd = have_cfg && kconfig_is_set(cfg_text, "MODULES", false) && kconfig_is_set(cfg_text, "BLK_DEV_INITRD", false);
	int r;
	if (initrd && (r = kinitramfs_usable(c->err)) < 0) {
		sb_puts(c->err, " (the config has modules, so the build makes an initramfs)");
		return r;
	}
	uint64_t obj_need = OBJ_INCREMENT_BYTES;
	if (!exists(c->obj))
		obj_need = OBJ_BASE_BYTES + (have_cfg ? kconfig_count_set(cfg_text) : 1000) * OBJ_PER_OPTION_BYTES;
	if ((r = check_space(c, c->work, obj_need, "the object directory")) < 0)
		return r;
	return check_space(c, c->kernels, ARTIFACT_BYTES + (initrd ? INITRAMFS_BYTES : 0), "the artifacts");
}

/* The build's row, status building, with its inputs, and its id in b; the
 * strings it was given are the context's and are cleared again. */
static int record_begin(struct kbuild_ctx *c, struct store *st, struct store_build *b)
{
	const struct kbuild_request *rq = c->rq;
	char compiler[256];
	compiler_version(c, compiler, sizeof(compiler));
	b->tree = c->tree;
	b->base_ref = (char *)(rq->track ? rq->track : rq->base);
	snprintf(b->base_sha, sizeof(b->base_sha), "%s", c->sha);
	char series_text[PATH_MAX + 16] = "";
	if (rq->series)
		snprintf(series_text, sizeof(series_text), rq->series_version ? "%s v%u" : "%s", rq->series, rq->series_version);
	b->series = rq->series ? series_text : NULL;
	b->patches = patch_list(c);
	snprintf(b->series_hash, sizeof(b->series_hash), "%s", c->has_series ? c->series.hash : "");
	b->config_source = c->config_desc;
	snprintf(b->config_hash, sizeof(b->config_hash), "%s", c->config_hash);
	b->compiler = compiler;
	int r = store_build_begin(st, b, &b->id);
	if (r < 0)
		sb_printf(c->err, "cannot record the build in the database");
	free(b->patches);
	b->tree = b->base_ref = b->series = b->patches = b->config_source = b->compiler = NULL;
	return r;
}

/* A failed build keeps no artifacts. */
static void discard_artifacts(struct store_build *b)
{
	if (b->dir)
		util_remove_tree(b->dir);
	free(b->dir);
	free(b->image);
	free(b->system_map);
	free(b->config_path);
	free(b->modules);
	free(b->initrd);
	b->dir = b->image = b->system_map = b->config_path = b->modules = b->initrd = NULL;
}

/* The build's end in its row: status, reason and duration from t0, given
 * r, what the compile returned; the objects and the duration go in ret too. */
static int record_finish(struct kbuild_ctx *c, struct store *st, struct store_build *b, int r, double t0,
			 struct kbuild_result *ret)
{
	b->duration_s = util_mono_now() - t0;
	b->status = r < 0 ? BUILD_FAILED : BUILD_OK;
	if (r < 0) {
		b->reason = strdup(c->err->buf ? c->err->buf : "failed");
		discard_artifacts(b);
	}
	if (store_build_finish(st, b) < 0 && r == 0) {
		sb_printf(c->err, "cannot record build %lld in the database", (long long)b->id);
		r = -EIO;
	}
	ret->objects = b->objects;
	ret->duration_s = b->duration_s;
	store_build_clear(b);
	return r;
}

int kbuild_build(struct store *st, const struct kbuild_request *rq, struct kbuild_result *ret, struct strbuf *err)
{
	struct kbuild_ctx c = { .rq = rq, .err = err };
	double t0 = util_mono_now();
	_cleanup_close_ int lock_fd = -1;
	struct store_build b = { 0 };
	int r;
	if ((r = locate_dirs(&c)) < 0 || (r = setup(&c)) < 0)
		return r;
	if ((r = prepare_tree(&c, &lock_fd)) < 0 || (r = configure(&c)) < 0)
		goto out;
	inputs_key(&c, b.inputs_key);
	if (reuse(&c, st, b.inputs_key, ret) == 0) {
		r = 0;
		goto out;
	}
	if ((r = check_needs(&c)) < 0 || (r = record_begin(&c, st, &b)) < 0)
		goto out;
	*ret = (struct kbuild_result){ .id = b.id };
	r = kbuild_compile(&c, &b, ret);
	r = record_finish(&c, st, &b, r, t0, ret);
out:
	kseries_free(&c.series);
	return r;
}

/* kab's clone of the tree, made (without a checkout) when missing. */
static int ensure_clone(struct kbuild_ctx *c)
{
	char dotgit[PATH_MAX + 16];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", c->src);
	struct stat st;
	struct strbuf out = { 0 };
	int r = write_gitconfig(c, NULL);
	if (r < 0)
		return r;
	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
		r = kbuser_own_dir(kbuild_builder(c), c->src, c->err);
		return r < 0 ? r : 0;
	}
	if ((r = clone_tree(c, &out, false)) == -EIO)
		sb_printf(c->err, "git clone of %s into %s failed: %s", c->tree, c->src, out.buf ? out.buf : "");
	sb_free(&out);
	return r;
}

int kbuild_track_fetch(const struct kbuild_request *rq, const char *remote, const char *branch, const char *prev,
		       struct ktrack_head *ret, char *event, size_t event_len, struct strbuf *err)
{
	struct kbuild_ctx c = { .rq = rq, .err = err };
	_cleanup_close_ int lock_fd = -1;
	char url[PATH_MAX + 256];
	struct strbuf why = { 0 };
	int r;
	if ((r = locate_dirs(&c)) < 0 || (r = setup(&c)) < 0 || (r = check_tree(&c)) < 0 ||
	    (r = enter_tree(&c, &lock_fd)) < 0 || (r = ensure_clone(&c)) < 0)
		return r;
	if ((r = ktrack_remote_url(c.tree, remote, kbuild_builder(&c), c.env, url, sizeof(url), &why)) < 0) {
		where(&c, rq->track_line);
		sb_printf(err, "track = %s %s: %s", remote, branch, why.buf ? why.buf : "no such remote");
		sb_free(&why);
		return r;
	}
	/* a remote on this machine is another user's repository to git */
	const char *local = ktrack_local_path(url);
	if (local && (r = write_gitconfig(&c, local)) < 0)
		return r;
	kbuild_stage(&c, "track: fetching branch %s from remote %s (%s)", branch, remote, url);
	struct ktrack_head head;
	struct strbuf msg = { 0 };
	if ((r = ktrack_fetch(c.src, url, remote, branch, kbuild_builder(&c), c.env, rq->fetch_timeout_s, &head, &msg)) < 0) {
		where(&c, rq->track_line);
		sb_puts(err, msg.buf ? msg.buf : "the fetch failed");
		sb_free(&msg);
		return r;
	}
	char ev[512];
	if ((r = ktrack_event(c.src, prev, head.sha, kbuild_builder(&c), c.env, ev, sizeof(ev))) < 0) {
		where(&c, rq->track_line);
		sb_printf(err, "track = %s %s: %s", remote, branch, ev);
		return r;
	}
	kbuild_stage(&c, "track: %s %s is at %.12s \"%s\"%s%s", remote, branch, head.sha, head.subject, ev[0] ? "; " : "", ev);
	*ret = head;
	snprintf(event, event_len, "%s", ev);
	return 0;
}
