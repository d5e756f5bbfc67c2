/* Inside db/ only: the SQLite handle, for the store_*.c files beside store.c. */
#pragma once
#include <sqlite3.h>

struct store;
sqlite3 *store_sqlite(struct store *s);
