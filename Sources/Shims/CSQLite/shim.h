#ifndef INKY_CSQLITE_SHIM_H
#define INKY_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy bound data. */
static inline sqlite3_destructor_type inky_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
