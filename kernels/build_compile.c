/* A build's compile: the build log, the config in the object directory,
 * make with its progress counted from its output, the kernel release. */
#include "kernels/build.h"
#include "kernels/build_priv.h"
#include "kernels/builduser.h"
#include "kernels/run.h"
#include "db/store_builds.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_TAIL_LINES 25

static void compile_line(void *arg, const char *line)
{
	struct kbuild_ctx *c = arg;
	/* kbuild at V=0: "  CC      mm/vmscan.o", "  CC [M]  fs/x.o" */
	if (strncmp(line, "  CC ", 5) == 0)
		c->objects++;
	if (strstr(line, "warning:"))
		c->warnings++;
	double now = util_mono_now();
	if (now - c->last_progress >= 15) {
		c->last_progress = now;
		kbuild_stage(c, "compile: %lld objects after %.0f s", (long long)c->objects, now - c->t0);
	}
}

static void read_tail(const char *log, struct strbuf *out)
{
	_cleanup_free_ char *text = NULL;
	size_t n;
	if (util_read_file(log, &text, &n) < 0)
		return;
	size_t lines = 0, i = n;
	while (i > 0 && lines <= LOG_TAIL_LINES)
		if (text[--i] == '\n' && i + 1 < n)
			lines++;
	sb_puts(out, text + (i ? i + 1 : 0));
}

