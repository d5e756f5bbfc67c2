/* Inside db/ only: the lab's connection and the statement helpers
 * lab*.c share. */
#pragma once
#include "db/lab.h"

#include <libpq-fe.h>

struct lab {
	PGconn *conn;
	bool listening;
	char sqlstate[6]; /* the last failed statement's, "" when none or no connection */
};

/* One statement, parameterized (n text parameters, NULL for NULL): its
 * result, or NULL with "what: the server's message" in err. */
PGresult *lab_exec(struct lab *l, const char *what, const char *sql, int n, const char *const *params, struct strbuf *err);
/* -errno for the last failed statement: the connection lost
 * -ECONNRESET, a unique violation -EEXIST, else -EIO. */
int lab_errno(const struct lab *l);
void lab_clearp(PGresult **r);
#define _cleanup_pgres_ _cleanup_(lab_clearp)
/* lab_exec for a statement without rows: 0 or -errno. */
int lab_run(struct lab *l, const char *what, const char *sql, int n, const char *const *params, struct strbuf *err);
/* lab_exec of a statement that returns one row: its first n columns as
 * whole numbers into ret (0 for NULL). */
int lab_exec_row(struct lab *l, const char *what, const char *sql, int n_params, const char *const *params,
		 int64_t *ret, int n, struct strbuf *err);
/* lab_exec of a statement without rows: how many it changed, or -errno. */
int lab_run_count(struct lab *l, const char *what, const char *sql, int n_params, const char *const *params, struct strbuf *err);
/* a column as text, "" for NULL; as a whole number, 0 for NULL */
const char *lab_col(const PGresult *r, int row, int col);
int64_t lab_col_i64(const PGresult *r, int row, int col);
/* the machine's tags as a text[] literal, "{a,b}" */
void lab_tags_sql(const struct lab_machine *m, char *buf, size_t len);
/* A short transaction: lab_begin, then lab_end with the work's result:
 * COMMIT when it is >= 0 (the result, or COMMIT's error), else ROLLBACK
 * (the result). */
int lab_begin(struct lab *l, struct strbuf *err);
int lab_end(struct lab *l, int r, struct strbuf *err);
/* poll(2)'s timeout for seconds left, bounded */
int lab_poll_ms(double left_s);
