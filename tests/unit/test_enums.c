/* kab's enums from one list each (X-macro lists): every name parses back
 * to its value, a word the list does not know is refused, and the words
 * are exactly the ones databases, job files and the API already hold. */
#include "t.h"
#include "t_job.h"
#include "db/lab.h"
#include "db/store.h"
#include "db/store_regress.h"
#include "harness/base/util.h"
#include "harness/daemon/queue.h"
#include "harness/report/history.h"
#include "harness/job/job.h"
#include "harness/stats/stats.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

/* name(v) for v in 0..n-1, then parse of each name back, then words
 * nobody stored refused with *ret untouched. */
#define T_ROUND_TRIP(type, name, parse, n, words) \
	do { \
		T_EQ_INT((long long)ARRAY_SIZE(words), (long long)(n)); \
		for (int v = 0; v < (n); v++) { \
			T_EQ_STR(name((enum type)v), words[v]); \
			enum type x = (enum type)((n)-1 - v); \
			T_EQ_INT(parse(words[v], &x), 0); \
			T_EQ_INT(x, v); \
		} \
		static const char *const bad[] = { "", "unknown", "Done", "ok ", "x" }; \
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) { \
			bool listed = false; \
			for (int v = 0; v < (n); v++) \
				listed |= strcmp(bad[i], words[v]) == 0; \
			if (listed) \
				continue; \
			enum type x = (enum type)0; \
			T_EQ_INT(parse(bad[i], &x), -EINVAL); \
			T_EQ_INT(x, 0); \
		} \
		enum type y = (enum type)0; \
		T_EQ_INT(parse(NULL, &y), -EINVAL); \
		T_EQ_STR(name((enum type)(n)), "unknown"); \
	} while (0)

