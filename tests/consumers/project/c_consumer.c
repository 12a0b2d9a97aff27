/* A C99 program on an installed spinwise-c (pkg-config, and find_package COMPONENTS c): the
 * header compiles as strict C99, the static initializer needs no call, and the C++ runtime behind
 * it links from a C compiler. */
#include <errno.h>
#include <spinwise/spinwise.h>
#include <stdio.h>

static spinwise_mutex_t m = SPINWISE_MUTEX_INITIALIZER;

int main(void) {
  size_t needed = 0;
  int rc = spinwise_mutex_lock(&m);
  if (rc == 0) rc = spinwise_mutex_unlock(&m);
  if (rc == 0) rc = spinwise_set_knob("hybrid_mutex", "delay_unit_ns", "150");
  if (rc == 0 && spinwise_stats_report(SPINWISE_STATS_JSON, NULL, 0, &needed) != ERANGE) rc = -1;
  if (rc != 0) {
    fprintf(stderr, "spinwise C consumer: %d (%s)\n", rc, spinwise_strerror(rc));
    return 1;
  }
  printf("spinwise C consumer: a %zu-byte JSON report\n", needed);
  return 0;
}
