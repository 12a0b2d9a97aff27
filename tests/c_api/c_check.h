/* CHECK for the C API's test programs: a failed condition is printed with its place and counted;
 * the program's exit status is the count's verdict. */
#ifndef SPINWISE_TEST_C_CHECK_H
#define SPINWISE_TEST_C_CHECK_H

#include <stdio.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#endif
