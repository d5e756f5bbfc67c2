/* Job files as kab check, kab run and kabd's submit take them: read from
 * a file or a client, parsed from their text (job.c), then checked
 * against the machine (job_check.c), every problem of both sorted
 * together by line. Apart from the parser so that it links without the
 * machine checks (tests/fuzz/fuzz_job.c). */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* With the directory of file (job_dir) for the job's relative paths. */
static int parse_checked(const char *file, const char *text, bool build_only, struct job **ret, struct diags *d)
{
	_cleanup_free_ char *dir = job_dir(file);
	if (!dir) {
		diags_add(d, file, 0, "out of memory while reading the job");
		return -ENOMEM;
	}
	return job_parse_checked(file, dir, text, build_only, job_check_machine, ret, d);
}

int job_parse_string(const char *file, const char *text, struct job **ret, struct diags *d)
{
	return parse_checked(file, text, false, ret, d);
}

/* build_only: for kab build, which runs nothing: not the checks of
 * running a job that boots kernels (kexec possible, every variant naming
 * its kernel). */
static int parse_file(const char *path, bool build_only, struct job **ret, struct diags *d)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r = util_read_file(path, &text, &len);
	if (r < 0) {
		diags_add(d, path, 0, "cannot read: %s", strerror(-r));
		return r;
	}
	if ((r = job_check_size(path, len, d)) < 0)
		return r;
	if (memchr(text, 0, len)) {
		diags_add(d, path, 0, "contains a NUL byte: a job file is text");
		return -EINVAL;
	}
	return parse_checked(path, text, build_only, ret, d);
}

int job_parse_file(const char *path, struct job **ret, struct diags *d)
{
	return parse_file(path, false, ret, d);
}

int job_parse_file_build(const char *path, struct job **ret, struct diags *d)
{
	return parse_file(path, true, ret, d);
}
