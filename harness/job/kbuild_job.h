/* A job's kernels: each variant's build, recorded build or image, made
 * with kernels/build.h's per-build calls. kernels/ knows nothing of a
 * parsed job; this is where a job's variants become build requests. */
#pragma once
#include <stdint.h>

struct job;
struct kbuild_result;
struct store;
struct store_track;
struct strbuf;

struct kbuild_opts {
	const char *work_dir, *kernels_dir;  /* NULL: defaults */
	unsigned jobs;                       /* 0: the CPU count */
	void (*progress)(void *ctx, const char *name, const char *stage);
	void *progress_ctx;
	/* where each variant's build id goes (0 for kernel = running); may be NULL */
	int64_t *variant_builds;
	/* called after each variant's build (or reuse) */
	void (*done)(void *ctx, const char *variant, const struct kbuild_result *res);
	void *done_ctx;
	/* the job's id in the store, whose variant rows get a tracked
	 * variant's commit; 0: none (kab build records nothing) */
	int64_t job_id;
	/* called with a tracked variant's commit, before its build (done_ctx) */
	void (*tracked)(void *ctx, const char *variant, const struct store_track *t);
};

/* Builds (or reuses) the kernel of every kernel = build variant of j
 * (one with track = REMOTE BRANCH: the branch fetched and its head
 * resolved first, the commit recorded on the job's variant row with how
 * the head moved since the job name's previous night, then that commit
 * built; a fetch that fails records nothing),
 * takes the recorded build of every one with build = ID (all checked
 * first, so nothing is compiled for a job one of whose builds has gone)
 * and registers every kernel = image one, in order, stopping at the
 * first failure (its message in err, with the job's file:line for a
 * recorded build). */
int kbuild_job(struct store *st, const struct job *j, const struct kbuild_opts *o, struct strbuf *err);
/* The options j's swap settings need in its kernels (enum kbuild_need). */
unsigned kbuild_job_need(const struct job *j);
