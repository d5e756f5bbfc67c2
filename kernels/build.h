/* Kernel builds: a baseline or a patched kernel from a git tree, a base
 * ref, a patch series and a config, built out of tree so a patched build
 * recompiles only what its series touches, recorded in the database and
 * reused when the same inputs come again. */
#pragma once
#include "harness/base/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct strbuf;

/* Unless the request, --work-dir / --kernels-dir or $KAB_KBUILD_WORK /
 * $KAB_KERNELS_DIR name others: the work directory (worktrees, object
 * directories) where the build user can reach it, root's and searchable;
 * the artifacts, which only root writes, in the state directory
 * (statedir.h), whose mode 0700 the build user cannot pass. */
#define KBUILD_WORK_DEFAULT CONFIG_KBUILD_WORK_DEFAULT
#define KBUILD_KERNELS_SUBDIR "kernels"
/* Bumped whenever how kab builds changes, so old builds are not reused
 * (2: builds with modules have an initramfs). */
#define KBUILD_RECIPE "kab-kbuild-2"

/* Options a job needs beyond those every build gets (PROC_FS, MEMCG,
 * SWAP, KEXEC_FILE). */
enum kbuild_need {
	KBUILD_NEED_ZRAM = 1 << 0,
	KBUILD_NEED_ZSWAP = 1 << 1,
};

struct kbuild_request {
	/* where the request came from, for "file:line: ..." (file may be NULL) */
	const char *file;
	int tree_line, base_line, series_line, config_line;
	const char *name;         /* shown in progress lines, e.g. the variant */
	const char *tree;         /* a git repository; its working copy is never touched */
	const char *base;         /* any ref; with track, the commit kbuild_track_fetch resolved (40 hex digits) */
	/* track = REMOTE BRANCH ("origin mm-unstable"; NULL: none): base was
	 * fetched into kab's clone of the tree, not looked up in the tree,
	 * and the build records this as its base ref */
	const char *track;
	int track_line;
	const char *series;       /* NULL, an mbox, a directory of .patch files, or lore:<message-id> */
	unsigned series_version;  /* the version of the series to take (series = ... vN); 0: the thread's only one */
	const char *archive;      /* for lore: a public-inbox https:// base URL or a local directory */
	const char *config;       /* running | defconfig | tinyconfig | PATH */
	char *const *fragments;   /* config fragments merged on top, in order */
	size_t n_fragments;
	unsigned need;            /* enum kbuild_need */
	unsigned jobs;            /* make -j; 0: the CPU count */
	const char *work_dir;     /* worktrees and object directories; NULL: default */
	const char *kernels_dir;  /* artifacts; NULL: default */
	/* optional: each stage line ("compiling", "142 objects", …) as it goes */
	void (*progress)(void *ctx, const char *name, const char *stage);
	void *progress_ctx;
	/* kbuild_track_fetch for a caller that must not wait (kabd's request
	 * threads): the tree's lock taken at once or -EBUSY, and the fetch
	 * bounded by fetch_timeout_s (0: KTRACK_FETCH_TIMEOUT_S) */
	bool no_wait;
	unsigned fetch_timeout_s;
};

struct kbuild_result {
	int64_t id;
	bool reused;              /* an earlier build with the same inputs */
	bool recorded;            /* a build the job named by its id (kbuild_recorded) */
	char kernelrelease[128];
	int64_t objects;          /* objects compiled (0 when reused or recorded) */
	double duration_s;
	char image[4096];
	char base_sha[41];        /* recorded: what it was built from */
	unsigned patches;
};

/* Builds (or reuses) the kernel rq describes and records it in st. On
 * failure err gets one message saying what, where and what to do (with
 * the build log's tail for a compile error), and no artifact is left.
 * -EINVAL: bad input; -ENOSPC: not enough disk; -ENOPKG, -EPERM: the
 * config has modules, and so the build an initramfs, but mkinitramfs is
 * missing or kab is not root (see initramfs.h); -EIO: the build failed. */
