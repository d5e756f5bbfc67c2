/* A job's kernels: for each variant, the build request kernels/ takes
 * (kbuild_build), its recorded build checked (kbuild_recorded) or its
 * image registered (kbuild_image), in the job's order. */
#include "harness/job/kbuild_job.h"
#include "kernels/build.h"
#include "kernels/builduser.h"
#include "kernels/track.h"
#include "harness/job/job.h"
#include "db/store_builds.h"
#include "db/store_track.h"
#include "harness/base/util.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

unsigned kbuild_job_need(const struct job *j)
{
	return (j->swap.kind == JOB_SWAP_ZRAM ? KBUILD_NEED_ZRAM : 0) | (j->swap.zswap == JOB_ON ? KBUILD_NEED_ZSWAP : 0);
}

/* A variant's build = ID, checked; an error names the key's line. */
static int recorded(struct store *st, const struct job *j, const struct job_variant *v, unsigned need,
		    struct kbuild_result *res, struct strbuf *err)
{
	struct strbuf why = { 0 };
	int r = kbuild_recorded(st, v->build_id, v->initrd != NULL, need, res, &why);
	if (r < 0)
		sb_printf(err, "%s:%d: %s", j->file ? j->file : "job", v->build_line, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r;
}

/* What a tracked variant's request points to: the commit it builds and
 * the track it records as its base ref. */
struct tracked {
	char sha[41];
	char track[300];
};

/* A tracked variant, before its build: the job name's previous night's
 * commit for it, the branch fetched and its head resolved, recorded on
 * the job's variant row; rq then builds that commit (out's). */
static int track_variant(struct store *st, const struct job *j, size_t vi, const struct kbuild_opts *o,
			 struct kbuild_request *rq, struct tracked *out, struct strbuf *err)
{
	const struct job_variant *v = &j->variants[vi];
	struct store_track t = { 0 };
	char prev[41] = "";
	snprintf(t.track, sizeof(t.track), "%s %s", v->track_remote, v->track_branch);
	int r = store_track_previous(st, j->name, v->name, t.track, o->job_id, prev);
	if (r < 0 && r != -ENOENT) {
		sb_printf(err, "variant %s: cannot read its previous night's commit from the database", v->name);
		return r;
	}
	struct ktrack_head head;
	r = kbuild_track_fetch(rq, v->track_remote, v->track_branch, prev[0] ? prev : NULL, &head, t.event, sizeof(t.event), err);
	if (r < 0)
		return r;
	snprintf(t.sha, sizeof(t.sha), "%s", head.sha);
	snprintf(t.subject, sizeof(t.subject), "%s", head.subject);
	t.date = head.date;
	if (o->job_id > 0 && (r = store_variant_track_set(st, o->job_id, vi, &t)) < 0) {
		sb_printf(err, "variant %s: cannot record its commit %.12s in the database", v->name, t.sha);
		return r;
	}
	char line[1024];
	snprintf(line, sizeof(line), "track %s: %.12s \"%s\"%s%s", t.track, t.sha, t.subject, t.event[0] ? "; " : "", t.event);
	log_info("variant %s: %s", v->name, line);
	if (o->progress)
		o->progress(o->progress_ctx, v->name, line);
	if (o->tracked)
		o->tracked(o->done_ctx, v->name, &t);
	memcpy(out->sha, head.sha, 41);
	snprintf(out->track, sizeof(out->track), "%s", t.track);
	rq->base = out->sha;
	rq->track = out->track;
	return 0;
}

/* A recorded build of a tracked branch (its base_ref "REMOTE BRANCH", as
 * kab build records a track): the commit it was built from is the
 * night's, recorded on the job's variant row as a tracked variant's is,
 * so that the history and its regressions name commits when a build
 * machine builds the nights and a lab machine runs them by build = ID.
 * The subject and date are read in kab's clone of the tree when it is
 * there; without it the commit is recorded alone. Once a job: the build
 * stage runs until the job's builds are recorded with it (executor.c),
 * not again at each boot; after a crash between the two it writes the
 * same row again. */
static void recorded_track(struct store *st, const struct kbuild_opts *o, size_t vi, int64_t build_id)
{
	struct store_build b = { 0 };
	if (o->job_id <= 0 || store_build_get(st, build_id, &b) < 0)
		return;
	char remote[KTRACK_NAME_MAX + 1], branch[KTRACK_NAME_MAX + 1];
	struct store_track t = { 0 };
	if (strcmp(b.kind, "build") == 0 && b.tree && b.base_sha[0] && ktrack_parse_ref(b.base_ref, remote, branch)) {
		snprintf(t.track, sizeof(t.track), "%s", b.base_ref);
		snprintf(t.sha, sizeof(t.sha), "%s", b.base_sha);
		char clone[PATH_MAX];
		struct krun_user u;
		struct ktrack_head h;
		/* git as the clone's owner (kab-build, who fetched into it), never
		 * as root in another user's directory; a lab machine that does
		 * not build may have no kab-build, only the clone it was given */
		int as = kbuild_clone_dir(o->work_dir, b.tree, clone, sizeof(clone)) == 0 ? kbuser_owner(clone, &u) : -ENOENT;
		if (as >= 0 && ktrack_describe(clone, b.base_sha, as > 0 ? &u : NULL, NULL, &h) == 0) {
			snprintf(t.subject, sizeof(t.subject), "%s", h.subject);
			t.date = h.date;
		}
	}
	if (t.sha[0] && store_variant_track_set(st, o->job_id, vi, &t) < 0)
		log_warn("variant %zu: cannot record the commit %.12s of build %lld in the database", vi, t.sha, (long long)build_id);
	store_build_clear(&b);
}

int kbuild_job(struct store *st, const struct job *j, const struct kbuild_opts *o, struct strbuf *err)
{
	unsigned need = kbuild_job_need(j);
	struct kbuild_result res;
	/* recorded builds first: one that has gone since the job was
	 * submitted fails the job before minutes of compiling the others */
	for (size_t i = 0; i < j->n_variants; i++) {
		int r = job_variant_recorded(&j->variants[i]) ? recorded(st, j, &j->variants[i], need, &res, err) : 0;
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		int r;
		if (o->variant_builds)
			o->variant_builds[i] = 0;
		if (strcmp(v->kernel, "image") == 0) {
			if (o->progress)
				o->progress(o->progress_ctx, v->name, "registering its kernel image");
			r = kbuild_image(st, v->image, v->initrd, o->kernels_dir, &res, err);
		} else if (job_variant_recorded(v)) {
			if ((r = recorded(st, j, v, need, &res, err)) == 0) {
				char line[512];
				kbuild_recorded_describe(&res, line, sizeof(line));
				log_info("variant %s: %s", v->name, line);
				recorded_track(st, o, i, v->build_id);
				if (o->progress)
					o->progress(o->progress_ctx, v->name, line);
			}
		} else if (strcmp(v->kernel, "build") == 0) {
			struct kbuild_request rq = {
				.file = j->file,
				.tree_line = v->tree_line,
				.base_line = v->base_line,
				.series_line = v->series_line,
				.config_line = v->config_line,
				.name = v->name,
				.tree = v->tree,
				.base = v->base,
				.series = v->series,
				.series_version = v->series_version,
				.archive = j->archive,
				.config = v->config,
				.fragments = v->fragments,
				.n_fragments = v->n_fragments,
				.need = need,
				.jobs = o->jobs,
				.work_dir = o->work_dir,
				.kernels_dir = o->kernels_dir,
				.progress = o->progress,
				.progress_ctx = o->progress_ctx,
				.track_line = v->track_line,
			};
			struct tracked tr;
			r = v->track_remote ? track_variant(st, j, i, o, &rq, &tr, err) : 0;
			if (r == 0)
				r = kbuild_build(st, &rq, &res, err);
		} else {
			continue;
		}
		if (r < 0)
			return r;
		if (o->variant_builds)
			o->variant_builds[i] = res.id;
		if (o->done)
			o->done(o->done_ctx, v->name, &res);
	}
	return 0;
}
