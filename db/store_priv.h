/* Inside db/ only: the SQLite handle, for the store_*.c files beside store.c. */
#pragma once
#include <sqlite3.h>

struct store;
sqlite3 *store_sqlite(struct store *s);
/* The shared statement helpers of store.c. */
int store_db_err(struct store *s, const char *what);          /* logs the connection's error; -EBUSY, -ENOMEM or -EIO */
void store_bind_text(sqlite3_stmt *st, int i, const char *v);   /* NULL binds NULL */
void store_col_text(sqlite3_stmt *st, int i, char *buf, size_t len);  /* NULL reads "" */
char *store_col_dup(sqlite3_stmt *st, int i);                   /* malloc'd; NULL for NULL */
/* A status word this kab does not know, in row id of table: a warning,
 * and the row loads with the status's UNKNOWN. */
void store_status_unknown(const char *table, int64_t id, const char *word);
