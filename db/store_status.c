/* The name tables of the statuses the store records: one word per enum
 * value, the words the database keeps. */
#include "db/store.h"

#include <errno.h>
#include <string.h>

static const char *const job_names[JOB_STATUS_N] = {
	[JOB_QUEUED] = "queued",
	[JOB_RUNNING] = "running",
	[JOB_INTERRUPTED] = "interrupted",
	[JOB_DONE] = "done",
	[JOB_FAILED] = "failed",
	[JOB_CANCELLED] = "cancelled",
};

static const char *const step_names[STEP_STATUS_N] = {
	[STEP_PENDING] = "pending",
	[STEP_STARTED] = "started",
	[STEP_FINISHED] = "finished",
	[STEP_ABORTED] = "aborted",
	[STEP_SKIPPED] = "skipped",
	[STEP_BOOT_FAILED] = "boot-failed",
};

static const char *const run_names[RUN_STATUS_N] = {
	[RUN_OK] = "ok",
	[RUN_FAILED] = "failed",
	[RUN_OOM_KILLED] = "oom-killed",
	[RUN_OOM_CONTAMINATED] = "oom-contaminated",
	[RUN_EXPECT_FAILED] = "expect-failed",
	[RUN_TIMED_OUT] = "timed-out",
	[RUN_ABORTED] = "aborted",
	[RUN_SKIPPED] = "skipped",
	[RUN_STARTED] = "started",
	[RUN_WARMUP] = "warmup",
};

static const char *const boot_names[BOOT_STATUS_N] = {
	[BOOT_SWITCHING] = "switching",
	[BOOT_OK] = "ok",
	[BOOT_FAILED] = "failed",
	[BOOT_ABANDONED] = "abandoned",
};

static const char *const build_names[BUILD_STATUS_N] = {
	[BUILD_BUILDING] = "building",
	[BUILD_OK] = "ok",
	[BUILD_FAILED] = "failed",
};

static const char *name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "unknown";
}

/* The index of s in names; -EINVAL when it is none of them. */
static int index_of(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *job_status_name(enum job_status v)
{
	return name_of(job_names, JOB_STATUS_N, (int)v);
}

int job_status_parse(const char *s, enum job_status *ret)
{
	int i = index_of(job_names, JOB_STATUS_N, s);
	if (i < 0)
		return i;
	*ret = (enum job_status)i;
	return 0;
}

bool job_status_finished(enum job_status v)
{
	return v == JOB_DONE || v == JOB_FAILED || v == JOB_CANCELLED;
}

/* A job's life (store.h): which status may follow which. A row's own
 * status may always be written again with a new reason. */
static const unsigned job_next[JOB_STATUS_N] = {
	[JOB_QUEUED] = 1u << JOB_RUNNING | 1u << JOB_FAILED | 1u << JOB_CANCELLED,
	[JOB_RUNNING] = 1u << JOB_INTERRUPTED | 1u << JOB_DONE | 1u << JOB_FAILED | 1u << JOB_CANCELLED,
	[JOB_INTERRUPTED] = 1u << JOB_RUNNING | 1u << JOB_FAILED | 1u << JOB_CANCELLED,
	/* kab run --resume continues a failed or cancelled job by hand */
	[JOB_FAILED] = 1u << JOB_RUNNING,
	[JOB_CANCELLED] = 1u << JOB_RUNNING,
	[JOB_DONE] = 0,
};

bool job_transition_allowed(enum job_status from, enum job_status to)
{
	if (from < 0 || from >= JOB_STATUS_N || to < 0 || to >= JOB_STATUS_N)
		return false;
	return from == to || (job_next[from] & 1u << to);
}

size_t job_transition_from(enum job_status to, enum job_status *from, size_t cap)
{
	size_t n = 0;
	for (int f = 0; f < JOB_STATUS_N; f++)
		if (job_transition_allowed((enum job_status)f, to) && n < cap)
			from[n++] = (enum job_status)f;
	return n;
}

const char *step_status_name(enum step_status v)
{
	return name_of(step_names, STEP_STATUS_N, (int)v);
}

int step_status_parse(const char *s, enum step_status *ret)
{
	int i = index_of(step_names, STEP_STATUS_N, s);
	if (i < 0)
		return i;
	*ret = (enum step_status)i;
	return 0;
}

const char *run_status_name(enum run_status v)
{
	return name_of(run_names, RUN_STATUS_N, (int)v);
}

int run_status_parse(const char *s, enum run_status *ret)
{
	int i = index_of(run_names, RUN_STATUS_N, s);
	if (i < 0)
		return i;
	*ret = (enum run_status)i;
	return 0;
}

const char *boot_status_name(enum boot_status v)
{
	return name_of(boot_names, BOOT_STATUS_N, (int)v);
}

int boot_status_parse(const char *s, enum boot_status *ret)
{
	int i = index_of(boot_names, BOOT_STATUS_N, s);
	if (i < 0)
		return i;
	*ret = (enum boot_status)i;
	return 0;
}

const char *build_status_name(enum build_status v)
{
	return name_of(build_names, BUILD_STATUS_N, (int)v);
}

int build_status_parse(const char *s, enum build_status *ret)
{
	int i = index_of(build_names, BUILD_STATUS_N, s);
	if (i < 0)
		return i;
	*ret = (enum build_status)i;
	return 0;
}
