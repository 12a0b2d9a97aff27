/* A char before each lock type: the offset of the lock is its alignment (issue 44, item 5: the
 * header says 8, and on i386 it was 4). Used by c_api_test.c at run time and by layout_test.c at
 * compile time for i386. */
#ifndef SPINWISE_TEST_LAYOUT_PROBES_H
#define SPINWISE_TEST_LAYOUT_PROBES_H

#include <spinwise/spinwise.h>

struct mutex_probe {
  char c;
  spinwise_mutex_t m;
};
struct rwlock_probe {
  char c;
  spinwise_rwlock_t rw;
};
struct recursive_probe {
  char c;
  spinwise_recursive_mutex_t r;
};

#endif
