/* Inside kernels/: one build's state and what build.c, build_compile.c and
 * build_artifacts.c share: build.c runs the stages, build_compile.c the
 * compile, build_artifacts.c what the compile leaves. */
#pragma once
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/kbuild_priv.h"
#include "kernels/run.h"
#include "kernels/series.h"
#include "harness/base/util.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct store_build;

#define MiB (1ull << 20)

/* One kbuild_build, from its request to its artifacts. */
struct kbuild_ctx {
	const struct kbuild_request *rq;
	struct strbuf *err;
	/* who runs the tools: the build user when kab is root (drop) */
	struct krun_user user;
	bool drop;
	char gitconfig_env[PATH_MAX + 32];
	char *env[2];
	struct kbuild_as as;
	char work[PATH_MAX], kernels[PATH_MAX];
	char root[PATH_MAX];     /* WORK/<tree key> */
	char src[PATH_MAX + 8];  /* the worktree */
	char kc[PATH_MAX + 8];
	char obj[PATH_MAX + 32];
	char tree[PATH_MAX];
	char sha[41];
	struct kseries series;
	bool has_series;
	char config_hash[65];
	char config_desc[4096];
	/* compile */
	int64_t objects, warnings;
	double last_progress, t0;
};

/* A step of the build, in kab's log and to the request's progress callback. */
void kbuild_stage(const struct kbuild_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Who runs the tools: the build user, or NULL for kab itself. */
const struct krun_user *kbuild_builder(const struct kbuild_ctx *c);
/* A krun of the build user's, its output to log_fd. */
struct krun kbuild_as_builder(const struct kbuild_ctx *c, int log_fd);
/* The sha256 of a file the build made, read as the build user. */
int kbuild_builder_sha256(const struct kbuild_ctx *c, const char *path, char hex[65]);
/* make in the worktree with O=, LOCALVERSION= and -j: bzImage (and modules),
 * or target_extra with var_extra. 0, -ECANCELED or -EIO. */
int kbuild_make(struct kbuild_ctx *c, int log_fd, const char *localversion, bool modules, const char *target_extra,
		const char *var_extra);
/* Copies bzImage, System.map and config into KERNELS/<b's id>, then with
 * modules modules.tar and with initrd initrd.img, and checks the bzImage is
 * one of b's kernel release; fills b's paths. */
int kbuild_artifacts_copy(struct kbuild_ctx *c, struct store_build *b, bool modules, bool initrd, const char *localversion,
			  int log_fd);
/* Compiles the object directory's config into b's artifacts and checks
 * them; fills b and ret's release and image. -EIO (or -ECANCELED when
 * stopped) with c->err set. */
int kbuild_compile(struct kbuild_ctx *c, struct store_build *b, struct kbuild_result *ret);