int kbuild_build(struct store *st, const struct kbuild_request *rq, struct kbuild_result *ret, struct strbuf *err);

/* The directory of tree (its real path, as builds record it) under
 * work_dir (NULL: the configured work directory): WORK/<tree key>. */
void kbuild_tree_dir(const char *work_dir, const char *tree, char *buf, size_t len);
/* kab's clone of tree there (WORK/<tree key>/src), where tracked branches
 * are fetched and builds check their commits out: 0, or -ENAMETOOLONG. */
int kbuild_clone_dir(const char *work_dir, const char *tree, char *buf, size_t len);

struct ktrack_head;
/* track = REMOTE BRANCH, before its build: fetches the branch from the
 * tree's remote into kab's clone of the tree (WORK/<tree key>/src, made
 * when missing), as the build user, under the tree's lock (rq->no_wait:
 * -EBUSY at once when a build holds it), bounded in time
 * (kernels/track.h), and resolves its head into *ret; event gets
 * how it moved from prev, the previous night's commit (NULL: none):
 * "" (first night, unchanged, forward) or "force-pushed: ..." (see
 * ktrack_event). rq gives the tree, the work directory, the name, the
 * file and track_line. The tree is never written. 0, or -errno with err
 * naming the remote, the branch and git's message. */
int kbuild_track_fetch(const struct kbuild_request *rq, const char *remote, const char *branch, const char *prev,
		       struct ktrack_head *ret, char *event, size_t event_len, struct strbuf *err);

/* Machine checks for job files; git runs as the build user (builduser.h).
 * Whether tree is a git repository the build user can read: 0, or -ENOENT
 * (missing), -EINVAL (no repository), -EACCES (unreadable, or no build
 * user) with why, without a file:line, in why. */
int kbuild_check_tree(const char *tree, struct strbuf *why);
/* The commit ref names in tree (40 hex digits); -ENOENT when unknown. */
int kbuild_resolve_ref(const char *tree, const char *ref, char sha[41]);
/* As kbuild_resolve_ref, and a full sha the tree lacks that kab's clone
 * of it (kbuild_clone_dir; work_dir NULL: the configured one) has: a
 * commit fetched for a tracked branch, which a bisection or a nightly
 * confirmation pins. */
int kbuild_resolve_sha(const char *work_dir, const char *tree, const char *ref, char sha[41]);
/* The running kernel's config: /proc/config.gz or /boot/config-RELEASE;
 * -ENOENT when neither exists. */
int kbuild_running_config(char *path, size_t len);

/* The version string of an x86 bzImage (its setup header: "HdrS" at
 * 0x202, the string at 0x200 + the offset at 0x20e). -EINVAL: not one. */
int kbuild_image_version(const char *path, char *buf, size_t len);

/* A build recorded earlier, named by its id (a job's build = ID), to be
 * booted as it is: it must be in st, ok, of kind build (kab built it, not
 * an image registration), its image a regular, readable bzImage of its
 * kernelrelease, its initrd (unless own_initrd: the variant gives one)
 * and, when need asks for options, its config regular readable files,
 * the config with those options. Nothing is built or written. 0 with
 * *ret filled (recorded set); -EINVAL with what is wrong in err (no
 * file:line: the caller has the key's line); another -errno when the
 * database cannot be read. */
int kbuild_recorded(struct store *st, int64_t id, bool own_initrd, unsigned need, struct kbuild_result *ret,
		    struct strbuf *err);
/* "build 1 recorded (6.1.0-kab1, base 71864f7f0e85, 2 patches), not rebuilt" */
void kbuild_recorded_describe(const struct kbuild_result *res, char *buf, size_t len);

/* Registers a kernel image file (and its initrd, may be NULL) as a build
 * of kind image: copied under kernels_dir (NULL: the default), its release
 * read from the image; the same contents give back the same build. */
int kbuild_image(struct store *st, const char *image, const char *initrd, const char *kernels_dir,
		 struct kbuild_result *ret, struct strbuf *err);
