/* The plugin of module_host.c: a shared object with its own copy of the static C library. Every
 * probe runs on the caller's thread and never waits: a lock that would wait is a timedlock with a
 * deadline that has passed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <time.h>

#include "module_probe.h"

static void probe(spinwise_recursive_mutex_t* r, struct module_probe* p) {
  struct timespec past;
  clock_gettime(CLOCK_MONOTONIC, &past);
  past.tv_sec -= 1;
  p->lock_function = spinwise_recursive_mutex_lock;
  p->depth_seen = spinwise_recursive_mutex_depth(r);
  p->trylock = spinwise_recursive_mutex_trylock(r);
  p->timedlock = spinwise_recursive_mutex_timedlock(r, &past);
  p->depth_inside = spinwise_recursive_mutex_depth(r);
  p->unlock = spinwise_recursive_mutex_unlock(r);
  if (p->trylock == 0) (void)spinwise_recursive_mutex_unlock(r);
}

static int lock(spinwise_recursive_mutex_t* r) { return spinwise_recursive_mutex_trylock(r); }
static int unlock(spinwise_recursive_mutex_t* r) { return spinwise_recursive_mutex_unlock(r); }

const struct module_plugin module_plugin = {probe, lock, unlock};
