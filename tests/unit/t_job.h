/* For the unit tests that parse job files: a job from text. */
#pragma once
#include "t.h"
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A workload section built by hand: type, and key/value pairs ending in
 * NULL, at lines 11, 12, ... (the section's own line is 10). */
static inline struct job_workload *t_workload(const char *type, const char *const *kv)
{
	struct job_workload *w = calloc(1, sizeof(*w));
	w->name = strdup("w");
	w->type = strdup(type);
	w->line = 10;
	size_t n = 0;
	while (kv[2 * n])
		n++;
	w->params = calloc(n ? n : 1, sizeof(*w->params));
	for (size_t i = 0; i < n; i++)
		w->params[i] = (struct job_param){ strdup(kv[2 * i]), strdup(kv[2 * i + 1]), 11 + (int)i };
	w->n_params = n;
	wl_opts_make(wl_find(type), w, &w->opts);
	return w;
}

static inline void t_workload_free(struct job_workload *w)
{
	job_workload_clear(w);
	free(w);
}