/* The words as databases hold them: never to change. */
static void test_store_words(void)
{
	static const char *const job[] = { "queued", "running", "interrupted", "done", "failed", "cancelled" };
	static const char *const step[] = { "pending", "started", "finished", "aborted", "skipped", "boot-failed" };
	static const char *const run[] = { "ok",        "failed",  "oom-killed", "oom-contaminated", "expect-failed",
					   "timed-out", "aborted", "skipped",    "started",          "warmup" };
	static const char *const boot[] = { "switching", "ok", "failed", "abandoned" };
	static const char *const build[] = { "building", "ok", "failed" };
	static const char *const journal[] = { "knob", "zram", "swapfile", "cgroup", "fcount" };
	static const char *const regress[] = { "pending", "confirmed", "not-confirmed", "failed" };
	T_ROUND_TRIP(job_status, job_status_name, job_status_parse, JOB_STATUS_N, job);
	T_ROUND_TRIP(step_status, step_status_name, step_status_parse, STEP_STATUS_N, step);
	T_ROUND_TRIP(run_status, run_status_name, run_status_parse, RUN_STATUS_N, run);
	T_ROUND_TRIP(boot_status, boot_status_name, boot_status_parse, BOOT_STATUS_N, boot);
	T_ROUND_TRIP(build_status, build_status_name, build_status_parse, BUILD_STATUS_N, build);
	T_ROUND_TRIP(journal_kind, journal_kind_name, journal_kind_parse, JOURNAL_KIND_N, journal);
	T_ROUND_TRIP(regress_state, regress_state_name, regress_state_parse, REGRESS_STATE_N, regress);
	T_EQ_STR(job_status_name(JOB_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(run_status_name(RUN_STATUS_UNKNOWN), "unknown");
	T_EQ_STR(journal_kind_name(JOURNAL_KIND_UNKNOWN), "unknown");
}

/* One definition of a finished run, and of a finished job. */
static void test_finished(void)
{
	static const enum run_status finished[] = {
		RUN_OK, RUN_FAILED, RUN_OOM_KILLED, RUN_OOM_CONTAMINATED, RUN_EXPECT_FAILED, RUN_TIMED_OUT
	};
	int n = 0;
	for (int v = 0; v < RUN_STATUS_N; v++) {
		bool want = false;
		for (size_t i = 0; i < ARRAY_SIZE(finished); i++)
			want |= finished[i] == v;
		T_CHECK(run_status_finished((enum run_status)v) == want);
		n += want;
	}
	T_EQ_INT(n, 6);
	T_CHECK(!run_status_finished(RUN_STATUS_UNKNOWN));
	T_CHECK(!run_status_finished(RUN_STATUS_N));
	T_CHECK(job_status_finished(JOB_DONE) && job_status_finished(JOB_FAILED) && job_status_finished(JOB_CANCELLED));
	T_CHECK(!job_status_finished(JOB_QUEUED) && !job_status_finished(JOB_RUNNING) &&
		!job_status_finished(JOB_INTERRUPTED) && !job_status_finished(JOB_STATUS_UNKNOWN));

	/* the SQL words of a set, from the same list */
	char buf[128];
	job_status_sql_set(job_status_finished, buf, sizeof(buf));
	T_EQ_STR(buf, "'done','failed','cancelled'");
	run_status_sql_set(run_status_finished, buf, sizeof(buf));
	T_EQ_STR(buf, "'ok','failed','oom-killed','oom-contaminated','expect-failed','timed-out'");
}

static bool no_job(enum job_status v)
{
	(void)v;
	return false;
}

/* The schema's own word (a default in a migration, fixed forever) is the
 * list's. */
static void test_schema_words(void)
{
	char buf[16];
	job_status_sql_set(no_job, buf, sizeof(buf));
	T_EQ_STR(buf, "NULL");

	char path[64];
	t_db_path(path, sizeof(path), "/tmp/kab-unit-XXXXXX", NULL);
	struct store *st;
	T_EQ_INT(store_open(path, &st), 0);
	store_close(st);
	sqlite3 *db;
	T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *q;
	T_EQ_INT(sqlite3_prepare_v2(db, "SELECT dflt_value FROM pragma_table_info('steps') WHERE name = 'status'", -1, &q, NULL),
		 SQLITE_OK);
	T_EQ_INT(sqlite3_step(q), SQLITE_ROW);
	char want[32];
	snprintf(want, sizeof(want), "'%s'", step_status_name(STEP_PENDING));
	T_EQ_STR((const char *)sqlite3_column_text(q, 0), want);
	sqlite3_finalize(q);
	sqlite3_close(db);
	unlink(path);
}

/* Directions: one enum from one list, for the job's [metric], the
 * workloads' declarations, the metric table and the statistics. */
static void test_directions(void)
{
	static const char *const words[] = { "neutral", "higher", "lower" };
	T_ROUND_TRIP(direction, direction_name, direction_parse, DIRECTION_N, words);
	T_EQ_INT(DIRECTION_NEUTRAL, 0); /* a metric nobody declared is neutral */
	T_EQ_STR(direction_name(DIRECTION_UNSET), "unknown");
	enum direction d = DIRECTION_LOWER;
	T_EQ_INT(direction_parse("unset", &d), -EINVAL);
	T_EQ_INT(d, DIRECTION_LOWER);
	/* the job's key: its choices in the list's order (as its messages
	 * name them), each storing the value its word parses to, and printed
	 * back as the same word */
	const struct job_keydef *k = &job_keydefs[JK_METRIC_DIRECTION];
	static const char *const listed[] = { "higher", "lower", "neutral" };
	size_t n = 0;
	for (; k->choices[n]; n++) {
		T_CHECK(n < ARRAY_SIZE(listed));
		T_EQ_STR(k->choices[n], listed[n]);
		T_CHECK(k->values != NULL);
		T_EQ_INT(direction_parse(k->choices[n], &d), 0);
		T_EQ_INT(k->values[n], d);
		struct job_metric m = { .direction = d };
		struct strbuf sb = { 0 };
		T_CHECK(job_key_format(k, &m, &sb));
		T_EQ_STR(sb.buf, listed[n]);
		sb_free(&sb);
	}
	T_EQ_INT((long long)n, DIRECTION_N);
	struct job_metric unset = { .direction = DIRECTION_UNSET };
	struct strbuf sb = { 0 };
	T_CHECK(!job_key_format(k, &unset, &sb));
	sb_free(&sb);
	for (size_t i = 0; i < ARRAY_SIZE(listed); i++) {
		char text[512];
		snprintf(text, sizeof(text),
			 "[job]\nname = d\n[variant a]\n[variant b]\n[workload w]\ntype = command\n"
			 "command = true\n[metric m.x]\ndirection = %s\n",
			 listed[i]);
		struct job *j = t_parse_job(text);
		T_CHECK(j != NULL);
		if (!j)
			continue;
		T_CHECK(direction_parse(listed[i], &d) == 0);
		T_EQ_INT(j->metric_settings[0].direction, d);
		job_free(j);
	}
}

/* A nightly history point's states, as its JSON and text name them
 * (doc/nightly.md, web/nightly.js). */
static void test_history_states(void)
{
	static const char *const words[] = { "measured", "no-estimate", "failed", "cancelled", "missed" };
	T_ROUND_TRIP(history_point_state, history_point_state_name, history_point_state_parse, HISTORY_POINT_STATE_N, words);
	T_EQ_STR(history_point_state_name(HISTORY_POINT_STATE_N), "unknown");
}

/* The executor's states, as /health and /metrics name them. */
static void test_queue_states(void)
{
	static const char *const words[] = { "idle", "running", "stopping" };
	T_ROUND_TRIP(queue_state, queue_state_name, queue_state_parse, QUEUE_STATE_N, words);
}

/* The lab's words, as its PostgreSQL database holds them (its migrations'
 * index predicates and trigger name "queued" and "running" too): never to
 * change. */
static void test_lab_words(void)
{
	static const char *const machine[] = { "idle", "busy", "offline" };
	static const char *const job[] = { "queued", "running", "done", "failed", "cancelled" };
	static const char *const attempt[] = { "running", "done", "failed", "lost", "cancelled" };
	T_ROUND_TRIP(lab_machine_state, lab_machine_state_name, lab_machine_state_parse, LAB_MACHINE_STATE_N, machine);
	T_ROUND_TRIP(lab_job_state, lab_job_state_name, lab_job_state_parse, LAB_JOB_STATE_N, job);
	T_ROUND_TRIP(lab_attempt_outcome, lab_attempt_outcome_name, lab_attempt_outcome_parse, LAB_ATTEMPT_OUTCOME_N, attempt);
}

int main(void)
{
	test_store_words();
	test_finished();
	test_schema_words();
	test_directions();
	test_history_states();
	test_queue_states();
	test_lab_words();
	return t_done("enums");
}
