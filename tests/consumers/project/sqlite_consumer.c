/* A C99 program on an installed spinwise-sqlite (pkg-config or COMPONENTS sqlite): the header
 * compiles as strict C99, and SQLite runs a statement on the installed spinwise mutexes. */
#include <spinwise/sqlite.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  sqlite3* db = NULL;
  int rc = spinwise_sqlite_install(NULL);
  if (rc == SQLITE_OK) rc = sqlite3_open(":memory:", &db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL);
  if (rc == SQLITE_OK && sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1) !=
                             spinwise_sqlite_methods("hybrid")->xMutexAlloc(SQLITE_MUTEX_STATIC_APP1)) {
    rc = -1;
  }
  if (rc == SQLITE_OK && spinwise_sqlite_install("hybrid") != SQLITE_MISUSE) rc = -2;
  sqlite3_close(db);
  if (rc != SQLITE_OK || spinwise_sqlite_kind() == NULL || strcmp(spinwise_sqlite_kind(), "hybrid") != 0) {
    fprintf(stderr, "spinwise SQLite consumer: %d (%s)\n", rc, spinwise_sqlite_message());
    return 1;
  }
  printf("spinwise SQLite consumer: SQLite %s on %s mutexes\n", sqlite3_libversion(), spinwise_sqlite_kind());
  return 0;
}
