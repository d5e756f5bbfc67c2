/* A job's life (harness/exec/joblife.h): submit, transitions checked
 * against the table before anything is written, cancel and resume. The
 * run itself (jl_run) acts on the machine: tests/integration covers it. */
#include "t.h"
#include "t_job.h"
#include "harness/exec/joblife.h"
#include "db/store.h"

#include <errno.h>
#include <sqlite3.h>
#include <unistd.h>

static const char job_text[] = "[job]\nname = life\npairs = 2\norder = abba\n"
			       "[swap]\ndevice = none\n"
			       "[variant A]\nname = base\n"
			       "[variant B]\nname = patched\n"
			       "[workload w]\ntype = command\ncommand = true\n";

static enum job_status status_of(struct store *st, int64_t id, char *reason, size_t len)
{
	struct store_job sj;
	if (store_job_info(st, id, &sj) < 0)
		return JOB_STATUS_UNKNOWN;
	if (reason)
		snprintf(reason, len, "%s", sj.reason);
	return sj.status;
}

static int64_t submit(struct store *st)
{
	struct job *j = t_parse_job(job_text);
	if (!j)
		return 0;
	int64_t id = 0;
	size_t n = 0;
	T_EQ_INT(jl_submit(st, j, "unit", &id, &n), 0);
	T_EQ_INT((long long)n, 2 * 2 + 1); /* two pairs of two variants, and the warm-up */
	job_free(j);
	return id;
}

static void test_transition(struct store *st)
{
	int64_t id = submit(st);
	char reason[256];
	T_EQ_INT(status_of(st, id, NULL, 0), JOB_QUEUED);
	/* a caller naming a change the table forbids: refused, nothing written */
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_QUEUED), JOB_DONE, "x"), -EINVAL);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_QUEUED) | JL_FROM(JOB_DONE), JOB_RUNNING, "x"), -EINVAL);
	T_EQ_INT(jl_transition(st, id, 0, JOB_RUNNING, "x"), -EINVAL);
	T_EQ_INT(status_of(st, id, reason, sizeof(reason)), JOB_QUEUED);
	T_EQ_STR(reason, "");
	/* allowed by the table, but the job is not in the status the caller expects */
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), JOB_FAILED, "y"), -EPERM);
	T_EQ_INT(jl_note(st, id, "not running yet"), -EPERM);
	T_EQ_INT(status_of(st, id, NULL, 0), JOB_QUEUED);
	T_EQ_INT(jl_transition(st, id, JL_STARTABLE, JOB_RUNNING, NULL), 0);
	T_EQ_INT(jl_note(st, id, "building kernels"), 0);
	T_EQ_INT(status_of(st, id, reason, sizeof(reason)), JOB_RUNNING);
	T_EQ_STR(reason, "building kernels");
	/* a stopped job is cancelled or interrupted once: never one over the other */
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), JOB_CANCELLED, "stop"), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_CANCELLED), JOB_INTERRUPTED, "kabd stopped"), -EINVAL);
	T_EQ_INT(status_of(st, id, reason, sizeof(reason)), JOB_CANCELLED);
	T_EQ_STR(reason, "stop");
	/* kab run --resume takes a cancelled job up again */
	T_EQ_INT(jl_transition(st, id, JL_STARTABLE, JOB_RUNNING, NULL), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), JOB_DONE, NULL), 0);
	T_EQ_INT(jl_transition(st, id, JL_FAILABLE, JOB_FAILED, "late"), -EPERM);
	T_EQ_INT(status_of(st, id, NULL, 0), JOB_DONE);
	T_EQ_INT(jl_transition(st, id + 100, JL_FROM(JOB_QUEUED), JOB_RUNNING, NULL), -ENOENT);
}

static void test_cancel_resume(struct store *st)
{
	int64_t id = submit(st);
	char was[300], status[32] = "";
	struct diags d = { 0 };
	struct job *j = NULL;
	T_EQ_INT(jl_resume(st, id, &j, was, sizeof(was), &d), 0);
	T_CHECK(j != NULL);
	if (j)
		T_EQ_STR(j->name, "life");
	T_EQ_STR(was, "queued");
	job_free(j);
	j = NULL;
	T_EQ_INT(jl_cancel(st, id, "cancelled over the API", status, sizeof(status)), 0);
	T_EQ_INT(status_of(st, id, NULL, 0), JOB_CANCELLED);
	T_EQ_INT(jl_cancel(st, id, "again", status, sizeof(status)), -EALREADY);
	T_EQ_STR(status, "cancelled");
	T_EQ_INT(jl_cancel(st, id + 100, "none", status, sizeof(status)), -ENOENT);
	/* cancelled is resumable by hand, done is not */
	T_EQ_INT(jl_resume(st, id, &j, was, sizeof(was), &d), 0);
	T_EQ_STR(was, "cancelled: cancelled over the API");
	job_free(j);
	j = NULL;
	T_EQ_INT(jl_transition(st, id, JL_STARTABLE, JOB_RUNNING, NULL), 0);
	T_EQ_INT(jl_transition(st, id, JL_FROM(JOB_RUNNING), JOB_DONE, NULL), 0);
	T_EQ_INT(jl_resume(st, id, &j, was, sizeof(was), &d), -EALREADY);
	T_CHECK(j == NULL);
	T_EQ_STR(was, "done");
	T_EQ_INT(jl_resume(st, id + 100, &j, was, sizeof(was), &d), -ENOENT);
	/* a status this kab does not know (a newer kab's): not run, not moved */
	int64_t other = submit(st);
	sqlite3 *db;
	T_EQ_INT(sqlite3_open(store_path(st), &db), SQLITE_OK);
	char sql[96];
	snprintf(sql, sizeof(sql), "UPDATE jobs SET status = 'paused' WHERE id = %lld", (long long)other);
	T_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	T_EQ_INT(jl_resume(st, other, &j, was, sizeof(was), &d), -EPROTO);
	T_CHECK(j == NULL);
	T_EQ_INT(jl_cancel(st, other, "cancelled over the API", status, sizeof(status)), -EPERM);
	T_EQ_INT(jl_transition(st, other, JL_STARTABLE, JOB_RUNNING, NULL), -EPERM);
	diags_free(&d);
}

int main(void)
{
	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	test_transition(st);
	test_cancel_resume(st);
	store_close(st);
	unlink(path);
	return t_done("joblife");
}
