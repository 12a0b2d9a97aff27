/* What module_host.c and module_plugin.c share: the plugin's entry points, found with dlsym. */
#ifndef SPINWISE_TESTS_MODULE_PROBE_H
#define SPINWISE_TESTS_MODULE_PROBE_H

#include <spinwise/spinwise.h>

/* What the plugin saw of a recursive mutex the calling thread holds. */
struct module_probe {
  int (*lock_function)(spinwise_recursive_mutex_t*); /* the plugin's spinwise_recursive_mutex_lock */
  unsigned depth_seen;                               /* before it locked */
  int trylock, timedlock;                            /* the owner enters at once: 0, 0 */
  unsigned depth_inside;                             /* after those */
  int unlock;                                        /* 0 */
};

struct module_plugin {
  /* Probes `r` as above and leaves it held as it found it. */
  void (*probe)(spinwise_recursive_mutex_t* r, struct module_probe* p);
  int (*lock)(spinwise_recursive_mutex_t* r); /* a trylock: never waits */
  int (*unlock)(spinwise_recursive_mutex_t* r);
};

#endif
