/* spinwise under SQLite (spinwise::sqlite, pkg-config spinwise-sqlite): every mutex SQLite uses, on
 * spinwise locks, through SQLite's own plug-in point, sqlite3_config(SQLITE_CONFIG_MUTEX). It works
 * with an unmodified, distribution-built libsqlite3. The manual: docs/c-api.md, "SQLite".
 *
 *   if (spinwise_sqlite_install(NULL) != SQLITE_OK) ...   (before sqlite3_initialize or any
 *   sqlite3_open; NULL: SPINWISE_SQLITE_LOCK, else "hybrid")
 *
 * Each SQLite mutex type is a spinwise lock class in the statistics report (sqlite.fast,
 * sqlite.recursive, sqlite.static_main, sqlite.static_mem, ..., sqlite.static_vfs3), so the report
 * says which of SQLite's mutexes waited and for how long. */
#ifndef SPINWISE_SQLITE_H
#define SPINWISE_SQLITE_H

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3_mutex_methods;

/* Installs spinwise mutexes of `kind` ("hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"; the
 * names of <spinwise/spinwise.h>) as SQLite's mutexes. kind NULL: the environment variable
 * SPINWISE_SQLITE_LOCK, or "hybrid" when it is unset or empty. Returns SQLite's result codes:
 *   SQLITE_OK      installed;
 *   SQLITE_MISUSE  SQLite is initialized already (sqlite3_initialize, or a first sqlite3_open): its
 *                  mutexes are in use and cannot be replaced; nothing changed;
 *   SQLITE_ERROR   an unknown kind name (from the argument or the environment), or a libsqlite3
 *                  built without mutexes (SQLITE_THREADSAFE=0); nothing changed.
 * On an error spinwise_sqlite_message() says why. Not thread-safe: call it once, at start-up,
 * as sqlite3_config itself must be. After sqlite3_shutdown() it may be called again. */
int spinwise_sqlite_install(const char* kind);

/* The kind installed ("hybrid", ...), or NULL when SQLite runs on its own mutexes (none was
 * installed; a program that configures other methods itself after a shutdown is not seen). */
const char* spinwise_sqlite_kind(void);

/* The mutex methods spinwise_sqlite_install gives SQLite for `kind` (NULL: as install resolves
 * it), or NULL for an unknown kind: for a program that installs them itself, or tests. Static
 * tables: the same pointer for the same kind. Their xMutexHeld / xMutexNotheld say whether the
 * calling thread holds a mutex, for every type (a release libsqlite3 exports no
 * sqlite3_mutex_held). */
const struct sqlite3_mutex_methods* spinwise_sqlite_methods(const char* kind);

/* Why the calling thread's last failed call failed ("" after a success). */
const char* spinwise_sqlite_message(void);

#ifdef __cplusplus
}
#endif

#endif /* SPINWISE_SQLITE_H */
