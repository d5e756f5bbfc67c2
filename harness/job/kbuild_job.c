/* A job's kernels: for each variant, the build request kernels/ takes
 * (kbuild_build), its recorded build checked (kbuild_recorded) or its
 * image registered (kbuild_image), in the job's order. */
#include "harness/job/kbuild_job.h"
#include "kernels/build.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <string.h>

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
				if (o->progress)
					o->progress(o->progress_ctx, v->name, line);
			}
		} else if (strcmp(v->kernel, "build") == 0) {
			struct kbuild_request rq = {
				.file = j->file, .tree_line = v->tree_line, .base_line = v->base_line, .series_line = v->series_line,
				.config_line = v->config_line, .name = v->name, .tree = v->tree, .base = v->base, .series = v->series,
				.series_version = v->series_version,
				.archive = j->archive, .config = v->config, .fragments = v->fragments, .n_fragments = v->n_fragments,
				.need = need, .jobs = o->jobs, .work_dir = o->work_dir, .kernels_dir = o->kernels_dir,
				.progress = o->progress, .progress_ctx = o->progress_ctx,
			};
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
