/* The statuses the store records, from their lists (db/store.h): the
 * words the database keeps, their parsers, and which of them finished. */
#include "db/store.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define STORE_WORD_ITEM(e, word, ...) [e] = word,
static const char *const job_names[JOB_STATUS_N] = { JOB_STATUS_LIST(STORE_WORD_ITEM) };
static const char *const step_names[STEP_STATUS_N] = { STEP_STATUS_LIST(STORE_WORD_ITEM) };
static const char *const run_names[RUN_STATUS_N] = { RUN_STATUS_LIST(STORE_WORD_ITEM) };
static const char *const boot_names[BOOT_STATUS_N] = { BOOT_STATUS_LIST(STORE_WORD_ITEM) };
static const char *const build_names[BUILD_STATUS_N] = { BUILD_STATUS_LIST(STORE_WORD_ITEM) };
static const char *const journal_names[JOURNAL_KIND_N] = { JOURNAL_KIND_LIST(STORE_WORD_ITEM) };

#define FINISHED_ITEM(e, word, finished) [e] = finished,
static const bool job_finished[JOB_STATUS_N] = { JOB_STATUS_LIST(FINISHED_ITEM) };
static const bool run_finished[RUN_STATUS_N] = { RUN_STATUS_LIST(FINISHED_ITEM) };

UTIL_WORD_FUNCS(job_status, job_names, JOB_STATUS_N)
UTIL_WORD_FUNCS(step_status, step_names, STEP_STATUS_N)
UTIL_WORD_FUNCS(run_status, run_names, RUN_STATUS_N)
UTIL_WORD_FUNCS(boot_status, boot_names, BOOT_STATUS_N)
UTIL_WORD_FUNCS(build_status, build_names, BUILD_STATUS_N)
UTIL_WORD_FUNCS(journal_kind, journal_names, JOURNAL_KIND_N)

bool run_status_finished(enum run_status v)
{
	return v >= 0 && v < RUN_STATUS_N && run_finished[v];
}

/* 'w1','w2' of the words whose bit is set in which; NULL for none */
static void sql_set(const char *const *names, int n, const bool *which, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		if (which[i] && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s'%s'", at ? "," : "", names[i]);
	if (!at)
		snprintf(buf, len, "NULL");
}

const char *job_status_sql_set(bool (*pred)(enum job_status), char *buf, size_t len)
{
	bool which[JOB_STATUS_N];
	for (int i = 0; i < JOB_STATUS_N; i++)
		which[i] = pred((enum job_status)i);
	sql_set(job_names, JOB_STATUS_N, which, buf, len);
	return buf;
}

const char *run_status_sql_set(bool (*pred)(enum run_status), char *buf, size_t len)
{
	bool which[RUN_STATUS_N];
	for (int i = 0; i < RUN_STATUS_N; i++)
		which[i] = pred((enum run_status)i);
	sql_set(run_names, RUN_STATUS_N, which, buf, len);
	return buf;
}

bool job_status_finished(enum job_status v)
{
	return v >= 0 && v < JOB_STATUS_N && job_finished[v];
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
