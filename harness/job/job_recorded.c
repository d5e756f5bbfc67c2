/* Job files: a variant's build = ID against the database the job runs
 * with. The parser has none (kab check checks only the form of the id),
 * so kabd's submit calls this once it has parsed the job, and the
 * executor's build stage checks again (kbuild_job): the build may have
 * gone in between. */
#include "kernels/build.h"
#include "harness/job/job.h"
#include "harness/job/kbuild_job.h"
#include "harness/base/util.h"

size_t job_check_builds(const struct job *j, struct store *st, struct diags *d)
{
	size_t n = 0;
	unsigned need = kbuild_job_need(j);
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		if (!job_variant_recorded(v))
			continue;
		struct kbuild_result res;
		struct strbuf why = { 0 };
		if (kbuild_recorded(st, v->build_id, v->initrd != NULL, need, &res, &why) < 0) {
			diags_add(d, j->file, v->build_line, "%s", why.buf ? why.buf : "the build cannot be used");
			n++;
		}
		sb_free(&why);
	}
	return n;
}
