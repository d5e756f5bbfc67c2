/* For the unit tests that parse job files: a job from text. */
#pragma once
#include "t.h"
#include "harness/job/job.h"
#include "harness/base/util.h"

#include <stdio.h>

/* A job from text, unchecked against this machine; NULL (its errors
 * printed) when it does not parse. */
static inline struct job *t_parse_job(const char *text)
{
	struct diags d = { 0 };
	struct job *j = NULL;
	if (job_parse_string_nocheck("unit.job", text, &j, &d) < 0)
		diags_print(&d, stderr);
	diags_free(&d);
	return j;
}
