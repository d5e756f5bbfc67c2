/* The lab's jobs this machine claimed: their leases and the outbox of
 * their uploads (store_lab.h). The row is inserted with its local job
 * (store_jobs.c, store_lab_insert); here it is read and moved on. */
#include "db/store_lab.h"
#include "db/store.h"
#include "db/store_priv.h"
#include "harness/base/util.h"

#include <errno.h>
#include <string.h>

#define STORE_LAB_WORD(e, w) w,
static const char *const state_words[] = { STORE_LAB_STATE_LIST(STORE_LAB_WORD) };
UTIL_WORD_FUNCS(store_lab_state, state_words, STORE_LAB_STATE_N)

#define CLAIM_COLUMNS \
	"job_id, lab_job, attempt, key, state, lost, outcome, reason, claimed, ended, uploaded, tries, error"

static void claim_row(sqlite3_stmt *st, void *elem)
{
	struct store_lab_claim *c = elem;
	c->job_id = sqlite3_column_int64(st, 0);
	c->lab_job = sqlite3_column_int64(st, 1);
	c->attempt = sqlite3_column_int(st, 2);
	store_col_text(st, 3, c->key, sizeof(c->key));
	char word[16];
	store_col_text(st, 4, word, sizeof(word));
	if (store_lab_state_parse(word, &c->state) < 0) {
		store_status_unknown("lab claim of job", c->job_id, word);
		c->state = STORE_LAB_STATE_UNKNOWN;
	}
	c->lost = sqlite3_column_int(st, 5) != 0;
	store_col_text(st, 6, c->outcome, sizeof(c->outcome));
	store_col_text(st, 7, c->reason, sizeof(c->reason));
	c->claimed = sqlite3_column_double(st, 8);
	c->ended = sqlite3_column_double(st, 9);
	c->uploaded = sqlite3_column_double(st, 10);
	c->tries = sqlite3_column_int(st, 11);
	store_col_text(st, 12, c->error, sizeof(c->error));
}

int store_lab_insert(struct store *s, int64_t job_id, const struct store_lab_claim *c)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s,
			      "INSERT INTO lab_claims (job_id, lab_job, attempt, key, state, claimed, kab_version, schema_version)"
			      " VALUES (?,?,?,?,?,?,?,?)",
			      &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, c->lab_job);
	sqlite3_bind_int(st, 3, c->attempt);
	store_bind_text(st, 4, c->key);
	store_bind_text(st, 5, store_lab_state_name(STORE_LAB_HELD));
	sqlite3_bind_double(st, 6, util_real_now());
	store_bind_text(st, 7, KAB_VERSION);
	sqlite3_bind_int(st, 8, STORE_SCHEMA_VERSION);
	return store_step_done(s, st);
}

int store_lab_claims(struct store *s, enum store_lab_state state, struct store_lab_claim **ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT " CLAIM_COLUMNS " FROM lab_claims WHERE state = ? ORDER BY claimed, job_id", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, store_lab_state_name(state));
	return store_rows(s, st, sizeof(**ret), claim_row, NULL, (void **)ret, ret_n, "listing the lab's claims");
}

int store_lab_get(struct store *s, int64_t job_id, struct store_lab_claim *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT " CLAIM_COLUMNS " FROM lab_claims WHERE job_id = ?", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	struct store_lab_claim c = { 0 };
	if ((r = store_row(s, st, claim_row, &c, "reading a lab claim")) < 0)
		return r;
	*ret = c;
	return 0;
}

/* One UPDATE of a claim by its job: ?1 the job, ?2 now, ?3 and ?4 the
 * caller's text, ?5 to ?7 the states' words (a statement binds the ones
 * it names). 0, or -ENOENT when no row was changed. */
static int update(struct store *s, const char *sql, int64_t job_id, const char *a, const char *b)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, sql, &st);
	if (r < 0)
		return r;
	int n = sqlite3_bind_parameter_count(st);
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_double(st, 2, util_real_now());
	const char *text[] = { a, b, store_lab_state_name(STORE_LAB_HELD), store_lab_state_name(STORE_LAB_ENDED),
			       store_lab_state_name(STORE_LAB_DONE) };
	for (int i = 3; i <= n && i < 3 + (int)ARRAY_SIZE(text); i++)
		store_bind_text(st, i, text[i - 3]);
	if ((r = store_step_done(s, st)) < 0)
		return r;
	return sqlite3_changes(s->db) ? 0 : -ENOENT;
}

int store_lab_ended(struct store *s, int64_t job_id, const char *outcome, const char *reason)
{
	return update(s,
		      "UPDATE lab_claims SET state = ?6, ended = ?2, outcome = ?3,"
		      " reason = CASE WHEN lost THEN reason ELSE ?4 END WHERE job_id = ?1 AND state = ?5",
		      job_id, outcome, reason);
}

int store_lab_lost(struct store *s, int64_t job_id, const char *reason)
{
	return update(s, "UPDATE lab_claims SET lost = 1, reason = ?3 WHERE job_id = ?1 AND state <> ?7", job_id, reason, NULL);
}

int store_lab_tried(struct store *s, int64_t job_id, const char *error)
{
	return update(s, "UPDATE lab_claims SET tries = tries + 1, error = ?3 WHERE job_id = ?1", job_id, error, NULL);
}

int store_lab_done(struct store *s, int64_t job_id)
{
	return update(s, "UPDATE lab_claims SET state = ?7, uploaded = ?2, error = NULL WHERE job_id = ?1 AND state = ?6",
		      job_id, NULL, NULL);
}

int store_lab_count(struct store *s, enum store_lab_state state, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_prepare(s, "SELECT count(*) FROM lab_claims WHERE state = ?", &st);
	if (r < 0)
		return r;
	store_bind_text(st, 1, store_lab_state_name(state));
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_err(s, "counting the lab's claims");
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}
