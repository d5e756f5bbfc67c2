/* Inside db/ only: the SQLite handle and the statement helpers the store_*.c
 * files share. */
#pragma once
#include "harness/base/util.h"

#include <sqlite3.h>

struct store {
	sqlite3 *db;
};
sqlite3 *store_sqlite(struct store *s);
/* The shared statement helpers of store.c. */
int store_sql_err(struct store *s, int rc, const char *what);   /* logs; -EBUSY, -ENOMEM or -EIO for rc */
int store_exec(struct store *s, const char *sql);               /* statements without rows */
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **ret);
/* store_prepare of a statement with the status words of the lists
 * (db/store.h) put in, printf-style: only for the lists' words, never for
 * a caller's text (bind that). */
int store_preparef(struct store *s, sqlite3_stmt **ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int store_step_done(struct store *s, sqlite3_stmt *st);         /* one step; a row or done is success */
void store_finalizep(sqlite3_stmt **st);                        /* for _cleanup_stmt_ */
#define _cleanup_stmt_ _cleanup_(store_finalizep)
int store_db_err(struct store *s, const char *what);          /* logs the connection's error; -EBUSY, -ENOMEM or -EIO */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);   /* NULL binds NULL */
void store_col_text(sqlite3_stmt *st, int i, char *buf, size_t len);  /* NULL reads "" */
char *store_col_dup(sqlite3_stmt *st, int i);                   /* malloc'd; NULL for NULL */
/* An SQL statement with the status words of the lists (db/store.h) put
 * in, printf-style, into buf: buf, or "" (which does not prepare) when it
 * does not fit. Only for the lists' words, never for a caller's text. */
const char *store_sql(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A status word this kab does not know, in row id of table: a warning,
 * and the row loads with the status's UNKNOWN. */
void store_status_unknown(const char *table, int64_t id, const char *word);
/* Each row of st read by fn into a new zeroed element of size bytes:
 * *ret (malloc'd; NULL when none) and *ret_n. clear (may be NULL) frees
 * what an element holds, for the rows read before a failure. 0, -ENOMEM,
 * or the database's error (logged with what). */
typedef void (*store_row_fn)(sqlite3_stmt *st, void *elem);
int store_rows(struct store *s, sqlite3_stmt *st, size_t size, store_row_fn fn, void (*clear)(void *), void **ret,
	       size_t *ret_n, const char *what);
/* The first row of st read by fn into elem: 0, -ENOENT when there is
 * none, or the database's error (logged with what). */
int store_row(struct store *s, sqlite3_stmt *st, store_row_fn fn, void *elem, const char *what);
/* A lab claim's row for a local job just inserted, inside the caller's
 * transaction (store_job_submit with store_job_spec.lab). */
struct store_lab_claim;
int store_lab_insert(struct store *s, int64_t job_id, const struct store_lab_claim *c);
