/* A C99 program of a C-only project on an installed spinwise::c and, with WITH_SQLITE, spinwise::sqlite:
 * a mutex of each kind, and SQLite on spinwise's mutexes, whose statistics the C API's report then
 * names. It prints one line that tests/consumers/link_c.cmake checks. */
#include <errno.h>
#include <spinwise/spinwise.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef WITH_SQLITE
#include <spinwise/sqlite.h>
#include <sqlite3.h>
#endif

static spinwise_mutex_t m = SPINWISE_MUTEX_INITIALIZER;

static int fail(const char* what, int rc) {
  fprintf(stderr, "spinwise C-only consumer: %s: %d (%s)\n", what, rc, spinwise_strerror(rc));
  return 1;
}

int main(void) {
  static const char* const kinds[] = {"hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"};
  size_t i, needed = 0;
  char* report;
  int rc;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    if ((rc = spinwise_mutex_init_kind(&m, kinds[i])) != 0 || (rc = spinwise_mutex_lock(&m)) != 0 ||
        (rc = spinwise_mutex_unlock(&m)) != 0 || (rc = spinwise_mutex_destroy(&m)) != 0) {
      return fail(kinds[i], rc);
    }
  }
#ifdef WITH_SQLITE
  {
    sqlite3* db = NULL;
    if (spinwise_sqlite_install("ticket") != SQLITE_OK || sqlite3_open(":memory:", &db) != SQLITE_OK ||
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL) != SQLITE_OK) {
      fprintf(stderr, "spinwise C-only consumer: SQLite: %s\n", spinwise_sqlite_message());
      return 1;
    }
    sqlite3_close(db);
  }
#endif
  if ((rc = spinwise_stats_report(SPINWISE_STATS_TEXT, NULL, 0, &needed)) != ERANGE)
    return fail("report size", rc);
  report = malloc(needed + 4096);
  if (report == NULL) return fail("report", ENOMEM);
  if ((rc = spinwise_stats_report(SPINWISE_STATS_TEXT, report, needed + 4096, NULL)) != 0)
    return fail("report", rc);
  if (strstr(report, "c.mcs") == NULL) return fail("the report names no c.mcs", EINVAL);
#ifdef WITH_SQLITE
  if (strstr(report, "sqlite.") == NULL) return fail("the report names no SQLite mutex", EINVAL);
  printf("spinwise C-only consumer: 6 mutex kinds and SQLite %s on ticket mutexes\n", sqlite3_libversion());
#else
  printf("spinwise C-only consumer: 6 mutex kinds\n");
#endif
  free(report);
  return 0;
}