int kbuild_make(struct kbuild_ctx *c, int log_fd, const char *localversion, bool modules, const char *target_extra,
		const char *var_extra)
{
	char o[PATH_MAX + 40], lv[64], jobs[32], cc[64] = "";
	snprintf(o, sizeof(o), "O=%s", c->obj);
	snprintf(lv, sizeof(lv), "LOCALVERSION=%s", localversion);
	unsigned n = c->rq->jobs ? c->rq->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(jobs, sizeof(jobs), "-j%u", n ? n : 1);
	char ccache[PATH_MAX];
	if (util_find_program("ccache", ccache, sizeof(ccache)))
		snprintf(cc, sizeof(cc), "CC=ccache gcc");
	char *argv[16] = { "make", "-C", c->src, o, jobs, lv };
	size_t k = 6;
	if (cc[0])
		argv[k++] = cc;
	if (var_extra)
		argv[k++] = (char *)var_extra;
	if (target_extra) {
		argv[k++] = (char *)target_extra;
	} else {
		argv[k++] = "bzImage";
		if (modules)
			argv[k++] = "modules";
	}
	argv[k] = NULL;
	struct krun ro = kbuild_as_builder(c, log_fd);
	ro.line = compile_line;
	ro.ctx = c;
	int status, r = krun(argv, &ro, &status);
	if (r < 0)
		return r;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* The build's log, WORK/<tree key>/build-<id>.log, its path in path and
 * in b, its fd in *ret_fd (the caller's to close, also on failure). */
static int open_log(struct kbuild_ctx *c, struct store_build *b, char *path, size_t len, int *ret_fd)
{
	snprintf(path, len, "%s/build-%lld.log", c->root, (long long)b->id);
	b->log_path = strdup(path);
	/* 0600 also when an earlier database's build of that id left one */
	*ret_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*ret_fd < 0 || fchmod(*ret_fd, 0600) < 0) {
		sb_printf(c->err, "%s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The config in the object directory, which the build user owns, and what
 * the build makes besides bzImage: modules, and an initramfs of them. */
static int object_dir(struct kbuild_ctx *c, bool *ret_modules, bool *ret_initrd)
{
	int r = kbuser_own_dir(kbuild_builder(c), c->obj, c->err);
	if (r < 0)
		return -EIO;
	if (r > 0)
		kbuild_stage(c, "compile: gave %s, made by an earlier kab as root, to %s (chown -R, no symlink followed)", c->obj,
			     c->user.name);
	char from[PATH_MAX + 16], to[PATH_MAX + 48];
	snprintf(from, sizeof(from), "%s/.config", c->kc);
	snprintf(to, sizeof(to), "%s/.config", c->obj);
	char have[65] = "";
	/* the same config keeps its mtime, so kbuild sees nothing changed */
	if ((kbuild_builder_sha256(c, to, have) < 0 || strcmp(have, c->config_hash) != 0) && kbuild_copy_as(&c->as, from, to, c->err) < 0)
		return -EIO;
	_cleanup_free_ char *cfg = NULL;
	size_t len;
	bool modules = kbuser_read_file(kbuild_builder(c), to, &cfg, &len) == 0 && kconfig_is_set(cfg, "MODULES", false);
	/* a kernel without initrd support boots from what is built in, or not at all */
	bool initrd = modules && kconfig_is_set(cfg, "BLK_DEV_INITRD", false);
	if (modules && !initrd)
		kbuild_stage(c, "initramfs: none, the config has modules but not BLK_DEV_INITRD: its boot drivers must be built in");
	*ret_modules = modules;
	*ret_initrd = initrd;
	return 0;
}

/* make, with the objects, the warnings and the tail of the log (path) in
 * b. -ECANCELED when stopped, -EIO when make failed. */
static int run_compile(struct kbuild_ctx *c, struct store_build *b, const char *localversion, bool modules,
		       const char *path, int log_fd)
{
	kbuild_stage(c, "compile: make -C %s O=%s LOCALVERSION=%s bzImage%s", c->src, c->obj, localversion,
		     modules ? " modules" : "");
	c->t0 = c->last_progress = util_mono_now();
	int r = kbuild_make(c, log_fd, localversion, modules, NULL, NULL);
	b->objects = c->objects;
	b->warnings = c->warnings;
	struct strbuf tail = { 0 };
	read_tail(path, &tail);
	b->log_tail = tail.buf;
	if (r == -ECANCELED) {
		sb_printf(c->err, "build %lld: stopped after %lld objects (kab was stopped or the job cancelled); the next build of the same inputs goes on in the same object directory",
			  (long long)b->id, (long long)c->objects);
		return r;
	}
	if (r < 0) {
		sb_printf(c->err, "build %lld: make failed (%lld objects compiled); log %s ends:\n%s", (long long)b->id,
			  (long long)c->objects, path, tail.buf ? tail.buf : "");
		return -EIO;
	}
	kbuild_stage(c, "compile: done, %lld objects compiled, %lld warnings, %.0f s", (long long)c->objects,
		     (long long)c->warnings, util_mono_now() - c->t0);
	return 0;
}

/* The kernel release the build wrote, in b. */
static int read_release(struct kbuild_ctx *c, struct store_build *b)
{
	char rel_path[PATH_MAX + 48];
	snprintf(rel_path, sizeof(rel_path), "%s/include/config/kernel.release", c->obj);
	_cleanup_free_ char *rel = NULL;
	size_t len;
	int r = kbuser_read_file(kbuild_builder(c), rel_path, &rel, &len);
	if (r < 0) {
		sb_printf(c->err, "build %lld: %s after the build: %s", (long long)b->id, rel_path,
			  r == -ENOENT ? "missing" : kbuser_strerror(r));
		return -EIO;
	}
	rel[strcspn(rel, "\n")] = 0;
	snprintf(b->kernelrelease, sizeof(b->kernelrelease), "%s", rel);
	return 0;
}

/* Compiles, copies and checks; fills b. -EIO with c->err set on failure. */
int kbuild_compile(struct kbuild_ctx *c, struct store_build *b, struct kbuild_result *ret)
{
	char localversion[48], path[PATH_MAX + 64];
	snprintf(localversion, sizeof(localversion), "-kab%lld", (long long)b->id);
	_cleanup_close_ int log_fd = -1;
	bool modules, initrd;
	int r;
	if ((r = open_log(c, b, path, sizeof(path), &log_fd)) < 0 || (r = object_dir(c, &modules, &initrd)) < 0)
		return r;
	if ((r = run_compile(c, b, localversion, modules, path, log_fd)) < 0 || (r = read_release(c, b)) < 0)
		return r;
	if (kbuild_artifacts_copy(c, b, modules, initrd, localversion, log_fd) < 0)
		return -EIO;
	kbuild_stage(c, "artifacts: %s (%s)", b->dir, b->kernelrelease);
	snprintf(ret->kernelrelease, sizeof(ret->kernelrelease), "%s", b->kernelrelease);
	snprintf(ret->image, sizeof(ret->image), "%s", b->image);
	return 0;
}
