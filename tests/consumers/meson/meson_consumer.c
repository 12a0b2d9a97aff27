/* A C99 program built by Meson on an installed spinwise-c (pkg-config) and, with WITH_SQLITE,
 * spinwise-sqlite. It prints one line that tests/consumers/link_c.cmake checks. */
#include <spinwise/spinwise.h>
#include <stdio.h>
#ifdef WITH_SQLITE
#include <spinwise/sqlite.h>
#include <sqlite3.h>
#endif

static spinwise_rwlock_t rw = SPINWISE_RWLOCK_INITIALIZER;

int main(void) {
  int rc = spinwise_rwlock_rdlock(&rw);
  if (rc == 0) rc = spinwise_rwlock_rdunlock(&rw);
  if (rc == 0) rc = spinwise_rwlock_wrlock(&rw);
  if (rc == 0) rc = spinwise_rwlock_wrunlock(&rw);
  if (rc != 0) {
    fprintf(stderr, "spinwise Meson consumer: %d (%s)\n", rc, spinwise_strerror(rc));
    return 1;
  }
#ifdef WITH_SQLITE
  if (spinwise_sqlite_install(NULL) != SQLITE_OK || sqlite3_initialize() != SQLITE_OK) {
    fprintf(stderr, "spinwise Meson consumer: SQLite: %s\n", spinwise_sqlite_message());
    return 1;
  }
  printf("spinwise Meson consumer: a hybrid rwlock, SQLite %s on %s mutexes\n", sqlite3_libversion(),
         spinwise_sqlite_kind());
#else
  printf("spinwise Meson consumer: a hybrid rwlock\n");
#endif
  return 0;
}
